/*
 * sfio_gate: the two-class gate (see header).
 */
#define _GNU_SOURCE
#include <sched.h>

#include "sfio_gate.h"

/* word: bits 0-23 plain members inside, 24-47 locked members inside,
 * bit 48 plain wants a turn, bit 49 locked wants a turn, bit 50 the
 * class whose turn it is when both want one. */
#define COUNT_BITS 24
#define COUNT_MASK ((uint64_t) MCA_COMMON_SFIO_GATE_MAX_INSIDE)
#define WANT_BIT(cls) (1ull << (48 + (cls)))
#define TURN_BIT (1ull << 50)

/* the only spins before yielding: a member inside holds the gate for one
 * system call or one locked access */
#define SPINS_BEFORE_YIELD 64

static unsigned shift_of(mca_common_sfio_gate_class_t cls)
{
    return MCA_COMMON_SFIO_GATE_PLAIN == cls ? 0 : COUNT_BITS;
}

static mca_common_sfio_gate_class_t other(mca_common_sfio_gate_class_t cls)
{
    return MCA_COMMON_SFIO_GATE_PLAIN == cls ? MCA_COMMON_SFIO_GATE_LOCKED
                                             : MCA_COMMON_SFIO_GATE_PLAIN;
}

static mca_common_sfio_gate_class_t turn_of(uint64_t word)
{
    return (word & TURN_BIT) ? MCA_COMMON_SFIO_GATE_LOCKED : MCA_COMMON_SFIO_GATE_PLAIN;
}

static uint64_t with_turn(uint64_t word, mca_common_sfio_gate_class_t cls)
{
    return MCA_COMMON_SFIO_GATE_LOCKED == cls ? word | TURN_BIT : word & ~TURN_BIT;
}

unsigned mca_common_sfio_gate_inside(uint64_t word, mca_common_sfio_gate_class_t cls)
{
    return (unsigned) ((word >> shift_of(cls)) & COUNT_MASK);
}

bool mca_common_sfio_gate_wants(uint64_t word, mca_common_sfio_gate_class_t cls)
{
    return 0 != (word & WANT_BIT(cls));
}

bool mca_common_sfio_gate_step_enter(uint64_t word, mca_common_sfio_gate_class_t cls,
                                     uint64_t *next_p)
{
    mca_common_sfio_gate_class_t o = other(cls);
    bool other_waits = mca_common_sfio_gate_wants(word, o);
    if (0 == mca_common_sfio_gate_inside(word, o) && (!other_waits || turn_of(word) == cls) &&
        mca_common_sfio_gate_inside(word, cls) < MCA_COMMON_SFIO_GATE_MAX_INSIDE) {
        uint64_t next = (word + (1ull << shift_of(cls))) & ~WANT_BIT(cls);
        /* entering while the other class waits spends this class's turn:
         * later members wait until the other class has been in */
        *next_p = other_waits ? with_turn(next, o) : next;
        return true;
    }
    *next_p = word | WANT_BIT(cls);
    return false;
}

uint64_t mca_common_sfio_gate_step_leave(uint64_t word, mca_common_sfio_gate_class_t cls)
{
    return word - (1ull << shift_of(cls));
}

bool mca_common_sfio_gate_one_call(const mca_common_sfio_ioseg_t *segs, size_t nsegs)
{
    if (0 == nsegs || nsegs > MCA_COMMON_SFIO_GATE_PLAIN_MAX_SEGS) {
        return false;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < nsegs; ++i) {
        if (i > 0 && segs[i - 1].offset + segs[i - 1].length != segs[i].offset) {
            return false;
        }
        total += segs[i].length;
        if (total > MCA_COMMON_SFIO_GATE_PLAIN_MAX_BYTES) {
            return false;
        }
    }
    return true;
}

static void pause_a_little(unsigned *spins)
{
    if (++*spins < SPINS_BEFORE_YIELD) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else {
        (void) sched_yield();
    }
}

int mca_common_sfio_gate_enter(const mca_common_sfio_gate_t *g, mca_common_sfio_gate_class_t cls)
{
    int64_t cur;
    int rc = mca_common_sfio_coord_load(g->coord, g->slot, &cur);
    unsigned spins = 0;
    while (0 == rc) {
        uint64_t next;
        bool in = mca_common_sfio_gate_step_enter((uint64_t) cur, cls, &next);
        if (next != (uint64_t) cur) {
            int64_t old;
            rc = mca_common_sfio_coord_compare_swap(g->coord, g->slot, cur, (int64_t) next, &old);
            if (0 != rc) {
                break;
            }
            if (old != cur) {
                cur = old;       /* someone else moved: decide again */
                continue;
            }
            if (in) {
                return 0;
            }
        }
        pause_a_little(&spins);
        rc = mca_common_sfio_coord_load(g->coord, g->slot, &cur);
    }
    return rc;
}

int mca_common_sfio_gate_leave(const mca_common_sfio_gate_t *g, mca_common_sfio_gate_class_t cls)
{
    /* leaving changes only the class's count: one fetch-and-add */
    int64_t old;
    return mca_common_sfio_coord_fetch_add(g->coord, g->slot, -(int64_t) (1ull << shift_of(cls)),
                                           &old);
}
