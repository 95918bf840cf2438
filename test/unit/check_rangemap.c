/*
 * Unit tests of sfio_rangemap: edge cases, invariants (verify) after every
 * operation, allocation failure atomicity, and seeded random runs compared
 * with a byte-array reference model (one slot per byte holding version and
 * the aux of that byte).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sfio_check.h"
#include "sfio_rangemap.h"

typedef mca_common_sfio_rangemap_t map_t;
typedef mca_common_sfio_rangemap_value_t value_t;
typedef mca_common_sfio_rangemap_entry_t entry_t;

#define VERIFY(m) REQUIRE(0 == mca_common_sfio_rangemap_verify(m))

static value_t val(uint64_t version, uint64_t aux)
{
    value_t v = { version, aux };
    return v;
}

/* Collect all entries into an array (at most max). */
static size_t dump(const map_t *m, entry_t *out, size_t max)
{
    mca_common_sfio_rangemap_iter_t it;
    const entry_t *e;
    size_t n = 0;
    ck_assert_int_eq(mca_common_sfio_rangemap_iter_init(m, 0, UINT64_MAX, &it), 0);
    while (0 == mca_common_sfio_rangemap_iter_next(&it, &e)) {
        ck_assert_uint_lt(n, max);
        out[n++] = *e;
    }
    return n;
}

static void expect_entry(const entry_t *e, uint64_t off, uint64_t len, uint64_t ver, uint64_t aux)
{
    ck_assert_uint_eq(e->offset, off);
    ck_assert_uint_eq(e->length, len);
    ck_assert_uint_eq(e->value.version, ver);
    ck_assert_uint_eq(e->value.aux, aux);
}

/* ---- edge cases -------------------------------------------------------- */

START_TEST(test_empty)
{
    map_t m;
    const entry_t *e;
    mca_common_sfio_rangemap_iter_t it;

    ck_assert_int_eq(mca_common_sfio_rangemap_init(&m, NULL, 0), 0);
    VERIFY(&m);
    ck_assert_uint_eq(mca_common_sfio_rangemap_count(&m), 0);
    ck_assert_uint_eq(mca_common_sfio_rangemap_bytes(&m), 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_nfind(&m, 0, &e), -ENOENT);
    ck_assert_int_eq(mca_common_sfio_rangemap_find(&m, 5, &e), -ENOENT);
    ck_assert_int_eq(mca_common_sfio_rangemap_iter_init(&m, 0, 100, &it), 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_iter_next(&it, &e), -ENOENT);
    ck_assert_int_eq(mca_common_sfio_rangemap_remove(&m, 0, 100), 0);
    VERIFY(&m);
    ck_assert_int_eq(mca_common_sfio_rangemap_init(&m, NULL, 0x80), -EINVAL);
    mca_common_sfio_rangemap_destroy(&m);
}
END_TEST

START_TEST(test_zero_length_and_overflow)
{
    map_t m;
    value_t v = val(1, 0);
    mca_common_sfio_rangemap_iter_t it;
    const entry_t *e;

    ck_assert_int_eq(mca_common_sfio_rangemap_init(&m, NULL, 0), 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 10, 0, &v), 0);
    VERIFY(&m);
    ck_assert_uint_eq(mca_common_sfio_rangemap_count(&m), 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 10, 10, &v), 0);
    /* zero-length query inside an entry yields nothing */
    ck_assert_int_eq(mca_common_sfio_rangemap_iter_init(&m, 15, 0, &it), 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_iter_next(&it, &e), -ENOENT);
    /* zero-length remove is a no-op */
    ck_assert_int_eq(mca_common_sfio_rangemap_remove(&m, 15, 0), 0);
    ck_assert_uint_eq(mca_common_sfio_rangemap_bytes(&m), 10);
    /* wrapping ranges are rejected, map unchanged */
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, UINT64_MAX - 5, 6, &v), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_rangemap_remove(&m, 1, UINT64_MAX), -EINVAL);
    ck_assert_int_eq(mca_common_sfio_rangemap_iter_init(&m, 2, UINT64_MAX, &it), -EINVAL);
    VERIFY(&m);
    ck_assert_uint_eq(mca_common_sfio_rangemap_count(&m), 1);
    /* the largest legal range ends exactly at UINT64_MAX */
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, UINT64_MAX - 5, 5, &v), 0);
    VERIFY(&m);
    ck_assert_int_eq(mca_common_sfio_rangemap_find(&m, UINT64_MAX - 1, &e), 0);
    expect_entry(e, UINT64_MAX - 5, 5, 1, 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_find(&m, UINT64_MAX, &e), -ENOENT);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 0, UINT64_MAX, &v), 0);
    VERIFY(&m);
    ck_assert_uint_eq(mca_common_sfio_rangemap_count(&m), 1);
    ck_assert_uint_eq(mca_common_sfio_rangemap_bytes(&m), UINT64_MAX);
    mca_common_sfio_rangemap_destroy(&m);
}
END_TEST

START_TEST(test_touching_and_full_overwrite)
{
    map_t m;
    entry_t d[8];
    value_t a = val(1, 100), b = val(2, 200), c = val(3, 300);

    ck_assert_int_eq(mca_common_sfio_rangemap_init(&m, NULL, 0), 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 10, 10, &a), 0);
    VERIFY(&m);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 20, 10, &b), 0);   /* touches right */
    VERIFY(&m);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 0, 10, &c), 0);    /* touches left */
    VERIFY(&m);
    ck_assert_uint_eq(dump(&m, d, 8), 3);
    expect_entry(&d[0], 0, 10, 3, 300);
    expect_entry(&d[1], 10, 10, 1, 100);
    expect_entry(&d[2], 20, 10, 2, 200);

    /* an exact overwrite replaces the entry */
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 10, 10, &b), 0);
    VERIFY(&m);
    ck_assert_uint_eq(dump(&m, d, 8), 3);
    expect_entry(&d[1], 10, 10, 2, 200);

    /* a covering overwrite swallows everything */
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 0, 30, &a), 0);
    VERIFY(&m);
    ck_assert_uint_eq(dump(&m, d, 8), 1);
    expect_entry(&d[0], 0, 30, 1, 100);
    ck_assert_uint_eq(mca_common_sfio_rangemap_bytes(&m), 30);

    /* a larger one too, sticking out on both sides */
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 0, 10, &b), 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 20, 5, &c), 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 0, 1000, &c), 0);
    VERIFY(&m);
    ck_assert_uint_eq(dump(&m, d, 8), 1);
    expect_entry(&d[0], 0, 1000, 3, 300);
    mca_common_sfio_rangemap_destroy(&m);
}
END_TEST

START_TEST(test_split_middle_shifts_aux)
{
    map_t m;
    entry_t d[8];
    value_t a = val(1, 1000), b = val(2, 5);

    ck_assert_int_eq(mca_common_sfio_rangemap_init(&m, NULL, 0), 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 100, 100, &a), 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 140, 20, &b), 0);
    VERIFY(&m);
    ck_assert_uint_eq(dump(&m, d, 8), 3);
    expect_entry(&d[0], 100, 40, 1, 1000);
    expect_entry(&d[1], 140, 20, 2, 5);
    expect_entry(&d[2], 160, 40, 1, 1060);     /* aux shifted by 60 */
    ck_assert_uint_eq(mca_common_sfio_rangemap_bytes(&m), 100);

    /* cut the head of the tail piece: aux moves with the start */
    ck_assert_int_eq(mca_common_sfio_rangemap_remove(&m, 150, 15), 0);
    VERIFY(&m);
    ck_assert_uint_eq(dump(&m, d, 8), 3);
    expect_entry(&d[1], 140, 10, 2, 5);
    expect_entry(&d[2], 165, 35, 1, 1065);

    /* remove in the middle splits too */
    ck_assert_int_eq(mca_common_sfio_rangemap_remove(&m, 110, 10), 0);
    VERIFY(&m);
    ck_assert_uint_eq(dump(&m, d, 8), 4);
    expect_entry(&d[0], 100, 10, 1, 1000);
    expect_entry(&d[1], 120, 20, 1, 1020);
    ck_assert_uint_eq(mca_common_sfio_rangemap_bytes(&m), 10 + 20 + 10 + 35);
    mca_common_sfio_rangemap_destroy(&m);
}
END_TEST

START_TEST(test_lookup_queries)
{
    map_t m;
    const entry_t *e;
    mca_common_sfio_rangemap_iter_t it;
    value_t v = val(7, 0);
    int i, n;

    ck_assert_int_eq(mca_common_sfio_rangemap_init(&m, NULL, 0), 0);
    for (i = 0; i < 10; i++) {      /* [0,5) [10,15) ... [90,95) */
        v.aux = (uint64_t) i;
        ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, (uint64_t) i * 10, 5, &v), 0);
        VERIFY(&m);
    }
    ck_assert_int_eq(mca_common_sfio_rangemap_nfind(&m, 5, &e), 0);
    ck_assert_uint_eq(e->offset, 10);
    ck_assert_int_eq(mca_common_sfio_rangemap_nfind(&m, 14, &e), 0);
    ck_assert_uint_eq(e->offset, 10);
    ck_assert_int_eq(mca_common_sfio_rangemap_nfind(&m, 95, &e), -ENOENT);
    ck_assert_int_eq(mca_common_sfio_rangemap_find(&m, 15, &e), -ENOENT);
    ck_assert_int_eq(mca_common_sfio_rangemap_find(&m, 44, &e), 0);
    ck_assert_uint_eq(e->value.aux, 4);
    ck_assert_int_eq(mca_common_sfio_rangemap_next(&m, e, &e), 0);
    ck_assert_uint_eq(e->offset, 50);

    /* query [14, 41) touches [10,15) [20,25) [30,35) [40,45) */
    ck_assert_int_eq(mca_common_sfio_rangemap_iter_init(&m, 14, 27, &it), 0);
    n = 0;
    while (0 == mca_common_sfio_rangemap_iter_next(&it, &e)) {
        ck_assert_uint_eq(e->offset, 10 + 10 * (uint64_t) n);
        n++;
    }
    ck_assert_int_eq(n, 4);
    /* a query ending exactly where an entry starts does not include it */
    ck_assert_int_eq(mca_common_sfio_rangemap_iter_init(&m, 5, 5, &it), 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_iter_next(&it, &e), -ENOENT);
    ck_assert_int_eq(mca_common_sfio_rangemap_find(&m, 90, &e), 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_next(&m, e, &e), -ENOENT);
    mca_common_sfio_rangemap_destroy(&m);
}
END_TEST

static int count_cb(const entry_t *e, void *ctx)
{
    int *n = ctx;
    (void) e;
    return ++*n == 3 ? 42 : 0;
}

START_TEST(test_foreach_stops)
{
    map_t m;
    value_t v = val(1, 0);
    int i, n = 0;
    ck_assert_int_eq(mca_common_sfio_rangemap_init(&m, NULL, 0), 0);
    for (i = 0; i < 5; i++) {
        ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, (uint64_t) i * 2, 1, &v), 0);
    }
    ck_assert_int_eq(mca_common_sfio_rangemap_foreach(&m, 0, 100, count_cb, &n), 42);
    ck_assert_int_eq(n, 3);
    n = 0;
    ck_assert_int_eq(mca_common_sfio_rangemap_foreach(&m, 0, 3, count_cb, &n), 0);
    ck_assert_int_eq(n, 2);
    mca_common_sfio_rangemap_destroy(&m);
}
END_TEST

START_TEST(test_huge_offsets)
{
    map_t m;
    entry_t d[8];
    const uint64_t base = UINT64_MAX / 2;
    value_t a = val(1, base), b = val(2, 0);

    ck_assert_int_eq(mca_common_sfio_rangemap_init(&m, NULL, 0), 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, base - 10, 1000, &a), 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, base, 10, &b), 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, UINT64_MAX - 100, 100, &b), 0);
    VERIFY(&m);
    ck_assert_uint_eq(dump(&m, d, 8), 4);
    expect_entry(&d[0], base - 10, 10, 1, base);
    expect_entry(&d[1], base, 10, 2, 0);
    expect_entry(&d[2], base + 10, 980, 1, base + 20);
    expect_entry(&d[3], UINT64_MAX - 100, 100, 2, 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_remove(&m, 0, UINT64_MAX), 0);
    VERIFY(&m);
    ck_assert_uint_eq(mca_common_sfio_rangemap_count(&m), 0);
    mca_common_sfio_rangemap_destroy(&m);
}
END_TEST

START_TEST(test_coalesce)
{
    map_t m;
    entry_t d[8];
    value_t v;

    ck_assert_int_eq(mca_common_sfio_rangemap_init(&m, NULL, MCA_COMMON_SFIO_RANGEMAP_COALESCE), 0);
    v = val(5, 1000);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 0, 10, &v), 0);
    v = val(5, 1020);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 20, 10, &v), 0);
    VERIFY(&m);
    ck_assert_uint_eq(mca_common_sfio_rangemap_count(&m), 2);
    v = val(5, 1010);        /* fills the gap, continues both sides */
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 10, 10, &v), 0);
    VERIFY(&m);
    ck_assert_uint_eq(dump(&m, d, 8), 1);
    expect_entry(&d[0], 0, 30, 5, 1000);
    v = val(5, 2000);        /* same version, aux not contiguous: no merge */
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 30, 10, &v), 0);
    v = val(6, 1030);        /* contiguous aux, other version: no merge */
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 40, 10, &v), 0);
    VERIFY(&m);
    ck_assert_uint_eq(mca_common_sfio_rangemap_count(&m), 3);
    /* re-assigning the middle of an entry with its own value is a no-op */
    v = val(5, 1012);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 12, 5, &v), 0);
    VERIFY(&m);
    ck_assert_uint_eq(mca_common_sfio_rangemap_count(&m), 3);
    mca_common_sfio_rangemap_destroy(&m);
}
END_TEST

/* ---- allocator: failure injection and leak accounting ------------------ */

typedef struct test_alloc_t {
    long live;          /* outstanding allocations */
    long budget;        /* allocations left before failing; <0 = unlimited */
} test_alloc_t;

static void *t_alloc(void *ctx, size_t size)
{
    test_alloc_t *t = ctx;
    if (0 == t->budget) {
        return NULL;
    }
    if (t->budget > 0) {
        t->budget--;
    }
    t->live++;
    return malloc(size);
}

static void t_free(void *ctx, void *ptr, size_t size)
{
    test_alloc_t *t = ctx;
    (void) size;
    t->live--;
    free(ptr);
}

START_TEST(test_enomem_leaves_map_unchanged)
{
    test_alloc_t t = { 0, -1 };
    mca_common_sfio_allocator_t al = { t_alloc, t_free, &t };
    map_t m;
    entry_t before[8], after[8];
    size_t nb, na;
    value_t a = val(1, 0), b = val(2, 0);

    ck_assert_int_eq(mca_common_sfio_rangemap_init(&m, &al, 0), 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 0, 100, &a), 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 200, 100, &a), 0);
    ck_assert_int_eq(t.live, 2);
    nb = dump(&m, before, 8);

    t.budget = 0;       /* no node at all */
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 50, 200, &b), -ENOMEM);
    VERIFY(&m);
    na = dump(&m, after, 8);
    ck_assert_uint_eq(na, nb);
    ck_assert_int_eq(memcmp(before, after, nb * sizeof(entry_t)), 0);

    t.budget = 1;       /* the new node but not the split node */
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 10, 10, &b), -ENOMEM);
    VERIFY(&m);
    na = dump(&m, after, 8);
    ck_assert_uint_eq(na, nb);
    ck_assert_int_eq(memcmp(before, after, nb * sizeof(entry_t)), 0);
    ck_assert_int_eq(t.live, 2);

    t.budget = 0;       /* remove that needs a split */
    ck_assert_int_eq(mca_common_sfio_rangemap_remove(&m, 10, 10), -ENOMEM);
    ck_assert_int_eq(mca_common_sfio_rangemap_remove(&m, 0, 10), 0);  /* no split: ok */
    VERIFY(&m);

    t.budget = -1;
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 10, 10, &b), 0);
    VERIFY(&m);
    mca_common_sfio_rangemap_clear(&m);
    ck_assert_int_eq(t.live, 0);
    ck_assert_int_eq(mca_common_sfio_rangemap_assign(&m, 10, 10, &b), 0);
    mca_common_sfio_rangemap_destroy(&m);
    ck_assert_int_eq(t.live, 0);
}
END_TEST

/* ---- random runs against a byte-array model ---------------------------- */

#define UNIVERSE 768

typedef struct model_t {
    bool present[UNIVERSE];
    uint64_t version[UNIVERSE];
    uint64_t aux[UNIVERSE];     /* aux of this very byte */
} model_t;

static void model_check(const map_t *m, const model_t *md, uint64_t base)
{
    static bool seen[UNIVERSE];
    mca_common_sfio_rangemap_iter_t it;
    const entry_t *e;
    uint64_t bytes = 0, x;
    size_t i;

    VERIFY(m);
    memset(seen, 0, sizeof(seen));
    REQUIRE((mca_common_sfio_rangemap_iter_init(m, 0, UINT64_MAX, &it)) == (0));
    while (0 == mca_common_sfio_rangemap_iter_next(&it, &e)) {
        REQUIRE((e->offset) >= (base));
        REQUIRE((e->offset - base + e->length) <= (UNIVERSE));
        for (x = 0; x < e->length; x++) {
            i = (size_t) (e->offset - base + x);
            REQUIRE(md->present[i]);
            REQUIRE((md->version[i]) == (e->value.version));
            REQUIRE((md->aux[i]) == (e->value.aux + x));
            seen[i] = true;
        }
        bytes += e->length;
    }
    for (i = 0; i < UNIVERSE; i++) {
        REQUIRE(seen[i] == md->present[i]);
    }
    REQUIRE((bytes) == (mca_common_sfio_rangemap_bytes(m)));
}

static void random_run(uint64_t seed, uint64_t base, unsigned flags, int ops)
{
    static model_t md;
    map_t m;
    int op;

    rng_state = seed;
    memset(&md, 0, sizeof(md));
    REQUIRE((mca_common_sfio_rangemap_init(&m, NULL, flags)) == (0));

    for (op = 0; op < ops; op++) {
        uint64_t r = rnd_below(100);
        uint64_t off = rnd_below(UNIVERSE);
        uint64_t len = rnd_below(r < 10 ? UNIVERSE - off + 1 : (UNIVERSE - off < 40 ? UNIVERSE - off + 1 : 40));
        uint64_t x;

        if (r < 60) {
            /* few versions and aux sometimes contiguous so coalescing occurs */
            value_t v = val(rnd_below(3), rnd_below(2) ? off : rnd());
            REQUIRE((mca_common_sfio_rangemap_assign(&m, base + off, len, &v)) == (0));
            for (x = 0; x < len; x++) {
                md.present[off + x] = true;
                md.version[off + x] = v.version;
                md.aux[off + x] = v.aux + x;
            }
        } else if (r < 80) {
            REQUIRE((mca_common_sfio_rangemap_remove(&m, base + off, len)) == (0));
            for (x = 0; x < len; x++) {
                md.present[off + x] = false;
            }
        } else if (r < 99) {
            /* overlap query: every returned entry overlaps, in order, and
             * together they cover exactly the present bytes of the query */
            mca_common_sfio_rangemap_iter_t it;
            const entry_t *e;
            uint64_t covered = 0, expect = 0, prev_end = 0;
            REQUIRE((mca_common_sfio_rangemap_iter_init(&m, base + off, len, &it)) == (0));
            while (0 == mca_common_sfio_rangemap_iter_next(&it, &e)) {
                uint64_t lo = e->offset > base + off ? e->offset : base + off;
                uint64_t hi = e->offset + e->length < base + off + len ? e->offset + e->length : base + off + len;
                REQUIRE((lo) < (hi));
                REQUIRE((e->offset) >= (prev_end));
                prev_end = e->offset + e->length;
                covered += hi - lo;
            }
            for (x = 0; x < len; x++) {
                expect += md.present[off + x];
            }
            REQUIRE((covered) == (expect));
            if (off < UNIVERSE) {
                const entry_t *f;
                int rc = mca_common_sfio_rangemap_find(&m, base + off, &f);
                REQUIRE((rc == 0) == (md.present[off]));
                rc = mca_common_sfio_rangemap_nfind(&m, base + off, &f);
                if (0 == rc) {
                    REQUIRE((f->offset + f->length) > (base + off));
                    for (x = off; x < f->offset - base && x < UNIVERSE; x++) {
                        REQUIRE(!md.present[x]);
                    }
                } else {
                    for (x = off; x < UNIVERSE; x++) {
                        REQUIRE(!md.present[x]);
                    }
                }
            }
        } else {
            mca_common_sfio_rangemap_clear(&m);
            memset(&md, 0, sizeof(md));
        }
        model_check(&m, &md, base);
    }
    mca_common_sfio_rangemap_destroy(&m);
}

START_TEST(test_random_plain)
{
    random_run(0x1234u + (uint64_t) _i, 0, 0, 4000);
}
END_TEST

START_TEST(test_random_coalesce)
{
    random_run(0xabcdu + (uint64_t) _i, 0, MCA_COMMON_SFIO_RANGEMAP_COALESCE, 4000);
}
END_TEST

START_TEST(test_random_high)
{
    /* near UINT64_MAX/2 and at the very top of the space */
    random_run(0x77u, UINT64_MAX / 2 - UNIVERSE / 2, 0, 1000);
    random_run(0x78u, UINT64_MAX - UNIVERSE, MCA_COMMON_SFIO_RANGEMAP_COALESCE, 1000);
}
END_TEST

/* ---- scale: 100k+ entries ---------------------------------------------- */

START_TEST(test_large)
{
    map_t m;
    const size_t n = 120000;
    size_t i;
    value_t v;
    const entry_t *e;
    mca_common_sfio_rangemap_iter_t it;
    uint64_t *perm;

    rng_state = 99;
    REQUIRE((mca_common_sfio_rangemap_init(&m, NULL, 0)) == (0));
    /* insert [16i, 16i+8) in random order */
    perm = malloc(n * sizeof(*perm));
    ck_assert_ptr_nonnull(perm);
    for (i = 0; i < n; i++) {
        perm[i] = i;
    }
    for (i = n - 1; i > 0; i--) {
        size_t j = (size_t) rnd_below(i + 1);
        uint64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (i = 0; i < n; i++) {
        v = val(perm[i], perm[i] * 16);
        REQUIRE((mca_common_sfio_rangemap_assign(&m, perm[i] * 16, 8, &v)) == (0));
    }
    VERIFY(&m);
    REQUIRE((mca_common_sfio_rangemap_count(&m)) == (n));
    /* point lookups */
    for (i = 0; i < 200000; i++) {
        uint64_t x = rnd_below(n * 16);
        int rc = mca_common_sfio_rangemap_find(&m, x, &e);
        REQUIRE((rc == 0) == ((x % 16) < 8));
        if (0 == rc) {
            REQUIRE((e->value.version) == (x / 16));
        }
    }
    /* split every 3rd entry in its middle, then remove a big middle chunk */
    for (i = 0; i < n; i += 3) {
        v = val(1u << 30, 0);
        REQUIRE((mca_common_sfio_rangemap_assign(&m, i * 16 + 3, 2, &v)) == (0));
    }
    VERIFY(&m);
    REQUIRE((mca_common_sfio_rangemap_count(&m)) == (n + 2 * ((n + 2) / 3)));
    REQUIRE((mca_common_sfio_rangemap_remove(&m, 16 * 1000 + 4, 16 * 50000)) == (0));
    VERIFY(&m);
    REQUIRE((mca_common_sfio_rangemap_iter_init(&m, 16 * 1000, 16 * 50001, &it)) == (0));
    i = 0;
    while (0 == mca_common_sfio_rangemap_iter_next(&it, &e)) {
        i++;
    }
    REQUIRE((i) == (3));    /* [16000,16004) [816004,816005) [816005,816008) */
    /* overwrite everything with one entry */
    v = val(0, 0);
    REQUIRE((mca_common_sfio_rangemap_assign(&m, 0, n * 16, &v)) == (0));
    VERIFY(&m);
    REQUIRE((mca_common_sfio_rangemap_count(&m)) == (1));
    free(perm);
    mca_common_sfio_rangemap_destroy(&m);
}
END_TEST

static Suite *rangemap_suite(void)
{
    Suite *s = suite_create("sfio_rangemap");
    TCase *tc = tcase_create("edge");
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_zero_length_and_overflow);
    tcase_add_test(tc, test_touching_and_full_overwrite);
    tcase_add_test(tc, test_split_middle_shifts_aux);
    tcase_add_test(tc, test_lookup_queries);
    tcase_add_test(tc, test_foreach_stops);
    tcase_add_test(tc, test_huge_offsets);
    tcase_add_test(tc, test_coalesce);
    tcase_add_test(tc, test_enomem_leaves_map_unchanged);
    suite_add_tcase(s, tc);

    tc = tcase_create("random");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_random_plain, 0, 4);
    tcase_add_loop_test(tc, test_random_coalesce, 0, 4);
    tcase_add_test(tc, test_random_high);
    tcase_add_test(tc, test_large);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(rangemap_suite)
