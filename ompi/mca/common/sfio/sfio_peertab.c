/*
 * sfio_peertab: a 64-bit key -> 64-bit value map (see header).
 */
#include <errno.h>
#include <stdlib.h>

#include "sfio_peertab.h"

/* Process names are dense (job id, then rank): mix every bit into the
 * home slot so that consecutive ranks do not form one long run. */
static size_t home(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t) key & (cap - 1);
}

/* The slot holding key, or the empty slot where it would go; cap > 0 and
 * at least one slot empty. */
static size_t probe(const mca_common_sfio_peertab_slot_t *slots, size_t cap, uint64_t key)
{
    size_t i = home(key, cap);
    while (slots[i].used && slots[i].key != key) {
        i = (i + 1) & (cap - 1);
    }
    return i;
}

void mca_common_sfio_peertab_init(mca_common_sfio_peertab_t *t)
{
    t->slots = NULL;
    t->count = t->cap = 0;
}

void mca_common_sfio_peertab_fini(mca_common_sfio_peertab_t *t)
{
    free(t->slots);
    mca_common_sfio_peertab_init(t);
}

bool mca_common_sfio_peertab_find(const mca_common_sfio_peertab_t *t, uint64_t key,
                                  uint64_t *value_p)
{
    if (0 == t->cap) {
        return false;
    }
    size_t i = probe(t->slots, t->cap, key);
    if (!t->slots[i].used) {
        return false;
    }
    *value_p = t->slots[i].value;
    return true;
}

static int grow(mca_common_sfio_peertab_t *t)
{
    size_t cap = 0 == t->cap ? 16 : 2 * t->cap;
    mca_common_sfio_peertab_slot_t *slots = calloc(cap, sizeof(*slots));
    if (NULL == slots) {
        return -ENOMEM;
    }
    for (size_t k = 0; k < t->cap; ++k) {
        if (t->slots[k].used) {
            slots[probe(slots, cap, t->slots[k].key)] = t->slots[k];
        }
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

int mca_common_sfio_peertab_put(mca_common_sfio_peertab_t *t, uint64_t key, uint64_t value)
{
    if (0 != t->cap) {
        size_t i = probe(t->slots, t->cap, key);
        if (t->slots[i].used) {
            t->slots[i].value = value;
            return 0;
        }
    }
    /* at most half full after the insertion: probes stay short */
    if (2 * (t->count + 1) > t->cap && 0 != grow(t)) {
        return -ENOMEM;
    }
    size_t i = probe(t->slots, t->cap, key);
    t->slots[i] = (mca_common_sfio_peertab_slot_t) { .key = key, .value = value, .used = true };
    t->count++;
    return 0;
}

int mca_common_sfio_peertab_verify(const mca_common_sfio_peertab_t *t)
{
    if (0 == t->cap) {
        return NULL == t->slots && 0 == t->count ? 0 : -EINVAL;
    }
    if (NULL == t->slots || 0 != (t->cap & (t->cap - 1)) || 2 * t->count > t->cap) {
        return -EINVAL;
    }
    size_t used = 0;
    for (size_t k = 0; k < t->cap; ++k) {
        if (!t->slots[k].used) {
            continue;
        }
        ++used;
        /* from its home slot to k, no empty slot and no other copy */
        for (size_t i = home(t->slots[k].key, t->cap); i != k; i = (i + 1) & (t->cap - 1)) {
            if (!t->slots[i].used || t->slots[i].key == t->slots[k].key) {
                return -EINVAL;
            }
        }
    }
    return used == t->count ? 0 : -EINVAL;
}
