/*
 * Unit tests of sfio_sfp (shared-file-pointer arithmetic): seeks in every
 * mode against the MPI standard's rules (etype units, negative results
 * erroneous, SEEK_END at the first whole etype past the end of file),
 * access sizes in whole etypes, ordered offsets, and the view bytes below
 * a file size compared with a byte-by-byte reference on seeded random
 * views (holes, disp, blocks beyond the extent, overlapping blocks).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "sfio_check.h"
#include "sfio_sfp.h"

#define SET MCA_COMMON_SFIO_SFP_SEEK_SET
#define CUR MCA_COMMON_SFIO_SFP_SEEK_CUR
#define END MCA_COMMON_SFIO_SFP_SEEK_END

START_TEST(seek_modes)
{
    int64_t p = -1;
    /* SET: offset etypes from the start of the view */
    ck_assert_int_eq(mca_common_sfio_sfp_seek(SET, 5, 64, 999, 0, &p), 0);
    ck_assert_int_eq(p, 320);
    ck_assert_int_eq(mca_common_sfio_sfp_seek(SET, 0, 1, 17, 0, &p), 0);
    ck_assert_int_eq(p, 0);
    /* CUR: relative to the current pointer (view bytes) */
    ck_assert_int_eq(mca_common_sfio_sfp_seek(CUR, -2, 64, 7 * 64, 0, &p), 0);
    ck_assert_int_eq(p, 5 * 64);
    ck_assert_int_eq(mca_common_sfio_sfp_seek(CUR, 3, 4, 8, 0, &p), 0);
    ck_assert_int_eq(p, 20);
    /* END: relative to the end of file in the view, rounded up to an etype */
    ck_assert_int_eq(mca_common_sfio_sfp_seek(END, -1, 64, 0, 10 * 64, &p), 0);
    ck_assert_int_eq(p, 9 * 64);
    ck_assert_int_eq(mca_common_sfio_sfp_seek(END, 0, 64, 0, 10 * 64 + 1, &p), 0);
    ck_assert_int_eq(p, 11 * 64);
    ck_assert_int_eq(mca_common_sfio_sfp_seek(END, 0, 8, 0, 0, &p), 0);
    ck_assert_int_eq(p, 0);
    /* negative results and bad arguments are erroneous; *p untouched */
    p = 77;
    ck_assert_int_eq(mca_common_sfio_sfp_seek(SET, -1, 1, 0, 0, &p), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_sfp_seek(CUR, -3, 4, 8, 0, &p), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_sfp_seek(END, -11, 64, 0, 10 * 64, &p), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_sfp_seek((mca_common_sfio_sfp_whence_t) 7, 0, 1, 0, 0, &p),
                     -EINVAL);
    ck_assert_int_eq(mca_common_sfio_sfp_seek(SET, 0, 0, 0, 0, &p), -EINVAL);
    ck_assert_int_eq(p, 77);
    /* overflow */
    ck_assert_int_eq(mca_common_sfio_sfp_seek(SET, INT64_MAX, 2, 0, 0, &p), -EOVERFLOW);
    ck_assert_int_eq(mca_common_sfio_sfp_seek(CUR, 1, 1, INT64_MAX, 0, &p), -EOVERFLOW);
    ck_assert_int_eq(mca_common_sfio_sfp_seek(END, 0, 1, 0, UINT64_MAX, &p), -EOVERFLOW);
    ck_assert_int_eq(mca_common_sfio_sfp_seek(CUR, 0, 1, INT64_MAX, 0, &p), 0);
    ck_assert_int_eq(p, INT64_MAX);
}
END_TEST

START_TEST(access_and_ordered)
{
    int64_t b = -1, e = -1;
    ck_assert_int_eq(mca_common_sfio_sfp_access_bytes(3, 64, 64, &b), 0);
    ck_assert_int_eq(b, 192);
    ck_assert_int_eq(mca_common_sfio_sfp_access_bytes(0, 64, 64, &b), 0);
    ck_assert_int_eq(b, 0);
    ck_assert_int_eq(mca_common_sfio_sfp_access_bytes(3, 10, 4, &b), -EINVAL); /* 30 % 4 */
    ck_assert_int_eq(mca_common_sfio_sfp_access_bytes(-1, 1, 1, &b), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_sfp_access_bytes(INT32_MAX, UINT64_MAX / 2, 1, &b),
                     -EOVERFLOW);
    ck_assert_int_eq(mca_common_sfio_sfp_ordered_offset(640, 128, 64, &e), 0);
    ck_assert_int_eq(e, 12);
    ck_assert_int_eq(mca_common_sfio_sfp_ordered_offset(640, 100, 64, &e), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_sfp_ordered_offset(INT64_MAX, 1, 1, &e), -EOVERFLOW);
    ck_assert_int_eq(mca_common_sfio_sfp_to_etypes(4096, 512, &e), 0);
    ck_assert_int_eq(e, 8);
    ck_assert_int_eq(mca_common_sfio_sfp_to_etypes(-8, 8, &e), -EINVAL);
}
END_TEST

/* Reference: walk every byte of every block of every period. */
static uint64_t ref_below(const mca_common_sfio_view_t *v, uint64_t size)
{
    uint64_t n = 0;
    for (uint64_t base = v->disp; base < size; base += v->extent) {
        for (size_t i = 0; i < v->nblocks; ++i) {
            for (uint64_t j = 0; j < v->blocks[i].length; ++j) {
                n += (base + v->blocks[i].offset + j < size);
            }
        }
    }
    /* blocks reaching below size from periods whose base is >= size cannot
     * exist: offsets are >= 0 */
    return n;
}

START_TEST(view_below_examples)
{
    mca_common_sfio_range_t one = { 0, 64 };
    mca_common_sfio_view_t contig = { .disp = 0, .blocks = &one, .nblocks = 1, .extent = 64 };
    uint64_t b = 0;
    ck_assert_int_eq(mca_common_sfio_sfp_view_bytes_below(&contig, 640, &b), 0);
    ck_assert_uint_eq(b, 640);
    /* every third 4-byte slot of a 12-byte period after a 100-byte header:
     * rank 1 of 3 in a round-robin vector view */
    mca_common_sfio_range_t slot = { 4, 4 };
    mca_common_sfio_view_t rr = { .disp = 100, .blocks = &slot, .nblocks = 1, .extent = 12 };
    ck_assert_int_eq(mca_common_sfio_sfp_view_bytes_below(&rr, 100, &b), 0);
    ck_assert_uint_eq(b, 0);
    ck_assert_int_eq(mca_common_sfio_sfp_view_bytes_below(&rr, 106, &b), 0);
    ck_assert_uint_eq(b, 2);
    ck_assert_int_eq(mca_common_sfio_sfp_view_bytes_below(&rr, 136, &b), 0);
    ck_assert_uint_eq(b, 12);
    mca_common_sfio_view_t bad = { .disp = 0, .blocks = &slot, .nblocks = 1, .extent = 0 };
    ck_assert_int_eq(mca_common_sfio_sfp_view_bytes_below(&bad, 10, &b), -EINVAL);
}
END_TEST

START_TEST(view_below_random)
{
    rng_state = 0x5eed0006u;
    for (int iter = 0; iter < 3000; ++iter) {
        mca_common_sfio_range_t blocks[5];
        size_t nb = 1 + rnd() % 5;
        uint64_t extent = 1 + rnd() % 40;
        for (size_t i = 0; i < nb; ++i) {
            blocks[i].offset = rnd() % (extent + 10);   /* may reach beyond the extent */
            blocks[i].length = rnd() % 3 ? 1 + rnd() % 25 : 0;
        }
        blocks[0].length = 1 + rnd() % 25;
        mca_common_sfio_view_t v = { .disp = rnd() % 50, .blocks = blocks, .nblocks = nb,
                                     .extent = extent };
        uint64_t size = rnd() % 400, got = 0;
        REQUIRE(0 == mca_common_sfio_sfp_view_bytes_below(&v, size, &got));
        REQUIRE(got == ref_below(&v, size));
    }
}
END_TEST

START_TEST(view_below_large)
{
    /* 1 TiB file, 1 MiB blocks every 4 MiB: exact and no overflow */
    mca_common_sfio_range_t blk = { 1u << 20, 1u << 20 };
    mca_common_sfio_view_t v = { .disp = 0, .blocks = &blk, .nblocks = 1, .extent = 4u << 20 };
    uint64_t b = 0;
    ck_assert_int_eq(mca_common_sfio_sfp_view_bytes_below(&v, 1ull << 40, &b), 0);
    ck_assert_uint_eq(b, 1ull << 38);
    ck_assert_int_eq(mca_common_sfio_sfp_view_bytes_below(&v, (1ull << 40) + (3u << 19), &b), 0);
    ck_assert_uint_eq(b, (1ull << 38) + (1u << 19));
}
END_TEST

static Suite *sfp_suite(void)
{
    Suite *s = suite_create("sfp");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, seek_modes);
    tcase_add_test(tc, access_and_ordered);
    tcase_add_test(tc, view_below_examples);
    tcase_add_test(tc, view_below_random);
    tcase_add_test(tc, view_below_large);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(sfp_suite)
