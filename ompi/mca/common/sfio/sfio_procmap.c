/*
 * sfio_procmap: process placement by I/O traffic (see header).  Pure:
 * plain C, malloc and snprintf only.
 */
#include "sfio_procmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef mca_common_sfio_procmap_arch_t arch_t;

/* Larger matrices are refused by the parser: n * n entries are held dense. */
#define MAX_RANKS 8192

/* ------------------------------------------------------------------ */
/* Architecture                                                        */

int mca_common_sfio_procmap_arch_build(int nnodes, const int *slots, int packages, double c_pkg,
                                       double c_node, double c_net, arch_t *arch_p)
{
    if (nnodes < 1 || NULL == slots || !(c_pkg >= 0 && c_node >= 0 && c_net >= 0)) {
        return -EINVAL;
    }
    long total = 0;
    for (int x = 0; x < nnodes; ++x) {
        if (slots[x] < 1) {
            return -EINVAL;
        }
        total += slots[x];
        if (total > MAX_RANKS) {
            return -EINVAL;
        }
    }
    int ns = (int) total;
    arch_t a = { ns, nnodes, NULL, NULL, NULL, NULL };
    a.node = malloc((size_t) ns * sizeof(int));
    a.slot_in_node = malloc((size_t) ns * sizeof(int));
    a.package = malloc((size_t) ns * sizeof(int));
    a.cost = malloc((size_t) ns * (size_t) ns * sizeof(double));
    if (NULL == a.node || NULL == a.slot_in_node || NULL == a.package || NULL == a.cost) {
        mca_common_sfio_procmap_arch_free(&a);
        return -ENOMEM;
    }
    int s = 0;
    for (int x = 0; x < nnodes; ++x) {
        int np = packages < 1 ? 1 : packages > slots[x] ? slots[x] : packages;
        for (int k = 0; k < slots[x]; ++k, ++s) {
            a.node[s] = x;
            a.slot_in_node[s] = k;
            a.package[s] = (int) ((long) k * np / slots[x]);
        }
    }
    for (int i = 0; i < ns; ++i) {
        for (int j = 0; j < ns; ++j) {
            double c = i == j ? 0.0
                       : a.node[i] != a.node[j] ? c_net
                       : a.package[i] != a.package[j] ? c_node
                       : c_pkg;
            a.cost[(size_t) i * ns + j] = c;
        }
    }
    *arch_p = a;
    return 0;
}

void mca_common_sfio_procmap_arch_free(arch_t *arch)
{
    if (NULL == arch) {
        return;
    }
    free(arch->node);
    free(arch->slot_in_node);
    free(arch->package);
    free(arch->cost);
    memset(arch, 0, sizeof(*arch));
}

int mca_common_sfio_procmap_arch_verify(const arch_t *a)
{
    if (NULL == a || a->nslots < 1 || a->nnodes < 1 || NULL == a->node || NULL == a->cost) {
        return -1;
    }
    int ns = a->nslots;
    char *seen = calloc((size_t) a->nnodes, 1);
    if (NULL == seen) {
        return -1;
    }
    int ok = 1, nseen = 0;
    for (int s = 0; s < ns && ok; ++s) {
        int x = a->node[s];
        /* slots of a node are contiguous, nodes in order (the mappings
         * walk a node's slots as a range) */
        ok = x >= 0 && x < a->nnodes && (x == nseen || (s > 0 && x == a->node[s - 1]));
        if (ok && !seen[x]) {
            seen[x] = 1;
            nseen++;
        }
        for (int t = 0; t < ns && ok; ++t) {
            double c = a->cost[(size_t) s * ns + t];
            ok = c >= 0 && c == a->cost[(size_t) t * ns + s] && (s != t || 0 == c);
        }
    }
    free(seen);
    return ok && nseen == a->nnodes ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* Application matrix                                                  */

void mca_common_sfio_procmap_app_add(uint64_t *app, int n, int src, const uint64_t *sent)
{
    uint64_t *row = app + (size_t) src * n;
    for (int j = 0; j < n; ++j) {
        row[j] = row[j] + sent[j] < row[j] ? UINT64_MAX : row[j] + sent[j];
    }
}

static int find_root(int *parent, int i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

int mca_common_sfio_procmap_app_groups(const uint64_t *app, int n, int *group_p)
{
    int *parent = malloc((size_t) (n > 0 ? n : 1) * sizeof(int));
    if (NULL == parent) {
        return -ENOMEM;
    }
    for (int i = 0; i < n; ++i) {
        parent[i] = i;
    }
    for (int i = 0; i < n; ++i) {
        for (int j = i + 1; j < n; ++j) {
            if (0 != app[(size_t) i * n + j] || 0 != app[(size_t) j * n + i]) {
                int a = find_root(parent, i), b = find_root(parent, j);
                if (a != b) {
                    /* the lower root wins, so a component's root is its lowest rank */
                    parent[a > b ? a : b] = a < b ? a : b;
                }
            }
        }
    }
    /* Number components by their lowest rank: roots appear in rank order. */
    int ng = 0;
    for (int i = 0; i < n; ++i) {
        int r = find_root(parent, i);
        group_p[i] = r == i ? ng++ : group_p[r];
    }
    free(parent);
    return ng;
}

int mca_common_sfio_procmap_app_is_regular(const uint64_t *app, int n)
{
    int *g = malloc((size_t) (n > 0 ? n : 1) * sizeof(int));
    int *size = calloc((size_t) (n > 0 ? n : 1), sizeof(int));
    if (NULL == g || NULL == size) {
        free(g);
        free(size);
        return -ENOMEM;
    }
    int ng = mca_common_sfio_procmap_app_groups(app, n, g);
    int regular = ng >= 2;
    for (int i = 0; i < n && regular; ++i) {
        size[g[i]]++;
    }
    for (int k = 1; k < ng && regular; ++k) {
        regular = size[k] == size[0];
    }
    regular = regular && size[0] >= 2;
    free(g);
    free(size);
    return ng < 0 ? ng : regular;
}

/* ------------------------------------------------------------------ */
/* Mappings and cost                                                   */

int mca_common_sfio_procmap_map_verify(const int *slot_of, int n, int nslots)
{
    if (NULL == slot_of || n < 1 || n > nslots) {
        return -1;
    }
    char *used = calloc((size_t) nslots, 1);
    if (NULL == used) {
        return -1;
    }
    int ok = 1;
    for (int i = 0; i < n && ok; ++i) {
        int s = slot_of[i];
        ok = s >= 0 && s < nslots && !used[s];
        if (ok) {
            used[s] = 1;
        }
    }
    free(used);
    return ok ? 0 : -1;
}

double mca_common_sfio_procmap_cost(const uint64_t *app, int n, const arch_t *arch,
                                    const int *slot_of)
{
    double c = 0;
    int ns = arch->nslots;
    for (int i = 0; i < n; ++i) {
        const double *row = arch->cost + (size_t) slot_of[i] * ns;
        for (int j = 0; j < n; ++j) {
            uint64_t b = app[(size_t) i * n + j];
            if (i != j && 0 != b) {
                c += (double) b * row[slot_of[j]];
            }
        }
    }
    return c;
}

int mca_common_sfio_procmap_map_block(const arch_t *arch, int n, int *slot_of_p)
{
    if (n < 1 || n > arch->nslots) {
        return -EINVAL;
    }
    for (int i = 0; i < n; ++i) {
        slot_of_p[i] = i;
    }
    return 0;
}

int mca_common_sfio_procmap_map_cyclic(const arch_t *arch, int n, int *slot_of_p)
{
    if (n < 1 || n > arch->nslots) {
        return -EINVAL;
    }
    /* next[x]: the next free slot of node x (slots of a node are
     * contiguous and in node order, see _arch_build); end[x] one past. */
    int nn = arch->nnodes;
    int *next = malloc((size_t) nn * 2 * sizeof(int));
    if (NULL == next) {
        return -ENOMEM;
    }
    int *end = next + nn;
    for (int x = 0; x < nn; ++x) {
        next[x] = -1;
    }
    for (int s = 0; s < arch->nslots; ++s) {
        int x = arch->node[s];
        if (next[x] < 0) {
            next[x] = s;
        }
        end[x] = s + 1;
    }
    int x = 0;
    for (int i = 0; i < n; ++i) {
        while (next[x] >= end[x]) {
            x = (x + 1) % nn;
        }
        slot_of_p[i] = next[x]++;
        x = (x + 1) % nn;
    }
    free(next);
    return 0;
}

/* ------------------------------------------------------------------ */
/* MPIPP                                                               */

typedef struct {
    int n, ns;
    const double *w;        /* n * n: app[i][j] + app[j][i], zero diagonal */
    const double *cost;     /* ns * ns */
    int *ent;               /* ns: rank on each slot, -1 empty */
    int *slot_of;           /* n */
} search_t;

static uint64_t rnd_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

/* Change of cost if the occupants of slots s and t swap.  The pair's own
 * term stays (the cost matrix is symmetric), every other rank k sees a
 * move from s to t and b move from t to s. */
static double swap_delta(const search_t *q, int s, int t)
{
    int a = q->ent[s], b = q->ent[t];
    const double *wa = a >= 0 ? q->w + (size_t) a * q->n : NULL;
    const double *wb = b >= 0 ? q->w + (size_t) b * q->n : NULL;
    const double *cs = q->cost + (size_t) s * q->ns, *ct = q->cost + (size_t) t * q->ns;
    double d = 0;
    for (int u = 0; u < q->ns; ++u) {
        int k = q->ent[u];
        if (k < 0 || u == s || u == t) {
            continue;
        }
        double wk = (NULL != wa ? wa[k] : 0) - (NULL != wb ? wb[k] : 0);
        if (0 != wk) {
            d += wk * (ct[u] - cs[u]);
        }
    }
    return d;
}

static void do_swap(search_t *q, int s, int t)
{
    int a = q->ent[s], b = q->ent[t];
    q->ent[s] = b;
    q->ent[t] = a;
    if (a >= 0) {
        q->slot_of[a] = t;
    }
    if (b >= 0) {
        q->slot_of[b] = s;
    }
}

/* Kernighan-Lin passes from the mapping in q until a pass gains more than
 * eps no longer.  Each pass: repeatedly the unlocked swap with the lowest
 * delta (even a positive one: it may open a better one), both slots locked;
 * then the swaps after the best running total are undone.  The cost never
 * rises over a pass.  Returns -ENOMEM or 0. */
static int kl_search(search_t *q, double eps)
{
    int ns = q->ns;
    char *locked = malloc((size_t) ns);
    int *log = malloc((size_t) ns * sizeof(int));
    if (NULL == locked || NULL == log) {
        free(locked);
        free(log);
        return -ENOMEM;
    }
    for (;;) {
        memset(locked, 0, (size_t) ns);
        int nlog = 0, best_at = 0;
        double run = 0, best = 0;
        for (;;) {
            int bs = -1, bt = -1;
            double bd = 0;
            for (int s = 0; s < ns; ++s) {
                if (locked[s]) {
                    continue;
                }
                for (int t = s + 1; t < ns; ++t) {
                    if (locked[t] || (q->ent[s] < 0 && q->ent[t] < 0)) {
                        continue;
                    }
                    double d = swap_delta(q, s, t);
                    if (bs < 0 || d < bd) {
                        bs = s;
                        bt = t;
                        bd = d;
                    }
                }
            }
            if (bs < 0) {
                break;
            }
            do_swap(q, bs, bt);
            locked[bs] = locked[bt] = 1;
            log[nlog++] = bs;
            log[nlog++] = bt;
            run += bd;
            if (run < best - eps) {
                best = run;
                best_at = nlog;
            }
        }
        while (nlog > best_at) {
            nlog -= 2;
            do_swap(q, log[nlog], log[nlog + 1]);
        }
        if (0 == best_at) {
            break;
        }
    }
    free(locked);
    free(log);
    return 0;
}

int mca_common_sfio_procmap_mpipp(const uint64_t *app, int n, const arch_t *arch,
                                  const int *start, int nstarts, uint64_t seed, int *slot_of_p,
                                  double *cost_p)
{
    if (n < 1 || NULL == arch || n > arch->nslots || nstarts < 1 ||
        (NULL != start && 0 != mca_common_sfio_procmap_map_verify(start, n, arch->nslots))) {
        return -EINVAL;
    }
    int ns = arch->nslots, rc = 0;
    double *w = malloc((size_t) n * n * sizeof(double));
    int *ent = malloc((size_t) ns * sizeof(int));
    int *cur = malloc((size_t) n * sizeof(int));
    int *perm = malloc((size_t) ns * sizeof(int));
    if (NULL == w || NULL == ent || NULL == cur || NULL == perm) {
        rc = -ENOMEM;
        goto out;
    }
    double total = 0, cmax = 0;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            double v = i == j ? 0
                       : (double) app[(size_t) i * n + j] + (double) app[(size_t) j * n + i];
            w[(size_t) i * n + j] = v;
            total += v;
        }
    }
    for (size_t k = 0; k < (size_t) ns * ns; ++k) {
        cmax = arch->cost[k] > cmax ? arch->cost[k] : cmax;
    }
    /* Gains below this are rounding noise: stops passes from cycling. */
    double eps = 1e-12 * total * cmax;
    uint64_t rs = 0 != seed ? seed : 0x9e3779b97f4a7c15ull;
    double best = -1;
    search_t q = { n, ns, w, arch->cost, ent, cur };
    for (int k = 0; k < nstarts; ++k) {
        if (0 == k) {
            for (int i = 0; i < n; ++i) {
                cur[i] = NULL != start ? start[i] : i;
            }
        } else {
            for (int s = 0; s < ns; ++s) {
                perm[s] = s;
            }
            for (int s = ns - 1; s > 0; --s) {
                int r = (int) (rnd_next(&rs) % (uint64_t) (s + 1));
                int tmp = perm[s];
                perm[s] = perm[r];
                perm[r] = tmp;
            }
            memcpy(cur, perm, (size_t) n * sizeof(int));
        }
        for (int s = 0; s < ns; ++s) {
            ent[s] = -1;
        }
        for (int i = 0; i < n; ++i) {
            ent[cur[i]] = i;
        }
        if (0 != (rc = kl_search(&q, eps))) {
            goto out;
        }
        double c = mca_common_sfio_procmap_cost(app, n, arch, cur);
        if (best < 0 || c < best) {
            best = c;
            memcpy(slot_of_p, cur, (size_t) n * sizeof(int));
        }
    }
    if (NULL != cost_p) {
        *cost_p = best;
    }
out:
    free(w);
    free(ent);
    free(cur);
    free(perm);
    return rc;
}

/* ------------------------------------------------------------------ */
/* SetMatch                                                            */

int mca_common_sfio_procmap_setmatch(const uint64_t *app, int n, const arch_t *arch,
                                     int *slot_of_p)
{
    if (n < 1 || NULL == arch || n > arch->nslots) {
        return -EINVAL;
    }
    int nn = arch->nnodes, ns = arch->nslots, rc = 0;
    int *g = malloc((size_t) n * sizeof(int));
    int *size = calloc((size_t) n, sizeof(int));
    int *order = malloc((size_t) n * sizeof(int));
    int *next = malloc((size_t) nn * 3 * sizeof(int));
    if (NULL == g || NULL == size || NULL == order || NULL == next) {
        rc = -ENOMEM;
        goto out;
    }
    int ng = mca_common_sfio_procmap_app_groups(app, n, g);
    if (ng < 0) {
        rc = ng;
        goto out;
    }
    for (int i = 0; i < n; ++i) {
        size[g[i]]++;
    }
    /* Groups by size, largest first, ties by group id (insertion sort:
     * stable, and ng is at most n). */
    for (int k = 0; k < ng; ++k) {
        int j = k;
        while (j > 0 && size[order[j - 1]] < size[k]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = k;
    }
    /* Free slots of node x: [next[x], end[x]), slots of a node contiguous. */
    int *end = next + nn, *freec = next + 2 * nn;
    for (int x = 0; x < nn; ++x) {
        next[x] = -1;
        end[x] = 0;
    }
    for (int s = 0; s < ns; ++s) {
        int x = arch->node[s];
        if (next[x] < 0) {
            next[x] = s;
        }
        end[x] = s + 1;
    }
    for (int x = 0; x < nn; ++x) {
        freec[x] = end[x] - next[x];
    }
    for (int k = 0; k < ng; ++k) {
        int grp = order[k], need = size[grp];
        /* Best fit: the node with the fewest free slots that holds the
         * whole set; none: split over the emptiest nodes in rank order. */
        int fit = -1;
        for (int x = 0; x < nn; ++x) {
            if (freec[x] >= need && (fit < 0 || freec[x] < freec[fit])) {
                fit = x;
            }
        }
        int x = fit;
        for (int i = 0; i < n; ++i) {
            if (g[i] != grp) {
                continue;
            }
            if (x < 0 || 0 == freec[x]) {
                x = 0;
                for (int y = 1; y < nn; ++y) {
                    x = freec[y] > freec[x] ? y : x;
                }
            }
            slot_of_p[i] = next[x]++;
            freec[x]--;
        }
    }
out:
    free(g);
    free(size);
    free(order);
    free(next);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Matrix file                                                         */

size_t mca_common_sfio_procmap_app_format(const uint64_t *app, int n, char *buf, size_t cap)
{
    size_t len = 0;
    char tmp[96];
    for (long k = -1; k < (long) n * n; ++k) {
        int m;
        if (k < 0) {
            m = snprintf(tmp, sizeof(tmp), "sfio-appmatrix 1 %d\n", n);
        } else if (0 != app[k]) {
            m = snprintf(tmp, sizeof(tmp), "%ld %ld %llu\n", k / n, k % n,
                         (unsigned long long) app[k]);
        } else {
            continue;
        }
        if (len + 1 < cap) {
            size_t room = cap - 1 - len;
            memcpy(buf + len, tmp, (size_t) m < room ? (size_t) m : room);
        }
        len += (size_t) m;
    }
    if (cap > 0) {
        buf[len < cap ? len : cap - 1] = '\0';
    }
    return len;
}

/* Reads one unsigned decimal at *p (after blanks); 0 or -1. */
static int read_u64(const char **p, uint64_t *v)
{
    const char *s = *p;
    while (' ' == *s || '\t' == *s) {
        s++;
    }
    if (*s < '0' || *s > '9') {
        return -1;
    }
    uint64_t x = 0;
    for (; *s >= '0' && *s <= '9'; ++s) {
        uint64_t d = (uint64_t) (*s - '0');
        if (x > (UINT64_MAX - d) / 10) {
            return -1;
        }
        x = x * 10 + d;
    }
    *p = s;
    *v = x;
    return 0;
}

static int rest_blank(const char *s)
{
    while (' ' == *s || '\t' == *s || '\r' == *s) {
        s++;
    }
    return '\n' == *s || '\0' == *s;
}

int mca_common_sfio_procmap_app_parse(const char *text, int *n_p, uint64_t **app_p, int *line_p)
{
    static const char magic[] = "sfio-appmatrix";
    uint64_t *app = NULL;
    int n = -1, line = 0;
    const char *p = text;
    while (NULL != p && '\0' != *p) {
        line++;
        const char *eol = strchr(p, '\n');
        const char *s = p;
        p = NULL != eol ? eol + 1 : NULL;
        while (' ' == *s || '\t' == *s) {
            s++;
        }
        if ('#' == *s || rest_blank(s)) {
            continue;
        }
        uint64_t a, b, v;
        if (n < 0) {
            if (0 != strncmp(s, magic, sizeof(magic) - 1)) {
                goto bad;
            }
            s += sizeof(magic) - 1;
            if (0 != read_u64(&s, &a) || 1 != a || 0 != read_u64(&s, &b) || b < 1 ||
                b > MAX_RANKS || !rest_blank(s)) {
                goto bad;
            }
            n = (int) b;
            app = calloc((size_t) n * n, sizeof(uint64_t));
            if (NULL == app) {
                return -ENOMEM;
            }
            continue;
        }
        if (0 != read_u64(&s, &a) || 0 != read_u64(&s, &b) || 0 != read_u64(&s, &v) ||
            !rest_blank(s) || a >= (uint64_t) n || b >= (uint64_t) n) {
            goto bad;
        }
        uint64_t *e = &app[a * (uint64_t) n + b];
        *e = *e + v < *e ? UINT64_MAX : *e + v;
    }
    if (n < 0) {
        line++;
        goto bad;
    }
    *n_p = n;
    *app_p = app;
    return 0;
bad:
    free(app);
    if (NULL != line_p) {
        *line_p = line;
    }
    return -EINVAL;
}
