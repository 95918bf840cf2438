/*
 * Unit tests of sfio_pcache (the private-object cache of list-locking
 * atomic mode): examples (append, overwrite inside, across, around,
 * neighbours fused), and seeded random puts checked against a brute-force
 * byte map: every byte's value and whether it is cached, the extents
 * disjoint and ascending, the counters, and the flush routing (pieces
 * inside one domain each, ascending, per-domain sums, together exactly the
 * cached bytes).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sfio_check.h"
#include "sfio_pcache.h"

#define SPAN 4096

static void put1(mca_common_sfio_pcache_t *pc, uint64_t off, uint64_t len, unsigned char v)
{
    unsigned char *b = malloc(len ? len : 1);
    memset(b, v, len);
    mca_common_sfio_ioseg_t s = { .offset = off, .length = len, .buf = b };
    REQUIRE(0 == mca_common_sfio_pcache_put(pc, &s, 1));
    free(b);
}

/* The cache equals the byte map (val, has) over [0, SPAN). */
static void check_against(const mca_common_sfio_pcache_t *pc, const unsigned char *val,
                          const unsigned char *has)
{
    uint64_t covered = 0;
    for (size_t i = 0; i < pc->count; ++i) {
        REQUIRE(pc->ext[i].length > 0);
        if (i > 0) {
            REQUIRE(pc->ext[i - 1].offset + pc->ext[i - 1].length <= pc->ext[i].offset);
        }
        covered += pc->ext[i].length;
    }
    REQUIRE(covered == pc->cached_bytes);
    uint64_t expect = 0;
    for (int b = 0; b < SPAN; ++b) {
        expect += has[b];
    }
    REQUIRE(expect == covered);

    unsigned char got[SPAN];
    memset(got, 0xEE, sizeof(got));
    REQUIRE(mca_common_sfio_pcache_overlay(pc, 0, SPAN, got) == covered);
    for (int b = 0; b < SPAN; ++b) {
        REQUIRE(has[b] ? got[b] == val[b] : got[b] == 0xEE);
    }
    /* overlay of a window: same bytes, shifted */
    unsigned char w[100];
    memset(w, 0xEE, sizeof(w));
    (void) mca_common_sfio_pcache_overlay(pc, 1000, sizeof(w), w);
    for (int b = 0; b < (int) sizeof(w); ++b) {
        REQUIRE(has[1000 + b] ? w[b] == val[1000 + b] : w[b] == 0xEE);
    }
}

/* Flush routing promises for nranks domains aligned to align. */
static void check_route(const mca_common_sfio_pcache_t *pc, int nranks, uint64_t align)
{
    uint64_t lo, hi;
    mca_common_sfio_pcache_span(pc, &lo, &hi);
    uint64_t d = mca_common_sfio_pcache_domain_size(lo, hi, nranks, align);
    if (0 == pc->count) {
        REQUIRE(0 == d);
        return;
    }
    REQUIRE(d > 0 && 0 == d % align && d * (uint64_t) nranks >= hi - lo);
    size_t n = mca_common_sfio_pcache_route_count(pc, lo, d, nranks);
    mca_common_sfio_ioseg_t *p = malloc(n * sizeof(*p));
    uint64_t *per = malloc(2 * (size_t) nranks * sizeof(*per));
    mca_common_sfio_pcache_route(pc, lo, d, nranks, per, p);
    uint64_t sum_pieces = 0, sum_bytes = 0, bytes = 0;
    for (int r = 0; r < nranks; ++r) {
        sum_pieces += per[2 * r];
        sum_bytes += per[2 * r + 1];
    }
    REQUIRE(sum_pieces == n);
    REQUIRE(sum_bytes == pc->cached_bytes);
    uint64_t *seen = calloc(2 * (size_t) nranks, sizeof(*seen));
    for (size_t i = 0; i < n; ++i) {
        REQUIRE(p[i].length > 0);
        if (i > 0) {
            REQUIRE(p[i - 1].offset + p[i - 1].length <= p[i].offset);
        }
        uint64_t dom = (p[i].offset - lo) / d;
        REQUIRE(dom < (uint64_t) nranks);
        REQUIRE(p[i].offset + p[i].length <= lo + (dom + 1) * d);
        seen[2 * dom] += 1;
        seen[2 * dom + 1] += p[i].length;
        /* the piece's bytes are the cache's */
        unsigned char *tmp = malloc(p[i].length);
        REQUIRE(mca_common_sfio_pcache_overlay(pc, p[i].offset, p[i].length, tmp) ==
                p[i].length);
        REQUIRE(0 == memcmp(tmp, p[i].buf, p[i].length));
        free(tmp);
        bytes += p[i].length;
    }
    REQUIRE(bytes == pc->cached_bytes);
    REQUIRE(0 == memcmp(seen, per, 2 * (size_t) nranks * sizeof(*per)));
    free(seen);
    free(per);
    free(p);
}

START_TEST(examples)
{
    mca_common_sfio_pcache_t pc;
    unsigned char val[SPAN] = { 0 }, has[SPAN] = { 0 };
    mca_common_sfio_pcache_init(&pc);
#define PUT(o, l, v) \
    do { \
        put1(&pc, o, l, v); \
        memset(val + (o), v, l); \
        memset(has + (o), 1, l); \
        check_against(&pc, val, has); \
    } while (0)
    PUT(100, 50, 1);           /* first */
    PUT(150, 50, 2);           /* neighbour: fused (arena-contiguous) */
    REQUIRE(1 == pc.count);
    PUT(300, 10, 3);           /* apart */
    REQUIRE(2 == pc.count);
    PUT(120, 10, 4);           /* inside: in place */
    REQUIRE(2 == pc.count);
    PUT(90, 20, 5);            /* across the left end */
    PUT(190, 20, 6);           /* across the right end */
    PUT(80, 300, 7);           /* around both extents */
    REQUIRE(1 == pc.count);
    PUT(0, 10, 8);
    PUT(200, 10, 9);           /* splits nothing: inside */
    PUT(5, 100, 10);           /* joins two */
    check_route(&pc, 1, 1);
    check_route(&pc, 3, 64);
    check_route(&pc, 8, 4096);
    mca_common_sfio_pcache_clear(&pc);
    memset(has, 0, sizeof(has));
    check_against(&pc, val, has);
    check_route(&pc, 4, 1);
    PUT(0, 0, 1);              /* empty put */
    REQUIRE(0 == pc.count);
#undef PUT
    mca_common_sfio_pcache_destroy(&pc);
}
END_TEST

START_TEST(domains)
{
    REQUIRE(0 == mca_common_sfio_pcache_domain_size(10, 10, 4, 1));
    REQUIRE(25 == mca_common_sfio_pcache_domain_size(0, 100, 4, 1));
    REQUIRE(26 == mca_common_sfio_pcache_domain_size(0, 101, 4, 1));
    REQUIRE(4096 == mca_common_sfio_pcache_domain_size(0, 100, 4, 4096));
    REQUIRE(8192 == mca_common_sfio_pcache_domain_size(0, 3 * 8192, 3, 4096));
    REQUIRE(12288 == mca_common_sfio_pcache_domain_size(0, 3 * 8192 + 1, 3, 4096));
    REQUIRE(1 == mca_common_sfio_pcache_domain_size(0, 1, 8, 0));
}
END_TEST

START_TEST(random_puts)
{
    rng_state = 4242;
    for (int round = 0; round < 300; ++round) {
        mca_common_sfio_pcache_t pc;
        unsigned char val[SPAN] = { 0 }, has[SPAN] = { 0 };
        mca_common_sfio_pcache_init(&pc);
        int nputs = 1 + rnd_int() % 60;
        for (int k = 0; k < nputs; ++k) {
            /* a call of several segments, some overlapping each other */
            int nsegs = 1 + rnd_int() % 4;
            mca_common_sfio_ioseg_t segs[4];
            unsigned char *bufs[4];
            for (int s = 0; s < nsegs; ++s) {
                uint64_t len = (uint64_t) (rnd_int() % (rnd_int() % 4 ? 64 : 700));
                uint64_t off = (uint64_t) (rnd_int() % (SPAN - (int) len));
                bufs[s] = malloc(len ? len : 1);
                for (uint64_t b = 0; b < len; ++b) {
                    bufs[s][b] = (unsigned char) rnd_int();
                }
                segs[s] = (mca_common_sfio_ioseg_t) { .offset = off, .length = len, .buf = bufs[s] };
            }
            REQUIRE(0 == mca_common_sfio_pcache_put(&pc, segs, (size_t) nsegs));
            for (int s = 0; s < nsegs; ++s) {   /* a later segment wins */
                memcpy(val + segs[s].offset, bufs[s], segs[s].length);
                memset(has + segs[s].offset, 1, segs[s].length);
                free(bufs[s]);
            }
            check_against(&pc, val, has);
        }
        check_route(&pc, 1 + rnd_int() % 9, (uint64_t) 1 << (rnd_int() % 10));
        mca_common_sfio_pcache_destroy(&pc);
    }
}
END_TEST

static Suite *pcache_suite(void)
{
    Suite *s = suite_create("pcache");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, examples);
    tcase_add_test(tc, domains);
    tcase_add_test(tc, random_puts);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(pcache_suite)
