/*
 * sfio_vstore_recover: finding a file's stores left behind by a job that
 * died, and deciding for each whether it may be applied, then applying
 * (redo published versions, undo fresh bytes of unfinished writes) or
 * discarding it.  Used at every open of a file and by the sfio-store
 * tool.  A store is applied only when it is this user's, every file in
 * it is a regular file of this user reached without a symlink, it is made
 * for this very file (device, inode, birth time) and the file was not
 * modified after the group's last write.  Nothing here blocks on a lock.
 *
 * A store whose counters lived in the coordination service (shared_by)
 * kept no published mark: the versions redone are then the longest run
 * of whole records above the folded mark (sfio_recplan), which holds
 * every published version.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sfio_fsmagic.h"
#include "sfio_posixio.h"
#include "sfio_vstore.h"
#include "sfio_vstore_int.h"
#include "sfio_vindex.h"
#include "sfio_record.h"
#include "sfio_recplan.h"

#define APPLY_CHUNK (4u << 20)
/* A write of the group in flight at the crash may leave an mtime this
 * much after it began. */
#define IN_FLIGHT_NS ((int64_t) 10 * 1000000000)

typedef struct {
    int *log_fds;
    int flat_fd;
    char *buf;
    const char *const *recs;     /* per rank, its record log from recs_at[rank] on */
    const uint64_t *recs_at;
    const size_t *recs_len;
    int rc;
} apply_ctx_t;

static int apply_piece(const mca_common_sfio_vpiece_t *p, void *ctx)
{
    apply_ctx_t *r = ctx;
    int rc;
    if (p->log_offset & MCA_COMMON_SFIO_RECORD_IN_RECLOG) {
        /* bytes a record carried: in the records read already */
        uint64_t at = p->log_offset & ~MCA_COMMON_SFIO_RECORD_IN_RECLOG;
        if (at < r->recs_at[p->rank] || p->length > r->recs_len[p->rank] ||
            at - r->recs_at[p->rank] > r->recs_len[p->rank] - p->length) {
            rc = -EBADMSG;
        } else {
            ssize_t put = mca_common_sfio_posix_pwrite_full(
                r->flat_fd, r->recs[p->rank] + (at - r->recs_at[p->rank]), (size_t) p->length,
                (off_t) p->offset);
            rc = put == (ssize_t) p->length ? 0 : put < 0 ? (int) put : -EIO;
        }
    } else {
        rc = sfio_copy_range(r->log_fds[p->rank], p->log_offset, r->flat_fd, p->offset, p->length,
                             r->buf, APPLY_CHUNK);
    }
    return 0 == rc ? 0 : (r->rc = rc);
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
            ssize_t put = mca_common_sfio_posix_pwrite_full(flat_fd, zeros, n, pos);
            if (put != (ssize_t) n) {
                return put < 0 ? (int) put : -EIO;
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

/* One store, opened and examined. */
typedef struct {
    const char *dir;
    int coord_fd;
    sfio_coord_t *c;
    size_t size;
} store_view_t;

static void view_close(store_view_t *v)
{
    if (v->c) munmap(v->c, v->size);
    if (v->coord_fd >= 0) close(v->coord_fd);
    v->c = NULL;
    v->coord_fd = -1;
}

/* Writes a field of the coordination file as the store's ranks do:
 * through the mapping when the ranks of one node share it, with pwrite
 * for a service store (never through a mapping: a network file system
 * writes a mapped page back whole). */
static int coord_put(store_view_t *v, size_t field, uint64_t value)
{
    if (SFIO_SHARED_BY_SERVICE != v->c->shared_by) {
        atomic_store((_Atomic uint64_t *) ((char *) v->c + field), value);
        return 0;
    }
    ssize_t put = mca_common_sfio_posix_pwrite_full(v->coord_fd, &value, sizeof(value), field);
    return put == (ssize_t) sizeof(value) ? 0 : put < 0 ? (int) put : -EIO;
}

/* Every rank's records from rec_head of its record log, each checked: up
 * to rec_tail for a mapped store (bytes past it, such as a torn append,
 * are not read), to the file's end for a service store, which keeps no
 * tail (its last bytes may be a torn append: see torn_tail). */
typedef struct {
    int nranks;
    char **bufs;
    uint64_t *heads;      /* where bufs[r] starts in rank r's record log */
    size_t *lens;
    uint64_t *versions;   /* of the WRITE, PLACE and ABORT records */
    size_t nversions, cap;
} store_records_t;

static void records_free(store_records_t *s)
{
    for (int r = 0; r < s->nranks && s->bufs; ++r) free(s->bufs[r]);
    free(s->bufs);
    free(s->heads);
    free(s->lens);
    free(s->versions);
    *s = (store_records_t) { 0 };
}

/* Whether the n bytes at p, from an undecodable record of a service
 * store's record log to the file's end, are a torn append or what a
 * failed one left (an append goes where the last whole record ends, so
 * nothing whole follows either), not damage: no whole record starts in
 * them. */
static bool torn_tail(const char *p, size_t n)
{
    for (size_t at = 8; at < n; at += 8) {
        mca_common_sfio_record_t rec;
        if (0 == mca_common_sfio_record_decode(p + at, n - at, &rec)) {
            return false;
        }
    }
    return true;
}

static int records_load(const store_view_t *v, store_records_t *s, const char **why_p)
{
    sfio_coord_t *c = v->c;
    *s = (store_records_t) { .nranks = (int) c->nranks };
    s->bufs = calloc((size_t) s->nranks, sizeof(char *));
    s->lens = calloc((size_t) s->nranks, sizeof(size_t));
    s->heads = calloc((size_t) s->nranks, sizeof(uint64_t));
    *why_p = "cannot read it";
    if (!s->bufs || !s->lens || !s->heads) {
        return -ENOMEM;
    }
    bool to_end = SFIO_SHARED_BY_SERVICE == c->shared_by;
    for (int r = 0; r < s->nranks; ++r) {
        uint64_t head = atomic_load(&c->rank[r].rec_head);
        uint64_t tail = atomic_load(&c->rank[r].rec_tail);
        if (!to_end && tail <= head) {
            continue;
        }
        const char *why = NULL;
        char *rp = sfio_rank_file(v->dir, "rec", r);
        int rfd = rp ? sfio_open_store_file(rp, O_RDONLY, &why) : -ENOMEM;
        free(rp);
        if (to_end) {
            struct stat st;
            if (-ENOENT == rfd) {
                continue;   /* this rank made no record */
            }
            tail = rfd >= 0 && 0 == fstat(rfd, &st) ? (uint64_t) st.st_size : head;
            if (tail <= head && rfd >= 0) {
                close(rfd);
                continue;
            }
        }
        size_t len = (size_t) (tail - head);
        s->bufs[r] = rfd >= 0 ? malloc(len) : NULL;
        ssize_t got = s->bufs[r] ? mca_common_sfio_posix_pread_full(rfd, s->bufs[r], len, head)
                                 : (rfd < 0 ? rfd : -ENOMEM);
        if (rfd >= 0) close(rfd);
        if (got != (ssize_t) len) {
            *why_p = got < 0 && why && why[0] ? why : "a record log is shorter than recorded";
            return got < 0 ? (int) got : -EBADMSG;
        }
        s->lens[r] = len;
        s->heads[r] = head;
        /* where a WRITE record waits for the PLACE record appended with it */
        size_t pair_at = SIZE_MAX;
        for (size_t pos = 0; pos < len;) {
            mca_common_sfio_record_t rec;
            if (0 != mca_common_sfio_record_decode(s->bufs[r] + pos, len - pos, &rec)) {
                if (to_end && torn_tail(s->bufs[r] + pos, len - pos)) {
                    s->lens[r] = pos;
                    break;
                }
                *why_p = "a record is damaged";
                return -EBADMSG;
            }
            if (MCA_COMMON_SFIO_RECORD_FRESH != rec.kind) {
                if (s->nversions == s->cap) {
                    size_t cap = s->cap ? 2 * s->cap : 64;
                    void *nv = realloc(s->versions, cap * sizeof(*s->versions));
                    if (!nv) {
                        return -ENOMEM;
                    }
                    s->versions = nv;
                    s->cap = cap;
                }
                s->versions[s->nversions++] = rec.version;
            }
            pair_at = rec.followed ? pos : SIZE_MAX;
            pos += rec.size;
        }
        if (SIZE_MAX != pair_at) {
            /* its PLACE record was torn off: the append, the version, never ended */
            s->lens[r] = pair_at;
            s->nversions--;
        }
    }
    return 0;
}

/* Every version up to this was published: the mark kept in the file by a
 * mapped store; for a service store, the longest run of whole records
 * above the folded mark, which holds every published version. */
static uint64_t store_published(const sfio_coord_t *c, store_records_t *s)
{
    if (SFIO_SHARED_BY_SERVICE == c->shared_by) {
        return mca_common_sfio_recplan_published(atomic_load(&c->folded), s->versions,
                                                 s->nversions);
    }
    return atomic_load(&c->published);
}

/* Fills info's verdict for the store at dir; on a verdict that allows
 * applying or discarding, v holds the locked coordination file. */
static void examine(const char *dir, const sfio_ident_t *file, int64_t file_mtime_ns,
                    store_view_t *v, mca_common_sfio_store_info_t *info)
{
    const char *why = NULL;
    *v = (store_view_t) { .dir = dir, .coord_fd = -1 };
    info->path = dir;
    info->verdict = MCA_COMMON_SFIO_STORE_REFUSED;
    struct stat st;
    if (0 != lstat(dir, &st) || !S_ISDIR(st.st_mode)) {
        info->why = "not a directory (or a symbolic link)";
        return;
    }
    if (st.st_uid != geteuid()) {
        info->verdict = MCA_COMMON_SFIO_STORE_FOREIGN;
        info->why = "owned by another user";
        return;
    }
    if (0 != sfio_dir_private(dir, &why)) {
        info->why = why;
        return;
    }
    char *cp = sfio_path_join(dir, "coord");
    int fd = cp ? sfio_open_store_file(cp, O_RDWR, &why) : -ENOMEM;
    free(cp);
    if (-ENOENT == fd) {
        /* never finished its creation: nothing was written through it */
        info->verdict = MCA_COMMON_SFIO_STORE_EMPTY;
        info->why = "holds no coordination file";
        return;
    }
    if (fd < 0) {
        info->why = why;
        return;
    }
    v->coord_fd = fd;
    if (0 != mca_common_sfio_ofd_lock(fd, F_WRLCK, false, SFIO_LIVE_BYTE, 1)) {
        info->verdict = MCA_COMMON_SFIO_STORE_LIVE;
        info->why = "in use by a running job";
        view_close(v);
        return;
    }
    int src = fstat(fd, &st);
    if (0 == src && 0 == st.st_nlink) {
        /* Unlinked between our open and our lock: its job closed it
         * cleanly (or another open applied it), dropping the lock last.
         * Its logs may be gone already; there is nothing to apply. */
        info->verdict = MCA_COMMON_SFIO_STORE_LIVE;
        info->why = "closed by its job while examined";
        view_close(v);
        return;
    }
    if (0 != src || (size_t) st.st_size < sizeof(sfio_coord_t) ||
        MAP_FAILED == (void *) (v->c = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE,
                                            MAP_SHARED, fd, 0))) {
        v->c = NULL;
        info->verdict = MCA_COMMON_SFIO_STORE_CORRUPT;
        info->why = "its coordination file is truncated";
        view_close(v);
        return;
    }
    v->size = (size_t) st.st_size;
    sfio_coord_t *c = v->c;
    if (SFIO_COORD_MAGIC != c->magic || SFIO_COORD_LAYOUT != c->layout || 0 == c->nranks ||
        c->nranks > MCA_COMMON_SFIO_VINDEX_MAX_RANKS || v->size < sfio_coord_bytes((int) c->nranks) ||
        (SFIO_SHARED_BY_MAPPED != c->shared_by && SFIO_SHARED_BY_SERVICE != c->shared_by)) {
        info->verdict = MCA_COMMON_SFIO_STORE_CORRUPT;
        info->why = "its coordination file is not of this version of the suite";
        view_close(v);
        return;
    }
    info->nranks = (int) c->nranks;
    bool versions_known = SFIO_SHARED_BY_SERVICE != c->shared_by;
    if (versions_known) {
        info->versions = atomic_load(&c->published) - atomic_load(&c->folded);
    }
    /* every log and record file there must be safe to read */
    for (uint32_t r = 0; r < c->nranks; ++r) {
        for (int k = 0; k < 2; ++k) {
            char *p = sfio_rank_file(dir, k ? "log" : "rec", (int) r);
            int efd = p ? sfio_open_store_file(p, O_RDONLY, &why) : -ENOMEM;
            free(p);
            if (efd >= 0) {
                close(efd);
            } else if (-ENOENT != efd) {
                info->why = k ? "a data log in it is unsafe (symbolic link, not a regular file, "
                                "another owner or other links)"
                              : "a record log in it is unsafe (symbolic link, not a regular file, "
                                "another owner or other links)";
                view_close(v);
                return;
            }
        }
    }
    if (!versions_known) {
        /* counted from the records; unreadable ones fail the apply, which says why */
        store_records_t recs;
        const char *ignored;
        if (0 == records_load(v, &recs, &ignored)) {
            info->versions = store_published(c, &recs) - atomic_load(&c->folded);
            versions_known = true;
        }
        records_free(&recs);
    }
    const sfio_ident_t *id = &c->ident;
    /* each client of a network file system may number its device its own way */
    bool same_dev = id->dev == file->dev || (id->fs_type == file->fs_type &&
                                             (mca_common_sfio_fs_is_network((long) id->fs_type) ||
                                              mca_common_sfio_fs_clients_cache((long) id->fs_type)));
    if (id->uid != geteuid() || id->ino != file->ino || !same_dev ||
        (SFIO_BTIME_UNKNOWN != id->btime_ns && SFIO_BTIME_UNKNOWN != file->btime_ns &&
         id->btime_ns != file->btime_ns)) {
        info->verdict = MCA_COMMON_SFIO_STORE_OTHER_FILE;
        info->why = "made for another file (device, inode or birth time differ)";
        return;
    }
    int64_t allowed = atomic_load(&c->flat_mtime_ns);
    for (uint32_t r = 0; r < c->nranks; ++r) {
        int64_t w = atomic_load(&c->rank[r].flat_writing_ns);
        int64_t e = atomic_load(&c->rank[r].flat_written_ns);
        if (w > 0 && w + IN_FLIGHT_NS > allowed) {
            allowed = w + IN_FLIGHT_NS;
        }
        if (e > allowed) {
            allowed = e;
        }
    }
    if (file_mtime_ns > allowed) {
        info->verdict = MCA_COMMON_SFIO_STORE_CHANGED;
        info->why = "the file was modified after the job that made it stopped";
        return;
    }
    info->verdict = MCA_COMMON_SFIO_STORE_DEAD;
    info->why = versions_known && 0 == info->versions ? "left by a job that stopped, nothing to apply"
                                                      : "left by a job that stopped";
}

/* Redoes the published versions of an examined store into flat_fd.
 * Nothing is written before every record is read and decoded. */
static int apply(store_view_t *v, int flat_fd, uint64_t *undone_p, const char **why_p)
{
    sfio_coord_t *c = v->c;
    int nranks = (int) c->nranks;
    mca_common_sfio_vindex_t index;
    mca_common_sfio_vindex_init(&index, NULL);
    mca_common_sfio_vindex_pending_t *pend = NULL;
    size_t npend = 0, cap = 0;
    undo_list_t undo = { 0 };
    store_records_t recs = { 0 };
    int *log_fds = malloc((size_t) nranks * sizeof(int));
    *why_p = "cannot read it";
    int rc = log_fds ? records_load(v, &recs, why_p) : -ENOMEM;
    for (int r = 0; r < nranks && log_fds; ++r) log_fds[r] = -1;
    uint64_t F = atomic_load(&c->folded), P = 0 == rc ? store_published(c, &recs) : F;

    for (int r = 0; r < nranks && 0 == rc; ++r) {
        const char *buf = recs.bufs[r];
        size_t len = recs.lens[r];
        if (0 == len) {
            continue;
        }
        const char *why = NULL;
        char *lp = sfio_rank_file(v->dir, "log", r);
        log_fds[r] = lp ? sfio_open_store_file(lp, O_RDONLY, &why) : -ENOMEM;
        free(lp);
        if (log_fds[r] < 0) {
            rc = log_fds[r];
            *why_p = why && why[0] ? why : "cannot read it";
            break;
        }
        for (size_t pos = 0; pos < len;) {
            mca_common_sfio_record_t rec;
            if (0 != mca_common_sfio_record_decode(buf + pos, len - pos, &rec)) {
                rc = -EBADMSG;   /* records_load checked them */
                break;
            }
            if (MCA_COMMON_SFIO_RECORD_FRESH == rec.kind &&
                0 != (rc = undo_note(&undo, buf, pos, len, &rec, P))) {
                break;
            }
            if (MCA_COMMON_SFIO_RECORD_PLACE == rec.kind) {
                rec.kind = MCA_COMMON_SFIO_RECORD_WRITE;   /* redo journaled bytes too */
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
        *why_p = "cannot write the file";
        rc = undo_fresh(&undo, flat_fd, undone_p);   /* before the redo, which may extend it */
    }
    free(undo.v);
    for (int r = 0; r < nranks && 0 == rc; ++r) {
        apply_ctx_t ctx = { .log_fds = log_fds, .flat_fd = flat_fd, .buf = malloc(APPLY_CHUNK),
                            .recs = (const char *const *) recs.bufs, .recs_at = recs.heads,
                            .recs_len = recs.lens };
        rc = ctx.buf ? mca_common_sfio_vindex_foreach_rank(&index, r, apply_piece, &ctx) : -ENOMEM;
        if (0 == rc) rc = ctx.rc;
        free(ctx.buf);
    }
    if (0 == rc && 0 != fsync(flat_fd)) {
        rc = -errno;
    }
    /* a second application would redo nothing */
    if (0 == rc && 0 != (rc = coord_put(v, offsetof(sfio_coord_t, folded), P))) {
        *why_p = "cannot write its coordination file";
    }
    for (int r = 0; r < nranks && log_fds; ++r) {
        if (log_fds[r] >= 0) close(log_fds[r]);
    }
    records_free(&recs);
    free(log_fds);
    free(pend);
    mca_common_sfio_vindex_destroy(&index);
    return rc;
}

/* Removes the store's files (only the names the store uses; unlink never
 * follows a symlink) and the directory.  The caller holds the liveness
 * write lock, or the store never had a coordination file. */
static int remove_store(const char *dir, int nranks)
{
    DIR *d = opendir(dir);
    if (!d) {
        return -errno;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int r;
        char tail;
        if (0 == strcmp(e->d_name, "coord") || 0 == strcmp(e->d_name, "coord.new") ||
            ((1 == sscanf(e->d_name, "rec.%d%c", &r, &tail) ||
              1 == sscanf(e->d_name, "log.%d%c", &r, &tail)) && r >= 0 && (nranks <= 0 || r < nranks))) {
            (void) unlinkat(dirfd(d), e->d_name, 0);
        }
    }
    closedir(d);
    return 0 == rmdir(dir) ? 0 : -errno;
}

/* Every store directory of file (inode ino) in place, in name order. */
static int list_stores(const char *place, uint64_t ino, char ***names_p, size_t *n_p)
{
    char *prefix = sfio_store_prefix(ino);
    DIR *d = prefix ? sfio_opendir_stores(place, NULL) : NULL;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    if (!prefix) {
        return -ENOMEM;
    }
    if (!d) {
        free(prefix);
        return (0 == errno || ENOENT == errno) ? 0 : -errno;
    }
    size_t plen = strlen(prefix);
    struct dirent *e;
    while (0 == rc && (e = readdir(d)) != NULL) {
        if (0 != strncmp(e->d_name, prefix, plen)) {
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            void *nv = realloc(names, cap * sizeof(*names));
            if (!nv) { rc = -ENOMEM; break; }
            names = nv;
        }
        if (!(names[n] = sfio_path_join(place, e->d_name))) {
            rc = -ENOMEM;
            break;
        }
        n++;
    }
    closedir(d);
    free(prefix);
    *names_p = names;
    *n_p = n;
    return rc;
}

/* A descriptor of the same file open for writing: fd itself when it is,
 * else a new one (reopened through /proc, so it is this very inode). */
static int writable_fd(int fd, bool *opened_p)
{
    *opened_p = false;
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && (O_RDWR == (fl & O_ACCMODE) || O_WRONLY == (fl & O_ACCMODE))) {
        return fd;
    }
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    int w = open(proc, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (w < 0) {
        return -errno;
    }
    struct stat a, b;
    if (0 != fstat(w, &a) || 0 != fstat(fd, &b) || a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
        close(w);
        return -ESTALE;
    }
    *opened_p = true;
    return w;
}

int mca_common_sfio_vstore_scan(const char *path, int fd, const char *store_dir,
                                mca_common_sfio_store_action_t action, const char *only,
                                mca_common_sfio_store_note_fn_t note, void *ctx,
                                mca_common_sfio_store_tally_t *tally_p)
{
    sfio_ident_t file;
    char *places[2] = { NULL, NULL };
    const char *warn = NULL;
    int rc = sfio_ident_of_fd(fd, &file);
    mca_common_sfio_store_tally_t tally = { 0 };
    if (0 == rc) {
        rc = sfio_places(path, fd, store_dir, places, &warn);
    }
    int wfd = -1;
    bool wfd_opened = false;
    for (int k = 0; 0 == rc && k < 2 && places[k]; ++k) {
        char **names = NULL;
        size_t n = 0;
        rc = list_stores(places[k], file.ino, &names, &n);
        for (size_t i = 0; i < n; ++i) {
            if (0 != rc || (only && 0 != strcmp(only, names[i]))) {
                free(names[i]);
                continue;
            }
            store_view_t v;
            mca_common_sfio_store_info_t info = { 0 };
            int64_t mtime = sfio_mtime_ns_of_fd(fd);
            examine(names[i], &file, mtime, &v, &info);
            bool force = MCA_COMMON_SFIO_STORE_APPLY_FORCE == action &&
                         MCA_COMMON_SFIO_STORE_CHANGED == info.verdict && v.c;
            bool apply_it = (MCA_COMMON_SFIO_STORE_DEAD == info.verdict &&
                             MCA_COMMON_SFIO_STORE_LIST != action &&
                             MCA_COMMON_SFIO_STORE_DISCARD != action) || force;
            bool discard_it = MCA_COMMON_SFIO_STORE_DISCARD == action &&
                              (MCA_COMMON_SFIO_STORE_DEAD == info.verdict ||
                               MCA_COMMON_SFIO_STORE_CHANGED == info.verdict ||
                               MCA_COMMON_SFIO_STORE_OTHER_FILE == info.verdict ||
                               MCA_COMMON_SFIO_STORE_EMPTY == info.verdict ||
                               (MCA_COMMON_SFIO_STORE_CORRUPT == info.verdict && only));
            if (apply_it && wfd < 0) {
                wfd = writable_fd(fd, &wfd_opened);
                if (wfd < 0) {
                    info.verdict = MCA_COMMON_SFIO_STORE_FAILED;
                    info.err = -wfd;
                    info.why = "the file cannot be opened for writing to apply it";
                    apply_it = false;
                    rc = wfd;
                    wfd = -1;
                }
            }
            if (apply_it) {
                const char *why = NULL;
                int arc = apply(&v, wfd, &tally.bytes_undone, &why);
                if (0 == arc) {
                    (void) coord_put(&v, offsetof(sfio_coord_t, flat_mtime_ns),
                                     (uint64_t) sfio_now_ns());
                    info.verdict = MCA_COMMON_SFIO_STORE_APPLIED;
                    info.why = "applied";
                    tally.applied++;
                    (void) remove_store(names[i], (int) v.c->nranks);
                } else {
                    info.verdict = MCA_COMMON_SFIO_STORE_FAILED;
                    info.err = -arc;
                    info.why = why;
                    rc = arc;   /* the open fails; the store stays for the next one */
                }
            } else if (discard_it) {
                int drc = remove_store(names[i], v.c ? (int) v.c->nranks : 0);
                info.verdict = 0 == drc ? MCA_COMMON_SFIO_STORE_DISCARDED : MCA_COMMON_SFIO_STORE_FAILED;
                info.err = -drc;
                info.why = 0 == drc ? "discarded" : "cannot be removed";
                tally.discarded += 0 == drc;
            } else if (MCA_COMMON_SFIO_STORE_EMPTY == info.verdict &&
                       MCA_COMMON_SFIO_STORE_LIST != action) {
                /* an empty store of ours from a creation cut short: old
                 * enough that no creator is still at work */
                struct stat st;
                if (0 == lstat(names[i], &st) && st.st_mtime + 60 < time(NULL) &&
                    0 == remove_store(names[i], 0)) {
                    info.verdict = MCA_COMMON_SFIO_STORE_DISCARDED;
                    info.why = "empty, removed";
                }
            }
            if (MCA_COMMON_SFIO_STORE_LIVE != info.verdict &&
                MCA_COMMON_SFIO_STORE_APPLIED != info.verdict &&
                MCA_COMMON_SFIO_STORE_DISCARDED != info.verdict &&
                MCA_COMMON_SFIO_STORE_EMPTY != info.verdict) {
                tally.refused++;
            }
            if (note) note(ctx, &info);
            view_close(&v);
            free(names[i]);
        }
        free(names);
    }
    if (wfd_opened) {
        close(wfd);
    }
    sfio_places_free(places);
    if (tally_p) *tally_p = tally;
    return rc;
}

const char *mca_common_sfio_store_verdict_name(mca_common_sfio_store_verdict_t v)
{
    switch (v) {
    case MCA_COMMON_SFIO_STORE_LIVE:       return "live";
    case MCA_COMMON_SFIO_STORE_DEAD:       return "dead";
    case MCA_COMMON_SFIO_STORE_EMPTY:      return "empty";
    case MCA_COMMON_SFIO_STORE_APPLIED:    return "applied";
    case MCA_COMMON_SFIO_STORE_DISCARDED:  return "discarded";
    case MCA_COMMON_SFIO_STORE_FOREIGN:    return "foreign";
    case MCA_COMMON_SFIO_STORE_REFUSED:    return "unsafe";
    case MCA_COMMON_SFIO_STORE_OTHER_FILE: return "other-file";
    case MCA_COMMON_SFIO_STORE_CHANGED:    return "changed";
    case MCA_COMMON_SFIO_STORE_CORRUPT:    return "corrupt";
    case MCA_COMMON_SFIO_STORE_FAILED:     return "failed";
    }
    return "?";
}
