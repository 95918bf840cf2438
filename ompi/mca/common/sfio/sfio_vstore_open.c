/*
 * sfio_vstore_open: a group's store of one file: found or made at open
 * (and at the first atomic access, attach), other groups' stores of the
 * same file, and close.
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

#include "sfio_coord.h"
#include "sfio_fsmagic.h"
#include "sfio_vstore.h"
#include "sfio_foldplan.h"
#include "sfio_vindex.h"
#include "sfio_lockplan.h"
#include "sfio_vstore_int.h"

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
    DIR *d = sfio_opendir_stores(s->side_dir, s->dir);
    if (!d) {
        return -errno;   /* 0: no other subdirectory, so no other store */
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
bool sfio_vstore_others_open(const mca_common_sfio_vstore_t *s)
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
 * sfio_vstore_others_open() sees it): waits until no rank of another group of the
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
    sfio_vstore_stores_remove(s);
    free(s->side_dir);
    free(s->side_prefix);
    free(s->logcopy);
    sfio_vstore_drop_readers(s);
    if (s->log_fd >= 0) close(s->log_fd);
    if (s->rec_fd >= 0) close(s->rec_fd);
    if (s->coord && MAP_FAILED != (void *) s->coord) munmap(s->coord, s->coord_size);
    if (s->coord_fd >= 0) close(s->coord_fd);   /* drops the liveness lock */
    mca_common_sfio_vindex_destroy(&s->index);
    pthread_mutex_destroy(&s->lock);
    free(s->log_fds);
    free(s->rec_fds);
    free(s->rec_cursor);
    free(s->fold_facts);
    free(s->fold_counts);
    free(s->fold_displs);
    free(s->recgather);
    free(s->recbuf);
    free(s->dir);
    free(s);
}

int sfio_vstore_agree(const mca_common_sfio_coll_t *c, int rc)
{
    int v = -rc;   /* errno values are positive: max picks a failure */
    if (0 != c->allreduce_max_int(c->ctx, &v)) {
        return -EIO;
    }
    return -v;
}

void mca_common_sfio_vstore_name(const char *path, const char *store_dir, int flat_fd,
                                 mca_common_sfio_vstore_name_t *name, const char **warn_p)
{
    char *places[2] = { NULL, NULL };
    int rc = sfio_ident_of_fd(flat_fd, &name->ident);
    *warn_p = NULL;
    if (0 == rc) {
        rc = sfio_places(path, flat_fd, store_dir, places, warn_p);
    }
    /* the store is made later, by whichever rank needs it first: a place
     * nobody could make it in is known now, alike on all ranks */
    if (0 == rc && 0 != access(places[0], W_OK | X_OK)) {
        rc = -errno;
    }
    char leaf[128];
    if (0 == rc) {
        rc = sfio_store_name(name->ident.ino, leaf, sizeof(leaf));
    }
    if (0 == rc && (size_t) snprintf(name->id, sizeof(name->id), "%s/%s", places[0], leaf) >=
                       sizeof(name->id)) {
        rc = -ENAMETOOLONG;
    }
    sfio_places_free(places);
    name->rc = rc;
}

/* The unit in which reserved space is counted: fallocate allocates whole
 * blocks, so the bytes up to the end of the last block reserved have
 * theirs too.  The file system's block (f_bsize) where it says one of at
 * most 4 KiB; 4 KiB where it reports more (NFS reports its transfer size,
 * not its server's block, which is 4 KiB on the usual server file
 * systems). */
static uint64_t reserve_unit(int fd)
{
    struct statfs sf;
    uint64_t b = 0 == fstatfs(fd, &sf) && sf.f_bsize > 0 ? (uint64_t) sf.f_bsize : 512;
    uint64_t unit = 512;
    while (unit * 2 <= b && unit * 2 <= 4096) {
        unit *= 2;
    }
    return unit;
}

int mca_common_sfio_vstore_named_open(const mca_common_sfio_vstore_name_t *name, int flat_fd,
                                      const mca_common_sfio_coll_t *coll,
                                      mca_common_sfio_vstore_t **store_p)
{
    *store_p = NULL;
    if (0 != name->rc) {
        return name->rc;
    }
    if ((unsigned) coll->size > MCA_COMMON_SFIO_VINDEX_MAX_RANKS) {
        return -E2BIG;
    }
    mca_common_sfio_vstore_t *s = calloc(1, sizeof(*s));
    if (!s) {
        return -ENOMEM;
    }
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
    s->shared = &sfio_vshared_mapped;
    s->reserve = true;
    s->reserve_unit = reserve_unit(flat_fd);
    pthread_mutex_init(&s->lock, NULL);
    mca_common_sfio_vindex_init(&s->index, NULL);
    s->log_fds = malloc((size_t) coll->size * sizeof(int));
    s->rec_fds = malloc((size_t) coll->size * sizeof(int));
    s->rec_cursor = calloc((size_t) coll->size, sizeof(uint64_t));
    s->fold_facts = calloc((size_t) coll->size, sizeof(*s->fold_facts));
    s->fold_counts = calloc((size_t) coll->size, sizeof(int));
    s->fold_displs = calloc((size_t) coll->size, sizeof(int));
    for (int r = 0; r < coll->size; ++r) {
        /* store_free closes what is >= 0 */
        if (s->log_fds) s->log_fds[r] = -1;
        if (s->rec_fds) s->rec_fds[r] = -1;
    }
    s->ident = name->ident;
    int rc = 0;
    if (!s->log_fds || !s->rec_fds || !s->rec_cursor || !s->fold_facts || !s->fold_counts ||
        !s->fold_displs || !(s->dir = strdup(name->id)) || !(s->side_dir = strdup(name->id)) ||
        !(s->side_prefix = sfio_store_prefix(name->ident.ino))) {
        rc = -ENOMEM;
    }
    char *slash = 0 == rc ? strrchr(s->side_dir, '/') : NULL;
    if (0 == rc && NULL == slash) {
        rc = -EINVAL;   /* rank 0 always names a path with a directory */
    }
    if (0 != rc) {
        store_free(s);
        return rc;
    }
    *slash = '\0';
    s->side_name = strrchr(s->dir, '/') + 1;
    *store_p = s;
    return 0;
}

void mca_common_sfio_vstore_begin(mca_common_sfio_vstore_t *s)
{
    sfio_vstore_refresh_fresh_floor(s);   /* after the open's collective agreement: the epoch begins */
    sfio_vstore_stores_add(s);
}

void mca_common_sfio_vstore_discard(mca_common_sfio_vstore_t *s)
{
    if (NULL != s) {
        store_free(s);
    }
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
        c->ident.dev != s->ident.dev || c->ident.uid != (uint32_t) geteuid() ||
        c->shared_by != s->shared->shared_by) {
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
    if (0 == rc) rc = sfio_vstore_coord_lock(fd, F_RDLCK, false);
    if (0 == rc && 0 != ftruncate(fd, (off_t) s->coord_size)) rc = -errno;
    /* blocks for every field now: a later update never meets a full disk */
    if (0 == rc) {
        int frc = posix_fallocate(fd, 0, (off_t) s->coord_size);
        if (0 != frc && EOPNOTSUPP != frc && EINVAL != frc) rc = -frc;
    }
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
        c->shared_by = s->shared->shared_by;
        int64_t m = sfio_mtime_ns_of_fd(s->flat_fd);
        atomic_store(&c->flat_mtime_ns, m > 0 ? m : 0);
        atomic_thread_fence(memory_order_release);
        c->magic = SFIO_COORD_MAGIC;
        /* Other nodes write their fields with pwrite: where clients
         * cache (NFS) this page must reach the server before any of them
         * opens the file (coherent file systems show it at once). */
        if (s->caching_clients && 0 != msync(c, s->coord_size, MS_SYNC)) {
            rc = -errno;
        }
        /* published under its name only now, locked and complete */
        if (0 == rc && 0 != rename(tmp, cp)) {
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
int sfio_vstore_attach(mca_common_sfio_vstore_t *s, bool create)
{
    if (s->coord) {
        return 0;
    }
    int rc = -ENOENT;
    bool made = false;
    if (create) {
        s->tried_making = true;
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
                } else if (0 == (rc = sfio_vstore_coord_lock(fd, F_RDLCK, false))) {
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
    sfio_vshared_marks_t m;
    int jrc = s->shared->join(s);
    if (0 == jrc) jrc = s->shared->marks(s, &m);
    if (0 == jrc) {
        s->seen_compactions = m.compactions;
        s->folded_seen = m.folded;
        s->folded_known = true;
        jrc = sfio_vstore_restart_index(s, m.folded);
    }
    return jrc;
}

/* The last collective of close: closing the coordination service agrees
 * over the group (no rank's operation is still in flight), which is the
 * barrier close needs; without a service, a barrier. */
static int close_collective(mca_common_sfio_vstore_t *s)
{
    int rc = NULL != s->service ? mca_common_sfio_coord_close(s->service)
                                : s->coll.barrier(s->coll.ctx);
    s->service = NULL;
    return 0 != rc ? -EIO : 0;
}

/* Whether this rank has made, tried to make or mapped the store: a store
 * exists on disk or in a service only after some rank did. */
int sfio_vstore_touched(mca_common_sfio_vstore_t *s)
{
    pthread_mutex_lock(&s->lock);
    int t = NULL != s->coord || s->tried_making;
    pthread_mutex_unlock(&s->lock);
    return t;
}

bool mca_common_sfio_vstore_touched(mca_common_sfio_vstore_t *s)
{
    return 0 != sfio_vstore_touched(s);
}

int mca_common_sfio_vstore_close(mca_common_sfio_vstore_t *s, bool untouched,
                                 mca_common_sfio_vstore_stats_t *stats_p)
{
    /* OMPIO's close barrier is behind every rank: when no rank touched the
     * store (a file never written atomically), nothing of it exists and
     * no rank can still use the service, so one agreement closes it, or
     * none where the caller knows it. */
    int any = untouched ? 0 : sfio_vstore_touched(s);
    if (!untouched && 0 != s->coll.allreduce_max_int(s->coll.ctx, &any)) {
        any = 1;   /* the full close reports what broke */
    }
    if (!any) {
        if (NULL != stats_p) {
            *stats_p = s->stats;
        }
        int qrc = NULL != s->service ? mca_common_sfio_coord_close_quiesced(s->service) : 0;
        s->service = NULL;
        store_free(s);
        return 0 != qrc ? -EIO : 0;
    }
    int rc = sfio_vstore_fold_at(s, false, true, true);
    if (NULL != stats_p) {
        *stats_p = s->stats;
    }
    if (!s->coord) {
        /* never made (every rank agrees after the fold): nothing on disk */
        int brc = close_collective(s);
        store_free(s);
        return rc ? rc : brc;
    }
    if (0 == rc && s->log_fd >= 0) {
        /* Folded: this rank's logs hold nothing the flat file lacks. */
        char *lp = rank_file(s->dir, "log", s->rank), *rp = rank_file(s->dir, "rec", s->rank);
        if (lp) unlink(lp);
        if (rp) unlink(rp);
        free(lp);
        free(rp);
    }
    int lrc = s->shared->leave(s);
    /* When close returns on any rank the sidecar is gone: rank 0 waits
     * until every rank has left (their logs unlinked), removes it, then
     * one collective releases everyone.  A failed fold leaves it for the
     * next open to recover; so does a rank that cannot leave. */
    if (0 == s->rank && 0 == rc && 0 == lrc) {
        if (s->shared->all_left(s)) {
            char *cp = path_join(s->dir, "coord");
            if (cp) unlink(cp);
            free(cp);
            rmdir(s->dir);
        }
    }
    int brc = close_collective(s);
    store_free(s);
    return rc ? rc : brc;
}

void mca_common_sfio_vstore_use_service(mca_common_sfio_vstore_t *s,
                                        struct mca_common_sfio_coord_t *service)
{
    s->service = service;
    s->shared = &sfio_vshared_service;
    s->caching_clients = mca_common_sfio_fs_clients_cache((long) s->ident.fs_type);
}
