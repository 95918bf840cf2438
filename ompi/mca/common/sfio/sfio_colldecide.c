/*
 * sfio_colldecide: the choice of algorithm and aggregator groups for one
 * collective call (see sfio_colldecide.h for the precedence).
 */
#include "sfio_colldecide.h"

#include <stdlib.h>
#include <string.h>

const char *const mca_common_sfio_coll_why_names[] = {
    "atomic", "forced", "hint", "apart", "reads_alone", "rules"
};

static int cmp_pair(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

bool mca_common_sfio_coll_interleaved(const mca_common_sfio_coll_rank_t *r, int n,
                                      uint64_t *scratch)
{
    size_t m = 0;
    for (int i = 0; i < n; ++i) {
        if (r[i].bytes > 0 && r[i].hi > r[i].lo) {
            scratch[2 * m] = r[i].lo;
            scratch[2 * m + 1] = r[i].hi;
            m++;
        }
    }
    qsort(scratch, m, 2 * sizeof(uint64_t), cmp_pair);
    /* sorted by lo: extents meet iff one starts before the previous ones end */
    uint64_t end = 0;
    for (size_t i = 0; i < m; ++i) {
        if (i > 0 && scratch[2 * i] < end) {
            return true;
        }
        end = scratch[2 * i + 1] > end ? scratch[2 * i + 1] : end;
    }
    return false;
}

int mca_common_sfio_coll_links(const mca_common_sfio_coll_rank_t *r, int n, const int *node,
                               int links_per_node, uint64_t *scratch)
{
    int active = 0, nodes = 0;
    if (NULL == node && links_per_node > 0) {
        return 0;
    }
    memset(scratch, 0, (size_t) n * sizeof(uint64_t));
    for (int i = 0; i < n; ++i) {
        if (0 == r[i].bytes) {
            continue;
        }
        active++;
        if (NULL == node) {
            continue;
        }
        int id = node[i] >= 0 && node[i] < n ? node[i] : 0;
        if (0 == scratch[id]) {
            scratch[id] = 1;
            nodes++;
        }
    }
    long links = links_per_node <= 0 ? active : (long) nodes * links_per_node;
    return links < active ? (int) links : active;
}

static int choose_alg(const mca_common_sfio_coll_facts_t *f,
                      const mca_common_sfio_coll_rank_t *r, int n,
                      mca_common_sfio_coll_choice_t *ch)
{
    if (f->atomic && !f->read) {
        ch->why = MCA_COMMON_SFIO_WHY_ATOMIC;
        return MCA_COMMON_SFIO_COLL_TWO_PHASE;
    }
    if (MCA_COMMON_SFIO_COLL_AUTO != f->algorithm && f->algorithm > 0 &&
        f->algorithm < MCA_COMMON_SFIO_COLL_NALGS) {
        ch->why = MCA_COMMON_SFIO_WHY_FORCED;
        return f->algorithm;
    }
    if (0 == f->cb_hint) {
        ch->why = MCA_COMMON_SFIO_WHY_HINT;
        return MCA_COMMON_SFIO_COLL_INDIVIDUAL;
    }
    bool enable = 1 == f->cb_hint;
    if (!enable && f->min_run > 0 && !ch->interleaved && ch->min_run >= f->min_run) {
        ch->why = MCA_COMMON_SFIO_WHY_APART;
        return MCA_COMMON_SFIO_COLL_INDIVIDUAL;
    }
    if (!enable && f->read && mca_common_sfio_coll_reads_alone(r, n, f->read_extent_ratio)) {
        ch->why = MCA_COMMON_SFIO_WHY_READS_ALONE;
        return MCA_COMMON_SFIO_COLL_INDIVIDUAL;
    }
    mca_common_sfio_coll_summary_t s;
    mca_common_sfio_coll_summarize(r, n, &s);
    mca_common_sfio_coll_inputs_t in = { s.c, f->k ? f->k : 1, f->ss ? f->ss : 1, s.gap,
                                         !f->local && mca_common_sfio_coll_dup_heavy(&s) };
    int alg = mca_common_sfio_coll_decide(&in, mca_common_sfio_coll_default_rules,
                                          mca_common_sfio_coll_default_nrules,
                                          MCA_COMMON_SFIO_COLL_TWO_PHASE);
    if (enable && MCA_COMMON_SFIO_COLL_INDIVIDUAL == alg) {
        alg = MCA_COMMON_SFIO_COLL_TWO_PHASE;
    }
    ch->why = MCA_COMMON_SFIO_WHY_RULES;
    return alg;
}

void mca_common_sfio_coll_choose(const mca_common_sfio_coll_facts_t *f,
                                 const mca_common_sfio_coll_rank_t *r, int n,
                                 uint64_t *scratch, mca_common_sfio_coll_choice_t *choice_p)
{
    mca_common_sfio_coll_choice_t ch = { 0 };
    ch.min_run = UINT64_MAX;
    for (int i = 0; i < n; ++i) {
        if (r[i].bytes > 0) {
            uint64_t avg = r[i].bytes / (r[i].runs ? r[i].runs : 1);
            ch.min_run = avg < ch.min_run ? avg : ch.min_run;
        }
    }
    if (UINT64_MAX == ch.min_run) {
        ch.min_run = 0;
    }
    ch.interleaved = mca_common_sfio_coll_interleaved(r, n, scratch);
    ch.links = mca_common_sfio_coll_links(r, n, f->node, f->links_per_node, scratch);
    ch.alg = choose_alg(f, r, n, &ch);
    *choice_p = ch;
}

void mca_common_sfio_coll_choose_groups(const mca_common_sfio_coll_facts_t *f,
                                        const mca_common_sfio_coll_rank_t *r, int n,
                                        const mca_common_sfio_coll_choice_t *ch,
                                        mca_common_sfio_coll_groups_t *g)
{
    if (f->num_aggregators > 0) {
        mca_common_sfio_coll_groups_even(f->num_aggregators, g);
        return;
    }
    mca_common_sfio_coll_groups_initial(r, f->cart_rows, g);
    mca_common_sfio_coll_groups_refine(r, f->k ? f->k : 1, g);
    mca_common_sfio_coll_groups_cap(f->max_aggregators, g);
    if (!f->local && ch->links > g->ngroups) {
        int want = ch->links;
        if (f->max_aggregators > 0 && want > f->max_aggregators) {
            want = f->max_aggregators;
        }
        if (want > g->ngroups) {
            mca_common_sfio_coll_groups_even(want, g);
        }
    }
    if (f->local && f->cpu_cap > 0) {
        uint64_t bytes = 0;
        for (int i = 0; i < n; ++i) {
            bytes += r[i].bytes;
        }
        if (bytes >= (uint64_t) f->cpu_cap * f->buffer) {
            mca_common_sfio_coll_groups_cap(f->cpu_cap, g);
        }
    }
}
