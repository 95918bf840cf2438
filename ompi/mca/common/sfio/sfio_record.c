/*
 * sfio_record: encoding and validation of version records (see header).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "sfio_record.h"
#include "sfio_util.h"

/* Largest range count a record may claim; guards decoding of garbage. */
#define RECORD_MAX_RANGES (1u << 26)

/* Checksum of the header up to its checksum field and the ranges, from
 * h: the initial value, or for a carried record the hash of its bytes
 * (hashed first, so that a writer can hash them before it takes its
 * version, outside the time others wait for it to publish). */
static uint64_t record_checksum(const unsigned char *buf, uint32_t nranges, uint64_t h)
{
    h = mca_common_sfio_fnv1a(h, buf, 32);
    return mca_common_sfio_fnv1a(h, buf + MCA_COMMON_SFIO_RECORD_HEADER,
                                 (size_t) nranges * sizeof(mca_common_sfio_range_t));
}

size_t mca_common_sfio_record_size(uint32_t nranges)
{
    return MCA_COMMON_SFIO_RECORD_HEADER + (size_t) nranges * sizeof(mca_common_sfio_range_t);
}

size_t mca_common_sfio_record_carried_size(uint32_t nranges, uint64_t bytes)
{
    return mca_common_sfio_record_size(nranges) + (size_t) ((bytes + 7) & ~(uint64_t) 7);
}

static void encode(unsigned char *p, uint32_t kind, uint64_t version, uint64_t log_offset,
                   const mca_common_sfio_range_t *ranges, uint32_t nranges, uint64_t h)
{
    uint64_t magic = MCA_COMMON_SFIO_RECORD_MAGIC;
    memcpy(p, &magic, 8);
    memcpy(p + 8, &kind, 4);
    memcpy(p + 12, &nranges, 4);
    memcpy(p + 16, &version, 8);
    memcpy(p + 24, &log_offset, 8);
    if (nranges > 0) {
        memcpy(p + MCA_COMMON_SFIO_RECORD_HEADER, ranges,
               (size_t) nranges * sizeof(mca_common_sfio_range_t));
    }
    uint64_t sum = record_checksum(p, nranges, h);
    memcpy(p + 32, &sum, 8);
}

uint64_t mca_common_sfio_record_carried_prepare(void *buf, uint32_t nranges, uint64_t bytes)
{
    unsigned char *data = (unsigned char *) buf + mca_common_sfio_record_size(nranges);
    memset(data + bytes, 0, mca_common_sfio_record_carried_size(nranges, bytes) -
                            mca_common_sfio_record_size(nranges) - (size_t) bytes);
    return mca_common_sfio_fnv1a(MCA_COMMON_SFIO_FNV1A_INIT, data, (size_t) bytes);
}

void mca_common_sfio_record_encode_carried(void *buf, uint64_t version, uint64_t data_at,
                                           const mca_common_sfio_range_t *ranges,
                                           uint32_t nranges, uint64_t prepared)
{
    encode(buf, MCA_COMMON_SFIO_RECORD_CARRIED, version, data_at | MCA_COMMON_SFIO_RECORD_IN_RECLOG,
           ranges, nranges, prepared);
}

void mca_common_sfio_record_encode(void *buf, mca_common_sfio_record_kind_t kind, uint64_t version,
                                   uint64_t log_offset, const mca_common_sfio_range_t *ranges,
                                   uint32_t nranges)
{
    encode(buf, (uint32_t) kind, version, log_offset, ranges, nranges,
           MCA_COMMON_SFIO_FNV1A_INIT);
}

int mca_common_sfio_record_decode(const void *buf, size_t avail, mca_common_sfio_record_t *rec_p)
{
    const unsigned char *p = buf;
    uint64_t magic, version, log_offset, sum;
    uint32_t kind, nranges;

    if (avail < MCA_COMMON_SFIO_RECORD_HEADER) {
        return -EAGAIN;
    }
    memcpy(&magic, p, 8);
    memcpy(&kind, p + 8, 4);
    memcpy(&nranges, p + 12, 4);
    memcpy(&version, p + 16, 8);
    memcpy(&log_offset, p + 24, 8);
    memcpy(&sum, p + 32, 8);
    bool followed = 0 != (kind & MCA_COMMON_SFIO_RECORD_FOLLOWED);
    kind &= ~MCA_COMMON_SFIO_RECORD_FOLLOWED;
    bool carried = MCA_COMMON_SFIO_RECORD_CARRIED == kind;
    if (MCA_COMMON_SFIO_RECORD_MAGIC != magic || nranges > RECORD_MAX_RANGES ||
        (MCA_COMMON_SFIO_RECORD_WRITE != kind && MCA_COMMON_SFIO_RECORD_ABORT != kind &&
         MCA_COMMON_SFIO_RECORD_PLACE != kind && MCA_COMMON_SFIO_RECORD_FRESH != kind &&
         !carried) ||
        (0 == version) != (MCA_COMMON_SFIO_RECORD_FRESH == kind) ||
        (followed && MCA_COMMON_SFIO_RECORD_WRITE != kind) ||
        (carried && !(log_offset & MCA_COMMON_SFIO_RECORD_IN_RECLOG))) {
        return -EBADMSG;
    }
    size_t size = mca_common_sfio_record_size(nranges);
    if (avail < size) {
        return -EAGAIN;
    }
    const mca_common_sfio_range_t *ranges =
        (const mca_common_sfio_range_t *) (p + MCA_COMMON_SFIO_RECORD_HEADER);
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < nranges; ++i) {
        if (ranges[i].offset + ranges[i].length < ranges[i].offset ||
            bytes + ranges[i].length < bytes) {
            return -EBADMSG;   /* a range, or the total, wraps around */
        }
        bytes += ranges[i].length;
    }
    if (carried) {
        if (bytes > MCA_COMMON_SFIO_RECORD_MAX_CARRIED) {
            return -EBADMSG;
        }
        size = mca_common_sfio_record_carried_size(nranges, bytes);
        if (avail < size) {
            return -EAGAIN;
        }
        for (size_t i = mca_common_sfio_record_size(nranges) + (size_t) bytes; i < size; ++i) {
            if (p[i]) {
                return -EBADMSG;   /* the padding is zeros: every byte is checked */
            }
        }
    }
    uint64_t h = MCA_COMMON_SFIO_FNV1A_INIT;
    if (carried) {
        h = mca_common_sfio_fnv1a(h, p + mca_common_sfio_record_size(nranges), (size_t) bytes);
    }
    if (record_checksum(p, nranges, h) != sum) {
        return -EBADMSG;
    }
    *rec_p = (mca_common_sfio_record_t) {
        .kind = carried ? MCA_COMMON_SFIO_RECORD_WRITE : (mca_common_sfio_record_kind_t) kind,
        .version = version, .log_offset = log_offset, .nranges = nranges, .ranges = ranges,
        .data_bytes = bytes, .data = carried ? p + mca_common_sfio_record_size(nranges) : NULL,
        .size = size, .followed = followed,
    };
    return 0;
}
