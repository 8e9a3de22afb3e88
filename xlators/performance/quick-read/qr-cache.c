/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qr-cache: quick-read's content cache, one copy per inode (GFID).
 *
 * A copy is valid while the attributes it came with (GFID, size, mtime
 * and ctime with nanoseconds) are what later lookups and stats report;
 * any other answer drops it. It is served only within cache-timeout of
 * its last validation. The total is bounded by cache-size: each copy is
 * charged the whole buffer it keeps alive (the reply record it came in,
 * or a copy when that record is much larger than the content), and the
 * least recently validated copies are evicted first.
 * It also keeps count of how many copies listings brought and how many
 * of them an open used, so that quick-read stops asking listings for
 * content while they go unused (ls -lR, find: each content read can be a
 * disk read on the brick) and asks again once files are read.
 * Threads: any; priv->lock guards every struct qr_inode and the LRU.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "quick-read.h"


uint64_t
qr_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}


vl_inode_t *
qr_inode_for(vl_inode_t *fallback, const vl_gfid_t *gfid)
{
    vl_inode_t *in = NULL;

    if (fallback == NULL)
        return NULL;
    if (!vl_gfid_is_null(gfid))
        in = vl_inode_find(fallback->table, gfid);
    return in != NULL ? in : vl_inode_ref(fallback);
}


static bool
qr_iatt_same(const struct vl_iatt *a, const struct vl_iatt *b)
{
    return vl_gfid_equal(&a->gfid, &b->gfid) && a->size == b->size
           && a->mtime == b->mtime && a->mtime_ns == b->mtime_ns
           && a->ctime == b->ctime && a->ctime_ns == b->ctime_ns;
}


static void
qr_lru_unlink_locked(struct qr_priv *priv, struct qr_inode *qi)
{
    if (qi->prev != NULL)
        qi->prev->next = qi->next;
    else
        priv->lru_head = qi->next;
    if (qi->next != NULL)
        qi->next->prev = qi->prev;
    else
        priv->lru_tail = qi->prev;
    qi->prev = qi->next = NULL;
}


static void
qr_lru_push_locked(struct qr_priv *priv, struct qr_inode *qi)
{
    qi->prev = NULL;
    qi->next = priv->lru_head;
    if (priv->lru_head != NULL)
        priv->lru_head->prev = qi;
    priv->lru_head = qi;
    if (priv->lru_tail == NULL)
        priv->lru_tail = qi;
}


/* Empties qi; returns the buffer for the caller to unref outside the
 * lock. */
static vl_buf_t *
qr_forget_locked(struct qr_priv *priv, struct qr_inode *qi)
{
    vl_buf_t *buf = qi->buf;

    if (buf == NULL)
        return NULL;
    qr_lru_unlink_locked(priv, qi);
    priv->bytes -= qi->charge;
    priv->n_files--;
    qi->buf = NULL;
    qi->data = NULL;
    qi->len = qi->charge = 0;
    return buf;
}


/* What a kept buffer costs: its data is page-aligned, so whole pages,
 * plus the buffer's header. */
static size_t
qr_charge(const vl_buf_t *buf)
{
    return ((buf->size + 4095) & ~(size_t)4095) + sizeof(*buf);
}


/* The buffer to keep for len bytes at data inside buf: buf itself unless
 * it is much larger than the content (then a copy). NULL on ENOMEM. */
static vl_buf_t *
qr_keep_buf(vl_buf_t *buf, const char *data, size_t len,
            const char **out_data)
{
    vl_buf_t *copy;

    if (buf->size <= 2 * len + 4096) {
        *out_data = data;
        return vl_buf_ref(buf);
    }
    copy = vl_buf_new(len > 0 ? len : 1);
    if (copy == NULL)
        return NULL;
    memcpy(copy->data, data, len);
    *out_data = copy->data;
    return copy;
}


void
qr_cache_update(vl_xlator_t *xl, vl_inode_t *inode,
                const struct vl_iatt *iatt, vl_buf_t *buf, const char *data,
                size_t len)
{
    struct qr_priv *priv = xl->priv;
    struct qr_inode *qi;
    vl_buf_t *old = NULL, *keep = NULL, *evicted = NULL;
    const char *kdata = NULL;

    if (inode == NULL || (qi = vl_inode_ctx(inode, xl)) == NULL)
        return;
    if (buf != NULL && S_ISREG(iatt->mode) && len == iatt->size)
        keep = qr_keep_buf(buf, data, len, &kdata);
    pthread_mutex_lock(&priv->lock);
    qi->is_large = S_ISREG(iatt->mode) && iatt->size > priv->max_file_size;
    if (keep != NULL
        && (len > priv->max_file_size
            || qr_charge(keep) > priv->cache_size)) {
        evicted = keep; /* not cacheable under the current limits */
        keep = NULL;
    }
    if (keep == NULL) {
        /* Attributes only: they confirm or void what is cached. */
        if (qi->buf != NULL && qr_iatt_same(&qi->iatt, iatt)) {
            qi->validated_ms = qr_now_ms();
            qr_lru_unlink_locked(priv, qi);
            qr_lru_push_locked(priv, qi);
        } else if (qi->buf != NULL) {
            old = qr_forget_locked(priv, qi);
            atomic_fetch_add(&priv->drops, 1);
        }
        pthread_mutex_unlock(&priv->lock);
        vl_buf_unref(old);
        vl_buf_unref(evicted);
        return;
    }
    old = qr_forget_locked(priv, qi);
    qi->is_rdp_unread = false;
    qi->buf = keep;
    qi->data = kdata;
    qi->len = len;
    qi->charge = qr_charge(keep);
    qi->iatt = *iatt;
    qi->validated_ms = qr_now_ms();
    qr_lru_push_locked(priv, qi);
    priv->bytes += qi->charge;
    priv->n_files++;
    atomic_fetch_add(&priv->fills, 1);
    /* Evict from the cold end; the new copy fits alone (checked above). */
    while (priv->bytes > priv->cache_size && priv->lru_tail != qi) {
        vl_buf_t *b = qr_forget_locked(priv, priv->lru_tail);

        atomic_fetch_add(&priv->evictions, 1);
        pthread_mutex_unlock(&priv->lock);
        vl_buf_unref(b);
        pthread_mutex_lock(&priv->lock);
    }
    pthread_mutex_unlock(&priv->lock);
    vl_buf_unref(old);
}


void
qr_cache_note_rdp_fill(vl_xlator_t *xl, vl_inode_t *inode)
{
    struct qr_priv *priv = xl->priv;
    struct qr_inode *qi;

    if (inode == NULL || (qi = vl_inode_ctx(inode, xl)) == NULL)
        return;
    pthread_mutex_lock(&priv->lock);
    if (qi->buf != NULL)
        qi->is_rdp_unread = true;
    pthread_mutex_unlock(&priv->lock);
}


void
qr_cache_note_use(vl_xlator_t *xl, vl_inode_t *inode)
{
    struct qr_priv *priv = xl->priv;
    struct qr_inode *qi;
    bool is_used = false;

    if (inode == NULL || (qi = vl_inode_ctx(inode, xl)) == NULL)
        return;
    pthread_mutex_lock(&priv->lock);
    if (qi->is_rdp_unread) {
        qi->is_rdp_unread = false;
        is_used = true;
    }
    pthread_mutex_unlock(&priv->lock);
    if (is_used)
        atomic_fetch_add(&priv->rdp_used, 1);
}


/* Remembers pid as a process that reads small files it finds: its
 * listings ask for content (qr_rdp_wanted). Takes its slot, a free one,
 * or the oldest. */
void
qr_rdp_note_reader(vl_xlator_t *xl, uint32_t pid)
{
    struct qr_priv *priv = xl->priv;
    struct qr_rdp_reader *slot = &priv->rdp_readers[0];
    uint64_t now = qr_now_ms();

    if (pid == 0)
        return;
    pthread_mutex_lock(&priv->lock);
    for (size_t i = 0; i < QR_RDP_READERS; i++) {
        struct qr_rdp_reader *r = &priv->rdp_readers[i];

        if (r->pid == pid) {
            slot = r;
            break;
        }
        if (slot->pid != 0 && (r->pid == 0 || r->ms < slot->ms))
            slot = r;
    }
    slot->pid = pid;
    slot->ms = now;
    pthread_mutex_unlock(&priv->lock);
}


/* Whether a readdirplus of pid's should carry content: pid opened a small
 * file from a copy within QR_RDP_READER_MS. */
bool
qr_rdp_wanted(vl_xlator_t *xl, uint32_t pid)
{
    struct qr_priv *priv = xl->priv;
    uint64_t now = qr_now_ms();
    bool is_wanted = false;

    pthread_mutex_lock(&priv->lock);
    for (size_t i = 0; i < QR_RDP_READERS && pid != 0; i++) {
        const struct qr_rdp_reader *r = &priv->rdp_readers[i];

        if (r->pid == pid) {
            is_wanted = now - r->ms < QR_RDP_READER_MS;
            break;
        }
    }
    pthread_mutex_unlock(&priv->lock);
    if (!is_wanted)
        atomic_fetch_add(&priv->rdp_skipped, 1);
    return is_wanted;
}


void
qr_cache_drop(vl_xlator_t *xl, vl_inode_t *inode)
{
    struct qr_priv *priv = xl->priv;
    struct qr_inode *qi;
    vl_buf_t *old;

    if (inode == NULL || priv == NULL
        || (qi = vl_inode_ctx(inode, xl)) == NULL)
        return;
    pthread_mutex_lock(&priv->lock);
    old = qr_forget_locked(priv, qi);
    pthread_mutex_unlock(&priv->lock);
    if (old != NULL)
        atomic_fetch_add(&priv->drops, 1);
    vl_buf_unref(old);
}


/* Called with priv->lock held. */
static bool
qr_fresh_locked(struct qr_priv *priv, const struct qr_inode *qi)
{
    return qi->buf != NULL
           && qr_now_ms() - qi->validated_ms < priv->timeout_ms;
}


bool
qr_cache_has(vl_xlator_t *xl, vl_inode_t *inode, bool fresh,
             struct vl_iatt *iatt)
{
    struct qr_priv *priv = xl->priv;
    struct qr_inode *qi;
    bool has;

    if (inode == NULL || (qi = vl_inode_ctx(inode, xl)) == NULL)
        return false;
    pthread_mutex_lock(&priv->lock);
    has = fresh ? qr_fresh_locked(priv, qi) : qi->buf != NULL;
    if (has && iatt != NULL)
        *iatt = qi->iatt;
    pthread_mutex_unlock(&priv->lock);
    return has;
}


bool
qr_cache_is_large(vl_xlator_t *xl, vl_inode_t *inode)
{
    struct qr_priv *priv = xl->priv;
    struct qr_inode *qi;
    bool is_large;

    if (inode == NULL || (qi = vl_inode_ctx(inode, xl)) == NULL)
        return false;
    pthread_mutex_lock(&priv->lock);
    is_large = qi->is_large;
    pthread_mutex_unlock(&priv->lock);
    return is_large;
}


bool
qr_cache_read(vl_xlator_t *xl, vl_inode_t *inode, size_t size, off_t offset,
              struct vl_reply *reply)
{
    struct qr_priv *priv = xl->priv;
    struct qr_inode *qi;
    size_t n = 0;

    if (inode == NULL || offset < 0
        || (qi = vl_inode_ctx(inode, xl)) == NULL)
        return false;
    pthread_mutex_lock(&priv->lock);
    if (!qr_fresh_locked(priv, qi)) {
        pthread_mutex_unlock(&priv->lock);
        return false;
    }
    /* As a brick answers: bytes up to EOF, none at or past it. */
    if ((uint64_t)offset < qi->len)
        n = qi->len - (size_t)offset < size ? qi->len - (size_t)offset
                                            : size;
    vl_reply_clear(reply);
    reply->buf = vl_buf_ref(qi->buf);
    reply->data = qi->data + (n > 0 ? (size_t)offset : 0);
    reply->count = (int64_t)n;
    reply->iatt = qi->iatt;
    pthread_mutex_unlock(&priv->lock);
    return true;
}


void
qr_cache_shrink(vl_xlator_t *xl)
{
    struct qr_priv *priv = xl->priv;

    pthread_mutex_lock(&priv->lock);
    while (priv->lru_tail != NULL && priv->bytes > priv->cache_size) {
        vl_buf_t *b = qr_forget_locked(priv, priv->lru_tail);

        atomic_fetch_add(&priv->evictions, 1);
        pthread_mutex_unlock(&priv->lock);
        vl_buf_unref(b);
        pthread_mutex_lock(&priv->lock);
    }
    pthread_mutex_unlock(&priv->lock);
}


void
qr_cache_clear(vl_xlator_t *xl)
{
    struct qr_priv *priv = xl->priv;

    pthread_mutex_lock(&priv->lock);
    while (priv->lru_head != NULL) {
        vl_buf_t *b = qr_forget_locked(priv, priv->lru_head);

        pthread_mutex_unlock(&priv->lock);
        vl_buf_unref(b);
        pthread_mutex_lock(&priv->lock);
    }
    pthread_mutex_unlock(&priv->lock);
}
