/*
 * Internal header of the OMPIO adapter (sfio_ompio_*.c): what its files
 * share.  Not installed; components see sfio_ompio.h only.
 */
#ifndef MCA_COMMON_SFIO_OMPIO_INT_H
#define MCA_COMMON_SFIO_OMPIO_INT_H

#include "ompi_config.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "ompi/request/request.h"
#include "ompi/mca/fs/base/base.h"
#include "ompi/datatype/ompi_datatype.h"
#include "opal/util/output.h"
#include "opal/util/path.h"
#include "opal/util/show_help.h"
#include "opal/sys/atomic.h"
#include "opal/mca/hwloc/hwloc-internal.h"
#include "ompi/proc/proc.h"

#include "sfio_ompio.h"
#include "sfio_component.h"
#include "sfio_posixio.h"
#include "sfio_async.h"
#include "sfio_locks.h"

/* The file's unreported write error (0: none), cleared. */
int sfio_ompio_take_unreported(ompio_file_t *fh);

/* A blocking fbtl call failed with -errno e: kept for sync and close
 * (over a stock fs, the fs proxy reports it at sync). */
void sfio_ompio_note_unreported(ompio_file_t *fh, int e);

/* Takes f off the list, puts the real fs module back, frees f (its
 * store is closed by then). */
void sfio_ompio_file_free(mca_common_sfio_file_t *f);

/* A new state for fh; a state left for the same handle address by a file
 * whose close never reached the suite is dropped first. */
mca_common_sfio_file_t *sfio_ompio_file_new(ompio_file_t *fh, bool served_by_fs);

/* Whether the group is in atomic mode, as rank 0 set it: the same on
 * every rank, where a rank's own f_atomicity may differ after a
 * set_atomicity whose flags differed.  Collectives branch on this. */
bool sfio_ompio_group_atomic(const ompio_file_t *fh, const mca_common_sfio_file_t *f);

/* Whether some rank may have been in atomic mode since the open, and so
 * may have touched the store (true where the suite does not see
 * set_atomicity); the same on every rank. */
bool sfio_ompio_atomic_ever(const mca_common_sfio_file_t *f);

/* The magic of fh's file system (f->fs_type), asked once per file; f may
 * be NULL (asked every time). */
long sfio_ompio_fs_type(const ompio_file_t *fh, mca_common_sfio_file_t *f);

/* Puts the suite's parameter callback in front of OMPIO's for fh (in
 * atomic mode, one fbtl call per MPI call); untrack restores it. */
int sfio_ompio_track(ompio_file_t *fh);

void sfio_ompio_untrack(ompio_file_t *fh);

/* The proxies fs/versioned puts in front of OMPIO at open, and takes
 * away at close (see sfio_ompio_hooks.c). */
void sfio_ompio_hooks_install_at_open(mca_common_sfio_file_t *f);

void sfio_ompio_hooks_remove_at_close(mca_common_sfio_file_t *f);

/* Collective (in the first MPI_File_set_atomicity(fh, 1) across nodes, or
 * in the open of a file whose set_atomicity cannot be wrapped): joins
 * the file's coordination service for the store waiting for it and makes
 * it f->store; where the service does not start, drops the store (said at
 * verbose level 1) and opens the list-lock service if the lock modes now
 * want it.  The same outcome on every rank. */
void sfio_ompio_fs_store_join(ompio_file_t *fh, mca_common_sfio_file_t *f);

/* Puts the suite's set_atomicity in front of io/ompio's for fh's
 * ompi_file_t (see sfio_ompio_hooks.c); false where fh is not a user's
 * file handle (OMPIO's internal files) or already wrapped. */
bool sfio_ompio_hooks_wrap_set_atomicity(mca_common_sfio_file_t *f);

/* Collective at the collective point inside MPI_File_open (and in the
 * first set_atomicity(fh, 1) where the store's service did not start):
 * opens f's list-lock service when the parameters ask for it and it is
 * not open; without it (or when it cannot start) the lock modes use
 * fcntl.  Always MPI_SUCCESS. */
int sfio_ompio_locksvc_open(ompio_file_t *fh, mca_common_sfio_file_t *f);

/* Collective at close: closes f's service, if any. */
int sfio_ompio_locksvc_close(mca_common_sfio_file_t *f);

/* Collective in set_atomicity, after io/ompio's: the first time rank 0's
 * flag is 1, opens f's gate where auto takes locks on one node over local
 * storage whose file system serializes writes (and the parameter
 * allows).  Always MPI_SUCCESS: without a gate every access locks. */
int sfio_ompio_gate_open(ompio_file_t *fh, mca_common_sfio_file_t *f);

/* At close: closes f's gate, if any. */
int sfio_ompio_gate_close(mca_common_sfio_file_t *f);

#endif
