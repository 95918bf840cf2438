/*
 * t_stall: a rank busy outside MPI must not stall the others' atomic I/O.
 *
 * Every rank opens a file in atomic mode with a row-of-tiles subarray view
 * (neighbour tiles overlap, so the writes share bytes and take the atomic
 * path).  After a barrier the sleeper rank (--sleeper, default 1) sleeps
 * --sleep seconds (default 5) without calling MPI, while every other rank
 * performs --writes (default 100) atomic non-contiguous writes of its tile
 * (plus a read of it every 10 writes) and measures the time they take.
 * Fails when any rank needed more than --limit seconds (default 2).  Then
 * the sleeper writes once, everyone closes, and rank 0 checks the flat
 * file: every cell holds a tag of one of the tile's writers.
 *
 * Usage: t_stall [--sleeper K] [--sleep S] [--writes N] [--limit L] [--dir DIR]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atomic_common.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int rank, size, sleeper = 1, writes = 100;
    double sleep_s = 5, limit = 2;
    const char *dir = getenv("SFIO_TEST_DIR") ? getenv("SFIO_TEST_DIR") : "/tmp";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--sleeper") && i + 1 < argc) sleeper = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sleep") && i + 1 < argc) sleep_s = atof(argv[++i]);
        else if (!strcmp(argv[i], "--writes") && i + 1 < argc) writes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--limit") && i + 1 < argc) limit = atof(argv[++i]);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else {
            if (0 == rank) fprintf(stderr, "t_stall: unknown argument %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (size < 2) {
        if (0 == rank) printf("ok stall (skipped: needs 2 ranks)\n");
        MPI_Finalize();
        return 0;
    }
    sleeper %= size;
    char name[128];
    snprintf(name, sizeof(name), "stall (%d ranks, rank %d sleeps %.1f s, %d writes each)", size, sleeper,
             sleep_s, writes);
    char path[4096];
    snprintf(path, sizeof(path), "%s/t_stall.%d.dat", dir, (int) getpid());
    MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);

    const int rows = 64, cols = 64, overlap = 16;
    int gsizes[2] = { rows, size * (cols - overlap) + overlap }, sub[2] = { rows, cols },
        start[2] = { 0, rank * (cols - overlap) };
    MPI_Datatype ft;
    MPI_Type_create_subarray(2, gsizes, sub, start, MPI_ORDER_C, MPI_UINT64_T, &ft);
    MPI_Type_commit(&ft);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_set_atomicity(fh, 1);
    MPI_File_set_view(fh, 0, MPI_UINT64_T, ft, "native", MPI_INFO_NULL);
    uint64_t *buf = malloc((size_t) rows * cols * 8), *rbuf = malloc((size_t) rows * cols * 8);
    int errors = 0;
    double elapsed = 0;

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == sleeper) {
        usleep((useconds_t) (sleep_s * 1e6));        /* busy outside MPI */
        for (int i = 0; i < rows * cols; ++i) buf[i] = cell_tag(rank, 1);
        MPI_File_write_at(fh, 0, buf, rows * cols, MPI_UINT64_T, MPI_STATUS_IGNORE);
    } else {
        double t0 = now();
        for (int w = 1; w <= writes; ++w) {
            for (int i = 0; i < rows * cols; ++i) buf[i] = cell_tag(rank, (uint32_t) w);
            if (MPI_SUCCESS != MPI_File_write_at(fh, 0, buf, rows * cols, MPI_UINT64_T, MPI_STATUS_IGNORE))
                errors++;
            if (0 == w % 10) {
                MPI_File_read_at(fh, 0, rbuf, rows * cols, MPI_UINT64_T, MPI_STATUS_IGNORE);
                /* the private middle of the tile shows this rank's newest write */
                uint64_t want = cell_tag(rank, (uint32_t) w);
                int c = cols / 2;
                if (rbuf[c] != want && errors++ < 3)
                    printf("FAIL %s: rank %d read %#llx after write %d, want %#llx\n", name, rank,
                           (unsigned long long) rbuf[c], w, (unsigned long long) want);
            }
            if (now() - t0 > 4 * limit + 10) {   /* hopelessly stalled: stop early */
                errors++;
                break;
            }
        }
        elapsed = now() - t0;
    }
    MPI_File_close(&fh);
    double worst = 0;
    int errs = 0;
    MPI_Reduce(&elapsed, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&errors, &errs, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        /* every covered cell shows one of its writers */
        long n = (long) gsizes[0] * gsizes[1];
        uint64_t *cells = calloc((size_t) n, 8);
        FILE *f = fopen(path, "rb");
        size_t got = f ? fread(cells, 8, (size_t) n, f) : 0;
        if (f) fclose(f);
        long bad = 0;
        for (long c = 0; c < n; ++c) {
            int wr, col = (int) (c % gsizes[1]);
            uint32_t s;
            if (1 != cell_decode(cells[c], &wr, &s) || wr >= size || col < wr * (cols - overlap) ||
                col >= wr * (cols - overlap) + cols)
                bad++;
        }
        if (got != (size_t) n || bad) {
            printf("FAIL %s: flat file after close: %zu of %ld cells read, %ld cells not from a writer "
                   "of their tile\n", name, got, n, bad);
            errs++;
        }
        if (worst > limit) {
            printf("FAIL %s: the other ranks needed %.3f s for their writes (limit %.1f s): stalled by the "
                   "sleeping rank\n", name, worst, limit);
            errs++;
        } else if (errs) {
            printf("FAIL %s: %d error(s)\n", name, errs);
        } else {
            printf("ok %s: others took %.3f s\n", name, worst);
        }
        free(cells);
        MPI_File_delete(path, MPI_INFO_NULL);
    }
    MPI_Bcast(&errs, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(buf);
    free(rbuf);
    MPI_Type_free(&ft);
    MPI_Finalize();
    return errs ? 1 : 0;
}
