/*
 * sfio_pubq: publication of numbered versions in order.  Pure module: no
 * MPI, no I/O, no threads; unit-tested by test/unit/check_pubq.c.
 *
 * Writers take version numbers from a sequencer (1, 2, 3, ...) and finish
 * their versions in any order; a reader may see version v only when every
 * version up to v is finished, so the published mark is the longest
 * prefix of finished versions.  The queue holds the finished versions
 * above the mark, each with a tag (who waits for it), and releases a tag
 * as soon as the mark reaches its version: the service that hosts it
 * answers the writer then, one message, without the writer polling.
 *
 * Bounded: at most `capacity` finished versions wait above the mark (each
 * writer has one version under way per file, so the number of writers
 * bounds it); past that, done fails with -ENOSPC and changes nothing.
 */
#ifndef MCA_COMMON_SFIO_PUBQ_H
#define MCA_COMMON_SFIO_PUBQ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int64_t version;
    uint64_t tag;
} mca_common_sfio_pubq_entry_t;

typedef struct {
    int64_t published;                       /* every version <= it is finished */
    size_t count, capacity;
    mca_common_sfio_pubq_entry_t *pending;   /* ascending versions > published + 1 */
} mca_common_sfio_pubq_t;

/* A queue whose mark starts at `published`; -ENOMEM, -EINVAL (capacity 0). */
int mca_common_sfio_pubq_init(mca_common_sfio_pubq_t *q, size_t capacity, int64_t published);
void mca_common_sfio_pubq_fini(mca_common_sfio_pubq_t *q);

/*
 * Version `version` is finished; `tag` waits for it to be published.
 * released[] (room for capacity + 1 tags) receives, in version order, the
 * tags whose versions the mark reached by this call (this call's tag among
 * them when its version is now published), *nreleased their number.
 * Returns 0; 1 when the version was already at or below the mark (nothing
 * changes, the caller answers at once); -EEXIST (the version is already
 * finished and waiting), -EINVAL (version < 1), -ENOSPC (full).
 */
int mca_common_sfio_pubq_done(mca_common_sfio_pubq_t *q, int64_t version, uint64_t tag,
                              uint64_t *released, size_t *nreleased);

#ifdef __cplusplus
}
#endif

#endif
