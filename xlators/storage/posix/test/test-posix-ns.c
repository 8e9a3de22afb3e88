/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-posix-ns: namespace and attribute fops of storage/posix checked
 * against the brick on disk: handles across rename/link/unlink/rmdir,
 * nlink after rename over a hard-linked name, ownership of new objects
 * (setgid directories), setattr, access, symlinks, special files,
 * O_APPEND writes and copy_file_range.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "posix-test.h"
#include "posix.h"


static bool
pt_handle_exists(struct pt *t, const vl_gfid_t *g, struct stat *st)
{
    char rel[128], path[PATH_MAX];
    struct stat tmp;

    pt_handle_path(g, rel, sizeof(rel));
    snprintf(path, sizeof(path), "%s/%s", t->brick, rel);
    return lstat(path, st != NULL ? st : &tmp) == 0;
}


static void
pt_handle_target(struct pt *t, const vl_gfid_t *g, char *buf, size_t len)
{
    char rel[128], path[PATH_MAX];
    ssize_t n;

    pt_handle_path(g, rel, sizeof(rel));
    snprintf(path, sizeof(path), "%s/%s", t->brick, rel);
    n = readlink(path, buf, len - 1);
    assert_true(n > 0);
    buf[n] = '\0';
}


static void
pt_expect_dir_target(struct pt *t, const vl_gfid_t *g,
                     const vl_gfid_t *parent, const char *name)
{
    char want[PATH_MAX], have[PATH_MAX], str[VL_GFID_STR_LEN];

    vl_gfid_to_str(parent, str);
    snprintf(want, sizeof(want), "../../%02x/%02x/%s/%s", parent->bytes[0],
             parent->bytes[1], str, name);
    pt_handle_target(t, g, have, sizeof(have));
    assert_string_equal(have, want);
}


static void
test_rename_dir_updates_handle(void **state)
{
    struct pt *t = *state;
    vl_inode_t *a = NULL, *b = NULL, *c = NULL, *f = NULL;
    vl_gfid_t bg, fg;
    struct vl_iatt ia;

    assert_int_equal(pt_mkdir(t, t->root, "a", 0755, &a), 0);
    assert_int_equal(pt_mkdir(t, a, "b", 0755, &b), 0);
    assert_int_equal(pt_mkdir(t, t->root, "c", 0755, &c), 0);
    assert_int_equal(pt_create(t, b, "f", O_RDWR, 0644, &f, NULL), 0);
    bg = b->gfid;
    fg = f->gfid;
    pt_expect_dir_target(t, &b->gfid, &a->gfid, "b");

    /* Move b from a into c under a new name. */
    assert_int_equal(pt_rename(t, a, "b", c, "b2", 0, &ia), 0);
    assert_true(vl_gfid_equal(&ia.gfid, &bg));
    assert_true(S_ISDIR(ia.mode));
    pt_expect_dir_target(t, &bg, &c->gfid, "b2");
    /* The cached fd of b still works: it names the directory itself. */
    assert_int_equal(pt_lookup(t, b, "f", &ia, NULL), 0);
    assert_true(vl_gfid_equal(&ia.gfid, &fg));
    vl_inode_unref(a);
    vl_inode_unref(b);
    vl_inode_unref(c);
    vl_inode_unref(f);

    /* Without caches, b resolves by GFID through its new parent. */
    pt_restart(t);
    assert_int_equal(pt_lookup_gfid(t, &bg, &ia, &b), 0);
    assert_true(S_ISDIR(ia.mode));
    assert_int_equal(pt_lookup(t, b, "f", &ia, NULL), 0);
    assert_true(vl_gfid_equal(&ia.gfid, &fg));
    vl_inode_unref(b);
}


static void
test_rename_over_hardlink_nlink(void **state)
{
    struct pt *t = *state;
    vl_inode_t *f = NULL, *h = NULL, *x = NULL;
    union vl_fop_args a = {0};
    struct vl_reply r;
    struct vl_iatt ia;
    vl_gfid_t hg;

    assert_int_equal(pt_create(t, t->root, "f", O_RDWR, 0644, &f, NULL), 0);
    a.link.oldloc.inode = f;
    a.link.newloc.parent = t->root;
    a.link.newloc.name = "g";
    assert_int_equal(pt_call(t, VL_FOP_LINK, &a, &r), 0);
    assert_true(vl_gfid_equal(&r.iatt.gfid, &f->gfid));
    assert_int_equal(r.iatt.nlink, 2);
    vl_reply_clear(&r);

    assert_int_equal(pt_create(t, t->root, "h", O_RDWR, 0644, &h, NULL), 0);
    hg = h->gfid;
    /* h replaces g, one of f's two names. */
    assert_int_equal(pt_rename(t, t->root, "h", t->root, "g", 0, &ia), 0);
    assert_true(vl_gfid_equal(&ia.gfid, &hg));
    assert_int_equal(pt_stat(t, f, &ia), 0);
    assert_int_equal(ia.nlink, 1);
    assert_true(pt_handle_exists(t, &f->gfid, NULL)); /* f still named */

    /* Now x replaces f's last name: f's handle must go. */
    assert_int_equal(pt_create(t, t->root, "x", O_RDWR, 0644, &x, NULL), 0);
    assert_int_equal(pt_rename(t, t->root, "x", t->root, "f", 0, NULL), 0);
    assert_false(pt_handle_exists(t, &f->gfid, NULL));
    assert_int_equal(pt_stat(t, f, &ia), -ESTALE);
    assert_true(pt_handle_exists(t, &x->gfid, NULL));

    /* NOREPLACE refuses an existing target; EXCHANGE swaps. */
    assert_int_equal(pt_rename(t, t->root, "f", t->root, "g",
                               RENAME_NOREPLACE, NULL),
                     -EEXIST);
    assert_int_equal(pt_rename(t, t->root, "f", t->root, "g",
                               RENAME_EXCHANGE, &ia),
                     0);
    assert_true(vl_gfid_equal(&ia.gfid, &x->gfid));
    assert_int_equal(pt_lookup(t, t->root, "f", &ia, NULL), 0);
    assert_true(vl_gfid_equal(&ia.gfid, &hg));
    vl_inode_unref(f);
    vl_inode_unref(h);
    vl_inode_unref(x);
}


static void
test_exchange_dirs_updates_both_handles(void **state)
{
    struct pt *t = *state;
    vl_inode_t *p = NULL, *q = NULL, *d1 = NULL, *d2 = NULL;

    assert_int_equal(pt_mkdir(t, t->root, "p", 0755, &p), 0);
    assert_int_equal(pt_mkdir(t, t->root, "q", 0755, &q), 0);
    assert_int_equal(pt_mkdir(t, p, "d1", 0755, &d1), 0);
    assert_int_equal(pt_mkdir(t, q, "d2", 0755, &d2), 0);
    assert_int_equal(pt_rename(t, p, "d1", q, "d2", RENAME_EXCHANGE, NULL),
                     0);
    pt_expect_dir_target(t, &d1->gfid, &q->gfid, "d2");
    pt_expect_dir_target(t, &d2->gfid, &p->gfid, "d1");

    /* Rename a directory over an empty one: the victim's handle goes. */
    assert_int_equal(pt_rename(t, q, "d2", p, "d1", 0, NULL), 0);
    assert_false(pt_handle_exists(t, &d2->gfid, NULL));
    pt_expect_dir_target(t, &d1->gfid, &p->gfid, "d1");
    vl_inode_unref(p);
    vl_inode_unref(q);
    vl_inode_unref(d1);
    vl_inode_unref(d2);
}


static int
pt_count_entries(const char *path)
{
    struct dirent *d;
    DIR *dir = opendir(path);
    int n = 0;

    assert_non_null(dir);
    while ((d = readdir(dir)) != NULL)
        if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
            n++;
    closedir(dir);
    return n;
}


static int pt_setattr(struct pt *t, vl_inode_t *inode, vl_fd_t *fd,
                      const struct vl_iatt *attr, uint32_t valid,
                      struct vl_iatt *out);


static void
test_unlink_open_file_keeps_data(void **state)
{
    struct pt *t = *state;
    vl_inode_t *f = NULL, *d = NULL;
    union vl_fop_args a = {0};
    struct vl_iatt ia, at = {0};
    char path[PATH_MAX];
    struct vl_reply r;
    vl_fd_t *fd = NULL;
    char buf[8];

    assert_int_equal(pt_create(t, t->root, "f", O_RDWR, 0644, &f, &fd), 0);
    assert_int_equal(pt_write(t, fd, 0, "data", 4, 0), 0);
    assert_int_equal(pt_unlink(t, t->root, "f"), 0);
    assert_false(pt_handle_exists(t, &f->gfid, NULL));
    assert_int_equal(pt_read(t, fd, 0, buf, sizeof(buf)), 4);
    assert_memory_equal(buf, "data", 4);
    assert_int_equal(pt_unlink(t, t->root, "f"), -ENOENT);
    /* While open, the GFID still reaches the file (fstat, fchmod on the
     * client arrive by inode), but a nameless lookup does not. */
    assert_int_equal(pt_stat(t, f, &ia), 0);
    assert_int_equal(ia.nlink, 0);
    assert_int_equal(ia.size, 4);
    at.mode = 0600;
    assert_int_equal(pt_setattr(t, f, NULL, &at, VL_SET_MODE, &ia), 0);
    assert_int_equal(ia.mode & 07777, 0600);
    assert_int_equal(pt_lookup_gfid(t, &f->gfid, NULL, NULL), -ESTALE);
    memset(&a, 0, sizeof(a));
    a.stat.fd = fd;
    assert_int_equal(pt_call(t, VL_FOP_STAT, &a, &r), 0);
    assert_int_equal(r.iatt.nlink, 0);
    assert_true(vl_gfid_equal(&r.iatt.gfid, &f->gfid));
    vl_reply_clear(&r);
    memset(&a, 0, sizeof(a));
    vl_fd_unref(fd);
    /* The last close lets go of it for good. */
    assert_int_equal(pt_stat(t, f, &ia), -ESTALE);
    snprintf(path, sizeof(path), "%s/.mortar/unlink", t->brick);
    assert_int_equal(pt_count_entries(path), 0);
    vl_inode_unref(f);

    /* Not open: the handle goes (after the reply, see pt_unlink). */
    assert_int_equal(pt_create(t, t->root, "g", O_RDWR, 0644, &f, NULL), 0);
    assert_int_equal(pt_unlink(t, t->root, "g"), 0);
    assert_false(pt_handle_exists(t, &f->gfid, NULL));
    assert_int_equal(pt_count_entries(path), 0);
    assert_int_equal(pt_stat(t, f, &ia), -ESTALE);
    vl_inode_unref(f);

    assert_int_equal(pt_mkdir(t, t->root, "d", 0755, &d), 0);
    assert_int_equal(pt_unlink(t, t->root, "d"), -EISDIR);
    assert_int_equal(pt_create(t, d, "inner", O_RDWR, 0644, NULL, NULL), 0);
    a.rmdir.loc.parent = t->root;
    a.rmdir.loc.name = "d";
    assert_int_equal(pt_call(t, VL_FOP_RMDIR, &a, &r), -ENOTEMPTY);
    vl_reply_clear(&r);
    assert_int_equal(pt_unlink(t, d, "inner"), 0);
    assert_int_equal(pt_call(t, VL_FOP_RMDIR, &a, &r), 0);
    vl_reply_clear(&r);
    posix_janitor_flush(t->xl); /* the handle symlink goes after */
    assert_false(pt_handle_exists(t, &d->gfid, NULL));
    vl_inode_unref(d);
}


static void
test_owner_mode_and_setgid(void **state)
{
    struct pt *t = *state;
    char path[PATH_MAX];
    vl_inode_t *sg = NULL, *sub = NULL;
    struct stat st;

    t->caller.uid = 1234;
    t->caller.gid = 5678;
    assert_int_equal(pt_create(t, t->root, "owned", O_RDWR, 0666, NULL,
                               NULL),
                     0);
    snprintf(path, sizeof(path), "%s/owned", t->brick);
    assert_int_equal(lstat(path, &st), 0);
    assert_int_equal(st.st_uid, 1234);
    assert_int_equal(st.st_gid, 5678);
    assert_int_equal(st.st_mode & 07777, 0644); /* umask 022 */

    t->caller.uid = 0;
    t->caller.gid = 0;
    assert_int_equal(pt_mkdir(t, t->root, "sg", 0777, &sg), 0);
    snprintf(path, sizeof(path), "%s/sg", t->brick);
    assert_int_equal(chown(path, 0, 4242), 0);
    assert_int_equal(chmod(path, 02775), 0);
    t->caller.uid = 1234;
    t->caller.gid = 5678;
    assert_int_equal(pt_mkdir(t, sg, "sub", 0755, &sub), 0);
    assert_int_equal(pt_create(t, sg, "file", O_RDWR, 0644, NULL, NULL), 0);
    t->caller.uid = 0;
    t->caller.gid = 0;
    snprintf(path, sizeof(path), "%s/sg/sub", t->brick);
    assert_int_equal(lstat(path, &st), 0);
    assert_int_equal(st.st_uid, 1234);
    assert_int_equal(st.st_gid, 4242);
    assert_true(st.st_mode & S_ISGID);
    snprintf(path, sizeof(path), "%s/sg/file", t->brick);
    assert_int_equal(lstat(path, &st), 0);
    assert_int_equal(st.st_gid, 4242);
    vl_inode_unref(sg);
    vl_inode_unref(sub);
}


static int
pt_setattr(struct pt *t, vl_inode_t *inode, vl_fd_t *fd,
           const struct vl_iatt *attr, uint32_t valid, struct vl_iatt *out)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.setattr.loc.inode = inode;
    a.setattr.fd = fd;
    a.setattr.attr = *attr;
    a.setattr.valid = valid;
    rc = pt_call(t, VL_FOP_SETATTR, &a, &r);
    if (rc == 0 && out != NULL)
        *out = r.iatt;
    vl_reply_clear(&r);
    return rc;
}


static int
pt_access(struct pt *t, vl_inode_t *inode, int mask)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.access.loc.inode = inode;
    a.access.mask = mask;
    rc = pt_call(t, VL_FOP_ACCESS, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


static void
test_setattr_and_access(void **state)
{
    struct pt *t = *state;
    struct vl_iatt at = {0}, ia;
    vl_inode_t *f = NULL;
    vl_fd_t *fd = NULL;

    assert_int_equal(pt_create(t, t->root, "f", O_RDWR, 0644, &f, &fd), 0);
    at.mode = 0600;
    at.uid = 100;
    at.gid = 200;
    at.size = 12345;
    at.atime = 1000000000;
    at.atime_ns = 5;
    at.mtime = 1100000000;
    at.mtime_ns = 7;
    assert_int_equal(pt_setattr(t, f, NULL, &at,
                                VL_SET_MODE | VL_SET_UID | VL_SET_GID
                                    | VL_SET_SIZE | VL_SET_ATIME
                                    | VL_SET_MTIME,
                                &ia),
                     0);
    assert_int_equal(ia.mode & 07777, 0600);
    assert_int_equal(ia.uid, 100);
    assert_int_equal(ia.gid, 200);
    assert_int_equal(ia.size, 12345);
    assert_int_equal(ia.atime, 1000000000);
    assert_int_equal(ia.atime_ns, 5);
    assert_int_equal(ia.mtime, 1100000000);
    assert_int_equal(ia.mtime_ns, 7);
    assert_true(vl_gfid_equal(&ia.gfid, &f->gfid));

    /* Through the fd: truncate and mtime now. */
    at.size = 10;
    assert_int_equal(pt_setattr(t, NULL, fd, &at,
                                VL_SET_SIZE | VL_SET_MTIME_NOW, &ia),
                     0);
    assert_int_equal(ia.size, 10);
    assert_true(ia.mtime > 1100000000);

    t->caller.uid = 100;
    t->caller.gid = 1;
    assert_int_equal(pt_access(t, f, R_OK | W_OK), 0);
    assert_int_equal(pt_access(t, f, X_OK), -EACCES);
    t->caller.uid = 300;
    assert_int_equal(pt_access(t, f, R_OK), -EACCES);
    t->caller.n_groups = 1;
    t->caller.groups[0] = 200;
    at.mode = 0640;
    t->caller.uid = 0;
    assert_int_equal(pt_setattr(t, f, NULL, &at, VL_SET_MODE, NULL), 0);
    t->caller.uid = 300;
    assert_int_equal(pt_access(t, f, R_OK), 0);
    assert_int_equal(pt_access(t, f, W_OK), -EACCES);
    t->caller.uid = 0;
    t->caller.gid = 0;
    t->caller.n_groups = 0;
    vl_fd_unref(fd);
    vl_inode_unref(f);
}


static void
test_symlink_mknod(void **state)
{
    struct pt *t = *state;
    union vl_fop_args a = {0};
    vl_inode_t *fresh = vl_inode_new(t->graph->itable), *s;
    struct vl_reply r;
    struct vl_iatt at = {0}, ia;
    char path[PATH_MAX];
    struct stat st;

    a.symlink.loc.parent = t->root;
    a.symlink.loc.name = "ln";
    a.symlink.loc.inode = fresh;
    a.symlink.target = "../somewhere/else";
    vl_gfid_generate(&a.symlink.gfid);
    assert_int_equal(pt_call(t, VL_FOP_SYMLINK, &a, &r), 0);
    assert_true(S_ISLNK(r.iatt.mode));
    s = vl_inode_link(fresh, &r.iatt);
    vl_inode_unref(fresh);
    vl_reply_clear(&r);

    /* The symlink is reached through its handle (a hard link to it). */
    memset(&a, 0, sizeof(a));
    a.readlink.loc.inode = s;
    a.readlink.size = 4096;
    assert_int_equal(pt_call(t, VL_FOP_READLINK, &a, &r), 0);
    assert_string_equal(r.link, "../somewhere/else");
    vl_reply_clear(&r);
    at.uid = 77;
    at.atime = 12345;
    assert_int_equal(pt_setattr(t, s, NULL, &at, VL_SET_UID | VL_SET_ATIME,
                                &ia),
                     0);
    assert_true(S_ISLNK(ia.mode));
    assert_int_equal(ia.uid, 77);
    vl_inode_unref(s);

    memset(&a, 0, sizeof(a));
    fresh = vl_inode_new(t->graph->itable);
    a.mknod.loc.parent = t->root;
    a.mknod.loc.name = "fifo";
    a.mknod.loc.inode = fresh;
    a.mknod.mode = S_IFIFO | 0644;
    vl_gfid_generate(&a.mknod.gfid);
    assert_int_equal(pt_call(t, VL_FOP_MKNOD, &a, &r), 0);
    assert_true(S_ISFIFO(r.iatt.mode));
    vl_reply_clear(&r);
    vl_inode_unref(fresh);
    snprintf(path, sizeof(path), "%s/fifo", t->brick);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));

    /* A character device (/dev/null's numbers) keeps its rdev. */
    memset(&a, 0, sizeof(a));
    fresh = vl_inode_new(t->graph->itable);
    a.mknod.loc.parent = t->root;
    a.mknod.loc.name = "null";
    a.mknod.loc.inode = fresh;
    a.mknod.mode = S_IFCHR | 0666;
    a.mknod.umask = 022;
    a.mknod.rdev = makedev(1, 3);
    vl_gfid_generate(&a.mknod.gfid);
    assert_int_equal(pt_call(t, VL_FOP_MKNOD, &a, &r), 0);
    assert_true(S_ISCHR(r.iatt.mode));
    assert_int_equal(r.iatt.rdev, makedev(1, 3));
    assert_int_equal(r.iatt.mode & 07777, 0644);
    vl_reply_clear(&r);
    vl_inode_unref(fresh);

    /* A fresh graph finds the symlink by GFID (not a directory handle). */
    pt_restart(t);
    assert_int_equal(pt_lookup(t, t->root, "ln", &ia, NULL), 0);
    assert_int_equal(pt_lookup_gfid(t, &ia.gfid, &ia, NULL), 0);
    assert_true(S_ISLNK(ia.mode));
}


static void
test_append_and_copy_file_range(void **state)
{
    struct pt *t = *state;
    union vl_fop_args a = {0};
    vl_inode_t *f = NULL, *g = NULL;
    vl_fd_t *fd = NULL, *gd = NULL;
    struct vl_reply r;
    char buf[32];

    assert_int_equal(pt_create(t, t->root, "f", O_RDWR, 0644, &f, &fd), 0);
    assert_int_equal(pt_write(t, fd, 0, "0123456789", 10, 0), 0);
    /* An O_APPEND write goes to the end whatever the offset. */
    assert_int_equal(pt_write(t, fd, 2, "ab", 2, O_APPEND), 0);
    assert_int_equal(pt_read(t, fd, 0, buf, sizeof(buf)), 12);
    assert_memory_equal(buf, "0123456789ab", 12);
    vl_fd_unref(fd);
    assert_int_equal(pt_open(t, f, O_WRONLY | O_APPEND, &fd), 0);
    assert_int_equal(pt_write(t, fd, 0, "cd", 2, 0), 0);
    vl_fd_unref(fd);
    assert_int_equal(pt_open(t, f, O_RDONLY, &fd), 0);

    assert_int_equal(pt_create(t, t->root, "g", O_RDWR, 0644, &g, &gd), 0);
    a.copy_file_range.fd_in = fd;
    a.copy_file_range.off_in = 4;
    a.copy_file_range.fd_out = gd;
    a.copy_file_range.off_out = 1;
    a.copy_file_range.len = 10;
    assert_int_equal(pt_call(t, VL_FOP_COPY_FILE_RANGE, &a, &r), 0);
    assert_int_equal(r.count, 10);
    assert_int_equal(r.iatt.size, 11);
    vl_reply_clear(&r);
    assert_int_equal(pt_read(t, gd, 1, buf, sizeof(buf)), 10);
    assert_memory_equal(buf, "456789abcd", 10);
    /* Short read at EOF. */
    assert_int_equal(pt_read(t, gd, 8, buf, sizeof(buf)), 3);
    assert_int_equal(pt_read(t, gd, 100, buf, sizeof(buf)), 0);

    /* Opening with O_TRUNC empties the file. */
    vl_fd_unref(gd);
    assert_int_equal(pt_open(t, g, O_RDWR | O_TRUNC, &gd), 0);
    assert_int_equal(pt_read(t, gd, 0, buf, sizeof(buf)), 0);
    vl_fd_unref(gd);
    vl_fd_unref(fd);
    vl_inode_unref(f);
    vl_inode_unref(g);
}


/* Every entry fop answers a name over NAME_MAX with ENAMETOOLONG, as the
 * file system below would (the name never reaches it), and a 255-byte
 * name works; either name of a rename, link's new name. */
static void
pt_long_names(struct pt *t, const char *longname)
{
    union vl_fop_args a;
    struct vl_reply r;
    char name255[NAME_MAX + 1];
    vl_inode_t *src = NULL, *fresh;

    assert_int_equal(pt_lookup(t, t->root, longname, NULL, NULL),
                     -ENAMETOOLONG);
    assert_int_equal(pt_create(t, t->root, longname, O_RDWR, 0644, NULL,
                               NULL),
                     -ENAMETOOLONG);
    assert_int_equal(pt_unlink(t, t->root, longname), -ENAMETOOLONG);
    assert_int_equal(pt_create(t, t->root, "src", O_RDWR, 0644, &src, NULL),
                     0);
    assert_int_equal(pt_rename(t, t->root, "src", t->root, longname, 0,
                               NULL),
                     -ENAMETOOLONG);
    assert_int_equal(pt_rename(t, t->root, longname, t->root, "dst", 0,
                               NULL),
                     -ENAMETOOLONG);
    memset(&a, 0, sizeof(a));
    a.link.oldloc.inode = src;
    a.link.newloc.parent = t->root;
    a.link.newloc.name = longname;
    assert_int_equal(pt_call(t, VL_FOP_LINK, &a, &r), -ENAMETOOLONG);
    vl_reply_clear(&r);
    memset(&a, 0, sizeof(a));
    a.rmdir.loc.parent = t->root;
    a.rmdir.loc.name = longname;
    assert_int_equal(pt_call(t, VL_FOP_RMDIR, &a, &r), -ENAMETOOLONG);
    vl_reply_clear(&r);
    fresh = vl_inode_new(t->graph->itable);
    memset(&a, 0, sizeof(a));
    a.symlink.loc.parent = t->root;
    a.symlink.loc.name = longname;
    a.symlink.loc.inode = fresh;
    a.symlink.target = "src";
    vl_gfid_generate(&a.symlink.gfid);
    assert_int_equal(pt_call(t, VL_FOP_SYMLINK, &a, &r), -ENAMETOOLONG);
    vl_reply_clear(&r);
    memset(&a, 0, sizeof(a));
    a.mknod.loc.parent = t->root;
    a.mknod.loc.name = longname;
    a.mknod.loc.inode = fresh;
    a.mknod.mode = S_IFIFO | 0644;
    vl_gfid_generate(&a.mknod.gfid);
    assert_int_equal(pt_call(t, VL_FOP_MKNOD, &a, &r), -ENAMETOOLONG);
    vl_reply_clear(&r);
    vl_inode_unref(fresh);
    /* 255 bytes is a name like any other. */
    memset(name255, 'y', NAME_MAX);
    name255[NAME_MAX] = '\0';
    assert_int_equal(pt_rename(t, t->root, "src", t->root, name255, 0,
                               NULL),
                     0);
    assert_int_equal(pt_lookup(t, t->root, name255, NULL, NULL), 0);
    assert_int_equal(pt_unlink(t, t->root, name255), 0);
    vl_inode_unref(src);
}


static void
test_bad_names_and_nosys(void **state)
{
    struct pt *t = *state;
    union vl_fop_args a = {0};
    struct vl_reply r;
    char longname[NAME_MAX + 2];

    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    assert_int_equal(pt_mkdir(t, t->root, longname, 0755, NULL),
                     -ENAMETOOLONG);
    pt_long_names(t, longname);
    assert_int_equal(pt_mkdir(t, t->root, "a/b", 0755, NULL), -EINVAL);
    assert_int_equal(pt_lookup(t, t->root, "..", NULL, NULL), -EINVAL);
    assert_int_equal(pt_mkdir(t, t->root, "dup", 0755, NULL), 0);
    assert_int_equal(pt_mkdir(t, t->root, "dup", 0755, NULL), -EEXIST);
    /* A GFID already used by a live object is refused and undone. */
    {
        vl_inode_t *f = NULL, *fresh = vl_inode_new(t->graph->itable);
        char path[PATH_MAX];
        struct stat st;

        assert_int_equal(pt_create(t, t->root, "owner", O_RDWR, 0644, &f,
                                   NULL),
                         0);
        a.mkdir.loc.parent = t->root;
        a.mkdir.loc.name = "clash";
        a.mkdir.loc.inode = fresh;
        a.mkdir.mode = 0755;
        a.mkdir.gfid = f->gfid;
        assert_int_equal(pt_call(t, VL_FOP_MKDIR, &a, &r), -EEXIST);
        vl_reply_clear(&r);
        snprintf(path, sizeof(path), "%s/clash", t->brick);
        assert_int_equal(lstat(path, &st), -1);
        assert_true(pt_handle_exists(t, &f->gfid, &st));
        assert_true(S_ISREG(st.st_mode));
        vl_inode_unref(fresh);
        vl_inode_unref(f);
        memset(&a, 0, sizeof(a));
    }
    a.inodelk.loc.inode = t->root;
    assert_int_equal(pt_call(t, VL_FOP_INODELK, &a, &r), -ENOSYS);
    vl_reply_clear(&r);
    memset(&a, 0, sizeof(a));
    assert_int_equal(pt_call(t, VL_FOP_STATFS, &a, &r), 0);
    assert_true(r.statvfs.f_blocks > 0);
    vl_reply_clear(&r);
}


struct pt_worker {
    struct pt *t;       /* shared fixture */
    vl_inode_t *shared; /* directory all workers create in */
    vl_inode_t *own;    /* this worker's directory */
    int id;             /* worker number */
    int rc;             /* first failure, or 0 */
};


static void *
pt_worker_main(void *arg)
{
    struct pt_worker *w = arg;
    char name[64];

    for (int i = 0; i < 100 && w->rc == 0; i++) {
        struct vl_iatt ia;

        snprintf(name, sizeof(name), "w%d-%d", w->id, i);
        w->rc = pt_create(w->t, w->shared, name, O_RDWR, 0644, NULL, NULL);
        if (w->rc == 0)
            w->rc = pt_lookup(w->t, w->shared, name, &ia, NULL);
        if (w->rc == 0 && i % 2 == 0)
            w->rc = pt_rename(w->t, w->shared, name, w->own, name, 0, NULL);
    }
    return NULL;
}


/* Several threads create, look up and move files through one shared
 * directory inode (its cached fd) at once; every file ends up where its
 * worker put it, with a handle. */
static void
test_concurrent_workers(void **state)
{
    struct pt *t = *state;
    enum { N = 4 };
    struct pt_worker w[N];
    pthread_t th[N];
    vl_inode_t *shared = NULL;
    struct vl_iatt ia;
    char name[64];

    assert_int_equal(pt_mkdir(t, t->root, "shared", 0755, &shared), 0);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "own%d", i);
        w[i] = (struct pt_worker){.t = t, .shared = shared, .id = i};
        assert_int_equal(pt_mkdir(t, t->root, name, 0755, &w[i].own), 0);
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&th[i], NULL, pt_worker_main, &w[i]),
                         0);
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].rc, 0);
    }
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < 100; j++) {
            vl_inode_t *dir = j % 2 == 0 ? w[i].own : shared;

            snprintf(name, sizeof(name), "w%d-%d", i, j);
            assert_int_equal(pt_lookup(t, dir, name, &ia, NULL), 0);
            assert_true(pt_handle_exists(t, &ia.gfid, NULL));
        }
        vl_inode_unref(w[i].own);
    }
    vl_inode_unref(shared);
}


const struct CMUnitTest pt_ns_tests[] = {
    cmocka_unit_test_setup_teardown(test_rename_dir_updates_handle, pt_setup,
                                    pt_teardown),
    cmocka_unit_test_setup_teardown(test_rename_over_hardlink_nlink,
                                    pt_setup, pt_teardown),
    cmocka_unit_test_setup_teardown(test_exchange_dirs_updates_both_handles,
                                    pt_setup, pt_teardown),
    cmocka_unit_test_setup_teardown(test_unlink_open_file_keeps_data,
                                    pt_setup, pt_teardown),
    cmocka_unit_test_setup_teardown(test_owner_mode_and_setgid, pt_setup,
                                    pt_teardown),
    cmocka_unit_test_setup_teardown(test_setattr_and_access, pt_setup,
                                    pt_teardown),
    cmocka_unit_test_setup_teardown(test_symlink_mknod, pt_setup,
                                    pt_teardown),
    cmocka_unit_test_setup_teardown(test_append_and_copy_file_range,
                                    pt_setup, pt_teardown),
    cmocka_unit_test_setup_teardown(test_bad_names_and_nosys, pt_setup,
                                    pt_teardown),
    cmocka_unit_test_setup_teardown(test_concurrent_workers, pt_setup,
                                    pt_teardown),
};
const size_t pt_n_ns_tests = VL_ARRAY_SIZE(pt_ns_tests);
