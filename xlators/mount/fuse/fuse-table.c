/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-table: the session's nodes (nodeid -> GFID, lookup count, inode of
 * one graph) and handles (fh -> GFID, open flags, fd of one graph).
 *
 * Nodeids and fhs are pointers to these objects, which belong to the
 * session, not to a graph: a graph switch leaves them in place and only
 * their inode/fd refs move, lazily, to the newer graph (fuse-resolve.c).
 * One node per GFID (a hash of all its bytes, buckets doubling with the
 * count), so the kernel never sees two nodeids for one object.
 *
 * Nodes also carry flags (VFUSE_NODE_*) that let the bridge answer some
 * calls without a round trip (FLUSH, GETXATTR security.capability), the
 * name hints naming them (fuse-hint.c), freed with them, and a
 * directory's attributes from the last entry op in it (for the GETATTR
 * that follows; the root's are in the table).
 *
 * Threads: every function takes t->lock. Inode and fd refs are dropped
 * while holding it: a graph drops every ref into it (vfuse_table_drop_gen)
 * under the same lock before its inode table goes, so under the lock the
 * graph of any ref found here is still alive.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "fuse.h"

#define VFUSE_NODE_BUCKETS 4096         /* initial; a power of two */
#define VFUSE_NODE_BUCKETS_MAX (1 << 24) /* 128 MiB of chains at most */
#define VFUSE_NODE_LOAD 2                /* nodes per bucket before growing */


void
vfuse_list_init(struct vfuse_link *head)
{
    head->prev = head;
    head->next = head;
}


void
vfuse_list_add(struct vfuse_link *head, struct vfuse_link *l)
{
    l->next = head->next;
    l->prev = head;
    head->next->prev = l;
    head->next = l;
}


void
vfuse_list_del(struct vfuse_link *l)
{
    l->prev->next = l->next;
    l->next->prev = l->prev;
    l->prev = NULL;
    l->next = NULL;
}


int
vfuse_table_init(struct vfuse_table *t)
{
    memset(t, 0, sizeof(*t));
    t->hash = vl_calloc(NULL, VFUSE_NODE_BUCKETS, sizeof(*t->hash),
                        VL_MT_MISC);
    if (t->hash == NULL)
        return -ENOMEM;
    t->n_buckets = VFUSE_NODE_BUCKETS;
    vfuse_list_init(&t->nodes);
    vfuse_list_init(&t->handles);
    if (vfuse_hint_init(t, 0) != 0) {
        vl_free(t->hash);
        t->hash = NULL;
        return -ENOMEM;
    }
    pthread_mutex_init(&t->lock, NULL);
    return 0;
}


/* A hash of all 16 bytes. A v4 UUID has fixed bits (version nibble,
 * variant bits of byte 8), so no byte range of it is uniform; GFIDs made
 * elsewhere (e.g. the root's, or patterned test ones) are not random at
 * all. The multiply-xorshift finalizer spreads every input bit over the
 * low bits that pick the bucket. */
static uint64_t
vfuse_gfid_hash(const vl_gfid_t *gfid)
{
    uint64_t a;
    uint64_t b;
    uint64_t h;

    memcpy(&a, gfid->bytes, sizeof(a));
    memcpy(&b, gfid->bytes + 8, sizeof(b));
    h = a ^ (b * 0x9e3779b97f4a7c15ULL);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}


static size_t
vfuse_gfid_bucket(const struct vfuse_table *t, const vl_gfid_t *gfid)
{
    return (size_t)(vfuse_gfid_hash(gfid) & (t->n_buckets - 1));
}


/* Doubles the buckets once chains average VFUSE_NODE_LOAD nodes, so a
 * lookup stays O(1) with millions of nodes (a big tree walked with a
 * long entry timeout). On ENOMEM the table keeps its size: slower, not
 * wrong. */
static void
vfuse_table_grow_locked(struct vfuse_table *t)
{
    size_t n = t->n_buckets * 2;
    struct vfuse_node **hash;

    if (t->n_nodes <= t->n_buckets * VFUSE_NODE_LOAD
        || n > VFUSE_NODE_BUCKETS_MAX)
        return;
    hash = vl_calloc(NULL, n, sizeof(*hash), VL_MT_MISC);
    if (hash == NULL)
        return;
    for (size_t i = 0; i < t->n_buckets; i++) {
        struct vfuse_node *node = t->hash[i];

        while (node != NULL) {
            struct vfuse_node *next = node->hnext;
            size_t b = (size_t)(vfuse_gfid_hash(&node->gfid) & (n - 1));

            node->hnext = hash[b];
            hash[b] = node;
            node = next;
        }
    }
    vl_free(t->hash);
    t->hash = hash;
    t->n_buckets = n;
}


void
vfuse_table_hash_stats(struct vfuse_table *t, size_t *n_buckets,
                       size_t *n_used, size_t *max_chain)
{
    pthread_mutex_lock(&t->lock);
    *n_buckets = t->n_buckets;
    *n_used = 0;
    *max_chain = 0;
    for (size_t i = 0; i < t->n_buckets; i++) {
        size_t len = 0;

        for (struct vfuse_node *n = t->hash[i]; n != NULL; n = n->hnext)
            len++;
        if (len > 0)
            (*n_used)++;
        if (len > *max_chain)
            *max_chain = len;
    }
    pthread_mutex_unlock(&t->lock);
}


struct vfuse_node *
vfuse_node_find_locked(struct vfuse_table *t, const vl_gfid_t *gfid)
{
    struct vfuse_node *n = t->hash[vfuse_gfid_bucket(t, gfid)];

    while (n != NULL && !vl_gfid_equal(&n->gfid, gfid))
        n = n->hnext;
    return n;
}


static void
vfuse_node_unhash_locked(struct vfuse_table *t, struct vfuse_node *node)
{
    struct vfuse_node **pp = &t->hash[vfuse_gfid_bucket(t, &node->gfid)];

    while (*pp != NULL && *pp != node)
        pp = &(*pp)->hnext;
    if (*pp != NULL)
        *pp = node->hnext;
}


static void
vfuse_node_free_locked(struct vfuse_table *t, struct vfuse_node *node)
{
    vfuse_hint_drop_node_locked(t, node);
    vfuse_node_unhash_locked(t, node);
    vfuse_list_del(&node->link);
    t->n_nodes--;
    if (node->flags & VFUSE_NODE_EVICTING)
        t->n_evicting--;
    vl_inode_unref(node->inode);
    vl_free(node);
}


uint64_t
vfuse_node_remember(struct vfuse_table *t, vl_inode_t *linked, uint64_t gen)
{
    struct vfuse_node *node;

    pthread_mutex_lock(&t->lock);
    node = vfuse_node_find_locked(t, &linked->gfid);
    if (node == NULL) {
        node = vl_calloc(NULL, 1, sizeof(*node), VL_MT_MISC);
        if (node == NULL) {
            vl_inode_unref(linked);
            pthread_mutex_unlock(&t->lock);
            return 0;
        }
        node->gfid = linked->gfid;
        vfuse_list_init(&node->hints);
        node->hnext = t->hash[vfuse_gfid_bucket(t, &node->gfid)];
        t->hash[vfuse_gfid_bucket(t, &node->gfid)] = node;
        vfuse_list_init(&node->link);
        t->n_nodes++;
        vfuse_table_grow_locked(t);
    }
    node->nlookup++;
    /* Most recently looked up first (fuse-lru.c takes from the back). */
    vfuse_list_del(&node->link);
    vfuse_list_add(&t->nodes, &node->link);
    if (node->flags & VFUSE_NODE_EVICTING) {
        node->flags &= ~VFUSE_NODE_EVICTING;
        t->n_evicting--;
    }
    if (linked->type != 0)
        node->type = linked->type;
    if (node->inode == NULL || gen > node->gen) {
        /* First sight, or seen in a newer graph: follow it there. */
        vl_inode_unref(node->inode);
        node->inode = linked;
        node->gen = gen;
    } else {
        vl_inode_unref(linked);
    }
    pthread_mutex_unlock(&t->lock);
    return (uint64_t)(uintptr_t)node;
}


void
vfuse_node_forget(struct vfuse_table *t, uint64_t nodeid, uint64_t n)
{
    struct vfuse_node *node = (struct vfuse_node *)(uintptr_t)nodeid;

    if (nodeid == 0 || nodeid == FUSE_ROOT_ID)
        return;
    pthread_mutex_lock(&t->lock);
    node->nlookup = n >= node->nlookup ? 0 : node->nlookup - n;
    if (node->nlookup == 0)
        vfuse_node_free_locked(t, node);
    pthread_mutex_unlock(&t->lock);
}


vl_inode_t *
vfuse_node_get(struct vfuse_table *t, uint64_t nodeid, uint64_t gen,
               vl_gfid_t *gfid, uint32_t *type)
{
    struct vfuse_node *node = (struct vfuse_node *)(uintptr_t)nodeid;
    vl_inode_t *inode = NULL;

    pthread_mutex_lock(&t->lock);
    if (node->inode != NULL && node->gen == gen)
        inode = vl_inode_ref(node->inode);
    *gfid = node->gfid;
    *type = node->type;
    pthread_mutex_unlock(&t->lock);
    return inode;
}


void
vfuse_node_update(struct vfuse_table *t, uint64_t nodeid, vl_inode_t *inode,
                  uint64_t gen)
{
    struct vfuse_node *node = (struct vfuse_node *)(uintptr_t)nodeid;

    pthread_mutex_lock(&t->lock);
    if (node->inode == NULL || gen > node->gen) {
        vl_inode_unref(node->inode);
        node->inode = vl_inode_ref(inode);
        node->gen = gen;
    }
    pthread_mutex_unlock(&t->lock);
}


uint32_t
vfuse_node_flags(struct vfuse_table *t, uint64_t nodeid)
{
    struct vfuse_node *node = (struct vfuse_node *)(uintptr_t)nodeid;
    uint32_t flags;

    if (nodeid == 0 || nodeid == FUSE_ROOT_ID)
        return 0;
    pthread_mutex_lock(&t->lock);
    flags = node->flags;
    pthread_mutex_unlock(&t->lock);
    return flags;
}


void
vfuse_node_set_flags(struct vfuse_table *t, uint64_t nodeid, uint32_t set,
                     uint32_t clear)
{
    struct vfuse_node *node = (struct vfuse_node *)(uintptr_t)nodeid;

    if (nodeid == 0 || nodeid == FUSE_ROOT_ID)
        return;
    pthread_mutex_lock(&t->lock);
    node->flags = (node->flags | set) & ~clear;
    pthread_mutex_unlock(&t->lock);
}


/* The stored attributes of nodeid (or of the directory dir when nodeid
 * is 0); NULL if it has no node. t->lock held. */
static struct vfuse_pattr *
vfuse_pattr_slot_locked(struct vfuse_table *t, uint64_t nodeid,
                        const vl_gfid_t *dir)
{
    struct vfuse_node *node;

    if (nodeid == FUSE_ROOT_ID || (dir != NULL && vl_gfid_is_root(dir)))
        return &t->root_pattr;
    if (nodeid != 0)
        return &((struct vfuse_node *)(uintptr_t)nodeid)->pattr;
    node = dir != NULL ? vfuse_node_find_locked(t, dir) : NULL;
    return node != NULL ? &node->pattr : NULL;
}


/* True if a is from later than b (ctime; equal counts as later, so the
 * newest of two answers in the same tick wins). */
static bool
vfuse_iatt_not_older(const struct vl_iatt *a, const struct vl_iatt *b)
{
    if (a->ctime != b->ctime)
        return a->ctime > b->ctime;
    return a->ctime_ns >= b->ctime_ns;
}


/* Entry replies of concurrent ops in one directory may come back out of
 * order: the one with the later ctime is kept. */
void
vfuse_pattr_store(struct vfuse_table *t, const vl_gfid_t *dir,
                  const struct vl_iatt *iatt, uint64_t until_ns)
{
    struct vfuse_pattr *p;

    pthread_mutex_lock(&t->lock);
    p = vfuse_pattr_slot_locked(t, 0, dir);
    if (p != NULL && iatt == NULL) {
        p->until_ns = 0;
    } else if (p != NULL
               && (p->until_ns == 0 || vfuse_iatt_not_older(iatt, &p->iatt))) {
        p->iatt = *iatt;
        p->until_ns = until_ns;
    }
    pthread_mutex_unlock(&t->lock);
}


bool
vfuse_pattr_take(struct vfuse_table *t, uint64_t nodeid, uint64_t now_ns,
                 struct vl_iatt *out, uint64_t *until_ns)
{
    struct vfuse_pattr *p;
    bool is_valid = false;

    if (nodeid == 0)
        return false;
    pthread_mutex_lock(&t->lock);
    p = vfuse_pattr_slot_locked(t, nodeid, NULL);
    if (p->until_ns != 0 && now_ns < p->until_ns) {
        *out = p->iatt;
        if (until_ns != NULL)
            *until_ns = p->until_ns;
        is_valid = true;
    }
    p->until_ns = 0;
    pthread_mutex_unlock(&t->lock);
    return is_valid;
}


void
vfuse_pattr_drop(struct vfuse_table *t, uint64_t nodeid)
{
    if (nodeid == 0)
        return;
    pthread_mutex_lock(&t->lock);
    vfuse_pattr_slot_locked(t, nodeid, NULL)->until_ns = 0;
    pthread_mutex_unlock(&t->lock);
}


uint64_t
vfuse_handle_new(struct vfuse_table *t, vl_fd_t *fd, uint64_t gen,
                 const vl_gfid_t *gfid, uint32_t type, bool is_dir)
{
    struct vfuse_handle *h = vl_calloc(NULL, 1, sizeof(*h), VL_MT_MISC);

    if (h == NULL)
        return 0;
    h->gfid = *gfid;
    h->type = type;
    h->flags = fd->flags;
    h->pid = fd->pid;
    h->is_dir = is_dir;
    h->fd = vl_fd_ref(fd);
    h->gen = gen;
    pthread_mutex_lock(&t->lock);
    vfuse_list_add(&t->handles, &h->link);
    t->n_handles++;
    pthread_mutex_unlock(&t->lock);
    return (uint64_t)(uintptr_t)h;
}


vl_fd_t *
vfuse_handle_get(struct vfuse_table *t, uint64_t fh, uint64_t gen,
                 struct vfuse_handle *copy)
{
    struct vfuse_handle *h = (struct vfuse_handle *)(uintptr_t)fh;
    vl_fd_t *fd = NULL;

    pthread_mutex_lock(&t->lock);
    if (h->fd != NULL && h->gen == gen)
        fd = vl_fd_ref(h->fd);
    *copy = *h;
    copy->fd = NULL;
    pthread_mutex_unlock(&t->lock);
    return fd;
}


void
vfuse_handle_update(struct vfuse_table *t, uint64_t fh, vl_fd_t *fd,
                    uint64_t gen)
{
    struct vfuse_handle *h = (struct vfuse_handle *)(uintptr_t)fh;

    pthread_mutex_lock(&t->lock);
    if (h->fd == NULL || gen > h->gen) {
        vl_fd_unref(h->fd);
        h->fd = vl_fd_ref(fd);
        h->gen = gen;
    }
    pthread_mutex_unlock(&t->lock);
}


vl_fd_t *
vfuse_handle_free(struct vfuse_table *t, uint64_t fh, uint64_t gen)
{
    struct vfuse_handle *h = (struct vfuse_handle *)(uintptr_t)fh;
    vl_fd_t *fd = NULL;

    pthread_mutex_lock(&t->lock);
    vfuse_list_del(&h->link);
    t->n_handles--;
    if (h->fd != NULL && h->gen == gen)
        fd = h->fd;
    else
        vl_fd_unref(h->fd); /* its graph is alive: we hold the lock */
    pthread_mutex_unlock(&t->lock);
    vl_free(h);
    return fd;
}


void
vfuse_table_drop_gen(struct vfuse_table *t, uint64_t gen)
{
    pthread_mutex_lock(&t->lock);
    for (struct vfuse_link *l = t->nodes.next; l != &t->nodes; l = l->next) {
        struct vfuse_node *n = VFUSE_CONTAINER(l, struct vfuse_node, link);

        if (n->inode != NULL && n->gen == gen) {
            vl_inode_unref(n->inode);
            n->inode = NULL;
            n->gen = 0;
        }
    }
    for (struct vfuse_link *l = t->handles.next; l != &t->handles;
         l = l->next) {
        struct vfuse_handle *h =
            VFUSE_CONTAINER(l, struct vfuse_handle, link);

        if (h->fd != NULL && h->gen == gen) {
            vl_fd_unref(h->fd);
            h->fd = NULL;
            h->gen = 0;
        }
    }
    pthread_mutex_unlock(&t->lock);
}


void
vfuse_table_counts(struct vfuse_table *t, size_t *n_nodes, size_t *n_handles,
                   size_t *n_in_gen, uint64_t gen)
{
    size_t n = 0;

    pthread_mutex_lock(&t->lock);
    for (struct vfuse_link *l = t->nodes.next; l != &t->nodes; l = l->next)
        if (VFUSE_CONTAINER(l, struct vfuse_node, link)->gen == gen)
            n++;
    for (struct vfuse_link *l = t->handles.next; l != &t->handles;
         l = l->next)
        if (VFUSE_CONTAINER(l, struct vfuse_handle, link)->gen == gen)
            n++;
    *n_nodes = t->n_nodes;
    *n_handles = t->n_handles;
    *n_in_gen = n;
    pthread_mutex_unlock(&t->lock);
}


void
vfuse_table_clear(struct vfuse_table *t)
{
    struct vfuse_link *l;

    if (t->hash == NULL)
        return;
    pthread_mutex_lock(&t->lock);
    while ((l = t->handles.next) != &t->handles) {
        struct vfuse_handle *h =
            VFUSE_CONTAINER(l, struct vfuse_handle, link);

        vfuse_list_del(l);
        vl_fd_unref(h->fd);
        vl_free(h);
    }
    t->n_handles = 0;
    while ((l = t->nodes.next) != &t->nodes)
        vfuse_node_free_locked(t, VFUSE_CONTAINER(l, struct vfuse_node,
                                                  link));
    pthread_mutex_unlock(&t->lock);
    pthread_mutex_destroy(&t->lock);
    vfuse_hint_fini(t);
    vl_free(t->hash);
    t->hash = NULL;
}
