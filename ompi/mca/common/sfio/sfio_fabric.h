/*
 * sfio_fabric: the process's libfabric endpoint and its progress thread,
 * the transport of the coordination service across nodes (sfio_coord_ofi).
 *
 * One reliable datagram endpoint (FI_EP_RDM, FI_MSG) per process, started
 * by the first file that needs it and stopped when the engine closes (or
 * at exit): the provider is chosen by sfio_coordplan from fi_getinfo's
 * list, or named by the caller.  A thread named sfio-fabric reads the
 * completion queue and hands every received message to the handler, so
 * messages are served (and a manual-progress provider such as tcp;ofi_rxm
 * progresses) whatever the process's main thread does.  Sends are small
 * injected messages (fi_inject) from any thread (FI_THREAD_SAFE).
 *
 * Peers are known by the opaque addresses of _name, exchanged by the
 * caller (over the file's communicator) and turned into handles by _peer.
 */
#ifndef MCA_COMMON_SFIO_FABRIC_H
#define MCA_COMMON_SFIO_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest message and address handled. */
#define MCA_COMMON_SFIO_FABRIC_MSG_MAX 64
#define MCA_COMMON_SFIO_FABRIC_NAME_MAX 128

/* Called on the progress thread for every message received; it must not
 * block (it may send). */
typedef void (*mca_common_sfio_fabric_handler_t)(const void *msg, size_t len);

/*
 * Starts the endpoint once per process (later calls return the first
 * outcome, whatever they pass).  want: NULL, "" or "auto", or a provider
 * name (see mca_common_sfio_coordplan_provider).  Returns 0, or a negative
 * errno with the reason in mca_common_sfio_fabric_why().  *started_p
 * (may be NULL): this call started it.
 */
int mca_common_sfio_fabric_start(const char *want, mca_common_sfio_fabric_handler_t handler,
                                 bool *started_p);

/* Why the last start failed (static text, "" when it did not). */
const char *mca_common_sfio_fabric_why(void);

/* One line on the running endpoint: provider, fabric, domain, progress. */
const char *mca_common_sfio_fabric_describe(void);

/* This process's address (len bytes, at most NAME_MAX). */
int mca_common_sfio_fabric_name(void *name, size_t *len_p);

/* Handle of the peer at the given address (inserted once per process). */
int mca_common_sfio_fabric_peer(const void *name, size_t len, uint64_t *peer_p);

/* Sends len <= MSG_MAX bytes; retries while the provider is busy until
 * timeout_ms (then -ETIMEDOUT); other failures -EIO. */
int mca_common_sfio_fabric_send(uint64_t peer, const void *msg, size_t len, int64_t timeout_ms);

/* Stops the thread and closes the endpoint (engine close, exit). */
void mca_common_sfio_fabric_stop(void);

#endif
