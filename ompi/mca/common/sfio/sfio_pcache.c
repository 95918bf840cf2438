/*
 * sfio_pcache: private-object cache (see header).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sfio_pcache.h"

#define SLAB_BYTES ((size_t) 1 << 20)

static inline uint64_t ext_end(const mca_common_sfio_pcache_extent_t *e)
{
    return e->offset + e->length;
}

void mca_common_sfio_pcache_init(mca_common_sfio_pcache_t *pc)
{
    memset(pc, 0, sizeof(*pc));
    pthread_mutex_init(&pc->lock, NULL);
}

void mca_common_sfio_pcache_clear(mca_common_sfio_pcache_t *pc)
{
    while (NULL != pc->slabs) {
        mca_common_sfio_pcache_slab_t *s = pc->slabs;
        pc->slabs = s->next;
        free(s);
    }
    pc->count = 0;
    pc->arena_bytes = 0;
    pc->cached_bytes = 0;
}

void mca_common_sfio_pcache_destroy(mca_common_sfio_pcache_t *pc)
{
    mca_common_sfio_pcache_clear(pc);
    free(pc->ext);
    pc->ext = NULL;
    pc->capacity = 0;
    pthread_mutex_destroy(&pc->lock);
}

uint64_t mca_common_sfio_pcache_need(const mca_common_sfio_ioseg_t *segs, size_t nsegs)
{
    uint64_t n = 0;
    for (size_t i = 0; i < nsegs; ++i) {
        n += segs[i].length;
    }
    return n;
}

/* Index of the first extent ending after offset (extents are disjoint and
 * ascending, so their ends ascend too). */
static size_t first_ending_after(const mca_common_sfio_pcache_t *pc, uint64_t offset)
{
    size_t lo = 0, hi = pc->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ext_end(&pc->ext[mid]) <= offset) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static char *arena_alloc(mca_common_sfio_pcache_t *pc, size_t len)
{
    mca_common_sfio_pcache_slab_t *s = pc->slabs;
    if (NULL == s || s->size - s->used < len) {
        size_t size = len > SLAB_BYTES ? len : SLAB_BYTES;
        s = malloc(sizeof(*s) + size);
        if (NULL == s) {
            return NULL;
        }
        s->size = size;
        s->used = 0;
        s->next = pc->slabs;
        pc->slabs = s;
    }
    char *p = s->data + s->used;
    s->used += len;
    pc->arena_bytes += len;
    return p;
}

static int reserve(mca_common_sfio_pcache_t *pc, size_t count)
{
    if (count <= pc->capacity) {
        return 0;
    }
    size_t cap = pc->capacity ? 2 * pc->capacity : 64;
    while (cap < count) {
        cap *= 2;
    }
    mca_common_sfio_pcache_extent_t *e = realloc(pc->ext, cap * sizeof(*e));
    if (NULL == e) {
        return -ENOMEM;
    }
    pc->ext = e;
    pc->capacity = cap;
    return 0;
}

static int put_one(mca_common_sfio_pcache_t *pc, uint64_t off, uint64_t len, const void *src)
{
    if (0 == len) {
        return 0;
    }
    uint64_t end = off + len;
    size_t i = first_ending_after(pc, off);
    if (i < pc->count && pc->ext[i].offset <= off && ext_end(&pc->ext[i]) >= end) {
        /* inside one extent: overwrite in place */
        memcpy(pc->ext[i].data + (off - pc->ext[i].offset), src, len);
        return 0;
    }
    if (0 != reserve(pc, pc->count + 2)) {
        return -ENOMEM;
    }
    char *data = arena_alloc(pc, len);
    if (NULL == data) {
        return -ENOMEM;
    }
    memcpy(data, src, len);

    size_t j = i;
    uint64_t covered = 0;
    while (j < pc->count && pc->ext[j].offset < end) {
        uint64_t a = pc->ext[j].offset > off ? pc->ext[j].offset : off;
        uint64_t b = ext_end(&pc->ext[j]) < end ? ext_end(&pc->ext[j]) : end;
        covered += b - a;
        ++j;
    }
    /* [i, j) overlap the new bytes; keep what sticks out on either side
     * (not both from one extent: that was the in-place case) */
    mca_common_sfio_pcache_extent_t repl[3];
    size_t k = 0;
    if (i < j && pc->ext[i].offset < off) {
        repl[k] = pc->ext[i];
        repl[k].length = off - repl[k].offset;
        ++k;
    }
    if (0 == k && i > 0 && ext_end(&pc->ext[i - 1]) == off &&
        pc->ext[i - 1].data + pc->ext[i - 1].length == data) {
        pc->ext[i - 1].length += len;   /* file- and arena-contiguous neighbour */
    } else {
        repl[k++] = (mca_common_sfio_pcache_extent_t) { .offset = off, .length = len, .data = data };
    }
    if (i < j && ext_end(&pc->ext[j - 1]) > end) {
        mca_common_sfio_pcache_extent_t r = pc->ext[j - 1];
        uint64_t cut = end - r.offset;
        repl[k++] = (mca_common_sfio_pcache_extent_t) {
            .offset = end, .length = r.length - cut, .data = r.data + cut,
        };
    }
    memmove(pc->ext + i + k, pc->ext + j, (pc->count - j) * sizeof(*pc->ext));
    memcpy(pc->ext + i, repl, k * sizeof(*repl));
    pc->count = pc->count - (j - i) + k;
    pc->cached_bytes += len - covered;
    return 0;
}

int mca_common_sfio_pcache_put(mca_common_sfio_pcache_t *pc, const mca_common_sfio_ioseg_t *segs,
                               size_t nsegs)
{
    for (size_t s = 0; s < nsegs; ++s) {
        int rc = put_one(pc, segs[s].offset, segs[s].length, segs[s].buf);
        if (0 != rc) {
            return rc;
        }
        pc->bytes_cached_total += segs[s].length;
    }
    return 0;
}

uint64_t mca_common_sfio_pcache_overlay(const mca_common_sfio_pcache_t *pc, uint64_t offset,
                                        uint64_t length, void *dst)
{
    uint64_t end = offset + length, copied = 0;
    for (size_t i = first_ending_after(pc, offset);
         i < pc->count && pc->ext[i].offset < end; ++i) {
        const mca_common_sfio_pcache_extent_t *e = &pc->ext[i];
        uint64_t a = e->offset > offset ? e->offset : offset;
        uint64_t b = ext_end(e) < end ? ext_end(e) : end;
        memcpy((char *) dst + (a - offset), e->data + (a - e->offset), b - a);
        copied += b - a;
    }
    return copied;
}

void mca_common_sfio_pcache_span(const mca_common_sfio_pcache_t *pc, uint64_t *lo, uint64_t *hi)
{
    *lo = pc->count ? pc->ext[0].offset : 0;
    *hi = pc->count ? ext_end(&pc->ext[pc->count - 1]) : 0;
}

uint64_t mca_common_sfio_pcache_domain_size(uint64_t lo, uint64_t hi, int nranks, uint64_t align)
{
    if (lo >= hi || nranks < 1) {
        return 0;
    }
    if (0 == align) {
        align = 1;
    }
    uint64_t span = hi - lo;
    uint64_t d = span / (uint64_t) nranks + (0 != span % (uint64_t) nranks);
    d = (d + align - 1) & ~(align - 1);
    return d ? d : align;
}

static int domain_of(uint64_t offset, uint64_t lo, uint64_t dsize, int nranks)
{
    uint64_t d = (offset - lo) / dsize;
    return d >= (uint64_t) nranks ? nranks - 1 : (int) d;
}

size_t mca_common_sfio_pcache_route_count(const mca_common_sfio_pcache_t *pc, uint64_t lo,
                                          uint64_t dsize, int nranks)
{
    size_t n = 0;
    for (size_t i = 0; i < pc->count; ++i) {
        const mca_common_sfio_pcache_extent_t *e = &pc->ext[i];
        n += (size_t) (domain_of(ext_end(e) - 1, lo, dsize, nranks) -
                       domain_of(e->offset, lo, dsize, nranks)) + 1;
    }
    return n;
}

void mca_common_sfio_pcache_route(const mca_common_sfio_pcache_t *pc, uint64_t lo, uint64_t dsize,
                                  int nranks, uint64_t *per_domain,
                                  mca_common_sfio_ioseg_t *pieces)
{
    size_t n = 0;
    memset(per_domain, 0, 2 * (size_t) nranks * sizeof(uint64_t));
    for (size_t i = 0; i < pc->count; ++i) {
        const mca_common_sfio_pcache_extent_t *e = &pc->ext[i];
        uint64_t off = e->offset, end = ext_end(e);
        while (off < end) {
            int d = domain_of(off, lo, dsize, nranks);
            uint64_t dend = d == nranks - 1 ? end : lo + (uint64_t) (d + 1) * dsize;
            uint64_t stop = dend < end ? dend : end;
            per_domain[2 * d] += 1;
            per_domain[2 * d + 1] += stop - off;
            if (NULL != pieces) {
                pieces[n++] = (mca_common_sfio_ioseg_t) {
                    .offset = off, .length = stop - off, .buf = e->data + (off - e->offset),
                };
            }
            off = stop;
        }
    }
}
