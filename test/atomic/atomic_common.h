/*
 * atomic_common.h: helpers shared by the atomic-mode tests of test/atomic/
 * (t_serial, t_crash, t_stall): tagged cells, a small PRNG, and a cycle
 * check on a "came later" graph.
 *
 * A cell is 8 bytes: the high 32 bits hold CELL_MAGIC | (writer rank + 1),
 * the low 32 bits the writer's sequence number (>= 1).  Zero is a cell no
 * write ever touched, so every byte of a file tells which write put it
 * there.
 */
#ifndef ATOMIC_COMMON_H
#define ATOMIC_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CELL_MAGIC 0xA5000000u
#define CELL_RANK_MASK 0x00FFFFFFu

static inline uint64_t cell_tag(int rank, uint32_t seq)
{
    return ((uint64_t) (CELL_MAGIC | (uint32_t) (rank + 1)) << 32) | seq;
}

/* Returns 1 and the writer when the cell holds a well-formed tag, 0 for an
 * unwritten cell, -1 for garbage (a torn or foreign cell). */
static inline int cell_decode(uint64_t v, int *rank, uint32_t *seq)
{
    if (0 == v) {
        return 0;
    }
    uint32_t hi = (uint32_t) (v >> 32);
    if ((hi & ~CELL_RANK_MASK) != CELL_MAGIC || 0 == (hi & CELL_RANK_MASK) || 0 == (uint32_t) v) {
        return -1;
    }
    *rank = (int) (hi & CELL_RANK_MASK) - 1;
    *seq = (uint32_t) v;
    return 1;
}

/* splitmix64: deterministic from a seed, identical on every rank. */
typedef struct {
    uint64_t s;
} rng_t;

static inline uint64_t rng_next(rng_t *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint64_t rng_below(rng_t *r, uint64_t n)
{
    return n ? rng_next(r) % n : 0;
}

static inline rng_t rng_make(uint64_t seed, uint64_t a, uint64_t b)
{
    rng_t r = { seed ^ (a * 0x100000001B3ull) ^ (b * 0xC2B2AE3D27D4EB4Full) };
    rng_next(&r);
    return r;
}

/* ------------------------------------------------------------------ */
/* Directed graph with deduplicated edges and an iterative DFS cycle    */
/* check.  Edge u -> v means "v came later than u".                    */
/* ------------------------------------------------------------------ */
typedef struct {
    int n;
    int **adj;
    int *deg, *cap;
} graph_t;

static inline void graph_init(graph_t *g, int n)
{
    if (n < 1) n = 1;
    g->n = n;
    g->adj = calloc((size_t) n, sizeof(int *));
    g->deg = calloc((size_t) n, sizeof(int));
    g->cap = calloc((size_t) n, sizeof(int));
}

static inline void graph_free(graph_t *g)
{
    for (int i = 0; i < g->n; ++i) free(g->adj[i]);
    free(g->adj);
    free(g->deg);
    free(g->cap);
}

/* Adds u -> v unless present (linear scan: degrees stay small here). */
static inline void graph_edge(graph_t *g, int u, int v)
{
    for (int i = 0; i < g->deg[u]; ++i) {
        if (g->adj[u][i] == v) return;
    }
    if (g->deg[u] == g->cap[u]) {
        g->cap[u] = g->cap[u] ? 2 * g->cap[u] : 8;
        g->adj[u] = realloc(g->adj[u], (size_t) g->cap[u] * sizeof(int));
    }
    g->adj[u][g->deg[u]++] = v;
}

/* Returns 1 when the graph has a cycle; cycle[] (room for n + 1) gets its
 * nodes, *clen their count (first == last). */
static inline int graph_find_cycle(const graph_t *g, int *cycle, int *clen)
{
    int n = g->n;
    char *color = calloc((size_t) n, 1);          /* 0 white, 1 grey, 2 black */
    int *stack = malloc((size_t) n * sizeof(int)), *it = calloc((size_t) n, sizeof(int));
    int found = 0;
    *clen = 0;
    for (int s = 0; s < n && !found; ++s) {
        if (color[s]) continue;
        int top = 0;
        stack[top++] = s;
        color[s] = 1;
        it[s] = 0;
        while (top > 0 && !found) {
            int u = stack[top - 1];
            if (it[u] < g->deg[u]) {
                int v = g->adj[u][it[u]++];
                if (1 == color[v]) {
                    /* cycle: v ... u -> v */
                    int k = top - 1;
                    while (stack[k] != v) --k;
                    for (int j = k; j < top; ++j) cycle[(*clen)++] = stack[j];
                    cycle[(*clen)++] = v;
                    found = 1;
                } else if (0 == color[v]) {
                    color[v] = 1;
                    it[v] = 0;
                    stack[top++] = v;
                }
            } else {
                color[u] = 2;
                --top;
            }
        }
    }
    free(color);
    free(stack);
    free(it);
    return found;
}

#endif
