/*
 * sfio_topo: node and package of every rank of a communicator (see
 * header).  Nodes are the runtime's (the PMIx host name of every process,
 * through Open MPI's proc table, the same in both series); when a rank
 * does not have them all, each rank's own host name (one allgather of a
 * hash).  Packages by hwloc from the rank's own binding.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* sched_getaffinity, CPU_COUNT */
#endif
#include "ompi_config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>

#include "mpi.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"
#include "ompi/communicator/communicator.h"
#include "ompi/group/group.h"
#include "ompi/proc/proc.h"

#include "sfio_topo.h"
#include "sfio_package.h"
#include "sfio_ompio.h"
#include "sfio_util.h"

typedef struct {
    _Atomic int refs;   /* communicators holding it, and the group table */
    char *emulate;      /* what this was computed for ("": real) */
    uint64_t *procs;    /* the processes, in rank order (the group's key) */
    mca_common_sfio_place_topo_t topo;
    int *node;
    int *package;       /* NULL: one package per node */
    int *node_cpus;     /* per node; NULL: unknown (emulated nodes) */
    bool from_runtime;  /* nodes as the runtime (PMIx) names them */
} topo_cache_t;

static int topo_keyval = MPI_KEYVAL_INVALID;
static pthread_once_t topo_keyval_once = PTHREAD_ONCE_INIT;

static void cache_free(topo_cache_t *c)
{
    if (NULL != c && 1 == atomic_fetch_sub(&c->refs, 1)) {
        free(c->emulate);
        free(c->procs);
        free(c->node);
        free(c->package);
        free(c->node_cpus);
        free(c);
    }
}

/*
 * The topologies of the last few groups of processes, by their members
 * in rank order: OMPIO duplicates the user's communicator for every open
 * file, so without this every file would gather its topology anew.  The
 * ranks agree that each found the group (one allreduce) before any uses
 * it, so a rank that dropped or never kept an entry only makes the group
 * gather again.
 */
#define GROUPS_KEPT 16
static struct {
    pthread_mutex_t lock;
    topo_cache_t *kept[GROUPS_KEPT];
    uint64_t used[GROUPS_KEPT];
    uint64_t clock;
} groups = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* A reference to the kept topology of procs[P] computed for spec, or NULL. */
static topo_cache_t *group_find(const uint64_t *procs, int P, const char *spec)
{
    topo_cache_t *found = NULL;
    pthread_mutex_lock(&groups.lock);
    for (int i = 0; i < GROUPS_KEPT && NULL == found; ++i) {
        topo_cache_t *c = groups.kept[i];
        if (NULL != c && c->topo.n == P && 0 == strcmp(c->emulate, spec) &&
            0 == memcmp(c->procs, procs, (size_t) P * sizeof(*procs))) {
            atomic_fetch_add(&c->refs, 1);
            groups.used[i] = ++groups.clock;
            found = c;
        }
    }
    pthread_mutex_unlock(&groups.lock);
    return found;
}

/* Keeps c (one more reference) in place of the least recently used. */
static void group_keep(topo_cache_t *c)
{
    pthread_mutex_lock(&groups.lock);
    int slot = 0;
    for (int i = 1; i < GROUPS_KEPT; ++i) {
        if (groups.used[i] < groups.used[slot]) {
            slot = i;
        }
    }
    topo_cache_t *old = groups.kept[slot];
    atomic_fetch_add(&c->refs, 1);
    groups.kept[slot] = c;
    groups.used[slot] = ++groups.clock;
    pthread_mutex_unlock(&groups.lock);
    cache_free(old);
}

static int cache_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void) comm;
    (void) keyval;
    (void) extra;
    cache_free(attr);
    return MPI_SUCCESS;
}

static void keyval_create(void)
{
    if (MPI_SUCCESS != MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, cache_delete, &topo_keyval,
                                              NULL)) {
        topo_keyval = MPI_KEYVAL_INVALID;
    }
}

/* The package of this process's binding, 0 when it is not bound inside
 * one (then sockets say nothing about where its memory traffic goes);
 * asked once per process (docs/fcoll-adaptive.md, "Aggregator
 * placement": loading a topology is slow). */
static int my_package_id = 0;
static pthread_once_t my_package_once = PTHREAD_ONCE_INIT;

static void my_package_find(void)
{
    int pkg = mca_common_sfio_bound_package();
    my_package_id = pkg < 0 ? 0 : pkg;
}

static int my_package(void)
{
    pthread_once(&my_package_once, my_package_find);
    return my_package_id;
}

/* Node of every rank as the runtime names it (PMIx's host name of each
 * process, through Open MPI's proc table): hashes into rt[P].  False when
 * the runtime does not know one of them. */
static bool nodes_from_runtime(struct ompi_communicator_t *comm, int P, uint64_t *rt)
{
    for (int q = 0; q < P; ++q) {
        ompi_proc_t *proc = ompi_comm_peer_lookup(comm, q);
        const char *name = NULL != proc ? opal_get_proc_hostname(&proc->super) : NULL;
        if (NULL == name || '\0' == name[0] || 0 == strcmp(name, "unknown")) {
            return false;
        }
        rt[q] = mca_common_sfio_fnv1a(MCA_COMMON_SFIO_FNV1A_INIT, name, strlen(name));
    }
    return true;
}

/* The real topology: allgather (host hash, package, processors online,
 * runtime names known), host hashes made dense: the runtime's node names
 * when every rank has them, else each rank's own host name.  buf has
 * 4 * P entries.  0 or -errno (local). */
static int gather_real(struct ompi_communicator_t *comm, topo_cache_t *c, uint64_t *buf)
{
    int P = ompi_comm_size(comm);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t *rt = malloc((size_t) P * sizeof(uint64_t));
    bool rt_ok = NULL != rt && nodes_from_runtime(comm, P, rt);
    uint64_t mine[4] = { mca_common_sfio_host_hash(), (uint64_t) my_package(),
                         online > 0 ? (uint64_t) online : 1, rt_ok };
    int rc = comm->c_coll->coll_allgather(mine, 4, MPI_UINT64_T, buf, 4, MPI_UINT64_T, comm,
                                          comm->c_coll->coll_allgather_module);
    if (OMPI_SUCCESS != rc) {
        free(rt);
        return -EIO;
    }
    bool all_rt = true;
    for (int q = 0; q < P; ++q) {
        all_rt = all_rt && 0 != buf[4 * q + 3];
    }
    c->from_runtime = all_rt;
    int any_package = 0;
    for (int q = 0; q < P; ++q) {
        c->package[q] = (int) buf[4 * q + 1];
        any_package |= 0 != c->package[q];
        c->node_cpus[q] = (int) buf[4 * q + 2];   /* per rank for now */
        buf[q] = all_rt ? rt[q] : buf[4 * q];     /* hashes packed in front (q <= 4q) */
    }
    free(rt);
    if (!any_package) {
        free(c->package);
        c->package = NULL;
    }
    int nn = mca_common_sfio_place_dense(buf, P, c->node);
    if (nn < 0) {
        return nn;
    }
    /* per node: the most any of its ranks sees (nn <= P, node ids dense) */
    int *cpus = calloc((size_t) nn, sizeof(int));
    if (NULL == cpus) {
        return -ENOMEM;
    }
    for (int q = 0; q < P; ++q) {
        int *x = &cpus[c->node[q]];
        *x = c->node_cpus[q] > *x ? c->node_cpus[q] : *x;
    }
    free(c->node_cpus);
    c->node_cpus = cpus;
    c->topo.nnodes = nn;
    return 0;
}

static int agree(struct ompi_communicator_t *comm, int ok)
{
    int all = 0;
    int rc = comm->c_coll->coll_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm,
                                          comm->c_coll->coll_allreduce_module);
    return OMPI_SUCCESS == rc && all;
}

uint64_t mca_common_sfio_proc_key(struct ompi_communicator_t *comm, int r)
{
    opal_process_name_t name = ompi_group_get_proc_name(comm->c_remote_group, r);
    _Static_assert(sizeof(name.jobid) <= 4 && sizeof(name.vpid) <= 4, "process name > 64 bits");
    return ((uint64_t) name.jobid << 32) | (uint64_t) name.vpid;
}

/* Local: comm's attribute for spec, or the kept topology of comm's group
 * set as it; NULL when this process has neither. */
/* Local: comm's attribute when it was computed for spec (one computed
 * for another spec is dropped); NULL otherwise. */
static topo_cache_t *attr_of(struct ompi_communicator_t *comm, const char *spec)
{
    int flag = 0;
    topo_cache_t *c = NULL;
    pthread_once(&topo_keyval_once, keyval_create);
    if (MPI_KEYVAL_INVALID == topo_keyval ||
        MPI_SUCCESS != MPI_Comm_get_attr(comm, topo_keyval, &c, &flag) || !flag) {
        return NULL;
    }
    if (0 == strcmp(c->emulate, spec)) {
        return c;
    }
    (void) MPI_Comm_delete_attr(comm, topo_keyval);     /* frees c */
    return NULL;
}

static topo_cache_t *hold(struct ompi_communicator_t *comm, const char *spec)
{
    int P = ompi_comm_size(comm);
    topo_cache_t *c = attr_of(comm, spec);
    if (NULL != c || MPI_KEYVAL_INVALID == topo_keyval) {
        return c;
    }
    uint64_t *procs = malloc((size_t) P * sizeof(*procs));
    if (NULL != procs) {
        for (int r = 0; r < P; ++r) {
            procs[r] = mca_common_sfio_proc_key(comm, r);
        }
        c = group_find(procs, P, spec);
        free(procs);
    }
    if (NULL != c && MPI_SUCCESS != MPI_Comm_set_attr(comm, topo_keyval, c)) {
        cache_free(c);
        c = NULL;
    }
    return c;   /* the attribute holds the reference */
}

bool mca_common_sfio_topo_hold(struct ompi_communicator_t *comm, const char *emulate)
{
    return NULL != hold(comm, NULL != emulate ? emulate : "");
}

void mca_common_sfio_topo_drop(struct ompi_communicator_t *comm)
{
    int flag = 0;
    void *c = NULL;
    if (MPI_KEYVAL_INVALID != topo_keyval &&
        MPI_SUCCESS == MPI_Comm_get_attr(comm, topo_keyval, &c, &flag) && flag) {
        (void) MPI_Comm_delete_attr(comm, topo_keyval);     /* drops the reference */
    }
}

/* Collective: the kept topology of comm's group, when every rank has it
 * (one allreduce), set on comm; NULL on every rank otherwise.  Every rank
 * takes part, whatever it lacks (keyval, memory). */
static topo_cache_t *from_group(struct ompi_communicator_t *comm, const char *spec)
{
    topo_cache_t *c = hold(comm, spec);
    if (agree(comm, NULL != c)) {
        return c;
    }
    mca_common_sfio_topo_drop(comm);
    return NULL;
}

int mca_common_sfio_topo_get(struct ompi_communicator_t *comm, const char *emulate, int output,
                             const mca_common_sfio_place_topo_t **topo_p)
{
    const char *spec = NULL != emulate ? emulate : "";
    int P = ompi_comm_size(comm);
    topo_cache_t *c = attr_of(comm, spec);   /* set at a collective point: alike everywhere */
    if (NULL != c) {
        *topo_p = &c->topo;
        return OMPI_SUCCESS;
    }
    c = from_group(comm, spec);
    if (NULL != c) {
        *topo_p = &c->topo;
        return OMPI_SUCCESS;
    }

    /* Every local failure from here on is agreed on before anyone uses or
     * keeps the result: a cache on some ranks only would make them skip a
     * collective the others enter. */
    c = calloc(1, sizeof(*c));
    int ok = NULL != c && MPI_KEYVAL_INVALID != topo_keyval;
    if (ok) {
        atomic_init(&c->refs, 1);
        c->emulate = strdup(spec);
        c->procs = malloc((size_t) P * sizeof(*c->procs));
        c->node = malloc((size_t) P * sizeof(int));
        c->package = malloc((size_t) P * sizeof(int));
        c->node_cpus = malloc((size_t) P * sizeof(int));
        ok = NULL != c->emulate && NULL != c->procs && NULL != c->node && NULL != c->package &&
             NULL != c->node_cpus;
    } else if (NULL != c) {
        atomic_init(&c->refs, 1);
    }
    for (int r = 0; ok && r < P; ++r) {
        c->procs[r] = mca_common_sfio_proc_key(comm, r);
    }
    /* Whether to emulate depends on spec only (the same on every rank),
     * never on a local failure: probe it on one rank's worth. */
    int probe, nprobe;
    int emulated = mca_common_sfio_place_emulate(spec, 1, &probe, &nprobe);
    if (emulated < 0) {
        static int reported = 0;            /* once per process, not per file */
        if (0 == ompi_comm_rank(comm) && !reported) {
            reported = 1;
            mca_common_sfio_show_help("bad-param", true, "fcoll_adaptive_emulate_nodes", spec,
                                      "empty, block:N, cyclic:N", "the real topology");
        }
        emulated = 0;
    }
    if (emulated) {
        if (ok) {
            (void) mca_common_sfio_place_emulate(spec, P, c->node, &c->topo.nnodes);
            free(c->package);
            c->package = NULL;
            free(c->node_cpus);     /* emulated nodes share the real CPUs */
            c->node_cpus = NULL;
        }
    } else {
        /* the allgather needs every rank, so agree on the buffers first */
        uint64_t *buf = ok ? malloc((size_t) P * 4 * sizeof(uint64_t)) : NULL;
        ok = agree(comm, NULL != buf) && 0 == gather_real(comm, c, buf);
        free(buf);
    }
    if (ok) {
        c->topo.n = P;
        c->topo.node = c->node;
        c->topo.package = c->package;
        c->topo.node_cpus = c->node_cpus;
        ok = 0 == mca_common_sfio_place_topo_verify(&c->topo) &&
             MPI_SUCCESS == MPI_Comm_set_attr(comm, topo_keyval, c);
    }
    if (!agree(comm, ok)) {
        if (ok) {
            (void) MPI_Comm_delete_attr(comm, topo_keyval);     /* frees c */
        } else {
            cache_free(c);
        }
        opal_output_verbose(1, output, "fcoll:adaptive: topology unknown, placing by rank");
        return OMPI_ERROR;
    }
    group_keep(c);   /* for the group's next communicators */
    if (!emulated && 0 == ompi_comm_rank(comm)) {
        opal_output_verbose(1, output, "fcoll:adaptive: %d nodes, from %s", c->topo.nnodes,
                            c->from_runtime ? "the runtime (PMIx host names)"
                                            : "each rank's host name");
    }
    *topo_p = &c->topo;
    return OMPI_SUCCESS;
}
