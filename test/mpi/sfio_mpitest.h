/*
 * sfio_mpitest.h: shared helpers for the MPI-IO integration tests in test/mpi/.
 *
 * Header-only (every function static) so each test program is one source file
 * plus this header, built with plain mpicc.
 *
 * What it provides:
 *   - subtest bookkeeping: t_begin()/t_end() wrap one subtest; failures are
 *     recorded per rank (first one wins), reduced with MPI_Allreduce, and rank 0
 *     prints exactly one line per subtest:
 *         ok <name>
 *         FAIL <name>: rank R: first mismatch at byte X (got G want W)
 *         xfail <name>: ...   (known stock Open MPI bug, not counted)
 *   - file names under $SFIO_TEST_DIR (default /tmp), unique per program, np and job
 *   - data patterns: t_pat_data() for what a rank writes, t_pat_file() for files
 *     prefilled with POSIX I/O (read tests do not depend on the write path)
 *   - a reference model of file views: a view is described twice, once as an MPI
 *     datatype (built with MPI calls) and once as a list of byte blocks per
 *     filetype tile (computed by hand here); t_view_off() maps the i-th byte of a
 *     rank's data stream to its file offset, so expected file images and
 *     expected read results are computed without the MPI datatype engine
 *   - memory layouts (contiguous, vector, resized) for non-contiguous buffers
 *
 * Environment:
 *   SFIO_TEST_DIR    directory for test files (default /tmp)
 *   SFIO_TEST_ONLY   run only subtests whose name contains one of these
 *                    comma-separated strings
 *   SFIO_TEST_SKIP   skip subtests whose name contains one of these strings
 *   SFIO_TEST_STACK  "stock" or "suite": selects expected failures (xfail)
 *   SFIO_TEST_VERBOSE  print per-subtest timing
 *   SFIO_TEST_ATOMIC   set: every MPI_File_open of a writable file is followed
 *                    by MPI_File_set_atomicity(fh, 1) (every call family then
 *                    runs through the atomic path the stack chose)
 */
#ifndef SFIO_MPITEST_H
#define SFIO_MPITEST_H

#include <mpi.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* SFIO_TEST_ATOMIC: the programs' opens go through here. */
static int t_file_open(MPI_Comm comm, const char *path, int amode, MPI_Info info, MPI_File *fh)
{
    int rc = (MPI_File_open)(comm, path, amode, info, fh);
    if (MPI_SUCCESS == rc && getenv("SFIO_TEST_ATOMIC") != NULL && !(amode & MPI_MODE_RDONLY)) {
        rc = MPI_File_set_atomicity(*fh, 1);
    }
    return rc;
}
#define MPI_File_open(c, p, a, i, f) t_file_open(c, p, a, i, f)

/* not every program uses every helper */
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-variable"

#define T_MSGLEN 320

static int t_rank, t_np;
static const char *t_prog = "t";
static char t_dir[1024];
static long t_jobid;
static int t_nok, t_nfail, t_nxfail;
static int t_lfail;               /* this rank failed the current subtest */
static char t_msg[T_MSGLEN];      /* first failure message of this rank */
static const char *t_cur = "";
static double t_t0;

static int t_is_stock(void)
{
    const char *s = getenv("SFIO_TEST_STACK");
    return s != NULL && strcmp(s, "stock") == 0;
}

static void t_init(int *argc, char ***argv, const char *prog)
{
    const char *d = getenv("SFIO_TEST_DIR");
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_np);
    t_prog = prog;
    snprintf(t_dir, sizeof(t_dir), "%s", (d != NULL && d[0] != '\0') ? d : "/tmp");
    t_jobid = (long)getpid();
    MPI_Bcast(&t_jobid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    /* files: errors are returned (the MPI default for files), make it explicit */
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
}

/* Path of a test file: <dir>/sfio_<prog>_np<N>_<jobid>_<tag>; same on all ranks. */
static void t_fname(char *buf, size_t len, const char *tag)
{
    snprintf(buf, len, "%s/sfio_%s_np%d_%ld_%s", t_dir, t_prog, t_np, t_jobid, tag);
}

/* Record a failure on this rank (only the first message is kept). */
static void t_failf(const char *fmt, ...)
{
    va_list ap;
    if (t_lfail++ > 0) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(t_msg, sizeof(t_msg), fmt, ap);
    va_end(ap);
}

/* Check an MPI return code; returns 1 when it is MPI_SUCCESS. */
static int t_ok(int rc, const char *what)
{
    char es[MPI_MAX_ERROR_STRING];
    int len = 0, cls = 0;
    if (rc == MPI_SUCCESS) {
        return 1;
    }
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, es, &len);
    t_failf("%s returned error class %d (%s)", what, cls, es);
    return 0;
}

/* Compare n bytes; on mismatch record "first mismatch at byte base+i". */
static int t_cmp(const unsigned char *got, const unsigned char *want, size_t n,
                 long long base, const char *what)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (got[i] != want[i]) {
            t_failf("%s: first mismatch at byte %lld (got %u want %u)", what,
                    base + (long long)i, got[i], want[i]);
            return 0;
        }
    }
    return 1;
}

static void t_check_count(MPI_Status *st, MPI_Datatype dt, int want, const char *what)
{
    int c = -2;
    MPI_Get_count(st, dt, &c);
    if (c != want) {
        t_failf("%s: MPI_Get_count = %d, want %d", what, c, want);
    }
}

/* Start a subtest; returns 0 when SFIO_TEST_ONLY filters it out. */
static int t_begin(const char *name)
{
    const char *only = getenv("SFIO_TEST_ONLY"), *skip;
    if (only != NULL && only[0] != '\0') {
        /* comma-separated substrings; any match selects the subtest */
        char pat[256], *tok, *save = NULL;
        int hit = 0;
        snprintf(pat, sizeof(pat), "%s", only);
        for (tok = strtok_r(pat, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
            hit |= strstr(name, tok) != NULL;
        }
        if (!hit) {
            return 0;
        }
    }
    skip = getenv("SFIO_TEST_SKIP");
    if (skip != NULL && skip[0] != '\0') {
        char pat[256], *tok, *save = NULL;
        snprintf(pat, sizeof(pat), "%s", skip);
        for (tok = strtok_r(pat, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
            if (strstr(name, tok) != NULL) {
                return 0;
            }
        }
    }
    t_cur = name;
    t_lfail = 0;
    t_msg[0] = '\0';
    t_t0 = MPI_Wtime();
    return 1;
}

/*
 * End a subtest: reduce failures, print one line from rank 0. xfail != 0 marks
 * a known bug of the current stack: a failure prints "xfail" and is not counted,
 * a pass prints "ok ... (xpass)". Returns the number of failing ranks.
 */
static int t_end_x(int xfail, const char *why)
{
    int gfail = 0, lf = t_lfail ? 1 : 0, first = -1, r;
    char *all = NULL;
    MPI_Allreduce(&lf, &gfail, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (gfail > 0) {
        if (t_rank == 0) {
            all = malloc((size_t)t_np * T_MSGLEN);
        }
        if (lf && t_msg[0] == '\0') {
            snprintf(t_msg, sizeof(t_msg), "failed");
        }
        MPI_Gather(t_msg, T_MSGLEN, MPI_CHAR, all, T_MSGLEN, MPI_CHAR, 0, MPI_COMM_WORLD);
    }
    if (t_rank == 0) {
        double dt = MPI_Wtime() - t_t0;
        if (gfail == 0) {
            printf("ok %s%s", t_cur, xfail ? " (xpass: expected to fail on this stack)" : "");
            t_nok++;
        } else {
            /* a failing rank always has a non-empty message */
            for (r = 0; r < t_np && first < 0; r++) {
                if (all[(size_t)r * T_MSGLEN] != '\0') {
                    first = r;
                }
            }
            all[(size_t)first * T_MSGLEN + T_MSGLEN - 1] = '\0';
            printf("%s %s: rank %d: %s (%d rank%s failed)%s%s", xfail ? "xfail" : "FAIL", t_cur,
                   first, all + (size_t)first * T_MSGLEN, gfail, gfail > 1 ? "s" : "",
                   xfail ? " -- known bug: " : "", xfail ? why : "");
            if (xfail) {
                t_nxfail++;
            } else {
                t_nfail++;
            }
            free(all);
        }
        if (getenv("SFIO_TEST_VERBOSE") != NULL) {
            printf(" [%.3fs]", dt);
        }
        printf("\n");
        fflush(stdout);
    }
    t_lfail = 0;
    return gfail;
}

static int t_end(void) { return t_end_x(0, ""); }

/* Finalize; returns the process exit code (non-zero if any subtest failed). */
static int t_finish(void)
{
    int nfail = t_nfail;
    MPI_Bcast(&nfail, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (t_rank == 0) {
        printf("# %s np=%d: %d ok, %d failed, %d xfail\n", t_prog, t_np, t_nok, t_nfail,
               t_nxfail);
        fflush(stdout);
    }
    MPI_Finalize();
    return nfail > 0 ? 1 : 0;
}

/* ---- data patterns ---------------------------------------------------- */

/* Byte i of the data stream that rank q writes in a subtest tagged tag. */
static inline unsigned char t_pat_data(int q, long long i, int tag)
{
    return (unsigned char)(i * 29 + (i >> 9) * 5 + (i >> 17) * 3 + q * 71 + tag * 13 + 1);
}

/* Byte at file offset off of a file prefilled with t_prefill(). */
static inline unsigned char t_pat_file(long long off)
{
    return (unsigned char)(off * 7 + (off >> 8) * 3 + (off >> 16) * 11 + 0x5a);
}

/* Rank 0 creates path with size bytes of t_pat_file(); all ranks wait. */
static void t_prefill(const char *path, long long size)
{
    MPI_Barrier(MPI_COMM_WORLD); /* nobody still looks at an older file of this name */
    if (t_rank == 0) {
        unsigned char *b = malloc(size > 0 ? (size_t)size : 1);
        long long i;
        int fd;
        for (i = 0; i < size; i++) {
            b[i] = t_pat_file(i);
        }
        unlink(path);
        fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        if (fd < 0 || (size > 0 && write(fd, b, (size_t)size) != (ssize_t)size)) {
            t_failf("prefill %s: %s", path, strerror(errno));
        }
        if (fd >= 0) {
            fsync(fd);
            close(fd);
        }
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 0 removes path (plain unlink; the file is closed everywhere). */
static void t_unlink(const char *path)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        unlink(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Read a whole file with POSIX I/O; returns malloc'd buffer, size in *size_p. */
static unsigned char *t_slurp(const char *path, long long *size_p)
{
    struct stat sb;
    unsigned char *b;
    int fd = open(path, O_RDONLY);
    long long got = 0;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        t_failf("open %s for verification: %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        *size_p = -1;
        return NULL;
    }
    b = malloc(sb.st_size > 0 ? (size_t)sb.st_size : 1);
    while (got < (long long)sb.st_size) {
        ssize_t r = pread(fd, b + got, (size_t)(sb.st_size - got), got);
        if (r <= 0) {
            break;
        }
        got += r;
    }
    close(fd);
    *size_p = got;
    return b;
}

/* Compare a whole file (POSIX read) with a reference image of want_size bytes. */
static void t_verify_file(const char *path, const unsigned char *want, long long want_size)
{
    long long sz;
    unsigned char *got = t_slurp(path, &sz);
    if (got == NULL) {
        return;
    }
    if (sz != want_size) {
        long long n = sz < want_size ? sz : want_size;
        t_cmp(got, want, (size_t)n, 0, "file contents");
        t_failf("file size %lld, want %lld", sz, want_size);
    } else {
        t_cmp(got, want, (size_t)sz, 0, "file contents");
    }
    free(got);
}

/* ---- reference model of file views --------------------------------------- */

typedef struct {
    long long off, len; /* bytes, relative to the start of one filetype tile */
} t_blk_t;

typedef struct {
    char name[48];
    MPI_Offset disp;
    MPI_Datatype etype;  /* predefined or contiguous type, not freed */
    MPI_Datatype ftype;  /* committed; MPI_DATATYPE_NULL when only the model is built */
    int esize;           /* bytes per etype */
    t_blk_t *b;          /* data blocks of one tile, ascending, merged */
    int nb, cap;
    long long extent;    /* tile stride in bytes */
    long long tsize;     /* data bytes per tile */
    long long nbytes;    /* bytes this rank transfers in the view tests */
} t_view_t;

static void t_view_add(t_view_t *v, long long off, long long len)
{
    if (len <= 0) {
        return;
    }
    if (v->nb > 0 && v->b[v->nb - 1].off + v->b[v->nb - 1].len == off) {
        v->b[v->nb - 1].len += len;
    } else {
        if (v->nb == v->cap) {
            v->cap = v->cap ? 2 * v->cap : 16;
            v->b = realloc(v->b, (size_t)v->cap * sizeof(t_blk_t));
        }
        v->b[v->nb].off = off;
        v->b[v->nb].len = len;
        v->nb++;
    }
    v->tsize += len;
}

/* Also safe on a zero-filled view that was never made (calloc, memset 0: a
 * subtest skipped by SFIO_TEST_ONLY still cleans up): all-zero handle bits
 * are not MPI_DATATYPE_NULL in Open MPI (a pointer to a predefined object)
 * nor in MPICH, and MPI_Type_free on them aborts. */
static void t_view_free(t_view_t *v)
{
    static const MPI_Datatype never_made; /* all bits zero */
    if (v->ftype != MPI_DATATYPE_NULL && 0 != memcmp(&v->ftype, &never_made, sizeof(never_made))) {
        MPI_Type_free(&v->ftype);
    }
    free(v->b);
    memset(v, 0, sizeof(*v));
    v->ftype = MPI_DATATYPE_NULL;
}

/* File offset of byte i of the data stream seen through view v. */
static long long t_view_off(const t_view_t *v, long long i)
{
    long long t, r;
    int k;
    if (v->tsize == 0) {
        return -1;
    }
    t = i / v->tsize;
    r = i % v->tsize;
    for (k = 0; k < v->nb; k++) {
        if (r < v->b[k].len) {
            return v->disp + t * v->extent + v->b[k].off + r;
        }
        r -= v->b[k].len;
    }
    return -1;
}

/*
 * Call fn(file_off, stream_pos, len, arg) for each contiguous file piece of the
 * stream bytes [start, start + n) of view v.
 */
typedef void (*t_piece_fn)(long long foff, long long spos, long long len, void *arg);

static void t_view_pieces(const t_view_t *v, long long start, long long n, t_piece_fn fn,
                          void *arg)
{
    long long pos = start, end = start + n;
    while (pos < end) {
        long long t = pos / v->tsize, r = pos % v->tsize, len;
        int k;
        for (k = 0; k < v->nb; k++) {
            if (r < v->b[k].len) {
                break;
            }
            r -= v->b[k].len;
        }
        len = v->b[k].len - r;
        if (len > end - pos) {
            len = end - pos;
        }
        fn(v->disp + t * v->extent + v->b[k].off + r, pos, len, arg);
        pos += len;
    }
}

typedef struct {
    unsigned char *img;
    long long cap, end;
    long long covered; /* bytes written (views of different ranks never overlap) */
    int q, tag;
} t_apply_arg_t;

static void t_apply_piece(long long foff, long long spos, long long len, void *arg)
{
    t_apply_arg_t *a = arg;
    long long j;
    if (foff + len > a->cap) {
        long long nc = 2 * (foff + len) + 4096;
        a->img = realloc(a->img, (size_t)nc);
        memset(a->img + a->cap, 0, (size_t)(nc - a->cap));
        a->cap = nc;
    }
    for (j = 0; j < len; j++) {
        a->img[foff + j] = t_pat_data(a->q, spos + j, a->tag);
    }
    if (foff + len > a->end) {
        a->end = foff + len;
    }
    a->covered += len;
}

/*
 * Reference image: apply to img (grown as needed, zero-filled) the stream
 * bytes [start, start+n) that rank q writes with tag through view v.
 */
static void t_view_apply(const t_view_t *v, long long start, long long n, int q, int tag,
                         t_apply_arg_t *a)
{
    a->q = q;
    a->tag = tag;
    if (n > 0) {
        t_view_pieces(v, start, n, t_apply_piece, a);
    }
}

/*
 * Known stock bug (Open MPI 4.1.4 fbtl/posix): collective writes go through
 * mca_fbtl_posix_pwritev_datasieving(), which reads the covering range into a
 * malloc'd buffer, ignores a short read at end of file and writes the whole
 * range back, so holes past EOF receive uninitialized heap bytes (and
 * total_bytes is not reset between chunks, so later chunks skip the read).
 * Off with --mca fbtl_posix_write_datasieving 0. Returns the xfail reason when
 * a collective write leaving holes (has_holes, same on all ranks) runs on stock.
 */
static const char *t_xfail_stock_holes(int collective, int has_holes)
{
    if (t_is_stock() && collective && has_holes) {
        return "stock fbtl/posix write data sieving fills holes past EOF with "
               "uninitialized bytes (fbtl_posix_write_datasieving=0 avoids it)";
    }
    return NULL;
}

/* ---- memory layouts -------------------------------------------------------- */

/*
 * A memory layout holds nbytes of stream data in a buffer:
 *   T_MEM_CONTIG  contiguous, count = nbytes/usize of the unit type
 *   T_MEM_VECTOR  one MPI_Type_vector (count 1): blocks of bl units every stride units
 *   T_MEM_RESIZED resized contiguous(bl) with extent stride units, count = #blocks
 * The unit is the view's etype, so type signatures match. Gaps hold a sentinel
 * (0xEE) that reads must leave untouched.
 */
enum { T_MEM_CONTIG = 0, T_MEM_VECTOR = 1, T_MEM_RESIZED = 2 };
static const char *t_mem_name[] = {"mc", "mv", "mr"};

typedef struct {
    int kind;
    MPI_Datatype unit, dt; /* dt: type passed to MPI (unit for contig) */
    int usize, bl, stride, count;
    long long nbytes, bufsize;
    unsigned char *buf;
} t_mem_t;

static void t_mem_make(t_mem_t *m, int kind, MPI_Datatype unit, int usize, long long nbytes)
{
    long long nunits = nbytes / usize;
    memset(m, 0, sizeof(*m));
    m->kind = kind;
    m->unit = unit;
    m->usize = usize;
    m->nbytes = nbytes;
    m->bl = 3;
    m->stride = 5;
    if (kind == T_MEM_CONTIG || nunits == 0 || nunits % m->bl != 0) {
        /* zero-byte and odd sizes fall back to contiguous */
        m->kind = T_MEM_CONTIG;
        m->dt = unit;
        m->count = (int)nunits;
        m->bufsize = nbytes;
    } else if (kind == T_MEM_VECTOR) {
        MPI_Type_vector((int)(nunits / m->bl), m->bl, m->stride, unit, &m->dt);
        MPI_Type_commit(&m->dt);
        m->count = 1;
        m->bufsize = ((nunits / m->bl - 1) * m->stride + m->bl) * (long long)usize;
    } else {
        MPI_Datatype c;
        MPI_Type_contiguous(m->bl, unit, &c);
        MPI_Type_create_resized(c, 0, (MPI_Aint)m->stride * usize, &m->dt);
        MPI_Type_free(&c);
        MPI_Type_commit(&m->dt);
        m->count = (int)(nunits / m->bl);
        m->bufsize = (long long)m->count * m->stride * usize;
    }
    m->buf = malloc(m->bufsize > 0 ? (size_t)m->bufsize : 1);
    memset(m->buf, 0xEE, m->bufsize > 0 ? (size_t)m->bufsize : 1);
}

/* Buffer position of stream byte j. */
static inline long long t_mem_pos(const t_mem_t *m, long long j)
{
    long long bb;
    if (m->kind == T_MEM_CONTIG) {
        return j;
    }
    bb = (long long)m->bl * m->usize;
    return (j / bb) * (long long)m->stride * m->usize + j % bb;
}

/* Fill stream bytes with t_pat_data(q, start + j, tag). */
static void t_mem_fill(t_mem_t *m, int q, long long start, int tag)
{
    long long j;
    for (j = 0; j < m->nbytes; j++) {
        m->buf[t_mem_pos(m, j)] = t_pat_data(q, start + j, tag);
    }
}

/* Check the buffer after a read: stream byte j must equal want[j]; gaps 0xEE. */
static int t_mem_check(const t_mem_t *m, const unsigned char *want, const char *what)
{
    long long j, p = 0;
    for (j = 0; j < m->nbytes; j++) {
        long long pos = t_mem_pos(m, j);
        for (; p < pos; p++) {
            if (m->buf[p] != 0xEE) {
                t_failf("%s: memory gap byte %lld overwritten (got %u want 238)", what, p,
                        m->buf[p]);
                return 0;
            }
        }
        if (m->buf[pos] != want[j]) {
            t_failf("%s: first mismatch at byte %lld of the data (got %u want %u)", what, j,
                    m->buf[pos], want[j]);
            return 0;
        }
        p = pos + 1;
    }
    for (; p < m->bufsize; p++) {
        if (m->buf[p] != 0xEE) {
            t_failf("%s: memory gap byte %lld overwritten (got %u want 238)", what, p, m->buf[p]);
            return 0;
        }
    }
    return 1;
}

static void t_mem_reset(t_mem_t *m)
{
    memset(m->buf, 0xEE, m->bufsize > 0 ? (size_t)m->bufsize : 1);
}

static void t_mem_free(t_mem_t *m)
{
    if (m->kind != T_MEM_CONTIG) {
        MPI_Type_free(&m->dt);
    }
    free(m->buf);
    memset(m, 0, sizeof(*m));
}

/* Model-only contiguous view (default-view regions): bytes [disp, disp + n). */
static void t_view_contig(t_view_t *v, long long disp, long long n)
{
    memset(v, 0, sizeof(*v));
    v->ftype = MPI_DATATYPE_NULL;
    v->etype = MPI_BYTE;
    v->esize = 1;
    t_view_add(v, 0, 1);
    v->extent = 1;
    v->disp = disp;
    v->nbytes = n;
}

/* Expected bytes of a read of stream [start, start+n) through v from a t_prefill() file. */
static unsigned char *t_view_expect_prefill(const t_view_t *v, long long start, long long n)
{
    unsigned char *w = malloc(n > 0 ? (size_t)n : 1);
    long long j;
    for (j = 0; j < n; j++) {
        w[j] = t_pat_file(t_view_off(v, start + j));
    }
    return w;
}

#endif /* SFIO_MPITEST_H */
