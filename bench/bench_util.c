/*
 * bench_util.c - see bench_util.h.
 */
#define _GNU_SOURCE
#include "bench_util.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int g_rank, g_np;
static const char *g_prog = "bench";
static void (*g_bypass)(int);

void bench_init(int *argc, char ***argv, const char *prog)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_np);
    g_prog = prog;
    *(void **)(&g_bypass) = dlsym(RTLD_DEFAULT, "netstore_bypass");
}

void bypass(int on)
{
    if (g_bypass) g_bypass(on);
}

void die(const char *msg)
{
    if (g_rank == 0) fprintf(stderr, "%s: %s\n", g_prog, msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

void bench_fail(const char *fmt, ...)
{
    char *msg = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0) msg = NULL;
    va_end(ap);
    fprintf(stderr, "%s[%d]: %s\n", g_prog, g_rank, msg ? msg : fmt);
    MPI_Abort(MPI_COMM_WORLD, 4);
    exit(4);
}

long num(const char *s)
{
    char *e;
    double v = strtod(s, &e);
    if (*e == 'k' || *e == 'K') v *= 1024;
    else if (*e == 'm' || *e == 'M') v *= 1024 * 1024;
    else if (*e == 'g' || *e == 'G') v *= 1024.0 * 1024 * 1024;
    return (long)v;
}

int want_corrupt(void)
{
    const char *s = getenv("BENCH_CORRUPT");
    return s && *s && strcmp(s, "0") != 0;
}

void flip_file_byte(const char *path, uint64_t off)
{
    int fd = open(path, O_RDWR);
    unsigned char c = 0;
    if (fd >= 0 && pread(fd, &c, 1, (off_t)off) == 1) {
        c ^= 0x5a;
        if (pwrite(fd, &c, 1, (off_t)off) != 1) perror("corrupt");
    }
    if (fd >= 0) close(fd);
}

void unlink_rank0(const char *path)
{
    if (g_rank == 0) {
        bypass(1);
        unlink(path);
        bypass(0);
    }
}

int bench_tag(void)
{
    int tag = 0;
    if (g_rank == 0) tag = (int)getpid();
    MPI_Bcast(&tag, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return tag;
}

/* ---- options ------------------------------------------------------------ */

const char *bench_arg(bench_args_t *a)
{
    if (a->val) return a->val;
    if (a->i + 1 < a->argc) return a->argv[++a->i];
    die("missing value");
    return "";
}

void bench_parse(int argc, char **argv, bench_opts_t *c,
                 int (*own)(const char *key, bench_args_t *a), void (*usage)(void))
{
    c->reps = 3;
    MPI_Info_create(&c->info);
    bench_args_t A = {argc, 1, argv, NULL};
    for (; A.i < argc; A.i++) {
        const char *arg = argv[A.i];
        char key[64];
        snprintf(key, sizeof(key), "%s", arg);
        char *eq = strchr(key, '=');
        A.val = NULL;
        if (eq && arg[0] == '-' && arg[1] == '-') {
            *eq = '\0';
            A.val = arg + (eq - key) + 1;
        }
        if (!strcmp(key, "-d") || !strcmp(key, "--dir")) c->dir = bench_arg(&A);
        else if (!strcmp(key, "--reps")) c->reps = (int)num(bench_arg(&A));
        else if (!strcmp(key, "--quick")) c->quick = 1;
        else if (!strcmp(key, "--op")) c->op = bench_arg(&A);
        else if (!strcmp(key, "--mode")) c->mode = bench_arg(&A);
        else if (!strcmp(key, "--per-rank")) c->per_rank = num(bench_arg(&A));
        else if (!strcmp(key, "--otpo")) c->otpo = 1;
        else if (!strcmp(key, "--keep")) c->keep = 1;
        else if (!strcmp(key, "-v")) c->verbose = 1;
        else if (!strcmp(key, "--hint")) {
            char kv[256];
            snprintf(kv, sizeof(kv), "%s", bench_arg(&A));
            char *e2 = strchr(kv, '=');
            if (!e2) die("--hint wants key=value");
            *e2 = '\0';
            MPI_Info_set(c->info, kv, e2 + 1);
        } else if (!strcmp(key, "--ds")) {
            const char *d = bench_arg(&A);
            MPI_Info_set(c->info, "romio_ds_read", d);
            MPI_Info_set(c->info, "romio_ds_write", d);
        } else if (!strcmp(key, "-h") || !strcmp(key, "--help")) {
            usage();
            MPI_Finalize();
            exit(0);
        } else if (!own(key, &A)) {
            if (g_rank == 0) fprintf(stderr, "%s: unknown option %s\n", g_prog, arg);
            usage();
            MPI_Finalize();
            exit(2);
        }
    }
    if (!c->dir) c->dir = getenv("NETSTORE_DIR");
    if (!c->dir || !*c->dir) c->dir = "/tmp";
    if (c->reps < 1) c->reps = 1;
    if (c->reps > 64) c->reps = 64;
    /* which io component did the library pick?  (from the MCA env, best effort) */
    const char *e = getenv("OMPI_MCA_io");
    snprintf(c->io_name, sizeof(c->io_name), "%s", e && *e ? e : "default");
}

/* ---- report ------------------------------------------------------------- */

typedef struct {
    double sec[64];
    int n;
    const char *op;
    double bytes;
} series_t;

static series_t g_series[4];
static int g_nseries;
static char g_lines[64 * 4][512];
static int g_nlines;

void bench_report(const bench_opts_t *c, const char *scenario, const char *op, int rep,
                  double bytes, double sec, int serial, int atomic, const char *extra,
                  const char *vnote)
{
    if (g_rank != 0) return;
    snprintf(g_lines[g_nlines++], sizeof(g_lines[0]),
             "RESULT scenario=%s op=%s np=%d rep=%d bytes=%.0f seconds=%.6f MBps=%.2f "
             "verified=1 serial=%d atomic=%d mode=%s io=%s%s",
             scenario, op, g_np, rep, bytes, sec, bytes / sec / 1e6, serial, atomic, c->mode,
             c->io_name, extra);
    series_t *s = NULL;
    for (int i = 0; i < g_nseries; i++)
        if (strcmp(g_series[i].op, op) == 0) s = &g_series[i];
    if (!s) {
        s = &g_series[g_nseries++];
        s->op = op;
        s->n = 0;
    }
    if (s->n < 64) s->sec[s->n++] = sec;
    s->bytes = bytes;
    if (c->verbose)
        fprintf(stderr, "  [%s] %s rep %d: %.3f s %.1f MB/s%s\n", scenario, op, rep, sec,
                bytes / sec / 1e6, vnote);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void bench_finish(const bench_opts_t *c, const char *scenario)
{
    if (g_rank != 0) return;
    for (int i = 0; i < g_nlines; i++) printf("%s\n", g_lines[i]);
    double total = 0;
    for (int i = 0; i < g_nseries; i++) {
        series_t *se = &g_series[i];
        qsort(se->sec, se->n, sizeof(double), cmp_double);
        double med = se->n % 2 ? se->sec[se->n / 2]
                               : 0.5 * (se->sec[se->n / 2 - 1] + se->sec[se->n / 2]);
        printf("SUMMARY scenario=%s op=%s np=%d reps=%d median_s=%.6f min_s=%.6f max_s=%.6f "
               "median_MBps=%.2f\n",
               scenario, se->op, g_np, se->n, med, se->sec[0], se->sec[se->n - 1],
               se->bytes / med / 1e6);
        total += med;
    }
    if (c->otpo) printf("Time in seconds = %.6f\n", total);
    fflush(stdout);
}
