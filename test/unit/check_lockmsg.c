/*
 * Unit tests of sfio_lockmsg, the lock manager's wire codec: round trips
 * of every message type at the edges of the ranges' domain, hand-made
 * malformed messages, and fuzzing: every truncation of valid messages
 * fails, and a message with random bytes changed either fails or decodes
 * to something that encodes back to exactly those bytes (one encoding per
 * message, so nothing slips through half-parsed).  Run under valgrind
 * (make check-valgrind) the fuzzing also shows the decoder never reads
 * past its buffer.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sfio_check.h"
#include "sfio_lockmsg.h"

typedef mca_common_sfio_lockmsg_t msg_t;
typedef mca_common_sfio_lockq_range_t range_t;

#define SH MCA_COMMON_SFIO_LOCKQ_SHARED
#define EX MCA_COMMON_SFIO_LOCKQ_EXCLUSIVE
#define REQ MCA_COMMON_SFIO_LOCKMSG_REQUEST
#define PART MCA_COMMON_SFIO_LOCKMSG_PART
#define MAXR 64

static uint8_t buf[1 << 16];

static size_t encode_ok(const msg_t *m, uint8_t *out, size_t cap)
{
    size_t len = 0;
    ck_assert_int_eq(0, mca_common_sfio_lockmsg_encode(m, out, cap, &len));
    ck_assert_uint_le(len, mca_common_sfio_lockmsg_max_size(m->nranges));
    return len;
}

static void expect_same(const msg_t *a, const msg_t *b)
{
    ck_assert_int_eq(a->type, b->type);
    ck_assert_uint_eq(a->client, b->client);
    ck_assert_uint_eq(a->request, b->request);
    ck_assert_int_eq(a->error, b->error);
    ck_assert_uint_eq(a->nranges, b->nranges);
    ck_assert_uint_eq(a->total, b->total);
    ck_assert_uint_eq(a->first, b->first);
    for (size_t i = 0; i < a->nranges; ++i) {
        ck_assert_uint_eq(a->ranges[i].offset, b->ranges[i].offset);
        ck_assert_uint_eq(a->ranges[i].length, b->ranges[i].length);
        ck_assert_uint_eq(a->ranges[i].mode, b->ranges[i].mode);
    }
}

static void round_trip(const msg_t *m)
{
    range_t out[MAXR];
    msg_t back;
    size_t len = encode_ok(m, buf, sizeof(buf));
    ck_assert_int_eq(0, mca_common_sfio_lockmsg_decode(buf, len, out, MAXR, &back));
    expect_same(m, &back);
    /* a buffer one byte short does not take it */
    size_t n = 0;
    ck_assert_int_eq(-ENOBUFS, mca_common_sfio_lockmsg_encode(m, buf, len - 1, &n));
}

START_TEST(round_trips)
{
    range_t edge[4] = { { 0, 1, EX }, { 1, 1, SH }, { 1000, UINT64_MAX - 2000, EX },
                        { UINT64_MAX - 1, 1, SH } };
    range_t whole[1] = { { 0, UINT64_MAX, EX } };
    round_trip(&(msg_t) { .type = REQ, .client = 3, .request = UINT64_MAX, .ranges = edge,
                          .nranges = 4 });
    round_trip(&(msg_t) { .type = REQ, .client = UINT64_MAX, .request = 0, .ranges = whole,
                          .nranges = 1 });
    round_trip(&(msg_t) { .type = REQ, .client = 1, .request = 2 });   /* empty list */
    round_trip(&(msg_t) { .type = MCA_COMMON_SFIO_LOCKMSG_GRANT, .client = 1, .request = 9 });
    round_trip(&(msg_t) { .type = MCA_COMMON_SFIO_LOCKMSG_RELEASE, .client = 1, .request = 9 });
    round_trip(&(msg_t) { .type = MCA_COMMON_SFIO_LOCKMSG_ERROR, .client = 4, .request = 5,
                          .error = -ENOSPC });
    round_trip(&(msg_t) { .type = MCA_COMMON_SFIO_LOCKMSG_ERROR, .error = INT32_MIN });
    /* parts of a long list: the first, a middle one, the last */
    round_trip(&(msg_t) { .type = PART, .client = 2, .request = 7, .ranges = edge, .nranges = 4,
                          .total = 100000, .first = 0 });
    round_trip(&(msg_t) { .type = PART, .client = 2, .request = 7, .ranges = whole, .nranges = 1,
                          .total = 100000, .first = 4 });
    round_trip(&(msg_t) { .type = PART, .client = 2, .request = 7, .ranges = edge, .nranges = 4,
                          .total = UINT32_MAX, .first = UINT32_MAX - 4 });
}
END_TEST

START_TEST(encode_rejects)
{
    range_t unsorted[2] = { { 10, 1, EX }, { 0, 1, EX } }, one[1] = { { 0, 1, EX } };
    size_t len;
    ck_assert_int_eq(-EINVAL, mca_common_sfio_lockmsg_encode(
                                  &(msg_t) { .type = REQ, .ranges = unsorted, .nranges = 2 },
                                  buf, sizeof(buf), &len));
    ck_assert_int_eq(-EINVAL, mca_common_sfio_lockmsg_encode(
                                  &(msg_t) { .type = MCA_COMMON_SFIO_LOCKMSG_GRANT,
                                             .ranges = one, .nranges = 1 },
                                  buf, sizeof(buf), &len));
    ck_assert_int_eq(-EINVAL, mca_common_sfio_lockmsg_encode(
                                  &(msg_t) { .type = (mca_common_sfio_lockmsg_type_t) 9 },
                                  buf, sizeof(buf), &len));
    ck_assert_int_eq(-EINVAL, mca_common_sfio_lockmsg_encode(
                                  &(msg_t) { .type = (mca_common_sfio_lockmsg_type_t) 0 },
                                  buf, sizeof(buf), &len));
    ck_assert_uint_eq(SIZE_MAX, mca_common_sfio_lockmsg_max_size(SIZE_MAX / 4));
    /* a part must hold a range and stay within its list */
    ck_assert_int_eq(-EINVAL, mca_common_sfio_lockmsg_encode(
                                  &(msg_t) { .type = PART, .total = 5, .first = 0 },
                                  buf, sizeof(buf), &len));
    ck_assert_int_eq(-EINVAL, mca_common_sfio_lockmsg_encode(
                                  &(msg_t) { .type = PART, .ranges = one, .nranges = 1,
                                             .total = 5, .first = 5 },
                                  buf, sizeof(buf), &len));
    ck_assert_int_eq(-EINVAL, mca_common_sfio_lockmsg_encode(
                                  &(msg_t) { .type = PART, .ranges = one, .nranges = 1,
                                             .total = 0, .first = 0 },
                                  buf, sizeof(buf), &len));
}
END_TEST

/* A valid request of two ranges to corrupt by hand. */
static size_t sample(uint8_t *out)
{
    range_t r[2] = { { 5, 3, EX }, { 100, 200, SH } };
    return encode_ok(&(msg_t) { .type = REQ, .client = 1, .request = 2, .ranges = r,
                                .nranges = 2 }, out, 4096);
}

static int decode(const uint8_t *b, size_t len, size_t max_ranges)
{
    range_t out[MAXR];
    msg_t m;
    return mca_common_sfio_lockmsg_decode(b, len, out, max_ranges, &m);
}

static void put32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; ++i) b[i] = (uint8_t) (v >> (8 * i));
}

START_TEST(decode_rejects_malformed)
{
    uint8_t b[4096];
    size_t len = sample(b);
    const size_t H = MCA_COMMON_SFIO_LOCKMSG_HEADER_SIZE;
    /* the sample body: 05 03 | 5c c8 01 | bitmap 01 */
    ck_assert_uint_eq(len, H + 6);
    ck_assert_int_eq(0, decode(b, len, MAXR));
    ck_assert_int_eq(-E2BIG, decode(b, len, 1));

    sample(b); b[0] = 'X';          ck_assert_int_eq(-EPROTO, decode(b, len, MAXR));
    sample(b); b[4] = 2;            ck_assert_int_eq(-ENOTSUP, decode(b, len, MAXR));
    sample(b); b[5] = 0;            ck_assert_int_eq(-EPROTO, decode(b, len, MAXR));
    sample(b); b[5] = 6;            ck_assert_int_eq(-EPROTO, decode(b, len, MAXR));
    sample(b); b[7] = 1;            ck_assert_int_eq(-EPROTO, decode(b, len, MAXR));
    sample(b); put32(b + 8, (uint32_t) len + 1);
    ck_assert_int_eq(-EPROTO, decode(b, len, MAXR));
    /* a count the buffer cannot hold is refused before any range is read */
    sample(b); put32(b + 12, UINT32_MAX);
    ck_assert_int_eq(-EPROTO, decode(b, len, SIZE_MAX));
    sample(b); b[5] = MCA_COMMON_SFIO_LOCKMSG_GRANT;   /* ranges on a grant */
    ck_assert_int_eq(-EPROTO, decode(b, len, MAXR));
    sample(b); b[len - 1] = 0x05;   /* a mode bit past the last range */
    ck_assert_int_eq(-EPROTO, decode(b, len, MAXR));
    sample(b); b[H + 1] = 0;        /* an empty range */
    ck_assert_int_eq(-EPROTO, decode(b, len, MAXR));

    /* a redundant varint byte: 0x85 0x00 is 5 spelt long */
    sample(b);
    memmove(b + H + 2, b + H + 1, len - H - 1);
    b[H] = 0x85;
    b[H + 1] = 0x00;
    put32(b + 8, (uint32_t) len + 1);
    ck_assert_int_eq(-EPROTO, decode(b, len + 1, MAXR));

    /* gap + length past UINT64_MAX */
    uint8_t w[H + 32];
    memcpy(w, b, H);
    size_t n = H;
    for (int i = 0; i < 9; ++i) w[n++] = 0xff;   /* gap 2^64 - 1 */
    w[n++] = 0x01;
    w[n++] = 0x01;                               /* length 1 */
    w[n++] = 0x00;                               /* bitmap */
    put32(w + 8, (uint32_t) n);
    put32(w + 12, 1);
    ck_assert_int_eq(-EPROTO, decode(w, n, MAXR));
    w[H + 9] = 0x02;                             /* an 11th bit-set varint byte */
    ck_assert_int_eq(-EPROTO, decode(w, n, MAXR));
    ck_assert_int_eq(-EPROTO, decode(w, 3, MAXR));
    ck_assert_int_eq(-EPROTO, decode(w, 0, MAXR));

    /* a part whose first and total do not hold its ranges */
    range_t r[2] = { { 5, 3, EX }, { 100, 200, SH } };
    len = encode_ok(&(msg_t) { .type = PART, .client = 1, .request = 2, .ranges = r,
                               .nranges = 2, .total = 10, .first = 8 }, b, sizeof(b));
    ck_assert_uint_eq(len, H + 8 + 6);
    ck_assert_int_eq(0, decode(b, len, MAXR));
    put32(b + H + 4, 9);            /* first 9 of 10: no room for 2 */
    ck_assert_int_eq(-EPROTO, decode(b, len, MAXR));
    put32(b + H + 4, 8);
    put32(b + H, 0);                /* a list of no ranges */
    ck_assert_int_eq(-EPROTO, decode(b, len, MAXR));
    put32(b + H, 10);
    ck_assert_int_eq(-EPROTO, decode(b, H + 6, MAXR));   /* cut inside first */
}
END_TEST

/* A random valid message: mostly requests with sorted ranges whose gaps
 * and lengths span 1- to 10-byte varints. */
static void random_msg(msg_t *m, range_t *r)
{
    *m = (msg_t) { .type = (mca_common_sfio_lockmsg_type_t) (1 + rnd_below(5)),
                   .client = rnd() >> rnd_below(64), .request = rnd() >> rnd_below(64) };
    if (MCA_COMMON_SFIO_LOCKMSG_ERROR == m->type) {
        m->error = -(int32_t) rnd_below(200);
    } else if (PART == m->type || (rnd_below(3) && (m->type = REQ))) {
        uint64_t at = 0;
        size_t n = rnd_below(MAXR + 1);
        for (size_t i = 0; i < n; ++i) {
            uint64_t gap = rnd() >> (4 + rnd_below(60)), len = 1 + (rnd() >> (4 + rnd_below(60)));
            if (gap > UINT64_MAX - at || len > UINT64_MAX - at - gap) break;
            r[i] = (range_t) { at + gap, len, rnd_below(2) ? EX : SH };
            at += gap + len;
            m->nranges = i + 1;
        }
        m->ranges = r;
        if (PART == m->type && 0 == m->nranges) {
            r[0] = (range_t) { rnd() >> 1, 1, EX };
            m->nranges = 1;
        }
        if (PART == m->type) {
            m->first = (uint32_t) (rnd() >> (32 + rnd_below(33)));
            if (m->first > UINT32_MAX - m->nranges) m->first = UINT32_MAX - (uint32_t) m->nranges;
            uint64_t room = (uint64_t) UINT32_MAX - m->first - m->nranges;
            m->total = (uint32_t) (m->first + m->nranges + (room ? rnd() % (room + 1) : 0));
        }
    }
}

START_TEST(fuzz_truncation_and_bytes)
{
    rng_state = 31337 + (uint64_t) _i;
    static uint8_t good[4096], bad[4096], again[4096];
    for (int round = 0; round < 2000; ++round) {
        msg_t m, back, re;
        range_t r[MAXR], out[MAXR];
        random_msg(&m, r);
        size_t len = encode_ok(&m, good, sizeof(good));
        ck_assert_int_eq(0, mca_common_sfio_lockmsg_decode(good, len, out, MAXR, &back));
        expect_same(&m, &back);

        /* every truncation fails; decode copies to a buffer of exactly
         * that size so valgrind sees any read past it */
        for (size_t cut = 0; cut < len; ++cut) {
            uint8_t *exact = malloc(cut ? cut : 1);
            memcpy(exact, good, cut);
            REQUIRE(0 != mca_common_sfio_lockmsg_decode(exact, cut, out, MAXR, &back));
            free(exact);
        }
        /* random changes: rejected, or canonical */
        for (int k = 0; k < 20; ++k) {
            memcpy(bad, good, len);
            size_t changes = 1 + rnd_below(3);
            for (size_t c = 0; c < changes; ++c) {
                bad[rnd_below(len)] = (uint8_t) rnd();
            }
            size_t blen = rnd_below(4) ? len : rnd_below(len + 1);
            if (0 == mca_common_sfio_lockmsg_decode(bad, blen, out, MAXR, &re)) {
                size_t rlen = 0;
                REQUIRE(0 == mca_common_sfio_lockmsg_encode(&re, again, sizeof(again), &rlen));
                REQUIRE(rlen == blen && 0 == memcmp(again, bad, blen));
                REQUIRE(0 == mca_common_sfio_lockq_ranges_verify(re.ranges, re.nranges));
            }
        }
    }
}
END_TEST

/* A strided lock list of thousands of ranges stays small on the wire. */
START_TEST(strided_list_is_compact)
{
    enum { N = 4096 };
    range_t *r = malloc(N * sizeof(*r)), *out = malloc(N * sizeof(*out));
    for (size_t i = 0; i < N; ++i) r[i] = (range_t) { 4096 + i * 1024, 64, EX };
    msg_t m = { .type = REQ, .client = 1, .request = 1, .ranges = r, .nranges = N }, back;
    size_t len = encode_ok(&m, buf, sizeof(buf));
    ck_assert_uint_le(len, MCA_COMMON_SFIO_LOCKMSG_HEADER_SIZE + 3 * N + N / 8 + 1);
    ck_assert_int_eq(0, mca_common_sfio_lockmsg_decode(buf, len, out, N, &back));
    expect_same(&m, &back);
    free(r);
    free(out);
}
END_TEST

static Suite *lockmsg_suite(void)
{
    Suite *s = suite_create("sfio_lockmsg");
    TCase *tc = tcase_create("lockmsg");
    tcase_add_test(tc, round_trips);
    tcase_add_test(tc, encode_rejects);
    tcase_add_test(tc, decode_rejects_malformed);
    tcase_add_loop_test(tc, fuzz_truncation_and_bytes, 0, 2);
    tcase_add_test(tc, strided_list_is_compact);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(lockmsg_suite)
