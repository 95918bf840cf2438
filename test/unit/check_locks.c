/*
 * Tests of sfio_locks on real OFD locks of a scratch file, between
 * processes (fork): many processes taking random overlapping lock lists
 * never deadlock and never hold conflicting bytes at once, and a lock
 * holder killed with SIGKILL leaves nothing locked.  Not a pure suite: it
 * needs a local file system with byte-range locks (TMPDIR, else /tmp).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sfio_check.h"
#include "sfio_locks.h"

#define BLOCK   64u                 /* lock ranges are whole blocks */
#define NBLOCKS 1024u               /* the locked file region: 64 KiB */
#define WORKERS 8
#define ROUNDS  400

static char path[4096];

static void make_file(void)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof(path), "%s/sfio-check-locks.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

/* Per block: the writer holding it (0: none) and the number of readers. */
typedef struct {
    _Atomic int writer[NBLOCKS];
    _Atomic int readers[NBLOCKS];
    _Atomic int violations;
} board_t;

/* A random list of 1..12 block ranges, unsorted and overlapping, as the
 * segments of a view would give; the lock plan sorts and merges it. */
static void random_list(uint64_t *s, mca_common_sfio_rangelist_t *locks)
{
    static char mem[1];
    mca_common_sfio_ioseg_t segs[12];
    size_t n = 1 + xorshift64(s) % 12;
    for (size_t i = 0; i < n; ++i) {
        uint64_t b = xorshift64(s) % NBLOCKS, len = 1 + xorshift64(s) % 32;
        if (b + len > NBLOCKS) len = NBLOCKS - b;
        segs[i] = (mca_common_sfio_ioseg_t) { b * BLOCK, len * BLOCK, mem };
    }
    ck_assert_int_eq(0, mca_common_sfio_lockplan_build(MCA_COMMON_SFIO_LOCK_LIST, segs, n, NULL,
                                                      locks));
}

static void hold(board_t *bd, const mca_common_sfio_rangelist_t *l, int me, bool excl, int dir)
{
    for (size_t i = 0; i < l->count; ++i) {
        for (uint64_t b = l->ranges[i].offset / BLOCK;
             b < (l->ranges[i].offset + l->ranges[i].length) / BLOCK; ++b) {
            if (excl) {
                int want = dir > 0 ? 0 : me;
                if (!atomic_compare_exchange_strong(&bd->writer[b], &want, dir > 0 ? me : 0) ||
                    (dir > 0 && 0 != atomic_load(&bd->readers[b]))) {
                    atomic_fetch_add(&bd->violations, 1);
                }
            } else {
                if (0 != atomic_load(&bd->writer[b])) {
                    atomic_fetch_add(&bd->violations, 1);
                }
                atomic_fetch_add(&bd->readers[b], dir);
            }
        }
    }
}

static void worker(board_t *bd, int me)
{
    uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t) me + 1;
    int fd = open(path, O_RDWR);   /* its own open file description */
    mca_common_sfio_rangelist_t locks;
    mca_common_sfio_rangelist_init(&locks);
    alarm(60);   /* a deadlock ends the worker with SIGALRM */
    for (int r = 0; r < ROUNDS && fd >= 0; ++r) {
        random_list(&s, &locks);
        bool excl = 0 != xorshift64(&s) % 3;
        if (0 != mca_common_sfio_locks_acquire(fd, &locks, excl)) {
            _exit(3);
        }
        hold(bd, &locks, me, excl, +1);
        if (0 == xorshift64(&s) % 8) {
            sched_yield();
        }
        hold(bd, &locks, me, excl, -1);
        mca_common_sfio_locks_release(fd, &locks);
    }
    mca_common_sfio_rangelist_destroy(&locks);
    _exit(fd >= 0 ? 0 : 2);
}

START_TEST(random_lists_never_deadlock_or_overlap)
{
    board_t *bd = mmap(NULL, sizeof(board_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                       -1, 0);
    ck_assert_ptr_ne(bd, MAP_FAILED);
    memset(bd, 0, sizeof(*bd));
    make_file();
    pid_t pid[WORKERS];
    for (int w = 0; w < WORKERS; ++w) {
        pid[w] = fork();
        ck_assert_int_ge(pid[w], 0);
        if (0 == pid[w]) {
            worker(bd, w + 1);
        }
    }
    for (int w = 0; w < WORKERS; ++w) {
        int st;
        ck_assert_int_eq(pid[w], waitpid(pid[w], &st, 0));
        if (WIFSIGNALED(st)) {
            ck_abort_msg("worker %d killed by signal %d (SIGALRM: deadlock)", w, WTERMSIG(st));
        }
        ck_assert_int_eq(0, WEXITSTATUS(st));
    }
    ck_assert_int_eq(0, atomic_load(&bd->violations));
    unlink(path);
    munmap(bd, sizeof(*bd));
}
END_TEST

/* True when some other open file description holds a lock conflicting
 * with an exclusive lock of [off, off + len). */
static bool locked_elsewhere(int fd, uint64_t off, uint64_t len)
{
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = (off_t) off,
                        .l_len = (off_t) len };
    ck_assert_int_eq(0, fcntl(fd, F_OFD_GETLK, &fl));
    return F_UNLCK != fl.l_type;
}

START_TEST(killed_holder_leaves_nothing_locked)
{
    static char mem[1];
    mca_common_sfio_ioseg_t segs[3] = { { 0, 100, mem }, { 4096, 10, mem }, { 1 << 20, 1, mem } };
    mca_common_sfio_rangelist_t locks;
    int ready[2];
    make_file();
    mca_common_sfio_rangelist_init(&locks);
    ck_assert_int_eq(0, mca_common_sfio_lockplan_build(MCA_COMMON_SFIO_LOCK_LIST, segs, 3, NULL,
                                                      &locks));
    ck_assert_int_eq(0, pipe(ready));
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (0 == pid) {
        int fd = open(path, O_RDWR);
        if (fd < 0 || 0 != mca_common_sfio_locks_acquire(fd, &locks, true)) {
            _exit(2);
        }
        (void) !write(ready[1], "x", 1);
        for (;;) pause();   /* holds the locks until killed */
    }
    char c;
    ck_assert_int_eq(1, read(ready[0], &c, 1));
    int fd = open(path, O_RDWR);
    ck_assert_int_ge(fd, 0);
    for (size_t i = 0; i < locks.count; ++i) {
        ck_assert(locked_elsewhere(fd, locks.ranges[i].offset, locks.ranges[i].length));
    }
    ck_assert_int_eq(0, kill(pid, SIGKILL));
    int st;
    ck_assert_int_eq(pid, waitpid(pid, &st, 0));
    ck_assert(WIFSIGNALED(st) && SIGKILL == WTERMSIG(st));
    /* The kernel dropped the dead holder's locks: taking them returns at
     * once (a hang here would trip Check's timeout). */
    for (size_t i = 0; i < locks.count; ++i) {
        ck_assert(!locked_elsewhere(fd, locks.ranges[i].offset, locks.ranges[i].length));
    }
    ck_assert_int_eq(0, mca_common_sfio_locks_acquire(fd, &locks, true));
    mca_common_sfio_locks_release(fd, &locks);
    close(fd);
    close(ready[0]);
    close(ready[1]);
    unlink(path);
    mca_common_sfio_rangelist_destroy(&locks);
}
END_TEST

static Suite *locks_suite(void)
{
    Suite *s = suite_create("sfio_locks");
    TCase *tc = tcase_create("ofd");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, random_lists_never_deadlock_or_overlap);
    tcase_add_test(tc, killed_holder_leaves_nothing_locked);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(locks_suite)
