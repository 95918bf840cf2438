/*
 * sfio_ompio_locksvc: the list-lock service of an open file (sfio_locksvc)
 * as the lock modes see it: opened at the collective point inside
 * MPI_File_open when the parameters ask for it (sfio_route decides), or
 * at the first set_atomicity(fh, 1) when the versioned store's service
 * did not start there; turned into the locker of the file's locked path,
 * closed at the file's close.  A service that cannot start leaves fcntl locks, said
 * at verbose level 1 (or always, when the service was asked for by name).
 */
#include "sfio_ompio_int.h"
#include "sfio_coord.h"
#include "sfio_locksvc.h"
#include "sfio_route.h"

int mca_common_sfio_lock_backend = MCA_COMMON_SFIO_LOCK_BACKEND_AUTO;
int mca_common_sfio_lock_atomic_mode = MCA_COMMON_SFIO_ATOMIC_AUTO;
int64_t mca_common_sfio_lock_wait_ms = 120000;
int64_t mca_common_sfio_lock_probe_ms = 1000;
int64_t mca_common_sfio_lock_dead_ms = 10000;

static void backend_entry(int i, int *value, const char **name, const char **help)
{
    *value = (int) mca_common_sfio_lock_backends[i].id;
    *name = mca_common_sfio_lock_backends[i].name;
    *help = mca_common_sfio_lock_backends[i].help;
}

int mca_common_sfio_lock_backend_register(const mca_base_component_t *c, int *storage)
{
    return mca_common_sfio_component_register_table(
        c, "lock_backend", "sfio_lock_backend",
        "Who takes the lock lists of the lock modes (listlock, rangelock, filelock, and auto "
        "without a store):",
        mca_common_sfio_lock_backend_count, backend_entry, MCA_COMMON_SFIO_LOCK_BACKEND_AUTO,
        OPAL_INFO_LVL_9, storage);
}

static int svc_acquire(void *ctx, const mca_common_sfio_rangelist_t *locks, bool exclusive)
{
    return mca_common_sfio_locksvc_acquire((mca_common_sfio_locksvc_t *) ctx, locks, exclusive);
}

static int svc_release(void *ctx, const mca_common_sfio_rangelist_t *locks)
{
    (void) locks;
    return mca_common_sfio_locksvc_release((mca_common_sfio_locksvc_t *) ctx);
}

int sfio_ompio_locksvc_open(ompio_file_t *fh, mca_common_sfio_file_t *f)
{
    /* the same answer on every rank: parameters, the store (agreed at fs
     * open), the fbtl (selected alike) and where the ranks run */
    bool ours = NULL != fh->f_fbtl_component &&
                0 == strcmp(fh->f_fbtl_component->mca_component_name, "versioned");
    if (!ours || fh->f_size < 2 || NULL != f->locksvc ||
        !mca_common_sfio_route_wants_locksvc(mca_common_sfio_lock_backend,
                                             mca_common_sfio_lock_atomic_mode,
                                             0 != (fh->f_amode & MPI_MODE_RDONLY),
                                             NULL != f->store ||
                                                 NULL != f->store_awaiting_service,
                                             mca_common_sfio_coord_spans_nodes(fh->f_comm))) {
        return MPI_SUCCESS;
    }
    mca_common_sfio_locksvc_config_t cfg = {
        .provider = NULL, .timeout_ms = mca_common_sfio_lock_wait_ms,
        .probe_ms = mca_common_sfio_lock_probe_ms, .dead_ms = mca_common_sfio_lock_dead_ms,
        .host = -1, .list_max = mca_common_sfio_lock_service_max_ranges,
        .max_overtakes = mca_common_sfio_lock_service_max_overtakes,
    };
    mca_common_sfio_locksvc_t *svc = NULL;
    int rc = mca_common_sfio_locksvc_open(fh->f_comm, &cfg, 0, &svc);
    const char *name = fh->f_filename ? fh->f_filename : "";
    if (0 != rc) {
        /* every rank has the same rc: all fall back alike */
        if (0 == fh->f_rank) {
            const char *why = mca_common_sfio_locksvc_why();
            int level = MCA_COMMON_SFIO_LOCK_BACKEND_SERVICE == mca_common_sfio_lock_backend ? 0 : 1;
            opal_output_verbose(level, mca_common_sfio_output,
                                "sfio: %s: no list-lock service (%s): lock modes use fcntl locks",
                                name, '\0' != why[0] ? why : strerror(-rc));
        }
        return MPI_SUCCESS;
    }
    f->locksvc = svc;
    f->locker = (mca_common_sfio_locker_t) {
        .name = "service", .max_ranges = mca_common_sfio_locksvc_max_ranges(svc),
        .acquire = svc_acquire, .release = svc_release, .ctx = svc,
    };
    f->route.valid = false;
    if (0 == fh->f_rank) {
        opal_output_verbose(1, mca_common_sfio_output,
                            "sfio: %s: lock modes use the list-lock service hosted by rank %d", name,
                            mca_common_sfio_locksvc_host(svc));
    }
    return MPI_SUCCESS;
}

int sfio_ompio_locksvc_close(mca_common_sfio_file_t *f)
{
    if (NULL == f->locksvc) {
        return MPI_SUCCESS;
    }
    /* fs close: after OMPIO's barrier, no rank locks again */
    int rc = mca_common_sfio_locksvc_close_quiesced(f->locksvc);
    f->locksvc = NULL;
    f->route.valid = false;
    return 0 == rc ? MPI_SUCCESS : MPI_ERR_OTHER;
}
