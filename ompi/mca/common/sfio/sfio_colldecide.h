/*
 * sfio_colldecide: the whole choice of fcoll/adaptive for one collective
 * call (algorithm and aggregator groups), as one pure function of facts
 * the adapter (sfio_fcoll_plan.c) gathers: parameters and hints, the storage
 * kind, where ranks run, and the allgathered per-rank summaries.  No MPI,
 * no I/O; every rank computes the same choice from the same facts.
 *
 * Precedence of the algorithm, first that applies:
 *   1. atomic-mode writes: an algorithm with one serial order of the ranks
 *      (two_phase: disjoint domains, highest rank wins), whatever is forced;
 *   2. a forced algorithm (fcoll_adaptive_algorithm);
 *   3. the romio_cb_write / romio_cb_read hint "disable": individual;
 *   4. ranks apart: no rank's extent interleaves with or overlaps another's
 *      and every rank's contiguous runs average at least min_run bytes:
 *      individual (each rank one independent access; what ROMIO's
 *      automatic mode does, here from the real extents of the call);
 *   5. reads each rank can serve alone (extent <= read_extent_ratio times
 *      its bytes): individual;
 *   6. the rules table (sfio_collplan: the decision table over c, k, ss,
 *      gap and heavy overlap on network storage); two_phase when no rule
 *      matches.
 * The hint "enable" skips 4 and 5 and turns an individual answer of 6
 * into two_phase.
 *
 * Aggregator groups, when the algorithm aggregates, first that applies:
 *   1. a forced count (the cb_nodes hint, else num_aggregators): that many
 *      groups of consecutive ranks;
 *   2. automatic: groups from the view (or the Cartesian rows), merged
 *      below k and split above k bytes, capped by max_aggregators; then on
 *      network storage raised to the storage links in play (nodes holding
 *      data, or ranks holding data where each rank has its own link), still
 *      within max_aggregators; on local storage capped by the processors
 *      (cpu_cap) once the call holds a cycle buffer per capped aggregator.
 */
#ifndef MCA_COMMON_SFIO_COLLDECIDE_H
#define MCA_COMMON_SFIO_COLLDECIDE_H

#include <stdbool.h>
#include <stdint.h>

#include "sfio_collplan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the choice depends on besides the per-rank summaries. */
typedef struct {
    int algorithm;          /* forced (mca_common_sfio_coll_alg_t); AUTO: decide */
    int num_aggregators;    /* forced count: the cb_nodes hint, else the
                               parameter; <= 0: automatic */
    int cb_hint;            /* romio_cb_write (writes) / romio_cb_read (reads):
                               1 enable, 0 disable, -1 automatic or absent */
    bool read;
    bool atomic;            /* the file is in atomic mode */
    bool local;             /* local storage (page cache), else network */
    uint64_t k;             /* saturation size of one process (>= 1) */
    uint64_t ss;            /* stripe size (>= 1) */
    uint64_t min_run;       /* rule 4's smallest average run; 0: rule off */
    uint64_t read_extent_ratio; /* rule 5; 0: off */
    int cart_rows;          /* > 0: groups are the rows of a Cartesian communicator */
    int max_aggregators;    /* > 0: cap of the automatic count */
    const int *node;        /* n entries: node of each rank; NULL: unknown */
    int links_per_node;     /* storage links per node; 0: one per rank */
    int cpu_cap;            /* local storage: processors' cap of the automatic
                               count (> 0), applied when the call holds at
                               least cpu_cap * buffer bytes; 0: none */
    uint64_t buffer;        /* an aggregator's cycle buffer, bytes */
} mca_common_sfio_coll_facts_t;

/* Which rule of the precedence gave the algorithm (for verbose output). */
typedef enum {
    MCA_COMMON_SFIO_WHY_ATOMIC = 0,
    MCA_COMMON_SFIO_WHY_FORCED,
    MCA_COMMON_SFIO_WHY_HINT,
    MCA_COMMON_SFIO_WHY_APART,
    MCA_COMMON_SFIO_WHY_READS_ALONE,
    MCA_COMMON_SFIO_WHY_RULES
} mca_common_sfio_coll_why_t;

extern const char *const mca_common_sfio_coll_why_names[];

typedef struct {
    int alg;                /* never AUTO */
    mca_common_sfio_coll_why_t why;
    bool interleaved;       /* some rank's extent meets another's */
    uint64_t min_run;       /* smallest average run of a rank with bytes */
    int links;              /* storage links in play (0: unknown) */
} mca_common_sfio_coll_choice_t;

/* True when the extents [lo, hi) of two ranks with bytes intersect: one
 * rank's data lies (partly) between another's first and last byte, or
 * they overlap.  scratch: 2 * n entries. */
bool mca_common_sfio_coll_interleaved(const mca_common_sfio_coll_rank_t *r, int n,
                                      uint64_t *scratch);

/* Storage links the call's data can use: with node (n entries) known,
 * links_per_node per node holding a rank with bytes (0: one per such
 * rank, node then unused), never more than the ranks with bytes; 0 when
 * node is NULL and links_per_node > 0.
 * Node ids lie in [0, n).  scratch: n entries. */
int mca_common_sfio_coll_links(const mca_common_sfio_coll_rank_t *r, int n, const int *node,
                               int links_per_node, uint64_t *scratch);

/* The algorithm of the call (the precedence above).  scratch: 2 * n entries. */
void mca_common_sfio_coll_choose(const mca_common_sfio_coll_facts_t *f,
                                 const mca_common_sfio_coll_rank_t *r, int n,
                                 uint64_t *scratch, mca_common_sfio_coll_choice_t *choice_p);

/* The aggregator groups for an aggregating choice (the precedence above):
 * g from _groups_init(g, n).  ch->links as _choose set it. */
void mca_common_sfio_coll_choose_groups(const mca_common_sfio_coll_facts_t *f,
                                        const mca_common_sfio_coll_rank_t *r, int n,
                                        const mca_common_sfio_coll_choice_t *ch,
                                        mca_common_sfio_coll_groups_t *g);

#ifdef __cplusplus
}
#endif

#endif
