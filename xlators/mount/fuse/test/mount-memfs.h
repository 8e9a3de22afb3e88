/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mount-memfs: what the real-mount tests (test-fuse-mount,
 * test-fuse-readers) share: "test/memfs", a tiny in-test leaf that serves
 * from memory a root directory holding one file (plus a few files created
 * through the mount), "test/memfs-down", a leaf that never comes up and
 * says why, and the harness that mounts mount/fuse over a leaf on a
 * mkdtemp directory with its own event loop. Mounting needs root and
 * /dev/fuse (mount_can_mount); the tests skip otherwise.
 */
#ifndef FUSE_TEST_MOUNT_MEMFS_H
#define FUSE_TEST_MOUNT_MEMFS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "vol/vol.h"

/* The content of memfs's one file, "hello". */
#define MEM_DATA "hello, mortar\n"

extern const vl_gfid_t mount_mem_file_gfid;   /* "hello"'s GFID */
/* What memfs answers to FLUSH and FSYNC (of files and directories): 0
 * unless a test sets an error. */
extern atomic_int mount_mem_flush_status;
extern atomic_int mount_mem_fsync_status;
extern const vl_xlator_class_t mount_memfs_class; /* "test/memfs" */
extern const vl_xlator_class_t mount_down_class;  /* "test/memfs-down" */

/* One mount of the bridge over a leaf; owned by the test thread. */
struct mount_env {
    char dir[64];      /* mkdtemp mount point */
    vl_loop_t *loop;   /* owned */
    vl_graph_t *graph; /* owned */
};

/* Builds "top" (mount/fuse on env->dir, timeouts 0, extra option lines)
 * over a leaf of leaf_type, inits and activates it, and waits for it to
 * be ready. Returns 0 or -errno with reason filled. */
int mount_env_start(struct mount_env *env, const char *leaf_type,
                    const char *extra, char *reason, size_t reason_len);
/* Frees the graph and loop, detaches a mount left behind, removes dir. */
void mount_env_stop(struct mount_env *env);
/* Root with /dev/fuse: a mount is possible. */
bool mount_can_mount(void);
/* Source and type of the mount on dir, from /proc/self/mountinfo. */
bool mount_find_mount(const char *dir, char *source, char *type, size_t len);
/* What each mount test's main does first: not dumpable (a bridge crash
 * ends the test instead of hanging in the core dump behind a FUSE request
 * of the test thread), libvol init, TAP output, the classes registered.
 * Returns 0 or -1 (message printed). */
int mount_test_init(void);

#endif /* FUSE_TEST_MOUNT_MEMFS_H */
