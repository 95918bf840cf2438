/*
 * t_engine.c: the suite's engine exists once per process.
 *
 *   engine.loaded_once   with two or more of the suite's components mapped
 *                        (after a file open), exactly one engine library
 *                        (libmca_common_sfio) is mapped in the process
 *   engine.threads_once  non-blocking writes on two files through
 *                        fbtl/versioned start exactly one worker thread
 *                        ("sfio-async") in the process
 *
 * Suite stack only: on the stock stack no engine is loaded.  In an Open
 * MPI built with the suite linked in (tools/build-ompi-with-suite.sh
 * --static) components and engine are part of libmpi: then no copy of
 * either may be mapped besides, and the worker thread is still one.
 */
#define _GNU_SOURCE 1   /* dladdr */
#include "sfio_mpitest.h"

#include <dirent.h>
#include <dlfcn.h>

static const char *suite_components[] = {
    "mca_fs_versioned", "mca_fbtl_versioned", "mca_fcoll_adaptive", "mca_sharedfp_fetchadd",
};
#define NCOMPONENTS (sizeof(suite_components) / sizeof(suite_components[0]))

/* Distinct mapped files whose base name starts with prefix. */
static int mapped_files(const char *prefix)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096], seen[16][1024];
    int nseen = 0;
    if (NULL == f) {
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        char *path = strchr(line, '/');
        if (NULL == path) {
            continue;
        }
        path[strcspn(path, "\n")] = '\0';
        const char *base = strrchr(path, '/') + 1;
        if (0 != strncmp(base, prefix, strlen(prefix))) {
            continue;
        }
        int known = 0;
        for (int i = 0; i < nseen; ++i) {
            known |= 0 == strcmp(seen[i], path);
        }
        if (!known && nseen < 16) {
            snprintf(seen[nseen++], sizeof(seen[0]), "%s", path);
        }
    }
    fclose(f);
    return nseen;
}

/* Threads of this process named name. */
static int threads_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;
    if (NULL == d) {
        return -1;
    }
    while (NULL != (e = readdir(d))) {
        char p[300], comm[64] = "";
        if ('.' == e->d_name[0]) {
            continue;
        }
        snprintf(p, sizeof(p), "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(p, "r");
        if (NULL != f) {
            if (fgets(comm, sizeof(comm), f)) {
                comm[strcspn(comm, "\n")] = '\0';
            }
            fclose(f);
        }
        n += 0 == strcmp(comm, name);
    }
    closedir(d);
    return n;
}

/* Whether the suite is linked into libmpi (see the header). */
static int suite_in_libmpi(void)
{
    Dl_info info;
    void *sym = dlsym(RTLD_DEFAULT, "mca_fs_versioned_component");
    return NULL != sym && 0 != dladdr(sym, &info) && NULL != info.dli_fname &&
           NULL != strstr(info.dli_fname, "libmpi");
}

static void test_loaded_once(void)
{
    char path[1200];
    MPI_File fh;
    if (!t_begin("engine.loaded_once")) {
        return;
    }
    t_fname(path, sizeof(path), "once");
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh);
    if (MPI_SUCCESS != rc) {
        t_failf("open failed (%d)", rc);
    } else {
        int ncomp = 0;
        for (size_t i = 0; i < NCOMPONENTS; ++i) {
            ncomp += mapped_files(suite_components[i]) > 0;
        }
        int nengine = mapped_files("libmca_common_sfio");
        if (suite_in_libmpi()) {
            if (0 != ncomp || 0 != nengine) {
                t_failf("suite in libmpi, yet %d component and %d engine libraries mapped",
                        ncomp, nengine);
            }
        } else if (ncomp < 2) {
            t_failf("only %d of the suite's components mapped: nothing to share", ncomp);
        } else if (1 != nengine) {
            t_failf("%d engine libraries mapped with %d components, want 1", nengine, ncomp);
        }
        MPI_File_close(&fh);
    }
    if (0 == t_rank) {
        MPI_File_delete(path, MPI_INFO_NULL);
    }
    t_end();
}

static void test_threads_once(void)
{
    char path[2][1200];
    MPI_File fh[2];
    enum { N = 4096 };
    static char buf[2][N];
    if (!t_begin("engine.threads_once")) {
        return;
    }
    int fbtl_mapped = mapped_files("mca_fbtl_versioned") > 0;
    for (int k = 0; k < 2; ++k) {
        char tag[8];
        snprintf(tag, sizeof(tag), "th%d", k);
        t_fname(path[k], sizeof(path[k]), tag);
        memset(buf[k], 'a' + k, N);
        if (MPI_SUCCESS != MPI_File_open(MPI_COMM_WORLD, path[k], MPI_MODE_CREATE | MPI_MODE_RDWR,
                                         MPI_INFO_NULL, &fh[k])) {
            t_failf("open %d failed", k);
            fh[k] = MPI_FILE_NULL;
        }
    }
    for (int k = 0; k < 2; ++k) {
        MPI_Request req;
        if (MPI_FILE_NULL == fh[k]) {
            continue;
        }
        if (MPI_SUCCESS != MPI_File_iwrite_at(fh[k], (MPI_Offset) t_rank * N, buf[k], N, MPI_BYTE,
                                              &req) ||
            MPI_SUCCESS != MPI_Wait(&req, MPI_STATUS_IGNORE)) {
            t_failf("iwrite_at on file %d failed", k);
        }
    }
    fbtl_mapped |= mapped_files("mca_fbtl_versioned") > 0;
    int workers = threads_named("sfio-async");
    if ((fbtl_mapped || suite_in_libmpi()) && 1 != workers) {
        t_failf("%d non-blocking workers after writes on two files, want 1", workers);
    }
    for (int k = 0; k < 2; ++k) {
        if (MPI_FILE_NULL != fh[k]) {
            MPI_File_close(&fh[k]);
        }
    }
    if (0 == t_rank) {
        MPI_File_delete(path[0], MPI_INFO_NULL);
        MPI_File_delete(path[1], MPI_INFO_NULL);
    }
    t_end();
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "engine");
    if (!t_is_stock()) {
        test_loaded_once();
        test_threads_once();
    }
    return t_finish();
}
