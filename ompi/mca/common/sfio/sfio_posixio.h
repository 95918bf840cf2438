/*
 * sfio_posixio: the engine's POSIX data path.  Executes the plans of
 * sfio_iobatch with pwritev/preadv, retrying short transfers and EINTR.
 * Every system call on file data made by the suite's fbtl goes through here.
 */
#ifndef MCA_COMMON_SFIO_POSIXIO_H
#define MCA_COMMON_SFIO_POSIXIO_H

#include "sfio_export.h"

#include <stdbool.h>
#include <sys/types.h>
#include "sfio_iobatch.h"

/* Reusable buffer for sieved reads; zero-initialise, release with _fini. */
typedef struct mca_common_sfio_scratch_t {
    char  *buf;
    size_t size;
} mca_common_sfio_scratch_t;

void mca_common_sfio_scratch_fini(mca_common_sfio_scratch_t *scratch);

/* Requests in flight per process when one call has many segments: the
 * calling thread and up to depth - 1 helper threads each issue the batches
 * of a share of the segments.  On network storage every request pays a
 * round trip; one at a time, a call of n small pieces pays n of them.
 * 0 (auto): 8 for files on network storage (_storage_is_network with
 * mca_common_sfio_posix_storage), else 1;
 * 1: one request at a time.  Set once by the fbtl from its parameters. */
SFIO_EXPORT extern unsigned mca_common_sfio_posix_depth;
/* What kind of storage a file is on, for the automatic choices that
 * differ (fbtl_versioned_storage, fcoll_adaptive_storage): auto asks
 * statfs, which cannot tell a FUSE mount of remote storage or an
 * emulation. */
enum {
    MCA_COMMON_SFIO_STORAGE_AUTO = 0,
    MCA_COMMON_SFIO_STORAGE_LOCAL = 1,
    MCA_COMMON_SFIO_STORAGE_NETWORK = 2
};
/* fbtl_versioned_storage: the storage kind of the fbtl's and fs's
 * automatic choices (io_depth, atomic mode auto). */
SFIO_EXPORT extern int mca_common_sfio_posix_storage;
/* Whether the file open as fd is on network storage: storage when it says
 * local or network, else statfs (a file statfs cannot inspect counts as
 * network: the choices made for it are the safe ones there). */
bool mca_common_sfio_storage_is_network(int storage, int fd);

/* The magic of the file system holding fd (statfs), 0 when unknown. */
long mca_common_sfio_fs_type_of(int fd);

/* The coherence steps of a lock on a file system whose clients cache
 * (sfio_route's lock_coherence).  revalidate: this client's cached
 * attributes are fetched again from the server, and its cached pages
 * dropped if the file changed.  flush_segs: the dirty pages of segs reach
 * the server (not necessarily its disks).  0 or a negative errno. */
int mca_common_sfio_posix_revalidate(int fd);
int mca_common_sfio_posix_flush_segs(int fd, const mca_common_sfio_ioseg_t *segs, size_t nsegs);
/* Calls with fewer segments than this stay on the calling thread. */
SFIO_EXPORT extern size_t mca_common_sfio_posix_depth_min_segs;

/* Stops and joins the helper threads (before the code that runs them is
 * unloaded); the next pipelined call starts them again. */
void mca_common_sfio_posix_shutdown(void);

/* Writes every segment.  Returns 0 and the bytes written in *written_p, or
 * a negative errno (then *written_p holds the bytes written before the
 * failure). */
int mca_common_sfio_posix_write_segs(int fd, const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                     uint64_t *written_p);

/* As write_segs, on the calling thread alone: segments that follow each
 * other in the file, at most 1024 of them, go in one pwritev (more calls
 * only if the kernel writes short). */
int mca_common_sfio_posix_write_in_turn(int fd, const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                        uint64_t *written_p);

/* As write_segs and read_segs (no sieving), with up to the depth of
 * requests in flight however few the segments are: for callers whose
 * pieces are few but each costs a round trip (a fold's write-back and its
 * reads of other ranks' logs). */
int mca_common_sfio_posix_write_pieces(int fd, const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                       uint64_t *written_p);
int mca_common_sfio_posix_read_pieces(int fd, const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                      uint64_t *read_p);

/* Reads every segment, sieving where policy says so.  Bytes past end of
 * file are not counted.  Returns 0 and the bytes read in *read_p, or a
 * negative errno. */
int mca_common_sfio_posix_read_segs(int fd, const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                    const mca_common_sfio_sieve_policy_t *policy,
                                    mca_common_sfio_scratch_t *scratch, uint64_t *read_p);

/* Writes every segment as write_segs does, except the windows policy
 * sieves: each is read, the segments copied in, and written back whole.
 * Only for a caller holding, for the whole call, a lock on each window's
 * extent that every writer of those bytes takes (the holes are written
 * back as they were read).  Returns as write_segs. */
int mca_common_sfio_posix_write_segs_sieved(int fd, const mca_common_sfio_ioseg_t *segs,
                                            size_t nsegs,
                                            const mca_common_sfio_sieve_policy_t *policy,
                                            mca_common_sfio_scratch_t *scratch,
                                            uint64_t *written_p);

/* pwrite/pread of one buffer with retries; returns bytes transferred
 * (short only at end of file for reads) or a negative errno. */
ssize_t mca_common_sfio_posix_pwrite_full(int fd, const void *buf, size_t len, uint64_t offset);
ssize_t mca_common_sfio_posix_pread_full(int fd, void *buf, size_t len, uint64_t offset);

#endif
