/*
 * sfio_path: how an access reaches the file, as one operations table per
 * kind of path (libfabric's style): through the versioned store, under
 * byte-range locks, or straight through POSIX calls.  The engine resolves
 * a file's path (sfio_ompio), then the blocking fbtl calls and the
 * non-blocking worker (sfio_async) both run path->ops; neither branches
 * on the kind again.  No MPI here.
 */
#ifndef MCA_COMMON_SFIO_PATH_H
#define MCA_COMMON_SFIO_PATH_H

#include <stdbool.h>
#include <stdint.h>

#include "sfio_gate.h"
#include "sfio_iobatch.h"
#include "sfio_lockplan.h"
#include "sfio_locks.h"
#include "sfio_objects.h"
#include "sfio_pcache.h"
#include "sfio_posixio.h"
#include "sfio_vstore.h"

typedef struct mca_common_sfio_path_t mca_common_sfio_path_t;

typedef struct mca_common_sfio_path_ops_t {
    const char *name;   /* for verbose traces */
    /* Return 0 and the bytes moved, or a negative errno (as the path's
     * functions they call). */
    int (*write)(int fd, const mca_common_sfio_path_t *p, const mca_common_sfio_ioseg_t *segs,
                 size_t nsegs, uint64_t *written_p);
    int (*read)(int fd, const mca_common_sfio_path_t *p, const mca_common_sfio_ioseg_t *segs,
                size_t nsegs, const mca_common_sfio_sieve_policy_t *policy,
                mca_common_sfio_scratch_t *scratch, uint64_t *read_p);
} mca_common_sfio_path_ops_t;

/* A resolved path: its operations and what they work on. */
struct mca_common_sfio_path_t {
    const mca_common_sfio_path_ops_t *ops;
    mca_common_sfio_vstore_t *store;            /* versioned paths */
    mca_common_sfio_lockmode_t lockmode;        /* locked path */
    const mca_common_sfio_locker_t *locker;     /* locked path: who locks (NULL: fcntl) */
    mca_common_sfio_lock_coherence_t coherence; /* locked path: what its locks add */
    const mca_common_sfio_objects_t *objects;   /* private bytes, or NULL (all shared) */
    mca_common_sfio_pcache_t *pcache;           /* locked path: private bytes' cache, or NULL */
    const mca_common_sfio_gate_t *gate;         /* gated path: the node's gate */
};

/* Atomic accesses as versions of the store (shadow writes, snapshot reads). */
extern const mca_common_sfio_path_ops_t mca_common_sfio_path_versions;
/* Non-atomic accesses of a file whose store holds unfolded versions: writes
 * in place, reads overlaid with those versions. */
extern const mca_common_sfio_path_ops_t mca_common_sfio_path_store;
/* Atomic accesses under byte-range locks (lockmode: list, range, file). */
extern const mca_common_sfio_path_ops_t mca_common_sfio_path_locked;
/* The same behind the node's gate (sfio_gate): writes of one system call
 * take no lock. */
extern const mca_common_sfio_path_ops_t mca_common_sfio_path_gated;
/* Plain POSIX calls. */
extern const mca_common_sfio_path_ops_t mca_common_sfio_path_posix;

#endif
