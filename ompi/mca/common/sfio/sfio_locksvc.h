/*
 * sfio_locksvc: the list-lock manager of one open file across nodes: the
 * state machine of sfio_lockq, hosted by one rank per file and served by
 * that rank's libfabric progress thread (sfio_fabric, protocol LOCK), so
 * a host busy outside MPI never stalls the others.
 *
 * A client sends its whole sorted lock list in one REQUEST (a list too
 * long for one message: in PARTs, assembled by the host before it joins
 * the queue) and gets one GRANT (or an ERROR); a RELEASE needs no answer, unless the hold lasted
 * half the time the host takes to drop a silent holder: then the host
 * confirms it (GRANT) or says the list was taken away (ERROR -ENOLCK).
 * Messages (sfio_lockmsg behind a small frame naming the service and the
 * sender's rank):
 *   client -> host  REQUEST {client, request, ranges}, RELEASE {client, request},
 *                   PART {client, request, total, first, ranges}
 *   host -> client  GRANT {client, request}, ERROR {client, request, errno}
 *   host -> client  PING;  client -> host  PONG (the client's progress
 *                   thread answers: the process is alive)
 *
 * Who the client is: the service numbers its members by their rank in the
 * file's communicator and gives each a nonce at open (from a random seed
 * the host draws per open and broadcasts); a message is
 * served only when its frame's rank, the lock message's client and the
 * nonce in the request id agree with that table, and only for members not
 * dropped (without FI_SOURCE the endpoint does not say who sent a
 * message; the nonce keeps messages of another open of the same service
 * id, or of a confused sender, out of the queue).
 *
 * Death: while some list has waited longer than probe_ms, the host pings
 * every client that holds a list and has said nothing for probe_ms; a
 * client that does not answer within dead_ms is dropped
 * (mca_common_sfio_lockq_drop_client: its lists go, what they blocked is
 * granted) and refused for the rest of the open (-ENOLCK).  So a killed
 * or frozen holder blocks the others for at most probe_ms + dead_ms plus
 * a tick, while a holder that is merely slow, or a rank asleep outside
 * MPI, keeps its locks: its progress thread answers.  A dropped client
 * that wakes up learns it from its release (a long hold's release is
 * confirmed) or its next request (-ENOLCK).
 * Independently, a client waits for its grant at most timeout_ms, then
 * withdraws its list and fails with -ETIMEDOUT (a dead or unreachable
 * host, or a live holder slower than that).
 *
 * Serialization: one mutex guards every hosted queue; the progress thread
 * (messages, ticks) and the host's own rank (its requests skip the
 * fabric) take it, so the queue sees one call at a time.
 *
 * Each process takes one list at a time per service (the engine's locked
 * accesses are serialized per process), which is what makes the queue's
 * no-deadlock guarantee apply.
 */
#ifndef MCA_COMMON_SFIO_LOCKSVC_H
#define MCA_COMMON_SFIO_LOCKSVC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sfio_export.h"
#include "sfio_rangelist.h"

struct ompi_communicator_t;

/* Exported for test/atomic/t_locksvc, which drives a service directly. */

typedef struct mca_common_sfio_locksvc_config_t {
    const char *provider;    /* libfabric provider (NULL, "" or "auto": chosen) */
    int64_t timeout_ms;      /* a waiter gives up after this (> 0) */
    int64_t probe_ms;        /* a list waiting this long makes the host probe holders */
    int64_t dead_ms;         /* a probed holder silent this long is dropped */
    int host;                /* host rank, -1: placed over the nodes */
    size_t list_max;         /* ranges of one list at most (0: one message's worth) */
    size_t max_overtakes;    /* the host's queue: later lists granted ahead of a
                              * queued one (0: strict FIFO; sfio_lockq.h) */
} mca_common_sfio_locksvc_config_t;

typedef struct mca_common_sfio_locksvc_t mca_common_sfio_locksvc_t;

/* Collective over comm: starts the fabric (once per process), places the
 * host, learns the addresses it lacks (sfio_coord_join), gives every rank
 * its nonce.  local_err: a negative errno this rank already has (the
 * collective still completes and fails everywhere).
 * Returns the same everywhere: 0, or a negative errno with this rank's
 * reason in mca_common_sfio_locksvc_why(). */
SFIO_EXPORT int mca_common_sfio_locksvc_open(struct ompi_communicator_t *comm,
                                 const mca_common_sfio_locksvc_config_t *cfg, int local_err,
                                 mca_common_sfio_locksvc_t **svc_p);

/* Collective: every rank's lists are released before the host forgets the
 * queue.  NULL: no-op. */
SFIO_EXPORT int mca_common_sfio_locksvc_close(mca_common_sfio_locksvc_t *svc);

/* Close without a collective of its own, called by every rank once every
 * rank is past its last acquire and release (a collective came after
 * them: OMPIO's file close starts with a barrier).  A release still on
 * its way finds no queue, which no rank waits on any more.  NULL: no-op. */
SFIO_EXPORT int mca_common_sfio_locksvc_close_quiesced(mca_common_sfio_locksvc_t *svc);

/* Why this rank's last open failed (static text). */
SFIO_EXPORT const char *mca_common_sfio_locksvc_why(void);

/* The longest list acquire takes (longer lists are coarsened first by the
 * caller). */
SFIO_EXPORT size_t mca_common_sfio_locksvc_max_ranges(const mca_common_sfio_locksvc_t *svc);

/* The host's rank. */
SFIO_EXPORT int mca_common_sfio_locksvc_host(const mca_common_sfio_locksvc_t *svc);

/* Takes the whole list (normalized, at most max_ranges ranges), shared or
 * exclusive, waiting as needed.  Returns 0 (held until release), or with
 * nothing held: -ETIMEDOUT (not granted within the timeout), -ENOLCK (the
 * host dropped this rank), -ENOSPC, -EINVAL, -ENOMEM, -EIO. */
SFIO_EXPORT int mca_common_sfio_locksvc_acquire(mca_common_sfio_locksvc_t *svc,
                                    const mca_common_sfio_rangelist_t *locks, bool exclusive);

/* Releases what acquire took.  0, or -ENOLCK when the host dropped this
 * rank meanwhile (the list was taken away: the access it covered may have
 * overlapped another's). */
SFIO_EXPORT int mca_common_sfio_locksvc_release(mca_common_sfio_locksvc_t *svc);

/* Counters of this process's traffic. */
typedef struct mca_common_sfio_locksvc_stats_t {
    uint64_t requests;     /* lists asked for */
    uint64_t timeouts;     /* ... not granted within the timeout */
    uint64_t dropped;      /* clients this process dropped as host */
} mca_common_sfio_locksvc_stats_t;
SFIO_EXPORT void mca_common_sfio_locksvc_stats(mca_common_sfio_locksvc_stats_t *stats_p);

#endif
