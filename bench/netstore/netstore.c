/*
 * netstore.c - LD_PRELOAD library that makes a local directory behave like
 * network storage for benchmarking MPI-IO stacks side by side.
 *
 * Every POSIX data call on a file under $NETSTORE_DIR is charged
 *     per-call latency  +  bytes / link bandwidth
 * where the link is a token bucket kept either per process (default: one
 * client = one process) or per node in a shared-memory segment
 * (NETSTORE_SHARED=1: all ranks of one node share one link, as one NIC per
 * node).  The segment is found by name in the node's /dev/shm, so on
 * emulated nodes (test/nodes: a private /dev/shm per node) every node
 * gets its own link.
 *
 * The real call is done first; the caller is then held until the emulated
 * completion time, so the cost of one call is max(real, emulated).  Locks
 * (fcntl F_SETLK/F_SETLKW/F_GETLK, OFD variants) pay one latency and are then
 * passed through, so lock waits serialize for real.  POSIX AIO requests are
 * given an emulated completion time at submission; aio_error() keeps reporting
 * EINPROGRESS and aio_suspend() keeps waiting until that time has passed.
 *
 * Environment:
 *   NETSTORE_DIR        directory whose files are emulated (required; unset = inactive)
 *   NETSTORE_LATENCY_US per-call latency in microseconds (default 100)
 *   NETSTORE_BW_MBPS    link bandwidth in MB/s, 1 MB = 1e6 bytes (default 117; 0 = unlimited)
 *   NETSTORE_BURST_KB   token bucket depth in KiB (default 0: strict pacing)
 *   NETSTORE_META       1 (default): open/close/ftruncate/fstat pay one latency too
 *                       (fsync, fdatasync and fallocate always pay one: a request to
 *                       the server, as NFS 4.2's ALLOCATE or Lustre's fallocate)
 *   NETSTORE_SHARED     1: one link per node shared by all processes (shared memory)
 *   NETSTORE_SHM        path of the shared link state (default /dev/shm/netstore-<uid>-<key>)
 *   NETSTORE_KEY        key in the default shm name (default "default")
 *   NETSTORE_STATS      1: print per-process counters to stderr at exit
 *   NETSTORE_DISABLE    1: pass everything through
 *   NETSTORE_STRIPE_LOCKS 1: emulate the extent locks of Lustre / GPFS (below)
 *   NETSTORE_STRIPE_SIZE  stripe (lock unit) size, suffixes K M G (default 1M)
 *   NETSTORE_STRIPE_TABLE path of the lock table shared by all nodes
 *                         (default $NETSTORE_DIR/.netstore-stripes-<uid>-<key>)
 *   NETSTORE_STRIPE_SLOTS entries of a table this process creates (default 65536)
 *
 * Stripe locks: every client (the node's link with NETSTORE_SHARED=1, else
 * the process) holds a lock on each stripe it touched until another client
 * needs it.  Writing a stripe another client holds, or reading one another
 * client holds for writing, first waits for the server to call the lock
 * back: NS_SL_REVOKE_RTT round trips of NETSTORE_LATENCY_US.  The rule is
 * stripelock.c; the table it runs on is a file mapped by every process, on
 * the file system all nodes share (a node's /dev/shm is its own), keyed by
 * (file, stripe).  Deleting a file drops its locks.
 * Exported for programs that want to verify without paying the emulation:
 *   void netstore_bypass(int on);   (per thread)
 *
 * Build: gcc -O2 -shared -fPIC -o libnetstore.so netstore.c -ldl -lpthread
 */
#define _GNU_SOURCE
#include <aio.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sched.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "stripelock.h"

#define NS_MAX_FD 65536
#define NS_MAX_AIO 4096

/* ------------------------------------------------------------------ */
/* real functions                                                       */

#define REAL(name) real_##name
#define DECL_REAL(ret, name, args) static ret(*real_##name) args
DECL_REAL(int, open, (const char *, int, ...));
DECL_REAL(int, open64, (const char *, int, ...));
DECL_REAL(int, openat, (int, const char *, int, ...));
DECL_REAL(int, openat64, (int, const char *, int, ...));
DECL_REAL(int, creat, (const char *, mode_t));
DECL_REAL(int, creat64, (const char *, mode_t));
DECL_REAL(int, close, (int));
DECL_REAL(int, dup, (int));
DECL_REAL(int, dup2, (int, int));
DECL_REAL(int, dup3, (int, int, int));
DECL_REAL(ssize_t, read, (int, void *, size_t));
DECL_REAL(ssize_t, write, (int, const void *, size_t));
DECL_REAL(ssize_t, readv, (int, const struct iovec *, int));
DECL_REAL(ssize_t, writev, (int, const struct iovec *, int));
DECL_REAL(ssize_t, pread, (int, void *, size_t, off_t));
DECL_REAL(ssize_t, pwrite, (int, const void *, size_t, off_t));
DECL_REAL(ssize_t, pread64, (int, void *, size_t, off64_t));
DECL_REAL(ssize_t, pwrite64, (int, const void *, size_t, off64_t));
DECL_REAL(ssize_t, preadv, (int, const struct iovec *, int, off_t));
DECL_REAL(ssize_t, pwritev, (int, const struct iovec *, int, off_t));
DECL_REAL(ssize_t, preadv64, (int, const struct iovec *, int, off64_t));
DECL_REAL(ssize_t, pwritev64, (int, const struct iovec *, int, off64_t));
DECL_REAL(ssize_t, preadv2, (int, const struct iovec *, int, off_t, int));
DECL_REAL(ssize_t, pwritev2, (int, const struct iovec *, int, off_t, int));
DECL_REAL(int, fsync, (int));
DECL_REAL(int, fdatasync, (int));
DECL_REAL(int, ftruncate, (int, off_t));
DECL_REAL(int, ftruncate64, (int, off64_t));
DECL_REAL(int, fallocate, (int, int, off_t, off_t));
DECL_REAL(int, fallocate64, (int, int, off64_t, off64_t));
DECL_REAL(int, posix_fallocate, (int, off_t, off_t));
DECL_REAL(int, posix_fallocate64, (int, off64_t, off64_t));
DECL_REAL(int, fcntl, (int, int, ...));
DECL_REAL(int, fcntl64, (int, int, ...));
DECL_REAL(int, aio_read, (struct aiocb *));
DECL_REAL(int, aio_write, (struct aiocb *));
DECL_REAL(int, aio_read64, (struct aiocb64 *));
DECL_REAL(int, aio_write64, (struct aiocb64 *));
DECL_REAL(int, aio_error, (const struct aiocb *));
DECL_REAL(int, aio_error64, (const struct aiocb64 *));
DECL_REAL(ssize_t, aio_return, (struct aiocb *));
DECL_REAL(ssize_t, aio_return64, (struct aiocb64 *));
DECL_REAL(int, aio_suspend, (const struct aiocb *const[], int, const struct timespec *));
DECL_REAL(int, aio_suspend64, (const struct aiocb64 *const[], int, const struct timespec *));
DECL_REAL(int, unlink, (const char *));
DECL_REAL(int, unlinkat, (int, const char *, int));

#define RESOLVE(name)                                                   \
    do {                                                                \
        if (!real_##name) {                                             \
            *(void **)(&real_##name) = dlsym(RTLD_NEXT, #name);         \
        }                                                               \
    } while (0)

/* ------------------------------------------------------------------ */
/* configuration and state                                              */

typedef struct {
    uint64_t next_free_ns; /* virtual time at which the link becomes free */
    uint64_t client_id;    /* stripe lock owner of a shared link (0: not chosen yet) */
    uint64_t pad[6];
} ns_link_t;

static int ns_active = 0;        /* NETSTORE_DIR set and not disabled */
static char ns_dir[PATH_MAX];    /* resolved directory, no trailing slash */
static size_t ns_dirlen = 0;
static uint64_t ns_lat_ns = 100000;
static double ns_ns_per_byte = 1e9 / 117e6;
static uint64_t ns_burst_ns = 0; /* bucket depth expressed as time */
static int ns_meta = 1;
static int ns_stats = 0;
static ns_link_t ns_local_link;
static ns_link_t *ns_link = &ns_local_link;
static unsigned char ns_fd[NS_MAX_FD];
static __thread int ns_bypass_flag = 0;

static struct {
    uint64_t calls, bytes_r, bytes_w, locks, meta, aio, revokes;
    uint64_t wait_ns;
} ns_st;

/* stripe locks (NETSTORE_STRIPE_LOCKS=1) */
static int ns_sl_on = 0;
static uint64_t ns_sl_stripe = 1 << 20;
static uint64_t ns_client = 0;      /* this process's lock owner id */
static uint64_t ns_fid[NS_MAX_FD];  /* file id (device, inode) of each tracked fd */

static struct {
    const void *cb;
    uint64_t done_ns;
} ns_aio[NS_MAX_AIO];
static pthread_mutex_t ns_aio_lock = PTHREAD_MUTEX_INITIALIZER;

void netstore_bypass(int on) { ns_bypass_flag = on; }

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(t / 1000000000ull);
    ts.tv_nsec = (long)(t % 1000000000ull);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static double env_num(const char *name, double dflt)
{
    const char *s = getenv(name);
    if (!s || !*s) return dflt;
    return atof(s);
}

static void ns_report(void)
{
    if (!ns_stats || !ns_active) return;
    fprintf(stderr,
            "netstore[%d]: calls=%llu read=%llu B written=%llu B locks=%llu meta=%llu aio=%llu "
            "revokes=%llu emulated_wait=%.3f s\n",
            (int)getpid(), (unsigned long long)ns_st.calls, (unsigned long long)ns_st.bytes_r,
            (unsigned long long)ns_st.bytes_w, (unsigned long long)ns_st.locks,
            (unsigned long long)ns_st.meta, (unsigned long long)ns_st.aio,
            (unsigned long long)ns_st.revokes, ns_st.wait_ns / 1e9);
}

static void ns_setup_shared(void)
{
    char path[PATH_MAX];
    const char *p = getenv("NETSTORE_SHM");
    if (!p || !*p) {
        const char *key = getenv("NETSTORE_KEY");
        snprintf(path, sizeof(path), "/dev/shm/netstore-%d-%s", (int)getuid(),
                 key && *key ? key : "default");
        p = path;
    }
    RESOLVE(open);
    RESOLVE(close);
    RESOLVE(ftruncate);
    int fd = REAL(open)(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf(stderr, "netstore: cannot open shared link state %s: %s (using a private link)\n",
                p, strerror(errno));
        return;
    }
    struct stat sb;
    if (fstat(fd, &sb) == 0 && sb.st_size < (off_t)sizeof(ns_link_t)) {
        REAL(ftruncate)(fd, sizeof(ns_link_t));
    }
    void *m = mmap(NULL, sizeof(ns_link_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    REAL(close)(fd);
    if (m == MAP_FAILED) {
        fprintf(stderr, "netstore: mmap of %s failed: %s (using a private link)\n", p,
                strerror(errno));
        return;
    }
    ns_link = (ns_link_t *)m;
}

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t file_id(const struct stat *sb)
{
    return mix64((uint64_t)sb->st_dev * 0x100000001b3ull ^ mix64((uint64_t)sb->st_ino)) | 1;
}

/* A lock owner id no other client picks: host name (emulated nodes have
 * their own), pid and time.  With a shared link the first process of the
 * node to get here chooses it for the whole node. */
static void ns_choose_client(void)
{
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    uint64_t h = 1469598103934665603ull;
    for (const char *p = host; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    uint64_t id = mix64(h ^ mix64((uint64_t)getpid() ^ (now_ns() << 20))) | 1;
    uint64_t zero = 0;
    if (ns_link != &ns_local_link) {
        __atomic_compare_exchange_n(&ns_link->client_id, &zero, id, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE);
        ns_client = __atomic_load_n(&ns_link->client_id, __ATOMIC_ACQUIRE);
    } else {
        ns_client = id;
    }
}

static uint64_t env_size(const char *name, uint64_t dflt)
{
    const char *s = getenv(name);
    if (!s || !*s) return dflt;
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'k': case 'K': v *= 1024.0; break;
    case 'm': case 'M': v *= 1024.0 * 1024.0; break;
    case 'g': case 'G': v *= 1024.0 * 1024.0 * 1024.0; break;
    default: break;
    }
    return v >= 1.0 ? (uint64_t)v : dflt;
}

__attribute__((constructor)) static void ns_init(void)
{
    const char *d = getenv("NETSTORE_DIR");
    if (!d || !*d || env_num("NETSTORE_DISABLE", 0) != 0) return;
    char *r = realpath(d, NULL);
    if (!r) {
        /* directory may be created later by the program: use it verbatim */
        snprintf(ns_dir, sizeof(ns_dir), "%s", d);
    } else {
        snprintf(ns_dir, sizeof(ns_dir), "%s", r);
        free(r);
    }
    ns_dirlen = strlen(ns_dir);
    while (ns_dirlen > 1 && ns_dir[ns_dirlen - 1] == '/') ns_dir[--ns_dirlen] = '\0';
    ns_lat_ns = (uint64_t)(env_num("NETSTORE_LATENCY_US", 100.0) * 1000.0);
    double bw = env_num("NETSTORE_BW_MBPS", 117.0);
    ns_ns_per_byte = bw > 0 ? 1e9 / (bw * 1e6) : 0.0;
    ns_burst_ns = (uint64_t)(env_num("NETSTORE_BURST_KB", 0) * 1024.0 * ns_ns_per_byte);
    ns_meta = (int)env_num("NETSTORE_META", 1);
    ns_stats = (int)env_num("NETSTORE_STATS", 0);
    if (env_num("NETSTORE_SHARED", 0) != 0) ns_setup_shared();
    ns_sl_on = env_num("NETSTORE_STRIPE_LOCKS", 0) != 0;
    ns_sl_stripe = env_size("NETSTORE_STRIPE_SIZE", 1 << 20);
    if (ns_sl_on) ns_choose_client();
    /* 100 us sleeps need fine timer slack (default slack is 50 us) */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    ns_active = 1;
    atexit(ns_report);
}

/* ------------------------------------------------------------------ */
/* fd tracking                                                          */

static int tracked(int fd)
{
    return ns_active && !ns_bypass_flag && fd >= 0 && fd < NS_MAX_FD && ns_fd[fd];
}

static void track_if_ours(int fd)
{
    if (!ns_active || fd < 0 || fd >= NS_MAX_FD) return;
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n <= 0) {
        ns_fd[fd] = 0;
        return;
    }
    target[n] = '\0';
    ns_fd[fd] = (size_t)n > ns_dirlen && strncmp(target, ns_dir, ns_dirlen) == 0 &&
                target[ns_dirlen] == '/';
    struct stat sb;
    ns_fid[fd] = ns_sl_on && ns_fd[fd] && fstat(fd, &sb) == 0 ? file_id(&sb) : 0;
}

/* ------------------------------------------------------------------ */
/* the cost model                                                       */

/* Reserve the link for `bytes` starting no earlier than `start`; return the
 * emulated completion time (end of transfer + one latency). */
static uint64_t charge_at(uint64_t start, uint64_t bytes)
{
    /* Token bucket in virtual time: next_free is when the bucket will have
     * paid for everything reserved so far.  Unused credit is capped at the
     * bucket depth (burst), so an idle link lets at most `burst` bytes through
     * instantly. */
    uint64_t xfer = (uint64_t)((double)bytes * ns_ns_per_byte);
    uint64_t floor_t = start > ns_burst_ns ? start - ns_burst_ns : 0;
    uint64_t nf, begin, end;
    /* same compare-and-swap for the private and the shared link: callers may be threads */
    nf = __atomic_load_n(&ns_link->next_free_ns, __ATOMIC_ACQUIRE);
    do {
        begin = nf > floor_t ? nf : floor_t;
        end = begin + xfer;
    } while (!__atomic_compare_exchange_n(&ns_link->next_free_ns, &nf, end, 0, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE));
    return (end > start ? end : start) + ns_lat_ns;
}

static void wait_for(uint64_t t0, uint64_t done)
{
    uint64_t now = now_ns();
    if (done > now) {
        sleep_until(done);
        ns_st.wait_ns += done - now;
    }
    (void)t0;
}

static uint64_t stripe_wait(int fd, uint64_t off, uint64_t len, int is_write);

/* charge a completed synchronous data call of `bytes` at file offset off
 * (-1: unknown); the link carries the data once the stripe locks are ours */
static void charge(int fd, uint64_t t0, int64_t off, uint64_t bytes, int is_write)
{
    ns_st.calls++;
    if (is_write) ns_st.bytes_w += bytes;
    else ns_st.bytes_r += bytes;
    uint64_t lock_ns = off >= 0 ? stripe_wait(fd, (uint64_t)off, bytes, is_write) : 0;
    wait_for(t0, charge_at(t0 + lock_ns, bytes));
}

/* the file position a read/write call starts at, when stripe locks need it */
static int64_t cur_pos(int fd)
{
    return ns_sl_on && tracked(fd) ? (int64_t)lseek(fd, 0, SEEK_CUR) : -1;
}

static void charge_latency(uint64_t t0)
{
    wait_for(t0, t0 + ns_lat_ns);
}

/* ------------------------------------------------------------------ */
/* stripe locks: the shared table (the rule is stripelock.c)            */

#define NS_SL_MAGIC 0x6e7373746c6f636bull /* "nsstlock" */
#define NS_SL_MAX_SLOTS (1u << 20)
#define NS_SL_PROBES 64

typedef struct {
    uint32_t busy;   /* slot spin lock */
    uint32_t pad;
    uint64_t file;   /* 0: free slot; slots are never freed, only their state reset */
    uint64_t stripe;
    ns_sl_state_t st;
} ns_sl_slot_t;

typedef struct {
    uint64_t magic;
    uint64_t pad[7];
} ns_sl_head_t;

static ns_sl_slot_t *ns_sl_slots = NULL;
static uint64_t ns_sl_nslots = 0;
static pthread_once_t ns_sl_once = PTHREAD_ONCE_INIT;
static int ns_sl_full_warned = 0;

static void ns_sl_disable(const char *path, const char *why)
{
    fprintf(stderr, "netstore: stripe lock table %s: %s (stripe locks off)\n", path, why);
    ns_sl_on = 0;
}

/* Map the table, creating it if needed.  It sits on the file system every
 * node sees, so it is opened the careful way: no symlinks, a regular file
 * of ours with one name, a size this code could have made. */
static void ns_sl_map(void)
{
    char path[PATH_MAX];
    const char *p = getenv("NETSTORE_STRIPE_TABLE");
    if (!p || !*p) {
        const char *key = getenv("NETSTORE_KEY");
        if (snprintf(path, sizeof(path), "%s/.netstore-stripes-%d-%s", ns_dir, (int)getuid(),
                     key && *key ? key : "default") >= (int)sizeof(path)) {
            ns_sl_disable(ns_dir, "path too long");
            return;
        }
        p = path;
    }
    uint64_t want = (uint64_t)env_num("NETSTORE_STRIPE_SLOTS", 65536);
    uint64_t n = 64;
    while (n < want && n < NS_SL_MAX_SLOTS) n <<= 1;
    RESOLVE(open);
    RESOLVE(close);
    RESOLVE(ftruncate);
    int fd = REAL(open)(p, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        ns_sl_disable(p, strerror(errno));
        return;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() ||
        sb.st_nlink != 1) {
        REAL(close)(fd);
        ns_sl_disable(p, "not a regular file of this user with one link");
        return;
    }
    if (sb.st_size == 0) {
        REAL(ftruncate)(fd, (off_t)(sizeof(ns_sl_head_t) + n * sizeof(ns_sl_slot_t)));
        fstat(fd, &sb);
    }
    /* the size decides the slot count: every process maps the same table
     * whatever its own NETSTORE_STRIPE_SLOTS says */
    uint64_t body = sb.st_size > (off_t)sizeof(ns_sl_head_t)
                        ? (uint64_t)sb.st_size - sizeof(ns_sl_head_t) : 0;
    n = body / sizeof(ns_sl_slot_t);
    if (n == 0 || (n & (n - 1)) != 0 || n > NS_SL_MAX_SLOTS ||
        body != n * sizeof(ns_sl_slot_t)) {
        REAL(close)(fd);
        ns_sl_disable(p, "unexpected size");
        return;
    }
    void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    REAL(close)(fd);
    if (m == MAP_FAILED) {
        ns_sl_disable(p, strerror(errno));
        return;
    }
    ns_sl_head_t *h = (ns_sl_head_t *)m;
    uint64_t zero = 0;
    if (!__atomic_compare_exchange_n(&h->magic, &zero, NS_SL_MAGIC, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE) && zero != NS_SL_MAGIC) {
        munmap(m, (size_t)sb.st_size);
        ns_sl_disable(p, "not a netstore stripe table");
        return;
    }
    ns_sl_slots = (ns_sl_slot_t *)(h + 1);
    ns_sl_nslots = n;
}

static void slot_lock(ns_sl_slot_t *s)
{
    /* A process killed inside the few instructions it holds a slot must not
     * hang the others: after about a second the lock is taken anyway. */
    uint64_t deadline = 0;
    for (unsigned spins = 0; __atomic_exchange_n(&s->busy, 1, __ATOMIC_ACQUIRE); spins++) {
        if (spins < 64) continue;
        if (!deadline) deadline = now_ns() + 1000000000ull;
        else if (now_ns() > deadline) break;
        sched_yield();
    }
}

static void slot_unlock(ns_sl_slot_t *s) { __atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE); }

/* The slot of (file, stripe), locked; inserted if absent; NULL when the
 * probe sequence is full.  Slots are claimed under their lock and never
 * emptied, so two processes inserting one key find the same slot. */
static ns_sl_slot_t *slot_find(uint64_t file, uint64_t stripe)
{
    uint64_t i = mix64(file ^ mix64(stripe));
    for (int k = 0; k < NS_SL_PROBES; k++, i++) {
        ns_sl_slot_t *s = &ns_sl_slots[i & (ns_sl_nslots - 1)];
        slot_lock(s);
        if (s->file == 0) {
            s->file = file;
            s->stripe = stripe;
            memset(&s->st, 0, sizeof(s->st));
            return s;
        }
        if (s->file == file && s->stripe == stripe) return s;
        slot_unlock(s);
    }
    return NULL;
}

/* The wait in ns an access of bytes [off, off + len) of fd must spend on
 * lock callbacks before its data moves; updates the table.  Callbacks of
 * the stripes of one call go to different servers and overlap: the call
 * waits for the longest, not the sum. */
static uint64_t stripe_wait(int fd, uint64_t off, uint64_t len, int is_write)
{
    if (!ns_sl_on || len == 0 || ns_fid[fd] == 0) return 0;
    pthread_once(&ns_sl_once, ns_sl_map);
    if (!ns_sl_slots) return 0;
    uint64_t first, count;
    int rtt = 0;
    ns_sl_stripes(off, len, ns_sl_stripe, &first, &count);
    for (uint64_t k = 0; k < count; k++) {
        ns_sl_slot_t *s = slot_find(ns_fid[fd], first + k);
        if (!s) {
            if (!ns_sl_full_warned++)
                fprintf(stderr, "netstore: stripe lock table full (NETSTORE_STRIPE_SLOTS): "
                                "stripes beyond it are not locked\n");
            continue;
        }
        int r = ns_sl_access(&s->st, ns_client, is_write, &s->st);
        slot_unlock(s);
        if (r > rtt) rtt = r;
    }
    if (rtt) ns_st.revokes++;
    return (uint64_t)rtt * ns_lat_ns;
}

/* a deleted file's locks go with it (its inode number may come back) */
static void stripe_forget(const struct stat *sb)
{
    pthread_once(&ns_sl_once, ns_sl_map);
    if (!ns_sl_slots) return;
    uint64_t f = file_id(sb);
    for (uint64_t i = 0; i < ns_sl_nslots; i++) {
        ns_sl_slot_t *s = &ns_sl_slots[i];
        if (__atomic_load_n(&s->file, __ATOMIC_RELAXED) != f) continue;
        slot_lock(s);
        if (s->file == f) memset(&s->st, 0, sizeof(s->st));
        slot_unlock(s);
    }
}

static int under_dir(const char *real)
{
    return strncmp(real, ns_dir, ns_dirlen) == 0 && real[ns_dirlen] == '/';
}

static void unlink_common(int dirfd, const char *path)
{
    if (!ns_sl_on || !path) return;
    char full[PATH_MAX];
    if (path[0] != '/' && dirfd != AT_FDCWD) {
        char link[64], d[PATH_MAX];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
        ssize_t n = readlink(link, d, sizeof(d) - 1);
        if (n <= 0) return;
        d[n] = '\0';
        if (snprintf(full, sizeof(full), "%s/%s", d, path) >= (int)sizeof(full)) return;
        path = full;
    }
    /* a symbolic link goes, not its target: only a regular file's locks */
    struct stat sb;
    if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return;
    char *r = realpath(path, NULL);
    if (!r) return;
    int ours = under_dir(r);
    free(r);
    if (ours) stripe_forget(&sb);
}

int unlink(const char *path)
{
    RESOLVE(unlink);
    int e = errno;
    unlink_common(AT_FDCWD, path);
    errno = e;
    return REAL(unlink)(path);
}

int unlinkat(int dirfd, const char *path, int flags)
{
    RESOLVE(unlinkat);
    int e = errno;
    if (!(flags & AT_REMOVEDIR)) unlink_common(dirfd, path);
    errno = e;
    return REAL(unlinkat)(dirfd, path, flags);
}

/* ------------------------------------------------------------------ */
/* open / close / dup                                                   */

static int open_common(int fd)
{
    if (fd >= 0 && ns_active) {
        int e = errno;
        track_if_ours(fd);
        if (ns_meta && tracked(fd)) {
            ns_st.meta++;
            charge_latency(now_ns());
        }
        errno = e;
    }
    return fd;
}

#define OPEN_MODE(flags, mode)                                               \
    mode_t mode = 0;                                                          \
    if ((flags) & (O_CREAT | O_TMPFILE)) {                                    \
        va_list ap;                                                           \
        va_start(ap, flags);                                                  \
        mode = (mode_t)va_arg(ap, int);                                       \
        va_end(ap);                                                           \
    }

int open(const char *path, int flags, ...)
{
    OPEN_MODE(flags, mode);
    RESOLVE(open);
    return open_common(REAL(open)(path, flags, mode));
}

/* fortified 2-argument opens (_FORTIFY_SOURCE callers) */
DECL_REAL(int, __open_2, (const char *, int));
DECL_REAL(int, __open64_2, (const char *, int));

int __open_2(const char *path, int flags)
{
    RESOLVE(__open_2);
    return open_common(REAL(__open_2)(path, flags));
}

int __open64_2(const char *path, int flags)
{
    RESOLVE(__open64_2);
    return open_common(REAL(__open64_2)(path, flags));
}

int open64(const char *path, int flags, ...)
{
    OPEN_MODE(flags, mode);
    RESOLVE(open64);
    return open_common(REAL(open64)(path, flags, mode));
}

int openat(int dirfd, const char *path, int flags, ...)
{
    OPEN_MODE(flags, mode);
    RESOLVE(openat);
    return open_common(REAL(openat)(dirfd, path, flags, mode));
}

int openat64(int dirfd, const char *path, int flags, ...)
{
    OPEN_MODE(flags, mode);
    RESOLVE(openat64);
    return open_common(REAL(openat64)(dirfd, path, flags, mode));
}

int creat(const char *path, mode_t mode)
{
    RESOLVE(creat);
    return open_common(REAL(creat)(path, mode));
}

int creat64(const char *path, mode_t mode)
{
    RESOLVE(creat64);
    return open_common(REAL(creat64)(path, mode));
}

int close(int fd)
{
    RESOLVE(close);
    int was = tracked(fd);
    if (fd >= 0 && fd < NS_MAX_FD) ns_fd[fd] = 0;
    uint64_t t0 = now_ns();
    int rc = REAL(close)(fd);
    if (was && ns_meta) {
        int e = errno;
        ns_st.meta++;
        charge_latency(t0);
        errno = e;
    }
    return rc;
}

static int dup_common(int oldfd, int newfd)
{
    if (newfd >= 0 && newfd < NS_MAX_FD) {
        int ok = oldfd >= 0 && oldfd < NS_MAX_FD;
        ns_fd[newfd] = ok ? ns_fd[oldfd] : 0;
        ns_fid[newfd] = ok ? ns_fid[oldfd] : 0;
    }
    return newfd;
}

int dup(int fd)
{
    RESOLVE(dup);
    return dup_common(fd, REAL(dup)(fd));
}

int dup2(int fd, int fd2)
{
    RESOLVE(dup2);
    return dup_common(fd, REAL(dup2)(fd, fd2));
}

int dup3(int fd, int fd2, int flags)
{
    RESOLVE(dup3);
    return dup_common(fd, REAL(dup3)(fd, fd2, flags));
}

/* ------------------------------------------------------------------ */
/* data calls                                                           */

/* off: the offset the call starts at, taken before the call (-1: unknown) */
#define DATA_CALL(is_write, off, call)                                        \
    uint64_t t0 = now_ns();                                                   \
    int64_t at = (off);                                                       \
    ssize_t rc = call;                                                        \
    if (tracked(fd)) {                                                        \
        int e = errno;                                                        \
        uint64_t nb = rc > 0 ? (uint64_t)rc : 0;                              \
        charge(fd, t0, at, nb, is_write);                                     \
        errno = e;                                                            \
    }                                                                         \
    return rc;

ssize_t read(int fd, void *buf, size_t n)
{
    RESOLVE(read);
    DATA_CALL(0, cur_pos(fd), REAL(read)(fd, buf, n));
}

ssize_t write(int fd, const void *buf, size_t n)
{
    RESOLVE(write);
    DATA_CALL(1, cur_pos(fd), REAL(write)(fd, buf, n));
}

ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    RESOLVE(readv);
    DATA_CALL(0, cur_pos(fd), REAL(readv)(fd, iov, cnt));
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    RESOLVE(writev);
    DATA_CALL(1, cur_pos(fd), REAL(writev)(fd, iov, cnt));
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    RESOLVE(pread);
    DATA_CALL(0, (int64_t)off, REAL(pread)(fd, buf, n, off));
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    RESOLVE(pwrite);
    DATA_CALL(1, (int64_t)off, REAL(pwrite)(fd, buf, n, off));
}

ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
    RESOLVE(pread64);
    DATA_CALL(0, (int64_t)off, REAL(pread64)(fd, buf, n, off));
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    RESOLVE(pwrite64);
    DATA_CALL(1, (int64_t)off, REAL(pwrite64)(fd, buf, n, off));
}

ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
    RESOLVE(preadv);
    DATA_CALL(0, (int64_t)off, REAL(preadv)(fd, iov, cnt, off));
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    RESOLVE(pwritev);
    DATA_CALL(1, (int64_t)off, REAL(pwritev)(fd, iov, cnt, off));
}

ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    RESOLVE(preadv64);
    DATA_CALL(0, (int64_t)off, REAL(preadv64)(fd, iov, cnt, off));
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    RESOLVE(pwritev64);
    DATA_CALL(1, (int64_t)off, REAL(pwritev64)(fd, iov, cnt, off));
}

ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    RESOLVE(preadv2);
    DATA_CALL(0, off == -1 ? cur_pos(fd) : (int64_t)off, REAL(preadv2)(fd, iov, cnt, off, flags));
}

ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    RESOLVE(pwritev2);
    DATA_CALL(1, off == -1 ? cur_pos(fd) : (int64_t)off, REAL(pwritev2)(fd, iov, cnt, off, flags));
}

/* one round trip each: the server commits the data */
int fsync(int fd)
{
    RESOLVE(fsync);
    uint64_t t0 = now_ns();
    int rc = REAL(fsync)(fd);
    if (tracked(fd)) {
        int e = errno;
        ns_st.meta++;
        charge_latency(t0);
        errno = e;
    }
    return rc;
}

int fdatasync(int fd)
{
    RESOLVE(fdatasync);
    uint64_t t0 = now_ns();
    int rc = REAL(fdatasync)(fd);
    if (tracked(fd)) {
        int e = errno;
        ns_st.meta++;
        charge_latency(t0);
        errno = e;
    }
    return rc;
}

int ftruncate(int fd, off_t len)
{
    RESOLVE(ftruncate);
    uint64_t t0 = now_ns();
    int rc = REAL(ftruncate)(fd, len);
    if (tracked(fd) && ns_meta) {
        int e = errno;
        ns_st.meta++;
        charge_latency(t0);
        errno = e;
    }
    return rc;
}

int ftruncate64(int fd, off64_t len)
{
    RESOLVE(ftruncate64);
    uint64_t t0 = now_ns();
    int rc = REAL(ftruncate64)(fd, len);
    if (tracked(fd) && ns_meta) {
        int e = errno;
        ns_st.meta++;
        charge_latency(t0);
        errno = e;
    }
    return rc;
}

/* Space reservation and hole punching: one request to the server. */
#define NS_FALLOCATE(name, off_type)                                        \
    int name(int fd, int mode, off_type off, off_type len)                  \
    {                                                                       \
        RESOLVE(name);                                                      \
        uint64_t t0 = now_ns();                                             \
        int rc = REAL(name)(fd, mode, off, len);                            \
        if (tracked(fd)) {                                                  \
            int e = errno;                                                  \
            ns_st.meta++;                                                   \
            charge_latency(t0);                                             \
            errno = e;                                                      \
        }                                                                   \
        return rc;                                                          \
    }
NS_FALLOCATE(fallocate, off_t)
NS_FALLOCATE(fallocate64, off64_t)

/* returns the error number, errno untouched */
#define NS_POSIX_FALLOCATE(name, off_type)                                  \
    int name(int fd, off_type off, off_type len)                            \
    {                                                                       \
        RESOLVE(name);                                                      \
        uint64_t t0 = now_ns();                                             \
        int rc = REAL(name)(fd, off, len);                                  \
        if (tracked(fd)) {                                                  \
            ns_st.meta++;                                                   \
            charge_latency(t0);                                             \
        }                                                                   \
        return rc;                                                          \
    }
NS_POSIX_FALLOCATE(posix_fallocate, off_t)
NS_POSIX_FALLOCATE(posix_fallocate64, off64_t)

/* ------------------------------------------------------------------ */
/* fcntl: locks pay one request latency before being passed through     */

static int is_lock_cmd(int cmd)
{
    switch (cmd) {
    case F_SETLK:
    case F_SETLKW:
    case F_GETLK:
#ifdef F_OFD_SETLK
    case F_OFD_SETLK:
    case F_OFD_SETLKW:
    case F_OFD_GETLK:
#endif
        return 1;
    default:
        return 0;
    }
}

static int is_dup_cmd(int cmd) { return cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC; }

static int fcntl_common(int (*fn)(int, int, ...), int fd, int cmd, void *arg)
{
    if (is_lock_cmd(cmd) && tracked(fd)) {
        uint64_t t0 = now_ns();
        ns_st.locks++;
        /* the lock request travels to the lock server ... */
        wait_for(t0, t0 + ns_lat_ns / 2);
        int rc = fn(fd, cmd, arg);
        int e = errno;
        /* ... and the grant travels back */
        uint64_t t1 = now_ns();
        wait_for(t1, t1 + ns_lat_ns - ns_lat_ns / 2);
        errno = e;
        return rc;
    }
    int rc = fn(fd, cmd, arg);
    if (is_dup_cmd(cmd) && rc >= 0) dup_common(fd, rc);
    return rc;
}

int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    RESOLVE(fcntl);
    return fcntl_common(real_fcntl, fd, cmd, arg);
}

int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    RESOLVE(fcntl64);
    if (!real_fcntl64) {
        RESOLVE(fcntl);
        return fcntl_common(real_fcntl, fd, cmd, arg);
    }
    return fcntl_common(real_fcntl64, fd, cmd, arg);
}

/* ------------------------------------------------------------------ */
/* POSIX AIO: emulated completion time per control block                */

static void aio_note(const void *cb, uint64_t done)
{
    pthread_mutex_lock(&ns_aio_lock);
    int freeslot = -1;
    for (int i = 0; i < NS_MAX_AIO; i++) {
        if (ns_aio[i].cb == cb) {
            freeslot = i;
            break;
        }
        if (freeslot < 0 && ns_aio[i].cb == NULL) freeslot = i;
    }
    if (freeslot >= 0) {
        ns_aio[freeslot].cb = cb;
        ns_aio[freeslot].done_ns = done;
    }
    pthread_mutex_unlock(&ns_aio_lock);
}

static uint64_t aio_due(const void *cb)
{
    uint64_t d = 0;
    pthread_mutex_lock(&ns_aio_lock);
    for (int i = 0; i < NS_MAX_AIO; i++) {
        if (ns_aio[i].cb == cb) {
            d = ns_aio[i].done_ns;
            break;
        }
    }
    pthread_mutex_unlock(&ns_aio_lock);
    return d;
}

static void aio_forget(const void *cb)
{
    pthread_mutex_lock(&ns_aio_lock);
    for (int i = 0; i < NS_MAX_AIO; i++) {
        if (ns_aio[i].cb == cb) {
            ns_aio[i].cb = NULL;
            break;
        }
    }
    pthread_mutex_unlock(&ns_aio_lock);
}

static void aio_submit(const void *cb, int fd, int64_t off, size_t n, int is_write)
{
    if (!tracked(fd)) return;
    ns_st.aio++;
    ns_st.calls++;
    if (is_write) ns_st.bytes_w += n;
    else ns_st.bytes_r += n;
    uint64_t t0 = now_ns();
    aio_note(cb, charge_at(t0 + stripe_wait(fd, (uint64_t)off, n, is_write), n));
}

int aio_read(struct aiocb *cb)
{
    RESOLVE(aio_read);
    aio_submit(cb, cb->aio_fildes, (int64_t)cb->aio_offset, cb->aio_nbytes, 0);
    return REAL(aio_read)(cb);
}

int aio_write(struct aiocb *cb)
{
    RESOLVE(aio_write);
    aio_submit(cb, cb->aio_fildes, (int64_t)cb->aio_offset, cb->aio_nbytes, 1);
    return REAL(aio_write)(cb);
}

int aio_read64(struct aiocb64 *cb)
{
    RESOLVE(aio_read64);
    aio_submit(cb, cb->aio_fildes, (int64_t)cb->aio_offset, cb->aio_nbytes, 0);
    return REAL(aio_read64)(cb);
}

int aio_write64(struct aiocb64 *cb)
{
    RESOLVE(aio_write64);
    aio_submit(cb, cb->aio_fildes, (int64_t)cb->aio_offset, cb->aio_nbytes, 1);
    return REAL(aio_write64)(cb);
}

int aio_error(const struct aiocb *cb)
{
    RESOLVE(aio_error);
    int rc = REAL(aio_error)(cb);
    if (rc != EINPROGRESS) {
        uint64_t due = aio_due(cb);
        if (due && now_ns() < due) return EINPROGRESS;
    }
    return rc;
}

int aio_error64(const struct aiocb64 *cb)
{
    RESOLVE(aio_error64);
    int rc = REAL(aio_error64)(cb);
    if (rc != EINPROGRESS) {
        uint64_t due = aio_due(cb);
        if (due && now_ns() < due) return EINPROGRESS;
    }
    return rc;
}

ssize_t aio_return(struct aiocb *cb)
{
    RESOLVE(aio_return);
    uint64_t due = aio_due(cb);
    if (due) wait_for(0, due);
    aio_forget(cb);
    return REAL(aio_return)(cb);
}

ssize_t aio_return64(struct aiocb64 *cb)
{
    RESOLVE(aio_return64);
    uint64_t due = aio_due(cb);
    if (due) wait_for(0, due);
    aio_forget(cb);
    return REAL(aio_return64)(cb);
}

static void suspend_common(const void *const list[], int n)
{
    uint64_t earliest = 0;
    for (int i = 0; i < n; i++) {
        if (!list[i]) continue;
        uint64_t d = aio_due(list[i]);
        if (d == 0) return; /* an untracked request: let the real call decide */
        if (earliest == 0 || d < earliest) earliest = d;
    }
    if (earliest) wait_for(0, earliest);
}

int aio_suspend(const struct aiocb *const list[], int n, const struct timespec *to)
{
    RESOLVE(aio_suspend);
    suspend_common((const void *const *)list, n);
    return REAL(aio_suspend)(list, n, to);
}

int aio_suspend64(const struct aiocb64 *const list[], int n, const struct timespec *to)
{
    RESOLVE(aio_suspend64);
    suspend_common((const void *const *)list, n);
    return REAL(aio_suspend64)(list, n, to);
}
