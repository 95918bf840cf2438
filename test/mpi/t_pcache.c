/*
 * t_pcache: what an atomic-mode user sees of private bytes that the
 * list-locking path keeps in its cache until the group's next collective
 * point (fbtl_versioned_private_cache).  Every subtest also holds for any
 * other path (versioned, stock): the program runs in every configuration,
 * and with `--mca fbtl_versioned_atomic_mode listlock` it exercises the
 * cache.  Views: rank q owns blocks q, q + P, q + 2P, ... of BLK bytes (no
 * byte shared: all private, like Aarestad, Ching et al.'s 3-D block pattern).
 *
 *   read_own       write, read back through the same handle before close
 *   atomicity_off  atomic write, set_atomicity(0), plain write of the same
 *                  bytes: the newer bytes stay in the file
 *   size           get_size right after the write, on every rank
 *   set_size       truncation after the write leaves no cached byte beyond
 *   sync           sync + barrier: the file holds every byte (POSIX read)
 *   set_view       a new view where every byte is shared: reads see all
 *   nonblocking    iwrite + wait, iread + wait
 *   many_calls     many small writes, every byte twice (a cache of 4 KiB
 *                  writes itself back in between; cached and direct
 *                  writes of the same bytes), then close
 */
#include "sfio_mpitest.h"

#define BLK 512
#define NBLK 64    /* blocks per rank */

static MPI_Datatype strided_view(void)
{
    MPI_Datatype v, r;
    MPI_Type_vector(NBLK, BLK, BLK * t_np, MPI_BYTE, &v);
    /* resized so that consecutive filetypes tile */
    MPI_Type_create_resized(v, 0, (MPI_Aint) BLK * t_np * NBLK, &r);
    MPI_Type_commit(&r);
    MPI_Type_free(&v);
    return r;
}

static void fill(unsigned char *b, int q, int tag)
{
    for (long long i = 0; i < (long long) BLK * NBLK; i++) {
        b[i] = t_pat_data(q, i, tag);
    }
}

/* The file image after every rank wrote fill(q, tag) through its view. */
static unsigned char *image(int tag, long long *size)
{
    *size = (long long) BLK * NBLK * t_np;
    unsigned char *img = malloc((size_t) *size);
    unsigned char *d = malloc((size_t) BLK * NBLK);
    for (int q = 0; q < t_np; q++) {
        fill(d, q, tag);
        for (int k = 0; k < NBLK; k++) {
            memcpy(img + ((long long) k * t_np + q) * BLK, d + (long long) k * BLK, BLK);
        }
    }
    free(d);
    return img;
}

static int open_atomic_view(const char *path, MPI_File *fh, MPI_Datatype view)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        unlink(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (!t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                            fh), "open")) {
        return 0;
    }
    return t_ok(MPI_File_set_atomicity(*fh, 1), "set_atomicity 1") &&
           t_ok(MPI_File_set_view(*fh, (MPI_Offset) t_rank * BLK, MPI_BYTE, view, "native",
                                  MPI_INFO_NULL), "set_view");
}

static void verify_all(const char *path, int tag)
{
    long long size;
    unsigned char *img = image(tag, &size);
    if (t_rank == 0) {
        t_verify_file(path, img, size);
    }
    free(img);
}

static void test_read_own(MPI_Datatype view)
{
    char path[1024];
    MPI_File fh;
    MPI_Status st;
    size_t n = (size_t) BLK * NBLK;
    unsigned char *w = malloc(n), *r = malloc(n);
    if (!t_begin("pcache.read_own")) {
        free(w), free(r);
        return;
    }
    t_fname(path, sizeof(path), "read_own");
    fill(w, t_rank, 1);
    if (open_atomic_view(path, &fh, view)) {
        t_ok(MPI_File_write_at(fh, 0, w, (int) n, MPI_BYTE, &st), "write_at");
        memset(r, 0, n);
        t_ok(MPI_File_read_at(fh, 0, r, (int) n, MPI_BYTE, &st), "read_at");
        t_check_count(&st, MPI_BYTE, (int) n, "read_at");
        t_cmp(r, w, n, 0, "read back before close");
        /* a part, not from the start */
        memset(r, 0, n);
        t_ok(MPI_File_read_at(fh, BLK + 7, r, BLK * 3, MPI_BYTE, &st), "read_at part");
        t_cmp(r, w + BLK + 7, BLK * 3, BLK + 7, "part read back");
        t_ok(MPI_File_close(&fh), "close");
    }
    verify_all(path, 1);
    t_unlink(path);
    free(w);
    free(r);
    t_end();
}

static void test_atomicity_off(MPI_Datatype view)
{
    char path[1024];
    MPI_File fh;
    MPI_Status st;
    size_t n = (size_t) BLK * NBLK;
    unsigned char *w = malloc(n);
    if (!t_begin("pcache.atomicity_off")) {
        free(w);
        return;
    }
    t_fname(path, sizeof(path), "atomicity_off");
    if (open_atomic_view(path, &fh, view)) {
        fill(w, t_rank, 2);
        t_ok(MPI_File_write_at(fh, 0, w, (int) n, MPI_BYTE, &st), "atomic write");
        t_ok(MPI_File_set_atomicity(fh, 0), "set_atomicity 0");
        fill(w, t_rank, 3);
        t_ok(MPI_File_write_at(fh, 0, w, (int) n, MPI_BYTE, &st), "plain write");
        t_ok(MPI_File_close(&fh), "close");
    }
    verify_all(path, 3);
    t_unlink(path);
    free(w);
    t_end();
}

static void test_size(MPI_Datatype view)
{
    char path[1024];
    MPI_File fh;
    MPI_Status st;
    MPI_Offset size = -1;
    size_t n = (size_t) BLK * NBLK;
    unsigned char *w = malloc(n);
    if (!t_begin("pcache.size")) {
        free(w);
        return;
    }
    t_fname(path, sizeof(path), "size");
    fill(w, t_rank, 4);
    if (open_atomic_view(path, &fh, view)) {
        t_ok(MPI_File_write_at(fh, 0, w, (int) n, MPI_BYTE, &st), "write_at");
        /* the writer's own view of the size: at least its last byte */
        t_ok(MPI_File_get_size(fh, &size), "get_size (writer)");
        long long mine = ((long long) (NBLK - 1) * t_np + t_rank + 1) * BLK;
        if (size < mine) {
            t_failf("get_size %lld right after the write, want at least %lld", (long long) size,
                    mine);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_get_size(fh, &size), "get_size (after barrier)");
        if (size != (MPI_Offset) n * t_np) {
            t_failf("get_size %lld after everybody wrote, want %lld", (long long) size,
                    (long long) n * t_np);
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    verify_all(path, 4);
    t_unlink(path);
    free(w);
    t_end();
}

static void test_set_size(MPI_Datatype view)
{
    char path[1024];
    MPI_File fh;
    MPI_Status st;
    size_t n = (size_t) BLK * NBLK;
    unsigned char *w = malloc(n);
    long long full, cut;
    unsigned char *img = image(5, &full);
    cut = full / 2 + 100;
    if (!t_begin("pcache.set_size")) {
        free(img), free(w);
        return;
    }
    t_fname(path, sizeof(path), "set_size");
    fill(w, t_rank, 5);
    if (open_atomic_view(path, &fh, view)) {
        t_ok(MPI_File_write_at(fh, 0, w, (int) n, MPI_BYTE, &st), "write_at");
        t_ok(MPI_File_set_size(fh, (MPI_Offset) cut), "set_size");
        t_ok(MPI_File_close(&fh), "close");
    }
    if (t_rank == 0) {
        t_verify_file(path, img, cut);
    }
    t_unlink(path);
    free(img);
    free(w);
    t_end();
}

static void test_sync(MPI_Datatype view)
{
    char path[1024];
    MPI_File fh;
    MPI_Status st;
    size_t n = (size_t) BLK * NBLK;
    unsigned char *w = malloc(n);
    if (!t_begin("pcache.sync")) {
        free(w);
        return;
    }
    t_fname(path, sizeof(path), "sync");
    fill(w, t_rank, 6);
    if (open_atomic_view(path, &fh, view)) {
        t_ok(MPI_File_write_at(fh, 0, w, (int) n, MPI_BYTE, &st), "write_at");
        t_ok(MPI_File_sync(fh), "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        verify_all(path, 6);   /* before close */
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_close(&fh), "close");
    }
    t_unlink(path);
    free(w);
    t_end();
}

static void test_set_view(MPI_Datatype view)
{
    char path[1024];
    MPI_File fh;
    MPI_Status st;
    size_t n = (size_t) BLK * NBLK;
    unsigned char *w = malloc(n);
    long long full;
    unsigned char *img = image(7, &full);
    unsigned char *r = malloc((size_t) full);
    if (!t_begin("pcache.set_view")) {
        free(img), free(r), free(w);
        return;
    }
    t_fname(path, sizeof(path), "set_view");
    fill(w, t_rank, 7);
    if (open_atomic_view(path, &fh, view)) {
        t_ok(MPI_File_write_at(fh, 0, w, (int) n, MPI_BYTE, &st), "write_at");
        /* every rank's view is now the whole file: every byte shared */
        t_ok(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL),
             "set_view whole");
        memset(r, 0, (size_t) full);
        t_ok(MPI_File_read_at(fh, 0, r, (int) full, MPI_BYTE, &st), "read whole");
        t_cmp(r, img, (size_t) full, 0, "whole file through the new view");
        t_ok(MPI_File_close(&fh), "close");
    }
    t_unlink(path);
    free(img);
    free(r);
    free(w);
    t_end();
}

static void test_nonblocking(MPI_Datatype view)
{
    char path[1024];
    MPI_File fh;
    MPI_Request rq;
    MPI_Status st;
    size_t n = (size_t) BLK * NBLK;
    unsigned char *w = malloc(n), *r = malloc(n);
    if (!t_begin("pcache.nonblocking")) {
        free(w), free(r);
        return;
    }
    t_fname(path, sizeof(path), "nonblocking");
    fill(w, t_rank, 8);
    if (open_atomic_view(path, &fh, view)) {
        if (t_ok(MPI_File_iwrite_at(fh, 0, w, (int) n, MPI_BYTE, &rq), "iwrite_at")) {
            t_ok(MPI_Wait(&rq, &st), "wait write");
        }
        memset(r, 0, n);
        if (t_ok(MPI_File_iread_at(fh, 0, r, (int) n, MPI_BYTE, &rq), "iread_at")) {
            t_ok(MPI_Wait(&rq, &st), "wait read");
            t_cmp(r, w, n, 0, "iread back");
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    verify_all(path, 8);
    t_unlink(path);
    free(w);
    free(r);
    t_end();
}

static void test_many_calls(MPI_Datatype view)
{
    char path[1024];
    MPI_File fh;
    MPI_Status st;
    size_t n = (size_t) BLK * NBLK;
    unsigned char *w = malloc(n), *w2 = malloc(n);
    if (!t_begin("pcache.many_calls")) {
        free(w), free(w2);
        return;
    }
    t_fname(path, sizeof(path), "many_calls");
    fill(w, t_rank, 9);
    fill(w2, t_rank, 10);
    if (open_atomic_view(path, &fh, view)) {
        /* an older copy in 300-byte calls, each followed by the final
         * bytes in a call shifted by 150: every byte is written twice, by
         * calls of one or two pieces (one piece of 300 B, or two averaging
         * 150 B: with a small private_cache_piece_max the first go straight
         * to the file and the second to the cache) */
        for (long long o = 0; o < (long long) n + 150; o += 300) {
            for (int pass = 0; pass < 2; pass++) {
                const unsigned char *src = pass ? w2 : w;
                long long lo = pass ? o - 150 : o;
                long long hi = lo + 300 > (long long) n ? (long long) n : lo + 300;
                lo = lo < 0 ? 0 : lo;
                if (lo < hi) {
                    t_ok(MPI_File_write_at(fh, lo, (void *) (src + lo), (int) (hi - lo),
                                           MPI_BYTE, &st), "write_at piece");
                }
            }
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    verify_all(path, 10);
    t_unlink(path);
    free(w);
    free(w2);
    t_end();
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "pcache");
    MPI_Datatype view = strided_view();
    test_read_own(view);
    test_atomicity_off(view);
    test_size(view);
    test_set_size(view);
    test_sync(view);
    test_set_view(view);
    test_nonblocking(view);
    test_many_calls(view);
    MPI_Type_free(&view);
    return t_finish();
}
