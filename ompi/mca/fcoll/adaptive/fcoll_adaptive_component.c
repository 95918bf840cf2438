/*
 * fcoll/adaptive component: parameters, open/close, selection.
 */
#include "ompi_config.h"

#include "opal/util/output.h"
#include "ompi/mca/fcoll/fcoll.h"

#include "fcoll_adaptive.h"
#include "sfio_component.h"

/* stock fcolls: 10, raised by their file_query to 50 (vulcan, any
 * non-Lustre file) and 100 (individual at np <= 2) */
int mca_fcoll_adaptive_priority = 110;
int mca_fcoll_adaptive_output = -1;
mca_common_sfio_fcoll_options_t mca_fcoll_adaptive_options;

static int adaptive_verbose = 0;
static int adaptive_algorithm = MCA_COMMON_SFIO_COLL_AUTO;
static int adaptive_num_aggregators = 0;
static int adaptive_max_aggregators = 0;
static size_t adaptive_k = 256 * 1024;
static size_t adaptive_stripe_size = 0;
static size_t adaptive_read_max_gap = 4096;
static size_t adaptive_cycle_bytes = 0;
static int adaptive_read_extent_ratio = -1;
static int adaptive_local_aggregators_per_cpu = 1;
static int adaptive_storage = MCA_COMMON_SFIO_STORAGE_AUTO;
static int adaptive_placement = MCA_COMMON_SFIO_PLACE_SPREAD;
static int adaptive_async_io = -1;
static size_t adaptive_write_cycle_bytes = 1 << 20;
static size_t adaptive_read_cycle_bytes = 1 << 20;
static int adaptive_async_min_cycles = 8;
static size_t adaptive_async_min_cycle_bytes = 64 * 1024;
static size_t adaptive_individual_min_run = 4096;
static int adaptive_links_per_node = 1;
static char **adaptive_emulate_nodes = NULL;    /* heap cell: outlives the DSO */
static char **adaptive_matrix_file = NULL;      /* heap cell: outlives the DSO */

static void options_from_params(void)
{
    mca_common_sfio_fcoll_options_t o = {
        .algorithm = adaptive_algorithm,
        .num_aggregators = adaptive_num_aggregators,
        .max_aggregators = adaptive_max_aggregators,
        .k = adaptive_k,
        .stripe_size = adaptive_stripe_size,
        .read_max_gap = adaptive_read_max_gap,
        .cycle_bytes = adaptive_cycle_bytes,
        .read_extent_ratio = adaptive_read_extent_ratio,
        .local_aggregators_per_cpu = adaptive_local_aggregators_per_cpu,
        .storage = adaptive_storage,
        .async_io = adaptive_async_io,
        .write_cycle_bytes = adaptive_write_cycle_bytes,
        .read_cycle_bytes = adaptive_read_cycle_bytes,
        .async_min_cycles = adaptive_async_min_cycles,
        .async_min_cycle_bytes = adaptive_async_min_cycle_bytes,
        .individual_min_run = adaptive_individual_min_run,
        .links_per_node = adaptive_links_per_node,
        .placement = adaptive_placement,
        .emulate_nodes = NULL != adaptive_emulate_nodes ? *adaptive_emulate_nodes : NULL,
        .matrix_file = NULL != adaptive_matrix_file ? *adaptive_matrix_file : NULL,
        .output = mca_fcoll_adaptive_output,
    };
    mca_fcoll_adaptive_options = o;
}


/* The plain parameters (defaults: the variables' initial values). */
static const mca_common_sfio_param_t params[] = {
    { "priority", MCA_BASE_VAR_TYPE_INT, &mca_fcoll_adaptive_priority,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Priority of the fcoll adaptive component (stock fcolls raise theirs to at most 100 "
      "per file: vulcan 50, individual 100 at np <= 2; the highest wins)" },
    { "verbose", MCA_BASE_VAR_TYPE_INT, &adaptive_verbose,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_LOCAL,
      "Verbosity of the fcoll adaptive component (0: silent, 1: rank 0 prints each "
      "collective call's algorithm, aggregator count and cycles, and the aggregators "
      "as rank@node)" },
    { "num_aggregators", MCA_BASE_VAR_TYPE_INT, &adaptive_num_aggregators,
      OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY,
      "Number of aggregators; 0 (default): automatic (Gabriel's OMPIO: groups from the view or a "
      "Cartesian communicator, merged below k and split above k bytes).  The cb_nodes "
      "hint takes precedence over both" },
    { "max_aggregators", MCA_BASE_VAR_TYPE_INT, &adaptive_max_aggregators,
      OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY,
      "Upper bound of the automatic aggregator count; 0 (default): none.  For file "
      "systems whose aggregate bandwidth stops growing beyond a few concurrent writers "
      "(e.g. a node's page cache); sfio-calibrate-k --writers N measures it" },
    { "k", MCA_BASE_VAR_TYPE_SIZE_T, &adaptive_k,
      OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY,
      "Smallest write size (bytes) that saturates one process's bandwidth (Gabriel's k): "
      "chunks above it are written individually, groups holding more than k bytes per "
      "call get more aggregators.  Measure it with sfio-calibrate-k" },
    { "stripe_size", MCA_BASE_VAR_TYPE_SIZE_T, &adaptive_stripe_size,
      OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY,
      "Stripe size (bytes) of the file system (Gabriel's ss); 0 (default): the fs "
      "component's value, else 65536.  Two-phase file domains are aligned to it" },
    { "read_max_gap", MCA_BASE_VAR_TYPE_SIZE_T, &adaptive_read_max_gap,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Aggregators' reads bridge holes up to this many bytes (data sieving)" },
    { "cycle_bytes", MCA_BASE_VAR_TYPE_SIZE_T, &adaptive_cycle_bytes,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Bytes an aggregator moves per cycle; 0 (default): half of the cb_buffer_size hint "
      "or io_ompio_bytes_per_agg (two cycles are in flight: double buffering), for writes "
      "at most fcoll_adaptive_write_cycle_bytes" },
    { "read_extent_ratio", MCA_BASE_VAR_TYPE_INT, &adaptive_read_extent_ratio,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Automatic choice for reads: when every rank's file extent in the call is at most "
      "this many times the bytes it reads, each rank reads its extent once and keeps its "
      "pieces (individual, data sieving) instead of aggregating.  That wins where reading a "
      "byte costs less than moving it between ranks (one node's page cache), not where "
      "each client's link to the storage is the bottleneck.  -1 (default): 8 on local file "
      "systems, 0 on network ones (see fcoll_adaptive_storage); 0: never" },
    { "local_aggregators_per_cpu", MCA_BASE_VAR_TYPE_INT, &adaptive_local_aggregators_per_cpu,
      OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY,
      "Automatic aggregator count on local file systems (page cache): at most this many "
      "aggregators per processor online on each node (never more than the node's ranks).  "
      "There a write is a memory copy, so aggregators beyond the cores only take turns on "
      "them (measured in docs/fcoll-adaptive.md, \"Aggregators on local storage\").  "
      "Applies when the call has at least one aggregator buffer "
      "(fcoll_adaptive_cycle_bytes when set, else half of cb_buffer_size) per capped "
      "aggregator; smaller calls are bound by "
      "message steps, not copies.  Network file systems are not capped (each client's "
      "link is the limit).  0: no cap.  Forced counts (num_aggregators, cb_nodes) are "
      "never capped" },
    { "async_io", MCA_BASE_VAR_TYPE_INT, &adaptive_async_io,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Aggregators queue each cycle's file I/O (the fbtl's ipwritev / ipreadv): a write "
      "runs while the next cycle is exchanged, the next cycle's read while this cycle's "
      "data goes to the ranks.  1 always, 0 never, -1 (default) on network storage only "
      "(see fcoll_adaptive_storage), where I/O waits on the storage rather than on the "
      "process.  An fbtl without asynchronous I/O is called synchronously" },
    { "write_cycle_bytes", MCA_BASE_VAR_TYPE_SIZE_T, &adaptive_write_cycle_bytes,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Automatic write cycles (fcoll_adaptive_cycle_bytes 0) are at most this many bytes: "
      "a small cycle's data stays in the caches from the sender's copy to the file write, "
      "and with queued writes (fcoll_adaptive_async_io) all but the first cycle's exchange "
      "hide behind the previous write; 0: half of cb_buffer_size, as reads" },
    { "read_cycle_bytes", MCA_BASE_VAR_TYPE_SIZE_T, &adaptive_read_cycle_bytes,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Automatic read cycles (fcoll_adaptive_cycle_bytes 0) with queued reads "
      "(fcoll_adaptive_async_io) are at most this many bytes, so that an aggregator's "
      "storage reads the next cycle while this cycle's data travels to the ranks; "
      "0: half of cb_buffer_size.  Reads that are not queued always use half of "
      "cb_buffer_size" },
    { "async_min_cycles", MCA_BASE_VAR_TYPE_INT, &adaptive_async_min_cycles,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "With queued file I/O (fcoll_adaptive_async_io) and automatic cycles, the busiest "
      "aggregator of a call gets at least this many cycles (smaller cycles, down to "
      "fcoll_adaptive_async_min_cycle_bytes): only the first cycle's exchange is not "
      "hidden behind the storage.  0 or 1: cycles keep their size" },
    { "async_min_cycle_bytes", MCA_BASE_VAR_TYPE_SIZE_T, &adaptive_async_min_cycle_bytes,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Smallest cycle fcoll_adaptive_async_min_cycles makes (each cycle costs every "
      "aggregator one more storage call)" },
    { "individual_min_run", MCA_BASE_VAR_TYPE_SIZE_T, &adaptive_individual_min_run,
      OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY,
      "Automatic choice: when no rank's file extent in the call interleaves with or "
      "overlaps another rank's, and every rank's contiguous runs average at least this many "
      "bytes, each rank accesses its own data independently (individual), as ROMIO's "
      "romio_cb_write/romio_cb_read automatic does, but from the call's real extents.  "
      "0: never.  The romio_cb_write/romio_cb_read hints (enable, disable) win over it" },
    { "links_per_node", MCA_BASE_VAR_TYPE_INT, &adaptive_links_per_node,
      OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY,
      "Links to the storage each node has, for the automatic aggregator count on network "
      "storage: at least this many aggregators per node holding data (1, default: one "
      "client link per node, e.g. NFS); 0: every rank has its own link (one aggregator per "
      "rank holding data).  Capped by fcoll_adaptive_max_aggregators; forced counts "
      "(num_aggregators, cb_nodes) win" },
};

static int adaptive_register(void)
{
    const mca_base_component_t *c = &mca_fcoll_adaptive_component.fcollm_version;
    mca_common_sfio_component_register_params(c, params,
        sizeof(params) / sizeof(params[0]));
    (void) mca_common_sfio_fcoll_algorithm_register(c, &adaptive_algorithm);
    if (OPAL_SUCCESS != mca_common_sfio_fcoll_storage_register(c, &adaptive_storage)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (OPAL_SUCCESS != mca_common_sfio_fcoll_placement_register(c, &adaptive_placement,
                                                                 &adaptive_emulate_nodes)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (NULL == mca_common_sfio_component_register_string(c, &adaptive_matrix_file,
            "matrix_file",
            "Record the application matrix of collective I/O (bytes each rank hands each "
            "aggregator, over the whole run, files on MPI_COMM_WORLD) and write it to this "
            "file at MPI_Finalize, for sfio-place (docs/placement.md).  Empty (default): "
            "not recorded")) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    options_from_params();
    return OMPI_SUCCESS;
}

static int adaptive_open(void)
{
    int rc = mca_common_sfio_component_open("fcoll", "adaptive", adaptive_verbose, false,
                                            &mca_fcoll_adaptive_output);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    options_from_params();
    return OMPI_SUCCESS;
}

static int adaptive_close(void)
{
    return mca_common_sfio_component_close(&mca_fcoll_adaptive_output);
}

mca_fcoll_base_component_2_0_0_t mca_fcoll_adaptive_component = {
    .fcollm_version = {
        MCA_FCOLL_BASE_VERSION_2_0_0,
        .mca_component_name = "adaptive",
        MCA_BASE_MAKE_VERSION(component, SFIO_VERSION_MAJOR, SFIO_VERSION_MINOR,
                              SFIO_VERSION_RELEASE),
        .mca_open_component = adaptive_open,
        .mca_close_component = adaptive_close,
        .mca_register_component_params = adaptive_register,
    },
    .fcollm_data = {
        MCA_BASE_METADATA_PARAM_CHECKPOINT
    },
    .fcollm_init_query = mca_common_sfio_component_init_query,
    .fcollm_file_query = mca_fcoll_adaptive_component_file_query,
    .fcollm_file_unquery = mca_common_sfio_component_file_unquery,
};
