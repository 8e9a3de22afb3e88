/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-reader: the threads that read /dev/fuse, the call objects they make,
 * the dispatch table by opcode, reply writing, and the protocol-level
 * messages (INIT, DESTROY, FORGET, BATCH_FORGET, INTERRUPT).
 *
 * Buffers: every reader owns one big vl_buf (max_write + headers). Small
 *          messages are copied into their call so the reader keeps its
 *          buffer; a big one (a WRITE payload, a large xattr value) keeps
 *          its buffer until answered, and the reader takes a spare from
 *          sess->pool (or a new one). Finished buffers nobody else holds go
 *          back to the pool.
 * Nodeids: struct vfuse_node pointers of the session's table
 *          (fuse-table.c); the handlers see resolved inodes only.
 * Graphs:  each message goes to the session's active instance, which the
 *          call pins (priv->n_inflight) until it ends. The pin takes no
 *          lock: sess->active is read under RCU (urcu-bp, so that no
 *          thread has to register) and the count is an atomic taken in
 *          that read section, which a drain waits out with
 *          synchronize_rcu (fuse-session.c). The count outlives the
 *          section because a call's life is asynchronous: it ends in a
 *          done callback on whatever thread answers.
 * Threads: conf->reader_threads readers block in read(2) (one woken per
 *          request, counted in n_requests); handlers only build requests
 *          and wind them, never wait. VFUSE_STOP_SIGNAL interrupts the
 *          read at stop. Replies are written from whichever thread
 *          answers (writev is atomic per message).
 */
#include "config.h"

/* No _LGPL_SOURCE: the read side is liburcu-bp's own functions, not its
 * header's inline copies. liburcu 0.13 (Debian 12) places a thread's
 * reader record 32 bytes into a slot its type declares 128-byte aligned;
 * harmless on this hardware, but the inline copies, compiled here, made
 * UBSan stop every sanitizer and fuzz build at the first read lock. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <urcu-bp.h>

#include "fuse.h"

#define VFUSE_DOMAIN "fuse"
#define VFUSE_STOP_RETRY_MS 20 /* resend the stop signal this often */

static pthread_once_t vfuse_stop_once = PTHREAD_ONCE_INIT;

struct vfuse_op {
    vfuse_handler_fn *fn; /* NULL: ENOSYS */
    uint32_t min_len;     /* smallest valid payload */
};

static const struct vfuse_op vfuse_ops[] = {
    [FUSE_LOOKUP] = {vfuse_lookup, 2},
    [FUSE_GETATTR] = {vfuse_getattr, sizeof(struct fuse_getattr_in)},
    [FUSE_SETATTR] = {vfuse_setattr, sizeof(struct fuse_setattr_in)},
    [FUSE_READLINK] = {vfuse_readlink, 0},
    [FUSE_SYMLINK] = {vfuse_symlink, 4},
    [FUSE_MKNOD] = {vfuse_mknod, sizeof(struct fuse_mknod_in) + 2},
    [FUSE_MKDIR] = {vfuse_mkdir, sizeof(struct fuse_mkdir_in) + 2},
    [FUSE_UNLINK] = {vfuse_unlink, 2},
    [FUSE_RMDIR] = {vfuse_rmdir, 2},
    [FUSE_RENAME] = {vfuse_rename, sizeof(struct fuse_rename_in) + 4},
    [FUSE_RENAME2] = {vfuse_rename2, sizeof(struct fuse_rename2_in) + 4},
    [FUSE_LINK] = {vfuse_link, sizeof(struct fuse_link_in) + 2},
    [FUSE_OPEN] = {vfuse_open, sizeof(struct fuse_open_in)},
    [FUSE_READ] = {vfuse_read, sizeof(struct fuse_read_in)},
    [FUSE_WRITE] = {vfuse_write, sizeof(struct fuse_write_in)},
    [FUSE_STATFS] = {vfuse_statfs, 0},
    [FUSE_RELEASE] = {vfuse_release, sizeof(struct fuse_release_in)},
    [FUSE_FSYNC] = {vfuse_fsync, sizeof(struct fuse_fsync_in)},
    [FUSE_SETXATTR] = {vfuse_setxattr, FUSE_COMPAT_SETXATTR_IN_SIZE + 2},
    [FUSE_GETXATTR] = {vfuse_getxattr, sizeof(struct fuse_getxattr_in) + 2},
    [FUSE_LISTXATTR] = {vfuse_listxattr, sizeof(struct fuse_getxattr_in)},
    [FUSE_REMOVEXATTR] = {vfuse_removexattr, 2},
    [FUSE_FLUSH] = {vfuse_flush, sizeof(struct fuse_flush_in)},
    [FUSE_OPENDIR] = {vfuse_opendir, sizeof(struct fuse_open_in)},
    [FUSE_READDIR] = {vfuse_readdir, sizeof(struct fuse_read_in)},
    [FUSE_RELEASEDIR] = {vfuse_releasedir, sizeof(struct fuse_release_in)},
    [FUSE_FSYNCDIR] = {vfuse_fsyncdir, sizeof(struct fuse_fsync_in)},
    [FUSE_GETLK] = {vfuse_getlk, sizeof(struct fuse_lk_in)},
    [FUSE_SETLK] = {vfuse_setlk, sizeof(struct fuse_lk_in)},
    [FUSE_SETLKW] = {vfuse_setlkw, sizeof(struct fuse_lk_in)},
    [FUSE_ACCESS] = {vfuse_access, sizeof(struct fuse_access_in)},
    [FUSE_CREATE] = {vfuse_create, sizeof(struct fuse_create_in) + 2},
    [FUSE_READDIRPLUS] = {vfuse_readdirplus, sizeof(struct fuse_read_in)},
    [FUSE_FALLOCATE] = {vfuse_fallocate, sizeof(struct fuse_fallocate_in)},
    [FUSE_LSEEK] = {vfuse_lseek, sizeof(struct fuse_lseek_in)},
    [FUSE_COPY_FILE_RANGE] = {vfuse_copy_file_range,
                              sizeof(struct fuse_copy_file_range_in)},
};


/* ---- buffers and calls ---- */

static vl_buf_t *
vfuse_pool_get(struct vfuse_session *sess)
{
    vl_buf_t *buf = NULL;

    pthread_mutex_lock(&sess->lock);
    if (sess->n_pool > 0)
        buf = sess->pool[--sess->n_pool];
    pthread_mutex_unlock(&sess->lock);
    if (buf == NULL)
        buf = vl_buf_new(sess->buf_size);
    return buf;
}


static void
vfuse_pool_put(struct vfuse_session *sess, vl_buf_t *buf)
{
    /* refs == 1 means we hold the only ref, so nobody can take another:
     * the buffer is free to reuse. A translator that kept a ref (e.g. to
     * cache written data) keeps the buffer; then it is simply dropped. */
    if (atomic_load(&buf->refs) == 1) {
        pthread_mutex_lock(&sess->lock);
        if (sess->n_pool < VFUSE_POOL_MAX) {
            sess->pool[sess->n_pool++] = buf;
            buf = NULL;
        }
        pthread_mutex_unlock(&sess->lock);
    }
    vl_buf_unref(buf);
}


void
vfuse_pool_clear(struct vfuse_session *sess)
{
    while (sess->n_pool > 0)
        vl_buf_unref(sess->pool[--sess->n_pool]);
}


/* The active instance, pinned for one call; NULL if there is none. The
 * read section covers only the step from loading sess->active to
 * counting the call: a drain that unpublished priv waits out every such
 * section (synchronize_rcu) before it reads n_inflight, so no reader can
 * count itself into a graph the drain already saw idle. From then on the
 * count, not RCU, keeps priv alive until the call ends. */
static struct vfuse_priv *
vfuse_priv_pin(struct vfuse_session *sess)
{
    struct vfuse_priv *priv;

    rcu_read_lock();
    priv = rcu_dereference(sess->active);
    if (priv != NULL)
        atomic_fetch_add(&priv->n_inflight, 1);
    rcu_read_unlock();
    return priv;
}


/* Drops the call's pin. Only the unpin that ends a drain's wait takes
 * sess->lock (so that its signal cannot slip in between the drain's test
 * of the count and its wait). It reads priv after the decrement, when a
 * drain may already see 0, so it runs in a read section: the drain waits
 * that out (synchronize_rcu) before the graph may be torn down. */
static void
vfuse_priv_unpin(struct vfuse_session *sess, struct vfuse_priv *priv)
{
    rcu_read_lock();
    /* Both sequentially consistent, as are the drain's store of the flag
     * and its load of the count: either this sees the flag, or the drain
     * sees the count at 0. */
    if (atomic_fetch_sub(&priv->n_inflight, 1) == 1
        && atomic_load(&priv->is_drain_waiting)) {
        pthread_mutex_lock(&sess->lock);
        pthread_cond_broadcast(&sess->cond);
        pthread_mutex_unlock(&sess->lock);
    }
    rcu_read_unlock();
}


/* Makes the call for the message of n bytes in r->buf, pinned to the
 * active graph. NULL with *rc set on failure. */
static struct vfuse_call *
vfuse_call_new(struct vfuse_reader *r, size_t n, int *rc)
{
    struct vfuse_session *sess = r->sess;
    struct vfuse_priv *priv = vfuse_priv_pin(sess);
    struct vfuse_call *call;
    const char *msg;
    vl_buf_t *spare;

    *rc = -ENOTCONN;
    if (priv == NULL)
        return NULL;
    *rc = -ENOMEM;

    if (n <= VFUSE_COPY_MAX) {
        call = vl_malloc(priv->xl, sizeof(*call) + n, VFUSE_MT_CALL);
        if (call == NULL)
            goto fail;
        memset(call, 0, sizeof(*call));
        memcpy(call->inline_msg, r->buf->data, n);
        msg = call->inline_msg;
    } else {
        call = vl_calloc(priv->xl, 1, sizeof(*call), VFUSE_MT_CALL);
        if (call == NULL)
            goto fail;
        spare = vfuse_pool_get(sess);
        if (spare == NULL) {
            vl_free(call);
            goto fail;
        }
        call->buf = r->buf;
        r->buf = spare;
        msg = call->buf->data;
    }
    call->priv = priv;
    call->sess = sess;
    call->xl = priv->xl;
    memcpy(&call->hdr, msg, sizeof(call->hdr));
    call->arg = msg + sizeof(struct fuse_in_header);
    call->arg_len = (uint32_t)(n - sizeof(struct fuse_in_header));
    call->caller.uid = call->hdr.uid;
    call->caller.gid = call->hdr.gid;
    call->caller.pid = call->hdr.pid;
    vfuse_groups_fill(&sess->groups,
                      VL_CONF(priv->xl, struct vfuse_conf)->gid_timeout,
                      &call->caller);
    return call;
fail:
    vfuse_priv_unpin(sess, priv);
    return NULL;
}


void
vfuse_call_end(struct vfuse_call *call)
{
    struct vfuse_priv *priv = call->priv;
    struct vfuse_session *sess = call->sess;

    /* Every ref here is into the call's graph, alive while pinned. */
    vl_inode_unref(call->inode);
    vl_fd_unref(call->fd);
    for (int i = 0; i < 2; i++) {
        vl_inode_unref(call->node_inode[i]);
        vl_fd_unref(call->fh_fd[i]);
    }
    vl_inode_unref(call->res_inode);
    vl_fd_unref(call->res_fd);
    if (call->buf != NULL)
        vfuse_pool_put(sess, call->buf);
    vl_free(call);
    vfuse_priv_unpin(sess, priv);
}


/* ---- replies ---- */

static int
vfuse_write_reply(struct vfuse_session *sess, uint64_t unique, int status,
                  const struct iovec *iov, int n_iov)
{
    struct fuse_out_header out;
    struct iovec vec[8];
    size_t len = sizeof(out);
    ssize_t n;

    /* The kernel rejects errors outside -999..0. */
    if (status > 0 || status < -999)
        status = -EIO;
    if (status != 0)
        n_iov = 0;
    vec[0].iov_base = &out;
    vec[0].iov_len = sizeof(out);
    for (int i = 0; i < n_iov && i < 7; i++) {
        vec[i + 1] = iov[i];
        len += iov[i].iov_len;
    }
    out.len = (uint32_t)len;
    out.error = status;
    out.unique = unique;
    n = writev(sess->fuse_fd, vec, 1 + (n_iov < 7 ? n_iov : 7));
    /* ENOENT: the request was interrupted and is gone; ENODEV: unmounted. */
    if (n >= 0)
        return 0;
    if (errno != ENOENT && errno != ENODEV)
        vl_glog(VFUSE_DOMAIN, VL_LOG_WARNING, "reply %llu to /dev/fuse: %s",
               (unsigned long long)unique, strerror(errno));
    return -errno;
}


int
vfuse_reply(struct vfuse_call *call, int status, const struct iovec *iov,
            int n_iov)
{
    int rc = vfuse_write_reply(call->sess, call->hdr.unique, status, iov,
                               n_iov);

    vfuse_call_end(call);
    return rc;
}


int
vfuse_reply_err(struct vfuse_call *call, int status)
{
    return vfuse_reply(call, status, NULL, 0);
}


int
vfuse_reply_buf(struct vfuse_call *call, const void *data, size_t len)
{
    struct iovec iov = {.iov_base = (void *)data, .iov_len = len};

    return vfuse_reply(call, 0, &iov, len > 0 ? 1 : 0);
}


/* The NUL-terminated string at off in the payload, or NULL if it runs
 * past the message (the kernel never sends that; be safe anyway). */
const char *
vfuse_arg_str(const struct vfuse_call *call, size_t off, size_t *len)
{
    const char *end;

    if (off >= call->arg_len)
        return NULL;
    end = memchr(call->arg + off, '\0', call->arg_len - off);
    if (end == NULL)
        return NULL;
    if (len != NULL)
        *len = (size_t)(end - (call->arg + off));
    return call->arg + off;
}


vl_req_t *
vfuse_req_new(struct vfuse_call *call, vl_fop_t op)
{
    vl_req_t *req = vl_req_new(VL_FIRST_CHILD(call->xl), op);

    if (req != NULL)
        req->caller = call->caller;
    return req;
}


/* ---- nodeids ---- */

uint64_t
vfuse_inode_remember(struct vfuse_call *call, vl_inode_t *linked)
{
    if (linked == call->priv->root) {
        vl_inode_unref(linked);
        return FUSE_ROOT_ID;
    }
    uint64_t nodeid =
        vfuse_node_remember(&call->sess->table, linked, call->priv->gen);

    vfuse_lru_trim(call->sess);
    return nodeid;
}


void
vfuse_inode_forget(struct vfuse_session *sess, uint64_t nodeid, uint64_t n)
{
    vfuse_node_forget(&sess->table, nodeid, n);
}


void
vfuse_entry_fill(struct vfuse_priv *priv, struct fuse_entry_out *out,
                 uint64_t nodeid, const struct vl_iatt *iatt)
{
    const struct vfuse_conf *conf = VL_CONF(priv->xl, struct vfuse_conf);

    memset(out, 0, sizeof(*out));
    out->nodeid = nodeid;
    vfuse_ms_to_timeout(vfuse_cache_timeout_ms(priv, conf->entry_timeout),
                        &out->entry_valid, &out->entry_valid_nsec);
    vfuse_ms_to_timeout(vfuse_cache_timeout_ms(priv, conf->attr_timeout),
                        &out->attr_valid, &out->attr_valid_nsec);
    vfuse_attr_from_iatt(&out->attr, iatt);
}


void
vfuse_attr_fill(struct vfuse_priv *priv, struct fuse_attr_out *out,
                const struct vl_iatt *iatt)
{
    const struct vfuse_conf *conf = VL_CONF(priv->xl, struct vfuse_conf);

    memset(out, 0, sizeof(*out));
    vfuse_ms_to_timeout(vfuse_cache_timeout_ms(priv, conf->attr_timeout),
                        &out->attr_valid, &out->attr_valid_nsec);
    vfuse_attr_from_iatt(&out->attr, iatt);
}


/* ---- protocol messages ---- */

static void
vfuse_bdi_raise(struct vfuse_session *sess)
{
    char path[96];
    char val[32];
    int fd;
    int len;

    if (!sess->has_bdi || sess->read_ahead_kb == 0)
        return;
    snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/read_ahead_kb",
             sess->bdi_major, sess->bdi_minor);
    len = snprintf(val, sizeof(val), "%llu",
                   (unsigned long long)sess->read_ahead_kb);
    fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, val, (size_t)len) != len)
        vl_glog(VFUSE_DOMAIN, VL_LOG_WARNING, "set %s to %s: %s", path,
                val,
               strerror(errno));
    if (fd >= 0)
        close(fd);
}


static void
vfuse_init(struct vfuse_call *call)
{
    struct vfuse_priv *priv = call->priv;
    const struct vfuse_conf *conf = VL_CONF(call->xl, struct vfuse_conf);
    struct fuse_init_in in;
    struct fuse_init_out out;
    uint64_t offered;
    uint64_t flags;
    uint64_t congestion;
    uint32_t n_pages;

    memset(&in, 0, sizeof(in));
    memcpy(&in, call->arg,
           call->arg_len < sizeof(in) ? call->arg_len : sizeof(in));
    memset(&out, 0, sizeof(out));
    out.major = FUSE_KERNEL_VERSION;
    out.minor = VFUSE_MINOR;
    if (in.major < 7) {
        vl_log(call->xl, VL_LOG_ERROR, "kernel fuse protocol %u.%u too old",
               in.major, in.minor);
        vfuse_reply_err(call, -EPROTO);
        return;
    }
    if (in.major > 7) {
        /* The kernel retries with our major after this short answer. */
        vfuse_reply_buf(call, &out, FUSE_COMPAT_INIT_OUT_SIZE);
        return;
    }
    if (in.minor < out.minor)
        out.minor = in.minor;

    offered = in.flags;
    if (in.flags & FUSE_INIT_EXT)
        offered |= (uint64_t)in.flags2 << 32;
    flags = vfuse_init_want(conf) & offered;
    congestion = conf->congestion != 0 ? conf->congestion
                                       : conf->max_background * 3 / 4;
    if (congestion > conf->max_background)
        congestion = conf->max_background;
    n_pages = (uint32_t)((conf->max_write + 4095) / 4096);

    out.max_readahead = in.max_readahead;
    out.flags = (uint32_t)flags;
    out.flags2 = (uint32_t)(flags >> 32);
    out.max_background = (uint16_t)conf->max_background;
    out.congestion_threshold = (uint16_t)congestion;
    out.max_write = (uint32_t)conf->max_write;
    out.time_gran = 1;
    out.max_pages = (uint16_t)n_pages;

    pthread_mutex_lock(&call->sess->lock);
    call->sess->proto_minor = out.minor;
    call->sess->max_write = out.max_write;
    pthread_mutex_unlock(&call->sess->lock);
    vl_log(call->xl, VL_LOG_INFO,
           "fuse %u.%u (kernel %u.%u) flags 0x%llx max_write %u "
           "max_background %u", out.major, out.minor, in.major, in.minor,
           (unsigned long long)flags, out.max_write, out.max_background);
    vfuse_reply_buf(call, &out, sizeof(out)); /* ends (frees) the call */

    /* The kernel clamps the bdi's read-ahead to max_readahead while it
     * processes our reply, so raise it only now. priv stays valid without
     * the call's pin: it is the session's first instance, whose graph is
     * not freed before it is ready or given up on. */
    vfuse_bdi_raise(priv->sess);
    vfuse_init_answered(priv);
}


static void
vfuse_destroy(struct vfuse_call *call)
{
    vfuse_reply_err(call, 0);
}


/* FORGET and BATCH_FORGET have no reply; they read r->buf directly. */
static void
vfuse_forgets(struct vfuse_reader *r, const struct fuse_in_header *hdr,
              const char *arg, size_t arg_len)
{
    const struct fuse_batch_forget_in *bin;
    struct fuse_forget_one one;
    struct fuse_forget_in in;

    if (hdr->opcode == FUSE_FORGET) {
        if (arg_len < sizeof(in))
            return;
        memcpy(&in, arg, sizeof(in));
        vfuse_inode_forget(r->sess, hdr->nodeid, in.nlookup);
        return;
    }
    if (arg_len < sizeof(*bin))
        return;
    bin = (const void *)arg;
    for (uint32_t i = 0; i < bin->count; i++) {
        size_t at = sizeof(*bin) + (size_t)i * sizeof(one);

        if (at + sizeof(one) > arg_len)
            break;
        memcpy(&one, arg + at, sizeof(one));
        vfuse_inode_forget(r->sess, one.nodeid, one.nlookup);
    }
}


static void
vfuse_reply_early(struct vfuse_reader *r, uint64_t unique, int status)
{
    (void)vfuse_write_reply(r->sess, unique, status, NULL, 0);
}


/* ---- the reader loop ---- */

void
vfuse_process(struct vfuse_reader *r, size_t n)
{
    struct fuse_in_header hdr;
    const struct vfuse_op *op = NULL;
    struct vfuse_call *call;
    bool is_init_done;
    int rc;

    if (n < sizeof(hdr)) {
        vl_glog(VFUSE_DOMAIN, VL_LOG_WARNING, "short fuse message (%zu)", n);
        return;
    }
    memcpy(&hdr, r->buf->data, sizeof(hdr));
    if (hdr.len != n) {
        vl_glog(VFUSE_DOMAIN, VL_LOG_WARNING, "fuse message len %u read %zu",
               hdr.len, n);
        vfuse_reply_early(r, hdr.unique, -EIO);
        return;
    }
    if (hdr.opcode == FUSE_FORGET || hdr.opcode == FUSE_BATCH_FORGET) {
        vfuse_forgets(r, &hdr, r->buf->data + sizeof(hdr), n - sizeof(hdr));
        return;
    }
    /* Interrupts are not acted on: every request gets its answer anyway. */
    if (hdr.opcode == FUSE_INTERRUPT)
        return;

    is_init_done = atomic_load(&r->sess->is_init_done);
    if (hdr.opcode != FUSE_INIT && !is_init_done) {
        vfuse_reply_early(r, hdr.unique, -EIO);
        return;
    }
    if (hdr.opcode < VL_ARRAY_SIZE(vfuse_ops))
        op = &vfuse_ops[hdr.opcode];
    if (hdr.opcode != FUSE_INIT && hdr.opcode != FUSE_DESTROY
        && (op == NULL || op->fn == NULL)) {
        vfuse_reply_early(r, hdr.unique, -ENOSYS);
        return;
    }
    if (op != NULL && n - sizeof(hdr) < op->min_len) {
        vfuse_reply_early(r, hdr.unique, -EINVAL);
        return;
    }
    call = vfuse_call_new(r, n, &rc);
    if (call == NULL) {
        vfuse_reply_early(r, hdr.unique, rc);
        return;
    }
    if (hdr.opcode == FUSE_INIT)
        vfuse_init(call);
    else if (hdr.opcode == FUSE_DESTROY)
        vfuse_destroy(call);
    else
        vfuse_resolve_run(call, op->fn);
}


/* Wakes a reader out of its blocking read (EINTR): the handler does
 * nothing, and it is installed without SA_RESTART. */
static void
vfuse_stop_handler(int sig)
{
    (void)sig;
}


static void
vfuse_stop_signal_install(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = vfuse_stop_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: read(2) must return EINTR */
    if (sigaction(VFUSE_STOP_SIGNAL, &sa, NULL) != 0)
        vl_glog(VFUSE_DOMAIN, VL_LOG_ERROR, "stop signal handler: %s",
                strerror(errno));
}


/* Readers block in read(2): the kernel wakes one reader per request
 * (an exclusive wait), where poll(2) on a non-blocking fd woke every
 * reader and cost each a poll and a read that said EAGAIN. They stop on
 * ENODEV (the connection ends when the unmounted filesystem is released)
 * or, when files keep a lazily unmounted filesystem alive, on
 * VFUSE_STOP_SIGNAL from vfuse_readers_stop with is_stopping set. */
static void *
vfuse_reader_main(void *arg)
{
    struct vfuse_reader *r = arg;
    struct vfuse_session *sess = r->sess;
    sigset_t stop;
    ssize_t n;

    pthread_setname_np(pthread_self(), "vfuse-reader");
    /* Created with every signal blocked; take only the stop signal. */
    sigemptyset(&stop);
    sigaddset(&stop, VFUSE_STOP_SIGNAL);
    pthread_sigmask(SIG_UNBLOCK, &stop, NULL);
    while (!atomic_load(&sess->is_stopping)) {
        n = read(sess->fuse_fd, r->buf->data, r->buf->size);
        if (n >= 0) {
            atomic_store_explicit(
                &r->n_requests,
                atomic_load_explicit(&r->n_requests, memory_order_relaxed)
                    + 1,
                memory_order_relaxed);
            vfuse_process(r, (size_t)n);
            continue;
        }
        if (errno == EINTR || errno == ENOENT)
            continue; /* ENOENT: the request was aborted before we read */
        if (errno == ENODEV) {
            /* Unmounted behind our back (umount, fusermount -u): let the
             * process tear the graph down. Only the first reader says so. */
            if (!atomic_exchange(&sess->is_gone, true)
                && !atomic_load(&sess->is_stopping)) {
                vl_glog(VFUSE_DOMAIN, VL_LOG_INFO, "%s was unmounted; stopping",
                       sess->mountpoint);
                kill(getpid(), SIGTERM);
            }
            break;
        }
        vl_glog(VFUSE_DOMAIN, VL_LOG_ERROR, "read /dev/fuse: %s",
                strerror(errno));
        break;
    }
    return NULL;
}


int
vfuse_readers_start(struct vfuse_session *sess)
{
    sigset_t all;
    sigset_t old;
    int rc = 0;

    for (size_t i = 0; i < sess->n_readers; i++) {
        sess->readers[i].sess = sess;
        sess->readers[i].buf = vl_buf_new(sess->buf_size);
        if (sess->readers[i].buf == NULL)
            return -ENOMEM;
    }
    /* Readers never take signals but their stop signal: the process's
     * own thread does. */
    pthread_once(&vfuse_stop_once, vfuse_stop_signal_install);
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (size_t i = 0; i < sess->n_readers; i++) {
        rc = -pthread_create(&sess->readers[i].thread, NULL,
                             vfuse_reader_main, &sess->readers[i]);
        if (rc != 0)
            break;
        sess->readers[i].is_started = true;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}


void
vfuse_readers_stop(struct vfuse_session *sess)
{
    atomic_store(&sess->is_stopping, true);
    for (size_t i = 0; i < sess->n_readers; i++) {
        struct vfuse_reader *r = &sess->readers[i];

        /* A signal that lands between the reader's is_stopping check and
         * its read(2) is lost, so repeat it until the reader is gone. */
        while (r->is_started) {
            struct timespec until;
            int rc;

            rc = pthread_kill(r->thread, VFUSE_STOP_SIGNAL);
            if (rc != 0 && rc != ESRCH)
                vl_glog(VFUSE_DOMAIN, VL_LOG_WARNING, "wake reader: %s",
                        strerror(rc));
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += VFUSE_STOP_RETRY_MS * 1000000L;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            rc = pthread_timedjoin_np(r->thread, NULL, &until);
            if (rc == 0)
                r->is_started = false;
            else if (rc != ETIMEDOUT && rc != EINTR)
                break; /* cannot happen for a joinable thread */
        }
        r->is_started = false;
        vl_buf_unref(r->buf);
        r->buf = NULL;
    }
}
