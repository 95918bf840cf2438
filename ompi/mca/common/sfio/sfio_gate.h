/*
 * sfio_gate: a two-class gate for auto's atomic mode on one node over
 * local storage.
 *
 * There a write that reaches the file in one system call is atomic
 * against every other such write: the local file systems of the table in
 * sfio_fsmagic serialize writes of one file (the inode lock), as POSIX
 * asks.  Reads are not atomic against writes, and a write made of several
 * calls (pieces of a file view) is not atomic against anything.  So the
 * group's accesses fall into two classes that must never overlap in time:
 *   plain   writes of one system call, which need no byte-range lock;
 *   locked  everything else, under the byte-range locks of its lock mode.
 * Members of one class run together; the two classes take turns.  A
 * waiting class asks for its turn: once asked, at most one more member of
 * the class inside enters, then the inside drains and the waiting class
 * goes in (phase-fair: neither class starves the other).
 *
 * The gate is one 64-bit counter of the file's coordination service
 * (sfio_coord, shm on one node): two member counts, two "wants a turn"
 * bits and whose turn it is, changed by compare-and-swap.  The steps are
 * pure functions of that word (tested against a model of every
 * interleaving); enter and leave run them against the service.
 * Waiting spins briefly, then yields the processor.
 *
 * A process that dies inside the gate leaves its count behind: the
 * others wait until the job ends (Open MPI ends a job whose process died).
 */
#ifndef MCA_COMMON_SFIO_GATE_H
#define MCA_COMMON_SFIO_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sfio_coord.h"
#include "sfio_iobatch.h"

typedef enum {
    MCA_COMMON_SFIO_GATE_PLAIN = 0,
    MCA_COMMON_SFIO_GATE_LOCKED = 1
} mca_common_sfio_gate_class_t;

/* Members of one class inside at once (the count's width). */
#define MCA_COMMON_SFIO_GATE_MAX_INSIDE ((1u << 24) - 1)

/* Writes no larger than this, in at most this many segments, are one
 * system call (below Linux's MAX_RW_COUNT and IOV_MAX). */
#define MCA_COMMON_SFIO_GATE_PLAIN_MAX_BYTES (1ull << 30)
#define MCA_COMMON_SFIO_GATE_PLAIN_MAX_SEGS 1024u

typedef struct mca_common_sfio_gate_t {
    mca_common_sfio_coord_t *coord;
    int slot;
} mca_common_sfio_gate_t;

/* The word's parts. */
unsigned mca_common_sfio_gate_inside(uint64_t word, mca_common_sfio_gate_class_t cls);
bool mca_common_sfio_gate_wants(uint64_t word, mca_common_sfio_gate_class_t cls);

/* One try to enter: true when *next_p lets cls in (one more member);
 * false when cls must wait, *next_p then records that it wants a turn
 * (equal to word when it already did). */
bool mca_common_sfio_gate_step_enter(uint64_t word, mca_common_sfio_gate_class_t cls,
                                     uint64_t *next_p);

/* The word after a member of cls leaves (cls must have one inside). */
uint64_t mca_common_sfio_gate_step_leave(uint64_t word, mca_common_sfio_gate_class_t cls);

/* True when a write of segs is one system call: the segments follow each
 * other in the file, within the bounds above. */
bool mca_common_sfio_gate_one_call(const mca_common_sfio_ioseg_t *segs, size_t nsegs);

/* Enter and leave the gate g in cls; 0 or a negative errno of the
 * service (the gate is then not entered, or left as it was). */
int mca_common_sfio_gate_enter(const mca_common_sfio_gate_t *g, mca_common_sfio_gate_class_t cls);
int mca_common_sfio_gate_leave(const mca_common_sfio_gate_t *g, mca_common_sfio_gate_class_t cls);

#endif
