/*
 * fs/versioned component: parameters, open/close, selection.
 */
#include "ompi_config.h"

#include <stdlib.h>

#include "opal/util/output.h"
#include "ompi/mca/fs/fs.h"

#include "fs_versioned.h"
#include "sfio_component.h"
#include "sfio_ompio.h"

int mca_fs_versioned_priority = 30;   /* above stock fs/ufs (10) */
int mca_fs_versioned_verbose = 0;
int mca_fs_versioned_output = -1;
bool mca_fs_versioned_store = true;
char **mca_fs_versioned_store_dir_storage = NULL;
bool mca_fs_versioned_private_objects = true;
bool mca_fs_versioned_journal_private = true;
int mca_fs_versioned_fold_by = 0;
size_t mca_fs_versioned_fold_cache = 64 << 20;
size_t mca_fs_versioned_fold_max_gap = 4096;
size_t mca_fs_versioned_fold_window = 4 << 20;
size_t mca_fs_versioned_store_max_log_bytes = 64 << 20;
size_t mca_fs_versioned_store_max_versions = 16384;
long mca_fs_versioned_defer_max = -1;
size_t mca_fs_versioned_defer_piece_max = 64 << 10;
size_t mca_fs_versioned_objects_max_ranges = 1 << 20;

/* The plain parameters (defaults: the variables' initial values). */
static const mca_common_sfio_param_t params[] = {
    { "priority", MCA_BASE_VAR_TYPE_INT, &mca_fs_versioned_priority,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Priority of the fs versioned component (stock fs/ufs uses 10; the highest wins)" },
    { "verbose", MCA_BASE_VAR_TYPE_INT, &mca_fs_versioned_verbose,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_LOCAL,
      "Verbosity of the fs versioned component (0: silent, 1: decisions and errors, "
      "10: every operation)" },
    { "store", MCA_BASE_VAR_TYPE_BOOL, &mca_fs_versioned_store,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Keep a versioned store for writable files, which makes MPI_File_set_atomicity(fh, 1) "
      "lock-free: a private directory .sfio-store.<inode>.<random> beside the file (or in "
      "store_dir), made at the first atomic access and removed by a clean close; off: no "
      "store, atomic mode then needs the lock modes of fbtl/versioned" },
    { "store_max_log_bytes", MCA_BASE_VAR_TYPE_SIZE_T, &mca_fs_versioned_store_max_log_bytes,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Bound of the versioned store between collective points: a rank whose logs (data, and "
      "records with the small versions they carry) hold more "
      "unfolded bytes than this writes every published version into the file and frees "
      "the store's space (the other ranks pause their accesses meanwhile).  0: no bound" },
    { "store_max_versions", MCA_BASE_VAR_TYPE_SIZE_T, &mca_fs_versioned_store_max_versions,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Bound of the versioned store's index (memory of every rank): when more versions than "
      "this await a fold, the writer folds them as store_max_log_bytes does.  0: no bound" },
    { "private_objects", MCA_BASE_VAR_TYPE_BOOL, &mca_fs_versioned_private_objects,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "At every set_view, intersect all ranks' views (object-based files, Logan and "
      "Dickens) and write bytes that only "
      "one rank can access straight to the file even in atomic mode; off: every byte "
      "takes the atomic path" },
    { "journal_private", MCA_BASE_VAR_TYPE_BOOL, &mca_fs_versioned_journal_private,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Journal an atomic write's private bytes in the store before writing them in place, "
      "so that a crash (kill -9) never leaves part of an atomic write (default); off: "
      "private bytes go in place at once, faster, but a write cut by a crash may leave "
      "its private bytes without its shared ones" },
    { "objects_max_ranges", MCA_BASE_VAR_TYPE_SIZE_T, &mca_fs_versioned_objects_max_ranges,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Largest number of ranges the view intersection may produce (over one common period "
      "of all views); more complex views count as entirely shared" },
    { "fold_cache", MCA_BASE_VAR_TYPE_SIZE_T, &mca_fs_versioned_fold_cache,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Bytes of each rank's log also kept in memory until the next fold, so the fold writes "
      "them back without reading the log again (network storage: one transfer less); the "
      "rest is read from the log.  0: none" },
    { "fold_max_gap", MCA_BASE_VAR_TYPE_SIZE_T, &mca_fs_versioned_fold_max_gap,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "At a fold (sync, close, set_view, ...) by domain, each rank writes back one "
      "contiguous domain of the versioned bytes; versioned pieces separated by at most this "
      "many bytes are written as one window (the bytes between are read from the file "
      "first).  Also the piece size above which fold_by auto writes back by owner" },
    { "fold_window", MCA_BASE_VAR_TYPE_SIZE_T, &mca_fs_versioned_fold_window,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Bytes of one write-back window of a fold (and of its buffer); domains are aligned "
      "to it" },
    { "defer_max", MCA_BASE_VAR_TYPE_LONG, &mca_fs_versioned_defer_max,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Atomic writes put their private bytes in the store's log too (one append instead of "
      "one file write per piece) while this rank's log holds at most this many bytes; the "
      "next fold writes them in large windows.  -1 (default): 256 MiB when the store is in "
      "memory (fs_versioned_store_dir on tmpfs, e.g. /dev/shm), else 0 (never)" },
    { "defer_piece_max", MCA_BASE_VAR_TYPE_SIZE_T, &mca_fs_versioned_defer_piece_max,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Defer (see defer_max) only writes whose private pieces average at most this many "
      "bytes: small pieces cost one file request each, large ones gain nothing from the "
      "fold's windows" },
};

static int versioned_register(void)
{
    mca_common_sfio_component_register_params(&mca_fs_versioned_component.fsm_version, params,
        sizeof(params) / sizeof(params[0]));
    /* String storage on the heap: it must outlive this DSO (Open MPI 5.0). */
    if (NULL == mca_common_sfio_component_register_string(
                    &mca_fs_versioned_component.fsm_version, &mca_fs_versioned_store_dir_storage,
                    "store_dir",
        "Directory of the versioned store's logs; empty (default): beside the file.  A "
        "node-local directory (e.g. /dev/shm or a local SSD) keeps the log traffic of atomic "
        "writes off the shared file system; a crashed job's store is then recovered only by "
        "a later open on the same node with the same store_dir.  Stores go in its "
        "subdirectory sfio-store-<uid> (made 0700); one that is not the user's or is open to "
        "others is not used (the store goes beside the file, with a warning)")) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (OPAL_SUCCESS != mca_common_sfio_fold_by_register(
                            &mca_fs_versioned_component.fsm_version, &mca_fs_versioned_fold_by)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    return OMPI_SUCCESS;
}

static int versioned_open(void)
{
    return mca_common_sfio_component_open("fs", "versioned", mca_fs_versioned_verbose, true,
                                          &mca_fs_versioned_output);
}

static int versioned_close(void)
{
    return mca_common_sfio_component_close(&mca_fs_versioned_output);
}

mca_fs_base_component_2_0_0_t mca_fs_versioned_component = {
    .fsm_version = {
        MCA_FS_BASE_VERSION_2_0_0,
        .mca_component_name = "versioned",
        MCA_BASE_MAKE_VERSION(component, SFIO_VERSION_MAJOR, SFIO_VERSION_MINOR,
                              SFIO_VERSION_RELEASE),
        .mca_open_component = versioned_open,
        .mca_close_component = versioned_close,
        .mca_register_component_params = versioned_register,
    },
    .fsm_data = {
        MCA_BASE_METADATA_PARAM_CHECKPOINT
    },
    .fsm_init_query = mca_common_sfio_component_init_query,
    .fsm_file_query = mca_fs_versioned_component_file_query,
    .fsm_file_unquery = mca_common_sfio_component_file_unquery,
};
