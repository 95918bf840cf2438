/*
 * sfio_posixio: POSIX execution of I/O plans (see header).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

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

int mca_common_sfio_posix_write_segs(int fd, const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                     uint64_t *written_p)
{
    return segs_transfer(fd, true, segs, nsegs, written_p);
}

int mca_common_sfio_posix_read_segs(int fd, const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                    const mca_common_sfio_sieve_policy_t *policy,
                                    mca_common_sfio_scratch_t *scratch, uint64_t *read_p)
{
    mca_common_sfio_sieve_window_t w;
    size_t pos = 0;
    uint64_t total = 0;

    while (mca_common_sfio_sieve_next(segs, nsegs, &pos, policy, &w)) {
        if (!w.sieve) {
            uint64_t n = 0;
            int rc = segs_transfer(fd, false, segs + w.first, w.count, &n);
            if (rc < 0) {
                return rc;
            }
            total += n;
            continue;
        }
        int rc = scratch_reserve(scratch, (size_t) w.length);
        if (rc < 0) {
            return rc;
        }
        ssize_t got = mca_common_sfio_posix_pread_full(fd, scratch->buf, (size_t) w.length,
                                                       w.offset);
        if (got < 0) {
            return (int) got;
        }
        for (size_t i = w.first; i < w.first + w.count; ++i) {
            uint64_t rel = segs[i].offset - w.offset;
            if (0 == segs[i].length || rel >= (uint64_t) got) {
                continue;
            }
            uint64_t n = segs[i].length;
            if (rel + n > (uint64_t) got) {
                n = (uint64_t) got - rel;
            }
            memcpy(segs[i].buf, scratch->buf + rel, (size_t) n);
            total += n;
        }
    }
    *read_p = total;
    return 0;
}
