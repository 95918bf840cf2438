/*
 * sfio_fsmagic: what a file system's magic (statfs's f_type) says about
 * it, for the choices that differ by file system.  Pure: the caller asks
 * statfs (mca_common_sfio_fs_type_of).
 */
#ifndef MCA_COMMON_SFIO_FSMAGIC_H
#define MCA_COMMON_SFIO_FSMAGIC_H

#include <stdbool.h>

/* NFS, whose client flushes at an fcntl unlock and revalidates at a lock. */
bool mca_common_sfio_fs_is_nfs(long f_type);

/* A network file system (NFS, Lustre, GPFS, BeeGFS, CephFS,
 * PVFS2/OrangeFS, CIFS/SMB2, AFS): the storage kind's automatic
 * choices. */
bool mca_common_sfio_fs_is_network(long f_type);

/* Clients that cache a file's pages and attributes without coherence
 * between them (NFS, FUSE): what one client wrote reaches another only
 * after the writer flushed it to the server and the reader revalidated
 * what it cached. */
bool mca_common_sfio_fs_clients_cache(long f_type);

/* True for local file systems known to make a write of one system call
 * atomic against every other write of the file (ext2/3/4, XFS and Btrfs
 * hold the inode lock across a buffered write, tmpfs too, ZFS a range
 * lock): what auto's gate relies on (sfio_gate). */
bool mca_common_sfio_fs_serializes_writes(long f_type);

#endif
