/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-test: a graph of cluster/distribute over storage/posix bricks
 * (mkdtemp directories; four unless dt_setup_bricks asks for more) and
 * blocking helpers calling through distribute with vl_sync_call, plus
 * checks of what landed on each brick's disk.
 */
#ifndef MORTAR_DIST_TEST_H
#define MORTAR_DIST_TEST_H

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cmocka.h>

#include "vol/vol.h"

#define DT_BRICKS 4

struct dt {
    char base[64];             /* mkdtemp directory holding b0..b<n-1> */
    int n_bricks;              /* bricks, subvolumes of distribute */
    char extra[256];           /* extra option lines for distribute */
    vl_loop_t *loop;           /* 0 threads */
    vl_graph_t *graph;         /* owned */
    vl_xlator_t *dist;         /* the distribute translator (top) */
    vl_inode_t *root;          /* ref on the root inode */
    struct vl_caller caller;   /* root */
    bool with_locks;           /* features/locks over each brick's posix */
};

int dt_setup(void **state);
/* dt_setup with n_bricks bricks (b0..b<n_bricks-1>) and extra option
 * lines for distribute ("option k v\n", as dt_reopen). */
int dt_setup_bricks(void **state, int n_bricks, const char *extra);
/* dt_setup_bricks with features/locks "b<i>" over each storage/posix
 * "b<i>-store" (the test registers xl_features_locks first). */
int dt_setup_locked(void **state, int n_bricks, const char *extra);
int dt_teardown(void **state);
/* Closes and reopens the graph (fresh inode table, nothing cached). */
void dt_restart(struct dt *t);
/* Reopens with extra distribute option lines ("option k v\n"). */
void dt_reopen(struct dt *t, const char *extra);

int dt_call(struct dt *t, vl_fop_t op, union vl_fop_args *a,
            struct vl_reply *r);
int dt_lookup(struct dt *t, vl_inode_t *parent, const char *name,
              struct vl_iatt *iatt, vl_inode_t **out);
int dt_mkdir(struct dt *t, vl_inode_t *parent, const char *name,
             vl_inode_t **out);
int dt_create(struct dt *t, vl_inode_t *parent, const char *name,
              vl_inode_t **out, vl_fd_t **fd_out);
int dt_open(struct dt *t, vl_inode_t *inode, int flags, vl_fd_t **fd_out);
int dt_write(struct dt *t, vl_fd_t *fd, off_t off, const char *data);
/* Reads into buf (NUL-terminated); bytes read or -errno. */
ssize_t dt_read(struct dt *t, vl_fd_t *fd, off_t off, char *buf,
                size_t len);
int dt_unlink(struct dt *t, vl_inode_t *parent, const char *name);
int dt_rmdir(struct dt *t, vl_inode_t *parent, const char *name);
int dt_rename(struct dt *t, vl_inode_t *op, const char *on,
              vl_inode_t *inode, vl_inode_t *np, const char *nn);
/* Lists a directory through distribute; names get strdup'ed into names
 * (up to max), returns the count (without . and ..) or -errno. */
ssize_t dt_readdir_all(struct dt *t, vl_inode_t *dir, size_t budget,
                       bool plus, char **names, size_t max);
/* The same on a new fd from cookie off on; offs (may be NULL) gets each
 * stored name's cookie. */
ssize_t dt_readdir_from(struct dt *t, vl_inode_t *dir, off_t off,
                        size_t budget, bool plus, char **names, off_t *offs,
                        size_t max);

/* Disk checks: path of rel on brick i. */
void dt_path(struct dt *t, int brick, const char *rel, char *buf,
             size_t len);
bool dt_exists(struct dt *t, int brick, const char *rel, mode_t *mode);
/* Which brick the name hashes to in a default 4-way layout. */
int dt_hashed(const char *name);
/* A name that hashes to brick want (prefix + counter). */
void dt_name_on(int want, const char *prefix, char *buf, size_t len);

#endif /* MORTAR_DIST_TEST_H */
