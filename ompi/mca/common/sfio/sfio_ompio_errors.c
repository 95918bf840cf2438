/*
 * sfio_ompio_errors: how the engine reports: errno to MPI error classes,
 * help text, the output stream, and write errors kept for sync and close.
 */
#include "sfio_ompio_int.h"

int mca_common_sfio_output = -1;

#ifndef SFIO_HELPDIR
#define SFIO_HELPDIR ""
#endif
#ifndef SFIO_SRC_HELPDIR
#define SFIO_SRC_HELPDIR ""
#endif

int mca_common_sfio_errno_to_mpi(int err)
{
    switch (err) {
    case 0:            return MPI_SUCCESS;
    case EACCES:
    case EPERM:        return MPI_ERR_ACCESS;
    case EROFS:        return MPI_ERR_READ_ONLY;
    case ENOENT:       return MPI_ERR_NO_SUCH_FILE;
    case EEXIST:       return MPI_ERR_FILE_EXISTS;
    case ENOTDIR:
    case EISDIR:
    case ENAMETOOLONG:
    case ELOOP:        return MPI_ERR_BAD_FILE;
    case ENOSPC:       return MPI_ERR_NO_SPACE;
#ifdef EDQUOT
    case EDQUOT:       return MPI_ERR_QUOTA;
#endif
    case EBUSY:
    case ETXTBSY:      return MPI_ERR_FILE_IN_USE;
    case ENOMEM:
    case EMFILE:       /* out of descriptors: a process resource, like memory */
    case ENFILE:       return MPI_ERR_NO_MEM;
    case EINVAL:       return MPI_ERR_ARG;
    default:           return MPI_ERR_IO;
    }
}

void mca_common_sfio_show_help(const char *topic, bool want_error_header, ...)
{
    static bool dirs_added = false;
    va_list ap;

    if (!dirs_added) {
        dirs_added = true;
        /* a relocated installation (or a copy its user can read) */
        const char *env = getenv("SFIO_HELP_DIR");
        if (NULL != env && '\0' != env[0]) {
            (void) opal_show_help_add_dir((char *) env);
        }
        if ('\0' != SFIO_HELPDIR[0]) {
            (void) opal_show_help_add_dir(SFIO_HELPDIR);
        }
        if ('\0' != SFIO_SRC_HELPDIR[0]) {
            (void) opal_show_help_add_dir(SFIO_SRC_HELPDIR);
        }
    }
    va_start(ap, want_error_header);
    (void) opal_show_vhelp("help-mca-common-sfio.txt", topic, want_error_header, ap);
    va_end(ap);
}
int mca_common_sfio_request_wait_free(ompi_request_t **req, ompi_status_public_t *status)
{
    int rc = ompi_request_wait(req, status);
    if (MPI_REQUEST_NULL != *req) {
        (void) ompi_request_free(req);
    }
    return rc;
}

/* The file's unreported write error (0: none), cleared. */
int sfio_ompio_take_unreported(ompio_file_t *fh)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    int err = NULL != f ? f->unreported_err : 0;
    if (NULL != f) {
        f->unreported_err = 0;
    }
    return err;
}

/* A blocking fbtl call failed with -errno e: kept for sync and close
 * (over a stock fs, the fs proxy reports it at sync). */
void sfio_ompio_note_unreported(ompio_file_t *fh, int e)
{
    mca_common_sfio_file_t *f = mca_common_sfio_file_of(fh);
    if (NULL != f && 0 == f->unreported_err) {
        f->unreported_err = mca_common_sfio_errno_to_mpi(e);
    }
}
