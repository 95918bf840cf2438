/*
 * sfio_ompi_compat: the one place where the suite's C sources differ
 * between the Open MPI series they are compiled for (4.1.x and 5.0.x).
 *
 * Every component includes this header (through its own header) and uses
 * the macros below instead of testing OMPI_MAJOR_VERSION itself, so that a
 * new series difference is handled here once.  The series is fixed at
 * compile time from the headers found by configure: a binary built for one
 * series never serves the other (mca_common_sfio_component_check_series()
 * refuses the load, see sfio_component.h).  docs/ompi5-differences.md,
 * section "What a new component must do for 5.0", explains each item.
 */
#ifndef MCA_COMMON_SFIO_OMPI_COMPAT_H
#define MCA_COMMON_SFIO_OMPI_COMPAT_H

#include "ompi_config.h"

#include <limits.h>

#include "mpi.h"   /* OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION */

/* SFIO_OMPI_SERIES: 41 or 50.  Anything else is refused at compile time
 * (configure refuses it first). */
#if OMPI_MAJOR_VERSION == 4 && OMPI_MINOR_VERSION == 1
#define SFIO_OMPI_SERIES 41
#elif OMPI_MAJOR_VERSION == 5 && OMPI_MINOR_VERSION == 0
#define SFIO_OMPI_SERIES 50
#else
#error "ompio-sfio supports Open MPI 4.1.x and 5.0.x only"
#endif

/* Visibility of the exported component symbol (mca_<fw>_<name>_component):
 * 4.1 spells it OMPI_MODULE_DECLSPEC, 5.0 dropped that macro and uses
 * OMPI_DECLSPEC for components. */
#ifdef OMPI_MODULE_DECLSPEC
#define SFIO_COMPONENT_DECLSPEC OMPI_MODULE_DECLSPEC
#else
#define SFIO_COMPONENT_DECLSPEC OMPI_DECLSPEC
#endif

/* fbtl module (ompi/mca/fbtl/fbtl.h): 5.0 appends
 *     bool (*fbtl_check_atomicity)(struct ompio_file_t *fh);
 * which MPI_File_set_atomicity(fh, 1) calls WITHOUT a NULL check.  Use in
 * the designated initialiser of every fbtl module:
 *     SFIO_FBTL_CHECK_ATOMICITY_INIT(my_check_atomicity)
 * (expands to nothing on 4.1, where the member does not exist). */
#if SFIO_OMPI_SERIES >= 50
#define SFIO_OMPI_HAVE_FBTL_CHECK_ATOMICITY 1
#define SFIO_FBTL_CHECK_ATOMICITY_INIT(fn) .fbtl_check_atomicity = (fn),
#else
#define SFIO_OMPI_HAVE_FBTL_CHECK_ATOMICITY 0
#define SFIO_FBTL_CHECK_ATOMICITY_INIT(fn)
#endif

/* What OMPIO_MCA_GET(fh, cycle_buffer_size) must return so that OMPIO's
 * independent read/write paths make one fbtl call per MPI call.
 * 4.1: "-1" is an explicit special case (bytes_per_cycle = max_data).
 * 5.0: the special case is gone; the value becomes a size_t
 * bytes_per_cycle, cycles = ceil(max_data / bytes_per_cycle).  -1 would
 * still work only through the signed-to-size_t conversion, so the suite
 * returns the largest int instead: one cycle for any call below 2 GiB per
 * rank (a larger call is cut into 2 GiB cycles, each still atomic). */
#if SFIO_OMPI_SERIES >= 50
#define SFIO_OMPIO_CYCLE_ONE_CALL INT_MAX
#else
#define SFIO_OMPIO_CYCLE_ONE_CALL (-1)
#endif

/* OPAL's mutex header moved (opal/threads -> opal/mca/threads). */
#if SFIO_OMPI_SERIES >= 50
#define SFIO_OPAL_MUTEX_HEADER "opal/mca/threads/mutex.h"
#else
#define SFIO_OPAL_MUTEX_HEADER "opal/threads/mutex.h"
#endif

/* Stock component names that differ (tests, benchmarks, messages). */
#if SFIO_OMPI_SERIES >= 50
#define SFIO_OMPI_STOCK_ROMIO "romio341"
#define SFIO_OMPI_HAVE_FCOLL_TWO_PHASE 0
#else
#define SFIO_OMPI_STOCK_ROMIO "romio321"
#define SFIO_OMPI_HAVE_FCOLL_TWO_PHASE 1
#endif

/* 5.0 exports mca_common_ompio_base_file_read_all() from libmpi (the
 * read_all every stock 5.0 fcoll uses); 4.1 has no such function.  (5.0's
 * fcoll/base/base.h also declares mca_fcoll_base_file_read_all(), but
 * libmpi does not export it: do not call it.) */
#define SFIO_OMPI_HAVE_COMMON_READ_ALL (SFIO_OMPI_SERIES >= 50)

/* OMPIO_PREPARE_BUF / OMPIO_PREPARE_READ_BUF (common_ompio_buffer.h) take
 * an extra _tmp_buf_size argument in 5.0 (0: max_data).  Use these: */
#if SFIO_OMPI_SERIES >= 50
#define SFIO_OMPIO_PREPARE_BUF(fh, buf, count, dtype, tbuf, conv, max_data, iov, iov_count) \
    OMPIO_PREPARE_BUF(fh, buf, count, dtype, tbuf, conv, max_data, 0, iov, iov_count)
#define SFIO_OMPIO_PREPARE_READ_BUF(fh, buf, count, dtype, tbuf, conv, max_data, iov, iov_count) \
    OMPIO_PREPARE_READ_BUF(fh, buf, count, dtype, tbuf, conv, max_data, 0, iov, iov_count)
#else
#define SFIO_OMPIO_PREPARE_BUF(fh, buf, count, dtype, tbuf, conv, max_data, iov, iov_count) \
    OMPIO_PREPARE_BUF(fh, buf, count, dtype, tbuf, conv, max_data, iov, iov_count)
#define SFIO_OMPIO_PREPARE_READ_BUF(fh, buf, count, dtype, tbuf, conv, max_data, iov, iov_count) \
    OMPIO_PREPARE_READ_BUF(fh, buf, count, dtype, tbuf, conv, max_data, iov, iov_count)
#endif

/* opal_info_get() changed signature: 4.1 copies into (valuelen, char *),
 * 5.0 returns a reference-counted opal_cstring_t.  One call for both:
 * copies the value of key (truncated to len - 1 bytes) into value and sets
 * *flag_p to 1 when the key is present, 0 otherwise.  Returns an OPAL
 * error code.  (Hints such as cb_nodes, cb_buffer_size for fcoll.) */
#include <string.h>
#include "opal/util/info.h"

static inline int mca_common_sfio_info_get(opal_info_t *info, const char *key, char *value,
                                           size_t len, int *flag_p)
{
    *flag_p = 0;
    if (NULL == info || 0 == len) {
        return OPAL_SUCCESS;
    }
#if SFIO_OMPI_SERIES >= 50
    opal_cstring_t *str = NULL;
    int rc = opal_info_get(info, key, &str, flag_p);
    if (OPAL_SUCCESS == rc && *flag_p && NULL != str) {
        strncpy(value, str->string, len - 1);
        value[len - 1] = '\0';
    }
    if (NULL != str) {
        OBJ_RELEASE(str);
    }
    return rc;
#else
    int vlen = len - 1 > (size_t) MPI_MAX_INFO_VAL ? MPI_MAX_INFO_VAL : (int) (len - 1);
    int rc = opal_info_get(info, key, vlen, value, flag_p);
    if (OPAL_SUCCESS == rc && *flag_p) {
        value[vlen] = '\0';
    }
    return rc;
#endif
}

#endif
