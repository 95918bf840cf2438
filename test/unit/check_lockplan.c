/*
 * Unit tests of sfio_lockplan: lock lists per mode, coarsening of long
 * lists, and the private/shared split of segments.  Random runs compare
 * with byte-level models.
 */
#include <stdlib.h>
#include <string.h>

#include "sfio_check.h"
#include "sfio_lockplan.h"

typedef mca_common_sfio_ioseg_t seg_t;
static char mem[1 << 16];

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

START_TEST(modes_on_fixed_access)
{
    seg_t s[3] = { { 100, 10, mem }, { 10, 5, mem }, { 110, 5, mem } };
    mca_common_sfio_rangelist_t l;
    mca_common_sfio_rangelist_init(&l);

    ck_assert_int_eq(0, mca_common_sfio_lockplan_build(MCA_COMMON_SFIO_LOCK_LIST, s, 3, NULL, &l));
    ck_assert_uint_eq(l.count, 2);                 /* sorted, 100..115 merged */
    ck_assert_uint_eq(l.ranges[0].offset, 10);
    ck_assert_uint_eq(l.ranges[1].offset, 100);
    ck_assert_uint_eq(l.ranges[1].length, 15);

    ck_assert_int_eq(0, mca_common_sfio_lockplan_build(MCA_COMMON_SFIO_LOCK_RANGE, s, 3, NULL, &l));
    ck_assert_uint_eq(l.count, 1);
    ck_assert_uint_eq(l.ranges[0].offset, 10);
    ck_assert_uint_eq(l.ranges[0].length, 105);

    ck_assert_int_eq(0, mca_common_sfio_lockplan_build(MCA_COMMON_SFIO_LOCK_FILE, s, 3, NULL, &l));
    ck_assert_uint_eq(l.count, 1);
    ck_assert_uint_eq(l.ranges[0].offset, 0);
    ck_assert_uint_eq(l.ranges[0].length, MCA_COMMON_SFIO_LOCK_TO_EOF);

    ck_assert_int_eq(0, mca_common_sfio_lockplan_build(MCA_COMMON_SFIO_LOCK_LIST, s, 0, NULL, &l));
    ck_assert_uint_eq(l.count, 0);
    mca_common_sfio_rangelist_destroy(&l);
}
END_TEST

/* A mode said to lock the holes locks one range over every access's
 * whole extent (so a sieved write under it is atomic); list locks leave
 * the holes of this access unlocked and are never said to. */
START_TEST(locks_holes_means_extent_locked)
{
    seg_t s[3] = { { 100, 10, mem }, { 10, 5, mem }, { 130, 5, mem } };
    const mca_common_sfio_lockmode_t modes[] = {
        MCA_COMMON_SFIO_LOCK_LIST, MCA_COMMON_SFIO_LOCK_RANGE, MCA_COMMON_SFIO_LOCK_FILE
    };
    mca_common_sfio_rangelist_t l;
    mca_common_sfio_rangelist_init(&l);
    for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); ++m) {
        ck_assert_int_eq(0, mca_common_sfio_lockplan_build(modes[m], s, 3, NULL, &l));
        bool extent_locked = false;
        for (size_t i = 0; i < l.count; ++i) {
            extent_locked |= l.ranges[i].offset <= 10 &&
                             (MCA_COMMON_SFIO_LOCK_TO_EOF == l.ranges[i].length ||
                              l.ranges[i].offset + l.ranges[i].length >= 135);
        }
        ck_assert_int_eq(mca_common_sfio_lockplan_locks_holes(modes[m]), extent_locked);
    }
    ck_assert(!mca_common_sfio_lockplan_locks_holes(MCA_COMMON_SFIO_LOCK_LIST));
    mca_common_sfio_rangelist_destroy(&l);
}
END_TEST

/* Coarsening keeps every locked byte locked, respects the bound, and the
 * bytes it adds are exactly the smallest gaps (the least extra locking). */
START_TEST(coarsen_random_against_model)
{
    rng_state = (uint64_t) (77 + _i);
    for (int round = 0; round < 400; ++round) {
        mca_common_sfio_rangelist_t l, orig;
        mca_common_sfio_rangelist_init(&l);
        mca_common_sfio_rangelist_init(&orig);
        size_t n = 1 + (size_t) (rnd_int() % 60);
        uint64_t off = (uint64_t) (rnd_int() % 10);
        for (size_t i = 0; i < n; ++i) {
            uint64_t len = 1 + (uint64_t) (rnd_int() % 20);
            ck_assert_int_eq(0, mca_common_sfio_rangelist_add(&l, off, len));
            ck_assert_int_eq(0, mca_common_sfio_rangelist_add(&orig, off, len));
            off += len + 1 + (uint64_t) (rnd_int() % (rnd_int() % 2 ? 3 : 40));
        }
        size_t max = (size_t) (rnd_int() % 70);
        uint64_t gaps[64];
        for (size_t i = 1; i < orig.count; ++i)
            gaps[i - 1] = orig.ranges[i].offset - orig.ranges[i - 1].offset - orig.ranges[i - 1].length;
        qsort(gaps, orig.count - 1, sizeof(uint64_t), cmp_u64);

        ck_assert_int_eq(0, mca_common_sfio_lockplan_coarsen(&l, max));
        ck_assert_int_eq(0, mca_common_sfio_rangelist_verify(&l));
        if (0 == max || orig.count <= max) {
            ck_assert_uint_eq(l.count, orig.count);
        } else {
            ck_assert_uint_eq(l.count, max);
        }
        uint64_t extra = mca_common_sfio_rangelist_bytes(&l) - mca_common_sfio_rangelist_bytes(&orig);
        uint64_t smallest = 0;
        for (size_t i = 0; i < orig.count - l.count; ++i) smallest += gaps[i];
        ck_assert_uint_eq(extra, smallest);
        /* every original range lies inside one coarse range */
        for (size_t i = 0, k = 0; i < orig.count; ++i) {
            while (l.ranges[k].offset + l.ranges[k].length < orig.ranges[i].offset + orig.ranges[i].length) ++k;
            ck_assert_uint_le(l.ranges[k].offset, orig.ranges[i].offset);
        }
        mca_common_sfio_rangelist_destroy(&l);
        mca_common_sfio_rangelist_destroy(&orig);
    }
}
END_TEST

/* Two ranks' views: 0 owns [0,8) of every 16 bytes, 1 owns [6,16) — bytes
 * 6 and 7 of each period are shared.  The split must hand back exactly
 * those as shared, the rest as private, with memory addresses kept. */
START_TEST(split_private_keeps_memory)
{
    mca_common_sfio_range_t b0[1] = { { 0, 8 } }, b1[1] = { { 6, 10 } };
    mca_common_sfio_view_t views[2] = { { 0, b0, 1, 16 }, { 0, b1, 1, 16 } };
    mca_common_sfio_objects_t obj;
    mca_common_sfio_objects_init(&obj);
    ck_assert_int_eq(0, mca_common_sfio_objects_compute(views, 2, 0, &obj));

    seg_t s[2] = { { 0, 8, mem }, { 16, 8, mem + 100 } };
    seg_t *priv, *shared;
    size_t np, ns;
    ck_assert_int_eq(0, mca_common_sfio_segs_split_private(s, 2, &obj, &priv, &np, &shared, &ns));
    ck_assert_uint_eq(np, 2);
    ck_assert_uint_eq(ns, 2);
    ck_assert_uint_eq(priv[1].offset, 16);
    ck_assert_uint_eq(priv[1].length, 6);
    ck_assert_ptr_eq(priv[1].buf, mem + 100);
    ck_assert_uint_eq(shared[0].offset, 6);
    ck_assert_uint_eq(shared[0].length, 2);
    ck_assert_ptr_eq(shared[0].buf, mem + 6);
    ck_assert_ptr_eq(shared[1].buf, mem + 106);
    free(priv);
    free(shared);

    /* LIST mode over the shared part locks only the shared bytes */
    mca_common_sfio_rangelist_t l;
    mca_common_sfio_rangelist_init(&l);
    ck_assert_int_eq(0, mca_common_sfio_lockplan_build(MCA_COMMON_SFIO_LOCK_LIST, s, 2, &obj, &l));
    ck_assert_uint_eq(mca_common_sfio_rangelist_bytes(&l), 4);
    mca_common_sfio_rangelist_destroy(&l);

    /* without objects everything is shared */
    ck_assert_int_eq(0, mca_common_sfio_segs_split_private(s, 2, NULL, &priv, &np, &shared, &ns));
    ck_assert_uint_eq(np, 0);
    ck_assert_uint_eq(ns, 2);
    free(priv);
    free(shared);
    mca_common_sfio_objects_destroy(&obj);
}
END_TEST


/* ------------------------------------------------------------------ */
/* Lock lists of the segments that MPI datatypes give, against a brute-
 * force byte map.  The generators below spell out the typemaps of the
 * MPI constructors (row-major, as MPI_ORDER_C) in file order; OMPIO hands
 * the fbtl such segments, in pieces and possibly out of order. */

#define MAPBYTES (1u << 16)
typedef struct { seg_t v[8192]; size_t n; } segs_t;

static void emit(segs_t *g, uint64_t off, uint64_t len)
{
    ck_assert_uint_lt(g->n, 8192);
    ck_assert_uint_le(off + len, MAPBYTES);
    g->v[g->n++] = (seg_t) { off, len, mem };
}

/* MPI_Type_vector(count, blocklen, stride) of elem-byte elements at disp */
static void gen_vector(segs_t *g, uint64_t disp, int count, int blocklen, int stride, int elem)
{
    for (int i = 0; i < count; ++i)
        emit(g, disp + (uint64_t) i * stride * elem, (uint64_t) blocklen * elem);
}

/* MPI_Type_create_subarray, ndims <= 3, order C */
static void gen_subarray(segs_t *g, uint64_t disp, int nd, const int *sz, const int *sub,
                         const int *st, int elem)
{
    int s3[3] = { 1, 1, 1 }, b3[3] = { 1, 1, 1 }, o3[3] = { 0, 0, 0 };
    for (int d = 0; d < nd; ++d) {
        s3[3 - nd + d] = sz[d];
        b3[3 - nd + d] = sub[d];
        o3[3 - nd + d] = st[d];
    }
    for (int z = 0; z < b3[0]; ++z)
        for (int y = 0; y < b3[1]; ++y) {
            uint64_t row = ((uint64_t) (o3[0] + z) * s3[1] + (uint64_t) (o3[1] + y)) * s3[2] + o3[2];
            if (b3[2] > 0) emit(g, disp + row * elem, (uint64_t) b3[2] * elem);
        }
}

/* MPI_Type_create_darray of a 2-D gsize array on a pr x pc grid, rank r,
 * each dimension BLOCK (k = 0) or CYCLIC(k), order C: the elements whose
 * row and column this rank owns, one segment per element. */
static int owner(int i, int n, int p, int k)
{
    if (0 == k) {
        int b = (n + p - 1) / p;
        return i / b;
    }
    return (i / k) % p;
}

static void gen_darray(segs_t *g, int rank, int rows, int cols, int pr, int pc, int kr, int kc,
                       int elem)
{
    int myr = rank / pc, myc = rank % pc;
    for (int i = 0; i < rows; ++i) {
        if (owner(i, rows, pr, kr) != myr) continue;
        for (int j = 0; j < cols; ++j)
            if (owner(j, cols, pc, kc) == myc)
                emit(g, ((uint64_t) i * cols + j) * elem, (uint64_t) elem);
    }
}

/* Brute force: the bytes the segments touch, as sorted maximal runs. */
static void expect_runs(const segs_t *g, mca_common_sfio_rangelist_t *want)
{
    static unsigned char map[MAPBYTES];
    memset(map, 0, sizeof(map));
    for (size_t i = 0; i < g->n; ++i) memset(map + g->v[i].offset, 1, g->v[i].length);
    mca_common_sfio_rangelist_clear(want);
    for (uint64_t b = 0; b < MAPBYTES;) {
        if (!map[b]) { ++b; continue; }
        uint64_t e = b;
        while (e < MAPBYTES && map[e]) ++e;
        ck_assert_int_eq(0, mca_common_sfio_rangelist_add(want, b, e - b));
        b = e;
    }
}

/* The segments cut at random points and shuffled: the list must not care. */
static void cut_and_shuffle(segs_t *g, unsigned seed)
{
    rng_state = seed;
    size_t n = g->n;
    for (size_t i = 0; i < n && g->n < 8192; ++i)
        if (g->v[i].length > 1 && rnd_int() % 3 == 0) {
            uint64_t c = 1 + (uint64_t) rnd_int() % (g->v[i].length - 1);
            g->v[g->n++] = (seg_t) { g->v[i].offset + c, g->v[i].length - c, mem };
            g->v[i].length = c;
        }
    for (size_t i = g->n; i > 1; --i) {
        size_t k = (size_t) rnd_int() % i;
        seg_t t = g->v[i - 1]; g->v[i - 1] = g->v[k]; g->v[k] = t;
    }
}

static void check_lists(segs_t *g, unsigned seed)
{
    mca_common_sfio_rangelist_t want, got;
    mca_common_sfio_rangelist_init(&want);
    mca_common_sfio_rangelist_init(&got);
    expect_runs(g, &want);
    cut_and_shuffle(g, seed);
    ck_assert_int_eq(0, mca_common_sfio_lockplan_build(MCA_COMMON_SFIO_LOCK_LIST, g->v, g->n, NULL, &got));
    ck_assert_uint_eq(got.count, want.count);
    for (size_t i = 0; i < want.count; ++i) {
        ck_assert_uint_eq(got.ranges[i].offset, want.ranges[i].offset);
        ck_assert_uint_eq(got.ranges[i].length, want.ranges[i].length);
    }
    /* RANGE mode: one range over the whole extent (none when empty) */
    ck_assert_int_eq(0, mca_common_sfio_lockplan_build(MCA_COMMON_SFIO_LOCK_RANGE, g->v, g->n, NULL, &got));
    if (0 == want.count) {
        ck_assert_uint_eq(got.count, 0);
    } else {
        ck_assert_uint_eq(got.count, 1);
        ck_assert_uint_eq(got.ranges[0].offset, want.ranges[0].offset);
        ck_assert_uint_eq(got.ranges[0].offset + got.ranges[0].length,
                          want.ranges[want.count - 1].offset + want.ranges[want.count - 1].length);
    }
    mca_common_sfio_rangelist_destroy(&want);
    mca_common_sfio_rangelist_destroy(&got);
}

START_TEST(datatype_lists_match_byte_map)
{
    static segs_t g;
    unsigned seed = 1000u * (unsigned) _i;
    /* vector: gaps, touching blocks (stride == blocklen), one block */
    g.n = 0; gen_vector(&g, 3, 50, 3, 7, 8); check_lists(&g, seed + 1);
    g.n = 0; gen_vector(&g, 0, 40, 4, 4, 4); check_lists(&g, seed + 2);
    g.n = 0; gen_vector(&g, 100, 1, 9, 9, 1); check_lists(&g, seed + 3);
    /* indexed with holes and touching blocks, random */
    rng_state = (uint64_t) (seed + 4);
    g.n = 0;
    for (uint64_t off = (uint64_t) (rnd_int() % 16); off < 30000;) {
        uint64_t len = 1 + (uint64_t) (rnd_int() % 200);
        emit(&g, off, len);
        off += len + (uint64_t) (rnd_int() % 3 ? rnd_int() % 50 : 0);
    }
    check_lists(&g, seed + 5);
    /* subarrays: 2-D tile, 3-D block, full rows (merge into one run) */
    { int sz[2] = { 64, 96 }, sub[2] = { 20, 30 }, st[2] = { 5, 41 };
      g.n = 0; gen_subarray(&g, 0, 2, sz, sub, st, 8); check_lists(&g, seed + 6); }
    { int sz[3] = { 16, 20, 24 }, sub[3] = { 5, 7, 9 }, st[3] = { 3, 2, 10 };
      g.n = 0; gen_subarray(&g, 16, 3, sz, sub, st, 4); check_lists(&g, seed + 7); }
    { int sz[2] = { 64, 32 }, sub[2] = { 10, 32 }, st[2] = { 7, 0 };
      g.n = 0; gen_subarray(&g, 0, 2, sz, sub, st, 8); check_lists(&g, seed + 8);
      ck_assert_uint_eq(g.n > 0, 1); }
    /* darray: block x block, cyclic(1) x block, cyclic(3) x cyclic(2) */
    for (int r = 0; r < 6; ++r) {
        g.n = 0; gen_darray(&g, r, 30, 40, 2, 3, 0, 0, 8); check_lists(&g, seed + 10 + r);
        g.n = 0; gen_darray(&g, r, 30, 40, 2, 3, 1, 0, 4); check_lists(&g, seed + 20 + r);
        g.n = 0; gen_darray(&g, r, 30, 40, 2, 3, 3, 2, 4); check_lists(&g, seed + 30 + r);
    }
    /* resized: a vector of extent 40 tiled with extent 64 (a hole at the
     * end of every tile), and with extent 24 < true extent (tiles interleave) */
    g.n = 0; for (int t = 0; t < 30; ++t) gen_vector(&g, (uint64_t) t * 64, 3, 4, 12, 1);
    check_lists(&g, seed + 40);
    g.n = 0; for (int t = 0; t < 30; ++t) gen_vector(&g, (uint64_t) t * 24, 3, 4, 12, 1);
    check_lists(&g, seed + 41);
    /* zero-length: an empty subarray, zero-length segments among others */
    { int sz[2] = { 8, 8 }, sub[2] = { 0, 8 }, st[2] = { 0, 0 };
      g.n = 0; gen_subarray(&g, 0, 2, sz, sub, st, 8); check_lists(&g, seed + 50);
      ck_assert_uint_eq(g.n, 0); }
    g.n = 0; emit(&g, 10, 0); emit(&g, 20, 5); emit(&g, 25, 0); emit(&g, 40, 0); check_lists(&g, seed + 51);
}
END_TEST

static Suite *lockplan_suite(void)
{
    Suite *s = suite_create("sfio_lockplan");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, modes_on_fixed_access);
    tcase_add_test(tc, locks_holes_means_extent_locked);
    tcase_add_loop_test(tc, coarsen_random_against_model, 0, 4);
    tcase_add_test(tc, split_private_keeps_memory);
    tcase_add_loop_test(tc, datatype_lists_match_byte_map, 0, 5);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(lockplan_suite)
