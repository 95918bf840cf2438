/*
 * fcoll/adaptive module: the fcoll operations table; each entry calls the
 * engine with the component's options.
 */
#include "ompi_config.h"

#include "fcoll_adaptive.h"

static int adaptive_module_init(ompio_file_t *fh)
{
    return OMPI_SUCCESS;
}

static int adaptive_module_finalize(ompio_file_t *fh)
{
    return OMPI_SUCCESS;
}

static int adaptive_write_all(ompio_file_t *fh, const void *buf, int count,
                              struct ompi_datatype_t *datatype, ompi_status_public_t *status)
{
    return mca_common_sfio_fcoll_write_all(fh, buf, count, datatype, status,
                                           &mca_fcoll_adaptive_options);
}

static int adaptive_read_all(ompio_file_t *fh, void *buf, int count,
                             struct ompi_datatype_t *datatype, ompi_status_public_t *status)
{
    return mca_common_sfio_fcoll_read_all(fh, buf, count, datatype, status,
                                          &mca_fcoll_adaptive_options);
}

static int adaptive_iwrite_all(ompio_file_t *fh, const void *buf, int count,
                               struct ompi_datatype_t *datatype, ompi_request_t **request)
{
    return mca_common_sfio_fcoll_iwrite_all(fh, buf, count, datatype, request,
                                            &mca_fcoll_adaptive_options);
}

static int adaptive_iread_all(ompio_file_t *fh, void *buf, int count,
                              struct ompi_datatype_t *datatype, ompi_request_t **request)
{
    return mca_common_sfio_fcoll_iread_all(fh, buf, count, datatype, request,
                                           &mca_fcoll_adaptive_options);
}

static mca_fcoll_base_module_1_0_0_t adaptive_module = {
    .fcoll_module_init = adaptive_module_init,
    .fcoll_module_finalize = adaptive_module_finalize,
    .fcoll_file_read_all = adaptive_read_all,
    .fcoll_file_iread_all = adaptive_iread_all,
    .fcoll_file_write_all = adaptive_write_all,
    .fcoll_file_iwrite_all = adaptive_iwrite_all,
    .fcoll_progress = NULL,         /* the engine's requests carry their own progress */
    .fcoll_request_free = NULL,
};

mca_fcoll_base_module_1_0_0_t *mca_fcoll_adaptive_component_file_query(ompio_file_t *fh,
                                                                       int *priority)
{
    *priority = mca_fcoll_adaptive_priority;
    if (mca_fcoll_adaptive_priority <= 0) {
        return NULL;
    }
    return &adaptive_module;
}
