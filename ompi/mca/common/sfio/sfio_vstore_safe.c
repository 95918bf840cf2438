/*
 * sfio_vstore_safe: where a file's versioned stores live, what file a
 * store is made for, and opening store files without trusting anything
 * another user could have put in the way (symlinks, foreign owners,
 * directories others can write).  See sfio_vstore_int.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "sfio_vstore_int.h"
#include "sfio_posixio.h"

int sfio_copy_range(int from_fd, uint64_t from_off, int to_fd, uint64_t to_off, uint64_t len,
                    char *buf, size_t bufsize)
{
    for (uint64_t done = 0; done < len;) {
        size_t n = (size_t) (len - done < bufsize ? len - done : bufsize);
        ssize_t got = mca_common_sfio_posix_pread_full(from_fd, buf, n, (off_t) (from_off + done));
        if (got != (ssize_t) n) {
            return got < 0 ? (int) got : -EIO;
        }
        ssize_t put = mca_common_sfio_posix_pwrite_full(to_fd, buf, n, (off_t) (to_off + done));
        if (put != (ssize_t) n) {
            return put < 0 ? (int) put : -EIO;
        }
        done += n;
    }
    return 0;
}

char *sfio_path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) {
        snprintf(p, n, "%s/%s", dir, name);
    }
    return p;
}

char *sfio_rank_file(const char *dir, const char *kind, int rank)
{
    char name[64];
    snprintf(name, sizeof(name), "%s.%d", kind, rank);
    return sfio_path_join(dir, name);
}

int64_t sfio_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t sfio_mtime_ns_of_fd(int fd)
{
    struct stat st;
    if (0 != fstat(fd, &st)) {
        return -errno;
    }
    return (int64_t) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

int sfio_ident_of_fd(int fd, sfio_ident_t *ident_p)
{
    struct stat st;
    struct statfs sf;
    if (0 != fstat(fd, &st)) {
        return -errno;
    }
    sfio_ident_t id = { .dev = (uint64_t) st.st_dev, .ino = (uint64_t) st.st_ino,
                        .btime_ns = SFIO_BTIME_UNKNOWN, .uid = (uint32_t) geteuid(),
                        .fs_type = 0 == fstatfs(fd, &sf) ? (uint32_t) sf.f_type : 0 };
    struct statx sx;
    if (0 == statx(fd, "", AT_EMPTY_PATH, STATX_BTIME, &sx) && (sx.stx_mask & STATX_BTIME)) {
        id.btime_ns = (int64_t) sx.stx_btime.tv_sec * 1000000000 + sx.stx_btime.tv_nsec;
    }
    *ident_p = id;
    return 0;
}

int sfio_dir_private(const char *dir, const char **why_p)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        int e = errno;
        *why_p = ELOOP == e || ENOTDIR == e ? "not a directory (or a symbolic link)"
                                            : "cannot be opened";
        return -e;
    }
    int rc = 0 == fstat(fd, &st) ? 0 : -errno;
    close(fd);
    if (0 != rc) {
        *why_p = "cannot be examined";
    } else if (st.st_uid != geteuid()) {
        *why_p = "owned by another user";
        rc = -EPERM;
    } else if (0 != (st.st_mode & 077)) {
        *why_p = "open to other users (mode is not 0700)";
        rc = -EPERM;
    }
    return rc;
}

int sfio_open_store_file(const char *path, int flags, const char **why_p)
{
    static const char *none = "";
    *why_p = none;
    int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0600);
    if (fd < 0) {
        int e = errno;
        *why_p = ELOOP == e ? "a symbolic link" : "cannot be opened";
        return -e;
    }
    struct stat st;
    int rc = 0 == fstat(fd, &st) ? 0 : -errno;
    if (0 != rc) {
        *why_p = "cannot be examined";
    } else if (!S_ISREG(st.st_mode)) {
        *why_p = "not a regular file";
        rc = -EPERM;
    } else if (st.st_uid != geteuid()) {
        *why_p = "owned by another user";
        rc = -EPERM;
    } else if (st.st_nlink != 1) {
        *why_p = "has other hard links";
        rc = -EPERM;
    } else if (0 != (st.st_mode & 077)) {
        *why_p = "open to other users";
        rc = -EPERM;
    }
    if (0 != rc) {
        close(fd);
        return rc;
    }
    /* O_NONBLOCK only kept a FIFO from blocking the open */
    (void) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

char *sfio_store_prefix(uint64_t ino)
{
    char *p = malloc(64);
    if (p) {
        snprintf(p, 64, SFIO_STORE_PREFIX "%llx.", (unsigned long long) ino);
    }
    return p;
}

DIR *sfio_opendir_stores(const char *place, const char *own)
{
    struct stat st;
    /* own first: a store made after this look only makes the count larger */
    int known = (NULL != own && 0 == lstat(own, &st) && S_ISDIR(st.st_mode)) ? 1 : 0;
    int fd = open(place, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return NULL;
    }
    /* the count from the server, not from a client's attribute cache
     * (NFS keeps a directory's attributes for up to a minute) */
    uint64_t links = 0;
#ifdef AT_STATX_FORCE_SYNC
    struct statx sx;
    if (0 == statx(fd, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, STATX_NLINK, &sx) &&
        (sx.stx_mask & STATX_NLINK)) {
        links = sx.stx_nlink;
    }
#endif
    if (links >= 2 && links <= (uint64_t) (2 + known)) {
        close(fd);
        errno = 0;
        return NULL;
    }
    DIR *d = fdopendir(fd);
    if (NULL == d) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return d;
}

int sfio_store_name(uint64_t ino, char *buf, size_t len)
{
    unsigned char r[16];
    int rc = mca_common_sfio_random_bytes(r, sizeof(r));
    if (0 != rc) {
        return rc;
    }
    int n = snprintf(buf, len, SFIO_STORE_PREFIX "%llx.", (unsigned long long) ino);
    for (size_t i = 0; i < sizeof(r) && n > 0 && (size_t) n + 3 <= len; ++i) {
        n += snprintf(buf + n, len - (size_t) n, "%02x", r[i]);
    }
    return (n > 0 && (size_t) n < len) ? 0 : -ENAMETOOLONG;
}

/* The directory holding the file's real path (symlinks resolved; the
 * descriptor's path when the name no longer leads to it). */
static char *real_dir(const char *path, int fd)
{
    char *real = realpath(path, NULL);
    struct stat a, b;
    if (real && (0 != stat(real, &a) || 0 != fstat(fd, &b) || a.st_ino != b.st_ino ||
                 a.st_dev != b.st_dev)) {
        free(real);
        real = NULL;
    }
    if (!real) {
        char proc[64], buf[PATH_MAX];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(proc, buf, sizeof(buf) - 1);
        if (n <= 0 || '/' != buf[0]) {
            return NULL;
        }
        buf[n] = '\0';
        real = strdup(buf);
        if (!real) {
            return NULL;
        }
    }
    char *dir = strdup(dirname(real));
    free(real);
    return dir;
}

/* "<store_dir>/sfio-store-<euid>", made private if new; NULL and *warn_p
 * when it is not safe to use. */
static char *private_subdir(const char *store_dir, const char **warn_p)
{
    char name[64];
    snprintf(name, sizeof(name), "sfio-store-%u", (unsigned) geteuid());
    char *sub = sfio_path_join(store_dir, name);
    if (!sub) {
        return NULL;
    }
    if (0 != mkdir(sub, 0700) && EEXIST != errno) {
        *warn_p = "its private subdirectory cannot be created";
        free(sub);
        return NULL;
    }
    const char *why = NULL;
    if (0 != sfio_dir_private(sub, &why)) {
        *warn_p = why;
        free(sub);
        return NULL;
    }
    return sub;
}

int sfio_places(const char *path, int fd, const char *store_dir, char *places[2],
                const char **warn_p)
{
    places[0] = places[1] = NULL;
    *warn_p = NULL;
    char *beside = real_dir(path, fd);
    if (!beside) {
        return -ENOENT;
    }
    char *sub = (store_dir && store_dir[0]) ? private_subdir(store_dir, warn_p) : NULL;
    if (sub) {
        places[0] = sub;
        places[1] = beside;
    } else {
        places[0] = beside;
    }
    return 0;
}

void sfio_places_free(char *places[2])
{
    free(places[0]);
    free(places[1]);
    places[0] = places[1] = NULL;
}
