/*
 * sfio_lockplan: lock lists of atomic accesses (see header).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "sfio_lockplan.h"

int mca_common_sfio_lockplan_build(mca_common_sfio_lockmode_t mode,
                                   const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                   const mca_common_sfio_objects_t *objects,
                                   mca_common_sfio_rangelist_t *locks_p)
{
    mca_common_sfio_rangelist_t touched, priv;
    int rc = 0;

    mca_common_sfio_rangelist_clear(locks_p);
    if (MCA_COMMON_SFIO_LOCK_FILE == mode) {
        return mca_common_sfio_rangelist_add(locks_p, 0, MCA_COMMON_SFIO_LOCK_TO_EOF);
    }
    mca_common_sfio_rangelist_init(&touched);
    for (size_t i = 0; i < nsegs && 0 == rc; ++i) {
        rc = mca_common_sfio_rangelist_add(&touched, segs[i].offset, segs[i].length);
    }
    if (0 == rc) {
        mca_common_sfio_rangelist_normalize(&touched);
    }
    if (0 == rc && touched.count > 0) {
        if (MCA_COMMON_SFIO_LOCK_RANGE == mode) {
            const mca_common_sfio_range_t *first = &touched.ranges[0];
            const mca_common_sfio_range_t *last = &touched.ranges[touched.count - 1];
            rc = mca_common_sfio_rangelist_add(locks_p, first->offset,
                                               last->offset + last->length - first->offset);
        } else if (NULL != objects && objects->valid) {
            mca_common_sfio_rangelist_init(&priv);
            rc = mca_common_sfio_objects_split(objects, &touched, &priv, locks_p);
            mca_common_sfio_rangelist_destroy(&priv);
        } else {
            mca_common_sfio_rangelist_swap(&touched, locks_p);
        }
    }
    mca_common_sfio_rangelist_destroy(&touched);
    return rc;
}

bool mca_common_sfio_lockplan_locks_holes(mca_common_sfio_lockmode_t mode)
{
    return MCA_COMMON_SFIO_LOCK_RANGE == mode || MCA_COMMON_SFIO_LOCK_FILE == mode;
}

typedef struct {
    mca_common_sfio_ioseg_t *v;
    size_t n, cap;
} segs_t;

static int segs_push(segs_t *s, uint64_t offset, uint64_t length, void *buf)
{
    if (0 == length) {
        return 0;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        void *nv = realloc(s->v, cap * sizeof(*s->v));
        if (NULL == nv) {
            return -ENOMEM;
        }
        s->v = nv;
        s->cap = cap;
    }
    s->v[s->n++] = (mca_common_sfio_ioseg_t) { offset, length, buf };
    return 0;
}

int mca_common_sfio_segs_split_private(const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                       const mca_common_sfio_objects_t *objects,
                                       mca_common_sfio_ioseg_t **priv_p, size_t *npriv_p,
                                       mca_common_sfio_ioseg_t **shared_p, size_t *nshared_p)
{
    segs_t priv = { 0 }, shared = { 0 };
    mca_common_sfio_rangelist_t one, p, s;
    int rc = 0;

    mca_common_sfio_rangelist_init(&one);
    mca_common_sfio_rangelist_init(&p);
    mca_common_sfio_rangelist_init(&s);
    for (size_t i = 0; i < nsegs && 0 == rc; ++i) {
        const mca_common_sfio_ioseg_t *g = &segs[i];
        if (NULL == objects || !objects->valid) {
            rc = segs_push(&shared, g->offset, g->length, g->buf);
            continue;
        }
        mca_common_sfio_rangelist_clear(&one);
        rc = mca_common_sfio_rangelist_add(&one, g->offset, g->length);
        if (0 == rc) {
            rc = mca_common_sfio_objects_split(objects, &one, &p, &s);
        }
        for (size_t k = 0; 0 == rc && k < p.count; ++k) {
            rc = segs_push(&priv, p.ranges[k].offset, p.ranges[k].length,
                           (char *) g->buf + (p.ranges[k].offset - g->offset));
        }
        for (size_t k = 0; 0 == rc && k < s.count; ++k) {
            rc = segs_push(&shared, s.ranges[k].offset, s.ranges[k].length,
                           (char *) g->buf + (s.ranges[k].offset - g->offset));
        }
    }
    mca_common_sfio_rangelist_destroy(&one);
    mca_common_sfio_rangelist_destroy(&p);
    mca_common_sfio_rangelist_destroy(&s);
    if (0 != rc) {
        free(priv.v);
        free(shared.v);
        return rc;
    }
    *priv_p = priv.v;
    *npriv_p = priv.n;
    *shared_p = shared.v;
    *nshared_p = shared.n;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

int mca_common_sfio_lockplan_coarsen(mca_common_sfio_rangelist_t *locks, size_t max_ranges)
{
    size_t n = locks->count;
    if (0 == max_ranges || n <= max_ranges) {
        return 0;
    }
    /* Bridge the (n - max_ranges) smallest gaps: find the threshold gap,
     * bridge every gap below it and as many equal to it as still needed. */
    uint64_t *gaps = malloc((n - 1) * sizeof(uint64_t));
    if (NULL == gaps) {
        return -ENOMEM;
    }
    for (size_t i = 1; i < n; ++i) {
        gaps[i - 1] = locks->ranges[i].offset - (locks->ranges[i - 1].offset + locks->ranges[i - 1].length);
    }
    qsort(gaps, n - 1, sizeof(uint64_t), cmp_u64);
    size_t bridge = n - max_ranges;
    uint64_t threshold = gaps[bridge - 1];
    size_t below = 0;
    while (below < bridge && gaps[below] < threshold) {
        ++below;
    }
    size_t equal_left = bridge - below;   /* gaps == threshold still to bridge */
    free(gaps);

    size_t out = 0;
    for (size_t i = 1; i < n; ++i) {
        mca_common_sfio_range_t *cur = &locks->ranges[out];
        const mca_common_sfio_range_t *next = &locks->ranges[i];
        uint64_t gap = next->offset - (cur->offset + cur->length);
        bool join = gap < threshold || (gap == threshold && equal_left > 0);
        if (join) {
            if (gap == threshold) {
                --equal_left;
            }
            cur->length = next->offset + next->length - cur->offset;
        } else {
            locks->ranges[++out] = *next;
        }
    }
    locks->count = out + 1;
    return 0;
}
