/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-dist-ns: namespace fops of cluster/distribute checked on the
 * bricks: rename across hash ranges (link file on the new hashed brick,
 * data read back after a restart), hard links and unlink with link files
 * (also onto a brick already holding the file's link file),
 * RENAME_EXCHANGE (same data brick behind a link file; EXDEV),
 * rmdir (ENOTEMPTY keeps every copy; only link files: cleaned), lookup
 * healing a directory missing on one brick and a layout hole, the file
 * moved by hand (stale cached brick: found again by GFID), an unlink
 * that finds a moved file on its hashed brick, and the virtual xattrs (pathinfo, layout, fix-layout, commit-layout).
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

#include "dist-test.h"


static void
dt_expect_linkfile(struct dt *t, int brick, const char *rel, int target)
{
    char path[PATH_MAX], to[64], want[16];
    mode_t mode;
    ssize_t n;

    assert_true(dt_exists(t, brick, rel, &mode));
    assert_true(S_ISREG(mode));
    assert_int_equal(mode & 07777, S_ISVTX);
    dt_path(t, brick, rel, path, sizeof(path));
    n = getxattr(path, "trusted.mortar.dht.linkto", to, sizeof(to));
    assert_true(n > 0);
    snprintf(want, sizeof(want), "b%d", target);
    assert_string_equal(to, want);
}


static int
dt_files_on_disk(struct dt *t, const char *rel)
{
    int n = 0;

    for (int b = 0; b < DT_BRICKS; b++)
        if (dt_exists(t, b, rel, NULL))
            n++;
    return n;
}


static void
test_rename_across_ranges(void **state)
{
    struct dt *t = *state;
    vl_inode_t *d = NULL, *f = NULL;
    vl_fd_t *fd = NULL;
    char a[32], b[32], rel[64], buf[64];
    struct vl_iatt ia;

    dt_name_on(0, "a", a, sizeof(a));
    dt_name_on(2, "b", b, sizeof(b));
    assert_int_equal(dt_mkdir(t, t->root, "r", &d), 0);
    assert_int_equal(dt_create(t, d, a, &f, &fd), 0);
    assert_int_equal(dt_write(t, fd, 0, "moved data"), 0);
    vl_fd_unref(fd);
    assert_int_equal(dt_rename(t, d, a, f, d, b), 0);
    /* Data stays on brick 0 under the new name; link file on brick 2. */
    snprintf(rel, sizeof(rel), "r/%s", b);
    assert_true(dt_exists(t, 0, rel, NULL));
    dt_expect_linkfile(t, 2, rel, 0);
    snprintf(rel, sizeof(rel), "r/%s", a);
    assert_int_equal(dt_files_on_disk(t, rel), 0);
    vl_inode_unref(f);
    vl_inode_unref(d);

    /* Read back through a fresh graph. */
    dt_restart(t);
    assert_int_equal(dt_lookup(t, t->root, "r", NULL, &d), 0);
    assert_int_equal(dt_lookup(t, d, a, NULL, NULL), -ENOENT);
    assert_int_equal(dt_lookup(t, d, b, &ia, &f), 0);
    assert_int_equal(ia.size, 10);
    assert_int_equal(dt_open(t, f, O_RDONLY, &fd), 0);
    assert_int_equal(dt_read(t, fd, 0, buf, sizeof(buf)), 10);
    assert_string_equal(buf, "moved data");
    vl_fd_unref(fd);

    /* Back to a name on brick 0: the link file on brick 2 goes. */
    assert_int_equal(dt_rename(t, d, b, NULL, d, a), 0); /* as FUSE */
    snprintf(rel, sizeof(rel), "r/%s", b);
    assert_int_equal(dt_files_on_disk(t, rel), 0);
    snprintf(rel, sizeof(rel), "r/%s", a);
    assert_int_equal(dt_files_on_disk(t, rel), 1);
    vl_inode_unref(f);
    vl_inode_unref(d);
}


static void
test_rename_replaces_target_elsewhere(void **state)
{
    struct dt *t = *state;
    vl_inode_t *f = NULL;
    char a[32], b[32];

    dt_name_on(1, "x", a, sizeof(a));
    dt_name_on(3, "y", b, sizeof(b));
    assert_int_equal(dt_create(t, t->root, a, &f, NULL), 0);
    assert_int_equal(dt_create(t, t->root, b, NULL, NULL), 0);
    assert_true(dt_exists(t, 3, b, NULL));
    assert_int_equal(dt_rename(t, t->root, a, f, t->root, b), 0);
    /* Target's data on brick 3 replaced by a link file to brick 1. */
    dt_expect_linkfile(t, 3, b, 1);
    assert_true(dt_exists(t, 1, b, NULL));
    assert_int_equal(dt_files_on_disk(t, a), 0);
    vl_inode_unref(f);
}


static void
test_link_and_unlink_with_linkfiles(void **state)
{
    struct dt *t = *state;
    vl_inode_t *f = NULL;
    union vl_fop_args a = {0};
    struct vl_reply r;
    char src[32], dst[32];

    dt_name_on(0, "l", src, sizeof(src));
    dt_name_on(3, "m", dst, sizeof(dst));
    assert_int_equal(dt_create(t, t->root, src, &f, NULL), 0);
    a.link.oldloc.inode = f;
    a.link.newloc.parent = t->root;
    a.link.newloc.name = dst;
    assert_int_equal(dt_call(t, VL_FOP_LINK, &a, &r), 0);
    vl_reply_clear(&r);
    /* Hard link on brick 0, link file on brick 3. */
    assert_true(dt_exists(t, 0, dst, NULL));
    dt_expect_linkfile(t, 3, dst, 0);
    vl_inode_unref(f);

    dt_restart(t);
    assert_int_equal(dt_lookup(t, t->root, dst, NULL, NULL), 0);
    /* As FUSE sends it: no inode, so every brick is asked at once. */
    memset(&a, 0, sizeof(a));
    a.unlink.loc.parent = t->root;
    a.unlink.loc.name = dst;
    assert_int_equal(dt_call(t, VL_FOP_UNLINK, &a, &r), 0);
    vl_reply_clear(&r);
    assert_int_equal(dt_call(t, VL_FOP_UNLINK, &a, &r), -ENOENT);
    vl_reply_clear(&r);
    assert_int_equal(dt_files_on_disk(t, dst), 0);
    assert_true(dt_exists(t, 0, src, NULL));
    assert_int_equal(dt_unlink(t, t->root, src), 0);
    assert_int_equal(dt_files_on_disk(t, src), 0);
    assert_int_equal(dt_lookup(t, t->root, src, NULL, NULL), -ENOENT);
}


/* Inode number of rel on brick b (0 when absent). */
static ino_t
dt_ino(struct dt *t, int b, const char *rel)
{
    char path[PATH_MAX];
    struct stat st;

    dt_path(t, b, rel, path, sizeof(path));
    return lstat(path, &st) == 0 ? st.st_ino : 0;
}


static int
dt_link(struct dt *t, vl_inode_t *f, const char *name)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.link.oldloc.inode = f;
    a.link.newloc.parent = t->root;
    a.link.newloc.name = name;
    rc = dt_call(t, VL_FOP_LINK, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


/* Brick 3 holds a link file of the file under one name (one object per
 * GFID on a brick): more names hashing there become hard links of it,
 * by link and by rename; unlinking them all leaves nothing. */
static void
test_link_onto_existing_linkfile(void **state)
{
    struct dt *t = *state;
    vl_inode_t *f = NULL;
    char src[32], l1[32], l2[32], l3[32];
    const char *names[] = {src, l1, l2, l3};
    struct vl_iatt ia;

    dt_name_on(0, "s", src, sizeof(src));
    dt_name_on(3, "p", l1, sizeof(l1));
    dt_name_on(3, "q", l2, sizeof(l2));
    dt_name_on(3, "w", l3, sizeof(l3));
    assert_int_equal(dt_create(t, t->root, src, &f, NULL), 0);
    assert_int_equal(dt_link(t, f, l1), 0);
    assert_int_equal(dt_link(t, f, l2), 0); /* ENOENT before the fix */
    dt_expect_linkfile(t, 3, l2, 0);
    assert_int_equal(dt_ino(t, 3, l1), dt_ino(t, 3, l2));
    assert_int_equal(dt_link(t, f, l2), -EEXIST);
    /* A rename onto brick 3 takes the same way (hard link of the link
     * file): the data stays on brick 0 under the new name. */
    assert_int_equal(dt_rename(t, t->root, src, f, t->root, l3), 0);
    dt_expect_linkfile(t, 3, l3, 0);
    assert_int_equal(dt_ino(t, 3, l1), dt_ino(t, 3, l3));
    assert_int_equal(dt_ino(t, 0, l1), dt_ino(t, 0, l3));
    vl_inode_unref(f);

    dt_restart(t);
    for (size_t i = 1; i < 4; i++) {
        assert_int_equal(dt_lookup(t, t->root, names[i], &ia, NULL), 0);
        assert_int_equal(ia.nlink, 3);
        assert_int_equal(ia.mode & 07777, 0644);
    }
    for (size_t i = 1; i < 4; i++) {
        assert_int_equal(dt_unlink(t, t->root, names[i]), 0);
        assert_int_equal(dt_files_on_disk(t, names[i]), 0);
    }
    assert_int_equal(dt_lookup(t, t->root, src, NULL, NULL), -ENOENT);
}


static int
dt_exchange(struct dt *t, const char *a_name, const char *b_name)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.rename.oldloc.parent = t->root;
    a.rename.oldloc.name = a_name;
    a.rename.newloc.parent = t->root;
    a.rename.newloc.name = b_name;
    a.rename.flags = 2; /* RENAME_EXCHANGE */
    rc = dt_call(t, VL_FOP_RENAME, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


/* The GFID of rel on brick b (all zero when absent). */
static void
dt_gfid_on(struct dt *t, int b, const char *rel, vl_gfid_t *out)
{
    char path[PATH_MAX];

    memset(out, 0, sizeof(*out));
    dt_path(t, b, rel, path, sizeof(path));
    (void)getxattr(path, "trusted.mortar.gfid", out->bytes,
                   sizeof(out->bytes));
}


/* RENAME_EXCHANGE: data of both on brick 0, one name hashing to brick 1
 * (link file there): swapped on brick 0, the link file now carries the
 * other GFID; data on two bricks: EXDEV, nothing changed. */
static void
test_exchange(void **state)
{
    struct dt *t = *state;
    vl_inode_t *f = NULL;
    char x0[32], y0[32], z1[32], w2[32];
    vl_gfid_t gx, gz, got;
    struct vl_iatt ia;

    dt_name_on(0, "x", x0, sizeof(x0));
    dt_name_on(0, "y", y0, sizeof(y0));
    dt_name_on(1, "z", z1, sizeof(z1));
    dt_name_on(2, "w", w2, sizeof(w2));
    assert_int_equal(dt_create(t, t->root, x0, &f, NULL), 0);
    gx = f->gfid;
    vl_inode_unref(f);
    assert_int_equal(dt_create(t, t->root, y0, &f, NULL), 0);
    /* y0's data stays on brick 0 under z1, link file on brick 1. */
    assert_int_equal(dt_rename(t, t->root, y0, f, t->root, z1), 0);
    gz = f->gfid;
    vl_inode_unref(f);
    dt_expect_linkfile(t, 1, z1, 0);

    assert_int_equal(dt_exchange(t, x0, z1), 0);
    dt_gfid_on(t, 0, x0, &got);
    assert_true(vl_gfid_equal(&got, &gz));
    dt_gfid_on(t, 0, z1, &got);
    assert_true(vl_gfid_equal(&got, &gx));
    dt_expect_linkfile(t, 1, z1, 0);
    dt_gfid_on(t, 1, z1, &got);
    assert_true(vl_gfid_equal(&got, &gx));

    dt_restart(t);
    assert_int_equal(dt_lookup(t, t->root, z1, &ia, NULL), 0);
    assert_true(vl_gfid_equal(&ia.gfid, &gx));
    assert_int_equal(dt_lookup(t, t->root, x0, &ia, NULL), 0);
    assert_true(vl_gfid_equal(&ia.gfid, &gz));
    /* Data on brick 2 against data on brick 0. */
    assert_int_equal(dt_create(t, t->root, w2, NULL, NULL), 0);
    assert_int_equal(dt_exchange(t, x0, w2), -EXDEV);
    assert_int_equal(dt_exchange(t, x0, "missing"), -ENOENT);
    dt_gfid_on(t, 0, x0, &got);
    assert_true(vl_gfid_equal(&got, &gz));
    assert_int_equal(dt_unlink(t, t->root, x0), 0);
    assert_int_equal(dt_unlink(t, t->root, z1), 0);
    assert_int_equal(dt_unlink(t, t->root, w2), 0);
    assert_int_equal(dt_files_on_disk(t, z1), 0);
    assert_int_equal(dt_files_on_disk(t, x0), 0);
}


static void
test_rmdir(void **state)
{
    struct dt *t = *state;
    vl_inode_t *d = NULL;
    char name[32], rel[64], path[PATH_MAX];

    assert_int_equal(dt_mkdir(t, t->root, "full", &d), 0);
    dt_name_on(2, "k", name, sizeof(name));
    assert_int_equal(dt_create(t, d, name, NULL, NULL), 0);
    vl_inode_unref(d);
    assert_int_equal(dt_rmdir(t, t->root, "full"), -ENOTEMPTY);
    for (int b = 0; b < DT_BRICKS; b++) {
        ssize_t n;

        assert_true(dt_exists(t, b, "full", NULL));
        dt_path(t, b, "full", path, sizeof(path));
        n = getxattr(path, "trusted.mortar.dht", NULL, 0);
        assert_int_equal(n, 20);
    }
    snprintf(rel, sizeof(rel), "full/%s", name);
    assert_int_equal(dt_lookup(t, t->root, "full", NULL, &d), 0);
    assert_int_equal(dt_unlink(t, d, name), 0);
    vl_inode_unref(d);

    /* A stale link file alone on brick 1 does not keep it alive. */
    dt_path(t, 1, "full/stale", path, sizeof(path));
    {
        int fd = open(path, O_CREAT | O_WRONLY, 0);

        vl_gfid_t g;

        assert_true(fd >= 0);
        assert_int_equal(fchmod(fd, S_ISVTX), 0);
        vl_gfid_generate(&g);
        assert_int_equal(fsetxattr(fd, "trusted.mortar.gfid", g.bytes, 16,
                                   0), 0);
        close(fd);
    }
    assert_int_equal(dt_rmdir(t, t->root, "full"), 0);
    assert_int_equal(dt_files_on_disk(t, "full"), 0);
    assert_int_equal(dt_lookup(t, t->root, "full", NULL, NULL), -ENOENT);
}


static void
test_heal_missing_dir_and_hole(void **state)
{
    struct dt *t = *state;
    vl_inode_t *d = NULL;
    char path[PATH_MAX];
    unsigned char val[64];
    struct vl_iatt ia;
    mode_t mode;

    assert_int_equal(dt_mkdir(t, t->root, "h", &d), 0);
    vl_inode_unref(d);
    assert_int_equal(dt_mkdir(t, t->root, "hole", &d), 0);
    vl_inode_unref(d);
    dt_restart(t);
    /* Brick 2 loses "h"; brick 1 loses the layout of "hole". */
    dt_path(t, 2, "h", path, sizeof(path));
    assert_int_equal(rmdir(path), 0);
    dt_path(t, 1, "hole", path, sizeof(path));
    assert_int_equal(removexattr(path, "trusted.mortar.dht"), 0);

    assert_int_equal(dt_lookup(t, t->root, "h", &ia, NULL), 0);
    assert_true(S_ISDIR(ia.mode));
    assert_true(dt_exists(t, 2, "h", &mode));
    assert_true(S_ISDIR(mode));
    dt_path(t, 2, "h", path, sizeof(path));
    assert_int_equal(getxattr(path, "trusted.mortar.dht", val, sizeof(val)),
                     20);
    /* The others do not cover its range: the layout is rebuilt. */
    assert_int_equal(val[19] & 1, 1);
    assert_int_equal(val[7], 2);

    assert_int_equal(dt_lookup(t, t->root, "hole", &ia, &d), 0);
    dt_path(t, 1, "hole", path, sizeof(path));
    assert_int_equal(getxattr(path, "trusted.mortar.dht", val, sizeof(val)),
                     20);
    assert_int_equal(val[19] & 1, 1); /* range given back */
    assert_int_equal(val[7], 2);      /* generation 2 */
    /* And files can be created in every range again. */
    for (int b = 0; b < DT_BRICKS; b++) {
        char name[32];

        dt_name_on(b, "n", name, sizeof(name));
        assert_int_equal(dt_create(t, d, name, NULL, NULL), 0);
    }
    vl_inode_unref(d);
}


static void
test_moved_file_found_again(void **state)
{
    struct dt *t = *state;
    vl_inode_t *f = NULL;
    struct vl_iatt ia;
    union vl_fop_args a = {0};
    struct vl_reply r;
    char name[32], from[PATH_MAX], to[PATH_MAX];

    dt_name_on(0, "mv", name, sizeof(name));
    assert_int_equal(dt_create(t, t->root, name, &f, NULL), 0);
    /* Move the data by hand to brick 3 (name and GFID handle), leaving a
     * link file on brick 0, as a finished migration would. */
    {
        char cmd[12 * PATH_MAX];
        char hdir[PATH_MAX], g[VL_GFID_STR_LEN];

        vl_gfid_to_str(&f->gfid, g);
        dt_path(t, 0, name, from, sizeof(from));
        dt_path(t, 3, name, to, sizeof(to));
        snprintf(hdir, sizeof(hdir), "%s/b3/.mortar/handles/%.2s/%.2s",
                 t->base, g, g + 2);
        snprintf(cmd, sizeof(cmd),
                 "cp -a --preserve=all %s %s && mkdir -p %s && ln %s %s/%s "
                 "&& rm -f %s/b0/.mortar/handles/%.2s/%.2s/%s && "
                 "chmod 1000 %s && truncate -s 0 %s && "
                 "setfattr -n trusted.mortar.dht.linkto -v b3 %s",
                 from, to, hdir, to, hdir, g, t->base, g, g + 2, g, from,
                 from, from);
        assert_int_equal(system(cmd), 0);
    }
    /* The cached brick (0) answers with the link file now: stat goes
     * there, sees ESTALE on the handle, and finds the data on brick 3. */
    a.stat.loc.inode = f;
    assert_int_equal(dt_call(t, VL_FOP_STAT, &a, &r), 0);
    assert_true(vl_gfid_equal(&r.iatt.gfid, &f->gfid));
    assert_int_equal(r.iatt.mode & 07777, 0644);
    vl_reply_clear(&r);
    memset(&a, 0, sizeof(a));
    a.getxattr.loc.inode = f;
    a.getxattr.name = "mortar.dht.pathinfo";
    a.getxattr.size = 256;
    assert_int_equal(dt_call(t, VL_FOP_GETXATTR, &a, &r), 0);
    assert_non_null(strstr(r.xattr, "b3"));
    vl_reply_clear(&r);
    vl_inode_unref(f);

    /* A fresh lookup follows the link file. */
    dt_restart(t);
    assert_int_equal(dt_lookup(t, t->root, name, &ia, &f), 0);
    assert_int_equal(ia.mode & 07777, 0644);
    memset(&a, 0, sizeof(a));
    a.getxattr.loc.inode = f;
    a.getxattr.name = "mortar.dht.pathinfo";
    a.getxattr.size = 256;
    assert_int_equal(dt_call(t, VL_FOP_GETXATTR, &a, &r), 0);
    assert_string_equal(r.xattr, "b3 hashed=b0 linkto");
    vl_reply_clear(&r);
    vl_inode_unref(f);
}


/* The client knows the data on brick 0 behind a link file on brick 2
 * (the name's hashed brick); a rebalance then moved it to brick 2. The
 * unlink it sends with that knowledge removes the data on brick 2 and
 * misses on brick 0: the file is gone, and that is a success, not
 * ENOENT. */
static void
test_unlink_of_file_moved_to_hashed(void **state)
{
    struct dt *t = *state;
    vl_inode_t *f = NULL;
    union vl_fop_args a = {0};
    struct vl_reply r;
    char n0[32], n2[32];

    dt_name_on(0, "u", n0, sizeof(n0));
    dt_name_on(2, "v", n2, sizeof(n2));
    assert_int_equal(dt_create(t, t->root, n0, &f, NULL), 0);
    assert_int_equal(dt_rename(t, t->root, n0, f, t->root, n2), 0);
    dt_expect_linkfile(t, 2, n2, 0);
    {
        char cmd[8 * PATH_MAX], from[PATH_MAX], to[PATH_MAX];
        char g[VL_GFID_STR_LEN];

        vl_gfid_to_str(&f->gfid, g);
        dt_path(t, 0, n2, from, sizeof(from));
        dt_path(t, 2, n2, to, sizeof(to));
        snprintf(cmd, sizeof(cmd),
                 "cp -a --preserve=all %s %s.tmp && mv %s.tmp %s && "
                 "rm -f %s %s/b0/.mortar/handles/%.2s/%.2s/%s",
                 from, to, to, to, from, t->base, g, g + 2, g);
        assert_int_equal(system(cmd), 0);
    }
    a.unlink.loc.parent = t->root;
    a.unlink.loc.name = n2;
    a.unlink.loc.inode = f;
    assert_int_equal(dt_call(t, VL_FOP_UNLINK, &a, &r), 0);
    vl_reply_clear(&r);
    assert_int_equal(dt_files_on_disk(t, n2), 0);
    vl_inode_unref(f);
}


static void
test_virtual_layout_keys(void **state)
{
    struct dt *t = *state;
    vl_inode_t *d = NULL;
    union vl_fop_args a = {0};
    struct vl_reply r;
    char path[PATH_MAX];
    unsigned char val[64];

    assert_int_equal(dt_mkdir(t, t->root, "v", &d), 0);
    a.getxattr.loc.inode = d;
    a.getxattr.name = "mortar.dht.layout";
    a.getxattr.size = 4096;
    assert_int_equal(dt_call(t, VL_FOP_GETXATTR, &a, &r), 0);
    assert_string_equal(r.xattr, "b0 00000000 3fffffff 1 3\n"
                                 "b1 40000000 7fffffff 1 3\n"
                                 "b2 80000000 bfffffff 1 3\n"
                                 "b3 c0000000 ffffffff 1 3\n");
    vl_reply_clear(&r);

    memset(&a, 0, sizeof(a));
    a.setxattr.loc.inode = d;
    a.setxattr.name = "mortar.dht.fix-layout";
    a.setxattr.value = "1";
    a.setxattr.size = 1;
    assert_int_equal(dt_call(t, VL_FOP_SETXATTR, &a, &r), 0);
    vl_reply_clear(&r);
    dt_path(t, 0, "v", path, sizeof(path));
    assert_int_equal(getxattr(path, "trusted.mortar.dht", val, sizeof(val)),
                     20);
    assert_int_equal(val[7], 2);  /* generation 2 */
    assert_int_equal(val[19], 1); /* not committed */

    a.setxattr.name = "mortar.dht.commit-layout";
    assert_int_equal(dt_call(t, VL_FOP_SETXATTR, &a, &r), 0);
    vl_reply_clear(&r);
    for (int b = 0; b < DT_BRICKS; b++) {
        dt_path(t, b, "v", path, sizeof(path));
        assert_int_equal(getxattr(path, "trusted.mortar.dht", val,
                                  sizeof(val)), 20);
        assert_int_equal(val[7], 2);
        assert_int_equal(val[19], 3);
    }
    /* Users cannot touch the bricks' keys. */
    a.setxattr.name = "trusted.mortar.dht";
    assert_int_equal(dt_call(t, VL_FOP_SETXATTR, &a, &r), -EPERM);
    vl_reply_clear(&r);
    vl_inode_unref(d);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rename_across_ranges, dt_setup,
                                        dt_teardown),
        cmocka_unit_test_setup_teardown(test_rename_replaces_target_elsewhere,
                                        dt_setup, dt_teardown),
        cmocka_unit_test_setup_teardown(test_link_and_unlink_with_linkfiles,
                                        dt_setup, dt_teardown),
        cmocka_unit_test_setup_teardown(test_link_onto_existing_linkfile,
                                        dt_setup, dt_teardown),
        cmocka_unit_test_setup_teardown(test_exchange, dt_setup,
                                        dt_teardown),
        cmocka_unit_test_setup_teardown(test_rmdir, dt_setup, dt_teardown),
        cmocka_unit_test_setup_teardown(test_heal_missing_dir_and_hole,
                                        dt_setup, dt_teardown),
        cmocka_unit_test_setup_teardown(test_moved_file_found_again, dt_setup,
                                        dt_teardown),
        cmocka_unit_test_setup_teardown(test_unlink_of_file_moved_to_hashed,
                                        dt_setup, dt_teardown),
        cmocka_unit_test_setup_teardown(test_virtual_layout_keys, dt_setup,
                                        dt_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("dist-ns", tests, NULL, NULL);
}
