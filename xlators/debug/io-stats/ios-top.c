/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ios-top: io-stats's per-file counts and the bounded tables `volume top`
 * reads.
 *
 * Each inode's ctx counts the requests of each metric on it since the
 * tables were last emptied (top_gen tells old counts from new ones, so
 * emptying does not walk the inode table). A table keeps the IOS_TOP_MAX
 * files with the highest counts: a file already in it has its count
 * raised; a new one goes in while there is room, or replaces the lowest
 * entry once its count is higher. So a file that was pushed out comes
 * back only with a higher count than the lowest kept, as GlusterFS's
 * bounded lists behave. A scan of at most IOS_TOP_MAX entries per counted
 * request is the price, paid only while count-fop-hits is on.
 *
 * Paths: an object's path is its parent's path and its name, learnt from
 * the named lookups, creates and mkdirs that pass by (the root is "/");
 * an object whose path is unknown is written as "<gfid:UUID>", the way
 * GlusterFS names nameless objects.
 * Threads: any; priv->top_lock guards the tables and every ctx.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ios.h"


/* The ctx of inode with counts of the current generation. */
static struct ios_ictx *
ios_ictx_locked(struct ios_priv *priv, vl_xlator_t *xl, vl_inode_t *inode)
{
    struct ios_ictx *c = vl_inode_ctx(inode, xl);

    if (c != NULL && c->gen != priv->top_gen) {
        memset(c->count, 0, sizeof(c->count));
        c->gen = priv->top_gen;
    }
    return c;
}


void
ios_top_hit(vl_xlator_t *xl, vl_inode_t *inode, enum ios_top_metric m)
{
    struct ios_priv *priv = xl->priv;
    struct ios_top *t = &priv->top[m];
    struct ios_ictx *c;
    struct ios_top_ent *e = NULL, *low = NULL;
    uint64_t count;

    if (inode == NULL || vl_gfid_is_null(&inode->gfid))
        return;
    pthread_mutex_lock(&priv->top_lock);
    c = ios_ictx_locked(priv, xl, inode);
    if (c == NULL)
        goto out;
    count = ++c->count[m];
    for (size_t i = 0; i < t->n_ent && e == NULL; i++) {
        if (vl_gfid_equal(&t->ent[i].gfid, &inode->gfid))
            e = &t->ent[i];
        else if (low == NULL || t->ent[i].count < low->count)
            low = &t->ent[i];
    }
    if (e == NULL && t->n_ent < IOS_TOP_MAX) {
        e = &t->ent[t->n_ent++];
    } else if (e == NULL && low != NULL && count > low->count) {
        e = low;
    } else if (e == NULL) {
        goto out;
    }
    if (!vl_gfid_equal(&e->gfid, &inode->gfid)) {
        vl_free(e->path);
        e->path = NULL;
        e->gfid = inode->gfid;
    }
    e->count = count;
    /* The path may have been learnt since the file came in. */
    if (e->path == NULL && c->path != NULL)
        e->path = vl_strdup(xl, c->path, IOS_MT_PATH);
out:
    pthread_mutex_unlock(&priv->top_lock);
}


void
ios_top_name(vl_xlator_t *xl, vl_inode_t *parent, const char *name,
             vl_inode_t *inode)
{
    struct ios_priv *priv = xl->priv;
    struct ios_ictx *pc, *c;
    const char *base;
    char *path;
    size_t len;

    if (inode == NULL || parent == NULL || inode == parent)
        return;
    pthread_mutex_lock(&priv->top_lock);
    pc = vl_inode_ctx(parent, xl);
    c = vl_inode_ctx(inode, xl);
    base = vl_gfid_is_root(&parent->gfid) ? ""
           : pc != NULL                   ? pc->path
                                          : NULL;
    if (c == NULL || base == NULL)
        goto out;
    len = strlen(base) + 1 + strlen(name) + 1;
    if (c->path != NULL && strlen(c->path) + 1 == len
        && strncmp(c->path, base, strlen(base)) == 0
        && strcmp(c->path + strlen(base) + 1, name) == 0)
        goto out; /* known already: the common case of a revalidation */
    path = vl_malloc(xl, len, IOS_MT_PATH);
    if (path == NULL)
        goto out; /* the object stays nameless; nothing else depends on it */
    snprintf(path, len, "%s/%s", base, name);
    vl_free(c->path);
    c->path = path;
out:
    pthread_mutex_unlock(&priv->top_lock);
}


void
ios_top_forget(vl_xlator_t *xl, vl_inode_t *inode)
{
    struct ios_priv *priv = xl->priv;
    struct ios_ictx *c = vl_inode_ctx(inode, xl);

    if (priv == NULL || c == NULL)
        return;
    pthread_mutex_lock(&priv->top_lock);
    vl_free(c->path);
    c->path = NULL;
    pthread_mutex_unlock(&priv->top_lock);
}


void
ios_top_clear(struct ios_priv *priv)
{
    pthread_mutex_lock(&priv->top_lock);
    for (size_t m = 0; m < IOS_TOP_N; m++) {
        for (size_t i = 0; i < priv->top[m].n_ent; i++)
            vl_free(priv->top[m].ent[i].path);
        memset(&priv->top[m], 0, sizeof(priv->top[m]));
    }
    priv->top_gen++;
    pthread_mutex_unlock(&priv->top_lock);
}


static int
ios_ent_cmp(const void *a, const void *b)
{
    const struct ios_top_ent *x = a, *y = b;

    return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}


void
ios_top_write(struct ios_priv *priv, FILE *out)
{
    struct ios_top_ent sorted[IOS_TOP_MAX];
    char gfid[VL_GFID_STR_LEN];

    pthread_mutex_lock(&priv->top_lock);
    for (size_t m = 0; m < IOS_TOP_N; m++) {
        size_t n = priv->top[m].n_ent;

        memcpy(sorted, priv->top[m].ent, n * sizeof(sorted[0]));
        qsort(sorted, n, sizeof(sorted[0]), ios_ent_cmp);
        for (size_t i = 0; i < n; i++) {
            fprintf(out, "top %s %llu ", ios_top_names[m],
                    (unsigned long long)sorted[i].count);
            if (sorted[i].path != NULL) {
                ios_escape(out, sorted[i].path);
            } else {
                fprintf(out, "<gfid:%s>",
                        vl_gfid_to_str(&sorted[i].gfid, gfid));
            }
            fputc('\n', out);
        }
    }
    pthread_mutex_unlock(&priv->top_lock);
}
