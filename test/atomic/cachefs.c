/*
 * cachefs: a FUSE file system that passes a directory through and lets
 * the kernel cache like a network file system's client: pages and
 * attributes are kept (attributes for an hour, pages until the cached
 * attributes are refreshed and show a change), and with
 * CACHEFS_WRITEBACK=1 in its environment written pages stay dirty until
 * they are flushed.  Two mounts of one directory are two clients of one
 * file: what one writes, the other sees only after the writer flushed
 * and the reader revalidated.  For t_coherence (run_atomic_tests.sh).
 *
 *   cachefs BACKING MOUNTPOINT [fuse options]      unmount: fusermount3 -u
 *
 * One limit: FUSE drops cached pages on a change of attributes only where
 * it does not cache writes, so a writeback mount is a writer whose own
 * reads stay stale; t_coherence reads through the other mount.
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static char *backing;
static int writeback;   /* CACHEFS_WRITEBACK: written pages stay dirty */

/* The backing path of p (malloc'd), or NULL. */
static char *real_of(const char *p)
{
    char *s;
    return asprintf(&s, "%s%s", backing, p) < 0 ? NULL : s;
}

/* Runs a path call on p's backing path: 0 or -errno. */
#define ON_PATH(p, call)                                                                          \
    do {                                                                                          \
        char *path = real_of(p);                                                                  \
        if (NULL == path) {                                                                       \
            return -ENOMEM;                                                                       \
        }                                                                                         \
        int rc_ = (call) < 0 ? -errno : 0;                                                        \
        free(path);                                                                               \
        return rc_;                                                                               \
    } while (0)

static void *cf_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    cfg->use_ino = 1;
    cfg->kernel_cache = 1;
    cfg->attr_timeout = 3600;
    cfg->entry_timeout = 3600;
    cfg->negative_timeout = 0;
    if (NULL != getenv("CACHEFS_WRITEBACK") && (conn->capable & FUSE_CAP_WRITEBACK_CACHE)) {
        conn->want |= FUSE_CAP_WRITEBACK_CACHE;
        writeback = 1;
    }
    if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA) {
        conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
    }
    return NULL;
}

static int cf_getattr(const char *p, struct stat *st, struct fuse_file_info *fi)
{
    if (NULL != fi) {
        return fstat((int) fi->fh, st) < 0 ? -errno : 0;
    }
    ON_PATH(p, lstat(path, st));
}

static int cf_readdir(const char *p, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    (void) off;
    (void) fi;
    (void) flags;
    char *path = real_of(p);
    DIR *d = NULL != path ? opendir(path) : NULL;
    int err = errno;
    free(path);
    if (NULL == d) {
        return -err;
    }
    for (struct dirent *e; NULL != (e = readdir(d));) {
        fill(buf, e->d_name, NULL, 0, 0);
    }
    closedir(d);
    return 0;
}

/* Writeback caching reads pages of write-only files: open them read-write. */
static int open_flags(int flags)
{
    if (O_WRONLY == (flags & O_ACCMODE)) {
        flags = (flags & ~O_ACCMODE) | O_RDWR;
    }
    return flags & ~O_APPEND;
}

static int open_backing(const char *p, int flags, mode_t mode, struct fuse_file_info *fi)
{
    char *path = real_of(p);
    int fd = NULL != path ? open(path, open_flags(flags), mode) : -1;
    int err = errno;
    free(path);
    if (fd < 0) {
        return -err;
    }
    fi->fh = (uint64_t) fd;
    fi->keep_cache = 1;
    return 0;
}

static int cf_open(const char *p, struct fuse_file_info *fi)
{
    return open_backing(p, fi->flags, 0, fi);
}

static int cf_create(const char *p, mode_t mode, struct fuse_file_info *fi)
{
    return open_backing(p, fi->flags | O_CREAT, mode, fi);
}

static int cf_read(const char *p, char *b, size_t n, off_t o, struct fuse_file_info *fi)
{
    (void) p;
    ssize_t r = pread((int) fi->fh, b, n, o);
    return r < 0 ? -errno : (int) r;
}

static int cf_write(const char *p, const char *b, size_t n, off_t o, struct fuse_file_info *fi)
{
    (void) p;
    ssize_t r = pwrite((int) fi->fh, b, n, o);
    return r < 0 ? -errno : (int) r;
}

static int cf_release(const char *p, struct fuse_file_info *fi)
{
    (void) p;
    close((int) fi->fh);
    return 0;
}

static int cf_fsync(const char *p, int datasync, struct fuse_file_info *fi)
{
    (void) p;
    int fd = (int) fi->fh;
    return (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? -errno : 0;
}

static int cf_truncate(const char *p, off_t size, struct fuse_file_info *fi)
{
    if (NULL != fi) {
        return ftruncate((int) fi->fh, size) < 0 ? -errno : 0;
    }
    ON_PATH(p, truncate(path, size));
}

static int cf_unlink(const char *p) { ON_PATH(p, unlink(path)); }
static int cf_mkdir(const char *p, mode_t mode) { ON_PATH(p, mkdir(path, mode)); }
static int cf_rmdir(const char *p) { ON_PATH(p, rmdir(path)); }
static int cf_access(const char *p, int mode) { ON_PATH(p, access(path, mode)); }
static int cf_statfs(const char *p, struct statvfs *s) { ON_PATH(p, statvfs(path, s)); }

static int cf_chmod(const char *p, mode_t mode, struct fuse_file_info *fi)
{
    (void) fi;
    ON_PATH(p, chmod(path, mode));
}

static int cf_chown(const char *p, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
    (void) fi;
    ON_PATH(p, lchown(path, uid, gid));
}

/* A writeback mount's kernel keeps the file's times itself and sends them
 * at every flush and fsync, which could put back a time another mount
 * already cached, hiding a change from it.  An NFS client never sets the
 * server's times when it flushes (the server stamps its writes), so such a
 * mount ignores them; times a program sets (touch) are lost there, which
 * no test needs. */
static int cf_utimens(const char *p, const struct timespec tv[2], struct fuse_file_info *fi)
{
    (void) fi;
    if (writeback) {
        return 0;
    }
    ON_PATH(p, utimensat(AT_FDCWD, path, tv, AT_SYMLINK_NOFOLLOW));
}

static int cf_rename(const char *from, const char *to, unsigned int flags)
{
    if (0 != flags) {
        return -EINVAL;
    }
    char *a = real_of(from), *b = real_of(to);
    int rc = NULL != a && NULL != b ? (rename(a, b) < 0 ? -errno : 0) : -ENOMEM;
    free(a);
    free(b);
    return rc;
}

static const struct fuse_operations cachefs_ops = {
    .init = cf_init,         .getattr = cf_getattr, .readdir = cf_readdir, .open = cf_open,
    .create = cf_create,     .read = cf_read,       .write = cf_write,     .release = cf_release,
    .fsync = cf_fsync,       .truncate = cf_truncate, .unlink = cf_unlink, .mkdir = cf_mkdir,
    .rmdir = cf_rmdir,       .chmod = cf_chmod,     .chown = cf_chown,     .utimens = cf_utimens,
    .statfs = cf_statfs,     .access = cf_access,   .rename = cf_rename,
};

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s BACKING MOUNTPOINT [fuse options]\n", argv[0]);
        return 2;
    }
    backing = realpath(argv[1], NULL);
    if (NULL == backing) {
        perror(argv[1]);
        return 2;
    }
    argv[1] = argv[0];   /* fuse_main parses MOUNTPOINT and the options */
    return fuse_main(argc - 1, argv + 1, &cachefs_ops, NULL);
}
