/*
 * Tests of sfio_posixio's pipelined execution on a real scratch file: an
 * access of many pieces issued by several threads writes and reads exactly
 * the bytes one thread would, reports the same byte counts, passes errors
 * on, and the helper threads stop and start again.  Not a pure suite: it
 * needs a local file system (TMPDIR, else /tmp).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sfio_check.h"
#include "sfio_posixio.h"

#define FILE_BYTES (1u << 20)

static int scratch_file(char *path, size_t size)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, size, "%s/sfio-check-posixio.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    unlink(path);
    return fd;
}

/* Random disjoint pieces in random order, some file-contiguous neighbours
 * (fused into one batch), some zero-length. */
static size_t make_segs(uint64_t *seed, char *mem, mca_common_sfio_ioseg_t *segs, size_t max)
{
    size_t n = 0;
    uint64_t off = xorshift64(seed) % 64;
    size_t memoff = 0;
    while (n < max) {
        uint64_t len = xorshift64(seed) % 700;
        if (0 == xorshift64(seed) % 17) {
            len = 0;
        }
        if (off + len > FILE_BYTES || memoff + len > FILE_BYTES) {
            break;
        }
        segs[n++] = (mca_common_sfio_ioseg_t) { .offset = off, .length = len, .buf = mem + memoff };
        memoff += len;
        off += len + ((xorshift64(seed) % 3) ? xorshift64(seed) % 300 : 0);
    }
    for (size_t i = n; i > 1; --i) {   /* shuffle: the order must not matter */
        size_t j = xorshift64(seed) % i;
        mca_common_sfio_ioseg_t t = segs[i - 1];
        segs[i - 1] = segs[j];
        segs[j] = t;
    }
    return n;
}

static void file_bytes(int fd, char *out)
{
    memset(out, 0, FILE_BYTES);
    ssize_t got = pread(fd, out, FILE_BYTES, 0);
    ck_assert_int_ge(got, 0);
}

START_TEST(pipelined_equals_serial)
{
    enum { MAXSEGS = 3000 };
    static mca_common_sfio_ioseg_t segs[MAXSEGS];
    char *mem = malloc(FILE_BYTES), *a = malloc(FILE_BYTES), *b = malloc(FILE_BYTES),
         *back = malloc(FILE_BYTES);
    ck_assert_ptr_nonnull(mem);
    ck_assert_ptr_nonnull(back);
    uint64_t seed = 0x9e3779b97f4a7c15ULL + (uint64_t) _i;
    for (size_t i = 0; i < FILE_BYTES; ++i) {
        mem[i] = (char) (xorshift64(&seed) & 0xff);
    }
    static const unsigned depths[] = { 2, 3, 8, 64 };
    for (int round = 0; round < 12; ++round) {
        size_t n = make_segs(&seed, mem, segs, 1 + xorshift64(&seed) % MAXSEGS);
        char pa[256], pb[256];
        int fa = scratch_file(pa, sizeof(pa)), fb = scratch_file(pb, sizeof(pb));
        uint64_t wa = 0, wb = 0, ra = 0, rb = 0;

        mca_common_sfio_posix_depth = 1;
        ck_assert_int_eq(mca_common_sfio_posix_write_segs(fa, segs, n, &wa), 0);
        mca_common_sfio_posix_depth = depths[round % 4];
        mca_common_sfio_posix_depth_min_segs = 2;
        ck_assert_int_eq(mca_common_sfio_posix_write_segs(fb, segs, n, &wb), 0);
        ck_assert_uint_eq(wa, wb);
        ck_assert_uint_eq(wa, mca_common_sfio_ioseg_total(segs, n));
        file_bytes(fa, a);
        file_bytes(fb, b);
        ck_assert(0 == memcmp(a, b, FILE_BYTES));

        /* read back through the pipeline into a second buffer (no sieving) */
        mca_common_sfio_sieve_policy_t none = { .enabled = false };
        mca_common_sfio_scratch_t scratch = { 0 };
        for (size_t i = 0; i < n; ++i) {
            segs[i].buf = back + ((char *) segs[i].buf - mem);
        }
        memset(back, 0, FILE_BYTES);
        ck_assert_int_eq(mca_common_sfio_posix_read_segs(fb, segs, n, &none, &scratch, &rb), 0);
        mca_common_sfio_posix_depth = 1;
        ck_assert_int_eq(mca_common_sfio_posix_read_segs(fa, segs, n, &none, &scratch, &ra), 0);
        ck_assert_uint_eq(ra, rb);
        ck_assert_uint_eq(rb, wb);
        for (size_t i = 0; i < n; ++i) {
            ck_assert(0 == memcmp(segs[i].buf, mem + ((char *) segs[i].buf - back),
                                  segs[i].length));
            segs[i].buf = mem + ((char *) segs[i].buf - back);
        }
        mca_common_sfio_scratch_fini(&scratch);
        close(fa);
        close(fb);
        if (3 == round % 4) {
            mca_common_sfio_posix_shutdown();   /* helpers start again next round */
        }
    }
    mca_common_sfio_posix_shutdown();
    free(mem);
    free(a);
    free(b);
    free(back);
}
END_TEST

START_TEST(pipelined_error)
{
    enum { N = 500 };
    static mca_common_sfio_ioseg_t segs[N];
    static char buf[N * 8];
    for (size_t i = 0; i < N; ++i) {
        segs[i] = (mca_common_sfio_ioseg_t) { .offset = 16 * i, .length = 8, .buf = buf + 8 * i };
    }
    char p[256];
    int fd = scratch_file(p, sizeof(p));
    close(fd);   /* a closed descriptor: every request fails */
    mca_common_sfio_posix_depth = 8;
    mca_common_sfio_posix_depth_min_segs = 2;
    uint64_t w = 7;
    ck_assert_int_eq(mca_common_sfio_posix_write_segs(fd, segs, N, &w), -EBADF);
    ck_assert_uint_eq(w, 0);
    /* the pool still works afterwards */
    fd = scratch_file(p, sizeof(p));
    ck_assert_int_eq(mca_common_sfio_posix_write_segs(fd, segs, N, &w), 0);
    ck_assert_uint_eq(w, 8 * N);
    close(fd);
    mca_common_sfio_posix_shutdown();
}
END_TEST

/* Few pieces, a high threshold: the _pieces calls keep them in flight all
 * the same, and every read path gives the bytes one pread per piece gives:
 * read_segs with sieved windows between windows read as they are (runs of
 * these are read together), pieces past the end of the file not counted. */
START_TEST(pieces_and_mixed_windows)
{
    enum { N = 40 };
    static mca_common_sfio_ioseg_t segs[N];
    static char mem[N * 4096], back[N * 4096], want[N * 4096];
    uint64_t seed = 0x51ed2701ULL + (uint64_t) _i;
    for (size_t i = 0; i < sizeof(mem); ++i) {
        mem[i] = (char) (xorshift64(&seed) & 0xff);
    }
    for (int round = 0; round < 20; ++round) {
        /* ascending pieces: small ones close together (sieved), large ones
         * and far gaps (read as they are) */
        size_t n = 2 + xorshift64(&seed) % (N - 2), memoff = 0;
        uint64_t off = xorshift64(&seed) % 100;
        for (size_t i = 0; i < n; ++i) {
            uint64_t len = (xorshift64(&seed) % 3) ? 1 + xorshift64(&seed) % 200
                                                   : 2000 + xorshift64(&seed) % 2000;
            segs[i] = (mca_common_sfio_ioseg_t) { off, len, mem + memoff };
            memoff += len;
            off += len + ((xorshift64(&seed) % 2) ? xorshift64(&seed) % 64
                                                  : 5000 + xorshift64(&seed) % 5000);
        }
        char p[256];
        int fd = scratch_file(p, sizeof(p));
        mca_common_sfio_posix_depth = 8;
        mca_common_sfio_posix_depth_min_segs = 64;
        uint64_t w = 0;
        size_t nwrite = n - n / 4;   /* the last pieces lie past the end of the file */
        ck_assert_int_eq(mca_common_sfio_posix_write_pieces(fd, segs, nwrite, &w), 0);
        ck_assert_uint_eq(w, mca_common_sfio_ioseg_total(segs, nwrite));

        memset(want, 0, sizeof(want));
        uint64_t expect = 0;
        for (size_t i = 0; i < n; ++i) {
            ssize_t got = pread(fd, want + ((char *) segs[i].buf - mem), segs[i].length,
                                (off_t) segs[i].offset);
            ck_assert_int_ge(got, 0);
            expect += (uint64_t) got;
        }
        for (size_t i = 0; i < n; ++i) {
            segs[i].buf = back + ((char *) segs[i].buf - mem);
        }
        mca_common_sfio_sieve_policy_t sieve = { .enabled = true, .max_gap = 64,
                                                 .max_window = 1500, .max_block = 256 };
        mca_common_sfio_sieve_policy_t none = { .enabled = false };
        const mca_common_sfio_sieve_policy_t *policies[] = { &sieve, &none, NULL };
        for (int k = 0; k < 3; ++k) {
            mca_common_sfio_scratch_t scratch = { 0 };
            uint64_t r = 0;
            memset(back, 0, sizeof(back));
            if (policies[k]) {
                ck_assert_int_eq(mca_common_sfio_posix_read_segs(fd, segs, n, policies[k],
                                                                 &scratch, &r), 0);
            } else {
                ck_assert_int_eq(mca_common_sfio_posix_read_pieces(fd, segs, n, &r), 0);
            }
            ck_assert_uint_eq(r, expect);
            ck_assert(0 == memcmp(back, want, memoff));
            mca_common_sfio_scratch_fini(&scratch);
        }
        for (size_t i = 0; i < n; ++i) {
            segs[i].buf = mem + ((char *) segs[i].buf - back);
        }
        close(fd);
    }
    mca_common_sfio_posix_shutdown();
}
END_TEST

/* A sieved write leaves the file (bytes and size) as writing each piece
 * does: holes keep what they held, holes past the end of the file read as
 * zeros, pieces and windows of every kind (small with small holes, large,
 * far apart, overlapping in order, past the end), same byte count; also
 * through a descriptor that cannot read. */
START_TEST(sieved_write_equals_plain)
{
    enum { N = 60 };
    static mca_common_sfio_ioseg_t segs[N];
    static char mem[N * 4096], a[FILE_BYTES], b[FILE_BYTES], bg[FILE_BYTES];
    uint64_t seed = 0x5e7ed0a1ULL + (uint64_t) _i;
    for (size_t i = 0; i < sizeof(mem); ++i) {
        mem[i] = (char) (xorshift64(&seed) & 0xff);
    }
    for (size_t i = 0; i < sizeof(bg); ++i) {
        bg[i] = (char) (xorshift64(&seed) & 0xff);
    }
    mca_common_sfio_posix_depth = 1;   /* overlapping pieces land in order */
    for (int round = 0; round < 30; ++round) {
        size_t n = 1 + xorshift64(&seed) % (N - 1), memoff = 0;
        uint64_t off = xorshift64(&seed) % 100;
        for (size_t i = 0; i < n; ++i) {
            uint64_t len = (xorshift64(&seed) % 4) ? 1 + xorshift64(&seed) % 200
                                                   : 2000 + xorshift64(&seed) % 2000;
            if (0 == xorshift64(&seed) % 13) {
                len = 0;
            }
            segs[i] = (mca_common_sfio_ioseg_t) { off, len, mem + memoff };
            memoff += len;
            uint64_t gap = (xorshift64(&seed) % 3) ? xorshift64(&seed) % 64
                                                   : 5000 + xorshift64(&seed) % 5000;
            off += len + gap;
            if (0 == xorshift64(&seed) % 11 && off > 50) {
                off -= 50;   /* the next piece overlaps this one */
            }
        }
        size_t size = (size_t) (xorshift64(&seed) % (off + 1));   /* some pieces past EOF */
        char pa[256], pb[256];
        int fa = scratch_file(pa, sizeof(pa)), fb = scratch_file(pb, sizeof(pb));
        ck_assert_int_eq(pwrite(fa, bg, size, 0), (ssize_t) size);
        ck_assert_int_eq(pwrite(fb, bg, size, 0), (ssize_t) size);
        mca_common_sfio_sieve_policy_t sieve = { .enabled = true, .max_gap = 64,
                                                 .max_window = 1500, .max_block = 256 };
        mca_common_sfio_scratch_t scratch = { 0 };
        uint64_t wa = 0, wb = 0;
        /* odd rounds through a write-only descriptor: nothing to sieve
         * with, the pieces go as they are */
        int wfd = fa;
        if (round % 2) {
            char self[64];
            snprintf(self, sizeof(self), "/proc/self/fd/%d", fa);
            wfd = open(self, O_WRONLY);
            ck_assert_int_ge(wfd, 0);
        }
        ck_assert_int_eq(mca_common_sfio_posix_write_segs_sieved(wfd, segs, n, &sieve, &scratch,
                                                                 &wa), 0);
        if (wfd != fa) {
            close(wfd);
        }
        ck_assert_int_eq(mca_common_sfio_posix_write_segs(fb, segs, n, &wb), 0);
        ck_assert_uint_eq(wa, wb);
        ck_assert_uint_eq(wa, mca_common_sfio_ioseg_total(segs, n));
        ck_assert_int_eq(lseek(fa, 0, SEEK_END), lseek(fb, 0, SEEK_END));
        file_bytes(fa, a);
        file_bytes(fb, b);
        ck_assert(0 == memcmp(a, b, FILE_BYTES));
        mca_common_sfio_scratch_fini(&scratch);
        close(fa);
        close(fb);
    }
    mca_common_sfio_posix_shutdown();
}
END_TEST

static Suite *posixio_suite(void)
{
    Suite *s = suite_create("posixio");
    TCase *tc = tcase_create("pipeline");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, pipelined_equals_serial, 0, 3);
    tcase_add_test(tc, pipelined_error);
    tcase_add_loop_test(tc, pieces_and_mixed_windows, 0, 3);
    tcase_add_loop_test(tc, sieved_write_equals_plain, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(posixio_suite)
