/*
 * sfio_fabric: the process's libfabric endpoint and progress thread (see
 * header).
 */
#include "ompi_config.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "sfio_coordplan.h"
#include "sfio_fabric.h"
#include "sfio_peertab.h"

#define FABRIC_API FI_VERSION(1, 5)

/* libfabric itself is loaded when the first file needs the fabric, not
 * with the engine: loading it makes its providers probe the hardware,
 * a cost every process would pay at its first MPI_File_open although
 * jobs on one node never use it.  These are the library's functions the
 * engine calls (the rest of the API is inline, through the objects'
 * operations tables). */
static struct {
    void *handle;
    int (*getinfo)(uint32_t version, const char *node, const char *service, uint64_t flags,
                   const struct fi_info *hints, struct fi_info **info);
    void (*freeinfo)(struct fi_info *info);
    struct fi_info *(*dupinfo)(const struct fi_info *info);
    int (*fabric)(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
    const char *(*strerror)(int errnum);
} lf;

#undef fi_allocinfo
#define fi_getinfo lf.getinfo
#define fi_freeinfo lf.freeinfo
#define fi_dupinfo lf.dupinfo
#define fi_allocinfo() lf.dupinfo(NULL)
#define fi_fabric lf.fabric
#define fi_strerror lf.strerror

/* Loads libfabric once; 0 or -ENOTSUP with the reason in why. */
static int lf_load(char *why, size_t len)
{
    if (NULL != lf.handle) {
        return 0;
    }
    void *h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (NULL == h) {
        snprintf(why, len, "libfabric cannot be loaded: %s", dlerror());
        return -ENOTSUP;
    }
    *(void **) &lf.getinfo = dlsym(h, "fi_getinfo");
    *(void **) &lf.freeinfo = dlsym(h, "fi_freeinfo");
    *(void **) &lf.dupinfo = dlsym(h, "fi_dupinfo");
    *(void **) &lf.fabric = dlsym(h, "fi_fabric");
    *(void **) &lf.strerror = dlsym(h, "fi_strerror");
    if (NULL == lf.getinfo || NULL == lf.freeinfo || NULL == lf.dupinfo || NULL == lf.fabric ||
        NULL == lf.strerror) {
        snprintf(why, len, "libfabric lacks fi_getinfo, fi_freeinfo, fi_dupinfo, fi_fabric "
                           "or fi_strerror");
        dlclose(h);
        return -ENOTSUP;
    }
    lf.handle = h;   /* kept for the life of the process */
    return 0;
}
#define NRECV 64
#define CQ_BATCH 16
#define WAIT_MS 100   /* a blocking CQ read returns this often to see stop */
#define CM_PROGRESS_US "1000"   /* rxm's connection progress interval, unless set */

/* Every message starts with this header; the payload follows at an
 * aligned offset. */
typedef struct {
    uint8_t proto;
    uint8_t reserved[7];
} wire_header_t;
#define HDR sizeof(wire_header_t)

/* What an operation's context is (the provider's context comes first:
 * FI_CONTEXT mode). */
enum { OP_RECV = 1, OP_SEND = 2, OP_ATOMIC = 3 };

/* A posted receive, of the endpoint's largest message. */
typedef struct {
    struct fi_context2 ctx;
    int op;
    char *buf;
} recv_slot_t;

/* A message sent with fi_send: the copy lives until its completion. */
typedef struct {
    struct fi_context2 ctx;
    int op;
    char buf[];
} send_slot_t;

/* An atomic operation in flight: its operands and result live here until
 * its completion, which calls done (the caller may have given up). */
typedef struct {
    struct fi_context2 ctx;
    int op;
    int64_t operand, compare, result;
    mca_common_sfio_fabric_done_t done;
    uint64_t cookie;
} atomic_slot_t;

typedef struct {
    size_t len;
    char name[MCA_COMMON_SFIO_FABRIC_NAME_MAX];
    fi_addr_t addr;
} peer_t;

static struct {
    pthread_mutex_t lock;   /* start, stop, the peer table */
    int state;              /* 0: not started, 1: running, < 0: the failed start's errno */
    char why[256];
    char describe[256];
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    bool cq_waits;          /* fi_cq_sread works: the thread sleeps in it */
    bool atomics;           /* FI_ATOMIC on the endpoint, every op of _atomic valid */
    uint64_t next_key;      /* requested MR keys (no FI_MR_PROV_KEY) */
    atomic_uint_fast64_t atomics_done;
    pthread_t thread;
    atomic_bool stop;
    recv_slot_t *recvs;
    char *recv_bufs;
    size_t msg_max;         /* largest payload */
    size_t inject_max;      /* largest payload injected */
    _Atomic(mca_common_sfio_fabric_handler_t) handlers[MCA_COMMON_SFIO_FABRIC_PROTOS];
    _Atomic(mca_common_sfio_fabric_tick_t) ticks[MCA_COMMON_SFIO_FABRIC_PROTOS];
    char name[MCA_COMMON_SFIO_FABRIC_NAME_MAX];
    size_t namelen;
    peer_t *peers;
    size_t npeers, peers_cap;
    /* process -> address of the processes met (see _learn) */
    mca_common_sfio_peertab_t procs;
    /* hash of a name -> its index in peers (the first name with that hash) */
    mca_common_sfio_peertab_t names;
} fab = { .lock = PTHREAD_MUTEX_INITIALIZER };

const char *mca_common_sfio_fabric_why(void)
{
    return fab.why;
}

const char *mca_common_sfio_fabric_describe(void)
{
    return fab.describe;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pause_us(long us)
{
    struct timespec ts = { 0, us * 1000 };
    nanosleep(&ts, NULL);
}

static int post_recv(recv_slot_t *r)
{
    for (;;) {
        ssize_t rc = fi_recv(fab.ep, r->buf, HDR + fab.msg_max, NULL, FI_ADDR_UNSPEC, &r->ctx);
        if (-FI_EAGAIN != rc) {
            return 0 == rc ? 0 : -EIO;
        }
        (void) fi_cq_read(fab.cq, NULL, 0);   /* progress */
    }
}

static void on_completion(const struct fi_cq_msg_entry *e)
{
    if (NULL == e->op_context) {
        return;
    }
    if (OP_SEND == ((send_slot_t *) e->op_context)->op) {
        free(e->op_context);
        return;
    }
    if (OP_ATOMIC == ((atomic_slot_t *) e->op_context)->op) {
        atomic_slot_t *a = (atomic_slot_t *) e->op_context;
        atomic_fetch_add(&fab.atomics_done, 1);
        a->done(a->cookie, 0, a->result);
        free(a);
        return;
    }
    recv_slot_t *r = (recv_slot_t *) e->op_context;
    const wire_header_t *h = (const wire_header_t *) r->buf;
    if (e->len >= HDR && h->proto < MCA_COMMON_SFIO_FABRIC_PROTOS) {
        mca_common_sfio_fabric_handler_t fn = atomic_load(&fab.handlers[h->proto]);
        if (NULL != fn) {
            fn(r->buf + HDR, e->len - HDR);
        }
    }
    (void) post_recv(r);
}

static void run_ticks(void)
{
    int64_t now = now_ms();
    for (int p = 0; p < MCA_COMMON_SFIO_FABRIC_PROTOS; ++p) {
        mca_common_sfio_fabric_tick_t fn = atomic_load(&fab.ticks[p]);
        if (NULL != fn) {
            fn(now);
        }
    }
}

static void on_error(void)
{
    struct fi_cq_err_entry err;
    memset(&err, 0, sizeof(err));
    if (fi_cq_readerr(fab.cq, &err, 0) <= 0) {
        return;
    }
    if (NULL == err.op_context) {
        return;
    }
    /* a send that failed frees its copy (its sender learns of it by its
     * own timeout); a receive that failed (truncated, ...) is posted
     * again, a canceled one (endpoint closing) is not */
    if (OP_SEND == ((send_slot_t *) err.op_context)->op) {
        free(err.op_context);
    } else if (OP_ATOMIC == ((atomic_slot_t *) err.op_context)->op) {
        atomic_slot_t *a = (atomic_slot_t *) err.op_context;
        a->done(a->cookie, -EIO, 0);
        free(a);
    } else if (FI_ECANCELED != err.err && !atomic_load(&fab.stop)) {
        (void) post_recv((recv_slot_t *) err.op_context);
    }
}

static void *progress_main(void *arg)
{
    (void) arg;
    struct fi_cq_msg_entry e[CQ_BATCH];
    long idle_us = 1;
    int64_t next_tick = now_ms() + MCA_COMMON_SFIO_FABRIC_TICK_MS;
#ifdef __linux__
    (void) pthread_setname_np(pthread_self(), "sfio-fabric");
#endif
    while (!atomic_load(&fab.stop)) {
        ssize_t n = fab.cq_waits ? fi_cq_sread(fab.cq, e, CQ_BATCH, NULL, WAIT_MS)
                                 : fi_cq_read(fab.cq, e, CQ_BATCH);
        if (n > 0) {
            for (ssize_t i = 0; i < n; ++i) {
                on_completion(&e[i]);
            }
            idle_us = 1;
        } else if (-FI_EAVAIL == n) {
            on_error();
        } else if (!fab.cq_waits) {
            /* polling provider: back off while idle, up to 1 ms */
            pause_us(idle_us);
            idle_us = idle_us < 1000 ? 2 * idle_us : 1000;
        }
        if (now_ms() >= next_tick) {
            run_ticks();
            next_tick = now_ms() + MCA_COMMON_SFIO_FABRIC_TICK_MS;
        }
    }
    return NULL;
}

/* Closes whatever is open; fab.lock held. */
static void teardown(void)
{
    if (NULL != fab.ep) {
        fi_close(&fab.ep->fid);
    }
    if (NULL != fab.av) {
        fi_close(&fab.av->fid);
    }
    if (NULL != fab.cq) {
        fi_close(&fab.cq->fid);
    }
    if (NULL != fab.domain) {
        fi_close(&fab.domain->fid);
    }
    if (NULL != fab.fabric) {
        fi_close(&fab.fabric->fid);
    }
    if (NULL != fab.info) {
        fi_freeinfo(fab.info);
    }
    free(fab.recvs);
    free(fab.recv_bufs);
    free(fab.peers);
    fab.ep = NULL;
    fab.av = NULL;
    fab.cq = NULL;
    fab.domain = NULL;
    fab.fabric = NULL;
    fab.info = NULL;
    fab.recvs = NULL;
    fab.recv_bufs = NULL;
    fab.peers = NULL;
    fab.npeers = fab.peers_cap = 0;
    /* the addresses die with the address vector */
    mca_common_sfio_peertab_fini(&fab.procs);
    mca_common_sfio_peertab_fini(&fab.names);
    fab.atomics = false;
}

static struct fi_info *hints_new(uint64_t caps)
{
    struct fi_info *h = fi_allocinfo();
    if (NULL == h) {
        return NULL;
    }
    h->caps = caps;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->ep_attr->type = FI_EP_RDM;
    h->domain_attr->threading = FI_THREAD_SAFE;
    /* no FI_MR_LOCAL: the receive buffers are not registered */
    h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    return h;
}

/* Chooses the entry of the RDM list (sfio_coordplan) and copies it. */
static int choose(const char *want, struct fi_info **info_p)
{
    struct fi_info *h = hints_new(FI_MSG), *list = NULL, *atomic_list = NULL;
    int rc = NULL == h ? -FI_ENOMEM : fi_getinfo(FABRIC_API, NULL, NULL, 0, h, &list);
    if (0 != rc) {
        snprintf(fab.why, sizeof(fab.why), "fi_getinfo found no reliable datagram provider: %s",
                 fi_strerror(-rc));
        fi_freeinfo(h);
        return -ENODEV;
    }
    h->caps = FI_MSG | FI_ATOMIC;
    if (0 != fi_getinfo(FABRIC_API, NULL, NULL, 0, h, &atomic_list)) {
        atomic_list = NULL;
    }
    fi_freeinfo(h);
    int n = 0;
    for (struct fi_info *i = list; NULL != i; i = i->next) {
        ++n;
    }
    mca_common_sfio_coordplan_prov_t *provs = calloc((size_t) n, sizeof(*provs));
    if (NULL == provs) {
        fi_freeinfo(list);
        fi_freeinfo(atomic_list);
        return -ENOMEM;
    }
    int k = 0;
    for (struct fi_info *i = list; NULL != i; i = i->next, ++k) {
        provs[k].name = i->fabric_attr->prov_name;
        for (struct fi_info *a = atomic_list; NULL != a && !provs[k].atomics; a = a->next) {
            provs[k].atomics = 0 == strcmp(a->fabric_attr->prov_name, provs[k].name);
        }
    }
    int pick = -1;
    rc = mca_common_sfio_coordplan_provider(provs, n, want, false, &pick);
    free(provs);
    if (0 != rc) {
        if ('\0' == want[0] || 0 == strcmp(want, "auto")) {
            snprintf(fab.why, sizeof(fab.why), "no provider among fi_getinfo's reaches other nodes");
        } else {
            snprintf(fab.why, sizeof(fab.why), -EXDEV == rc ? "provider '%s' reaches one node only"
                                                            : "no provider '%s' among fi_getinfo's",
                     want);
        }
        fi_freeinfo(list);
        fi_freeinfo(atomic_list);
        return rc;
    }
    struct fi_info *i = list;
    for (int j = 0; j < pick; ++j) {
        i = i->next;
    }
    /* the same fabric and domain with FI_ATOMIC when it has them: the
     * counters of the coordination service can then be remote atomics */
    for (struct fi_info *a = atomic_list; NULL != a; a = a->next) {
        if (0 == strcmp(a->fabric_attr->prov_name, i->fabric_attr->prov_name) &&
            0 == strcmp(a->fabric_attr->name, i->fabric_attr->name) &&
            0 == strcmp(a->domain_attr->name, i->domain_attr->name)) {
            i = a;
            break;
        }
    }
    *info_p = fi_dupinfo(i);
    fi_freeinfo(list);
    fi_freeinfo(atomic_list);
    return NULL == *info_p ? -ENOMEM : 0;
}

/* The endpoint has FI_ATOMIC and the domain offers, on 64-bit integers,
 * the four operations of mca_common_sfio_fabric_atomic. */
static bool query_atomics(void)
{
    static const struct {
        enum fi_op op;
        uint64_t flags;
    } need[] = {
        { FI_SUM, FI_FETCH_ATOMIC },
        { FI_ATOMIC_READ, FI_FETCH_ATOMIC },
        { FI_ATOMIC_WRITE, FI_FETCH_ATOMIC },
        { FI_CSWAP, FI_COMPARE_ATOMIC },
    };
    if (0 == (fab.info->caps & FI_ATOMIC) || NULL == fab.domain->ops->query_atomic) {
        return false;
    }
    /* ofi_rxd (libfabric 1.17) faults in its progress engine when an
     * atomic targets the endpoint itself, which the host's own
     * operations do (sfio_coord_ofi.c): messages there */
    if (NULL != strstr(fab.info->fabric_attr->prov_name, "ofi_rxd")) {
        return false;
    }
    for (size_t k = 0; k < sizeof(need) / sizeof(need[0]); ++k) {
        struct fi_atomic_attr attr = { 0 };
        if (0 != fi_query_atomic(fab.domain, FI_INT64, need[k].op, &attr, need[k].flags) ||
            attr.count < 1) {
            return false;
        }
    }
    return true;
}

/* fab.lock held. */
static int start_locked(const char *want)
{
    struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG, .size = 4 * NRECV,
                                  .wait_obj = FI_WAIT_UNSPEC };
    struct fi_av_attr av_attr = { .type = FI_AV_UNSPEC };
    const char *step = "fi_fabric";
    int rc = choose(want, &fab.info);
    if (0 != rc) {
        return rc;
    }
    /* small messages are injected when the provider can; larger ones up
     * to what every receive buffer holds are sent from a copy */
    size_t inject = fab.info->tx_attr->inject_size;
    size_t biggest = fab.info->ep_attr->max_msg_size;
    fab.inject_max = inject > HDR ? inject - HDR : 0;
    fab.msg_max = MCA_COMMON_SFIO_FABRIC_BIG_MAX;
    if (biggest < HDR + fab.msg_max) {
        fab.msg_max = biggest > HDR ? biggest - HDR : 0;
    }
    if (fab.msg_max < MCA_COMMON_SFIO_FABRIC_MSG_MAX) {
        snprintf(fab.why, sizeof(fab.why), "provider %s sends only %zu bytes",
                 fab.info->fabric_attr->prov_name, biggest);
        return -ENOTSUP;
    }
    rc = fi_fabric(fab.info->fabric_attr, &fab.fabric, NULL);
    if (0 == rc) {
        step = "fi_domain";
        rc = fi_domain(fab.fabric, fab.info, &fab.domain, NULL);
    }
    if (0 == rc) {
        fab.atomics = query_atomics();
        step = "fi_cq_open";
        fab.cq_waits = true;
        rc = fi_cq_open(fab.domain, &cq_attr, &fab.cq, NULL);
        if (0 != rc) {
            /* no wait object: the thread polls */
            cq_attr.wait_obj = FI_WAIT_NONE;
            fab.cq_waits = false;
            rc = fi_cq_open(fab.domain, &cq_attr, &fab.cq, NULL);
        }
    }
    if (0 == rc) {
        step = "fi_av_open";
        rc = fi_av_open(fab.domain, &av_attr, &fab.av, NULL);
    }
    if (0 == rc) {
        step = "fi_endpoint";
        rc = fi_endpoint(fab.domain, fab.info, &fab.ep, NULL);
    }
    if (0 == rc) {
        step = "fi_ep_bind";
        rc = fi_ep_bind(fab.ep, &fab.cq->fid, FI_TRANSMIT | FI_RECV);
    }
    if (0 == rc) {
        rc = fi_ep_bind(fab.ep, &fab.av->fid, 0);
    }
    if (0 == rc) {
        step = "fi_enable";
        rc = fi_enable(fab.ep);
    }
    if (0 == rc) {
        step = "fi_getname";
        fab.namelen = sizeof(fab.name);
        rc = fi_getname(&fab.ep->fid, fab.name, &fab.namelen);
    }
    if (0 != rc) {
        snprintf(fab.why, sizeof(fab.why), "%s on provider %s failed: %s", step,
                 fab.info->fabric_attr->prov_name, fi_strerror(-rc));
        return -EIO;
    }
    fab.recvs = calloc(NRECV, sizeof(*fab.recvs));
    fab.recv_bufs = malloc(NRECV * (HDR + fab.msg_max));
    if (NULL == fab.recvs || NULL == fab.recv_bufs) {
        return -ENOMEM;
    }
    for (int i = 0; i < NRECV; ++i) {
        fab.recvs[i].op = OP_RECV;
        fab.recvs[i].buf = fab.recv_bufs + (size_t) i * (HDR + fab.msg_max);
        if (0 != post_recv(&fab.recvs[i])) {
            snprintf(fab.why, sizeof(fab.why), "fi_recv on provider %s failed",
                     fab.info->fabric_attr->prov_name);
            return -EIO;
        }
    }
    /* a CQ with a wait object that cannot wait (the provider says so at
     * the first sread) is polled instead */
    if (fab.cq_waits) {
        struct fi_cq_msg_entry e;
        ssize_t n = fi_cq_sread(fab.cq, &e, 1, NULL, 0);
        if (-FI_ENOSYS == n || -FI_EOPNOTSUPP == n || -FI_ENODATA == n) {
            fab.cq_waits = false;
        }
    }
    atomic_store(&fab.stop, false);
    if (0 != pthread_create(&fab.thread, NULL, progress_main, NULL)) {
        snprintf(fab.why, sizeof(fab.why), "no progress thread");
        return -EAGAIN;
    }
    snprintf(fab.describe, sizeof(fab.describe),
             "provider %s (fabric %s, domain %s), progress thread %s, %s",
             fab.info->fabric_attr->prov_name, fab.info->fabric_attr->name,
             fab.info->domain_attr->name,
             fab.cq_waits ? "waiting in the completion queue" : "polling",
             fab.atomics ? "atomics" : "no atomics");
    return 0;
}

static void stop_at_exit(void)
{
    mca_common_sfio_fabric_stop();
}

int mca_common_sfio_fabric_start(const char *want, bool *started_p)
{
    static bool atexit_done = false;
    bool started = false;
    pthread_mutex_lock(&fab.lock);
    if (0 == fab.state) {
        fab.why[0] = '\0';
        /* rxm makes a connection on a peer's first message and progresses
         * connection requests on its own timer (10 ms by default): every
         * service's first request to a new host would wait for it.  The
         * user's setting wins; a libfabric the process started earlier
         * keeps its own. */
        (void) setenv("FI_OFI_RXM_CM_PROGRESS_INTERVAL", CM_PROGRESS_US, 0);
        int rc = lf_load(fab.why, sizeof(fab.why));
        if (0 == rc) {
            rc = start_locked(NULL == want ? "" : want);
        }
        if (0 != rc) {
            teardown();
        } else if (!atexit_done) {
            atexit_done = true;
            (void) atexit(stop_at_exit);
        }
        fab.state = 0 == rc ? 1 : rc;
        started = 0 == rc;
    }
    int state = fab.state;
    pthread_mutex_unlock(&fab.lock);
    if (NULL != started_p) {
        *started_p = started;
    }
    return 1 == state ? 0 : state;
}

void mca_common_sfio_fabric_stop(void)
{
    pthread_mutex_lock(&fab.lock);
    if (1 == fab.state) {
        atomic_store(&fab.stop, true);
        if (fab.cq_waits) {
            (void) fi_cq_signal(fab.cq);
        }
        pthread_join(fab.thread, NULL);
        teardown();
        fab.describe[0] = '\0';
    }
    fab.state = 0;   /* a later open may start it again */
    pthread_mutex_unlock(&fab.lock);
}

int mca_common_sfio_fabric_name(void *name, size_t *len_p)
{
    if (1 != fab.state) {
        return -ENOTCONN;
    }
    memcpy(name, fab.name, fab.namelen);
    *len_p = fab.namelen;
    return 0;
}

/* FNV-1a over a fabric name. */
static uint64_t name_hash(const void *name, size_t len)
{
    const unsigned char *b = name;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; ++i) {
        h = (h ^ b[i]) * 0x100000001b3ull;
    }
    return h;
}

static bool peer_is(size_t i, const void *name, size_t len)
{
    return fab.peers[i].len == len && 0 == memcmp(fab.peers[i].name, name, len);
}

/* The handle of the peer at name, inserted once; fab.lock held, running.
 * Names are found through their hash, so a first exchange with n new
 * processes costs O(n), not O(n^2); only a name whose hash an earlier,
 * different name took is searched for one by one. */
static int peer_locked(const void *name, size_t len, uint64_t *peer_p)
{
    uint64_t h = name_hash(name, len), at = 0;
    bool hashed = mca_common_sfio_peertab_find(&fab.names, h, &at);
    /* (an entry may name the next index when the insertion after it
     * failed: the bound check, then the scan, cover that) */
    if (hashed && at < fab.npeers && peer_is((size_t) at, name, len)) {
        *peer_p = (uint64_t) fab.peers[at].addr;
        return 0;
    }
    for (size_t i = 0; hashed && i < fab.npeers; ++i) {
        if (peer_is(i, name, len)) {
            *peer_p = (uint64_t) fab.peers[i].addr;
            return 0;
        }
    }
    /* room in both tables before the address vector takes the name */
    if (!hashed && 0 != mca_common_sfio_peertab_put(&fab.names, h, (uint64_t) fab.npeers)) {
        return -ENOMEM;
    }
    if (fab.npeers == fab.peers_cap) {
        size_t cap = 0 == fab.peers_cap ? 16 : 2 * fab.peers_cap;
        peer_t *p = realloc(fab.peers, cap * sizeof(*p));
        if (NULL == p) {
            return -ENOMEM;
        }
        fab.peers = p;
        fab.peers_cap = cap;
    }
    peer_t *p = &fab.peers[fab.npeers];
    if (1 != fi_av_insert(fab.av, name, 1, &p->addr, 0, NULL)) {
        return -EIO;
    }
    p->len = len;
    memcpy(p->name, name, len);
    ++fab.npeers;
    *peer_p = (uint64_t) p->addr;
    return 0;
}

bool mca_common_sfio_fabric_known(const uint64_t *procs, size_t n, uint64_t *peers)
{
    bool all = true;
    pthread_mutex_lock(&fab.lock);
    for (size_t i = 0; i < n && all; ++i) {
        all = 1 == fab.state && mca_common_sfio_peertab_find(&fab.procs, procs[i], &peers[i]);
    }
    pthread_mutex_unlock(&fab.lock);
    return all;
}

int mca_common_sfio_fabric_learn(uint64_t proc, const void *name, size_t len, uint64_t *peer_p)
{
    uint64_t peer = 0;
    if (len > MCA_COMMON_SFIO_FABRIC_NAME_MAX) {
        return -EINVAL;
    }
    pthread_mutex_lock(&fab.lock);
    int rc = 1 == fab.state ? 0 : -ENOTCONN;
    /* a process known already keeps its handle: no search of the names */
    if (0 == rc && !mca_common_sfio_peertab_find(&fab.procs, proc, &peer)) {
        rc = peer_locked(name, len, &peer);
        if (0 == rc) {
            rc = mca_common_sfio_peertab_put(&fab.procs, proc, peer);
        }
    }
    pthread_mutex_unlock(&fab.lock);
    if (0 == rc) {
        *peer_p = peer;
    }
    return rc;
}

void mca_common_sfio_fabric_handle(mca_common_sfio_fabric_proto_t proto,
                                   mca_common_sfio_fabric_handler_t handler,
                                   mca_common_sfio_fabric_tick_t tick)
{
    if (proto < MCA_COMMON_SFIO_FABRIC_PROTOS) {
        atomic_store(&fab.handlers[proto], handler);
        atomic_store(&fab.ticks[proto], tick);
    }
}

size_t mca_common_sfio_fabric_msg_max(void)
{
    return 1 == fab.state ? fab.msg_max : 0;
}

/* How long a greeting waits for a busy provider: it is best effort, and
 * the greetings of a group go one after another inside an open. */
#define GREET_WAIT_MS 50

void mca_common_sfio_fabric_greet(const uint64_t *peers, size_t n, size_t self)
{
    for (size_t i = 0; i < n; ++i) {
        if (i != self) {
            (void) mca_common_sfio_fabric_send(peers[i], MCA_COMMON_SFIO_FABRIC_PROTO_GREET, "", 0,
                                               GREET_WAIT_MS);
        }
    }
}

int mca_common_sfio_fabric_send(uint64_t peer, mca_common_sfio_fabric_proto_t proto,
                                const void *msg, size_t len, int64_t timeout_ms)
{
    int64_t deadline = -1;
    if (1 != fab.state) {
        return -ENOTCONN;
    }
    if (len > fab.msg_max || proto >= MCA_COMMON_SFIO_FABRIC_PROTOS) {
        return -EMSGSIZE;
    }
    /* header and payload in one buffer: on the stack when injected, a
     * heap copy owned by the completion when sent */
    bool inject = len <= fab.inject_max && len <= MCA_COMMON_SFIO_FABRIC_MSG_MAX;
    char small[HDR + MCA_COMMON_SFIO_FABRIC_MSG_MAX];
    send_slot_t *big = NULL;
    char *wire = small;
    if (!inject) {
        big = malloc(sizeof(*big) + HDR + len);
        if (NULL == big) {
            return -ENOMEM;
        }
        big->op = OP_SEND;
        wire = big->buf;
    }
    memset(wire, 0, HDR);
    ((wire_header_t *) wire)->proto = (uint8_t) proto;
    memcpy(wire + HDR, msg, len);
    for (;;) {
        ssize_t rc = inject ? fi_inject(fab.ep, wire, HDR + len, (fi_addr_t) peer)
                            : fi_send(fab.ep, wire, HDR + len, NULL, (fi_addr_t) peer, &big->ctx);
        if (0 == rc) {
            return 0;
        }
        if (-FI_EAGAIN != rc) {
            free(big);
            return -EIO;
        }
        if (deadline < 0) {
            deadline = now_ms() + timeout_ms;
        } else if (now_ms() > deadline) {
            free(big);
            return -ETIMEDOUT;
        }
        /* the provider needs progress (connection set-up, flow control):
         * the progress thread makes it; on that thread, make it here */
        if (pthread_equal(pthread_self(), fab.thread)) {
            (void) fi_cq_read(fab.cq, NULL, 0);
        } else {
            pause_us(10);
        }
    }
}

bool mca_common_sfio_fabric_atomics(bool *native_p)
{
    bool on = 1 == fab.state && fab.atomics;
    if (NULL != native_p) {
        *native_p = on && !mca_common_sfio_coordplan_software(fab.info->fabric_attr->prov_name);
    }
    return on;
}

uint64_t mca_common_sfio_fabric_atomics_done(void)
{
    return atomic_load(&fab.atomics_done);
}

int mca_common_sfio_fabric_mr_reg(void *buf, size_t len, void **mr_p, uint64_t *key_p,
                                  uint64_t *addr_p)
{
    struct fid_mr *mr = NULL;
    pthread_mutex_lock(&fab.lock);
    if (1 != fab.state || !fab.atomics) {
        pthread_mutex_unlock(&fab.lock);
        return -ENOTSUP;
    }
    uint64_t requested = ++fab.next_key;
    int rc = fi_mr_reg(fab.domain, buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, requested, 0,
                       &mr, NULL);
    int mr_mode = fab.info->domain_attr->mr_mode;
    pthread_mutex_unlock(&fab.lock);
    if (0 != rc) {
        return -EIO;
    }
    *mr_p = mr;
    *key_p = fi_mr_key(mr);
    /* remote addresses are virtual ones, or offsets in the region */
    *addr_p = (mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t) (uintptr_t) buf : 0;
    return 0;
}

void mca_common_sfio_fabric_mr_close(void *mr)
{
    if (NULL != mr) {
        (void) fi_close(&((struct fid_mr *) mr)->fid);
    }
}

int mca_common_sfio_fabric_atomic(uint64_t peer, uint64_t addr, uint64_t key,
                                  mca_common_sfio_fabric_aop_t aop, int64_t operand,
                                  int64_t compare, mca_common_sfio_fabric_done_t done,
                                  uint64_t cookie, int64_t timeout_ms)
{
    static const enum fi_op ops[] = {
        [MCA_COMMON_SFIO_FABRIC_FETCH_ADD] = FI_SUM,
        [MCA_COMMON_SFIO_FABRIC_READ] = FI_ATOMIC_READ,
        [MCA_COMMON_SFIO_FABRIC_SWAP] = FI_ATOMIC_WRITE,
        [MCA_COMMON_SFIO_FABRIC_CSWAP] = FI_CSWAP,
    };
    int64_t deadline = -1;
    if (1 != fab.state || !fab.atomics) {
        return -ENOTSUP;
    }
    atomic_slot_t *a = calloc(1, sizeof(*a));
    if (NULL == a) {
        return -ENOMEM;
    }
    a->op = OP_ATOMIC;
    a->operand = operand;
    a->compare = compare;
    a->done = done;
    a->cookie = cookie;
    for (;;) {
        /* every one fetches: its completion means the target applied it */
        ssize_t rc = MCA_COMMON_SFIO_FABRIC_CSWAP == aop
            ? fi_compare_atomic(fab.ep, &a->operand, 1, NULL, &a->compare, NULL, &a->result,
                                NULL, (fi_addr_t) peer, addr, key, FI_INT64, FI_CSWAP, &a->ctx)
            : fi_fetch_atomic(fab.ep, &a->operand, 1, NULL, &a->result, NULL, (fi_addr_t) peer,
                              addr, key, FI_INT64, ops[aop], &a->ctx);
        if (0 == rc) {
            return 0;
        }
        if (-FI_EAGAIN != rc) {
            free(a);
            return -EIO;
        }
        if (deadline < 0) {
            deadline = now_ms() + timeout_ms;
        } else if (now_ms() > deadline) {
            free(a);
            return -ETIMEDOUT;
        }
        if (pthread_equal(pthread_self(), fab.thread)) {
            (void) fi_cq_read(fab.cq, NULL, 0);
        } else {
            pause_us(10);
        }
    }
}
