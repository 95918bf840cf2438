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
 *   NETSTORE_SHARED     1: one link per node shared by all processes (shared memory)
 *   NETSTORE_SHM        path of the shared link state (default /dev/shm/netstore-<uid>-<key>)
 *   NETSTORE_KEY        key in the default shm name (default "default")
 *   NETSTORE_STATS      1: print per-process counters to stderr at exit
 *   NETSTORE_DISABLE    1: pass everything through
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
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

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
    uint64_t pad[7];
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
    uint64_t calls, bytes_r, bytes_w, locks, meta, aio;
    uint64_t wait_ns;
} ns_st;

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
            "emulated_wait=%.3f s\n",
            (int)getpid(), (unsigned long long)ns_st.calls, (unsigned long long)ns_st.bytes_r,
            (unsigned long long)ns_st.bytes_w, (unsigned long long)ns_st.locks,
            (unsigned long long)ns_st.meta, (unsigned long long)ns_st.aio, ns_st.wait_ns / 1e9);
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

/* charge a completed synchronous data call */
static void charge(uint64_t t0, uint64_t bytes, int is_write)
{
    ns_st.calls++;
    if (is_write) ns_st.bytes_w += bytes;
    else ns_st.bytes_r += bytes;
    wait_for(t0, charge_at(t0, bytes));
}

static void charge_latency(uint64_t t0)
{
    wait_for(t0, t0 + ns_lat_ns);
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
    if (newfd >= 0 && newfd < NS_MAX_FD)
        ns_fd[newfd] = (oldfd >= 0 && oldfd < NS_MAX_FD) ? ns_fd[oldfd] : 0;
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

#define DATA_CALL(is_write, call)                               \
    uint64_t t0 = now_ns();                                                   \
    ssize_t rc = call;                                                        \
    if (tracked(fd)) {                                                        \
        int e = errno;                                                        \
        uint64_t nb = rc > 0 ? (uint64_t)rc : 0;                              \
        charge(t0, nb, is_write);                                             \
        errno = e;                                                            \
    }                                                                         \
    return rc;

ssize_t read(int fd, void *buf, size_t n)
{
    RESOLVE(read);
    DATA_CALL(0, REAL(read)(fd, buf, n));
}

ssize_t write(int fd, const void *buf, size_t n)
{
    RESOLVE(write);
    DATA_CALL(1, REAL(write)(fd, buf, n));
}

ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    RESOLVE(readv);
    DATA_CALL(0, REAL(readv)(fd, iov, cnt));
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    RESOLVE(writev);
    DATA_CALL(1, REAL(writev)(fd, iov, cnt));
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    RESOLVE(pread);
    DATA_CALL(0, REAL(pread)(fd, buf, n, off));
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    RESOLVE(pwrite);
    DATA_CALL(1, REAL(pwrite)(fd, buf, n, off));
}

ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
    RESOLVE(pread64);
    DATA_CALL(0, REAL(pread64)(fd, buf, n, off));
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    RESOLVE(pwrite64);
    DATA_CALL(1, REAL(pwrite64)(fd, buf, n, off));
}

ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
    RESOLVE(preadv);
    DATA_CALL(0, REAL(preadv)(fd, iov, cnt, off));
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    RESOLVE(pwritev);
    DATA_CALL(1, REAL(pwritev)(fd, iov, cnt, off));
}

ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    RESOLVE(preadv64);
    DATA_CALL(0, REAL(preadv64)(fd, iov, cnt, off));
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    RESOLVE(pwritev64);
    DATA_CALL(1, REAL(pwritev64)(fd, iov, cnt, off));
}

ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    RESOLVE(preadv2);
    DATA_CALL(0, REAL(preadv2)(fd, iov, cnt, off, flags));
}

ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    RESOLVE(pwritev2);
    DATA_CALL(1, REAL(pwritev2)(fd, iov, cnt, off, flags));
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

static void aio_submit(const void *cb, int fd, size_t n, int is_write)
{
    if (!tracked(fd)) return;
    ns_st.aio++;
    ns_st.calls++;
    if (is_write) ns_st.bytes_w += n;
    else ns_st.bytes_r += n;
    aio_note(cb, charge_at(now_ns(), n));
}

int aio_read(struct aiocb *cb)
{
    RESOLVE(aio_read);
    aio_submit(cb, cb->aio_fildes, cb->aio_nbytes, 0);
    return REAL(aio_read)(cb);
}

int aio_write(struct aiocb *cb)
{
    RESOLVE(aio_write);
    aio_submit(cb, cb->aio_fildes, cb->aio_nbytes, 1);
    return REAL(aio_write)(cb);
}

int aio_read64(struct aiocb64 *cb)
{
    RESOLVE(aio_read64);
    aio_submit(cb, cb->aio_fildes, cb->aio_nbytes, 0);
    return REAL(aio_read64)(cb);
}

int aio_write64(struct aiocb64 *cb)
{
    RESOLVE(aio_write64);
    aio_submit(cb, cb->aio_fildes, cb->aio_nbytes, 1);
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
