/*
 * Unit tests of sfio_lockplan: lock lists per mode, coarsening of long
 * lists, and the private/shared split of segments.  Random runs compare
 * with byte-level models.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

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

/* Coarsening keeps every locked byte locked, respects the bound, and the
 * bytes it adds are exactly the smallest gaps (the least extra locking). */
START_TEST(coarsen_random_against_model)
{
    srand(77 + _i);
    for (int round = 0; round < 400; ++round) {
        mca_common_sfio_rangelist_t l, orig;
        mca_common_sfio_rangelist_init(&l);
        mca_common_sfio_rangelist_init(&orig);
        size_t n = 1 + (size_t) (rand() % 60);
        uint64_t off = (uint64_t) (rand() % 10);
        for (size_t i = 0; i < n; ++i) {
            uint64_t len = 1 + (uint64_t) (rand() % 20);
            ck_assert_int_eq(0, mca_common_sfio_rangelist_add(&l, off, len));
            ck_assert_int_eq(0, mca_common_sfio_rangelist_add(&orig, off, len));
            off += len + 1 + (uint64_t) (rand() % (rand() % 2 ? 3 : 40));
        }
        size_t max = (size_t) (rand() % 70);
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

int main(void)
{
    Suite *s = suite_create("sfio_lockplan");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, modes_on_fixed_access);
    tcase_add_loop_test(tc, coarsen_random_against_model, 0, 4);
    tcase_add_test(tc, split_private_keeps_memory);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
