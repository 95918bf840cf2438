/*
 * sfio_topo: where the ranks of a file's communicator run (node and
 * package of each rank), the input of the pure placement sfio_placeplan.
 * Computed at the first collective call on a communicator and cached as
 * an attribute of it.  OMPIO gives every open file its own duplicate of
 * the user's communicator, so the last few groups of processes are kept
 * too: a later file of the same processes agrees that every rank has
 * its group's topology (one allreduce) instead of gathering it again.
 */
#ifndef MCA_COMMON_SFIO_TOPO_H
#define MCA_COMMON_SFIO_TOPO_H

#include "ompi_config.h"
#include "ompi/communicator/communicator.h"

#include "sfio_placeplan.h"

BEGIN_C_DECLS

/* Collective over comm (every rank calls it at the same point, with the
 * same emulate).  emulate: NULL or "" for the real topology (node: equal
 * host names; package: the hwloc package holding the rank's binding, 0
 * when unbound or bound across packages), else "block:N" or "cyclic:N"
 * (sfio_placeplan's emulated nodes, one package each).  A malformed
 * emulate is reported once on output and the real topology used.
 * On OMPI_SUCCESS *topo_p stays valid while comm lives; any failure is
 * every rank's (then the caller places by rank). */
int mca_common_sfio_topo_get(struct ompi_communicator_t *comm, const char *emulate, int output,
                             const mca_common_sfio_place_topo_t **topo_p);

/* Local: when this process keeps the topology of comm's group (for
 * emulate), sets it on comm and returns true.  For a caller that agrees
 * on it in a collective of its own: when every rank of comm returned
 * true, mca_common_sfio_topo_get then finds it without a collective;
 * when some rank did not, every rank calls mca_common_sfio_topo_drop
 * before mca_common_sfio_topo_get. */
bool mca_common_sfio_topo_hold(struct ompi_communicator_t *comm, const char *emulate);
void mca_common_sfio_topo_drop(struct ompi_communicator_t *comm);

/* The process of comm's rank r by its name (job id, rank in the job):
 * 32 bits each on 4.1 and 5.0 alike, unique among connected jobs. */
uint64_t mca_common_sfio_proc_key(struct ompi_communicator_t *comm, int r);

END_C_DECLS

#endif
