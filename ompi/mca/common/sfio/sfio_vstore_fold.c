/*
 * sfio_vstore_fold: published versions written into the flat file, at the
 * collective points (fold) and, when the logs or the versions pass their
 * bounds, between them (compaction).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <time.h>
#include <unistd.h>

#include "sfio_posixio.h"
#include "sfio_vstore.h"
#include "sfio_foldplan.h"
#include "sfio_vindex.h"
#include "sfio_lockplan.h"
#include "sfio_vstore_int.h"

/* The logged pieces of one fold domain, as segments for the window
 * planner (buf unused) with where each one's bytes sit. */
typedef struct {
    mca_common_sfio_ioseg_t *segs;
    int *rank;
    uint64_t *log_offset;
    size_t n, cap;
    uint64_t window;
} fold_pieces_t;

static int collect_piece(const mca_common_sfio_vpiece_t *p, void *ctx)
{
    fold_pieces_t *fp = ctx;
    if (p->rank < 0) {
        return 0;   /* already in the flat file */
    }
    /* pieces no longer than a window, so every window fits the buffer */
    for (uint64_t done = 0; done < p->length;) {
        uint64_t len = p->length - done < fp->window ? p->length - done : fp->window;
        if (fp->n == fp->cap) {
            size_t cap = fp->cap ? 2 * fp->cap : 256;
            void *a = realloc(fp->segs, cap * sizeof(*fp->segs));
            if (a) fp->segs = a;
            void *b = a ? realloc(fp->rank, cap * sizeof(*fp->rank)) : NULL;
            if (b) fp->rank = b;
            void *c = b ? realloc(fp->log_offset, cap * sizeof(*fp->log_offset)) : NULL;
            if (!c) {
                return -ENOMEM;
            }
            fp->log_offset = c;
            fp->cap = cap;
        }
        fp->segs[fp->n] = (mca_common_sfio_ioseg_t) { p->offset + done, len, NULL };
        fp->rank[fp->n] = p->rank;
        fp->log_offset[fp->n] = p->log_offset + done;
        fp->n++;
        done += len;
    }
    return 0;
}

/* Orders indices into a fold_pieces_t by owner, then by place in its log. */
static int by_owner_then_log_offset(const void *a, const void *b, void *ctx)
{
    size_t i = *(const size_t *) a, j = *(const size_t *) b;
    const fold_pieces_t *fp = ctx;
    if (fp->rank[i] != fp->rank[j]) {
        return fp->rank[i] < fp->rank[j] ? -1 : 1;
    }
    if (fp->log_offset[i] != fp->log_offset[j]) {
        return fp->log_offset[i] < fp->log_offset[j] ? -1 : 1;
    }
    return 0;
}

/* Bytes that records carry lie between record headers: a fold reads a
 * run of them as one span of the record log (at most this long) and
 * copies them out, rather than one request per piece. */
#define CARRIED_SPAN_MAX (4u << 20)

static int read_carried(int fd, const mca_common_sfio_ioseg_t *segs, size_t n)
{
    const uint64_t mark = MCA_COMMON_SFIO_RECORD_IN_RECLOG;
    char *span = NULL;
    size_t cap = 0;
    int rc = 0;
    for (size_t i = 0; 0 == rc && i < n;) {
        uint64_t lo = segs[i].offset & ~mark, hi = lo + segs[i].length;
        size_t j = i + 1;
        while (j < n && (segs[j].offset & ~mark) + segs[j].length - lo <= CARRIED_SPAN_MAX) {
            uint64_t end = (segs[j].offset & ~mark) + segs[j].length;
            hi = end > hi ? end : hi;
            j++;
        }
        if (hi - lo > cap) {
            free(span);
            cap = (size_t) (hi - lo);
            if (!(span = malloc(cap))) {
                rc = -ENOMEM;
                break;
            }
        }
        ssize_t got = mca_common_sfio_posix_pread_full(fd, span, (size_t) (hi - lo), (off_t) lo);
        if (got != (ssize_t) (hi - lo)) {
            rc = got < 0 ? (int) got : -EIO;
            break;
        }
        for (size_t k = i; k < j; ++k) {
            memcpy(segs[k].buf, span + ((segs[k].offset & ~mark) - lo), (size_t) segs[k].length);
        }
        i = j;
    }
    free(span);
    return rc;
}

/* Reads segs (offsets in one of rank's store files, ascending) from the
 * descriptor source_fd gives for the first. */
static int read_source(mca_common_sfio_vstore_t *s, int rank, const mca_common_sfio_ioseg_t *segs,
                       size_t n)
{
    uint64_t at = segs[0].offset, got = 0;
    int fd = sfio_vstore_source_fd(s, rank, &at);
    if (fd < 0) {
        return fd;
    }
    if (segs[0].offset & MCA_COMMON_SFIO_RECORD_IN_RECLOG) {
        return read_carried(fd, segs, n);
    }
    int rc = mca_common_sfio_posix_read_pieces(fd, segs, n, &got);
    if (0 == rc && got != mca_common_sfio_ioseg_total(segs, n)) {
        rc = -EIO;
    }
    return rc;
}

/* Fills segs (offset: in rank's log, ascending; buf: destination) with
 * their logged bytes: this rank's own from its log's copy while it lasts,
 * the rest with one vectored read of the log (pieces back to back in the
 * log fuse into one request; sfio_posixio may keep several in flight),
 * and bytes carried by records (their offsets marked, so last) in spans
 * of the record log.  Adds the bytes taken from the copy to *copied_p.
 * Returns 0, or a negative errno (-EIO: a published piece is not wholly
 * in its log). */
static int read_logged(mca_common_sfio_vstore_t *s, int rank, const mca_common_sfio_ioseg_t *segs,
                       size_t n, uint64_t *copied_p)
{
    size_t k = 0;
    if (rank == s->rank) {
        while (k < n && segs[k].offset >= s->logcopy_base &&
               segs[k].offset + segs[k].length <= s->logcopy_base + s->logcopy_len) {
            memcpy(segs[k].buf, s->logcopy + (segs[k].offset - s->logcopy_base),
                   (size_t) segs[k].length);
            *copied_p += segs[k].length;
            k++;
        }
    }
    size_t m = k;
    while (m < n && !(segs[m].offset & MCA_COMMON_SFIO_RECORD_IN_RECLOG)) {
        m++;
    }
    int rc = m > k ? read_source(s, rank, segs + k, m - k) : 0;
    if (0 == rc && n > m) {
        rc = read_source(s, rank, segs + m, n - m);
    }
    return rc;
}

/* The log reads of one fold window, as segments of the logs. */
typedef struct fold_reads_t {
    mca_common_sfio_ioseg_t *segs;   /* offset: in the log; buf: in the window */
    int *rank;
    size_t cap;
} fold_reads_t;

static int by_rank_then_log_offset(const void *a, const void *b, void *ctx)
{
    size_t i = *(const size_t *) a, j = *(const size_t *) b;
    const fold_reads_t *r = ctx;
    if (r->rank[i] != r->rank[j]) {
        return r->rank[i] < r->rank[j] ? -1 : 1;
    }
    if (r->segs[i].offset != r->segs[j].offset) {
        return r->segs[i].offset < r->segs[j].offset ? -1 : 1;
    }
    return 0;
}

/* Fills window w's buffer with its logged pieces, per log in log order
 * (the pieces one write logged lie back to back in its rank's log). */
static int fold_read_logs(mca_common_sfio_vstore_t *s, const fold_pieces_t *fp,
                          const mca_common_sfio_sieve_window_t *w, char *buf, fold_reads_t *rd)
{
    size_t n = w->count;
    if (n > rd->cap) {
        void *a = realloc(rd->segs, n * (sizeof(*rd->segs) + sizeof(size_t)));
        if (a) rd->segs = a;
        void *b = a ? realloc(rd->rank, n * sizeof(*rd->rank)) : NULL;
        if (!b) {
            return -ENOMEM;
        }
        rd->rank = b;
        rd->cap = n;
    }
    mca_common_sfio_ioseg_t *tmp = rd->segs;
    size_t *order = (size_t *) (rd->segs + n);
    for (size_t k = 0; k < n; ++k) {
        const mca_common_sfio_ioseg_t *g = &fp->segs[w->first + k];
        tmp[k] = (mca_common_sfio_ioseg_t) { fp->log_offset[w->first + k], g->length,
                                             buf + (g->offset - w->offset) };
        rd->rank[k] = fp->rank[w->first + k];
        order[k] = k;
    }
    qsort_r(order, n, sizeof(*order), by_rank_then_log_offset, rd);
    mca_common_sfio_ioseg_t *sorted = malloc(n * sizeof(*sorted));
    int *srank = malloc(n * sizeof(*srank));
    int rc = (sorted && srank) ? 0 : -ENOMEM;
    for (size_t k = 0; 0 == rc && k < n; ++k) {
        sorted[k] = tmp[order[k]];
        srank[k] = rd->rank[order[k]];
    }
    for (size_t k = 0; 0 == rc && k < n;) {
        size_t e = k + 1;
        while (e < n && srank[e] == srank[k]) {
            e++;
        }
        uint64_t copied = 0;
        rc = read_logged(s, srank[k], sorted + k, e - k, &copied);
        if (0 == rc) {
            s->stats.bytes_folded += mca_common_sfio_ioseg_total(sorted + k, e - k);
            s->stats.bytes_fold_cached += copied;
        }
        k = e;
    }
    free(sorted);
    free(srank);
    return rc;
}

/* Writes back the indexed versions in [dlo, dhi), whoever wrote their
 * bytes (the logs of one node are readable by every rank).  Logged pieces
 * closer than max_gap share one window; a window with holes is read from
 * the flat file first (no write of the group is in flight at a fold or a
 * compaction), so the file sees few large writes instead of one per
 * piece.  That read-modify-write is safe only while no other group has the file open: another collective
 * open of it (MPI_COMM_SELF handles of one file, say) may write the holes
 * between the read and the write back, and its bytes would be lost.  So
 * this rank holds its window lock while it checks for other groups'
 * stores and writes windows whole; with another group open, or where
 * other groups may hide (fold.hidden_groups), it writes the pieces
 * alone. */
static int fold_range(mca_common_sfio_vstore_t *s, uint64_t dlo, uint64_t dhi)
{
    const uint64_t win = s->fold.window;
    fold_pieces_t fp = { .window = win };
    int rc = mca_common_sfio_vindex_pieces(&s->index, dlo, dhi - dlo, collect_piece, &fp);
    uint64_t flat_size = 0;
    char *buf = (0 == rc && fp.n > 0) ? malloc(win) : NULL;
    if (0 == rc && fp.n > 0 && !buf) {
        rc = -ENOMEM;
    }
    const mca_common_sfio_sieve_policy_t policy = {
        .enabled = true, .max_gap = s->fold.max_gap, .max_window = win, .max_block = win
    };
    mca_common_sfio_sieve_window_t w;
    size_t pos = 0;
    fold_reads_t rd = { 0 };
    bool decided = false, locked = false, whole = false;
    mca_common_sfio_ioseg_t *pieces = NULL;
    size_t pieces_cap = 0;
    while (0 == rc && mca_common_sfio_sieve_next(fp.segs, fp.n, &pos, &policy, &w)) {
        if (w.sieve && !decided) {
            /* lock first: a group this scan misses waits for the lock */
            decided = true;
            locked = !s->fold.hidden_groups &&
                     0 == coord_lock_range(s->coord_fd, F_WRLCK, true, COORD_WINDOW_BYTE(s->rank), 1);
            whole = locked && !sfio_vstore_others_open(s);
            /* the size only now: a group that opened, wrote past the
             * end and closed before the check has grown the file, and
             * its bytes there must be read, not zeroed */
            struct stat st;
            if (whole && 0 != fstat(s->flat_fd, &st)) {
                rc = -errno;
                break;
            }
            flat_size = whole ? (uint64_t) st.st_size : 0;
        }
        if (w.sieve && !whole) {
            /* another group's bytes may lie in the holes: pieces only */
            if (w.count > pieces_cap) {
                void *a = realloc(pieces, w.count * sizeof(*pieces));
                if (!a) {
                    rc = -ENOMEM;
                    break;
                }
                pieces = a;
                pieces_cap = w.count;
            }
            for (size_t k = 0; k < w.count; ++k) {
                const mca_common_sfio_ioseg_t *g = &fp.segs[w.first + k];
                pieces[k] = (mca_common_sfio_ioseg_t) { g->offset, g->length,
                                                        buf + (g->offset - w.offset) };
            }
            rc = fold_read_logs(s, &fp, &w, buf, &rd);
            uint64_t done = 0;
            if (0 == rc) {
                rc = sfio_vstore_flat_write_segs(s, pieces, w.count, &done);
            }
            s->stats.fold_windows_split++;
            continue;
        }
        if (w.sieve) {
            /* holes between pieces: their bytes come from the flat file */
            uint64_t have = w.offset < flat_size ? flat_size - w.offset : 0;
            if (have > w.length) have = w.length;
            if (have && mca_common_sfio_posix_pread_full(s->flat_fd, buf, (size_t) have, w.offset)
                            != (ssize_t) have) {
                rc = -EIO;
                break;
            }
            memset(buf + have, 0, (size_t) (w.length - have));
        }
        if (0 == rc) {
            rc = fold_read_logs(s, &fp, &w, buf, &rd);
        }
        if (0 == rc) {
            ssize_t put = sfio_vstore_flat_pwrite(s, buf, (size_t) w.length, w.offset);
            rc = put == (ssize_t) w.length ? 0 : put < 0 ? (int) put : -EIO;
        }
    }
    if (locked) {
        (void) coord_lock_range(s->coord_fd, F_UNLCK, false, COORD_WINDOW_BYTE(s->rank), 1);
    }
    free(pieces);
    free(buf);
    free(rd.segs);
    free(rd.rank);
    free(fp.segs);
    free(fp.rank);
    free(fp.log_offset);
    return rc;
}

/* The indexed extent, from a window boundary on (none: false). */
static bool indexed_extent(const mca_common_sfio_vstore_t *s, uint64_t *lo_p, uint64_t *hi_p)
{
    if (UINT64_MAX == s->min_start || s->max_end <= s->min_start) {
        return false;
    }
    *lo_p = s->min_start - s->min_start % s->fold.window;
    *hi_p = s->max_end;
    return true;
}

/* This rank's domain of a fold: a contiguous, window-aligned share of the
 * indexed extent. */
static int fold_domain(mca_common_sfio_vstore_t *s)
{
    const uint64_t win = s->fold.window;
    uint64_t lo, hi;
    if (!indexed_extent(s, &lo, &hi)) {
        return 0;
    }
    uint64_t per = (hi - lo + (uint64_t) s->nranks - 1) / (uint64_t) s->nranks;
    per = (per + win - 1) / win * win;
    uint64_t dlo = lo + per * (uint64_t) s->rank;
    if (dlo >= hi) {
        return 0;
    }
    return fold_range(s, dlo, hi - dlo > per ? dlo + per : hi);
}

typedef struct fold_census_t {
    uint64_t pieces, bytes;
} fold_census_t;

static int count_logged(const mca_common_sfio_vpiece_t *p, void *ctx)
{
    fold_census_t *c = ctx;
    if (p->rank >= 0) {
        c->pieces++;
        c->bytes += p->length;
    }
    return 0;
}

/* Owner or domain write-back.  Every rank holds the same index here (all
 * caught up to the same P), so every rank reaches the same verdict without
 * a message.  Pieces of at least max_gap bytes on average gain little from
 * the domain's windows, while owner write-back reads nothing back (each
 * rank's pieces come from its own log, mostly its copy in memory).  The
 * census walks the index without allocating: in the domain case the
 * pieces are small and may be very many. */
static bool fold_by_owner(const mca_common_sfio_vstore_t *s)
{
    if (MCA_COMMON_SFIO_FOLD_BY_AUTO != s->fold.by) {
        return MCA_COMMON_SFIO_FOLD_BY_OWNER == s->fold.by;
    }
    fold_census_t c = { 0 };
    if (UINT64_MAX == s->min_start || s->max_end <= s->min_start ||
        0 != mca_common_sfio_vindex_pieces(&s->index, s->min_start, s->max_end - s->min_start,
                                           count_logged, &c) ||
        0 == c.pieces) {
        return false;
    }
    return c.bytes / c.pieces >= s->fold.max_gap;
}

/* Writes back, as the pieces are (no window, no read of the flat file:
 * another rank may be writing the bytes between), the pieces sfio_foldplan
 * gives this rank: mostly pieces it won, written from its log's copy in
 * memory, and, when some rank won far more than others, a share of that
 * rank's pieces, read from its log. */
static int fold_owner(mca_common_sfio_vstore_t *s)
{
    const uint64_t win = s->fold.window;
    if (UINT64_MAX == s->min_start || s->max_end <= s->min_start) {
        return 0;
    }
    fold_pieces_t fp = { .window = win };
    int rc = mca_common_sfio_vindex_pieces(&s->index, s->min_start, s->max_end - s->min_start,
                                           collect_piece, &fp);
    int *writer = 0 == rc ? malloc((fp.n ? fp.n : 1) * sizeof(*writer)) : NULL;
    uint64_t *length = writer ? malloc((fp.n ? fp.n : 1) * sizeof(*length)) : NULL;
    if (0 == rc && !length) {
        rc = -ENOMEM;
    }
    for (size_t i = 0; 0 == rc && i < fp.n; ++i) {
        length[i] = fp.segs[i].length;
    }
    if (0 == rc) {
        rc = mca_common_sfio_foldplan_balance(fp.rank, length, fp.n, s->nranks, writer, NULL);
    }
    /* keep this rank's pieces only, in file order */
    size_t m = 0;
    for (size_t i = 0; 0 == rc && i < fp.n; ++i) {
        if (writer[i] == s->rank) {
            fp.segs[m] = fp.segs[i];
            fp.rank[m] = fp.rank[i];
            fp.log_offset[m] = fp.log_offset[i];
            m++;
        }
    }
    free(writer);
    free(length);
    /* The copied pieces go in one vectored write and the others a window
     * at a time, each log's in log order (a write's pieces lie back to
     * back in its log, so they fuse into few reads): the pieces are
     * disjoint, so the order of their writes does not matter, and
     * interleaving the two kinds in file order would make many small
     * calls that are not kept in flight together. */
    size_t *order = 0 == rc ? malloc((m ? m : 1) * sizeof(*order)) : NULL;
    mca_common_sfio_ioseg_t *out = order ? malloc((m ? m : 1) * sizeof(*out)) : NULL;
    mca_common_sfio_ioseg_t *reads = out ? malloc((m ? m : 1) * sizeof(*reads)) : NULL;
    if (0 == rc && !reads) {
        rc = -ENOMEM;
    }
    size_t ncopied = 0;
    for (size_t i = 0; 0 == rc && i < m; ++i) {
        if (fp.rank[i] == s->rank && fp.log_offset[i] >= s->logcopy_base &&
            fp.log_offset[i] + fp.segs[i].length <= s->logcopy_base + s->logcopy_len) {
            out[ncopied] = fp.segs[i];
            out[ncopied].buf = s->logcopy + (fp.log_offset[i] - s->logcopy_base);
            ncopied++;
        } else {
            order[i - ncopied] = i;
        }
    }
    if (0 == rc && ncopied > 0) {
        uint64_t done = 0;
        rc = sfio_vstore_flat_write_pieces(s, out, ncopied, &done);
        s->stats.bytes_fold_cached += done;
        s->stats.bytes_folded += done;
    }
    size_t nread = m - ncopied;
    if (0 == rc && nread > 1) {
        qsort_r(order, nread, sizeof(*order), by_owner_then_log_offset, &fp);
    }
    char *buf = NULL;
    for (size_t k = 0; 0 == rc && k < nread;) {
        if (!buf && !(buf = malloc(win))) {
            rc = -ENOMEM;
            break;
        }
        /* a window's worth of pieces, read per log, then written */
        size_t e = k;
        uint64_t fill = 0;
        while (e < nread && fill + fp.segs[order[e]].length <= win) {
            size_t i = order[e];
            out[e - k] = fp.segs[i];
            out[e - k].buf = buf + fill;
            reads[e - k] = (mca_common_sfio_ioseg_t) { fp.log_offset[i], fp.segs[i].length,
                                                       buf + fill };
            fill += fp.segs[i].length;
            e++;
        }
        for (size_t a = k; 0 == rc && a < e;) {
            size_t b = a;   /* a run of the same log */
            while (b < e && fp.rank[order[b]] == fp.rank[order[a]]) {
                b++;
            }
            uint64_t copied = 0;
            rc = read_logged(s, fp.rank[order[a]], reads + (a - k), b - a, &copied);
            s->stats.bytes_fold_cached += copied;
            a = b;
        }
        uint64_t done = 0;
        if (0 == rc) {
            rc = sfio_vstore_flat_write_pieces(s, out, e - k, &done);
        }
        s->stats.bytes_folded += done;
        k = e;
    }
    free(buf);
    free(order);
    free(out);
    free(reads);
    free(fp.segs);
    free(fp.rank);
    free(fp.log_offset);
    return rc;
}

/* ------------------------------------------------------------------ */
/* the records at a fold: gathered over the group                      */
/* ------------------------------------------------------------------ */

/* Where other ranks' record files are read over the network, a fold (every
 * rank in the collective, every record written) gathers the records with
 * one allgatherv instead: no rank opens n-1 files.  A rank's gather buffer
 * is kept between folds and never exceeds this; past it, or where a rank
 * could not grow its buffer, every rank reads the files as between folds. */
#define FOLD_GATHER_MAX ((uint64_t) 16 << 20)
#define FOLD_GATHER_MIN ((uint64_t) 256 << 10)

/* This rank's records, [0, rec_tail): only whole ones (a failed append
 * never moves rec_tail).  NULL when there are none or too many to gather. */
static int read_own_records(mca_common_sfio_vstore_t *s, char **buf_p)
{
    *buf_p = NULL;
    if (0 == s->rec_tail || s->rec_fd < 0 || s->rec_tail > FOLD_GATHER_MAX) {
        return 0;
    }
    char *buf = malloc((size_t) s->rec_tail);
    if (!buf) {
        return 0;   /* this rank's facts will say it cannot take part */
    }
    ssize_t got = mca_common_sfio_posix_pread_full(s->rec_fd, buf, (size_t) s->rec_tail, 0);
    if (got != (ssize_t) s->rec_tail) {
        free(buf);
        return got < 0 ? (int) got : -EIO;
    }
    *buf_p = buf;
    return 0;
}

/* One allgather of the ranks' facts, in place of the fold's first
 * agreement: the verdict (the worst errno wins), and whether the records
 * fit everybody's gather buffer (then *gather_p).  Each rank grows its
 * buffer beforehand to a guess of the group's records: at least
 * FOLD_GATHER_MIN, the last fold's total, twice its own times the ranks,
 * at most FOLD_GATHER_MAX.  A rank that cannot, or could not read its own
 * records (have_mine false), says so and nobody gathers. */
static int gather_facts(mca_common_sfio_vstore_t *s, int rc, bool have_mine, bool *gather_p)
{
    const mca_common_sfio_coll_t *c = &s->coll;
    uint64_t mine = 0 == rc && s->coord ? s->rec_tail : 0;
    uint64_t want = 2 * mine * (uint64_t) s->nranks;
    want = want > s->recgather_last ? want : s->recgather_last;
    want = want > FOLD_GATHER_MIN ? want : FOLD_GATHER_MIN;
    want = want > FOLD_GATHER_MAX ? FOLD_GATHER_MAX : want;
    if (want > s->recgather_cap) {
        char *b = realloc(s->recgather, (size_t) want);
        if (b) {
            s->recgather = b;
            s->recgather_cap = (size_t) want;
        }
    }
    sfio_fold_facts_t me = {
        .err = rc, .rec_bytes = mine,
        .capacity = mine > 0 && !have_mine ? 0 : s->recgather_cap,
    };
    if (0 != c->allgather(c->ctx, &me, s->fold_facts, (int) sizeof(me))) {
        return -EIO;
    }
    uint64_t total = 0, room = UINT64_MAX;
    rc = 0;
    for (int r = 0; r < s->nranks; ++r) {
        const sfio_fold_facts_t *f = &s->fold_facts[r];
        if (f->err < rc) {
            rc = (int) f->err;
        }
        total += f->rec_bytes;
        room = f->capacity < room ? f->capacity : room;
    }
    *gather_p = 0 == rc && total > 0 && total <= room && total <= FOLD_GATHER_MAX;
    s->recgather_last = total;
    return rc;
}

/* The allgatherv of the records (*gather_p said so), then the catch-up
 * from them. */
static int catch_up_gathered(mca_common_sfio_vstore_t *s, const sfio_vshared_marks_t *m,
                             char *mine)
{
    const mca_common_sfio_coll_t *c = &s->coll;
    char **at = malloc((size_t) s->nranks * sizeof(*at));
    uint64_t *len = malloc((size_t) s->nranks * sizeof(*len));
    int off = 0;
    for (int r = 0; r < s->nranks; ++r) {
        s->fold_counts[r] = (int) s->fold_facts[r].rec_bytes;
        s->fold_displs[r] = off;
        off += s->fold_counts[r];
    }
    /* every rank takes part even without memory for its pointers */
    int rc = c->allgatherv(c->ctx, mine, s->fold_counts[s->rank], s->recgather, s->fold_counts,
                           s->fold_displs);
    if (0 != rc) {
        rc = -EIO;
    } else if (!at || !len) {
        rc = -ENOMEM;
    } else {
        for (int r = 0; r < s->nranks; ++r) {
            at[r] = s->recgather + s->fold_displs[r];
            len[r] = s->fold_facts[r].rec_bytes;
        }
        rc = sfio_vstore_catch_up_with(s, m, at, len);
        s->stats.folds_gathered++;
    }
    free(at);
    free(len);
    return rc;
}

int mca_common_sfio_vstore_flush_flat(mca_common_sfio_vstore_t *s)
{
    return s->caching_clients && 0 != fdatasync(s->flat_fd) ? -errno : 0;
}

int mca_common_sfio_vstore_revalidate_flat(mca_common_sfio_vstore_t *s)
{
    if (!s->caching_clients) {
        return 0;
    }
    int rc = mca_common_sfio_posix_revalidate(s->flat_fd);
    if (0 == rc) {
        s->stats.flat_revalidations++;
    }
    return rc;
}

int mca_common_sfio_vstore_fold(mca_common_sfio_vstore_t *s, bool durable, bool synced)
{
    return sfio_vstore_fold_at(s, durable, synced, false);
}

int sfio_vstore_fold_at(mca_common_sfio_vstore_t *s, bool durable, bool synced, bool closing)
{
    const mca_common_sfio_coll_t *c = &s->coll;
    int rc;

    /* After a barrier every write of the group has returned, so every
     * version is published and all ranks see the same P and F.  Here the
     * barrier is an allreduce that also tells whether any rank has the
     * store mapped: a store is made only by a rank that maps it, so when
     * none has, no version exists and there is nothing to fold (the
     * files' truncation at open, MPI_File_set_size(fh, 0), costs one
     * collective). */
    if (!synced) {
        int any = sfio_vstore_touched(s);
        if (0 != c->allreduce_max_int(c->ctx, &any)) {
            return -EIO;
        }
        if (!any) {
            return durable ? sfio_vstore_agree(c, 0 != fsync(s->flat_fd) ? -errno : 0) : 0;
        }
    }
    pthread_mutex_lock(&s->lock);
    /* A rank that never made an atomic access maps the store now if the
     * group made one: every making of it finished before the barrier, so
     * every rank finds the same, and attaches or not with the others.
     * One agreement covers the attach and the marks. */
    rc = s->coord ? 0 : sfio_vstore_attach(s, false);
    rc = -ENOENT == rc ? 0 : rc;
    sfio_vshared_marks_t m = { 0 };
    char *mine = NULL;
    if (0 == rc && s->coord) {
        s->fresh_floor = UINT64_MAX;   /* until this collective point completes */
        rc = s->shared->marks(s, &m);
        if (0 == rc && s->shared->records_remote) {
            rc = read_own_records(s, &mine);
        }
    }
    bool gather = false;
    rc = s->shared->records_remote ? gather_facts(s, rc, NULL != mine, &gather)
                                   : sfio_vstore_agree(c, rc);
    if (0 != rc || !s->coord) {
        free(mine);
        pthread_mutex_unlock(&s->lock);
        if (0 != rc || !durable) {
            return rc;
        }
        return sfio_vstore_agree(c, 0 != fsync(s->flat_fd) ? -errno : 0);
    }
    uint64_t P = m.published, F = m.folded;
    if (P == F) {
        free(mine);
        sfio_vstore_refresh_fresh_floor(s);
        pthread_mutex_unlock(&s->lock);
        if (!durable) {
            return 0;   /* the same verdict on every rank: nothing to do */
        }
        rc = 0 != fsync(s->flat_fd) ? -errno : 0;
        return sfio_vstore_agree(c, rc);
    }
    rc = gather ? catch_up_gathered(s, &m, mine) : sfio_vstore_catch_up_with(s, &m, NULL, NULL);
    free(mine);
    if (0 == rc) {
        if (fold_by_owner(s)) {
            rc = fold_owner(s);
            s->stats.folds_by_owner++;
        } else {
            rc = fold_domain(s);
        }
        s->stats.folds++;
    }
    if (0 == rc) {
        rc = durable ? (0 != fsync(s->flat_fd) ? -errno : 0) : mca_common_sfio_vstore_flush_flat(s);
    }
    rc = sfio_vstore_agree(c, rc);
    if (0 == rc) {
        /* Everything <= P is in the flat file: the logs may go. */
        int frc = 0 == s->rank ? s->shared->set_folded(s, P) : 0;
        if (0 != c->barrier(c->ctx)) {
            rc = -EIO;
        }
        if (0 != frc) {
            rc = frc;   /* the others learn it at the next agreement */
        }
    }
    if (closing) {
        /* The store goes: close unlinks the logs, nothing reads them again. */
        pthread_mutex_unlock(&s->lock);
        return rc;
    }
    if (0 == rc) {
        if (s->log_fd >= 0 && (0 != ftruncate(s->log_fd, 0) || 0 != ftruncate(s->rec_fd, 0))) {
            rc = -errno;
        }
        s->log_tail = s->rec_tail = s->rec_room_to = 0;
        sfio_vstore_logcopy_reset(s, 0);
        int src = s->shared->records_end(s);
        if (0 == src) src = s->shared->set_heads(s, s->rank, 0, 0);
        if (0 == rc) rc = src;
        memset(s->rec_cursor, 0, (size_t) s->nranks * sizeof(uint64_t));
        sfio_vstore_drop_readers(s);
        s->folded_seen = P;
        s->folded_known = true;
        s->log_head_seen = s->rec_head_seen = 0;
        mca_common_sfio_vindex_clear(&s->index);
        s->max_end = 0;
        s->min_start = UINT64_MAX;
        s->seen = P;
        if (0 == rc) {
            rc = mca_common_sfio_vstore_revalidate_flat(s);   /* every write-back was flushed */
        }
        rc = sfio_vstore_agree(c, rc);   /* nobody reads a stale tail after this */
        sfio_vstore_refresh_fresh_floor(s);   /* after every rank's write-back */
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* ------------------------------------------------------------------ */
/* bounds: compaction between collective points                       */
/* ------------------------------------------------------------------ */

/* Data-path calls and compaction exclude each other through the shared
 * state's gate (sfio_vshared_ops_t): a compaction waits until no rank is
 * in a data-path call, and no rank enters while one runs. */

int sfio_vstore_gate_enter(mca_common_sfio_vstore_t *s)
{
    return s->shared->gate_enter(s);
}

int sfio_vstore_gate_enter_take(mca_common_sfio_vstore_t *s)
{
    uint64_t v = 0;
    int rc = NULL == s->shared->gate_enter_take ? -ENOTSUP : s->shared->gate_enter_take(s, &v);
    if (-ENOTSUP == rc) {
        return sfio_vstore_gate_enter(s);
    }
    if (0 == rc && v > s->taken_last) {
        s->taken_last = v;
    }
    s->taken_early = 0 == rc ? v : 0;
    return rc;
}

void sfio_vstore_gate_leave(mca_common_sfio_vstore_t *s)
{
    if (s->coord) {
        s->shared->gate_leave(s);
    }
}

bool sfio_vstore_over_bounds(const mca_common_sfio_vstore_t *s)
{
    /* as of this rank's last catch-up, or its last version (every lower
     * one was taken, published or not): no round trip to the service */
    uint64_t live_log = s->log_tail - s->log_head_seen +
                        (s->rec_tail > s->rec_head_seen ? s->rec_tail - s->rec_head_seen : 0);
    uint64_t newest = s->taken_last > s->seen ? s->taken_last : s->seen;
    uint64_t waiting = newest > s->folded_seen ? newest - s->folded_seen : 0;
    return (s->max_log && live_log > s->max_log) || (s->max_versions && waiting > s->max_versions);
}

/* Where rank r's records and data of versions <= P end: *rec_p after the
 * last such record (a FRESH note of an unfinished write ends it early:
 * recovery still needs it), *log_p after the last such record's data. */
static int folded_prefix(mca_common_sfio_vstore_t *s, int r, uint64_t P, uint64_t *rec_p,
                         uint64_t *log_p)
{
    uint64_t head = 0, tail = 0;
    bool exact = true;
    int rc = s->shared->heads(s, r, &head, log_p);
    *rec_p = head;
    if (0 == rc) rc = s->shared->records_tail(s, r, -1, &tail, &exact);
    if (0 != rc && -EAGAIN != rc) {
        return rc;
    }
    if (0 == rc && tail <= head) {
        return 0;
    }
    int fd = r == s->rank ? s->rec_fd : sfio_vstore_open_in_store(s, "rec", r, O_RDONLY);
    if (-ENOENT == fd && -EAGAIN == rc) {
        return 0;   /* the rank has written no record */
    }
    if (fd < 0) {
        return fd;
    }
    if (-EAGAIN == rc) {
        rc = s->shared->records_tail(s, r, fd, &tail, &exact);
    }
    if (0 != rc || tail <= head) {
        if (r != s->rank) close(fd);
        return rc;
    }
    size_t len = (size_t) (tail - head);
    char *buf = malloc(len);
    ssize_t got = buf ? mca_common_sfio_posix_pread_full(fd, buf, len, (off_t) head) : -ENOMEM;
    if (r != s->rank) close(fd);
    rc = got == (ssize_t) len ? 0 : got < 0 ? (int) got : -EIO;
    for (size_t pos = 0; 0 == rc && pos < len;) {
        mca_common_sfio_record_t rec;
        if (0 != mca_common_sfio_record_decode(buf + pos, len - pos, &rec)) {
            rc = exact ? -EIO : 0;   /* past the file's whole records: a torn append */
            break;
        }
        if (MCA_COMMON_SFIO_RECORD_FRESH == rec.kind) {
            mca_common_sfio_record_t next;
            size_t at = pos + rec.size;
            if (at >= len || 0 != mca_common_sfio_record_decode(buf + at, len - at, &next) ||
                0 == next.version || next.version > P) {
                break;
            }
        } else if (rec.version > P) {
            break;
        } else if ((MCA_COMMON_SFIO_RECORD_WRITE == rec.kind && !rec.data) ||
                   MCA_COMMON_SFIO_RECORD_PLACE == rec.kind) {
            uint64_t end = rec.log_offset + rec.data_bytes;   /* carried bytes: not in the log */
            if (end > *log_p) *log_p = end;
        }
        pos += rec.size;
        *rec_p = head + pos;
    }
    free(buf);
    return rc;
}

/* Frees the disk blocks of [0, end) of a store file (the offsets stay:
 * other ranks' cursors and index entries keep their meaning). */
static void punch(mca_common_sfio_vstore_t *s, const char *kind, int r, uint64_t end)
{
    if (0 == end) {
        return;
    }
    int fd = sfio_vstore_open_in_store(s, kind, r, O_RDWR);
    if (fd >= 0) {
        (void) fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t) end);
        close(fd);
    }
}

/* Writes every published version into the flat file and releases the
 * records and log bytes behind them, while no rank of the group is in a
 * data-path call: the store stays bounded between collective points.
 * Caller holds s->lock and no gate. */
int sfio_vstore_compact(mca_common_sfio_vstore_t *s)
{
    int rc = s->shared->compaction_begin(s);
    if (0 != rc) {
        return rc;
    }
    rc = sfio_vstore_catch_up(s);
    if (0 == rc && !sfio_vstore_over_bounds(s)) {
        s->shared->compaction_end(s);
        return 0;   /* another rank compacted while this one waited */
    }
    uint64_t P = s->seen;
    uint64_t lo, hi;
    if (0 == rc && indexed_extent(s, &lo, &hi)) {
        /* the whole extent, in windows as a fold's domain (the others
         * wait outside their data-path calls) */
        rc = fold_range(s, lo, hi);
        if (0 == rc) rc = mca_common_sfio_vstore_flush_flat(s);   /* before others learn of it */
    }
    uint64_t *rec_end = calloc((size_t) s->nranks, sizeof(uint64_t));
    uint64_t *log_end = calloc((size_t) s->nranks, sizeof(uint64_t));
    if (0 == rc && (!rec_end || !log_end)) {
        rc = -ENOMEM;
    }
    for (int r = 0; 0 == rc && r < s->nranks; ++r) {
        rc = folded_prefix(s, r, P, &rec_end[r], &log_end[r]);
    }
    if (0 == rc) {
        /* Everything <= P is in the flat file. */
        rc = s->shared->set_folded(s, P);
        for (int r = 0; 0 == rc && r < s->nranks; ++r) {
            rc = s->shared->set_heads(s, r, rec_end[r], log_end[r]);
        }
        if (0 == rc) {
            rc = s->shared->count_compaction(s);
        }
    }
    if (0 == rc) {
        for (int r = 0; r < s->nranks; ++r) {
            punch(s, "rec", r, rec_end[r]);
            punch(s, "log", r, log_end[r]);
        }
        s->stats.compactions++;
        (void) sfio_vstore_catch_up(s);   /* this rank's index starts over too */
    }
    free(rec_end);
    free(log_end);
    s->shared->compaction_end(s);
    return rc;
}
