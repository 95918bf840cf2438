/*
 * sfio-place: place MPI processes by the traffic of their collective I/O
 * (the application matrix fcoll/adaptive writes when
 * fcoll_adaptive_matrix_file names a file) on a machine described by its
 * nodes, slots and packages, with per-byte costs measured or given.
 *
 *   sfio-place plan MATRIX --hosts H1:S1[,H2:S2...] -o RANKFILE
 *              [--packages P] [--costs PKG,NODE,NET | --costs-file F]
 *              [--algorithm auto|mpipp|setmatch] [--from block|cyclic]
 *              [--starts K] [--seed S]
 *   mpirun ... sfio-place measure -o COSTS_FILE   (one rank per slot)
 *
 * plan writes a rankfile (Open MPI 4.1: mpirun --rankfile F; 5.0: --map-by
 * rankfile:file=F) and prints one line: the cost of the --from mapping
 * (what mpirun does without a rankfile: block fills nodes in turn, cyclic
 * deals ranks round-robin) and of the tool's.  measure times ping-pongs
 * between ranks on the same package, on the same node and on different
 * nodes and writes the three per-byte costs for --costs-file.
 */
#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sfio_package.h"
#include "sfio_procmap.h"

#define MAX_HOSTS 4096

static void usage(void)
{
    fprintf(stderr,
            "usage: sfio-place plan MATRIX --hosts H1:S1[,H2:S2...] -o RANKFILE\n"
            "                  [--packages P] [--costs PKG,NODE,NET | --costs-file F]\n"
            "                  [--algorithm auto|mpipp|setmatch] [--from block|cyclic]\n"
            "                  [--starts K] [--seed S]\n"
            "       mpirun ... sfio-place measure -o COSTS_FILE\n");
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    if (NULL == f) {
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (NULL != buf && 0 < (got = fread(buf + len, 1, cap - 1 - len, f))) {
        len += got;
        if (len + 1 == cap) {
            char *bigger = realloc(buf, cap *= 2);
            if (NULL == bigger) {
                free(buf);
                buf = NULL;
            }
            buf = bigger;
        }
    }
    fclose(f);
    if (NULL != buf) {
        buf[len] = '\0';
    }
    return buf;
}

/* "h1:4,h2:4" into names and slot counts; returns the node count or -1. */
static int parse_hosts(char *spec, char **names, int *slots)
{
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(spec, ",", &save); NULL != tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(tok, ':');
        char *end = NULL;
        long s = NULL != colon ? strtol(colon + 1, &end, 10) : 0;
        if (NULL == colon || colon == tok || '\0' != *end || s < 1 || s > 1 << 16 ||
            n == MAX_HOSTS) {
            return -1;
        }
        *colon = '\0';
        names[n] = tok;
        slots[n++] = (int) s;
    }
    return n;
}

/* The costs file: lines "package X", "node Y", "net Z" ('#' comments). */
static int read_costs(const char *path, double c[3])
{
    static const char *keys[3] = { "package", "node", "net" };
    char *text = read_all(path);
    int seen = 0;
    if (NULL == text) {
        return -errno;
    }
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); NULL != line;
         line = strtok_r(NULL, "\n", &save)) {
        char key[32];
        double v;
        if ('#' == line[0] || 2 != sscanf(line, "%31s %lf", key, &v)) {
            continue;
        }
        for (int k = 0; k < 3; ++k) {
            if (0 == strcmp(key, keys[k]) && v >= 0) {
                c[k] = v;
                seen |= 1 << k;
            }
        }
    }
    free(text);
    return 7 == seen ? 0 : -EINVAL;
}

static int plan(int argc, char **argv)
{
    const char *matrix = NULL, *out = NULL, *hosts = NULL, *costs_file = NULL;
    const char *algorithm = "auto", *from = "block";
    double c[3] = { MCA_COMMON_SFIO_PROCMAP_COST_PACKAGE, MCA_COMMON_SFIO_PROCMAP_COST_NODE,
                    MCA_COMMON_SFIO_PROCMAP_COST_NET };
    int packages = 1, starts = 8;
    unsigned long long seed = 1;

    for (int i = 2; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (0 == strcmp(a, "-o") && v) {
            out = v, ++i;
        } else if (0 == strcmp(a, "--hosts") && v) {
            hosts = v, ++i;
        } else if (0 == strcmp(a, "--packages") && v) {
            packages = atoi(v), ++i;
        } else if (0 == strcmp(a, "--costs") && v) {
            if (3 != sscanf(v, "%lf,%lf,%lf", &c[0], &c[1], &c[2])) {
                fprintf(stderr, "sfio-place: --costs wants PKG,NODE,NET\n");
                return 2;
            }
            ++i;
        } else if (0 == strcmp(a, "--costs-file") && v) {
            costs_file = v, ++i;
        } else if (0 == strcmp(a, "--algorithm") && v) {
            algorithm = v, ++i;
        } else if (0 == strcmp(a, "--from") && v) {
            from = v, ++i;
        } else if (0 == strcmp(a, "--starts") && v) {
            starts = atoi(v), ++i;
        } else if (0 == strcmp(a, "--seed") && v) {
            seed = strtoull(v, NULL, 10), ++i;
        } else if ('-' != a[0] && NULL == matrix) {
            matrix = a;
        } else {
            usage();
            return 2;
        }
    }
    if (NULL == matrix || NULL == out || NULL == hosts || starts < 1 ||
        (0 != strcmp(from, "block") && 0 != strcmp(from, "cyclic")) ||
        (0 != strcmp(algorithm, "auto") && 0 != strcmp(algorithm, "mpipp") &&
         0 != strcmp(algorithm, "setmatch"))) {
        usage();
        return 2;
    }
    if (NULL != costs_file && 0 != read_costs(costs_file, c)) {
        fprintf(stderr, "sfio-place: %s: want lines 'package X', 'node Y', 'net Z'\n",
                costs_file);
        return 1;
    }

    char *text = read_all(matrix), *spec = strdup(hosts);
    char **names = calloc(MAX_HOSTS, sizeof(char *));
    int *slots = calloc(MAX_HOSTS, sizeof(int));
    uint64_t *app = NULL;
    int n = 0, line = 0, rc = 1;
    mca_common_sfio_procmap_arch_t arch = { 0 };
    int *base = NULL, *placed = NULL;
    if (NULL == text) {
        fprintf(stderr, "sfio-place: %s: %s\n", matrix, strerror(errno));
        goto done;
    }
    int prc = mca_common_sfio_procmap_app_parse(text, &n, &app, &line);
    if (0 != prc) {
        fprintf(stderr, "sfio-place: %s: not an application matrix (line %d)\n", matrix, line);
        goto done;
    }
    int nnodes = (NULL != spec && NULL != names && NULL != slots)
                     ? parse_hosts(spec, names, slots) : -1;
    if (nnodes < 1) {
        fprintf(stderr, "sfio-place: --hosts wants NAME:SLOTS[,NAME:SLOTS...]\n");
        goto done;
    }
    if (0 != mca_common_sfio_procmap_arch_build(nnodes, slots, packages, c[0], c[1], c[2],
                                                &arch)) {
        fprintf(stderr, "sfio-place: bad machine description\n");
        goto done;
    }
    if (n > arch.nslots) {
        fprintf(stderr, "sfio-place: %d ranks but %d slots in --hosts\n", n, arch.nslots);
        goto done;
    }
    base = malloc((size_t) n * sizeof(int));
    placed = malloc((size_t) n * sizeof(int));
    if (NULL == base || NULL == placed) {
        goto done;
    }
    if (0 == strcmp(from, "block")) {
        mca_common_sfio_procmap_map_block(&arch, n, base);
    } else {
        mca_common_sfio_procmap_map_cyclic(&arch, n, base);
    }
    bool regular = 1 == mca_common_sfio_procmap_app_is_regular(app, n);
    const char *used = 0 == strcmp(algorithm, "auto") ? (regular ? "setmatch" : "mpipp")
                                                       : algorithm;
    double after = 0;
    if (0 == strcmp(used, "setmatch")) {
        prc = mca_common_sfio_procmap_setmatch(app, n, &arch, placed);
        after = 0 == prc ? mca_common_sfio_procmap_cost(app, n, &arch, placed) : 0;
    } else {
        prc = mca_common_sfio_procmap_mpipp(app, n, &arch, base, starts, seed, placed, &after);
    }
    if (0 != prc) {
        fprintf(stderr, "sfio-place: %s failed: %s\n", used, strerror(-prc));
        goto done;
    }
    double before = mca_common_sfio_procmap_cost(app, n, &arch, base);
    if (after > before) {   /* setmatch is greedy: never hand back worse */
        memcpy(placed, base, (size_t) n * sizeof(int));
        after = before;
    }

    FILE *f = fopen(out, "w");
    if (NULL == f) {
        fprintf(stderr, "sfio-place: %s: %s\n", out, strerror(errno));
        goto done;
    }
    fprintf(f, "# sfio-place %s: cost %.6g (%s) -> %.6g\n", used, before, from, after);
    for (int i = 0; i < n; ++i) {
        int s = placed[i];
        fprintf(f, "rank %d=%s slot=%d\n", i, names[arch.node[s]], arch.slot_in_node[s]);
    }
    if (0 != fclose(f)) {
        fprintf(stderr, "sfio-place: %s: %s\n", out, strerror(errno));
        goto done;
    }
    printf("sfio-place: %d ranks, %s%s: cost %.6g (%s) -> %.6g (%.1f%% lower), rankfile %s\n",
           n, used, regular ? " (regular pattern)" : "", before, from, after,
           before > 0 ? 100.0 * (before - after) / before : 0.0, out);
    rc = 0;
done:
    free(text);
    free(spec);
    free(names);
    free(slots);
    free(app);
    free(base);
    free(placed);
    if (arch.nslots > 0) {
        mca_common_sfio_procmap_arch_free(&arch);
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* measure: per-byte costs of the three distances, by ping-pong        */
/* ------------------------------------------------------------------ */

enum { DIST_PACKAGE, DIST_NODE, DIST_NET, NDIST };

static int measure(int argc, char **argv)
{
    const char *out = NULL;
    for (int i = 2; i < argc; ++i) {
        if (0 == strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        }
    }
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (NULL == out) {
        if (0 == rank) {
            usage();
        }
        MPI_Finalize();
        return 2;
    }
    char host[256] = "";
    (void) gethostname(host, sizeof(host) - 1);
    int pkg = mca_common_sfio_bound_package();
    char *hosts = malloc((size_t) np * sizeof(host));
    int *pkgs = malloc((size_t) np * sizeof(int));
    enum { BYTES = 1 << 20, ITERS = 10, PAIRS_PER_DIST = 3 };
    char *buf = malloc(BYTES);
    if (NULL == hosts || NULL == pkgs || NULL == buf) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 1, BYTES);
    MPI_Allgather(host, sizeof(host), MPI_CHAR, hosts, sizeof(host), MPI_CHAR, MPI_COMM_WORLD);
    MPI_Allgather(&pkg, 1, MPI_INT, pkgs, 1, MPI_INT, MPI_COMM_WORLD);

    double sum[NDIST] = { 0 };
    int count[NDIST] = { 0 };
    for (int i = 0; i < np; ++i) {
        for (int j = i + 1; j < np; ++j) {
            bool same_node = 0 == strcmp(hosts + (size_t) i * sizeof(host),
                                         hosts + (size_t) j * sizeof(host));
            int d = !same_node ? DIST_NET
                    : (pkgs[i] >= 0 && pkgs[i] == pkgs[j]) ? DIST_PACKAGE : DIST_NODE;
            if (count[d] >= PAIRS_PER_DIST) {
                continue;   /* the same answer on every rank: no message needed */
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == i || rank == j) {
                int peer = rank == i ? j : i;
                for (int w = 0; w <= ITERS; ++w) {
                    double t0 = MPI_Wtime();
                    if (rank == i) {
                        MPI_Send(buf, BYTES, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
                        MPI_Recv(buf, BYTES, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    } else {
                        MPI_Recv(buf, BYTES, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                        MPI_Send(buf, BYTES, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
                    }
                    if (w > 0 && rank == i) {   /* the first round warms up */
                        sum[d] += (MPI_Wtime() - t0) / (2.0 * BYTES);
                    }
                }
            }
            count[d]++;
        }
    }
    double all[NDIST];
    MPI_Reduce(sum, all, NDIST, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    int rc = 0;
    if (0 == rank) {
        double c[NDIST];
        for (int d = 0; d < NDIST; ++d) {
            c[d] = count[d] > 0 ? all[d] / (count[d] * ITERS) : 0;
        }
        /* a distance with no pair here takes its neighbour's cost */
        if (0 == count[DIST_NODE]) {
            c[DIST_NODE] = count[DIST_PACKAGE] ? c[DIST_PACKAGE] : c[DIST_NET];
        }
        if (0 == count[DIST_PACKAGE]) {
            c[DIST_PACKAGE] = c[DIST_NODE];
        }
        if (0 == count[DIST_NET]) {
            c[DIST_NET] = c[DIST_NODE] * MCA_COMMON_SFIO_PROCMAP_COST_NET /
                          MCA_COMMON_SFIO_PROCMAP_COST_NODE;
        }
        double unit = c[DIST_PACKAGE] > 0 ? c[DIST_PACKAGE] : 1;
        FILE *f = fopen(out, "w");
        if (NULL == f) {
            fprintf(stderr, "sfio-place: %s: %s\n", out, strerror(errno));
            rc = 1;
        } else {
            fprintf(f, "# sfio-place measure: %d ranks, ping-pong of %d B, seconds per byte "
                       "relative to the same package (pairs measured: %d, %d, %d)\n",
                    np, BYTES, count[0], count[1], count[2]);
            fprintf(f, "package %.6g\nnode %.6g\nnet %.6g\n", c[DIST_PACKAGE] / unit,
                    c[DIST_NODE] / unit, c[DIST_NET] / unit);
            rc = 0 != fclose(f);
            printf("sfio-place measure: --costs %.3g,%.3g,%.3g (package, node, network; "
                   "written to %s)\n",
                   c[DIST_PACKAGE] / unit, c[DIST_NODE] / unit, c[DIST_NET] / unit, out);
        }
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(hosts);
    free(pkgs);
    free(buf);
    MPI_Finalize();
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && 0 == strcmp(argv[1], "plan")) {
        return plan(argc, argv);
    }
    if (argc >= 2 && 0 == strcmp(argv[1], "measure")) {
        return measure(argc, argv);
    }
    usage();
    return 2;
}
