/*
 * sfio_util: host name hash, process-death test, OFD locks, random
 * numbers (see header).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "sfio_util.h"

uint64_t mca_common_sfio_host_hash(void)
{
    char name[256];
    if (0 != gethostname(name, sizeof(name))) {
        return 0;
    }
    name[sizeof(name) - 1] = '\0';
    return mca_common_sfio_fnv1a(MCA_COMMON_SFIO_FNV1A_INIT, name, strlen(name));
}

bool mca_common_sfio_pid_dead(int64_t pid)
{
    if (pid <= 0) {
        return false;
    }
    if (0 != kill((pid_t) pid, 0)) {
        return ESRCH == errno;
    }
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/%lld/stat", (long long) pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;   /* no /proc: kill's answer stands */
    }
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
        return false;
    }
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');   /* "pid (comm) S ...": comm may hold ')' */
    return NULL != p && ' ' == p[1] && 'Z' == p[2];
}

int mca_common_sfio_ofd_lock(int fd, short type, bool wait, int64_t start, int64_t len)
{
    struct flock fl = {
        .l_type = type, .l_whence = SEEK_SET, .l_start = (off_t) start, .l_len = (off_t) len,
    };
    while (0 != fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl)) {
        if (EINTR != errno) {
            return -errno;
        }
    }
    return 0;
}

int mca_common_sfio_random_bytes(void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = getrandom((char *) buf + got, n - got, 0);
        if (k < 0) {
            if (EINTR == errno) {
                continue;
            }
            return -errno;
        }
        got += (size_t) k;
    }
    return 0;
}

uint64_t mca_common_sfio_random64(void)
{
    uint64_t z;
    if (0 == mca_common_sfio_random_bytes(&z, sizeof(z))) {
        return z;
    }
    static _Atomic uint64_t serial;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    z = ((uint64_t) ts.tv_nsec << 20) ^ (uint64_t) ts.tv_sec ^ ((uint64_t) getpid() << 40) ^
        atomic_fetch_add(&serial, 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
