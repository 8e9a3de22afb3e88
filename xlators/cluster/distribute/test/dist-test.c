/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-test: helpers of the distribute graph tests (see dist-test.h).
 * Distribute runs its slow paths on worker threads; posix answers inline,
 * so vl_sync_call from the test thread simply waits.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../builtin.h"
#include "dist-hash.h"
#include "dist-test.h"


static void
dt_graph_open(struct dt *t)
{
    /* Per brick: its volume (directory included) and its name in the
     * subvolumes line. */
    size_t size = 512 + strlen(t->extra)
                  + (size_t)t->n_bricks * (256 + strlen(t->base));
    char *text = malloc(size);
    size_t len = 0;
    vl_volfile_t *vf;
    vl_err_t err = {{0}};

    assert_non_null(text);
    for (int i = 0; i < t->n_bricks; i++) {
        if (t->with_locks)
            len += (size_t)snprintf(text + len, size - len,
                                    "volume b%d-store\n type storage/posix\n"
                                    " option directory %s/b%d\nend-volume\n"
                                    "volume b%d\n type features/locks\n"
                                    " subvolumes b%d-store\nend-volume\n",
                                    i, t->base, i, i, i);
        else
            len += (size_t)snprintf(text + len, size - len,
                                    "volume b%d\n type storage/posix\n"
                                    " option directory %s/b%d\n"
                                    "end-volume\n", i, t->base, i);
    }
    len += (size_t)snprintf(text + len, size - len,
                            "volume dht\n type cluster/distribute\n%s"
                            " subvolumes", t->extra);
    for (int i = 0; i < t->n_bricks; i++)
        len += (size_t)snprintf(text + len, size - len, " b%d", i);
    snprintf(text + len, size - len, "\nend-volume\n");
    assert_true(strlen(text) < size - 1);
    vf = vl_volfile_parse(text, strlen(text), "dist-test.vol", &err);
    free(text);
    if (vf == NULL)
        fail_msg("volfile: %s", err.msg);
    t->graph = vl_graph_build(vf, t->loop, &err);
    vl_volfile_free(vf);
    if (t->graph == NULL)
        fail_msg("build: %s", err.msg);
    if (vl_graph_init(t->graph, &err) != 0)
        fail_msg("init: %s", err.msg);
    vl_graph_activate(t->graph);
    t->dist = t->graph->top;
    t->root = vl_inode_table_root(t->graph->itable);
}


static void
dt_graph_close(struct dt *t)
{
    vl_inode_unref(t->root);
    t->root = NULL;
    if (t->graph != NULL)
        vl_graph_free(t->graph);
    t->graph = NULL;
}


void
dt_restart(struct dt *t)
{
    dt_graph_close(t);
    dt_graph_open(t);
}


void
dt_reopen(struct dt *t, const char *extra)
{
    dt_graph_close(t);
    snprintf(t->extra, sizeof(t->extra), "%s", extra);
    dt_graph_open(t);
}


int
dt_setup(void **state)
{
    return dt_setup_bricks(state, DT_BRICKS, "");
}


static int
dt_setup_with(void **state, int n_bricks, const char *extra, bool with_locks)
{
    struct dt *t = calloc(1, sizeof(*t));
    char dir[128];
    struct vl_iatt ia;

    assert_non_null(t);
    t->n_bricks = n_bricks;
    t->with_locks = with_locks;
    snprintf(t->extra, sizeof(t->extra), "%s", extra);
    vl_global_init();
    vl_log_set_level(VL_LOG_ERROR);
    vl_registry_add(&xl_storage_posix);
    vl_registry_add(&xl_cluster_distribute);
    snprintf(t->base, sizeof(t->base), "/tmp/dist-test-XXXXXX");
    assert_non_null(mkdtemp(t->base));
    for (int i = 0; i < t->n_bricks; i++) {
        snprintf(dir, sizeof(dir), "%s/b%d", t->base, i);
        assert_int_equal(mkdir(dir, 0755), 0);
    }
    t->loop = vl_loop_new(0);
    assert_non_null(t->loop);
    dt_graph_open(t);
    /* The root's layout: written on first lookup (empty: committed). */
    {
        union vl_fop_args a = {0};
        struct vl_reply r;

        a.lookup.loc.inode = t->root;
        assert_int_equal(dt_call(t, VL_FOP_LOOKUP, &a, &r), 0);
        ia = r.iatt;
        vl_reply_clear(&r);
        assert_true(vl_gfid_is_root(&ia.gfid));
    }
    *state = t;
    return 0;
}


int
dt_setup_bricks(void **state, int n_bricks, const char *extra)
{
    return dt_setup_with(state, n_bricks, extra, false);
}


int
dt_setup_locked(void **state, int n_bricks, const char *extra)
{
    return dt_setup_with(state, n_bricks, extra, true);
}


int
dt_teardown(void **state)
{
    struct dt *t = *state;
    char cmd[128];

    dt_graph_close(t);
    vl_loop_free(t->loop);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", t->base);
    if (system(cmd) != 0)
        fprintf(stderr, "# could not remove %s\n", t->base);
    free(t);
    return 0;
}


int
dt_call(struct dt *t, vl_fop_t op, union vl_fop_args *a, struct vl_reply *r)
{
    memset(r, 0, sizeof(*r));
    return vl_sync_call(t->dist, op, a, &t->caller, r);
}


static vl_inode_t *
dt_link_inode(vl_inode_t *fresh, const struct vl_iatt *iatt)
{
    vl_inode_t *linked = vl_inode_link(fresh, iatt);

    assert_non_null(linked);
    vl_inode_unref(fresh);
    return linked;
}


int
dt_lookup(struct dt *t, vl_inode_t *parent, const char *name,
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
    rc = dt_call(t, VL_FOP_LOOKUP, &a, &r);
    if (rc == 0 && iatt != NULL)
        *iatt = r.iatt;
    if (rc == 0 && out != NULL)
        *out = dt_link_inode(inode, &r.iatt);
    else
        vl_inode_unref(inode);
    vl_reply_clear(&r);
    return rc;
}


int
dt_mkdir(struct dt *t, vl_inode_t *parent, const char *name,
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
    a.mkdir.mode = 0755;
    vl_gfid_generate(&a.mkdir.gfid);
    rc = dt_call(t, VL_FOP_MKDIR, &a, &r);
    if (rc == 0 && out != NULL)
        *out = dt_link_inode(inode, &r.iatt);
    else
        vl_inode_unref(inode);
    vl_reply_clear(&r);
    return rc;
}


int
dt_create(struct dt *t, vl_inode_t *parent, const char *name,
          vl_inode_t **out, vl_fd_t **fd_out)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode = vl_inode_new(t->graph->itable);
    vl_fd_t *fd;
    int rc;

    assert_non_null(inode);
    fd = vl_fd_new(inode, O_RDWR, 1);
    assert_non_null(fd);
    a.create.loc.parent = parent;
    a.create.loc.name = name;
    a.create.loc.inode = inode;
    a.create.flags = O_RDWR | O_CREAT | O_EXCL;
    a.create.mode = 0644;
    a.create.fd = fd;
    vl_gfid_generate(&a.create.gfid);
    rc = dt_call(t, VL_FOP_CREATE, &a, &r);
    if (rc == 0) {
        vl_inode_t *linked = vl_inode_link(inode, &r.iatt);

        assert_true(linked == inode);
        vl_inode_unref(linked);
    }
    if (rc == 0 && fd_out != NULL)
        *fd_out = fd;
    else
        vl_fd_unref(fd);
    if (rc == 0 && out != NULL)
        *out = inode;
    else
        vl_inode_unref(inode);
    vl_reply_clear(&r);
    return rc;
}


int
dt_open(struct dt *t, vl_inode_t *inode, int flags, vl_fd_t **fd_out)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_fd_t *fd = vl_fd_new(inode, flags, 1);
    int rc;

    assert_non_null(fd);
    a.open.loc.inode = inode;
    a.open.flags = flags;
    a.open.fd = fd;
    rc = dt_call(t, VL_FOP_OPEN, &a, &r);
    vl_reply_clear(&r);
    if (rc == 0)
        *fd_out = fd;
    else
        vl_fd_unref(fd);
    return rc;
}


int
dt_write(struct dt *t, vl_fd_t *fd, off_t off, const char *data)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    struct iovec iov = {.iov_base = (void *)data, .iov_len = strlen(data)};
    int rc;

    a.write.fd = fd;
    a.write.iov = &iov;
    a.write.n_iov = 1;
    a.write.offset = off;
    rc = dt_call(t, VL_FOP_WRITE, &a, &r);
    if (rc == 0)
        assert_int_equal(r.count, (int64_t)strlen(data));
    vl_reply_clear(&r);
    return rc;
}


ssize_t
dt_read(struct dt *t, vl_fd_t *fd, off_t off, char *buf, size_t len)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    ssize_t n;
    int rc;

    a.read.fd = fd;
    a.read.size = len - 1;
    a.read.offset = off;
    rc = dt_call(t, VL_FOP_READ, &a, &r);
    if (rc != 0) {
        vl_reply_clear(&r);
        return rc;
    }
    n = (ssize_t)r.count;
    memcpy(buf, r.data, (size_t)n);
    buf[n] = '\0';
    vl_reply_clear(&r);
    return n;
}


int
dt_unlink(struct dt *t, vl_inode_t *parent, const char *name)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode = NULL;
    int rc;

    rc = dt_lookup(t, parent, name, NULL, &inode);
    if (rc != 0)
        return rc;
    a.unlink.loc.parent = parent;
    a.unlink.loc.name = name;
    a.unlink.loc.inode = inode;
    rc = dt_call(t, VL_FOP_UNLINK, &a, &r);
    vl_reply_clear(&r);
    vl_inode_unref(inode);
    return rc;
}


int
dt_rmdir(struct dt *t, vl_inode_t *parent, const char *name)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode = NULL;
    int rc;

    rc = dt_lookup(t, parent, name, NULL, &inode);
    if (rc != 0)
        return rc;
    a.rmdir.loc.parent = parent;
    a.rmdir.loc.name = name;
    a.rmdir.loc.inode = inode;
    rc = dt_call(t, VL_FOP_RMDIR, &a, &r);
    vl_reply_clear(&r);
    vl_inode_unref(inode);
    return rc;
}


int
dt_rename(struct dt *t, vl_inode_t *op, const char *on, vl_inode_t *inode,
          vl_inode_t *np, const char *nn)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.rename.oldloc.parent = op;
    a.rename.oldloc.name = on;
    a.rename.oldloc.inode = inode;
    a.rename.newloc.parent = np;
    a.rename.newloc.name = nn;
    rc = dt_call(t, VL_FOP_RENAME, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


ssize_t
dt_readdir_all(struct dt *t, vl_inode_t *dir, size_t budget, bool plus,
               char **names, size_t max)
{
    return dt_readdir_from(t, dir, 0, budget, plus, names, NULL, max);
}


ssize_t
dt_readdir_from(struct dt *t, vl_inode_t *dir, off_t off, size_t budget,
                bool plus, char **names, off_t *offs, size_t max)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_fd_t *fd = vl_fd_new(dir, O_RDONLY, 1);
    size_t count = 0;
    bool is_eof = false;
    int rc;

    assert_non_null(fd);
    a.opendir.loc.inode = dir;
    a.opendir.fd = fd;
    rc = dt_call(t, VL_FOP_OPENDIR, &a, &r);
    vl_reply_clear(&r);
    if (rc != 0) {
        vl_fd_unref(fd);
        return rc;
    }
    for (int calls = 0; !is_eof && calls < 100000; calls++) {
        memset(&a, 0, sizeof(a));
        a.readdir.fd = fd;
        a.readdir.size = budget;
        a.readdir.offset = off;
        a.readdir.plus = plus;
        rc = dt_call(t, VL_FOP_READDIR, &a, &r);
        if (rc != 0) {
            vl_reply_clear(&r);
            vl_fd_unref(fd);
            return rc;
        }
        is_eof = r.entries.eof;
        assert_true(r.entries.n > 0 || is_eof);
        for (size_t i = 0; i < r.entries.n; i++) {
            struct vl_dirent *e = &r.entries.ents[i];

            off = e->off;
            if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0)
                continue;
            if (plus)
                assert_true(e->has_iatt);
            if (count < max) {
                names[count] = strdup(e->name);
                if (offs != NULL)
                    offs[count] = e->off;
            }
            count++;
        }
        vl_reply_clear(&r);
    }
    vl_fd_unref(fd);
    return (ssize_t)count;
}


void
dt_path(struct dt *t, int brick, const char *rel, char *buf, size_t len)
{
    snprintf(buf, len, "%s/b%d/%s", t->base, brick, rel);
}


bool
dt_exists(struct dt *t, int brick, const char *rel, mode_t *mode)
{
    char path[PATH_MAX];
    struct stat st;

    dt_path(t, brick, rel, path, sizeof(path));
    if (lstat(path, &st) != 0)
        return false;
    if (mode != NULL)
        *mode = st.st_mode;
    return true;
}


int
dt_hashed(const char *name)
{
    return (int)(dist_hash_placement(name) >> 30);
}


void
dt_name_on(int want, const char *prefix, char *buf, size_t len)
{
    for (int i = 0;; i++) {
        snprintf(buf, len, "%s%d", prefix, i);
        if (dt_hashed(buf) == want)
            return;
    }
}
