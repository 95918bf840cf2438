/*
 * Unit tests of sfio_coordplan: the provider of the coordination fabric
 * (named, automatic order, node-local providers only on one node) and the
 * host of a file's service (nodes in turn, ranks of a node in turn,
 * forced), the host rule checked on seeded random placements against its
 * definition and for balance over consecutive seeds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "sfio_check.h"
#include "sfio_coordplan.h"

typedef mca_common_sfio_coordplan_prov_t prov_t;

/* fi_getinfo's list on a machine with TCP only, as libfabric 1.17 orders it */
static const prov_t tcp_only[] = {
    { "tcp;ofi_rxm", false }, { "tcp;ofi_rxm", false }, { "net", false },
    { "net;ofi_rxm", false }, { "udp;ofi_rxd", false }, { "shm", false },
    { "sockets", false },
};
#define NTCP ((int) (sizeof(tcp_only) / sizeof(tcp_only[0])))

START_TEST(provider_auto)
{
    int i = -1;
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(tcp_only, NTCP, NULL, false, &i), 0);
    ck_assert_int_eq(i, 0);
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(tcp_only, NTCP, "auto", false, &i), 0);
    ck_assert_int_eq(i, 0);
    /* shm first within one node, never across */
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(tcp_only, NTCP, "", true, &i), 0);
    ck_assert_int_eq(i, 5);
    const prov_t hw[] = {
        { "sockets", false }, { "tcp;ofi_rxm", false }, { "verbs;ofi_rxm", false },
        { "verbs;ofi_rxm", true }, { "shm", true },
    };
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(hw, 5, NULL, false, &i), 0);
    ck_assert_int_eq(i, 3);   /* atomics first */
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(hw, 3, NULL, false, &i), 0);
    ck_assert_int_eq(i, 2);   /* a network provider before tcp */
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(hw, 2, NULL, false, &i), 0);
    ck_assert_int_eq(i, 1);   /* tcp;ofi_rxm before sockets */
    const prov_t soft[] = { { "udp;ofi_rxd", false }, { "tcp", false }, { "sockets", false } };
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(soft, 3, NULL, false, &i), 0);
    ck_assert_int_eq(i, 1);   /* tcp alone before other software */
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(soft, 1, NULL, false, &i), 0);
    ck_assert_int_eq(i, 0);
    /* nothing usable */
    const prov_t only_shm[] = { { "shm", false }, { NULL, false } };
    i = 42;
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(only_shm, 2, NULL, false, &i), -ENOENT);
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(only_shm, 0, NULL, true, &i), -ENOENT);
    ck_assert_int_eq(i, 42);
}
END_TEST

START_TEST(provider_named)
{
    int i = -1;
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(tcp_only, NTCP, "sockets", false, &i), 0);
    ck_assert_int_eq(i, 6);
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(tcp_only, NTCP, "net", false, &i), 0);
    ck_assert_int_eq(i, 2);   /* the whole name before a first part */
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(tcp_only, NTCP, "udp", false, &i), 0);
    ck_assert_int_eq(i, 4);
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(tcp_only, NTCP, "tcp", false, &i), 0);
    ck_assert_int_eq(i, 0);
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(tcp_only, NTCP, "shm", true, &i), 0);
    ck_assert_int_eq(i, 5);
    i = 42;
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(tcp_only, NTCP, "shm", false, &i),
                     -EXDEV);
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(tcp_only, NTCP, "verbs", false, &i),
                     -ENOENT);
    ck_assert_int_eq(mca_common_sfio_coordplan_provider(tcp_only, NTCP, "tc", false, &i),
                     -ENOENT);   /* a prefix of a part is no match */
    ck_assert_int_eq(i, 42);
    ck_assert(mca_common_sfio_coordplan_node_local("shm"));
    ck_assert(mca_common_sfio_coordplan_node_local("sm2"));
    ck_assert(!mca_common_sfio_coordplan_node_local("shmx"));
    ck_assert(!mca_common_sfio_coordplan_node_local(NULL));
    /* whose atomics are messages too (the counters' auto takes none) */
    ck_assert(mca_common_sfio_coordplan_software("tcp;ofi_rxm"));
    ck_assert(mca_common_sfio_coordplan_software("sockets"));
    ck_assert(mca_common_sfio_coordplan_software("udp;ofi_rxd"));
    ck_assert(!mca_common_sfio_coordplan_software("verbs;ofi_rxm"));
    ck_assert(!mca_common_sfio_coordplan_software("cxi"));
    ck_assert(!mca_common_sfio_coordplan_software(NULL));
}
END_TEST

START_TEST(host_examples)
{
    const int block[8] = { 0, 0, 1, 1, 2, 2, 3, 3 };
    const int cyclic[8] = { 0, 1, 2, 3, 0, 1, 2, 3 };
    const int want_block[8] = { 0, 2, 4, 6, 1, 3, 5, 7 };
    const int want_cyclic[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    for (uint64_t s = 0; s < 8; ++s) {
        ck_assert_int_eq(mca_common_sfio_coordplan_host(block, 8, 4, s, -1), want_block[s]);
        ck_assert_int_eq(mca_common_sfio_coordplan_host(cyclic, 8, 4, s, -1), want_cyclic[s]);
        /* the rule repeats after every rank hosted once */
        ck_assert_int_eq(mca_common_sfio_coordplan_host(block, 8, 4, s + 8, -1), want_block[s]);
    }
    ck_assert_int_eq(mca_common_sfio_coordplan_host(block, 8, 4, 5, 3), 3);
    ck_assert_int_eq(mca_common_sfio_coordplan_host(block, 8, 4, 5, 11), 3);
    const int one[1] = { 0 };
    ck_assert_int_eq(mca_common_sfio_coordplan_host(one, 1, 1, 12345, -1), 0);
    /* bad arguments */
    const int holes[3] = { 0, 2, 2 };
    ck_assert_int_eq(mca_common_sfio_coordplan_host(holes, 3, 3, 1, -1), -1);
    ck_assert_int_eq(mca_common_sfio_coordplan_host(block, 0, 4, 0, -1), -1);
    ck_assert_int_eq(mca_common_sfio_coordplan_host(NULL, 8, 4, 0, -1), -1);
    ck_assert_int_eq(mca_common_sfio_coordplan_host(block, 8, 0, 0, -1), -1);
}
END_TEST

/* Random placements: the host is the k-th rank of node seed % nnodes;
 * nnodes consecutive seeds put one host on every node. */
START_TEST(host_random)
{
    rng_state = 2311;
    for (int run = 0; run < 2000; ++run) {
        int n = 1 + (int) (rnd() % 40), nnodes = 1 + (int) (rnd() % (uint64_t) n);
        int node[40], count[40] = { 0 }, hosted[40] = { 0 };
        /* dense ids: the first nnodes ranks cover every node, then shuffle */
        for (int r = 0; r < n; ++r) {
            node[r] = r < nnodes ? r : (int) (rnd() % (uint64_t) nnodes);
        }
        for (int r = n - 1; r > 0; --r) {
            int j = (int) (rnd() % (uint64_t) (r + 1)), t = node[r];
            node[r] = node[j];
            node[j] = t;
        }
        for (int r = 0; r < n; ++r) {
            count[node[r]]++;
        }
        uint64_t base = rnd() % 1000;
        for (uint64_t s = base; s < base + (uint64_t) nnodes; ++s) {
            int h = mca_common_sfio_coordplan_host(node, n, nnodes, s, -1);
            REQUIRE(h >= 0 && h < n);
            REQUIRE(node[h] == (int) (s % (uint64_t) nnodes));
            int before = 0;
            for (int r = 0; r < h; ++r) {
                before += node[r] == node[h];
            }
            REQUIRE(before == (int) ((s / (uint64_t) nnodes) % (uint64_t) count[node[h]]));
            hosted[node[h]]++;
        }
        for (int v = 0; v < nnodes; ++v) {
            REQUIRE(1 == hosted[v]);
        }
    }
}
END_TEST

static Suite *coordplan_suite(void)
{
    Suite *s = suite_create("coordplan");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, provider_auto);
    tcase_add_test(tc, provider_named);
    tcase_add_test(tc, host_examples);
    tcase_add_test(tc, host_random);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(coordplan_suite)
