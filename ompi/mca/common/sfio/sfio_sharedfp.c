/*
 * sfio_sharedfp: shared file pointer operations over the coordination
 * service (see header).
 */
#include "ompi_config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/request/request.h"
#include "opal/util/info.h"
#include "opal/util/output.h"

#include "sfio_ompio.h"
#include "sfio_sfp.h"
#include "sfio_sharedfp.h"

#define SLOT_POINTER 0
#define NSLOTS 1

/* Largest access the direct path takes (bigger ones go through OMPIO's
 * cycles, where the per-call overhead no longer matters). */
#define DIRECT_MAX ((int64_t) 4 << 20)

typedef struct sfp_file_t {
    mca_common_sfio_coord_t *coord;
    bool direct;               /* options->direct */
    bool ordered_collective;   /* options->ordered_collective */
} sfp_file_t;

static sfp_file_t *sfp_of(const ompio_file_t *fh)
{
    struct mca_sharedfp_base_data_t *sh = fh->f_sharedfp_data;
    return NULL == sh ? NULL : sh->selected_module_data;
}

/* negative errno -> MPI error class */
static int sfp_error(int neg)
{
    switch (-neg) {
    case 0:         return MPI_SUCCESS;
    case EINVAL:    return MPI_ERR_ARG;
    case EOVERFLOW: return MPI_ERR_ARG;
    case EIO:       return MPI_ERR_OTHER;
    case ETIMEDOUT: return MPI_ERR_OTHER;   /* the coordination host did not answer */
    default:        return mca_common_sfio_errno_to_mpi(-neg);
    }
}

/* The access mode error of a write (or read) on fh, checked before the
 * pointer moves; the same on every rank, so no collective is left half
 * entered. */
static int amode_error(const ompio_file_t *fh, bool write)
{
    if (write && (fh->f_amode & MPI_MODE_RDONLY)) {
        return MPI_ERR_READ_ONLY;
    }
    if (!write && (fh->f_amode & MPI_MODE_WRONLY)) {
        return MPI_ERR_ACCESS;
    }
    return MPI_SUCCESS;
}

/*
 * Services created at query time, waiting for the file's open (or for
 * unquery, when another component won), with the open's memory, taken
 * before the service so that the service's open agrees on its failure
 * and the file's open has nothing left to fail.  Keyed by the file
 * handle; a handle is queried and opened by one thread, but two threads
 * may open two files at once.
 */
typedef struct pending_t {
    struct pending_t *next;
    const ompio_file_t *fh;
    mca_common_sfio_coord_t *coord;   /* NULL: to come (see page_wanted) */
    struct mca_sharedfp_base_data_t *sh;
    sfp_file_t *f;
    mca_common_sfio_coord_config_t cfg;
} pending_t;

static pending_t *pending_head = NULL;
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;

static void pending_put(pending_t *p, const ompio_file_t *fh, mca_common_sfio_coord_t *coord)
{
    p->fh = fh;
    p->coord = coord;
    pthread_mutex_lock(&pending_lock);
    p->next = pending_head;
    pending_head = p;
    pthread_mutex_unlock(&pending_lock);
}

/* fh's pending service (NULL: none), taken out of the list when take. */
static pending_t *pending_lookup(const ompio_file_t *fh, bool take)
{
    pending_t *p = NULL;
    pthread_mutex_lock(&pending_lock);
    for (pending_t **pp = &pending_head; NULL != *pp; pp = &(*pp)->next) {
        if ((*pp)->fh == fh) {
            p = *pp;
            if (take) {
                *pp = p->next;
            }
            break;
        }
    }
    pthread_mutex_unlock(&pending_lock);
    return p;
}

/* Collective (the service's close): frees a pending service unused. */
static int pending_drop(pending_t *p)
{
    if (NULL == p) {
        return 0;
    }
    int rc = mca_common_sfio_coord_close(p->coord);   /* collective for rma */
    free(p->sh);
    free(p->f);
    free(p);
    return rc;
}

bool mca_common_sfio_sharedfp_taken(const ompio_file_t *fh)
{
    bool taken = false;
    pthread_mutex_lock(&pending_lock);
    for (const pending_t *p = pending_head; NULL != p && !taken; p = p->next) {
        taken = p->fh == fh;
    }
    pthread_mutex_unlock(&pending_lock);
    return taken;
}

static const char *backend_name(mca_common_sfio_coord_backend_t b)
{
    static const char *const names[] = {
        [MCA_COMMON_SFIO_COORD_AUTO] = "auto", [MCA_COMMON_SFIO_COORD_SHM] = "shm",
        [MCA_COMMON_SFIO_COORD_RMA] = "rma", [MCA_COMMON_SFIO_COORD_LOCAL] = "local",
        [MCA_COMMON_SFIO_COORD_OFI] = "ofi",
    };
    return (unsigned) b < sizeof(names) / sizeof(names[0]) ? names[b] : "?";
}

static bool default_shm_dir(const char *dir)
{
    return NULL == dir || '\0' == dir[0] || 0 == strcmp(dir, "/dev/shm");
}

/*
 * Collective over fh->f_comm: creates the coordination service.  A
 * shm_dir where the page cannot be created falls back to /dev/shm with a
 * warning (once per process): a typo in a parameter must not fail every
 * open.  Returns 0 or the service's negative errno (the same everywhere).
 */
static int coord_create(ompio_file_t *fh, const mca_common_sfio_sharedfp_options_t *options,
                        int local_err, mca_common_sfio_coord_t **coord_p)
{
    static bool warned = false;
    const mca_common_sfio_coord_config_t *cfg = &options->coord;
    int rc = mca_common_sfio_coord_open(fh->f_comm, cfg, NSLOTS, local_err, coord_p);
    if (0 != rc && 0 == local_err && !default_shm_dir(cfg->shm_dir) &&
        MCA_COMMON_SFIO_COORD_SHM == mca_common_sfio_coord_pick(fh->f_comm, cfg->backend) &&
        -EXDEV != rc) {
        if (0 == fh->f_rank && !warned) {
            warned = true;
            mca_common_sfio_show_help("sharedfp-shm-dir", true, cfg->shm_dir, strerror(-rc));
        }
        mca_common_sfio_coord_config_t dflt = *cfg;
        dflt.shm_dir = "/dev/shm";
        rc = mca_common_sfio_coord_open(fh->f_comm, &dflt, NSLOTS, 0, coord_p);
    }
    return rc;
}

bool mca_common_sfio_sharedfp_query(ompio_file_t *fh,
                                     const mca_common_sfio_sharedfp_options_t *options,
                                     const char **why_p)
{
    static _Thread_local char why[320];   /* read by the caller at once */
    mca_common_sfio_coord_backend_t b =
        mca_common_sfio_coord_pick(fh->f_comm, options->coord.backend);
    if (MCA_COMMON_SFIO_COORD_SHM == options->coord.backend &&
        mca_common_sfio_coord_spans_nodes(fh->f_comm)) {
        *why_p = "backend shm was asked for, but the ranks span several nodes";
        return false;
    }
    mca_common_sfio_coord_t *coord = NULL;
    /* before the service: the failure to get them is agreed on with it */
    pending_t *p = calloc(1, sizeof(*p));
    if (NULL != p) {
        p->sh = calloc(1, sizeof(*p->sh));
        p->f = calloc(1, sizeof(*p->f));
        p->cfg = options->coord;
    }
    bool have = NULL != p && NULL != p->sh && NULL != p->f;
    mca_common_sfio_file_t *file = mca_common_sfio_file_of(fh);
    if (MCA_COMMON_SFIO_COORD_SHM == b && NULL != file && file->served_by_fs) {
        /* One node under fs/versioned: the page comes with the fs open,
         * whose broadcast and agreement carry it (see page_create); no
         * collective here.  A rank short of memory says so there. */
        file->sharedfp_page_wanted = true;
        if (have) {
            pending_put(p, fh, NULL);
        } else if (NULL != p) {
            free(p->sh);
            free(p->f);
            free(p);
        }
        return true;
    }
    int rc = coord_create(fh, options, have ? 0 : -ENOMEM, &coord);
    if (0 == rc) {
        pending_put(p, fh, coord);
    } else if (NULL != p) {
        free(p->sh);
        free(p->f);
        free(p);
    }
    if (0 != rc) {
        const char *ofi_why = mca_common_sfio_coord_why();
        (void) snprintf(why, sizeof(why), "the %s backend cannot serve these ranks: %s",
                        backend_name(b),
                        -EOPNOTSUPP == rc ? "MPI_Win_allocate failed (no one-sided component "
                                            "for their transport)"
                        : MCA_COMMON_SFIO_COORD_OFI == b && '\0' != ofi_why[0] ? ofi_why
                                                                              : strerror(-rc));
        *why_p = why;
        return false;
    }
    return true;
}

void mca_common_sfio_sharedfp_unquery(ompio_file_t *fh)
{
    mca_common_sfio_file_t *file = mca_common_sfio_file_of(fh);
    if (NULL != file) {
        file->sharedfp_page_wanted = false;
    }
    (void) pending_drop(pending_lookup(fh, true));
}

int mca_common_sfio_sharedfp_page_create(const ompio_file_t *fh, char *name, size_t name_size)
{
    static bool warned = false;
    pending_t *p = pending_lookup(fh, false);
    name[0] = '\0';
    if (NULL == p) {
        return -ENOMEM;   /* the query could not keep it */
    }
    int rc = mca_common_sfio_coord_shm_create(&p->cfg, NSLOTS, name, name_size, &p->coord);
    if (0 != rc && !default_shm_dir(p->cfg.shm_dir)) {
        /* as coord_create: a typo in a parameter must not fail every open */
        if (!warned) {
            warned = true;
            mca_common_sfio_show_help("sharedfp-shm-dir", true, p->cfg.shm_dir, strerror(-rc));
        }
        mca_common_sfio_coord_config_t dflt = p->cfg;
        dflt.shm_dir = "/dev/shm";
        rc = mca_common_sfio_coord_shm_create(&dflt, NSLOTS, name, name_size, &p->coord);
    }
    return rc;
}

int mca_common_sfio_sharedfp_page_attach(const ompio_file_t *fh, const char *name)
{
    pending_t *p = pending_lookup(fh, false);
    if (NULL == p) {
        return -ENOMEM;
    }
    return mca_common_sfio_coord_shm_attach(&p->cfg, NSLOTS, name, &p->coord);
}

void mca_common_sfio_sharedfp_page_settle(const ompio_file_t *fh, bool everywhere,
                                          const char *name)
{
    if (NULL != name && '\0' != name[0]) {
        unlink(name);   /* the creator's: every rank has attached or failed */
    }
    pending_t *p = pending_lookup(fh, false);
    if (NULL != p && !everywhere) {
        /* _open makes the service by its own collectives instead */
        (void) mca_common_sfio_coord_close(p->coord);
        p->coord = NULL;
    }
}

/* MPI_File_get_info shows the backend as "sfio_sharedfp_backend" and the
 * rank whose process holds the pointer as "sfio_sharedfp_host" (tests make
 * that rank busy; absent when every rank holds it in shared memory). */
static void publish_host(ompio_file_t *fh, const mca_common_sfio_coord_t *coord)
{
    char v[16];
    int host = mca_common_sfio_coord_host(coord);
    if (NULL == fh->f_info) {
        return;
    }
    (void) opal_info_set(fh->f_info, "sfio_sharedfp_backend", mca_common_sfio_coord_name(coord));
    if (host >= 0) {
        snprintf(v, sizeof(v), "%d", host);
        (void) opal_info_set(fh->f_info, "sfio_sharedfp_host", v);
    }
}

int mca_common_sfio_sharedfp_open(struct ompi_communicator_t *comm, const char *filename,
                                  int amode, struct opal_info_t *info, ompio_file_t *fh,
                                  const mca_common_sfio_sharedfp_options_t *options)
{
    (void) comm;   /* the user's communicator; fh->f_comm is OMPIO's private duplicate */
    (void) amode;
    (void) info;
    struct mca_sharedfp_base_data_t *sh;
    sfp_file_t *f;
    mca_common_sfio_coord_t *coord = NULL;
    pending_t *p = pending_lookup(fh, true);
    int rc;
    if (NULL != p && NULL != p->coord) {
        /* Every rank has its service and memory from the query (or the fs
         * open), whose outcome is agreed on: nothing is left to fail. */
        sh = p->sh;
        f = p->f;
        coord = p->coord;
        free(p);
        rc = 0;
    } else if (NULL != p) {
        /* the fs open did not make the page on every rank (agreed) */
        sh = p->sh;
        f = p->f;
        mca_common_sfio_sharedfp_options_t o = *options;
        o.coord = p->cfg;
        free(p);
        rc = coord_create(fh, &o, 0, &coord);
    } else {
        sh = calloc(1, sizeof(*sh));
        f = calloc(1, sizeof(*f));
        rc = coord_create(fh, options, (NULL == sh || NULL == f) ? -ENOMEM : 0, &coord);
    }
    if (0 != rc) {
        if (0 == fh->f_rank) {
            mca_common_sfio_show_help("sharedfp-coord", true, filename ? filename : "",
                                      backend_name(mca_common_sfio_coord_pick(
                                          fh->f_comm, options->coord.backend)),
                                      strerror(-rc));
        }
        free(sh);
        free(f);
        return sfp_error(rc);
    }
    f->coord = coord;
    f->direct = options->direct;
    f->ordered_collective = options->ordered_collective;
    sh->global_offset = 0;
    sh->selected_module_data = f;
    fh->f_sharedfp_data = sh;
    publish_host(fh, f->coord);
    opal_output_verbose(10, mca_common_sfio_output,
                        "sharedfp:fetchadd: %s: shared pointer in the %s coordination backend",
                        filename ? filename : "", mca_common_sfio_coord_name(f->coord));
    return MPI_SUCCESS;
}

int mca_common_sfio_sharedfp_close(ompio_file_t *fh)
{
    struct mca_sharedfp_base_data_t *sh = fh->f_sharedfp_data;
    if (NULL == sh) {
        /* OMPIO opens the fs after selecting sharedfp: when that fails,
         * the open never comes and the file's close (on every rank, the fs
         * agrees on its error) frees what the query made */
        return sfp_error(pending_drop(pending_lookup(fh, true)));
    }
    sfp_file_t *f = sh->selected_module_data;
    int rc = 0;
    if (NULL != f) {
        /* after OMPIO's close barrier; still collective for rma */
        rc = mca_common_sfio_coord_close_quiesced(f->coord);
        free(f);
    }
    free(sh);
    fh->f_sharedfp_data = NULL;
    return sfp_error(rc);
}

/* View bytes before the end of file (where SEEK_END starts). */
static int view_bytes_at_eof(ompio_file_t *fh, uint64_t *end_p)
{
    OMPI_MPI_OFFSET_TYPE size = 0;
    int rc = mca_common_ompio_file_get_size(fh, &size);
    if (OMPI_SUCCESS != rc) {
        return -EIO;
    }
    size_t n = fh->f_iov_count;
    if (NULL == fh->f_decoded_iov || 0 == n || fh->f_view_extent <= 0) {
        /* no decoded view: contiguous from disp */
        *end_p = size > fh->f_disp ? (uint64_t) (size - fh->f_disp) : 0;
        return 0;
    }
    mca_common_sfio_range_t *blocks = malloc(n * sizeof(*blocks));
    if (NULL == blocks) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; ++i) {
        blocks[i].offset = (uint64_t) (intptr_t) fh->f_decoded_iov[i].iov_base;
        blocks[i].length = fh->f_decoded_iov[i].iov_len;
    }
    mca_common_sfio_view_t view = {
        .disp = (uint64_t) fh->f_disp, .blocks = blocks, .nblocks = n,
        .extent = (uint64_t) fh->f_view_extent,
    };
    rc = mca_common_sfio_sfp_view_bytes_below(&view, (uint64_t) size, end_p);
    free(blocks);
    return rc;
}

int mca_common_sfio_sharedfp_seek(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE offset, int whence)
{
    ompi_communicator_t *comm = fh->f_comm;
    sfp_file_t *f = sfp_of(fh);
    int err = NULL == f ? -EBADF : 0;
    /* Every rank's earlier shared accesses have taken their bytes. */
    int rc = comm->c_coll->coll_barrier(comm, comm->c_coll->coll_barrier_module);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    if (0 == fh->f_rank && 0 == err) {
        mca_common_sfio_sfp_whence_t w = MPI_SEEK_SET == whence   ? MCA_COMMON_SFIO_SFP_SEEK_SET
                                         : MPI_SEEK_CUR == whence ? MCA_COMMON_SFIO_SFP_SEEK_CUR
                                         : MPI_SEEK_END == whence ? MCA_COMMON_SFIO_SFP_SEEK_END
                                                                  : (mca_common_sfio_sfp_whence_t) -1;
        int64_t cur = 0, pos = 0;
        uint64_t end = 0;
        if (MCA_COMMON_SFIO_SFP_SEEK_CUR == w) {
            err = mca_common_sfio_coord_load(f->coord, SLOT_POINTER, &cur);
        } else if (MCA_COMMON_SFIO_SFP_SEEK_END == w) {
            err = view_bytes_at_eof(fh, &end);
        }
        if (0 == err) {
            err = mca_common_sfio_sfp_seek(w, (int64_t) offset, fh->f_etype_size, cur, end, &pos);
        }
        if (0 == err) {
            err = mca_common_sfio_coord_store(f->coord, SLOT_POINTER, pos);
        }
    }
    /* Nobody goes on before rank 0 has moved the pointer. */
    rc = comm->c_coll->coll_bcast(&err, 1, MPI_INT, 0, comm, comm->c_coll->coll_bcast_module);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    return sfp_error(err);
}

int mca_common_sfio_sharedfp_get_position(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE *offset)
{
    sfp_file_t *f = sfp_of(fh);
    int64_t v = 0;
    if (NULL == f) {
        return MPI_ERR_FILE;
    }
    int rc = mca_common_sfio_coord_load(f->coord, SLOT_POINTER, &v);
    if (0 == rc) {
        *offset = (OMPI_MPI_OFFSET_TYPE) v;   /* view bytes; the io layer divides */
    }
    return sfp_error(rc);
}

/* Bytes of count x datatype, in whole etypes. */
static int access_bytes(ompio_file_t *fh, int count, struct ompi_datatype_t *datatype,
                        int64_t *bytes_p)
{
    size_t tsize = 0;
    opal_datatype_type_size(&datatype->super, &tsize);
    return mca_common_sfio_sfp_access_bytes(count, tsize, fh->f_etype_size, bytes_p);
}

/* Takes the bytes of an independent access: its etype offset, and the
 * view bytes of the pointer and of the access (for the direct path). */
static int take(ompio_file_t *fh, int count, struct ompi_datatype_t *datatype, int64_t *etypes_p,
                int64_t *pos_p, int64_t *bytes_p)
{
    sfp_file_t *f = sfp_of(fh);
    int64_t bytes = 0, old = 0;
    if (NULL == f) {
        return MPI_ERR_FILE;
    }
    int rc = access_bytes(fh, count, datatype, &bytes);
    if (0 == rc) {
        rc = mca_common_sfio_coord_fetch_add(f->coord, SLOT_POINTER, bytes, &old);
    }
    if (0 == rc) {
        rc = mca_common_sfio_sfp_to_etypes(old, fh->f_etype_size, etypes_p);
    }
    *pos_p = old;
    *bytes_p = bytes;
    return sfp_error(rc);
}

/*
 * The direct path of small blocking accesses: when the buffer is
 * contiguous, the view is contiguous (one block filling the filetype's
 * extent) and the data representation native, OMPIO's explicit-offset
 * call would build exactly one I/O entry [disp + pos, + bytes) and call the
 * fbtl once; do that without its per-call set-up (pointer save/restore,
 * datatype decoding, io-array allocation).  The fbtl is whatever OMPIO
 * selected (fbtl/versioned keeps its atomic mode: one MPI call is one fbtl
 * call).  Returns false when the access must take the general path.
 */
static bool direct_ok(const ompio_file_t *fh, int count, struct ompi_datatype_t *datatype,
                      int64_t bytes, ptrdiff_t *lb_p)
{
#if OPAL_CUDA_SUPPORT
    return false;   /* device buffers need OMPIO's staging */
#endif
    const sfp_file_t *f = sfp_of(fh);
    if (NULL == f || !f->direct || bytes <= 0 || bytes > DIRECT_MAX ||
        !(fh->f_flags & OMPIO_DATAREP_NATIVE) || NULL == fh->f_fbtl ||
        1 != fh->f_iov_count || NULL == fh->f_decoded_iov ||
        0 != (intptr_t) fh->f_decoded_iov[0].iov_base ||
        (ptrdiff_t) fh->f_decoded_iov[0].iov_len != fh->f_view_extent ||
        !ompi_datatype_is_contiguous_memory_layout(datatype, count)) {
        return false;
    }
    ptrdiff_t true_lb = 0, true_extent = 0;
    ompi_datatype_get_true_extent(datatype, &true_lb, &true_extent);
    *lb_p = true_lb;
    return true;
}

static int direct_io(ompio_file_t *fh, bool write, const void *buf, ptrdiff_t lb, int64_t pos,
                     int64_t bytes, ompi_status_public_t *status)
{
    mca_common_ompio_io_array_t io = {
        .memory_address = (char *) buf + lb,
        .offset = (void *) (intptr_t) (fh->f_disp + pos),
        .length = (size_t) bytes,
    };
    mca_common_ompio_io_array_t *saved_array = fh->f_io_array;   /* NULL between calls */
    int saved_entries = fh->f_num_of_io_entries;
    fh->f_io_array = &io;
    fh->f_num_of_io_entries = 1;
    ssize_t done = write ? fh->f_fbtl->fbtl_pwritev(fh) : fh->f_fbtl->fbtl_preadv(fh);
    fh->f_io_array = saved_array;
    fh->f_num_of_io_entries = saved_entries;
    if (done < 0) {
        return MPI_ERR_IO;
    }
    if (MPI_STATUS_IGNORE != status) {
        status->_ucount = (size_t) done;
    }
    return MPI_SUCCESS;
}

int mca_common_sfio_sharedfp_write(ompio_file_t *fh, const void *buf, int count,
                                   struct ompi_datatype_t *datatype, ompi_status_public_t *status)
{
    int64_t off = 0, pos = 0, bytes = 0;
    ptrdiff_t lb = 0;
    if (MPI_SUCCESS != amode_error(fh, true)) {
        return amode_error(fh, true);   /* before the pointer moves */
    }
    int rc = take(fh, count, datatype, &off, &pos, &bytes);
    if (MPI_SUCCESS != rc) {
        return rc;
    }
    if (direct_ok(fh, count, datatype, bytes, &lb)) {
        return direct_io(fh, true, buf, lb, pos, bytes, status);
    }
    return mca_common_ompio_file_write_at(fh, off, buf, count, datatype, status);
}

int mca_common_sfio_sharedfp_read(ompio_file_t *fh, void *buf, int count,
                                  struct ompi_datatype_t *datatype, ompi_status_public_t *status)
{
    int64_t off = 0, pos = 0, bytes = 0;
    ptrdiff_t lb = 0;
    if (MPI_SUCCESS != amode_error(fh, false)) {
        return amode_error(fh, false);
    }
    int rc = take(fh, count, datatype, &off, &pos, &bytes);
    if (MPI_SUCCESS != rc) {
        return rc;
    }
    if (direct_ok(fh, count, datatype, bytes, &lb)) {
        return direct_io(fh, false, buf, lb, pos, bytes, status);
    }
    return mca_common_ompio_file_read_at(fh, off, buf, count, datatype, status);
}

int mca_common_sfio_sharedfp_iwrite(ompio_file_t *fh, const void *buf, int count,
                                    struct ompi_datatype_t *datatype, ompi_request_t **request)
{
    int64_t off = 0, pos = 0, bytes = 0;
    if (MPI_SUCCESS != amode_error(fh, true)) {
        return amode_error(fh, true);
    }
    int rc = take(fh, count, datatype, &off, &pos, &bytes);
    return MPI_SUCCESS != rc
               ? rc
               : mca_common_ompio_file_iwrite_at(fh, off, buf, count, datatype, request);
}

int mca_common_sfio_sharedfp_iread(ompio_file_t *fh, void *buf, int count,
                                   struct ompi_datatype_t *datatype, ompi_request_t **request)
{
    int64_t off = 0, pos = 0, bytes = 0;
    if (MPI_SUCCESS != amode_error(fh, false)) {
        return amode_error(fh, false);
    }
    int rc = take(fh, count, datatype, &off, &pos, &bytes);
    return MPI_SUCCESS != rc
               ? rc
               : mca_common_ompio_file_iread_at(fh, off, buf, count, datatype, request);
}

/*
 * Collective: places this rank's part of an ordered access.  Where the
 * service has an ordered round (ofi: one request per rank, answered when
 * all have come), that is all; otherwise one exclusive prefix sum of the
 * sizes, and the last rank, which then knows the total, takes it with one
 * fetch-and-add and broadcasts the base.  A rank with a bad argument
 * contributes 0 bytes and gets its error back in *local_p; the collective
 * data call must still be entered by everyone (with count 0 there).
 * Returns an error only when the whole group fails (with an ordered
 * round: when this rank's request failed, e.g. the host did not answer).
 */
static int ordered_place(ompio_file_t *fh, int count, struct ompi_datatype_t *datatype,
                         int64_t *etypes_p, int *local_p)
{
    ompi_communicator_t *comm = fh->f_comm;
    sfp_file_t *f = sfp_of(fh);
    int64_t bytes = 0, prefix = 0;
    int lerr = NULL == f ? -EBADF : access_bytes(fh, count, datatype, &bytes);
    if (0 != lerr) {
        bytes = 0;
    }
    if (NULL != f) {
        int64_t start = 0;
        int orc = mca_common_sfio_coord_ordered_add(f->coord, SLOT_POINTER, bytes, &start);
        if (-ENOTSUP != orc) {
            if (0 != orc) {
                return sfp_error(orc);
            }
            if (0 == lerr) {
                lerr = mca_common_sfio_sfp_ordered_offset(start, 0, fh->f_etype_size, etypes_p);
            }
            if (0 != lerr) {
                *etypes_p = 0;
            }
            *local_p = sfp_error(lerr);
            return MPI_SUCCESS;
        }
    }
    int rc = comm->c_coll->coll_exscan(&bytes, &prefix, 1, MPI_INT64_T, MPI_SUM, comm,
                                       comm->c_coll->coll_exscan_module);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    if (0 == fh->f_rank) {
        prefix = 0;   /* MPI_Exscan leaves rank 0's result undefined */
    }
    int64_t msg[2] = { 0, 0 };   /* base, error */
    int last = fh->f_size - 1;
    if (last == fh->f_rank) {
        msg[1] = NULL == f ? -EBADF
                           : mca_common_sfio_coord_fetch_add(f->coord, SLOT_POINTER,
                                                             prefix + bytes, &msg[0]);
    }
    rc = comm->c_coll->coll_bcast(msg, 2, MPI_INT64_T, last, comm,
                                  comm->c_coll->coll_bcast_module);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    if (0 != msg[1]) {
        return sfp_error((int) msg[1]);
    }
    if (0 == lerr) {
        lerr = mca_common_sfio_sfp_ordered_offset(msg[0], prefix, fh->f_etype_size, etypes_p);
    }
    if (0 != lerr) {
        *etypes_p = 0;
    }
    *local_p = sfp_error(lerr);
    return MPI_SUCCESS;
}

/*
 * The data part of an ordered access whose place is known: every rank's
 * part is one disjoint interval of the view, so independent explicit-
 * offset calls (or the direct path) give the same file as the collective
 * call, without the fcoll's exchange.  With ordered_collective the data go
 * through the collective call instead (aggregation pays off when the
 * parts are small and the file system charges per call).
 */
static bool ordered_coll(const ompio_file_t *fh)
{
    const sfp_file_t *f = sfp_of(fh);
    return NULL != f && f->ordered_collective;
}

static int ordered_independent(ompio_file_t *fh, bool write, void *buf, int64_t off, int count,
                               struct ompi_datatype_t *datatype, ompi_status_public_t *status)
{
    int64_t bytes = 0;
    ptrdiff_t lb = 0;
    if (0 == access_bytes(fh, count, datatype, &bytes) &&
        direct_ok(fh, count, datatype, bytes, &lb)) {
        return direct_io(fh, write, buf, lb, off * (int64_t) fh->f_etype_size, bytes, status);
    }
    return write ? mca_common_ompio_file_write_at(fh, off, buf, count, datatype, status)
                 : mca_common_ompio_file_read_at(fh, off, buf, count, datatype, status);
}

/* Both ordered calls: the place from the pointer, then the collective (or,
 * where the ranks cannot meet, each rank's own) access at it. */
static int ordered_io(ompio_file_t *fh, bool write, void *buf, int count,
                      struct ompi_datatype_t *datatype, ompi_status_public_t *status)
{
    if (MPI_SUCCESS != amode_error(fh, write)) {
        return amode_error(fh, write);
    }
    int64_t off = 0;
    int local = MPI_SUCCESS;
    int rc = ordered_place(fh, count, datatype, &off, &local);
    if (MPI_SUCCESS != rc) {
        return rc;
    }
    if (!ordered_coll(fh)) {
        return MPI_SUCCESS != local ? local : ordered_independent(fh, write, buf, off, count,
                                                                  datatype, status);
    }
    int n = MPI_SUCCESS == local ? count : 0;
    rc = write ? mca_common_ompio_file_write_at_all(fh, off, buf, n, datatype, status)
               : mca_common_ompio_file_read_at_all(fh, off, buf, n, datatype, status);
    return MPI_SUCCESS != local ? local : rc;
}

int mca_common_sfio_sharedfp_write_ordered(ompio_file_t *fh, const void *buf, int count,
                                           struct ompi_datatype_t *datatype,
                                           ompi_status_public_t *status)
{
    return ordered_io(fh, true, (void *) buf, count, datatype, status);
}

int mca_common_sfio_sharedfp_read_ordered(ompio_file_t *fh, void *buf, int count,
                                          struct ompi_datatype_t *datatype,
                                          ompi_status_public_t *status)
{
    return ordered_io(fh, false, buf, count, datatype, status);
}

/* Both split ordered calls: the place now, the access as a request that
 * the _end call completes. */
static int ordered_begin(ompio_file_t *fh, bool write, void *buf, int count,
                         struct ompi_datatype_t *datatype)
{
    if (MPI_SUCCESS != amode_error(fh, write)) {
        return amode_error(fh, write);
    }
    if (fh->f_split_coll_in_use) {
        return MPI_ERR_REQUEST;   /* one split collective per file at a time */
    }
    int64_t off = 0;
    int local = MPI_SUCCESS;
    int rc = ordered_place(fh, count, datatype, &off, &local);
    if (MPI_SUCCESS != rc) {
        return rc;
    }
    int n = MPI_SUCCESS == local ? count : 0;
    ompi_request_t **req = &fh->f_split_coll_req;
    if (!ordered_coll(fh)) {
        rc = write ? mca_common_ompio_file_iwrite_at(fh, off, buf, n, datatype, req)
                   : mca_common_ompio_file_iread_at(fh, off, buf, n, datatype, req);
    } else {
        rc = write ? mca_common_ompio_file_iwrite_at_all(fh, off, buf, n, datatype, req)
                   : mca_common_ompio_file_iread_at_all(fh, off, buf, n, datatype, req);
    }
    fh->f_split_coll_in_use = true;
    return MPI_SUCCESS != local ? local : rc;
}

int mca_common_sfio_sharedfp_write_ordered_begin(ompio_file_t *fh, const void *buf, int count,
                                                 struct ompi_datatype_t *datatype)
{
    return ordered_begin(fh, true, (void *) buf, count, datatype);
}

int mca_common_sfio_sharedfp_write_ordered_end(ompio_file_t *fh, const void *buf,
                                               ompi_status_public_t *status)
{
    (void) buf;
    if (!fh->f_split_coll_in_use) {
        return MPI_ERR_REQUEST;
    }
    int rc = mca_common_sfio_request_wait_free(&fh->f_split_coll_req, status);
    fh->f_split_coll_in_use = false;
    return rc;
}

int mca_common_sfio_sharedfp_read_ordered_begin(ompio_file_t *fh, void *buf, int count,
                                                struct ompi_datatype_t *datatype)
{
    return ordered_begin(fh, false, buf, count, datatype);
}

int mca_common_sfio_sharedfp_read_ordered_end(ompio_file_t *fh, void *buf,
                                              ompi_status_public_t *status)
{
    return mca_common_sfio_sharedfp_write_ordered_end(fh, buf, status);
}
