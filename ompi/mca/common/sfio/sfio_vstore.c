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

#define COORD_MAGIC   0x31444f4f43534653ull   /* "SFSCOOD1" */
#define COORD_LAYOUT  2u
#define CLAIMING      UINT64_MAX               /* pending: taking a version */
#define FOLD_CHUNK    (4u << 20)

typedef struct coord_rank_t {
    _Atomic uint64_t rec_tail;   /* bytes of valid records in rec.<rank> */
    _Atomic uint64_t pending;    /* version being published, CLAIMING, or 0 */
    _Atomic int64_t pid;
    char pad[40];
} coord_rank_t;

typedef struct coord_t {
    uint64_t magic;              /* written last by the creator */
    uint32_t layout;
    uint32_t nranks;
    char pad0[48];
    _Atomic uint64_t next_version;   /* last version handed out */
    char pad1[56];
    _Atomic uint64_t published;      /* every version <= this is published */
    char pad2[56];
    _Atomic uint64_t folded;         /* every version <= this is in the flat file */
    char pad3[56];
    _Atomic uint64_t attached;       /* ranks that mapped the store and not yet left */
    char pad4[56];
    coord_rank_t rank[];
} coord_t;

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
    /* A copy of this rank's log [0, logcopy_len), kept until the fold
     * (at most fold.cache_max bytes), so the fold writes back from memory
     * instead of reading the log back over the network. */
    char *logcopy;
    uint64_t logcopy_len, logcopy_cap;
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
    /* Where the sidecars of every store of this flat file live and how
     * their names start (other groups' handles of the same file keep
     * theirs there too), and this store's own name among them. */
    char *side_dir, *side_prefix;
    const char *side_name;
};

/* ------------------------------------------------------------------ */
/* small helpers                                                      */
/* ------------------------------------------------------------------ */

static char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) {
        snprintf(p, n, "%s/%s", dir, name);
    }
    return p;
}

static char *rank_file(const char *dir, const char *kind, int rank)
{
    char name[64];
    snprintf(name, sizeof(name), "%s.%d", kind, rank);
    return path_join(dir, name);
}

/* Where the sidecars of path live and how their names start: beside the
 * file as ".<base>.sfio.", or in store_dir as "sfio-<hash of the absolute
 * path>.<base>." so that files of the same name in different directories
 * never share a sidecar. */
static int sidecar_parts(const char *path, const char *store_dir, char **dir_p, char **prefix_p)
{
    char *a = strdup(path), *b = strdup(path);
    if (!a || !b) {
        free(a);
        free(b);
        return -ENOMEM;
    }
    bool beside = NULL == store_dir || '\0' == store_dir[0];
    char *dir = strdup(beside ? dirname(a) : store_dir);
    const char *base = basename(b);
    size_t n = strlen(base) + 40;
    char *prefix = malloc(n);
    if (!dir || !prefix) {
        free(a); free(b); free(dir); free(prefix);
        return -ENOMEM;
    }
    if (beside) {
        snprintf(prefix, n, ".%s.sfio.", base);
    } else {
        uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a of the absolute path */
        for (const unsigned char *p = (const unsigned char *) path; *p; ++p) {
            h = (h ^ *p) * 0x100000001b3ull;
        }
        snprintf(prefix, n, "sfio-%016llx.%s.", (unsigned long long) h, base);
    }
    free(a);
    free(b);
    *dir_p = dir;
    *prefix_p = prefix;
    return 0;
}

static size_t coord_bytes(int nranks)
{
    return sizeof(coord_t) + (size_t) nranks * sizeof(coord_rank_t);
}

/* Byte ranges of the coordination file used as locks (never data):
 *  - byte 0, liveness: every rank of the group holds a read lock on it
 *    while the store is open; recovery takes a write lock (so the file
 *    is named "coord" only once rank 0 holds its read lock: a probe of a
 *    live store then fails without taking anything);
 *  - byte 1 + r, a whole window: rank r holds a write lock on it while its
 *    fold writes windows whole, holes included (bytes read back from the
 *    flat file just before); a group opening a store of the same file
 *    waits on these bytes of every other store first.
 * OFD locks belong to the open file, not the process, so two handles of
 * one process on the same file do not mistake each other for dead. */
#define COORD_LIVE_BYTE      ((off_t) 0)
#define COORD_WINDOW_BYTE(r) ((off_t) 1 + (off_t) (r))

static int coord_lock_range(int fd, short type, bool wait, off_t start, off_t len)
{
    struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
    while (0 != fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl)) {
        if (EINTR != errno) {
            return -errno;
        }
    }
    return 0;
}

static int coord_lock(int fd, short type, bool wait)
{
    return coord_lock_range(fd, type, wait, COORD_LIVE_BYTE, 1);
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

static int log_fd_of(mca_common_sfio_vstore_t *s, int rank)
{
    if (s->log_fds[rank] < 0) {
        char *p = rank_file(s->dir, "log", rank);
        if (!p) {
            return -ENOMEM;
        }
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        int err = errno;
        free(p);
        if (fd < 0) {
            return -err;
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
}

/* Brings the index to the newest published version.  Caller holds lock. */
static int catch_up(mca_common_sfio_vstore_t *s)
{
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
            char *p = rank_file(s->dir, "rec", r);
            tmpfd = p ? open(p, O_RDONLY | O_CLOEXEC) : -1;
            free(p);
            if (tmpfd < 0) {
                rc = -EIO;
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
            memset(s->rec_cursor, 0, (size_t) s->nranks * sizeof(uint64_t));
            s->seen = 0;
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

static bool pid_dead(int64_t pid)
{
    return pid > 0 && 0 != kill((pid_t) pid, 0) && ESRCH == errno;
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
            return pid_dead(pid);
        }
        if (CLAIMING == pend) {
            if (!pid_dead(pid)) {
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

static int recover_all(const char *path, const char *store_dir, int flat_fd, uint64_t *undone_p);

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
        if (!cp) {
            rc = -ENOMEM;
        } else {
            int fd = open(cp, O_RDONLY | O_CLOEXEC);
            rc = fn(fd, sc);
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

/* What rank 0 tells the others at open: its verdict and the sidecar. */
typedef struct {
    int rc;
    char id[4092];
} open_msg_t;

int mca_common_sfio_vstore_open(const char *path, const char *store_dir, int flat_fd,
                                const mca_common_sfio_coll_t *coll,
                                mca_common_sfio_vstore_t **store_p)
{
    open_msg_t msg = { 0 };
    char *coord_path = NULL, *coord_tmp = NULL;
    int rc = 0;

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

    if (0 == rc) {
        rc = sidecar_parts(path, store_dir, &s->side_dir, &s->side_prefix);
    }

    /* Rank 0 recovers what a crashed job left, then creates a fresh
     * sidecar and its coordination file; one broadcast tells the rest. */
    if (0 == coll->rank) {
        const char *dir = s ? s->side_dir : NULL, *prefix = s ? s->side_prefix : NULL;
        if (0 == rc) {
            int n = recover_all(path, store_dir, flat_fd, &s->stats.bytes_undone);
            rc = n < 0 ? n : 0;
            s->stats.recovered_stores = n > 0 ? (uint64_t) n : 0;
        }
        if (0 == rc) {
            static _Atomic unsigned serial;
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            snprintf(msg.id, sizeof(msg.id), "%s/%s%ld.%ld.%u", dir, prefix, (long) getpid(),
                     (long) ts.tv_nsec, atomic_fetch_add(&serial, 1));
            if (0 != mkdir(msg.id, 0700)) {
                rc = -errno;
            } else if (!(coord_path = path_join(msg.id, "coord")) ||
                       !(coord_tmp = path_join(msg.id, "coord.new"))) {
                rc = -ENOMEM;
            } else if ((s->coord_fd = open(coord_tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) {
                rc = -errno;
            } else if ((rc = coord_lock(s->coord_fd, F_RDLCK, false)) == 0 &&
                       0 != ftruncate(s->coord_fd, (off_t) s->coord_size)) {
                rc = -errno;
            }
        }
        if (0 == rc) {
            s->coord = mmap(NULL, s->coord_size, PROT_READ | PROT_WRITE, MAP_SHARED, s->coord_fd, 0);
            if (MAP_FAILED == (void *) s->coord) {
                s->coord = NULL;
                rc = -errno;
            } else {
                s->coord->layout = COORD_LAYOUT;
                s->coord->nranks = (uint32_t) coll->size;
                atomic_thread_fence(memory_order_release);
                s->coord->magic = COORD_MAGIC;
            }
        }
        if (0 == rc) {
            /* Published under its own name only now, locked and complete:
             * another group's recovery probes every coordination file it
             * finds with a write lock, and one taken between our create
             * and our lock made our lock fail (EAGAIN) and this open with
             * it.  The lock belongs to the open file and survives the
             * rename. */
            if (0 != rename(coord_tmp, coord_path)) {
                rc = -errno;
            }
        }
        if (0 == rc) {
            /* Other groups' folds now see this store: wait for the ones
             * already writing windows whole (no rank of this group has
             * written yet: they wait in the broadcast). */
            s->side_name = strrchr(msg.id, '/') + 1;
            wait_other_windows(s);
        }
        msg.rc = rc;
    }
    if (0 != coll->bcast(coll->ctx, &msg, sizeof(msg), 0)) {
        msg.rc = -EIO;
    }
    if (0 != msg.rc && 0 == rc) {
        rc = msg.rc;
    }

    /* The others map the coordination file. */
    if (0 == rc && 0 != coll->rank) {
        if (!(coord_path = path_join(msg.id, "coord"))) {
            rc = -ENOMEM;
        } else if ((s->coord_fd = open(coord_path, O_RDWR | O_CLOEXEC)) < 0) {
            rc = -errno;
        } else if (0 == (rc = coord_lock(s->coord_fd, F_RDLCK, false))) {
            s->coord = mmap(NULL, s->coord_size, PROT_READ | PROT_WRITE, MAP_SHARED, s->coord_fd, 0);
            if (MAP_FAILED == (void *) s->coord) {
                s->coord = NULL;
                rc = -errno;
            } else if (COORD_MAGIC != s->coord->magic ||
                       s->coord->nranks != (uint32_t) coll->size) {
                rc = -EPROTO;   /* not the same node's file: no shared memory */
            }
        }
    }
    free(coord_path);
    free(coord_tmp);
    if (0 == rc && !(s->dir = strdup(msg.id))) {
        rc = -ENOMEM;
    }
    if (0 == rc) {
        s->side_name = strrchr(s->dir, '/') + 1;   /* msg.id is <side_dir>/<name> */
    }
    if (0 == rc) {
        /* Logs are created at this rank's first versioned write. */
        atomic_store(&s->coord->rank[s->rank].pid, (int64_t) getpid());
        atomic_fetch_add(&s->coord->attached, 1);
    }
    rc = agree(coll, rc);
    if (0 == rc) {
        refresh_fresh_floor(s);   /* after the open's collective agreement */
    }
    if (0 != rc) {
        if (0 == coll->rank && '\0' != msg.id[0]) {
            char *cp = path_join(msg.id, "coord"), *tp = path_join(msg.id, "coord.new");
            if (cp) unlink(cp);
            if (tp) unlink(tp);
            free(cp);
            free(tp);
            rmdir(msg.id);
        }
        store_free(s);
        return rc;
    }
    *store_p = s;
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
    if (start != s->logcopy_len || bytes > s->fold.cache_max ||
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
        memcpy(s->logcopy + logsegs[i].offset, logsegs[i].buf, (size_t) logsegs[i].length);
    }
    s->logcopy_len += bytes;
}

/* Drops the copy with the log it mirrors (after a fold); a large buffer
 * is released rather than kept through the next epoch. */
static void logcopy_reset(mca_common_sfio_vstore_t *s)
{
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
    char *lp = rank_file(s->dir, "log", s->rank), *rp = rank_file(s->dir, "rec", s->rank);
    int rc = 0;
    if (!lp || !rp) {
        rc = -ENOMEM;
    } else if ((s->log_fd = open(lp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0) {
        rc = -errno;
    } else if ((s->rec_fd = open(rp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0) {
        rc = -errno;
        close(s->log_fd);
        s->log_fd = -1;
        unlink(lp);
    } else {
        s->log_fds[s->rank] = s->log_fd;
    }
    free(lp);
    free(rp);
    return rc;
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
        while (k < n && segs[k].offset + segs[k].length <= s->logcopy_len) {
            memcpy(segs[k].buf, s->logcopy + segs[k].offset, (size_t) segs[k].length);
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
                rc = mca_common_sfio_posix_write_segs(s->flat_fd, pieces, w.count, &done);
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
        if (0 == rc && mca_common_sfio_posix_pwrite_full(s->flat_fd, buf, (size_t) w.length, w.offset)
                           != (ssize_t) w.length) {
            rc = -EIO;
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
#define FOLD_COPIED(i) (fp.rank[i] == s->rank && fp.log_offset[i] + fp.segs[i].length <= s->logcopy_len)
    char *buf = NULL;
    mca_common_sfio_scratch_t scratch = { 0 };
    for (size_t k = 0; 0 == rc && k < m;) {
        size_t e = k;
        uint64_t done = 0;
        if (FOLD_COPIED(k)) {
            /* a run of pieces in the copy: one vectored write */
            while (e < m && FOLD_COPIED(e)) {
                fp.segs[e].buf = s->logcopy + fp.log_offset[e];
                e++;
            }
            rc = mca_common_sfio_posix_write_segs(s->flat_fd, fp.segs + k, e - k, &done);
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
                rc = mca_common_sfio_posix_write_segs(s->flat_fd, fp.segs + k, e - k, &done);
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
    s->fresh_floor = UINT64_MAX;   /* until this collective point completes */
    pthread_mutex_lock(&s->lock);
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
        logcopy_reset(s);
        atomic_store(&s->coord->rank[s->rank].rec_tail, 0);
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
        rc = mca_common_sfio_posix_write_segs(s->flat_fd, fresh, nfresh, &done);
        s->stats.bytes_in_place += done;
        s->stats.bytes_fresh += done;
    }
    return rc;
}

/* Makes one version of an atomic write: shared segs become readable
 * through the index; place segs (seed 004's private bytes over old data)
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
        rc = mca_common_sfio_posix_write_segs(s->flat_fd, place, nplace, &done);
        s->stats.bytes_in_place += done;
    }
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
    rc = catch_up(s);
    /* Bytes a published version covers must become a version themselves
     * (a later read would overlay them); the rest may go in place when
     * not atomic, or, in atomic mode, when seed 004 says no other rank can
     * access them. */
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
            rc = mca_common_sfio_posix_write_segs(s->flat_fd, direct.v, direct.n, &done);
            s->stats.bytes_in_place += done;
        }
        if (0 == rc && versioned.n > 0) {
            rc = write_version(s, versioned.v, versioned.n, NULL, 0, NULL, 0);
            if (0 == rc) {
                done += versioned.bytes;
            }
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
    rc = catch_up(s);
    if (0 == rc) {
        rc = mca_common_sfio_posix_read_segs(s->flat_fd, segs, nsegs, policy, scratch, &flat_bytes);
    }
    if (0 != rc || mca_common_sfio_vindex_empty(&s->index)) {
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
    pthread_mutex_unlock(&s->lock);
    *read_p = total;
    return rc;
}

int mca_common_sfio_vstore_size(mca_common_sfio_vstore_t *s, uint64_t *size_p)
{
    struct stat st;
    pthread_mutex_lock(&s->lock);
    int rc = catch_up(s);
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
    if (s->fold.window < 4096) {
        s->fold.window = 4096;
    }
    if (s->fold.defer_max < 0) {
        s->fold.defer_max = (0 == statfs(s->dir, &sf) && TMPFS_MAGIC == sf.f_type)
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

const char *mca_common_sfio_vstore_dir(const mca_common_sfio_vstore_t *s)
{
    return s->dir;
}

/* ------------------------------------------------------------------ */
/* recovery                                                           */
/* ------------------------------------------------------------------ */

typedef struct {
    int *log_fds;
    int flat_fd;
    char *buf;
    int rc;
} recover_ctx_t;

static int recover_piece(const mca_common_sfio_vpiece_t *p, void *ctx)
{
    recover_ctx_t *r = ctx;
    uint64_t done = 0;
    while (done < p->length) {
        size_t n = (size_t) (p->length - done < FOLD_CHUNK ? p->length - done : FOLD_CHUNK);
        ssize_t got = mca_common_sfio_posix_pread_full(r->log_fds[p->rank], r->buf, n,
                                                       p->log_offset + done);
        if (got != (ssize_t) n ||
            mca_common_sfio_posix_pwrite_full(r->flat_fd, r->buf, n, p->offset + done) != (ssize_t) n) {
            return r->rc = -EIO;
        }
        done += n;
    }
    return 0;
}

/* Ranges of FRESH records whose write never completed. */
typedef struct {
    mca_common_sfio_range_t *v;
    size_t n, cap;
} undo_list_t;

static int undo_note(undo_list_t *u, const char *buf, size_t pos, size_t tail,
                     const mca_common_sfio_record_t *fresh, uint64_t P)
{
    mca_common_sfio_record_t next;
    size_t at = pos + fresh->size;
    if (at < tail && 0 == mca_common_sfio_record_decode(buf + at, tail - at, &next) &&
        0 != next.version && next.version <= P) {
        return 0;   /* its version is published: the write is whole */
    }
    for (uint32_t i = 0; i < fresh->nranges; ++i) {
        if (u->n == u->cap) {
            size_t cap = u->cap ? 2 * u->cap : 16;
            void *nv = realloc(u->v, cap * sizeof(*u->v));
            if (!nv) {
                return -ENOMEM;
            }
            u->v = nv;
            u->cap = cap;
        }
        u->v[u->n++] = fresh->ranges[i];
    }
    return 0;
}

static int by_offset(const void *a, const void *b)
{
    const mca_common_sfio_range_t *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Undoes fresh bytes of unfinished writes: they held nothing, so they
 * become holes again, and a file tail made only of them is cut off. */
static int undo_fresh(undo_list_t *u, int flat_fd, uint64_t *undone_p)
{
    static const char zeros[65536];
    struct stat st;
    if (0 == u->n) {
        return 0;
    }
    if (0 != fstat(flat_fd, &st)) {
        return -errno;
    }
    uint64_t size = (uint64_t) st.st_size;
    qsort(u->v, u->n, sizeof(*u->v), by_offset);
    uint64_t tail_start = UINT64_MAX, run_start = 0, run_end = 0;
    for (size_t i = 0; i < u->n; ++i) {
        uint64_t off = u->v[i].offset, end = off + u->v[i].length;
        if (end > size) end = size;
        *undone_p += end > off ? end - off : 0;
        for (uint64_t pos = off; pos < end;) {
            size_t n = end - pos < sizeof(zeros) ? (size_t) (end - pos) : sizeof(zeros);
            if (mca_common_sfio_posix_pwrite_full(flat_fd, zeros, n, pos) != (ssize_t) n) {
                return -EIO;
            }
            pos += n;
        }
        if (0 == i || off > run_end) {
            run_start = off;
            run_end = off + u->v[i].length;
        } else if (off + u->v[i].length > run_end) {
            run_end = off + u->v[i].length;
        }
        if (run_end >= size && run_start < tail_start) {
            tail_start = run_start;
        }
    }
    if (tail_start < size && 0 != ftruncate(flat_fd, (off_t) tail_start)) {
        return -errno;
    }
    return 0;
}

/* Applies one orphaned sidecar to the flat file and removes it.  Returns
 * 1 when recovered, 0 when the sidecar is alive or incomplete, or a
 * negative errno. */
static int recover_one(const char *sidecar, int flat_fd, uint64_t *undone_p)
{
    char *cp = path_join(sidecar, "coord");
    int fd = cp ? open(cp, O_RDWR | O_CLOEXEC) : -1;
    if (fd < 0) {
        free(cp);
        return 0;                    /* being created, or litter: leave it */
    }
    if (0 != coord_lock(fd, F_WRLCK, false)) {
        close(fd);
        free(cp);
        return 0;                    /* a live group holds it */
    }
    struct stat st;
    coord_t *c = NULL;
    if (0 != fstat(fd, &st) || (size_t) st.st_size < sizeof(coord_t) ||
        MAP_FAILED == (void *) (c = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE,
                                         MAP_SHARED, fd, 0)) ||
        COORD_MAGIC != c->magic || (size_t) st.st_size < coord_bytes((int) c->nranks)) {
        if (c && MAP_FAILED != (void *) c) munmap(c, (size_t) st.st_size);
        close(fd);
        free(cp);
        return 0;
    }
    int nranks = (int) c->nranks;
    uint64_t P = atomic_load(&c->published), F = atomic_load(&c->folded);
    mca_common_sfio_vindex_t index;
    mca_common_sfio_vindex_init(&index, NULL);
    mca_common_sfio_vindex_pending_t *pend = NULL;
    size_t npend = 0, cap = 0;
    undo_list_t undo = { 0 };
    char **bufs = calloc((size_t) nranks, sizeof(char *));
    int *log_fds = malloc((size_t) nranks * sizeof(int));
    int rc = (bufs && log_fds) ? 0 : -ENOMEM;
    for (int r = 0; r < nranks && log_fds; ++r) log_fds[r] = -1;

    for (int r = 0; r < nranks && 0 == rc; ++r) {
        uint64_t tail = atomic_load(&c->rank[r].rec_tail);
        char *rp = rank_file(sidecar, "rec", r), *lp = rank_file(sidecar, "log", r);
        int rfd = rp ? open(rp, O_RDONLY | O_CLOEXEC) : -1;
        log_fds[r] = lp ? open(lp, O_RDONLY | O_CLOEXEC) : -1;
        free(rp);
        free(lp);
        if (0 == tail) {
            if (rfd >= 0) close(rfd);
            continue;
        }
        bufs[r] = malloc((size_t) tail);
        ssize_t got = (rfd >= 0 && bufs[r]) ? mca_common_sfio_posix_pread_full(rfd, bufs[r], (size_t) tail, 0) : -EIO;
        if (rfd >= 0) close(rfd);
        if (got != (ssize_t) tail || log_fds[r] < 0) {
            rc = -EIO;
            break;
        }
        for (size_t pos = 0; pos < tail;) {
            mca_common_sfio_record_t rec;
            if (0 != mca_common_sfio_record_decode(bufs[r] + pos, (size_t) tail - pos, &rec)) {
                rc = -EIO;
                break;
            }
            if (MCA_COMMON_SFIO_RECORD_FRESH == rec.kind &&
                0 != (rc = undo_note(&undo, bufs[r], pos, (size_t) tail, &rec, P))) {
                break;
            }
            /* Recovery redoes journaled in-place bytes like any others. */
            if (MCA_COMMON_SFIO_RECORD_PLACE == rec.kind) {
                rec.kind = MCA_COMMON_SFIO_RECORD_WRITE;
            }
            if (MCA_COMMON_SFIO_RECORD_WRITE == rec.kind && rec.version > F && rec.version <= P) {
                if (npend == cap) {
                    cap = cap ? 2 * cap : 64;
                    void *np = realloc(pend, cap * sizeof(*pend));
                    if (!np) { rc = -ENOMEM; break; }
                    pend = np;
                }
                pend[npend++] = (mca_common_sfio_vindex_pending_t) { .rank = r, .record = rec };
            }
            pos += rec.size;
        }
    }
    if (0 == rc) {
        rc = mca_common_sfio_vindex_apply_batch(&index, pend, npend);
    }
    if (0 == rc) {
        rc = undo_fresh(&undo, flat_fd, undone_p);   /* before the redo, which may extend the file */
    }
    free(undo.v);
    for (int r = 0; r < nranks && 0 == rc; ++r) {
        recover_ctx_t ctx = { .log_fds = log_fds, .flat_fd = flat_fd, .buf = malloc(FOLD_CHUNK), .rc = 0 };
        rc = ctx.buf ? mca_common_sfio_vindex_foreach_rank(&index, r, recover_piece, &ctx) : -ENOMEM;
        if (0 == rc) rc = ctx.rc;
        free(ctx.buf);
    }
    if (0 == rc && 0 != fsync(flat_fd)) {
        rc = -errno;
    }
    if (0 == rc) {
        atomic_store(&c->folded, P);   /* a second recovery would redo nothing */
        for (int r = 0; r < nranks; ++r) {
            char *rp = rank_file(sidecar, "rec", r), *lp = rank_file(sidecar, "log", r);
            if (rp) unlink(rp);
            if (lp) unlink(lp);
            free(rp);
            free(lp);
        }
        unlink(cp);
        rmdir(sidecar);
    }
    for (int r = 0; r < nranks; ++r) {
        if (bufs) free(bufs[r]);
        if (log_fds && log_fds[r] >= 0) close(log_fds[r]);
    }
    free(bufs);
    free(log_fds);
    free(pend);
    mca_common_sfio_vindex_destroy(&index);
    munmap(c, (size_t) st.st_size);
    close(fd);
    free(cp);
    return 0 == rc ? 1 : rc;
}

static int recover_all(const char *path, const char *store_dir, int flat_fd, uint64_t *undone_p)
{
    char *dir = NULL, *prefix = NULL;
    int rc = sidecar_parts(path, store_dir, &dir, &prefix), count = 0;
    if (0 != rc) {
        return rc;
    }
    DIR *d = opendir(dir);
    if (!d) {
        rc = -errno;
    }
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (0 != strncmp(e->d_name, prefix, strlen(prefix))) {
            continue;
        }
        char *sc = path_join(dir, e->d_name);
        int n = sc ? recover_one(sc, flat_fd, undone_p) : -ENOMEM;
        free(sc);
        if (n < 0) {
            rc = n;
            break;
        }
        count += n;
    }
    if (d) closedir(d);
    free(dir);
    free(prefix);
    return rc < 0 ? rc : count;
}

int mca_common_sfio_vstore_recover(const char *path, const char *store_dir, int flat_fd)
{
    uint64_t undone = 0;
    return recover_all(path, store_dir, flat_fd, &undone);
}
