/*
 * sfio_coord_int.h: what the coordination service's backends share
 * (sfio_coord.c, sfio_coord_ofi.c): the collectives on the file's
 * communicator and the ofi backend's entry point.
 */
#ifndef MCA_COMMON_SFIO_COORD_INT_H
#define MCA_COMMON_SFIO_COORD_INT_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "mpi.h"
#include "ompi/communicator/communicator.h"

#include "sfio_coord.h"

static inline int mca_common_sfio_coord_bcast(struct ompi_communicator_t *comm, void *buf,
                                              int bytes, int root)
{
    return comm->c_coll->coll_bcast(buf, bytes, MPI_BYTE, root, comm,
                                    comm->c_coll->coll_bcast_module);
}

/* The smallest *v over comm (errors are negative errnos: every rank ends
 * with the same one); 0 or -EIO when the collective itself failed. */
static inline int mca_common_sfio_coord_agree(struct ompi_communicator_t *comm, int *v)
{
    int rc = comm->c_coll->coll_allreduce(MPI_IN_PLACE, v, 1, MPI_INT, MPI_MIN, comm,
                                          comm->c_coll->coll_allreduce_module);
    return OMPI_SUCCESS == rc ? 0 : -EIO;
}

/* Collective: the host rank of one service of comm's group, spread over
 * its nodes (sfio_coordplan_host); the seed is rank 0's count of the
 * services of this kind it opened (*opened, one counter per kind), plus
 * shift (so that two kinds opened together start on different nodes).
 * forced >= 0 names the rank. */
int mca_common_sfio_coord_place_host(struct ompi_communicator_t *comm, _Atomic uint64_t *opened,
                                     uint64_t shift, int forced, int *host_p);

/* Collective: the ofi backend (sfio_coord_ofi.c). */
int mca_common_sfio_coord_ofi_open(struct ompi_communicator_t *comm,
                                   const mca_common_sfio_coord_config_t *cfg, int nslots,
                                   int local_err, mca_common_sfio_coord_t **coord_p);

#endif
