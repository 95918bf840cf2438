/*
 * Unit tests of sfio_placeplan: aggregator placement over nodes and
 * packages.  Examples (block and cyclic rank mapping on 2 and 4 nodes,
 * more aggregators than nodes, sockets, groups), then seeded random runs
 * checked for evenness, members-only choices and determinism.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SFIO_CHECK_RNG xorshift64
#define SFIO_CHECK_SEED 0x9e3779b97f4a7c15ull
#include "sfio_check.h"
#include "sfio_placeplan.h"

typedef mca_common_sfio_place_topo_t topo_t;

static topo_t emulated(const char *spec, int n, int *node)
{
    topo_t t = { n, 0, node, NULL };
    ck_assert_int_eq(mca_common_sfio_place_emulate(spec, n, node, &t.nnodes), 1);
    ck_assert_int_eq(mca_common_sfio_place_topo_verify(&t), 0);
    return t;
}

static void assert_ranks(const int *got, const int *want, int n)
{
    for (int i = 0; i < n; ++i) {
        ck_assert_int_eq(got[i], want[i]);
    }
}

START_TEST(emulate_specs)
{
    int node[8], nn = -1;
    ck_assert_int_eq(mca_common_sfio_place_emulate(NULL, 8, node, &nn), 0);
    ck_assert_int_eq(mca_common_sfio_place_emulate("", 8, node, &nn), 0);
    ck_assert_int_eq(mca_common_sfio_place_emulate("block", 8, node, &nn), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_place_emulate("block:0", 8, node, &nn), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_place_emulate("cyclic:2x", 8, node, &nn), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_place_emulate("round:2", 8, node, &nn), -EINVAL);
    ck_assert_int_eq(nn, -1);

    ck_assert_int_eq(mca_common_sfio_place_emulate("block:2", 6, node, &nn), 1);
    ck_assert_int_eq(nn, 2);
    assert_ranks(node, (int[]) { 0, 0, 0, 1, 1, 1 }, 6);
    ck_assert_int_eq(mca_common_sfio_place_emulate("block:3", 7, node, &nn), 1);
    assert_ranks(node, (int[]) { 0, 0, 0, 1, 1, 2, 2 }, 7);
    ck_assert_int_eq(mca_common_sfio_place_emulate("cyclic:3", 7, node, &nn), 1);
    assert_ranks(node, (int[]) { 0, 1, 2, 0, 1, 2, 0 }, 7);
    /* more nodes than ranks: one rank per node */
    ck_assert_int_eq(mca_common_sfio_place_emulate("block:9", 3, node, &nn), 1);
    ck_assert_int_eq(nn, 3);
    assert_ranks(node, (int[]) { 0, 1, 2 }, 3);
}
END_TEST

START_TEST(dense_ids_first_appearance)
{
    uint64_t key[7] = { 77, 5, 77, 9, 5, 1000, 9 };
    int id[7];
    ck_assert_int_eq(mca_common_sfio_place_dense(key, 7, id), 4);
    assert_ranks(id, (int[]) { 0, 1, 0, 2, 1, 3, 2 }, 7);
    uint64_t same[3] = { 4, 4, 4 };
    ck_assert_int_eq(mca_common_sfio_place_dense(same, 3, id), 1);
    assert_ranks(id, (int[]) { 0, 0, 0 }, 3);
}
END_TEST

START_TEST(verify_rejects)
{
    int node[4] = { 0, 2, 2, 0 };
    topo_t t = { 4, 3, node, NULL };
    ck_assert_int_eq(mca_common_sfio_place_topo_verify(&t), -1);    /* node 1 unused */
    t.nnodes = 2;
    ck_assert_int_eq(mca_common_sfio_place_topo_verify(&t), -1);    /* id 2 out of range */
    node[1] = node[2] = 1;
    ck_assert_int_eq(mca_common_sfio_place_topo_verify(&t), 0);
    int pkg[4] = { 0, 0, -1, 0 };
    t.package = pkg;
    ck_assert_int_eq(mca_common_sfio_place_topo_verify(&t), -1);
}
END_TEST

START_TEST(spread_block_vs_cyclic_two_nodes)
{
    int node[8], aggr[8];
    /* block: 0-3 on node 0, 4-7 on node 1; rank spreading was already right */
    topo_t t = emulated("block:2", 8, node);
    ck_assert_int_eq(mca_common_sfio_place_spread(&t, 2, aggr), 2);
    assert_ranks(aggr, (int[]) { 0, 4 }, 2);
    ck_assert_int_eq(mca_common_sfio_place_spread(&t, 4, aggr), 4);
    assert_ranks(aggr, (int[]) { 0, 2, 4, 6 }, 4);
    /* cyclic: even ranks on node 0; rank spreading would put 0 and 4 (or
     * 0, 2, 4, 6) all on node 0 */
    t = emulated("cyclic:2", 8, node);
    ck_assert_int_eq(mca_common_sfio_place_spread(&t, 2, aggr), 2);
    assert_ranks(aggr, (int[]) { 0, 1 }, 2);
    ck_assert_int_eq(mca_common_sfio_place_spread(&t, 4, aggr), 4);
    assert_ranks(aggr, (int[]) { 0, 1, 4, 5 }, 4);
}
END_TEST

/* The processors cap: per node min(ranks, per_cpu * cpus), summed. */
START_TEST(cpu_cap_per_node)
{
    int node[8];
    topo_t t = emulated("block:2", 8, node);
    ck_assert_int_eq(mca_common_sfio_place_cpu_cap(&t, 1), 8);    /* cpus unknown */
    int cpus[2] = { 2, 16 };
    t.node_cpus = cpus;
    ck_assert_int_eq(mca_common_sfio_place_cpu_cap(&t, 1), 2 + 4);
    ck_assert_int_eq(mca_common_sfio_place_cpu_cap(&t, 2), 4 + 4);
    ck_assert_int_eq(mca_common_sfio_place_cpu_cap(&t, 0), 8);    /* 0: no cap */
    /* one node, 8 ranks on 2 processors: this machine's case */
    int one[1] = { 2 };
    t = emulated("block:1", 8, node);
    t.node_cpus = one;
    ck_assert_int_eq(mca_common_sfio_place_cpu_cap(&t, 1), 2);
    one[0] = 0;     /* nonsense count: at least one per node */
    ck_assert_int_eq(mca_common_sfio_place_cpu_cap(&t, 1), 1);
}
END_TEST

START_TEST(spread_four_nodes_more_aggregators_than_nodes)
{
    int node[12], aggr[12], per[4];
    topo_t t = emulated("cyclic:4", 12, node);
    ck_assert_int_eq(mca_common_sfio_place_spread(&t, 6, aggr), 6);
    mca_common_sfio_place_per_node(&t, aggr, 6, per);
    assert_ranks(per, (int[]) { 2, 2, 1, 1 }, 4);       /* ties: lower node first */
    assert_ranks(aggr, (int[]) { 0, 1, 2, 3, 4, 5 }, 6);
    t = emulated("block:4", 12, node);
    ck_assert_int_eq(mca_common_sfio_place_spread(&t, 6, aggr), 6);
    assert_ranks(aggr, (int[]) { 0, 1, 3, 4, 6, 9 }, 6);
    /* every rank: all of them */
    ck_assert_int_eq(mca_common_sfio_place_spread(&t, 12, aggr), 12);
    for (int i = 0; i < 12; ++i) {
        ck_assert_int_eq(aggr[i], i);
    }
    /* clamped to [1, n] */
    ck_assert_int_eq(mca_common_sfio_place_spread(&t, 40, aggr), 12);
    ck_assert_int_eq(mca_common_sfio_place_spread(&t, 0, aggr), 1);
    ck_assert_int_eq(aggr[0], 0);
}
END_TEST

START_TEST(spread_uneven_nodes)
{
    /* node 0 has 1 rank, node 1 has 7: node 0 cannot take more than one,
     * the rest goes to node 1; with one aggregator the big node wins */
    int node[8] = { 0, 1, 1, 1, 1, 1, 1, 1 }, aggr[8], per[2];
    topo_t t = { 8, 2, node, NULL };
    ck_assert_int_eq(mca_common_sfio_place_spread(&t, 4, aggr), 4);
    mca_common_sfio_place_per_node(&t, aggr, 4, per);
    assert_ranks(per, (int[]) { 1, 3 }, 2);
    ck_assert_int_eq(mca_common_sfio_place_spread(&t, 1, aggr), 1);
    ck_assert_int_eq(node[aggr[0]], 1);
}
END_TEST

START_TEST(spread_sockets_within_node)
{
    /* one node, two packages interleaved (as with --map-by socket) */
    int node[8] = { 0 }, pkg[8] = { 0, 1, 0, 1, 0, 1, 0, 1 }, aggr[8];
    topo_t t = { 8, 1, node, pkg };
    ck_assert_int_eq(mca_common_sfio_place_spread(&t, 2, aggr), 2);
    ck_assert_int_ne(pkg[aggr[0]], pkg[aggr[1]]);
    ck_assert_int_eq(mca_common_sfio_place_spread(&t, 4, aggr), 4);
    int per_pkg[2] = { 0, 0 };
    for (int a = 0; a < 4; ++a) {
        per_pkg[pkg[aggr[a]]]++;
    }
    ck_assert_int_eq(per_pkg[0], 2);
    ck_assert_int_eq(per_pkg[1], 2);
    /* without packages the same node spreads by rank */
    t.package = NULL;
    ck_assert_int_eq(mca_common_sfio_place_spread(&t, 2, aggr), 2);
    assert_ranks(aggr, (int[]) { 0, 4 }, 2);
}
END_TEST

START_TEST(groups_cyclic_moves_to_other_node)
{
    int node[8], aggr[4];
    /* 4 groups of 2 consecutive ranks (a forced count of 4); the groups'
     * first ranks 0, 2, 4, 6 are all on node 0 under cyclic:2 */
    int group_of[8] = { 0, 0, 1, 1, 2, 2, 3, 3 }, pref[4] = { 0, 2, 4, 6 };
    topo_t t = emulated("cyclic:2", 8, node);
    ck_assert_int_eq(mca_common_sfio_place_groups(&t, group_of, 4, pref, aggr), 0);
    assert_ranks(aggr, (int[]) { 0, 3, 4, 7 }, 4);
    /* under block:2 the preferred ranks are already balanced: kept */
    t = emulated("block:2", 8, node);
    ck_assert_int_eq(mca_common_sfio_place_groups(&t, group_of, 4, pref, aggr), 0);
    assert_ranks(aggr, pref, 4);
    /* no preference: lowest rank among the least-loaded */
    ck_assert_int_eq(mca_common_sfio_place_groups(&t, group_of, 4, NULL, aggr), 0);
    assert_ranks(aggr, pref, 4);
}
END_TEST

START_TEST(groups_constrained_first)
{
    /* group 0 spans both nodes, group 1 only node 0: group 1 must take node
     * 0, so group 0 goes to node 1 even though it is listed first */
    int node[4] = { 0, 1, 0, 0 }, group_of[4] = { 0, 0, 1, 1 }, aggr[2];
    topo_t t = { 4, 2, node, NULL };
    ck_assert_int_eq(mca_common_sfio_place_groups(&t, group_of, 2, NULL, aggr), 0);
    ck_assert_int_eq(aggr[0], 1);
    ck_assert_int_eq(aggr[1], 2);
}
END_TEST

START_TEST(groups_bad_input)
{
    int node[4] = { 0, 0, 1, 1 }, aggr[3];
    topo_t t = { 4, 2, node, NULL };
    int empty_group[4] = { 0, 0, 2, 2 };        /* group 1 has no member */
    ck_assert_int_eq(mca_common_sfio_place_groups(&t, empty_group, 3, NULL, aggr), -EINVAL);
    int out_of_range[4] = { 0, 0, 1, 5 };
    ck_assert_int_eq(mca_common_sfio_place_groups(&t, out_of_range, 2, NULL, aggr), -EINVAL);
}
END_TEST

/* Random topologies: n ranks, random node of each (made dense), random
 * packages; spread and groups checked against their promises. */
static topo_t random_topo(int n, int *node, int *pkg)
{
    uint64_t key[64];
    int want = 1 + (int) (rnd() % (uint64_t) n);
    int block = rnd() % 2;
    for (int r = 0; r < n; ++r) {
        key[r] = block ? (uint64_t) r * (uint64_t) want / (uint64_t) n : rnd() % (uint64_t) want;
        pkg[r] = (int) (rnd() % 3);
    }
    topo_t t = { n, 0, node, (rnd() % 2) ? pkg : NULL };
    t.nnodes = mca_common_sfio_place_dense(key, n, node);
    ck_assert_int_eq(mca_common_sfio_place_topo_verify(&t), 0);
    return t;
}

START_TEST(random_spread_even_and_deterministic)
{
    for (int iter = 0; iter < 3000; ++iter) {
        int node[64], pkg[64], aggr[64], again[64], per[64], cap[64];
        int n = 1 + (int) (rnd() % 64);
        topo_t t = random_topo(n, node, pkg);
        int naggr = 1 + (int) (rnd() % (uint64_t) n);
        ck_assert_int_eq(mca_common_sfio_place_spread(&t, naggr, aggr), naggr);
        ck_assert_int_eq(mca_common_sfio_place_spread(&t, naggr, again), naggr);
        assert_ranks(again, aggr, naggr);
        for (int a = 0; a < naggr; ++a) {
            ck_assert(aggr[a] >= 0 && aggr[a] < n);
            ck_assert(0 == a || aggr[a - 1] < aggr[a]);     /* distinct, ascending */
        }
        /* evenness: a node below its neighbours' count is full */
        mca_common_sfio_place_per_node(&t, aggr, naggr, per);
        memset(cap, 0, sizeof(cap));
        for (int r = 0; r < n; ++r) {
            cap[node[r]]++;
        }
        int most = 0;
        for (int x = 0; x < t.nnodes; ++x) {
            most = per[x] > most ? per[x] : most;
        }
        for (int x = 0; x < t.nnodes; ++x) {
            ck_assert(per[x] >= most - 1 || per[x] == cap[x]);
        }
        /* the same within each node over its packages */
        if (NULL != t.package) {
            for (int x = 0; x < t.nnodes; ++x) {
                int pper[3] = { 0 }, pcap[3] = { 0 }, pmost = 0;
                for (int r = 0; r < n; ++r) {
                    pcap[pkg[r]] += node[r] == x;
                }
                for (int a = 0; a < naggr; ++a) {
                    pper[pkg[aggr[a]]] += node[aggr[a]] == x;
                }
                for (int p = 0; p < 3; ++p) {
                    pmost = pper[p] > pmost ? pper[p] : pmost;
                }
                for (int p = 0; p < 3; ++p) {
                    ck_assert(pper[p] >= pmost - 1 || pper[p] == pcap[p]);
                }
            }
        }
    }
}
END_TEST

START_TEST(random_groups_members_even_deterministic)
{
    for (int iter = 0; iter < 3000; ++iter) {
        int node[64], pkg[64], group_of[64], aggr[64], again[64], pref[64], per[64];
        int n = 1 + (int) (rnd() % 64);
        topo_t t = random_topo(n, node, pkg);
        int ngroups = 1 + (int) (rnd() % (uint64_t) n);
        /* every group non-empty: the first ngroups ranks seed them (in a
         * shuffled order, so groups are not runs of ranks), the rest join
         * any; or, half of the time, groups of consecutive ranks */
        int consecutive = rnd() % 2;
        for (int r = 0; r < n; ++r) {
            group_of[r] = consecutive ? (int) ((long long) r * ngroups / n)
                        : (r < ngroups ? r : (int) (rnd() % (uint64_t) ngroups));
        }
        for (int r = n - 1; r > 0 && !consecutive; --r) {
            int s = (int) (rnd() % (uint64_t) (r + 1)), tmp = group_of[r];
            group_of[r] = group_of[s];
            group_of[s] = tmp;
        }
        for (int r = n - 1; r >= 0; --r) {
            pref[group_of[r]] = r;      /* the lowest member, as collplan picks */
        }
        const int *pp = (rnd() % 2) ? pref : NULL;
        ck_assert_int_eq(mca_common_sfio_place_groups(&t, group_of, ngroups, pp, aggr), 0);
        ck_assert_int_eq(mca_common_sfio_place_groups(&t, group_of, ngroups, pp, again), 0);
        assert_ranks(again, aggr, ngroups);
        for (int g = 0; g < ngroups; ++g) {
            ck_assert(aggr[g] >= 0 && aggr[g] < n);
            ck_assert_int_eq(group_of[aggr[g]], g);         /* members only */
        }
        /* when every group reaches every node, nodes differ by at most 1 */
        int spans_all = 1;
        for (int g = 0; g < ngroups && spans_all; ++g) {
            for (int x = 0; x < t.nnodes && spans_all; ++x) {
                int found = 0;
                for (int r = 0; r < n && !found; ++r) {
                    found = group_of[r] == g && node[r] == x;
                }
                spans_all = found;
            }
        }
        if (spans_all) {
            mca_common_sfio_place_per_node(&t, aggr, ngroups, per);
            int lo = n, hi = 0;
            for (int x = 0; x < t.nnodes; ++x) {
                lo = per[x] < lo ? per[x] : lo;
                hi = per[x] > hi ? per[x] : hi;
            }
            ck_assert_int_le(hi - lo, 1);
        }
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("placeplan");
    TCase *t = tcase_create("core");
    tcase_add_test(t, emulate_specs);
    tcase_add_test(t, dense_ids_first_appearance);
    tcase_add_test(t, verify_rejects);
    tcase_add_test(t, spread_block_vs_cyclic_two_nodes);
    tcase_add_test(t, spread_four_nodes_more_aggregators_than_nodes);
    tcase_add_test(t, spread_uneven_nodes);
    tcase_add_test(t, cpu_cap_per_node);
    tcase_add_test(t, spread_sockets_within_node);
    tcase_add_test(t, groups_cyclic_moves_to_other_node);
    tcase_add_test(t, groups_constrained_first);
    tcase_add_test(t, groups_bad_input);
    tcase_add_test(t, random_spread_even_and_deterministic);
    tcase_add_test(t, random_groups_members_even_deterministic);
    tcase_set_timeout(t, 60);
    suite_add_tcase(s, t);
    return s;
}

SFIO_CHECK_MAIN(suite)
