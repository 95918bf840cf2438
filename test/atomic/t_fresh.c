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
 *
 *   mpirun -np N t_fresh --through-versions [--dir DIR]
 *       with --mca fs_versioned_store_max_versions N+1 (a compaction at
 *       the second write of the second round, none before)
 *
 * Private bytes written through a version are not fresh either.  Rank r's
 * view is one extent [shared S | private P | shared S], overlapping its
 * neighbours' by S.  In rank order, each rank writes its whole extent:
 * rank 0's private bytes go in place (fresh), every other rank's extent
 * overlaps the version its left neighbour just made, so all of it, its
 * private bytes too, becomes a version.  Each rewrites its left shared
 * bytes, in rank order again; the compaction in this round folds the
 * first versions into the file and empties the indexes of them; then
 * every rank rewrites its private bytes alone.  They overlap no version any more, and they held
 * data: journaled, not fresh (else a crash in that write would zero bytes
 * an earlier, returned write put there).  Rank 0 prints "t_fresh: rank R
 * fresh-expected B" for every rank: S + P for rank 0, 0 for the others.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK (4 << 20)

#define SHARED (64 << 10)
#define PRIVATE (256 << 10)

/* Closes fh and agrees on the ranks' read-back checks; rank 0 says so on a
 * mismatch.  Returns 1 when some rank read other bytes than it wrote. */
static int close_and_agree(MPI_File *fh, int bad, int rank)
{
    int any = 0;
    MPI_File_close(fh);
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (0 == rank && any) {
        printf("FAIL t_fresh: a rank read back other bytes than it wrote\n");
    }
    return any;
}

/* The --through-versions case (see above); returns 1 on a data mismatch. */
static int through_versions(const char *path, int rank, int np)
{
    const int extent = 2 * SHARED + PRIVATE;
    unsigned char *first = malloc(extent), *second = malloc(PRIVATE), *back = malloc(extent);
    for (int i = 0; i < extent; ++i) first[i] = (unsigned char) (3 + (i * 5 + rank) % 241);
    for (int i = 0; i < PRIVATE; ++i) second[i] = (unsigned char) (4 + (i * 3 + rank) % 239);

    MPI_File fh;
    MPI_Status st;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    /* one extent per rank; the next tile of the view lies past every
     * rank's extent, so that the views' intersection sees the private
     * bytes */
    MPI_Datatype one, tiled;
    MPI_Type_contiguous(extent, MPI_BYTE, &one);
    MPI_Type_create_resized(one, 0, (MPI_Aint) (SHARED + PRIVATE) * np + SHARED, &tiled);
    MPI_Type_commit(&tiled);
    MPI_Type_free(&one);
    MPI_File_set_view(fh, (MPI_Offset) (SHARED + PRIVATE) * rank, MPI_BYTE, tiled, "native",
                      MPI_INFO_NULL);
    MPI_File_set_atomicity(fh, 1);
    for (int k = 0; k < np; ++k) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (k == rank) {
            MPI_File_write_at(fh, 0, first, extent, MPI_BYTE, &st);
        }
    }
    /* in rank order again, the left shared bytes once more (versions of
     * shared bytes only): past N + 1 versions waiting, a compaction folds
     * every first-round version */
    for (int k = 0; k < np; ++k) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (k == rank) {
            MPI_File_write_at(fh, 0, first, SHARED, MPI_BYTE, &st);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_write_at(fh, SHARED, second, PRIVATE, MPI_BYTE, &st);
    MPI_Barrier(MPI_COMM_WORLD);
    memset(back, 0, extent);
    MPI_File_read_at(fh, 0, back, extent, MPI_BYTE, &st);
    /* the left shared bytes are this rank's (its left neighbour wrote
     * earlier), the right ones its right neighbour's: the private bytes
     * must be the second write */
    int any = close_and_agree(&fh, 0 != memcmp(back, first, SHARED) ||
                                       0 != memcmp(back + SHARED, second, PRIVATE), rank);
    if (0 == rank) {
        for (int r = 0; !any && r < np; ++r) {
            printf("t_fresh: rank %d fresh-expected %d\n", r, 0 == r ? SHARED + PRIVATE : 0);
        }
        MPI_File_delete(path, MPI_INFO_NULL);
    }
    MPI_Type_free(&tiled);
    free(first);
    free(second);
    free(back);
    return any;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *dir = getenv("SFIO_TEST_DIR") ? getenv("SFIO_TEST_DIR") : "/tmp";
    int versions = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--through-versions")) versions = 1;
    }
    char path[4096];
    int pid = (int) getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof(path), "%s/t_fresh.%d.dat", dir, pid);
    if (versions) {
        int any = through_versions(path, rank, np);
        MPI_Finalize();
        return any;
    }

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
    int any = close_and_agree(&fh, 0 != memcmp(back, after, 2 * (size_t) BLOCK), rank);
    if (0 == rank) {
        if (!any) {
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
