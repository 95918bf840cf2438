/*
 * t_coherence: atomic accesses of two clients of one file system whose
 * clients cache the file's pages (an NFS client; here two FUSE mounts of
 * one directory, cachefs.c), under the list-lock service: a read under a
 * granted lock must see what the last holder wrote.
 *
 *   mpirun -np 2 t_coherence PATH0 PATH1
 *       --mca fbtl_versioned_atomic_mode listlock
 *       --mca fbtl_versioned_lock_backend service
 *
 * Rank r opens the file by PATHr: the same file through two clients.
 * Rank 0's client keeps written pages dirty until they are flushed
 * (cachefs with CACHEFS_WRITEBACK=1); rank 1's client keeps read pages
 * until its cached attributes are revalidated and show a change.  Each
 * round, rank 1 reads the region (its client caches it), rank 0 writes
 * the round's pattern over it, then (after a barrier) rank 1 reads it
 * again and must find the new pattern: rank 0's lock release must have
 * flushed its bytes to the server, and rank 1's grant must have dropped
 * its stale pages.  A lock service whose grants are only messages leaves
 * rank 1 the old pattern.
 *
 * Prints "FAIL t_coherence: ..." and exits 1 on a stale byte.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REGION (64 * 1024)
#define ROUNDS 8

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
    if (2 != size || argc < 3) {
        if (0 == rank) {
            printf("FAIL t_coherence: run with 2 ranks and two paths of one file\n");
        }
        MPI_Finalize();
        return 1;
    }
    static unsigned char buf[REGION];
    MPI_File fh;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL);
    MPI_File_open(MPI_COMM_WORLD, argv[1 + rank], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                  &fh);
    MPI_File_set_atomicity(fh, 1);
    if (0 == rank) {
        memset(buf, 1, sizeof(buf));
        MPI_File_write_at(fh, 0, buf, REGION, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
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
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (1 == rank) {
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
        printf("t_coherence: %d rounds, every read saw the last write\n", ROUNDS);
    }
    MPI_Finalize();
    return 0;
}
