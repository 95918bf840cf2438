/*
 * sfio_sfp: the arithmetic of a shared file pointer (sharedfp/fetchadd).
 * Pure module: no MPI, no I/O; unit-tested by test/unit/check_sfp.c.
 *
 * The shared pointer is kept as one signed 64-bit counter of "view bytes":
 * the position in the current view's data stream, in etypes, times the
 * etype size (what OMPIO's sharedfp interface exchanges: get_position
 * returns view bytes, the io layer divides by the etype size; seek takes
 * etypes).  An access of n bytes takes [p, p + n) by one fetch-and-add of
 * n; an ordered access of the group takes one fetch-and-add of the group's
 * total, and rank r writes at base + (sum of the counts of ranks < r).
 *
 * Everything returns 0 or a negative errno: -EINVAL for arguments MPI
 * calls erroneous (negative position, bad whence, etype 0), -EOVERFLOW
 * when a position would not fit an MPI_Offset.
 */
#ifndef MCA_COMMON_SFIO_SFP_H
#define MCA_COMMON_SFIO_SFP_H

#include <stdint.h>

#include "sfio_rangelist.h"   /* mca_common_sfio_view_t */

/* The three MPI_SEEK_* modes, independent of mpi.h. */
typedef enum {
    MCA_COMMON_SFIO_SFP_SEEK_SET = 0,
    MCA_COMMON_SFIO_SFP_SEEK_CUR = 1,
    MCA_COMMON_SFIO_SFP_SEEK_END = 2
} mca_common_sfio_sfp_whence_t;

/*
 * New pointer (view bytes) of a seek by `offset` etypes.  cur: the pointer
 * now (view bytes, used by SEEK_CUR); end: the view bytes before the end
 * of file (mca_common_sfio_sfp_view_bytes_below(), used by SEEK_END; it is
 * rounded up to a whole etype, so that the next access starts at or after
 * the end of file).  The result must be >= 0 (MPI: seeking to a negative
 * position is erroneous).
 */
int mca_common_sfio_sfp_seek(mca_common_sfio_sfp_whence_t whence, int64_t offset,
                             uint64_t etype_size, int64_t cur, uint64_t end, int64_t *new_p);

/*
 * Number of bytes of the view's data stream whose file offset is below
 * `size` (absolute, e.g. the file size): where SEEK_END puts the pointer.
 * The view is the flattened filetype (blocks relative to disp, repeated
 * every extent bytes).  Bytes of overlapping blocks count once per block,
 * as the data stream holds them.  -EINVAL for an invalid view.
 */
int mca_common_sfio_sfp_view_bytes_below(const mca_common_sfio_view_t *view, uint64_t size,
                                         uint64_t *bytes_p);

/*
 * Bytes of an access of `count` elements of `type_size` bytes, checked to
 * be whole etypes (MPI requires the datatype to be built of etypes) and to
 * fit an MPI_Offset.  count < 0 is -EINVAL.
 */
int mca_common_sfio_sfp_access_bytes(int64_t count, uint64_t type_size, uint64_t etype_size,
                                     int64_t *bytes_p);

/*
 * Where an ordered access starts: base (the pointer the group's one
 * fetch-and-add returned) plus prefix (the exclusive prefix sum of the
 * counts of lower ranks), as an etype offset for the _at call.  Both are
 * view bytes; the result must be a whole number of etypes.
 */
int mca_common_sfio_sfp_ordered_offset(int64_t base, int64_t prefix, uint64_t etype_size,
                                       int64_t *etypes_p);

/* Etype offset of the view-byte position p (p a whole number of etypes). */
int mca_common_sfio_sfp_to_etypes(int64_t p, uint64_t etype_size, int64_t *etypes_p);

#endif
