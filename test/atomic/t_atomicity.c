/*
 * ROMIO atomicity.c scenario: rank 0 writes whole arrays (all elements the
 * same value, a new value each round) in atomic mode while every other
 * rank reads the same region; a reader must never see two values mixed.
 * Runs with a contiguous view and with a strided (vector) view, several
 * rounds each.  Exit 0 and "ok" lines on success.
 * Usage: t_atomicity [--n INTS] [--rounds R] [--dir DIR]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int check_uniform(const int *buf, int n, int *bad_at)
{
    for (int i = 1; i < n; ++i) {
        if (buf[i] != buf[0]) {
            *bad_at = i;
            return 0;
        }
    }
    return 1;
}

static int run(const char *path, int n, int rounds, int strided, int rank, int size)
{
    MPI_File fh;
    MPI_Datatype ftype = MPI_DATATYPE_NULL;
    int *buf = malloc((size_t) n * sizeof(int));
    int errors = 0, last_seen = 0;

    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_set_atomicity(fh, 1);
    if (strided) {
        /* every other block of 4 ints: one atomic access spans many pieces */
        MPI_Type_vector(n / 4, 4, 8, MPI_INT, &ftype);
        MPI_Type_commit(&ftype);
        MPI_File_set_view(fh, 0, MPI_INT, ftype, "native", MPI_INFO_NULL);
    }
    /* initial contents: all zero */
    if (0 == rank) {
        for (int i = 0; i < n; ++i) buf[i] = 0;
        MPI_File_write_at(fh, 0, buf, n, MPI_INT, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int round = 1; round <= rounds; ++round) {
        if (0 == rank) {
            for (int i = 0; i < n; ++i) buf[i] = round;
            MPI_File_write_at(fh, 0, buf, n, MPI_INT, MPI_STATUS_IGNORE);
        } else {
            for (int k = 0; k < 3; ++k) {
                int bad_at = 0;
                MPI_File_read_at(fh, 0, buf, n, MPI_INT, MPI_STATUS_IGNORE);
                if (!check_uniform(buf, n, &bad_at)) {
                    if (errors++ < 3)
                        fprintf(stderr, "rank %d round %d: mixed data: [0]=%d [%d]=%d\n", rank,
                                round, buf[0], bad_at, buf[bad_at]);
                }
                /* writes are serialized: a reader never goes back in time */
                if (buf[0] < last_seen || buf[0] < 0 || buf[0] > rounds) {
                    if (errors++ < 3)
                        fprintf(stderr, "rank %d: value %d after %d\n", rank, buf[0], last_seen);
                }
                last_seen = buf[0];
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* after all writes completed, every rank sees the last round */
    MPI_File_read_at(fh, 0, buf, n, MPI_INT, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; ++i) {
        if (buf[i] != rounds) {
            if (errors++ < 3)
                fprintf(stderr, "rank %d: final [%d]=%d want %d\n", rank, i, buf[i], rounds);
            break;
        }
    }
    MPI_File_close(&fh);
    /* The flat file alone holds the serialized result after close. */
    if (0 == rank) {
        FILE *f = fopen(path, "rb");
        /* a vector ends at its last block: no trailing hole */
        size_t want = strided ? (size_t) 8 * (n / 4) - 4 : (size_t) n;
        int *all = calloc(want, sizeof(int));
        size_t got = f ? fread(all, sizeof(int), want, f) : 0;
        for (size_t i = 0; i < want; ++i) {
            int expect = (strided && (i % 8) >= 4) ? 0 : rounds;
            if (i >= got || all[i] != expect) {
                if (errors++ < 3)
                    fprintf(stderr, "flat file after close: [%zu]=%d want %d (%zu ints read)\n",
                            i, i < got ? all[i] : -1, expect, got);
                break;
            }
        }
        if (f) fclose(f);
        free(all);
    }
    if (ftype != MPI_DATATYPE_NULL) MPI_Type_free(&ftype);
    free(buf);
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    (void) size;
    return errors;
}

int main(int argc, char **argv)
{
    int rank, size, n = 1 << 16, rounds = 20;
    const char *dir = getenv("SFIO_TEST_DIR") ? getenv("SFIO_TEST_DIR") : "/tmp";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc) n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/t_atomicity.%d.dat", dir, (int) getpid());
    MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
    int failed = 0;
    for (int strided = 0; strided <= 1; ++strided) {
        int e = run(path, n, rounds, strided, rank, size);
        if (0 == rank) printf("%s atomicity %s (%d ranks, %d ints, %d rounds)\n", e ? "FAIL" : "ok",
                              strided ? "vector-view" : "contiguous", size, n, rounds);
        failed += e != 0;
        if (0 == rank) MPI_File_delete(path, MPI_INFO_NULL);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return failed ? 1 : 0;
}
