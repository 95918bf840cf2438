/*
 * sfio_coord_int.h: what the coordination service's backends share
 * (sfio_coord.c, sfio_coord_ofi.c, and sfio_locksvc.c for the fabric):
 * the collectives on the file's communicator, the open of a service over
 * the fabric (sfio_coord_join.c) and the ofi backend's entry point.
 */
#ifndef MCA_COMMON_SFIO_COORD_INT_H
#define MCA_COMMON_SFIO_COORD_INT_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "mpi.h"
#include "ompi/communicator/communicator.h"

#include "sfio_coord.h"
#include "sfio_fabric.h"

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

/*
 * Opening a service over the fabric (sfio_coord_join.c), the same steps
 * for the counters (sfio_coord_ofi) and the lock manager (sfio_locksvc):
 *   err = mca_common_sfio_coord_fabric(...)          local: the endpoint
 *   err = mca_common_sfio_coord_join(comm, &j, err)  allreduce [+ allgather
 *                                                    + allreduce the first time]
 *   the host makes the service
 *   err = mca_common_sfio_coord_announce(...)        bcast
 *   mca_common_sfio_coord_agree(comm, &err)          allreduce, where a rank
 *                                                    can still fail after
 *                                                    the announcement
 * Every failure before the announcement is every rank's at once; the
 * final agreement makes the later ones every rank's (the lock manager's
 * clients check that no other service of theirs drew the same id; the
 * counters have nothing left to fail and skip it).  A service whose
 * ranks are past their last operation (after OMPIO's close barrier)
 * closes without an agreement (close_quiesced).
 */

/* Sets the protocol's handler and tick, starts the endpoint (once per
 * process) and says so on rank 0; 0 or a negative errno with the fabric's
 * reason copied into why. */
int mca_common_sfio_coord_fabric(struct ompi_communicator_t *comm, const char *provider,
                                 mca_common_sfio_fabric_proto_t proto,
                                 mca_common_sfio_fabric_handler_t handler,
                                 mca_common_sfio_fabric_tick_t tick, char *why, size_t whylen);

/* Most values agreed on by mca_common_sfio_fabric_members (join takes
 * one for the placement). */
#define MCA_COMMON_SFIO_COORD_VOTES 4

/*
 * Collective: the fabric handle of every rank of comm into peers[] (room
 * for comm's size), from the fabric's table of processes met, after one
 * allreduce that agrees on err (this rank's negative errno, or 0), on
 * whether every rank knows every other, and on votes[nvotes] (each the
 * smallest over comm on return).  When some rank lacks an address, every
 * rank learns every rank's (one allgather) and the outcome is agreed (one
 * allreduce).  Returns 0 or the same negative errno on every rank.
 */
int mca_common_sfio_fabric_members(struct ompi_communicator_t *comm, int64_t *votes, int nvotes,
                                   uint64_t *peers, int err);

typedef struct {
    _Atomic uint64_t *opened;   /* in: this process's services of the kind (one counter per kind) */
    uint64_t shift;             /* in: added to the seed, so that two kinds opened
                                 * together start on different nodes */
    int forced;                 /* in: the host rank, -1: placed over the nodes */
    int nvotes;                 /* in: at most VOTES - 2 (the join votes the seed and the topology) */
    int64_t votes[MCA_COMMON_SFIO_COORD_VOTES - 2];   /* in: this rank's; out: the smallest */
    uint64_t *peers;            /* in: room for comm's size; out: every rank's handle */
    int host;                   /* out */
} mca_common_sfio_coord_join_t;

/* Collective: the members (mca_common_sfio_fabric_members, with err) and
 * the host, spread over comm's nodes (sfio_coordplan_host) with the seed
 * agreed in the same allreduce: the largest count of this kind's services
 * among the ranks, plus shift.  Returns 0 or the same negative errno on
 * every rank. */
int mca_common_sfio_coord_join(struct ompi_communicator_t *comm, mca_common_sfio_coord_join_t *j,
                               int err);

/* What only the host knows, broadcast at open: its outcome, the service
 * id, three words of the service's own. */
typedef struct {
    int32_t err;
    uint32_t id;
    uint64_t word[3];
} mca_common_sfio_coord_hostmsg_t;

/* Collective: the host's *m (its err is set from the host's err) to every
 * rank; returns this rank's err, else the host's, or -EIO when the bcast
 * failed here. */
int mca_common_sfio_coord_announce(struct ompi_communicator_t *comm, int host,
                                   mca_common_sfio_coord_hostmsg_t *m, int err);

/* Collective: the ofi backend (sfio_coord_ofi.c). */
int mca_common_sfio_coord_ofi_open(struct ompi_communicator_t *comm,
                                   const mca_common_sfio_coord_config_t *cfg, int nslots,
                                   int local_err, mca_common_sfio_coord_t **coord_p);

#endif
