/*
 * sfio_ompio_gate: the gate of auto's atomic mode on one node over local
 * storage (sfio_gate), as an open file has it: opened at the first
 * set_atomicity(fh, 1), a collective point, on a counter of its own
 * coordination page (shared memory of the node); closed at the file's
 * close.  Where it cannot open, every atomic access takes its range lock,
 * said at verbose level 1.
 */
#include "sfio_ompio_int.h"
#include "sfio_coord.h"
#include "sfio_fsmagic.h"

bool mca_common_sfio_auto_gate = true;

int sfio_ompio_gate_open(ompio_file_t *fh, mca_common_sfio_file_t *f)
{
    /* the same answer on every rank: the parameter, auto_local (agreed at
     * fs open), the access mode and rank 0's flag (see sfio_set_atomicity);
     * read-only files take no lock in auto at all */
    if (!mca_common_sfio_auto_gate || !f->auto_local || !f->atomic_root || f->gate_tried ||
        0 != (fh->f_amode & MPI_MODE_RDONLY)) {
        return MPI_SUCCESS;
    }
    f->gate_tried = true;
    /* the file is the same everywhere, its statfs too; a rank whose statfs
     * says otherwise fails the open for all */
    int local_err = mca_common_sfio_fs_serializes_writes(sfio_ompio_fs_type(fh, f)) ? 0
                                                                                 : -EOPNOTSUPP;
    mca_common_sfio_coord_config_t cfg = { .backend = MCA_COMMON_SFIO_COORD_AUTO };
    mca_common_sfio_coord_t *coord = NULL;
    int rc = mca_common_sfio_coord_open(fh->f_comm, &cfg, 1, local_err, &coord);
    const char *name = fh->f_filename ? fh->f_filename : "";
    if (0 != rc) {
        if (0 == fh->f_rank) {
            opal_output_verbose(1, mca_common_sfio_output,
                                "sfio: %s: no gate for one-call atomic writes (%s): every atomic "
                                "access takes its range lock",
                                name, -EOPNOTSUPP == rc ? "its file system is not known to "
                                                          "serialize writes"
                                                        : strerror(-rc));
        }
        return MPI_SUCCESS;
    }
    f->gate = (mca_common_sfio_gate_t) { .coord = coord, .slot = 0 };
    f->route.valid = false;
    if (0 == fh->f_rank) {
        opal_output_verbose(1, mca_common_sfio_output,
                            "sfio: %s: atomic writes of one system call take no lock (gate on "
                            "%s)", name, coord->ops->name);
    }
    return MPI_SUCCESS;
}

int sfio_ompio_gate_close(mca_common_sfio_file_t *f)
{
    if (NULL == f->gate.coord) {
        return MPI_SUCCESS;
    }
    /* fs close: after OMPIO's barrier, no rank enters again */
    int rc = mca_common_sfio_coord_close_quiesced(f->gate.coord);
    f->gate.coord = NULL;
    f->route.valid = false;
    return 0 == rc ? MPI_SUCCESS : MPI_ERR_OTHER;
}
