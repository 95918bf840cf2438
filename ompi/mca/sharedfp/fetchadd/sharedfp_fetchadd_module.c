/*
 * sharedfp/fetchadd module: the sharedfp operations table; each entry
 * calls the engine (sfio_sharedfp.c).
 */
#include "ompi_config.h"

#include "opal/util/output.h"

#include "sharedfp_fetchadd.h"
#include "sfio_ompio.h"
#include "sfio_sharedfp.h"

static const char *shm_dir(void)
{
    const char *dir = mca_sharedfp_fetchadd_shm_dir_storage ? *mca_sharedfp_fetchadd_shm_dir_storage
                                                             : NULL;
    return (NULL != dir && '\0' != *dir) ? dir : "/dev/shm";
}

static const char *provider(void)
{
    return mca_sharedfp_fetchadd_provider_storage ? *mca_sharedfp_fetchadd_provider_storage
                                                  : NULL;
}

static mca_common_sfio_sharedfp_options_t options(void)
{
    return (mca_common_sfio_sharedfp_options_t) {
        .coord = {
            .backend = (mca_common_sfio_coord_backend_t) mca_sharedfp_fetchadd_backend,
            .shm_dir = shm_dir(),
            .provider = provider(),
            .timeout_ms = (int64_t) mca_sharedfp_fetchadd_timeout * 1000,
            .host = mca_sharedfp_fetchadd_host,
            .counters = (mca_common_sfio_coord_counters_t) mca_sharedfp_fetchadd_counters,
        },
        .direct = mca_sharedfp_fetchadd_direct,
        .ordered_collective = mca_sharedfp_fetchadd_ordered_collective,
    };
}

static int fetchadd_module_init(ompio_file_t *fh)
{
    return OMPI_SUCCESS;
}

static int fetchadd_module_finalize(ompio_file_t *fh)
{
    return OMPI_SUCCESS;
}

static int fetchadd_file_open(struct ompi_communicator_t *comm, const char *filename, int amode,
                              struct opal_info_t *info, ompio_file_t *fh)
{
    mca_common_sfio_sharedfp_options_t o = options();
    return mca_common_sfio_sharedfp_open(comm, filename, amode, info, fh, &o);
}

static mca_sharedfp_base_module_1_0_0_t fetchadd_module = {
    .sharedfp_module_init = fetchadd_module_init,
    .sharedfp_module_finalize = fetchadd_module_finalize,
    .sharedfp_seek = mca_common_sfio_sharedfp_seek,
    .sharedfp_get_position = mca_common_sfio_sharedfp_get_position,
    .sharedfp_read = mca_common_sfio_sharedfp_read,
    .sharedfp_read_ordered = mca_common_sfio_sharedfp_read_ordered,
    .sharedfp_read_ordered_begin = mca_common_sfio_sharedfp_read_ordered_begin,
    .sharedfp_read_ordered_end = mca_common_sfio_sharedfp_read_ordered_end,
    .sharedfp_iread = mca_common_sfio_sharedfp_iread,
    .sharedfp_write = mca_common_sfio_sharedfp_write,
    .sharedfp_write_ordered = mca_common_sfio_sharedfp_write_ordered,
    .sharedfp_write_ordered_begin = mca_common_sfio_sharedfp_write_ordered_begin,
    .sharedfp_write_ordered_end = mca_common_sfio_sharedfp_write_ordered_end,
    .sharedfp_iwrite = mca_common_sfio_sharedfp_iwrite,
    .sharedfp_file_open = fetchadd_file_open,
    .sharedfp_file_close = mca_common_sfio_sharedfp_close,
};

struct mca_sharedfp_base_module_1_0_0_t *
mca_sharedfp_fetchadd_component_file_query(ompio_file_t *fh, int *priority)
{
    const char *why = NULL;
    mca_common_sfio_sharedfp_options_t o = options();
    *priority = 0;
    /* collective: creates the file's shared pointer now, so that a backend
     * that cannot serve these ranks makes the component step aside (Open
     * MPI then selects a stock one) instead of failing MPI_File_open */
    if (!mca_common_sfio_sharedfp_query(fh, &o, &why)) {
        if (0 != fh->f_rank) {
            return NULL;   /* the same reason everywhere: said once */
        }
        opal_output_verbose(1, mca_sharedfp_fetchadd_output,
                            "sharedfp:fetchadd: not used for %s: %s",
                            fh->f_filename ? fh->f_filename : "", why);
        return NULL;
    }
    *priority = mca_sharedfp_fetchadd_priority;
    return &fetchadd_module;
}

int mca_sharedfp_fetchadd_component_file_unquery(ompio_file_t *fh)
{
    mca_common_sfio_sharedfp_unquery(fh);
    return OMPI_SUCCESS;
}
