/*
 * fcoll/adaptive: collective I/O in the manner of coll/tuned (Gabriel's OMPIO design): a
 * catalogue of algorithms (individual, two-phase, dynamic and static
 * segmentation), one decision function, a forced-choice parameter and an
 * automatic aggregator count.  The algorithms and the planning live in the
 * engine (common/sfio: sfio_fcoll, sfio_collplan); this component holds
 * the parameters and the module table.
 */
#ifndef MCA_FCOLL_ADAPTIVE_H
#define MCA_FCOLL_ADAPTIVE_H

#include "ompi_config.h"
#include "ompi/mca/fcoll/fcoll.h"
#include "ompi/mca/common/ompio/common_ompio.h"

#include "sfio_fcoll.h"
#include "sfio_ompi_compat.h"

BEGIN_C_DECLS

extern int mca_fcoll_adaptive_priority;
extern int mca_fcoll_adaptive_output;
/* The engine options assembled from the MCA parameters at registration. */
extern mca_common_sfio_fcoll_options_t mca_fcoll_adaptive_options;

SFIO_COMPONENT_DECLSPEC extern mca_fcoll_base_component_2_0_0_t mca_fcoll_adaptive_component;

mca_fcoll_base_module_1_0_0_t *mca_fcoll_adaptive_component_file_query(ompio_file_t *fh,
                                                                       int *priority);

END_C_DECLS

#endif
