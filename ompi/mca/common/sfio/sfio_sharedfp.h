/*
 * sfio_sharedfp: the shared file pointer of sharedfp/fetchadd, on top of
 * the coordination service (sfio_coord) and the pointer arithmetic
 * (sfio_sfp).  This is the one file that reads and writes ompio_file_t
 * for the shared pointer (f_sharedfp_data, f_etype_size, the view fields,
 * f_split_coll_req/_in_use); the component only fills the module table.
 *
 * The pointer is slot 0 of the file's coordination service, in view bytes
 * (etypes x etype size), as OMPIO's sharedfp interface expects:
 *   write/read/iwrite/iread_shared  one fetch-and-add of the access size,
 *                                   then the explicit-offset call;
 *   write/read_ordered (+begin/end) the service's ordered round where it
 *                                   has one (ofi: one request per rank to
 *                                   the host), else one exclusive prefix
 *                                   sum of the sizes (MPI_Exscan), the last
 *                                   rank fetch-adds the total once and
 *                                   broadcasts the base; then each rank's
 *                                   explicit-offset call (or the collective
 *                                   one, by option);
 *   seek                            barrier (every earlier access has taken
 *                                   its bytes), rank 0 stores, broadcast of
 *                                   the result (nobody moves on before);
 *   get_position                    one load.
 * OMPIO calls seek(0, SET) at the end of every set_view, which resets the
 * pointer as MPI requires.
 */
#ifndef MCA_COMMON_SFIO_SHAREDFP_H
#define MCA_COMMON_SFIO_SHAREDFP_H

#include "sfio_export.h"

#include "ompi_config.h"
#include "ompi/mca/common/ompio/common_ompio.h"
#include "ompi/mca/sharedfp/sharedfp.h"

#include "sfio_coord.h"

BEGIN_C_DECLS

typedef struct mca_common_sfio_sharedfp_options_t {
    mca_common_sfio_coord_config_t coord;      /* backend (AUTO, SHM, OFI or RMA) and its settings */
    bool direct;                               /* small contiguous accesses: one fbtl call */
    bool ordered_collective;                   /* ordered data by *_at_all (else *_at) */
} mca_common_sfio_sharedfp_options_t;

/* The component's file query, collective over fh->f_comm: creates the
 * file's coordination service and keeps it for _open (or _unquery).
 * Returns false, the same on every rank, when the service cannot be
 * created for these ranks (shm asked for across nodes; ofi where no
 * libfabric provider starts; rma without an MPI window, as over TCP with
 * Open MPI 4.1): the component then steps aside and Open MPI selects a
 * stock one.  Sets *why_p to the reason. */
SFIO_EXPORT bool mca_common_sfio_sharedfp_query(ompio_file_t *fh,
                                     const mca_common_sfio_sharedfp_options_t *options,
                                     const char **why_p);
/* Collective: another component won the file; frees what _query made. */
SFIO_EXPORT void mca_common_sfio_sharedfp_unquery(ompio_file_t *fh);
/* Whether _query took fh (its service waits for _open or _unquery). */
SFIO_EXPORT bool mca_common_sfio_sharedfp_taken(const ompio_file_t *fh);

/* The page of one node's shared pointer, made inside fs/versioned's open
 * where _query left it to that open (mca_common_sfio_file_t's
 * sharedfp_page_wanted): the open's root creates it and puts its name in
 * the open's broadcast, the other ranks attach to it, and after the
 * open's agreement every rank settles (everywhere: attached on every
 * rank; else _open makes the service by its own collectives).  Return 0
 * or a negative errno, this rank's. */
int mca_common_sfio_sharedfp_page_create(const ompio_file_t *fh, char *name, size_t name_size);
int mca_common_sfio_sharedfp_page_attach(const ompio_file_t *fh, const char *name);
void mca_common_sfio_sharedfp_page_settle(const ompio_file_t *fh, bool everywhere,
                                          const char *name);

/* sfio_sharedfp_probe.c: from the component's init_query.  Stock
 * sharedfp components loaded with a lower priority than self_priority
 * whose query probes the file system at every open (lockedfile, sm) are
 * asked after self, and probe only files self did not take.  Returns how
 * many were wrapped (0: nothing changed).  _restore, from the component's
 * close, puts back the queries of those still loaded. */
SFIO_EXPORT int mca_common_sfio_sharedfp_probe_skip(const mca_base_component_t *self,
                                                    int self_priority);
SFIO_EXPORT void mca_common_sfio_sharedfp_probe_restore(void);

SFIO_EXPORT int mca_common_sfio_sharedfp_open(struct ompi_communicator_t *comm, const char *filename,
                                  int amode, struct opal_info_t *info, ompio_file_t *fh,
                                  const mca_common_sfio_sharedfp_options_t *options);
SFIO_EXPORT int mca_common_sfio_sharedfp_close(ompio_file_t *fh);

SFIO_EXPORT int mca_common_sfio_sharedfp_seek(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE offset, int whence);
SFIO_EXPORT int mca_common_sfio_sharedfp_get_position(ompio_file_t *fh, OMPI_MPI_OFFSET_TYPE *offset);

SFIO_EXPORT int mca_common_sfio_sharedfp_write(ompio_file_t *fh, const void *buf, int count,
                                   struct ompi_datatype_t *datatype, ompi_status_public_t *status);
SFIO_EXPORT int mca_common_sfio_sharedfp_read(ompio_file_t *fh, void *buf, int count,
                                  struct ompi_datatype_t *datatype, ompi_status_public_t *status);
SFIO_EXPORT int mca_common_sfio_sharedfp_iwrite(ompio_file_t *fh, const void *buf, int count,
                                    struct ompi_datatype_t *datatype, ompi_request_t **request);
SFIO_EXPORT int mca_common_sfio_sharedfp_iread(ompio_file_t *fh, void *buf, int count,
                                   struct ompi_datatype_t *datatype, ompi_request_t **request);

SFIO_EXPORT int mca_common_sfio_sharedfp_write_ordered(ompio_file_t *fh, const void *buf, int count,
                                           struct ompi_datatype_t *datatype,
                                           ompi_status_public_t *status);
SFIO_EXPORT int mca_common_sfio_sharedfp_read_ordered(ompio_file_t *fh, void *buf, int count,
                                          struct ompi_datatype_t *datatype,
                                          ompi_status_public_t *status);
SFIO_EXPORT int mca_common_sfio_sharedfp_write_ordered_begin(ompio_file_t *fh, const void *buf, int count,
                                                 struct ompi_datatype_t *datatype);
SFIO_EXPORT int mca_common_sfio_sharedfp_write_ordered_end(ompio_file_t *fh, const void *buf,
                                               ompi_status_public_t *status);
SFIO_EXPORT int mca_common_sfio_sharedfp_read_ordered_begin(ompio_file_t *fh, void *buf, int count,
                                                struct ompi_datatype_t *datatype);
SFIO_EXPORT int mca_common_sfio_sharedfp_read_ordered_end(ompio_file_t *fh, void *buf,
                                              ompi_status_public_t *status);

END_C_DECLS

#endif
