/*
 * sfio_package: the package of this process's binding (see header).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <unistd.h>

#include <hwloc.h>

#include "sfio_package.h"

int mca_common_sfio_bound_package(void)
{
    hwloc_topology_t t;
    int pkg = -1;
    cpu_set_t mask;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (0 == sched_getaffinity(0, sizeof(mask), &mask) && online > 0 &&
        CPU_COUNT(&mask) >= online) {
        return -1;     /* not bound */
    }
    if (0 != hwloc_topology_init(&t)) {
        return -1;
    }
    (void) hwloc_topology_set_all_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE);
    (void) hwloc_topology_set_type_filter(t, HWLOC_OBJ_PACKAGE, HWLOC_TYPE_FILTER_KEEP_ALL);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (NULL != set && 0 == hwloc_topology_load(t) &&
        0 == hwloc_get_cpubind(t, set, HWLOC_CPUBIND_PROCESS) && !hwloc_bitmap_iszero(set)) {
        hwloc_obj_t o = hwloc_get_obj_covering_cpuset(t, set);
        while (NULL != o && HWLOC_OBJ_PACKAGE != o->type) {
            o = o->parent;
        }
        if (NULL != o) {
            pkg = (int) o->logical_index;
        }
    }
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(t);
    return pkg;
}
