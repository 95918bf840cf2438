/*
 * sfio_lockq: the state machine of a list-lock manager (list locks,
 * Aarestad, Ching et al.): one per file, hosted by whichever service owns
 * the file's lock table.  Pure module: no MPI, no I/O, no threads; the
 * host serializes calls and sends the grants it returns.
 *
 * A client asks for a whole lock list at once: byte ranges sorted
 * ascending, each shared (reads in atomic mode) or exclusive (writes).
 * Guarantees, for any order of calls:
 *  - all or nothing: a list is granted whole, in one grant, or not at all;
 *  - safety: two held lists never conflict (they conflict when a range of
 *    one overlaps a range of the other and either range is exclusive);
 *  - FIFO between conflicting lists, with bounded overtaking: a list
 *    waits while a held list conflicts with it, and while a list that
 *    arrived earlier and is still queued conflicts with it, unless every
 *    such earlier list has been overtaken fewer than max_overtakes times
 *    (then it is granted ahead of them, and each of them counts one more
 *    overtaking).  With max_overtakes 0 this is strict FIFO.  Lists that
 *    conflict with nothing are granted at once.  No list starves: it can
 *    be overtaken at most max_overtakes times, and after that only lists
 *    ahead of it can block it, of which there are finitely many.
 *    Overtaking lets a chain of lists that each conflict only with their
 *    neighbours (tiles in a row) be granted in two rounds instead of one
 *    list at a time;
 *  - no deadlock: a client holds nothing while it waits for a list, as
 *    long as it waits for one list at a time (a client that waits for a
 *    second list while holding a conflicting first one waits for itself;
 *    lists of one client are not special);
 *  - a dead client's lists go: drop_client releases what it holds and
 *    withdraws what it queued, and grants what that unblocks.
 *
 * How: each queued list counts the held lists that conflict with it and
 * the earlier queued lists that conflict with it.  Granting a list moves
 * it from the queued count to the held count of the later lists it
 * conflicts with (and adds it to the held count of the earlier ones it
 * overtakes); releasing a held list decrements the held count of every
 * list it conflicts with; withdrawing a queued list decrements the queued
 * count of the later ones.  Only lists whose counts went down in a call
 * can have become grantable; they are examined in arrival order.  All
 * ranges of live lists sit in one interval tree (a treap ordered by
 * offset, augmented with the largest end in each subtree), so an event
 * costs O(m log n + k) for m ranges of a list, n live ranges and k
 * overlapping ones, with no edge lists.
 *
 * Memory: the queue owns copies of every live list; everything a call
 * needs is allocated before the call changes anything, so a failed call
 * leaves the queue as it was.  Limits bound the clients and, per client,
 * the live lists and their ranges.
 */
#ifndef MCA_COMMON_SFIO_LOCKQ_H
#define MCA_COMMON_SFIO_LOCKQ_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    MCA_COMMON_SFIO_LOCKQ_SHARED = 0,
    MCA_COMMON_SFIO_LOCKQ_EXCLUSIVE = 1
} mca_common_sfio_lockq_mode_t;

/* One range of a lock list: [offset, offset + length), length > 0,
 * offset + length <= UINT64_MAX; mode is a mca_common_sfio_lockq_mode_t. */
typedef struct mca_common_sfio_lockq_range_t {
    uint64_t offset;
    uint64_t length;
    uint32_t mode;
} mca_common_sfio_lockq_range_t;

/* A lock list as a client asks for it.  ranges: ascending, pairwise
 * disjoint (they may touch); a byte both read and written is locked
 * exclusive by the client.  An empty list conflicts with nothing.  (client,
 * request) names the list until it is released. */
typedef struct mca_common_sfio_lockq_request_t {
    uint64_t client;
    uint64_t request;
    const mca_common_sfio_lockq_range_t *ranges;
    size_t nranges;
} mca_common_sfio_lockq_request_t;

/* A grant: the list (client, request) is held from now on. */
typedef struct mca_common_sfio_lockq_grant_t {
    uint64_t client;
    uint64_t request;
} mca_common_sfio_lockq_grant_t;

/* Grants issued by one call, in arrival order of their lists.  Owned by
 * the caller (init / destroy); each call appends, the caller clears
 * (count = 0) when it has sent them. */
typedef struct mca_common_sfio_lockq_grants_t {
    mca_common_sfio_lockq_grant_t *grants;
    size_t count;
    size_t capacity;
} mca_common_sfio_lockq_grants_t;

/* Bounds on what clients can make the queue hold (the first three must be
 * > 0) and on how often a queued list may be overtaken (0: strict FIFO). */
typedef struct mca_common_sfio_lockq_limits_t {
    size_t max_clients;           /* clients with live lists */
    size_t max_lists_per_client;  /* live (held or queued) lists */
    size_t max_ranges_per_client; /* ranges over a client's live lists */
    size_t max_overtakes;         /* later lists granted ahead of a queued one */
} mca_common_sfio_lockq_limits_t;

typedef enum {
    MCA_COMMON_SFIO_LOCKQ_QUEUED = 1,
    MCA_COMMON_SFIO_LOCKQ_HELD = 2
} mca_common_sfio_lockq_state_t;

typedef struct mca_common_sfio_lockq_t mca_common_sfio_lockq_t;  /* private */

void mca_common_sfio_lockq_grants_init(mca_common_sfio_lockq_grants_t *grants);
void mca_common_sfio_lockq_grants_destroy(mca_common_sfio_lockq_grants_t *grants);

/* A new empty queue in *q_p.  0, -EINVAL (a limit is 0) or -ENOMEM. */
int mca_common_sfio_lockq_create(const mca_common_sfio_lockq_limits_t *limits,
                                 mca_common_sfio_lockq_t **q_p);

/* Frees the queue and every list in it (NULL: no-op). */
void mca_common_sfio_lockq_destroy(mca_common_sfio_lockq_t *q);

/* Adds a list; appends to grants_p the grant of this list when nothing
 * ahead conflicts with it (otherwise it is queued and granted by a later
 * release or drop).  Returns 0, or with the queue unchanged:
 *  -EINVAL  ranges not ascending and disjoint, empty, bad mode, or wrap;
 *  -EEXIST  (client, request) is already live;
 *  -ENOSPC  a limit would be passed (the client should release first);
 *  -ENOMEM. */
int mca_common_sfio_lockq_submit(mca_common_sfio_lockq_t *q,
                                 const mca_common_sfio_lockq_request_t *request,
                                 mca_common_sfio_lockq_grants_t *grants_p);

/* Releases a held list, or withdraws a queued one; appends the grants
 * that this unblocks.  0, -ENOENT (no such live list) or -ENOMEM (queue
 * unchanged). */
int mca_common_sfio_lockq_release(mca_common_sfio_lockq_t *q, uint64_t client,
                                  uint64_t request, mca_common_sfio_lockq_grants_t *grants_p);

/* A client is gone (dead or detached): releases its held lists, withdraws
 * its queued ones, and appends the grants this unblocks.  A client with no
 * live lists is no error.  0 or -ENOMEM (queue unchanged). */
int mca_common_sfio_lockq_drop_client(mca_common_sfio_lockq_t *q, uint64_t client,
                                      mca_common_sfio_lockq_grants_t *grants_p);

/* The state of a live list: 0 and *state_p, or -ENOENT. */
int mca_common_sfio_lockq_state(const mca_common_sfio_lockq_t *q, uint64_t client,
                                uint64_t request, mca_common_sfio_lockq_state_t *state_p);

/* Live lists held and queued, live ranges and clients; and since the
 * queue was created: grants, grants of lists that had to wait, and
 * overtakings. */
typedef struct mca_common_sfio_lockq_stats_t {
    size_t held;
    size_t queued;
    size_t ranges;
    size_t clients;
    uint64_t granted;
    uint64_t waited;
    uint64_t overtakes;
} mca_common_sfio_lockq_stats_t;
void mca_common_sfio_lockq_stats(const mca_common_sfio_lockq_t *q,
                                 mca_common_sfio_lockq_stats_t *stats_p);

/* Checks every invariant: the interval tree (order, heap, subtree ends),
 * each list's counts against a scan of all live lists, held lists
 * pairwise compatible, no queued list grantable, overtakings within the
 * bound, client counts.  O(n^2)
 * in live lists: for tests.  0 or -EINVAL. */
int mca_common_sfio_lockq_verify(const mca_common_sfio_lockq_t *q);

/* Checks a list as submit does (without limits).  0 or -EINVAL. */
int mca_common_sfio_lockq_ranges_verify(const mca_common_sfio_lockq_range_t *ranges,
                                        size_t nranges);

#endif /* MCA_COMMON_SFIO_LOCKQ_H */
