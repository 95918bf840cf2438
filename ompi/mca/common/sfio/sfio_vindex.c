/*
 * sfio_vindex: version index (see header).
 */
#include <errno.h>
#include <stdlib.h>

#include "sfio_vindex.h"

#define AUX_RANK_SHIFT 48
#define AUX_LOG_MASK   (MCA_COMMON_SFIO_VINDEX_MAX_LOG - 1)

static mca_common_sfio_vpiece_t piece_of(const mca_common_sfio_rangemap_entry_t *e,
                                         uint64_t lo, uint64_t hi)
{
    /* Clip entry e to [lo, hi); the log offset moves with the cut. */
    uint64_t start = e->offset > lo ? e->offset : lo;
    uint64_t end = e->offset + e->length < hi ? e->offset + e->length : hi;
    return (mca_common_sfio_vpiece_t) {
        .offset = start, .length = end - start,
        .rank = (int) (e->value.aux >> AUX_RANK_SHIFT),
        .log_offset = (e->value.aux & AUX_LOG_MASK) + (start - e->offset),
        .version = e->value.version,
    };
}

int mca_common_sfio_vindex_init(mca_common_sfio_vindex_t *vi,
                                const mca_common_sfio_allocator_t *alloc)
{
    vi->applied = 0;
    return mca_common_sfio_rangemap_init(&vi->map, alloc, 0);
}

void mca_common_sfio_vindex_destroy(mca_common_sfio_vindex_t *vi)
{
    mca_common_sfio_rangemap_destroy(&vi->map);
}

void mca_common_sfio_vindex_clear(mca_common_sfio_vindex_t *vi)
{
    mca_common_sfio_rangemap_clear(&vi->map);
}

int mca_common_sfio_vindex_apply(mca_common_sfio_vindex_t *vi, int rank,
                                 const mca_common_sfio_record_t *record)
{
    if (record->version <= vi->applied || rank < 0 ||
        (unsigned) rank >= MCA_COMMON_SFIO_VINDEX_MAX_RANKS ||
        record->log_offset > MCA_COMMON_SFIO_VINDEX_MAX_LOG ||
        record->data_bytes > MCA_COMMON_SFIO_VINDEX_MAX_LOG - record->log_offset) {
        return -EINVAL;
    }
    if (MCA_COMMON_SFIO_RECORD_WRITE == record->kind) {
        /* Ranges are in data order: range i's bytes follow range i-1's in
         * the log.  Within one record a later range wins an overlap, as a
         * later piece of one MPI write does. */
        uint64_t log = record->log_offset;
        for (uint32_t i = 0; i < record->nranges; ++i) {
            const mca_common_sfio_range_t *r = &record->ranges[i];
            if (r->length > 0) {
                mca_common_sfio_rangemap_value_t v = {
                    .version = record->version,
                    .aux = ((uint64_t) rank << AUX_RANK_SHIFT) | log,
                };
                int rc = mca_common_sfio_rangemap_assign(&vi->map, r->offset, r->length, &v);
                if (rc < 0) {
                    return rc;
                }
            }
            log += r->length;
        }
    }
    vi->applied = record->version;
    return 0;
}

static int by_version(const void *a, const void *b)
{
    const mca_common_sfio_vindex_pending_t *x = a, *y = b;
    if (x->record.version != y->record.version) {
        return x->record.version < y->record.version ? -1 : 1;
    }
    /* WRITE (1) before ABORT (2): the write is applied, the abort skipped. */
    return (int) x->record.kind - (int) y->record.kind;
}

int mca_common_sfio_vindex_apply_batch(mca_common_sfio_vindex_t *vi,
                                       mca_common_sfio_vindex_pending_t *pending, size_t n)
{
    qsort(pending, n, sizeof(*pending), by_version);
    for (size_t i = 0; i < n;) {
        uint64_t v = pending[i].record.version;
        size_t j = i;
        while (j < n && pending[j].record.version == v) {
            ++j;
        }
        /* [i, j) share version v; WRITEs sort first */
        if (v > vi->applied) {
            uint64_t before = vi->applied;
            for (size_t k = i; k < j; ++k) {
                if (MCA_COMMON_SFIO_RECORD_WRITE != pending[k].record.kind && k > i) {
                    continue;
                }
                if (k > i) {
                    vi->applied = before;   /* another WRITE of the same version */
                }
                int rc = mca_common_sfio_vindex_apply(vi, pending[k].rank, &pending[k].record);
                if (rc < 0) {
                    return rc;
                }
            }
        }
        i = j;
    }
    return 0;
}

int mca_common_sfio_vindex_pieces(const mca_common_sfio_vindex_t *vi, uint64_t offset,
                                  uint64_t length, mca_common_sfio_vpiece_cb_t cb, void *ctx)
{
    const uint64_t end = offset + length;
    uint64_t pos = offset;
    mca_common_sfio_rangemap_iter_t it;
    const mca_common_sfio_rangemap_entry_t *e;
    int rc;

    if (0 == length) {
        return 0;
    }
    rc = mca_common_sfio_rangemap_iter_init(&vi->map, offset, length, &it);
    if (rc < 0) {
        return rc;
    }
    /* Invariant: [offset, pos) has been reported. */
    while (0 == mca_common_sfio_rangemap_iter_next(&it, &e)) {
        mca_common_sfio_vpiece_t p = piece_of(e, offset, end);
        if (p.offset > pos) {
            mca_common_sfio_vpiece_t flat = { .offset = pos, .length = p.offset - pos, .rank = -1 };
            if ((rc = cb(&flat, ctx)) != 0) return rc;
        }
        if ((rc = cb(&p, ctx)) != 0) return rc;
        pos = p.offset + p.length;
    }
    if (pos < end) {
        mca_common_sfio_vpiece_t flat = { .offset = pos, .length = end - pos, .rank = -1 };
        if ((rc = cb(&flat, ctx)) != 0) return rc;
    }
    return 0;
}

bool mca_common_sfio_vindex_overlaps(const mca_common_sfio_vindex_t *vi, uint64_t offset,
                                     uint64_t length)
{
    mca_common_sfio_rangemap_iter_t it;
    const mca_common_sfio_rangemap_entry_t *e;
    if (0 == length || mca_common_sfio_vindex_empty(vi) ||
        mca_common_sfio_rangemap_iter_init(&vi->map, offset, length, &it) < 0) {
        return false;
    }
    return 0 == mca_common_sfio_rangemap_iter_next(&it, &e);
}

typedef struct {
    int rank;
    mca_common_sfio_vpiece_cb_t cb;
    void *ctx;
} rank_filter_t;

static int rank_filter(const mca_common_sfio_rangemap_entry_t *e, void *ctx)
{
    rank_filter_t *f = ctx;
    if ((int) (e->value.aux >> AUX_RANK_SHIFT) != f->rank) {
        return 0;
    }
    mca_common_sfio_vpiece_t p = piece_of(e, e->offset, e->offset + e->length);
    return f->cb(&p, f->ctx);
}

int mca_common_sfio_vindex_foreach_rank(const mca_common_sfio_vindex_t *vi, int rank,
                                        mca_common_sfio_vpiece_cb_t cb, void *ctx)
{
    rank_filter_t f = { .rank = rank, .cb = cb, .ctx = ctx };
    return mca_common_sfio_rangemap_foreach(&vi->map, 0, UINT64_MAX, rank_filter, &f);
}
