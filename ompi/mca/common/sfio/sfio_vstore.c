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

#include "sfio_vstore.h"
#include "sfio_foldplan.h"
#include "sfio_vindex.h"
#include "sfio_lockplan.h"
#include "sfio_vstore_int.h"

#define CLAIMING      UINT64_MAX               /* pending: taking a version */
#define FOLD_CHUNK    (4u << 20)
/* How long a rank waits for another rank of its group to finish creating
 * the store it also needs. */
#define CREATE_WAIT_NS ((int64_t) 30 * 1000000000)

typedef sfio_coord_rank_t coord_rank_t;
typedef sfio_coord_t coord_t;

struct mca_common_sfio_vstore_t {
    mca_common_sfio_coll_t coll;
    int rank, nranks;
    int flat_fd;
    char *dir;
    int coord_fd;
    coord_t *coord;
    size_t coord_size;
    int log_fd, rec_fd;
    int *log_fds;                /* per rank, opened on first use; [rank] = log_fd */
    uint64_t log_tail, rec_tail;
    /* A copy of this rank's log [logcopy_base, + logcopy_len), kept until the fold
     * (at most fold.cache_max bytes), so the fold writes back from memory
     * instead of reading the log back over the network. */
    char *logcopy;
    uint64_t logcopy_base, logcopy_len, logcopy_cap;
    uint64_t *rec_cursor;        /* per rank: bytes of rec.<r> applied */
    uint64_t seen;               /* index holds every version <= seen */
    uint64_t max_end;            /* end of the furthest indexed byte */
    uint64_t min_start;          /* start of the first indexed byte (UINT64_MAX: none) */
    mca_common_sfio_fold_policy_t fold;
    mca_common_sfio_vindex_t index;
    pthread_mutex_t lock;
    mca_common_sfio_vstore_stats_t stats;
    bool journal_private;        /* atomic private bytes go through the redo journal */
    /* This rank's private bytes at or past fresh_floor held nothing when
     * the current epoch (collective point to collective point) began, and
     * this rank has not written them since: nobody else may write them in
     * this epoch.  Such bytes need no redo journal: a crash before the
     * version is published is undone by zeroing them (FRESH record). */
    uint64_t fresh_floor;
    char *recbuf;
    size_t recbuf_size;
    /* Where the stores of this flat file live (other groups' handles of
     * the same file keep theirs there too), how their names start, and
     * this store's name among them.  The directory itself is made at the
     * group's first atomic access (attach). */
    char *side_dir, *side_prefix;
    const char *side_name;
    sfio_ident_t ident;          /* the flat file (rank 0's view, sent at open) */
    uint64_t seen_compactions;   /* coord->compactions the index was built after */
    uint64_t max_log;            /* compact when this rank's log passes it (0: never) */
    uint64_t max_versions;       /* ... or when this many versions await a fold */
    uint64_t versions_since;     /* versions this rank published since its last check */
    bool reserve;                /* reserve flat-file space for versioned bytes */
    uint64_t reserved_to;        /* file bytes below this have their blocks (the size
                                    at the last collective point, then extended) */
    bool attach_failed_told;
};

/* ------------------------------------------------------------------ */
/* small helpers                                                      */
/* ------------------------------------------------------------------ */

static void logcopy_reset(mca_common_sfio_vstore_t *s, uint64_t base);

#define path_join sfio_path_join
#define rank_file sfio_rank_file
#define coord_bytes sfio_coord_bytes
#define COORD_LIVE_BYTE SFIO_LIVE_BYTE
#define COORD_WINDOW_BYTE SFIO_WINDOW_BYTE
#define coord_lock_range mca_common_sfio_ofd_lock

static int coord_lock(int fd, short type, bool wait)
{
    return mca_common_sfio_ofd_lock(fd, type, wait, SFIO_LIVE_BYTE, 1);
}

/* Marks the start and end of this rank's writes to the flat file, so
 * that recovery can tell the group's own modifications (an mtime no
 * newer than the end of its last write, or one in flight at a crash)
 * from anybody else's.  Clock reads only: the file's mtime comes from the
 * kernel's coarse clock, never ahead of the end taken after the write. */
static void flat_begin(mca_common_sfio_vstore_t *s)
{
    if (s->coord) {
        atomic_store(&s->coord->rank[s->rank].flat_writing_ns, sfio_now_ns());
    }
}

static void flat_end(mca_common_sfio_vstore_t *s)
{
    if (s->coord) {
        atomic_store(&s->coord->rank[s->rank].flat_written_ns, sfio_now_ns());
        atomic_store(&s->coord->rank[s->rank].flat_writing_ns, 0);
    }
}

/* Written bytes of the flat file, bracketed by flat_begin/end. */
static int flat_write_segs(mca_common_sfio_vstore_t *s, const mca_common_sfio_ioseg_t *segs,
                           size_t n, uint64_t *done_p)
{
    flat_begin(s);
    int rc = mca_common_sfio_posix_write_segs(s->flat_fd, segs, n, done_p);
    flat_end(s);
    return rc;
}

static ssize_t flat_pwrite(mca_common_sfio_vstore_t *s, const void *buf, size_t n, uint64_t off)
{
    flat_begin(s);
    ssize_t put = mca_common_sfio_posix_pwrite_full(s->flat_fd, buf, n, off);
    flat_end(s);
    return put;
}

static int recbuf_reserve(mca_common_sfio_vstore_t *s, size_t n)
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

/* Closes the cached descriptors of other ranks' logs (reopened on use). */
static void drop_reader_fds(mca_common_sfio_vstore_t *s)
{
    for (int r = 0; r < s->nranks; ++r) {
        if (s->log_fds[r] >= 0 && s->log_fds[r] != s->log_fd) {
            close(s->log_fds[r]);
            s->log_fds[r] = -1;
        }
    }
}

/* Every store of this process, so that a store out of descriptors can
 * take back the ones other stores keep cached for reading. */
static pthread_mutex_t stores_lock = PTHREAD_MUTEX_INITIALIZER;
static mca_common_sfio_vstore_t **stores;
static size_t nstores, stores_cap;

static void stores_add(mca_common_sfio_vstore_t *s)
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

static void stores_remove(mca_common_sfio_vstore_t *s)
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
    drop_reader_fds(s);
    pthread_mutex_lock(&stores_lock);
    for (size_t i = 0; i < nstores; ++i) {
        if (stores[i] != s && 0 == pthread_mutex_trylock(&stores[i]->lock)) {
            drop_reader_fds(stores[i]);
            pthread_mutex_unlock(&stores[i]->lock);
        }
    }
    pthread_mutex_unlock(&stores_lock);
}

/* A store file of this rank's group, opened without following symlinks
 * and only when it is this user's; out of descriptors, the cached
 * readers' are given back once first. */
static int open_in_store(mca_common_sfio_vstore_t *s, const char *kind, int rank, int flags)
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

static int log_fd_of(mca_common_sfio_vstore_t *s, int rank)
{
    if (s->log_fds[rank] < 0) {
        int fd = open_in_store(s, "log", rank, O_RDONLY);
        if (fd < 0) {
            return fd;
        }
        s->log_fds[rank] = fd;
    }
    return s->log_fds[rank];
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

/* A collective point: every write of the group has returned, so the flat
 * file's size bounds every byte written so far. */
static void refresh_fresh_floor(mca_common_sfio_vstore_t *s)
{
    struct stat st;
    s->fresh_floor = 0 == fstat(s->flat_fd, &st) ? (uint64_t) st.st_size : UINT64_MAX;
    s->reserved_to = UINT64_MAX == s->fresh_floor ? 0 : s->fresh_floor;
}

/* Brings the index to the newest published version.  Caller holds lock. */
static int catch_up(mca_common_sfio_vstore_t *s)
{
    if (!s->coord) {
        return 0;   /* not attached: no version of the group exists yet */
    }
    uint64_t compactions = atomic_load_explicit(&s->coord->compactions, memory_order_acquire);
    if (compactions != s->seen_compactions) {
        /* Another rank wrote every version up to coord->folded into the
         * flat file and released their records: start over from the
         * records that remain. */
        mca_common_sfio_vindex_clear(&s->index);
        for (int r = 0; r < s->nranks; ++r) {
            s->rec_cursor[r] = atomic_load(&s->coord->rank[r].rec_head);
        }
        s->seen = atomic_load(&s->coord->folded);
        s->max_end = 0;
        s->min_start = UINT64_MAX;
        s->seen_compactions = compactions;
        logcopy_reset(s, s->log_tail);   /* what it copied is in the file now */
    }
    uint64_t P = atomic_load_explicit(&s->coord->published, memory_order_acquire);
    uint64_t folded = atomic_load_explicit(&s->coord->folded, memory_order_acquire);
    if (P == s->seen) {
        return 0;
    }
    char **bufs = calloc((size_t) s->nranks, sizeof(char *));
    uint64_t *cursor = malloc((size_t) s->nranks * sizeof(uint64_t));
    size_t npend = 0, cap = 0;
    mca_common_sfio_vindex_pending_t *pend = NULL;
    int rc = 0;
    if (!bufs || !cursor) {
        free(bufs);
        free(cursor);
        return -ENOMEM;
    }
    /* Cursors move only if the whole batch applies. */
    memcpy(cursor, s->rec_cursor, (size_t) s->nranks * sizeof(uint64_t));
    for (int r = 0; r < s->nranks && 0 == rc; ++r) {
        uint64_t tail = atomic_load_explicit(&s->coord->rank[r].rec_tail, memory_order_acquire);
        if (tail <= cursor[r]) {
            continue;
        }
        size_t len = (size_t) (tail - cursor[r]);
        int fd = s->rec_fd;
        int tmpfd = -1;
        if (r != s->rank) {
            tmpfd = open_in_store(s, "rec", r, O_RDONLY);
            if (tmpfd < 0) {
                rc = tmpfd;
                break;
            }
            fd = tmpfd;
        }
        bufs[r] = malloc(len);
        ssize_t got = bufs[r] ? mca_common_sfio_posix_pread_full(fd, bufs[r], len, cursor[r])
                              : -ENOMEM;
        if (tmpfd >= 0) {
            close(tmpfd);
        }
        if (got < 0 || (size_t) got != len) {
            rc = got < 0 ? (int) got : -EIO;
            break;
        }
        size_t pos = 0;
        while (pos < len) {
            mca_common_sfio_record_t rec;
            int drc = mca_common_sfio_record_decode(bufs[r] + pos, len - pos, &rec);
            if (drc < 0) {
                rc = -EIO;     /* within a published tail: never torn */
                break;
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
            }
            pos += rec.size;
        }
        cursor[r] += pos;
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
            for (int r = 0; r < s->nranks; ++r) {
                s->rec_cursor[r] = atomic_load(&s->coord->rank[r].rec_head);
            }
            s->seen = folded;
            s->max_end = 0;
            s->min_start = UINT64_MAX;
        }
    }
    for (int r = 0; r < s->nranks; ++r) {
        free(bufs[r]);
    }
    free(bufs);
    free(cursor);
    free(pend);
    return rc;
}

/* ------------------------------------------------------------------ */
/* publishing                                                         */
/* ------------------------------------------------------------------ */

static bool rank_dead(mca_common_sfio_vstore_t *s, int r)
{
    return r >= 0 && r < s->nranks &&
           mca_common_sfio_pid_dead(atomic_load(&s->coord->rank[r].pid));
}

/* Version b is next to publish but nobody publishes it.  True when its
 * writer is certainly dead: the rank holding b is dead, or no live rank
 * holds b or is still claiming a version while some dead rank was. */
static bool holder_dead(mca_common_sfio_vstore_t *s, uint64_t b)
{
    bool dead_claimer = false;
    for (int r = 0; r < s->nranks; ++r) {
        uint64_t pend = atomic_load(&s->coord->rank[r].pending);
        int64_t pid = atomic_load(&s->coord->rank[r].pid);
        if (pend == b) {
            return mca_common_sfio_pid_dead(pid);
        }
        if (CLAIMING == pend) {
            if (!mca_common_sfio_pid_dead(pid)) {
                return false;   /* may be about to hold b */
            }
            dead_claimer = true;
        }
    }
    return dead_claimer;
}

/* Publishes v after every lower version; skips a dead writer's version. */
static void publish(mca_common_sfio_vstore_t *s, uint64_t v)
{
    unsigned long spins = 0;
    for (;;) {
        uint64_t p = atomic_load_explicit(&s->coord->published, memory_order_acquire);
        if (p >= v) {
            break;
        }
        if (p == v - 1) {
            if (atomic_compare_exchange_strong_explicit(&s->coord->published, &p, v,
                                                        memory_order_acq_rel,
                                                        memory_order_acquire)) {
                break;
            }
            continue;
        }
        if (0 == spins++) {
            s->stats.publish_waits++;
        }
        if (spins < 256) {
            sched_yield();
        } else {
            struct timespec ts = { 0, 20000 };
            nanosleep(&ts, NULL);
            if (0 == spins % 512 && holder_dead(s, p + 1) &&
                atomic_compare_exchange_strong(&s->coord->published, &p, p + 1)) {
                s->stats.aborted_versions++;
            }
        }
    }
}


/* ------------------------------------------------------------------ */
/* open / close / fold                                                */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* other groups' stores of the same flat file                         */
/* ------------------------------------------------------------------ */

/* Calls fn on the coordination file of every other store of this flat
 * file in the sidecar directory (fd open read-only, or -1 when the sidecar
 * is there without it: being created, or just being removed); stops at
 * the first non-zero return and returns it.  Returns -errno when the
 * directory cannot be read. */
static int foreach_other_store(const mca_common_sfio_vstore_t *s, int (*fn)(int fd, const char *sc))
{
    DIR *d = opendir(s->side_dir);
    if (!d) {
        return -errno;
    }
    size_t plen = strlen(s->side_prefix);
    struct dirent *e;
    int rc = 0;
    while (0 == rc && (e = readdir(d)) != NULL) {
        if (0 != strncmp(e->d_name, s->side_prefix, plen) || 0 == strcmp(e->d_name, s->side_name)) {
            continue;
        }
        char *sc = path_join(s->side_dir, e->d_name);
        char *cp = sc ? path_join(sc, "coord") : NULL;
        const char *why;
        if (!cp) {
            rc = -ENOMEM;
        } else if (0 != sfio_dir_private(sc, &why)) {
            /* not ours (or not safe): never opened, but it may be a
             * group of another user writing the file */
            rc = fn(-2, sc);
        } else {
            int fd = sfio_open_store_file(cp, O_RDONLY, &why);
            rc = fn(fd < 0 ? -1 : fd, sc);
            if (fd >= 0) close(fd);
        }
        free(cp);
        free(sc);
    }
    closedir(d);
    return rc;
}

/* 1 when the store is open or being opened, else 0 (a dead group's, or
 * one already gone). */
static int store_present(int fd, const char *sc)
{
    struct stat st;
    if (-2 == fd) {
        return 1;   /* cannot tell: count it */
    }
    if (fd < 0) {
        return 0 == stat(sc, &st) ? 1 : 0;
    }
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = COORD_LIVE_BYTE,
                        .l_len = 1 };
    if (0 != fcntl(fd, F_OFD_GETLK, &fl)) {
        return 1;   /* cannot tell: count it */
    }
    return F_UNLCK != fl.l_type ? 1 : 0;
}

/* Whether a handle of another group (another collective open of the same
 * flat file, with its own store) is open: its ranks may write any byte
 * of the file at any time, and a byte no rank of this group wrote may be
 * theirs.  Called with this rank's window byte locked: a group whose
 * store this scan misses opens after it and waits for that lock before
 * its first write (wait_other_windows). */
static bool others_open(const mca_common_sfio_vstore_t *s)
{
    return 0 != foreach_other_store(s, store_present);
}

static int wait_windows(int fd, const char *sc)
{
    (void) sc;
    if (fd >= 0) {
        (void) coord_lock_range(fd, F_RDLCK, true, COORD_WINDOW_BYTE(0), 0);   /* dropped at close */
    }
    return 0;
}

/* At open, after this store's liveness lock is held (so that every later
 * others_open() sees it): waits until no rank of another group of the
 * file is writing a window whole, which may write back, from a stale
 * read, bytes this group will write. */
static void wait_other_windows(const mca_common_sfio_vstore_t *s)
{
    (void) foreach_other_store(s, wait_windows);
}

static void store_free(mca_common_sfio_vstore_t *s)
{
    if (!s) {
        return;
    }
    stores_remove(s);
    free(s->side_dir);
    free(s->side_prefix);
    free(s->logcopy);
    if (s->log_fds) {
        for (int r = 0; r < s->nranks; ++r) {
            if (s->log_fds[r] >= 0 && s->log_fds[r] != s->log_fd) {
                close(s->log_fds[r]);
            }
        }
    }
    if (s->log_fd >= 0) close(s->log_fd);
    if (s->rec_fd >= 0) close(s->rec_fd);
    if (s->coord && MAP_FAILED != (void *) s->coord) munmap(s->coord, s->coord_size);
    if (s->coord_fd >= 0) close(s->coord_fd);   /* drops the liveness lock */
    mca_common_sfio_vindex_destroy(&s->index);
    pthread_mutex_destroy(&s->lock);
    free(s->log_fds);
    free(s->rec_cursor);
    free(s->recbuf);
    free(s->dir);
    free(s);
}

static int agree(const mca_common_sfio_coll_t *c, int rc)
{
    int v = -rc;   /* errno values are positive: max picks a failure */
    if (0 != c->allreduce_max_int(c->ctx, &v)) {
        return -EIO;
    }
    return -v;
}

/* What rank 0 tells the others at open: its verdict, the flat file's
 * identity and where the store will be made. */
typedef struct {
    int rc;
    sfio_ident_t ident;
    char id[4096];
} open_msg_t;

int mca_common_sfio_vstore_open(const char *path, const char *store_dir, int flat_fd,
                                const mca_common_sfio_coll_t *coll,
                                mca_common_sfio_vstore_t **store_p, const char **warn_p)
{
    open_msg_t msg = { 0 };
    int rc = 0;
    *warn_p = NULL;

    mca_common_sfio_vstore_t *s = calloc(1, sizeof(*s));
    if (!s) {
        rc = -ENOMEM;
    } else {
        s->coll = *coll;
        s->rank = coll->rank;
        s->nranks = coll->size;
        s->flat_fd = flat_fd;
        s->journal_private = true;
        s->min_start = UINT64_MAX;
        s->fold = (mca_common_sfio_fold_policy_t) { .max_gap = 4096, .window = FOLD_CHUNK,
                                                    .defer_max = 0, .defer_piece_max = 0 };
        s->coord_fd = s->log_fd = s->rec_fd = -1;
        s->coord_size = coord_bytes(coll->size);
        s->reserve = true;
        pthread_mutex_init(&s->lock, NULL);
        mca_common_sfio_vindex_init(&s->index, NULL);
        s->log_fds = malloc((size_t) coll->size * sizeof(int));
        s->rec_cursor = calloc((size_t) coll->size, sizeof(uint64_t));
        if (!s->log_fds || !s->rec_cursor) {
            rc = -ENOMEM;
        } else {
            for (int r = 0; r < coll->size; ++r) s->log_fds[r] = -1;
        }
        if ((unsigned) coll->size > MCA_COMMON_SFIO_VINDEX_MAX_RANKS) {
            rc = -E2BIG;
        }
    }

    /* Rank 0 names the store; nothing is made on disk until the group's
     * first atomic access. */
    if (0 == coll->rank) {
        char *places[2] = { NULL, NULL };
        if (0 == rc) {
            rc = sfio_ident_of_fd(flat_fd, &msg.ident);
        }
        if (0 == rc) {
            rc = sfio_places(path, flat_fd, store_dir, places, warn_p);
        }
        /* the store is made later, by whichever rank needs it first: a
         * place nobody could make it in is known now, alike on all ranks */
        if (0 == rc && 0 != access(places[0], W_OK | X_OK)) {
            rc = -errno;
        }
        char name[128];
        if (0 == rc) {
            rc = sfio_store_name(msg.ident.ino, name, sizeof(name));
        }
        if (0 == rc && (size_t) snprintf(msg.id, sizeof(msg.id), "%s/%s", places[0], name) >=
                           sizeof(msg.id)) {
            rc = -ENAMETOOLONG;
        }
        sfio_places_free(places);
        msg.rc = rc;
    }
    if (0 != coll->bcast(coll->ctx, &msg, sizeof(msg), 0)) {
        msg.rc = -EIO;
    }
    if (0 != msg.rc && 0 == rc) {
        rc = msg.rc;
    }
    if (0 == rc) {
        s->ident = msg.ident;
        if (!(s->dir = strdup(msg.id)) || !(s->side_dir = strdup(msg.id)) ||
            !(s->side_prefix = sfio_store_prefix(msg.ident.ino))) {
            rc = -ENOMEM;
        } else {
            *strrchr(s->side_dir, '/') = '\0';
            s->side_name = strrchr(s->dir, '/') + 1;
        }
    }
    rc = agree(coll, rc);
    if (0 != rc) {
        store_free(s);
        return rc;
    }
    refresh_fresh_floor(s);   /* after the open's collective agreement: the epoch begins */
    stores_add(s);
    *store_p = s;
    return 0;
}

/* Maps and checks a coordination file this rank opened (fd). */
static int map_coord(mca_common_sfio_vstore_t *s, int fd)
{
    struct stat st;
    if (0 != fstat(fd, &st)) {
        return -errno;
    }
    if ((size_t) st.st_size < s->coord_size) {
        return -EPROTO;
    }
    coord_t *c = mmap(NULL, s->coord_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == (void *) c) {
        return -errno;
    }
    if (SFIO_COORD_MAGIC != c->magic || SFIO_COORD_LAYOUT != c->layout ||
        c->nranks != (uint32_t) s->nranks || c->ident.ino != s->ident.ino ||
        c->ident.dev != s->ident.dev || c->ident.uid != (uint32_t) geteuid()) {
        munmap(c, s->coord_size);
        return -EPROTO;   /* not this group's store (or another node's file) */
    }
    s->coord = c;
    return 0;
}

/* Makes the store's directory and coordination file (the first rank of
 * the group to need them).  Returns 0, -EEXIST when another rank of the
 * group got there first, or -errno. */
static int create_store(mca_common_sfio_vstore_t *s)
{
    const char *why;
    if (0 != mkdir(s->dir, 0700)) {
        return -errno;
    }
    char *tmp = path_join(s->dir, "coord.new"), *cp = path_join(s->dir, "coord");
    int fd = -1, rc = (tmp && cp) ? 0 : -ENOMEM;
    if (0 == rc && (fd = sfio_open_store_file(tmp, O_RDWR | O_CREAT | O_EXCL, &why)) < 0) {
        rc = fd;
    }
    /* liveness first: a recovery probing this file then sees it alive */
    if (0 == rc) rc = coord_lock(fd, F_RDLCK, false);
    if (0 == rc && 0 != ftruncate(fd, (off_t) s->coord_size)) rc = -errno;
    coord_t *c = NULL;
    if (0 == rc) {
        c = mmap(NULL, s->coord_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (MAP_FAILED == (void *) c) {
            c = NULL;
            rc = -errno;
        }
    }
    if (0 == rc) {
        c->layout = SFIO_COORD_LAYOUT;
        c->nranks = (uint32_t) s->nranks;
        c->ident = s->ident;
        c->ident.uid = (uint32_t) geteuid();
        int64_t m = sfio_mtime_ns_of_fd(s->flat_fd);
        atomic_store(&c->flat_mtime_ns, m > 0 ? m : 0);
        atomic_thread_fence(memory_order_release);
        c->magic = SFIO_COORD_MAGIC;
        /* published under its name only now, locked and complete */
        if (0 != rename(tmp, cp)) {
            rc = -errno;
        }
    }
    if (0 == rc) {
        s->coord = c;
        s->coord_fd = fd;
    } else {
        if (c) munmap(c, s->coord_size);
        if (fd >= 0) close(fd);
        if (tmp) unlink(tmp);
        rmdir(s->dir);
    }
    free(tmp);
    free(cp);
    return rc;
}

/* Maps the group's store for this rank: made first when create (an
 * atomic write), else only when it exists.  Returns 0, -ENOENT (no store:
 * no version exists), or -errno. */
static int attach(mca_common_sfio_vstore_t *s, bool create)
{
    if (s->coord) {
        return 0;
    }
    int rc = -ENOENT;
    bool made = false;
    if (create) {
        rc = create_store(s);
        made = 0 == rc;
    }
    if (!made) {
        char *cp = path_join(s->dir, "coord");
        const char *why;
        struct stat st;
        int64_t deadline = sfio_now_ns() + CREATE_WAIT_NS;
        rc = cp ? 0 : -ENOMEM;
        while (0 == rc) {
            int fd = sfio_open_store_file(cp, O_RDWR, &why);
            if (fd >= 0) {
                if (0 != sfio_dir_private(s->dir, &why)) {
                    rc = -EPERM;
                } else if (0 == (rc = coord_lock(fd, F_RDLCK, false))) {
                    rc = map_coord(s, fd);
                }
                if (0 == rc) {
                    s->coord_fd = fd;
                } else {
                    close(fd);
                }
                break;
            }
            if (-ENOENT != fd) {
                rc = fd;
                break;
            }
            /* The directory without coord: a rank of the group is making
             * it (wait for it), or made it and failed (no store). */
            if (!create || 0 != lstat(s->dir, &st) || sfio_now_ns() > deadline) {
                rc = (!create || 0 != lstat(s->dir, &st)) ? -ENOENT : -ETIMEDOUT;
                break;
            }
            struct timespec ts = { 0, 200000 };
            nanosleep(&ts, NULL);
        }
        free(cp);
        if (0 != rc) {
            return rc;
        }
    }
    if (made) {
        /* Other groups' folds now see this store: wait for the ones
         * already writing windows whole. */
        wait_other_windows(s);
    }
    atomic_store(&s->coord->rank[s->rank].pid, (int64_t) getpid());
    atomic_fetch_add(&s->coord->attached, 1);
    s->seen_compactions = atomic_load(&s->coord->compactions);
    s->seen = atomic_load(&s->coord->folded);
    for (int r = 0; r < s->nranks; ++r) {
        s->rec_cursor[r] = atomic_load(&s->coord->rank[r].rec_head);
    }
    return 0;
}

/* Extends the in-memory copy of this rank's log by the bytes just logged
 * at [start, ...) when they continue it and fit fold.cache_max; after the
 * first gap or overflow the copy stops growing until the next fold (the
 * fold then reads the rest from the log). */
static void logcopy_append(mca_common_sfio_vstore_t *s, uint64_t start,
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
static void logcopy_reset(mca_common_sfio_vstore_t *s, uint64_t base)
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
static int ensure_logs(mca_common_sfio_vstore_t *s)
{
    if (s->log_fd >= 0) {
        return 0;
    }
    int lfd = open_in_store(s, "log", s->rank, O_RDWR | O_CREAT | O_EXCL);
    if (lfd < 0) {
        return lfd;
    }
    int rfd = open_in_store(s, "rec", s->rank, O_RDWR | O_CREAT | O_EXCL);
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

/* Fills segs (offset: in rank's log, ascending; buf: destination) with
 * their logged bytes: this rank's own from its log's copy while it lasts,
 * the rest with one vectored read of the log (pieces back to back in the
 * log fuse into one request; sfio_posixio may keep several in flight).
 * Adds the bytes taken from the copy to *copied_p.  Returns 0, or a
 * negative errno (-EIO: a published piece is not wholly in its log). */
static int read_logged(mca_common_sfio_vstore_t *s, int rank, const mca_common_sfio_ioseg_t *segs,
                       size_t n, mca_common_sfio_scratch_t *scratch, uint64_t *copied_p)
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
    if (k == n) {
        return 0;
    }
    const mca_common_sfio_sieve_policy_t direct = { .enabled = false };
    int fd = log_fd_of(s, rank);
    uint64_t got = 0;
    if (fd < 0) {
        return fd;
    }
    int rc = mca_common_sfio_posix_read_segs(fd, segs + k, n - k, &direct, scratch, &got);
    if (0 == rc && got != mca_common_sfio_ioseg_total(segs + k, n - k)) {
        rc = -EIO;
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
    mca_common_sfio_scratch_t scratch = { 0 };
    for (size_t k = 0; 0 == rc && k < n;) {
        size_t e = k + 1;
        while (e < n && srank[e] == srank[k]) {
            e++;
        }
        uint64_t copied = 0;
        rc = read_logged(s, srank[k], sorted + k, e - k, &scratch, &copied);
        if (0 == rc) {
            s->stats.bytes_folded += mca_common_sfio_ioseg_total(sorted + k, e - k);
            s->stats.bytes_fold_cached += copied;
        }
        k = e;
    }
    mca_common_sfio_scratch_fini(&scratch);
    free(sorted);
    free(srank);
    return rc;
}

/* Writes back this rank's domain of the folded versions: a contiguous,
 * window-aligned share of the indexed extent, whoever wrote its bytes (the
 * logs of one node are readable by every rank).  Logged pieces closer than
 * max_gap share one window; a window with holes is read from the flat file
 * first (no write of the group is in flight at a fold), so the file sees
 * few large writes instead of one per piece.  That read-modify-write is
 * safe only while no other group has the file open: another collective
 * open of it (MPI_COMM_SELF handles of one file, say) may write the holes
 * between the read and the write back, and its bytes would be lost.  So
 * this rank holds its window lock while it checks for other groups'
 * stores and writes windows whole; with another group open, it writes the
 * pieces alone. */
static int fold_domain(mca_common_sfio_vstore_t *s)
{
    const uint64_t win = s->fold.window;
    if (UINT64_MAX == s->min_start || s->max_end <= s->min_start) {
        return 0;
    }
    uint64_t lo = s->min_start - s->min_start % win, hi = s->max_end;
    uint64_t per = (hi - lo + (uint64_t) s->nranks - 1) / (uint64_t) s->nranks;
    per = (per + win - 1) / win * win;
    uint64_t dlo = lo + per * (uint64_t) s->rank;
    if (dlo >= hi) {
        return 0;
    }
    uint64_t dhi = hi - dlo > per ? dlo + per : hi;

    fold_pieces_t fp = { .window = win };
    int rc = mca_common_sfio_vindex_pieces(&s->index, dlo, dhi - dlo, collect_piece, &fp);
    struct stat st;
    uint64_t flat_size = 0;
    if (0 == rc && fp.n > 0) {
        rc = 0 == fstat(s->flat_fd, &st) ? 0 : -errno;
        flat_size = (uint64_t) st.st_size;
    }
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
    bool decided = false, whole = false;
    mca_common_sfio_ioseg_t *pieces = NULL;
    size_t pieces_cap = 0;
    while (0 == rc && mca_common_sfio_sieve_next(fp.segs, fp.n, &pos, &policy, &w)) {
        if (w.sieve && !decided) {
            /* lock first: a group this scan misses waits for the lock */
            decided = true;
            whole = 0 == coord_lock_range(s->coord_fd, F_WRLCK, true, COORD_WINDOW_BYTE(s->rank), 1) &&
                    !others_open(s);
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
                rc = flat_write_segs(s, pieces, w.count, &done);
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
            ssize_t put = flat_pwrite(s, buf, (size_t) w.length, w.offset);
            rc = put == (ssize_t) w.length ? 0 : put < 0 ? (int) put : -EIO;
        }
    }
    if (decided) {
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
#define FOLD_COPIED(i) (fp.rank[i] == s->rank && fp.log_offset[i] >= s->logcopy_base && \
                        fp.log_offset[i] + fp.segs[i].length <= s->logcopy_base + s->logcopy_len)
    char *buf = NULL;
    mca_common_sfio_scratch_t scratch = { 0 };
    for (size_t k = 0; 0 == rc && k < m;) {
        size_t e = k;
        uint64_t done = 0;
        if (FOLD_COPIED(k)) {
            /* a run of pieces in the copy: one vectored write */
            while (e < m && FOLD_COPIED(e)) {
                fp.segs[e].buf = s->logcopy + (fp.log_offset[e] - s->logcopy_base);
                e++;
            }
            rc = flat_write_segs(s, fp.segs + k, e - k, &done);
            s->stats.bytes_fold_cached += done;
        } else {
            /* pieces to read from a log (past the copy, or another rank's) */
            if (!buf && !(buf = malloc(win))) {
                rc = -ENOMEM;
                break;
            }
            uint64_t fill = 0;
            while (e < m && !FOLD_COPIED(e) && fill + fp.segs[e].length <= win) {
                fp.segs[e].buf = buf + fill;
                fill += fp.segs[e].length;
                e++;
            }
            mca_common_sfio_ioseg_t *reads = malloc((e - k) * sizeof(*reads));
            rc = reads ? 0 : -ENOMEM;
            for (size_t i = k; 0 == rc && i < e;) {
                size_t j = i;   /* a run of the same log */
                while (j < e && fp.rank[j] == fp.rank[i]) {
                    reads[j - i] = (mca_common_sfio_ioseg_t) { fp.log_offset[j], fp.segs[j].length,
                                                               fp.segs[j].buf };
                    j++;
                }
                uint64_t copied = 0;
                rc = read_logged(s, fp.rank[i], reads, j - i, &scratch, &copied);
                s->stats.bytes_fold_cached += copied;
                i = j;
            }
            free(reads);
            if (0 == rc) {
                rc = flat_write_segs(s, fp.segs + k, e - k, &done);
            }
        }
        s->stats.bytes_folded += done;
        k = e;
    }
#undef FOLD_COPIED
    mca_common_sfio_scratch_fini(&scratch);
    free(buf);
    free(fp.segs);
    free(fp.rank);
    free(fp.log_offset);
    return rc;
}

int mca_common_sfio_vstore_fold(mca_common_sfio_vstore_t *s, bool durable, bool synced)
{
    const mca_common_sfio_coll_t *c = &s->coll;
    int rc;

    /* After a barrier every write of the group has returned, so every
     * version is published and all ranks see the same P and F. */
    if (!synced && 0 != c->barrier(c->ctx)) {
        return -EIO;
    }
    pthread_mutex_lock(&s->lock);
    /* A rank that never made an atomic access maps the store now if the
     * group made one: every making of it finished before the barrier, so
     * every rank finds the same. */
    rc = s->coord ? 0 : attach(s, false);
    rc = agree(c, -ENOENT == rc ? 0 : rc);
    if (0 != rc || !s->coord) {
        pthread_mutex_unlock(&s->lock);
        if (0 != rc || !durable) {
            return rc;
        }
        return agree(c, 0 != fsync(s->flat_fd) ? -errno : 0);
    }
    s->fresh_floor = UINT64_MAX;   /* until this collective point completes */
    uint64_t P = atomic_load(&s->coord->published);
    uint64_t F = atomic_load(&s->coord->folded);
    if (P == F) {
        refresh_fresh_floor(s);
        pthread_mutex_unlock(&s->lock);
        if (!durable) {
            return 0;   /* the same verdict on every rank: nothing to do */
        }
        rc = 0 != fsync(s->flat_fd) ? -errno : 0;
        return agree(c, rc);
    }
    rc = catch_up(s);
    if (0 == rc) {
        if (fold_by_owner(s)) {
            rc = fold_owner(s);
            s->stats.folds_by_owner++;
        } else {
            rc = fold_domain(s);
        }
        s->stats.folds++;
    }
    if (0 == rc && durable && 0 != fsync(s->flat_fd)) {
        rc = -errno;
    }
    rc = agree(c, rc);
    if (0 == rc) {
        /* Everything <= P is in the flat file: the logs may go. */
        if (0 == s->rank) {
            atomic_store(&s->coord->folded, P);
        }
        if (0 != c->barrier(c->ctx)) {
            rc = -EIO;
        }
    }
    if (0 == rc) {
        if (s->log_fd >= 0 && (0 != ftruncate(s->log_fd, 0) || 0 != ftruncate(s->rec_fd, 0))) {
            rc = -errno;
        }
        s->log_tail = s->rec_tail = 0;
        logcopy_reset(s, 0);
        atomic_store(&s->coord->rank[s->rank].rec_tail, 0);
        atomic_store(&s->coord->rank[s->rank].rec_head, 0);
        atomic_store(&s->coord->rank[s->rank].log_head, 0);
        memset(s->rec_cursor, 0, (size_t) s->nranks * sizeof(uint64_t));
        mca_common_sfio_vindex_clear(&s->index);
        s->max_end = 0;
        s->min_start = UINT64_MAX;
        s->seen = P;
        rc = agree(c, rc);   /* nobody reads a stale tail after this */
        refresh_fresh_floor(s);   /* after every rank's write-back */
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

int mca_common_sfio_vstore_close(mca_common_sfio_vstore_t *s)
{
    int rc = mca_common_sfio_vstore_fold(s, false, true);
    if (!s->coord) {
        /* never made (every rank agrees after the fold): nothing on disk */
        int brc = s->coll.barrier(s->coll.ctx);
        store_free(s);
        return rc ? rc : (brc ? -EIO : 0);
    }
    if (0 == rc && s->log_fd >= 0) {
        /* Folded: this rank's logs hold nothing the flat file lacks. */
        char *lp = rank_file(s->dir, "log", s->rank), *rp = rank_file(s->dir, "rec", s->rank);
        if (lp) unlink(lp);
        if (rp) unlink(rp);
        free(lp);
        free(rp);
    }
    atomic_fetch_sub(&s->coord->attached, 1);
    /* When close returns on any rank the sidecar is gone: rank 0 waits in
     * shared memory until every rank has left (their logs unlinked),
     * removes it, then one barrier releases everyone.  A failed fold
     * leaves it for the next open to recover. */
    if (0 == s->rank && 0 == rc) {
        for (unsigned long spins = 0; atomic_load(&s->coord->attached) > 0; ++spins) {
            if (spins > 200000) {
                break;   /* a rank that cannot leave: its sidecar stays */
            }
            sched_yield();
        }
        if (0 == atomic_load(&s->coord->attached)) {
            char *cp = path_join(s->dir, "coord");
            if (cp) unlink(cp);
            free(cp);
            rmdir(s->dir);
        }
    }
    int brc = s->coll.barrier(s->coll.ctx);
    store_free(s);
    return rc ? rc : (brc ? -EIO : 0);
}

/* ------------------------------------------------------------------ */
/* data path                                                          */
/* ------------------------------------------------------------------ */

/* Lays segs out in the log from *tail on: fills logsegs and the record's
 * file ranges (neighbours merged).  Returns the number of ranges. */
static uint32_t layout(const mca_common_sfio_ioseg_t *segs, size_t n, uint64_t *tail,
                       mca_common_sfio_ioseg_t *logsegs, mca_common_sfio_range_t *ranges)
{
    uint32_t nranges = 0;
    for (size_t i = 0; i < n; ++i) {
        logsegs[i] = (mca_common_sfio_ioseg_t) { *tail, segs[i].length, segs[i].buf };
        if (nranges > 0 &&
            ranges[nranges - 1].offset + ranges[nranges - 1].length == segs[i].offset) {
            ranges[nranges - 1].length += segs[i].length;
        } else {
            ranges[nranges++] = (mca_common_sfio_range_t) { segs[i].offset, segs[i].length };
        }
        *tail += segs[i].length;
    }
    return nranges;
}

/* Appends one record to this rank's record log and makes it visible. */
static int append_record(mca_common_sfio_vstore_t *s, size_t rsize)
{
    ssize_t put = mca_common_sfio_posix_pwrite_full(s->rec_fd, s->recbuf, rsize, s->rec_tail);
    if (put != (ssize_t) rsize) {
        return put < 0 ? (int) put : -EIO;
    }
    s->rec_tail += rsize;
    atomic_store_explicit(&s->coord->rank[s->rank].rec_tail, s->rec_tail, memory_order_release);
    return 0;
}

/* Puts fresh private bytes in place before the version exists, after a
 * FRESH record that lets recovery undo them (they held nothing). */
static int write_fresh(mca_common_sfio_vstore_t *s, const mca_common_sfio_ioseg_t *fresh,
                       size_t nfresh)
{
    mca_common_sfio_range_t *ranges = malloc(nfresh * sizeof(*ranges));
    if (!ranges) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < nfresh; ++i) {
        ranges[i] = (mca_common_sfio_range_t) { fresh[i].offset, fresh[i].length };
    }
    size_t rsize = mca_common_sfio_record_size((uint32_t) nfresh);
    int rc = recbuf_reserve(s, rsize);
    if (0 == rc) {
        mca_common_sfio_record_encode(s->recbuf, MCA_COMMON_SFIO_RECORD_FRESH, 0, s->fresh_floor,
                                      ranges, (uint32_t) nfresh);
        rc = append_record(s, rsize);
    }
    free(ranges);
    uint64_t done = 0;
    if (0 == rc) {
        rc = flat_write_segs(s, fresh, nfresh, &done);
        s->stats.bytes_in_place += done;
        s->stats.bytes_fresh += done;
    }
    return rc;
}

/* Space in the flat file for bytes a fold will write there, taken now
 * so that the write fails rather than the fold (at close nobody would
 * hear of it).  One call reserves everything from what this rank has
 * reserved (at first: the size at the last collective point) to the end
 * of the write, gaps included: they are the file's bytes up to a byte
 * that will be written, so they take blocks at most as large as the
 * file.  Holes below the size are not reserved.  File systems without
 * fallocate are not asked again. */
static int reserve_flat(mca_common_sfio_vstore_t *s, const mca_common_sfio_range_t *ranges,
                        size_t n)
{
    uint64_t end = 0;
    for (size_t i = 0; i < n; ++i) {
        if (ranges[i].offset + ranges[i].length > end) {
            end = ranges[i].offset + ranges[i].length;
        }
    }
    if (!s->reserve || end <= s->reserved_to) {
        return 0;
    }
    int rc = 0;
    flat_begin(s);
    if (0 != fallocate(s->flat_fd, FALLOC_FL_KEEP_SIZE, (off_t) s->reserved_to,
                       (off_t) (end - s->reserved_to))) {
        rc = -errno;
    } else {
        s->reserved_to = end;
    }
    flat_end(s);
    if (-EOPNOTSUPP == rc || -ENOSYS == rc) {
        s->reserve = false;
        rc = 0;
    }
    return rc;
}

/* Makes one version of an atomic write: shared segs become readable
 * through the index; place segs (Logan and Dickens' private bytes over old data)
 * are journaled and put in place only after the version is published;
 * fresh segs (private bytes over nothing) were put in place before it,
 * after a FRESH undo note.  So a crash leaves either the whole write
 * (recovery redoes the journaled part) or none of it (recovery zeroes
 * the fresh part).  Returns 0 or a negative errno. */
static int write_version(mca_common_sfio_vstore_t *s, const mca_common_sfio_ioseg_t *shared,
                         size_t nshared, const mca_common_sfio_ioseg_t *place, size_t nplace,
                         const mca_common_sfio_ioseg_t *fresh, size_t nfresh)
{
    size_t n = nshared + nplace;
    int lrc = ensure_logs(s);
    if (0 == lrc && nfresh > 0) {
        lrc = write_fresh(s, fresh, nfresh);
    }
    if (0 != lrc) {
        return lrc;
    }
    mca_common_sfio_ioseg_t *logsegs = malloc((n ? n : 1) * sizeof(*logsegs));
    mca_common_sfio_range_t *ranges = malloc((n ? n : 1) * sizeof(*ranges));
    uint64_t start = s->log_tail, tail = s->log_tail;
    int rc = 0;

    if (!logsegs || !ranges) {
        free(logsegs);
        free(ranges);
        return -ENOMEM;
    }
    /* The log holds the shared bytes, then the private ones, in data order. */
    uint32_t nr_shared = layout(shared, nshared, &tail, logsegs, ranges);
    uint64_t place_start = tail;
    uint32_t nr_place = layout(place, nplace, &tail, logsegs + nshared, ranges + nr_shared);
    if (tail > MCA_COMMON_SFIO_VINDEX_MAX_LOG) {
        rc = -EFBIG;
    }
    if (0 == rc) {
        rc = reserve_flat(s, ranges, nr_shared + nr_place);
    }
    uint64_t written = 0;
    if (0 == rc) {
        rc = mca_common_sfio_posix_write_segs(s->log_fd, logsegs, n, &written);
    }
    s->log_tail = start + written;   /* never reuse log bytes, even after a failure */
    if (0 == rc) {
        logcopy_append(s, start, logsegs, n);
    }
    free(logsegs);
    size_t size_shared = nr_shared ? mca_common_sfio_record_size(nr_shared) : 0;
    /* A fresh-only write still needs a record of a published version: its
     * completion mark (an empty PLACE record). */
    size_t size_place = (nr_place || !nr_shared) ? mca_common_sfio_record_size(nr_place) : 0;
    if (0 == rc) {
        rc = recbuf_reserve(s, size_shared + size_place);
    }
    if (0 != rc) {
        free(ranges);
        return rc;
    }

    coord_rank_t *me = &s->coord->rank[s->rank];
    atomic_store(&me->pending, CLAIMING);
    uint64_t v = atomic_fetch_add(&s->coord->next_version, 1) + 1;
    atomic_store(&me->pending, v);

    if (nr_shared) {
        mca_common_sfio_record_encode(s->recbuf, MCA_COMMON_SFIO_RECORD_WRITE, v, start, ranges,
                                      nr_shared);
    }
    if (size_place) {
        mca_common_sfio_record_encode(s->recbuf + size_shared, MCA_COMMON_SFIO_RECORD_PLACE, v,
                                      place_start, ranges + nr_shared, nr_place);
    }
    free(ranges);
    /* On failure the version still gets published, empty, so others never wait. */
    rc = append_record(s, size_shared + size_place);
    publish(s, v);
    atomic_store(&me->pending, 0);
    if (0 == rc) {
        s->stats.versions++;
        for (size_t i = 0; i < nshared; ++i) s->stats.bytes_versioned += shared[i].length;
    }
    /* Published: now the private bytes may reach the flat file. */
    if (0 == rc && nplace > 0) {
        uint64_t done = 0;
        rc = flat_write_segs(s, place, nplace, &done);
        s->stats.bytes_in_place += done;
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* bounds: compaction between collective points                       */
/* ------------------------------------------------------------------ */

/* Every data-path call marks itself in its rank's slot of the shared
 * page; a compaction waits until no live rank is marked, and a rank does
 * not enter while one runs (seq_cst on both sides: Dekker's pattern).
 * Shared memory, not file locks: on a network file system a lock is a
 * round trip to its lock manager. */
static bool rank_dead(mca_common_sfio_vstore_t *s, int r);

static int gate_enter(mca_common_sfio_vstore_t *s)
{
    _Atomic uint32_t *mine = &s->coord->rank[s->rank].in_access;
    for (unsigned long spins = 0;; ++spins) {
        atomic_store(mine, 1);
        uint32_t who = atomic_load(&s->coord->compacting);
        if (0 == who) {
            return 0;
        }
        atomic_store(mine, 0);
        if (0 == spins % 1024 && rank_dead(s, (int) who - 1)) {
            /* its writes were redo of published versions: harmless */
            atomic_compare_exchange_strong(&s->coord->compacting, &who, 0);
        }
        if (spins < 64) {
            sched_yield();
        } else {
            struct timespec ts = { 0, 50000 };
            nanosleep(&ts, NULL);
        }
    }
}

static void gate_leave(mca_common_sfio_vstore_t *s)
{
    if (s->coord) {
        atomic_store(&s->coord->rank[s->rank].in_access, 0);
    }
}

/* Takes the compaction for this rank: no other compaction runs and no
 * live rank is in a data-path call.  Caller is not in one itself. */
static void compaction_begin(mca_common_sfio_vstore_t *s)
{
    uint32_t me = (uint32_t) s->rank + 1;
    for (unsigned long spins = 0;; ++spins) {
        uint32_t zero = 0;
        if (atomic_compare_exchange_strong(&s->coord->compacting, &zero, me)) {
            break;
        }
        if (0 == spins % 1024 && rank_dead(s, (int) zero - 1)) {
            atomic_compare_exchange_strong(&s->coord->compacting, &zero, 0);
        }
        struct timespec ts = { 0, 50000 };
        nanosleep(&ts, NULL);
    }
    for (int r = 0; r < s->nranks; ++r) {
        for (unsigned long spins = 0; r != s->rank && atomic_load(&s->coord->rank[r].in_access);
             ++spins) {
            if (0 == spins % 1024 && rank_dead(s, r)) {
                break;
            }
            if (spins < 64) {
                sched_yield();
            } else {
                struct timespec ts = { 0, 20000 };
                nanosleep(&ts, NULL);
            }
        }
    }
}

static void compaction_end(mca_common_sfio_vstore_t *s)
{
    atomic_store(&s->coord->compacting, 0);
}

static bool over_bounds(const mca_common_sfio_vstore_t *s)
{
    uint64_t live_log = s->log_tail - atomic_load(&s->coord->rank[s->rank].log_head);
    uint64_t waiting = atomic_load(&s->coord->published) - atomic_load(&s->coord->folded);
    return (s->max_log && live_log > s->max_log) || (s->max_versions && waiting > s->max_versions);
}

typedef struct {
    mca_common_sfio_vstore_t *s;
    char *buf;
    int rc;
} compact_ctx_t;

/* Writes one indexed piece from its log into the flat file (the whole
 * compaction is one bracketed write of the flat file). */
static int compact_piece(const mca_common_sfio_vpiece_t *p, void *ctx)
{
    compact_ctx_t *k = ctx;
    if (p->rank < 0) {
        return 0;
    }
    int fd = log_fd_of(k->s, p->rank);
    int rc = fd < 0 ? fd : sfio_copy_range(fd, p->log_offset, k->s->flat_fd, p->offset, p->length,
                                           k->buf, FOLD_CHUNK);
    return 0 == rc ? 0 : (k->rc = rc);
}

/* Where rank r's records and data of versions <= P end: *rec_p after the
 * last such record (a FRESH note of an unfinished write ends it early:
 * recovery still needs it), *log_p after the last such record's data. */
static int folded_prefix(mca_common_sfio_vstore_t *s, int r, uint64_t P, uint64_t *rec_p,
                         uint64_t *log_p)
{
    uint64_t head = atomic_load(&s->coord->rank[r].rec_head);
    uint64_t tail = atomic_load(&s->coord->rank[r].rec_tail);
    *rec_p = head;
    *log_p = atomic_load(&s->coord->rank[r].log_head);
    if (tail <= head) {
        return 0;
    }
    int fd = r == s->rank ? s->rec_fd : open_in_store(s, "rec", r, O_RDONLY);
    if (fd < 0) {
        return fd;
    }
    size_t len = (size_t) (tail - head);
    char *buf = malloc(len);
    ssize_t got = buf ? mca_common_sfio_posix_pread_full(fd, buf, len, (off_t) head) : -ENOMEM;
    if (r != s->rank) close(fd);
    int rc = got == (ssize_t) len ? 0 : got < 0 ? (int) got : -EIO;
    for (size_t pos = 0; 0 == rc && pos < len;) {
        mca_common_sfio_record_t rec;
        if (0 != mca_common_sfio_record_decode(buf + pos, len - pos, &rec)) {
            rc = -EIO;
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
        } else if (MCA_COMMON_SFIO_RECORD_WRITE == rec.kind ||
                   MCA_COMMON_SFIO_RECORD_PLACE == rec.kind) {
            uint64_t end = rec.log_offset + rec.data_bytes;
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
    int fd = open_in_store(s, kind, r, O_RDWR);
    if (fd >= 0) {
        (void) fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t) end);
        close(fd);
    }
}

/* Writes every published version into the flat file and releases the
 * records and log bytes behind them, while no rank of the group is in a
 * data-path call: the store stays bounded between collective points.
 * Caller holds s->lock and no gate. */
static int compact(mca_common_sfio_vstore_t *s)
{
    compaction_begin(s);
    if (!over_bounds(s)) {
        compaction_end(s);
        return 0;   /* another rank compacted while this one waited */
    }
    int rc = catch_up(s);
    uint64_t P = s->seen;
    compact_ctx_t k = { .s = s, .buf = malloc(FOLD_CHUNK) };
    if (0 == rc && !k.buf) {
        rc = -ENOMEM;
    }
    if (0 == rc && UINT64_MAX != s->min_start && s->max_end > s->min_start) {
        flat_begin(s);
        rc = mca_common_sfio_vindex_pieces(&s->index, s->min_start, s->max_end - s->min_start,
                                           compact_piece, &k);
        flat_end(s);
        if (0 == rc) rc = k.rc;
    }
    free(k.buf);
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
        atomic_store(&s->coord->folded, P);
        for (int r = 0; r < s->nranks; ++r) {
            atomic_store(&s->coord->rank[r].rec_head, rec_end[r]);
            atomic_store(&s->coord->rank[r].log_head, log_end[r]);
        }
        atomic_fetch_add(&s->coord->compactions, 1);
        for (int r = 0; r < s->nranks; ++r) {
            punch(s, "rec", r, rec_end[r]);
            punch(s, "log", r, log_end[r]);
        }
        s->stats.compactions++;
        (void) catch_up(s);   /* this rank's index starts over too */
    }
    free(rec_end);
    free(log_end);
    compaction_end(s);
    return rc;
}

/* Growable segment array. */
typedef struct {
    mca_common_sfio_ioseg_t *v;
    size_t n, cap;
    uint64_t bytes;
} segvec_t;

static int segvec_push(segvec_t *sv, uint64_t offset, uint64_t length, void *buf)
{
    if (0 == length) {
        return 0;
    }
    if (sv->n == sv->cap) {
        size_t cap = sv->cap ? 2 * sv->cap : 16;
        void *nv = realloc(sv->v, cap * sizeof(*sv->v));
        if (!nv) {
            return -ENOMEM;
        }
        sv->v = nv;
        sv->cap = cap;
    }
    sv->v[sv->n++] = (mca_common_sfio_ioseg_t) { offset, length, buf };
    sv->bytes += length;
    return 0;
}

int mca_common_sfio_vstore_write(mca_common_sfio_vstore_t *s, const mca_common_sfio_ioseg_t *segs,
                                 size_t nsegs, bool atomic, const mca_common_sfio_objects_t *objects,
                                 uint64_t *written_p)
{
    segvec_t direct = { 0 }, versioned = { 0 }, uncovered = { 0 };
    mca_common_sfio_ioseg_t *priv = NULL, *shared = NULL;
    size_t npriv = 0, nshared = 0;
    uint64_t done = 0;
    int rc;

    pthread_mutex_lock(&s->lock);
    if (!s->coord) {
        if (!atomic) {
            /* No version exists for this rank to order after (a rank maps
             * the store at its first atomic access). */
            pthread_mutex_unlock(&s->lock);
            return mca_common_sfio_posix_write_segs(s->flat_fd, segs, nsegs, written_p);
        }
        rc = attach(s, true);
        if (0 != rc) {
            pthread_mutex_unlock(&s->lock);
            *written_p = 0;
            return rc;
        }
    }
    rc = gate_enter(s);
    if (0 != rc) {
        pthread_mutex_unlock(&s->lock);
        *written_p = 0;
        return rc;
    }
    rc = catch_up(s);
    /* Bytes a published version covers must become a version themselves
     * (a later read would overlay them); the rest may go in place when
     * not atomic, or, in atomic mode, when the view intersection (Logan and Dickens) says
     * no other rank can access them. */
    for (size_t i = 0; i < nsegs && 0 == rc; ++i) {
        const mca_common_sfio_ioseg_t *g = &segs[i];
        if (0 == g->length) {
            continue;
        }
        segvec_t *to = mca_common_sfio_vindex_overlaps(&s->index, g->offset, g->length)
                           ? &versioned : (atomic ? &uncovered : &direct);
        rc = segvec_push(to, g->offset, g->length, g->buf);
    }
    if (0 == rc && uncovered.n > 0) {
        rc = mca_common_sfio_segs_split_private(uncovered.v, uncovered.n, objects, &priv, &npriv,
                                                &shared, &nshared);
    }
    for (size_t i = 0; 0 == rc && i < npriv; ++i) {
        rc = segvec_push(&direct, priv[i].offset, priv[i].length, priv[i].buf);
    }
    for (size_t i = 0; 0 == rc && i < nshared; ++i) {
        rc = segvec_push(&versioned, shared[i].offset, shared[i].length, shared[i].buf);
    }
    free(priv);
    free(shared);
    free(uncovered.v);
    if (0 == rc && atomic && direct.n > 0 && direct.bytes <= s->fold.defer_piece_max * direct.n &&
        s->log_tail + direct.bytes <= (uint64_t) s->fold.defer_max) {
        /* Deferred: the log takes the private bytes too (one append), the
         * fold writes them in large windows with their neighbours'. */
        for (size_t i = 0; i < direct.n && 0 == rc; ++i) {
            rc = segvec_push(&versioned, direct.v[i].offset, direct.v[i].length, direct.v[i].buf);
        }
        s->stats.bytes_deferred += direct.bytes;
        direct.n = 0;
        direct.bytes = 0;
    }
    if (atomic && s->journal_private) {
        /* One call is one serial unit, in memory and after a crash.
         * Private bytes past the fresh floor overwrite nothing: they go in
         * place at once, with an undo note; the others are journaled. */
        segvec_t fresh = { 0 }, place = { 0 };
        uint64_t floor = s->fresh_floor, fresh_end = 0;
        for (size_t i = 0; i < direct.n && 0 == rc; ++i) {
            const mca_common_sfio_ioseg_t *g = &direct.v[i];
            uint64_t end = g->offset + g->length;
            uint64_t cut = g->offset >= floor ? g->offset : (end <= floor ? end : floor);
            rc = segvec_push(&place, g->offset, cut - g->offset, g->buf);
            if (0 == rc) {
                rc = segvec_push(&fresh, cut, end - cut, (char *) g->buf + (cut - g->offset));
            }
            if (end > cut && end > fresh_end) {
                fresh_end = end;
            }
        }
        if (0 == rc && versioned.n + direct.n > 0) {
            rc = write_version(s, versioned.v, versioned.n, place.v, place.n, fresh.v, fresh.n);
            if (0 == rc) {
                done = versioned.bytes + direct.bytes;
            }
        }
        if (fresh_end > s->fresh_floor) {
            s->fresh_floor = fresh_end;   /* this rank wrote them: no longer fresh */
        }
        free(fresh.v);
        free(place.v);
    } else {
        if (0 == rc && direct.n > 0) {
            rc = flat_write_segs(s, direct.v, direct.n, &done);
            s->stats.bytes_in_place += done;
        }
        if (0 == rc && versioned.n > 0) {
            rc = write_version(s, versioned.v, versioned.n, NULL, 0, NULL, 0);
            if (0 == rc) {
                done += versioned.bytes;
            }
        }
    }
    gate_leave(s);
    if (0 == rc && over_bounds(s)) {
        int crc = compact(s);
        if (0 != crc) {
            rc = crc;   /* the write is whole; the store could not be bounded */
        }
    }
    pthread_mutex_unlock(&s->lock);
    free(direct.v);
    free(versioned.v);
    *written_p = done;
    return rc;
}

typedef struct {
    mca_common_sfio_vstore_t *s;
    const mca_common_sfio_ioseg_t *seg;
    int rc;
} overlay_ctx_t;

static int overlay_piece(const mca_common_sfio_vpiece_t *p, void *ctx)
{
    overlay_ctx_t *o = ctx;
    if (p->rank < 0) {
        return 0;
    }
    int fd = log_fd_of(o->s, p->rank);
    if (fd < 0) {
        return o->rc = fd;
    }
    char *dst = (char *) o->seg->buf + (p->offset - o->seg->offset);
    ssize_t got = mca_common_sfio_posix_pread_full(fd, dst, (size_t) p->length, p->log_offset);
    if (got != (ssize_t) p->length) {
        return o->rc = got < 0 ? (int) got : -EIO;
    }
    o->s->stats.bytes_overlaid += p->length;
    return 0;
}

int mca_common_sfio_vstore_read(mca_common_sfio_vstore_t *s, const mca_common_sfio_ioseg_t *segs,
                                size_t nsegs, const mca_common_sfio_sieve_policy_t *policy,
                                mca_common_sfio_scratch_t *scratch, uint64_t *read_p)
{
    uint64_t flat_bytes = 0;
    int rc;

    pthread_mutex_lock(&s->lock);
    rc = s->coord ? 0 : attach(s, false);
    bool gated = false;
    if (0 == rc) {
        rc = gate_enter(s);
        gated = 0 == rc;
    } else if (-ENOENT == rc) {
        rc = 0;   /* no store yet: no version exists */
    }
    if (0 == rc) {
        rc = catch_up(s);
    }
    if (0 == rc) {
        rc = mca_common_sfio_posix_read_segs(s->flat_fd, segs, nsegs, policy, scratch, &flat_bytes);
    }
    if (0 != rc || mca_common_sfio_vindex_empty(&s->index)) {
        if (gated) gate_leave(s);
        pthread_mutex_unlock(&s->lock);
        *read_p = flat_bytes;
        return rc;
    }
    /* The snapshot ends at the flat end or at the furthest version's end;
     * bytes between are a hole of zeros, as after a serial write. */
    struct stat st;
    uint64_t flat_size = 0 == fstat(s->flat_fd, &st) ? (uint64_t) st.st_size : 0;
    uint64_t end = flat_size > s->max_end ? flat_size : s->max_end;
    uint64_t total = 0;
    for (size_t i = 0; i < nsegs && 0 == rc; ++i) {
        const mca_common_sfio_ioseg_t *g = &segs[i];
        if (0 == g->length || g->offset >= end) {
            continue;
        }
        uint64_t len = g->offset + g->length <= end ? g->length : end - g->offset;
        if (g->offset + len > flat_size) {
            uint64_t z = g->offset > flat_size ? g->offset : flat_size;
            memset((char *) g->buf + (z - g->offset), 0, (size_t) (g->offset + len - z));
        }
        overlay_ctx_t o = { .s = s, .seg = g, .rc = 0 };
        rc = mca_common_sfio_vindex_pieces(&s->index, g->offset, len, overlay_piece, &o);
        if (0 == rc) rc = o.rc;
        total += len;
    }
    gate_leave(s);
    pthread_mutex_unlock(&s->lock);
    *read_p = total;
    return rc;
}

int mca_common_sfio_vstore_size(mca_common_sfio_vstore_t *s, uint64_t *size_p)
{
    struct stat st;
    pthread_mutex_lock(&s->lock);
    int rc = s->coord ? 0 : attach(s, false);
    bool gated = false;
    if (0 == rc && 0 == (rc = gate_enter(s))) {
        gated = true;
        rc = catch_up(s);
    } else if (-ENOENT == rc) {
        rc = 0;
    }
    if (gated) gate_leave(s);
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
    if (s->fold.defer_max < 0) {
        s->fold.defer_max = (0 == statfs(s->side_dir, &sf) && TMPFS_MAGIC == sf.f_type)
                                ? DEFER_MAX_IN_MEMORY : 0;
    }
}

void mca_common_sfio_vstore_resized(mca_common_sfio_vstore_t *s)
{
    pthread_mutex_lock(&s->lock);
    refresh_fresh_floor(s);
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
