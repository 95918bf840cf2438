/*
 * sfio_sfp: shared-file-pointer arithmetic (see header).
 */
#include <errno.h>
#include <stdint.h>

#include "sfio_sfp.h"

typedef unsigned __int128 u128;

int mca_common_sfio_sfp_seek(mca_common_sfio_sfp_whence_t whence, int64_t offset,
                             uint64_t etype_size, int64_t cur, uint64_t end, int64_t *new_p)
{
    __int128 base, pos;
    if (0 == etype_size || etype_size > INT64_MAX) {
        return -EINVAL;
    }
    switch (whence) {
    case MCA_COMMON_SFIO_SFP_SEEK_SET:
        base = 0;
        break;
    case MCA_COMMON_SFIO_SFP_SEEK_CUR:
        base = cur;
        break;
    case MCA_COMMON_SFIO_SFP_SEEK_END:
        /* round up: the first whole etype at or after the end of file */
        base = (__int128) (((u128) end + etype_size - 1) / etype_size * etype_size);
        break;
    default:
        return -EINVAL;
    }
    pos = base + (__int128) offset * (__int128) etype_size;
    if (pos < 0) {
        return -EINVAL;
    }
    if (pos > INT64_MAX) {
        return -EOVERFLOW;
    }
    *new_p = (int64_t) pos;
    return 0;
}

int mca_common_sfio_sfp_view_bytes_below(const mca_common_sfio_view_t *view, uint64_t size,
                                         uint64_t *bytes_p)
{
    if (0 != mca_common_sfio_view_verify(view)) {
        return -EINVAL;
    }
    const u128 E = view->extent;
    u128 total = 0;
    for (size_t i = 0; i < view->nblocks; ++i) {
        const u128 l = view->blocks[i].length;
        const u128 s0 = (u128) view->disp + view->blocks[i].offset;
        if (0 == l || s0 >= size) {
            continue;
        }
        const u128 room = (u128) size - s0;          /* > 0 */
        const u128 P = (room + E - 1) / E;           /* periods starting below size */
        u128 F = room >= l ? (room - l) / E + 1 : 0; /* periods wholly below size */
        if (F > P) {
            F = P;
        }
        /* periods F..P-1 are cut by size: each holds room - p*E bytes */
        const u128 k = P - F;
        const u128 partial = k * room - E * (k * (F + P - 1) / 2);
        total += F * l + partial;
        if (total > INT64_MAX) {
            return -EOVERFLOW;
        }
    }
    *bytes_p = (uint64_t) total;
    return 0;
}

int mca_common_sfio_sfp_access_bytes(int64_t count, uint64_t type_size, uint64_t etype_size,
                                     int64_t *bytes_p)
{
    if (count < 0 || 0 == etype_size) {
        return -EINVAL;
    }
    u128 bytes = (u128) (uint64_t) count * type_size;
    if (bytes > INT64_MAX) {
        return -EOVERFLOW;
    }
    if (0 != bytes % etype_size) {
        return -EINVAL;
    }
    *bytes_p = (int64_t) bytes;
    return 0;
}

int mca_common_sfio_sfp_to_etypes(int64_t p, uint64_t etype_size, int64_t *etypes_p)
{
    if (p < 0 || 0 == etype_size || 0 != (uint64_t) p % etype_size) {
        return -EINVAL;
    }
    *etypes_p = (int64_t) ((uint64_t) p / etype_size);
    return 0;
}

int mca_common_sfio_sfp_ordered_offset(int64_t base, int64_t prefix, uint64_t etype_size,
                                       int64_t *etypes_p)
{
    if (base < 0 || prefix < 0) {
        return -EINVAL;
    }
    if (base > INT64_MAX - prefix) {
        return -EOVERFLOW;
    }
    return mca_common_sfio_sfp_to_etypes(base + prefix, etype_size, etypes_p);
}
