/*
 * check_peertab: the key -> value map of known processes (sfio_peertab)
 * against a brute-force list of pairs, invariants verified after every
 * operation.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "sfio_check.h"
#include "sfio_peertab.h"

START_TEST(examples)
{
    mca_common_sfio_peertab_t t;
    uint64_t v = 7;
    mca_common_sfio_peertab_init(&t);
    REQUIRE(0 == mca_common_sfio_peertab_verify(&t));
    REQUIRE(!mca_common_sfio_peertab_find(&t, 0, &v) && 7 == v);
    /* key 0 and the largest key are ordinary keys */
    REQUIRE(0 == mca_common_sfio_peertab_put(&t, 0, 10));
    REQUIRE(0 == mca_common_sfio_peertab_put(&t, UINT64_MAX, 20));
    REQUIRE(mca_common_sfio_peertab_find(&t, 0, &v) && 10 == v);
    REQUIRE(mca_common_sfio_peertab_find(&t, UINT64_MAX, &v) && 20 == v);
    REQUIRE(!mca_common_sfio_peertab_find(&t, 1, &v) && 20 == v);
    /* a second put replaces */
    REQUIRE(0 == mca_common_sfio_peertab_put(&t, 0, 11));
    REQUIRE(mca_common_sfio_peertab_find(&t, 0, &v) && 11 == v);
    REQUIRE(2 == t.count && 0 == mca_common_sfio_peertab_verify(&t));
    mca_common_sfio_peertab_fini(&t);
    REQUIRE(0 == t.count && 0 == mca_common_sfio_peertab_verify(&t));
    REQUIRE(!mca_common_sfio_peertab_find(&t, 0, &v));
    /* usable again after fini */
    REQUIRE(0 == mca_common_sfio_peertab_put(&t, 5, 50));
    REQUIRE(mca_common_sfio_peertab_find(&t, 5, &v) && 50 == v);
    mca_common_sfio_peertab_fini(&t);
}
END_TEST

/* A job's names: job id in the high half, ranks 0.. in the low one. */
START_TEST(dense_names)
{
    mca_common_sfio_peertab_t t;
    uint64_t v = 0;
    mca_common_sfio_peertab_init(&t);
    for (uint64_t job = 1; job <= 3; ++job) {
        for (uint64_t r = 0; r < 1000; ++r) {
            REQUIRE(0 == mca_common_sfio_peertab_put(&t, job << 32 | r, job * 10000 + r));
        }
        REQUIRE(0 == mca_common_sfio_peertab_verify(&t));
    }
    REQUIRE(3000 == t.count && t.cap >= 6000);
    for (uint64_t job = 1; job <= 4; ++job) {
        for (uint64_t r = 0; r < 1001; ++r) {
            bool in = job <= 3 && r < 1000;
            REQUIRE(in == mca_common_sfio_peertab_find(&t, job << 32 | r, &v));
            REQUIRE(!in || job * 10000 + r == v);
        }
    }
    mca_common_sfio_peertab_fini(&t);
}
END_TEST

enum { MAXPAIRS = 600 };

/* Random puts and finds, keys from a small range (many replacements) or
 * from anywhere, compared with a list searched from end to end. */
START_TEST(random_runs)
{
    static uint64_t keys[MAXPAIRS], values[MAXPAIRS];
    static const uint64_t ranges[] = { 64, 5000, 0 };   /* 0: any key */
    for (int run = 0; run < 200; ++run) {
        rng_state = (uint64_t) run;
        uint64_t range = ranges[run % 3];
        size_t n = 0;
        mca_common_sfio_peertab_t t;
        mca_common_sfio_peertab_init(&t);
        int ops = 1 + (int) rnd_below(2 * MAXPAIRS);
        for (int op = 0; op < ops; ++op) {
            uint64_t key = 0 == range ? rnd() : rnd_below(range);
            uint64_t value = rnd(), got = 0;
            size_t at = n;
            for (size_t k = 0; k < n; ++k) {
                if (keys[k] == key) {
                    at = k;
                }
            }
            if (rnd_below(2) && (at < n || n < MAXPAIRS)) {
                REQUIRE(0 == mca_common_sfio_peertab_put(&t, key, value));
                keys[at] = key;
                values[at] = value;
                n += at == n;
            } else {
                bool found = mca_common_sfio_peertab_find(&t, key, &got);
                REQUIRE(found == (at < n));
                REQUIRE(!found || got == values[at]);
            }
            REQUIRE(t.count == n && 0 == mca_common_sfio_peertab_verify(&t));
        }
        for (size_t k = 0; k < n; ++k) {
            uint64_t got = 0;
            REQUIRE(mca_common_sfio_peertab_find(&t, keys[k], &got) && got == values[k]);
        }
        mca_common_sfio_peertab_fini(&t);
    }
}
END_TEST

/* verify catches what it is there for. */
START_TEST(verify_catches)
{
    mca_common_sfio_peertab_t t;
    mca_common_sfio_peertab_init(&t);
    for (uint64_t k = 0; k < 5; ++k) {
        REQUIRE(0 == mca_common_sfio_peertab_put(&t, k, k));
    }
    REQUIRE(0 == mca_common_sfio_peertab_verify(&t));
    t.count++;
    REQUIRE(-EINVAL == mca_common_sfio_peertab_verify(&t));
    t.count--;
    /* a copy of a key in an empty slot further on */
    size_t k = 0;
    while (!t.slots[k].used) {
        ++k;
    }
    size_t e = k;
    while (t.slots[e].used) {
        e = (e + 1) & (t.cap - 1);
    }
    t.slots[e] = t.slots[k];
    t.count++;
    REQUIRE(-EINVAL == mca_common_sfio_peertab_verify(&t));
    mca_common_sfio_peertab_fini(&t);
}
END_TEST

static Suite *peertab_suite(void)
{
    Suite *s = suite_create("peertab");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, examples);
    tcase_add_test(tc, dense_names);
    tcase_add_test(tc, random_runs);
    tcase_add_test(tc, verify_catches);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(peertab_suite)
