/*
 * t_locksvc: the list-lock service (sfio_locksvc) driven directly, on the
 * ranks of MPI_COMM_WORLD (meant for emulated nodes: the ranks span nodes).
 *
 *   locksvc.safety   --rounds N lists per rank: random sorted lists of 1..8
 *                    cell ranges over a shared file of --cells cells, half
 *                    exclusive.  An exclusive holder writes its stamp into
 *                    every cell of its list, waits a little and checks that
 *                    the cells still hold it; a shared holder reads its cells
 *                    twice around a wait and checks that they did not
 *                    change.  A conflicting list held meanwhile would change
 *                    them.  Also: no grant waits longer than --limit s.
 *   locksvc.long     lists of the service's longest length (about 1600
 *                    one-cell ranges, the largest messages), exclusive,
 *                    checked as above; ranks of one parity conflict.
 *   locksvc.parts    the same with lists of 20000 ranges (the service
 *                    opened with list_max 20000): each list travels in
 *                    parts, the host grants it whole.
 *   locksvc.stress   the same without waits and without checks, --stress N
 *                    lists per rank: completes (no deadlock) within the
 *                    run's timeout.
 *   locksvc.frozen   a rank (not the host) holds the whole file exclusive
 *                    and stops itself (SIGSTOP, like a dead process but
 *                    resumable); the others then ask for the file and must
 *                    get it within probe + dead timeout + slack; rank 0
 *                    resumes the frozen rank, whose release reports the
 *                    loss (-ENOLCK) and whose next request is refused.
 *   locksvc.timeout  a live rank holds the file for 3 s; another asks with a
 *                    1 s wait timeout and fails with -ETIMEDOUT after about
 *                    1 s; after the release the file is granted again.
 *
 * Usage: t_locksvc [--rounds N] [--stress N] [--cells C] [--limit S]
 *                  [--skip-frozen] [--dir DIR]
 * Prints "ok <name>" or "FAIL <name>: why" per check (rank 0); exit 1 on a
 * failure.
 */
#include <mpi.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sfio_locks.h"
#include "sfio_locksvc.h"

static int rank, size;
static int failures;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* Every rank's count of failures goes to rank 0, which reports. */
static void report(const char *name, int bad, const char *why)
{
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        if (0 == all) {
            printf("ok %s\n", name);
        } else {
            printf("FAIL %s: %d failures (%s)\n", name, all, why);
        }
        fflush(stdout);
    }
    failures += 0 != all;
}

static mca_common_sfio_locksvc_t *open_svc_max(int64_t timeout_ms, int64_t probe_ms,
                                               int64_t dead_ms, size_t list_max)
{
    mca_common_sfio_locksvc_config_t cfg = {
        .provider = NULL, .timeout_ms = timeout_ms, .probe_ms = probe_ms, .dead_ms = dead_ms,
        .host = -1, .list_max = list_max,
        .max_overtakes = mca_common_sfio_lock_service_max_overtakes,   /* the default */
    };
    mca_common_sfio_locksvc_t *svc = NULL;
    int rc = mca_common_sfio_locksvc_open((struct ompi_communicator_t *) MPI_COMM_WORLD, &cfg, 0,
                                          &svc);
    if (0 != rc) {
        if (0 == rank) {
            printf("FAIL locksvc.open: %s (%s)\n", strerror(-rc), mca_common_sfio_locksvc_why());
        }
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return svc;
}

static mca_common_sfio_locksvc_t *open_svc(int64_t timeout_ms, int64_t probe_ms, int64_t dead_ms)
{
    return open_svc_max(timeout_ms, probe_ms, dead_ms, 0);
}

/* A random sorted list of 1..8 disjoint cell ranges in [0, cells). */
static void random_list(unsigned *seed, int cells, mca_common_sfio_rangelist_t *l,
                        mca_common_sfio_range_t *r)
{
    int k = 1 + rand_r(seed) % 8, at = 0;
    l->count = 0;
    for (int i = 0; i < k && at < cells; ++i) {
        int gap = rand_r(seed) % (cells / 8 + 1);
        int len = 1 + rand_r(seed) % (cells / 8 + 1);
        if (at + gap >= cells) {
            break;
        }
        at += gap;
        if (at + len > cells) {
            len = cells - at;
        }
        r[l->count].offset = (uint64_t) at * 4;
        r[l->count].length = (uint64_t) len * 4;
        l->count++;
        at += len + 1;   /* disjoint, not touching: no merging needed */
    }
    if (0 == l->count) {
        r[0].offset = 0;
        r[0].length = 4;
        l->count = 1;
    }
    l->ranges = r;
    l->capacity = 8;
    l->normalized = true;
}

/* Writes stamp into every cell of l, or checks that every cell holds
 * want (want_p NULL: reads into got). */
static int cells_write(int fd, const mca_common_sfio_rangelist_t *l, uint32_t stamp)
{
    for (size_t i = 0; i < l->count; ++i) {
        size_t n = l->ranges[i].length / 4;
        uint32_t *b = malloc(n * 4);
        for (size_t j = 0; j < n; ++j) {
            b[j] = stamp;
        }
        ssize_t w = pwrite(fd, b, n * 4, (off_t) l->ranges[i].offset);
        free(b);
        if (w != (ssize_t) (n * 4)) {
            return -1;
        }
    }
    return 0;
}

static uint64_t cells_sum(int fd, const mca_common_sfio_rangelist_t *l, uint32_t stamp, int *bad)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < l->count; ++i) {
        size_t n = l->ranges[i].length / 4;
        uint32_t *b = calloc(n, 4);
        if (pread(fd, b, n * 4, (off_t) l->ranges[i].offset) != (ssize_t) (n * 4)) {
            (*bad)++;
        }
        for (size_t j = 0; j < n; ++j) {
            if (0 != stamp && b[j] != stamp) {
                (*bad)++;
            }
            h = (h ^ b[j]) * 1099511628211ull;
        }
        free(b);
    }
    return h;
}

static void run_lists(mca_common_sfio_locksvc_t *svc, int fd, int rounds, int cells, bool check,
                      double limit, const char *name)
{
    unsigned seed = 12345u + 7919u * (unsigned) rank;
    mca_common_sfio_range_t r[8];
    mca_common_sfio_rangelist_t l;
    int bad = 0, errs = 0;
    double worst = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int it = 0; it < rounds; ++it) {
        random_list(&seed, cells, &l, r);
        bool excl = rand_r(&seed) & 1;
        uint32_t stamp = ((uint32_t) (rank + 1) << 20) | (uint32_t) it;
        double t0 = now();
        int rc = mca_common_sfio_locksvc_acquire(svc, &l, excl);
        double waited = now() - t0;
        worst = waited > worst ? waited : worst;
        if (0 != rc) {
            fprintf(stderr, "rank %d: acquire: %s\n", rank, strerror(-rc));
            errs++;
            continue;
        }
        if (check) {
            if (excl) {
                if (0 != cells_write(fd, &l, stamp)) {
                    bad++;
                }
                usleep((useconds_t) (rand_r(&seed) % 2000));
                (void) cells_sum(fd, &l, stamp, &bad);
            } else {
                uint64_t a = cells_sum(fd, &l, 0, &bad);
                usleep((useconds_t) (rand_r(&seed) % 2000));
                if (a != cells_sum(fd, &l, 0, &bad)) {
                    bad++;
                }
            }
        }
        if (0 != mca_common_sfio_locksvc_release(svc)) {
            errs++;
        }
    }
    char why[160];
    snprintf(why, sizeof(why), "cells changed under a held list, an error, or a wait over %.0f s",
             limit);
    int over = worst > limit;
    if (over) {
        fprintf(stderr, "rank %d: %s: longest wait %.2f s\n", rank, name, worst);
    }
    report(name, bad + errs + over, why);
}

/* Lists as long as the service takes: every other cell from an offset of
 * rank + round parity; at least min_len ranges. */
static void run_long(mca_common_sfio_locksvc_t *svc, int fd, int rounds, const char *name,
                     size_t min_len)
{
    size_t n = mca_common_sfio_locksvc_max_ranges(svc);
    mca_common_sfio_range_t *r = malloc(n * sizeof(*r));
    mca_common_sfio_rangelist_t l = { r, n, n, true };
    int bad = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int it = 0; it < rounds; ++it) {
        uint64_t parity = (uint64_t) ((rank + it) % 2);
        for (size_t i = 0; i < n; ++i) {
            r[i].offset = (2 * i + parity) * 4;
            r[i].length = 4;
        }
        int rc = mca_common_sfio_locksvc_acquire(svc, &l, true);
        if (0 != rc) {
            fprintf(stderr, "rank %d: long list of %zu: %s\n", rank, n, strerror(-rc));
            bad++;
            continue;
        }
        uint32_t stamp = ((uint32_t) (rank + 1) << 20) | (uint32_t) it;
        bad += 0 != cells_write(fd, &l, stamp);
        usleep(500);
        (void) cells_sum(fd, &l, stamp, &bad);
        bad += 0 != mca_common_sfio_locksvc_release(svc);
    }
    free(r);
    char why[128];
    snprintf(why, sizeof(why), "cells changed under a long list, an error, or lists shorter "
             "than %zu ranges", min_len);
    report(name, bad + (n < min_len), why);
}

/* A rank that is not the host freezes holding the whole file. */
static void run_frozen(int fd, int64_t probe_ms, int64_t dead_ms)
{
    mca_common_sfio_locksvc_t *svc = open_svc(60000, probe_ms, dead_ms);
    int host = mca_common_sfio_locksvc_host(svc);
    int victim = (host + 1) % size;
    int bad = 0;
    pid_t *pids = malloc((size_t) size * sizeof(*pids));
    pid_t me = getpid();
    MPI_Allgather(&me, sizeof(me), MPI_BYTE, pids, sizeof(me), MPI_BYTE, MPI_COMM_WORLD);
    mca_common_sfio_range_t all = { 0, UINT64_MAX };
    mca_common_sfio_rangelist_t l = { &all, 1, 1, true };
    if (rank == victim && 0 != mca_common_sfio_locksvc_acquire(svc, &l, true)) {
        bad++;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double limit = (double) (probe_ms + dead_ms) / 1000.0 + 3.0;
    if (rank == victim) {
        raise(SIGSTOP);   /* resumed by rank 0 (or rank 1 when rank 0 is the victim) */
        int rc = mca_common_sfio_locksvc_release(svc);
        if (-ENOLCK != rc) {
            fprintf(stderr, "rank %d: release after being dropped: %d, not -ENOLCK\n", rank, rc);
            bad++;
        }
        rc = mca_common_sfio_locksvc_acquire(svc, &l, true);
        if (-ENOLCK != rc) {
            fprintf(stderr, "rank %d: request after being dropped: %d, not -ENOLCK\n", rank, rc);
            bad++;
            if (0 == rc) {
                (void) mca_common_sfio_locksvc_release(svc);
            }
        }
    } else {
        usleep(300000);
        double t0 = now();
        int rc = mca_common_sfio_locksvc_acquire(svc, &l, true);
        double waited = now() - t0;
        if (0 != rc || waited > limit) {
            fprintf(stderr, "rank %d: frozen holder: acquire %s after %.2f s (limit %.1f)\n",
                    rank, strerror(-rc), waited, limit);
            bad++;
        }
        if (0 == rc) {
            mca_common_sfio_range_t c0 = { 0, 4 };
            mca_common_sfio_rangelist_t first = { &c0, 1, 1, true };
            bad += 0 != cells_write(fd, &first, (uint32_t) rank);
            bad += 0 != mca_common_sfio_locksvc_release(svc);
        }
        /* granted: the victim was dropped, so it can be woken */
        if (rank == (0 == victim ? 1 : 0)) {
            kill(pids[victim], SIGCONT);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(pids);
    report("locksvc.frozen", bad, "the others did not get the frozen holder's lock in time, "
                                  "or the frozen rank was not told it lost it");
    (void) mca_common_sfio_locksvc_close(svc);
}

int main(int argc, char **argv)
{
    int rounds = 200, stress = 2000, cells = 1024;
    double limit = 20;
    bool frozen = true;
    const char *dir = getenv("SFIO_TEST_DIR") ? getenv("SFIO_TEST_DIR") : "/tmp";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--stress") && i + 1 < argc) stress = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cells") && i + 1 < argc) cells = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--limit") && i + 1 < argc) limit = atof(argv[++i]);
        else if (!strcmp(argv[i], "--skip-frozen")) frozen = false;
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else {
            if (0 == rank) fprintf(stderr, "t_locksvc: unknown argument %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    char path[256];
    int tag = (int) getpid();
    MPI_Bcast(&tag, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof(path), "%s/t_locksvc.%d.dat", dir, tag);
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    if (fd < 0) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (0 == rank && 0 != ftruncate(fd, (off_t) cells * 4)) {
        perror("ftruncate");
    }
    MPI_Barrier(MPI_COMM_WORLD);

    mca_common_sfio_locksvc_t *svc = open_svc(60000, 1000, 10000);
    run_lists(svc, fd, rounds, cells, true, limit, "locksvc.safety");
    run_long(svc, fd, 10, "locksvc.long", 1000);
    double t0 = now();
    run_lists(svc, fd, stress, cells, false, limit, "locksvc.stress");
    if (0 == rank) {
        printf("# stress: %d lists per rank in %.2f s\n", stress, now() - t0);
    }
    (void) mca_common_sfio_locksvc_close(svc);

    /* lists of many messages each */
    svc = open_svc_max(60000, 1000, 10000, 20000);
    run_long(svc, fd, 5, "locksvc.parts", 20000);
    (void) mca_common_sfio_locksvc_close(svc);

    /* a live holder that keeps its lock past another's wait timeout */
    svc = open_svc(1000, 200, 60000);
    {
        mca_common_sfio_range_t all = { 0, UINT64_MAX };
        mca_common_sfio_rangelist_t l = { &all, 1, 1, true };
        int holder = (mca_common_sfio_locksvc_host(svc) + 1) % size, bad = 0;
        if (rank == holder && 0 != mca_common_sfio_locksvc_acquire(svc, &l, true)) {
            bad++;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == holder) {
            sleep(3);   /* outside MPI; the progress thread answers probes */
            bad += 0 != mca_common_sfio_locksvc_release(svc);
        } else if (rank == (holder + 1) % size) {
            double t = now();
            int rc = mca_common_sfio_locksvc_acquire(svc, &l, false);
            double waited = now() - t;
            if (-ETIMEDOUT != rc || waited < 0.9 || waited > 2.5) {
                fprintf(stderr, "rank %d: timeout: %s after %.2f s\n", rank, strerror(-rc), waited);
                bad++;
            }
            if (0 == rc) {
                (void) mca_common_sfio_locksvc_release(svc);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (0 != mca_common_sfio_locksvc_acquire(svc, &l, false)) {
            bad++;
        } else {
            bad += 0 != mca_common_sfio_locksvc_release(svc);
        }
        report("locksvc.timeout", bad, "a waiter behind a slow live holder did not time out "
                                       "after its 1 s, or the holder lost its lock");
    }
    (void) mca_common_sfio_locksvc_close(svc);

    if (frozen && size >= 3) {
        run_frozen(fd, 500, 2000);
    } else if (0 == rank) {
        printf("ok locksvc.frozen # SKIP %s\n", frozen ? "needs 3 ranks" : "--skip-frozen");
    }
    close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        unlink(path);
    }
    MPI_Finalize();
    return failures ? 1 : 0;
}
