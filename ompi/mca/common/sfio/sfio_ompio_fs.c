/*
 * sfio_ompio_fs: the file-system operations of fs/versioned (open with its
 * store, close, delete, size, sync).
 */
#include "sfio_ompio_int.h"
#include "sfio_coord.h"
#include "sfio_fsmagic.h"
#include "sfio_sharedfp.h"

/* ------------------------------------------------------------------ */
/* Collectives for the store, over the file's communicator             */
/* ------------------------------------------------------------------ */

static int coll_barrier(void *ctx)
{
    ompi_communicator_t *comm = ctx;
    return comm->c_coll->coll_barrier(comm, comm->c_coll->coll_barrier_module);
}

static int coll_bcast(void *ctx, void *buf, int bytes, int root)
{
    ompi_communicator_t *comm = ctx;
    return comm->c_coll->coll_bcast(buf, bytes, MPI_BYTE, root, comm,
                                    comm->c_coll->coll_bcast_module);
}

static int coll_allreduce_max_int(void *ctx, int *value)
{
    ompi_communicator_t *comm = ctx;
    return comm->c_coll->coll_allreduce(MPI_IN_PLACE, value, 1, MPI_INT, MPI_MAX, comm,
                                        comm->c_coll->coll_allreduce_module);
}

static int coll_allgather(void *ctx, const void *send, void *recv, int bytes)
{
    ompi_communicator_t *comm = ctx;
    return comm->c_coll->coll_allgather(send, bytes, MPI_BYTE, recv, bytes, MPI_BYTE, comm,
                                        comm->c_coll->coll_allgather_module);
}

static int coll_allgatherv(void *ctx, const void *send, int bytes, void *recv, const int *counts,
                           const int *displs)
{
    ompi_communicator_t *comm = ctx;
    return comm->c_coll->coll_allgatherv(send, bytes, MPI_BYTE, recv, counts, displs, MPI_BYTE,
                                         comm, comm->c_coll->coll_allgatherv_module);
}

static mca_common_sfio_coll_t coll_of(ompio_file_t *fh)
{
    return (mca_common_sfio_coll_t) {
        .ctx = fh->f_comm, .rank = fh->f_rank, .size = fh->f_size,
        .barrier = coll_barrier, .bcast = coll_bcast,
        .allreduce_max_int = coll_allreduce_max_int,
        .allgather = coll_allgather, .allgatherv = coll_allgatherv,
    };
}
/* ------------------------------------------------------------------ */
/* File-system operations                                             */
/* ------------------------------------------------------------------ */

/* open(2) flags of amode for this rank: Open MPI's fs base gives O_CREAT
 * and O_EXCL to the root only (so that EXCL means "did not exist") and no
 * O_APPEND (OMPIO places the pointers for MPI_MODE_APPEND; O_APPEND would
 * make pwrite ignore offsets). */
static int open_flags(int amode, int rank)
{
    return mca_fs_base_get_file_amode(rank, amode) | O_CLOEXEC;
}

/* open(2) by the root; *created_p tells whether this call made the file
 * (a new file has no stores: any that name its inode are stale).
 * Returns the descriptor or -errno. */
static int root_open(const char *filename, int flags, int perm, bool *created_p)
{
    *created_p = false;
    if ((flags & O_CREAT) && !(flags & O_EXCL)) {
        for (int tries = 0; tries < 8; ++tries) {
            int fd = open(filename, flags & ~O_CREAT, perm);
            if (fd >= 0 || ENOENT != errno) {
                return fd >= 0 ? fd : -errno;
            }
            fd = open(filename, flags | O_EXCL, perm);
            if (fd >= 0) {
                *created_p = true;
                return fd;
            }
            if (EEXIST != errno) {
                return -errno;
            }
        }
    }
    int fd = open(filename, flags, perm);
    if (fd >= 0 && (flags & O_EXCL)) {
        *created_p = true;
    }
    return fd >= 0 ? fd : -errno;
}

/* What an open says about each store of the file it finds (stores in
 * use and removed leftovers need no word). */
static void note_store(void *ctx, const mca_common_sfio_store_info_t *info)
{
    const char *file = ctx;
    switch (info->verdict) {
    case MCA_COMMON_SFIO_STORE_LIVE:
    case MCA_COMMON_SFIO_STORE_EMPTY:
    case MCA_COMMON_SFIO_STORE_DISCARDED:
        opal_output_verbose(1, mca_common_sfio_output, "sfio: %s: store %s %s: %s", file,
                            info->path, mca_common_sfio_store_verdict_name(info->verdict),
                            info->why);
        break;
    case MCA_COMMON_SFIO_STORE_APPLIED:
        opal_output_verbose(1, mca_common_sfio_output,
                            "sfio: %s: recovered the store %s of a job that stopped "
                            "(%" PRIu64 " versions)", file, info->path, info->versions);
        break;
    /* One line straight to stderr, not help text: Open MPI 5.0 hands help
     * text to its launcher, which may drop it when the failed open ends
     * the job at once. */
    case MCA_COMMON_SFIO_STORE_FAILED:
        opal_output(0, "sfio: store %s of %s could not be applied: %s (%s; sfio-store show %s); "
                    "MPI_File_open fails and the store stays for the next open",
                    info->path, file, info->why, strerror(info->err), file);
        break;
    default:
        opal_output(0, "sfio: store %s of %s left in place, not applied: %s (sfio-store show %s, "
                    "then apply --force or discard)", info->path, file, info->why, file);
        break;
    }
}

/* Whether other opens of this file in this job (each a group with its own
 * store: MPI_COMM_SELF handles, say) may keep stores this group cannot
 * find, so its folds must not write windows with holes whole.  Only where
 * the job spans nodes: a node-local store_dir puts a one-node group's
 * store where other nodes cannot look, and on network storage another
 * node's listing of the file's directory may be stale. */
static bool fold_groups_hidden(const mca_common_sfio_fs_options_t *options, int fd)
{
    return mca_common_sfio_job_spans_nodes() &&
           ((NULL != options->store_dir && '\0' != options->store_dir[0]) ||
            mca_common_sfio_storage_is_network(mca_common_sfio_posix_storage, fd));
}

/* At every open, on the root: applies the stores a crashed job left for
 * this file, or, for a file this open created, discards stale ones that
 * name its inode.  Returns MPI_SUCCESS or the error that fails the open
 * (a store that is the user's and applies to the file but cannot be
 * applied: the next open tries again). */
static int recover_stores(const char *filename, int fd, const char *store_dir, bool created)
{
    mca_common_sfio_store_tally_t tally;
    int rc = mca_common_sfio_vstore_scan(filename, fd, store_dir,
                                         created ? MCA_COMMON_SFIO_STORE_DISCARD
                                                 : MCA_COMMON_SFIO_STORE_RECOVER,
                                         NULL, note_store, (void *) filename, &tally);
    if (tally.bytes_undone > 0) {
        opal_output_verbose(1, mca_common_sfio_output,
                            "sfio: %s: zeroed %" PRIu64 " B of unfinished atomic writes",
                            filename, tally.bytes_undone);
    }
    return 0 == rc ? MPI_SUCCESS : mca_common_sfio_errno_to_mpi(-rc);
}

void sfio_ompio_fs_store_join(ompio_file_t *fh, mca_common_sfio_file_t *f)
{
    mca_common_sfio_vstore_t *store = f->store_awaiting_service;
    if (NULL == store) {
        return;
    }
    f->store_awaiting_service = NULL;
    mca_common_sfio_coord_config_t cfg = {
        .backend = MCA_COMMON_SFIO_COORD_OFI, .provider = NULL,
        .timeout_ms = mca_common_sfio_lock_wait_ms, .host = -1,
    };
    mca_common_sfio_coord_t *service = NULL;
    int crc = mca_common_sfio_coord_open(fh->f_comm, &cfg,
                                         mca_common_sfio_vstore_service_slots(fh->f_size), 0,
                                         &service);
    if (0 == crc) {
        mca_common_sfio_vstore_use_service(store, service);
        f->store = store;
        return;
    }
    /* the same rc everywhere: every rank drops the store alike */
    const char *why = mca_common_sfio_coord_why();
    opal_output_verbose(1, mca_common_sfio_output,
                        "sfio: no versioned store for %s: its ranks span several nodes and the "
                        "coordination service did not start (%s)",
                        fh->f_filename ? fh->f_filename : "", '\0' != why[0] ? why : strerror(-crc));
    /* no rank can have touched it without its service: nothing exists */
    mca_common_sfio_vstore_discard(store);
    f->store_errno = -crc;
    (void) sfio_ompio_locksvc_open(fh, f);
}

int mca_common_sfio_fs_open(struct ompi_communicator_t *comm, const char *filename, int amode,
                            struct opal_info_t *info, ompio_file_t *fh,
                            const mca_common_sfio_fs_options_t *options)
{
    int perm = mca_fs_base_get_file_perm(fh);
    (void) info;

    /* The store serves atomic mode of writable files.  Its counters live
     * in a page of the node, or in the file's coordination service when
     * no page is shared by all the file's ranks; then the store must be
     * where every node sees it, beside the file (a store_dir is per node,
     * e.g. /dev/shm). */
    bool want_store = !(amode & MPI_MODE_RDONLY) && options->versioned_store;
    bool spans = want_store && mca_common_sfio_coord_spans_nodes(comm);
    /* Whether the atomic mode will use versions at all (auto: not on one
     * node over local storage) is the root's answer, from the file it
     * opened, carried by the broadcast: every rank then agrees. */
    const char *store_path = fh->f_fullfilename ? fh->f_fullfilename : filename;
    const char *warn = NULL;

    /* The root creates first and recovers what a crashed job left (so no
     * rank reads before), and names the store; the others open what it
     * created and prepare the store it named.  One broadcast and one
     * agreement carry both. */
    /* sharedfp/fetchadd's page of this node, when its query left it to
     * this open (alike on all ranks): its name rides on the broadcast. */
    mca_common_sfio_file_t *f_early = mca_common_sfio_file_of(fh);
    bool sfp_page = NULL != f_early && f_early->sharedfp_page_wanted;
    struct {
        int err;
        int sfp_err;
        char sfp_name[MCA_COMMON_SFIO_COORD_NAME_MAX];
        int versions;
        mca_common_sfio_vstore_name_t store;
    } msg = { .err = MPI_SUCCESS, .sfp_err = -ENOENT, .sfp_name = "", .versions = 0,
              .store = { .rc = -ENOTSUP } };
    fh->fd = -1;
    if (OMPIO_ROOT == fh->f_rank) {
        bool created = false;
        fh->fd = root_open(filename, open_flags(amode, OMPIO_ROOT), perm, &created);
        if (fh->fd < 0) {
            msg.err = mca_common_sfio_errno_to_mpi(-fh->fd);
        } else {
            msg.err = recover_stores(filename, fh->fd, options->store_dir, created);
            if (MPI_SUCCESS != msg.err) {
                close(fh->fd);
                fh->fd = -1;
            }
        }
        msg.versions = MPI_SUCCESS == msg.err && want_store &&
                       mca_common_sfio_route_wants_store(
                           mca_common_sfio_lock_atomic_mode, spans,
                           mca_common_sfio_storage_is_network(mca_common_sfio_posix_storage,
                                                              fh->fd));
        if (msg.versions) {
            mca_common_sfio_vstore_name(store_path, spans ? NULL : options->store_dir, fh->fd,
                                        &msg.store, &warn);
        }
        if (MPI_SUCCESS == msg.err && sfp_page) {
            msg.sfp_err = mca_common_sfio_sharedfp_page_create(fh, msg.sfp_name,
                                                               sizeof(msg.sfp_name));
        }
    }
    /* the page's and the store's names only where wanted (alike on all ranks) */
    int bytes = want_store ? (int) sizeof(msg)
                : sfp_page ? (int) offsetof(__typeof__(msg), versions)
                           : (int) offsetof(__typeof__(msg), sfp_err);
    int rc = comm->c_coll->coll_bcast(&msg, bytes, MPI_BYTE, OMPIO_ROOT, comm,
                                      comm->c_coll->coll_bcast_module);
    if (OMPI_SUCCESS != rc) {
        msg.err = rc;
    }
    int err = msg.err;
    bool auto_local = want_store && MPI_SUCCESS == err && !msg.versions &&
                      MCA_COMMON_SFIO_ATOMIC_AUTO == mca_common_sfio_lock_atomic_mode;
    want_store = want_store && msg.versions;
    if (MPI_SUCCESS == err && OMPIO_ROOT != fh->f_rank) {
        fh->fd = open(filename, open_flags(amode, fh->f_rank), perm);
        if (fh->fd < 0) {
            err = mca_common_sfio_errno_to_mpi(errno);
        }
    }
    int sfp_rc = sfp_page ? msg.sfp_err : 0;
    if (MPI_SUCCESS == err && sfp_page && 0 == sfp_rc && OMPIO_ROOT != fh->f_rank) {
        sfp_rc = mca_common_sfio_sharedfp_page_attach(fh, msg.sfp_name);
    }
    mca_common_sfio_vstore_t *store = NULL;
    int store_rc = -ENOTSUP;
    if (MPI_SUCCESS == err && want_store) {
        mca_common_sfio_coll_t coll = coll_of(fh);
        coll.ctx = comm;
        store_rc = mca_common_sfio_vstore_named_open(&msg.store, fh->fd, &coll, &store);
    }
    /* Every rank returns the same answer: a failure anywhere fails all,
     * and the store exists on every rank or on none (errno values are
     * positive: MAX picks a failure). */
    int local[3] = { err, -store_rc, -sfp_rc }, global[3];
    rc = comm->c_coll->coll_allreduce(local, global, 3, MPI_INT, MPI_MAX, comm,
                                      comm->c_coll->coll_allreduce_module);
    if (OMPI_SUCCESS != rc) {
        global[0] = rc;
    }
    if (sfp_page) {
        /* a page missing anywhere: sharedfp makes its service itself */
        mca_common_sfio_sharedfp_page_settle(fh, MPI_SUCCESS == global[0] && 0 == global[2],
                                             OMPIO_ROOT == fh->f_rank ? msg.sfp_name : NULL);
    }
    if (MPI_SUCCESS != global[0]) {
        mca_common_sfio_vstore_discard(store);
        if (fh->fd >= 0) {
            close(fh->fd);
            fh->fd = -1;
        }
        opal_output_verbose(1, mca_common_sfio_output, "sfio: open of %s failed (MPI error %d)",
                            filename, global[0]);
        return global[0];
    }
    store_rc = -global[1];
    if (0 != store_rc) {
        mca_common_sfio_vstore_discard(store);
        store = NULL;
    }

    fh->f_stripe_size = 0;
    fh->f_stripe_count = 1;
    fh->f_fstype = UFS;

    /* Stock fbtl/posix over this fs locks by these flags: keep its NFS
     * behaviour (whole-file locks) and skip locks elsewhere. */
    char *fstype = NULL;
    bool on_nfs = false;
    if (opal_path_nfs((char *) filename, &fstype) && NULL != fstype &&
        0 == strncasecmp(fstype, "nfs", 3)) {
        on_nfs = true;
    }
    free(fstype);
    fh->f_flags |= on_nfs ? OMPIO_LOCK_ENTIRE_FILE : OMPIO_LOCK_NEVER;

    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (NULL == f && NULL == (f = sfio_ompio_file_new(fh, true))) {
        mca_common_sfio_vstore_discard(store);
        close(fh->fd);
        fh->fd = -1;
        return MPI_ERR_NO_MEM;
    }
    f->store_errno = options->versioned_store ? EROFS : ENOTSUP;
    f->store_why = auto_local ? mca_common_sfio_route_auto_local_why : NULL;
    f->auto_local = auto_local;
    if (want_store && 0 != store_rc) {
        opal_output_verbose(1, mca_common_sfio_output,
                            "sfio: no versioned store for %s: %s", filename, strerror(-store_rc));
    }
    if (NULL != warn) {
        static bool told = false;   /* once per process: the parameter is */
        if (!told) {
            told = true;
            /* one line, as the store messages (see note_store) */
            opal_output(0, "sfio: fs_versioned_store_dir \"%s\" is not used for versioned "
                        "stores: its per-user subdirectory %s; stores go beside the files "
                        "instead", options->store_dir, warn);
        }
    }
    if (NULL != store) {
        mca_common_sfio_vstore_begin(store);
        mca_common_sfio_vstore_set_journal_private(store, options->journal_private);
        mca_common_sfio_fold_policy_t fold = options->fold;
        fold.hidden_groups = fold_groups_hidden(options, fh->fd);
        fold.carry_small = mca_common_sfio_storage_is_network(mca_common_sfio_posix_storage,
                                                              fh->fd);
        mca_common_sfio_vstore_set_fold_policy(store, &fold);
        opal_output_verbose(10, mca_common_sfio_output, "sfio: versioned store %s",
                            mca_common_sfio_vstore_dir(store));
        if (spans) {
            /* No page is shared between nodes: the store's counters live
             * in the file's coordination service, joined at the first
             * set_atomicity(fh, 1) where it can be wrapped (alike on
             * every rank: the same OMPIO, the same kind of handle). */
            f->store_awaiting_service = store;
            f->store_errno = ENOTCONN;
            if (!sfio_ompio_hooks_wrap_set_atomicity(f)) {
                sfio_ompio_fs_store_join(fh, f);
            }
        } else {
            f->store = store;
            (void) sfio_ompio_hooks_wrap_set_atomicity(f);
        }
    } else if (want_store) {
        f->store = NULL;
        f->store_errno = -store_rc;
    }
    f->private_objects = options->private_objects;
    f->objects_max_ranges = options->objects_max_ranges;
    sfio_ompio_hooks_install_at_open(f);
    int trc = sfio_ompio_track(fh);
    if (OMPI_SUCCESS != trc) {
        opal_output_verbose(1, mca_common_sfio_output, "sfio: cannot track %s: error %d",
                            filename, trc);
    }
    return MPI_SUCCESS;
}

static void report_stats(ompio_file_t *fh, const mca_common_sfio_vstore_stats_t *stp)
{
    const mca_common_sfio_vstore_stats_t st = *stp;
    opal_output_verbose(1, mca_common_sfio_output,
                        "sfio: rank %d %s: in place %" PRIu64 " B (fresh %" PRIu64 " B), versioned %" PRIu64
                        " B (deferred private %" PRIu64 " B) in %" PRIu64 " versions (%" PRIu64 " carried by their records), overlaid reads %" PRIu64 " B, folded %" PRIu64
                        " B (%" PRIu64 " B from memory) in %" PRIu64 " folds (%" PRIu64 " by owner, %" PRIu64
                        " with records gathered), waits %" PRIu64
                        ", skipped dead versions %" PRIu64 ", fold windows split (other opens) %" PRIu64,
                        fh->f_rank, fh->f_filename ? fh->f_filename : "", st.bytes_in_place,
                        st.bytes_fresh, st.bytes_versioned, st.bytes_deferred, st.versions,
                        st.versions_carried, st.bytes_overlaid,
                        st.bytes_folded, st.bytes_fold_cached, st.folds, st.folds_by_owner, st.folds_gathered,
                        st.publish_waits, st.aborted_versions, st.fold_windows_split);
    if (st.compactions > 0) {
        opal_output_verbose(1, mca_common_sfio_output,
                            "sfio: rank %d %s: %" PRIu64 " compactions kept the store bounded",
                            fh->f_rank, fh->f_filename ? fh->f_filename : "", st.compactions);
    }
}

/* Files whose DELETE_ON_CLOSE this process has just carried out.  OMPIO
 * calls fs_file_delete on every rank after close; only the first unlink
 * can succeed, and the others must not turn a correct close into an
 * error. */
typedef struct pending_delete_t {
    struct pending_delete_t *next;
    char name[];
} pending_delete_t;
static pending_delete_t *pending_deletes;

static void pending_delete_add(const char *name)
{
    size_t len = strlen(name) + 1;
    pending_delete_t *p = malloc(sizeof(*p) + len);
    if (NULL != p) {
        memcpy(p->name, name, len);
        p->next = pending_deletes;
        pending_deletes = p;
    }
}

static bool pending_delete_take(const char *name)
{
    for (pending_delete_t **pp = &pending_deletes; NULL != *pp; pp = &(*pp)->next) {
        if (0 == strcmp((*pp)->name, name)) {
            pending_delete_t *p = *pp;
            *pp = p->next;
            free(p);
            return true;
        }
    }
    return false;
}

int mca_common_sfio_fs_close(ompio_file_t *fh)
{
    int err = MPI_SUCCESS;
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (NULL != f) {
        err = mca_common_sfio_pcache_flush(fh, &f->pcache);
        if (MPI_SUCCESS == err && 0 != f->unreported_err) {
            err = f->unreported_err;    /* see unreported_err */
        }
        if (NULL != f->store_awaiting_service) {
            /* never atomic, so never touched: nothing of it exists */
            mca_common_sfio_vstore_discard(f->store_awaiting_service);
            f->store_awaiting_service = NULL;
        }
        if (NULL != f->store) {
            mca_common_sfio_vstore_stats_t st = { 0 };
            int rc = mca_common_sfio_vstore_close(f->store, !sfio_ompio_atomic_ever(f), &st);
            report_stats(fh, &st);
            f->store = NULL;
            if (0 != rc) {
                mca_common_sfio_show_help("io-error", true, "fs/versioned", "fold the versions into",
                                          fh->f_filename ? fh->f_filename : "", strerror(-rc));
                err = mca_common_sfio_errno_to_mpi(-rc);
            }
        }
        int lrc = sfio_ompio_locksvc_close(f);
        err = MPI_SUCCESS != err ? err : lrc;
        lrc = sfio_ompio_gate_close(f);
        err = MPI_SUCCESS != err ? err : lrc;
        /* OMPIO unselects fcoll and sharedfp after fs close. */
        sfio_ompio_hooks_remove_at_close(f);
        sfio_ompio_untrack(fh);
        sfio_ompio_file_free(f);
    }
    if (fh->fd >= 0) {
        if (0 != close(fh->fd)) {
            err = mca_common_sfio_errno_to_mpi(errno);
        }
        fh->fd = -1;
    }
    if ((fh->f_amode & MPI_MODE_DELETE_ON_CLOSE) && NULL != fh->f_fullfilename) {
        pending_delete_add(fh->f_fullfilename);
    }
    return err;
}

/* Before the last name of a file goes: its stores left by crashed jobs
 * would otherwise wait for a new file that reuses the inode number. */
static void discard_stores_of(const char *filename, const char *store_dir)
{
    struct stat st;
    if (0 != lstat(filename, &st) || !S_ISREG(st.st_mode) || 1 != st.st_nlink) {
        return;   /* a symlink, or another name keeps the file */
    }
    int fd = open(filename, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd >= 0) {
        (void) mca_common_sfio_vstore_scan(filename, fd, store_dir, MCA_COMMON_SFIO_STORE_DISCARD,
                                           NULL, note_store, (void *) filename, NULL);
        close(fd);
    }
}

int mca_common_sfio_fs_delete(char *filename, struct opal_info_t *info, const char *store_dir)
{
    bool after_close = pending_delete_take(filename);
    (void) info;
    discard_stores_of(filename, store_dir);
    if (0 == unlink(filename)) {
        return MPI_SUCCESS;
    }
    if (ENOENT == errno && after_close) {
        return MPI_SUCCESS;   /* another rank of the closing group won */
    }
    return mca_common_sfio_errno_to_mpi(errno);
}

static int truncate_flat(int fd, OMPI_MPI_OFFSET_TYPE size)
{
    while (0 != ftruncate(fd, (off_t) size)) {
        if (EINTR != errno) {
            return mca_common_sfio_errno_to_mpi(errno);
        }
    }
    return MPI_SUCCESS;
}

/* Nothing may land beyond the new size after the root truncates: neither
 * the private bytes a rank cached nor published versions (a fold writes
 * them).  Where no rank has either, which one allreduce tells, the root
 * has truncated before it and the allreduce also carries its outcome;
 * otherwise the store is folded (that allreduce was the barrier after
 * every rank's last write) and the root truncates again.  A fold that
 * fails returns its error with the file truncated: the versions stay in
 * the store, as after any failed fold. */
int mca_common_sfio_fs_set_size(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE size)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    int v[2] = { 0, MPI_SUCCESS };   /* some rank wrote or holds versions; the root's outcome */
    if (NULL != f) {
        pthread_mutex_lock(&f->pcache.lock);
        v[0] = f->pcache.count > 0;
        pthread_mutex_unlock(&f->pcache.lock);
        int rc = mca_common_sfio_pcache_flush(fh, &f->pcache);
        if (MPI_SUCCESS != rc) {
            return rc;
        }
        if (NULL != f->store && mca_common_sfio_vstore_touched(f->store)) {
            v[0] = 1;
        }
    }
    if (OMPIO_ROOT == fh->f_rank) {
        v[1] = truncate_flat(fh->fd, size);
    }
    int rc = fh->f_comm->c_coll->coll_allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, fh->f_comm,
                                                fh->f_comm->c_coll->coll_allreduce_module);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    int err = v[1];
    if (v[0]) {
        /* Versions beyond the new size must not resurface after truncation. */
        if (NULL != f && NULL != f->store) {
            int frc = mca_common_sfio_vstore_fold(f->store, false, true);
            if (0 != frc) {
                return mca_common_sfio_errno_to_mpi(-frc);
            }
        }
        err = OMPIO_ROOT == fh->f_rank ? truncate_flat(fh->fd, size) : MPI_SUCCESS;
        rc = fh->f_comm->c_coll->coll_bcast(&err, 1, MPI_INT, OMPIO_ROOT, fh->f_comm,
                                            fh->f_comm->c_coll->coll_bcast_module);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
    mca_common_sfio_vstore_t *store = NULL == f ? NULL
                                      : NULL != f->store ? f->store : f->store_awaiting_service;
    if (NULL != store) {
        mca_common_sfio_vstore_floor_at_size(store);   /* root's ftruncate is done */
    }
    return err;
}

int mca_common_sfio_fs_get_size(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE *size)
{
    struct stat st;
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (NULL != f && NULL != f->store) {
        uint64_t s64;
        int rc = mca_common_sfio_vstore_size(f->store, &s64);
        if (0 != rc) {
            return mca_common_sfio_errno_to_mpi(-rc);
        }
        *size = (OMPI_MPI_OFFSET_TYPE) s64;
        return MPI_SUCCESS;
    }
    /* another client's writes may have grown it (ROMIO locks on NFS for this) */
    if (mca_common_sfio_fs_clients_cache(sfio_ompio_fs_type(fh, f))) {
        int vrc = mca_common_sfio_posix_revalidate(fh->fd);
        if (0 != vrc) {
            return mca_common_sfio_errno_to_mpi(-vrc);
        }
    }
    if (0 != fstat(fh->fd, &st)) {
        return mca_common_sfio_errno_to_mpi(errno);
    }
    *size = (OMPI_MPI_OFFSET_TYPE) st.st_size;
    return MPI_SUCCESS;
}


int mca_common_sfio_fs_sync(ompio_file_t *fh)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    int rc = MPI_SUCCESS;
    if (NULL != f) {
        rc = mca_common_sfio_pcache_flush(fh, &f->pcache);
        if (MPI_SUCCESS != rc) {
            return rc;
        }
    }
    bool revalidated = false;
    /* a store no rank can have touched holds nothing to fold */
    if (NULL != f && NULL != f->store && sfio_ompio_atomic_ever(f)) {
        mca_common_sfio_vstore_stats_t before, after;
        mca_common_sfio_vstore_stats(f->store, &before);
        int frc = mca_common_sfio_vstore_fold(f->store, true, true);   /* OMPIO barriered */
        rc = 0 == frc ? MPI_SUCCESS : mca_common_sfio_errno_to_mpi(-frc);
        mca_common_sfio_vstore_stats(f->store, &after);
        revalidated = after.flat_revalidations != before.flat_revalidations;
    } else if (0 != fsync(fh->fd)) {
        rc = mca_common_sfio_errno_to_mpi(errno);
    }
    /* MPI's sync-barrier-sync: this sync may be the one after the barrier,
     * so where clients cache the file, drop what this one cached (a fold
     * that wrote back has done so) */
    if (MPI_SUCCESS == rc && !revalidated
        && mca_common_sfio_fs_clients_cache(sfio_ompio_fs_type(fh, f))) {
        int vrc = mca_common_sfio_posix_revalidate(fh->fd);
        rc = 0 != vrc ? mca_common_sfio_errno_to_mpi(-vrc) : rc;
    }
    /* An earlier independent write's error, which io/ompio dropped (kept
     * when this sync fails itself: the error it returns is its own). */
    if (MPI_SUCCESS == rc) {
        int lost = sfio_ompio_take_unreported(fh);
        rc = 0 != lost ? lost : rc;
    }
    return rc;
}
