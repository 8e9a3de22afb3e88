/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-fake: the in-memory brick of replicate's tests (see rep-fake.h).
 * One mutex guards everything; every fop answers before returning.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "rep-fake.h"

#define FAKE_OBJS 64
#define FAKE_XATTRS 24
#define FAKE_DATA 4096

struct fake_xattr {
    char name[96];       /* "" = free slot */
    uint8_t val[64];
    size_t len;
};

struct fake_obj {
    bool is_used;
    vl_gfid_t gfid;
    vl_gfid_t parent;    /* null for the root */
    char name[64];
    uint32_t mode;
    uint32_t uid, gid;
    int64_t mtime;
    char data[FAKE_DATA];     /* a symlink's target */
    size_t size;
    struct fake_xattr x[FAKE_XATTRS];
};

struct fake_priv {
    pthread_mutex_t lock;             /* guards every field below */
    bool is_down;
    bool is_lock_busy;                /* TRY locks answer -EAGAIN */
    char lk_fail_name[64];            /* entrylks of this name ... */
    int lk_fail_err;                  /* ... answer this (0: none) */
    bool is_plain;                    /* ignores what compounds carry */
    int fail[VL_FOP_COUNT];           /* errno to answer per fop */
    size_t n_by_op[VL_FOP_COUNT];
    size_t n_all;
    vl_fop_t last_op;                 /* the last request's fop */
    struct fake_obj obj[FAKE_OBJS];   /* [0] is the root */
};


static struct fake_obj *
fake_find_gfid(struct fake_priv *p, const vl_gfid_t *gfid)
{
    for (int i = 0; i < FAKE_OBJS; i++)
        if (p->obj[i].is_used && vl_gfid_equal(&p->obj[i].gfid, gfid))
            return &p->obj[i];
    return NULL;
}


static struct fake_obj *
fake_find_name(struct fake_priv *p, const vl_gfid_t *dir, const char *name)
{
    for (int i = 1; i < FAKE_OBJS; i++)
        if (p->obj[i].is_used && vl_gfid_equal(&p->obj[i].parent, dir)
            && strcmp(p->obj[i].name, name) == 0)
            return &p->obj[i];
    return NULL;
}


static struct fake_obj *
fake_new_obj(struct fake_priv *p, const vl_gfid_t *dir, const char *name,
             const vl_gfid_t *gfid, uint32_t mode)
{
    for (int i = 1; i < FAKE_OBJS; i++) {
        struct fake_obj *o = &p->obj[i];

        if (o->is_used)
            continue;
        memset(o, 0, sizeof(*o));
        o->is_used = true;
        o->gfid = *gfid;
        o->parent = *dir;
        snprintf(o->name, sizeof(o->name), "%s", name);
        o->mode = mode;
        return o;
    }
    return NULL;
}


static struct fake_xattr *
fake_x(struct fake_obj *o, const char *name, bool create)
{
    struct fake_xattr *free_slot = NULL;

    for (int i = 0; i < FAKE_XATTRS; i++) {
        if (o->x[i].name[0] == '\0') {
            if (free_slot == NULL)
                free_slot = &o->x[i];
            continue;
        }
        if (strcmp(o->x[i].name, name) == 0)
            return &o->x[i];
    }
    if (!create || free_slot == NULL)
        return NULL;
    snprintf(free_slot->name, sizeof(free_slot->name), "%s", name);
    free_slot->len = 0;
    return free_slot;
}


static void
fake_iatt(const struct fake_obj *o, struct vl_iatt *ia)
{
    memset(ia, 0, sizeof(*ia));
    ia->gfid = o->gfid;
    ia->ino = vl_gfid_to_ino(&o->gfid);
    ia->mode = o->mode;
    ia->uid = o->uid;
    ia->gid = o->gid;
    ia->mtime = o->mtime;
    ia->nlink = 1;
    ia->size = o->size;
    ia->blksize = 4096;
}


static struct fake_obj *
fake_loc_obj(struct fake_priv *p, const struct vl_loc *loc, vl_fd_t *fd)
{
    if (fd != NULL)
        return fake_find_gfid(p, &fd->inode->gfid);
    if (loc->inode != NULL && !vl_gfid_is_null(&loc->inode->gfid))
        return fake_find_gfid(p, &loc->inode->gfid);
    if (loc->parent != NULL && loc->name != NULL)
        return fake_find_name(p, &loc->parent->gfid, loc->name);
    return NULL;
}


static int
fake_entry(vl_xlator_t *xl, struct fake_priv *p, vl_req_t *req,
           const struct vl_loc *loc, const vl_gfid_t *gfid, uint32_t mode)
{
    struct fake_obj *o;

    (void)xl;
    if (fake_find_gfid(p, &loc->parent->gfid) == NULL)
        return -ENOENT;
    if (fake_find_name(p, &loc->parent->gfid, loc->name) != NULL)
        return -EEXIST;
    o = fake_new_obj(p, &loc->parent->gfid, loc->name, gfid, mode);
    if (o == NULL)
        return -ENOSPC;
    fake_iatt(o, &req->reply.iatt);
    return 0;
}


static int
fake_xattrop_obj(vl_xlator_t *xl, struct fake_obj *o,
                 const struct vl_xattrop_args *a, struct vl_reply *reply)
{
    size_t total = 0, off = 0;

    /* The entry record flags are accepted (this brick keeps no granular
     * records: its GETXATTR of their key answers ENODATA, and heal
     * lists the whole directory, as with storage/posix's 'F'). */
    if ((a->op & VL_XATTROP_OP_MASK) != VL_XATTROP_ADD32
        || a->n > VL_XATTROP_MAX)
        return -EINVAL;
    for (uint32_t k = 0; k < a->n; k++) {
        if (strncmp(a->names[k], VL_XATTROP_PREFIX,
                    strlen(VL_XATTROP_PREFIX)) != 0)
            return -EPERM;
        if (a->sizes[k] % 4 != 0 || a->sizes[k] > 64)
            return -EINVAL;
        total += a->sizes[k];
    }
    reply->xattr = vl_malloc(xl, total + 1, 0);
    if (reply->xattr == NULL)
        return -ENOMEM;
    for (uint32_t k = 0; k < a->n; k++) {
        struct fake_xattr *x = fake_x(o, a->names[k], true);
        const uint8_t *add = a->values[k];
        uint8_t cur[64] = {0};
        bool is_zero = true;

        if (x == NULL)
            return -ENOSPC;
        memcpy(cur, x->val, x->len < a->sizes[k] ? x->len : a->sizes[k]);
        for (uint32_t i = 0; i < a->sizes[k]; i += 4) {
            uint32_t c = (uint32_t)cur[i] << 24 | (uint32_t)cur[i + 1] << 16
                         | (uint32_t)cur[i + 2] << 8 | cur[i + 3];
            uint32_t d = (uint32_t)add[i] << 24 | (uint32_t)add[i + 1] << 16
                         | (uint32_t)add[i + 2] << 8 | add[i + 3];

            c += d;
            cur[i] = (uint8_t)(c >> 24);
            cur[i + 1] = (uint8_t)(c >> 16);
            cur[i + 2] = (uint8_t)(c >> 8);
            cur[i + 3] = (uint8_t)c;
            if (c != 0)
                is_zero = false;
        }
        memcpy(reply->xattr + off, cur, a->sizes[k]);
        off += a->sizes[k];
        if (is_zero) {
            x->name[0] = '\0';
        } else {
            memcpy(x->val, cur, a->sizes[k]);
            x->len = a->sizes[k];
        }
    }
    reply->xattr_len = (uint32_t)total;
    return 0;
}


static int
fake_xattrop(vl_xlator_t *xl, struct fake_priv *p,
             const struct vl_xattrop_args *a, struct vl_reply *reply)
{
    struct fake_obj *o = fake_loc_obj(p, &a->loc, a->fd);

    return o != NULL ? fake_xattrop_obj(xl, o, a, reply) : -ENOENT;
}


/* The records read a lookup carries (protocol 9's LOOKUP_XOP), applied
 * to what it found as an XATTROP would be and counted as one; a plain
 * brick answers the lookup alone. */
static void
fake_lookup_xop(vl_xlator_t *xl, struct fake_priv *p, struct fake_obj *o,
                vl_req_t *req)
{
    struct vl_reply tmp = {0};
    int rc;

    if (req->args.lookup.xop == NULL || p->is_plain)
        return;
    p->n_by_op[VL_FOP_XATTROP]++;
    rc = p->fail[VL_FOP_XATTROP];
    if (rc == 0)
        rc = fake_xattrop_obj(xl, o, req->args.lookup.xop, &tmp);
    req->reply.has_xop = true;
    req->reply.xop_status = rc;
    if (rc == 0) {
        req->reply.xop_values = tmp.xattr;
        req->reply.xop_values_len = tmp.xattr_len;
        tmp.xattr = NULL;
    }
    vl_reply_clear(&tmp);
}


static int
fake_readdir(vl_xlator_t *xl, struct fake_priv *p, vl_req_t *req)
{
    struct vl_readdir_args *a = VL_ARGS(req, readdir);
    struct fake_obj *dir = fake_find_gfid(p, &a->fd->inode->gfid);
    int64_t k = 0;

    (void)xl;
    if (dir == NULL)
        return -ENOENT;
    for (int i = 1; i < FAKE_OBJS; i++) {
        struct fake_obj *o = &p->obj[i];
        struct vl_iatt ia;
        int rc;

        if (!o->is_used || !vl_gfid_equal(&o->parent, &dir->gfid))
            continue;
        if (k++ < a->offset)
            continue;
        fake_iatt(o, &ia);
        rc = vl_dirent_list_add(&req->reply.entries, ia.ino, k,
                                S_ISDIR(o->mode) ? 4 : 8, o->name,
                                a->plus ? &ia : NULL);
        if (rc != 0)
            return rc;
    }
    req->reply.entries.eof = true;
    return 0;
}


static int
fake_do(vl_xlator_t *xl, struct fake_priv *p, vl_req_t *req)
{
    struct fake_obj *o;

    switch (req->op) {
    case VL_FOP_LOOKUP:
        o = fake_loc_obj(p, &req->args.lookup.loc, NULL);
        if (o == NULL)
            return -ENOENT;
        fake_iatt(o, &req->reply.iatt);
        fake_lookup_xop(xl, p, o, req);
        return 0;
    case VL_FOP_STAT:
        o = fake_loc_obj(p, &req->args.stat.loc, req->args.stat.fd);
        if (o == NULL)
            return -ENOENT;
        fake_iatt(o, &req->reply.iatt);
        return 0;
    case VL_FOP_CREATE:
        return fake_entry(xl, p, req, &req->args.create.loc,
                          &req->args.create.gfid,
                          S_IFREG | req->args.create.mode);
    case VL_FOP_MKDIR:
        return fake_entry(xl, p, req, &req->args.mkdir.loc,
                          &req->args.mkdir.gfid,
                          S_IFDIR | req->args.mkdir.mode);
    case VL_FOP_MKNOD:
        return fake_entry(xl, p, req, &req->args.mknod.loc,
                          &req->args.mknod.gfid, req->args.mknod.mode);
    case VL_FOP_SYMLINK: {
        int rc = fake_entry(xl, p, req, &req->args.symlink.loc,
                            &req->args.symlink.gfid, S_IFLNK | 0777);

        o = rc == 0 ? fake_find_gfid(p, &req->args.symlink.gfid) : NULL;
        if (o != NULL) {
            snprintf(o->data, sizeof(o->data), "%s",
                     req->args.symlink.target);
            o->size = strlen(o->data);
        }
        return rc;
    }
    case VL_FOP_READLINK:
        o = fake_loc_obj(p, &req->args.readlink.loc, NULL);
        if (o == NULL)
            return -ENOENT;
        if (!S_ISLNK(o->mode))
            return -EINVAL;
        req->reply.link = vl_malloc(xl, o->size + 1, 0);
        if (req->reply.link == NULL)
            return -ENOMEM;
        memcpy(req->reply.link, o->data, o->size + 1);
        return 0;
    case VL_FOP_FALLOCATE: {
        struct vl_fallocate_args *a = VL_ARGS(req, fallocate);

        o = fake_find_gfid(p, &a->fd->inode->gfid);
        if (o == NULL)
            return -ENOENT;
        if (!(a->mode & 0x02 /* PUNCH_HOLE */))
            return -EOPNOTSUPP;
        for (off_t i = a->offset; i < a->offset + a->len; i++)
            if ((size_t)i < o->size)
                o->data[i] = 0;
        return 0;
    }
    case VL_FOP_RCHECKSUM: {
        /* Digest: FNV-1a of the block, not SHA-256 (equal bytes, equal
         * digests is all a test needs). */
        struct vl_rchecksum_args *a = VL_ARGS(req, rchecksum);
        uint32_t n = 0;

        o = fake_find_gfid(p, &a->fd->inode->gfid);
        if (o == NULL)
            return -ENOENT;
        req->reply.sums = vl_calloc(xl, VL_RCHECKSUM_BLOCKS_MAX,
                                    sizeof(*req->reply.sums), 0);
        if (req->reply.sums == NULL)
            return -ENOMEM;
        for (uint64_t at = (uint64_t)a->offset;
             at < (uint64_t)a->offset + a->len && at < o->size;
             at += a->block_size, n++) {
            struct vl_block_sum *b = &req->reply.sums[n];
            uint64_t end = at + a->block_size, h = 14695981039346656037ULL;
            bool is_zero = true;

            if (end > o->size)
                end = o->size;
            b->len = (uint32_t)(end - at);
            for (uint64_t i = at; i < end; i++) {
                h = (h ^ (uint8_t)o->data[i]) * 1099511628211ULL;
                is_zero = is_zero && o->data[i] == 0;
            }
            if (is_zero)
                b->flags = VL_RCHECKSUM_ZERO;
            else
                memcpy(b->digest, &h, sizeof(h));
        }
        req->reply.n_sums = n;
        fake_iatt(o, &req->reply.iatt);
        return 0;
    }
    case VL_FOP_REMOVEXATTR: {
        struct fake_xattr *x;

        o = fake_loc_obj(p, &req->args.removexattr.loc, NULL);
        if (o == NULL)
            return -ENOENT;
        x = fake_x(o, req->args.removexattr.name, false);
        if (x == NULL)
            return -ENODATA;
        x->name[0] = '\0';
        return 0;
    }
    case VL_FOP_UNLINK:
    case VL_FOP_RMDIR:
        o = fake_find_name(p, &req->args.unlink.loc.parent->gfid,
                           req->args.unlink.loc.name);
        if (o == NULL)
            return -ENOENT;
        o->is_used = false;
        return 0;
    case VL_FOP_RENAME: {
        struct vl_rename_args *a = VL_ARGS(req, rename);
        struct fake_obj *dst;

        o = fake_find_name(p, &a->oldloc.parent->gfid, a->oldloc.name);
        if (o == NULL)
            return -ENOENT;
        dst = fake_find_name(p, &a->newloc.parent->gfid, a->newloc.name);
        if (dst != NULL && dst != o)
            dst->is_used = false;
        o->parent = a->newloc.parent->gfid;
        snprintf(o->name, sizeof(o->name), "%s", a->newloc.name);
        fake_iatt(o, &req->reply.iatt);
        return 0;
    }
    case VL_FOP_OPEN:
    case VL_FOP_OPENDIR:
        o = fake_loc_obj(p, &req->args.open.loc, NULL);
        if (o == NULL)
            return -ENOENT;
        if (req->op == VL_FOP_OPEN && (req->args.open.flags & O_TRUNC))
            o->size = 0;
        fake_iatt(o, &req->reply.iatt); /* as storage/posix answers */
        return 0;
    case VL_FOP_WRITE: {
        struct vl_write_args *a = VL_ARGS(req, write);
        size_t n = 0;

        o = fake_find_gfid(p, &a->fd->inode->gfid);
        if (o == NULL)
            return -ENOENT;
        for (int i = 0; i < a->n_iov; i++) {
            size_t at = (size_t)a->offset + n, len = a->iov[i].iov_len;

            if (at + len > FAKE_DATA)
                return -EFBIG;
            memcpy(o->data + at, a->iov[i].iov_base, len);
            n += len;
        }
        if ((size_t)a->offset + n > o->size)
            o->size = (size_t)a->offset + n;
        req->reply.count = (int64_t)n;
        fake_iatt(o, &req->reply.iatt);
        return 0;
    }
    case VL_FOP_READ: {
        struct vl_read_args *a = VL_ARGS(req, read);
        size_t n;

        o = fake_find_gfid(p, &a->fd->inode->gfid);
        if (o == NULL)
            return -ENOENT;
        n = (size_t)a->offset >= o->size ? 0 : o->size - (size_t)a->offset;
        if (n > a->size)
            n = a->size;
        req->reply.buf = vl_buf_new(n + 1);
        if (req->reply.buf == NULL)
            return -ENOMEM;
        memcpy(req->reply.buf->data, o->data + a->offset, n);
        req->reply.data = req->reply.buf->data;
        req->reply.count = (int64_t)n;
        return 0;
    }
    case VL_FOP_SETATTR:
        o = fake_loc_obj(p, &req->args.setattr.loc, req->args.setattr.fd);
        if (o == NULL)
            return -ENOENT;
        if (req->args.setattr.valid & VL_SET_MODE)
            o->mode = (o->mode & S_IFMT)
                      | (req->args.setattr.attr.mode & 07777);
        if (req->args.setattr.valid & VL_SET_SIZE) {
            size_t sz = req->args.setattr.attr.size;

            if (sz > FAKE_DATA)
                return -EFBIG;
            if (sz > o->size)
                memset(o->data + o->size, 0, sz - o->size);
            o->size = sz;
        }
        if (req->args.setattr.valid & VL_SET_UID)
            o->uid = req->args.setattr.attr.uid;
        if (req->args.setattr.valid & VL_SET_GID)
            o->gid = req->args.setattr.attr.gid;
        if (req->args.setattr.valid & VL_SET_MTIME)
            o->mtime = req->args.setattr.attr.mtime;
        fake_iatt(o, &req->reply.iatt);
        return 0;
    case VL_FOP_SETXATTR: {
        struct vl_setxattr_args *a = VL_ARGS(req, setxattr);
        struct fake_xattr *x;

        o = fake_loc_obj(p, &a->loc, NULL);
        if (o == NULL)
            return -ENOENT;
        x = fake_x(o, a->name, true);
        if (x == NULL || a->size > sizeof(x->val))
            return -ENOSPC;
        memcpy(x->val, a->value, a->size);
        x->len = a->size;
        return 0;
    }
    case VL_FOP_GETXATTR: {
        struct vl_getxattr_args *a = VL_ARGS(req, getxattr);
        struct fake_xattr *x;

        o = fake_loc_obj(p, &a->loc, NULL);
        if (o == NULL)
            return -ENOENT;
        if (a->name == NULL) {
            /* The list, without the brick's own keys (as posix). */
            size_t len = 0;

            req->reply.xattr = vl_malloc(xl, FAKE_XATTRS * 96 + 1, 0);
            if (req->reply.xattr == NULL)
                return -ENOMEM;
            for (int i = 0; i < FAKE_XATTRS; i++)
                if (o->x[i].name[0] != '\0'
                    && strncmp(o->x[i].name, "trusted.mortar.", 15) != 0) {
                    size_t l = strlen(o->x[i].name) + 1;

                    memcpy(req->reply.xattr + len, o->x[i].name, l);
                    len += l;
                }
            req->reply.count = (int64_t)len;
            return 0;
        }
        x = fake_x(o, a->name, false);
        if (x == NULL)
            return -ENODATA;
        req->reply.xattr = vl_malloc(xl, x->len + 1, 0);
        if (req->reply.xattr == NULL)
            return -ENOMEM;
        memcpy(req->reply.xattr, x->val, x->len);
        req->reply.count = (int64_t)x->len;
        return 0;
    }
    case VL_FOP_READDIR:
        return fake_readdir(xl, p, req);
    case VL_FOP_XATTROP:
        return fake_xattrop(xl, p, &req->args.xattrop, &req->reply);
    case VL_FOP_STATFS:
        req->reply.statvfs.f_bsize = 4096;
        req->reply.statvfs.f_frsize = 4096;
        req->reply.statvfs.f_blocks = 1000;
        req->reply.statvfs.f_bavail = 500 + (uint64_t)xl->name[1];
        return 0;
    case VL_FOP_FSYNC:
        /* storage/posix answers the file's attributes. */
        o = fake_find_gfid(p, &req->args.fsync.fd->inode->gfid);
        if (o != NULL)
            fake_iatt(o, &req->reply.iatt);
        return 0;
    case VL_FOP_FLUSH:
    case VL_FOP_INODELK:
    case VL_FOP_ENTRYLK:
    case VL_FOP_LK:
    case VL_FOP_ACCESS:
        return 0;
    default:
        return -ENOSYS;
    }
}


/* The pre-op a granted lock carries: applied as an XATTROP would be,
 * counted as one (the tests count operations; fake_received_all counts
 * requests). */
static void
fake_carried_xop(vl_xlator_t *xl, struct fake_priv *p, vl_req_t *req)
{
    const struct vl_xattrop_args *xop = req->op == VL_FOP_INODELK
                                            ? req->args.inodelk.xop
                                            : req->args.entrylk.xop;
    int rc;

    if (xop == NULL || p->is_plain)
        return;
    p->n_by_op[VL_FOP_XATTROP]++;
    rc = p->fail[VL_FOP_XATTROP];
    if (rc == 0)
        rc = fake_xattrop(xl, p, xop, &req->reply);
    if (rc != 0)
        vl_reply_clear(&req->reply);
    req->reply.has_xop = true;
    req->reply.xop_status = rc;
}


/* An entrylk that fake_fail_entrylk names (a waiting one is granted
 * when the failure is contention). */
static bool
fake_entrylk_fails(const struct fake_priv *p, const vl_req_t *req)
{
    const struct vl_entrylk_args *a = &req->args.entrylk;

    return p->lk_fail_err != 0 && req->op == VL_FOP_ENTRYLK
           && a->cmd != VL_LOCK_UNLOCK && a->loc.name != NULL
           && strcmp(a->loc.name, p->lk_fail_name) == 0
           && (p->lk_fail_err != -EAGAIN || a->cmd == VL_LOCK_TRY);
}


static void
fake_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct fake_priv *p = xl->priv;
    const struct vl_xattrop_unlock *ul = NULL;
    int ul_status = 0;
    int rc;

    pthread_mutex_lock(&p->lock);
    p->n_by_op[req->op]++;
    p->n_all++;
    p->last_op = req->op;
    if (p->is_down)
        rc = -ENOTCONN;
    else if (p->fail[req->op] != 0)
        rc = p->fail[req->op];
    else if (fake_entrylk_fails(p, req))
        rc = p->lk_fail_err;
    else if (p->is_lock_busy
             && ((req->op == VL_FOP_INODELK
                  && req->args.inodelk.cmd == VL_LOCK_TRY)
                 || (req->op == VL_FOP_ENTRYLK
                     && req->args.entrylk.cmd == VL_LOCK_TRY)))
        rc = -EAGAIN;
    else
        rc = fake_do(xl, p, req);
    if (rc == 0
        && (req->op == VL_FOP_INODELK || req->op == VL_FOP_ENTRYLK))
        fake_carried_xop(xl, p, req);
    if (req->op == VL_FOP_XATTROP && !p->is_down && !p->is_plain
        && req->args.xattrop.unlock != NULL) {
        /* The post-op's unlock runs whatever the xattrop answered. */
        vl_fop_t lop = req->args.xattrop.unlock->is_entry ? VL_FOP_ENTRYLK
                                                          : VL_FOP_INODELK;

        ul = req->args.xattrop.unlock;
        p->n_by_op[lop]++;
        ul_status = p->fail[lop];
    }
    pthread_mutex_unlock(&p->lock);
    if (rc != 0)
        vl_reply_clear(&req->reply);
    if (ul != NULL) {
        req->reply.has_unlock = true;
        req->reply.unlock_status = ul_status;
    }
    vl_unwind(req, rc);
}


static int
fake_init(vl_xlator_t *xl, vl_err_t *err)
{
    struct fake_priv *p = vl_calloc(xl, 1, sizeof(*p), 0);

    if (p == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    pthread_mutex_init(&p->lock, NULL);
    p->obj[0].is_used = true;
    p->obj[0].gfid = vl_gfid_root;
    p->obj[0].mode = S_IFDIR | 0755;
    xl->priv = p;
    return 0;
}


static void
fake_fini(vl_xlator_t *xl)
{
    struct fake_priv *p = xl->priv;

    pthread_mutex_destroy(&p->lock);
    vl_free(p);
}


#define FAKE_FOP(X) [VL_FOP_##X] = fake_fop

const vl_xlator_class_t rep_fake_class = {
    .abi = VL_XLATOR_ABI,
    .type = "test/rep-fake",
    .prefix = "rep-fake",
    .flags = VL_XL_LEAF,
    .init = fake_init,
    .fini = fake_fini,
    .fops = {
        FAKE_FOP(LOOKUP), FAKE_FOP(STAT), FAKE_FOP(SETATTR),
        FAKE_FOP(ACCESS), FAKE_FOP(READLINK), FAKE_FOP(MKNOD),
        FAKE_FOP(MKDIR), FAKE_FOP(UNLINK), FAKE_FOP(RMDIR),
        FAKE_FOP(SYMLINK), FAKE_FOP(RENAME), FAKE_FOP(LINK),
        FAKE_FOP(CREATE), FAKE_FOP(OPEN), FAKE_FOP(READ), FAKE_FOP(WRITE),
        FAKE_FOP(FLUSH), FAKE_FOP(FSYNC), FAKE_FOP(OPENDIR),
        FAKE_FOP(READDIR), FAKE_FOP(STATFS), FAKE_FOP(SETXATTR),
        FAKE_FOP(GETXATTR), FAKE_FOP(REMOVEXATTR), FAKE_FOP(LK),
        FAKE_FOP(INODELK), FAKE_FOP(ENTRYLK), FAKE_FOP(FALLOCATE),
        FAKE_FOP(COPY_FILE_RANGE), FAKE_FOP(LSEEK), FAKE_FOP(XATTROP),
        FAKE_FOP(RCHECKSUM),
    },
};


/* ---- test helpers ---- */

void
fake_set_plain(vl_xlator_t *fake, bool is_plain)
{
    struct fake_priv *p = fake->priv;

    pthread_mutex_lock(&p->lock);
    p->is_plain = is_plain;
    pthread_mutex_unlock(&p->lock);
}


void
fake_fail(vl_xlator_t *fake, vl_fop_t op, int err)
{
    struct fake_priv *p = fake->priv;

    pthread_mutex_lock(&p->lock);
    p->fail[op] = err;
    pthread_mutex_unlock(&p->lock);
}


vl_fop_t
fake_last_op(vl_xlator_t *fake)
{
    struct fake_priv *p = fake->priv;
    vl_fop_t op;

    pthread_mutex_lock(&p->lock);
    op = p->last_op;
    pthread_mutex_unlock(&p->lock);
    return op;
}


void
fake_fail_entrylk(vl_xlator_t *fake, const char *name, int err)
{
    struct fake_priv *p = fake->priv;

    pthread_mutex_lock(&p->lock);
    snprintf(p->lk_fail_name, sizeof(p->lk_fail_name), "%s",
             name != NULL ? name : "");
    p->lk_fail_err = name != NULL ? err : 0;
    pthread_mutex_unlock(&p->lock);
}


void
fake_set_lock_busy(vl_xlator_t *fake, bool is_busy)
{
    struct fake_priv *p = fake->priv;

    pthread_mutex_lock(&p->lock);
    p->is_lock_busy = is_busy;
    pthread_mutex_unlock(&p->lock);
}


void
fake_set_down(vl_xlator_t *fake, bool is_down)
{
    struct fake_priv *p = fake->priv;

    pthread_mutex_lock(&p->lock);
    p->is_down = is_down;
    pthread_mutex_unlock(&p->lock);
}


size_t
fake_received(vl_xlator_t *fake, vl_fop_t op)
{
    struct fake_priv *p = fake->priv;
    size_t n;

    pthread_mutex_lock(&p->lock);
    n = p->n_by_op[op];
    pthread_mutex_unlock(&p->lock);
    return n;
}


size_t
fake_received_all(vl_xlator_t *fake)
{
    struct fake_priv *p = fake->priv;
    size_t n;

    pthread_mutex_lock(&p->lock);
    n = p->n_all;
    pthread_mutex_unlock(&p->lock);
    return n;
}


int
fake_data(vl_xlator_t *fake, const vl_gfid_t *dir, const char *name,
          char *buf, size_t len)
{
    struct fake_priv *p = fake->priv;
    struct fake_obj *o;
    int rc = -ENOENT;

    pthread_mutex_lock(&p->lock);
    o = fake_find_name(p, dir, name);
    if (o != NULL) {
        size_t n = o->size < len - 1 ? o->size : len - 1;

        memcpy(buf, o->data, n);
        buf[n] = '\0';
        rc = (int)n;
    }
    pthread_mutex_unlock(&p->lock);
    return rc;
}


int
fake_gfid(vl_xlator_t *fake, const vl_gfid_t *dir, const char *name,
          vl_gfid_t *out)
{
    struct fake_priv *p = fake->priv;
    struct fake_obj *o;

    pthread_mutex_lock(&p->lock);
    o = fake_find_name(p, dir, name);
    if (o != NULL)
        *out = o->gfid;
    pthread_mutex_unlock(&p->lock);
    return o != NULL ? 0 : -ENOENT;
}


int
fake_xattr(vl_xlator_t *fake, const vl_gfid_t *gfid, const char *key,
           void *buf, size_t len)
{
    struct fake_priv *p = fake->priv;
    struct fake_obj *o;
    struct fake_xattr *x = NULL;
    int rc;

    pthread_mutex_lock(&p->lock);
    o = fake_find_gfid(p, gfid);
    if (o != NULL)
        x = fake_x(o, key, false);
    if (o == NULL) {
        rc = -ENOENT;
    } else if (x == NULL) {
        rc = -ENODATA;
    } else {
        rc = (int)(x->len < len ? x->len : len);
        memcpy(buf, x->val, (size_t)rc);
    }
    pthread_mutex_unlock(&p->lock);
    return rc;
}


int
fake_set_xattr(vl_xlator_t *fake, const vl_gfid_t *gfid, const char *key,
               const void *val, size_t len)
{
    struct fake_priv *p = fake->priv;
    struct fake_obj *o;
    struct fake_xattr *x = NULL;

    pthread_mutex_lock(&p->lock);
    o = fake_find_gfid(p, gfid);
    if (o != NULL)
        x = fake_x(o, key, true);
    if (x != NULL) {
        memcpy(x->val, val, len);
        x->len = len;
    }
    pthread_mutex_unlock(&p->lock);
    return x != NULL ? 0 : -ENOENT;
}


int
fake_mkfile(vl_xlator_t *fake, const vl_gfid_t *dir, const char *name,
            const vl_gfid_t *gfid, const char *data)
{
    struct fake_priv *p = fake->priv;
    struct fake_obj *o;

    pthread_mutex_lock(&p->lock);
    o = fake_new_obj(p, dir, name, gfid, S_IFREG | 0644);
    if (o != NULL) {
        o->size = strlen(data);
        memcpy(o->data, data, o->size);
    }
    pthread_mutex_unlock(&p->lock);
    return o != NULL ? 0 : -ENOSPC;
}


int
fake_mkobj(vl_xlator_t *fake, const vl_gfid_t *dir, const char *name,
           const vl_gfid_t *gfid, uint32_t mode, const char *data)
{
    struct fake_priv *p = fake->priv;
    struct fake_obj *o;

    pthread_mutex_lock(&p->lock);
    o = fake_new_obj(p, dir, name, gfid, mode);
    if (o != NULL && data != NULL) {
        o->size = strlen(data);
        memcpy(o->data, data, o->size + 1);
    }
    pthread_mutex_unlock(&p->lock);
    return o != NULL ? 0 : -ENOSPC;
}


int
fake_stat(vl_xlator_t *fake, const vl_gfid_t *gfid, struct vl_iatt *out)
{
    struct fake_priv *p = fake->priv;
    struct fake_obj *o;

    pthread_mutex_lock(&p->lock);
    o = fake_find_gfid(p, gfid);
    if (o != NULL)
        fake_iatt(o, out);
    pthread_mutex_unlock(&p->lock);
    return o != NULL ? 0 : -ENOENT;
}


int
fake_set_attr(vl_xlator_t *fake, const vl_gfid_t *gfid, uint32_t perm,
              uint32_t uid, int64_t mtime)
{
    struct fake_priv *p = fake->priv;
    struct fake_obj *o;

    pthread_mutex_lock(&p->lock);
    o = fake_find_gfid(p, gfid);
    if (o != NULL) {
        o->mode = (o->mode & S_IFMT) | (perm & 07777);
        o->uid = uid;
        o->mtime = mtime;
    }
    pthread_mutex_unlock(&p->lock);
    return o != NULL ? 0 : -ENOENT;
}
