/*
 * store_util: the non-MPI helper of test/store/run_store_tests.sh.
 *
 *   store_util gen OUT SIZE [TAG:OFF:LEN ...]
 *       OUT := SIZE zero bytes, then each TAG:OFF:LEN segment overlaid with
 *       the pattern of store_common.h: the reference image of a file that
 *       t_store wrote (compare with cmp).
 *   store_util lockhold FILE START LEN READY
 *       take an OFD write lock (F_OFD_SETLK, fcntl) on bytes START..START+LEN
 *       of FILE, create READY, then sleep until killed: a process holding a
 *       planted store's lock bytes (finding 2: such a lock must never make
 *       MPI_File_open wait).
 *   store_util patch FILE OLD NEW [OLD NEW ...]
 *       replace every occurrence (any alignment) of the 8-byte little-endian
 *       encoding of the decimal value OLD by that of NEW, in place; prints
 *       how many were replaced.  Used to rewrite a planted store's identity
 *       (device, inode, birth time) to the victim's without depending on
 *       the coord layout.
 *   store_util fnv PATH
 *       the FNV-1a-64 hash of PATH as 16 hex digits: the name the store of
 *       PATH gets in fs_versioned_store_dir on the code before issue 20
 *       ("sfio-<hash>.<base>.<id>"), so that planted stores are also planted
 *       where that code looks (a test that can fail there).
 *   store_util fill FILE
 *       write zeros to FILE until the file system is full (ENOSPC): makes a
 *       small tmpfs full for the recovery-under-ENOSPC case.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_common.h"

static int gen(int argc, char **argv)
{
    if (argc < 4) return 2;
    uint64_t size = strtoull(argv[3], NULL, 0);
    unsigned char *img = calloc(1, size ? size : 1);
    if (!img) return 1;
    for (int i = 4; i < argc; ++i) {
        unsigned tag;
        unsigned long long off, len;
        if (3 != sscanf(argv[i], "%u:%llu:%llu", &tag, &off, &len) || off + len > size) {
            fprintf(stderr, "store_util gen: bad segment %s\n", argv[i]);
            return 2;
        }
        st_fill(img + off, tag, off, (size_t) len);
    }
    FILE *f = fopen(argv[2], "w");
    if (!f || size != fwrite(img, 1, size, f) || 0 != fclose(f)) {
        perror(argv[2]);
        return 1;
    }
    free(img);
    return 0;
}

static int lockhold(int argc, char **argv)
{
    if (argc < 6) return 2;
    int fd = open(argv[2], O_RDWR | O_NOFOLLOW);
    if (fd < 0) { perror(argv[2]); return 1; }
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
                        .l_start = atoll(argv[3]), .l_len = atoll(argv[4]) };
    if (0 != fcntl(fd, F_OFD_SETLK, &fl)) { perror("F_OFD_SETLK"); return 1; }
    int r = open(argv[5], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (r < 0) { perror(argv[5]); return 1; }
    close(r);
    for (;;) pause();
}

static int patch(int argc, char **argv)
{
    if (argc < 5 || 0 != (argc - 3) % 2) return 2;
    int fd = open(argv[2], O_RDWR | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || 0 != fstat(fd, &st)) { perror(argv[2]); return 1; }
    unsigned char *b = malloc((size_t) st.st_size + 1);
    if (!b || st.st_size != pread(fd, b, (size_t) st.st_size, 0)) { perror("read"); return 1; }
    int n = 0;
    for (int a = 3; a + 1 < argc; a += 2) {
        uint64_t o = strtoull(argv[a], NULL, 0), w = strtoull(argv[a + 1], NULL, 0);
        unsigned char ob[8], wb[8];
        for (int i = 0; i < 8; ++i) { ob[i] = (unsigned char) (o >> (8 * i)); wb[i] = (unsigned char) (w >> (8 * i)); }
        for (off_t i = 0; i + 8 <= st.st_size; ++i) {
            if (0 == memcmp(b + i, ob, 8)) { memcpy(b + i, wb, 8); ++n; i += 7; }
        }
    }
    if (st.st_size != pwrite(fd, b, (size_t) st.st_size, 0)) { perror("write"); return 1; }
    close(fd);
    printf("%d\n", n);
    return 0;
}

static int fill(int argc, char **argv)
{
    if (argc < 3) return 2;
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) { perror(argv[2]); return 1; }
    static char z[4096];
    while (write(fd, z, sizeof(z)) > 0) { }
    while (write(fd, z, 1) > 0) { }
    close(fd);
    return 0;
}

static int fnv(int argc, char **argv)
{
    if (argc < 3) return 2;
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *) argv[2]; *p; ++p) h = (h ^ *p) * 0x100000001b3ull;
    printf("%016llx\n", (unsigned long long) h);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && 0 == strcmp(argv[1], "fnv")) return fnv(argc, argv);
    if (argc >= 2 && 0 == strcmp(argv[1], "gen")) return gen(argc, argv);
    if (argc >= 2 && 0 == strcmp(argv[1], "lockhold")) return lockhold(argc, argv);
    if (argc >= 2 && 0 == strcmp(argv[1], "patch")) return patch(argc, argv);
    if (argc >= 2 && 0 == strcmp(argv[1], "fill")) return fill(argc, argv);
    fprintf(stderr, "usage: store_util gen|lockhold|patch|fnv|fill ...\n");
    return 2;
}
