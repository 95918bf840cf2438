/*
 * sfio_rangemap: ordered map of disjoint byte ranges -> (version, aux),
 * implemented as an AVL tree with parent pointers.  See sfio_rangemap.h for
 * the contract and the invariants.
 *
 * Because entries are disjoint, ordering by offset and ordering by end are
 * the same order; the code relies on that (NFIND descends by end) and on the
 * fact that shrinking an entry in place never changes its rank, so keys may
 * be edited without re-inserting.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sfio_rangemap.h"

typedef struct mca_common_sfio_rangemap_node node_t;

struct mca_common_sfio_rangemap_node {
    mca_common_sfio_rangemap_entry_t entry;     /* first: entry* <-> node* */
    node_t *left;
    node_t *right;
    node_t *parent;
    int height;                                 /* leaf = 1 */
};

static node_t *entry_to_node(const mca_common_sfio_rangemap_entry_t *entry)
{
    return (node_t *) ((char *) (uintptr_t) entry - offsetof(node_t, entry));
}

static uint64_t node_end(const node_t *n)
{
    return n->entry.offset + n->entry.length;
}

static void *default_alloc(void *ctx, size_t size)
{
    (void) ctx;
    return malloc(size);
}

static void default_free(void *ctx, void *ptr, size_t size)
{
    (void) ctx;
    (void) size;
    free(ptr);
}

static node_t *node_alloc(mca_common_sfio_rangemap_t *map)
{
    node_t *n = map->alloc.alloc(map->alloc.ctx, sizeof(*n));
    if (NULL != n) {
        memset(n, 0, sizeof(*n));
        n->height = 1;
    }
    return n;
}

static void node_free(mca_common_sfio_rangemap_t *map, node_t *n)
{
    if (NULL != n) {
        map->alloc.free(map->alloc.ctx, n, sizeof(*n));
    }
}

/* ---- AVL plumbing ------------------------------------------------------ */

static int height(const node_t *n)
{
    return NULL == n ? 0 : n->height;
}

static void update_height(node_t *n)
{
    int hl = height(n->left), hr = height(n->right);
    n->height = 1 + (hl > hr ? hl : hr);
}

/* Put `v` where `u` hangs (in u's parent or at the root). */
static void replace_child(mca_common_sfio_rangemap_t *map, node_t *u, node_t *v)
{
    if (NULL == u->parent) {
        map->root = v;
    } else if (u->parent->left == u) {
        u->parent->left = v;
    } else {
        u->parent->right = v;
    }
    if (NULL != v) {
        v->parent = u->parent;
    }
}

static node_t *rotate_left(mca_common_sfio_rangemap_t *map, node_t *x)
{
    node_t *y = x->right;
    x->right = y->left;
    if (NULL != y->left) {
        y->left->parent = x;
    }
    replace_child(map, x, y);
    y->left = x;
    x->parent = y;
    update_height(x);
    update_height(y);
    return y;
}

static node_t *rotate_right(mca_common_sfio_rangemap_t *map, node_t *x)
{
    node_t *y = x->left;
    x->left = y->right;
    if (NULL != y->right) {
        y->right->parent = x;
    }
    replace_child(map, x, y);
    y->right = x;
    x->parent = y;
    update_height(x);
    update_height(y);
    return y;
}

/* Restore heights and balance from n up to the root.  Walking the whole path
 * (no early stop) keeps the code simple and is still O(log n). */
static void rebalance(mca_common_sfio_rangemap_t *map, node_t *n)
{
    while (NULL != n) {
        int balance;
        update_height(n);
        balance = height(n->left) - height(n->right);
        if (balance > 1) {
            if (height(n->left->left) < height(n->left->right)) {
                rotate_left(map, n->left);
            }
            n = rotate_right(map, n);
        } else if (balance < -1) {
            if (height(n->right->right) < height(n->right->left)) {
                rotate_right(map, n->right);
            }
            n = rotate_left(map, n);
        }
        n = n->parent;
    }
}

static node_t *subtree_min(node_t *n)
{
    while (NULL != n->left) {
        n = n->left;
    }
    return n;
}

static node_t *successor(const node_t *n)
{
    const node_t *p;
    if (NULL != n->right) {
        return subtree_min(n->right);
    }
    p = n->parent;
    while (NULL != p && p->right == n) {
        n = p;
        p = p->parent;
    }
    return (node_t *) (uintptr_t) p;
}

static node_t *predecessor(const node_t *n)
{
    const node_t *p;
    if (NULL != n->left) {
        n = n->left;
        while (NULL != n->right) {
            n = n->right;
        }
        return (node_t *) (uintptr_t) n;
    }
    p = n->parent;
    while (NULL != p && p->left == n) {
        n = p;
        p = p->parent;
    }
    return (node_t *) (uintptr_t) p;
}

/* Link n (entry filled in, disjoint from all entries) at its ordered place. */
static void tree_insert(mca_common_sfio_rangemap_t *map, node_t *n)
{
    node_t **link = &map->root;
    node_t *parent = NULL;
    while (NULL != *link) {
        parent = *link;
        link = n->entry.offset < parent->entry.offset ? &parent->left : &parent->right;
    }
    n->left = n->right = NULL;
    n->height = 1;
    n->parent = parent;
    *link = n;
    rebalance(map, parent);
}

/* Unlink z from the tree (z is not freed).  Nodes other than z keep their
 * addresses, so a saved successor pointer stays valid. */
static void tree_unlink(mca_common_sfio_rangemap_t *map, node_t *z)
{
    node_t *fix;
    if (NULL != z->left && NULL != z->right) {
        node_t *y = subtree_min(z->right);     /* y has no left child */
        if (y->parent != z) {
            fix = y->parent;
            replace_child(map, y, y->right);
            y->right = z->right;
            y->right->parent = y;
        } else {
            fix = y;
        }
        replace_child(map, z, y);
        y->left = z->left;
        y->left->parent = y;
        y->height = z->height;
    } else {
        fix = z->parent;
        replace_child(map, z, NULL != z->left ? z->left : z->right);
    }
    rebalance(map, fix);
}

/* First node whose end is > offset (it contains offset or lies after it). */
static node_t *nfind_node(const mca_common_sfio_rangemap_t *map, uint64_t offset)
{
    node_t *n = map->root, *best = NULL;
    while (NULL != n) {
        if (node_end(n) > offset) {
            best = n;
            n = n->left;
        } else {
            n = n->right;
        }
    }
    return best;
}

static bool range_ok(uint64_t offset, uint64_t length)
{
    return length <= UINT64_MAX - offset;
}

static bool continues(const node_t *a, const node_t *b)
{
    return node_end(a) == b->entry.offset
        && a->entry.value.version == b->entry.value.version
        && a->entry.value.aux + a->entry.length == b->entry.value.aux;
}

/* Remove the bytes [off, end) from every entry overlapping them.  `spare` is
 * a preallocated node used when one entry covers both sides; it is consumed
 * (and set to NULL) in that case.  Cannot fail. */
static void carve(mca_common_sfio_rangemap_t *map, uint64_t off, uint64_t end, node_t **spare)
{
    node_t *n = nfind_node(map, off);

    while (NULL != n && n->entry.offset < end) {
        node_t *next = successor(n);
        uint64_t n_end = node_end(n);

        if (n->entry.offset < off) {
            if (n_end > end) {                      /* split in the middle */
                node_t *tail = *spare;
                *spare = NULL;
                tail->entry = n->entry;
                tail->entry.offset = end;
                tail->entry.length = n_end - end;
                tail->entry.value.aux += end - n->entry.offset;
                n->entry.length = off - n->entry.offset;
                map->bytes -= end - off;
                map->count++;
                tree_insert(map, tail);
                return;
            }
            map->bytes -= n_end - off;              /* cut the tail */
            n->entry.length = off - n->entry.offset;
        } else if (n_end > end) {                   /* cut the head */
            uint64_t cut = end - n->entry.offset;
            n->entry.offset = end;
            n->entry.length -= cut;
            n->entry.value.aux += cut;
            map->bytes -= cut;
            return;
        } else {                                    /* fully covered */
            map->bytes -= n->entry.length;
            map->count--;
            tree_unlink(map, n);
            node_free(map, n);
        }
        n = next;
    }
}

/* Does carving [off, end) split one entry in two? */
static bool needs_split(const mca_common_sfio_rangemap_t *map, uint64_t off, uint64_t end)
{
    const node_t *n = nfind_node(map, off);
    return NULL != n && n->entry.offset < off && node_end(n) > end;
}

/* ---- public API -------------------------------------------------------- */

int mca_common_sfio_rangemap_init(mca_common_sfio_rangemap_t *map,
                                  const mca_common_sfio_allocator_t *alloc,
                                  unsigned flags)
{
    if (NULL == map || 0 != (flags & ~MCA_COMMON_SFIO_RANGEMAP_COALESCE)) {
        return -EINVAL;
    }
    if (NULL != alloc && (NULL == alloc->alloc || NULL == alloc->free)) {
        return -EINVAL;
    }
    memset(map, 0, sizeof(*map));
    if (NULL != alloc) {
        map->alloc = *alloc;
    } else {
        map->alloc.alloc = default_alloc;
        map->alloc.free = default_free;
        map->alloc.ctx = NULL;
    }
    map->flags = flags;
    return 0;
}

void mca_common_sfio_rangemap_clear(mca_common_sfio_rangemap_t *map)
{
    node_t *n = map->root;
    /* Iterative post-order free: descend to a leaf, free it, go up. */
    while (NULL != n) {
        if (NULL != n->left) {
            n = n->left;
        } else if (NULL != n->right) {
            n = n->right;
        } else {
            node_t *p = n->parent;
            if (NULL != p) {
                if (p->left == n) {
                    p->left = NULL;
                } else {
                    p->right = NULL;
                }
            }
            node_free(map, n);
            n = p;
        }
    }
    map->root = NULL;
    map->count = 0;
    map->bytes = 0;
}

void mca_common_sfio_rangemap_destroy(mca_common_sfio_rangemap_t *map)
{
    mca_common_sfio_rangemap_clear(map);
}

int mca_common_sfio_rangemap_assign(mca_common_sfio_rangemap_t *map,
                                    uint64_t offset, uint64_t length,
                                    const mca_common_sfio_rangemap_value_t *value)
{
    node_t *n, *spare = NULL;
    uint64_t end;

    if (NULL == map || NULL == value || !range_ok(offset, length)) {
        return -EINVAL;
    }
    if (0 == length) {
        return 0;
    }
    end = offset + length;

    n = node_alloc(map);
    if (NULL == n) {
        return -ENOMEM;
    }
    if (needs_split(map, offset, end)) {
        spare = node_alloc(map);
        if (NULL == spare) {
            node_free(map, n);
            return -ENOMEM;
        }
    }

    carve(map, offset, end, &spare);
    node_free(map, spare);      /* unused if no split happened */

    n->entry.offset = offset;
    n->entry.length = length;
    n->entry.value = *value;
    tree_insert(map, n);
    map->count++;
    map->bytes += length;

    if (map->flags & MCA_COMMON_SFIO_RANGEMAP_COALESCE) {
        node_t *prev = predecessor(n), *next;
        if (NULL != prev && continues(prev, n)) {
            prev->entry.length += n->entry.length;
            tree_unlink(map, n);
            node_free(map, n);
            map->count--;
            n = prev;
        }
        next = successor(n);
        if (NULL != next && continues(n, next)) {
            n->entry.length += next->entry.length;
            tree_unlink(map, next);
            node_free(map, next);
            map->count--;
        }
    }
    return 0;
}

int mca_common_sfio_rangemap_remove(mca_common_sfio_rangemap_t *map,
                                    uint64_t offset, uint64_t length)
{
    node_t *spare = NULL;

    if (NULL == map || !range_ok(offset, length)) {
        return -EINVAL;
    }
    if (0 == length) {
        return 0;
    }
    if (needs_split(map, offset, offset + length)) {
        spare = node_alloc(map);
        if (NULL == spare) {
            return -ENOMEM;
        }
    }
    carve(map, offset, offset + length, &spare);
    node_free(map, spare);
    return 0;
}

int mca_common_sfio_rangemap_nfind(const mca_common_sfio_rangemap_t *map, uint64_t offset,
                                   const mca_common_sfio_rangemap_entry_t **entry_p)
{
    const node_t *n = nfind_node(map, offset);
    if (NULL == n) {
        return -ENOENT;
    }
    *entry_p = &n->entry;
    return 0;
}

int mca_common_sfio_rangemap_find(const mca_common_sfio_rangemap_t *map, uint64_t offset,
                                  const mca_common_sfio_rangemap_entry_t **entry_p)
{
    const node_t *n = nfind_node(map, offset);
    if (NULL == n || n->entry.offset > offset) {
        return -ENOENT;
    }
    *entry_p = &n->entry;
    return 0;
}

int mca_common_sfio_rangemap_next(const mca_common_sfio_rangemap_t *map,
                                  const mca_common_sfio_rangemap_entry_t *entry,
                                  const mca_common_sfio_rangemap_entry_t **next_p)
{
    const node_t *n;
    (void) map;
    if (NULL == entry) {
        return -EINVAL;
    }
    n = successor(entry_to_node(entry));
    if (NULL == n) {
        return -ENOENT;
    }
    *next_p = &n->entry;
    return 0;
}

int mca_common_sfio_rangemap_iter_init(const mca_common_sfio_rangemap_t *map,
                                       uint64_t offset, uint64_t length,
                                       mca_common_sfio_rangemap_iter_t *iter_p)
{
    if (NULL == map || !range_ok(offset, length)) {
        return -EINVAL;
    }
    iter_p->end = offset + length;
    iter_p->next = 0 == length ? NULL : nfind_node(map, offset);
    return 0;
}

int mca_common_sfio_rangemap_iter_next(mca_common_sfio_rangemap_iter_t *iter,
                                       const mca_common_sfio_rangemap_entry_t **entry_p)
{
    const node_t *n = iter->next;
    if (NULL == n || n->entry.offset >= iter->end) {
        iter->next = NULL;
        return -ENOENT;
    }
    iter->next = successor(n);
    *entry_p = &n->entry;
    return 0;
}

int mca_common_sfio_rangemap_foreach(const mca_common_sfio_rangemap_t *map,
                                     uint64_t offset, uint64_t length,
                                     mca_common_sfio_rangemap_cb_t cb, void *ctx)
{
    mca_common_sfio_rangemap_iter_t it;
    const mca_common_sfio_rangemap_entry_t *e;
    int rc = mca_common_sfio_rangemap_iter_init(map, offset, length, &it);
    if (0 != rc) {
        return rc;
    }
    while (0 == mca_common_sfio_rangemap_iter_next(&it, &e)) {
        rc = cb(e, ctx);
        if (0 != rc) {
            return rc;
        }
    }
    return 0;
}

size_t mca_common_sfio_rangemap_count(const mca_common_sfio_rangemap_t *map)
{
    return map->count;
}

uint64_t mca_common_sfio_rangemap_bytes(const mca_common_sfio_rangemap_t *map)
{
    return map->bytes;
}

/* ---- verification ------------------------------------------------------ */

typedef struct verify_state_t {
    const mca_common_sfio_rangemap_t *map;
    const node_t *prev;         /* previous node in order */
    size_t count;
    uint64_t bytes;
} verify_state_t;

/* Returns the subtree height, or -1 on a broken invariant. */
static int verify_subtree(verify_state_t *st, const node_t *n, const node_t *parent)
{
    int hl, hr;
    if (NULL == n) {
        return 0;
    }
    if (n->parent != parent || ++st->count > st->map->count) {
        return -1;      /* the count bound also stops cycles */
    }
    hl = verify_subtree(st, n->left, n);
    if (hl < 0) {
        return -1;
    }
    /* in-order visit */
    if (0 == n->entry.length || !range_ok(n->entry.offset, n->entry.length)) {
        return -1;
    }
    if (NULL != st->prev) {
        if (node_end(st->prev) > n->entry.offset) {
            return -1;
        }
        if ((st->map->flags & MCA_COMMON_SFIO_RANGEMAP_COALESCE) && continues(st->prev, n)) {
            return -1;
        }
    }
    st->prev = n;
    st->bytes += n->entry.length;
    hr = verify_subtree(st, n->right, n);
    if (hr < 0 || hl - hr > 1 || hr - hl > 1) {
        return -1;
    }
    if (n->height != 1 + (hl > hr ? hl : hr)) {
        return -1;
    }
    return n->height;
}

int mca_common_sfio_rangemap_verify(const mca_common_sfio_rangemap_t *map)
{
    verify_state_t st = { map, NULL, 0, 0 };
    if (NULL == map || NULL == map->alloc.alloc || NULL == map->alloc.free) {
        return -EINVAL;
    }
    if (verify_subtree(&st, map->root, NULL) < 0) {
        return -EINVAL;
    }
    if (st.count != map->count || st.bytes != map->bytes) {
        return -EINVAL;
    }
    return 0;
}
