/*
 * Unit tests of sfio_procmap: process placement by I/O traffic.  The cost
 * is checked against a reference written from the machine description (not
 * the cost matrix); MPIPP against the optimum found by enumerating every
 * mapping on small machines (at most 8 slots); SetMatch on the seed's 2-D
 * patterns; every mapping checked to be injective and to fill no node
 * beyond its slots; the matrix file format round-trips.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SFIO_CHECK_RNG xorshift64
#define SFIO_CHECK_SEED 0x2545f4914f6cdd1dull
#include "sfio_check.h"
#include "sfio_procmap.h"

typedef mca_common_sfio_procmap_arch_t arch_t;

#define C_PKG 1.0
#define C_NODE 3.0
#define C_NET 10.0

static arch_t machine(int nnodes, const int *slots, int packages)
{
    arch_t a;
    ck_assert_int_eq(mca_common_sfio_procmap_arch_build(nnodes, slots, packages, C_PKG, C_NODE,
                                                        C_NET, &a), 0);
    ck_assert_int_eq(mca_common_sfio_procmap_arch_verify(&a), 0);
    return a;
}

/* The reference cost: from each slot's node and package, not from the
 * cost matrix the module built. */
static double ref_cost(const uint64_t *app, int n, const arch_t *a, const int *map)
{
    double c = 0;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            int s = map[i], t = map[j];
            double per = i == j ? 0
                         : a->node[s] != a->node[t] ? C_NET
                         : a->package[s] != a->package[t] ? C_NODE
                         : C_PKG;
            c += per * (double) app[i * n + j];
        }
    }
    return c;
}

/* Injective, and each node holds at most its slots (implied by distinct
 * slots, checked anyway from the node side). */
static void assert_mapping(const int *map, int n, const arch_t *a)
{
    ck_assert_int_eq(mca_common_sfio_procmap_map_verify(map, n, a->nslots), 0);
    int per[16] = { 0 }, cap[16] = { 0 };
    for (int s = 0; s < a->nslots; ++s) {
        cap[a->node[s]]++;
    }
    for (int i = 0; i < n; ++i) {
        per[a->node[map[i]]]++;
    }
    for (int x = 0; x < a->nnodes; ++x) {
        ck_assert_int_le(per[x], cap[x]);
    }
}

/* Minimum over every injective map of n ranks into the slots. */
static double bf_best;
static void bf_rec(const uint64_t *app, int n, const arch_t *a, int *map, char *used, int i)
{
    if (i == n) {
        double c = ref_cost(app, n, a, map);
        bf_best = bf_best < 0 || c < bf_best ? c : bf_best;
        return;
    }
    for (int s = 0; s < a->nslots; ++s) {
        if (!used[s]) {
            used[s] = 1;
            map[i] = s;
            bf_rec(app, n, a, map, used, i + 1);
            used[s] = 0;
        }
    }
}

static double brute_force(const uint64_t *app, int n, const arch_t *a)
{
    int map[8];
    char used[8] = { 0 };
    bf_best = -1;
    bf_rec(app, n, a, map, used, 0);
    return bf_best;
}

static void random_app(uint64_t *app, int n, int density_pct)
{
    for (int i = 0; i < n * n; ++i) {
        app[i] = (int) (rnd() % 100) < density_pct ? rnd() % 1000 : 0;
    }
}

/* A random machine of at most 8 slots holding n ranks. */
static arch_t random_machine(int n, int *slots)
{
    int nn, total;
    do {
        nn = 1 + (int) (rnd() % 4);
        total = 0;
        for (int x = 0; x < nn; ++x) {
            slots[x] = 1 + (int) (rnd() % 4);
            total += slots[x];
        }
    } while (total < n || total > 8);
    return machine(nn, slots, 1 + (int) (rnd() % 2));
}

START_TEST(arch_build_shape)
{
    arch_t a = machine(2, (int[]) { 4, 3 }, 2);
    ck_assert_int_eq(a.nslots, 7);
    ck_assert_int_eq(a.nnodes, 2);
    int node[7] = { 0, 0, 0, 0, 1, 1, 1 }, pkg[7] = { 0, 0, 1, 1, 0, 0, 1 };
    for (int s = 0; s < 7; ++s) {
        ck_assert_int_eq(a.node[s], node[s]);
        ck_assert_int_eq(a.package[s], pkg[s]);
    }
    ck_assert(a.cost[0 * 7 + 1] == C_PKG);
    ck_assert(a.cost[0 * 7 + 2] == C_NODE);
    ck_assert(a.cost[0 * 7 + 4] == C_NET);
    ck_assert(a.cost[3 * 7 + 3] == 0);
    mca_common_sfio_procmap_arch_free(&a);

    arch_t b;
    ck_assert_int_eq(mca_common_sfio_procmap_arch_build(0, (int[]) { 1 }, 1, 1, 1, 1, &b), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_procmap_arch_build(2, (int[]) { 1, 0 }, 1, 1, 1, 1, &b),
                     -EINVAL);
    ck_assert_int_eq(mca_common_sfio_procmap_arch_build(1, (int[]) { 2 }, 1, -1, 1, 1, &b), -EINVAL);

    /* verify rejects asymmetric costs and non-contiguous nodes */
    a = machine(2, (int[]) { 2, 2 }, 1);
    a.cost[1] = 5;
    ck_assert_int_eq(mca_common_sfio_procmap_arch_verify(&a), -1);
    a.cost[1] = a.cost[4];
    ck_assert_int_eq(mca_common_sfio_procmap_arch_verify(&a), 0);
    a.node[1] = 1;
    a.node[2] = 0;
    ck_assert_int_eq(mca_common_sfio_procmap_arch_verify(&a), -1);
    mca_common_sfio_procmap_arch_free(&a);
}
END_TEST

START_TEST(map_verify_and_fixed_maps)
{
    ck_assert_int_eq(mca_common_sfio_procmap_map_verify((int[]) { 0, 2, 1 }, 3, 3), 0);
    ck_assert_int_eq(mca_common_sfio_procmap_map_verify((int[]) { 0, 2, 2 }, 3, 3), -1);
    ck_assert_int_eq(mca_common_sfio_procmap_map_verify((int[]) { 0, 3 }, 2, 3), -1);
    ck_assert_int_eq(mca_common_sfio_procmap_map_verify((int[]) { 0, 1, 2, 3 }, 4, 3), -1);

    arch_t a = machine(3, (int[]) { 3, 1, 2 }, 1);
    int map[6];
    ck_assert_int_eq(mca_common_sfio_procmap_map_cyclic(&a, 6, map), 0);
    /* rank r on node r % 3 while it has room: 0@0 1@1 2@2 3@0 (node 1 full) 4@2 5@0 */
    int want[6] = { 0, 3, 4, 1, 5, 2 };
    for (int i = 0; i < 6; ++i) {
        ck_assert_int_eq(map[i], want[i]);
    }
    assert_mapping(map, 6, &a);
    ck_assert_int_eq(mca_common_sfio_procmap_map_block(&a, 4, map), 0);
    assert_mapping(map, 4, &a);
    ck_assert_int_eq(mca_common_sfio_procmap_map_cyclic(&a, 7, map), -EINVAL);
    mca_common_sfio_procmap_arch_free(&a);
}
END_TEST

START_TEST(app_add_saturates)
{
    uint64_t app[4] = { 0 };
    mca_common_sfio_procmap_app_add(app, 2, 1, (uint64_t[]) { 5, 7 });
    mca_common_sfio_procmap_app_add(app, 2, 1, (uint64_t[]) { UINT64_MAX, 1 });
    ck_assert(0 == app[0] && 0 == app[1]);
    ck_assert(UINT64_MAX == app[2] && 8 == app[3]);
}
END_TEST

/* Gabriel's example: 4 ranks, 2x2 tiles of 4 bytes. */
static const uint64_t seed_generic[16] = { 0, 7, 0, 0, 7, 0, 1, 0, 0, 1, 0, 7, 0, 0, 7, 0 };
static const uint64_t seed_special[16] = { 100, 100, 0, 0, 100, 100, 0, 0,
                                           0, 0, 100, 100, 0, 0, 100, 100 };

START_TEST(groups_and_regular)
{
    int g[8];
    ck_assert_int_eq(mca_common_sfio_procmap_app_groups(seed_generic, 4, g), 1);
    ck_assert_int_eq(mca_common_sfio_procmap_app_is_regular(seed_generic, 4), 0);
    ck_assert_int_eq(mca_common_sfio_procmap_app_groups(seed_special, 4, g), 2);
    ck_assert(0 == g[0] && 0 == g[1] && 1 == g[2] && 1 == g[3]);
    ck_assert_int_eq(mca_common_sfio_procmap_app_is_regular(seed_special, 4), 1);

    /* interleaved rows (rank r in row r % 2), star to the row's first rank */
    uint64_t app[64] = { 0 };
    for (int r = 2; r < 8; ++r) {
        app[r * 8 + r % 2] = 10;
    }
    ck_assert_int_eq(mca_common_sfio_procmap_app_groups(app, 8, g), 2);
    for (int r = 0; r < 8; ++r) {
        ck_assert_int_eq(g[r], r % 2);
    }
    ck_assert_int_eq(mca_common_sfio_procmap_app_is_regular(app, 8), 1);
    /* an isolated rank (no traffic) makes the sets unequal */
    app[7 * 8 + 1] = 0;
    ck_assert_int_eq(mca_common_sfio_procmap_app_is_regular(app, 8), 0);
    /* self traffic alone does not connect */
    memset(app, 0, sizeof(app));
    app[0] = 5;
    ck_assert_int_eq(mca_common_sfio_procmap_app_groups(app, 2, g), 2);
}
END_TEST

START_TEST(cost_matches_reference)
{
    for (int iter = 0; iter < 200; ++iter) {
        int slots[4], n = 1 + (int) (rnd() % 8);
        arch_t a = random_machine(n, slots);
        uint64_t app[64];
        random_app(app, n, 50);
        int map[8], used[8] = { 0 };
        for (int i = 0; i < n; ++i) {
            int s;
            do {
                s = (int) (rnd() % (uint64_t) a.nslots);
            } while (used[s]);
            used[s] = 1;
            map[i] = s;
        }
        ck_assert(mca_common_sfio_procmap_cost(app, n, &a, map) == ref_cost(app, n, &a, map));
        mca_common_sfio_procmap_arch_free(&a);
    }
}
END_TEST

START_TEST(mpipp_seed_example)
{
    /* 2 nodes of 2 slots: the pairs 0-1 and 2-3 (7 bytes each way) belong
     * together; the cyclic start splits both. */
    arch_t a = machine(2, (int[]) { 2, 2 }, 1);
    int start[4], map[4];
    ck_assert_int_eq(mca_common_sfio_procmap_map_cyclic(&a, 4, start), 0);
    double c0 = mca_common_sfio_procmap_cost(seed_generic, 4, &a, start), c;
    ck_assert_int_eq(mca_common_sfio_procmap_mpipp(seed_generic, 4, &a, start, 1, 1, map, &c), 0);
    assert_mapping(map, 4, &a);
    ck_assert(c == brute_force(seed_generic, 4, &a));
    ck_assert(c < c0);
    ck_assert_int_eq(a.node[map[0]], a.node[map[1]]);
    ck_assert_int_eq(a.node[map[2]], a.node[map[3]]);
    mca_common_sfio_procmap_arch_free(&a);
}
END_TEST

/* Random small cases: never worse than the start, deterministic for a
 * seed.  A local search: it can stop short of the optimum.  Over 3,000 such
 * cases one start found the optimum in 78% of them, 8 starts in 99.5%, the
 * worst at 1.21 times it; the bounds below leave room for that. */
START_TEST(mpipp_vs_brute_force)
{
    int cases = 300, exact1 = 0, exact8 = 0;
    for (int iter = 0; iter < cases; ++iter) {
        int slots[4], n = 2 + (int) (rnd() % 7);
        arch_t a = random_machine(n, slots);
        uint64_t app[64];
        random_app(app, n, 10 + (int) (rnd() % 60));
        int start[8], map[8], map2[8];
        ck_assert_int_eq(mca_common_sfio_procmap_map_cyclic(&a, n, start), 0);
        double c0 = mca_common_sfio_procmap_cost(app, n, &a, start), c1, c8, c8b;
        double opt = brute_force(app, n, &a);
        uint64_t seed = rnd();

        ck_assert_int_eq(mca_common_sfio_procmap_mpipp(app, n, &a, start, 1, seed, map, &c1), 0);
        assert_mapping(map, n, &a);
        ck_assert(c1 <= c0);
        ck_assert(c1 >= opt);
        ck_assert(c1 == mca_common_sfio_procmap_cost(app, n, &a, map));
        exact1 += c1 == opt;

        ck_assert_int_eq(mca_common_sfio_procmap_mpipp(app, n, &a, start, 8, seed, map, &c8), 0);
        assert_mapping(map, n, &a);
        ck_assert(c8 <= c1);
        ck_assert_msg(c8 <= 1.25 * opt, "case %d: n %d cost %g optimum %g", iter, n, c8, opt);
        exact8 += c8 == opt;

        /* deterministic for a seed */
        ck_assert_int_eq(mca_common_sfio_procmap_mpipp(app, n, &a, start, 8, seed, map2, &c8b), 0);
        ck_assert(c8b == c8);
        ck_assert_int_eq(memcmp(map, map2, (size_t) n * sizeof(int)), 0);
        mca_common_sfio_procmap_arch_free(&a);
    }
    ck_assert_int_ge(exact1 * 100, cases * 70);
    ck_assert_int_ge(exact8 * 100, cases * 98);
}
END_TEST

START_TEST(mpipp_bad_input)
{
    arch_t a = machine(1, (int[]) { 2 }, 1);
    uint64_t app[9] = { 0 };
    int map[3];
    ck_assert_int_eq(mca_common_sfio_procmap_mpipp(app, 3, &a, NULL, 1, 1, map, NULL), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_procmap_mpipp(app, 2, &a, (int[]) { 1, 1 }, 1, 1, map, NULL),
                     -EINVAL);
    ck_assert_int_eq(mca_common_sfio_procmap_mpipp(app, 2, &a, NULL, 0, 1, map, NULL), -EINVAL);
    /* no traffic: cost 0, the start kept */
    double c = -1;
    ck_assert_int_eq(mca_common_sfio_procmap_mpipp(app, 2, &a, (int[]) { 1, 0 }, 3, 1, map, &c), 0);
    ck_assert(0 == c && 1 == map[0] && 0 == map[1]);
    mca_common_sfio_procmap_arch_free(&a);
}
END_TEST

/* rows x cols ranks, row-major rank numbers, each row sends to its first
 * rank (dynamic segmentation's aggregator) and among itself. */
static void rows_app(uint64_t *app, int rows, int cols, int interleaved)
{
    int n = rows * cols;
    memset(app, 0, (size_t) n * n * sizeof(uint64_t));
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            int ri = interleaved ? i % rows : i / cols, rj = interleaved ? j % rows : j / cols;
            if (i != j && ri == rj) {
                app[i * n + j] = 100;
            }
        }
    }
}

START_TEST(setmatch_rows_to_nodes)
{
    uint64_t app[64 * 64];
    int map[64];
    /* seed's special case: 2 rows of 2, 2 nodes of 2 */
    arch_t a = machine(2, (int[]) { 2, 2 }, 1);
    ck_assert_int_eq(mca_common_sfio_procmap_setmatch(seed_special, 4, &a, map), 0);
    assert_mapping(map, 4, &a);
    ck_assert(mca_common_sfio_procmap_cost(seed_special, 4, &a, map) ==
              brute_force(seed_special, 4, &a));
    mca_common_sfio_procmap_arch_free(&a);

    /* 4 interleaved rows of 2 on 4 nodes of 2 (the cyclic launch's pattern),
     * and 2 rows of 4 on 2 nodes of 4 with 2 packages: optimum */
    for (int k = 0; k < 2; ++k) {
        int rows = 0 == k ? 4 : 2, cols = 8 / rows;
        arch_t b = 0 == k ? machine(4, (int[]) { 2, 2, 2, 2 }, 1) : machine(2, (int[]) { 4, 4 }, 2);
        rows_app(app, rows, cols, 1);
        ck_assert_int_eq(mca_common_sfio_procmap_app_is_regular(app, 8), 1);
        ck_assert_int_eq(mca_common_sfio_procmap_setmatch(app, 8, &b, map), 0);
        assert_mapping(map, 8, &b);
        for (int i = 0; i < 8; ++i) {
            ck_assert_int_eq(b.node[map[i]], b.node[map[i % rows]]);
        }
        ck_assert(mca_common_sfio_procmap_cost(app, 8, &b, map) == brute_force(app, 8, &b));
        mca_common_sfio_procmap_arch_free(&b);
    }

    /* 8 rows of 4 on 4 nodes of 8: two whole rows per node */
    arch_t c = machine(4, (int[]) { 8, 8, 8, 8 }, 2);
    rows_app(app, 8, 4, 1);
    ck_assert_int_eq(mca_common_sfio_procmap_setmatch(app, 32, &c, map), 0);
    assert_mapping(map, 32, &c);
    int per[4] = { 0 };
    for (int i = 0; i < 32; ++i) {
        ck_assert_int_eq(c.node[map[i]], c.node[map[i % 8]]);
        per[c.node[map[i]]]++;
    }
    for (int x = 0; x < 4; ++x) {
        ck_assert_int_eq(per[x], 8);
    }
    /* all inside nodes: only package and node costs remain */
    ck_assert(mca_common_sfio_procmap_cost(app, 32, &c, map) <= 32 * 3 * 100 * C_NODE);
    mca_common_sfio_procmap_arch_free(&c);

    /* rows larger than nodes: 2 rows of 6 on 3 nodes of 4, split in rank
     * order, still a valid mapping */
    arch_t d = machine(3, (int[]) { 4, 4, 4 }, 1);
    rows_app(app, 2, 6, 0);
    ck_assert_int_eq(mca_common_sfio_procmap_setmatch(app, 12, &d, map), 0);
    assert_mapping(map, 12, &d);
    mca_common_sfio_procmap_arch_free(&d);
}
END_TEST

/* SetMatch on random regular patterns that fit: never worse than cyclic,
 * and on machines of at most 8 slots the brute-force optimum. */
START_TEST(setmatch_random_regular)
{
    uint64_t app[64];
    int map[8], start[8];
    for (int iter = 0; iter < 100; ++iter) {
        int rows = 2 + (int) (rnd() % 3), cols = 2 + (int) (rnd() % 2);
        if (rows * cols > 8) {
            rows = 2;
        }
        int n = rows * cols;
        arch_t a = machine(rows, (int[]) { cols, cols, cols, cols }, 1);
        rows_app(app, rows, cols, (int) (rnd() % 2));
        for (int i = 0; i < n * n; ++i) {
            app[i] = app[i] ? 1 + rnd() % 100 : 0;
        }
        ck_assert_int_eq(mca_common_sfio_procmap_setmatch(app, n, &a, map), 0);
        assert_mapping(map, n, &a);
        ck_assert_int_eq(mca_common_sfio_procmap_map_cyclic(&a, n, start), 0);
        double c = mca_common_sfio_procmap_cost(app, n, &a, map);
        ck_assert(c <= mca_common_sfio_procmap_cost(app, n, &a, start));
        ck_assert(c == brute_force(app, n, &a));
        mca_common_sfio_procmap_arch_free(&a);
    }
}
END_TEST

START_TEST(file_round_trip)
{
    uint64_t app[9] = { 0, 5, 0, 0, 0, 0, UINT64_MAX, 1, 0 };
    char buf[256];
    size_t len = mca_common_sfio_procmap_app_format(app, 3, buf, sizeof(buf));
    ck_assert_uint_eq(len, strlen(buf));
    ck_assert_str_eq(buf, "sfio-appmatrix 1 3\n0 1 5\n2 0 18446744073709551615\n2 1 1\n");
    /* snprintf style: the needed length even when it does not fit */
    char small[8];
    ck_assert_uint_eq(mca_common_sfio_procmap_app_format(app, 3, small, sizeof(small)), len);
    ck_assert_uint_eq(strlen(small), 7);

    int n = 0, line = 0;
    uint64_t *got = NULL;
    ck_assert_int_eq(mca_common_sfio_procmap_app_parse(buf, &n, &got, &line), 0);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(memcmp(got, app, sizeof(app)), 0);
    free(got);

    /* comments, blanks, CRLF, repeated entries add up */
    ck_assert_int_eq(mca_common_sfio_procmap_app_parse(
                         "# job 7\n\nsfio-appmatrix 1 2\r\n0 1 3\n 0 1 4 \n", &n, &got, &line),
                     0);
    ck_assert(2 == n && 7 == got[1] && 0 == got[0] + got[2] + got[3]);
    free(got);

    static const struct { const char *text; int line; } bad[] = {
        { "", 1 },
        { "# nothing\n", 2 },
        { "sfio-appmatrix 2 4\n", 1 },
        { "sfio-appmatrix 1 0\n", 1 },
        { "sfio-appmatrix 1 2\n0 2 1\n", 2 },
        { "sfio-appmatrix 1 2\n0 1\n", 2 },
        { "sfio-appmatrix 1 2\n0 1 -3\n", 2 },
        { "sfio-appmatrix 1 2\n\n1 1 3 x\n", 3 },
        { "0 1 3\n", 1 },
        { "sfio-appmatrix 1 2\n0 1 99999999999999999999\n", 2 },
    };
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); ++k) {
        got = NULL;
        line = 0;
        ck_assert_int_eq(mca_common_sfio_procmap_app_parse(bad[k].text, &n, &got, &line), -EINVAL);
        ck_assert_msg(line == bad[k].line, "case %zu: line %d", k, line);
        ck_assert_ptr_null(got);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("procmap");
    TCase *t = tcase_create("core");
    tcase_add_test(t, arch_build_shape);
    tcase_add_test(t, map_verify_and_fixed_maps);
    tcase_add_test(t, app_add_saturates);
    tcase_add_test(t, groups_and_regular);
    tcase_add_test(t, cost_matches_reference);
    tcase_add_test(t, mpipp_seed_example);
    tcase_add_test(t, mpipp_vs_brute_force);
    tcase_add_test(t, mpipp_bad_input);
    tcase_add_test(t, setmatch_rows_to_nodes);
    tcase_add_test(t, setmatch_random_regular);
    tcase_add_test(t, file_round_trip);
    tcase_set_timeout(t, 120);
    suite_add_tcase(s, t);
    return s;
}

SFIO_CHECK_MAIN(suite)
