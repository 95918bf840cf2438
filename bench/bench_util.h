/*
 * bench_util.h - what the benchmark programs of bench/ (sfio_bench,
 * sfio_h5bench) share: MPI start-up and the netstore bypass, die(), the
 * common command-line options, the data pattern's mixer, the run's file
 * tag, and the RESULT / SUMMARY report lines that sfio-bench and
 * selftest.sh parse.  Plain C + MPI.
 */
#ifndef SFIO_BENCH_UTIL_H
#define SFIO_BENCH_UTIL_H

#include <mpi.h>
#include <stdint.h>

extern int g_rank, g_np;

/* MPI_Init, rank and size, and netstore_bypass when the preload library is
 * there; prog prefixes die() and "unknown option" messages */
void bench_init(int *argc, char ***argv, const char *prog);

/* netstore (LD_PRELOAD) bypass for this thread's own file accesses; no-op
 * without netstore */
void bypass(int on);

/* rank 0 prints "PROG: msg", every rank aborts with status 2 */
void die(const char *msg);

/* a failed library call: this rank prints "PROG[rank]: " + the message and
 * aborts everything with status 4 */
void bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* "12", "4k", "2M", "1.5G" */
long num(const char *s);

/* BENCH_CORRUPT set and not "0" */
int want_corrupt(void);

/* flip one byte of path at off (open/pread/pwrite; the caller bypasses) */
void flip_file_byte(const char *path, uint64_t off);

/* rank 0 removes path (netstore bypassed); no barrier */
void unlink_rank0(const char *path);

/* rank 0's pid on every rank: names the run's file */
int bench_tag(void);

static inline uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* ---- options shared by the programs --------------------------------- */

typedef struct {
    const char *dir, *op, *mode;
    int quick, reps, otpo, keep, verbose;
    long per_rank;
    MPI_Info info;
    char io_name[32];
} bench_opts_t;

/* the argument loop's cursor; bench_arg() is an option's value (--key=value
 * or the next argument; none: die) */
typedef struct {
    int argc, i;
    char **argv;
    const char *val;
} bench_args_t;

const char *bench_arg(bench_args_t *a);

/* Parses argv into c (reps 3, an MPI_Info for --hint/--ds, -d/--dir,
 * --reps, --quick, --op, --mode, --per-rank, --otpo, --keep, -v, -h/--help)
 * and hands every other key to own(key, a), which returns 0 for an unknown
 * option.  Afterwards: dir from $NETSTORE_DIR else /tmp, reps in 1..64,
 * io_name from $OMPI_MCA_io. */
void bench_parse(int argc, char **argv, bench_opts_t *c,
                 int (*own)(const char *key, bench_args_t *a), void (*usage)(void));

/* ---- report ----------------------------------------------------------- */

/* rank 0: keeps "RESULT scenario=S op=OP np= rep= bytes= seconds= MBps=
 * verified=1 serial= atomic= mode= io=" + extra (" key=value ...") for
 * bench_finish() and adds sec to op's series; with -v one line to stderr,
 * "  [S] OP rep R: T s M MB/s" + vnote */
void bench_report(const bench_opts_t *c, const char *scenario, const char *op, int rep,
                  double bytes, double sec, int serial, int atomic, const char *extra,
                  const char *vnote);

/* rank 0: the RESULT lines, one SUMMARY line per op (median, min, max),
 * with --otpo "Time in seconds = X" (sum of the medians) */
void bench_finish(const bench_opts_t *c, const char *scenario);

#endif
