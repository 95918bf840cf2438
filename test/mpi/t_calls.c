/*
 * t_calls.c: the blocking MPI-IO call families, status counts, file pointers,
 * split collectives and files opened more than once.
 *
 *   explicit.write_at.read_at   default view, several write_at per rank, read of
 *                               the neighbour's data, short reads at EOF (count)
 *   explicit.count_int          MPI_Get_count / MPI_Get_elements with MPI_INT,
 *                               partial element at EOF -> MPI_UNDEFINED
 *   explicit.status_ignore      MPI_STATUS_IGNORE on every blocking call family
 *   indiv.seek                  write/read + seek SET/CUR/END, get_position,
 *                               get_byte_offset, with an interleaving view
 *   coll.at_all.zero            write_at_all/read_at_all, odd ranks move 0 bytes
 *   coll.all.etype_int          write_all/read_all, etype MPI_INT, offsets in
 *                               ints, non-contiguous memory, position after
 *   split.write_all / read_all / write_at_all / read_at_all
 *                               *_begin/_end with subarray and darray views,
 *                               status from _end
 *   twohandles                  one file opened twice on MPI_COMM_WORLD:
 *                               write via one handle, sync-barrier-sync, read via
 *                               the other, both directions
 *   self.private                every rank opens its own file on MPI_COMM_SELF
 *   self.shared                 all ranks open one file on MPI_COMM_SELF, write
 *                               disjoint interleaved parts, read back on WORLD
 *   self+world                  one file open on WORLD and on SELF at once
 * Every write is checked against a reference image with POSIX reads.
 */
#include "sfio_mpiviews.h"

#define NB 10007 /* bytes per rank in the default-view tests */

/* Rank 0 compares path with the image of views vs[q] (n[q] bytes, tag). */
static void verify_views(const char *path, t_view_t *vs, const long long *n, int nviews,
                         const int *owner, int tag)
{
    if (t_rank == 0) {
        t_apply_arg_t a;
        int i;
        memset(&a, 0, sizeof(a));
        for (i = 0; i < nviews; i++) {
            t_view_apply(&vs[i], 0, n[i], owner[i], tag, &a);
        }
        t_verify_file(path, a.img, a.end);
        free(a.img);
    }
}

/* Fill a buffer with stream bytes [start, start + n) of rank q. */
static unsigned char *pat_buf(int q, long long start, long long n, int tag)
{
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    long long j;
    for (j = 0; j < n; j++) {
        b[j] = t_pat_data(q, start + j, tag);
    }
    return b;
}

static void test_explicit(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Status st;
    int tag = 3, q, nxt = (t_rank + 1) % t_np;
    long long cuts[4] = {0, 1, 4099, NB}, i;
    unsigned char *b = pat_buf(t_rank, 0, NB, tag), *r;
    t_view_t *vs = calloc((size_t)t_np, sizeof(t_view_t));
    long long *ns = calloc((size_t)t_np, sizeof(long long));
    int *own = calloc((size_t)t_np, sizeof(int));
    if (!t_begin("explicit.write_at.read_at")) {
        goto out;
    }
    t_fname(path, sizeof(path), "explicit");
    t_unlink(path);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                           MPI_INFO_NULL, &fh), "open")) {
        /* pieces in reverse order: [4099,NB) [1,4099) [0,1) */
        for (i = 2; i >= 0; i--) {
            long long o = (long long)t_rank * NB + cuts[i], len = cuts[i + 1] - cuts[i];
            if (t_ok(MPI_File_write_at(fh, o, b + cuts[i], (int)len, MPI_BYTE, &st), "write_at")) {
                t_check_count(&st, MPI_BYTE, (int)len, "write_at");
            }
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (q = 0; q < t_np; q++) {
        t_view_contig(&vs[q], (long long)q * NB, NB);
        ns[q] = NB;
        own[q] = q;
    }
    verify_views(path, vs, ns, t_np, own, tag);
    r = malloc(NB + 200);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), "open")) {
        unsigned char *w = pat_buf(nxt, 0, NB, tag);
        long long fsz = (long long)t_np * NB;
        MPI_Offset gsz = -1;
        MPI_File_get_size(fh, &gsz);
        if (gsz != fsz) {
            t_failf("get_size %lld want %lld", (long long)gsz, fsz);
        }
        if (t_ok(MPI_File_read_at(fh, (MPI_Offset)nxt * NB, r, NB, MPI_BYTE, &st), "read_at")) {
            t_check_count(&st, MPI_BYTE, NB, "read_at");
            t_cmp(r, w, NB, (long long)nxt * NB, "read_at neighbour");
        }
        free(w);
        /* short read at EOF: 100 requested, 40 available */
        if (t_ok(MPI_File_read_at(fh, fsz - 40, r, 100, MPI_BYTE, &st), "read_at EOF-40")) {
            t_check_count(&st, MPI_BYTE, 40, "read_at EOF-40");
            w = pat_buf(t_np - 1, NB - 40, 40, tag);
            t_cmp(r, w, 40, fsz - 40, "read_at EOF-40");
            free(w);
        }
        if (t_ok(MPI_File_read_at(fh, fsz + 10, r, 100, MPI_BYTE, &st), "read_at past EOF")) {
            t_check_count(&st, MPI_BYTE, 0, "read_at past EOF");
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    free(r);
    t_unlink(path);
    t_end();
out:
    for (q = 0; q < t_np; q++) {
        t_view_free(&vs[q]);
    }
    free(vs), free(ns), free(own), free(b);
}

static void test_count_int(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Status st;
    int buf[16], c, e;
    MPI_Datatype pair;
    if (!t_begin("explicit.count_int")) {
        return;
    }
    t_fname(path, sizeof(path), "count_int");
    t_prefill(path, 4 * 100);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), "open")) {
        if (t_ok(MPI_File_read_at(fh, 4 * t_rank, buf, 16, MPI_INT, &st), "read_at ints")) {
            int want = 100 - t_rank >= 16 ? 16 : 100 - t_rank;
            t_check_count(&st, MPI_INT, want, "read_at ints");
            {
                unsigned char w[64];
                int j;
                for (j = 0; j < 64; j++) {
                    w[j] = t_pat_file(4 * t_rank + j);
                }
                t_cmp((unsigned char *)buf, w, (size_t)want * 4, 4 * t_rank, "read_at ints");
            }
        }
        /* 3 ints left, read as pairs: count undefined, 3 basic elements */
        MPI_Type_contiguous(2, MPI_INT, &pair);
        MPI_Type_commit(&pair);
        if (t_ok(MPI_File_read_at(fh, 4 * 97, buf, 8, pair, &st), "read_at EOF pairs")) {
            MPI_Get_count(&st, pair, &c);
            MPI_Get_elements(&st, pair, &e);
            if (c != MPI_UNDEFINED || e != 3) {
                t_failf("partial read of int pairs: count %d (want MPI_UNDEFINED) elements %d "
                        "(want 3)", c, e);
            }
        }
        MPI_Type_free(&pair);
        t_ok(MPI_File_close(&fh), "close");
    }
    t_unlink(path);
    t_end();
}

static void test_status_ignore(void)
{
    char path[1200];
    MPI_File fh;
    int tag = 5;
    long long n = 1000;
    unsigned char *b = pat_buf(t_rank, 0, 6 * n, tag), *r = malloc(6 * n), *w;
    MPI_Offset base = (MPI_Offset)t_rank * 6 * n;
    if (!t_begin("explicit.status_ignore")) {
        free(b), free(r);
        return;
    }
    t_fname(path, sizeof(path), "status_ignore");
    t_unlink(path);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh), "open")) {
        MPI_Request rq;
        t_ok(MPI_File_write_at(fh, base, b, (int)n, MPI_BYTE, MPI_STATUS_IGNORE), "write_at");
        t_ok(MPI_File_seek(fh, base + n, MPI_SEEK_SET), "seek");
        t_ok(MPI_File_write(fh, b + n, (int)n, MPI_BYTE, MPI_STATUS_IGNORE), "write");
        t_ok(MPI_File_write_at_all(fh, base + 2 * n, b + 2 * n, (int)n, MPI_BYTE,
                                   MPI_STATUS_IGNORE), "write_at_all");
        t_ok(MPI_File_seek(fh, base + 3 * n, MPI_SEEK_SET), "seek");
        t_ok(MPI_File_write_all(fh, b + 3 * n, (int)n, MPI_BYTE, MPI_STATUS_IGNORE),
             "write_all");
        t_ok(MPI_File_iwrite_at(fh, base + 4 * n, b + 4 * n, (int)n, MPI_BYTE, &rq), "iwrite_at");
        t_ok(MPI_Wait(&rq, MPI_STATUS_IGNORE), "wait");
        t_ok(MPI_File_write_at_all_begin(fh, base + 5 * n, b + 5 * n, (int)n, MPI_BYTE),
             "write_at_all_begin");
        t_ok(MPI_File_write_at_all_end(fh, b + 5 * n, MPI_STATUS_IGNORE), "write_at_all_end");
        t_ok(MPI_File_sync(fh), "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_sync(fh), "sync");
        memset(r, 0, 6 * n);
        t_ok(MPI_File_read_at(fh, base, r, (int)n, MPI_BYTE, MPI_STATUS_IGNORE), "read_at");
        t_ok(MPI_File_seek(fh, base + n, MPI_SEEK_SET), "seek");
        t_ok(MPI_File_read(fh, r + n, (int)n, MPI_BYTE, MPI_STATUS_IGNORE), "read");
        t_ok(MPI_File_read_at_all(fh, base + 2 * n, r + 2 * n, (int)n, MPI_BYTE,
                                  MPI_STATUS_IGNORE), "read_at_all");
        t_ok(MPI_File_seek(fh, base + 3 * n, MPI_SEEK_SET), "seek");
        t_ok(MPI_File_read_all(fh, r + 3 * n, (int)n, MPI_BYTE, MPI_STATUS_IGNORE), "read_all");
        t_ok(MPI_File_iread_at(fh, base + 4 * n, r + 4 * n, (int)n, MPI_BYTE, &rq), "iread_at");
        t_ok(MPI_Wait(&rq, MPI_STATUS_IGNORE), "wait");
        t_ok(MPI_File_read_at_all_begin(fh, base + 5 * n, r + 5 * n, (int)n, MPI_BYTE),
             "read_at_all_begin");
        t_ok(MPI_File_read_at_all_end(fh, r + 5 * n, MPI_STATUS_IGNORE), "read_at_all_end");
        t_cmp(r, b, 6 * n, base, "read back");
        t_ok(MPI_File_close(&fh), "close");
    }
    if (t_rank == 0) {
        int q;
        w = malloc(6 * n * t_np);
        for (q = 0; q < t_np; q++) {
            unsigned char *bq = pat_buf(q, 0, 6 * n, tag);
            memcpy(w + q * 6 * n, bq, 6 * n);
            free(bq);
        }
        t_verify_file(path, w, 6 * n * t_np);
        free(w);
    }
    t_unlink(path);
    free(b), free(r);
    t_end();
}

/* Individual file pointer with an interleaving view (etype int, 6-int blocks). */
static void test_seek(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Status st;
    t_view_t v;
    int tag = 7, nints = 1000, q;
    MPI_Offset pos, boff;
    unsigned char *b, *r;
    if (!t_begin("indiv.seek")) {
        return;
    }
    t_fname(path, sizeof(path), "seek");
    t_unlink(path);
    t_view_make(TV_RESIZED, t_rank, t_np, 1, &v);
    b = pat_buf(t_rank, 0, 4LL * nints, tag);
    r = malloc(4 * nints);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh), "open") &&
        t_ok(t_view_set(fh, &v), "set_view")) {
        /* ints [0,600) then seek CUR back and rewrite [500,1000) */
        t_ok(MPI_File_write(fh, b, 600, MPI_INT, &st), "write 600");
        t_check_count(&st, MPI_INT, 600, "write 600");
        MPI_File_get_position(fh, &pos);
        if (pos != 600) {
            t_failf("position after write %lld want 600", (long long)pos);
        }
        t_ok(MPI_File_seek(fh, -100, MPI_SEEK_CUR), "seek cur");
        MPI_File_get_position(fh, &pos);
        if (pos != 500) {
            t_failf("position after seek cur %lld want 500", (long long)pos);
        }
        t_ok(MPI_File_write(fh, b + 4 * 500, 500, MPI_INT, &st), "write 500");
        t_check_count(&st, MPI_INT, 500, "write 500");
        MPI_File_get_byte_offset(fh, 7, &boff);
        if (boff != t_view_off(&v, 28)) {
            t_failf("get_byte_offset(7) = %lld want %lld", (long long)boff, t_view_off(&v, 28));
        }
        MPI_File_get_byte_offset(fh, 999, &boff);
        if (boff != t_view_off(&v, 4 * 999)) {
            t_failf("get_byte_offset(999) = %lld want %lld", (long long)boff,
                    t_view_off(&v, 4 * 999));
        }
        t_ok(MPI_File_sync(fh), "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_sync(fh), "sync");
        /* read back: seek set to 333, read to the end, then [0,333) */
        t_ok(MPI_File_seek(fh, 333, MPI_SEEK_SET), "seek set");
        if (t_ok(MPI_File_read(fh, r + 4 * 333, nints - 333, MPI_INT, &st), "read tail")) {
            t_check_count(&st, MPI_INT, nints - 333, "read tail");
        }
        t_ok(MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek 0");
        t_ok(MPI_File_read(fh, r, 333, MPI_INT, &st), "read head");
        MPI_File_get_position(fh, &pos);
        if (pos != 333) {
            t_failf("position after read head %lld want 333", (long long)pos);
        }
        t_cmp(r, b, 4 * nints, 0, "read back");
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        t_apply_arg_t a;
        memset(&a, 0, sizeof(a));
        for (q = 0; q < t_np; q++) {
            t_view_t vq;
            t_view_make(TV_RESIZED, q, t_np, 0, &vq);
            t_view_apply(&vq, 0, 4LL * nints, q, tag, &a);
            t_view_free(&vq);
        }
        t_verify_file(path, a.img, a.end);
        free(a.img);
    }
    /* SEEK_END with the default view: file size + offset */
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), "open")) {
        MPI_Offset sz = 0;
        unsigned char c2[8];
        MPI_File_get_size(fh, &sz);
        t_ok(MPI_File_seek(fh, -5, MPI_SEEK_END), "seek end");
        MPI_File_get_position(fh, &pos);
        if (pos != sz - 5) {
            t_failf("seek end -5: position %lld want %lld", (long long)pos, (long long)sz - 5);
        }
        if (t_ok(MPI_File_read(fh, c2, 8, MPI_BYTE, &st), "read at end")) {
            t_check_count(&st, MPI_BYTE, 5, "read at end");
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    t_unlink(path);
    t_view_free(&v);
    free(b), free(r);
    t_end();
}

/* Default view, contiguous regions of varying size; odd ranks move 0 bytes. */
static void test_coll_zero(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Status st;
    int tag = 9, q;
    long long *ns = calloc((size_t)t_np, sizeof(long long)), *off, mine;
    t_view_t *vs = calloc((size_t)t_np, sizeof(t_view_t));
    int *own = calloc((size_t)t_np, sizeof(int));
    unsigned char *b, *r;
    if (!t_begin("coll.at_all.zero")) {
        free(ns), free(vs), free(own);
        return;
    }
    off = calloc((size_t)t_np + 1, sizeof(long long));
    for (q = 0; q < t_np; q++) {
        ns[q] = (t_np > 1 && q % 2 == 1) ? 0 : 9000 + 1111 * q;
        off[q + 1] = off[q] + ns[q];
        t_view_contig(&vs[q], off[q], ns[q]);
        own[q] = q;
    }
    mine = ns[t_rank];
    b = pat_buf(t_rank, 0, mine, tag);
    r = malloc(mine + 1);
    t_fname(path, sizeof(path), "coll_zero");
    t_unlink(path);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh), "open")) {
        if (t_ok(MPI_File_write_at_all(fh, off[t_rank], b, (int)mine, MPI_BYTE, &st),
                 "write_at_all")) {
            t_check_count(&st, MPI_BYTE, (int)mine, "write_at_all");
        }
        t_ok(MPI_File_sync(fh), "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_sync(fh), "sync");
        if (t_ok(MPI_File_read_at_all(fh, off[t_rank], r, (int)mine, MPI_BYTE, &st),
                 "read_at_all")) {
            t_check_count(&st, MPI_BYTE, (int)mine, "read_at_all");
            t_cmp(r, b, mine, off[t_rank], "read_at_all");
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    verify_views(path, vs, ns, t_np, own, tag);
    t_unlink(path);
    for (q = 0; q < t_np; q++) {
        t_view_free(&vs[q]);
    }
    free(ns), free(vs), free(own), free(off), free(b), free(r);
    t_end();
}

/* etype MPI_INT with contiguous filetype: offsets and positions in ints. */
static void test_coll_int(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Status st;
    t_mem_t m;
    int tag = 11, q, nints = 3000;
    MPI_Offset pos;
    MPI_Datatype ft;
    if (!t_begin("coll.all.etype_int")) {
        return;
    }
    t_fname(path, sizeof(path), "coll_int");
    t_unlink(path);
    MPI_Type_contiguous(2, MPI_INT, &ft);
    MPI_Type_commit(&ft);
    t_mem_make(&m, T_MEM_VECTOR, MPI_INT, 4, 4LL * nints);
    t_mem_fill(&m, t_rank, 0, tag);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh), "open") &&
        t_ok(MPI_File_set_view(fh, 8, MPI_INT, ft, "native", MPI_INFO_NULL), "set_view")) {
        t_ok(MPI_File_seek(fh, (MPI_Offset)t_rank * nints, MPI_SEEK_SET), "seek");
        if (t_ok(MPI_File_write_all(fh, m.buf, m.count, m.dt, &st), "write_all")) {
            t_check_count(&st, m.dt, m.count, "write_all");
        }
        MPI_File_get_position(fh, &pos);
        if (pos != (MPI_Offset)(t_rank + 1) * nints) {
            t_failf("position after write_all %lld want %lld", (long long)pos,
                    (long long)(t_rank + 1) * nints);
        }
        t_ok(MPI_File_sync(fh), "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_sync(fh), "sync");
        t_ok(MPI_File_seek(fh, (MPI_Offset)t_rank * nints, MPI_SEEK_SET), "seek");
        {
            unsigned char *w = pat_buf(t_rank, 0, 4LL * nints, tag);
            t_mem_t m2;
            t_mem_make(&m2, T_MEM_RESIZED, MPI_INT, 4, 4LL * nints);
            if (t_ok(MPI_File_read_all(fh, m2.buf, m2.count, m2.dt, &st), "read_all")) {
                t_check_count(&st, m2.dt, m2.count, "read_all");
                t_mem_check(&m2, w, "read_all");
            }
            t_mem_free(&m2);
            free(w);
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        t_apply_arg_t a;
        memset(&a, 0, sizeof(a));
        for (q = 0; q < t_np; q++) {
            t_view_t vq;
            t_view_contig(&vq, 8 + 4LL * nints * q, 4LL * nints);
            t_view_apply(&vq, 0, 4LL * nints, q, tag, &a);
            t_view_free(&vq);
        }
        t_verify_file(path, a.img, a.end);
        free(a.img);
    }
    t_unlink(path);
    t_mem_free(&m);
    MPI_Type_free(&ft);
    t_end();
}

/* Split collectives. which: 0 write_all, 1 write_at_all; view kind k. */
static void test_split(int k, int at)
{
    char name[96], path[1200];
    MPI_File fh;
    MPI_Status st;
    t_view_t v;
    t_mem_t m;
    int tag = 13 + at, q;
    long long h;
    snprintf(name, sizeof(name), "split.%s.%s", at ? "write_at_all.read_at_all" :
             "write_all.read_all", tv_names[k]);
    if (!t_begin(name)) {
        return;
    }
    t_fname(path, sizeof(path), name);
    t_unlink(path);
    t_view_make(k, t_rank, t_np, 1, &v);
    h = (v.nbytes / v.esize / 2) * v.esize;
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh), "open") &&
        t_ok(t_view_set(fh, &v), "set_view")) {
        /* two split collectives: [0,h) then [h,n) */
        long long parts[3] = {0, h, v.nbytes};
        int p;
        for (p = 0; p < 2; p++) {
            long long n = parts[p + 1] - parts[p];
            t_mem_make(&m, p ? T_MEM_RESIZED : T_MEM_VECTOR, v.etype, v.esize, n);
            t_mem_fill(&m, t_rank, parts[p], tag);
            if (at) {
                t_ok(MPI_File_write_at_all_begin(fh, parts[p] / v.esize, m.buf, m.count, m.dt),
                     "write_at_all_begin");
                if (t_ok(MPI_File_write_at_all_end(fh, m.buf, &st), "write_at_all_end")) {
                    t_check_count(&st, m.dt, m.count, "write_at_all_end");
                }
            } else {
                t_ok(MPI_File_write_all_begin(fh, m.buf, m.count, m.dt), "write_all_begin");
                if (t_ok(MPI_File_write_all_end(fh, m.buf, &st), "write_all_end")) {
                    t_check_count(&st, m.dt, m.count, "write_all_end");
                }
            }
            t_mem_free(&m);
        }
        t_ok(MPI_File_sync(fh), "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_sync(fh), "sync");
        t_ok(MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek");
        for (p = 1; p >= 0; p--) {
            long long n = parts[p + 1] - parts[p];
            unsigned char *w = pat_buf(t_rank, parts[p], n, tag);
            t_mem_make(&m, p ? T_MEM_CONTIG : T_MEM_RESIZED, v.etype, v.esize, n);
            if (at) {
                t_ok(MPI_File_read_at_all_begin(fh, parts[p] / v.esize, m.buf, m.count, m.dt),
                     "read_at_all_begin");
                if (t_ok(MPI_File_read_at_all_end(fh, m.buf, &st), "read_at_all_end")) {
                    t_check_count(&st, m.dt, m.count, "read_at_all_end");
                    t_mem_check(&m, w, "read_at_all");
                }
            } else {
                t_ok(MPI_File_seek(fh, parts[p] / v.esize, MPI_SEEK_SET), "seek");
                t_ok(MPI_File_read_all_begin(fh, m.buf, m.count, m.dt), "read_all_begin");
                if (t_ok(MPI_File_read_all_end(fh, m.buf, &st), "read_all_end")) {
                    t_check_count(&st, m.dt, m.count, "read_all_end");
                    t_mem_check(&m, w, "read_all");
                }
            }
            free(w);
            t_mem_free(&m);
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        t_apply_arg_t a;
        memset(&a, 0, sizeof(a));
        for (q = 0; q < t_np; q++) {
            t_view_t vq;
            t_view_make(k, q, t_np, 0, &vq);
            t_view_apply(&vq, 0, vq.nbytes, q, tag, &a);
            t_view_free(&vq);
        }
        t_verify_file(path, a.img, a.end);
        free(a.img);
    }
    t_unlink(path);
    t_view_free(&v);
    t_end();
}

/* One file, two handles on MPI_COMM_WORLD. */
static void test_twohandles(void)
{
    char path[1200];
    MPI_File f1, f2;
    MPI_Status st;
    int tag = 17, nxt = (t_rank + 1) % t_np, q;
    long long n = 5003;
    unsigned char *b1 = pat_buf(t_rank, 0, n, tag), *b2 = pat_buf(t_rank, n, n, tag);
    unsigned char *r = malloc(n), *w;
    if (!t_begin("twohandles")) {
        free(b1), free(b2), free(r);
        return;
    }
    t_fname(path, sizeof(path), "twohandles");
    t_unlink(path);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &f1), "open 1")) {
        if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &f2),
                 "open 2")) {
            /* region A = [0, np*n) via f1, region B = [np*n, 2*np*n) via f2 */
            t_ok(MPI_File_write_at(f1, t_rank * n, b1, (int)n, MPI_BYTE, &st), "write_at f1");
            t_ok(MPI_File_sync(f1), "sync f1");
            MPI_Barrier(MPI_COMM_WORLD);
            t_ok(MPI_File_sync(f2), "sync f2");
            if (t_ok(MPI_File_read_at(f2, nxt * n, r, (int)n, MPI_BYTE, &st), "read_at f2")) {
                t_check_count(&st, MPI_BYTE, (int)n, "read_at f2");
                w = pat_buf(nxt, 0, n, tag);
                t_cmp(r, w, n, nxt * n, "f1 -> f2");
                free(w);
            }
            t_ok(MPI_File_write_at_all(f2, (t_np + t_rank) * n, b2, (int)n, MPI_BYTE, &st),
                 "write_at_all f2");
            t_ok(MPI_File_sync(f2), "sync f2");
            MPI_Barrier(MPI_COMM_WORLD);
            t_ok(MPI_File_sync(f1), "sync f1");
            if (t_ok(MPI_File_read_at_all(f1, (t_np + nxt) * n, r, (int)n, MPI_BYTE, &st),
                     "read_at_all f1")) {
                w = pat_buf(nxt, n, n, tag);
                t_cmp(r, w, n, (t_np + nxt) * n, "f2 -> f1");
                free(w);
            }
            t_ok(MPI_File_close(&f2), "close 2");
        }
        t_ok(MPI_File_close(&f1), "close 1");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        t_apply_arg_t a;
        memset(&a, 0, sizeof(a));
        for (q = 0; q < t_np; q++) {
            t_view_t vq;
            t_view_contig(&vq, q * n, n);
            t_view_apply(&vq, 0, n, q, tag, &a);
            t_view_free(&vq);
            t_view_contig(&vq, (t_np + q) * n - n, 2 * n); /* stream [n,2n) lands at (np+q)*n */
            t_view_apply(&vq, n, n, q, tag, &a);
            t_view_free(&vq);
        }
        t_verify_file(path, a.img, a.end);
        free(a.img);
    }
    t_unlink(path);
    free(b1), free(b2), free(r);
    t_end();
}

/* Every rank opens its own file on MPI_COMM_SELF. */
static void test_self_private(void)
{
    char path[1200], tag_s[32];
    MPI_File fh;
    MPI_Status st;
    t_view_t v;
    t_mem_t m;
    int tag = 19;
    long long h;
    if (!t_begin("self.private")) {
        return;
    }
    snprintf(tag_s, sizeof(tag_s), "self_r%d", t_rank);
    t_fname(path, sizeof(path), tag_s);
    unlink(path);
    /* indexed view with holes (model of rank 0 of 1); independent writes */
    t_view_make(TV_INDEXED, 0, 1, 1, &v);
    h = (v.nbytes / 2);
    if (t_ok(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fh), "open self") &&
        t_ok(t_view_set(fh, &v), "set_view")) {
        t_mem_make(&m, T_MEM_VECTOR, v.etype, v.esize, v.nbytes - h);
        t_mem_fill(&m, t_rank, h, tag);
        t_ok(MPI_File_write_at(fh, h, m.buf, m.count, m.dt, &st), "write_at");
        t_mem_free(&m);
        t_mem_make(&m, T_MEM_CONTIG, v.etype, v.esize, h);
        t_mem_fill(&m, t_rank, 0, tag);
        t_ok(MPI_File_write(fh, m.buf, m.count, m.dt, &st), "write");
        t_mem_free(&m);
        t_ok(MPI_File_sync(fh), "sync");
        {
            unsigned char *w = pat_buf(t_rank, 0, v.nbytes, tag);
            t_mem_make(&m, T_MEM_RESIZED, v.etype, v.esize, v.nbytes - v.nbytes % 3);
            if (t_ok(MPI_File_read_at_all(fh, 0, m.buf, m.count, m.dt, &st), "read_at_all")) {
                t_check_count(&st, m.dt, m.count, "read_at_all");
                t_mem_check(&m, w, "read_at_all self");
            }
            t_mem_free(&m);
            free(w);
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    {
        t_apply_arg_t a;
        memset(&a, 0, sizeof(a));
        t_view_apply(&v, 0, v.nbytes, t_rank, tag, &a);
        t_verify_file(path, a.img, a.end);
        free(a.img);
    }
    unlink(path);
    t_view_free(&v);
    t_end();
}

/* All ranks open the same file on MPI_COMM_SELF; then read it on WORLD. */
static void test_self_shared(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Status st;
    t_view_t v;
    t_mem_t m;
    int tag = 21, q;
    long long h;
    if (!t_begin("self.shared")) {
        return;
    }
    t_fname(path, sizeof(path), "self_shared");
    t_unlink(path);
    t_view_make(TV_RESIZED, t_rank, t_np, 1, &v);
    h = (v.nbytes / 4 / 2) * 4;
    if (t_ok(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fh), "open self") &&
        t_ok(t_view_set(fh, &v), "set_view")) {
        t_mem_make(&m, T_MEM_RESIZED, v.etype, v.esize, h);
        t_mem_fill(&m, t_rank, 0, tag);
        t_ok(MPI_File_write_at(fh, 0, m.buf, m.count, m.dt, &st), "write_at");
        t_mem_free(&m);
        t_mem_make(&m, T_MEM_CONTIG, v.etype, v.esize, v.nbytes - h);
        t_mem_fill(&m, t_rank, h, tag);
        t_ok(MPI_File_write_at_all(fh, h / 4, m.buf, m.count, m.dt, &st), "write_at_all self");
        t_mem_free(&m);
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        t_apply_arg_t a;
        memset(&a, 0, sizeof(a));
        for (q = 0; q < t_np; q++) {
            t_view_t vq;
            t_view_make(TV_RESIZED, q, t_np, 0, &vq);
            t_view_apply(&vq, 0, vq.nbytes, q, tag, &a);
            t_view_free(&vq);
        }
        t_verify_file(path, a.img, a.end);
        free(a.img);
    }
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
             "open world") &&
        t_ok(t_view_set(fh, &v), "set_view")) {
        unsigned char *w = pat_buf(t_rank, 0, v.nbytes, tag);
        t_mem_make(&m, T_MEM_VECTOR, v.etype, v.esize, v.nbytes);
        if (t_ok(MPI_File_read_all(fh, m.buf, m.count, m.dt, &st), "read_all")) {
            t_check_count(&st, m.dt, m.count, "read_all");
            t_mem_check(&m, w, "read_all world");
        }
        t_mem_free(&m);
        free(w);
        t_ok(MPI_File_close(&fh), "close");
    }
    t_unlink(path);
    t_view_free(&v);
    {
        /* stock fcoll/two_phase does an unlocked read-modify-write over the
         * holes of the interleaved view, racing with the other handles */
        const char *cfg = getenv("SFIO_TEST_CONFIG");
        int x = t_is_stock() && cfg != NULL && strcmp(cfg, "fcoll_two_phase") == 0;
        t_end_x(x, "stock fcoll/two_phase read-modify-write without locks loses "
                   "concurrent writes of other file handles");
    }
}

/* One file open on WORLD and on SELF at the same time. */
static void test_self_world(void)
{
    char path[1200];
    MPI_File fw, fs;
    MPI_Status st;
    int tag = 23, nxt = (t_rank + 1) % t_np;
    long long n = 7001;
    unsigned char *b = pat_buf(t_rank, 0, n, tag), *r = malloc(n), *w;
    if (!t_begin("self+world")) {
        free(b), free(r);
        return;
    }
    t_fname(path, sizeof(path), "self_world");
    t_unlink(path);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fw), "open world")) {
        if (t_ok(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fs),
                 "open self")) {
            t_ok(MPI_File_write_at(fs, t_rank * n, b, (int)n, MPI_BYTE, &st), "write_at self");
            t_ok(MPI_File_sync(fs), "sync self");
            MPI_Barrier(MPI_COMM_WORLD);
            t_ok(MPI_File_sync(fw), "sync world");
            if (t_ok(MPI_File_read_at_all(fw, nxt * n, r, (int)n, MPI_BYTE, &st),
                     "read_at_all world")) {
                t_check_count(&st, MPI_BYTE, (int)n, "read_at_all world");
                w = pat_buf(nxt, 0, n, tag);
                t_cmp(r, w, n, nxt * n, "self -> world");
                free(w);
            }
            t_ok(MPI_File_close(&fs), "close self");
        }
        t_ok(MPI_File_close(&fw), "close world");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        t_apply_arg_t a;
        int q;
        memset(&a, 0, sizeof(a));
        for (q = 0; q < t_np; q++) {
            t_view_t vq;
            t_view_contig(&vq, q * n, n);
            t_view_apply(&vq, 0, n, q, tag, &a);
            t_view_free(&vq);
        }
        t_verify_file(path, a.img, a.end);
        free(a.img);
    }
    t_unlink(path);
    free(b), free(r);
    t_end();
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "calls");
    test_explicit();
    test_count_int();
    test_status_ignore();
    test_seek();
    test_coll_zero();
    test_coll_int();
    test_split(TV_SUBARRAY2D, 0);
    test_split(TV_DARRAY_BLOCK, 1);
    test_split(TV_RESIZED, 0);
    test_split(TV_SUBARRAY3D, 1);
    test_twohandles();
    test_self_private();
    test_self_shared();
    test_self_world();
    return t_finish();
}
