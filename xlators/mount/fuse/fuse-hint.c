/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-hint: a bounded session map (parent GFID, name) -> node, so that
 * UNLINK, RMDIR and RENAME, which FUSE sends as parent + name only, can
 * carry the object's inode (loc->inode) down without a LOOKUP. With it,
 * distribute goes to the brick that holds the file instead of asking
 * every brick. A LOOKUP of a name last seen as a directory carries its
 * GFID as lookup.dir_hint (vfuse_hint_peek_dir), so that distribute asks
 * every brick at once instead of the name's hashed one first.
 *
 * Filled from entry replies (LOOKUP, CREATE, MKNOD, MKDIR, SYMLINK, LINK,
 * READDIRPLUS entries); a hint is dropped when its name is unlinked,
 * removed or renamed (either side), when its node is freed (FORGET), and
 * the oldest goes when there are more than max. A hint only ever points
 * at a live node of the session table (the node frees its hints), and it
 * gives an inode only when the node's inode is of the asking call's
 * graph, so graph switches need no care here.
 *
 * A hint is only a hint: another client may have renamed or replaced the
 * name since. The layers below treat loc->inode of UNLINK/RMDIR/RENAME as
 * such (posix removes by parent + name; distribute falls back to every
 * brick when the hinted one answers ENOENT).
 *
 * Threads: every function runs under t->lock (taken here, or held by the
 * caller for the _locked one).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "fuse.h"

#define VFUSE_HINT_BUCKETS 16384


int
vfuse_hint_init(struct vfuse_table *t, size_t max)
{
    t->hint_hash = vl_calloc(NULL, VFUSE_HINT_BUCKETS,
                             sizeof(*t->hint_hash), VL_MT_MISC);
    if (t->hint_hash == NULL)
        return -ENOMEM;
    t->n_hint_buckets = VFUSE_HINT_BUCKETS;
    t->n_hints = 0;
    t->max_hints = max != 0 ? max : VFUSE_HINT_MAX;
    vfuse_list_init(&t->hint_age);
    return 0;
}


/* Called after every node (and so every hint) is freed. */
void
vfuse_hint_fini(struct vfuse_table *t)
{
    vl_free(t->hint_hash);
    t->hint_hash = NULL;
}


static size_t
vfuse_hint_bucket(const struct vfuse_table *t, const vl_gfid_t *parent,
                  const char *name)
{
    /* FNV-1a over the parent's 16 bytes and the name. */
    uint64_t h = 1469598103934665603ULL;

    for (size_t i = 0; i < sizeof(parent->bytes); i++)
        h = (h ^ parent->bytes[i]) * 1099511628211ULL;
    for (const char *p = name; *p != '\0'; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return (size_t)(h % t->n_hint_buckets);
}


static struct vfuse_hint **
vfuse_hint_find_locked(struct vfuse_table *t, const vl_gfid_t *parent,
                       const char *name, size_t name_len)
{
    struct vfuse_hint **pp = &t->hint_hash[vfuse_hint_bucket(t, parent,
                                                             name)];

    for (; *pp != NULL; pp = &(*pp)->hnext) {
        struct vfuse_hint *h = *pp;

        if (h->name_len == name_len && vl_gfid_equal(&h->parent, parent)
            && memcmp(h->name, name, name_len) == 0)
            break;
    }
    return pp;
}


/* Unhashes and frees the hint at *pp. */
static void
vfuse_hint_free_at_locked(struct vfuse_table *t, struct vfuse_hint **pp)
{
    struct vfuse_hint *h = *pp;

    *pp = h->hnext;
    vfuse_list_del(&h->age);
    vfuse_list_del(&h->by_node);
    t->n_hints--;
    vl_free(h);
}


static void
vfuse_hint_free_locked(struct vfuse_table *t, struct vfuse_hint *h)
{
    struct vfuse_hint **pp = vfuse_hint_find_locked(t, &h->parent, h->name,
                                                    h->name_len);

    if (*pp == h)
        vfuse_hint_free_at_locked(t, pp);
}


static void
vfuse_hint_add_locked(struct vfuse_table *t, const vl_gfid_t *parent,
                      const char *name, struct vfuse_node *node)
{
    size_t name_len = strlen(name);
    struct vfuse_hint **pp;
    struct vfuse_hint *h;

    pp = vfuse_hint_find_locked(t, parent, name, name_len);
    h = *pp;
    if (h != NULL) {
        /* Known name: it may name another object now; make it newest. */
        vfuse_list_del(&h->by_node);
        vfuse_list_del(&h->age);
    } else {
        h = vl_malloc(NULL, sizeof(*h) + name_len + 1, VL_MT_MISC);
        if (h == NULL)
            return; /* a missing hint costs a fan-out, nothing more */
        h->parent = *parent;
        h->name_len = name_len;
        memcpy(h->name, name, name_len + 1);
        h->hnext = NULL;
        *pp = h;
        t->n_hints++;
    }
    h->node = node;
    vfuse_list_add(&node->hints, &h->by_node);
    vfuse_list_add(&t->hint_age, &h->age);
    while (t->n_hints > t->max_hints)
        vfuse_hint_free_locked(t, VFUSE_CONTAINER(t->hint_age.prev,
                                                  struct vfuse_hint, age));
}


void
vfuse_hint_add(struct vfuse_table *t, const vl_gfid_t *parent,
               const char *name, uint64_t nodeid)
{
    if (nodeid == 0 || nodeid == FUSE_ROOT_ID || name == NULL
        || vfuse_is_dot_or_dotdot(name))
        return;
    pthread_mutex_lock(&t->lock);
    vfuse_hint_add_locked(t, parent, name,
                          (struct vfuse_node *)(uintptr_t)nodeid);
    pthread_mutex_unlock(&t->lock);
}


void
vfuse_hint_add_gfid(struct vfuse_table *t, const vl_gfid_t *parent,
                    const char *name, const vl_gfid_t *gfid)
{
    struct vfuse_node *node;

    if (name == NULL || vfuse_is_dot_or_dotdot(name))
        return;
    pthread_mutex_lock(&t->lock);
    node = vfuse_node_find_locked(t, gfid);
    if (node != NULL)
        vfuse_hint_add_locked(t, parent, name, node);
    pthread_mutex_unlock(&t->lock);
}


vl_inode_t *
vfuse_hint_take(struct vfuse_table *t, const vl_gfid_t *parent,
                const char *name, uint64_t gen)
{
    vl_inode_t *inode = NULL;
    struct vfuse_hint **pp;

    if (name == NULL)
        return NULL;
    pthread_mutex_lock(&t->lock);
    pp = vfuse_hint_find_locked(t, parent, name, strlen(name));
    if (*pp != NULL) {
        struct vfuse_node *node = (*pp)->node;

        /* Only an inode of the caller's graph: one of an older graph (or
         * none) would need a lookup, which is what the hint saves. */
        if (node->inode != NULL && node->gen == gen)
            inode = vl_inode_ref(node->inode);
        vfuse_hint_free_at_locked(t, pp);
    }
    pthread_mutex_unlock(&t->lock);
    return inode;
}


bool
vfuse_hint_peek_dir(struct vfuse_table *t, const vl_gfid_t *parent,
                    const char *name, vl_gfid_t *out)
{
    struct vfuse_hint **pp;
    bool is_dir = false;

    if (name == NULL)
        return false;
    pthread_mutex_lock(&t->lock);
    pp = vfuse_hint_find_locked(t, parent, name, strlen(name));
    if (*pp != NULL && S_ISDIR((*pp)->node->type)) {
        *out = (*pp)->node->gfid;
        is_dir = true;
    }
    pthread_mutex_unlock(&t->lock);
    return is_dir;
}


void
vfuse_hint_drop_node_locked(struct vfuse_table *t, struct vfuse_node *node)
{
    while (node->hints.next != &node->hints)
        vfuse_hint_free_locked(t, VFUSE_CONTAINER(node->hints.next,
                                                  struct vfuse_hint,
                                                  by_node));
}


size_t
vfuse_hint_count(struct vfuse_table *t)
{
    size_t n;

    pthread_mutex_lock(&t->lock);
    n = t->n_hints;
    pthread_mutex_unlock(&t->lock);
    return n;
}
