/*
 * sfio_ompio_pcache: the collective flush of the private-object cache
 * (see sfio_ompio.h): cached private bytes go to the file in one
 * two-phase exchange.
 */
#include "sfio_ompio_int.h"

/* ------------------------------------------------------------------ */
/* The private-object cache's collective flush (see sfio_ompio.h)      */
/* ------------------------------------------------------------------ */

/* Domains start on this alignment (file system blocks stay whole). */
#define PCACHE_DOMAIN_ALIGN 4096

static int by_offset(const void *a, const void *b)
{
    const mca_common_sfio_ioseg_t *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Packs this rank's pieces per domain as [(offset, length) pairs][bytes]
 * into sbuf; scount/sdispl per rank in bytes. */
static void pcache_pack(const mca_common_sfio_ioseg_t *pieces, size_t npieces, uint64_t lo,
                        uint64_t dsize, int n, const uint64_t *per, char *sbuf,
                        const int *sdispl)
{
    size_t *hdr_at = calloc((size_t) n, sizeof(size_t)), *data_at = calloc((size_t) n, sizeof(size_t));
    for (int d = 0; d < n; ++d) {
        hdr_at[d] = (size_t) sdispl[d];
        data_at[d] = (size_t) sdispl[d] + 16 * (size_t) per[2 * d];
    }
    for (size_t i = 0; i < npieces; ++i) {
        uint64_t q = (pieces[i].offset - lo) / dsize;
        int d = q >= (uint64_t) n ? n - 1 : (int) q;
        uint64_t pair[2] = { pieces[i].offset, pieces[i].length };
        memcpy(sbuf + hdr_at[d], pair, sizeof(pair));
        hdr_at[d] += sizeof(pair);
        memcpy(sbuf + data_at[d], pieces[i].buf, pieces[i].length);
        data_at[d] += pieces[i].length;
    }
    free(hdr_at);
    free(data_at);
}

static int pcache_send_and_write(ompio_file_t *fh, uint64_t lo, uint64_t dsize,
                                 const mca_common_sfio_ioseg_t *pieces, size_t npieces,
                                 const uint64_t *per, const uint64_t *rper, int *cnt, char *sbuf,
                                 char *rbuf, mca_common_sfio_ioseg_t *mine);

/* The exchange and this rank's domain write.  Returns 0 or a negative
 * errno of this rank (the caller agrees on one). */
static int pcache_exchange(ompio_file_t *fh, mca_common_sfio_pcache_t *pc, uint64_t lo,
                           uint64_t hi)
{
    ompi_communicator_t *comm = fh->f_comm;
    int n = fh->f_size, rc = 0;
    uint64_t dsize = mca_common_sfio_pcache_domain_size(lo, hi, n, PCACHE_DOMAIN_ALIGN);
    size_t npieces = mca_common_sfio_pcache_route_count(pc, lo, dsize, n);
    mca_common_sfio_ioseg_t *pieces = malloc((npieces ? npieces : 1) * sizeof(*pieces));
    mca_common_sfio_ioseg_t *mine = NULL;
    uint64_t *per = malloc(2 * (size_t) n * sizeof(uint64_t));
    uint64_t *rper = malloc(2 * (size_t) n * sizeof(uint64_t));
    int *cnt = malloc(4 * (size_t) n * sizeof(int));
    char *sbuf = NULL, *rbuf = NULL;
    int ok = NULL != pieces && NULL != per && NULL != rper && NULL != cnt;

    if (ok) {
        mca_common_sfio_pcache_route(pc, lo, dsize, n, per, pieces);
    } else if (NULL != per) {
        memset(per, 0, 2 * (size_t) n * sizeof(uint64_t));
    }
    /* everyone enters the alltoall, even a rank short of memory */
    int mrc = comm->c_coll->coll_alltoall(per ? per : rper, 2, MPI_UINT64_T, rper, 2,
                                          MPI_UINT64_T, comm,
                                          comm->c_coll->coll_alltoall_module);
    uint64_t stot = 0, rtot = 0, rpieces = 0;
    for (int r = 0; ok && r < n; ++r) {
        stot += 16 * per[2 * r] + per[2 * r + 1];
        rtot += 16 * rper[2 * r] + rper[2 * r + 1];
        rpieces += rper[2 * r];
    }
    /* alltoallv counts are ints */
    ok = ok && OMPI_SUCCESS == mrc && stot <= INT32_MAX && rtot <= INT32_MAX;
    if (ok) {
        sbuf = malloc(stot ? stot : 1);
        rbuf = malloc(rtot ? rtot : 1);
        mine = malloc((rpieces ? rpieces : 1) * sizeof(*mine));
        ok = NULL != sbuf && NULL != rbuf && NULL != mine;
    }
    int agreed = ok;
    mrc = comm->c_coll->coll_allreduce(MPI_IN_PLACE, &agreed, 1, MPI_INT, MPI_MIN, comm,
                                       comm->c_coll->coll_allreduce_module);
    /* somebody cannot take part: each writes its own bytes */
    bool alone = OMPI_SUCCESS != mrc || !agreed;
    if (!alone) {
        rc = pcache_send_and_write(fh, lo, dsize, pieces, npieces, per, rper, cnt, sbuf,
                                   rbuf, mine);
    }
    free(pieces);
    free(per);
    free(rper);
    free(cnt);
    free(sbuf);
    free(rbuf);
    free(mine);
    if (alone) {
        return mca_common_sfio_pcache_write_back_held(fh->fd, pc);
    }
    pc->flushes++;
    pc->bytes_flushed += pc->cached_bytes;
    return rc;
}

/* The alltoallv of the packed pieces and the write of this rank's domain
 * (buffers sized by the caller from the per-domain counts). */
static int pcache_send_and_write(ompio_file_t *fh, uint64_t lo, uint64_t dsize,
                                 const mca_common_sfio_ioseg_t *pieces, size_t npieces,
                                 const uint64_t *per, const uint64_t *rper, int *cnt, char *sbuf,
                                 char *rbuf, mca_common_sfio_ioseg_t *mine)
{
    ompi_communicator_t *comm = fh->f_comm;
    int n = fh->f_size, rc = 0, mrc;
    int *scount = cnt, *sdispl = cnt + n, *rcount = cnt + 2 * n, *rdispl = cnt + 3 * n;
    int so = 0, ro = 0;
    for (int r = 0; r < n; ++r) {
        scount[r] = (int) (16 * per[2 * r] + per[2 * r + 1]);
        sdispl[r] = so;
        so += scount[r];
        rcount[r] = (int) (16 * rper[2 * r] + rper[2 * r + 1]);
        rdispl[r] = ro;
        ro += rcount[r];
    }
    pcache_pack(pieces, npieces, lo, dsize, n, per, sbuf, sdispl);
    mrc = comm->c_coll->coll_alltoallv(sbuf, scount, sdispl, MPI_BYTE, rbuf, rcount, rdispl,
                                       MPI_BYTE, comm, comm->c_coll->coll_alltoallv_module);
    if (OMPI_SUCCESS != mrc) {
        rc = -EIO;
    } else {
        size_t m = 0;
        for (int r = 0; r < n; ++r) {
            const char *hdr = rbuf + rdispl[r];
            char *data = rbuf + rdispl[r] + 16 * rper[2 * r];
            for (uint64_t k = 0; k < rper[2 * r]; ++k) {
                uint64_t pair[2];
                memcpy(pair, hdr + 16 * k, sizeof(pair));
                mine[m++] = (mca_common_sfio_ioseg_t) {
                    .offset = pair[0], .length = pair[1], .buf = data,
                };
                data += pair[1];
            }
        }
        /* private bytes: no two ranks cached the same byte */
        qsort(mine, m, sizeof(*mine), by_offset);
        uint64_t written = 0;
        rc = mca_common_sfio_posix_write_segs(fh->fd, mine, m, &written);
    }
    return rc;
}

int mca_common_sfio_pcache_flush(ompio_file_t *fh, mca_common_sfio_pcache_t *pc)
{
    if (NULL == pc) {
        return MPI_SUCCESS;
    }
    if (!sfio_ompio_group_atomic(fh, mca_common_sfio_file_of(fh))) {
        int rc = mca_common_sfio_pcache_write_back(fh->fd, pc);
        return 0 == rc ? MPI_SUCCESS : mca_common_sfio_errno_to_mpi(-rc);
    }
    ompi_communicator_t *comm = fh->f_comm;
    pthread_mutex_lock(&pc->lock);
    /* one allreduce (max) finds the group's span: the lowest start as the
     * largest complement */
    uint64_t lo, hi, span[2];
    mca_common_sfio_pcache_span(pc, &lo, &hi);
    span[0] = pc->count ? ~lo : 0;
    span[1] = pc->count ? hi : 0;
    int rc = 0;
    int mrc = comm->c_coll->coll_allreduce(MPI_IN_PLACE, span, 2, MPI_UINT64_T, MPI_MAX, comm,
                                           comm->c_coll->coll_allreduce_module);
    if (OMPI_SUCCESS != mrc) {
        pthread_mutex_unlock(&pc->lock);
        return mrc;
    }
    if (0 != span[1]) {
        uint64_t bytes = pc->cached_bytes;
        rc = pcache_exchange(fh, pc, ~span[0], span[1]);
        mca_common_sfio_pcache_clear(pc);
        /* one verdict: the lowest (most negative) errno */
        mrc = comm->c_coll->coll_allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, comm,
                                           comm->c_coll->coll_allreduce_module);
        if (OMPI_SUCCESS != mrc && 0 == rc) {
            rc = -EIO;
        }
        opal_output_verbose(10, mca_common_sfio_output,
                            "sfio: private cache of %s: %" PRIu64 " B written by domains "
                            "(%" PRIu64 " flushes, %" PRIu64 " B in all)",
                            fh->f_filename ? fh->f_filename : "", bytes, pc->flushes,
                            pc->bytes_flushed);
    }
    pthread_mutex_unlock(&pc->lock);
    if (0 != rc) {
        mca_common_sfio_show_help("io-error", true, "fbtl/versioned",
                                  "write the cached private bytes into",
                                  fh->f_filename ? fh->f_filename : "", strerror(-rc));
        return mca_common_sfio_errno_to_mpi(-rc);
    }
    return MPI_SUCCESS;
}
