/*
 * sfio_iobatch: system-call planning for one fbtl call (see header).
 */
#include "sfio_iobatch.h"

uint64_t mca_common_sfio_ioseg_total(const mca_common_sfio_ioseg_t *segs, size_t nsegs)
{
    uint64_t total = 0;
    for (size_t i = 0; i < nsegs; ++i) {
        total += segs[i].length;
    }
    return total;
}

bool mca_common_sfio_iobatch_next(const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                  size_t *pos, mca_common_sfio_memv_t *iov,
                                  size_t iov_max, mca_common_sfio_iobatch_t *batch_p)
{
    size_t i = *pos;

    while (i < nsegs && 0 == segs[i].length) {
        ++i;
    }
    if (i >= nsegs || 0 == iov_max) {
        *pos = nsegs;
        return false;
    }

    mca_common_sfio_iobatch_t batch = {
        .first = i, .count = 0, .offset = segs[i].offset, .length = 0, .niov = 0
    };
    /* Invariant: segments [batch.first, i) are file-contiguous and end at
     * batch.offset + batch.length; iov[0, niov) holds their memory. */
    for (; i < nsegs; ++i) {
        const mca_common_sfio_ioseg_t *s = &segs[i];
        if (0 == s->length) {
            continue;
        }
        if (s->offset != batch.offset + batch.length) {
            break;
        }
        if (batch.niov > 0 &&
            (char *) iov[batch.niov - 1].base + iov[batch.niov - 1].len == (char *) s->buf) {
            iov[batch.niov - 1].len += (size_t) s->length;
        } else if (batch.niov < iov_max) {
            iov[batch.niov].base = s->buf;
            iov[batch.niov].len = (size_t) s->length;
            batch.niov++;
        } else {
            break;
        }
        batch.length += s->length;
    }
    batch.count = i - batch.first;
    *pos = i;
    *batch_p = batch;
    return true;
}

bool mca_common_sfio_sieve_next(const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                size_t *pos, const mca_common_sfio_sieve_policy_t *policy,
                                mca_common_sfio_sieve_window_t *window_p)
{
    size_t i = *pos;

    while (i < nsegs && 0 == segs[i].length) {
        ++i;
    }
    if (i >= nsegs) {
        *pos = nsegs;
        return false;
    }

    mca_common_sfio_sieve_window_t w = {
        .first = i, .count = 1, .offset = segs[i].offset,
        .length = segs[i].length, .sieve = false
    };
    uint64_t useful = segs[i].length;
    bool small = segs[i].length <= policy->max_block;

    ++i;
    if (policy->enabled && small) {
        /* Grow while the next segment starts at or after the window's end
         * (ascending, no overlap), the hole is small, the segment is small
         * and the window stays within max_window. */
        for (; i < nsegs; ++i) {
            const mca_common_sfio_ioseg_t *s = &segs[i];
            uint64_t end = w.offset + w.length;
            if (0 == s->length) {
                continue;
            }
            if (s->offset < end || s->offset - end > policy->max_gap ||
                s->length > policy->max_block ||
                s->offset + s->length - w.offset > policy->max_window) {
                break;
            }
            w.length = s->offset + s->length - w.offset;
            useful += s->length;
        }
    }
    w.count = i - w.first;
    /* Sieving pays only when there are holes to skip over with one call. */
    w.sieve = policy->enabled && w.length > useful;
    *pos = i;
    *window_p = w;
    return true;
}
