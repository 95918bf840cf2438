/*
 * sfio-calibrate-k: seed 003 step 1.  Measures k, the smallest write size
 * that (nearly) saturates one process's write bandwidth on a file system,
 * by writing a file sequentially with increasing request sizes, and
 * optionally records it where Open MPI reads MCA parameters
 * ($HOME/.openmpi/mca-params.conf: fcoll_adaptive_k = N).
 *
 *   sfio-calibrate-k [--dir DIR] [--min B] [--max B] [--total B]
 *                    [--threshold 0.9] [--sync] [--direct] [--write [FILE]]
 *
 * Each size writes --total bytes (default 64 MiB, at least 8 requests)
 * with pwrite into a fresh file; --sync adds fsync (write-back caches),
 * --direct uses O_DIRECT (skips the page cache where supported).  k is
 * the first size whose bandwidth reaches --threshold of the best.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
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

/* Replaces (or appends) "fcoll_adaptive_k = k" in path. */
static int record(const char *path, unsigned long long k)
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
        if (0 == strncmp(p, "fcoll_adaptive_k", 16) && (p[16] == ' ' || p[16] == '=')) {
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
    fprintf(f, "# measured by sfio-calibrate-k\nfcoll_adaptive_k = %llu\n", k);
    free(out);
    return fclose(f);
}

int main(int argc, char **argv)
{
    const char *dir = ".", *conf = NULL;
    unsigned long long lo = 4096, hi = 64ull << 20, total = 64ull << 20;
    double threshold = 0.9;
    int sync = 0, direct = 0, write_conf = 0;
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
        } else if (!strcmp(argv[i], "--direct")) {
            direct = 1;
        } else if (!strcmp(argv[i], "--write")) {
            write_conf = 1;
            if (i + 1 < argc && argv[i + 1][0] != '-') {
                conf = argv[++i];
            }
        } else {
            fprintf(stderr, "usage: %s [--dir DIR] [--min B] [--max B] [--total B] "
                    "[--threshold F] [--sync] [--direct] [--write [FILE]]\n", argv[0]);
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
        if (0 != record(conf, k)) {
            fprintf(stderr, "sfio-calibrate-k: cannot write %s: %s\n", conf, strerror(errno));
            return 1;
        }
        printf("recorded fcoll_adaptive_k = %llu in %s\n", k, conf);
    }
    return 0;
}
