/*
 * sfio_foldplan: who writes back which versioned piece at a fold.
 * Pure module: no MPI, no I/O; unit-tested by test/unit/check_foldplan.c.
 *
 * A piece's owner (the rank whose version won it) has its bytes in its own
 * log, usually in a copy in memory, so writing it costs the owner one
 * transfer of the piece.  Any other rank must read the piece from the
 * owner's log first: two transfers on its own link.  Who wins what follows
 * the version order, so owners can be very unequal (a rank that won both
 * of its overlaps, beside one that won none); the fold lasts as long as
 * the busiest link.  The plan moves pieces from the busiest owner to the
 * least busy rank while that lowers the busiest load.
 *
 * Every rank computes the same plan from the same index, so no message is
 * needed: the result depends only on the arguments.
 */
#ifndef MCA_COMMON_SFIO_FOLDPLAN_H
#define MCA_COMMON_SFIO_FOLDPLAN_H

#include <stddef.h>
#include <stdint.h>

/* Transfers a piece costs a rank that does not own it (read + write). */
#define MCA_COMMON_SFIO_FOLDPLAN_HELPER_COST 2u

/* owner[i], length[i]: the n pieces, in file order.  Fills writer[i] (a rank
 * in [0, nranks)) and, when load is not NULL, load[r] (transfers of rank r,
 * in bytes, under the cost model above).  Pieces move from the end of an
 * owner's list, so a rank keeps a contiguous prefix of what it won.
 * Returns 0, -EINVAL (nranks < 1, an owner out of range) or -ENOMEM. */
int mca_common_sfio_foldplan_balance(const int *owner, const uint64_t *length, size_t n,
                                     int nranks, int *writer, uint64_t *load);

#endif
