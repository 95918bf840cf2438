/*
 * t_serial: serializability checker for MPI atomic mode.
 *
 * Every rank writes overlapping NON-CONTIGUOUS regions of a shared file in
 * atomic mode, every 8-byte cell tagged with (writer rank, write seq) so
 * every cell of the result tells which write put it there.  Patterns:
 *   row     a row of 2-D tiles, neighbours overlap by some columns,
 *           written through a subarray file view;
 *   grid    2-D tiles on a px x py grid overlapping in both dimensions: a
 *           corner cell is covered by up to 4 ranks (subarray view);
 *   random  MPI_Type_indexed views with random block lists per round,
 *           random overlaps between any ranks.
 * Several rounds; each round every rank writes once (all ranks start the
 * round together after a barrier), each round into its own file region.
 * Independent mode cycles through write_at, seek+write and iwrite_at;
 * collective mode (--collective) through write_at_all, seek+write_all and
 * iwrite_at_all.
 *
 * Checks, per round, on (1) a whole-file MPI read before close (after the
 * per-rank reads through each rank's own view are compared with it) and
 * (2) the flat file read with POSIX by rank 0 after close:
 *   - every cell covered by some write holds a tag of a write of this round
 *     that covers it (no unwritten, torn or foreign cells);
 *   - (a) for every pair of writes A, B of the round, the cells of A n B
 *     that show A or B show only A or only B (never both);
 *   - (b) the "came later" relation (X later than Y when a cell covered by
 *     both shows X) has no cycle (DFS).
 *
 * Usage: t_serial [--seed S] [--rounds R] [--patterns "row grid random"]
 *                 [--collective | --collective-only] [--dir DIR] [--quiet]
 * Prints "ok <name>" or "FAIL <name>: detail" per pattern x mode; exit
 * status 1 on any failure.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atomic_common.h"

#define MAXRANKS 64

typedef struct {
    int n, cap;
    int *disp, *len;          /* cell blocks, ascending and disjoint */
    long cells;
} blocks_t;

static void blocks_add(blocks_t *b, int disp, int len)
{
    if (b->n > 0 && b->disp[b->n - 1] + b->len[b->n - 1] == disp) {
        b->len[b->n - 1] += len;
    } else {
        if (b->n == b->cap) {
            b->cap = b->cap ? 2 * b->cap : 16;
            b->disp = realloc(b->disp, (size_t) b->cap * sizeof(int));
            b->len = realloc(b->len, (size_t) b->cap * sizeof(int));
        }
        b->disp[b->n] = disp;
        b->len[b->n++] = len;
    }
    b->cells += len;
}

static void blocks_free(blocks_t *b)
{
    free(b->disp);
    free(b->len);
    memset(b, 0, sizeof(*b));
}

enum { PAT_ROW, PAT_GRID, PAT_RANDOM };

typedef struct {
    int kind;
    const char *name;
    int size;
    uint64_t seed;
    int rounds;
    long ncells;              /* cells per round region */
    /* tiles */
    int gdims[2], tdims[2], overlap, pdims[2];
} pattern_t;

/* Cells rank `rank` writes in round `round`, relative to the round's region. */
static void pattern_blocks(const pattern_t *p, int round, int rank, blocks_t *b)
{
    memset(b, 0, sizeof(*b));
    if (PAT_ROW == p->kind || PAT_GRID == p->kind) {
        int pi = rank / p->pdims[1], pj = rank % p->pdims[1];
        int r0 = pi * (p->tdims[0] - p->overlap), c0 = pj * (p->tdims[1] - p->overlap);
        for (int r = 0; r < p->tdims[0]; ++r) {
            blocks_add(b, (r0 + r) * p->gdims[1] + c0, p->tdims[1]);
        }
        return;
    }
    /* random: sorted, merged random blocks */
    rng_t g = rng_make(p->seed, (uint64_t) round + 1000, (uint64_t) rank);
    int k = 16 + (int) rng_below(&g, 33);
    int *st = malloc((size_t) k * sizeof(int)), *ln = malloc((size_t) k * sizeof(int));
    for (int i = 0; i < k; ++i) {
        ln[i] = 1 + (int) rng_below(&g, 128);
        st[i] = (int) rng_below(&g, (uint64_t) (p->ncells - ln[i]));
    }
    /* insertion sort by start */
    for (int i = 1; i < k; ++i) {
        int s = st[i], l = ln[i], j = i - 1;
        while (j >= 0 && st[j] > s) { st[j + 1] = st[j]; ln[j + 1] = ln[j]; --j; }
        st[j + 1] = s;
        ln[j + 1] = l;
    }
    int cs = st[0], ce = st[0] + ln[0];
    for (int i = 1; i < k; ++i) {
        if (st[i] <= ce) {
            if (st[i] + ln[i] > ce) ce = st[i] + ln[i];
        } else {
            blocks_add(b, cs, ce - cs);
            /* leave a gap so the type stays non-contiguous */
            cs = st[i];
            ce = st[i] + ln[i];
        }
    }
    blocks_add(b, cs, ce - cs);
    free(st);
    free(ln);
}

static void pattern_init(pattern_t *p, int kind, int size, uint64_t seed, int rounds)
{
    memset(p, 0, sizeof(*p));
    p->kind = kind;
    p->size = size;
    p->seed = seed;
    p->rounds = rounds;
    if (PAT_ROW == kind) {
        p->name = "row";
        p->pdims[0] = 1;
        p->pdims[1] = size;
        p->tdims[0] = 64;
        p->tdims[1] = 64;
        p->overlap = 16;
    } else if (PAT_GRID == kind) {
        p->name = "grid";
        int d[2] = { 0, 0 };
        MPI_Dims_create(size, 2, d);
        p->pdims[0] = d[0];
        p->pdims[1] = d[1];
        p->tdims[0] = 48;
        p->tdims[1] = 48;
        p->overlap = 12;
    } else {
        p->name = "random";
        p->ncells = 8192;
        return;
    }
    for (int i = 0; i < 2; ++i) {
        p->gdims[i] = p->pdims[i] * (p->tdims[i] - p->overlap) + p->overlap;
    }
    p->ncells = (long) p->gdims[0] * p->gdims[1];
}

/* ------------------------------------------------------------------ */
/* the checker                                                         */
/* ------------------------------------------------------------------ */

static int report(int *nerr, const char *name, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#include <stdarg.h>
static int printed;   /* FAIL lines printed for the current test */
static int report(int *nerr, const char *name, const char *what, const char *fmt, ...)
{
    ++*nerr;
    if (printed++ < 8) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        printf("FAIL %s: [%s] %s\n", name, what, msg);
        fflush(stdout);
    }
    return 1;
}

/* Checks one round's region.  Returns the number of errors. */
static int check_round(const pattern_t *p, int round, const uint64_t *cells, const char *name,
                       const char *what)
{
    int P = p->size, nerr = 0;
    long N = p->ncells;
    uint64_t *mask = calloc((size_t) N, sizeof(uint64_t));
    for (int r = 0; r < P; ++r) {
        blocks_t b;
        pattern_blocks(p, round, r, &b);
        for (int i = 0; i < b.n; ++i)
            for (int c = b.disp[i]; c < b.disp[i] + b.len[i]; ++c) mask[c] |= 1ull << r;
        blocks_free(&b);
    }
    long *cnt = calloc((size_t) P * P, sizeof(long));   /* cnt[X*P+Y]: cells of X n Y showing X */
    graph_t g;
    graph_init(&g, P);
    for (long c = 0; c < N; ++c) {
        int wr;
        uint32_t seq;
        int d = cell_decode(cells[c], &wr, &seq);
        if (0 == d) {
            if (mask[c])
                report(&nerr, name, what, "round %d cell %ld unwritten but covered by writes %#llx",
                       round, c, (unsigned long long) mask[c]);
            continue;
        }
        if (d < 0 || wr >= P || seq != (uint32_t) round + 1) {
            report(&nerr, name, what, "round %d cell %ld holds garbage or a foreign tag %#llx",
                   round, c, (unsigned long long) cells[c]);
            continue;
        }
        if (!(mask[c] & (1ull << wr))) {
            report(&nerr, name, what, "round %d cell %ld shows rank %d's write, which does not cover it",
                   round, c, wr);
            continue;
        }
        for (int y = 0; y < P; ++y) {
            if (y != wr && (mask[c] & (1ull << y))) {
                cnt[wr * P + y]++;
                graph_edge(&g, y, wr);      /* wr came later than y */
            }
        }
    }
    /* (a) no mix within the overlap of any two writes */
    for (int a = 0; a < P; ++a)
        for (int b = a + 1; b < P; ++b)
            if (cnt[a * P + b] > 0 && cnt[b * P + a] > 0)
                report(&nerr, name, what,
                       "round %d: overlap of rank %d and rank %d writes is mixed: %ld cells from %d, %ld from %d",
                       round, a, b, cnt[a * P + b], a, cnt[b * P + a], b);
    /* (b) the "came later" relation has no cycle */
    int cyc[MAXRANKS + 1], clen;
    if (graph_find_cycle(&g, cyc, &clen)) {
        char buf[256];
        int o = 0;
        for (int i = 0; i < clen && o < 200; ++i) o += snprintf(buf + o, sizeof(buf) - o, "%s%d", i ? "<" : "", cyc[i]);
        report(&nerr, name, what, "round %d: \"came later\" relation has a cycle (ranks %s)", round, buf);
    }
    graph_free(&g);
    free(cnt);
    free(mask);
    return nerr;
}

static int check_all(const pattern_t *p, const uint64_t *cells, const char *name, const char *what)
{
    int e = 0;
    for (int r = 0; r < p->rounds; ++r) e += check_round(p, r, cells + (long) r * p->ncells, name, what);
    return e;
}

static uint64_t fnv(const void *data, size_t n)
{
    const unsigned char *d = data;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ d[i]) * 1099511628211ull;
    return h;
}

/* ------------------------------------------------------------------ */
/* one pattern x mode                                                  */
/* ------------------------------------------------------------------ */

static int run(const pattern_t *p, int collective, const char *path, int rank, int size, int quiet)
{
    char name[128];
    snprintf(name, sizeof(name), "serial %s-%s (%d ranks, %d rounds)", p->name,
             collective ? "coll" : "indep", size, p->rounds);
    int nerr = 0;
    MPI_File fh;
    printed = 0;
    if (0 == rank) MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    if (MPI_SUCCESS != MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                     MPI_INFO_NULL, &fh)) {
        if (0 == rank) printf("FAIL %s: open failed\n", name);
        return 1;
    }
    MPI_File_set_atomicity(fh, 1);
    int flag = 0;
    MPI_File_get_atomicity(fh, &flag);
    if (!flag && 0 == rank) report(&nerr, name, "setup", "get_atomicity returns 0");

    /* The file type: one per pattern; rounds are at successive offsets. */
    MPI_Datatype ftype;
    long *round_off = calloc((size_t) p->rounds + 1, sizeof(long));   /* etype offsets */
    blocks_t mine[p->rounds];
    for (int r = 0; r < p->rounds; ++r) pattern_blocks(p, r, rank, &mine[r]);
    if (PAT_RANDOM != p->kind) {
        int sub[2] = { p->tdims[0], p->tdims[1] };
        int pi = rank / p->pdims[1], pj = rank % p->pdims[1];
        int start[2] = { pi * (p->tdims[0] - p->overlap), pj * (p->tdims[1] - p->overlap) };
        MPI_Type_create_subarray(2, p->gdims, sub, start, MPI_ORDER_C, MPI_UINT64_T, &ftype);
        for (int r = 0; r <= p->rounds; ++r) round_off[r] = (long) r * p->tdims[0] * p->tdims[1];
    } else {
        int nb = 0;
        for (int r = 0; r < p->rounds; ++r) nb += mine[r].n;
        int *bl = malloc((size_t) nb * sizeof(int)), *dp = malloc((size_t) nb * sizeof(int));
        int k = 0;
        for (int r = 0; r < p->rounds; ++r) {
            round_off[r + 1] = round_off[r] + mine[r].cells;
            for (int i = 0; i < mine[r].n; ++i, ++k) {
                bl[k] = mine[r].len[i];
                dp[k] = (int) (r * p->ncells) + mine[r].disp[i];
            }
        }
        MPI_Datatype t;
        MPI_Type_indexed(nb, bl, dp, MPI_UINT64_T, &t);
        MPI_Type_create_resized(t, 0, (MPI_Aint) p->rounds * p->ncells * 8, &ftype);
        MPI_Type_free(&t);
        free(bl);
        free(dp);
    }
    MPI_Type_commit(&ftype);
    MPI_File_set_view(fh, 0, MPI_UINT64_T, ftype, "native", MPI_INFO_NULL);

    long total_mine = round_off[p->rounds];
    uint64_t *buf = malloc((size_t) (total_mine > 0 ? total_mine : 1) * 8);
    for (int r = 0; r < p->rounds; ++r) {
        long cnt = round_off[r + 1] - round_off[r];
        for (long i = 0; i < cnt; ++i) buf[round_off[r] + i] = cell_tag(rank, (uint32_t) r + 1);
        MPI_Barrier(MPI_COMM_WORLD);
        uint64_t *b = buf + round_off[r];
        MPI_Offset off = round_off[r];
        MPI_Request req;
        MPI_Status st;
        int rc;
        switch ((collective ? 3 : 0) + r % 3) {
        case 0: rc = MPI_File_write_at(fh, off, b, (int) cnt, MPI_UINT64_T, &st); break;
        case 1:
            MPI_File_seek(fh, off, MPI_SEEK_SET);
            rc = MPI_File_write(fh, b, (int) cnt, MPI_UINT64_T, &st);
            break;
        case 2:
            rc = MPI_File_iwrite_at(fh, off, b, (int) cnt, MPI_UINT64_T, &req);
            if (MPI_SUCCESS == rc) rc = MPI_Wait(&req, &st);
            break;
        case 3: rc = MPI_File_write_at_all(fh, off, b, (int) cnt, MPI_UINT64_T, &st); break;
        case 4:
            MPI_File_seek(fh, off, MPI_SEEK_SET);
            rc = MPI_File_write_all(fh, b, (int) cnt, MPI_UINT64_T, &st);
            break;
        default:
            rc = MPI_File_iwrite_at_all(fh, off, b, (int) cnt, MPI_UINT64_T, &req);
            if (MPI_SUCCESS == rc) rc = MPI_Wait(&req, &st);
            break;
        }
        int got = -1;
        MPI_Get_count(&st, MPI_UINT64_T, &got);
        if (MPI_SUCCESS != rc || got != cnt) {
            char w[64];
            snprintf(w, sizeof(w), "rank %d round %d", rank, r);
            report(&nerr, name, w, "write returned rc=%d count=%d want %ld", rc, got, cnt);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Each rank reads its own cells back through its view (overlay reads,
     * nothing folded yet). */
    uint64_t *mineback = calloc((size_t) (total_mine > 0 ? total_mine : 1), 8);
    if (total_mine > 0)
        MPI_File_read_at(fh, 0, mineback, (int) total_mine, MPI_UINT64_T, MPI_STATUS_IGNORE);
    int mycount = (int) total_mine, *counts = NULL, *displs = NULL;
    uint64_t *allback = NULL;
    if (0 == rank) {
        counts = malloc((size_t) size * sizeof(int));
        displs = malloc((size_t) size * sizeof(int));
    }
    MPI_Gather(&mycount, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        long t = 0;
        for (int r = 0; r < size; ++r) { displs[r] = (int) t; t += counts[r]; }
        allback = malloc((size_t) (t > 0 ? t : 1) * 8);
    }
    MPI_Gatherv(mineback, mycount, MPI_UINT64_T, allback, counts, displs, MPI_UINT64_T, 0,
                MPI_COMM_WORLD);

    /* Whole file through a byte view: every rank, compared by hash. */
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    long N = (long) p->rounds * p->ncells;
    uint64_t *whole = calloc((size_t) N, 8);
    MPI_Status st;
    MPI_File_read_at(fh, 0, whole, (int) (N * 8), MPI_BYTE, &st);
    uint64_t h = fnv(whole, (size_t) N * 8), *hs = NULL;
    if (0 == rank) hs = malloc((size_t) size * 8);
    MPI_Gather(&h, 1, MPI_UINT64_T, hs, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        for (int r = 1; r < size; ++r)
            if (hs[r] != hs[0])
                report(&nerr, name, "MPI read", "rank %d reads different file contents than rank 0", r);
        nerr += check_all(p, whole, name, "MPI read before close");
        /* the per-rank view reads must agree with the whole-file read */
        for (int r = 0; r < size; ++r) {
            uint64_t *v = allback + displs[r];
            long k = 0, bad = 0;
            for (int rd = 0; rd < p->rounds; ++rd) {
                blocks_t b;
                pattern_blocks(p, rd, r, &b);
                for (int i = 0; i < b.n; ++i)
                    for (int c = b.disp[i]; c < b.disp[i] + b.len[i]; ++c, ++k)
                        if (v[k] != whole[(long) rd * p->ncells + c]) bad++;
                blocks_free(&b);
            }
            if (bad)
                report(&nerr, name, "view read", "rank %d's read through its view differs from the whole-file read in %ld cells", r, bad);
        }
    }
    MPI_File_close(&fh);

    /* The flat file alone holds the serialized result after close. */
    if (0 == rank) {
        uint64_t *flat = calloc((size_t) N, 8);
        FILE *f = fopen(path, "rb");
        size_t got = f ? fread(flat, 8, (size_t) N, f) : 0;
        if (f) fclose(f);
        /* a file may end before the region does when no write covers its
         * last cells (random pattern): the missing cells read as zero */
        (void) got;
        if (memcmp(flat, whole, (size_t) N * 8))
            report(&nerr, name, "flat file", "differs from the MPI read before close");
        nerr += check_all(p, flat, name, "flat file after close");
        free(flat);
        /* the sidecar is gone after a clean close */
        char cmd[4200];
        const char *slash = strrchr(path, '/');
        struct stat sst;
        unsigned long long ino = 0 == stat(path, &sst) ? (unsigned long long) sst.st_ino : 0;
        snprintf(cmd, sizeof(cmd), "ls -d %.*s/.sfio-store.%llx.* >/dev/null 2>&1",
                 (int) (slash - path), path, ino);
        if (0 == system(cmd)) report(&nerr, name, "close", "a sidecar directory remains after close");
        MPI_File_delete(path, MPI_INFO_NULL);
        if (0 == nerr) printf("ok %s\n", name);
        else if (!quiet) printf("FAIL %s: %d problem(s), seed %llu\n", name, nerr, (unsigned long long) p->seed);
        fflush(stdout);
    }
    MPI_Bcast(&nerr, 1, MPI_INT, 0, MPI_COMM_WORLD);

    for (int r = 0; r < p->rounds; ++r) blocks_free(&mine[r]);
    MPI_Type_free(&ftype);
    free(round_off);
    free(buf);
    free(mineback);
    free(whole);
    free(allback);
    free(counts);
    free(displs);
    free(hs);
    return nerr ? 1 : 0;
}

int main(int argc, char **argv)
{
    int rank, size, rounds = 8, indep = 1, coll = 0, quiet = 0;
    unsigned long long seed = 0;
    const char *dir = getenv("SFIO_TEST_DIR") ? getenv("SFIO_TEST_DIR") : "/tmp";
    const char *patterns = "row grid random";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--patterns") && i + 1 < argc) patterns = argv[++i];
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--collective")) coll = 1;
        else if (!strcmp(argv[i], "--collective-only")) { coll = 1; indep = 0; }
        else if (!strcmp(argv[i], "--quiet")) quiet = 1;
        else {
            if (0 == rank) fprintf(stderr, "t_serial: unknown argument %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (size > MAXRANKS) {
        if (0 == rank) printf("FAIL serial: at most %d ranks\n", MAXRANKS);
        MPI_Finalize();
        return 1;
    }
    if (0 == seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = ((unsigned long long) ts.tv_sec * 1000003ull) ^ (unsigned long long) ts.tv_nsec ^
               ((unsigned long long) getpid() << 20);
    }
    MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    char path[4096];
    snprintf(path, sizeof(path), "%s/t_serial.%d.dat", dir, (int) getpid());
    MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("t_serial: %d ranks, seed %llu (rerun with --seed %llu)\n", size, seed, seed);
        fflush(stdout);
    }
    int failed = 0;
    for (int mode = 0; mode < 2; ++mode) {
        if ((0 == mode && !indep) || (1 == mode && !coll)) continue;
        for (int k = PAT_ROW; k <= PAT_RANDOM; ++k) {
            static const char *names[] = { "row", "grid", "random" };
            if (!strstr(patterns, names[k])) continue;
            pattern_t p;
            pattern_init(&p, k, size, seed + (uint64_t) k, rounds);
            failed += run(&p, mode, path, rank, size, quiet);
        }
    }
    MPI_Finalize();
    return failed ? 1 : 0;
}
