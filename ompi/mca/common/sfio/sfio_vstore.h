/*
 * sfio_vstore: the versioned store of one open file (versioning of Tran et al., adapted).
 *
 * Beside the user's flat file, in a sidecar directory
 * ".<name>.sfio.<id>/", every rank keeps an append-only data log and a
 * record log; a small shared "coord" file, mapped by all ranks of the node,
 * holds the version counter, the publish watermark and each rank's record
 * tail.  A write that needs atomicity appends its bytes to the rank's log,
 * then takes a version (one atomic increment), appends a record naming the
 * file ranges, and publishes in version order.  Reads overlay the flat
 * file with the newest published bytes (sfio_vindex).  Collective points
 * fold published versions into the flat file, each rank writing the bytes
 * it won.  An interrupted store is recovered by the next open.
 *
 * Coordination is shared-memory atomics on one node: no rank ever waits
 * for another to enter MPI; a writer waits only for lower versions'
 * publication (a few hundred ns of metadata), and a dead writer's version
 * is skipped.
 */
#ifndef MCA_COMMON_SFIO_VSTORE_H
#define MCA_COMMON_SFIO_VSTORE_H

#include <stdbool.h>
#include <stdint.h>

#include "sfio_iobatch.h"
#include "sfio_objects.h"
#include "sfio_posixio.h"

typedef struct mca_common_sfio_vstore_t mca_common_sfio_vstore_t;

/* Counters of what the data path did, per rank. */
typedef struct mca_common_sfio_vstore_stats_t {
    uint64_t bytes_in_place;    /* written straight to the flat file */
    uint64_t bytes_fresh;       /* ... of which atomic private bytes over nothing
                                   (undo note instead of the redo journal) */
    uint64_t bytes_versioned;   /* written through versions */
    uint64_t bytes_deferred;    /* ... of which private bytes deferred to the fold */
    uint64_t bytes_overlaid;    /* read from logs instead of the flat file */
    uint64_t versions;          /* versions this rank published */
    uint64_t versions_carried;  /* ... of which carried their bytes in their records */
    uint64_t folds;             /* folds with something to write back */
    uint64_t bytes_folded;      /* bytes this rank wrote back at folds */
    uint64_t bytes_fold_cached; /* ... of which came from its log's copy in memory */
    uint64_t folds_by_owner;    /* folds where each rank wrote back the pieces it won */
    uint64_t folds_gathered;    /* folds that gathered the ranks' records over the group */
    uint64_t publish_waits;     /* publishes that had to wait for lower versions */
    uint64_t aborted_versions;  /* versions of dead writers this rank skipped */
    uint64_t fold_windows_split;   /* fold windows with holes written piece by piece, another
                                      group (collective open) of the file being open */
    uint64_t compactions;       /* compactions this rank ran to keep the store bounded */
    uint64_t flat_revalidations;   /* times this client dropped its cached view of the flat
                                      file (only where clients cache) */
} mca_common_sfio_vstore_stats_t;

/* Who writes back which bytes at a fold. */
typedef enum mca_common_sfio_fold_by_t {
    MCA_COMMON_SFIO_FOLD_BY_AUTO = 0,   /* owner when logged pieces average >= max_gap */
    MCA_COMMON_SFIO_FOLD_BY_OWNER,      /* each rank the pieces it won, from its own log */
    MCA_COMMON_SFIO_FOLD_BY_DOMAIN      /* each rank a contiguous share, in windows */
} mca_common_sfio_fold_by_t;

/* How folds write back and which atomic writes wait for them. */
typedef struct mca_common_sfio_fold_policy_t {
    mca_common_sfio_fold_by_t by;
    uint64_t cache_max;  /* bytes of this rank's log also kept in memory until the fold,
                            so the fold need not read them back (0: none) */
    uint64_t max_gap;    /* logged pieces closer than this share one write-back window */
    uint64_t window;     /* bytes of one write-back window (and its buffer) */
    int64_t defer_max;   /* atomic private bytes also go to the log while this rank's
                            log stays under defer_max bytes, so the fold writes them in
                            large windows; -1: 256 MiB when the store is in memory
                            (tmpfs), else 0 (never) */
    uint64_t defer_piece_max;   /* ... when their pieces average at most this many bytes
                                   (larger pieces gain nothing from the windows) */
    uint64_t max_log;           /* a rank whose logs (data, and records with the bytes
                                   they carry) hold more unfolded bytes than this
                                   compacts the store (0: never) */
    uint64_t max_versions;      /* ... or when more versions than this await a fold */
    bool carry_small;           /* small versions carry their bytes in their records, one
                                   request instead of two: where each is a round trip
                                   (network storage; never for a store in memory) */
    bool hidden_groups;         /* other groups of the file (other opens of it, each with
                                   its own store) may keep their stores where this one
                                   cannot see them: folds then never write a window with
                                   holes whole, and defer_max -1 means 0 */
} mca_common_sfio_fold_policy_t;

/* Collective-operation callbacks, so the store needs no MPI itself. */
typedef struct mca_common_sfio_coll_t {
    void *ctx;
    int rank, size;
    int (*barrier)(void *ctx);
    int (*bcast)(void *ctx, void *buf, int bytes, int root);
    int (*allreduce_max_int)(void *ctx, int *value);
    /* every rank's bytes bytes, in rank order, into recv */
    int (*allgather)(void *ctx, const void *send, void *recv, int bytes);
    /* rank r's counts[r] bytes at recv + displs[r] */
    int (*allgatherv)(void *ctx, const void *send, int bytes, void *recv, const int *counts,
                      const int *displs);
} mca_common_sfio_coll_t;

/* The flat file a store is made for. */
typedef struct sfio_ident_t {
    uint64_t dev, ino;
    int64_t btime_ns;            /* SFIO_BTIME_UNKNOWN when the file system has none */
    uint32_t uid;                /* the store's owner (the user that made it) */
    uint32_t fs_type;            /* statfs f_type of the flat file */
} sfio_ident_t;

/* What the group's rank 0 tells the others about a file's store at open:
 * its verdict (0 or a negative errno), the flat file's identity and the
 * store's path.  Sent as it is in one broadcast. */
typedef struct {
    int rc;
    sfio_ident_t ident;
    char id[4096];
} mca_common_sfio_vstore_name_t;

/* A store is opened in three steps, whose collectives are the caller's
 * (fs open carries them in its own broadcast and allreduce): rank 0
 * names the store of the file at path, opened as flat_fd by every rank
 * (name->rc says whether it can be made; nothing is made on disk until
 * the group's first atomic access, which makes the store directory
 * beside the file's real path, or in store_dir's private subdirectory:
 * a node-local directory such as /dev/shm keeps log traffic off the
 * file system, at the price that only a later open on the same node
 * recovers a crashed job's store; *warn_p, static text or NULL, says why
 * store_dir was not used); every rank, given rank 0's name after the
 * broadcast, makes its private part (no collective; returns 0 or a
 * negative errno); after the group agreed that every rank succeeded,
 * begin starts the store's first epoch, else discard frees what
 * named_open made. */
void mca_common_sfio_vstore_name(const char *path, const char *store_dir, int flat_fd,
                                 mca_common_sfio_vstore_name_t *name, const char **warn_p);
int mca_common_sfio_vstore_named_open(const mca_common_sfio_vstore_name_t *name, int flat_fd,
                                      const mca_common_sfio_coll_t *coll,
                                      mca_common_sfio_vstore_t **store_p);
void mca_common_sfio_vstore_begin(mca_common_sfio_vstore_t *store);
void mca_common_sfio_vstore_discard(mca_common_sfio_vstore_t *store);

struct mca_common_sfio_coord_t;

/* Right after open, the same on every rank, when the group's ranks run
 * on several nodes: the store's shared counters live in service (the
 * file's coordination service, see sfio_coord.h), not in a page mapped
 * by one node.  The store owns it from now on and closes it at close. */
void mca_common_sfio_vstore_use_service(mca_common_sfio_vstore_t *store,
                                        struct mca_common_sfio_coord_t *service);

/* Counters such a service needs for a group of nranks ranks. */
int mca_common_sfio_vstore_service_slots(int nranks);

/* Whether this rank has mapped the group's store (after its first atomic
 * access, or a collective point after any rank's). */
bool mca_common_sfio_vstore_attached(const mca_common_sfio_vstore_t *store);

/* Collective, after a barrier (OMPIO's close has one).  Folds, removes
 * the sidecar, frees the store; stats_p (may be NULL) gets the store's
 * counters as of the end of that fold.  untouched: the caller knows, the
 * same on every rank, that no rank can have touched the store (no rank
 * was ever in atomic mode); then close frees it without a collective. */
int mca_common_sfio_vstore_close(mca_common_sfio_vstore_t *store, bool untouched,
                                 mca_common_sfio_vstore_stats_t *stats_p);

/* Collective.  Writes every published version back to the flat file;
 * with durable, also fsyncs it.  synced: the caller's ranks have just
 * passed a barrier after their last writes (OMPIO does before sync and
 * close), so the fold needs none of its own. */
int mca_common_sfio_vstore_fold(mca_common_sfio_vstore_t *store, bool durable, bool synced);

/* Writes segs.  atomic: the write is one serializable unit; bytes that
 * objects (Logan and Dickens, may be NULL) call private go in place, the rest
 * become one version.  Not atomic: bytes go in place unless a published
 * version covers them (then they become a version, so that program order
 * holds).  Returns 0 and bytes written, or a negative errno. */
int mca_common_sfio_vstore_write(mca_common_sfio_vstore_t *store, const mca_common_sfio_ioseg_t *segs,
                                 size_t nsegs, bool atomic, const mca_common_sfio_objects_t *objects,
                                 uint64_t *written_p);

/* Reads segs from the newest published snapshot.  Returns 0 and the bytes
 * read (stopping at the snapshot's end of file), or a negative errno. */
int mca_common_sfio_vstore_read(mca_common_sfio_vstore_t *store, const mca_common_sfio_ioseg_t *segs,
                                size_t nsegs, const mca_common_sfio_sieve_policy_t *policy,
                                mca_common_sfio_scratch_t *scratch, uint64_t *read_p);

/* Size of the newest published snapshot (flat size or beyond). */
int mca_common_sfio_vstore_size(mca_common_sfio_vstore_t *store, uint64_t *size_p);

/* Sets the fold policy (before the first write). */
void mca_common_sfio_vstore_set_fold_policy(mca_common_sfio_vstore_t *store,
                                            const mca_common_sfio_fold_policy_t *policy);

/* Where the group's ranks on other nodes reach the file through clients
 * that cache it (caching_clients in sfio_vstore_int.h), a collective point
 * after which they may read what this rank wrote in place (a new view)
 * brackets its collective with these: flush_flat before (this rank's
 * bytes reach the server), revalidate_flat after (this client drops what
 * it cached of others' bytes).  Nothing elsewhere.  0 or a negative
 * errno. */
int mca_common_sfio_vstore_flush_flat(mca_common_sfio_vstore_t *store);
int mca_common_sfio_vstore_revalidate_flat(mca_common_sfio_vstore_t *store);

/* Whether this rank has made, tried to make or mapped the group's store:
 * where no rank of the group has, no version exists. */
bool mca_common_sfio_vstore_touched(mca_common_sfio_vstore_t *store);

/* Private bytes count as fresh (in place at once, undone by zeroing after
 * a crash) only past the flat file's size now.  Called where that size
 * bounds every byte this rank's private bytes may hold: after set_size
 * (a collective point), and when atomic mode begins (set_atomicity(fh,
 * 1), local: the size includes every byte this rank wrote without the
 * store, which such an undo must not zero; bytes of other ranks not yet
 * in the size are not in this rank's private bytes). */
void mca_common_sfio_vstore_floor_at_size(mca_common_sfio_vstore_t *store);

/* Whether an atomic write's private bytes (Logan and Dickens) are journaled before
 * they go in place (default; a crash never leaves part of a write), or go
 * in place at once (faster; a write cut by a crash may leave its private
 * bytes without its shared ones). */
void mca_common_sfio_vstore_set_journal_private(mca_common_sfio_vstore_t *store, bool journal);

void mca_common_sfio_vstore_stats(const mca_common_sfio_vstore_t *store,
                                  mca_common_sfio_vstore_stats_t *stats_p);

/* Sidecar directory of the store (for messages and tests). */
const char *mca_common_sfio_vstore_dir(const mca_common_sfio_vstore_t *store);

/* ---- stores left behind (recovery at open, the sfio-store tool) ---- */

typedef enum mca_common_sfio_store_verdict_t {
    MCA_COMMON_SFIO_STORE_LIVE,         /* a running job uses it: left alone */
    MCA_COMMON_SFIO_STORE_DEAD,         /* this user's, for this file, unchanged: appliable */
    MCA_COMMON_SFIO_STORE_EMPTY,        /* its creation never finished: nothing in it */
    MCA_COMMON_SFIO_STORE_APPLIED,      /* applied to the file and removed */
    MCA_COMMON_SFIO_STORE_DISCARDED,    /* removed without applying */
    MCA_COMMON_SFIO_STORE_FOREIGN,      /* another user's: never opened */
    MCA_COMMON_SFIO_STORE_REFUSED,      /* unsafe: symlink, mode, owner of a file in it */
    MCA_COMMON_SFIO_STORE_OTHER_FILE,   /* made for another file with this inode number */
    MCA_COMMON_SFIO_STORE_CHANGED,      /* the file was modified after the job stopped */
    MCA_COMMON_SFIO_STORE_CORRUPT,      /* unreadable coordination file or records */
    MCA_COMMON_SFIO_STORE_FAILED        /* applying or removing it failed (err) */
} mca_common_sfio_store_verdict_t;

typedef struct mca_common_sfio_store_info_t {
    const char *path;        /* the store's directory */
    mca_common_sfio_store_verdict_t verdict;
    const char *why;         /* the verdict in words */
    int nranks;              /* 0 when unknown */
    uint64_t versions;       /* published and not yet in the file */
    int err;                 /* errno of a FAILED verdict */
} mca_common_sfio_store_info_t;

typedef enum mca_common_sfio_store_action_t {
    MCA_COMMON_SFIO_STORE_LIST,         /* only look */
    MCA_COMMON_SFIO_STORE_RECOVER,      /* apply every DEAD store (what an open does) */
    MCA_COMMON_SFIO_STORE_APPLY_FORCE,  /* ... and CHANGED ones too (the tool, asked to) */
    MCA_COMMON_SFIO_STORE_DISCARD       /* remove DEAD, CHANGED, OTHER_FILE, EMPTY stores
                                           (CORRUPT too when named by only) */
} mca_common_sfio_store_action_t;

typedef struct mca_common_sfio_store_tally_t {
    uint64_t applied, discarded, refused;
    uint64_t bytes_undone;   /* fresh bytes of unfinished writes zeroed */
} mca_common_sfio_store_tally_t;

typedef void (*mca_common_sfio_store_note_fn_t)(void *ctx, const mca_common_sfio_store_info_t *info);

/* One process: finds the stores of the file open as fd (named path;
 * beside its real path, and in store_dir's private subdirectory when
 * given), decides each one's verdict and carries out action, calling
 * note for each (only: restrict to the store with this directory path).
 * Never blocks: a store in use is LIVE.  Applying needs a writable
 * descriptor: fd, or the same file reopened for writing.  Returns 0 or the
 * negative errno of the first store that could not be applied (it stays
 * in place). */
int mca_common_sfio_vstore_scan(const char *path, int fd, const char *store_dir,
                                mca_common_sfio_store_action_t action, const char *only,
                                mca_common_sfio_store_note_fn_t note, void *ctx,
                                mca_common_sfio_store_tally_t *tally_p);

const char *mca_common_sfio_store_verdict_name(mca_common_sfio_store_verdict_t v);

#endif
