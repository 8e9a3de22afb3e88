/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * upcall-inval: the brick's half of cache invalidation (README.md "Cache
 * invalidation"): which client connections looked at which GFIDs, and
 * the VL_UPCALL_INVALIDATE messages that tell them when someone else
 * changed one.
 *
 * A client caches what a brick answered it (md-cache's attributes, the
 * kernel's attributes, names and pages, for up to md-cache-timeout).
 * Every answer that hands a client attributes or names notes the client
 * as a watcher of those GFIDs; every successful change tells the other
 * watchers of the changed object (and, for an entry op, of its parent
 * directory) before the change's own reply leaves the brick, so a client
 * that asks after the changer got its answer has heard of the change.
 *
 * What is noted: lookup (the object and its parent), stat, access,
 * readlink, getxattr, open, opendir, readdir (the directory, and with
 * plus every entry), and every change (the changer now caches its
 * answer). What is told: setattr, setxattr, removexattr (attributes);
 * write, fallocate, copy_file_range's destination (attributes and data);
 * mknod, mkdir, create, symlink, link, unlink, rmdir, rename (the name in
 * its directory, with the object: one message per changed name). XATTROP
 * is replicate's own bookkeeping and tells nobody.
 *
 * State:   inv->watches: GFID -> struct up_watch (its watchers, each with
 *          when it last looked), least recently noted first. A watcher
 *          older than cache-invalidation-timeout is dropped unseen (the
 *          client no longer caches what it saw); at the table's limit the
 *          least recently noted GFID is dropped and its watchers told
 *          now, as if it had changed (the registry cannot tell them
 *          later). Guarded by inv->lock, never held across a wind, an
 *          unwind or a notify.
 * Threads: any.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <glib.h>

#include "vol/vol.h"

#include "upcall.h"

/* A watcher is kept this much longer than cache-invalidation-timeout:
 * the client's and the kernel's timeouts start when the answer reaches
 * them, after the brick noted the watcher (a reply queued on a loaded
 * machine can take seconds). */
#define UP_WATCH_GRACE_S 2

/* Up to this many messages per op without a heap allocation. */
#define UP_SENDS_INLINE 8

struct up_watcher {
    uint64_t id;    /* client connection */
    int64_t seen_s; /* CLOCK_MONOTONIC seconds it last looked */
};

struct up_watch {
    vl_gfid_t gfid;        /* key */
    struct up_watch *prev; /* noted order: inv->oldest .. newest */
    struct up_watch *next;
    size_t n_watchers;
    size_t cap_watchers;
    struct up_watcher *watchers; /* owned */
};

struct up_inval {
    vl_xlator_t *xl;      /* borrowed; the upcall translator */
    pthread_mutex_t lock; /* guards everything below */
    GHashTable *watches;  /* vl_gfid_t * -> struct up_watch * (owned) */
    struct up_watch *oldest;
    struct up_watch *newest;
    bool is_enabled;    /* features.cache-invalidation */
    uint64_t timeout_s; /* cache-invalidation-timeout */
    uint64_t limit;     /* cache-invalidation-limit (GFIDs) */
    uint64_t n_noted;   /* counters for dump() */
    uint64_t n_sent;
    uint64_t n_expired;
    uint64_t n_evicted;
};

/* The messages to send, noted under the lock, sent after it. */
struct up_sends {
    size_t n;
    size_t cap;
    struct vl_upcall *v; /* inline or owned */
    struct vl_upcall inline_v[UP_SENDS_INLINE];
};

/* One change to tell: the object (may be null) and, for an entry op, the
 * name in its directory. */
struct up_change {
    const vl_gfid_t *gfid;   /* borrowed; NULL: unknown */
    const vl_gfid_t *parent; /* borrowed; with VL_INVAL_ENTRY */
    const char *name;        /* borrowed; with VL_INVAL_ENTRY */
    uint32_t flags;          /* VL_INVAL_* */
};

static int64_t
up_now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
}

static guint
up_watch_hash(gconstpointer p)
{
    const vl_gfid_t *g = p;
    guint h;

    memcpy(&h, g->bytes + 12, sizeof(h)); /* random bits of a UUID */
    return h;
}

static gboolean
up_watch_equal(gconstpointer a, gconstpointer b)
{
    return vl_gfid_equal(a, b);
}

static void
up_watch_free(gpointer p)
{
    struct up_watch *w = p;

    vl_free(w->watchers);
    vl_free(w);
}

static void
up_watch_unlink_locked(struct up_inval *inv, struct up_watch *w)
{
    if (w->prev != NULL)
        w->prev->next = w->next;
    else
        inv->oldest = w->next;
    if (w->next != NULL)
        w->next->prev = w->prev;
    else
        inv->newest = w->prev;
    w->prev = w->next = NULL;
}

static void
up_watch_link_newest_locked(struct up_inval *inv, struct up_watch *w)
{
    w->prev = inv->newest;
    w->next = NULL;
    if (inv->newest != NULL)
        inv->newest->next = w;
    else
        inv->oldest = w;
    inv->newest = w;
}

static void
up_watch_remove_locked(struct up_inval *inv, struct up_watch *w)
{
    up_watch_unlink_locked(inv, w);
    g_hash_table_remove(inv->watches, &w->gfid);
}

static void
up_sends_init(struct up_sends *s)
{
    s->n = 0;
    s->cap = UP_SENDS_INLINE;
    s->v = s->inline_v;
}

/* Notes a message for client id; -ENOMEM if it cannot be. */
static int
up_sends_add(struct up_inval *inv, struct up_sends *s, uint64_t id,
             const struct up_change *c)
{
    struct vl_upcall *u;

    if (s->n == s->cap) {
        size_t cap = s->cap * 2;
        struct vl_upcall *v = vl_malloc(inv->xl, cap * sizeof(*v), UP_MT_MISC);

        if (v == NULL)
            return -ENOMEM;
        memcpy(v, s->v, s->n * sizeof(*v));
        if (s->v != s->inline_v)
            vl_free(s->v);
        s->v = v;
        s->cap = cap;
    }
    u = &s->v[s->n++];
    *u = (struct vl_upcall){
        .client_id = id, .kind = VL_UPCALL_INVALIDATE, .flags = c->flags};
    if (c->gfid != NULL)
        u->gfid = *c->gfid;
    if (c->flags & VL_INVAL_ENTRY) {
        u->parent = *c->parent;
        u->name = c->name;
    }
    return 0;
}

/* Whether a message for id about the same change is noted already (a
 * client watching both the object and its directory hears once). */
static bool
up_sends_has(const struct up_sends *s, size_t from, uint64_t id)
{
    for (size_t i = from; i < s->n; i++)
        if (s->v[i].client_id == id)
            return true;
    return false;
}

/* Sends the noted messages, outside the lock. */
static void
up_sends_flush(struct up_inval *inv, struct up_sends *s)
{
    for (size_t i = 0; i < s->n; i++)
        vl_notify_parents_data(inv->xl, VL_EV_UPCALL, &s->v[i]);
    if (s->v != s->inline_v)
        vl_free(s->v);
    s->n = 0;
}

/* Notes in s a message about c for each live watcher of gfid but
 * `except` (the changer) and the ones noted since index from; expired
 * watchers are dropped. */
static void
up_tell_watchers_locked(struct up_inval *inv, struct up_watch *w,
                        uint64_t except, const struct up_change *c,
                        struct up_sends *s, size_t from, int64_t now)
{
    size_t keep = 0;

    for (size_t i = 0; i < w->n_watchers; i++) {
        struct up_watcher *wr = &w->watchers[i];

        if (now - wr->seen_s
            > (int64_t)inv->timeout_s + UP_WATCH_GRACE_S) {
            inv->n_expired++;
            continue;
        }
        /* Kept even when its message cannot be noted (ENOMEM): it
         * still caches, and the next change tells it. */
        w->watchers[keep++] = *wr;
        if (wr->id == except || up_sends_has(s, from, wr->id))
            continue;
        if (up_sends_add(inv, s, wr->id, c) == 0)
            inv->n_sent++;
    }
    w->n_watchers = keep;
}

/* Notes in s what c changed, for the watchers of its object and of its
 * directory other than the changer. */
static void
up_change_locked(struct up_inval *inv, uint64_t except,
                 const struct up_change *c, struct up_sends *s, int64_t now)
{
    size_t from = s->n;
    struct up_watch *w;

    if (c->gfid != NULL && !vl_gfid_is_null(c->gfid)) {
        w = g_hash_table_lookup(inv->watches, c->gfid);
        if (w != NULL)
            up_tell_watchers_locked(inv, w, except, c, s, from, now);
    }
    if (c->flags & VL_INVAL_ENTRY) {
        w = g_hash_table_lookup(inv->watches, c->parent);
        if (w != NULL)
            up_tell_watchers_locked(inv, w, except, c, s, from, now);
    }
}

/* Makes room for one more GFID: the least recently noted go, their
 * watchers told now (s). */
static void
up_evict_locked(struct up_inval *inv, struct up_sends *s, int64_t now)
{
    while (inv->oldest != NULL
           && g_hash_table_size(inv->watches) >= inv->limit) {
        struct up_watch *w = inv->oldest;
        struct up_change c = {.gfid = &w->gfid,
                              .flags = VL_INVAL_ATTR | VL_INVAL_DATA};

        up_tell_watchers_locked(inv, w, 0, &c, s, s->n, now);
        up_watch_remove_locked(inv, w);
        inv->n_evicted++;
    }
}

/* Notes client id as a watcher of gfid, now. Without memory for it the
 * registry would miss a client that caches: the GFID is then dropped
 * with its watchers told (s), and id is told at once. */
static void
up_note_locked(struct up_inval *inv, const vl_gfid_t *gfid, uint64_t id,
               struct up_sends *s, int64_t now)
{
    struct up_watch *w;
    struct up_change c = {.gfid = gfid, .flags = VL_INVAL_ATTR | VL_INVAL_DATA};

    if (vl_gfid_is_null(gfid))
        return;
    w = g_hash_table_lookup(inv->watches, gfid);
    if (w == NULL) {
        up_evict_locked(inv, s, now);
        w = vl_calloc(inv->xl, 1, sizeof(*w), UP_MT_WATCH);
        if (w == NULL) {
            (void)up_sends_add(inv, s, id, &c);
            return;
        }
        w->gfid = *gfid;
        g_hash_table_insert(inv->watches, &w->gfid, w);
    } else {
        up_watch_unlink_locked(inv, w);
    }
    up_watch_link_newest_locked(inv, w);
    for (size_t i = 0; i < w->n_watchers; i++)
        if (w->watchers[i].id == id) {
            w->watchers[i].seen_s = now;
            return;
        }
    if (w->n_watchers == w->cap_watchers) {
        size_t cap = w->cap_watchers == 0 ? 2 : w->cap_watchers * 2;
        struct up_watcher *v = vl_realloc(w->watchers, cap * sizeof(*v));

        if (v == NULL) {
            up_tell_watchers_locked(inv, w, 0, &c, s, s->n, now);
            up_watch_remove_locked(inv, w);
            (void)up_sends_add(inv, s, id, &c);
            return;
        }
        w->watchers = v;
        w->cap_watchers = cap;
    }
    w->watchers[w->n_watchers++] = (struct up_watcher){id, now};
    inv->n_noted++;
}

/* The object a fop addresses: its fd's inode, its loc's, or (lookup)
 * the one its answer r (NULL: none yet) found. NULL when unknown. */
static const vl_gfid_t *
up_object(const struct vl_loc *loc, const vl_fd_t *fd, const vl_req_t *r)
{
    if (fd != NULL && !vl_gfid_is_null(&fd->inode->gfid))
        return &fd->inode->gfid;
    if (loc != NULL && loc->inode != NULL
        && !vl_gfid_is_null(&loc->inode->gfid))
        return &loc->inode->gfid;
    if (r != NULL && !vl_gfid_is_null(&r->reply.iatt.gfid))
        return &r->reply.iatt.gfid;
    return NULL;
}

static const vl_gfid_t *
up_inode_gfid(const vl_inode_t *in)
{
    return in != NULL && !vl_gfid_is_null(&in->gfid) ? &in->gfid : NULL;
}

/* The changes an op made (at most 2); its n. */
static size_t
up_changes(const vl_req_t *req, const vl_req_t *r, struct up_change *c)
{
    const union vl_fop_args *a = &req->args;
    const uint32_t attr_data = VL_INVAL_ATTR | VL_INVAL_DATA;
    const struct vl_loc *l = NULL;
    const vl_gfid_t *made = NULL;

    switch (req->op) {
    case VL_FOP_SETATTR:
        c[0] = (struct up_change){up_object(&a->setattr.loc, a->setattr.fd, r),
                                  NULL, NULL, attr_data};
        return 1;
    case VL_FOP_SETXATTR:
        c[0] = (struct up_change){up_object(&a->setxattr.loc, NULL, r), NULL,
                                  NULL, VL_INVAL_ATTR};
        return 1;
    case VL_FOP_REMOVEXATTR:
        c[0] = (struct up_change){up_object(&a->removexattr.loc, NULL, r), NULL,
                                  NULL, VL_INVAL_ATTR};
        return 1;
    case VL_FOP_WRITE:
        c[0] = (struct up_change){up_object(NULL, a->write.fd, r), NULL, NULL,
                                  attr_data};
        return 1;
    case VL_FOP_FALLOCATE:
        c[0] = (struct up_change){up_object(NULL, a->fallocate.fd, r), NULL,
                                  NULL, attr_data};
        return 1;
    case VL_FOP_COPY_FILE_RANGE:
        c[0] = (struct up_change){up_object(NULL, a->copy_file_range.fd_out, r),
                                  NULL, NULL, attr_data};
        return 1;
    case VL_FOP_MKNOD:
        l = &a->mknod.loc;
        made = &a->mknod.gfid;
        break;
    case VL_FOP_MKDIR:
        l = &a->mkdir.loc;
        made = &a->mkdir.gfid;
        break;
    case VL_FOP_CREATE:
        l = &a->create.loc;
        made = &a->create.gfid;
        break;
    case VL_FOP_SYMLINK:
        l = &a->symlink.loc;
        made = &a->symlink.gfid;
        break;
    case VL_FOP_LINK:
        l = &a->link.newloc;
        made = up_inode_gfid(a->link.oldloc.inode); /* its nlink changed */
        break;
    case VL_FOP_UNLINK:
        l = &a->unlink.loc;
        made = up_inode_gfid(l->inode);
        break;
    case VL_FOP_RMDIR:
        l = &a->rmdir.loc;
        made = up_inode_gfid(l->inode);
        break;
    case VL_FOP_RENAME:
        c[0] = (struct up_change){up_inode_gfid(a->rename.oldloc.inode),
                                  up_inode_gfid(a->rename.oldloc.parent),
                                  a->rename.oldloc.name,
                                  VL_INVAL_ATTR | VL_INVAL_ENTRY};
        c[1] = (struct up_change){up_inode_gfid(a->rename.newloc.inode),
                                  up_inode_gfid(a->rename.newloc.parent),
                                  a->rename.newloc.name,
                                  VL_INVAL_ATTR | VL_INVAL_ENTRY};
        return c[0].parent != NULL && c[1].parent != NULL ? 2 : 0;
    default:
        return 0;
    }
    if (up_inode_gfid(l->parent) == NULL || l->name == NULL)
        return 0;
    c[0] = (struct up_change){made, &l->parent->gfid, l->name,
                              VL_INVAL_ATTR | VL_INVAL_ENTRY};
    return 1;
}

/* Notes the GFIDs whose attributes or names the answer r gave req's
 * client; with r NULL, before the wind, the ones known already, so that
 * a change that runs while req reads is told to its client (whose
 * md-cache then does not keep the answer). */
static void
up_note_answer_locked(struct up_inval *inv, const vl_req_t *req,
                      const vl_req_t *r, struct up_sends *s, int64_t now)
{
    const union vl_fop_args *a = &req->args;
    uint64_t id = req->caller.client_id;
    const struct vl_dirent_list *list = NULL;
    const vl_gfid_t *g = NULL;
    const struct vl_loc *l = NULL;
    const struct vl_loc *l2 = NULL;

    switch (req->op) {
    case VL_FOP_LOOKUP:
        /* What the name names now; before the answer, what it named. */
        g = r != NULL ? up_object(NULL, NULL, r)
                      : up_inode_gfid(a->lookup.loc.inode);
        if (up_inode_gfid(a->lookup.loc.parent) != NULL)
            up_note_locked(inv, &a->lookup.loc.parent->gfid, id, s, now);
        break;
    case VL_FOP_STAT:
        g = up_object(&a->stat.loc, a->stat.fd, r);
        break;
    case VL_FOP_ACCESS:
        g = up_object(&a->access.loc, NULL, r);
        break;
    case VL_FOP_READLINK:
        g = up_object(&a->readlink.loc, NULL, r);
        break;
    case VL_FOP_GETXATTR:
        g = up_object(&a->getxattr.loc, NULL, r);
        break;
    case VL_FOP_OPEN:
        g = up_object(&a->open.loc, a->open.fd, r);
        break;
    case VL_FOP_OPENDIR:
        g = up_object(&a->opendir.loc, a->opendir.fd, r);
        if (r != NULL && r->reply.has_listing)
            list = &r->reply.entries;
        break;
    case VL_FOP_READDIR:
        g = up_object(NULL, a->readdir.fd, r);
        if (r != NULL)
            list = &r->reply.entries;
        break;
    case VL_FOP_SETATTR:
        g = up_object(&a->setattr.loc, a->setattr.fd, r);
        break;
    case VL_FOP_SETXATTR:
        g = up_object(&a->setxattr.loc, NULL, r);
        break;
    case VL_FOP_REMOVEXATTR:
        g = up_object(&a->removexattr.loc, NULL, r);
        break;
    case VL_FOP_WRITE:
        g = up_object(NULL, a->write.fd, r);
        break;
    case VL_FOP_FALLOCATE:
        g = up_object(NULL, a->fallocate.fd, r);
        break;
    default:
        /* Entry ops: the changer caches the directories and the object. */
        if (!vl_req_entry_locs(req, &l, &l2))
            return;
        for (const struct vl_loc *e = l; e != NULL; e = e == l ? l2 : NULL)
            if (up_inode_gfid(e->parent) != NULL)
                up_note_locked(inv, &e->parent->gfid, id, s, now);
        g = up_object(NULL, NULL, r);
        break;
    }
    if (g != NULL)
        up_note_locked(inv, g, id, s, now);
    for (size_t i = 0; list != NULL && i < list->n; i++)
        if (list->ents[i].has_iatt)
            up_note_locked(inv, &list->ents[i].iatt.gfid, id, s, now);
}

void
up_inval_before(struct up_inval *inv, const vl_req_t *req)
{
    struct up_sends s;

    if (req->caller.client_id == 0)
        return;
    up_sends_init(&s);
    pthread_mutex_lock(&inv->lock);
    if (inv->is_enabled)
        up_note_answer_locked(inv, req, NULL, &s, up_now_s());
    pthread_mutex_unlock(&inv->lock);
    up_sends_flush(inv, &s); /* evictions */
}

void
up_inval_after(struct up_inval *inv, const vl_req_t *req, const vl_req_t *r)
{
    uint64_t id = req->caller.client_id;
    struct up_change c[2];
    struct up_sends s;
    size_t n_changes;
    int64_t now;

    /* Client 0 is the brick's own work (no connection to tell). */
    if (r->status != 0 || id == 0)
        return;
    up_sends_init(&s);
    now = up_now_s();
    pthread_mutex_lock(&inv->lock);
    if (inv->is_enabled) {
        n_changes = up_changes(req, r, c);
        for (size_t i = 0; i < n_changes; i++)
            up_change_locked(inv, id, &c[i], &s, now);
        up_note_answer_locked(inv, req, r, &s, now);
    }
    pthread_mutex_unlock(&inv->lock);
    /* Watchers hear of the change before its maker does. */
    up_sends_flush(inv, &s);
}

static void
up_inval_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;

    up_inval_after(up_inval_of(req->xl), req, r);
    vl_reply_move(req, r);
    vl_unwind(req, r->status);
}

void
up_inval_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct up_inval *inv = up_inval_of(xl);
    bool is_enabled;
    vl_req_t *r;

    pthread_mutex_lock(&inv->lock);
    is_enabled = inv->is_enabled;
    pthread_mutex_unlock(&inv->lock);
    if (!is_enabled || req->caller.client_id == 0) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    up_inval_before(inv, req);
    r = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (r == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(r, up_inval_done, req);
}

void
up_inval_client_gone(struct up_inval *inv, uint64_t id)
{
    GHashTableIter it;
    gpointer key, value;

    pthread_mutex_lock(&inv->lock);
    g_hash_table_iter_init(&it, inv->watches);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        struct up_watch *w = value;
        size_t keep = 0;

        for (size_t i = 0; i < w->n_watchers; i++)
            if (w->watchers[i].id != id)
                w->watchers[keep++] = w->watchers[i];
        w->n_watchers = keep;
        if (keep == 0) {
            up_watch_unlink_locked(inv, w);
            g_hash_table_iter_remove(&it);
        }
    }
    pthread_mutex_unlock(&inv->lock);
}

int
up_inval_new(vl_xlator_t *xl, struct up_inval **out)
{
    struct up_inval *inv;
    int rc;

    inv = vl_calloc(xl, 1, sizeof(*inv), UP_MT_MISC);
    if (inv == NULL)
        return -ENOMEM;
    rc = pthread_mutex_init(&inv->lock, NULL);
    if (rc != 0) {
        vl_free(inv);
        return -rc;
    }
    inv->xl = xl;
    inv->watches = g_hash_table_new_full(up_watch_hash, up_watch_equal, NULL,
                                         up_watch_free);
    *out = inv;
    return 0;
}

void
up_inval_free(struct up_inval *inv)
{
    if (inv == NULL)
        return;
    g_hash_table_destroy(inv->watches);
    pthread_mutex_destroy(&inv->lock);
    vl_free(inv);
}

void
up_inval_configure(struct up_inval *inv, bool is_enabled, uint64_t timeout_s,
                   uint64_t limit)
{
    pthread_mutex_lock(&inv->lock);
    inv->is_enabled = is_enabled;
    inv->timeout_s = timeout_s;
    inv->limit = limit; /* applies at the next new GFID */
    if (!is_enabled) {
        g_hash_table_remove_all(inv->watches);
        inv->oldest = inv->newest = NULL;
    }
    pthread_mutex_unlock(&inv->lock);
}

void
up_inval_dump(struct up_inval *inv, FILE *out)
{
    pthread_mutex_lock(&inv->lock);
    fprintf(out, "cache_invalidation=%s\n", inv->is_enabled ? "on" : "off");
    fprintf(out, "watched_gfids=%u\n", g_hash_table_size(inv->watches));
    fprintf(out, "watch_limit=%llu\n", (unsigned long long)inv->limit);
    fprintf(out, "watches_noted=%llu\n", (unsigned long long)inv->n_noted);
    fprintf(out, "invalidations_sent=%llu\n", (unsigned long long)inv->n_sent);
    fprintf(out, "watches_expired=%llu\n", (unsigned long long)inv->n_expired);
    fprintf(out, "watches_evicted=%llu\n", (unsigned long long)inv->n_evicted);
    pthread_mutex_unlock(&inv->lock);
}
