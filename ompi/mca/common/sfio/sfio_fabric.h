/*
 * sfio_fabric: the process's libfabric endpoint and its progress thread,
 * the transport of the coordination service across nodes (sfio_coord_ofi).
 *
 * One reliable datagram endpoint (FI_EP_RDM, FI_MSG, and FI_ATOMIC where
 * the provider offers it) per process, started by the first file that
 * needs it and stopped when the engine closes (or at exit): the provider is chosen by sfio_coordplan from fi_getinfo's
 * list, or named by the caller.  A thread named sfio-fabric reads the
 * completion queue and hands every received message to the handler of
 * its protocol, so messages are served (and a manual-progress provider
 * such as tcp;ofi_rxm progresses) whatever the process's main thread
 * does.  Several services share the endpoint: a message starts with a
 * small header naming its protocol (the coordination counters, the lock
 * manager), and each protocol has one handler and an optional tick, a
 * call the thread makes at least every TICK_MS (timeouts, probes).
 *
 * Sends go from any thread (FI_THREAD_SAFE): a message that fits the
 * provider's inject size is injected (fi_inject, no completion); a larger
 * one, up to mca_common_sfio_fabric_msg_max(), is copied and sent with
 * fi_send, and the progress thread frees the copy at its completion.
 * Every posted receive holds the largest message, so none is truncated.
 *
 * Peers are known by the opaque addresses of _name, exchanged by the
 * caller (over the file's communicator) and turned into handles by
 * _learn, which remembers the handle of every process it learned (keyed
 * by the caller's name of the process), so that a service whose
 * processes are all known (_known) needs no exchange.
 */
#ifndef MCA_COMMON_SFIO_FABRIC_H
#define MCA_COMMON_SFIO_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Messages of at most MSG_MAX bytes can always be sent; larger ones up
 * to mca_common_sfio_fabric_msg_max() (at most BIG_MAX).  Largest
 * address handled. */
#define MCA_COMMON_SFIO_FABRIC_MSG_MAX 64
#define MCA_COMMON_SFIO_FABRIC_BIG_MAX 32768
#define MCA_COMMON_SFIO_FABRIC_NAME_MAX 128
/* The progress thread calls every protocol's tick at least this often. */
#define MCA_COMMON_SFIO_FABRIC_TICK_MS 100

/* The protocols sharing the endpoint. */
typedef enum {
    MCA_COMMON_SFIO_FABRIC_PROTO_COORD = 0,   /* counters (sfio_coord_ofi) */
    MCA_COMMON_SFIO_FABRIC_PROTO_LOCK = 1,    /* list-lock manager (sfio_locksvc) */
    MCA_COMMON_SFIO_FABRIC_PROTO_GREET = 2,   /* no service: received and dropped */
    MCA_COMMON_SFIO_FABRIC_PROTOS
} mca_common_sfio_fabric_proto_t;

/* Called on the progress thread for every message received; it must not
 * block (it may send). */
typedef void (*mca_common_sfio_fabric_handler_t)(const void *msg, size_t len);
/* Called on the progress thread about every TICK_MS; now_ms: the
 * monotonic clock in ms.  Must not block (it may send). */
typedef void (*mca_common_sfio_fabric_tick_t)(int64_t now_ms);

/*
 * Starts the endpoint once per process (later calls return the first
 * outcome, whatever provider they name).  want: NULL, "" or "auto", or a
 * provider name (see mca_common_sfio_coordplan_provider).  A service
 * sets its protocol's handler (mca_common_sfio_fabric_handle) before its
 * first exchange of addresses.  Returns 0, or a negative errno with the reason in
 * mca_common_sfio_fabric_why().  *started_p (may be NULL): this call
 * started it.
 */
int mca_common_sfio_fabric_start(const char *want, bool *started_p);

/* Why the last start failed (static text, "" when it did not). */
const char *mca_common_sfio_fabric_why(void);

/* One line on the running endpoint: provider, fabric, domain, progress. */
const char *mca_common_sfio_fabric_describe(void);

/* This process's address (len bytes, at most NAME_MAX). */
int mca_common_sfio_fabric_name(void *name, size_t *len_p);

/* Sets the handler and tick (either may be NULL) of a protocol; they stay
 * for the life of the process (a service that has nothing to serve
 * ignores what comes).  Takes effect before the next message. */
void mca_common_sfio_fabric_handle(mca_common_sfio_fabric_proto_t proto,
                                   mca_common_sfio_fabric_handler_t handler,
                                   mca_common_sfio_fabric_tick_t tick);

/* The largest message the running endpoint sends (MSG_MAX .. BIG_MAX;
 * 0 when not started). */
size_t mca_common_sfio_fabric_msg_max(void);

/*
 * The table of processes met: proc is the caller's 64-bit name of a
 * process (its MPI job id and rank), unique in the job and among the jobs
 * it connects to.  _learn inserts the process's address (once per
 * address) and remembers its handle under proc (a process known already
 * keeps the handle it has: its address is the same); 0, -ENOMEM, -EIO,
 * -EINVAL (len), -ENOTCONN.  _known says whether every one of the n procs
 * is in the table, with their handles in peers[] (n; partly written when
 * not).
 * Bounded by the processes this process has met over the fabric: the
 * job's size, and with MPI_Comm_spawn or connect/accept also the
 * processes of the jobs it connected to.  Cleared when the endpoint
 * stops (its handles die with it); a process's address does not change
 * while its endpoint runs, which is until its engine closes (MPI_Finalize).
 */
bool mca_common_sfio_fabric_known(const uint64_t *procs, size_t n, uint64_t *peers);
int mca_common_sfio_fabric_learn(uint64_t proc, const void *name, size_t len, uint64_t *peer_p);

/* Sends len <= msg_max() bytes of protocol proto; retries while the
 * provider is busy until timeout_ms (then -ETIMEDOUT); -EMSGSIZE, -ENOMEM,
 * other failures -EIO.  0 means the provider took the message: a
 * reliable endpoint delivers it unless the peer is gone. */
int mca_common_sfio_fabric_send(uint64_t peer, mca_common_sfio_fabric_proto_t proto,
                                const void *msg, size_t len, int64_t timeout_ms);

/* Sends an empty message of no service to each of peers[n] but
 * peers[self], so that a connection-based provider (tcp;ofi_rxm) sets up
 * its connection to each now: the first request of a later service to a
 * host it never spoke to then costs a round trip, not a connection set-up
 * as well.  Best effort: failures are ignored. */
void mca_common_sfio_fabric_greet(const uint64_t *peers, size_t n, size_t self);

/*
 * Remote atomics on 64-bit integers in a peer's registered memory, when
 * the provider offers them (FI_ATOMIC; fi_query_atomic says each of these
 * is valid on FI_INT64): fetch-and-add, read, swap (write returning the
 * old value), compare-and-swap.  Every one returns the old value, so its
 * completion means the target applied it.
 */
typedef enum {
    MCA_COMMON_SFIO_FABRIC_FETCH_ADD = 0,
    MCA_COMMON_SFIO_FABRIC_READ = 1,
    MCA_COMMON_SFIO_FABRIC_SWAP = 2,
    MCA_COMMON_SFIO_FABRIC_CSWAP = 3
} mca_common_sfio_fabric_aop_t;

/* Called on the progress thread when an atomic completes: err 0 and the
 * old value, or -EIO.  Must not block (it may send). */
typedef void (*mca_common_sfio_fabric_done_t)(uint64_t cookie, int err, int64_t old);

/* The running endpoint offers the atomics above; *native_p (may be NULL):
 * the provider is not a software one (sfio_coordplan), so they need no
 * thread of the target. */
bool mca_common_sfio_fabric_atomics(bool *native_p);

/* Atomics this process's endpoint has completed (tests: the path was taken). */
uint64_t mca_common_sfio_fabric_atomics_done(void);

/* Registers len bytes at buf as the target of remote atomics (read and
 * write); a peer names them by *key_p and addresses from *addr_p (the
 * first byte).  -ENOTSUP without atomics, -EIO. */
int mca_common_sfio_fabric_mr_reg(void *buf, size_t len, void **mr_p, uint64_t *key_p,
                                  uint64_t *addr_p);
void mca_common_sfio_fabric_mr_close(void *mr);   /* NULL: no-op */

/* Starts aop on the 64-bit word at addr of the peer's region key; operand:
 * the addend or new value, compare: CSWAP's expected value.  0: done is
 * called once, later; else a negative errno (-ETIMEDOUT while the provider
 * stays busy, -ENOTSUP, -ENOMEM, -EIO) and done is not called. */
int mca_common_sfio_fabric_atomic(uint64_t peer, uint64_t addr, uint64_t key,
                                  mca_common_sfio_fabric_aop_t aop, int64_t operand,
                                  int64_t compare, mca_common_sfio_fabric_done_t done,
                                  uint64_t cookie, int64_t timeout_ms);

/* Stops the thread and closes the endpoint (engine close, exit). */
void mca_common_sfio_fabric_stop(void);

#endif
