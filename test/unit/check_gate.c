/*
 * Unit tests for sfio_gate: the two-class gate of auto's atomic mode on
 * one node.  The steps are checked over every interleaving of a few
 * members (the classes never inside together, no deadlock, a waiting
 * class overtaken at most once); enter and leave under threads over an
 * in-memory counter; one_call against its definition.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "sfio_check.h"
#include "sfio_gate.h"

#define P MCA_COMMON_SFIO_GATE_PLAIN
#define L MCA_COMMON_SFIO_GATE_LOCKED

START_TEST(steps_by_hand)
{
    uint64_t w = 0, n;
    REQUIRE(mca_common_sfio_gate_step_enter(w, P, &n));
    w = n;
    REQUIRE(1 == mca_common_sfio_gate_inside(w, P));
    REQUIRE(mca_common_sfio_gate_step_enter(w, P, &n));   /* plain with plain */
    w = n;
    REQUIRE(2 == mca_common_sfio_gate_inside(w, P));
    REQUIRE(!mca_common_sfio_gate_step_enter(w, L, &n));  /* locked waits, asks */
    REQUIRE(mca_common_sfio_gate_wants(n, L));
    w = n;
    REQUIRE(mca_common_sfio_gate_step_enter(w, P, &n));   /* one more plain, spends the turn */
    w = n;
    REQUIRE(!mca_common_sfio_gate_step_enter(w, P, &n));  /* then plain waits */
    w = n;
    REQUIRE(mca_common_sfio_gate_wants(w, P) && mca_common_sfio_gate_wants(w, L));
    for (int i = 0; i < 3; ++i) {
        REQUIRE(!mca_common_sfio_gate_step_enter(w, L, &n));
        w = mca_common_sfio_gate_step_leave(w, P);
    }
    REQUIRE(0 == mca_common_sfio_gate_inside(w, P));
    REQUIRE(!mca_common_sfio_gate_step_enter(w, P, &n));  /* locked's turn */
    REQUIRE(mca_common_sfio_gate_step_enter(w, L, &n));
    w = n;
    REQUIRE(1 == mca_common_sfio_gate_inside(w, L) && !mca_common_sfio_gate_wants(w, L));
    REQUIRE(!mca_common_sfio_gate_step_enter(w, L, &n));  /* more locked wait: plain goes next */
    w = mca_common_sfio_gate_step_leave(w, L);
    REQUIRE(mca_common_sfio_gate_step_enter(w, P, &n));
    REQUIRE(0 == mca_common_sfio_gate_inside(n, L) && 1 == mca_common_sfio_gate_inside(n, P));
}
END_TEST

/* ---- every interleaving of a few members ------------------------------ */

#define MEMBERS 4
#define ROUNDS 2

enum { OUTSIDE = 0, INSIDE = 1, DONE = 2 };

typedef struct {
    uint64_t word;
    unsigned char where[MEMBERS], rounds[MEMBERS];
    unsigned char overtaken[2];   /* entries of the other class while this one asked */
} model_t;

static mca_common_sfio_gate_class_t class_of(const int *classes, int m)
{
    return (mca_common_sfio_gate_class_t) classes[m];
}

/* visited states: open addressing over the packed state */
#define SEEN_SIZE (1u << 20)
static uint64_t *seen_keys;
static model_t *seen_states;
static bool *seen_used;

static uint64_t key_of(const model_t *s)
{
    uint64_t k = s->word * 0x9e3779b97f4a7c15ull;
    for (int m = 0; m < MEMBERS; ++m) {
        k = (k ^ (uint64_t) (s->where[m] * 4 + s->rounds[m])) * 0x100000001b3ull;
    }
    return (k ^ s->overtaken[0] ^ ((uint64_t) s->overtaken[1] << 8)) * 0x100000001b3ull;
}

static bool visit(const model_t *s)
{
    uint64_t k = key_of(s);
    for (uint64_t i = k & (SEEN_SIZE - 1);; i = (i + 1) & (SEEN_SIZE - 1)) {
        if (!seen_used[i]) {
            seen_used[i] = true;
            seen_keys[i] = k;
            seen_states[i] = *s;
            return true;
        }
        if (seen_keys[i] == k && 0 == memcmp(&seen_states[i], s, sizeof(*s))) {
            return false;
        }
    }
}

static size_t explored;

static void explore(const model_t *s, const int *classes)
{
    if (!visit(s)) {
        return;
    }
    ++explored;
    unsigned inside[2] = { 0, 0 };
    for (int m = 0; m < MEMBERS; ++m) {
        inside[classes[m]] += INSIDE == s->where[m];
    }
    REQUIRE(inside[P] == mca_common_sfio_gate_inside(s->word, P));
    REQUIRE(inside[L] == mca_common_sfio_gate_inside(s->word, L));
    REQUIRE(0 == inside[P] || 0 == inside[L]);
    REQUIRE(s->overtaken[P] <= 1 && s->overtaken[L] <= 1);

    bool moved = false, all_done = true;
    for (int m = 0; m < MEMBERS; ++m) {
        model_t t = *s;
        mca_common_sfio_gate_class_t c = class_of(classes, m);
        mca_common_sfio_gate_class_t o = P == c ? L : P;
        if (DONE == s->where[m]) {
            continue;
        }
        all_done = false;
        if (INSIDE == s->where[m]) {
            t.word = mca_common_sfio_gate_step_leave(s->word, c);
            t.where[m] = ++t.rounds[m] == ROUNDS ? DONE : OUTSIDE;
        } else {
            uint64_t next;
            bool in = mca_common_sfio_gate_step_enter(s->word, c, &next);
            if (!in && next == s->word) {
                continue;   /* waits without changing anything */
            }
            t.word = next;
            if (in) {
                t.where[m] = INSIDE;
                t.overtaken[c] = 0;
                if (mca_common_sfio_gate_wants(s->word, o)) {
                    t.overtaken[o]++;
                }
            }
        }
        moved = true;
        explore(&t, classes);
    }
    REQUIRE(moved || all_done);   /* no deadlock */
}

START_TEST(every_interleaving)
{
    seen_keys = calloc(SEEN_SIZE, sizeof(*seen_keys));
    seen_states = calloc(SEEN_SIZE, sizeof(*seen_states));
    seen_used = calloc(SEEN_SIZE, sizeof(*seen_used));
    REQUIRE(NULL != seen_keys && NULL != seen_states && NULL != seen_used);
    /* every mix of classes over the members */
    for (int mix = 0; mix < (1 << MEMBERS); ++mix) {
        int classes[MEMBERS];
        for (int m = 0; m < MEMBERS; ++m) {
            classes[m] = (mix >> m) & 1;
        }
        memset(seen_used, 0, SEEN_SIZE * sizeof(*seen_used));
        model_t start;
        memset(&start, 0, sizeof(start));
        explored = 0;
        explore(&start, classes);
        REQUIRE(explored > 1);
    }
    free(seen_keys);
    free(seen_states);
    free(seen_used);
}
END_TEST

/* ---- enter and leave under threads ------------------------------------ */

typedef struct {
    mca_common_sfio_coord_t base;
    _Atomic int64_t slot;
} mem_coord_t;

static int mem_fetch_add(mca_common_sfio_coord_t *c, int slot, int64_t delta, int64_t *old_p)
{
    (void) slot;
    *old_p = atomic_fetch_add(&((mem_coord_t *) c)->slot, delta);
    return 0;
}

static int mem_load(mca_common_sfio_coord_t *c, int slot, int64_t *value_p)
{
    (void) slot;
    *value_p = atomic_load(&((mem_coord_t *) c)->slot);
    return 0;
}

static int mem_compare_swap(mca_common_sfio_coord_t *c, int slot, int64_t expected,
                            int64_t desired, int64_t *old_p)
{
    (void) slot;
    atomic_compare_exchange_strong(&((mem_coord_t *) c)->slot, &expected, desired);
    *old_p = expected;
    return 0;
}

static const mca_common_sfio_coord_ops_t mem_ops = {
    .name = "memory", .fetch_add = mem_fetch_add, .load = mem_load,
    .compare_swap = mem_compare_swap,
};

static mem_coord_t mem = { .base = { .ops = &mem_ops } };
static mca_common_sfio_gate_t gate = { .coord = &mem.base, .slot = 0 };
static _Atomic int inside_now[2];
static _Atomic int violations;
static _Atomic uint64_t entries[2];

#define THREAD_ROUNDS 20000

static void *member(void *arg)
{
    mca_common_sfio_gate_class_t c = (mca_common_sfio_gate_class_t) (intptr_t) arg;
    mca_common_sfio_gate_class_t o = P == c ? L : P;
    for (int i = 0; i < THREAD_ROUNDS; ++i) {
        if (0 != mca_common_sfio_gate_enter(&gate, c)) {
            atomic_fetch_add(&violations, 1);
            break;
        }
        atomic_fetch_add(&inside_now[c], 1);
        if (0 != atomic_load(&inside_now[o])) {
            atomic_fetch_add(&violations, 1);
        }
        atomic_fetch_add(&entries[c], 1);
        atomic_fetch_sub(&inside_now[c], 1);
        if (0 != mca_common_sfio_gate_leave(&gate, c)) {
            atomic_fetch_add(&violations, 1);
            break;
        }
    }
    return NULL;
}

START_TEST(threads)
{
    enum { THREADS = 6 };
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; ++i) {
        REQUIRE(0 == pthread_create(&t[i], NULL, member, (void *) (intptr_t) (i % 2)));
    }
    for (int i = 0; i < THREADS; ++i) {
        pthread_join(t[i], NULL);
    }
    REQUIRE(0 == atomic_load(&violations));
    REQUIRE((THREADS / 2) * THREAD_ROUNDS == atomic_load(&entries[P]));
    REQUIRE((THREADS / 2) * THREAD_ROUNDS == atomic_load(&entries[L]));
    uint64_t w = (uint64_t) atomic_load(&mem.slot);
    REQUIRE(0 == mca_common_sfio_gate_inside(w, P) && 0 == mca_common_sfio_gate_inside(w, L));
}
END_TEST

/* ---- one system call ----------------------------------------------------- */

START_TEST(one_call_random)
{
    rng_state = 7;
    mca_common_sfio_ioseg_t segs[8];
    for (int run = 0; run < 20000; ++run) {
        size_t n = rnd_below(9);
        uint64_t off = rnd_below(1000);
        bool follows = true;
        uint64_t total = 0;
        for (size_t i = 0; i < n; ++i) {
            int gap = 0 == rnd_below(4) ? (int) rnd_below(3) - 1 : 0;
            if (i > 0 && 0 != gap) {
                follows = false;
            }
            uint64_t len = 0 == rnd_below(50) ? MCA_COMMON_SFIO_GATE_PLAIN_MAX_BYTES / 2 + 1
                                              : rnd_below(100);
            segs[i] = (mca_common_sfio_ioseg_t) {
                .offset = i > 0 ? (uint64_t) ((int64_t) off + gap) : off, .length = len,
                .buf = NULL };
            off = segs[i].offset + len;
            total += len;
        }
        bool want = n > 0 && follows && total <= MCA_COMMON_SFIO_GATE_PLAIN_MAX_BYTES;
        REQUIRE(want == mca_common_sfio_gate_one_call(segs, n));
    }
    static mca_common_sfio_ioseg_t many[MCA_COMMON_SFIO_GATE_PLAIN_MAX_SEGS + 1];
    for (size_t i = 0; i < MCA_COMMON_SFIO_GATE_PLAIN_MAX_SEGS + 1; ++i) {
        many[i] = (mca_common_sfio_ioseg_t) { .offset = i, .length = 1, .buf = NULL };
    }
    REQUIRE(mca_common_sfio_gate_one_call(many, MCA_COMMON_SFIO_GATE_PLAIN_MAX_SEGS));
    REQUIRE(!mca_common_sfio_gate_one_call(many, MCA_COMMON_SFIO_GATE_PLAIN_MAX_SEGS + 1));
}
END_TEST

static Suite *gate_suite(void)
{
    Suite *s = suite_create("gate");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, steps_by_hand);
    tcase_add_test(tc, every_interleaving);
    tcase_add_test(tc, threads);
    tcase_add_test(tc, one_call_random);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(gate_suite)
