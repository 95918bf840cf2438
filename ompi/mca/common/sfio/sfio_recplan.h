/*
 * sfio_recplan: which versions crash recovery redoes when the store did
 * not keep its published mark (a store whose counters lived in the
 * coordination service, gone with the job).  Pure module: no MPI, no
 * I/O; unit-tested by test/unit/check_recplan.c.
 *
 * A version is published only after its record is whole and every lower
 * version is published, and a writer that cannot append its record
 * appends an ABORT record for its version instead, or does not publish.
 * So the longest run of versions above the folded mark whose records are
 * whole (in any rank's record log) holds every published version; a
 * version missing from it ends the run, and later versions (whose
 * writers waited for it) are dropped.
 */
#ifndef MCA_COMMON_SFIO_RECPLAN_H
#define MCA_COMMON_SFIO_RECPLAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The largest P >= folded such that every version folded + 1 .. P is
 * among versions[0 .. n) (the versions of the whole WRITE, PLACE and
 * ABORT records found, any order).  Versions <= folded and repeats are
 * ignored.  Sorts versions in place. */
uint64_t mca_common_sfio_recplan_published(uint64_t folded, uint64_t *versions, size_t n);

#ifdef __cplusplus
}
#endif

#endif
