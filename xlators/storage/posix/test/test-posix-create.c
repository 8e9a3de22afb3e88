/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-posix-create: the short create path of storage/posix (objects made
 * with their final mode, chown/chmod only when needed, GFID through the
 * fd, cached handle directories) checked against the brick on disk:
 * mode, owner and GFID of files, directories, nodes and symlinks made by
 * a non-root caller under a brick process umask that differs from the
 * client's; and a handle directory removed behind the brick's back being
 * made again by the next create that needs it; the parent's attributes
 * (postparent) answered by create, mkdir, rename, unlink and rmdir; an
 * xattr set by mkdir itself (vl_mkdir_args.xattr_name); unlink's short
 * path with the client's inode as a hint (GFID from the handle's stat,
 * hard links, open files, stale hints); a lookup arriving inside a mkdir
 * waits for it instead of healing its directory (posix-making.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "posix-test.h"
#include "../posix.h"


/* Creates name in parent with fop op (CREATE, MKDIR, MKNOD, SYMLINK),
 * mode and client umask; *gfid gets the GFID it was given. */
static int
pc_make(struct pt *t, vl_fop_t op, const char *name, uint32_t mode,
        uint32_t umask_, vl_gfid_t *gfid)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode = vl_inode_new(t->graph->itable);
    vl_fd_t *fd = NULL;
    struct vl_loc loc = {.parent = t->root, .name = name, .inode = inode};
    int rc;

    assert_non_null(inode);
    vl_gfid_generate(gfid);
    switch (op) {
    case VL_FOP_CREATE:
        fd = vl_fd_new(inode, O_RDWR, 1);
        assert_non_null(fd);
        a.create.loc = loc;
        a.create.flags = O_RDWR;
        a.create.mode = mode;
        a.create.umask = umask_;
        a.create.fd = fd;
        a.create.gfid = *gfid;
        break;
    case VL_FOP_MKDIR:
        a.mkdir.loc = loc;
        a.mkdir.mode = mode;
        a.mkdir.umask = umask_;
        a.mkdir.gfid = *gfid;
        break;
    case VL_FOP_MKNOD:
        a.mknod.loc = loc;
        a.mknod.mode = S_IFIFO | mode;
        a.mknod.umask = umask_;
        a.mknod.gfid = *gfid;
        break;
    default:
        a.symlink.loc = loc;
        a.symlink.target = "some/where";
        a.symlink.gfid = *gfid;
        break;
    }
    rc = pt_call(t, op, &a, &r);
    if (rc == 0)
        assert_true(vl_gfid_equal(&r.iatt.gfid, gfid));
    vl_reply_clear(&r);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
    return rc;
}


/* Checks owner, mode (with type) and GFID of brick-relative rel. */
static void
pc_check(struct pt *t, const char *rel, uid_t uid, gid_t gid, mode_t mode,
         const vl_gfid_t *gfid)
{
    char path[PATH_MAX], hrel[128];
    vl_gfid_t got;
    struct stat st;

    snprintf(path, sizeof(path), "%s/%s", t->brick, rel);
    assert_int_equal(lstat(path, &st), 0);
    assert_int_equal(st.st_uid, uid);
    assert_int_equal(st.st_gid, gid);
    assert_int_equal(st.st_mode, mode);
    assert_int_equal(pt_disk_gfid(t, rel, &got), 0);
    assert_true(vl_gfid_equal(&got, gfid));
    pt_handle_path(gfid, hrel, sizeof(hrel));
    snprintf(path, sizeof(path), "%s/%s", t->brick, hrel);
    assert_int_equal(lstat(path, &st), 0);
}


/* The brick runs with umask 077 and the client asks for other bits: the
 * objects still get exactly the client's mode, and the caller's ids. */
static void
test_create_mode_owner_gfid(void **state)
{
    struct pt *t = *state;
    mode_t saved = umask(077);
    vl_gfid_t g;

    pt_restart(t); /* posix reads the process umask at init */
    umask(saved);
    t->caller.uid = 1234;
    t->caller.gid = 5678;

    assert_int_equal(pc_make(t, VL_FOP_CREATE, "f", 0666, 0, &g), 0);
    pc_check(t, "f", 1234, 5678, S_IFREG | 0666, &g);
    assert_int_equal(pc_make(t, VL_FOP_CREATE, "suid", 04755, 022, &g), 0);
    pc_check(t, "suid", 1234, 5678, S_IFREG | 04755, &g);
    assert_int_equal(pc_make(t, VL_FOP_MKDIR, "d", 01777, 0, &g), 0);
    pc_check(t, "d", 1234, 5678, S_IFDIR | 01777, &g);
    assert_int_equal(pc_make(t, VL_FOP_MKNOD, "p", 0640, 0, &g), 0);
    pc_check(t, "p", 1234, 5678, S_IFIFO | 0640, &g);
    assert_int_equal(pc_make(t, VL_FOP_SYMLINK, "l", 0, 0, &g), 0);
    pc_check(t, "l", 1234, 5678, S_IFLNK | 0777, &g);

    /* Root caller, the client's umask only: no chown, mode as asked. */
    t->caller.uid = 0;
    t->caller.gid = 0;
    assert_int_equal(pc_make(t, VL_FOP_CREATE, "r", 0644, 027, &g), 0);
    pc_check(t, "r", 0, 0, S_IFREG | 0640, &g);
    assert_int_equal(pc_make(t, VL_FOP_MKDIR, "rd", 0775, 002, &g), 0);
    pc_check(t, "rd", 0, 0, S_IFDIR | 0775, &g);
}


/* Handle directories are remembered; one removed behind the brick's back
 * is made again by the next create whose handle goes there. */
static void
test_handle_dir_cache_survives_removed_dir(void **state)
{
    struct pt *t = *state;
    char path[PATH_MAX], hrel[128];
    vl_inode_t *f = NULL, *d = NULL;
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_gfid_t g2;
    vl_inode_t *inode;
    vl_fd_t *fd;

    assert_int_equal(pt_create(t, t->root, "one", O_RDWR, 0644, &f, NULL),
                     0);
    assert_true(posix_handle_dir_known(t->xl, &f->gfid));

    /* Remove the handle and its directory xx/yy on disk. */
    pt_handle_path(&f->gfid, hrel, sizeof(hrel));
    snprintf(path, sizeof(path), "%s/%s", t->brick, hrel);
    assert_int_equal(unlink(path), 0);
    *strrchr(path, '/') = '\0';
    assert_int_equal(rmdir(path), 0);

    /* A file and a directory whose GFIDs fall in the same xx/yy. */
    for (int i = 0; i < 2; i++) {
        inode = vl_inode_new(t->graph->itable);
        assert_non_null(inode);
        vl_gfid_generate(&g2);
        g2.bytes[0] = f->gfid.bytes[0];
        g2.bytes[1] = f->gfid.bytes[1];
        memset(&a, 0, sizeof(a));
        if (i == 0) {
            fd = vl_fd_new(inode, O_RDWR, 1);
            assert_non_null(fd);
            a.create.loc.parent = t->root;
            a.create.loc.name = "two";
            a.create.loc.inode = inode;
            a.create.flags = O_RDWR;
            a.create.mode = 0644;
            a.create.fd = fd;
            a.create.gfid = g2;
            assert_int_equal(pt_call(t, VL_FOP_CREATE, &a, &r), 0);
            vl_fd_unref(fd);
            pc_check(t, "two", 0, 0, S_IFREG | 0644, &g2);
        } else {
            /* The directory itself is gone again: mkdir's symlink. */
            pt_handle_path(&g2, hrel, sizeof(hrel));
            snprintf(path, sizeof(path), "%s/%s", t->brick, hrel);
            *strrchr(path, '/') = '\0';
            assert_true(posix_handle_dir_known(t->xl, &g2));
            {
                char cmd[PATH_MAX + 16];

                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
                assert_int_equal(system(cmd), 0);
            }
            a.mkdir.loc.parent = t->root;
            a.mkdir.loc.name = "dir";
            a.mkdir.loc.inode = inode;
            a.mkdir.mode = 0755;
            a.mkdir.gfid = g2;
            assert_int_equal(pt_call(t, VL_FOP_MKDIR, &a, &r), 0);
            pc_check(t, "dir", 0, 0, S_IFDIR | 0755, &g2);
            assert_int_equal(pt_lookup_gfid(t, &g2, NULL, &d), 0);
            vl_inode_unref(d);
        }
        vl_reply_clear(&r);
        vl_inode_unref(inode);
        assert_true(posix_handle_dir_known(t->xl, &g2));
    }

    /* The first level xx removed too: a create into a new xx/yy under it
     * (the brick knows xx, not xx/yy) makes both again. */
    pt_handle_path(&f->gfid, hrel, sizeof(hrel));
    snprintf(path, sizeof(path), "rm -rf '%s/%.18s'", t->brick, hrel);
    assert_int_equal(system(path), 0);
    inode = vl_inode_new(t->graph->itable);
    assert_non_null(inode);
    fd = vl_fd_new(inode, O_RDWR, 1);
    assert_non_null(fd);
    vl_gfid_generate(&g2);
    g2.bytes[0] = f->gfid.bytes[0];
    g2.bytes[1] = (uint8_t)(f->gfid.bytes[1] + 1);
    assert_false(posix_handle_dir_known(t->xl, &g2));
    memset(&a, 0, sizeof(a));
    a.create.loc.parent = t->root;
    a.create.loc.name = "three";
    a.create.loc.inode = inode;
    a.create.flags = O_RDWR;
    a.create.mode = 0600;
    a.create.fd = fd;
    a.create.gfid = g2;
    assert_int_equal(pt_call(t, VL_FOP_CREATE, &a, &r), 0);
    vl_reply_clear(&r);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
    pc_check(t, "three", 0, 0, S_IFREG | 0600, &g2);
    vl_inode_unref(f);
}


/* Sets the brick directory rel's mtime to 1000000000 (an old time). */
static void
pc_age_dir(struct pt *t, const char *rel)
{
    char path[PATH_MAX];
    struct timespec ts[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};

    snprintf(path, sizeof(path), "%s/%s", t->brick, rel);
    assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}


/* Checks an entry reply's postparent against the brick directory rel as
 * it is now: same GFID as dir, mtime moved on from the aged one, and
 * the nlink and mtime the brick shows. */
static void
pc_check_pp(struct pt *t, const struct vl_iatt *pp, bool has,
            const char *rel, vl_inode_t *dir, uint32_t nlink)
{
    char path[PATH_MAX];
    struct stat st;

    snprintf(path, sizeof(path), "%s/%s", t->brick, rel);
    assert_int_equal(stat(path, &st), 0);
    assert_true(has);
    assert_true(vl_gfid_equal(&pp->gfid, &dir->gfid));
    assert_true(S_ISDIR(pp->mode));
    assert_int_equal(pp->nlink, nlink);
    assert_int_equal(pp->nlink, st.st_nlink);
    assert_true(pp->mtime > 1000000000);
    assert_int_equal(pp->mtime, st.st_mtim.tv_sec);
    assert_int_equal(pp->mtime_ns, st.st_mtim.tv_nsec);
}


/* Every fop that changes a name answers its directory's attributes
 * after the change (what the client would otherwise STAT again). */
static void
test_postparent(void **state)
{
    struct pt *t = *state;
    union vl_fop_args a;
    struct vl_reply r;
    vl_inode_t *d, *d2, *f, *fresh;
    vl_fd_t *fd;

    assert_int_equal(pt_mkdir(t, t->root, "pp", 0755, &d), 0);
    assert_int_equal(pt_mkdir(t, t->root, "pp2", 0755, &d2), 0);

    /* create: a new file; nlink stays 2 */
    pc_age_dir(t, "pp");
    fresh = vl_inode_new(t->graph->itable);
    fd = vl_fd_new(fresh, O_RDWR, 1);
    memset(&a, 0, sizeof(a));
    a.create.loc = (struct vl_loc){.parent = d, .name = "f", .inode = fresh};
    a.create.flags = O_RDWR;
    a.create.mode = 0644;
    a.create.fd = fd;
    vl_gfid_generate(&a.create.gfid);
    assert_int_equal(pt_call(t, VL_FOP_CREATE, &a, &r), 0);
    pc_check_pp(t, &r.postparent, r.has_postparent, "pp", d, 2);
    f = vl_inode_link(fresh, &r.iatt);
    vl_reply_clear(&r);
    vl_fd_unref(fd);
    vl_inode_unref(fresh);

    /* mkdir: nlink + 1 */
    pc_age_dir(t, "pp");
    fresh = vl_inode_new(t->graph->itable);
    memset(&a, 0, sizeof(a));
    a.mkdir.loc = (struct vl_loc){.parent = d, .name = "sub", .inode = fresh};
    a.mkdir.mode = 0755;
    vl_gfid_generate(&a.mkdir.gfid);
    assert_int_equal(pt_call(t, VL_FOP_MKDIR, &a, &r), 0);
    pc_check_pp(t, &r.postparent, r.has_postparent, "pp", d, 3);
    vl_reply_clear(&r);
    vl_inode_unref(fresh);

    /* rename across directories: both parents */
    pc_age_dir(t, "pp");
    pc_age_dir(t, "pp2");
    memset(&a, 0, sizeof(a));
    a.rename.oldloc = (struct vl_loc){.parent = d, .name = "f", .inode = f};
    a.rename.newloc = (struct vl_loc){.parent = d2, .name = "g"};
    assert_int_equal(pt_call(t, VL_FOP_RENAME, &a, &r), 0);
    pc_check_pp(t, &r.postparent, r.has_postparent, "pp", d, 3);
    pc_check_pp(t, &r.postparent2, r.has_postparent2, "pp2", d2, 2);
    vl_reply_clear(&r);

    /* unlink and rmdir: mtime moves, rmdir's nlink - 1 */
    pc_age_dir(t, "pp2");
    memset(&a, 0, sizeof(a));
    a.unlink.loc = (struct vl_loc){.parent = d2, .name = "g"};
    assert_int_equal(pt_call(t, VL_FOP_UNLINK, &a, &r), 0);
    pc_check_pp(t, &r.postparent, r.has_postparent, "pp2", d2, 2);
    vl_reply_clear(&r);
    pc_age_dir(t, "pp");
    memset(&a, 0, sizeof(a));
    a.rmdir.loc = (struct vl_loc){.parent = d, .name = "sub"};
    assert_int_equal(pt_call(t, VL_FOP_RMDIR, &a, &r), 0);
    pc_check_pp(t, &r.postparent, r.has_postparent, "pp", d, 2);
    vl_reply_clear(&r);

    /* a failed op answers none */
    memset(&a, 0, sizeof(a));
    a.unlink.loc = (struct vl_loc){.parent = d, .name = "nothere"};
    assert_int_equal(pt_call(t, VL_FOP_UNLINK, &a, &r), -ENOENT);
    assert_false(r.has_postparent);
    vl_reply_clear(&r);

    vl_inode_unref(f);
    vl_inode_unref(d2);
    vl_inode_unref(d);
}


/* mkdir with an xattr (distribute's layout in the mkdir): the new
 * directory carries it with its GFID, mode and the caller's owner; a key
 * clients may not set is refused before anything is made. */
static void
test_mkdir_xattr(void **state)
{
    static const unsigned char val[20] = {0, 0, 0, 1, 0, 0, 0, 1, 0x40};
    struct pt *t = *state;
    union vl_fop_args a;
    struct vl_reply r;
    vl_inode_t *fresh;
    unsigned char got[32];
    char path[PATH_MAX];
    struct stat st;
    vl_gfid_t g;
    ssize_t n;

    t->caller.uid = 1234;
    t->caller.gid = 5678;
    fresh = vl_inode_new(t->graph->itable);
    memset(&a, 0, sizeof(a));
    a.mkdir.loc = (struct vl_loc){.parent = t->root, .name = "lx",
                                  .inode = fresh};
    a.mkdir.mode = 01750;
    a.mkdir.umask = 022;
    vl_gfid_generate(&a.mkdir.gfid);
    a.mkdir.xattr_name = "trusted.mortar.dht";
    a.mkdir.xattr_value = val;
    a.mkdir.xattr_size = sizeof(val);
    assert_int_equal(pt_call(t, VL_FOP_MKDIR, &a, &r), 0);
    assert_true(vl_gfid_equal(&r.iatt.gfid, &a.mkdir.gfid));
    vl_reply_clear(&r);
    snprintf(path, sizeof(path), "%s/lx", t->brick);
    n = lgetxattr(path, "trusted.mortar.dht", got, sizeof(got));
    assert_int_equal(n, sizeof(val));
    assert_memory_equal(got, val, sizeof(val));
    assert_int_equal(pt_disk_gfid(t, "lx", &g), 0);
    assert_true(vl_gfid_equal(&g, &a.mkdir.gfid));
    assert_int_equal(lstat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 01750);
    assert_int_equal(st.st_uid, 1234);
    assert_int_equal(st.st_gid, 5678);
    vl_inode_unref(fresh);

    /* The brick's own keys stay EPERM; no directory is left behind. */
    fresh = vl_inode_new(t->graph->itable);
    a.mkdir.loc = (struct vl_loc){.parent = t->root, .name = "bad",
                                  .inode = fresh};
    vl_gfid_generate(&a.mkdir.gfid);
    a.mkdir.xattr_name = "trusted.mortar.gfid";
    assert_int_equal(pt_call(t, VL_FOP_MKDIR, &a, &r), -EPERM);
    vl_reply_clear(&r);
    snprintf(path, sizeof(path), "%s/bad", t->brick);
    assert_int_equal(lstat(path, &st), -1);
    assert_int_equal(errno, ENOENT);
    /* Nor an oversized value. */
    a.mkdir.xattr_name = "user.big";
    a.mkdir.xattr_size = 65 * 1024;
    assert_int_equal(pt_call(t, VL_FOP_MKDIR, &a, &r), -EINVAL);
    vl_reply_clear(&r);
    assert_int_equal(lstat(path, &st), -1);
    vl_inode_unref(fresh);
}


/* ---- unlink with the client's inode as a hint ---- */

static int
pc_unlink_hint(struct pt *t, const char *name, vl_inode_t *hint)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.unlink.loc.parent = t->root;
    a.unlink.loc.name = name;
    a.unlink.loc.inode = hint;
    rc = pt_call(t, VL_FOP_UNLINK, &a, &r);
    vl_reply_clear(&r);
    posix_janitor_flush(t->xl); /* the handle may wait for the janitor */
    return rc;
}


static bool
pc_handle_exists(struct pt *t, const vl_gfid_t *g)
{
    char rel[128], path[PATH_MAX];
    struct stat st;

    pt_handle_path(g, rel, sizeof(rel));
    snprintf(path, sizeof(path), "%s/%s", t->brick, rel);
    return lstat(path, &st) == 0;
}


/* With the client's inode, unlink takes the name's GFID from the handle
 * that is the same inode, not from the xattr: shown by a file whose GFID
 * xattr is gone (removed behind the brick's back), whose handle unlink
 * still removes. A stale hint (another file's inode) removes the right
 * handle and leaves the other file alone. */
static void
test_unlink_hint(void **state)
{
    struct pt *t = *state;
    vl_inode_t *f = NULL, *g = NULL;
    char path[PATH_MAX];
    struct vl_iatt ia;

    assert_int_equal(pt_create(t, t->root, "f", O_RDWR, 0644, &f, NULL), 0);
    snprintf(path, sizeof(path), "%s/f", t->brick);
    assert_int_equal(lremovexattr(path, "trusted.mortar.gfid"), 0);
    assert_true(pc_handle_exists(t, &f->gfid));
    assert_int_equal(pc_unlink_hint(t, "f", f), 0);
    assert_false(pc_handle_exists(t, &f->gfid));
    vl_inode_unref(f);

    assert_int_equal(pt_create(t, t->root, "f", O_RDWR, 0644, &f, NULL), 0);
    assert_int_equal(pt_create(t, t->root, "g", O_RDWR, 0644, &g, NULL), 0);
    assert_int_equal(pc_unlink_hint(t, "f", g), 0); /* stale hint */
    assert_false(pc_handle_exists(t, &f->gfid));
    assert_true(pc_handle_exists(t, &g->gfid));
    assert_int_equal(pt_stat(t, g, &ia), 0);
    assert_int_equal(ia.nlink, 1);
    assert_int_equal(pc_unlink_hint(t, "f", g), -ENOENT);
    assert_int_equal(pc_unlink_hint(t, "g", g), 0);
    assert_false(pc_handle_exists(t, &g->gfid));
    vl_inode_unref(f);
    vl_inode_unref(g);
}


/* Hard links and open files with the hint: the handle stays while a
 * name is left, goes with the last one, and is parked (not removed)
 * while the file is open. */
static void
test_unlink_hint_links_and_open(void **state)
{
    struct pt *t = *state;
    vl_inode_t *f = NULL;
    union vl_fop_args a = {0};
    char path[PATH_MAX], str[VL_GFID_STR_LEN];
    struct vl_reply r;
    struct stat st;
    vl_fd_t *fd = NULL;
    char buf[8];

    assert_int_equal(pt_create(t, t->root, "f", O_RDWR, 0644, &f, NULL), 0);
    a.link.oldloc.inode = f;
    a.link.newloc.parent = t->root;
    a.link.newloc.name = "f2";
    assert_int_equal(pt_call(t, VL_FOP_LINK, &a, &r), 0);
    vl_reply_clear(&r);
    assert_int_equal(pc_unlink_hint(t, "f", f), 0);
    assert_true(pc_handle_exists(t, &f->gfid)); /* f2 still names it */
    assert_int_equal(pc_unlink_hint(t, "f2", f), 0);
    assert_false(pc_handle_exists(t, &f->gfid));
    vl_inode_unref(f);

    assert_int_equal(pt_create(t, t->root, "o", O_RDWR, 0644, &f, &fd), 0);
    assert_int_equal(pt_write(t, fd, 0, "data", 4, 0), 0);
    assert_int_equal(pc_unlink_hint(t, "o", f), 0);
    assert_false(pc_handle_exists(t, &f->gfid));
    vl_gfid_to_str(&f->gfid, str);
    snprintf(path, sizeof(path), "%s/.mortar/unlink/%s", t->brick, str);
    assert_int_equal(lstat(path, &st), 0);
    assert_int_equal(pt_read(t, fd, 0, buf, sizeof(buf)), 4);
    vl_fd_unref(fd);
    assert_int_equal(lstat(path, &st), -1);
    vl_inode_unref(f);
}


/* --- a lookup inside a creating fop (posix-making.c) -------------------- */

struct pc_lookup_thread {
    struct pt *t;        /* the brick */
    const char *name;    /* looked up in the root */
    int rc;              /* lookup's answer */
    struct vl_iatt iatt; /* its attributes when rc is 0 */
};


static void *
pc_lookup_main(void *arg)
{
    struct pc_lookup_thread *l = arg;

    l->rc = pt_lookup(l->t, l->t->root, l->name, &l->iatt, NULL);
    return NULL;
}


static unsigned
pc_making_waiters(struct pt *t)
{
    struct posix_priv *priv = posix_priv(t->xl);
    unsigned n;

    pthread_mutex_lock(&priv->making_lock);
    n = priv->n_making_waiters;
    pthread_mutex_unlock(&priv->making_lock);
    return n;
}


/* Waits (up to ~20 s, so a broken build fails instead of hanging) until
 * one lookup waits for a name being made. */
static bool
pc_wait_for_waiter(struct pt *t)
{
    for (int i = 0; i < 20000; i++) {
        if (pc_making_waiters(t) == 1)
            return true;
        usleep(1000);
    }
    return false;
}


/* The race of doc/distribute.md ("Open race"): a mkdir has made its
 * directory but not yet set its GFID when a lookup of the name arrives.
 * The lookup must not give the directory a GFID of its own (the mkdir's
 * GFID would then fail with EEXIST and the mkdir be undone): it waits and
 * answers the mkdir's GFID; if the mkdir undoes its directory, ENOENT.
 * The test plays the mkdir between its mkdirat and its GFID by hand,
 * registered as posix_fop_mkdir registers itself. */
static void
test_lookup_waits_for_mkdir(void **state)
{
    struct pt *t = *state;
    struct posix_making making;
    struct pc_lookup_thread l = {.t = t, .name = "racing"};
    char path[PATH_MAX];
    pthread_t th;
    vl_gfid_t g, disk;

    snprintf(path, sizeof(path), "%s/racing", t->brick);
    posix_making_begin(t->xl, &making, &t->root->gfid, "racing");
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(pthread_create(&th, NULL, pc_lookup_main, &l), 0);
    if (!pc_wait_for_waiter(t)) {
        posix_making_end(t->xl, &making);
        pthread_join(th, NULL);
        fail_msg("lookup did not wait for the mkdir (rc %d)", l.rc);
    }
    /* Not healed behind the mkdir's back. */
    assert_int_equal(pt_disk_gfid(t, "racing", &disk), -ENODATA);
    vl_gfid_generate(&g);
    assert_int_equal(setxattr(path, "trusted.mortar.gfid", g.bytes,
                              sizeof(g.bytes), XATTR_CREATE), 0);
    posix_making_end(t->xl, &making);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(l.rc, 0);
    assert_true(vl_gfid_equal(&l.iatt.gfid, &g));
    assert_int_equal(pt_disk_gfid(t, "racing", &disk), 0);
    assert_true(vl_gfid_equal(&disk, &g));

    /* A mkdir that fails and removes its directory: the lookup finds
     * nothing, and nothing is healed. */
    posix_making_begin(t->xl, &making, &t->root->gfid, "undone");
    snprintf(path, sizeof(path), "%s/undone", t->brick);
    assert_int_equal(mkdir(path, 0755), 0);
    l.name = "undone";
    l.rc = 1;
    assert_int_equal(pthread_create(&th, NULL, pc_lookup_main, &l), 0);
    if (!pc_wait_for_waiter(t)) {
        posix_making_end(t->xl, &making);
        pthread_join(th, NULL);
        fail_msg("lookup did not wait for the mkdir (rc %d)", l.rc);
    }
    assert_int_equal(rmdir(path), 0);
    posix_making_end(t->xl, &making);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(l.rc, -ENOENT);

    /* The registry is empty again: a directory made by hand is healed at
     * once, as before. */
    assert_null(posix_priv(t->xl)->making);
    snprintf(path, sizeof(path), "%s/byhand", t->brick);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(pt_lookup(t, t->root, "byhand", &l.iatt, NULL), 0);
    assert_false(vl_gfid_is_null(&l.iatt.gfid));
}


/* The same race one round later: the mkdir the lookup waited for ends,
 * and before the lookup reads the name again the directory is removed
 * and another mkdir has made it anew, GFID not yet set (the hook plays
 * that in the lookup's thread). The lookup must wait for that mkdir too,
 * not heal its directory. Before the fix it read once after one wait and
 * healed: the second mkdir's GFID then failed with EEXIST (seen in
 * test_mkdir_races_lookup once in a CI run). */
static struct {
    struct pt *t;
    struct posix_making making; /* the second mkdir's registration */
    bool has_made;              /* the hook ran */
} pc_again;

static void
pc_hook_make_again(vl_xlator_t *xl)
{
    char path[PATH_MAX];

    (void)xl;
    if (pc_again.has_made)
        return;
    pc_again.has_made = true;
    snprintf(path, sizeof(path), "%s/again", pc_again.t->brick);
    assert_int_equal(rmdir(path), 0);
    posix_making_begin(pc_again.t->xl, &pc_again.making,
                       &pc_again.t->root->gfid, "again");
    assert_int_equal(mkdir(path, 0755), 0);
}

static void
test_lookup_waits_for_mkdir_again(void **state)
{
    struct pt *t = *state;
    struct posix_making first;
    struct pc_lookup_thread l = {.t = t, .name = "again"};
    char path[PATH_MAX];
    pthread_t th;
    vl_gfid_t g1, g2, disk;

    pc_again.t = t;
    pc_again.has_made = false;
    posix_lookup_test_after_wait = pc_hook_make_again;
    snprintf(path, sizeof(path), "%s/again", t->brick);
    posix_making_begin(t->xl, &first, &t->root->gfid, "again");
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(pthread_create(&th, NULL, pc_lookup_main, &l), 0);
    if (!pc_wait_for_waiter(t)) {
        posix_making_end(t->xl, &first);
        pthread_join(th, NULL);
        posix_lookup_test_after_wait = NULL;
        fail_msg("lookup did not wait for the first mkdir (rc %d)", l.rc);
    }
    /* The first mkdir finishes; the hook removes its directory and makes
     * the name again for the second, which is still without GFID. */
    vl_gfid_generate(&g1);
    assert_int_equal(setxattr(path, "trusted.mortar.gfid", g1.bytes,
                              sizeof(g1.bytes), XATTR_CREATE), 0);
    posix_making_end(t->xl, &first);
    for (int i = 0; i < 2000 && !(pc_again.has_made
                                  && pc_making_waiters(t) == 1); i++)
        usleep(1000);
    /* Not healed behind the second mkdir's back: the lookup waits. */
    assert_true(pc_again.has_made);
    assert_int_equal(pt_disk_gfid(t, "again", &disk), -ENODATA);
    assert_int_equal(pc_making_waiters(t), 1);
    vl_gfid_generate(&g2);
    assert_int_equal(setxattr(path, "trusted.mortar.gfid", g2.bytes,
                              sizeof(g2.bytes), XATTR_CREATE), 0);
    posix_making_end(t->xl, &pc_again.making);
    assert_int_equal(pthread_join(th, NULL), 0);
    posix_lookup_test_after_wait = NULL;
    assert_int_equal(l.rc, 0);
    assert_true(vl_gfid_equal(&l.iatt.gfid, &g2));
    assert_int_equal(pt_disk_gfid(t, "again", &disk), 0);
    assert_true(vl_gfid_equal(&disk, &g2));
}


/* Real mkdirs of one name racing lookups of it on another thread: every
 * mkdir succeeds and keeps the GFID it was given (before the fix, a
 * lookup landing between mkdirat and the GFID healed the directory and
 * the mkdir failed with EEXIST; this part only catches that sometimes,
 * test_lookup_waits_for_mkdir always does). */
struct pc_lookup_loop {
    struct pt *t;              /* the brick */
    atomic_bool is_done;       /* set by the mkdir side */
};


static void *
pc_lookup_loop_main(void *arg)
{
    struct pc_lookup_loop *l = arg;

    while (!atomic_load(&l->is_done))
        (void)pt_lookup(l->t, l->t->root, "busy", NULL, NULL);
    return NULL;
}


static void
test_mkdir_races_lookup(void **state)
{
    struct pt *t = *state;
    struct pc_lookup_loop l = {.t = t};
    pthread_t th;

    atomic_init(&l.is_done, false);
    assert_int_equal(pthread_create(&th, NULL, pc_lookup_loop_main, &l), 0);
    for (int i = 0; i < 300; i++) {
        vl_inode_t *dir = NULL;
        union vl_fop_args a = {0};
        struct vl_reply r;
        int rc;

        rc = pt_mkdir(t, t->root, "busy", 0755, &dir);
        if (rc != 0) {
            atomic_store(&l.is_done, true);
            pthread_join(th, NULL);
            fail_msg("mkdir %d failed: %d", i, rc);
        }
        a.rmdir.loc.parent = t->root;
        a.rmdir.loc.name = "busy";
        a.rmdir.loc.inode = dir;
        assert_int_equal(pt_call(t, VL_FOP_RMDIR, &a, &r), 0);
        vl_reply_clear(&r);
        vl_inode_unref(dir);
    }
    atomic_store(&l.is_done, true);
    assert_int_equal(pthread_join(th, NULL), 0);
}


const struct CMUnitTest pt_create_tests[] = {
    cmocka_unit_test_setup_teardown(test_create_mode_owner_gfid, pt_setup,
                                    pt_teardown),
    cmocka_unit_test_setup_teardown(test_handle_dir_cache_survives_removed_dir,
                                    pt_setup, pt_teardown),
    cmocka_unit_test_setup_teardown(test_postparent, pt_setup, pt_teardown),
    cmocka_unit_test_setup_teardown(test_mkdir_xattr, pt_setup, pt_teardown),
    cmocka_unit_test_setup_teardown(test_unlink_hint, pt_setup, pt_teardown),
    cmocka_unit_test_setup_teardown(test_unlink_hint_links_and_open,
                                    pt_setup, pt_teardown),
    cmocka_unit_test_setup_teardown(test_lookup_waits_for_mkdir, pt_setup,
                                    pt_teardown),
    cmocka_unit_test_setup_teardown(test_lookup_waits_for_mkdir_again,
                                    pt_setup, pt_teardown),
    cmocka_unit_test_setup_teardown(test_mkdir_races_lookup, pt_setup,
                                    pt_teardown),
};
const size_t pt_n_create_tests = VL_ARRAY_SIZE(pt_create_tests);
