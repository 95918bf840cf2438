/*
 * sfio_vstore_int.h: what the versioned store's source files share (not
 * an interface of the engine): the coordination file's layout, where a
 * file's stores live and how they are opened safely.
 *
 * A store is the directory "<place>/.sfio-store.<inode hex>.<32 random
 * hex>" of one user (mode 0700), holding "coord" (this layout, mapped by
 * the ranks of one node), "rec.<rank>" and "log.<rank>" (0600).  <place>
 * is the directory of the file's real path, or "<store_dir>/sfio-store-
 * <euid>" (0700) with fs_versioned_store_dir.  The name is found again
 * by inode; the coordination file says whose file it is made for (device,
 * inode, birth time, owner) and what the group last left in the file
 * (mtime), and recovery applies it only to that file, unchanged since.
 */
#ifndef MCA_COMMON_SFIO_VSTORE_INT_H
#define MCA_COMMON_SFIO_VSTORE_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sfio_util.h"

#define SFIO_COORD_MAGIC   0x32444f4f43534653ull   /* "SFSCOOD2" */
#define SFIO_COORD_LAYOUT  3u
#define SFIO_STORE_PREFIX  ".sfio-store."
#define SFIO_BTIME_UNKNOWN INT64_MIN

typedef struct sfio_coord_rank_t {
    _Atomic uint64_t rec_tail;   /* bytes of valid records in rec.<rank> */
    _Atomic uint64_t pending;    /* version being published, CLAIMING, or 0 */
    _Atomic int64_t pid;
    _Atomic uint64_t rec_head;   /* records before this offset are folded (compaction) */
    _Atomic int64_t flat_writing_ns;   /* realtime ns an in-place write began; 0: none */
    _Atomic uint64_t log_head;   /* log bytes before this are folded (compaction) */
    _Atomic int64_t flat_written_ns;   /* realtime ns this rank's last file write ended */
    _Atomic uint32_t in_access;  /* 1 while the rank is in a data-path call */
    char pad[4];
} sfio_coord_rank_t;

/* The flat file a store is made for. */
typedef struct sfio_ident_t {
    uint64_t dev, ino;
    int64_t btime_ns;            /* SFIO_BTIME_UNKNOWN when the file system has none */
    uint32_t uid;                /* the store's owner (the user that made it) */
    uint32_t fs_type;            /* statfs f_type of the flat file */
} sfio_ident_t;

typedef struct sfio_coord_t {
    uint64_t magic;              /* written last by the creator */
    uint32_t layout;
    uint32_t nranks;
    sfio_ident_t ident;
    char pad0[16];
    _Atomic uint64_t next_version;   /* last version handed out */
    char pad1[56];
    _Atomic uint64_t published;      /* every version <= this is published */
    char pad2[56];
    _Atomic uint64_t folded;         /* every version <= this is in the flat file */
    char pad3[56];
    _Atomic uint64_t attached;       /* ranks that mapped the store and not yet left */
    char pad4[56];
    _Atomic int64_t flat_mtime_ns;   /* the file's mtime when the store was made */
    _Atomic uint64_t compactions;    /* compactions so far (each clears the indexes) */
    _Atomic uint32_t compacting;     /* rank + 1 of the rank compacting, 0: none */
    char pad5[44];
    sfio_coord_rank_t rank[];
} sfio_coord_t;

static inline size_t sfio_coord_bytes(int nranks)
{
    return sizeof(sfio_coord_t) + (size_t) nranks * sizeof(sfio_coord_rank_t);
}

/* Byte ranges of the coordination file used as locks (never data):
 *  - SFIO_LIVE_BYTE: every attached rank holds a read lock while the
 *    store is open; recovery takes a write lock;
 *  - SFIO_WINDOW_BYTE(r): rank r holds a write lock while its fold writes
 *    windows whole (see fold_domain).
 * OFD locks belong to the open file, not the process
 * (mca_common_sfio_ofd_lock). */
#define SFIO_LIVE_BYTE      ((off_t) 0)
#define SFIO_WINDOW_BYTE(r) ((off_t) 1 + (off_t) (r))

/* ---- identity ---- */

/* The identity of the open file fd, owner = this process's euid. */
int sfio_ident_of_fd(int fd, sfio_ident_t *ident_p);
int64_t sfio_mtime_ns_of_fd(int fd);   /* -errno on failure */
int64_t sfio_now_ns(void);

/* ---- places ---- */

/* Where stores of the file open as fd (named path) live: places[0] gets
 * new stores, places[1] (may be NULL) is searched too.  store_dir NULL or
 * "": beside the file.  A store_dir whose private subdirectory cannot be
 * made safe is not used: *warn_p then says why (static string) and the
 * store goes beside the file.  Free with sfio_places_free. */
int sfio_places(const char *path, int fd, const char *store_dir, char *places[2],
                const char **warn_p);
void sfio_places_free(char *places[2]);

/* "<place>/.sfio-store.<ino>." */
char *sfio_store_prefix(uint64_t ino);

/* A fresh, unguessable store name for inode ino. */
int sfio_store_name(uint64_t ino, char *buf, size_t len);

/* Copies len bytes from from_fd at from_off to to_fd at to_off through
 * buf (bufsize bytes): a logged piece into the flat file.  Returns 0 or
 * a negative errno (-EIO: the source ended early). */
int sfio_copy_range(int from_fd, uint64_t from_off, int to_fd, uint64_t to_off, uint64_t len,
                    char *buf, size_t bufsize);

char *sfio_path_join(const char *dir, const char *name);
char *sfio_rank_file(const char *dir, const char *kind, int rank);

/* ---- safe opens ---- */

/* Whether dir is a directory (not a symlink) of this user with no access
 * for others.  Returns 0, or -errno with *why_p naming the problem. */
int sfio_dir_private(const char *dir, const char **why_p);

/* open() of a store file: never follows a symlink; an existing file must
 * be a regular file of this user with one link.  flags as for open().
 * Returns the descriptor or -errno (-EPERM when not the user's, -ELOOP
 * for a symlink); *why_p says which check failed. */
int sfio_open_store_file(const char *path, int flags, const char **why_p);

#endif
