/*
 * Unit tests of sfio_lockq, the list-lock manager's queue: argument and
 * limit errors, a killed holder, FIFO behind a queued writer, lists of
 * thousands of ranges, and seeded random runs (random clients submitting
 * random overlapping lists, releasing and dying in random order) compared
 * after every event with a brute-force model:
 *   the queue in arrival order; after each event, grant in order every
 *   queued list that conflicts with no held list and with no earlier list
 *   still queued that has been overtaken max_overtakes times (0: strict
 *   FIFO), counting one overtaking for each earlier queued list it
 *   conflicts with.
 * After every event: the grants equal the model's exactly (same lists,
 * same order), the queue's invariants hold (verify), and a byte map of
 * the held lists shows no byte held exclusive together with any other
 * holder.  Each run ends by releasing held lists until nothing is left:
 * every list is granted (no deadlock).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sfio_check.h"
#include "sfio_lockq.h"

typedef mca_common_sfio_lockq_t lockq_t;
typedef mca_common_sfio_lockq_range_t range_t;
typedef mca_common_sfio_lockq_grants_t grants_t;
typedef mca_common_sfio_lockq_request_t request_t;

#define SH MCA_COMMON_SFIO_LOCKQ_SHARED
#define EX MCA_COMMON_SFIO_LOCKQ_EXCLUSIVE
#define VERIFY(q) REQUIRE(0 == mca_common_sfio_lockq_verify(q))

static const mca_common_sfio_lockq_limits_t roomy = { 1024, 64, 1u << 20 };

static lockq_t *new_queue(const mca_common_sfio_lockq_limits_t *limits)
{
    lockq_t *q = NULL;
    ck_assert_int_eq(0, mca_common_sfio_lockq_create(limits, &q));
    return q;
}

static int submit(lockq_t *q, uint64_t client, uint64_t req, const range_t *r, size_t n,
                  grants_t *g)
{
    request_t rq = { client, req, r, n };
    int rc = mca_common_sfio_lockq_submit(q, &rq, g);
    VERIFY(q);
    return rc;
}

static bool is_held(const lockq_t *q, uint64_t client, uint64_t req)
{
    mca_common_sfio_lockq_state_t st;
    return 0 == mca_common_sfio_lockq_state(q, client, req, &st)
           && MCA_COMMON_SFIO_LOCKQ_HELD == st;
}

static void expect_grants(grants_t *g, const uint64_t (*want)[2], size_t n)
{
    ck_assert_uint_eq(g->count, n);
    for (size_t i = 0; i < n; ++i) {
        ck_assert_uint_eq(g->grants[i].client, want[i][0]);
        ck_assert_uint_eq(g->grants[i].request, want[i][1]);
    }
    g->count = 0;
}

/* ---- fixed cases ------------------------------------------------------ */

START_TEST(bad_lists_and_limits)
{
    mca_common_sfio_lockq_limits_t lim = { 2, 2, 3 };
    lockq_t *q = new_queue(&lim);
    grants_t g;
    mca_common_sfio_lockq_grants_init(&g);
    range_t unsorted[2] = { { 10, 5, EX }, { 0, 5, EX } };
    range_t overlap[2] = { { 0, 6, EX }, { 5, 5, SH } };
    range_t empty[1] = { { 3, 0, EX } };
    range_t wraps[1] = { { UINT64_MAX - 1, 2, EX } };
    range_t badmode[1] = { { 0, 1, 7 } };
    range_t touching[2] = { { 0, 5, SH }, { 5, 5, EX } };
    range_t whole[1] = { { 0, UINT64_MAX, EX } };

    ck_assert_int_eq(-EINVAL, submit(q, 1, 1, unsorted, 2, &g));
    ck_assert_int_eq(-EINVAL, submit(q, 1, 1, overlap, 2, &g));
    ck_assert_int_eq(-EINVAL, submit(q, 1, 1, empty, 1, &g));
    ck_assert_int_eq(-EINVAL, submit(q, 1, 1, wraps, 1, &g));
    ck_assert_int_eq(-EINVAL, submit(q, 1, 1, badmode, 1, &g));
    ck_assert_uint_eq(g.count, 0);

    ck_assert_int_eq(0, submit(q, 1, 1, touching, 2, &g));
    expect_grants(&g, (const uint64_t[][2]) { { 1, 1 } }, 1);
    ck_assert_int_eq(-EEXIST, submit(q, 1, 1, touching, 2, &g));
    ck_assert_int_eq(0, submit(q, 1, 2, whole, 1, &g));        /* waits for itself */
    ck_assert(!is_held(q, 1, 2));
    ck_assert_int_eq(-ENOSPC, submit(q, 1, 3, whole, 1, &g));  /* lists per client */
    ck_assert_int_eq(0, submit(q, 2, 1, touching, 2, &g));
    ck_assert_int_eq(-ENOSPC, submit(q, 2, 2, touching, 2, &g)); /* ranges per client */
    ck_assert_int_eq(-ENOSPC, submit(q, 3, 1, whole, 1, &g));  /* clients */
    ck_assert_int_eq(-ENOENT, mca_common_sfio_lockq_release(q, 3, 1, &g));
    ck_assert_int_eq(-ENOENT, mca_common_sfio_lockq_release(q, 1, 9, &g));
    ck_assert_int_eq(0, mca_common_sfio_lockq_drop_client(q, 77, &g));
    ck_assert_uint_eq(g.count, 0);     /* (1,2) and (2,1) wait for (1,1) */
    mca_common_sfio_lockq_destroy(q);  /* frees live lists */
    mca_common_sfio_lockq_grants_destroy(&g);

    lim.max_clients = 0;
    lockq_t *none = NULL;
    ck_assert_int_eq(-EINVAL, mca_common_sfio_lockq_create(&lim, &none));
}
END_TEST

/* A holder dies with a list queued behind it and one of its own lists
 * queued: the others get the lock, its own queued list goes. */
START_TEST(killed_holder_releases)
{
    lockq_t *q = new_queue(&roomy);
    grants_t g;
    mca_common_sfio_lockq_grants_init(&g);
    range_t a[2] = { { 0, 100, EX }, { 200, 10, EX } };
    range_t b[1] = { { 50, 10, SH } };
    range_t c[1] = { { 205, 1, SH } };
    range_t other[1] = { { 1000, 1, EX } };

    ck_assert_int_eq(0, submit(q, 7, 1, a, 2, &g));
    ck_assert_int_eq(0, submit(q, 8, 1, b, 1, &g));
    ck_assert_int_eq(0, submit(q, 9, 1, c, 1, &g));
    ck_assert_int_eq(0, submit(q, 7, 2, a, 2, &g));    /* queued behind 8 and 9 */
    ck_assert_int_eq(0, submit(q, 7, 3, other, 1, &g));
    expect_grants(&g, (const uint64_t[][2]) { { 7, 1 }, { 7, 3 } }, 2);

    ck_assert_int_eq(0, mca_common_sfio_lockq_drop_client(q, 7, &g));
    VERIFY(q);
    expect_grants(&g, (const uint64_t[][2]) { { 8, 1 }, { 9, 1 } }, 2);
    mca_common_sfio_lockq_stats_t st;
    mca_common_sfio_lockq_stats(q, &st);
    ck_assert_uint_eq(st.held, 2);
    ck_assert_uint_eq(st.queued, 0);
    ck_assert_uint_eq(st.clients, 2);
    ck_assert_int_eq(0, mca_common_sfio_lockq_drop_client(q, 7, &g));   /* again: no-op */
    ck_assert_uint_eq(g.count, 0);
    mca_common_sfio_lockq_destroy(q);
    mca_common_sfio_lockq_grants_destroy(&g);
}
END_TEST

/* Readers hold; a writer queues; a later reader that could share with the
 * holders waits behind the writer (no writer starvation); a list that
 * touches neither overtakes. */
START_TEST(fifo_behind_queued_writer)
{
    lockq_t *q = new_queue(&roomy);
    grants_t g;
    mca_common_sfio_lockq_grants_init(&g);
    range_t rd[1] = { { 0, 10, SH } }, wr[1] = { { 5, 1, EX } }, far[1] = { { 20, 5, EX } };

    ck_assert_int_eq(0, submit(q, 1, 1, rd, 1, &g));
    ck_assert_int_eq(0, submit(q, 2, 1, rd, 1, &g));
    ck_assert_int_eq(0, submit(q, 3, 1, wr, 1, &g));
    ck_assert_int_eq(0, submit(q, 4, 1, rd, 1, &g));
    ck_assert_int_eq(0, submit(q, 5, 1, far, 1, &g));
    expect_grants(&g, (const uint64_t[][2]) { { 1, 1 }, { 2, 1 }, { 5, 1 } }, 3);
    ck_assert_int_eq(0, mca_common_sfio_lockq_release(q, 1, 1, &g));
    ck_assert_uint_eq(g.count, 0);
    ck_assert_int_eq(0, mca_common_sfio_lockq_release(q, 2, 1, &g));
    VERIFY(q);
    expect_grants(&g, (const uint64_t[][2]) { { 3, 1 } }, 1);
    /* withdrawing the queued reader grants nothing and frees it */
    ck_assert_int_eq(0, mca_common_sfio_lockq_release(q, 4, 1, &g));
    ck_assert_uint_eq(g.count, 0);
    ck_assert_int_eq(0, mca_common_sfio_lockq_release(q, 3, 1, &g));
    ck_assert_int_eq(0, mca_common_sfio_lockq_release(q, 5, 1, &g));
    VERIFY(q);
    mca_common_sfio_lockq_stats_t st;
    mca_common_sfio_lockq_stats(q, &st);
    ck_assert_uint_eq(st.held + st.queued + st.ranges + st.clients, 0);
    mca_common_sfio_lockq_destroy(q);
    mca_common_sfio_lockq_grants_destroy(&g);
}
END_TEST

/* Eight tiles in a row, each overlapping its neighbours, asked for in
 * order: strict FIFO grants them one after another; with one overtaking
 * allowed the even tiles go at once and the odd ones when both
 * neighbours are done. */
START_TEST(row_of_tiles)
{
    enum { TILES = 8 };
    for (size_t k = 0; k <= 1; ++k) {
        mca_common_sfio_lockq_limits_t lim = roomy;
        lim.max_overtakes = k;
        lockq_t *q = new_queue(&lim);
        grants_t g;
        mca_common_sfio_lockq_grants_init(&g);
        size_t held_at_once = 0;
        for (uint64_t t = 0; t < TILES; ++t) {
            range_t r[2] = { { t * 100, 60, EX }, { 10000 + t * 100, 110, EX } };
            ck_assert_int_eq(0, submit(q, t, 1, r, 2, &g));
        }
        held_at_once = g.count;
        for (size_t i = 0; i < g.count; ++i) ck_assert_uint_eq(g.grants[i].client % 2, 0);
        g.count = 0;
        ck_assert_uint_eq(held_at_once, 0 == k ? 1 : TILES / 2);
        size_t rounds = 1;
        while (held_at_once < TILES) {
            /* the lists held now all finish; count what that grants */
            bool was[TILES];
            for (uint64_t t = 0; t < TILES; ++t) was[t] = is_held(q, t, 1);
            for (uint64_t t = 0; t < TILES; ++t)
                if (was[t]) ck_assert_int_eq(0, mca_common_sfio_lockq_release(q, t, 1, &g));
            held_at_once += g.count;
            g.count = 0;
            rounds++;
        }
        ck_assert_uint_eq(rounds, 0 == k ? TILES : 2);
        mca_common_sfio_lockq_stats_t st;
        mca_common_sfio_lockq_stats(q, &st);
        ck_assert_uint_eq(st.granted, TILES);
        ck_assert_uint_eq(st.waited, 0 == k ? TILES - 1 : TILES / 2);
        ck_assert_uint_eq(st.overtakes, 0 == k ? 0 : TILES / 2 - 1);
        mca_common_sfio_lockq_destroy(q);
        mca_common_sfio_lockq_grants_destroy(&g);
    }
}
END_TEST

/* A queued writer may be overtaken max_overtakes times, then every later
 * conflicting list waits behind it. */
START_TEST(overtaking_is_bounded)
{
    mca_common_sfio_lockq_limits_t lim = roomy;
    lim.max_overtakes = 2;
    lockq_t *q = new_queue(&lim);
    grants_t g;
    mca_common_sfio_lockq_grants_init(&g);
    range_t left[1] = { { 0, 10, EX } }, wide[1] = { { 0, 30, EX } };
    range_t right[1] = { { 20, 10, SH } };

    ck_assert_int_eq(0, submit(q, 1, 1, left, 1, &g));      /* held */
    ck_assert_int_eq(0, submit(q, 2, 1, wide, 1, &g));      /* queued behind 1 */
    ck_assert_int_eq(0, submit(q, 3, 1, right, 1, &g));     /* overtakes 2 */
    ck_assert_int_eq(0, submit(q, 4, 1, right, 1, &g));     /* overtakes 2 again */
    ck_assert_int_eq(0, submit(q, 5, 1, right, 1, &g));     /* waits for 2 */
    expect_grants(&g, (const uint64_t[][2]) { { 1, 1 }, { 3, 1 }, { 4, 1 } }, 3);
    ck_assert_int_eq(0, mca_common_sfio_lockq_release(q, 1, 1, &g));
    ck_assert_int_eq(0, mca_common_sfio_lockq_release(q, 3, 1, &g));
    ck_assert_uint_eq(g.count, 0);                           /* 4 still reads */
    ck_assert_int_eq(0, mca_common_sfio_lockq_release(q, 4, 1, &g));
    expect_grants(&g, (const uint64_t[][2]) { { 2, 1 } }, 1);
    ck_assert_int_eq(0, mca_common_sfio_lockq_release(q, 2, 1, &g));
    expect_grants(&g, (const uint64_t[][2]) { { 5, 1 } }, 1);
    mca_common_sfio_lockq_destroy(q);
    mca_common_sfio_lockq_grants_destroy(&g);
}
END_TEST

/* Lists of thousands of ranges, interleaved (a strided write against the
 * strided writes of others): only the conflicting ones wait. */
START_TEST(thousands_of_ranges)
{
    enum { CLIENTS = 64, RANGES = 4096 };
    lockq_t *q = new_queue(&roomy);
    grants_t g;
    mca_common_sfio_lockq_grants_init(&g);
    range_t *r = malloc(RANGES * sizeof(*r));
    /* client c locks byte c of every 64-byte period: all disjoint */
    for (uint64_t c = 0; c < CLIENTS; ++c) {
        for (size_t i = 0; i < RANGES; ++i) {
            r[i] = (range_t) { i * CLIENTS + c, 1, EX };
        }
        ck_assert_int_eq(0, mca_common_sfio_lockq_submit(q, &(request_t) { c, 1, r, RANGES }, &g));
    }
    ck_assert_uint_eq(g.count, CLIENTS);
    g.count = 0;
    /* a second round, shifted by one byte: each list meets its neighbour's */
    for (uint64_t c = 0; c < CLIENTS; ++c) {
        for (size_t i = 0; i < RANGES; ++i) {
            r[i] = (range_t) { i * CLIENTS + (c + 1) % CLIENTS, 1, EX };
        }
        ck_assert_int_eq(0, mca_common_sfio_lockq_submit(q, &(request_t) { c, 2, r, RANGES }, &g));
    }
    ck_assert_uint_eq(g.count, 0);
    for (uint64_t c = 0; c < CLIENTS; ++c) {
        ck_assert_int_eq(0, mca_common_sfio_lockq_release(q, c, 1, &g));
        ck_assert_uint_eq(g.count, 1);
        ck_assert_uint_eq(g.grants[0].client, (c + CLIENTS - 1) % CLIENTS);
        g.count = 0;
    }
    for (uint64_t c = 0; c < CLIENTS; ++c) {
        ck_assert_int_eq(0, mca_common_sfio_lockq_release(q, c, 2, &g));
    }
    mca_common_sfio_lockq_stats_t st;
    mca_common_sfio_lockq_stats(q, &st);
    ck_assert_uint_eq(st.ranges, 0);
    free(r);
    mca_common_sfio_lockq_destroy(q);
    mca_common_sfio_lockq_grants_destroy(&g);
}
END_TEST

/* ---- allocation failures ---------------------------------------------- */

/* The suite links with --wrap for malloc, calloc and realloc: calls from
 * the queue (a static convenience library) and from this file come here;
 * Check's own calls do not.  With fail_from = n >= 0 the next n
 * allocations succeed and every later one fails, until fail_from = -1. */
void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
static long fail_from = -1;

static bool allocation_fails(void)
{
    if (fail_from < 0) return false;
    if (0 == fail_from) return true;
    fail_from--;
    return false;
}

void *__wrap_malloc(size_t size)
{
    return allocation_fails() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return allocation_fails() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
    return allocation_fails() ? NULL : __real_realloc(p, size);
}

/* Holders 1 and 2 (shared), writer 3 queued, reader 4 queued behind it,
 * writer 5 apart and held. */
static const range_t fx_rd[1] = { { 0, 10, SH } }, fx_wr[1] = { { 5, 1, EX } },
                     fx_far[1] = { { 20, 5, EX } };

static lockq_t *fixture(void)
{
    lockq_t *q = new_queue(&roomy);
    grants_t g;
    mca_common_sfio_lockq_grants_init(&g);
    ck_assert_int_eq(0, submit(q, 1, 1, fx_rd, 1, &g));
    ck_assert_int_eq(0, submit(q, 2, 1, fx_rd, 1, &g));
    ck_assert_int_eq(0, submit(q, 3, 1, fx_wr, 1, &g));
    ck_assert_int_eq(0, submit(q, 4, 1, fx_rd, 1, &g));
    ck_assert_int_eq(0, submit(q, 5, 1, fx_far, 1, &g));
    mca_common_sfio_lockq_grants_destroy(&g);
    return q;
}

enum { OP_SUBMIT_NEW_CLIENT, OP_SUBMIT_KNOWN_CLIENT, OP_RELEASE, OP_DROP, OP_COUNT };

/* The fixture; before a release, holder 2 has left and queued again
 * behind the writer, so releasing holder 1 grants the writer. */
static lockq_t *fixture_for(int op)
{
    lockq_t *q = fixture();
    if (OP_RELEASE == op) {
        grants_t g;
        mca_common_sfio_lockq_grants_init(&g);
        ck_assert_int_eq(0, mca_common_sfio_lockq_release(q, 2, 1, &g));
        ck_assert_int_eq(0, submit(q, 2, 1, fx_rd, 1, &g));
        ck_assert_uint_eq(g.count, 0);
        mca_common_sfio_lockq_grants_destroy(&g);
    }
    return q;
}

static int run_op(lockq_t *q, int op, grants_t *g)
{
    switch (op) {
    case OP_SUBMIT_NEW_CLIENT:
        return mca_common_sfio_lockq_submit(q, &(request_t) { 9, 1, fx_far, 1 }, g);
    case OP_SUBMIT_KNOWN_CLIENT:
        return mca_common_sfio_lockq_submit(q, &(request_t) { 1, 2, fx_rd, 1 }, g);
    case OP_RELEASE:
        return mca_common_sfio_lockq_release(q, 1, 1, g);
    default:
        return mca_common_sfio_lockq_drop_client(q, 1, g);
    }
}

/* Every call that fails with -ENOMEM leaves the queue as it was: same
 * lists in the same states, invariants intact, no grant issued. */
START_TEST(enomem_leaves_queue_unchanged)
{
    static const uint64_t known[][2] = { { 1, 1 }, { 2, 1 }, { 3, 1 }, { 4, 1 }, { 5, 1 },
                                         { 9, 1 }, { 1, 2 } };
    for (int op = 0; op < OP_COUNT; ++op) {
        long failures = 0;
        for (long n = 0;; ++n) {
            lockq_t *q = fixture_for(op);
            mca_common_sfio_lockq_state_t before[7];
            int present[7];
            for (int k = 0; k < 7; ++k)
                present[k] = mca_common_sfio_lockq_state(q, known[k][0], known[k][1], &before[k]);
            grants_t g;
            mca_common_sfio_lockq_grants_init(&g);
            fail_from = n;
            int rc = run_op(q, op, &g);
            fail_from = -1;
            if (0 == rc) {
                mca_common_sfio_lockq_grants_destroy(&g);
                mca_common_sfio_lockq_destroy(q);
                break;
            }
            ck_assert_int_eq(-ENOMEM, rc);
            ++failures;
            VERIFY(q);
            ck_assert_uint_eq(g.count, 0);
            for (int k = 0; k < 7; ++k) {
                mca_common_sfio_lockq_state_t now;
                int rc_now = mca_common_sfio_lockq_state(q, known[k][0], known[k][1], &now);
                ck_assert_int_eq(rc_now, present[k]);
                if (0 == rc_now) ck_assert_int_eq(now, before[k]);
            }
            mca_common_sfio_lockq_grants_destroy(&g);
            mca_common_sfio_lockq_destroy(q);
        }
        ck_assert_int_gt(failures, 0);   /* the call did allocate: the path ran */
    }
}
END_TEST

/* ---- random runs against the brute-force model ------------------------- */

#define SPACE 192            /* bytes of the toy file */
#define MAXR 6               /* ranges per list */
#define MAXLISTS 4096

typedef struct {
    uint64_t client, request, seq;
    range_t r[MAXR];
    size_t n;
    bool live, held;
    size_t ovt;             /* times overtaken */
} mlist_t;

typedef struct {
    mlist_t l[MAXLISTS];
    size_t n;               /* lists ever submitted, in arrival order */
    uint64_t want[MAXLISTS][2];
    size_t nwant;           /* grants of the current event */
    size_t max_overtakes;
} model_t;

static bool mlists_conflict(const mlist_t *a, const mlist_t *b)
{
    for (size_t i = 0; i < a->n; ++i)
        for (size_t k = 0; k < b->n; ++k) {
            const range_t *x = &a->r[i], *y = &b->r[k];
            if (x->offset < y->offset + y->length && y->offset < x->offset + x->length
                && (EX == x->mode || EX == y->mode))
                return true;
        }
    return false;
}

static void model_grant_pass(model_t *m)
{
    for (size_t i = 0; i < m->n; ++i) {
        mlist_t *l = &m->l[i];
        if (!l->live || l->held) continue;
        bool blocked = false;
        for (size_t k = 0; k < m->n && !blocked; ++k) {
            const mlist_t *o = &m->l[k];
            /* held, or queued earlier and overtaken often enough */
            bool ahead = o->held || (k < i && o->ovt >= m->max_overtakes);
            blocked = k != i && o->live && ahead && mlists_conflict(o, l);
        }
        if (!blocked) {
            for (size_t k = 0; k < i; ++k) {
                mlist_t *o = &m->l[k];
                if (o->live && !o->held && mlists_conflict(o, l)) o->ovt++;
            }
            l->held = true;
            m->want[m->nwant][0] = l->client;
            m->want[m->nwant][1] = l->request;
            m->nwant++;
        }
    }
}

/* A random sorted list of disjoint (maybe touching) ranges in SPACE. */
static size_t random_list(range_t *r)
{
    size_t n = 0, want = 1 + rnd_below(MAXR);
    uint64_t at = rnd_below(SPACE / 2);
    while (n < want && at < SPACE) {
        uint64_t len = 1 + rnd_below(rnd_below(4) ? 8 : 48);
        if (at + len > SPACE) len = SPACE - at;
        r[n++] = (range_t) { at, len, rnd_below(3) ? EX : SH };
        at += len + (rnd_below(3) ? rnd_below(24) : 0);
    }
    return n;
}

/* No byte held exclusive together with another holder, from the queue's
 * own answers. */
static void check_safety(const lockq_t *q, const model_t *m)
{
    int shared[SPACE] = { 0 }, excl[SPACE] = { 0 };
    for (size_t i = 0; i < m->n; ++i) {
        const mlist_t *l = &m->l[i];
        if (!l->live || !is_held(q, l->client, l->request)) continue;
        for (size_t k = 0; k < l->n; ++k)
            for (uint64_t b = l->r[k].offset; b < l->r[k].offset + l->r[k].length; ++b)
                (EX == l->r[k].mode ? excl : shared)[b]++;
    }
    for (int b = 0; b < SPACE; ++b)
        REQUIRE(excl[b] <= 1 && (0 == excl[b] || 0 == shared[b]));
}

/* The queue's grants of one event equal the model's; states agree. */
static void compare(const lockq_t *q, model_t *m, grants_t *g)
{
    REQUIRE(g->count == m->nwant);
    for (size_t i = 0; i < g->count; ++i) {
        REQUIRE(g->grants[i].client == m->want[i][0]);
        REQUIRE(g->grants[i].request == m->want[i][1]);
    }
    g->count = 0;
    m->nwant = 0;
    for (size_t i = 0; i < m->n; ++i) {
        const mlist_t *l = &m->l[i];
        mca_common_sfio_lockq_state_t st;
        int rc = mca_common_sfio_lockq_state(q, l->client, l->request, &st);
        REQUIRE(l->live ? 0 == rc : -ENOENT == rc);
        REQUIRE(!l->live || (MCA_COMMON_SFIO_LOCKQ_HELD == st) == l->held);
    }
    VERIFY(q);
    check_safety(q, m);
}

static mlist_t *random_live(model_t *m, bool held_only)
{
    size_t live = 0;
    for (size_t i = 0; i < m->n; ++i) live += m->l[i].live && (!held_only || m->l[i].held);
    if (0 == live) return NULL;
    size_t pick = rnd_below(live);
    for (size_t i = 0; i < m->n; ++i)
        if (m->l[i].live && (!held_only || m->l[i].held) && 0 == pick--) return &m->l[i];
    return NULL;
}

/* Submits a random list; a client at its limit of live lists (the only
 * limit these runs reach) must get -ENOSPC and change nothing. */
static void event_submit(lockq_t *q, model_t *m, uint64_t nclients, size_t max_lists,
                         grants_t *g)
{
    mlist_t *l = &m->l[m->n];
    *l = (mlist_t) { .client = rnd_below(nclients), .request = m->n, .seq = m->n };
    l->n = random_list(l->r);
    size_t live = 0;
    for (size_t i = 0; i < m->n; ++i) live += m->l[i].live && m->l[i].client == l->client;
    int rc = submit(q, l->client, l->request, l->r, l->n, g);
    if (live >= max_lists) {
        REQUIRE(-ENOSPC == rc);
        return;
    }
    REQUIRE(0 == rc);
    l->live = true;
    m->n++;
    model_grant_pass(m);
}

static void event_release(lockq_t *q, model_t *m, grants_t *g)
{
    mlist_t *l = random_live(m, false);
    if (NULL == l) return;
    REQUIRE(0 == mca_common_sfio_lockq_release(q, l->client, l->request, g));
    l->live = l->held = false;
    model_grant_pass(m);
}

static void event_drop(lockq_t *q, model_t *m, uint64_t nclients, grants_t *g)
{
    uint64_t c = rnd_below(nclients);
    REQUIRE(0 == mca_common_sfio_lockq_drop_client(q, c, g));
    for (size_t i = 0; i < m->n; ++i)
        if (m->l[i].client == c) m->l[i].live = m->l[i].held = false;
    model_grant_pass(m);
}

/* Releases held lists until none is live; every round must hold one. */
static void drain(lockq_t *q, model_t *m, grants_t *g)
{
    for (;;) {
        mlist_t *l = random_live(m, false);
        if (NULL == l) break;
        mlist_t *h = random_live(m, true);
        REQUIRE(NULL != h);        /* something live, nothing held: deadlock */
        REQUIRE(0 == mca_common_sfio_lockq_release(q, h->client, h->request, g));
        h->live = h->held = false;
        model_grant_pass(m);
        compare(q, m, g);
    }
    mca_common_sfio_lockq_stats_t st;
    mca_common_sfio_lockq_stats(q, &st);
    REQUIRE(0 == st.held + st.queued + st.ranges + st.clients);
}

static model_t model;

static void random_run(uint64_t seed, uint64_t nclients, size_t lists_per_client,
                       size_t max_overtakes, int events)
{
    mca_common_sfio_lockq_limits_t lim = { nclients, lists_per_client, MAXR * lists_per_client,
                                           max_overtakes };
    lockq_t *q = new_queue(&lim);
    grants_t g;
    mca_common_sfio_lockq_grants_init(&g);
    memset(&model, 0, sizeof(model));
    model.max_overtakes = max_overtakes;
    rng_state = seed;
    for (int e = 0; e < events && model.n < MAXLISTS; ++e) {
        uint64_t what = rnd_below(100);
        if (what < 55) {
            event_submit(q, &model, nclients, lists_per_client, &g);
        } else if (what < 95) {
            event_release(q, &model, &g);
        } else {
            event_drop(q, &model, nclients, &g);
        }
        compare(q, &model, &g);
    }
    drain(q, &model, &g);
    mca_common_sfio_lockq_destroy(q);
    mca_common_sfio_lockq_grants_destroy(&g);
}

START_TEST(random_against_model)
{
    for (int run = 0; run < 40; ++run) {
        random_run(1000u * (uint64_t) _i + (uint64_t) run, 2 + (uint64_t) run % 7,
                   1 + (size_t) run % 3, (size_t) (run / 3) % 4, 300);
    }
}
END_TEST

/* Stress: many clients that each wait for one list at a time, as ranks
 * do: a client submits only when it holds nothing, and releases only what
 * it holds; every list is eventually granted. */
START_TEST(stress_no_deadlock)
{
    enum { CLIENTS = 48, EVENTS = 6000 };
    mca_common_sfio_lockq_limits_t lim = { CLIENTS, 1, MAXR, (size_t) _i };
    lockq_t *q = new_queue(&lim);
    grants_t g;
    mca_common_sfio_lockq_grants_init(&g);
    rng_state = 4242 + (uint64_t) _i;
    uint64_t busy[CLIENTS] = { 0 }, granted = 0, submitted = 0;
    size_t seq = 0;
    for (int e = 0; e < EVENTS; ++e) {
        uint64_t c = rnd_below(CLIENTS);
        if (0 == busy[c]) {
            range_t r[MAXR];
            size_t n = random_list(r);
            busy[c] = ++seq;
            ck_assert_int_eq(0, mca_common_sfio_lockq_submit(q, &(request_t) { c, seq, r, n }, &g));
            ++submitted;
        } else if (is_held(q, c, busy[c])) {
            ck_assert_int_eq(0, mca_common_sfio_lockq_release(q, c, busy[c], &g));
            busy[c] = 0;
        }
        granted += g.count;
        g.count = 0;
        if (0 == e % 500) VERIFY(q);
    }
    /* everyone finishes: release what is held until nothing is left */
    for (bool left = true; left;) {
        left = false;
        bool progress = false;
        for (uint64_t c = 0; c < CLIENTS; ++c) {
            if (0 == busy[c]) continue;
            left = true;
            if (is_held(q, c, busy[c])) {
                ck_assert_int_eq(0, mca_common_sfio_lockq_release(q, c, busy[c], &g));
                busy[c] = 0;
                progress = true;
            }
        }
        granted += g.count;
        g.count = 0;
        REQUIRE(!left || progress);
    }
    ck_assert_uint_eq(granted, submitted);
    VERIFY(q);
    mca_common_sfio_lockq_destroy(q);
    mca_common_sfio_lockq_grants_destroy(&g);
}
END_TEST

static Suite *lockq_suite(void)
{
    Suite *s = suite_create("sfio_lockq");
    TCase *tc = tcase_create("lockq");
    tcase_add_test(tc, bad_lists_and_limits);
    tcase_add_test(tc, killed_holder_releases);
    tcase_add_test(tc, fifo_behind_queued_writer);
    tcase_add_test(tc, row_of_tiles);
    tcase_add_test(tc, overtaking_is_bounded);
    tcase_add_test(tc, thousands_of_ranges);
    tcase_add_test(tc, enomem_leaves_queue_unchanged);
    tcase_add_loop_test(tc, random_against_model, 0, 4);
    tcase_add_loop_test(tc, stress_no_deadlock, 0, 4);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(lockq_suite)
