/*
 * sfio-store: the versioned stores a stopped job left for a file, for the
 * user and the site administrator.  An MPI_File_open applies a store by
 * itself only when it is safe (the user's own, made for this very file,
 * the file unchanged since); everything else is left in place and named
 * at the open.  This tool shows such stores and applies or discards them
 * on request.  It needs no MPI.
 *
 *   sfio-store list FILE             one line per store: verdict, versions, path
 *   sfio-store show FILE [STORE]     the same with the reason in words
 *   sfio-store apply FILE [--force]  apply dead stores (--force: also stores of
 *                                    a file modified since the job stopped)
 *   sfio-store discard FILE [STORE]  remove dead, stale and empty stores
 *                                    (a corrupt one only when named)
 *   --store-dir DIR                  also where fs_versioned_store_dir put them
 *
 * Exit status: 0 done; 1 a store was refused or could not be applied or
 * removed; 2 usage or the file cannot be opened.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sfio_vstore.h"

static int usage(void)
{
    fprintf(stderr,
            "usage: sfio-store list|show FILE [STORE] [--store-dir DIR]\n"
            "       sfio-store apply FILE [--force] [--store-dir DIR]\n"
            "       sfio-store discard FILE [STORE] [--store-dir DIR]\n");
    return 2;
}

typedef struct {
    bool verbose;
    bool applying;     /* a store left unapplied is a refusal */
    int problems;
    int seen;
} report_t;

static void note(void *ctx, const mca_common_sfio_store_info_t *info)
{
    report_t *r = ctx;
    r->seen++;
    if (MCA_COMMON_SFIO_STORE_FAILED == info->verdict ||
        MCA_COMMON_SFIO_STORE_FOREIGN == info->verdict ||
        MCA_COMMON_SFIO_STORE_REFUSED == info->verdict ||
        MCA_COMMON_SFIO_STORE_CORRUPT == info->verdict ||
        (r->applying && (MCA_COMMON_SFIO_STORE_CHANGED == info->verdict ||
                         MCA_COMMON_SFIO_STORE_OTHER_FILE == info->verdict))) {
        r->problems++;
    }
    printf("%-10s %8llu versions  %s\n", mca_common_sfio_store_verdict_name(info->verdict),
           (unsigned long long) info->versions, info->path);
    if (r->verbose) {
        printf("           %s%s%s\n", info->why ? info->why : "",
               info->err ? ": " : "", info->err ? strerror(info->err) : "");
        if (info->nranks > 0) {
            printf("           written by %d ranks\n", info->nranks);
        }
    }
}

int main(int argc, char **argv)
{
    const char *cmd = NULL, *file = NULL, *only = NULL, *store_dir = NULL;
    bool force = false;
    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "--force")) {
            force = true;
        } else if (0 == strcmp(argv[i], "--store-dir") && i + 1 < argc) {
            store_dir = argv[++i];
        } else if (0 == strcmp(argv[i], "-h") || 0 == strcmp(argv[i], "--help")) {
            usage();
            return 0;
        } else if (!cmd) {
            cmd = argv[i];
        } else if (!file) {
            file = argv[i];
        } else if (!only) {
            only = argv[i];
        } else {
            return usage();
        }
    }
    if (!cmd || !file) {
        return usage();
    }
    mca_common_sfio_store_action_t action;
    report_t r = { .verbose = false };
    if (0 == strcmp(cmd, "list")) {
        action = MCA_COMMON_SFIO_STORE_LIST;
    } else if (0 == strcmp(cmd, "show")) {
        action = MCA_COMMON_SFIO_STORE_LIST;
        r.verbose = true;
    } else if (0 == strcmp(cmd, "apply")) {
        action = force ? MCA_COMMON_SFIO_STORE_APPLY_FORCE : MCA_COMMON_SFIO_STORE_RECOVER;
        r.verbose = true;
        r.applying = true;
    } else if (0 == strcmp(cmd, "discard")) {
        action = MCA_COMMON_SFIO_STORE_DISCARD;
        r.verbose = true;
    } else {
        return usage();
    }
    /* Applying needs the file writable; looking only needs it readable. */
    int fd = open(file, (MCA_COMMON_SFIO_STORE_RECOVER == action ||
                         MCA_COMMON_SFIO_STORE_APPLY_FORCE == action ? O_RDWR : O_RDONLY) |
                            O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        fprintf(stderr, "sfio-store: %s: %s\n", file, strerror(errno));
        return 2;
    }
    char *only_real = only ? realpath(only, NULL) : NULL;
    mca_common_sfio_store_tally_t tally;
    int rc = mca_common_sfio_vstore_scan(file, fd, store_dir, action,
                                         only ? (only_real ? only_real : only) : NULL,
                                         note, &r, &tally);
    close(fd);
    free(only_real);
    if (0 == r.seen) {
        printf("no versioned store for %s\n", file);
    }
    if (tally.bytes_undone) {
        printf("zeroed %llu bytes of unfinished atomic writes\n",
               (unsigned long long) tally.bytes_undone);
    }
    if (0 != rc) {
        fprintf(stderr, "sfio-store: %s: %s\n", file, strerror(-rc));
        return 1;
    }
    if (MCA_COMMON_SFIO_STORE_LIST != action && r.problems > 0) {
        return 1;
    }
    return 0;
}
