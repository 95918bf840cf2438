/*
 * sfio_fcoll_params: MCA enums of fcoll/adaptive (algorithm, placement,
 * storage kind), registered through the engine so their values are named.
 */
#include "sfio_fcoll_int.h"

static void algorithm_entry(int i, int *value, const char **name, const char **help)
{
    *value = mca_common_sfio_coll_algs[i].id;
    *name = mca_common_sfio_coll_algs[i].name;
    *help = mca_common_sfio_coll_algs[i].help;
}

int mca_common_sfio_fcoll_algorithm_register(const mca_base_component_t *c, int *storage)
{
    return mca_common_sfio_component_register_table(
        c, "algorithm", "sfio_fcoll_algorithm", "Collective algorithm (default auto):",
        MCA_COMMON_SFIO_COLL_NALGS, algorithm_entry, MCA_COMMON_SFIO_COLL_AUTO, OPAL_INFO_LVL_5,
        storage);
}

int mca_common_sfio_fcoll_placement_register(const mca_base_component_t *c, int *placement,
                                             char ***emulate_cell)
{
    static mca_base_var_enum_value_t values[] = {
        { MCA_COMMON_SFIO_PLACE_SPREAD, "spread" },
        { MCA_COMMON_SFIO_PLACE_RANK, "rank" },
        { 0, NULL }
    };
    int rc = mca_common_sfio_component_register_enum(c, "placement", "sfio_fcoll_placement",
        values, MCA_COMMON_SFIO_PLACE_SPREAD,
        "Where aggregators run: spread (default): round-robin over nodes (counts per node "
        "differ by at most one), then over the sockets of each node, and a group's "
        "aggregator is its member on the least-loaded node; rank: spread over rank numbers "
        "only, blind to nodes (with block mapping several aggregators can share one node's "
        "link while other nodes have none)",
        OPAL_INFO_LVL_5, placement);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (NULL == mca_common_sfio_component_register_string(c, emulate_cell, "emulate_nodes",
            "Pretend the ranks run on N nodes, to test placement on one machine: block:N "
            "(N nodes of consecutive ranks) or cyclic:N (rank r on node r % N); empty "
            "(default): the real nodes (host names) and sockets (hwloc binding)")) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return OPAL_SUCCESS;
}

int mca_common_sfio_fcoll_storage_register(const mca_base_component_t *c, int *storage)
{
    return mca_common_sfio_storage_register(c,
        "What kind of storage the file is on, for the automatic choices that differ: auto "
        "(default): statfs says (NFS, Lustre, GPFS, BeeGFS, CephFS, OrangeFS, CIFS, AFS are "
        "network, the rest local); local: one node's file system or page cache (a write is "
        "a memory copy: reads may go individual, aggregators are capped by "
        "local_aggregators_per_cpu); network: every client's link to the storage is the "
        "limit (always aggregate, as many aggregators as the data asks for).  Set it where "
        "statfs cannot tell, e.g. a FUSE mount of remote storage or an emulation",
        storage);
}
