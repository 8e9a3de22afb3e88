/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inode: the per-graph inode table: a GFID hash of linked inodes, refcounts,
 * an LRU of unreferenced linked inodes bounded by lru_limit, forget hooks,
 * and per-translator context areas.
 *
 * Every inode is on exactly one list: "active" (refs > 0) or "lru"
 * (refs == 0, linked). Unlinked inodes are freed at their last unref.
 * The hash doubles its buckets once it holds VL_ITABLE_LOAD inodes per
 * bucket, so a lookup stays O(1) with millions of inodes (a client whose
 * kernel holds a big tree, a brick serving it).
 * Threads: table->lock guards refs, the hash and both lists. Forget hooks
 * run without the lock, after the inode left the table.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core.h"

#define VL_ITABLE_BUCKETS 16384          /* initial; a power of two */
#define VL_ITABLE_BUCKETS_MAX (1u << 24) /* 128 MiB of chains at most */
#define VL_ITABLE_LOAD 2                 /* inodes per bucket to grow at */

struct vl__inode {
    vl_inode_t pub;            /* public part; must stay first */
    size_t refs;               /* table->lock */
    bool is_linked;            /* in the hash; table->lock */
    struct vl__inode *hnext;   /* hash chain; table->lock */
    struct vl__inode *prev;    /* active or lru list; table->lock */
    struct vl__inode *next;    /* active or lru list; table->lock */
    _Alignas(16) unsigned char ctx[]; /* graph->inode_ctx_size bytes */
};

/* A doubly linked list with a count. */
struct vl_ilist {
    struct vl__inode *head; /* oldest */
    struct vl__inode *tail; /* newest */
    size_t n;               /* entries */
};

struct vl_inode_table {
    pthread_mutex_t lock;          /* guards everything below */
    vl_graph_t *graph;             /* borrowed; may be NULL (tests) */
    size_t ctx_size;               /* bytes of ctx per inode */
    size_t lru_limit;              /* max inodes on lru */
    struct vl_ilist active;        /* refs > 0 */
    struct vl_ilist lru;           /* refs == 0, linked */
    struct vl__inode *root;        /* the table's own ref on root */
    struct vl__inode **buckets;    /* owned; n_buckets hash chains */
    size_t n_buckets;              /* a power of two */
    size_t n_hashed;               /* linked inodes (in the hash) */
};


static inline struct vl__inode *
vl_ino(vl_inode_t *inode)
{
    return (struct vl__inode *)inode;
}


static void
vl_ilist_add(struct vl_ilist *l, struct vl__inode *ino)
{
    ino->next = NULL;
    ino->prev = l->tail;
    if (l->tail != NULL)
        l->tail->next = ino;
    else
        l->head = ino;
    l->tail = ino;
    l->n++;
}


static void
vl_ilist_del(struct vl_ilist *l, struct vl__inode *ino)
{
    if (ino->prev != NULL)
        ino->prev->next = ino->next;
    else
        l->head = ino->next;
    if (ino->next != NULL)
        ino->next->prev = ino->prev;
    else
        l->tail = ino->prev;
    ino->prev = ino->next = NULL;
    l->n--;
}


static uint64_t
vl_gfid_hash(const vl_gfid_t *gfid)
{
    uint64_t h;

    /* GFIDs are random (v4 UUIDs): their first bytes hash well enough. The
     * root's are zero, which is fine for one object. */
    memcpy(&h, gfid->bytes + 8, sizeof(h));
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 32;
    return h;
}


static size_t
vl_gfid_bucket(const vl_inode_table_t *t, const vl_gfid_t *gfid)
{
    return (size_t)(vl_gfid_hash(gfid) & (t->n_buckets - 1));
}


/* Doubles the buckets once chains average VL_ITABLE_LOAD inodes. On
 * ENOMEM the table keeps its size: slower, not wrong. */
static void
vl_hash_grow_locked(vl_inode_table_t *t)
{
    size_t n = t->n_buckets * 2;
    struct vl__inode **buckets;

    if (t->n_hashed <= t->n_buckets * VL_ITABLE_LOAD
        || n > VL_ITABLE_BUCKETS_MAX)
        return;
    buckets = vl_calloc(NULL, n, sizeof(*buckets), VL_MT_INODE);
    if (buckets == NULL)
        return;
    for (size_t i = 0; i < t->n_buckets; i++) {
        struct vl__inode *ino = t->buckets[i];

        while (ino != NULL) {
            struct vl__inode *next = ino->hnext;
            size_t b = (size_t)(vl_gfid_hash(&ino->pub.gfid) & (n - 1));

            ino->hnext = buckets[b];
            buckets[b] = ino;
            ino = next;
        }
    }
    vl_free(t->buckets);
    t->buckets = buckets;
    t->n_buckets = n;
}


static struct vl__inode *
vl_hash_find_locked(vl_inode_table_t *t, const vl_gfid_t *gfid)
{
    struct vl__inode *ino;

    for (ino = t->buckets[vl_gfid_bucket(t, gfid)]; ino != NULL;
         ino = ino->hnext)
        if (vl_gfid_equal(&ino->pub.gfid, gfid))
            return ino;
    return NULL;
}


static void
vl_hash_del_locked(vl_inode_table_t *t, struct vl__inode *ino)
{
    struct vl__inode **pp = &t->buckets[vl_gfid_bucket(t, &ino->pub.gfid)];

    for (; *pp != NULL; pp = &(*pp)->hnext) {
        if (*pp == ino) {
            *pp = ino->hnext;
            t->n_hashed--;
            break;
        }
    }
    ino->hnext = NULL;
    ino->is_linked = false;
}


static void
vl_hash_add_locked(vl_inode_table_t *t, struct vl__inode *ino)
{
    size_t b = vl_gfid_bucket(t, &ino->pub.gfid);

    ino->hnext = t->buckets[b];
    t->buckets[b] = ino;
    ino->is_linked = true;
    t->n_hashed++;
    vl_hash_grow_locked(t);
}


/* Takes a ref, moving the inode from the lru to the active list. */
static void
vl_ref_locked(vl_inode_table_t *t, struct vl__inode *ino)
{
    if (ino->refs++ == 0) {
        vl_ilist_del(&t->lru, ino);
        vl_ilist_add(&t->active, ino);
    }
}


/* Runs forget hooks and frees an inode that left the table. */
static void
vl_inode_destroy(vl_inode_table_t *t, struct vl__inode *ino)
{
    vl_graph_t *graph = t->graph;
    size_t i;

    if (graph != NULL) {
        for (i = graph->n_xls; i-- > 0;) {
            vl_xlator_t *xl = graph->xls[i];

            if (xl->cls->forget != NULL)
                xl->cls->forget(xl, &ino->pub);
        }
    }
    pthread_mutex_destroy(&ino->pub.lock);
    vl_free(ino);
}


vl_inode_table_t *
vl_inode_table_new(struct vl_graph *graph, size_t ctx_size, size_t lru_limit)
{
    vl_inode_table_t *t;
    vl_inode_t *root;

    t = vl_calloc(NULL, 1, sizeof(*t), VL_MT_INODE);
    if (t == NULL)
        return NULL;
    t->buckets = vl_calloc(NULL, VL_ITABLE_BUCKETS, sizeof(*t->buckets),
                           VL_MT_INODE);
    if (t->buckets == NULL) {
        vl_free(t);
        return NULL;
    }
    t->n_buckets = VL_ITABLE_BUCKETS;
    if (pthread_mutex_init(&t->lock, NULL) != 0) {
        vl_free(t->buckets);
        vl_free(t);
        return NULL;
    }
    t->graph = graph;
    t->ctx_size = VL__ALIGN_UP(ctx_size);
    t->lru_limit = lru_limit;
    root = vl_inode_get(t, &vl_gfid_root, S_IFDIR);
    if (root == NULL) {
        pthread_mutex_destroy(&t->lock);
        vl_free(t->buckets);
        vl_free(t);
        return NULL;
    }
    t->root = vl_ino(root);
    return t;
}


vl_graph_t *
vl__inode_table_graph(vl_inode_table_t *table)
{
    return table->graph;
}


void
vl_inode_table_free(vl_inode_table_t *table)
{
    struct vl__inode *ino;
    size_t leaked;

    if (table == NULL)
        return;
    vl_inode_unref(&table->root->pub);
    pthread_mutex_lock(&table->lock);
    while ((ino = table->lru.head) != NULL) {
        vl_ilist_del(&table->lru, ino);
        vl_hash_del_locked(table, ino);
        pthread_mutex_unlock(&table->lock);
        vl_inode_destroy(table, ino);
        pthread_mutex_lock(&table->lock);
    }
    leaked = table->active.n;
    pthread_mutex_unlock(&table->lock);
    if (leaked > 0) {
        /* Someone still holds refs: freeing would turn their bug into a
         * use-after-free, so leak the inodes (and the table) loudly. */
        vl_glog("inode", VL_LOG_ERROR,
                "inode table freed with %zu referenced inodes; leaking them",
                leaked);
        return;
    }
    pthread_mutex_destroy(&table->lock);
    vl_free(table->buckets);
    vl_free(table);
}


vl_inode_t *
vl_inode_table_root(vl_inode_table_t *table)
{
    return vl_inode_ref(&table->root->pub);
}


size_t
vl_inode_table_active(vl_inode_table_t *table)
{
    size_t n;

    pthread_mutex_lock(&table->lock);
    n = table->active.n;
    pthread_mutex_unlock(&table->lock);
    return n;
}


size_t
vl_inode_table_buckets(vl_inode_table_t *table)
{
    size_t n;

    pthread_mutex_lock(&table->lock);
    n = table->n_buckets;
    pthread_mutex_unlock(&table->lock);
    return n;
}


size_t
vl_inode_table_lru(vl_inode_table_t *table)
{
    size_t n;

    pthread_mutex_lock(&table->lock);
    n = table->lru.n;
    pthread_mutex_unlock(&table->lock);
    return n;
}


vl_inode_t *
vl_inode_new(vl_inode_table_t *table)
{
    struct vl__inode *ino;

    ino = vl_calloc(NULL, 1, sizeof(*ino) + table->ctx_size, VL_MT_INODE);
    if (ino == NULL)
        return NULL;
    if (pthread_mutex_init(&ino->pub.lock, NULL) != 0) {
        vl_free(ino);
        return NULL;
    }
    ino->pub.table = table;
    ino->refs = 1;
    pthread_mutex_lock(&table->lock);
    vl_ilist_add(&table->active, ino);
    pthread_mutex_unlock(&table->lock);
    return &ino->pub;
}


vl_inode_t *
vl_inode_find(vl_inode_table_t *table, const vl_gfid_t *gfid)
{
    struct vl__inode *ino;

    pthread_mutex_lock(&table->lock);
    ino = vl_hash_find_locked(table, gfid);
    if (ino != NULL)
        vl_ref_locked(table, ino);
    pthread_mutex_unlock(&table->lock);
    return ino != NULL ? &ino->pub : NULL;
}


vl_inode_t *
vl_inode_get(vl_inode_table_t *table, const vl_gfid_t *gfid, uint32_t type)
{
    struct vl_iatt iatt = {.gfid = *gfid, .mode = type};
    vl_inode_t *inode;
    vl_inode_t *linked;

    inode = vl_inode_find(table, gfid);
    if (inode != NULL)
        return inode;
    inode = vl_inode_new(table);
    if (inode == NULL)
        return NULL;
    linked = vl_inode_link(inode, &iatt);
    vl_inode_unref(inode);
    return linked;
}


vl_inode_t *
vl_inode_link(vl_inode_t *inode, const struct vl_iatt *iatt)
{
    vl_inode_table_t *t = inode->table;
    struct vl__inode *ino = vl_ino(inode);
    struct vl__inode *other;
    uint32_t type = iatt->mode & S_IFMT;

    if (vl_gfid_is_null(&iatt->gfid))
        return NULL;
    pthread_mutex_lock(&t->lock);
    other = vl_hash_find_locked(t, &iatt->gfid);
    if (other != NULL) {
        /* Already known (possibly this very inode): hand that one out. */
        vl_ref_locked(t, other);
        if (other->pub.type == 0)
            other->pub.type = type;
        pthread_mutex_unlock(&t->lock);
        return &other->pub;
    }
    if (ino->is_linked || !vl_gfid_is_null(&inode->gfid)) {
        char a[VL_GFID_STR_LEN];
        char b[VL_GFID_STR_LEN];

        pthread_mutex_unlock(&t->lock);
        vl_glog("inode", VL_LOG_ERROR, "cannot relink inode %s as %s",
                vl_gfid_to_str(&inode->gfid, a),
                vl_gfid_to_str(&iatt->gfid, b));
        return NULL;
    }
    inode->gfid = iatt->gfid;
    if (type != 0)
        inode->type = type;
    vl_hash_add_locked(t, ino);
    ino->refs++; /* the caller holds one, so it is on the active list */
    pthread_mutex_unlock(&t->lock);
    return inode;
}


void
vl_inode_unlink(vl_inode_t *inode)
{
    vl_inode_table_t *t = inode->table;
    struct vl__inode *ino = vl_ino(inode);
    bool is_dead = false;

    pthread_mutex_lock(&t->lock);
    if (ino->is_linked) {
        vl_hash_del_locked(t, ino);
        if (ino->refs == 0) {
            vl_ilist_del(&t->lru, ino);
            is_dead = true;
        }
    }
    pthread_mutex_unlock(&t->lock);
    if (is_dead)
        vl_inode_destroy(t, ino);
}


vl_inode_t *
vl_inode_ref(vl_inode_t *inode)
{
    vl_inode_table_t *t = inode->table;

    pthread_mutex_lock(&t->lock);
    vl_ref_locked(t, vl_ino(inode));
    pthread_mutex_unlock(&t->lock);
    return inode;
}


/* Takes the oldest unreferenced inodes off the table until the LRU fits
 * lru_limit; returns them chained through hnext in front of dead, to be
 * destroyed once the lock is dropped (forget hooks must not run under
 * it). */
static struct vl__inode *
vl_lru_trim_locked(vl_inode_table_t *t, struct vl__inode *dead)
{
    struct vl__inode *victim;

    while (t->lru.n > t->lru_limit) {
        victim = t->lru.head;
        vl_ilist_del(&t->lru, victim);
        vl_hash_del_locked(t, victim);
        victim->hnext = dead;
        dead = victim;
    }
    return dead;
}


static void
vl_inodes_destroy(vl_inode_table_t *t, struct vl__inode *dead)
{
    struct vl__inode *victim;

    while (dead != NULL) {
        victim = dead;
        dead = dead->hnext;
        vl_inode_destroy(t, victim);
    }
}


void
vl_inode_unref(vl_inode_t *inode)
{
    vl_inode_table_t *t;
    struct vl__inode *ino = vl_ino(inode);
    struct vl__inode *dead = NULL; /* chain through hnext */

    if (inode == NULL)
        return;
    t = inode->table;
    pthread_mutex_lock(&t->lock);
    if (ino->refs == 0) {
        pthread_mutex_unlock(&t->lock);
        vl_glog("inode", VL_LOG_CRITICAL, "unref of inode with no refs");
        abort();
    }
    if (--ino->refs == 0) {
        vl_ilist_del(&t->active, ino);
        if (ino->is_linked) {
            vl_ilist_add(&t->lru, ino);
        } else {
            ino->hnext = dead;
            dead = ino;
        }
        dead = vl_lru_trim_locked(t, dead);
    }
    pthread_mutex_unlock(&t->lock);
    vl_inodes_destroy(t, dead);
}


void
vl_inode_table_set_lru_limit(vl_inode_table_t *table, size_t lru_limit)
{
    struct vl__inode *dead;

    pthread_mutex_lock(&table->lock);
    table->lru_limit = lru_limit;
    dead = vl_lru_trim_locked(table, NULL);
    pthread_mutex_unlock(&table->lock);
    vl_inodes_destroy(table, dead);
}


size_t
vl_inode_table_lru_limit(vl_inode_table_t *table)
{
    size_t n;

    pthread_mutex_lock(&table->lock);
    n = table->lru_limit;
    pthread_mutex_unlock(&table->lock);
    return n;
}


void *
vl_inode_ctx(vl_inode_t *inode, struct vl_xlator *xl)
{
    if (xl->cls->inode_ctx_size == 0)
        return NULL;
    return vl_ino(inode)->ctx + xl->inode_ctx_off;
}
