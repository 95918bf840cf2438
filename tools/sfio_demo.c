/*
 * sfio-demo: writes a 2-D array through a subarray file view (each rank one
 * block of a process grid) with collective I/O, reads it back, verifies
 * every byte, and prints which OMPIO components served the file and the
 * throughput.  Usage: sfio-demo [--n N] [--dir DIR] [--reps R]
 */
#include "ompi_config.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ompi/file/file.h"
#include "ompi/mca/io/io.h"
#include "ompi/mca/common/ompio/common_ompio.h"

/* Names of the components OMPIO selected for fh ("-" when not OMPIO). */
static void selected_components(MPI_File fh, const char **io, const char **fs, const char **fbtl,
                                const char **fcoll, const char **sharedfp)
{
    ompi_file_t *f = (ompi_file_t *) fh;
    *io = f->f_io_selected_component.v2_0_0.io_version.mca_component_name;
    *fs = *fbtl = *fcoll = *sharedfp = "-";
    if (0 != strcmp(*io, "ompio")) {
        return;
    }
    ompio_file_t *o = &((mca_common_ompio_data_t *) f->f_io_selected_data)->ompio_fh;
    if (o->f_fs_component)       *fs = o->f_fs_component->mca_component_name;
    if (o->f_fbtl_component)     *fbtl = o->f_fbtl_component->mca_component_name;
    if (o->f_fcoll_component)    *fcoll = o->f_fcoll_component->mca_component_name;
    if (o->f_sharedfp_component) *sharedfp = o->f_sharedfp_component->mca_component_name;
}

static unsigned char pattern(long row, long col)
{
    return (unsigned char) ((row * 131 + col * 7 + 3) & 0xff);
}

int main(int argc, char **argv)
{
    int rank, size, reps = 3;
    long n = 2048;
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc) n = atol(argv[++i]);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    }

    int dims[2] = { 0, 0 }, periods[2] = { 0, 0 }, coords[2];
    MPI_Comm cart;
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 2, coords);

    int gsizes[2] = { (int) n, (int) n }, lsizes[2], starts[2];
    for (int d = 0; d < 2; ++d) {
        long base = n / dims[d], extra = n % dims[d];
        lsizes[d] = (int) (base + (coords[d] < extra));
        starts[d] = (int) (coords[d] * base + (coords[d] < extra ? coords[d] : extra));
    }
    size_t local = (size_t) lsizes[0] * lsizes[1];
    unsigned char *wbuf = malloc(local ? local : 1), *rbuf = malloc(local ? local : 1);
    for (int r = 0; r < lsizes[0]; ++r)
        for (int c = 0; c < lsizes[1]; ++c)
            wbuf[(size_t) r * lsizes[1] + c] = pattern(starts[0] + r, starts[1] + c);

    MPI_Datatype view;
    MPI_Type_create_subarray(2, gsizes, lsizes, starts, MPI_ORDER_C, MPI_BYTE, &view);
    MPI_Type_commit(&view);

    char path[4096];
    snprintf(path, sizeof(path), "%s/sfio-demo.%d.dat", dir, (int) getpid());
    MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);

    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (MPI_SUCCESS != rc) {
        char msg[MPI_MAX_ERROR_STRING]; int len;
        MPI_Error_string(rc, msg, &len);
        if (0 == rank) fprintf(stderr, "sfio-demo: cannot open %s: %s\n", path, msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_set_view(fh, 0, MPI_BYTE, view, "native", MPI_INFO_NULL);

    double wbest = 1e30, rbest = 1e30;
    long bad = 0;
    for (int rep = 0; rep < reps; ++rep) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_File_write_at_all(fh, 0, wbuf, (int) local, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_File_sync(fh);
        double t1 = MPI_Wtime(), tw = t1 - t0;
        memset(rbuf, 0, local);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_File_read_at_all(fh, 0, rbuf, (int) local, MPI_BYTE, MPI_STATUS_IGNORE);
        t1 = MPI_Wtime();
        double tr = t1 - t0;
        MPI_Allreduce(MPI_IN_PLACE, &tw, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &tr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (tw < wbest) wbest = tw;
        if (tr < rbest) rbest = tr;
        for (size_t i = 0; i < local; ++i) bad += (rbuf[i] != wbuf[i]);
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

    const char *io, *fs, *fbtl, *fcoll, *sharedfp;
    selected_components(fh, &io, &fs, &fbtl, &fcoll, &sharedfp);
    MPI_File_close(&fh);

    if (0 == rank) {
        double mb = (double) n * n / 1e6;
        printf("sfio-demo: %d ranks (%dx%d grid), %ldx%ld bytes, subarray view, collective\n",
               size, dims[0], dims[1], n, n);
        printf("components: io=%s fs=%s fbtl=%s fcoll=%s sharedfp=%s\n", io, fs, fbtl, fcoll,
               sharedfp);
        printf("write_at_all+sync: %.1f MB/s   read_at_all: %.1f MB/s   (best of %d)\n",
               mb / wbest, mb / rbest, reps);
        printf("verify: %s (%ld wrong bytes)\n", bad ? "FAILED" : "ok", bad);
        unlink(path);
    }
    MPI_Type_free(&view);
    MPI_Comm_free(&cart);
    free(wbuf);
    free(rbuf);
    MPI_Finalize();
    return bad ? 1 : 0;
}
