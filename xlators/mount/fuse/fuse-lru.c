/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-lru: the nodes the kernel holds, bounded (the lru-limit mount
 * option, as GlusterFS's fuse bridge has it).
 *
 * The kernel keeps a looked-up inode, and so our node and the graph's
 * inode under it, until it forgets it, which on a machine with memory to
 * spare is never: a `find` over a million files would leave a million
 * nodes and inodes in the client (about 700 bytes each). The inode
 * table's LRU (network.inode-lru-limit) cannot help: these inodes are
 * referenced. So once more than lru-limit nodes are alive, the least
 * recently looked-up ones are named to the kernel with
 * FUSE_NOTIFY_INVAL_ENTRY (through the name hints, fuse-hint.c); the
 * kernel drops those entries and, for an inode nothing else holds (an
 * open file, a working directory, an mmap), sends FORGET, which frees the
 * node. A node is asked for once (VFUSE_NODE_EVICTING) until it is looked
 * up again or forgotten, and moved to the front meanwhile, so a node the
 * kernel keeps does not stop the ones behind it. A node with no name hint
 * left cannot be named: it is counted (lru_unnamed) and passed over. Each
 * round asks for what is over the limit plus 1/32 of it, so the requests
 * come in batches rather than one per lookup.
 *
 * Threads: the reader that remembered a node; t->lock, then the
 * notifier's lock (vfuse_notify_entry_locked).
 */
#include "config.h"

#include <stdio.h>

#include "fuse.h"

#define VFUSE_LRU_BATCH_MAX 4096 /* names asked for per round */


static uint64_t
vfuse_lru_parent_locked(struct vfuse_table *t, const vl_gfid_t *gfid)
{
    if (vl_gfid_is_root(gfid))
        return FUSE_ROOT_ID;
    return (uint64_t)(uintptr_t)vfuse_node_find_locked(t, gfid);
}


size_t
vfuse_lru_pick_locked(struct vfuse_table *t,
                      void (*name_fn)(void *arg, uint64_t parent,
                                      const char *name),
                      void *arg)
{
    size_t held, want, picked = 0, scanned = 0, n = t->n_nodes;
    struct vfuse_link *l, *prev;

    held = t->n_nodes - t->n_evicting;
    if (t->max_nodes == 0 || held <= t->max_nodes)
        return 0;
    want = held - t->max_nodes + t->max_nodes / 32;
    if (want > VFUSE_LRU_BATCH_MAX)
        want = VFUSE_LRU_BATCH_MAX;
    for (l = t->nodes.prev; l != &t->nodes && picked < want && scanned < n;
         l = prev) {
        struct vfuse_node *node = VFUSE_CONTAINER(l, struct vfuse_node, link);
        bool is_named = false;

        prev = l->prev;
        scanned++;
        if (node->flags & VFUSE_NODE_EVICTING)
            continue;
        for (struct vfuse_link *h = node->hints.next; h != &node->hints;
             h = h->next) {
            struct vfuse_hint *hint =
                VFUSE_CONTAINER(h, struct vfuse_hint, by_node);
            uint64_t parent = vfuse_lru_parent_locked(t, &hint->parent);

            if (parent == 0)
                continue;
            name_fn(arg, parent, hint->name);
            is_named = true;
        }
        if (is_named) {
            node->flags |= VFUSE_NODE_EVICTING;
            t->n_evicting++;
            t->n_evicted++;
            picked++;
        } else {
            t->n_unnamed++;
        }
        /* Out of the way of the next round either way. */
        vfuse_list_del(&node->link);
        vfuse_list_add(&t->nodes, &node->link);
    }
    return picked;
}


static void
vfuse_lru_inval(void *arg, uint64_t parent, const char *name)
{
    vfuse_notify_entry_locked(arg, parent, name);
}


void
vfuse_lru_trim(struct vfuse_session *sess)
{
    struct vfuse_table *t = &sess->table;

    pthread_mutex_lock(&t->lock);
    (void)vfuse_lru_pick_locked(t, vfuse_lru_inval, sess);
    pthread_mutex_unlock(&t->lock);
}


void
vfuse_lru_dump(struct vfuse_table *t, FILE *out)
{
    pthread_mutex_lock(&t->lock);
    fprintf(out, "lru_limit=%zu\nlru_evicting=%zu\nlru_evicted=%llu\n"
            "lru_unnamed=%llu\n", t->max_nodes, t->n_evicting,
            (unsigned long long)t->n_evicted,
            (unsigned long long)t->n_unnamed);
    pthread_mutex_unlock(&t->lock);
}


void
vfuse_lru_set_limit(struct vfuse_table *t, size_t max_nodes)
{
    pthread_mutex_lock(&t->lock);
    t->max_nodes = max_nodes;
    /* Every node held should keep a name to be dropped by. */
    if (max_nodes + max_nodes / 4 > t->max_hints)
        t->max_hints = max_nodes + max_nodes / 4;
    pthread_mutex_unlock(&t->lock);
}
