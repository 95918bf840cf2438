/*
 * t_fetchadd.c: the shared file pointer as issue #6 asks for it (written for
 * sharedfp/fetchadd, valid for any correct sharedfp component).
 *
 * Records are RS bytes: int rank, int seq, int round, int checksum, then a
 * pattern that depends on (rank, seq, tag); a torn or foreign record fails
 * its checksum.
 *
 *   fetchadd.append        every rank appends K records with write_shared
 *                          (1-3 records per call, some with iwrite_shared),
 *                          record etype view: the file holds exactly np*K
 *                          records, each once, none torn, each rank's in
 *                          its own order; final shared position np*K
 *   fetchadd.ordered_rounds  R rounds of write_ordered (odd rounds with the
 *                          begin/end form), rank r writes 1 + r%3 records a
 *                          round (rank 1 none in round 1): file is round by
 *                          round in rank order; read_ordered rounds return
 *                          the same records to the same ranks
 *   fetchadd.read_order    read_shared on a prefilled file: each rank's
 *                          records come in increasing pointer order, all of
 *                          them exactly once; read_ordered after a seek
 *   fetchadd.seek_standard seek_shared/get_position_shared by the MPI
 *                          standard: etype units (MPI_INT) through a view
 *                          with holes and a displacement, SET/CUR/END (END is
 *                          the first etype past the end of file in the
 *                          view), set_view resets the pointer to 0, a
 *                          negative seek is an error that leaves the pointer
 *                          alone, MPI_MODE_APPEND starts at the file size,
 *                          MPI_DISPLACEMENT_CURRENT is not needed
 *   fetchadd.same_basename two files "log" in two directories open at once,
 *                          and one file opened twice: independent pointers,
 *                          each file exactly its own records
 *   fetchadd.reopen_loop   1000 open/close cycles (a write_shared every 100):
 *                          no hang, data right, no shared-memory segment of
 *                          this job left in /dev/shm
 *   fetchadd.reopen_comms  50 open/close cycles (a write_shared each) on the
 *                          world, on a dup of it and on a split of it (even
 *                          and odd ranks, each its own file): every
 *                          service after the first on the same ranks
 *                          opens without exchanging addresses; data right.
 *                          With the rma backend the two halves take turns:
 *                          Open MPI 4.1's osc/rdma names a window's shared
 *                          memory by communicator id, which disjoint
 *                          communicators share, so two halves creating
 *                          windows at once on one node unlink each
 *                          other's segment
 *   fetchadd.open_fd_limit one node, np > 1: rank 1 opens with no file
 *                          descriptor to spare beyond the file's own (its
 *                          RLIMIT_NOFILE lowered for the open), then with
 *                          one and two more: every rank gets the same
 *                          result of MPI_File_open (no hang, no rank open
 *                          alone), no segment of this job is left in
 *                          /dev/shm, and where the open succeeded each
 *                          rank's read_shared gets a different record
 *   fetchadd.busy_rank     the rank that holds the pointer (the file info's
 *                          "sfio_sharedfp_host", else rank 0, which
 *                          created the shared-memory page) sleeps 5 s
 *                          outside MPI; the others' write_shared and
 *                          get_position_shared must be done within 1 s
 *   fetchadd.host_stopped  ofi backend only: another rank of the host's node
 *                          stops the host (SIGSTOP, progress thread too);
 *                          the other ranks' write_shared must fail (not
 *                          hang) after sharedfp_fetchadd_timeout (this
 *                          program sets 3 s unless the environment has
 *                          one), then the host continues (SIGCONT);
 *                          runs only with SFIO_TEST_HOST_STOPPED=1
 *
 * With --crash-loop, every rank writes its pid to <dir>/crash.pid.<rank>,
 * then opens, write_shared's and closes a file until it is killed (used by
 * crash_sharedfp.sh).
 */
#include "sfio_mpitest.h"

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <time.h>

#define RS 48
#define K 200
#define ROUNDS 6

static uint32_t rec_sum(const unsigned char *r)
{
    uint32_t h = 2166136261u;
    for (int j = 0; j < RS; j++) {
        if (j < 12 || j >= 16) {
            h = (h ^ r[j]) * 16777619u;
        }
    }
    return h;
}

static void rec_fill(unsigned char *r, int q, int seq, int round, int tag)
{
    uint32_t s;
    memcpy(r, &q, 4);
    memcpy(r + 4, &seq, 4);
    memcpy(r + 8, &round, 4);
    for (int j = 16; j < RS; j++) {
        r[j] = t_pat_data(q, (long long)seq * RS + j, tag);
    }
    s = rec_sum(r);
    memcpy(r + 12, &s, 4);
}

/* 1 and the fields when r is an intact record of this tag. */
static int rec_get(const unsigned char *r, int tag, int *q_p, int *seq_p, int *round_p)
{
    unsigned char w[RS];
    int q, seq, round;
    uint32_t s;
    memcpy(&q, r, 4);
    memcpy(&seq, r + 4, 4);
    memcpy(&round, r + 8, 4);
    memcpy(&s, r + 12, 4);
    if (q < 0 || q >= t_np || seq < 0 || seq > 1000000 || s != rec_sum(r)) {
        return 0;
    }
    rec_fill(w, q, seq, round, tag);
    if (memcmp(w, r, RS) != 0) {
        return 0;
    }
    *q_p = q;
    *seq_p = seq;
    *round_p = round;
    return 1;
}

static MPI_Datatype rec_type(void)
{
    MPI_Datatype t;
    MPI_Type_contiguous(RS, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
}

/* ---------------------------------------------------------------------- */

static void test_append(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Status st;
    MPI_Request rq;
    MPI_Offset pos;
    MPI_Datatype rec = rec_type();
    unsigned char buf[3 * RS];
    int tag = 61, seq = 0, c, i;
    if (!t_begin("fetchadd.append")) {
        MPI_Type_free(&rec);
        return;
    }
    t_fname(path, sizeof(path), "append");
    t_unlink(path);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                           MPI_INFO_NULL, &fh), "open") &&
        t_ok(MPI_File_set_view(fh, 0, rec, rec, "native", MPI_INFO_NULL), "set_view")) {
        while (seq < K && !t_lfail) {
            c = 1 + (seq / 3 + t_rank) % 3;
            if (c > K - seq) {
                c = K - seq;
            }
            for (i = 0; i < c; i++) {
                rec_fill(buf + i * RS, t_rank, seq + i, 0, tag);
            }
            if (seq % 7 == 3) {
                if (t_ok(MPI_File_iwrite_shared(fh, buf, c, rec, &rq), "iwrite_shared") &&
                    t_ok(MPI_Wait(&rq, &st), "wait")) {
                    t_check_count(&st, rec, c, "iwrite_shared");
                }
            } else if (t_ok(MPI_File_write_shared(fh, buf, c, rec, &st), "write_shared")) {
                t_check_count(&st, rec, c, "write_shared");
            }
            seq += c;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (t_ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared") &&
            pos != (MPI_Offset)t_np * K) {
            t_failf("shared position %lld records, want %lld", (long long)pos,
                    (long long)t_np * K);
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0 && !t_lfail) {
        long long sz, o;
        unsigned char *f = t_slurp(path, &sz);
        int *next = calloc((size_t)t_np, sizeof(int)), q, s, r;
        if (f != NULL) {
            if (sz != (long long)t_np * K * RS) {
                t_failf("file size %lld, want %lld (%d records)", sz, (long long)t_np * K * RS,
                        t_np * K);
            }
            for (o = 0; o + RS <= sz && !t_lfail; o += RS) {
                if (!rec_get(f + o, tag, &q, &s, &r)) {
                    t_failf("record at byte %lld is torn or foreign", o);
                } else if (s != next[q]) {
                    t_failf("record at byte %lld: rank %d seq %d, want seq %d", o, q, s, next[q]);
                } else {
                    next[q]++;
                }
            }
            for (q = 0; q < t_np && !t_lfail; q++) {
                if (next[q] != K) {
                    t_failf("rank %d: %d records in the file, want %d", q, next[q], K);
                }
            }
            free(f);
        }
        free(next);
    }
    t_unlink(path);
    MPI_Type_free(&rec);
    t_end();
}

/* Records rank q writes in round: 1 + q % 3, rank 1 none in round 1. */
static int round_count(int q, int round)
{
    return (t_np > 1 && q == 1 && round == 1) ? 0 : 1 + q % 3;
}

static void test_ordered_rounds(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Status st;
    MPI_Offset pos;
    MPI_Datatype rec = rec_type();
    unsigned char buf[3 * RS], got[3 * RS];
    int tag = 63, round, i, c, seq = 0;
    long long total = 0;
    if (!t_begin("fetchadd.ordered_rounds")) {
        MPI_Type_free(&rec);
        return;
    }
    for (round = 0; round < ROUNDS; round++) {
        for (i = 0; i < t_np; i++) {
            total += round_count(i, round);
        }
    }
    t_fname(path, sizeof(path), "ordered");
    t_unlink(path);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh), "open") &&
        t_ok(MPI_File_set_view(fh, 0, rec, rec, "native", MPI_INFO_NULL), "set_view")) {
        for (round = 0; round < ROUNDS && !t_lfail; round++) {
            c = round_count(t_rank, round);
            for (i = 0; i < c; i++) {
                rec_fill(buf + i * RS, t_rank, seq + i, round, tag);
            }
            if (round % 2) {
                t_ok(MPI_File_write_ordered_begin(fh, buf, c, rec), "write_ordered_begin");
                if (t_ok(MPI_File_write_ordered_end(fh, buf, &st), "write_ordered_end")) {
                    t_check_count(&st, rec, c, "write_ordered_end");
                }
            } else if (t_ok(MPI_File_write_ordered(fh, buf, c, rec, &st), "write_ordered")) {
                t_check_count(&st, rec, c, "write_ordered");
            }
            seq += c;
        }
        if (t_ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared") &&
            pos != total) {
            t_failf("position after the rounds %lld, want %lld", (long long)pos, total);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_sync(fh), "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_sync(fh), "sync");
        /* read the rounds back in the same order: each rank gets its records */
        t_ok(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), "seek_shared");
        seq = 0;
        for (round = 0; round < ROUNDS && !t_lfail; round++) {
            c = round_count(t_rank, round);
            memset(got, 0, sizeof(got));
            if (round % 2) {
                t_ok(MPI_File_read_ordered_begin(fh, got, c, rec), "read_ordered_begin");
                if (t_ok(MPI_File_read_ordered_end(fh, got, &st), "read_ordered_end")) {
                    t_check_count(&st, rec, c, "read_ordered_end");
                }
            } else if (t_ok(MPI_File_read_ordered(fh, got, c, rec, &st), "read_ordered")) {
                t_check_count(&st, rec, c, "read_ordered");
            }
            for (i = 0; i < c; i++) {
                rec_fill(buf + i * RS, t_rank, seq + i, round, tag);
            }
            t_cmp(got, buf, (size_t)c * RS, -1, "read_ordered record");
            seq += c;
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0 && !t_lfail) {
        /* the image: round by round, rank by rank */
        unsigned char *img = malloc((size_t)total * RS);
        int *qseq = calloc((size_t)t_np, sizeof(int)), q;
        long long o = 0;
        for (round = 0; round < ROUNDS; round++) {
            for (q = 0; q < t_np; q++) {
                for (i = 0; i < round_count(q, round); i++, o += RS) {
                    rec_fill(img + o, q, qseq[q]++, round, tag);
                }
            }
        }
        t_verify_file(path, img, total * RS);
        free(img);
        free(qseq);
    }
    t_unlink(path);
    MPI_Type_free(&rec);
    t_end();
}

static void prefill_records(const char *path, int n, int tag)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        unsigned char *b = malloc((size_t)n * RS);
        int fd;
        for (int i = 0; i < n; i++) {
            rec_fill(b + (size_t)i * RS, i % t_np, i, 0, tag);
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

static void test_read_order(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Status st;
    MPI_Offset pos, before;
    MPI_Datatype rec = rec_type();
    unsigned char buf[RS * 4];
    int tag = 65, n = t_np * 40, last = -1, mine = 0, total = 0, c, q, s, r, i;
    int *seen = NULL;
    if (!t_begin("fetchadd.read_order")) {
        MPI_Type_free(&rec);
        return;
    }
    t_fname(path, sizeof(path), "read_order");
    prefill_records(path, n, tag);
    seen = calloc((size_t)n, sizeof(int));
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), "open") &&
        t_ok(MPI_File_set_view(fh, 0, rec, rec, "native", MPI_INFO_NULL), "set_view")) {
        for (;;) {
            /* the pointer only grows: a record read now lies at or after
             * the position seen before the call */
            t_ok(MPI_File_get_position_shared(fh, &before), "get_position_shared");
            if (!t_ok(MPI_File_read_shared(fh, buf, 1, rec, &st), "read_shared")) {
                break;
            }
            MPI_Get_count(&st, rec, &c);
            if (c == 0) {
                break;
            }
            if (!rec_get(buf, tag, &q, &s, &r)) {
                t_failf("read_shared returned a torn record");
                break;
            }
            if (s <= last || s < before) {
                t_failf("read_shared returned record %d after %d (position before %lld)", s,
                        last, (long long)before);
                break;
            }
            last = s;
            seen[s]++;
            mine++;
        }
        MPI_Allreduce(MPI_IN_PLACE, seen, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (total != n) {
            t_failf("ranks read %d records, the file holds %d", total, n);
        }
        for (i = 0; i < n && !t_lfail; i++) {
            if (seen[i] != 1) {
                t_failf("record %d read %d times", i, seen[i]);
            }
        }
        /* read_ordered from record 3: rank q gets records 3 + 2q, 3 + 2q + 1 */
        t_ok(MPI_File_seek_shared(fh, 3, MPI_SEEK_SET), "seek_shared");
        if (t_ok(MPI_File_read_ordered(fh, buf, 2, rec, &st), "read_ordered")) {
            t_check_count(&st, rec, 2, "read_ordered");
            for (i = 0; i < 2; i++) {
                if (!rec_get(buf + i * RS, tag, &q, &s, &r) || s != 3 + 2 * t_rank + i) {
                    t_failf("read_ordered record %d: seq %d, want %d", i, s, 3 + 2 * t_rank + i);
                }
            }
        }
        if (t_ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared") &&
            pos != 3 + 2 * t_np) {
            t_failf("position after read_ordered %lld, want %d", (long long)pos, 3 + 2 * t_np);
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    free(seen);
    t_unlink(path);
    MPI_Type_free(&rec);
    t_end();
}

/* View of seek_standard: etype MPI_INT, filetype 2 ints out of every 3,
 * displacement 16 bytes.  Element k is at byte 16 + (k/2)*12 + (k%2)*4. */
static long long int_elem_off(long long k)
{
    return 16 + (k / 2) * 12 + (k % 2) * 4;
}

static void test_seek_standard(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Status st;
    MPI_Offset pos, sz;
    MPI_Datatype ft;
    int v, rc, i;
    if (!t_begin("fetchadd.seek_standard")) {
        return;
    }
    t_fname(path, sizeof(path), "seek_std");
    t_unlink(path);
    MPI_Type_vector(1, 2, 3, MPI_INT, &ft);
    {
        MPI_Datatype r;
        MPI_Type_create_resized(ft, 0, 12, &r);
        MPI_Type_free(&ft);
        ft = r;
    }
    MPI_Type_commit(&ft);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh), "open")) {
        /* a new file: the pointer starts at 0 */
        if (t_ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared") && pos != 0) {
            t_failf("position after open %lld, want 0", (long long)pos);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* move it, then set_view must reset it to 0 */
        if (t_rank == 0) {
            char b[10] = "012345678";
            t_ok(MPI_File_write_shared(fh, b, 10, MPI_CHAR, &st), "write_shared");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_set_view(fh, 16, MPI_INT, ft, "native", MPI_INFO_NULL), "set_view");
        if (t_ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared") && pos != 0) {
            t_failf("position after set_view %lld, want 0", (long long)pos);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* SET: etype units */
        t_ok(MPI_File_seek_shared(fh, 5, MPI_SEEK_SET), "seek_shared(5, SET)");
        if (t_ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared") && pos != 5) {
            t_failf("after seek_shared(5, SET): %lld", (long long)pos);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* rank 0 writes element 5 through the holes of the view */
        if (t_rank == 0) {
            v = 5005;
            t_ok(MPI_File_write_shared(fh, &v, 1, MPI_INT, &st), "write_shared");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (t_ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared") && pos != 6) {
            t_failf("after one write_shared at 5: %lld, want 6", (long long)pos);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* CUR */
        t_ok(MPI_File_seek_shared(fh, -2, MPI_SEEK_CUR), "seek_shared(-2, CUR)");
        if (t_ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared") && pos != 4) {
            t_failf("after seek_shared(-2, CUR): %lld, want 4", (long long)pos);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* END: the file ends right after element 5, so end is element 6 */
        t_ok(MPI_File_seek_shared(fh, 0, MPI_SEEK_END), "seek_shared(0, END)");
        if (t_ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared") && pos != 6) {
            t_failf("after seek_shared(0, END): %lld, want 6", (long long)pos);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        t_ok(MPI_File_seek_shared(fh, -3, MPI_SEEK_END), "seek_shared(-3, END)");
        if (t_ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared") && pos != 3) {
            t_failf("after seek_shared(-3, END): %lld, want 3", (long long)pos);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* a negative position is erroneous; the pointer stays */
        MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
        rc = MPI_File_seek_shared(fh, -4, MPI_SEEK_CUR);
        if (rc == MPI_SUCCESS) {
            t_failf("seek_shared to element -1 succeeded");
        }
        if (t_ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared") && pos != 3) {
            t_failf("after a failed seek: %lld, want 3", (long long)pos);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* every rank appends one element in rank order at the end */
        t_ok(MPI_File_seek_shared(fh, 0, MPI_SEEK_END), "seek_shared(0, END)");
        v = 7000 + t_rank;
        t_ok(MPI_File_write_ordered(fh, &v, 1, MPI_INT, &st), "write_ordered");
        if (t_ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared") &&
            pos != 6 + t_np) {
            t_failf("after write_ordered at END: %lld, want %d", (long long)pos, 6 + t_np);
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0 && !t_lfail) {
        long long fsz;
        unsigned char *f = t_slurp(path, &fsz);
        if (f != NULL) {
            int got;
            if (fsz != int_elem_off(6 + t_np - 1) + 4) {
                t_failf("file size %lld, want %lld", fsz, int_elem_off(6 + t_np - 1) + 4);
            } else {
                memcpy(&got, f + int_elem_off(5), 4);
                if (got != 5005) {
                    t_failf("element 5 (byte %lld) holds %d, want 5005", int_elem_off(5), got);
                }
                for (i = 0; i < t_np; i++) {
                    memcpy(&got, f + int_elem_off(6 + i), 4);
                    if (got != 7000 + i) {
                        t_failf("element %d holds %d, want %d", 6 + i, got, 7000 + i);
                    }
                }
            }
            free(f);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* MPI_MODE_APPEND: both pointers start at the end of file */
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_APPEND,
                           MPI_INFO_NULL, &fh), "open append")) {
        MPI_File_get_size(fh, &sz);
        if (t_ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared") && pos != sz) {
            t_failf("APPEND: shared position %lld, want the size %lld", (long long)pos,
                    (long long)sz);
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Type_free(&ft);
    t_unlink(path);
    t_end();
}

/* Writes n records of (tag, rank) through fh with write_shared. */
static void write_records(MPI_File fh, int n, int first_seq, int tag)
{
    unsigned char b[RS];
    MPI_Status st;
    for (int i = 0; i < n && !t_lfail; i++) {
        rec_fill(b, t_rank, first_seq + i, 0, tag);
        t_ok(MPI_File_write_shared(fh, b, RS, MPI_BYTE, &st), "write_shared");
    }
}

/* Rank 0: path holds exactly per_rank records with tag of every rank q
 * with q % mod == color, none of the others. */
static void check_records_of(const char *path, int per_rank, int tag, int mod, int color)
{
    long long sz, o, want = 0;
    unsigned char *f;
    int *cnt, q, s, r;
    if (t_rank != 0 || t_lfail) {
        return;
    }
    f = t_slurp(path, &sz);
    if (f == NULL) {
        return;
    }
    cnt = calloc((size_t)t_np, sizeof(int));
    for (q = 0; q < t_np; q++) {
        want += q % mod == color ? per_rank : 0;
    }
    if (sz != want * RS) {
        t_failf("%s: size %lld, want %lld", path, sz, want * RS);
    }
    for (o = 0; o + RS <= sz && !t_lfail; o += RS) {
        if (!rec_get(f + o, tag, &q, &s, &r)) {
            t_failf("%s: record at byte %lld torn or of another file", path, o);
        } else {
            cnt[q]++;
        }
    }
    for (q = 0; q < t_np && !t_lfail; q++) {
        if (cnt[q] != (q % mod == color ? per_rank : 0)) {
            t_failf("%s: rank %d has %d records, want %d", path, q, cnt[q],
                    q % mod == color ? per_rank : 0);
        }
    }
    free(cnt);
    free(f);
}

/* Rank 0: path holds exactly per_rank records of every rank with tag. */
static void check_records(const char *path, int per_rank, int tag)
{
    check_records_of(path, per_rank, tag, 1, 0);
}

static void test_same_basename(void)
{
    char da[1200], db[1200], pa[1300], pb[1300];
    MPI_File fa, fb, fa2;
    MPI_Offset pos;
    int i;
    if (!t_begin("fetchadd.same_basename")) {
        return;
    }
    t_fname(da, sizeof(da), "dirA");
    t_fname(db, sizeof(db), "dirB");
    snprintf(pa, sizeof(pa), "%s/log", da);
    snprintf(pb, sizeof(pb), "%s/log", db);
    if (t_rank == 0) {
        mkdir(da, 0755);
        mkdir(db, 0755);
        unlink(pa);
        unlink(pb);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, pa, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fa), "open A") &&
        t_ok(MPI_File_open(MPI_COMM_WORLD, pb, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fb), "open B")) {
        for (i = 0; i < 20 && !t_lfail; i++) {
            write_records(fa, 1, i, 71);
            write_records(fb, 2, 2 * i, 72);
        }
        /* the same file opened a second time has its own pointer */
        if (t_ok(MPI_File_open(MPI_COMM_WORLD, pa, MPI_MODE_RDONLY, MPI_INFO_NULL, &fa2),
                 "open A again")) {
            if (t_ok(MPI_File_get_position_shared(fa2, &pos), "get_position_shared") &&
                pos != 0) {
                t_failf("second handle of A starts at %lld, want 0", (long long)pos);
            }
            t_ok(MPI_File_close(&fa2), "close A again");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (t_ok(MPI_File_get_position_shared(fa, &pos), "get_position_shared A") &&
            pos != (MPI_Offset)t_np * 20 * RS) {
            t_failf("A position %lld, want %lld", (long long)pos, (long long)t_np * 20 * RS);
        }
        if (t_ok(MPI_File_get_position_shared(fb, &pos), "get_position_shared B") &&
            pos != (MPI_Offset)t_np * 40 * RS) {
            t_failf("B position %lld, want %lld", (long long)pos, (long long)t_np * 40 * RS);
        }
        t_ok(MPI_File_close(&fa), "close A");
        t_ok(MPI_File_close(&fb), "close B");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check_records(pa, 20, 71);
    check_records(pb, 40, 72);
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        unlink(pa);
        unlink(pb);
        rmdir(da);
        rmdir(db);
    }
    t_end();
}

/* Rank 0: entries of /dev/shm named sfio-coord-<uid>-<pid> of this job's
 * ranks (all on this node in the tests). */
static int leftover_segments(void)
{
    long *pids = NULL;
    long me = (long)getpid();
    int n = 0;
    if (t_rank == 0) {
        pids = malloc(sizeof(long) * (size_t)t_np);
    }
    MPI_Gather(&me, 1, MPI_LONG, pids, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (t_rank == 0) {
        DIR *d = opendir("/dev/shm");
        struct dirent *e;
        char pre[64];
        while (d != NULL && (e = readdir(d)) != NULL) {
            for (int q = 0; q < t_np; q++) {
                snprintf(pre, sizeof(pre), "sfio-coord-%u-%ld-", (unsigned)getuid(), pids[q]);
                n += strncmp(e->d_name, pre, strlen(pre)) == 0;
            }
        }
        if (d != NULL) {
            closedir(d);
        }
        free(pids);
    }
    return n;
}

static void test_reopen_loop(void)
{
    char path[1200];
    MPI_File fh;
    int i, n = 1000, writes = 0, left;
    double t0 = MPI_Wtime();
    if (!t_begin("fetchadd.reopen_loop")) {
        return;
    }
    t_fname(path, sizeof(path), "reopen");
    t_unlink(path);
    for (i = 0; i < n && !t_lfail; i++) {
        if (!t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                MPI_INFO_NULL, &fh), "open")) {
            break;
        }
        if (i % 100 == 0) {
            /* appends after what earlier opens wrote */
            t_ok(MPI_File_seek_shared(fh, 0, MPI_SEEK_END), "seek_shared END");
            write_records(fh, 1, writes, 73);
            writes++;
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check_records(path, writes, 73);
    left = leftover_segments();
    if (t_rank == 0 && left != 0) {
        t_failf("%d coordination segments of this job left in /dev/shm", left);
    }
    if (t_rank == 0 && getenv("SFIO_TEST_VERBOSE") != NULL) {
        printf("# reopen_loop: %d opens in %.2f s\n", i, MPI_Wtime() - t0);
    }
    t_unlink(path);
    t_end();
}

/* Whether every rank runs on this node. */
static int one_node(void)
{
    MPI_Comm node;
    int n = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    return n == t_np;
}

static void test_open_fd_limit(void)
{
    char path[1200];
    MPI_File fh;
    if (!t_begin("fetchadd.open_fd_limit")) {
        return;
    }
    if (t_np < 2 || !one_node()) {
        t_end();
        return;
    }
    t_fname(path, sizeof(path), "fdlimit");
    t_unlink(path);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                           MPI_INFO_NULL, &fh), "create")) {
        int v = t_rank;
        t_ok(MPI_File_write_at(fh, (MPI_Offset)t_rank * 4, &v, 1, MPI_INT, MPI_STATUS_IGNORE),
             "write_at");
        t_ok(MPI_File_close(&fh), "close");
    }
    for (int spare = 1; spare <= 3 && !t_lfail; spare++) {
        struct rlimit old, lim;
        getrlimit(RLIMIT_NOFILE, &old);
        MPI_Barrier(MPI_COMM_WORLD);
        if (t_rank == 1) {
            int lowest = dup(0);   /* the next descriptor an open gets */
            close(lowest);
            lim = old;
            lim.rlim_cur = (rlim_t)lowest + (rlim_t)spare;
            setrlimit(RLIMIT_NOFILE, &lim);
        }
        int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        if (t_rank == 1) {
            setrlimit(RLIMIT_NOFILE, &old);
        }
        int ok = MPI_SUCCESS == rc, lo = 0, hi = 0;
        MPI_Allreduce(&ok, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&ok, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (lo != hi) {
            t_failf("%d spare descriptors: the open succeeded on some ranks only (here: %d)",
                    spare, ok);
        }
        if (ok) {
            int x = -1, all_x[64], mine_ok = 1, all_ok = 1;
            t_ok(MPI_File_read_shared(fh, &x, 1, MPI_INT, MPI_STATUS_IGNORE), "read_shared");
            if (t_np <= 64) {
                MPI_Allgather(&x, 1, MPI_INT, all_x, 1, MPI_INT, MPI_COMM_WORLD);
                for (int q = 0; q < t_np; q++) {
                    mine_ok &= all_x[q] >= 0 && all_x[q] < t_np && (q == t_rank || all_x[q] != x);
                }
                MPI_Allreduce(&mine_ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
                if (!all_ok && t_rank == 0) {
                    t_failf("%d spare descriptors: read_shared records not distinct", spare);
                }
            }
            t_ok(MPI_File_close(&fh), "close");
        }
        if (t_rank == 0 && getenv("SFIO_TEST_VERBOSE") != NULL) {
            printf("# open_fd_limit: %d spare: open %s\n", spare, ok ? "succeeded" : "failed");
        }
    }
    int left = leftover_segments();
    if (t_rank == 0 && left != 0) {
        t_failf("%d coordination segments of this job left in /dev/shm", left);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t_unlink(path);
    t_end();
}

/* n open/close cycles on comm, a write_shared each after what the
 * earlier cycles wrote; returns the time per cycle. */
static double reopen_cycles(MPI_Comm comm, const char *path, int n, int tag)
{
    MPI_File fh;
    double t0 = MPI_Wtime();
    for (int i = 0; i < n && !t_lfail; i++) {
        if (!t_ok(MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                                &fh), "open")) {
            break;
        }
        t_ok(MPI_File_seek_shared(fh, 0, MPI_SEEK_END), "seek_shared END");
        write_records(fh, 1, i, tag);
        t_ok(MPI_File_close(&fh), "close");
    }
    return (MPI_Wtime() - t0) / n;
}

static void test_reopen_comms(void)
{
    enum { N = 50 };
    char pw[1200], pd[1200], ps[2][1200];
    MPI_Comm dup, split;
    double tw, td, ts;
    if (!t_begin("fetchadd.reopen_comms")) {
        return;
    }
    t_fname(pw, sizeof(pw), "reopen_world");
    t_fname(pd, sizeof(pd), "reopen_dup");
    t_fname(ps[0], sizeof(ps[0]), "reopen_split0");
    t_fname(ps[1], sizeof(ps[1]), "reopen_split1");
    t_unlink(pw);
    t_unlink(pd);
    t_unlink(ps[0]);
    t_unlink(ps[1]);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    /* even and odd ranks: across the nodes when ranks fill them in blocks */
    MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, t_rank, &split);
    tw = reopen_cycles(MPI_COMM_WORLD, pw, N, 74);
    td = reopen_cycles(dup, pd, N, 75);
    const char *be = getenv("OMPI_MCA_sharedfp_fetchadd_backend");
    if (NULL != be && 0 == strcmp(be, "rma")) {
        for (int half = 0; half < 2; ++half) {
            if (t_rank % 2 == half) {
                ts = reopen_cycles(split, ps[half], N, 76);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    } else {
        ts = reopen_cycles(split, ps[t_rank % 2], N, 76);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check_records(pw, N, 74);
    check_records(pd, N, 75);
    check_records_of(ps[0], N, 76, 2, 0);
    if (t_np > 1) {
        check_records_of(ps[1], N, 76, 2, 1);
    }
    if (t_rank == 0 && getenv("SFIO_TEST_VERBOSE") != NULL) {
        printf("# reopen_comms: %.2f ms per cycle on the world, %.2f on a dup, %.2f on a split\n",
               1e3 * tw, 1e3 * td, 1e3 * ts);
    }
    MPI_Comm_free(&dup);
    MPI_Comm_free(&split);
    MPI_Barrier(MPI_COMM_WORLD);
    t_unlink(pw);
    t_unlink(pd);
    t_unlink(ps[0]);
    t_unlink(ps[1]);
    t_end();
}

/* The value of fh's info key, or "" */
static void file_info(MPI_File fh, const char *key, char *v, int len)
{
    MPI_Info info;
    int flag = 0;
    v[0] = '\0';
    if (MPI_SUCCESS == MPI_File_get_info(fh, &info)) {
        MPI_Info_get(info, key, len - 1, v, &flag);
        if (!flag) {
            v[0] = '\0';
        }
        MPI_Info_free(&info);
    }
}

/* The rank whose process holds fh's shared pointer, or 0. */
static int pointer_host(MPI_File fh)
{
    char v[32];
    int host = 0;
    file_info(fh, "sfio_sharedfp_host", v, (int)sizeof(v));
    if (v[0] != '\0') {
        host = atoi(v);
    }
    return host >= 0 && host < t_np ? host : 0;
}

static void test_busy_rank(void)
{
    char path[1200];
    MPI_File fh;
    MPI_Offset pos;
    int n = 50, busy = 0;
    double dt = 0, worst = 0;
    if (!t_begin("fetchadd.busy_rank")) {
        return;
    }
    t_fname(path, sizeof(path), "busy");
    t_unlink(path);
    if (t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh), "open")) {
        busy = pointer_host(fh);
        MPI_Barrier(MPI_COMM_WORLD);
        if (t_rank == busy) {
            /* busy outside MPI: no progress for 5 s */
            struct timespec ts = {5, 0};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
            }
        } else {
            double t0 = MPI_Wtime();
            write_records(fh, n, 0, 74);
            t_ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared");
            dt = MPI_Wtime() - t0;
        }
        MPI_Reduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, busy, MPI_COMM_WORLD);
        if (t_rank == busy) {
            write_records(fh, n, 0, 74);
            if (worst > 1.0) {
                t_failf("write_shared of the other ranks took %.2f s while rank %d, which "
                        "holds the pointer, was busy outside MPI for 5 s (they waited for it)",
                        worst, busy);
            }
            if (getenv("SFIO_TEST_VERBOSE") != NULL) {
                printf("# busy_rank: rank %d busy, others done in %.3f s\n", busy, worst);
            }
        }
        t_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check_records(path, n, 74);
    t_unlink(path);
    t_end();
}

/* The state letter of process pid in /proc (T: stopped), or '?'. */
static char proc_state(long pid)
{
    char path[64], buf[512], *p;
    FILE *f;
    size_t n;
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    f = fopen(path, "r");
    if (f == NULL) {
        return '?';
    }
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')');
    return p != NULL && p[1] == ' ' ? p[2] : '?';
}

/* Waits up to 5 s for pid to be stopped (or not); 1 when it is so. */
static int wait_state(long pid, int stopped)
{
    for (int i = 0; i < 500; i++) {
        if ((proc_state(pid) == 'T') == stopped) {
            return 1;
        }
        usleep(10000);
    }
    return 0;
}

static void test_host_stopped(void)
{
    char path[1200], backend[32], name[MPI_MAX_PROCESSOR_NAME], *names = NULL;
    MPI_File fh;
    MPI_Comm others;
    MPI_Status st;
    unsigned char rec[RS];
    int host, helper = -1, len = 0, rc;
    long pid = (long)getpid();
    double timeout = atof(getenv("OMPI_MCA_sharedfp_fetchadd_timeout")), t0, dt;
    if (!t_begin("fetchadd.host_stopped")) {
        return;
    }
    t_fname(path, sizeof(path), "stopped");
    t_unlink(path);
    if (!t_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh), "open")) {
        t_end();
        return;
    }
    file_info(fh, "sfio_sharedfp_backend", backend, (int)sizeof(backend));
    host = pointer_host(fh);
    /* the helper: the first other rank on the host's node */
    MPI_Get_processor_name(name, &len);
    names = malloc((size_t)t_np * MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME,
                  MPI_CHAR, MPI_COMM_WORLD);
    for (int r = 0; r < t_np && helper < 0; r++) {
        if (r != host && strcmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME,
                                names + (size_t)host * MPI_MAX_PROCESSOR_NAME) == 0) {
            helper = r;
        }
    }
    free(names);
    MPI_Bcast(&pid, 1, MPI_LONG, host, MPI_COMM_WORLD);
    /* opt-in until its hang under a loaded Open MPI 5.0 run is understood
     * (issue 23): a stopped host once stalled the whole job past the
     * runner's timeout instead of failing the others' calls */
    const char *enabled = getenv("SFIO_TEST_HOST_STOPPED");
    int run = NULL != enabled && 0 == strcmp(enabled, "1");
    if (strcmp(backend, "ofi") != 0 || helper < 0 || timeout <= 0 || !run) {
        if (t_rank == 0 && getenv("SFIO_TEST_VERBOSE") != NULL) {
            printf("# host_stopped: not run (backend '%s', %s)\n", backend,
                   !run ? "SFIO_TEST_HOST_STOPPED=1 not set"
                   : helper < 0 ? "no other rank on the host's node" : "timeout unset");
        }
        t_ok(MPI_File_close(&fh), "close");
        t_end();
        return;
    }
    MPI_Comm_split(MPI_COMM_WORLD, t_rank == host, t_rank, &others);
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank != host) {
        if (t_rank == helper) {
            if (kill((pid_t)pid, SIGSTOP) != 0) {
                t_failf("SIGSTOP to rank %d (pid %ld): %s", host, pid, strerror(errno));
            } else if (!wait_state(pid, 1)) {
                t_failf("rank %d (pid %ld) not stopped 5 s after SIGSTOP (state %c)", host,
                        pid, proc_state(pid));
            }
        }
        MPI_Barrier(others);
        rec_fill(rec, t_rank, 0, 0, 76);
        t0 = MPI_Wtime();
        rc = MPI_File_write_shared(fh, rec, RS, MPI_BYTE, &st);
        dt = MPI_Wtime() - t0;
        if (t_rank == helper && proc_state(pid) != 'T') {
            t_failf("rank %d (pid %ld) ran again before SIGCONT (state %c)", host, pid,
                    proc_state(pid));
        }
        MPI_Barrier(others);
        if (t_rank == helper) {
            kill((pid_t)pid, SIGCONT);
            (void)wait_state(pid, 0);
        }
        if (rc == MPI_SUCCESS) {
            t_failf("write_shared succeeded in %.2f s while the host (rank %d) was stopped", dt,
                    host);
        } else if (dt < timeout - 0.5 || dt > timeout + 5) {
            t_failf("write_shared failed after %.2f s, want the timeout (%.0f s)", dt, timeout);
        } else if (t_rank == helper && getenv("SFIO_TEST_VERBOSE") != NULL) {
            printf("# host_stopped: rank %d stopped, write_shared failed after %.2f s\n", host,
                   dt);
        }
    }
    MPI_Comm_free(&others);
    MPI_Barrier(MPI_COMM_WORLD);
    t_ok(MPI_File_close(&fh), "close");
    t_unlink(path);
    t_end();
}

/* Open / write_shared / close until killed (crash_sharedfp.sh). */
static int crash_loop(void)
{
    char path[1200], pidf[1300];
    MPI_File fh;
    FILE *pf;
    unsigned char b[RS];
    MPI_Status st;
    snprintf(path, sizeof(path), "%s/crash.dat", t_dir);
    snprintf(pidf, sizeof(pidf), "%s/crash.pid.%d", t_dir, t_rank);
    pf = fopen(pidf, "w");
    if (pf != NULL) {
        fprintf(pf, "%ld\n", (long)getpid());
        fclose(pf);
    }
    for (long i = 0;; i++) {
        if (MPI_SUCCESS != MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                         MPI_INFO_NULL, &fh)) {
            return 1;
        }
        rec_fill(b, t_rank, (int)(i % 1000000), 0, 75);
        MPI_File_seek_shared(fh, 0, MPI_SEEK_END);   /* append */
        MPI_File_write_shared(fh, b, RS, MPI_BYTE, &st);
        MPI_File_close(&fh);
    }
    return 0;
}

int main(int argc, char **argv)
{
    setenv("OMPI_MCA_sharedfp_fetchadd_timeout", "3", 0);   /* host_stopped */
    t_init(&argc, &argv, "fetchadd");
    if (argc > 1 && strcmp(argv[1], "--crash-loop") == 0) {
        return crash_loop();
    }
    test_append();
    test_ordered_rounds();
    test_read_order();
    test_seek_standard();
    test_same_basename();
    test_busy_rank();
    test_host_stopped();
    test_reopen_loop();
    test_reopen_comms();
    test_open_fd_limit();
    return t_finish();
}
