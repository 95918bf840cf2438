/*
 * fbtl/versioned module: the fbtl operations table; each entry calls the
 * engine.
 */
#include "ompi_config.h"

#include <string.h>

#include "fbtl_versioned.h"
#include "sfio_ompio.h"

static bool over_fs_versioned(const ompio_file_t *fh)
{
    return NULL != fh->f_fs_component &&
           0 == strcmp(fh->f_fs_component->mca_component_name, "versioned");
}

static int versioned_module_init(ompio_file_t *fh)
{
    mca_common_sfio_output = mca_fbtl_versioned_output;
    /* fs/versioned installs the cycle-size wrapper itself; over a stock fs
     * this component does.  One owner per file keeps the wrapper chain
     * one link long (each DSO has its own copy of the engine). */
    if (!over_fs_versioned(fh)) {
        /* Over a stock fs, also see set_view and collective calls (through
         * a proxy of the fs module whose open installs the hooks). */
        int rc = mca_common_sfio_ompio_track(fh);
        return OMPI_SUCCESS == rc ? mca_common_sfio_hooks_wrap_fs(fh) : rc;
    }
    return OMPI_SUCCESS;
}

static int versioned_module_finalize(ompio_file_t *fh)
{
    if (!over_fs_versioned(fh)) {
        mca_common_sfio_ompio_untrack(fh);
        mca_common_sfio_hooks_release(fh);
    }
    return OMPI_SUCCESS;
}

static ssize_t versioned_preadv(ompio_file_t *fh)
{
    return mca_common_sfio_fbtl_preadv(fh, mca_fbtl_versioned_atomic_mode,
                                       &mca_fbtl_versioned_sieve);
}

static ssize_t versioned_ipreadv(ompio_file_t *fh, ompi_request_t *request)
{
    return mca_common_sfio_fbtl_ipreadv(fh, request, mca_fbtl_versioned_atomic_mode,
                                        &mca_fbtl_versioned_sieve);
}

static ssize_t versioned_pwritev(ompio_file_t *fh)
{
    return mca_common_sfio_fbtl_pwritev(fh, mca_fbtl_versioned_atomic_mode);
}

static ssize_t versioned_ipwritev(ompio_file_t *fh, ompi_request_t *request)
{
    return mca_common_sfio_fbtl_ipwritev(fh, request, mca_fbtl_versioned_atomic_mode);
}

#if SFIO_OMPI_HAVE_FBTL_CHECK_ATOMICITY
static bool versioned_check_atomicity(ompio_file_t *fh)
{
    return mca_common_sfio_fbtl_check_atomicity(fh, mca_fbtl_versioned_atomic_mode);
}
#endif

static mca_fbtl_base_module_1_0_0_t versioned_module = {
    .fbtl_module_init = versioned_module_init,
    .fbtl_module_finalize = versioned_module_finalize,
    .fbtl_preadv = versioned_preadv,
    .fbtl_ipreadv = versioned_ipreadv,
    .fbtl_pwritev = versioned_pwritev,
    .fbtl_ipwritev = versioned_ipwritev,
    .fbtl_progress = mca_common_sfio_fbtl_progress,
    .fbtl_request_free = mca_common_sfio_fbtl_request_free,
    SFIO_FBTL_CHECK_ATOMICITY_INIT(versioned_check_atomicity)
};

struct mca_fbtl_base_module_1_0_0_t *mca_fbtl_versioned_component_file_query(ompio_file_t *fh,
                                                                             int *priority)
{
    *priority = mca_fbtl_versioned_priority;
    return &versioned_module;
}
