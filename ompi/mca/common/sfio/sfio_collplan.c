/*
 * sfio_collplan: pure planning of collective I/O (see sfio_collplan.h).
 */
#include "sfio_collplan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const mca_common_sfio_coll_alg_info_t mca_common_sfio_coll_algs[] = {
    { MCA_COMMON_SFIO_COLL_AUTO, "auto",
      "decided per call (sfio_colldecide): independent where the ranks' extents do not "
      "interleave, else Gabriel's decision over c, k, ss and the gap between processes",
      NULL, 0 },
    { MCA_COMMON_SFIO_COLL_INDIVIDUAL, "individual",
      "each rank writes/reads its own data (large chunks, or ranks apart)", NULL, 0 },
    { MCA_COMMON_SFIO_COLL_TWO_PHASE, "two_phase",
      "aggregators own contiguous file domains; every rank sends each its share",
      mca_common_sfio_coll_assign_two_phase,
      MCA_COMMON_SFIO_COLL_F_AGGREGATE | MCA_COMMON_SFIO_COLL_F_DOMAINS |
      MCA_COMMON_SFIO_COLL_F_SERIAL },
    { MCA_COMMON_SFIO_COLL_DYNAMIC, "dynamic",
      "dynamic segmentation: each group's aggregator writes its group's data in "
      "offset order, cycle by cycle",
      mca_common_sfio_coll_assign_dynamic,
      MCA_COMMON_SFIO_COLL_F_AGGREGATE | MCA_COMMON_SFIO_COLL_F_GROUPS |
      MCA_COMMON_SFIO_COLL_F_CUTS },
    { MCA_COMMON_SFIO_COLL_STATIC, "static",
      "static segmentation: each group member gives its aggregator a fixed share of its "
      "data per cycle (views with gaps)",
      mca_common_sfio_coll_assign_static,
      MCA_COMMON_SFIO_COLL_F_AGGREGATE | MCA_COMMON_SFIO_COLL_F_GROUPS },
};

void mca_common_sfio_coll_assign_two_phase(mca_common_sfio_coll_assign_t *st, uint64_t off,
                                           uint64_t len, uint64_t spos, int *aggr_p,
                                           int *cyc_p, uint64_t *take_p)
{
    (void) spos;
    int a = mca_common_sfio_coll_domain_of(st->bounds, st->naggr, off);
    uint64_t dlo = st->bounds[a];
    int c = (int) ((off - dlo) / st->cycle_bytes);
    uint64_t end = dlo + (uint64_t) (c + 1) * st->cycle_bytes;
    if (end > st->bounds[a + 1]) {
        end = st->bounds[a + 1];
    }
    end -= off;     /* bytes left in this (a, c) */
    *aggr_p = a;
    *cyc_p = c;
    *take_p = 0 == end || end > len ? len : end;
}

void mca_common_sfio_coll_assign_dynamic(mca_common_sfio_coll_assign_t *st, uint64_t off,
                                         uint64_t len, uint64_t spos, int *aggr_p, int *cyc_p,
                                         uint64_t *take_p)
{
    (void) spos;
    int c = mca_common_sfio_coll_cycle_of(st->cuts, st->ncyc, off);
    uint64_t end = st->cuts[c + 1] - off;
    *aggr_p = st->group;
    *cyc_p = c;
    *take_p = 0 == end || end > len ? len : end;
}

void mca_common_sfio_coll_assign_static(mca_common_sfio_coll_assign_t *st, uint64_t off,
                                        uint64_t len, uint64_t spos, int *aggr_p, int *cyc_p,
                                        uint64_t *take_p)
{
    (void) off;
    uint64_t gcyc = st->gcyc ? st->gcyc : 1, mine = st->mine;
    while ((uint64_t) st->c_static + 1 < gcyc &&
           (unsigned __int128) spos * gcyc >= (unsigned __int128) (st->c_static + 1) * mine) {
        st->c_static++;
    }
    int c = st->c_static;
    uint64_t next = (uint64_t) (((unsigned __int128) (c + 1) * mine + gcyc - 1) / gcyc);
    uint64_t end = (uint64_t) c + 1 >= gcyc ? len : (next > spos ? next - spos : 1);
    *aggr_p = st->group;
    *cyc_p = c;
    *take_p = 0 == end || end > len ? len : end;
}

int mca_common_sfio_coll_alg_lookup(const char *name)
{
    for (int i = 0; name != NULL && i < MCA_COMMON_SFIO_COLL_NALGS; ++i) {
        if (0 == strcmp(name, mca_common_sfio_coll_algs[i].name)) {
            return i;
        }
    }
    return -1;
}

/* Gabriel's OMPIO decision:
 *   c > k and c > ss           any gap   individual
 *   c <= k and c > ss          no gap    dynamic segmentation
 *   c < k and c <= ss          no gap    two-phase
 *   c < k                      gap       static segmentation  */
const mca_common_sfio_coll_rule_t mca_common_sfio_coll_default_rules[] = {
    { MCA_COMMON_SFIO_CMP_GT, MCA_COMMON_SFIO_CMP_GT, MCA_COMMON_SFIO_GAP_ANY,
      MCA_COMMON_SFIO_DUP_SOME, MCA_COMMON_SFIO_COLL_TWO_PHASE },
    { MCA_COMMON_SFIO_CMP_GT, MCA_COMMON_SFIO_CMP_GT, MCA_COMMON_SFIO_GAP_ANY,
      MCA_COMMON_SFIO_DUP_ANY, MCA_COMMON_SFIO_COLL_INDIVIDUAL },
    { MCA_COMMON_SFIO_CMP_LE, MCA_COMMON_SFIO_CMP_GT, MCA_COMMON_SFIO_GAP_NONE,
      MCA_COMMON_SFIO_DUP_ANY, MCA_COMMON_SFIO_COLL_DYNAMIC },
    { MCA_COMMON_SFIO_CMP_LT, MCA_COMMON_SFIO_CMP_LE, MCA_COMMON_SFIO_GAP_NONE,
      MCA_COMMON_SFIO_DUP_ANY, MCA_COMMON_SFIO_COLL_TWO_PHASE },
    { MCA_COMMON_SFIO_CMP_LT, MCA_COMMON_SFIO_CMP_ANY, MCA_COMMON_SFIO_GAP_SOME,
      MCA_COMMON_SFIO_DUP_ANY, MCA_COMMON_SFIO_COLL_STATIC },
};
const size_t mca_common_sfio_coll_default_nrules =
    sizeof(mca_common_sfio_coll_default_rules) / sizeof(mca_common_sfio_coll_default_rules[0]);

static bool cmp_holds(mca_common_sfio_coll_cmp_t cmp, uint64_t c, uint64_t x)
{
    switch (cmp) {
    case MCA_COMMON_SFIO_CMP_LT: return c < x;
    case MCA_COMMON_SFIO_CMP_LE: return c <= x;
    case MCA_COMMON_SFIO_CMP_GT: return c > x;
    default: return true;
    }
}

int mca_common_sfio_coll_decide(const mca_common_sfio_coll_inputs_t *in,
                                const mca_common_sfio_coll_rule_t *rules, size_t n,
                                int fallback)
{
    for (size_t i = 0; i < n; ++i) {
        const mca_common_sfio_coll_rule_t *r = &rules[i];
        if (!cmp_holds(r->c_k, in->c, in->k) || !cmp_holds(r->c_ss, in->c, in->ss)) {
            continue;
        }
        if ((r->gap == MCA_COMMON_SFIO_GAP_NONE && in->gap) ||
            (r->gap == MCA_COMMON_SFIO_GAP_SOME && !in->gap) ||
            (r->dup == MCA_COMMON_SFIO_DUP_NONE && in->dup) ||
            (r->dup == MCA_COMMON_SFIO_DUP_SOME && !in->dup)) {
            continue;
        }
        return r->alg;
    }
    return fallback;
}

bool mca_common_sfio_coll_reads_alone(const mca_common_sfio_coll_rank_t *r, int n,
                                      uint64_t ratio)
{
    int active = 0;
    if (0 == ratio) {
        return false;
    }
    for (int i = 0; i < n; ++i) {
        if (0 == r[i].bytes) {
            continue;
        }
        active++;
        /* extent > ratio * bytes (which cannot overflow unless it holds) */
        if (r[i].bytes <= UINT64_MAX / ratio && r[i].hi - r[i].lo > ratio * r[i].bytes) {
            return false;
        }
    }
    return active > 0;
}

void mca_common_sfio_coll_summarize(const mca_common_sfio_coll_rank_t *r, int n,
                                    mca_common_sfio_coll_summary_t *s_p)
{
    mca_common_sfio_coll_summary_t s = { UINT64_MAX, 0, 0, 0, 0, false, 0, 0 };
    for (int i = 0; i < n; ++i) {
        if (0 == r[i].bytes) {
            continue;
        }
        s.active++;
        s.lo = r[i].lo < s.lo ? r[i].lo : s.lo;
        s.hi = r[i].hi > s.hi ? r[i].hi : s.hi;
        s.bytes += r[i].bytes;
        s.runs += r[i].runs ? r[i].runs : 1;
    }
    if (0 == s.active) {
        s.lo = s.hi = 0;
    } else {
        s.c = s.bytes / s.runs;
        s.gap = s.bytes < s.hi - s.lo;
        s.dup = s.bytes > s.hi - s.lo ? s.bytes - (s.hi - s.lo) : 0;
    }
    *s_p = s;
}

bool mca_common_sfio_coll_dup_heavy(const mca_common_sfio_coll_summary_t *s)
{
    return s->dup > 0 && s->dup >= s->bytes / MCA_COMMON_SFIO_COLL_DUP_SHARE;
}

uint64_t mca_common_sfio_coll_read_stop(const mca_common_sfio_coll_piece_t *runs, size_t n,
                                        uint64_t got)
{
    uint64_t cum = 0;
    for (size_t r = 0; r < n; ++r) {
        if (got < cum + runs[r].len) {
            return runs[r].off + (got - cum);
        }
        cum += runs[r].len;
    }
    return UINT64_MAX;
}

uint64_t mca_common_sfio_coll_bytes_below(const mca_common_sfio_coll_piece_t *p, size_t n,
                                          uint64_t end)
{
    uint64_t b = 0;
    for (size_t i = 0; i < n; ++i) {
        if (p[i].off < end) {
            b += end - p[i].off < p[i].len ? end - p[i].off : p[i].len;
        }
    }
    return b;
}

size_t mca_common_sfio_coll_clip(mca_common_sfio_coll_piece_t *runs, size_t n, uint64_t end)
{
    size_t k = 0;
    while (k < n && runs[k].off < end) {
        if (end - runs[k].off < runs[k].len) {
            runs[k].len = end - runs[k].off;
        }
        ++k;
    }
    return k;
}

uint64_t mca_common_sfio_coll_queued_cycle(uint64_t cycle_bytes, uint64_t load, int min_cycles,
                                           uint64_t floor)
{
    if (min_cycles <= 1) {
        return cycle_bytes;
    }
    uint64_t want = (load + (uint64_t) min_cycles - 1) / (uint64_t) min_cycles;
    if (want < floor) {
        want = floor;
    }
    return want < cycle_bytes ? want : cycle_bytes;
}

int mca_common_sfio_coll_groups_init(mca_common_sfio_coll_groups_t *g, int n)
{
    g->n = n;
    g->ngroups = 0;
    g->group_of = calloc((size_t) (n > 0 ? n : 1), sizeof(int));
    g->aggr = calloc((size_t) (n > 0 ? n : 1), sizeof(int));
    if (NULL == g->group_of || NULL == g->aggr) {
        mca_common_sfio_coll_groups_free(g);
        return -ENOMEM;
    }
    return 0;
}

void mca_common_sfio_coll_groups_free(mca_common_sfio_coll_groups_t *g)
{
    free(g->group_of);
    free(g->aggr);
    g->group_of = g->aggr = NULL;
    g->ngroups = 0;
}

/* Ranks sorted by (lo, rank) for the extent sweep. */
static const mca_common_sfio_coll_rank_t *sort_ranks;
static int by_lo(const void *a, const void *b)
{
    int x = *(const int *) a, y = *(const int *) b;
    uint64_t lx = sort_ranks[x].lo, ly = sort_ranks[y].lo;
    if (lx != ly) {
        return lx < ly ? -1 : 1;
    }
    return x - y;
}

void mca_common_sfio_coll_groups_initial(const mca_common_sfio_coll_rank_t *r, int cart_rows,
                                         mca_common_sfio_coll_groups_t *g)
{
    int n = g->n;
    if (cart_rows > 0 && cart_rows <= n) {
        mca_common_sfio_coll_groups_even(cart_rows, g);
        return;
    }
    int *order = malloc((size_t) n * sizeof(int));
    int m = 0;
    for (int i = 0; i < n; ++i) {
        g->group_of[i] = -1;
        if (r[i].bytes > 0 && NULL != order) {
            order[m++] = i;
        }
    }
    int ng = 0;
    if (NULL != order) {
        sort_ranks = r;
        qsort(order, (size_t) m, sizeof(int), by_lo);
        uint64_t reach = 0;
        for (int j = 0; j < m; ++j) {
            int q = order[j];
            if (0 == j || r[q].lo >= reach) {
                ng++;
                reach = r[q].hi;
            } else if (r[q].hi > reach) {
                reach = r[q].hi;
            }
            g->group_of[q] = ng - 1;
        }
        free(order);
    } else {
        for (int i = 0; i < n; ++i) {
            if (r[i].bytes > 0) {
                g->group_of[i] = ng++;
            }
        }
    }
    if (0 == ng) {
        ng = 1;
    }
    /* Ranks without bytes ride along with the preceding rank's group. */
    int prev = 0;
    for (int i = 0; i < n; ++i) {
        if (g->group_of[i] < 0) {
            g->group_of[i] = prev;
        }
        prev = g->group_of[i];
    }
    g->ngroups = ng;
    for (int q = n - 1; q >= 0; --q) {
        g->aggr[g->group_of[q]] = q;
    }
}

void mca_common_sfio_coll_groups_even(int naggr, mca_common_sfio_coll_groups_t *g)
{
    int n = g->n;
    naggr = naggr < 1 ? 1 : (naggr > n ? n : naggr);
    for (int a = 0; a < naggr; ++a) {
        int first = (int) ((long long) a * n / naggr);
        int last = (int) ((long long) (a + 1) * n / naggr);
        for (int q = first; q < last; ++q) {
            g->group_of[q] = a;
        }
        g->aggr[a] = first;
    }
    g->ngroups = naggr;
}

void mca_common_sfio_coll_groups_refine(const mca_common_sfio_coll_rank_t *r, uint64_t k,
                                        mca_common_sfio_coll_groups_t *g)
{
    int n = g->n, ng = g->ngroups;
    if (k == 0) {
        k = 1;
    }
    uint64_t *bytes = calloc((size_t) ng, sizeof(uint64_t));
    int *size = calloc((size_t) ng, sizeof(int));
    int *merged = calloc((size_t) ng, sizeof(int));
    int *parts = calloc((size_t) ng, sizeof(int));
    int *seen = calloc((size_t) ng, sizeof(int));
    int *newid = calloc((size_t) ng, sizeof(int));
    if (!bytes || !size || !merged || !parts || !seen || !newid) {
        goto out;   /* keep the initial groups */
    }
    for (int q = 0; q < n; ++q) {
        bytes[g->group_of[q]] += r[q].bytes;
        size[g->group_of[q]]++;
    }
    /* Merge in file order (groups are numbered in file order). */
    int m = 0;
    uint64_t acc = 0;
    int accsize = 0;
    for (int i = 0; i < ng; ++i) {
        if (i > 0 && acc >= k) {
            m++;
            acc = 0;
            accsize = 0;
        }
        merged[i] = m;
        acc += bytes[i];
        accsize += size[i];
    }
    int nm = m + 1;
    /* A small last group joins the one before it. */
    if (nm > 1 && acc < k) {
        for (int i = 0; i < ng; ++i) {
            if (merged[i] == nm - 1) {
                merged[i] = nm - 2;
            }
        }
        nm--;
    }
    memset(bytes, 0, (size_t) ng * sizeof(uint64_t));
    memset(size, 0, (size_t) ng * sizeof(int));
    for (int q = 0; q < n; ++q) {
        int mg = merged[g->group_of[q]];
        bytes[mg] += r[q].bytes;
        size[mg]++;
    }
    /* Split: parts[mg] pieces of consecutive members (in rank order). */
    int total = 0;
    for (int i = 0; i < nm; ++i) {
        uint64_t want = (bytes[i] + k - 1) / k;
        parts[i] = want < 1 ? 1 : (want > (uint64_t) size[i] ? size[i] : (int) want);
        newid[i] = total;
        total += parts[i];
    }
    for (int q = 0; q < n; ++q) {
        int mg = merged[g->group_of[q]];
        int idx = seen[mg]++;
        int part = (int) ((long long) idx * parts[mg] / size[mg]);
        g->group_of[q] = newid[mg] + part;
    }
    g->ngroups = total;
    for (int q = n - 1; q >= 0; --q) {
        g->aggr[g->group_of[q]] = q;
    }
    for (int q = n - 1; q >= 0; --q) {
        if (r[q].bytes > 0) {
            int gq = g->group_of[q];
            int cur = g->aggr[gq];
            if (0 == r[cur].bytes || cur > q) {
                g->aggr[gq] = q;
            }
        }
    }
out:
    free(bytes);
    free(size);
    free(merged);
    free(parts);
    free(seen);
    free(newid);
}

void mca_common_sfio_coll_groups_cap(int cap, mca_common_sfio_coll_groups_t *g)
{
    int ng = g->ngroups;
    if (cap <= 0 || ng <= cap) {
        return;
    }
    int *first = malloc((size_t) cap * sizeof(int));
    if (NULL == first) {
        return;
    }
    for (int i = 0; i < cap; ++i) {
        first[i] = -1;
    }
    for (int i = 0; i < ng; ++i) {
        int m = (int) ((long long) i * cap / ng);
        if (first[m] < 0) {
            first[m] = g->aggr[i];
        }
    }
    for (int q = 0; q < g->n; ++q) {
        g->group_of[q] = (int) ((long long) g->group_of[q] * cap / ng);
    }
    for (int i = 0; i < cap; ++i) {
        g->aggr[i] = first[i];
    }
    g->ngroups = cap;
    free(first);
}

int mca_common_sfio_coll_groups_verify(const mca_common_sfio_coll_groups_t *g)
{
    if (g->ngroups < 1 || g->ngroups > (g->n > 0 ? g->n : 1)) {
        return -1;
    }
    int *count = calloc((size_t) g->ngroups, sizeof(int));
    int rc = 0;
    if (NULL == count) {
        return -1;
    }
    for (int q = 0; q < g->n; ++q) {
        if (g->group_of[q] < 0 || g->group_of[q] >= g->ngroups) {
            rc = -1;
            goto out;
        }
        count[g->group_of[q]]++;
    }
    for (int i = 0; i < g->ngroups; ++i) {
        if (0 == count[i] || g->aggr[i] < 0 || g->aggr[i] >= g->n ||
            g->group_of[g->aggr[i]] != i) {
            rc = -1;
        }
    }
out:
    free(count);
    return rc;
}

void mca_common_sfio_coll_spread(int n, int naggr, int *aggr)
{
    naggr = naggr < 1 ? 1 : (naggr > n ? n : naggr);
    for (int i = 0; i < naggr; ++i) {
        aggr[i] = (int) ((long long) i * n / naggr);
    }
}

void mca_common_sfio_coll_domains(uint64_t lo, uint64_t hi, int naggr, uint64_t align,
                                  uint64_t *bounds)
{
    uint64_t len = hi > lo ? hi - lo : 0;
    uint64_t dom = naggr > 0 ? (len + (uint64_t) naggr - 1) / (uint64_t) naggr : len;
    bounds[0] = lo;
    for (int a = 1; a < naggr; ++a) {
        uint64_t b = lo + dom * (uint64_t) a;
        if (align > 1 && dom >= align) {
            b = (b + align / 2) / align * align;   /* nearest aligned offset */
        }
        if (b < bounds[a - 1]) {
            b = bounds[a - 1];
        }
        if (b > hi) {
            b = hi;
        }
        bounds[a] = b;
    }
    bounds[naggr > 0 ? naggr : 0] = hi > lo ? hi : lo;
}

int mca_common_sfio_coll_domain_of(const uint64_t *bounds, int naggr, uint64_t off)
{
    /* last a with bounds[a] <= off, among a in [0, naggr) */
    int lo = 0, hi = naggr - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (bounds[mid] <= off) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

static int piece_cmp(const void *a, const void *b)
{
    const mca_common_sfio_coll_piece_t *x = a, *y = b;
    if (x->off != y->off) {
        return x->off < y->off ? -1 : 1;
    }
    return x->len < y->len ? -1 : (x->len > y->len);
}

void mca_common_sfio_coll_cuts(mca_common_sfio_coll_piece_t *p, size_t n, uint64_t cycle_bytes,
                               int ncyc, uint64_t *cuts)
{
    if (cycle_bytes == 0) {
        cycle_bytes = 1;
    }
    qsort(p, n, sizeof(*p), piece_cmp);
    cuts[0] = 0;
    int c = 1;
    uint64_t acc = 0;   /* bytes before the current piece */
    for (size_t i = 0; i < n && c < ncyc; ++i) {
        while (c < ncyc && acc + p[i].len >= (uint64_t) c * cycle_bytes &&
               (uint64_t) c * cycle_bytes > acc) {
            uint64_t cut = p[i].off + ((uint64_t) c * cycle_bytes - acc);
            cuts[c] = cut > cuts[c - 1] ? cut : cuts[c - 1];
            c++;
        }
        acc += p[i].len;
    }
    for (; c < ncyc; ++c) {
        cuts[c] = UINT64_MAX;
    }
    cuts[ncyc] = UINT64_MAX;
}

int mca_common_sfio_coll_cycle_of(const uint64_t *cuts, int ncyc, uint64_t off)
{
    int lo = 0, hi = ncyc - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (cuts[mid] <= off) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

size_t mca_common_sfio_coll_union(mca_common_sfio_coll_piece_t *p, size_t n, uint64_t max_gap,
                                  mca_common_sfio_coll_piece_t *runs_p)
{
    qsort(p, n, sizeof(*p), piece_cmp);
    size_t m = 0;
    for (size_t i = 0; i < n; ++i) {
        if (0 == p[i].len) {
            continue;
        }
        if (m > 0) {
            uint64_t end = runs_p[m - 1].off + runs_p[m - 1].len;
            if (p[i].off <= end || p[i].off - end <= max_gap) {
                uint64_t e = p[i].off + p[i].len;
                if (e > end) {
                    runs_p[m - 1].len = e - runs_p[m - 1].off;
                }
                continue;
            }
        }
        runs_p[m++] = p[i];
    }
    return m;
}

static bool piece_before(const mca_common_sfio_coll_piece_t *p, size_t x, size_t y)
{
    return p[x].off < p[y].off || (p[x].off == p[y].off && x < y);
}

bool mca_common_sfio_coll_order_disjoint(const mca_common_sfio_coll_piece_t *p, size_t n,
                                         size_t *order_p, size_t *tmp)
{
    for (size_t i = 0; i < n; ++i) {
        order_p[i] = i;
    }
    /* Bottom-up merges of the ascending runs found in the input. */
    size_t *src = order_p, *dst = tmp;
    for (;;) {
        size_t runs = 0, i = 0, out = 0;
        while (i < n) {
            size_t a = i, b;
            for (b = a + 1; b < n && !piece_before(p, src[b], src[b - 1]); ++b) {
            }
            size_t c = b;
            if (b < n) {
                for (c = b + 1; c < n && !piece_before(p, src[c], src[c - 1]); ++c) {
                }
            }
            size_t x = a, y = b;
            while (x < b && y < c) {
                dst[out++] = piece_before(p, src[y], src[x]) ? src[y++] : src[x++];
            }
            while (x < b) {
                dst[out++] = src[x++];
            }
            while (y < c) {
                dst[out++] = src[y++];
            }
            runs++;
            i = c;
        }
        size_t *t = src;
        src = dst;
        dst = t;
        if (runs <= 1) {
            break;
        }
    }
    if (src != order_p) {
        memcpy(order_p, src, n * sizeof(*order_p));
    }
    uint64_t end = 0;
    bool any = false;
    for (size_t i = 0; i < n; ++i) {
        const mca_common_sfio_coll_piece_t *x = &p[order_p[i]];
        if (0 == x->len) {
            continue;
        }
        if (any && x->off < end) {
            return false;
        }
        end = x->off + x->len;
        any = true;
    }
    return true;
}

long mca_common_sfio_coll_run_of(const mca_common_sfio_coll_piece_t *runs, size_t n,
                                 uint64_t off)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (runs[mid].off + runs[mid].len <= off) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < n && runs[lo].off <= off && off < runs[lo].off + runs[lo].len) {
        return (long) lo;
    }
    return -1;
}
