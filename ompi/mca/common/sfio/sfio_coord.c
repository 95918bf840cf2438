/*
 * sfio_coord: coordination service backends (see header).
 */
#include "ompi_config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "ompi/proc/proc.h"

#include "sfio_coord.h"
#include "sfio_coord_int.h"
#include "sfio_util.h"

#define COORD_PREFIX "sfio-coord-"
#define COORD_MAGIC 0x44524f4f43534653ull   /* "SFSCOORD" */
#define NAME_MAX_LEN MCA_COMMON_SFIO_COORD_NAME_MAX

bool mca_common_sfio_coord_spans_nodes(struct ompi_communicator_t *comm)
{
    int n = ompi_comm_size(comm);
    for (int i = 0; i < n; ++i) {
        ompi_proc_t *p = ompi_comm_peer_lookup(comm, i);
        if (NULL == p || !OPAL_PROC_ON_LOCAL_NODE(p->super.proc_flags)) {
            return true;
        }
    }
    return false;
}

bool mca_common_sfio_job_spans_nodes(void)
{
    static int spans = -1;   /* set once, by the first open that asks */
    if (spans < 0) {
        spans = mca_common_sfio_coord_spans_nodes(&ompi_mpi_comm_world.comm) ? 1 : 0;
    }
    return 1 == spans;
}

mca_common_sfio_coord_backend_t mca_common_sfio_coord_pick(struct ompi_communicator_t *comm,
                                                           mca_common_sfio_coord_backend_t want)
{
    if (MCA_COMMON_SFIO_COORD_AUTO != want) {
        return want;
    }
    if (1 == ompi_comm_size(comm)) {
        return MCA_COMMON_SFIO_COORD_LOCAL;
    }
    return mca_common_sfio_coord_spans_nodes(comm) ? MCA_COMMON_SFIO_COORD_OFI
                                                   : MCA_COMMON_SFIO_COORD_SHM;
}

/* ------------------------------------------------------------------ */
/* local: one rank                                                     */
/* ------------------------------------------------------------------ */

typedef struct {
    mca_common_sfio_coord_t super;
    int nslots;
    int64_t slot[];
} coord_local_t;

static int local_fetch_add(mca_common_sfio_coord_t *c, int slot, int64_t delta, int64_t *old_p)
{
    coord_local_t *l = (coord_local_t *) c;
    *old_p = l->slot[slot];
    l->slot[slot] += delta;
    return 0;
}

static int local_load(mca_common_sfio_coord_t *c, int slot, int64_t *value_p)
{
    *value_p = ((coord_local_t *) c)->slot[slot];
    return 0;
}

static int local_store(mca_common_sfio_coord_t *c, int slot, int64_t value)
{
    ((coord_local_t *) c)->slot[slot] = value;
    return 0;
}

static int local_compare_swap(mca_common_sfio_coord_t *c, int slot, int64_t expected,
                              int64_t desired, int64_t *old_p)
{
    coord_local_t *l = (coord_local_t *) c;
    *old_p = l->slot[slot];
    if (expected == l->slot[slot]) {
        l->slot[slot] = desired;
    }
    return 0;
}

static int local_close(mca_common_sfio_coord_t *c)
{
    free(c);
    return 0;
}

static const mca_common_sfio_coord_ops_t local_ops = {
    .name = "local", .fetch_add = local_fetch_add, .load = local_load, .store = local_store,
    .close = local_close, .compare_swap = local_compare_swap,
};

/* ------------------------------------------------------------------ */
/* shm: one node                                                       */
/* ------------------------------------------------------------------ */

/* The shared page: a header, then one cache line per counter so that
 * counters do not share lines. */
typedef struct {
    _Atomic int64_t value;
    char pad[64 - sizeof(int64_t)];
} coord_line_t;

typedef struct {
    uint64_t magic;
    uint64_t nslots;
    char pad[64 - 2 * sizeof(uint64_t)];
    coord_line_t slot[];
} coord_page_t;

typedef struct {
    mca_common_sfio_coord_t super;
    coord_page_t *page;
    size_t size;
} coord_shm_t;

static int shm_fetch_add(mca_common_sfio_coord_t *c, int slot, int64_t delta, int64_t *old_p)
{
    *old_p = atomic_fetch_add(&((coord_shm_t *) c)->page->slot[slot].value, delta);
    return 0;
}

static int shm_load(mca_common_sfio_coord_t *c, int slot, int64_t *value_p)
{
    *value_p = atomic_load(&((coord_shm_t *) c)->page->slot[slot].value);
    return 0;
}

static int shm_store(mca_common_sfio_coord_t *c, int slot, int64_t value)
{
    atomic_store(&((coord_shm_t *) c)->page->slot[slot].value, value);
    return 0;
}

static int shm_compare_swap(mca_common_sfio_coord_t *c, int slot, int64_t expected,
                            int64_t desired, int64_t *old_p)
{
    int64_t seen = expected;
    (void) atomic_compare_exchange_strong(&((coord_shm_t *) c)->page->slot[slot].value, &seen,
                                          desired);
    *old_p = seen;
    return 0;
}

static int shm_close(mca_common_sfio_coord_t *c)
{
    coord_shm_t *s = (coord_shm_t *) c;
    if (NULL != s->page) {
        munmap(s->page, s->size);
    }
    free(s);
    return 0;
}

static const mca_common_sfio_coord_ops_t shm_ops = {
    .name = "shm", .fetch_add = shm_fetch_add, .load = shm_load, .store = shm_store,
    .close = shm_close, .compare_swap = shm_compare_swap,
};

int mca_common_sfio_coord_sweep(const char *shm_dir)
{
    char prefix[64];
    int removed = 0;
    DIR *d = opendir(shm_dir);
    if (NULL == d) {
        return 0;
    }
    snprintf(prefix, sizeof(prefix), COORD_PREFIX "%u-", (unsigned) getuid());
    size_t plen = strlen(prefix);
    for (struct dirent *e; NULL != (e = readdir(d));) {
        long pid = 0;
        if (0 != strncmp(e->d_name, prefix, plen) || 1 != sscanf(e->d_name + plen, "%ld", &pid) ||
            pid <= 0 || pid == (long) getpid()) {
            continue;
        }
        if (mca_common_sfio_pid_dead(pid)) {
            char path[NAME_MAX_LEN + 64];
            snprintf(path, sizeof(path), "%s/%s", shm_dir, e->d_name);
            removed += (0 == unlink(path));
        }
    }
    closedir(d);
    return removed;
}

static size_t shm_page_size(int nslots)
{
    return sizeof(coord_page_t) + (size_t) nslots * sizeof(coord_line_t);
}

/* The creating rank's half: a new page in dir, mapped, its counters 0;
 * its path in name.  The first creation of a process sweeps dir of pages
 * whose creators died. */
static int shm_page_create(const char *dir, int nslots, char *name, size_t name_size,
                           coord_shm_t **s_p)
{
    static bool swept = false;
    size_t size = shm_page_size(nslots);
    int fd = -1, err = 0;
    name[0] = '\0';
    if (NULL == dir || '\0' == dir[0]) {
        dir = "/dev/shm";
    }
    if (!swept) {
        swept = true;
        (void) mca_common_sfio_coord_sweep(dir);
    }
    coord_shm_t *s = calloc(1, sizeof(*s));
    if (NULL == s) {
        return -ENOMEM;
    }
    for (int attempt = 0; attempt < 8; ++attempt) {
        uint64_t r = mca_common_sfio_random64();
        if ((size_t) snprintf(name, name_size, "%s/" COORD_PREFIX "%u-%ld-%016llx", dir,
                              (unsigned) getuid(), (long) getpid(),
                              (unsigned long long) r) >= name_size) {
            name[0] = '\0';
            free(s);
            return -ENAMETOOLONG;
        }
        fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || EEXIST != errno) {
            break;
        }
    }
    if (fd < 0) {
        err = -errno;
        name[0] = '\0';
    } else if (0 != ftruncate(fd, (off_t) size)) {
        err = -errno;
    } else if (0 != (err = -posix_fallocate(fd, 0, (off_t) size))) {
        /* blocks reserved now: a full directory is an error here, not a
         * SIGBUS at the first store into the mapping */
    } else if (MAP_FAILED == (s->page = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
                                               fd, 0))) {
        s->page = NULL;
        err = -errno;
    } else {
        /* ftruncate zero-filled the counters */
        s->page->nslots = (uint64_t) nslots;
        s->page->magic = COORD_MAGIC;
        atomic_thread_fence(memory_order_release);
    }
    if (fd >= 0) {
        close(fd);
    }
    if (0 != err) {
        if ('\0' != name[0]) {
            unlink(name);
            name[0] = '\0';
        }
        shm_close(&s->super);
        return err;
    }
    s->super.ops = &shm_ops;
    s->size = size;
    *s_p = s;
    return 0;
}

/* Another rank's half: maps the page the creating rank named. */
static int shm_page_attach(const char *name, int nslots, coord_shm_t **s_p)
{
    size_t size = shm_page_size(nslots);
    int err = 0;
    coord_shm_t *s = calloc(1, sizeof(*s));
    if (NULL == s) {
        return -ENOMEM;
    }
    int fd = open(name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        err = -errno;
    } else {
        s->page = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (MAP_FAILED == s->page) {
            s->page = NULL;
            err = -errno;
        } else if (COORD_MAGIC != s->page->magic || (uint64_t) nslots != s->page->nslots) {
            err = -EPROTO;
        }
        close(fd);
    }
    if (0 != err) {
        shm_close(&s->super);
        return err;
    }
    s->super.ops = &shm_ops;
    s->size = size;
    *s_p = s;
    return 0;
}

int mca_common_sfio_coord_shm_create(const mca_common_sfio_coord_config_t *cfg, int nslots,
                                     char *name, size_t name_size,
                                     mca_common_sfio_coord_t **coord_p)
{
    coord_shm_t *s = NULL;
    if (nslots <= 0) {
        return -EINVAL;
    }
    int rc = shm_page_create(cfg->shm_dir, nslots, name, name_size, &s);
    if (0 == rc) {
        s->super.timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 1;
        *coord_p = &s->super;
    }
    return rc;
}

int mca_common_sfio_coord_shm_attach(const mca_common_sfio_coord_config_t *cfg, int nslots,
                                     const char *name, mca_common_sfio_coord_t **coord_p)
{
    coord_shm_t *s = NULL;
    if (nslots <= 0) {
        return -EINVAL;
    }
    int rc = shm_page_attach(name, nslots, &s);
    if (0 == rc) {
        s->super.timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 1;
        *coord_p = &s->super;
    }
    return rc;
}

static int shm_open_coll(struct ompi_communicator_t *comm, const char *dir, int nslots,
                         int local_err, mca_common_sfio_coord_t **coord_p)
{
    struct {
        int err;
        char name[NAME_MAX_LEN];
    } msg = { local_err, "" };
    int rank = ompi_comm_rank(comm), rc;
    coord_shm_t *s = NULL;

    if (0 == rank && 0 == msg.err) {
        msg.err = shm_page_create(dir, nslots, msg.name, sizeof(msg.name), &s);
    }
    rc = mca_common_sfio_coord_bcast(comm, &msg, (int) sizeof(msg), 0);
    int err = OMPI_SUCCESS == rc ? msg.err : -EIO;
    if (0 != rank && 0 == err) {
        err = 0 != local_err ? local_err : shm_page_attach(msg.name, nslots, &s);
    }
    /* Everybody has mapped it (or failed): the name is no longer needed. */
    if (0 != mca_common_sfio_coord_agree(comm, &err)) {
        err = -EIO;
    }
    if (0 == rank && '\0' != msg.name[0]) {
        unlink(msg.name);
    }
    if (0 != err) {
        if (NULL != s) {
            shm_close(&s->super);
        }
        return err;
    }
    *coord_p = &s->super;
    return 0;
}

/* ------------------------------------------------------------------ */
/* rma: several nodes                                                   */
/* ------------------------------------------------------------------ */

typedef struct {
    mca_common_sfio_coord_t super;
    MPI_Comm comm;   /* private duplicate with MPI_ERRORS_RETURN */
    MPI_Win win;
} coord_rma_t;

static int rma_fetch_add(mca_common_sfio_coord_t *c, int slot, int64_t delta, int64_t *old_p)
{
    coord_rma_t *r = (coord_rma_t *) c;
    int64_t old = 0;
    if (MPI_SUCCESS != MPI_Fetch_and_op(&delta, &old, MPI_INT64_T, 0, slot, MPI_SUM, r->win) ||
        MPI_SUCCESS != MPI_Win_flush(0, r->win)) {
        return -EIO;
    }
    *old_p = old;
    return 0;
}

static int rma_load(mca_common_sfio_coord_t *c, int slot, int64_t *value_p)
{
    coord_rma_t *r = (coord_rma_t *) c;
    int64_t v = 0;
    if (MPI_SUCCESS != MPI_Fetch_and_op(NULL, &v, MPI_INT64_T, 0, slot, MPI_NO_OP, r->win) ||
        MPI_SUCCESS != MPI_Win_flush(0, r->win)) {
        return -EIO;
    }
    *value_p = v;
    return 0;
}

static int rma_store(mca_common_sfio_coord_t *c, int slot, int64_t value)
{
    coord_rma_t *r = (coord_rma_t *) c;
    if (MPI_SUCCESS != MPI_Accumulate(&value, 1, MPI_INT64_T, 0, slot, 1, MPI_INT64_T,
                                      MPI_REPLACE, r->win) ||
        MPI_SUCCESS != MPI_Win_flush(0, r->win)) {
        return -EIO;
    }
    return 0;
}

static int rma_close(mca_common_sfio_coord_t *c)
{
    coord_rma_t *r = (coord_rma_t *) c;
    int err = 0;
    if (MPI_WIN_NULL != r->win) {
        if (MPI_SUCCESS != MPI_Win_unlock_all(r->win) || MPI_SUCCESS != MPI_Win_free(&r->win)) {
            err = -EIO;
        }
    }
    if (MPI_COMM_NULL != r->comm) {
        (void) MPI_Comm_free(&r->comm);
    }
    free(r);
    return err;
}

static int rma_host(const mca_common_sfio_coord_t *c)
{
    (void) c;
    return 0;
}

static const mca_common_sfio_coord_ops_t rma_ops = {
    .name = "rma", .fetch_add = rma_fetch_add, .load = rma_load, .store = rma_store,
    .close = rma_close, .host = rma_host,
    /* no compare_swap: Open MPI 4.1's osc/rdma crashes in MPI_Compare_and_swap
     * over btl/vader's emulated atomics, and rma serves shared pointers only */
};

/*
 * The window lives on a duplicate of comm whose error handler returns:
 * window creation fails where no osc component serves the ranks' transport
 * (Open MPI 4.1 over TCP only), and that failure must reach the caller,
 * which then steps aside, not the application's handler (by default
 * MPI_ERRORS_ARE_FATAL on comm and on every new window).
 */
static int rma_open_coll(struct ompi_communicator_t *comm, int nslots, int local_err,
                         mca_common_sfio_coord_t **coord_p)
{
    int rank = ompi_comm_rank(comm), err = local_err;
    int64_t *base = NULL;
    coord_rma_t *r = calloc(1, sizeof(*r));
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Win win = MPI_WIN_NULL;
    MPI_Aint bytes = 0 == rank ? (MPI_Aint) nslots * (MPI_Aint) sizeof(int64_t) : 0;
    /* Collective whatever happened locally. */
    if (MPI_SUCCESS != MPI_Comm_dup(comm, &dup)) {
        return 0 != err ? err : -EIO;   /* the same failure everywhere */
    }
    (void) MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    if (MPI_SUCCESS != MPI_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL, dup, &base,
                                        &win)) {
        err = 0 == err ? -EOPNOTSUPP : err;
        win = MPI_WIN_NULL;
    }
    if (MPI_WIN_NULL != win) {
        (void) MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    }
    if (0 == err && 0 == rank) {
        memset(base, 0, (size_t) bytes);
    }
    if (0 == err && MPI_SUCCESS != MPI_Win_lock_all(MPI_MODE_NOCHECK, win)) {
        err = -EIO;
    }
    if (0 == err && 0 == rank) {
        (void) MPI_Win_sync(win);
    }
    if (NULL == r && 0 == err) {
        err = -ENOMEM;
    }
    /* also the barrier after rank 0's initialisation */
    if (0 != mca_common_sfio_coord_agree(comm, &err)) {
        err = -EIO;
    }
    if (0 != err) {
        if (MPI_WIN_NULL != win) {
            (void) MPI_Win_free(&win);
        }
        (void) MPI_Comm_free(&dup);
        free(r);
        return err;
    }
    r->super.ops = &rma_ops;
    r->comm = dup;
    r->win = win;
    *coord_p = &r->super;
    return 0;
}

/* ------------------------------------------------------------------ */

static int open_backend(struct ompi_communicator_t *comm,
                        const mca_common_sfio_coord_config_t *cfg, int nslots, int local_err,
                        mca_common_sfio_coord_t **coord_p)
{
    switch (mca_common_sfio_coord_pick(comm, cfg->backend)) {
    case MCA_COMMON_SFIO_COORD_LOCAL: {
        if (1 != ompi_comm_size(comm)) {
            return -EINVAL;
        }
        if (0 != local_err) {
            return local_err;
        }
        coord_local_t *l = calloc(1, sizeof(*l) + (size_t) nslots * sizeof(int64_t));
        if (NULL == l) {
            return -ENOMEM;
        }
        l->super.ops = &local_ops;
        l->nslots = nslots;
        *coord_p = &l->super;
        return 0;
    }
    case MCA_COMMON_SFIO_COORD_SHM:
        if (mca_common_sfio_coord_spans_nodes(comm)) {
            return -EXDEV;   /* same verdict on every rank */
        }
        return shm_open_coll(comm, cfg->shm_dir, nslots, local_err, coord_p);
    case MCA_COMMON_SFIO_COORD_RMA:
        return rma_open_coll(comm, nslots, local_err, coord_p);
    case MCA_COMMON_SFIO_COORD_OFI:
        return mca_common_sfio_coord_ofi_open(comm, cfg, nslots, local_err, coord_p);
    default:
        return -EINVAL;
    }
}

int mca_common_sfio_coord_open(struct ompi_communicator_t *comm,
                               const mca_common_sfio_coord_config_t *cfg, int nslots,
                               int local_err, mca_common_sfio_coord_t **coord_p)
{
    if (nslots <= 0) {
        return -EINVAL;
    }
    int rc = open_backend(comm, cfg, nslots, local_err, coord_p);
    if (0 == rc) {
        (*coord_p)->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 1;
    }
    return rc;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Publication from compare_swap: the mark moves from version - 1 to
 * version once the earlier versions are in; meanwhile the caller backs
 * off (a few microseconds growing to a millisecond), up to the timeout. */
static int publish_by_compare_swap(mca_common_sfio_coord_t *c, int slot, int64_t version)
{
    int64_t deadline = now_ms() + c->timeout_ms;
    long pause_ns = 1000;
    for (;;) {
        int64_t old = 0;
        int rc = c->ops->compare_swap(c, slot, version - 1, version, &old);
        if (0 != rc) {
            return rc;
        }
        if (old >= version - 1) {
            return 0;   /* moved it, or it was already past (a repeated call) */
        }
        if (now_ms() > deadline) {
            return -ETIMEDOUT;
        }
        struct timespec ts = { 0, pause_ns };
        nanosleep(&ts, NULL);
        pause_ns = pause_ns < 1000000 ? pause_ns * 2 : 1000000;
    }
}

int mca_common_sfio_coord_publish(mca_common_sfio_coord_t *c, int slot, int64_t version)
{
    if (version < 1) {
        return -EINVAL;
    }
    if (NULL != c->ops->publish) {
        return c->ops->publish(c, slot, version);
    }
    return NULL != c->ops->compare_swap ? publish_by_compare_swap(c, slot, version) : -ENOTSUP;
}

int mca_common_sfio_coord_close(mca_common_sfio_coord_t *c)
{
    return NULL == c ? 0 : c->ops->close(c);
}

int mca_common_sfio_coord_close_quiesced(mca_common_sfio_coord_t *c)
{
    if (NULL == c) {
        return 0;
    }
    return NULL != c->ops->close_quiesced ? c->ops->close_quiesced(c) : c->ops->close(c);
}

const char *mca_common_sfio_coord_name(const mca_common_sfio_coord_t *c)
{
    return NULL == c ? "none" : c->ops->name;
}

int mca_common_sfio_coord_host(const mca_common_sfio_coord_t *c)
{
    return NULL == c || NULL == c->ops->host ? -1 : c->ops->host(c);
}
