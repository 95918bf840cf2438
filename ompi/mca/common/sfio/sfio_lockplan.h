/*
 * sfio_lockplan: which byte ranges an atomic access locks, per lock mode.
 *
 *   listlock  (list locks, Aarestad, Ching et al.): exactly the shared
 *             bytes the access touches, neighbours merged, ascending;
 *             private bytes (Logan and Dickens' objects) are
 *             written outside any lock;
 *   rangelock: one lock from the first to the last byte touched (what
 *             ROMIO and OMPIO 5.0 do);
 *   filelock:  the whole file.
 * Locks are always taken in ascending order, which makes concurrent lock
 * lists deadlock-free.  Pure logic.
 */
#ifndef MCA_COMMON_SFIO_LOCKPLAN_H
#define MCA_COMMON_SFIO_LOCKPLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "sfio_iobatch.h"
#include "sfio_objects.h"
#include "sfio_rangelist.h"

typedef enum {
    MCA_COMMON_SFIO_LOCK_LIST = 1,
    MCA_COMMON_SFIO_LOCK_RANGE = 2,
    MCA_COMMON_SFIO_LOCK_FILE = 3
} mca_common_sfio_lockmode_t;

/* Length meaning "to the end of the file and beyond" (fcntl's 0). */
#define MCA_COMMON_SFIO_LOCK_TO_EOF UINT64_MAX

/* Builds the ascending, merged lock list of an access of nsegs segments
 * into locks_p (cleared first).  objects (may be NULL) exempts private
 * bytes in LIST mode.  Returns 0 or a negative errno. */
int mca_common_sfio_lockplan_build(mca_common_sfio_lockmode_t mode,
                                   const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                   const mca_common_sfio_objects_t *objects,
                                   mca_common_sfio_rangelist_t *locks_p);

/* Whether mode's lock of every access covers the holes between its
 * pieces, and every writer locks every byte it writes: then a writer may
 * read, patch and write back a whole extent it locked (a sieved write).
 * List locks exempt private bytes and lock only the pieces: never. */
bool mca_common_sfio_lockplan_locks_holes(mca_common_sfio_lockmode_t mode);

/* Bounds a normalized lock list to at most max_ranges ranges by bridging
 * the smallest gaps first (locking a little more keeps the access atomic;
 * the kernel's lock lists grow quadratically expensive with thousands of
 * ranges).  max_ranges 0: no bound.  Returns 0 or a negative errno. */
int mca_common_sfio_lockplan_coarsen(mca_common_sfio_rangelist_t *locks, size_t max_ranges);

/* Splits segs into the bytes Logan and Dickens call private (priv_p) and the rest
 * (shared_p), keeping each piece's memory address; without valid objects
 * everything is shared.  Arrays are malloc'ed (caller frees).  Returns 0 or
 * a negative errno. */
int mca_common_sfio_segs_split_private(const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                       const mca_common_sfio_objects_t *objects,
                                       mca_common_sfio_ioseg_t **priv_p, size_t *npriv_p,
                                       mca_common_sfio_ioseg_t **shared_p, size_t *nshared_p);

#endif
