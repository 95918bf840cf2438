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

int mca_common_sfio_fcoll_algorithm_register(const mca_base_component_t *c, int *storage)
{
    static mca_base_var_enum_value_t values[MCA_COMMON_SFIO_COLL_NALGS + 1];
    static char help[1024];
    size_t used = (size_t) snprintf(help, sizeof(help),
                                    "Collective algorithm (default auto):");
    for (int i = 0; i < MCA_COMMON_SFIO_COLL_NALGS; ++i) {
        values[i].value = mca_common_sfio_coll_algs[i].id;
        values[i].string = mca_common_sfio_coll_algs[i].name;
        if (used < sizeof(help)) {
            used += (size_t) snprintf(help + used, sizeof(help) - used, " %s: %s;",
                                      mca_common_sfio_coll_algs[i].name,
                                      mca_common_sfio_coll_algs[i].help);
        }
    }
    values[MCA_COMMON_SFIO_COLL_NALGS].string = NULL;
    return mca_common_sfio_component_register_enum(c, "algorithm", "sfio_fcoll_algorithm", values,
                                                   MCA_COMMON_SFIO_COLL_AUTO, help,
                                                   OPAL_INFO_LVL_5, storage);
}

int mca_common_sfio_fcoll_placement_register(const mca_base_component_t *c, int *placement,
                                             char ***emulate_cell)
{
    static mca_base_var_enum_value_t values[] = {
        { MCA_COMMON_SFIO_PLACE_SPREAD, "spread" },
        { MCA_COMMON_SFIO_PLACE_RANK, "rank" },
        { 0, NULL }
    };
    int rc = mca_common_sfio_component_register_enum(c, "placement", "sfio_fcoll_placement",
        values, MCA_COMMON_SFIO_PLACE_SPREAD,
        "Where aggregators run: spread (default): round-robin over nodes (counts per node "
        "differ by at most one), then over the sockets of each node, and a group's "
        "aggregator is its member on the least-loaded node; rank: spread over rank numbers "
        "only, blind to nodes (with block mapping several aggregators can share one node's "
        "link while other nodes have none)",
        OPAL_INFO_LVL_5, placement);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (NULL == mca_common_sfio_component_register_string(c, emulate_cell, "emulate_nodes",
            "Pretend the ranks run on N nodes, to test placement on one machine: block:N "
            "(N nodes of consecutive ranks) or cyclic:N (rank r on node r % N); empty "
            "(default): the real nodes (host names) and sockets (hwloc binding)")) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return OPAL_SUCCESS;
}

int mca_common_sfio_fcoll_storage_register(const mca_base_component_t *c, int *storage)
{
    static mca_base_var_enum_value_t values[] = {
        { MCA_COMMON_SFIO_STORAGE_AUTO, "auto" },
        { MCA_COMMON_SFIO_STORAGE_LOCAL, "local" },
        { MCA_COMMON_SFIO_STORAGE_NETWORK, "network" },
        { 0, NULL }
    };
    return mca_common_sfio_component_register_enum(c, "storage", "sfio_fcoll_storage", values,
        MCA_COMMON_SFIO_STORAGE_AUTO,
        "What kind of storage the file is on, for the automatic choices that differ: auto "
        "(default): statfs says (NFS, Lustre, GPFS, BeeGFS, CephFS, OrangeFS, CIFS, AFS are "
        "network, the rest local); local: one node's file system or page cache (a write is "
        "a memory copy: reads may go individual, aggregators are capped by "
        "local_aggregators_per_cpu); network: every client's link to the storage is the "
        "limit (always aggregate, as many aggregators as the data asks for).  Set it where "
        "statfs cannot tell, e.g. a FUSE mount of remote storage or an emulation",
        OPAL_INFO_LVL_5, storage);
}

/* ------------------------------------------------------------------ */
/* Memory side: the caller's buffer as a byte stream                    */

typedef struct {
    struct iovec *iov;
    uint32_t n;
    uint64_t *prefix;   /* n + 1 entries */
} mstream_t;

static int mstream_init(mstream_t *m, struct iovec *iov, uint32_t n)
{
    m->iov = iov;
    m->n = n;
    m->prefix = malloc(((size_t) n + 1) * sizeof(uint64_t));
    if (NULL == m->prefix) {
        return -ENOMEM;
    }
    m->prefix[0] = 0;
    for (uint32_t i = 0; i < n; ++i) {
        m->prefix[i + 1] = m->prefix[i] + iov[i].iov_len;
    }
    return 0;
}

static uint32_t mstream_find(const mstream_t *m, uint64_t pos)
{
    uint32_t lo = 0, hi = m->n - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (m->prefix[mid] <= pos) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

/* Copies stream bytes [pos, pos + len) to dst (out = 1) or from src. */
static void mstream_copy(const mstream_t *m, uint64_t pos, uint64_t len, char *ext, int out)
{
    if (0 == len) {
        return;
    }
    uint32_t i = mstream_find(m, pos);
    while (len > 0 && i < m->n) {
        uint64_t in = pos - m->prefix[i];
        uint64_t take = m->iov[i].iov_len - in;
        if (take > len) {
            take = len;
        }
        char *p = (char *) m->iov[i].iov_base + in;
        if (out) {
            memcpy(ext, p, take);
        } else {
            memcpy(p, ext, take);
        }
        ext += take;
        pos += take;
        len -= take;
        ++i;
    }
}

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
    uint64_t mine[5];               /* my summary */
    uint64_t *all;                  /* everyone's: P * 5 */
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

/* True once every request of the set completed; then frees them and keeps
 * the first error in *rc.  Never calls opal_progress: it runs inside
 * OMPIO's progress function. */
static bool reqs_done(ompi_request_t **reqs, int *n, int *rc)
{
    for (int i = 0; i < *n; ++i) {
        if (!REQUEST_COMPLETE(reqs[i])) {
            return false;
        }
    }
    opal_atomic_rmb();
    for (int i = 0; i < *n; ++i) {
        int e = reqs[i]->req_status.MPI_ERROR;
        if (OMPI_SUCCESS != e && OMPI_SUCCESS == *rc) {
            *rc = e;
        }
        (void) ompi_request_free(&reqs[i]);
    }
    *n = 0;
    return true;
}

static int add_piece(plan_t *p, int a, int c, uint64_t off, uint64_t len, uint64_t spos)
{
    if (p->npieces == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        piece_t *np = realloc(p->pieces, cap * sizeof(piece_t));
        if (NULL == np) {
            return -ENOMEM;
        }
        p->pieces = np;
        p->cap = cap;
    }
    piece_t *x = &p->pieces[p->npieces++];
    x->off = off;
    x->len = len;
    x->spos = spos;
    x->key = (uint32_t) a * (uint32_t) p->ncyc + (uint32_t) c;
    return 0;
}

static uint64_t group_bytes(const plan_t *p, int g)
{
    uint64_t b = 0;
    for (int q = 0; q < p->P; ++q) {
        if (p->groups.group_of[q] == g) {
            b += p->ranks[q].bytes;
        }
    }
    return b;
}

static uint64_t cycles_for(uint64_t bytes, uint64_t cb)
{
    uint64_t n = (bytes + cb - 1) / cb;
    return n ? n : 1;
}

/* Dynamic segmentation: members send their runs to the group's
 * aggregator, which cuts the group's data into ncyc portions and sends the
 * cuts back.  cuts_post posts the first messages, cuts_step finishes. */
static int cuts_post(plan_t *p)
{
    int g = p->groups.group_of[p->rank];
    int root = p->groups.aggr[g];
    int rc = OMPI_SUCCESS;
    p->cmine = malloc(((size_t) p->fcount * 2 + 1) * sizeof(uint64_t));
    p->cuts = malloc(((size_t) p->ncyc + 1) * sizeof(uint64_t));
    p->preq = malloc(((size_t) p->P + 1) * sizeof(ompi_request_t *));
    if (NULL == p->cmine || NULL == p->cuts || NULL == p->preq) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (int i = 0; i < p->fcount; ++i) {
        p->cmine[2 * i] = (uint64_t) (uintptr_t) p->fiov[i].iov_base;
        p->cmine[2 * i + 1] = p->fiov[i].iov_len;
    }
    p->cuts_phase = 0;
    if (p->rank != root) {
        /* The summary counted runs of merged entries; send exactly that many. */
        if (p->ranks[p->rank].runs > 0) {
            rc = MCA_PML_CALL(isend(p->cmine, (size_t) p->ranks[p->rank].runs * 2, MPI_UINT64_T,
                                    root, SFIO_FCOLL_TAG, MCA_PML_BASE_SEND_STANDARD, p->comm,
                                    &p->preq[p->npreq++]));
        }
        if (OMPI_SUCCESS == rc) {
            rc = MCA_PML_CALL(irecv(p->cuts, (size_t) p->ncyc + 1, MPI_UINT64_T, root,
                                    SFIO_FCOLL_TAG, p->comm, &p->preq[p->npreq++]));
        }
        return rc;
    }
    size_t total = 0;
    for (int q = 0; q < p->P; ++q) {
        if (p->groups.group_of[q] == g) {
            total += (size_t) p->ranks[q].runs;
        }
    }
    p->call = malloc((total + 1) * sizeof(*p->call));
    if (NULL == p->call) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    size_t at = 0;
    for (int q = 0; q < p->P && OMPI_SUCCESS == rc; ++q) {
        if (p->groups.group_of[q] != g || 0 == p->ranks[q].runs) {
            continue;
        }
        if (q == p->rank) {
            memcpy(&p->call[at], p->cmine, (size_t) p->fcount * 2 * sizeof(uint64_t));
        } else {
            rc = MCA_PML_CALL(irecv(&p->call[at], (size_t) p->ranks[q].runs * 2, MPI_UINT64_T, q,
                                    SFIO_FCOLL_TAG, p->comm, &p->preq[p->npreq++]));
        }
        at += (size_t) p->ranks[q].runs;
    }
    return rc;
}

/* true when this rank has its group's cuts, or, with *rc set (by a failed
 * post or a failed message), when nothing of the cut exchange is pending. */
static bool cuts_step(plan_t *p, int *rc)
{
    int g = p->groups.group_of[p->rank];
    if (!reqs_done(p->preq, &p->npreq, rc)) {
        return false;
    }
    if (p->rank != p->groups.aggr[g] || 0 != p->cuts_phase || OMPI_SUCCESS != *rc) {
        return true;
    }
    size_t total = 0;
    for (int q = 0; q < p->P; ++q) {
        if (p->groups.group_of[q] == g) {
            total += (size_t) p->ranks[q].runs;
        }
    }
    mca_common_sfio_coll_cuts(p->call, total, p->cycle_bytes, p->ncyc, p->cuts);
    p->cuts_phase = 1;
    for (int q = 0; q < p->P && OMPI_SUCCESS == *rc; ++q) {
        if (p->groups.group_of[q] == g && q != p->rank) {
            *rc = MCA_PML_CALL(isend(p->cuts, (size_t) p->ncyc + 1, MPI_UINT64_T, q,
                                     SFIO_FCOLL_TAG, MCA_PML_BASE_SEND_STANDARD, p->comm,
                                     &p->preq[p->npreq++]));
        }
    }
    return reqs_done(p->preq, &p->npreq, rc);
}

/* Splits this rank's file iovec into pieces keyed (aggregator, cycle) by
 * the algorithm's assign function (sfio_collplan). */
static int assign_pieces(plan_t *p)
{
    uint64_t spos = 0;
    int g = p->groups.group_of[p->rank];
    mca_common_sfio_coll_assign_fn_t assign = mca_common_sfio_coll_algs[p->alg].assign;
    mca_common_sfio_coll_assign_t st = {
        .bounds = p->bounds, .naggr = p->naggr, .cycle_bytes = p->cycle_bytes,
        .cuts = p->cuts, .ncyc = p->ncyc, .group = g,
        .gcyc = cycles_for(group_bytes(p, g), p->cycle_bytes),
        .mine = p->ranks[p->rank].bytes, .c_static = 0,
    };
    for (int i = 0; i < p->fcount; ++i) {
        uint64_t off = (uint64_t) (uintptr_t) p->fiov[i].iov_base;
        uint64_t len = p->fiov[i].iov_len;
        while (len > 0) {
            int a, c;
            uint64_t take;
            assign(&st, off, len, spos, &a, &c, &take);
            if (0 == take || take > len) {
                take = len;     /* defensive: never loop forever */
            }
            if (0 != add_piece(p, a, c, off, take, spos)) {
                return OMPI_ERR_OUT_OF_RESOURCE;
            }
            off += take;
            len -= take;
            spos += take;
        }
    }
    /* Counting sort by key, stable (keeps stream order within a key). */
    size_t nkeys = (size_t) p->naggr * (size_t) p->ncyc;
    p->first = calloc(nkeys + 1, sizeof(size_t));
    piece_t *sorted = malloc((p->npieces ? p->npieces : 1) * sizeof(piece_t));
    if (NULL == p->first || NULL == sorted) {
        free(sorted);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < p->npieces; ++i) {
        p->first[p->pieces[i].key + 1]++;
    }
    for (size_t k = 0; k < nkeys; ++k) {
        p->first[k + 1] += p->first[k];
    }
    size_t *at = malloc((nkeys + 1) * sizeof(size_t));
    if (NULL == at) {
        free(sorted);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    memcpy(at, p->first, (nkeys + 1) * sizeof(size_t));
    for (size_t i = 0; i < p->npieces; ++i) {
        sorted[at[p->pieces[i].key]++] = p->pieces[i];
    }
    free(at);
    free(p->pieces);
    p->pieces = sorted;
    p->cap = p->npieces;
    return OMPI_SUCCESS;
}

/* Tells every aggregator how many pieces and bytes each rank sends it per
 * cycle (one ialltoallv), and agrees on local failures so far (one
 * iallreduce behind it: every rank posts both, in this order). */
static int counts_post(plan_t *p)
{
    int P = p->P, ncyc = p->ncyc, rc;
    size_t per = (size_t) ncyc * 2;
    p->csend = calloc((size_t) p->naggr * per + 1, sizeof(uint64_t));
    p->cints = calloc((size_t) P * 4, sizeof(int));
    if (NULL == p->csend || NULL == p->cints) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    uint64_t *send = p->csend;
    int *scount = p->cints, *sdisp = scount + P, *rcount = scount + 2 * P, *rdisp = scount + 3 * P;
    for (int a = 0; a < p->naggr; ++a) {
        for (int c = 0; c < ncyc; ++c) {
            size_t k = (size_t) a * ncyc + c;
            uint64_t nb = 0;
            for (size_t i = p->first[k]; i < p->first[k + 1]; ++i) {
                nb += p->pieces[i].len;
            }
            send[a * per + 2 * c] = p->first[k + 1] - p->first[k];
            send[a * per + 2 * c + 1] = nb;
        }
        scount[p->aggr_rank[a]] = (int) per;
        sdisp[p->aggr_rank[a]] = (int) (a * per);
        if (NULL != p->opt->matrix_file && p->aggr_rank[a] != p->rank) {
            uint64_t sent = 0;
            for (int c = 0; c < ncyc; ++c) {
                sent += send[a * per + 2 * c + 1];
            }
            mca_common_sfio_appmat_sent(p->comm, p->aggr_rank[a], sent);
        }
    }
    if (p->my_aggr >= 0) {
        p->rcnt = calloc((size_t) P * per + 1, sizeof(uint64_t));
        if (NULL == p->rcnt) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        for (int q = 0; q < P; ++q) {
            rcount[q] = (int) per;
            rdisp[q] = (int) (q * per);
        }
    }
    rc = p->comm->c_coll->coll_ialltoallv(send, scount, sdisp, MPI_UINT64_T,
                                          p->rcnt ? p->rcnt : &p->cdummy, rcount, rdisp,
                                          MPI_UINT64_T, p->comm, &p->creq[p->ncreq],
                                          p->comm->c_coll->coll_ialltoallv_module);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    p->ncreq++;
    p->bad = OMPI_SUCCESS != p->lrc;
    rc = p->comm->c_coll->coll_iallreduce(&p->bad, &p->anybad, 1, MPI_INT, MPI_MAX, p->comm,
                                          &p->creq[p->ncreq],
                                          p->comm->c_coll->coll_iallreduce_module);
    if (OMPI_SUCCESS == rc) {
        p->ncreq++;
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* Cycles                                                              */

static int grow(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap) {
        return 0;
    }
    char *n = realloc(*buf, need);
    if (NULL == n) {
        return -ENOMEM;
    }
    *buf = n;
    *cap = need;
    return 0;
}

static size_t cnt_np(const plan_t *p, int q, int c)
{
    return (size_t) p->rcnt[((size_t) q * p->ncyc + c) * 2];
}

static size_t cnt_nb(const plan_t *p, int q, int c)
{
    return (size_t) p->rcnt[((size_t) q * p->ncyc + c) * 2 + 1];
}

/* Posts cycle c: senders' messages, aggregator's receives. */
static int start_cycle(plan_t *p, slot_t *s, int c)
{
    int rc = OMPI_SUCCESS;
    /* Aggregator: receive from every rank with pieces for me in cycle c. */
    if (p->my_aggr >= 0) {
        size_t need = 0;
        for (int q = 0; q < p->P; ++q) {
            need += cnt_np(p, q, c) * 16 + (p->rw ? 0 : cnt_nb(p, q, c));
        }
        if (0 != grow(&s->rbuf, &s->rcap, need ? need : 1)) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        size_t at = 0;
        for (int q = 0; q < p->P && OMPI_SUCCESS == rc; ++q) {
            size_t len = cnt_np(p, q, c) * 16 + (p->rw ? 0 : cnt_nb(p, q, c));
            if (0 == len) {
                continue;
            }
            rc = MCA_PML_CALL(irecv(s->rbuf + at, len, MPI_BYTE, q, SFIO_FCOLL_TAG, p->comm,
                                    &s->areqs[s->nareq++]));
            at += len;
        }
    }
    /* Sender: one message per aggregator with pieces of mine in cycle c. */
    size_t need = 0, dneed = 0;
    for (int a = 0; a < p->naggr; ++a) {
        size_t k = (size_t) a * p->ncyc + c;
        for (size_t i = p->first[k]; i < p->first[k + 1]; ++i) {
            need += 16 + (p->rw ? 0 : p->pieces[i].len);
            dneed += p->pieces[i].len;
        }
    }
    if (0 != grow(&s->sbuf, &s->scap, need ? need : 1) ||
        (p->rw && 0 != grow(&s->dbuf, &s->dcap, dneed ? dneed : 1))) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    size_t at = 0, dat = 0;
    for (int a = 0; a < p->naggr && OMPI_SUCCESS == rc; ++a) {
        size_t k = (size_t) a * p->ncyc + c;
        size_t n = p->first[k + 1] - p->first[k];
        if (0 == n) {
            continue;
        }
        char *msg = s->sbuf + at;
        uint64_t *hdr = (uint64_t *) msg;
        char *data = msg + 16 * n;
        uint64_t nb = 0;
        for (size_t i = 0; i < n; ++i) {
            const piece_t *x = &p->pieces[p->first[k] + i];
            hdr[2 * i] = x->off;
            hdr[2 * i + 1] = x->len;
            if (!p->rw) {
                mstream_copy(&p->mem, x->spos, x->len, data + nb, 1);
            }
            nb += x->len;
        }
        size_t len = 16 * n + (p->rw ? 0 : nb);
        rc = MCA_PML_CALL(isend(msg, len, MPI_BYTE, p->aggr_rank[a], SFIO_FCOLL_TAG,
                                MCA_PML_BASE_SEND_STANDARD, p->comm, &s->reqs[s->nreq++]));
        if (OMPI_SUCCESS == rc && p->rw) {
            rc = MCA_PML_CALL(irecv(s->dbuf + dat, nb, MPI_BYTE, p->aggr_rank[a],
                                    SFIO_FCOLL_TAG + 1, p->comm, &s->reqs[s->nreq++]));
        }
        at += len;
        dat += nb;
    }
    return rc;
}

/* Runs the fbtl on io[0..n) and puts back what fh held: this may run
 * inside another OMPIO call's progress on the same handle. */
static double now_s(void);

static ssize_t fbtl_call(plan_t *p, int rw, mca_common_ompio_io_array_t *io, int n,
                         bool collective_op)
{
    ompio_file_t *fh = p->fh;
    double t0 = now_s();
    mca_common_ompio_io_array_t *save_io = fh->f_io_array;
    int save_n = fh->f_num_of_io_entries;
    int save_flags = fh->f_flags;
    fh->f_io_array = io;
    fh->f_num_of_io_entries = n;
    if (collective_op) {
        fh->f_flags |= OMPIO_COLLECTIVE_OP;
    } else {
        fh->f_flags &= ~OMPIO_COLLECTIVE_OP;
    }
    /* This call reports its fbtl errors itself: none is left for sync and
     * close to report again (the suite's unreported_err). */
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    int unreported = NULL != f ? f->unreported_err : 0;
    ssize_t got = rw ? fh->f_fbtl->fbtl_preadv(fh) : fh->f_fbtl->fbtl_pwritev(fh);
    if (NULL != f) {
        if (got < 0 && 0 != f->unreported_err && f->unreported_err != unreported) {
            p->fbtl_err = f->unreported_err;   /* the class the fbtl saw (e.g. no space) */
        }
        f->unreported_err = unreported;
    }
    fh->f_io_array = save_io;
    fh->f_num_of_io_entries = save_n;
    fh->f_flags = save_flags;
    p->io_seconds += now_s() - t0;
    return got;
}

/* An fbtl call failed: said once, kept for the closing agreement. */
static void io_failed(plan_t *p)
{
    if (OMPI_SUCCESS == p->lrc) {
        mca_common_sfio_show_help("io-error", true, "fcoll/adaptive", p->rw ? "read" : "write",
                                  p->fh->f_filename ? p->fh->f_filename : "", "fbtl call failed");
        p->lrc = 0 != p->fbtl_err ? p->fbtl_err : MPI_ERR_IO;
    }
}

/* Queues io[0..n) as slot s's write (rw 0) or read (rw 1) through the
 * fbtl's ipwritev / ipreadv (which take their own copy of the array).
 * False when the fbtl cannot: it has no asynchronous path, could not queue
 * the request, or returned without starting anything (stock fbtl/posix
 * built without POSIX AIO); the caller then does the I/O synchronously. */
static bool io_queue(plan_t *p, slot_t *s, int rw, mca_common_ompio_io_array_t *io, int n,
                     uint64_t bytes)
{
    ompio_file_t *fh = p->fh;
    mca_ompio_request_t *req = NULL;
    if (NULL == (rw ? fh->f_fbtl->fbtl_ipreadv : fh->f_fbtl->fbtl_ipwritev) ||
        NULL == fh->f_fbtl->fbtl_progress) {
        return false;
    }
    mca_common_ompio_request_alloc(&req, rw ? MCA_OMPIO_REQUEST_READ : MCA_OMPIO_REQUEST_WRITE);
    if (NULL == req) {
        return false;
    }
    mca_common_ompio_io_array_t *save_io = fh->f_io_array;
    int save_n = fh->f_num_of_io_entries;
    int save_flags = fh->f_flags;
    fh->f_io_array = io;
    fh->f_num_of_io_entries = n;
    fh->f_flags &= ~OMPIO_COLLECTIVE_OP;    /* as fbtl_call: no write data sieving */
    ssize_t rc = rw ? fh->f_fbtl->fbtl_ipreadv(fh, (ompi_request_t *) req)
                    : fh->f_fbtl->fbtl_ipwritev(fh, (ompi_request_t *) req);
    fh->f_io_array = save_io;
    fh->f_num_of_io_entries = save_n;
    fh->f_flags = save_flags;
    if (OMPI_SUCCESS != rc || NULL == req->req_progress_fn) {
        ompi_request_t *r = &req->req_ompi;
        req->req_progress_fn = NULL;
        (void) ompi_request_free(&r);
        return false;
    }
    s->ioreq = &req->req_ompi;
    p->nqueued++;
    s->io_lo = UINT64_MAX;
    s->io_hi = 0;
    for (int i = 0; i < n; ++i) {
        uint64_t off = (uint64_t) (intptr_t) io[i].offset;
        s->io_lo = off < s->io_lo ? off : s->io_lo;
        s->io_hi = off + io[i].length > s->io_hi ? off + io[i].length : s->io_hi;
    }
    s->iobytes = bytes;
    s->io_read = 0 != rw;
    s->io_t0 = now_s();
    return true;
}

/* A read of runs returned got bytes: note where it met the end of file. */
static void read_met_eof(plan_t *p, const mca_common_sfio_coll_piece_t *runs, size_t n,
                         uint64_t got)
{
    uint64_t at = mca_common_sfio_coll_read_stop(runs, n, got);
    p->eof_at = at < p->eof_at ? at : p->eof_at;
}

/* True when the file's fbtl is the component called name. */
static bool fbtl_is(const ompio_file_t *fh, const char *name)
{
    return NULL != fh->f_fbtl_component &&
           0 == strcmp(fh->f_fbtl_component->mca_component_name, name);
}

/* A queued request of stock fbtl/posix failed: release the region lock
 * its progress took for it.  Open MPI 5.0.7's fbtl/posix unlocks a
 * request's batch only when it succeeds (its request_free no longer
 * unlocks, 4.1's did), so after an I/O error the write lock stays until
 * the file is closed and every other aggregator writing there blocks in
 * F_SETLKW.  The lock is this process's (fcntl), over at most the
 * request's span, and this aggregator has no other request in flight. */
static void posix_release_lock(plan_t *p, const slot_t *s)
{
    ompio_file_t *fh = p->fh;
    if (!fbtl_is(fh, "posix") || fh->fd < 0 || s->io_hi <= s->io_lo) {
        return;
    }
    struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = (off_t) s->io_lo,
                        .l_len = (off_t) (s->io_hi - s->io_lo) };
    (void) fcntl(fh->fd, F_SETLK, &fl);
}

/* True once slot s has no file I/O in flight; a failed one, or a short
 * write, is kept for the closing agreement (a failed read also makes its
 * cycle answer zeros; a short read met the end of file).  OMPIO's
 * progress completes the request. */
static bool io_done(plan_t *p, slot_t *s)
{
    if (NULL == s->ioreq) {
        return true;
    }
    if (!REQUEST_COMPLETE(s->ioreq)) {
        return false;
    }
    opal_atomic_rmb();
    if (OMPI_SUCCESS != s->ioreq->req_status.MPI_ERROR ||
        (!s->io_read && s->ioreq->req_status._ucount < s->iobytes)) {
        int e = s->ioreq->req_status.MPI_ERROR;
        if (e > 0 && e <= MPI_ERR_LASTCODE) {
            p->fbtl_err = e;
        }
        io_failed(p);
        s->io_bad = s->io_read;
        if (OMPI_SUCCESS != s->ioreq->req_status.MPI_ERROR) {
            posix_release_lock(p, s);
        }
    } else if (s->io_read && s->ioreq->req_status._ucount < s->iobytes) {
        read_met_eof(p, s->qruns, s->nqruns, (uint64_t) s->ioreq->req_status._ucount);
    }
    p->io_seconds += now_s() - s->io_t0;
    (void) ompi_request_free(&s->ioreq);
    s->ioreq = NULL;
    return true;
}

/* Slot s's cycle write: queued when the plan overlaps writes with the
 * next cycle's exchange and this is not the last cycle, else now. */
static void write_cycle(plan_t *p, slot_t *s, int c, mca_common_ompio_io_array_t *io, int n)
{
    uint64_t bytes = 0;
    for (int i = 0; i < n; ++i) {
        bytes += io[i].length;
    }
    if (n <= 0 || (p->async && c + 1 < p->ncyc && io_queue(p, s, 0, io, n, bytes))) {
        return;
    }
    if (fbtl_call(p, 0, io, n, false) < 0) {
        io_failed(p);
    }
}

/* For write_aggregate, the m pieces in p->ap / p->runs (rank
 * order) when no two overlap: one fbtl call over the pieces in offset
 * order, straight from the receive buffer.  Returns 1 when they overlap
 * (the caller builds their union, where rank order wins), else 0 or an
 * error. */
static int write_disjoint(plan_t *p, slot_t *s, int c, size_t m)
{
    if (m > p->ordcap) {
        size_t *o = realloc(p->order, 2 * m * sizeof(size_t));
        if (NULL == o) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        p->order = o;
        p->ordcap = m;
    }
    if (!mca_common_sfio_coll_order_disjoint(p->runs, m, p->order, p->order + m)) {
        return 1;
    }
    mca_common_ompio_io_array_t *io = malloc(m * sizeof(*io));
    if (NULL == io) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    int n = 0;
    for (size_t i = 0; i < m; ++i) {
        const apiece_t *x = &p->ap[p->order[i]];
        if (0 == x->len) {
            continue;
        }
        io[n].memory_address = x->data;
        io[n].offset = (IOVBASE_TYPE *) (intptr_t) x->off;
        io[n].length = (size_t) x->len;
        n++;
    }
    write_cycle(p, s, c, io, n);
    free(io);
    return OMPI_SUCCESS;
}

/* The aggregator's pieces of cycle c, from slot s's headers, in rank order
 * into p->ap (with where their bytes are: write data in s->rbuf) and
 * p->runs.  *m: how many; *at: where the headers (and write data) end in
 * s->rbuf. */
static int collect_pieces(plan_t *p, slot_t *s, int c, size_t *m_out, size_t *at_out)
{
    size_t n = 0;
    for (int q = 0; q < p->P; ++q) {
        n += cnt_np(p, q, c);
    }
    *m_out = 0;
    *at_out = 0;
    if (0 == n) {
        return OMPI_SUCCESS;
    }
    if (n > p->apcap) {
        apiece_t *na = realloc(p->ap, n * sizeof(apiece_t));
        mca_common_sfio_coll_piece_t *nr = realloc(p->runs, n * sizeof(*nr));
        if (NULL != na) {
            p->ap = na;
        }
        if (NULL != nr) {
            p->runs = nr;
        }
        if (NULL == na || NULL == nr) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        p->apcap = p->runcap = n;
    }
    size_t at = 0, m = 0;
    for (int q = 0; q < p->P; ++q) {
        size_t np = cnt_np(p, q, c);
        if (0 == np) {
            continue;
        }
        const uint64_t *hdr = (const uint64_t *) (s->rbuf + at);
        char *data = s->rbuf + at + 16 * np;
        for (size_t i = 0; i < np; ++i) {
            p->ap[m].off = hdr[2 * i];
            p->ap[m].len = hdr[2 * i + 1];
            p->ap[m].data = data;
            p->runs[m].off = hdr[2 * i];
            p->runs[m].len = hdr[2 * i + 1];
            if (!p->rw) {
                data += hdr[2 * i + 1];
            }
            ++m;
        }
        at += 16 * np + (p->rw ? 0 : cnt_nb(p, q, c));
    }
    *m_out = m;
    *at_out = at;
    return OMPI_SUCCESS;
}

/* The union of the m collected pieces (reads join holes up to
 * read_max_gap) laid out in s->ubuf: run r at rpos[r] (caller frees), and
 * when io is not NULL one fbtl entry per run (caller frees). */
typedef struct {
    size_t nruns, total;
    size_t *rpos;
    mca_common_ompio_io_array_t *io;
} ulayout_t;

static int union_layout(plan_t *p, slot_t *s, size_t m, bool with_io, ulayout_t *u)
{
    u->nruns = mca_common_sfio_coll_union(p->runs, m, p->rw ? p->opt->read_max_gap : 0, p->runs);
    u->total = 0;
    for (size_t r = 0; r < u->nruns; ++r) {
        u->total += (size_t) p->runs[r].len;
    }
    u->io = NULL;
    u->rpos = malloc((u->nruns + 1) * sizeof(size_t));
    if (with_io) {
        u->io = malloc((u->nruns + 1) * sizeof(*u->io));
    }
    if (NULL == u->rpos || (with_io && NULL == u->io) ||
        0 != grow(&s->ubuf, &s->ucap, u->total ? u->total : 1)) {
        free(u->rpos);
        free(u->io);
        u->rpos = NULL;
        u->io = NULL;
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    size_t pos = 0;
    for (size_t r = 0; r < u->nruns; ++r) {
        u->rpos[r] = pos;
        if (with_io) {
            u->io[r].memory_address = s->ubuf + pos;
            u->io[r].offset = (IOVBASE_TYPE *) (intptr_t) p->runs[r].off;
            u->io[r].length = (size_t) p->runs[r].len;
        }
        pos += (size_t) p->runs[r].len;
    }
    return OMPI_SUCCESS;
}

/* Where collected piece i lies in s->ubuf. */
static char *union_at(const plan_t *p, const slot_t *s, const ulayout_t *u, size_t i)
{
    long r = mca_common_sfio_coll_run_of(p->runs, u->nruns, p->ap[i].off);
    return s->ubuf + u->rpos[r] + (p->ap[i].off - p->runs[r].off);
}

/* Write, aggregator: cycle c's pieces (slot s's messages are in) go to the
 * file; the union of the pieces where they overlap (rank order wins), or
 * where many small pieces would make many queued requests.  An I/O error
 * is kept in p->lrc and the protocol goes on; the closing agreement makes
 * it everyone's error. */
static int write_aggregate(plan_t *p, slot_t *s, int c)
{
    size_t m, at;
    int rc = collect_pieces(p, s, c, &m, &at);
    if (OMPI_SUCCESS != rc || 0 == m) {
        return rc;
    }
    /* A queued write of many small pieces goes through the union buffer:
     * one copy, then few large requests (an asynchronous fbtl may issue
     * one request per entry: stock fbtl/posix, one aio_write each). */
    uint64_t pbytes = 0;
    for (size_t i = 0; i < m; ++i) {
        pbytes += p->ap[i].len;
    }
    bool gather = p->async && c + 1 < p->ncyc && pbytes < (uint64_t) m * SFIO_FCOLL_SMALL_PIECE;
    if (!gather) {
        /* Disjoint pieces (the usual case) go to the file from where they
         * arrived: no union buffer, no copy.  The fbtl joins neighbours. */
        int drc = write_disjoint(p, s, c, m);
        if (drc <= 0) {
            return drc;
        }
    }
    ulayout_t u;
    rc = union_layout(p, s, m, true, &u);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    for (size_t i = 0; i < m; ++i) {
        memcpy(union_at(p, s, &u, i), p->ap[i].data, (size_t) p->ap[i].len);
    }
    /* Not OMPIO_COLLECTIVE_OP for writes: with it, stock fbtl/posix 4.1
     * does a read-modify-write over the gaps ("write data sieving") whose
     * buffer is not cleared after a short read past the end of file, so
     * stale bytes land behind EOF.  The runs are disjoint: nothing to gain. */
    write_cycle(p, s, c, u.io, (int) u.nruns);
    free(u.io);
    free(u.rpos);
    return OMPI_SUCCESS;
}

/* Cycle c's pieces at this aggregator (slot s's headers are in) and the
 * layout of their union in s's union buffer; nothing to lay out when
 * *m_out is 0. */
static int cycle_union(plan_t *p, slot_t *s, int c, bool with_io, size_t *m_out,
                       size_t *at_out, ulayout_t *u)
{
    int rc = collect_pieces(p, s, c, m_out, at_out);
    if (OMPI_SUCCESS != rc || 0 == *m_out) {
        return rc;
    }
    return union_layout(p, s, *m_out, with_io, u);
}

/* Where queued reads stop.  Stock fbtl/posix (4.1.4 fbtl_posix_progress)
 * re-issues a short AIO read at its new offset until it is whole, so a
 * queued read reaching past the end of file never completes: queued reads
 * stop at the file's size, asked once per call (bytes a concurrent writer
 * adds meanwhile are not promised without sync or atomicity).
 * fbtl/versioned ends short reads itself, and its reads may see bytes not
 * yet in the flat file: no bound.  False: the size is unknown, so the read
 * is not queued. */
static bool queued_read_end(plan_t *p, uint64_t *end)
{
    ompio_file_t *fh = p->fh;
    if (fbtl_is(fh, "versioned")) {
        *end = UINT64_MAX;
        return true;
    }
    if (!p->read_end_known) {
        struct stat sb;
        if (fh->fd < 0 || 0 != fstat(fh->fd, &sb)) {
            return false;
        }
        p->read_end = (uint64_t) sb.st_size;
        p->read_end_known = true;
    }
    *end = p->read_end;
    return true;
}

/* Read, aggregator: issues cycle c's file read (slot s's headers are in)
 * into s's union buffer: queued (fbtl ipreadv) when the plan queues I/O,
 * else now.  A failed read is kept in p->lrc and answers zeros. */
static int read_issue(plan_t *p, slot_t *s, int c)
{
    size_t m, at;
    ulayout_t u;
    int rc = cycle_union(p, s, c, true, &m, &at, &u);
    s->rd_issued = true;
    if (OMPI_SUCCESS != rc || 0 == m) {
        return rc;
    }
    memset(s->ubuf, 0, u.total);    /* bytes beyond the end of file read as 0 */
    int nio = (int) u.nruns;
    uint64_t want = u.total;        /* bytes the read asks for */
    bool issued = false;
    uint64_t end;
    if (p->async && queued_read_end(p, &end)) {
        /* p->runs is free to clip: read_answer lays the union out again */
        size_t k = mca_common_sfio_coll_clip(p->runs, u.nruns, end);
        want = 0;
        for (size_t r = 0; r < k; ++r) {
            u.io[r].length = (size_t) p->runs[r].len;
            want += p->runs[r].len;
        }
        nio = (int) k;
        if (want < u.total) {
            p->eof_at = end < p->eof_at ? end : p->eof_at;  /* the clip met the end */
        }
        char *q = (char *) s->qruns;
        if (0 == k) {
            issued = true;
        } else if (0 == grow(&q, &s->qcap, k * sizeof(*s->qruns))) {
            s->qruns = (mca_common_sfio_coll_piece_t *) q;
            memcpy(s->qruns, p->runs, k * sizeof(*s->qruns));
            s->nqruns = k;
            issued = io_queue(p, s, 1, u.io, nio, want);
        }
    }
    if (!issued && nio > 0) {
        ssize_t got = fbtl_call(p, 1, u.io, nio, true);
        if (got < 0) {
            io_failed(p);
            memset(s->ubuf, 0, u.total);
        } else if ((uint64_t) got < want) {
            read_met_eof(p, p->runs, (size_t) nio, (uint64_t) got);
        }
    }
    free(u.io);
    free(u.rpos);
    return OMPI_SUCCESS;
}

/* Read, aggregator: once cycle c's read is in s's union buffer, answers
 * each rank with its pieces' bytes, in its order.  Ranks' pieces may
 * overlap (several readers of one byte), so the replies can be longer than
 * the union that was read. */
static int read_answer(plan_t *p, slot_t *s, int c)
{
    size_t m, at;
    ulayout_t u;
    int rc = cycle_union(p, s, c, false, &m, &at, &u);    /* as read_issue: ubuf keeps its size */
    s->rd_issued = false;
    if (OMPI_SUCCESS != rc || 0 == m) {
        return rc;
    }
    if (s->io_bad) {
        memset(s->ubuf, 0, u.total);
        s->io_bad = false;
    }
    size_t replies = 0;
    for (size_t k = 0; k < m; ++k) {
        replies += (size_t) p->ap[k].len;
    }
    if (0 != grow(&s->rbuf, &s->rcap, at + replies)) {
        free(u.rpos);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    /* rbuf holds only headers for reads; replies go after them. */
    char *out = s->rbuf + at;
    size_t i = 0;
    for (int q = 0; q < p->P && OMPI_SUCCESS == rc; ++q) {
        size_t np = cnt_np(p, q, c);
        if (0 == np) {
            continue;
        }
        char *start = out;
        for (size_t j = 0; j < np; ++j, ++i) {
            memcpy(out, union_at(p, s, &u, i), (size_t) p->ap[i].len);
            out += p->ap[i].len;
        }
        rc = MCA_PML_CALL(isend(start, (size_t) (out - start), MPI_BYTE, q, SFIO_FCOLL_TAG + 1,
                                MCA_PML_BASE_SEND_STANDARD, p->comm, &s->dreqs[s->ndreq++]));
    }
    free(u.rpos);
    return rc;
}

/* Read, this rank as a sender: scatter cycle c's replies into memory. */
static void scatter_cycle(plan_t *p, slot_t *s, int c)
{
    size_t dat = 0;
    for (int a = 0; a < p->naggr; ++a) {
        size_t k = (size_t) a * p->ncyc + c;
        for (size_t i = p->first[k]; i < p->first[k + 1]; ++i) {
            mstream_copy(&p->mem, p->pieces[i].spos, p->pieces[i].len, s->dbuf + dat, 0);
            dat += p->pieces[i].len;
        }
    }
}

/* ------------------------------------------------------------------ */
/* individual                                                          */

/* A rank's whole access goes through one bounce buffer (one I/O entry per
 * file run) when its memory is in many small pieces for fewer file runs
 * (e.g. a subarray with guard cells written to a contiguous file piece):
 * one copy instead of an fbtl entry per memory piece.  Larger accesses
 * keep the caller's pieces. */
#define INDIVIDUAL_BOUNCE_MAX ((uint64_t) 64 << 20)

static bool individual_bounces(const plan_t *p)
{
    return p->mem.n > (uint32_t) p->fcount && p->max_data > 0 &&
           p->max_data <= INDIVIDUAL_BOUNCE_MAX &&
           p->max_data / p->mem.n < SFIO_FCOLL_SMALL_PIECE;
}

static int run_individual(plan_t *p)
{
    ompio_file_t *fh = p->fh;
    char *bounce = individual_bounces(p) ? malloc(p->max_data) : NULL;
    size_t n = 0, cap = (size_t) p->fcount + (NULL != bounce ? 0 : p->mem.n) + 1;
    mca_common_ompio_io_array_t *io = malloc(cap * sizeof(*io));
    if (NULL == io) {
        free(bounce);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (NULL != bounce) {
        /* file runs in stream order over the packed bytes */
        uint64_t at = 0;
        for (int i = 0; i < p->fcount && at < p->max_data; ++i) {
            uint64_t len = p->fiov[i].iov_len;
            if (len > p->max_data - at) {
                len = p->max_data - at;
            }
            io[n].memory_address = bounce + at;
            io[n].offset = (IOVBASE_TYPE *) p->fiov[i].iov_base;
            io[n].length = (size_t) len;
            ++n;
            at += len;
        }
        if (!p->rw) {
            mstream_copy(&p->mem, 0, at, bounce, 1);
        }
    }
    /* Else pair the memory and file iovecs. */
    uint32_t mi = 0;
    uint64_t min = 0;
    for (int i = 0; NULL == bounce && i < p->fcount; ++i) {
        uint64_t off = (uint64_t) (uintptr_t) p->fiov[i].iov_base;
        uint64_t len = p->fiov[i].iov_len;
        while (len > 0 && mi < p->mem.n) {
            uint64_t avail = p->mem.iov[mi].iov_len - min;
            uint64_t take = avail < len ? avail : len;
            if (take > 0) {
                io[n].memory_address = (char *) p->mem.iov[mi].iov_base + min;
                io[n].offset = (IOVBASE_TYPE *) (intptr_t) off;
                io[n].length = (size_t) take;
                ++n;
            }
            off += take;
            len -= take;
            min += take;
            if (min == p->mem.iov[mi].iov_len) {
                ++mi;
                min = 0;
            }
        }
    }
    int rc = OMPI_SUCCESS;
    if (n > 0) {
        ssize_t got = fbtl_call(p, p->rw, io, (int) n,
                                0 != (fh->f_flags & OMPIO_COLLECTIVE_OP));
        /* A failed call, or a short write, is MPI_ERR_IO as on the
         * aggregating paths (the fbtl says only OMPI_ERROR). */
        if (got < 0 || (!p->rw && (uint64_t) got < p->max_data)) {
            io_failed(p);
            rc = p->lrc;
        } else {
            p->got = (uint64_t) got;    /* reads: short at the end of file */
            if (p->rw && NULL != bounce) {
                mstream_copy(&p->mem, 0, p->got < p->max_data ? p->got : p->max_data,
                             bounce, 0);
            }
        }
    }
    p->individual_ran = true;
    free(io);
    free(bounce);
    return rc;
}

/* ------------------------------------------------------------------ */
/* One collective call                                                 */

static int info_int(ompio_file_t *fh, const char *key)
{
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (NULL == fh->f_info) {
        return -1;
    }
    if (OPAL_SUCCESS != mca_common_sfio_info_get(fh->f_info, key, val, sizeof(val), &flag) || !flag) {
        return -1;
    }
    return atoi(val);
}

static int cart_rows(ompi_communicator_t *comm)
{
    int status = MPI_UNDEFINED, ndims = 0;
    if (MPI_SUCCESS != MPI_Topo_test(comm, &status) || MPI_CART != status ||
        MPI_SUCCESS != MPI_Cartdim_get(comm, &ndims) || ndims < 2 || ndims > 16) {
        return 0;
    }
    int dims[16], periods[16], coords[16];
    if (MPI_SUCCESS != MPI_Cart_get(comm, ndims, dims, periods, coords)) {
        return 0;
    }
    return dims[0];
}


/* opt->read_extent_ratio, or by file system when -1: reading a rank's
 * extent alone pays on local storage (page cache), not over a network
 * client's link.  The same on every rank: one file, one type. */
static bool fs_is_local(ompio_file_t *fh, const mca_common_sfio_fcoll_options_t *opt)
{
    struct statfs sf;
    if (MCA_COMMON_SFIO_STORAGE_AUTO != opt->storage) {
        return MCA_COMMON_SFIO_STORAGE_LOCAL == opt->storage;
    }
    return fh->fd >= 0 && 0 == fstatfs(fh->fd, &sf) &&
           !mca_common_sfio_fs_is_network((long) sf.f_type);
}

static uint64_t read_extent_ratio(ompio_file_t *fh, const mca_common_sfio_fcoll_options_t *opt)
{
    if (opt->read_extent_ratio >= 0) {
        return (uint64_t) opt->read_extent_ratio;
    }
    return fs_is_local(fh, opt) ? 8 : 0;
}
/* Queued I/O hides an aggregator's exchange only from its second cycle
 * on: automatic cycles shrink until the busiest aggregator (load bytes)
 * has several (measured in docs/fcoll-adaptive.md, "Enough cycles to
 * overlap"). */
static void queued_cycle_size(plan_t *p, uint64_t load)
{
    if (p->async && 0 == p->opt->cycle_bytes) {
        p->cycle_bytes = mca_common_sfio_coll_queued_cycle(p->cycle_bytes, load,
                                                           p->opt->async_min_cycles,
                                                           p->opt->async_min_cycle_bytes);
    }
}

/* romio_cb_write / romio_cb_read: 1 enable, 0 disable, -1 automatic or absent. */
static int info_cb(ompio_file_t *fh, const char *key)
{
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (NULL == fh->f_info ||
        OPAL_SUCCESS != mca_common_sfio_info_get(fh->f_info, key, val, sizeof(val), &flag) ||
        !flag) {
        return -1;
    }
    return 0 == strcasecmp(val, "enable") ? 1 : 0 == strcasecmp(val, "disable") ? 0 : -1;
}

/* Gathers the facts of the choice (parameters, hints, statfs, topology)
 * and lets sfio_colldecide choose; then the plan's numbers. */
static int make_plan(plan_t *p)
{
    const mca_common_sfio_fcoll_options_t *opt = p->opt;
    ompio_file_t *fh = p->fh;
    int P = p->P;

    mca_common_sfio_coll_summarize(p->ranks, P, &p->sum);
    uint64_t ss = opt->stripe_size ? opt->stripe_size
                : (fh->f_stripe_size > 0 ? (uint64_t) fh->f_stripe_size : 65536);
    uint64_t k = opt->k ? opt->k : 1;
    bool local = fs_is_local(fh, opt);

    /* An aggregator's buffer: a forced cycle size, else half of
     * cb_buffer_size (two cycles in flight). */
    uint64_t buffer = opt->cycle_bytes;
    if (0 == buffer) {
        buffer = fh->f_bytes_per_agg > 0 ? (uint64_t) fh->f_bytes_per_agg / 2 : (16u << 20);
    }
    int forced = info_int(fh, "cb_nodes");
    mca_common_sfio_coll_facts_t facts = {
        .algorithm = opt->algorithm,
        .num_aggregators = forced > 0 ? forced : opt->num_aggregators,
        .cb_hint = info_cb(fh, p->rw ? "romio_cb_read" : "romio_cb_write"),
        .read = 0 != p->rw,
        /* Atomic mode without the suite's fcoll proxy: only disjoint
         * domains with the rank-order rule give one serial order for
         * every fbtl. */
        .atomic = 0 != fh->f_atomicity,
        .local = local,
        .k = k,
        .ss = ss,
        .min_run = opt->individual_min_run,
        .read_extent_ratio = read_extent_ratio(fh, opt),
        .cart_rows = 0,
        .max_aggregators = opt->max_aggregators,
        .node = NULL != p->topo ? p->topo->node : NULL,
        .links_per_node = opt->links_per_node,
        .cpu_cap = 0,
        .buffer = buffer,
    };
    uint64_t *scratch = malloc(((size_t) P * 2 + 1) * sizeof(uint64_t));
    if (NULL == scratch) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    mca_common_sfio_coll_choose(&facts, p->ranks, P, scratch, &p->choice);
    free(scratch);
    int alg = p->choice.alg;
    p->alg = alg;
    /* A queued write waits on the storage, not on this process: on a
     * network file system the next cycle's exchange fits in that wait.
     * On local storage the write is a copy by this process's core, so
     * nothing is gained there by default. */
    p->async = 1 == opt->async_io || (opt->async_io < 0 && !local);
    if (!(mca_common_sfio_coll_algs[alg].flags & MCA_COMMON_SFIO_COLL_F_AGGREGATE)) {
        p->naggr = 0;
        p->ncyc = 0;
        return OMPI_SUCCESS;
    }

    if (0 != mca_common_sfio_coll_groups_init(&p->groups, P)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    uint64_t cb = buffer;
    /* Automatic write cycles are small: each cycle's data then stays in
     * the caches from the sender's copy to the file write, and with
     * queued writes all but the first exchange hide behind the storage's
     * time for the previous cycle (docs/fcoll-adaptive.md). */
    if (0 == opt->cycle_bytes && !p->rw && opt->write_cycle_bytes > 0 &&
        cb > opt->write_cycle_bytes) {
        cb = opt->write_cycle_bytes;
    }
    /* Queued reads: the storage reads cycle c + 1 while cycle c's replies
     * travel, which needs several cycles per aggregator. */
    if (0 == opt->cycle_bytes && p->rw && p->async && opt->read_cycle_bytes > 0 &&
        cb > opt->read_cycle_bytes) {
        cb = opt->read_cycle_bytes;
    }
    if (0 == opt->cycle_bytes && cb < MIN_AUTO_CYCLE) {
        /* a tiny cb_buffer_size (hint or io_ompio_bytes_per_agg) would
         * make one exchange per few bytes: minutes for a small call */
        static bool told = false;
        if (!told) {
            told = true;
            mca_common_sfio_show_help("fcoll-small-cycles", true,
                                      fh->f_filename ? fh->f_filename : "",
                                      (unsigned long long) cb, (unsigned long long) MIN_AUTO_CYCLE);
        }
        cb = MIN_AUTO_CYCLE;
    }
    p->cycle_bytes = cb < 1 ? 1 : cb;
    if (facts.num_aggregators <= 0) {
        facts.cart_rows = cart_rows(p->comm);
        /* Local storage: no more aggregators than the cores can keep
         * busy once the copies dominate (see docs/fcoll-adaptive.md). */
        if (opt->local_aggregators_per_cpu > 0 && NULL != p->topo && local) {
            facts.cpu_cap = mca_common_sfio_place_cpu_cap(p->topo,
                                                          opt->local_aggregators_per_cpu);
        }
    }
    mca_common_sfio_coll_choose_groups(&facts, p->ranks, P, &p->choice, &p->groups);
    p->naggr = p->groups.ngroups;
    p->aggr_rank = malloc((size_t) p->naggr * sizeof(int));
    if (NULL == p->aggr_rank) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }

    uint64_t ncyc = 0;
    bool spread = NULL != p->topo && MCA_COMMON_SFIO_PLACE_SPREAD == opt->placement;
    if (mca_common_sfio_coll_algs[alg].flags & MCA_COMMON_SFIO_COLL_F_DOMAINS) {
        if (!spread) {
            mca_common_sfio_coll_spread(P, p->naggr, p->aggr_rank);
        } else if (mca_common_sfio_place_spread(p->topo, p->naggr, p->aggr_rank) < 0) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        p->bounds = malloc(((size_t) p->naggr + 1) * sizeof(uint64_t));
        if (NULL == p->bounds) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        mca_common_sfio_coll_domains(p->sum.lo, p->sum.hi, p->naggr, ss, p->bounds);
        uint64_t load = 0;
        for (int a = 0; a < p->naggr; ++a) {
            uint64_t w = p->bounds[a + 1] - p->bounds[a];
            load = w > load ? w : load;
        }
        queued_cycle_size(p, load);
        for (int a = 0; a < p->naggr; ++a) {
            uint64_t n = (p->bounds[a + 1] - p->bounds[a] + p->cycle_bytes - 1) / p->cycle_bytes;
            ncyc = n > ncyc ? n : ncyc;
        }
    } else {
        /* a group's aggregator stays one of its members (it gathers the
         * group's pieces); the node decides which one */
        if (!spread) {
            memcpy(p->aggr_rank, p->groups.aggr, (size_t) p->naggr * sizeof(int));
        } else if (0 != mca_common_sfio_place_groups(p->topo, p->groups.group_of, p->naggr,
                                                     p->groups.aggr, p->aggr_rank)) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        } else {
            memcpy(p->groups.aggr, p->aggr_rank, (size_t) p->naggr * sizeof(int));
        }
        uint64_t load = 0;
        for (int g = 0; g < p->naggr; ++g) {
            uint64_t b = group_bytes(p, g);
            load = b > load ? b : load;
        }
        queued_cycle_size(p, load);
        for (int g = 0; g < p->naggr; ++g) {
            uint64_t n = cycles_for(group_bytes(p, g), p->cycle_bytes);
            ncyc = n > ncyc ? n : ncyc;
        }
    }
    if (ncyc > (1u << 24) || (uint64_t) p->naggr * ncyc > (1u << 30)) {
        if (0 == p->rank) {         /* the same on every rank: one message */
            mca_common_sfio_show_help("fcoll-cycles", true, fh->f_filename ? fh->f_filename : "",
                                      (unsigned long long) ncyc,
                                      (unsigned long long) p->cycle_bytes);
        }
        return MPI_ERR_NO_MEM;
    }
    p->ncyc = (int) ncyc;
    p->my_aggr = -1;
    for (int a = 0; a < p->naggr; ++a) {
        if (p->aggr_rank[a] == p->rank) {
            p->my_aggr = a;
        }
    }
    return OMPI_SUCCESS;
}

/* Verbose 1 (rank 0): the aggregators as rank@node (at most 64 of them). */
static void report_placement(const plan_t *p)
{
    char line[1024];
    const char *emu = p->opt->emulate_nodes;
    int probe, nprobe;
    bool emulated = 1 == mca_common_sfio_place_emulate(emu, 1, &probe, &nprobe);
    bool spread = NULL != p->topo && MCA_COMMON_SFIO_PLACE_SPREAD == p->opt->placement;
    size_t used = (size_t) snprintf(line, sizeof(line), "placement %s (%d nodes%s%s):",
                                    spread ? "spread" : "rank",
                                    NULL != p->topo ? p->topo->nnodes : 0,
                                    emulated ? ", emulated " : "", emulated ? emu : "");
    for (int a = 0; a < p->naggr && a < 64 && used < sizeof(line); ++a) {
        if (NULL != p->topo) {
            used += (size_t) snprintf(line + used, sizeof(line) - used, " %d@%d",
                                      p->aggr_rank[a], p->topo->node[p->aggr_rank[a]]);
        } else {
            used += (size_t) snprintf(line + used, sizeof(line) - used, " %d", p->aggr_rank[a]);
        }
    }
    if (p->naggr > 64 && used < sizeof(line)) {
        (void) snprintf(line + used, sizeof(line) - used, " ...");
    }
    opal_output_verbose(1, p->opt->output, "fcoll:adaptive: aggregators (rank@node), %s", line);
}

static void plan_free(plan_t *p)
{
    free(p->mem.prefix);
    free(p->fiov);
    free(p->ranks);
    free(p->aggr_rank);
    free(p->bounds);
    free(p->cuts);
    free(p->pieces);
    free(p->first);
    free(p->rcnt);
    free(p->all);
    free(p->csend);
    free(p->cints);
    free(p->preq);
    free(p->cmine);
    free(p->call);
    for (int i = 0; i < 2; ++i) {
        free(p->slot[i].sbuf);
        free(p->slot[i].rbuf);
        free(p->slot[i].dbuf);
        free(p->slot[i].reqs);
        free(p->slot[i].areqs);
        free(p->slot[i].dreqs);
        free(p->slot[i].ubuf);
        free(p->slot[i].qruns);
    }
    free(p->ap);
    free(p->runs);
    free(p->order);
    mca_common_sfio_coll_groups_free(&p->groups);
}

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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* Verbose 2: marks when op entered its current state (first entry only). */
static void op_mark(op_t *op)
{
    if (opal_output_get_verbosity(op->p.opt->output) >= 2 && 0 == op->t[op->state]) {
        op->t[op->state] = now_s();
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
    double end = now_s();
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

static bool op_first_of_file(const op_t *op)
{
    for (const op_t *o = ops_head; NULL != o && o != op; o = o->next) {
        if (o->p.fh == op->p.fh) {
            return false;
        }
    }
    return true;
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
        p->lrc = assign_pieces(p);
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
    op->rc = counts_post(p);
    op->state = OMPI_SUCCESS == op->rc ? OP_COUNTS : OP_DONE;
}

/* The summaries are in: plan, and either finish (nothing to do, an early
 * failure, individual) or go on to the exchange. */
static void op_after_summary(op_t *op)
{
    plan_t *p = &op->p;
    int failed = 0;
    for (int q = 0; q < p->P; ++q) {
        failed |= 0 != p->all[5 * q + 4];
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
    op->rc = make_plan(p);
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
            report_placement(p);
        }
    }
    if (OMPI_SUCCESS != op->rc || 0 == p->sum.bytes) {
        op->state = OP_DONE;    /* the plan is identical everywhere: so is the failure */
        return;
    }
    if (!(mca_common_sfio_coll_algs[p->alg].flags & MCA_COMMON_SFIO_COLL_F_AGGREGATE)) {
        /* Each rank's own access, in this one step: its errors are its own
         * (as with stock fcoll/individual), so no closing agreement. */
        op->rc = run_individual(p);
        op->state = OP_DONE;
        return;
    }
    if (mca_common_sfio_coll_algs[p->alg].flags & MCA_COMMON_SFIO_COLL_F_CUTS) {
        p->lrc = cuts_post(p);
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
        int rc = start_cycle(p, &p->slot[0], 0);
        if (OMPI_SUCCESS != rc) {
            p->lrc = rc;
            p->fatal = 1;
        }
    }
}

static bool slot_drained(plan_t *p, slot_t *s, int *rc)
{
    /* each set is freed once complete; the order does not matter */
    bool a = NULL == s->areqs || reqs_done(s->areqs, &s->nareq, rc);
    bool b = NULL == s->reqs || reqs_done(s->reqs, &s->nreq, rc);
    bool d = NULL == s->dreqs || reqs_done(s->dreqs, &s->ndreq, rc);
    bool w = io_done(p, s);
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
    (void) io_done(p, &p->slot[0]);
    (void) io_done(p, &p->slot[1]);
    if (!p->fatal && p->cyc < p->ncyc) {
        slot_t *s = &p->slot[p->cyc % 2], *t = &p->slot[(p->cyc + 1) % 2];
        if (0 == p->cphase) {
            /* Cycle c - 1's queued write is done before c's is queued (one
             * write in flight: the aggregator's cycles keep their order)
             * and before the slot takes c + 1's messages. */
            if (!io_done(p, t)) {
                return 0;
            }
            if (p->cyc + 1 < p->ncyc) {
                if (!reqs_done(t->dreqs, &t->ndreq, &rc)) {
                    return 0;
                }
                if (OMPI_SUCCESS == rc) {
                    rc = start_cycle(p, t, p->cyc + 1);
                }
                if (OMPI_SUCCESS != rc) {
                    goto fatal;
                }
            }
            p->cphase = 1;
        }
        if (1 == p->cphase) {
            if (p->my_aggr >= 0) {
                if (!reqs_done(s->areqs, &s->nareq, &rc)) {
                    return 0;
                }
                if (OMPI_SUCCESS == rc && !p->rw) {
                    rc = write_aggregate(p, s, p->cyc);
                } else if (OMPI_SUCCESS == rc) {
                    /* The read may have been queued ahead (below); wait
                     * for it, answer, then queue the next cycle's read as
                     * soon as its headers are in, so the storage works
                     * while this cycle's replies travel. */
                    if (!s->rd_issued) {
                        rc = read_issue(p, s, p->cyc);
                    }
                    if (OMPI_SUCCESS == rc && !io_done(p, s)) {
                        return 0;
                    }
                    if (OMPI_SUCCESS == rc) {
                        rc = read_answer(p, s, p->cyc);
                    }
                    if (OMPI_SUCCESS == rc && p->async && p->cyc + 1 < p->ncyc &&
                        !t->rd_issued && reqs_done(t->areqs, &t->nareq, &rc) &&
                        OMPI_SUCCESS == rc) {
                        rc = read_issue(p, t, p->cyc + 1);
                    }
                }
                if (OMPI_SUCCESS != rc) {
                    goto fatal;
                }
            }
            p->cphase = 2;
        }
        if (!reqs_done(s->reqs, &s->nreq, &rc)) {
            return 0;
        }
        if (OMPI_SUCCESS != rc) {
            goto fatal;
        }
        if (p->rw) {
            scatter_cycle(p, s, p->cyc);
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
    bool c = reqs_done(p->creq, &p->ncreq, &rc);
    bool d = NULL == p->preq || reqs_done(p->preq, &p->npreq, &rc);
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
            if (!reqs_done(p->creq, &p->ncreq, &op->rc)) {
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
            if (!cuts_step(p, &rc)) {
                return false;
            }
            p->lrc = rc;
            op_start_counts(op);
            break;
        case OP_COUNTS:
            if (!reqs_done(p->creq, &p->ncreq, &op->rc)) {
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
            if (!reqs_done(p->creq, &p->ncreq, &op->rc)) {
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
    plan_free(&op->p);
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
                    struct ompi_datatype_t *datatype, int rw,
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
    if (OMPI_SUCCESS == lrc && 0 != mstream_init(&p->mem, op->miov, mcount)) {
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
    mca_ompio_request_t *req = NULL;
    if (NULL != p->all) {
        mca_common_ompio_request_alloc(&req, rw ? MCA_OMPIO_REQUEST_READ_ALL
                                                : MCA_OMPIO_REQUEST_WRITE_ALL);
    }
    if (NULL == req) {
        /* Cannot take part in the exchange at all. */
        free(op->miov);
        plan_free(p);
        free(op);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (NULL == p->ranks && OMPI_SUCCESS == lrc) {
        lrc = OMPI_ERR_OUT_OF_RESOURCE;
    }
    /* Any rank's failure is everyone's: it travels in the summary. */
    p->lrc = lrc;
    p->mine[0] = me.lo;
    p->mine[1] = me.hi;
    p->mine[2] = me.bytes;
    p->mine[3] = me.runs;
    p->mine[4] = OMPI_SUCCESS == lrc ? 0 : 1;

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
    if (op_first_of_file(op)) {
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
    int rc = op_start(fh, buf, count, datatype, 0, opt, &req);
    return OMPI_SUCCESS == rc ? mca_common_sfio_request_wait_free(&req, status) : rc;
}

int mca_common_sfio_fcoll_read_all(ompio_file_t *fh, void *buf, int count,
                                   struct ompi_datatype_t *datatype,
                                   ompi_status_public_t *status,
                                   const mca_common_sfio_fcoll_options_t *opt)
{
    ompi_request_t *req = NULL;
    int rc = op_start(fh, buf, count, datatype, 1, opt, &req);
    return OMPI_SUCCESS == rc ? mca_common_sfio_request_wait_free(&req, status) : rc;
}

int mca_common_sfio_fcoll_iwrite_all(ompio_file_t *fh, const void *buf, int count,
                                     struct ompi_datatype_t *datatype, ompi_request_t **request,
                                     const mca_common_sfio_fcoll_options_t *opt)
{
    if (fh->f_amode & MPI_MODE_RDONLY) {
        return MPI_ERR_READ_ONLY;
    }
    return op_start(fh, buf, count, datatype, 0, opt, request);
}

int mca_common_sfio_fcoll_iread_all(ompio_file_t *fh, void *buf, int count,
                                    struct ompi_datatype_t *datatype, ompi_request_t **request,
                                    const mca_common_sfio_fcoll_options_t *opt)
{
    return op_start(fh, buf, count, datatype, 1, opt, request);
}
