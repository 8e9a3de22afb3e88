/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * client-fops: encodes each fop's arguments for the brick and decodes its
 * reply into req->reply.
 *
 * Objects go out as GFIDs (loc.parent, loc.inode) and names; fds as the
 * brick's fd number kept in the fd ctx. WRITE data goes out as raw iovecs
 * after the XDR arguments; READ data, a LOOKUP's file content and a
 * READDIRPLUS's entries' contents (quick-read) are used in place from the
 * reply's record buffer (reply.buf is a ref on it).
 *
 * Re-open: an fd opened on an earlier connection (its generation is not
 * the current one) is opened again by GFID with its saved flags (minus
 * O_CREAT/O_EXCL/O_TRUNC) before the fop is sent; if that fails the fop
 * answers -EBADF.
 * Per req: struct client_local. Per fd: struct client_fd (fd->lock).
 * Threads: fops from any thread; replies on loop threads.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "client.h"

#define CLIENT_MAX_IOV 8
#define FD_STALE 1 /* client_fd_num: the fd needs re-opening */

static void client_fop_done(void *cookie, int status, vl_buf_t *rec,
                            size_t body_off, size_t len);


/* The brick's number for fd; 0, FD_STALE (opened on an older
 * connection) or -EBADF (never opened on the brick). */
static int
client_fd_num(vl_xlator_t *xl, vl_fd_t *fd, uint64_t gen, uint64_t *out)
{
    struct client_fd *cf = vl_fd_ctx(fd, xl);
    uint64_t fgen;

    if (cf == NULL)
        return -EBADF;
    pthread_mutex_lock(&fd->lock);
    fgen = cf->generation;
    *out = cf->remote_fd;
    pthread_mutex_unlock(&fd->lock);
    if (fgen == 0)
        return -EBADF;
    return fgen == gen ? 0 : FD_STALE;
}


/* XATTROP's keys into w; the key array goes in *tmp (freed by the
 * caller after sending). The bounds are the wire's: a caller's mistake
 * answers -EINVAL here rather than GARBAGE_ARGS from the brick. */
static int
client_encode_xattrop(vl_xlator_t *xl, const struct vl_xattrop_args *a,
                      mrt_xattrop_args *w, char **tmp)
{
    mrt_xattrop_key *keys;

    if (a->n > MRT_XATTROP_MAX
        || (a->n > 0
            && (a->names == NULL || a->values == NULL || a->sizes == NULL)))
        return -EINVAL;
    vrpc_loc_to_xdr(&a->loc, &w->loc);
    w->has_fd = a->fd != NULL;
    w->op = a->op;
    if (a->n == 0)
        return 0;
    for (uint32_t i = 0; i < a->n; i++) {
        if (a->names[i] == NULL || a->names[i][0] == '\0'
            || strlen(a->names[i]) > MRT_XATTR_NAME_MAX
            || a->sizes[i] > MRT_XATTROP_VALUE_MAX || a->sizes[i] % 4 != 0
            || (a->sizes[i] > 0 && a->values[i] == NULL))
            return -EINVAL;
    }
    keys = vl_calloc(xl, a->n, sizeof(*keys), 0);
    if (keys == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < a->n; i++) {
        keys[i].name = (char *)a->names[i];
        keys[i].value.value_val = (char *)a->values[i];
        keys[i].value.value_len = a->sizes[i];
    }
    w->keys.keys_val = keys;
    w->keys.keys_len = a->n;
    *tmp = (char *)keys;
    return 0;
}


/* vrpc_loc_to_xdr, and *rc = -ENAMETOOLONG (if still 0) when the name is
 * over the wire's bound: the file system's answer for every caller, a
 * graph without the FUSE bridge's check too (the rebalance process),
 * rather than the encoder's -EINVAL. */
static void
client_loc(const struct vl_loc *in, mrt_loc *out, int *rc)
{
    vrpc_loc_to_xdr(in, out);
    if (*rc == 0 && in->name != NULL && strlen(in->name) > MRT_NAME_MAX)
        *rc = -ENAMETOOLONG;
}


/* Encodes req's args into w (pointers borrowed from req). Returns 0,
 * -errno, or FD_STALE with *stale set to the fd to re-open. *tmp may get
 * a gathered WRITE payload, which the caller frees after sending. */
static int
client_encode(vl_xlator_t *xl, vl_req_t *req, uint64_t gen,
              union vrpc_fop_wargs *w, struct iovec *payload, int *n_payload,
              vl_fd_t **stale, char **tmp)
{
    union vl_fop_args *a = &req->args;
    vl_fd_t *fds[2] = {NULL, NULL};
    uint64_t *nums[2] = {NULL, NULL};
    int rc = 0;

    switch (req->op) {
    case VL_FOP_LOOKUP:
        client_loc(&a->lookup.loc, &w->lookup.loc, &rc);
        w->lookup.content_max = a->lookup.content_max;
        if (a->lookup.xattr_name != NULL && a->lookup.xattr_name[0] == '\0')
            return -EINVAL;
        if (a->lookup.xattr_name != NULL
            && strlen(a->lookup.xattr_name) > MRT_XATTR_NAME_MAX)
            return -ERANGE;
        w->lookup.xattr_name = (char *)(a->lookup.xattr_name != NULL
                                            ? a->lookup.xattr_name
                                            : "");
        break;
    case VL_FOP_STAT:
        client_loc(&a->stat.loc, &w->stat.loc, &rc);
        w->stat.has_fd = a->stat.fd != NULL;
        fds[0] = a->stat.fd;
        nums[0] = &w->stat.fd;
        break;
    case VL_FOP_SETATTR:
        client_loc(&a->setattr.loc, &w->setattr.loc, &rc);
        w->setattr.has_fd = a->setattr.fd != NULL;
        fds[0] = a->setattr.fd;
        nums[0] = &w->setattr.fd;
        vrpc_iatt_to_xdr(&a->setattr.attr, &w->setattr.attr);
        w->setattr.valid = a->setattr.valid;
        break;
    case VL_FOP_ACCESS:
        client_loc(&a->access.loc, &w->access.loc, &rc);
        w->access.mask = a->access.mask;
        break;
    case VL_FOP_READLINK:
        client_loc(&a->readlink.loc, &w->readlink.loc, &rc);
        w->readlink.size = (u_int)a->readlink.size;
        break;
    case VL_FOP_MKNOD:
        client_loc(&a->mknod.loc, &w->mknod.loc, &rc);
        w->mknod.mode = a->mknod.mode;
        w->mknod.rdev = a->mknod.rdev;
        w->mknod.umask = a->mknod.umask;
        vrpc_gfid_to_xdr(&a->mknod.gfid, w->mknod.gfid);
        break;
    case VL_FOP_MKDIR:
        client_loc(&a->mkdir.loc, &w->mkdir.loc, &rc);
        w->mkdir.mode = a->mkdir.mode;
        w->mkdir.umask = a->mkdir.umask;
        vrpc_gfid_to_xdr(&a->mkdir.gfid, w->mkdir.gfid);
        /* The optional xattr travels in the mkdir (empty name: none). */
        if (a->mkdir.xattr_name != NULL
            && (a->mkdir.xattr_name[0] == '\0'
                || a->mkdir.xattr_size > MRT_XATTR_VALUE_MAX
                || (a->mkdir.xattr_size > 0 && a->mkdir.xattr_value == NULL)))
            return -EINVAL;
        if (a->mkdir.xattr_name != NULL
            && strlen(a->mkdir.xattr_name) > MRT_XATTR_NAME_MAX)
            return -ERANGE;
        w->mkdir.xattr_name = (char *)(a->mkdir.xattr_name != NULL
                                           ? a->mkdir.xattr_name
                                           : "");
        w->mkdir.xattr_value.xattr_value_val =
            a->mkdir.xattr_name != NULL ? (char *)a->mkdir.xattr_value
                                        : NULL;
        w->mkdir.xattr_value.xattr_value_len =
            a->mkdir.xattr_name != NULL ? (u_int)a->mkdir.xattr_size : 0;
        w->mkdir.flags = a->mkdir.want_lease ? MRT_MKDIR_WANT_LEASE : 0;
        break;
    case VL_FOP_UNLINK:
        client_loc(&a->unlink.loc, &w->unlink.loc, &rc);
        w->unlink.flags = a->unlink.flags;
        break;
    case VL_FOP_RMDIR:
        client_loc(&a->rmdir.loc, &w->unlink.loc, &rc);
        w->unlink.flags = a->rmdir.flags;
        break;
    case VL_FOP_SYMLINK:
        client_loc(&a->symlink.loc, &w->symlink.loc, &rc);
        w->symlink.target = (char *)(a->symlink.target != NULL
                                         ? a->symlink.target
                                         : "");
        if (strlen(w->symlink.target) > MRT_PATH_MAX)
            return -ENAMETOOLONG;
        w->symlink.umask = a->symlink.umask;
        vrpc_gfid_to_xdr(&a->symlink.gfid, w->symlink.gfid);
        break;
    case VL_FOP_RENAME:
        client_loc(&a->rename.oldloc, &w->rename.oldloc, &rc);
        client_loc(&a->rename.newloc, &w->rename.newloc, &rc);
        w->rename.flags = a->rename.flags;
        break;
    case VL_FOP_LINK:
        client_loc(&a->link.oldloc, &w->link.oldloc, &rc);
        client_loc(&a->link.newloc, &w->link.newloc, &rc);
        break;
    case VL_FOP_CREATE:
        client_loc(&a->create.loc, &w->create.loc, &rc);
        w->create.flags = a->create.flags;
        w->create.mode = a->create.mode;
        w->create.umask = a->create.umask;
        vrpc_gfid_to_xdr(&a->create.gfid, w->create.gfid);
        break;
    case VL_FOP_OPEN:
        client_loc(&a->open.loc, &w->open.loc, &rc);
        w->open.flags = a->open.flags;
        break;
    case VL_FOP_READ:
        if (a->read.size > VRPC_MAX_PAYLOAD)
            return -EINVAL;
        fds[0] = a->read.fd;
        nums[0] = &w->read.fd;
        w->read.size = (u_int)a->read.size;
        w->read.offset = a->read.offset;
        w->read.flags = a->read.flags;
        break;
    case VL_FOP_WRITE: {
        size_t total = 0;

        if (a->write.n_iov < 0)
            return -EINVAL;
        for (int i = 0; i < a->write.n_iov; i++)
            total += a->write.iov[i].iov_len;
        if (total > VRPC_MAX_PAYLOAD)
            return -EINVAL;
        if (a->write.n_iov <= CLIENT_MAX_IOV) {
            for (int i = 0; i < a->write.n_iov; i++)
                payload[i] = a->write.iov[i];
            *n_payload = a->write.n_iov;
        } else {
            /* More pieces than one record takes: gather them once. */
            size_t pos = 0;

            *tmp = vl_malloc(xl, total > 0 ? total : 1, 0);
            if (*tmp == NULL)
                return -ENOMEM;
            for (int i = 0; i < a->write.n_iov; i++) {
                memcpy(*tmp + pos, a->write.iov[i].iov_base,
                       a->write.iov[i].iov_len);
                pos += a->write.iov[i].iov_len;
            }
            payload[0].iov_base = *tmp;
            payload[0].iov_len = total;
            *n_payload = 1;
        }
        fds[0] = a->write.fd;
        nums[0] = &w->write.fd;
        w->write.size = (u_int)total;
        w->write.offset = a->write.offset;
        w->write.flags = a->write.flags;
        break;
    }
    case VL_FOP_FLUSH:
        fds[0] = a->flush.fd;
        nums[0] = &w->fd.fd;
        break;
    case VL_FOP_FSYNC:
        fds[0] = a->fsync.fd;
        nums[0] = &w->fsync.fd;
        w->fsync.datasync = a->fsync.datasync;
        break;
    case VL_FOP_OPENDIR:
        client_loc(&a->opendir.loc, &w->opendir.loc, &rc);
        w->opendir.list_size = a->opendir.list_size;
        w->opendir.content_max = a->opendir.list_size > 0
                                     ? a->opendir.content_max
                                     : 0;
        break;
    case VL_FOP_READDIR:
        fds[0] = a->readdir.fd;
        nums[0] = &w->readdir.fd;
        w->readdir.size = (u_int)a->readdir.size;
        w->readdir.offset = a->readdir.offset;
        w->readdir.plus = a->readdir.plus;
        w->readdir.content_max = a->readdir.plus ? a->readdir.content_max
                                                 : 0;
        break;
    case VL_FOP_STATFS:
        client_loc(&a->statfs.loc, &w->loc.loc, &rc);
        break;
    case VL_FOP_SETXATTR:
        if (a->setxattr.name == NULL || a->setxattr.size > MRT_XATTR_VALUE_MAX)
            return -EINVAL;
        if (strlen(a->setxattr.name) > MRT_XATTR_NAME_MAX)
            return -ERANGE;
        client_loc(&a->setxattr.loc, &w->setxattr.loc, &rc);
        w->setxattr.name = (char *)a->setxattr.name;
        w->setxattr.value.value_val = (char *)a->setxattr.value;
        w->setxattr.value.value_len = (u_int)a->setxattr.size;
        w->setxattr.flags = a->setxattr.flags;
        break;
    case VL_FOP_GETXATTR:
        client_loc(&a->getxattr.loc, &w->getxattr.loc, &rc);
        if (a->getxattr.name != NULL
            && strlen(a->getxattr.name) > MRT_XATTR_NAME_MAX)
            return -ERANGE;
        w->getxattr.has_name = a->getxattr.name != NULL;
        w->getxattr.name = (char *)(a->getxattr.name != NULL
                                        ? a->getxattr.name
                                        : "");
        w->getxattr.size = (u_int)a->getxattr.size;
        break;
    case VL_FOP_REMOVEXATTR:
        if (a->removexattr.name == NULL)
            return -EINVAL;
        if (strlen(a->removexattr.name) > MRT_XATTR_NAME_MAX)
            return -ERANGE;
        client_loc(&a->removexattr.loc, &w->removexattr.loc, &rc);
        w->removexattr.name = (char *)a->removexattr.name;
        break;
    case VL_FOP_LK:
        fds[0] = a->lk.fd;
        nums[0] = &w->lk.fd;
        w->lk.cmd = a->lk.cmd;
        vrpc_flock_to_xdr(&a->lk.flock, &w->lk.flock);
        w->lk.is_flock = a->lk.is_flock;
        break;
    case VL_FOP_INODELK:
        client_loc(&a->inodelk.loc, &w->inodelk.loc, &rc);
        w->inodelk.domain = (char *)(a->inodelk.domain != NULL
                                         ? a->inodelk.domain
                                         : "");
        w->inodelk.cmd = a->inodelk.cmd;
        vrpc_flock_to_xdr(&a->inodelk.flock, &w->inodelk.flock);
        break;
    case VL_FOP_ENTRYLK:
        client_loc(&a->entrylk.loc, &w->entrylk.loc, &rc);
        w->entrylk.domain = (char *)(a->entrylk.domain != NULL
                                         ? a->entrylk.domain
                                         : "");
        w->entrylk.cmd = a->entrylk.cmd;
        w->entrylk.type = a->entrylk.type;
        break;
    case VL_FOP_FALLOCATE:
        fds[0] = a->fallocate.fd;
        nums[0] = &w->fallocate.fd;
        w->fallocate.mode = a->fallocate.mode;
        w->fallocate.offset = a->fallocate.offset;
        w->fallocate.len = a->fallocate.len;
        break;
    case VL_FOP_COPY_FILE_RANGE:
        fds[0] = a->copy_file_range.fd_in;
        nums[0] = &w->copy_file_range.fd_in;
        fds[1] = a->copy_file_range.fd_out;
        nums[1] = &w->copy_file_range.fd_out;
        w->copy_file_range.off_in = a->copy_file_range.off_in;
        w->copy_file_range.off_out = a->copy_file_range.off_out;
        w->copy_file_range.len = a->copy_file_range.len;
        w->copy_file_range.flags = a->copy_file_range.flags;
        break;
    case VL_FOP_LSEEK:
        fds[0] = a->lseek.fd;
        nums[0] = &w->lseek.fd;
        w->lseek.offset = a->lseek.offset;
        w->lseek.whence = a->lseek.whence;
        break;
    case VL_FOP_XATTROP:
        rc = client_encode_xattrop(xl, &a->xattrop, &w->xattrop, tmp);
        if (rc != 0)
            return rc;
        fds[0] = a->xattrop.fd;
        nums[0] = &w->xattrop.fd;
        break;
    case VL_FOP_RCHECKSUM:
        /* The brick checks the same bounds; refusing here spares the
         * round trip and says whose mistake it is. */
        rc = vl_rchecksum_check(a->rchecksum.offset, a->rchecksum.len,
                                a->rchecksum.block_size);
        if (rc != 0)
            return rc;
        fds[0] = a->rchecksum.fd;
        nums[0] = &w->rchecksum.fd;
        w->rchecksum.offset = a->rchecksum.offset;
        w->rchecksum.len = a->rchecksum.len;
        w->rchecksum.block_size = a->rchecksum.block_size;
        break;
    default:
        return -ENOSYS;
    }
    for (int i = 0; i < 2 && rc == 0; i++) {
        if (fds[i] == NULL)
            continue;
        rc = client_fd_num(xl, fds[i], gen, nums[i]);
        if (rc == FD_STALE)
            *stale = fds[i];
    }
    return rc;
}


/* The protocol version the wire needs to carry req's compound part (a
 * lock's pre-op, an xattrop's unlock: 8; a lookup's records read: 9), 0
 * if req has none. */
static uint32_t
client_cpd_proto(const vl_req_t *req)
{
    switch (req->op) {
    case VL_FOP_INODELK:
        return req->args.inodelk.xop != NULL ? 8 : 0;
    case VL_FOP_ENTRYLK:
        return req->args.entrylk.xop != NULL ? 8 : 0;
    case VL_FOP_XATTROP:
        return req->args.xattrop.unlock != NULL ? 8 : 0;
    case VL_FOP_LOOKUP:
        return req->args.lookup.xop != NULL ? 9 : 0;
    default:
        return 0;
    }
}


/* Re-encodes w (the plain fop client_encode made) as its compound form:
 * the lock with its carried xattrop, the xattrop with its carried
 * unlock. The carried xattrop's key array goes in *tmp. Returns as
 * client_encode. */
static int
client_encode_cpd(vl_xlator_t *xl, vl_req_t *req, uint64_t gen,
                  union vrpc_fop_wargs *w, vl_fd_t **stale, char **tmp)
{
    union vl_fop_args *a = &req->args;
    const struct vl_xattrop_args *xa;
    mrt_xattrop_args xo;
    int rc;

    if (req->op == VL_FOP_XATTROP) {
        const struct vl_xattrop_unlock *ul = a->xattrop.unlock;
        mrt_xattrop_unlock u;

        memset(&u, 0, sizeof(u));
        rc = 0;
        u.is_entry = ul->is_entry;
        u.domain = (char *)(ul->domain != NULL ? ul->domain : "");
        client_loc(&ul->loc, &u.loc, &rc);
        vrpc_flock_to_xdr(&ul->flock, &u.flock);
        u.type = ul->type;
        if (rc != 0 || u.domain[0] == '\0'
            || strlen(u.domain) > MRT_NAME_MAX)
            return rc != 0 ? rc : -EINVAL;
        xo = w->xattrop; /* the union's members overlap */
        w->xattrop_unlock.xop = xo;
        w->xattrop_unlock.unlock = u;
        return 0;
    }
    if (req->op == VL_FOP_LOOKUP) {
        mrt_lookup_args lk = w->lookup;
        struct vl_xattrop_args keys = *a->lookup.xop;

        /* Keys only: the object is the one the lookup finds. */
        memset(&keys.loc, 0, sizeof(keys.loc));
        keys.fd = NULL;
        memset(&xo, 0, sizeof(xo));
        rc = client_encode_xattrop(xl, &keys, &xo, tmp);
        if (rc != 0)
            return rc;
        w->lookup_xop.lookup = lk;
        w->lookup_xop.xop = xo;
        return 0;
    }
    xa = req->op == VL_FOP_INODELK ? a->inodelk.xop : a->entrylk.xop;
    memset(&xo, 0, sizeof(xo));
    rc = client_encode_xattrop(xl, xa, &xo, tmp);
    if (rc == 0 && xa->fd != NULL) {
        rc = client_fd_num(xl, xa->fd, gen, &xo.fd);
        if (rc == FD_STALE)
            *stale = xa->fd;
    }
    if (rc != 0)
        return rc;
    if (req->op == VL_FOP_INODELK) {
        mrt_inodelk_args lk = w->inodelk;

        w->inodelk_xop.lock = lk;
        w->inodelk_xop.xop = xo;
    } else {
        mrt_entrylk_args lk = w->entrylk;

        w->entrylk_xop.lock = lk;
        w->entrylk_xop.xop = xo;
    }
    return 0;
}


static void
client_ignore_reply(void *cookie, int status, vl_buf_t *rec, size_t body_off,
                    size_t len)
{
}


/* Tells the brick to drop remote fd number no (fire and forget). */
static void
client_send_release(vrpc_clnt_t *clnt, uint64_t no, bool is_dir)
{
    mrt_fd_args a = {.fd = no};

    (void)vrpc_clnt_call(clnt, MRT_FOPS_PROG, MRT_VERSION,
                         is_dir ? MRT_PROC_RELEASEDIR : MRT_PROC_RELEASE,
                         NULL, (xdrproc_t)xdr_mrt_fd_args, &a, NULL, 0,
                         client_ignore_reply, NULL);
}


static void
client_reopen_done(void *cookie, int status, vl_buf_t *rec, size_t body_off,
                   size_t len)
{
    vl_req_t *req = cookie;
    vl_xlator_t *xl = req->xl;
    struct client_local *local = VL_REQ_PRIV(req, struct client_local);
    vl_fd_t *fd = local->reopen_fd;
    struct client_fd *cf = vl_fd_ctx(fd, xl);
    union vrpc_fop_rsp r;
    xdrproc_t fn;
    bool is_dup = false, is_dir;
    uint64_t no;
    int rc;

    pthread_mutex_lock(&fd->lock);
    is_dir = cf->is_dir;
    pthread_mutex_unlock(&fd->lock);
    /* opendir's reply is its own type (a listing is never asked for). */
    fn = vrpc_rsp_xdr(is_dir ? VRPC_RSP_OPENDIR : VRPC_RSP_FD);
    memset(&r, 0, sizeof(r));
    rc = status != 0 ? status
                     : vrpc_decode_body(rec->data + body_off, len - body_off,
                                        fn, &r, NULL);
    if (rc == 0) {
        rc = r.status.status;
        no = is_dir ? r.opendir.fd : r.fd.fd;
        xdr_free(fn, (char *)&r);
    }
    if (rc != 0) {
        vl_log(xl, VL_LOG_WARNING, "re-open of fd on %s failed",
               vl_fop_name(req->op));
        vl_unwind(req, -EBADF);
        return;
    }
    pthread_mutex_lock(&fd->lock);
    if (cf->generation == local->generation) {
        is_dup = true; /* another request re-opened it first */
    } else {
        cf->remote_fd = no;
        cf->generation = local->generation;
    }
    pthread_mutex_unlock(&fd->lock);
    if (is_dup) {
        uint64_t gen;
        vrpc_clnt_t *clnt = client_get_conn(xl->priv, &gen);

        if (clnt != NULL && gen == local->generation)
            client_send_release(clnt, no, is_dir);
        vrpc_clnt_unref(clnt);
    }
    local->reopen_fd = NULL;
    client_fop(xl, req);
}


/* Re-opens fd on the current connection, then resends req. */
static void
client_reopen(vl_xlator_t *xl, vl_req_t *req, vrpc_clnt_t *clnt,
              uint64_t gen, vl_fd_t *fd)
{
    struct client_local *local = VL_REQ_PRIV(req, struct client_local);
    struct client_fd *cf = vl_fd_ctx(fd, xl);
    union vrpc_fop_wargs w;
    bool is_dir;
    int rc;

    memset(&w, 0, sizeof(w));
    pthread_mutex_lock(&fd->lock);
    is_dir = cf->is_dir;
    pthread_mutex_unlock(&fd->lock);
    local->reopen_fd = fd;
    local->generation = gen;
    if (is_dir) {
        w.opendir.loc.name = ""; /* no listing: a re-open only */
        vrpc_gfid_to_xdr(&fd->inode->gfid, w.opendir.loc.gfid);
    } else {
        w.open.loc.name = "";
        vrpc_gfid_to_xdr(&fd->inode->gfid, w.open.loc.gfid);
        w.open.flags = fd->flags & ~(O_CREAT | O_EXCL | O_TRUNC);
    }
    rc = vrpc_clnt_call(clnt, MRT_FOPS_PROG, MRT_VERSION,
                        VRPC_FOP_PROC(is_dir ? VL_FOP_OPENDIR : VL_FOP_OPEN),
                        &req->caller,
                        vrpc_fop_desc(is_dir ? VL_FOP_OPENDIR : VL_FOP_OPEN)
                            ->args,
                        &w, NULL, 0, client_reopen_done, req);
    if (rc != 0)
        vl_unwind(req, rc == -ENOTCONN ? -ENOTCONN : -EBADF);
}


void
client_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct client_local *local = VL_REQ_PRIV(req, struct client_local);
    const struct vrpc_fop_desc *desc = vrpc_fop_desc(req->op);
    struct iovec payload[CLIENT_MAX_IOV];
    union vrpc_fop_wargs w;
    vl_fd_t *stale = NULL;
    char *tmp = NULL, *cpd_tmp = NULL;
    vrpc_clnt_t *clnt;
    uint64_t gen = 0;
    uint32_t proto = 0, proc = VRPC_FOP_PROC(req->op), cpd_proto;
    vl_fop_t cpd_op;
    int n_payload = 0;
    int rc;

    if (desc == NULL) {
        vl_unwind(req, -ENOSYS);
        return;
    }
    clnt = client_get_conn_proto(xl->priv, &gen, &proto);
    if (clnt == NULL) {
        vl_unwind(req, -ENOTCONN);
        return;
    }
    memset(&w, 0, sizeof(w));
    rc = client_encode(xl, req, gen, &w, payload, &n_payload, &stale, &tmp);
    /* A brick that negotiated an older version gets the plain part only:
     * its answer has has_xop/has_unlock false and the caller sends the
     * rest itself. */
    cpd_proto = rc == 0 ? client_cpd_proto(req) : 0;
    local->is_cpd = cpd_proto != 0 && proto >= cpd_proto;
    if (local->is_cpd) {
        rc = client_encode_cpd(xl, req, gen, &w, &stale, &cpd_tmp);
        proc = vrpc_cpd_proc(req->op);
        desc = vrpc_cpd_desc(proc, &cpd_op);
    }
    if (rc == FD_STALE) {
        vl_free(tmp);
        vl_free(cpd_tmp);
        client_reopen(xl, req, clnt, gen, stale);
        vrpc_clnt_unref(clnt);
        return;
    }
    if (rc != 0) {
        vl_free(tmp);
        vl_free(cpd_tmp);
        vrpc_clnt_unref(clnt);
        vl_unwind(req, rc);
        return;
    }
    local->generation = gen;
    /* The record is written or copied before this returns, so tmp can go
     * right after (the answer may already have come, too); only a write's
     * data inside its buffer is queued by reference (with a ref of its
     * own) when the socket is full, and nobody changes those bytes: the
     * brick answers only once it has them all. */
    rc = vrpc_clnt_call_buf(clnt, MRT_FOPS_PROG, MRT_VERSION,
                            proc, &req->caller, desc->args,
                            &w, payload, n_payload,
                            req->op == VL_FOP_WRITE ? req->args.write.buf
                                                    : NULL,
                            client_fop_done, req);
    vl_free(tmp);
    vl_free(cpd_tmp);
    vrpc_clnt_unref(clnt);
    if (rc != 0)
        vl_unwind(req, rc);
}


/* Records the brick's fd number for a successful open/create/opendir. */
static void
client_fd_opened(vl_xlator_t *xl, vl_req_t *req, uint64_t no)
{
    struct client_local *local = VL_REQ_PRIV(req, struct client_local);
    vl_fd_t *fd = req->op == VL_FOP_CREATE ? req->args.create.fd
                  : req->op == VL_FOP_OPEN ? req->args.open.fd
                                           : req->args.opendir.fd;
    struct client_fd *cf;

    if (fd == NULL || (cf = vl_fd_ctx(fd, xl)) == NULL)
        return;
    pthread_mutex_lock(&fd->lock);
    cf->remote_fd = no;
    cf->generation = local->generation;
    cf->is_dir = req->op == VL_FOP_OPENDIR;
    pthread_mutex_unlock(&fd->lock);
}


/* Fills rp->entries from a readdir reply's entries; their content (asked
 * with content_max) is the data_len bytes at data_off of rec.
 * 0 or -EPROTO/-ENOMEM. Not static: tests/fuzz/fuzz-brick-reply.c
 * feeds it what a hostile brick may send (it declares it). */
int
client_fill_dirents(struct vl_reply *rp, const mrt_readdir_rsp *w,
                    vl_buf_t *rec, size_t data_off, size_t data_len,
                    uint32_t content_max)
{
    size_t at = 0; /* content bytes of the record used so far */
    bool has_content = false;

    for (u_int i = 0; i < w->ents.ents_len; i++) {
        const mrt_dirent *d = &w->ents.ents_val[i];
        struct vl_dirent *e;
        struct vl_iatt ia;

        if (d->name[0] == '\0' || strchr(d->name, '/') != NULL)
            return -EPROTO;
        if (d->has_iatt)
            vrpc_iatt_from_xdr(&d->iatt, &ia);
        /* Content (quick-read) only if asked for, of a file, its whole
         * size, within what follows the XDR. */
        if (d->has_content
            && (!d->has_iatt || !S_ISREG(ia.mode) || d->content_len != ia.size
                || d->content_len > content_max
                || d->content_len > data_len - at))
            return -EPROTO;
        if (vl_dirent_list_add(&rp->entries, d->ino, d->off, d->type,
                               d->name, d->has_iatt ? &ia : NULL) != 0)
            return -ENOMEM;
        if (!d->has_content)
            continue;
        e = &rp->entries.ents[rp->entries.n - 1];
        e->has_content = true;
        e->content_len = d->content_len;
        e->content_off = data_off + at;
        at += d->content_len;
        has_content = true;
    }
    if (at != data_len)
        return -EPROTO;
    if (has_content)
        rp->buf = vl_buf_ref(rec); /* backs the entries' content */
    rp->entries.eof = w->eof;
    return 0;
}


/* opendir's reply: the fd, and the first batch when one came and was
 * asked for. A listing that does not decode is dropped (the fd is open on
 * the brick and stays recorded, so it is released later): the directory
 * is then read as usual. */
static int
client_fill_opendir(vl_req_t *req, const mrt_opendir_rsp *w, vl_buf_t *rec,
                    size_t data_off, size_t data_len)
{
    struct vl_reply *rp = &req->reply;
    int rc;

    vrpc_iatt_from_xdr(&w->iatt, &rp->iatt);
    client_fd_opened(req->xl, req, w->fd);
    if (!w->has_listing) {
        if (data_len != 0)
            vl_log(req->xl, VL_LOG_WARNING, "bytes after an opendir reply "
                   "without a listing: ignored");
        return 0;
    }
    if (req->args.opendir.list_size == 0) {
        vl_log(req->xl, VL_LOG_WARNING,
               "opendir reply with a listing not asked for: ignored");
        return 0;
    }
    if (w->listing.status != 0)
        return 0; /* the brick's read failed: the directory is read later */
    rc = client_fill_dirents(rp, &w->listing, rec, data_off, data_len,
                             req->args.opendir.content_max);
    if (rc != 0) {
        vl_log(req->xl, VL_LOG_WARNING, "opendir reply: bad listing (%s); "
               "the directory is read again", strerror(-rc));
        vl_dirent_list_clear(&rp->entries);
        vl_buf_unref(rp->buf);
        rp->buf = NULL;
        return 0;
    }
    rp->has_listing = true;
    return 0;
}


/* The flags and sizes of a block record are the same on both sides. */
_Static_assert(MRT_RCHECKSUM_ZERO == VL_RCHECKSUM_ZERO
                   && MRT_RCHECKSUM_HOLE == VL_RCHECKSUM_HOLE
                   && MRT_RCHECKSUM_DIGEST_LEN == VL_RCHECKSUM_DIGEST_LEN
                   && MRT_RCHECKSUM_BLOCKS_MAX == VL_RCHECKSUM_BLOCKS_MAX
                   && MRT_RCHECKSUM_LEN_MAX == VL_RCHECKSUM_LEN_MAX,
               "RCHECKSUM's wire constants follow libvol's");

/* RCHECKSUM's blocks into rp->sums. A brick answers at most one record
 * per block of the range asked, in order, each as long as its block (the
 * last may be shorter: EOF), with known flags only (HOLE implies ZERO):
 * anything else is a broken brick (-EPROTO). Not static: the fuzz
 * target calls it too. */
int
client_fill_rchecksum(struct vl_reply *rp, const mrt_rchecksum_rsp *w,
                      const struct vl_rchecksum_args *a)
{
    const u_int known = MRT_RCHECKSUM_ZERO | MRT_RCHECKSUM_HOLE;
    u_int n = w->blocks.blocks_len;

    vrpc_iatt_from_xdr(&w->iatt, &rp->iatt);
    if (n > (a->len + a->block_size - 1) / a->block_size)
        return -EPROTO;
    for (u_int i = 0; i < n; i++) {
        const mrt_rchecksum_block *b = &w->blocks.blocks_val[i];
        uint32_t want = vl_rchecksum_block_len(a->offset, a->len,
                                               a->block_size, UINT64_MAX, i);

        if ((b->flags & ~known) != 0
            || ((b->flags & MRT_RCHECKSUM_HOLE)
                && !(b->flags & MRT_RCHECKSUM_ZERO))
            || b->len == 0 || b->len > want
            || (b->len < want && i + 1 < n))
            return -EPROTO;
    }
    if (n == 0)
        return 0;
    rp->sums = vl_calloc(NULL, n, sizeof(*rp->sums), VL_MT_REPLY);
    if (rp->sums == NULL)
        return -ENOMEM;
    for (u_int i = 0; i < n; i++) {
        const mrt_rchecksum_block *b = &w->blocks.blocks_val[i];

        rp->sums[i].flags = b->flags;
        rp->sums[i].len = b->len;
        if (!(b->flags & MRT_RCHECKSUM_ZERO))
            memcpy(rp->sums[i].digest, b->digest, VL_RCHECKSUM_DIGEST_LEN);
    }
    rp->n_sums = n;
    return 0;
}


/* An xattrop's values from a reply (val, n bytes) into a copy in *out:
 * exactly the sum of the argument sizes of a (a brick answering other
 * sizes is a broken brick: -EPROTO), none when that is 0. */
static int
client_xattrop_values(const struct vl_xattrop_args *a, const char *val,
                      u_int n, char **out, uint32_t *out_len)
{
    uint64_t want = 0;

    for (uint32_t i = 0; i < a->n; i++)
        want += a->sizes[i];
    if (n != want)
        return -EPROTO;
    if (n == 0)
        return 0;
    *out = vl_malloc(NULL, n, VL_MT_REPLY);
    if (*out == NULL)
        return -ENOMEM;
    memcpy(*out, val, n);
    *out_len = n;
    return 0;
}


/* Fills req->reply from a compound's reply, whatever its status (a
 * failed post-op still says whether it unlocked). A brick answering what
 * was not asked (a second part after a refused lock, values without
 * success or in other sizes) is a broken brick: -EPROTO. Not static:
 * tests/fuzz/fuzz-brick-reply.c feeds it what a hostile brick may send
 * (it declares it). */
int
client_fill_cpd(vl_req_t *req, const mrt_cpd_rsp *r)
{
    struct vl_reply *rp = &req->reply;
    const struct vl_xattrop_args *a;
    u_int n = r->values.values_len;
    int xo_status;

    if (r->has_second
        && (r->second_status > 0 || r->second_status < -4095))
        return -EPROTO;
    if (req->op == VL_FOP_XATTROP) {
        a = &req->args.xattrop;
        rp->has_unlock = r->has_second;
        rp->unlock_status = r->has_second ? r->second_status : 0;
        xo_status = r->status;
    } else {
        a = req->op == VL_FOP_INODELK ? req->args.inodelk.xop
                                      : req->args.entrylk.xop;
        if (r->status != 0 && r->has_second)
            return -EPROTO; /* a lock refused applies nothing */
        rp->has_xop = r->has_second;
        rp->xop_status = r->has_second ? r->second_status : 0;
        xo_status = r->has_second ? r->second_status : -1;
    }
    if (xo_status != 0) {
        if (n != 0)
            return -EPROTO;
        return 0;
    }
    return client_xattrop_values(a, r->values.values_val, n, &rp->xattr,
                                 &rp->xattr_len);
}


/* Fills the records read of a LOOKUP_XOP's reply (protocol 9) into
 * req->reply, its lookup part filled already. A read answered for a
 * lookup that failed, values without success or in other sizes than
 * asked are a broken brick: -EPROTO. */
static int
client_fill_lookup_xop(vl_req_t *req, int status, const mrt_lookup_xop_rsp *r)
{
    struct vl_reply *rp = &req->reply;
    const struct vl_xattrop_args *a = req->args.lookup.xop;
    u_int n = r->values.values_len;

    if (!r->has_second)
        return r->second_status != 0 || n != 0 ? -EPROTO : 0;
    if (status != 0 || a == NULL || r->second_status > 0
        || r->second_status < -4095)
        return -EPROTO;
    rp->has_xop = true;
    rp->xop_status = r->second_status;
    if (r->second_status != 0)
        return n != 0 ? -EPROTO : 0;
    return client_xattrop_values(a, r->values.values_val, n,
                                 &rp->xop_values, &rp->xop_values_len);
}


/* Fills req->reply from the decoded reply; 0 or -EPROTO/-ENOMEM. */
static int
client_fill_reply(vl_req_t *req, union vrpc_fop_rsp *r, vl_buf_t *rec,
                  size_t data_off, size_t data_len)
{
    struct vl_reply *rp = &req->reply;
    const struct vrpc_fop_desc *desc = vrpc_fop_desc(req->op);

    switch (desc->rsp) {
    case VRPC_RSP_STATUS:
        break;
    case VRPC_RSP_IATT:
        vrpc_iatt_from_xdr(&r->iatt.iatt, &rp->iatt);
        break;
    case VRPC_RSP_FD:
        vrpc_iatt_from_xdr(&r->fd.iatt, &rp->iatt);
        client_fd_opened(req->xl, req, r->fd.fd);
        break;
    case VRPC_RSP_COUNT:
        vrpc_iatt_from_xdr(&r->count.iatt, &rp->iatt);
        rp->count = r->count.count;
        if (req->op != VL_FOP_READ)
            break;
        /* The data is exactly the rest of the record and no more than
         * was asked for. */
        if (r->count.count < 0 || (uint64_t)r->count.count != data_len
            || data_len > req->args.read.size)
            return -EPROTO;
        rp->buf = vl_buf_ref(rec);
        rp->data = rec->data + data_off;
        break;
    case VRPC_RSP_READLINK:
        rp->link = vl_strdup(NULL, r->readlink.link, VL_MT_REPLY);
        if (rp->link == NULL)
            return -ENOMEM;
        break;
    case VRPC_RSP_READDIR:
        return client_fill_dirents(rp, &r->readdir, rec, data_off, data_len,
                                   req->args.readdir.content_max);
    case VRPC_RSP_STATFS:
        vrpc_statvfs_from_xdr(&r->statfs, &rp->statvfs);
        break;
    case VRPC_RSP_GETXATTR: {
        u_int n = r->getxattr.value.value_len;

        rp->count = r->getxattr.count;
        if (n == 0)
            break;
        if ((uint64_t)r->getxattr.count != n)
            return -EPROTO;
        rp->xattr = vl_malloc(NULL, n + 1, VL_MT_REPLY);
        if (rp->xattr == NULL)
            return -ENOMEM;
        memcpy(rp->xattr, r->getxattr.value.value_val, n);
        rp->xattr[n] = '\0';
        break;
    }
    case VRPC_RSP_LK:
        vrpc_flock_from_xdr(&r->lk.flock, &rp->flock);
        break;
    case VRPC_RSP_LSEEK:
        rp->offset = r->lseek.offset;
        break;
    case VRPC_RSP_RCHECKSUM:
        return client_fill_rchecksum(rp, &r->rchecksum,
                                     &req->args.rchecksum);
    case VRPC_RSP_ENTRY:
        vrpc_iatt_from_xdr(&r->entry.iatt, &rp->iatt);
        rp->has_postparent = r->entry.has_postparent;
        if (rp->has_postparent)
            vrpc_iatt_from_xdr(&r->entry.postparent, &rp->postparent);
        rp->has_postparent2 = r->entry.has_postparent2;
        if (rp->has_postparent2)
            vrpc_iatt_from_xdr(&r->entry.postparent2, &rp->postparent2);
        /* A lease only where one was asked for, and never unknown bits:
         * a brick granting what nobody asked would be a broken brick. */
        if ((r->entry.flags & ~(u_int)MRT_ENTRY_LEASED) != 0
            || ((r->entry.flags & MRT_ENTRY_LEASED)
                && (req->op != VL_FOP_MKDIR || !req->args.mkdir.want_lease)))
            return -EPROTO;
        rp->is_leased = (r->entry.flags & MRT_ENTRY_LEASED) != 0;
        break;
    case VRPC_RSP_CREATE:
        vrpc_iatt_from_xdr(&r->create.iatt, &rp->iatt);
        client_fd_opened(req->xl, req, r->create.fd);
        rp->has_postparent = r->create.has_postparent;
        if (rp->has_postparent)
            vrpc_iatt_from_xdr(&r->create.postparent, &rp->postparent);
        break;
    case VRPC_RSP_OPENDIR:
        return client_fill_opendir(req, &r->opendir, rec, data_off,
                                   data_len);
    case VRPC_RSP_CPD:
    case VRPC_RSP_LOOKUP_XOP:
        return -EPROTO; /* no fop's own shape: client_fop_done's */
    case VRPC_RSP_XATTROP:
        return client_xattrop_values(&req->args.xattrop,
                                     r->xattrop.values.values_val,
                                     r->xattrop.values.values_len,
                                     &rp->xattr, &rp->xattr_len);
    case VRPC_RSP_LOOKUP: {
        u_int n = r->lookup.xattr_value.xattr_value_len;

        vrpc_iatt_from_xdr(&r->lookup.iatt, &rp->iatt);
        /* An xattr only when asked, and a value only with status 0. */
        if ((req->args.lookup.xattr_name == NULL
             && (r->lookup.xattr_status != 0 || n != 0))
            || (r->lookup.xattr_status != 0 && n != 0)
            || r->lookup.xattr_status > 0)
            return -EPROTO;
        rp->xattr_status = r->lookup.xattr_status;
        if (n > 0) {
            rp->xattr = vl_malloc(NULL, n + 1, VL_MT_REPLY);
            if (rp->xattr == NULL)
                return -ENOMEM;
            memcpy(rp->xattr, r->lookup.xattr_value.xattr_value_val, n);
            rp->xattr[n] = '\0';
            rp->xattr_len = n;
        }
        if (!r->lookup.has_content) {
            if (data_len != 0)
                return -EPROTO;
            break;
        }
        /* The content is the rest of the record, of the size the reply
         * says, no more than was asked for (and only for a file). */
        if (r->lookup.count != data_len
            || data_len > req->args.lookup.content_max
            || !S_ISREG(rp->iatt.mode) || data_len != rp->iatt.size)
            return -EPROTO;
        rp->buf = vl_buf_ref(rec);
        rp->data = rec->data + data_off;
        rp->count = (int64_t)data_len;
        break;
    }
    }
    return 0;
}


static void
client_fop_done(void *cookie, int status, vl_buf_t *rec, size_t body_off,
                size_t len)
{
    vl_req_t *req = cookie;
    struct client_local *local = VL_REQ_PRIV(req, struct client_local);
    const struct vrpc_fop_desc *desc = vrpc_fop_desc(req->op);
    bool is_lookup_xop = local->is_cpd && req->op == VL_FOP_LOOKUP;
    xdrproc_t fn = vrpc_rsp_xdr(is_lookup_xop   ? VRPC_RSP_LOOKUP_XOP
                                : local->is_cpd ? VRPC_RSP_CPD
                                                : desc->rsp);
    union vrpc_fop_rsp r;
    size_t used = 0;

    if (status != 0) {
        vl_unwind(req, status);
        return;
    }
    memset(&r, 0, sizeof(r));
    if (vrpc_decode_body(rec->data + body_off, len - body_off, fn, &r,
                         &used) != 0) {
        vl_log(req->xl, VL_LOG_WARNING, "undecodable %s reply",
               vl_fop_name(req->op));
        vl_unwind(req, -EPROTO);
        return;
    }
    status = r.status.status;
    if (status > 0 || status < -4095) {
        status = -EPROTO;
    } else if (local->is_cpd && !is_lookup_xop) {
        int rc = body_off + used != len ? -EPROTO
                                        : client_fill_cpd(req, &r.cpd);

        if (rc != 0) {
            vl_reply_clear(&req->reply);
            status = rc;
        }
    } else if (status != 0 && is_lookup_xop) {
        if (client_fill_lookup_xop(req, status, &r.lookup_xop) != 0)
            status = -EPROTO;
        vl_reply_clear(&req->reply);
    } else if (status == 0 && req->op != VL_FOP_READ
               && req->op != VL_FOP_LOOKUP && req->op != VL_FOP_READDIR
               && req->op != VL_FOP_OPENDIR && body_off + used != len) {
        status = -EPROTO; /* trailing bytes */
    } else if (status == 0) {
        /* A LOOKUP_XOP's lookup overlaps r.lookup. */
        status = client_fill_reply(req, &r, rec, body_off + used,
                                   len - body_off - used);
        if (status == 0 && is_lookup_xop)
            status = client_fill_lookup_xop(req, 0, &r.lookup_xop);
        if (status != 0)
            vl_reply_clear(&req->reply);
    }
    xdr_free(fn, (char *)&r);
    vl_unwind(req, status);
}


void
client_release(vl_xlator_t *xl, vl_fd_t *fd)
{
    struct client_fd *cf = vl_fd_ctx(fd, xl);
    vrpc_clnt_t *clnt;
    uint64_t gen = 0, fgen, no;
    bool is_dir;

    if (cf == NULL || xl->priv == NULL)
        return;
    pthread_mutex_lock(&fd->lock);
    fgen = cf->generation;
    no = cf->remote_fd;
    is_dir = cf->is_dir;
    cf->generation = 0;
    pthread_mutex_unlock(&fd->lock);
    if (fgen == 0)
        return;
    clnt = client_get_conn(xl->priv, &gen);
    /* On a newer connection the brick never knew this fd. */
    if (clnt != NULL && gen == fgen)
        client_send_release(clnt, no, is_dir);
    vrpc_clnt_unref(clnt);
}
