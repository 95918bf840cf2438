/*
 * sfio_route: the route decision (see header).
 */
#include <stddef.h>

#include "sfio_fsmagic.h"
#include "sfio_route.h"

const mca_common_sfio_atomic_mode_info_t mca_common_sfio_atomic_modes[] = {
    { MCA_COMMON_SFIO_ATOMIC_AUTO, "auto",
      "versioned across nodes and on network storage (when fs/versioned has a store for the "
      "file), rangelock on one node over local storage, else listlock", false, 0 },
    { MCA_COMMON_SFIO_ATOMIC_VERSIONED, "versioned",
      "shadow writes and ordered versions, lock-free (needs fs/versioned)", false, 0 },
    { MCA_COMMON_SFIO_ATOMIC_LISTLOCK, "listlock",
      "lock exactly the shared bytes of each access, ascending (list locks, Aarestad, "
      "Ching et al.)", true, MCA_COMMON_SFIO_LOCK_LIST },
    { MCA_COMMON_SFIO_ATOMIC_RANGELOCK, "rangelock",
      "one lock from the first to the last byte of each access (ROMIO's way)", true,
      MCA_COMMON_SFIO_LOCK_RANGE },
    { MCA_COMMON_SFIO_ATOMIC_FILELOCK, "filelock", "lock the whole file for each access", true,
      MCA_COMMON_SFIO_LOCK_FILE },
};
const int mca_common_sfio_atomic_mode_count =
    (int) (sizeof(mca_common_sfio_atomic_modes) / sizeof(mca_common_sfio_atomic_modes[0]));

const mca_common_sfio_atomic_mode_info_t *mca_common_sfio_atomic_mode_info(int mode)
{
    for (int i = 0; i < mca_common_sfio_atomic_mode_count; ++i) {
        if ((int) mca_common_sfio_atomic_modes[i].id == mode) {
            return &mca_common_sfio_atomic_modes[i];
        }
    }
    return NULL;
}

static mca_common_sfio_route_t plain_or_store(bool through_store)
{
    return (mca_common_sfio_route_t) {
        .kind = through_store ? MCA_COMMON_SFIO_ROUTE_STORE : MCA_COMMON_SFIO_ROUTE_POSIX,
        .with_store = through_store,
    };
}

static mca_common_sfio_route_t locked(const mca_common_sfio_route_facts_t *f,
                                      mca_common_sfio_lockmode_t lockmode, bool may_cache,
                                      mca_common_sfio_route_say_t say)
{
    /* lock modes write in place: no versions are ever made; only list
     * locks tell private bytes from shared ones */
    return (mca_common_sfio_route_t) {
        .kind = MCA_COMMON_SFIO_ROUTE_LOCKED, .lockmode = lockmode,
        .with_objects = f->objects_known && MCA_COMMON_SFIO_LOCK_LIST == lockmode,
        .with_pcache = may_cache && MCA_COMMON_SFIO_LOCK_LIST == lockmode && f->objects_known &&
                       f->pcache_enabled,
        .say = say,
    };
}

mca_common_sfio_route_t mca_common_sfio_route_decide(const mca_common_sfio_route_facts_t *f)
{
    const mca_common_sfio_atomic_mode_info_t *mode = mca_common_sfio_atomic_mode_info(f->mode);
    if (!f->atomic) {
        return plain_or_store(f->have_store && f->store_attached);
    }
    if (NULL == mode) {
        return (mca_common_sfio_route_t) { .kind = MCA_COMMON_SFIO_ROUTE_NONE,
                                           .say = MCA_COMMON_SFIO_ROUTE_SAY_BAD_MODE };
    }
    if (mode->locks) {
        return locked(f, mode->lockmode, true, MCA_COMMON_SFIO_ROUTE_SAY_NOTHING);
    }
    if (f->read_only) {
        /* no write: nothing to version or lock, and no private bytes to
         * tell apart (resolving the views' intersection costs) */
        return plain_or_store(f->have_store);
    }
    if (f->have_store) {
        return (mca_common_sfio_route_t) { .kind = MCA_COMMON_SFIO_ROUTE_VERSIONS,
                                           .with_store = true,
                                           .with_objects = f->objects_known };
    }
    if (MCA_COMMON_SFIO_ATOMIC_AUTO == mode->id) {
        /* no private-byte cache: what auto's write returned is in the
         * file, as with versions (listlock asked for by name caches) */
        mca_common_sfio_route_t r =
            locked(f, f->local_one_node ? MCA_COMMON_SFIO_LOCK_RANGE : MCA_COMMON_SFIO_LOCK_LIST,
                   false, MCA_COMMON_SFIO_ROUTE_SAY_FALLBACK);
        r.with_gate = f->local_one_node && f->gate_open;
        return r;
    }
    return (mca_common_sfio_route_t) { .kind = MCA_COMMON_SFIO_ROUTE_NONE,
                                       .say = MCA_COMMON_SFIO_ROUTE_SAY_NO_STORE };
}

bool mca_common_sfio_route_wants_store(int atomic_mode, bool spans_nodes, bool network_storage)
{
    const mca_common_sfio_atomic_mode_info_t *mode = mca_common_sfio_atomic_mode_info(atomic_mode);
    if (NULL == mode) {
        return true;
    }
    if (mode->locks) {
        return false;
    }
    if (MCA_COMMON_SFIO_ATOMIC_AUTO == mode->id) {
        return spans_nodes || network_storage;
    }
    return true;
}

const char mca_common_sfio_route_auto_local_why[] =
    "its ranks share one node and its file system is local, where a lock per access costs "
    "less than versions (fbtl_versioned_atomic_mode versioned, or fbtl_versioned_storage "
    "network, chooses versions)";

const mca_common_sfio_lock_backend_info_t mca_common_sfio_lock_backends[] = {
    { MCA_COMMON_SFIO_LOCK_BACKEND_AUTO, "auto",
      "the list-lock service when the ranks span nodes and its fabric starts, else fcntl" },
    { MCA_COMMON_SFIO_LOCK_BACKEND_FCNTL, "fcntl",
      "OFD fcntl byte-range locks on the file, one call per range" },
    { MCA_COMMON_SFIO_LOCK_BACKEND_SERVICE, "service",
      "the suite's list-lock service (one host rank per file on libfabric, a whole list "
      "in one request), also on one node; fcntl when it cannot start" },
};
const int mca_common_sfio_lock_backend_count =
    (int) (sizeof(mca_common_sfio_lock_backends) / sizeof(mca_common_sfio_lock_backends[0]));

/* Whether some atomic access of a file with these open-time facts routes
 * through locks, whatever the per-access facts turn out to be. */
static bool may_lock(int atomic_mode, bool read_only, bool have_store)
{
    for (int v = 0; v < 16; ++v) {
        mca_common_sfio_route_facts_t f = {
            .mode = atomic_mode, .atomic = true, .read_only = read_only,
            .have_store = have_store, .store_attached = have_store && (v & 1),
            .objects_known = 0 != (v & 2), .pcache_enabled = 0 != (v & 4),
            .local_one_node = !have_store && (v & 8),
        };
        if (MCA_COMMON_SFIO_ROUTE_LOCKED == mca_common_sfio_route_decide(&f).kind) {
            return true;
        }
    }
    return false;
}

bool mca_common_sfio_route_wants_locksvc(int backend, int atomic_mode, bool read_only,
                                         bool have_store, bool spans_nodes)
{
    switch (backend) {
    case MCA_COMMON_SFIO_LOCK_BACKEND_SERVICE:
        return may_lock(atomic_mode, read_only, have_store);
    case MCA_COMMON_SFIO_LOCK_BACKEND_AUTO:
        return spans_nodes && may_lock(atomic_mode, read_only, have_store);
    default:
        return false;
    }
}

mca_common_sfio_lock_coherence_t mca_common_sfio_route_lock_coherence(long f_type, bool by_service)
{
    /* NFS's own fcntl locks flush at unlock and revalidate at lock */
    bool kernel_does_it = mca_common_sfio_fs_is_nfs(f_type) && !by_service;
    bool add = mca_common_sfio_fs_clients_cache(f_type) && !kernel_does_it;
    return (mca_common_sfio_lock_coherence_t) { .flush_before_release = add,
                                                .revalidate_after_grant = add };
}
