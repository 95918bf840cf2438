/*
 * sfio_fcoll: the collective I/O engine of fcoll/adaptive (Gabriel's OMPIO design).
 * One exchange engine serves every aggregating algorithm; they differ only
 * in how a rank's file pieces are assigned to (aggregator, cycle):
 *
 *   two_phase   aggregator = contiguous file domain of the offset,
 *               cycle = cycle_bytes-long slice of the domain;
 *   dynamic     aggregator = the rank's group's, cycle = cut of the
 *               group's data sorted by offset into cycle_bytes portions;
 *   static      aggregator = the rank's group's, cycle = a fixed share
 *               (its bytes / group cycles) of the rank's stream.
 *
 * individual passes each rank's own access to the fbtl as one call.
 * The planning (decision, groups, domains, cuts, unions) is the pure
 * module sfio_collplan; this file holds the MPI and fbtl effects.
 */
#ifndef MCA_COMMON_SFIO_FCOLL_H
#define MCA_COMMON_SFIO_FCOLL_H

#include "sfio_export.h"

#include "ompi_config.h"
#include "ompi/mca/common/ompio/common_ompio.h"

#include "sfio_collplan.h"
#include "sfio_colldecide.h"
#include "sfio_posixio.h"

BEGIN_C_DECLS

/* Where aggregators go (fcoll_adaptive_placement). */
typedef enum {
    MCA_COMMON_SFIO_PLACE_SPREAD = 0,   /* over nodes, then sockets (sfio_placeplan) */
    MCA_COMMON_SFIO_PLACE_RANK          /* by rank number only (before placement) */
} mca_common_sfio_place_policy_t;


typedef struct mca_common_sfio_fcoll_options_t {
    int algorithm;          /* mca_common_sfio_coll_alg_t; AUTO: decide */
    int num_aggregators;    /* > 0: forced count (cb_nodes overrides too) */
    int max_aggregators;    /* > 0: cap of the automatic count */
    uint64_t k;             /* saturation size of one process (bytes) */
    uint64_t stripe_size;   /* 0: fh->f_stripe_size, else 64 KiB */
    uint64_t read_max_gap;  /* aggregators' reads bridge holes up to this */
    uint64_t cycle_bytes;   /* 0: fh->f_bytes_per_agg (cb_buffer_size) / 2 */
    int read_extent_ratio;  /* auto reads alone up to this extent / bytes;
                               -1: by file system (8 local, 0 network) */
    int storage;            /* MCA_COMMON_SFIO_STORAGE_* */
    int local_aggregators_per_cpu;  /* > 0: on local file systems the automatic
                               count is at most this many per processor of
                               each node (sfio_place_cpu_cap) */
    int async_io;           /* aggregators queue each cycle's file I/O (fbtl
                               ipwritev / ipreadv) and exchange the next cycle
                               meanwhile: 1 always, 0 never, -1 on network file
                               systems only */
    uint64_t write_cycle_bytes; /* automatic write cycles are at most this (0: no bound) */
    uint64_t read_cycle_bytes;  /* automatic read cycles with queued reads are at
                               most this (0: no bound) */
    int async_min_cycles;   /* queued I/O, automatic cycles: the busiest aggregator
                               gets at least this many cycles (<= 1: off) */
    uint64_t async_min_cycle_bytes; /* ... of at least this many bytes */
    uint64_t individual_min_run; /* ranks apart go individual when every rank's
                               runs average at least this (0: never) */
    int links_per_node;     /* storage links per node (0: one per rank) */
    int placement;          /* mca_common_sfio_place_policy_t */
    const char *emulate_nodes;  /* NULL/"": real nodes; "block:N", "cyclic:N" */
    const char *matrix_file;    /* NULL/"": no application matrix (sfio_appmat) */
    int output;             /* verbose stream */
} mca_common_sfio_fcoll_options_t;

SFIO_EXPORT int mca_common_sfio_fcoll_write_all(ompio_file_t *fh, const void *buf, int count,
                                    struct ompi_datatype_t *datatype,
                                    ompi_status_public_t *status,
                                    const mca_common_sfio_fcoll_options_t *opt);
SFIO_EXPORT int mca_common_sfio_fcoll_read_all(ompio_file_t *fh, void *buf, int count,
                                   struct ompi_datatype_t *datatype,
                                   ompi_status_public_t *status,
                                   const mca_common_sfio_fcoll_options_t *opt);
/* Non-blocking variants: the call decodes the buffer and this call's part
 * of the file view (the individual file pointer moves now), posts the
 * first exchange and returns an OMPIO request.  OMPIO's progress function
 * (any MPI call that progresses: MPI_Test, MPI_Wait, ...) runs the rest,
 * one cycle at a time.  Calls on one file run in start order.  The
 * blocking variants are the same start followed by a wait. */
SFIO_EXPORT int mca_common_sfio_fcoll_iwrite_all(ompio_file_t *fh, const void *buf, int count,
                                     struct ompi_datatype_t *datatype, ompi_request_t **request,
                                     const mca_common_sfio_fcoll_options_t *opt);
SFIO_EXPORT int mca_common_sfio_fcoll_iread_all(ompio_file_t *fh, void *buf, int count,
                                    struct ompi_datatype_t *datatype, ompi_request_t **request,
                                    const mca_common_sfio_fcoll_options_t *opt);

/* Registers the enum MCA parameter "algorithm" of component c over the
 * catalogue (mca_common_sfio_coll_algs). */
SFIO_EXPORT int mca_common_sfio_fcoll_algorithm_register(const mca_base_component_t *c, int *storage);

/* Registers "placement" (enum spread|rank into *placement) and the string
 * "emulate_nodes" of component c; the string's value is **emulate_cell
 * (a heap cell, see mca_common_sfio_component_register_string). */
SFIO_EXPORT int mca_common_sfio_fcoll_placement_register(const mca_base_component_t *c, int *placement,
                                             char ***emulate_cell);

/* Registers the enum "storage" (auto|local|network) into *storage. */
SFIO_EXPORT int mca_common_sfio_fcoll_storage_register(const mca_base_component_t *c, int *storage);

END_C_DECLS

#endif
