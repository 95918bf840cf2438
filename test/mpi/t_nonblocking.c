/*
 * t_nonblocking.c: non-blocking MPI-IO (MPI-3.1 iwrite/iread families).
 *
 *   nb.iwrite_at.iread_at.multi  4 outstanding iwrite_at / iread_at on disjoint
 *                                parts of an indexed view (holes), completed
 *                                with MPI_Waitall / MPI_Testall polling
 *   nb.iwrite.iread.pointer      individual pointer advances when a request is
 *                                posted (vector view), completion by MPI_Waitany
 *   nb.mixed                     an iwrite_at pending while blocking write_at,
 *                                write_all and sync run on the same handle
 *   nb.iwrite_all.<k> / nb.iwrite_at_all.<k>[.zero]
 *                                non-blocking collectives with subarray, darray
 *                                and resized views, MPI_Test polling; .zero:
 *                                every third rank contributes 0 bytes; read back
 *                                with iread_all / iread_at_all
 * Status counts come from the completing call; files are checked with POSIX.
 */
#include "sfio_mpiviews.h"

/* Rank 0: compare path with image of view kind k, stream [0, n(q)) of each rank. */
static int verify_kind(const char *path, int k, int zero, int tag)
{
    int holes = 0, q;
    if (t_rank == 0) {
        t_apply_arg_t a;
        memset(&a, 0, sizeof(a));
        for (q = 0; q < t_np; q++) {
            t_view_t vq;
            t_view_make(k, q, t_np, 0, &vq);
            t_view_apply(&vq, 0, (zero && t_np > 1 && q % 3 == 1) ? 0 : vq.nbytes, q, tag, &a);
            t_view_free(&vq);
        }
        t_verify_file(path, a.img, a.end);
        holes = a.covered < a.end;
        free(a.img);
    }
    MPI_Bcast(&holes, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return holes;
}

static unsigned char *pat_buf(int q, long long start, long long n, int tag)
{
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    long long j;
    for (j = 0; j < n; j++) {
        b[j] = t_pat_data(q, start + j, tag);
    }
    return b;
}

#define NP 4

static void test_multi(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Request rq[NP];
    MPI_Status st[NP];
    t_view_t v;
    t_mem_t m[NP];
    long long cut[NP + 1];
    int tag = 31, i, done = 0;
    if (!t_begin("nb.iwrite_at.iread_at.multi")) {
        return;
    }
    t_fname(path, sizeof(path), "multi");
    t_unlink(path);
    t_view_make(TV_INDEXED, t_rank, t_np, 1, &v);
    for (i = 0; i <= NP; i++) {
        cut[i] = (v.nbytes / NP / 3) * 3 * i;
    }
    cut[NP] = v.nbytes;
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh), "open") &&
        t_ok(t_view_set(fh, &v), "set_view")) {
        for (i = 0; i < NP; i++) {
            t_mem_make(&m[i], i % 3, v.etype, v.esize, cut[i + 1] - cut[i]);
            t_mem_fill(&m[i], t_rank, cut[i], tag);
        }
        for (i = NP - 1; i >= 0; i--) {
            t_ok(MPI_File_iwrite_at(fh, cut[i], m[i].buf, m[i].count, m[i].dt, &rq[i]),
                 "iwrite_at");
        }
        if (t_ok(MPI_Waitall(NP, rq, st), "waitall")) {
            for (i = 0; i < NP; i++) {
                t_check_count(&st[i], m[i].dt, m[i].count, "iwrite_at");
            }
        }
        t_ok(MPI_File_sync(fh), "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_sync(fh), "sync");
        for (i = 0; i < NP; i++) {
            t_mem_free(&m[i]);
            t_mem_make(&m[i], (i + 1) % 3, v.etype, v.esize, cut[i + 1] - cut[i]);
            t_ok(MPI_File_iread_at(fh, cut[i], m[i].buf, m[i].count, m[i].dt, &rq[i]),
                 "iread_at");
        }
        while (!done) {
            if (!t_ok(MPI_Testall(NP, rq, &done, st), "testall")) {
                break;
            }
        }
        for (i = 0; i < NP; i++) {
            unsigned char *w = pat_buf(t_rank, cut[i], cut[i + 1] - cut[i], tag);
            t_check_count(&st[i], m[i].dt, m[i].count, "iread_at");
            t_mem_check(&m[i], w, "iread_at");
            free(w);
            t_mem_free(&m[i]);
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    verify_kind(path, TV_INDEXED, 0, tag);
    t_unlink(path);
    t_view_free(&v);
    t_end();
}

static void test_pointer(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Request rq[3];
    MPI_Status st;
    MPI_Offset pos;
    t_view_t v;
    t_mem_t m[3];
    long long cut[4];
    int tag = 33, i, idx;
    if (!t_begin("nb.iwrite.iread.pointer")) {
        return;
    }
    t_fname(path, sizeof(path), "pointer");
    t_unlink(path);
    t_view_make(TV_VECTOR, t_rank, t_np, 1, &v);
    cut[0] = 0, cut[1] = 4 * 999, cut[2] = 4 * 2001, cut[3] = v.nbytes;
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh), "open") &&
        t_ok(t_view_set(fh, &v), "set_view")) {
        for (i = 0; i < 3; i++) {
            t_mem_make(&m[i], i, v.etype, v.esize, cut[i + 1] - cut[i]);
            t_mem_fill(&m[i], t_rank, cut[i], tag);
            t_ok(MPI_File_iwrite(fh, m[i].buf, m[i].count, m[i].dt, &rq[i]), "iwrite");
            MPI_File_get_position(fh, &pos);
            if (pos != cut[i + 1] / 4) {
                t_failf("position after posting iwrite %d: %lld want %lld", i, (long long)pos,
                        cut[i + 1] / 4);
            }
        }
        for (i = 0; i < 3; i++) {
            if (t_ok(MPI_Waitany(3, rq, &idx, &st), "waitany") && idx != MPI_UNDEFINED) {
                t_check_count(&st, m[idx].dt, m[idx].count, "iwrite");
            }
        }
        t_ok(MPI_File_sync(fh), "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_sync(fh), "sync");
        t_ok(MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek");
        for (i = 0; i < 3; i++) {
            t_mem_free(&m[i]);
            t_mem_make(&m[i], 2 - i, v.etype, v.esize, cut[i + 1] - cut[i]);
            t_ok(MPI_File_iread(fh, m[i].buf, m[i].count, m[i].dt, &rq[i]), "iread");
        }
        MPI_File_get_position(fh, &pos);
        if (pos != v.nbytes / 4) {
            t_failf("position after posting iread: %lld want %lld", (long long)pos,
                    v.nbytes / 4);
        }
        for (i = 0; i < 3; i++) {
            unsigned char *w = pat_buf(t_rank, cut[i], cut[i + 1] - cut[i], tag);
            if (t_ok(MPI_Wait(&rq[i], &st), "wait")) {
                t_check_count(&st, m[i].dt, m[i].count, "iread");
                t_mem_check(&m[i], w, "iread");
            }
            free(w);
            t_mem_free(&m[i]);
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    verify_kind(path, TV_VECTOR, 0, tag);
    t_unlink(path);
    t_view_free(&v);
    t_end();
}

static void test_mixed(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Request rq;
    MPI_Status st;
    long long n = 6000, base = (long long)t_rank * 3 * n;
    int tag = 35, q;
    unsigned char *b = pat_buf(t_rank, 0, 3 * n, tag), *r = malloc(3 * n);
    if (!t_begin("nb.mixed")) {
        free(b), free(r);
        return;
    }
    t_fname(path, sizeof(path), "mixed");
    t_unlink(path);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh), "open")) {
        t_ok(MPI_File_iwrite_at(fh, base + 2 * n, b + 2 * n, (int)n, MPI_BYTE, &rq), "iwrite_at");
        t_ok(MPI_File_write_at(fh, base, b, (int)n, MPI_BYTE, &st), "write_at");
        t_ok(MPI_File_seek(fh, base + n, MPI_SEEK_SET), "seek");
        t_ok(MPI_File_write_all(fh, b + n, (int)n, MPI_BYTE, &st), "write_all");
        if (t_ok(MPI_Wait(&rq, &st), "wait")) {
            t_check_count(&st, MPI_BYTE, (int)n, "iwrite_at");
        }
        t_ok(MPI_File_sync(fh), "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_sync(fh), "sync");
        t_ok(MPI_File_iread_at(fh, base, r, (int)(3 * n), MPI_BYTE, &rq), "iread_at");
        if (t_ok(MPI_Wait(&rq, &st), "wait")) {
            t_check_count(&st, MPI_BYTE, (int)(3 * n), "iread_at");
            t_cmp(r, b, 3 * n, base, "iread_at");
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        unsigned char *w = malloc(3 * n * t_np);
        for (q = 0; q < t_np; q++) {
            unsigned char *bq = pat_buf(q, 0, 3 * n, tag);
            memcpy(w + 3 * n * q, bq, 3 * n);
            free(bq);
        }
        t_verify_file(path, w, 3 * n * t_np);
        free(w);
    }
    t_unlink(path);
    free(b), free(r);
    t_end();
}

static void test_coll(int k, int at, int zero)
{
    char name[96], path[1200];
    MPI_File fh;
    MPI_Request rq;
    MPI_Status st;
    t_view_t v;
    t_mem_t m;
    long long n;
    int tag = 37 + k + at, flag = 0;
    unsigned char *w;
    snprintf(name, sizeof(name), "nb.%s.%s%s", at ? "iwrite_at_all.iread_at_all" :
             "iwrite_all.iread_all", tv_names[k], zero ? ".zero" : "");
    if (!t_begin(name)) {
        return;
    }
    t_fname(path, sizeof(path), name);
    t_unlink(path);
    t_view_make(k, t_rank, t_np, 1, &v);
    n = (zero && t_np > 1 && t_rank % 3 == 1) ? 0 : v.nbytes;
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh), "open") &&
        t_ok(t_view_set(fh, &v), "set_view")) {
        t_mem_make(&m, at ? T_MEM_RESIZED : T_MEM_VECTOR, v.etype, v.esize, n);
        t_mem_fill(&m, t_rank, 0, tag);
        if (at) {
            t_ok(MPI_File_iwrite_at_all(fh, 0, m.buf, m.count, m.dt, &rq), "iwrite_at_all");
        } else {
            t_ok(MPI_File_iwrite_all(fh, m.buf, m.count, m.dt, &rq), "iwrite_all");
        }
        while (!flag) {
            if (!t_ok(MPI_Test(&rq, &flag, &st), "test")) {
                break;
            }
        }
        t_check_count(&st, m.dt, m.count, "iwrite collective");
        t_mem_free(&m);
        t_ok(MPI_File_sync(fh), "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_sync(fh), "sync");
        t_mem_make(&m, at ? T_MEM_CONTIG : T_MEM_RESIZED, v.etype, v.esize, n);
        if (at) {
            t_ok(MPI_File_iread_at_all(fh, 0, m.buf, m.count, m.dt, &rq), "iread_at_all");
        } else {
            t_ok(MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek");
            t_ok(MPI_File_iread_all(fh, m.buf, m.count, m.dt, &rq), "iread_all");
        }
        if (t_ok(MPI_Wait(&rq, &st), "wait")) {
            t_check_count(&st, m.dt, m.count, "iread collective");
            w = pat_buf(t_rank, 0, n, tag);
            t_mem_check(&m, w, "iread collective");
            free(w);
        }
        t_mem_free(&m);
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* stock: the non-blocking path uses ipwritev, not the data-sieving pwritev */
    verify_kind(path, k, zero, tag);
    t_unlink(path);
    t_view_free(&v);
    t_end();
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "nonblocking");
    test_multi();
    test_pointer();
    test_mixed();
    test_coll(TV_SUBARRAY2D, 0, 0);
    test_coll(TV_DARRAY_CYCLIC, 1, 0);
    test_coll(TV_RESIZED, 0, 1);
    test_coll(TV_SUBARRAY3D, 1, 1);
    test_coll(TV_DARRAY_BLOCK, 0, 0);
    test_coll(TV_INDEXED, 1, 0);
    return t_finish();
}
