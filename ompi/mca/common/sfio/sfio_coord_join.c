/*
 * sfio_coord_join: how a service over the fabric (the counters of
 * sfio_coord_ofi, the lock manager of sfio_locksvc) opens on a file's
 * communicator (see sfio_coord_int.h).
 *
 * Addresses are exchanged once per set of processes, not per service: the
 * fabric remembers every process it learned (mca_common_sfio_fabric_learn),
 * so the ranks of a second file (or of a second service of one file)
 * only agree that each already knows every other.  That agreement is the
 * same allreduce as the one on failures, the services' own votes and the
 * host's placement seed; the allgather of addresses follows only when some
 * rank lacks one.  The host then needs nobody's address and the clients
 * have the host's: what the host announces (one bcast) is only what it
 * alone knows.
 */
#include "ompi_config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "opal/util/output.h"

#include "sfio_coord_int.h"
#include "sfio_coordplan.h"
#include "sfio_fabric.h"
#include "sfio_ompio.h"   /* mca_common_sfio_output */
#include "sfio_topo.h"

/* Groups up to this size connect every pair when they exchange addresses
 * (mca_common_sfio_fabric_greet); larger ones connect at first use. */
#define GREET_MAX 64

/* A rank's fabric address in the allgather (fixed size). */
typedef struct {
    uint32_t len;
    char name[MCA_COMMON_SFIO_FABRIC_NAME_MAX];
} name_msg_t;

int mca_common_sfio_coord_fabric(struct ompi_communicator_t *comm, const char *provider,
                                 mca_common_sfio_fabric_proto_t proto,
                                 mca_common_sfio_fabric_handler_t handler,
                                 mca_common_sfio_fabric_tick_t tick, char *why, size_t whylen)
{
    bool started = false;
    mca_common_sfio_fabric_handle(proto, handler, tick);
    int err = mca_common_sfio_fabric_start(provider, &started);
    if (0 != err) {
        snprintf(why, whylen, "%s", mca_common_sfio_fabric_why());
    }
    if (started && 0 == ompi_comm_rank(comm)) {
        opal_output_verbose(1, mca_common_sfio_output, "sfio: coordination fabric: %s",
                            mca_common_sfio_fabric_describe());
    }
    return err;
}

/* Every rank learns every rank's address; 0 or this rank's failure. */
static int exchange(struct ompi_communicator_t *comm, const uint64_t *procs, name_msg_t *all,
                    uint64_t *peers)
{
    int n = ompi_comm_size(comm);
    name_msg_t mine = { 0 };
    size_t len = sizeof(mine.name);
    int err = mca_common_sfio_fabric_name(mine.name, &len);
    mine.len = (uint32_t) len;
    int rc = comm->c_coll->coll_allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine),
                                          MPI_BYTE, comm, comm->c_coll->coll_allgather_module);
    if (OMPI_SUCCESS != rc && 0 == err) {
        err = -EIO;
    }
    for (int r = 0; r < n && 0 == err; ++r) {
        err = mca_common_sfio_fabric_learn(procs[r], all[r].name, all[r].len, &peers[r]);
    }
    return err;
}

int mca_common_sfio_fabric_members(struct ompi_communicator_t *comm, int64_t *votes, int nvotes,
                                   uint64_t *peers, int err)
{
    int n = ompi_comm_size(comm);
    int64_t v[2 + MCA_COMMON_SFIO_COORD_VOTES];
    bool known = false;
    if (nvotes < 0 || nvotes > MCA_COMMON_SFIO_COORD_VOTES) {
        return -EINVAL;   /* the same on every rank: a caller's bug */
    }
    /* any rank may have to exchange: each holds the allgather's buffer
     * before the agreement */
    uint64_t *procs = malloc((size_t) n * sizeof(*procs));
    name_msg_t *all = malloc((size_t) n * sizeof(*all));
    if (0 == err && (NULL == procs || NULL == all)) {
        err = -ENOMEM;
    }
    if (0 == err) {
        for (int r = 0; r < n; ++r) {
            procs[r] = mca_common_sfio_proc_key(comm, r);
        }
        known = mca_common_sfio_fabric_known(procs, (size_t) n, peers);
    }
    /* one allreduce: the failures (negative errnos win), whether every
     * rank knows every other, the caller's votes */
    v[0] = err;
    v[1] = known ? 1 : 0;
    memcpy(&v[2], votes, (size_t) nvotes * sizeof(*v));
    int rc = comm->c_coll->coll_allreduce(MPI_IN_PLACE, v, 2 + nvotes, MPI_INT64_T, MPI_MIN, comm,
                                          comm->c_coll->coll_allreduce_module);
    err = OMPI_SUCCESS == rc ? (int) v[0] : -EIO;
    memcpy(votes, &v[2], (size_t) nvotes * sizeof(*v));
    if (0 == err && 0 == v[1]) {
        /* a process some rank has not met: everybody learns everybody,
         * then agrees that it went */
        err = exchange(comm, procs, all, peers);
        if (0 != mca_common_sfio_coord_agree(comm, &err) && 0 == err) {
            err = -EIO;
        }
        /* the services of the group's later files go to every rank in
         * turn: connect to each now, while the first file starts the
         * fabric anyway (bounded: one connection per peer) */
        if (0 == err && n <= GREET_MAX) {
            mca_common_sfio_fabric_greet(peers, (size_t) n, (size_t) ompi_comm_rank(comm));
        }
        if (0 == ompi_comm_rank(comm)) {
            opal_output_verbose(10, mca_common_sfio_output,
                                "sfio: fabric addresses of %d ranks exchanged: %d", n, err);
        }
    }
    free(procs);
    free(all);
    return err;
}

/* The host of a service of comm's group, spread over its nodes
 * (sfio_coordplan_host); the same on every rank (seed and topology are). */
static int place_host(struct ompi_communicator_t *comm, uint64_t seed, int forced, int *host_p)
{
    const mca_common_sfio_place_topo_t *topo = NULL;
    if (OMPI_SUCCESS != mca_common_sfio_topo_get(comm, NULL, mca_common_sfio_output, &topo)) {
        *host_p = forced >= 0 ? forced % ompi_comm_size(comm) : 0;
        return 0;
    }
    *host_p = mca_common_sfio_coordplan_host(topo->node, topo->n, topo->nnodes, seed, forced);
    return *host_p < 0 ? -EINVAL : 0;
}

int mca_common_sfio_coord_join(struct ompi_communicator_t *comm, mca_common_sfio_coord_join_t *j,
                               int err)
{
    int64_t v[MCA_COMMON_SFIO_COORD_VOTES];
    if (j->nvotes < 0 || j->nvotes > MCA_COMMON_SFIO_COORD_VOTES - 2) {
        return -EINVAL;
    }
    /* the placement's seed: the largest count of this kind's services
     * among the ranks (the smallest negated count).  Ranks that open their
     * files together count alike, so successive files' hosts go round the
     * nodes; this needs no broadcast of one rank's count. */
    v[0] = -(int64_t) (atomic_fetch_add(j->opened, 1) & INT64_MAX);
    /* whether every rank keeps the group's topology, which places the
     * host: agreed here, its own agreement is not needed */
    v[1] = mca_common_sfio_topo_hold(comm, NULL) ? 1 : 0;
    memcpy(&v[2], j->votes, (size_t) j->nvotes * sizeof(*v));
    err = mca_common_sfio_fabric_members(comm, v, 2 + j->nvotes, j->peers, err);
    memcpy(j->votes, &v[2], (size_t) j->nvotes * sizeof(*v));
    if (0 != err || 0 == v[1]) {
        mca_common_sfio_topo_drop(comm);   /* topo_get agrees on it again */
    }
    if (0 != err) {
        return err;
    }
    return place_host(comm, (uint64_t) -v[0] + j->shift, j->forced, &j->host);
}

int mca_common_sfio_coord_announce(struct ompi_communicator_t *comm, int host,
                                   mca_common_sfio_coord_hostmsg_t *m, int err)
{
    if (ompi_comm_rank(comm) == host) {
        m->err = err;
    }
    int rc = mca_common_sfio_coord_bcast(comm, m, (int) sizeof(*m), host);
    if (0 == err) {
        err = OMPI_SUCCESS != rc ? -EIO : m->err;
    }
    return err;
}
