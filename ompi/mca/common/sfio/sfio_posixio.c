/*
 * sfio_posixio: POSIX execution of I/O plans (see header).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "sfio_fsmagic.h"
#include "sfio_posixio.h"

/* The planner's memory pieces are handed to preadv/pwritev as iovecs. */
_Static_assert(sizeof(mca_common_sfio_memv_t) == sizeof(struct iovec) &&
               offsetof(mca_common_sfio_memv_t, base) == offsetof(struct iovec, iov_base) &&
               offsetof(mca_common_sfio_memv_t, len) == offsetof(struct iovec, iov_len),
               "mca_common_sfio_memv_t must match struct iovec");

#define SFIO_IOV_BATCH 1024   /* Linux IOV_MAX */

void mca_common_sfio_scratch_fini(mca_common_sfio_scratch_t *scratch)
{
    free(scratch->buf);
    scratch->buf = NULL;
    scratch->size = 0;
}

static int scratch_reserve(mca_common_sfio_scratch_t *scratch, size_t size)
{
    if (scratch->size >= size) {
        return 0;
    }
    char *buf = realloc(scratch->buf, size);
    if (NULL == buf) {
        return -ENOMEM;
    }
    scratch->buf = buf;
    scratch->size = size;
    return 0;
}

/* Drops the first n bytes from the iovec array [*iov, *iov + *niov). */
static void iov_advance(struct iovec **iov, int *niov, size_t n)
{
    while (n > 0 && *niov > 0) {
        if (n >= (*iov)->iov_len) {
            n -= (*iov)->iov_len;
            (*iov)++;
            (*niov)--;
        } else {
            (*iov)->iov_base = (char *) (*iov)->iov_base + n;
            (*iov)->iov_len -= n;
            n = 0;
        }
    }
    while (*niov > 0 && 0 == (*iov)->iov_len) {
        (*iov)++;
        (*niov)--;
    }
}

/* Transfers a whole file-contiguous batch.  For reads, stops at end of
 * file.  Returns bytes moved or a negative errno. */
static ssize_t batch_transfer(int fd, bool is_write, struct iovec *iov, int niov, uint64_t offset)
{
    ssize_t done = 0;
    while (niov > 0) {
        ssize_t n = is_write ? pwritev(fd, iov, niov, (off_t) (offset + done))
                             : preadv(fd, iov, niov, (off_t) (offset + done));
        if (n < 0) {
            if (EINTR == errno || EAGAIN == errno) {
                continue;
            }
            return -errno;
        }
        if (0 == n) {
            if (is_write) {
                return -EIO;      /* no progress on a write: never spin */
            }
            break;                /* end of file */
        }
        done += n;
        iov_advance(&iov, &niov, (size_t) n);
    }
    return done;
}

ssize_t mca_common_sfio_posix_pwrite_full(int fd, const void *buf, size_t len, uint64_t offset)
{
    struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
    return len ? batch_transfer(fd, true, &iov, 1, offset) : 0;
}

ssize_t mca_common_sfio_posix_pread_full(int fd, void *buf, size_t len, uint64_t offset)
{
    struct iovec iov = { .iov_base = buf, .iov_len = len };
    return len ? batch_transfer(fd, false, &iov, 1, offset) : 0;
}

/* Vectored batches over segments [first, first + count). */
static int segs_transfer(int fd, bool is_write, const mca_common_sfio_ioseg_t *segs,
                         size_t count, uint64_t *done_p)
{
    mca_common_sfio_memv_t iov[SFIO_IOV_BATCH];
    mca_common_sfio_iobatch_t batch;
    size_t pos = 0;
    uint64_t done = 0;

    while (mca_common_sfio_iobatch_next(segs, count, &pos, iov, SFIO_IOV_BATCH, &batch)) {
        ssize_t n = batch_transfer(fd, is_write, (struct iovec *) iov, (int) batch.niov,
                                   batch.offset);
        if (n < 0) {
            *done_p = done;
            return (int) n;
        }
        done += (uint64_t) n;
    }
    *done_p = done;
    return 0;
}

/* ---- pipelined execution: a small pool of helper threads ---------------
 * One call at a time uses the pool (others, e.g. the async worker's, run
 * on their own thread).  The segments are cut into chunks of consecutive
 * indices; the caller and the helpers take chunks until none is left, so a
 * slow chunk does not hold the rest.  Helpers never call MPI. */

unsigned mca_common_sfio_posix_depth = 0;
size_t mca_common_sfio_posix_depth_min_segs = 64;

#define SFIO_DEPTH_MAX 64
#define SFIO_CHUNKS_PER_THREAD 4

typedef struct pipeline_t {
    pthread_mutex_t lock;          /* guards everything below */
    pthread_cond_t  work;          /* a new generation was posted */
    pthread_cond_t  idle;          /* a helper finished its part */
    unsigned        helpers;       /* started so far */
    pthread_t       thread[SFIO_DEPTH_MAX];
    bool            stop;          /* shutdown asked */
    unsigned        wanted;        /* helpers taking part in this generation */
    unsigned        busy;          /* helpers still inside this generation */
    uint64_t        generation;
    /* the current call */
    int             fd;
    bool            is_write;
    const mca_common_sfio_ioseg_t *segs;
    size_t          nsegs, nchunks, next_chunk;
    uint64_t        done;
    int             error;         /* first negative errno, else 0 */
} pipeline_t;

static pipeline_t pipeline = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .work = PTHREAD_COND_INITIALIZER,
    .idle = PTHREAD_COND_INITIALIZER,
};
static pthread_mutex_t pipeline_owner = PTHREAD_MUTEX_INITIALIZER;

static int segs_transfer(int fd, bool is_write, const mca_common_sfio_ioseg_t *segs,
                         size_t count, uint64_t *done_p);

/* Takes and runs chunks of the current call; called with pipeline.lock held,
 * returns with it held. */
static void pipeline_drain(pipeline_t *p)
{
    while (p->next_chunk < p->nchunks && 0 == p->error) {
        size_t c = p->next_chunk++;
        size_t lo = c * p->nsegs / p->nchunks, hi = (c + 1) * p->nsegs / p->nchunks;
        pthread_mutex_unlock(&p->lock);
        uint64_t n = 0;
        int rc = segs_transfer(p->fd, p->is_write, p->segs + lo, hi - lo, &n);
        pthread_mutex_lock(&p->lock);
        p->done += n;
        if (rc < 0 && 0 == p->error) {
            p->error = rc;
        }
    }
}

static void *pipeline_helper(void *arg)
{
    unsigned id = (unsigned) (uintptr_t) arg;
    pipeline_t *p = &pipeline;
    (void) pthread_setname_np(pthread_self(), "sfio-io");
    uint64_t seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stop && (p->generation == seen || id >= p->wanted)) {
            if (p->generation != seen) {
                seen = p->generation;   /* not asked this time */
            }
            pthread_cond_wait(&p->work, &p->lock);
        }
        if (p->stop) {
            break;
        }
        seen = p->generation;
        pipeline_drain(p);
        if (0 == --p->busy) {
            pthread_cond_signal(&p->idle);
        }
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Starts helpers up to n; returns how many exist.  Called with lock held. */
static unsigned pipeline_grow(pipeline_t *p, unsigned n)
{
    while (p->helpers < n) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 256 << 10);
        int rc = pthread_create(&p->thread[p->helpers], &attr, pipeline_helper,
                                (void *) (uintptr_t) p->helpers);
        pthread_attr_destroy(&attr);
        if (0 != rc) {
            break;
        }
        p->helpers++;
    }
    return p->helpers;
}

/* Depth for files on network file systems when the parameter says auto:
 * about what their clients keep in flight (Lustre's max_rpcs_in_flight). */
#define SFIO_DEPTH_NETWORK 8

int mca_common_sfio_posix_storage = MCA_COMMON_SFIO_STORAGE_AUTO;

bool mca_common_sfio_storage_is_network(int storage, int fd)
{
    if (MCA_COMMON_SFIO_STORAGE_AUTO != storage) {
        return MCA_COMMON_SFIO_STORAGE_NETWORK == storage;
    }
    long f_type = fd < 0 ? 0 : mca_common_sfio_fs_type_of(fd);
    return 0 == f_type || mca_common_sfio_fs_is_network(f_type);
}

long mca_common_sfio_fs_type_of(int fd)
{
    struct statfs sfs;
    return 0 == fstatfs(fd, &sfs) ? (long) sfs.f_type : 0;
}

int mca_common_sfio_posix_revalidate(int fd)
{
#ifdef AT_STATX_FORCE_SYNC
    struct statx sx;
    return 0 == statx(fd, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, STATX_SIZE | STATX_MTIME, &sx)
               ? 0 : -errno;
#else
    /* a C library without statx: an open revalidates (NFS's close-to-open) */
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    int again = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (again < 0) {
        return -errno;
    }
    close(again);
    return 0;
#endif
}

int mca_common_sfio_posix_flush_segs(int fd, const mca_common_sfio_ioseg_t *segs, size_t nsegs)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < nsegs; ++i) {
        if (segs[i].length > 0) {
            lo = segs[i].offset < lo ? segs[i].offset : lo;
            hi = segs[i].offset + segs[i].length > hi ? segs[i].offset + segs[i].length : hi;
        }
    }
    if (hi <= lo) {
        return 0;
    }
    /* one span: pages between the pieces that are dirty go too, harmlessly */
    if (0 == sync_file_range(fd, (off64_t) lo, (off64_t) (hi - lo),
                             SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                 SYNC_FILE_RANGE_WAIT_AFTER)) {
        return 0;
    }
    return ENOSYS == errno || EINVAL == errno ? (0 == fdatasync(fd) ? 0 : -errno) : -errno;
}

static unsigned depth_for(int fd)
{
    if (0 != mca_common_sfio_posix_depth) {
        return mca_common_sfio_posix_depth;
    }
    return mca_common_sfio_storage_is_network(mca_common_sfio_posix_storage, fd)
               ? SFIO_DEPTH_NETWORK : 1;
}

/* segs_transfer with up to depth requests in flight, for min_segs
 * segments or more.  Falls back to the calling thread alone when the pool
 * is taken or cannot start. */
static int segs_transfer_pipelined(int fd, bool is_write, const mca_common_sfio_ioseg_t *segs,
                                   size_t nsegs, size_t min_segs, uint64_t *done_p)
{
    if (nsegs < min_segs || nsegs < 2) {
        return segs_transfer(fd, is_write, segs, nsegs, done_p);
    }
    unsigned depth = depth_for(fd);
    if (depth > SFIO_DEPTH_MAX) {
        depth = SFIO_DEPTH_MAX;
    }
    if (depth <= 1 || 0 != pthread_mutex_trylock(&pipeline_owner)) {
        return segs_transfer(fd, is_write, segs, nsegs, done_p);
    }
    pipeline_t *p = &pipeline;
    pthread_mutex_lock(&p->lock);
    unsigned helpers = pipeline_grow(p, depth - 1);
    p->fd = fd;
    p->is_write = is_write;
    p->segs = segs;
    p->nsegs = nsegs;
    p->nchunks = (size_t) (helpers + 1) * SFIO_CHUNKS_PER_THREAD;
    if (p->nchunks > nsegs) {
        p->nchunks = nsegs;
    }
    p->next_chunk = 0;
    p->done = 0;
    p->error = 0;
    p->wanted = helpers;
    p->busy = helpers;
    p->generation++;
    pthread_cond_broadcast(&p->work);
    pipeline_drain(p);
    while (p->busy > 0) {
        pthread_cond_wait(&p->idle, &p->lock);
    }
    int rc = p->error;
    *done_p = p->done;
    p->segs = NULL;
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&pipeline_owner);
    return rc;
}

void mca_common_sfio_posix_shutdown(void)
{
    pipeline_t *p = &pipeline;
    pthread_mutex_lock(&pipeline_owner);
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_broadcast(&p->work);
    unsigned n = p->helpers;
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < n; ++i) {
        pthread_join(p->thread[i], NULL);
    }
    pthread_mutex_lock(&p->lock);
    p->helpers = 0;
    p->stop = false;
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&pipeline_owner);
}

int mca_common_sfio_posix_write_segs(int fd, const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                     uint64_t *written_p)
{
    return segs_transfer_pipelined(fd, true, segs, nsegs, mca_common_sfio_posix_depth_min_segs,
                                   written_p);
}

int mca_common_sfio_posix_write_in_turn(int fd, const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                        uint64_t *written_p)
{
    return segs_transfer(fd, true, segs, nsegs, written_p);
}

int mca_common_sfio_posix_write_pieces(int fd, const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                       uint64_t *written_p)
{
    return segs_transfer_pipelined(fd, true, segs, nsegs, 2, written_p);
}

int mca_common_sfio_posix_read_pieces(int fd, const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                      uint64_t *read_p)
{
    return segs_transfer_pipelined(fd, false, segs, nsegs, 2, read_p);
}

/* A sieved window read: its extent read once, the pieces copied out. */
static int window_read(int fd, const mca_common_sfio_ioseg_t *segs,
                       const mca_common_sfio_sieve_window_t *w, char *buf, uint64_t *done_p)
{
    ssize_t got = mca_common_sfio_posix_pread_full(fd, buf, (size_t) w->length, w->offset);
    if (got < 0) {
        return (int) got;
    }
    for (size_t i = w->first; i < w->first + w->count; ++i) {
        uint64_t rel = segs[i].offset - w->offset;
        if (0 == segs[i].length || rel >= (uint64_t) got) {
            continue;
        }
        uint64_t n = segs[i].length;
        if (rel + n > (uint64_t) got) {
            n = (uint64_t) got - rel;
        }
        memcpy(segs[i].buf, buf + rel, (size_t) n);
        *done_p += n;
    }
    return 0;
}

/* A sieved window write: its extent read, the pieces copied in, the
 * extent written once.  The holes are written back as they were read (past
 * the end of the file as the zeros a read would return there), so only a
 * caller holding a lock on the whole extent that every writer of the file
 * honours may do this. */
static int window_write(int fd, const mca_common_sfio_ioseg_t *segs,
                        const mca_common_sfio_sieve_window_t *w, char *buf, uint64_t *done_p)
{
    ssize_t got = mca_common_sfio_posix_pread_full(fd, buf, (size_t) w->length, w->offset);
    if (got < 0) {
        return (int) got;
    }
    memset(buf + got, 0, (size_t) (w->length - (uint64_t) got));
    uint64_t n = 0;
    for (size_t i = w->first; i < w->first + w->count; ++i) {
        memcpy(buf + (segs[i].offset - w->offset), segs[i].buf, segs[i].length);
        n += segs[i].length;
    }
    ssize_t put = mca_common_sfio_posix_pwrite_full(fd, buf, (size_t) w->length, w->offset);
    if (put < 0) {
        return (int) put;
    }
    *done_p += n;
    return 0;
}

/* Transfers every segment, the windows policy sieves through scratch,
 * the others as they are. */
static int segs_transfer_sieved(int fd, bool write, const mca_common_sfio_ioseg_t *segs,
                                size_t nsegs, const mca_common_sfio_sieve_policy_t *policy,
                                mca_common_sfio_scratch_t *scratch, uint64_t *done_p)
{
    mca_common_sfio_sieve_window_t w;
    size_t pos = 0, run = 0;   /* [run, pos): segments transferred as they are */
    uint64_t total = 0;
    int rc = 0;

    /* Consecutive windows that are not sieved go together, so that
     * neighbours in the file fuse into one request and the rest are kept
     * in flight at once (pieces of a log, segments larger than a sieve). */
    for (;;) {
        size_t before = pos;
        bool more = mca_common_sfio_sieve_next(segs, nsegs, &pos, policy, &w);
        if (more && !w.sieve) {
            continue;
        }
        size_t end = more ? w.first : before;
        if (end > run) {
            uint64_t n = 0;
            rc = segs_transfer_pipelined(fd, write, segs + run, end - run,
                                         mca_common_sfio_posix_depth_min_segs, &n);
            total += n;
            if (rc < 0) {
                break;
            }
        }
        run = pos;
        if (!more) {
            break;
        }
        rc = scratch_reserve(scratch, (size_t) w.length);
        if (0 == rc) {
            rc = write ? window_write(fd, segs, &w, scratch->buf, &total)
                       : window_read(fd, segs, &w, scratch->buf, &total);
        }
        if (-EBADF == rc && write) {
            /* a write-only descriptor cannot read the holes (its first
             * read fails before anything is written): the rest as it is */
            uint64_t n = 0;
            rc = segs_transfer_pipelined(fd, true, segs + w.first, nsegs - w.first,
                                         mca_common_sfio_posix_depth_min_segs, &n);
            total += n;
            break;
        }
        if (rc < 0) {
            break;
        }
    }
    *done_p = total;
    return rc;
}

int mca_common_sfio_posix_read_segs(int fd, const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                    const mca_common_sfio_sieve_policy_t *policy,
                                    mca_common_sfio_scratch_t *scratch, uint64_t *read_p)
{
    return segs_transfer_sieved(fd, false, segs, nsegs, policy, scratch, read_p);
}

int mca_common_sfio_posix_write_segs_sieved(int fd, const mca_common_sfio_ioseg_t *segs,
                                            size_t nsegs,
                                            const mca_common_sfio_sieve_policy_t *policy,
                                            mca_common_sfio_scratch_t *scratch,
                                            uint64_t *written_p)
{
    return segs_transfer_sieved(fd, true, segs, nsegs, policy, scratch, written_p);
}
