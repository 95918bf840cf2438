/*
 * sfio_appmat: the application matrix of collective I/O (who hands how
 * many bytes to which aggregator), written for sfio-place when
 * fcoll_adaptive_matrix_file names a file.  Format: sfio_procmap.h
 * (mca_common_sfio_procmap_app_format), ranks of MPI_COMM_WORLD.
 *
 * World rank 0 creates the file with its header at its first collective
 * call (every rank is in that call, so no rank has appended before); each
 * process appends its own row once, when it exits (or at the engine's
 * last close, whichever comes first), in one write under a whole-file
 * lock.  Only files whose communicator
 * spans MPI_COMM_WORLD are counted.
 */
#ifndef MCA_COMMON_SFIO_APPMAT_H
#define MCA_COMMON_SFIO_APPMAT_H

#include <stdint.h>

#include "ompi_config.h"
#include "ompi/communicator/communicator.h"

/* A collective call on comm begins; path: the parameter (NULL/"": off). */
void mca_common_sfio_appmat_call(struct ompi_communicator_t *comm, const char *path);

/* This rank hands bytes to rank peer of comm in the current call. */
void mca_common_sfio_appmat_sent(struct ompi_communicator_t *comm, int peer, uint64_t bytes);

/* Appends this process's row, once (exit, engine close). */
void mca_common_sfio_appmat_flush(void);

#endif
