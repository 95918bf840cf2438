/*
 * Internal header of the collective engine (sfio_fcoll*.c): the plan of one
 * call, the cycle slots, and the functions the plan, cycle and state-machine
 * files share.  Not installed; the fcoll component sees sfio_fcoll.h only.
 */
#ifndef MCA_COMMON_SFIO_FCOLL_INT_H
#define MCA_COMMON_SFIO_FCOLL_INT_H

#include "ompi_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>

#include "mpi.h"
#include "opal/util/output.h"
#include "opal/util/info.h"
#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/request/request.h"
#include "ompi/mca/pml/pml.h"
#include "ompi/mca/fbtl/fbtl.h"
#include "ompi/mca/common/ompio/common_ompio_request.h"
#include "opal/runtime/opal_progress.h"
#include "opal/sys/atomic.h"

#include "sfio_fcoll.h"
#include "sfio_appmat.h"
#include "sfio_ompio.h"
#include "sfio_posixio.h"
#include "sfio_component.h"
#include "sfio_topo.h"

/* Smallest automatic cycle of an aggregator (a forced cycle size is kept). */
#define MIN_AUTO_CYCLE ((uint64_t) 4096)
#define SFIO_FCOLL_TAG 0x5f10c011
/* Bits of a rank's summary word 4. */
#define SUMMARY_FAILED ((uint64_t) 1)   /* the rank failed before the exchange */
#define SUMMARY_ATOMIC ((uint64_t) 2)   /* its file is in atomic mode */

/* ------------------------------------------------------------------ */
/* Memory side: the caller's buffer as a byte stream                    */

typedef struct {
    struct iovec *iov;
    uint32_t n;
    uint64_t *prefix;   /* n + 1 entries */
} mstream_t;

/* Pieces averaging less than this are gathered into one buffer before a
 * queued write (see write_aggregate). */
#define SFIO_FCOLL_SMALL_PIECE (64u << 10)

/* ------------------------------------------------------------------ */
/* The plan                                                            */

typedef struct {
    uint64_t off, len, spos;
    uint32_t key;       /* a * ncyc + c */
} piece_t;

/* One cycle's traffic; two slots alternate (double buffering). */
typedef struct {
    char *sbuf;             /* outgoing (this rank as a sender) */
    size_t scap;
    char *rbuf;             /* incoming (aggregator) */
    size_t rcap;
    char *dbuf;             /* read: data coming back to this rank */
    size_t dcap;
    ompi_request_t **reqs;  /* sends and receives of this cycle */
    int nreq;
    ompi_request_t **areqs; /* aggregator's headers (read) */
    int nareq;
    ompi_request_t **dreqs; /* aggregator's data replies (read) */
    int ndreq;
    char *ubuf;             /* aggregator: the union of the cycle's pieces */
    size_t ucap;
    ompi_request_t *ioreq;  /* aggregator: this cycle's file I/O, in flight (async) */
    uint64_t iobytes;       /* what a queued write must write */
    bool io_read;           /* ioreq is a read (short counts are the end of file) */
    bool io_bad;            /* a queued read failed: its cycle answers zeros */
    bool rd_issued;         /* read, aggregator: this slot's cycle read was issued */
    mca_common_sfio_coll_piece_t *qruns;    /* a queued read's runs (where a short */
    size_t nqruns, qcap;                    /* count stopped: read_stop) */
    double io_t0;           /* when it was queued (verbose 2) */
    uint64_t io_lo, io_hi;  /* the queued request's file span */
} slot_t;

typedef struct {
    uint64_t off, len;
    char *data;         /* write: the piece's bytes; read: where they go */
} apiece_t;

typedef struct {
    ompio_file_t *fh;
    ompi_communicator_t *comm;
    int rank, P, rw;                /* rw: 0 write, 1 read */
    const mca_common_sfio_fcoll_options_t *opt;
    mstream_t mem;
    struct iovec *fiov;
    int fcount;
    size_t max_data;
    mca_common_sfio_coll_rank_t *ranks;
    mca_common_sfio_coll_summary_t sum;
    mca_common_sfio_coll_choice_t choice;
    int alg, naggr, ncyc, my_aggr;  /* my_aggr: my aggregator index or -1 */
    int *aggr_rank;                 /* naggr */
    const mca_common_sfio_place_topo_t *topo;  /* NULL: nodes unknown */
    mca_common_sfio_coll_groups_t groups;
    uint64_t *bounds;               /* two_phase: naggr + 1 */
    uint64_t *cuts;                 /* dynamic: ncyc + 1 (my group's) */
    uint64_t cycle_bytes;
    bool read_end_known;            /* read_end asked (queued_read_end) */
    uint64_t read_end;
    uint64_t eof_at;                /* read: lowest offset where this rank's
                                       reads met the end of file (UINT64_MAX:
                                       none); agreed by all at the end */
    uint64_t got;                   /* individual read: bytes the fbtl read */
    bool individual_ran;
    piece_t *pieces;
    size_t npieces, cap;
    size_t *first;                  /* naggr * ncyc + 1: pieces of key k are [first[k], first[k+1]) */
    uint64_t *rcnt;                 /* aggregator: P * ncyc * 2 (npieces, nbytes) */

    /* Progress state of the call (the state machine at the end of this
     * file); every buffer a pending request uses lives here. */
    int lrc;                        /* this rank's first local error */
    int fbtl_err;                   /* MPI class of the last failed fbtl call, 0: none */
    ompi_request_t *creq[2];        /* collectives in flight */
    int ncreq;
    uint64_t mine[5];               /* my summary (word 4: SUMMARY_FAILED | SUMMARY_ATOMIC) */
    uint64_t *all;                  /* everyone's: P * 5 */
    /* Rank 0's atomicity, from the summaries: every rank plans alike.  A
     * rank's own flag may differ after a set_atomicity whose flags
     * differed (io/ompio fails those ranks and leaves them theirs), and
     * rank 0's is the group's: its call never fails that check. */
    bool atomic;
    int bad, anybad;                /* operands of the error agreements */
    uint64_t *csend;                /* count exchange: what I send */
    int *cints;                     /* its counts and displacements: 4 * P */
    uint64_t cdummy;
    ompi_request_t **preq;          /* dynamic cuts' messages: P + 1 */
    int npreq, cuts_phase;
    uint64_t *cmine;                /* dynamic: my runs as (offset, length) */
    mca_common_sfio_coll_piece_t *call; /* dynamic, aggregator: the group's runs */
    slot_t slot[2];
    int cyc, cphase, fatal;         /* cycle, its phase; fatal: stop, drain */
    bool async;                     /* aggregators queue cycle I/O (fbtl ipwritev/ipreadv) */
    size_t apcap, runcap;
    apiece_t *ap;
    mca_common_sfio_coll_piece_t *runs;
    size_t *order;                  /* write_disjoint: 2 * ordcap entries */
    size_t ordcap;
    double io_seconds;              /* verbose 2: time in fbtl calls */
    int nqueued;                    /* verbose 2: file I/O queued (async) */
} plan_t;

/* ------------------------------------------------------------------ */
/* Shared by the plan (sfio_fcoll_plan.c), the cycles                  */
/* (sfio_fcoll_cycles.c) and the state machine (sfio_fcoll.c)          */

/* Dynamic segmentation: members send their runs to the group's
 * aggregator, which cuts the group's data into ncyc portions and sends the
 * cuts back.  cuts_post posts the first messages, cuts_step finishes. */
int sfio_fcoll_cuts_post(plan_t *p);

/* true when this rank has its group's cuts, or, with *rc set (by a failed
 * post or a failed message), when nothing of the cut exchange is pending. */
bool sfio_fcoll_cuts_step(plan_t *p, int *rc);

/* Splits this rank's file iovec into pieces keyed (aggregator, cycle) by
 * the algorithm's assign function (sfio_collplan). */
int sfio_fcoll_assign_pieces(plan_t *p);

/* Tells every aggregator how many pieces and bytes each rank sends it per
 * cycle (one ialltoallv), and agrees on local failures so far (one
 * iallreduce behind it: every rank posts both, in this order). */
int sfio_fcoll_counts_post(plan_t *p);

/* Gathers the facts of the choice (parameters, hints, statfs, topology)
 * and lets sfio_colldecide choose; then the plan's numbers. */
int sfio_fcoll_make_plan(plan_t *p);

/* Verbose 1 (rank 0): the aggregators as rank@node (at most 64 of them). */
void sfio_fcoll_report_placement(const plan_t *p);

/* Frees what make_plan and the call allocated (not p itself). */
void sfio_fcoll_plan_free(plan_t *p);

/* The caller's memory iovec as one byte stream (prefix sums). */
int sfio_fcoll_mstream_init(mstream_t *m, struct iovec *iov, uint32_t n);

/* True once every request of the set completed; then frees them and keeps
 * the first error in *rc.  Never calls opal_progress: it runs inside
 * OMPIO's progress function. */
bool sfio_fcoll_reqs_done(ompi_request_t **reqs, int *n, int *rc);

/* Posts cycle c: senders' messages, aggregator's receives. */
int sfio_fcoll_start_cycle(plan_t *p, slot_t *s, int c);

/* True once slot s has no file I/O in flight; a failed one, or a short
 * write, is kept for the closing agreement (a failed read also makes its
 * cycle answer zeros; a short read met the end of file).  OMPIO's
 * progress completes the request. */
bool sfio_fcoll_io_done(plan_t *p, slot_t *s);

/* Write, aggregator: cycle c's pieces (slot s's messages are in) go to the
 * file; the union of the pieces where they overlap (rank order wins), or
 * where many small pieces would make many queued requests.  An I/O error
 * is kept in p->lrc and the protocol goes on; the closing agreement makes
 * it everyone's error. */
int sfio_fcoll_write_aggregate(plan_t *p, slot_t *s, int c);

/* Read, aggregator: issues cycle c's file read (slot s's headers are in)
 * into s's union buffer: queued (fbtl ipreadv) when the plan queues I/O,
 * else now.  A failed read is kept in p->lrc and answers zeros. */
int sfio_fcoll_read_issue(plan_t *p, slot_t *s, int c);

/* Read, aggregator: once cycle c's read is in s's union buffer, answers
 * each rank with its pieces' bytes, in its order.  Ranks' pieces may
 * overlap (several readers of one byte), so the replies can be longer than
 * the union that was read. */
int sfio_fcoll_read_answer(plan_t *p, slot_t *s, int c);

/* Read, this rank as a sender: scatter cycle c's replies into memory. */
void sfio_fcoll_scatter_cycle(plan_t *p, slot_t *s, int c);

/* The individual algorithm: this rank's own access as one fbtl call. */
int sfio_fcoll_run_individual(plan_t *p);

/* Monotonic seconds (verbose 2 timings). */
double sfio_fcoll_now_s(void);

#endif
