/*
 * sfio_collplan: pure planning of collective I/O (Gabriel's OMPIO design) for
 * fcoll/adaptive.  No MPI, no I/O: everything here is a function of numbers
 * every rank already holds (the allgathered per-rank summaries), so all
 * ranks compute the same plan, and the unit tests can check it.
 *
 *   - the algorithm catalogue (one name table: MCA enum, help, dispatch);
 *   - the decision: Gabriel's table over c, k, ss and the gap, kept as
 *     data (a rules table) run by one evaluator;
 *   - the aggregator count: initial groups from the view (ranks whose file
 *     extents interleave form a group: one per row of a 2-D pattern) or
 *     every rank alone, merged while below k and split while above k;
 *   - two-phase file domains, dynamic-segmentation cycle cuts, and the
 *     union runs an aggregator writes.
 *
 * Ranges are half-open [off, off + len) on 64-bit unsigned offsets.
 */
#ifndef MCA_COMMON_SFIO_COLLPLAN_H
#define MCA_COMMON_SFIO_COLLPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The catalogue.  AUTO is not an algorithm: it asks the decision. */
typedef enum {
    MCA_COMMON_SFIO_COLL_AUTO = 0,
    MCA_COMMON_SFIO_COLL_INDIVIDUAL,
    MCA_COMMON_SFIO_COLL_TWO_PHASE,
    MCA_COMMON_SFIO_COLL_DYNAMIC,
    MCA_COMMON_SFIO_COLL_STATIC,
    MCA_COMMON_SFIO_COLL_NALGS
} mca_common_sfio_coll_alg_t;

/* Where an algorithm sends a rank's file pieces.  One call covers
 * [off, off + len) of the rank's access (spos: its position in the rank's
 * byte stream): *aggr_p gets the aggregator index, *cyc_p the cycle and
 * *take_p how many of the len bytes go there (1 <= *take_p <= len).  The
 * state is what the plan fixed for this rank (which fields an algorithm
 * reads is said at its function); calls come in stream order. */
typedef struct {
    const uint64_t *bounds; /* two_phase: naggr + 1 domain bounds */
    int naggr;
    uint64_t cycle_bytes;   /* two_phase: a domain's cycle length */
    const uint64_t *cuts;   /* dynamic: ncyc + 1 cuts of the rank's group */
    int ncyc;
    int group;              /* dynamic, static: the rank's group (= aggregator) */
    uint64_t gcyc;          /* static: cycles of the rank's group */
    uint64_t mine;          /* static: the rank's bytes */
    int c_static;           /* static: current cycle (starts at 0) */
} mca_common_sfio_coll_assign_t;

typedef void (*mca_common_sfio_coll_assign_fn_t)(mca_common_sfio_coll_assign_t *st,
                                                 uint64_t off, uint64_t len, uint64_t spos,
                                                 int *aggr_p, int *cyc_p, uint64_t *take_p);

/* Aggregator cycle c of a domain covers [bounds[a] + c * cycle_bytes, ...)
 * (reads bounds, naggr, cycle_bytes). */
void mca_common_sfio_coll_assign_two_phase(mca_common_sfio_coll_assign_t *st, uint64_t off,
                                           uint64_t len, uint64_t spos, int *aggr_p,
                                           int *cyc_p, uint64_t *take_p);
/* The group's aggregator; the cycle from the group's cuts (reads group,
 * cuts, ncyc). */
void mca_common_sfio_coll_assign_dynamic(mca_common_sfio_coll_assign_t *st, uint64_t off,
                                         uint64_t len, uint64_t spos, int *aggr_p, int *cyc_p,
                                         uint64_t *take_p);
/* The group's aggregator; cycle c holds the stream bytes
 * [c * mine / gcyc, (c + 1) * mine / gcyc) (reads group, gcyc, mine;
 * updates c_static). */
void mca_common_sfio_coll_assign_static(mca_common_sfio_coll_assign_t *st, uint64_t off,
                                        uint64_t len, uint64_t spos, int *aggr_p, int *cyc_p,
                                        uint64_t *take_p);

/* What an algorithm needs from the plan and the engine. */
enum {
    MCA_COMMON_SFIO_COLL_F_AGGREGATE = 1 << 0,  /* data goes through aggregators */
    MCA_COMMON_SFIO_COLL_F_DOMAINS = 1 << 1,    /* aggregators own contiguous file
                                                   domains, placed over all ranks */
    MCA_COMMON_SFIO_COLL_F_GROUPS = 1 << 2,     /* a group's aggregator is one of
                                                   its members */
    MCA_COMMON_SFIO_COLL_F_CUTS = 1 << 3,       /* the aggregator cuts its group's
                                                   runs into cycles (one exchange
                                                   before the counts) */
    MCA_COMMON_SFIO_COLL_F_SERIAL = 1 << 4      /* a write equals one serial order
                                                   of the ranks (atomic mode) */
};

/* One row per algorithm: the MCA enum, the help text and the dispatch all
 * come from here (coll/base's manner: the algorithm is its row). */
typedef struct {
    int id;
    const char *name;
    const char *help;   /* one line: what it does, where it is good */
    mca_common_sfio_coll_assign_fn_t assign;    /* NULL: no aggregators */
    unsigned flags;     /* MCA_COMMON_SFIO_COLL_F_* */
} mca_common_sfio_coll_alg_info_t;

/* Indexed by id, MCA_COMMON_SFIO_COLL_NALGS entries. */
extern const mca_common_sfio_coll_alg_info_t mca_common_sfio_coll_algs[];

/* Id of name, or -1. */
int mca_common_sfio_coll_alg_lookup(const char *name);

/* What the decision looks at (all ranks together). */
typedef struct {
    uint64_t c;     /* average contiguous chunk of the views, bytes */
    uint64_t k;     /* smallest write that saturates one process */
    uint64_t ss;    /* stripe size */
    bool gap;       /* the processes' data leave holes between them */
    bool dup;       /* a large share of the bytes is accessed by several
                       processes, and every byte over a client's link costs
                       (network storage): see _coll_dup_heavy */
} mca_common_sfio_coll_inputs_t;

/* A rule matches when each of its three conditions holds.
 * c_k:  compares c with k; c_ss: compares c with ss. */
typedef enum {
    MCA_COMMON_SFIO_CMP_ANY = 0,
    MCA_COMMON_SFIO_CMP_LT,     /* c <  x */
    MCA_COMMON_SFIO_CMP_LE,     /* c <= x */
    MCA_COMMON_SFIO_CMP_GT      /* c >  x */
} mca_common_sfio_coll_cmp_t;

typedef enum {
    MCA_COMMON_SFIO_GAP_ANY = 0,
    MCA_COMMON_SFIO_GAP_NONE,
    MCA_COMMON_SFIO_GAP_SOME
} mca_common_sfio_coll_gap_t;

typedef enum {
    MCA_COMMON_SFIO_DUP_ANY = 0,
    MCA_COMMON_SFIO_DUP_NONE,
    MCA_COMMON_SFIO_DUP_SOME
} mca_common_sfio_coll_dup_t;

typedef struct {
    mca_common_sfio_coll_cmp_t c_k;
    mca_common_sfio_coll_cmp_t c_ss;
    mca_common_sfio_coll_gap_t gap;
    mca_common_sfio_coll_dup_t dup;
    int alg;
} mca_common_sfio_coll_rule_t;

/* Gabriel's table, led by one rule of ours: where Gabriel's table says
 * individual (c > k, c > ss) but the processes' data overlap heavily on
 * network storage, two-phase, whose aggregators move each byte over a
 * link once where individual moves it once per process.  The first
 * matching rule wins. */
extern const mca_common_sfio_coll_rule_t mca_common_sfio_coll_default_rules[];
extern const size_t mca_common_sfio_coll_default_nrules;

/* First rule of rules[0..n) matching in; fallback when none does. */
int mca_common_sfio_coll_decide(const mca_common_sfio_coll_inputs_t *in,
                                const mca_common_sfio_coll_rule_t *rules, size_t n,
                                int fallback);

/* One rank's share of a collective call (what every rank allgathers). */
typedef struct {
    uint64_t lo, hi;    /* file extent [lo, hi); lo == hi: no bytes */
    uint64_t bytes;     /* bytes it accesses */
    uint64_t runs;      /* contiguous runs of its file view in this call */
} mca_common_sfio_coll_rank_t;

/* c (bytes / runs over all ranks, 0 without bytes), the global extent and
 * the gap (the sum of bytes does not cover the extent). */
typedef struct {
    uint64_t lo, hi, bytes, runs, c;
    bool gap;
    int active;         /* ranks with bytes */
    uint64_t dup;       /* bytes beyond the extent (bytes - (hi - lo), or 0):
                           a lower bound of the bytes that more than one
                           rank accesses, exact when the union of the ranks'
                           data fills the extent (overlapping tiles) */
} mca_common_sfio_coll_summary_t;

void mca_common_sfio_coll_summarize(const mca_common_sfio_coll_rank_t *r, int n,
                                    mca_common_sfio_coll_summary_t *s_p);

/* True when at least 1/MCA_COMMON_SFIO_COLL_DUP_SHARE of s's bytes are
 * known to be accessed by several ranks (s->dup). */
#define MCA_COMMON_SFIO_COLL_DUP_SHARE 8
bool mca_common_sfio_coll_dup_heavy(const mca_common_sfio_coll_summary_t *s);

/* Reads each rank can serve alone: true when every rank with bytes has a
 * file extent at most ratio times its bytes (ratio 0: never).  Such a rank
 * reads its extent once and keeps its pieces (data sieving), with no
 * exchange; worth it where reading a byte costs less than moving it
 * between ranks (page cache on one node), not where each client's link is
 * the bottleneck. */
bool mca_common_sfio_coll_reads_alone(const mca_common_sfio_coll_rank_t *r, int n,
                                      uint64_t ratio);

/* Aggregator groups: group_of[rank] in [0, ngroups); aggr[g] the rank that
 * aggregates group g.  Groups are numbered in increasing file order. */
typedef struct {
    int n;              /* ranks */
    int ngroups;
    int *group_of;      /* n entries */
    int *aggr;          /* n entries (ngroups used) */
} mca_common_sfio_coll_groups_t;

/* Allocates (caller frees with _groups_free); 0 or -ENOMEM. */
int mca_common_sfio_coll_groups_init(mca_common_sfio_coll_groups_t *g, int n);
void mca_common_sfio_coll_groups_free(mca_common_sfio_coll_groups_t *g);

/* Gabriel's step 2: ranks whose extents overlap (transitively) form a group;
 * ranks without bytes join the group of the preceding rank.  With
 * cart_rows > 0 (a Cartesian communicator of that many rows), groups are
 * instead the rows: cart_rows equal blocks of consecutive ranks. */
void mca_common_sfio_coll_groups_initial(const mca_common_sfio_coll_rank_t *r, int cart_rows,
                                         mca_common_sfio_coll_groups_t *g);

/* Gabriel's step 3: merge neighbouring groups (in file order) while a group
 * holds less than k bytes, then split a group holding more than k bytes
 * into ceil(bytes / k) parts (at most one per member), members kept in
 * rank order.  Picks each group's aggregator: its lowest rank with bytes
 * (else its lowest rank). */
void mca_common_sfio_coll_groups_refine(const mca_common_sfio_coll_rank_t *r, uint64_t k,
                                        mca_common_sfio_coll_groups_t *g);

/* At most cap groups (cap <= 0: no limit): neighbouring groups (in file
 * order) are merged evenly, group i joining i * cap / ngroups; each merged
 * group's aggregator is its first old group's.  For file systems whose
 * bandwidth stops growing with more clients (measured by
 * sfio-calibrate-k --writers). */
void mca_common_sfio_coll_groups_cap(int cap, mca_common_sfio_coll_groups_t *g);

/* A forced count: naggr groups of consecutive ranks (naggr clamped to
 * [1, n]); aggregator = first rank of each. */
void mca_common_sfio_coll_groups_even(int naggr, mca_common_sfio_coll_groups_t *g);

/* The invariants (every rank in one group, groups non-empty, each aggr in
 * its group).  0 or -1. */
int mca_common_sfio_coll_groups_verify(const mca_common_sfio_coll_groups_t *g);

/* naggr aggregator ranks spread over n ranks: aggr[i] = i * n / naggr. */
void mca_common_sfio_coll_spread(int n, int naggr, int *aggr);

/* Two-phase file domains: [lo, hi) cut into naggr contiguous domains
 * bounds[0] = lo < ... <= bounds[naggr] = hi, inner bounds aligned to
 * align (when a domain is at least align long).  Domain of an offset:
 * _domain_of (binary search). */
void mca_common_sfio_coll_domains(uint64_t lo, uint64_t hi, int naggr, uint64_t align,
                                  uint64_t *bounds);
int mca_common_sfio_coll_domain_of(const uint64_t *bounds, int naggr, uint64_t off);

/* A file piece. */
typedef struct {
    uint64_t off, len;
} mca_common_sfio_coll_piece_t;

/* Dynamic segmentation: pieces (any order; sorted here by offset) of one
 * group cut into ncyc cycles of about cycle_bytes each: cycle c covers the
 * offsets [cuts[c], cuts[c + 1]); cuts[0] = 0, cuts[ncyc] = UINT64_MAX,
 * non-decreasing.  Overlapping pieces may put more than cycle_bytes into a
 * cycle (by at most the overlap). */
void mca_common_sfio_coll_cuts(mca_common_sfio_coll_piece_t *p, size_t n, uint64_t cycle_bytes,
                               int ncyc, uint64_t *cuts);

/* Runs (disjoint, increasing, as _union returns them) clipped to end:
 * returns how many start below end; the last of those is shortened to end
 * there.  Runs from the returned index on lie wholly at or beyond end. */
size_t mca_common_sfio_coll_clip(mca_common_sfio_coll_piece_t *runs, size_t n, uint64_t end);

/* A read of runs (disjoint, increasing) that returned got bytes stopped
 * at the end of file: the offset where it stopped, or UINT64_MAX when got
 * covers every run (reads fill runs in order and stop only at the end of
 * file). */
uint64_t mca_common_sfio_coll_read_stop(const mca_common_sfio_coll_piece_t *runs, size_t n,
                                        uint64_t got);

/* Bytes of pieces (any order) that lie below end: a read's count when the
 * file ends at end. */
uint64_t mca_common_sfio_coll_bytes_below(const mca_common_sfio_coll_piece_t *p, size_t n,
                                          uint64_t end);

/* Cycle size with queued file I/O: an aggregator's exchange overlaps its
 * storage's time only from its second cycle on, so the busiest aggregator
 * (load bytes) gets at least min_cycles cycles, of no fewer than floor
 * bytes each.  Only ever shrinks cycle_bytes; min_cycles <= 1 keeps it. */
uint64_t mca_common_sfio_coll_queued_cycle(uint64_t cycle_bytes, uint64_t load, int min_cycles,
                                           uint64_t floor);

/* Cycle of offset off under cuts (ncyc cycles). */
int mca_common_sfio_coll_cycle_of(const uint64_t *cuts, int ncyc, uint64_t off);

/* Union of pieces sorted by offset (p is sorted in place): runs_p[0..ret)
 * disjoint, increasing; runs closer than max_gap are bridged (writes pass
 * 0: never bridge).  runs_p needs n entries. */
size_t mca_common_sfio_coll_union(mca_common_sfio_coll_piece_t *p, size_t n, uint64_t max_gap,
                                  mca_common_sfio_coll_piece_t *runs_p);

/* Order of pieces p[0..n) by offset: order_p[0..n) gets their indices,
 * pieces at one offset in index order (stable).  tmp needs n entries.
 * Natural merge sort: O(n log r) for pieces that come as r ascending
 * sequences (one per sender, usually).  Returns true when no two non-empty
 * pieces overlap, i.e. they can be written as they are, in that order. */
bool mca_common_sfio_coll_order_disjoint(const mca_common_sfio_coll_piece_t *p, size_t n,
                                         size_t *order_p, size_t *tmp);

/* Index of the run holding off (runs from _union), or -1. */
long mca_common_sfio_coll_run_of(const mca_common_sfio_coll_piece_t *runs, size_t n,
                                 uint64_t off);

#ifdef __cplusplus
}
#endif

#endif
