/*
 * sfio_coordplan: provider choice and host placement of the coordination
 * service (see header).
 */
#include "sfio_coordplan.h"

#include <errno.h>
#include <string.h>

/* The first part of a layered name ("tcp" of "tcp;ofi_rxm") equals core. */
static bool core_is(const char *name, const char *core)
{
    size_t n = strlen(core);
    return 0 == strncmp(name, core, n) && (';' == name[n] || '\0' == name[n]);
}

bool mca_common_sfio_coordplan_node_local(const char *name)
{
    return NULL != name && (core_is(name, "shm") || core_is(name, "sm2"));
}

bool mca_common_sfio_coordplan_software(const char *name)
{
    if (NULL == name) {
        return false;
    }
    static const char *const cores[] = { "tcp", "sockets", "udp", "net", "shm", "sm2",
                                         "rxm", "rxd", "ofi_rxm", "ofi_rxd" };
    for (size_t i = 0; i < sizeof(cores) / sizeof(cores[0]); ++i) {
        if (core_is(name, cores[i])) {
            return true;
        }
    }
    return false;
}

/* Smaller is better; -1: not usable. */
static int rank_of(const mca_common_sfio_coordplan_prov_t *p, bool one_node)
{
    if (NULL == p->name) {
        return -1;
    }
    if (mca_common_sfio_coordplan_node_local(p->name)) {
        return one_node ? 0 : -1;
    }
    if (!mca_common_sfio_coordplan_software(p->name)) {
        return p->atomics ? 1 : 2;
    }
    if (0 == strcmp(p->name, "tcp;ofi_rxm")) {
        return 3;
    }
    if (0 == strcmp(p->name, "tcp")) {
        return 4;
    }
    return 5;
}

int mca_common_sfio_coordplan_provider(const mca_common_sfio_coordplan_prov_t *provs, int n,
                                       const char *want, bool one_node, int *index_p)
{
    bool automatic = NULL == want || '\0' == want[0] || 0 == strcmp(want, "auto");
    int best = -1, best_rank = 0;
    if (!automatic && mca_common_sfio_coordplan_node_local(want) && !one_node) {
        return -EXDEV;
    }
    for (int i = 0; i < n; ++i) {
        const mca_common_sfio_coordplan_prov_t *p = &provs[i];
        if (!automatic) {
            if (NULL != p->name && (0 == strcmp(p->name, want) || core_is(p->name, want))) {
                *index_p = i;
                return 0;
            }
            continue;
        }
        int r = rank_of(p, one_node);
        if (r >= 0 && (best < 0 || r < best_rank)) {
            best = i;
            best_rank = r;
        }
    }
    if (best < 0) {
        return -ENOENT;
    }
    *index_p = best;
    return 0;
}

int mca_common_sfio_coordplan_host(const int *node_of, int n, int nnodes, uint64_t seed,
                                   int forced)
{
    if (n <= 0 || nnodes <= 0 || NULL == node_of) {
        return -1;
    }
    if (forced >= 0) {
        return forced % n;
    }
    int node = (int) (seed % (uint64_t) nnodes), k = 0;
    for (int r = 0; r < n; ++r) {
        k += node_of[r] == node;
    }
    if (0 == k) {
        return -1;   /* ids not dense */
    }
    int want = (int) ((seed / (uint64_t) nnodes) % (uint64_t) k);
    for (int r = 0; r < n; ++r) {
        if (node_of[r] == node && 0 == want--) {
            return r;
        }
    }
    return -1;
}
