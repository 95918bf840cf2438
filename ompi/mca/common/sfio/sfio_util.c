/*
 * sfio_util: host name hash, process-death test, OFD locks (see header).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
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
