/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * upcall: the brick's registry of directory leases (README.md).
 *
 * A client that makes a directory with mkdir's want_lease holds a lease on
 * it from this brick: the directory is empty then, and whatever anyone
 * else later does to its entries here (create, mknod, mkdir, symlink,
 * link, unlink, rmdir, rename in or out) first breaks the lease: a
 * VL_EV_UPCALL goes up for protocol/server to send the holder, and the
 * lease is gone. With it the client's performance/nl-cache answers
 * lookups of names it knows are absent without asking.
 *
 * A lease is registered before the mkdir is wound, so that an op of
 * another client in the new directory, which can only run once the
 * directory exists, always finds it and breaks it. The break is sent
 * before the op's own reply.
 *
 * Cache invalidation (which client looked at what, told when another
 * changes it) is upcall-inval.c's; the entry fops here call into it.
 *
 * Intercepts: mkdir, mknod, create, symlink, link, unlink, rmdir, rename;
 *             for upcall-inval.c lookup, stat, access, readlink,
 *             getxattr, open, opendir, readdir, setattr, setxattr,
 *             removexattr, write, fallocate, copy_file_range.
 * State:      priv->leases: GFID -> struct up_lease (its holders' client
 *             ids), in least recently granted order; at lease-limit the
 *             oldest is broken to make room. Guarded by priv->lock, never
 *             held across a wind, an unwind or a notify.
 * Events:     VL_EV_CLIENT_DISCONNECT drops that client's leases and
 *             watches.
 * Threads:    any.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "vol/vol.h"

#include "builtin.h"
#include "upcall.h"

static const char *const up_mem_types[] = {"misc", "lease", "watch", NULL};

/* Up to this many holders are told per op without a heap allocation. */
#define UP_BREAKS_INLINE 8

struct up_conf {
    uint64_t lease_limit; /* directories leased at once */
    bool is_inval;        /* cache-invalidation */
    uint64_t inval_timeout_s; /* cache-invalidation-timeout */
    uint64_t inval_limit; /* cache-invalidation-limit */
};

struct up_lease {
    vl_gfid_t gfid;         /* key */
    struct up_lease *prev;  /* grant order: priv->oldest .. newest */
    struct up_lease *next;
    size_t n_holders;
    size_t cap_holders;
    uint64_t *holders;      /* owned; client ids */
};

struct up_priv {
    pthread_mutex_t lock;
    GHashTable *leases;     /* vl_gfid_t * -> struct up_lease * (owned) */
    struct up_lease *oldest;
    struct up_lease *newest;
    uint64_t lease_limit;   /* copy of the option, under lock */
    uint64_t n_granted;     /* counters for dump() */
    uint64_t n_broken;
    uint64_t n_evicted;
    struct up_inval *inval; /* owned; cache invalidation, own lock */
};

/* The holders to tell, noted under the lock, told after it. */
struct up_breaks {
    size_t n;
    size_t cap;
    struct vl_upcall *v;                   /* inline or owned */
    struct vl_upcall inline_v[UP_BREAKS_INLINE];
};


static guint
up_gfid_hash(gconstpointer p)
{
    const vl_gfid_t *g = p;
    guint h;

    memcpy(&h, g->bytes + 12, sizeof(h)); /* random bits of a UUID */
    return h;
}


static gboolean
up_gfid_equal(gconstpointer a, gconstpointer b)
{
    return vl_gfid_equal(a, b);
}


static void
up_lease_free(gpointer p)
{
    struct up_lease *l = p;

    vl_free(l->holders);
    vl_free(l);
}


static void
up_unlink_locked(struct up_priv *priv, struct up_lease *l)
{
    if (l->prev != NULL)
        l->prev->next = l->next;
    else
        priv->oldest = l->next;
    if (l->next != NULL)
        l->next->prev = l->prev;
    else
        priv->newest = l->prev;
    l->prev = l->next = NULL;
}


static void
up_breaks_init(struct up_breaks *b)
{
    b->n = 0;
    b->cap = UP_BREAKS_INLINE;
    b->v = b->inline_v;
}


/* Notes that holder id of gfid must be told; -ENOMEM if it cannot be
 * (then its lease is kept: a lease the holder believes in must exist). */
static int
up_breaks_add(vl_xlator_t *xl, struct up_breaks *b, const vl_gfid_t *gfid,
              uint64_t id)
{
    if (b->n == b->cap) {
        size_t cap = b->cap * 2;
        struct vl_upcall *v = vl_malloc(xl, cap * sizeof(*v), UP_MT_MISC);

        if (v == NULL)
            return -ENOMEM;
        memcpy(v, b->v, b->n * sizeof(*v));
        if (b->v != b->inline_v)
            vl_free(b->v);
        b->v = v;
        b->cap = cap;
    }
    b->v[b->n++] = (struct vl_upcall){.gfid = *gfid, .client_id = id};
    return 0;
}


/* Takes every holder of gfid except `except` (0: nobody is spared) off
 * its lease, noting them in b; the lease goes when it has no holder
 * left. */
static void
up_break_locked(vl_xlator_t *xl, struct up_priv *priv, const vl_gfid_t *gfid,
                uint64_t except, struct up_breaks *b)
{
    struct up_lease *l = g_hash_table_lookup(priv->leases, gfid);
    size_t keep = 0;

    if (l == NULL)
        return;
    for (size_t i = 0; i < l->n_holders; i++) {
        if (l->holders[i] == except
            || up_breaks_add(xl, b, gfid, l->holders[i]) != 0)
            l->holders[keep++] = l->holders[i];
        else
            priv->n_broken++;
    }
    l->n_holders = keep;
    if (keep == 0) {
        up_unlink_locked(priv, l);
        g_hash_table_remove(priv->leases, &l->gfid);
    }
}


/* Tells the noted holders, outside the lock. */
static void
up_breaks_send(vl_xlator_t *xl, struct up_breaks *b)
{
    for (size_t i = 0; i < b->n; i++)
        vl_notify_parents_data(xl, VL_EV_UPCALL, &b->v[i]);
    if (b->v != b->inline_v)
        vl_free(b->v);
    b->n = 0;
}


/* Registers client id on gfid. Making room breaks the oldest lease (its
 * holders noted in b). 0 or -ENOMEM. */
static int
up_grant_locked(vl_xlator_t *xl, struct up_priv *priv, const vl_gfid_t *gfid,
                uint64_t id, struct up_breaks *b)
{
    struct up_lease *l = g_hash_table_lookup(priv->leases, gfid);

    if (l == NULL) {
        while (priv->oldest != NULL
               && g_hash_table_size(priv->leases) >= priv->lease_limit) {
            struct up_lease *old = priv->oldest;

            up_break_locked(xl, priv, &old->gfid, 0, b);
            if (priv->oldest == old)
                break; /* ENOMEM noting its holders: over the limit */
            priv->n_evicted++;
        }
        l = vl_calloc(xl, 1, sizeof(*l), UP_MT_LEASE);
        if (l == NULL)
            return -ENOMEM;
        l->gfid = *gfid;
        g_hash_table_insert(priv->leases, &l->gfid, l);
        l->prev = priv->newest;
        if (priv->newest != NULL)
            priv->newest->next = l;
        else
            priv->oldest = l;
        priv->newest = l;
    }
    for (size_t i = 0; i < l->n_holders; i++)
        if (l->holders[i] == id)
            return 0;
    if (l->n_holders == l->cap_holders) {
        size_t cap = l->cap_holders == 0 ? 1 : l->cap_holders * 2;
        uint64_t *h = vl_realloc(l->holders, cap * sizeof(*h));

        if (h == NULL)
            return -ENOMEM;
        l->holders = h;
        l->cap_holders = cap;
    }
    l->holders[l->n_holders++] = id;
    priv->n_granted++;
    return 0;
}


/* Whether id still holds a lease on gfid. */
static bool
up_is_held_locked(struct up_priv *priv, const vl_gfid_t *gfid, uint64_t id)
{
    struct up_lease *l = g_hash_table_lookup(priv->leases, gfid);

    for (size_t i = 0; l != NULL && i < l->n_holders; i++)
        if (l->holders[i] == id)
            return true;
    return false;
}


/* Takes id off l's holders; true when l has none left (the caller then
 * removes it from the table). */
static bool
up_holder_del_locked(struct up_priv *priv, struct up_lease *l, uint64_t id)
{
    size_t keep = 0;

    for (size_t i = 0; i < l->n_holders; i++)
        if (l->holders[i] != id)
            l->holders[keep++] = l->holders[i];
    l->n_holders = keep;
    if (keep > 0)
        return false;
    up_unlink_locked(priv, l);
    return true;
}


/* Drops id's lease on gfid, if any (its mkdir failed: nothing to tell). */
static void
up_drop_locked(struct up_priv *priv, const vl_gfid_t *gfid, uint64_t id)
{
    struct up_lease *l = g_hash_table_lookup(priv->leases, gfid);

    if (l != NULL && up_holder_del_locked(priv, l, id))
        g_hash_table_remove(priv->leases, &l->gfid);
}


static void
up_entry_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    vl_xlator_t *xl = req->xl;
    struct up_priv *priv = xl->priv;
    uint64_t id = req->caller.client_id;
    const struct vl_loc *locs[2];
    bool is_leased = false;
    struct up_breaks b;

    up_breaks_init(&b);
    pthread_mutex_lock(&priv->lock);
    if (req->op == VL_FOP_MKDIR && req->args.mkdir.want_lease) {
        const vl_gfid_t *g = &req->args.mkdir.gfid;

        if (r->status == 0)
            is_leased = up_is_held_locked(priv, g, id);
        else
            up_drop_locked(priv, g, id);
    }
    /* The directories whose entries changed: the parent of the name
     * (rename: of both names). */
    vl_req_entry_locs(req, &locs[0], &locs[1]);
    for (size_t i = 0; r->status == 0 && i < 2; i++)
        if (locs[i] != NULL && locs[i]->parent != NULL)
            up_break_locked(xl, priv, &locs[i]->parent->gfid, id, &b);
    pthread_mutex_unlock(&priv->lock);
    /* Holders and watchers hear of the change before its maker does. */
    up_breaks_send(xl, &b);
    up_inval_after(priv->inval, req, r);
    vl_reply_move(req, r);
    req->reply.is_leased = is_leased;
    vl_unwind(req, r->status);
}


static void
up_entry_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct up_priv *priv = xl->priv;
    bool is_asked = req->op == VL_FOP_MKDIR && req->args.mkdir.want_lease;
    bool is_granted = false;
    vl_req_t *r;

    if (is_asked) {
        struct up_breaks b;

        up_breaks_init(&b);
        pthread_mutex_lock(&priv->lock);
        /* Without memory for it there is no lease; the mkdir goes on, and
         * its answer says so (up_entry_done finds no holder). */
        is_granted = up_grant_locked(xl, priv, &req->args.mkdir.gfid,
                                     req->caller.client_id, &b)
                     == 0;
        pthread_mutex_unlock(&priv->lock);
        up_breaks_send(xl, &b);
    }
    up_inval_before(priv->inval, req);
    r = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (r == NULL) {
        if (is_granted) {
            pthread_mutex_lock(&priv->lock);
            up_drop_locked(priv, &req->args.mkdir.gfid,
                           req->caller.client_id);
            pthread_mutex_unlock(&priv->lock);
        }
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(r, up_entry_done, req);
}


/* Forgets every lease of a client that went away. */
static void
up_client_gone(struct up_priv *priv, uint64_t id)
{
    GHashTableIter it;
    gpointer key, value;

    pthread_mutex_lock(&priv->lock);
    g_hash_table_iter_init(&it, priv->leases);
    while (g_hash_table_iter_next(&it, &key, &value))
        if (up_holder_del_locked(priv, value, id))
            g_hash_table_iter_remove(&it);
    pthread_mutex_unlock(&priv->lock);
}


static int
up_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    struct up_priv *priv = xl->priv;

    if (ev == VL_EV_CLIENT_DISCONNECT && data != NULL && priv != NULL) {
        up_client_gone(priv, *(const uint64_t *)data);
        up_inval_client_gone(priv->inval, *(const uint64_t *)data);
    }
    return vl_notify_default(xl, ev, data);
}


static int
up_init(vl_xlator_t *xl, vl_err_t *err)
{
    const struct up_conf *conf = VL_CONF(xl, struct up_conf);
    struct up_priv *priv;
    int rc;

    priv = vl_calloc(xl, 1, sizeof(*priv), UP_MT_MISC);
    if (priv == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    rc = pthread_mutex_init(&priv->lock, NULL);
    if (rc != 0) {
        vl_free(priv);
        vl_err_set(err, "mutex: %s", strerror(rc));
        return -rc;
    }
    rc = up_inval_new(xl, &priv->inval);
    if (rc != 0) {
        pthread_mutex_destroy(&priv->lock);
        vl_free(priv);
        vl_err_set(err, "out of memory");
        return rc;
    }
    up_inval_configure(priv->inval, conf->is_inval, conf->inval_timeout_s,
                       conf->inval_limit);
    priv->leases = g_hash_table_new_full(up_gfid_hash, up_gfid_equal, NULL,
                                         up_lease_free);
    priv->lease_limit = conf->lease_limit;
    xl->priv = priv;
    return 0;
}


static int
up_reconfigure(vl_xlator_t *xl, const void *new_conf, vl_err_t *err)
{
    const struct up_conf *conf = new_conf;
    struct up_priv *priv = xl->priv;

    (void)err;
    pthread_mutex_lock(&priv->lock);
    priv->lease_limit = conf->lease_limit; /* applies at the next grant */
    pthread_mutex_unlock(&priv->lock);
    up_inval_configure(priv->inval, conf->is_inval, conf->inval_timeout_s,
                       conf->inval_limit);
    return 0;
}


static void
up_fini(vl_xlator_t *xl)
{
    struct up_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    g_hash_table_destroy(priv->leases);
    up_inval_free(priv->inval);
    pthread_mutex_destroy(&priv->lock);
    vl_free(priv);
    xl->priv = NULL;
}


static void
up_dump(vl_xlator_t *xl, FILE *out)
{
    struct up_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    pthread_mutex_lock(&priv->lock);
    fprintf(out, "leased_dirs=%u\n", g_hash_table_size(priv->leases));
    fprintf(out, "lease_limit=%llu\n",
            (unsigned long long)priv->lease_limit);
    fprintf(out, "granted=%llu\n", (unsigned long long)priv->n_granted);
    fprintf(out, "broken=%llu\n", (unsigned long long)priv->n_broken);
    fprintf(out, "evicted=%llu\n", (unsigned long long)priv->n_evicted);
    pthread_mutex_unlock(&priv->lock);
    up_inval_dump(priv->inval, out);
}


static const vl_option_t up_options[] = {
    VL_OPT_UINT("lease-limit", struct up_conf, lease_limit, .min = 1,
                .max = 16777216, .def = "65536",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .doc = "Directories this brick keeps leases on at once; "
                       "granting one more breaks the oldest (its holders "
                       "then ask the brick again for names in it)."),
    VL_OPT_BOOL("cache-invalidation", struct up_conf, is_inval, .def = "on",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .aliases = {"features.cache-invalidation"},
                .doc = "Note which clients looked at which files and tell "
                       "them at once when another client changes one "
                       "(their md-cache and kernel then keep attributes "
                       "and names for md-cache-timeout). Off: nobody is "
                       "told, and clients keep them for 1 s."),
    VL_OPT_UINT("cache-invalidation-timeout", struct up_conf,
                inval_timeout_s, .min = 1, .max = 86400, .def = "600",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .aliases = {"features.cache-invalidation-timeout"},
                .doc = "Seconds after a client last looked at a file that "
                       "it is still told of changes to it; keep it at "
                       "least performance.md-cache-timeout."),
    VL_OPT_UINT("cache-invalidation-limit", struct up_conf, inval_limit,
                .min = 1, .max = 16777216, .def = "262144",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .doc = "Files this brick notes watchers of at once; noting "
                       "one more tells the watchers of the least recently "
                       "looked at one to drop what they cache of it."),
    VL_OPT_END,
};


const vl_xlator_class_t xl_features_upcall = {
    .abi = VL_XLATOR_ABI,
    .type = "features/upcall",
    .prefix = "upcall",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD,
    .conf_size = sizeof(struct up_conf),
    .options = up_options,
    .mem_types = up_mem_types,
    .doc = "Brick side of the negative-entry cache and of cache "
           "invalidation: leases on directories their client made, broken "
           "(a message to the holder) when another client changes their "
           "entries; and a message to every client that looked at a file "
           "when another client changes it.",
    .init = up_init,
    .fini = up_fini,
    .reconfigure = up_reconfigure,
    .notify = up_notify,
    .dump = up_dump,
    .fops = {
        [VL_FOP_MKDIR] = up_entry_fop,
        [VL_FOP_MKNOD] = up_entry_fop,
        [VL_FOP_CREATE] = up_entry_fop,
        [VL_FOP_SYMLINK] = up_entry_fop,
        [VL_FOP_LINK] = up_entry_fop,
        [VL_FOP_UNLINK] = up_entry_fop,
        [VL_FOP_RMDIR] = up_entry_fop,
        [VL_FOP_RENAME] = up_entry_fop,
        /* cache invalidation (upcall-inval.c) */
        [VL_FOP_LOOKUP] = up_inval_fop,
        [VL_FOP_STAT] = up_inval_fop,
        [VL_FOP_ACCESS] = up_inval_fop,
        [VL_FOP_READLINK] = up_inval_fop,
        [VL_FOP_GETXATTR] = up_inval_fop,
        [VL_FOP_OPEN] = up_inval_fop,
        [VL_FOP_OPENDIR] = up_inval_fop,
        [VL_FOP_READDIR] = up_inval_fop,
        [VL_FOP_SETATTR] = up_inval_fop,
        [VL_FOP_SETXATTR] = up_inval_fop,
        [VL_FOP_REMOVEXATTR] = up_inval_fop,
        [VL_FOP_WRITE] = up_inval_fop,
        [VL_FOP_FALLOCATE] = up_inval_fop,
        [VL_FOP_COPY_FILE_RANGE] = up_inval_fop,
    },
};


struct up_inval *
up_inval_of(vl_xlator_t *xl)
{
    return ((struct up_priv *)xl->priv)->inval;
}
