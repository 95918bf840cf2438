/*
 * t_nbcoll.c: non-blocking collective I/O that really is non-blocking.
 *
 * Every rank writes (or reads) one tile of a 2-D array of 16-byte elements
 * through a subarray view; the tiles cover the array, so the file must equal
 * a serial reference: byte i of copy t of the array is t_nb_pat(i, tag_t).
 *
 *   nbc.progress.iwrite_all / .iread_all
 *       rank 0 polls MPI_Test between slices of computation, the others
 *       MPI_Wait; rank 0 prints how many Test calls returned false
 *   nbc.outstanding.iwrite_all3
 *       three iwrite_all outstanding on one file, each a third of the tile
 *       through the individual file pointer (which moves when a call is
 *       posted), completed by one MPI_Waitall over the requests in reverse
 *       order
 *   nbc.outstanding.iread_all3
 *       the same with iread_all; after completion the buffers must stay as
 *       the caller leaves them while MPI keeps progressing
 *   nbc.outstanding.mixed
 *       iread_at_all of copy 0, iwrite_at_all of copy 1 and iread_all of
 *       copy 0 outstanding together, Waitall in reverse order
 *   nbc.early
 *       a large iwrite_all with 4 KiB cycles (cb_buffer_size 8192): the
 *       first MPI_Test right after the start must return false when
 *       fcoll/adaptive aggregates (it runs at most one cycle per progress
 *       call and every such write has many cycles).  With other fcoll
 *       components or algorithms the count of Test calls is only reported.
 */
#include "sfio_mpitest.h"

#define T_ESZ 16

static inline unsigned char t_nb_pat(long long i, int tag)
{
    return (unsigned char)((i * 131 + i / 251 + tag * 17 + 5) & 0xff);
}

typedef struct {
    int R, C;                   /* global array, elements */
    int r0, c0, nr, nc;         /* my tile */
    MPI_Datatype elem, ftype;
    long long nelem;            /* nr * nc */
} tile_t;

static void tile_make(tile_t *t, int R, int C)
{
    int dims[2] = {0, 0}, pr, pc, q, gs[2], ss[2], st[2];
    MPI_Dims_create(t_np, 2, dims);
    pr = t_rank / dims[1];
    pc = t_rank % dims[1];
    t->R = R, t->C = C;
    q = R / dims[0];
    t->r0 = pr * q + (pr < R % dims[0] ? pr : R % dims[0]);
    t->nr = q + (pr < R % dims[0] ? 1 : 0);
    q = C / dims[1];
    t->c0 = pc * q + (pc < C % dims[1] ? pc : C % dims[1]);
    t->nc = q + (pc < C % dims[1] ? 1 : 0);
    t->nelem = (long long)t->nr * t->nc;
    MPI_Type_contiguous(T_ESZ, MPI_BYTE, &t->elem);
    MPI_Type_commit(&t->elem);
    gs[0] = R, gs[1] = C, ss[0] = t->nr, ss[1] = t->nc, st[0] = t->r0, st[1] = t->c0;
    MPI_Type_create_subarray(2, gs, ss, st, MPI_ORDER_C, t->elem, &t->ftype);
    MPI_Type_commit(&t->ftype);
}

static void tile_free(tile_t *t)
{
    MPI_Type_free(&t->ftype);
    MPI_Type_free(&t->elem);
}

/* File offset (bytes, in copy 0) of byte b of my tile's element k. */
static long long tile_off(const tile_t *t, long long k, int b)
{
    long long i = k / t->nc, j = k % t->nc;
    return ((t->r0 + i) * t->C + t->c0 + j) * T_ESZ + b;
}

/* My tile's elements [k0, k0 + n) of copy `copy` as the serial reference has them. */
static unsigned char *tile_data(const tile_t *t, long long k0, long long n, int copy, int tag)
{
    unsigned char *b = malloc(n > 0 ? (size_t)(n * T_ESZ) : 1);
    long long k, base = (long long)copy * t->R * t->C * T_ESZ;
    int x;
    for (k = 0; k < n; k++) {
        for (x = 0; x < T_ESZ; x++) {
            b[k * T_ESZ + x] = t_nb_pat(tile_off(t, k0 + k, x) + base, tag);
        }
    }
    return b;
}

/* Rank 0: the file must be copies 0 .. ncopies-1 of the array, copy i with tags[i]. */
static void verify_copies(const char *path, const tile_t *t, int ncopies, const int *tags)
{
    if (t_rank == 0) {
        long long sz = (long long)t->R * t->C * T_ESZ, i;
        unsigned char *w = malloc((size_t)(sz * ncopies));
        int c;
        for (c = 0; c < ncopies; c++) {
            for (i = 0; i < sz; i++) {
                w[c * sz + i] = t_nb_pat(c * sz + i, tags[c]);
            }
        }
        t_verify_file(path, w, sz * ncopies);
        free(w);
    }
}

/* Writes copy 0 with tag (blocking, for the read tests), by POSIX on rank 0. */
static void prefill_copy0(const char *path, const tile_t *t, int tag)
{
    if (t_rank == 0) {
        long long sz = (long long)t->R * t->C * T_ESZ, i;
        unsigned char *w = malloc((size_t)sz);
        FILE *f = fopen(path, "wb");
        for (i = 0; i < sz; i++) {
            w[i] = t_nb_pat(i, tag);
        }
        if (f == NULL || fwrite(w, 1, (size_t)sz, f) != (size_t)sz) {
            t_failf("prefill %s: %s", path, strerror(errno));
        }
        if (f != NULL) {
            fclose(f);
        }
        free(w);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static int open_tile(const char *path, const tile_t *t, MPI_Info info, MPI_File *fh)
{
    return t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, fh),
                "open") &&
           t_ok(MPI_File_set_view(*fh, 0, t->elem, t->ftype, "native", info), "set_view");
}

/* A slice of computation between two MPI_Test calls. */
static volatile double t_sink;
static void compute_slice(void)
{
    double x = 1.0;
    int i;
    for (i = 0; i < 20000; i++) {
        x = x * 1.0000001 + 1e-9;
    }
    t_sink = x;
}

/* Test calls that returned false before completion, for the report. */
static void report(const char *what, long long pending, int flag0)
{
    if (t_rank == 0) {
        printf("# %s np=%d config=%s: first MPI_Test %s, %lld Test calls before completion\n",
               what, t_np, getenv("SFIO_TEST_CONFIG") ? getenv("SFIO_TEST_CONFIG") : "-",
               flag0 ? "complete" : "pending", pending);
        fflush(stdout);
    }
}

static void test_progress(int rw)
{
    char path[1200];
    const char *name = rw ? "nbc.progress.iread_all" : "nbc.progress.iwrite_all";
    MPI_File fh;
    MPI_Request rq;
    MPI_Status st;
    tile_t t;
    unsigned char *buf, *want;
    int tag = rw ? 53 : 51, flag = 0, first = -1;
    long long pending = 0;
    if (!t_begin(name)) {
        return;
    }
    tile_make(&t, 90, 70);
    t_fname(path, sizeof(path), name);
    t_unlink(path);
    want = tile_data(&t, 0, t.nelem, 0, tag);
    buf = malloc(t.nelem * T_ESZ + 1);
    if (rw) {
        prefill_copy0(path, &t, tag);
        memset(buf, 0xa5, t.nelem * T_ESZ);
    } else {
        memcpy(buf, want, t.nelem * T_ESZ);
    }
    if (open_tile(path, &t, MPI_INFO_NULL, &fh)) {
        int rc = rw ? MPI_File_iread_all(fh, buf, (int)t.nelem, t.elem, &rq)
                    : MPI_File_iwrite_all(fh, buf, (int)t.nelem, t.elem, &rq);
        if (t_ok(rc, rw ? "iread_all" : "iwrite_all")) {
            if (t_rank == 0) {
                while (!flag) {
                    if (!t_ok(MPI_Test(&rq, &flag, &st), "test")) {
                        break;
                    }
                    if (first < 0) {
                        first = flag;
                    }
                    if (!flag) {
                        pending++;
                        compute_slice();
                    }
                }
            } else {
                t_ok(MPI_Wait(&rq, &st), "wait");
            }
            t_check_count(&st, t.elem, (int)t.nelem, name);
            if (rw) {
                t_cmp(buf, want, t.nelem * T_ESZ, 0, "iread_all data");
            }
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (!rw) {
        verify_copies(path, &t, 1, &tag);
    }
    report(name, pending, first);
    t_unlink(path);
    free(buf), free(want);
    tile_free(&t);
    t_end();
}

/* Three calls through the individual pointer, Waitall in reverse order. */
static void test_three(int rw)
{
    char path[1200];
    const char *name = rw ? "nbc.outstanding.iread_all3" : "nbc.outstanding.iwrite_all3";
    MPI_File fh;
    MPI_Request rq[3], rev[3];
    MPI_Status st[3];
    MPI_Offset pos;
    tile_t t;
    unsigned char *buf, *want;
    long long cut[4];
    int tag = rw ? 57 : 55, i;
    if (!t_begin(name)) {
        return;
    }
    tile_make(&t, 61, 47);
    t_fname(path, sizeof(path), name);
    t_unlink(path);
    for (i = 0; i <= 3; i++) {
        cut[i] = (long long)(t.nr * i / 3) * t.nc;     /* whole rows; a part may be empty */
    }
    want = tile_data(&t, 0, t.nelem, 0, tag);
    buf = malloc(t.nelem * T_ESZ + 1);
    if (rw) {
        prefill_copy0(path, &t, tag);
        memset(buf, 0xa5, t.nelem * T_ESZ);
    } else {
        memcpy(buf, want, t.nelem * T_ESZ);
    }
    if (open_tile(path, &t, MPI_INFO_NULL, &fh)) {
        for (i = 0; i < 3; i++) {
            unsigned char *b = buf + cut[i] * T_ESZ;
            int n = (int)(cut[i + 1] - cut[i]);
            t_ok(rw ? MPI_File_iread_all(fh, b, n, t.elem, &rq[i])
                    : MPI_File_iwrite_all(fh, b, n, t.elem, &rq[i]),
                 rw ? "iread_all" : "iwrite_all");
            MPI_File_get_position(fh, &pos);
            if (pos != cut[i + 1]) {
                t_failf("position after posting call %d: %lld want %lld", i, (long long)pos,
                        cut[i + 1]);
            }
        }
        for (i = 0; i < 3; i++) {
            rev[i] = rq[2 - i];
        }
        if (t_ok(MPI_Waitall(3, rev, st), "waitall")) {
            for (i = 0; i < 3; i++) {
                t_check_count(&st[i], t.elem, (int)(cut[3 - i] - cut[2 - i]), name);
            }
        }
        if (rw) {
            t_cmp(buf, want, t.nelem * T_ESZ, 0, "iread_all data");
            /* completed: MPI must leave the buffer alone from now on */
            memset(buf, 0x3c, t.nelem * T_ESZ);
            MPI_Barrier(MPI_COMM_WORLD);
            t_ok(MPI_File_sync(fh), "sync");
            for (i = 0; i < (int)(t.nelem * T_ESZ); i++) {
                if (buf[i] != 0x3c) {
                    t_failf("buffer byte %d changed after completion", i);
                    break;
                }
            }
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (!rw) {
        verify_copies(path, &t, 1, &tag);
    }
    t_unlink(path);
    free(buf), free(want);
    tile_free(&t);
    t_end();
}

/* Reads of copy 0 and a write of copy 1 outstanding together. */
static void test_mixed(void)
{
    char path[1200];
    const char *name = "nbc.outstanding.mixed";
    MPI_File fh;
    MPI_Request rq[3], rev[3];
    MPI_Status st[3];
    tile_t t;
    unsigned char *r1, *r2, *w1, *want0;
    int tags[2] = {59, 61}, i;
    size_t nb;
    if (!t_begin(name)) {
        return;
    }
    tile_make(&t, 53, 66);
    nb = (size_t)(t.nelem * T_ESZ);
    t_fname(path, sizeof(path), "mixed");
    t_unlink(path);
    prefill_copy0(path, &t, tags[0]);
    want0 = tile_data(&t, 0, t.nelem, 0, tags[0]);
    w1 = tile_data(&t, 0, t.nelem, 1, tags[1]);
    r1 = malloc(nb + 1), r2 = malloc(nb + 1);
    memset(r1, 0xa5, nb), memset(r2, 0x5a, nb);
    if (open_tile(path, &t, MPI_INFO_NULL, &fh)) {
        t_ok(MPI_File_iread_at_all(fh, 0, r1, (int)t.nelem, t.elem, &rq[0]), "iread_at_all");
        t_ok(MPI_File_iwrite_at_all(fh, t.nelem, w1, (int)t.nelem, t.elem, &rq[1]),
             "iwrite_at_all");
        t_ok(MPI_File_iread_all(fh, r2, (int)t.nelem, t.elem, &rq[2]), "iread_all");
        for (i = 0; i < 3; i++) {
            rev[i] = rq[2 - i];
        }
        if (t_ok(MPI_Waitall(3, rev, st), "waitall")) {
            for (i = 0; i < 3; i++) {
                t_check_count(&st[i], t.elem, (int)t.nelem, name);
            }
            t_cmp(r1, want0, nb, 0, "iread_at_all data");
            t_cmp(r2, want0, nb, 0, "iread_all data");
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    verify_copies(path, &t, 2, tags);
    t_unlink(path);
    free(r1), free(r2), free(w1), free(want0);
    tile_free(&t);
    t_end();
}

/* fcoll/adaptive forced to an aggregating algorithm by the runner's config. */
static int adaptive_aggregates(void)
{
    const char *c = getenv("SFIO_TEST_CONFIG"), *u;
    if (c == NULL || strncmp(c, "adaptive", 8) != 0 || (u = strrchr(c, '_')) == NULL) {
        return 0;
    }
    return strcmp(u, "_phase") == 0 || strcmp(u, "_dynamic") == 0 || strcmp(u, "_static") == 0;
}

static void test_early(void)
{
    char path[1200];
    const char *name = "nbc.early";
    MPI_File fh;
    MPI_Request rq;
    MPI_Status st;
    MPI_Info info;
    tile_t t;
    unsigned char *buf;
    int tag = 63, flag = 0, first = -1, all_first = 0;
    long long pending = 0;
    if (!t_begin(name)) {
        return;
    }
    tile_make(&t, 256, 256);     /* 1 MiB: 256 cycles of 4 KiB */
    t_fname(path, sizeof(path), name);
    t_unlink(path);
    buf = tile_data(&t, 0, t.nelem, 0, tag);
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "8192");
    if (open_tile(path, &t, info, &fh)) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (t_ok(MPI_File_iwrite_all(fh, buf, (int)t.nelem, t.elem, &rq), "iwrite_all")) {
            while (!flag) {
                if (!t_ok(MPI_Test(&rq, &flag, &st), "test")) {
                    break;
                }
                if (first < 0) {
                    first = flag;
                }
                pending += !flag;
            }
            t_check_count(&st, t.elem, (int)t.nelem, name);
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Info_free(&info);
    MPI_Allreduce(&first, &all_first, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (adaptive_aggregates() && all_first != 0) {
        t_failf("a rank's first MPI_Test after iwrite_all already found it complete");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    verify_copies(path, &t, 1, &tag);
    report(name, pending, first);
    t_unlink(path);
    free(buf);
    tile_free(&t);
    t_end();
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "nbcoll");
    test_progress(0);
    test_progress(1);
    test_three(0);
    test_three(1);
    test_mixed();
    test_early();
    return t_finish();
}
