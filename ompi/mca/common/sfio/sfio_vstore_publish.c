/*
 * sfio_vstore_publish: the data path of the store: a write becomes one
 * version (logged, recorded, published in version order), a read overlays
 * the published versions on the flat file.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <time.h>
#include <unistd.h>

#include "sfio_vstore.h"
#include "sfio_foldplan.h"
#include "sfio_vindex.h"
#include "sfio_lockplan.h"
#include "sfio_vstore_int.h"

/* ------------------------------------------------------------------ */
/* publishing                                                         */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* data path                                                          */
/* ------------------------------------------------------------------ */

/* Lays segs out in the log from *tail on: fills logsegs and the record's
 * file ranges (neighbours merged).  Returns the number of ranges. */
uint32_t sfio_vstore_layout(const mca_common_sfio_ioseg_t *segs, size_t n, uint64_t *tail,
                       mca_common_sfio_ioseg_t *logsegs, mca_common_sfio_range_t *ranges)
{
    uint32_t nranges = 0;
    for (size_t i = 0; i < n; ++i) {
        logsegs[i] = (mca_common_sfio_ioseg_t) { *tail, segs[i].length, segs[i].buf };
        if (nranges > 0 &&
            ranges[nranges - 1].offset + ranges[nranges - 1].length == segs[i].offset) {
            ranges[nranges - 1].length += segs[i].length;
        } else {
            ranges[nranges++] = (mca_common_sfio_range_t) { segs[i].offset, segs[i].length };
        }
        *tail += segs[i].length;
    }
    return nranges;
}

/* An atomic write of at most this many bytes may take its version with
 * the gate (see takes_version_early). */
#define TAKE_EARLY_MAX 1024

/* Where versions are taken with the gate, the record log keeps room
 * allocated past its end to end one that fails before it is made (the
 * FRESH note of a small write, then an ABORT record): a full disk then
 * cannot leave it unended.  Allocated ahead in steps. */
#define REC_ROOM_STEP (64u << 10)

static uint64_t rec_room_needed(void)
{
    return mca_common_sfio_record_size(TAKE_EARLY_MAX) + mca_common_sfio_record_size(0);
}

static void keep_rec_room(mca_common_sfio_vstore_t *s)
{
    if (NULL == s->shared->gate_enter_take || s->rec_room_off || s->rec_fd < 0 ||
        s->rec_room_to >= s->rec_tail + rec_room_needed()) {
        return;
    }
    if (0 == fallocate(s->rec_fd, FALLOC_FL_KEEP_SIZE, (off_t) s->rec_tail, REC_ROOM_STEP)) {
        s->rec_room_to = s->rec_tail + REC_ROOM_STEP;
    } else if (EOPNOTSUPP == errno || ENOSYS == errno) {
        s->rec_room_off = true;
    }
}

/* Appends one record to this rank's record log and makes it visible. */
static int append_record(mca_common_sfio_vstore_t *s, size_t rsize)
{
    ssize_t put = mca_common_sfio_posix_pwrite_full(s->rec_fd, s->recbuf, rsize, s->rec_tail);
    if (put != (ssize_t) rsize) {
        return put < 0 ? (int) put : -EIO;
    }
    s->rec_tail += rsize;
    keep_rec_room(s);
    return s->shared->records_end(s);
}

/* Says that version v ended without data (its record could not be
 * written): recovery then goes on past it. */
static int append_abort(mca_common_sfio_vstore_t *s, uint64_t v)
{
    size_t rsize = mca_common_sfio_record_size(0);
    int rc = sfio_vstore_recbuf_reserve(s, rsize);
    if (0 == rc) {
        mca_common_sfio_record_encode(s->recbuf, MCA_COMMON_SFIO_RECORD_ABORT, v, 0, NULL, 0);
        rc = append_record(s, rsize);
    }
    return rc;
}

/* Puts fresh private bytes in place before the version exists, after a
 * FRESH record that lets recovery undo them (they held nothing). */
static int write_fresh(mca_common_sfio_vstore_t *s, const mca_common_sfio_ioseg_t *fresh,
                       size_t nfresh)
{
    mca_common_sfio_range_t *ranges = malloc(nfresh * sizeof(*ranges));
    if (!ranges) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < nfresh; ++i) {
        ranges[i] = (mca_common_sfio_range_t) { fresh[i].offset, fresh[i].length };
    }
    size_t rsize = mca_common_sfio_record_size((uint32_t) nfresh);
    int rc = sfio_vstore_recbuf_reserve(s, rsize);
    if (0 == rc) {
        mca_common_sfio_record_encode(s->recbuf, MCA_COMMON_SFIO_RECORD_FRESH, 0, s->fresh_floor,
                                      ranges, (uint32_t) nfresh);
        rc = append_record(s, rsize);
    }
    free(ranges);
    uint64_t done = 0;
    if (0 == rc) {
        rc = sfio_vstore_flat_write_segs(s, fresh, nfresh, &done);
        s->stats.bytes_in_place += done;
        s->stats.bytes_fresh += done;
    }
    return rc;
}

/* Ends version v with no data (its record could not be written, or its
 * call failed before making it), published all the same so that others
 * never wait for it; recovery must see it ended, not missing. */
static void end_unmade_version(mca_common_sfio_vstore_t *s, uint64_t v)
{
    if (0 != append_abort(s, v) && s->shared->publish_needs_record) {
        /* Recovery would stop at this version and drop later published
         * ones: publish nothing after it rather than report their writes
         * done. */
        return;
    }
    (void) s->shared->publish(s, v);
}

/* Space in the flat file for bytes a fold will write there, taken now
 * so that the write fails rather than the fold (at close nobody would
 * hear of it).  One call reserves everything from what this rank has
 * reserved (at first: the size at the last collective point) to the end
 * of the write, gaps included: they are the file's bytes up to a byte
 * that will be written, so they take blocks at most as large as the
 * file.  The block holding the last byte is then reserved whole, so a
 * run of small writes asks once per block (on network storage each ask
 * is a round trip).  Holes below the size are not reserved.  File
 * systems without fallocate are not asked again. */
static int reserve_flat(mca_common_sfio_vstore_t *s, const mca_common_sfio_range_t *ranges,
                        size_t n)
{
    uint64_t end = 0;
    for (size_t i = 0; i < n; ++i) {
        if (ranges[i].offset + ranges[i].length > end) {
            end = ranges[i].offset + ranges[i].length;
        }
    }
    if (!s->reserve || end <= s->reserved_to) {
        return 0;
    }
    int rc = 0;
    sfio_vstore_flat_begin(s);
    if (0 != fallocate(s->flat_fd, FALLOC_FL_KEEP_SIZE, (off_t) s->reserved_to,
                       (off_t) (end - s->reserved_to))) {
        rc = -errno;
    } else {
        uint64_t unit = s->reserve_unit ? s->reserve_unit : 1;
        s->reserved_to = (end + unit - 1) / unit * unit;
    }
    sfio_vstore_flat_end(s);
    if (-EOPNOTSUPP == rc || -ENOSYS == rc) {
        s->reserve = false;
        rc = 0;
    }
    return rc;
}

/* Bytes a version of shared bytes alone may carry in its record instead
 * of its log, where the policy says so: one request to the storage
 * instead of two (the data, then the record).  Whoever reads the record
 * log reads them too, so only small versions pay off; and the record is
 * written while others wait for its version, so on local storage, where
 * a request is cheap, the two stay apart. */
#define CARRY_MAX 1024

/* Makes one version of an atomic write: shared segs become readable
 * through the index; place segs (Logan and Dickens' private bytes over old data)
 * are journaled and put in place only after the version is published;
 * fresh segs (private bytes over nothing) were put in place before it,
 * after a FRESH undo note.  So a crash leaves either the whole write
 * (recovery redoes the journaled part) or none of it (recovery zeroes
 * the fresh part).  A small version of shared bytes alone goes into its
 * record, not the log.  Returns 0 or a negative errno. */
static int write_version(mca_common_sfio_vstore_t *s, const mca_common_sfio_ioseg_t *shared,
                         size_t nshared, const mca_common_sfio_ioseg_t *place, size_t nplace,
                         const mca_common_sfio_ioseg_t *fresh, size_t nfresh)
{
    size_t n = nshared + nplace;
    uint64_t shared_bytes = mca_common_sfio_ioseg_total(shared, nshared);
    bool carry = s->fold.carry_small && 0 == nplace && 0 == nfresh && shared_bytes > 0 &&
                 shared_bytes <= CARRY_MAX;
    int lrc = sfio_vstore_ensure_logs(s);
    if (0 == lrc && nfresh > 0) {
        lrc = write_fresh(s, fresh, nfresh);
    }
    if (0 != lrc) {
        return lrc;
    }
    mca_common_sfio_ioseg_t *logsegs = malloc((n ? n : 1) * sizeof(*logsegs));
    mca_common_sfio_range_t *ranges = malloc((n ? n : 1) * sizeof(*ranges));
    uint64_t start = s->log_tail, tail = s->log_tail;
    int rc = 0;

    if (!logsegs || !ranges) {
        free(logsegs);
        free(ranges);
        return -ENOMEM;
    }
    /* The log holds the shared bytes, then the private ones, in data order. */
    uint32_t nr_shared = sfio_vstore_layout(shared, nshared, &tail, logsegs, ranges);
    uint64_t place_start = tail;
    uint32_t nr_place = sfio_vstore_layout(place, nplace, &tail, logsegs + nshared, ranges + nr_shared);
    size_t size_shared = !nr_shared ? 0 : carry ? mca_common_sfio_record_carried_size(nr_shared,
                                                                                 shared_bytes)
                                               : mca_common_sfio_record_size(nr_shared);
    /* where its bytes end, in the record log or in the data log */
    if ((carry ? s->rec_tail + size_shared : tail) > MCA_COMMON_SFIO_RECORD_IN_RECLOG) {
        rc = -EFBIG;
    }
    if (0 == rc) {
        rc = reserve_flat(s, ranges, nr_shared + nr_place);
    }
    uint64_t written = 0;
    if (0 == rc && !carry) {
        rc = mca_common_sfio_posix_write_segs(s->log_fd, logsegs, n, &written);
    }
    s->log_tail = start + written;   /* never reuse log bytes, even after a failure */
    if (0 == rc && !carry) {
        sfio_vstore_logcopy_append(s, start, logsegs, n);
    }
    free(logsegs);
    /* A fresh-only write still needs a record of a published version: its
     * completion mark (an empty PLACE record). */
    size_t size_place = (nr_place || !nr_shared) ? mca_common_sfio_record_size(nr_place) : 0;
    if (0 == rc) {
        rc = sfio_vstore_recbuf_reserve(s, size_shared + size_place);
    }
    if (0 != rc) {
        free(ranges);
        return rc;
    }
    uint64_t prepared = 0;
    if (carry) {
        /* everything but the version, before it is taken */
        char *data = (char *) s->recbuf + mca_common_sfio_record_size(nr_shared);
        for (size_t i = 0; i < nshared; ++i) {
            memcpy(data, shared[i].buf, (size_t) shared[i].length);
            data += shared[i].length;
        }
        prepared = mca_common_sfio_record_carried_prepare(s->recbuf, nr_shared, shared_bytes);
    }

    uint64_t v = s->taken_early;
    s->taken_early = 0;
    if (0 == v) {
        rc = s->shared->take_version(s, &v);
        if (0 != rc) {
            free(ranges);
            return rc;   /* no version: nobody waits for one */
        }
        if (v > s->taken_last) {
            s->taken_last = v;
        }
    }
    if (carry) {
        mca_common_sfio_record_encode_carried(s->recbuf, v,
                                              s->rec_tail + mca_common_sfio_record_size(nr_shared),
                                              ranges, nr_shared, prepared);
    } else if (nr_shared) {
        /* with its PLACE record: recovery takes both or neither */
        mca_common_sfio_record_kind_t kind = (mca_common_sfio_record_kind_t) (
            MCA_COMMON_SFIO_RECORD_WRITE | (size_place ? MCA_COMMON_SFIO_RECORD_FOLLOWED : 0));
        mca_common_sfio_record_encode(s->recbuf, kind, v, start, ranges, nr_shared);
    }
    if (size_place) {
        mca_common_sfio_record_encode(s->recbuf + size_shared, MCA_COMMON_SFIO_RECORD_PLACE, v,
                                      place_start, ranges + nr_shared, nr_place);
    }
    free(ranges);
    rc = append_record(s, size_shared + size_place);
    if (0 == rc && s->caching_clients &&
        ((!carry && 0 != fdatasync(s->log_fd)) || 0 != fdatasync(s->rec_fd))) {
        rc = -errno;   /* another node might not see it: the write failed */
    }
    if (0 != rc) {
        end_unmade_version(s, v);
        return rc;
    }
    rc = s->shared->publish(s, v);
    if (0 == rc) {
        s->stats.versions++;
        s->stats.versions_carried += carry;
        s->stats.bytes_versioned += shared_bytes;
    }
    /* Published: now the private bytes may reach the flat file. */
    if (0 == rc && nplace > 0) {
        uint64_t done = 0;
        rc = sfio_vstore_flat_write_segs(s, place, nplace, &done);
        s->stats.bytes_in_place += done;
    }
    return rc;
}

/* Whether a write takes its version with the gate (one request where the
 * shared state offers it): an atomic write with journaled private bytes
 * (it makes one version), small (from the gate on, others' publishes
 * wait for it), whose record log has the room to end the version should
 * the write fail before making it (keep_rec_room). */
static bool takes_version_early(const mca_common_sfio_vstore_t *s,
                                const mca_common_sfio_ioseg_t *segs, size_t nsegs, bool atomic)
{
    if (!atomic || !s->journal_private || s->log_fd < 0 ||
        s->rec_room_to < s->rec_tail + rec_room_needed()) {
        return false;
    }
    uint64_t total = mca_common_sfio_ioseg_total(segs, nsegs);
    return total > 0 && total <= TAKE_EARLY_MAX;
}

/* Growable segment array. */
typedef struct {
    mca_common_sfio_ioseg_t *v;
    size_t n, cap;
    uint64_t bytes;
} segvec_t;

static int segvec_push(segvec_t *sv, uint64_t offset, uint64_t length, void *buf)
{
    if (0 == length) {
        return 0;
    }
    if (sv->n == sv->cap) {
        size_t cap = sv->cap ? 2 * sv->cap : 16;
        void *nv = realloc(sv->v, cap * sizeof(*sv->v));
        if (!nv) {
            return -ENOMEM;
        }
        sv->v = nv;
        sv->cap = cap;
    }
    sv->v[sv->n++] = (mca_common_sfio_ioseg_t) { offset, length, buf };
    sv->bytes += length;
    return 0;
}

/* Moves s->written_end past every segment of a write (before it is
 * made: a failed write may have put some of its bytes in place). */
static void note_written(mca_common_sfio_vstore_t *s, const mca_common_sfio_ioseg_t *segs,
                         size_t nsegs)
{
    for (size_t i = 0; i < nsegs; ++i) {
        uint64_t end = segs[i].offset + segs[i].length;
        if (segs[i].length > 0 && end > s->written_end) {
            s->written_end = end;
        }
    }
}

int mca_common_sfio_vstore_write(mca_common_sfio_vstore_t *s, const mca_common_sfio_ioseg_t *segs,
                                 size_t nsegs, bool atomic, const mca_common_sfio_objects_t *objects,
                                 uint64_t *written_p)
{
    segvec_t direct = { 0 }, versioned = { 0 }, uncovered = { 0 };
    mca_common_sfio_ioseg_t *priv = NULL, *shared = NULL;
    size_t npriv = 0, nshared = 0;
    uint64_t done = 0;
    int rc;

    pthread_mutex_lock(&s->lock);
    /* What this rank wrote before, by any route, is no longer fresh (bytes
     * that went into a version reach the file only at a fold, and a later
     * write of them may find no version left to overlap). */
    if (s->written_end > s->fresh_floor) {
        s->fresh_floor = s->written_end;
    }
    note_written(s, segs, nsegs);
    if (!s->coord) {
        if (!atomic) {
            /* No version exists for this rank to order after (a rank maps
             * the store at its first atomic access). */
            pthread_mutex_unlock(&s->lock);
            return mca_common_sfio_posix_write_segs(s->flat_fd, segs, nsegs, written_p);
        }
        rc = sfio_vstore_attach(s, true);
        if (0 != rc) {
            pthread_mutex_unlock(&s->lock);
            *written_p = 0;
            return rc;
        }
    }
    rc = takes_version_early(s, segs, nsegs, atomic) ? sfio_vstore_gate_enter_take(s)
                                                     : sfio_vstore_gate_enter(s);
    if (0 != rc) {
        pthread_mutex_unlock(&s->lock);
        *written_p = 0;
        return rc;
    }
    /* Bytes a published version covers must become a version themselves
     * (a later read would overlay them); the rest may go in place when
     * not atomic, or, in atomic mode, when the view intersection (Logan and Dickens) says
     * no other rank can access them.  So an atomic write none of whose
     * bytes is private becomes a version whatever the index holds: it
     * skips the catch-up, which reads every other writer's new records
     * (round trips on network storage) and is left to the next read or
     * fold. */
    if (!atomic || !mca_common_sfio_objects_none_private(objects)) {
        rc = sfio_vstore_catch_up(s);
    }
    for (size_t i = 0; i < nsegs && 0 == rc; ++i) {
        const mca_common_sfio_ioseg_t *g = &segs[i];
        if (0 == g->length) {
            continue;
        }
        segvec_t *to = mca_common_sfio_vindex_overlaps(&s->index, g->offset, g->length)
                           ? &versioned : (atomic ? &uncovered : &direct);
        rc = segvec_push(to, g->offset, g->length, g->buf);
    }
    if (0 == rc && uncovered.n > 0) {
        rc = mca_common_sfio_segs_split_private(uncovered.v, uncovered.n, objects, &priv, &npriv,
                                                &shared, &nshared);
    }
    for (size_t i = 0; 0 == rc && i < npriv; ++i) {
        rc = segvec_push(&direct, priv[i].offset, priv[i].length, priv[i].buf);
    }
    for (size_t i = 0; 0 == rc && i < nshared; ++i) {
        rc = segvec_push(&versioned, shared[i].offset, shared[i].length, shared[i].buf);
    }
    free(priv);
    free(shared);
    free(uncovered.v);
    if (0 == rc && atomic && direct.n > 0 && direct.bytes <= s->fold.defer_piece_max * direct.n &&
        s->log_tail + direct.bytes <= (uint64_t) s->fold.defer_max) {
        /* Deferred: the log takes the private bytes too (one append), the
         * fold writes them in large windows with their neighbours'. */
        for (size_t i = 0; i < direct.n && 0 == rc; ++i) {
            rc = segvec_push(&versioned, direct.v[i].offset, direct.v[i].length, direct.v[i].buf);
        }
        s->stats.bytes_deferred += direct.bytes;
        direct.n = 0;
        direct.bytes = 0;
    }
    if (atomic && s->journal_private) {
        /* One call is one serial unit, in memory and after a crash.
         * Private bytes past the fresh floor overwrite nothing: they go in
         * place at once, with an undo note; the others are journaled. */
        segvec_t fresh = { 0 }, place = { 0 };
        uint64_t floor = s->fresh_floor;
        for (size_t i = 0; i < direct.n && 0 == rc; ++i) {
            const mca_common_sfio_ioseg_t *g = &direct.v[i];
            uint64_t end = g->offset + g->length;
            uint64_t cut = g->offset >= floor ? g->offset : (end <= floor ? end : floor);
            rc = segvec_push(&place, g->offset, cut - g->offset, g->buf);
            if (0 == rc) {
                rc = segvec_push(&fresh, cut, end - cut, (char *) g->buf + (cut - g->offset));
            }
        }
        if (0 == rc && versioned.n + direct.n > 0) {
            rc = write_version(s, versioned.v, versioned.n, place.v, place.n, fresh.v, fresh.n);
            if (0 == rc) {
                done = versioned.bytes + direct.bytes;
            }
        }
        free(fresh.v);
        free(place.v);
    } else {
        if (0 == rc && direct.n > 0) {
            rc = sfio_vstore_flat_write_segs(s, direct.v, direct.n, &done);
            s->stats.bytes_in_place += done;
        }
        if (0 == rc && versioned.n > 0) {
            rc = write_version(s, versioned.v, versioned.n, NULL, 0, NULL, 0);
            if (0 == rc) {
                done += versioned.bytes;
            }
        }
    }
    if (0 != s->taken_early) {
        end_unmade_version(s, s->taken_early);
        s->taken_early = 0;
    }
    sfio_vstore_gate_leave(s);
    if (0 == rc && sfio_vstore_over_bounds(s)) {
        int crc = sfio_vstore_compact(s);
        if (0 != crc) {
            rc = crc;   /* the write is whole; the store could not be bounded */
        }
    }
    pthread_mutex_unlock(&s->lock);
    free(direct.v);
    free(versioned.v);
    *written_p = done;
    return rc;
}

typedef struct {
    mca_common_sfio_vstore_t *s;
    const mca_common_sfio_ioseg_t *seg;
    int rc;
} overlay_ctx_t;

static int overlay_piece(const mca_common_sfio_vpiece_t *p, void *ctx)
{
    overlay_ctx_t *o = ctx;
    if (p->rank < 0) {
        return 0;
    }
    uint64_t at = p->log_offset;
    int fd = sfio_vstore_source_fd(o->s, p->rank, &at);
    if (fd < 0) {
        return o->rc = fd;
    }
    char *dst = (char *) o->seg->buf + (p->offset - o->seg->offset);
    ssize_t got = mca_common_sfio_posix_pread_full(fd, dst, (size_t) p->length, at);
    if (got != (ssize_t) p->length) {
        return o->rc = got < 0 ? (int) got : -EIO;
    }
    o->s->stats.bytes_overlaid += p->length;
    return 0;
}

int mca_common_sfio_vstore_read(mca_common_sfio_vstore_t *s, const mca_common_sfio_ioseg_t *segs,
                                size_t nsegs, const mca_common_sfio_sieve_policy_t *policy,
                                mca_common_sfio_scratch_t *scratch, uint64_t *read_p)
{
    uint64_t flat_bytes = 0;
    int rc;

    pthread_mutex_lock(&s->lock);
    rc = s->coord ? 0 : sfio_vstore_attach(s, false);
    bool gated = false;
    if (0 == rc) {
        rc = sfio_vstore_gate_enter(s);
        gated = 0 == rc;
    } else if (-ENOENT == rc) {
        rc = 0;   /* no store yet: no version exists */
    }
    if (0 == rc) {
        rc = sfio_vstore_catch_up(s);
    }
    if (0 == rc) {
        rc = mca_common_sfio_posix_read_segs(s->flat_fd, segs, nsegs, policy, scratch, &flat_bytes);
    }
    if (0 != rc || mca_common_sfio_vindex_empty(&s->index)) {
        if (gated) sfio_vstore_gate_leave(s);
        pthread_mutex_unlock(&s->lock);
        *read_p = flat_bytes;
        return rc;
    }
    /* The snapshot ends at the flat end or at the furthest version's end;
     * bytes between are a hole of zeros, as after a serial write. */
    struct stat st;
    uint64_t flat_size = 0 == fstat(s->flat_fd, &st) ? (uint64_t) st.st_size : 0;
    uint64_t end = flat_size > s->max_end ? flat_size : s->max_end;
    uint64_t total = 0;
    for (size_t i = 0; i < nsegs && 0 == rc; ++i) {
        const mca_common_sfio_ioseg_t *g = &segs[i];
        if (0 == g->length || g->offset >= end) {
            continue;
        }
        uint64_t len = g->offset + g->length <= end ? g->length : end - g->offset;
        if (g->offset + len > flat_size) {
            uint64_t z = g->offset > flat_size ? g->offset : flat_size;
            memset((char *) g->buf + (z - g->offset), 0, (size_t) (g->offset + len - z));
        }
        overlay_ctx_t o = { .s = s, .seg = g, .rc = 0 };
        rc = mca_common_sfio_vindex_pieces(&s->index, g->offset, len, overlay_piece, &o);
        if (0 == rc) rc = o.rc;
        total += len;
    }
    sfio_vstore_gate_leave(s);
    pthread_mutex_unlock(&s->lock);
    *read_p = total;
    return rc;
}
