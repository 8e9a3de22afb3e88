/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-heal-test: what the self-heal unit tests (test-rep-heal.c,
 * test-rep-heal-down.c) share beside rep-test.c: objects made and
 * changed through replicate, the heal keys asked, the records on the
 * fake bricks read and planted.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "rep-heal-test.h"


/* A file made through replicate in dir, holding data; its inode. */
vl_inode_t *
t_file_at(struct t *t, vl_inode_t *dir, const char *name, const char *data)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode = vl_inode_new(t->g->graph->itable);
    vl_fd_t *fd = vl_fd_new(inode, O_RDWR, 1);
    struct iovec iov = {.iov_base = (void *)data, .iov_len = strlen(data)};

    a.create.loc.parent = dir;
    a.create.loc.name = name;
    a.create.loc.inode = inode;
    a.create.flags = O_RDWR | O_CREAT | O_EXCL;
    a.create.mode = 0644;
    a.create.fd = fd;
    vl_gfid_generate(&a.create.gfid);
    assert_int_equal(t_call(t, VL_FOP_CREATE, &a, &r), 0);
    vl_inode_unref(vl_inode_link(inode, &r.iatt));
    vl_reply_clear(&r);
    if (data[0] != '\0') {
        memset(&a, 0, sizeof(a));
        a.write.fd = fd;
        a.write.iov = &iov;
        a.write.n_iov = 1;
        assert_int_equal(t_call(t, VL_FOP_WRITE, &a, &r), 0);
        vl_reply_clear(&r);
        memset(&a, 0, sizeof(a));
        a.flush.fd = fd;
        assert_int_equal(t_call(t, VL_FOP_FLUSH, &a, &r), 0);
        vl_reply_clear(&r);
    }
    vl_fd_unref(fd);
    return inode;
}


vl_inode_t *
t_file(struct t *t, const char *name, const char *data)
{
    return t_file_at(t, t->root, name, data);
}


/* Writes data at off through replicate (a write batch ended by flush). */
void
t_write(struct t *t, vl_inode_t *inode, off_t off, const char *data)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_fd_t *fd = vl_fd_new(inode, O_RDWR, 1);
    struct iovec iov = {.iov_base = (void *)data, .iov_len = strlen(data)};

    a.open.loc.inode = inode;
    a.open.flags = O_RDWR;
    a.open.fd = fd;
    assert_int_equal(t_call(t, VL_FOP_OPEN, &a, &r), 0);
    vl_reply_clear(&r);
    memset(&a, 0, sizeof(a));
    a.write.fd = fd;
    a.write.iov = &iov;
    a.write.n_iov = 1;
    a.write.offset = off;
    assert_int_equal(t_call(t, VL_FOP_WRITE, &a, &r), 0);
    vl_reply_clear(&r);
    memset(&a, 0, sizeof(a));
    a.flush.fd = fd;
    assert_int_equal(t_call(t, VL_FOP_FLUSH, &a, &r), 0);
    vl_reply_clear(&r);
    vl_fd_unref(fd);
}


/* GETXATTR of key (a heal key): 0 with the answer in out, or -errno. */
int
t_heal_key(struct t *t, vl_inode_t *inode, const char *key, char *out,
           size_t len)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.getxattr.loc.inode = inode;
    a.getxattr.name = key;
    a.getxattr.size = len - 1;
    rc = t_call(t, VL_FOP_GETXATTR, &a, &r);
    out[0] = '\0';
    if (rc == 0) {
        assert_non_null(r.xattr);
        assert_true((size_t)r.count < len);
        memcpy(out, r.xattr, (size_t)r.count);
        out[r.count] = '\0';
    }
    vl_reply_clear(&r);
    return rc;
}


int
t_heal(struct t *t, vl_inode_t *inode, char *out, size_t len)
{
    return t_heal_key(t, inode, REP_XATTR_HEAL, out, len);
}


void
t_expect_key(struct t *t, vl_inode_t *inode, const char *key,
             const char *want)
{
    char got[32];

    assert_int_equal(t_heal_key(t, inode, key, got, sizeof(got)), 0);
    assert_string_equal(got, want);
}


void
t_expect_heal(struct t *t, vl_inode_t *inode, const char *want)
{
    t_expect_key(t, inode, REP_XATTR_HEAL, want);
}


/* Does any copy of gfid hold a replicate record? */
bool
t_any_record(struct t *t, const vl_gfid_t *gfid)
{
    uint8_t v[REP_RECORD_SIZE];

    for (int i = 0; i < t->n; i++) {
        if (fake_xattr(t->b[i], gfid, REP_KEY_DIRTY, v, sizeof(v))
            != -ENODATA)
            return true;
        for (int j = 0; j < t->n; j++)
            if (fake_xattr(t->b[i], gfid, t->key[j], v, sizeof(v))
                != -ENODATA)
                return true;
    }
    return false;
}


int32_t
t_rec(struct t *t, int i, const vl_gfid_t *gfid, const char *key, int k)
{
    uint8_t v[REP_RECORD_SIZE];
    int rc = fake_xattr(t->b[i], gfid, key, v, sizeof(v));

    if (rc == -ENODATA)
        return 0;
    assert_int_equal(rc, REP_RECORD_SIZE);
    return rep_record_get(v, (unsigned)k);
}


/* Plants on brick i a record key with counter kind = v. */
void
t_plant(struct t *t, int i, const vl_gfid_t *gfid, const char *key, int kind,
        int32_t v)
{
    uint8_t rec[REP_RECORD_SIZE] = {0};

    rep_record_set(rec, (unsigned)kind, v);
    assert_int_equal(fake_set_xattr(t->b[i], gfid, key, rec, sizeof(rec)),
                     0);
}
