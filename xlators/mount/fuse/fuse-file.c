/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-file: FUSE operations on open files and directories: OPEN, CREATE,
 * READ, WRITE, FLUSH, FSYNC, RELEASE, OPENDIR, READDIR, READDIRPLUS,
 * FSYNCDIR, RELEASEDIR, GETLK, SETLK, SETLKW, FALLOCATE, LSEEK and
 * COPY_FILE_RANGE.
 *
 * File handles are struct vfuse_handle pointers (fuse-table.c) holding a
 * ref on the fd of one graph: OPEN/CREATE/OPENDIR make one, RELEASE and
 * RELEASEDIR free it (the fd's last unref runs every translator's release
 * hook). Handlers get the fd of their own graph from fuse-resolve.c.
 *
 * Privilege killing (HANDLE_KILLPRIV_V2 makes it ours): a WRITE flagged
 * FUSE_WRITE_KILL_SUIDGID whose post-write attributes still show setuid
 * or setgid, and an O_TRUNC open flagged FUSE_OPEN_KILL_SUIDGID, are
 * followed by a SETATTR with VL_SET_KILL_SUIDGID before the answer.
 *
 * FLUSH is answered without a round trip unless the node ever had a lock
 * request (VFUSE_NODE_HAS_LK, set by GETLK/SETLK/SETLKW before winding);
 * see vfuse_flush_is_needed. FLUSH, FSYNC and FSYNCDIR never answer the
 * kernel ENOSYS (vfuse_sync_done). CREATE and READDIRPLUS entries feed
 * the name hints (fuse-hint.c); a CREATE that made the file marks it as
 * having no security.capability (fuse-entry.c).
 *
 * Threads: as fuse-entry.c; no state beyond the call.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "fuse.h"


/* Winds SETATTR(KILL_SUIDGID) on call->fd or fd, answering through then. */
static void
vfuse_kill_suidgid(struct vfuse_call *call, vl_fd_t *fd, vl_done_fn *then)
{
    vl_req_t *req = vfuse_req_new(call, VL_FOP_SETATTR);
    struct vl_setattr_args *a;

    if (req == NULL) {
        vfuse_reply_err(call, -ENOMEM);
        return;
    }
    a = VL_ARGS(req, setattr);
    a->fd = fd;
    a->loc.inode = fd->inode;
    a->valid = VL_SET_KILL_SUIDGID;
    vl_wind(req, then, call);
}


/* ---- OPEN / CREATE / OPENDIR ---- */

/* Makes the kernel's handle for call->fd (object gfid, type) and answers
 * with it. */
static void
vfuse_open_reply(struct vfuse_call *call, const struct fuse_entry_out *entry,
                 const vl_gfid_t *gfid, uint32_t type)
{
    const struct vfuse_conf *conf = VL_CONF(call->xl, struct vfuse_conf);
    struct fuse_open_out out;
    struct iovec iov[2];
    int n = 0;
    bool is_dir = call->hdr.opcode == FUSE_OPENDIR;
    uint64_t nodeid = entry != NULL ? entry->nodeid : 0;
    struct vfuse_session *sess = call->sess;
    uint64_t gen = call->priv->gen;
    uint64_t fh;

    fh = vfuse_handle_new(&sess->table, call->fd, gen, gfid, type, is_dir);
    if (fh == 0) {
        vfuse_reply_err(call, -ENOMEM);
        if (nodeid != 0)
            vfuse_inode_forget(sess, nodeid, 1);
        return;
    }
    memset(&out, 0, sizeof(out));
    out.fh = fh;
    if (conf->is_direct_io && !is_dir)
        out.open_flags |= FOPEN_DIRECT_IO;
    else if (conf->is_keep_cache && !is_dir)
        out.open_flags |= FOPEN_KEEP_CACHE;
    if (entry != NULL) {
        iov[n].iov_base = (void *)entry;
        iov[n++].iov_len = sizeof(*entry);
    }
    iov[n].iov_base = &out;
    iov[n++].iov_len = sizeof(out);
    if (vfuse_reply(call, 0, iov, n) == -ENOENT) {
        /* The kernel never saw the handle (or the entry): undo both. The
         * fd's graph is alive: the call pinned it until vfuse_reply. */
        vl_fd_unref(vfuse_handle_free(&sess->table, fh, gen));
        if (nodeid != 0)
            vfuse_inode_forget(sess, nodeid, 1);
    }
}


/* OPEN/OPENDIR answer: the handle is for the resolved node. */
static void
vfuse_open_answer(struct vfuse_call *call)
{
    vl_inode_t *inode = vfuse_call_inode(call);

    vfuse_open_reply(call, NULL, &inode->gfid, inode->type);
}


static void
vfuse_open_killed(vl_req_t *req, void *cookie)
{
    if (req->status != 0)
        vfuse_reply_err(cookie, req->status);
    else
        vfuse_open_answer(cookie);
}


static void
vfuse_open_done(vl_req_t *req, void *cookie)
{
    struct vfuse_call *call = cookie;
    struct fuse_open_in in;

    if (req->status != 0) {
        vfuse_reply_err(call, req->status);
        return;
    }
    memcpy(&in, call->arg, sizeof(in));
    if (call->hdr.opcode == FUSE_OPEN && (in.flags & O_TRUNC)
        && (in.open_flags & FUSE_OPEN_KILL_SUIDGID)) {
        vfuse_kill_suidgid(call, call->fd, vfuse_open_killed);
        return;
    }
    vfuse_open_answer(call);
}


static void
vfuse_open_common(struct vfuse_call *call, vl_fop_t op)
{
    struct fuse_open_in in;
    vl_inode_t *inode = vfuse_call_inode(call);
    vl_req_t *req;

    memcpy(&in, call->arg, sizeof(in));
    if (inode == NULL) {
        vfuse_reply_err(call, -EINVAL);
        return;
    }
    call->fd = vl_fd_new(inode, (int32_t)in.flags, call->hdr.pid);
    req = call->fd != NULL ? vfuse_req_new(call, op) : NULL;
    if (req != NULL && op == VL_FOP_OPEN) {
        VL_ARGS(req, open)->loc.inode = inode;
        VL_ARGS(req, open)->flags = (int32_t)in.flags;
        VL_ARGS(req, open)->fd = call->fd;
    } else if (req != NULL) {
        VL_ARGS(req, opendir)->loc.inode = inode;
        VL_ARGS(req, opendir)->fd = call->fd;
    }
    vfuse_send(call, req, 0, vfuse_open_done);
}


void
vfuse_open(struct vfuse_call *call)
{
    vfuse_open_common(call, VL_FOP_OPEN);
}


void
vfuse_opendir(struct vfuse_call *call)
{
    vfuse_open_common(call, VL_FOP_OPENDIR);
}


static void
vfuse_create_done(vl_req_t *req, void *cookie)
{
    struct vfuse_call *call = cookie;
    struct fuse_entry_out entry;
    vl_inode_t *linked;
    uint64_t nodeid;

    if (req->status != 0) {
        vfuse_reply_err(call, req->status);
        return;
    }
    linked = vl_inode_link(call->inode, &req->reply.iatt);
    if (linked == NULL) {
        vfuse_reply_err(call, -ENOMEM);
        return;
    }
    nodeid = vfuse_inode_remember(call, linked);
    if (nodeid == 0) {
        vfuse_reply_err(call, -ENOMEM);
        return;
    }
    vfuse_entry_learn(call, req, nodeid, &VL_ARGS(req, create)->loc,
                      &VL_ARGS(req, create)->gfid);
    vfuse_postparent_learn(call, req);
    vfuse_entry_fill(call->priv, &entry, nodeid, &req->reply.iatt);
    vfuse_open_reply(call, &entry, &req->reply.iatt.gfid,
                     req->reply.iatt.mode & S_IFMT);
}


void
vfuse_create(struct vfuse_call *call)
{
    struct fuse_create_in in;
    vl_inode_t *parent = vfuse_call_inode(call);
    const char *name = vfuse_arg_str(call, sizeof(in), NULL);
    struct vl_create_args *a;
    vl_req_t *req;
    int rc;

    memcpy(&in, call->arg, sizeof(in));
    rc = parent == NULL ? -EINVAL : vfuse_name_check(name);
    if (rc != 0) {
        vfuse_reply_err(call, rc);
        return;
    }
    call->inode = vl_inode_new(call->priv->xl->graph->itable);
    if (call->inode != NULL)
        call->fd = vl_fd_new(call->inode, (int32_t)in.flags, call->hdr.pid);
    req = call->fd != NULL ? vfuse_req_new(call, VL_FOP_CREATE) : NULL;
    if (req != NULL) {
        a = VL_ARGS(req, create);
        a->loc.parent = parent;
        a->loc.name = name;
        a->loc.inode = call->inode;
        a->flags = (int32_t)in.flags;
        a->mode = in.mode;
        a->umask = in.umask;
        a->fd = call->fd;
        vl_gfid_generate(&a->gfid);
    }
    vfuse_send(call, req, 0, vfuse_create_done);
}


/* ---- READ / WRITE ---- */

static void
vfuse_read_done(vl_req_t *req, void *cookie)
{
    struct vfuse_call *call = cookie;
    const struct fuse_read_in *in = (const void *)call->arg;
    int64_t count = req->reply.count;

    if (req->status != 0) {
        vfuse_reply_err(call, req->status);
        return;
    }
    if (count < 0 || (count > 0 && req->reply.data == NULL)) {
        vfuse_reply_err(call, -EIO);
        return;
    }
    if ((uint64_t)count > in->size)
        count = in->size;
    vfuse_reply_buf(call, req->reply.data, (size_t)count);
}


void
vfuse_read(struct vfuse_call *call)
{
    struct fuse_read_in in;
    vl_req_t *req = vfuse_req_new(call, VL_FOP_READ);
    struct vl_read_args *a;

    memcpy(&in, call->arg, sizeof(in));
    if (in.read_flags & FUSE_READ_LOCKOWNER)
        call->caller.lk_owner = in.lock_owner;
    if (req != NULL) {
        req->caller = call->caller;
        a = VL_ARGS(req, read);
        a->fd = vfuse_call_fh(call, 0);
        a->size = in.size;
        a->offset = (off_t)in.offset;
        a->flags = in.flags;
    }
    vfuse_send(call, req, 0, vfuse_read_done);
}


static void
vfuse_write_reply(struct vfuse_call *call)
{
    struct fuse_write_out out;

    memset(&out, 0, sizeof(out));
    out.size = (uint32_t)call->count;
    vfuse_reply_buf(call, &out, sizeof(out));
}


static void
vfuse_write_killed(vl_req_t *req, void *cookie)
{
    if (req->status != 0)
        vfuse_reply_err(cookie, req->status);
    else
        vfuse_write_reply(cookie);
}


static void
vfuse_write_done(vl_req_t *req, void *cookie)
{
    struct vfuse_call *call = cookie;
    const struct fuse_write_in *in = (const void *)call->arg;

    if (req->status != 0) {
        vfuse_reply_err(call, req->status);
        return;
    }
    call->count = req->reply.count;
    if (call->count < 0 || call->count > (int64_t)in->size) {
        vfuse_reply_err(call, -EIO);
        return;
    }
    if ((in->write_flags & FUSE_WRITE_KILL_SUIDGID)
        && (req->reply.iatt.mode & (S_ISUID | S_ISGID))) {
        vfuse_kill_suidgid(call, vfuse_call_fh(call, 0), vfuse_write_killed);
        return;
    }
    vfuse_write_reply(call);
}


/* The payload follows fuse_write_in and stays in the call (inline or in
 * call->buf) until answered, so the request borrows it without a copy. */
void
vfuse_write(struct vfuse_call *call)
{
    struct fuse_write_in in;
    vl_req_t *req;
    struct vl_write_args *a;

    memcpy(&in, call->arg, sizeof(in));
    if ((size_t)in.size > call->arg_len - sizeof(in)) {
        vfuse_reply_err(call, -EINVAL);
        return;
    }
    if (in.write_flags & FUSE_WRITE_LOCKOWNER)
        call->caller.lk_owner = in.lock_owner;
    call->iov.iov_base = (void *)(call->arg + sizeof(in));
    call->iov.iov_len = in.size;
    req = vfuse_req_new(call, VL_FOP_WRITE);
    if (req != NULL) {
        a = VL_ARGS(req, write);
        a->fd = vfuse_call_fh(call, 0);
        a->iov = &call->iov;
        a->n_iov = 1;
        a->offset = (off_t)in.offset;
        a->flags = in.flags;
        a->buf = call->buf;
    }
    vfuse_send(call, req, 0, vfuse_write_done);
}


/* ---- FLUSH / FSYNC / RELEASE ---- */

/* Whether a FLUSH must go down. Below the bridge FLUSH has one duty in a
 * Mortar client: releasing the POSIX locks of the lock owner (features/
 * locks on the bricks). No lock request for the node ever left this
 * session (VFUSE_NODE_HAS_LK, set before any LK is wound and kept while
 * the node lives, whichever fd or process sent it): there is nothing to
 * release, and close(2) need not wait a round trip. Still sent:
 *   - a handle opened for writing when a translator that may hold writes
 *     back (write-behind) sits below: its FLUSH reports a deferred write
 *     error to close(). Read-only handles have no writes to report.
 * Not a reason: the kernel's own caches. Without writeback-cache every
 * write(2) has been answered before close(); with it (and for dirty mmap
 * pages) the kernel writes and waits for the data before it sends FLUSH.
 * A lock request racing with close(2) of another fd of the same owner in
 * another thread may be read after this FLUSH; so may it on a local file
 * system (the lock can outlive the close), and POSIX leaves that order
 * to the caller. */
static bool
vfuse_flush_is_needed(struct vfuse_call *call)
{
    const struct vfuse_conf *conf = VL_CONF(call->xl, struct vfuse_conf);
    vl_fd_t *fd = vfuse_call_fh(call, 0);

    if (!conf->is_flush_behind)
        return true; /* the bricks may act on it (fsync-on-close) */
    if (vfuse_node_flags(&call->sess->table, call->hdr.nodeid)
        & VFUSE_NODE_HAS_LK)
        return true;
    if (call->hdr.nodeid == FUSE_ROOT_ID || call->hdr.nodeid == 0)
        return true; /* no node to keep flags on: be safe */
    if (!call->priv->has_write_behind)
        return false;
    return fd == NULL || (fd->flags & O_ACCMODE) != O_RDONLY;
}


/* Answers FLUSH, FSYNC and FSYNCDIR. Never with ENOSYS: the kernel would
 * set no_flush/no_fsync/no_fsyncdir and send none of them again for the
 * life of the mount, answering 0 itself, so the errors that write-behind
 * keeps for fsync and close (and the release of POSIX locks at close)
 * would be gone. Per fop:
 *   FLUSH:  0. Nothing below implements it, and nothing is pending:
 *           write-behind answers a FLUSH with any failure it kept (it
 *           never reports ENOSYS: wb_answer, wb_fd_take_err), and without
 *           it every write was answered by the brick before close().
 *   FSYNC:  EIO. fsync promises the data is on stable storage, and no
 *           translator made it so; storage/posix implements fsync, so in
 *           a Mortar graph ENOSYS is a real fault (a brick or translator
 *           that lost the fop), which 0 would hide. */
static void
vfuse_sync_done(vl_req_t *req, void *cookie)
{
    struct vfuse_call *call = cookie;
    int status = req->status;

    if (status == -ENOSYS) {
        if (atomic_fetch_add(&call->sess->n_sync_nosys, 1) == 0)
            vl_log(call->xl, VL_LOG_WARNING,
                   "the graph answered %s with ENOSYS: the kernel gets %s "
                   "instead (logged once per mount)",
                   req->op == VL_FOP_FLUSH ? "flush" : "fsync",
                   req->op == VL_FOP_FLUSH ? "0" : "EIO");
        status = req->op == VL_FOP_FLUSH ? 0 : -EIO;
    }
    vfuse_reply_err(call, status);
}


void
vfuse_flush(struct vfuse_call *call)
{
    struct fuse_flush_in in;
    vl_req_t *req;

    if (!vfuse_flush_is_needed(call)) {
        atomic_fetch_add(&call->sess->n_flush_local, 1);
        vfuse_reply_err(call, 0);
        return;
    }
    memcpy(&in, call->arg, sizeof(in));
    call->caller.lk_owner = in.lock_owner;
    req = vfuse_req_new(call, VL_FOP_FLUSH);
    if (req != NULL)
        VL_ARGS(req, flush)->fd = vfuse_call_fh(call, 0);
    vfuse_send(call, req, 0, vfuse_sync_done);
}


void
vfuse_fsync(struct vfuse_call *call)
{
    struct fuse_fsync_in in;
    vl_req_t *req = vfuse_req_new(call, VL_FOP_FSYNC);

    memcpy(&in, call->arg, sizeof(in));
    if (req != NULL) {
        VL_ARGS(req, fsync)->fd = vfuse_call_fh(call, 0);
        VL_ARGS(req, fsync)->datasync = in.fsync_flags & FUSE_FSYNC_FDATASYNC;
    }
    vfuse_send(call, req, 0, vfuse_sync_done);
}


void
vfuse_fsyncdir(struct vfuse_call *call)
{
    vfuse_fsync(call);
}


static void
vfuse_release_done(vl_req_t *req, void *cookie)
{
    (void)req; /* an unlock that failed changes nothing for close() */
    vfuse_reply_err(cookie, 0);
}


/* Frees the kernel's handle; the call takes its fd ref (call->fd, dropped
 * when the call ends) if the fd is of the call's graph; one of an older
 * graph is dropped at once, and its flock(2) locks went with that graph's
 * connection. flock(2) locks die with the file: unlock them first. */
void
vfuse_release(struct vfuse_call *call)
{
    struct fuse_release_in in;
    struct vl_lk_args *a;
    vl_req_t *req;

    memcpy(&in, call->arg, sizeof(in));
    call->fd = vfuse_handle_free(&call->sess->table, in.fh, call->priv->gen);
    if (call->fd == NULL || !(in.release_flags & FUSE_RELEASE_FLOCK_UNLOCK)
        || call->hdr.opcode == FUSE_RELEASEDIR) {
        vfuse_reply_err(call, 0);
        return;
    }
    call->caller.lk_owner = in.lock_owner;
    req = vfuse_req_new(call, VL_FOP_LK);
    if (req == NULL) {
        vfuse_reply_err(call, 0);
        return;
    }
    a = VL_ARGS(req, lk);
    a->fd = call->fd;
    a->cmd = F_SETLK;
    a->flock.type = F_UNLCK;
    a->flock.whence = SEEK_SET;
    a->is_flock = true;
    vl_wind(req, vfuse_release_done, call);
}


void
vfuse_releasedir(struct vfuse_call *call)
{
    vfuse_release(call);
}


/* ---- READDIR / READDIRPLUS ---- */

/* The entry part of a READDIRPLUS record: links the inode and counts a
 * lookup, except for "." and ".." and entries without attributes, which
 * get nodeid 0 (the kernel then only uses the name). */
static void
vfuse_plus_entry(struct vfuse_call *call, const struct vl_dirent *ent,
                 struct fuse_entry_out *out)
{
    vl_inode_t *fresh;
    vl_inode_t *linked = NULL;
    vl_fd_t *dir = vfuse_call_fh(call, 0);
    uint64_t nodeid;

    memset(out, 0, sizeof(*out));
    if (!ent->has_iatt || vfuse_is_dot_or_dotdot(ent->name)
        || vl_gfid_is_null(&ent->iatt.gfid))
        return;
    fresh = vl_inode_new(call->priv->xl->graph->itable);
    if (fresh != NULL)
        linked = vl_inode_link(fresh, &ent->iatt);
    vl_inode_unref(fresh);
    if (linked == NULL)
        return;
    nodeid = vfuse_inode_remember(call, linked);
    if (nodeid != 0 && dir != NULL && dir->inode != NULL)
        vfuse_hint_add(&call->sess->table, &dir->inode->gfid, ent->name,
                       nodeid);
    vfuse_entry_fill(call->priv, out, nodeid, &ent->iatt);
}


static void
vfuse_readdir_done(vl_req_t *req, void *cookie)
{
    struct vfuse_call *call = cookie;
    struct vfuse_session *sess = call->sess;
    const struct fuse_read_in *in = (const void *)call->arg;
    bool plus = call->hdr.opcode == FUSE_READDIRPLUS;
    /* The kernel asks a page or a few; a size past a message buffer is
     * not one, and must not size an allocation (found by fuzz-fuse). */
    size_t size = in->size < sess->buf_size ? in->size : sess->buf_size;
    size_t used = 0;
    char *out;

    if (req->status != 0) {
        vfuse_reply_err(call, req->status);
        return;
    }
    out = vl_malloc(call->xl, size > 0 ? size : 1, VFUSE_MT_REPLY);
    if (out == NULL) {
        vfuse_reply_err(call, -ENOMEM);
        return;
    }
    for (size_t i = 0; i < req->reply.entries.n; i++) {
        const struct vl_dirent *ent = &req->reply.entries.ents[i];
        struct fuse_entry_out entry;
        size_t n;

        if (vfuse_dirent_size(strlen(ent->name), plus) > size - used)
            break;
        if (plus) {
            vfuse_plus_entry(call, ent, &entry);
            n = vfuse_direntplus_pack(out + used, size - used, ent, &entry);
        } else {
            n = vfuse_dirent_pack(out + used, size - used, ent);
        }
        used += n;
    }
    if (vfuse_reply_buf(call, out, used) == -ENOENT && plus) {
        /* Not seen by the kernel: give back the lookups we counted. */
        for (size_t at = 0; at < used;) {
            struct fuse_direntplus *dp = (void *)(out + at);

            if (dp->entry_out.nodeid != 0)
                vfuse_inode_forget(sess, dp->entry_out.nodeid, 1);
            at += vfuse_dirent_size(dp->dirent.namelen, true);
        }
    }
    vl_free(out);
}


static void
vfuse_readdir_common(struct vfuse_call *call, bool plus)
{
    struct fuse_read_in in;
    vl_req_t *req = vfuse_req_new(call, VL_FOP_READDIR);
    struct vl_readdir_args *a;

    memcpy(&in, call->arg, sizeof(in));
    if (req != NULL) {
        a = VL_ARGS(req, readdir);
        a->fd = vfuse_call_fh(call, 0);
        a->size = in.size;
        a->offset = (off_t)in.offset;
        a->plus = plus;
    }
    vfuse_send(call, req, 0, vfuse_readdir_done);
}


void
vfuse_readdir(struct vfuse_call *call)
{
    vfuse_readdir_common(call, false);
}


void
vfuse_readdirplus(struct vfuse_call *call)
{
    vfuse_readdir_common(call, true);
}


/* ---- locks ---- */

static void
vfuse_getlk_done(vl_req_t *req, void *cookie)
{
    struct vfuse_call *call = cookie;
    struct fuse_lk_out out;

    if (req->status != 0) {
        vfuse_reply_err(call, req->status);
        return;
    }
    vfuse_flock_to_fuse(&req->reply.flock, &out.lk);
    vfuse_reply_buf(call, &out, sizeof(out));
}


static void
vfuse_lk_common(struct vfuse_call *call, int cmd)
{
    struct fuse_lk_in in;
    struct vl_lk_args *a;
    vl_req_t *req;
    int rc = 0;

    memcpy(&in, call->arg, sizeof(in));
    call->caller.lk_owner = in.owner;
    /* Before winding: from now on this node's FLUSHes go down (a FLUSH
     * read after this point sees the flag; see vfuse_flush_is_needed). */
    vfuse_node_set_flags(&call->sess->table, call->hdr.nodeid,
                         VFUSE_NODE_HAS_LK, 0);
    req = vfuse_req_new(call, VL_FOP_LK);
    if (req != NULL) {
        a = VL_ARGS(req, lk);
        a->fd = vfuse_call_fh(call, 0);
        a->cmd = cmd;
        a->is_flock = in.lk_flags & FUSE_LK_FLOCK;
        rc = vfuse_flock_from_fuse(&in.lk, &a->flock);
    }
    vfuse_send(call, req, rc,
               cmd == F_GETLK ? vfuse_getlk_done : vfuse_status_done);
}


void
vfuse_getlk(struct vfuse_call *call)
{
    vfuse_lk_common(call, F_GETLK);
}


void
vfuse_setlk(struct vfuse_call *call)
{
    vfuse_lk_common(call, F_SETLK);
}


void
vfuse_setlkw(struct vfuse_call *call)
{
    vfuse_lk_common(call, F_SETLKW);
}


/* ---- FALLOCATE / LSEEK / COPY_FILE_RANGE ---- */

void
vfuse_fallocate(struct vfuse_call *call)
{
    struct fuse_fallocate_in in;
    vl_req_t *req = vfuse_req_new(call, VL_FOP_FALLOCATE);
    struct vl_fallocate_args *a;

    memcpy(&in, call->arg, sizeof(in));
    if (req != NULL) {
        a = VL_ARGS(req, fallocate);
        a->fd = vfuse_call_fh(call, 0);
        a->mode = (int32_t)in.mode;
        a->offset = (off_t)in.offset;
        a->len = (off_t)in.length;
    }
    vfuse_send(call, req, 0, vfuse_status_done);
}


static void
vfuse_lseek_done(vl_req_t *req, void *cookie)
{
    struct vfuse_call *call = cookie;
    struct fuse_lseek_out out;

    if (req->status != 0) {
        vfuse_reply_err(call, req->status);
        return;
    }
    out.offset = (uint64_t)req->reply.offset;
    vfuse_reply_buf(call, &out, sizeof(out));
}


void
vfuse_lseek(struct vfuse_call *call)
{
    struct fuse_lseek_in in;
    vl_req_t *req = vfuse_req_new(call, VL_FOP_LSEEK);

    memcpy(&in, call->arg, sizeof(in));
    if (req != NULL) {
        VL_ARGS(req, lseek)->fd = vfuse_call_fh(call, 0);
        VL_ARGS(req, lseek)->offset = (off_t)in.offset;
        VL_ARGS(req, lseek)->whence = (int32_t)in.whence;
    }
    vfuse_send(call, req, 0, vfuse_lseek_done);
}


static void
vfuse_count_done(vl_req_t *req, void *cookie)
{
    struct vfuse_call *call = cookie;

    if (req->status != 0) {
        vfuse_reply_err(call, req->status);
        return;
    }
    if (req->reply.count < 0 || req->reply.count > UINT32_MAX) {
        vfuse_reply_err(call, -EIO);
        return;
    }
    call->count = req->reply.count;
    vfuse_write_reply(call);
}


void
vfuse_copy_file_range(struct vfuse_call *call)
{
    struct fuse_copy_file_range_in in;
    vl_req_t *req = vfuse_req_new(call, VL_FOP_COPY_FILE_RANGE);
    struct vl_copy_file_range_args *a;

    memcpy(&in, call->arg, sizeof(in));
    if (req != NULL) {
        a = VL_ARGS(req, copy_file_range);
        a->fd_in = vfuse_call_fh(call, 0);
        a->off_in = (off_t)in.off_in;
        a->fd_out = vfuse_call_fh(call, 1);
        a->off_out = (off_t)in.off_out;
        a->len = in.len;
        a->flags = (uint32_t)in.flags;
    }
    vfuse_send(call, req, 0, vfuse_count_done);
}
