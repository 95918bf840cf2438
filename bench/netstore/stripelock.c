/*
 * stripelock.c - the extent-lock rule of netstore (see stripelock.h).
 * Pure: the shared table and the waiting live in netstore.c.
 */
#include "stripelock.h"

static int has_reader(const ns_sl_state_t *s, uint64_t c)
{
    for (int i = 0; i < NS_SL_MAX_READERS; i++)
        if (s->readers[i] == c) return 1;
    return 0;
}

static int other_readers(const ns_sl_state_t *s, uint64_t c)
{
    if (s->crowded) return 1;
    for (int i = 0; i < NS_SL_MAX_READERS; i++)
        if (s->readers[i] != 0 && s->readers[i] != c) return 1;
    return 0;
}

static void add_reader(ns_sl_state_t *s, uint64_t c)
{
    if (has_reader(s, c)) return;
    for (int i = 0; i < NS_SL_MAX_READERS; i++) {
        if (s->readers[i] == 0) {
            s->readers[i] = c;
            return;
        }
    }
    s->crowded = 1;
}

int ns_sl_verify(const ns_sl_state_t *s)
{
    int n = 0;
    for (int i = 0; i < NS_SL_MAX_READERS; i++) {
        if (s->readers[i] == 0) continue;
        n++;
        for (int j = i + 1; j < NS_SL_MAX_READERS; j++)
            if (s->readers[j] == s->readers[i]) return 0;
    }
    if (s->writer != 0 && (n != 0 || s->crowded)) return 0;
    if (s->crowded && n != NS_SL_MAX_READERS) return 0;
    return 1;
}

int ns_sl_access(const ns_sl_state_t *s, uint64_t client, int is_write, ns_sl_state_t *next_p)
{
    ns_sl_state_t n = *s;
    int rtt = 0;
    if (is_write) {
        if ((n.writer != 0 && n.writer != client) || other_readers(&n, client))
            rtt = NS_SL_REVOKE_RTT;
        for (int i = 0; i < NS_SL_MAX_READERS; i++) n.readers[i] = 0;
        n.crowded = 0;
        n.writer = client;
    } else if (n.writer == client) {
        /* a write lock covers reads */
    } else if (n.writer != 0) {
        rtt = NS_SL_REVOKE_RTT;
        n.readers[0] = n.writer;
        n.writer = 0;
        add_reader(&n, client);
    } else {
        add_reader(&n, client);
    }
    *next_p = n;
    return rtt;
}

void ns_sl_stripes(uint64_t offset, uint64_t len, uint64_t stripe_size, uint64_t *first_p,
                   uint64_t *count_p)
{
    uint64_t first = offset / stripe_size;
    *first_p = first;
    *count_p = len == 0 ? 0 : (offset + len - 1) / stripe_size - first + 1;
}
