/*
 * sfio_bench.c - one MPI-IO benchmark program with named scenarios taken from
 * the papers the suite implements (README, "References").  Every scenario verifies its data before it reports a
 * number; a failed verification prints "VERIFY FAILED ..." and the program
 * exits with status 3 without printing any RESULT line.
 *
 * Usage: sfio_bench -s SCENARIO [options]      (sfio_bench --help)
 *
 * Output (rank 0, one line per repetition and operation):
 *   RESULT scenario=tilerow op=write np=8 rep=0 bytes=... seconds=... MBps=...
 *          verified=1 serial=1 atomic=1 mode=indep io=ompio
 * With --otpo the last line is "Time in seconds = X" (OTPO's NPB reader),
 * X = sum over operations of the median time.
 *
 * Data: every byte written by rank w at file offset o is a function of
 * (w, o, repetition), so the verifier knows, for each byte of an overlapped
 * region, which writer it came from.  Reads use a file prepared with a
 * writer-independent pattern.  Times include open, set_view, the data calls
 * and close (the point where a versioning stack folds its versions in).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#define READER_ID 0xFFFFu
#define MiB (1024.0 * 1024.0)

/* ------------------------------------------------------------------ */
/* options                                                              */

typedef struct {
    bench_opts_t c; /* dir, op (write|read|both), mode (coll|indep), quick, reps, otpo,
                       keep, verbose, per_rank (noncontig bytes per rank), info */
    const char *scenario;
    const char *method;
    int atomic;
    int regions;                      /* noncontig */
    long tile_x, tile_y, ov_x, ov_y;  /* tiles */
    long elem;                        /* element size in bytes */
    long n;                           /* block3d / volume edge */
    long nblocks, nvars, nxb, guard;  /* flash */
    long block, xfer, segs;           /* ior */
    long records, recsize;            /* sharedlog / ordered */
    long writes, min_size, max_size;  /* smallwrite */
    long sleep_ms;                    /* sharedlog: the pointer's host sleeps this long */
} opts_t;

static opts_t O;
static uint64_t g_seed = 0x5f10be7cull;

#define MPICHK(call)                                        \
    do {                                                    \
        int rc_ = (call);                                   \
        if (rc_ != MPI_SUCCESS) {                           \
            char s_[MPI_MAX_ERROR_STRING];                  \
            int l_;                                         \
            MPI_Error_string(rc_, s_, &l_);                 \
            bench_fail("%s failed: %s", #call, s_);         \
        }                                                   \
    } while (0)

/* ------------------------------------------------------------------ */
/* data pattern                                                         */

static inline uint64_t word_of(uint32_t writer, uint64_t widx)
{
    return mix64(widx ^ ((uint64_t)writer << 48) ^ g_seed);
}

/* expected bytes of `writer` for file offsets [off, off+len) */
static void gen(uint32_t writer, uint64_t off, size_t len, unsigned char *out)
{
    size_t i = 0;
    uint64_t o = off;
    while (i < len) {
        if ((o & 7) == 0 && len - i >= 8) {
            uint64_t w = word_of(writer, o >> 3);
            memcpy(out + i, &w, 8);
            i += 8;
            o += 8;
        } else {
            uint64_t w = word_of(writer, o >> 3);
            out[i] = (unsigned char)(w >> (8 * (o & 7)));
            i++;
            o++;
        }
    }
}

/* ------------------------------------------------------------------ */
/* access plans                                                         */

typedef struct {
    uint64_t off, len;
} ext_t;

typedef struct {
    int use_view;           /* 1: set_view(disp, ftype) + read/write; 0: *_at(offset) */
    MPI_Offset disp;        /* view displacement or explicit offset */
    MPI_Datatype ftype;     /* filetype (use_view) */
    MPI_Datatype mtype;     /* memory datatype */
    int mcount;
    size_t moff;            /* byte offset into the buffer */
    size_t nbytes;          /* bytes moved by this call */
    size_t first_ext, next; /* this call's extents in the plan's list */
} call_t;

typedef struct {
    call_t *calls;
    int ncalls, calls_cap;
    ext_t *ext;
    size_t next, ext_cap;
    size_t nbytes;  /* bytes this rank moves */
    size_t bufsize; /* memory buffer bytes */
    int overlap;    /* ranks' extents may overlap (writer-identity verification) */
    int per_call;   /* overlaps differ from call to call: atomic mode is checked per
                       overlap (one writer each), not as one serial order of whole ranks */
    int count_ops;  /* report calls per second of the call loop (small calls) */
    const char *desc;
} plan_t;

static void plan_ext(plan_t *p, uint64_t off, uint64_t len)
{
    if (len == 0) return;
    if (p->next && p->ext[p->next - 1].off + p->ext[p->next - 1].len == off &&
        p->calls[p->ncalls - 1].first_ext < p->next) {
        p->ext[p->next - 1].len += len; /* merge neighbours inside one call */
    } else {
        if (p->next == p->ext_cap) {
            p->ext_cap = p->ext_cap ? 2 * p->ext_cap : 1024;
            p->ext = realloc(p->ext, p->ext_cap * sizeof(ext_t));
        }
        p->ext[p->next].off = off;
        p->ext[p->next].len = len;
        p->next++;
    }
    p->calls[p->ncalls - 1].nbytes += len;
    p->calls[p->ncalls - 1].next = p->next - p->calls[p->ncalls - 1].first_ext;
    p->nbytes += len;
}

static call_t *plan_call(plan_t *p, int use_view, MPI_Offset disp, MPI_Datatype ftype,
                         MPI_Datatype mtype, int mcount, size_t moff)
{
    if (p->ncalls == p->calls_cap) {
        p->calls_cap = p->calls_cap ? 2 * p->calls_cap : 16;
        p->calls = realloc(p->calls, p->calls_cap * sizeof(call_t));
    }
    call_t *c = &p->calls[p->ncalls++];
    memset(c, 0, sizeof(*c));
    c->use_view = use_view;
    c->disp = disp;
    c->ftype = ftype;
    c->mtype = mtype;
    c->mcount = mcount;
    c->moff = moff;
    c->first_ext = p->next;
    return c;
}

static MPI_Datatype bytes_type(long n)
{
    MPI_Datatype t;
    MPI_Type_contiguous((int)n, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
}

/* block decomposition of n cells over d parts: start and size of part c */
static void part(long n, int d, int c, long *start, long *size)
{
    long base = n / d, rem = n % d;
    *size = base + (c < rem ? 1 : 0);
    *start = c * base + (c < rem ? c : rem);
}

/* ---- scenarios -------------------------------------------------- */

/* noncontig: per_rank bytes split into R regions, interleaved across ranks */
static void build_noncontig(plan_t *p)
{
    long R = O.regions;
    long reg = O.c.per_rank / R;
    reg -= reg % 8;
    if (reg <= 0) die("noncontig: region size is zero");
    MPI_Datatype ft;
    MPI_Type_vector((int)R, (int)reg, (int)(reg * g_np), MPI_BYTE, &ft);
    MPI_Datatype rt;
    MPI_Type_create_resized(ft, 0, (MPI_Aint)(reg * g_np * R), &rt);
    MPI_Type_commit(&rt);
    MPI_Type_free(&ft);
    plan_call(p, 1, (MPI_Offset)reg * g_rank, rt, MPI_BYTE, (int)(reg * R), 0);
    for (long i = 0; i < R; i++) plan_ext(p, (uint64_t)(i * g_np + g_rank) * reg, reg);
    p->bufsize = reg * R;
}

/* 2-D tiles (MPI-tile-IO): gx x gy tiles of tx x ty elements, overlaps ox, oy */
static void build_tiles(plan_t *p, int gx, int gy, long tx, long ty, long ox, long oy, long E)
{
    if (ox >= tx || oy >= ty) die("tiles: overlap must be smaller than the tile");
    long W = gx * tx - (gx - 1) * ox, H = gy * ty - (gy - 1) * oy;
    int cx = g_rank % gx, cy = g_rank / gx;
    long x0 = cx * (tx - ox), y0 = cy * (ty - oy);
    MPI_Datatype et = bytes_type(E), ft;
    int sizes[2] = {(int)H, (int)W}, sub[2] = {(int)ty, (int)tx}, st[2] = {(int)y0, (int)x0};
    MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, et, &ft);
    MPI_Type_commit(&ft);
    plan_call(p, 1, 0, ft, et, (int)(tx * ty), 0);
    for (long y = y0; y < y0 + ty; y++) plan_ext(p, (uint64_t)(y * W + x0) * E, tx * E);
    p->bufsize = tx * ty * E;
    p->overlap = (ox > 0 && gx > 1) || (oy > 0 && gy > 1);
}

/* 3-D block-partitioned array (ROMIO coll_perf), element size E */
static void build_block3d(plan_t *p, long n, long E)
{
    int d[3] = {0, 0, 0};
    MPI_Dims_create(g_np, 3, d);
    int c0 = g_rank / (d[1] * d[2]), c1 = (g_rank / d[2]) % d[1], c2 = g_rank % d[2];
    long s[3], z[3];
    part(n, d[0], c0, &s[0], &z[0]);
    part(n, d[1], c1, &s[1], &z[1]);
    part(n, d[2], c2, &s[2], &z[2]);
    MPI_Datatype et = bytes_type(E), ft;
    int sizes[3] = {(int)n, (int)n, (int)n}, sub[3] = {(int)z[0], (int)z[1], (int)z[2]},
        st[3] = {(int)s[0], (int)s[1], (int)s[2]};
    MPI_Type_create_subarray(3, sizes, sub, st, MPI_ORDER_C, et, &ft);
    MPI_Type_commit(&ft);
    plan_call(p, 1, 0, ft, et, (int)(z[0] * z[1] * z[2]), 0);
    for (long i = s[0]; i < s[0] + z[0]; i++)
        for (long j = s[1]; j < s[1] + z[1]; j++)
            plan_ext(p, (uint64_t)((i * n + j) * n + s[2]) * E, z[2] * E);
    p->bufsize = z[0] * z[1] * z[2] * E;
}

/* FLASH-IO checkpoint: memory unk[block][z][y][x][var] with guard cells,
 * file: one dataset per variable holding the inner cells of all blocks. */
static void build_flash(plan_t *p)
{
    long nb = O.nblocks, nv = O.nvars, nx = O.nxb, g = O.guard, m = nx + 2 * g;
    long cell = 8, blk = nx * nx * nx * cell;
    long total_blocks = nb * g_np;
    for (long v = 0; v < nv; v++) {
        MPI_Datatype mt;
        int sizes[5] = {(int)nb, (int)m, (int)m, (int)m, (int)nv};
        int sub[5] = {(int)nb, (int)nx, (int)nx, (int)nx, 1};
        int st[5] = {0, (int)g, (int)g, (int)g, (int)v};
        MPI_Type_create_subarray(5, sizes, sub, st, MPI_ORDER_C, MPI_DOUBLE, &mt);
        MPI_Type_commit(&mt);
        MPI_Offset disp = (MPI_Offset)(v * total_blocks + (long)g_rank * nb) * blk;
        plan_call(p, 1, disp, MPI_BYTE, mt, 1, 0);
        plan_ext(p, (uint64_t)disp, nb * blk);
    }
    p->bufsize = nb * m * m * m * nv * cell;
}

/* IOR: segments of np blocks; each block moved in transfers of xfer bytes */
static void build_ior(plan_t *p)
{
    long B = O.block, t = O.xfer, S = O.segs;
    if (B % t) die("ior: block must be a multiple of the transfer size");
    size_t moff = 0;
    for (long s = 0; s < S; s++)
        for (long k = 0; k < B / t; k++) {
            MPI_Offset off = (MPI_Offset)(s * g_np + g_rank) * B + k * t;
            plan_call(p, 0, off, MPI_BYTE, MPI_BYTE, (int)t, moff);
            plan_ext(p, (uint64_t)off, t);
            moff += t;
        }
    p->bufsize = moff;
}

/* smallwrite: W contiguous writes per rank, sizes doubling from min to max
 * and round again; write k of every rank lies in slot k, rank r's at r x
 * half its size, so each overlaps half of each neighbour's (the same k) */
static void build_smallwrite(plan_t *p)
{
    long lo = O.min_size, hi = O.max_size;
    if (lo < 2 || hi < lo) die("smallwrite: sizes must satisfy 2 <= min <= max");
    uint64_t base = 0;
    size_t moff = 0;
    long size = lo;
    for (long k = 0; k < O.writes; k++) {
        long h = size / 2;
        MPI_Offset off = (MPI_Offset)(base + (uint64_t)g_rank * h);
        plan_call(p, 0, off, MPI_BYTE, MPI_BYTE, (int)size, moff);
        plan_ext(p, (uint64_t)off, size);
        moff += size;
        base += (uint64_t)(g_np - 1) * h + size;
        size = size * 2 > hi ? lo : size * 2;
    }
    p->bufsize = moff;
    p->overlap = g_np > 1;
    p->per_call = 1;
    p->count_ops = 1;
}

/* 3-D volume, block-partitioned (PIMA(GE)^2 Lib): voxels of E bytes */
static void volume_geom(int rank, long n, long s[3], long z[3])
{
    int d[3] = {0, 0, 0};
    MPI_Dims_create(g_np, 3, d);
    int c0 = rank / (d[1] * d[2]), c1 = (rank / d[2]) % d[1], c2 = rank % d[2];
    part(n, d[0], c0, &s[0], &z[0]);
    part(n, d[1], c1, &s[1], &z[1]);
    part(n, d[2], c2, &s[2], &z[2]);
}

static MPI_Datatype volume_type(long n, const long s[3], const long z[3], MPI_Datatype et)
{
    MPI_Datatype t;
    int sizes[3] = {(int)n, (int)n, (int)n}, sub[3] = {(int)z[0], (int)z[1], (int)z[2]},
        st[3] = {(int)s[0], (int)s[1], (int)s[2]};
    MPI_Type_create_subarray(3, sizes, sub, st, MPI_ORDER_C, et, &t);
    MPI_Type_commit(&t);
    return t;
}

/* ------------------------------------------------------------------ */
/* buffers, file helpers                                                */

/* stream = concatenation of the expected bytes of the plan's extents */
static unsigned char *make_stream(const plan_t *p, uint32_t writer)
{
    unsigned char *s = malloc(p->nbytes ? p->nbytes : 1);
    size_t pos = 0;
    for (size_t i = 0; i < p->next; i++) {
        gen(writer, p->ext[i].off, p->ext[i].len, s + pos);
        pos += p->ext[i].len;
    }
    return s;
}

/* memory buffer whose datatype-walk (per call) yields the stream */
static void stream_to_buf(const plan_t *p, const unsigned char *stream, unsigned char *buf)
{
    size_t pos = 0;
    for (int c = 0; c < p->ncalls; c++) {
        const call_t *k = &p->calls[c];
        int ip = 0;
        MPI_Unpack(stream + pos, (int)k->nbytes, &ip, buf + k->moff, k->mcount, k->mtype,
                   MPI_COMM_SELF);
        pos += k->nbytes;
    }
}

static void buf_to_stream(const plan_t *p, unsigned char *buf, unsigned char *stream)
{
    size_t pos = 0;
    for (int c = 0; c < p->ncalls; c++) {
        const call_t *k = &p->calls[c];
        int ip = 0;
        MPI_Pack(buf + k->moff, k->mcount, k->mtype, stream + pos, (int)k->nbytes, &ip,
                 MPI_COMM_SELF);
        pos += k->nbytes;
    }
}

static uint64_t plan_max_end(const plan_t *p)
{
    uint64_t m = 0, all;
    for (size_t i = 0; i < p->next; i++)
        if (p->ext[i].off + p->ext[i].len > m) m = p->ext[i].off + p->ext[i].len;
    MPI_Allreduce(&m, &all, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

/* rank 0 creates the file with the reader pattern (outside MPI-IO, untimed) */
static void prepare_read_file(const char *path, uint64_t size)
{
    int err = 0;
    if (g_rank == 0) {
        bypass(1);
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        if (fd < 0) err = 1;
        size_t chunk = 4 << 20;
        unsigned char *b = malloc(chunk);
        for (uint64_t o = 0; !err && o < size; o += chunk) {
            size_t n = size - o < chunk ? size - o : chunk;
            gen(READER_ID, o, n, b);
            if (pwrite(fd, b, n, (off_t)o) != (ssize_t)n) err = 1;
        }
        free(b);
        if (fd >= 0) close(fd);
        bypass(0);
    }
    MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (err) die("cannot create the input file");
}

static void corrupt_file(const char *path, uint64_t off)
{
    bypass(1);
    flip_file_byte(path, off);
    bypass(0);
}

/* BENCH_TEAR=1 (self-test of the per-call check): the first stretch two
 * calls share, of 16 bytes or more, gets the first writer's bytes up to
 * its middle and the second's after: each byte from a writer, the stretch
 * torn.  Rank 0 only; smallwrite's layout: its call 1 with rank 1's. */
static void tear_file(const plan_t *p, const char *path)
{
    if (g_np < 2 || p->next < 2) return;
    const ext_t *e = &p->ext[1];
    uint64_t h = e->len / 2, a = e->off + h, m = (a + h / 2 + 7) & ~7ull;
    if (h < 8 || m <= a || m >= a + h) return;
    unsigned char buf[1024];
    if (h > sizeof(buf)) return;
    gen(0, a, m - a, buf);
    gen(1, m, a + h - m, buf + (m - a));
    bypass(1);
    int fd = open(path, O_WRONLY);
    if (fd < 0 || pwrite(fd, buf, h, (off_t)a) != (ssize_t)h) bench_fail("tear: cannot write %s", path);
    close(fd);
    bypass(0);
}

/* ------------------------------------------------------------------ */
/* verification                                                         */

typedef struct {
    long bad;          /* bytes matching no allowed writer */
    int serial;        /* overlapped regions consistent with one serial order */
    char why[256];
} verdict_t;

static void verdict_bad(verdict_t *v, const char *fmt, unsigned long long a, unsigned long long b)
{
    if (!v->why[0]) snprintf(v->why, sizeof(v->why), fmt, a, b);
}

/* each rank reads back its own extents (non-overlapping plans) */
static void verify_own(const plan_t *p, const char *path, verdict_t *v)
{
    bypass(1);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        v->bad = 1;
        snprintf(v->why, sizeof(v->why), "rank %d cannot open %.200s", g_rank, path);
        bypass(0);
        return;
    }
    size_t cap = 1 << 20;
    unsigned char *got = malloc(cap), *exp = malloc(cap);
    for (size_t i = 0; i < p->next; i++) {
        for (uint64_t o = 0; o < p->ext[i].len; o += cap) {
            size_t n = p->ext[i].len - o < cap ? p->ext[i].len - o : cap;
            uint64_t fo = p->ext[i].off + o;
            ssize_t r = pread(fd, got, n, (off_t)fo);
            if (r != (ssize_t)n) {
                v->bad += n;
                verdict_bad(v, "short read at offset %llu (%llu bytes)", fo, n);
                continue;
            }
            gen((uint32_t)g_rank, fo, n, exp);
            if (memcmp(got, exp, n) != 0) {
                for (size_t j = 0; j < n; j++)
                    if (got[j] != exp[j]) {
                        v->bad++;
                        verdict_bad(v, "rank's byte at file offset %llu differs (%llu)", fo + j,
                                    got[j]);
                    }
            }
        }
    }
    free(got);
    free(exp);
    close(fd);
    bypass(0);
}

typedef struct {
    uint64_t pos;
    int owner, delta;
} event_t;

static int cmp_event(const void *a, const void *b)
{
    const event_t *x = a, *y = b;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Overlapping plans: every byte must come from one of the ranks whose
 * extents cover it; in atomic mode the "who overwrote whom" relation must be
 * acyclic (then some serial order of the writes explains the file).  With
 * one_writer, every stretch covered by the same writers must instead come
 * whole from one of them (per-call atomicity where each stretch is the
 * overlap of one call per writer). */
static void verify_overlap(const plan_t *p, const char *path, verdict_t *v, unsigned char *edges,
                           int one_writer)
{
    int n = (int)p->next, *cnt = malloc(g_np * sizeof(int)), *dis = malloc(g_np * sizeof(int));
    MPI_Allgather(&n, 1, MPI_INT, cnt, 1, MPI_INT, MPI_COMM_WORLD);
    long tot = 0;
    for (int r = 0; r < g_np; r++) {
        dis[r] = (int)tot;
        tot += cnt[r];
    }
    ext_t *all = malloc((tot ? tot : 1) * sizeof(ext_t));
    MPI_Datatype et;
    MPI_Type_contiguous(2, MPI_UINT64_T, &et);
    MPI_Type_commit(&et);
    MPI_Allgatherv(p->ext, n, et, all, cnt, dis, et, MPI_COMM_WORLD);
    MPI_Type_free(&et);
    event_t *ev = malloc(2 * (tot ? tot : 1) * sizeof(event_t));
    long ne = 0;
    uint64_t maxend = 0;
    for (int r = 0; r < g_np; r++)
        for (int i = 0; i < cnt[r]; i++) {
            ext_t e = all[dis[r] + i];
            ev[ne++] = (event_t){e.off, r, +1};
            ev[ne++] = (event_t){e.off + e.len, r, -1};
            if (e.off + e.len > maxend) maxend = e.off + e.len;
        }
    qsort(ev, ne, sizeof(event_t), cmp_event);
    /* my slice of the file */
    uint64_t slice = (maxend / g_np + 7) & ~7ull;
    uint64_t lo = slice * g_rank, hi = g_rank == g_np - 1 ? maxend : slice * (g_rank + 1);
    if (lo > maxend) lo = maxend;
    if (hi > maxend) hi = maxend;

    bypass(1);
    int fd = open(path, O_RDONLY);
    int *cover = calloc(g_np, sizeof(int));
    int *set = malloc(g_np * sizeof(int));
    unsigned char *cand = malloc(g_np); /* one_writer: set members every word so far matches */
    size_t cap = 1 << 20;
    unsigned char *got = malloc(cap), **exp = malloc(g_np * sizeof(unsigned char *));
    for (int r = 0; r < g_np; r++) exp[r] = NULL;
    long k = 0;
    while (k < ne) {
        uint64_t pos = ev[k].pos;
        while (k < ne && ev[k].pos == pos) {
            cover[ev[k].owner] += ev[k].delta;
            k++;
        }
        if (k >= ne) break;
        uint64_t a = pos, b = ev[k].pos;
        if (b <= lo || a >= hi) continue;
        if (a < lo) a = lo;
        if (b > hi) b = hi;
        int ns = 0;
        for (int r = 0; r < g_np; r++)
            if (cover[r] > 0) set[ns++] = r;
        if (ns == 0) continue;
        int prev = -1, ncand = ns, matched = 1;
        memset(cand, 1, ns);
        for (uint64_t o = a; o < b; o += cap) {
            size_t len = b - o < cap ? b - o : cap;
            if (fd < 0 || pread(fd, got, len, (off_t)o) != (ssize_t)len) {
                v->bad += len;
                verdict_bad(v, "cannot read back %llu bytes at offset %llu", len, o);
                continue;
            }
            for (int s = 0; s < ns; s++) {
                if (!exp[set[s]]) exp[set[s]] = malloc(cap);
                gen((uint32_t)set[s], o, len, exp[set[s]]);
            }
            /* compare in 8-byte file-aligned words */
            size_t j = 0;
            while (j < len) {
                size_t w = 8 - ((o + j) & 7);
                if (w > len - j) w = len - j;
                int win = -1;
                if (prev >= 0 && memcmp(got + j, exp[prev] + j, w) == 0) win = prev;
                for (int s = 0; win < 0 && s < ns; s++)
                    if (memcmp(got + j, exp[set[s]] + j, w) == 0) win = set[s];
                if (one_writer && ncand > 0) {
                    for (int s = 0; s < ns; s++)
                        if (cand[s] && memcmp(got + j, exp[set[s]] + j, w) != 0) {
                            cand[s] = 0;
                            ncand--;
                        }
                }
                if (win < 0) {
                    matched = 0;
                    v->bad += w;
                    verdict_bad(v, "bytes at offset %llu match none of %llu writers", o + j, ns);
                } else if (win != prev) {
                    for (int s = 0; s < ns; s++)
                        if (set[s] != win) edges[set[s] * g_np + win] = 1;
                    prev = win;
                }
                j += w;
            }
        }
        if (one_writer && matched && ncand == 0) {
            v->bad += b - a;
            verdict_bad(v, "the %llu bytes at offset %llu mix writers (a torn atomic write)",
                        b - a, a);
        }
    }
    if (fd >= 0) close(fd);
    free(cand);
    bypass(0);
    for (int r = 0; r < g_np; r++) free(exp[r]);
    free(exp);
    free(got);
    free(set);
    free(cover);
    free(ev);
    free(all);
    free(cnt);
    free(dis);
}

/* cycle check on the overwrite relation (edges[a*np+b]: b overwrote a) */
static int acyclic(const unsigned char *edges, int np)
{
    int *indeg = calloc(np, sizeof(int)), *q = malloc(np * sizeof(int)), qh = 0, qt = 0, seen = 0;
    for (int a = 0; a < np; a++)
        for (int b = 0; b < np; b++)
            if (a != b && edges[a * np + b]) indeg[b]++;
    for (int a = 0; a < np; a++)
        if (!indeg[a]) q[qt++] = a;
    while (qh < qt) {
        int a = q[qh++];
        seen++;
        for (int b = 0; b < np; b++)
            if (a != b && edges[a * np + b] && --indeg[b] == 0) q[qt++] = b;
    }
    free(indeg);
    free(q);
    return seen == np;
}

/* collective: combine the per-rank verdicts */
static int verdict_final(verdict_t *v, const unsigned char *edges_local, int need_serial)
{
    long bad = 0;
    MPI_Allreduce(&v->bad, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    v->serial = 1;
    if (edges_local) {
        unsigned char *e = malloc((size_t)g_np * g_np);
        MPI_Allreduce(edges_local, e, g_np * g_np, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD);
        v->serial = acyclic(e, g_np);
        if (!v->serial && need_serial && !v->why[0])
            snprintf(v->why, sizeof(v->why),
                     "overlapped regions mix writers: no serial order explains the file "
                     "(atomic mode violated)");
        free(e);
    }
    /* first reason from the lowest failing rank */
    struct {
        int flag, rank;
    } in = {v->why[0] ? 1 : 0, g_rank}, out;
    in.flag = -in.flag;
    MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
    if (out.flag < 0) MPI_Bcast(v->why, sizeof(v->why), MPI_CHAR, out.rank, MPI_COMM_WORLD);
    v->bad = bad;
    return bad == 0 && (!need_serial || v->serial);
}

/* ------------------------------------------------------------------ */
/* running one operation                                                */

static void file_open(const char *path, int amode, MPI_File *fh)
{
    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, amode, O.c.info, fh));
    if (O.atomic) MPICHK(MPI_File_set_atomicity(*fh, 1));
}

static int coll(void) { return strcmp(O.c.mode, "coll") == 0; }

static void run_calls(MPI_File fh, const plan_t *p, unsigned char *buf, int is_write)
{
    MPI_Status st;
    MPI_Offset vdisp = -1;
    MPI_Datatype vtype = MPI_DATATYPE_NULL;
    for (int c = 0; c < p->ncalls; c++) {
        const call_t *k = &p->calls[c];
        void *b = buf + k->moff;
        if (k->use_view) {
            if (k->disp != vdisp || k->ftype != vtype) {
                MPICHK(MPI_File_set_view(fh, k->disp, MPI_BYTE, k->ftype, "native", O.c.info));
                vdisp = k->disp;
                vtype = k->ftype;
            }
            if (is_write)
                MPICHK(coll() ? MPI_File_write_all(fh, b, k->mcount, k->mtype, &st)
                              : MPI_File_write(fh, b, k->mcount, k->mtype, &st));
            else
                MPICHK(coll() ? MPI_File_read_all(fh, b, k->mcount, k->mtype, &st)
                              : MPI_File_read(fh, b, k->mcount, k->mtype, &st));
        } else {
            if (is_write)
                MPICHK(coll() ? MPI_File_write_at_all(fh, k->disp, b, k->mcount, k->mtype, &st)
                              : MPI_File_write_at(fh, k->disp, b, k->mcount, k->mtype, &st));
            else
                MPICHK(coll() ? MPI_File_read_at_all(fh, k->disp, b, k->mcount, k->mtype, &st)
                              : MPI_File_read_at(fh, k->disp, b, k->mcount, k->mtype, &st));
        }
    }
}

/* shared-pointer scenarios: calls made by all ranks and the seconds of the
 * call loop alone (open and close excluded), for the ops/s column */
static double g_ops, g_ops_sec;

static void report(const char *op, int rep, double bytes, double sec, const verdict_t *v)
{
    if (g_rank != 0) return;
    char ops[96] = "";
    if (g_ops > 0 && g_ops_sec > 0)
        snprintf(ops, sizeof(ops), " ops=%.0f ops_seconds=%.6f opsps=%.0f", g_ops, g_ops_sec,
                 g_ops / g_ops_sec);
    bench_report(&O.c, O.scenario, op, rep, bytes, sec, v->serial, O.atomic, ops, "");
}

static void refuse(const char *op, const verdict_t *v)
{
    if (g_rank == 0) {
        printf("VERIFY FAILED scenario=%s op=%s np=%d: %s (%ld bad bytes); refusing to report\n",
               O.scenario, op, g_np, v->why[0] ? v->why : "data mismatch", v->bad);
        fprintf(stderr,
                "sfio_bench: VERIFY FAILED scenario=%s op=%s: %s (%ld bad bytes); refusing to "
                "report\n",
                O.scenario, op, v->why[0] ? v->why : "data mismatch", v->bad);
        fflush(stdout);
    }
    MPI_Finalize();
    exit(3);
}

static double total_bytes(const plan_t *p)
{
    double mine = (double)p->nbytes, all;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

static void delete_file(const char *path)
{
    unlink_rank0(path);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* generic write of a plan, verified */
static void bench_write(const plan_t *p, const char *path, int rep)
{
    unsigned char *stream = make_stream(p, (uint32_t)g_rank);
    unsigned char *buf = malloc(p->bufsize ? p->bufsize : 1);
    memset(buf, 0xEE, p->bufsize); /* holes (guard cells) must never reach the file */
    stream_to_buf(p, stream, buf);
    free(stream);
    delete_file(path);
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    file_open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, &fh);
    double t1 = MPI_Wtime();
    run_calls(fh, p, buf, 1);
    double t2 = MPI_Wtime();
    MPICHK(MPI_File_close(&fh));
    double dt = MPI_Wtime() - t0, sec;
    MPI_Allreduce(&dt, &sec, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    free(buf);
    if (p->count_ops) {
        /* the call loop alone, slowest rank: per-call cost of small calls */
        double loop = t2 - t1, calls = p->ncalls;
        MPI_Allreduce(&loop, &g_ops_sec, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&calls, &g_ops, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }

    if (want_corrupt() && g_rank == 0 && p->next) corrupt_file(path, p->ext[0].off + p->ext[0].len / 2);
    if (getenv("BENCH_TEAR") && g_rank == 0 && p->per_call) tear_file(p, path);
    MPI_Barrier(MPI_COMM_WORLD);
    verdict_t v = {0};
    unsigned char *edges = NULL;
    if (p->overlap) {
        edges = calloc((size_t)g_np * g_np, 1);
        verify_overlap(p, path, &v, edges, O.atomic && p->per_call);
    } else {
        verify_own(p, path, &v);
    }
    int ok = verdict_final(&v, edges, O.atomic && !p->per_call);
    if (O.atomic && p->per_call) v.serial = ok; /* checked overlap by overlap */
    free(edges);
    if (!ok) refuse("write", &v);
    report("write", rep, total_bytes(p), sec, &v);
}

/* generic read of a plan from a prepared file, verified */
static void bench_read(const plan_t *p, const char *path, int rep)
{
    unsigned char *buf = malloc(p->bufsize ? p->bufsize : 1);
    memset(buf, 0, p->bufsize);
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    file_open(path, MPI_MODE_RDONLY, &fh);
    run_calls(fh, p, buf, 0);
    MPICHK(MPI_File_close(&fh));
    double dt = MPI_Wtime() - t0, sec;
    MPI_Allreduce(&dt, &sec, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    unsigned char *got = malloc(p->nbytes ? p->nbytes : 1);
    buf_to_stream(p, buf, got);
    if (want_corrupt() && g_rank == 0 && p->nbytes) got[p->nbytes / 2] ^= 0x5a;
    unsigned char *exp = make_stream(p, READER_ID);
    verdict_t v = {0};
    for (size_t i = 0; i < p->nbytes; i++)
        if (got[i] != exp[i]) {
            v.bad++;
            verdict_bad(&v, "read byte %llu of rank's stream differs (got %llu)", i, got[i]);
        }
    free(got);
    free(exp);
    free(buf);
    if (!verdict_final(&v, NULL, 0)) refuse("read", &v);
    report("read", rep, total_bytes(p), sec, &v);
}

/* volume read by one master that scatters the blocks */
static void bench_volume_master(const char *path, long n, long E, int rep)
{
    long s[3], z[3];
    volume_geom(g_rank, n, s, z);
    plan_t p = {0};
    MPI_Datatype et = bytes_type(E);
    /* the plan only describes what each rank must end up with (for verification) */
    plan_call(&p, 0, 0, MPI_BYTE, MPI_BYTE, (int)(z[0] * z[1] * z[2] * E), 0);
    for (long i = s[0]; i < s[0] + z[0]; i++)
        for (long j = s[1]; j < s[1] + z[1]; j++)
            plan_ext(&p, (uint64_t)((i * n + j) * n + s[2]) * E, z[2] * E);
    p.bufsize = p.nbytes;
    unsigned char *mine = calloc(1, p.bufsize ? p.bufsize : 1);
    size_t vol = (size_t)n * n * n * E;
    unsigned char *all = g_rank == 0 ? malloc(vol) : NULL;
    MPI_File fh;
    MPI_Status st;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    file_open(path, MPI_MODE_RDONLY, &fh);
    if (g_rank == 0) {
        size_t chunk = (size_t)1 << 30;
        for (size_t o = 0; o < vol; o += chunk) {
            size_t len = vol - o < chunk ? vol - o : chunk;
            MPICHK(MPI_File_read_at(fh, (MPI_Offset)o, all + o, (int)len, MPI_BYTE, &st));
        }
    }
    MPICHK(MPI_File_close(&fh));
    MPI_Request *rq = malloc((g_np + 1) * sizeof(MPI_Request));
    int nrq = 0;
    MPI_Irecv(mine, (int)p.nbytes, MPI_BYTE, 0, 77, MPI_COMM_WORLD, &rq[nrq++]);
    MPI_Datatype *bt = NULL;
    if (g_rank == 0) {
        bt = malloc(g_np * sizeof(MPI_Datatype));
        for (int r = 0; r < g_np; r++) {
            long rs[3], rz[3];
            volume_geom(r, n, rs, rz);
            bt[r] = volume_type(n, rs, rz, et);
            MPI_Isend(all, 1, bt[r], r, 77, MPI_COMM_WORLD, &rq[nrq++]);
        }
    }
    MPI_Waitall(nrq, rq, MPI_STATUSES_IGNORE);
    double dt = MPI_Wtime() - t0, sec;
    MPI_Allreduce(&dt, &sec, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (bt) {
        for (int r = 0; r < g_np; r++) MPI_Type_free(&bt[r]);
        free(bt);
    }
    free(rq);
    free(all);
    if (want_corrupt() && g_rank == 0 && p.nbytes) mine[p.nbytes / 2] ^= 0x5a;
    unsigned char *exp = make_stream(&p, READER_ID);
    verdict_t v = {0};
    for (size_t i = 0; i < p.nbytes; i++)
        if (mine[i] != exp[i]) {
            v.bad++;
            verdict_bad(&v, "scattered byte %llu of rank's block differs (got %llu)", i, mine[i]);
        }
    free(exp);
    free(mine);
    MPI_Type_free(&et);
    if (!verdict_final(&v, NULL, 0)) refuse("read", &v);
    report("read", rep, (double)vol, sec, &v);
    free(p.calls);
    free(p.ext);
}

/* The rank whose process holds fh's shared pointer (the suite's file info
 * key), else 0. */
static int shared_pointer_host(MPI_File fh)
{
    MPI_Info info;
    char v[32];
    int flag = 0, host = 0;
    if (MPI_File_get_info(fh, &info) == MPI_SUCCESS) {
        MPI_Info_get(info, "sfio_sharedfp_host", (int)sizeof(v) - 1, v, &flag);
        if (flag) host = atoi(v);
        MPI_Info_free(&info);
    }
    return host >= 0 && host < g_np ? host : 0;
}

/* shared file pointer log (write_shared) or ordered writes (write_ordered);
 * --sleep-ms: the rank that holds the pointer sleeps outside MPI halfway
 * through a write_shared log, and the ops/s count the other ranks' loops */
#define REC_MAGIC 0x53464c47u
static void bench_shared(const char *path, int ordered, int rep)
{
    long N = O.records, R = O.recsize;
    if (R < 16) die("record size must be at least 16 bytes");
    unsigned char *rec = malloc(R);
    delete_file(path);
    MPI_File fh;
    MPI_Status st;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    file_open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, &fh);
    int sleeper = !ordered && O.sleep_ms > 0 ? shared_pointer_host(fh) : -1;
    MPI_Barrier(MPI_COMM_WORLD);
    double l0 = MPI_Wtime();
    for (long i = 0; i < N; i++) {
        if (g_rank == sleeper && i == N / 2) {
            struct timespec ts = {O.sleep_ms / 1000, (O.sleep_ms % 1000) * 1000000};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
            }
        }
        gen((uint32_t)g_rank, (uint64_t)i * R, R, rec);
        uint32_t h[4] = {REC_MAGIC, (uint32_t)g_rank, (uint32_t)i, (uint32_t)R};
        memcpy(rec, h, sizeof(h));
        if (ordered)
            MPICHK(MPI_File_write_ordered(fh, rec, (int)R, MPI_BYTE, &st));
        else
            MPICHK(MPI_File_write_shared(fh, rec, (int)R, MPI_BYTE, &st));
    }
    double ldt = g_rank == sleeper ? 0 : MPI_Wtime() - l0;
    MPI_Allreduce(&ldt, &g_ops_sec, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    g_ops = (double)N * g_np;
    MPICHK(MPI_File_close(&fh));
    double dt = MPI_Wtime() - t0, sec;
    MPI_Allreduce(&dt, &sec, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    uint64_t size = (uint64_t)N * R * g_np;
    if (want_corrupt() && g_rank == 0) corrupt_file(path, size / 2 + 20);
    MPI_Barrier(MPI_COMM_WORLD);
    verdict_t v = {0};
    if (g_rank == 0) {
        bypass(1);
        int fd = open(path, O_RDONLY);
        struct stat sb;
        if (fd < 0 || fstat(fd, &sb) != 0) {
            v.bad = 1;
            snprintf(v.why, sizeof(v.why), "cannot open %.200s", path);
        } else if ((uint64_t)sb.st_size != size) {
            v.bad = 1;
            snprintf(v.why, sizeof(v.why), "file size %lld, expected %llu (lost or extra records)",
                     (long long)sb.st_size, (unsigned long long)size);
        } else {
            unsigned char *seen = calloc((size_t)N * g_np, 1), *exp = malloc(R);
            for (uint64_t k = 0; k < size / R; k++) {
                if (pread(fd, rec, R, (off_t)(k * R)) != R) {
                    v.bad += R;
                    continue;
                }
                uint32_t h[4];
                memcpy(h, rec, sizeof(h));
                if (h[0] != REC_MAGIC || h[1] >= (uint32_t)g_np || h[2] >= (uint32_t)N ||
                    h[3] != (uint32_t)R) {
                    v.bad += R;
                    verdict_bad(&v, "record slot %llu has a torn or foreign header (%llu)", k, h[0]);
                    continue;
                }
                gen(h[1], (uint64_t)h[2] * R, R, exp);
                if (memcmp(rec + 16, exp + 16, R - 16) != 0) {
                    v.bad += R;
                    verdict_bad(&v, "record slot %llu (rank %llu) has corrupt body", k, h[1]);
                }
                if (seen[(size_t)h[1] * N + h[2]]++) {
                    v.bad += R;
                    verdict_bad(&v, "record rank %llu seq %llu appears twice", h[1], h[2]);
                }
                if (ordered && (k % g_np != h[1] || k / g_np != h[2])) {
                    v.bad += R;
                    verdict_bad(&v, "ordered write out of order at record slot %llu (rank %llu)",
                                k, h[1]);
                }
            }
            free(seen);
            free(exp);
        }
        if (fd >= 0) close(fd);
        bypass(0);
    }
    free(rec);
    if (!verdict_final(&v, NULL, 0)) refuse("write", &v);
    report("write", rep, (double)size, sec, &v);
}

/* ------------------------------------------------------------------ */
/* options                                                              */

static void usage(void)
{
    if (g_rank) return;
    printf(
        "usage: sfio_bench -s SCENARIO [options]\n"
        "scenarios:\n"
        "  noncontig  same bytes per rank split into --regions R regions (interleaved)\n"
        "  tilerow    row of np overlapping tiles (MPI-tile-IO, versioning, Tran et al.)\n"
        "  tiles2d    2-D grid of overlapping tiles (MPI_Dims_create; 9 ranks = 3x3)\n"
        "  block3d    ROMIO coll_perf 3-D block array (write and read)\n"
        "  flash      FLASH-IO checkpoint: memory by block, file by variable\n"
        "  tileread   tile reader, 1024x768 tiles, 270/128 overlap (read)\n"
        "  volume     3-D image volume read: --method coll (subarray read_all) | master\n"
        "  ior        IOR-style segments of contiguous blocks (write and read)\n"
        "  sharedlog  log appends with MPI_File_write_shared\n"
        "  ordered    MPI_File_write_ordered\n"
        "  smallwrite many small contiguous writes, each overlapping its neighbours'\n"
        "options:\n"
        "  -d DIR            directory for the file ($NETSTORE_DIR, else /tmp)\n"
        "  --reps N          repetitions (default 3)\n"
        "  --quick           small sizes\n"
        "  --atomic          MPI_File_set_atomicity(fh,1); verify serializability\n"
        "  --mode coll|indep collective or independent calls\n"
        "  --op write|read|both\n"
        "  --hint key=value  MPI_Info hint at open and set_view (repeatable)\n"
        "  --ds enable|disable|automatic  ROMIO data sieving (romio_ds_read/write)\n"
        "  --regions R --per-rank BYTES         noncontig\n"
        "  --tile X[xY] --overlap X[xY] --elem BYTES  tiles\n"
        "  --n EDGE --elem BYTES                block3d, volume\n"
        "  --blocks N --vars N --nxb N --guard N  flash\n"
        "  --block B --xfer T --segs S          ior\n"
        "  --records N --recsize BYTES          sharedlog, ordered\n"
        "  --writes N --sizes MIN:MAX           smallwrite (sizes double from MIN to MAX)\n"
        "  --sleep-ms MS     sharedlog: the pointer's host sleeps MS ms halfway (ops/s: the others)\n"
        "  --otpo            last line 'Time in seconds = X'\n"
        "  --keep -v\n"
        "env: BENCH_CORRUPT=1 flips a byte before verification (the run must refuse)\n");
}

static void pair(const char *s, long *a, long *b)
{
    const char *x = strchr(s, 'x');
    *a = num(s);
    *b = x ? num(x + 1) : *a;
}

static void set_defaults(void)
{
    const char *s = O.scenario;
    int q = O.c.quick;
    if (!O.c.op) {
        if (!strcmp(s, "block3d") || !strcmp(s, "ior")) O.c.op = "both";
        else if (!strcmp(s, "tileread") || !strcmp(s, "volume")) O.c.op = "read";
        else O.c.op = "write";
    }
    if (!O.c.mode) {
        if (!strcmp(s, "block3d") || !strcmp(s, "flash") || !strcmp(s, "tileread") ||
            !strcmp(s, "volume"))
            O.c.mode = "coll";
        else O.c.mode = "indep";
    }
    if (!O.method) O.method = "coll";
    if (!O.regions) O.regions = 64;
    if (!O.c.per_rank) O.c.per_rank = q ? 2 << 20 : 16 << 20;
    if (!strcmp(s, "tilerow") || !strcmp(s, "tiles2d")) {
        if (!O.elem) O.elem = 1024;
        int big = O.elem >= (1 << 20);
        if (!O.tile_x) O.tile_x = O.tile_y = big ? (q ? 2 : 4) : (q ? 32 : 128);
        if (O.ov_x < 0) O.ov_x = O.ov_y = big ? 1 : (q ? 4 : 16);
    }
    if (!strcmp(s, "tileread")) {
        if (!O.elem) O.elem = 4;
        if (!O.tile_x) {
            O.tile_x = 1024;
            O.tile_y = 768;
        }
        if (O.ov_x < 0) {
            O.ov_x = 270;
            O.ov_y = 128;
        }
    }
    if (!strcmp(s, "block3d")) {
        if (!O.elem) O.elem = 4;
        if (!O.n) O.n = q ? 128 : 256;
    }
    if (!strcmp(s, "volume")) {
        if (!O.elem) O.elem = 2;
        if (!O.n) O.n = q ? 128 : 256;
    }
    if (!O.nblocks) O.nblocks = q ? 8 : 80;
    if (!O.nvars) O.nvars = 24;
    if (!O.nxb) O.nxb = 8;
    if (O.guard < 0) O.guard = 4;
    if (!O.block) O.block = q ? 1 << 20 : 4 << 20;
    if (!O.xfer) O.xfer = q ? 256 << 10 : 1 << 20;
    if (!O.segs) O.segs = q ? 2 : 4;
    if (!O.records) O.records = !strcmp(s, "ordered") ? (q ? 20 : 100) : (q ? 100 : 1000);
    if (!O.recsize) O.recsize = 512;
    if (!O.writes) O.writes = q ? 5000 : 100000;
    if (!O.min_size) O.min_size = 8;
    if (!O.max_size) O.max_size = 512;
}

/* sfio_bench's own options (bench_parse has the common ones) */
static int own_option(const char *key, bench_args_t *a)
{
    if (!strcmp(key, "-s") || !strcmp(key, "--scenario")) O.scenario = bench_arg(a);
    else if (!strcmp(key, "--atomic")) O.atomic = 1;
    else if (!strcmp(key, "--method")) O.method = bench_arg(a);
    else if (!strcmp(key, "--regions")) O.regions = (int)num(bench_arg(a));
    else if (!strcmp(key, "--tile")) pair(bench_arg(a), &O.tile_x, &O.tile_y);
    else if (!strcmp(key, "--overlap")) pair(bench_arg(a), &O.ov_x, &O.ov_y);
    else if (!strcmp(key, "--elem")) O.elem = num(bench_arg(a));
    else if (!strcmp(key, "--n")) O.n = num(bench_arg(a));
    else if (!strcmp(key, "--blocks")) O.nblocks = num(bench_arg(a));
    else if (!strcmp(key, "--vars")) O.nvars = num(bench_arg(a));
    else if (!strcmp(key, "--nxb")) O.nxb = num(bench_arg(a));
    else if (!strcmp(key, "--guard")) O.guard = num(bench_arg(a));
    else if (!strcmp(key, "--block")) O.block = num(bench_arg(a));
    else if (!strcmp(key, "--xfer")) O.xfer = num(bench_arg(a));
    else if (!strcmp(key, "--segs")) O.segs = num(bench_arg(a));
    else if (!strcmp(key, "--records")) O.records = num(bench_arg(a));
    else if (!strcmp(key, "--recsize")) O.recsize = num(bench_arg(a));
    else if (!strcmp(key, "--sleep-ms")) O.sleep_ms = num(bench_arg(a));
    else if (!strcmp(key, "--writes")) O.writes = num(bench_arg(a));
    else if (!strcmp(key, "--sizes")) {
        const char *v = bench_arg(a), *c = strchr(v, ':');
        O.min_size = num(v);
        O.max_size = c ? num(c + 1) : O.min_size;
    }
    else return 0;
    return 1;
}

static void parse(int argc, char **argv)
{
    memset(&O, 0, sizeof(O));
    O.ov_x = O.ov_y = -1;
    O.guard = -1;
    bench_parse(argc, argv, &O.c, own_option, usage);
    if (!O.scenario) {
        usage();
        MPI_Finalize();
        exit(2);
    }
    set_defaults();
}

int main(int argc, char **argv)
{
    bench_init(&argc, &argv, "sfio_bench");
    parse(argc, argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);

    char path[1024];
    snprintf(path, sizeof(path), "%s/sfio_%s_%d.dat", O.c.dir, O.scenario, bench_tag());
    const char *s = O.scenario;
    int do_w = strcmp(O.c.op, "read") != 0, do_r = strcmp(O.c.op, "write") != 0;

    if (!strcmp(s, "sharedlog") || !strcmp(s, "ordered")) {
        for (int r = 0; r < O.c.reps; r++) {
            g_seed = 0x5f10be7cull + 7919ull * r;
            bench_shared(path, !strcmp(s, "ordered"), r);
        }
    } else if (!strcmp(s, "volume") && !strcmp(O.method, "master")) {
        prepare_read_file(path, (uint64_t)O.n * O.n * O.n * O.elem);
        for (int r = 0; r < O.c.reps; r++) bench_volume_master(path, O.n, O.elem, r);
    } else {
        plan_t p = {0};
        if (!strcmp(s, "noncontig")) build_noncontig(&p);
        else if (!strcmp(s, "tilerow"))
            build_tiles(&p, g_np, 1, O.tile_x, O.tile_y, O.ov_x, 0, O.elem);
        else if (!strcmp(s, "tiles2d") || !strcmp(s, "tileread")) {
            int d[2] = {0, 0};
            MPI_Dims_create(g_np, 2, d);
            build_tiles(&p, d[1], d[0], O.tile_x, O.tile_y, O.ov_x, O.ov_y, O.elem);
        } else if (!strcmp(s, "block3d")) build_block3d(&p, O.n, O.elem);
        else if (!strcmp(s, "flash")) build_flash(&p);
        else if (!strcmp(s, "ior")) build_ior(&p);
        else if (!strcmp(s, "smallwrite")) build_smallwrite(&p);
        else if (!strcmp(s, "volume")) {
            long st[3], z[3];
            volume_geom(g_rank, O.n, st, z);
            MPI_Datatype et = bytes_type(O.elem);
            MPI_Datatype ft = volume_type(O.n, st, z, et);
            plan_call(&p, 1, 0, ft, et, (int)(z[0] * z[1] * z[2]), 0);
            for (long i = st[0]; i < st[0] + z[0]; i++)
                for (long j = st[1]; j < st[1] + z[1]; j++)
                    plan_ext(&p, (uint64_t)((i * O.n + j) * O.n + st[2]) * O.elem, z[2] * O.elem);
            p.bufsize = p.nbytes;
        } else {
            if (g_rank == 0) fprintf(stderr, "sfio_bench: unknown scenario '%s'\n", s);
            usage();
            MPI_Finalize();
            return 2;
        }
        if (do_w)
            for (int r = 0; r < O.c.reps; r++) {
                g_seed = 0x5f10be7cull + 7919ull * r;
                bench_write(&p, path, r);
            }
        if (do_r) {
            g_seed = 0x5f10be7cull + 104729ull;
            prepare_read_file(path, plan_max_end(&p));
            for (int r = 0; r < O.c.reps; r++) bench_read(&p, path, r);
        }
    }
    if (!O.c.keep) delete_file(path);

    bench_finish(&O.c, O.scenario);
    MPI_Info_free(&O.c.info);
    MPI_Finalize();
    return 0;
}
