/*
 * sfio = shared-file I/O: the engine (common/sfio) of the ompio-sfio
 * suite, MPI-IO on files many processes share (no relation to AT&T's
 * Sfio library).  README.md, "References", names the designs it follows.
 *
 * sfio_ompio: the engine's adapter to OMPIO.  Everything that touches
 * ompio_file_t, MPI communicators or Open MPI's output/help machinery on
 * behalf of the suite's components lives here, so that components stay
 * thin and the planning modules stay pure.
 */
#ifndef MCA_COMMON_SFIO_OMPIO_H
#define MCA_COMMON_SFIO_OMPIO_H

#include "sfio_export.h"

#include "ompi_config.h"
#include "sfio_ompi_compat.h"
#include "ompi/mca/common/ompio/common_ompio.h"
#include "ompi/mca/common/ompio/common_ompio_request.h"
#include "ompi/mca/fcoll/fcoll.h"
#include "ompi/mca/sharedfp/sharedfp.h"

#include "sfio_iobatch.h"
#include "sfio_vstore.h"
#include "sfio_pcache.h"
#include "sfio_route.h"
#include "sfio_path.h"

BEGIN_C_DECLS

/* The engine's state of one open file of this process: one object per
 * file handle, shared by every component of the suite that serves it.
 * fs/versioned creates it when OMPIO selects it for a file (before the
 * fbtl is selected); over a stock fs, fbtl/versioned does. */
typedef struct mca_common_sfio_file_t {
    struct mca_common_sfio_file_t *next;
    ompio_file_t *fh;
    bool served_by_fs;                 /* fs/versioned serves fh (else a stock fs) */
    mca_common_sfio_vstore_t *store;   /* NULL: no versioned store */
    int store_errno;                   /* why not, when NULL */
    const char *store_why;             /* or why not in words (static text), else NULL */
    bool auto_local;                   /* no store: auto on one node over local storage */
    /* sharedfp/fetchadd's page on one node comes with the fs open (set by
     * its query, read by mca_common_sfio_fs_open): two collectives fewer. */
    bool sharedfp_page_wanted;
    /* Across nodes the store needs the file's coordination service.  It
     * joins at the first MPI_File_set_atomicity(fh, 1), a collective
     * point, rather than in every open (a file never made atomic pays
     * nothing for it); until then the store waits here and store is NULL. */
    mca_common_sfio_vstore_t *store_awaiting_service;
    /* io/ompio's set_atomicity of the file's ompi_file_t, which the suite
     * wraps for that and for the store's new epoch (NULL: not wrapped). */
    struct ompi_file_t *io_file;
    mca_io_base_module_file_set_atomicity_fn_t set_atomicity_real;
    /* Whether some rank of the group may have been in atomic mode since
     * the open, and so may have touched the store; the same on every rank
     * (see sfio_set_atomicity).  Until then close and sync need no
     * agreement about the store. */
    bool atomic_ever;
    bool atomic_root;                  /* rank 0's atomicity, known to every rank */
    bool warned_no_atomic;
    /* Which bytes of the current views are private (Logan and Dickens'
     * objects), computed at every set_view once a rank has been atomic, else
     * at the first set_atomicity(1) (invalid: everything is shared). */
    mca_common_sfio_objects_t objects;
    bool private_objects;
    bool objects_stale;                /* views set while no rank was atomic: objects to compute */
    size_t objects_max_ranges;
    uint64_t set_views;                /* collective points seen */
    uint64_t versions_at_fold;         /* this rank's version count at the last fold */
    /* List-locking atomic mode: this rank's private bytes not yet written,
     * written by the group at its next collective point. */
    mca_common_sfio_pcache_t pcache;
    /* Lock modes across nodes: the file's list-lock service and its
     * locker (NULL: fcntl locks). */
    struct mca_common_sfio_locksvc_t *locksvc;
    mca_common_sfio_locker_t locker;
    /* auto on one node over local storage: the group's gate (sfio_gate),
     * opened at the first set_atomicity(fh, 1) (coord NULL: none). */
    mca_common_sfio_gate_t gate;
    bool gate_tried;
    /* The file system's magic (statfs of the file, at its first routed
     * access; 0: not known yet): what its locks need to be coherent. */
    long fs_type;
    /* The first error (MPI code) of a blocking fbtl write since the last
     * sync.  Stock io/ompio drops a negative fbtl result of an independent
     * call (common_ompio_file_write counts only what was written), so
     * MPI_File_sync reports it instead of losing it (and close, though
     * Open MPI's MPI_File_close drops its module's result).  A failed
     * read shows as a short count.  fcoll/adaptive reports its own
     * errors and leaves none here. */
    int unreported_err;
    /* The path of the file's accesses, resolved again only when what it
     * depends on changes: atomicity, the views (set_views), the atomic
     * mode asked for, and whether this rank attached the store. */
    struct {
        bool valid;
        bool atomicity, attached;
        int mode;
        uint64_t set_views;
        mca_common_sfio_path_t path;
    } route;
    /* The module copies put in front of OMPIO's selection (see below). */
    mca_sharedfp_base_module_t *sharedfp_real;
    mca_sharedfp_base_module_t sharedfp_proxy;
    mca_fcoll_base_module_t *fcoll_real;
    mca_fcoll_base_module_t fcoll_proxy;
    mca_fs_base_module_t *fs_real;     /* over a stock fs */
    mca_fs_base_module_t fs_proxy;
} mca_common_sfio_file_t;

/* fs/versioned's module init and finalize: the file state of fh, created
 * (served_by_fs) and destroyed.  Returns 0 or an OMPI error. */
SFIO_EXPORT int mca_common_sfio_fs_module_init(ompio_file_t *fh);
SFIO_EXPORT void mca_common_sfio_fs_module_finalize(ompio_file_t *fh);

/* fbtl/versioned's module init and finalize.  Over fs/versioned nothing
 * to do; over a stock fs they create and destroy the file state and the
 * proxies that let the engine see set_view, sync and close. */
SFIO_EXPORT int mca_common_sfio_fbtl_module_init(ompio_file_t *fh);
SFIO_EXPORT void mca_common_sfio_fbtl_module_finalize(ompio_file_t *fh);

/* ompi_request_wait, and the request freed also when it failed
 * (ompi_request_wait leaves a failed request allocated, and an ompio
 * request left allocated stays on OMPIO's pending list: every later
 * MPI_File_sync then fails with MPI_ERR_OTHER). */
int mca_common_sfio_request_wait_free(ompi_request_t **req, ompi_status_public_t *status);

/* OMPIO 4.1 tells neither fs nor fbtl about set_view, but calls
 * f_sharedfp->sharedfp_seek collectively at its end, right after selecting
 * the fcoll.  The suite puts a copy of the selected sharedfp module with
 * its own seek in front of it and runs its collective point there (fold,
 * private objects), and a copy of the fcoll module whose collective calls
 * in atomic mode become one atomic access per rank (so the group's result
 * is one serial order).  fs/versioned installs them at its open; over a
 * stock fs, fbtl/versioned puts a copy of the fs module in front whose
 * open installs them.  Every proxy is undone before OMPIO unselects the
 * modules at close. */

/* Collective (every rank of fh's group, at set_view, sync, set_size and
 * close): writes the group's cached private bytes, Logan and Dickens' flush.  In
 * atomic mode the span of all cached bytes is cut into one contiguous
 * domain per rank, each rank sends every domain its bytes in one
 * alltoallv, and each writes its domain in file order (neighbouring
 * pieces of different ranks fuse into large requests).  With atomicity
 * off (ranks may have switched it at different collective points: no
 * agreement to rely on) every rank writes its own bytes back alone.
 * Empties pc.  Returns MPI_SUCCESS or the same error on every rank. */
int mca_common_sfio_pcache_flush(ompio_file_t *fh, mca_common_sfio_pcache_t *pc);

/* The file state of fh, or NULL when no component of the suite serves it. */
mca_common_sfio_file_t *mca_common_sfio_file_of(const ompio_file_t *fh);

/* The objects (Logan and Dickens) in force for f's writes, or NULL (all shared). */
const mca_common_sfio_objects_t *mca_common_sfio_file_objects(mca_common_sfio_file_t *f);

/* Options of fs open. */
typedef struct mca_common_sfio_fs_options_t {
    bool versioned_store;        /* create the store for writable files */
    const char *store_dir;       /* NULL/"": beside the file; else node-local dir */
    bool private_objects;        /* Logan and Dickens: private bytes in place */
    bool journal_private;        /* ... after journaling them (crash-safe) */
    size_t objects_max_ranges;   /* bound of the view intersection */
    mca_common_sfio_fold_policy_t fold;   /* write-back windows, deferral */
} mca_common_sfio_fs_options_t;

/* Output stream for the engine's verbose messages, opened by the first
 * component (mca_common_sfio_engine_open). */
SFIO_EXPORT extern int mca_common_sfio_output;

/* Maps an errno value to the MPI error class a user should see. */
int mca_common_sfio_errno_to_mpi(int err);

/* Prints a message from the suite's help file (help-mca-common-sfio.txt),
 * looked up in the installed help directory. */
void mca_common_sfio_show_help(const char *topic, bool want_error_header, ...);

/* ---- file-system operations (fs components) ---- */
SFIO_EXPORT int mca_common_sfio_fs_open(struct ompi_communicator_t *comm, const char *filename, int amode,
                            struct opal_info_t *info, ompio_file_t *fh,
                            const mca_common_sfio_fs_options_t *options);
SFIO_EXPORT int mca_common_sfio_fs_close(ompio_file_t *fh);
/* store_dir: where fs open keeps stores (the file's dead stores go too). */
SFIO_EXPORT int mca_common_sfio_fs_delete(char *filename, struct opal_info_t *info, const char *store_dir);
SFIO_EXPORT int mca_common_sfio_fs_set_size(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE size);
SFIO_EXPORT int mca_common_sfio_fs_get_size(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE *size);
SFIO_EXPORT int mca_common_sfio_fs_sync(ompio_file_t *fh);

/* ---- data path (fbtl components) ---- */


/* Registers an enum MCA parameter "atomic_mode" of component c over the
 * table, storing the choice in *storage. */
SFIO_EXPORT int mca_common_sfio_atomic_mode_register(const mca_base_component_t *c, int *storage);

/* Registers the enum "lock_backend" of component c (sfio_route's table). */
SFIO_EXPORT int mca_common_sfio_lock_backend_register(const mca_base_component_t *c, int *storage);

/* Set once by fbtl/versioned from its parameters: the lock backend, the
 * atomic mode (whether files may lock at all), and the list-lock
 * service's timeouts (see sfio_locksvc.h). */
SFIO_EXPORT extern int mca_common_sfio_lock_backend;
SFIO_EXPORT extern int mca_common_sfio_lock_atomic_mode;
/* fbtl_versioned_auto_gate (sfio_ompio_gate.c) */
SFIO_EXPORT extern bool mca_common_sfio_auto_gate;
SFIO_EXPORT extern int64_t mca_common_sfio_lock_wait_ms;
SFIO_EXPORT extern int64_t mca_common_sfio_lock_probe_ms;
SFIO_EXPORT extern int64_t mca_common_sfio_lock_dead_ms;


/* The current fbtl call's I/O array as engine segments.  Returns 0 and a
 * malloc'ed array in *segs_p (caller frees) or a negative errno. */
int mca_common_sfio_ompio_segs(const ompio_file_t *fh, mca_common_sfio_ioseg_t **segs_p,
                               size_t *nsegs_p);

SFIO_EXPORT ssize_t mca_common_sfio_fbtl_pwritev(ompio_file_t *fh, mca_common_sfio_atomic_mode_t mode);
SFIO_EXPORT ssize_t mca_common_sfio_fbtl_preadv(ompio_file_t *fh, mca_common_sfio_atomic_mode_t mode,
                                    const mca_common_sfio_sieve_policy_t *policy);
SFIO_EXPORT ssize_t mca_common_sfio_fbtl_ipwritev(ompio_file_t *fh, ompi_request_t *request,
                                      mca_common_sfio_atomic_mode_t mode);
SFIO_EXPORT ssize_t mca_common_sfio_fbtl_ipreadv(ompio_file_t *fh, ompi_request_t *request,
                                     mca_common_sfio_atomic_mode_t mode,
                                     const mca_common_sfio_sieve_policy_t *policy);
SFIO_EXPORT bool mca_common_sfio_fbtl_progress(struct mca_ompio_request_t *req);

/* fbtl_check_atomicity (Open MPI 5.0, called by MPI_File_set_atomicity(fh,
 * 1); a false answer makes that call fail with MPI_ERR_IO): true when fh
 * can be atomic in mode: versioned needs fs/versioned's store, the lock
 * modes need working fcntl byte-range locks, auto takes either. */
SFIO_EXPORT bool mca_common_sfio_fbtl_check_atomicity(ompio_file_t *fh, mca_common_sfio_atomic_mode_t mode);
SFIO_EXPORT void mca_common_sfio_fbtl_request_free(struct mca_ompio_request_t *req);

/* ---- atomic-call boundary ----
 * OMPIO splits an independent access into cycles and calls the fbtl once
 * per cycle.  An atomic access must reach the fbtl whole, so the engine
 * wraps fh->f_get_mca_parameter_value: while a tracked file is in atomic
 * mode, "cycle_buffer_size" reads SFIO_OMPIO_CYCLE_ONE_CALL (one cycle per
 * call: -1 on 4.1, INT_MAX on 5.0, see sfio_ompi_compat.h).  The callback
 * has no file argument, so the wrapper answers so when any tracked file of
 * this process is atomic; for non-atomic files that only means fewer,
 * larger cycles.  fs open and the fbtl over a stock fs track their files. */

END_C_DECLS

#endif
