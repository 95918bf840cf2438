/*
 * sfio_vstore_int.h: what the versioned store's source files share (not
 * an interface of the engine): the coordination file's layout, where a
 * file's stores live and how they are opened safely.
 *
 * A store is the directory "<place>/.sfio-store.<inode hex>.<32 random
 * hex>" of one user (mode 0700), holding "coord" (this layout, mapped by
 * the ranks of one node), "rec.<rank>" and "log.<rank>" (0600).  <place>
 * is the directory of the file's real path, or "<store_dir>/sfio-store-
 * <euid>" (0700) with fs_versioned_store_dir.  The name is found again
 * by inode; the coordination file says whose file it is made for (device,
 * inode, birth time, owner) and what the group last left in the file
 * (mtime), and recovery applies it only to that file, unchanged since.
 */
#ifndef MCA_COMMON_SFIO_VSTORE_INT_H
#define MCA_COMMON_SFIO_VSTORE_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <dirent.h>
#include <stdint.h>
#include <sys/types.h>

#include <pthread.h>
#include "sfio_util.h"
#include "sfio_vstore.h"
#include "sfio_vindex.h"
#include "sfio_foldplan.h"
#include "sfio_lockplan.h"

#define SFIO_COORD_MAGIC   0x32444f4f43534653ull   /* "SFSCOOD2" */
#define SFIO_COORD_LAYOUT  3u
#define SFIO_STORE_PREFIX  ".sfio-store."
#define SFIO_BTIME_UNKNOWN INT64_MIN

/* Where a store's shared counters live (coord->shared_by).  MAPPED: in
 * the coordination file itself, mapped by the ranks of one node.
 * SERVICE: in the coordination service (sfio_coord) of the open file,
 * ranks on several nodes; the file then holds only what recovery needs,
 * each rank's fields written by that rank with pwrite (never through a
 * mapping: a network file system writes a mapped page back whole, over
 * other nodes' fields), and `published` is not kept there: recovery
 * takes the longest run of versions whose records are whole. */
#define SFIO_SHARED_BY_MAPPED  0u
#define SFIO_SHARED_BY_SERVICE 1u

typedef struct sfio_coord_rank_t {
    _Atomic uint64_t rec_tail;   /* bytes of valid records in rec.<rank> */
    _Atomic uint64_t pending;    /* version being published (| PENDING_READY once its
                                    record is whole), CLAIMING, or 0 */
    _Atomic int64_t pid;
    _Atomic uint64_t rec_head;   /* records before this offset are folded (compaction) */
    _Atomic int64_t flat_writing_ns;   /* realtime ns an in-place write began; 0: none */
    _Atomic uint64_t log_head;   /* log bytes before this are folded (compaction) */
    _Atomic int64_t flat_written_ns;   /* realtime ns this rank's last file write ended */
    _Atomic uint32_t in_access;  /* 1 while the rank is in a data-path call */
    char pad[4];
} sfio_coord_rank_t;

typedef struct sfio_coord_t {
    uint64_t magic;              /* written last by the creator */
    uint32_t layout;
    uint32_t nranks;
    sfio_ident_t ident;
    uint32_t shared_by;          /* SFIO_SHARED_BY_*: where the counters below live */
    char pad0[12];
    _Atomic uint64_t next_version;   /* last version handed out */
    char pad1[56];
    _Atomic uint64_t published;      /* every version <= this is published */
    char pad2[56];
    _Atomic uint64_t folded;         /* every version <= this is in the flat file */
    char pad3[56];
    _Atomic uint64_t attached;       /* ranks that mapped the store and not yet left */
    char pad4[56];
    _Atomic int64_t flat_mtime_ns;   /* the file's mtime when the store was made */
    _Atomic uint64_t compactions;    /* compactions so far (each clears the indexes) */
    _Atomic uint32_t compacting;     /* rank + 1 of the rank compacting, 0: none */
    char pad5[44];
    sfio_coord_rank_t rank[];
} sfio_coord_t;

static inline size_t sfio_coord_bytes(int nranks)
{
    return sizeof(sfio_coord_t) + (size_t) nranks * sizeof(sfio_coord_rank_t);
}

/* Byte ranges of the coordination file used as locks (never data):
 *  - SFIO_LIVE_BYTE: every attached rank holds a read lock while the
 *    store is open; recovery takes a write lock;
 *  - SFIO_WINDOW_BYTE(r): rank r holds a write lock while its fold writes
 *    windows whole (see fold_domain).
 * OFD locks belong to the open file, not the process
 * (mca_common_sfio_ofd_lock). */
#define SFIO_LIVE_BYTE      ((off_t) 0)
#define SFIO_WINDOW_BYTE(r) ((off_t) 1 + (off_t) (r))

/* ---- identity ---- */

/* The identity of the open file fd, owner = this process's euid. */
int sfio_ident_of_fd(int fd, sfio_ident_t *ident_p);
int64_t sfio_mtime_ns_of_fd(int fd);   /* -errno on failure */
int64_t sfio_now_ns(void);

/* ---- places ---- */

/* Where stores of the file open as fd (named path) live: places[0] gets
 * new stores, places[1] (may be NULL) is searched too.  store_dir NULL or
 * "": beside the file.  A store_dir whose private subdirectory cannot be
 * made safe is not used: *warn_p then says why (static string) and the
 * store goes beside the file.  Free with sfio_places_free. */
int sfio_places(const char *path, int fd, const char *store_dir, char *places[2],
                const char **warn_p);
void sfio_places_free(char *places[2]);

/* "<place>/.sfio-store.<ino>." */
char *sfio_store_prefix(uint64_t ino);

/* opendir(place) for a search of its stores, or NULL with errno 0 when
 * the directory holds no subdirectory but (when own is not NULL) own, a
 * subdirectory of it known to exist: every store is a directory.  Where
 * the file system keeps a directory's link count (2 plus its
 * subdirectories), a crowded directory of plain files costs one statx
 * instead of a read of every entry; elsewhere (btrfs: always 1) it reads
 * the entries.  NULL with errno set on failure. */
DIR *sfio_opendir_stores(const char *place, const char *own);

/* A fresh, unguessable store name for inode ino. */
int sfio_store_name(uint64_t ino, char *buf, size_t len);

/* Copies len bytes from from_fd at from_off to to_fd at to_off through
 * buf (bufsize bytes): a logged piece into the flat file.  Returns 0 or
 * a negative errno (-EIO: the source ended early). */
int sfio_copy_range(int from_fd, uint64_t from_off, int to_fd, uint64_t to_off, uint64_t len,
                    char *buf, size_t bufsize);

char *sfio_path_join(const char *dir, const char *name);
char *sfio_rank_file(const char *dir, const char *kind, int rank);

/* ---- safe opens ---- */

/* Whether dir is a directory (not a symlink) of this user with no access
 * for others.  Returns 0, or -errno with *why_p naming the problem. */
int sfio_dir_private(const char *dir, const char **why_p);

/* open() of a store file: never follows a symlink; an existing file must
 * be a regular file of this user with one link.  flags as for open().
 * Returns the descriptor or -errno (-EPERM when not the user's, -ELOOP
 * for a symlink); *why_p says which check failed. */
int sfio_open_store_file(const char *path, int flags, const char **why_p);


/* ------------------------------------------------------------------ */
/* The store of one open file, shared by sfio_vstore*.c                */
/* ------------------------------------------------------------------ */

#define CLAIMING      UINT64_MAX               /* pending: taking a version */
#define PENDING_READY (UINT64_C(1) << 62)      /* pending: its record is whole */
#define FOLD_CHUNK    (4u << 20)
/* How long a rank waits for another rank of its group to finish creating
 * the store it also needs. */
#define CREATE_WAIT_NS ((int64_t) 30 * 1000000000)

typedef sfio_coord_rank_t coord_rank_t;
typedef sfio_coord_t coord_t;

/* The group's shared state, by where it lives (coord->shared_by): an ops
 * table per place, so the data path, the fold and compaction read the
 * same whichever it is.  Every operation returns 0 or a negative errno
 * (the mapped page never fails; the service may time out). */
/* What each rank brings to a fold (gathered from all): its verdict so far
 * (0 or a negative errno), the bytes of records its record file holds
 * since it was last emptied, and the bytes its gather buffer can take. */
typedef struct sfio_fold_facts_t {
    int64_t err;
    uint64_t rec_bytes;
    uint64_t capacity;
} sfio_fold_facts_t;

typedef struct sfio_vshared_marks_t {
    uint64_t published;      /* every version <= this is published */
    uint64_t folded;         /* every version <= this is in the flat file */
    uint64_t compactions;    /* compactions so far */
} sfio_vshared_marks_t;

typedef struct sfio_vshared_ops_t {
    const char *name;
    uint32_t shared_by;      /* SFIO_SHARED_BY_*, written in the coordination file */
    /* Recovery finds the published versions only from whole records (the
     * mark is not in the file): a version whose record, even an ABORT
     * one, could not be written must not be published. */
    bool publish_needs_record;
    /* Other ranks' record files are read over the network (each open, size
     * and read a round trip): a catch-up reads several at once, and a fold
     * (a collective point) gathers every rank's records over the group
     * instead. */
    bool records_remote;
    /* this rank starts (attach) and stops (close) using the store */
    int (*join)(mca_common_sfio_vstore_t *s);
    int (*leave)(mca_common_sfio_vstore_t *s);
    /* rank 0 at close, after its own leave: whether every rank left
     * (waits a little for the others) */
    bool (*all_left)(mca_common_sfio_vstore_t *s);
    int (*take_version)(mca_common_sfio_vstore_t *s, uint64_t *version_p);
    /* returns once every version <= version is published */
    int (*publish)(mca_common_sfio_vstore_t *s, uint64_t version);
    /* this rank's records now end at s->rec_tail (what recovery reads) */
    int (*records_end)(mca_common_sfio_vstore_t *s);
    int (*marks)(mca_common_sfio_vstore_t *s, sfio_vshared_marks_t *m);
    int (*set_folded)(mca_common_sfio_vstore_t *s, uint64_t folded);
    /* where rank r's unfolded records and data begin (compaction moves them) */
    int (*heads)(mca_common_sfio_vstore_t *s, int r, uint64_t *rec_head, uint64_t *log_head);
    int (*set_heads)(mca_common_sfio_vstore_t *s, int r, uint64_t rec_head, uint64_t log_head);
    /* where rank r's whole records end; *exact false: only an upper
     * bound (the file's end), records past the last whole one are being
     * written.  rec_fd: rank r's record file, or -1 (then -EAGAIN when
     * only the file can tell) */
    int (*records_tail)(mca_common_sfio_vstore_t *s, int r, int rec_fd, uint64_t *tail,
                        bool *exact);
    int (*count_compaction)(mca_common_sfio_vstore_t *s);
    /* data-path calls against compaction (see sfio_vstore_gate_enter) */
    int (*gate_enter)(mca_common_sfio_vstore_t *s);
    /* Optional: the gate and a version at once (*version_p 0: no version
     * taken, the gate entered all the same) */
    int (*gate_enter_take)(mca_common_sfio_vstore_t *s, uint64_t *version_p);
    void (*gate_leave)(mca_common_sfio_vstore_t *s);
    int (*compaction_begin)(mca_common_sfio_vstore_t *s);
    void (*compaction_end)(mca_common_sfio_vstore_t *s);
    /* this rank's flat-file write begins (writing) or ends (!writing) now */
    void (*flat_mark)(mca_common_sfio_vstore_t *s, bool writing, int64_t now_ns);
} sfio_vshared_ops_t;

extern const sfio_vshared_ops_t sfio_vshared_mapped;
extern const sfio_vshared_ops_t sfio_vshared_service;

/* Writes one 8-byte field of this store's coordination file at offset
 * (SERVICE stores: never through the mapping). */
int sfio_vshared_put_field(mca_common_sfio_vstore_t *s, size_t offset, uint64_t value);

struct mca_common_sfio_vstore_t {
    mca_common_sfio_coll_t coll;
    int rank, nranks;
    int flat_fd;
    char *dir;
    int coord_fd;
    coord_t *coord;              /* mapped coordination file (NULL: not attached) */
    size_t coord_size;
    const sfio_vshared_ops_t *shared;   /* where the counters live */
    struct mca_common_sfio_coord_t *service;   /* SERVICE: the file's coordination service */
    uint64_t folded_seen;        /* folded as of the last catch-up */
    bool folded_known;           /* folded_seen was read from the shared state */
    uint64_t log_head_seen;      /* this rank's log head as of the last catch-up */
    uint64_t rec_head_seen;      /* ... and its record log's (bytes carried there count
                                    against the log bound too) */
    /* Across nodes on a file system whose clients cache (NFS, FUSE): what a
     * rank wrote (log, record, flat file) reaches another node only once
     * it is on the server, and another node reads it only after it
     * revalidated what its client cached.  So appends are flushed before
     * they are published, write-backs before the agreement that ends a
     * fold or a compaction; readers open a record file anew for its size
     * (close-to-open), revalidate a log before its new bytes and the flat
     * file after a fold or another rank's compaction. */
    bool caching_clients;
    int log_fd, rec_fd;
    int *log_fds;                /* per rank, opened on first use; [rank] = log_fd */
    int *rec_fds;                /* per other rank, its record file for reading, kept
                                    open where the tails are shared (one node) and
                                    for carried bytes; else -1 */
    uint64_t log_tail, rec_tail;
    /* A copy of this rank's log [logcopy_base, + logcopy_len), kept until the fold
     * (at most fold.cache_max bytes), so the fold writes back from memory
     * instead of reading the log back over the network. */
    char *logcopy;
    uint64_t logcopy_base, logcopy_len, logcopy_cap;
    uint64_t *rec_cursor;        /* per rank: bytes of rec.<r> applied */
    /* a fold's gather of the ranks' records (records_remote): per rank
     * facts and allgatherv counts (allocated at open), and the receive
     * buffer kept between folds */
    struct sfio_fold_facts_t *fold_facts;
    int *fold_counts, *fold_displs;
    char *recgather;
    size_t recgather_cap;
    uint64_t recgather_last;     /* the last fold's records, all ranks */
    uint64_t seen;               /* index holds every version <= seen */
    uint64_t taken_last;         /* the newest version this rank took */
    uint64_t taken_early;        /* taken with the gate, not yet made (0: none) */
    uint64_t rec_room_to;        /* the record log is allocated up to here */
    bool rec_room_off;           /* its file system cannot allocate ahead */
    uint64_t max_end;            /* end of the furthest indexed byte */
    uint64_t min_start;          /* start of the first indexed byte (UINT64_MAX: none) */
    mca_common_sfio_fold_policy_t fold;
    mca_common_sfio_vindex_t index;
    pthread_mutex_t lock;
    mca_common_sfio_vstore_stats_t stats;
    bool journal_private;        /* atomic private bytes go through the redo journal */
    /* This rank's private bytes at or past fresh_floor held nothing when
     * the current epoch (collective point to collective point) began, and
     * this rank has not written them since: nobody else may write them in
     * this epoch.  Such bytes need no redo journal: a crash before the
     * version is published is undone by zeroing them (FRESH record).
     * written_end: the end of the furthest byte this rank wrote through
     * the store by any route (in place, journaled, or in a version that a
     * fold puts in place later); the floor never sits below it. */
    uint64_t fresh_floor;
    uint64_t written_end;
    char *recbuf;
    size_t recbuf_size;
    /* Where the stores of this flat file live (other groups' handles of
     * the same file keep theirs there too), how their names start, and
     * this store's name among them.  The directory itself is made at the
     * group's first atomic access (attach). */
    char *side_dir, *side_prefix;
    const char *side_name;
    sfio_ident_t ident;          /* the flat file (rank 0's view, sent at open) */
    uint64_t seen_compactions;   /* coord->compactions the index was built after */
    uint64_t max_log;            /* compact when this rank's logs pass it (0: never) */
    uint64_t max_versions;       /* ... or when this many versions await a fold */
    uint64_t versions_since;     /* versions this rank published since its last check */
    bool reserve;                /* reserve flat-file space for versioned bytes */
    bool tried_making;           /* this rank tried to make the store (attach with create) */
    uint64_t reserved_to;        /* file bytes below this have their blocks (the size
                                    at the last collective point, then extended) */
    uint64_t reserve_unit;       /* blocks are reserved whole: at most the file
                                    system's block, a power of two */
    bool attach_failed_told;
};


#define path_join sfio_path_join
#define rank_file sfio_rank_file
#define coord_bytes sfio_coord_bytes
#define COORD_LIVE_BYTE SFIO_LIVE_BYTE
#define COORD_WINDOW_BYTE SFIO_WINDOW_BYTE
#define coord_lock_range mca_common_sfio_ofd_lock

int sfio_vstore_coord_lock(int fd, short type, bool wait);

/* Marks the start and end of this rank's writes to the flat file, so
 * that recovery can tell the group's own modifications (an mtime no
 * newer than the end of its last write, or one in flight at a crash)
 * from anybody else's.  Clock reads only: the file's mtime comes from the
 * kernel's coarse clock, never ahead of the end taken after the write. */
void sfio_vstore_flat_begin(mca_common_sfio_vstore_t *s);

void sfio_vstore_flat_end(mca_common_sfio_vstore_t *s);

/* Written bytes of the flat file, bracketed by flat_begin/end. */
int sfio_vstore_flat_write_segs(mca_common_sfio_vstore_t *s, const mca_common_sfio_ioseg_t *segs,
                           size_t n, uint64_t *done_p);

/* The same for a fold's write-back: its pieces are kept in flight together
 * however few they are (mca_common_sfio_posix_write_pieces). */
int sfio_vstore_flat_write_pieces(mca_common_sfio_vstore_t *s, const mca_common_sfio_ioseg_t *segs,
                                  size_t n, uint64_t *done_p);

ssize_t sfio_vstore_flat_pwrite(mca_common_sfio_vstore_t *s, const void *buf, size_t n, uint64_t off);

int sfio_vstore_recbuf_reserve(mca_common_sfio_vstore_t *s, size_t n);

void sfio_vstore_stores_add(mca_common_sfio_vstore_t *s);

void sfio_vstore_stores_remove(mca_common_sfio_vstore_t *s);

/* A store file of this rank's group, opened without following symlinks
 * and only when it is this user's; out of descriptors, the cached
 * readers' are given back once first. */
int sfio_vstore_open_in_store(mca_common_sfio_vstore_t *s, const char *kind, int rank, int flags);

int sfio_vstore_log_fd_of(mca_common_sfio_vstore_t *s, int rank);

/* The descriptor that holds rank's logged bytes at *offset: its data log,
 * or its record log for bytes a record carries (the mark is taken off
 * *offset). */
int sfio_vstore_source_fd(mca_common_sfio_vstore_t *s, int rank, uint64_t *offset);

/* Closes the cached descriptors of other ranks' logs: after a fold the
 * logs start over at offset 0, and on NFS only an open revalidates what
 * the client cached of a file. */
void sfio_vstore_drop_readers(mca_common_sfio_vstore_t *s);

/* A collective point: every write of the group has returned, so the flat
 * file's size bounds every byte written so far. */
void sfio_vstore_refresh_fresh_floor(mca_common_sfio_vstore_t *s);

/* Brings the index to the newest published version.  Caller holds lock. */
int sfio_vstore_catch_up(mca_common_sfio_vstore_t *s);

/* The same with the marks already known (NULL: asks the shared state)
 * and, when gathered is not NULL, rank r's records taken from gathered[r]
 * [0, gathered_len[r]) (all its record file holds since it was last
 * emptied, as a fold gathers them) instead of from its file. */
int sfio_vstore_catch_up_with(mca_common_sfio_vstore_t *s, const sfio_vshared_marks_t *known,
                              char *const *gathered, const uint64_t *gathered_len);

/* Empties the index; every rank's cursor goes to its first unfolded
 * record (as of s->seen_compactions), the index holds versions <= folded
 * (none). */
int sfio_vstore_restart_index(mca_common_sfio_vstore_t *s, uint64_t folded);

/* Extends the in-memory copy of this rank's log by the bytes just logged
 * at [start, ...) when they continue it and fit fold.cache_max; after the
 * first gap or overflow the copy stops growing until the next fold (the
 * fold then reads the rest from the log). */
void sfio_vstore_logcopy_append(mca_common_sfio_vstore_t *s, uint64_t start,
                           const mca_common_sfio_ioseg_t *logsegs, size_t n);

/* Drops the copy with the log it mirrors (after a fold); a large buffer
 * is released rather than kept through the next epoch. */
void sfio_vstore_logcopy_reset(mca_common_sfio_vstore_t *s, uint64_t base);

/* Creates this rank's data and record logs on first use. */
int sfio_vstore_ensure_logs(mca_common_sfio_vstore_t *s);

/* Whether a handle of another group (another collective open of the same
 * flat file, with its own store) is open: its ranks may write any byte
 * of the file at any time, and a byte no rank of this group wrote may be
 * theirs.  Called with this rank's window byte locked: a group whose
 * store this scan misses opens after it and waits for that lock before
 * its first write (wait_other_windows). */
bool sfio_vstore_others_open(const mca_common_sfio_vstore_t *s);

int sfio_vstore_agree(const mca_common_sfio_coll_t *c, int rc);

/* Whether this rank has made, tried to make or mapped the store (under
 * none of the store's locks). */
int sfio_vstore_touched(mca_common_sfio_vstore_t *s);

/* Maps the group's store for this rank: made first when create (an
 * atomic write), else only when it exists.  Returns 0, -ENOENT (no store:
 * no version exists), or -errno. */
int sfio_vstore_attach(mca_common_sfio_vstore_t *s, bool create);


/* Lays segs out in the log from *tail on: fills logsegs and the record's
 * file ranges (neighbours merged).  Returns the number of ranges. */
uint32_t sfio_vstore_layout(const mca_common_sfio_ioseg_t *segs, size_t n, uint64_t *tail,
                       mca_common_sfio_ioseg_t *logsegs, mca_common_sfio_range_t *ranges);

int sfio_vstore_gate_enter(mca_common_sfio_vstore_t *s);

/* sfio_vstore_gate_enter, and a version taken in the same request where
 * the shared state can (s->taken_early; else 0). */
int sfio_vstore_gate_enter_take(mca_common_sfio_vstore_t *s);

void sfio_vstore_gate_leave(mca_common_sfio_vstore_t *s);

bool sfio_vstore_over_bounds(const mca_common_sfio_vstore_t *s);

/* Writes every published version into the flat file and releases the
 * records and log bytes behind them, while no rank of the group is in a
 * data-path call: the store stays bounded between collective points.
 * Caller holds s->lock and no gate. */
int sfio_vstore_compact(mca_common_sfio_vstore_t *s);

/* mca_common_sfio_vstore_fold; closing: the store is closed right after,
 * so the logs are left as they are (close unlinks them) instead of being
 * emptied for further versions. */
int sfio_vstore_fold_at(mca_common_sfio_vstore_t *s, bool durable, bool synced, bool closing);

#endif
