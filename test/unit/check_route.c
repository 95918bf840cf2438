/*
 * Unit tests of sfio_route: every combination of facts (all modes, and
 * one that is not a mode) against the rules stated in sfio_route.h, one
 * property per test, plus the safety properties that hold whatever the
 * rules: never versions without a store, never plain calls for an atomic
 * write, the cache only behind list locks.
 */
#include <stdbool.h>

#include "sfio_check.h"
#include "sfio_fsmagic.h"
#include "sfio_route.h"

#define NMODES 6   /* the five modes and 99, not a mode */

static int mode_at(int i)
{
    return i < 5 ? i : 99;
}

/* Calls fn on every combination of facts. */
static void each_facts(void (*fn)(const mca_common_sfio_route_facts_t *f,
                                  const mca_common_sfio_route_t *r))
{
    for (int m = 0; m < NMODES; ++m) {
        for (unsigned bits = 0; bits < 256; ++bits) {
            mca_common_sfio_route_facts_t f = {
                .mode = mode_at(m),
                .atomic = bits & 1, .read_only = bits & 2, .have_store = bits & 4,
                .store_attached = (bits & 4) && (bits & 8), .objects_known = bits & 16,
                .pcache_enabled = bits & 32,
                /* only without a store: fs open made none for that reason */
                .local_one_node = !(bits & 4) && (bits & 64),
                .gate_open = !(bits & 4) && (bits & 64) && (bits & 128),
            };
            mca_common_sfio_route_t r = mca_common_sfio_route_decide(&f);
            fn(&f, &r);
        }
    }
}

static bool is_lock_mode(int mode)
{
    return MCA_COMMON_SFIO_ATOMIC_LISTLOCK == mode || MCA_COMMON_SFIO_ATOMIC_RANGELOCK == mode ||
           MCA_COMMON_SFIO_ATOMIC_FILELOCK == mode;
}

static bool is_versioning_mode(int mode)
{
    return MCA_COMMON_SFIO_ATOMIC_AUTO == mode || MCA_COMMON_SFIO_ATOMIC_VERSIONED == mode;
}

static void non_atomic(const mca_common_sfio_route_facts_t *f, const mca_common_sfio_route_t *r)
{
    if (f->atomic) {
        return;
    }
    bool unfolded = f->have_store && f->store_attached;
    REQUIRE(r->kind == (unfolded ? MCA_COMMON_SFIO_ROUTE_STORE : MCA_COMMON_SFIO_ROUTE_POSIX));
    REQUIRE(r->with_store == unfolded);
    REQUIRE(!r->with_objects && !r->with_pcache && !r->with_gate);
    REQUIRE(MCA_COMMON_SFIO_ROUTE_SAY_NOTHING == r->say);
}

START_TEST(non_atomic_is_plain_or_through_the_store)
{
    each_facts(non_atomic);
}
END_TEST

static void read_only(const mca_common_sfio_route_facts_t *f, const mca_common_sfio_route_t *r)
{
    if (!f->atomic || !f->read_only || !is_versioning_mode(f->mode)) {
        return;
    }
    REQUIRE(r->kind == (f->have_store ? MCA_COMMON_SFIO_ROUTE_STORE
                                      : MCA_COMMON_SFIO_ROUTE_POSIX));
    REQUIRE(!r->with_objects && !r->with_pcache && !r->with_gate);
    REQUIRE(MCA_COMMON_SFIO_ROUTE_SAY_NOTHING == r->say);
}

START_TEST(read_only_atomic_needs_no_versions_nor_locks)
{
    each_facts(read_only);
}
END_TEST

static void versioning(const mca_common_sfio_route_facts_t *f, const mca_common_sfio_route_t *r)
{
    if (!f->atomic || f->read_only || !is_versioning_mode(f->mode)) {
        return;
    }
    if (f->have_store) {
        REQUIRE(MCA_COMMON_SFIO_ROUTE_VERSIONS == r->kind && r->with_store);
        REQUIRE(r->with_objects == f->objects_known);
        REQUIRE(MCA_COMMON_SFIO_ROUTE_SAY_NOTHING == r->say);
    } else if (MCA_COMMON_SFIO_ATOMIC_AUTO == f->mode) {
        /* one node over local storage: a range lock per access; else lists */
        REQUIRE(MCA_COMMON_SFIO_ROUTE_LOCKED == r->kind);
        REQUIRE((f->local_one_node ? MCA_COMMON_SFIO_LOCK_RANGE : MCA_COMMON_SFIO_LOCK_LIST) ==
                r->lockmode);
        REQUIRE(r->with_objects == (f->objects_known && !f->local_one_node));
        REQUIRE(!r->with_pcache);
        REQUIRE(r->with_gate == f->gate_open);
        REQUIRE(MCA_COMMON_SFIO_ROUTE_SAY_FALLBACK == r->say);
    } else {
        REQUIRE(MCA_COMMON_SFIO_ROUTE_NONE == r->kind);
        REQUIRE(MCA_COMMON_SFIO_ROUTE_SAY_NO_STORE == r->say);
    }
}

START_TEST(auto_and_versioned_use_the_store_or_say_why_not)
{
    each_facts(versioning);
}
END_TEST

static void lock_modes(const mca_common_sfio_route_facts_t *f, const mca_common_sfio_route_t *r)
{
    if (!f->atomic || !is_lock_mode(f->mode)) {
        return;
    }
    static const mca_common_sfio_lockmode_t want[] = {
        [MCA_COMMON_SFIO_ATOMIC_LISTLOCK] = MCA_COMMON_SFIO_LOCK_LIST,
        [MCA_COMMON_SFIO_ATOMIC_RANGELOCK] = MCA_COMMON_SFIO_LOCK_RANGE,
        [MCA_COMMON_SFIO_ATOMIC_FILELOCK] = MCA_COMMON_SFIO_LOCK_FILE,
    };
    REQUIRE(MCA_COMMON_SFIO_ROUTE_LOCKED == r->kind);   /* read-only too: asked for */
    REQUIRE(want[f->mode] == r->lockmode);
    REQUIRE(!r->with_store);
    REQUIRE(!r->with_gate);   /* a lock mode asked for by name locks every access */
    /* only list locks tell private bytes from shared ones */
    REQUIRE(r->with_objects == (f->objects_known && MCA_COMMON_SFIO_LOCK_LIST == r->lockmode));
    REQUIRE(MCA_COMMON_SFIO_ROUTE_SAY_NOTHING == r->say);
}

START_TEST(lock_modes_always_lock_their_way)
{
    each_facts(lock_modes);
}
END_TEST

static void not_a_mode(const mca_common_sfio_route_facts_t *f, const mca_common_sfio_route_t *r)
{
    if (f->atomic && NULL == mca_common_sfio_atomic_mode_info(f->mode)) {
        REQUIRE(MCA_COMMON_SFIO_ROUTE_NONE == r->kind);
        REQUIRE(MCA_COMMON_SFIO_ROUTE_SAY_BAD_MODE == r->say);
    }
}

START_TEST(an_unknown_mode_serves_nothing_atomic)
{
    each_facts(not_a_mode);
}
END_TEST

static void safety(const mca_common_sfio_route_facts_t *f, const mca_common_sfio_route_t *r)
{
    REQUIRE(r->kind < MCA_COMMON_SFIO_ROUTE_KINDS);
    if (MCA_COMMON_SFIO_ROUTE_VERSIONS == r->kind || r->with_store) {
        REQUIRE(f->have_store);
    }
    if (MCA_COMMON_SFIO_ROUTE_VERSIONS == r->kind) {
        REQUIRE(f->atomic && !f->read_only);
    }
    if (f->atomic && !f->read_only) {   /* an atomic write is never unprotected */
        REQUIRE(MCA_COMMON_SFIO_ROUTE_POSIX != r->kind && MCA_COMMON_SFIO_ROUTE_STORE != r->kind);
    }
    /* the cache (a write returns before its bytes are in the file) only
     * where listlock was asked for by name */
    if (r->with_pcache) {
        REQUIRE(MCA_COMMON_SFIO_ROUTE_LOCKED == r->kind &&
                MCA_COMMON_SFIO_LOCK_LIST == r->lockmode && f->objects_known &&
                f->pcache_enabled && MCA_COMMON_SFIO_ATOMIC_LISTLOCK == f->mode);
    } else if (MCA_COMMON_SFIO_ROUTE_LOCKED == r->kind &&
               MCA_COMMON_SFIO_ATOMIC_LISTLOCK == f->mode) {
        REQUIRE(!f->objects_known || !f->pcache_enabled);
    }
    if (r->with_objects) {
        REQUIRE(f->atomic && f->objects_known);
    }
}

START_TEST(safety_holds_for_every_combination)
{
    each_facts(safety);
}
END_TEST

START_TEST(the_mode_table_is_complete)
{
    ck_assert_int_eq(mca_common_sfio_atomic_mode_count, 5);
    for (int m = 0; m < 5; ++m) {
        const mca_common_sfio_atomic_mode_info_t *info = mca_common_sfio_atomic_mode_info(m);
        ck_assert_ptr_nonnull(info);
        ck_assert_int_eq((int) info->id, m);
        ck_assert_int_eq(info->locks, is_lock_mode(m));
        ck_assert_ptr_nonnull(info->name);
        ck_assert_ptr_nonnull(info->help);
    }
    ck_assert_ptr_null(mca_common_sfio_atomic_mode_info(-1));
    ck_assert_ptr_null(mca_common_sfio_atomic_mode_info(5));
}
END_TEST

/* The lock service is opened only where lists may be locked (the
 * stated rule: a lock mode, or auto without a store on a writable
 * handle), and where the backend asks for it (auto: across nodes); and
 * never where no atomic access the decision can make would lock. */
START_TEST(the_lock_service_is_wanted_only_where_it_serves)
{
    for (int b = 0; b < mca_common_sfio_lock_backend_count; ++b) {
        int backend = (int) mca_common_sfio_lock_backends[b].id;
        ck_assert_int_eq(backend, b);
        ck_assert_ptr_nonnull(mca_common_sfio_lock_backends[b].name);
        for (int m = -1; m < 6; ++m) {
            for (int bits = 0; bits < 8; ++bits) {
                bool store = bits & 1, spans = bits & 2, ro = bits & 4;
                bool may_lock = is_lock_mode(m) ||
                                (MCA_COMMON_SFIO_ATOMIC_AUTO == m && !store && !ro);
                bool want = MCA_COMMON_SFIO_LOCK_BACKEND_SERVICE == backend ? may_lock
                          : MCA_COMMON_SFIO_LOCK_BACKEND_AUTO == backend   ? may_lock && spans
                                                                            : false;
                ck_assert_int_eq(want, mca_common_sfio_route_wants_locksvc(backend, m, ro, store,
                                                                           spans));
                /* wanted: some access of this file locks; not wanted by the
                 * service backend: none does */
                for (int v = 0; v < 8; ++v) {
                    mca_common_sfio_route_facts_t f = {
                        .mode = m, .atomic = true, .read_only = ro, .have_store = store,
                        .store_attached = store && (v & 1), .objects_known = v & 2,
                        .pcache_enabled = v & 4,
                    };
                    bool locks = MCA_COMMON_SFIO_ROUTE_LOCKED ==
                                 mca_common_sfio_route_decide(&f).kind;
                    if (locks && MCA_COMMON_SFIO_LOCK_BACKEND_SERVICE == backend) {
                        ck_assert(want);
                    }
                }
            }
        }
    }
    ck_assert(!mca_common_sfio_route_wants_locksvc(99, MCA_COMMON_SFIO_ATOMIC_LISTLOCK, false,
                                                   false, true));
}
END_TEST

/* A store where versions may serve: versioned always, auto across nodes
 * or on network storage, never for a lock mode; and where fs open makes
 * no store, every atomic write of auto locks (never unprotected, never an
 * error) while versioned would have no route at all. */
START_TEST(a_store_is_made_only_where_versions_may_serve)
{
    for (int m = -1; m < 6; ++m) {
        for (int bits = 0; bits < 4; ++bits) {
            bool spans = bits & 1, network = bits & 2;
            bool want = MCA_COMMON_SFIO_ATOMIC_VERSIONED == m ||
                        (MCA_COMMON_SFIO_ATOMIC_AUTO == m && (spans || network)) ||
                        NULL == mca_common_sfio_atomic_mode_info(m);
            ck_assert_int_eq(want, mca_common_sfio_route_wants_store(m, spans, network));
            if (want) {
                continue;
            }
            mca_common_sfio_route_facts_t f = {
                .mode = m, .atomic = true,
                .local_one_node = MCA_COMMON_SFIO_ATOMIC_AUTO == m && !spans && !network,
            };
            mca_common_sfio_route_t r = mca_common_sfio_route_decide(&f);
            ck_assert_int_eq(r.kind, MCA_COMMON_SFIO_ROUTE_LOCKED);
            ck_assert_int_eq(r.say, MCA_COMMON_SFIO_ATOMIC_AUTO == m
                                        ? MCA_COMMON_SFIO_ROUTE_SAY_FALLBACK
                                        : MCA_COMMON_SFIO_ROUTE_SAY_NOTHING);
        }
    }
    /* one node, local storage: auto locks, versioned keeps its store */
    ck_assert(!mca_common_sfio_route_wants_store(MCA_COMMON_SFIO_ATOMIC_AUTO, false, false));
    ck_assert(mca_common_sfio_route_wants_store(MCA_COMMON_SFIO_ATOMIC_VERSIONED, false, false));
    ck_assert(mca_common_sfio_route_auto_local_why[0] != '\0');
}
END_TEST

/* Flush and revalidate where clients cache and the lock does not make
 * them coherent: NFS under the service, FUSE under either; never on local
 * or coherent file systems (ext4, tmpfs, Lustre, GPFS), never for NFS's
 * own fcntl locks. */
START_TEST(locks_are_made_coherent_where_clients_cache)
{
    static const struct {
        long f_type;
        bool service, fcntl;   /* coherence steps added with that locker */
    } cases[] = {
        { 0x6969, true, false },           /* NFS */
        { 0x65735546, true, true },        /* FUSE */
        { 0xef53, false, false },          /* ext2/3/4 */
        { 0x01021994, false, false },      /* tmpfs */
        { 0x0bd00bd0, false, false },      /* Lustre */
        { 0x47504653, false, false },      /* GPFS */
        { 0xffffffff00006969L, true, false },   /* sign-extended magic */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        for (int by_service = 0; by_service < 2; ++by_service) {
            bool want = by_service ? cases[i].service : cases[i].fcntl;
            mca_common_sfio_lock_coherence_t c =
                mca_common_sfio_route_lock_coherence(cases[i].f_type, by_service);
            ck_assert_int_eq(c.flush_before_release, want);
            ck_assert_int_eq(c.revalidate_after_grant, want);
        }
    }
}
END_TEST

START_TEST(network_fs_types)
{
    ck_assert(mca_common_sfio_fs_is_network(0x6969));           /* NFS */
    ck_assert(mca_common_sfio_fs_is_network(0x0bd00bd0));       /* Lustre */
    ck_assert(mca_common_sfio_fs_is_network(0x47504653));       /* GPFS */
    ck_assert(mca_common_sfio_fs_is_network((long) 0xff534d42)); /* CIFS */
    ck_assert(!mca_common_sfio_fs_is_network(0xef53));          /* ext4 */
    ck_assert(!mca_common_sfio_fs_is_network(0x01021994));      /* tmpfs */
    ck_assert(!mca_common_sfio_fs_is_network(0x58465342));      /* xfs */
    ck_assert(!mca_common_sfio_fs_is_network(0x65735546));      /* FUSE: statfs cannot tell */
    /* f_type may come sign-extended */
    ck_assert(mca_common_sfio_fs_is_network((long) (int) 0xff534d42));
}
END_TEST

START_TEST(caching_clients_are_nfs_and_fuse)
{
    ck_assert(mca_common_sfio_fs_clients_cache(0x6969));          /* NFS */
    ck_assert(mca_common_sfio_fs_clients_cache(0x65735546));      /* FUSE */
    ck_assert(!mca_common_sfio_fs_clients_cache(0x0bd00bd0));     /* Lustre: coherent */
    ck_assert(!mca_common_sfio_fs_clients_cache(0x47504653));     /* GPFS: coherent */
    ck_assert(!mca_common_sfio_fs_clients_cache(0xef53));         /* ext4 */
    ck_assert(!mca_common_sfio_fs_clients_cache(0));              /* unknown */
    ck_assert(mca_common_sfio_fs_is_nfs(0x6969));
    ck_assert(!mca_common_sfio_fs_is_nfs(0x65735546));
}
END_TEST

static Suite *route_suite(void)
{
    Suite *s = suite_create("route");
    TCase *tc = tcase_create("decide");
    tcase_add_test(tc, non_atomic_is_plain_or_through_the_store);
    tcase_add_test(tc, read_only_atomic_needs_no_versions_nor_locks);
    tcase_add_test(tc, auto_and_versioned_use_the_store_or_say_why_not);
    tcase_add_test(tc, lock_modes_always_lock_their_way);
    tcase_add_test(tc, an_unknown_mode_serves_nothing_atomic);
    tcase_add_test(tc, safety_holds_for_every_combination);
    tcase_add_test(tc, the_mode_table_is_complete);
    tcase_add_test(tc, the_lock_service_is_wanted_only_where_it_serves);
    tcase_add_test(tc, a_store_is_made_only_where_versions_may_serve);
    tcase_add_test(tc, locks_are_made_coherent_where_clients_cache);
    tcase_add_test(tc, network_fs_types);
    tcase_add_test(tc, caching_clients_are_nfs_and_fuse);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(route_suite)
