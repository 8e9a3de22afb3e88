/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inode: in-memory objects keyed by GFID, one table per graph.
 *
 * An inode is "linked" once its GFID is known (it is then in the table's
 * hash and found by vl_inode_find); a fresh inode from vl_inode_new has a
 * null GFID until vl_inode_link. Inodes are refcounted. A linked inode whose
 * last ref is dropped stays in the table's LRU list (so brick-side caches
 * such as posix's open handles survive) until the LRU exceeds lru_limit;
 * then the oldest are forgotten: every translator's forget() runs and the
 * inode is freed. An unlinked inode is freed at its last unref.
 *
 * Each translator of the graph gets cls->inode_ctx_size zeroed bytes in
 * every inode (vl_inode_ctx); inode->lock guards them unless the translator
 * documents otherwise.
 */
#ifndef VOL_INODE_H
#define VOL_INODE_H

#include <pthread.h>
#include <stdint.h>

#include "vol/common.h"

struct vl_xlator;
struct vl_graph;

typedef struct vl_inode_table vl_inode_table_t;

typedef struct vl_inode {
    vl_gfid_t gfid;           /* null until linked; then immutable */
    uint32_t type;            /* S_IFMT bits once known, else 0 */
    vl_inode_table_t *table;  /* borrowed; the owning table */
    pthread_mutex_t lock;     /* guards translators' ctx areas */
    /* The table's private fields (refs, hash and LRU links) and the ctx
     * areas follow; use the functions below. */
} vl_inode_t;

/* ctx_size is the total bytes of per-inode areas (graphs compute it). */
vl_inode_table_t *vl_inode_table_new(struct vl_graph *graph, size_t ctx_size,
                                     size_t lru_limit);
/* Forgets every inode; all refs must have been dropped. */
void vl_inode_table_free(vl_inode_table_t *table);
vl_inode_t *vl_inode_table_root(vl_inode_table_t *table); /* new ref */
/* Counts for statedump and tests. */
size_t vl_inode_table_active(vl_inode_table_t *table); /* with refs */
/* (The table itself holds a ref on the root inode until it is freed, so
 * the root is always counted as active.) */
size_t vl_inode_table_lru(vl_inode_table_t *table);    /* unref'd, cached */
size_t vl_inode_table_buckets(vl_inode_table_t *table); /* hash chains */
/* The most unreferenced inodes kept (network.inode-lru-limit); lowering
 * it forgets the oldest at once. Any thread. */
void vl_inode_table_set_lru_limit(vl_inode_table_t *table,
                                  size_t lru_limit);
size_t vl_inode_table_lru_limit(vl_inode_table_t *table);

/* A fresh, unlinked inode with one ref; NULL on ENOMEM. */
vl_inode_t *vl_inode_new(vl_inode_table_t *table);
/* The linked inode with this GFID with a new ref, or NULL. */
vl_inode_t *vl_inode_find(vl_inode_table_t *table, const vl_gfid_t *gfid);
/* Find or create-and-link the inode for gfid (type may be 0 if unknown);
 * new ref, NULL on ENOMEM. Bricks use this to map wire GFIDs. */
vl_inode_t *vl_inode_get(vl_inode_table_t *table, const vl_gfid_t *gfid,
                         uint32_t type);
/* Links inode under iatt->gfid and records its type. If another inode
 * already has that GFID, returns that one instead. Either way the result
 * carries a new ref; the caller still owns its ref on inode. */
vl_inode_t *vl_inode_link(vl_inode_t *inode, const struct vl_iatt *iatt);
/* Removes the inode from the GFID hash (the object is gone for good). */
void vl_inode_unlink(vl_inode_t *inode);

vl_inode_t *vl_inode_ref(vl_inode_t *inode);
void vl_inode_unref(vl_inode_t *inode); /* NULL is allowed */

/* The area reserved for xl in this inode (cls->inode_ctx_size bytes,
 * zeroed at creation), or NULL if the class reserved none. */
void *vl_inode_ctx(vl_inode_t *inode, struct vl_xlator *xl);

#endif /* VOL_INODE_H */
