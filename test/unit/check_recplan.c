/*
 * check_recplan: the recovered published mark (sfio_recplan) against the
 * obvious model: from the folded mark, step up while some whole record
 * carries the next version.
 */
#include <stdbool.h>
#include <string.h>

#include "sfio_check.h"
#include "sfio_recplan.h"

static uint64_t model(uint64_t folded, const uint64_t *v, size_t n)
{
    uint64_t P = folded;
    for (;;) {
        bool found = false;
        for (size_t i = 0; i < n && !found && P < UINT64_MAX; ++i) {
            found = v[i] == P + 1;
        }
        if (!found) {
            return P;
        }
        ++P;
    }
}

static uint64_t plan(uint64_t folded, const uint64_t *v, size_t n)
{
    uint64_t copy[64];
    REQUIRE(n <= 64);
    memcpy(copy, v, n * sizeof(*v));
    return mca_common_sfio_recplan_published(folded, copy, n);
}

START_TEST(examples)
{
    uint64_t none[1] = { 0 };
    REQUIRE(0 == mca_common_sfio_recplan_published(0, none, 0));
    REQUIRE(7 == mca_common_sfio_recplan_published(7, NULL, 0));

    /* two ranks' records, interleaved versions: a whole run */
    const uint64_t run[] = { 1, 3, 6, 2, 4, 5 };
    REQUIRE(6 == plan(0, run, 6));
    REQUIRE(6 == plan(3, run, 6));
    REQUIRE(6 == plan(6, run, 6));
    REQUIRE(9 == plan(9, run, 6));   /* everything folded already */

    /* 4 is missing: 5 and 6 are dropped */
    const uint64_t gap[] = { 1, 3, 6, 2, 5 };
    REQUIRE(3 == plan(0, gap, 5));
    REQUIRE(3 == plan(2, gap, 5));
    REQUIRE(6 == plan(4, gap, 5));   /* 4 was folded: no gap */

    /* the first version above the folded mark is missing */
    const uint64_t late[] = { 12, 13, 14 };
    REQUIRE(10 == plan(10, late, 3));
    REQUIRE(14 == plan(11, late, 3));

    /* versions at or below the folded mark (records not yet compacted away)
     * and repeats (must not happen) change nothing */
    const uint64_t old[] = { 2, 1, 2, 3, 3, 5, 4, 4 };
    REQUIRE(5 == plan(0, old, 8));
    REQUIRE(5 == plan(3, old, 8));
    const uint64_t dup_gap[] = { 1, 1, 3, 3 };
    REQUIRE(1 == plan(0, dup_gap, 4));

    /* the top of the range does not wrap */
    const uint64_t top[] = { UINT64_MAX, UINT64_MAX - 1 };
    REQUIRE(UINT64_MAX == plan(UINT64_MAX - 2, top, 2));
    REQUIRE(UINT64_MAX == plan(UINT64_MAX, top, 2));

    /* the array comes back sorted (the caller may reuse it) */
    uint64_t s[] = { 4, 1, 3, 2 };
    REQUIRE(4 == mca_common_sfio_recplan_published(0, s, 4));
    REQUIRE(1 == s[0] && 2 == s[1] && 3 == s[2] && 4 == s[3]);
}
END_TEST

/* Random stores: versions 1..M handed to ranks, some lost (no whole
 * record), some ABORTed (whole: they count), each rank's records in
 * increasing order, the ranks' lists concatenated; now and then a repeat
 * or a version at or below the folded mark.  Every answer matches the
 * model, and no other mark would: the version after it is missing. */
START_TEST(random_stores)
{
    for (int run = 0; run < 2000; ++run) {
        rng_state = (uint64_t) run;
        int nranks = 1 + (int) rnd_below(6);
        uint64_t M = rnd_below(31);   /* with repeats, at most 60 records */
        uint64_t folded = rnd_below(M + 3);
        uint64_t lists[6][64];
        size_t len[6] = { 0 };
        for (uint64_t v = 1; v <= M; ++v) {
            int lose = (int) rnd_below(12);
            if (0 == lose && v > folded) {
                continue;   /* its writer died before its record was whole */
            }
            int r = (int) rnd_below((uint64_t) nranks);
            lists[r][len[r]++] = v;
            if (1 == lose) {
                lists[r][len[r]++] = v;   /* a repeat: must not happen */
            }
        }
        uint64_t all[64];
        size_t n = 0;
        for (int r = 0; r < nranks; ++r) {
            for (size_t i = 0; i < len[r]; ++i) {
                all[n++] = lists[r][i];
            }
        }
        uint64_t want = model(folded, all, n);
        uint64_t got = plan(folded, all, n);
        REQUIRE(want == got);
        REQUIRE(got >= folded);
        for (size_t i = 0; i < n; ++i) {
            REQUIRE(all[i] != got + 1);
        }
    }
}
END_TEST

static Suite *recplan_suite(void)
{
    Suite *s = suite_create("recplan");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, examples);
    tcase_add_test(tc, random_stores);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(recplan_suite)
