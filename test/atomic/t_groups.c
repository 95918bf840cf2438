/*
 * t_groups: two groups of one file (two MPI_COMM_SELF handles of it, each
 * with its own versioned store) must not lose each other's bytes when one
 * group's fold writes its windows whole.
 *
 *   mpirun -np 2 -x LD_PRELOAD=libpauselock.so t_groups [--dir DIR]
 *       with --mca fbtl_versioned_atomic_mode versioned
 *            --mca fs_versioned_store_dir /dev/shm   (both ranks on one node)
 *
 * With the store in memory, a group's small private pieces go to its log
 * and its fold writes them in windows: a window with holes is read from
 * the file, patched and written back whole, but only while no other
 * group's store exists (their ranks may write the holes meanwhile).
 *
 * Rank 0 (group A) writes PIECES pieces of PIECE bytes, one every
 * 2 * PIECE bytes, atomically: into its log, the file stays empty.  At
 * its close, its fold is held (pauselock.c) just before it locks its
 * window byte, that is just before it looks for other groups.  Meanwhile
 * rank 1 (group B) opens the file on its own, writes the holes
 * atomically and closes: the file now holds B's bytes, and no other store
 * than A's exists.  Then A's fold goes on: it finds no other group and
 * writes its windows whole, so it must read the holes from the file as
 * it is now.  Rank 0 then checks every byte with POSIX reads.  A fold
 * that took the file's size before that check zero-filled B's bytes.
 *
 * Prints "FAIL t_groups: ..." and exits 1 on a lost byte, or when the
 * pause never came (the test then would not test anything).
 *
 *   mpirun -np N t_groups --node-groups [--dir DIR]
 *       same parameters, plus --mca fs_versioned_verbose 1; across nodes
 *
 * The ranks of each node form one group (MPI_Comm_split_type) and open the
 * file on it, all groups at once.  The file is SLOTS slots of PIECE bytes;
 * slot k is group (k mod G)'s, and every rank of that group writes all of
 * its group's slots, atomically, so every byte is shared and goes into a
 * version, folded by domain in windows whose holes are the other groups'
 * slots.  Across nodes with the store in each node's /dev/shm, no group
 * sees another's store: the folds must write pieces, never a window with
 * holes whole (the caller checks the stores' "fold windows split" counts,
 * unless rank 0 printed "t_groups: every group has one rank": then all
 * bytes are private, written in place), and rank 0 checks every byte
 * after all groups closed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PIECE 1024
#define PIECES 64
#define EXTENT (2 * PIECES * PIECE)
/* the coordination file's window byte of rank 0 of a group */
#define WINDOW_BYTE_RANK0 "1"

static unsigned char pat(int group, long off)
{
    return (unsigned char) (1 + (off * 7 + group * 101) % 251);
}

/* Opens this group's handle and writes every second piece from the
 * group's (0 or 1), atomically; the caller closes it. */
static int open_and_write(const char *path, int group, MPI_File *fh)
{
    unsigned char buf[PIECE];
    int rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, fh);
    if (MPI_SUCCESS == rc) rc = MPI_File_set_atomicity(*fh, 1);
    for (int k = 0; MPI_SUCCESS == rc && k < PIECES; ++k) {
        long off = (2L * k + group) * PIECE;
        for (int i = 0; i < PIECE; ++i) buf[i] = pat(group, off + i);
        rc = MPI_File_write_at(*fh, off, buf, PIECE, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    return rc;
}

#define SLOTS 256

/* --node-groups: returns 1 on a failure (rank 0 prints it). */
static int node_groups(const char *path, int rank)
{
    MPI_Comm node;
    int nrank, leader, ngroups = 0, group = 0, np;
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &nrank);
    leader = rank;
    MPI_Bcast(&leader, 1, MPI_INT, 0, node);
    int *leaders = malloc(sizeof(int) * (size_t) np);
    MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);
    /* groups numbered by their leaders' world ranks */
    for (int r = 0; r < np; ++r) {
        if (leaders[r] == r) {
            group += r < leader;
            ngroups++;
        }
    }
    free(leaders);
    int size, largest;
    MPI_Comm_size(node, &size);
    MPI_Allreduce(&size, &largest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (0 == rank && 1 == largest) {
        /* every byte private: written in place, no fold windows at all */
        printf("t_groups: every group has one rank\n");
    }

    MPI_File fh;
    unsigned char buf[PIECE];
    int rc = MPI_File_open(node, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (MPI_SUCCESS == rc) rc = MPI_File_set_atomicity(fh, 1);
    for (int k = group; MPI_SUCCESS == rc && k < SLOTS; k += ngroups) {
        long off = (long) k * PIECE;
        for (int i = 0; i < PIECE; ++i) buf[i] = pat(group, off + i);
        rc = MPI_File_write_at(fh, off, buf, PIECE, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    if (MPI_SUCCESS == rc) rc = MPI_File_close(&fh);
    MPI_Comm_free(&node);
    int bad = MPI_SUCCESS != rc;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (0 == rank && bad) {
        printf("FAIL t_groups: a group's open, writes or close failed\n");
    }
    if (0 == rank && !bad) {
        unsigned char *got = calloc(1, (size_t) SLOTS * PIECE);
        int fd = open(path, O_RDONLY);
        ssize_t n = fd >= 0 ? pread(fd, got, (size_t) SLOTS * PIECE, 0) : -1;
        if (fd >= 0) close(fd);
        if (n != (ssize_t) SLOTS * PIECE) {
            printf("FAIL t_groups: the file holds %zd bytes, want %d\n", n, SLOTS * PIECE);
            bad = 1;
        }
        for (long off = 0; !bad && off < (long) SLOTS * PIECE; ++off) {
            int g = (int) (off / PIECE % ngroups);
            if (got[off] != pat(g, off)) {
                printf("FAIL t_groups: byte %ld is %d, want %d (group %d's of %d)\n", off,
                       got[off], pat(g, off), g, ngroups);
                bad = 1;
            }
        }
        free(got);
        if (!bad) printf("t_groups: ok, %d groups, %d bytes\n", ngroups, SLOTS * PIECE);
        unlink(path);
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return bad;
}

static int wait_for(const char *path, int seconds)
{
    struct timespec ms = { 0, 1000000 };
    for (long n = (long) seconds * 1000; n > 0; --n) {
        if (0 == access(path, F_OK)) return 1;
        nanosleep(&ms, NULL);
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *dir = getenv("SFIO_TEST_DIR") ? getenv("SFIO_TEST_DIR") : "/tmp";
    int by_node = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--node-groups")) by_node = 1;
    }
    char path[4096], mark[4200], go[4200];
    int pid = (int) getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof(path), "%s/t_groups.%d.dat", dir, pid);
    snprintf(mark, sizeof(mark), "%s.paused", path);
    snprintf(go, sizeof(go), "%s.go", path);
    if (0 == rank) {
        unlink(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (by_node) {
        int bad = node_groups(path, rank);
        MPI_Finalize();
        return bad;
    }
    if (2 != np) {
        if (0 == rank) printf("FAIL t_groups: needs 2 ranks\n");
        MPI_Finalize();
        return 1;
    }

    int bad = 0;
    MPI_File fh;
    if (0 == rank) {
        int rc = open_and_write(path, 0, &fh);
        /* hold the fold of this close before its window lock */
        setenv("PAUSELOCK_MARK", mark, 1);
        setenv("PAUSELOCK_GO", go, 1);
        setenv("PAUSELOCK_BYTE", WINDOW_BYTE_RANK0, 1);
        if (MPI_SUCCESS == rc) rc = MPI_File_close(&fh);
        unsetenv("PAUSELOCK_MARK");
        if (MPI_SUCCESS != rc) {
            printf("FAIL t_groups: group A's open, writes or close failed\n");
            bad = 1;
        }
    } else {
        if (!wait_for(mark, 30)) {
            printf("FAIL t_groups: group A's fold never reached its window lock "
                   "(no preload, or the fold wrote no window whole)\n");
            bad = 1;
        } else if (MPI_SUCCESS != open_and_write(path, 1, &fh) || MPI_SUCCESS != MPI_File_close(&fh)) {
            printf("FAIL t_groups: group B's open, writes or close failed\n");
            bad = 1;
        }
        int fd = open(go, O_WRONLY | O_CREAT, 0600);
        if (fd >= 0) close(fd);
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (0 == rank && !bad) {
        unsigned char *got = calloc(1, EXTENT);
        int fd = open(path, O_RDONLY);
        ssize_t n = fd >= 0 ? pread(fd, got, EXTENT, 0) : -1;
        if (fd >= 0) close(fd);
        if (n != EXTENT) {
            printf("FAIL t_groups: the file holds %zd bytes, want %d\n", n, EXTENT);
            bad = 1;
        }
        for (long off = 0; !bad && off < EXTENT; ++off) {
            int group = (int) (off / PIECE % 2);
            if (got[off] != pat(group, off)) {
                printf("FAIL t_groups: byte %ld is %d, want %d (group %c's)\n", off, got[off],
                       pat(group, off), 'A' + group);
                bad = 1;
            }
        }
        free(got);
        if (!bad) printf("t_groups: ok, %d bytes of two groups\n", EXTENT);
    }
    if (0 == rank) {
        unlink(path);
        unlink(mark);
        unlink(go);
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return bad;
}
