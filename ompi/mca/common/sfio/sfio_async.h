/*
 * sfio_async: background execution of fbtl I/O for non-blocking calls.
 *
 * OMPIO frees its I/O array as soon as ipreadv/ipwritev returns, so a job
 * owns a copy of the segments.  One worker thread per process runs jobs in
 * submission order; the caller polls with _test from OMPIO's progress
 * function.  The worker never calls MPI.
 */
#ifndef MCA_COMMON_SFIO_ASYNC_H
#define MCA_COMMON_SFIO_ASYNC_H

#include <stdbool.h>
#include <stdint.h>
#include "sfio_iobatch.h"
#include "sfio_path.h"

typedef struct mca_common_sfio_async_job_t mca_common_sfio_async_job_t;

typedef enum {
    MCA_COMMON_SFIO_ASYNC_READ,
    MCA_COMMON_SFIO_ASYNC_WRITE
} mca_common_sfio_async_kind_t;


/* Copies segs and queues the transfer along path.  Returns 0 and the job
 * in *job_p, or a negative errno (nothing queued). */
int mca_common_sfio_async_submit(mca_common_sfio_async_kind_t kind, int fd,
                                 const mca_common_sfio_path_t *path,
                                 const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                 const mca_common_sfio_sieve_policy_t *policy,
                                 mca_common_sfio_async_job_t **job_p);

/* True once the job finished; then *status_p is 0 or a negative errno and
 * *bytes_p the bytes transferred.  Never blocks. */
bool mca_common_sfio_async_test(mca_common_sfio_async_job_t *job, int *status_p, uint64_t *bytes_p);

/* Waits for the job if still running, then frees it. */
void mca_common_sfio_async_release(mca_common_sfio_async_job_t *job);

/* Stops the worker after it drained its queue (component close). */
void mca_common_sfio_async_shutdown(void);

#endif
