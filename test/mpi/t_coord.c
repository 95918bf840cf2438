/*
 * t_coord: the engine's coordination service (sfio_coord) driven
 * directly, on every backend the ranks allow: fetch-and-add hands out each
 * number once, compare-and-swap loses no update, and publication makes
 * versions visible in order: a publish returns only when every earlier
 * version is in, waits for a slow writer, and gives up after the timeout
 * when an earlier writer never finishes (then succeeds once it does).
 *
 * Built from the engine's sources (its symbols are not exported).
 *
 *   t_coord [auto|local|shm|ofi|rma ...]   backends to run (default: every
 *                                          one but auto, ofi both ways, each
 *                                          skipped where it cannot serve the
 *                                          ranks)
 *
 * members (first, and by default): ofi services on overlapping groups of
 * ranks, one where some rank has met every member and others have not
 * (the agreement on known addresses, sfio_coord_join).
 *
 * ofi:atomic and ofi:message force how the ofi backend moves its counters
 * (ofi alone: auto); forced atomic also checks that the fabric completed
 * atomics on every rank (message: none), and either prints the time of one
 * fetch_add round trip from each rank that is not the host.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sfio_mpitest.h"

#include "sfio_coord.h"
#include "sfio_fabric.h"

/* What the engine's sources used here take from its OMPIO adapter. */
int mca_common_sfio_output = -1;   /* the verbose stream: none */

void mca_common_sfio_show_help(const char *topic, bool want_error_header, ...)
{
    (void) want_error_header;
    fprintf(stderr, "t_coord: engine help topic %s\n", topic);
}

enum { SLOT_COUNT, SLOT_CAS, SLOT_SEQ, SLOT_MARK, SLOT_ORDERED, SLOT_GATE, SLOT_TAKEN, NSLOTS };

static const struct {
    const char *name;
    mca_common_sfio_coord_backend_t backend;
} backends[] = {
    { "auto", MCA_COMMON_SFIO_COORD_AUTO }, { "local", MCA_COMMON_SFIO_COORD_LOCAL },
    { "shm", MCA_COMMON_SFIO_COORD_SHM },   { "ofi", MCA_COMMON_SFIO_COORD_OFI },
    { "rma", MCA_COMMON_SFIO_COORD_RMA },
};

static void pause_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    nanosleep(&ts, NULL);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

static int opened(int rc, const char *what)
{
    if (0 != rc) {
        t_failf("%s: %s", what, strerror(-rc));
        return 0;
    }
    return 1;
}

/* Collective: the k numbers each rank got are 0 .. k * ranks - 1, each
 * handed out once (checked on rank 0). */
static void handed_out_once(const int64_t *mine, int k)
{
    int64_t *all = 0 == t_rank ? malloc(sizeof(int64_t) * (size_t) k * (size_t) t_np) : NULL;
    MPI_Gather(mine, k, MPI_INT64_T, all, k, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (0 == t_rank) {
        qsort(all, (size_t) k * (size_t) t_np, sizeof(int64_t), cmp_i64);
        for (int64_t i = 0; i < (int64_t) k * t_np; ++i) {
            if (all[i] != i) {
                t_failf("the %lldth number handed out is %lld", (long long) i,
                        (long long) all[i]);
                break;
            }
        }
    }
    free(all);
}

static void test_fetch_add(mca_common_sfio_coord_t *c, const char *tag)
{
    enum { K = 200 };
    char name[64];
    snprintf(name, sizeof(name), "%s.fetch_add_once", tag);
    if (!t_begin(name)) {
        return;
    }
    int64_t mine[K];
    for (int i = 0; i < K; ++i) {
        if (!opened(mca_common_sfio_coord_fetch_add(c, SLOT_COUNT, 1, &mine[i]), "fetch_add")) {
            break;
        }
    }
    handed_out_once(mine, K);
    t_end();
}

/* Adds nobody waits for: each lands, soon, whatever else the ranks do. */
static void test_add_unanswered(mca_common_sfio_coord_t *c, const char *tag)
{
    enum { K = 300 };
    char name[64];
    snprintf(name, sizeof(name), "%s.add_unanswered", tag);
    if (!t_begin(name)) {
        return;
    }
    int64_t start = 0, total = -1;
    opened(mca_common_sfio_coord_load(c, SLOT_CAS, &start), "load");
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < K && !t_lfail; ++i) {
        opened(mca_common_sfio_coord_add(c, SLOT_CAS, 1 + (i & 1)), "add");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t want = start + (int64_t) (K / 2 * 3) * t_np;
    for (int polls = 0; polls < 10000 && total != want; ++polls) {
        if (!opened(mca_common_sfio_coord_load(c, SLOT_CAS, &total), "load")) {
            break;
        }
        if (total != want) {
            pause_us(1000);
        }
    }
    if (total != want) {
        t_failf("after %d adds by each rank the slot holds %lld, want %lld", K,
                (long long) total, (long long) want);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t_end();
}

/* A gate entered with a fetch-and-add: every rank's numbers are handed
 * out once and the gate counts each entry; a gate at its limit is not
 * entered and the slot stays. */
static void test_enter_fetch_add(mca_common_sfio_coord_t *c, const char *tag)
{
    enum { K = 100, LIMIT = 1 << 20 };
    char name[64];
    snprintf(name, sizeof(name), "%s.enter_fetch_add", tag);
    int64_t gate_old = 0, old = 0;
    if (-ENOTSUP == mca_common_sfio_coord_enter_fetch_add(c, SLOT_GATE, 0, SLOT_TAKEN, 0, &gate_old,
                                                          &old)) {
        if (0 == t_rank) {
            printf("# %s: not offered\n", name);
        }
        return;   /* every rank the same: the backend's choice */
    }
    if (!t_begin(name)) {
        return;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t mine[K];
    for (int i = 0; i < K; ++i) {
        if (!opened(mca_common_sfio_coord_enter_fetch_add(c, SLOT_GATE, LIMIT, SLOT_TAKEN, 1,
                                                          &gate_old, &mine[i]),
                    "enter_fetch_add")) {
            break;
        }
        if (gate_old >= LIMIT) {
            t_failf("a gate below its limit was refused (it held %lld)", (long long) gate_old);
            break;
        }
    }
    handed_out_once(mine, K);
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == t_rank) {
        int64_t gate = -1;
        opened(mca_common_sfio_coord_load(c, SLOT_GATE, &gate), "load");
        if (gate != (int64_t) K * t_np) {
            t_failf("the gate holds %lld after %d entries by each rank", (long long) gate, K);
        }
        /* at its limit: neither slot moves */
        opened(mca_common_sfio_coord_store(c, SLOT_GATE, LIMIT), "store");
        int64_t taken = -1, after = -1;
        opened(mca_common_sfio_coord_enter_fetch_add(c, SLOT_GATE, LIMIT, SLOT_TAKEN, 1, &gate_old,
                                                     &old), "enter_fetch_add");
        opened(mca_common_sfio_coord_load(c, SLOT_TAKEN, &taken), "load");
        opened(mca_common_sfio_coord_load(c, SLOT_GATE, &after), "load");
        if (gate_old != LIMIT || after != LIMIT || taken != (int64_t) K * t_np) {
            t_failf("a gate at its limit: held %lld, now %lld, slot %lld (want %d, %d, %lld)",
                    (long long) gate_old, (long long) after, (long long) taken, LIMIT, LIMIT,
                    (long long) K * t_np);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t_end();
}

static void test_compare_swap(mca_common_sfio_coord_t *c, const char *tag)
{
    enum { K = 100 };
    char name[64];
    snprintf(name, sizeof(name), "%s.compare_swap_no_lost_update", tag);
    if (!t_begin(name)) {
        return;
    }
    for (int i = 0; i < K && !t_lfail; ++i) {
        int64_t seen = 0, old = -1;
        opened(mca_common_sfio_coord_load(c, SLOT_CAS, &seen), "load");
        for (;;) {
            if (!opened(mca_common_sfio_coord_compare_swap(c, SLOT_CAS, seen, seen + 1, &old),
                        "compare_swap")) {
                break;
            }
            if (old == seen) {
                break;
            }
            seen = old;   /* somebody else's update came first */
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t total = -1;
    opened(mca_common_sfio_coord_load(c, SLOT_CAS, &total), "load");
    if (total != (int64_t) K * t_np) {
        t_failf("after %d increments by each rank the slot holds %lld, want %lld", K,
                (long long) total, (long long) K * t_np);
    }
    t_end();
}

/* Ordered rounds and fetch_adds on one slot (a shared pointer's two
 * uses): each round's parts are contiguous in rank order, and no
 * advance of either kind is lost. */
static void test_ordered_mixed(mca_common_sfio_coord_t *c, const char *tag)
{
    enum { K = 40 };
    char name[64];
    snprintf(name, sizeof(name), "%s.ordered_and_fetch_add", tag);
    int64_t probe = 0;
    if (-ENOTSUP == mca_common_sfio_coord_ordered_add(c, SLOT_ORDERED, 0, &probe) ||
        !t_begin(name)) {
        return;   /* the probe is a round of zero bytes everywhere */
    }
    int64_t *starts = malloc(sizeof(int64_t) * (size_t) t_np);
    for (int i = 0; i < K && !t_lfail; ++i) {
        int64_t start = 0, old = 0;
        if (!opened(mca_common_sfio_coord_ordered_add(c, SLOT_ORDERED, t_rank + 1, &start),
                    "ordered_add") ||
            !opened(mca_common_sfio_coord_fetch_add(c, SLOT_ORDERED, 1000, &old), "fetch_add")) {
            break;
        }
        MPI_Allgather(&start, 1, MPI_INT64_T, starts, 1, MPI_INT64_T, MPI_COMM_WORLD);
        for (int r = 1; r < t_np; ++r) {
            if (starts[r] != starts[r - 1] + r) {
                t_failf("round %d: rank %d starts at %lld, rank %d at %lld", i, r - 1,
                        (long long) starts[r - 1], r, (long long) starts[r]);
                break;
            }
        }
    }
    free(starts);
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t total = 0, want = (int64_t) K * ((int64_t) t_np * (t_np + 1) / 2 + 1000 * t_np);
    opened(mca_common_sfio_coord_load(c, SLOT_ORDERED, &total), "load");
    if (total != want) {
        t_failf("the slot ends at %lld, want %lld", (long long) total, (long long) want);
    }
    t_end();
}

/* Versions from the sequencer, finished in random order: publish returns
 * with the mark at or past the caller's version, and the mark never goes
 * back. */
static void test_publish_order(mca_common_sfio_coord_t *c, const char *tag)
{
    enum { K = 60 };
    char name[64];
    snprintf(name, sizeof(name), "%s.publish_in_order", tag);
    if (!t_begin(name)) {
        return;
    }
    srand(1234u + (unsigned) t_rank);
    int64_t last_mark = 0, base = 0;
    opened(mca_common_sfio_coord_load(c, SLOT_MARK, &base), "load");
    MPI_Barrier(MPI_COMM_WORLD);   /* every rank has the mark before any publishes */
    for (int i = 0; i < K && !t_lfail; ++i) {
        int64_t v = 0, mark = 0;
        if (!opened(mca_common_sfio_coord_fetch_add(c, SLOT_SEQ, 1, &v), "fetch_add")) {
            break;
        }
        v += 1;
        pause_us(rand() % 400);   /* the data of the version goes out */
        if (!opened(mca_common_sfio_coord_publish(c, SLOT_MARK, v), "publish") ||
            !opened(mca_common_sfio_coord_load(c, SLOT_MARK, &mark), "load")) {
            break;
        }
        if (mark < v || mark < last_mark) {
            t_failf("after publishing version %lld the mark is %lld (was %lld)", (long long) v,
                    (long long) mark, (long long) last_mark);
        }
        last_mark = mark;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t mark = 0;
    opened(mca_common_sfio_coord_load(c, SLOT_MARK, &mark), "load");
    if (mark != base + (int64_t) K * t_np) {
        t_failf("the mark ends at %lld, want %lld", (long long) mark,
                (long long) (base + (int64_t) K * t_np));
    }
    t_end();
}

/* Rank 0 takes the next version and finishes it late: the others' later
 * versions are not published before it.  With a timeout shorter than the
 * delay, their publish fails with ETIMEDOUT and succeeds when retried
 * after rank 0's. */
static void test_publish_waits(mca_common_sfio_coord_t *c, const char *tag, long delay_ms,
                               int expect_timeout)
{
    char name[96];
    snprintf(name, sizeof(name), "%s.publish_waits_for_earlier%s", tag,
             expect_timeout ? "_timeout" : "");
    if (!t_begin(name)) {
        return;
    }
    int64_t v = 0;
    if (0 == t_rank) {
        opened(mca_common_sfio_coord_fetch_add(c, SLOT_SEQ, 1, &v), "fetch_add");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 != t_rank) {
        opened(mca_common_sfio_coord_fetch_add(c, SLOT_SEQ, 1, &v), "fetch_add");
    }
    v += 1;
    double t0 = MPI_Wtime(), published_at = 0.0;
    if (0 == t_rank) {
        pause_us(delay_ms * 1000);
        published_at = MPI_Wtime();
        opened(mca_common_sfio_coord_publish(c, SLOT_MARK, v), "publish (late writer)");
    } else {
        int rc = mca_common_sfio_coord_publish(c, SLOT_MARK, v);
        double waited = MPI_Wtime() - t0;
        if (expect_timeout) {
            if (-ETIMEDOUT != rc) {
                t_failf("publish of version %lld behind a writer %ld ms late returned %d after "
                        "%.3f s, want ETIMEDOUT",
                        (long long) v, delay_ms, rc, waited);
            }
        } else if (0 != rc) {
            t_failf("publish: %s", strerror(-rc));
        } else if (waited < 0.8 * (double) delay_ms / 1000.0) {
            t_failf("version %lld published after %.3f s, before the earlier writer (%ld ms)",
                    (long long) v, waited, delay_ms);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (expect_timeout && 0 != t_rank) {
        /* the earlier version is in now: a retry goes through */
        opened(mca_common_sfio_coord_publish(c, SLOT_MARK, v), "publish (retried)");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t mark = 0, seq = 0;
    opened(mca_common_sfio_coord_load(c, SLOT_MARK, &mark), "load");
    opened(mca_common_sfio_coord_load(c, SLOT_SEQ, &seq), "load");
    if (mark != seq) {
        t_failf("every version is finished but the mark is %lld of %lld", (long long) mark,
                (long long) seq);
    }
    (void) published_at;
    t_end();
}

/* Each rank in turn, the others idle: the mean time of one fetch_add (the
 * host's own too). */
static void time_fetch_add(mca_common_sfio_coord_t *c, const char *tag)
{
    enum { K = 2000 };
    int host = mca_common_sfio_coord_host(c);
    for (int r = 0; r < t_np; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (r != t_rank) {
            continue;
        }
        int64_t old = 0;
        (void) mca_common_sfio_coord_fetch_add(c, SLOT_COUNT, 1, &old);   /* warm */
        double t0 = MPI_Wtime();
        for (int i = 0; i < K; ++i) {
            if (0 != mca_common_sfio_coord_fetch_add(c, SLOT_COUNT, 1, &old)) {
                break;
            }
        }
        printf("# %s: fetch_add round trip %.1f us (rank %d, host %d)\n", tag,
               1e6 * (MPI_Wtime() - t0) / K, t_rank, host);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Forced atomic: every rank's fabric completed atomics; message: none. */
static void check_path(mca_common_sfio_coord_counters_t counters, uint64_t before,
                       const char *tag)
{
    char name[96];
    snprintf(name, sizeof(name), "%s.counters_%s", tag,
             MCA_COMMON_SFIO_COORD_COUNTERS_ATOMIC == counters ? "atomic" : "message");
    if (!t_begin(name)) {
        return;
    }
    uint64_t done = mca_common_sfio_fabric_atomics_done() - before;
    if (MCA_COMMON_SFIO_COORD_COUNTERS_ATOMIC == counters && 0 == done) {
        t_failf("counters forced to atomic, but this rank's fabric completed no atomic");
    } else if (MCA_COMMON_SFIO_COORD_COUNTERS_MESSAGE == counters && 0 != done) {
        t_failf("counters forced to messages, but this rank's fabric completed %llu atomics",
                (unsigned long long) done);
    }
    t_end();
}

static void run_backend(const char *bname, mca_common_sfio_coord_backend_t backend,
                        mca_common_sfio_coord_counters_t counters)
{
    const int64_t timeouts[2] = { 20000, 700 };
    uint64_t before = mca_common_sfio_fabric_atomics_done();
    for (int t = 0; t < 2; ++t) {
        mca_common_sfio_coord_config_t cfg = { .backend = backend, .timeout_ms = timeouts[t],
                                               .host = -1, .counters = counters };
        mca_common_sfio_coord_t *c = NULL;
        int rc = mca_common_sfio_coord_open(MPI_COMM_WORLD, &cfg, NSLOTS, 0, &c);
        if (0 != rc) {
            if (0 == t_rank && 0 == t) {
                printf("# %s: backend not available for these ranks (%s)\n", bname,
                       strerror(-rc));
            }
            return;
        }
        char tag[64];
        snprintf(tag, sizeof(tag), "%s.%s", bname, mca_common_sfio_coord_name(c));
        int64_t probe = 0;
        if (-ENOTSUP == mca_common_sfio_coord_compare_swap(c, SLOT_CAS, 0, 0, &probe)) {
            if (0 == t) {
                test_fetch_add(c, tag);
            }
            if (0 == t_rank && 0 == t) {
                printf("# %s: no compare_swap, no publication\n", tag);
            }
        } else if (0 == t) {
            test_fetch_add(c, tag);
            test_compare_swap(c, tag);
            test_add_unanswered(c, tag);
            test_enter_fetch_add(c, tag);
            test_ordered_mixed(c, tag);
            test_publish_order(c, tag);
            if (t_np > 1) {
                test_publish_waits(c, tag, 500, 0);
            }
        } else if (t_np > 1) {
            test_publish_waits(c, tag, 2000, 1);
        }
        if (0 == t && MCA_COMMON_SFIO_COORD_OFI == backend && t_np > 1) {
            time_fetch_add(c, tag);   /* after the tests: it moves SLOT_COUNT */
        }
        if (0 != mca_common_sfio_coord_close(c) && 0 == t_rank) {
            printf("# %s: close failed\n", tag);
        }
        if (0 == t && MCA_COMMON_SFIO_COORD_OFI == backend &&
            MCA_COMMON_SFIO_COORD_COUNTERS_AUTO != counters) {
            check_path(counters, before, tag);
        }
    }
}

/* One ofi service on comm: every rank adds 1 once, and the count must be
 * comm's size once every rank has added.  0, or the open's error (a
 * failure only when must_open). */
static int members_round(MPI_Comm comm, const char *what, int must_open)
{
    mca_common_sfio_coord_config_t cfg = { .backend = MCA_COMMON_SFIO_COORD_OFI,
                                           .timeout_ms = 20000, .host = -1 };
    mca_common_sfio_coord_t *c = NULL;
    int64_t old = 0, total = 0;
    int n = 0;
    MPI_Comm_size(comm, &n);
    int rc = mca_common_sfio_coord_open((struct ompi_communicator_t *) comm, &cfg, NSLOTS, 0, &c);
    if (0 != rc) {
        if (must_open) {
            t_failf("%s: open: %s", what, strerror(-rc));
        }
        return rc;
    }
    if (opened(mca_common_sfio_coord_fetch_add(c, SLOT_COUNT, 1, &old), "fetch_add")) {
        MPI_Barrier(comm);
        if (opened(mca_common_sfio_coord_load(c, SLOT_COUNT, &total), "load") && total != n) {
            t_failf("%s: count %lld after %d ranks added 1", what, (long long) total, n);
        }
    }
    (void) opened(mca_common_sfio_coord_close(c), "close");
    return 0;
}

/* Services on the ranks {0,1}, then {0,2}, then {0,1,2} twice: at the
 * third, rank 0 has met every member while ranks 1 and 2 have not met
 * each other, and the members' agreement must make all exchange; at the
 * fourth, nobody does.  Runs before any other ofi service of the job
 * (which would make every rank know every other). */
static void test_members(void)
{
    static const struct {
        int in[3];   /* the members: in[r] for ranks 0..2, the others never */
        const char *what;
    } step[] = {
        { { 1, 1, 0 }, "ranks {0,1}" }, { { 1, 0, 1 }, "ranks {0,2}" },
        { { 1, 1, 1 }, "ranks {0,1,2}, rank 0 knowing all" },
        { { 1, 1, 1 }, "ranks {0,1,2} again" },
    };
    if (t_np < 3 || !t_begin("ofi.members_mixed")) {
        if (0 == t_rank && t_np < 3) {
            printf("# ofi.members_mixed: needs 3 ranks\n");
        }
        return;
    }
    for (size_t k = 0; k < sizeof(step) / sizeof(step[0]); ++k) {
        MPI_Comm comm;
        int in = t_rank < 3 && step[k].in[t_rank], rc = 0;
        MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, t_rank, &comm);
        if (in) {
            rc = members_round(comm, step[k].what, k > 0);
            MPI_Comm_free(&comm);
        }
        /* the first step tells whether the ranks have a fabric at all */
        MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (0 == k && 0 != rc) {
            if (0 == t_rank) {
                printf("# ofi.members_mixed: ofi not available (%s)\n", strerror(-rc));
            }
            break;
        }
    }
    t_end();
}

/* Services closed without an agreement of their own, one after another
 * (their hosts go round the nodes): each starts at zero and counts every
 * rank's additions although the last one's host freed its table as soon
 * as the barrier after the last operation let it. */
static void test_close_quiesced(void)
{
    if (!t_begin("ofi.close_quiesced")) {
        return;
    }
    mca_common_sfio_coord_config_t cfg = { .backend = MCA_COMMON_SFIO_COORD_OFI,
                                           .timeout_ms = 20000, .host = -1 };
    for (int k = 0; k < 32; ++k) {
        mca_common_sfio_coord_t *c = NULL;
        int rc = mca_common_sfio_coord_open((struct ompi_communicator_t *) MPI_COMM_WORLD, &cfg,
                                            NSLOTS, 0, &c);
        if (0 != rc) {
            if (0 == k && 0 == t_rank) {
                printf("# ofi.close_quiesced: ofi not available (%s)\n", strerror(-rc));
            } else if (0 != k) {
                t_failf("open %d: %s", k, strerror(-rc));
            }
            break;
        }
        int64_t old = 0, total = 0;
        if (opened(mca_common_sfio_coord_fetch_add(c, SLOT_COUNT, k + 1, &old), "fetch_add")) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (opened(mca_common_sfio_coord_load(c, SLOT_COUNT, &total), "load") &&
                total != (int64_t) t_np * (k + 1)) {
                t_failf("service %d: count %lld, want %lld", k, (long long) total,
                        (long long) t_np * (k + 1));
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);   /* every rank past its last operation */
        (void) opened(mca_common_sfio_coord_close_quiesced(c), "close_quiesced");
    }
    t_end();
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "coord");
    /* first: it needs ranks that have not met */
    if (argc <= 1 || 0 == strcmp(argv[1], "members")) {
        test_members();
    }
    if (argc <= 1 || 0 == strcmp(argv[1], "quiesced")) {
        test_close_quiesced();
    }
    static const char *every[] = { "local", "shm", "ofi:atomic", "ofi:message", "rma" };
    int nwant = argc > 1 ? argc - 1 : (int) (sizeof(every) / sizeof(every[0]));
    for (int i = 0; i < nwant; ++i) {
        const char *want = argc > 1 ? argv[1 + i] : every[i];
        mca_common_sfio_coord_counters_t counters = MCA_COMMON_SFIO_COORD_COUNTERS_AUTO;
        size_t len = strcspn(want, ":");
        if (0 == strcmp(want + len, ":atomic")) {
            counters = MCA_COMMON_SFIO_COORD_COUNTERS_ATOMIC;
        } else if (0 == strcmp(want + len, ":message")) {
            counters = MCA_COMMON_SFIO_COORD_COUNTERS_MESSAGE;
        }
        for (size_t b = 0; b < sizeof(backends) / sizeof(backends[0]); ++b) {
            if (len == strlen(backends[b].name) && 0 == strncmp(want, backends[b].name, len)) {
                run_backend(want, backends[b].backend, counters);
            }
        }
    }
    return t_finish();
}
