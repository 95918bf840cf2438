/*
 * sfio_objects: shared/private classification of file bytes from the
 * intersection of all ranks' views (object-based files, Logan and
 * Dickens).  See sfio_objects.h for the model (finite prefix + one repeating period).
 *
 * compute() follows the paper's derivation (figure 2): every rank's
 * accessible ranges over [start, S + P) are generated, their boundaries
 * sorted into one list, and each piece between consecutive boundaries (an
 * "object") gets the number of ranks that can access it -- the popcount of
 * the paper's reverse access set, which is all a lock decision needs.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sfio_objects.h"

typedef mca_common_sfio_rangelist_t list_t;
typedef mca_common_sfio_range_t range_t;
typedef mca_common_sfio_objects_t objects_t;

static uint64_t range_end(const range_t *r)
{
    return r->offset + r->length;
}

void mca_common_sfio_objects_init(objects_t *obj)
{
    obj->valid = false;
    obj->start = 0;
    obj->period_start = 0;
    obj->period = 1;
    mca_common_sfio_rangelist_init(&obj->prefix_private);
    mca_common_sfio_rangelist_init(&obj->prefix_shared);
    mca_common_sfio_rangelist_init(&obj->period_private);
    mca_common_sfio_rangelist_init(&obj->period_shared);
    obj->pending_views = NULL;
    obj->pending_blocks = NULL;
    obj->pending_nviews = 0;
    obj->pending_max_ranges = 0;
}

void mca_common_sfio_objects_destroy(objects_t *obj)
{
    mca_common_sfio_rangelist_destroy(&obj->prefix_private);
    mca_common_sfio_rangelist_destroy(&obj->prefix_shared);
    mca_common_sfio_rangelist_destroy(&obj->period_private);
    mca_common_sfio_rangelist_destroy(&obj->period_shared);
    free(obj->pending_views);
    free(obj->pending_blocks);
    mca_common_sfio_objects_init(obj);
}

void mca_common_sfio_objects_defer(objects_t *obj, mca_common_sfio_view_t *views, size_t nviews,
                                   void *blocks_mem, size_t max_ranges)
{
    mca_common_sfio_objects_destroy(obj);
    obj->pending_views = views;
    obj->pending_blocks = blocks_mem;
    obj->pending_nviews = nviews;
    obj->pending_max_ranges = max_ranges;
}

bool mca_common_sfio_objects_pending(const objects_t *obj)
{
    return NULL != obj->pending_views;
}

bool mca_common_sfio_objects_none_private(const objects_t *obj)
{
    return NULL == obj || !obj->valid ||
           (0 == obj->prefix_private.count && 0 == obj->period_private.count);
}

int mca_common_sfio_objects_resolve(objects_t *obj)
{
    mca_common_sfio_view_t *views = obj->pending_views;
    void *mem = obj->pending_blocks;
    int rc;
    if (NULL == views) {
        return 0;
    }
    obj->pending_views = NULL;
    obj->pending_blocks = NULL;
    rc = mca_common_sfio_objects_compute(views, obj->pending_nviews, obj->pending_max_ranges, obj);
    obj->pending_nviews = 0;
    obj->pending_max_ranges = 0;
    free(views);
    free(mem);
    if (0 != rc) {
        mca_common_sfio_objects_destroy(obj);
    }
    return rc;
}

/* ---- compute ----------------------------------------------------------- */

typedef struct rank_t {
    bool active;
    bool dense;         /* A_r = [disp, inf) */
    uint64_t disp;
    uint64_t extent;
    list_t u;           /* normalized union of the blocks, relative to disp */
} rank_t;

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (0 != b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* lcm into *l_p; false on overflow. */
static bool lcm(uint64_t a, uint64_t b, uint64_t *l_p)
{
    uint64_t q = a / gcd(a, b);
    if (q > UINT64_MAX / b) {
        return false;
    }
    *l_p = q * b;
    return true;
}

/* Sorts *a_p, made of nruns ascending runs (run k is [run[k], run[k + 1]),
 * run[nruns] = n), by merging neighbouring runs pairwise: log2(nruns)
 * passes over n values instead of a sort of n log n comparisons, as a
 * rank's normalized ranges come sorted.  *tmp_p holds n values; the two
 * buffers may trade places; run[] is overwritten. */
static void merge_runs(uint64_t **a_p, uint64_t **tmp_p, size_t *run, size_t nruns)
{
    uint64_t *a = *a_p, *t = *tmp_p;
    while (nruns > 1) {
        size_t out = 0, k;
        for (k = 0; k < nruns; k += 2) {
            size_t lo = run[k], mid = run[k + 1], hi = k + 2 <= nruns ? run[k + 2] : mid;
            size_t x = lo, y = mid, o = lo;
            while (x < mid && y < hi) {
                t[o++] = a[y] < a[x] ? a[y++] : a[x++];
            }
            while (x < mid) {
                t[o++] = a[x++];
            }
            while (y < hi) {
                t[o++] = a[y++];
            }
            run[out++] = lo;
        }
        run[out] = run[nruns];
        nruns = out;
        uint64_t *swap = a;
        a = t;
        t = swap;
    }
    *a_p = a;
    *tmp_p = t;
}

/* Prepare rank r from its view: union of blocks, density.  0 or -errno. */
static int rank_setup(const mca_common_sfio_view_t *view, rank_t *r)
{
    size_t i;
    bool any = false;
    int rc;

    for (i = 0; i < view->nblocks && NULL != view->blocks; i++) {
        any = any || view->blocks[i].length > 0;
    }
    if (!any) {
        return 0;               /* accesses nothing */
    }
    rc = mca_common_sfio_view_verify(view);
    if (0 != rc) {
        return rc;
    }
    for (i = 0; i < view->nblocks; i++) {
        rc = mca_common_sfio_rangelist_add(&r->u, view->blocks[i].offset, view->blocks[i].length);
        if (0 != rc) {
            return rc;
        }
    }
    mca_common_sfio_rangelist_normalize(&r->u);
    r->active = true;
    r->disp = view->disp;
    r->extent = view->extent;
    r->dense = 0 == r->u.ranges[0].offset && range_end(&r->u.ranges[0]) >= view->extent;
    return 0;
}

/* Generate A_r ∩ [disp, end) as sorted arrays of starts and ends. */
static void rank_emit(const rank_t *r, uint64_t end, uint64_t *starts, uint64_t *ends, size_t *n)
{
    const list_t *u = &r->u;
    uint64_t base;
    size_t i;

    if (r->dense) {
        starts[*n] = r->disp;
        ends[(*n)++] = end;
        return;
    }
    /* base < end <= UINT64_MAX and extent <= P <= end - S, so no wrap */
    for (base = r->disp; base < end; base += r->extent) {
        for (i = 0; i < u->count; i++) {
            uint64_t lo, len = u->ranges[i].length;
            if (u->ranges[i].offset >= end - base) {
                break;
            }
            lo = base + u->ranges[i].offset;
            starts[*n] = lo;
            ends[(*n)++] = len > end - lo ? end : lo + len;
        }
        if (r->extent > end - base) {
            break;
        }
    }
}

/* Record segment [lo, hi) of class cls into the prefix or the period lists. */
static int emit_segment(objects_t *o, uint64_t lo, uint64_t hi, int cls)
{
    uint64_t s = o->period_start;
    int rc = 0;
    list_t *pre = cls == MCA_COMMON_SFIO_OBJECTS_PRIVATE ? &o->prefix_private : &o->prefix_shared;
    list_t *per = cls == MCA_COMMON_SFIO_OBJECTS_PRIVATE ? &o->period_private : &o->period_shared;

    if (lo < s) {
        rc = mca_common_sfio_rangelist_add(pre, lo, (hi < s ? hi : s) - lo);
    }
    if (0 == rc && hi > s) {
        uint64_t from = lo > s ? lo : s;
        rc = mca_common_sfio_rangelist_add(per, from - s, hi - from);
    }
    return rc;
}

/* Sweep the boundaries: count of ranks per piece, emit private/shared. */
static int sweep(objects_t *o, const uint64_t *starts, const uint64_t *ends, size_t n)
{
    size_t i = 0, j = 0;
    size_t c = 0;

    while (j < n) {
        uint64_t p = i < n && starts[i] < ends[j] ? starts[i] : ends[j], next;
        while (j < n && ends[j] == p) {
            c--;
            j++;
        }
        while (i < n && starts[i] == p) {
            c++;
            i++;
        }
        if (0 == c) {
            continue;
        }
        next = i < n && starts[i] < ends[j] ? starts[i] : ends[j];   /* j < n as c > 0 */
        if (0 != emit_segment(o, p, next, c == 1 ? MCA_COMMON_SFIO_OBJECTS_PRIVATE
                                                 : MCA_COMMON_SFIO_OBJECTS_SHARED)) {
            return -ENOMEM;
        }
    }
    return 0;
}

int mca_common_sfio_objects_compute(const mca_common_sfio_view_t *views, size_t nviews,
                                    size_t max_ranges, objects_t *obj_p)
{
    rank_t *ranks;
    objects_t res;
    uint64_t *starts = NULL, *ends = NULL, *tmp = NULL;
    uint64_t period = 1, start = UINT64_MAX, s = 0, end;
    size_t i, total = 0, n = 0, nruns = 0, *run = NULL;
    bool any = false;
    int rc = 0;

    if (NULL == obj_p || (nviews > 0 && NULL == views)) {
        return -EINVAL;
    }
    if (0 == max_ranges) {
        max_ranges = MCA_COMMON_SFIO_OBJECTS_DEFAULT_MAX_RANGES;
    }
    ranks = calloc(nviews > 0 ? nviews : 1, sizeof(*ranks));
    if (NULL == ranks) {
        return -ENOMEM;
    }
    mca_common_sfio_objects_init(&res);
    for (i = 0; i < nviews; i++) {
        mca_common_sfio_rangelist_init(&ranks[i].u);
    }

    /* per rank: union of blocks, then start = min disp, S = max T_r, P */
    for (i = 0; i < nviews && 0 == rc; i++) {
        rank_t *r = &ranks[i];
        uint64_t t;
        rc = rank_setup(&views[i], r);
        if (0 != rc || !r->active) {
            continue;
        }
        any = true;
        t = r->disp;
        if (!r->dense) {
            uint64_t maxend = range_end(&r->u.ranges[r->u.count - 1]);
            if (maxend > r->extent) {
                if (maxend - r->extent > UINT64_MAX - t) {
                    rc = -E2BIG;
                    continue;
                }
                t += maxend - r->extent;
            }
            if (!lcm(period, r->extent, &period)) {
                rc = -E2BIG;
                continue;
            }
        }
        start = r->disp < start ? r->disp : start;
        s = t > s ? t : s;
    }
    if (0 != rc) {
        goto out;
    }
    if (!any) {
        start = s = 0;
    }
    if (period > UINT64_MAX - s) {
        rc = -E2BIG;
        goto out;
    }
    end = s + period;
    res.start = start;
    res.period_start = s;
    res.period = period;

    /* bound the work before doing it: ranges per rank over [disp, end) */
    for (i = 0; i < nviews; i++) {
        const rank_t *r = &ranks[i];
        uint64_t periods, cnt;
        if (!r->active) {
            continue;
        }
        /* number of k >= 0 with disp + k * extent < end */
        periods = r->dense ? 1 : (end - r->disp) / r->extent + (0 != (end - r->disp) % r->extent);
        cnt = r->dense ? 1 : periods * r->u.count;
        if ((!r->dense && periods > UINT64_MAX / r->u.count) || cnt > max_ranges - total) {
            rc = -E2BIG;
            goto out;
        }
        total += (size_t) cnt;
    }

    starts = malloc((total > 0 ? total : 1) * sizeof(uint64_t));
    ends = malloc((total > 0 ? total : 1) * sizeof(uint64_t));
    tmp = malloc((total > 0 ? total : 1) * sizeof(uint64_t));
    run = malloc(2 * (nviews + 1) * sizeof(size_t));
    if (NULL == starts || NULL == ends || NULL == tmp || NULL == run) {
        rc = -ENOMEM;
        goto out;
    }
    /* a rank's own ranges may overlap (blocks past the extent); make each
     * rank count once per byte by normalizing its ranges first */
    for (i = 0; i < nviews; i++) {
        list_t a;
        size_t k, first = n;
        if (!ranks[i].active) {
            continue;
        }
        run[nruns++] = first;
        rank_emit(&ranks[i], end, starts, ends, &n);
        mca_common_sfio_rangelist_init(&a);
        if (0 != mca_common_sfio_rangelist_reserve(&a, n - first)) {
            rc = -ENOMEM;
            goto out;
        }
        for (k = first; k < n; k++) {
            (void) mca_common_sfio_rangelist_add(&a, starts[k], ends[k] - starts[k]);
        }
        mca_common_sfio_rangelist_normalize(&a);
        n = first;
        for (k = 0; k < a.count; k++) {
            starts[n] = a.ranges[k].offset;
            ends[n++] = range_end(&a.ranges[k]);
        }
        mca_common_sfio_rangelist_destroy(&a);
    }
    /* each rank's starts and ends ascend (normalized): merge the ranks' runs */
    run[nruns] = n;
    memcpy(run + nruns + 1, run, (nruns + 1) * sizeof(size_t));
    merge_runs(&starts, &tmp, run, nruns);
    merge_runs(&ends, &tmp, run + nruns + 1, nruns);
    rc = sweep(&res, starts, ends, n);
    if (0 == rc) {
        res.valid = true;
        mca_common_sfio_objects_destroy(obj_p);
        *obj_p = res;
        mca_common_sfio_objects_init(&res);
    }

out:
    for (i = 0; i < nviews; i++) {
        mca_common_sfio_rangelist_destroy(&ranks[i].u);
    }
    free(ranks);
    free(starts);
    free(ends);
    free(tmp);
    free(run);
    mca_common_sfio_objects_destroy(&res);
    return rc;
}

/* ---- queries ----------------------------------------------------------- */

/* Index of the first range of normalized l that ends after x (or count). */
static size_t first_ending_after(const list_t *l, uint64_t x)
{
    size_t lo = 0, hi = l->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (range_end(&l->ranges[mid]) > x) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo;
}

static bool list_contains(const list_t *l, uint64_t x)
{
    size_t k = first_ending_after(l, x);
    return k < l->count && l->ranges[k].offset <= x;
}

int mca_common_sfio_objects_class_at(const objects_t *obj, uint64_t offset,
                                     mca_common_sfio_objects_class_t *class_p)
{
    const list_t *priv, *shared;
    uint64_t x = offset;

    if (!obj->valid) {
        *class_p = MCA_COMMON_SFIO_OBJECTS_SHARED;
        return 0;
    }
    if (offset < obj->start) {
        *class_p = MCA_COMMON_SFIO_OBJECTS_NONE;
        return 0;
    }
    if (offset < obj->period_start) {
        priv = &obj->prefix_private;
        shared = &obj->prefix_shared;
    } else {
        priv = &obj->period_private;
        shared = &obj->period_shared;
        x = (offset - obj->period_start) % obj->period;
    }
    *class_p = list_contains(priv, x) ? MCA_COMMON_SFIO_OBJECTS_PRIVATE
             : list_contains(shared, x) ? MCA_COMMON_SFIO_OBJECTS_SHARED
             : MCA_COMMON_SFIO_OBJECTS_NONE;
    return 0;
}

/* Add to out the private bytes of [lo, hi) (lo < hi). */
static int private_of_range(const objects_t *o, uint64_t lo, uint64_t hi, list_t *out)
{
    const list_t *pp = &o->period_private;
    uint64_t s = o->period_start, from, to, base;
    size_t j;
    int rc = 0;

    /* prefix part */
    from = lo > o->start ? lo : o->start;
    to = hi < s ? hi : s;
    if (from < to) {
        const list_t *l = &o->prefix_private;
        for (j = first_ending_after(l, from); j < l->count && l->ranges[j].offset < to; j++) {
            uint64_t a = l->ranges[j].offset > from ? l->ranges[j].offset : from;
            uint64_t b = range_end(&l->ranges[j]) < to ? range_end(&l->ranges[j]) : to;
            rc |= mca_common_sfio_rangelist_add(out, a, b - a);
        }
    }

    /* periodic part: walk the period's private ranges, period after period */
    from = lo > s ? lo : s;
    if (from >= hi || 0 == pp->count) {
        return rc;
    }
    if (1 == pp->count && 0 == pp->ranges[0].offset && o->period == pp->ranges[0].length) {
        /* every byte of the period is private: one piece, however many periods */
        return rc | mca_common_sfio_rangelist_add(out, from, hi - from);
    }
    base = s + (from - s) / o->period * o->period;        /* <= from */
    j = first_ending_after(pp, from - base);
    while (0 == rc) {
        uint64_t a, len;
        if (j == pp->count) {
            if (o->period > UINT64_MAX - base || base + o->period >= hi) {
                break;
            }
            base += o->period;
            j = 0;
        }
        if (pp->ranges[j].offset >= hi - base) {
            break;
        }
        a = base + pp->ranges[j].offset;
        len = pp->ranges[j].length;
        if (a < from) {                 /* only the first range can start early */
            len -= from - a;
            a = from;
        }
        if (len > hi - a) {
            len = hi - a;
        }
        rc = mca_common_sfio_rangelist_add(out, a, len);
        j++;
    }
    return rc;
}

int mca_common_sfio_objects_split(const objects_t *obj, const list_t *access,
                                  list_t *private_p, list_t *shared_p)
{
    list_t priv, shared;
    size_t i;
    int rc = 0;

    if (!access->normalized || private_p == shared_p || access == private_p
        || access == shared_p) {
        return -EINVAL;
    }
    mca_common_sfio_rangelist_init(&priv);
    mca_common_sfio_rangelist_init(&shared);
    if (obj->valid) {
        for (i = 0; i < access->count && 0 == rc; i++) {
            rc = private_of_range(obj, access->ranges[i].offset, range_end(&access->ranges[i]),
                                  &priv);
        }
    }
    if (0 == rc) {
        rc = mca_common_sfio_rangelist_subtract(access, &priv, &shared);
    }
    if (0 != rc) {
        mca_common_sfio_rangelist_destroy(&priv);
        mca_common_sfio_rangelist_destroy(&shared);
        return -ENOMEM;
    }
    mca_common_sfio_rangelist_swap(&priv, private_p);
    mca_common_sfio_rangelist_swap(&shared, shared_p);
    mca_common_sfio_rangelist_destroy(&priv);
    mca_common_sfio_rangelist_destroy(&shared);
    return 0;
}

/* ---- verification ------------------------------------------------------ */

static bool list_ok(const list_t *l, uint64_t lo, uint64_t hi)
{
    if (0 != mca_common_sfio_rangelist_verify(l) || !l->normalized) {
        return false;
    }
    return 0 == l->count
        || (l->ranges[0].offset >= lo && range_end(&l->ranges[l->count - 1]) <= hi);
}

static bool disjoint(const list_t *a, const list_t *b)
{
    size_t i = 0, j = 0;
    while (i < a->count && j < b->count) {
        uint64_t ea = range_end(&a->ranges[i]), eb = range_end(&b->ranges[j]);
        if (a->ranges[i].offset < eb && b->ranges[j].offset < ea) {
            return false;
        }
        if (ea <= eb) {
            i++;
        } else {
            j++;
        }
    }
    return true;
}

int mca_common_sfio_objects_verify(const objects_t *obj)
{
    if (NULL == obj) {
        return -EINVAL;
    }
    if (!obj->valid) {
        return 0 == obj->prefix_private.count && 0 == obj->prefix_shared.count
            && 0 == obj->period_private.count && 0 == obj->period_shared.count ? 0 : -EINVAL;
    }
    if (obj->start > obj->period_start || 0 == obj->period
        || obj->period > UINT64_MAX - obj->period_start) {
        return -EINVAL;
    }
    if (!list_ok(&obj->prefix_private, obj->start, obj->period_start)
        || !list_ok(&obj->prefix_shared, obj->start, obj->period_start)
        || !list_ok(&obj->period_private, 0, obj->period)
        || !list_ok(&obj->period_shared, 0, obj->period)) {
        return -EINVAL;
    }
    if (!disjoint(&obj->prefix_private, &obj->prefix_shared)
        || !disjoint(&obj->period_private, &obj->period_shared)) {
        return -EINVAL;
    }
    return 0;
}
