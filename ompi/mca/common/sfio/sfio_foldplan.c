/*
 * sfio_foldplan: balanced write-back of a fold (see sfio_foldplan.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "sfio_foldplan.h"

int mca_common_sfio_foldplan_balance(const int *owner, const uint64_t *length, size_t n,
                                     int nranks, int *writer, uint64_t *load_out)
{
    if (nranks < 1) {
        return -EINVAL;
    }
    for (size_t i = 0; i < n; ++i) {
        if (owner[i] < 0 || owner[i] >= nranks) {
            return -EINVAL;
        }
    }
    uint64_t *load = calloc((size_t) nranks, sizeof(*load));
    size_t *count = calloc((size_t) nranks + 1, sizeof(*count));   /* then: list starts */
    size_t *tail = calloc((size_t) nranks, sizeof(*tail));
    size_t *list = malloc((n ? n : 1) * sizeof(*list));
    if (!load || !count || !tail || !list) {
        free(load); free(count); free(tail); free(list);
        return -ENOMEM;
    }
    /* Each owner's pieces in file order: list[count[r] .. count[r+1]). */
    for (size_t i = 0; i < n; ++i) {
        writer[i] = owner[i];
        load[owner[i]] += length[i];
        count[owner[i] + 1]++;
    }
    for (int r = 0; r < nranks; ++r) {
        count[r + 1] += count[r];
        tail[r] = count[r];
    }
    for (size_t i = 0; i < n; ++i) {
        list[tail[owner[i]]++] = i;
    }
    /* tail[r]: end of r's pieces still written by r. */
    for (size_t moves = 0; moves < n; ++moves) {
        int hi = 0, lo = 0;
        for (int r = 1; r < nranks; ++r) {
            if (load[r] > load[hi]) hi = r;
            if (load[r] < load[lo]) lo = r;
        }
        if (hi == lo || tail[hi] == count[hi]) {
            break;   /* even, or the busiest rank only carries moved pieces */
        }
        size_t p = list[tail[hi] - 1];
        uint64_t len = length[p], cost = MCA_COMMON_SFIO_FOLDPLAN_HELPER_COST * len;
        if (load[lo] + cost >= load[hi]) {
            break;   /* moving it would not lower the busiest load */
        }
        writer[p] = lo;
        load[hi] -= len;
        load[lo] += cost;
        tail[hi]--;
    }
    if (load_out) {
        for (int r = 0; r < nranks; ++r) load_out[r] = load[r];
    }
    free(load);
    free(count);
    free(tail);
    free(list);
    return 0;
}
