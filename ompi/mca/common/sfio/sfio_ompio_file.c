/*
 * sfio_ompio_file: the per-file state of this process's open files that
 * the suite serves (see mca_common_sfio_file_t in sfio_ompio.h).
 */
#include "sfio_ompio_int.h"


/* This process's open files that the suite serves (few: a list). */
static mca_common_sfio_file_t *open_files;

mca_common_sfio_file_t *mca_common_sfio_file_of(const ompio_file_t *fh)
{
    for (mca_common_sfio_file_t *f = open_files; NULL != f; f = f->next) {
        if (f->fh == fh) {
            return f;
        }
    }
    return NULL;
}

void sfio_ompio_file_free(mca_common_sfio_file_t *f)
{
    for (mca_common_sfio_file_t **fp = &open_files; NULL != *fp; fp = &(*fp)->next) {
        if (*fp == f) {
            *fp = f->next;
            break;
        }
    }
    if (NULL != f->fs_real && f->fh->f_fs == &f->fs_proxy) {
        f->fh->f_fs = f->fs_real;
    }
    mca_common_sfio_objects_destroy(&f->objects);
    mca_common_sfio_pcache_destroy(&f->pcache);
    free(f);
}

/* A new state for fh; a state left for the same handle address by a file
 * whose close never reached the suite is dropped first. */
mca_common_sfio_file_t *sfio_ompio_file_new(ompio_file_t *fh, bool served_by_fs)
{
    mca_common_sfio_file_t *stale = mca_common_sfio_file_of(fh);
    if (NULL != stale) {
        sfio_ompio_file_free(stale);
    }
    mca_common_sfio_file_t *f = calloc(1, sizeof(*f));
    if (NULL == f) {
        return NULL;
    }
    f->fh = fh;
    f->served_by_fs = served_by_fs;
    f->store_errno = ENOTSUP;
    mca_common_sfio_objects_init(&f->objects);
    mca_common_sfio_pcache_init(&f->pcache);
    /* over a stock fs the lock modes still use the private objects */
    f->private_objects = true;
    f->objects_max_ranges = (size_t) 1 << 20;
    f->next = open_files;
    open_files = f;
    return f;
}

bool sfio_ompio_group_atomic(const ompio_file_t *fh, const mca_common_sfio_file_t *f)
{
    return NULL != f && NULL != f->set_atomicity_real ? f->atomic_root : 0 != fh->f_atomicity;
}

bool sfio_ompio_atomic_ever(const mca_common_sfio_file_t *f)
{
    return NULL == f->set_atomicity_real || f->atomic_ever;
}

long sfio_ompio_fs_type(const ompio_file_t *fh, mca_common_sfio_file_t *f)
{
    long t = NULL != f ? f->fs_type : 0;
    if (0 == t) {
        t = mca_common_sfio_fs_type_of(fh->fd);
        if (NULL != f) {
            f->fs_type = t;
        }
    }
    return t;
}
