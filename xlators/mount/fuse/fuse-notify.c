/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-notify: the bricks' cache invalidations passed on to the kernel
 * (FUSE_NOTIFY_INVAL_INODE, FUSE_NOTIFY_INVAL_ENTRY), and the kernel's
 * entry and attribute timeouts while they come (issue 24 item 2).
 *
 * A VL_EV_UPCALL of kind VL_UPCALL_INVALIDATE reaches mount/fuse on the
 * thread that read it from a brick. The bridge's own caches are dropped
 * there at once (a directory's kept postparent, the "has no
 * security.capability" mark, the name hint). The kernel is told by a
 * notifier thread of its own, from a queue: writing a notification to
 * /dev/fuse may wait in the kernel for the inode's pages or locks, which
 * a request in flight for the same inode may hold while it waits for our
 * answer; a reader or event thread that blocked there could deadlock
 * against that request (libfuse's fuse_lowlevel_notify_inval_inode
 * documentation says the same). A notification is a message with unique
 * 0 and the notify code in the error field.
 *
 * is_all (a brick's connection went down: nothing it vouched for
 * holds) invalidates every node's attributes and pages and every name the
 * session has a hint for. Names the kernel caches without a hint here
 * (hints are bounded) keep their entry timeout: README "Not done".
 *
 * Threads: any thread queues (sess->notifier.lock); the notifier thread
 *          alone writes notifications. Lock order: table lock, then
 *          notifier lock.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "builtin.h"
#include "fuse.h"

#define VFUSE_DOMAIN "fuse"

/* One notification waiting for the notifier thread. */
struct vfuse_notice {
    struct vfuse_link link; /* on notifier->queue */
    int code;               /* FUSE_NOTIFY_INVAL_INODE or _ENTRY */
    uint64_t nodeid;        /* inode: the node; entry: the directory */
    int64_t off;            /* inode: 0 (pages too) or -1 (attrs only) */
    size_t name_len;        /* entry: strlen(name) */
    char name[];            /* entry: NUL-terminated */
};


static struct vfuse_notice *
vfuse_notice_new(int code, uint64_t nodeid, int64_t off, const char *name)
{
    size_t len = name != NULL ? strlen(name) : 0;
    struct vfuse_notice *n =
        vl_malloc(NULL, sizeof(*n) + len + 1, VFUSE_MT_MISC);

    if (n == NULL)
        return NULL;
    n->code = code;
    n->nodeid = nodeid;
    n->off = off;
    n->name_len = len;
    memcpy(n->name, name != NULL ? name : "", len + 1);
    return n;
}


/* Queues n (taken), or drops it when the queue is full (counted). */
static void
vfuse_notice_queue(struct vfuse_notifier *nt, struct vfuse_notice *n)
{
    bool is_full;

    if (n == NULL) {
        atomic_fetch_add(&nt->n_dropped, 1);
        return;
    }
    pthread_mutex_lock(&nt->lock);
    is_full = nt->n_queued >= VFUSE_NOTIFY_QUEUE_MAX || !nt->is_started;
    if (!is_full) {
        vfuse_list_add(nt->queue.prev, &n->link);
        nt->n_queued++;
        pthread_cond_signal(&nt->cond);
    }
    pthread_mutex_unlock(&nt->lock);
    if (is_full) {
        atomic_fetch_add(&nt->n_dropped, 1);
        vl_free(n);
    }
}


void
vfuse_notify_entry_locked(void *arg, uint64_t parent, const char *name)
{
    struct vfuse_session *sess = arg;

    vfuse_notice_queue(
        &sess->notifier,
        vfuse_notice_new(FUSE_NOTIFY_INVAL_ENTRY, parent, 0, name));
}


/* The nodeid the kernel knows gfid by, or 0; t->lock held. */
static uint64_t
vfuse_nodeid_of_locked(struct vfuse_table *t, const vl_gfid_t *gfid)
{
    if (vl_gfid_is_root(gfid))
        return FUSE_ROOT_ID;
    return (uint64_t)(uintptr_t)vfuse_node_find_locked(t, gfid);
}


/* Drops the bridge's own caches of gfid and queues the kernel's. */
static void
vfuse_inval_object(struct vfuse_session *sess, const vl_gfid_t *gfid,
                   uint32_t flags)
{
    struct vfuse_table *t = &sess->table;
    uint64_t nodeid;

    if (vl_gfid_is_null(gfid))
        return;
    vfuse_pattr_store(t, gfid, NULL, 0);
    pthread_mutex_lock(&t->lock);
    nodeid = vfuse_nodeid_of_locked(t, gfid);
    pthread_mutex_unlock(&t->lock);
    if (nodeid == 0)
        return; /* the kernel does not know it */
    /* Another client may have set security.capability. */
    vfuse_node_set_flags(t, nodeid, 0, VFUSE_NODE_NO_CAP);
    vfuse_notice_queue(&sess->notifier,
                       vfuse_notice_new(FUSE_NOTIFY_INVAL_INODE, nodeid,
                                        (flags & VL_INVAL_DATA) ? 0 : -1,
                                        NULL));
}


static void
vfuse_inval_entry(struct vfuse_priv *priv, const vl_gfid_t *parent,
                  const char *name)
{
    struct vfuse_session *sess = priv->sess;
    struct vfuse_table *t = &sess->table;
    uint64_t nodeid;

    vl_inode_unref(vfuse_hint_take(t, parent, name, priv->gen));
    pthread_mutex_lock(&t->lock);
    nodeid = vfuse_nodeid_of_locked(t, parent);
    pthread_mutex_unlock(&t->lock);
    if (nodeid == 0)
        return;
    vfuse_notice_queue(
        &sess->notifier,
        vfuse_notice_new(FUSE_NOTIFY_INVAL_ENTRY, nodeid, 0, name));
}


/* Everything the kernel caches of this session, as far as we know it. */
static void
vfuse_inval_all(struct vfuse_session *sess)
{
    struct vfuse_table *t = &sess->table;
    struct vfuse_link local;
    struct vfuse_link *l;

    vfuse_list_init(&local);
    pthread_mutex_lock(&t->lock);
    t->root_pattr.until_ns = 0;
    for (l = t->nodes.next; l != &t->nodes; l = l->next) {
        struct vfuse_node *node = VFUSE_CONTAINER(l, struct vfuse_node, link);
        struct vfuse_notice *no = vfuse_notice_new(
            FUSE_NOTIFY_INVAL_INODE, (uint64_t)(uintptr_t)node, 0, NULL);

        node->pattr.until_ns = 0;
        node->flags &= ~VFUSE_NODE_NO_CAP;
        /* Without memory for it, counted as dropped when queued. */
        if (no != NULL)
            vfuse_list_add(local.prev, &no->link);
        else
            atomic_fetch_add(&sess->notifier.n_dropped, 1);
    }
    for (l = t->hint_age.next; l != &t->hint_age; l = l->next) {
        struct vfuse_hint *h = VFUSE_CONTAINER(l, struct vfuse_hint, age);
        uint64_t parent = vfuse_nodeid_of_locked(t, &h->parent);
        struct vfuse_notice *no =
            parent == 0
                ? NULL
                : vfuse_notice_new(FUSE_NOTIFY_INVAL_ENTRY, parent, 0, h->name);

        if (no != NULL)
            vfuse_list_add(local.prev, &no->link);
    }
    pthread_mutex_unlock(&t->lock);
    vfuse_notice_queue(
        &sess->notifier,
        vfuse_notice_new(FUSE_NOTIFY_INVAL_INODE, FUSE_ROOT_ID, 0, NULL));
    while (local.next != &local) {
        struct vfuse_notice *no =
            VFUSE_CONTAINER(local.next, struct vfuse_notice, link);

        vfuse_list_del(&no->link);
        vfuse_notice_queue(&sess->notifier, no);
    }
}


void
vfuse_notify_upcall(struct vfuse_priv *priv, const struct vl_upcall *up)
{
    struct vfuse_session *sess = priv->sess;

    if (sess == NULL)
        return;
    if (up->is_all) {
        atomic_fetch_add(&sess->notifier.n_all, 1);
        vfuse_inval_all(sess);
        return;
    }
    if (up->kind != VL_UPCALL_INVALIDATE)
        return;
    atomic_fetch_add(&sess->notifier.n_upcalls, 1);
    vfuse_inval_object(sess, &up->gfid, up->flags);
    if ((up->flags & VL_INVAL_ENTRY) && up->name != NULL) {
        vfuse_inval_object(sess, &up->parent, VL_INVAL_ATTR);
        vfuse_inval_entry(priv, &up->parent, up->name);
    }
}


/* ---- the notifier thread ---- */

/* Writes one notification; the kernel's ENOENT (it does not cache that
 * inode or name) is not an error. */
static void
vfuse_notice_write(struct vfuse_session *sess, const struct vfuse_notice *n)
{
    struct fuse_out_header hdr = {.unique = 0, .error = n->code};
    struct fuse_notify_inval_inode_out inode = {
        .ino = n->nodeid, .off = n->off, .len = 0};
    struct fuse_notify_inval_entry_out entry = {
        .parent = n->nodeid, .namelen = (uint32_t)n->name_len};
    struct iovec iov[3];
    int n_iov = 2;
    ssize_t rc;

    iov[0] = (struct iovec){&hdr, sizeof(hdr)};
    if (n->code == FUSE_NOTIFY_INVAL_INODE) {
        iov[1] = (struct iovec){&inode, sizeof(inode)};
    } else {
        iov[1] = (struct iovec){&entry, sizeof(entry)};
        iov[2] = (struct iovec){(void *)n->name, n->name_len + 1};
        n_iov = 3;
    }
    hdr.len = 0;
    for (int i = 0; i < n_iov; i++)
        hdr.len += (uint32_t)iov[i].iov_len;
    rc = writev(sess->fuse_fd, iov, n_iov);
    if (rc >= 0)
        atomic_fetch_add(&sess->notifier.n_sent, 1);
    else if (errno == ENOENT)
        atomic_fetch_add(&sess->notifier.n_unknown, 1);
    else if (errno != ENODEV)
        vl_glog(VFUSE_DOMAIN, VL_LOG_WARNING, "notify %d for %llu: %s", n->code,
                (unsigned long long)n->nodeid, strerror(errno));
}


static void *
vfuse_notifier_main(void *arg)
{
    struct vfuse_session *sess = arg;
    struct vfuse_notifier *nt = &sess->notifier;
    bool is_init_done;

    pthread_mutex_lock(&nt->lock);
    for (;;) {
        struct vfuse_notice *n;

        while (nt->n_queued == 0 && !nt->is_stopping)
            pthread_cond_wait(&nt->cond, &nt->lock);
        if (nt->is_stopping)
            break;
        n = VFUSE_CONTAINER(nt->queue.next, struct vfuse_notice, link);
        vfuse_list_del(&n->link);
        nt->n_queued--;
        pthread_mutex_unlock(&nt->lock);
        is_init_done = atomic_load(&sess->is_init_done);
        /* Before INIT the kernel knows no inode of ours. */
        if (is_init_done && !atomic_load(&sess->is_gone))
            vfuse_notice_write(sess, n);
        vl_free(n);
        pthread_mutex_lock(&nt->lock);
    }
    pthread_mutex_unlock(&nt->lock);
    return NULL;
}


int
vfuse_notifier_start(struct vfuse_session *sess)
{
    struct vfuse_notifier *nt = &sess->notifier;
    int rc;

    vfuse_list_init(&nt->queue);
    rc = pthread_mutex_init(&nt->lock, NULL);
    if (rc != 0)
        return -rc;
    rc = pthread_cond_init(&nt->cond, NULL);
    if (rc != 0) {
        pthread_mutex_destroy(&nt->lock);
        return -rc;
    }
    nt->is_started = true;
    rc = pthread_create(&nt->thread, NULL, vfuse_notifier_main, sess);
    if (rc != 0) {
        nt->is_started = false;
        pthread_cond_destroy(&nt->cond);
        pthread_mutex_destroy(&nt->lock);
        return -rc;
    }
    nt->is_initialized = true;
    return 0;
}


void
vfuse_notifier_stop(struct vfuse_session *sess)
{
    struct vfuse_notifier *nt = &sess->notifier;

    if (!nt->is_initialized)
        return;
    pthread_mutex_lock(&nt->lock);
    nt->is_stopping = true;
    nt->is_started = false; /* queue nothing more */
    pthread_cond_signal(&nt->cond);
    pthread_mutex_unlock(&nt->lock);
    pthread_join(nt->thread, NULL);
    while (nt->queue.next != &nt->queue) {
        struct vfuse_notice *n =
            VFUSE_CONTAINER(nt->queue.next, struct vfuse_notice, link);

        vfuse_list_del(&n->link);
        vl_free(n);
    }
    nt->n_queued = 0;
    pthread_cond_destroy(&nt->cond);
    pthread_mutex_destroy(&nt->lock);
    nt->is_initialized = false;
}


/* ---- the kernel's timeouts ---- */

uint64_t
vfuse_cache_timeout_ms(const struct vfuse_priv *priv, uint64_t conf_ms)
{
    int64_t ms;

    if (priv->md_cache == NULL)
        return conf_ms;
    ms = vl_md_cache_inval_timeout_ms(priv->md_cache);
    return ms < 0 ? conf_ms : (uint64_t)ms;
}


/* performance/md-cache in this graph, or NULL. */
vl_xlator_t *
vfuse_find_md_cache(const vl_graph_t *graph)
{
    for (size_t i = 0; i < graph->n_xls; i++)
        if (graph->xls[i]->cls == &xl_performance_md_cache)
            return graph->xls[i];
    return NULL;
}
