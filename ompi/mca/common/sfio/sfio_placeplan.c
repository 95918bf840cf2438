/*
 * sfio_placeplan: aggregator placement over nodes and packages (see
 * header).  Pure: plain C and malloc only.
 */
#include "sfio_placeplan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef mca_common_sfio_place_topo_t topo_t;

static int pkg_of(const topo_t *t, int r)
{
    return NULL != t->package ? t->package[r] : 0;
}

int mca_common_sfio_place_topo_verify(const topo_t *t)
{
    if (NULL == t || t->n < 1 || t->nnodes < 1 || t->nnodes > t->n || NULL == t->node) {
        return -1;
    }
    char *seen = calloc((size_t) t->nnodes, 1);
    if (NULL == seen) {
        return -1;
    }
    int ok = 1, nseen = 0;
    for (int r = 0; r < t->n && ok; ++r) {
        int x = t->node[r];
        ok = x >= 0 && x < t->nnodes && pkg_of(t, r) >= 0;
        if (ok && !seen[x]) {
            seen[x] = 1;
            nseen++;
        }
    }
    free(seen);
    return ok && nseen == t->nnodes ? 0 : -1;
}

typedef struct {
    uint64_t key;
    int rank;
} keyed_t;

static int keyed_cmp(const void *a, const void *b)
{
    const keyed_t *x = a, *y = b;
    if (x->key != y->key) {
        return x->key < y->key ? -1 : 1;
    }
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int mca_common_sfio_place_dense(const uint64_t *key, int n, int *id_p)
{
    keyed_t *k = malloc((size_t) (n > 0 ? n : 1) * sizeof(*k));
    int *leader = malloc((size_t) (n > 0 ? n : 1) * sizeof(int));
    if (NULL == k || NULL == leader) {
        free(k);
        free(leader);
        return -ENOMEM;
    }
    for (int r = 0; r < n; ++r) {
        k[r].key = key[r];
        k[r].rank = r;
    }
    qsort(k, (size_t) n, sizeof(*k), keyed_cmp);
    /* The lowest rank of each key leads it; leaders are met in rank order
     * below, so ids follow first appearance. */
    for (int i = 0, first = 0; i < n; ++i) {
        if (i > 0 && k[i].key != k[i - 1].key) {
            first = i;
        }
        leader[k[i].rank] = k[first].rank;
    }
    int next = 0;
    for (int r = 0; r < n; ++r) {
        id_p[r] = leader[r] == r ? next++ : id_p[leader[r]];
    }
    free(k);
    free(leader);
    return next;
}

int mca_common_sfio_place_emulate(const char *spec, int n, int *node_p, int *nnodes_p)
{
    if (NULL == spec || '\0' == spec[0]) {
        return 0;
    }
    int cyclic;
    const char *num;
    if (0 == strncmp(spec, "block:", 6)) {
        cyclic = 0;
        num = spec + 6;
    } else if (0 == strncmp(spec, "cyclic:", 7)) {
        cyclic = 1;
        num = spec + 7;
    } else {
        return -EINVAL;
    }
    char *end = NULL;
    long N = strtol(num, &end, 10);
    if (end == num || '\0' != *end || N < 1 || n < 1) {
        return -EINVAL;
    }
    N = N > n ? n : N;
    for (int r = 0; r < n; ++r) {
        node_p[r] = cyclic ? (int) (r % N) : (int) ((long long) r * N / n);
    }
    *nnodes_p = (int) N;
    return 1;
}

typedef struct {
    int cap, idx, got;
} bin_t;

/* Gives count items to b[0..nb) as evenly as capacities allow: every bin
 * gets min(cap, L) for the largest level L that fits, and the remainder
 * goes one each to the first bins (in array order) that can still take
 * one.  sum(cap) >= count. */
static void fill_even(int count, int nb, bin_t *b)
{
    int lo = 0, hi = 0;
    for (int i = 0; i < nb; ++i) {
        hi = b[i].cap > hi ? b[i].cap : hi;
    }
    while (lo < hi) {           /* largest L with sum min(cap, L) <= count */
        int mid = lo + (hi - lo + 1) / 2;
        long long s = 0;
        for (int i = 0; i < nb; ++i) {
            s += b[i].cap < mid ? b[i].cap : mid;
        }
        if (s <= count) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    int left = count;
    for (int i = 0; i < nb; ++i) {
        b[i].got = b[i].cap < lo ? b[i].cap : lo;
        left -= b[i].got;
    }
    for (int i = 0; i < nb && left > 0; ++i) {
        if (b[i].got < b[i].cap) {
            b[i].got++;
            left--;
        }
    }
}

typedef struct {
    int node, pkg, rank;
} loc_t;

static int loc_cmp(const void *a, const void *b)
{
    const loc_t *x = a, *y = b;
    if (x->node != y->node) {
        return x->node < y->node ? -1 : 1;
    }
    if (x->pkg != y->pkg) {
        return x->pkg < y->pkg ? -1 : 1;
    }
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *) a, y = *(const int *) b;
    return (x > y) - (x < y);
}

/* Preference among bins: more ranks first (they likely hold more of the
 * data), then lower index. */
static int bin_cmp(const void *a, const void *b)
{
    const bin_t *x = a, *y = b;
    if (x->cap != y->cap) {
        return x->cap > y->cap ? -1 : 1;
    }
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* fill_even over cap[nb] in preference order; bins[nb] is scratch. */
static void fill_preferred(int count, int nb, const int *cap, bin_t *bins, int *got_p)
{
    for (int b = 0; b < nb; ++b) {
        bins[b] = (bin_t) { cap[b], b, 0 };
    }
    qsort(bins, (size_t) nb, sizeof(*bins), bin_cmp);
    fill_even(count, nb, bins);
    for (int i = 0; i < nb; ++i) {
        got_p[bins[i].idx] = bins[i].got;
    }
}

int mca_common_sfio_place_spread(const topo_t *t, int naggr, int *aggr_p)
{
    int n = t->n, nn = t->nnodes;
    naggr = naggr < 1 ? 1 : (naggr > n ? n : naggr);
    loc_t *loc = malloc((size_t) n * sizeof(*loc));
    /* node caps and counts, then one node's package caps and counts */
    int *w = malloc(((size_t) 2 * nn + 2 * (size_t) n) * sizeof(int));
    bin_t *bins = malloc((size_t) n * sizeof(*bins));
    if (NULL == loc || NULL == w || NULL == bins) {
        free(loc);
        free(w);
        free(bins);
        return -ENOMEM;
    }
    int *ncap = w, *ngot = w + nn, *pcap = w + 2 * nn, *pgot = pcap + n;
    memset(ncap, 0, (size_t) nn * sizeof(int));
    for (int r = 0; r < n; ++r) {
        loc[r] = (loc_t) { t->node[r], pkg_of(t, r), r };
        ncap[t->node[r]]++;
    }
    qsort(loc, (size_t) n, sizeof(*loc), loc_cmp);
    fill_preferred(naggr, nn, ncap, bins, ngot);

    int out = 0;
    for (int i = 0; i < n;) {               /* one node: loc[i .. j) */
        int x = loc[i].node, j = i, np = 0;
        while (j < n && loc[j].node == x) {
            if (j == i || loc[j].pkg != loc[j - 1].pkg) {
                pcap[np++] = 0;
            }
            pcap[np - 1]++;
            j++;
        }
        fill_preferred(ngot[x], np, pcap, bins, pgot);
        /* each package's picks spread evenly over its ranks (rank order) */
        for (int b = 0, at = i; b < np; at += pcap[b], ++b) {
            for (int s = 0; s < pgot[b]; ++s) {
                aggr_p[out++] = loc[at + (int) ((long long) s * pcap[b] / pgot[b])].rank;
            }
        }
        i = j;
    }
    qsort(aggr_p, (size_t) out, sizeof(int), int_cmp);
    free(loc);
    free(w);
    free(bins);
    return out;
}

typedef struct {
    int spread, group;      /* nodes the group's members cover; its index */
} gorder_t;

static int gorder_cmp(const void *a, const void *b)
{
    const gorder_t *x = a, *y = b;
    if (x->spread != y->spread) {
        return x->spread < y->spread ? -1 : 1;
    }
    return (x->group > y->group) - (x->group < y->group);
}

int mca_common_sfio_place_groups(const topo_t *t, const int *group_of, int ngroups,
                                 const int *preferred, int *aggr_p)
{
    int n = t->n, nn = t->nnodes, rc = 0;
    if (ngroups < 1) {
        return 0;
    }
    uint64_t *key = malloc((size_t) n * sizeof(uint64_t));
    int *slot = malloc((size_t) n * sizeof(int));
    int *first = calloc((size_t) ngroups + 1, sizeof(int));
    int *member = malloc((size_t) n * sizeof(int));
    int *nload = calloc((size_t) nn, sizeof(int));
    int *sload = calloc((size_t) n, sizeof(int));
    int *stamp = malloc((size_t) nn * sizeof(int));
    int *at = malloc((size_t) ngroups * sizeof(int));
    gorder_t *ord = malloc((size_t) ngroups * sizeof(*ord));
    if (!key || !slot || !first || !member || !nload || !sload || !stamp || !at || !ord) {
        rc = -ENOMEM;
        goto out;
    }
    for (int r = 0; r < n; ++r) {
        if (group_of[r] < 0 || group_of[r] >= ngroups) {
            rc = -EINVAL;
            goto out;
        }
        /* a package is only a package of its node */
        key[r] = ((uint64_t) (uint32_t) t->node[r] << 32) | (uint32_t) pkg_of(t, r);
        first[group_of[r] + 1]++;
    }
    if (mca_common_sfio_place_dense(key, n, slot) < 0) {
        rc = -ENOMEM;
        goto out;
    }
    for (int g = 0; g < ngroups; ++g) {
        if (0 == first[g + 1]) {
            rc = -EINVAL;
            goto out;
        }
        first[g + 1] += first[g];
    }
    memcpy(at, first, (size_t) ngroups * sizeof(int));
    for (int r = 0; r < n; ++r) {
        member[at[group_of[r]]++] = r;          /* ascending ranks per group */
    }
    /* Groups that reach fewer nodes choose first: the others can still
     * go around the nodes they filled. */
    for (int x = 0; x < nn; ++x) {
        stamp[x] = -1;
    }
    for (int g = 0; g < ngroups; ++g) {
        int spread = 0;
        for (int i = first[g]; i < first[g + 1]; ++i) {
            int x = t->node[member[i]];
            if (stamp[x] != g) {
                stamp[x] = g;
                spread++;
            }
        }
        ord[g] = (gorder_t) { spread, g };
    }
    qsort(ord, (size_t) ngroups, sizeof(*ord), gorder_cmp);
    for (int o = 0; o < ngroups; ++o) {
        int g = ord[o].group, best = -1;
        int pref = NULL != preferred ? preferred[g] : -1;
        for (int i = first[g]; i < first[g + 1]; ++i) {
            int r = member[i];
            if (best < 0) {
                best = r;
                continue;
            }
            /* least-loaded node, then package, then the preferred member,
             * then the lowest rank (members are met in rank order) */
            int dn = nload[t->node[r]] - nload[t->node[best]];
            int ds = sload[slot[r]] - sload[slot[best]];
            if (dn < 0 || (0 == dn && (ds < 0 || (0 == ds && r == pref)))) {
                best = r;
            }
        }
        aggr_p[g] = best;
        nload[t->node[best]]++;
        sload[slot[best]]++;
    }
out:
    free(key);
    free(slot);
    free(first);
    free(member);
    free(nload);
    free(sload);
    free(stamp);
    free(at);
    free(ord);
    return rc;
}

void mca_common_sfio_place_per_node(const topo_t *t, const int *aggr, int naggr, int *per_node_p)
{
    memset(per_node_p, 0, (size_t) t->nnodes * sizeof(int));
    for (int a = 0; a < naggr; ++a) {
        per_node_p[t->node[aggr[a]]]++;
    }
}

int mca_common_sfio_place_cpu_cap(const mca_common_sfio_place_topo_t *t, int per_cpu)
{
    if (per_cpu <= 0 || NULL == t->node_cpus || t->nnodes <= 0) {
        return t->n;
    }
    int *ranks = calloc((size_t) t->nnodes, sizeof(int));
    if (NULL == ranks) {
        return t->n;
    }
    for (int q = 0; q < t->n; ++q) {
        ranks[t->node[q]]++;
    }
    long cap = 0;
    for (int i = 0; i < t->nnodes; ++i) {
        long busy = (long) per_cpu * (t->node_cpus[i] > 0 ? t->node_cpus[i] : 1);
        cap += ranks[i] < busy ? ranks[i] : busy;
    }
    free(ranks);
    return cap < 1 ? 1 : (int) cap;
}
