/*
 * sfio_vstore_mapped: the store's shared state in its coordination file,
 * mapped by every rank of one node: C11 atomics on a page, no rank ever
 * waits for another to enter MPI, and a dead rank is told by its pid.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "sfio_vstore.h"
#include "sfio_vstore_int.h"

static void pause_ns(long ns)
{
    struct timespec ts = { 0, ns };
    nanosleep(&ts, NULL);
}

static bool rank_dead(mca_common_sfio_vstore_t *s, int r)
{
    return r >= 0 && r < s->nranks &&
           mca_common_sfio_pid_dead(atomic_load(&s->coord->rank[r].pid));
}

static int mapped_join(mca_common_sfio_vstore_t *s)
{
    atomic_store(&s->coord->rank[s->rank].pid, (int64_t) getpid());
    atomic_fetch_add(&s->coord->attached, 1);
    return 0;
}

static int mapped_leave(mca_common_sfio_vstore_t *s)
{
    atomic_fetch_sub(&s->coord->attached, 1);
    return 0;
}

static bool mapped_all_left(mca_common_sfio_vstore_t *s)
{
    for (unsigned long spins = 0; atomic_load(&s->coord->attached) > 0; ++spins) {
        if (spins > 200000) {
            return false;   /* a rank that cannot leave */
        }
        sched_yield();
    }
    return true;
}

static int mapped_take_version(mca_common_sfio_vstore_t *s, uint64_t *version_p)
{
    coord_rank_t *me = &s->coord->rank[s->rank];
    atomic_store(&me->pending, CLAIMING);
    *version_p = atomic_fetch_add(&s->coord->next_version, 1) + 1;
    atomic_store(&me->pending, *version_p);
    return 0;
}

/* Whether version b's record is whole (its writer may be waiting for a
 * lower version, or descheduled): then any rank may publish it. */
static bool ready(mca_common_sfio_vstore_t *s, uint64_t b)
{
    for (int r = 0; r < s->nranks; ++r) {
        if (atomic_load_explicit(&s->coord->rank[r].pending, memory_order_acquire) ==
            (b | PENDING_READY)) {
            return true;
        }
    }
    return false;
}

/* Version b is next to publish but nobody publishes it.  True when its
 * writer is certainly dead: the rank holding b is dead, or no live rank
 * holds b or is still claiming a version while some dead rank was. */
static bool holder_dead(mca_common_sfio_vstore_t *s, uint64_t b)
{
    bool dead_claimer = false;
    for (int r = 0; r < s->nranks; ++r) {
        uint64_t pend = atomic_load(&s->coord->rank[r].pending);
        int64_t pid = atomic_load(&s->coord->rank[r].pid);
        if (CLAIMING != pend && (pend & ~PENDING_READY) == b) {
            return mca_common_sfio_pid_dead(pid);
        }
        if (CLAIMING == pend) {
            if (!mca_common_sfio_pid_dead(pid)) {
                return false;   /* may be about to hold b */
            }
            dead_claimer = true;
        }
    }
    return dead_claimer;
}

/* Publishes v after every lower version; skips a dead writer's version.
 * v's record is whole when this is called, so v is marked ready first and
 * every waiting rank publishes whatever ready versions follow the last
 * published one: on a busy node the chain of publications does not wait
 * for each writer in turn to be scheduled, only for records to be whole. */
static int mapped_publish(mca_common_sfio_vstore_t *s, uint64_t v)
{
    unsigned long spins = 0;
    atomic_store_explicit(&s->coord->rank[s->rank].pending, v | PENDING_READY,
                          memory_order_release);
    for (;;) {
        uint64_t p = atomic_load_explicit(&s->coord->published, memory_order_acquire);
        if (p >= v) {
            break;
        }
        if (p == v - 1 || ready(s, p + 1)) {
            atomic_compare_exchange_strong_explicit(&s->coord->published, &p, p + 1,
                                                    memory_order_acq_rel,
                                                    memory_order_acquire);
            continue;
        }
        if (0 == spins++) {
            s->stats.publish_waits++;
        }
        if (spins < 256) {
            sched_yield();
        } else {
            pause_ns(20000);
            if (0 == spins % 512 && holder_dead(s, p + 1) &&
                atomic_compare_exchange_strong(&s->coord->published, &p, p + 1)) {
                s->stats.aborted_versions++;
            }
        }
    }
    atomic_store(&s->coord->rank[s->rank].pending, 0);
    return 0;
}

static int mapped_records_end(mca_common_sfio_vstore_t *s)
{
    atomic_store_explicit(&s->coord->rank[s->rank].rec_tail, s->rec_tail, memory_order_release);
    return 0;
}

static int mapped_marks(mca_common_sfio_vstore_t *s, sfio_vshared_marks_t *m)
{
    m->compactions = atomic_load_explicit(&s->coord->compactions, memory_order_acquire);
    m->published = atomic_load_explicit(&s->coord->published, memory_order_acquire);
    m->folded = atomic_load_explicit(&s->coord->folded, memory_order_acquire);
    return 0;
}

static int mapped_set_folded(mca_common_sfio_vstore_t *s, uint64_t folded)
{
    atomic_store(&s->coord->folded, folded);
    return 0;
}

static int mapped_heads(mca_common_sfio_vstore_t *s, int r, uint64_t *rec_head,
                        uint64_t *log_head)
{
    *rec_head = atomic_load(&s->coord->rank[r].rec_head);
    *log_head = atomic_load(&s->coord->rank[r].log_head);
    return 0;
}

static int mapped_set_heads(mca_common_sfio_vstore_t *s, int r, uint64_t rec_head,
                            uint64_t log_head)
{
    atomic_store(&s->coord->rank[r].rec_head, rec_head);
    atomic_store(&s->coord->rank[r].log_head, log_head);
    return 0;
}

static int mapped_records_tail(mca_common_sfio_vstore_t *s, int r, int rec_fd, uint64_t *tail,
                               bool *exact)
{
    (void) rec_fd;
    *tail = atomic_load_explicit(&s->coord->rank[r].rec_tail, memory_order_acquire);
    *exact = true;
    return 0;
}

static int mapped_count_compaction(mca_common_sfio_vstore_t *s)
{
    atomic_fetch_add(&s->coord->compactions, 1);
    return 0;
}

/* Every data-path call marks itself in its rank's slot of the shared
 * page; a compaction waits until no live rank is marked, and a rank does
 * not enter while one runs (seq_cst on both sides: Dekker's pattern).
 * Shared memory, not file locks: on a network file system a lock is a
 * round trip to its lock manager. */
static int mapped_gate_enter(mca_common_sfio_vstore_t *s)
{
    _Atomic uint32_t *mine = &s->coord->rank[s->rank].in_access;
    for (unsigned long spins = 0;; ++spins) {
        atomic_store(mine, 1);
        uint32_t who = atomic_load(&s->coord->compacting);
        if (0 == who) {
            return 0;
        }
        atomic_store(mine, 0);
        if (0 == spins % 1024 && rank_dead(s, (int) who - 1)) {
            /* its writes were redo of published versions: harmless */
            atomic_compare_exchange_strong(&s->coord->compacting, &who, 0);
        }
        if (spins < 64) {
            sched_yield();
        } else {
            pause_ns(50000);
        }
    }
}

static void mapped_gate_leave(mca_common_sfio_vstore_t *s)
{
    atomic_store(&s->coord->rank[s->rank].in_access, 0);
}

static int mapped_compaction_begin(mca_common_sfio_vstore_t *s)
{
    uint32_t me = (uint32_t) s->rank + 1;
    for (unsigned long spins = 0;; ++spins) {
        uint32_t zero = 0;
        if (atomic_compare_exchange_strong(&s->coord->compacting, &zero, me)) {
            break;
        }
        if (0 == spins % 1024 && rank_dead(s, (int) zero - 1)) {
            atomic_compare_exchange_strong(&s->coord->compacting, &zero, 0);
        }
        pause_ns(50000);
    }
    for (int r = 0; r < s->nranks; ++r) {
        for (unsigned long spins = 0; r != s->rank && atomic_load(&s->coord->rank[r].in_access);
             ++spins) {
            if (0 == spins % 1024 && rank_dead(s, r)) {
                break;
            }
            if (spins < 64) {
                sched_yield();
            } else {
                pause_ns(20000);
            }
        }
    }
    return 0;
}

static void mapped_compaction_end(mca_common_sfio_vstore_t *s)
{
    atomic_store(&s->coord->compacting, 0);
}

static void mapped_flat_mark(mca_common_sfio_vstore_t *s, bool writing, int64_t now_ns)
{
    coord_rank_t *me = &s->coord->rank[s->rank];
    if (writing) {
        atomic_store(&me->flat_writing_ns, now_ns);
    } else {
        atomic_store(&me->flat_written_ns, now_ns);
        atomic_store(&me->flat_writing_ns, 0);
    }
}

const sfio_vshared_ops_t sfio_vshared_mapped = {
    .name = "mapped",
    .shared_by = SFIO_SHARED_BY_MAPPED,
    .publish_needs_record = false,   /* recovery reads the published mark */
    .records_remote = false,
    .join = mapped_join,
    .leave = mapped_leave,
    .all_left = mapped_all_left,
    .take_version = mapped_take_version,
    .publish = mapped_publish,
    .records_end = mapped_records_end,
    .marks = mapped_marks,
    .set_folded = mapped_set_folded,
    .heads = mapped_heads,
    .set_heads = mapped_set_heads,
    .records_tail = mapped_records_tail,
    .count_compaction = mapped_count_compaction,
    .gate_enter = mapped_gate_enter,
    .gate_leave = mapped_gate_leave,
    .compaction_begin = mapped_compaction_begin,
    .compaction_end = mapped_compaction_end,
    .flat_mark = mapped_flat_mark,
};
