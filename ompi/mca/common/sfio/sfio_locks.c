/*
 * sfio_locks: OFD byte-range locks (see header).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "sfio_locks.h"
#include "sfio_lockplan.h"
#include "sfio_util.h"

static _Atomic uint64_t stat_lists, stat_ranges, stat_bytes;

/* Unlocks never wait; locks do. */
static int ofd_lock(int fd, short type, uint64_t offset, uint64_t length)
{
    /* fcntl's 0 means "to the end of the file, however it grows" */
    int64_t len = (MCA_COMMON_SFIO_LOCK_TO_EOF == length ||
                   offset + length > (uint64_t) INT64_MAX) ? 0 : (int64_t) length;
    return mca_common_sfio_ofd_lock(fd, type, F_UNLCK != type, (int64_t) offset, len);
}

int mca_common_sfio_locks_acquire(int fd, const mca_common_sfio_rangelist_t *locks, bool exclusive)
{
    for (size_t i = 0; i < locks->count; ++i) {
        const mca_common_sfio_range_t *r = &locks->ranges[i];
        int rc = ofd_lock(fd, exclusive ? F_WRLCK : F_RDLCK, r->offset, r->length);
        if (0 != rc) {
            for (size_t k = 0; k < i; ++k) {
                (void) ofd_lock(fd, F_UNLCK, locks->ranges[k].offset, locks->ranges[k].length);
            }
            return rc;
        }
    }
    return 0;
}

void mca_common_sfio_locks_release(int fd, const mca_common_sfio_rangelist_t *locks)
{
    if (0 == locks->count) {
        return;
    }
    /* One call unlocks the whole span: the descriptor holds no other locks
     * meanwhile (locked accesses of a process are serialized). */
    const mca_common_sfio_range_t *first = &locks->ranges[0];
    const mca_common_sfio_range_t *last = &locks->ranges[locks->count - 1];
    uint64_t len = MCA_COMMON_SFIO_LOCK_TO_EOF == last->length
                       ? MCA_COMMON_SFIO_LOCK_TO_EOF
                       : last->offset + last->length - first->offset;
    (void) ofd_lock(fd, F_UNLCK, first->offset, len);
}

void mca_common_sfio_locks_stats(mca_common_sfio_lock_stats_t *stats_p)
{
    stats_p->lists = atomic_load(&stat_lists);
    stats_p->ranges = atomic_load(&stat_ranges);
    stats_p->bytes = atomic_load(&stat_bytes);
}

static int fcntl_acquire(void *ctx, const mca_common_sfio_rangelist_t *locks, bool exclusive)
{
    return mca_common_sfio_locks_acquire(*(const int *) ctx, locks, exclusive);
}

static int fcntl_release(void *ctx, const mca_common_sfio_rangelist_t *locks)
{
    mca_common_sfio_locks_release(*(const int *) ctx, locks);
    return 0;
}

/* Builds the lock list of an access and takes it with locker (NULL:
 * fcntl on *fd_p); on success the caller releases with unlock(). */
static int lock(const mca_common_sfio_locker_t *locker, int *fd_p,
                mca_common_sfio_lockmode_t mode, const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                const mca_common_sfio_objects_t *objects, bool exclusive,
                mca_common_sfio_locker_t *used_p, mca_common_sfio_rangelist_t *locks)
{
    *used_p = NULL != locker ? *locker : (mca_common_sfio_locker_t) {
        .name = "fcntl", .max_ranges = 0, .acquire = fcntl_acquire, .release = fcntl_release,
        .ctx = fd_p,
    };
    /* the fcntl bound is for fcntl's lock tables; a service has its own */
    size_t bound = 0 != used_p->max_ranges ? used_p->max_ranges : mca_common_sfio_lock_max_ranges;
    int rc = mca_common_sfio_lockplan_build(mode, segs, nsegs, objects, locks);
    if (0 == rc) {
        rc = mca_common_sfio_lockplan_coarsen(locks, bound);
    }
    if (0 == rc) {
        rc = used_p->acquire(used_p->ctx, locks, exclusive);
        if (0 == rc) {
            atomic_fetch_add(&stat_lists, 1);
            atomic_fetch_add(&stat_ranges, locks->count);
            for (size_t i = 0; i < locks->count; ++i) {
                atomic_fetch_add(&stat_bytes, locks->ranges[i].length);
            }
        }
    }
    return rc;
}

static pthread_mutex_t locked_io = PTHREAD_MUTEX_INITIALIZER;
/* the sieved writes' buffer, used under locked_io */
static mca_common_sfio_scratch_t write_scratch;
mca_common_sfio_sieve_policy_t mca_common_sfio_lock_write_sieve = { .enabled = false };
size_t mca_common_sfio_lock_max_ranges = 1024;
size_t mca_common_sfio_lock_service_max_ranges = 65536;
size_t mca_common_sfio_lock_service_max_overtakes = 1;
uint64_t mca_common_sfio_pcache_limit = 0;
uint64_t mca_common_sfio_pcache_piece_max = 32 * 1024;

int mca_common_sfio_pcache_write_back_held(int fd, mca_common_sfio_pcache_t *pc)
{
    int rc = 0;
    if (pc->count > 0) {
        mca_common_sfio_ioseg_t *segs = malloc(pc->count * sizeof(*segs));
        uint64_t n = 0;
        if (NULL == segs) {
            rc = -ENOMEM;
        } else {
            for (size_t i = 0; i < pc->count; ++i) {
                segs[i] = (mca_common_sfio_ioseg_t) {
                    .offset = pc->ext[i].offset, .length = pc->ext[i].length,
                    .buf = pc->ext[i].data,
                };
            }
            rc = mca_common_sfio_posix_write_segs(fd, segs, pc->count, &n);
            free(segs);
        }
        pc->flushes++;
        pc->bytes_flushed += pc->cached_bytes;
    }
    mca_common_sfio_pcache_clear(pc);
    return rc;
}

int mca_common_sfio_pcache_write_back(int fd, mca_common_sfio_pcache_t *pc)
{
    pthread_mutex_lock(&pc->lock);
    int rc = mca_common_sfio_pcache_write_back_held(fd, pc);
    pthread_mutex_unlock(&pc->lock);
    return rc;
}

/* Puts private pieces into pc when they fit (after writing pc back if
 * they do not fit beside what it holds).  Returns 0 and *cached, or a
 * negative errno. */
static int cache_private(int fd, mca_common_sfio_pcache_t *pc, const mca_common_sfio_ioseg_t *priv,
                         size_t npriv, bool *cached)
{
    int rc = 0;
    uint64_t need = mca_common_sfio_pcache_need(priv, npriv);
    /* large pieces cost little more than their bytes when written at
     * once; moving them through the flush's exchange costs more */
    bool small = need <= mca_common_sfio_pcache_piece_max * (uint64_t) npriv;
    bool fits = pc->arena_bytes + need <= mca_common_sfio_pcache_limit;
    *cached = false;
    pthread_mutex_lock(&pc->lock);
    if (pc->count > 0 && (!small || !fits)) {
        /* also keeps the cache from holding older copies of bytes written
         * straight below */
        rc = mca_common_sfio_pcache_write_back_held(fd, pc);
        fits = need <= mca_common_sfio_pcache_limit;
    }
    if (0 == rc && small && fits &&
        0 == mca_common_sfio_pcache_put(pc, priv, npriv)) {
        *cached = true;
        /* Make the size what the write made it: its last byte goes through
         * (the rank's own private byte; the cache keeps the newest copy). */
        const mca_common_sfio_ioseg_t *last = NULL;
        for (size_t i = 0; i < npriv; ++i) {
            if (priv[i].length > 0 &&
                (NULL == last || priv[i].offset + priv[i].length > last->offset + last->length)) {
                last = &priv[i];
            }
        }
        if (NULL != last && last->offset + last->length > pc->eof_made) {
            ssize_t w = mca_common_sfio_posix_pwrite_full(fd, (char *) last->buf + last->length - 1,
                                                          1, last->offset + last->length - 1);
            rc = w < 0 ? (int) w : 0;
            if (0 == rc) {
                pc->eof_made = last->offset + last->length;
            }
        }
    }
    pthread_mutex_unlock(&pc->lock);
    return rc;
}

int mca_common_sfio_locked_write(int fd, const mca_common_sfio_locker_t *locker,
                                 mca_common_sfio_lock_coherence_t coherence,
                                 mca_common_sfio_lockmode_t mode,
                                 const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                 const mca_common_sfio_objects_t *objects,
                                 mca_common_sfio_pcache_t *pcache, uint64_t *written_p)
{
    mca_common_sfio_ioseg_t *priv = NULL, *shared = NULL;
    size_t npriv = 0, nshared = 0;
    mca_common_sfio_rangelist_t locks;
    uint64_t done = 0, n = 0;
    int rc;

    mca_common_sfio_rangelist_init(&locks);
    /* Bytes no other rank can reach need no lock (Logan and Dickens); only list
     * locks can tell them apart, the other modes lock every byte. */
    const mca_common_sfio_ioseg_t *locked = segs;
    size_t nlocked = nsegs;
    rc = 0;
    if (MCA_COMMON_SFIO_LOCK_LIST == mode && NULL != objects && objects->valid) {
        rc = mca_common_sfio_segs_split_private(segs, nsegs, objects, &priv, &npriv, &shared,
                                                &nshared);
        locked = shared;
        nlocked = nshared;
    }
    if (0 == rc && npriv > 0) {
        bool cached = false;
        if (NULL != pcache && mca_common_sfio_pcache_limit > 0) {
            rc = cache_private(fd, pcache, priv, npriv, &cached);
        }
        if (cached) {
            done += mca_common_sfio_pcache_need(priv, npriv);
        } else if (0 == rc) {
            rc = mca_common_sfio_posix_write_segs(fd, priv, npriv, &n);
            done += n;
        }
    }
    if (0 == rc && nlocked > 0) {
        mca_common_sfio_locker_t used;
        pthread_mutex_lock(&locked_io);
        rc = lock(locker, &fd, mode, locked, nlocked, NULL, true, &used, &locks);
        if (0 == rc) {
            n = 0;
            /* only under the kernel's own locks: taking an fcntl lock is
             * also what makes a client-caching file system (NFS) read
             * the holes as the last holder left them; a service's grant
             * is not */
            if (mca_common_sfio_lock_write_sieve.enabled && NULL == locker &&
                mca_common_sfio_lockplan_locks_holes(mode)) {
                if (coherence.revalidate_after_grant) {
                    rc = mca_common_sfio_posix_revalidate(fd);   /* the holes are read */
                }
                if (0 == rc) {
                    rc = mca_common_sfio_posix_write_segs_sieved(
                        fd, locked, nlocked, &mca_common_sfio_lock_write_sieve, &write_scratch, &n);
                }
            } else {
                rc = mca_common_sfio_posix_write_segs(fd, locked, nlocked, &n);
            }
            done += n;
            if (0 == rc && coherence.flush_before_release) {
                rc = mca_common_sfio_posix_flush_segs(fd, locked, nlocked);
            }
            int urc = used.release(used.ctx, &locks);
            rc = 0 != rc ? rc : urc;
        }
        pthread_mutex_unlock(&locked_io);
    }
    mca_common_sfio_rangelist_destroy(&locks);
    free(priv);
    free(shared);
    *written_p = done;
    return rc;
}

int mca_common_sfio_locked_read(int fd, const mca_common_sfio_locker_t *locker,
                                mca_common_sfio_lock_coherence_t coherence,
                                mca_common_sfio_lockmode_t mode,
                                const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                const mca_common_sfio_objects_t *objects,
                                mca_common_sfio_pcache_t *pcache,
                                const mca_common_sfio_sieve_policy_t *policy,
                                mca_common_sfio_scratch_t *scratch, uint64_t *read_p)
{
    mca_common_sfio_rangelist_t locks;
    int rc;

    mca_common_sfio_locker_t used;
    mca_common_sfio_rangelist_init(&locks);
    pthread_mutex_lock(&locked_io);
    rc = lock(locker, &fd, mode, segs, nsegs, MCA_COMMON_SFIO_LOCK_LIST == mode ? objects : NULL,
              false, &used, &locks);
    if (0 == rc) {
        if (coherence.revalidate_after_grant) {
            rc = mca_common_sfio_posix_revalidate(fd);
        }
        if (0 == rc) {
            rc = mca_common_sfio_posix_read_segs(fd, segs, nsegs, policy, scratch, read_p);
        }
        int urc = used.release(used.ctx, &locks);
        rc = 0 != rc ? rc : urc;
    }
    pthread_mutex_unlock(&locked_io);
    if (0 == rc && NULL != pcache) {
        /* this rank's private bytes not yet in the file (nobody else can
         * have written them meanwhile) */
        pthread_mutex_lock(&pcache->lock);
        for (size_t i = 0; pcache->count > 0 && i < nsegs; ++i) {
            (void) mca_common_sfio_pcache_overlay(pcache, segs[i].offset, segs[i].length,
                                                  segs[i].buf);
        }
        pthread_mutex_unlock(&pcache->lock);
    }
    mca_common_sfio_rangelist_destroy(&locks);
    return rc;
}
