/*
 * sfio_check.h: what every Check suite of test/unit shares: REQUIRE, the
 * seeded random generators, and main().
 *
 * A suite includes this instead of <check.h> and ends with
 * SFIO_CHECK_MAIN(its_suite_function).  Random runs are seeded, so a
 * failure repeats; a suite picks the generator behind rnd() by defining,
 * before the include, SFIO_CHECK_RNG (default splitmix64) and
 * SFIO_CHECK_SEED (the start of rng_state, default 0).
 */
#ifndef SFIO_CHECK_H
#define SFIO_CHECK_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

/* Check's ck_assert_* writes to a pipe on every *passing* assertion (to
 * record the last location), which dominates run time in loops; REQUIRE
 * only calls into Check when the condition fails. */
#define REQUIRE(c) \
    do { \
        if (!(c)) { \
            ck_abort_msg("%s:%d: requirement failed: %s", __FILE__, __LINE__, #c); \
        } \
    } while (0)

/* splitmix64: any state, including 0, gives a full-period sequence. */
static inline uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* xorshift64 (13, 7, 17): the state must not be 0. */
static inline uint64_t xorshift64(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

#ifndef SFIO_CHECK_RNG
#define SFIO_CHECK_RNG splitmix64
#endif
#ifndef SFIO_CHECK_SEED
#define SFIO_CHECK_SEED 0
#endif

/* The suite's generator: tests reseed it (rng_state = seed) for each run. */
static uint64_t rng_state __attribute__((unused)) = SFIO_CHECK_SEED;

static inline uint64_t rnd(void)
{
    return SFIO_CHECK_RNG(&rng_state);
}

/* Uniform enough below n (> 0) for tests. */
static inline uint64_t rnd_below(uint64_t n)
{
    return rnd() % n;
}

/* 0 .. 2^31 - 1, like rand(). */
static inline int rnd_int(void)
{
    return (int) (rnd() >> 33);
}

/* main(): runs the suite that suite_fn() builds; exit status 1 on any
 * failure. */
#define SFIO_CHECK_MAIN(suite_fn) \
    int main(void) \
    { \
        SRunner *sr = srunner_create(suite_fn()); \
        srunner_run_all(sr, CK_NORMAL); \
        int failed = srunner_ntests_failed(sr); \
        srunner_free(sr); \
        return 0 == failed ? EXIT_SUCCESS : EXIT_FAILURE; \
    }

#endif
