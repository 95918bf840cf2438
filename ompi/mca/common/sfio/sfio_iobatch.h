/*
 * sfio_iobatch: plans the system calls for one fbtl call.
 *
 * OMPIO hands an fbtl an array of (file offset, length, memory address)
 * segments.  This module groups consecutive segments into batches that one
 * vectored call can serve (file-contiguous, at most iov_max memory pieces,
 * memory-contiguous neighbours fused), and for reads chooses windows where
 * reading the whole covering extent once and copying out ("data sieving")
 * beats one call per piece.  Pure logic: no MPI, no I/O.
 */
#ifndef MCA_COMMON_SFIO_IOBATCH_H
#define MCA_COMMON_SFIO_IOBATCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* One segment of an fbtl call: file bytes [offset, offset + length) to or
 * from memory at buf. */
typedef struct mca_common_sfio_ioseg_t {
    uint64_t offset;
    uint64_t length;
    void    *buf;
} mca_common_sfio_ioseg_t;

/* A piece of memory; same members, order and types as struct iovec so the
 * I/O adapter can pass an array of these to preadv/pwritev directly (it
 * checks that at compile time). */
typedef struct mca_common_sfio_memv_t {
    void  *base;
    size_t len;
} mca_common_sfio_memv_t;

/* A batch: segments [first, first + count) cover the file-contiguous range
 * [offset, offset + length) and map to niov memory pieces. */
typedef struct mca_common_sfio_iobatch_t {
    size_t   first;
    size_t   count;
    uint64_t offset;
    uint64_t length;
    size_t   niov;
} mca_common_sfio_iobatch_t;

/* Data-sieving policy for reads. */
typedef struct mca_common_sfio_sieve_policy_t {
    bool     enabled;
    uint64_t max_gap;     /* a hole larger than this ends a window */
    uint64_t max_window;  /* covering extent read at once, in bytes */
    uint64_t max_block;   /* segments larger than this are read directly */
} mca_common_sfio_sieve_policy_t;

/* A read window: segments [first, first + count) lie in ascending,
 * non-overlapping order inside [offset, offset + length).  sieve says
 * whether to read the covering extent once and copy out (true) or to issue
 * vectored batches for these segments (false). */
typedef struct mca_common_sfio_sieve_window_t {
    size_t   first;
    size_t   count;
    uint64_t offset;
    uint64_t length;
    bool     sieve;
} mca_common_sfio_sieve_window_t;

/* Next batch starting at segment *pos (zero-length segments are skipped and
 * absorbed).  Fills iov (capacity iov_max >= 1) with the batch's memory
 * pieces, advances *pos past the batch.  Returns false when no segment
 * with bytes remains (then *pos == nsegs). */
bool mca_common_sfio_iobatch_next(const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                  size_t *pos, mca_common_sfio_memv_t *iov,
                                  size_t iov_max, mca_common_sfio_iobatch_t *batch_p);

/* Next read window starting at segment *pos under policy.  Returns false
 * when no segment remains.  A window never exceeds policy->max_window
 * unless it holds a single segment. */
bool mca_common_sfio_sieve_next(const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                size_t *pos, const mca_common_sfio_sieve_policy_t *policy,
                                mca_common_sfio_sieve_window_t *window_p);

/* Total bytes of segs. */
uint64_t mca_common_sfio_ioseg_total(const mca_common_sfio_ioseg_t *segs, size_t nsegs);

#endif /* MCA_COMMON_SFIO_IOBATCH_H */
