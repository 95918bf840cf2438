/*
 * t_peek: every rank reads, byte for byte, what another rank's atomic
 * write has just put in the file, before any collective point of the
 * file (so, with the versioned store, before any fold: the bytes come
 * from the writer's log, across nodes when the ranks span nodes).
 *
 *   mpirun -np N t_peek [FILE] [--rounds R] [--seed S]
 *   (FILE default: $SFIO_TEST_DIR or /tmp, t_peek.<pid>.dat)
 *
 * Round k: rank k % N writes a random extent (up to 64 KiB, overlapping
 * earlier ones) with bytes that encode k and the offset, in atomic mode,
 * with MPI_File_write_at; a barrier on MPI_COMM_WORLD (not a file
 * operation) ends the round; then every rank reads a random extent and
 * the whole file and compares them with the model every rank keeps (the
 * extents come from one seed).  Twice the file is cut to half its size
 * and grown back (MPI_File_set_size, collective): right after the first
 * write, when only its writer has touched the store, and after the last
 * round; the cut bytes must read as zeros (no version resurfaces).
 * After the rounds the file is closed, reopened and checked once more.  Prints "ok peek ..." or "FAIL ..." on
 * rank 0; exit status 1 on any mismatch.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FILE_MAX (1u << 20)
#define EXTENT_MAX (64u << 10)

static uint64_t rng_state;

static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static unsigned char byte_of(int round, uint64_t off)
{
    return (unsigned char) (((uint64_t) round * 131u + off * 7u + (off >> 8)) % 251u + 1u);
}

/* Reads [off, off + len) and compares with the model of size `size`;
 * returns the number of wrong bytes (a short read counts the missing). */
static long check(MPI_File fh, const unsigned char *model, uint64_t size, uint64_t off,
                  uint64_t len, unsigned char *buf, const char *what, int round, int rank)
{
    MPI_Status st;
    int count = 0;
    memset(buf, 0xEE, len);
    MPI_File_read_at(fh, (MPI_Offset) off, buf, (int) len, MPI_BYTE, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    uint64_t expect = off >= size ? 0 : (off + len <= size ? len : size - off);
    long bad = (long) (expect > (uint64_t) count ? expect - (uint64_t) count : 0);
    for (uint64_t i = 0; i < (uint64_t) count && i < expect; ++i) {
        if (buf[i] != model[off + i]) {
            if (0 == bad) {
                fprintf(stderr, "rank %d round %d %s: byte %llu is %u, expected %u\n", rank, round,
                        what, (unsigned long long) (off + i), buf[i], model[off + i]);
            }
            bad++;
        }
    }
    if ((uint64_t) count != expect) {
        fprintf(stderr, "rank %d round %d %s: read %d bytes at %llu, expected %llu\n", rank, round,
                what, count, (unsigned long long) off, (unsigned long long) expect);
    }
    return bad;
}

/* Cuts the file to half its size, checks it, grows it back and checks
 * that the cut bytes are zeros; updates the model and *fsize. */
static long cut_and_regrow(MPI_File fh, unsigned char *model, uint64_t *fsize, unsigned char *buf,
                           int round, int rank)
{
    uint64_t old = *fsize, cut = old / 2;
    long bad = 0;
    MPI_File_set_size(fh, (MPI_Offset) cut);
    memset(model + cut, 0, FILE_MAX - cut);
    *fsize = cut;
    bad += check(fh, model, cut, 0, FILE_MAX, buf, "after set_size cut", round, rank);
    MPI_File_set_size(fh, (MPI_Offset) old);
    *fsize = old;
    bad += check(fh, model, old, 0, FILE_MAX, buf, "after set_size regrow", round, rank);
    MPI_Barrier(MPI_COMM_WORLD);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[4096];
    int rounds = 40;
    uint64_t seed = 0;
    /* the test scripts give a private directory (SFIO_TEST_DIR) */
    const char *dir = getenv("SFIO_TEST_DIR") ? getenv("SFIO_TEST_DIR") : "/tmp";
    snprintf(path, sizeof(path), "%s/t_peek.%d.dat", dir, (int) getpid());
    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (0 == strcmp(argv[i], "--seed") && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 0);
        } else {
            snprintf(path, sizeof(path), "%s", argv[i]);
        }
    }
    if (0 == seed && 0 == rank) {
        seed = (uint64_t) getpid() * 2654435761u ^ (uint64_t) MPI_Wtime();
    }
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
    rng_state = seed;

    unsigned char *model = calloc(FILE_MAX, 1), *buf = malloc(FILE_MAX), *data = malloc(EXTENT_MAX);
    if (0 == rank) {
        MPI_File_delete(path, MPI_INFO_NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_set_atomicity(fh, 1);   /* collective: the last one before the reads */
    uint64_t fsize = 0;
    long bad = 0;
    for (int k = 1; k <= rounds; ++k) {
        int writer = k % size;
        uint64_t len = 1 + rng() % EXTENT_MAX;
        uint64_t off = rng() % (FILE_MAX - len);
        for (uint64_t i = 0; i < len; ++i) {
            model[off + i] = byte_of(k, off + i);
        }
        if (rank == writer) {
            memcpy(data, model + off, len);
            MPI_File_write_at(fh, (MPI_Offset) off, data, (int) len, MPI_BYTE, MPI_STATUS_IGNORE);
        }
        if (off + len > fsize) {
            fsize = off + len;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (1 == k) {
            bad += cut_and_regrow(fh, model, &fsize, buf, k, rank);
        }
        uint64_t rlen = 1 + rng() % EXTENT_MAX;
        uint64_t roff = rng() % (FILE_MAX - rlen);
        bad += check(fh, model, fsize, roff, rlen, buf, "extent", k, rank);
        bad += check(fh, model, fsize, 0, FILE_MAX, buf, "whole file", k, rank);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rounds == k && 1 != k) {
            bad += cut_and_regrow(fh, model, &fsize, buf, k, rank);
        }
    }
    MPI_File_close(&fh);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    bad += check(fh, model, fsize, 0, FILE_MAX, buf, "after close", rounds, rank);
    MPI_File_close(&fh);

    long total = 0;
    MPI_Reduce(&bad, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        if (0 == total) {
            printf("ok peek (%d ranks, %d rounds, seed %llu)\n", size, rounds,
                   (unsigned long long) seed);
        } else {
            printf("FAIL peek (%d ranks, %d rounds, seed %llu): %ld wrong bytes\n", size, rounds,
                   (unsigned long long) seed, total);
        }
        MPI_File_delete(path, MPI_INFO_NULL);
    }
    free(model);
    free(buf);
    free(data);
    MPI_Finalize();
    return 0 == total ? 0 : 1;
}
