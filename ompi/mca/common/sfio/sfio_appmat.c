/*
 * sfio_appmat: recording and writing the application matrix (see header).
 */
#include "ompi_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi.h"
#include "opal/util/output.h"

#include "sfio_appmat.h"
#include "sfio_ompio.h"
#include "sfio_procmap.h"
#include "sfio_util.h"

/* One process, one row: what this rank sent to each world rank. */
static struct {
    char *path;         /* set at the first call with the parameter */
    int me, n;          /* world rank and size */
    uint64_t *row;      /* n */
    bool failed;        /* said once; stop recording */
} mat;

/* O_NOFOLLOW: a planted symlink must not redirect the write. */
static int open_matrix(int flags)
{
    return open(mat.path, flags | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
}

static void give_up(const char *what)
{
    if (!mat.failed) {
        opal_output(0, "sfio: application matrix %s: %s: %s (not recorded)", mat.path, what,
                    strerror(errno));
    }
    mat.failed = true;
}

/* Writes all of buf at fd's end under a whole-file lock (appends of
 * several nodes on NFS are atomic only this way). */
static int append_locked(int fd, const char *buf, size_t len)
{
    int rc = mca_common_sfio_ofd_lock(fd, F_WRLCK, true, 0, 0);
    if (0 != rc) {
        errno = -rc;
        return -1;
    }
    off_t end = lseek(fd, 0, SEEK_END);
    size_t done = 0;
    while (end >= 0 && done < len) {
        ssize_t w = pwrite(fd, buf + done, len - done, end + (off_t) done);
        if (w < 0 && EINTR == errno) {
            continue;
        }
        if (w <= 0) {
            end = -1;
            break;
        }
        done += (size_t) w;
    }
    int err = end < 0 ? errno : 0;
    (void) mca_common_sfio_ofd_lock(fd, F_UNLCK, true, 0, 0);
    errno = err;
    return end < 0 ? -1 : 0;
}

void mca_common_sfio_appmat_call(struct ompi_communicator_t *comm, const char *path)
{
    (void) comm;
    if (NULL == path || '\0' == path[0] || NULL != mat.path || mat.failed) {
        return;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &mat.me);
    MPI_Comm_size(MPI_COMM_WORLD, &mat.n);
    mat.path = strdup(path);
    mat.row = calloc((size_t) mat.n, sizeof(uint64_t));
    if (NULL == mat.path || NULL == mat.row) {
        mat.failed = true;
        return;
    }
    /* Open MPI 4.1 never closes the I/O frameworks: the engine's close is
     * not a point every process reaches, its exit is */
    (void) atexit(mca_common_sfio_appmat_flush);
    if (0 == mat.me) {
        char head[64];
        int len = snprintf(head, sizeof(head), "sfio-appmatrix 1 %d\n", mat.n);
        int fd = open_matrix(O_CREAT | O_TRUNC);
        if (fd < 0 || 0 != append_locked(fd, head, (size_t) len)) {
            give_up("create");
        }
        if (fd >= 0) {
            close(fd);
        }
    }
}

void mca_common_sfio_appmat_sent(struct ompi_communicator_t *comm, int peer, uint64_t bytes)
{
    if (NULL == mat.row || mat.failed || 0 == bytes || ompi_comm_size(comm) != mat.n) {
        return;
    }
    MPI_Group group, world;
    int w = MPI_UNDEFINED;
    if (MPI_SUCCESS == MPI_Comm_group(comm, &group)) {
        if (MPI_SUCCESS == MPI_Comm_group(MPI_COMM_WORLD, &world)) {
            (void) MPI_Group_translate_ranks(group, 1, &peer, world, &w);
            MPI_Group_free(&world);
        }
        MPI_Group_free(&group);
    }
    if (w >= 0 && w < mat.n) {
        uint64_t *e = &mat.row[w];
        *e = *e + bytes < *e ? UINT64_MAX : *e + bytes;
    }
}

void mca_common_sfio_appmat_flush(void)
{
    if (NULL == mat.row) {
        return;
    }
    if (!mat.failed) {
        /* this rank's row as a one-row matrix in the file's line format */
        size_t cap = 64 + (size_t) mat.n * 48;
        char *text = malloc(cap);
        size_t len = 0;
        for (int j = 0; NULL != text && j < mat.n; ++j) {
            if (0 != mat.row[j]) {
                len += (size_t) snprintf(text + len, cap - len, "%d %d %llu\n", mat.me, j,
                                         (unsigned long long) mat.row[j]);
            }
        }
        int fd = (NULL != text && len > 0) ? open_matrix(O_APPEND) : -2;
        if (-1 == fd || (fd >= 0 && 0 != append_locked(fd, text, len))) {
            give_up("append");
        }
        if (fd >= 0) {
            close(fd);
        }
        free(text);
    }
    free(mat.row);
    free(mat.path);
    memset(&mat, 0, sizeof(mat));
}
