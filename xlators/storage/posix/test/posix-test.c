/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix-test: helpers of the storage/posix unit tests: a graph holding
 * only storage/posix over a mkdtemp brick, and one blocking call per fop
 * (vl_sync_call; the translator answers inline on the calling thread).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../../../builtin.h"
#include "posix-test.h"
#include "posix.h"

#define GFID_XATTR "trusted.mortar.gfid"

int
pt_graph_open(struct pt *t, const char *extra_opts, vl_err_t *err)
{
    char text[1024];
    vl_volfile_t *vf;
    int rc;

    snprintf(text, sizeof(text),
             "volume brick\n"
             "    type storage/posix\n"
             "    option directory %s\n"
             "%s"
             "end-volume\n",
             t->brick, extra_opts != NULL ? extra_opts : "");
    vf = vl_volfile_parse(text, strlen(text), "test.vol", err);
    if (vf == NULL)
        return -EINVAL;
    t->graph = vl_graph_build(vf, t->loop, err);
    vl_volfile_free(vf);
    if (t->graph == NULL)
        return -EINVAL;
    rc = vl_graph_init(t->graph, err);
    if (rc != 0) {
        vl_graph_free(t->graph);
        t->graph = NULL;
        return rc;
    }
    vl_graph_activate(t->graph);
    t->xl = t->graph->top;
    t->root = vl_inode_table_root(t->graph->itable);
    return 0;
}


void
pt_graph_close(struct pt *t)
{
    vl_inode_unref(t->root);
    t->root = NULL;
    if (t->graph != NULL)
        vl_graph_free(t->graph);
    t->graph = NULL;
    t->xl = NULL;
}


void
pt_restart(struct pt *t)
{
    vl_err_t err = {{0}};

    pt_graph_close(t);
    assert_int_equal(pt_graph_open(t, NULL, &err), 0);
}


int
pt_setup(void **state)
{
    struct pt *t = calloc(1, sizeof(*t));
    vl_err_t err = {{0}};

    assert_non_null(t);
    vl_global_init();
    vl_registry_add(&xl_storage_posix); /* -EEXIST after the first */
    snprintf(t->brick, sizeof(t->brick), "/tmp/posix-test-XXXXXX");
    assert_non_null(mkdtemp(t->brick));
    t->loop = vl_loop_new(0);
    assert_non_null(t->loop);
    if (pt_graph_open(t, NULL, &err) != 0)
        fail_msg("graph: %s", err.msg);
    *state = t;
    return 0;
}


int
pt_teardown(void **state)
{
    struct pt *t = *state;
    char cmd[128];

    pt_graph_close(t);
    vl_loop_free(t->loop);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", t->brick);
    if (system(cmd) != 0)
        fprintf(stderr, "# could not remove %s\n", t->brick);
    free(t);
    return 0;
}


int
pt_call(struct pt *t, vl_fop_t op, union vl_fop_args *args,
        struct vl_reply *reply /* OUT */)
{
    memset(reply, 0, sizeof(*reply));
    return vl_sync_call(t->xl, op, args, &t->caller, reply);
}


/* Links a fresh inode after a successful entry fop. */
static vl_inode_t *
pt_link(vl_inode_t *fresh, const struct vl_iatt *iatt)
{
    vl_inode_t *linked = vl_inode_link(fresh, iatt);

    assert_non_null(linked);
    vl_inode_unref(fresh);
    return linked;
}


int
pt_lookup(struct pt *t, vl_inode_t *parent, const char *name,
          struct vl_iatt *iatt, vl_inode_t **out)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode = vl_inode_new(t->graph->itable);
    int rc;

    assert_non_null(inode);
    a.lookup.loc.parent = parent;
    a.lookup.loc.name = name;
    a.lookup.loc.inode = inode;
    rc = pt_call(t, VL_FOP_LOOKUP, &a, &r);
    if (rc == 0 && iatt != NULL)
        *iatt = r.iatt;
    if (rc == 0 && out != NULL)
        *out = pt_link(inode, &r.iatt);
    else
        vl_inode_unref(inode);
    vl_reply_clear(&r);
    return rc;
}


int
pt_lookup_gfid(struct pt *t, const vl_gfid_t *gfid, struct vl_iatt *iatt,
               vl_inode_t **out)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode = vl_inode_get(t->graph->itable, gfid, 0);
    int rc;

    assert_non_null(inode);
    a.lookup.loc.inode = inode;
    rc = pt_call(t, VL_FOP_LOOKUP, &a, &r);
    if (rc == 0 && iatt != NULL)
        *iatt = r.iatt;
    if (rc == 0 && out != NULL)
        *out = inode;
    else
        vl_inode_unref(inode);
    vl_reply_clear(&r);
    return rc;
}


int
pt_mkdir(struct pt *t, vl_inode_t *parent, const char *name, uint32_t mode,
         vl_inode_t **out)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode = vl_inode_new(t->graph->itable);
    int rc;

    assert_non_null(inode);
    a.mkdir.loc.parent = parent;
    a.mkdir.loc.name = name;
    a.mkdir.loc.inode = inode;
    a.mkdir.mode = mode;
    a.mkdir.umask = 022;
    vl_gfid_generate(&a.mkdir.gfid);
    rc = pt_call(t, VL_FOP_MKDIR, &a, &r);
    if (rc == 0) {
        assert_true(vl_gfid_equal(&r.iatt.gfid, &a.mkdir.gfid));
        assert_true(S_ISDIR(r.iatt.mode));
    }
    if (rc == 0 && out != NULL)
        *out = pt_link(inode, &r.iatt);
    else
        vl_inode_unref(inode);
    vl_reply_clear(&r);
    return rc;
}


int
pt_create(struct pt *t, vl_inode_t *parent, const char *name, int flags,
          uint32_t mode, vl_inode_t **out, vl_fd_t **fd_out)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode = vl_inode_new(t->graph->itable);
    vl_fd_t *fd;
    int rc;

    assert_non_null(inode);
    fd = vl_fd_new(inode, flags, 1);
    assert_non_null(fd);
    a.create.loc.parent = parent;
    a.create.loc.name = name;
    a.create.loc.inode = inode;
    a.create.flags = flags;
    a.create.mode = mode;
    a.create.umask = 022;
    a.create.fd = fd;
    vl_gfid_generate(&a.create.gfid);
    rc = pt_call(t, VL_FOP_CREATE, &a, &r);
    if (rc == 0)
        assert_true(S_ISREG(r.iatt.mode));
    if (rc == 0 && out != NULL) {
        vl_inode_t *linked = vl_inode_link(inode, &r.iatt);

        assert_non_null(linked);
        *out = linked;
    }
    vl_inode_unref(inode);
    if (rc == 0 && fd_out != NULL)
        *fd_out = fd;
    else
        vl_fd_unref(fd);
    vl_reply_clear(&r);
    return rc;
}


int
pt_open(struct pt *t, vl_inode_t *inode, int flags, vl_fd_t **fd_out)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_fd_t *fd = vl_fd_new(inode, flags, 1);
    int rc;

    assert_non_null(fd);
    a.open.loc.inode = inode;
    a.open.flags = flags;
    a.open.fd = fd;
    rc = pt_call(t, VL_FOP_OPEN, &a, &r);
    vl_reply_clear(&r);
    if (rc == 0)
        *fd_out = fd;
    else
        vl_fd_unref(fd);
    return rc;
}


int
pt_write(struct pt *t, vl_fd_t *fd, off_t off, const void *data, size_t len,
         uint32_t flags)
{
    union vl_fop_args a = {0};
    struct iovec iov = {.iov_base = (void *)data, .iov_len = len};
    struct vl_reply r;
    int rc;

    a.write.fd = fd;
    a.write.iov = &iov;
    a.write.n_iov = 1;
    a.write.offset = off;
    a.write.flags = flags;
    rc = pt_call(t, VL_FOP_WRITE, &a, &r);
    if (rc == 0)
        assert_int_equal(r.count, (int64_t)len);
    vl_reply_clear(&r);
    return rc;
}


ssize_t
pt_read(struct pt *t, vl_fd_t *fd, off_t off, void *out, size_t len)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    ssize_t rc;

    a.read.fd = fd;
    a.read.offset = off;
    a.read.size = len;
    rc = pt_call(t, VL_FOP_READ, &a, &r);
    if (rc == 0) {
        assert_true(r.count >= 0 && (size_t)r.count <= len);
        if (r.count > 0)
            memcpy(out, r.data, (size_t)r.count);
        rc = r.count;
    }
    vl_reply_clear(&r);
    return rc;
}


int
pt_unlink(struct pt *t, vl_inode_t *parent, const char *name)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.unlink.loc.parent = parent;
    a.unlink.loc.name = name;
    rc = pt_call(t, VL_FOP_UNLINK, &a, &r);
    vl_reply_clear(&r);
    /* Handles of deleted files go after the reply: wait for them, so
     * the tests see the end state (test-posix-janitor.c tests the
     * queue itself). */
    posix_janitor_flush(t->xl);
    return rc;
}


int
pt_rename(struct pt *t, vl_inode_t *op, const char *on, vl_inode_t *np,
          const char *nn, uint32_t flags, struct vl_iatt *iatt)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.rename.oldloc.parent = op;
    a.rename.oldloc.name = on;
    a.rename.newloc.parent = np;
    a.rename.newloc.name = nn;
    a.rename.flags = flags;
    rc = pt_call(t, VL_FOP_RENAME, &a, &r);
    if (rc == 0 && iatt != NULL)
        *iatt = r.iatt;
    vl_reply_clear(&r);
    posix_janitor_flush(t->xl); /* a replaced file's handle */
    return rc;
}


int
pt_stat(struct pt *t, vl_inode_t *inode, struct vl_iatt *iatt)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.stat.loc.inode = inode;
    rc = pt_call(t, VL_FOP_STAT, &a, &r);
    if (rc == 0)
        *iatt = r.iatt;
    vl_reply_clear(&r);
    return rc;
}


int
pt_disk_gfid(struct pt *t, const char *rel, vl_gfid_t *out)
{
    char path[PATH_MAX];
    ssize_t n;

    snprintf(path, sizeof(path), "%s/%s", t->brick, rel);
    n = lgetxattr(path, GFID_XATTR, out->bytes, sizeof(out->bytes));
    if (n < 0)
        return -errno;
    return n == 16 ? 0 : -EINVAL;
}


void
pt_handle_path(const vl_gfid_t *gfid, char *buf, size_t len)
{
    char str[VL_GFID_STR_LEN];

    vl_gfid_to_str(gfid, str);
    snprintf(buf, len, ".mortar/handles/%02x/%02x/%s", gfid->bytes[0],
             gfid->bytes[1], str);
}


bool
pt_index_has(struct pt *t, const vl_gfid_t *gfid)
{
    char path[PATH_MAX], str[VL_GFID_STR_LEN];
    struct stat st;

    snprintf(path, sizeof(path), "%s/.mortar/index/xattrop/%s", t->brick,
             vl_gfid_to_str(gfid, str));
    return lstat(path, &st) == 0;
}
