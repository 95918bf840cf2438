/*
 * fs/versioned: POSIX file-system operations for OMPIO with the suite's
 * engine behind them.  (The per-file version store for atomic mode joins
 * this component with the versioned-atomicity work.)
 */
#ifndef MCA_FS_VERSIONED_H
#define MCA_FS_VERSIONED_H

#include "ompi_config.h"
#include "sfio_ompi_compat.h"
#include "ompi/mca/fs/fs.h"
#include "ompi/mca/common/ompio/common_ompio.h"

BEGIN_C_DECLS

extern int mca_fs_versioned_priority;
extern int mca_fs_versioned_verbose;
extern int mca_fs_versioned_output;
extern bool mca_fs_versioned_store;
extern char **mca_fs_versioned_store_dir_storage;   /* heap cell: see the component */
extern bool mca_fs_versioned_private_objects;
extern bool mca_fs_versioned_journal_private;
extern int mca_fs_versioned_fold_by;
extern size_t mca_fs_versioned_fold_cache;
extern size_t mca_fs_versioned_fold_max_gap;
extern size_t mca_fs_versioned_fold_window;
extern long mca_fs_versioned_defer_max;
extern size_t mca_fs_versioned_defer_piece_max;
extern size_t mca_fs_versioned_objects_max_ranges;
extern size_t mca_fs_versioned_store_max_log_bytes;
extern size_t mca_fs_versioned_store_max_versions;

SFIO_COMPONENT_DECLSPEC extern mca_fs_base_component_2_0_0_t mca_fs_versioned_component;

struct mca_fs_base_module_1_0_0_t *mca_fs_versioned_component_file_query(ompio_file_t *fh,
                                                                         int *priority);

END_C_DECLS

#endif
