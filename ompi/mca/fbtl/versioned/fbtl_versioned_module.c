/*
 * fbtl/versioned module: the fbtl operations table; each entry calls the
 * engine.
 */
#include "ompi_config.h"

#include "fbtl_versioned.h"
#include "sfio_ompio.h"

static int versioned_module_init(ompio_file_t *fh)
{
    return mca_common_sfio_fbtl_module_init(fh);
}

static int versioned_module_finalize(ompio_file_t *fh)
{
    mca_common_sfio_fbtl_module_finalize(fh);
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
