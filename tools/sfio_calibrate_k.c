/*
 * sfio-calibrate-k: Gabriel's step 1.  Measures k, the smallest write size
 * that (nearly) saturates one process's write bandwidth on a file system,
 * by writing a file sequentially with increasing request sizes, and
 * optionally records it where Open MPI reads MCA parameters
 * ($HOME/.openmpi/mca-params.conf: fcoll_adaptive_k = N).
 *
 *   sfio-calibrate-k [--dir DIR] [--min B] [--max B] [--total B]
 *                    [--threshold 0.9] [--sync] [--direct] [--writers N]
 *                    [--write [FILE]]
 *
 * Each size writes --total bytes (default 64 MiB, at least 8 requests)
 * with pwrite into a fresh file; --sync adds fsync (write-back caches),
 * --direct uses O_DIRECT (skips the page cache where supported).  k is
 * the first size whose bandwidth reaches --threshold of the best.
 *
 * --writers N (extension of step 1 for the aggregator count): then 1, 2,
 * 4, ... N processes write concurrently (k-sized requests, --total bytes
 * each, own files).  If the aggregate bandwidth stops growing (the first
 * count within --threshold of the best is below N), that count is recorded
 * as fcoll_adaptive_max_aggregators; otherwise 0 (no limit).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

/* Aggregate MB/s of w processes each writing total bytes in s-byte calls. */
static double concurrent(const char *dir, int w, unsigned long long s, unsigned long long total,
                         const void *buf, int sync)
{
    double t0 = now();
    for (int i = 0; i < w; ++i) {
        pid_t pid = fork();
        if (pid == 0) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/.sfio-calibrate-k.%d.w%d", dir, (int) getppid(), i);
            int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            int bad = fd < 0;
            for (unsigned long long o = 0; !bad && o < total; o += s) {
                bad = pwrite(fd, buf, (size_t) s, (off_t) o) != (ssize_t) s;
            }
            if (fd >= 0 && sync) {
                fsync(fd);
            }
            if (fd >= 0) {
                close(fd);
            }
            unlink(path);
            _exit(bad);
        }
        if (pid < 0) {
            return -1;
        }
    }
    int bad = 0, st;
    for (int i = 0; i < w; ++i) {
        if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
            bad = 1;
        }
    }
    double dt = now() - t0;
    return bad ? -1 : (double) w * (double) total / dt / 1e6;
}

static unsigned long long parse_size(const char *s)
{
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    switch (end && *end ? *end : ' ') {
    case 'k': case 'K': v <<= 10; break;
    case 'm': case 'M': v <<= 20; break;
    case 'g': case 'G': v <<= 30; break;
    default: break;
    }
    return v;
}

/* Replaces (or appends) "name = value" in path. */
static int record(const char *path, const char *name, long long value)
{
    FILE *in = fopen(path, "r");
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap), line[4096];
    if (NULL == out) {
        return -1;
    }
    out[0] = '\0';
    while (in && fgets(line, sizeof(line), in)) {
        const char *p = line;
        while (*p == ' ' || *p == '\t') {
            ++p;
        }
        size_t nl = strlen(name);
        if (0 == strncmp(p, name, nl) && (p[nl] == ' ' || p[nl] == '=')) {
            continue;
        }
        char tag[256];
        snprintf(tag, sizeof(tag), "# %s: measured by sfio-calibrate-k", name);
        if (0 == strncmp(p, tag, strlen(tag))) {
            continue;
        }
        size_t l = strlen(line);
        if (len + l + 1 > cap) {
            cap = 2 * (len + l + 1);
            out = realloc(out, cap);
            if (NULL == out) {
                fclose(in);
                return -1;
            }
        }
        memcpy(out + len, line, l + 1);
        len += l;
    }
    if (in) {
        fclose(in);
    }
    FILE *f = fopen(path, "w");
    if (NULL == f) {
        free(out);
        return -1;
    }
    fputs(out, f);
    if (len > 0 && out[len - 1] != '\n') {
        fputc('\n', f);
    }
    fprintf(f, "# %s: measured by sfio-calibrate-k\n%s = %lld\n", name, name, value);
    free(out);
    return fclose(f);
}

int main(int argc, char **argv)
{
    const char *dir = ".", *conf = NULL;
    unsigned long long lo = 4096, hi = 64ull << 20, total = 64ull << 20;
    double threshold = 0.9;
    int sync = 0, direct = 0, write_conf = 0, writers = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
            dir = argv[++i];
        } else if (!strcmp(argv[i], "--min") && i + 1 < argc) {
            lo = parse_size(argv[++i]);
        } else if (!strcmp(argv[i], "--max") && i + 1 < argc) {
            hi = parse_size(argv[++i]);
        } else if (!strcmp(argv[i], "--total") && i + 1 < argc) {
            total = parse_size(argv[++i]);
        } else if (!strcmp(argv[i], "--threshold") && i + 1 < argc) {
            threshold = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--sync")) {
            sync = 1;
        } else if (!strcmp(argv[i], "--writers") && i + 1 < argc) {
            writers = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--direct")) {
            direct = 1;
        } else if (!strcmp(argv[i], "--write")) {
            write_conf = 1;
            if (i + 1 < argc && argv[i + 1][0] != '-') {
                conf = argv[++i];
            }
        } else {
            fprintf(stderr, "usage: %s [--dir DIR] [--min B] [--max B] [--total B] "
                    "[--threshold F] [--sync] [--direct] [--writers N] [--write [FILE]]\n", argv[0]);
            return 2;
        }
    }
    if (lo < 512 || hi < lo || threshold <= 0 || threshold > 1) {
        fprintf(stderr, "sfio-calibrate-k: bad sizes or threshold\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/.sfio-calibrate-k.%d", dir, (int) getpid());
    void *buf = NULL;
    if (posix_memalign(&buf, 4096, (size_t) hi)) {
        fprintf(stderr, "sfio-calibrate-k: out of memory\n");
        return 1;
    }
    memset(buf, 0xa5, (size_t) hi);
    int nsizes = 0;
    unsigned long long sizes[64];
    double bw[64], best = 0;
    printf("# size_bytes MB/s\n");
    for (unsigned long long s = lo; s <= hi && nsizes < 64; s *= 2) {
        unsigned long long n = total / s < 8 ? 8 : total / s;
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | (direct ? O_DIRECT : 0), 0600);
        if (fd < 0) {
            fprintf(stderr, "sfio-calibrate-k: %s: %s\n", path, strerror(errno));
            return 1;
        }
        double t0 = now();
        for (unsigned long long i = 0; i < n; ++i) {
            if (pwrite(fd, buf, (size_t) s, (off_t) (i * s)) != (ssize_t) s) {
                fprintf(stderr, "sfio-calibrate-k: write: %s\n", strerror(errno));
                close(fd);
                unlink(path);
                return 1;
            }
        }
        if (sync) {
            fsync(fd);
        }
        double dt = now() - t0;
        close(fd);
        unlink(path);
        sizes[nsizes] = s;
        bw[nsizes] = (double) (n * s) / dt / 1e6;
        best = bw[nsizes] > best ? bw[nsizes] : best;
        printf("%llu %.1f\n", s, bw[nsizes]);
        fflush(stdout);
        nsizes++;
    }
    unsigned long long k = sizes[nsizes - 1];
    for (int i = 0; i < nsizes; ++i) {
        if (bw[i] >= threshold * best) {
            k = sizes[i];
            break;
        }
    }
    printf("k = %llu bytes (first size within %.0f%% of the best, %.1f MB/s)\n", k,
           threshold * 100, best);
    int maxagg = -1;
    if (writers > 1) {
        unsigned long long s = k;
        double wbw[32], wbest = 0;
        int wn[32], nw = 0;
        printf("# writers aggregate_MB/s (requests of %llu bytes)\n", s);
        for (int w = 1; nw < 32; w = w * 2 > writers && w < writers ? writers : w * 2) {
            double b = concurrent(dir, w, s, total, buf, sync);
            if (b < 0) {
                fprintf(stderr, "sfio-calibrate-k: concurrent writers failed\n");
                return 1;
            }
            wn[nw] = w;
            wbw[nw++] = b;
            wbest = b > wbest ? b : wbest;
            printf("%d %.1f\n", w, b);
            fflush(stdout);
            if (w >= writers) {
                break;
            }
        }
        maxagg = 0;
        for (int i = 0; i < nw; ++i) {
            if (wbw[i] >= threshold * wbest) {
                maxagg = wn[i] < writers ? wn[i] : 0;
                break;
            }
        }
        printf("max_aggregators = %d (%s)\n", maxagg,
               maxagg ? "bandwidth stops growing: fewer aggregators per node"
                      : "bandwidth grows with every writer: no limit");
    }
    free(buf);
    if (write_conf) {
        char def[4096];
        if (NULL == conf) {
            const char *home = getenv("HOME");
            snprintf(def, sizeof(def), "%s/.openmpi", home ? home : ".");
            mkdir(def, 0700);
            snprintf(def, sizeof(def), "%s/.openmpi/mca-params.conf", home ? home : ".");
            conf = def;
        }
        if (0 != record(conf, "fcoll_adaptive_k", (long long) k) ||
            (maxagg >= 0 && 0 != record(conf, "fcoll_adaptive_max_aggregators", maxagg))) {
            fprintf(stderr, "sfio-calibrate-k: cannot write %s: %s\n", conf, strerror(errno));
            return 1;
        }
        printf("recorded fcoll_adaptive_k = %llu%s in %s\n", k,
               maxagg >= 0 ? " and fcoll_adaptive_max_aggregators" : "", conf);
    }
    return 0;
}
