/*
 * sfio_ompio: adapter between OMPIO and the engine (see header).
 */
#include "ompi_config.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "ompi/request/request.h"
#include "ompi/mca/fs/base/base.h"
#include "ompi/datatype/ompi_datatype.h"
#include "opal/util/output.h"
#include "opal/util/path.h"
#include "opal/util/show_help.h"
#include "opal/sys/atomic.h"
#include "opal/mca/hwloc/hwloc-internal.h"
#include "ompi/proc/proc.h"

#include "sfio_ompio.h"
#include "sfio_component.h"
#include "sfio_posixio.h"
#include "sfio_async.h"
#include "sfio_locks.h"

int mca_common_sfio_output = -1;

#ifndef SFIO_HELPDIR
#define SFIO_HELPDIR ""
#endif
#ifndef SFIO_SRC_HELPDIR
#define SFIO_SRC_HELPDIR ""
#endif

int mca_common_sfio_errno_to_mpi(int err)
{
    switch (err) {
    case 0:            return MPI_SUCCESS;
    case EACCES:
    case EPERM:        return MPI_ERR_ACCESS;
    case EROFS:        return MPI_ERR_READ_ONLY;
    case ENOENT:       return MPI_ERR_NO_SUCH_FILE;
    case EEXIST:       return MPI_ERR_FILE_EXISTS;
    case ENOTDIR:
    case EISDIR:
    case ENAMETOOLONG:
    case ELOOP:        return MPI_ERR_BAD_FILE;
    case ENOSPC:       return MPI_ERR_NO_SPACE;
#ifdef EDQUOT
    case EDQUOT:       return MPI_ERR_QUOTA;
#endif
    case EBUSY:
    case ETXTBSY:      return MPI_ERR_FILE_IN_USE;
    case ENOMEM:
    case EMFILE:       /* out of descriptors: a process resource, like memory */
    case ENFILE:       return MPI_ERR_NO_MEM;
    case EINVAL:       return MPI_ERR_ARG;
    default:           return MPI_ERR_IO;
    }
}

void mca_common_sfio_show_help(const char *topic, bool want_error_header, ...)
{
    static bool dirs_added = false;
    va_list ap;

    if (!dirs_added) {
        dirs_added = true;
        /* a relocated installation (or a copy its user can read) */
        const char *env = getenv("SFIO_HELP_DIR");
        if (NULL != env && '\0' != env[0]) {
            (void) opal_show_help_add_dir((char *) env);
        }
        if ('\0' != SFIO_HELPDIR[0]) {
            (void) opal_show_help_add_dir(SFIO_HELPDIR);
        }
        if ('\0' != SFIO_SRC_HELPDIR[0]) {
            (void) opal_show_help_add_dir(SFIO_SRC_HELPDIR);
        }
    }
    va_start(ap, want_error_header);
    (void) opal_show_vhelp("help-mca-common-sfio.txt", topic, want_error_header, ap);
    va_end(ap);
}

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

static mca_common_sfio_coll_t coll_of(ompio_file_t *fh)
{
    return (mca_common_sfio_coll_t) {
        .ctx = fh->f_comm, .rank = fh->f_rank, .size = fh->f_size,
        .barrier = coll_barrier, .bcast = coll_bcast,
        .allreduce_max_int = coll_allreduce_max_int,
    };
}

static void hooks_install_at_open(mca_common_sfio_file_t *f);
static void hooks_remove_at_close(mca_common_sfio_file_t *f);
static int ompio_track(ompio_file_t *fh);
static void ompio_untrack(ompio_file_t *fh);

/* This process's open files that the suite serves (few: a list). */
static mca_common_sfio_file_t *open_files;

mca_common_sfio_file_t *mca_common_sfio_file_of(const ompio_file_t *fh)
{
    for (mca_common_sfio_file_t *f = open_files; NULL != f; f = f->next) {
        if (f->fh == fh) {
            return f;
        }
    }
    return NULL;
}

static void file_free(mca_common_sfio_file_t *f)
{
    for (mca_common_sfio_file_t **fp = &open_files; NULL != *fp; fp = &(*fp)->next) {
        if (*fp == f) {
            *fp = f->next;
            break;
        }
    }
    if (NULL != f->fs_real && f->fh->f_fs == &f->fs_proxy) {
        f->fh->f_fs = f->fs_real;
    }
    mca_common_sfio_objects_destroy(&f->objects);
    mca_common_sfio_pcache_destroy(&f->pcache);
    free(f);
}

/* A new state for fh; a state left for the same handle address by a file
 * whose close never reached the suite is dropped first. */
static mca_common_sfio_file_t *file_new(ompio_file_t *fh, bool served_by_fs)
{
    mca_common_sfio_file_t *stale = mca_common_sfio_file_of(fh);
    if (NULL != stale) {
        file_free(stale);
    }
    mca_common_sfio_file_t *f = calloc(1, sizeof(*f));
    if (NULL == f) {
        return NULL;
    }
    f->fh = fh;
    f->served_by_fs = served_by_fs;
    f->store_errno = ENOTSUP;
    mca_common_sfio_objects_init(&f->objects);
    mca_common_sfio_pcache_init(&f->pcache);
    /* over a stock fs the lock modes still use the private objects */
    f->private_objects = true;
    f->objects_max_ranges = (size_t) 1 << 20;
    f->next = open_files;
    open_files = f;
    return f;
}

/* ------------------------------------------------------------------ */
/* The private-object cache's collective flush (see sfio_ompio.h)      */
/* ------------------------------------------------------------------ */

/* Domains start on this alignment (file system blocks stay whole). */
#define PCACHE_DOMAIN_ALIGN 4096

static int by_offset(const void *a, const void *b)
{
    const mca_common_sfio_ioseg_t *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Packs this rank's pieces per domain as [(offset, length) pairs][bytes]
 * into sbuf; scount/sdispl per rank in bytes. */
static void pcache_pack(const mca_common_sfio_ioseg_t *pieces, size_t npieces, uint64_t lo,
                        uint64_t dsize, int n, const uint64_t *per, char *sbuf,
                        const int *sdispl)
{
    size_t *hdr_at = calloc((size_t) n, sizeof(size_t)), *data_at = calloc((size_t) n, sizeof(size_t));
    for (int d = 0; d < n; ++d) {
        hdr_at[d] = (size_t) sdispl[d];
        data_at[d] = (size_t) sdispl[d] + 16 * (size_t) per[2 * d];
    }
    for (size_t i = 0; i < npieces; ++i) {
        uint64_t q = (pieces[i].offset - lo) / dsize;
        int d = q >= (uint64_t) n ? n - 1 : (int) q;
        uint64_t pair[2] = { pieces[i].offset, pieces[i].length };
        memcpy(sbuf + hdr_at[d], pair, sizeof(pair));
        hdr_at[d] += sizeof(pair);
        memcpy(sbuf + data_at[d], pieces[i].buf, pieces[i].length);
        data_at[d] += pieces[i].length;
    }
    free(hdr_at);
    free(data_at);
}

static int pcache_send_and_write(ompio_file_t *fh, uint64_t lo, uint64_t dsize,
                                 const mca_common_sfio_ioseg_t *pieces, size_t npieces,
                                 const uint64_t *per, const uint64_t *rper, int *cnt, char *sbuf,
                                 char *rbuf, mca_common_sfio_ioseg_t *mine);

/* The exchange and this rank's domain write.  Returns 0 or a negative
 * errno of this rank (the caller agrees on one). */
static int pcache_exchange(ompio_file_t *fh, mca_common_sfio_pcache_t *pc, uint64_t lo,
                           uint64_t hi)
{
    ompi_communicator_t *comm = fh->f_comm;
    int n = fh->f_size, rc = 0;
    uint64_t dsize = mca_common_sfio_pcache_domain_size(lo, hi, n, PCACHE_DOMAIN_ALIGN);
    size_t npieces = mca_common_sfio_pcache_route_count(pc, lo, dsize, n);
    mca_common_sfio_ioseg_t *pieces = malloc((npieces ? npieces : 1) * sizeof(*pieces));
    mca_common_sfio_ioseg_t *mine = NULL;
    uint64_t *per = malloc(2 * (size_t) n * sizeof(uint64_t));
    uint64_t *rper = malloc(2 * (size_t) n * sizeof(uint64_t));
    int *cnt = malloc(4 * (size_t) n * sizeof(int));
    char *sbuf = NULL, *rbuf = NULL;
    int ok = NULL != pieces && NULL != per && NULL != rper && NULL != cnt;

    if (ok) {
        mca_common_sfio_pcache_route(pc, lo, dsize, n, per, pieces);
    } else if (NULL != per) {
        memset(per, 0, 2 * (size_t) n * sizeof(uint64_t));
    }
    /* everyone enters the alltoall, even a rank short of memory */
    int mrc = comm->c_coll->coll_alltoall(per ? per : rper, 2, MPI_UINT64_T, rper, 2,
                                          MPI_UINT64_T, comm,
                                          comm->c_coll->coll_alltoall_module);
    uint64_t stot = 0, rtot = 0, rpieces = 0;
    for (int r = 0; ok && r < n; ++r) {
        stot += 16 * per[2 * r] + per[2 * r + 1];
        rtot += 16 * rper[2 * r] + rper[2 * r + 1];
        rpieces += rper[2 * r];
    }
    /* alltoallv counts are ints */
    ok = ok && OMPI_SUCCESS == mrc && stot <= INT32_MAX && rtot <= INT32_MAX;
    if (ok) {
        sbuf = malloc(stot ? stot : 1);
        rbuf = malloc(rtot ? rtot : 1);
        mine = malloc((rpieces ? rpieces : 1) * sizeof(*mine));
        ok = NULL != sbuf && NULL != rbuf && NULL != mine;
    }
    int agreed = ok;
    mrc = comm->c_coll->coll_allreduce(MPI_IN_PLACE, &agreed, 1, MPI_INT, MPI_MIN, comm,
                                       comm->c_coll->coll_allreduce_module);
    /* somebody cannot take part: each writes its own bytes */
    bool alone = OMPI_SUCCESS != mrc || !agreed;
    if (!alone) {
        rc = pcache_send_and_write(fh, lo, dsize, pieces, npieces, per, rper, cnt, sbuf,
                                   rbuf, mine);
    }
    free(pieces);
    free(per);
    free(rper);
    free(cnt);
    free(sbuf);
    free(rbuf);
    free(mine);
    if (alone) {
        return mca_common_sfio_pcache_write_back_held(fh->fd, pc);
    }
    pc->flushes++;
    pc->bytes_flushed += pc->cached_bytes;
    return rc;
}

/* The alltoallv of the packed pieces and the write of this rank's domain
 * (buffers sized by the caller from the per-domain counts). */
static int pcache_send_and_write(ompio_file_t *fh, uint64_t lo, uint64_t dsize,
                                 const mca_common_sfio_ioseg_t *pieces, size_t npieces,
                                 const uint64_t *per, const uint64_t *rper, int *cnt, char *sbuf,
                                 char *rbuf, mca_common_sfio_ioseg_t *mine)
{
    ompi_communicator_t *comm = fh->f_comm;
    int n = fh->f_size, rc = 0, mrc;
    int *scount = cnt, *sdispl = cnt + n, *rcount = cnt + 2 * n, *rdispl = cnt + 3 * n;
    int so = 0, ro = 0;
    for (int r = 0; r < n; ++r) {
        scount[r] = (int) (16 * per[2 * r] + per[2 * r + 1]);
        sdispl[r] = so;
        so += scount[r];
        rcount[r] = (int) (16 * rper[2 * r] + rper[2 * r + 1]);
        rdispl[r] = ro;
        ro += rcount[r];
    }
    pcache_pack(pieces, npieces, lo, dsize, n, per, sbuf, sdispl);
    mrc = comm->c_coll->coll_alltoallv(sbuf, scount, sdispl, MPI_BYTE, rbuf, rcount, rdispl,
                                       MPI_BYTE, comm, comm->c_coll->coll_alltoallv_module);
    if (OMPI_SUCCESS != mrc) {
        rc = -EIO;
    } else {
        size_t m = 0;
        for (int r = 0; r < n; ++r) {
            const char *hdr = rbuf + rdispl[r];
            char *data = rbuf + rdispl[r] + 16 * rper[2 * r];
            for (uint64_t k = 0; k < rper[2 * r]; ++k) {
                uint64_t pair[2];
                memcpy(pair, hdr + 16 * k, sizeof(pair));
                mine[m++] = (mca_common_sfio_ioseg_t) {
                    .offset = pair[0], .length = pair[1], .buf = data,
                };
                data += pair[1];
            }
        }
        /* private bytes: no two ranks cached the same byte */
        qsort(mine, m, sizeof(*mine), by_offset);
        uint64_t written = 0;
        rc = mca_common_sfio_posix_write_segs(fh->fd, mine, m, &written);
    }
    return rc;
}

int mca_common_sfio_pcache_flush(ompio_file_t *fh, mca_common_sfio_pcache_t *pc)
{
    if (NULL == pc) {
        return MPI_SUCCESS;
    }
    if (!fh->f_atomicity) {
        int rc = mca_common_sfio_pcache_write_back(fh->fd, pc);
        return 0 == rc ? MPI_SUCCESS : mca_common_sfio_errno_to_mpi(-rc);
    }
    ompi_communicator_t *comm = fh->f_comm;
    pthread_mutex_lock(&pc->lock);
    /* one allreduce (max) finds the group's span: the lowest start as the
     * largest complement */
    uint64_t lo, hi, span[2];
    mca_common_sfio_pcache_span(pc, &lo, &hi);
    span[0] = pc->count ? ~lo : 0;
    span[1] = pc->count ? hi : 0;
    int rc = 0;
    int mrc = comm->c_coll->coll_allreduce(MPI_IN_PLACE, span, 2, MPI_UINT64_T, MPI_MAX, comm,
                                           comm->c_coll->coll_allreduce_module);
    if (OMPI_SUCCESS != mrc) {
        pthread_mutex_unlock(&pc->lock);
        return mrc;
    }
    if (0 != span[1]) {
        uint64_t bytes = pc->cached_bytes;
        rc = pcache_exchange(fh, pc, ~span[0], span[1]);
        mca_common_sfio_pcache_clear(pc);
        /* one verdict: the lowest (most negative) errno */
        mrc = comm->c_coll->coll_allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, comm,
                                           comm->c_coll->coll_allreduce_module);
        if (OMPI_SUCCESS != mrc && 0 == rc) {
            rc = -EIO;
        }
        opal_output_verbose(10, mca_common_sfio_output,
                            "sfio: private cache of %s: %" PRIu64 " B written by domains "
                            "(%" PRIu64 " flushes, %" PRIu64 " B in all)",
                            fh->f_filename ? fh->f_filename : "", bytes, pc->flushes,
                            pc->bytes_flushed);
    }
    pthread_mutex_unlock(&pc->lock);
    if (0 != rc) {
        mca_common_sfio_show_help("io-error", true, "fbtl/versioned",
                                  "write the cached private bytes into",
                                  fh->f_filename ? fh->f_filename : "", strerror(-rc));
        return mca_common_sfio_errno_to_mpi(-rc);
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* File-system operations                                             */
/* ------------------------------------------------------------------ */

/* True when every rank of comm runs on this node (the same on all ranks:
 * locality flags are symmetric). */
static bool single_node(ompi_communicator_t *comm)
{
    for (int i = 0; i < ompi_comm_size(comm); ++i) {
        ompi_proc_t *p = ompi_comm_peer_lookup(comm, i);
        if (NULL == p || !OPAL_PROC_ON_LOCAL_NODE(p->super.proc_flags)) {
            return false;
        }
    }
    return true;
}

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

int mca_common_sfio_fs_open(struct ompi_communicator_t *comm, const char *filename, int amode,
                            struct opal_info_t *info, ompio_file_t *fh,
                            const mca_common_sfio_fs_options_t *options)
{
    int perm = mca_fs_base_get_file_perm(fh);
    int err = MPI_SUCCESS;
    (void) info;

    /* The root creates first and recovers what a crashed job left (so no
     * rank reads before); the others open what it created. */
    fh->fd = -1;
    if (OMPIO_ROOT == fh->f_rank) {
        bool created = false;
        fh->fd = root_open(filename, open_flags(amode, OMPIO_ROOT), perm, &created);
        if (fh->fd < 0) {
            err = mca_common_sfio_errno_to_mpi(-fh->fd);
        } else {
            err = recover_stores(filename, fh->fd, options->store_dir, created);
            if (MPI_SUCCESS != err) {
                close(fh->fd);
                fh->fd = -1;
            }
        }
    }
    int rc = comm->c_coll->coll_bcast(&err, 1, MPI_INT, OMPIO_ROOT, comm,
                                      comm->c_coll->coll_bcast_module);
    if (OMPI_SUCCESS != rc) {
        err = rc;
    }
    if (MPI_SUCCESS == err && OMPIO_ROOT != fh->f_rank) {
        fh->fd = open(filename, open_flags(amode, fh->f_rank), perm);
        if (fh->fd < 0) {
            err = mca_common_sfio_errno_to_mpi(errno);
        }
    }
    /* Every rank returns the same answer: a failure anywhere fails all. */
    int global = err;
    rc = comm->c_coll->coll_allreduce(&err, &global, 1, MPI_INT, MPI_MAX, comm,
                                      comm->c_coll->coll_allreduce_module);
    if (OMPI_SUCCESS != rc) {
        global = rc;
    }
    if (MPI_SUCCESS != global) {
        if (fh->fd >= 0) {
            close(fh->fd);
            fh->fd = -1;
        }
        opal_output_verbose(1, mca_common_sfio_output, "sfio: open of %s failed (MPI error %d)",
                            filename, global);
        return global;
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

    /* The versioned store serves atomic mode of writable files. */
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (NULL == f && NULL == (f = file_new(fh, true))) {
        close(fh->fd);
        fh->fd = -1;
        return MPI_ERR_NO_MEM;
    }
    f->store_errno = EROFS;
    if (!(amode & MPI_MODE_RDONLY) && options->versioned_store && !single_node(comm)) {
        /* The store coordinates through shared memory of one node. */
        f->store_errno = EXDEV;
        opal_output_verbose(1, mca_common_sfio_output,
                            "sfio: no versioned store for %s: its ranks span several nodes",
                            filename);
    } else if (!(amode & MPI_MODE_RDONLY) && options->versioned_store) {
        mca_common_sfio_coll_t coll = coll_of(fh);
        coll.ctx = comm;
        const char *warn = NULL;
        int rc = mca_common_sfio_vstore_open(fh->f_fullfilename ? fh->f_fullfilename : filename,
                                             options->store_dir, fh->fd, &coll, &f->store, &warn);
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
        if (0 != rc) {
            f->store = NULL;
            f->store_errno = -rc;
            opal_output_verbose(1, mca_common_sfio_output,
                                "sfio: no versioned store for %s: %s", filename, strerror(-rc));
        } else {
            mca_common_sfio_vstore_set_journal_private(f->store, options->journal_private);
            mca_common_sfio_vstore_set_fold_policy(f->store, &options->fold);
            opal_output_verbose(10, mca_common_sfio_output, "sfio: versioned store %s",
                                mca_common_sfio_vstore_dir(f->store));
        }
    } else if (!options->versioned_store) {
        f->store_errno = ENOTSUP;
    }
    f->private_objects = options->private_objects;
    f->objects_max_ranges = options->objects_max_ranges;
    hooks_install_at_open(f);
    int trc = ompio_track(fh);
    if (OMPI_SUCCESS != trc) {
        opal_output_verbose(1, mca_common_sfio_output, "sfio: cannot track %s: error %d",
                            filename, trc);
    }
    return MPI_SUCCESS;
}

static void report_stats(ompio_file_t *fh, mca_common_sfio_vstore_t *store)
{
    mca_common_sfio_vstore_stats_t st;
    mca_common_sfio_vstore_stats(store, &st);
    opal_output_verbose(1, mca_common_sfio_output,
                        "sfio: rank %d %s: in place %" PRIu64 " B (fresh %" PRIu64 " B), versioned %" PRIu64
                        " B (deferred private %" PRIu64 " B) in %" PRIu64 " versions, overlaid reads %" PRIu64 " B, folded %" PRIu64
                        " B (%" PRIu64 " B from memory) in %" PRIu64 " folds (%" PRIu64 " by owner), waits %" PRIu64
                        ", skipped dead versions %" PRIu64 ", fold windows split (another open) %" PRIu64,
                        fh->f_rank, fh->f_filename ? fh->f_filename : "", st.bytes_in_place,
                        st.bytes_fresh, st.bytes_versioned, st.bytes_deferred, st.versions, st.bytes_overlaid,
                        st.bytes_folded, st.bytes_fold_cached, st.folds, st.folds_by_owner,
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
        if (NULL != f->store) {
            int rc = mca_common_sfio_vstore_fold(f->store, false, true);
            report_stats(fh, f->store);
            if (0 == rc) {
                rc = mca_common_sfio_vstore_close(f->store);
            } else {
                (void) mca_common_sfio_vstore_close(f->store);
            }
            f->store = NULL;
            if (0 != rc) {
                mca_common_sfio_show_help("io-error", true, "fs/versioned", "fold the versions into",
                                          fh->f_filename ? fh->f_filename : "", strerror(-rc));
                err = mca_common_sfio_errno_to_mpi(-rc);
            }
        }
        /* OMPIO unselects fcoll and sharedfp after fs close. */
        hooks_remove_at_close(f);
        ompio_untrack(fh);
        file_free(f);
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

int mca_common_sfio_fs_set_size(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE size)
{
    int err = MPI_SUCCESS;
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (NULL != f) {
        /* cached bytes beyond the new size must not land after it */
        int rc = mca_common_sfio_pcache_flush(fh, &f->pcache);
        if (MPI_SUCCESS != rc) {
            return rc;
        }
    }
    /* Versions beyond the new size must not resurface after truncation. */
    if (NULL != f && NULL != f->store) {
        int rc = mca_common_sfio_vstore_fold(f->store, false, false);
        if (0 != rc) {
            return mca_common_sfio_errno_to_mpi(-rc);
        }
    }
    if (OMPIO_ROOT == fh->f_rank) {
        while (0 != ftruncate(fh->fd, (off_t) size)) {
            if (EINTR != errno) {
                err = mca_common_sfio_errno_to_mpi(errno);
                break;
            }
        }
    }
    int rc = fh->f_comm->c_coll->coll_bcast(&err, 1, MPI_INT, OMPIO_ROOT, fh->f_comm,
                                            fh->f_comm->c_coll->coll_bcast_module);
    if (NULL != f && NULL != f->store) {
        mca_common_sfio_vstore_resized(f->store);   /* root's ftruncate is done */
    }
    return OMPI_SUCCESS != rc ? rc : err;
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
    if (0 != fstat(fh->fd, &st)) {
        return mca_common_sfio_errno_to_mpi(errno);
    }
    *size = (OMPI_MPI_OFFSET_TYPE) st.st_size;
    return MPI_SUCCESS;
}

int mca_common_sfio_request_wait_free(ompi_request_t **req, ompi_status_public_t *status)
{
    int rc = ompi_request_wait(req, status);
    if (MPI_REQUEST_NULL != *req) {
        (void) ompi_request_free(req);
    }
    return rc;
}

/* The file's unreported write error (0: none), cleared. */
static int take_unreported(ompio_file_t *fh)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    int err = NULL != f ? f->unreported_err : 0;
    if (NULL != f) {
        f->unreported_err = 0;
    }
    return err;
}

/* A blocking fbtl call failed with -errno e: kept for sync and close
 * (over a stock fs, the fs proxy reports it at sync). */
static void note_unreported(ompio_file_t *fh, int e)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (NULL != f && 0 == f->unreported_err) {
        f->unreported_err = mca_common_sfio_errno_to_mpi(e);
    }
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
    if (NULL != f && NULL != f->store) {
        int frc = mca_common_sfio_vstore_fold(f->store, true, true);   /* OMPIO barriered */
        rc = 0 == frc ? MPI_SUCCESS : mca_common_sfio_errno_to_mpi(-frc);
    } else if (0 != fsync(fh->fd)) {
        rc = mca_common_sfio_errno_to_mpi(errno);
    }
    /* An earlier independent write's error, which io/ompio dropped (kept
     * when this sync fails itself: the error it returns is its own). */
    if (MPI_SUCCESS == rc) {
        int lost = take_unreported(fh);
        rc = 0 != lost ? lost : rc;
    }
    return rc;
}

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

const mca_common_sfio_atomic_mode_info_t mca_common_sfio_atomic_modes[] = {
    { MCA_COMMON_SFIO_ATOMIC_AUTO, "auto",
      "versioned when fs/versioned has a store for the file, else listlock" },
    { MCA_COMMON_SFIO_ATOMIC_VERSIONED, "versioned",
      "shadow writes and ordered versions, lock-free (needs fs/versioned)" },
    { MCA_COMMON_SFIO_ATOMIC_LISTLOCK, "listlock",
      "lock exactly the shared bytes of each access, ascending (list locks, Aarestad, "
      "Ching et al.)" },
    { MCA_COMMON_SFIO_ATOMIC_RANGELOCK, "rangelock",
      "one lock from the first to the last byte of each access (ROMIO's way)" },
    { MCA_COMMON_SFIO_ATOMIC_FILELOCK, "filelock", "lock the whole file for each access" },
};
const int mca_common_sfio_atomic_mode_count =
    (int) (sizeof(mca_common_sfio_atomic_modes) / sizeof(mca_common_sfio_atomic_modes[0]));

int mca_common_sfio_atomic_mode_register(const mca_base_component_t *c, int *storage)
{
    static mca_base_var_enum_value_t values[8];
    static char help[1024];
    size_t used = 0;

    used += (size_t) snprintf(help, sizeof(help),
                              "How MPI_File_set_atomicity(fh, 1) is provided:");
    for (int i = 0; i < mca_common_sfio_atomic_mode_count; ++i) {
        values[i].value = (int) mca_common_sfio_atomic_modes[i].id;
        values[i].string = mca_common_sfio_atomic_modes[i].name;
        if (used < sizeof(help)) {
            used += (size_t) snprintf(help + used, sizeof(help) - used, " %s: %s;",
                                      mca_common_sfio_atomic_modes[i].name,
                                      mca_common_sfio_atomic_modes[i].help);
        }
    }
    values[mca_common_sfio_atomic_mode_count].string = NULL;
    return mca_common_sfio_component_register_enum(c, "atomic_mode", "sfio_atomic_mode", values,
                                                   MCA_COMMON_SFIO_ATOMIC_AUTO, help,
                                                   OPAL_INFO_LVL_9, storage);
}

static const char *mode_name(mca_common_sfio_atomic_mode_t m)
{
    for (int i = 0; i < mca_common_sfio_atomic_mode_count; ++i) {
        if (mca_common_sfio_atomic_modes[i].id == m) {
            return mca_common_sfio_atomic_modes[i].name;
        }
    }
    return "?";
}

/* Per-process scratch buffer for sieved blocking reads (OMPIO serialises
 * calls on one file under its own lock; blocking reads of several threads
 * are not supported by OMPIO 4.1 either). */
static mca_common_sfio_scratch_t blocking_scratch;

/* The lock mode of each atomic mode that locks. */
static const struct {
    mca_common_sfio_atomic_mode_t mode;
    mca_common_sfio_lockmode_t lockmode;
} lock_of_mode[] = {
    { MCA_COMMON_SFIO_ATOMIC_LISTLOCK, MCA_COMMON_SFIO_LOCK_LIST },
    { MCA_COMMON_SFIO_ATOMIC_RANGELOCK, MCA_COMMON_SFIO_LOCK_RANGE },
    { MCA_COMMON_SFIO_ATOMIC_FILELOCK, MCA_COMMON_SFIO_LOCK_FILE },
};

static void route_locked(mca_common_sfio_path_t *path_p, mca_common_sfio_lockmode_t lockmode)
{
    path_p->ops = &mca_common_sfio_path_locked;
    path_p->store = NULL;   /* lock modes write in place: no versions are ever made */
    path_p->lockmode = lockmode;
}

/* The path of fh's accesses in mode, from what the file's state says now:
 * atomicity, the store (and whether this rank attached it), the private
 * objects of the current views.  In atomic mode without a usable path says
 * why once and returns -ENOTSUP. */
static int route_path(ompio_file_t *fh, mca_common_sfio_atomic_mode_t mode,
                      mca_common_sfio_path_t *path_p)
{
    static bool told_fallback = false;
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    mca_common_sfio_vstore_t *store = (NULL != f) ? f->store : NULL;
#define WHY_NO_STORE ((NULL == f || !f->served_by_fs) ? "the file is not served by fs/versioned" \
                                                     : strerror(f->store_errno))

    *path_p = (mca_common_sfio_path_t) { .ops = &mca_common_sfio_path_posix };
    if (!fh->f_atomicity) {
        /* an attached store still overlays unfolded versions; without a
         * version of this rank there is nothing to order after */
        if (NULL != store && mca_common_sfio_vstore_attached(store)) {
            path_p->ops = &mca_common_sfio_path_store;
            path_p->store = store;
        }
        return 0;
    }
    /* only atomic accesses split private from shared bytes */
    path_p->objects = mca_common_sfio_file_objects(f);
    if ((fh->f_amode & MPI_MODE_RDONLY) &&
        (MCA_COMMON_SFIO_ATOMIC_AUTO == mode || MCA_COMMON_SFIO_ATOMIC_VERSIONED == mode)) {
        /* Atomicity binds the accesses of the group that opened the file
         * (MPI 4.0, 14.6.1): through a read-only handle nobody writes, so
         * its reads need neither versions nor locks. */
        if (NULL != store) {
            path_p->ops = &mca_common_sfio_path_store;
            path_p->store = store;
        }
        return 0;
    }
    if ((MCA_COMMON_SFIO_ATOMIC_AUTO == mode || MCA_COMMON_SFIO_ATOMIC_VERSIONED == mode) &&
        NULL != store) {
        path_p->ops = &mca_common_sfio_path_versions;
        path_p->store = store;
        return 0;
    }
    if (MCA_COMMON_SFIO_ATOMIC_AUTO == mode) {
        if (!told_fallback) {
            told_fallback = true;
            opal_output_verbose(1, mca_common_sfio_output,
                                "sfio: atomic mode of %s uses listlock, not versioned: %s",
                                fh->f_filename ? fh->f_filename : "", WHY_NO_STORE);
        }
        route_locked(path_p, MCA_COMMON_SFIO_LOCK_LIST);
        return 0;
    }
    if (MCA_COMMON_SFIO_ATOMIC_VERSIONED == mode) {
        if (NULL == f || !f->warned_no_atomic) {
            mca_common_sfio_show_help("atomic-unavailable", true,
                                      fh->f_filename ? fh->f_filename : "", WHY_NO_STORE);
            if (NULL != f) {
                f->warned_no_atomic = true;
            }
        }
        return -ENOTSUP;
    }
    for (size_t i = 0; i < sizeof(lock_of_mode) / sizeof(lock_of_mode[0]); ++i) {
        if (lock_of_mode[i].mode == mode) {
            route_locked(path_p, lock_of_mode[i].lockmode);
            return 0;
        }
    }
    return -EINVAL;
#undef WHY_NO_STORE
}

/* Chooses how fh's current access reaches the file.  In atomic mode
 * without a usable path says why once and returns an error.  List locks
 * with known objects keep private bytes in the file's cache; any other
 * path first writes back what the cache holds, so that no older cached
 * copy lands over what it writes, and it reads what the cache held. */
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
        int rc = route_path(fh, mode, path_p);
        if (0 != rc) {
            return rc;
        }
        if (NULL != f) {
            f->route.valid = true;
            f->route.atomicity = 0 != fh->f_atomicity;
            f->route.mode = (int) mode;
            f->route.set_views = f->set_views;
            f->route.attached = attached;
            f->route.path = *path_p;
        }
    }
    int rc = 0;
    if (&mca_common_sfio_path_locked == path_p->ops &&
        MCA_COMMON_SFIO_LOCK_LIST == path_p->lockmode && NULL != path_p->objects &&
        mca_common_sfio_pcache_limit > 0) {
        path_p->pcache = pc;
    } else if (NULL != pc && pc->count > 0) {
        rc = mca_common_sfio_pcache_write_back(fh->fd, pc);
    }
    return rc;
}

/* Whether fh can be made atomic in mode (see sfio_ompio.h).  The answer
 * must be the same on every rank: the store exists on all ranks or on none
 * (fs open agrees on it), and the fcntl probe asks the shared file system. */
bool mca_common_sfio_fbtl_check_atomicity(ompio_file_t *fh, mca_common_sfio_atomic_mode_t mode)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    bool have_store = NULL != f && NULL != f->store;

    if ((fh->f_amode & MPI_MODE_RDONLY) &&
        (MCA_COMMON_SFIO_ATOMIC_AUTO == mode || MCA_COMMON_SFIO_ATOMIC_VERSIONED == mode)) {
        return true;   /* nobody writes through the group's handles: see route() */
    }
    if (MCA_COMMON_SFIO_ATOMIC_VERSIONED == mode ||
        (MCA_COMMON_SFIO_ATOMIC_AUTO == mode && have_store)) {
        if (!have_store && (NULL == f || !f->warned_no_atomic)) {
            mca_common_sfio_show_help("atomic-unavailable", true,
                                      fh->f_filename ? fh->f_filename : "",
                                      NULL == f || !f->served_by_fs
                                          ? "the file is not served by fs/versioned"
                                          : strerror(f->store_errno));
            if (NULL != f) {
                f->warned_no_atomic = true;
            }
        }
        return have_store;
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
    for (size_t i = 0; i < sizeof(lock_of_mode) / sizeof(lock_of_mode[0]); ++i) {
        if (&mca_common_sfio_path_locked == p->ops && lock_of_mode[i].lockmode == p->lockmode) {
            via = mode_name(lock_of_mode[i].mode);
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
        note_unreported(fh, -rrc);   /* io/ompio drops this call's error */
        return OMPI_ERROR;
    }
    trace(fh, "write", segs, nsegs, &path);
    int rc = path.ops->write(fh->fd, &path, segs, nsegs, &written);
    free(segs);
    if (rc < 0) {
        opal_output_verbose(1, mca_common_sfio_output, "sfio: write failed: %s", strerror(-rc));
        note_unreported(fh, -rc);
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

/* ------------------------------------------------------------------ */
/* Atomic-call boundary: the cycle-size wrapper                       */
/* ------------------------------------------------------------------ */

/* Files of this process whose parameter callback is wrapped. */
static struct {
    ompio_file_t **files;
    int count, capacity;
    mca_common_ompio_get_mca_parameter_value_fn_t ompio_get;
} tracked;

static bool any_tracked_atomic(void)
{
    for (int i = 0; i < tracked.count; ++i) {
        if (tracked.files[i]->f_atomicity) {
            return true;
        }
    }
    return false;
}

static int sfio_get_mca_parameter_value(char *name, int name_length)
{
    if (0 == strncmp(name, "cycle_buffer_size", (size_t) name_length) && any_tracked_atomic()) {
        return SFIO_OMPIO_CYCLE_ONE_CALL;   /* one fbtl call per MPI call, both series */
    }
    return tracked.ompio_get(name, name_length);
}

static int ompio_track(ompio_file_t *fh)
{
    if (sfio_get_mca_parameter_value == fh->f_get_mca_parameter_value) {
        return OMPI_SUCCESS;
    }
    if (tracked.count == tracked.capacity) {
        int cap = tracked.capacity ? 2 * tracked.capacity : 16;
        ompio_file_t **files = realloc(tracked.files, (size_t) cap * sizeof(*files));
        if (NULL == files) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        tracked.files = files;
        tracked.capacity = cap;
    }
    if (NULL == tracked.ompio_get) {
        tracked.ompio_get = fh->f_get_mca_parameter_value;
    }
    tracked.files[tracked.count++] = fh;
    fh->f_get_mca_parameter_value = sfio_get_mca_parameter_value;
    return OMPI_SUCCESS;
}

static void ompio_untrack(ompio_file_t *fh)
{
    for (int i = 0; i < tracked.count; ++i) {
        if (fh == tracked.files[i]) {
            tracked.files[i] = tracked.files[--tracked.count];
            fh->f_get_mca_parameter_value = tracked.ompio_get;
            break;
        }
    }
    if (0 == tracked.count) {
        free(tracked.files);
        tracked.files = NULL;
        tracked.capacity = 0;
    }
}

/* ------------------------------------------------------------------ */
/* The collective point after every set_view (see sfio_ompio.h)        */
/* ------------------------------------------------------------------ */

/* Logan and Dickens' objects: gathers every rank's view and derives which bytes only one
 * rank can access.  Every rank calls it with the same agreed `ok` (else
 * nobody gathers).  On failure the objects stay invalid: all shared. */
static int compute_objects(ompio_file_t *fh, mca_common_sfio_objects_t *objects,
                           size_t max_ranges, uint64_t *myblocks, int mine)
{
    ompi_communicator_t *comm = fh->f_comm;
    int n = fh->f_size, rc;
    uint64_t mymeta[3] = { (uint64_t) mine, (uint64_t) fh->f_disp, (uint64_t) fh->f_view_extent };
    uint64_t *meta = malloc((size_t) n * 3 * sizeof(uint64_t));
    int *counts = malloc((size_t) n * sizeof(int)), *displs = malloc((size_t) n * sizeof(int));
    uint64_t *blocks = NULL;
    mca_common_sfio_view_t *views = NULL;

    mca_common_sfio_objects_destroy(objects);
    mca_common_sfio_objects_init(objects);
    /* allocation of meta was agreed on by the caller's allreduce */
    rc = comm->c_coll->coll_allgather(mymeta, 3, MPI_UINT64_T, meta, 3, MPI_UINT64_T, comm,
                                      comm->c_coll->coll_allgather_module);
    size_t total = 0;
    for (int r = 0; OMPI_SUCCESS == rc && r < n; ++r) {
        counts[r] = (int) meta[3 * r];
        displs[r] = (int) total;
        total += (size_t) counts[r];
    }
    if (OMPI_SUCCESS == rc && total > (size_t) INT32_MAX) {
        rc = OMPI_ERR_NOT_SUPPORTED;   /* same verdict everywhere: same totals */
    }
    if (OMPI_SUCCESS == rc) {
        blocks = malloc((total ? total : 1) * sizeof(uint64_t));
        views = malloc((size_t) n * sizeof(*views));
        /* allgatherv must be entered by all; a local allocation failure
         * only spoils this rank's result (objects stay invalid here, which
         * is safe: this rank then versions everything it writes) */
        rc = comm->c_coll->coll_allgatherv(myblocks, mine, MPI_UINT64_T,
                                           blocks ? blocks : myblocks, counts, displs,
                                           MPI_UINT64_T, comm,
                                           comm->c_coll->coll_allgatherv_module);
        if (OMPI_SUCCESS == rc && (!blocks || !views)) {
            rc = OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    if (OMPI_SUCCESS == rc) {
        for (int r = 0; r < n; ++r) {
            views[r] = (mca_common_sfio_view_t) {
                .disp = meta[3 * r + 1], .extent = meta[3 * r + 2],
                .blocks = (const mca_common_sfio_range_t *) (blocks + displs[r]),
                .nblocks = (size_t) counts[r] / 2,
            };
        }
        /* Pure and deterministic: every rank derives the same objects, at
         * the first access that needs them (objects_resolve), so that a
         * file never written in atomic mode pays only this allgather. */
        mca_common_sfio_objects_defer(objects, views, (size_t) n, blocks, max_ranges);
        views = NULL;
        blocks = NULL;
    }
    free(counts);
    free(displs);
    free(meta);
    free(blocks);
    free(views);
    return rc;
}

/* The objects, computed now if set_view deferred them; NULL when unknown
 * (every byte shared).  Called under OMPIO's per-file serialisation. */
static const mca_common_sfio_objects_t *resolved_objects(mca_common_sfio_objects_t *objects)
{
    int orc = mca_common_sfio_objects_resolve(objects);
    if (0 != orc) {
        opal_output_verbose(1, mca_common_sfio_output,
                            "sfio: views too complex to intersect (%s): every byte is shared",
                            strerror(-orc));
    }
    return objects->valid ? objects : NULL;
}

/* A collective atomic access runs as one independent access per rank,
 * whose failure io/ompio would drop (and a short count on one rank only
 * would leave the others believing all went well): every rank returns
 * the worst outcome of the group. */
static int agree_collective(ompio_file_t *fh, int rc)
{
    /* the fbtl's own class (no space, ...) first: a failed call says only
     * OMPI_ERROR (negative, which MAX would lose) or MPI_ERR_OTHER */
    int err = take_unreported(fh);
    if (0 == err && MPI_SUCCESS != rc) {
        err = rc > 0 && rc <= MPI_ERR_LASTCODE ? rc : MPI_ERR_IO;
    }
    int all = err;
    int crc = fh->f_comm->c_coll->coll_allreduce(&err, &all, 1, MPI_INT, MPI_MAX, fh->f_comm,
                                                 fh->f_comm->c_coll->coll_allreduce_module);
    return OMPI_SUCCESS != crc ? crc : all;
}

static int atomic_write_all(ompio_file_t *fh, const void *buf, int count,
                            struct ompi_datatype_t *datatype, ompi_status_public_t *status)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    /* Stock fcoll components do not check: every rank must refuse alike. */
    if (fh->f_amode & MPI_MODE_RDONLY) {
        return MPI_ERR_READ_ONLY;
    }
    if (fh->f_atomicity || NULL == f || NULL == f->fcoll_real) {
        /* One atomic write per rank: versions (or locks) order the group. */
        return agree_collective(fh, mca_common_ompio_file_write(fh, buf, count, datatype, status));
    }
    return f->fcoll_real->fcoll_file_write_all(fh, buf, count, datatype, status);
}

static int atomic_read_all(ompio_file_t *fh, void *buf, int count,
                           struct ompi_datatype_t *datatype, ompi_status_public_t *status)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (fh->f_atomicity || NULL == f || NULL == f->fcoll_real) {
        /* Aggregators would read a rank's data in several snapshots. */
        return agree_collective(fh, mca_common_ompio_file_read(fh, buf, count, datatype, status));
    }
    return f->fcoll_real->fcoll_file_read_all(fh, buf, count, datatype, status);
}

static int atomic_iwrite_all(ompio_file_t *fh, const void *buf, int count,
                             struct ompi_datatype_t *datatype, ompi_request_t **request)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (fh->f_amode & MPI_MODE_RDONLY) {
        return MPI_ERR_READ_ONLY;
    }
    if (fh->f_atomicity || NULL == f || NULL == f->fcoll_real ||
        NULL == f->fcoll_real->fcoll_file_iwrite_all) {
        return mca_common_ompio_file_iwrite(fh, buf, count, datatype, request);
    }
    return f->fcoll_real->fcoll_file_iwrite_all(fh, buf, count, datatype, request);
}

static int atomic_iread_all(ompio_file_t *fh, void *buf, int count,
                            struct ompi_datatype_t *datatype, ompi_request_t **request)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (fh->f_atomicity || NULL == f || NULL == f->fcoll_real ||
        NULL == f->fcoll_real->fcoll_file_iread_all) {
        return mca_common_ompio_file_iread(fh, buf, count, datatype, request);
    }
    return f->fcoll_real->fcoll_file_iread_all(fh, buf, count, datatype, request);
}

static void wrap_fcoll(ompio_file_t *fh, mca_common_sfio_file_t *f)
{
    if (NULL == fh->f_fcoll || fh->f_fcoll == &f->fcoll_proxy) {
        return;
    }
    f->fcoll_real = fh->f_fcoll;
    f->fcoll_proxy = *fh->f_fcoll;
    f->fcoll_proxy.fcoll_file_write_all = atomic_write_all;
    f->fcoll_proxy.fcoll_file_read_all = atomic_read_all;
    f->fcoll_proxy.fcoll_file_iwrite_all = atomic_iwrite_all;
    f->fcoll_proxy.fcoll_file_iread_all = atomic_iread_all;
    fh->f_fcoll = &f->fcoll_proxy;
}

/* Runs at the end of every set_view (and MPI_File_seek_shared), on every
 * rank: put the fcoll proxy in front of the fcoll OMPIO just selected and,
 * with a versioned store, fold the versions written under the old views
 * and derive the new views' private bytes.  Then does the seek it stands
 * in for. */
static int collective_point_seek(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE offset, int whence)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (NULL == f || NULL == f->sharedfp_real) {
        return MPI_ERR_INTERN;
    }
    wrap_fcoll(fh, f);
    mca_common_sfio_vstore_t *store = f->store;
    /* private objects (Logan and Dickens): for the versioned store, or over a stock fs for
     * fbtl/versioned's list locks */
    bool want_objects = f->private_objects;
    mca_common_sfio_objects_t *objects = &f->objects;
    size_t max_ranges = f->objects_max_ranges;
    /* The first point is OMPIO's default view inside MPI_File_open: every
     * rank has the same view (all bytes shared) and nothing is written.
     * The test is the same on every rank. */
    uint64_t nth = f->set_views++;
    if (nth > 0) {
        /* cached bytes were private under the views that end here */
        int prc = mca_common_sfio_pcache_flush(fh, &f->pcache);
        if (MPI_SUCCESS != prc) {
            return prc;
        }
    }
    if ((NULL != store || want_objects) && nth > 0) {
        ompi_communicator_t *comm = fh->f_comm;
        int mine = want_objects ? (int) fh->f_iov_count * 2 : 0;
        uint64_t *myblocks = malloc((size_t) (mine ? mine : 1) * sizeof(uint64_t));
        for (int i = 0; myblocks && i < mine / 2; ++i) {
            myblocks[2 * i] = (uint64_t) (intptr_t) fh->f_decoded_iov[i].iov_base;
            myblocks[2 * i + 1] = fh->f_decoded_iov[i].iov_len;
        }
        /* One allreduce: is there anything to fold (each rank knows its own
         * published versions), and can everyone gather the views?  It is
         * also the barrier the fold needs. */
        mca_common_sfio_vstore_stats_t st = { 0 };
        if (NULL != store) {
            mca_common_sfio_vstore_stats(store, &st);
        }
        int flags[2] = { NULL != store && st.versions > f->versions_at_fold, NULL == myblocks };
        int rc = comm->c_coll->coll_allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, comm,
                                              comm->c_coll->coll_allreduce_module);
        if (OMPI_SUCCESS == rc && flags[0]) {
            int frc = mca_common_sfio_vstore_fold(store, false, true);
            if (0 != frc) {
                rc = mca_common_sfio_errno_to_mpi(-frc);
            }
            f->versions_at_fold = st.versions;
        }
        if (OMPI_SUCCESS == rc && want_objects && !flags[1]) {
            if (OMPI_SUCCESS != compute_objects(fh, objects, max_ranges, myblocks, mine)) {
                mca_common_sfio_objects_destroy(objects);
                mca_common_sfio_objects_init(objects);
            }
        }
        free(myblocks);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
    return f->sharedfp_real->sharedfp_seek(fh, offset, whence);
}

static void hooks_install_at_open(mca_common_sfio_file_t *f)
{
    ompio_file_t *fh = f->fh;
    if (NULL == fh->f_sharedfp) {
        opal_output_verbose(1, mca_common_sfio_output,
                            "sfio: %s has no shared-file-pointer module: set_view is not seen, so "
                            "every byte counts as shared and collective atomic accesses go "
                            "through the stock fcoll", fh->f_filename ? fh->f_filename : "");
        return;
    }
    if (fh->f_sharedfp != &f->sharedfp_proxy) {
        f->sharedfp_real = fh->f_sharedfp;
        f->sharedfp_proxy = *fh->f_sharedfp;
        f->sharedfp_proxy.sharedfp_seek = collective_point_seek;
        fh->f_sharedfp = &f->sharedfp_proxy;
    }
}

static void hooks_remove_at_close(mca_common_sfio_file_t *f)
{
    ompio_file_t *fh = f->fh;
    if (NULL != f->sharedfp_real && fh->f_sharedfp == &f->sharedfp_proxy) {
        fh->f_sharedfp = f->sharedfp_real;
    }
    if (NULL != f->fcoll_real && fh->f_fcoll == &f->fcoll_proxy) {
        fh->f_fcoll = f->fcoll_real;
    }
    f->sharedfp_real = NULL;
    f->fcoll_real = NULL;
}

/* The fs proxy over a stock fs: the state of fh with the real fs module,
 * or NULL. */
static mca_common_sfio_file_t *over_stock_fs(const ompio_file_t *fh)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    return NULL != f && NULL != f->fs_real ? f : NULL;
}

static int hooked_fs_open(struct ompi_communicator_t *comm, const char *filename, int amode,
                          struct opal_info_t *info, ompio_file_t *fh)
{
    mca_common_sfio_file_t *f = over_stock_fs(fh);
    if (NULL == f) {
        return MPI_ERR_INTERN;
    }
    int rc = f->fs_real->fs_file_open(comm, filename, amode, info, fh);
    if (OMPI_SUCCESS == rc) {
        hooks_install_at_open(f);
    }
    return rc;
}

static int hooked_fs_close(ompio_file_t *fh)
{
    mca_common_sfio_file_t *f = over_stock_fs(fh);
    if (NULL == f) {
        return MPI_ERR_INTERN;
    }
    int frc = mca_common_sfio_pcache_flush(fh, &f->pcache);
    mca_fs_base_module_file_close_fn_t real_close = f->fs_real->fs_file_close;
    hooks_remove_at_close(f);
    fh->f_fs = f->fs_real;   /* OMPIO unselects the fs right after */
    int rc = real_close(fh);
    return MPI_SUCCESS != frc ? frc : rc;
}

static int hooked_fs_sync(ompio_file_t *fh)
{
    mca_common_sfio_file_t *f = over_stock_fs(fh);
    if (NULL == f) {
        return MPI_ERR_INTERN;
    }
    int rc = mca_common_sfio_pcache_flush(fh, &f->pcache);
    if (MPI_SUCCESS == rc) {
        rc = f->fs_real->fs_file_sync(fh);
    }
    if (MPI_SUCCESS == rc) {
        int lost = take_unreported(fh);   /* an earlier write's error io/ompio dropped */
        rc = 0 != lost ? lost : rc;
    }
    return rc;
}

static int hooked_fs_set_size(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE size)
{
    mca_common_sfio_file_t *f = over_stock_fs(fh);
    if (NULL == f) {
        return MPI_ERR_INTERN;
    }
    int rc = mca_common_sfio_pcache_flush(fh, &f->pcache);
    return MPI_SUCCESS != rc ? rc : f->fs_real->fs_file_set_size(fh, size);
}

int mca_common_sfio_fs_module_init(ompio_file_t *fh)
{
    return NULL != file_new(fh, true) ? OMPI_SUCCESS : OMPI_ERR_OUT_OF_RESOURCE;
}

void mca_common_sfio_fs_module_finalize(ompio_file_t *fh)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (NULL != f && f->served_by_fs) {   /* an open that failed before fs close */
        hooks_remove_at_close(f);
        ompio_untrack(fh);
        file_free(f);
    }
}

int mca_common_sfio_fbtl_module_init(ompio_file_t *fh)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if ((NULL != f && f->served_by_fs) || NULL == fh->f_fs) {
        return OMPI_SUCCESS;   /* fs/versioned hooks the file itself */
    }
    if (NULL == (f = file_new(fh, false))) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    /* see set_view, sync and close through a copy of the stock fs module
     * whose open installs the other proxies */
    f->fs_real = fh->f_fs;
    f->fs_proxy = *fh->f_fs;
    f->fs_proxy.fs_file_open = hooked_fs_open;
    f->fs_proxy.fs_file_close = hooked_fs_close;
    f->fs_proxy.fs_file_sync = hooked_fs_sync;
    f->fs_proxy.fs_file_set_size = hooked_fs_set_size;
    fh->f_fs = &f->fs_proxy;
    int rc = ompio_track(fh);
    if (OMPI_SUCCESS != rc) {
        file_free(f);
    }
    return rc;
}

void mca_common_sfio_fbtl_module_finalize(ompio_file_t *fh)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (NULL != f && !f->served_by_fs) {
        ompio_untrack(fh);
        file_free(f);
    }
}

const mca_common_sfio_objects_t *mca_common_sfio_file_objects(mca_common_sfio_file_t *f)
{
    return (NULL != f && f->private_objects) ? resolved_objects(&f->objects) : NULL;
}
