/*
 * sfio_locksvc: the list-lock manager of a file across nodes (see header).
 */
#include "ompi_config.h"

#include <inttypes.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "opal/util/output.h"

#include "sfio_coord_int.h"
#include "sfio_fabric.h"
#include "sfio_lockmsg.h"
#include "sfio_lockq.h"
#include "sfio_locksvc.h"
#include "sfio_ompio.h"   /* mca_common_sfio_output */
#include "sfio_util.h"

/* What precedes every message of the protocol. */
typedef struct {
    uint32_t service;
    uint32_t kind;
    int32_t from;       /* the sender's rank (the host's for host -> client) */
    uint32_t nonce;     /* the sender's nonce (client -> host) */
} frame_t;

/* The frame's kind says which side a message is for.  To the host:
 * KIND_LOCK (a REQUEST or RELEASE), KIND_SYNC (a RELEASE that the host
 * answers: GRANT released, ERROR the list had been taken away; sent after
 * a hold long enough that the host may have dropped the client
 * meanwhile), KIND_PONG.  To a client: KIND_ANSWER (a GRANT or ERROR),
 * KIND_PING. */
enum { KIND_LOCK = 1, KIND_PING, KIND_PONG, KIND_SYNC, KIND_ANSWER };

/* A client's live lists, as the host tracks them for probing; a process
 * has at most one list in flight per service, plus one whose RELEASE it
 * sent and the host has not seen yet. */
#define LIVE_MAX 2

typedef struct {
    uint64_t request[LIVE_MAX];
    int64_t since[LIVE_MAX];
    int nlive;
    int64_t last_heard;
    int64_t ping_sent;      /* 0: no probe outstanding */
    bool dead;
    /* a list too long for one message, while its PARTs arrive */
    uint64_t asm_request;   /* 0: none */
    uint32_t asm_total, asm_have;
    mca_common_sfio_lockq_range_t *asm_ranges;
} member_t;

/* The host's side of one service. */
typedef struct hosted_t {
    struct hosted_t *next;
    uint32_t id;
    int n, rank;
    int64_t probe_ms, dead_ms;
    uint64_t *peer;             /* n */
    uint32_t *nonce;            /* n */
    member_t *member;           /* n */
    mca_common_sfio_lockq_t *q;
    mca_common_sfio_lockq_grants_t grants;
    mca_common_sfio_lockq_range_t *ranges;   /* decode buffer */
    size_t max_ranges;                       /* ranges of one message */
    size_t list_max;                         /* ranges of one list */
    struct mca_common_sfio_locksvc_t *self;  /* the host's own client */
} hosted_t;

struct mca_common_sfio_locksvc_t {
    struct mca_common_sfio_locksvc_t *next;
    struct ompi_communicator_t *comm;
    uint32_t id, nonce;
    int rank, host;
    uint64_t host_peer;
    int64_t timeout_ms;
    int64_t sync_after_ms;      /* holds at least this long end with a KIND_SYNC release */
    int64_t asked_at;           /* when the held list was asked for */
    size_t max_ranges;          /* ranges of one message */
    size_t list_max;            /* ranges of one list (sent in PARTs past max_ranges) */
    uint32_t seq;
    hosted_t *hosted;           /* this rank is the host */
    /* the list being waited for: ls.lock */
    uint64_t want;
    int answer;                 /* 0: none yet, 1: granted, < 0: refused */
    bool lost;                  /* the host dropped this rank */
    uint64_t held;              /* 0: nothing held */
    pthread_cond_t cond;
    mca_common_sfio_lockq_range_t *ranges;   /* scratch of acquire (ranges_cap) */
    size_t ranges_cap;
    unsigned char *buf;         /* frame + encoded request */
    size_t bufcap;
};

/* A message to send once ls.lock is dropped (all small). */
typedef struct {
    uint64_t peer;
    size_t len;
    unsigned char bytes[MCA_COMMON_SFIO_FABRIC_MSG_MAX];
} out_t;

typedef struct {
    out_t *m;
    size_t count, cap;
} outbox_t;

static struct {
    pthread_mutex_t lock;
    hosted_t *hosted;
    mca_common_sfio_locksvc_t *clients;
    _Atomic uint64_t requests, timeouts, dropped;
} ls = { .lock = PTHREAD_MUTEX_INITIALIZER };

static char why[256];

const char *mca_common_sfio_locksvc_why(void)
{
    return why;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ */
/* messages                                                            */
/* ------------------------------------------------------------------ */

/* Frame + the host's answer into out; 0 or a negative errno. */
static int put_answer(out_t *o, uint64_t peer, uint32_t service, int from,
                      const mca_common_sfio_lockmsg_t *m)
{
    frame_t f = { .service = service, .kind = KIND_ANSWER, .from = from };
    size_t len = 0;
    memcpy(o->bytes, &f, sizeof(f));
    int rc = mca_common_sfio_lockmsg_encode(m, o->bytes + sizeof(f), sizeof(o->bytes) - sizeof(f),
                                            &len);
    o->peer = peer;
    o->len = sizeof(f) + len;
    return rc;
}

static out_t *outbox_next(outbox_t *box)
{
    if (box->count == box->cap) {
        size_t cap = box->cap ? 2 * box->cap : 8;
        out_t *m = realloc(box->m, cap * sizeof(*m));
        if (NULL == m) {
            return NULL;   /* the message is lost: its waiter times out */
        }
        box->m = m;
        box->cap = cap;
    }
    return &box->m[box->count++];
}

/* Sends and frees what was queued under the lock. */
static void outbox_flush(outbox_t *box)
{
    for (size_t i = 0; i < box->count; ++i) {
        /* a reply that cannot go within a second is dropped: its client
         * times out */
        (void) mca_common_sfio_fabric_send(box->m[i].peer, MCA_COMMON_SFIO_FABRIC_PROTO_LOCK,
                                                 box->m[i].bytes, box->m[i].len, 1000);
    }
    free(box->m);
    box->m = NULL;
    box->count = box->cap = 0;
}

/* ------------------------------------------------------------------ */
/* the host's side (ls.lock held)                                      */
/* ------------------------------------------------------------------ */

/* The answer for the client view c (this process's own): sets it and
 * wakes the waiter.  ls.lock held. */
static void deliver(mca_common_sfio_locksvc_t *c, uint64_t request, int answer)
{
    if (NULL == c) {
        return;
    }
    if (-ENOLCK == answer) {
        c->lost = true;
    }
    if (0 != c->want && c->want == request) {
        c->answer = answer;
        pthread_cond_broadcast(&c->cond);
    }
}

/* Sends (or delivers) to rank `to` of h a GRANT (err 0) or an ERROR. */
static void reply(hosted_t *h, outbox_t *box, int to, uint64_t request, int err)
{
    if (to == h->rank) {
        deliver(h->self, request, 0 == err ? 1 : err);
        return;
    }
    mca_common_sfio_lockmsg_t m = {
        .type = 0 == err ? MCA_COMMON_SFIO_LOCKMSG_GRANT : MCA_COMMON_SFIO_LOCKMSG_ERROR,
        .client = (uint64_t) to, .request = request, .error = err,
    };
    out_t *o = outbox_next(box);
    if (NULL != o && 0 != put_answer(o, h->peer[to], h->id, h->rank, &m)) {
        box->count--;
    }
}

static void send_grants(hosted_t *h, outbox_t *box)
{
    for (size_t i = 0; i < h->grants.count; ++i) {
        reply(h, box, (int) h->grants.grants[i].client, h->grants.grants[i].request, 0);
    }
    h->grants.count = 0;
}

static void live_add(member_t *m, uint64_t request)
{
    if (m->nlive < LIVE_MAX) {
        m->request[m->nlive] = request;
        m->since[m->nlive] = now_ms();
        m->nlive++;
    }
}

static void live_remove(member_t *m, uint64_t request)
{
    for (int i = 0; i < m->nlive; ++i) {
        if (m->request[i] == request) {
            m->request[i] = m->request[m->nlive - 1];
            m->since[i] = m->since[m->nlive - 1];
            m->nlive--;
            return;
        }
    }
}

static void host_submit(hosted_t *h, outbox_t *box, int from, uint64_t request,
                        const mca_common_sfio_lockq_range_t *ranges, size_t nranges)
{
    member_t *m = &h->member[from];
    if (m->dead) {
        reply(h, box, from, request, -ENOLCK);
        return;
    }
    mca_common_sfio_lockq_request_t r = {
        .client = (uint64_t) from, .request = request, .ranges = ranges, .nranges = nranges,
    };
    int rc = mca_common_sfio_lockq_submit(h->q, &r, &h->grants);
    if (0 != rc) {
        reply(h, box, from, request, rc);
        return;
    }
    live_add(m, request);
    send_grants(h, box);
}

/* Forgets a list being assembled; a large buffer is not kept. */
static void asm_reset(member_t *m)
{
    m->asm_request = 0;
    m->asm_total = m->asm_have = 0;
    free(m->asm_ranges);
    m->asm_ranges = NULL;
}

/* One PART of a long list: kept until all its ranges are here, then the
 * list joins the queue as one request.  A PART of another request starts
 * over (the client gave the earlier list up: timeout, or a failed send). */
static void host_part(hosted_t *h, outbox_t *box, int from, const mca_common_sfio_lockmsg_t *msg)
{
    member_t *m = &h->member[from];
    if (m->dead) {
        if (0 == msg->first) {
            reply(h, box, from, msg->request, -ENOLCK);   /* once per list */
        }
        return;
    }
    if (m->asm_request != msg->request) {
        asm_reset(m);
        if (msg->total > h->list_max) {
            if (0 == msg->first) {
                reply(h, box, from, msg->request, -E2BIG);
            }
            return;
        }
        m->asm_ranges = calloc(msg->total, sizeof(*m->asm_ranges));
        if (NULL == m->asm_ranges) {
            reply(h, box, from, msg->request, -ENOMEM);
            return;
        }
        m->asm_request = msg->request;
        m->asm_total = msg->total;
    }
    if (msg->total != m->asm_total || m->asm_have > m->asm_total - msg->nranges) {
        asm_reset(m);
        reply(h, box, from, msg->request, -EPROTO);
        return;
    }
    memcpy(m->asm_ranges + msg->first, msg->ranges, msg->nranges * sizeof(*msg->ranges));
    m->asm_have += (uint32_t) msg->nranges;
    if (m->asm_have < m->asm_total) {
        return;
    }
    /* parts that overlapped left holes (empty ranges) or disorder */
    if (0 != mca_common_sfio_lockq_ranges_verify(m->asm_ranges, m->asm_total)) {
        reply(h, box, from, msg->request, -EPROTO);
    } else {
        host_submit(h, box, from, msg->request, m->asm_ranges, m->asm_total);
    }
    asm_reset(m);
}

static void host_release(hosted_t *h, outbox_t *box, int from, uint64_t request, bool answer)
{
    member_t *m = &h->member[from];
    if (m->dead) {
        reply(h, box, from, request, -ENOLCK);
        return;
    }
    if (m->asm_request == request) {
        asm_reset(m);   /* withdrawn before all its parts arrived */
    }
    /* -ENOENT: a list the client withdrew twice (timeout races its grant) */
    int rc = mca_common_sfio_lockq_release(h->q, (uint64_t) from, request, &h->grants);
    if (0 == rc) {
        live_remove(m, request);
        send_grants(h, box);
    }
    if (answer) {
        reply(h, box, from, request, rc);
    }
}

/* Takes a silent client's lists away and refuses it from now on; the
 * client is told (it may only be frozen, and learns it when it wakes). */
static void host_drop(hosted_t *h, outbox_t *box, int who)
{
    member_t *m = &h->member[who];
    if (0 != mca_common_sfio_lockq_drop_client(h->q, (uint64_t) who, &h->grants)) {
        return;   /* no memory: tried again at the next tick */
    }
    opal_output_verbose(1, mca_common_sfio_output,
                        "sfio: lock service %u: rank %d holds locks and answered no probe "
                        "within %lld ms: its locks are released",
                        h->id, who, (long long) h->dead_ms);
    atomic_fetch_add(&ls.dropped, 1);
    m->dead = true;
    asm_reset(m);
    for (int i = 0; i < m->nlive; ++i) {
        reply(h, box, who, m->request[i], -ENOLCK);
    }
    m->nlive = 0;
    send_grants(h, box);
}

static hosted_t *hosted_find(uint32_t id)
{
    for (hosted_t *h = ls.hosted; NULL != h; h = h->next) {
        if (h->id == id) {
            return h;
        }
    }
    return NULL;
}

static mca_common_sfio_locksvc_t *client_find(uint32_t id)
{
    for (mca_common_sfio_locksvc_t *c = ls.clients; NULL != c; c = c->next) {
        if (c->id == id) {
            return c;
        }
    }
    return NULL;
}

/* A message for a hosted service: the sender must be a member with its
 * nonce, and name itself as the client. */
static void host_message(const frame_t *f, const unsigned char *body, size_t len, outbox_t *box)
{
    hosted_t *h = hosted_find(f->service);
    if (NULL == h || f->from < 0 || f->from >= h->n || f->from == h->rank ||
        f->nonce != h->nonce[f->from]) {
        return;   /* another open's, or not a member: dropped */
    }
    member_t *m = &h->member[f->from];
    m->last_heard = now_ms();
    m->ping_sent = 0;
    if (KIND_PONG == f->kind) {
        return;
    }
    mca_common_sfio_lockmsg_t msg;
    if ((KIND_LOCK != f->kind && KIND_SYNC != f->kind) ||
        0 != mca_common_sfio_lockmsg_decode(body, len, h->ranges, h->max_ranges, &msg) ||
        msg.client != (uint64_t) f->from || (uint32_t) (msg.request >> 32) != f->nonce) {
        return;
    }
    if (MCA_COMMON_SFIO_LOCKMSG_REQUEST == msg.type) {
        host_submit(h, box, f->from, msg.request, msg.ranges, msg.nranges);
    } else if (MCA_COMMON_SFIO_LOCKMSG_PART == msg.type && KIND_LOCK == f->kind) {
        host_part(h, box, f->from, &msg);
    } else if (MCA_COMMON_SFIO_LOCKMSG_RELEASE == msg.type) {
        host_release(h, box, f->from, msg.request, KIND_SYNC == f->kind);
    }
}

/* A message for this process as a client: an answer, or a probe. */
static void client_message(const frame_t *f, const unsigned char *body, size_t len, outbox_t *box)
{
    mca_common_sfio_locksvc_t *c = client_find(f->service);
    if (NULL == c || f->from != c->host) {
        return;
    }
    if (KIND_PING == f->kind) {
        frame_t pong = { .service = c->id, .kind = KIND_PONG, .from = c->rank, .nonce = c->nonce };
        out_t *o = outbox_next(box);
        if (NULL != o) {
            o->peer = c->host_peer;
            o->len = sizeof(pong);
            memcpy(o->bytes, &pong, sizeof(pong));
        }
        return;
    }
    mca_common_sfio_lockmsg_t msg;
    if (KIND_ANSWER != f->kind || 0 != mca_common_sfio_lockmsg_decode(body, len, NULL, 0, &msg) ||
        msg.client != (uint64_t) c->rank) {
        return;
    }
    if (MCA_COMMON_SFIO_LOCKMSG_GRANT == msg.type) {
        deliver(c, msg.request, 1);
    } else if (MCA_COMMON_SFIO_LOCKMSG_ERROR == msg.type) {
        deliver(c, msg.request, msg.error < 0 ? msg.error : -EIO);
    }
}

/* The fabric's handler of PROTO_LOCK (progress thread).  A service id is
 * either hosted here or a client's here (or both, for the host's own
 * rank); the kind says which side a message is for. */
static void on_message(const void *buf, size_t len)
{
    frame_t f;
    outbox_t box = { 0 };
    if (len < sizeof(f)) {
        return;
    }
    memcpy(&f, buf, sizeof(f));
    const unsigned char *body = (const unsigned char *) buf + sizeof(f);
    size_t blen = len - sizeof(f);
    pthread_mutex_lock(&ls.lock);
    if (KIND_ANSWER == f.kind || KIND_PING == f.kind) {
        client_message(&f, body, blen, &box);
    } else {
        host_message(&f, body, blen, &box);
    }
    pthread_mutex_unlock(&ls.lock);
    outbox_flush(&box);
}

/* The fabric's tick (progress thread): probes the holders while lists
 * wait, drops the holders that stay silent. */
static void on_tick(int64_t now)
{
    outbox_t box = { 0 };
    pthread_mutex_lock(&ls.lock);
    for (hosted_t *h = ls.hosted; NULL != h; h = h->next) {
        bool waiting = false;
        for (int r = 0; r < h->n && !waiting; ++r) {
            member_t *m = &h->member[r];
            for (int i = 0; i < m->nlive && !waiting; ++i) {
                mca_common_sfio_lockq_state_t st;
                waiting = now - m->since[i] >= h->probe_ms &&
                          0 == mca_common_sfio_lockq_state(h->q, (uint64_t) r, m->request[i], &st) &&
                          MCA_COMMON_SFIO_LOCKQ_QUEUED == st;
            }
        }
        for (int r = 0; r < h->n; ++r) {
            member_t *m = &h->member[r];
            if (r == h->rank || m->dead || 0 == m->nlive) {
                continue;
            }
            if (0 != m->ping_sent && now - m->ping_sent >= h->dead_ms) {
                host_drop(h, &box, r);
            } else if (waiting && 0 == m->ping_sent && now - m->last_heard >= h->probe_ms) {
                frame_t ping = { .service = h->id, .kind = KIND_PING, .from = h->rank };
                out_t *o = outbox_next(&box);
                if (NULL != o) {
                    o->peer = h->peer[r];
                    o->len = sizeof(ping);
                    memcpy(o->bytes, &ping, sizeof(ping));
                    m->ping_sent = now;
                }
            }
        }
    }
    pthread_mutex_unlock(&ls.lock);
    outbox_flush(&box);
}

/* ------------------------------------------------------------------ */
/* the client's operations                                             */
/* ------------------------------------------------------------------ */

size_t mca_common_sfio_locksvc_max_ranges(const mca_common_sfio_locksvc_t *svc)
{
    return svc->list_max;
}

int mca_common_sfio_locksvc_host(const mca_common_sfio_locksvc_t *svc)
{
    return svc->host;
}

void mca_common_sfio_locksvc_stats(mca_common_sfio_locksvc_stats_t *stats_p)
{
    stats_p->requests = atomic_load(&ls.requests);
    stats_p->timeouts = atomic_load(&ls.timeouts);
    stats_p->dropped = atomic_load(&ls.dropped);
}

/* Encodes m behind the frame already in svc->buf and sends it. */
static int send_one(mca_common_sfio_locksvc_t *svc, const mca_common_sfio_lockmsg_t *m)
{
    size_t len = 0;
    const size_t head = sizeof(frame_t);
    int rc = mca_common_sfio_lockmsg_encode(m, svc->buf + head, svc->bufcap - head, &len);
    if (0 == rc) {
        rc = mca_common_sfio_fabric_send(svc->host_peer, MCA_COMMON_SFIO_FABRIC_PROTO_LOCK,
                                         svc->buf, head + len, svc->timeout_ms);
    }
    return rc;
}

/* Sends a REQUEST or RELEASE of svc's (or hands it to the queue when this
 * rank is the host); kind KIND_SYNC asks for an answer to a RELEASE.
 * ls.lock not held. */
static int to_host(mca_common_sfio_locksvc_t *svc, const mca_common_sfio_lockmsg_t *m,
                   uint32_t kind)
{
    if (NULL != svc->hosted) {
        outbox_t box = { 0 };
        pthread_mutex_lock(&ls.lock);
        if (MCA_COMMON_SFIO_LOCKMSG_REQUEST == m->type) {
            host_submit(svc->hosted, &box, svc->rank, m->request, m->ranges, m->nranges);
        } else {
            host_release(svc->hosted, &box, svc->rank, m->request, KIND_SYNC == kind);
        }
        pthread_mutex_unlock(&ls.lock);
        outbox_flush(&box);
        return 0;
    }
    frame_t f = { .service = svc->id, .kind = kind, .from = svc->rank, .nonce = svc->nonce };
    memcpy(svc->buf, &f, sizeof(f));
    if (MCA_COMMON_SFIO_LOCKMSG_REQUEST != m->type || m->nranges <= svc->max_ranges) {
        return send_one(svc, m);
    }
    /* longer than one message: PARTs of at most max_ranges ranges */
    int rc = 0;
    for (size_t first = 0; 0 == rc && first < m->nranges; first += svc->max_ranges) {
        size_t n = m->nranges - first < svc->max_ranges ? m->nranges - first : svc->max_ranges;
        mca_common_sfio_lockmsg_t part = {
            .type = MCA_COMMON_SFIO_LOCKMSG_PART, .client = m->client, .request = m->request,
            .ranges = m->ranges + first, .nranges = n, .total = (uint32_t) m->nranges,
            .first = (uint32_t) first,
        };
        rc = send_one(svc, &part);
    }
    return rc;
}

static void withdraw(mca_common_sfio_locksvc_t *svc, uint64_t request)
{
    mca_common_sfio_lockmsg_t m = {
        .type = MCA_COMMON_SFIO_LOCKMSG_RELEASE, .client = (uint64_t) svc->rank, .request = request,
    };
    (void) to_host(svc, &m, KIND_LOCK);
}

/* Waits for the answer to svc->want until the timeout; 0 (granted or
 * released), the refusal, or -ETIMEDOUT.  rc: the send's outcome. */
static int wait_answer(mca_common_sfio_locksvc_t *svc, int rc)
{
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += svc->timeout_ms / 1000;
    deadline.tv_nsec += (svc->timeout_ms % 1000) * 1000000;
    if (deadline.tv_nsec >= 1000000000) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&ls.lock);
    while (0 == rc && 0 == svc->answer) {
        if (ETIMEDOUT == pthread_cond_timedwait(&svc->cond, &ls.lock, &deadline) &&
            0 == svc->answer) {
            rc = -ETIMEDOUT;
        }
    }
    if (0 == rc) {
        rc = 1 == svc->answer ? 0 : svc->answer;
    }
    svc->want = 0;
    pthread_mutex_unlock(&ls.lock);
    return rc;
}

/* Announces that the answer to request is awaited; false when the host
 * already dropped this rank. */
static bool expect(mca_common_sfio_locksvc_t *svc, uint64_t request)
{
    pthread_mutex_lock(&ls.lock);
    bool lost = svc->lost;
    svc->want = lost ? 0 : request;
    svc->answer = 0;
    pthread_mutex_unlock(&ls.lock);
    return !lost;
}

int mca_common_sfio_locksvc_acquire(mca_common_sfio_locksvc_t *svc,
                                    const mca_common_sfio_rangelist_t *locks, bool exclusive)
{
    if (0 == locks->count) {
        return 0;
    }
    if (locks->count > svc->list_max || locks->count > UINT32_MAX) {
        return -EINVAL;
    }
    if (locks->count > svc->ranges_cap) {
        void *p = realloc(svc->ranges, locks->count * sizeof(*svc->ranges));
        if (NULL == p) {
            return -ENOMEM;
        }
        svc->ranges = p;
        svc->ranges_cap = locks->count;
    }
    for (size_t i = 0; i < locks->count; ++i) {
        uint64_t off = locks->ranges[i].offset, len = locks->ranges[i].length;
        /* "to the end of the file" is every byte from off on */
        svc->ranges[i] = (mca_common_sfio_lockq_range_t) {
            .offset = off, .length = len > UINT64_MAX - off ? UINT64_MAX - off : len,
            .mode = exclusive ? MCA_COMMON_SFIO_LOCKQ_EXCLUSIVE : MCA_COMMON_SFIO_LOCKQ_SHARED,
        };
    }
    uint64_t request = ((uint64_t) svc->nonce << 32) | ++svc->seq;
    mca_common_sfio_lockmsg_t m = {
        .type = MCA_COMMON_SFIO_LOCKMSG_REQUEST, .client = (uint64_t) svc->rank,
        .request = request, .ranges = svc->ranges, .nranges = locks->count,
    };
    atomic_fetch_add(&ls.requests, 1);
    if (!expect(svc, request)) {
        return -ENOLCK;
    }
    svc->asked_at = now_ms();
    int rc = wait_answer(svc, to_host(svc, &m, KIND_LOCK));
    if (0 == rc) {
        svc->held = request;
    } else if (-ETIMEDOUT == rc) {
        /* a grant may be on its way: the release withdraws or releases */
        withdraw(svc, request);
        atomic_fetch_add(&ls.timeouts, 1);
        opal_output_verbose(1, mca_common_sfio_output,
                            "sfio: lock list of %zu ranges not granted by rank %d within %lld ms",
                            locks->count, svc->host, (long long) svc->timeout_ms);
    }
    return rc;
}

int mca_common_sfio_locksvc_release(mca_common_sfio_locksvc_t *svc)
{
    uint64_t request = svc->held;
    if (0 == request) {
        return 0;
    }
    svc->held = 0;
    /* A short hold cannot have been dropped (the host drops a holder only
     * after probe_ms + dead_ms of silence since its request): the release
     * goes unanswered.  A long one (a slow access, or a process frozen
     * meanwhile) waits for the host's word, so a lost list is reported by
     * the access it covered. */
    if (now_ms() - svc->asked_at < svc->sync_after_ms) {
        withdraw(svc, request);
        return 0;
    }
    if (!expect(svc, request)) {
        withdraw(svc, request);   /* the host answers -ENOLCK; nobody waits */
        return -ENOLCK;
    }
    mca_common_sfio_lockmsg_t m = {
        .type = MCA_COMMON_SFIO_LOCKMSG_RELEASE, .client = (uint64_t) svc->rank, .request = request,
    };
    return wait_answer(svc, to_host(svc, &m, KIND_SYNC));
}

/* ------------------------------------------------------------------ */
/* open and close                                                      */
/* ------------------------------------------------------------------ */

/* The longest list whose REQUEST fits a message behind the frame. */
static size_t ranges_fitting(size_t msg_max)
{
    size_t lo = 1, hi = msg_max;
    if (mca_common_sfio_lockmsg_max_size(1) + sizeof(frame_t) > msg_max) {
        return 0;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (mca_common_sfio_lockmsg_max_size(mid) + sizeof(frame_t) <= msg_max) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

static void hosted_free(hosted_t *h)
{
    if (NULL == h) {
        return;
    }
    mca_common_sfio_lockq_destroy(h->q);
    mca_common_sfio_lockq_grants_destroy(&h->grants);
    free(h->peer);
    free(h->nonce);
    for (int r = 0; NULL != h->member && r < h->n; ++r) {
        free(h->member[r].asm_ranges);
    }
    free(h->member);
    free(h->ranges);
    free(h);
}

static void svc_free(mca_common_sfio_locksvc_t *svc)
{
    if (NULL == svc) {
        return;
    }
    pthread_cond_destroy(&svc->cond);
    free(svc->ranges);
    free(svc->buf);
    free(svc);
}

/* Takes h and svc off the tables (either may be NULL or absent). */
static void unlist(hosted_t *h, mca_common_sfio_locksvc_t *svc)
{
    pthread_mutex_lock(&ls.lock);
    for (hosted_t **pp = &ls.hosted; NULL != h && NULL != *pp; pp = &(*pp)->next) {
        if (*pp == h) {
            *pp = h->next;
            break;
        }
    }
    for (mca_common_sfio_locksvc_t **pp = &ls.clients; NULL != svc && NULL != *pp;
         pp = &(*pp)->next) {
        if (*pp == svc) {
            *pp = svc->next;
            break;
        }
    }
    pthread_mutex_unlock(&ls.lock);
}


/* Rank r's nonce in the open whose host drew seed: a new seed per open
 * keeps another open's messages out. */
static uint32_t nonce_of(uint64_t seed, int r)
{
    uint64_t z = seed + (uint64_t) (r + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    return (uint32_t) (z >> 32);
}

/* The host's table for n members with their handles and the nonces of
 * seed; NULL without memory. */
static hosted_t *hosted_new(const mca_common_sfio_locksvc_config_t *cfg, int n, int rank,
                            size_t max_ranges, size_t list_max, const uint64_t *peers,
                            uint64_t seed, int *err_p)
{
    hosted_t *h = calloc(1, sizeof(*h));
    mca_common_sfio_lockq_limits_t limits = {
        .max_clients = (size_t) n, .max_lists_per_client = LIVE_MAX,
        .max_ranges_per_client = LIVE_MAX * list_max,
        .max_overtakes = cfg->max_overtakes,
    };
    *err_p = -ENOMEM;
    if (NULL == h) {
        return NULL;
    }
    mca_common_sfio_lockq_grants_init(&h->grants);
    h->n = n;
    h->rank = rank;
    h->probe_ms = cfg->probe_ms > 0 ? cfg->probe_ms : 1;
    h->dead_ms = cfg->dead_ms > 0 ? cfg->dead_ms : 1;
    h->max_ranges = max_ranges;
    h->list_max = list_max;
    h->peer = calloc((size_t) n, sizeof(*h->peer));
    h->nonce = calloc((size_t) n, sizeof(*h->nonce));
    h->member = calloc((size_t) n, sizeof(*h->member));
    h->ranges = calloc(max_ranges, sizeof(*h->ranges));
    if (NULL == h->peer || NULL == h->nonce || NULL == h->member || NULL == h->ranges ||
        0 != (*err_p = mca_common_sfio_lockq_create(&limits, &h->q))) {
        hosted_free(h);
        return NULL;
    }
    int64_t now = now_ms();
    memcpy(h->peer, peers, (size_t) n * sizeof(*h->peer));
    for (int r = 0; r < n; ++r) {
        h->nonce[r] = nonce_of(seed, r);
        h->member[r].last_heard = now;
    }
    *err_p = 0;
    return h;
}

int mca_common_sfio_locksvc_open(struct ompi_communicator_t *comm,
                                 const mca_common_sfio_locksvc_config_t *cfg, int local_err,
                                 mca_common_sfio_locksvc_t **svc_p)
{
    /* one node on from where the coordination counters of the same
     * serial go */
    static _Atomic uint64_t opened;
    int n = ompi_comm_size(comm), rank = ompi_comm_rank(comm);
    int err = local_err;
    mca_common_sfio_coord_join_t j = { .opened = &opened, .shift = 1, .forced = cfg->host,
                                       .nvotes = 1 };
    j.peers = calloc((size_t) n, sizeof(*j.peers));
    mca_common_sfio_locksvc_t *svc = calloc(1, sizeof(*svc));
    hosted_t *h = NULL;

    why[0] = '\0';
    if (0 == err && (NULL == j.peers || NULL == svc)) {
        err = -ENOMEM;
    }
    if (0 == err) {
        err = mca_common_sfio_coord_fabric(comm, cfg->provider, MCA_COMMON_SFIO_FABRIC_PROTO_LOCK,
                                           on_message, on_tick, why, sizeof(why));
    }
    size_t max_ranges = 0, list_max = 0;
    if (0 == err) {
        max_ranges = ranges_fitting(mca_common_sfio_fabric_msg_max());
        svc->ranges = calloc(max_ranges ? max_ranges : 1, sizeof(*svc->ranges));
        svc->ranges_cap = NULL != svc->ranges && max_ranges ? max_ranges : 0;
        svc->bufcap = sizeof(frame_t) + mca_common_sfio_lockmsg_max_size(max_ranges);
        svc->buf = malloc(svc->bufcap);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&svc->cond, &ca);
        pthread_condattr_destroy(&ca);
        if (0 == max_ranges) {
            snprintf(why, sizeof(why), "the fabric's messages hold no lock list");
            err = -EMSGSIZE;
        } else if (NULL == svc->ranges || NULL == svc->buf) {
            err = -ENOMEM;
        }
    }
    /* every rank has an endpoint and every rank's address, or nobody goes
     * on; the smallest message bound holds for all */
    j.votes[0] = (int64_t) max_ranges;
    err = mca_common_sfio_coord_join(comm, &j, err);
    max_ranges = (size_t) j.votes[0];
    list_max = cfg->list_max > max_ranges ? cfg->list_max : max_ranges;
    if (0 != err) {
        free(j.peers);
        if (NULL != svc && NULL != svc->buf) {
            svc_free(svc);
        } else if (NULL != svc) {
            free(svc->ranges);
            free(svc);
        }
        return err;
    }

    /* the host draws the service id and the seed of every rank's nonce */
    int host = j.host;
    mca_common_sfio_coord_hostmsg_t hmsg = { 0 };
    if (rank == host) {
        uint64_t seed = mca_common_sfio_random64();
        h = hosted_new(cfg, n, rank, max_ranges, list_max, j.peers, seed, &err);
        if (NULL != h) {
            pthread_mutex_lock(&ls.lock);
            /* a random id, unique among this process's services */
            do {
                h->id = (uint32_t) mca_common_sfio_random64();
            } while (0 == h->id || NULL != hosted_find(h->id) || NULL != client_find(h->id));
            h->self = svc;
            h->next = ls.hosted;
            ls.hosted = h;
            pthread_mutex_unlock(&ls.lock);
            hmsg.id = h->id;
            hmsg.word[0] = seed;
        }
    }
    svc->host_peer = j.peers[host];
    free(j.peers);
    err = mca_common_sfio_coord_announce(comm, host, &hmsg, err);
    if (0 == err) {
        svc->comm = comm;
        svc->id = hmsg.id;
        svc->nonce = nonce_of(hmsg.word[0], rank);
        svc->rank = rank;
        svc->host = host;
        svc->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 1;
        /* half the shortest time to a drop: a release sent earlier reaches
         * the host before any drop unless it travels that long */
        svc->sync_after_ms = ((cfg->probe_ms > 0 ? cfg->probe_ms : 1) +
                              (cfg->dead_ms > 0 ? cfg->dead_ms : 1)) / 2;
        svc->max_ranges = max_ranges;
        svc->list_max = list_max;
        svc->hosted = h;
        pthread_mutex_lock(&ls.lock);
        if (rank != host && NULL != client_find(svc->id)) {
            err = -EEXIST;   /* two services of this process drew one id */
        } else {
            svc->next = ls.clients;
            ls.clients = svc;
        }
        pthread_mutex_unlock(&ls.lock);
    }
    if (0 != mca_common_sfio_coord_agree(comm, &err) && 0 == err) {
        err = -EIO;
    }
    if (0 != err) {
        unlist(h, svc);
        hosted_free(h);
        svc_free(svc);
        return err;
    }
    opal_output_verbose(10, mca_common_sfio_output,
                        "sfio: lock service %08x hosted by rank %d of %d, lists of up to %zu "
                        "ranges", svc->id, host, n, max_ranges);
    *svc_p = svc;
    return 0;
}

int mca_common_sfio_locksvc_close(mca_common_sfio_locksvc_t *svc)
{
    if (NULL == svc) {
        return 0;
    }
    /* every rank's lists are released before the host forgets the queue */
    int err = 0;
    int rc = mca_common_sfio_coord_agree(svc->comm, &err);
    (void) mca_common_sfio_locksvc_close_quiesced(svc);
    return rc;
}

int mca_common_sfio_locksvc_close_quiesced(mca_common_sfio_locksvc_t *svc)
{
    if (NULL == svc) {
        return 0;
    }
    if (NULL != svc->hosted) {
        mca_common_sfio_lockq_stats_t st;
        pthread_mutex_lock(&ls.lock);
        mca_common_sfio_lockq_stats(svc->hosted->q, &st);
        pthread_mutex_unlock(&ls.lock);
        opal_output_verbose(2, mca_common_sfio_output,
                            "sfio: list-lock service %08x: %" PRIu64 " lists granted, %" PRIu64
                            " after waiting, %" PRIu64 " overtakings", svc->id, st.granted,
                            st.waited, st.overtakes);
    }
    unlist(svc->hosted, svc);
    hosted_free(svc->hosted);
    svc_free(svc);
    return 0;
}
