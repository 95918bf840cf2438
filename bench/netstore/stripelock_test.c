/*
 * stripelock_test.c - unit test of netstore's stripe lock rule
 * (stripelock.c): fixed cases, then random access sequences checked after
 * every step against a reference that keeps reader sets exactly.
 * Exit status 0 when every check passes.
 */
#include "stripelock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define EXPECT(cond)                                                              \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);   \
            failures++;                                                           \
        }                                                                         \
    } while (0)

/* one access, the invariants checked on the result */
static int step(ns_sl_state_t *s, uint64_t c, int w)
{
    int rtt = ns_sl_access(s, c, w, s);
    EXPECT(ns_sl_verify(s));
    return rtt;
}

static void test_fixed(void)
{
    ns_sl_state_t s;
    memset(&s, 0, sizeof(s));
    EXPECT(ns_sl_verify(&s));
    /* first touch is free, repeated own access is free */
    EXPECT(step(&s, 1, 1) == 0);
    EXPECT(step(&s, 1, 1) == 0);
    EXPECT(step(&s, 1, 0) == 0);
    EXPECT(s.writer == 1);
    /* another writer calls the lock back and takes it */
    EXPECT(step(&s, 2, 1) == NS_SL_REVOKE_RTT);
    EXPECT(s.writer == 2);
    /* ping-pong: every alternation pays */
    EXPECT(step(&s, 1, 1) == NS_SL_REVOKE_RTT);
    EXPECT(step(&s, 2, 1) == NS_SL_REVOKE_RTT);
    /* a reader demotes the writer: both read for free afterwards */
    EXPECT(step(&s, 3, 0) == NS_SL_REVOKE_RTT);
    EXPECT(s.writer == 0);
    EXPECT(step(&s, 2, 0) == 0);
    EXPECT(step(&s, 3, 0) == 0);
    EXPECT(step(&s, 4, 0) == 0);
    /* writing over readers calls them back, even the demoted former writer */
    EXPECT(step(&s, 2, 1) == NS_SL_REVOKE_RTT);
    EXPECT(s.writer == 2 && s.readers[0] == 0);
    /* a sole reader upgrades without a callback */
    memset(&s, 0, sizeof(s));
    EXPECT(step(&s, 5, 0) == 0);
    EXPECT(step(&s, 5, 1) == 0);
    EXPECT(s.writer == 5);
    /* more readers than slots: crowded, any write pays, even by a reader */
    memset(&s, 0, sizeof(s));
    for (uint64_t c = 1; c <= NS_SL_MAX_READERS + 2; c++) EXPECT(step(&s, c, 0) == 0);
    EXPECT(s.crowded == 1);
    EXPECT(step(&s, 1, 1) == NS_SL_REVOKE_RTT);
    EXPECT(s.crowded == 0 && s.writer == 1);
    /* invalid states are refused by verify */
    memset(&s, 0, sizeof(s));
    s.writer = 1;
    s.readers[1] = 2;
    EXPECT(!ns_sl_verify(&s));
    memset(&s, 0, sizeof(s));
    s.readers[0] = s.readers[2] = 7;
    EXPECT(!ns_sl_verify(&s));
    memset(&s, 0, sizeof(s));
    s.crowded = 1;
    EXPECT(!ns_sl_verify(&s));
}

static void test_stripes(void)
{
    uint64_t f, n;
    ns_sl_stripes(0, 0, 1 << 20, &f, &n);
    EXPECT(f == 0 && n == 0);
    ns_sl_stripes(0, 1 << 20, 1 << 20, &f, &n);
    EXPECT(f == 0 && n == 1);
    ns_sl_stripes(0, (1 << 20) + 1, 1 << 20, &f, &n);
    EXPECT(f == 0 && n == 2);
    ns_sl_stripes((1 << 20) - 1, 2, 1 << 20, &f, &n);
    EXPECT(f == 0 && n == 2);
    ns_sl_stripes(3 << 20, 4096, 1 << 20, &f, &n);
    EXPECT(f == 3 && n == 1);
    ns_sl_stripes(UINT64_MAX - 9, 10, 1 << 20, &f, &n);
    EXPECT(f == (UINT64_MAX - 9) >> 20 && n == 1);
    ns_sl_stripes(100, 1, 1, &f, &n);
    EXPECT(f == 100 && n == 1);
}

/* reference: exact reader set over clients 1..63 as a bitmap */
typedef struct {
    uint64_t writer;
    uint64_t readers;
} ref_t;

static int ref_access(ref_t *r, uint64_t c, int w)
{
    uint64_t bit = 1ull << c;
    int rtt = 0;
    if (w) {
        if ((r->writer && r->writer != c) || (r->readers & ~bit)) rtt = NS_SL_REVOKE_RTT;
        r->writer = c;
        r->readers = 0;
    } else if (r->writer && r->writer != c) {
        rtt = NS_SL_REVOKE_RTT;
        r->readers = (1ull << r->writer) | bit;
        r->writer = 0;
    } else if (!r->writer) {
        r->readers |= bit;
    }
    return rtt;
}

static void test_random(unsigned seed, int clients, int steps)
{
    ns_sl_state_t s;
    ref_t r = {0, 0};
    memset(&s, 0, sizeof(s));
    srand(seed);
    for (int i = 0; i < steps; i++) {
        uint64_t c = 1 + (uint64_t)(rand() % clients);
        int w = rand() % 2;
        int was_crowded = s.crowded;
        int got = step(&s, c, w);
        int want = ref_access(&r, c, w);
        if (was_crowded) {
            /* only a crowded stripe may charge more than the reference */
            EXPECT(got >= want);
        } else {
            EXPECT(got == want);
        }
        EXPECT(s.writer == r.writer);
        if (!s.crowded) {
            uint64_t bits = 0;
            for (int k = 0; k < NS_SL_MAX_READERS; k++)
                if (s.readers[k]) bits |= 1ull << s.readers[k];
            EXPECT(bits == r.readers);
        }
        if (failures) {
            fprintf(stderr, "random run seed %u clients %d failed at step %d\n", seed,
                    clients, i);
            return;
        }
    }
}

int main(void)
{
    test_fixed();
    test_stripes();
    for (unsigned seed = 1; seed <= 50 && !failures; seed++) {
        test_random(seed, 2, 2000);
        test_random(seed, NS_SL_MAX_READERS, 2000);
        test_random(seed, NS_SL_MAX_READERS + 3, 2000);
    }
    printf("stripelock_test: %s\n", failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}
