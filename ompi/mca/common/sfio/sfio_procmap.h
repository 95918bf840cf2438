/*
 * sfio_procmap: pure process placement by I/O traffic (Gabriel's OMPIO, "I/O
 * access based process placement").  No MPI, no I/O: the tool sfio-place
 * and the unit tests link it alone.
 *
 * Three parts, as in the seed:
 *   application matrix  app[i * n + j]: bytes rank i sent to rank j (in
 *                       collective I/O: a rank to an aggregator; reads are
 *                       recorded the same way round, client first), summed
 *                       over calls;
 *   architecture matrix arch[s * nslots + t]: what moving one byte between
 *                       slots s and t costs (0 on the diagonal, symmetric);
 *                       built from a machine description (nodes, slots,
 *                       packages) with three costs, or supplied measured;
 *   mapping             slot_of[i]: the slot rank i runs on, injective (a
 *                       permutation when there are as many slots as ranks).
 *
 * cost(map) = sum over i != j of app[i][j] * arch[slot_of[i]][slot_of[j]].
 *
 * Algorithms:
 *   _mpipp     the general case (Chen et al., ICS'06): from several starting
 *              mappings (the caller's, then seeded random ones), passes of
 *              pairwise swaps in the Kernighan-Lin manner (take the best
 *              unlocked swap even when it costs, lock both, keep the best
 *              prefix of the pass) until a pass gains nothing; the best
 *              result over the starts.  Never worse than the caller's start;
 *              deterministic for a seed.  Each pass is O(n^4) in the number
 *              of slots: fine for hundreds of ranks, slow for thousands.
 *   _setmatch  the special case of a regular pattern (rows of a 2-D
 *              decomposition that only talk within the row, e.g. dynamic
 *              segmentation's groups): the independent sets (connected
 *              components of the traffic graph) go whole to one node each,
 *              largest first, best fit; a set larger than any node's free
 *              slots is split in rank order.  Linear-ish, greedy.
 */
#ifndef MCA_COMMON_SFIO_PROCMAP_H
#define MCA_COMMON_SFIO_PROCMAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The slots jobs run on and what moving a byte between two of them costs. */
typedef struct {
    int nslots;
    int nnodes;
    int *node;          /* nslots: node of each slot, dense 0 .. nnodes-1 */
    int *slot_in_node;  /* nslots: index of the slot within its node */
    int *package;       /* nslots: package within the node */
    double *cost;       /* nslots * nslots */
} mca_common_sfio_procmap_arch_t;

/* Default relative costs per byte: same package, same node (other
 * package), other node.  Only the ratios matter to the mapping. */
#define MCA_COMMON_SFIO_PROCMAP_COST_PACKAGE 1.0
#define MCA_COMMON_SFIO_PROCMAP_COST_NODE 2.0
#define MCA_COMMON_SFIO_PROCMAP_COST_NET 10.0

/* Builds the machine: nnodes nodes, node x with slots[x] slots split into
 * packages contiguous packages (sizes differing by at most 1; packages
 * clamped to [1, slots[x]]).  Costs: c_pkg within a package, c_node within a
 * node, c_net between nodes.  Returns 0, -EINVAL (nnodes < 1, a node without
 * slots, negative cost) or -ENOMEM; *arch_p is set only on success. */
int mca_common_sfio_procmap_arch_build(int nnodes, const int *slots, int packages, double c_pkg,
                                       double c_node, double c_net,
                                       mca_common_sfio_procmap_arch_t *arch_p);
void mca_common_sfio_procmap_arch_free(mca_common_sfio_procmap_arch_t *arch);

/* 0 when node ids are dense, each node's slots contiguous and nodes in
 * order (slot 0 on node 0, ...), the cost matrix symmetric, non-negative with a
 * zero diagonal; else -1. */
int mca_common_sfio_procmap_arch_verify(const mca_common_sfio_procmap_arch_t *arch);

/* Adds one call's traffic of rank src: sent[j] bytes to rank j (n
 * entries).  Saturates instead of wrapping. */
void mca_common_sfio_procmap_app_add(uint64_t *app, int n, int src, const uint64_t *sent);

/* Connected components of the traffic graph (an edge where app[i][j] or
 * app[j][i] is non-zero; self traffic ignored), numbered by their lowest
 * rank: group_p[n].  Returns the number of components or -ENOMEM. */
int mca_common_sfio_procmap_app_groups(const uint64_t *app, int n, int *group_p);

/* True (1) when the matrix is Gabriel's special case: at least two
 * components, all of the same size, at least two ranks each, i.e. rows of a
 * regular pattern that never talk across rows.  0 otherwise, -ENOMEM. */
int mca_common_sfio_procmap_app_is_regular(const uint64_t *app, int n);

/* 0 when slot_of[n] maps ranks to distinct slots in [0, nslots), else -1. */
int mca_common_sfio_procmap_map_verify(const int *slot_of, int n, int nslots);

/* The cost of a mapping (see top).  n <= arch->nslots. */
double mca_common_sfio_procmap_cost(const uint64_t *app, int n,
                                    const mca_common_sfio_procmap_arch_t *arch,
                                    const int *slot_of);

/* Identity (rank i on slot i: block over nodes) and cyclic (rank i on node
 * i % nnodes, next free slot there; nodes that are full are skipped)
 * mappings, slot_of_p[n].  Return 0 or -EINVAL (n > nslots). */
int mca_common_sfio_procmap_map_block(const mca_common_sfio_procmap_arch_t *arch, int n,
                                      int *slot_of_p);
int mca_common_sfio_procmap_map_cyclic(const mca_common_sfio_procmap_arch_t *arch, int n,
                                       int *slot_of_p);

/* MPIPP (see top).  start: NULL (identity) or a valid mapping; nstarts >= 1
 * starting mappings in all (start first); seed picks the random ones.
 * slot_of_p[n] gets the best mapping found, cost_p (may be NULL) its cost.
 * Returns 0, -EINVAL (n < 1, n > nslots, bad start) or -ENOMEM. */
int mca_common_sfio_procmap_mpipp(const uint64_t *app, int n,
                                  const mca_common_sfio_procmap_arch_t *arch, const int *start,
                                  int nstarts, uint64_t seed, int *slot_of_p, double *cost_p);

/* SetMatch (see top).  Returns 0, -EINVAL or -ENOMEM; slot_of_p[n]. */
int mca_common_sfio_procmap_setmatch(const uint64_t *app, int n,
                                     const mca_common_sfio_procmap_arch_t *arch, int *slot_of_p);

/* The matrix file written by fcoll/adaptive and read by sfio-place:
 *   sfio-appmatrix 1 <n>
 *   <i> <j> <bytes>          one line per non-zero entry, i and j in [0, n)
 * Lines starting with '#' and blank lines are ignored; repeated (i, j)
 * lines add up.  _format writes into buf (at most cap bytes, always NUL
 * terminated when cap > 0) and returns the length the whole text needs
 * (snprintf style).  _parse returns 0 and a malloc'd n * n matrix in
 * *app_p and n in *n_p, or -EINVAL with the 1-based line number of the
 * first error in *line_p (may be NULL), or -ENOMEM. */
size_t mca_common_sfio_procmap_app_format(const uint64_t *app, int n, char *buf, size_t cap);
int mca_common_sfio_procmap_app_parse(const char *text, int *n_p, uint64_t **app_p, int *line_p);

#ifdef __cplusplus
}
#endif

#endif
