/*
 * t_coll_unequal.c: collective writes and reads with very unequal
 * contributions (one rank holds most of the data, some ranks none), the
 * cases where an aggregator's domain or a group's cycles are fed mostly by
 * one rank.  Checked byte for byte against a serial reference image.
 *
 *   unequal.block      rank q writes one contiguous block of n_q bytes at
 *                      the prefix offset (write_at_all), reads it back
 *                      (read_at_all)
 *   unequal.interleave a vector view: per round, rank q owns n_q / R
 *                      bytes of each R-th row (interleaved, unequal widths);
 *                      write_all, then read_all, then iwrite_all/iread_all
 *   unequal.eof        collective reads past the end of file (a file
 *                      prefilled with POSIX I/O ends inside one rank's
 *                      data): read_at_all of a block per rank and read_all
 *                      of a strided view (.nb: iread_at_all, iread_all);
 *                      the count is what lies before the end (MPI: a read
 *                      past the end of file returns fewer elements; not
 *                      checked for blocking read_all, whose count stock
 *                      io/ompio overwrites), the bytes are the file's
 */
#include "sfio_mpitest.h"

static long long share(int q)
{
    if (q == 0) {
        return 3 * 1024 * 1024 + 17;
    }
    return (q % 2) ? 0 : (long long) q * 1000 + 3;
}

static void block_test(void)
{
    char path[1100];
    long long off = 0, total = 0, n = share(t_rank);
    for (int q = 0; q < t_np; ++q) {
        if (q < t_rank) {
            off += share(q);
        }
        total += share(q);
    }
    if (!t_begin("unequal.block")) {
        return;
    }
    t_fname(path, sizeof(path), "block");
    t_unlink(path);
    unsigned char *b = malloc((size_t) n + 1), *r = malloc((size_t) n + 1);
    for (long long i = 0; i < n; ++i) {
        b[i] = t_pat_data(t_rank, i, 1);
    }
    MPI_File fh;
    MPI_Status st;
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fh), "open")) {
        if (t_ok(MPI_File_write_at_all(fh, off, b, (int) n, MPI_BYTE, &st), "write_at_all")) {
            t_check_count(&st, MPI_BYTE, (int) n, "write_at_all");
        }
        MPI_File_sync(fh);
        MPI_Barrier(MPI_COMM_WORLD);
        memset(r, 0, (size_t) n + 1);
        if (t_ok(MPI_File_read_at_all(fh, off, r, (int) n, MPI_BYTE, &st), "read_at_all")) {
            t_check_count(&st, MPI_BYTE, (int) n, "read_at_all");
            t_cmp(r, b, (size_t) n, off, "read_at_all");
        }
        MPI_File_close(&fh);
    }
    if (t_rank == 0) {
        unsigned char *want = malloc((size_t) total + 1);
        long long at = 0;
        for (int q = 0; q < t_np; ++q) {
            for (long long i = 0; i < share(q); ++i) {
                want[at + i] = t_pat_data(q, i, 1);
            }
            at += share(q);
        }
        t_verify_file(path, want, total);
        free(want);
    }
    t_unlink(path);     /* collective */
    free(b);
    free(r);
    t_end();
}

static void interleave_test(int nonblocking)
{
    enum { R = 64 };
    char path[1100], name[64];
    long long w[256], row = 0, before = 0;
    for (int q = 0; q < t_np; ++q) {
        w[q] = share(q) / R;
        if (q < t_rank) {
            before += w[q];
        }
        row += w[q];
    }
    snprintf(name, sizeof(name), "unequal.interleave%s", nonblocking ? ".nb" : "");
    if (!t_begin(name)) {
        return;
    }
    t_fname(path, sizeof(path), nonblocking ? "ilv_nb" : "ilv");
    t_unlink(path);
    long long n = w[t_rank] * R;
    unsigned char *b = malloc((size_t) n + 1), *r = malloc((size_t) n + 1);
    for (long long i = 0; i < n; ++i) {
        b[i] = t_pat_data(t_rank, i, 2 + nonblocking);
    }
    MPI_Datatype vec, ftype;
    /* A rank without data gets a filetype of size 0 (and count 0). */
    MPI_Type_vector(R, (int) w[t_rank], (int) row, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint) (row * R), &ftype);
    MPI_Type_commit(&ftype);
    MPI_File fh;
    MPI_Status st;
    MPI_Request rq;
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fh), "open")) {
        t_ok(MPI_File_set_view(fh, before, MPI_BYTE, ftype, "native", MPI_INFO_NULL), "set_view");
        int rc;
        if (nonblocking) {
            rc = MPI_File_iwrite_all(fh, b, (int) n, MPI_BYTE, &rq);
            if (rc == MPI_SUCCESS) {
                rc = MPI_Wait(&rq, &st);
            }
        } else {
            rc = MPI_File_write_all(fh, b, (int) n, MPI_BYTE, &st);
        }
        if (t_ok(rc, "write_all")) {
            t_check_count(&st, MPI_BYTE, (int) n, "write_all");
        }
        MPI_File_sync(fh);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_File_seek(fh, 0, MPI_SEEK_SET);
        memset(r, 0, (size_t) n + 1);
        if (nonblocking) {
            rc = MPI_File_iread_all(fh, r, (int) n, MPI_BYTE, &rq);
            if (rc == MPI_SUCCESS) {
                rc = MPI_Wait(&rq, &st);
            }
        } else {
            rc = MPI_File_read_all(fh, r, (int) n, MPI_BYTE, &st);
        }
        if (t_ok(rc, "read_all")) {
            t_check_count(&st, MPI_BYTE, (int) n, "read_all");
            t_cmp(r, b, (size_t) n, 0, "read_all");
        }
        MPI_File_close(&fh);
    }
    MPI_Type_free(&ftype);
    MPI_Type_free(&vec);
    if (t_rank == 0) {
        long long total = row * R;
        unsigned char *want = malloc((size_t) total + 1);
        for (long long k = 0; k < R; ++k) {
            long long at = k * row;
            for (int q = 0; q < t_np; ++q) {
                for (long long i = 0; i < w[q]; ++i) {
                    want[at + i] = t_pat_data(q, k * w[q] + i, 2 + nonblocking);
                }
                at += w[q];
            }
        }
        /* the file ends at the last byte of the last non-empty rank's last row */
        long long end = total;
        while (end > 0) {
            int last = -1;
            long long at = (R - 1) * row;
            for (int q = 0; q < t_np; ++q) {
                if (w[q] > 0) {
                    last = q;
                }
            }
            for (int q = 0; q <= last; ++q) {
                at += w[q];
            }
            end = at;
            break;
        }
        t_verify_file(path, want, end);
        free(want);
    }
    t_unlink(path);     /* collective */
    free(b);
    free(r);
    t_end();
}

/* Bytes of [off, off + len) before end. */
static long long below(long long off, long long len, long long end)
{
    return off >= end ? 0 : (off + len <= end ? len : end - off);
}

static int read_call(MPI_File fh, int at, MPI_Offset off, void *buf, int n, int nonblocking,
                     MPI_Status *st)
{
    MPI_Request rq;
    int rc;
    if (nonblocking) {
        rc = at ? MPI_File_iread_at_all(fh, off, buf, n, MPI_BYTE, &rq)
                : MPI_File_iread_all(fh, buf, n, MPI_BYTE, &rq);
        return MPI_SUCCESS == rc ? MPI_Wait(&rq, st) : rc;
    }
    return at ? MPI_File_read_at_all(fh, off, buf, n, MPI_BYTE, st)
              : MPI_File_read_all(fh, buf, n, MPI_BYTE, st);
}

static void eof_test(int nonblocking)
{
    enum { C = 1000, K = 64 };
    char path[1100], name[64];
    snprintf(name, sizeof(name), "unequal.eof%s", nonblocking ? ".nb" : "");
    if (nonblocking && t_is_stock()) {
        /* Stock fbtl/posix re-issues a short AIO read until it is whole:
         * a non-blocking read past the end of file never completes. */
        if (0 == t_rank) {
            printf("skip %s: stock fbtl/posix ipreadv never completes past the end of file\n",
                   name);
        }
        return;
    }
    if (!t_begin(name)) {
        return;
    }
    t_fname(path, sizeof(path), nonblocking ? "eof_nb" : "eof");
    /* The file ends half-way through, inside a chunk (strided reads) and
     * inside a block (block reads). */
    long long n = (long long) C * K, end = (long long) t_np * n / 2 + C / 2 + 1;
    if (t_rank == 0) {
        unsigned char *img = malloc((size_t) end);
        for (long long i = 0; i < end; ++i) {
            img[i] = t_pat_file(i);
        }
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        if (fd < 0 || pwrite(fd, img, (size_t) end, 0) != (ssize_t) end || close(fd) != 0) {
            t_failf("prefill %s: %s", path, strerror(errno));
        }
        free(img);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char *r = malloc((size_t) n);
    MPI_Datatype vec, ftype;
    MPI_Type_vector(K, C, C * t_np, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint) C * t_np * K, &ftype);
    MPI_Type_commit(&ftype);
    MPI_File fh;
    MPI_Status st;
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), "open")) {
        /* a block of n bytes per rank */
        long long off = (long long) t_rank * n, want = below(off, n, end);
        memset(r, 0, (size_t) n);
        if (t_ok(read_call(fh, 1, off, r, (int) n, nonblocking, &st), "read_at_all")) {
            t_check_count(&st, MPI_BYTE, (int) want, "read_at_all past the end");
            for (long long i = 0; i < want; ++i) {
                if (r[i] != t_pat_file(off + i)) {
                    t_failf("read_at_all: byte %lld got %d want %d", off + i, r[i],
                            t_pat_file(off + i));
                    break;
                }
            }
        }
        /* K chunks of C bytes, every t_np-th chunk from the rank's own */
        t_ok(MPI_File_set_view(fh, (MPI_Offset) t_rank * C, MPI_BYTE, ftype, "native",
                               MPI_INFO_NULL), "set_view");
        want = 0;
        for (long long k = 0; k < K; ++k) {
            want += below((k * t_np + t_rank) * C, C, end);
        }
        memset(r, 0, (size_t) n);
        if (t_ok(read_call(fh, 0, 0, r, (int) n, nonblocking, &st), "read_all")) {
            /* Not the blocking read_all's count: Open MPI's io/ompio sets it
             * to the whole request after the fcoll returns (4.1 and 5.0
             * io_ompio_file_read.c), whatever the fcoll counted. */
            if (nonblocking) {
                t_check_count(&st, MPI_BYTE, (int) want, "iread_all past the end");
            }
            for (long long i = 0; i < want; ++i) {
                long long fo = (i / C * t_np + t_rank) * C + i % C;
                if (r[i] != t_pat_file(fo)) {
                    t_failf("read_all: byte %lld got %d want %d", fo, r[i], t_pat_file(fo));
                    break;
                }
            }
        }
        MPI_File_close(&fh);
    }
    MPI_Type_free(&ftype);
    MPI_Type_free(&vec);
    t_unlink(path);     /* collective */
    free(r);
    t_end_x(t_is_stock(), "stock fcoll/vulcan counts the whole request as read past the "
                          "end of file");
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "t_coll_unequal");
    if (t_np > 256) {
        return t_finish();
    }
    block_test();
    interleave_test(0);
    interleave_test(1);
    eof_test(0);
    eof_test(1);
    return t_finish();
}
