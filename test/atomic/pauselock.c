/*
 * pauselock.c: an LD_PRELOAD module for t_groups.  It holds one process
 * at a chosen point of a fold, just before the fold locks its window byte
 * in the versioned store's coordination file, while another process does
 * something there.
 *
 * While PAUSELOCK_MARK and PAUSELOCK_GO are set in the process's
 * environment, the first blocking open-file-description write lock of
 * exactly the byte PAUSELOCK_BYTE (fcntl F_OFD_SETLKW, F_WRLCK, length 1)
 * creates the file PAUSELOCK_MARK, then waits (up to PAUSELOCK_SECONDS,
 * default 20) until the file PAUSELOCK_GO exists, and only then asks the
 * kernel for the lock.  Every other fcntl call goes straight through.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define PAUSELOCK_EXPORT __attribute__((visibility("default")))

static int paused;

static void pause_if_chosen(int cmd, const struct flock *fl)
{
    const char *mark = getenv("PAUSELOCK_MARK"), *go = getenv("PAUSELOCK_GO");
    const char *byte = getenv("PAUSELOCK_BYTE"), *secs = getenv("PAUSELOCK_SECONDS");
    if (paused || !mark || !go || !byte || F_OFD_SETLKW != cmd || !fl || F_WRLCK != fl->l_type ||
        SEEK_SET != fl->l_whence || 1 != fl->l_len || atoll(byte) != (long long) fl->l_start) {
        return;
    }
    paused = 1;
    int fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
        close(fd);
    }
    long waits = (secs ? atol(secs) : 20) * 1000;
    struct timespec ms = { 0, 1000000 };
    while (waits-- > 0 && 0 != access(go, F_OK)) {
        nanosleep(&ms, NULL);
    }
}

typedef int fcntl_fn(int, int, ...);

static int forward(const char *name, fcntl_fn **real, int fd, int cmd, void *arg)
{
    if (!*real) {
        *real = (fcntl_fn *) dlsym(RTLD_NEXT, name);
    }
    pause_if_chosen(cmd, (const struct flock *) arg);
    return (*real)(fd, cmd, arg);
}

/* The argument is an int or a pointer: passed on as one machine word. */
PAUSELOCK_EXPORT int fcntl(int fd, int cmd, ...)
{
    static fcntl_fn *real;
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return forward("fcntl", &real, fd, cmd, arg);
}

PAUSELOCK_EXPORT int fcntl64(int fd, int cmd, ...)
{
    static fcntl_fn *real;
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return forward("fcntl64", &real, fd, cmd, arg);
}
