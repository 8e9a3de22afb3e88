/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-posix: storage/posix on a real brick (a mkdtemp directory, as
 * root): init checks, GFIDs and handles on disk, deep trees beyond
 * PATH_MAX reached by GFID, readdir cookies, the hidden .mortar, refused
 * trusted.mortar.* xattrs, fallocate modes and sparse files. The helpers
 * are here too; namespace fops are tested in test-posix-ns.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../../../builtin.h"
#include "posix-test.h"

#define GFID_XATTR "trusted.mortar.gfid"


/* --- helpers ------------------------------------------------------------ */

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


/* --- tests -------------------------------------------------------------- */

static void
test_init_root_gfid_and_meta(void **state)
{
    struct pt *t = *state;
    char path[PATH_MAX];
    struct stat st;
    vl_gfid_t g;

    assert_int_equal(pt_disk_gfid(t, ".", &g), 0);
    assert_true(vl_gfid_is_root(&g));
    snprintf(path, sizeof(path), "%s/.mortar/handles", t->brick);
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
}


/* Expects init over dir to fail with a message containing want. */
static void
pt_expect_init_fails(struct pt *t, const char *dir, const char *extra,
                     const char *want)
{
    struct pt other = *t;
    vl_err_t err = {{0}};

    snprintf(other.brick, sizeof(other.brick), "%s", dir);
    other.graph = NULL;
    other.root = NULL;
    assert_int_not_equal(pt_graph_open(&other, extra, &err), 0);
    if (strstr(err.msg, want) == NULL)
        fail_msg("error '%s' lacks '%s'", err.msg, want);
}


static void
test_init_bad_directory(void **state)
{
    struct pt *t = *state;
    char path[PATH_MAX];
    vl_gfid_t other;
    int fd;

    snprintf(path, sizeof(path), "%s/missing", t->brick);
    pt_expect_init_fails(t, path, NULL, "does not exist");

    snprintf(path, sizeof(path), "%s/plain-file", t->brick);
    fd = open(path, O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0);
    close(fd);
    pt_expect_init_fails(t, path, NULL, "not a directory");

    snprintf(path, sizeof(path), "%s/foreign", t->brick);
    assert_int_equal(mkdir(path, 0755), 0);
    vl_gfid_generate(&other);
    assert_int_equal(setxattr(path, GFID_XATTR, other.bytes, 16, 0), 0);
    pt_expect_init_fails(t, path, NULL, "not the root gfid");

    /* A volfile without the required directory option fails too. */
    {
        vl_err_t err = {{0}};
        const char *text = "volume b\n type storage/posix\nend-volume\n";
        vl_volfile_t *vf = vl_volfile_parse(text, strlen(text), "t", &err);
        vl_graph_t *g;

        assert_non_null(vf);
        g = vl_graph_build(vf, t->loop, &err);
        vl_volfile_free(vf);
        if (g != NULL) {
            assert_int_not_equal(vl_graph_init(g, &err), 0);
            vl_graph_free(g);
        }
        assert_non_null(strstr(err.msg, "directory"));
    }
}


static void
test_create_lookup_gfid_handle(void **state)
{
    struct pt *t = *state;
    char hpath[128], path[PATH_MAX];
    struct stat st, hst;
    struct vl_iatt ia;
    vl_inode_t *f = NULL, *again = NULL;
    vl_fd_t *fd = NULL;
    vl_gfid_t g;

    assert_int_equal(pt_create(t, t->root, "f", O_RDWR, 0640, &f, &fd), 0);
    assert_int_equal(pt_disk_gfid(t, "f", &g), 0);
    assert_true(vl_gfid_equal(&g, &f->gfid));

    /* The handle is a hard link to the file. */
    pt_handle_path(&g, hpath, sizeof(hpath));
    snprintf(path, sizeof(path), "%s/%s", t->brick, hpath);
    assert_int_equal(lstat(path, &hst), 0);
    snprintf(path, sizeof(path), "%s/f", t->brick);
    assert_int_equal(lstat(path, &st), 0);
    assert_int_equal(st.st_ino, hst.st_ino);
    assert_int_equal(st.st_mode & 07777, 0640);

    assert_int_equal(pt_lookup(t, t->root, "f", &ia, NULL), 0);
    assert_true(vl_gfid_equal(&ia.gfid, &g));
    assert_int_equal(ia.ino, vl_gfid_to_ino(&g));
    assert_int_equal(ia.nlink, 1); /* the handle link is hidden */

    assert_int_equal(pt_write(t, fd, 0, "hello", 5, 0), 0);
    vl_fd_unref(fd);
    vl_inode_unref(f);

    /* After a restart nothing is cached: a nameless lookup by GFID. */
    pt_restart(t);
    assert_int_equal(pt_lookup_gfid(t, &g, &ia, &again), 0);
    assert_int_equal(ia.size, 5);
    assert_true(S_ISREG(ia.mode));
    vl_inode_unref(again);
    assert_int_equal(pt_lookup(t, t->root, "nope", &ia, NULL), -ENOENT);
}


static void
test_lookup_heals_handmade(void **state)
{
    struct pt *t = *state;
    char path[PATH_MAX], hpath[128];
    struct vl_iatt ia;
    struct stat st;
    vl_gfid_t g;

    snprintf(path, sizeof(path), "%s/handmade", t->brick);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(pt_lookup(t, t->root, "handmade", &ia, NULL), 0);
    assert_false(vl_gfid_is_null(&ia.gfid));
    assert_int_equal(pt_disk_gfid(t, "handmade", &g), 0);
    assert_true(vl_gfid_equal(&g, &ia.gfid));
    pt_handle_path(&g, hpath, sizeof(hpath));
    snprintf(path, sizeof(path), "%s/%s", t->brick, hpath);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
}


static void
test_deep_tree_beyond_path_max(void **state)
{
    struct pt *t = *state;
    enum { DEPTH = 40, NAMELEN = 200 };
    vl_inode_t *dir = vl_inode_ref(t->root), *next = NULL, *f = NULL;
    vl_gfid_t deep_gfid, file_gfid;
    char name[NAMELEN + 1];
    struct vl_iatt ia;
    vl_fd_t *fd = NULL;
    char buf[16];

    for (int i = 0; i < DEPTH; i++) {
        memset(name, 'a' + i % 26, NAMELEN);
        name[NAMELEN] = '\0';
        assert_int_equal(pt_mkdir(t, dir, name, 0755, &next), 0);
        vl_inode_unref(dir);
        dir = next;
    }
    deep_gfid = dir->gfid;
    assert_int_equal(pt_create(t, dir, "leaf", O_RDWR, 0644, &f, &fd), 0);
    file_gfid = f->gfid;
    assert_int_equal(pt_write(t, fd, 0, "deep", 4, 0), 0);
    vl_fd_unref(fd);
    vl_inode_unref(f);
    vl_inode_unref(dir);
    assert_true(DEPTH * (NAMELEN + 1) > PATH_MAX);

    /* Fresh graph: the directory is found through 40 handle symlinks. */
    pt_restart(t);
    assert_int_equal(pt_lookup_gfid(t, &deep_gfid, &ia, &dir), 0);
    assert_true(S_ISDIR(ia.mode));
    assert_int_equal(pt_lookup(t, dir, "leaf", &ia, NULL), 0);
    assert_true(vl_gfid_equal(&ia.gfid, &file_gfid));
    vl_inode_unref(dir);

    assert_int_equal(pt_lookup_gfid(t, &file_gfid, &ia, &f), 0);
    assert_int_equal(pt_open(t, f, O_RDONLY, &fd), 0);
    assert_int_equal(pt_read(t, fd, 0, buf, sizeof(buf)), 4);
    assert_memory_equal(buf, "deep", 4);
    vl_fd_unref(fd);
    vl_inode_unref(f);
}


/* Reads a whole directory in budget-sized chunks; returns entry count
 * (without . and ..) and checks every name is seen once. */
static size_t
pt_readdir_all(struct pt *t, vl_inode_t *dir, size_t budget, bool plus,
               bool *seen, size_t n_seen)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_fd_t *fd = vl_fd_new(dir, O_RDONLY, 1);
    size_t count = 0;
    off_t off = 0;
    bool is_eof = false;

    assert_non_null(fd);
    a.opendir.loc.inode = dir;
    a.opendir.fd = fd;
    assert_int_equal(pt_call(t, VL_FOP_OPENDIR, &a, &r), 0);
    vl_reply_clear(&r);
    for (int calls = 0; !is_eof; calls++) {
        assert_true(calls < 10000);
        memset(&a, 0, sizeof(a));
        a.readdir.fd = fd;
        a.readdir.size = budget;
        a.readdir.offset = off;
        a.readdir.plus = plus;
        assert_int_equal(pt_call(t, VL_FOP_READDIR, &a, &r), 0);
        is_eof = r.entries.eof;
        assert_true(r.entries.n > 0 || is_eof);
        for (size_t i = 0; i < r.entries.n; i++) {
            struct vl_dirent *e = &r.entries.ents[i];
            unsigned idx;

            off = e->off;
            assert_string_not_equal(e->name, ".mortar");
            if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0)
                continue;
            count++;
            if (seen == NULL)
                continue;
            assert_int_equal(sscanf(e->name, "file-%u", &idx), 1);
            assert_true(idx < n_seen);
            assert_false(seen[idx]);
            seen[idx] = true;
            if (plus) {
                vl_gfid_t g;
                char rel[64];

                assert_true(e->has_iatt);
                snprintf(rel, sizeof(rel), "big/%s", e->name);
                assert_int_equal(pt_disk_gfid(t, rel, &g), 0);
                assert_true(vl_gfid_equal(&g, &e->iatt.gfid));
                assert_int_equal(e->ino, vl_gfid_to_ino(&g));
            }
        }
        vl_reply_clear(&r);
    }
    vl_fd_unref(fd);
    return count;
}


static void
test_readdir_offsets_resume(void **state)
{
    struct pt *t = *state;
    enum { N = 1000 };
    vl_inode_t *dir = NULL;
    bool seen[N];
    char name[32];

    assert_int_equal(pt_mkdir(t, t->root, "big", 0755, &dir), 0);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "file-%04d", i);
        assert_int_equal(pt_create(t, dir, name, O_RDWR, 0644, NULL, NULL),
                         0);
    }
    memset(seen, 0, sizeof(seen));
    assert_int_equal(pt_readdir_all(t, dir, 1024, false, seen, N), N);
    for (int i = 0; i < N; i++)
        assert_true(seen[i]);
    memset(seen, 0, sizeof(seen));
    assert_int_equal(pt_readdir_all(t, dir, 4096, true, seen, N), N);
    for (int i = 0; i < N; i++)
        assert_true(seen[i]);
    vl_inode_unref(dir);
    /* The root lists "big" but never ".mortar". */
    assert_int_equal(pt_readdir_all(t, t->root, 4096, true, NULL, 0), 1);
}


static void
test_mortar_dir_hidden(void **state)
{
    struct pt *t = *state;
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *d = NULL;

    assert_int_equal(pt_lookup(t, t->root, ".mortar", NULL, NULL), -ENOENT);
    assert_int_equal(pt_mkdir(t, t->root, ".mortar", 0755, NULL), -EPERM);
    assert_int_equal(pt_create(t, t->root, ".mortar", O_RDWR, 0644, NULL,
                               NULL),
                     -EPERM);
    assert_int_equal(pt_unlink(t, t->root, ".mortar"), -ENOENT);
    assert_int_equal(pt_create(t, t->root, "x", O_RDWR, 0644, NULL, NULL), 0);
    assert_int_equal(pt_rename(t, t->root, "x", t->root, ".mortar", 0, NULL),
                     -EPERM);
    a.rmdir.loc.parent = t->root;
    a.rmdir.loc.name = ".mortar";
    assert_int_equal(pt_call(t, VL_FOP_RMDIR, &a, &r), -ENOENT);
    vl_reply_clear(&r);
    /* Only at the root: a subdirectory may have a .mortar entry. */
    assert_int_equal(pt_mkdir(t, t->root, "sub", 0755, &d), 0);
    assert_int_equal(pt_mkdir(t, d, ".mortar", 0755, NULL), 0);
    vl_inode_unref(d);
}


static int
pt_xattr(struct pt *t, vl_fop_t op, vl_inode_t *inode, const char *name,
         const char *value, size_t size, struct vl_reply *r)
{
    union vl_fop_args a = {0};

    switch (op) {
    case VL_FOP_SETXATTR:
        a.setxattr.loc.inode = inode;
        a.setxattr.name = name;
        a.setxattr.value = value;
        a.setxattr.size = value != NULL ? strlen(value) : 0;
        break;
    case VL_FOP_GETXATTR:
        a.getxattr.loc.inode = inode;
        a.getxattr.name = name;
        a.getxattr.size = size;
        break;
    default:
        a.removexattr.loc.inode = inode;
        a.removexattr.name = name;
        break;
    }
    return pt_call(t, op, &a, r);
}


static void
test_xattrs_and_trusted_mortar_refused(void **state)
{
    struct pt *t = *state;
    vl_inode_t *f = NULL;
    struct vl_reply r;
    bool has_user = false;

    assert_int_equal(pt_create(t, t->root, "x", O_RDWR, 0644, &f, NULL), 0);
    assert_int_equal(pt_xattr(t, VL_FOP_SETXATTR, f, "user.color", "blue", 0,
                              &r), 0);
    vl_reply_clear(&r);
    assert_int_equal(pt_xattr(t, VL_FOP_GETXATTR, f, "user.color", NULL, 64,
                              &r), 0);
    assert_int_equal(r.count, 4);
    assert_memory_equal(r.xattr, "blue", 4);
    vl_reply_clear(&r);
    assert_int_equal(pt_xattr(t, VL_FOP_GETXATTR, f, "user.color", NULL, 2,
                              &r), -ERANGE);
    vl_reply_clear(&r);

    assert_int_equal(pt_xattr(t, VL_FOP_SETXATTR, f, GFID_XATTR, "x", 0, &r),
                     -EPERM);
    vl_reply_clear(&r);
    assert_int_equal(pt_xattr(t, VL_FOP_SETXATTR, f, "trusted.mortar.other",
                              "x", 0, &r), -EPERM);
    vl_reply_clear(&r);
    assert_int_equal(pt_xattr(t, VL_FOP_GETXATTR, f, GFID_XATTR, NULL, 64,
                              &r), -EPERM);
    vl_reply_clear(&r);
    assert_int_equal(pt_xattr(t, VL_FOP_REMOVEXATTR, f, GFID_XATTR, NULL, 0,
                              &r), -EPERM);
    vl_reply_clear(&r);

    /* Listing hides the GFID. */
    assert_int_equal(pt_xattr(t, VL_FOP_GETXATTR, f, NULL, NULL, 4096, &r),
                     0);
    for (int64_t i = 0; i < r.count;) {
        const char *n = r.xattr + i;

        assert_null(strstr(n, "trusted.mortar"));
        if (strcmp(n, "user.color") == 0)
            has_user = true;
        i += (int64_t)strlen(n) + 1;
    }
    assert_true(has_user);
    vl_reply_clear(&r);

    assert_int_equal(pt_xattr(t, VL_FOP_REMOVEXATTR, f, "user.color", NULL, 0,
                              &r), 0);
    vl_reply_clear(&r);
    assert_int_equal(pt_xattr(t, VL_FOP_GETXATTR, f, "user.color", NULL, 64,
                              &r), -ENODATA);
    vl_reply_clear(&r);
    vl_inode_unref(f);
}


static int
pt_fallocate(struct pt *t, vl_fd_t *fd, int mode, off_t off, off_t len)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.fallocate.fd = fd;
    a.fallocate.mode = mode;
    a.fallocate.offset = off;
    a.fallocate.len = len;
    rc = pt_call(t, VL_FOP_FALLOCATE, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


static void
test_fallocate_punch_and_zero(void **state)
{
    struct pt *t = *state;
    enum { SIZE = 64 * 1024 };
    static char data[SIZE], back[SIZE];
    struct vl_iatt ia;
    vl_inode_t *f = NULL;
    vl_fd_t *fd = NULL;
    int rc;

    memset(data, 0xAA, SIZE);
    assert_int_equal(pt_create(t, t->root, "fa", O_RDWR, 0644, &f, &fd), 0);
    assert_int_equal(pt_write(t, fd, 0, data, SIZE, 0), 0);
    assert_int_equal(pt_fallocate(t, fd,
                                  FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                  4096, 8192),
                     0);
    rc = pt_fallocate(t, fd, FALLOC_FL_ZERO_RANGE, 32768, 4096);
    assert_int_equal(rc, 0);
    assert_int_equal(pt_read(t, fd, 0, back, SIZE), SIZE);
    for (int i = 0; i < SIZE; i++) {
        bool is_zero = (i >= 4096 && i < 12288) || (i >= 32768 && i < 36864);

        if ((unsigned char)back[i] != (is_zero ? 0 : 0xAA))
            fail_msg("byte %d is %#x", i, (unsigned char)back[i]);
    }
    assert_int_equal(pt_stat(t, f, &ia), 0);
    assert_int_equal(ia.size, SIZE);
    /* keep-size preallocation beyond EOF does not grow the file. */
    assert_int_equal(pt_fallocate(t, fd, FALLOC_FL_KEEP_SIZE, SIZE, 65536), 0);
    assert_int_equal(pt_stat(t, f, &ia), 0);
    assert_int_equal(ia.size, SIZE);
    /* An invalid mode is the kernel's error, passed back. */
    assert_int_equal(pt_fallocate(t, fd, FALLOC_FL_PUNCH_HOLE, 0, 4096),
                     -EOPNOTSUPP);
    vl_fd_unref(fd);
    vl_inode_unref(f);
}


static void
test_sparse_beyond_4g(void **state)
{
    struct pt *t = *state;
    const off_t far = 5 * (off_t)VL_GiB;
    union vl_fop_args a = {0};
    struct vl_reply r;
    struct vl_iatt ia;
    vl_inode_t *f = NULL;
    vl_fd_t *fd = NULL;
    char buf[8];

    assert_int_equal(pt_create(t, t->root, "sparse", O_RDWR, 0644, &f, &fd),
                     0);
    assert_int_equal(pt_write(t, fd, far, "Z", 1, 0), 0);
    assert_int_equal(pt_stat(t, f, &ia), 0);
    assert_int_equal(ia.size, (uint64_t)far + 1);
    assert_true(ia.blocks < 1024); /* not allocated */
    memset(buf, 1, sizeof(buf));
    assert_int_equal(pt_read(t, fd, 4 * (off_t)VL_GiB, buf, 4), 4);
    assert_memory_equal(buf, "\0\0\0\0", 4);
    assert_int_equal(pt_read(t, fd, far, buf, sizeof(buf)), 1);
    assert_int_equal(buf[0], 'Z');

    a.lseek.fd = fd;
    a.lseek.offset = 0;
    a.lseek.whence = SEEK_DATA;
    assert_int_equal(pt_call(t, VL_FOP_LSEEK, &a, &r), 0);
    assert_true(r.offset > 4 * (off_t)VL_GiB && r.offset <= far);
    vl_reply_clear(&r);
    a.lseek.whence = SEEK_HOLE;
    assert_int_equal(pt_call(t, VL_FOP_LSEEK, &a, &r), 0);
    assert_int_equal(r.offset, 0);
    vl_reply_clear(&r);
    vl_fd_unref(fd);
    vl_inode_unref(f);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_init_root_gfid_and_meta,
                                        pt_setup, pt_teardown),
        cmocka_unit_test_setup_teardown(test_init_bad_directory, pt_setup,
                                        pt_teardown),
        cmocka_unit_test_setup_teardown(test_create_lookup_gfid_handle,
                                        pt_setup, pt_teardown),
        cmocka_unit_test_setup_teardown(test_lookup_heals_handmade, pt_setup,
                                        pt_teardown),
        cmocka_unit_test_setup_teardown(test_deep_tree_beyond_path_max,
                                        pt_setup, pt_teardown),
        cmocka_unit_test_setup_teardown(test_readdir_offsets_resume,
                                        pt_setup, pt_teardown),
        cmocka_unit_test_setup_teardown(test_mortar_dir_hidden, pt_setup,
                                        pt_teardown),
        cmocka_unit_test_setup_teardown(
            test_xattrs_and_trusted_mortar_refused, pt_setup, pt_teardown),
        cmocka_unit_test_setup_teardown(test_fallocate_punch_and_zero,
                                        pt_setup, pt_teardown),
        cmocka_unit_test_setup_teardown(test_sparse_beyond_4g, pt_setup,
                                        pt_teardown),
    };
    size_t n = VL_ARRAY_SIZE(tests) + pt_n_ns_tests;
    struct CMUnitTest *all = calloc(n, sizeof(*all));
    int failed;

    /* One group, so the TAP output has a single plan. */
    assert_non_null(all);
    memcpy(all, tests, sizeof(tests));
    memcpy(all + VL_ARRAY_SIZE(tests), pt_ns_tests,
           pt_n_ns_tests * sizeof(*all));
    cmocka_set_message_output(CM_OUTPUT_TAP);
    failed = _cmocka_run_group_tests("posix", all, n, NULL, NULL);
    free(all);
    return failed != 0;
}
