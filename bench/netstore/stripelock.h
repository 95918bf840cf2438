/*
 * stripelock.h - the extent-lock rule of netstore's stripe lock emulation,
 * kept pure (no POSIX, no time) so that it can be tested on its own.
 *
 * Lustre and GPFS give each client a lock on the stripes it touches: a
 * write lock held by one client, or read locks shared by several.  A client
 * that writes a stripe someone else holds, or reads a stripe another client
 * holds for writing, first has the server call the lock back from the
 * holder (which flushes and drops it): about two round trips.  The holder
 * then keeps the lock cached until someone else needs it, so a client that
 * keeps to its own stripes pays nothing after the first access.
 *
 * Clients are 64-bit ids, never 0 (0 means "nobody").  A stripe remembers
 * its writer and up to NS_SL_MAX_READERS readers; more readers set
 * `crowded`, which counts as "someone else reads it" for every client, so
 * the rule errs towards charging a revoke rather than missing one.
 */
#ifndef NETSTORE_STRIPELOCK_H
#define NETSTORE_STRIPELOCK_H

#include <stdint.h>

#define NS_SL_MAX_READERS 4
/* round trips a callback costs the client that caused it */
#define NS_SL_REVOKE_RTT 2

typedef struct {
    uint64_t writer;                       /* client holding the write lock, 0: none */
    uint64_t readers[NS_SL_MAX_READERS];   /* read lock holders; 0 = free slot */
    uint32_t crowded;                      /* 1: more readers than slots */
} ns_sl_state_t;

/* Invariants ns_sl_verify() checks: a write lock excludes read locks
 * (readers empty and not crowded while writer != 0); no reader id twice;
 * crowded only with every reader slot taken.  Returns 1 when they hold. */
int ns_sl_verify(const ns_sl_state_t *s);

/* One access of `client` (!= 0) to a stripe in state *s: the round trips
 * it must wait for before its data moves (0 or NS_SL_REVOKE_RTT); the
 * state after the access in *next_p (may alias s).
 *   write: anyone else holding the stripe is called back; client becomes
 *          the only (write) holder.
 *   read:  a write lock of another client is called back and demoted to a
 *          read lock, client joins the readers; read locks share freely. */
int ns_sl_access(const ns_sl_state_t *s, uint64_t client, int is_write, ns_sl_state_t *next_p);

/* The stripes [*first_p, *first_p + *count_p) that bytes
 * [offset, offset + len) touch, stripe_size > 0; count 0 for len 0. */
void ns_sl_stripes(uint64_t offset, uint64_t len, uint64_t stripe_size, uint64_t *first_p,
                   uint64_t *count_p);

#endif
