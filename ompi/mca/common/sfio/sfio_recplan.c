/*
 * sfio_recplan: the recovered published mark (see header).
 */
#include <stdlib.h>

#include "sfio_recplan.h"

static int by_version(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

uint64_t mca_common_sfio_recplan_published(uint64_t folded, uint64_t *versions, size_t n)
{
    uint64_t P = folded;
    if (0 == n) {
        return P;
    }
    qsort(versions, n, sizeof(*versions), by_version);
    for (size_t i = 0; i < n && P < UINT64_MAX; ++i) {
        if (versions[i] <= P) {
            continue;   /* folded already, or a repeat */
        }
        if (versions[i] != P + 1) {
            break;      /* P + 1 has no whole record */
        }
        P = versions[i];
    }
    return P;
}
