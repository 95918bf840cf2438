/*
 * Unit tests of sfio_util: FNV-1a against published values, the host
 * name hash, the process-death test on live, zombie and reaped children,
 * and OFD locks between two descriptors of one process (OFD locks belong
 * to the open file, so two descriptors exclude each other).  Not pure:
 * forks, and needs a local file system with byte-range locks (TMPDIR,
 * else /tmp).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sfio_check.h"
#include "sfio_util.h"

START_TEST(fnv1a_known_values)
{
    /* FNV-1a 64 test vectors (Fowler, Noll, Vo reference code) */
    ck_assert_uint_eq(mca_common_sfio_fnv1a(MCA_COMMON_SFIO_FNV1A_INIT, "", 0),
                      0xcbf29ce484222325ull);
    ck_assert_uint_eq(mca_common_sfio_fnv1a(MCA_COMMON_SFIO_FNV1A_INIT, "a", 1),
                      0xaf63dc4c8601ec8cull);
    ck_assert_uint_eq(mca_common_sfio_fnv1a(MCA_COMMON_SFIO_FNV1A_INIT, "foobar", 6),
                      0x85944171f73967e8ull);
    /* chaining equals hashing the concatenation */
    uint64_t h = mca_common_sfio_fnv1a(MCA_COMMON_SFIO_FNV1A_INIT, "foo", 3);
    ck_assert_uint_eq(mca_common_sfio_fnv1a(h, "bar", 3), 0x85944171f73967e8ull);
}
END_TEST

START_TEST(host_hash_is_the_name_hash)
{
    char name[256];
    ck_assert_int_eq(gethostname(name, sizeof(name)), 0);
    name[sizeof(name) - 1] = '\0';
    ck_assert_uint_eq(mca_common_sfio_host_hash(),
                      mca_common_sfio_fnv1a(MCA_COMMON_SFIO_FNV1A_INIT, name, strlen(name)));
    ck_assert_uint_eq(mca_common_sfio_host_hash(), mca_common_sfio_host_hash());
}
END_TEST

/* Waits (up to 10 s) until child pid is a zombie: gone from kill's view
 * never, but its /proc state says Z once it has exited. */
static void wait_exited(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    /* WNOWAIT: learn that it exited, leave it unreaped */
    ck_assert_int_eq(waitid(P_PID, (id_t) pid, &si, WEXITED | WNOWAIT), 0);
    ck_assert_int_eq(si.si_pid, pid);
}

START_TEST(pid_dead_live_zombie_reaped)
{
    ck_assert(!mca_common_sfio_pid_dead(0));
    ck_assert(!mca_common_sfio_pid_dead(-1));
    ck_assert(!mca_common_sfio_pid_dead(getpid()));
    ck_assert(!mca_common_sfio_pid_dead(1));   /* init: alive (maybe EPERM) */

    int go[2];
    ck_assert_int_eq(pipe(go), 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (0 == child) {
        char c;
        close(go[1]);
        (void) read(go[0], &c, 1);   /* lives until the parent closes the pipe */
        _exit(0);
    }
    close(go[0]);
    ck_assert(!mca_common_sfio_pid_dead(child));   /* alive, blocked in read */

    close(go[1]);
    wait_exited(child);
    ck_assert(mca_common_sfio_pid_dead(child));    /* a zombie is dead */

    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(mca_common_sfio_pid_dead(child));    /* reaped: ESRCH */
}
END_TEST

START_TEST(pid_dead_killed_child)
{
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (0 == child) {
        for (;;) {
            pause();
        }
    }
    ck_assert(!mca_common_sfio_pid_dead(child));
    ck_assert_int_eq(kill(child, SIGKILL), 0);
    wait_exited(child);
    ck_assert(mca_common_sfio_pid_dead(child));
    ck_assert_int_eq(waitpid(child, NULL, 0), child);
}
END_TEST

static int scratch_open(char *path, size_t size)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, size, "%s/sfio-check-util.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    return fd;
}

START_TEST(ofd_locks_exclude_descriptors)
{
    char path[256];
    int a = scratch_open(path, sizeof(path));
    int b = open(path, O_RDWR);
    ck_assert_int_ge(b, 0);
    unlink(path);

    ck_assert_int_eq(mca_common_sfio_ofd_lock(a, F_WRLCK, false, 10, 5), 0);
    /* overlapping: refused at once without wait */
    ck_assert_int_eq(mca_common_sfio_ofd_lock(b, F_WRLCK, false, 14, 1), -EAGAIN);
    ck_assert_int_eq(mca_common_sfio_ofd_lock(b, F_RDLCK, false, 0, 11), -EAGAIN);
    /* half-open: [10, 15) leaves 9 and 15 free */
    ck_assert_int_eq(mca_common_sfio_ofd_lock(b, F_WRLCK, false, 9, 1), 0);
    ck_assert_int_eq(mca_common_sfio_ofd_lock(b, F_WRLCK, false, 15, 1), 0);
    /* len 0: to the end of the file, however it grows */
    ck_assert_int_eq(mca_common_sfio_ofd_lock(a, F_RDLCK, false, 100, 0), 0);
    ck_assert_int_eq(mca_common_sfio_ofd_lock(b, F_WRLCK, false, 1 << 30, 1), -EAGAIN);
    ck_assert_int_eq(mca_common_sfio_ofd_lock(b, F_RDLCK, false, 1 << 30, 1), 0);
    /* unlock, then the other descriptor gets it */
    ck_assert_int_eq(mca_common_sfio_ofd_lock(a, F_UNLCK, false, 10, 5), 0);
    ck_assert_int_eq(mca_common_sfio_ofd_lock(b, F_WRLCK, true, 10, 5), 0);
    /* bad descriptor: a negative errno */
    ck_assert_int_eq(mca_common_sfio_ofd_lock(-1, F_WRLCK, false, 0, 1), -EBADF);
    close(a);
    close(b);
}
END_TEST

/* The random helpers fill what they are given and do not repeat. */
START_TEST(random_numbers_do_not_repeat)
{
    unsigned char a[64], b[64];
    memset(a, 0, sizeof(a));
    memset(b, 0, sizeof(b));
    REQUIRE(0 == mca_common_sfio_random_bytes(a, sizeof(a)));
    REQUIRE(0 == mca_common_sfio_random_bytes(b, sizeof(b)));
    REQUIRE(0 != memcmp(a, b, sizeof(a)));
    uint64_t seen[256];
    for (int i = 0; i < 256; ++i) {
        seen[i] = mca_common_sfio_random64();
        for (int j = 0; j < i; ++j) {
            REQUIRE(seen[j] != seen[i]);
        }
    }
}
END_TEST

static Suite *util_suite(void)
{
    Suite *s = suite_create("sfio_util");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, fnv1a_known_values);
    tcase_add_test(tc, host_hash_is_the_name_hash);
    tcase_add_test(tc, pid_dead_live_zombie_reaped);
    tcase_add_test(tc, pid_dead_killed_child);
    tcase_add_test(tc, ofd_locks_exclude_descriptors);
    tcase_add_test(tc, random_numbers_do_not_repeat);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(util_suite)
