/*
 * sfio_ompio_fbtl: the data path of fbtl/versioned: OMPIO's iovec to
 * segments, the route of an access (sfio_route decides, sfio_path runs),
 * blocking and queued calls.
 */
#include "sfio_ompio_int.h"

/* ------------------------------------------------------------------ */
/* Data path                                                          */
/* ------------------------------------------------------------------ */

int mca_common_sfio_ompio_segs(const ompio_file_t *fh, mca_common_sfio_ioseg_t **segs_p,
                               size_t *nsegs_p)
{
    size_t n = fh->f_num_of_io_entries > 0 ? (size_t) fh->f_num_of_io_entries : 0;
    mca_common_sfio_ioseg_t *segs = malloc((n ? n : 1) * sizeof(*segs));
    if (NULL == segs) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; ++i) {
        segs[i].offset = (uint64_t) (intptr_t) fh->f_io_array[i].offset;
        segs[i].length = fh->f_io_array[i].length;
        segs[i].buf = fh->f_io_array[i].memory_address;
    }
    *segs_p = segs;
    *nsegs_p = n;
    return 0;
}

static void atomic_mode_entry(int i, int *value, const char **name, const char **help)
{
    *value = (int) mca_common_sfio_atomic_modes[i].id;
    *name = mca_common_sfio_atomic_modes[i].name;
    *help = mca_common_sfio_atomic_modes[i].help;
}

int mca_common_sfio_atomic_mode_register(const mca_base_component_t *c, int *storage)
{
    return mca_common_sfio_component_register_table(
        c, "atomic_mode", "sfio_atomic_mode", "How MPI_File_set_atomicity(fh, 1) is provided:",
        mca_common_sfio_atomic_mode_count, atomic_mode_entry, MCA_COMMON_SFIO_ATOMIC_AUTO,
        OPAL_INFO_LVL_9, storage);
}

/* Per-process scratch buffer for sieved blocking reads (OMPIO serialises
 * calls on one file under its own lock; blocking reads of several threads
 * are not supported by OMPIO 4.1 either). */
static mca_common_sfio_scratch_t blocking_scratch;

/* The operations of each kind of route (sfio_route decides the kind). */
static const mca_common_sfio_path_ops_t *const ops_of_kind[MCA_COMMON_SFIO_ROUTE_KINDS] = {
    [MCA_COMMON_SFIO_ROUTE_POSIX] = &mca_common_sfio_path_posix,
    [MCA_COMMON_SFIO_ROUTE_STORE] = &mca_common_sfio_path_store,
    [MCA_COMMON_SFIO_ROUTE_VERSIONS] = &mca_common_sfio_path_versions,
    [MCA_COMMON_SFIO_ROUTE_LOCKED] = &mca_common_sfio_path_locked,
};

/* The name of the atomic mode that takes lockmode's locks. */
static const char *lock_mode_name(mca_common_sfio_lockmode_t lockmode)
{
    for (int i = 0; i < mca_common_sfio_atomic_mode_count; ++i) {
        if (mca_common_sfio_atomic_modes[i].locks &&
            mca_common_sfio_atomic_modes[i].lockmode == lockmode) {
            return mca_common_sfio_atomic_modes[i].name;
        }
    }
    return "locks";
}

/* Why fh has no store, for the user. */
static const char *why_no_store(const mca_common_sfio_file_t *f)
{
    if (NULL == f || !f->served_by_fs) {
        return "the file is not served by fs/versioned";
    }
    return NULL != f->store_why ? f->store_why : strerror(f->store_errno);
}

/* The route of fh's accesses in mode (atomic or not), from what the
 * file's state says now; says what the decision asks to say (once). */
static mca_common_sfio_route_t decide(ompio_file_t *fh, mca_common_sfio_file_t *f, int mode,
                                      bool atomic)
{
    static bool told_fallback = false;
    mca_common_sfio_route_facts_t facts = {
        .mode = mode,
        .atomic = atomic,
        .read_only = 0 != (fh->f_amode & MPI_MODE_RDONLY),
        .have_store = NULL != f && NULL != f->store,
        .store_attached = NULL != f && NULL != f->store &&
                          mca_common_sfio_vstore_attached(f->store),
        /* only atomic accesses split private from shared bytes, and only
         * on some routes: resolving the views' intersection costs, so it
         * is asked for below where the route would use it */
        .objects_known = atomic,
        .pcache_enabled = mca_common_sfio_pcache_limit > 0,
        .local_one_node = NULL != f && f->auto_local,
        .gate_open = NULL != f && NULL != f->gate.coord,
    };
    if (facts.objects_known) {
        facts.objects_known = mca_common_sfio_route_decide(&facts).with_objects &&
                              NULL != mca_common_sfio_file_objects(f);
    }
    mca_common_sfio_route_t r = mca_common_sfio_route_decide(&facts);
    const char *name = fh->f_filename ? fh->f_filename : "";
    switch (r.say) {
    case MCA_COMMON_SFIO_ROUTE_SAY_FALLBACK:
        if (!told_fallback) {
            told_fallback = true;
            opal_output_verbose(1, mca_common_sfio_output,
                                "sfio: atomic mode of %s uses %s%s, not versioned: %s", name,
                                lock_mode_name(r.lockmode),
                                r.with_gate ? " (none for a write of one system call)" : "",
                                why_no_store(f));
        }
        break;
    case MCA_COMMON_SFIO_ROUTE_SAY_NO_STORE:
        if (NULL == f || !f->warned_no_atomic) {
            mca_common_sfio_show_help("atomic-unavailable", true, name, why_no_store(f));
            if (NULL != f) {
                f->warned_no_atomic = true;
            }
        }
        break;
    case MCA_COMMON_SFIO_ROUTE_SAY_BAD_MODE:
        opal_output(0, "sfio: %s: atomic mode %d is not one of the suite's", name, mode);
        break;
    case MCA_COMMON_SFIO_ROUTE_SAY_NOTHING:
        break;
    }
    return r;
}


/* Chooses how fh's current access reaches the file; the decision is kept
 * in the file's state until atomicity, the views, the mode or the store's
 * attachment change.  In atomic mode without a usable route returns
 * -ENOTSUP.  A route that does not use the private-byte cache first
 * writes back what the cache holds, so that no older cached copy lands
 * over what it writes, and it reads what the cache held. */
static int route(ompio_file_t *fh, mca_common_sfio_atomic_mode_t mode,
                 mca_common_sfio_path_t *path_p)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    mca_common_sfio_pcache_t *pc = NULL != f ? &f->pcache : NULL;
    bool attached = NULL != f && NULL != f->store && mca_common_sfio_vstore_attached(f->store);
    if (NULL != f && f->route.valid && f->route.atomicity == (0 != fh->f_atomicity) &&
        f->route.mode == (int) mode && f->route.set_views == f->set_views &&
        f->route.attached == attached) {
        *path_p = f->route.path;
    } else {
        mca_common_sfio_route_t r = decide(fh, f, (int) mode, 0 != fh->f_atomicity);
        if (MCA_COMMON_SFIO_ROUTE_NONE == r.kind) {
            return -ENOTSUP;
        }
        bool by_service = NULL != f && NULL != f->locksvc;
        *path_p = (mca_common_sfio_path_t) {
            .ops = r.with_gate ? &mca_common_sfio_path_gated : ops_of_kind[r.kind],
            .store = r.with_store ? f->store : NULL,
            .lockmode = r.lockmode,
            .locker = by_service ? &f->locker : NULL,
            .coherence = mca_common_sfio_route_lock_coherence(sfio_ompio_fs_type(fh, f), by_service),
            .objects = r.with_objects ? mca_common_sfio_file_objects(f) : NULL,
            .pcache = r.with_pcache ? pc : NULL,
            .gate = r.with_gate ? &f->gate : NULL,
        };
        if (NULL != f) {
            f->route.valid = true;
            f->route.atomicity = 0 != fh->f_atomicity;
            f->route.mode = (int) mode;
            f->route.set_views = f->set_views;
            f->route.attached = attached;
            f->route.path = *path_p;
        }
    }
    if (NULL == path_p->pcache && NULL != pc && pc->count > 0) {
        return mca_common_sfio_pcache_write_back(fh->fd, pc);
    }
    return 0;
}

/* Whether fh can be made atomic in mode (see sfio_ompio.h).  The answer
 * must be the same on every rank: the store exists on all ranks or on none
 * (fs open agrees on it), and the fcntl probe asks the shared file system. */
bool mca_common_sfio_fbtl_check_atomicity(ompio_file_t *fh, mca_common_sfio_atomic_mode_t mode)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    mca_common_sfio_route_t r = decide(fh, f, (int) mode, true);
    if (MCA_COMMON_SFIO_ROUTE_LOCKED != r.kind) {
        return MCA_COMMON_SFIO_ROUTE_NONE != r.kind;
    }
    /* Lock modes: byte-range locks must work on this file. */
    struct flock probe = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
    if (fh->fd < 0 || 0 != fcntl(fh->fd, F_GETLK, &probe)) {
        opal_output_verbose(1, mca_common_sfio_output,
                            "sfio: %s cannot be atomic in a lock mode: fcntl(F_GETLK): %s",
                            fh->f_filename ? fh->f_filename : "", strerror(errno));
        return false;
    }
    return true;
}

static void trace(ompio_file_t *fh, const char *what, const mca_common_sfio_ioseg_t *segs,
                  size_t nsegs, const mca_common_sfio_path_t *p)
{
    if (opal_output_get_verbosity(mca_common_sfio_output) < 10) {
        return;   /* every fbtl call passes here: sum nothing unless asked */
    }
    const char *via = p->ops->name;
    for (int i = 0; i < mca_common_sfio_atomic_mode_count; ++i) {
        if (&mca_common_sfio_path_locked == p->ops && mca_common_sfio_atomic_modes[i].locks &&
            mca_common_sfio_atomic_modes[i].lockmode == p->lockmode) {
            via = mca_common_sfio_atomic_modes[i].name;
        }
    }
    opal_output_verbose(10, mca_common_sfio_output,
                        "sfio: %s %zu pieces from %" PRIu64 " (%" PRIu64 " B) atomic=%d via %s",
                        what, nsegs, nsegs ? segs[0].offset : 0,
                        mca_common_sfio_ioseg_total(segs, nsegs), fh->f_atomicity, via);
}

ssize_t mca_common_sfio_fbtl_pwritev(ompio_file_t *fh, mca_common_sfio_atomic_mode_t mode)
{
    mca_common_sfio_path_t path;
    mca_common_sfio_ioseg_t *segs;
    size_t nsegs;
    uint64_t written = 0;

    if (NULL == fh->f_io_array) {
        return OMPI_ERROR;
    }
    int rrc = route(fh, mode, &path);
    if (0 == rrc) {
        rrc = mca_common_sfio_ompio_segs(fh, &segs, &nsegs);
    }
    if (0 != rrc) {
        sfio_ompio_note_unreported(fh, -rrc);   /* io/ompio drops this call's error */
        return OMPI_ERROR;
    }
    trace(fh, "write", segs, nsegs, &path);
    int rc = path.ops->write(fh->fd, &path, segs, nsegs, &written);
    free(segs);
    if (rc < 0) {
        opal_output_verbose(1, mca_common_sfio_output, "sfio: write failed: %s", strerror(-rc));
        sfio_ompio_note_unreported(fh, -rc);
        return written > 0 ? (ssize_t) written : OMPI_ERROR;
    }
    return (ssize_t) written;
}

ssize_t mca_common_sfio_fbtl_preadv(ompio_file_t *fh, mca_common_sfio_atomic_mode_t mode,
                                    const mca_common_sfio_sieve_policy_t *policy)
{
    mca_common_sfio_path_t path;
    mca_common_sfio_ioseg_t *segs;
    size_t nsegs;
    uint64_t got = 0;

    if (NULL == fh->f_io_array || 0 != route(fh, mode, &path) ||
        0 != mca_common_sfio_ompio_segs(fh, &segs, &nsegs)) {
        return OMPI_ERROR;
    }
    trace(fh, "read", segs, nsegs, &path);
    int rc = path.ops->read(fh->fd, &path, segs, nsegs, policy, &blocking_scratch, &got);
    free(segs);
    if (rc < 0) {
        opal_output_verbose(1, mca_common_sfio_output, "sfio: read failed: %s", strerror(-rc));
        return OMPI_ERROR;
    }
    return (ssize_t) got;
}

static ssize_t submit(ompio_file_t *fh, ompi_request_t *request, mca_common_sfio_async_kind_t kind,
                      mca_common_sfio_atomic_mode_t mode,
                      const mca_common_sfio_sieve_policy_t *policy)
{
    static const mca_common_sfio_sieve_policy_t no_sieve = { .enabled = false };
    mca_ompio_request_t *req = (mca_ompio_request_t *) request;
    mca_common_sfio_path_t path;
    mca_common_sfio_async_job_t *job;
    mca_common_sfio_ioseg_t *segs;
    size_t nsegs;

    if (NULL == fh->f_io_array || 0 != route(fh, mode, &path) ||
        0 != mca_common_sfio_ompio_segs(fh, &segs, &nsegs)) {
        return OMPI_ERROR;
    }
    int rc = mca_common_sfio_async_submit(kind, fh->fd, &path, segs, nsegs,
                                          policy ? policy : &no_sieve, &job);
    free(segs);
    if (0 != rc) {
        opal_output_verbose(1, mca_common_sfio_output, "sfio: cannot queue I/O: %s",
                            strerror(-rc));
        return OMPI_ERROR;
    }
    req->req_data = job;
    req->req_progress_fn = mca_common_sfio_fbtl_progress;
    req->req_free_fn = mca_common_sfio_fbtl_request_free;
    return OMPI_SUCCESS;
}

ssize_t mca_common_sfio_fbtl_ipwritev(ompio_file_t *fh, ompi_request_t *request,
                                      mca_common_sfio_atomic_mode_t mode)
{
    return submit(fh, request, MCA_COMMON_SFIO_ASYNC_WRITE, mode, NULL);
}

ssize_t mca_common_sfio_fbtl_ipreadv(ompio_file_t *fh, ompi_request_t *request,
                                     mca_common_sfio_atomic_mode_t mode,
                                     const mca_common_sfio_sieve_policy_t *policy)
{
    return submit(fh, request, MCA_COMMON_SFIO_ASYNC_READ, mode, policy);
}

bool mca_common_sfio_fbtl_progress(struct mca_ompio_request_t *req)
{
    int status;
    uint64_t bytes;
    if (NULL == req->req_data ||
        !mca_common_sfio_async_test((mca_common_sfio_async_job_t *) req->req_data, &status,
                                    &bytes)) {
        return false;
    }
    req->req_ompi.req_status.MPI_ERROR = (0 == status) ? OMPI_SUCCESS
                                                       : mca_common_sfio_errno_to_mpi(-status);
    req->req_ompi.req_status._ucount = (size_t) bytes;
    return true;
}

void mca_common_sfio_fbtl_request_free(struct mca_ompio_request_t *req)
{
    mca_common_sfio_async_release((mca_common_sfio_async_job_t *) req->req_data);
    req->req_data = NULL;
}
