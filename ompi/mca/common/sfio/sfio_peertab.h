/*
 * sfio_peertab: a map from a 64-bit key to a 64-bit value, for the
 * fabric's table of known processes (key: a process's name, value: its
 * fabric address; sfio_fabric).  Pure module: no MPI, no I/O, no threads
 * (its user locks); unit-tested by test/unit/check_peertab.c.
 *
 * Open addressing with linear probing over a power-of-two array kept at
 * most half full, so a lookup reads a few slots whatever the job size.
 * Entries are only added or replaced; the whole table is dropped at once
 * (_fini), which is all its user needs (addresses die with the endpoint).
 */
#ifndef MCA_COMMON_SFIO_PEERTAB_H
#define MCA_COMMON_SFIO_PEERTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint64_t key, value;
    bool used;
} mca_common_sfio_peertab_slot_t;

typedef struct {
    mca_common_sfio_peertab_slot_t *slots;   /* cap of them, NULL when cap is 0 */
    size_t count, cap;
} mca_common_sfio_peertab_t;

/* An empty table (no allocation). */
void mca_common_sfio_peertab_init(mca_common_sfio_peertab_t *t);
/* Frees the table; it is empty again and may be used on. */
void mca_common_sfio_peertab_fini(mca_common_sfio_peertab_t *t);

/* Whether key is in t; its value in *value_p (set only when it is). */
bool mca_common_sfio_peertab_find(const mca_common_sfio_peertab_t *t, uint64_t key,
                                  uint64_t *value_p);

/* Adds key with value, or replaces its value.  0, or -ENOMEM (t unchanged). */
int mca_common_sfio_peertab_put(mca_common_sfio_peertab_t *t, uint64_t key, uint64_t value);

/* 0 when the invariants hold (power-of-two capacity, at most half full,
 * count matches, every key reachable from its home slot, no key twice);
 * else -EINVAL. */
int mca_common_sfio_peertab_verify(const mca_common_sfio_peertab_t *t);

#ifdef __cplusplus
}
#endif

#endif
