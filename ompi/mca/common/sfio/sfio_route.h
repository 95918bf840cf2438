/*
 * sfio_route: which way an access of a file goes, decided from facts
 * alone (no MPI, no I/O): the atomic mode asked for, whether the access
 * is atomic, whether the file has a versioned store and this rank has
 * attached it, whether the handle is read-only, whether the private
 * bytes of the current views are known.  sfio_ompio_fbtl gathers the
 * facts, keeps the answer until one of them changes, and maps the kind
 * to an operations table of sfio_path.
 */
#ifndef MCA_COMMON_SFIO_ROUTE_H
#define MCA_COMMON_SFIO_ROUTE_H

#include <stdbool.h>

#include "sfio_lockplan.h"

/* How atomic mode is provided (fbtl_versioned_atomic_mode).  The table
 * mca_common_sfio_atomic_modes names them for the MCA enum, the help text
 * and verbose output. */
typedef enum {
    MCA_COMMON_SFIO_ATOMIC_AUTO = 0,
    MCA_COMMON_SFIO_ATOMIC_VERSIONED = 1,
    MCA_COMMON_SFIO_ATOMIC_LISTLOCK = 2,
    MCA_COMMON_SFIO_ATOMIC_RANGELOCK = 3,
    MCA_COMMON_SFIO_ATOMIC_FILELOCK = 4
} mca_common_sfio_atomic_mode_t;

typedef struct mca_common_sfio_atomic_mode_info_t {
    mca_common_sfio_atomic_mode_t id;
    const char *name;
    const char *help;
    bool locks;                             /* a lock mode: always locks */
    mca_common_sfio_lockmode_t lockmode;    /* its locks */
} mca_common_sfio_atomic_mode_info_t;

extern const mca_common_sfio_atomic_mode_info_t mca_common_sfio_atomic_modes[];
extern const int mca_common_sfio_atomic_mode_count;

/* The table's entry of mode, or NULL. */
const mca_common_sfio_atomic_mode_info_t *mca_common_sfio_atomic_mode_info(int mode);

typedef enum {
    MCA_COMMON_SFIO_ROUTE_POSIX = 0,    /* plain calls */
    MCA_COMMON_SFIO_ROUTE_STORE,        /* in place; reads see unfolded versions */
    MCA_COMMON_SFIO_ROUTE_VERSIONS,     /* atomic: one version per access */
    MCA_COMMON_SFIO_ROUTE_LOCKED,       /* atomic: byte-range locks (lockmode) */
    MCA_COMMON_SFIO_ROUTE_NONE,         /* the atomic mode asked for cannot serve */
    MCA_COMMON_SFIO_ROUTE_KINDS
} mca_common_sfio_route_kind_t;

/* What the caller should tell the user about the answer. */
typedef enum {
    MCA_COMMON_SFIO_ROUTE_SAY_NOTHING = 0,
    MCA_COMMON_SFIO_ROUTE_SAY_FALLBACK,     /* auto without a store: list locks (verbose) */
    MCA_COMMON_SFIO_ROUTE_SAY_NO_STORE,     /* versioned asked, no store: an error */
    MCA_COMMON_SFIO_ROUTE_SAY_BAD_MODE      /* not a mode of the table: an error */
} mca_common_sfio_route_say_t;

typedef struct mca_common_sfio_route_facts_t {
    int mode;               /* mca_common_sfio_atomic_mode_t */
    bool atomic;            /* MPI_File_set_atomicity(fh, 1) */
    bool read_only;         /* opened MPI_MODE_RDONLY */
    bool have_store;        /* the group has a versioned store of the file */
    bool store_attached;    /* ... and this rank attached it: versions may be unfolded */
    bool objects_known;     /* the private bytes of the current views are known */
    bool pcache_enabled;    /* private bytes may be cached (private_cache > 0) */
    bool local_one_node;    /* no store as auto's ranks share one node over local storage */
    bool gate_open;         /* ... and the group opened the node's gate (sfio_gate) */
} mca_common_sfio_route_facts_t;

typedef struct mca_common_sfio_route_t {
    mca_common_sfio_route_kind_t kind;
    mca_common_sfio_lockmode_t lockmode;    /* LOCKED */
    bool with_store;        /* the path works on the store */
    bool with_objects;      /* private bytes skip versions and locks */
    bool with_pcache;       /* private bytes go to the file's cache (else written back first) */
    bool with_gate;         /* LOCKED: one-call writes skip the locks, the gate keeps them
                               apart from the locked accesses (sfio_gate) */
    mca_common_sfio_route_say_t say;
} mca_common_sfio_route_t;

/*
 * The rules, in order:
 *  - not atomic: through the store when this rank attached it (a version
 *    of the group may be unfolded), else plain;
 *  - atomic through a read-only handle in auto or versioned: nobody of
 *    the group writes (MPI 4.0, 14.6.1), so neither versions nor locks;
 *    through the store when there is one;
 *  - auto or versioned with a store: versions;
 *  - auto without a store: on one node over local storage (the store
 *    was not made for that reason) one range lock per access, as the
 *    kernel serializes writes of one file there anyway and one lock is
 *    one system call; with the node's gate open, a write of one system
 *    call takes no lock at all; elsewhere list locks; never the
 *    private-byte cache (said at verbose 1);
 *  - versioned without a store: none (an error, said once);
 *  - a lock mode: its locks, even read-only (the user asked for them).
 * Atomic accesses know the private bytes when the views say them; the
 * private-byte cache serves the listlock mode only (asked for by name:
 * a write it caches returns before its bytes reach the file).
 */
mca_common_sfio_route_t mca_common_sfio_route_decide(const mca_common_sfio_route_facts_t *facts);

/* Whether fs open makes a versioned store for a writable file whose
 * atomic accesses are asked in atomic_mode: versioned always; auto where
 * versions pay, that is across nodes (a list lock costs a round trip to
 * a service there) or on network storage (versions write each byte once,
 * in large pieces, where every request pays the link); the lock modes
 * never.  On one node over local storage the page cache takes lock lists
 * and small pieces at memory speed, and a version's record, index and
 * fold cost more than the locks they save: auto takes list locks there.
 * A mode outside the table: a store (its accesses fail with their own
 * error).  The answer must be the same on every rank: fs open takes its
 * root's. */
bool mca_common_sfio_route_wants_store(int atomic_mode, bool spans_nodes, bool network_storage);

/* Why auto has no store where route_wants_store said no (for verbose 1);
 * route_decide then answers range locks (local_one_node). */
extern const char mca_common_sfio_route_auto_local_why[];

/* Who takes the lock lists of the lock modes (fbtl_versioned_lock_backend);
 * the table mca_common_sfio_lock_backends names them. */
typedef enum {
    MCA_COMMON_SFIO_LOCK_BACKEND_AUTO = 0,
    MCA_COMMON_SFIO_LOCK_BACKEND_FCNTL = 1,
    MCA_COMMON_SFIO_LOCK_BACKEND_SERVICE = 2
} mca_common_sfio_lock_backend_t;

typedef struct mca_common_sfio_lock_backend_info_t {
    mca_common_sfio_lock_backend_t id;
    const char *name;
    const char *help;
} mca_common_sfio_lock_backend_info_t;

extern const mca_common_sfio_lock_backend_info_t mca_common_sfio_lock_backends[];
extern const int mca_common_sfio_lock_backend_count;

/* Whether a file opens the list-lock service (at open, collectively; the
 * answer must be the same on every rank): only when an atomic access of
 * the file may route through locks (route_decide: a lock mode, or auto
 * without a store on a writable handle), and then
 * for service always, for auto when the ranks span nodes (on one node the
 * kernel's fcntl locks need no round trip), for fcntl never.  When the
 * service does not start, fcntl locks serve (said at verbose 1). */
bool mca_common_sfio_route_wants_locksvc(int backend, int atomic_mode, bool read_only,
                                         bool have_store, bool spans_nodes);

/* What a lock of the locked path adds so that the bytes under it are the
 * same for every client of the file system: where clients cache the
 * file's pages (NFS, FUSE), the holder's writes must reach the server
 * before it releases, and a reader must revalidate what it cached after
 * it is granted.  The NFS client does both itself for fcntl locks (it
 * flushes at unlock and revalidates at lock); a grant of the lock service
 * is a message, and FUSE does neither for fcntl locks. */
typedef struct mca_common_sfio_lock_coherence_t {
    bool flush_before_release;
    bool revalidate_after_grant;
} mca_common_sfio_lock_coherence_t;

/* f_type: the file system's magic (statfs); by_service: the lock service
 * takes the locks, else fcntl. */
mca_common_sfio_lock_coherence_t mca_common_sfio_route_lock_coherence(long f_type, bool by_service);

#endif
