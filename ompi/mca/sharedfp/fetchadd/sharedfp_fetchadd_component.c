/*
 * sharedfp/fetchadd component: parameters, open/close.
 */
#include "ompi_config.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/output.h"
#include "ompi/mca/sharedfp/sharedfp.h"

#include "sharedfp_fetchadd.h"
#include "sfio_component.h"
#include "sfio_coord.h"
#include "sfio_sharedfp.h"

int mca_sharedfp_fetchadd_priority = 50;   /* above stock sm (30), lockedfile and individual (10) */
int mca_sharedfp_fetchadd_verbose = 0;
int mca_sharedfp_fetchadd_output = -1;
int mca_sharedfp_fetchadd_backend = MCA_COMMON_SFIO_COORD_AUTO;
char **mca_sharedfp_fetchadd_shm_dir_storage = NULL;   /* heap cell, outlives the DSO */
char **mca_sharedfp_fetchadd_provider_storage = NULL;   /* heap cell, outlives the DSO */
int mca_sharedfp_fetchadd_timeout = 30;
int mca_sharedfp_fetchadd_host = -1;
int mca_sharedfp_fetchadd_counters = MCA_COMMON_SFIO_COORD_COUNTERS_AUTO;
bool mca_sharedfp_fetchadd_direct = true;
bool mca_sharedfp_fetchadd_ordered_collective = false;
bool mca_sharedfp_fetchadd_skip_probes = true;

/* The plain parameters (defaults: the variables' initial values). */
static const mca_common_sfio_param_t params[] = {
    { "priority", MCA_BASE_VAR_TYPE_INT, &mca_sharedfp_fetchadd_priority,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Priority of the sharedfp fetchadd component (stock sm uses 30, lockedfile and "
      "individual 10; the highest wins)" },
    { "verbose", MCA_BASE_VAR_TYPE_INT, &mca_sharedfp_fetchadd_verbose,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_LOCAL,
      "Verbosity of the sharedfp fetchadd component (0: silent, 1: decisions and errors, "
      "10: the backend of every file)" },
    { "direct", MCA_BASE_VAR_TYPE_BOOL, &mca_sharedfp_fetchadd_direct,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Blocking write_shared/read_shared of a contiguous buffer (up to 4 MiB) through a "
      "contiguous native view go to the selected fbtl as one I/O entry, skipping OMPIO's "
      "per-call set-up; off: every access takes OMPIO's explicit-offset path" },
    { "ordered_collective", MCA_BASE_VAR_TYPE_BOOL, &mca_sharedfp_fetchadd_ordered_collective,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Data of write_ordered/read_ordered (and their begin/end forms) through the "
      "collective explicit-offset calls (the fcoll component aggregates them); off "
      "(default): once the prefix sum has placed every rank's part, each rank writes or "
      "reads its own disjoint part with an independent call" },
    { "skip_probes", MCA_BASE_VAR_TYPE_BOOL, &mca_sharedfp_fetchadd_skip_probes,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "Where stock sharedfp lockedfile or sm is loaded too, with a lower priority: this "
      "component is asked first at every MPI_File_open, and their probes (lockedfile: "
      "every rank creates, locks and removes <file>.locktest.<rank>, metadata and lock "
      "requests on the file's server; sm: a file created and removed in the session "
      "directory) run only for files this component does not serve; false: they probe "
      "every file, as in stock Open MPI" },
    { "timeout", MCA_BASE_VAR_TYPE_INT, &mca_sharedfp_fetchadd_timeout,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "ofi backend: seconds a shared-pointer operation waits for the rank that hosts "
      "the file's pointer (dead host, lost node) before it fails with MPI_ERR_OTHER; a "
      "host that is merely busy outside MPI answers at once (its progress thread does)" },
    { "host", MCA_BASE_VAR_TYPE_INT, &mca_sharedfp_fetchadd_host,
      OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      "ofi backend: rank of the file's communicator that hosts its shared pointer; -1 "
      "(default): files in turn over the nodes (the n-th file of a group on node n mod "
      "nodes), and over the ranks of that node" },
};

static int fetchadd_register(void)
{
    const mca_base_component_t *c = &mca_sharedfp_fetchadd_component.sharedfpm_version;
    mca_common_sfio_component_register_params(c, params,
        sizeof(params) / sizeof(params[0]));

    static mca_base_var_enum_value_t backends[] = {
        { MCA_COMMON_SFIO_COORD_AUTO, "auto" },
        { MCA_COMMON_SFIO_COORD_SHM, "shm" },
        { MCA_COMMON_SFIO_COORD_OFI, "ofi" },
        { MCA_COMMON_SFIO_COORD_RMA, "rma" },
        { 0, NULL },
    };
    (void) mca_common_sfio_component_register_enum(c, "backend", "sharedfp_fetchadd_backend",
        backends, MCA_COMMON_SFIO_COORD_AUTO,
        "Where the shared file pointer lives. auto: process memory for one rank, shm when "
        "all ranks share a node, ofi otherwise; shm: a shared-memory page on the node, "
        "moved by C11 atomics (no rank ever waits for another to enter MPI); ofi: the "
        "suite's coordination service on libfabric, the pointer in one host rank per file "
        "(files in turn over the nodes) served by that process's progress thread (no rank "
        "waits for another to enter MPI; where no provider starts, the component steps "
        "aside and Open MPI selects a stock one); rma: an MPI window on rank 0 of the "
        "file's communicator, MPI_Fetch_and_op with passive target (only when asked for: "
        "needs an osc component for the ranks' transport, which Open MPI 4.1 over TCP "
        "lacks, and one that progresses without the target for a rank busy outside MPI "
        "not to stall the others)",
        OPAL_INFO_LVL_9, &mca_sharedfp_fetchadd_backend);
    static mca_base_var_enum_value_t counters[] = {
        { MCA_COMMON_SFIO_COORD_COUNTERS_AUTO, "auto" },
        { MCA_COMMON_SFIO_COORD_COUNTERS_ATOMIC, "atomic" },
        { MCA_COMMON_SFIO_COORD_COUNTERS_MESSAGE, "message" },
        { 0, NULL },
    };
    (void) mca_common_sfio_component_register_enum(c, "counters", "sharedfp_fetchadd_counters",
        counters, MCA_COMMON_SFIO_COORD_COUNTERS_AUTO,
        "ofi backend: how a shared-pointer operation reaches the pointer in the host rank. "
        "auto (default): libfabric atomics when the provider of every rank offers them on "
        "64-bit integers (fi_query_atomic) and is not a software one (tcp, sockets, udp, "
        "rxm, rxd: their atomics are messages too, and the host's own operations would "
        "become round trips), else messages; atomic: libfabric atomics, or "
        "the component steps aside (Open MPI selects another sharedfp); message: a "
        "request message served by the host's progress thread and a reply.  Ordered "
        "operations always take messages.  Verbose level 1 prints which is used",
        OPAL_INFO_LVL_9, &mca_sharedfp_fetchadd_counters);
    if (NULL == mca_common_sfio_component_register_string(c,
                    &mca_sharedfp_fetchadd_provider_storage, "provider",
        "libfabric provider of the ofi backend (one endpoint and one progress thread per "
        "process, started by the first file that needs it), e.g. tcp;ofi_rxm, tcp, "
        "verbs;ofi_rxm, sockets; the first part of a name is enough (tcp).  Empty or auto "
        "(default): a network provider offering atomics first, then any network "
        "provider, then tcp;ofi_rxm, then other software providers (shm never: it "
        "reaches one node).  Verbose level 1 prints the choice.  libfabric's own FI_* "
        "environment variables (FI_PROVIDER, FI_TCP_IFACE, ...) apply as well")) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    /* String storage on the heap: it must outlive this DSO (Open MPI 5.0). */
    if (NULL == mca_common_sfio_component_register_string(c,
                    &mca_sharedfp_fetchadd_shm_dir_storage, "shm_dir",
        "Directory of the shm backend's shared-memory page (a node-local tmpfs); empty "
        "(default): /dev/shm; where no page can be created there, a warning and /dev/shm.  "
        "The page has a random name, is unlinked as soon as every rank has mapped it, and "
        "pages left by a job killed during MPI_File_open are removed by the next open")) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    return OMPI_SUCCESS;
}

static int fetchadd_open(void)
{
    return mca_common_sfio_component_open("sharedfp", "fetchadd", mca_sharedfp_fetchadd_verbose,
                                          true, &mca_sharedfp_fetchadd_output);
}

static int fetchadd_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    int rc = mca_common_sfio_component_init_query(enable_progress_threads, enable_mpi_threads);
    if (OMPI_SUCCESS == rc && mca_sharedfp_fetchadd_skip_probes &&
        mca_common_sfio_sharedfp_probe_skip(&mca_sharedfp_fetchadd_component.sharedfpm_version,
                                            mca_sharedfp_fetchadd_priority)) {
        opal_output_verbose(10, mca_sharedfp_fetchadd_output,
                            "sharedfp:fetchadd: asked before stock components whose per-open "
                            "probes now run only for files fetchadd does not serve");
    }
    return rc;
}

static int fetchadd_close(void)
{
    mca_common_sfio_sharedfp_probe_restore();
    return mca_common_sfio_component_close(&mca_sharedfp_fetchadd_output);
}

mca_sharedfp_base_component_2_0_0_t mca_sharedfp_fetchadd_component = {
    .sharedfpm_version = {
        MCA_SHAREDFP_BASE_VERSION_2_0_0,
        .mca_component_name = "fetchadd",
        MCA_BASE_MAKE_VERSION(component, SFIO_VERSION_MAJOR, SFIO_VERSION_MINOR,
                              SFIO_VERSION_RELEASE),
        .mca_open_component = fetchadd_open,
        .mca_close_component = fetchadd_close,
        .mca_register_component_params = fetchadd_register,
    },
    .sharedfpm_data = {
        MCA_BASE_METADATA_PARAM_CHECKPOINT
    },
    .sharedfpm_init_query = fetchadd_init_query,
    .sharedfpm_file_query = mca_sharedfp_fetchadd_component_file_query,
    .sharedfpm_file_unquery = mca_sharedfp_fetchadd_component_file_unquery,
};
