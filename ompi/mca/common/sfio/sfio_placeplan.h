/*
 * sfio_placeplan: pure placement of collective-I/O aggregators over nodes
 * and sockets (Gabriel's OMPIO, "Topology").  No MPI, no I/O: the input is where
 * each rank runs (a dense node id, optionally a package/socket id), which
 * every rank holds after one allgather, so every rank computes the same
 * placement and the unit tests can check it.
 *
 * Why: on cluster file systems each node's link to the storage is the
 * bottleneck, so aggregators spread by rank number (block mapping: several
 * on one node, none on others) waste the links of the empty nodes; inside a
 * node, aggregators on one socket share its memory bandwidth.
 *
 *   _spread   naggr aggregators for rank-free work (two-phase domains):
 *             round-robin over nodes (counts per node differ by at most 1
 *             unless a node has too few ranks), then over the packages of
 *             each node, then evenly over each package's ranks;
 *   _groups   one aggregator per group (dynamic/static segmentation), a
 *             member of the group: groups with members on the fewest
 *             nodes choose first, each takes a member on the least-loaded
 *             node (then package).
 */
#ifndef MCA_COMMON_SFIO_PLACEPLAN_H
#define MCA_COMMON_SFIO_PLACEPLAN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where the n ranks run. */
typedef struct {
    int n;              /* ranks */
    int nnodes;         /* node ids are dense: each of 0 .. nnodes-1 is used */
    const int *node;    /* n entries */
    const int *package; /* n entries (any ids >= 0, compared within a node);
                           NULL: one package per node */
    const int *node_cpus;   /* nnodes entries: processors online on each node;
                               NULL: unknown */
} mca_common_sfio_place_topo_t;

/* 0 when t is well formed (n >= 1, node ids dense, packages >= 0), else -1. */
int mca_common_sfio_place_topo_verify(const mca_common_sfio_place_topo_t *t);

/* Dense ids of n keys (e.g. host name hashes): equal keys get equal ids,
 * numbered in the order of their first rank.  id_p[n].  Returns the number
 * of distinct keys, or -ENOMEM. */
int mca_common_sfio_place_dense(const uint64_t *key, int n, int *id_p);

/* Emulated nodes for testing placement on one machine: spec "block:N"
 * (N nodes of consecutive ranks, sizes differing by at most 1) or
 * "cyclic:N" (rank r on node r % N); N is clamped to n.  Returns 1 and
 * fills node_p[n] and *nnodes_p; 0 for NULL or "" (real topology); -EINVAL
 * for anything else (node_p untouched). */
int mca_common_sfio_place_emulate(const char *spec, int n, int *node_p, int *nnodes_p);

/* naggr (clamped to [1, n]) distinct aggregator ranks, ascending, in
 * aggr_p[naggr] (so two-phase domains keep the ranks' file order).
 * Returns the count, or -ENOMEM. */
int mca_common_sfio_place_spread(const mca_common_sfio_place_topo_t *t, int naggr, int *aggr_p);

/* One aggregator per group: group_of[n] in [0, ngroups), every group
 * non-empty.  aggr_p[g] is a member of group g.  preferred (NULL or
 * ngroups entries, each a member of its group) wins ties, so a choice that
 * is already balanced stays.  Returns 0 or -ENOMEM / -EINVAL. */
int mca_common_sfio_place_groups(const mca_common_sfio_place_topo_t *t, const int *group_of,
                                 int ngroups, const int *preferred, int *aggr_p);

/* How many aggregators the nodes' processors can keep busy: the sum over
 * nodes of min(ranks on the node, per_cpu * its processors).  Where a
 * write is a memory copy (page cache), aggregators beyond that only take
 * turns on the same cores.  t->n when per_cpu <= 0 or node_cpus is NULL
 * (no cap); at least 1. */
int mca_common_sfio_place_cpu_cap(const mca_common_sfio_place_topo_t *t, int per_cpu);

/* per_node_p[t->nnodes]: how many of aggr[0..naggr) run on each node. */
void mca_common_sfio_place_per_node(const mca_common_sfio_place_topo_t *t, const int *aggr,
                                    int naggr, int *per_node_p);

#ifdef __cplusplus
}
#endif

#endif
