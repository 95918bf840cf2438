/*
 * sfio_locks: OFD byte-range locks (see header).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>

#include "sfio_locks.h"
#include "sfio_lockplan.h"

static _Atomic uint64_t stat_lists, stat_ranges, stat_bytes;

static int ofd_lock(int fd, short type, uint64_t offset, uint64_t length)
{
    struct flock fl = {
        .l_type = type, .l_whence = SEEK_SET, .l_start = (off_t) offset,
        /* fcntl's 0 means "to the end of the file, however it grows" */
        .l_len = (MCA_COMMON_SFIO_LOCK_TO_EOF == length ||
                  offset + length > (uint64_t) INT64_MAX) ? 0 : (off_t) length,
    };
    while (0 != fcntl(fd, F_UNLCK == type ? F_OFD_SETLK : F_OFD_SETLKW, &fl)) {
        if (EINTR != errno) {
            return -errno;
        }
    }
    return 0;
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
        atomic_fetch_add(&stat_bytes, r->length);
    }
    atomic_fetch_add(&stat_lists, 1);
    atomic_fetch_add(&stat_ranges, locks->count);
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
