/*
 * sfio_rangemap: an ordered map from disjoint byte ranges of a file to a
 * value (version, aux).  It is the interval map of the versioned path: which
 * version (and where in that version's log) holds the newest bytes of each
 * file range.  Pure module: no MPI, no POSIX I/O.
 *
 * Ranges are half-open [offset, offset + length) on uint64_t; offset + length
 * never exceeds UINT64_MAX.  The map is an AVL tree with parent pointers, so
 * assign/remove/lookup cost O(log n + k) for k touched entries.
 *
 * Invariants (checked by mca_common_sfio_rangemap_verify()):
 *  - every entry has length > 0 and offset + length <= UINT64_MAX;
 *  - entries are sorted by offset and pairwise disjoint (they may touch);
 *  - count and bytes equal the number of entries and the sum of lengths;
 *  - AVL: stored heights are exact, sibling heights differ by at most 1,
 *    parent pointers are consistent;
 *  - with MCA_COMMON_SFIO_RANGEMAP_COALESCE: no two touching neighbours have
 *    equal version and contiguous aux (they would have been merged).
 *
 * Meaning of aux: aux is the position of byte `offset` of the entry in some
 * linear space (e.g. the offset in a per-rank log).  When an entry is cut so
 * that its start moves forward by d bytes, aux moves forward by d too, so a
 * byte x of an entry always lives at aux + (x - offset).  Callers that use
 * aux as a plain tag must not rely on it after splits.
 */
#ifndef MCA_COMMON_SFIO_RANGEMAP_H
#define MCA_COMMON_SFIO_RANGEMAP_H

#include <stddef.h>
#include <stdint.h>

/* Caller-supplied allocator.  alloc returns NULL on failure; free gets the
 * size that was passed to alloc.  A NULL allocator pointer means malloc. */
typedef struct mca_common_sfio_allocator_t {
    void *(*alloc)(void *ctx, size_t size);
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx;
} mca_common_sfio_allocator_t;

typedef struct mca_common_sfio_rangemap_value_t {
    uint64_t version;
    uint64_t aux;       /* position of byte `offset`, shifted on cuts */
} mca_common_sfio_rangemap_value_t;

typedef struct mca_common_sfio_rangemap_entry_t {
    uint64_t offset;
    uint64_t length;
    mca_common_sfio_rangemap_value_t value;
} mca_common_sfio_rangemap_entry_t;

/* Merge touching entries whose values continue each other: same version and
 * right.aux == left.aux + left.length.  Lookups then return the merged entry. */
#define MCA_COMMON_SFIO_RANGEMAP_COALESCE 0x1u

struct mca_common_sfio_rangemap_node;   /* private to sfio_rangemap.c */

typedef struct mca_common_sfio_rangemap_t {
    struct mca_common_sfio_rangemap_node *root;
    size_t count;                       /* number of entries */
    uint64_t bytes;                     /* sum of entry lengths */
    mca_common_sfio_allocator_t alloc;
    unsigned flags;
} mca_common_sfio_rangemap_t;

/* Overlap iterator; becomes invalid when the map is modified. */
typedef struct mca_common_sfio_rangemap_iter_t {
    const struct mca_common_sfio_rangemap_node *next;
    uint64_t end;
} mca_common_sfio_rangemap_iter_t;

/* Callback of foreach: return 0 to continue, anything else to stop (that value
 * is returned by foreach).  It must not modify the map. */
typedef int (*mca_common_sfio_rangemap_cb_t)(const mca_common_sfio_rangemap_entry_t *entry,
                                             void *ctx);

/* Initialise an empty map.  alloc may be NULL (malloc); it is copied.  flags:
 * 0 or MCA_COMMON_SFIO_RANGEMAP_COALESCE.  Returns 0, -EINVAL on bad args. */
int mca_common_sfio_rangemap_init(mca_common_sfio_rangemap_t *map,
                                  const mca_common_sfio_allocator_t *alloc,
                                  unsigned flags);

/* Free every entry; the map stays usable (empty). */
void mca_common_sfio_rangemap_clear(mca_common_sfio_rangemap_t *map);

/* Free every entry; init is needed before reuse. */
void mca_common_sfio_rangemap_destroy(mca_common_sfio_rangemap_t *map);

/* Map [offset, offset + length) to value, overwriting whatever overlaps:
 * entries that stick out are cut (their aux shifted as described above), an
 * entry that covers the range on both sides is split in two.  length 0 is a
 * no-op.  Returns 0, -EINVAL (range wraps past UINT64_MAX) or -ENOMEM; on
 * error the map is unchanged (nodes are allocated before anything moves). */
int mca_common_sfio_rangemap_assign(mca_common_sfio_rangemap_t *map,
                                    uint64_t offset, uint64_t length,
                                    const mca_common_sfio_rangemap_value_t *value);

/* Unmap [offset, offset + length), cutting/splitting entries like assign.
 * Returns 0, -EINVAL or -ENOMEM (a split needs a node); on error unchanged. */
int mca_common_sfio_rangemap_remove(mca_common_sfio_rangemap_t *map,
                                    uint64_t offset, uint64_t length);

/* First entry that contains offset or lies after it (NFIND).  Returns 0 and
 * sets *entry_p, or -ENOENT. */
int mca_common_sfio_rangemap_nfind(const mca_common_sfio_rangemap_t *map, uint64_t offset,
                                   const mca_common_sfio_rangemap_entry_t **entry_p);

/* The entry that contains offset.  Returns 0 and sets *entry_p, or -ENOENT. */
int mca_common_sfio_rangemap_find(const mca_common_sfio_rangemap_t *map, uint64_t offset,
                                  const mca_common_sfio_rangemap_entry_t **entry_p);

/* Entry following `entry` in offset order.  Returns 0 or -ENOENT. */
int mca_common_sfio_rangemap_next(const mca_common_sfio_rangemap_t *map,
                                  const mca_common_sfio_rangemap_entry_t *entry,
                                  const mca_common_sfio_rangemap_entry_t **next_p);

/* Start iterating, in ascending order, the entries overlapping
 * [offset, offset + length).  Entries are returned whole, not clipped.
 * Returns 0, or -EINVAL if the range wraps. */
int mca_common_sfio_rangemap_iter_init(const mca_common_sfio_rangemap_t *map,
                                       uint64_t offset, uint64_t length,
                                       mca_common_sfio_rangemap_iter_t *iter_p);

/* Next overlapping entry: 0 and *entry_p set, or -ENOENT when done. */
int mca_common_sfio_rangemap_iter_next(mca_common_sfio_rangemap_iter_t *iter,
                                       const mca_common_sfio_rangemap_entry_t **entry_p);

/* Call cb for every entry overlapping [offset, offset + length), ascending.
 * Returns 0, the first non-zero value of cb, or -EINVAL if the range wraps. */
int mca_common_sfio_rangemap_foreach(const mca_common_sfio_rangemap_t *map,
                                     uint64_t offset, uint64_t length,
                                     mca_common_sfio_rangemap_cb_t cb, void *ctx);

size_t mca_common_sfio_rangemap_count(const mca_common_sfio_rangemap_t *map);
uint64_t mca_common_sfio_rangemap_bytes(const mca_common_sfio_rangemap_t *map);

/* Check every invariant listed at the top.  O(n).  Returns 0 or -EINVAL. */
int mca_common_sfio_rangemap_verify(const mca_common_sfio_rangemap_t *map);

#endif /* MCA_COMMON_SFIO_RANGEMAP_H */
