/*
 * t_shared.c: the shared file pointer (sharedfp framework).
 *
 * Data is written in 64-byte records: int rank, int seq, then 56 pattern
 * bytes that depend on (rank, seq), so any order of shared-pointer writes can
 * be checked: every record intact, each (rank, seq) exactly once, each rank's
 * records at increasing offsets, nothing else in the file.
 *
 *   shared.write_shared        1-3 records per call, default view, status
 *                              counts, final get_position_shared
 *   shared.read_shared         POSIX-prefilled records read with read_shared
 *                              (record etype view): every record read exactly
 *                              once across ranks; 0 count at EOF
 *   shared.seek_shared         seek_shared SET/CUR/END in etype units,
 *                              get_position_shared, write_shared after seek
 *   shared.write_ordered / read_ordered   rank-ordered layout, every third rank
 *                              contributes 0 records, starts after a seek_shared
 *   shared.ordered_begin_end   write_ordered_begin/end, read_ordered_begin/end
 *   shared.iwrite_shared.iread_shared     non-blocking shared-pointer calls
 */
#include "sfio_mpitest.h"

#define RS 64 /* record size */
#define K 24  /* records per rank */

static void rec_fill(unsigned char *r, int q, int seq, int tag)
{
    int j;
    memcpy(r, &q, 4);
    memcpy(r + 4, &seq, 4);
    for (j = 8; j < RS; j++) {
        r[j] = t_pat_data(q, (long long)seq * RS + j, tag);
    }
}

/* Check one record; returns 1 if valid, stores rank/seq. */
static int rec_ok(const unsigned char *r, int tag, int *q_p, int *seq_p, long long off)
{
    unsigned char w[RS];
    int q, seq;
    memcpy(&q, r, 4);
    memcpy(&seq, r + 4, 4);
    if (q < 0 || q >= t_np || seq < 0 || seq >= 1000000) {
        t_failf("record at byte %lld: bad header rank %d seq %d", off, q, seq);
        return 0;
    }
    rec_fill(w, q, seq, tag);
    if (!t_cmp(r, w, RS, off, "record")) {
        return 0;
    }
    *q_p = q;
    *seq_p = seq;
    return 1;
}

/*
 * Rank 0: file must hold exactly nrec[q] records of every rank q, in any
 * interleaving, each rank's own records in increasing seq order.
 */
static void verify_shared_file(const char *path, const int *nrec, int tag)
{
    long long sz, total = 0, i;
    unsigned char *f;
    int q, seq, *next;
    if (t_rank != 0) {
        return;
    }
    for (q = 0; q < t_np; q++) {
        total += nrec[q];
    }
    f = t_slurp(path, &sz);
    if (f == NULL) {
        return;
    }
    if (sz != total * RS) {
        t_failf("file size %lld, want %lld (%lld records)", sz, total * RS, total);
    }
    next = calloc((size_t)t_np, sizeof(int));
    for (i = 0; i + RS <= sz && !t_lfail; i += RS) {
        if (rec_ok(f + i, tag, &q, &seq, i)) {
            if (seq != next[q]) {
                t_failf("record at byte %lld: rank %d seq %d, want seq %d (lost, duplicated "
                        "or reordered)", i, q, seq, next[q]);
            }
            next[q] = seq + 1;
        }
    }
    for (q = 0; q < t_np && !t_lfail; q++) {
        if (next[q] != nrec[q]) {
            t_failf("rank %d: %d records in file, want %d", q, next[q], nrec[q]);
        }
    }
    free(next);
    free(f);
}

static void test_write_shared(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Status st;
    MPI_Offset pos;
    unsigned char buf[3 * RS];
    int tag = 41, seq = 0, c, *nrec = malloc(sizeof(int) * (size_t)t_np), q;
    if (!t_begin("shared.write_shared")) {
        free(nrec);
        return;
    }
    t_fname(path, sizeof(path), "write_shared");
    t_unlink(path);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh), "open")) {
        while (seq < K) {
            c = 1 + (seq + t_rank) % 3;
            if (c > K - seq) {
                c = K - seq;
            }
            for (q = 0; q < c; q++) {
                rec_fill(buf + q * RS, t_rank, seq + q, tag);
            }
            if (!t_ok(MPI_File_write_shared(fh, buf, c * RS, MPI_BYTE, &st), "write_shared")) {
                break;
            }
            t_check_count(&st, MPI_BYTE, c * RS, "write_shared");
            seq += c;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared");
        if (pos != (MPI_Offset)t_np * K * RS) {
            t_failf("shared position %lld want %lld", (long long)pos, (long long)t_np * K * RS);
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (q = 0; q < t_np; q++) {
        nrec[q] = K;
    }
    verify_shared_file(path, nrec, tag);
    t_unlink(path);
    free(nrec);
    t_end();
}

/* Rank 0 writes records 0..n-1 (rank field = i % np, seq = i) with POSIX. */
static void prefill_records(const char *path, int n, int tag)
{
    if (t_rank == 0) {
        unsigned char *b = malloc((size_t)n * RS);
        int i, fd;
        for (i = 0; i < n; i++) {
            rec_fill(b + (size_t)i * RS, i % t_np, i, tag);
        }
        unlink(path);
        fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        if (fd < 0 || write(fd, b, (size_t)n * RS) != (ssize_t)n * RS) {
            t_failf("prefill %s: %s", path, strerror(errno));
        }
        if (fd >= 0) {
            close(fd);
        }
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_read_shared(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype rec;
    unsigned char buf[2 * RS];
    int tag = 43, n = t_np * K, got = 0, *seen = NULL, *mine, nmine = 0, i, q, seq, c;
    int *counts = NULL, *displs = NULL, *all = NULL;
    if (!t_begin("shared.read_shared")) {
        return;
    }
    t_fname(path, sizeof(path), "read_shared");
    prefill_records(path, n, tag);
    MPI_Type_contiguous(RS, MPI_BYTE, &rec);
    MPI_Type_commit(&rec);
    mine = malloc(sizeof(int) * (size_t)(n + 1));
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), "open") &&
        t_ok(MPI_File_set_view(fh, 0, rec, rec, "native", MPI_INFO_NULL), "set_view")) {
        /* read 1 or 2 records per call until EOF */
        for (;;) {
            int want = 1 + (got + t_rank) % 2;
            if (!t_ok(MPI_File_read_shared(fh, buf, want, rec, &st), "read_shared")) {
                break;
            }
            MPI_Get_count(&st, rec, &c);
            if (c == 0) {
                break;
            }
            if (c < 0 || c > want) {
                t_failf("read_shared count %d (asked %d)", c, want);
                break;
            }
            for (i = 0; i < c; i++) {
                if (rec_ok(buf + i * RS, tag, &q, &seq, -1)) {
                    if (nmine > 0 && seq <= mine[nmine - 1]) {
                        t_failf("read_shared went backwards: seq %d after %d", seq,
                                mine[nmine - 1]);
                    }
                    mine[nmine++] = seq;
                }
            }
            got++;
            if (nmine > n) {
                t_failf("read more records than the file holds");
                break;
            }
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    if (t_rank == 0) {
        counts = malloc(sizeof(int) * (size_t)t_np);
        displs = malloc(sizeof(int) * (size_t)t_np);
    }
    MPI_Gather(&nmine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (t_rank == 0) {
        int tot = 0;
        for (q = 0; q < t_np; q++) {
            displs[q] = tot;
            tot += counts[q];
        }
        all = malloc(sizeof(int) * (size_t)(tot + 1));
        if (tot != n) {
            t_failf("ranks read %d records in total, file holds %d", tot, n);
        }
    }
    MPI_Gatherv(mine, nmine, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    if (t_rank == 0 && !t_lfail) {
        seen = calloc((size_t)n, sizeof(int));
        for (i = 0; i < n; i++) {
            if (all[i] < 0 || all[i] >= n || seen[all[i]]++) {
                t_failf("record %d read twice or out of range", all[i]);
                break;
            }
        }
        free(seen);
    }
    free(all), free(counts), free(displs), free(mine);
    MPI_Type_free(&rec);
    t_unlink(path);
    t_end();
}

static void test_seek_shared(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Status st;
    MPI_Offset pos;
    MPI_Datatype rec;
    unsigned char buf[RS];
    int tag = 45, n = 10 + t_np, q, seq;
    if (!t_begin("shared.seek_shared")) {
        return;
    }
    t_fname(path, sizeof(path), "seek_shared");
    prefill_records(path, n, tag);
    MPI_Type_contiguous(RS, MPI_BYTE, &rec);
    MPI_Type_commit(&rec);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open") &&
        t_ok(MPI_File_set_view(fh, 0, rec, rec, "native", MPI_INFO_NULL), "set_view")) {
        t_ok(MPI_File_seek_shared(fh, 5, MPI_SEEK_SET), "seek_shared set");
        MPI_File_get_position_shared(fh, &pos);
        if (pos != 5) {
            t_failf("after seek_shared(5, SET): %lld", (long long)pos);
        }
        MPI_Barrier(MPI_COMM_WORLD); /* seek_shared does not synchronize the exit */
        if (t_ok(MPI_File_read_shared(fh, buf, 1, rec, &st), "read_shared") &&
            rec_ok(buf, tag, &q, &seq, -1) && t_np == 1 && seq != 5) {
            t_failf("read_shared after seek got seq %d want 5", seq);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_seek_shared(fh, -2, MPI_SEEK_CUR), "seek_shared cur");
        MPI_File_get_position_shared(fh, &pos);
        if (pos != 5 + t_np - 2) {
            t_failf("after seek_shared(-2, CUR): %lld want %d", (long long)pos, 5 + t_np - 2);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_seek_shared(fh, -1, MPI_SEEK_END), "seek_shared end");
        MPI_File_get_position_shared(fh, &pos);
        if (pos != n - 1) {
            t_failf("after seek_shared(-1, END): %lld want %d", (long long)pos, n - 1);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* only the last rank in order reads the last record */
        if (t_ok(MPI_File_read_ordered(fh, buf, t_rank == t_np - 1 ? 1 : 0, rec, &st),
                 "read_ordered") && t_rank == t_np - 1 && rec_ok(buf, tag, &q, &seq, -1) &&
            seq != n - 1) {
            t_failf("read at END-1 got seq %d want %d", seq, n - 1);
        }
        /* append one record after seek_shared to the end */
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_seek_shared(fh, 0, MPI_SEEK_END), "seek_shared end");
        if (t_rank == 0) {
            rec_fill(buf, 0, n, tag);
            t_ok(MPI_File_write_shared(fh, buf, 1, rec, &st), "write_shared");
            t_check_count(&st, rec, 1, "write_shared");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_File_get_position_shared(fh, &pos);
        if (pos != n + 1) {
            t_failf("after write_shared at END: %lld want %d", (long long)pos, n + 1);
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        long long sz;
        unsigned char *f = t_slurp(path, &sz);
        if (f != NULL) {
            if (sz != (long long)(n + 1) * RS) {
                t_failf("file size %lld want %lld", sz, (long long)(n + 1) * RS);
            } else if (rec_ok(f + (size_t)n * RS, tag, &q, &seq, (long long)n * RS) &&
                       (q != 0 || seq != n)) {
                t_failf("appended record rank %d seq %d", q, seq);
            }
            free(f);
        }
    }
    MPI_Type_free(&rec);
    t_unlink(path);
    t_end();
}

/* Ordered writes and reads; split == 1 uses the _begin/_end forms. */
static void test_ordered(int split)
{
    char path[1200];
    MPI_File fh;
    MPI_Status st;
    MPI_Offset pos;
    MPI_Datatype rec;
    int tag = 47 + split, q, i, start = 3, mycnt, before = 0, total = 0;
    unsigned char *buf, *w;
    if (!t_begin(split ? "shared.ordered_begin_end" : "shared.write_ordered.read_ordered")) {
        return;
    }
    t_fname(path, sizeof(path), split ? "ordered_split" : "ordered");
    t_unlink(path);
    MPI_Type_contiguous(RS, MPI_BYTE, &rec);
    MPI_Type_commit(&rec);
    for (q = 0; q < t_np; q++) {
        int c = (t_np > 1 && q % 3 == 1) ? 0 : 2 + q % 4;
        if (q < t_rank) {
            before += c;
        }
        total += c;
    }
    mycnt = (t_np > 1 && t_rank % 3 == 1) ? 0 : 2 + t_rank % 4;
    buf = malloc((size_t)(mycnt + 1) * RS);
    w = malloc((size_t)(mycnt + 1) * RS);
    for (i = 0; i < mycnt; i++) {
        rec_fill(w + i * RS, t_rank, i, tag);
    }
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh), "open") &&
        t_ok(MPI_File_set_view(fh, 0, rec, rec, "native", MPI_INFO_NULL), "set_view")) {
        /* records start at index `start` (the first ones stay a hole of zeros) */
        t_ok(MPI_File_seek_shared(fh, start, MPI_SEEK_SET), "seek_shared");
        if (split) {
            t_ok(MPI_File_write_ordered_begin(fh, w, mycnt, rec), "write_ordered_begin");
            if (t_ok(MPI_File_write_ordered_end(fh, w, &st), "write_ordered_end")) {
                t_check_count(&st, rec, mycnt, "write_ordered_end");
            }
        } else if (t_ok(MPI_File_write_ordered(fh, w, mycnt, rec, &st), "write_ordered")) {
            t_check_count(&st, rec, mycnt, "write_ordered");
        }
        MPI_File_get_position_shared(fh, &pos);
        if (pos != start + total) {
            t_failf("shared position after write_ordered %lld want %d", (long long)pos,
                    start + total);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_sync(fh), "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_sync(fh), "sync");
        t_ok(MPI_File_seek_shared(fh, start, MPI_SEEK_SET), "seek_shared");
        memset(buf, 0, (size_t)(mycnt + 1) * RS);
        if (split) {
            t_ok(MPI_File_read_ordered_begin(fh, buf, mycnt, rec), "read_ordered_begin");
            if (t_ok(MPI_File_read_ordered_end(fh, buf, &st), "read_ordered_end")) {
                t_check_count(&st, rec, mycnt, "read_ordered_end");
            }
        } else if (t_ok(MPI_File_read_ordered(fh, buf, mycnt, rec, &st), "read_ordered")) {
            t_check_count(&st, rec, mycnt, "read_ordered");
        }
        t_cmp(buf, w, (size_t)mycnt * RS, (long long)(start + before) * RS, "read_ordered");
        MPI_File_get_position_shared(fh, &pos);
        if (pos != start + total) {
            t_failf("shared position after read_ordered %lld want %d", (long long)pos,
                    start + total);
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        long long sz = (long long)(start + total) * RS, o = (long long)start * RS;
        unsigned char *img = calloc((size_t)sz, 1);
        for (q = 0; q < t_np; q++) {
            int c = (t_np > 1 && q % 3 == 1) ? 0 : 2 + q % 4;
            for (i = 0; i < c; i++, o += RS) {
                rec_fill(img + o, q, i, tag);
            }
        }
        t_verify_file(path, img, sz);
        free(img);
    }
    free(buf), free(w);
    MPI_Type_free(&rec);
    t_unlink(path);
    t_end();
}

static void test_nb_shared(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Request rq[2];
    MPI_Status st[2];
    MPI_Offset pos;
    unsigned char w[2 * RS], r[2 * RS];
    int tag = 51, seq, i, q, s2, *nrec = malloc(sizeof(int) * (size_t)t_np);
    if (!t_begin("shared.iwrite_shared.iread_shared")) {
        free(nrec);
        return;
    }
    t_fname(path, sizeof(path), "nb_shared");
    t_unlink(path);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh), "open")) {
        for (seq = 0; seq < K; seq += 2) {
            rec_fill(w, t_rank, seq, tag);
            rec_fill(w + RS, t_rank, seq + 1, tag);
            /* two requests in flight; each is one record, ordered by posting */
            t_ok(MPI_File_iwrite_shared(fh, w, RS, MPI_BYTE, &rq[0]), "iwrite_shared");
            t_ok(MPI_File_iwrite_shared(fh, w + RS, RS, MPI_BYTE, &rq[1]), "iwrite_shared");
            if (t_ok(MPI_Waitall(2, rq, st), "waitall")) {
                t_check_count(&st[0], MPI_BYTE, RS, "iwrite_shared");
                t_check_count(&st[1], MPI_BYTE, RS, "iwrite_shared");
            }
        }
        t_ok(MPI_File_sync(fh), "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_sync(fh), "sync");
        MPI_File_get_position_shared(fh, &pos);
        if (pos != (MPI_Offset)t_np * K * RS) {
            t_failf("shared position %lld want %lld", (long long)pos, (long long)t_np * K * RS);
        }
        /* collectives need not synchronize: keep seek_shared after every check */
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), "seek_shared");
        /* each rank reads K records with iread_shared; all must be valid */
        for (i = 0; i < K; i++) {
            t_ok(MPI_File_iread_shared(fh, r, RS, MPI_BYTE, &rq[0]), "iread_shared");
            if (t_ok(MPI_Wait(&rq[0], &st[0]), "wait")) {
                t_check_count(&st[0], MPI_BYTE, RS, "iread_shared");
                rec_ok(r, tag, &q, &s2, -1);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_File_get_position_shared(fh, &pos);
        if (pos != (MPI_Offset)t_np * K * RS) {
            t_failf("shared position after reads %lld want %lld", (long long)pos,
                    (long long)t_np * K * RS);
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (q = 0; q < t_np; q++) {
        nrec[q] = K;
    }
    /* two requests of one rank may complete in either order: relax seq order */
    if (t_rank == 0) {
        long long sz, o;
        unsigned char *f = t_slurp(path, &sz);
        int *cnt = calloc((size_t)t_np * K, sizeof(int));
        if (f != NULL) {
            if (sz != (long long)t_np * K * RS) {
                t_failf("file size %lld want %lld", sz, (long long)t_np * K * RS);
            }
            for (o = 0; o + RS <= sz && !t_lfail; o += RS) {
                if (rec_ok(f + o, tag, &q, &s2, o) && (s2 >= K || cnt[q * K + s2]++)) {
                    t_failf("record rank %d seq %d duplicated or out of range", q, s2);
                }
            }
            free(f);
        }
        free(cnt);
    }
    free(nrec);
    t_unlink(path);
    t_end();
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "shared");
    test_write_shared();
    test_read_shared();
    test_seek_shared();
    test_ordered(0);
    test_ordered(1);
    test_nb_shared();
    return t_finish();
}
