/*
 * sfio_component: what every component of the suite does the same way at
 * open and close: refuse to load into another Open MPI series than the one
 * it was built for, and open its verbose output stream.
 */
#ifndef MCA_COMMON_SFIO_COMPONENT_H
#define MCA_COMMON_SFIO_COMPONENT_H

#include "ompi_config.h"

BEGIN_C_DECLS

/* Suite version, used as every component's version. */
#define SFIO_VERSION_MAJOR   0
#define SFIO_VERSION_MINOR   1
#define SFIO_VERSION_RELEASE 0

/* OMPI_SUCCESS when the running libmpi is of the series the component was
 * compiled against; else prints why (once) and returns
 * OMPI_ERR_NOT_SUPPORTED so the component is not used. */
int mca_common_sfio_component_check_series(const char *framework, const char *component);

/* Opens an output stream prefixed with name at the given verbosity. */
int mca_common_sfio_component_output_open(const char *name, int verbosity);
void mca_common_sfio_component_output_close(int output);

END_C_DECLS

#endif
