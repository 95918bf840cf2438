/*
 * t_store: the MPI program of the versioned-store tests (issue 20), driven
 * by run_store_tests.sh.  One program, several modes; every mode prints
 * "t_store: ..." lines the driver greps, and the modes that judge
 * something themselves end with "t_store: verdict ok" or
 * "t_store: verdict FAIL: why" on rank 0 (exit 0 / 1).
 *
 * Data: the byte at file offset pos written with tag t is st_pat(t, pos)
 * (store_common.h); store_util gen makes the reference images.
 *
 *   --mode open (default)   open FILE (--amode rdonly|rdwr|create|wronly),
 *       print the open's error class and time; --ref REF: every rank reads
 *       [0, size(REF)) at once (no barrier: recovery must be done before any
 *       rank can read) and compares it and MPI_File_get_size with REF;
 *       --write-tag T [--atomic 0|1] [--len L] [--pieces K]: rank r writes
 *       [r*L, r*L+L) with tag T in K writes (default atomic), then
 *       --crash: barrier, every rank kills itself with SIGKILL (the store
 *       is left with versions not yet folded), or --hold: barrier, rank 0
 *       creates --ready FILE, every rank waits to be killed (pid in
 *       --pidfile PREFIX.<rank>); otherwise MPI_File_sync and close.
 *       Exit 3: open failed; 4: read mismatch; 5: write/sync/close error.
 *   --mode delete           MPI_File_delete(FILE) on rank 0.
 *   --mode churn            finding 5: every rank rewrites random --piece
 *       byte pieces of a --size file (atomic, independent, no sync) for
 *       --seconds or --writes; samples its VmRSS after --rss-at writes and
 *       at the end; then every rank writes its share with tag 7 and closes;
 *       rank 0 checks the flat file; --rss-max-kb G: growth bound.
 *   --mode enospc           finding 6: atomic writes of --chunk bytes at
 *       distinct offsets (independent + MPI_File_sync after each, or
 *       --coll: write_at_all) until one returns an error; every call that
 *       returned success (and its sync) must be in the file after close;
 *       the error must be MPI_ERR_NO_SPACE (collective: on every rank);
 *       --sync-every 0: no sync at all, so every write that returned
 *       success must be in the file after close (close cannot report).
 *   --mode forced           finding 7: atomic write + sync with no store
 *       possible must return an error (never success with an empty file).
 *   --mode emfile           finding 8: open FILE.<i> (atomic write each)
 *       until an open (or the atomic write) runs out of descriptors; every
 *       earlier handle must still write, read and close, its data in its
 *       file after close.
 *   --mode fdcount          finding 8: descriptors per handle per rank of
 *       --handles non-atomic handles (must be <= 2), then after atomic use.
 *   --mode layout --check lazy|name|cleanup   finding 10 and the contract's
 *       store location, names and modes: no store while the file is only
 *       written non-atomically; after an atomic write exactly one store
 *       ".sfio-store.<inode hex>.<32 hex>" (beside the real path, or in
 *       --store-dir/sfio-store-<euid>/), 0700, owned by the user, entries
 *       regular 0600 files; none after close.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store_common.h"

static int rank, np;
static const char *file, *mode = "open", *amode_s = NULL, *ref, *ready, *pidfile, *check = "name";
static const char *store_dir;
static unsigned tag = 1, write_tag;
static int have_write, atomic = 1, pieces = 1, do_crash, do_hold, coll, sync_every = 1;
static long long len = 65536, size = 212992, piece = 4096, chunk = 262144, writes_max, rss_at = 2000;
static long long max_chunks = 64, max_handles = 4000, handles = 16, rss_max_kb = 4096;
static double seconds = 5;

static const char *cls_name(int c)
{
    static char b[32];
    switch (c) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_IO: return "MPI_ERR_IO";
    case MPI_ERR_NO_SPACE: return "MPI_ERR_NO_SPACE";
    case MPI_ERR_QUOTA: return "MPI_ERR_QUOTA";
    case MPI_ERR_ACCESS: return "MPI_ERR_ACCESS";
    case MPI_ERR_NO_SUCH_FILE: return "MPI_ERR_NO_SUCH_FILE";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER";
    case MPI_ERR_FILE: return "MPI_ERR_FILE";
    case MPI_ERR_READ_ONLY: return "MPI_ERR_READ_ONLY";
    case MPI_ERR_AMODE: return "MPI_ERR_AMODE";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "MPI_ERR_UNSUPPORTED_OPERATION";
    default: snprintf(b, sizeof(b), "class%d", c); return b;
    }
}

static int cls(int rc)
{
    int c = rc;
    if (MPI_SUCCESS != rc) MPI_Error_class(rc, &c);
    return c;
}

static const char *errstr(int rc)
{
    static char s[MPI_MAX_ERROR_STRING + 1];
    int n = 0;
    MPI_Error_string(rc, s, &n);
    s[n] = '\0';
    return s;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static int any(int v)
{
    int r = 0;
    MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    return r;
}

static long long sum_ll(long long v)
{
    long long r = 0;
    MPI_Allreduce(&v, &r, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return r;
}

static long long max_ll(long long v)
{
    long long r = 0;
    MPI_Allreduce(&v, &r, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return r;
}

static int amode_of(const char *s, int dflt)
{
    if (!s) return dflt;
    if (!strcmp(s, "rdonly")) return MPI_MODE_RDONLY;
    if (!strcmp(s, "rdwr")) return MPI_MODE_RDWR;
    if (!strcmp(s, "wronly")) return MPI_MODE_WRONLY;
    if (!strcmp(s, "create")) return MPI_MODE_RDWR | MPI_MODE_CREATE;
    fprintf(stderr, "t_store: bad --amode %s\n", s);
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 0;
}

/* Rank 0 prints the verdict; every rank returns the exit status. */
static int verdict(int bad, const char *why)
{
    int b = any(bad);
    if (bad && 0 != rank && why && *why) {
        printf("t_store: rank %d: %s\n", rank, why);
        fflush(stdout);
    }
    if (0 == rank) {
        if (b) printf("t_store: verdict FAIL: %s\n", bad && why && *why ? why : "(see the other ranks' lines)");
        else printf("t_store: verdict ok\n");
        fflush(stdout);
    }
    return b ? 1 : 0;
}

/* Writes [off, off+n) with tag t; returns the error class, *count the count. */
static int write_tag_at(MPI_File fh, unsigned t, long long off, long long n, int collective, int *count)
{
    unsigned char *b = malloc((size_t) n + 1);
    st_fill(b, t, (uint64_t) off, (size_t) n);
    MPI_Status st;
    memset(&st, 0, sizeof(st));
    int rc = collective ? MPI_File_write_at_all(fh, off, b, (int) n, MPI_BYTE, &st)
                        : MPI_File_write_at(fh, off, b, (int) n, MPI_BYTE, &st);
    *count = 0;
    if (MPI_SUCCESS == rc) MPI_Get_count(&st, MPI_BYTE, count);
    free(b);
    return cls(rc);
}

/* POSIX check of [off, off+n) against tag t; returns the number of bad bytes. */
static long long posix_check(const char *path, unsigned t, long long off, long long n)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return n;
    unsigned char *b = calloc(1, (size_t) n + 1);
    ssize_t got = pread(fd, b, (size_t) n, off);
    close(fd);
    long long bad = 0;
    for (long long i = 0; i < n; ++i)
        if (i >= got || b[i] != st_pat(t, (uint64_t) (off + i))) ++bad;
    free(b);
    return bad;
}

static void write_pidfile(void)
{
    if (!pidfile) return;
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s.%d", pidfile, rank);
    FILE *f = fopen(p, "w");
    if (f) { fprintf(f, "%ld\n", (long) getpid()); fclose(f); }
}

static void touch(const char *p)
{
    if (!p) return;
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) close(fd);
}

/* ------------------------------------------------------------------ */
static int mode_open(void)
{
    int amode = amode_of(amode_s, have_write ? MPI_MODE_RDWR | MPI_MODE_CREATE : MPI_MODE_RDWR);
    MPI_File fh;
    write_pidfile();
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    int rc = MPI_File_open(MPI_COMM_WORLD, file, amode, MPI_INFO_NULL, &fh);
    double t = now() - t0;
    int c = cls(rc);
    double tmax = 0;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int failed = any(MPI_SUCCESS != c);
    if (MPI_SUCCESS != c) printf("t_store: rank %d open class=%s error='%s'\n", rank, cls_name(c), errstr(rc));
    if (0 == rank) printf("t_store: open class=%s time=%.3f\n", cls_name(c), tmax);
    fflush(stdout);
    if (failed) {
        /* a handle that opened on some ranks only cannot be closed */
        return 3;
    }
    int status = 0;
    if (ref) {
        int fd = open(ref, O_RDONLY);
        struct stat st;
        if (fd < 0 || 0 != fstat(fd, &st)) { perror(ref); MPI_Abort(MPI_COMM_WORLD, 2); }
        unsigned char *want = malloc((size_t) st.st_size + 1), *got = calloc(1, (size_t) st.st_size + 1);
        if (st.st_size != pread(fd, want, (size_t) st.st_size, 0)) { perror(ref); MPI_Abort(MPI_COMM_WORLD, 2); }
        close(fd);
        MPI_Offset fsize = -1;
        MPI_File_get_size(fh, &fsize);
        MPI_Status mst;
        memset(&mst, 0, sizeof(mst));
        int rrc = MPI_File_read_at(fh, 0, got, (int) st.st_size, MPI_BYTE, &mst);
        int count = 0;
        if (MPI_SUCCESS == rrc) MPI_Get_count(&mst, MPI_BYTE, &count);
        long long bad = 0, first = -1;
        for (long long i = 0; i < (long long) st.st_size; ++i)
            if (i >= count || got[i] != want[i]) { if (first < 0) first = i; ++bad; }
        printf("t_store: rank %d read class=%s count=%d size=%lld want_size=%lld mismatches=%lld first=%lld\n",
               rank, cls_name(cls(rrc)), count, (long long) fsize, (long long) st.st_size, bad, first);
        if (bad || fsize != st.st_size || MPI_SUCCESS != rrc) status = 4;
        free(want);
        free(got);
    }
    if (have_write) {
        int crc = MPI_SUCCESS;
        if (atomic) crc = cls(MPI_File_set_atomicity(fh, 1));
        long long step = (len + pieces - 1) / pieces;
        for (long long o = 0; o < len && MPI_SUCCESS == crc; o += step) {
            long long n = o + step > len ? len - o : step;
            int count = 0;
            crc = write_tag_at(fh, write_tag, (long long) rank * len + o, n, 0, &count);
            if (MPI_SUCCESS == crc && count != n) {
                printf("t_store: rank %d short write %d of %lld\n", rank, count, n);
                status = 5;
            }
        }
        if (MPI_SUCCESS != crc) {
            printf("t_store: rank %d write class=%s\n", rank, cls_name(crc));
            status = 5;
        }
        fflush(stdout);
        if (do_crash || do_hold) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (0 == rank) { printf("t_store: written, %s\n", do_crash ? "crashing" : "holding"); fflush(stdout); }
            if (do_crash) raise(SIGKILL);
            if (0 == rank) touch(ready);
            for (;;) pause();
        }
        int src = cls(MPI_File_sync(fh));
        if (MPI_SUCCESS != src) { printf("t_store: rank %d sync class=%s\n", rank, cls_name(src)); status = 5; }
    }
    int clc = cls(MPI_File_close(&fh));
    if (MPI_SUCCESS != clc) { printf("t_store: rank %d close class=%s\n", rank, cls_name(clc)); status = 5; }
    long long s = max_ll(status);
    return (int) s;
}

static int mode_delete(void)
{
    if (0 == rank) {
        int rc = MPI_File_delete(file, MPI_INFO_NULL);
        printf("t_store: delete class=%s\n", cls_name(cls(rc)));
        return MPI_SUCCESS == rc ? 0 : 3;
    }
    return 0;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof(line), f))
        if (1 == sscanf(line, "VmRSS: %ld", &kb)) break;
    if (f) fclose(f);
    return kb;
}

static int mode_churn(void)
{
    MPI_File fh;
    char why[256] = "";
    int bad = 0;
    if (MPI_SUCCESS != MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh))
        return verdict(1, "open failed");
    write_pidfile();
    MPI_File_set_atomicity(fh, 1);
    unsigned char *b = malloc((size_t) piece);
    uint64_t x = 0x12345678u + (uint64_t) rank * 7919u;
    long long n = 0, errors = 0;
    long rss1 = -1;
    double t0 = now();
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) touch(ready);
    for (;;) {
        if (writes_max > 0 ? n >= writes_max : now() - t0 >= seconds) break;
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        long long off = (long long) ((x >> 33) % (uint64_t) (size - piece + 1)) & ~7LL;
        st_fill(b, 100 + (unsigned) rank, (uint64_t) off, (size_t) piece);
        MPI_Status st;
        int count = 0;
        int rc = MPI_File_write_at(fh, off, b, (int) piece, MPI_BYTE, &st);
        if (MPI_SUCCESS == rc) MPI_Get_count(&st, MPI_BYTE, &count);
        if (MPI_SUCCESS != rc || count != piece) {
            if (!errors) printf("t_store: rank %d write %lld class=%s count=%d\n", rank, n, cls_name(cls(rc)), count);
            ++errors;
            if (errors > 10) break;
        }
        ++n;
        if (n == rss_at) rss1 = rss_kb();
    }
    long rss2 = rss_kb();
    printf("t_store: rank %d writes=%lld errors=%lld rss_kb_at_%lld=%ld rss_kb_end=%ld growth_kb=%ld\n", rank, n, errors,
           rss_at, rss1, rss2, rss1 >= 0 ? rss2 - rss1 : -1);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    long long share = size / np, lo = (long long) rank * share, hi = rank == np - 1 ? size : lo + share;
    int count = 0;
    int c = write_tag_at(fh, 7, lo, hi - lo, 0, &count);
    if (MPI_SUCCESS != c || count != hi - lo) { bad = 1; snprintf(why, sizeof(why), "final write class=%s", cls_name(c)); }
    if (MPI_SUCCESS != MPI_File_close(&fh)) { bad = 1; snprintf(why, sizeof(why), "close failed"); }
    long long growth = max_ll(rss1 >= 0 ? rss2 - rss1 : 0), total = sum_ll(n), errs = sum_ll(errors);
    if (errs) { bad = 1; snprintf(why, sizeof(why), "%lld atomic writes failed", errs); }
    if (0 == rank) {
        long long lost = posix_check(file, 7, 0, size);
        printf("t_store: churn total_writes=%lld max_rss_growth_kb=%lld final_bad_bytes=%lld\n", total, growth, lost);
        if (lost) { bad = 1; snprintf(why, sizeof(why), "flat file wrong after close: %lld bad bytes", lost); }
        if (rss_max_kb > 0 && growth > rss_max_kb) {
            bad = 1;
            snprintf(why, sizeof(why), "VmRSS grew %lld KiB between write %lld and write %lld (bound %lld KiB)", growth, rss_at,
                     total / np, rss_max_kb);
        }
    }
    free(b);
    return verdict(bad, why);
}

static int mode_enospc(void)
{
    MPI_File fh;
    char why[512] = "";
    int bad = 0;
    int rc = MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    if (any(MPI_SUCCESS != rc)) return verdict(1, "open failed");
    MPI_File_set_atomicity(fh, 1);
    long long k, ok_chunks[4096];
    int nok = 0, first_err = MPI_SUCCESS, all_err = 1;
    int errs_seen = 0;
    for (k = 0; k < max_chunks && k < 4096; ++k) {
        long long off = (k * np + rank) * chunk;
        int count = 0;
        int wc = write_tag_at(fh, 20 + (unsigned) (k % 200), off, chunk, coll, &count);
        int sc = MPI_SUCCESS;
        if (!coll && sync_every) sc = cls(MPI_File_sync(fh));
        /* io/ompio drops an independent call's error (short count): the
         * class then comes from the next sync */
        int e = MPI_SUCCESS != wc ? wc : MPI_SUCCESS != sc ? sc : (count != chunk ? -1 : MPI_SUCCESS);
        if (MPI_ERR_OTHER == wc && MPI_SUCCESS != sc) {
            e = sc;   /* Open MPI 5.0 returns the fbtl's failure as MPI_ERR_OTHER: the sync names it */
        }
        if (MPI_SUCCESS != wc || count != chunk || MPI_SUCCESS != sc)
            printf("t_store: rank %d chunk %lld write=%s count=%d sync=%s\n", rank, k, cls_name(wc), count, cls_name(sc));
        if (MPI_SUCCESS == wc && count != chunk && MPI_SUCCESS == sc && (coll || sync_every)) {
            bad = 1;
            snprintf(why, sizeof(why), "rank %d: write returned success with count %d of %lld and the sync success",
                     rank, count, chunk);
        }
        if (MPI_SUCCESS == e) ok_chunks[nok++] = k;
        else if (MPI_SUCCESS == first_err) first_err = e;
        int got = MPI_SUCCESS != e;
        int anyerr = any(got);
        if (anyerr) {
            errs_seen = 1;
            if (coll) {
                /* every rank must get an error class from the failing collective */
                MPI_Allreduce(&got, &all_err, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
                if (!all_err) { bad = 1; snprintf(why, sizeof(why), "collective write failed on some ranks only (rank %d: %s)", rank, got ? "error" : "success"); }
            }
            break;
        }
    }
    fflush(stdout);
    if (!coll && !sync_every && any(first_err < 0 || MPI_ERR_OTHER == first_err)) {
        /* collective: the class of a short write (4.1) or of 5.0's MPI_ERR_OTHER */
        int sc2 = cls(MPI_File_sync(fh));
        if ((first_err < 0 || MPI_ERR_OTHER == first_err) && MPI_SUCCESS != sc2) first_err = sc2;
    }
    if (MPI_SUCCESS != first_err && MPI_ERR_NO_SPACE != first_err) {
        bad = 1;
        snprintf(why, sizeof(why), "rank %d: first error class %s, want MPI_ERR_NO_SPACE", rank,
                 first_err < 0 ? "short count" : cls_name(first_err));
    }
    int crc = cls(MPI_File_close(&fh));
    if (MPI_SUCCESS != crc) printf("t_store: rank %d close class=%s\n", rank, cls_name(crc));
    long long lost = 0;
    for (int i = 0; i < nok; ++i) {
        long long kk = ok_chunks[i];
        lost += posix_check(file, 20 + (unsigned) (kk % 200), (kk * np + rank) * chunk, chunk) ? 1 : 0;
    }
    if (lost) { bad = 1; snprintf(why, sizeof(why), "rank %d: %lld chunk(s) that returned success (write, and sync when called) are not in the file after close", rank, lost); }
    long long tl = sum_ll(lost), tok = sum_ll(nok);
    if (0 == rank) {
        printf("t_store: enospc %s%s chunks_ok=%lld lost=%lld error_seen=%d first_err=%s\n", coll ? "collective" : "independent", coll || sync_every ? "" : " no-sync", tok,
               tl, errs_seen, first_err < 0 ? "short" : cls_name(first_err));
        if (!errs_seen) { bad = 1; snprintf(why, sizeof(why), "no call returned an error although %lld chunks of %lld bytes were written", tok, chunk); }
    }
    return verdict(bad, why);
}

static int expect_ok;   /* --expect-ok: mode forced must succeed (a store is possible) */

static int mode_forced(void)
{
    MPI_File fh;
    char why[256] = "";
    int bad = 0;
    int rc = MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    if (any(MPI_SUCCESS != rc)) return verdict(1, "open failed");
    int ac = cls(MPI_File_set_atomicity(fh, 1));
    int count = 0;
    int wc = write_tag_at(fh, 9, (long long) rank * len, len, 0, &count);
    int sc = cls(MPI_File_sync(fh));
    int crc = cls(MPI_File_close(&fh));
    printf("t_store: rank %d set_atomicity=%s write=%s count=%d sync=%s close=%s\n", rank, cls_name(ac), cls_name(wc), count,
           cls_name(sc), cls_name(crc));
    fflush(stdout);
    /* an error class from set_atomicity, the write or the sync; a short
     * count alone is no error (the README: the next sync reports it) */
    int err = MPI_SUCCESS != ac || MPI_SUCCESS != wc || MPI_SUCCESS != sc;
    long long lost = posix_check(file, 9, (long long) rank * len, len);
    if (expect_ok) {
        if (err || count != len || lost) {
            bad = 1;
            snprintf(why, sizeof(why), "rank %d: forced versioned write failed (count %d of %lld, %lld bytes missing)", rank, count, len, lost);
        }
        return verdict(bad, why);
    }
    if (!err && lost) { bad = 1; snprintf(why, sizeof(why), "rank %d: write (count %d of %lld) and sync returned MPI_SUCCESS, %lld bytes not in the file", rank, count, len, lost); }
    else if (!err) { bad = 1; snprintf(why, sizeof(why), "rank %d: no error from a forced versioned write with no store (data is in the file)", rank); }
    return verdict(bad, why);
}

static int fd_count(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) if (e->d_name[0] != '.') ++n;
    if (d) closedir(d);
    return n - 1;
}

static int mode_emfile(void)
{
    MPI_File *fh = calloc((size_t) max_handles, sizeof(MPI_File));
    int *okw = calloc((size_t) max_handles, sizeof(int));
    char why[512] = "", p[PATH_MAX];
    int bad = 0;
    long long i, n = 0;
    int stop_class = MPI_SUCCESS;
    const char *stop_at = "nothing";
    for (i = 0; i < max_handles; ++i) {
        snprintf(p, sizeof(p), "%s.%lld", file, i);
        int rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh[i]);
        int f = MPI_SUCCESS != rc, af = any(f), all = 0;
        MPI_Allreduce(&f, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (af) {
            stop_class = cls(rc);
            stop_at = "open";
            printf("t_store: rank %d open #%lld class=%s error='%s'\n", rank, i, cls_name(cls(rc)), f ? errstr(rc) : "none");
            fflush(stdout);
            if (!all) {
                if (0 == rank) printf("t_store: verdict FAIL: open #%lld failed on some ranks only: the handle can be neither used nor closed\n", i);
                fflush(stdout);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            break;
        }
        n = i + 1;
        int c = cls(MPI_File_set_atomicity(fh[i], 1)), count = 0;
        if (MPI_SUCCESS == c) c = write_tag_at(fh[i], (unsigned) (i % 1000) + 1, (long long) rank * len, len, 0, &count);
        int wf = MPI_SUCCESS != c || count != len;
        okw[i] = !wf;
        if (any(wf)) {
            /* io/ompio drops an independent call's error (short count):
             * the next sync (collective) must name it */
            int sc = cls(MPI_File_sync(fh[i]));
            if (MPI_SUCCESS == c && count != len) {
                if (MPI_SUCCESS == sc) {
                    bad = 1;
                    snprintf(why, sizeof(why), "rank %d handle #%lld: atomic write returned success with count %d of %lld, and the sync success", rank, i, count, len);
                } else {
                    c = sc;
                }
            }
            stop_class = c;
            stop_at = "atomic write";
            printf("t_store: rank %d handle #%lld atomic write class=%s count=%d\n", rank, i, cls_name(c), count);
            break;
        }
    }
    if (0 == rank) printf("t_store: emfile %lld handles opened, stopped at %s #%lld (%s)\n", n, stop_at, i, cls_name(stop_class));
    fflush(stdout);
    if (i == max_handles) { bad = 1; snprintf(why, sizeof(why), "never ran out of descriptors in %lld handles", max_handles); }
    /* the handle whose atomic write ran out is closed first, as a user
     * would, giving its descriptors back; every earlier handle then keeps
     * working */
    if (n > 0 && !okw[n - 1]) {
        MPI_File_close(&fh[n - 1]);
    }
    long long failures = 0;
    int *rew = calloc((size_t) (n ? n : 1), sizeof(int));
    for (long long j = 0; j < n; ++j) {
        if (!okw[j] && j == n - 1) {
            continue;
        }
        int count = 0;
        int c = write_tag_at(fh[j], 5000 + (unsigned) (j % 1000), (long long) rank * len, len, 0, &count);
        if (MPI_SUCCESS != c || count != len) {
            if (!failures++) printf("t_store: rank %d handle #%lld rewrite class=%s count=%d\n", rank, j, cls_name(c), count);
        } else {
            rew[j] = 1;
        }
        unsigned char *b = calloc(1, (size_t) len);
        MPI_Status st;
        int rc = MPI_File_read_at(fh[j], (long long) rank * len, b, (int) len, MPI_BYTE, &st), rcount = 0;
        if (MPI_SUCCESS == rc) MPI_Get_count(&st, MPI_BYTE, &rcount);
        long long mism = 0;
        for (long long k = 0; k < len; ++k) if (b[k] != st_pat(5000 + (unsigned) (j % 1000), (uint64_t) (rank * len + k))) ++mism;
        if (MPI_SUCCESS != rc || rcount != len || mism) {
            if (!failures++) printf("t_store: rank %d handle #%lld read class=%s count=%d mismatches=%lld\n", rank, j, cls_name(cls(rc)), rcount, mism);
        }
        free(b);
        int cc = cls(MPI_File_close(&fh[j]));
        if (MPI_SUCCESS != cc && !failures++) printf("t_store: rank %d handle #%lld close class=%s\n", rank, j, cls_name(cc));
    }
    long long lost = 0;
    for (long long j = 0; j < n; ++j) {
        if (!rew[j]) continue;   /* only data a call reported written */
        snprintf(p, sizeof(p), "%s.%lld", file, j);
        if (posix_check(p, 5000 + (unsigned) (j % 1000), (long long) rank * len, len)) {
            if (!lost++) printf("t_store: rank %d file #%lld lacks data that was written with success\n", rank, j);
        }
    }
    if (failures) { bad = 1; snprintf(why, sizeof(why), "rank %d: %lld failure(s) on handles opened before the descriptors ran out", rank, failures); }
    if (lost) { bad = 1; snprintf(why, sizeof(why), "rank %d: %lld file(s) lost data after close", rank, lost); }
    if (MPI_ERR_IO == stop_class && !bad) {
        bad = 1;
        snprintf(why, sizeof(why), "running out of descriptors was reported as MPI_ERR_IO (finding 10: EMFILE must be its own error)");
    }
    fflush(stdout);
    return verdict(bad, why);
}

static int mode_fdcount(void)
{
    MPI_File *fh = calloc((size_t) handles, sizeof(MPI_File));
    char p[PATH_MAX], why[256] = "";
    int bad = 0;
    int f0 = fd_count();
    for (long long i = 0; i < handles; ++i) {
        snprintf(p, sizeof(p), "%s.%lld", file, i);
        if (MPI_SUCCESS != MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh[i]))
            return verdict(1, "open failed");
        int count;
        write_tag_at(fh[i], 3, (long long) rank * 4096, 4096, 0, &count);
    }
    int f1 = fd_count();
    for (long long i = 0; i < handles; ++i) {
        int count;
        MPI_File_set_atomicity(fh[i], 1);
        write_tag_at(fh[i], 4, (long long) rank * 4096, 4096, 0, &count);
    }
    int f2 = fd_count();
    for (long long i = 0; i < handles; ++i) MPI_File_close(&fh[i]);
    int f3 = fd_count();
    double per = (double) (f1 - f0) / (double) handles, per_atomic = (double) (f2 - f0) / (double) handles;
    printf("t_store: rank %d fds before=%d after_open=%d after_atomic=%d after_close=%d: %.2f per handle, %.2f with atomic mode\n",
           rank, f0, f1, f2, f3, per, per_atomic);
    if (per > 2.0) { bad = 1; snprintf(why, sizeof(why), "rank %d: %.2f descriptors per handle before atomic mode is used (at most 2: the file and 1 for the store)", rank, per); }
    if (f3 > f0 + 1) { bad = 1; snprintf(why, sizeof(why), "rank %d: %d descriptors left open after closing every handle", rank, f3 - f0); }
    fflush(stdout);
    return verdict(bad, why);
}

/* --- layout ------------------------------------------------------- */
static int is_store_name(const char *n)
{
    return 0 == strncmp(n, ".sfio-store.", 12) || (n[0] == '.' && strstr(n, ".sfio.")) || 0 == strncmp(n, "sfio-", 5);
}

/* The directory where the stores of file live (per the contract). */
static void store_home(char *out, size_t n)
{
    if (store_dir && *store_dir) {
        snprintf(out, n, "%s/sfio-store-%u", store_dir, (unsigned) geteuid());
    } else {
        char r[PATH_MAX];
        if (!realpath(file, r)) snprintf(r, sizeof(r), "%s", file);
        char *s = strrchr(r, '/');
        if (s) *s = '\0';
        snprintf(out, n, "%s", s ? r : ".");
    }
}

/* Counts store-like entries where the contract puts them and (old layout)
 * where the current code does; fills name with the last one found. */
static int count_stores(char *name, size_t n)
{
    char dirs[3][PATH_MAX];
    int nd = 0, cnt = 0;
    store_home(dirs[nd++], PATH_MAX);
    if (store_dir && *store_dir) snprintf(dirs[nd++], PATH_MAX, "%s", store_dir);
    else {
        char c[PATH_MAX];
        snprintf(c, sizeof(c), "%s", file);
        char *s = strrchr(c, '/');
        if (s) *s = '\0';
        snprintf(dirs[nd++], PATH_MAX, "%s", s ? c : ".");
    }
    for (int i = 0; i < nd; ++i) {
        DIR *d = opendir(dirs[i]);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (!is_store_name(e->d_name)) continue;
            if (store_dir && *store_dir && 0 == i && 0 != strncmp(e->d_name, ".sfio-store.", 12)) continue;
            if (i > 0 && 0 == strcmp(dirs[i], dirs[0])) continue;
            if (store_dir && *store_dir && i == 1 && 0 == strncmp(e->d_name, "sfio-store-", 11)) continue;
            ++cnt;
            snprintf(name, n, "%s/%s", dirs[i], e->d_name);
        }
        if (d) closedir(d);
    }
    return cnt;
}

static void check_name(const char *path, char *why, size_t wn)
{
    struct stat fs, ss;
    char home[PATH_MAX], want[64];
    store_home(home, sizeof(home));
    if (0 != stat(file, &fs)) { snprintf(why, wn, "stat %s: %s", file, strerror(errno)); return; }
    snprintf(want, sizeof(want), ".sfio-store.%llx.", (unsigned long long) fs.st_ino);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t dl = strlen(path) - strlen(base) - 1;
    if (dl != strlen(home) || 0 != strncmp(path, home, dl)) { snprintf(why, wn, "store %s is not in %s", path, home); return; }
    if (0 != strncmp(base, want, strlen(want)) || strlen(base) != strlen(want) + 32 ||
        strspn(base + strlen(want), "0123456789abcdef") != 32) {
        snprintf(why, wn, "store named %s, want %s<32 lowercase hex>", base, want);
        return;
    }
    if (store_dir && *store_dir) {
        if (0 != lstat(home, &ss) || !S_ISDIR(ss.st_mode) || (ss.st_mode & 07777) != 0700 || ss.st_uid != geteuid()) {
            snprintf(why, wn, "%s is not a directory of mode 0700 owned by %u", home, (unsigned) geteuid());
            return;
        }
    }
    if (0 != lstat(path, &ss) || !S_ISDIR(ss.st_mode) || (ss.st_mode & 07777) != 0700 || ss.st_uid != geteuid()) {
        snprintf(why, wn, "store %s: not a directory of mode 0700 owned by %u (mode %o uid %u)", path, (unsigned) geteuid(),
                 (unsigned) ss.st_mode & 07777, (unsigned) ss.st_uid);
        return;
    }
    DIR *d = opendir(path);
    struct dirent *e;
    int coord = 0;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
        struct stat es;
        if (0 != lstat(p, &es) || !S_ISREG(es.st_mode) || (es.st_mode & 07777) != 0600 || es.st_uid != geteuid()) {
            snprintf(why, wn, "%s: not a regular file of mode 0600 owned by the user (mode %o)", p, (unsigned) es.st_mode & 07777);
            break;
        }
        if (!strcmp(e->d_name, "coord")) coord = 1;
        else if (strncmp(e->d_name, "rec.", 4) && strncmp(e->d_name, "log.", 4))
            printf("t_store: note: unexpected entry %s in the store\n", e->d_name);
    }
    if (d) closedir(d);
    if (!*why && !coord) snprintf(why, wn, "store %s has no coord", path);
}

static int mode_layout(void)
{
    MPI_File fh;
    char why[512] = "", name[PATH_MAX] = "", w1[512] = "", w2[512] = "", w3[512] = "";
    if (MPI_SUCCESS != MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh))
        return verdict(1, "open failed");
    int count;
    write_tag_at(fh, 11, (long long) rank * len, len, 0, &count);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        int n = count_stores(name, sizeof(name));
        if (n) snprintf(w1, sizeof(w1), "%d store(s) (e.g. %s) while the file was only opened and written non-atomically", n, name);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_set_atomicity(fh, 1);
    write_tag_at(fh, 12, (long long) rank * len, len, 0, &count);
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        int n = count_stores(name, sizeof(name));
        if (1 != n) snprintf(w2, sizeof(w2), "%d stores after an atomic write (want 1)", n);
        else check_name(name, w2, sizeof(w2));
        printf("t_store: store %s\n", n ? name : "(none)");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_close(&fh);
    if (0 == rank) {
        int n = count_stores(name, sizeof(name));
        if (n) snprintf(w3, sizeof(w3), "%d store(s) left after a clean close (e.g. %s)", n, name);
        if (posix_check(file, 12, 0, len * np)) snprintf(w3 + strlen(w3), sizeof(w3) - strlen(w3), "%sfile data wrong after close", *w3 ? "; " : "");
        printf("t_store: lazy: %s\nt_store: name: %s\nt_store: cleanup: %s\n", *w1 ? w1 : "ok", *w2 ? w2 : "ok", *w3 ? w3 : "ok");
        const char *w = !strcmp(check, "lazy") ? w1 : !strcmp(check, "cleanup") ? w3 : w2;
        snprintf(why, sizeof(why), "%s", w);
    }
    return verdict(0 == rank && *why, why);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (0 == strcmp(a, name) && v && ++i)
        if (0 == strcmp(a, "--expect-ok")) expect_ok = 1;
        else if (OPT("--file")) file = v;
        else if (OPT("--mode")) mode = v;
        else if (OPT("--amode")) amode_s = v;
        else if (OPT("--ref")) ref = v;
        else if (OPT("--ready")) ready = v;
        else if (OPT("--pidfile")) pidfile = v;
        else if (OPT("--check")) check = v;
        else if (OPT("--store-dir")) store_dir = v;
        else if (OPT("--tag")) tag = (unsigned) atoi(v);
        else if (OPT("--write-tag")) { write_tag = (unsigned) atoi(v); have_write = 1; }
        else if (OPT("--atomic")) atomic = atoi(v);
        else if (OPT("--pieces")) pieces = atoi(v);
        else if (OPT("--len")) len = atoll(v);
        else if (OPT("--size")) size = atoll(v);
        else if (OPT("--piece")) piece = atoll(v);
        else if (OPT("--chunk")) chunk = atoll(v);
        else if (OPT("--max-chunks")) max_chunks = atoll(v);
        else if (OPT("--sync-every")) sync_every = atoi(v);
        else if (OPT("--max-handles")) max_handles = atoll(v);
        else if (OPT("--handles")) handles = atoll(v);
        else if (OPT("--writes")) writes_max = atoll(v);
        else if (OPT("--rss-at")) rss_at = atoll(v);
        else if (OPT("--rss-max-kb")) rss_max_kb = atoll(v);
        else if (OPT("--seconds")) seconds = atof(v);
        else if (0 == strcmp(a, "--crash")) do_crash = 1;
        else if (0 == strcmp(a, "--hold")) do_hold = 1;
        else if (0 == strcmp(a, "--coll")) coll = 1;
        else { if (0 == rank) fprintf(stderr, "t_store: bad argument %s\n", a); MPI_Abort(MPI_COMM_WORLD, 2); }
#undef OPT
    }
    if (!file) { if (0 == rank) fprintf(stderr, "t_store: --file is required\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
    (void) tag;
    int rc;
    if (!strcmp(mode, "open")) rc = mode_open();
    else if (!strcmp(mode, "delete")) rc = mode_delete();
    else if (!strcmp(mode, "churn")) rc = mode_churn();
    else if (!strcmp(mode, "enospc")) rc = mode_enospc();
    else if (!strcmp(mode, "forced")) rc = mode_forced();
    else if (!strcmp(mode, "emfile")) rc = mode_emfile();
    else if (!strcmp(mode, "fdcount")) rc = mode_fdcount();
    else if (!strcmp(mode, "layout")) rc = mode_layout();
    else { if (0 == rank) fprintf(stderr, "t_store: bad --mode %s\n", mode); MPI_Abort(MPI_COMM_WORLD, 2); rc = 2; }
    MPI_Finalize();
    return rc;
}
