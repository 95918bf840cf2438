/*
 * sfio_sharedfp_probe: the per-open probes of stock sharedfp components,
 * skipped for the files sharedfp/fetchadd serves.
 *
 * At every MPI_File_open OMPIO asks each loaded sharedfp component
 * whether it could serve the file.  lockedfile answers by creating,
 * locking and removing <file>.locktest.<rank> next to the file on every
 * rank (metadata operations and a lock request on the file's server, per
 * rank and per open), sm by creating and removing a file in the job's
 * session directory, even where another component wins.  Their answers
 * matter only where fetchadd does not take the file (it stepped aside,
 * or one of them was given the higher priority).  So, when they are
 * loaded with a lower priority, fetchadd is asked first (its entry in the
 * framework's list moves in front of theirs) and their queries are
 * wrapped: a file fetchadd took is not probed, any other is, as before.
 * Undone at fetchadd's close for those still loaded.
 */
#include "ompi_config.h"

#include <string.h>

#include "opal/class/opal_list.h"
#include "opal/mca/base/base.h"
#include "opal/mca/base/mca_base_var.h"
#include "ompi/mca/sharedfp/sharedfp.h"
#include "ompi/mca/sharedfp/base/base.h"

#include "sfio_sharedfp.h"

typedef mca_sharedfp_base_component_file_query_1_0_0_fn_t query_fn_t;

static struct mca_sharedfp_base_module_1_0_0_t *lockedfile_unless_taken(struct ompio_file_t *fh,
                                                                        int *priority);
static struct mca_sharedfp_base_module_1_0_0_t *sm_unless_taken(struct ompio_file_t *fh,
                                                                int *priority);

/* The stock components whose query probes the file system, and the
 * query each of them had before it was wrapped. */
static struct {
    const char *name;
    query_fn_t wrapper;
    mca_sharedfp_base_component_2_0_0_t *component;   /* NULL: not wrapped */
    query_fn_t query;
} probes[] = {
    { "lockedfile", lockedfile_unless_taken, NULL, NULL },
    { "sm", sm_unless_taken, NULL, NULL },
};
#define NPROBES (sizeof(probes) / sizeof(probes[0]))

static struct mca_sharedfp_base_module_1_0_0_t *query_unless_taken(size_t i,
                                                                   struct ompio_file_t *fh,
                                                                   int *priority)
{
    if (mca_common_sfio_sharedfp_taken(fh)) {
        *priority = 0;
        return NULL;   /* fetchadd serves it: this component would lose anyway */
    }
    return probes[i].query(fh, priority);
}

static struct mca_sharedfp_base_module_1_0_0_t *lockedfile_unless_taken(struct ompio_file_t *fh,
                                                                        int *priority)
{
    return query_unless_taken(0, fh, priority);
}

static struct mca_sharedfp_base_module_1_0_0_t *sm_unless_taken(struct ompio_file_t *fh,
                                                                int *priority)
{
    return query_unless_taken(1, fh, priority);
}

static mca_base_component_list_item_t *listed(const char *name,
                                              const mca_base_component_t *component)
{
    mca_base_component_list_item_t *cli;
    OPAL_LIST_FOREACH(cli, &ompi_sharedfp_base_framework.framework_components,
                      mca_base_component_list_item_t) {
        if ((NULL != component && cli->cli_component == component) ||
            (NULL != name && 0 == strcmp(cli->cli_component->mca_component_name, name))) {
            return cli;
        }
    }
    return NULL;
}

/* A component's priority parameter, or -1 where it has none. */
static int priority_of(const char *name)
{
    const int *value = NULL;
    int idx = mca_base_var_find("ompi", "sharedfp", name, "priority");
    if (idx < 0 || OPAL_SUCCESS != mca_base_var_get_value(idx, &value, NULL, NULL) ||
        NULL == value) {
        return -1;
    }
    return *value;
}

int mca_common_sfio_sharedfp_probe_skip(const mca_base_component_t *self, int self_priority)
{
    opal_list_t *list = &ompi_sharedfp_base_framework.framework_components;
    mca_base_component_list_item_t *mine = listed(NULL, self), *first = NULL, *cli;
    int wrapped = 0;
    if (NULL == mine) {
        return 0;
    }
    for (size_t i = 0; i < NPROBES; ++i) {
        mca_base_component_list_item_t *theirs = listed(probes[i].name, NULL);
        int prio = NULL == theirs ? -1 : priority_of(probes[i].name);
        if (NULL != probes[i].component || NULL == theirs ||
            2 != theirs->cli_component->mca_type_major_version ||
            0 != theirs->cli_component->mca_type_minor_version ||
            prio < 0 || prio >= self_priority) {
            continue;   /* not loaded, an interface this was not written for, or it may win */
        }
        probes[i].component = (mca_sharedfp_base_component_2_0_0_t *) theirs->cli_component;
        probes[i].query = probes[i].component->sharedfpm_file_query;
        probes[i].component->sharedfpm_file_query = probes[i].wrapper;
        wrapped++;
    }
    if (0 == wrapped) {
        return 0;
    }
    /* fetchadd before every wrapped component: moved from the framework's
     * init_query loop, which has read the next entry already, so moving
     * the entry being queried is safe there. */
    OPAL_LIST_FOREACH(cli, list, mca_base_component_list_item_t) {
        if (cli == mine) {
            break;
        }
        for (size_t i = 0; NULL == first && i < NPROBES; ++i) {
            if (NULL != probes[i].component && cli->cli_component ==
                                                   &probes[i].component->sharedfpm_version) {
                first = cli;
            }
        }
    }
    if (NULL != first) {
        opal_list_remove_item(list, &mine->super);
        opal_list_insert_pos(list, &first->super, &mine->super);
    }
    return wrapped;
}

void mca_common_sfio_sharedfp_probe_restore(void)
{
    for (size_t i = 0; i < NPROBES; ++i) {
        if (NULL == probes[i].component) {
            continue;
        }
        /* The framework closes and unloads its components one by one:
         * only one still listed is still there to be restored. */
        if (NULL != listed(NULL, &probes[i].component->sharedfpm_version)) {
            probes[i].component->sharedfpm_file_query = probes[i].query;
        }
        probes[i].component = NULL;
        probes[i].query = NULL;
    }
}
