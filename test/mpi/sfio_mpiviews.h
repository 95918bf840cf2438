/*
 * sfio_mpiviews.h: the file views used by the MPI-IO integration tests.
 *
 * t_view_make(kind, q, np, mkdt, v) describes rank q's view of kind `kind`
 * twice: as an MPI filetype (only when mkdt != 0, i.e. for the calling rank)
 * and as a hand-computed block list (always), so rank 0 can compute the
 * expected file image for every rank without the MPI datatype engine.
 *
 * Views of different ranks never overlap, so any interleaving of writes gives
 * the same file. Most views leave holes that nobody writes (expected zero).
 * Sizes are chosen so each rank moves more than 4 KiB (crosses a small
 * io_ompio_cycle_buffer_size several times) and, for views that tile, not a
 * whole number of tiles.
 */
#ifndef SFIO_MPIVIEWS_H
#define SFIO_MPIVIEWS_H

#include "sfio_mpitest.h"

enum {
    TV_CONTIG = 0,      /* MPI_BYTE filetype, per-rank displacement */
    TV_VECTOR,          /* vector of ints, natural extent (holes inside) */
    TV_INDEXED,         /* indexed bytes, unequal blocks, holes; resized to interleave */
    TV_HINDEXED,        /* hindexed ints, natural extent */
    TV_RESIZED,         /* contiguous ints resized: classic interleave, no holes */
    TV_RESIZED_LB,      /* hindexed bytes resized with a non-zero lb */
    TV_SUBARRAY2D,      /* 2-D subarray of ints, C order, uneven split */
    TV_SUBARRAY3D,      /* 3-D subarray of 8-byte elements, Fortran order */
    TV_DARRAY_BLOCK,    /* 2-D darray block x block of ints */
    TV_DARRAY_CYCLIC,   /* 2-D darray cyclic(3) x cyclic of 8-byte elements */
    TV_NKINDS
};

static const char *tv_names[TV_NKINDS] = {
    "contig", "vector", "indexed", "hindexed", "resized", "resized_lb",
    "subarray2d", "subarray3d", "darray_block", "darray_cyclic"};

/* Owned indices of a process at coordinate c of p in a dimension of size g. */
static int tv_split_even(int g, int p, int c, int *start)
{
    int base = g / p, rem = g % p;
    *start = c * base + (c < rem ? c : rem);
    return base + (c < rem ? 1 : 0);
}

/* Coordinates of rank q in a row-major process grid. */
static void tv_coords(int q, int nd, const int *psz, int *c)
{
    int d;
    for (d = nd - 1; d >= 0; d--) {
        c[d] = q % psz[d];
        q /= psz[d];
    }
}

/*
 * Add the blocks of the elements in the cartesian product of idx[d][0..cnt[d])
 * (ascending per dimension) of an nd-dim array of gsz elements of esz bytes.
 */
static void tv_add_product(t_view_t *v, int nd, const int *gsz, int **idx, const int *cnt,
                           int order, int esz)
{
    long long stride[3];
    int it[3] = {0, 0, 0}, d, slow, fast, step;
    if (order == MPI_ORDER_C) {
        stride[nd - 1] = 1;
        for (d = nd - 2; d >= 0; d--) {
            stride[d] = stride[d + 1] * gsz[d + 1];
        }
        slow = 0, fast = nd - 1, step = 1;
    } else {
        stride[0] = 1;
        for (d = 1; d < nd; d++) {
            stride[d] = stride[d - 1] * gsz[d - 1];
        }
        slow = nd - 1, fast = 0, step = -1;
    }
    for (d = 0; d < nd; d++) {
        if (cnt[d] == 0) {
            return;
        }
    }
    for (;;) {
        long long e = 0;
        for (d = 0; d < nd; d++) {
            e += idx[d][it[d]] * stride[d];
        }
        t_view_add(v, e * esz, esz);
        /* odometer: fastest dimension first */
        for (d = fast;; d -= step) {
            if (++it[d] < cnt[d]) {
                break;
            }
            it[d] = 0;
            if (d == slow) {
                return;
            }
        }
    }
}

static void t_view_make(int kind, int q, int np, int mkdt, t_view_t *v)
{
    MPI_Datatype tmp, el8;
    memset(v, 0, sizeof(*v));
    v->ftype = MPI_DATATYPE_NULL;
    snprintf(v->name, sizeof(v->name), "%s", tv_names[kind]);
    switch (kind) {
    case TV_CONTIG: {
        long long n = 12345;
        v->etype = MPI_BYTE, v->esize = 1;
        t_view_add(v, 0, 1);
        v->extent = 1;
        v->disp = q * (n + 100);
        v->nbytes = n;
        if (mkdt) {
            MPI_Type_contiguous(1, MPI_BYTE, &v->ftype);
        }
        break;
    }
    case TV_VECTOR: {
        int k;
        v->etype = MPI_INT, v->esize = 4;
        for (k = 0; k < 5; k++) {
            t_view_add(v, k * 7 * 4, 3 * 4);
        }
        v->extent = (4 * 7 + 3) * 4;
        v->nbytes = 12000 + 8; /* 200 tiles and 2 ints */
        v->disp = q * (201 * v->extent + 64);
        if (mkdt) {
            MPI_Type_vector(5, 3, 7, MPI_INT, &v->ftype);
        }
        break;
    }
    case TV_INDEXED: {
        int lens[5] = {5, 13, 1, 20, 7}, dis[5] = {0, 8, 24, 30, 55}, k;
        v->etype = MPI_BYTE, v->esize = 1;
        for (k = 0; k < 5; k++) {
            t_view_add(v, dis[k], lens[k]);
        }
        v->extent = 64LL * np;
        v->disp = q * 64;
        v->nbytes = 46 * 270 + 17;
        if (mkdt) {
            MPI_Type_indexed(5, lens, dis, MPI_BYTE, &tmp);
            MPI_Type_create_resized(tmp, 0, 64 * np, &v->ftype);
            MPI_Type_free(&tmp);
        }
        break;
    }
    case TV_HINDEXED: {
        int lens[3] = {2, 1, 4};
        MPI_Aint dis[3] = {0, 12, 20};
        int k;
        v->etype = MPI_INT, v->esize = 4;
        for (k = 0; k < 3; k++) {
            t_view_add(v, dis[k], lens[k] * 4);
        }
        v->extent = 36;
        v->nbytes = 28 * 450 + 12;
        v->disp = q * (451 * 36 + 40) + 4;
        if (mkdt) {
            MPI_Type_create_hindexed(3, lens, dis, MPI_INT, &v->ftype);
        }
        break;
    }
    case TV_RESIZED:
        v->etype = MPI_INT, v->esize = 4;
        t_view_add(v, 0, 24);
        v->extent = 24LL * np;
        v->disp = q * 24;
        v->nbytes = 24 * 500 + 8;
        if (mkdt) {
            MPI_Type_contiguous(6, MPI_INT, &tmp);
            MPI_Type_create_resized(tmp, 0, 24 * np, &v->ftype);
            MPI_Type_free(&tmp);
        }
        break;
    case TV_RESIZED_LB: {
        int lens[2] = {5, 3};
        MPI_Aint dis[2] = {4, 12};
        v->etype = MPI_BYTE, v->esize = 1;
        t_view_add(v, 4, 5);
        t_view_add(v, 12, 3);
        v->extent = 20LL * np;
        v->disp = q * 20;
        v->nbytes = 8 * 1500 + 5;
        if (mkdt) {
            MPI_Type_create_hindexed(2, lens, dis, MPI_BYTE, &tmp);
            MPI_Type_create_resized(tmp, 2, 20 * np, &v->ftype);
            MPI_Type_free(&tmp);
        }
        break;
    }
    case TV_SUBARRAY2D:
    case TV_SUBARRAY3D: {
        int nd = kind == TV_SUBARRAY2D ? 2 : 3;
        int g2[2] = {96, 130}, g3[3] = {29, 17, 13}; /* g3 in Fortran order: dim 0 fastest */
        int *g = nd == 2 ? g2 : g3, psz[3] = {0, 0, 0}, c[3], sub[3], st[3], d, k;
        int *idx[3];
        int esz = nd == 2 ? 4 : 8, order = nd == 2 ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        long long total = esz;
        MPI_Dims_create(np, nd, psz);
        tv_coords(q, nd, psz, c);
        for (d = 0; d < nd; d++) {
            sub[d] = tv_split_even(g[d], psz[d], c[d], &st[d]);
            idx[d] = malloc(sizeof(int) * (size_t)(sub[d] + 1));
            for (k = 0; k < sub[d]; k++) {
                idx[d][k] = st[d] + k;
            }
            total *= g[d];
        }
        v->etype = nd == 2 ? MPI_INT : MPI_BYTE;
        v->esize = nd == 2 ? 4 : 1;
        tv_add_product(v, nd, g, idx, sub, order, esz);
        v->extent = total;
        v->nbytes = 2 * v->tsize;
        for (d = 0; d < nd; d++) {
            free(idx[d]);
        }
        if (mkdt) {
            if (nd == 2) {
                MPI_Type_create_subarray(2, g, sub, st, order, MPI_INT, &v->ftype);
            } else {
                MPI_Type_contiguous(8, MPI_BYTE, &el8);
                MPI_Type_create_subarray(3, g, sub, st, order, el8, &v->ftype);
                MPI_Type_free(&el8);
            }
        }
        break;
    }
    case TV_DARRAY_BLOCK:
    case TV_DARRAY_CYCLIC: {
        int blk = kind == TV_DARRAY_BLOCK;
        int gb[2] = {40, 57}, gc[2] = {33, 50};
        int *g = blk ? gb : gc;
        int dist[2], darg[2], psz[2] = {0, 0}, c[2], cnt[2], d, i, *idx[2];
        int esz = blk ? 4 : 8;
        MPI_Dims_create(np, 2, psz);
        tv_coords(q, 2, psz, c);
        if (blk) {
            dist[0] = dist[1] = MPI_DISTRIBUTE_BLOCK;
            darg[0] = darg[1] = MPI_DISTRIBUTE_DFLT_DARG;
        } else {
            dist[0] = dist[1] = MPI_DISTRIBUTE_CYCLIC;
            darg[0] = 3;
            darg[1] = MPI_DISTRIBUTE_DFLT_DARG;
        }
        for (d = 0; d < 2; d++) {
            idx[d] = malloc(sizeof(int) * (size_t)(g[d] + 1));
            cnt[d] = 0;
            if (blk) {
                int b = (g[d] + psz[d] - 1) / psz[d];
                for (i = c[d] * b; i < g[d] && i < (c[d] + 1) * b; i++) {
                    idx[d][cnt[d]++] = i;
                }
            } else {
                int b = darg[d] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg[d];
                for (i = 0; i < g[d]; i++) {
                    if ((i / b) % psz[d] == c[d]) {
                        idx[d][cnt[d]++] = i;
                    }
                }
            }
        }
        v->etype = blk ? MPI_INT : MPI_BYTE;
        v->esize = blk ? 4 : 1;
        tv_add_product(v, 2, g, idx, cnt, MPI_ORDER_C, esz);
        v->extent = (long long)g[0] * g[1] * esz;
        v->nbytes = 2 * v->tsize;
        free(idx[0]);
        free(idx[1]);
        if (mkdt) {
            if (blk) {
                MPI_Type_create_darray(np, q, 2, g, dist, darg, psz, MPI_ORDER_C, MPI_INT,
                                       &v->ftype);
            } else {
                MPI_Type_contiguous(8, MPI_BYTE, &el8);
                MPI_Type_create_darray(np, q, 2, g, dist, darg, psz, MPI_ORDER_C, el8,
                                       &v->ftype);
                MPI_Type_free(&el8);
            }
        }
        break;
    }
    default:
        abort();
    }
    if (mkdt) {
        MPI_Type_commit(&v->ftype);
    }
}

/* One past the last file byte of stream bytes [0, n) of v (disp if n == 0). */
static long long t_view_end(const t_view_t *v, long long n)
{
    return n > 0 ? t_view_off(v, n - 1) + 1 : v->disp;
}

/* Set view v on fh (collective). */
static int t_view_set(MPI_File fh, const t_view_t *v)
{
    return MPI_File_set_view(fh, v->disp, v->etype, v->ftype, "native", MPI_INFO_NULL);
}

#endif /* SFIO_MPIVIEWS_H */
