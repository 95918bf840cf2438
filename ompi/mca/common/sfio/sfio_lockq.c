/*
 * sfio_lockq: the list-lock manager's queue (see header for the
 * guarantees and how they are kept).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sfio_lockq.h"

typedef mca_common_sfio_lockq_range_t range_t;
typedef mca_common_sfio_lockq_grants_t grants_t;

struct lock;

/* One range of a live list, a node of the interval tree. */
typedef struct node {
    struct node *left, *right;
    uint64_t offset, end;
    uint64_t max_end;       /* largest end in this subtree */
    uint64_t prio;          /* treap heap key: parent >= children */
    uint32_t mode;
    uint32_t index;         /* position in its list: a tie-break of the order */
    struct lock *owner;
} node_t;

typedef enum { LOCK_QUEUED = 1, LOCK_HELD = 2, LOCK_LEAVING = 3 } lock_state_t;

/* A live list. */
typedef struct lock {
    uint64_t client, request;
    uint64_t seq;           /* arrival order */
    size_t nranges;
    node_t *nodes;
    size_t held_blockers;   /* queued: held lists that conflict with it */
    size_t queued_blockers; /* queued: earlier queued lists that conflict with it */
    size_t overtaken;       /* later lists granted ahead of it */
    uint64_t mark;          /* last visit stamp: counts each pair once */
    uint64_t candidate;     /* stamp of the last call that may have unblocked it */
    lock_state_t state;
    bool was_held;          /* leaving: it was held (else queued) */
    struct lock *next_of_client, *prev_of_client;
} lock_t;

typedef struct client {
    uint64_t id;
    size_t nlists, nranges;
    lock_t *lists;
} client_t;

struct mca_common_sfio_lockq_t {
    mca_common_sfio_lockq_limits_t limits;
    node_t *root;
    uint64_t next_seq;
    uint64_t stamp;
    uint64_t prio_state;
    client_t *clients;      /* sorted by id; only clients with live lists */
    size_t nclients, clients_cap;
    lock_t **ready;         /* scratch of a release: lists that may be grantable */
    size_t ready_cap;
    size_t held, queued, ranges;
    uint64_t granted, waited, overtakes;
};

/* ---- interval tree: a treap on (offset, seq, index) ------------------- */

static uint64_t next_prio(mca_common_sfio_lockq_t *q)
{
    /* splitmix64: priorities only need to look random to keep the treap
     * balanced; deterministic so runs repeat. */
    uint64_t z = (q->prio_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static bool node_before(const node_t *a, const node_t *b)
{
    if (a->offset != b->offset) {
        return a->offset < b->offset;
    }
    if (a->owner->seq != b->owner->seq) {
        return a->owner->seq < b->owner->seq;
    }
    return a->index < b->index;
}

static void node_update(node_t *n)
{
    n->max_end = n->end;
    if (NULL != n->left && n->left->max_end > n->max_end) {
        n->max_end = n->left->max_end;
    }
    if (NULL != n->right && n->right->max_end > n->max_end) {
        n->max_end = n->right->max_end;
    }
}

/* Splits t into the nodes before key (*l) and the rest (*r). */
static void treap_split(node_t *t, const node_t *key, node_t **l, node_t **r)
{
    if (NULL == t) {
        *l = *r = NULL;
    } else if (node_before(t, key)) {
        treap_split(t->right, key, &t->right, r);
        *l = t;
        node_update(t);
    } else {
        treap_split(t->left, key, l, &t->left);
        *r = t;
        node_update(t);
    }
}

/* Joins a and b where every node of a is before every node of b. */
static node_t *treap_merge(node_t *a, node_t *b)
{
    if (NULL == a) {
        return b;
    }
    if (NULL == b) {
        return a;
    }
    if (a->prio > b->prio) {
        a->right = treap_merge(a->right, b);
        node_update(a);
        return a;
    }
    b->left = treap_merge(a, b->left);
    node_update(b);
    return b;
}

static node_t *treap_insert(node_t *t, node_t *n)
{
    if (NULL == t) {
        node_update(n);
        return n;
    }
    if (n->prio > t->prio) {
        treap_split(t, n, &n->left, &n->right);
        node_update(n);
        return n;
    }
    if (node_before(n, t)) {
        t->left = treap_insert(t->left, n);
    } else {
        t->right = treap_insert(t->right, n);
    }
    node_update(t);
    return t;
}

static node_t *treap_erase(node_t *t, node_t *n)
{
    if (t == n) {
        node_t *joined = treap_merge(n->left, n->right);
        n->left = n->right = NULL;
        return joined;
    }
    if (node_before(n, t)) {
        t->left = treap_erase(t->left, n);
    } else {
        t->right = treap_erase(t->right, n);
    }
    node_update(t);
    return t;
}

typedef void (*visit_fn_t)(node_t *hit, const node_t *probe, void *ctx);

/* Calls fn for every node overlapping probe's range, ascending. */
static void treap_visit_overlaps(node_t *t, const node_t *probe, visit_fn_t fn, void *ctx)
{
    while (NULL != t && t->max_end > probe->offset) {
        treap_visit_overlaps(t->left, probe, fn, ctx);
        if (t->offset >= probe->end) {
            return;     /* the right subtree starts even later */
        }
        if (t->end > probe->offset) {
            fn(t, probe, ctx);
        }
        t = t->right;
    }
}

/* ---- lists and clients ------------------------------------------------ */

static bool modes_conflict(uint32_t a, uint32_t b)
{
    return MCA_COMMON_SFIO_LOCKQ_EXCLUSIVE == a || MCA_COMMON_SFIO_LOCKQ_EXCLUSIVE == b;
}

/* Index of the first client with id >= id. */
static size_t client_slot(const mca_common_sfio_lockq_t *q, uint64_t id)
{
    size_t lo = 0, hi = q->nclients;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (q->clients[mid].id < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static client_t *client_find(const mca_common_sfio_lockq_t *q, uint64_t id)
{
    size_t i = client_slot(q, id);
    return i < q->nclients && q->clients[i].id == id ? &q->clients[i] : NULL;
}

static lock_t *lock_find(const mca_common_sfio_lockq_t *q, uint64_t client, uint64_t request)
{
    const client_t *c = client_find(q, client);
    for (lock_t *l = NULL != c ? c->lists : NULL; NULL != l; l = l->next_of_client) {
        if (l->request == request) {
            return l;
        }
    }
    return NULL;
}

/* Room for one more client; called before anything changes. */
static int clients_reserve_one(mca_common_sfio_lockq_t *q)
{
    if (q->nclients < q->clients_cap) {
        return 0;
    }
    size_t cap = q->clients_cap < 8 ? 8 : 2 * q->clients_cap;
    client_t *c = realloc(q->clients, cap * sizeof(*c));
    if (NULL == c) {
        return -ENOMEM;
    }
    q->clients = c;
    q->clients_cap = cap;
    return 0;
}

static client_t *client_add(mca_common_sfio_lockq_t *q, uint64_t id)
{
    size_t i = client_slot(q, id);
    memmove(&q->clients[i + 1], &q->clients[i], (q->nclients - i) * sizeof(client_t));
    q->clients[i] = (client_t) { .id = id };
    q->nclients++;
    return &q->clients[i];
}

static void client_remove_if_idle(mca_common_sfio_lockq_t *q, uint64_t id)
{
    size_t i = client_slot(q, id);
    if (i < q->nclients && q->clients[i].id == id && 0 == q->clients[i].nlists) {
        memmove(&q->clients[i], &q->clients[i + 1], (q->nclients - i - 1) * sizeof(client_t));
        q->nclients--;
    }
}

static int grants_reserve(grants_t *g, size_t more)
{
    if (more <= g->capacity - g->count) {
        return 0;
    }
    size_t cap = g->capacity < 16 ? 16 : g->capacity;
    while (cap - g->count < more) {
        if (cap > SIZE_MAX / 2 / sizeof(*g->grants)) {
            return -ENOMEM;
        }
        cap *= 2;
    }
    mca_common_sfio_lockq_grant_t *ng = realloc(g->grants, cap * sizeof(*ng));
    if (NULL == ng) {
        return -ENOMEM;
    }
    g->grants = ng;
    g->capacity = cap;
    return 0;
}

/* Everything a release may need, reserved before it changes anything:
 * every queued list may become ready and granted. */
static int reserve_for_release(mca_common_sfio_lockq_t *q, grants_t *g)
{
    if (q->ready_cap < q->queued) {
        lock_t **r = realloc(q->ready, q->queued * sizeof(*r));
        if (NULL == r) {
            return -ENOMEM;
        }
        q->ready = r;
        q->ready_cap = q->queued;
    }
    return grants_reserve(g, q->queued);
}

typedef struct {
    const lock_t *list;
    uint64_t stamp;
    size_t max_overtakes;
    bool blocked;
    uint64_t overtakes;
} probe_ctx_t;

/* An earlier queued list that conflicts and may not be overtaken again. */
static void find_exhausted(node_t *hit, const node_t *probe, void *ctx)
{
    probe_ctx_t *p = ctx;
    const lock_t *other = hit->owner;
    if (other != p->list && LOCK_QUEUED == other->state && other->seq < p->list->seq
        && other->overtaken >= p->max_overtakes && modes_conflict(hit->mode, probe->mode)) {
        p->blocked = true;
    }
}

/* A queued list may be granted: no held list conflicts, and every earlier
 * queued one that conflicts may still be overtaken. */
static bool grantable(const mca_common_sfio_lockq_t *q, const lock_t *l)
{
    if (0 != l->held_blockers) {
        return false;
    }
    if (0 == l->queued_blockers) {
        return true;
    }
    if (0 == q->limits.max_overtakes) {
        return false;
    }
    probe_ctx_t p = { .list = l, .max_overtakes = q->limits.max_overtakes };
    for (size_t i = 0; i < l->nranges && !p.blocked; ++i) {
        treap_visit_overlaps(q->root, &l->nodes[i], find_exhausted, &p);
    }
    return !p.blocked;
}

/* The list is held from now on: earlier queued lists it conflicts with
 * are overtaken, later ones count it as held instead of queued. */
static void count_grant(node_t *hit, const node_t *probe, void *ctx)
{
    probe_ctx_t *p = ctx;
    lock_t *other = hit->owner;
    if (other == p->list || other->mark == p->stamp || !modes_conflict(hit->mode, probe->mode)) {
        return;
    }
    other->mark = p->stamp;
    if (other->seq < p->list->seq) {
        other->overtaken++;
        p->overtakes++;
    } else {
        other->queued_blockers--;
    }
    other->held_blockers++;
}

static void grant(mca_common_sfio_lockq_t *q, lock_t *l, bool newest, grants_t *g)
{
    if (!newest || 0 != l->queued_blockers) {
        probe_ctx_t p = { .list = l, .stamp = ++q->stamp };
        for (size_t i = 0; i < l->nranges; ++i) {
            treap_visit_overlaps(q->root, &l->nodes[i], count_grant, &p);
        }
        q->overtakes += p.overtakes;
    }
    q->granted++;
    q->waited += !newest;
    l->queued_blockers = 0;
    l->state = LOCK_HELD;
    q->queued--;
    q->held++;
    g->grants[g->count++] = (mca_common_sfio_lockq_grant_t) { l->client, l->request };
}

/* ---- submit ----------------------------------------------------------- */

int mca_common_sfio_lockq_ranges_verify(const range_t *ranges, size_t nranges)
{
    if (nranges > UINT32_MAX) {
        return -EINVAL;     /* node_t.index */
    }
    for (size_t i = 0; i < nranges; ++i) {
        const range_t *r = &ranges[i];
        if (0 == r->length || r->length > UINT64_MAX - r->offset
            || (MCA_COMMON_SFIO_LOCKQ_SHARED != r->mode
                && MCA_COMMON_SFIO_LOCKQ_EXCLUSIVE != r->mode)) {
            return -EINVAL;
        }
        if (i > 0 && ranges[i - 1].offset + ranges[i - 1].length > r->offset) {
            return -EINVAL;
        }
    }
    return 0;
}

/* -EEXIST, -ENOSPC or 0 for a new list of this client. */
static int check_admission(const mca_common_sfio_lockq_t *q,
                           const mca_common_sfio_lockq_request_t *req)
{
    const client_t *c = client_find(q, req->client);
    size_t lists = 0, ranges = 0;
    if (NULL != c) {
        if (NULL != lock_find(q, req->client, req->request)) {
            return -EEXIST;
        }
        lists = c->nlists;
        ranges = c->nranges;
    } else if (q->nclients >= q->limits.max_clients) {
        return -ENOSPC;
    }
    if (lists >= q->limits.max_lists_per_client
        || req->nranges > q->limits.max_ranges_per_client - ranges) {
        return -ENOSPC;
    }
    return 0;
}

static void count_blocker(node_t *hit, const node_t *probe, void *ctx)
{
    const uint64_t *stamp = ctx;
    lock_t *other = hit->owner;
    if (other->mark != *stamp && modes_conflict(hit->mode, probe->mode)) {
        other->mark = *stamp;
        if (LOCK_HELD == other->state) {
            probe->owner->held_blockers++;
        } else {
            probe->owner->queued_blockers++;
        }
    }
}

int mca_common_sfio_lockq_submit(mca_common_sfio_lockq_t *q,
                                 const mca_common_sfio_lockq_request_t *req,
                                 grants_t *grants_p)
{
    int rc = mca_common_sfio_lockq_ranges_verify(req->ranges, req->nranges);
    if (0 == rc) {
        rc = check_admission(q, req);
    }
    if (0 == rc) {
        rc = grants_reserve(grants_p, 1);
    }
    if (0 == rc && NULL == client_find(q, req->client)) {
        rc = clients_reserve_one(q);
    }
    if (0 != rc) {
        return rc;
    }
    lock_t *l = calloc(1, sizeof(*l));
    node_t *nodes = calloc(req->nranges > 0 ? req->nranges : 1, sizeof(*nodes));
    if (NULL == l || NULL == nodes) {
        free(l);
        free(nodes);
        return -ENOMEM;
    }
    *l = (lock_t) { .client = req->client, .request = req->request, .seq = q->next_seq++,
                    .nranges = req->nranges, .nodes = nodes, .state = LOCK_QUEUED };

    uint64_t stamp = ++q->stamp;
    for (size_t i = 0; i < req->nranges; ++i) {
        node_t *n = &nodes[i];
        *n = (node_t) { .offset = req->ranges[i].offset,
                        .end = req->ranges[i].offset + req->ranges[i].length,
                        .mode = req->ranges[i].mode, .index = (uint32_t) i,
                        .prio = next_prio(q), .owner = l };
        treap_visit_overlaps(q->root, n, count_blocker, &stamp);
    }
    /* Inserted after counting: a list's ranges are disjoint, so it would
     * not block itself, but the visits stay smaller this way. */
    for (size_t i = 0; i < req->nranges; ++i) {
        q->root = treap_insert(q->root, &nodes[i]);
    }

    client_t *c = client_find(q, req->client);
    if (NULL == c) {
        c = client_add(q, req->client);
    }
    l->next_of_client = c->lists;
    if (NULL != c->lists) {
        c->lists->prev_of_client = l;
    }
    c->lists = l;
    c->nlists++;
    c->nranges += req->nranges;
    q->ranges += req->nranges;
    q->queued++;
    if (grantable(q, l)) {
        grant(q, l, true, grants_p);
    }
    return 0;
}

/* ---- release and drop ------------------------------------------------- */

typedef struct {
    mca_common_sfio_lockq_t *q;
    const lock_t *leaving;
    uint64_t stamp, call;
    size_t nready;
} unblock_ctx_t;

/* A held list leaving was counted by every list it conflicts with (all
 * queued); a queued one only by the later queued ones. */
static void unblock_dependent(node_t *hit, const node_t *probe, void *ctx)
{
    unblock_ctx_t *u = ctx;
    lock_t *d = hit->owner;
    if (d->mark == u->stamp || !modes_conflict(hit->mode, probe->mode)) {
        return;
    }
    if (u->leaving->was_held) {
        d->held_blockers--;
    } else if (d->seq > u->leaving->seq && LOCK_QUEUED == d->state) {
        d->queued_blockers--;
    } else {
        return;
    }
    d->mark = u->stamp;
    if (d->candidate != u->call) {
        d->candidate = u->call;
        u->q->ready[u->nready++] = d;
    }
}

static void lock_unlink_from_client(mca_common_sfio_lockq_t *q, lock_t *l)
{
    client_t *c = client_find(q, l->client);
    if (NULL != l->prev_of_client) {
        l->prev_of_client->next_of_client = l->next_of_client;
    } else {
        c->lists = l->next_of_client;
    }
    if (NULL != l->next_of_client) {
        l->next_of_client->prev_of_client = l->prev_of_client;
    }
    c->nlists--;
    c->nranges -= l->nranges;
    q->ranges -= l->nranges;
    if (LOCK_HELD == l->state) {
        q->held--;
    } else {
        q->queued--;
    }
}

static int by_seq(const void *a, const void *b)
{
    uint64_t x = (*(lock_t *const *) a)->seq, y = (*(lock_t *const *) b)->seq;
    return x < y ? -1 : x > y;
}

/* Removes the lists of `leaving` (linked by next_of_client, already
 * unlinked from their client) and grants what that unblocks.  All of them
 * leave the tree before any dependent is counted down, so a list that
 * leaves together with its blocker is never granted.  Granting only adds
 * held lists, so one pass in arrival order over the lists whose counts
 * went down finds every grant. */
static void remove_lists(mca_common_sfio_lockq_t *q, lock_t *leaving, grants_t *g)
{
    unblock_ctx_t u = { .q = q, .call = ++q->stamp };
    for (lock_t *l = leaving; NULL != l; l = l->next_of_client) {
        for (size_t i = 0; i < l->nranges; ++i) {
            q->root = treap_erase(q->root, &l->nodes[i]);
        }
    }
    for (lock_t *l = leaving; NULL != l; l = l->next_of_client) {
        u.leaving = l;
        u.stamp = ++q->stamp;
        for (size_t i = 0; i < l->nranges; ++i) {
            treap_visit_overlaps(q->root, &l->nodes[i], unblock_dependent, &u);
        }
    }
    qsort(q->ready, u.nready, sizeof(*q->ready), by_seq);
    for (size_t i = 0; i < u.nready; ++i) {
        if (grantable(q, q->ready[i])) {
            grant(q, q->ready[i], false, g);
        }
    }
    while (NULL != leaving) {
        lock_t *next = leaving->next_of_client;
        free(leaving->nodes);
        free(leaving);
        leaving = next;
    }
}

int mca_common_sfio_lockq_release(mca_common_sfio_lockq_t *q, uint64_t client,
                                  uint64_t request, grants_t *grants_p)
{
    lock_t *l = lock_find(q, client, request);
    if (NULL == l) {
        return -ENOENT;
    }
    int rc = reserve_for_release(q, grants_p);
    if (0 != rc) {
        return rc;
    }
    lock_unlink_from_client(q, l);
    client_remove_if_idle(q, client);
    l->was_held = LOCK_HELD == l->state;
    l->state = LOCK_LEAVING;
    l->next_of_client = l->prev_of_client = NULL;
    remove_lists(q, l, grants_p);
    return 0;
}

int mca_common_sfio_lockq_drop_client(mca_common_sfio_lockq_t *q, uint64_t client,
                                      grants_t *grants_p)
{
    client_t *c = client_find(q, client);
    if (NULL == c) {
        return 0;
    }
    int rc = reserve_for_release(q, grants_p);
    if (0 != rc) {
        return rc;
    }
    lock_t *leaving = c->lists;
    for (lock_t *l = leaving; NULL != l; l = l->next_of_client) {
        if (LOCK_HELD == l->state) {
            q->held--;
        } else {
            q->queued--;
        }
        q->ranges -= l->nranges;
        l->was_held = LOCK_HELD == l->state;
        l->state = LOCK_LEAVING;
    }
    c->lists = NULL;
    c->nlists = 0;
    c->nranges = 0;
    client_remove_if_idle(q, client);
    remove_lists(q, leaving, grants_p);
    return 0;
}

/* ---- the rest --------------------------------------------------------- */

void mca_common_sfio_lockq_grants_init(grants_t *grants)
{
    *grants = (grants_t) { 0 };
}

void mca_common_sfio_lockq_grants_destroy(grants_t *grants)
{
    free(grants->grants);
    mca_common_sfio_lockq_grants_init(grants);
}

int mca_common_sfio_lockq_create(const mca_common_sfio_lockq_limits_t *limits,
                                 mca_common_sfio_lockq_t **q_p)
{
    if (0 == limits->max_clients || 0 == limits->max_lists_per_client
        || 0 == limits->max_ranges_per_client) {
        return -EINVAL;
    }
    mca_common_sfio_lockq_t *q = calloc(1, sizeof(*q));
    if (NULL == q) {
        return -ENOMEM;
    }
    q->limits = *limits;
    *q_p = q;
    return 0;
}

void mca_common_sfio_lockq_destroy(mca_common_sfio_lockq_t *q)
{
    if (NULL == q) {
        return;
    }
    for (size_t i = 0; i < q->nclients; ++i) {
        lock_t *l = q->clients[i].lists;
        while (NULL != l) {
            lock_t *next = l->next_of_client;
            free(l->nodes);
            free(l);
            l = next;
        }
    }
    free(q->clients);
    free(q->ready);
    free(q);
}

int mca_common_sfio_lockq_state(const mca_common_sfio_lockq_t *q, uint64_t client,
                                uint64_t request, mca_common_sfio_lockq_state_t *state_p)
{
    const lock_t *l = lock_find(q, client, request);
    if (NULL == l) {
        return -ENOENT;
    }
    *state_p = LOCK_HELD == l->state ? MCA_COMMON_SFIO_LOCKQ_HELD : MCA_COMMON_SFIO_LOCKQ_QUEUED;
    return 0;
}

void mca_common_sfio_lockq_stats(const mca_common_sfio_lockq_t *q,
                                 mca_common_sfio_lockq_stats_t *stats_p)
{
    *stats_p = (mca_common_sfio_lockq_stats_t) { .held = q->held, .queued = q->queued,
                                                 .ranges = q->ranges, .clients = q->nclients,
                                                 .granted = q->granted, .waited = q->waited,
                                                 .overtakes = q->overtakes };
}

/* ---- verify ----------------------------------------------------------- */

/* Checks order, heap and subtree ends; counts nodes.  -EINVAL on a fault. */
static int verify_tree(const node_t *t, const node_t **prev, size_t *count)
{
    if (NULL == t) {
        return 0;
    }
    uint64_t max_end = t->end;
    if (NULL != t->left) {
        max_end = t->left->max_end > max_end ? t->left->max_end : max_end;
        if (t->left->prio > t->prio) {
            return -EINVAL;
        }
    }
    if (NULL != t->right) {
        max_end = t->right->max_end > max_end ? t->right->max_end : max_end;
        if (t->right->prio > t->prio) {
            return -EINVAL;
        }
    }
    if (max_end != t->max_end || t->end <= t->offset || LOCK_LEAVING == t->owner->state) {
        return -EINVAL;
    }
    if (0 != verify_tree(t->left, prev, count)) {
        return -EINVAL;
    }
    if (NULL != *prev && !node_before(*prev, t)) {
        return -EINVAL;
    }
    *prev = t;
    ++*count;
    return verify_tree(t->right, prev, count);
}

static bool lists_conflict(const lock_t *a, const lock_t *b)
{
    for (size_t i = 0; i < a->nranges; ++i) {
        for (size_t k = 0; k < b->nranges; ++k) {
            const node_t *x = &a->nodes[i], *y = &b->nodes[k];
            if (x->offset < y->end && y->offset < x->end && modes_conflict(x->mode, y->mode)) {
                return true;
            }
        }
    }
    return false;
}

static int verify_lists(const mca_common_sfio_lockq_t *q, size_t *nlists_p, size_t *nranges_p,
                        size_t *nheld_p)
{
    for (size_t i = 0; i < q->nclients; ++i) {
        const client_t *c = &q->clients[i];
        size_t lists = 0, ranges = 0;
        if (0 == c->nlists || (i > 0 && q->clients[i - 1].id >= c->id)) {
            return -EINVAL;
        }
        for (const lock_t *l = c->lists; NULL != l; l = l->next_of_client) {
            size_t held_by = 0, queued_before = 0;
            bool exhausted_before = false;
            for (size_t j = 0; j < q->nclients; ++j) {
                for (const lock_t *m = q->clients[j].lists; NULL != m; m = m->next_of_client) {
                    if (m == l || !lists_conflict(m, l)) {
                        continue;
                    }
                    if (LOCK_HELD == m->state) {
                        held_by++;
                    } else if (m->seq < l->seq) {
                        queued_before++;
                        exhausted_before |= m->overtaken >= q->limits.max_overtakes;
                    }
                }
            }
            bool held = LOCK_HELD == l->state;
            bool may_go = 0 == held_by && !exhausted_before;
            if (l->client != c->id || l->overtaken > q->limits.max_overtakes
                || (held && (0 != held_by || 0 != l->held_blockers || 0 != l->queued_blockers))
                || (!held && (held_by != l->held_blockers || queued_before != l->queued_blockers
                              || may_go))) {
                return -EINVAL;
            }
            lists++;
            ranges += l->nranges;
            *nheld_p += LOCK_HELD == l->state;
        }
        if (lists != c->nlists || ranges != c->nranges) {
            return -EINVAL;
        }
        *nlists_p += lists;
        *nranges_p += ranges;
    }
    return 0;
}

int mca_common_sfio_lockq_verify(const mca_common_sfio_lockq_t *q)
{
    const node_t *prev = NULL;
    size_t nodes = 0, lists = 0, ranges = 0, held = 0;
    if (0 != verify_tree(q->root, &prev, &nodes)
        || 0 != verify_lists(q, &lists, &ranges, &held)) {
        return -EINVAL;
    }
    if (nodes != q->ranges || ranges != q->ranges || held != q->held
        || lists != q->held + q->queued || q->nclients > q->limits.max_clients) {
        return -EINVAL;
    }
    return 0;
}
