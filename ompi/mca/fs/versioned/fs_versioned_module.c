/*
 * fs/versioned module: the fs operations table; each entry calls the
 * engine.
 */
#include "ompi_config.h"

#include "opal/util/output.h"

#include "fs_versioned.h"
#include "sfio_ompio.h"

static int versioned_module_init(ompio_file_t *fh)
{
    fh->f_fstype = UFS;   /* POSIX semantics: stock fcoll/fbtl treat us like ufs */
    return mca_common_sfio_fs_module_init(fh);
}

static int versioned_module_finalize(ompio_file_t *fh)
{
    mca_common_sfio_fs_module_finalize(fh);
    return OMPI_SUCCESS;
}

static int versioned_file_open(struct ompi_communicator_t *comm, const char *filename, int amode,
                               struct opal_info_t *info, ompio_file_t *fh)
{
    mca_common_sfio_fs_options_t options = {
        .versioned_store = mca_fs_versioned_store,
        .store_dir = mca_fs_versioned_store_dir_storage ? *mca_fs_versioned_store_dir_storage : NULL,
        .private_objects = mca_fs_versioned_private_objects,
        .journal_private = mca_fs_versioned_journal_private,
        .objects_max_ranges = mca_fs_versioned_objects_max_ranges,
        .fold = { .by = (mca_common_sfio_fold_by_t) mca_fs_versioned_fold_by,
                  .cache_max = mca_fs_versioned_fold_cache,
                  .max_gap = mca_fs_versioned_fold_max_gap,
                  .window = mca_fs_versioned_fold_window,
                  .defer_max = mca_fs_versioned_defer_max,
                  .defer_piece_max = mca_fs_versioned_defer_piece_max,
                  .max_log = mca_fs_versioned_store_max_log_bytes,
                  .max_versions = mca_fs_versioned_store_max_versions },
    };
    int rc = mca_common_sfio_fs_open(comm, filename, amode, info, fh, &options);
    if (MPI_SUCCESS != rc) {
        return rc;
    }
    opal_output_verbose(10, mca_fs_versioned_output, "fs:versioned: opened %s (rank %d of %d)",
                        filename, fh->f_rank, fh->f_size);
    return rc;
}

static int versioned_file_close(ompio_file_t *fh)
{
    return mca_common_sfio_fs_close(fh);
}

static int versioned_delete(char *filename, struct opal_info_t *info)
{
    return mca_common_sfio_fs_delete(filename, info,
                                     mca_fs_versioned_store_dir_storage
                                         ? *mca_fs_versioned_store_dir_storage : NULL);
}

static mca_fs_base_module_1_0_0_t versioned_module = {
    .fs_module_init = versioned_module_init,
    .fs_module_finalize = versioned_module_finalize,
    .fs_file_open = versioned_file_open,
    .fs_file_close = versioned_file_close,
    .fs_file_delete = versioned_delete,
    .fs_file_set_size = mca_common_sfio_fs_set_size,
    .fs_file_get_size = mca_common_sfio_fs_get_size,
    .fs_file_sync = mca_common_sfio_fs_sync,
};

struct mca_fs_base_module_1_0_0_t *mca_fs_versioned_component_file_query(ompio_file_t *fh,
                                                                         int *priority)
{
    *priority = mca_fs_versioned_priority;
    if (0 == fh->f_fstype) {
        fh->f_fstype = UFS;
    }
    return &versioned_module;
}
