/*
 * check_recover: crash recovery (sfio_vstore_recover, reached through
 * mca_common_sfio_vstore_scan as an open does) of stores built by hand
 * beside a scratch file, compared byte for byte with a model: the fresh
 * bytes of unfinished writes are undone (zeroed, a tail made of them cut
 * off), then versions folded < v <= P are redone in version order.  P is
 * the coordination file's published mark for a mapped store; for a store
 * whose counters lived in the coordination service it is the longest run
 * of versions above the folded mark with whole records (from rec_head
 * to the end of the record logs, the last one maybe cut).
 *
 * Not pure: real files in a scratch directory, the engine's recovery
 * sources linked in (as the sfio-store tool links them).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sfio_check.h"
#include "sfio_posixio.h"
#include "sfio_record.h"
#include "sfio_vstore.h"
#include "sfio_vstore_int.h"

#define WRITE MCA_COMMON_SFIO_RECORD_WRITE
#define PLACE MCA_COMMON_SFIO_RECORD_PLACE
#define ABORT MCA_COMMON_SFIO_RECORD_ABORT
#define FRESH MCA_COMMON_SFIO_RECORD_FRESH

enum { MAX_RANKS = 4, MAX_RECS = 32, MAX_RANGES = 3, FILE_MAX = 16384 };

typedef struct {
    mca_common_sfio_record_kind_t kind;
    bool followed;      /* a WRITE appended with the PLACE record after it */
    uint64_t version;   /* 0 for FRESH */
    uint32_t nranges;
    mca_common_sfio_range_t ranges[MAX_RANGES];
} rec_spec_t;

/* One rank's record log: `junk` bytes before rec_head (records compacted
 * away), recs[0 .. whole) up to rec_tail, recs[whole .. n) appended
 * whole past rec_tail (the coordination file never counted them), then,
 * when torn, half a record.  A service store keeps no rec_tail: there
 * recs[whole] is cut in its append and nothing follows. */
typedef struct {
    rec_spec_t recs[MAX_RECS];
    int n, whole;
    uint64_t junk;
    bool torn;
} rank_spec_t;

typedef struct {
    int nranks;
    rank_spec_t rank[MAX_RANKS];
    uint64_t folded;
    uint64_t base_size;   /* the flat file before the fresh in-place writes */
} scenario_t;

/* The file as the crash left it: a pattern, plus the fresh bytes that
 * writers put in place after their FRESH notes were whole. */
typedef struct {
    unsigned char bytes[FILE_MAX];
    size_t size;
} image_t;

static unsigned char base_byte(uint64_t off) { return (unsigned char) ('a' + off % 23); }
static unsigned char fresh_byte(uint64_t off) { return (unsigned char) (0x40 | (off % 31)); }
static unsigned char data_byte(uint64_t version, uint64_t k)
{
    return (unsigned char) (0x80 | ((version * 29 + k * 7) & 0x7f));
}

static void image_put(image_t *im, uint64_t off, unsigned char b)
{
    REQUIRE(off < FILE_MAX);
    im->bytes[off] = b;
    if (off + 1 > im->size) im->size = (size_t) off + 1;
}

static image_t crashed_image(const scenario_t *sc)
{
    image_t im = { .size = 0 };
    for (uint64_t i = 0; i < sc->base_size; ++i) image_put(&im, i, base_byte(i));
    for (int r = 0; r < sc->nranks; ++r) {
        const rank_spec_t *rs = &sc->rank[r];
        for (int i = 0; i < rs->whole; ++i) {
            const rec_spec_t *x = &rs->recs[i];
            for (uint32_t k = 0; FRESH == x->kind && k < x->nranges; ++k) {
                for (uint64_t o = 0; o < x->ranges[k].length; ++o) {
                    image_put(&im, x->ranges[k].offset + o, fresh_byte(x->ranges[k].offset + o));
                }
            }
        }
    }
    return im;
}

/* ---- the model ---- */

static uint64_t model_published(const scenario_t *sc)
{
    uint64_t P = sc->folded;
    for (bool found = true; found;) {
        found = false;
        for (int r = 0; r < sc->nranks; ++r) {
            for (int i = 0; i < sc->rank[r].whole; ++i) {
                const rec_spec_t *x = &sc->rank[r].recs[i];
                found |= FRESH != x->kind && x->version == P + 1;
            }
        }
        P += found;
    }
    return P;
}

/* The file recovery leaves for mark P; *undone_p: fresh bytes zeroed. */
static image_t model_file(const scenario_t *sc, uint64_t P, uint64_t *undone_p)
{
    image_t im = crashed_image(sc);
    mca_common_sfio_range_t undone[MAX_RANKS * MAX_RECS * MAX_RANGES];
    size_t nundone = 0;
    *undone_p = 0;
    for (int r = 0; r < sc->nranks; ++r) {
        const rank_spec_t *rs = &sc->rank[r];
        for (int i = 0; i < rs->whole; ++i) {
            const rec_spec_t *x = &rs->recs[i], *next = i + 1 < rs->whole ? x + 1 : NULL;
            if (FRESH != x->kind || (next && 0 != next->version && next->version <= P)) {
                continue;
            }
            for (uint32_t k = 0; k < x->nranges; ++k) {
                undone[nundone++] = x->ranges[k];
                for (uint64_t o = x->ranges[k].offset; o < x->ranges[k].offset + x->ranges[k].length &&
                                                       o < im.size; ++o) {
                    im.bytes[o] = 0;
                    ++*undone_p;
                }
            }
        }
    }
    /* the tail made only of undone bytes is cut off */
    uint64_t cut = im.size;
    for (bool moved = true; moved;) {
        moved = false;
        for (size_t j = 0; j < nundone; ++j) {
            if (undone[j].offset < cut && undone[j].offset + undone[j].length >= cut) {
                cut = undone[j].offset;
                moved = true;
            }
        }
    }
    im.size = (size_t) cut;
    memset(im.bytes + im.size, 0, FILE_MAX - im.size);
    for (uint64_t v = sc->folded + 1; v <= P; ++v) {
        for (int r = 0; r < sc->nranks; ++r) {
            for (int i = 0; i < sc->rank[r].whole; ++i) {
                const rec_spec_t *x = &sc->rank[r].recs[i];
                if (x->version != v || (WRITE != x->kind && PLACE != x->kind)) {
                    continue;
                }
                uint64_t kdata = 0;
                for (uint32_t k = 0; k < x->nranges; ++k) {
                    for (uint64_t o = 0; o < x->ranges[k].length; ++o) {
                        image_put(&im, x->ranges[k].offset + o, data_byte(v, kdata++));
                    }
                }
            }
        }
    }
    return im;
}

static bool same_image(const image_t *a, const image_t *b)
{
    return a->size == b->size && 0 == memcmp(a->bytes, b->bytes, a->size);
}

/* ---- building a store by hand ---- */

static char scratch[64];

static void write_file(const char *path, const void *buf, size_t n, uint64_t off)
{
    int fd = open(path, O_WRONLY | O_CREAT, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(0 == n || (ssize_t) n == mca_common_sfio_posix_pwrite_full(fd, buf, n, off));
    close(fd);
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    return 0 == stat(path, &st) ? (uint64_t) st.st_size : 0;
}

/* Makes the scratch file "flat" as the crash left it (open as *fd_p) and
 * beside it a store for it; returns the store's directory (malloc). */
static char *build(const scenario_t *sc, uint32_t shared_by, uint64_t published, int *fd_p)
{
    char flat[128];
    snprintf(flat, sizeof(flat), "%s/flat", scratch);
    image_t im = crashed_image(sc);
    (void) unlink(flat);
    int fd = open(flat, O_RDWR | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE((ssize_t) im.size == mca_common_sfio_posix_pwrite_full(fd, im.bytes, im.size, 0));

    sfio_ident_t ident;
    REQUIRE(0 == sfio_ident_of_fd(fd, &ident));
    char name[128];
    REQUIRE(0 == sfio_store_name(ident.ino, name, sizeof(name)));
    char *dir = sfio_path_join(scratch, name);
    REQUIRE(dir && 0 == mkdir(dir, 0700));

    bool service = SFIO_SHARED_BY_SERVICE == shared_by;
    size_t cbytes = sfio_coord_bytes(sc->nranks);
    sfio_coord_t *c = calloc(1, cbytes);
    REQUIRE(c);
    for (int r = 0; r < sc->nranks; ++r) {
        const rank_spec_t *rs = &sc->rank[r];
        char *lp = sfio_rank_file(dir, "log", r), *rp = sfio_rank_file(dir, "rec", r);
        unsigned char junk[64];
        memset(junk, 0xa5, sizeof(junk));
        REQUIRE(rs->junk <= sizeof(junk));
        write_file(rp, junk, rs->junk, 0);
        write_file(lp, NULL, 0, 0);
        uint64_t rec_at = rs->junk, log_at = 0;
        for (int i = 0; i < rs->n; ++i) {
            const rec_spec_t *x = &rs->recs[i];
            uint64_t kdata = 0, log_offset = FRESH == x->kind ? sc->base_size : log_at;
            for (uint32_t k = 0; (WRITE == x->kind || PLACE == x->kind) && k < x->nranges; ++k) {
                unsigned char data[512];
                REQUIRE(x->ranges[k].length <= sizeof(data));
                for (uint64_t o = 0; o < x->ranges[k].length; ++o) data[o] = data_byte(x->version, kdata++);
                write_file(lp, data, x->ranges[k].length, log_at);
                log_at += x->ranges[k].length;
            }
            uint64_t rec[(MCA_COMMON_SFIO_RECORD_HEADER + MAX_RANGES * 16) / 8];
            mca_common_sfio_record_kind_t kind = (mca_common_sfio_record_kind_t) (
                x->kind | (x->followed ? MCA_COMMON_SFIO_RECORD_FOLLOWED : 0));
            mca_common_sfio_record_encode(rec, kind, x->version, log_offset, x->ranges, x->nranges);
            if (service && i == rs->whole) {
                /* a service store counts no tail: an uncounted record is one
                 * whose append was cut, and nothing follows it */
                write_file(rp, rec, mca_common_sfio_record_size(x->nranges) / 2 + 4, rec_at);
                break;
            }
            write_file(rp, rec, mca_common_sfio_record_size(x->nranges), rec_at);
            rec_at += mca_common_sfio_record_size(x->nranges);
            if (i + 1 == rs->whole) {
                c->rank[r].rec_tail = rec_at;
            }
        }
        if (0 == rs->whole) {
            c->rank[r].rec_tail = rs->junk;
        }
        if (service) {
            c->rank[r].rec_tail = 0;   /* never written: recovery reads to the end */
        }
        if (rs->torn && !(service && rs->whole < rs->n)) {
            uint64_t rec[(MCA_COMMON_SFIO_RECORD_HEADER + 2 * 16) / 8];
            const mca_common_sfio_range_t two[2] = { { 0, 8 }, { 64, 8 } };
            mca_common_sfio_record_encode(rec, WRITE, 1000 + (uint64_t) r, log_at, two, 2);
            write_file(rp, rec, 30, rec_at);
        }
        c->rank[r].rec_head = rs->junk;
        c->rank[r].log_head = 0;
        free(lp);
        free(rp);
    }
    c->layout = SFIO_COORD_LAYOUT;
    c->nranks = (uint32_t) sc->nranks;
    c->ident = ident;
    c->shared_by = shared_by;
    c->folded = sc->folded;
    c->published = published;   /* a service store does not keep it: stale */
    c->next_version = published + 3;
    c->flat_mtime_ns = sfio_mtime_ns_of_fd(fd);
    c->magic = SFIO_COORD_MAGIC;
    char *cp = sfio_path_join(dir, "coord");
    write_file(cp, c, cbytes, 0);
    free(cp);
    free(c);
    *fd_p = fd;
    return dir;
}

/* ---- running recovery ---- */

typedef struct {
    int notes;
    mca_common_sfio_store_verdict_t verdict;
    uint64_t versions;
} seen_t;

static void note(void *ctx, const mca_common_sfio_store_info_t *info)
{
    seen_t *s = ctx;
    s->notes++;
    s->verdict = info->verdict;
    s->versions = info->versions;
}

static seen_t scan(int fd, mca_common_sfio_store_action_t action, const char *only,
                   mca_common_sfio_store_tally_t *tally_p)
{
    char flat[128];
    snprintf(flat, sizeof(flat), "%s/flat", scratch);
    seen_t s = { 0 };
    mca_common_sfio_store_tally_t tally;
    REQUIRE(0 == mca_common_sfio_vstore_scan(flat, fd, NULL, action, only, note, &s, &tally));
    REQUIRE(1 == s.notes);
    if (tally_p) *tally_p = tally;
    return s;
}

static image_t read_flat(int fd)
{
    image_t im = { .size = 0 };
    struct stat st;
    REQUIRE(0 == fstat(fd, &st) && st.st_size <= FILE_MAX);
    im.size = (size_t) st.st_size;
    REQUIRE((ssize_t) im.size == mca_common_sfio_posix_pread_full(fd, im.bytes, im.size, 0));
    return im;
}

static bool exists(const char *path)
{
    struct stat st;
    return 0 == lstat(path, &st);
}

static void setup(void)
{
    char tmpl[] = "/tmp/check_recover.XXXXXX";
    REQUIRE(mkdtemp(tmpl));
    char *real = realpath(tmpl, NULL);   /* stores are found beside the real path */
    REQUIRE(real && strlen(real) < sizeof(scratch));
    strcpy(scratch, real);
    free(real);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
    (void) system(cmd);
}

/* Builds sc as a store of kind shared_by, recovers it and checks the file
 * against the model for mark want_P (and the versions examine reported). */
static void recover_and_check(const scenario_t *sc, uint32_t shared_by, uint64_t published,
                              uint64_t want_P)
{
    int fd;
    char *dir = build(sc, shared_by, published, &fd);
    seen_t listed = scan(fd, MCA_COMMON_SFIO_STORE_LIST, NULL, NULL);
    REQUIRE(MCA_COMMON_SFIO_STORE_DEAD == listed.verdict);
    REQUIRE(want_P - sc->folded == listed.versions);
    mca_common_sfio_store_tally_t tally;
    seen_t done = scan(fd, MCA_COMMON_SFIO_STORE_RECOVER, NULL, &tally);
    REQUIRE(MCA_COMMON_SFIO_STORE_APPLIED == done.verdict && 1 == tally.applied);
    REQUIRE(!exists(dir));
    uint64_t undone;
    image_t want = model_file(sc, want_P, &undone), got = read_flat(fd);
    REQUIRE(same_image(&want, &got));
    REQUIRE(undone == tally.bytes_undone);
    close(fd);
    free(dir);
}

/* ---- a fixed store ---- */

static void add(rank_spec_t *rs, mca_common_sfio_record_kind_t kind, uint64_t version,
                uint64_t off, uint64_t len, uint64_t off2, uint64_t len2)
{
    REQUIRE(rs->n < MAX_RECS);
    rec_spec_t *x = &rs->recs[rs->n++];
    *x = (rec_spec_t) { .kind = kind, .version = version };
    if (len) x->ranges[x->nranges++] = (mca_common_sfio_range_t) { off, len };
    if (len2) x->ranges[x->nranges++] = (mca_common_sfio_range_t) { off2, len2 };
}

/* Folded 2; whole records of versions 2..6 (6 an ABORT after a fresh
 * note), 8 and 9; version 7's record lies past its rank's rec_tail (in a
 * service store, which has none, its append was cut), so 8
 * and 9 are dropped and their fresh notes undone: P = 6.  The stale
 * published field says 9 (the gap ignored). */
static scenario_t fixed_store(void)
{
    scenario_t sc = { .nranks = 3, .folded = 2, .base_size = 4096 };
    rank_spec_t *r0 = &sc.rank[0], *r1 = &sc.rank[1], *r2 = &sc.rank[2];
    add(r0, WRITE, 2, 3800, 50, 0, 0);          /* folded already: not redone */
    add(r0, WRITE, 3, 0, 200, 1000, 100);
    add(r0, FRESH, 0, 2500, 30, 0, 0);          /* its write took version 6 */
    add(r0, ABORT, 6, 0, 0, 0, 0);
    add(r0, WRITE, 9, 300, 100, 0, 0);          /* past the gap */
    r0->whole = r0->n;
    r1->junk = 48;                              /* compacted records before rec_head */
    add(r1, FRESH, 0, 2000, 100, 0, 0);         /* whole: version 4 follows */
    add(r1, WRITE, 4, 50, 100, 0, 0);
    add(r1, PLACE, 5, 500, 64, 2010, 20);       /* journaled private bytes: redone */
    add(r1, FRESH, 0, 4096, 300, 0, 0);         /* the file's tail: undone, cut off */
    r1->whole = r1->n;
    add(r1, WRITE, 7, 600, 10, 0, 0);           /* appended, never counted */
    r1->torn = true;
    r2->junk = 24;
    add(r2, FRESH, 0, 3000, 50, 0, 0);          /* its version 8 is dropped */
    add(r2, WRITE, 8, 3000, 50, 0, 0);
    add(r2, FRESH, 0, 3500, 20, 0, 0);          /* no version followed */
    r2->whole = r2->n;
    r2->torn = true;
    return sc;
}

START_TEST(service_store)
{
    scenario_t sc = fixed_store();
    REQUIRE(6 == model_published(&sc));
    /* any other mark that a record could give (7 has none) leaves another
     * file, so a wrong one, such as the gap ignored, is caught */
    uint64_t undone;
    image_t right = model_file(&sc, 6, &undone);
    for (uint64_t wrong = sc.folded; wrong <= 9; ++wrong) {
        image_t other = model_file(&sc, wrong, &undone);
        REQUIRE(6 == wrong || 7 == wrong || !same_image(&right, &other));
    }
    recover_and_check(&sc, SFIO_SHARED_BY_SERVICE, 9, 6);
}
END_TEST

/* A service store's record logs are read to their ends, and bytes that
 * are no record end one only when no whole record follows them (a cut
 * append): a damaged record before whole ones fails the recovery, which
 * writes nothing, and the store stays. */
START_TEST(service_damage)
{
    scenario_t sc = fixed_store();
    int fd;
    char *dir = build(&sc, SFIO_SHARED_BY_SERVICE, 9, &fd);
    char *rp = sfio_rank_file(dir, "rec", 0);
    int rfd = open(rp, O_RDWR);
    REQUIRE(rfd >= 0);
    /* a byte of the ranges of rank 0's second record (version 3) */
    off_t at = (off_t) (mca_common_sfio_record_size(1) + MCA_COMMON_SFIO_RECORD_HEADER + 3);
    unsigned char b;
    REQUIRE(1 == pread(rfd, &b, 1, at));
    b ^= 0x10;
    REQUIRE(1 == pwrite(rfd, &b, 1, at));
    close(rfd);
    image_t before = read_flat(fd);
    char flat[128];
    snprintf(flat, sizeof(flat), "%s/flat", scratch);
    seen_t seen = { 0 };
    mca_common_sfio_store_tally_t tally;
    REQUIRE(0 != mca_common_sfio_vstore_scan(flat, fd, NULL, MCA_COMMON_SFIO_STORE_RECOVER, NULL,
                                             note, &seen, &tally));
    REQUIRE(MCA_COMMON_SFIO_STORE_FAILED == seen.verdict);
    image_t after = read_flat(fd);
    REQUIRE(same_image(&before, &after) && exists(dir));
    close(fd);
    free(rp);
    free(dir);
}
END_TEST

/* A version of shared and journaled private bytes appends its WRITE and
 * PLACE records at once.  Reading a service store's log to its end,
 * recovery takes the WRITE only with its PLACE whole: a crash that cut
 * the append after the WRITE left a version that never ended (its shared
 * bytes without its private ones), whose write never returned. */
START_TEST(service_pair_cut)
{
    for (int cut = 0; cut < 2; ++cut) {
        scenario_t sc = { .nranks = 2, .folded = 0, .base_size = 2048 };
        add(&sc.rank[0], WRITE, 1, 100, 50, 0, 0);
        add(&sc.rank[1], WRITE, 2, 120, 60, 0, 0);
        sc.rank[1].recs[0].followed = true;
        add(&sc.rank[1], PLACE, 2, 900, 40, 0, 0);
        sc.rank[0].whole = sc.rank[0].n;
        /* cut: the PLACE record half written, as a crash leaves it */
        sc.rank[1].whole = cut ? 1 : 2;
        recover_and_check(&sc, SFIO_SHARED_BY_SERVICE, 0, cut ? 1 : 2);
        teardown();
        setup();
    }
}
END_TEST

/* A mapped store keeps its published mark: recovery takes it as is. */
START_TEST(mapped_store)
{
    scenario_t sc = fixed_store();
    recover_and_check(&sc, SFIO_SHARED_BY_MAPPED, 5, 5);
}
END_TEST

START_TEST(unknown_shared_by)
{
    scenario_t sc = fixed_store();
    int fd;
    char *dir = build(&sc, 2, 6, &fd);
    image_t before = read_flat(fd);
    REQUIRE(MCA_COMMON_SFIO_STORE_CORRUPT == scan(fd, MCA_COMMON_SFIO_STORE_RECOVER, NULL, NULL).verdict);
    image_t after = read_flat(fd);
    REQUIRE(same_image(&before, &after) && exists(dir));
    REQUIRE(MCA_COMMON_SFIO_STORE_DISCARDED == scan(fd, MCA_COMMON_SFIO_STORE_DISCARD, dir, NULL).verdict);
    REQUIRE(!exists(dir));
    close(fd);
    free(dir);
}
END_TEST

/* ---- random stores ---- */

static void random_ranges(rec_spec_t *x, uint64_t span)
{
    x->nranges = 1 + (uint32_t) rnd_below(MAX_RANGES);
    for (uint32_t k = 0; k < x->nranges; ++k) {
        x->ranges[k] = (mca_common_sfio_range_t) { rnd_below(span), 1 + rnd_below(400) };
    }
}

/* Versions 1..M handed to random ranks in order.  A writer may die: its
 * record lost (never appended, or appended past rec_tail), its rank
 * writing nothing more; others write ABORT records; fresh notes come
 * before records, or last when the writer died after its in-place write. */
static scenario_t random_store(void)
{
    scenario_t sc = { .nranks = 1 + (int) rnd_below(MAX_RANKS), .base_size = 1000 + rnd_below(4000) };
    uint64_t M = rnd_below(13);
    sc.folded = rnd_below(M + 1);
    bool dead[MAX_RANKS] = { false };
    for (int r = 0; r < sc.nranks; ++r) {
        sc.rank[r].junk = 24 * rnd_below(3);
        sc.rank[r].torn = 0 == rnd_below(3);
    }
    for (uint64_t v = 1; v <= M; ++v) {
        int r = (int) rnd_below((uint64_t) sc.nranks);
        if (dead[r]) {
            continue;   /* its version was never handed out: the next one takes it */
        }
        rank_spec_t *rs = &sc.rank[r];
        if (v > sc.folded && 0 == rnd_below(4)) {
            rec_spec_t *f = &rs->recs[rs->n++];
            *f = (rec_spec_t) { .kind = FRESH };
            random_ranges(f, sc.base_size + 1500);
        }
        int fate = v > sc.folded ? (int) rnd_below(10) : 9;
        rec_spec_t *x = &rs->recs[rs->n++];
        *x = (rec_spec_t) { .kind = 0 == fate ? ABORT : 1 == fate ? PLACE : WRITE, .version = v };
        if (ABORT != x->kind || 0 == rnd_below(2)) {
            random_ranges(x, sc.base_size + 1000);
        }
        rs->whole = rs->n;
        if (2 == fate || 3 == fate) {   /* the writer died */
            dead[r] = true;
            rs->whole = rs->n - 1;
            if (2 == fate) {
                rs->n--;                /* before appending its record */
            }
        }
    }
    for (int r = 0; r < sc.nranks; ++r) {
        rank_spec_t *rs = &sc.rank[r];
        if (!dead[r] && 0 == rnd_below(4)) {
            rec_spec_t *f = &rs->recs[rs->n++];
            *f = (rec_spec_t) { .kind = FRESH };
            random_ranges(f, sc.base_size + 1500);
            rs->whole = rs->n;
        }
    }
    return sc;
}

START_TEST(random_service_stores)
{
    for (int run = 0; run < 60; ++run) {
        rng_state = (uint64_t) run;
        scenario_t sc = random_store();
        recover_and_check(&sc, SFIO_SHARED_BY_SERVICE, 0, model_published(&sc));
    }
}
END_TEST

/* A directory of plain files has no store to read entries for: where the
 * file system counts a directory's links (2 plus its subdirectories) the
 * search costs no readdir; a subdirectory other than the caller's own
 * store brings the readdir back. */
/* n empty plain files in the scratch directory */
static void make_plain_files(int n)
{
    char path[192];
    for (int i = 0; i < n; ++i) {
        snprintf(path, sizeof(path), "%s/plain.%d", scratch, i);
        int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        REQUIRE(fd >= 0);
        close(fd);
    }
}

START_TEST(opendir_stores_by_links)
{
    char path[192];
    make_plain_files(64);
    struct stat st;
    REQUIRE(0 == stat(scratch, &st));
    bool counted = 2 == st.st_nlink;   /* btrfs: 1, always read */
    char sub[160], other[160];
    snprintf(sub, sizeof(sub), "%s/sub", scratch);
    snprintf(other, sizeof(other), "%s/other", scratch);

    errno = EBADF;
    DIR *d = sfio_opendir_stores(scratch, NULL);
    REQUIRE(counted ? (NULL == d && 0 == errno) : NULL != d);
    if (d) closedir(d);

    REQUIRE(0 == mkdir(sub, 0700));
    REQUIRE(NULL != (d = sfio_opendir_stores(scratch, NULL)));
    closedir(d);
    errno = EBADF;
    d = sfio_opendir_stores(scratch, sub);   /* only the caller's own */
    REQUIRE(counted ? (NULL == d && 0 == errno) : NULL != d);
    if (d) closedir(d);

    REQUIRE(0 == mkdir(other, 0700));
    REQUIRE(NULL != (d = sfio_opendir_stores(scratch, sub)));
    closedir(d);
    /* "own" that is not there counts for nothing */
    REQUIRE(0 == rmdir(sub));
    REQUIRE(NULL != (d = sfio_opendir_stores(scratch, sub)));
    closedir(d);

    errno = 0;
    snprintf(path, sizeof(path), "%s/none", scratch);
    REQUIRE(NULL == sfio_opendir_stores(path, NULL) && ENOENT == errno);
}
END_TEST

/* A store among many plain files (and so among many entries) is found. */
START_TEST(store_in_crowded_directory)
{
    make_plain_files(500);
    scenario_t sc = fixed_store();
    recover_and_check(&sc, SFIO_SHARED_BY_MAPPED, 5, 5);
}
END_TEST

static Suite *recover_suite(void)
{
    Suite *s = suite_create("recover");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, service_store);
    tcase_add_test(tc, service_damage);
    tcase_add_test(tc, service_pair_cut);
    tcase_add_test(tc, mapped_store);
    tcase_add_test(tc, unknown_shared_by);
    tcase_add_test(tc, random_service_stores);
    tcase_add_test(tc, opendir_stores_by_links);
    tcase_add_test(tc, store_in_crowded_directory);
    suite_add_tcase(s, tc);
    return s;
}

SFIO_CHECK_MAIN(recover_suite)
