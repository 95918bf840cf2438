/*
 * sfio_coord: the coordination service of one open file: a few 64-bit
 * counters that every rank of the file's communicator can fetch-and-add,
 * load, store and compare-and-swap atomically, and publish versions on in
 * order.  sharedfp/fetchadd keeps the shared file pointer in slot 0.
 *
 * Publication (a sequencer's versions made visible in order): writers
 * take versions 1, 2, ... from one slot with fetch_add and, when a
 * version's data is in place, call publish on another slot (the mark).
 * The mark only moves from v - 1 to v, so a reader that loads it sees
 * every version up to it finished; publish returns once the mark has
 * reached the caller's version.  The ofi host keeps finished versions
 * above the mark (sfio_pubq) and answers each writer when the mark passes
 * it; the other backends compose it from compare_swap, waiting for the
 * versions before the caller's.  A slot used as a mark is changed only by
 * publish.
 *
 * Backends (one interface, an ops table per backend):
 *   local  one rank: process memory.
 *   shm    every rank on one node: a page of shared memory with C11
 *          atomics.  Rank 0 creates it under a random name
 *          (<dir>/sfio-coord-<uid>-<pid>-<random>, nothing derived from the
 *          user's file), the others map it, and rank 0 unlinks it as soon
 *          as all have mapped it, so a crashed job leaves nothing behind
 *          but, at worst, a segment of a job killed inside MPI_File_open;
 *          the next open on the node removes segments whose creator is
 *          dead.  No operation needs another process to make progress: a
 *          rank busy outside MPI never stalls the others.
 *   ofi    ranks on several nodes: the counters live in one host rank,
 *          placed by sfio_coordplan (files in turn over the nodes), and
 *          are served by the host's libfabric progress thread
 *          (sfio_fabric): a fetch-and-add is one libfabric atomic where
 *          the provider offers native ones (or when asked for), else one
 *          request message and one reply, answered whatever the host's main thread does; an
 *          ordered round is one request per rank, answered when the last
 *          rank's has come (ordered_add, no MPI collective).  With
 *          messages the host itself uses C11 atomics on them, with
 *          atomics it sends them to itself (sfio_coord_ofi.c says
 *          why).  Addresses are exchanged once per open over the
 *          communicator.  A host that does not answer
 *          within the timeout fails the operation with -ETIMEDOUT.
 *   rma    ranks on several nodes, only when asked for: MPI one-sided on
 *          the file's communicator, counters in a window of rank 0,
 *          passive target (MPI_Win_lock_all once), MPI_Fetch_and_op +
 *          MPI_Win_flush per operation.  Whether a rank busy outside MPI
 *          stalls the others depends on the osc component: osc/sm and
 *          osc/rdma over a network with hardware atomics (osc/ucx,
 *          btl/uct) progress without the target; osc/pt2pt and emulated
 *          atomics over TCP need rank 0 to enter MPI; Open MPI 4.1 over
 *          TCP has no window at all.
 *
 * All operations return 0 or a negative errno; open and close are
 * collective over the communicator and return the same result everywhere.
 */
#ifndef MCA_COMMON_SFIO_COORD_H
#define MCA_COMMON_SFIO_COORD_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

struct ompi_communicator_t;

typedef enum {
    MCA_COMMON_SFIO_COORD_AUTO = 0,    /* local, shm or ofi, by where the ranks run */
    MCA_COMMON_SFIO_COORD_SHM = 1,
    MCA_COMMON_SFIO_COORD_RMA = 2,
    MCA_COMMON_SFIO_COORD_LOCAL = 3,
    MCA_COMMON_SFIO_COORD_OFI = 4
} mca_common_sfio_coord_backend_t;

/* How the ofi backend moves fetch_add, load, store and compare_swap. */
typedef enum {
    MCA_COMMON_SFIO_COORD_COUNTERS_AUTO = 0,     /* atomic where the provider offers native ones */
    MCA_COMMON_SFIO_COORD_COUNTERS_ATOMIC = 1,   /* libfabric atomics, or the open fails */
    MCA_COMMON_SFIO_COORD_COUNTERS_MESSAGE = 2   /* a request message and a reply */
} mca_common_sfio_coord_counters_t;

/* What a service is created with (the same on every rank). */
typedef struct mca_common_sfio_coord_config_t {
    mca_common_sfio_coord_backend_t backend;
    const char *shm_dir;     /* shm: directory of the segment (NULL: /dev/shm) */
    const char *provider;    /* ofi: libfabric provider (NULL, "" or "auto": chosen) */
    int64_t timeout_ms;      /* ofi: how long a request waits for the host; all:
                              * how long a publish waits for earlier versions */
    int host;                /* ofi: host rank, -1: placed over the nodes */
    mca_common_sfio_coord_counters_t counters;   /* ofi: atomics or messages */
} mca_common_sfio_coord_config_t;

typedef struct mca_common_sfio_coord_t mca_common_sfio_coord_t;

/* The backend's operations; slot < nslots of open. */
typedef struct mca_common_sfio_coord_ops_t {
    const char *name;
    int (*fetch_add)(mca_common_sfio_coord_t *c, int slot, int64_t delta, int64_t *old_p);
    int (*load)(mca_common_sfio_coord_t *c, int slot, int64_t *value_p);
    int (*store)(mca_common_sfio_coord_t *c, int slot, int64_t value);
    int (*close)(mca_common_sfio_coord_t *c);   /* collective; frees c */
    /* Optional (NULL: close): frees c without a collective of its own,
     * every rank being past its last operation on c (see
     * mca_common_sfio_coord_close_quiesced). */
    int (*close_quiesced)(mca_common_sfio_coord_t *c);
    int (*host)(const mca_common_sfio_coord_t *c);   /* rank holding the counters; NULL: none */
    /* Optional (NULL: the caller composes it from MPI collectives and
     * fetch_add): every rank of the service calls it once per round with
     * its bytes; the slot advances once by the round's total and *start_p
     * is the old value plus the bytes of the lower ranks. */
    int (*ordered_add)(mca_common_sfio_coord_t *c, int slot, int64_t bytes, int64_t *start_p);
    /* If the slot holds expected, it becomes desired; *old_p: what it held.
     * NULL: not offered (rma). */
    int (*compare_swap)(mca_common_sfio_coord_t *c, int slot, int64_t expected, int64_t desired,
                        int64_t *old_p);
    /* Optional (NULL: composed from compare_swap): see publication above. */
    int (*publish)(mca_common_sfio_coord_t *c, int slot, int64_t version);
    /* Optional (NULL: fetch_add): adds delta without waiting for the
     * host; see mca_common_sfio_coord_add. */
    int (*add)(mca_common_sfio_coord_t *c, int slot, int64_t delta);
    /* Optional: see mca_common_sfio_coord_enter_fetch_add. */
    int (*enter_fetch_add)(mca_common_sfio_coord_t *c, int gate, int64_t limit, int slot,
                           int64_t delta, int64_t *gate_old_p, int64_t *old_p);
} mca_common_sfio_coord_ops_t;

struct mca_common_sfio_coord_t {
    const mca_common_sfio_coord_ops_t *ops;
    int64_t timeout_ms;   /* how long a publish waits for earlier versions */
};

/* The backend `want` resolves to for comm (the same on every rank): auto
 * is local for one rank, shm on one node, ofi across nodes. */
mca_common_sfio_coord_backend_t mca_common_sfio_coord_pick(struct ompi_communicator_t *comm,
                                                           mca_common_sfio_coord_backend_t want);

/* True when comm's ranks run on more than one node (same everywhere). */
bool mca_common_sfio_coord_spans_nodes(struct ompi_communicator_t *comm);

/* True when this job's processes (MPI_COMM_WORLD) run on more than one
 * node; computed once per process. */
bool mca_common_sfio_job_spans_nodes(void);

/* Collective over comm: creates the service with nslots counters, all 0.
 * local_err: 0, or a negative errno this rank already has (e.g. its
 * allocation failed): the collective still completes and fails everywhere.
 * Errors: -EXDEV (shm asked for ranks on several nodes), -ENOMEM, errno of
 * the segment's creation, -EOPNOTSUPP (rma: no MPI window for these ranks,
 * e.g. no osc component serves their transport), -ENODEV, -ENOENT, -EIO
 * (ofi: the fabric could not start on some rank; the reason of this rank
 * in mca_common_sfio_coord_why()), -EIO (MPI error).  MPI errors of the
 * rma backend never reach comm's error handler.  */
int mca_common_sfio_coord_open(struct ompi_communicator_t *comm,
                               const mca_common_sfio_coord_config_t *cfg, int nslots,
                               int local_err, mca_common_sfio_coord_t **coord_p);

/* The shm backend in two halves, for a caller whose own collective
 * carries the page's name (a file's open broadcasts it with its own
 * message): one rank creates the page and names it (at most
 * MCA_COMMON_SFIO_COORD_NAME_MAX bytes with the NUL), the others of the
 * node attach to that name, and the creator unlinks the name once every
 * rank has attached or failed (the caller's agreement).  Counters start at
 * 0.  Errors: negative errno (-EPROTO: not a page of nslots counters). */
#define MCA_COMMON_SFIO_COORD_NAME_MAX 256
int mca_common_sfio_coord_shm_create(const mca_common_sfio_coord_config_t *cfg, int nslots,
                                     char *name, size_t name_size,
                                     mca_common_sfio_coord_t **coord_p);
int mca_common_sfio_coord_shm_attach(const mca_common_sfio_coord_config_t *cfg, int nslots,
                                     const char *name, mca_common_sfio_coord_t **coord_p);

/* Why this rank's last ofi open failed ("" if it did not or is unknown). */
const char *mca_common_sfio_coord_why(void);

static inline int mca_common_sfio_coord_fetch_add(mca_common_sfio_coord_t *c, int slot,
                                                  int64_t delta, int64_t *old_p)
{
    return c->ops->fetch_add(c, slot, delta, old_p);
}

static inline int mca_common_sfio_coord_load(mca_common_sfio_coord_t *c, int slot,
                                             int64_t *value_p)
{
    return c->ops->load(c, slot, value_p);
}

static inline int mca_common_sfio_coord_store(mca_common_sfio_coord_t *c, int slot,
                                              int64_t value)
{
    return c->ops->store(c, slot, value);
}

/* Adds delta to a slot without waiting for the result (ofi with
 * messages: one message, no reply): applied soon, maybe after the
 * caller's later operations, and an error may go unseen.  For counts
 * whose readers poll, such as a gate's. */
static inline int mca_common_sfio_coord_add(mca_common_sfio_coord_t *c, int slot, int64_t delta)
{
    int64_t old;
    return NULL == c->ops->add ? c->ops->fetch_add(c, slot, delta, &old)
                               : c->ops->add(c, slot, delta);
}

/* Enters a gate and fetch-adds in one request: if slot `gate` holds less
 * than limit, it gets 1 more and slot `slot` delta more (*old_p: what
 * slot held); else neither changes.  *gate_old_p: what the gate held.
 * -ENOTSUP where the backend cannot (the caller makes two requests). */
static inline int mca_common_sfio_coord_enter_fetch_add(mca_common_sfio_coord_t *c, int gate,
                                                        int64_t limit, int slot, int64_t delta,
                                                        int64_t *gate_old_p, int64_t *old_p)
{
    return NULL == c->ops->enter_fetch_add
               ? -ENOTSUP
               : c->ops->enter_fetch_add(c, gate, limit, slot, delta, gate_old_p, old_p);
}

/* The backend's ordered_add, or -ENOTSUP when it has none. */
static inline int mca_common_sfio_coord_ordered_add(mca_common_sfio_coord_t *c, int slot,
                                                    int64_t bytes, int64_t *start_p)
{
    return NULL == c->ops->ordered_add ? -ENOTSUP : c->ops->ordered_add(c, slot, bytes, start_p);
}

static inline int mca_common_sfio_coord_compare_swap(mca_common_sfio_coord_t *c, int slot,
                                                     int64_t expected, int64_t desired,
                                                     int64_t *old_p)
{
    return NULL == c->ops->compare_swap ? -ENOTSUP
                                        : c->ops->compare_swap(c, slot, expected, desired, old_p);
}

/* Version `version` (>= 1) of the sequencer is finished: returns 0 once
 * the mark in `slot` is >= version (every version up to it finished),
 * -ETIMEDOUT when an earlier version is not finished within the service's
 * timeout (its writer died or hangs), -ENOSPC when more versions wait
 * above the mark than the service has writers, -ENOTSUP (rma), other
 * errors as the operations. */
int mca_common_sfio_coord_publish(mca_common_sfio_coord_t *c, int slot, int64_t version);

/* Collective (rma frees its window, ofi's host its counters); NULL is a
 * no-op. */
int mca_common_sfio_coord_close(mca_common_sfio_coord_t *c);

/* Close, called by every rank when no rank will issue another operation
 * on c and every rank's earlier ones have returned: a collective on the
 * communicator came after the last one (OMPIO's file close starts with a
 * barrier; the fs, fbtl and sharedfp closes come after it).  Backends
 * whose close only waits for that (ofi) skip their agreement; the others
 * close collectively as mca_common_sfio_coord_close.  NULL is a no-op. */
int mca_common_sfio_coord_close_quiesced(mca_common_sfio_coord_t *c);

const char *mca_common_sfio_coord_name(const mca_common_sfio_coord_t *c);

/* The rank of the communicator whose process holds the counters (rma:
 * the window's, ofi: the host), or -1 (local, shm: every rank's). */
int mca_common_sfio_coord_host(const mca_common_sfio_coord_t *c);

/* Removes segments of dead creators from dir (this node, this user).
 * Returns how many were removed. */
int mca_common_sfio_coord_sweep(const char *shm_dir);

#endif
