/*
 * sfio_package: the processor package (socket) this process is bound to,
 * from hwloc.  No MPI: the engine's topology (sfio_topo) and the
 * placement tool (tools/sfio_place) both ask it.
 */
#ifndef MCA_COMMON_SFIO_PACKAGE_H
#define MCA_COMMON_SFIO_PACKAGE_H

/* Logical index of the package holding this process's CPU binding, or
 * -1 when the process is not bound inside one package (allowed on every
 * CPU, or spanning packages) or hwloc cannot tell.  Loading a topology is
 * slow even with only packages kept, so it is skipped for an unbound
 * process; callers that ask often keep the answer. */
int mca_common_sfio_bound_package(void);

#endif
