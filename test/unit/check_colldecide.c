/*
 * Unit tests of sfio_colldecide (the choice of algorithm and aggregator
 * groups of one collective call) and of the catalogue's assign functions
 * (sfio_collplan).  Random small cases are checked against a reference
 * that works on byte bitmaps: each rank's bytes of a 256-byte file.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sfio_colldecide.h"

typedef mca_common_sfio_coll_rank_t rank_t;
typedef mca_common_sfio_coll_facts_t facts_t;
typedef mca_common_sfio_coll_choice_t choice_t;
typedef mca_common_sfio_coll_groups_t groups_t;

#define FILE_BYTES 256
#define MAXR 9

static uint64_t rnd_state = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

/* A random case: bit[q][b] says rank q accesses byte b. */
typedef struct {
    int n;
    bool bit[MAXR][FILE_BYTES];
    rank_t r[MAXR];
} rcase_t;

static void random_case(rcase_t *c)
{
    memset(c, 0, sizeof(*c));
    c->n = 1 + (int) (rnd() % MAXR);
    int style = (int) (rnd() % 3);
    for (int q = 0; q < c->n; ++q) {
        if (rnd() % 6 == 0) {
            continue;   /* a rank without bytes */
        }
        if (0 == style) {
            /* blocks apart (what IOR or a FLASH checkpoint does), sometimes stretched */
            int w = FILE_BYTES / c->n, lo = q * w, len = 1 + (int) (rnd() % (uint64_t) w);
            if (rnd() % 4 == 0) {
                len += (int) (rnd() % 8);
            }
            for (int b = lo; b < lo + len && b < FILE_BYTES; ++b) {
                c->bit[q][b] = true;
            }
        } else {
            int nruns = 1 + (int) (rnd() % 4);
            for (int k = 0; k < nruns; ++k) {
                int lo = (int) (rnd() % FILE_BYTES), len = 1 + (int) (rnd() % 32);
                for (int b = lo; b < lo + len && b < FILE_BYTES; ++b) {
                    c->bit[q][b] = true;
                }
            }
        }
    }
    /* the summaries, as every rank allgathers them */
    for (int q = 0; q < c->n; ++q) {
        rank_t s = { UINT64_MAX, 0, 0, 0 };
        for (int b = 0; b < FILE_BYTES; ++b) {
            if (!c->bit[q][b]) {
                continue;
            }
            s.bytes++;
            s.lo = (uint64_t) b < s.lo ? (uint64_t) b : s.lo;
            s.hi = (uint64_t) b + 1;
            if (0 == b || !c->bit[q][b - 1]) {
                s.runs++;
            }
        }
        if (0 == s.bytes) {
            s.lo = s.hi = 0;
        }
        c->r[q] = s;
    }
}

/* Reference: some byte of one rank lies between the first and the last
 * byte of another rank (inclusive). */
static bool ref_interleaved(const rcase_t *c)
{
    for (int i = 0; i < c->n; ++i) {
        for (int j = 0; j < c->n; ++j) {
            int first = -1, last = -1;
            if (i == j) {
                continue;
            }
            for (int b = 0; b < FILE_BYTES; ++b) {
                if (c->bit[j][b]) {
                    first = first < 0 ? b : first;
                    last = b;
                }
            }
            for (int b = first; first >= 0 && b <= last; ++b) {
                if (c->bit[i][b]) {
                    return true;
                }
            }
        }
    }
    return false;
}

/* Reference: smallest bytes / runs over ranks with bytes (0: none). */
static uint64_t ref_min_run(const rcase_t *c)
{
    uint64_t best = 0;
    for (int q = 0; q < c->n; ++q) {
        uint64_t bytes = 0, runs = 0;
        for (int b = 0; b < FILE_BYTES; ++b) {
            bytes += c->bit[q][b];
            runs += c->bit[q][b] && (0 == b || !c->bit[q][b - 1]);
        }
        if (bytes > 0 && (0 == best || bytes / runs < best)) {
            best = bytes / runs;
        }
    }
    return best;
}

static facts_t base_facts(void)
{
    facts_t f = { 0 };
    f.algorithm = MCA_COMMON_SFIO_COLL_AUTO;
    f.cb_hint = -1;
    f.k = 1 << 20;
    f.ss = 64 << 10;
    f.min_run = 4096;
    f.links_per_node = 1;
    f.buffer = 1 << 20;
    return f;
}

static choice_t choose(const facts_t *f, const rank_t *r, int n)
{
    uint64_t scratch[2 * 64];
    choice_t ch;
    mca_common_sfio_coll_choose(f, r, n, scratch, &ch);
    return ch;
}

START_TEST(catalogue_rows)
{
    for (int i = 0; i < MCA_COMMON_SFIO_COLL_NALGS; ++i) {
        const mca_common_sfio_coll_alg_info_t *a = &mca_common_sfio_coll_algs[i];
        ck_assert_int_eq(a->id, i);
        ck_assert_ptr_nonnull(a->help);
        /* an algorithm aggregates exactly when it assigns pieces */
        ck_assert_int_eq(NULL != a->assign, 0 != (a->flags & MCA_COMMON_SFIO_COLL_F_AGGREGATE));
        /* domains and groups exclude each other */
        ck_assert(!((a->flags & MCA_COMMON_SFIO_COLL_F_DOMAINS) &&
                    (a->flags & MCA_COMMON_SFIO_COLL_F_GROUPS)));
    }
    /* the atomic-mode write path has one serial order */
    ck_assert(mca_common_sfio_coll_algs[MCA_COMMON_SFIO_COLL_TWO_PHASE].flags &
              MCA_COMMON_SFIO_COLL_F_SERIAL);
}
END_TEST

START_TEST(interleave_against_bitmap)
{
    uint64_t scratch[2 * MAXR];
    for (int it = 0; it < 20000; ++it) {
        rcase_t c;
        random_case(&c);
        ck_assert_int_eq(mca_common_sfio_coll_interleaved(c.r, c.n, scratch),
                         ref_interleaved(&c));
        facts_t f = base_facts();
        choice_t ch = choose(&f, c.r, c.n);
        ck_assert_int_eq(ch.interleaved, ref_interleaved(&c));
        ck_assert_uint_eq(ch.min_run, ref_min_run(&c));
    }
}
END_TEST

START_TEST(interleave_edges)
{
    uint64_t scratch[8];
    /* touching extents do not interleave; one byte of overlap does */
    rank_t a[2] = { { 0, 10, 10, 1 }, { 10, 20, 10, 1 } };
    ck_assert(!mca_common_sfio_coll_interleaved(a, 2, scratch));
    a[1].lo = 9;
    ck_assert(mca_common_sfio_coll_interleaved(a, 2, scratch));
    /* a rank inside another's hole: interleaved */
    rank_t b[2] = { { 0, 30, 20, 2 }, { 10, 20, 10, 1 } };
    ck_assert(mca_common_sfio_coll_interleaved(b, 2, scratch));
    /* ranks without bytes never interleave; order of ranks does not matter */
    rank_t z[3] = { { 20, 30, 10, 1 }, { 0, 0, 0, 0 }, { 0, 10, 10, 1 } };
    ck_assert(!mca_common_sfio_coll_interleaved(z, 3, scratch));
    ck_assert(!mca_common_sfio_coll_interleaved(z, 0, scratch));
}
END_TEST

/* Reference of the algorithm precedence (sfio_colldecide.h), on bitmaps. */
static int ref_alg(const facts_t *f, const rcase_t *c)
{
    if (f->atomic && !f->read) {
        return MCA_COMMON_SFIO_COLL_TWO_PHASE;
    }
    if (MCA_COMMON_SFIO_COLL_AUTO != f->algorithm) {
        return f->algorithm;
    }
    if (0 == f->cb_hint) {
        return MCA_COMMON_SFIO_COLL_INDIVIDUAL;
    }
    bool enable = 1 == f->cb_hint;
    if (!enable && f->min_run > 0 && !ref_interleaved(c) && ref_min_run(c) >= f->min_run) {
        return MCA_COMMON_SFIO_COLL_INDIVIDUAL;
    }
    if (!enable && f->read && mca_common_sfio_coll_reads_alone(c->r, c->n, f->read_extent_ratio)) {
        return MCA_COMMON_SFIO_COLL_INDIVIDUAL;
    }
    mca_common_sfio_coll_summary_t s;
    mca_common_sfio_coll_summarize(c->r, c->n, &s);
    mca_common_sfio_coll_inputs_t in = { s.c, f->k, f->ss, s.gap,
                                         !f->local && mca_common_sfio_coll_dup_heavy(&s) };
    int alg = mca_common_sfio_coll_decide(&in, mca_common_sfio_coll_default_rules,
                                          mca_common_sfio_coll_default_nrules,
                                          MCA_COMMON_SFIO_COLL_TWO_PHASE);
    return enable && MCA_COMMON_SFIO_COLL_INDIVIDUAL == alg ? MCA_COMMON_SFIO_COLL_TWO_PHASE : alg;
}

START_TEST(choice_against_reference)
{
    for (int it = 0; it < 20000; ++it) {
        rcase_t c;
        random_case(&c);
        facts_t f = base_facts();
        f.algorithm = rnd() % 3 ? MCA_COMMON_SFIO_COLL_AUTO
                                : (int) (rnd() % MCA_COMMON_SFIO_COLL_NALGS);
        f.cb_hint = (int) (rnd() % 4) - 1;
        if (f.cb_hint > 1) {
            f.cb_hint = -1;
        }
        f.read = rnd() % 2;
        f.atomic = rnd() % 4 == 0;
        f.local = rnd() % 2;
        f.k = 1 + rnd() % 64;
        f.ss = 1 + rnd() % 64;
        f.min_run = rnd() % 40;
        f.read_extent_ratio = rnd() % 4;
        choice_t ch = choose(&f, c.r, c.n);
        ck_assert_int_eq(ch.alg, ref_alg(&f, &c));
        ck_assert_int_ne(ch.alg, MCA_COMMON_SFIO_COLL_AUTO);
        /* atomic-mode writes always take a path with one serial order */
        if (f.atomic && !f.read) {
            ck_assert(mca_common_sfio_coll_algs[ch.alg].flags & MCA_COMMON_SFIO_COLL_F_SERIAL);
            ck_assert_int_eq(ch.why, MCA_COMMON_SFIO_WHY_ATOMIC);
        }
    }
}
END_TEST

START_TEST(choice_precedence_cases)
{
    /* IOR's small shape, one call: 8 ranks, 64 KiB each, apart */
    rank_t r[8];
    for (int q = 0; q < 8; ++q) {
        r[q] = (rank_t) { (uint64_t) q << 18, ((uint64_t) q << 18) + 65536, 65536, 1 };
    }
    facts_t f = base_facts();
    f.k = 256 << 10;
    choice_t ch = choose(&f, r, 8);
    ck_assert_int_eq(ch.alg, MCA_COMMON_SFIO_COLL_INDIVIDUAL);
    ck_assert_int_eq(ch.why, MCA_COMMON_SFIO_WHY_APART);
    /* the hint enable keeps collective buffering: the decision table */
    f.cb_hint = 1;
    ck_assert_int_eq(choose(&f, r, 8).alg, MCA_COMMON_SFIO_COLL_STATIC);
    /* disable: individual even where the ranks interleave */
    f.cb_hint = 0;
    r[1].lo = 10;
    ck_assert_int_eq(choose(&f, r, 8).alg, MCA_COMMON_SFIO_COLL_INDIVIDUAL);
    ck_assert_int_eq(choose(&f, r, 8).why, MCA_COMMON_SFIO_WHY_HINT);
    /* interleaved, no hint: the table */
    f.cb_hint = -1;
    ck_assert_int_eq(choose(&f, r, 8).why, MCA_COMMON_SFIO_WHY_RULES);
    r[1].lo = 1 << 18;
    /* runs too short on average: the table */
    f.min_run = 65537;
    ck_assert_int_eq(choose(&f, r, 8).why, MCA_COMMON_SFIO_WHY_RULES);
    f.min_run = 0;
    ck_assert_int_eq(choose(&f, r, 8).why, MCA_COMMON_SFIO_WHY_RULES);
    f.min_run = 4096;
    /* forced wins over apart; atomic writes win over forced */
    f.algorithm = MCA_COMMON_SFIO_COLL_DYNAMIC;
    ck_assert_int_eq(choose(&f, r, 8).alg, MCA_COMMON_SFIO_COLL_DYNAMIC);
    f.atomic = true;
    ck_assert_int_eq(choose(&f, r, 8).alg, MCA_COMMON_SFIO_COLL_TWO_PHASE);
    f.algorithm = MCA_COMMON_SFIO_COLL_AUTO;
    ck_assert_int_eq(choose(&f, r, 8).alg, MCA_COMMON_SFIO_COLL_TWO_PHASE);
    /* atomic reads keep the automatic choice */
    f.read = true;
    ck_assert_int_eq(choose(&f, r, 8).alg, MCA_COMMON_SFIO_COLL_INDIVIDUAL);
}
END_TEST

START_TEST(links_against_reference)
{
    uint64_t scratch[MAXR];
    for (int it = 0; it < 5000; ++it) {
        rcase_t c;
        random_case(&c);
        int node[MAXR], nnodes = 1 + (int) (rnd() % (uint64_t) c.n);
        for (int q = 0; q < c.n; ++q) {
            node[q] = (int) (rnd() % (uint64_t) nnodes);
        }
        int lpn = (int) (rnd() % 3);
        int active = 0, used = 0;
        bool seen[MAXR] = { false };
        for (int q = 0; q < c.n; ++q) {
            if (c.r[q].bytes > 0) {
                active++;
                used += !seen[node[q]];
                seen[node[q]] = true;
            }
        }
        int want = 0 == lpn ? active : (used * lpn < active ? used * lpn : active);
        ck_assert_int_eq(mca_common_sfio_coll_links(c.r, c.n, node, lpn, scratch), want);
        ck_assert_int_eq(mca_common_sfio_coll_links(c.r, c.n, NULL, lpn, scratch),
                         0 == lpn ? active : 0);
    }
}
END_TEST

START_TEST(groups_precedence)
{
    for (int it = 0; it < 5000; ++it) {
        rcase_t c;
        random_case(&c);
        int node[MAXR];
        for (int q = 0; q < c.n; ++q) {
            node[q] = q;    /* one rank per node */
        }
        facts_t f = base_facts();
        f.k = 1 + rnd() % 512;
        f.local = rnd() % 2;
        f.node = rnd() % 2 ? node : NULL;
        f.max_aggregators = (int) (rnd() % 4);
        f.num_aggregators = rnd() % 4 == 0 ? 1 + (int) (rnd() % 12) : 0;
        f.cpu_cap = rnd() % 2 ? 1 + (int) (rnd() % 3) : 0;
        f.buffer = rnd() % 128;
        choice_t ch = choose(&f, c.r, c.n);
        groups_t g;
        ck_assert_int_eq(mca_common_sfio_coll_groups_init(&g, c.n), 0);
        mca_common_sfio_coll_choose_groups(&f, c.r, c.n, &ch, &g);
        ck_assert_int_eq(mca_common_sfio_coll_groups_verify(&g), 0);
        if (f.num_aggregators > 0) {
            int want = f.num_aggregators < c.n ? f.num_aggregators : c.n;
            ck_assert_int_eq(g.ngroups, want);
        } else {
            if (f.max_aggregators > 0) {
                ck_assert_int_le(g.ngroups, f.max_aggregators);
            }
            if (!f.local && NULL != f.node) {
                /* network storage: at least the links in play (one per node here) */
                int want = ch.links;
                if (f.max_aggregators > 0 && want > f.max_aggregators) {
                    want = f.max_aggregators;
                }
                ck_assert_int_ge(g.ngroups, want);
            }
            uint64_t bytes = 0;
            for (int q = 0; q < c.n; ++q) {
                bytes += c.r[q].bytes;
            }
            if (f.local && f.cpu_cap > 0 && bytes >= (uint64_t) f.cpu_cap * f.buffer) {
                ck_assert_int_le(g.ngroups, f.cpu_cap);
            }
        }
        mca_common_sfio_coll_groups_free(&g);
    }
}
END_TEST

/* Every assign function: pieces tile the stream, each lies in its
 * (aggregator, cycle), and the static cycles follow the stream's shares. */
START_TEST(assign_against_reference)
{
    for (int it = 0; it < 3000; ++it) {
        uint64_t lo = rnd() % 64, hi = lo + 1 + rnd() % 1024;
        int naggr = 1 + (int) (rnd() % 5);
        uint64_t bounds[6], cuts[9];
        mca_common_sfio_coll_domains(lo, hi, naggr, 1 + rnd() % 64, bounds);
        int ncyc = 1 + (int) (rnd() % 8);
        cuts[0] = 0;
        for (int k = 1; k < ncyc; ++k) {
            cuts[k] = cuts[k - 1] + rnd() % 200;
        }
        cuts[ncyc] = UINT64_MAX;
        /* this rank's runs: increasing, inside [lo, hi) */
        uint64_t off[16], len[16], mine = 0;
        int nr = 0;
        for (uint64_t at = lo; at < hi && nr < 16; ++nr) {
            off[nr] = at;
            len[nr] = 1 + rnd() % (hi - at);
            at += len[nr] + rnd() % 16;
            mine += len[nr];
        }
        for (int alg = 1; alg < MCA_COMMON_SFIO_COLL_NALGS; ++alg) {
            mca_common_sfio_coll_assign_fn_t fn = mca_common_sfio_coll_algs[alg].assign;
            if (NULL == fn) {
                continue;
            }
            mca_common_sfio_coll_assign_t st = {
                .bounds = bounds, .naggr = naggr, .cycle_bytes = 1 + rnd() % 100,
                .cuts = cuts, .ncyc = ncyc, .group = 2, .gcyc = 1 + rnd() % 5, .mine = mine,
                .c_static = 0,
            };
            uint64_t spos = 0;
            int last_c = 0;
            for (int i = 0; i < nr; ++i) {
                uint64_t o = off[i], l = len[i];
                while (l > 0) {
                    int a = -1, cy = -1;
                    uint64_t take = 0;
                    fn(&st, o, l, spos, &a, &cy, &take);
                    ck_assert(take >= 1 && take <= l);
                    if (MCA_COMMON_SFIO_COLL_TWO_PHASE == alg) {
                        ck_assert(a >= 0 && a < naggr);
                        uint64_t clo = bounds[a] + (uint64_t) cy * st.cycle_bytes;
                        ck_assert(o >= clo && o + take <= bounds[a + 1]);
                        ck_assert(o + take <= clo + st.cycle_bytes);
                    } else if (MCA_COMMON_SFIO_COLL_DYNAMIC == alg) {
                        ck_assert_int_eq(a, 2);
                        ck_assert(cy >= 0 && cy < ncyc);
                        ck_assert(o >= cuts[cy] && o + take <= cuts[cy + 1]);
                    } else {
                        ck_assert_int_eq(a, 2);
                        ck_assert(cy >= last_c && (uint64_t) cy < st.gcyc);
                        /* stream bytes of cycle c: [c * mine / gcyc, (c + 1) * mine / gcyc) */
                        uint64_t g = st.gcyc;
                        ck_assert((unsigned __int128) spos * g >=
                                  (unsigned __int128) cy * mine);
                        if ((uint64_t) cy + 1 < g) {
                            ck_assert((unsigned __int128) (spos + take - 1) * g <
                                      (unsigned __int128) (cy + 1) * mine);
                        }
                        last_c = cy;
                    }
                    o += take;
                    l -= take;
                    spos += take;
                }
            }
            ck_assert_uint_eq(spos, mine);
        }
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("colldecide");
    TCase *t = tcase_create("core");
    tcase_add_test(t, catalogue_rows);
    tcase_add_test(t, interleave_edges);
    tcase_add_test(t, interleave_against_bitmap);
    tcase_add_test(t, choice_precedence_cases);
    tcase_add_test(t, choice_against_reference);
    tcase_add_test(t, links_against_reference);
    tcase_add_test(t, groups_precedence);
    tcase_add_test(t, assign_against_reference);
    tcase_set_timeout(t, 60);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *r = srunner_create(suite());
    srunner_run_all(r, CK_NORMAL);
    int nf = srunner_ntests_failed(r);
    srunner_free(r);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
