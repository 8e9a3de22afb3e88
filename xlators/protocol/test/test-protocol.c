/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-protocol: protocol/client and protocol/server together over
 * 127.0.0.1. The brick graph is protocol/server over "test/leaf", a tiny
 * in-test translator that answers fops from memory; the client graph is
 * "test/top" (records CHILD_UP/DOWN) over protocol/client. Each graph
 * runs on its own 2-thread loop; fops are sent with vl_sync_call.
 *
 * Covers: fop round trips (lookup, create, write, read, stat, readdir,
 * getxattr, caller identity), many concurrent calls, a wrong subvolume
 * and a disallowed address refused with their reasons, garbage on the
 * server port not stopping service, ENOTCONN when the brick graph is
 * freed, CHILD_UP again when it returns, an fd re-opened after the
 * reconnect, VL_EV_RECONNECT cutting a long backoff short, and a hung
 * brick declared dead after ping-timeout.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <dirent.h>

#include <cmocka.h>

#include "builtin.h"
#include "protocol/client/client.h"
#include "proto-harness.h"

#define WAIT_MS PH_WAIT_MS
#define FILE_SIZE (1024 * 1024)

/* ---- test/leaf: the brick's storage, in memory ---- */

static struct {
    pthread_mutex_t lock;     /* guards everything here */
    char data[FILE_SIZE];     /* the one file's bytes */
    uint64_t size;            /* its size */
    vl_gfid_t file_gfid;      /* its gfid once created */
    struct vl_caller last;    /* caller of the last fop */
    int n_disconnects;        /* CLIENT_DISCONNECT seen */
    int n_opens;              /* OPEN calls (re-opens) */
    int n_releases;           /* fds released */
    int n_readdirs;           /* READDIR calls */
    int readdir_status;       /* what READDIR answers (0: the listing) */
} leaf;


static void
leaf_iatt(const vl_gfid_t *gfid, uint32_t mode, struct vl_iatt *ia)
{
    memset(ia, 0, sizeof(*ia));
    ia->gfid = *gfid;
    ia->ino = vl_gfid_to_ino(gfid);
    ia->mode = mode;
    ia->nlink = 1;
    ia->size = leaf.size;
    ia->blksize = 4096;
}


static void
leaf_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_reply *rp = &req->reply;
    union vl_fop_args *a = &req->args;
    int status = 0;

    pthread_mutex_lock(&leaf.lock);
    leaf.last = req->caller;
    switch (req->op) {
    case VL_FOP_LOOKUP:
        if (a->lookup.loc.name == NULL) {
            leaf_iatt(&a->lookup.loc.inode->gfid, S_IFDIR | 0755, &rp->iatt);
        } else if (strcmp(a->lookup.loc.name, "file") == 0
                   && !vl_gfid_is_null(&leaf.file_gfid)) {
            leaf_iatt(&leaf.file_gfid, S_IFREG | 0644, &rp->iatt);
            /* An xattr asked with the lookup: user.present has one. */
            if (a->lookup.xattr_name != NULL
                && strcmp(a->lookup.xattr_name, "user.present") == 0) {
                rp->xattr = vl_strdup(NULL, "layout-bytes", 0);
                rp->xattr_len = 12;
            } else if (a->lookup.xattr_name != NULL) {
                rp->xattr_status = -ENODATA;
            }
        } else {
            status = -ENOENT;
        }
        break;
    case VL_FOP_STAT:
        if (a->stat.fd != NULL)
            leaf_iatt(&a->stat.fd->inode->gfid, S_IFREG | 0644, &rp->iatt);
        else
            leaf_iatt(&a->stat.loc.inode->gfid, S_IFREG | 0644, &rp->iatt);
        break;
    case VL_FOP_CREATE:
        leaf.file_gfid = a->create.gfid;
        leaf.size = 0;
        leaf_iatt(&a->create.gfid, S_IFREG | a->create.mode, &rp->iatt);
        break;
    case VL_FOP_OPEN:
        leaf.n_opens++;
        if (!vl_gfid_equal(&a->open.loc.inode->gfid, &leaf.file_gfid))
            status = -ENOENT;
        break;
    case VL_FOP_OPENDIR:
        break;
    case VL_FOP_MKDIR:
        leaf_iatt(&a->mkdir.gfid, S_IFDIR | 0755, &rp->iatt);
        break;
    case VL_FOP_WRITE: {
        uint64_t off = (uint64_t)a->write.offset;

        rp->count = 0;
        for (int i = 0; i < a->write.n_iov; i++) {
            size_t n = a->write.iov[i].iov_len;

            if (off + n > FILE_SIZE) {
                status = -EFBIG;
                break;
            }
            memcpy(leaf.data + off, a->write.iov[i].iov_base, n);
            off += n;
            rp->count += (int64_t)n;
        }
        if (off > leaf.size)
            leaf.size = off;
        leaf_iatt(&a->write.fd->inode->gfid, S_IFREG | 0644, &rp->iatt);
        break;
    }
    case VL_FOP_READ: {
        uint64_t off = (uint64_t)a->read.offset;
        size_t n = off >= leaf.size ? 0 : leaf.size - off;

        if (n > a->read.size)
            n = a->read.size;
        rp->buf = vl_buf_new(n > 0 ? n : 1);
        if (rp->buf == NULL) {
            status = -ENOMEM;
            break;
        }
        memcpy(rp->buf->data, leaf.data + off, n);
        rp->data = rp->buf->data;
        rp->count = (int64_t)n;
        break;
    }
    case VL_FOP_READDIR:
        leaf.n_readdirs++;
        if (leaf.readdir_status != 0) {
            status = leaf.readdir_status;
            break;
        }
        if (a->readdir.offset == 0) {
            struct vl_iatt ia;

            leaf_iatt(&leaf.file_gfid, S_IFREG | 0644, &ia);
            if (vl_dirent_list_add(&rp->entries, 5, 1, DT_REG, "file",
                                   a->readdir.plus ? &ia : NULL) != 0
                || vl_dirent_list_add(&rp->entries, 6, 2, DT_DIR, "sub",
                                      NULL) != 0)
                status = -ENOMEM;
        }
        rp->entries.eof = true;
        break;
    case VL_FOP_GETXATTR:
        if (a->getxattr.name != NULL
            && strcmp(a->getxattr.name, "user.k") == 0) {
            rp->xattr = vl_strdup(NULL, "value", VL_MT_REPLY);
            rp->count = 5;
        } else {
            status = -ENODATA;
        }
        break;
    case VL_FOP_FLUSH:
        break;
    default:
        status = -ENOSYS;
    }
    pthread_mutex_unlock(&leaf.lock);
    vl_unwind(req, status);
}


static int
leaf_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    if (ev == VL_EV_CLIENT_DISCONNECT) {
        pthread_mutex_lock(&leaf.lock);
        leaf.n_disconnects++;
        pthread_mutex_unlock(&leaf.lock);
        return 0;
    }
    return vl_notify_default(xl, ev, data);
}


static void
leaf_release(vl_xlator_t *xl, vl_fd_t *fd)
{
    pthread_mutex_lock(&leaf.lock);
    leaf.n_releases++;
    pthread_mutex_unlock(&leaf.lock);
}


struct leaf_conf {
    bool dummy; /* no options */
};

static const vl_option_t leaf_options[] = {VL_OPT_END};
static const char *const misc_types[] = {"misc", NULL};

static const vl_xlator_class_t leaf_class = {
    .abi = VL_XLATOR_ABI,
    .type = "test/leaf",
    .prefix = "leaf",
    .flags = VL_XL_LEAF,
    .conf_size = sizeof(struct leaf_conf),
    .options = leaf_options,
    .mem_types = misc_types,
    .doc = "Answers fops from memory for the protocol tests.",
    .notify = leaf_notify,
    .release = leaf_release,
    .fops = {
#define VL_FOP(UPPER, lower, flags) [VL_FOP_##UPPER] = leaf_fop,
#include "vol/fops.def"
#undef VL_FOP
    },
};

/* ---- test/top: records CHILD_UP / CHILD_DOWN ---- */

static struct {
    struct ph_signal sig; /* guards below; on every event */
    int n_up;             /* CHILD_UP seen */
    int n_down;           /* CHILD_DOWN seen */
    int n_breaks;         /* VL_EV_UPCALL for one directory */
    int n_break_all;      /* VL_EV_UPCALL is_all */
    vl_gfid_t broken;     /* the last directory broken */
    int n_invals;         /* VL_EV_UPCALL VL_UPCALL_INVALIDATE */
    struct vl_upcall inval; /* the last one; name points to inval_name */
    char inval_name[256];
} top;


static int
top_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    if (ev == VL_EV_CHILD_UP || ev == VL_EV_CHILD_DOWN) {
        pthread_mutex_lock(&top.sig.lock);
        if (ev == VL_EV_CHILD_UP)
            top.n_up++;
        else
            top.n_down++;
        pthread_cond_broadcast(&top.sig.cond);
        pthread_mutex_unlock(&top.sig.lock);
        return 0;
    }
    if (ev == VL_EV_UPCALL) {
        const struct vl_upcall *up = data;

        pthread_mutex_lock(&top.sig.lock);
        if (up->is_all) {
            top.n_break_all++;
        } else if (up->kind == VL_UPCALL_INVALIDATE) {
            top.n_invals++;
            top.inval = *up;
            snprintf(top.inval_name, sizeof(top.inval_name), "%s",
                     up->name != NULL ? up->name : "");
            top.inval.name = top.inval_name;
        } else {
            top.n_breaks++;
            top.broken = up->gfid;
        }
        pthread_cond_broadcast(&top.sig.cond);
        pthread_mutex_unlock(&top.sig.lock);
        return 0;
    }
    return vl_notify_default(xl, ev, data);
}


static const vl_xlator_class_t top_class = {
    .abi = VL_XLATOR_ABI,
    .type = "test/top",
    .prefix = "top",
    .flags = VL_XL_ONE_CHILD,
    .conf_size = sizeof(struct leaf_conf),
    .options = leaf_options,
    .mem_types = misc_types,
    .doc = "Records child events for the protocol tests.",
    .notify = top_notify,
};


/* Waits until *field >= want (or WAIT_MS); returns *field. */
static int
top_wait(int *field, int want)
{
    return ph_signal_wait(&top.sig, field, want);
}

/* ---- graphs ---- */

/* The brick is test/leaf, its client's top test/top (proto-harness.h's
 * struct ph_env). */

static void
brick_up(struct ph_env *e, const char *allow)
{
    ph_brick_up(e, "volume brick-leaf\n type test/leaf\nend-volume\n",
                "brick-leaf", allow);
}


static void
brick_down(struct ph_env *e)
{
    /* Freed at once, requests in flight or not: the brick goes away. */
    vl_graph_free(e->sg);
    vl_volfile_free(e->svf);
    e->sg = NULL;
    e->svf = NULL;
}


static const char *ping_timeout = "5"; /* client option for client_up */


static void
client_up(struct ph_env *e, const char *subvol)
{
    char opts[64];

    snprintf(opts, sizeof(opts), " option ping-timeout %s\n", ping_timeout);
    ph_client_up(e, subvol, opts, "test/top");
}


static int
env_setup(void **state)
{
    struct ph_env *e = calloc(1, sizeof(*e));

    ph_init();
    (void)vl_registry_add(&xl_features_upcall);
    (void)vl_registry_add(&leaf_class);
    (void)vl_registry_add(&top_class);
    memset(&leaf, 0, sizeof(leaf));
    pthread_mutex_init(&leaf.lock, NULL);
    ph_signal_init(&top.sig);
    top.n_up = top.n_down = 0;
    top.n_breaks = top.n_break_all = 0;
    ph_env_start(e);
    *state = e;
    return 0;
}


static int
env_teardown(void **state)
{
    struct ph_env *e = *state;

    ph_env_stop(e);
    free(e);
    return 0;
}

/* ---- fop helpers on the client graph ---- */

static int do_lookup_xattr(struct ph_env *e, const char *name,
                           const char *xattr, struct vl_reply *r);


static int
do_lookup(struct ph_env *e, const char *name, struct vl_iatt *out)
{
    struct vl_reply r;
    int rc = do_lookup_xattr(e, name, NULL, &r);

    if (rc == 0 && out != NULL)
        *out = r.iatt;
    vl_reply_clear(&r);
    return rc;
}


/* Lookup of name asking for xattr (may be NULL); the reply in *r. */
static int
do_lookup_xattr(struct ph_env *e, const char *name, const char *xattr,
                struct vl_reply *r /* OUT, caller clears */)
{
    union vl_fop_args a;
    int rc;

    memset(&a, 0, sizeof(a));
    a.lookup.loc.parent = vl_inode_table_root(e->cg->itable);
    a.lookup.loc.name = name;
    a.lookup.loc.inode = vl_inode_new(e->cg->itable);
    a.lookup.xattr_name = xattr;
    rc = vl_sync_call(e->cg->top, VL_FOP_LOOKUP, &a, NULL, r);
    vl_inode_unref(a.lookup.loc.parent);
    vl_inode_unref(a.lookup.loc.inode);
    return rc;
}


/* Creates "file"; returns the open fd (caller unrefs). */
static vl_fd_t *
do_create(struct ph_env *e, struct vl_iatt *out)
{
    union vl_fop_args a;
    struct vl_reply r;
    struct vl_caller caller = {.uid = 1234, .gid = 5678, .pid = 42,
                               .n_groups = 1, .groups = {9}};
    vl_inode_t *inode = vl_inode_new(e->cg->itable);
    vl_fd_t *fd = vl_fd_new(inode, O_RDWR | O_CREAT, 42);
    int rc;

    memset(&a, 0, sizeof(a));
    a.create.loc.parent = vl_inode_table_root(e->cg->itable);
    a.create.loc.name = "file";
    a.create.loc.inode = inode;
    a.create.flags = O_RDWR | O_CREAT;
    a.create.mode = 0640;
    vl_gfid_generate(&a.create.gfid);
    a.create.fd = fd;
    rc = vl_sync_call(e->cg->top, VL_FOP_CREATE, &a, &caller, &r);
    assert_int_equal(rc, 0);
    assert_true(vl_gfid_equal(&r.iatt.gfid, &a.create.gfid));
    if (out != NULL)
        *out = r.iatt;
    {
        vl_inode_t *l = vl_inode_link(inode, &r.iatt);

        vl_inode_unref(l);
    }
    vl_reply_clear(&r);
    vl_inode_unref(a.create.loc.parent);
    vl_inode_unref(inode);
    /* The caller's identity crossed the wire; client_id was set. */
    pthread_mutex_lock(&leaf.lock);
    assert_int_equal(leaf.last.uid, 1234);
    assert_int_equal(leaf.last.gid, 5678);
    assert_int_equal(leaf.last.pid, 42);
    assert_int_equal(leaf.last.n_groups, 1);
    assert_int_equal(leaf.last.groups[0], 9);
    assert_true(leaf.last.client_id != 0);
    pthread_mutex_unlock(&leaf.lock);
    return fd;
}


static int
do_write(struct ph_env *e, vl_fd_t *fd, const char *buf, size_t n, off_t off)
{
    union vl_fop_args a;
    struct vl_reply r;
    struct iovec iov[2] = {{(void *)buf, n / 2},
                           {(void *)(buf + n / 2), n - n / 2}};
    int rc;

    memset(&a, 0, sizeof(a));
    a.write.fd = fd;
    a.write.iov = iov;
    a.write.n_iov = 2;
    a.write.offset = off;
    rc = vl_sync_call(e->cg->top, VL_FOP_WRITE, &a, NULL, &r);
    if (rc == 0)
        assert_int_equal(r.count, (int64_t)n);
    vl_reply_clear(&r);
    return rc;
}


static int
do_read(struct ph_env *e, vl_fd_t *fd, char *out, size_t n, off_t off,
        int64_t *count)
{
    union vl_fop_args a;
    struct vl_reply r;
    int rc;

    memset(&a, 0, sizeof(a));
    a.read.fd = fd;
    a.read.size = n;
    a.read.offset = off;
    rc = vl_sync_call(e->cg->top, VL_FOP_READ, &a, NULL, &r);
    if (rc == 0) {
        *count = r.count;
        memcpy(out, r.data, (size_t)r.count);
    }
    vl_reply_clear(&r);
    return rc;
}


static void
wait_up(struct ph_env *e, int n)
{
    assert_int_equal(top_wait(&top.n_up, n), n);
}

/* ---- tests ---- */

static void
test_round_trip(void **state)
{
    struct ph_env *e = *state;
    struct vl_iatt ia, cia;
    static char wbuf[256 * 1024], rbuf[256 * 1024];
    union vl_fop_args a;
    struct vl_reply r;
    int64_t count = 0;
    vl_fd_t *fd, *dfd;

    brick_up(e, "127.0.0.1");
    client_up(e, "brick-leaf");
    wait_up(e, 1);

    assert_int_equal(do_lookup(e, "file", NULL), -ENOENT);
    fd = do_create(e, &cia);
    assert_int_equal(do_lookup(e, "file", &ia), 0);
    assert_true(vl_gfid_equal(&ia.gfid, &cia.gfid));
    /* An xattr travels with the lookup (protocol 3), or its error. */
    {
        struct vl_reply xr;

        assert_int_equal(do_lookup_xattr(e, "file", "user.present", &xr), 0);
        assert_int_equal(xr.xattr_status, 0);
        assert_int_equal(xr.xattr_len, 12);
        assert_memory_equal(xr.xattr, "layout-bytes", 12);
        vl_reply_clear(&xr);
        assert_int_equal(do_lookup_xattr(e, "file", "user.absent", &xr), 0);
        assert_int_equal(xr.xattr_status, -ENODATA);
        assert_null(xr.xattr);
        vl_reply_clear(&xr);
        assert_int_equal(do_lookup_xattr(e, "file", NULL, &xr), 0);
        assert_int_equal(xr.xattr_status, 0);
        assert_null(xr.xattr);
        vl_reply_clear(&xr);
    }

    for (size_t i = 0; i < sizeof(wbuf); i++)
        wbuf[i] = (char)(i * 31 + 7);
    assert_int_equal(do_write(e, fd, wbuf, sizeof(wbuf), 4096), 0);
    assert_int_equal(do_read(e, fd, rbuf, sizeof(rbuf), 4096, &count), 0);
    assert_int_equal(count, sizeof(rbuf));
    assert_memory_equal(rbuf, wbuf, sizeof(wbuf));
    /* Short read at the end of the file. */
    assert_int_equal(do_read(e, fd, rbuf, 8192, 4096 + sizeof(wbuf) - 100,
                             &count),
                     0);
    assert_int_equal(count, 100);

    /* A write in more pieces than one record carries is gathered. */
    {
        struct iovec many[12];
        union vl_fop_args wa;

        for (int i = 0; i < 12; i++) {
            many[i].iov_base = wbuf + i * 1000;
            many[i].iov_len = 1000;
        }
        memset(&wa, 0, sizeof(wa));
        wa.write.fd = fd;
        wa.write.iov = many;
        wa.write.n_iov = 12;
        wa.write.offset = 4096;
        assert_int_equal(
            vl_sync_call(e->cg->top, VL_FOP_WRITE, &wa, NULL, &r), 0);
        assert_int_equal(r.count, 12000);
        vl_reply_clear(&r);
        assert_int_equal(do_read(e, fd, rbuf, 12000, 4096, &count), 0);
        assert_int_equal(count, 12000);
        assert_memory_equal(rbuf, wbuf, 12000);
    }

    /* stat by fd */
    memset(&a, 0, sizeof(a));
    a.stat.fd = fd;
    assert_int_equal(vl_sync_call(e->cg->top, VL_FOP_STAT, &a, NULL, &r), 0);
    assert_int_equal(r.iatt.size, 4096 + sizeof(wbuf));
    assert_true(vl_gfid_equal(&r.iatt.gfid, &cia.gfid));
    vl_reply_clear(&r);

    /* getxattr: value, then a missing name */
    memset(&a, 0, sizeof(a));
    a.getxattr.loc.inode = fd->inode;
    a.getxattr.name = "user.k";
    a.getxattr.size = 100;
    assert_int_equal(vl_sync_call(e->cg->top, VL_FOP_GETXATTR, &a, NULL, &r),
                     0);
    assert_int_equal(r.count, 5);
    assert_memory_equal(r.xattr, "value", 5);
    vl_reply_clear(&r);
    a.getxattr.name = "user.none";
    assert_int_equal(vl_sync_call(e->cg->top, VL_FOP_GETXATTR, &a, NULL, &r),
                     -ENODATA);
    vl_reply_clear(&r);

    /* opendir + readdirplus */
    {
        vl_inode_t *root = vl_inode_table_root(e->cg->itable);

        dfd = vl_fd_new(root, O_RDONLY, 1);
        memset(&a, 0, sizeof(a));
        a.opendir.loc.inode = root;
        a.opendir.fd = dfd;
        assert_int_equal(
            vl_sync_call(e->cg->top, VL_FOP_OPENDIR, &a, NULL, &r), 0);
        vl_reply_clear(&r);
        memset(&a, 0, sizeof(a));
        a.readdir.fd = dfd;
        a.readdir.size = 4096;
        a.readdir.plus = true;
        assert_int_equal(
            vl_sync_call(e->cg->top, VL_FOP_READDIR, &a, NULL, &r), 0);
        assert_int_equal(r.entries.n, 2);
        assert_true(r.entries.eof);
        assert_string_equal(r.entries.ents[0].name, "file");
        assert_true(r.entries.ents[0].has_iatt);
        assert_true(vl_gfid_equal(&r.entries.ents[0].iatt.gfid, &cia.gfid));
        assert_string_equal(r.entries.ents[1].name, "sub");
        assert_false(r.entries.ents[1].has_iatt);
        vl_reply_clear(&r);
        vl_inode_unref(root);
    }

    /* A fop the leaf does not implement comes back as its error. */
    memset(&a, 0, sizeof(a));
    a.lseek.fd = fd;
    assert_int_equal(vl_sync_call(e->cg->top, VL_FOP_LSEEK, &a, NULL, &r),
                     -ENOSYS);
    vl_reply_clear(&r);

    /* Releasing the fds sends RELEASE: the brick drops its fds. */
    vl_fd_unref(fd);
    vl_fd_unref(dfd);
    for (int i = 0; i < 2000; i++) {
        pthread_mutex_lock(&leaf.lock);
        count = leaf.n_releases;
        pthread_mutex_unlock(&leaf.lock);
        if (count == 2)
            break;
        usleep(1000);
    }
    assert_int_equal(count, 2);
}

/* opendir with list_size: protocol/server reads the first batch with the
 * open and sends both in one reply (no READDIR call crosses the wire);
 * without list_size no listing comes; a listing that fails leaves the
 * open good and the fd usable. */
static void
test_opendir_listing(void **state)
{
    struct ph_env *e = *state;
    vl_inode_t *root;
    union vl_fop_args a;
    struct vl_reply r;
    struct vl_iatt cia;
    vl_fd_t *dfd;
    int n;

    brick_up(e, "127.0.0.1");
    client_up(e, "brick-leaf");
    wait_up(e, 1);
    vl_fd_unref(do_create(e, &cia));
    root = vl_inode_table_root(e->cg->itable);
    memset(&r, 0, sizeof(r));
    for (int with = 0; with < 2; with++) {
        dfd = vl_fd_new(root, O_RDONLY, 1);
        memset(&a, 0, sizeof(a));
        a.opendir.loc.inode = root;
        a.opendir.fd = dfd;
        a.opendir.list_size = with ? 4096 : 0;
        pthread_mutex_lock(&leaf.lock);
        n = leaf.n_readdirs;
        pthread_mutex_unlock(&leaf.lock);
        assert_int_equal(
            vl_sync_call(e->cg->top, VL_FOP_OPENDIR, &a, NULL, &r), 0);
        pthread_mutex_lock(&leaf.lock);
        assert_int_equal(leaf.n_readdirs - n, with);
        pthread_mutex_unlock(&leaf.lock);
        assert_int_equal(r.has_listing, with);
        if (with) {
            assert_int_equal(r.entries.n, 2);
            assert_true(r.entries.eof);
            assert_string_equal(r.entries.ents[0].name, "file");
            assert_true(r.entries.ents[0].has_iatt);
            assert_string_equal(r.entries.ents[1].name, "sub");
        } else {
            assert_int_equal(r.entries.n, 0);
        }
        vl_reply_clear(&r);
        vl_fd_unref(dfd);
    }

    /* The brick's readdir fails: the open still succeeds, without a
     * listing, and a readdir on the fd reaches the brick. */
    pthread_mutex_lock(&leaf.lock);
    leaf.readdir_status = -EIO;
    pthread_mutex_unlock(&leaf.lock);
    dfd = vl_fd_new(root, O_RDONLY, 1);
    memset(&a, 0, sizeof(a));
    a.opendir.loc.inode = root;
    a.opendir.fd = dfd;
    a.opendir.list_size = 4096;
    assert_int_equal(vl_sync_call(e->cg->top, VL_FOP_OPENDIR, &a, NULL, &r),
                     0);
    assert_false(r.has_listing);
    vl_reply_clear(&r);
    pthread_mutex_lock(&leaf.lock);
    leaf.readdir_status = 0;
    pthread_mutex_unlock(&leaf.lock);
    memset(&a, 0, sizeof(a));
    a.readdir.fd = dfd;
    a.readdir.size = 4096;
    a.readdir.plus = true;
    assert_int_equal(vl_sync_call(e->cg->top, VL_FOP_READDIR, &a, NULL, &r),
                     0);
    assert_int_equal(r.entries.n, 2);
    vl_reply_clear(&r);
    vl_fd_unref(dfd);
    vl_inode_unref(root);
}


struct conc {
    struct ph_signal sig; /* guards below; on every answer */
    int n_done;           /* answers */
    int n_ok;             /* correct answers */
};


static void
conc_done(vl_req_t *req, void *cookie)
{
    struct conc *c = cookie;

    pthread_mutex_lock(&c->sig.lock);
    c->n_done++;
    c->n_ok += req->status == 0 && req->reply.count == 512
               && req->reply.data[0] == (char)7;
    pthread_cond_broadcast(&c->sig.cond);
    pthread_mutex_unlock(&c->sig.lock);
}


static void
test_many_concurrent(void **state)
{
    struct ph_env *e = *state;
    struct conc c = {.n_done = 0};
    char wbuf[4096];
    const int n = 500;
    vl_fd_t *fd;

    ph_signal_init(&c.sig);
    brick_up(e, "*");
    client_up(e, "brick-leaf");
    wait_up(e, 1);
    fd = do_create(e, NULL);
    memset(wbuf, 7, sizeof(wbuf));
    assert_int_equal(do_write(e, fd, wbuf, sizeof(wbuf), 0), 0);
    for (int i = 0; i < n; i++) {
        vl_req_t *req = vl_req_new(e->cg->top, VL_FOP_READ);

        assert_non_null(req);
        req->args.read.fd = fd;
        req->args.read.size = 512;
        req->args.read.offset = (i % 7) * 512;
        vl_wind(req, conc_done, &c);
    }
    assert_int_equal(ph_signal_wait(&c.sig, &c.n_done, n), n);
    assert_int_equal(c.n_ok, n);
    vl_fd_unref(fd);
}


/* Polls the client graph's last error until it contains want. */
static void
expect_reason(struct ph_env *e, const char *want)
{
    char reason[600] = "";

    for (int i = 0; i < WAIT_MS / 100; i++) {
        (void)vl_graph_wait_ready(e->cg, 100, reason, sizeof(reason));
        if (strstr(reason, want) != NULL)
            return;
    }
    fail_msg("reason '%s' lacks '%s'", reason, want);
}


static void
test_wrong_subvolume(void **state)
{
    struct ph_env *e = *state;

    brick_up(e, "*");
    client_up(e, "/no/such");
    expect_reason(e, "subvolume '/no/such' refused: no such subvolume "
                     "'/no/such'");
    assert_int_equal(top.n_up, 0);
    assert_int_equal(do_lookup(e, "file", NULL), -ENOTCONN);
}


static void
test_address_refused(void **state)
{
    struct ph_env *e = *state;

    brick_up(e, "10.*,192.168.1.1");
    client_up(e, "brick-leaf");
    expect_reason(e, "access denied for 127.0.0.1 to subvolume "
                     "'brick-leaf'");
    assert_int_equal(top.n_up, 0);
}


static void
test_connection_refused_reason(void **state)
{
    struct ph_env *e = *state;
    char want[64];

    client_up(e, "brick-leaf"); /* no brick at all */
    snprintf(want, sizeof(want), "127.0.0.1:%u: Connection refused",
             e->port);
    expect_reason(e, want);
    assert_int_equal(do_lookup(e, "file", NULL), -ENOTCONN);
}


static void
test_garbage_does_not_stop_server(void **state)
{
    struct ph_env *e = *state;
    struct sockaddr_in sin = {.sin_family = AF_INET};
    static const char *junk[] = {
        "\x80\x00\x00\x04\xff\xff\xff\xff",      /* record too short */
        "\xff\xff\xff\xff",                      /* 2 GiB record */
        "GET / HTTP/1.1\r\nHost: x\r\n\r\n",    /* not RPC at all */
    };
    char buf[256];

    brick_up(e, "*");
    sin.sin_port = htons(e->port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (size_t i = 0; i < VL_ARRAY_SIZE(junk); i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);

        assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)),
                         0);
        assert_true(write(fd, junk[i], strlen(junk[i])) > 0);
        if (i == 0)
            assert_true(write(fd, "\0\0\0\0", 4) == 4);
        assert_true(read(fd, buf, sizeof(buf)) <= 0); /* closed on us */
        close(fd);
    }
    client_up(e, "brick-leaf");
    wait_up(e, 1);
    assert_int_equal(do_lookup(e, "file", NULL), -ENOENT);
}


static void
test_reconnect_and_reopen(void **state)
{
    struct ph_env *e = *state;
    char wbuf[8192], rbuf[8192];
    int64_t count = 0;
    int opens, disc;
    vl_fd_t *fd;

    brick_up(e, "*");
    client_up(e, "brick-leaf");
    wait_up(e, 1);
    fd = do_create(e, NULL);
    memset(wbuf, 'z', sizeof(wbuf));
    assert_int_equal(do_write(e, fd, wbuf, sizeof(wbuf), 0), 0);

    /* The brick goes away: CHILD_DOWN, ENOTCONN, and the brick saw the
     * client's disconnect. */
    brick_down(e);
    assert_int_equal(top_wait(&top.n_down, 1), 1);
    assert_int_equal(do_lookup(e, "file", NULL), -ENOTCONN);
    assert_int_equal(do_read(e, fd, rbuf, 10, 0, &count), -ENOTCONN);
    pthread_mutex_lock(&leaf.lock);
    disc = leaf.n_disconnects;
    opens = leaf.n_opens;
    pthread_mutex_unlock(&leaf.lock);
    assert_int_equal(disc, 1);

    /* It returns on the same port: CHILD_UP again, the fd is re-opened
     * by GFID and I/O resumes. */
    brick_up(e, "*");
    wait_up(e, 2);
    assert_int_equal(do_read(e, fd, rbuf, sizeof(rbuf), 0, &count), 0);
    assert_int_equal(count, sizeof(rbuf));
    assert_memory_equal(rbuf, wbuf, sizeof(wbuf));
    pthread_mutex_lock(&leaf.lock);
    assert_int_equal(leaf.n_opens, opens + 1);
    pthread_mutex_unlock(&leaf.lock);
    vl_fd_unref(fd);
}


/* A brick that comes back while its client waits out a long backoff (one
 * grown while it was down): VL_EV_RECONNECT from the top (the heal
 * daemon's kick) makes the client connect at its next tick, not when the
 * backoff ends. */
static void
test_reconnect_event_cuts_backoff(void **state)
{
    struct ph_env *e = *state;
    struct client_priv *priv;
    vl_xlator_t *c;
    bool is_held = false;
    int n_up;

    client_up(e, "brick-leaf"); /* no brick yet: refused, retried */
    c = vl_graph_find(e->cg, "c");
    assert_non_null(c);
    priv = c->priv;
    /* Between tries (no connection), the next one is put an hour out; a
     * try that was starting as we did so resets it, so again until it
     * holds. */
    for (int i = 0; i < WAIT_MS / 250 && !is_held; i++) {
        pthread_mutex_lock(&priv->lock);
        if (priv->clnt == NULL) {
            priv->next_connect_ms = vrpc_now_ms() + 3600 * 1000;
            priv->backoff_ms = CLIENT_BACKOFF_MAX_MS;
        }
        pthread_mutex_unlock(&priv->lock);
        usleep(250 * 1000);
        pthread_mutex_lock(&priv->lock);
        is_held = priv->clnt == NULL
                  && priv->next_connect_ms > vrpc_now_ms() + 1800 * 1000;
        pthread_mutex_unlock(&priv->lock);
    }
    assert_true(is_held);

    brick_up(e, "*");
    usleep(300 * 1000); /* three ticks: none tries */
    pthread_mutex_lock(&top.sig.lock);
    n_up = top.n_up;
    pthread_mutex_unlock(&top.sig.lock);
    assert_int_equal(n_up, 0);

    vl_notify(e->cg->top, VL_EV_RECONNECT, NULL);
    wait_up(e, 1);
    assert_int_equal(do_lookup(e, "file", NULL), -ENOENT);
}


static void
hold_done(vl_req_t *req, void *cookie)
{
    struct conc *c = cookie;

    pthread_mutex_lock(&c->sig.lock);
    c->n_done++;
    c->n_ok = req->status; /* the status itself */
    pthread_cond_broadcast(&c->sig.cond);
    pthread_mutex_unlock(&c->sig.lock);
}


/* A brick that stops answering (its loop frozen) is declared dead after
 * ping-timeout: the pending call fails -ENOTCONN, CHILD_DOWN goes up, and
 * when the brick thaws the client reconnects. */
static void
test_ping_timeout(void **state)
{
    struct ph_env *e = *state;
    struct conc c = {.n_done = 0};
    char wbuf[512];
    vl_req_t *req;
    vl_fd_t *fd;

    ph_signal_init(&c.sig);
    ping_timeout = "1";
    brick_up(e, "*");
    client_up(e, "brick-leaf");
    ping_timeout = "5";
    wait_up(e, 1);
    fd = do_create(e, NULL);
    memset(wbuf, 1, sizeof(wbuf));
    assert_int_equal(do_write(e, fd, wbuf, sizeof(wbuf), 0), 0);

    vl_loop_stop(e->sloop); /* the brick hangs */
    req = vl_req_new(e->cg->top, VL_FOP_READ);
    assert_non_null(req);
    req->args.read.fd = fd;
    req->args.read.size = 512;
    vl_wind(req, hold_done, &c);
    assert_int_equal(top_wait(&top.n_down, 1), 1);
    assert_int_equal(ph_signal_wait(&c.sig, &c.n_done, 1), 1);
    assert_int_equal(c.n_ok, -ENOTCONN);
    expect_reason(e, "ping-timeout");

    assert_int_equal(vl_loop_start(e->sloop), 0); /* it comes back */
    wait_up(e, 2);
    vl_fd_unref(fd);
}


/* The raw peer of the fuzz and version tests. */
static struct ph_raw raw;


/* After a valid SETVOLUME, every procedure number gets random argument
 * bytes: each call is answered (an RPC error or a status), the brick
 * stays up, and a normal client still works afterwards. */
static void
test_fuzz_procedures(void **state)
{
    struct ph_env *e = *state;
    unsigned seed = 12345;
    int n = 1; /* the SETVOLUME */

    brick_up(e, "*");
    ph_raw_open(&raw, e, "brick-leaf", MRT_PROTO_VERSION);
    for (uint32_t proc = 0; proc <= 110; proc++) {
        for (int round = 0; round < 30; round++) {
            char body[160];
            size_t len = (size_t)(rand_r(&seed) % sizeof(body));
            struct iovec iov = {body, len};

            for (size_t i = 0; i < len; i++) {
                /* Mostly small numbers, so that lengths are plausible. */
                body[i] = (char)(rand_r(&seed) % 4 == 0 ? rand_r(&seed) : 0);
            }
            ph_raw_send(&raw, proc, NULL, NULL, &iov, 1, 1);
            n++;
        }
    }
    assert_int_equal(ph_signal_wait(&raw.sig, &raw.n_done, n), n);
    ph_raw_close(&raw);

    client_up(e, "brick-leaf");
    wait_up(e, 1);
    assert_int_equal(do_lookup(e, "nothing-here", NULL), -ENOENT);
}


/* SETVOLUME replies decoded for the version test (raw.sig.lock). */
static int hs_status[5];
static char hs_error[5][MRT_ERRSTR_MAX + 1];


static void
hs_reply(void *cookie, int status, vl_buf_t *rec, size_t off, size_t len)
{
    size_t k = (size_t)(uintptr_t)cookie;
    mrt_setvolume_rsp r;

    memset(&r, 0, sizeof(r));
    pthread_mutex_lock(&raw.sig.lock);
    if (status != 0) {
        hs_status[k] = status;
    } else if (vrpc_decode_body(rec->data + off, len - off,
                                (xdrproc_t)xdr_mrt_setvolume_rsp, &r,
                                NULL) != 0) {
        hs_status[k] = -EBADMSG;
    } else {
        hs_status[k] = r.status;
        snprintf(hs_error[k], sizeof(hs_error[k]), "%s",
                 r.error != NULL ? r.error : "");
        xdr_free((xdrproc_t)xdr_mrt_setvolume_rsp, (char *)&r);
    }
    raw.n_done++;
    pthread_cond_broadcast(&raw.sig.cond);
    pthread_mutex_unlock(&raw.sig.lock);
}


/* A peer of another protocol version (older or newer) is refused at
 * SETVOLUME with EPROTONOSUPPORT and a text naming both versions; its
 * fops are not decoded (SYSTEM_ERR: not bound); the right version on the
 * same connection is accepted. */
static void
test_protocol_version_refused(void **state)
{
    struct ph_env *e = *state;
    const unsigned versions[] = {MRT_PROTO_MIN - 1, MRT_PROTO_VERSION + 1,
                                 0, MRT_PROTO_VERSION};
    mrt_setvolume_args sv = {.subvolume = "brick-leaf", .identity = "old"};
    vrpc_clnt_t *c;
    int st = 0;
    char want[128];
    char body[64] = {0};
    struct iovec iov = {body, sizeof(body)};

    brick_up(e, "*");
    ph_raw_connect(&raw, e);
    c = raw.clnt;
    for (size_t k = 0; k < 3; k++) {
        sv.proto_version = versions[k];
        assert_int_equal(vrpc_clnt_call(c, MRT_HANDSHAKE_PROG, MRT_VERSION,
                                        MRT_HS_SETVOLUME, NULL,
                                        (xdrproc_t)xdr_mrt_setvolume_args,
                                        &sv, NULL, 0, hs_reply,
                                        (void *)(uintptr_t)k),
                         0);
        ph_signal_wait(&raw.sig, &raw.n_done, (int)k + 1);
        assert_int_equal(hs_status[k], -EPROTONOSUPPORT);
        snprintf(want, sizeof(want),
                 "protocol version %u not supported (brick speaks %u)",
                 versions[k], (unsigned)MRT_PROTO_VERSION);
        assert_string_equal(hs_error[k], want);
    }
    /* Not bound: a LOOKUP (any body) is refused before decoding. */
    assert_int_equal(vrpc_clnt_call(c, MRT_FOPS_PROG, MRT_VERSION,
                                    VL_FOP_LOOKUP + 1, NULL, NULL, NULL, &iov,
                                    1, hs_reply, (void *)(uintptr_t)4),
                     0);
    ph_signal_wait(&raw.sig, &raw.n_done, 4);
    pthread_mutex_lock(&raw.sig.lock);
    st = hs_status[4];
    pthread_mutex_unlock(&raw.sig.lock);
    assert_int_equal(st, -EIO); /* SYSTEM_ERR */
    sv.proto_version = versions[3];
    assert_int_equal(vrpc_clnt_call(c, MRT_HANDSHAKE_PROG, MRT_VERSION,
                                    MRT_HS_SETVOLUME, NULL,
                                    (xdrproc_t)xdr_mrt_setvolume_args, &sv,
                                    NULL, 0, hs_reply, (void *)(uintptr_t)3),
                     0);
    ph_signal_wait(&raw.sig, &raw.n_done, 5);
    pthread_mutex_lock(&raw.sig.lock);
    st = hs_status[3];
    pthread_mutex_unlock(&raw.sig.lock);
    assert_int_equal(st, 0);
    ph_raw_close(&raw);
}


/* mkdir of a directory through client 1 with want_lease; is_leased of
 * the answer. */
static bool
lease_mkdir(vl_graph_t *g, const char *name, const vl_gfid_t *gfid,
            bool want)
{
    vl_inode_t *root = vl_inode_table_root(g->itable);
    vl_inode_t *in = vl_inode_new(g->itable);
    union vl_fop_args a;
    struct vl_reply r;
    bool leased;

    memset(&a, 0, sizeof(a));
    a.mkdir.loc.parent = root;
    a.mkdir.loc.name = name;
    a.mkdir.loc.inode = in;
    a.mkdir.gfid = *gfid;
    a.mkdir.mode = 0755;
    a.mkdir.want_lease = want;
    assert_int_equal(vl_sync_call(g->top, VL_FOP_MKDIR, &a, NULL, &r), 0);
    leased = r.is_leased;
    vl_reply_clear(&r);
    vl_inode_unref(in);
    vl_inode_unref(root);
    return leased;
}


/* A lease granted by the brick's features/upcall travels in the mkdir's
 * answer (protocol 4); another client's create in the directory comes
 * back to the holder as a BREAK_LEASE call, VL_EV_UPCALL in its graph,
 * and as a CACHE_INVALIDATE of the name (protocol 7), as does a write to
 * a file the holder looked at;
 * the brick going away is VL_EV_UPCALL is_all. Without features/upcall
 * in the brick nothing is granted. */
static void
test_lease_over_the_wire(void **state)
{
    struct ph_env *e = *state;
    vl_volfile_t *vf2;
    vl_graph_t *g2;
    vl_gfid_t d, other;
    char text[1024];

    /* A brick without the lease registry grants nothing. */
    brick_up(e, "127.0.0.1");
    client_up(e, "brick-leaf");
    wait_up(e, 1);
    vl_gfid_generate(&d);
    assert_false(lease_mkdir(e->cg, "d0", &d, true));
    ph_graph_down(&e->cg, &e->cvf);
    brick_down(e);

    ph_brick_up(e,
                "volume leaf\n type test/leaf\nend-volume\n"
                "volume brick-leaf\n type features/upcall\n"
                " subvolumes leaf\nend-volume\n",
                "brick-leaf", "127.0.0.1");
    client_up(e, "brick-leaf");
    snprintf(text, sizeof(text),
             "volume c\n type protocol/client\n"
             " option remote-host 127.0.0.1\n"
             " option remote-port %u\n"
             " option remote-subvolume brick-leaf\n"
             "end-volume\n"
             "volume t\n type test/top\n subvolumes c\nend-volume\n",
             e->port);
    g2 = ph_graph_up(e->cloop, text, &vf2);
    wait_up(e, 3);

    vl_gfid_generate(&d);
    vl_gfid_generate(&other);
    assert_true(lease_mkdir(e->cg, "d", &d, true));
    assert_false(lease_mkdir(e->cg, "other", &other, false));

    /* Client 2 creates in d: client 1 hears of it, both as a lease
     * break and as a cache invalidation of the name. */
    {
        vl_inode_t *dir = vl_inode_get(g2->itable, &d, S_IFDIR);
        vl_inode_t *in = vl_inode_new(g2->itable);
        vl_inode_t *in1;
        union vl_fop_args a, w;
        struct vl_reply r;
        vl_gfid_t f;
        char byte = 'x';
        struct iovec iov = {&byte, 1};

        memset(&a, 0, sizeof(a));
        a.create.loc.parent = dir;
        a.create.loc.name = "f";
        a.create.loc.inode = in;
        a.create.flags = O_RDWR | O_CREAT;
        a.create.mode = 0644;
        vl_gfid_generate(&a.create.gfid);
        f = a.create.gfid;
        a.create.fd = vl_fd_new(in, O_RDWR, 1);
        assert_int_equal(vl_sync_call(g2->top, VL_FOP_CREATE, &a, NULL, &r),
                         0);
        vl_reply_clear(&r);
        assert_int_equal(top_wait(&top.n_breaks, 1), 1);
        assert_int_equal(top_wait(&top.n_invals, 1), 1);
        pthread_mutex_lock(&top.sig.lock);
        assert_true(vl_gfid_equal(&top.broken, &d));
        assert_int_equal(top.n_break_all, 0);
        assert_int_equal(top.inval.flags, VL_INVAL_ATTR | VL_INVAL_ENTRY);
        assert_true(vl_gfid_equal(&top.inval.parent, &d));
        assert_true(vl_gfid_equal(&top.inval.gfid, &f));
        assert_string_equal(top.inval.name, "f");
        pthread_mutex_unlock(&top.sig.lock);

        /* Client 1 looks at f; client 2's write then tells it that f's
         * attributes and data changed. */
        in1 = vl_inode_get(e->cg->itable, &f, S_IFREG);
        memset(&w, 0, sizeof(w));
        w.stat.loc.inode = in1;
        assert_int_equal(vl_sync_call(e->cg->top, VL_FOP_STAT, &w, NULL, &r),
                         0);
        vl_reply_clear(&r);
        vl_inode_unref(in1);
        memset(&w, 0, sizeof(w));
        w.write.fd = a.create.fd;
        w.write.iov = &iov;
        w.write.n_iov = 1;
        assert_int_equal(vl_sync_call(g2->top, VL_FOP_WRITE, &w, NULL, &r),
                         0);
        vl_reply_clear(&r);
        assert_int_equal(top_wait(&top.n_invals, 2), 2);
        pthread_mutex_lock(&top.sig.lock);
        assert_int_equal(top.inval.flags, VL_INVAL_ATTR | VL_INVAL_DATA);
        assert_true(vl_gfid_equal(&top.inval.gfid, &f));
        pthread_mutex_unlock(&top.sig.lock);

        vl_fd_unref(a.create.fd);
        vl_inode_unref(in);
        vl_inode_unref(dir);
    }

    /* The brick goes away: every lease of both clients is gone. */
    brick_down(e);
    assert_int_equal(top_wait(&top.n_break_all, 2), 2);
    pthread_mutex_lock(&top.sig.lock);
    assert_int_equal(top.n_breaks, 1);
    pthread_mutex_unlock(&top.sig.lock);
    ph_graph_down(&g2, &vf2);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, env_setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_opendir_listing, env_setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_many_concurrent, env_setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_wrong_subvolume, env_setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_address_refused, env_setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_connection_refused_reason,
                                        env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_garbage_does_not_stop_server,
                                        env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_reconnect_and_reopen, env_setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_reconnect_event_cuts_backoff,
                                        env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_ping_timeout, env_setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_fuzz_procedures, env_setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_protocol_version_refused,
                                        env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_lease_over_the_wire, env_setup,
                                        env_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
