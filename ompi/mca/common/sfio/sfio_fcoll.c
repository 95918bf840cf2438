/*
 * sfio_fcoll: collective read/write engine of fcoll/adaptive (see
 * sfio_fcoll.h).  Flow of one call, identical on every rank:
 *
 *   1. decode memory (iovec) and the file view of this call (iovec);
 *   2. allgather each rank's summary (extent, bytes, runs, error);
 *   3. plan (pure, sfio_collplan): algorithm, groups/aggregators, domains
 *      or cuts, number of cycles;
 *   4. assign this rank's file pieces to (aggregator, cycle); one
 *      alltoallv tells every aggregator how many pieces and bytes each
 *      rank sends it per cycle;
 *   5. cycles, double-buffered: cycle c + 1's messages are in flight while
 *      the aggregator writes cycle c.  A message is the piece list
 *      (offset, length pairs) followed by the data (writes) or just the
 *      list (reads; the aggregator answers with the data).
 *
 * Only step 1 runs inside the MPI call; steps 2-5 are a state machine that
 * OMPIO's progress function advances (see "One collective call as a state
 * machine" below): every exchange is non-blocking (iallgather, ialltoallv,
 * isend/irecv, iallreduce for the error agreements) and one progress step
 * does at most one cycle's file I/O.
 *
 * Overlapping writes: an aggregator copies pieces into its buffer in rank
 * order, so the highest rank wins every byte; with disjoint two-phase
 * domains this makes a collective write equal to the serial order of the
 * ranks, which is how atomic mode is kept without the suite's fcoll proxy.
 */
#include "sfio_fcoll_int.h"

/* ------------------------------------------------------------------ */
/* One collective call as a state machine                              */
/*
 * A call (blocking or not) starts in op_start: the memory layout and this
 * call's part of the file view are decoded there, so the individual file
 * pointer moves at the start as MPI wants, and the summary allgather is
 * posted.  From then on OMPIO's progress function steps the call through
 * the states below; no step waits: it posts, or tests requests already
 * posted, and returns.  A step runs at most one cycle, so the caller gets
 * control back between cycles.  Blocking calls are start + wait.
 *
 * Calls on one file run one after another in start order (MPI has every
 * rank start them in the same order): their non-blocking collectives and
 * point-to-point messages, on the file's communicator, then match in the
 * same order on every rank.
 */

typedef enum {
    OP_QUEUED,      /* an earlier call on this file is still running */
    OP_SUMMARY,     /* iallgather of the ranks' summaries */
    OP_CUTS,        /* dynamic: the group's cuts */
    OP_COUNTS,      /* ialltoallv of counts + iallreduce of failures */
    OP_CYCLES,
    OP_AGREE,       /* iallreduce of the worst error */
    OP_DONE         /* drains what is still in flight, then completes */
} op_state_t;

typedef struct op_t {
    struct op_t *next;          /* running and queued calls, start order */
    mca_ompio_request_t *req;
    plan_t p;
    struct iovec *miov;
    op_state_t state;
    int rc;                     /* the call's result (the same everywhere) */
    uint64_t agree_in[2], agree[2];   /* MAX of { worst error, ~eof_at } */
    double t[OP_DONE + 1];      /* verbose 2: when each state was entered */
} op_t;

static op_t *ops_head;

double sfio_fcoll_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* Verbose 2: marks when op entered its current state (first entry only). */
static void op_mark(op_t *op)
{
    if (opal_output_get_verbosity(op->p.opt->output) >= 2 && 0 == op->t[op->state]) {
        op->t[op->state] = sfio_fcoll_now_s();
    }
}

/* Verbose 2 (every rank): milliseconds from the start to the end of each
 * state the call went through, and in file I/O. */
static void op_report_times(const op_t *op)
{
    static const char *names[] = { "queued", "summary", "cuts", "counts", "cycles", "agree",
                                   "drain" };
    char line[512];
    size_t used = 0;
    int prev = OP_QUEUED;
    double end = sfio_fcoll_now_s();
    for (int s = OP_QUEUED + 1; s <= OP_DONE + 1 && used < sizeof(line); ++s) {
        double t = s <= OP_DONE ? op->t[s] : end;
        if (0 == t) {
            continue;
        }
        used += (size_t) snprintf(line + used, sizeof(line) - used, " %s %.2f", names[prev],
                                  1e3 * (t - op->t[prev]));
        prev = s;
    }
    if (used < sizeof(line)) {
        (void) snprintf(line + used, sizeof(line) - used,
                        "; total %.2f, file I/O %.2f ms (%d requests queued)",
                        1e3 * (end - op->t[OP_QUEUED]), 1e3 * op->p.io_seconds,
                        op->p.nqueued);
    }
    opal_output_verbose(2, op->p.opt->output, "fcoll:adaptive: rank %d %s times (ms):%s",
                        op->p.rank, op->p.rw ? "read_all" : "write_all", line);
}

/* Set while a step runs: OMPIO's progress may be entered again from
 * inside it (an fbtl or a PML making progress); that entry must not step
 * a call that is half-way through a step. */
static int op_stepping;

/* Whether a call on fh is running or queued on this rank before stop
 * (NULL: anywhere in the list). */
static bool call_on_file_before(const ompio_file_t *fh, const op_t *stop)
{
    for (const op_t *o = ops_head; NULL != o && o != stop; o = o->next) {
        if (o->p.fh == fh) {
            return true;
        }
    }
    return false;
}

static bool op_first_of_file(const op_t *op)
{
    return !call_on_file_before(op->p.fh, op);
}

static void op_unlink(op_t *op)
{
    for (op_t **o = &ops_head; NULL != *o; o = &(*o)->next) {
        if (*o == op) {
            *o = op->next;
            return;
        }
    }
}

static void op_post_summary(op_t *op)
{
    plan_t *p = &op->p;
    op->rc = p->comm->c_coll->coll_iallgather(p->mine, 5, MPI_UINT64_T, p->all, 5, MPI_UINT64_T,
                                              p->comm, &p->creq[0],
                                              p->comm->c_coll->coll_iallgather_module);
    if (OMPI_SUCCESS == op->rc) {
        p->ncreq = 1;
        op->state = OP_SUMMARY;
    } else {
        op->state = OP_DONE;
    }
}

/* Pieces (unless a local failure came first), then the count exchange.
 * The exchange is collective: a rank that failed takes part sending
 * nothing, and the agreement posted with it stops everyone. */
static void op_start_counts(op_t *op)
{
    plan_t *p = &op->p;
    if (OMPI_SUCCESS == p->lrc) {
        p->lrc = sfio_fcoll_assign_pieces(p);
    }
    if (OMPI_SUCCESS != p->lrc) {
        free(p->first);
        p->first = calloc((size_t) p->naggr * p->ncyc + 1, sizeof(size_t));
        p->npieces = 0;
        if (NULL == p->first) {
            op->rc = p->lrc;    /* cannot even say so; as the blocking engine did */
            op->state = OP_DONE;
            return;
        }
    }
    op->rc = sfio_fcoll_counts_post(p);
    op->state = OMPI_SUCCESS == op->rc ? OP_COUNTS : OP_DONE;
}

/* The summaries are in: plan, and either finish (nothing to do, an early
 * failure, individual) or go on to the exchange. */
static void op_after_summary(op_t *op)
{
    plan_t *p = &op->p;
    int failed = 0;
    p->atomic = 0 != (p->all[4] & SUMMARY_ATOMIC);
    for (int q = 0; q < p->P; ++q) {
        failed |= 0 != (p->all[5 * q + 4] & SUMMARY_FAILED);
        if (NULL != p->ranks) {
            p->ranks[q].lo = p->all[5 * q];
            p->ranks[q].hi = p->all[5 * q + 1];
            p->ranks[q].bytes = p->all[5 * q + 2];
            p->ranks[q].runs = p->all[5 * q + 3];
        }
    }
    if (failed) {
        op->rc = OMPI_SUCCESS != p->lrc ? p->lrc : OMPI_ERR_OUT_OF_RESOURCE;
        op->state = OP_DONE;
        return;
    }
    op->rc = sfio_fcoll_make_plan(p);
    if (0 == p->rank) {
        opal_output_verbose(1, p->opt->output,
                            "fcoll:adaptive: %s %s (%s): np=%d bytes=%llu c=%llu gap=%d dup=%llu "
                            "interleaved=%d min_run=%llu links=%d "
                            "aggregators=%d cycles=%d cycle_bytes=%llu%s",
                            p->rw ? "read_all" : "write_all",
                            mca_common_sfio_coll_algs[p->alg].name,
                            mca_common_sfio_coll_why_names[p->choice.why], p->P,
                            (unsigned long long) p->sum.bytes, (unsigned long long) p->sum.c,
                            (int) p->sum.gap, (unsigned long long) p->sum.dup,
                            (int) p->choice.interleaved,
                            (unsigned long long) p->choice.min_run, p->choice.links, p->naggr,
                            p->ncyc, (unsigned long long) p->cycle_bytes,
                            p->async && p->ncyc > 1 ? " async" : "");
        if (OMPI_SUCCESS == op->rc && p->naggr > 0) {
            sfio_fcoll_report_placement(p);
        }
    }
    if (OMPI_SUCCESS != op->rc || 0 == p->sum.bytes) {
        op->state = OP_DONE;    /* the plan is identical everywhere: so is the failure */
        return;
    }
    if (!(mca_common_sfio_coll_algs[p->alg].flags & MCA_COMMON_SFIO_COLL_F_AGGREGATE)) {
        /* Each rank's own access, in this one step: its errors are its own
         * (as with stock fcoll/individual), so no closing agreement. */
        op->rc = sfio_fcoll_run_individual(p);
        op->state = OP_DONE;
        return;
    }
    if (mca_common_sfio_coll_algs[p->alg].flags & MCA_COMMON_SFIO_COLL_F_CUTS) {
        p->lrc = sfio_fcoll_cuts_post(p);
        op->state = OP_CUTS;
        return;
    }
    op_start_counts(op);
}

/* Counts known, nobody failed: buffers for the two slots, cycle 0 posted. */
static void op_start_cycles(op_t *op)
{
    plan_t *p = &op->p;
    op->state = OP_CYCLES;
    p->cyc = 0;
    p->cphase = 0;
    for (int i = 0; i < 2; ++i) {
        p->slot[i].reqs = malloc((size_t) (2 * p->naggr + 1) * sizeof(ompi_request_t *));
        p->slot[i].areqs = malloc((size_t) (p->P + 1) * sizeof(ompi_request_t *));
        p->slot[i].dreqs = malloc((size_t) (p->P + 1) * sizeof(ompi_request_t *));
        if (!p->slot[i].reqs || !p->slot[i].areqs || !p->slot[i].dreqs) {
            p->lrc = OMPI_ERR_OUT_OF_RESOURCE;
            p->fatal = 1;
            return;
        }
    }
    if (p->ncyc > 0) {
        int rc = sfio_fcoll_start_cycle(p, &p->slot[0], 0);
        if (OMPI_SUCCESS != rc) {
            p->lrc = rc;
            p->fatal = 1;
        }
    }
}

static bool slot_drained(plan_t *p, slot_t *s, int *rc)
{
    /* each set is freed once complete; the order does not matter */
    bool a = NULL == s->areqs || sfio_fcoll_reqs_done(s->areqs, &s->nareq, rc);
    bool b = NULL == s->reqs || sfio_fcoll_reqs_done(s->reqs, &s->nreq, rc);
    bool d = NULL == s->dreqs || sfio_fcoll_reqs_done(s->dreqs, &s->ndreq, rc);
    bool w = sfio_fcoll_io_done(p, s);
    return a && b && d && w;
}

/* One cycle c, in three phases that each may have to wait:
 *   0  the other slot's read replies (cycle c - 1) are out: post c + 1,
 *      so its exchange overlaps this cycle's file I/O;
 *   1  aggregator: c's messages are in: file I/O (and read replies);
 *   2  this rank's c messages are done: scatter read data, next cycle.
 * Returns 0: waiting, 1: a cycle finished, 2: all cycles are over (or a
 * fatal local error stopped them and everything in flight completed). */
static int cycles_step(plan_t *p)
{
    int rc = OMPI_SUCCESS;
    /* A queued request that completed is freed at once, whatever the cycle
     * waits for: after a failed AIO, stock fbtl/posix releases its region
     * lock only when the request is freed (its progress unlocks only a
     * request that succeeded), and another aggregator's ipwritev may be
     * waiting for that lock inside its progress (seen on Open MPI 5.0). */
    (void) sfio_fcoll_io_done(p, &p->slot[0]);
    (void) sfio_fcoll_io_done(p, &p->slot[1]);
    if (!p->fatal && p->cyc < p->ncyc) {
        slot_t *s = &p->slot[p->cyc % 2], *t = &p->slot[(p->cyc + 1) % 2];
        if (0 == p->cphase) {
            /* Cycle c - 1's queued write is done before c's is queued (one
             * write in flight: the aggregator's cycles keep their order)
             * and before the slot takes c + 1's messages. */
            if (!sfio_fcoll_io_done(p, t)) {
                return 0;
            }
            if (p->cyc + 1 < p->ncyc) {
                if (!sfio_fcoll_reqs_done(t->dreqs, &t->ndreq, &rc)) {
                    return 0;
                }
                if (OMPI_SUCCESS == rc) {
                    rc = sfio_fcoll_start_cycle(p, t, p->cyc + 1);
                }
                if (OMPI_SUCCESS != rc) {
                    goto fatal;
                }
            }
            p->cphase = 1;
        }
        if (1 == p->cphase) {
            if (p->my_aggr >= 0) {
                if (!sfio_fcoll_reqs_done(s->areqs, &s->nareq, &rc)) {
                    return 0;
                }
                if (OMPI_SUCCESS == rc && !p->rw) {
                    rc = sfio_fcoll_write_aggregate(p, s, p->cyc);
                } else if (OMPI_SUCCESS == rc) {
                    /* The read may have been queued ahead (below); wait
                     * for it, answer, then queue the next cycle's read as
                     * soon as its headers are in, so the storage works
                     * while this cycle's replies travel. */
                    if (!s->rd_issued) {
                        rc = sfio_fcoll_read_issue(p, s, p->cyc);
                    }
                    if (OMPI_SUCCESS == rc && !sfio_fcoll_io_done(p, s)) {
                        return 0;
                    }
                    if (OMPI_SUCCESS == rc) {
                        rc = sfio_fcoll_read_answer(p, s, p->cyc);
                    }
                    if (OMPI_SUCCESS == rc && p->async && p->cyc + 1 < p->ncyc &&
                        !t->rd_issued && sfio_fcoll_reqs_done(t->areqs, &t->nareq, &rc) &&
                        OMPI_SUCCESS == rc) {
                        rc = sfio_fcoll_read_issue(p, t, p->cyc + 1);
                    }
                }
                if (OMPI_SUCCESS != rc) {
                    goto fatal;
                }
            }
            p->cphase = 2;
        }
        if (!sfio_fcoll_reqs_done(s->reqs, &s->nreq, &rc)) {
            return 0;
        }
        if (OMPI_SUCCESS != rc) {
            goto fatal;
        }
        if (p->rw) {
            sfio_fcoll_scatter_cycle(p, s, p->cyc);
        }
        p->cyc++;
        p->cphase = 0;
        return 1;
    }
    goto drain;
fatal:
    /* As the blocking engine did: stop here, let what is in flight finish,
     * then the closing agreement tells everyone. */
    if (OMPI_SUCCESS == p->lrc) {
        p->lrc = rc;
    }
    p->fatal = 1;
    rc = OMPI_SUCCESS;
drain:
    if (!slot_drained(p, &p->slot[0], &rc) | !slot_drained(p, &p->slot[1], &rc)) {
        if (OMPI_SUCCESS != rc && OMPI_SUCCESS == p->lrc) {
            p->lrc = rc;
        }
        return 0;
    }
    if (OMPI_SUCCESS != rc && OMPI_SUCCESS == p->lrc) {
        p->lrc = rc;
    }
    return 2;
}

/* Everything this call posted has completed (only then may it end: the
 * buffers go with it). */
static bool op_drained(op_t *op)
{
    plan_t *p = &op->p;
    int rc = OMPI_SUCCESS;
    bool c = sfio_fcoll_reqs_done(p->creq, &p->ncreq, &rc);
    bool d = NULL == p->preq || sfio_fcoll_reqs_done(p->preq, &p->npreq, &rc);
    return c & d & slot_drained(p, &p->slot[0], &rc) & slot_drained(p, &p->slot[1], &rc);
}

/* Advances op as far as it can without waiting; true when it is over. */
static bool op_step(op_t *op)
{
    plan_t *p = &op->p;
    int rc = OMPI_SUCCESS;
    for (;;) {
        op_mark(op);
        switch (op->state) {
        case OP_QUEUED:
            if (!op_first_of_file(op)) {
                return false;
            }
            op_post_summary(op);
            break;
        case OP_SUMMARY:
            if (!sfio_fcoll_reqs_done(p->creq, &p->ncreq, &op->rc)) {
                return false;
            }
            if (OMPI_SUCCESS == op->rc) {
                op_after_summary(op);
            } else {
                op->state = OP_DONE;
            }
            break;
        case OP_CUTS:
            /* after a failed post, only wait for what did go out */
            rc = p->lrc;
            if (!sfio_fcoll_cuts_step(p, &rc)) {
                return false;
            }
            p->lrc = rc;
            op_start_counts(op);
            break;
        case OP_COUNTS:
            if (!sfio_fcoll_reqs_done(p->creq, &p->ncreq, &op->rc)) {
                return false;
            }
            if (OMPI_SUCCESS != op->rc) {
                op->state = OP_DONE;
            } else if (p->anybad) {
                op->rc = OMPI_SUCCESS != p->lrc ? p->lrc : OMPI_ERR_OUT_OF_RESOURCE;
                op->state = OP_DONE;
            } else {
                op_start_cycles(op);
            }
            break;
        case OP_CYCLES:
            switch (cycles_step(p)) {
            case 0:
                return false;
            case 1:
                return false;   /* one cycle per step: the caller's turn */
            default:
                break;
            }
            /* One error for all: an aggregator's I/O error is everyone's. */
            /* ... and where any aggregator's read met the end of file (the
             * MAX of ~eof_at is the complement of the lowest). */
            op->agree_in[0] = OMPI_SUCCESS == p->lrc ? 0
                              : (uint64_t) (p->lrc < 0 ? -p->lrc : p->lrc);
            op->agree_in[1] = ~p->eof_at;
            op->rc = p->comm->c_coll->coll_iallreduce(op->agree_in, op->agree, 2, MPI_UINT64_T,
                                                      MPI_MAX, p->comm, &p->creq[0],
                                                      p->comm->c_coll->coll_iallreduce_module);
            if (OMPI_SUCCESS == op->rc) {
                p->ncreq = 1;
                op->state = OP_AGREE;
            } else {
                op->state = OP_DONE;
            }
            break;
        case OP_AGREE:
            if (!sfio_fcoll_reqs_done(p->creq, &p->ncreq, &op->rc)) {
                return false;
            }
            if (OMPI_SUCCESS == op->rc && op->agree[0]) {
                /* every rank reports the group's worst error class */
                op->rc = OMPI_SUCCESS != p->lrc ? p->lrc
                         : op->agree[0] <= MPI_ERR_LASTCODE ? (int) op->agree[0] : MPI_ERR_IO;
            }
            p->eof_at = ~op->agree[1];
            op->state = OP_DONE;
            break;
        case OP_DONE:
        default:
            return op_drained(op);
        }
    }
}

static void op_free(op_t *op)
{
    op_unlink(op);
    free(op->miov);
    sfio_fcoll_plan_free(&op->p);
    free(op);
}

/* Bytes the call moved for this rank: a read counts what lies before the
 * end of file its aggregators met (MPI: a read past the end of file
 * returns fewer elements), an individual read what the fbtl read. */
static size_t op_count(plan_t *p)
{
    if (!p->rw) {
        return p->max_data;
    }
    if (p->individual_ran) {
        return (size_t) p->got;
    }
    if (UINT64_MAX == p->eof_at) {
        return p->max_data;
    }
    uint64_t b = 0;
    for (int i = 0; i < p->fcount; ++i) {
        mca_common_sfio_coll_piece_t piece = { (uint64_t) (uintptr_t) p->fiov[i].iov_base,
                                               p->fiov[i].iov_len };
        b += mca_common_sfio_coll_bytes_below(&piece, 1, p->eof_at);
    }
    return (size_t) b;
}

/* OMPIO's progress function calls this for the call's request until it
 * returns true; then OMPIO completes the request. */
static bool op_progress(struct mca_ompio_request_t *req)
{
    op_t *op = (op_t *) req->req_data;
    if (NULL == op || op_stepping) {
        return false;
    }
    op_stepping = 1;
    bool done = op_step(op);
    op_stepping = 0;
    if (!done) {
        return false;
    }
    if (0 != op->t[OP_DONE]) {
        op_report_times(op);
    }
    req->req_ompi.req_status.MPI_ERROR = op->rc;
    req->req_ompi.req_status._ucount = OMPI_SUCCESS == op->rc ? op_count(&op->p) : 0;
    req->req_data = NULL;
    op_free(op);
    return true;
}

/* The request is freed: after completion nothing is left to do.  Freed
 * before (MPI_Request_free on an active request), the other ranks still
 * count on this one, so the call is finished here. */
static void op_request_free(struct mca_ompio_request_t *req)
{
    op_t *op = (op_t *) req->req_data;
    if (NULL == op) {
        return;
    }
    req->req_progress_fn = NULL;
    req->req_data = NULL;
    for (;;) {
        bool done = false;
        if (!op_stepping) {
            op_stepping = 1;
            done = op_step(op);
            op_stepping = 0;
        }
        if (done) {
            break;
        }
        opal_progress();
    }
    op_free(op);
}

/* Starts one collective call: decodes memory and this call's file view
 * (moving the individual file pointer now), queues it behind earlier calls
 * on the file and posts the summary exchange when it is first. */
static int op_start(ompio_file_t *fh, const void *cbuf, int count,
                    struct ompi_datatype_t *datatype, int rw, bool blocking,
                    const mca_common_sfio_fcoll_options_t *opt, ompi_request_t **request)
{
    op_t *op = calloc(1, sizeof(*op));
    if (NULL == op) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    plan_t *p = &op->p;
    uint32_t mcount = 0;
    int lrc;
    p->fh = fh;
    p->comm = fh->f_comm;
    p->rank = ompi_comm_rank(fh->f_comm);
    p->P = ompi_comm_size(fh->f_comm);
    p->rw = rw;
    p->opt = opt;
    p->my_aggr = -1;
    p->eof_at = UINT64_MAX;
    mca_common_sfio_appmat_call(fh->f_comm, opt->matrix_file);

    /* This rank's memory and file pieces. */
    lrc = mca_common_ompio_decode_datatype(fh, datatype, count, cbuf, &p->max_data,
                                           fh->f_mem_convertor, &op->miov, &mcount);
    if (OMPI_SUCCESS == lrc && 0 != sfio_fcoll_mstream_init(&p->mem, op->miov, mcount)) {
        lrc = OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (OMPI_SUCCESS == lrc) {
        lrc = fh->f_generate_current_file_view(fh, p->max_data, &p->fiov, &p->fcount);
    }
    /* Merge file-contiguous entries (what c counts). */
    mca_common_sfio_coll_rank_t me = { UINT64_MAX, 0, 0, 0 };
    if (OMPI_SUCCESS == lrc) {
        int m = 0;
        for (int i = 0; i < p->fcount; ++i) {
            if (0 == p->fiov[i].iov_len) {
                continue;
            }
            if (m > 0 && (char *) p->fiov[m - 1].iov_base + p->fiov[m - 1].iov_len ==
                         (char *) p->fiov[i].iov_base) {
                p->fiov[m - 1].iov_len += p->fiov[i].iov_len;
            } else {
                p->fiov[m++] = p->fiov[i];
            }
        }
        p->fcount = m;
        for (int i = 0; i < m; ++i) {
            uint64_t lo = (uint64_t) (uintptr_t) p->fiov[i].iov_base;
            me.lo = lo < me.lo ? lo : me.lo;
            me.hi = lo + p->fiov[i].iov_len > me.hi ? lo + p->fiov[i].iov_len : me.hi;
            me.bytes += p->fiov[i].iov_len;
        }
        me.runs = (uint64_t) m;
    }
    if (0 == me.bytes) {
        me.lo = me.hi = 0;
    }
    /* Where ranks run, for placement: asked at the file's first collective
     * call (a blocking allgather, in the call and so in the same order on
     * every rank, never inside progress), then cached on its communicator.
     * Before the request exists: OMPIO's progress, which that allgather
     * runs, steps every request allocated so far. */
    if (p->P > 1 && (MCA_COMMON_SFIO_PLACE_SPREAD == opt->placement ||
                     opt->local_aggregators_per_cpu > 0 ||
                     (NULL != opt->emulate_nodes && '\0' != opt->emulate_nodes[0])) &&
        OMPI_SUCCESS != mca_common_sfio_topo_get(p->comm, opt->emulate_nodes, opt->output,
                                                 &p->topo)) {
        p->topo = NULL;
    }

    p->all = calloc((size_t) p->P * 5, sizeof(uint64_t));
    p->ranks = malloc((size_t) p->P * sizeof(*p->ranks));
    if (NULL == p->ranks && OMPI_SUCCESS == lrc) {
        lrc = OMPI_ERR_OUT_OF_RESOURCE;
    }
    /* Any rank's failure is everyone's: it travels in the summary. */
    p->lrc = lrc;
    p->mine[0] = me.lo;
    p->mine[1] = me.hi;
    p->mine[2] = me.bytes;
    p->mine[3] = me.runs;
    p->mine[4] = (OMPI_SUCCESS == lrc ? 0 : SUMMARY_FAILED) |
                 (0 != fh->f_atomicity ? SUMMARY_ATOMIC : 0);
    /* A blocking call exchanges its summary with a blocking allgather,
     * which costs a fraction of a non-blocking one where ranks share cores
     * (small calls are mostly that exchange).  Every rank does so for the
     * same call, after the file's earlier calls are over on this rank
     * (their collectives were started first everywhere), and before this
     * call's request exists: the progress the allgather runs steps only
     * earlier requests. */
    int summary_rc = OMPI_ERR_NOT_AVAILABLE;
    if (blocking && NULL != p->all) {
        while (call_on_file_before(fh, NULL)) {
            opal_progress();
        }
        summary_rc = p->comm->c_coll->coll_allgather(p->mine, 5, MPI_UINT64_T, p->all, 5,
                                                     MPI_UINT64_T, p->comm,
                                                     p->comm->c_coll->coll_allgather_module);
    }
    mca_ompio_request_t *req = NULL;
    if (NULL != p->all) {
        mca_common_ompio_request_alloc(&req, rw ? MCA_OMPIO_REQUEST_READ_ALL
                                                : MCA_OMPIO_REQUEST_WRITE_ALL);
    }
    if (NULL == req) {
        /* Cannot take part in the exchange at all. */
        free(op->miov);
        sfio_fcoll_plan_free(p);
        free(op);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }

    op->req = req;
    req->req_data = op;
    req->req_progress_fn = op_progress;
    req->req_free_fn = op_request_free;
    req->req_ompi.req_mpi_object.file = fh->f_fh;   /* errors go to the file's handler */
    req->req_ompi.req_status.MPI_SOURCE = MPI_ANY_SOURCE;
    req->req_ompi.req_status.MPI_TAG = MPI_ANY_TAG;
    req->req_ompi.req_status._cancelled = 0;

    op_t **tail = &ops_head;
    while (NULL != *tail) {
        tail = &(*tail)->next;
    }
    *tail = op;
    op->state = OP_QUEUED;
    op_mark(op);
    if (OMPI_ERR_NOT_AVAILABLE != summary_rc) {
        op->rc = summary_rc;
        op->state = OMPI_SUCCESS == summary_rc ? OP_SUMMARY : OP_DONE;   /* no request */
        op_mark(op);
    } else if (op_first_of_file(op)) {
        op_post_summary(op);
        op_mark(op);
    }
    mca_common_ompio_register_progress();
    *request = &req->req_ompi;
    return OMPI_SUCCESS;
}

int mca_common_sfio_fcoll_write_all(ompio_file_t *fh, const void *buf, int count,
                                    struct ompi_datatype_t *datatype,
                                    ompi_status_public_t *status,
                                    const mca_common_sfio_fcoll_options_t *opt)
{
    ompi_request_t *req = NULL;
    if (fh->f_amode & MPI_MODE_RDONLY) {
        return MPI_ERR_READ_ONLY;   /* every rank alike, before any traffic */
    }
    int rc = op_start(fh, buf, count, datatype, 0, true, opt, &req);
    return OMPI_SUCCESS == rc ? mca_common_sfio_request_wait_free(&req, status) : rc;
}

int mca_common_sfio_fcoll_read_all(ompio_file_t *fh, void *buf, int count,
                                   struct ompi_datatype_t *datatype,
                                   ompi_status_public_t *status,
                                   const mca_common_sfio_fcoll_options_t *opt)
{
    ompi_request_t *req = NULL;
    int rc = op_start(fh, buf, count, datatype, 1, true, opt, &req);
    return OMPI_SUCCESS == rc ? mca_common_sfio_request_wait_free(&req, status) : rc;
}

int mca_common_sfio_fcoll_iwrite_all(ompio_file_t *fh, const void *buf, int count,
                                     struct ompi_datatype_t *datatype, ompi_request_t **request,
                                     const mca_common_sfio_fcoll_options_t *opt)
{
    if (fh->f_amode & MPI_MODE_RDONLY) {
        return MPI_ERR_READ_ONLY;
    }
    return op_start(fh, buf, count, datatype, 0, false, opt, request);
}

int mca_common_sfio_fcoll_iread_all(ompio_file_t *fh, void *buf, int count,
                                    struct ompi_datatype_t *datatype, ompi_request_t **request,
                                    const mca_common_sfio_fcoll_options_t *opt)
{
    return op_start(fh, buf, count, datatype, 1, false, opt, request);
}
