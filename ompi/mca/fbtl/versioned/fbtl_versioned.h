/*
 * fbtl/versioned: the suite's data path for OMPIO.  Non-atomic accesses
 * take the engine's vectored POSIX path (with read data sieving); atomic
 * modes (versioned, list locks) build on the same entry points.
 */
#ifndef MCA_FBTL_VERSIONED_H
#define MCA_FBTL_VERSIONED_H

#include "ompi_config.h"
#include "sfio_ompi_compat.h"
#include "ompi/mca/fbtl/fbtl.h"
#include "ompi/mca/common/ompio/common_ompio.h"

#include "sfio_iobatch.h"

BEGIN_C_DECLS

extern int mca_fbtl_versioned_priority;
extern int mca_fbtl_versioned_verbose;
extern int mca_fbtl_versioned_output;
extern mca_common_sfio_sieve_policy_t mca_fbtl_versioned_sieve;
extern int mca_fbtl_versioned_atomic_mode;   /* an mca_common_sfio_atomic_mode_t */

SFIO_COMPONENT_DECLSPEC extern mca_fbtl_base_component_2_0_0_t mca_fbtl_versioned_component;

struct mca_fbtl_base_module_1_0_0_t *mca_fbtl_versioned_component_file_query(ompio_file_t *fh,
                                                                             int *priority);

END_C_DECLS

#endif
