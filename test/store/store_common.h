/*
 * store_common.h: the data pattern shared by t_store (the MPI program of
 * test/store) and store_util (its non-MPI helper), so that reference files
 * made by the helper can be compared byte for byte with what the MPI
 * program wrote (cmp).  Byte at file offset pos written with tag t:
 * st_pat(t, pos); never 0, so a hole (zeros) never looks like data, and
 * different tags differ at almost every byte.
 */
#ifndef STORE_COMMON_H
#define STORE_COMMON_H

#include <stdint.h>
#include <stddef.h>

static inline unsigned char st_pat(unsigned tag, uint64_t pos)
{
    uint64_t x = (pos + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t) tag + 1) * 0xD1B54A32D192ED03ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    unsigned char b = (unsigned char) (x & 0xff);
    return b ? b : 0x5a;
}

static inline void st_fill(unsigned char *buf, unsigned tag, uint64_t pos, size_t len)
{
    for (size_t i = 0; i < len; ++i) buf[i] = st_pat(tag, pos + i);
}

#endif
