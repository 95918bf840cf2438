/*
 * sfio_util: small helpers several engine modules need, written once.
 *
 * The FNV-1a hash is pure (inline here, usable by pure modules); the rest
 * are POSIX effects in sfio_util.c: this host's name as a hash, whether a
 * process is dead, open-file-description (OFD) byte-range locks, and
 * unguessable random numbers.
 */
#ifndef MCA_COMMON_SFIO_UTIL_H
#define MCA_COMMON_SFIO_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* FNV-1a, 64 bit: checksums and host names only need to differ, not to
 * be secret.  Chain calls by passing the previous result as h. */
#define MCA_COMMON_SFIO_FNV1A_INIT 0xcbf29ce484222325ull

static inline uint64_t mca_common_sfio_fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* FNV-1a of this host's name (gethostname); 0 when it has none. */
uint64_t mca_common_sfio_host_hash(void);

/* True when process pid (> 0, on this node) is gone or a zombie (killed,
 * not yet reaped: inside containers whose init does not reap, that can
 * last); false for a live process, one of another user (EPERM), and
 * pid <= 0. */
bool mca_common_sfio_pid_dead(int64_t pid);

/* One OFD fcntl lock of type F_RDLCK, F_WRLCK or F_UNLCK on
 * [start, start + len) of fd (len 0: to the end of the file, however it
 * grows); wait: block until granted (F_OFD_SETLKW), else fail at once
 * (F_OFD_SETLK).  OFD locks belong to the open file description, not the
 * process, and go when the holder dies.  Retries on EINTR.  Returns 0 or
 * a negative errno (-EAGAIN when held elsewhere and !wait). */
int mca_common_sfio_ofd_lock(int fd, short type, bool wait, int64_t start, int64_t len);

/* n bytes from the kernel's random source (getrandom; retries on EINTR
 * and short reads).  Returns 0 or a negative errno. */
int mca_common_sfio_random_bytes(void *buf, size_t n);

/* 64 unguessable bits for names and ids others must not predict; where
 * the kernel's source fails, a mix of clock, pid and a counter (unique,
 * not secret). */
uint64_t mca_common_sfio_random64(void);

#endif
