/*
 * Unit tests of sfio_record: round trips of 0, 1 and many ranges, that
 * every truncation asks for more bytes (-EAGAIN) and every single-bit flip
 * is rejected, that malformed headers and wrapping ranges are rejected,
 * decoding of a log of concatenated records, and seeded random round trips.
 * Records that carry their bytes: round trips, truncation, every bit flip
 * (bytes and padding included), and the in-record-log mark.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sfio_check.h"
#include "sfio_record.h"
#include "sfio_util.h"

typedef mca_common_sfio_range_t range_t;
typedef mca_common_sfio_record_t record_t;

#define WRITE MCA_COMMON_SFIO_RECORD_WRITE
#define ABORT MCA_COMMON_SFIO_RECORD_ABORT
#define FRESH MCA_COMMON_SFIO_RECORD_FRESH
#define HDR   MCA_COMMON_SFIO_RECORD_HEADER
#define MARK  MCA_COMMON_SFIO_RECORD_IN_RECLOG

/* Field offsets of the layout documented in sfio_record.h. */
#define OFF_MAGIC   0
#define OFF_KIND    8
#define OFF_NRANGES 12
#define OFF_VERSION 16
#define OFF_LOG     24
#define OFF_SUM     32

/* An 8-byte aligned buffer for n ranges plus slack bytes (zeroed). */
static uint64_t *alloc_buf(uint32_t nranges, size_t slack)
{
    size_t size = mca_common_sfio_record_size(nranges) + slack;
    uint64_t *b = calloc((size + 7) / 8, 8);
    ck_assert_ptr_nonnull(b);
    return b;
}

/* A random range that does not wrap; sometimes empty, sometimes huge. */
static range_t rnd_range(void)
{
    range_t r;
    switch (rnd_below(4)) {
    case 0:
        r.offset = rnd_below(1u << 20);
        r.length = rnd_below(1u << 12);
        break;
    case 1:
        r.offset = rnd();
        r.length = 0;
        break;
    case 2:
        r.offset = rnd();
        r.length = rnd_below(UINT64_MAX - r.offset + 1);   /* end <= UINT64_MAX */
        break;
    default:
        r.offset = UINT64_MAX - rnd_below(1000);
        r.length = UINT64_MAX - r.offset;
        break;
    }
    return r;
}

static void expect_record(const record_t *rec, const void *buf, mca_common_sfio_record_kind_t kind,
                          uint64_t version, uint64_t log_offset, const range_t *ranges,
                          uint32_t nranges)
{
    uint64_t bytes = 0;
    REQUIRE(rec->kind == kind);
    REQUIRE(rec->version == version);
    REQUIRE(rec->log_offset == log_offset);
    REQUIRE(rec->nranges == nranges);
    REQUIRE(rec->size == mca_common_sfio_record_size(nranges));
    REQUIRE((const void *) rec->ranges == (const unsigned char *) buf + HDR);
    for (uint32_t i = 0; i < nranges; ++i) {
        REQUIRE(rec->ranges[i].offset == ranges[i].offset);
        REQUIRE(rec->ranges[i].length == ranges[i].length);
        bytes += ranges[i].length;
    }
    REQUIRE(rec->data_bytes == bytes);
}

/* Encode, decode with exactly the record's size and with slack behind it. */
static void roundtrip(mca_common_sfio_record_kind_t kind, uint64_t version, uint64_t log_offset,
                      const range_t *ranges, uint32_t nranges)
{
    size_t size = mca_common_sfio_record_size(nranges);
    uint64_t *buf = alloc_buf(nranges, 64);
    record_t rec;

    mca_common_sfio_record_encode(buf, kind, version, log_offset, ranges, nranges);
    memset(&rec, 0xa5, sizeof(rec));
    REQUIRE(0 == mca_common_sfio_record_decode(buf, size, &rec));
    expect_record(&rec, buf, kind, version, log_offset, ranges, nranges);
    memset(&rec, 0xa5, sizeof(rec));
    REQUIRE(0 == mca_common_sfio_record_decode(buf, size + 64, &rec));
    expect_record(&rec, buf, kind, version, log_offset, ranges, nranges);
    free(buf);
}

/* ---- edge cases -------------------------------------------------------- */

START_TEST(test_size)
{
    ck_assert_uint_eq(HDR, 40);
    ck_assert_uint_eq(sizeof(range_t), 16);
    ck_assert_uint_eq(mca_common_sfio_record_size(0), 40);
    ck_assert_uint_eq(mca_common_sfio_record_size(1), 56);
    ck_assert_uint_eq(mca_common_sfio_record_size(1000), 40 + 16000);
    ck_assert_uint_eq(mca_common_sfio_record_size(UINT32_MAX), 40 + 16 * (size_t) UINT32_MAX);
}
END_TEST

START_TEST(test_roundtrip_zero_one_many)
{
    range_t one = { 4096, 100 };
    range_t many[300];

    roundtrip(WRITE, 1, 0, NULL, 0);
    roundtrip(ABORT, 7, 123, NULL, 0);
    roundtrip(MCA_COMMON_SFIO_RECORD_PLACE, 8, 4096, NULL, 0);
    roundtrip(FRESH, 0, 1u << 20, &one, 1);   /* undo notes precede their version */
    roundtrip(WRITE, 2, 100, &one, 1);
    roundtrip(ABORT, UINT64_MAX, UINT64_MAX, &one, 1);
    for (uint32_t i = 0; i < 300; ++i) {
        /* unsorted, overlapping, empty and extreme ranges, as a view may give */
        many[i].offset = (i * 7919u) % 1000u;
        many[i].length = i % 5 ? i : 0;
    }
    many[17] = (range_t) { UINT64_MAX - 1, 1 };
    many[19] = (range_t) { UINT64_MAX, 0 };
    roundtrip(WRITE, 3, 1ull << 47, many, 300);
    /* one range as long as a record can carry: the byte total is at the limit */
    range_t huge = { 0, UINT64_MAX };
    roundtrip(WRITE, 4, 0, &huge, 1);
}
END_TEST

START_TEST(test_encoded_layout)
{
    range_t r[2] = { { 10, 20 }, { 5, 1 } };
    uint64_t *buf = alloc_buf(2, 0);
    unsigned char *p = (unsigned char *) buf;
    uint64_t u64;
    uint32_t u32;

    mca_common_sfio_record_encode(buf, WRITE, 42, 4711, r, 2);
    memcpy(&u64, p + OFF_MAGIC, 8);
    ck_assert_uint_eq(u64, MCA_COMMON_SFIO_RECORD_MAGIC);
    memcpy(&u32, p + OFF_KIND, 4);
    ck_assert_uint_eq(u32, WRITE);
    memcpy(&u32, p + OFF_NRANGES, 4);
    ck_assert_uint_eq(u32, 2);
    memcpy(&u64, p + OFF_VERSION, 8);
    ck_assert_uint_eq(u64, 42);
    memcpy(&u64, p + OFF_LOG, 8);
    ck_assert_uint_eq(u64, 4711);
    ck_assert_int_eq(memcmp(p + HDR, r, sizeof(r)), 0);
    free(buf);
}
END_TEST

START_TEST(test_truncation_asks_for_more)
{
    range_t r[5] = { { 0, 1 }, { 100, 2 }, { 50, 3 }, { 7, 0 }, { 1u << 30, 4 } };
    uint32_t counts[3] = { 0, 1, 5 };
    record_t rec;

    for (int c = 0; c < 3; ++c) {
        size_t size = mca_common_sfio_record_size(counts[c]);
        uint64_t *buf = alloc_buf(counts[c], 0);
        mca_common_sfio_record_encode(buf, WRITE, 9, 99, r, counts[c]);
        for (size_t avail = 0; avail < size; ++avail) {
            memset(&rec, 0x5a, sizeof(rec));
            REQUIRE(-EAGAIN == mca_common_sfio_record_decode(buf, avail, &rec));
            REQUIRE(0x5a == ((unsigned char *) &rec)[0]);   /* untouched on error */
        }
        REQUIRE(0 == mca_common_sfio_record_decode(buf, size, &rec));
        free(buf);
    }
}
END_TEST

/*
 * Flip every bit of an encoded record.  The result must be rejected; it may
 * ask for more bytes (-EAGAIN) only when the flip raised nranges so that
 * the claimed record no longer fits in avail.
 */
static void flip_every_bit(mca_common_sfio_record_kind_t kind, uint32_t nranges, size_t slack)
{
    range_t r[8];
    size_t size = mca_common_sfio_record_size(nranges);
    uint64_t *orig = alloc_buf(nranges, slack);
    uint64_t *buf = alloc_buf(nranges, slack);
    record_t rec;

    ck_assert_uint_le(nranges, 8);
    for (uint32_t i = 0; i < nranges; ++i) {
        r[i] = (range_t) { rnd_below(1u << 20), rnd_below(1000) };
    }
    mca_common_sfio_record_encode(orig, kind, FRESH == kind ? 0 : 1 + rnd_below(1000),
                                  rnd_below(1u << 30), r, nranges);
    REQUIRE(0 == mca_common_sfio_record_decode(orig, size + slack, &rec));
    for (size_t bit = 0; bit < size * 8; ++bit) {
        memcpy(buf, orig, size + slack);
        ((unsigned char *) buf)[bit / 8] ^= (unsigned char) (1u << (bit % 8));
        memset(&rec, 0x5a, sizeof(rec));
        int rc = mca_common_sfio_record_decode(buf, size + slack, &rec);
        if (-EAGAIN == rc) {
            uint32_t n;
            memcpy(&n, (unsigned char *) buf + OFF_NRANGES, 4);
            REQUIRE(bit / 8 >= OFF_NRANGES && bit / 8 < OFF_NRANGES + 4);
            REQUIRE(n > nranges);
            REQUIRE(mca_common_sfio_record_size(n) > size + slack);
        } else {
            if (-EBADMSG != rc) {
                ck_abort_msg("kind %d nranges %u slack %zu: flip of bit %zu accepted (rc %d)",
                             (int) kind, nranges, slack, bit, rc);
            }
        }
        REQUIRE(0x5a == ((unsigned char *) &rec)[0]);
    }
    free(orig);
    free(buf);
}

START_TEST(test_single_bit_flips)
{
    rng_state = 0x51f0u;
    for (uint32_t n = 0; n <= 8; ++n) {
        flip_every_bit(WRITE, n, 0);
        flip_every_bit(ABORT, n, 0);
        flip_every_bit(FRESH, n, 0);
        flip_every_bit(WRITE, n, 16 * 4);   /* the next bytes of a log are readable */
    }
}
END_TEST

START_TEST(test_bad_header)
{
    range_t r = { 0, 8 };
    uint64_t *buf = alloc_buf(1, 0);
    unsigned char *p = (unsigned char *) buf;
    size_t size = mca_common_sfio_record_size(1);
    record_t rec;
    uint32_t kinds[4] = { 0, 5, 0x100 | WRITE, UINT32_MAX };   /* 1-4: WRITE, ABORT, PLACE, FRESH */

    /* a record all zero (a hole in a sparse record log) */
    REQUIRE(-EBADMSG == mca_common_sfio_record_decode(buf, size, &rec));

    /* wrong magic, even in the last byte */
    mca_common_sfio_record_encode(buf, WRITE, 1, 0, &r, 1);
    p[OFF_MAGIC + 7] ^= 0x80;
    REQUIRE(-EBADMSG == mca_common_sfio_record_decode(buf, size, &rec));

    /* unknown kinds, although the checksum is right */
    for (int i = 0; i < 4; ++i) {
        mca_common_sfio_record_encode(buf, (mca_common_sfio_record_kind_t) kinds[i], 1, 0, &r, 1);
        REQUIRE(-EBADMSG == mca_common_sfio_record_decode(buf, size, &rec));
    }

    /* version 0 is never published */
    mca_common_sfio_record_encode(buf, WRITE, 0, 0, &r, 1);
    REQUIRE(-EBADMSG == mca_common_sfio_record_decode(buf, size, &rec));
    mca_common_sfio_record_encode(buf, ABORT, 0, 0, NULL, 0);
    REQUIRE(-EBADMSG == mca_common_sfio_record_decode(buf, size, &rec));
    /* ... and an undo note never carries one */
    mca_common_sfio_record_encode(buf, FRESH, 3, 0, &r, 1);
    REQUIRE(-EBADMSG == mca_common_sfio_record_decode(buf, size, &rec));

    /* a garbage range count is refused, not read as "need more bytes" */
    mca_common_sfio_record_encode(buf, WRITE, 1, 0, &r, 1);
    uint32_t n = UINT32_MAX;
    memcpy(p + OFF_NRANGES, &n, 4);
    REQUIRE(-EBADMSG == mca_common_sfio_record_decode(buf, size, &rec));

    /* wrong checksum */
    mca_common_sfio_record_encode(buf, WRITE, 1, 0, &r, 1);
    p[OFF_SUM] ^= 1;
    REQUIRE(-EBADMSG == mca_common_sfio_record_decode(buf, size, &rec));
    free(buf);
}
END_TEST

/* A WRITE record may say that its version's PLACE record was appended
 * with it; no other kind may, and the flag is under the checksum. */
START_TEST(test_followed)
{
    range_t r = { 0, 8 };
    uint64_t *buf = alloc_buf(1, 0);
    unsigned char *p = (unsigned char *) buf;
    size_t size = mca_common_sfio_record_size(1);
    record_t rec;

    const uint32_t followed = MCA_COMMON_SFIO_RECORD_FOLLOWED;
    mca_common_sfio_record_encode(buf, (mca_common_sfio_record_kind_t) (WRITE | followed), 7, 0, &r,
                                  1);
    REQUIRE(0 == mca_common_sfio_record_decode(buf, size, &rec));
    REQUIRE(WRITE == rec.kind && rec.followed && 7 == rec.version && size == rec.size);
    mca_common_sfio_record_encode(buf, WRITE, 7, 0, &r, 1);
    REQUIRE(0 == mca_common_sfio_record_decode(buf, size, &rec));
    REQUIRE(WRITE == rec.kind && !rec.followed);
    /* set afterwards, it breaks the checksum */
    p[OFF_KIND + 2] |= 1;
    REQUIRE(-EBADMSG == mca_common_sfio_record_decode(buf, size, &rec));

    const mca_common_sfio_record_kind_t others[3] = { ABORT, MCA_COMMON_SFIO_RECORD_PLACE, FRESH };
    for (int i = 0; i < 3; ++i) {
        mca_common_sfio_record_encode(buf, (mca_common_sfio_record_kind_t) (others[i] | followed),
                                      FRESH == others[i] ? 0 : 7, 0, &r, 1);
        REQUIRE(-EBADMSG == mca_common_sfio_record_decode(buf, size, &rec));
    }
    free(buf);
}
END_TEST

START_TEST(test_wrapping_ranges)
{
    range_t bad[4][2] = {
        { { UINT64_MAX, 1 }, { 0, 0 } },
        { { 1, UINT64_MAX }, { 0, 0 } },
        { { 0, 10 }, { UINT64_MAX - 9, 10 } },       /* second range wraps */
        { { 1ull << 63, 1ull << 63 }, { 0, 1 } },    /* ends at 2^64 exactly */
    };
    range_t good[4] = {
        { UINT64_MAX - 1, 1 }, { 0, UINT64_MAX }, { UINT64_MAX, 0 }, { (1ull << 63) - 1, 1ull << 63 },
    };
    uint64_t *buf = alloc_buf(2, 0);
    record_t rec;

    for (int i = 0; i < 4; ++i) {
        mca_common_sfio_record_encode(buf, WRITE, 5, 0, bad[i], 2);
        REQUIRE(-EBADMSG == mca_common_sfio_record_decode(buf, mca_common_sfio_record_size(2),
                                                          &rec));
    }
    for (int i = 0; i < 4; ++i) {
        mca_common_sfio_record_encode(buf, WRITE, 5, 0, &good[i], 1);
        REQUIRE(0 == mca_common_sfio_record_decode(buf, mca_common_sfio_record_size(1), &rec));
        REQUIRE(rec.data_bytes == good[i].length);
    }
    free(buf);
}
END_TEST

/* ---- overflow regressions (found by these tests, fixed) ------------------ */

/* Every range is checked for wrapping, but their sum is not: two ranges of
 * 2^63 bytes decode with data_bytes 0, which defeats the log-limit check of
 * sfio_vindex_apply. */
START_TEST(test_data_bytes_wraps)
{
    range_t r[2] = { { 0, 1ull << 63 }, { 100, 1ull << 63 } };
    uint64_t *buf = alloc_buf(2, 0);
    record_t rec;

    mca_common_sfio_record_encode(buf, WRITE, 1, 0, r, 2);
    REQUIRE(-EBADMSG == mca_common_sfio_record_decode(buf, mca_common_sfio_record_size(2), &rec));
    free(buf);
}
END_TEST

/* ---- sequences and random runs ----------------------------------------- */

typedef struct {
    mca_common_sfio_record_kind_t kind;
    uint64_t version, log_offset;
    uint32_t nranges;
    range_t *ranges;
    size_t at;   /* position in the log */
} spec_t;

START_TEST(test_concatenated_records)
{
    enum { NREC = 200 };
    spec_t spec[NREC];
    size_t total = 0;
    uint64_t *log;
    unsigned char *p;
    record_t rec;

    rng_state = 0xc0ca + (uint64_t) _i;
    for (int i = 0; i < NREC; ++i) {
        spec[i].kind = rnd_below(8) ? WRITE : ABORT;
        spec[i].version = (uint64_t) i + 1;
        spec[i].log_offset = rnd_below(1ull << 40);
        spec[i].nranges = (uint32_t) (rnd_below(4) ? rnd_below(8) : rnd_below(200));
        spec[i].ranges = malloc((spec[i].nranges + 1) * sizeof(range_t));
        ck_assert_ptr_nonnull(spec[i].ranges);
        uint64_t left = UINT64_MAX;   /* the record's byte total must not wrap */
        for (uint32_t k = 0; k < spec[i].nranges; ++k) {
            spec[i].ranges[k] = rnd_range();
            if (spec[i].ranges[k].length > left) spec[i].ranges[k].length = left;
            left -= spec[i].ranges[k].length;
        }
        spec[i].at = total;
        total += mca_common_sfio_record_size(spec[i].nranges);
    }
    log = calloc(total / 8 + 1, 8);
    ck_assert_ptr_nonnull(log);
    p = (unsigned char *) log;
    for (int i = 0; i < NREC; ++i) {
        mca_common_sfio_record_encode(p + spec[i].at, spec[i].kind, spec[i].version,
                                      spec[i].log_offset, spec[i].ranges, spec[i].nranges);
    }

    /* walk the whole log as recovery does */
    size_t pos = 0;
    for (int i = 0; i < NREC; ++i) {
        REQUIRE(0 == mca_common_sfio_record_decode(p + pos, total - pos, &rec));
        expect_record(&rec, p + pos, spec[i].kind, spec[i].version, spec[i].log_offset,
                      spec[i].ranges, spec[i].nranges);
        pos += rec.size;
    }
    REQUIRE(pos == total);
    REQUIRE(-EAGAIN == mca_common_sfio_record_decode(p + pos, 0, &rec));

    /* a reader that sees the log only up to some tail decodes every whole
     * record and then waits for the torn one */
    for (int t = 0; t < 100; ++t) {
        size_t tail = rnd_below(total + 1), n = 0;
        int rc;
        pos = 0;
        while (0 == (rc = mca_common_sfio_record_decode(p + pos, tail - pos, &rec))) {
            pos += rec.size;
            n++;
        }
        REQUIRE(-EAGAIN == rc);
        REQUIRE(pos <= tail);
        REQUIRE(n == NREC || spec[n].at == pos);
        REQUIRE(n == NREC || spec[n].at + mca_common_sfio_record_size(spec[n].nranges) > tail);
    }

    /* a corrupt record in the middle stops the walk there */
    int bad = 1 + (int) rnd_below(NREC - 1);
    p[spec[bad].at + OFF_VERSION] ^= 0x10;
    pos = 0;
    for (int i = 0; i < bad; ++i) {
        REQUIRE(0 == mca_common_sfio_record_decode(p + pos, total - pos, &rec));
        pos += rec.size;
    }
    REQUIRE(-EBADMSG == mca_common_sfio_record_decode(p + pos, total - pos, &rec));

    for (int i = 0; i < NREC; ++i) {
        free(spec[i].ranges);
    }
    free(log);
}
END_TEST

START_TEST(test_random_roundtrips)
{
    range_t r[64];

    rng_state = 0x7e57 + (uint64_t) _i;
    for (int t = 0; t < 5000; ++t) {
        uint32_t n = (uint32_t) rnd_below(65);
        uint64_t left = UINT64_MAX;   /* the record's byte total must not wrap */
        for (uint32_t k = 0; k < n; ++k) {
            r[k] = rnd_range();
            if (r[k].length > left) r[k].length = left;
            left -= r[k].length;
        }
        roundtrip(rnd_below(2) ? WRITE : ABORT, 1 + rnd_below(UINT64_MAX), rnd(), r, n);
    }
}
END_TEST

/* A CARRIED record of n ranges (lengths 0 - 40) with patterned bytes,
 * followed by slack zero bytes; returns the buffer, *size_p its record's
 * size, *bytes_p the carried bytes. */
static uint64_t *carried(uint32_t n, size_t slack, uint64_t data_at, range_t *r,
                         size_t *size_p, uint64_t *bytes_p)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < n; ++i) {
        r[i] = (range_t) { rnd_below(1u << 20), rnd_below(41) };
        bytes += r[i].length;
    }
    size_t size = mca_common_sfio_record_carried_size(n, bytes);
    uint64_t *buf = calloc((size + slack + 7) / 8 + 1, 8);
    ck_assert_ptr_nonnull(buf);
    memset(buf, 0xee, size + slack);   /* padding must be zeroed by the encoder */
    unsigned char *d = (unsigned char *) buf + mca_common_sfio_record_size(n);
    for (uint64_t i = 0; i < bytes; ++i) d[i] = (unsigned char) (i * 7 + 3);
    memset((unsigned char *) buf + size, 0, slack);
    uint64_t prepared = mca_common_sfio_record_carried_prepare(buf, n, bytes);
    mca_common_sfio_record_encode_carried(buf, 1 + rnd_below(1000), data_at, r, n, prepared);
    *size_p = size;
    *bytes_p = bytes;
    return buf;
}

START_TEST(test_carried_roundtrip)
{
    rng_state = 0xca77u;
    for (uint32_t n = 0; n <= 6; ++n) {
        range_t r[6];
        size_t size;
        uint64_t bytes;
        uint64_t *buf = carried(n, 0, 4096 + 8 * n, r, &size, &bytes);
        record_t rec;
        ck_assert_uint_eq(size % 8, 0);
        REQUIRE(0 == mca_common_sfio_record_decode(buf, size, &rec));
        REQUIRE(WRITE == rec.kind);
        ck_assert_uint_eq(rec.size, size);
        ck_assert_uint_eq(rec.data_bytes, bytes);
        ck_assert_uint_eq(rec.log_offset, (4096 + 8 * n) | MARK);
        ck_assert_ptr_eq(rec.data, (unsigned char *) buf + mca_common_sfio_record_size(n));
        for (uint64_t i = 0; i < bytes; ++i) {
            REQUIRE(((const unsigned char *) rec.data)[i] == (unsigned char) (i * 7 + 3));
        }
        for (size_t avail = 0; avail < size; ++avail) {
            REQUIRE(-EAGAIN == mca_common_sfio_record_decode(buf, avail, &rec));
        }
        free(buf);
    }
    /* a plain record decodes without data */
    uint64_t *plain = alloc_buf(1, 0);
    range_t one = { 5, 5 };
    record_t rec;
    mca_common_sfio_record_encode(plain, WRITE, 3, 77, &one, 1);
    REQUIRE(0 == mca_common_sfio_record_decode(plain, mca_common_sfio_record_size(1), &rec));
    ck_assert_ptr_null(rec.data);
    free(plain);
}
END_TEST

/* Every bit of a carried record, its bytes and padding included, is
 * checked: a flip is rejected, or asks for more bytes when it made the
 * record claim more than there is. */
START_TEST(test_carried_bit_flips)
{
    rng_state = 0xf11bu;
    for (uint32_t n = 1; n <= 4; ++n) {
        range_t r[4];
        size_t size;
        uint64_t bytes;
        uint64_t *orig = carried(n, 64, 1024, r, &size, &bytes);
        uint64_t *buf = calloc((size + 64 + 7) / 8 + 1, 8);
        ck_assert_ptr_nonnull(buf);
        for (size_t bit = 0; bit < size * 8; ++bit) {
            memcpy(buf, orig, size + 64);
            ((unsigned char *) buf)[bit / 8] ^= (unsigned char) (1u << (bit % 8));
            record_t rec;
            int rc = mca_common_sfio_record_decode(buf, size + 64, &rec);
            if (0 == rc) {
                ck_abort_msg("n %u: flip of bit %zu of %zu accepted", n, bit, size * 8);
            }
            REQUIRE(-EBADMSG == rc || -EAGAIN == rc);
        }
        free(orig);
        free(buf);
    }
}
END_TEST

/* Re-signs buf (a record of n ranges carrying bytes) after a test edits
 * its header, so that only the rule under test can reject it. */
static void resign(uint64_t *buf, uint32_t n, uint64_t bytes)
{
    const unsigned char *p = (const unsigned char *) buf;
    uint64_t h = mca_common_sfio_fnv1a(MCA_COMMON_SFIO_FNV1A_INIT, p + HDR + n * sizeof(range_t),
                                       bytes);   /* the bytes first, then header and ranges */
    h = mca_common_sfio_fnv1a(h, p, 32);
    h = mca_common_sfio_fnv1a(h, p + HDR, n * sizeof(range_t));
    memcpy((unsigned char *) buf + OFF_SUM, &h, 8);
}

START_TEST(test_carried_mark)
{
    rng_state = 0x3a2bu;
    range_t r[2];
    size_t size;
    uint64_t bytes;
    record_t rec;
    uint64_t *buf = carried(2, 0, 512, r, &size, &bytes);
    REQUIRE(0 == mca_common_sfio_record_decode(buf, size, &rec));
    /* a carried record whose offset is not in the record log */
    uint64_t off = 512;
    memcpy((unsigned char *) buf + OFF_LOG, &off, 8);
    resign(buf, 2, bytes);
    REQUIRE(-EBADMSG == mca_common_sfio_record_decode(buf, size, &rec));
    off = 512 | MARK;
    memcpy((unsigned char *) buf + OFF_LOG, &off, 8);
    resign(buf, 2, bytes);
    REQUIRE(0 == mca_common_sfio_record_decode(buf, size, &rec));
    /* non-zero padding, re-signed: still rejected */
    if (size > mca_common_sfio_record_size(2) + bytes) {
        ((unsigned char *) buf)[size - 1] = 1;
        REQUIRE(-EBADMSG == mca_common_sfio_record_decode(buf, size, &rec));
    }
    free(buf);
    /* more bytes than a record may carry */
    range_t big = { 0, MCA_COMMON_SFIO_RECORD_MAX_CARRIED + 1 };
    uint64_t *hdr = alloc_buf(1, 0);
    mca_common_sfio_record_encode(hdr, WRITE, 4, 64, &big, 1);
    uint32_t k = 5;   /* CARRIED */
    memcpy((unsigned char *) hdr + OFF_KIND, &k, 4);
    off = 64 | MARK;
    memcpy((unsigned char *) hdr + OFF_LOG, &off, 8);
    REQUIRE(-EBADMSG == mca_common_sfio_record_decode(hdr, mca_common_sfio_record_size(1), &rec));
    free(hdr);
}
END_TEST

/* Carried and plain records back to back decode one after the other. */
START_TEST(test_carried_concatenated)
{
    rng_state = 0xc0c0u;
    size_t cap = 64 * 1024, at = 0, count = 0;
    unsigned char *log = calloc(cap / 8, 8);
    ck_assert_ptr_nonnull(log);
    uint64_t expect_bytes[64];
    while (count < 64) {
        range_t r[3];
        size_t size;
        uint64_t bytes;
        if (rnd_below(2)) {
            uint64_t *rec = carried(1 + (uint32_t) rnd_below(3), 0, at, r, &size, &bytes);
            memcpy(log + at, rec, size);
            free(rec);
        } else {
            r[0] = (range_t) { 10, 20 };
            bytes = 0;
            size = mca_common_sfio_record_size(1);
            mca_common_sfio_record_encode(log + at, WRITE, 1 + count, 4096, r, 1);
        }
        expect_bytes[count++] = bytes;
        at += size;
    }
    size_t pos = 0;
    for (size_t i = 0; i < count; ++i) {
        record_t rec;
        REQUIRE(0 == mca_common_sfio_record_decode(log + pos, at - pos, &rec));
        REQUIRE((NULL != rec.data) == (0 != (rec.log_offset & MARK)));
        if (rec.data) ck_assert_uint_eq(rec.data_bytes, expect_bytes[i]);
        pos += rec.size;
    }
    ck_assert_uint_eq(pos, at);
    free(log);
}
END_TEST

static Suite *record_suite(void)
{
    Suite *s = suite_create("sfio_record");
    TCase *tc = tcase_create("edge");
    tcase_add_test(tc, test_size);
    tcase_add_test(tc, test_roundtrip_zero_one_many);
    tcase_add_test(tc, test_encoded_layout);
    tcase_add_test(tc, test_truncation_asks_for_more);
    tcase_add_test(tc, test_single_bit_flips);
    tcase_add_test(tc, test_bad_header);
    tcase_add_test(tc, test_wrapping_ranges);
    tcase_add_test(tc, test_followed);
    tcase_add_test(tc, test_carried_roundtrip);
    tcase_add_test(tc, test_carried_bit_flips);
    tcase_add_test(tc, test_carried_mark);
    tcase_add_test(tc, test_carried_concatenated);
    suite_add_tcase(s, tc);

    tc = tcase_create("random");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_concatenated_records, 0, 4);
    tcase_add_loop_test(tc, test_random_roundtrips, 0, 4);
    suite_add_tcase(s, tc);

    tc = tcase_create("overflow");
    tcase_add_test(tc, test_data_bytes_wraps);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(record_suite)
