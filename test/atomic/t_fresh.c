/*
 * t_fresh: bytes a rank wrote before atomic mode began are not "fresh" to
 * the versioned store.  The store puts a rank's private bytes that lie
 * past the file's size at atomic mode's start in place at once, behind an
 * undo note that zeroes them if the rank dies before its version is
 * published: right for bytes that held nothing, wrong for bytes the rank
 * had already written without atomicity (a crash in the first atomic
 * write would zero them).  Those must be journaled instead.
 *
 *   mpirun -np N t_fresh [--dir DIR]   with --mca fs_versioned_verbose 1
 *
 * Every rank's view is its own blocks (all its bytes private).  Each rank
 * writes its block 0 without atomicity past the end of the file, sets
 * atomic mode, then writes block 0 again and block 1 (still past the end)
 * atomically, and reads both back.  Rank 0 prints "t_fresh: block B
 * fresh-expected B": the store's count of fresh bytes, in the stats line
 * it prints at close at verbose level 1, must be B on every rank (block 1
 * only; run_atomic_tests.sh checks it).  Prints "FAIL ..." on a data
 * mismatch; exit status 1 then.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK (4 << 20)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *dir = getenv("SFIO_TEST_DIR") ? getenv("SFIO_TEST_DIR") : "/tmp";
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
    }
    char path[4096];
    int pid = (int) getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof(path), "%s/t_fresh.%d.dat", dir, pid);

    /* rank r sees blocks r, r + np, r + 2 np, ... of BLOCK bytes */
    MPI_Datatype block, tiled;
    MPI_Type_contiguous(BLOCK, MPI_BYTE, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint) BLOCK * np, &tiled);
    MPI_Type_commit(&tiled);
    MPI_Type_free(&block);

    unsigned char *before = malloc(BLOCK), *after = malloc(2 * (size_t) BLOCK),
                  *back = malloc(2 * (size_t) BLOCK);
    for (size_t i = 0; i < BLOCK; ++i) before[i] = (unsigned char) (1 + (i + rank) % 251);
    for (size_t i = 0; i < 2 * (size_t) BLOCK; ++i) after[i] = (unsigned char) (2 + (i * 7 + rank) % 249);

    MPI_File fh;
    MPI_Status st;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_set_view(fh, (MPI_Offset) BLOCK * rank, MPI_BYTE, tiled, "native", MPI_INFO_NULL);
    MPI_File_write_at(fh, 0, before, BLOCK, MPI_BYTE, &st);      /* not atomic */
    MPI_File_set_atomicity(fh, 1);
    /* no rank grows the file before every rank has begun atomic mode: a
     * rank that saw another's block 1 already there would (rightly, but
     * unlike this check expects) journal its own block 1 too */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_write_at(fh, 0, after, 2 * BLOCK, MPI_BYTE, &st);   /* blocks 0 and 1 */
    memset(back, 0, 2 * (size_t) BLOCK);
    MPI_File_read_at(fh, 0, back, 2 * BLOCK, MPI_BYTE, &st);
    int bad = 0 != memcmp(back, after, 2 * (size_t) BLOCK), any = 0;
    MPI_File_close(&fh);
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (0 == rank) {
        if (any) {
            printf("FAIL t_fresh: a rank read back other bytes than it wrote\n");
        } else {
            printf("t_fresh: block %d fresh-expected %d\n", BLOCK, BLOCK);
        }
        MPI_File_delete(path, MPI_INFO_NULL);
    }
    free(before);
    free(after);
    free(back);
    MPI_Type_free(&tiled);
    MPI_Finalize();
    return any ? 1 : 0;
}
