/*
 * t_views.c: every file view kind (sfio_mpiviews.h) written and read through
 * each access family, with contiguous and non-contiguous memory.
 *
 * Per view kind:
 *   model.<k>                 the hand-computed block list matches the MPI
 *                             filetype (size, extent, MPI_Pack of a pattern)
 *   <k>.write_all.mc          collective, individual file pointer
 *   <k>.write_at_all.mv.zero  collective explicit offset, two calls (second half
 *                             first), every third rank contributes zero bytes
 *   <k>.write_at.mr           independent explicit offset, two calls
 *   <k>.write.mv              independent individual pointer + seek, two calls
 *   <k>.read_all.mv / read_at_all.mc.zero / read_at.mr / read.mc  the same
 *                             reads from a file prefilled with POSIX I/O
 * Writes are checked by reading the whole file with POSIX I/O on rank 0 and
 * comparing it with the image computed from every rank's view (holes = 0).
 * Reads are checked against the prefill pattern at the mapped offsets, and
 * memory gaps of non-contiguous buffers must stay untouched.
 */
#include "sfio_mpiviews.h"

enum { M_AT = 0, M_INDIV, M_AT_ALL, M_ALL };
static const char *mode_name[] = {"at", "", "at_all", "all"};

static int zero_rank(int q, int zero)
{
    return zero && t_np > 1 && q % 3 == 1;
}

/* Units (etypes) in the first part when splitting n bytes in two pieces. */
static long long half_bytes(const t_view_t *v, long long n)
{
    long long units = n / v->esize;
    return (units / 2 / 3) * 3 * v->esize; /* multiple of 3 units: keeps mem layouts */
}

/*
 * Transfer stream bytes [start, start+n) of this rank through fh (view set).
 * rw: 0 write, 1 read. For writes the buffer holds t_pat_data(rank, pos, tag);
 * reads are checked against the prefill pattern.
 */
static void xfer(MPI_File fh, const t_view_t *v, int mode, int rw, long long start,
                 long long n, int memkind, int tag)
{
    t_mem_t m;
    MPI_Status st;
    MPI_Offset off = start / v->esize;
    int rc = MPI_SUCCESS;
    char what[96];
    t_mem_make(&m, memkind, v->etype, v->esize, n);
    snprintf(what, sizeof(what), "%s_%s [%lld,+%lld)", rw ? "read" : "write", mode_name[mode],
             start, n);
    memset(&st, 0, sizeof(st));
    if (rw == 0) {
        t_mem_fill(&m, t_rank, start, tag);
        switch (mode) {
        case M_AT: rc = MPI_File_write_at(fh, off, m.buf, m.count, m.dt, &st); break;
        case M_INDIV:
            rc = MPI_File_seek(fh, off, MPI_SEEK_SET);
            if (rc == MPI_SUCCESS) {
                rc = MPI_File_write(fh, m.buf, m.count, m.dt, &st);
            }
            break;
        case M_AT_ALL: rc = MPI_File_write_at_all(fh, off, m.buf, m.count, m.dt, &st); break;
        case M_ALL: rc = MPI_File_write_all(fh, m.buf, m.count, m.dt, &st); break;
        }
    } else {
        switch (mode) {
        case M_AT: rc = MPI_File_read_at(fh, off, m.buf, m.count, m.dt, &st); break;
        case M_INDIV:
            rc = MPI_File_seek(fh, off, MPI_SEEK_SET);
            if (rc == MPI_SUCCESS) {
                rc = MPI_File_read(fh, m.buf, m.count, m.dt, &st);
            }
            break;
        case M_AT_ALL: rc = MPI_File_read_at_all(fh, off, m.buf, m.count, m.dt, &st); break;
        case M_ALL: rc = MPI_File_read_all(fh, m.buf, m.count, m.dt, &st); break;
        }
    }
    if (t_ok(rc, what)) {
        t_check_count(&st, m.dt, m.count, what);
        if (rw == 1) {
            unsigned char *want = t_view_expect_prefill(v, start, n);
            t_mem_check(&m, want, what);
            free(want);
        }
        if (mode == M_INDIV) {
            MPI_Offset pos = -1;
            MPI_File_get_position(fh, &pos);
            if (pos != off + n / v->esize) {
                t_failf("%s: position after = %lld, want %lld", what, (long long)pos,
                        (long long)(off + n / v->esize));
            }
        }
    }
    t_mem_free(&m);
}

/* Check the hand-computed model of view kind k against the MPI filetype. */
static void model_check(int k)
{
    t_view_t v;
    MPI_Aint lb, ext;
    int sz, pos = 0;
    long long i, j, o;
    unsigned char *src, *packed;
    char name[64];
    snprintf(name, sizeof(name), "model.%s", tv_names[k]);
    if (!t_begin(name)) {
        return;
    }
    t_view_make(k, t_rank, t_np, 1, &v);
    MPI_Type_size(v.ftype, &sz);
    MPI_Type_get_extent(v.ftype, &lb, &ext);
    if (sz != v.tsize || ext != v.extent) {
        t_failf("type size %d extent %ld, model %lld %lld", sz, (long)ext, v.tsize, v.extent);
    } else {
        src = malloc((size_t)v.extent + 64);
        packed = malloc((size_t)v.tsize + 1);
        for (i = 0; i < v.extent + 64; i++) {
            src[i] = t_pat_file(i);
        }
        MPI_Pack(src, 1, v.ftype, packed, (int)v.tsize + 1, &pos, MPI_COMM_SELF);
        for (i = 0, o = 0; i < v.nb && !t_lfail; i++) {
            for (j = 0; j < v.b[i].len; j++, o++) {
                if (packed[o] != t_pat_file(v.b[i].off + j)) {
                    t_failf("model block %lld byte %lld: MPI packs %u, model %u", i, j,
                            packed[o], t_pat_file(v.b[i].off + j));
                    break;
                }
            }
        }
        free(src);
        free(packed);
    }
    t_view_free(&v);
    t_end();
}

static void write_test(int k, int mode, int memkind, int zero)
{
    char name[96], path[1200];
    t_view_t v;
    MPI_File fh;
    long long n, h;
    int tag = 1 + mode + 4 * k, holes = 0;
    const char *xr;
    snprintf(name, sizeof(name), "%s.write%s%s.%s%s", tv_names[k], mode == M_INDIV ? "" : "_",
             mode_name[mode], t_mem_name[memkind], zero ? ".zero" : "");
    if (!t_begin(name)) {
        return;
    }
    t_fname(path, sizeof(path), name);
    t_unlink(path);
    t_view_make(k, t_rank, t_np, 1, &v);
    n = zero_rank(t_rank, zero) ? 0 : v.nbytes;
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh), "open")) {
        if (t_ok(t_view_set(fh, &v), "set_view")) {
            if (mode == M_ALL) {
                xfer(fh, &v, mode, 0, 0, n, memkind, tag);
            } else {
                /* second part first, then the first part */
                h = half_bytes(&v, n);
                xfer(fh, &v, mode, 0, h, n - h, memkind, tag);
                xfer(fh, &v, mode, 0, 0, h, memkind, tag);
            }
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        t_apply_arg_t a;
        int q;
        memset(&a, 0, sizeof(a));
        for (q = 0; q < t_np; q++) {
            t_view_t vq;
            t_view_make(k, q, t_np, 0, &vq);
            t_view_apply(&vq, 0, zero_rank(q, zero) ? 0 : vq.nbytes, q, tag, &a);
            t_view_free(&vq);
        }
        t_verify_file(path, a.img, a.end);
        holes = a.covered < a.end;
        free(a.img);
    }
    MPI_Bcast(&holes, 1, MPI_INT, 0, MPI_COMM_WORLD);
    t_view_free(&v);
    t_unlink(path);
    xr = t_xfail_stock_holes(mode == M_ALL || mode == M_AT_ALL, holes);
    t_end_x(xr != NULL, xr ? xr : "");
}

static void read_test(int k, int mode, int memkind, int zero)
{
    char name[96], path[1200];
    t_view_t v;
    MPI_File fh;
    long long n, h, end, gend = 0;
    snprintf(name, sizeof(name), "%s.read%s%s.%s%s", tv_names[k], mode == M_INDIV ? "" : "_",
             mode_name[mode], t_mem_name[memkind], zero ? ".zero" : "");
    if (!t_begin(name)) {
        return;
    }
    t_fname(path, sizeof(path), name);
    t_view_make(k, t_rank, t_np, 1, &v);
    n = zero_rank(t_rank, zero) ? 0 : v.nbytes;
    end = t_view_end(&v, v.nbytes);
    MPI_Allreduce(&end, &gend, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    t_prefill(path, gend + 37);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
             "open")) {
        if (t_ok(t_view_set(fh, &v), "set_view")) {
            if (mode == M_ALL) {
                xfer(fh, &v, mode, 1, 0, n, memkind, 0);
            } else if (mode == M_INDIV) {
                /* sequential: first part then the rest, pointer carries over */
                t_mem_t m;
                MPI_Status st;
                unsigned char *want;
                h = half_bytes(&v, n);
                xfer(fh, &v, mode, 1, 0, h, memkind, 0);
                t_mem_make(&m, memkind, v.etype, v.esize, n - h);
                if (t_ok(MPI_File_read(fh, m.buf, m.count, m.dt, &st), "read (rest)")) {
                    t_check_count(&st, m.dt, m.count, "read (rest)");
                    want = t_view_expect_prefill(&v, h, n - h);
                    t_mem_check(&m, want, "read (rest)");
                    free(want);
                }
                t_mem_free(&m);
            } else {
                h = half_bytes(&v, n);
                xfer(fh, &v, mode, 1, h, n - h, memkind, 0);
                xfer(fh, &v, mode, 1, 0, h, memkind, 0);
            }
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    t_view_free(&v);
    t_unlink(path);
    t_end();
}

int main(int argc, char **argv)
{
    int k;
    t_init(&argc, &argv, "views");
    for (k = 0; k < TV_NKINDS; k++) {
        model_check(k);
        write_test(k, M_ALL, T_MEM_CONTIG, 0);
        write_test(k, M_AT_ALL, T_MEM_VECTOR, 1);
        write_test(k, M_AT, T_MEM_RESIZED, 0);
        write_test(k, M_INDIV, T_MEM_VECTOR, 0);
        read_test(k, M_ALL, T_MEM_VECTOR, 0);
        read_test(k, M_AT_ALL, T_MEM_CONTIG, 1);
        read_test(k, M_AT, T_MEM_RESIZED, 0);
        read_test(k, M_INDIV, T_MEM_CONTIG, 0);
    }
    return t_finish();
}
