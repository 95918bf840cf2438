/*
 * sfio_locks: byte-range locks for the lock modes of atomic mode.
 *
 * Who takes a lock list is a locker (an operations table): by default
 * OFD fcntl locks on the file's descriptor, below; or the file's list-lock
 * service across nodes (sfio_locksvc supplies its locker), which takes a
 * whole list in one request.
 *
 * Open-file-description (OFD) fcntl locks on the file's own descriptor:
 * any POSIX file system with byte-range locks, no server, owned by the
 * file handle (two handles of one process exclude each other) and dropped
 * by the kernel when the holder dies, so a killed rank never hangs the
 * others.  A lock list is taken in ascending order, which makes concurrent
 * lists deadlock-free.
 */
#ifndef MCA_COMMON_SFIO_LOCKS_H
#define MCA_COMMON_SFIO_LOCKS_H

#include "sfio_export.h"

#include <stdbool.h>
#include <stdint.h>

#include "sfio_iobatch.h"
#include "sfio_lockplan.h"
#include "sfio_pcache.h"
#include "sfio_posixio.h"
#include "sfio_rangelist.h"
#include "sfio_route.h"

/* Counters of lock traffic, per process. */
typedef struct mca_common_sfio_lock_stats_t {
    uint64_t lists;       /* lock lists taken */
    uint64_t ranges;      /* ranges locked (one fcntl each) */
    uint64_t bytes;       /* bytes covered */
} mca_common_sfio_lock_stats_t;

/* A lock service's operations.  acquire takes the whole normalized list
 * (at most max_ranges ranges; 0: the fcntl bound,
 * mca_common_sfio_lock_max_ranges), exclusive for writes, or
 * nothing; release gives it back and may report that the list was taken
 * away meanwhile.  Both return 0 or a negative errno. */
typedef struct mca_common_sfio_locker_t {
    const char *name;
    size_t max_ranges;
    int (*acquire)(void *ctx, const mca_common_sfio_rangelist_t *locks, bool exclusive);
    int (*release)(void *ctx, const mca_common_sfio_rangelist_t *locks);
    void *ctx;
} mca_common_sfio_locker_t;

/* Takes every range of locks (normalized) on fd, ascending, waiting as
 * needed; exclusive for writes.  On failure nothing stays locked.
 * Returns 0 or a negative errno. */
int mca_common_sfio_locks_acquire(int fd, const mca_common_sfio_rangelist_t *locks, bool exclusive);

/* Releases what acquire took. */
void mca_common_sfio_locks_release(int fd, const mca_common_sfio_rangelist_t *locks);

void mca_common_sfio_locks_stats(mca_common_sfio_lock_stats_t *stats_p);

/* fcntl lock lists longer than this are coarsened (sfio_lockplan_coarsen);
 * 0: no bound.  Set once by the fbtl from its parameter. */
SFIO_EXPORT extern size_t mca_common_sfio_lock_max_ranges;

/* The same for the list-lock service's lists (sfio_locksvc: longer than
 * one message, they travel in parts).  Set once by the fbtl. */
SFIO_EXPORT extern size_t mca_common_sfio_lock_service_max_ranges;
SFIO_EXPORT extern size_t mca_common_sfio_lock_service_max_overtakes;

/* Bytes of arena a private-object cache may hold (0: no cache: private
 * bytes go straight to the file).  Set once by the fbtl. */
SFIO_EXPORT extern uint64_t mca_common_sfio_pcache_limit;
/* Only writes whose private pieces average at most this many bytes are
 * cached (larger pieces are written at once).  Set once by the fbtl. */
SFIO_EXPORT extern uint64_t mca_common_sfio_pcache_piece_max;

/* How writes under an fcntl lock that covers their holes (range and file
 * locks; not through a lock service) sieve: a run of small pieces with small holes is read, patched and
 * written back as one extent, as ROMIO's data sieving does under its lock.
 * Disabled: every piece is written as it is.  Set once by the fbtl. */
SFIO_EXPORT extern mca_common_sfio_sieve_policy_t mca_common_sfio_lock_write_sieve;

/* An atomic write under locks (locker NULL: fcntl on fd): private bytes (objects, LIST mode) first
 * without a lock, then the lock list of the rest, the write (sieved under
 * mca_common_sfio_lock_write_sieve where the lock covers the holes), the
 * unlock.
 * Locked accesses of one process are serialized (one descriptor holds
 * one list at a time).  Returns 0 and the bytes written, or a negative
 * errno.
 *
 * pcache (may be NULL): where private bytes go instead of the file, up to
 * mca_common_sfio_pcache_limit; a write that does not fit first writes the
 * cache back.  The bytes a cached write ends with are written through
 * when they extend the file, so the file's size is what the write made
 * it. */
/* coherence (mca_common_sfio_route_lock_coherence): the written bytes
 * are flushed to the file system before the locks go, and what this
 * client cached of the file is revalidated once they are granted (before
 * a read, or a sieved write's read of the holes). */
int mca_common_sfio_locked_write(int fd, const mca_common_sfio_locker_t *locker,
                                 mca_common_sfio_lock_coherence_t coherence,
                                 mca_common_sfio_lockmode_t mode,
                                 const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                 const mca_common_sfio_objects_t *objects,
                                 mca_common_sfio_pcache_t *pcache, uint64_t *written_p);

/* An atomic read under shared locks of the bytes it reads; then the
 * cached private bytes of pcache (may be NULL) over what the file had. */
int mca_common_sfio_locked_read(int fd, const mca_common_sfio_locker_t *locker,
                                mca_common_sfio_lock_coherence_t coherence,
                                mca_common_sfio_lockmode_t mode,
                                const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                const mca_common_sfio_objects_t *objects,
                                mca_common_sfio_pcache_t *pcache,
                                const mca_common_sfio_sieve_policy_t *policy,
                                mca_common_sfio_scratch_t *scratch, uint64_t *read_p);

/* Writes pc's bytes back by this rank alone (one request per run of
 * file-contiguous extents) and empties it.  Takes pc's lock.  Returns 0
 * or a negative errno (the cache is emptied either way). */
int mca_common_sfio_pcache_write_back(int fd, mca_common_sfio_pcache_t *pc);
/* The same for a caller that holds pc's lock. */
int mca_common_sfio_pcache_write_back_held(int fd, mca_common_sfio_pcache_t *pc);

#endif
