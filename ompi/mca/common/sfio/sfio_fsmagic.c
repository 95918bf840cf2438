/*
 * sfio_fsmagic: file systems by their magic (see header).
 */
#include "sfio_fsmagic.h"

#define SFIO_MAGIC_NFS 0x6969UL
#define SFIO_MAGIC_FUSE 0x65735546UL

/* statfs's f_type is a long whose upper half may carry a sign extension */
static unsigned long magic_of(long f_type)
{
    return (unsigned long) f_type & 0xffffffffUL;
}

bool mca_common_sfio_fs_is_nfs(long f_type)
{
    return SFIO_MAGIC_NFS == magic_of(f_type);
}

bool mca_common_sfio_fs_is_network(long f_type)
{
    switch (magic_of(f_type)) {
    case SFIO_MAGIC_NFS:
    case 0x0bd00bd0UL:    /* Lustre */
    case 0x47504653UL:    /* GPFS / Spectrum Scale */
    case 0x19830326UL:    /* BeeGFS */
    case 0x00c36400UL:    /* CephFS */
    case 0x20030528UL:    /* PVFS2 / OrangeFS */
    case 0xff534d42UL:    /* CIFS */
    case 0xfe534d42UL:    /* SMB2 */
    case 0x5346414fUL:    /* AFS */
        return true;
    default:
        return false;
    }
}

bool mca_common_sfio_fs_clients_cache(long f_type)
{
    unsigned long magic = magic_of(f_type);
    return SFIO_MAGIC_NFS == magic || SFIO_MAGIC_FUSE == magic;
}

bool mca_common_sfio_fs_serializes_writes(long f_type)
{
    switch (magic_of(f_type)) {
    case 0xef53UL:        /* ext2, ext3, ext4 */
    case 0x58465342UL:    /* XFS */
    case 0x9123683eUL:    /* Btrfs */
    case 0x01021994UL:    /* tmpfs */
    case 0x2fc12fc1UL:    /* ZFS */
        return true;
    default:
        return false;
    }
}
