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

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "t_coll_unequal");
    if (t_np > 256) {
        return t_finish();
    }
    block_test();
    interleave_test(0);
    interleave_test(1);
    return t_finish();
}
