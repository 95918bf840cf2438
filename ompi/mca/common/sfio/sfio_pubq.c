/*
 * sfio_pubq: publication of numbered versions in order (see header).
 *
 * The pending versions are few (one per writer): a sorted array with an
 * insertion by binary search is simpler than any tree and fast enough.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sfio_pubq.h"

int mca_common_sfio_pubq_init(mca_common_sfio_pubq_t *q, size_t capacity, int64_t published)
{
    memset(q, 0, sizeof(*q));
    if (0 == capacity) {
        return -EINVAL;
    }
    q->pending = calloc(capacity, sizeof(*q->pending));
    if (NULL == q->pending) {
        return -ENOMEM;
    }
    q->capacity = capacity;
    q->published = published;
    return 0;
}

void mca_common_sfio_pubq_fini(mca_common_sfio_pubq_t *q)
{
    free(q->pending);
    memset(q, 0, sizeof(*q));
}

/* The index of the first pending version >= version. */
static size_t lower_bound(const mca_common_sfio_pubq_t *q, int64_t version)
{
    size_t lo = 0, hi = q->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (q->pending[mid].version < version) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

int mca_common_sfio_pubq_done(mca_common_sfio_pubq_t *q, int64_t version, uint64_t tag,
                              uint64_t *released, size_t *nreleased)
{
    *nreleased = 0;
    if (version < 1) {
        return -EINVAL;
    }
    if (version <= q->published) {
        return 1;
    }
    if (version == q->published + 1) {
        /* the mark moves over this version and the run that follows it */
        q->published = version;
        released[(*nreleased)++] = tag;
        size_t k = 0;
        while (k < q->count && q->pending[k].version == q->published + 1) {
            q->published += 1;
            released[(*nreleased)++] = q->pending[k].tag;
            ++k;
        }
        memmove(q->pending, q->pending + k, (q->count - k) * sizeof(*q->pending));
        q->count -= k;
        return 0;
    }
    size_t at = lower_bound(q, version);
    if (at < q->count && q->pending[at].version == version) {
        return -EEXIST;
    }
    if (q->count == q->capacity) {
        return -ENOSPC;
    }
    memmove(q->pending + at + 1, q->pending + at, (q->count - at) * sizeof(*q->pending));
    q->pending[at] = (mca_common_sfio_pubq_entry_t) { .version = version, .tag = tag };
    q->count += 1;
    return 0;
}
