/*
 * sfio_component: shared open/close steps of the suite's components.
 */
#include "ompi_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include "mpi.h"
#include "opal/util/output.h"
#include "opal/mca/base/mca_base_var.h"

#include "sfio_component.h"
#include "sfio_appmat.h"
#include "sfio_async.h"
#include "sfio_fabric.h"
#include "sfio_posixio.h"
#include "sfio_ompio.h"

int mca_common_sfio_component_check_series(const char *framework, const char *component)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, major = -1, minor = -1;

    /* Allowed before MPI_Init; reports the libmpi actually loaded. */
    if (MPI_SUCCESS != MPI_Get_library_version(version, &len)) {
        return OMPI_SUCCESS;
    }
    const char *v = strstr(version, "Open MPI v");
    if (NULL == v || 2 != sscanf(v, "Open MPI v%d.%d", &major, &minor)) {
        return OMPI_SUCCESS;   /* unknown format: trust the MCA version check */
    }
    if (major == OMPI_MAJOR_VERSION && minor == OMPI_MINOR_VERSION) {
        return OMPI_SUCCESS;
    }
    char built[32], running[32];
    snprintf(built, sizeof(built), "%d.%d", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION);
    snprintf(running, sizeof(running), "%d.%d", major, minor);
    char name[64];
    snprintf(name, sizeof(name), "%s/%s", framework, component);
    mca_common_sfio_show_help("wrong-ompi-series", true, name, built, running, framework,
                              component);
    return OMPI_ERR_NOT_SUPPORTED;
}

/* Opens an output stream prefixed with name (none when NULL). */
static int output_open(const char *name, int verbosity)
{
    opal_output_stream_t lds;
    char prefix[64];

    OBJ_CONSTRUCT(&lds, opal_output_stream_t);
    if (NULL != name) {
        snprintf(prefix, sizeof(prefix), "[%s] ", name);
        lds.lds_prefix = prefix;
    }
    lds.lds_want_stderr = true;
    int output = opal_output_open(&lds);
    OBJ_DESTRUCT(&lds);
    opal_output_set_verbosity(output, verbosity);
    return output;
}

/* The engine's process-wide state: how many components hold it and the
 * verbosity of its own stream (the highest of theirs).  Components open
 * and close in MPI_Init and MPI_Finalize, one thread, but a lock costs
 * nothing there. */
static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;
static int engine_users;
static int engine_verbosity;

int mca_common_sfio_engine_open(const char *name, int verbosity, bool engine_messages)
{
    int own_verbosity = verbosity;
    pthread_mutex_lock(&engine_lock);
    if (!engine_messages) {
        verbosity = 0;   /* the component's own stream only */
    }
    if (0 == engine_users++) {
        engine_verbosity = verbosity;
        /* engine messages name themselves ("sfio: ...") */
        mca_common_sfio_output = output_open(NULL, verbosity);
    } else if (verbosity > engine_verbosity) {
        engine_verbosity = verbosity;
        opal_output_set_verbosity(mca_common_sfio_output, verbosity);
    }
    pthread_mutex_unlock(&engine_lock);
    return output_open(name, own_verbosity);
}

void mca_common_sfio_engine_close(int output)
{
    if (output >= 0) {
        opal_output_close(output);
    }
    pthread_mutex_lock(&engine_lock);
    if (engine_users > 0 && 0 == --engine_users) {
        /* the last component: stop the threads before Open MPI unloads
         * the components (the engine itself stays mapped: -z nodelete) */
        mca_common_sfio_appmat_flush();
        mca_common_sfio_async_shutdown();
        mca_common_sfio_posix_shutdown();
        mca_common_sfio_fabric_stop();
        if (mca_common_sfio_output >= 0) {
            opal_output_close(mca_common_sfio_output);
        }
        mca_common_sfio_output = -1;
    }
    pthread_mutex_unlock(&engine_lock);
}

int mca_common_sfio_component_open(const char *framework, const char *component,
                                   int verbosity, bool engine_messages, int *output_p)
{
    char name[64];
    int rc = mca_common_sfio_component_check_series(framework, component);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    (void) snprintf(name, sizeof(name), "%s:%s", framework, component);
    *output_p = mca_common_sfio_engine_open(name, verbosity, engine_messages);
    return OMPI_SUCCESS;
}

int mca_common_sfio_component_close(int *output_p)
{
    mca_common_sfio_engine_close(*output_p);
    *output_p = -1;
    return OMPI_SUCCESS;
}

int mca_common_sfio_component_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    return OMPI_SUCCESS;
}

int mca_common_sfio_component_file_unquery(struct ompio_file_t *fh)
{
    (void) fh;
    return OMPI_SUCCESS;
}

char **mca_common_sfio_component_register_string(const mca_base_component_t *c,
                                                 char ***cell, const char *name,
                                                 const char *help)
{
    if (NULL == *cell) {
        *cell = calloc(1, sizeof(char *));
        if (NULL == *cell) {
            return NULL;
        }
    }
    **cell = NULL;
    (void) mca_base_component_var_register(c, name, help, MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0,
                                           OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY, *cell);
    return *cell;
}

int mca_common_sfio_component_register_enum(const mca_base_component_t *c, const char *name,
                                            const char *enum_name,
                                            const mca_base_var_enum_value_t *values,
                                            int dflt, const char *help, int level,
                                            int *storage)
{
    mca_base_var_enum_t *new_enum = NULL;
    int rc = mca_base_var_enum_create(enum_name, values, &new_enum);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    *storage = dflt;
    rc = mca_base_component_var_register(c, name, help, MCA_BASE_VAR_TYPE_INT, new_enum, 0, 0,
                                         level, MCA_BASE_VAR_SCOPE_READONLY, storage);
    OBJ_RELEASE(new_enum);
    return rc < 0 ? rc : OPAL_SUCCESS;
}

void mca_common_sfio_component_register_params(const mca_base_component_t *c,
                                               const mca_common_sfio_param_t *params, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        (void) mca_base_component_var_register(c, params[i].name, params[i].help,
                                               params[i].type, NULL, 0, 0, params[i].level,
                                               params[i].scope, params[i].storage);
    }
}

int mca_common_sfio_component_register_table(const mca_base_component_t *c, const char *name,
                                             const char *enum_name, const char *intro,
                                             int count, mca_common_sfio_enum_entry_fn_t entry,
                                             int dflt, int level, int *storage)
{
    /* Open MPI keeps pointers to the values and the help: they live as
     * long as the process (the engine is never unloaded) */
    mca_base_var_enum_value_t *values = calloc((size_t) count + 1, sizeof(*values));
    size_t cap = strlen(intro) + 1, used = 0;
    for (int i = 0; i < count; ++i) {
        const char *n, *h;
        entry(i, &values[i].value, &n, &h);
        values[i].string = n;
        cap += strlen(n) + strlen(h) + 4;
    }
    char *help = malloc(cap);
    if (NULL == values || NULL == help) {
        free(values);
        free(help);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    used = (size_t) snprintf(help, cap, "%s", intro);
    for (int i = 0; i < count && used < cap; ++i) {
        int v;
        const char *n, *h;
        entry(i, &v, &n, &h);
        used += (size_t) snprintf(help + used, cap - used, " %s: %s;", n, h);
    }
    return mca_common_sfio_component_register_enum(c, name, enum_name, values, dflt, help, level,
                                                   storage);
}

int mca_common_sfio_storage_register(const mca_base_component_t *c, const char *help,
                                     int *storage)
{
    static mca_base_var_enum_value_t values[] = {
        { MCA_COMMON_SFIO_STORAGE_AUTO, "auto" },
        { MCA_COMMON_SFIO_STORAGE_LOCAL, "local" },
        { MCA_COMMON_SFIO_STORAGE_NETWORK, "network" },
        { 0, NULL }
    };
    return mca_common_sfio_component_register_enum(c, "storage", "sfio_storage", values,
                                                   MCA_COMMON_SFIO_STORAGE_AUTO, help,
                                                   OPAL_INFO_LVL_5, storage);
}

int mca_common_sfio_fold_by_register(const mca_base_component_t *c, int *storage)
{
    static mca_base_var_enum_value_t values[] = {
        { MCA_COMMON_SFIO_FOLD_BY_AUTO, "auto" },
        { MCA_COMMON_SFIO_FOLD_BY_OWNER, "owner" },
        { MCA_COMMON_SFIO_FOLD_BY_DOMAIN, "domain" },
        { 0, NULL }
    };
    return mca_common_sfio_component_register_enum(c, "fold_by", "sfio_fold_by", values,
        MCA_COMMON_SFIO_FOLD_BY_AUTO,
        "Who writes back versioned bytes at a fold (sync, close, set_view, ...): owner (each "
        "rank the bytes it won, from its own log and its copy in memory; nothing is read back), "
        "domain (each rank one contiguous share in large windows, reading other ranks' logs and "
        "the bytes between pieces), auto (default): owner when the versioned pieces average at "
        "least fold_max_gap bytes, else domain",
        OPAL_INFO_LVL_9, storage);
}
