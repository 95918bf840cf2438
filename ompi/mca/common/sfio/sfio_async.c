/*
 * sfio_async: one worker thread executing queued fbtl jobs (see header).
 */
#define _GNU_SOURCE   /* pthread_setname_np */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sfio_async.h"
#include "sfio_locks.h"
#include "sfio_posixio.h"

struct mca_common_sfio_async_job_t {
    mca_common_sfio_async_kind_t kind;
    int fd;
    mca_common_sfio_path_t path;
    size_t nsegs;
    mca_common_sfio_ioseg_t *segs;
    mca_common_sfio_sieve_policy_t policy;
    int status;
    uint64_t bytes;
    atomic_bool done;          /* release-store by the worker, after status/bytes */
    mca_common_sfio_async_job_t *next;
};

/* Queue and worker state; all fields under lock except the jobs' done flag. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;        /* worker waits here for jobs */
    pthread_cond_t finished;    /* release() waits here for a job */
    mca_common_sfio_async_job_t *head, *tail;
    pthread_t thread;
    bool running;
    bool stopping;
} worker = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .finished = PTHREAD_COND_INITIALIZER,
};

static void *worker_main(void *arg)
{
    mca_common_sfio_scratch_t scratch = { 0 };
    (void) arg;
    /* named so tools and tests can tell the engine's threads apart */
    (void) pthread_setname_np(pthread_self(), "sfio-async");

    pthread_mutex_lock(&worker.lock);
    for (;;) {
        while (NULL == worker.head && !worker.stopping) {
            pthread_cond_wait(&worker.wake, &worker.lock);
        }
        mca_common_sfio_async_job_t *job = worker.head;
        if (NULL == job) {
            break;   /* stopping and drained */
        }
        worker.head = job->next;
        if (NULL == worker.head) {
            worker.tail = NULL;
        }
        pthread_mutex_unlock(&worker.lock);

        uint64_t bytes = 0;
        const mca_common_sfio_path_t *p = &job->path;
        int rc = MCA_COMMON_SFIO_ASYNC_WRITE == job->kind
            ? p->ops->write(job->fd, p, job->segs, job->nsegs, &bytes)
            : p->ops->read(job->fd, p, job->segs, job->nsegs, &job->policy, &scratch, &bytes);
        job->status = rc;
        job->bytes = bytes;

        pthread_mutex_lock(&worker.lock);
        atomic_store_explicit(&job->done, true, memory_order_release);
        pthread_cond_broadcast(&worker.finished);
    }
    pthread_mutex_unlock(&worker.lock);
    mca_common_sfio_scratch_fini(&scratch);
    return NULL;
}

int mca_common_sfio_async_submit(mca_common_sfio_async_kind_t kind, int fd,
                                 const mca_common_sfio_path_t *path,
                                 const mca_common_sfio_ioseg_t *segs, size_t nsegs,
                                 const mca_common_sfio_sieve_policy_t *policy,
                                 mca_common_sfio_async_job_t **job_p)
{
    mca_common_sfio_async_job_t *job = calloc(1, sizeof(*job));
    if (NULL == job) {
        return -ENOMEM;
    }
    job->segs = malloc((nsegs ? nsegs : 1) * sizeof(*segs));
    if (NULL == job->segs) {
        free(job);
        return -ENOMEM;
    }
    memcpy(job->segs, segs, nsegs * sizeof(*segs));
    job->nsegs = nsegs;
    job->kind = kind;
    job->fd = fd;
    job->path = *path;
    job->policy = *policy;
    atomic_init(&job->done, false);

    pthread_mutex_lock(&worker.lock);
    if (!worker.running) {
        worker.stopping = false;
        if (0 != pthread_create(&worker.thread, NULL, worker_main, NULL)) {
            pthread_mutex_unlock(&worker.lock);
            free(job->segs);
            free(job);
            return -EAGAIN;
        }
        worker.running = true;
    }
    if (worker.tail) {
        worker.tail->next = job;
    } else {
        worker.head = job;
    }
    worker.tail = job;
    pthread_cond_signal(&worker.wake);
    pthread_mutex_unlock(&worker.lock);

    *job_p = job;
    return 0;
}

bool mca_common_sfio_async_test(mca_common_sfio_async_job_t *job, int *status_p, uint64_t *bytes_p)
{
    if (!atomic_load_explicit(&job->done, memory_order_acquire)) {
        return false;
    }
    *status_p = job->status;
    *bytes_p = job->bytes;
    return true;
}

void mca_common_sfio_async_release(mca_common_sfio_async_job_t *job)
{
    if (NULL == job) {
        return;
    }
    if (!atomic_load_explicit(&job->done, memory_order_acquire)) {
        pthread_mutex_lock(&worker.lock);
        while (!atomic_load_explicit(&job->done, memory_order_acquire)) {
            pthread_cond_wait(&worker.finished, &worker.lock);
        }
        pthread_mutex_unlock(&worker.lock);
    }
    free(job->segs);
    free(job);
}

void mca_common_sfio_async_shutdown(void)
{
    pthread_mutex_lock(&worker.lock);
    if (!worker.running) {
        pthread_mutex_unlock(&worker.lock);
        return;
    }
    worker.stopping = true;
    pthread_cond_signal(&worker.wake);
    pthread_mutex_unlock(&worker.lock);
    pthread_join(worker.thread, NULL);
    pthread_mutex_lock(&worker.lock);
    worker.running = false;
    pthread_mutex_unlock(&worker.lock);
}
