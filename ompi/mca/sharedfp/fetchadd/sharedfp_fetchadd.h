/*
 * sharedfp/fetchadd: shared file pointers kept in the suite's coordination
 * service (common/sfio: sfio_coord) and moved by atomic fetch-and-add;
 * ordered accesses by one prefix sum.  No lock files, nothing named after
 * the user's file, any number of nodes.  This component only registers
 * parameters and fills the module table; the engine does the work
 * (sfio_sharedfp.c).
 */
#ifndef MCA_SHAREDFP_FETCHADD_H
#define MCA_SHAREDFP_FETCHADD_H

#include "ompi_config.h"
#include "ompi/mca/sharedfp/sharedfp.h"
#include "ompi/mca/common/ompio/common_ompio.h"
#include "sfio_ompi_compat.h"

BEGIN_C_DECLS

extern int mca_sharedfp_fetchadd_priority;
extern int mca_sharedfp_fetchadd_verbose;
extern int mca_sharedfp_fetchadd_output;
extern int mca_sharedfp_fetchadd_backend;
extern char **mca_sharedfp_fetchadd_shm_dir_storage;   /* heap cell: see the component */
extern char **mca_sharedfp_fetchadd_provider_storage;    /* heap cell */
extern int mca_sharedfp_fetchadd_timeout;
extern int mca_sharedfp_fetchadd_host;
extern int mca_sharedfp_fetchadd_counters;
extern bool mca_sharedfp_fetchadd_direct;
extern bool mca_sharedfp_fetchadd_ordered_collective;
extern bool mca_sharedfp_fetchadd_skip_probes;

SFIO_COMPONENT_DECLSPEC extern mca_sharedfp_base_component_2_0_0_t mca_sharedfp_fetchadd_component;

struct mca_sharedfp_base_module_1_0_0_t *
mca_sharedfp_fetchadd_component_file_query(ompio_file_t *fh, int *priority);
int mca_sharedfp_fetchadd_component_file_unquery(ompio_file_t *fh);

END_C_DECLS

#endif
