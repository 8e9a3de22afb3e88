/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix-test: a one-translator graph (storage/posix on a mkdtemp brick)
 * and blocking helpers that call its fops through vl_sync_call. The
 * translator answers inline, so the helpers work from the test thread.
 */
#ifndef MORTAR_POSIX_TEST_H
#define MORTAR_POSIX_TEST_H

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "vol/vol.h"

struct pt {
    char brick[64];          /* the brick directory (removed at teardown) */
    vl_loop_t *loop;         /* 0 threads: nothing runs on it */
    vl_graph_t *graph;       /* owned */
    vl_xlator_t *xl;         /* the posix translator (graph top) */
    vl_inode_t *root;        /* ref on the root inode */
    struct vl_caller caller; /* identity used by the helpers */
};

int pt_setup(void **state);
int pt_teardown(void **state);
/* Builds a graph over brick with extra volfile option lines; 0 or the
 * init/build error (err filled). */
int pt_graph_open(struct pt *t, const char *extra_opts, vl_err_t *err);
void pt_graph_close(struct pt *t);
/* Closes and reopens the graph: a fresh inode table, no cached fds. */
void pt_restart(struct pt *t);

int pt_call(struct pt *t, vl_fop_t op, union vl_fop_args *args,
            struct vl_reply *reply /* OUT, cleared by the caller */);
/* Entry helpers; *out (if not NULL) gets a linked inode ref. */
int pt_lookup(struct pt *t, vl_inode_t *parent, const char *name,
              struct vl_iatt *iatt, vl_inode_t **out);
int pt_lookup_gfid(struct pt *t, const vl_gfid_t *gfid, struct vl_iatt *iatt,
                   vl_inode_t **out);
int pt_mkdir(struct pt *t, vl_inode_t *parent, const char *name,
             uint32_t mode, vl_inode_t **out);
int pt_create(struct pt *t, vl_inode_t *parent, const char *name,
              int flags, uint32_t mode, vl_inode_t **out, vl_fd_t **fd_out);
int pt_open(struct pt *t, vl_inode_t *inode, int flags, vl_fd_t **fd_out);
int pt_write(struct pt *t, vl_fd_t *fd, off_t off, const void *data,
             size_t len, uint32_t flags);
/* Reads into out (len bytes max); returns bytes read or -errno. */
ssize_t pt_read(struct pt *t, vl_fd_t *fd, off_t off, void *out, size_t len);
int pt_unlink(struct pt *t, vl_inode_t *parent, const char *name);
int pt_rename(struct pt *t, vl_inode_t *op, const char *on, vl_inode_t *np,
              const char *nn, uint32_t flags, struct vl_iatt *iatt);
int pt_stat(struct pt *t, vl_inode_t *inode, struct vl_iatt *iatt);
/* Reads the GFID xattr of brick-relative path rel (0 or -errno). */
int pt_disk_gfid(struct pt *t, const char *rel, vl_gfid_t *out);
/* The brick-relative handle path of gfid. */
void pt_handle_path(const vl_gfid_t *gfid, char *buf, size_t len);
/* Does the heal index hold an entry for gfid (.mortar/index/xattrop)? */
bool pt_index_has(struct pt *t, const vl_gfid_t *gfid);

/* Test lists of the other files. */
extern const struct CMUnitTest pt_ns_tests[];
extern const size_t pt_n_ns_tests;
extern const struct CMUnitTest pt_create_tests[];
extern const size_t pt_n_create_tests;
extern const struct CMUnitTest pt_janitor_tests[];
extern const size_t pt_n_janitor_tests;

#endif /* MORTAR_POSIX_TEST_H */
