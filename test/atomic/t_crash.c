/*
 * t_crash: workload and verifier of the kill -9 recovery test (driven by
 * crash_test.sh).
 *
 * Workload (default mode): every rank opens DIR/data in atomic mode with a
 * row-of-tiles subarray view (neighbour tiles overlap by --overlap columns;
 * the middle columns of a tile are private to its rank) and repeatedly
 * writes a random band of rows of its tile (non-contiguous: one piece per
 * row), every 8-byte cell tagged with (rank, seq).  After each write call
 * returns it appends "seq\n" to DIR/progress.<rank> with write(2).  Rank r
 * writes its pid to DIR/pid.<rank> before the first write and rank 0 the
 * parameters to DIR/meta.  Runs until --seconds pass (then closes cleanly).
 *
 * Verify (--verify, any number of ranks, normally 1): reads DIR/meta and
 * the progress files, opens DIR/data with MPI (the suite recovers an
 * orphaned sidecar here), closes it, checks that no sidecar remains, and
 * reads the flat file with POSIX.  The file must be the serial application
 * of a prefix of some total order consistent with each rank's program
 * order: with S = writes (r, 1..m_r), m_r = max(highest seq of r shown in
 * the file, highest seq recorded in progress.r), every cell of a write in
 * S shows a write of S that covers it, every cell covered by no write of S
 * is zero, and the graph "W before X" (W's cell shows X) plus program
 * order edges (r,s) -> (r,s+1) has no cycle.  So no write is half-present
 * and every write that returned is present.
 *
 * Usage: t_crash --dir DIR [--seed S] [--seconds T] [--rows R] [--cols C]
 *                [--overlap O] [--pause-us U] [--whole]
 *        (--whole: every write covers the whole tile, not a random band)
 *        t_crash --dir DIR --verify [--expect-sidecar] [--no-mpi-open]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_common.h"

typedef struct {
    unsigned long long seed;
    int size, rows, cols, overlap;
    int gcols;
    int whole;                /* every write covers the whole tile */
} params_t;

/* Rows [*a, *b) of rank's tile written by its write number seq (>= 1). */
static void band(const params_t *p, int rank, uint32_t seq, int *a, int *b)
{
    rng_t g = rng_make(p->seed, (uint64_t) rank + 1, seq);
    if (p->whole || 0 == rng_below(&g, 4)) {            /* a quarter of the writes: the whole tile */
        *a = 0;
        *b = p->rows;
        return;
    }
    int x = (int) rng_below(&g, (uint64_t) p->rows), y = (int) rng_below(&g, (uint64_t) p->rows);
    if (x > y) { int t = x; x = y; y = t; }
    *a = x;
    *b = y + 1;
}

static int col0(const params_t *p, int rank)
{
    return rank * (p->cols - p->overlap);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static void path_in(char *out, size_t n, const char *dir, const char *name, int rank)
{
    if (rank >= 0) snprintf(out, n, "%s/%s.%d", dir, name, rank);
    else snprintf(out, n, "%s/%s", dir, name);
}

/* Stores of DIR/data: beside it, or in fs_versioned_store_dir's private
 * subdirectory when that is set (crash_test.sh gives every run a store
 * directory of its own); named .sfio-store.<inode hex>.<random>. */
static int count_sidecars(const char *dir)
{
    const char *store = getenv("OMPI_MCA_fs_versioned_store_dir");
    char path[4096], where[4096], prefix[64];
    struct stat st;
    snprintf(path, sizeof(path), "%s/data", dir);
    if (0 != stat(path, &st)) return 0;
    snprintf(prefix, sizeof(prefix), ".sfio-store.%llx.", (unsigned long long) st.st_ino);
    if (store && *store)
        snprintf(where, sizeof(where), "%s/sfio-store-%u", store, (unsigned) geteuid());
    else
        snprintf(where, sizeof(where), "%s", dir);
    DIR *d = opendir(where);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (0 == strncmp(e->d_name, prefix, strlen(prefix))) ++n;
    if (d) closedir(d);
    return n;
}

/* ------------------------------------------------------------------ */
/* workload                                                            */
/* ------------------------------------------------------------------ */
static int workload(params_t *p, const char *dir, double seconds, int pause_us, int rank)
{
    char path[4096], tmp[4096];
    path_in(path, sizeof(path), dir, "data", -1);
    if (0 == rank) {
        path_in(tmp, sizeof(tmp), dir, "meta", -1);
        FILE *f = fopen(tmp, "w");
        if (!f) { perror(tmp); MPI_Abort(MPI_COMM_WORLD, 2); }
        fprintf(f, "%llu %d %d %d %d %d\n", p->seed, p->size, p->rows, p->cols, p->overlap, p->whole);
        fclose(f);
    }
    MPI_File fh;
    if (MPI_SUCCESS != MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                     MPI_INFO_NULL, &fh)) {
        fprintf(stderr, "t_crash: open %s failed\n", path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_File_set_atomicity(fh, 1);
    int gsizes[2] = { p->rows, p->gcols }, sub[2] = { p->rows, p->cols }, start[2] = { 0, col0(p, rank) };
    MPI_Datatype ft;
    MPI_Type_create_subarray(2, gsizes, sub, start, MPI_ORDER_C, MPI_UINT64_T, &ft);
    MPI_Type_commit(&ft);
    MPI_File_set_view(fh, 0, MPI_UINT64_T, ft, "native", MPI_INFO_NULL);

    path_in(tmp, sizeof(tmp), dir, "progress", rank);
    int prog = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    path_in(tmp, sizeof(tmp), dir, "pid", rank);
    FILE *pf = fopen(tmp, "w");
    if (prog < 0 || !pf) { perror(tmp); MPI_Abort(MPI_COMM_WORLD, 2); }
    fprintf(pf, "%d\n", (int) getpid());
    fclose(pf);

    uint64_t *buf = malloc((size_t) p->rows * p->cols * 8);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    uint32_t seq = 0;
    int stop = 0;
    while (!stop) {
        ++seq;
        int a, b;
        band(p, rank, seq, &a, &b);
        int cnt = (b - a) * p->cols;
        for (int i = 0; i < cnt; ++i) buf[i] = cell_tag(rank, seq);
        MPI_Status st;
        int rc = MPI_File_write_at(fh, (MPI_Offset) a * p->cols, buf, cnt, MPI_UINT64_T, &st);
        int got = -1;
        MPI_Get_count(&st, MPI_UINT64_T, &got);
        if (MPI_SUCCESS != rc || got != cnt) {
            fprintf(stderr, "t_crash: rank %d write %u failed (rc %d, %d of %d)\n", rank, seq, rc, got, cnt);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        char line[32];
        int n = snprintf(line, sizeof(line), "%u\n", seq);
        if (write(prog, line, (size_t) n) != n) { perror("progress"); MPI_Abort(MPI_COMM_WORLD, 2); }
        if (pause_us > 0) usleep((useconds_t) pause_us);
        /* everyone stops together, so no rank waits in close for long */
        if (0 == seq % 16) {
            int s = now() - t0 > seconds;
            MPI_Allreduce(&s, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        }
    }
    MPI_File_close(&fh);
    close(prog);
    MPI_Type_free(&ft);
    free(buf);
    if (0 == rank) printf("t_crash: workload finished without a crash (%u writes on rank 0)\n", seq);
    return 0;
}

/* ------------------------------------------------------------------ */
/* verify                                                              */
/* ------------------------------------------------------------------ */
static int nfail;
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void fail(const char *fmt, ...)
{
    if (nfail++ < 10) {
        va_list ap;
        va_start(ap, fmt);
        printf("FAIL crash-verify: ");
        vprintf(fmt, ap);
        printf("\n");
        va_end(ap);
    }
}

static uint32_t last_progress(const char *dir, int rank)
{
    char tmp[4096];
    path_in(tmp, sizeof(tmp), dir, "progress", rank);
    FILE *f = fopen(tmp, "r");
    unsigned v, last = 0;
    while (f && 1 == fscanf(f, "%u", &v)) {
        if (v != last + 1) fail("progress.%d: %u after %u", rank, v, last);
        last = v;
    }
    if (f) fclose(f);
    return last;
}

static int verify(const char *dir, int expect_sidecar, int mpi_open, int rank)
{
    char path[4096], tmp[4096];
    params_t p;
    path_in(path, sizeof(path), dir, "data", -1);
    path_in(tmp, sizeof(tmp), dir, "meta", -1);
    FILE *mf = fopen(tmp, "r");
    if (!mf || 6 != fscanf(mf, "%llu %d %d %d %d %d", &p.seed, &p.size, &p.rows, &p.cols, &p.overlap, &p.whole)) {
        if (0 == rank) printf("FAIL crash-verify: no meta file in %s (the job died before starting)\n", dir);
        return 1;
    }
    fclose(mf);
    p.gcols = p.size * (p.cols - p.overlap) + p.overlap;
    int before = count_sidecars(dir);
    if (0 == rank && expect_sidecar && 0 == before)
        fail("no store directory .sfio-store.* for %s/data after the crash", dir);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Open with MPI: the suite recovers the orphaned sidecar here. */
    if (mpi_open) {
        MPI_File fh;
        double t0 = now();
        if (MPI_SUCCESS != MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh)) {
            if (0 == rank) fail("MPI_File_open of %s after the crash failed", path);
            return 1;
        }
        double t1 = now();
        MPI_File_close(&fh);
        if (0 == rank) printf("t_crash: open (recovery) took %.3f s\n", t1 - t0);
    }
    if (0 != rank) return 0;
    int after = count_sidecars(dir);
    if (after) fail("%d sidecar director%s left after open+close (recovery did not remove it)", after,
                    after == 1 ? "y" : "ies");

    long N = (long) p.rows * p.gcols;
    uint64_t *cells = calloc((size_t) N, 8);
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(cells, 8, (size_t) N, f) : 0;
    if (f) fclose(f);
    (void) got;                                  /* missing tail cells read as zero */

    uint32_t *returned = calloc((size_t) p.size, sizeof(uint32_t));
    uint32_t *m = calloc((size_t) p.size, sizeof(uint32_t));
    for (int r = 0; r < p.size; ++r) m[r] = returned[r] = last_progress(dir, r);
    /* every cell: a well-formed tag of a write that covers it */
    long garbage = 0;
    for (long c = 0; c < N; ++c) {
        int wr;
        uint32_t s;
        int d = cell_decode(cells[c], &wr, &s);
        if (0 == d) continue;
        int row = (int) (c / p.gcols), col = (int) (c % p.gcols);
        if (d < 0 || wr >= p.size) {
            if (garbage++ < 3) fail("cell (%d,%d) holds garbage %#llx", row, col, (unsigned long long) cells[c]);
            continue;
        }
        int a, b;
        band(&p, wr, s, &a, &b);
        if (col < col0(&p, wr) || col >= col0(&p, wr) + p.cols || row < a || row >= b) {
            if (garbage++ < 3) fail("cell (%d,%d) shows write (%d,%u), which does not cover it", row, col, wr, s);
            continue;
        }
        if (s > m[wr]) m[wr] = s;
    }
    /* nodes: (r, s) for s in 1..m[r] */
    long *base = calloc((size_t) p.size + 1, sizeof(long));
    for (int r = 0; r < p.size; ++r) base[r + 1] = base[r] + m[r];
    int nn = (int) base[p.size];
    graph_t g;
    graph_init(&g, nn);
    char *covered = calloc((size_t) N, 1);
    long lost = 0;
    for (int r = 0; r < p.size; ++r) {
        for (uint32_t s = 1; s <= m[r]; ++s) {
            int u = (int) (base[r] + s - 1);
            if (s < m[r]) graph_edge(&g, u, u + 1);       /* program order */
            int a, b;
            band(&p, r, s, &a, &b);
            long unwritten = 0;
            for (int row = a; row < b; ++row) {
                for (int col = col0(&p, r); col < col0(&p, r) + p.cols; ++col) {
                    long c = (long) row * p.gcols + col;
                    covered[c] = 1;
                    int wr;
                    uint32_t ws;
                    if (1 != cell_decode(cells[c], &wr, &ws)) {
                        unwritten++;
                        continue;
                    }
                    if (wr == r && ws == s) continue;
                    if (wr >= p.size || ws > m[wr]) continue;   /* reported above */
                    graph_edge(&g, u, (int) (base[wr] + ws - 1));
                }
            }
            if (unwritten && lost++ < 3)
                fail("write (%d,%u)%s: %ld of its cells are unwritten (half-present or lost write)", r, s,
                     s <= returned[r] ? " (returned)" : "", unwritten);
        }
    }
    long stray = 0;
    for (long c = 0; c < N; ++c)
        if (!covered[c] && cells[c] && stray++ < 3)
            fail("cell %ld written but covered by no write of the prefix", c);
    int *cyc = malloc(((size_t) nn + 1) * sizeof(int)), clen = 0;
    if (graph_find_cycle(&g, cyc, &clen)) {
        char msg[1024];
        int o = 0;
        for (int i = 0; i < clen && o < 900; ++i) {
            int u = cyc[i], r = 0;
            while (base[r + 1] <= u) ++r;
            o += snprintf(msg + o, sizeof(msg) - o, "%s(%d,%ld)", i ? " -> " : "", r, u - base[r] + 1);
        }
        fail("no serial order explains the file: cycle %s (edge W -> X: X later than W)", msg);
    }
    char sum[1024];
    int o = 0;
    for (int r = 0; r < p.size && o < 900; ++r)
        o += snprintf(sum + o, sizeof(sum) - o, " r%d:%u/%u", r, returned[r], m[r]);
    printf("t_crash: %d ranks, seed %llu, sidecars before %d after %d, returned/prefix per rank:%s\n", p.size,
           p.seed, before, after, sum);
    if (0 == nfail) printf("ok crash-verify\n");
    graph_free(&g);
    free(cyc);
    free(covered);
    free(base);
    free(m);
    free(returned);
    free(cells);
    return nfail ? 1 : 0;
}

int main(int argc, char **argv)
{
    int rank, size, do_verify = 0, expect_sidecar = 0, mpi_open = 1, pause_us = 0;
    double seconds = 20;
    const char *dir = NULL;
    params_t p = { 0, 0, 128, 64, 16, 0, 0 };
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) p.seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--rows") && i + 1 < argc) p.rows = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cols") && i + 1 < argc) p.cols = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--overlap") && i + 1 < argc) p.overlap = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--pause-us") && i + 1 < argc) pause_us = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--whole")) p.whole = 1;
        else if (!strcmp(argv[i], "--verify")) do_verify = 1;
        else if (!strcmp(argv[i], "--expect-sidecar")) expect_sidecar = 1;
        else if (!strcmp(argv[i], "--no-mpi-open")) mpi_open = 0;
        else {
            if (0 == rank) fprintf(stderr, "t_crash: unknown argument %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (!dir) {
        if (0 == rank) fprintf(stderr, "t_crash: --dir DIR is required\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rc;
    if (do_verify) {
        rc = verify(dir, expect_sidecar, mpi_open, rank);
    } else {
        if (0 == p.seed) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            p.seed = ((unsigned long long) ts.tv_nsec << 16) ^ (unsigned long long) getpid() ^ (unsigned long long) ts.tv_sec;
        }
        MPI_Bcast(&p.seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
        p.size = size;
        if (p.overlap < 0 || 2 * p.overlap > p.cols) p.overlap = p.cols / 4;
        p.gcols = size * (p.cols - p.overlap) + p.overlap;
        rc = workload(&p, dir, seconds, pause_us, rank);
    }
    MPI_Finalize();
    return rc;
}
