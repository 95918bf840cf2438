/*
 * sfio_path: the operations tables of the I/O paths (see header).
 */
#include "sfio_path.h"
#include "sfio_locks.h"

static int versions_write(int fd, const mca_common_sfio_path_t *p,
                          const mca_common_sfio_ioseg_t *segs, size_t nsegs, uint64_t *written_p)
{
    (void) fd;
    return mca_common_sfio_vstore_write(p->store, segs, nsegs, true, p->objects, written_p);
}

static int store_write(int fd, const mca_common_sfio_path_t *p,
                       const mca_common_sfio_ioseg_t *segs, size_t nsegs, uint64_t *written_p)
{
    (void) fd;
    return mca_common_sfio_vstore_write(p->store, segs, nsegs, false, p->objects, written_p);
}

static int store_read(int fd, const mca_common_sfio_path_t *p,
                      const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                      const mca_common_sfio_sieve_policy_t *policy,
                      mca_common_sfio_scratch_t *scratch, uint64_t *read_p)
{
    (void) fd;
    return mca_common_sfio_vstore_read(p->store, segs, nsegs, policy, scratch, read_p);
}

static int locked_write(int fd, const mca_common_sfio_path_t *p,
                        const mca_common_sfio_ioseg_t *segs, size_t nsegs, uint64_t *written_p)
{
    return mca_common_sfio_locked_write(fd, p->locker, p->coherence, p->lockmode, segs, nsegs,
                                        p->objects, p->pcache, written_p);
}

static int locked_read(int fd, const mca_common_sfio_path_t *p,
                       const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                       const mca_common_sfio_sieve_policy_t *policy,
                       mca_common_sfio_scratch_t *scratch, uint64_t *read_p)
{
    return mca_common_sfio_locked_read(fd, p->locker, p->coherence, p->lockmode, segs, nsegs,
                                       p->objects, p->pcache, policy, scratch, read_p);
}

/* Behind the gate: a write of one system call is atomic against the
 * others by the kernel's own serialization, so it only has to keep clear
 * of the locked accesses (reads, writes of several calls). */
static int gated_write(int fd, const mca_common_sfio_path_t *p,
                       const mca_common_sfio_ioseg_t *segs, size_t nsegs, uint64_t *written_p)
{
    bool plain = !p->coherence.flush_before_release && mca_common_sfio_gate_one_call(segs, nsegs);
    mca_common_sfio_gate_class_t cls = plain ? MCA_COMMON_SFIO_GATE_PLAIN
                                             : MCA_COMMON_SFIO_GATE_LOCKED;
    *written_p = 0;
    int rc = mca_common_sfio_gate_enter(p->gate, cls);
    if (0 != rc) {
        return rc;
    }
    rc = plain ? mca_common_sfio_posix_write_in_turn(fd, segs, nsegs, written_p)
               : locked_write(fd, p, segs, nsegs, written_p);
    int lrc = mca_common_sfio_gate_leave(p->gate, cls);
    return 0 != rc ? rc : lrc;
}

static int gated_read(int fd, const mca_common_sfio_path_t *p,
                      const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                      const mca_common_sfio_sieve_policy_t *policy,
                      mca_common_sfio_scratch_t *scratch, uint64_t *read_p)
{
    *read_p = 0;
    int rc = mca_common_sfio_gate_enter(p->gate, MCA_COMMON_SFIO_GATE_LOCKED);
    if (0 != rc) {
        return rc;
    }
    rc = locked_read(fd, p, segs, nsegs, policy, scratch, read_p);
    int lrc = mca_common_sfio_gate_leave(p->gate, MCA_COMMON_SFIO_GATE_LOCKED);
    return 0 != rc ? rc : lrc;
}

static int posix_write(int fd, const mca_common_sfio_path_t *p,
                       const mca_common_sfio_ioseg_t *segs, size_t nsegs, uint64_t *written_p)
{
    (void) p;
    return mca_common_sfio_posix_write_segs(fd, segs, nsegs, written_p);
}

static int posix_read(int fd, const mca_common_sfio_path_t *p,
                      const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                      const mca_common_sfio_sieve_policy_t *policy,
                      mca_common_sfio_scratch_t *scratch, uint64_t *read_p)
{
    (void) p;
    return mca_common_sfio_posix_read_segs(fd, segs, nsegs, policy, scratch, read_p);
}

const mca_common_sfio_path_ops_t mca_common_sfio_path_versions = {
    .name = "versions", .write = versions_write, .read = store_read,
};
const mca_common_sfio_path_ops_t mca_common_sfio_path_store = {
    .name = "store", .write = store_write, .read = store_read,
};
const mca_common_sfio_path_ops_t mca_common_sfio_path_locked = {
    .name = "locks", .write = locked_write, .read = locked_read,
};
const mca_common_sfio_path_ops_t mca_common_sfio_path_gated = {
    .name = "gate", .write = gated_write, .read = gated_read,
};
const mca_common_sfio_path_ops_t mca_common_sfio_path_posix = {
    .name = "posix", .write = posix_write, .read = posix_read,
};
