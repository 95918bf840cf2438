/*
 * sfio_record: the on-disk record that publishes one version.
 *
 * A writer appends its shadow bytes to its data log, takes a version
 * number, then appends one record to its record log: the version, where
 * its bytes start in the data log, and the file ranges they cover, in
 * data order.  Readers and crash recovery decode records; a record that is
 * torn or corrupt fails its checksum and is treated as absent.  Pure
 * logic: encoding and decoding of byte buffers only.
 *
 * Layout (little-endian host order; the store is node-local):
 *   u64 magic | u32 kind | u32 nranges | u64 version | u64 log_offset |
 *   u64 checksum | nranges x (u64 file_offset, u64 length)
 *   [ | data, zero-padded to 8 bytes: CARRIED records only ]
 *
 * A version of shared and journaled private bytes appends a WRITE and a
 * PLACE record at once; the WRITE's kind then carries
 * MCA_COMMON_SFIO_RECORD_FOLLOWED, so that whoever reads to the end of a
 * record log (crash recovery of a store across nodes, which keeps no
 * tail) takes the WRITE only with its PLACE whole after it.
 *
 * A small version carries its bytes in its record, so that it costs one
 * request to the storage, not two.  Its log_offset then says where they
 * start in the record log, marked MCA_COMMON_SFIO_RECORD_IN_RECLOG; the
 * index keeps the mark, and whoever reads a piece reads it from the
 * record log.  Its checksum covers the bytes too (hashed before the
 * header), and its padding must be zeros.
 */
#ifndef MCA_COMMON_SFIO_RECORD_H
#define MCA_COMMON_SFIO_RECORD_H

#include <stddef.h>
#include <stdint.h>

#define MCA_COMMON_SFIO_RECORD_MAGIC 0x3143455253464953ull /* "SIFSREC1" */
#define MCA_COMMON_SFIO_RECORD_HEADER 40u
/* Marks a log offset that lies in the writer's record log; data logs
 * stay below it. */
#define MCA_COMMON_SFIO_RECORD_IN_RECLOG (1ull << 47)
/* Most bytes a record may carry (writers carry far fewer). */
#define MCA_COMMON_SFIO_RECORD_MAX_CARRIED (1ull << 20)

typedef enum {
    MCA_COMMON_SFIO_RECORD_WRITE = 1,   /* bytes of a version, read through the index */
    MCA_COMMON_SFIO_RECORD_ABORT = 2,   /* a version whose writer died: void */
    MCA_COMMON_SFIO_RECORD_PLACE = 3,   /* bytes of a version that its writer puts in
                                           place after publishing (Logan and Dickens' private
                                           bytes): a redo journal, applied only by
                                           crash recovery */
    MCA_COMMON_SFIO_RECORD_FRESH = 4,   /* private bytes that held nothing yet (at or
                                           past log_offset = the writer's fresh floor),
                                           written in place *before* the version is
                                           taken: an undo note without data.  Version
                                           0; the write is complete iff the writer's
                                           next record carries a published version,
                                           else recovery zeroes the ranges */
    MCA_COMMON_SFIO_RECORD_CARRIED = 5  /* a WRITE record followed by its bytes; decoded
                                           as WRITE with data set */
} mca_common_sfio_record_kind_t;

/* Or'ed into a WRITE record's kind: the record after it in the log, of
 * the same version, was appended with it (its PLACE record). */
#define MCA_COMMON_SFIO_RECORD_FOLLOWED 0x10000u

#include "sfio_rangelist.h"   /* mca_common_sfio_range_t */

/* A decoded record; ranges points into the decoded buffer. */
typedef struct mca_common_sfio_record_t {
    mca_common_sfio_record_kind_t kind;
    uint64_t version;
    uint64_t log_offset;
    uint32_t nranges;
    const mca_common_sfio_range_t *ranges;
    uint64_t data_bytes;   /* sum of range lengths */
    const void *data;      /* a carried version's bytes, in the decoded buffer; else NULL */
    size_t size;           /* encoded size in bytes, carried bytes included */
    int followed;          /* MCA_COMMON_SFIO_RECORD_FOLLOWED was set (kind is WRITE) */
} mca_common_sfio_record_t;

/* Encoded size of a record with n ranges. */
size_t mca_common_sfio_record_size(uint32_t nranges);

/* Encodes into buf (at least record_size(nranges) bytes); kind may carry
 * MCA_COMMON_SFIO_RECORD_FOLLOWED (WRITE only). */
void mca_common_sfio_record_encode(void *buf, mca_common_sfio_record_kind_t kind, uint64_t version,
                                   uint64_t log_offset, const mca_common_sfio_range_t *ranges,
                                   uint32_t nranges);

/* Encoded size of a CARRIED record with n ranges and bytes of data. */
size_t mca_common_sfio_record_carried_size(uint32_t nranges, uint64_t bytes);

/* A CARRIED record in two steps.  The caller puts the bytes (bytes of
 * them, the sum of the ranges' lengths) at buf + record_size(nranges);
 * prepare zeroes the padding and returns the bytes' hash, which needs no
 * version, so a writer calls it before it takes one.  encode_carried
 * then writes the header and ranges of version; data_at: where the bytes
 * lie in the record log (the record's own position + record_size).  buf
 * holds at least record_carried_size bytes. */
uint64_t mca_common_sfio_record_carried_prepare(void *buf, uint32_t nranges, uint64_t bytes);
void mca_common_sfio_record_encode_carried(void *buf, uint64_t version, uint64_t data_at,
                                           const mca_common_sfio_range_t *ranges,
                                           uint32_t nranges, uint64_t prepared);

/* Decodes the record at the start of buf (avail bytes).  Returns 0 and
 * *rec_p, -EAGAIN when avail is too short to hold the whole record (read
 * more), or -EBADMSG when the bytes are not a valid record.  buf must be
 * 8-byte aligned. */
int mca_common_sfio_record_decode(const void *buf, size_t avail, mca_common_sfio_record_t *rec_p);

#endif
