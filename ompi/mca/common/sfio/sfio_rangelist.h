/*
 * sfio_rangelist: a growable array of byte ranges, and the view walker that
 * produces one.  This is the lock list of list locks (Aarestad, Ching et al.): the exact
 * file ranges an access touches, sorted ascending, overlapping and adjacent
 * ranges merged, so they can be locked in order without deadlock.  Set
 * operations (intersect, subtract) serve Logan and Dickens' private/shared split.
 * Pure module: no MPI, no POSIX I/O.
 *
 * Ranges are half-open [offset, offset + length) on uint64_t with
 * offset + length <= UINT64_MAX.  A list holds only non-empty ranges.
 *
 * A list is "normalized" when its ranges are sorted ascending and separated
 * by gaps (prev.offset + prev.length < next.offset): no overlap, no contact.
 * The list tracks that in `normalized`.  add() folds a range that starts
 * inside the last range or right at its end into that range, and clears
 * `normalized` only when a range starts before the last one; so a caller
 * that adds in ascending order gets a normalized list without normalize().
 *
 * Invariants (mca_common_sfio_rangelist_verify()): count <= capacity, ranges
 * non-NULL when capacity > 0, every range non-empty and not wrapping, and
 * normalized == true implies the list is normalized.  Do not edit `ranges`
 * directly unless you also clear `normalized`.
 */
#ifndef MCA_COMMON_SFIO_RANGELIST_H
#define MCA_COMMON_SFIO_RANGELIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One range; the engine's one definition of it. */
typedef struct mca_common_sfio_range_t {
    uint64_t offset;
    uint64_t length;
} mca_common_sfio_range_t;


typedef struct mca_common_sfio_rangelist_t {
    mca_common_sfio_range_t *ranges;
    size_t count;
    size_t capacity;
    bool normalized;
} mca_common_sfio_rangelist_t;

/*
 * A periodic file view as MPI-IO defines it, flattened: the filetype's
 * blocks in typemap order (offsets relative to disp, may be unsorted or
 * overlapping, zero-length blocks are ignored), repeated every `extent`
 * bytes starting at disp.  Blocks may reach beyond extent.  The view's data
 * stream is the concatenation of the blocks, period after period.
 */
typedef struct mca_common_sfio_view_t {
    uint64_t disp;
    const mca_common_sfio_range_t *blocks;
    size_t nblocks;
    uint64_t extent;
} mca_common_sfio_view_t;

/* Empty list (normalized, no memory).  Cannot fail. */
void mca_common_sfio_rangelist_init(mca_common_sfio_rangelist_t *list);

/* Free memory; the list is empty and reusable afterwards. */
void mca_common_sfio_rangelist_destroy(mca_common_sfio_rangelist_t *list);

/* Drop all ranges, keep memory.  The list becomes normalized. */
void mca_common_sfio_rangelist_clear(mca_common_sfio_rangelist_t *list);

/* Make room for at least `capacity` ranges.  0 or -ENOMEM. */
int mca_common_sfio_rangelist_reserve(mca_common_sfio_rangelist_t *list, size_t capacity);

/* Exchange the contents of two lists. */
void mca_common_sfio_rangelist_swap(mca_common_sfio_rangelist_t *a, mca_common_sfio_rangelist_t *b);

/* Add [offset, offset + length), in any order.  length 0 is a no-op.  May
 * fold into the last range (see above), so the list is a byte set, not a
 * record of calls.  0, -EINVAL (wraps) or -ENOMEM; on error unchanged. */
int mca_common_sfio_rangelist_add(mca_common_sfio_rangelist_t *list,
                                  uint64_t offset, uint64_t length);

/* Append every range of src (src unchanged).  0 or -ENOMEM (dst unchanged). */
int mca_common_sfio_rangelist_append(mca_common_sfio_rangelist_t *dst,
                                     const mca_common_sfio_rangelist_t *src);

/* Sort ascending and merge overlapping and adjacent ranges, in place.  The
 * byte set is unchanged.  O(n log n), O(n) if already sorted.  Cannot fail. */
void mca_common_sfio_rangelist_normalize(mca_common_sfio_rangelist_t *list);

/* out = a ∩ b.  a and b must be normalized (-EINVAL otherwise); out must be
 * an initialised list distinct from a and b; its old contents are replaced
 * only on success.  Result is normalized.  0, -EINVAL or -ENOMEM. */
int mca_common_sfio_rangelist_intersect(const mca_common_sfio_rangelist_t *a,
                                        const mca_common_sfio_rangelist_t *b,
                                        mca_common_sfio_rangelist_t *out_p);

/* out = a \ b, same rules as intersect. */
int mca_common_sfio_rangelist_subtract(const mca_common_sfio_rangelist_t *a,
                                       const mca_common_sfio_rangelist_t *b,
                                       mca_common_sfio_rangelist_t *out_p);

/* Sum of lengths (counts overlapping bytes several times unless normalized). */
uint64_t mca_common_sfio_rangelist_bytes(const mca_common_sfio_rangelist_t *list);

/* Check the invariants above.  0 or -EINVAL. */
int mca_common_sfio_rangelist_verify(const mca_common_sfio_rangelist_t *list);

/* Check a view: extent > 0, at least one non-empty block, no block wraps.
 * 0 or -EINVAL. */
int mca_common_sfio_view_verify(const mca_common_sfio_view_t *view);

/*
 * Append to list_p the file ranges touched by data bytes
 * [start, start + nbytes) of the view's data stream, in access order (the
 * order MPI-IO moves the bytes), merging a range with the previous one when
 * it continues it.  With a view whose blocks are ascending and disjoint the
 * result stays normalized; otherwise call normalize() for a lock list.
 * A view whose blocks tile [0, extent) in order is treated as contiguous
 * (one range, however many periods).  nbytes 0 is a no-op.
 * Returns 0, -EINVAL (bad view or start + nbytes wraps), -EOVERFLOW (a file
 * offset would pass UINT64_MAX) or -ENOMEM; on error list_p is unchanged.
 */
int mca_common_sfio_view_map_access(const mca_common_sfio_view_t *view,
                                    uint64_t start, uint64_t nbytes,
                                    mca_common_sfio_rangelist_t *list_p);

#endif /* MCA_COMMON_SFIO_RANGELIST_H */
