/*
 * Unit tests of sfio_vindex: edge cases (empty index, version order, rank
 * and log limits, ABORT records, duplicate versions in a batch, allocation
 * failure), and seeded random runs compared with a byte-level reference
 * model.  The random runs build records the way the store does (a rank's
 * bytes laid out in its data log in data order, the record's log offset is
 * that rank's log tail), encode and decode them, apply them one by one or
 * as shuffled batches, and after every step compare every byte of the file
 * area (pieces), each rank's share (foreach_rank) and overlap queries with
 * the model, and verify the underlying rangemap.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sfio_check.h"
#include "sfio_record.h"
#include "sfio_vindex.h"

typedef mca_common_sfio_vindex_t vindex_t;
typedef mca_common_sfio_vpiece_t vpiece_t;
typedef mca_common_sfio_range_t range_t;
typedef mca_common_sfio_record_t record_t;
typedef mca_common_sfio_vindex_pending_t pending_t;

#define WRITE MCA_COMMON_SFIO_RECORD_WRITE
#define ABORT MCA_COMMON_SFIO_RECORD_ABORT

#define VERIFY(vi) REQUIRE(0 == mca_common_sfio_rangemap_verify(&(vi)->map))

/* ---- records ----------------------------------------------------------- */

/* An encoded record and its decoded view (ranges point into buf). */
typedef struct {
    uint64_t *buf;
    record_t rec;
    int rank;
} encoded_t;

static void encode(encoded_t *e, int rank, mca_common_sfio_record_kind_t kind, uint64_t version,
                   uint64_t log_offset, const range_t *ranges, uint32_t nranges)
{
    size_t size = mca_common_sfio_record_size(nranges);
    e->buf = malloc(size);
    ck_assert_ptr_nonnull(e->buf);
    mca_common_sfio_record_encode(e->buf, kind, version, log_offset, ranges, nranges);
    REQUIRE(0 == mca_common_sfio_record_decode(e->buf, size, &e->rec));
    e->rank = rank;
}

static void release(encoded_t *e)
{
    free(e->buf);
    e->buf = NULL;
}

/* Encode and apply one record; returns apply's result. */
static int apply1(vindex_t *vi, int rank, mca_common_sfio_record_kind_t kind, uint64_t version,
                  uint64_t log_offset, const range_t *ranges, uint32_t nranges)
{
    encoded_t e;
    encode(&e, rank, kind, version, log_offset, ranges, nranges);
    int rc = mca_common_sfio_vindex_apply(vi, rank, &e.rec);
    release(&e);
    VERIFY(vi);
    return rc;
}

/* ---- collecting pieces ------------------------------------------------- */

typedef struct {
    vpiece_t *p;
    size_t n, cap;
    int stop_after;   /* > 0: return 7 from the stop_after-th call */
} pieces_t;

static int collect(const vpiece_t *piece, void *ctx)
{
    pieces_t *c = ctx;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->p = realloc(c->p, c->cap * sizeof(*c->p));
        ck_assert_ptr_nonnull(c->p);
    }
    c->p[c->n++] = *piece;
    return (c->stop_after > 0 && (size_t) c->stop_after == c->n) ? 7 : 0;
}

/* pieces() of [off, off + len) into c, checking that they tile the range
 * exactly, in order, without two flat pieces in a row. */
static void get_pieces(const vindex_t *vi, uint64_t off, uint64_t len, pieces_t *c)
{
    c->n = 0;
    c->stop_after = 0;
    REQUIRE(0 == mca_common_sfio_vindex_pieces(vi, off, len, collect, c));
    uint64_t pos = off;
    for (size_t i = 0; i < c->n; ++i) {
        const vpiece_t *p = &c->p[i];
        REQUIRE(p->offset == pos);
        REQUIRE(p->length > 0);
        REQUIRE(p->length <= off + len - pos);
        if (p->rank < 0) {
            REQUIRE(-1 == p->rank);
            REQUIRE(0 == p->version);
            REQUIRE(0 == i || c->p[i - 1].rank >= 0);
        } else {
            REQUIRE(p->version > 0);
            REQUIRE(p->rank < (int) MCA_COMMON_SFIO_VINDEX_MAX_RANKS);
            REQUIRE(p->log_offset + p->length <= MCA_COMMON_SFIO_VINDEX_MAX_LOG);
        }
        pos += p->length;
    }
    REQUIRE(pos == off + len);
    REQUIRE((0 == len) == (0 == c->n));
}

static void expect_piece(const vpiece_t *p, uint64_t off, uint64_t len, int rank, uint64_t log,
                         uint64_t version)
{
    ck_assert_uint_eq(p->offset, off);
    ck_assert_uint_eq(p->length, len);
    ck_assert_int_eq(p->rank, rank);
    if (rank >= 0) {
        ck_assert_uint_eq(p->log_offset, log);
    }
    ck_assert_uint_eq(p->version, version);
}

/* ---- edge cases -------------------------------------------------------- */

START_TEST(test_empty)
{
    vindex_t vi;
    pieces_t c = { 0 };

    ck_assert_int_eq(mca_common_sfio_vindex_init(&vi, NULL), 0);
    VERIFY(&vi);
    ck_assert(mca_common_sfio_vindex_empty(&vi));
    ck_assert_uint_eq(vi.applied, 0);
    get_pieces(&vi, 0, 100, &c);
    ck_assert_uint_eq(c.n, 1);
    expect_piece(&c.p[0], 0, 100, -1, 0, 0);
    get_pieces(&vi, 12345, 0, &c);   /* zero length: no piece */
    get_pieces(&vi, UINT64_MAX - 10, 10, &c);
    ck_assert_uint_eq(c.n, 1);
    get_pieces(&vi, 0, UINT64_MAX, &c);
    ck_assert_uint_eq(c.n, 1);
    ck_assert(!mca_common_sfio_vindex_overlaps(&vi, 0, UINT64_MAX));
    c.n = 0;
    ck_assert_int_eq(mca_common_sfio_vindex_foreach_rank(&vi, 0, collect, &c), 0);
    ck_assert_uint_eq(c.n, 0);
    /* a wrapping query is refused */
    ck_assert_int_ne(mca_common_sfio_vindex_pieces(&vi, 10, UINT64_MAX, collect, &c), 0);
    mca_common_sfio_vindex_clear(&vi);
    ck_assert(mca_common_sfio_vindex_empty(&vi));
    mca_common_sfio_vindex_destroy(&vi);
    free(c.p);
}
END_TEST

START_TEST(test_version_order)
{
    vindex_t vi;
    range_t r = { 0, 10 }, r2 = { 100, 10 };

    ck_assert_int_eq(mca_common_sfio_vindex_init(&vi, NULL), 0);
    ck_assert_int_eq(apply1(&vi, 0, WRITE, 1, 0, &r, 1), 0);
    ck_assert_uint_eq(vi.applied, 1);
    /* the same version again, an older one: refused, nothing changes */
    ck_assert_int_eq(apply1(&vi, 1, WRITE, 1, 0, &r2, 1), -EINVAL);
    ck_assert_int_eq(apply1(&vi, 1, ABORT, 1, 0, NULL, 0), -EINVAL);
    ck_assert(!mca_common_sfio_vindex_overlaps(&vi, 100, 10));
    /* gaps are fine (versions of other files, or not yet seen ranks) */
    ck_assert_int_eq(apply1(&vi, 1, WRITE, 3, 0, &r2, 1), 0);
    ck_assert_uint_eq(vi.applied, 3);
    ck_assert_int_eq(apply1(&vi, 2, WRITE, 2, 0, &r, 1), -EINVAL);
    ck_assert_uint_eq(vi.applied, 3);
    ck_assert_uint_eq(mca_common_sfio_rangemap_count(&vi.map), 2);
    /* ABORT only advances applied, even with ranges in it */
    ck_assert_int_eq(apply1(&vi, 2, ABORT, 4, 0, &r2, 1), 0);
    ck_assert_uint_eq(vi.applied, 4);
    ck_assert_uint_eq(mca_common_sfio_rangemap_count(&vi.map), 2);
    ck_assert_int_eq(apply1(&vi, 2, ABORT, 4, 0, NULL, 0), -EINVAL);
    ck_assert_int_eq(apply1(&vi, 2, WRITE, 4, 0, &r, 1), -EINVAL);
    /* an empty WRITE advances applied too */
    ck_assert_int_eq(apply1(&vi, 2, WRITE, 5, 0, NULL, 0), 0);
    ck_assert_uint_eq(vi.applied, 5);
    /* clear forgets versions, keeps applied */
    mca_common_sfio_vindex_clear(&vi);
    VERIFY(&vi);
    ck_assert(mca_common_sfio_vindex_empty(&vi));
    ck_assert_uint_eq(vi.applied, 5);
    ck_assert_int_eq(apply1(&vi, 2, WRITE, 5, 0, &r, 1), -EINVAL);
    ck_assert_int_eq(apply1(&vi, 2, WRITE, 6, 0, &r, 1), 0);
    ck_assert(mca_common_sfio_vindex_overlaps(&vi, 9, 1));
    ck_assert(!mca_common_sfio_vindex_overlaps(&vi, 10, 90));
    mca_common_sfio_vindex_destroy(&vi);
}
END_TEST

START_TEST(test_rank_and_log_limits)
{
    vindex_t vi;
    range_t r = { 1000, 16 };
    pieces_t c = { 0 };
    const uint64_t max_log = MCA_COMMON_SFIO_VINDEX_MAX_LOG;
    const int max_rank = (int) MCA_COMMON_SFIO_VINDEX_MAX_RANKS - 1;

    ck_assert_int_eq(mca_common_sfio_vindex_init(&vi, NULL), 0);
    ck_assert_int_eq(apply1(&vi, -1, WRITE, 1, 0, &r, 1), -EINVAL);
    ck_assert_int_eq(apply1(&vi, max_rank + 1, WRITE, 1, 0, &r, 1), -EINVAL);
    ck_assert_int_eq(apply1(&vi, 0, WRITE, 1, max_log - 15, &r, 1), -EINVAL);
    ck_assert_int_eq(apply1(&vi, 0, WRITE, 1, max_log, &r, 1), -EINVAL);
    ck_assert_uint_eq(vi.applied, 0);
    ck_assert(mca_common_sfio_vindex_empty(&vi));

    /* the largest rank and the last bytes of the log space */
    ck_assert_int_eq(apply1(&vi, max_rank, WRITE, 1, max_log - 16, &r, 1), 0);
    get_pieces(&vi, 1000, 16, &c);
    ck_assert_uint_eq(c.n, 1);
    expect_piece(&c.p[0], 1000, 16, max_rank, max_log - 16, 1);
    get_pieces(&vi, 1008, 8, &c);
    expect_piece(&c.p[0], 1008, 8, max_rank, max_log - 8, 1);
    c.n = 0;
    ck_assert_int_eq(mca_common_sfio_vindex_foreach_rank(&vi, max_rank, collect, &c), 0);
    ck_assert_uint_eq(c.n, 1);
    expect_piece(&c.p[0], 1000, 16, max_rank, max_log - 16, 1);
    c.n = 0;
    ck_assert_int_eq(mca_common_sfio_vindex_foreach_rank(&vi, 0, collect, &c), 0);
    ck_assert_uint_eq(c.n, 0);

    /* an empty record may sit exactly at the end of the log space */
    ck_assert_int_eq(apply1(&vi, 0, WRITE, 2, max_log, NULL, 0), 0);
    /* file ranges at the top of the offset space */
    range_t top = { UINT64_MAX - 4, 4 };
    ck_assert_int_eq(apply1(&vi, 3, WRITE, 3, 0, &top, 1), 0);
    get_pieces(&vi, UINT64_MAX - 8, 8, &c);
    ck_assert_uint_eq(c.n, 2);
    expect_piece(&c.p[0], UINT64_MAX - 8, 4, -1, 0, 0);
    expect_piece(&c.p[1], UINT64_MAX - 4, 4, 3, 0, 3);
    ck_assert(mca_common_sfio_vindex_overlaps(&vi, UINT64_MAX - 1, 1));
    mca_common_sfio_vindex_destroy(&vi);
    free(c.p);
}
END_TEST

START_TEST(test_pieces_example)
{
    vindex_t vi;
    pieces_t c = { 0 };
    /* v1 by rank 2: file [10,20) then [40,45), log [100,115) */
    range_t a[2] = { { 10, 10 }, { 40, 5 } };
    /* v2 by rank 5: file [15,45) at log [0,30) */
    range_t b = { 15, 30 };
    /* v3 by rank 2: [0,10) then [5,15): the later range wins [5,10) */
    range_t d[2] = { { 0, 10 }, { 5, 10 } };

    ck_assert_int_eq(mca_common_sfio_vindex_init(&vi, NULL), 0);
    ck_assert_int_eq(apply1(&vi, 2, WRITE, 1, 100, a, 2), 0);
    ck_assert_int_eq(apply1(&vi, 5, WRITE, 2, 0, &b, 1), 0);
    get_pieces(&vi, 0, 60, &c);
    ck_assert_uint_eq(c.n, 4);
    expect_piece(&c.p[0], 0, 10, -1, 0, 0);
    expect_piece(&c.p[1], 10, 5, 2, 100, 1);
    expect_piece(&c.p[2], 15, 30, 5, 0, 2);
    expect_piece(&c.p[3], 45, 15, -1, 0, 0);
    /* a query starting and ending inside entries is clipped, log offsets
     * moving with the cut */
    get_pieces(&vi, 12, 20, &c);
    ck_assert_uint_eq(c.n, 2);
    expect_piece(&c.p[0], 12, 3, 2, 102, 1);
    expect_piece(&c.p[1], 15, 17, 5, 0, 2);
    get_pieces(&vi, 20, 5, &c);
    ck_assert_uint_eq(c.n, 1);
    expect_piece(&c.p[0], 20, 5, 5, 5, 2);

    ck_assert_int_eq(apply1(&vi, 2, WRITE, 3, 115, d, 2), 0);
    get_pieces(&vi, 0, 50, &c);
    ck_assert_uint_eq(c.n, 4);
    expect_piece(&c.p[0], 0, 5, 2, 115, 3);
    expect_piece(&c.p[1], 5, 10, 2, 125, 3);
    expect_piece(&c.p[2], 15, 30, 5, 0, 2);
    expect_piece(&c.p[3], 45, 5, -1, 0, 0);

    /* foreach_rank: rank 2 won [0,15) only, rank 5 [15,45) */
    c.n = 0;
    ck_assert_int_eq(mca_common_sfio_vindex_foreach_rank(&vi, 2, collect, &c), 0);
    ck_assert_uint_eq(c.n, 2);
    expect_piece(&c.p[0], 0, 5, 2, 115, 3);
    expect_piece(&c.p[1], 5, 10, 2, 125, 3);
    c.n = 0;
    ck_assert_int_eq(mca_common_sfio_vindex_foreach_rank(&vi, 5, collect, &c), 0);
    ck_assert_uint_eq(c.n, 1);
    expect_piece(&c.p[0], 15, 30, 5, 0, 2);

    /* overlaps */
    ck_assert(mca_common_sfio_vindex_overlaps(&vi, 44, 100));
    ck_assert(!mca_common_sfio_vindex_overlaps(&vi, 45, 100));
    ck_assert(!mca_common_sfio_vindex_overlaps(&vi, 10, 0));

    /* callbacks stop the walk and their value is returned */
    c.n = 0;
    c.stop_after = 2;
    ck_assert_int_eq(mca_common_sfio_vindex_pieces(&vi, 0, 100, collect, &c), 7);
    ck_assert_uint_eq(c.n, 2);
    c.n = 0;
    c.stop_after = 4;   /* the final flat piece */
    ck_assert_int_eq(mca_common_sfio_vindex_pieces(&vi, 0, 100, collect, &c), 7);
    ck_assert_uint_eq(c.n, 4);
    c.n = 0;
    c.stop_after = 1;
    ck_assert_int_eq(mca_common_sfio_vindex_foreach_rank(&vi, 2, collect, &c), 7);
    ck_assert_uint_eq(c.n, 1);
    mca_common_sfio_vindex_destroy(&vi);
    free(c.p);
}
END_TEST

START_TEST(test_batch_duplicate_version)
{
    range_t w = { 0, 10 }, x = { 5, 10 }, y = { 50, 1 };
    pieces_t c = { 0 };

    /* every order of: v1 WRITE by 3, v2 ABORT by 1, v2 WRITE by 0, v4 WRITE
     * by 2, plus a stale v1 ABORT */
    for (int perm = 0; perm < 120; ++perm) {
        vindex_t vi;
        encoded_t e[5];
        pending_t pend[5];
        int order[5] = { 0, 1, 2, 3, 4 }, p = perm;

        encode(&e[0], 3, WRITE, 1, 0, &w, 1);
        encode(&e[1], 1, ABORT, 2, 0, NULL, 0);
        encode(&e[2], 0, WRITE, 2, 40, &x, 1);
        encode(&e[3], 2, WRITE, 4, 7, &y, 1);
        encode(&e[4], 1, ABORT, 1, 0, NULL, 0);
        for (int i = 5; i > 1; --i) {   /* the perm-th permutation */
            int j = p % i, t = order[i - 1];
            p /= i;
            order[i - 1] = order[j];
            order[j] = t;
        }
        for (int i = 0; i < 5; ++i) {
            pend[i].rank = e[order[i]].rank;
            pend[i].record = e[order[i]].rec;
        }
        ck_assert_int_eq(mca_common_sfio_vindex_init(&vi, NULL), 0);
        ck_assert_int_eq(mca_common_sfio_vindex_apply_batch(&vi, pend, 5), 0);
        VERIFY(&vi);
        ck_assert_uint_eq(vi.applied, 4);
        get_pieces(&vi, 0, 60, &c);
        ck_assert_uint_eq(c.n, 5);
        expect_piece(&c.p[0], 0, 5, 3, 0, 1);
        expect_piece(&c.p[1], 5, 10, 0, 40, 2);
        expect_piece(&c.p[2], 15, 35, -1, 0, 0);
        expect_piece(&c.p[3], 50, 1, 2, 7, 4);
        expect_piece(&c.p[4], 51, 9, -1, 0, 0);

        /* a later batch re-delivering old records skips them */
        for (int i = 0; i < 5; ++i) {
            pend[i].rank = e[i].rank;
            pend[i].record = e[i].rec;
        }
        ck_assert_int_eq(mca_common_sfio_vindex_apply_batch(&vi, pend, 5), 0);
        ck_assert_uint_eq(vi.applied, 4);
        ck_assert_uint_eq(mca_common_sfio_rangemap_count(&vi.map), 3);
        ck_assert_int_eq(mca_common_sfio_vindex_apply_batch(&vi, NULL, 0), 0);
        mca_common_sfio_vindex_destroy(&vi);
        for (int i = 0; i < 5; ++i) {
            release(&e[i]);
        }
    }
    free(c.p);
}
END_TEST

START_TEST(test_batch_error_stops)
{
    vindex_t vi;
    range_t r = { 0, 8 };
    encoded_t e[3];
    pending_t pend[3];

    encode(&e[0], 0, WRITE, 1, 0, &r, 1);
    encode(&e[1], -1, WRITE, 2, 0, &r, 1);   /* bad rank */
    encode(&e[2], 0, WRITE, 3, 8, &r, 1);
    for (int i = 0; i < 3; ++i) {
        pend[2 - i].rank = e[i].rank;
        pend[2 - i].record = e[i].rec;
    }
    ck_assert_int_eq(mca_common_sfio_vindex_init(&vi, NULL), 0);
    ck_assert_int_eq(mca_common_sfio_vindex_apply_batch(&vi, pend, 3), -EINVAL);
    VERIFY(&vi);
    ck_assert_uint_eq(vi.applied, 1);
    mca_common_sfio_vindex_destroy(&vi);
    for (int i = 0; i < 3; ++i) {
        release(&e[i]);
    }
}
END_TEST

/* An allocator that fails once `budget` allocations have been made. */
typedef struct {
    long budget;
    long live;
} fail_alloc_t;

static void *fail_alloc(void *ctx, size_t size)
{
    fail_alloc_t *f = ctx;
    if (f->budget <= 0) {
        return NULL;
    }
    f->budget--;
    f->live++;
    return malloc(size);
}

static void fail_free(void *ctx, void *ptr, size_t size)
{
    fail_alloc_t *f = ctx;
    (void) size;
    f->live--;
    free(ptr);
}

START_TEST(test_enomem_then_retry)
{
    fail_alloc_t fa = { 0, 0 };
    mca_common_sfio_allocator_t alloc = { fail_alloc, fail_free, &fa };
    vindex_t vi;
    range_t base[3] = { { 0, 10 }, { 20, 10 }, { 40, 10 } };
    range_t r[3] = { { 5, 10 }, { 25, 2 }, { 45, 20 } };   /* needs several nodes */
    encoded_t e;
    pieces_t c = { 0 };

    for (long budget = 0; budget < 8; ++budget) {
        fa.budget = 3;
        ck_assert_int_eq(mca_common_sfio_vindex_init(&vi, &alloc), 0);
        ck_assert_int_eq(apply1(&vi, 0, WRITE, 1, 0, base, 3), 0);
        fa.budget = budget;
        encode(&e, 1, WRITE, 2, 0, r, 3);
        int rc = mca_common_sfio_vindex_apply(&vi, 1, &e.rec);
        VERIFY(&vi);
        if (rc < 0) {
            /* the version is not taken: retrying once memory is back gives
             * the same result as a first success */
            ck_assert_int_eq(rc, -ENOMEM);
            ck_assert_uint_eq(vi.applied, 1);
            fa.budget = 100;
            ck_assert_int_eq(mca_common_sfio_vindex_apply(&vi, 1, &e.rec), 0);
            VERIFY(&vi);
        }
        ck_assert_uint_eq(vi.applied, 2);
        get_pieces(&vi, 0, 70, &c);
        ck_assert_uint_eq(c.n, 10);
        expect_piece(&c.p[0], 0, 5, 0, 0, 1);
        expect_piece(&c.p[1], 5, 10, 1, 0, 2);
        expect_piece(&c.p[2], 15, 5, -1, 0, 0);
        expect_piece(&c.p[3], 20, 5, 0, 10, 1);
        expect_piece(&c.p[4], 25, 2, 1, 10, 2);
        expect_piece(&c.p[5], 27, 3, 0, 17, 1);
        expect_piece(&c.p[6], 30, 10, -1, 0, 0);
        expect_piece(&c.p[7], 40, 5, 0, 20, 1);
        expect_piece(&c.p[8], 45, 20, 1, 12, 2);
        expect_piece(&c.p[9], 65, 5, -1, 0, 0);
        release(&e);
        mca_common_sfio_vindex_destroy(&vi);
        ck_assert_int_eq(fa.live, 0);
    }
    free(c.p);
}
END_TEST

/* ---- overflow regressions (found by these tests, fixed) ------------------ */

/* apply checks log_offset + data_bytes > MAX_LOG, but the sum can wrap past
 * UINT64_MAX; the log offset then spills into the rank bits of aux. */
START_TEST(test_log_offset_wraps)
{
    vindex_t vi;
    range_t r = { 1000, 8 };
    range_t big[2] = { { 0, 1ull << 62 }, { 1ull << 62, 1ull << 62 } };   /* 2^63 bytes */

    ck_assert_int_eq(mca_common_sfio_vindex_init(&vi, NULL), 0);
    ck_assert_int_eq(apply1(&vi, 3, WRITE, 1, UINT64_MAX - 7, &r, 1), -EINVAL);
    ck_assert_int_eq(apply1(&vi, 3, WRITE, 1, 1ull << 63, big, 2), -EINVAL);
    ck_assert(mca_common_sfio_vindex_empty(&vi));
    ck_assert_uint_eq(vi.applied, 0);
    mca_common_sfio_vindex_destroy(&vi);
}
END_TEST

/* ---- random runs against a byte model ---------------------------------- */

#define UNIVERSE 3000u   /* bytes of the file area the writes fall in */
#define MAX_RANGES 8

typedef struct {
    int rank;          /* -1: flat */
    uint64_t log;
    uint64_t version;
} src_t;

typedef struct {
    int rank;
    mca_common_sfio_record_kind_t kind;
    uint64_t version;
    uint64_t log_offset;
    uint32_t nranges;
    range_t ranges[MAX_RANGES];
} write_t;

typedef struct {
    src_t byte[UNIVERSE];
    size_t indexed;
} model_t;

static void model_apply(model_t *m, const write_t *w, uint64_t base)
{
    uint64_t log = w->log_offset;
    if (WRITE != w->kind) {
        return;
    }
    for (uint32_t i = 0; i < w->nranges; ++i) {
        for (uint64_t k = 0; k < w->ranges[i].length; ++k) {
            src_t *s = &m->byte[w->ranges[i].offset - base + k];
            if (s->rank < 0) {
                m->indexed++;
            }
            *s = (src_t) { w->rank, log + k, w->version };
        }
        log += w->ranges[i].length;
    }
}

/* A write as the store makes it: the pieces of one access in data order,
 * possibly overlapping each other; neighbours that continue each other in
 * the file are merged; the bytes go to the rank's log tail. */
static void make_write(write_t *w, int rank, uint64_t version, uint64_t *tail, uint64_t base)
{
    uint32_t k = (uint32_t) rnd_below(MAX_RANGES + 1);
    uint64_t total = 0;

    w->rank = rank;
    w->kind = WRITE;
    w->version = version;
    w->log_offset = *tail;
    w->nranges = 0;
    for (uint32_t i = 0; i < k; ++i) {
        uint64_t off, len = rnd_below(4) ? rnd_below(200) : rnd_below(UNIVERSE / 2);
        if (w->nranges > 0 && rnd_below(4) == 0) {   /* continue the previous piece */
            range_t *p = &w->ranges[w->nranges - 1];
            off = p->offset + p->length - base;
        } else {
            off = rnd_below(UNIVERSE);
        }
        if (off + len > UNIVERSE) {
            len = UNIVERSE - off;
        }
        if (0 == len) {
            continue;
        }
        if (w->nranges > 0 &&
            w->ranges[w->nranges - 1].offset + w->ranges[w->nranges - 1].length == base + off) {
            w->ranges[w->nranges - 1].length += len;
        } else {
            w->ranges[w->nranges++] = (range_t) { base + off, len };
        }
        total += len;
    }
    *tail += total;
    if (rnd_below(10) == 0) {
        *tail += 1 + rnd_below(100);   /* a failed write: log bytes never reused */
    }
}

/* Compare the index with the model over the whole area and at random. */
static void compare(const vindex_t *vi, const model_t *m, uint64_t base, int nranks,
                    pieces_t *c)
{
    /* every byte of the area, plus a margin of flat bytes around it */
    uint64_t lo = base >= 64 ? base - 64 : 0;
    uint64_t hi = base + UNIVERSE + (UINT64_MAX - base - UNIVERSE >= 64 ? 64 : 0);
    get_pieces(vi, lo, hi - lo, c);
    for (size_t i = 0; i < c->n; ++i) {
        const vpiece_t *p = &c->p[i];
        for (uint64_t k = 0; k < p->length; ++k) {
            uint64_t x = p->offset + k;
            if (x < base || x >= base + UNIVERSE) {
                REQUIRE(p->rank < 0);
                continue;
            }
            const src_t *s = &m->byte[x - base];
            REQUIRE(p->rank == s->rank);
            if (s->rank >= 0) {
                REQUIRE(p->log_offset + k == s->log);
                REQUIRE(p->version == s->version);
            }
        }
    }
    REQUIRE(mca_common_sfio_rangemap_bytes(&vi->map) == m->indexed);
    REQUIRE(mca_common_sfio_vindex_empty(vi) == (0 == m->indexed));

    /* random sub-queries: same answer, clipped */
    for (int q = 0; q < 20; ++q) {
        uint64_t off = rnd_below(UNIVERSE), len = rnd_below(UNIVERSE - off + 1);
        bool any = false;
        get_pieces(vi, base + off, len, c);
        for (size_t i = 0; i < c->n; ++i) {
            const vpiece_t *p = &c->p[i];
            const src_t *s = &m->byte[p->offset - base];
            REQUIRE(p->rank == s->rank);
            if (s->rank >= 0) {
                REQUIRE(p->log_offset == s->log);
                REQUIRE(p->version == s->version);
            }
        }
        for (uint64_t k = off; k < off + len; ++k) {
            any = any || m->byte[k].rank >= 0;
        }
        REQUIRE(mca_common_sfio_vindex_overlaps(vi, base + off, len) == any);
    }

    /* foreach_rank: each rank's pieces are exactly its bytes in the model,
     * ascending and disjoint; together they are all indexed bytes */
    size_t total = 0;
    for (int r = 0; r < nranks; ++r) {
        size_t mine = 0;
        uint64_t prev_end = 0;
        c->n = 0;
        c->stop_after = 0;
        REQUIRE(0 == mca_common_sfio_vindex_foreach_rank(vi, r, collect, c));
        for (size_t i = 0; i < c->n; ++i) {
            const vpiece_t *p = &c->p[i];
            REQUIRE(p->rank == r);
            REQUIRE(p->length > 0);
            REQUIRE(p->offset >= base && p->offset + p->length <= base + UNIVERSE);
            REQUIRE(0 == i || p->offset >= prev_end);
            prev_end = p->offset + p->length;
            for (uint64_t k = 0; k < p->length; ++k) {
                const src_t *s = &m->byte[p->offset - base + k];
                REQUIRE(s->rank == r);
                REQUIRE(s->log == p->log_offset + k);
                REQUIRE(s->version == p->version);
            }
            mine += p->length;
        }
        total += mine;
        for (size_t x = 0; x < UNIVERSE; ++x) {
            mine -= (m->byte[x].rank == r);
        }
        REQUIRE(0 == mine);
    }
    REQUIRE(total == m->indexed);
}

static void shuffle(pending_t *p, size_t n)
{
    for (size_t i = n; i > 1; --i) {
        size_t j = (size_t) rnd_below(i);
        pending_t t = p[i - 1];
        p[i - 1] = p[j];
        p[j] = t;
    }
}

/*
 * One random history: nversions global versions taken by random ranks
 * (some aborted: a dead writer's version, sometimes beside the late WRITE
 * of the same version), applied one by one (batch == false) or as shuffled
 * batches that may re-deliver old records (batch == true).
 */
static void random_run(uint64_t seed, uint64_t base, int nranks, int nversions, bool batch)
{
    model_t *m = malloc(sizeof(*m));
    write_t *w = malloc(2 * (size_t) nversions * sizeof(*w));
    encoded_t *e = malloc(2 * (size_t) nversions * sizeof(*e));
    pending_t *pend = malloc(4 * (size_t) nversions * sizeof(*pend));
    uint64_t tail[16] = { 0 };
    pieces_t c = { 0 };
    vindex_t vi;
    int nw = 0;

    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(w);
    ck_assert_ptr_nonnull(e);
    ck_assert_ptr_nonnull(pend);
    ck_assert_int_le(nranks, 16);
    rng_state = seed;
    for (size_t x = 0; x < UNIVERSE; ++x) {
        m->byte[x] = (src_t) { -1, 0, 0 };
    }
    m->indexed = 0;

    /* the history, in version order; versions may skip numbers */
    uint64_t v = 0;
    for (int i = 0; i < nversions; ++i) {
        int rank = (int) rnd_below((uint64_t) nranks);
        v += 1 + (rnd_below(8) == 0 ? rnd_below(3) : 0);
        switch (rnd_below(12)) {
        case 0:   /* the writer died before publishing: an ABORT only */
            w[nw] = (write_t) { .rank = rank, .kind = ABORT, .version = v };
            if (rnd_below(2)) {   /* its ranges, if any, must be ignored */
                make_write(&w[nw], rank, v, &tail[rank], base);
                w[nw].kind = ABORT;
            }
            nw++;
            break;
        case 1:   /* declared dead, but its WRITE arrived too */
            w[nw++] = (write_t) { .rank = (rank + 1) % nranks, .kind = ABORT, .version = v };
            make_write(&w[nw++], rank, v, &tail[rank], base);
            break;
        default:
            make_write(&w[nw++], rank, v, &tail[rank], base);
            break;
        }
    }
    for (int i = 0; i < nw; ++i) {
        encode(&e[i], w[i].rank, w[i].kind, w[i].version, w[i].log_offset, w[i].ranges,
               w[i].nranges);
    }

    ck_assert_int_eq(mca_common_sfio_vindex_init(&vi, NULL), 0);
    if (!batch) {
        for (int i = 0; i < nw; ++i) {
            int dup = i > 0 && w[i - 1].version == w[i].version;
            int rc = mca_common_sfio_vindex_apply(&vi, e[i].rank, &e[i].rec);
            VERIFY(&vi);
            if (dup) {
                /* the ABORT went first here, so the version is taken */
                REQUIRE(-EINVAL == rc);
                continue;
            }
            REQUIRE(0 == rc);
            REQUIRE(vi.applied == w[i].version);
            model_apply(m, &w[i], base);
            compare(&vi, m, base, nranks, &c);
        }
    } else {
        /* the model of a batch: the WRITE of a duplicated version wins */
        int done = 0;
        while (done < nw) {
            int end = done + 1 + (int) rnd_below(12);
            size_t n = 0;
            if (end > nw) {
                end = nw;
            }
            while (end < nw && w[end].version == w[end - 1].version) {
                end++;   /* a reader sees all records of a version or none */
            }
            for (int i = done; i < end; ++i) {
                pend[n++] = (pending_t) { e[i].rank, e[i].rec };
            }
            for (int k = (int) rnd_below(4); k > 0 && done > 0; --k) {   /* stale re-reads */
                int i = (int) rnd_below((uint64_t) done);
                pend[n++] = (pending_t) { e[i].rank, e[i].rec };
            }
            shuffle(pend, n);
            REQUIRE(0 == mca_common_sfio_vindex_apply_batch(&vi, pend, n));
            VERIFY(&vi);
            for (int i = done; i < end; ++i) {
                if (ABORT == w[i].kind && i + 1 < end && w[i + 1].version == w[i].version) {
                    continue;
                }
                model_apply(m, &w[i], base);
            }
            REQUIRE(vi.applied == w[end - 1].version);
            compare(&vi, m, base, nranks, &c);
            done = end;
        }
    }

    /* after a fold everything is flat again, and new versions apply */
    mca_common_sfio_vindex_clear(&vi);
    VERIFY(&vi);
    REQUIRE(mca_common_sfio_vindex_empty(&vi));
    REQUIRE(vi.applied == v);
    for (size_t x = 0; x < UNIVERSE; ++x) {
        m->byte[x] = (src_t) { -1, 0, 0 };
    }
    m->indexed = 0;
    compare(&vi, m, base, nranks, &c);
    write_t last;
    make_write(&last, 0, v + 1, &tail[0], base);
    encoded_t le;
    encode(&le, 0, WRITE, last.version, last.log_offset, last.ranges, last.nranges);
    REQUIRE(0 == mca_common_sfio_vindex_apply(&vi, 0, &le.rec));
    VERIFY(&vi);
    model_apply(m, &last, base);
    compare(&vi, m, base, nranks, &c);
    release(&le);

    mca_common_sfio_vindex_destroy(&vi);
    for (int i = 0; i < nw; ++i) {
        release(&e[i]);
    }
    free(c.p);
    free(pend);
    free(e);
    free(w);
    free(m);
}

START_TEST(test_random_sequential)
{
    random_run(0x5f10u + (uint64_t) _i, 4096, 1 + _i % 8, 1000, false);
}
END_TEST

START_TEST(test_random_batches)
{
    random_run(0xba7cu + (uint64_t) _i, 0, 1 + (3 * _i) % 8, 1000, true);
}
END_TEST

START_TEST(test_random_high_offsets)
{
    /* the area ends exactly at UINT64_MAX, the largest legal end */
    random_run(0x4191u, UINT64_MAX - UNIVERSE, 5, 300, false);
    random_run(0x4192u, UINT64_MAX - UNIVERSE, 16, 300, true);
    random_run(0x4193u, (1ull << 63) - UNIVERSE / 2, 3, 300, true);
}
END_TEST

static Suite *vindex_suite(void)
{
    Suite *s = suite_create("sfio_vindex");
    TCase *tc = tcase_create("edge");
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_version_order);
    tcase_add_test(tc, test_rank_and_log_limits);
    tcase_add_test(tc, test_pieces_example);
    tcase_add_test(tc, test_batch_duplicate_version);
    tcase_add_test(tc, test_batch_error_stops);
    tcase_add_test(tc, test_enomem_then_retry);
    suite_add_tcase(s, tc);

    tc = tcase_create("random");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_random_sequential, 0, 8);
    tcase_add_loop_test(tc, test_random_batches, 0, 8);
    tcase_add_test(tc, test_random_high_offsets);
    suite_add_tcase(s, tc);

    tc = tcase_create("overflow");
    tcase_add_test(tc, test_log_offset_wraps);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(vindex_suite)
