/*
 * sfio_ompio_hooks: what the suite puts in front of OMPIO: the cycle-size
 * callback in atomic mode, the collective point after set_view (private
 * objects), the fcoll proxy of atomic collective calls, set_atomicity,
 * the fs proxy over a stock fs, and the fs/fbtl module init and finalize.
 */
#include "sfio_ompio_int.h"
#include "sfio_sharedfp.h"

/* ------------------------------------------------------------------ */
/* Atomic-call boundary: the cycle-size wrapper                       */
/* ------------------------------------------------------------------ */

/* Files of this process whose parameter callback is wrapped. */
static struct {
    ompio_file_t **files;
    int count, capacity;
    mca_common_ompio_get_mca_parameter_value_fn_t ompio_get;
} tracked;

static bool any_tracked_atomic(void)
{
    for (int i = 0; i < tracked.count; ++i) {
        if (tracked.files[i]->f_atomicity) {
            return true;
        }
    }
    return false;
}

static int sfio_get_mca_parameter_value(char *name, int name_length)
{
    if (0 == strncmp(name, "cycle_buffer_size", (size_t) name_length) && any_tracked_atomic()) {
        return SFIO_OMPIO_CYCLE_ONE_CALL;   /* one fbtl call per MPI call, both series */
    }
    return tracked.ompio_get(name, name_length);
}

int sfio_ompio_track(ompio_file_t *fh)
{
    if (sfio_get_mca_parameter_value == fh->f_get_mca_parameter_value) {
        return OMPI_SUCCESS;
    }
    if (tracked.count == tracked.capacity) {
        int cap = tracked.capacity ? 2 * tracked.capacity : 16;
        ompio_file_t **files = realloc(tracked.files, (size_t) cap * sizeof(*files));
        if (NULL == files) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        tracked.files = files;
        tracked.capacity = cap;
    }
    if (NULL == tracked.ompio_get) {
        tracked.ompio_get = fh->f_get_mca_parameter_value;
    }
    tracked.files[tracked.count++] = fh;
    fh->f_get_mca_parameter_value = sfio_get_mca_parameter_value;
    return OMPI_SUCCESS;
}

void sfio_ompio_untrack(ompio_file_t *fh)
{
    for (int i = 0; i < tracked.count; ++i) {
        if (fh == tracked.files[i]) {
            tracked.files[i] = tracked.files[--tracked.count];
            fh->f_get_mca_parameter_value = tracked.ompio_get;
            break;
        }
    }
    if (0 == tracked.count) {
        free(tracked.files);
        tracked.files = NULL;
        tracked.capacity = 0;
    }
}

/* ------------------------------------------------------------------ */
/* The collective point after every set_view (see sfio_ompio.h)        */
/* ------------------------------------------------------------------ */

/* Logan and Dickens' objects: gathers every rank's view and derives which bytes only one
 * rank can access.  Every rank calls it with the same agreed `ok` (else
 * nobody gathers).  On failure the objects stay invalid: all shared. */
static int compute_objects(ompio_file_t *fh, mca_common_sfio_objects_t *objects,
                           size_t max_ranges, uint64_t *myblocks, int mine)
{
    ompi_communicator_t *comm = fh->f_comm;
    int n = fh->f_size, rc;
    uint64_t mymeta[3] = { (uint64_t) mine, (uint64_t) fh->f_disp, (uint64_t) fh->f_view_extent };
    uint64_t *meta = malloc((size_t) n * 3 * sizeof(uint64_t));
    int *counts = malloc((size_t) n * sizeof(int)), *displs = malloc((size_t) n * sizeof(int));
    uint64_t *blocks = NULL;
    mca_common_sfio_view_t *views = NULL;

    mca_common_sfio_objects_destroy(objects);
    mca_common_sfio_objects_init(objects);
    /* allocation of meta was agreed on by the caller's allreduce */
    rc = comm->c_coll->coll_allgather(mymeta, 3, MPI_UINT64_T, meta, 3, MPI_UINT64_T, comm,
                                      comm->c_coll->coll_allgather_module);
    size_t total = 0;
    for (int r = 0; OMPI_SUCCESS == rc && r < n; ++r) {
        counts[r] = (int) meta[3 * r];
        displs[r] = (int) total;
        total += (size_t) counts[r];
    }
    if (OMPI_SUCCESS == rc && total > (size_t) INT32_MAX) {
        rc = OMPI_ERR_NOT_SUPPORTED;   /* same verdict everywhere: same totals */
    }
    if (OMPI_SUCCESS == rc) {
        blocks = malloc((total ? total : 1) * sizeof(uint64_t));
        views = malloc((size_t) n * sizeof(*views));
        /* allgatherv must be entered by all; a local allocation failure
         * only spoils this rank's result (objects stay invalid here, which
         * is safe: this rank then versions everything it writes) */
        rc = comm->c_coll->coll_allgatherv(myblocks, mine, MPI_UINT64_T,
                                           blocks ? blocks : myblocks, counts, displs,
                                           MPI_UINT64_T, comm,
                                           comm->c_coll->coll_allgatherv_module);
        if (OMPI_SUCCESS == rc && (!blocks || !views)) {
            rc = OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    if (OMPI_SUCCESS == rc) {
        for (int r = 0; r < n; ++r) {
            views[r] = (mca_common_sfio_view_t) {
                .disp = meta[3 * r + 1], .extent = meta[3 * r + 2],
                .blocks = (const mca_common_sfio_range_t *) (blocks + displs[r]),
                .nblocks = (size_t) counts[r] / 2,
            };
        }
        /* Pure and deterministic: every rank derives the same objects, at
         * the first access that needs them (objects_resolve), so that a
         * file never written in atomic mode pays only this allgather. */
        mca_common_sfio_objects_defer(objects, views, (size_t) n, blocks, max_ranges);
        views = NULL;
        blocks = NULL;
    }
    free(counts);
    free(displs);
    free(meta);
    free(blocks);
    free(views);
    return rc;
}

/* This rank's view as (offset, length) pairs for compute_objects, in
 * *mine values (malloc'd; NULL: out of memory). */
static uint64_t *view_blocks(const ompio_file_t *fh, int *mine)
{
    *mine = (int) fh->f_iov_count * 2;
    uint64_t *b = malloc((size_t) (*mine ? *mine : 1) * sizeof(uint64_t));
    for (int i = 0; NULL != b && i < *mine / 2; ++i) {
        b[2 * i] = (uint64_t) (intptr_t) fh->f_decoded_iov[i].iov_base;
        b[2 * i + 1] = fh->f_decoded_iov[i].iov_len;
    }
    return b;
}

/* Collective: the objects of the current views, for a file that turns
 * atomic for the first time (set_view left them while no rank could be
 * atomic).  Failure leaves them invalid: every byte shared. */
static void objects_at_first_atomic(ompio_file_t *fh, mca_common_sfio_file_t *f)
{
    int mine = 0;
    uint64_t *myblocks = view_blocks(fh, &mine);
    int nomem = NULL == myblocks;
    int rc = fh->f_comm->c_coll->coll_allreduce(MPI_IN_PLACE, &nomem, 1, MPI_INT, MPI_MAX,
                                                fh->f_comm,
                                                fh->f_comm->c_coll->coll_allreduce_module);
    if (OMPI_SUCCESS != rc || nomem ||
        OMPI_SUCCESS != compute_objects(fh, &f->objects, f->objects_max_ranges, myblocks, mine)) {
        mca_common_sfio_objects_destroy(&f->objects);
        mca_common_sfio_objects_init(&f->objects);
    }
    free(myblocks);
}

/* The objects, computed now if set_view deferred them; NULL when unknown
 * (every byte shared).  Called under OMPIO's per-file serialisation. */
static const mca_common_sfio_objects_t *resolved_objects(mca_common_sfio_objects_t *objects)
{
    int orc = mca_common_sfio_objects_resolve(objects);
    if (0 != orc) {
        opal_output_verbose(1, mca_common_sfio_output,
                            "sfio: views too complex to intersect (%s): every byte is shared",
                            strerror(-orc));
    }
    return objects->valid ? objects : NULL;
}

/* A collective atomic access runs as one independent access per rank,
 * whose failure io/ompio would drop (and a short count on one rank only
 * would leave the others believing all went well): every rank returns
 * the worst outcome of the group. */
static int agree_collective(ompio_file_t *fh, int rc)
{
    /* the fbtl's own class (no space, ...) first: a failed call says only
     * OMPI_ERROR (negative, which MAX would lose) or MPI_ERR_OTHER */
    int err = sfio_ompio_take_unreported(fh);
    if (0 == err && MPI_SUCCESS != rc) {
        err = rc > 0 && rc <= MPI_ERR_LASTCODE ? rc : MPI_ERR_IO;
    }
    int all = err;
    int crc = fh->f_comm->c_coll->coll_allreduce(&err, &all, 1, MPI_INT, MPI_MAX, fh->f_comm,
                                                 fh->f_comm->c_coll->coll_allreduce_module);
    return OMPI_SUCCESS != crc ? crc : all;
}

static int atomic_write_all(ompio_file_t *fh, const void *buf, int count,
                            struct ompi_datatype_t *datatype, ompi_status_public_t *status)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    /* Stock fcoll components do not check: every rank must refuse alike. */
    if (fh->f_amode & MPI_MODE_RDONLY) {
        return MPI_ERR_READ_ONLY;
    }
    if (NULL == f || NULL == f->fcoll_real || sfio_ompio_group_atomic(fh, f)) {
        /* One atomic write per rank: versions (or locks) order the group. */
        return agree_collective(fh, mca_common_ompio_file_write(fh, buf, count, datatype, status));
    }
    return f->fcoll_real->fcoll_file_write_all(fh, buf, count, datatype, status);
}

static int atomic_read_all(ompio_file_t *fh, void *buf, int count,
                           struct ompi_datatype_t *datatype, ompi_status_public_t *status)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (NULL == f || NULL == f->fcoll_real || sfio_ompio_group_atomic(fh, f)) {
        /* Aggregators would read a rank's data in several snapshots. */
        return agree_collective(fh, mca_common_ompio_file_read(fh, buf, count, datatype, status));
    }
    return f->fcoll_real->fcoll_file_read_all(fh, buf, count, datatype, status);
}

static int atomic_iwrite_all(ompio_file_t *fh, const void *buf, int count,
                             struct ompi_datatype_t *datatype, ompi_request_t **request)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (fh->f_amode & MPI_MODE_RDONLY) {
        return MPI_ERR_READ_ONLY;
    }
    if (NULL == f || NULL == f->fcoll_real || sfio_ompio_group_atomic(fh, f) ||
        NULL == f->fcoll_real->fcoll_file_iwrite_all) {
        return mca_common_ompio_file_iwrite(fh, buf, count, datatype, request);
    }
    return f->fcoll_real->fcoll_file_iwrite_all(fh, buf, count, datatype, request);
}

static int atomic_iread_all(ompio_file_t *fh, void *buf, int count,
                            struct ompi_datatype_t *datatype, ompi_request_t **request)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (NULL == f || NULL == f->fcoll_real || sfio_ompio_group_atomic(fh, f) ||
        NULL == f->fcoll_real->fcoll_file_iread_all) {
        return mca_common_ompio_file_iread(fh, buf, count, datatype, request);
    }
    return f->fcoll_real->fcoll_file_iread_all(fh, buf, count, datatype, request);
}

static void wrap_fcoll(ompio_file_t *fh, mca_common_sfio_file_t *f)
{
    if (NULL == fh->f_fcoll || fh->f_fcoll == &f->fcoll_proxy) {
        return;
    }
    f->fcoll_real = fh->f_fcoll;
    f->fcoll_proxy = *fh->f_fcoll;
    f->fcoll_proxy.fcoll_file_write_all = atomic_write_all;
    f->fcoll_proxy.fcoll_file_read_all = atomic_read_all;
    f->fcoll_proxy.fcoll_file_iwrite_all = atomic_iwrite_all;
    f->fcoll_proxy.fcoll_file_iread_all = atomic_iread_all;
    fh->f_fcoll = &f->fcoll_proxy;
}

/* Runs at the end of every set_view (and MPI_File_seek_shared), on every
 * rank: put the fcoll proxy in front of the fcoll OMPIO just selected and,
 * with a versioned store, fold the versions written under the old views
 * and derive the new views' private bytes.  Then does the seek it stands
 * in for. */
static int collective_point_seek(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE offset, int whence)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (NULL == f || NULL == f->sharedfp_real) {
        return MPI_ERR_INTERN;
    }
    wrap_fcoll(fh, f);
    mca_common_sfio_vstore_t *store = f->store;
    /* private objects (Logan and Dickens): for the versioned store, or over a stock fs for
     * fbtl/versioned's list locks */
    bool want_objects = f->private_objects;
    mca_common_sfio_objects_t *objects = &f->objects;
    size_t max_ranges = f->objects_max_ranges;
    /* The first point is OMPIO's default view inside MPI_File_open: every
     * rank has the same view (all bytes shared) and nothing is written.
     * The test is the same on every rank. */
    uint64_t nth = f->set_views++;
    if (0 == nth) {
        (void) sfio_ompio_locksvc_open(fh, f);
        if (mca_common_sfio_sharedfp_seek == f->sharedfp_real->sharedfp_seek) {
            /* the suite's shared pointer was made at 0 just before (an
             * append open moves it after): the seek's two collectives
             * would change nothing */
            return MPI_SUCCESS;
        }
    }
    if (nth > 0) {
        /* cached bytes were private under the views that end here */
        int prc = mca_common_sfio_pcache_flush(fh, &f->pcache);
        if (MPI_SUCCESS != prc) {
            return prc;
        }
    }
    /* While no rank can have been atomic there is nothing to fold, and
     * the objects wait for the first set_atomicity(1), a collective point
     * of its own (a program that sets many views, as HDF5 does for every
     * dataset, pays no gather for them).  The test is the same on every
     * rank. */
    bool ever = sfio_ompio_atomic_ever(f);
    if (!ever && want_objects && nth > 0) {
        mca_common_sfio_objects_destroy(objects);
        mca_common_sfio_objects_init(objects);
        f->objects_stale = true;
    }
    if ((NULL != store || want_objects) && nth > 0 && ever) {
        ompi_communicator_t *comm = fh->f_comm;
        int mine = 0;
        uint64_t *myblocks = want_objects ? view_blocks(fh, &mine) : malloc(sizeof(uint64_t));
        /* One allreduce: is there anything to fold (each rank knows its own
         * published versions), and can everyone gather the views?  It is
         * also the barrier the fold needs. */
        mca_common_sfio_vstore_stats_t st = { 0 };
        int crc = 0;   /* under the new views others may read what this rank put in place */
        if (NULL != store) {
            mca_common_sfio_vstore_stats(store, &st);
            crc = mca_common_sfio_vstore_flush_flat(store);
        }
        int flags[2] = { NULL != store && st.versions > f->versions_at_fold, NULL == myblocks };
        int rc = comm->c_coll->coll_allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, comm,
                                              comm->c_coll->coll_allreduce_module);
        if (OMPI_SUCCESS == rc && flags[0]) {
            int frc = mca_common_sfio_vstore_fold(store, false, true);
            if (0 != frc) {
                rc = mca_common_sfio_errno_to_mpi(-frc);
            }
            f->versions_at_fold = st.versions;
        }
        if (OMPI_SUCCESS == rc && NULL != store) {
            /* a fold that wrote back has revalidated already */
            mca_common_sfio_vstore_stats_t after;
            mca_common_sfio_vstore_stats(store, &after);
            if (0 == crc && after.flat_revalidations == st.flat_revalidations) {
                crc = mca_common_sfio_vstore_revalidate_flat(store);
            }
            rc = 0 != crc ? mca_common_sfio_errno_to_mpi(-crc) : rc;
        }
        if (OMPI_SUCCESS == rc && want_objects && !flags[1]) {
            if (OMPI_SUCCESS != compute_objects(fh, objects, max_ranges, myblocks, mine)) {
                mca_common_sfio_objects_destroy(objects);
                mca_common_sfio_objects_init(objects);
            }
        }
        free(myblocks);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
    return f->sharedfp_real->sharedfp_seek(fh, offset, whence);
}

void sfio_ompio_hooks_install_at_open(mca_common_sfio_file_t *f)
{
    ompio_file_t *fh = f->fh;
    /* with or without a store: a change of atomicity is also where
     * sieved writes need every rank to have finished the old mode's */
    (void) sfio_ompio_hooks_wrap_set_atomicity(f);
    if (NULL == fh->f_sharedfp) {
        opal_output_verbose(1, mca_common_sfio_output,
                            "sfio: %s has no shared-file-pointer module: set_view is not seen, so "
                            "every byte counts as shared and collective atomic accesses go "
                            "through the stock fcoll", fh->f_filename ? fh->f_filename : "");
        return;
    }
    if (fh->f_sharedfp != &f->sharedfp_proxy) {
        f->sharedfp_real = fh->f_sharedfp;
        f->sharedfp_proxy = *fh->f_sharedfp;
        f->sharedfp_proxy.sharedfp_seek = collective_point_seek;
        fh->f_sharedfp = &f->sharedfp_proxy;
    }
}

/* ------------------------------------------------------------------ */
/* MPI_File_set_atomicity                                             */
/* ------------------------------------------------------------------ */

/* io/ompio tells neither fs nor fbtl when atomic mode begins.  MPI calls
 * the io module through the copy of its function table in the file's
 * ompi_file_t, so the suite puts its own set_atomicity in that copy (the
 * module's own table stays as it is).  Atomic mode beginning is the
 * collective point where the versioned store's service joins across
 * nodes, and where the store's fresh bytes start past the file's size. */
static int sfio_set_atomicity(struct ompi_file_t *file, int flag)
{
    mca_common_ompio_data_t *data = (mca_common_ompio_data_t *) file->f_io_selected_data;
    mca_common_sfio_file_t *f = NULL != data ? mca_common_sfio_file_of(&data->ompio_fh) : NULL;
    if (NULL == f || NULL == f->set_atomicity_real) {
        return MPI_ERR_INTERN;
    }
    ompio_file_t *fh = f->fh;
    bool join = false;
    if (NULL != f->store_awaiting_service) {
        /* Every rank must take part in the join or none: agree on the
         * flag first (io/ompio fails only the ranks whose flag differs
         * from rank 0's). */
        int v[2] = { flag ? 1 : 0, flag ? 0 : 1 };
        int rc = fh->f_comm->c_coll->coll_allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX,
                                                    fh->f_comm,
                                                    fh->f_comm->c_coll->coll_allreduce_module);
        join = OMPI_SUCCESS == rc && 1 == v[0] && 0 == v[1];
    }
    /* before io/ompio's own call: Open MPI 5.0's asks the fbtl whether
     * the file can be atomic, which needs the store joined */
    if (join) {
        sfio_ompio_fs_store_join(fh, f);
    }
    bool was_atomic = f->atomic_root;
    int rc = f->set_atomicity_real(file, flag);
    /* io/ompio broadcasts rank 0's flag and fails the ranks whose flag
     * differs (an erroneous program, but the call returns): a rank that
     * failed saw rank 0 ask for the other flag, and every rank that
     * succeeded took rank 0's.  So every rank knows rank 0's flag, and
     * decides alike from it whether to enter a collective below. */
    f->atomic_root = OMPI_SUCCESS == rc ? 0 != flag : 0 == flag;
    if (join || f->atomic_root) {
        f->atomic_ever = true;
    }
    if (f->atomic_ever && f->objects_stale) {
        /* the same on every rank: rank 0's flag made atomic_ever */
        f->objects_stale = false;
        objects_at_first_atomic(fh, f);
    }
    if (OMPI_SUCCESS == rc && flag && NULL != f->store) {
        mca_common_sfio_vstore_floor_at_size(f->store);
    }
    (void) sfio_ompio_gate_open(fh, f);
    /* A sieved atomic write rewrites the holes of its extent under a lock
     * every atomic writer takes (or, behind auto's gate, while no one-call
     * writer is inside); a non-atomic write does neither.  So where
     * writes may sieve, no rank starts writing in the new mode before
     * every rank has finished writing in the old one. */
    if (was_atomic != f->atomic_root && mca_common_sfio_lock_write_sieve.enabled) {
        int brc = fh->f_comm->c_coll->coll_barrier(fh->f_comm,
                                                   fh->f_comm->c_coll->coll_barrier_module);
        rc = OMPI_SUCCESS != rc ? rc : brc;
    }
    return rc;
}

bool sfio_ompio_hooks_wrap_set_atomicity(mca_common_sfio_file_t *f)
{
    ompio_file_t *fh = f->fh;
    /* OMPIO's internal files (a sharedfp component's) have no ompi_file_t
     * of their own; a user's handle is the one its io data points back to */
    struct ompi_file_t *file = fh->f_fh;
    if (NULL != f->io_file || (fh->f_flags & OMPIO_SHAREDFP_IS_SET) || NULL == file ||
        NULL == file->f_io_selected_data ||
        &((mca_common_ompio_data_t *) file->f_io_selected_data)->ompio_fh != fh ||
        NULL == file->f_io_selected_module.v2_0_0.io_module_file_set_atomicity) {
        return false;
    }
    f->io_file = file;
    f->set_atomicity_real = file->f_io_selected_module.v2_0_0.io_module_file_set_atomicity;
    file->f_io_selected_module.v2_0_0.io_module_file_set_atomicity = sfio_set_atomicity;
    return true;
}

void sfio_ompio_hooks_remove_at_close(mca_common_sfio_file_t *f)
{
    ompio_file_t *fh = f->fh;
    if (NULL != f->io_file && NULL != f->set_atomicity_real &&
        sfio_set_atomicity == f->io_file->f_io_selected_module.v2_0_0.io_module_file_set_atomicity) {
        f->io_file->f_io_selected_module.v2_0_0.io_module_file_set_atomicity = f->set_atomicity_real;
    }
    f->io_file = NULL;
    f->set_atomicity_real = NULL;
    if (NULL != f->sharedfp_real && fh->f_sharedfp == &f->sharedfp_proxy) {
        fh->f_sharedfp = f->sharedfp_real;
    }
    if (NULL != f->fcoll_real && fh->f_fcoll == &f->fcoll_proxy) {
        fh->f_fcoll = f->fcoll_real;
    }
    f->sharedfp_real = NULL;
    f->fcoll_real = NULL;
}

/* The fs proxy over a stock fs: the state of fh with the real fs module,
 * or NULL. */
static mca_common_sfio_file_t *over_stock_fs(const ompio_file_t *fh)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    return NULL != f && NULL != f->fs_real ? f : NULL;
}

static int hooked_fs_open(struct ompi_communicator_t *comm, const char *filename, int amode,
                          struct opal_info_t *info, ompio_file_t *fh)
{
    mca_common_sfio_file_t *f = over_stock_fs(fh);
    if (NULL == f) {
        return MPI_ERR_INTERN;
    }
    int rc = f->fs_real->fs_file_open(comm, filename, amode, info, fh);
    if (OMPI_SUCCESS == rc) {
        sfio_ompio_hooks_install_at_open(f);
    }
    return rc;
}

static int hooked_fs_close(ompio_file_t *fh)
{
    mca_common_sfio_file_t *f = over_stock_fs(fh);
    if (NULL == f) {
        return MPI_ERR_INTERN;
    }
    int frc = mca_common_sfio_pcache_flush(fh, &f->pcache);
    int lrc = sfio_ompio_locksvc_close(f);
    frc = MPI_SUCCESS != frc ? frc : lrc;
    mca_fs_base_module_file_close_fn_t real_close = f->fs_real->fs_file_close;
    sfio_ompio_hooks_remove_at_close(f);
    fh->f_fs = f->fs_real;   /* OMPIO unselects the fs right after */
    int rc = real_close(fh);
    return MPI_SUCCESS != frc ? frc : rc;
}

static int hooked_fs_sync(ompio_file_t *fh)
{
    mca_common_sfio_file_t *f = over_stock_fs(fh);
    if (NULL == f) {
        return MPI_ERR_INTERN;
    }
    int rc = mca_common_sfio_pcache_flush(fh, &f->pcache);
    if (MPI_SUCCESS == rc) {
        rc = f->fs_real->fs_file_sync(fh);
    }
    if (MPI_SUCCESS == rc) {
        int lost = sfio_ompio_take_unreported(fh);   /* an earlier write's error io/ompio dropped */
        rc = 0 != lost ? lost : rc;
    }
    return rc;
}

static int hooked_fs_set_size(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE size)
{
    mca_common_sfio_file_t *f = over_stock_fs(fh);
    if (NULL == f) {
        return MPI_ERR_INTERN;
    }
    int rc = mca_common_sfio_pcache_flush(fh, &f->pcache);
    return MPI_SUCCESS != rc ? rc : f->fs_real->fs_file_set_size(fh, size);
}

int mca_common_sfio_fs_module_init(ompio_file_t *fh)
{
    return NULL != sfio_ompio_file_new(fh, true) ? OMPI_SUCCESS : OMPI_ERR_OUT_OF_RESOURCE;
}

void mca_common_sfio_fs_module_finalize(ompio_file_t *fh)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (NULL != f && f->served_by_fs) {   /* an open that failed before fs close */
        sfio_ompio_hooks_remove_at_close(f);
        sfio_ompio_untrack(fh);
        sfio_ompio_file_free(f);
    }
}

int mca_common_sfio_fbtl_module_init(ompio_file_t *fh)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if ((NULL != f && f->served_by_fs) || NULL == fh->f_fs) {
        return OMPI_SUCCESS;   /* fs/versioned hooks the file itself */
    }
    if (NULL == (f = sfio_ompio_file_new(fh, false))) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    /* see set_view, sync and close through a copy of the stock fs module
     * whose open installs the other proxies */
    f->fs_real = fh->f_fs;
    f->fs_proxy = *fh->f_fs;
    f->fs_proxy.fs_file_open = hooked_fs_open;
    f->fs_proxy.fs_file_close = hooked_fs_close;
    f->fs_proxy.fs_file_sync = hooked_fs_sync;
    f->fs_proxy.fs_file_set_size = hooked_fs_set_size;
    fh->f_fs = &f->fs_proxy;
    int rc = sfio_ompio_track(fh);
    if (OMPI_SUCCESS != rc) {
        sfio_ompio_file_free(f);
    }
    return rc;
}

void mca_common_sfio_fbtl_module_finalize(ompio_file_t *fh)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (NULL != f && !f->served_by_fs) {
        sfio_ompio_untrack(fh);
        sfio_ompio_file_free(f);
    }
}

const mca_common_sfio_objects_t *mca_common_sfio_file_objects(mca_common_sfio_file_t *f)
{
    return (NULL != f && f->private_objects) ? resolved_objects(&f->objects) : NULL;
}
