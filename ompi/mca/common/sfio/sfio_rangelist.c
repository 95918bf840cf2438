/*
 * sfio_rangelist: growable range arrays (Aarestad, Ching et al.'s lock lists), their set
 * operations, and the MPI-IO view walker.  See sfio_rangelist.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sfio_rangelist.h"

typedef mca_common_sfio_range_t range_t;
typedef mca_common_sfio_rangelist_t list_t;

static uint64_t range_end(const range_t *r)
{
    return r->offset + r->length;
}

static bool range_ok(uint64_t offset, uint64_t length)
{
    return length <= UINT64_MAX - offset;
}

void mca_common_sfio_rangelist_init(list_t *list)
{
    list->ranges = NULL;
    list->count = 0;
    list->capacity = 0;
    list->normalized = true;
}

void mca_common_sfio_rangelist_destroy(list_t *list)
{
    free(list->ranges);
    mca_common_sfio_rangelist_init(list);
}

void mca_common_sfio_rangelist_clear(list_t *list)
{
    list->count = 0;
    list->normalized = true;
}

int mca_common_sfio_rangelist_reserve(list_t *list, size_t capacity)
{
    range_t *r;
    if (capacity <= list->capacity) {
        return 0;
    }
    if (capacity > SIZE_MAX / sizeof(range_t)) {
        return -ENOMEM;
    }
    r = realloc(list->ranges, capacity * sizeof(range_t));
    if (NULL == r) {
        return -ENOMEM;
    }
    list->ranges = r;
    list->capacity = capacity;
    return 0;
}

/* Room for one more range, growing geometrically. */
static int grow_for_one(list_t *list)
{
    size_t want;
    if (list->count < list->capacity) {
        return 0;
    }
    want = list->capacity < 8 ? 16 : list->capacity * 2;
    if (want < list->capacity) {
        return -ENOMEM;
    }
    return mca_common_sfio_rangelist_reserve(list, want);
}

/* Appends [offset, offset + length) as a range of its own. */
static int push_new(list_t *list, uint64_t offset, uint64_t length)
{
    if (0 != grow_for_one(list)) {
        return -ENOMEM;
    }
    list->ranges[list->count].offset = offset;
    list->ranges[list->count].length = length;
    list->count++;
    return 0;
}

void mca_common_sfio_rangelist_swap(list_t *a, list_t *b)
{
    list_t t = *a;
    *a = *b;
    *b = t;
}

int mca_common_sfio_rangelist_add(list_t *list, uint64_t offset, uint64_t length)
{
    if (!range_ok(offset, length)) {
        return -EINVAL;
    }
    if (0 == length) {
        return 0;
    }
    if (list->count > 0) {
        range_t *last = &list->ranges[list->count - 1];
        uint64_t lend = range_end(last);
        if (offset >= last->offset && offset <= lend) {
            /* starts inside the last range or right at its end: extend it.
             * Earlier ranges are untouched, so `normalized` still holds. */
            if (offset + length > lend) {
                last->length = offset + length - last->offset;
            }
            return 0;
        }
        if (offset < last->offset) {
            list->normalized = false;
        }
    }
    return push_new(list, offset, length);
}

int mca_common_sfio_rangelist_append(list_t *dst, const list_t *src)
{
    size_t i, n = src->count;

    if (n > SIZE_MAX - dst->count
        || 0 != mca_common_sfio_rangelist_reserve(dst, dst->count + n)) {
        return -ENOMEM;
    }
    for (i = 0; i < n; i++) {
        /* cannot fail: room is reserved and src ranges are valid */
        (void) mca_common_sfio_rangelist_add(dst, src->ranges[i].offset, src->ranges[i].length);
    }
    return 0;
}

static int cmp_range(const void *pa, const void *pb)
{
    const range_t *a = pa, *b = pb;
    if (a->offset != b->offset) {
        return a->offset < b->offset ? -1 : 1;
    }
    if (a->length != b->length) {
        return a->length < b->length ? -1 : 1;
    }
    return 0;
}

void mca_common_sfio_rangelist_normalize(list_t *list)
{
    size_t i, w;
    bool sorted = true;

    if (list->normalized) {
        return;
    }
    for (i = 1; i < list->count && sorted; i++) {
        sorted = list->ranges[i - 1].offset <= list->ranges[i].offset;
    }
    if (!sorted) {
        qsort(list->ranges, list->count, sizeof(range_t), cmp_range);
    }
    /* merge overlapping and touching neighbours */
    for (i = 0, w = 0; i < list->count; i++) {
        const range_t *r = &list->ranges[i];
        if (w > 0 && r->offset <= range_end(&list->ranges[w - 1])) {
            range_t *prev = &list->ranges[w - 1];
            if (range_end(r) > range_end(prev)) {
                prev->length = range_end(r) - prev->offset;
            }
        } else {
            list->ranges[w++] = *r;
        }
    }
    list->count = w;
    list->normalized = true;
}

int mca_common_sfio_rangelist_intersect(const list_t *a, const list_t *b, list_t *out_p)
{
    list_t tmp;
    size_t i = 0, j = 0;

    if (!a->normalized || !b->normalized || out_p == a || out_p == b) {
        return -EINVAL;
    }
    mca_common_sfio_rangelist_init(&tmp);
    while (i < a->count && j < b->count) {
        const range_t *ra = &a->ranges[i], *rb = &b->ranges[j];
        uint64_t lo = ra->offset > rb->offset ? ra->offset : rb->offset;
        uint64_t ea = range_end(ra), eb = range_end(rb);
        uint64_t hi = ea < eb ? ea : eb;
        if (lo < hi && 0 != mca_common_sfio_rangelist_add(&tmp, lo, hi - lo)) {
            mca_common_sfio_rangelist_destroy(&tmp);
            return -ENOMEM;
        }
        if (ea <= eb) {
            i++;
        } else {
            j++;
        }
    }
    mca_common_sfio_rangelist_swap(&tmp, out_p);
    mca_common_sfio_rangelist_destroy(&tmp);
    return 0;
}

int mca_common_sfio_rangelist_subtract(const list_t *a, const list_t *b, list_t *out_p)
{
    list_t tmp;
    size_t i, j = 0;

    if (!a->normalized || !b->normalized || out_p == a || out_p == b) {
        return -EINVAL;
    }
    mca_common_sfio_rangelist_init(&tmp);
    for (i = 0; i < a->count; i++) {
        uint64_t cur = a->ranges[i].offset, aend = range_end(&a->ranges[i]);
        size_t k;
        int rc = 0;
        /* b ranges ending at or before cur can no longer matter */
        while (j < b->count && range_end(&b->ranges[j]) <= cur) {
            j++;
        }
        for (k = j; k < b->count && b->ranges[k].offset < aend && cur < aend; k++) {
            if (b->ranges[k].offset > cur) {
                rc |= mca_common_sfio_rangelist_add(&tmp, cur, b->ranges[k].offset - cur);
            }
            if (range_end(&b->ranges[k]) > cur) {
                cur = range_end(&b->ranges[k]);
            }
        }
        if (cur < aend) {
            rc |= mca_common_sfio_rangelist_add(&tmp, cur, aend - cur);
        }
        if (0 != rc) {
            mca_common_sfio_rangelist_destroy(&tmp);
            return -ENOMEM;
        }
    }
    mca_common_sfio_rangelist_swap(&tmp, out_p);
    mca_common_sfio_rangelist_destroy(&tmp);
    return 0;
}

uint64_t mca_common_sfio_rangelist_bytes(const list_t *list)
{
    uint64_t sum = 0;
    size_t i;
    for (i = 0; i < list->count; i++) {
        sum += list->ranges[i].length;
    }
    return sum;
}

int mca_common_sfio_rangelist_verify(const list_t *list)
{
    size_t i;
    if (NULL == list || list->count > list->capacity
        || (list->capacity > 0 && NULL == list->ranges)) {
        return -EINVAL;
    }
    for (i = 0; i < list->count; i++) {
        const range_t *r = &list->ranges[i];
        if (0 == r->length || !range_ok(r->offset, r->length)) {
            return -EINVAL;
        }
        if (list->normalized && i > 0 && range_end(&list->ranges[i - 1]) >= r->offset) {
            return -EINVAL;
        }
    }
    return 0;
}

/* ---- view walking ------------------------------------------------------ */

int mca_common_sfio_view_verify(const mca_common_sfio_view_t *view)
{
    size_t i;
    bool any = false;
    if (NULL == view || 0 == view->extent || (view->nblocks > 0 && NULL == view->blocks)) {
        return -EINVAL;
    }
    for (i = 0; i < view->nblocks; i++) {
        if (!range_ok(view->blocks[i].offset, view->blocks[i].length)) {
            return -EINVAL;
        }
        any = any || view->blocks[i].length > 0;
    }
    return any ? 0 : -EINVAL;
}

/* Append [offset, offset + length) (length > 0), merging only with a last
 * range it exactly continues, so the list keeps the access order and its
 * lengths add up to the data moved. */
static int push_in_order(list_t *list, uint64_t offset, uint64_t length)
{
    if (list->count > 0) {
        range_t *last = &list->ranges[list->count - 1];
        uint64_t lend = range_end(last);
        if (offset == lend) {
            last->length += length;
            return 0;
        }
        if (offset < lend) {
            list->normalized = false;
        }
    }
    return push_new(list, offset, length);
}

/* Blocks tile [0, extent) in typemap order: data byte d is file byte
 * disp + d. */
static bool view_is_contiguous(const mca_common_sfio_view_t *view)
{
    uint64_t expect = 0;
    size_t i;
    for (i = 0; i < view->nblocks; i++) {
        if (0 == view->blocks[i].length) {
            continue;
        }
        if (view->blocks[i].offset != expect) {
            return false;
        }
        expect += view->blocks[i].length;
    }
    return expect == view->extent;
}

static int walk_view(const mca_common_sfio_view_t *view, uint64_t start, uint64_t nbytes,
                     list_t *list)
{
    uint64_t size = 0, period, within, base;
    size_t i;

    for (i = 0; i < view->nblocks; i++) {
        if (view->blocks[i].length > UINT64_MAX - size) {
            return -EOVERFLOW;
        }
        size += view->blocks[i].length;
    }
    if (view_is_contiguous(view)) {
        if (start > UINT64_MAX - view->disp || !range_ok(view->disp + start, nbytes)) {
            return -EOVERFLOW;
        }
        return push_in_order(list, view->disp + start, nbytes);
    }

    /* locate data byte `start`: period, block, offset within the block */
    period = start / size;
    within = start % size;
    for (i = 0; within >= view->blocks[i].length; i++) {
        within -= view->blocks[i].length;       /* also skips empty blocks */
    }
    if (period > (UINT64_MAX - view->disp) / view->extent) {
        return -EOVERFLOW;
    }
    base = view->disp + period * view->extent;

    while (nbytes > 0) {
        const range_t *b = &view->blocks[i];
        uint64_t take = b->length - within;
        int rc;
        if (take > nbytes) {
            take = nbytes;
        }
        if (take > 0) {
            if (b->offset > UINT64_MAX - base || !range_ok(base + b->offset, within + take)) {
                return -EOVERFLOW;
            }
            rc = push_in_order(list, base + b->offset + within, take);
            if (0 != rc) {
                return rc;
            }
            nbytes -= take;
        }
        within = 0;
        if (++i == view->nblocks && nbytes > 0) {
            i = 0;
            if (view->extent > UINT64_MAX - base) {
                return -EOVERFLOW;
            }
            base += view->extent;
        }
    }
    return 0;
}

int mca_common_sfio_view_map_access(const mca_common_sfio_view_t *view,
                                    uint64_t start, uint64_t nbytes, list_t *list_p)
{
    size_t old_count;
    bool old_normalized;
    range_t old_last = { 0, 0 };
    int rc;

    if (0 != mca_common_sfio_view_verify(view) || !range_ok(start, nbytes)) {
        return -EINVAL;
    }
    if (0 == nbytes) {
        return 0;
    }
    old_count = list_p->count;
    old_normalized = list_p->normalized;
    if (old_count > 0) {
        old_last = list_p->ranges[old_count - 1];
    }
    rc = walk_view(view, start, nbytes, list_p);
    if (0 != rc) {
        /* roll back: drop appended ranges, undo a merge into the old last */
        list_p->count = old_count;
        list_p->normalized = old_normalized;
        if (old_count > 0) {
            list_p->ranges[old_count - 1] = old_last;
        }
    }
    return rc;
}
