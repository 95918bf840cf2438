/*
 * Unit tests of sfio_rangelist: add/normalize (list locks of Aarestad, Ching et al.),
 * intersect/subtract, and the view walker.  Edge cases, verify() after each
 * operation, and seeded random runs against a byte-bitmap reference (sets)
 * and a byte-by-byte typemap expansion (view walks).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sfio_check.h"
#include "sfio_rangelist.h"

typedef mca_common_sfio_rangelist_t list_t;
typedef mca_common_sfio_range_t range_t;
typedef mca_common_sfio_view_t view_t;

#define VERIFY(l) REQUIRE(0 == mca_common_sfio_rangelist_verify(l))

static void expect_ranges(const list_t *l, const range_t *want, size_t n)
{
    size_t i;
    VERIFY(l);
    ck_assert_uint_eq(l->count, n);
    for (i = 0; i < n; i++) {
        ck_assert_uint_eq(l->ranges[i].offset, want[i].offset);
        ck_assert_uint_eq(l->ranges[i].length, want[i].length);
    }
}

/* ---- add / normalize --------------------------------------------------- */

START_TEST(test_add_edges)
{
    list_t l;
    mca_common_sfio_rangelist_init(&l);
    VERIFY(&l);
    ck_assert(l.normalized);
    ck_assert_int_eq(mca_common_sfio_rangelist_add(&l, 5, 0), 0);
    ck_assert_uint_eq(l.count, 0);
    ck_assert_int_eq(mca_common_sfio_rangelist_add(&l, UINT64_MAX - 1, 2), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_rangelist_add(&l, UINT64_MAX - 1, 1), 0);
    VERIFY(&l);
    ck_assert_uint_eq(l.count, 1);
    mca_common_sfio_rangelist_clear(&l);
    ck_assert_uint_eq(l.count, 0);

    /* ascending and touching: merged on the fly, stays normalized */
    ck_assert_int_eq(mca_common_sfio_rangelist_add(&l, 0, 10), 0);
    ck_assert_int_eq(mca_common_sfio_rangelist_add(&l, 10, 10), 0);
    ck_assert_int_eq(mca_common_sfio_rangelist_add(&l, 15, 2), 0);     /* inside last */
    VERIFY(&l);
    ck_assert(l.normalized);
    {
        const range_t w[] = { { 0, 20 } };
        expect_ranges(&l, w, 1);
    }
    ck_assert_int_eq(mca_common_sfio_rangelist_add(&l, 21, 4), 0);     /* gap */
    ck_assert(l.normalized);
    ck_assert_int_eq(mca_common_sfio_rangelist_add(&l, 3, 1), 0);      /* backwards */
    ck_assert(!l.normalized);
    VERIFY(&l);
    ck_assert_uint_eq(mca_common_sfio_rangelist_bytes(&l), 25);
    mca_common_sfio_rangelist_normalize(&l);
    {
        const range_t w[] = { { 0, 20 }, { 21, 4 } };
        expect_ranges(&l, w, 2);
    }
    mca_common_sfio_rangelist_destroy(&l);
    mca_common_sfio_rangelist_destroy(&l);     /* idempotent */
}
END_TEST

START_TEST(test_normalize_merges)
{
    list_t l;
    /* a datatype's pieces in typemap order, as Aarestad, Ching et al. collect them */
    const range_t in[] = { { 100, 10 }, { 50, 10 }, { 60, 5 }, { 0, 10 }, { 105, 20 },
                           { 10, 0 }, { 200, 1 }, { 5, 2 }, { 199, 1 }, { 30, 70 } };
    const range_t want[] = { { 0, 10 }, { 30, 95 }, { 199, 2 } };
    size_t i;
    mca_common_sfio_rangelist_init(&l);
    for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        ck_assert_int_eq(mca_common_sfio_rangelist_add(&l, in[i].offset, in[i].length), 0);
        VERIFY(&l);
    }
    mca_common_sfio_rangelist_normalize(&l);
    expect_ranges(&l, want, 3);
    ck_assert(l.normalized);
    mca_common_sfio_rangelist_normalize(&l);    /* idempotent */
    expect_ranges(&l, want, 3);

    /* full cover, duplicates, huge offsets */
    mca_common_sfio_rangelist_clear(&l);
    ck_assert_int_eq(mca_common_sfio_rangelist_add(&l, UINT64_MAX / 2, 10), 0);
    ck_assert_int_eq(mca_common_sfio_rangelist_add(&l, UINT64_MAX / 2, 10), 0);
    ck_assert_int_eq(mca_common_sfio_rangelist_add(&l, UINT64_MAX - 10, 10), 0);
    ck_assert_int_eq(mca_common_sfio_rangelist_add(&l, 0, UINT64_MAX / 2 + 1), 0);
    mca_common_sfio_rangelist_normalize(&l);
    {
        const range_t w[] = { { 0, UINT64_MAX / 2 + 10 }, { UINT64_MAX - 10, 10 } };
        expect_ranges(&l, w, 2);
    }
    mca_common_sfio_rangelist_destroy(&l);
}
END_TEST

START_TEST(test_append_swap_reserve)
{
    list_t a, b;
    mca_common_sfio_rangelist_init(&a);
    mca_common_sfio_rangelist_init(&b);
    ck_assert_int_eq(mca_common_sfio_rangelist_reserve(&a, 3), 0);
    ck_assert_uint_ge(a.capacity, 3);
    ck_assert_int_eq(mca_common_sfio_rangelist_add(&a, 10, 5), 0);
    ck_assert_int_eq(mca_common_sfio_rangelist_add(&b, 15, 5), 0);
    ck_assert_int_eq(mca_common_sfio_rangelist_add(&b, 0, 5), 0);
    ck_assert_int_eq(mca_common_sfio_rangelist_append(&a, &b), 0);
    VERIFY(&a);
    ck_assert(!a.normalized);
    ck_assert_uint_eq(mca_common_sfio_rangelist_bytes(&a), 15);
    ck_assert_int_eq(mca_common_sfio_rangelist_append(&a, &a), 0);   /* self */
    VERIFY(&a);
    ck_assert_uint_eq(mca_common_sfio_rangelist_bytes(&a), 30);
    mca_common_sfio_rangelist_normalize(&a);
    {
        const range_t w[] = { { 0, 5 }, { 10, 10 } };
        expect_ranges(&a, w, 2);
    }
    mca_common_sfio_rangelist_swap(&a, &b);
    ck_assert_uint_eq(b.count, 2);
    ck_assert_uint_eq(a.count, 2);
    ck_assert(!a.normalized);
    mca_common_sfio_rangelist_destroy(&a);
    mca_common_sfio_rangelist_destroy(&b);
}
END_TEST

/* ---- intersect / subtract --------------------------------------------- */

static void build(list_t *l, const range_t *r, size_t n)
{
    size_t i;
    mca_common_sfio_rangelist_init(l);
    for (i = 0; i < n; i++) {
        ck_assert_int_eq(mca_common_sfio_rangelist_add(l, r[i].offset, r[i].length), 0);
    }
    mca_common_sfio_rangelist_normalize(l);
}

START_TEST(test_set_ops_edges)
{
    list_t a, b, o;
    const range_t ra[] = { { 0, 10 }, { 20, 10 }, { 40, 10 }, { UINT64_MAX / 2, 100 } };
    const range_t rb[] = { { 10, 10 }, { 25, 20 }, { 49, 1 }, { UINT64_MAX / 2 + 50, 10 } };

    build(&a, ra, 4);
    build(&b, rb, 4);
    mca_common_sfio_rangelist_init(&o);
    ck_assert_int_eq(mca_common_sfio_rangelist_intersect(&a, &b, &o), 0);
    {
        /* [0,10)∩[10,20) touch only: nothing */
        const range_t w[] = { { 25, 5 }, { 40, 5 }, { 49, 1 }, { UINT64_MAX / 2 + 50, 10 } };
        expect_ranges(&o, w, 4);
        ck_assert(o.normalized);
    }
    ck_assert_int_eq(mca_common_sfio_rangelist_subtract(&a, &b, &o), 0);
    {
        const range_t w[] = { { 0, 10 }, { 20, 5 }, { 45, 4 }, { UINT64_MAX / 2, 50 },
                              { UINT64_MAX / 2 + 60, 40 } };
        expect_ranges(&o, w, 5);
    }
    ck_assert_int_eq(mca_common_sfio_rangelist_subtract(&b, &a, &o), 0);
    {
        const range_t w[] = { { 10, 10 }, { 30, 10 } };
        expect_ranges(&o, w, 2);
    }
    mca_common_sfio_rangelist_destroy(&o);
    mca_common_sfio_rangelist_destroy(&a);
    mca_common_sfio_rangelist_destroy(&b);
}
END_TEST

START_TEST(test_set_ops_identities)
{
    list_t a, e, o;
    const range_t ra[] = { { 3, 4 }, { 100, 1 } };
    build(&a, ra, 2);
    mca_common_sfio_rangelist_init(&e);
    mca_common_sfio_rangelist_init(&o);
    ck_assert_int_eq(mca_common_sfio_rangelist_subtract(&a, &a, &o), 0);
    ck_assert_uint_eq(o.count, 0);
    ck_assert_int_eq(mca_common_sfio_rangelist_intersect(&a, &a, &o), 0);
    expect_ranges(&o, ra, 2);
    ck_assert_int_eq(mca_common_sfio_rangelist_intersect(&a, &e, &o), 0);
    ck_assert_uint_eq(o.count, 0);
    ck_assert_int_eq(mca_common_sfio_rangelist_subtract(&a, &e, &o), 0);
    expect_ranges(&o, ra, 2);
    /* errors: out aliasing an input, unnormalized input; out unchanged */
    ck_assert_int_eq(mca_common_sfio_rangelist_intersect(&a, &o, &o), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_rangelist_add(&e, 50, 1), 0);
    ck_assert_int_eq(mca_common_sfio_rangelist_add(&e, 10, 1), 0);
    ck_assert_int_eq(mca_common_sfio_rangelist_subtract(&a, &e, &o), -EINVAL);
    expect_ranges(&o, ra, 2);
    mca_common_sfio_rangelist_destroy(&a);
    mca_common_sfio_rangelist_destroy(&e);
    mca_common_sfio_rangelist_destroy(&o);
}
END_TEST

/* ---- random sets against a bitmap ------------------------------------- */

#define UNIVERSE 512

static void bits_from_list(const list_t *l, uint64_t base, bool *bits)
{
    size_t i;
    uint64_t x;
    memset(bits, 0, UNIVERSE * sizeof(bool));
    for (i = 0; i < l->count; i++) {
        REQUIRE(l->ranges[i].offset >= base);
        REQUIRE(l->ranges[i].offset - base + l->ranges[i].length <= UNIVERSE);
        for (x = 0; x < l->ranges[i].length; x++) {
            bits[l->ranges[i].offset - base + x] = true;
        }
    }
}

static void random_list(list_t *l, bool *bits, uint64_t base)
{
    int n = (int) rnd_below(12), k;
    memset(bits, 0, UNIVERSE * sizeof(bool));
    mca_common_sfio_rangelist_clear(l);
    for (k = 0; k < n; k++) {
        uint64_t off = rnd_below(UNIVERSE), len = rnd_below(UNIVERSE - off < 48 ? UNIVERSE - off + 1 : 48), x;
        REQUIRE(0 == mca_common_sfio_rangelist_add(l, base + off, len));
        VERIFY(l);
        for (x = 0; x < len; x++) {
            bits[off + x] = true;
        }
    }
}

static void random_sets(uint64_t seed, uint64_t base)
{
    static bool ba[UNIVERSE], bb[UNIVERSE], bo[UNIVERSE];
    list_t a, b, o;
    int iter;
    size_t x;

    rng_state = seed;
    mca_common_sfio_rangelist_init(&a);
    mca_common_sfio_rangelist_init(&b);
    mca_common_sfio_rangelist_init(&o);
    for (iter = 0; iter < 5000; iter++) {
        uint64_t pop = 0;
        random_list(&a, ba, base);
        random_list(&b, bb, base);
        mca_common_sfio_rangelist_normalize(&a);
        VERIFY(&a);
        REQUIRE(a.normalized);
        mca_common_sfio_rangelist_normalize(&b);
        VERIFY(&b);
        bits_from_list(&a, base, bo);
        for (x = 0; x < UNIVERSE; x++) {
            REQUIRE(bo[x] == ba[x]);
            pop += ba[x];
        }
        REQUIRE(pop == mca_common_sfio_rangelist_bytes(&a));

        REQUIRE(0 == mca_common_sfio_rangelist_intersect(&a, &b, &o));
        VERIFY(&o);
        REQUIRE(o.normalized);
        bits_from_list(&o, base, bo);
        for (x = 0; x < UNIVERSE; x++) {
            REQUIRE(bo[x] == (ba[x] && bb[x]));
        }
        REQUIRE(0 == mca_common_sfio_rangelist_subtract(&a, &b, &o));
        VERIFY(&o);
        REQUIRE(o.normalized);
        bits_from_list(&o, base, bo);
        for (x = 0; x < UNIVERSE; x++) {
            REQUIRE(bo[x] == (ba[x] && !bb[x]));
        }
    }
    mca_common_sfio_rangelist_destroy(&a);
    mca_common_sfio_rangelist_destroy(&b);
    mca_common_sfio_rangelist_destroy(&o);
}

START_TEST(test_random_sets)
{
    random_sets(42 + (uint64_t) _i, 0);
}
END_TEST

START_TEST(test_random_sets_high)
{
    random_sets(4242, UINT64_MAX / 2);
    random_sets(4243, UINT64_MAX - UNIVERSE);
}
END_TEST

/* ---- view walking ------------------------------------------------------ */

START_TEST(test_view_contiguous)
{
    const range_t blocks[] = { { 0, 4 }, { 4, 0 }, { 4, 4 } };     /* tiles [0,8) */
    view_t v = { 1000, blocks, 3, 8 };
    list_t l;
    mca_common_sfio_rangelist_init(&l);
    /* huge access on a contiguous view is a single range (no per-period work) */
    ck_assert_int_eq(mca_common_sfio_view_map_access(&v, 3, UINT64_MAX / 4, &l), 0);
    {
        const range_t w[] = { { 1003, UINT64_MAX / 4 } };
        expect_ranges(&l, w, 1);
    }
    ck_assert_int_eq(mca_common_sfio_view_map_access(&v, 0, 0, &l), 0);
    ck_assert_uint_eq(l.count, 1);
    ck_assert_int_eq(mca_common_sfio_view_map_access(&v, UINT64_MAX - 1000, 1000, &l), -EOVERFLOW);
    ck_assert_uint_eq(l.count, 1);
    mca_common_sfio_rangelist_destroy(&l);
}
END_TEST

START_TEST(test_view_vector)
{
    /* 4 bytes out of every 10 at +2: file 102..105, 112..115, ... */
    const range_t blocks[] = { { 2, 4 } };
    view_t v = { 100, blocks, 1, 10 };
    list_t l;
    mca_common_sfio_rangelist_init(&l);
    ck_assert_int_eq(mca_common_sfio_view_map_access(&v, 3, 6, &l), 0);
    {
        const range_t w[] = { { 105, 1 }, { 112, 4 }, { 122, 1 } };
        expect_ranges(&l, w, 3);
        ck_assert(l.normalized);
    }
    mca_common_sfio_rangelist_destroy(&l);
}
END_TEST

START_TEST(test_view_unsorted_overlapping)
{
    /* typemap order [8,12) then [0,4) then [2,6) (overlap: reads only) */
    const range_t blocks[] = { { 8, 4 }, { 0, 4 }, { 2, 4 } };
    view_t v = { 0, blocks, 3, 16 };
    list_t l;
    mca_common_sfio_rangelist_init(&l);
    ck_assert_int_eq(mca_common_sfio_view_map_access(&v, 0, 24, &l), 0);
    {
        /* access order preserved, no merge of overlapping pieces */
        const range_t w[] = { { 8, 4 }, { 0, 4 }, { 2, 4 }, { 24, 4 }, { 16, 4 }, { 18, 4 } };
        expect_ranges(&l, w, 6);
        ck_assert(!l.normalized);
        ck_assert_uint_eq(mca_common_sfio_rangelist_bytes(&l), 24);
    }
    mca_common_sfio_rangelist_normalize(&l);
    {
        const range_t w[] = { { 0, 6 }, { 8, 4 }, { 16, 6 }, { 24, 4 } };
        expect_ranges(&l, w, 4);
    }
    mca_common_sfio_rangelist_destroy(&l);
}
END_TEST

START_TEST(test_view_beyond_extent_and_bad)
{
    /* a resized type whose block reaches past its extent */
    const range_t blocks[] = { { 6, 6 } };
    view_t v = { 0, blocks, 1, 8 };
    const range_t empty[] = { { 3, 0 } };
    view_t bad = { 0, empty, 1, 8 };
    view_t bad2 = { 0, blocks, 1, 0 };
    list_t l;
    mca_common_sfio_rangelist_init(&l);
    ck_assert_int_eq(mca_common_sfio_view_map_access(&v, 4, 6, &l), 0);
    {
        const range_t w[] = { { 10, 2 }, { 14, 4 } };
        expect_ranges(&l, w, 2);
    }
    ck_assert_int_eq(mca_common_sfio_view_map_access(&bad, 0, 1, &l), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_view_map_access(&bad2, 0, 1, &l), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_view_map_access(&v, 1, UINT64_MAX, &l), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_view_verify(&v), 0);
    ck_assert_int_eq(mca_common_sfio_view_verify(&bad), -EINVAL);
    expect_ranges(&l, (const range_t[]) { { 10, 2 }, { 14, 4 } }, 2);
    mca_common_sfio_rangelist_destroy(&l);
}
END_TEST

START_TEST(test_view_huge_and_overflow_rollback)
{
    const range_t blocks[] = { { 0, 4 }, { 8, 4 } };
    const uint64_t disp = UINT64_MAX / 2;
    view_t v = { disp, blocks, 2, 16 };
    list_t l;
    mca_common_sfio_rangelist_init(&l);
    ck_assert_int_eq(mca_common_sfio_view_map_access(&v, 6, 8, &l), 0);
    {
        const range_t w[] = { { disp + 10, 2 }, { disp + 16, 4 }, { disp + 24, 2 } };
        expect_ranges(&l, w, 3);
    }
    /* the list ends where the next access starts: the first piece merges
     * into the last range, then the walk overflows; all of it is undone */
    {
        view_t v2 = { disp + 26, blocks, 2, UINT64_MAX / 4 };
        ck_assert_int_eq(mca_common_sfio_view_map_access(&v2, 0, 24, &l), -EOVERFLOW);
        expect_ranges(&l, (const range_t[]) { { disp + 10, 2 }, { disp + 16, 4 }, { disp + 24, 2 } }, 3);
        ck_assert(l.normalized);
        /* a smaller access with the same view fits */
        ck_assert_int_eq(mca_common_sfio_view_map_access(&v2, 0, 8, &l), 0);
        expect_ranges(&l, (const range_t[]) { { disp + 10, 2 }, { disp + 16, 4 }, { disp + 24, 6 },
                                              { disp + 34, 4 } }, 4);
    }
    mca_common_sfio_rangelist_destroy(&l);
}
END_TEST

/* Reference: expand the typemap byte by byte into file offsets. */
static void random_views(uint64_t seed)
{
    enum { MAXB = 6, MAXDATA = 400 };
    static uint64_t ref[MAXDATA];
    list_t l;
    int iter;

    rng_state = seed;
    mca_common_sfio_rangelist_init(&l);
    for (iter = 0; iter < 10000; iter++) {
        range_t blocks[MAXB];
        size_t nb = 1 + (size_t) rnd_below(MAXB), i, n = 0, k;
        uint64_t extent = 1 + rnd_below(40), disp = rnd_below(3) ? rnd_below(100) : UINT64_MAX / 2;
        uint64_t size = 0, start, nbytes, pos;
        view_t v;
        bool ordered = true;

        for (i = 0; i < nb; i++) {
            blocks[i].offset = rnd_below(extent + 4);
            blocks[i].length = rnd_below(4) ? rnd_below(10) : 0;
            size += blocks[i].length;
        }
        if (rnd_below(4) == 0) {        /* sometimes a tiling (contiguous) view */
            uint64_t o = 0;
            for (i = 0; i < nb; i++) {
                blocks[i].offset = o;
                blocks[i].length = 1 + rnd_below(5);
                o += blocks[i].length;
            }
            extent = o;
            size = o;
        }
        v.disp = disp;
        v.blocks = blocks;
        v.nblocks = nb;
        v.extent = extent;
        if (0 == size) {
            REQUIRE(-EINVAL == mca_common_sfio_view_map_access(&v, 0, 1, &l));
            continue;
        }
        /* expand data bytes into file offsets, enough for MAXDATA bytes */
        for (k = 0; n < MAXDATA; k++) {
            for (i = 0; i < nb && n < MAXDATA; i++) {
                uint64_t x;
                for (x = 0; x < blocks[i].length && n < MAXDATA; x++) {
                    ref[n++] = disp + k * extent + blocks[i].offset + x;
                }
            }
        }
        start = rnd_below(MAXDATA / 2);
        nbytes = rnd_below(MAXDATA - start + 1);
        mca_common_sfio_rangelist_clear(&l);
        REQUIRE(0 == mca_common_sfio_view_map_access(&v, start, nbytes, &l));
        VERIFY(&l);
        REQUIRE(mca_common_sfio_rangelist_bytes(&l) == nbytes);
        pos = start;
        for (i = 0; i < l.count; i++) {
            uint64_t x;
            if (i > 0) {    /* merged whenever the next piece continues */
                REQUIRE(l.ranges[i - 1].offset + l.ranges[i - 1].length != l.ranges[i].offset);
            }
            if (i > 0 && l.ranges[i - 1].offset + l.ranges[i - 1].length > l.ranges[i].offset) {
                ordered = false;
            }
            for (x = 0; x < l.ranges[i].length; x++) {
                REQUIRE(ref[pos++] == l.ranges[i].offset + x);
            }
        }
        REQUIRE(pos == start + nbytes);
        REQUIRE(!l.normalized || ordered);
        mca_common_sfio_rangelist_normalize(&l);
        VERIFY(&l);
    }
    mca_common_sfio_rangelist_destroy(&l);
}

START_TEST(test_random_views)
{
    random_views(7 + (uint64_t) _i);
}
END_TEST

START_TEST(test_large_lock_list)
{
    /* 3-D-block-like access: 200k pieces, normalize must stay fast */
    const range_t blocks[] = { { 0, 8 }, { 64, 8 }, { 32, 8 } };
    view_t v = { 4096, blocks, 3, 128 };
    list_t l;
    mca_common_sfio_rangelist_init(&l);
    ck_assert_int_eq(mca_common_sfio_view_map_access(&v, 0, 24 * 70000, &l), 0);
    ck_assert_uint_eq(l.count, 210000);
    ck_assert(!l.normalized);
    mca_common_sfio_rangelist_normalize(&l);
    VERIFY(&l);
    ck_assert_uint_eq(l.count, 210000);
    ck_assert_uint_eq(l.ranges[1].offset, 4096 + 32);
    ck_assert_uint_eq(mca_common_sfio_rangelist_bytes(&l), 24 * 70000);
    mca_common_sfio_rangelist_destroy(&l);
}
END_TEST

static Suite *rangelist_suite(void)
{
    Suite *s = suite_create("sfio_rangelist");
    TCase *tc = tcase_create("edge");
    tcase_add_test(tc, test_add_edges);
    tcase_add_test(tc, test_normalize_merges);
    tcase_add_test(tc, test_append_swap_reserve);
    tcase_add_test(tc, test_set_ops_edges);
    tcase_add_test(tc, test_set_ops_identities);
    tcase_add_test(tc, test_view_contiguous);
    tcase_add_test(tc, test_view_vector);
    tcase_add_test(tc, test_view_unsorted_overlapping);
    tcase_add_test(tc, test_view_beyond_extent_and_bad);
    tcase_add_test(tc, test_view_huge_and_overflow_rollback);
    suite_add_tcase(s, tc);

    tc = tcase_create("random");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_random_sets, 0, 4);
    tcase_add_test(tc, test_random_sets_high);
    tcase_add_loop_test(tc, test_random_views, 0, 4);
    tcase_add_test(tc, test_large_lock_list);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(rangelist_suite)
