/*
 * Unit tests of sfio_iobatch: batching of fbtl segments into vectored
 * calls, and the choice of read data-sieving windows.  Random runs are
 * checked against a byte-level model of what the plan must cover.
 */
#include <stdlib.h>
#include <string.h>

#include "sfio_check.h"
#include "sfio_iobatch.h"

typedef mca_common_sfio_ioseg_t seg_t;

static char mem[1 << 16];

START_TEST(empty_and_zero_length)
{
    mca_common_sfio_memv_t iov[4];
    mca_common_sfio_iobatch_t b;
    size_t pos = 0;
    ck_assert(!mca_common_sfio_iobatch_next(NULL, 0, &pos, iov, 4, &b));
    seg_t z[3] = { { 10, 0, mem }, { 20, 0, mem }, { 30, 0, mem } };
    pos = 0;
    ck_assert(!mca_common_sfio_iobatch_next(z, 3, &pos, iov, 4, &b));
    ck_assert_uint_eq(pos, 3);
}
END_TEST

START_TEST(fuses_file_and_memory_contiguous)
{
    seg_t s[3] = { { 100, 10, mem }, { 110, 5, mem + 10 }, { 115, 7, mem + 100 } };
    mca_common_sfio_memv_t iov[4];
    mca_common_sfio_iobatch_t b;
    size_t pos = 0;
    ck_assert(mca_common_sfio_iobatch_next(s, 3, &pos, iov, 4, &b));
    ck_assert_uint_eq(b.offset, 100);
    ck_assert_uint_eq(b.length, 22);
    ck_assert_uint_eq(b.niov, 2);         /* first two fused in memory */
    ck_assert_uint_eq(iov[0].len, 15);
    ck_assert_ptr_eq(iov[1].base, mem + 100);
    ck_assert_uint_eq(pos, 3);
    ck_assert(!mca_common_sfio_iobatch_next(s, 3, &pos, iov, 4, &b));
}
END_TEST

START_TEST(file_gap_splits_and_iov_limit_splits)
{
    seg_t s[4] = { { 0, 4, mem }, { 4, 4, mem + 8 }, { 8, 4, mem + 16 }, { 100, 4, mem + 24 } };
    mca_common_sfio_memv_t iov[2];
    mca_common_sfio_iobatch_t b;
    size_t pos = 0;
    ck_assert(mca_common_sfio_iobatch_next(s, 4, &pos, iov, 2, &b));
    ck_assert_uint_eq(b.count, 2);        /* iov_max 2 stops the batch */
    ck_assert_uint_eq(b.length, 8);
    ck_assert(mca_common_sfio_iobatch_next(s, 4, &pos, iov, 2, &b));
    ck_assert_uint_eq(b.offset, 8);
    ck_assert_uint_eq(b.count, 1);        /* hole before offset 100 */
    ck_assert(mca_common_sfio_iobatch_next(s, 4, &pos, iov, 2, &b));
    ck_assert_uint_eq(b.offset, 100);
    ck_assert(!mca_common_sfio_iobatch_next(s, 4, &pos, iov, 2, &b));
}
END_TEST

/* Random segments; the batches, replayed, must write exactly the bytes
 * the segments describe, in the order given, with iov limits honoured. */
START_TEST(random_batches_cover_segments)
{
    rng_state = (uint64_t) (1234 + _i);
    for (int round = 0; round < 300; ++round) {
        size_t n = (size_t) (rnd_int() % 40);
        seg_t segs[40];
        uint64_t off = (uint64_t) (rnd_int() % 64);
        size_t mpos = 0;
        for (size_t i = 0; i < n; ++i) {
            uint64_t len = (uint64_t) (rnd_int() % 3 == 0 ? 0 : 1 + rnd_int() % 50);
            if (rnd_int() % 3 == 0) off += (uint64_t) (rnd_int() % 30);      /* hole */
            if (rnd_int() % 4 == 0) mpos += (size_t) (rnd_int() % 20);       /* memory gap */
            segs[i] = (seg_t) { off, len, mem + mpos };
            off += len;
            mpos += len;
        }
        size_t iov_max = 1 + (size_t) (rnd_int() % 5);
        unsigned char want[4096] = { 0 }, got[4096] = { 0 };
        for (size_t i = 0; i < n; ++i)
            for (uint64_t k = 0; k < segs[i].length; ++k)
                want[segs[i].offset + k] = ((unsigned char *) segs[i].buf)[k] = (unsigned char) (1 + (i * 7 + k) % 250);
        mca_common_sfio_memv_t iov[8];
        mca_common_sfio_iobatch_t b;
        size_t pos = 0, last = 0;
        while (mca_common_sfio_iobatch_next(segs, n, &pos, iov, iov_max, &b)) {
            ck_assert_uint_ge(b.first, last);
            ck_assert_uint_le(b.niov, iov_max);
            uint64_t o = b.offset, total = 0;
            for (size_t k = 0; k < b.niov; ++k) {
                memcpy(got + o, iov[k].base, iov[k].len);
                o += iov[k].len;
                total += iov[k].len;
            }
            ck_assert_uint_eq(total, b.length);
            last = b.first + b.count;
            ck_assert_uint_eq(pos, last);
        }
        ck_assert_uint_eq(pos, n);
        ck_assert_mem_eq(got, want, sizeof(want));
    }
}
END_TEST

START_TEST(sieve_windows_respect_policy)
{
    mca_common_sfio_sieve_policy_t pol = { .enabled = true, .max_gap = 8, .max_window = 64,
                                           .max_block = 16 };
    /* Four small pieces with small holes, then a big hole, then a big piece. */
    seg_t s[6] = { { 0, 4, mem }, { 8, 4, mem }, { 16, 4, mem }, { 22, 4, mem },
                   { 200, 4, mem }, { 300, 100, mem } };
    mca_common_sfio_sieve_window_t w;
    size_t pos = 0;
    ck_assert(mca_common_sfio_sieve_next(s, 6, &pos, &pol, &w));
    ck_assert(w.sieve);
    ck_assert_uint_eq(w.first, 0);
    ck_assert_uint_eq(w.count, 4);
    ck_assert_uint_eq(w.offset, 0);
    ck_assert_uint_eq(w.length, 26);
    ck_assert(mca_common_sfio_sieve_next(s, 6, &pos, &pol, &w));
    ck_assert(!w.sieve);                  /* single piece: read directly */
    ck_assert_uint_eq(w.first, 4);
    ck_assert(mca_common_sfio_sieve_next(s, 6, &pos, &pol, &w));
    ck_assert(!w.sieve);                  /* larger than max_block */
    ck_assert_uint_eq(w.length, 100);
    ck_assert(!mca_common_sfio_sieve_next(s, 6, &pos, &pol, &w));

    /* Descending or overlapping pieces are never sieved together. */
    seg_t d[3] = { { 50, 4, mem }, { 40, 4, mem }, { 42, 4, mem } };
    pos = 0;
    while (mca_common_sfio_sieve_next(d, 3, &pos, &pol, &w)) {
        ck_assert_uint_eq(w.count, 1);
    }
    /* Disabled policy: every window is one piece, none sieved. */
    pol.enabled = false;
    pos = 0;
    while (mca_common_sfio_sieve_next(s, 6, &pos, &pol, &w)) {
        ck_assert(!w.sieve);
        ck_assert_uint_eq(w.count, 1);
    }
}
END_TEST

/* Random: windows partition the segments in order, stay within the
 * window limit, and sieved windows hold ascending, disjoint pieces. */
START_TEST(random_sieve_windows)
{
    rng_state = (uint64_t) (99 + _i);
    for (int round = 0; round < 500; ++round) {
        mca_common_sfio_sieve_policy_t pol = {
            .enabled = rnd_int() % 4 != 0, .max_gap = (uint64_t) (rnd_int() % 16),
            .max_window = (uint64_t) (8 + rnd_int() % 100), .max_block = (uint64_t) (1 + rnd_int() % 40)
        };
        size_t n = (size_t) (rnd_int() % 30);
        seg_t segs[30];
        uint64_t off = 0;
        for (size_t i = 0; i < n; ++i) {
            if (rnd_int() % 8 == 0 && off > 10) off -= 10;               /* go backwards */
            off += (uint64_t) (rnd_int() % 20);
            segs[i] = (seg_t) { off, (uint64_t) (rnd_int() % 5 == 0 ? 0 : 1 + rnd_int() % 30), mem };
            off += segs[i].length;
        }
        mca_common_sfio_sieve_window_t w;
        size_t pos = 0, next = 0;
        while (mca_common_sfio_sieve_next(segs, n, &pos, &pol, &w)) {
            ck_assert_uint_ge(w.first, next);
            for (size_t k = next; k < w.first; ++k) ck_assert_uint_eq(segs[k].length, 0);
            next = w.first + w.count;
            ck_assert_uint_eq(pos, next);
            uint64_t useful = 0, end = w.offset;
            size_t nonzero = 0;
            for (size_t k = w.first; k < next; ++k) {
                if (0 == segs[k].length) continue;
                ++nonzero;
                ck_assert_uint_ge(segs[k].offset, end);
                end = segs[k].offset + segs[k].length;
                useful += segs[k].length;
            }
            ck_assert_uint_eq(end, w.offset + w.length);
            if (nonzero > 1) {
                ck_assert(pol.enabled);
                ck_assert_uint_le(w.length, pol.max_window);
            }
            ck_assert(w.sieve == (w.length > useful));
        }
        for (size_t k = next; k < n; ++k) ck_assert_uint_eq(segs[k].length, 0);
    }
}
END_TEST

static Suite *iobatch_suite(void)
{
    Suite *s = suite_create("sfio_iobatch");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, empty_and_zero_length);
    tcase_add_test(tc, fuses_file_and_memory_contiguous);
    tcase_add_test(tc, file_gap_splits_and_iov_limit_splits);
    tcase_add_loop_test(tc, random_batches_cover_segments, 0, 4);
    tcase_add_test(tc, sieve_windows_respect_policy);
    tcase_add_loop_test(tc, random_sieve_windows, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(iobatch_suite)
