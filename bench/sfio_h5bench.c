/*
 * sfio_h5bench.c - the `hdf5` scenario of sfio-bench: a 2-D or 3-D dataset
 * of 8-byte integers written and read collectively through parallel HDF5
 * (H5Pset_fapl_mpio + H5Pset_dxpl_mpio(H5FD_MPIO_COLLECTIVE)), each rank one
 * hyperslab block (MPI_Dims_create grid).  HDF5 goes through MPI-IO, so the
 * usual --mca io / fcoll selection applies.
 *
 * Usage: sfio_h5bench [-s hdf5] [options]      (sfio_h5bench --help)
 *
 * Output: the same RESULT / SUMMARY lines as sfio_bench (rank 0), plus
 * h5io=coll|indep|mixed (what HDF5 reports it did, H5Pget_mpio_actual_io_mode)
 * and dims=AxBxC; --otpo ends with "Time in seconds = X".
 *
 * Verification (untimed, netstore bypassed): after each write every rank
 * reads its own block straight from the file with pread at the dataset's
 * file offset (H5Dget_offset, contiguous layout), i.e. without MPI-IO or
 * HDF5's data path; after each read every rank checks the received block.
 * Reads use a file prepared (untimed) with a pattern of its own, written
 * with independent transfers and checked the same way.  A collective
 * transfer that HDF5 turned into independent I/O is refused too: the
 * scenario exists to compare collective I/O components.  On failure rank 0
 * prints "VERIFY FAILED ..." and every rank exits with status 3.
 * BENCH_CORRUPT=1 flips one byte (in the file after a write, in the buffer
 * after a read) to show the check bites.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

#define MAXD 3

static struct {
    bench_opts_t c; /* dir, op, mode, quick, reps, otpo, keep, verbose, per_rank, info */
    int ndims, coll_md;
    long edge;
} O;

static char g_path[1024];

#define H5CHK(call)                                                         \
    do {                                                                    \
        if ((call) < 0) bench_fail("%s failed (line %d)", #call, __LINE__); \
    } while (0)

/* value of the element at global linear index g for pattern `seed` */
static inline uint64_t value_of(uint64_t seed, uint64_t g)
{
    return mix64(g ^ (seed << 40) ^ 0x5f10be7cull);
}

/* geometry: global dims, this rank's block (start, count), row-major */
typedef struct {
    int nd;
    hsize_t gdim[MAXD], start[MAXD], count[MAXD];
    uint64_t nelem;     /* this rank's elements */
} geom_t;

static void make_geom(geom_t *g)
{
    int d[MAXD] = {0, 0, 0}, periods[MAXD] = {0, 0, 0}, coords[MAXD];
    MPI_Comm cart;
    g->nd = O.ndims;
    MPI_Dims_create(g_np, g->nd, d);
    MPI_Cart_create(MPI_COMM_WORLD, g->nd, d, periods, 0, &cart);
    MPI_Cart_coords(cart, g_rank, g->nd, coords);
    MPI_Comm_free(&cart);
    long b = O.edge;
    if (b <= 0) {
        double elems = (double)O.c.per_rank / sizeof(uint64_t);
        b = (long)floor(pow(elems, 1.0 / g->nd) + 1e-9);
        if (b < 1) b = 1;
    }
    g->nelem = 1;
    for (int i = 0; i < g->nd; i++) {
        g->gdim[i] = (hsize_t)d[i] * (hsize_t)b;
        g->start[i] = (hsize_t)coords[i] * (hsize_t)b;
        g->count[i] = (hsize_t)b;
        g->nelem *= (uint64_t)b;
    }
}

/* global linear index of this rank's element number i (row-major in the block) */
static uint64_t global_index(const geom_t *g, uint64_t i)
{
    hsize_t idx[MAXD];
    for (int k = g->nd - 1; k >= 0; k--) {
        idx[k] = g->start[k] + i % g->count[k];
        i /= g->count[k];
    }
    uint64_t lin = 0;
    for (int k = 0; k < g->nd; k++) lin = lin * g->gdim[k] + idx[k];
    return lin;
}

static void fill(const geom_t *g, uint64_t seed, uint64_t *buf)
{
    for (uint64_t i = 0; i < g->nelem; i++) buf[i] = value_of(seed, global_index(g, i));
}

/* first wrong element of buf, or -1 */
static long long check_buf(const geom_t *g, uint64_t seed, const uint64_t *buf)
{
    for (uint64_t i = 0; i < g->nelem; i++)
        if (buf[i] != value_of(seed, global_index(g, i))) return (long long)i;
    return -1;
}

static void refuse(const char *op, const char *why)
{
    if (!O.c.keep && g_path[0]) unlink_rank0(g_path);
    if (g_rank == 0) {
        printf("VERIFY FAILED scenario=hdf5 op=%s np=%d: %s; refusing to report\n", op, g_np,
               why);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    exit(3);
}

/* every rank: 1 if any rank failed; the first failing rank's reason goes to rank 0 */
static int agree_fail(int bad, char *why, size_t whylen)
{
    int any, who, cand = bad ? g_rank : g_np;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!any) return 0;
    MPI_Allreduce(&cand, &who, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Bcast(why, (int)whylen, MPI_CHAR, who, MPI_COMM_WORLD);
    return 1;
}

static hid_t fapl_mpio(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5CHK(fapl);
    H5CHK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, O.c.info));
    if (O.coll_md) {
#if H5_VERSION_GE(1, 10, 0)
        H5CHK(H5Pset_all_coll_metadata_ops(fapl, 1));
        H5CHK(H5Pset_coll_metadata_write(fapl, 1));
#endif
    }
    return fapl;
}

static hid_t dxpl_of(int collective)
{
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5CHK(dxpl);
    H5CHK(H5Pset_dxpl_mpio(dxpl, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT));
    return dxpl;
}

static const char *io_mode_name(H5D_mpio_actual_io_mode_t m)
{
    switch (m) {
    case H5D_MPIO_NO_COLLECTIVE: return "indep";
    case H5D_MPIO_CONTIGUOUS_COLLECTIVE:
    case H5D_MPIO_CHUNK_COLLECTIVE: return "coll";
    default: return "mixed";
    }
}

/* a collective transfer HDF5 did not do collectively: refuse (the numbers
 * would be independent I/O labelled collective) */
static const char *check_collective(hid_t dxpl, const char *op)
{
    H5D_mpio_actual_io_mode_t m = H5D_MPIO_NO_COLLECTIVE;
    H5CHK(H5Pget_mpio_actual_io_mode(dxpl, &m));
    const char *name = io_mode_name(m);
    if (strcmp(O.c.mode, "coll") == 0 && strcmp(name, "coll") != 0) {
        uint32_t loc = 0, glob = 0;
        H5Pget_mpio_no_collective_cause(dxpl, &loc, &glob);
        char why[160];
        snprintf(why, sizeof(why),
                 "HDF5 did not do the collective transfer collectively (actual mode %s, "
                 "no-collective cause 0x%x)",
                 name, (unsigned)glob);
        refuse(op, why);
    }
    return name;
}

static void report(const char *op, int rep, double bytes, double sec, const char *h5io,
                   const geom_t *g)
{
    if (g_rank != 0) return;
    char dims[64];
    if (g->nd == 3)
        snprintf(dims, sizeof(dims), "%llux%llux%llu", (unsigned long long)g->gdim[0],
                 (unsigned long long)g->gdim[1], (unsigned long long)g->gdim[2]);
    else
        snprintf(dims, sizeof(dims), "%llux%llu", (unsigned long long)g->gdim[0],
                 (unsigned long long)g->gdim[1]);
    char extra[128], vnote[32];
    snprintf(extra, sizeof(extra), " h5io=%s dims=%s", h5io, dims);
    snprintf(vnote, sizeof(vnote), " (%s)", h5io);
    bench_report(&O.c, "hdf5", op, rep, bytes, sec, 1, 0, extra, vnote);
}

/* write the dataset (collective or independent transfer); returns seconds
 * (slowest rank: create + write + close), the dataset's file offset in *off */
static double h5_write(const char *path, const geom_t *g, const uint64_t *buf, int collective,
                       haddr_t *off, const char **h5io)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    hid_t fapl = fapl_mpio();
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5CHK(f);
    hid_t fs = H5Screate_simple(g->nd, g->gdim, NULL);
    H5CHK(fs);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5CHK(dcpl);
    /* contiguous layout, no fill: only the data transfer writes the data */
    H5CHK(H5Pset_layout(dcpl, H5D_CONTIGUOUS));
    H5CHK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER));
    H5CHK(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY));
    hid_t ds = H5Dcreate2(f, "data", H5T_NATIVE_UINT64, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5CHK(ds);
    H5CHK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, g->start, NULL, g->count, NULL));
    hid_t ms = H5Screate_simple(g->nd, g->count, NULL);
    H5CHK(ms);
    hid_t dxpl = dxpl_of(collective);
    H5CHK(H5Dwrite(ds, H5T_NATIVE_UINT64, ms, fs, dxpl, buf));
    *h5io = collective ? check_collective(dxpl, "write") : "indep";
    *off = H5Dget_offset(ds);
    H5CHK(H5Pclose(dxpl));
    H5CHK(H5Sclose(ms));
    H5CHK(H5Dclose(ds));
    H5CHK(H5Pclose(dcpl));
    H5CHK(H5Sclose(fs));
    H5CHK(H5Fclose(f));
    H5CHK(H5Pclose(fapl));
    double dt = MPI_Wtime() - t0, mx;
    MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return mx;
}

static double h5_read(const char *path, const geom_t *g, uint64_t *buf, const char **h5io)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    hid_t fapl = fapl_mpio();
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5CHK(f);
    hid_t ds = H5Dopen2(f, "data", H5P_DEFAULT);
    H5CHK(ds);
    hid_t fs = H5Dget_space(ds);
    H5CHK(fs);
    H5CHK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, g->start, NULL, g->count, NULL));
    hid_t ms = H5Screate_simple(g->nd, g->count, NULL);
    H5CHK(ms);
    int collective = strcmp(O.c.mode, "coll") == 0;
    hid_t dxpl = dxpl_of(collective);
    H5CHK(H5Dread(ds, H5T_NATIVE_UINT64, ms, fs, dxpl, buf));
    *h5io = collective ? check_collective(dxpl, "read") : "indep";
    H5CHK(H5Pclose(dxpl));
    H5CHK(H5Sclose(ms));
    H5CHK(H5Sclose(fs));
    H5CHK(H5Dclose(ds));
    H5CHK(H5Fclose(f));
    H5CHK(H5Pclose(fapl));
    double dt = MPI_Wtime() - t0, mx;
    MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return mx;
}

/* each rank preads its block's rows at the dataset's file offset (no MPI-IO,
 * no HDF5) and compares; returns 0 or fills why */
static int verify_file(const char *path, const geom_t *g, haddr_t off, uint64_t seed,
                       int may_corrupt, char *why, size_t whylen)
{
    int bad = 0;
    why[0] = '\0';
    if (off == HADDR_UNDEF) {
        snprintf(why, whylen, "dataset has no file offset (not contiguous?)");
        bad = 1;
    }
    bypass(1);
    if (!bad && may_corrupt && want_corrupt() && g_rank == 0)
        /* flip a byte of rank 0's first element in the file */
        flip_file_byte(path, off + global_index(g, 0) * sizeof(uint64_t));
    MPI_Barrier(MPI_COMM_WORLD);
    int fd = bad ? -1 : open(path, O_RDONLY);
    if (!bad && fd < 0) {
        snprintf(why, whylen, "rank %d cannot open the file to verify it", g_rank);
        bad = 1;
    }
    uint64_t row = g->count[g->nd - 1];
    uint64_t *rb = malloc(row * sizeof(uint64_t));
    for (uint64_t i = 0; !bad && i < g->nelem; i += row) {
        uint64_t gi = global_index(g, i);
        ssize_t want = (ssize_t)(row * sizeof(uint64_t));
        if (pread(fd, rb, (size_t)want, (off_t)(off + gi * sizeof(uint64_t))) != want) {
            snprintf(why, whylen, "short read at file offset %llu",
                     (unsigned long long)(off + gi * sizeof(uint64_t)));
            bad = 1;
            break;
        }
        for (uint64_t j = 0; j < row; j++)
            if (rb[j] != value_of(seed, gi + j)) {
                snprintf(why, whylen,
                         "rank %d's element %llu (file offset %llu) differs from what it wrote",
                         g_rank, (unsigned long long)(gi + j),
                         (unsigned long long)(off + (gi + j) * sizeof(uint64_t)));
                bad = 1;
                break;
            }
    }
    free(rb);
    if (fd >= 0) close(fd);
    bypass(0);
    return bad;
}

static void usage(void)
{
    if (g_rank) return;
    printf("usage: sfio_h5bench [-s hdf5] [options]\n"
           "  a 2-D/3-D dataset of 8-byte integers, one hyperslab block per rank,\n"
           "  written then read with H5Dwrite/H5Dread through parallel HDF5 (MPI-IO)\n"
           "options:\n"
           "  -d DIR             directory for the file ($NETSTORE_DIR, else /tmp)\n"
           "  --reps N           repetitions (default 3)\n"
           "  --quick            small sizes (2 MiB per rank instead of 32 MiB)\n"
           "  --op write|read|both   (default both)\n"
           "  --mode coll|indep  H5FD_MPIO_COLLECTIVE (default) or INDEPENDENT transfers\n"
           "  --ndims 2|3        dataset rank (default 3; ranks on an MPI_Dims_create grid)\n"
           "  --per-rank BYTES   bytes per rank (default 32M, quick 2M; block edge = root)\n"
           "  --edge N           block edge in elements (overrides --per-rank)\n"
           "  --coll-md          collective metadata reads and writes (HDF5 >= 1.10)\n"
           "  --hint key=value   MPI_Info hint for H5Pset_fapl_mpio (repeatable)\n"
           "  --ds enable|disable|automatic  ROMIO data sieving hints\n"
           "  --otpo             last line 'Time in seconds = X'\n"
           "  --keep -v\n"
           "env: BENCH_CORRUPT=1 flips a byte before verification (the run must refuse)\n");
}

/* sfio_h5bench's own options (bench_parse has the common ones) */
static int own_option(const char *key, bench_args_t *a)
{
    if (!strcmp(key, "-s") || !strcmp(key, "--scenario")) {
        const char *s = bench_arg(a);
        if (strcmp(s, "hdf5") != 0) die("the only scenario of sfio_h5bench is hdf5");
    } else if (!strcmp(key, "--ndims")) O.ndims = (int)num(bench_arg(a));
    else if (!strcmp(key, "--edge")) O.edge = num(bench_arg(a));
    else if (!strcmp(key, "--coll-md")) O.coll_md = 1;
    else return 0;
    return 1;
}

static void parse(int argc, char **argv)
{
    memset(&O, 0, sizeof(O));
    O.ndims = 3;
    bench_parse(argc, argv, &O.c, own_option, usage);
    if (!O.c.op) O.c.op = "both";
    if (!O.c.mode) O.c.mode = "coll";
    if (strcmp(O.c.mode, "coll") && strcmp(O.c.mode, "indep")) die("--mode coll|indep");
    if (strcmp(O.c.op, "write") && strcmp(O.c.op, "read") && strcmp(O.c.op, "both"))
        die("--op write|read|both");
    if (O.ndims != 2 && O.ndims != 3) die("--ndims 2|3");
    if (!O.c.per_rank) O.c.per_rank = O.c.quick ? 2L << 20 : 32L << 20;
}

int main(int argc, char **argv)
{
    bench_init(&argc, &argv, "sfio_h5bench");
    parse(argc, argv);

    char *path = g_path;
    snprintf(g_path, sizeof(g_path), "%s/sfio_hdf5_%d.h5", O.c.dir, bench_tag());

    geom_t g;
    make_geom(&g);
    double bytes = (double)g.nelem * sizeof(uint64_t) * g_np;
    uint64_t *buf = malloc(g.nelem * sizeof(uint64_t));
    if (!buf) die("out of memory");
    int do_w = strcmp(O.c.op, "read") != 0, do_r = strcmp(O.c.op, "write") != 0;
    int collective = strcmp(O.c.mode, "coll") == 0;
    char why[256];
    const char *h5io;
    haddr_t off;

    if (do_w)
        for (int r = 0; r < O.c.reps; r++) {
            uint64_t seed = 1 + (uint64_t)r;
            fill(&g, seed, buf);
            double sec = h5_write(path, &g, buf, collective, &off, &h5io);
            if (agree_fail(verify_file(path, &g, off, seed, 1, why, sizeof(why)), why, sizeof(why)))
                refuse("write", why);
            report("write", r, bytes, sec, h5io, &g);
        }
    if (do_r) {
        /* input file: its own pattern, independent transfers, netstore
         * bypassed (untimed), checked like a write */
        uint64_t seed = 0xFFFF;
        fill(&g, seed, buf);
        bypass(1);
        h5_write(path, &g, buf, 0, &off, &h5io);
        bypass(0);
        if (agree_fail(verify_file(path, &g, off, seed, 0, why, sizeof(why)), why, sizeof(why))) {
            snprintf(why + strlen(why), sizeof(why) - strlen(why), " (preparing the input)");
            refuse("read", why);
        }
        for (int r = 0; r < O.c.reps; r++) {
            memset(buf, 0, g.nelem * sizeof(uint64_t));
            double sec = h5_read(path, &g, buf, &h5io);
            if (want_corrupt() && g_rank == 0) ((unsigned char *)buf)[0] ^= 0x5a;
            long long badi = check_buf(&g, seed, buf);
            why[0] = '\0';
            if (badi >= 0)
                snprintf(why, sizeof(why), "rank %d's element %llu read back wrong", g_rank,
                         (unsigned long long)global_index(&g, (uint64_t)badi));
            if (agree_fail(badi >= 0, why, sizeof(why))) refuse("read", why);
            report("read", r, bytes, sec, h5io, &g);
        }
    }
    free(buf);
    if (!O.c.keep) unlink_rank0(path);

    bench_finish(&O.c, "hdf5");
    MPI_Info_free(&O.c.info);
    MPI_Finalize();
    return 0;
}
