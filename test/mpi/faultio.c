/*
 * faultio.c: an LD_PRELOAD module for the MPI-IO tests that makes file I/O
 * fail with EIO, so the tests can check what a rank sees when the storage
 * under a collective call fails (t_fault).
 *
 * A file opened while FAULTIO_AT is set in the process's environment is
 * faulty: every data call on it whose byte range reaches FAULTIO_AT or
 * beyond fails with EIO, for the operations FAULTIO_OPS names ("w", "r" or
 * "rw"; default "w").  The test sets these with setenv() before
 * MPI_File_open and unsets them after, so only its own files are affected.
 * Covered: read/write/readv/writev (at the current offset), pread/pwrite,
 * preadv/pwritev (and their 64 and v2 forms), and POSIX AIO: a faulty
 * aio_read/aio_write is not submitted; aio_error then says EIO and
 * aio_return -1, as a request the device failed would (until the control
 * block is submitted again: callers need not call aio_return after an
 * error, stock fbtl/posix does not).
 *
 * faultio_calls() (found with dlsym) tells a test that the module is loaded
 * and how many calls it failed.
 */
#define _GNU_SOURCE
#include <aio.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define FAULTIO_EXPORT __attribute__((visibility("default")))

enum { MAX_FD = 4096, MAX_AIO = 1024 };

static struct {
    int on;
    int ops;            /* bit 0: reads, bit 1: writes */
    uint64_t at;
} fault_fd[MAX_FD];
static const void *failed_aio[MAX_AIO];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long nfailed;

FAULTIO_EXPORT unsigned long faultio_calls(void)
{
    return __atomic_load_n(&nfailed, __ATOMIC_RELAXED);
}

#define REAL(name) real_##name
#define RESOLVE(name)                                                         \
    static __typeof__(name) *real_##name;                                     \
    if (!real_##name) {                                                       \
        real_##name = (__typeof__(name) *) dlsym(RTLD_NEXT, #name);           \
    }

/* A descriptor just opened: faulty when the environment says so now. */
static int note_open(int fd)
{
    if (fd < 0 || fd >= MAX_FD) {
        return fd;
    }
    const char *at = getenv("FAULTIO_AT");
    fault_fd[fd].on = 0;
    if (at != NULL) {
        const char *ops = getenv("FAULTIO_OPS");
        if (ops == NULL) {
            ops = "w";
        }
        fault_fd[fd].at = strtoull(at, NULL, 10);
        fault_fd[fd].ops = (strchr(ops, 'r') ? 1 : 0) | (strchr(ops, 'w') ? 2 : 0);
        fault_fd[fd].on = 1;
    }
    return fd;
}

static size_t iov_bytes(const struct iovec *iov, int cnt)
{
    size_t n = 0;
    for (int i = 0; i < cnt; ++i) {
        n += iov[i].iov_len;
    }
    return n;
}

/* True (errno EIO) when this access must fail. */
static int faulty(int fd, int is_write, uint64_t off, size_t len)
{
    if (fd < 0 || fd >= MAX_FD || !fault_fd[fd].on || !(fault_fd[fd].ops & (is_write ? 2 : 1)) ||
        len == 0 || off + len <= fault_fd[fd].at) {
        return 0;
    }
    __atomic_add_fetch(&nfailed, 1, __ATOMIC_RELAXED);
    if (getenv("FAULTIO_DEBUG")) {
        char m[160];
        int k = snprintf(m, sizeof(m), "faultio: fd %d %s [%llu, +%zu) fails\n", fd,
                         is_write ? "write" : "read", (unsigned long long) off, len);
        RESOLVE(write);
        (void) !REAL(write)(2, m, (size_t) k);
    }
    errno = EIO;
    return 1;
}

static uint64_t cur_off(int fd)
{
    off_t o = lseek(fd, 0, SEEK_CUR);
    return o < 0 ? 0 : (uint64_t) o;
}

/* ---- opens ------------------------------------------------------------ */

#define OPEN_MODE(flags, mode)                                                \
    mode_t mode = 0;                                                          \
    if ((flags) & (O_CREAT | O_TMPFILE)) {                                    \
        va_list ap;                                                           \
        va_start(ap, flags);                                                  \
        mode = (mode_t) va_arg(ap, int);                                      \
        va_end(ap);                                                           \
    }

FAULTIO_EXPORT int open(const char *path, int flags, ...)
{
    RESOLVE(open);
    OPEN_MODE(flags, mode);
    return note_open(REAL(open)(path, flags, mode));
}

FAULTIO_EXPORT int open64(const char *path, int flags, ...)
{
    RESOLVE(open64);
    OPEN_MODE(flags, mode);
    return note_open(REAL(open64)(path, flags, mode));
}

FAULTIO_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    RESOLVE(openat);
    OPEN_MODE(flags, mode);
    return note_open(REAL(openat)(dirfd, path, flags, mode));
}

FAULTIO_EXPORT int close(int fd)
{
    RESOLVE(close);
    if (fd >= 0 && fd < MAX_FD) {
        fault_fd[fd].on = 0;
    }
    return REAL(close)(fd);
}

/* ---- data calls ------------------------------------------------------- */

FAULTIO_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    RESOLVE(read);
    return faulty(fd, 0, cur_off(fd), n) ? -1 : REAL(read)(fd, buf, n);
}

FAULTIO_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    RESOLVE(write);
    return faulty(fd, 1, cur_off(fd), n) ? -1 : REAL(write)(fd, buf, n);
}

FAULTIO_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    RESOLVE(readv);
    return faulty(fd, 0, cur_off(fd), iov_bytes(iov, cnt)) ? -1 : REAL(readv)(fd, iov, cnt);
}

FAULTIO_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    RESOLVE(writev);
    return faulty(fd, 1, cur_off(fd), iov_bytes(iov, cnt)) ? -1 : REAL(writev)(fd, iov, cnt);
}

/* pread/pwrite (BUF: the buffer's type) and preadv/pwritev at an offset
 * (OFF: off_t or off64_t). */
#define AT_CALL(name, is_write, BUF, OFF)                                           \
    FAULTIO_EXPORT ssize_t name(int fd, BUF buf, size_t n, OFF off)                 \
    {                                                                               \
        RESOLVE(name);                                                              \
        return faulty(fd, is_write, (uint64_t) off, n) ? -1 : REAL(name)(fd, buf, n, off); \
    }
#define AT_CALLV(name, is_write, OFF)                                               \
    FAULTIO_EXPORT ssize_t name(int fd, const struct iovec *iov, int cnt, OFF off)  \
    {                                                                               \
        RESOLVE(name);                                                              \
        return faulty(fd, is_write, (uint64_t) off, iov_bytes(iov, cnt))            \
                   ? -1                                                             \
                   : REAL(name)(fd, iov, cnt, off);                                 \
    }

AT_CALL(pread, 0, void *, off_t)
AT_CALL(pwrite, 1, const void *, off_t)
AT_CALL(pread64, 0, void *, off64_t)
AT_CALL(pwrite64, 1, const void *, off64_t)
AT_CALLV(preadv, 0, off_t)
AT_CALLV(pwritev, 1, off_t)
AT_CALLV(preadv64, 0, off64_t)
AT_CALLV(pwritev64, 1, off64_t)

FAULTIO_EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    RESOLVE(preadv2);
    return faulty(fd, 0, (uint64_t) (off < 0 ? (off_t) cur_off(fd) : off), iov_bytes(iov, cnt))
               ? -1
               : REAL(preadv2)(fd, iov, cnt, off, flags);
}

FAULTIO_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    RESOLVE(pwritev2);
    return faulty(fd, 1, (uint64_t) (off < 0 ? (off_t) cur_off(fd) : off), iov_bytes(iov, cnt))
               ? -1
               : REAL(pwritev2)(fd, iov, cnt, off, flags);
}

/* ---- POSIX AIO: a faulty request is never submitted ------------------- */

static int aio_fail_note(const void *cb)
{
    int slot = -1;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_AIO; ++i) {
        if (failed_aio[i] == cb) {
            slot = i;   /* already there: a control block used again */
            break;
        }
        if (slot < 0 && failed_aio[i] == NULL) {
            slot = i;
        }
    }
    if (slot >= 0) {
        failed_aio[slot] = cb;
    }
    pthread_mutex_unlock(&lock);
    return slot >= 0;   /* table full: let the request run */
}

/* 1 when cb is a failed request (and forget it when take) */
static int aio_failed(const void *cb, int take)
{
    int found = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_AIO; ++i) {
        if (failed_aio[i] == cb) {
            found = 1;
            if (take) {
                failed_aio[i] = NULL;
            }
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return found;
}

#define AIO_SUBMIT(name, is_write)                                                        \
    FAULTIO_EXPORT int name(struct aiocb *cb)                                             \
    {                                                                                     \
        RESOLVE(name);                                                                    \
        int e = errno;                                                                    \
        if (faulty(cb->aio_fildes, is_write, (uint64_t) cb->aio_offset, cb->aio_nbytes) && \
            aio_fail_note(cb)) {                                                          \
            errno = e;                                                                    \
            return 0;                                                                     \
        }                                                                                 \
        (void) aio_failed(cb, 1); /* a control block used again is a new request */       \
        errno = e;                                                                        \
        return REAL(name)(cb);                                                            \
    }

AIO_SUBMIT(aio_read, 0)
AIO_SUBMIT(aio_write, 1)

FAULTIO_EXPORT int aio_error(const struct aiocb *cb)
{
    RESOLVE(aio_error);
    int f = aio_failed(cb, 0);
    return f ? EIO : REAL(aio_error)(cb);
}

FAULTIO_EXPORT ssize_t aio_return(struct aiocb *cb)
{
    RESOLVE(aio_return);
    if (aio_failed(cb, 1)) {
        errno = EIO;
        return -1;
    }
    return REAL(aio_return)(cb);
}

FAULTIO_EXPORT int aio_suspend(const struct aiocb *const list[], int n, const struct timespec *to)
{
    RESOLVE(aio_suspend);
    for (int i = 0; i < n; ++i) {
        if (list[i] != NULL && aio_failed(list[i], 0)) {
            return 0;
        }
    }
    return REAL(aio_suspend)(list, n, to);
}

FAULTIO_EXPORT int aio_cancel(int fd, struct aiocb *cb)
{
    RESOLVE(aio_cancel);
    if (cb != NULL && aio_failed(cb, 0)) {
        return AIO_ALLDONE;
    }
    return REAL(aio_cancel)(fd, cb);
}
