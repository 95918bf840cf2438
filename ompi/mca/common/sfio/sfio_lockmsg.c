/*
 * sfio_lockmsg: encoding and strict decoding of lock-manager messages
 * (see header for the layout).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "sfio_lockmsg.h"

typedef mca_common_sfio_lockq_range_t range_t;

static const uint8_t magic[4] = { 'S', 'F', 'L', 'Q' };

#define VARINT_MAX 10
#define ERROR_BODY 4
#define PART_FIELDS 8   /* total and first of a PART */

/* A cursor over a buffer; a write or read past the end sets `overrun`. */
typedef struct {
    uint8_t *wp;
    const uint8_t *rp;
    size_t pos, len;
    bool overrun;
} cursor_t;

static void put_u8(cursor_t *c, uint8_t v)
{
    if (c->pos >= c->len) {
        c->overrun = true;
        return;
    }
    c->wp[c->pos++] = v;
}

static void put_le(cursor_t *c, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i) {
        put_u8(c, (uint8_t) (v >> (8 * i)));
    }
}

static void put_varint(cursor_t *c, uint64_t v)
{
    while (v >= 0x80) {
        put_u8(c, (uint8_t) (v | 0x80));
        v >>= 7;
    }
    put_u8(c, (uint8_t) v);
}

static uint8_t get_u8(cursor_t *c)
{
    if (c->pos >= c->len) {
        c->overrun = true;
        return 0;
    }
    return c->rp[c->pos++];
}

static uint64_t get_le(cursor_t *c, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) {
        v |= (uint64_t) get_u8(c) << (8 * i);
    }
    return v;
}

/* Reads a canonical varint: false on overrun, more than 64 bits, or a
 * redundant last byte of 0 (so each value has one encoding). */
static bool get_varint(cursor_t *c, uint64_t *v_p)
{
    uint64_t v = 0;
    for (int i = 0; i < VARINT_MAX; ++i) {
        uint8_t b = get_u8(c);
        if (c->overrun) {
            return false;
        }
        if (VARINT_MAX - 1 == i && b > 1) {
            return false;       /* bits beyond 64 */
        }
        v |= (uint64_t) (b & 0x7f) << (7 * i);
        if (0 == (b & 0x80)) {
            if (i > 0 && 0 == b) {
                return false;
            }
            *v_p = v;
            return true;
        }
    }
    return false;
}

size_t mca_common_sfio_lockmsg_max_size(size_t nranges)
{
    size_t per_range = 2 * VARINT_MAX;
    size_t body_max = UINT32_MAX - MCA_COMMON_SFIO_LOCKMSG_HEADER_SIZE;
    if (nranges > body_max / per_range) {
        return SIZE_MAX;
    }
    size_t body = PART_FIELDS + nranges * per_range + (nranges + 7) / 8;
    if (body < ERROR_BODY) {
        body = ERROR_BODY;
    }
    return body > body_max ? SIZE_MAX : MCA_COMMON_SFIO_LOCKMSG_HEADER_SIZE + body;
}

static bool type_known(uint32_t type)
{
    return type >= MCA_COMMON_SFIO_LOCKMSG_REQUEST && type <= MCA_COMMON_SFIO_LOCKMSG_PART;
}

static bool has_ranges(uint32_t type)
{
    return MCA_COMMON_SFIO_LOCKMSG_REQUEST == type || MCA_COMMON_SFIO_LOCKMSG_PART == type;
}

/* A PART holds at least one range and stays within its list. */
static bool part_fits(uint64_t total, uint64_t first, uint64_t nranges)
{
    return nranges >= 1 && first < total && nranges <= total - first;
}

static void put_ranges(cursor_t *c, const range_t *ranges, size_t nranges)
{
    uint64_t prev_end = 0;
    for (size_t i = 0; i < nranges; ++i) {
        put_varint(c, ranges[i].offset - prev_end);
        put_varint(c, ranges[i].length);
        prev_end = ranges[i].offset + ranges[i].length;
    }
    for (size_t i = 0; i < nranges; i += 8) {
        uint8_t bits = 0;
        for (size_t k = i; k < nranges && k < i + 8; ++k) {
            bits |= (uint8_t) ((MCA_COMMON_SFIO_LOCKQ_EXCLUSIVE == ranges[k].mode) << (k - i));
        }
        put_u8(c, bits);
    }
}

int mca_common_sfio_lockmsg_encode(const mca_common_sfio_lockmsg_t *msg, void *buf, size_t cap,
                                   size_t *len_p)
{
    bool is_request = has_ranges(msg->type);
    bool is_part = MCA_COMMON_SFIO_LOCKMSG_PART == msg->type;
    if (!type_known(msg->type) || (!is_request && 0 != msg->nranges)
        || msg->nranges > UINT32_MAX
        || (is_part && !part_fits(msg->total, msg->first, msg->nranges))
        || 0 != mca_common_sfio_lockq_ranges_verify(msg->ranges, msg->nranges)) {
        return -EINVAL;
    }
    if (mca_common_sfio_lockmsg_max_size(msg->nranges) > UINT32_MAX) {
        return -EINVAL;
    }
    cursor_t c = { .wp = buf, .len = cap };
    for (int i = 0; i < 4; ++i) {
        put_u8(&c, magic[i]);
    }
    put_u8(&c, MCA_COMMON_SFIO_LOCKMSG_VERSION);
    put_u8(&c, (uint8_t) msg->type);
    put_le(&c, 0, 2);
    put_le(&c, 0, 4);       /* length, filled in below */
    put_le(&c, msg->nranges, 4);
    put_le(&c, msg->client, 8);
    put_le(&c, msg->request, 8);
    if (MCA_COMMON_SFIO_LOCKMSG_ERROR == msg->type) {
        put_le(&c, (uint32_t) msg->error, 4);
    } else if (is_request) {
        if (is_part) {
            put_le(&c, msg->total, 4);
            put_le(&c, msg->first, 4);
        }
        put_ranges(&c, msg->ranges, msg->nranges);
    }
    if (c.overrun) {
        return -ENOBUFS;
    }
    cursor_t len_field = { .wp = buf, .len = cap, .pos = 8 };
    put_le(&len_field, c.pos, 4);
    *len_p = c.pos;
    return 0;
}

/* Reads nranges ranges and their mode bitmap; -EPROTO on any fault. */
static int get_ranges(cursor_t *c, range_t *ranges, size_t nranges)
{
    uint64_t prev_end = 0;
    for (size_t i = 0; i < nranges; ++i) {
        uint64_t gap, length;
        if (!get_varint(c, &gap) || !get_varint(c, &length)) {
            return -EPROTO;
        }
        if (gap > UINT64_MAX - prev_end || 0 == length
            || length > UINT64_MAX - (prev_end + gap)) {
            return -EPROTO;
        }
        ranges[i] = (range_t) { prev_end + gap, length, MCA_COMMON_SFIO_LOCKQ_SHARED };
        prev_end += gap + length;
    }
    for (size_t i = 0; i < nranges; i += 8) {
        uint8_t bits = get_u8(c);
        size_t used = nranges - i < 8 ? nranges - i : 8;
        if (c->overrun || (used < 8 && 0 != (bits >> used))) {
            return -EPROTO;
        }
        for (size_t k = 0; k < used; ++k) {
            if (bits & (1u << k)) {
                ranges[i + k].mode = MCA_COMMON_SFIO_LOCKQ_EXCLUSIVE;
            }
        }
    }
    return 0;
}

int mca_common_sfio_lockmsg_decode(const void *buf, size_t len, range_t *ranges,
                                   size_t max_ranges, mca_common_sfio_lockmsg_t *msg_p)
{
    cursor_t c = { .rp = buf, .len = len };
    if (len < MCA_COMMON_SFIO_LOCKMSG_HEADER_SIZE || 0 != memcmp(buf, magic, 4)) {
        return -EPROTO;
    }
    c.pos = 4;
    uint8_t version = get_u8(&c);
    uint8_t type = get_u8(&c);
    uint64_t reserved = get_le(&c, 2);
    uint64_t length = get_le(&c, 4);
    uint64_t nranges = get_le(&c, 4);
    mca_common_sfio_lockmsg_t msg = { .type = (mca_common_sfio_lockmsg_type_t) type };
    msg.client = get_le(&c, 8);
    msg.request = get_le(&c, 8);
    if (MCA_COMMON_SFIO_LOCKMSG_VERSION != version) {
        return -ENOTSUP;
    }
    if (!type_known(type) || 0 != reserved || length != len
        || (!has_ranges(type) && 0 != nranges)) {
        return -EPROTO;
    }
    if (nranges > max_ranges) {
        return -E2BIG;
    }
    if (MCA_COMMON_SFIO_LOCKMSG_ERROR == type) {
        msg.error = (int32_t) (uint32_t) get_le(&c, 4);
    } else if (has_ranges(type)) {
        if (MCA_COMMON_SFIO_LOCKMSG_PART == type) {
            msg.total = (uint32_t) get_le(&c, 4);
            msg.first = (uint32_t) get_le(&c, 4);
            if (c.overrun || !part_fits(msg.total, msg.first, nranges)) {
                return -EPROTO;
            }
        }
        /* Each range takes at least 2 bytes: refuse counts the buffer
         * cannot hold before touching the caller's array. */
        if (nranges > (len - c.pos) / 2 || 0 != get_ranges(&c, ranges, (size_t) nranges)) {
            return -EPROTO;
        }
        msg.ranges = ranges;
        msg.nranges = (size_t) nranges;
    }
    if (c.overrun || c.pos != len) {
        return -EPROTO;
    }
    *msg_p = msg;
    return 0;
}
