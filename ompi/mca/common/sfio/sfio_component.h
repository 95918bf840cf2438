/*
 * sfio_component: what every component of the suite does the same way at
 * open and close: refuse to load into another Open MPI series than the one
 * it was built for, hold the engine, and open its verbose output stream.
 */
#ifndef MCA_COMMON_SFIO_COMPONENT_H
#define MCA_COMMON_SFIO_COMPONENT_H

#include "sfio_export.h"

#include "ompi_config.h"

#include <stdbool.h>

#include "opal/mca/mca.h"

BEGIN_C_DECLS

/* Suite version, used as every component's version. */
#define SFIO_VERSION_MAJOR   0
#define SFIO_VERSION_MINOR   1
#define SFIO_VERSION_RELEASE 0

/* OMPI_SUCCESS when the running libmpi is of the series the component was
 * compiled against; else prints why (once) and returns
 * OMPI_ERR_NOT_SUPPORTED so the component is not used. */
SFIO_EXPORT OMPI_DECLSPEC int mca_common_sfio_component_check_series(const char *framework, const char *component);

/* Every component's open: takes a hold on the engine (one shared library
 * per process, whichever components are loaded) and returns the
 * component's own output stream, prefixed with name.  The engine's stream
 * (mca_common_sfio_output: file, store and shared-pointer messages) gets
 * the highest verbosity of the holders that pass engine_messages. */
SFIO_EXPORT int mca_common_sfio_engine_open(const char *name, int verbosity,
                                            bool engine_messages);

/* Every component's close: closes its stream and drops its hold; the last
 * one stops the engine's threads (request helpers, the non-blocking
 * worker) before Open MPI unloads the components. */
SFIO_EXPORT void mca_common_sfio_engine_close(int output);

/* A component's whole open: check_series, then engine_open with the name
 * "<framework>:<component>" into *output_p.  OMPI_SUCCESS or the reason
 * the component must not be used. */
SFIO_EXPORT int mca_common_sfio_component_open(const char *framework, const char *component,
                                               int verbosity, bool engine_messages,
                                               int *output_p);

/* A component's whole close: engine_close(*output_p), *output_p = -1. */
SFIO_EXPORT int mca_common_sfio_component_close(int *output_p);

/* init_query and file_unquery of components that need neither. */
SFIO_EXPORT int mca_common_sfio_component_init_query(bool enable_progress_threads,
                                                     bool enable_mpi_threads);
struct ompio_file_t;
SFIO_EXPORT int mca_common_sfio_component_file_unquery(struct ompio_file_t *fh);

/* Registers "<component>_fold_by" (auto|owner|domain, see
 * mca_common_sfio_fold_by_t); the enumerator lives in the engine, which
 * outlives the component's DSO. */
SFIO_EXPORT OMPI_DECLSPEC int mca_common_sfio_fold_by_register(const mca_base_component_t *c, int *storage);

/* Registers "<component>_storage" (auto|local|network, see
 * MCA_COMMON_SFIO_STORAGE_* in sfio_posixio.h) with the component's help
 * text, default auto. */
SFIO_EXPORT int mca_common_sfio_storage_register(const mca_base_component_t *c, const char *help,
                                                 int *storage);

/* Registers a string MCA parameter of component c whose storage is a heap
 * cell, and returns that cell (NULL on failure; *cell is NULL when unset).
 * Open MPI 5.0 unloads a DSO component without deregistering its
 * parameters and frees string values through their storage pointer in
 * MPI_Finalize: storage inside the DSO segfaults at exit.  The cell is kept
 * for the life of the process; a second registration reuses it. */
SFIO_EXPORT OMPI_DECLSPEC char **mca_common_sfio_component_register_string(const mca_base_component_t *c,
                                                 char ***cell, const char *name,
                                                 const char *help);

/* Registers the int MCA parameter `name` of component c over the enum
 * values (terminated by a NULL string; static: Open MPI keeps pointers),
 * storage set to dflt first.  OPAL_SUCCESS or an error. */
SFIO_EXPORT int mca_common_sfio_component_register_enum(const mca_base_component_t *c, const char *name,
                                            const char *enum_name,
                                            const mca_base_var_enum_value_t *values,
                                            int dflt, const char *help, int level,
                                            int *storage);

/* One plain MCA parameter of a component.  Its storage holds the default
 * when registered.  Components list their parameters in a table and
 * register them with one call. */
typedef struct mca_common_sfio_param_t {
    const char *name;
    mca_base_var_type_t type;
    void *storage;
    mca_base_var_info_lvl_t level;
    mca_base_var_scope_t scope;
    const char *help;
} mca_common_sfio_param_t;

/* Registers params[0..n) of component c, in order. */
SFIO_EXPORT void mca_common_sfio_component_register_params(const mca_base_component_t *c,
                                                           const mca_common_sfio_param_t *params,
                                                           size_t n);

/* An enum parameter whose values and their help come from one of the
 * engine's tables (atomic modes, collective algorithms): entry(i, ...)
 * gives entry i of count; the help is intro followed by every value. */
typedef void (*mca_common_sfio_enum_entry_fn_t)(int i, int *value, const char **name,
                                                const char **help);
SFIO_EXPORT int mca_common_sfio_component_register_table(const mca_base_component_t *c,
                                                         const char *name, const char *enum_name,
                                                         const char *intro, int count,
                                                         mca_common_sfio_enum_entry_fn_t entry,
                                                         int dflt, int level, int *storage);

END_C_DECLS

#endif
