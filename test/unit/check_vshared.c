/*
 * check_vshared: the versioned store's shared state on one node
 * (sfio_vstore_mapped), three ranks on one shared mapping of the
 * coordination record.  Publication is in version order, and a version
 * whose record is whole is published by whichever waiting rank runs, not
 * only by its own writer: a later writer must not wait for an earlier one
 * that is descheduled (here: stopped) or dead after its record was made.
 *
 * Not pure: forks, signals.  Check's per-test timeout fails a test whose
 * publication waits for the stopped rank.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sfio_check.h"
#include "sfio_util.h"
#include "sfio_vstore.h"
#include "sfio_vstore_int.h"

enum { NRANKS = 3 };

typedef struct {
    coord_t *coord;
    size_t size;
    mca_common_sfio_vstore_t *rank[NRANKS];
} group_t;

static void group_init(group_t *g)
{
    g->size = sfio_coord_bytes(NRANKS);
    g->coord = mmap(NULL, g->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    REQUIRE(MAP_FAILED != (void *) g->coord);
    memset(g->coord, 0, g->size);
    g->coord->nranks = NRANKS;
    for (int r = 0; r < NRANKS; ++r) {
        g->rank[r] = calloc(1, sizeof(*g->rank[r]));
        REQUIRE(NULL != g->rank[r]);
        g->rank[r]->coord = g->coord;
        g->rank[r]->rank = r;
        g->rank[r]->nranks = NRANKS;
        g->rank[r]->shared = &sfio_vshared_mapped;
        REQUIRE(0 == sfio_vshared_mapped.join(g->rank[r]));
    }
}

static void group_fini(group_t *g)
{
    for (int r = 0; r < NRANKS; ++r) {
        free(g->rank[r]);
    }
    munmap(g->coord, g->size);
}

/* Rank 0, 1, 2 take versions 1, 2, 3; rank 1 publishes in a child that
 * is stopped once its version is marked ready (or killed, when kill_it). */
static pid_t publish_in_child_then_stop(group_t *g, bool kill_it)
{
    uint64_t v[NRANKS];
    for (int r = 0; r < NRANKS; ++r) {
        REQUIRE(0 == sfio_vshared_mapped.take_version(g->rank[r], &v[r]));
        REQUIRE((uint64_t) r + 1 == v[r]);
    }
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (0 == child) {
        atomic_store(&g->coord->rank[1].pid, (int64_t) getpid());
        _exit(0 == sfio_vshared_mapped.publish(g->rank[1], 2) ? 0 : 1);
    }
    /* wait until the child has marked version 2 ready (it then waits for 1) */
    for (int i = 0; atomic_load(&g->coord->rank[1].pending) != (2 | PENDING_READY); ++i) {
        REQUIRE(i < 100000);
        struct timespec ts = { 0, 20000 };
        nanosleep(&ts, NULL);
    }
    REQUIRE(0 == kill(child, kill_it ? SIGKILL : SIGSTOP));
    return child;
}

START_TEST(ready_version_published_by_a_later_writer)
{
    group_t g;
    group_init(&g);
    pid_t child = publish_in_child_then_stop(&g, false);
    REQUIRE(0 == sfio_vshared_mapped.publish(g.rank[0], 1));
    /* version 2's writer is stopped: rank 2 publishes it, then its own */
    REQUIRE(0 == sfio_vshared_mapped.publish(g.rank[2], 3));
    REQUIRE(3 == atomic_load(&g.coord->published));
    REQUIRE(0 == g.rank[2]->stats.aborted_versions);
    REQUIRE(0 == atomic_load(&g.coord->rank[2].pending));
    /* the stopped writer, resumed, finds its version published */
    REQUIRE(0 == kill(child, SIGCONT));
    int status = 0;
    REQUIRE(child == waitpid(child, &status, 0));
    REQUIRE(WIFEXITED(status) && 0 == WEXITSTATUS(status));
    REQUIRE(0 == atomic_load(&g.coord->rank[1].pending));
    group_fini(&g);
}
END_TEST

START_TEST(dead_writer_with_whole_record_not_aborted)
{
    group_t g;
    group_init(&g);
    pid_t child = publish_in_child_then_stop(&g, true);
    int status = 0;
    REQUIRE(child == waitpid(child, &status, 0));
    REQUIRE(0 == sfio_vshared_mapped.publish(g.rank[0], 1));
    REQUIRE(0 == sfio_vshared_mapped.publish(g.rank[2], 3));
    REQUIRE(3 == atomic_load(&g.coord->published));
    /* its record was whole: published, not skipped as a dead writer's */
    REQUIRE(0 == g.rank[2]->stats.aborted_versions && 0 == g.rank[0]->stats.aborted_versions);
    group_fini(&g);
}
END_TEST

START_TEST(dead_writer_without_record_skipped)
{
    group_t g;
    group_init(&g);
    uint64_t v[NRANKS];
    for (int r = 0; r < NRANKS; ++r) {
        REQUIRE(0 == sfio_vshared_mapped.take_version(g.rank[r], &v[r]));
    }
    /* rank 1 holds version 2 and dies before its record is whole */
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (0 == child) {
        _exit(0);
    }
    int status = 0;
    REQUIRE(child == waitpid(child, &status, 0));
    atomic_store(&g.coord->rank[1].pid, (int64_t) child);
    REQUIRE(0 == sfio_vshared_mapped.publish(g.rank[0], 1));
    REQUIRE(0 == sfio_vshared_mapped.publish(g.rank[2], 3));
    REQUIRE(3 == atomic_load(&g.coord->published));
    REQUIRE(1 == g.rank[2]->stats.aborted_versions);
    group_fini(&g);
}
END_TEST

static Suite *vshared_suite(void)
{
    Suite *s = suite_create("vshared");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, ready_version_published_by_a_later_writer);
    tcase_add_test(tc, dead_writer_with_whole_record_not_aborted);
    tcase_add_test(tc, dead_writer_without_record_skipped);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(vshared_suite)
