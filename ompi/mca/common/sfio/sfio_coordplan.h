/*
 * sfio_coordplan: where the coordination service of a file runs and on
 * which libfabric provider.  Pure module: no MPI, no libfabric, no I/O;
 * unit-tested by test/unit/check_coordplan.c.
 *
 *   _provider  the provider of the process's fabric endpoint, from the
 *              facts of fi_getinfo's list (name, FI_ATOMIC offered);
 *   _host      the rank that hosts one file's service, spread over the
 *              nodes so that one node does not host every file.
 */
#ifndef MCA_COMMON_SFIO_COORDPLAN_H
#define MCA_COMMON_SFIO_COORDPLAN_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One entry of fi_getinfo's list (RDM endpoints, messages). */
typedef struct {
    const char *name;   /* fabric_attr->prov_name: "tcp;ofi_rxm", "verbs;ofi_rxm", "shm", ... */
    bool atomics;       /* the provider also offers FI_ATOMIC on such endpoints */
} mca_common_sfio_coordplan_prov_t;

/*
 * The entry to use, in *index_p.  want: NULL, "" or "auto" for the
 * automatic choice, else a provider name, matched against the whole name
 * ("tcp;ofi_rxm") or its first part ("tcp", "verbs").  one_node: every
 * rank that will use the endpoint runs on this node (node-local providers
 * such as shm are usable only then).
 *
 * Automatic order, first entry of the best class in the list's order:
 *   1. a network provider offering atomics (RDMA hardware: verbs, efa,
 *      cxi, psm2/3, opx, ...);
 *   2. a network provider without them;
 *   3. tcp;ofi_rxm, then tcp;
 *   4. other software providers (net;ofi_rxm, sockets, udp;ofi_rxd, ...).
 * With one_node, shm (and sm2) come before all of these.
 *
 * Returns 0; -ENOENT when no entry matches want or none is usable;
 * -EXDEV when want names a node-local provider and !one_node.
 */
int mca_common_sfio_coordplan_provider(const mca_common_sfio_coordplan_prov_t *provs, int n,
                                       const char *want, bool one_node, int *index_p);

/* True when the provider moves data over sockets or emulates what it
 * offers (tcp, sockets, udp, shm, the rxm and rxd layers): its atomics
 * are messages served by the target's progress engine. */
bool mca_common_sfio_coordplan_software(const char *name);

/* True when the provider name is node-local (shm, sm2). */
bool mca_common_sfio_coordplan_node_local(const char *name);

/*
 * The host of a service over n ranks: node_of[n] holds dense node ids in
 * [0, nnodes); seed is the same on every rank (e.g. a serial number of the
 * group's services).  The host is on node seed % nnodes (nodes in turn as
 * the seed counts up), and it is the ((seed / nnodes) % k)-th of the k
 * ranks on that node (the ranks of a node in turn too).  forced >= 0: that
 * rank (modulo n).  Returns the rank, or -1 for bad arguments.
 */
int mca_common_sfio_coordplan_host(const int *node_of, int n, int nnodes, uint64_t seed,
                                   int forced);

#ifdef __cplusplus
}
#endif

#endif
