/*
 * sfio_vstore: versioned store of one open file (see header for the
 * design).  Invariants kept here:
 *  - a record is appended only after its data is in the log, and a rank's
 *    record tail is advanced only after the record is written, and before
 *    the version is published: a reader or recovery that sees a published
 *    version within a rank's tail finds its whole record and data;
 *  - a rank's records are in ascending version order (store->lock spans
 *    append, version claim, record and publish);
 *  - versions <= coord->folded are in the flat file; their records may be
 *    gone.
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

/* ------------------------------------------------------------------ */
/* small helpers                                                      */
/* ------------------------------------------------------------------ */


int sfio_vstore_coord_lock(int fd, short type, bool wait)
{
    return mca_common_sfio_ofd_lock(fd, type, wait, SFIO_LIVE_BYTE, 1);
}

/* Marks the start and end of this rank's writes to the flat file, so
 * that recovery can tell the group's own modifications (an mtime no
 * newer than the end of its last write, or one in flight at a crash)
 * from anybody else's.  Clock reads only: the file's mtime comes from the
 * kernel's coarse clock, never ahead of the end taken after the write. */
void sfio_vstore_flat_begin(mca_common_sfio_vstore_t *s)
{
    if (s->coord) {
        s->shared->flat_mark(s, true, sfio_now_ns());
    }
}

void sfio_vstore_flat_end(mca_common_sfio_vstore_t *s)
{
    if (s->coord) {
        s->shared->flat_mark(s, false, sfio_now_ns());
    }
}

/* Written bytes of the flat file, bracketed by flat_begin/end. */
static int flat_write(mca_common_sfio_vstore_t *s, const mca_common_sfio_ioseg_t *segs, size_t n,
                      uint64_t *done_p,
                      int (*write)(int, const mca_common_sfio_ioseg_t *, size_t, uint64_t *))
{
    sfio_vstore_flat_begin(s);
    int rc = write(s->flat_fd, segs, n, done_p);
    sfio_vstore_flat_end(s);
    return rc;
}

int sfio_vstore_flat_write_segs(mca_common_sfio_vstore_t *s, const mca_common_sfio_ioseg_t *segs,
                           size_t n, uint64_t *done_p)
{
    return flat_write(s, segs, n, done_p, mca_common_sfio_posix_write_segs);
}

int sfio_vstore_flat_write_pieces(mca_common_sfio_vstore_t *s, const mca_common_sfio_ioseg_t *segs,
                                  size_t n, uint64_t *done_p)
{
    return flat_write(s, segs, n, done_p, mca_common_sfio_posix_write_pieces);
}

ssize_t sfio_vstore_flat_pwrite(mca_common_sfio_vstore_t *s, const void *buf, size_t n, uint64_t off)
{
    sfio_vstore_flat_begin(s);
    ssize_t put = mca_common_sfio_posix_pwrite_full(s->flat_fd, buf, n, off);
    sfio_vstore_flat_end(s);
    return put;
}

int sfio_vstore_recbuf_reserve(mca_common_sfio_vstore_t *s, size_t n)
{
    if (s->recbuf_size >= n) {
        return 0;
    }
    char *b = realloc(s->recbuf, n);
    if (!b) {
        return -ENOMEM;
    }
    s->recbuf = b;
    s->recbuf_size = n;
    return 0;
}

/* Closes the cached descriptors of other ranks' logs and record files
 * (reopened on use). */
void sfio_vstore_drop_readers(mca_common_sfio_vstore_t *s)
{
    for (int r = 0; r < s->nranks; ++r) {
        if (s->log_fds && s->log_fds[r] >= 0 && s->log_fds[r] != s->log_fd) {
            close(s->log_fds[r]);
            s->log_fds[r] = -1;
        }
        if (s->rec_fds && s->rec_fds[r] >= 0) {
            close(s->rec_fds[r]);
            s->rec_fds[r] = -1;
        }
    }
}

/* Every store of this process, so that a store out of descriptors can
 * take back the ones other stores keep cached for reading. */
static pthread_mutex_t stores_lock = PTHREAD_MUTEX_INITIALIZER;
static mca_common_sfio_vstore_t **stores;
static size_t nstores, stores_cap;

void sfio_vstore_stores_add(mca_common_sfio_vstore_t *s)
{
    pthread_mutex_lock(&stores_lock);
    if (nstores == stores_cap) {
        size_t cap = stores_cap ? 2 * stores_cap : 16;
        void *n = realloc(stores, cap * sizeof(*stores));
        if (n) {
            stores = n;
            stores_cap = cap;
        }
    }
    if (nstores < stores_cap) {
        stores[nstores++] = s;
    }
    pthread_mutex_unlock(&stores_lock);
}

void sfio_vstore_stores_remove(mca_common_sfio_vstore_t *s)
{
    pthread_mutex_lock(&stores_lock);
    for (size_t i = 0; i < nstores; ++i) {
        if (stores[i] == s) {
            stores[i] = stores[--nstores];
            break;
        }
    }
    pthread_mutex_unlock(&stores_lock);
}

/* Out of descriptors: s's cached readers, and those of every other store
 * not busy right now (never waited for: no lock order to keep). */
static void drop_all_reader_fds(mca_common_sfio_vstore_t *s)
{
    /* under stores_lock: a catch-up's readers may run out together */
    pthread_mutex_lock(&stores_lock);
    sfio_vstore_drop_readers(s);
    for (size_t i = 0; i < nstores; ++i) {
        if (stores[i] != s && 0 == pthread_mutex_trylock(&stores[i]->lock)) {
            sfio_vstore_drop_readers(stores[i]);
            pthread_mutex_unlock(&stores[i]->lock);
        }
    }
    pthread_mutex_unlock(&stores_lock);
}

/* A store file of this rank's group, opened without following symlinks
 * and only when it is this user's; out of descriptors, the cached
 * readers' are given back once first. */
int sfio_vstore_open_in_store(mca_common_sfio_vstore_t *s, const char *kind, int rank, int flags)
{
    char *p = rank_file(s->dir, kind, rank);
    if (!p) {
        return -ENOMEM;
    }
    /* The directory is this user's and private (checked when it was
     * mapped), so only the group made files in it: O_NOFOLLOW suffices,
     * without the fstat of a foreign store (a round trip on network
     * storage). */
    int fd = open(p, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && (EMFILE == errno || ENFILE == errno)) {
        drop_all_reader_fds(s);
        fd = open(p, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
    }
    int rc = fd >= 0 ? fd : -errno;
    free(p);
    return rc;
}

/* rank's file of kind ("log", "rec"), kept open in fds[rank] once opened
 * for reading (sfio_vstore_drop_readers closes them). */
static int reader_fd(mca_common_sfio_vstore_t *s, int *fds, const char *kind, int rank)
{
    if (fds[rank] < 0) {
        int fd = sfio_vstore_open_in_store(s, kind, rank, O_RDONLY);
        if (fd < 0) {
            return fd;
        }
        fds[rank] = fd;
    }
    return fds[rank];
}

int sfio_vstore_log_fd_of(mca_common_sfio_vstore_t *s, int rank)
{
    return reader_fd(s, s->log_fds, "log", rank);
}

int sfio_vstore_source_fd(mca_common_sfio_vstore_t *s, int rank, uint64_t *offset)
{
    if (*offset & MCA_COMMON_SFIO_RECORD_IN_RECLOG) {
        *offset &= ~MCA_COMMON_SFIO_RECORD_IN_RECLOG;
        /* its own through the descriptor it writes with, as its log: where
         * clients cache, another descriptor may hold an older size */
        return rank == s->rank && s->rec_fd >= 0 ? s->rec_fd : reader_fd(s, s->rec_fds, "rec", rank);
    }
    return sfio_vstore_log_fd_of(s, rank);
}

/* ------------------------------------------------------------------ */
/* catching up with published versions                                */
/* ------------------------------------------------------------------ */

static void note_extent(mca_common_sfio_vstore_t *s, const mca_common_sfio_record_t *rec)
{
    for (uint32_t i = 0; i < rec->nranges; ++i) {
        uint64_t end = rec->ranges[i].offset + rec->ranges[i].length;
        if (rec->ranges[i].length && end > s->max_end) {
            s->max_end = end;
        }
        if (rec->ranges[i].length && rec->ranges[i].offset < s->min_start) {
            s->min_start = rec->ranges[i].offset;
        }
    }
}

/* A new epoch: every write of the group has returned, so the flat file's
 * size bounds every byte written in place so far; this rank's bytes that
 * are still only in versions (set_atomicity folds nothing) are below its
 * written_end. */
void sfio_vstore_refresh_fresh_floor(mca_common_sfio_vstore_t *s)
{
    struct stat st;
    uint64_t size = 0 == fstat(s->flat_fd, &st) ? (uint64_t) st.st_size : UINT64_MAX;
    s->reserved_to = UINT64_MAX == size ? 0 : size;
    s->fresh_floor = size > s->written_end ? size : s->written_end;
}

/* Empties the index and points every rank's cursor at its first record
 * not folded yet: the index is then rebuilt from there. */
int sfio_vstore_restart_index(mca_common_sfio_vstore_t *s, uint64_t folded)
{
    mca_common_sfio_vindex_clear(&s->index);
    s->seen = folded;
    s->max_end = 0;
    s->min_start = UINT64_MAX;
    if (0 == s->seen_compactions) {
        /* only a compaction moves heads (a fold puts them back to 0):
         * nothing to ask the shared state, rank by rank */
        memset(s->rec_cursor, 0, (size_t) s->nranks * sizeof(uint64_t));
        s->log_head_seen = s->rec_head_seen = 0;
        return 0;
    }
    for (int r = 0; r < s->nranks; ++r) {
        uint64_t log_head = 0;
        int rc = s->shared->heads(s, r, &s->rec_cursor[r], &log_head);
        if (0 != rc) {
            return rc;
        }
        if (r == s->rank) {
            s->log_head_seen = log_head;
            s->rec_head_seen = s->rec_cursor[r];
        }
    }
    return 0;
}

/* One rank's records, read for a catch-up: from its file, [cursor, its
 * end).  buf is malloc'd (NULL: nothing new); exact: the end is a
 * published tail, nothing in it may be torn. */
typedef struct {
    mca_common_sfio_vstore_t *s;
    int rank;
    uint64_t cursor;
    char *buf;
    size_t len;
    bool exact;
    bool carried;   /* a new record carries bytes: they are read from the record file */
    int rc;
} rec_read_t;

static void read_records(rec_read_t *q)
{
    mca_common_sfio_vstore_t *s = q->s;
    int r = q->rank, fd = s->rec_fd, tmpfd = -1;
    uint64_t tail = 0;
    q->exact = true;
    q->rc = s->shared->records_tail(s, r, -1, &tail, &q->exact);
    if (-EAGAIN == q->rc) {
        /* known only from the file itself */
        tmpfd = sfio_vstore_open_in_store(s, "rec", r, O_RDONLY);
        if (-ENOENT == tmpfd) {
            q->rc = 0;
            return;   /* the rank has written no record yet */
        }
        q->rc = tmpfd < 0 ? tmpfd : s->shared->records_tail(s, r, tmpfd, &tail, &q->exact);
        fd = tmpfd;
    }
    if (0 != q->rc || tail <= q->cursor) {
        if (tmpfd >= 0) close(tmpfd);
        return;
    }
    if (r != s->rank && tmpfd < 0 && !s->shared->records_remote) {
        /* the tail came from the shared page, not the file's size: the
         * descriptor may stay open, as the logs' do (records on one node
         * are read by this thread alone: read_all_records starts helpers
         * only for remote records) */
        fd = reader_fd(s, s->rec_fds, "rec", r);
        if (fd < 0) {
            q->rc = fd;
            return;
        }
    } else if (r != s->rank && tmpfd < 0) {
        tmpfd = sfio_vstore_open_in_store(s, "rec", r, O_RDONLY);
        if (tmpfd < 0) {
            q->rc = tmpfd;
            return;
        }
        fd = tmpfd;
    }
    size_t len = (size_t) (tail - q->cursor);
    char *buf = malloc(len);
    ssize_t got = buf ? mca_common_sfio_posix_pread_full(fd, buf, len, q->cursor) : -ENOMEM;
    if (tmpfd >= 0) {
        close(tmpfd);
    }
    if (got < 0 || (size_t) got != len) {
        free(buf);
        q->rc = got < 0 ? (int) got : -EIO;
        return;
    }
    q->buf = buf;
    q->len = len;
}

/* Reads for several ranks at once: where each read is a few round trips
 * to network storage (an open, a size, a read, a close), one after the
 * other they would add up over the ranks. */
#define CATCH_UP_READERS 8

typedef struct {
    rec_read_t *q;
    int n;
    _Atomic int next;
} rec_reads_t;

static void *read_records_worker(void *arg)
{
    rec_reads_t *w = arg;
    for (int i; (i = atomic_fetch_add(&w->next, 1)) < w->n;) {
        read_records(&w->q[i]);
    }
    return NULL;
}

static void read_all_records(mca_common_sfio_vstore_t *s, rec_read_t *q, int n)
{
    rec_reads_t w = { .q = q, .n = n };
    atomic_init(&w.next, 0);
    pthread_t tid[CATCH_UP_READERS - 1];
    int helpers = 0;
    if (s->shared->records_remote) {
        int want = (n < CATCH_UP_READERS ? n : CATCH_UP_READERS) - 1;
        while (helpers < want && 0 == pthread_create(&tid[helpers], NULL, read_records_worker, &w)) {
            helpers++;   /* none started: this thread reads them all */
        }
    }
    read_records_worker(&w);
    for (int i = 0; i < helpers; ++i) {
        pthread_join(tid[i], NULL);
    }
    for (int i = 0; helpers > 0 && i < n; ++i) {
        if (-EMFILE == q[i].rc || -ENFILE == q[i].rc) {
            read_records(&q[i]);   /* the readers held descriptors: again, alone */
        }
    }
}

/* Brings the index to the newest published version.  Caller holds lock. */
int sfio_vstore_catch_up(mca_common_sfio_vstore_t *s)
{
    return sfio_vstore_catch_up_with(s, NULL, NULL, NULL);
}

int sfio_vstore_catch_up_with(mca_common_sfio_vstore_t *s, const sfio_vshared_marks_t *known,
                              char *const *gathered, const uint64_t *gathered_len)
{
    if (!s->coord) {
        return 0;   /* not attached: no version of the group exists yet */
    }
    sfio_vshared_marks_t m;
    int rc = 0;
    if (NULL != known) {
        m = *known;
    } else if (0 != (rc = s->shared->marks(s, &m))) {
        return rc;
    }
    if (m.compactions != s->seen_compactions) {
        /* Another rank wrote every version up to the folded mark into the
         * flat file and released their records: start over from the
         * records that remain. */
        s->seen_compactions = m.compactions;
        rc = sfio_vstore_restart_index(s, m.folded);
        if (0 != rc) {
            s->seen_compactions = m.compactions - 1;   /* start over again next time */
            return rc;
        }
        sfio_vstore_logcopy_reset(s, s->log_tail);   /* what it copied is in the file now */
        rc = mca_common_sfio_vstore_revalidate_flat(s);
        if (0 != rc) {
            s->seen_compactions = m.compactions - 1;
            return rc;
        }
    }
    s->folded_seen = m.folded;
    s->folded_known = true;
    uint64_t P = m.published, folded = m.folded;
    if (P == s->seen) {
        return 0;
    }
    rec_read_t *q = calloc((size_t) s->nranks, sizeof(*q));
    uint64_t *cursor = malloc((size_t) s->nranks * sizeof(uint64_t));
    size_t npend = 0, cap = 0;
    mca_common_sfio_vindex_pending_t *pend = NULL;
    if (!q || !cursor) {
        free(q);
        free(cursor);
        return -ENOMEM;
    }
    /* Cursors move only if the whole batch applies. */
    memcpy(cursor, s->rec_cursor, (size_t) s->nranks * sizeof(uint64_t));
    for (int r = 0; r < s->nranks; ++r) {
        q[r] = (rec_read_t) { .s = s, .rank = r, .cursor = cursor[r] };
    }
    if (NULL == gathered) {
        read_all_records(s, q, s->nranks);
    }
    for (int r = 0; NULL != gathered && r < s->nranks; ++r) {
        /* all of rank r's records since its file was emptied: from the
         * cursor on, every one whole */
        if (cursor[r] > gathered_len[r]) {
            q[r].rc = -EIO;
        } else {
            q[r].len = (size_t) (gathered_len[r] - cursor[r]);
            q[r].exact = true;
        }
    }
    for (int r = 0; r < s->nranks && 0 == rc; ++r) {
        rc = q[r].rc;
        const char *data = NULL != gathered ? gathered[r] + cursor[r] : q[r].buf;
        size_t len = q[r].len, pos = 0;
        while (0 == rc && pos < len) {
            mca_common_sfio_record_t rec;
            int drc = mca_common_sfio_record_decode(data + pos, len - pos, &rec);
            if (drc < 0) {
                if (q[r].exact) {
                    rc = -EIO;     /* within a published tail: never torn */
                }
                break;             /* else: an append under way, of a later version */
            }
            if (rec.version > P) {
                break;         /* published later: next time */
            }
            if (MCA_COMMON_SFIO_RECORD_WRITE == rec.kind && rec.version > folded) {
                if (npend == cap) {
                    cap = cap ? 2 * cap : 64;
                    void *np = realloc(pend, cap * sizeof(*pend));
                    if (!np) {
                        rc = -ENOMEM;
                        break;
                    }
                    pend = np;
                }
                pend[npend++] = (mca_common_sfio_vindex_pending_t) { .rank = r, .record = rec };
                note_extent(s, &rec);
                q[r].carried |= NULL != rec.data;
            }
            pos += rec.size;
        }
        cursor[r] += pos;
    }
    for (int r = 0; 0 == rc && s->caching_clients && r < s->nranks; ++r) {
        if (r != s->rank && cursor[r] != s->rec_cursor[r]) {
            /* its logs grew: this client may hold their old last pages or sizes */
            int fd = sfio_vstore_log_fd_of(s, r);
            rc = fd < 0 ? fd : mca_common_sfio_posix_revalidate(fd);
            if (0 == rc && q[r].carried) {
                fd = reader_fd(s, s->rec_fds, "rec", r);
                rc = fd < 0 ? fd : mca_common_sfio_posix_revalidate(fd);
            }
        }
    }
    if (0 == rc) {
        rc = mca_common_sfio_vindex_apply_batch(&s->index, pend, npend);
        if (0 == rc) {
            memcpy(s->rec_cursor, cursor, (size_t) s->nranks * sizeof(uint64_t));
            s->seen = P;
        } else {
            /* A batch may be half applied: rebuild from every record next
             * time rather than trust this index. */
            mca_common_sfio_vindex_destroy(&s->index);
            mca_common_sfio_vindex_init(&s->index, NULL);
            (void) sfio_vstore_restart_index(s, folded);
        }
    }
    for (int r = 0; r < s->nranks; ++r) {
        free(q[r].buf);
    }
    free(q);
    free(cursor);
    free(pend);
    return rc;
}

/* Extends the in-memory copy of this rank's log by the bytes just logged
 * at [start, ...) when they continue it and fit fold.cache_max; after the
 * first gap or overflow the copy stops growing until the next fold (the
 * fold then reads the rest from the log). */
void sfio_vstore_logcopy_append(mca_common_sfio_vstore_t *s, uint64_t start,
                           const mca_common_sfio_ioseg_t *logsegs, size_t n)
{
    uint64_t bytes = mca_common_sfio_ioseg_total(logsegs, n);
    if (start != s->logcopy_base + s->logcopy_len || bytes > s->fold.cache_max ||
        s->logcopy_len > s->fold.cache_max - bytes) {
        return;
    }
    if (s->logcopy_len + bytes > s->logcopy_cap) {
        uint64_t cap = s->logcopy_cap ? s->logcopy_cap : (1u << 20);
        while (cap < s->logcopy_len + bytes) {
            cap *= 2;
        }
        if (cap > s->fold.cache_max) {
            cap = s->fold.cache_max;
        }
        char *p = realloc(s->logcopy, (size_t) cap);
        if (!p) {
            return;   /* the fold reads the log instead */
        }
        s->logcopy = p;
        s->logcopy_cap = cap;
    }
    for (size_t i = 0; i < n; ++i) {
        memcpy(s->logcopy + (logsegs[i].offset - s->logcopy_base), logsegs[i].buf,
               (size_t) logsegs[i].length);
    }
    s->logcopy_len += bytes;
}

/* Drops the copy with the log it mirrors (after a fold); a large buffer
 * is released rather than kept through the next epoch. */
void sfio_vstore_logcopy_reset(mca_common_sfio_vstore_t *s, uint64_t base)
{
    s->logcopy_base = base;
    s->logcopy_len = 0;
    if (s->logcopy_cap > (4u << 20)) {
        free(s->logcopy);
        s->logcopy = NULL;
        s->logcopy_cap = 0;
    }
}

/* Creates this rank's data and record logs on first use. */
int sfio_vstore_ensure_logs(mca_common_sfio_vstore_t *s)
{
    if (s->log_fd >= 0) {
        return 0;
    }
    int lfd = sfio_vstore_open_in_store(s, "log", s->rank, O_RDWR | O_CREAT | O_EXCL);
    if (lfd < 0) {
        return lfd;
    }
    int rfd = sfio_vstore_open_in_store(s, "rec", s->rank, O_RDWR | O_CREAT | O_EXCL);
    if (rfd < 0) {
        close(lfd);
        char *lp = rank_file(s->dir, "log", s->rank);
        if (lp) unlink(lp);
        free(lp);
        return rfd;
    }
    s->log_fd = s->log_fds[s->rank] = lfd;
    s->rec_fd = rfd;
    return 0;
}

int mca_common_sfio_vstore_size(mca_common_sfio_vstore_t *s, uint64_t *size_p)
{
    struct stat st;
    pthread_mutex_lock(&s->lock);
    int rc = s->coord ? 0 : sfio_vstore_attach(s, false);
    bool gated = false;
    if (0 == rc && 0 == (rc = sfio_vstore_gate_enter(s))) {
        gated = true;
        rc = sfio_vstore_catch_up(s);
    } else if (-ENOENT == rc) {
        rc = 0;
    }
    if (gated) sfio_vstore_gate_leave(s);
    if (0 == rc) {
        rc = mca_common_sfio_vstore_revalidate_flat(s);   /* others' bytes in place */
    }
    if (0 == rc && 0 != fstat(s->flat_fd, &st)) {
        rc = -errno;
    }
    if (0 == rc) {
        uint64_t flat = (uint64_t) st.st_size;
        *size_p = flat > s->max_end ? flat : s->max_end;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

#define DEFER_MAX_IN_MEMORY ((int64_t) 256 << 20)

void mca_common_sfio_vstore_set_fold_policy(mca_common_sfio_vstore_t *s,
                                            const mca_common_sfio_fold_policy_t *policy)
{
    struct statfs sf;
    s->fold = *policy;
    s->max_log = policy->max_log;
    s->max_versions = policy->max_versions;
    if (s->fold.window < 4096) {
        s->fold.window = 4096;
    }
    bool in_memory = 0 == statfs(s->side_dir, &sf) && TMPFS_MAGIC == sf.f_type;
    if (s->fold.defer_max < 0) {
        /* deferred pieces pay off only in windows written whole */
        s->fold.defer_max = !s->fold.hidden_groups && in_memory ? DEFER_MAX_IN_MEMORY : 0;
    }
    s->fold.carry_small = s->fold.carry_small && !in_memory;
}

void mca_common_sfio_vstore_floor_at_size(mca_common_sfio_vstore_t *s)
{
    pthread_mutex_lock(&s->lock);
    sfio_vstore_refresh_fresh_floor(s);
    pthread_mutex_unlock(&s->lock);
}

void mca_common_sfio_vstore_set_journal_private(mca_common_sfio_vstore_t *s, bool journal)
{
    s->journal_private = journal;
}

void mca_common_sfio_vstore_stats(const mca_common_sfio_vstore_t *s,
                                  mca_common_sfio_vstore_stats_t *stats_p)
{
    *stats_p = s->stats;
}

bool mca_common_sfio_vstore_attached(const mca_common_sfio_vstore_t *s)
{
    return NULL != s->coord;
}

const char *mca_common_sfio_vstore_dir(const mca_common_sfio_vstore_t *s)
{
    return s->dir;
}
