/*
 * fbtl/versioned component: parameters, open/close, selection.
 */
#include "ompi_config.h"

#include "opal/util/output.h"
#include "ompi/mca/fbtl/fbtl.h"

#include "fbtl_versioned.h"
#include "sfio_async.h"
#include "sfio_locks.h"
#include "sfio_component.h"
#include "sfio_ompio.h"

int mca_fbtl_versioned_priority = 60;   /* above stock fbtl/posix (50 on ufs) */
int mca_fbtl_versioned_verbose = 0;
int mca_fbtl_versioned_output = -1;
mca_common_sfio_sieve_policy_t mca_fbtl_versioned_sieve;
int mca_fbtl_versioned_atomic_mode = MCA_COMMON_SFIO_ATOMIC_AUTO;

static bool sieve_enabled = true;
static bool write_sieve_enabled = true;
static bool auto_gate = true;
static size_t sieve_max_gap = 4096;
static size_t sieve_max_window = 16 * 1024 * 1024;
static size_t sieve_max_block = 1024 * 1024;
static size_t lock_max_ranges = 1024;
static size_t lock_service_max_ranges = 65536;
static size_t lock_service_max_overtakes = 1;
static unsigned io_depth = 0;
static size_t io_depth_min_segs = 64;
static size_t private_cache = 64 * 1024 * 1024;
static size_t private_cache_piece_max = 32 * 1024;
static int lock_backend = 0;   /* MCA_COMMON_SFIO_LOCK_BACKEND_AUTO */
static int storage = MCA_COMMON_SFIO_STORAGE_AUTO;
static int lock_wait_timeout = 120000;
static int lock_probe_after = 1000;
static int lock_dead_timeout = 10000;

/* The plain parameters (defaults: the variables' initial values). */
static const mca_common_sfio_param_t params[] = {
    { "priority", MCA_BASE_VAR_TYPE_INT, &mca_fbtl_versioned_priority,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Priority of the fbtl versioned component (stock fbtl/posix uses 50 on POSIX file "
      "systems; the highest wins)" },
    { "verbose", MCA_BASE_VAR_TYPE_INT, &mca_fbtl_versioned_verbose,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_LOCAL,
      "Verbosity of the fbtl versioned component (0: silent, 1: decisions and errors, "
      "10: every call)" },
    { "read_datasieving", MCA_BASE_VAR_TYPE_BOOL, &sieve_enabled,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Read a strided request's covering extent once and copy the pieces out, where the "
      "holes are small (see datasieving_max_gap)" },
    { "write_datasieving", MCA_BASE_VAR_TYPE_BOOL, &write_sieve_enabled,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "In atomic mode under a range or file lock (atomic_mode rangelock, filelock, and auto "
      "on one node's local storage), write a strided request's covering extent as one "
      "read-modify-write under the lock, where the holes are small (see "
      "datasieving_max_gap); only under fcntl locks (not the lock service); list locks and "
      "versions never sieve writes" },
    { "auto_gate", MCA_BASE_VAR_TYPE_BOOL, &auto_gate,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "atomic_mode auto on one node's local storage (ext2/3/4, XFS, Btrfs, tmpfs, ZFS): an "
      "atomic write of one file-contiguous piece takes no lock, because the kernel already "
      "makes one write call atomic against the others there; a counter in the node's shared "
      "memory keeps such writes apart from reads and multi-piece writes, which take their "
      "range lock.  false: a range lock for every atomic access.  Give every rank the same "
      "value" },
    { "datasieving_max_gap", MCA_BASE_VAR_TYPE_SIZE_T, &sieve_max_gap,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Largest hole in bytes that a sieved read or write covers (larger holes split it)" },
    { "datasieving_buffer_size", MCA_BASE_VAR_TYPE_SIZE_T, &sieve_max_window,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Largest extent in bytes a sieved read or write transfers at once (the temporary "
      "buffer size)" },
    { "datasieving_max_block", MCA_BASE_VAR_TYPE_SIZE_T, &sieve_max_block,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Pieces larger than this many bytes are transferred directly, never sieved" },
    { "lock_max_ranges", MCA_BASE_VAR_TYPE_SIZE_T, &lock_max_ranges,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Largest number of byte ranges one atomic access locks with fcntl locks; longer "
      "lock lists bridge their smallest gaps (still atomic, a little less concurrent), "
      "because fcntl lock tables get quadratically slow with thousands of ranges; 0: no bound" },
    { "lock_service_max_ranges", MCA_BASE_VAR_TYPE_SIZE_T, &lock_service_max_ranges,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Largest number of byte ranges of one lock list taken by the list-lock service (a list "
      "longer than one message travels in parts, assembled by the host); longer lists bridge "
      "their smallest gaps.  The host holds up to 3 lists of this many ranges per rank "
      "(24 bytes a range); give every rank the same value" },
    { "lock_service_max_overtakes", MCA_BASE_VAR_TYPE_SIZE_T, &lock_service_max_overtakes,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "List-lock service: how many later lock lists the host may grant ahead of a waiting "
      "list that conflicts with them (each of them conflicting with no held list).  Lists "
      "are otherwise granted first come, first served among those that conflict; a list is "
      "never passed more often than this, so none starves.  Overtaking lets neighbours "
      "whose lists overlap (tiles in a row) take turns in two rounds instead of one at a "
      "time; 0: strict FIFO" },
    { "io_depth_min_pieces", MCA_BASE_VAR_TYPE_SIZE_T, &io_depth_min_segs,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Accesses of fewer pieces than this are issued by the calling thread alone "
      "(see io_depth)" },
    { "private_cache", MCA_BASE_VAR_TYPE_SIZE_T, &private_cache,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Bytes per process and file that list-locking atomic mode keeps of its private bytes "
      "(bytes no other rank's view reaches, as in Logan and Dickens' object-based files) "
      "instead of writing them piece by "
      "piece; the group writes them at its next collective point (set_view, sync, "
      "set_size, close) in one contiguous domain per rank.  A write that does not fit "
      "writes the cache back first.  0: private bytes go straight to the file" },
    { "private_cache_piece_max", MCA_BASE_VAR_TYPE_SIZE_T, &private_cache_piece_max,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Only writes whose private pieces average at most this many bytes go to the private "
      "cache (see private_cache); larger pieces cost little more than their bytes when "
      "written at once, while the collective flush moves every cached byte twice" },
    { "lock_wait_timeout", MCA_BASE_VAR_TYPE_INT, &lock_wait_timeout,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "List-lock service (see lock_backend): milliseconds an atomic access waits for its "
      "lock list before it withdraws it and fails with MPI_ERR_IO (a host that is gone, or "
      "a live holder slower than this)" },
    { "lock_probe_after", MCA_BASE_VAR_TYPE_INT, &lock_probe_after,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "List-lock service: when a lock list has waited this many milliseconds, the host "
      "probes the holders that have been silent as long (their progress thread answers)" },
    { "lock_dead_timeout", MCA_BASE_VAR_TYPE_INT, &lock_dead_timeout,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "List-lock service: a probed holder that does not answer within this many "
      "milliseconds counts as dead: its locks are released and the process is refused "
      "for the rest of the open (a dead holder blocks others at most lock_probe_after + "
      "lock_dead_timeout + 0.1 s)" },
    { "io_depth", MCA_BASE_VAR_TYPE_UNSIGNED_INT, &io_depth,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Requests in flight per process for an access of many noncontiguous pieces (the "
      "calling thread and io_depth - 1 helper threads each issue a share).  On network "
      "storage every request pays a round trip, so n small pieces one at a time pay n of "
      "them.  0 (auto, default): 8 on network storage (see storage), else 1; 1: one "
      "request at a time; at most 64" },
};

static int versioned_register(void)
{
    const mca_base_component_t *c = &mca_fbtl_versioned_component.fbtlm_version;

    mca_common_sfio_component_register_params(c, params,
        sizeof(params) / sizeof(params[0]));
    (void) mca_common_sfio_atomic_mode_register(c, &mca_fbtl_versioned_atomic_mode);
    (void) mca_common_sfio_lock_backend_register(c, &lock_backend);
    (void) mca_common_sfio_storage_register(c,
        "What kind of storage the file is on, for this component's automatic choices: auto "
        "(default): statfs says (NFS, Lustre, GPFS, BeeGFS, CephFS, OrangeFS, CIFS, AFS are "
        "network, the rest local); local: one node's file system or page cache; network: "
        "every request pays a link to the storage.  atomic_mode auto uses versions on "
        "network storage (and across nodes) and a range lock per access on one node's "
        "local storage; "
        "io_depth auto keeps 8 requests in flight on network storage.  Set it where statfs "
        "cannot tell, e.g. a FUSE mount of remote storage or an emulation", &storage);
    return OMPI_SUCCESS;
}

static int versioned_open(void)
{
    int rc = mca_common_sfio_component_open("fbtl", "versioned", mca_fbtl_versioned_verbose,
                                            true, &mca_fbtl_versioned_output);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    mca_fbtl_versioned_sieve = (mca_common_sfio_sieve_policy_t) {
        .enabled = sieve_enabled,
        .max_gap = sieve_max_gap,
        .max_window = sieve_max_window,
        .max_block = sieve_max_block,
    };
    mca_common_sfio_lock_write_sieve = mca_fbtl_versioned_sieve;
    mca_common_sfio_lock_write_sieve.enabled = write_sieve_enabled;
    mca_common_sfio_auto_gate = auto_gate;
    mca_common_sfio_lock_max_ranges = lock_max_ranges;
    mca_common_sfio_lock_service_max_ranges = lock_service_max_ranges;
    mca_common_sfio_lock_service_max_overtakes = lock_service_max_overtakes;
    mca_common_sfio_lock_backend = lock_backend;
    mca_common_sfio_lock_atomic_mode = mca_fbtl_versioned_atomic_mode;
    mca_common_sfio_lock_wait_ms = lock_wait_timeout > 0 ? lock_wait_timeout : 1;
    mca_common_sfio_lock_probe_ms = lock_probe_after > 0 ? lock_probe_after : 1;
    mca_common_sfio_lock_dead_ms = lock_dead_timeout > 0 ? lock_dead_timeout : 1;
    mca_common_sfio_pcache_limit = private_cache;
    mca_common_sfio_pcache_piece_max = private_cache_piece_max;
    mca_common_sfio_posix_depth = io_depth;
    mca_common_sfio_posix_storage = storage;
    mca_common_sfio_posix_depth_min_segs = io_depth_min_segs;
    return OMPI_SUCCESS;
}

static int versioned_close(void)
{
    return mca_common_sfio_component_close(&mca_fbtl_versioned_output);
}

mca_fbtl_base_component_2_0_0_t mca_fbtl_versioned_component = {
    .fbtlm_version = {
        MCA_FBTL_BASE_VERSION_2_0_0,
        .mca_component_name = "versioned",
        MCA_BASE_MAKE_VERSION(component, SFIO_VERSION_MAJOR, SFIO_VERSION_MINOR,
                              SFIO_VERSION_RELEASE),
        .mca_open_component = versioned_open,
        .mca_close_component = versioned_close,
        .mca_register_component_params = versioned_register,
    },
    .fbtlm_data = {
        MCA_BASE_METADATA_PARAM_CHECKPOINT
    },
    .fbtlm_init_query = mca_common_sfio_component_init_query,
    .fbtlm_file_query = mca_fbtl_versioned_component_file_query,
    .fbtlm_file_unquery = mca_common_sfio_component_file_unquery,
};
