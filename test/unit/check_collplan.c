/*
 * Unit tests of sfio_collplan: the algorithm catalogue, Gabriel's
 * decision table, the aggregator groups (initial, refined, forced), two-
 * phase domains, dynamic-segmentation cuts and the union of pieces.
 * Random runs are checked against byte-bitmap references and the groups'
 * invariants (_groups_verify) after every step.
 */
#include <stdlib.h>
#include <string.h>

#define SFIO_CHECK_RNG xorshift64
#define SFIO_CHECK_SEED 88172645463325252ull
#include "sfio_check.h"
#include "sfio_collplan.h"

typedef mca_common_sfio_coll_rank_t rank_t;
typedef mca_common_sfio_coll_piece_t piece_t;
typedef mca_common_sfio_coll_groups_t groups_t;

START_TEST(catalogue_names)
{
    for (int i = 0; i < MCA_COMMON_SFIO_COLL_NALGS; ++i) {
        ck_assert_int_eq(mca_common_sfio_coll_algs[i].id, i);
        ck_assert_int_eq(mca_common_sfio_coll_alg_lookup(mca_common_sfio_coll_algs[i].name), i);
    }
    ck_assert_int_eq(mca_common_sfio_coll_alg_lookup("two_phase"), MCA_COMMON_SFIO_COLL_TWO_PHASE);
    ck_assert_int_eq(mca_common_sfio_coll_alg_lookup("vulcan"), -1);
    ck_assert_int_eq(mca_common_sfio_coll_alg_lookup(NULL), -1);
}
END_TEST

static int decide_dup(uint64_t c, uint64_t k, uint64_t ss, bool gap, bool dup)
{
    mca_common_sfio_coll_inputs_t in = { c, k, ss, gap, dup };
    return mca_common_sfio_coll_decide(&in, mca_common_sfio_coll_default_rules,
                                       mca_common_sfio_coll_default_nrules, -1);
}

static int decide(uint64_t c, uint64_t k, uint64_t ss, bool gap)
{
    mca_common_sfio_coll_inputs_t in = { c, k, ss, gap, false };
    return mca_common_sfio_coll_decide(&in, mca_common_sfio_coll_default_rules,
                                       mca_common_sfio_coll_default_nrules, -1);
}

START_TEST(decision_table_gabriel)
{
    const uint64_t k = 1 << 20, ss = 64 << 10;
    /* c > k and c > ss: individual, whatever the gap */
    ck_assert_int_eq(decide(4 << 20, k, ss, false), MCA_COMMON_SFIO_COLL_INDIVIDUAL);
    ck_assert_int_eq(decide(4 << 20, k, ss, true), MCA_COMMON_SFIO_COLL_INDIVIDUAL);
    /* c <= k, c > ss, no gap: dynamic segmentation (c == k included) */
    ck_assert_int_eq(decide(256 << 10, k, ss, false), MCA_COMMON_SFIO_COLL_DYNAMIC);
    ck_assert_int_eq(decide(k, k, ss, false), MCA_COMMON_SFIO_COLL_DYNAMIC);
    /* c < k, c <= ss, no gap: two-phase (c == ss included) */
    ck_assert_int_eq(decide(64, k, ss, false), MCA_COMMON_SFIO_COLL_TWO_PHASE);
    ck_assert_int_eq(decide(ss, k, ss, false), MCA_COMMON_SFIO_COLL_TWO_PHASE);
    /* c < k with gaps: static segmentation */
    ck_assert_int_eq(decide(64, k, ss, true), MCA_COMMON_SFIO_COLL_STATIC);
    ck_assert_int_eq(decide(256 << 10, k, ss, true), MCA_COMMON_SFIO_COLL_STATIC);
    /* uncovered corners fall back: c == k with a gap; c > k but c <= ss */
    ck_assert_int_eq(decide(k, k, ss, true), -1);
    ck_assert_int_eq(decide(2 << 20, k, 4 << 20, false), -1);
}
END_TEST

/* Our leading rule: heavy overlap on network storage turns Gabriel's
 * individual into two-phase, and changes nothing else. */
START_TEST(decision_dup_only_replaces_individual)
{
    const uint64_t k = 1 << 20, ss = 64 << 10;
    ck_assert_int_eq(decide_dup(4 << 20, k, ss, false, true), MCA_COMMON_SFIO_COLL_TWO_PHASE);
    ck_assert_int_eq(decide_dup(4 << 20, k, ss, true, true), MCA_COMMON_SFIO_COLL_TWO_PHASE);
    const uint64_t cs[] = { 64, ss, 256 << 10, k };  /* every c <= k */
    for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); ++i) {
        for (int gap = 0; gap < 2; ++gap) {
            ck_assert_int_eq(decide_dup(cs[i], k, ss, gap, true), decide(cs[i], k, ss, gap));
        }
    }
}
END_TEST

START_TEST(decision_custom_rules_first_match)
{
    mca_common_sfio_coll_rule_t r[3] = {
        { MCA_COMMON_SFIO_CMP_ANY, MCA_COMMON_SFIO_CMP_ANY, MCA_COMMON_SFIO_GAP_ANY,
          MCA_COMMON_SFIO_DUP_NONE, MCA_COMMON_SFIO_COLL_DYNAMIC },
        { MCA_COMMON_SFIO_CMP_ANY, MCA_COMMON_SFIO_CMP_ANY, MCA_COMMON_SFIO_GAP_SOME,
          MCA_COMMON_SFIO_DUP_ANY, MCA_COMMON_SFIO_COLL_STATIC },
        { MCA_COMMON_SFIO_CMP_ANY, MCA_COMMON_SFIO_CMP_ANY, MCA_COMMON_SFIO_GAP_ANY,
          MCA_COMMON_SFIO_DUP_ANY, MCA_COMMON_SFIO_COLL_TWO_PHASE },
    };
    mca_common_sfio_coll_inputs_t in = { 10, 1, 1, true, true };
    ck_assert_int_eq(mca_common_sfio_coll_decide(&in, r + 1, 2, -1), MCA_COMMON_SFIO_COLL_STATIC);
    in.gap = false;
    ck_assert_int_eq(mca_common_sfio_coll_decide(&in, r + 1, 2, -1),
                     MCA_COMMON_SFIO_COLL_TWO_PHASE);
    ck_assert_int_eq(mca_common_sfio_coll_decide(&in, r + 1, 0, 7), 7);
    /* DUP_NONE matches only without duplicates */
    ck_assert_int_eq(mca_common_sfio_coll_decide(&in, r, 3, -1), MCA_COMMON_SFIO_COLL_TWO_PHASE);
    in.dup = false;
    ck_assert_int_eq(mca_common_sfio_coll_decide(&in, r, 3, -1), MCA_COMMON_SFIO_COLL_DYNAMIC);
}
END_TEST

START_TEST(summary_c_and_gap)
{
    rank_t r[3] = { { 0, 100, 100, 1 }, { 100, 300, 200, 4 }, { 0, 0, 0, 0 } };
    mca_common_sfio_coll_summary_t s;
    mca_common_sfio_coll_summarize(r, 3, &s);
    ck_assert_uint_eq(s.lo, 0);
    ck_assert_uint_eq(s.hi, 300);
    ck_assert_uint_eq(s.bytes, 300);
    ck_assert_uint_eq(s.c, 60);
    ck_assert(!s.gap);
    ck_assert_int_eq(s.active, 2);
    r[1].lo = 200;
    r[1].hi = 500;   /* 300 bytes over [0, 500): a hole */
    mca_common_sfio_coll_summarize(r, 3, &s);
    ck_assert(s.gap);
    ck_assert_uint_eq(s.dup, 0);
    rank_t z[2] = { { 0, 0, 0, 0 }, { 0, 0, 0, 0 } };
    mca_common_sfio_coll_summarize(z, 2, &s);
    ck_assert_uint_eq(s.bytes, 0);
    ck_assert_uint_eq(s.c, 0);
    ck_assert_uint_eq(s.dup, 0);
    ck_assert_int_eq(s.active, 0);
    ck_assert(!mca_common_sfio_coll_dup_heavy(&s));
}
END_TEST

/* Clip: runs below the end stay, the one across it is cut there, the
 * rest go; against a byte map for random runs and ends. */
START_TEST(clip_runs_to_end)
{
    mca_common_sfio_coll_piece_t r[3] = { { 10, 10 }, { 30, 10 }, { 50, 10 } };
    ck_assert_uint_eq(mca_common_sfio_coll_clip(r, 3, 35), 2);
    ck_assert_uint_eq(r[0].len, 10);
    ck_assert_uint_eq(r[1].len, 5);
    mca_common_sfio_coll_piece_t z[2] = { { 10, 10 }, { 30, 10 } };
    ck_assert_uint_eq(mca_common_sfio_coll_clip(z, 2, 10), 0);     /* at the first start */
    ck_assert_uint_eq(mca_common_sfio_coll_clip(z, 2, 20), 1);     /* at a run's end */
    ck_assert_uint_eq(z[0].len, 10);
    ck_assert_uint_eq(mca_common_sfio_coll_clip(z, 2, UINT64_MAX), 2);
    ck_assert_uint_eq(z[1].len, 10);
    ck_assert_uint_eq(mca_common_sfio_coll_clip(z, 0, 5), 0);
    unsigned seed = 7;
    for (int trial = 0; trial < 2000; ++trial) {
        mca_common_sfio_coll_piece_t a[8];
        unsigned char before[256] = { 0 }, after[256] = { 0 };
        size_t n = (size_t) (rand_r(&seed) % 8);
        uint64_t off = 0;
        for (size_t j = 0; j < n; ++j) {
            off += (uint64_t) (rand_r(&seed) % 8);
            a[j].off = off;
            a[j].len = 1 + (uint64_t) (rand_r(&seed) % 20);
            off += a[j].len;
        }
        uint64_t end = (uint64_t) (rand_r(&seed) % 200);
        for (size_t j = 0; j < n; ++j) {
            for (uint64_t b = a[j].off; b < a[j].off + a[j].len; ++b) {
                before[b] = b < end;
            }
        }
        size_t k = mca_common_sfio_coll_clip(a, n, end);
        for (size_t j = 0; j < k; ++j) {
            ck_assert_uint_gt(a[j].len, 0);
            ck_assert_uint_le(a[j].off + a[j].len, end);
            for (uint64_t b = a[j].off; b < a[j].off + a[j].len; ++b) {
                after[b] = 1;
            }
        }
        for (size_t j = k; j < n; ++j) {
            ck_assert_uint_ge(a[j].off, end);
        }
        ck_assert_mem_eq(before, after, sizeof(before));
    }
}
END_TEST

/* A read that returned got bytes of runs stopped where the got-th byte
 * would lie; its count is the bytes of the pieces below that point.
 * Against a byte walk for random runs and pieces. */
START_TEST(read_stop_and_bytes_below)
{
    mca_common_sfio_coll_piece_t r[2] = { { 10, 10 }, { 30, 10 } };
    ck_assert_uint_eq(mca_common_sfio_coll_read_stop(r, 2, 0), 10);
    ck_assert_uint_eq(mca_common_sfio_coll_read_stop(r, 2, 5), 15);
    ck_assert_uint_eq(mca_common_sfio_coll_read_stop(r, 2, 10), 30);  /* next run's start */
    ck_assert_uint_eq(mca_common_sfio_coll_read_stop(r, 2, 19), 39);
    ck_assert_uint_eq(mca_common_sfio_coll_read_stop(r, 2, 20), UINT64_MAX);
    ck_assert_uint_eq(mca_common_sfio_coll_read_stop(r, 0, 0), UINT64_MAX);
    mca_common_sfio_coll_piece_t p[3] = { { 30, 10 }, { 10, 10 }, { 12, 4 } };
    ck_assert_uint_eq(mca_common_sfio_coll_bytes_below(p, 3, 0), 0);
    ck_assert_uint_eq(mca_common_sfio_coll_bytes_below(p, 3, 14), 4 + 2);
    ck_assert_uint_eq(mca_common_sfio_coll_bytes_below(p, 3, 35), 10 + 4 + 5);
    ck_assert_uint_eq(mca_common_sfio_coll_bytes_below(p, 3, UINT64_MAX), 24);
    unsigned seed = 11;
    for (int trial = 0; trial < 2000; ++trial) {
        mca_common_sfio_coll_piece_t a[8], q[8];
        size_t n = (size_t) (rand_r(&seed) % 8), m = (size_t) (rand_r(&seed) % 8);
        uint64_t off = 0, total = 0;
        for (size_t j = 0; j < n; ++j) {
            off += (uint64_t) (rand_r(&seed) % 8);
            a[j].off = off;
            a[j].len = 1 + (uint64_t) (rand_r(&seed) % 20);
            off += a[j].len;
            total += a[j].len;
        }
        uint64_t got = total ? (uint64_t) (rand_r(&seed) % (total + 1)) : 0;
        /* the got-th byte of the runs, walked one byte at a time */
        uint64_t want = UINT64_MAX, seen = 0;
        for (size_t j = 0; j < n && want == UINT64_MAX; ++j) {
            for (uint64_t b = a[j].off; b < a[j].off + a[j].len; ++b, ++seen) {
                if (seen == got) {
                    want = b;
                    break;
                }
            }
        }
        uint64_t stop = mca_common_sfio_coll_read_stop(a, n, got);
        ck_assert_uint_eq(stop, want);
        for (size_t j = 0; j < m; ++j) {
            q[j].off = (uint64_t) (rand_r(&seed) % 150);
            q[j].len = (uint64_t) (rand_r(&seed) % 20);
        }
        uint64_t end = (uint64_t) (rand_r(&seed) % 180), below = 0;
        for (size_t j = 0; j < m; ++j) {
            for (uint64_t b = q[j].off; b < q[j].off + q[j].len; ++b) {
                below += b < end;
            }
        }
        ck_assert_uint_eq(mca_common_sfio_coll_bytes_below(q, m, end), below);
    }
}
END_TEST

/* Queued cycles: the busiest aggregator gets min_cycles cycles, never
 * below the floor, never above the cycle size it had. */
START_TEST(queued_cycle_bounds)
{
    const uint64_t KiB = 1024, MiB = 1024 * 1024;
    /* 64 B tiles on 9 aggregators: ~880 KB each -> 8 cycles of 110 KB */
    ck_assert_uint_eq(mca_common_sfio_coll_queued_cycle(MiB, 880000, 8, 64 * KiB), 110000);
    /* large loads keep the cycle size */
    ck_assert_uint_eq(mca_common_sfio_coll_queued_cycle(MiB, 12 * MiB, 8, 64 * KiB), MiB);
    /* small loads stop at the floor */
    ck_assert_uint_eq(mca_common_sfio_coll_queued_cycle(MiB, 100 * KiB, 8, 64 * KiB), 64 * KiB);
    /* never grows: a forced small cycle stays */
    ck_assert_uint_eq(mca_common_sfio_coll_queued_cycle(4 * KiB, 880000, 8, 64 * KiB), 4 * KiB);
    /* off */
    ck_assert_uint_eq(mca_common_sfio_coll_queued_cycle(MiB, 880000, 0, 64 * KiB), MiB);
    ck_assert_uint_eq(mca_common_sfio_coll_queued_cycle(MiB, 880000, 1, 64 * KiB), MiB);
    /* rounding up: 8 cycles of ceil(load / 8) cover the load, 7 do not */
    for (uint64_t load = 1; load < 5000; load += 37) {
        for (int n = 2; n < 12; ++n) {
            uint64_t cb = mca_common_sfio_coll_queued_cycle(UINT64_MAX, load, n, 1);
            ck_assert_uint_ge(cb * (uint64_t) n, load);
            ck_assert_uint_lt((cb - 1) * (uint64_t) n, load);    /* the smallest such */
            ck_assert_uint_ge(cb, 1);
        }
    }
    ck_assert_uint_eq(mca_common_sfio_coll_queued_cycle(MiB, 0, 8, 64 * KiB), 64 * KiB);
}
END_TEST

/* dup: the bytes beyond the extent; exact for overlapping tiles (3x3
 * tiles of 4x4 elements overlapping by one: 144 elements over an extent
 * of 100), a lower bound when holes hide overlap, 0 without overlap. */
START_TEST(summary_dup_bound)
{
    mca_common_sfio_coll_summary_t s;
    rank_t r[3] = { { 0, 100, 100, 1 }, { 100, 200, 100, 1 }, { 0, 0, 0, 0 } };
    mca_common_sfio_coll_summarize(r, 3, &s);
    ck_assert_uint_eq(s.dup, 0);
    ck_assert(!mca_common_sfio_coll_dup_heavy(&s));
    /* 1-D picture of the tiles: 9 ranks of 16 over [0, 100) */
    rank_t t[9];
    for (int i = 0; i < 9; ++i) {
        t[i].lo = (uint64_t) i * 84 / 8;
        t[i].hi = t[i].lo + 16;
        t[i].bytes = 16;
        t[i].runs = 4;
    }
    mca_common_sfio_coll_summarize(t, 9, &s);
    ck_assert_uint_eq(s.hi - s.lo, 100);
    ck_assert_uint_eq(s.dup, 44);
    ck_assert(mca_common_sfio_coll_dup_heavy(&s));
    /* a hole of 50 bytes hides 50 of the duplicates */
    t[8].lo += 50;
    t[8].hi += 50;
    mca_common_sfio_coll_summarize(t, 9, &s);
    ck_assert_uint_eq(s.dup, 0);
    /* the share: 1/8 of the bytes is heavy, less is not */
    rank_t h[2] = { { 0, 56, 56, 1 }, { 48, 56, 8, 1 } };     /* 8 of 64 */
    mca_common_sfio_coll_summarize(h, 2, &s);
    ck_assert_uint_eq(s.dup, 8);
    ck_assert(mca_common_sfio_coll_dup_heavy(&s));
    h[1].lo = 49;
    h[1].hi = 57;                                           /* 7 of 64 */
    mca_common_sfio_coll_summarize(h, 2, &s);
    ck_assert_uint_eq(s.dup, 7);
    ck_assert(!mca_common_sfio_coll_dup_heavy(&s));
}
END_TEST

/* A 2-D tile pattern: rows x cols ranks, tiles of th x tw bytes in a row-
 * major array: rank extents interleave within a row of tiles only. */
static void tiles(rank_t *r, int rows, int cols, uint64_t th, uint64_t tw)
{
    uint64_t W = (uint64_t) cols * tw;
    for (int i = 0; i < rows; ++i) {
        for (int j = 0; j < cols; ++j) {
            rank_t *x = &r[i * cols + j];
            x->lo = (uint64_t) i * th * W + (uint64_t) j * tw;
            x->hi = x->lo + (th - 1) * W + tw;
            x->bytes = th * tw;
            x->runs = th;
        }
    }
}

START_TEST(reads_alone_by_extent_ratio)
{
    /* block3d-like: each rank's extent 4x its bytes; one rank idle */
    mca_common_sfio_coll_rank_t r[3] = {
        { 0, 4000, 1000, 10 }, { 1000, 5000, 1000, 10 }, { 0, 0, 0, 0 },
    };
    ck_assert(mca_common_sfio_coll_reads_alone(r, 3, 4));
    ck_assert(mca_common_sfio_coll_reads_alone(r, 3, 8));
    ck_assert(!mca_common_sfio_coll_reads_alone(r, 3, 3));
    ck_assert(!mca_common_sfio_coll_reads_alone(r, 3, 0));    /* 0: never */
    r[1].hi = 5001;                                         /* one rank just over */
    ck_assert(!mca_common_sfio_coll_reads_alone(r, 3, 4));
    ck_assert(!mca_common_sfio_coll_reads_alone(r + 2, 1, 8)); /* nobody has bytes */
    mca_common_sfio_coll_rank_t big = { 0, UINT64_MAX, UINT64_MAX / 2, 1 };
    ck_assert(mca_common_sfio_coll_reads_alone(&big, 1, 3)); /* ratio * bytes overflows */
    ck_assert(!mca_common_sfio_coll_reads_alone(&big, 1, 1));
}
END_TEST

START_TEST(groups_rows_of_a_2d_pattern)
{
    rank_t r[8];
    groups_t g;
    tiles(r, 2, 4, 16, 64);
    ck_assert_int_eq(mca_common_sfio_coll_groups_init(&g, 8), 0);
    mca_common_sfio_coll_groups_initial(r, 0, &g);
    ck_assert_int_eq(mca_common_sfio_coll_groups_verify(&g), 0);
    ck_assert_int_eq(g.ngroups, 2);
    for (int q = 0; q < 8; ++q) {
        ck_assert_int_eq(g.group_of[q], q / 4);
    }
    ck_assert_int_eq(g.aggr[0], 0);
    ck_assert_int_eq(g.aggr[1], 4);
    /* Cartesian rows override */
    mca_common_sfio_coll_groups_initial(r, 4, &g);
    ck_assert_int_eq(g.ngroups, 4);
    ck_assert_int_eq(mca_common_sfio_coll_groups_verify(&g), 0);
    mca_common_sfio_coll_groups_free(&g);
}
END_TEST

START_TEST(groups_contiguous_every_rank_and_zero_ranks)
{
    rank_t r[6];
    groups_t g;
    for (int q = 0; q < 6; ++q) {
        r[q] = (rank_t) { (uint64_t) q * 1000, (uint64_t) q * 1000 + 1000, 1000, 1 };
    }
    r[2] = (rank_t) { 0, 0, 0, 0 };      /* zero bytes */
    ck_assert_int_eq(mca_common_sfio_coll_groups_init(&g, 6), 0);
    mca_common_sfio_coll_groups_initial(r, 0, &g);
    ck_assert_int_eq(mca_common_sfio_coll_groups_verify(&g), 0);
    ck_assert_int_eq(g.ngroups, 5);
    ck_assert_int_eq(g.group_of[2], g.group_of[1]);
    /* no rank has bytes: one group */
    for (int q = 0; q < 6; ++q) {
        r[q] = (rank_t) { 0, 0, 0, 0 };
    }
    mca_common_sfio_coll_groups_initial(r, 0, &g);
    ck_assert_int_eq(g.ngroups, 1);
    ck_assert_int_eq(mca_common_sfio_coll_groups_verify(&g), 0);
    mca_common_sfio_coll_groups_free(&g);
}
END_TEST

START_TEST(refine_split_and_merge)
{
    rank_t r[16];
    groups_t g;
    ck_assert_int_eq(mca_common_sfio_coll_groups_init(&g, 16), 0);
    /* Gabriel's picture: 4 rows of 4; each row 4 MiB */
    tiles(r, 4, 4, 256, 4096);
    mca_common_sfio_coll_groups_initial(r, 0, &g);
    ck_assert_int_eq(g.ngroups, 4);
    /* k = 2 MiB: every row splits in two */
    mca_common_sfio_coll_groups_refine(r, 2 << 20, &g);
    ck_assert_int_eq(mca_common_sfio_coll_groups_verify(&g), 0);
    ck_assert_int_eq(g.ngroups, 8);
    ck_assert_int_eq(g.group_of[0], g.group_of[1]);
    ck_assert_int_ne(g.group_of[1], g.group_of[2]);
    /* k = 8 MiB: rows merge in pairs */
    mca_common_sfio_coll_groups_initial(r, 0, &g);
    mca_common_sfio_coll_groups_refine(r, 8 << 20, &g);
    ck_assert_int_eq(mca_common_sfio_coll_groups_verify(&g), 0);
    ck_assert_int_eq(g.ngroups, 2);
    ck_assert_int_eq(g.group_of[0], g.group_of[7]);
    ck_assert_int_ne(g.group_of[7], g.group_of[8]);
    /* k larger than everything: one aggregator (small data is fine) */
    mca_common_sfio_coll_groups_initial(r, 0, &g);
    mca_common_sfio_coll_groups_refine(r, 1ull << 40, &g);
    ck_assert_int_eq(g.ngroups, 1);
    /* tiny k: one aggregator per rank, never more */
    mca_common_sfio_coll_groups_initial(r, 0, &g);
    mca_common_sfio_coll_groups_refine(r, 1, &g);
    ck_assert_int_eq(g.ngroups, 16);
    ck_assert_int_eq(mca_common_sfio_coll_groups_verify(&g), 0);
    mca_common_sfio_coll_groups_free(&g);
}
END_TEST

START_TEST(refine_aggregator_has_bytes)
{
    rank_t r[4] = { { 0, 0, 0, 0 }, { 0, 100, 100, 1 }, { 100, 200, 100, 1 }, { 0, 0, 0, 0 } };
    groups_t g;
    ck_assert_int_eq(mca_common_sfio_coll_groups_init(&g, 4), 0);
    mca_common_sfio_coll_groups_initial(r, 0, &g);
    mca_common_sfio_coll_groups_refine(r, 1000, &g);
    ck_assert_int_eq(g.ngroups, 1);
    ck_assert_int_eq(g.aggr[0], 1);
    mca_common_sfio_coll_groups_free(&g);
}
END_TEST

START_TEST(refine_random_invariants)
{
    for (int run = 0; run < 500; ++run) {
        int n = 1 + (int) (rnd() % 40);
        rank_t *r = calloc((size_t) n, sizeof(rank_t));
        groups_t g;
        ck_assert_int_eq(mca_common_sfio_coll_groups_init(&g, n), 0);
        uint64_t total = 0;
        for (int q = 0; q < n; ++q) {
            if (rnd() % 5 == 0) {
                continue;
            }
            r[q].lo = rnd() % 100000;
            r[q].bytes = 1 + rnd() % 50000;
            r[q].hi = r[q].lo + r[q].bytes + rnd() % 1000;
            r[q].runs = 1 + rnd() % 10;
            total += r[q].bytes;
        }
        uint64_t k = 1 + rnd() % 200000;
        mca_common_sfio_coll_groups_initial(r, 0, &g);
        ck_assert_int_eq(mca_common_sfio_coll_groups_verify(&g), 0);
        mca_common_sfio_coll_groups_refine(r, k, &g);
        ck_assert_int_eq(mca_common_sfio_coll_groups_verify(&g), 0);
        /* never fewer aggregators than total / k asks for (up to n) */
        uint64_t want = total / k;
        if (want > (uint64_t) n) {
            want = (uint64_t) n;
        }
        ck_assert_uint_ge((uint64_t) g.ngroups, want > 0 ? want / 2 : 0);
        int forced = 1 + (int) (rnd() % (2 * n));
        mca_common_sfio_coll_groups_even(forced, &g);
        ck_assert_int_eq(mca_common_sfio_coll_groups_verify(&g), 0);
        ck_assert_int_eq(g.ngroups, forced > n ? n : forced);
        mca_common_sfio_coll_groups_free(&g);
        free(r);
    }
}
END_TEST

START_TEST(cap_merges_neighbours)
{
    rank_t r[16];
    groups_t g;
    ck_assert_int_eq(mca_common_sfio_coll_groups_init(&g, 16), 0);
    tiles(r, 4, 4, 256, 4096);
    mca_common_sfio_coll_groups_initial(r, 0, &g);
    mca_common_sfio_coll_groups_refine(r, 1, &g);
    ck_assert_int_eq(g.ngroups, 16);
    mca_common_sfio_coll_groups_cap(0, &g);     /* no limit */
    ck_assert_int_eq(g.ngroups, 16);
    mca_common_sfio_coll_groups_cap(3, &g);
    ck_assert_int_eq(g.ngroups, 3);
    ck_assert_int_eq(mca_common_sfio_coll_groups_verify(&g), 0);
    for (int q = 1; q < 16; ++q) {
        ck_assert_int_ge(g.group_of[q], g.group_of[q - 1]);   /* neighbours stay together */
    }
    mca_common_sfio_coll_groups_cap(8, &g);     /* already below */
    ck_assert_int_eq(g.ngroups, 3);
    for (int run = 0; run < 200; ++run) {
        int n = 1 + (int) (rnd() % 30);
        groups_t h;
        ck_assert_int_eq(mca_common_sfio_coll_groups_init(&h, n), 0);
        mca_common_sfio_coll_groups_even(1 + (int) (rnd() % n), &h);
        int cap = 1 + (int) (rnd() % n);
        int before = h.ngroups;
        mca_common_sfio_coll_groups_cap(cap, &h);
        ck_assert_int_eq(h.ngroups, before < cap ? before : cap);
        ck_assert_int_eq(mca_common_sfio_coll_groups_verify(&h), 0);
        mca_common_sfio_coll_groups_free(&h);
    }
    mca_common_sfio_coll_groups_free(&g);
}
END_TEST

START_TEST(spread_aggregators)
{
    int a[8];
    mca_common_sfio_coll_spread(8, 4, a);
    ck_assert_int_eq(a[0], 0);
    ck_assert_int_eq(a[1], 2);
    ck_assert_int_eq(a[3], 6);
    mca_common_sfio_coll_spread(3, 8, a);   /* clamped to 3 */
    ck_assert_int_eq(a[2], 2);
}
END_TEST

START_TEST(domains_cover_and_align)
{
    for (int run = 0; run < 1000; ++run) {
        int na = 1 + (int) (rnd() % 12);
        uint64_t lo = rnd() % 1000000, hi = lo + rnd() % 5000000;
        uint64_t align = (rnd() % 2) ? 4096 : 0;
        uint64_t b[13];
        mca_common_sfio_coll_domains(lo, hi, na, align, b);
        ck_assert_uint_eq(b[0], lo);
        ck_assert_uint_eq(b[na], hi);
        for (int a = 0; a < na; ++a) {
            ck_assert_uint_le(b[a], b[a + 1]);
            if (a > 0 && align && b[a] != hi && b[a] != b[a - 1] && (hi - lo) / na >= align) {
                ck_assert_uint_eq(b[a] % align, 0);
            }
        }
        for (int t = 0; t < 20 && hi > lo; ++t) {
            uint64_t off = lo + rnd() % (hi - lo);
            int a = mca_common_sfio_coll_domain_of(b, na, off);
            ck_assert(b[a] <= off && off < b[a + 1]);
        }
    }
}
END_TEST

START_TEST(cuts_bound_cycles)
{
    for (int run = 0; run < 300; ++run) {
        size_t n = 1 + rnd() % 60;
        piece_t *p = malloc(n * sizeof(piece_t));
        uint64_t off = rnd() % 100, total = 0;
        for (size_t i = 0; i < n; ++i) {   /* disjoint pieces, shuffled */
            p[i].off = off;
            p[i].len = 1 + rnd() % 3000;
            off += p[i].len + rnd() % 500;
            total += p[i].len;
        }
        for (size_t i = n; i > 1; --i) {
            size_t j = rnd() % i;
            piece_t t = p[i - 1];
            p[i - 1] = p[j];
            p[j] = t;
        }
        uint64_t cb = 1 + rnd() % 5000;
        int ncyc = (int) ((total + cb - 1) / cb);
        uint64_t *cuts = malloc(((size_t) ncyc + 1) * sizeof(uint64_t));
        mca_common_sfio_coll_cuts(p, n, cb, ncyc, cuts);
        ck_assert_uint_eq(cuts[0], 0);
        ck_assert_uint_eq(cuts[ncyc], UINT64_MAX);
        uint64_t *per = calloc((size_t) ncyc, sizeof(uint64_t));
        for (size_t i = 0; i < n; ++i) {
            for (uint64_t b = p[i].off; b < p[i].off + p[i].len; ++b) {
                int c = mca_common_sfio_coll_cycle_of(cuts, ncyc, b);
                ck_assert(cuts[c] <= b && b < cuts[c + 1]);
                per[c]++;
            }
        }
        for (int c = 0; c < ncyc; ++c) {
            ck_assert_uint_le(per[c], cb);
            ck_assert_uint_le(cuts[c], cuts[c + 1]);
        }
        free(per);
        free(cuts);
        free(p);
    }
}
END_TEST

/* order_disjoint against a plain insertion sort by (offset, index) and a
 * byte map of overlaps, on inputs made of several ascending sequences (as
 * senders deliver them), fully random ones, ties and empty pieces. */
START_TEST(order_disjoint_against_reference)
{
    for (int round = 0; round < 3000; ++round) {
        size_t n = rnd() % 70;
        mca_common_sfio_coll_piece_t p[70];
        size_t order[70], tmp[70], ref[70];
        int mode = (int) (rnd() % 3);
        uint64_t off = 0;
        for (size_t i = 0; i < n; ++i) {
            if (0 == mode) {            /* ascending sequences, disjoint */
                if (rnd() % 8 == 0) {
                    off = rnd() % 64;
                }
                p[i].off = off * 16 + (rnd() % 2) * 1024;
                p[i].len = rnd() % 17;
                off += 2;
            } else {                    /* random, ties and overlaps likely */
                p[i].off = rnd() % (mode == 1 ? 40 : 4000);
                p[i].len = rnd() % 12;
            }
        }
        for (size_t i = 0; i < n; ++i) {
            size_t j = i;
            while (j > 0 && p[ref[j - 1]].off > p[i].off) {
                ref[j] = ref[j - 1];
                --j;
            }
            ref[j] = i;
        }
        unsigned char cover[5200];
        memset(cover, 0, sizeof(cover));
        bool disjoint = true;
        for (size_t i = 0; i < n; ++i) {
            for (uint64_t b = p[i].off; b < p[i].off + p[i].len; ++b) {
                if (cover[b]++) {
                    disjoint = false;
                }
            }
        }
        bool got = mca_common_sfio_coll_order_disjoint(p, n, order, tmp);
        ck_assert_int_eq(got, disjoint);
        for (size_t i = 0; i < n; ++i) {
            ck_assert_uint_eq(order[i], ref[i]);
        }
    }
}
END_TEST

START_TEST(union_against_bitmap)
{
    enum { N = 4096 };
    static unsigned char bits[N], got[N];
    for (int run = 0; run < 500; ++run) {
        size_t n = rnd() % 50;
        piece_t p[50], runs[50];
        uint64_t gap = (rnd() % 3 == 0) ? rnd() % 64 : 0;
        memset(bits, 0, sizeof(bits));
        memset(got, 0, sizeof(got));
        for (size_t i = 0; i < n; ++i) {
            p[i].off = rnd() % (N - 200);
            p[i].len = rnd() % 200;
            memset(bits + p[i].off, 1, (size_t) p[i].len);
        }
        piece_t q[50];
        memcpy(q, p, sizeof(p));
        size_t m = mca_common_sfio_coll_union(q, n, gap, runs);
        for (size_t r = 0; r < m; ++r) {
            ck_assert_uint_gt(runs[r].len, 0);
            if (r > 0) {
                ck_assert_uint_gt(runs[r].off, runs[r - 1].off + runs[r - 1].len + gap);
            }
            memset(got + runs[r].off, 1, (size_t) runs[r].len);
        }
        for (int b = 0; b < N; ++b) {
            if (bits[b]) {
                ck_assert(got[b]);
                long r = mca_common_sfio_coll_run_of(runs, m, (uint64_t) b);
                ck_assert(r >= 0 && runs[r].off <= (uint64_t) b &&
                          (uint64_t) b < runs[r].off + runs[r].len);
            } else if (0 == gap) {
                ck_assert(!got[b]);
                ck_assert_int_eq(mca_common_sfio_coll_run_of(runs, m, (uint64_t) b), -1);
            }
        }
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("collplan");
    TCase *t = tcase_create("core");
    tcase_add_test(t, catalogue_names);
    tcase_add_test(t, decision_table_gabriel);
    tcase_add_test(t, decision_custom_rules_first_match);
    tcase_add_test(t, summary_c_and_gap);
    tcase_add_test(t, summary_dup_bound);
    tcase_add_test(t, queued_cycle_bounds);
    tcase_add_test(t, clip_runs_to_end);
    tcase_add_test(t, read_stop_and_bytes_below);
    tcase_add_test(t, decision_dup_only_replaces_individual);
    tcase_add_test(t, groups_rows_of_a_2d_pattern);
    tcase_add_test(t, groups_contiguous_every_rank_and_zero_ranks);
    tcase_add_test(t, refine_split_and_merge);
    tcase_add_test(t, refine_aggregator_has_bytes);
    tcase_add_test(t, refine_random_invariants);
    tcase_add_test(t, cap_merges_neighbours);
    tcase_add_test(t, spread_aggregators);
    tcase_add_test(t, domains_cover_and_align);
    tcase_add_test(t, cuts_bound_cycles);
    tcase_add_test(t, union_against_bitmap);
    tcase_add_test(t, order_disjoint_against_reference);
    tcase_add_test(t, reads_alone_by_extent_ratio);
    tcase_set_timeout(t, 60);
    suite_add_tcase(s, t);
    return s;
}

SFIO_CHECK_MAIN(suite)
