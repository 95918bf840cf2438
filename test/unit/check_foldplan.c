/*
 * Unit tests of sfio_foldplan (who writes back which piece at a fold):
 * examples (one owner of everything, the tile row's "one rank won both
 * overlaps"), argument errors, and seeded random cases checked against
 * the plan's promises: loads recomputed from the writers, the busiest load
 * never above the owners' own, every owner keeps a prefix of its pieces,
 * and no further move of the busiest owner's last kept piece would lower
 * the busiest load.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "sfio_check.h"
#include "sfio_foldplan.h"

#define COST MCA_COMMON_SFIO_FOLDPLAN_HELPER_COST

static uint64_t max_of(const uint64_t *v, int n)
{
    uint64_t m = 0;
    for (int i = 0; i < n; ++i) m = v[i] > m ? v[i] : m;
    return m;
}

/* Every promise of the plan, for any input. */
static void check_plan(const int *owner, const uint64_t *len, size_t n, int nranks)
{
    int *writer = malloc((n ? n : 1) * sizeof(*writer));
    uint64_t *load = calloc((size_t) nranks, sizeof(*load));
    uint64_t *own = calloc((size_t) nranks, sizeof(*own));
    uint64_t *re = calloc((size_t) nranks, sizeof(*re));
    REQUIRE(writer && load && own && re);
    REQUIRE(0 == mca_common_sfio_foldplan_balance(owner, len, n, nranks, writer, load));
    for (size_t i = 0; i < n; ++i) {
        REQUIRE(writer[i] >= 0 && writer[i] < nranks);
        own[owner[i]] += len[i];
        re[writer[i]] += writer[i] == owner[i] ? len[i] : COST * len[i];
    }
    for (int r = 0; r < nranks; ++r) {
        REQUIRE(re[r] == load[r]);
    }
    REQUIRE(max_of(load, nranks) <= max_of(own, nranks));
    /* owners keep a prefix (in file order) of their own pieces */
    for (int r = 0; r < nranks; ++r) {
        int given = 0;
        for (size_t i = 0; i < n; ++i) {
            if (owner[i] != r) continue;
            if (writer[i] != r) given = 1;
            else REQUIRE(!given);
        }
    }
    /* local optimum: the busiest rank, if it still writes own pieces, cannot
     * hand its last kept one to the least busy rank with a gain */
    int hi = 0, lo = 0;
    for (int r = 1; r < nranks; ++r) {
        if (load[r] > load[hi]) hi = r;
        if (load[r] < load[lo]) lo = r;
    }
    long last = -1;
    for (size_t i = 0; i < n; ++i) {
        if (owner[i] == hi && writer[i] == hi) last = (long) i;
    }
    if (hi != lo && last >= 0) {
        REQUIRE(load[lo] + COST * len[last] >= load[hi]);
    }
    free(writer);
    free(load);
    free(own);
    free(re);
}

START_TEST(one_owner_of_everything)
{
    enum { N = 64, R = 4 };
    int owner[N], writer[N];
    uint64_t len[N], load[R];
    for (int i = 0; i < N; ++i) { owner[i] = 2; len[i] = 16384; }
    ck_assert_int_eq(mca_common_sfio_foldplan_balance(owner, len, N, R, writer, load), 0);
    /* rank 2 keeps x pieces, the other three take y each, 2y = x roughly:
     * 64 = x + 3y, so x = 26 (load 26 pieces), helpers 12 or 13 (24-26) */
    ck_assert_uint_le(max_of(load, R), 26u * 16384);
    ck_assert_uint_ge(load[2], 24u * 16384);
    for (int i = 0; i < 20; ++i) ck_assert_int_eq(writer[i], 2);   /* a prefix stays */
    check_plan(owner, len, N, R);
}
END_TEST

START_TEST(tile_row_one_rank_won_both)
{
    /* 8 ranks, 7 overlaps of 128 pieces; rank 3 won both of its overlaps,
     * ranks 2 and 4 won none, the others one each */
    enum { R = 8, P = 128 };
    int winners[7] = { 0, 1, 3, 3, 5, 6, 7 };
    int owner[7 * P];
    uint64_t len[7 * P], load[R];
    int writer[7 * P];
    for (int b = 0; b < 7; ++b)
        for (int p = 0; p < P; ++p) { owner[b * P + p] = winners[b]; len[b * P + p] = 16384; }
    ck_assert_int_eq(mca_common_sfio_foldplan_balance(owner, len, 7 * P, R, writer, load), 0);
    /* before: rank 3 carries 256 pieces; after: far less */
    ck_assert_uint_lt(max_of(load, R), 256u * 16384 * 3 / 4);
    ck_assert_uint_gt(load[2], 0);
    ck_assert_uint_gt(load[4], 0);
    check_plan(owner, len, 7 * P, R);
}
END_TEST

START_TEST(already_even_moves_nothing)
{
    int owner[4] = { 0, 1, 2, 3 }, writer[4];
    uint64_t len[4] = { 100, 100, 100, 100 }, load[4];
    ck_assert_int_eq(mca_common_sfio_foldplan_balance(owner, len, 4, 4, writer, load), 0);
    for (int i = 0; i < 4; ++i) {
        ck_assert_int_eq(writer[i], owner[i]);
        ck_assert_uint_eq(load[i], 100);
    }
}
END_TEST

START_TEST(one_large_piece_stays)
{
    /* moving the only piece would make a helper busier than the owner was */
    int owner[1] = { 1 }, writer[1];
    uint64_t len[1] = { 1 << 20 }, load[3];
    ck_assert_int_eq(mca_common_sfio_foldplan_balance(owner, len, 1, 3, writer, load), 0);
    ck_assert_int_eq(writer[0], 1);
    ck_assert_uint_eq(load[1], 1 << 20);
}
END_TEST

START_TEST(arguments)
{
    int owner[2] = { 0, 3 }, writer[2];
    uint64_t len[2] = { 1, 1 };
    ck_assert_int_eq(mca_common_sfio_foldplan_balance(owner, len, 2, 3, writer, NULL), -EINVAL);
    owner[1] = -1;
    ck_assert_int_eq(mca_common_sfio_foldplan_balance(owner, len, 2, 3, writer, NULL), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_foldplan_balance(owner, len, 0, 0, writer, NULL), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_foldplan_balance(NULL, NULL, 0, 1, NULL, NULL), 0);
}
END_TEST

START_TEST(random_cases)
{
    unsigned seed = 12345;
    for (int round = 0; round < 2000; ++round) {
        int nranks = 1 + (int) (rand_r(&seed) % 12);
        size_t n = (size_t) (rand_r(&seed) % 200);
        int *owner = malloc((n ? n : 1) * sizeof(*owner));
        uint64_t *len = malloc((n ? n : 1) * sizeof(*len));
        REQUIRE(owner && len);
        int skew = (int) (rand_r(&seed) % 3);
        for (size_t i = 0; i < n; ++i) {
            /* skew 0: uniform owners; 1: mostly rank 0; 2: few owners */
            int r = (int) (rand_r(&seed) % (unsigned) nranks);
            if (1 == skew && rand_r(&seed) % 4) r = 0;
            if (2 == skew) r %= (nranks < 3 ? nranks : 3);
            owner[i] = r;
            len[i] = 1 + rand_r(&seed) % (rand_r(&seed) % 2 ? 64 : 100000);
        }
        check_plan(owner, len, n, nranks);
        free(owner);
        free(len);
    }
}
END_TEST

static Suite *foldplan_suite(void)
{
    Suite *s = suite_create("foldplan");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, one_owner_of_everything);
    tcase_add_test(tc, tile_row_one_rank_won_both);
    tcase_add_test(tc, already_even_moves_nothing);
    tcase_add_test(tc, one_large_piece_stays);
    tcase_add_test(tc, arguments);
    tcase_add_test(tc, random_cases);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(foldplan_suite)
