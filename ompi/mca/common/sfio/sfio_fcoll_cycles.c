/*
 * sfio_fcoll_cycles: the cycles of an aggregating call (messages, the
 * aggregator's union and file I/O, the read answers) and the individual
 * path.  Every function posts or tests and returns: the state machine in
 * sfio_fcoll.c calls them from OMPIO's progress function.
 */
#include "sfio_fcoll_int.h"


int sfio_fcoll_mstream_init(mstream_t *m, struct iovec *iov, uint32_t n)
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
/* True once every request of the set completed; then frees them and keeps
 * the first error in *rc.  Never calls opal_progress: it runs inside
 * OMPIO's progress function. */
bool sfio_fcoll_reqs_done(ompi_request_t **reqs, int *n, int *rc)
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
int sfio_fcoll_start_cycle(plan_t *p, slot_t *s, int c)
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
static ssize_t fbtl_call(plan_t *p, int rw, mca_common_ompio_io_array_t *io, int n,
                         bool collective_op)
{
    ompio_file_t *fh = p->fh;
    double t0 = sfio_fcoll_now_s();
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
    p->io_seconds += sfio_fcoll_now_s() - t0;
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
    s->io_t0 = sfio_fcoll_now_s();
    return true;
}

/* A read of runs returned got bytes: note where it met the end of file. */
static void read_met_eof(plan_t *p, const mca_common_sfio_coll_piece_t *runs, size_t n,
                         uint64_t got)
{
    uint64_t at = mca_common_sfio_coll_read_stop(runs, n, got);
    p->eof_at = at < p->eof_at ? at : p->eof_at;
}

/* True when the file's fbtl is Open MPI's fbtl/posix (known by name: it
 * is not ours). */
static bool fbtl_is_posix(const ompio_file_t *fh)
{
    return NULL != fh->f_fbtl_component &&
           0 == strcmp(fh->f_fbtl_component->mca_component_name, "posix");
}

/* True when the file's fbtl is the engine's (fbtl/versioned). */
static bool fbtl_is_engine(const ompio_file_t *fh)
{
    return NULL != fh->f_fbtl && mca_common_sfio_fbtl_progress == fh->f_fbtl->fbtl_progress;
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
    if (!fbtl_is_posix(fh) || fh->fd < 0 || s->io_hi <= s->io_lo) {
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
bool sfio_fcoll_io_done(plan_t *p, slot_t *s)
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
    p->io_seconds += sfio_fcoll_now_s() - s->io_t0;
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
int sfio_fcoll_write_aggregate(plan_t *p, slot_t *s, int c)
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
    if (fbtl_is_engine(fh)) {
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
int sfio_fcoll_read_issue(plan_t *p, slot_t *s, int c)
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
int sfio_fcoll_read_answer(plan_t *p, slot_t *s, int c)
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
void sfio_fcoll_scatter_cycle(plan_t *p, slot_t *s, int c)
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

int sfio_fcoll_run_individual(plan_t *p)
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
