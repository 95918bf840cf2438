/*
 * sfio_vindex: the version index of a versioned file.
 *
 * Maps every file byte that some published, not yet folded version wrote
 * to the newest such version and to where its bytes sit: (rank of the
 * writer, offset in that rank's data log).  Bytes not in the index come
 * from the flat file.  Versions are applied in ascending order, so the
 * index of snapshot P is "flat file overlaid by versions 1..P".  Pure
 * logic over sfio_rangemap; the store adapter feeds it decoded records.
 *
 * The rangemap value holds version in .version and, in .aux, the writer's
 * rank in the top 16 bits and its log offset in the low 48 bits (the
 * rangemap shifts .aux on cuts, which keeps the log offset right).
 */
#ifndef MCA_COMMON_SFIO_VINDEX_H
#define MCA_COMMON_SFIO_VINDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "sfio_rangemap.h"
#include "sfio_record.h"

#define MCA_COMMON_SFIO_VINDEX_MAX_RANKS  (1u << 16)
#define MCA_COMMON_SFIO_VINDEX_MAX_LOG    (1ull << 48)

typedef struct mca_common_sfio_vindex_t {
    mca_common_sfio_rangemap_t map;
    uint64_t applied;   /* newest version applied (0: none) */
} mca_common_sfio_vindex_t;

/* Where the bytes of [offset, offset + length) come from. */
typedef struct mca_common_sfio_vpiece_t {
    uint64_t offset;
    uint64_t length;
    int rank;              /* -1: the flat file; else that rank's data log */
    uint64_t log_offset;   /* valid when rank >= 0 */
    uint64_t version;      /* 0 for the flat file */
} mca_common_sfio_vpiece_t;

typedef int (*mca_common_sfio_vpiece_cb_t)(const mca_common_sfio_vpiece_t *piece, void *ctx);

/* A record read from rank's record log, to be applied. */
typedef struct mca_common_sfio_vindex_pending_t {
    int rank;
    mca_common_sfio_record_t record;
} mca_common_sfio_vindex_pending_t;

int mca_common_sfio_vindex_init(mca_common_sfio_vindex_t *vi,
                                const mca_common_sfio_allocator_t *alloc);
void mca_common_sfio_vindex_destroy(mca_common_sfio_vindex_t *vi);
/* Forgets every version (after a fold); applied is kept. */
void mca_common_sfio_vindex_clear(mca_common_sfio_vindex_t *vi);

/* Applies one WRITE record of rank (ABORT and PLACE records only advance
 * applied; recovery passes PLACE records as WRITE).  Requires
 * record.version > applied.  Returns 0, -EINVAL (order, rank or
 * log offset out of range) or -ENOMEM. */
int mca_common_sfio_vindex_apply(mca_common_sfio_vindex_t *vi, int rank,
                                 const mca_common_sfio_record_t *record);

/* Sorts pending by version and applies those newer than applied.  Records
 * of one version (a WRITE with its PLACE, or an ABORT beside a late
 * WRITE) apply together: every WRITE of the version is applied, in the
 * order given, the others are skipped. */
int mca_common_sfio_vindex_apply_batch(mca_common_sfio_vindex_t *vi,
                                       mca_common_sfio_vindex_pending_t *pending, size_t n);

/* Calls cb for consecutive pieces exactly covering [offset, offset +
 * length), ascending, flat and logged pieces alternating as they fall. */
int mca_common_sfio_vindex_pieces(const mca_common_sfio_vindex_t *vi, uint64_t offset,
                                  uint64_t length, mca_common_sfio_vpiece_cb_t cb, void *ctx);

/* True when some indexed byte lies in [offset, offset + length). */
bool mca_common_sfio_vindex_overlaps(const mca_common_sfio_vindex_t *vi, uint64_t offset,
                                     uint64_t length);

/* Calls cb for every indexed piece written by rank (the bytes that rank
 * won and writes back at a fold), ascending. */
int mca_common_sfio_vindex_foreach_rank(const mca_common_sfio_vindex_t *vi, int rank,
                                        mca_common_sfio_vpiece_cb_t cb, void *ctx);

static inline bool mca_common_sfio_vindex_empty(const mca_common_sfio_vindex_t *vi)
{
    return 0 == mca_common_sfio_rangemap_count(&vi->map);
}

#endif
