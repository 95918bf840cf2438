/*
 * t_coherence: accesses of two clients of one file system whose clients
 * cache the file's pages (NFS clients; here FUSE mounts of one directory,
 * cachefs.c): a read must see what the other client wrote before it, when
 * MPI says it must.
 *
 *   mpirun -np 2 t_coherence PATH0 [PATH1] [atomic|sync]
 *
 * Rank r opens the file by PATHr (PATH0 for both when PATH1 is missing:
 * two nodes whose clients mount one directory at one path).  Rank 0's
 * client may keep written pages dirty until they are flushed (cachefs
 * with CACHEFS_WRITEBACK=1); rank 1's client keeps read pages until its
 * cached attributes are revalidated and show a change.  Each round, rank
 * 1 reads the region (its client caches it), rank 0 writes the round's
 * pattern over it, then rank 1 reads it again and must find the new
 * pattern, and the file's size, which the write grew by a byte.
 *
 * atomic (default): atomic mode, a barrier between the write and the
 * read.  Under the lock service (listlock) rank 0's release must flush and
 * rank 1's grant revalidate; in versioned mode rank 1 reads rank 0's log
 * (whose tail page it may have cached: the region is not a whole number
 * of pages), and every third round a sync, every third a set_view, folds
 * the versions into the file, which rank 1 then reads.
 * sync: non-atomic mode, MPI's sync-barrier-sync between the write and
 * the read: the reader's sync must drop what its client cached.
 *
 * Prints "FAIL t_coherence: ..." and exits 1 on a stale byte, or when a
 * path is not on such a client (FUSE or NFS): there the run would prove
 * nothing.
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#define REGION (3 * 4096 + 1000)
#define ROUNDS 12

static int fail(const char *what, int round, long at, int got, int want)
{
    printf("FAIL t_coherence: round %d: %s: byte %ld is %d, want %d\n", round, what, at, got, want);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *path = argc > 2 && 1 == rank ? argv[2] : argv[1];
    bool sync_mode = argc > 3 && 0 == strcmp(argv[3], "sync");
    if (2 != size || argc < 2 || (argc > 3 && !sync_mode && 0 != strcmp(argv[3], "atomic"))) {
        if (0 == rank) {
            printf("FAIL t_coherence: run with 2 ranks: PATH0 [PATH1] [atomic|sync]\n");
        }
        MPI_Finalize();
        return 1;
    }
    static unsigned char buf[REGION];
    MPI_File fh;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    struct statfs sfs;
    unsigned long magic = 0 == statfs(path, &sfs) ? (unsigned long) sfs.f_type & 0xffffffffUL : 0;
    if (0x65735546UL != magic && 0x6969UL != magic) {   /* FUSE, NFS */
        printf("FAIL t_coherence: rank %d: %s is not on a FUSE or NFS mount (a client that "
               "caches): the run would prove nothing\n", rank, path);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_set_atomicity(fh, !sync_mode);
    if (0 == rank) {
        memset(buf, 1, sizeof(buf));
        MPI_File_write_at(fh, 0, buf, REGION, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    if (sync_mode) {
        MPI_File_sync(fh);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (sync_mode) {
        MPI_File_sync(fh);
    }
    for (int round = 2; round < 2 + ROUNDS; ++round) {
        if (1 == rank) {
            MPI_File_read_at(fh, 0, buf, REGION, MPI_BYTE, MPI_STATUS_IGNORE);
            for (long i = 0; i < REGION; ++i) {
                if (buf[i] != round - 1) {
                    return fail("before the write", round, i, buf[i], round - 1);
                }
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (0 == rank) {
            memset(buf, round, sizeof(buf));
            MPI_File_write_at(fh, 0, buf, REGION, MPI_BYTE, MPI_STATUS_IGNORE);
            /* and one byte that grows the file */
            MPI_File_write_at(fh, REGION + round, buf, 1, MPI_BYTE, MPI_STATUS_IGNORE);
        }
        if (sync_mode) {
            MPI_File_sync(fh);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_File_sync(fh);
        } else if (0 == round % 3) {
            MPI_File_sync(fh);
        } else if (1 == round % 3) {
            MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (1 == rank) {
            /* first the size: nothing this rank did since asked the server */
            MPI_Offset fsize = 0;
            MPI_File_get_size(fh, &fsize);
            if (fsize != REGION + round + 1) {
                printf("FAIL t_coherence: round %d: the size is %lld, want %lld\n", round,
                       (long long) fsize, (long long) (REGION + round + 1));
                fflush(stdout);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            MPI_File_read_at(fh, 0, buf, REGION, MPI_BYTE, MPI_STATUS_IGNORE);
            for (long i = 0; i < REGION; ++i) {
                if (buf[i] != round) {
                    return fail("after the write", round, i, buf[i], round);
                }
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_File_close(&fh);
    if (0 == rank) {
        printf("t_coherence: %s, %d rounds, every read saw the last write\n",
               sync_mode ? "sync" : "atomic", ROUNDS);
    }
    MPI_Finalize();
    return 0;
}
