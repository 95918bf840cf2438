/*
 * sfio_pcache: the private-object cache of list-locking atomic mode
 * (Logan and Dickens, "Object-Based Caching System").
 *
 * Bytes that no other rank's view reaches (Logan and Dickens' private objects)
 * need no lock, and no other rank can observe them before the views
 * change.  Writing them one small piece at a time is what makes strided
 * independent access slow on network storage (a round trip per piece), so
 * atomic list-locking writes keep them here and the group writes them at
 * its next collective point (set_view, sync, close, set_size) the way
 * Logan and Dickens flush their object cache: like two-phase I/O, each rank writes one
 * contiguous file domain of everybody's cached bytes in large requests.
 *
 * A cache holds disjoint, ascending extents; their bytes live in arena
 * slabs freed all at once by _clear.  Later writes of cached bytes replace
 * them.  Pure module: no MPI, no I/O (the mutex only guards the structure
 * against the fbtl's non-blocking worker); unit-tested by
 * test/unit/check_pcache.c.
 */
#ifndef MCA_COMMON_SFIO_PCACHE_H
#define MCA_COMMON_SFIO_PCACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sfio_iobatch.h"

typedef struct mca_common_sfio_pcache_extent_t {
    uint64_t offset;
    uint64_t length;
    char    *data;
} mca_common_sfio_pcache_extent_t;

typedef struct mca_common_sfio_pcache_slab_t {
    struct mca_common_sfio_pcache_slab_t *next;
    size_t size, used;
    char   data[];
} mca_common_sfio_pcache_slab_t;

typedef struct mca_common_sfio_pcache_t {
    pthread_mutex_t lock;            /* taken by the adapters, not here */
    mca_common_sfio_pcache_extent_t *ext;
    size_t count, capacity;
    mca_common_sfio_pcache_slab_t *slabs;   /* newest first */
    uint64_t arena_bytes;            /* bytes of slab space handed out */
    uint64_t cached_bytes;           /* bytes the extents cover */
    uint64_t eof_made;               /* highest end this rank wrote through */
    /* counters, for verbose output and tests */
    uint64_t bytes_cached_total, flushes, bytes_flushed;
} mca_common_sfio_pcache_t;

void mca_common_sfio_pcache_init(mca_common_sfio_pcache_t *pc);
void mca_common_sfio_pcache_destroy(mca_common_sfio_pcache_t *pc);

/* Forgets every extent and frees the arena (counters stay). */
void mca_common_sfio_pcache_clear(mca_common_sfio_pcache_t *pc);

/* Arena bytes a put of these segments may need (their total length). */
uint64_t mca_common_sfio_pcache_need(const mca_common_sfio_ioseg_t *segs, size_t nsegs);

/* Stores every segment's bytes (segs in any order; a later segment wins
 * where two overlap).  Returns 0 or -ENOMEM (then the cache holds a prefix
 * of the segments, each whole). */
int mca_common_sfio_pcache_put(mca_common_sfio_pcache_t *pc, const mca_common_sfio_ioseg_t *segs,
                               size_t nsegs);

/* Copies the cached bytes inside [offset, offset + length) to dst (which
 * stands for that range).  Returns the bytes copied. */
uint64_t mca_common_sfio_pcache_overlay(const mca_common_sfio_pcache_t *pc, uint64_t offset,
                                        uint64_t length, void *dst);

/* Lowest offset and end of the cached bytes ([0, 0) when empty). */
void mca_common_sfio_pcache_span(const mca_common_sfio_pcache_t *pc, uint64_t *lo, uint64_t *hi);

/* Collective flush domains: [lo, hi) cut into nranks contiguous domains of
 * one size, a multiple of align (a power of two; 0: 1).  Returns that size
 * (0 when lo >= hi).  Domain d is [lo + d * size, lo + (d + 1) * size). */
uint64_t mca_common_sfio_pcache_domain_size(uint64_t lo, uint64_t hi, int nranks, uint64_t align);

/* Cuts the cached extents at the domain bounds: fills per_domain[2 * d]
 * (pieces) and [2 * d + 1] (bytes) for d < nranks, and, when pieces is
 * not NULL, pieces[] (room for _route_count) in ascending order, each
 * inside one domain. */
size_t mca_common_sfio_pcache_route_count(const mca_common_sfio_pcache_t *pc, uint64_t lo,
                                          uint64_t dsize, int nranks);
void mca_common_sfio_pcache_route(const mca_common_sfio_pcache_t *pc, uint64_t lo, uint64_t dsize,
                                  int nranks, uint64_t *per_domain,
                                  mca_common_sfio_ioseg_t *pieces);

#endif
