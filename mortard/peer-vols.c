/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * peer-vols: catch-up between peers (PEER_SYNC, and the older PEER_VOLS).
 *
 * Versions: every volume has its own version (bumped by each change);
 * the membership has a generation (peer.c); deletions leave tombstones.
 * A definition travels as the store's own files (info and options) with
 * the volume's version. The receiver installs a definition only if it has
 * no such volume or an older version, and never one whose volume id it
 * holds a tombstone for: the files go into a scratch directory, are
 * parsed with md_volume_load (so a peer cannot hand us anything the store
 * would refuse at startup) and saved with md_volume_save, which
 * regenerates the volfiles here. Then the bricks of the volume that live
 * on this node are started (volume started) or stopped (otherwise).
 * Tombstones: a volume this node had (name and id, the "seen" list) and
 * no longer has was deleted here; md_sync_track notices it (the monitor
 * calls it every round, and every sync message is built after it) and
 * records a tombstone (name, id). A peer that receives a tombstone for a
 * volume it still holds with that id stops its bricks of it and removes
 * it. The id tells a deleted volume from a later one of the same name.
 * At most MD_TOMBS_MAX tombstones are kept (the oldest go first).
 * Store: <state>/peer-sync, key=value lines dead=<id> <name> and
 * seen=<id> <name>, written atomically when they change.
 * Threads: worker or monitor, with md_state.lock held except around the
 * network call in md_vols_exchange.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "peer-int.h"

#define MD_TOMBS_MAX 1024

/* A volume by name and id. */
struct md_volref {
    char name[MD_VOLNAME_MAX + 1]; /* volume name */
    char id[VL_GFID_STR_LEN];      /* volume id */
};

/* Tombstones and the volumes last seen (md_state.lock). */
static struct {
    bool is_loaded;                 /* peer-sync was read */
    struct md_volref *dead;         /* owned; oldest first */
    size_t n_dead;
    struct md_volref *seen;         /* owned; the store at the last track */
    size_t n_seen;
    uint64_t seen_version;          /* store_version at the last track */
} md_sync;


void
md_vols_msg_clear(mgmt_vols_msg *msg)
{
    for (u_int i = 0; i < msg->vols.vols_len; i++) {
        free(msg->vols.vols_val[i].name);
        free(msg->vols.vols_val[i].info);
        free(msg->vols.vols_val[i].options);
    }
    free(msg->vols.vols_val);
    msg->vols.vols_val = NULL;
    msg->vols.vols_len = 0;
}


int
md_vols_msg_fill(struct md_state *st, mgmt_vols_msg *msg)
{
    size_t n = 0;
    int rc = 0;

    for (struct md_volume *v = st->vols; v != NULL; v = v->next)
        n++;
    msg->from = st->node_id;
    msg->vols.vols_val = calloc(n + 1, sizeof(*msg->vols.vols_val));
    if (msg->vols.vols_val == NULL)
        return -ENOMEM;
    for (struct md_volume *v = st->vols; v != NULL && rc == 0; v = v->next) {
        mgmt_vol_def *d = &msg->vols.vols_val[msg->vols.vols_len++];
        char dir[4096], path[4200];

        md_vol_dir(st, v->name, dir, sizeof(dir));
        d->name = strdup(v->name);
        d->vol_version = v->version;
        snprintf(path, sizeof(path), "%s/info", dir);
        rc = md_read_file(path, &d->info, NULL);
        snprintf(path, sizeof(path), "%s/options", dir);
        if (rc == 0)
            rc = md_read_file(path, &d->options, NULL);
        if (rc == 0 && d->name == NULL)
            rc = -ENOMEM;
    }
    if (rc != 0)
        md_vols_msg_clear(msg);
    return rc;
}


/* Starts or stops this node's bricks of vol to match its status. */
static void
md_vol_bricks_sync(struct md_state *st, struct md_volume *vol,
                   bool is_replaced)
{
    for (size_t i = 0; i < vol->n_bricks; i++) {
        struct md_brick *b = &vol->bricks[i];
        vl_err_t err = {.msg = ""};
        int rc = 0;

        if (!md_brick_is_local(st, b))
            continue;
        if (vol->status != MD_VOL_STARTED || is_replaced)
            rc = md_brick_stop(st, vol, b, &err);
        if (rc == 0 && vol->status == MD_VOL_STARTED)
            rc = md_brick_start(st, vol, b, &err);
        if (rc != 0)
            vl_glog(MD_DOMAIN, VL_LOG_ERROR, "catch-up of %s: %s",
                    vol->name, err.msg);
    }
}


static struct md_volref *
md_tomb_find(const char *id)
{
    for (size_t i = 0; i < md_sync.n_dead; i++)
        if (strcmp(md_sync.dead[i].id, id) == 0)
            return &md_sync.dead[i];
    return NULL;
}


static int
md_sync_cb(const char *key, const char *value, int line, void *arg,
           vl_err_t *err)
{
    struct md_volref r = {{0}}, **arr, *na;
    const char *sp = strchr(value, ' ');
    size_t *n;
    vl_gfid_t g;

    (void)line;
    (void)arg;
    if (strcmp(key, "dead") == 0) {
        arr = &md_sync.dead;
        n = &md_sync.n_dead;
    } else if (strcmp(key, "seen") == 0) {
        arr = &md_sync.seen;
        n = &md_sync.n_seen;
    } else {
        goto bad;
    }
    if (sp == NULL || (size_t)(sp - value) >= sizeof(r.id) ||
        strlen(sp + 1) >= sizeof(r.name))
        goto bad;
    memcpy(r.id, value, (size_t)(sp - value));
    snprintf(r.name, sizeof(r.name), "%s", sp + 1);
    if (vl_gfid_parse(r.id, &g) != 0 || *n >= MD_TOMBS_MAX)
        goto bad;
    na = realloc(*arr, (*n + 1) * sizeof(**arr));
    if (na == NULL)
        return -ENOMEM;
    na[(*n)++] = r;
    *arr = na;
    return 0;
bad:
    vl_err_set(err, "bad line '%s=%s'", key, value);
    return -EINVAL;
}


static void
md_sync_load(struct md_state *st)
{
    char path[4200], *text = NULL;
    vl_err_t err = {.msg = ""};
    int rc;

    md_sync.is_loaded = true;
    snprintf(path, sizeof(path), "%s/peer-sync", st->state_dir);
    rc = md_read_file(path, &text, NULL);
    if (rc == 0)
        rc = md_kv_parse(text, path, md_sync_cb, NULL, &err);
    else if (rc != -ENOENT)
        vl_err_set(&err, "%s: %s", path, strerror(-rc));
    free(text);
    if (rc != 0 && rc != -ENOENT)
        vl_glog(MD_DOMAIN, VL_LOG_ERROR, "tombstones not loaded: %s",
                err.msg);
    md_sync.seen_version = UINT64_MAX; /* track once after loading */
}


static void
md_sync_save(struct md_state *st)
{
    struct md_sbuf sb = {0};
    vl_err_t err = {.msg = ""};

    md_sbuf_printf(&sb, "# mortard tombstones and volumes seen (peer "
                   "catch-up): do not edit while mortard runs\n");
    for (size_t i = 0; i < md_sync.n_dead; i++)
        md_sbuf_printf(&sb, "dead=%s %s\n", md_sync.dead[i].id,
                       md_sync.dead[i].name);
    for (size_t i = 0; i < md_sync.n_seen; i++)
        md_sbuf_printf(&sb, "seen=%s %s\n", md_sync.seen[i].id,
                       md_sync.seen[i].name);
    if (sb.is_oom || md_write_atomic(st->state_dir, "peer-sync", sb.data,
                                     sb.len, &err) != 0)
        vl_glog(MD_DOMAIN, VL_LOG_ERROR, "saving tombstones: %s",
                sb.is_oom ? "out of memory" : err.msg);
    md_sbuf_clear(&sb);
}


/* Adds a tombstone (dropping the oldest beyond MD_TOMBS_MAX). */
static void
md_tomb_add(const char *name, const char *id)
{
    struct md_volref *na;

    if (md_tomb_find(id) != NULL)
        return;
    if (md_sync.n_dead >= MD_TOMBS_MAX) {
        memmove(md_sync.dead, md_sync.dead + 1,
                (md_sync.n_dead - 1) * sizeof(*md_sync.dead));
        md_sync.n_dead--;
    }
    na = realloc(md_sync.dead, (md_sync.n_dead + 1) * sizeof(*na));
    if (na == NULL)
        return;
    md_sync.dead = na;
    snprintf(na[md_sync.n_dead].name, sizeof(na->name), "%s", name);
    snprintf(na[md_sync.n_dead].id, sizeof(na->id), "%s", id);
    md_sync.n_dead++;
    vl_glog(MD_DOMAIN, VL_LOG_INFO, "tombstone for volume %s (%s)", name, id);
}


void
md_sync_track(struct md_state *st)
{
    struct md_volref *now = NULL;
    size_t n = 0;

    if (!md_sync.is_loaded)
        md_sync_load(st);
    if (md_sync.seen_version == st->store_version)
        return;
    for (struct md_volume *v = st->vols; v != NULL; v = v->next)
        n++;
    now = calloc(n + 1, sizeof(*now));
    if (now == NULL)
        return;
    n = 0;
    for (struct md_volume *v = st->vols; v != NULL; v = v->next, n++) {
        snprintf(now[n].name, sizeof(now[n].name), "%s", v->name);
        snprintf(now[n].id, sizeof(now[n].id), "%s", v->id);
    }
    for (size_t i = 0; i < md_sync.n_seen; i++) {
        bool is_here = false;

        for (size_t j = 0; j < n && !is_here; j++)
            is_here = strcmp(now[j].id, md_sync.seen[i].id) == 0;
        if (!is_here)
            md_tomb_add(md_sync.seen[i].name, md_sync.seen[i].id);
    }
    free(md_sync.seen);
    md_sync.seen = now;
    md_sync.n_seen = n;
    md_sync.seen_version = st->store_version;
    md_sync_save(st);
}


/* Removes a volume a peer deleted: stops this node's bricks of it, drops
 * the volume id from them (as volume delete does) and the definition. */
static void
md_vol_bury(struct md_state *st, struct md_volume *vol)
{
    vl_err_t err = {.msg = ""};

    for (size_t i = 0; i < vol->n_bricks; i++)
        if (md_brick_is_local(st, &vol->bricks[i]) &&
            md_brick_stop(st, vol, &vol->bricks[i], &err) != 0)
            vl_glog(MD_DOMAIN, VL_LOG_ERROR, "catch-up delete of %s: %s",
                    vol->name, err.msg);
    if (md_volume_remove(st, vol, &err) != 0) {
        vl_glog(MD_DOMAIN, VL_LOG_ERROR, "catch-up delete of %s: %s",
                vol->name, err.msg);
        return;
    }
    for (size_t i = 0; i < vol->n_bricks; i++)
        if (md_brick_is_local(st, &vol->bricks[i]))
            (void)removexattr(vol->bricks[i].path, MD_VOLID_XATTR);
    md_tomb_add(vol->name, vol->id);
    md_volume_unlink(st, vol);
    vl_glog(MD_DOMAIN, VL_LOG_INFO, "caught up: volume %s (%s) was deleted "
            "on a peer", vol->name, vol->id);
    md_volume_free(vol);
    md_server_notify();
}


static int
md_vol_install(struct md_state *st, const mgmt_vol_def *d, vl_err_t *err)
{
    struct md_volume *old = md_volume_find(st, d->name), *nv = NULL;
    char tmp[4200];
    int rc;

    if (old != NULL && old->version >= d->vol_version)
        return 0;
    rc = md_check_volname(d->name, err);
    if (rc != 0)
        return rc;
    snprintf(tmp, sizeof(tmp), "%s/vols/.%s.sync", st->state_dir, d->name);
    (void)unlink(tmp);
    if (mkdir(tmp, 0700) != 0 && errno != EEXIST) {
        vl_err_set(err, "%s: %s", tmp, strerror(errno));
        return -errno;
    }
    rc = md_write_atomic(tmp, "info", d->info, strlen(d->info), err);
    if (rc == 0)
        rc = md_write_atomic(tmp, "options", d->options,
                             strlen(d->options), err);
    if (rc == 0)
        rc = md_volume_load(tmp, d->name, &nv, err);
    {
        char f[4300];

        snprintf(f, sizeof(f), "%s/info", tmp);
        (void)unlink(f);
        snprintf(f, sizeof(f), "%s/options", tmp);
        (void)unlink(f);
        (void)rmdir(tmp);
    }
    if (rc != 0)
        return rc;
    if (md_tomb_find(nv->id) != NULL) {
        md_volume_free(nv); /* deleted here: the peer removes it */
        return 0;
    }
    nv->version--; /* md_volume_save bumps it back to the peer's */
    rc = md_volume_save(st, nv, err);
    if (rc != 0) {
        md_volume_free(nv);
        return rc;
    }
    if (old != NULL) {
        md_volume_unlink(st, old);
        md_volume_free(old);
    }
    md_volume_link(st, nv);
    vl_glog(MD_DOMAIN, VL_LOG_INFO, "caught up volume %s to version %llu",
            nv->name, (unsigned long long)nv->version);
    md_server_notify();
    md_vol_bricks_sync(st, nv, old != NULL);
    return 0;
}


void
md_vols_install(struct md_state *st, const mgmt_vols_msg *msg)
{
    for (u_int i = 0; i < msg->vols.vols_len; i++) {
        vl_err_t err = {.msg = ""};

        if (md_vol_install(st, &msg->vols.vols_val[i], &err) != 0)
            vl_glog(MD_DOMAIN, VL_LOG_ERROR, "volume %s from peer %s not "
                    "installed: %s", msg->vols.vols_val[i].name, msg->from,
                    err.msg);
    }
}


int
md_sync_msg_fill(struct md_state *st, mgmt_sync_msg *msg)
{
    mgmt_vols_msg vm = {.from = ""};
    int rc;

    md_sync_track(st);
    memset(msg, 0, sizeof(*msg));
    msg->from = strdup(st->node_id);
    if (msg->from == NULL)
        return -ENOMEM;
    rc = md_members_fill(st, &msg->m);
    if (rc == 0)
        rc = md_vols_msg_fill(st, &vm);
    if (rc == 0) {
        msg->vols.vols_val = vm.vols.vols_val;
        msg->vols.vols_len = vm.vols.vols_len;
        msg->dead.dead_val = calloc(md_sync.n_dead + 1,
                                    sizeof(*msg->dead.dead_val));
        if (msg->dead.dead_val == NULL)
            rc = -ENOMEM;
    }
    for (size_t i = 0; rc == 0 && i < md_sync.n_dead; i++) {
        mgmt_tombstone *t = &msg->dead.dead_val[msg->dead.dead_len++];

        t->name = strdup(md_sync.dead[i].name);
        t->id = strdup(md_sync.dead[i].id);
        if (t->name == NULL || t->id == NULL)
            rc = -ENOMEM;
    }
    return rc; /* on failure the caller xdr_frees what was filled */
}


void
md_sync_apply(struct md_state *st, const mgmt_sync_msg *msg)
{
    mgmt_vols_msg vm = {.from = msg->from};
    bool is_changed = false;

    md_sync_track(st);
    for (u_int i = 0; i < msg->dead.dead_len; i++) {
        const mgmt_tombstone *t = &msg->dead.dead_val[i];
        struct md_volume *v = md_volume_find(st, t->name);
        vl_gfid_t g;

        if (vl_gfid_parse(t->id, &g) != 0 ||
            md_check_volname(t->name, NULL) != 0)
            continue;
        if (md_tomb_find(t->id) == NULL) {
            md_tomb_add(t->name, t->id);
            is_changed = true;
        }
        if (v != NULL && strcmp(v->id, t->id) == 0)
            md_vol_bury(st, v);
    }
    vm.vols.vols_len = msg->vols.vols_len;
    vm.vols.vols_val = msg->vols.vols_val;
    md_vols_install(st, &vm);
    if (is_changed)
        md_sync.seen_version = UINT64_MAX;
    md_sync_track(st); /* saves the new tombstones, forgets the buried */
    (void)md_members_adopt(st, msg->from, &msg->m);
}


int
md_vols_exchange(struct md_state *st, const char *host, uint16_t port,
                 bool is_locked, vl_err_t *err)
{
    mgmt_sync_msg req, rsp;
    int rc;

    memset(&rsp, 0, sizeof(rsp));
    if (!is_locked)
        pthread_mutex_lock(&st->lock);
    rc = md_sync_msg_fill(st, &req);
    if (!is_locked)
        pthread_mutex_unlock(&st->lock);
    if (rc != 0) {
        xdr_free((xdrproc_t)xdr_mgmt_sync_msg, (char *)&req);
        vl_err_set(err, "reading the store: %s", strerror(-rc));
        return rc;
    }
    rc = md_peer_call(host, port, MGMT_PROC_PEER_SYNC,
                      (xdrproc_t)xdr_mgmt_sync_msg, &req,
                      (xdrproc_t)xdr_mgmt_sync_msg, &rsp,
                      MD_COMMIT_TIMEOUT_MS, err);
    xdr_free((xdrproc_t)xdr_mgmt_sync_msg, (char *)&req);
    if (rc != 0)
        return rc;
    if (rsp.ret != 0) {
        vl_err_set(err, "%s:%u refused the catch-up: %s", host, port,
                   strerror(rsp.op_errno));
        rc = -(rsp.op_errno != 0 ? rsp.op_errno : EIO);
    } else {
        if (!is_locked)
            pthread_mutex_lock(&st->lock);
        md_sync_apply(st, &rsp);
        if (!is_locked)
            pthread_mutex_unlock(&st->lock);
    }
    xdr_free((xdrproc_t)xdr_mgmt_sync_msg, (char *)&rsp);
    return rc;
}
