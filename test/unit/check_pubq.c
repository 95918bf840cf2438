/*
 * check_pubq: in-order publication (sfio_pubq) against the obvious model:
 * a flag per version; the mark is the longest finished prefix; a writer's
 * tag is released by the call that moves the mark to or past its version.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "sfio_check.h"
#include "sfio_pubq.h"

START_TEST(examples)
{
    mca_common_sfio_pubq_t q;
    uint64_t rel[8];
    size_t nrel = 99;
    REQUIRE(-EINVAL == mca_common_sfio_pubq_init(&q, 0, 0));
    REQUIRE(0 == mca_common_sfio_pubq_init(&q, 3, 0));

    REQUIRE(0 == mca_common_sfio_pubq_done(&q, 3, 30, rel, &nrel));
    REQUIRE(0 == nrel && 0 == q.published);
    REQUIRE(-EEXIST == mca_common_sfio_pubq_done(&q, 3, 31, rel, &nrel));
    REQUIRE(0 == mca_common_sfio_pubq_done(&q, 2, 20, rel, &nrel));
    REQUIRE(0 == nrel && 0 == q.published);
    REQUIRE(0 == mca_common_sfio_pubq_done(&q, 5, 50, rel, &nrel));
    /* full: refused, nothing changes */
    REQUIRE(-ENOSPC == mca_common_sfio_pubq_done(&q, 6, 60, rel, &nrel));
    REQUIRE(3 == q.count && 0 == nrel);
    /* 1 releases 1, 2, 3 in order; 5 waits for 4 */
    REQUIRE(0 == mca_common_sfio_pubq_done(&q, 1, 10, rel, &nrel));
    REQUIRE(3 == nrel && 10 == rel[0] && 20 == rel[1] && 30 == rel[2]);
    REQUIRE(3 == q.published && 1 == q.count);
    REQUIRE(1 == mca_common_sfio_pubq_done(&q, 2, 21, rel, &nrel));
    REQUIRE(0 == nrel);
    REQUIRE(-EINVAL == mca_common_sfio_pubq_done(&q, 0, 1, rel, &nrel));
    REQUIRE(-EINVAL == mca_common_sfio_pubq_done(&q, -4, 1, rel, &nrel));
    REQUIRE(0 == mca_common_sfio_pubq_done(&q, 4, 40, rel, &nrel));
    REQUIRE(2 == nrel && 40 == rel[0] && 50 == rel[1] && 5 == q.published && 0 == q.count);
    mca_common_sfio_pubq_fini(&q);

    /* a mark that starts above zero (a file reopened) */
    REQUIRE(0 == mca_common_sfio_pubq_init(&q, 1, 100));
    REQUIRE(1 == mca_common_sfio_pubq_done(&q, 100, 1, rel, &nrel));
    REQUIRE(0 == mca_common_sfio_pubq_done(&q, 101, 2, rel, &nrel));
    REQUIRE(1 == nrel && 2 == rel[0] && 101 == q.published);
    mca_common_sfio_pubq_fini(&q);
}
END_TEST

enum { MAXV = 200 };

/* Random finishing orders, with duplicates and stale versions mixed in,
 * window bounded: every step compared with the model. */
START_TEST(random_orders)
{
    for (int run = 0; run < 400; ++run) {
        rng_state = (uint64_t) run;
        int nver = 1 + (int) rnd_below(MAXV - 1);
        size_t cap = 1 + rnd_below(12);
        int64_t base = (int64_t) rnd_below(3) * 1000;
        int order[MAXV];
        bool finished[MAXV + 1] = { false }, released_model[MAXV + 1] = { false };
        bool released_seen[MAXV + 1] = { false };
        for (int i = 0; i < nver; ++i) {
            order[i] = i + 1;
        }
        /* shuffle within windows no wider than the capacity allows */
        for (int i = nver - 1; i > 0; --i) {
            int lo = i - (int) cap < 0 ? 0 : i - (int) cap;
            int j = lo + (int) rnd_below((uint64_t) (i - lo + 1));
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        mca_common_sfio_pubq_t q;
        REQUIRE(0 == mca_common_sfio_pubq_init(&q, cap, base));
        uint64_t rel[64];
        size_t nrel;
        int64_t mark = 0;   /* model, relative to base */
        for (int i = 0; i < nver; ++i) {
            int v = order[i];
            /* now and then a duplicate of something finished */
            if (rnd_below(8) == 0) {
                int d = 1 + (int) rnd_below((uint64_t) nver);
                if (finished[d]) {
                    int rc = mca_common_sfio_pubq_done(&q, base + d, 1000000 + d, rel, &nrel);
                    REQUIRE(0 == nrel);
                    REQUIRE(rc == (d <= mark ? 1 : -EEXIST));
                }
            }
            size_t pending = 0;
            for (int k = (int) mark + 1; k <= nver; ++k) {
                pending += finished[k];
            }
            bool moves = v == mark + 1;
            int rc = mca_common_sfio_pubq_done(&q, base + v, (uint64_t) v, rel, &nrel);
            if (!moves && pending == cap) {
                REQUIRE(-ENOSPC == rc && 0 == nrel);
                /* put it back later: swap with a later one that moves the mark */
                int j = i + 1;
                while (j < nver && order[j] != mark + 1) {
                    ++j;
                }
                REQUIRE(j < nver);
                order[j] = v;
                order[i] = (int) mark + 1;
                --i;
                continue;
            }
            REQUIRE(0 == rc);
            finished[v] = true;
            while (mark < nver && finished[mark + 1]) {
                ++mark;
                released_model[mark] = true;
            }
            REQUIRE(q.published == base + mark);
            int64_t prev = 0;
            for (size_t k = 0; k < nrel; ++k) {
                REQUIRE(rel[k] >= 1 && rel[k] <= (uint64_t) nver);
                REQUIRE(!released_seen[rel[k]]);
                REQUIRE((int64_t) rel[k] > prev);
                prev = (int64_t) rel[k];
                released_seen[rel[k]] = true;
            }
            for (int k = 1; k <= nver; ++k) {
                REQUIRE(released_seen[k] == released_model[k]);
            }
            REQUIRE(q.count <= cap);
        }
        REQUIRE(q.published == base + nver && 0 == q.count);
        mca_common_sfio_pubq_fini(&q);
    }
}
END_TEST

static Suite *pubq_suite(void)
{
    Suite *s = suite_create("pubq");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, examples);
    tcase_add_test(tc, random_orders);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(pubq_suite)
