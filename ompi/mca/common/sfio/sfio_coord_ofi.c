/*
 * sfio_coord_ofi: the coordination service across nodes, counters served
 * by a host rank's libfabric progress thread (see sfio_coord.h, backend
 * ofi).
 *
 * Messages (one RDM message each way, fi_inject):
 *   client -> host  {FETCH_ADD | LOAD | STORE | CAS | ORDERED | PUBLISH, service, slot,
 *                    from, ticket, value, expected (CAS)}
 *   host -> client  {REPLY, ticket, value (the old value; PUBLISH: the mark), err}
 * ORDERED is one rank's part of an ordered round: the host keeps it until
 * every rank's part has come, then advances the slot once by the total
 * and answers each rank with its start (the host's own rank included,
 * without a message).  PUBLISH says that a version is finished: the host
 * keeps it in the slot's publication queue (sfio_pubq) until the mark
 * reaches it and answers then, so a writer waits for earlier versions
 * without polling.
 * The host applies the operation on its progress thread with a C11 atomic
 * on the service's counters, which its own main thread also uses.  A
 * client waits for the reply of its ticket up to the service's timeout;
 * a reply that comes later is dropped.
 *
 * Atomics (counters atomic, or auto on a provider with native atomics;
 * every rank's provider offering them):
 * the host registers its counters as a memory region and broadcasts its
 * key and address at open; FETCH_ADD, LOAD, STORE and CAS become
 * fi_fetch_atomic (FI_SUM, FI_ATOMIC_READ, FI_ATOMIC_WRITE) and
 * fi_compare_atomic (FI_CSWAP) on it, whose completion the progress thread
 * hands to the waiting ticket like a reply.  A provider's atomics need not
 * be atomic with the CPU's: software providers (tcp;ofi_rxm, sockets)
 * apply them in the target's progress engine with plain loads and stores,
 * a NIC applies them from the device, and libfabric has no attribute that
 * promises coherence with CPU atomics.  So, with atomics, every
 * read-modify-write of a counter goes through the provider, the host's own
 * too: its operations and the advance of an ordered round are atomics to
 * itself (loopback).  What stays on the CPU is publish's store of a mark,
 * which nothing else writes (sfio_coord.h): a reader sees the old or the
 * new aligned word, nothing in between.
 *
 * Invariant: a service is in the host's table from the end of its open to
 * the start of its close, both collective, and every operation is
 * synchronous, so no request for a service arrives outside that time but
 * one whose client gave up (timeout): that one finds no service and is
 * dropped.  Ordered rounds are numbered by every rank alike; a part of a
 * later round abandons an incomplete one (whose callers time out), a part
 * of an earlier one is dropped, so a round never mixes parts of two.
 */
#include "ompi_config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "opal/util/output.h"

#include "sfio_coord.h"
#include "sfio_coord_int.h"
#include "sfio_fabric.h"
#include "sfio_ompio.h"   /* mca_common_sfio_output */
#include "sfio_pubq.h"

enum { MSG_FETCH_ADD = 1, MSG_LOAD, MSG_STORE, MSG_CAS, MSG_ORDERED, MSG_PUBLISH, MSG_REPLY,
       MSG_ADD,        /* a fetch-and-add nobody waits for: no reply */
       MSG_ENTER_ADD   /* a gate entered (slot, below expected) and a fetch-and-add of slot2;
                        * the reply's expected is the gate's old value */
};

typedef struct {
    uint32_t kind;
    uint32_t service;
    int32_t slot;
    int32_t from;     /* the client's rank in the service's communicator */
    uint64_t ticket;
    int64_t value;
    int32_t err;
    int32_t round;    /* ORDERED: the client's count of its ordered calls on the service */
    int64_t expected; /* CAS; ENTER_ADD: the gate's limit */
    int32_t slot2;    /* ENTER_ADD: the slot added to */
    int32_t unused;
} coord_msg_t;

/* A waiting publisher in a publication queue: its rank and ticket in one
 * tag (tickets count a process's requests and stay far below 2^48). */
#define PUB_TICKET_BITS 48
#define PUB_TICKET_MASK ((UINT64_C(1) << PUB_TICKET_BITS) - 1)

_Static_assert(sizeof(coord_msg_t) <= MCA_COMMON_SFIO_FABRIC_MSG_MAX, "message too large");

/* The host's side of one service. */
typedef struct hosted_t {
    struct hosted_t *next;
    uint32_t id;
    int n;                    /* ranks */
    int rank;                 /* the host's own */
    uint64_t *peer;           /* n fabric handles (replies) */
    int32_t round;            /* ordered round under way */
    int arrived;              /* its parts so far */
    int64_t *part;            /* n: bytes of each rank's part */
    uint64_t *part_ticket;    /* n */
    mca_common_sfio_pubq_t **pubq;   /* nslots, each made by the slot's first publish */
    bool atomic;              /* counters moved by fabric atomics (the region below) */
    void *mr;
    uint64_t key, base;       /* the region's key, address of slot 0 */
    int nslots;
    _Atomic int64_t slot[];
} hosted_t;

/* A client's request waiting for its reply. */
typedef struct waiter_t {
    struct waiter_t *next;
    uint64_t ticket;
    bool done;
    int err;
    int64_t value, value2;   /* value2: ENTER_ADD's gate */
    pthread_cond_t cond;
} waiter_t;

static struct {
    pthread_mutex_t lock;   /* hosted services, waiters */
    hosted_t *hosted;
    uint32_t next_id;
    waiter_t *waiters;
    uint64_t next_ticket;
} svc = { .lock = PTHREAD_MUTEX_INITIALIZER, .next_id = 1, .next_ticket = 1 };

/* The client's view of one service (the host's too). */
typedef struct {
    mca_common_sfio_coord_t super;
    struct ompi_communicator_t *comm;
    int rank, host, nslots;
    int32_t round;            /* ordered calls so far */
    uint32_t id;
    uint64_t host_peer;       /* the host itself too when atomic */
    bool atomic;
    uint64_t key, base;       /* atomic: the host's region */
    int64_t timeout_ms;
    hosted_t *hosted;         /* this rank is the host */
} coord_ofi_t;

static _Thread_local char why[256];

/* Every message of this file is of the counters' protocol. */
static int coord_send(uint64_t peer, const void *msg, size_t len, int64_t timeout_ms)
{
    return mca_common_sfio_fabric_send(peer, MCA_COMMON_SFIO_FABRIC_PROTO_COORD, msg, len,
                                       timeout_ms);
}

const char *mca_common_sfio_coord_why(void)
{
    return why;
}

/* ------------------------------------------------------------------ */
/* the progress thread's side                                          */
/* ------------------------------------------------------------------ */

static int64_t apply(_Atomic int64_t *cell, uint32_t kind, int64_t value, int64_t expected)
{
    switch (kind) {
    case MSG_FETCH_ADD:
    case MSG_ADD:       return atomic_fetch_add(cell, value);
    case MSG_STORE:     return atomic_exchange(cell, value);
    case MSG_CAS:
        (void) atomic_compare_exchange_strong(cell, &expected, value);
        return expected;
    default:            return atomic_load(cell);
    }
}

/* Enters the gate if it holds less than limit (adds 1), and only then
 * adds delta to cell; *gate_old_p: what the gate held.  Returns the
 * cell's old value (0 when the gate was not entered). */
static int64_t enter_add(_Atomic int64_t *gate, int64_t limit, _Atomic int64_t *cell,
                         int64_t delta, int64_t *gate_old_p)
{
    int64_t g = atomic_load(gate);
    while (g < limit && !atomic_compare_exchange_weak(gate, &g, g + 1)) {
    }
    *gate_old_p = g;
    return g < limit ? atomic_fetch_add(cell, delta) : 0;
}

static void serve(const coord_msg_t *m)
{
    coord_msg_t r = { .kind = MSG_REPLY, .service = m->service, .ticket = m->ticket };
    uint64_t to = 0;
    bool known = false;
    pthread_mutex_lock(&svc.lock);
    for (hosted_t *h = svc.hosted; NULL != h; h = h->next) {
        if (h->id == m->service && m->from >= 0 && m->from < h->n) {
            known = true;
            to = h->peer[m->from];
            if (m->slot < 0 || m->slot >= h->nslots ||
                (MSG_ENTER_ADD == m->kind && (m->slot2 < 0 || m->slot2 >= h->nslots))) {
                r.err = -EINVAL;
            } else if (MSG_ENTER_ADD == m->kind) {
                r.value = enter_add(&h->slot[m->slot], m->expected, &h->slot[m->slot2], m->value,
                                    &r.expected);
            } else {
                r.value = apply(&h->slot[m->slot], m->kind, m->value, m->expected);
            }
            break;
        }
    }
    pthread_mutex_unlock(&svc.lock);
    if (known && MSG_ADD != m->kind) {
        /* the client gives up after its timeout; so does this send */
        (void) coord_send(to, &r, sizeof(r), 1000);
    }
}

static void answer(const coord_msg_t *m);

/* The replies of a complete ordered round, each holding its offset in the
 * round until the slot has advanced. */
typedef struct {
    int n, self;
    uint64_t *to;
    coord_msg_t out[];
} round_out_t;

/* An ordered round that every rank has joined; svc.lock held.  Returns
 * its replies (NULL: no memory, the round's callers time out) and the
 * total in *total_p, and starts the next round. */
static round_out_t *round_complete(hosted_t *h, int64_t *total_p)
{
    int n = h->n;
    round_out_t *ro = malloc(sizeof(*ro) + (size_t) n * (sizeof(ro->out[0]) + sizeof(uint64_t)));
    h->arrived = 0;
    h->round += 1;
    if (NULL == ro) {
        return NULL;
    }
    ro->n = n;
    ro->self = h->rank;
    ro->to = (uint64_t *) &ro->out[n];
    memcpy(ro->to, h->peer, (size_t) n * sizeof(*ro->to));
    int64_t offset = 0;
    for (int r = 0; r < n; ++r) {
        ro->out[r] = (coord_msg_t) { .kind = MSG_REPLY, .service = h->id,
                                     .ticket = h->part_ticket[r], .value = offset };
        offset += h->part[r];
    }
    *total_p = offset;
    return ro;
}

/* The slot held start before the round: the replies go out, messages to
 * the others, the host's own directly. */
static void round_send(round_out_t *ro, int err, int64_t start)
{
    for (int r = 0; r < ro->n; ++r) {
        ro->out[r].value += start;
        ro->out[r].err = err;
        if (r == ro->self) {
            answer(&ro->out[r]);
        } else {
            (void) coord_send(ro->to[r], &ro->out[r], sizeof(ro->out[r]), 1000);
        }
    }
    free(ro);
}

static void round_advanced(uint64_t cookie, int err, int64_t old)
{
    round_send((round_out_t *) (uintptr_t) cookie, err, old);
}

/* Rank `from` joins the ordered round; when it is the last, the slot
 * advances by the round's total (outside the lock; with atomics by one to
 * the host itself, and the replies go out at its completion). */
static void round_join(hosted_t *h, int32_t round, int slot, int from, int64_t bytes,
                       uint64_t ticket)
{
    round_out_t *ro = NULL;
    int64_t total = 0;
    pthread_mutex_lock(&svc.lock);
    if (round - h->round < 0) {
        pthread_mutex_unlock(&svc.lock);   /* a round already given up */
        return;
    }
    if (round != h->round) {
        h->round = round;   /* the one under way was given up */
        h->arrived = 0;
    }
    h->part[from] = bytes;
    h->part_ticket[from] = ticket;
    if (++h->arrived == h->n) {
        ro = round_complete(h, &total);
    }
    pthread_mutex_unlock(&svc.lock);
    if (NULL == ro) {
        return;
    }
    if (!h->atomic) {
        round_send(ro, 0, atomic_fetch_add(&h->slot[slot], total));
        return;
    }
    int rc = mca_common_sfio_fabric_atomic(h->peer[h->rank], h->base + 8 * (uint64_t) slot,
                                           h->key, MCA_COMMON_SFIO_FABRIC_FETCH_ADD, total, 0,
                                           round_advanced, (uint64_t) (uintptr_t) ro, 1000);
    if (0 != rc) {
        round_send(ro, rc, 0);
    }
}

/* The hosted service m is for, when its rank and slot are in range. */
static hosted_t *hosted_of(const coord_msg_t *m)
{
    hosted_t *found = NULL;
    pthread_mutex_lock(&svc.lock);
    for (hosted_t *h = svc.hosted; NULL != h; h = h->next) {
        if (h->id == m->service && m->from >= 0 && m->from < h->n && m->slot >= 0 &&
            m->slot < h->nslots) {
            found = h;
            break;
        }
    }
    pthread_mutex_unlock(&svc.lock);
    return found;
}

static void serve_ordered(const coord_msg_t *m)
{
    hosted_t *found = hosted_of(m);
    /* the service stays while a round is open: its close is collective */
    if (NULL != found) {
        round_join(found, m->round, m->slot, m->from, m->value, m->ticket);
    }
}

/* Version `version` of h's sequencer is finished; `from` waits with
 * `ticket` (the host itself included).  Replies go out outside the lock
 * to every publisher the mark has reached. */
static void publish_join(hosted_t *h, int slot, int from, int64_t version, uint64_t ticket)
{
    uint64_t *released = NULL;
    size_t nreleased = 0;
    int err = 0;
    int64_t mark = 0;
    pthread_mutex_lock(&svc.lock);
    mca_common_sfio_pubq_t *q = h->pubq[slot];
    if (NULL == q) {
        q = calloc(1, sizeof(*q));
        if (NULL == q || 0 != mca_common_sfio_pubq_init(q, 4 * (size_t) h->n,
                                                        atomic_load(&h->slot[slot]))) {
            free(q);
            q = NULL;
            err = -ENOMEM;
        }
        h->pubq[slot] = q;
    }
    if (0 == err) {
        released = malloc((q->capacity + 1) * sizeof(*released));
        err = NULL == released ? -ENOMEM : 0;
    }
    if (0 == err) {
        uint64_t tag = ((uint64_t) from << PUB_TICKET_BITS) | (ticket & PUB_TICKET_MASK);
        int rc = mca_common_sfio_pubq_done(q, version, tag, released, &nreleased);
        atomic_store(&h->slot[slot], q->published);
        mark = q->published;
        if (1 == rc) {
            released[0] = tag;   /* already visible: answer at once */
            nreleased = 1;
        } else if (rc < 0) {
            err = rc;
        }
    }
    pthread_mutex_unlock(&svc.lock);
    if (0 != err) {
        coord_msg_t r = { .kind = MSG_REPLY, .service = h->id, .ticket = ticket, .err = err };
        if (from == h->rank) {
            answer(&r);
        } else {
            (void) coord_send(h->peer[from], &r, sizeof(r), 1000);
        }
    }
    for (size_t k = 0; k < nreleased; ++k) {
        int to = (int) (released[k] >> PUB_TICKET_BITS);
        coord_msg_t r = { .kind = MSG_REPLY, .service = h->id,
                          .ticket = released[k] & PUB_TICKET_MASK, .value = mark };
        if (to == h->rank) {
            answer(&r);
        } else {
            (void) coord_send(h->peer[to], &r, sizeof(r), 1000);
        }
    }
    free(released);
}

static void serve_publish(const coord_msg_t *m)
{
    hosted_t *found = hosted_of(m);
    /* the service stays while a publisher waits: its close is collective */
    if (NULL != found) {
        publish_join(found, m->slot, m->from, m->value, m->ticket);
    }
}

static void answer(const coord_msg_t *m)
{
    pthread_mutex_lock(&svc.lock);
    for (waiter_t *w = svc.waiters; NULL != w; w = w->next) {
        if (w->ticket == m->ticket) {
            w->done = true;
            w->err = m->err;
            w->value = m->value;
            w->value2 = m->expected;
            pthread_cond_signal(&w->cond);
            break;
        }
    }
    pthread_mutex_unlock(&svc.lock);
}

static void on_message(const void *buf, size_t len)
{
    coord_msg_t m;
    if (len != sizeof(m)) {
        return;
    }
    memcpy(&m, buf, sizeof(m));
    if (MSG_REPLY == m.kind) {
        answer(&m);
    } else if ((MSG_FETCH_ADD <= m.kind && m.kind <= MSG_CAS) || MSG_ADD == m.kind ||
               MSG_ENTER_ADD == m.kind) {
        serve(&m);
    } else if (MSG_ORDERED == m.kind) {
        serve_ordered(&m);
    } else if (MSG_PUBLISH == m.kind) {
        serve_publish(&m);
    }
}

/* ------------------------------------------------------------------ */
/* operations                                                          */
/* ------------------------------------------------------------------ */

static void waiter_add(waiter_t *w)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cond, &ca);
    pthread_condattr_destroy(&ca);
    w->done = false;
    pthread_mutex_lock(&svc.lock);
    w->ticket = svc.next_ticket++;
    w->next = svc.waiters;
    svc.waiters = w;
    pthread_mutex_unlock(&svc.lock);
}

/* Waits for w's reply (unless rc already failed) up to the timeout, takes
 * w off the list; returns 0 and the value, or an error. */
static int waiter_wait(coord_ofi_t *o, waiter_t *w, int rc, int64_t *value_p)
{
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += o->timeout_ms / 1000;
    deadline.tv_nsec += (o->timeout_ms % 1000) * 1000000;
    if (deadline.tv_nsec >= 1000000000) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&svc.lock);
    while (0 == rc && !w->done) {
        if (ETIMEDOUT == pthread_cond_timedwait(&w->cond, &svc.lock, &deadline) && !w->done) {
            rc = -ETIMEDOUT;
        }
    }
    for (waiter_t **pp = &svc.waiters; NULL != *pp; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    }
    pthread_mutex_unlock(&svc.lock);
    pthread_cond_destroy(&w->cond);
    if (0 == rc && 0 != w->err) {
        rc = w->err;
    }
    if (0 == rc) {
        *value_p = w->value;
    } else if (-ETIMEDOUT == rc) {
        opal_output_verbose(1, mca_common_sfio_output,
                            "sfio: coordination host rank %d did not answer within %lld ms",
                            o->host, (long long) o->timeout_ms);
    }
    return rc;
}

/* An atomic's completion, on the progress thread: the reply of its ticket. */
static void atomic_done(uint64_t ticket, int err, int64_t old)
{
    coord_msg_t r = { .kind = MSG_REPLY, .ticket = ticket, .value = old, .err = err };
    answer(&r);
}

static int request(coord_ofi_t *o, uint32_t kind, int slot, int64_t value, int64_t expected,
                   int64_t *old_p)
{
    if (o->atomic) {
        static const mca_common_sfio_fabric_aop_t aop[] = {
            [MSG_FETCH_ADD] = MCA_COMMON_SFIO_FABRIC_FETCH_ADD,
            [MSG_LOAD] = MCA_COMMON_SFIO_FABRIC_READ,
            [MSG_STORE] = MCA_COMMON_SFIO_FABRIC_SWAP,
            [MSG_CAS] = MCA_COMMON_SFIO_FABRIC_CSWAP,
        };
        if (slot < 0 || slot >= o->nslots) {
            return -EINVAL;
        }
        waiter_t w;
        waiter_add(&w);
        int rc = mca_common_sfio_fabric_atomic(o->host_peer, o->base + 8 * (uint64_t) slot, o->key,
                                               aop[kind], value, expected, atomic_done, w.ticket,
                                               o->timeout_ms);
        return waiter_wait(o, &w, rc, old_p);
    }
    if (NULL != o->hosted) {
        if (slot < 0 || slot >= o->hosted->nslots) {
            return -EINVAL;
        }
        *old_p = apply(&o->hosted->slot[slot], kind, value, expected);
        return 0;
    }
    waiter_t w;
    waiter_add(&w);
    coord_msg_t m = { .kind = kind, .service = o->id, .slot = slot, .from = o->rank,
                      .ticket = w.ticket, .value = value, .expected = expected };
    int rc = coord_send(o->host_peer, &m, sizeof(m), o->timeout_ms);
    return waiter_wait(o, &w, rc, old_p);
}

static int ofi_ordered_add(mca_common_sfio_coord_t *c, int slot, int64_t bytes, int64_t *start_p)
{
    coord_ofi_t *o = (coord_ofi_t *) c;
    waiter_t w;
    int rc = 0;
    if (slot < 0 || slot >= o->nslots) {
        return -EINVAL;
    }
    int32_t round = o->round++;
    waiter_add(&w);
    if (NULL != o->hosted) {
        round_join(o->hosted, round, slot, o->rank, bytes, w.ticket);
    } else {
        coord_msg_t m = { .kind = MSG_ORDERED, .service = o->id, .slot = slot, .from = o->rank,
                          .ticket = w.ticket, .value = bytes, .round = round };
        rc = coord_send(o->host_peer, &m, sizeof(m), o->timeout_ms);
    }
    return waiter_wait(o, &w, rc, start_p);
}

static int ofi_fetch_add(mca_common_sfio_coord_t *c, int slot, int64_t delta, int64_t *old_p)
{
    return request((coord_ofi_t *) c, MSG_FETCH_ADD, slot, delta, 0, old_p);
}

/* One message, no reply; with atomics, or on the host, as fetch_add. */
static int ofi_add(mca_common_sfio_coord_t *c, int slot, int64_t delta)
{
    coord_ofi_t *o = (coord_ofi_t *) c;
    if (o->atomic || NULL != o->hosted) {
        int64_t old = 0;
        return request(o, MSG_FETCH_ADD, slot, delta, 0, &old);
    }
    if (slot < 0 || slot >= o->nslots) {
        return -EINVAL;
    }
    coord_msg_t m = { .kind = MSG_ADD, .service = o->id, .slot = slot, .from = o->rank,
                      .value = delta };
    return coord_send(o->host_peer, &m, sizeof(m), o->timeout_ms);
}

/* One request and its reply; not offered with fabric atomics (two slots). */
static int ofi_enter_fetch_add(mca_common_sfio_coord_t *c, int gate, int64_t limit, int slot,
                               int64_t delta, int64_t *gate_old_p, int64_t *old_p)
{
    coord_ofi_t *o = (coord_ofi_t *) c;
    if (o->atomic) {
        return -ENOTSUP;
    }
    if (gate < 0 || gate >= o->nslots || slot < 0 || slot >= o->nslots) {
        return -EINVAL;
    }
    if (NULL != o->hosted) {
        *old_p = enter_add(&o->hosted->slot[gate], limit, &o->hosted->slot[slot], delta,
                           gate_old_p);
        return 0;
    }
    waiter_t w;
    waiter_add(&w);
    coord_msg_t m = { .kind = MSG_ENTER_ADD, .service = o->id, .slot = gate, .slot2 = slot,
                      .from = o->rank, .ticket = w.ticket, .value = delta, .expected = limit };
    int rc = coord_send(o->host_peer, &m, sizeof(m), o->timeout_ms);
    rc = waiter_wait(o, &w, rc, old_p);
    if (0 == rc) {
        *gate_old_p = w.value2;
    }
    return rc;
}

static int ofi_load(mca_common_sfio_coord_t *c, int slot, int64_t *value_p)
{
    return request((coord_ofi_t *) c, MSG_LOAD, slot, 0, 0, value_p);
}

static int ofi_store(mca_common_sfio_coord_t *c, int slot, int64_t value)
{
    int64_t old = 0;
    return request((coord_ofi_t *) c, MSG_STORE, slot, value, 0, &old);
}

static int ofi_compare_swap(mca_common_sfio_coord_t *c, int slot, int64_t expected,
                            int64_t desired, int64_t *old_p)
{
    return request((coord_ofi_t *) c, MSG_CAS, slot, desired, expected, old_p);
}

/* One message to the host, one reply when the mark reaches the version
 * (the host's own call joins its queue directly). */
static int ofi_publish(mca_common_sfio_coord_t *c, int slot, int64_t version)
{
    coord_ofi_t *o = (coord_ofi_t *) c;
    waiter_t w;
    int64_t mark = 0;
    int rc = 0;
    if (slot < 0 || slot >= o->nslots) {
        return -EINVAL;
    }
    waiter_add(&w);
    if (NULL != o->hosted) {
        publish_join(o->hosted, slot, o->rank, version, w.ticket);
    } else {
        coord_msg_t m = { .kind = MSG_PUBLISH, .service = o->id, .slot = slot, .from = o->rank,
                          .ticket = w.ticket, .value = version };
        rc = coord_send(o->host_peer, &m, sizeof(m), o->timeout_ms);
    }
    return waiter_wait(o, &w, rc, &mark);
}

static void hosted_free(hosted_t *h)
{
    for (int s = 0; NULL != h->pubq && s < h->nslots; ++s) {
        if (NULL != h->pubq[s]) {
            mca_common_sfio_pubq_fini(h->pubq[s]);
            free(h->pubq[s]);
        }
    }
    free(h->pubq);
    mca_common_sfio_fabric_mr_close(h->mr);
    free(h->peer);
    free(h->part);
    free(h->part_ticket);
    free(h);
}

static void hosted_remove(hosted_t *h)
{
    if (NULL == h) {
        return;
    }
    pthread_mutex_lock(&svc.lock);
    for (hosted_t **pp = &svc.hosted; NULL != *pp; pp = &(*pp)->next) {
        if (*pp == h) {
            *pp = h->next;
            break;
        }
    }
    pthread_mutex_unlock(&svc.lock);
    hosted_free(h);
}

/* Every operation is synchronous: once every rank is past its last one
 * the host may forget the service (a late request would be answered
 * with an error). */
static int ofi_close_quiesced(mca_common_sfio_coord_t *c)
{
    coord_ofi_t *o = (coord_ofi_t *) c;
    hosted_remove(o->hosted);
    free(o);
    return 0;
}

static int ofi_close(mca_common_sfio_coord_t *c)
{
    coord_ofi_t *o = (coord_ofi_t *) c;
    /* every rank's operations are done before the host forgets the service */
    int err = 0;
    int rc = mca_common_sfio_coord_agree(o->comm, &err);
    (void) ofi_close_quiesced(c);
    return rc;
}

static int ofi_host(const mca_common_sfio_coord_t *c)
{
    return ((const coord_ofi_t *) c)->host;
}

static const mca_common_sfio_coord_ops_t ofi_ops = {
    .name = "ofi", .fetch_add = ofi_fetch_add, .load = ofi_load, .store = ofi_store,
    .close = ofi_close, .close_quiesced = ofi_close_quiesced, .host = ofi_host,
    .ordered_add = ofi_ordered_add,
    .compare_swap = ofi_compare_swap, .publish = ofi_publish, .add = ofi_add,
    .enter_fetch_add = ofi_enter_fetch_add,
};

/* ------------------------------------------------------------------ */
/* open                                                                */
/* ------------------------------------------------------------------ */

/* The host's table of one service for n ranks, with their handles
 * (taken: freed with it) and nslots counters; NULL without memory. */
static hosted_t *hosted_new(int n, int rank, int nslots, uint64_t **peers_p)
{
    hosted_t *h = calloc(1, sizeof(*h) + (size_t) nslots * sizeof(h->slot[0]));
    if (NULL == h) {
        return NULL;
    }
    h->n = n;
    h->rank = rank;
    h->nslots = nslots;
    h->peer = *peers_p;
    *peers_p = NULL;
    h->part = calloc((size_t) n, sizeof(*h->part));
    h->part_ticket = calloc((size_t) n, sizeof(*h->part_ticket));
    h->pubq = calloc((size_t) nslots, sizeof(*h->pubq));
    if (NULL == h->part || NULL == h->part_ticket || NULL == h->pubq) {
        hosted_free(h);
        return NULL;
    }
    return h;
}

int mca_common_sfio_coord_ofi_open(struct ompi_communicator_t *comm,
                                   const mca_common_sfio_coord_config_t *cfg, int nslots,
                                   int local_err, mca_common_sfio_coord_t **coord_p)
{
    static _Atomic uint64_t opened;   /* this process's services (placement) */
    int n = ompi_comm_size(comm), rank = ompi_comm_rank(comm);
    int err = local_err;
    mca_common_sfio_coord_join_t j = { .opened = &opened, .shift = 0, .forced = cfg->host,
                                       .nvotes = 1 };
    /* every rank may become the host, which keeps every rank's handle */
    j.peers = calloc((size_t) n, sizeof(*j.peers));
    coord_ofi_t *o = calloc(1, sizeof(*o));
    why[0] = '\0';
    if (0 == err && (NULL == j.peers || NULL == o)) {
        err = -ENOMEM;
    }
    if (0 == err) {
        err = mca_common_sfio_coord_fabric(comm, cfg->provider, MCA_COMMON_SFIO_FABRIC_PROTO_COORD,
                                           on_message, NULL, why, sizeof(why));
    }
    /* atomics when every rank's endpoint has them, and for auto only
     * native ones: a software provider's atomic is a message each way
     * served by the host's progress thread like ours, and the host's own
     * operations would become round trips to itself instead of CPU
     * atomics.  The host may still fail to register its counters: then
     * messages, unless forced. */
    if (0 == err && MCA_COMMON_SFIO_COORD_COUNTERS_MESSAGE != cfg->counters) {
        bool native = false;
        j.votes[0] = mca_common_sfio_fabric_atomics(&native) ? 1 : 0;
        if (MCA_COMMON_SFIO_COORD_COUNTERS_AUTO == cfg->counters && !native) {
            j.votes[0] = 0;
        }
    }
    /* every rank has an endpoint and every rank's address, or nobody goes on */
    err = mca_common_sfio_coord_join(comm, &j, err);
    int atomic = (int) j.votes[0], host = j.host;
    if (0 == err && 0 == atomic && MCA_COMMON_SFIO_COORD_COUNTERS_ATOMIC == cfg->counters) {
        err = -ENOTSUP;
        snprintf(why, sizeof(why), "counters forced to atomic, but the fabric (%s) of some "
                 "rank offers no 64-bit atomics", mca_common_sfio_fabric_describe());
    }
    if (0 != err) {
        free(j.peers);
        free(o);
        return err;
    }

    /* the host's own handle too: its atomics go to itself */
    o->host_peer = j.peers[host];
    hosted_t *h = NULL;
    mca_common_sfio_coord_hostmsg_t hmsg = { 0 };
    if (rank == host) {
        h = hosted_new(n, rank, nslots, &j.peers);
        err = NULL == h ? -ENOMEM : 0;
        if (0 == err && atomic) {
            int mrc = mca_common_sfio_fabric_mr_reg((void *) h->slot,
                                                    (size_t) nslots * sizeof(h->slot[0]), &h->mr,
                                                    &h->key, &h->base);
            if (0 != mrc && MCA_COMMON_SFIO_COORD_COUNTERS_ATOMIC == cfg->counters) {
                err = mrc;
                snprintf(why, sizeof(why), "counters forced to atomic, but the host cannot "
                         "register them for remote atomics");
            }
            h->atomic = 0 == mrc;
            hmsg.word[0] = h->atomic;
            hmsg.word[1] = h->key;
            hmsg.word[2] = h->base;
        }
        if (0 == err) {
            pthread_mutex_lock(&svc.lock);
            h->id = svc.next_id++;
            h->next = svc.hosted;
            svc.hosted = h;
            pthread_mutex_unlock(&svc.lock);
            hmsg.id = h->id;
        } else if (NULL != h) {
            hosted_free(h);
            h = NULL;
        }
    }
    free(j.peers);
    /* The service id and, with atomics, the host's region.  Every rank
     * ends with the host's outcome (the join agreed on the rest), so no
     * agreement follows; the host listed the service before the bcast,
     * so no request can come before it. */
    err = mca_common_sfio_coord_announce(comm, host, &hmsg, err);
    if (0 != err) {
        hosted_remove(h);
        free(o);
        return err;
    }
    o->super.ops = &ofi_ops;
    o->comm = comm;
    o->rank = rank;
    o->host = host;
    o->nslots = nslots;
    o->id = hmsg.id;
    o->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 1;
    o->hosted = h;
    o->atomic = 0 != hmsg.word[0];
    o->key = hmsg.word[1];
    o->base = hmsg.word[2];
    static _Atomic int said = -1;   /* the counters' way, said when it changes */
    if (0 == rank && atomic_exchange(&said, (int) o->atomic) != (int) o->atomic) {
        opal_output_verbose(1, mca_common_sfio_output, "sfio: coordination counters: %s",
                            o->atomic ? "fabric atomics" : "messages to the host");
    }
    opal_output_verbose(10, mca_common_sfio_output,
                        "sfio: coordination service %u hosted by rank %d of %d, counters by %s",
                        o->id, host, n, o->atomic ? "atomics" : "messages");
    *coord_p = &o->super;
    return 0;
}
