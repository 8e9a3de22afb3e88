/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * peer-vols: catch-up of volume definitions between peers.
 *
 * A definition travels as the store's own files (info and options) with
 * the volume's version. The receiver installs a definition only if it has
 * no such volume or an older version: the files go into a scratch
 * directory, are parsed with md_volume_load (so a peer cannot hand us
 * anything the store would refuse at startup) and saved with
 * md_volume_save, which regenerates the volfiles here. Then the bricks of
 * the volume that live on this node are started (volume started) or
 * stopped (otherwise). Deletions are not caught up (a volume missing on
 * a peer may be one it never had): transactions refuse to run with a
 * peer down, so a node misses a deletion only if it died during a commit.
 * Threads: worker or monitor, with md_state.lock held except around the
 * network call in md_vols_exchange.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "peer-int.h"


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
md_vols_exchange(struct md_state *st, const char *host, uint16_t port,
                 bool is_locked, vl_err_t *err)
{
    mgmt_vols_msg req = {.from = ""}, rsp = {0};
    int rc;

    if (!is_locked)
        pthread_mutex_lock(&st->lock);
    rc = md_vols_msg_fill(st, &req);
    if (!is_locked)
        pthread_mutex_unlock(&st->lock);
    if (rc != 0) {
        vl_err_set(err, "reading the store: %s", strerror(-rc));
        return rc;
    }
    rc = md_peer_call(host, port, MGMT_PROC_PEER_VOLS,
                      (xdrproc_t)xdr_mgmt_vols_msg, &req,
                      (xdrproc_t)xdr_mgmt_vols_msg, &rsp,
                      MD_COMMIT_TIMEOUT_MS, err);
    md_vols_msg_clear(&req);
    if (rc != 0)
        return rc;
    if (rsp.ret == 0) {
        if (!is_locked)
            pthread_mutex_lock(&st->lock);
        md_vols_install(st, &rsp);
        if (!is_locked)
            pthread_mutex_unlock(&st->lock);
    }
    xdr_free((xdrproc_t)xdr_mgmt_vols_msg, (char *)&rsp);
    return 0;
}
