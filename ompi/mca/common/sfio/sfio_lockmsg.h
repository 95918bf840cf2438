/*
 * sfio_lockmsg: the wire form of the list-lock manager's messages
 * (sfio_lockq): a client's lock request and release, the manager's grant
 * and error.  Pure module: bytes in, bytes out, no transport.
 *
 * A message is one framed buffer (the transport keeps message bounds):
 *
 *   offset  size  field
 *   0       4     magic "SFLQ"
 *   4       1     version (1)
 *   5       1     type (mca_common_sfio_lockmsg_type_t)
 *   6       2     reserved, 0
 *   8       4     length of the whole message, header included
 *   12      4     number of ranges (0 unless REQUEST)
 *   16      8     client
 *   24      8     request
 *   ERROR:   32 4  error (a negative errno, two's complement)
 *   REQUEST: 32 .. per range, varint(gap from the previous range's end,
 *                 the first from 0) and varint(length); then a bitmap of
 *                 modes, bit i of byte i/8 set when range i is exclusive,
 *                 unused bits 0
 *   PART:    32 4  total: ranges of the whole list
 *            36 4  first: index of this part's first range in the list
 *            40 .. this part's ranges, as a REQUEST's
 *
 * A list too long for one message travels as PARTs of one request, in
 * any order; the manager takes it once it holds all total ranges.
 *
 * Integers are little-endian; a varint is LEB128 (7 bits a byte, low
 * first, at most 10 bytes, no redundant high zero bytes).  Gaps keep lock
 * lists of thousands of ranges short: a range of a regular datatype
 * usually costs 2 to 4 bytes.
 *
 * The manager must never trust a message: decode accepts exactly the
 * buffers encode produces (one encoding per message) and rejects anything
 * else without reading past the buffer, so a decoded request always
 * passes mca_common_sfio_lockq_ranges_verify().
 */
#ifndef MCA_COMMON_SFIO_LOCKMSG_H
#define MCA_COMMON_SFIO_LOCKMSG_H

#include <stddef.h>
#include <stdint.h>

#include "sfio_lockq.h"

#define MCA_COMMON_SFIO_LOCKMSG_VERSION 1
#define MCA_COMMON_SFIO_LOCKMSG_HEADER_SIZE 32

typedef enum {
    MCA_COMMON_SFIO_LOCKMSG_REQUEST = 1,    /* client -> manager: lock this list */
    MCA_COMMON_SFIO_LOCKMSG_RELEASE = 2,    /* client -> manager: release or withdraw */
    MCA_COMMON_SFIO_LOCKMSG_GRANT = 3,      /* manager -> client: the list is held */
    MCA_COMMON_SFIO_LOCKMSG_ERROR = 4,      /* manager -> client: the request failed */
    MCA_COMMON_SFIO_LOCKMSG_PART = 5        /* client -> manager: ranges of a long list */
} mca_common_sfio_lockmsg_type_t;

typedef struct mca_common_sfio_lockmsg_t {
    mca_common_sfio_lockmsg_type_t type;
    uint64_t client;
    uint64_t request;
    int32_t error;                                 /* ERROR only */
    const mca_common_sfio_lockq_range_t *ranges;   /* REQUEST and PART only */
    size_t nranges;
    uint32_t total, first;                         /* PART only */
} mca_common_sfio_lockmsg_t;

/* Bytes that encode needs at most for a message of nranges ranges, of
 * any type (SIZE_MAX when that does not fit a message's 32-bit length). */
size_t mca_common_sfio_lockmsg_max_size(size_t nranges);

/* Writes msg into buf (capacity cap) and its size to *len_p.  Returns 0,
 * -EINVAL (bad type, ranges of a REQUEST or PART that lockq would reject,
 * ranges on another type, a PART that is empty or reaches past its total)
 * or -ENOBUFS (cap too small; nothing useful in buf). */
int mca_common_sfio_lockmsg_encode(const mca_common_sfio_lockmsg_t *msg, void *buf, size_t cap,
                                   size_t *len_p);

/* Parses the message in buf[0, len).  A REQUEST's (PART's) ranges go to
 * ranges[0, max_ranges) (the caller's array; msg_p->ranges points at it).
 * Returns 0, -EPROTO (not a well-formed message: bad magic, type, reserved
 * bits, length, varint, range, mode bitmap or trailing bytes), -ENOTSUP
 * (another version) or -E2BIG (more than max_ranges ranges); *msg_p is set
 * only on success (ranges may be written to either way). */
int mca_common_sfio_lockmsg_decode(const void *buf, size_t len,
                                   mca_common_sfio_lockq_range_t *ranges, size_t max_ranges,
                                   mca_common_sfio_lockmsg_t *msg_p);

#endif /* MCA_COMMON_SFIO_LOCKMSG_H */
