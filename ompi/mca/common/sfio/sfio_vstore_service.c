/*
 * sfio_vstore_service: the store's shared state in the file's
 * coordination service (sfio_coord), for ranks on several nodes, where a
 * mapped page is not shared.  Versions come from a sequencer slot and are
 * published in order on a mark slot; compaction and data-path calls meet
 * in one gate slot.  What recovery needs after a crash (each rank's
 * heads, the folded mark, flat-file write times) is also written to the
 * coordination file, field by field with pwrite; not the record tails,
 * which would cost a request to the storage per version: recovery reads
 * each record log to its end and takes the longest run of versions whose
 * records are whole.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sfio_coord.h"
#include "sfio_posixio.h"
#include "sfio_vstore.h"
#include "sfio_vstore_int.h"

enum {
    SLOT_SEQ = 0,        /* last version handed out */
    SLOT_MARK,           /* published mark (changed only by publish) */
    SLOT_FOLDED,
    SLOT_ATTACHED,
    SLOT_COMPACTIONS,
    SLOT_GATE,           /* low 32 bits: ranks in a data-path call; high: compactor + 1 */
    SLOT_RANKS           /* then per rank: record head, log head */
};
#define SLOT_REC_HEAD(r) (SLOT_RANKS + 2 * (r))
#define SLOT_LOG_HEAD(r) (SLOT_RANKS + 2 * (r) + 1)
#define GATE_COMPACTOR ((int64_t) 1 << 32)

#define RANK_FIELD(r, field) \
    (offsetof(coord_t, rank) + (size_t) (r) * sizeof(coord_rank_t) + offsetof(coord_rank_t, field))

int mca_common_sfio_vstore_service_slots(int nranks)
{
    return SLOT_RANKS + 2 * nranks;
}

int sfio_vshared_put_field(mca_common_sfio_vstore_t *s, size_t offset, uint64_t value)
{
    ssize_t put = mca_common_sfio_posix_pwrite_full(s->coord_fd, &value, sizeof(value),
                                                    (off_t) offset);
    return put == (ssize_t) sizeof(value) ? 0 : put < 0 ? (int) put : -EIO;
}

/* A fetch-and-add whose old value nobody needs. */
static int add(mca_common_sfio_vstore_t *s, int slot, int64_t delta)
{
    int64_t old;
    return mca_common_sfio_coord_fetch_add(s->service, slot, delta, &old);
}

/* An add whose result nobody waits for, to a count whose readers poll
 * (the gate): one message where a fetch-and-add is a round trip. */
static int post(mca_common_sfio_vstore_t *s, int slot, int64_t delta)
{
    return mca_common_sfio_coord_add(s->service, slot, delta);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Backs off between polls of the service: each poll is a round trip. */
static void poll_pause(unsigned long polls)
{
    struct timespec ts = { 0, polls < 16 ? 20000 : polls < 256 ? 200000 : 1000000 };
    nanosleep(&ts, NULL);
}

static int svc_join(mca_common_sfio_vstore_t *s)
{
    (void) sfio_vshared_put_field(s, RANK_FIELD(s->rank, pid), (uint64_t) getpid());
    return add(s, SLOT_ATTACHED, 1);
}

static int svc_leave(mca_common_sfio_vstore_t *s)
{
    return add(s, SLOT_ATTACHED, -1);
}

static bool svc_all_left(mca_common_sfio_vstore_t *s)
{
    int64_t deadline = now_ms() + 5000;
    for (unsigned long polls = 0; now_ms() < deadline; ++polls) {
        int64_t n = 0;
        if (0 != mca_common_sfio_coord_load(s->service, SLOT_ATTACHED, &n)) {
            return false;
        }
        if (n <= 0) {
            return true;
        }
        poll_pause(polls);
    }
    return false;
}

static int svc_take_version(mca_common_sfio_vstore_t *s, uint64_t *version_p)
{
    int64_t old = 0;
    int rc = mca_common_sfio_coord_fetch_add(s->service, SLOT_SEQ, 1, &old);
    *version_p = (uint64_t) old + 1;
    return rc;
}

static int svc_publish(mca_common_sfio_vstore_t *s, uint64_t version)
{
    return mca_common_sfio_coord_publish(s->service, SLOT_MARK, (int64_t) version);
}

/* Nothing to write: recovery finds a service store's records to the end
 * of each record log (and the others, svc_records_tail). */
static int svc_records_end(mca_common_sfio_vstore_t *s)
{
    (void) s;
    return 0;
}

/* The folded mark moves only at a fold (every rank knows it then) and at
 * a compaction, which also counts itself: it is loaded again only when
 * the count moved (or was never seen). */
static int svc_marks(mca_common_sfio_vstore_t *s, sfio_vshared_marks_t *m)
{
    int64_t c = 0, p = 0, f = (int64_t) s->folded_seen;
    int rc = mca_common_sfio_coord_load(s->service, SLOT_COMPACTIONS, &c);
    if (0 == rc) rc = mca_common_sfio_coord_load(s->service, SLOT_MARK, &p);
    if (0 == rc && (!s->folded_known || (uint64_t) c != s->seen_compactions)) {
        rc = mca_common_sfio_coord_load(s->service, SLOT_FOLDED, &f);
    }
    *m = (sfio_vshared_marks_t) { .published = (uint64_t) p, .folded = (uint64_t) f,
                                  .compactions = (uint64_t) c };
    return rc;
}

static int svc_set_folded(mca_common_sfio_vstore_t *s, uint64_t folded)
{
    int rc = sfio_vshared_put_field(s, offsetof(coord_t, folded), folded);
    int src = mca_common_sfio_coord_store(s->service, SLOT_FOLDED, (int64_t) folded);
    return 0 != rc ? rc : src;
}

static int svc_heads(mca_common_sfio_vstore_t *s, int r, uint64_t *rec_head, uint64_t *log_head)
{
    int64_t rh = 0, lh = 0;
    int rc = mca_common_sfio_coord_load(s->service, SLOT_REC_HEAD(r), &rh);
    if (0 == rc) rc = mca_common_sfio_coord_load(s->service, SLOT_LOG_HEAD(r), &lh);
    *rec_head = (uint64_t) rh;
    *log_head = (uint64_t) lh;
    return rc;
}

static int svc_set_heads(mca_common_sfio_vstore_t *s, int r, uint64_t rec_head,
                         uint64_t log_head)
{
    int rc = sfio_vshared_put_field(s, RANK_FIELD(r, rec_head), rec_head);
    if (0 == rc) rc = sfio_vshared_put_field(s, RANK_FIELD(r, log_head), log_head);
    if (0 == rc) rc = mca_common_sfio_coord_store(s->service, SLOT_REC_HEAD(r), (int64_t) rec_head);
    if (0 == rc) rc = mca_common_sfio_coord_store(s->service, SLOT_LOG_HEAD(r), (int64_t) log_head);
    return rc;
}

/* Another rank's tail is not shared: its file ends where its last
 * append reached (-EAGAIN without the file open); the reader keeps the
 * whole records of published versions and stops at the first that is
 * not. */
static int svc_records_tail(mca_common_sfio_vstore_t *s, int r, int rec_fd, uint64_t *tail,
                            bool *exact)
{
    struct stat st;
    if (r == s->rank) {
        *tail = s->rec_tail;
        *exact = true;
        return 0;
    }
    if (rec_fd < 0) {
        return -EAGAIN;
    }
    /* fresh: the reader opened the file just now (close-to-open) */
    if (0 != fstat(rec_fd, &st)) {
        return -errno;
    }
    *tail = (uint64_t) st.st_size;
    *exact = false;
    return 0;
}

static int svc_count_compaction(mca_common_sfio_vstore_t *s)
{
    return add(s, SLOT_COMPACTIONS, 1);
}

static int svc_gate_enter(mca_common_sfio_vstore_t *s)
{
    int64_t deadline = now_ms() + s->service->timeout_ms;
    for (unsigned long polls = 0;; ++polls) {
        int64_t old = 0;
        int rc = mca_common_sfio_coord_fetch_add(s->service, SLOT_GATE, 1, &old);
        if (0 != rc || old < GATE_COMPACTOR) {
            return rc;
        }
        rc = post(s, SLOT_GATE, -1);
        if (0 != rc) {
            return rc;
        }
        if (now_ms() > deadline) {
            return -ETIMEDOUT;   /* a compaction that never ends */
        }
        poll_pause(polls);
    }
}

/* The gate and the next version in one request; while a compaction holds
 * the gate, neither is taken and the gate is entered as usual. */
static int svc_gate_enter_take(mca_common_sfio_vstore_t *s, uint64_t *version_p)
{
    int64_t gate_old = 0, old = 0;
    int rc = mca_common_sfio_coord_enter_fetch_add(s->service, SLOT_GATE, GATE_COMPACTOR, SLOT_SEQ,
                                                   1, &gate_old, &old);
    *version_p = 0;
    if (0 != rc) {
        return rc;
    }
    if (gate_old >= GATE_COMPACTOR) {
        return svc_gate_enter(s);
    }
    *version_p = (uint64_t) old + 1;
    return 0;
}

static void svc_gate_leave(mca_common_sfio_vstore_t *s)
{
    (void) post(s, SLOT_GATE, -1);
}

/* Takes the compactor's half of the gate, then waits until no rank is in
 * a data-path call.  A wait past the service's timeout gives the gate
 * back: the store is then bounded at the next collective point. */
static int svc_compaction_begin(mca_common_sfio_vstore_t *s)
{
    int64_t me = GATE_COMPACTOR * (s->rank + 1);
    int64_t deadline = now_ms() + s->service->timeout_ms;
    int rc = 0;
    for (unsigned long polls = 0;; ++polls) {
        int64_t cur = 0, old = 0;
        rc = mca_common_sfio_coord_load(s->service, SLOT_GATE, &cur);
        if (0 == rc && cur < GATE_COMPACTOR) {
            rc = mca_common_sfio_coord_compare_swap(s->service, SLOT_GATE, cur, cur + me, &old);
            if (0 == rc && old == cur) {
                break;
            }
        }
        if (0 != rc) {
            return rc;
        }
        if (now_ms() > deadline) {
            return -ETIMEDOUT;
        }
        poll_pause(polls);
    }
    for (unsigned long polls = 0;; ++polls) {
        int64_t cur = 0;
        rc = mca_common_sfio_coord_load(s->service, SLOT_GATE, &cur);
        if (0 != rc || cur == me) {
            break;
        }
        if (now_ms() > deadline) {
            rc = -ETIMEDOUT;
            break;
        }
        poll_pause(polls);
    }
    if (0 != rc) {
        (void) add(s, SLOT_GATE, -me);
    }
    return rc;
}

static void svc_compaction_end(mca_common_sfio_vstore_t *s)
{
    (void) post(s, SLOT_GATE, -GATE_COMPACTOR * (s->rank + 1));
}

static void svc_flat_mark(mca_common_sfio_vstore_t *s, bool writing, int64_t now_ns)
{
    if (writing) {
        (void) sfio_vshared_put_field(s, RANK_FIELD(s->rank, flat_writing_ns), (uint64_t) now_ns);
    } else {
        (void) sfio_vshared_put_field(s, RANK_FIELD(s->rank, flat_written_ns), (uint64_t) now_ns);
        (void) sfio_vshared_put_field(s, RANK_FIELD(s->rank, flat_writing_ns), 0);
    }
}

const sfio_vshared_ops_t sfio_vshared_service = {
    .name = "service",
    .shared_by = SFIO_SHARED_BY_SERVICE,
    .publish_needs_record = true,
    .records_remote = true,
    .join = svc_join,
    .leave = svc_leave,
    .all_left = svc_all_left,
    .take_version = svc_take_version,
    .publish = svc_publish,
    .records_end = svc_records_end,
    .marks = svc_marks,
    .set_folded = svc_set_folded,
    .heads = svc_heads,
    .set_heads = svc_set_heads,
    .records_tail = svc_records_tail,
    .count_compaction = svc_count_compaction,
    .gate_enter = svc_gate_enter,
    .gate_enter_take = svc_gate_enter_take,
    .gate_leave = svc_gate_leave,
    .compaction_begin = svc_compaction_begin,
    .compaction_end = svc_compaction_end,
    .flat_mark = svc_flat_mark,
};
