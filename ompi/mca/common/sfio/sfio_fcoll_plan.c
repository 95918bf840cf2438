/*
 * sfio_fcoll_plan: the plan of one collective call: the facts it needs
 * (hints, storage kind, topology), the decision and groups (pure, in
 * sfio_colldecide and sfio_collplan), this rank's pieces keyed by
 * (aggregator, cycle), and the count exchange that tells aggregators what
 * comes.
 */
#include "sfio_fcoll_int.h"

static int add_piece(plan_t *p, int a, int c, uint64_t off, uint64_t len, uint64_t spos)
{
    if (p->npieces == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        piece_t *np = realloc(p->pieces, cap * sizeof(piece_t));
        if (NULL == np) {
            return -ENOMEM;
        }
        p->pieces = np;
        p->cap = cap;
    }
    piece_t *x = &p->pieces[p->npieces++];
    x->off = off;
    x->len = len;
    x->spos = spos;
    x->key = (uint32_t) a * (uint32_t) p->ncyc + (uint32_t) c;
    return 0;
}

static uint64_t group_bytes(const plan_t *p, int g)
{
    uint64_t b = 0;
    for (int q = 0; q < p->P; ++q) {
        if (p->groups.group_of[q] == g) {
            b += p->ranks[q].bytes;
        }
    }
    return b;
}

static uint64_t cycles_for(uint64_t bytes, uint64_t cb)
{
    uint64_t n = (bytes + cb - 1) / cb;
    return n ? n : 1;
}

/* Dynamic segmentation: members send their runs to the group's
 * aggregator, which cuts the group's data into ncyc portions and sends the
 * cuts back.  cuts_post posts the first messages, cuts_step finishes. */
int sfio_fcoll_cuts_post(plan_t *p)
{
    int g = p->groups.group_of[p->rank];
    int root = p->groups.aggr[g];
    int rc = OMPI_SUCCESS;
    p->cmine = malloc(((size_t) p->fcount * 2 + 1) * sizeof(uint64_t));
    p->cuts = malloc(((size_t) p->ncyc + 1) * sizeof(uint64_t));
    p->preq = malloc(((size_t) p->P + 1) * sizeof(ompi_request_t *));
    if (NULL == p->cmine || NULL == p->cuts || NULL == p->preq) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (int i = 0; i < p->fcount; ++i) {
        p->cmine[2 * i] = (uint64_t) (uintptr_t) p->fiov[i].iov_base;
        p->cmine[2 * i + 1] = p->fiov[i].iov_len;
    }
    p->cuts_phase = 0;
    if (p->rank != root) {
        /* The summary counted runs of merged entries; send exactly that many. */
        if (p->ranks[p->rank].runs > 0) {
            rc = MCA_PML_CALL(isend(p->cmine, (size_t) p->ranks[p->rank].runs * 2, MPI_UINT64_T,
                                    root, SFIO_FCOLL_TAG, MCA_PML_BASE_SEND_STANDARD, p->comm,
                                    &p->preq[p->npreq++]));
        }
        if (OMPI_SUCCESS == rc) {
            rc = MCA_PML_CALL(irecv(p->cuts, (size_t) p->ncyc + 1, MPI_UINT64_T, root,
                                    SFIO_FCOLL_TAG, p->comm, &p->preq[p->npreq++]));
        }
        return rc;
    }
    size_t total = 0;
    for (int q = 0; q < p->P; ++q) {
        if (p->groups.group_of[q] == g) {
            total += (size_t) p->ranks[q].runs;
        }
    }
    p->call = malloc((total + 1) * sizeof(*p->call));
    if (NULL == p->call) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    size_t at = 0;
    for (int q = 0; q < p->P && OMPI_SUCCESS == rc; ++q) {
        if (p->groups.group_of[q] != g || 0 == p->ranks[q].runs) {
            continue;
        }
        if (q == p->rank) {
            memcpy(&p->call[at], p->cmine, (size_t) p->fcount * 2 * sizeof(uint64_t));
        } else {
            rc = MCA_PML_CALL(irecv(&p->call[at], (size_t) p->ranks[q].runs * 2, MPI_UINT64_T, q,
                                    SFIO_FCOLL_TAG, p->comm, &p->preq[p->npreq++]));
        }
        at += (size_t) p->ranks[q].runs;
    }
    return rc;
}

/* true when this rank has its group's cuts, or, with *rc set (by a failed
 * post or a failed message), when nothing of the cut exchange is pending. */
bool sfio_fcoll_cuts_step(plan_t *p, int *rc)
{
    int g = p->groups.group_of[p->rank];
    if (!sfio_fcoll_reqs_done(p->preq, &p->npreq, rc)) {
        return false;
    }
    if (p->rank != p->groups.aggr[g] || 0 != p->cuts_phase || OMPI_SUCCESS != *rc) {
        return true;
    }
    size_t total = 0;
    for (int q = 0; q < p->P; ++q) {
        if (p->groups.group_of[q] == g) {
            total += (size_t) p->ranks[q].runs;
        }
    }
    mca_common_sfio_coll_cuts(p->call, total, p->cycle_bytes, p->ncyc, p->cuts);
    p->cuts_phase = 1;
    for (int q = 0; q < p->P && OMPI_SUCCESS == *rc; ++q) {
        if (p->groups.group_of[q] == g && q != p->rank) {
            *rc = MCA_PML_CALL(isend(p->cuts, (size_t) p->ncyc + 1, MPI_UINT64_T, q,
                                     SFIO_FCOLL_TAG, MCA_PML_BASE_SEND_STANDARD, p->comm,
                                     &p->preq[p->npreq++]));
        }
    }
    return sfio_fcoll_reqs_done(p->preq, &p->npreq, rc);
}

/* Splits this rank's file iovec into pieces keyed (aggregator, cycle) by
 * the algorithm's assign function (sfio_collplan). */
int sfio_fcoll_assign_pieces(plan_t *p)
{
    uint64_t spos = 0;
    int g = p->groups.group_of[p->rank];
    mca_common_sfio_coll_assign_fn_t assign = mca_common_sfio_coll_algs[p->alg].assign;
    mca_common_sfio_coll_assign_t st = {
        .bounds = p->bounds, .naggr = p->naggr, .cycle_bytes = p->cycle_bytes,
        .cuts = p->cuts, .ncyc = p->ncyc, .group = g,
        .gcyc = cycles_for(group_bytes(p, g), p->cycle_bytes),
        .mine = p->ranks[p->rank].bytes, .c_static = 0,
    };
    for (int i = 0; i < p->fcount; ++i) {
        uint64_t off = (uint64_t) (uintptr_t) p->fiov[i].iov_base;
        uint64_t len = p->fiov[i].iov_len;
        while (len > 0) {
            int a, c;
            uint64_t take;
            assign(&st, off, len, spos, &a, &c, &take);
            if (0 == take || take > len) {
                take = len;     /* defensive: never loop forever */
            }
            if (0 != add_piece(p, a, c, off, take, spos)) {
                return OMPI_ERR_OUT_OF_RESOURCE;
            }
            off += take;
            len -= take;
            spos += take;
        }
    }
    /* Counting sort by key, stable (keeps stream order within a key). */
    size_t nkeys = (size_t) p->naggr * (size_t) p->ncyc;
    p->first = calloc(nkeys + 1, sizeof(size_t));
    piece_t *sorted = malloc((p->npieces ? p->npieces : 1) * sizeof(piece_t));
    if (NULL == p->first || NULL == sorted) {
        free(sorted);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < p->npieces; ++i) {
        p->first[p->pieces[i].key + 1]++;
    }
    for (size_t k = 0; k < nkeys; ++k) {
        p->first[k + 1] += p->first[k];
    }
    size_t *at = malloc((nkeys + 1) * sizeof(size_t));
    if (NULL == at) {
        free(sorted);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    memcpy(at, p->first, (nkeys + 1) * sizeof(size_t));
    for (size_t i = 0; i < p->npieces; ++i) {
        sorted[at[p->pieces[i].key]++] = p->pieces[i];
    }
    free(at);
    free(p->pieces);
    p->pieces = sorted;
    p->cap = p->npieces;
    return OMPI_SUCCESS;
}

/* Tells every aggregator how many pieces and bytes each rank sends it per
 * cycle (one ialltoallv), and agrees on local failures so far (one
 * iallreduce behind it: every rank posts both, in this order). */
int sfio_fcoll_counts_post(plan_t *p)
{
    int P = p->P, ncyc = p->ncyc, rc;
    size_t per = (size_t) ncyc * 2;
    p->csend = calloc((size_t) p->naggr * per + 1, sizeof(uint64_t));
    p->cints = calloc((size_t) P * 4, sizeof(int));
    if (NULL == p->csend || NULL == p->cints) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    uint64_t *send = p->csend;
    int *scount = p->cints, *sdisp = scount + P, *rcount = scount + 2 * P, *rdisp = scount + 3 * P;
    for (int a = 0; a < p->naggr; ++a) {
        for (int c = 0; c < ncyc; ++c) {
            size_t k = (size_t) a * ncyc + c;
            uint64_t nb = 0;
            for (size_t i = p->first[k]; i < p->first[k + 1]; ++i) {
                nb += p->pieces[i].len;
            }
            send[a * per + 2 * c] = p->first[k + 1] - p->first[k];
            send[a * per + 2 * c + 1] = nb;
        }
        scount[p->aggr_rank[a]] = (int) per;
        sdisp[p->aggr_rank[a]] = (int) (a * per);
        if (NULL != p->opt->matrix_file && p->aggr_rank[a] != p->rank) {
            uint64_t sent = 0;
            for (int c = 0; c < ncyc; ++c) {
                sent += send[a * per + 2 * c + 1];
            }
            mca_common_sfio_appmat_sent(p->comm, p->aggr_rank[a], sent);
        }
    }
    if (p->my_aggr >= 0) {
        p->rcnt = calloc((size_t) P * per + 1, sizeof(uint64_t));
        if (NULL == p->rcnt) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        for (int q = 0; q < P; ++q) {
            rcount[q] = (int) per;
            rdisp[q] = (int) (q * per);
        }
    }
    rc = p->comm->c_coll->coll_ialltoallv(send, scount, sdisp, MPI_UINT64_T,
                                          p->rcnt ? p->rcnt : &p->cdummy, rcount, rdisp,
                                          MPI_UINT64_T, p->comm, &p->creq[p->ncreq],
                                          p->comm->c_coll->coll_ialltoallv_module);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    p->ncreq++;
    p->bad = OMPI_SUCCESS != p->lrc;
    rc = p->comm->c_coll->coll_iallreduce(&p->bad, &p->anybad, 1, MPI_INT, MPI_MAX, p->comm,
                                          &p->creq[p->ncreq],
                                          p->comm->c_coll->coll_iallreduce_module);
    if (OMPI_SUCCESS == rc) {
        p->ncreq++;
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* Facts of the decision, and the plan                                */

static int info_int(ompio_file_t *fh, const char *key)
{
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (NULL == fh->f_info) {
        return -1;
    }
    if (OPAL_SUCCESS != mca_common_sfio_info_get(fh->f_info, key, val, sizeof(val), &flag) || !flag) {
        return -1;
    }
    return atoi(val);
}

static int cart_rows(ompi_communicator_t *comm)
{
    int status = MPI_UNDEFINED, ndims = 0;
    if (MPI_SUCCESS != MPI_Topo_test(comm, &status) || MPI_CART != status ||
        MPI_SUCCESS != MPI_Cartdim_get(comm, &ndims) || ndims < 2 || ndims > 16) {
        return 0;
    }
    int dims[16], periods[16], coords[16];
    if (MPI_SUCCESS != MPI_Cart_get(comm, ndims, dims, periods, coords)) {
        return 0;
    }
    return dims[0];
}


/* opt->read_extent_ratio, or by file system when -1: reading a rank's
 * extent alone pays on local storage (page cache), not over a network
 * client's link.  The same on every rank: one file, one type. */
static bool fs_is_local(ompio_file_t *fh, const mca_common_sfio_fcoll_options_t *opt)
{
    return !mca_common_sfio_storage_is_network(opt->storage, fh->fd);
}

static uint64_t read_extent_ratio(ompio_file_t *fh, const mca_common_sfio_fcoll_options_t *opt)
{
    if (opt->read_extent_ratio >= 0) {
        return (uint64_t) opt->read_extent_ratio;
    }
    return fs_is_local(fh, opt) ? 8 : 0;
}
/* Queued I/O hides an aggregator's exchange only from its second cycle
 * on: automatic cycles shrink until the busiest aggregator (load bytes)
 * has several (measured in docs/fcoll-adaptive.md, "Enough cycles to
 * overlap"). */
static void queued_cycle_size(plan_t *p, uint64_t load)
{
    if (p->async && 0 == p->opt->cycle_bytes) {
        p->cycle_bytes = mca_common_sfio_coll_queued_cycle(p->cycle_bytes, load,
                                                           p->opt->async_min_cycles,
                                                           p->opt->async_min_cycle_bytes);
    }
}

/* romio_cb_write / romio_cb_read: 1 enable, 0 disable, -1 automatic or absent. */
static int info_cb(ompio_file_t *fh, const char *key)
{
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (NULL == fh->f_info ||
        OPAL_SUCCESS != mca_common_sfio_info_get(fh->f_info, key, val, sizeof(val), &flag) ||
        !flag) {
        return -1;
    }
    return 0 == strcasecmp(val, "enable") ? 1 : 0 == strcasecmp(val, "disable") ? 0 : -1;
}

/* Gathers the facts of the choice (parameters, hints, statfs, topology)
 * and lets sfio_colldecide choose; then the plan's numbers. */
int sfio_fcoll_make_plan(plan_t *p)
{
    const mca_common_sfio_fcoll_options_t *opt = p->opt;
    ompio_file_t *fh = p->fh;
    int P = p->P;

    mca_common_sfio_coll_summarize(p->ranks, P, &p->sum);
    uint64_t ss = opt->stripe_size ? opt->stripe_size
                : (fh->f_stripe_size > 0 ? (uint64_t) fh->f_stripe_size : 65536);
    uint64_t k = opt->k ? opt->k : 1;
    bool local = fs_is_local(fh, opt);

    /* An aggregator's buffer: a forced cycle size, else half of
     * cb_buffer_size (two cycles in flight). */
    uint64_t buffer = opt->cycle_bytes;
    if (0 == buffer) {
        buffer = fh->f_bytes_per_agg > 0 ? (uint64_t) fh->f_bytes_per_agg / 2 : (16u << 20);
    }
    int forced = info_int(fh, "cb_nodes");
    mca_common_sfio_coll_facts_t facts = {
        .algorithm = opt->algorithm,
        .num_aggregators = forced > 0 ? forced : opt->num_aggregators,
        .cb_hint = info_cb(fh, p->rw ? "romio_cb_read" : "romio_cb_write"),
        .read = 0 != p->rw,
        /* Atomic mode without the suite's fcoll proxy: only disjoint
         * domains with the rank-order rule give one serial order for
         * every fbtl. */
        .atomic = p->atomic,
        .local = local,
        .k = k,
        .ss = ss,
        .min_run = opt->individual_min_run,
        .read_extent_ratio = read_extent_ratio(fh, opt),
        .cart_rows = 0,
        .max_aggregators = opt->max_aggregators,
        .node = NULL != p->topo ? p->topo->node : NULL,
        .links_per_node = opt->links_per_node,
        .cpu_cap = 0,
        .buffer = buffer,
    };
    uint64_t *scratch = malloc(((size_t) P * 2 + 1) * sizeof(uint64_t));
    if (NULL == scratch) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    mca_common_sfio_coll_choose(&facts, p->ranks, P, scratch, &p->choice);
    free(scratch);
    int alg = p->choice.alg;
    p->alg = alg;
    /* A queued write waits on the storage, not on this process: on a
     * network file system the next cycle's exchange fits in that wait.
     * On local storage the write is a copy by this process's core, so
     * nothing is gained there by default. */
    p->async = 1 == opt->async_io || (opt->async_io < 0 && !local);
    if (!(mca_common_sfio_coll_algs[alg].flags & MCA_COMMON_SFIO_COLL_F_AGGREGATE)) {
        p->naggr = 0;
        p->ncyc = 0;
        return OMPI_SUCCESS;
    }

    if (0 != mca_common_sfio_coll_groups_init(&p->groups, P)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    uint64_t cb = buffer;
    /* Automatic write cycles are small: each cycle's data then stays in
     * the caches from the sender's copy to the file write, and with
     * queued writes all but the first exchange hide behind the storage's
     * time for the previous cycle (docs/fcoll-adaptive.md). */
    if (0 == opt->cycle_bytes && !p->rw && opt->write_cycle_bytes > 0 &&
        cb > opt->write_cycle_bytes) {
        cb = opt->write_cycle_bytes;
    }
    /* Queued reads: the storage reads cycle c + 1 while cycle c's replies
     * travel, which needs several cycles per aggregator. */
    if (0 == opt->cycle_bytes && p->rw && p->async && opt->read_cycle_bytes > 0 &&
        cb > opt->read_cycle_bytes) {
        cb = opt->read_cycle_bytes;
    }
    if (0 == opt->cycle_bytes && cb < MIN_AUTO_CYCLE) {
        /* a tiny cb_buffer_size (hint or io_ompio_bytes_per_agg) would
         * make one exchange per few bytes: minutes for a small call */
        static bool told = false;
        if (!told) {
            told = true;
            mca_common_sfio_show_help("fcoll-small-cycles", true,
                                      fh->f_filename ? fh->f_filename : "",
                                      (unsigned long long) cb, (unsigned long long) MIN_AUTO_CYCLE);
        }
        cb = MIN_AUTO_CYCLE;
    }
    p->cycle_bytes = cb < 1 ? 1 : cb;
    if (facts.num_aggregators <= 0) {
        facts.cart_rows = cart_rows(p->comm);
        /* Local storage: no more aggregators than the cores can keep
         * busy once the copies dominate (see docs/fcoll-adaptive.md). */
        if (opt->local_aggregators_per_cpu > 0 && NULL != p->topo && local) {
            facts.cpu_cap = mca_common_sfio_place_cpu_cap(p->topo,
                                                          opt->local_aggregators_per_cpu);
        }
    }
    mca_common_sfio_coll_choose_groups(&facts, p->ranks, P, &p->choice, &p->groups);
    p->naggr = p->groups.ngroups;
    p->aggr_rank = malloc((size_t) p->naggr * sizeof(int));
    if (NULL == p->aggr_rank) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }

    uint64_t ncyc = 0;
    bool spread = NULL != p->topo && MCA_COMMON_SFIO_PLACE_SPREAD == opt->placement;
    if (mca_common_sfio_coll_algs[alg].flags & MCA_COMMON_SFIO_COLL_F_DOMAINS) {
        if (!spread) {
            mca_common_sfio_coll_spread(P, p->naggr, p->aggr_rank);
        } else if (mca_common_sfio_place_spread(p->topo, p->naggr, p->aggr_rank) < 0) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        p->bounds = malloc(((size_t) p->naggr + 1) * sizeof(uint64_t));
        if (NULL == p->bounds) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        mca_common_sfio_coll_domains(p->sum.lo, p->sum.hi, p->naggr, ss, p->bounds);
        uint64_t load = 0;
        for (int a = 0; a < p->naggr; ++a) {
            uint64_t w = p->bounds[a + 1] - p->bounds[a];
            load = w > load ? w : load;
        }
        queued_cycle_size(p, load);
        for (int a = 0; a < p->naggr; ++a) {
            uint64_t n = (p->bounds[a + 1] - p->bounds[a] + p->cycle_bytes - 1) / p->cycle_bytes;
            ncyc = n > ncyc ? n : ncyc;
        }
    } else {
        /* a group's aggregator stays one of its members (it gathers the
         * group's pieces); the node decides which one */
        if (!spread) {
            memcpy(p->aggr_rank, p->groups.aggr, (size_t) p->naggr * sizeof(int));
        } else if (0 != mca_common_sfio_place_groups(p->topo, p->groups.group_of, p->naggr,
                                                     p->groups.aggr, p->aggr_rank)) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        } else {
            memcpy(p->groups.aggr, p->aggr_rank, (size_t) p->naggr * sizeof(int));
        }
        uint64_t load = 0;
        for (int g = 0; g < p->naggr; ++g) {
            uint64_t b = group_bytes(p, g);
            load = b > load ? b : load;
        }
        queued_cycle_size(p, load);
        for (int g = 0; g < p->naggr; ++g) {
            uint64_t n = cycles_for(group_bytes(p, g), p->cycle_bytes);
            ncyc = n > ncyc ? n : ncyc;
        }
    }
    if (ncyc > (1u << 24) || (uint64_t) p->naggr * ncyc > (1u << 30)) {
        if (0 == p->rank) {         /* the same on every rank: one message */
            mca_common_sfio_show_help("fcoll-cycles", true, fh->f_filename ? fh->f_filename : "",
                                      (unsigned long long) ncyc,
                                      (unsigned long long) p->cycle_bytes);
        }
        return MPI_ERR_NO_MEM;
    }
    p->ncyc = (int) ncyc;
    p->my_aggr = -1;
    for (int a = 0; a < p->naggr; ++a) {
        if (p->aggr_rank[a] == p->rank) {
            p->my_aggr = a;
        }
    }
    return OMPI_SUCCESS;
}

/* Verbose 1 (rank 0): the aggregators as rank@node (at most 64 of them). */
void sfio_fcoll_report_placement(const plan_t *p)
{
    char line[1024];
    const char *emu = p->opt->emulate_nodes;
    int probe, nprobe;
    bool emulated = 1 == mca_common_sfio_place_emulate(emu, 1, &probe, &nprobe);
    bool spread = NULL != p->topo && MCA_COMMON_SFIO_PLACE_SPREAD == p->opt->placement;
    size_t used = (size_t) snprintf(line, sizeof(line), "placement %s (%d nodes%s%s):",
                                    spread ? "spread" : "rank",
                                    NULL != p->topo ? p->topo->nnodes : 0,
                                    emulated ? ", emulated " : "", emulated ? emu : "");
    for (int a = 0; a < p->naggr && a < 64 && used < sizeof(line); ++a) {
        if (NULL != p->topo) {
            used += (size_t) snprintf(line + used, sizeof(line) - used, " %d@%d",
                                      p->aggr_rank[a], p->topo->node[p->aggr_rank[a]]);
        } else {
            used += (size_t) snprintf(line + used, sizeof(line) - used, " %d", p->aggr_rank[a]);
        }
    }
    if (p->naggr > 64 && used < sizeof(line)) {
        (void) snprintf(line + used, sizeof(line) - used, " ...");
    }
    opal_output_verbose(1, p->opt->output, "fcoll:adaptive: aggregators (rank@node), %s", line);
}

void sfio_fcoll_plan_free(plan_t *p)
{
    free(p->mem.prefix);
    free(p->fiov);
    free(p->ranks);
    free(p->aggr_rank);
    free(p->bounds);
    free(p->cuts);
    free(p->pieces);
    free(p->first);
    free(p->rcnt);
    free(p->all);
    free(p->csend);
    free(p->cints);
    free(p->preq);
    free(p->cmine);
    free(p->call);
    for (int i = 0; i < 2; ++i) {
        free(p->slot[i].sbuf);
        free(p->slot[i].rbuf);
        free(p->slot[i].dbuf);
        free(p->slot[i].reqs);
        free(p->slot[i].areqs);
        free(p->slot[i].dreqs);
        free(p->slot[i].ubuf);
        free(p->slot[i].qruns);
    }
    free(p->ap);
    free(p->runs);
    free(p->order);
    mca_common_sfio_coll_groups_free(&p->groups);
}
