/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-heal-meta: the metadata heal of one object (doc/replicate.md
 * "Self-heal"): under the object's inodelk (the lock metadata
 * transactions take), the records say which copies are sinks; each sink
 * gets the source's xattrs (those a client may set: every listed one,
 * plus distribute's layout key, which is never listed), extra ones
 * removed, then its mode, owner and times; then the metadata records
 * are cleared. Dirty without blame: the copies are compared and the one
 * changed last (ctime) is the source of those that differ.
 * Threads: a heal thread (rep-heal.c), blocking calls.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rep-heal.h"

#define REP_HEAL_XATTR_LIST_MAX (64 * 1024)
#define REP_HEAL_DHT_KEY "trusted.mortar.dht"


/* Names of the xattrs of inode's copy on child (NUL-separated, *len
 * bytes; *out owned by the caller, NULL when there are none). */
static int
rep_heal_xattr_list(struct rep_heal *h, unsigned child, vl_inode_t *inode,
                    char **out, size_t *len)
{
    union vl_fop_args a;
    struct vl_reply r = {0};
    int rc;

    *out = NULL;
    *len = 0;
    memset(&a, 0, sizeof(a));
    a.getxattr.loc.inode = inode;
    a.getxattr.size = REP_HEAL_XATTR_LIST_MAX;
    rc = rep_heal_call(h, child, VL_FOP_GETXATTR, &a, &r);
    if (rc == -ENODATA || rc == -EOPNOTSUPP)
        rc = 0;
    if (rc == 0 && r.xattr != NULL && r.count > 0) {
        *out = r.xattr;
        *len = (size_t)r.count;
        r.xattr = NULL;
    }
    vl_reply_clear(&r);
    return rc;
}


/* Value of name on child: 0 with *out (owned) and *len, -ENODATA. */
static int
rep_heal_xattr_get(struct rep_heal *h, unsigned child, vl_inode_t *inode,
                   const char *name, char **out, size_t *len)
{
    union vl_fop_args a;
    struct vl_reply r = {0};
    int rc;

    *out = NULL;
    *len = 0;
    memset(&a, 0, sizeof(a));
    a.getxattr.loc.inode = inode;
    a.getxattr.name = name;
    a.getxattr.size = REP_HEAL_XATTR_LIST_MAX;
    rc = rep_heal_call(h, child, VL_FOP_GETXATTR, &a, &r);
    if (rc == 0) {
        *len = r.count > 0 ? (size_t)r.count : 0;
        *out = r.xattr;
        r.xattr = NULL;
    }
    vl_reply_clear(&r);
    return rc;
}


static bool
rep_heal_list_has(const char *list, size_t len, const char *name)
{
    for (size_t i = 0; i < len; i += strnlen(list + i, len - i) + 1)
        if (strncmp(list + i, name, len - i) == 0)
            return true;
    return false;
}


/* Makes name on sink hold the source's value (or not exist, like on the
 * source). With is_dry, changes nothing. Returns 1 if the copies
 * differed, 0 if not, -errno. */
static int
rep_heal_xattr_one(struct rep_heal *h, unsigned sink, const char *name,
                   bool is_dry)
{
    char *sv = NULL, *kv = NULL;
    size_t sl = 0, kl = 0;
    int rs, rk, rc = 0;
    union vl_fop_args a;

    rs = rep_heal_xattr_get(h, (unsigned)h->src, h->inode, name, &sv, &sl);
    rk = rep_heal_xattr_get(h, sink, h->inode, name, &kv, &kl);
    if ((rs != 0 && rs != -ENODATA) || (rk != 0 && rk != -ENODATA)) {
        rc = rs != 0 && rs != -ENODATA ? rs : rk;
        goto out;
    }
    if (rs == -ENODATA && rk == -ENODATA)
        goto out;
    if (rs == 0 && rk == 0 && sl == kl && (sl == 0 || memcmp(sv, kv, sl) == 0))
        goto out;
    rc = 1;
    if (is_dry)
        goto out;
    memset(&a, 0, sizeof(a));
    if (rs == 0) {
        a.setxattr.loc.inode = h->inode;
        a.setxattr.name = name;
        a.setxattr.value = sv;
        a.setxattr.size = sl;
        rk = rep_heal_call(h, sink, VL_FOP_SETXATTR, &a, NULL);
    } else {
        a.removexattr.loc.inode = h->inode;
        a.removexattr.name = name;
        rk = rep_heal_call(h, sink, VL_FOP_REMOVEXATTR, &a, NULL);
        if (rk == -ENODATA)
            rk = 0;
    }
    if (rk != 0) {
        vl_log(h->xl, VL_LOG_WARNING, "heal: xattr %s on %s: %s", name,
               h->xl->children[sink]->name, strerror(-rk));
        rc = rk;
    }
out:
    vl_free(sv);
    vl_free(kv);
    return rc;
}


/* The xattrs of sink made the source's: 1 if anything differed, 0, or
 * -errno. */
static int
rep_heal_xattrs(struct rep_heal *h, unsigned sink, bool is_dry)
{
    char *sl = NULL, *kl = NULL;
    size_t sn = 0, kn = 0;
    int rc, differ = 0;

    rc = rep_heal_xattr_list(h, (unsigned)h->src, h->inode, &sl, &sn);
    if (rc == 0)
        rc = rep_heal_xattr_list(h, sink, h->inode, &kl, &kn);
    for (size_t i = 0; rc >= 0 && i < sn; i += strnlen(sl + i, sn - i) + 1) {
        rc = rep_heal_xattr_one(h, sink, sl + i, is_dry);
        differ |= rc > 0;
    }
    for (size_t i = 0; rc >= 0 && i < kn; i += strnlen(kl + i, kn - i) + 1)
        if (!rep_heal_list_has(sl, sn, kl + i)) {
            rc = rep_heal_xattr_one(h, sink, kl + i, is_dry);
            differ |= rc > 0;
        }
    if (rc >= 0 && S_ISDIR(h->ia[h->src].mode)) {
        rc = rep_heal_xattr_one(h, sink, REP_HEAL_DHT_KEY, is_dry);
        differ |= rc > 0;
    }
    vl_free(sl);
    vl_free(kl);
    return rc < 0 ? rc : differ;
}


static bool
rep_heal_attrs_differ(const struct vl_iatt *s, const struct vl_iatt *k)
{
    return s->mode != k->mode || s->uid != k->uid || s->gid != k->gid;
}


/* Mode, owner and times of sink from the source. */
static int
rep_heal_attrs(struct rep_heal *h, unsigned sink)
{
    const struct vl_iatt *s = &h->ia[h->src];
    union vl_fop_args a;

    memset(&a, 0, sizeof(a));
    a.setattr.loc.inode = h->inode;
    a.setattr.attr = *s;
    a.setattr.valid = VL_SET_UID | VL_SET_GID | VL_SET_ATIME | VL_SET_MTIME;
    /* A symlink's mode is not its own to change (always 0777). */
    if (!S_ISLNK(s->mode))
        a.setattr.valid |= VL_SET_MODE;
    return rep_heal_call(h, sink, VL_FOP_SETATTR, &a, NULL);
}


/* Dirty without blame: the copy changed last is the source; the copies
 * that differ from it are sinks. */
static int
rep_heal_meta_compare(struct rep_heal *h)
{
    rep_mask_t sinks = 0;
    int src = __builtin_ctz(h->up);

    for (unsigned i = 0; i < h->n; i++)
        if ((h->up & (1u << i))
            && (h->ia[i].ctime > h->ia[src].ctime
            || (h->ia[i].ctime == h->ia[src].ctime
                && h->ia[i].ctime_ns > h->ia[src].ctime_ns)))
            src = (int)i;
    h->src = src;
    for (unsigned i = 0; i < h->n; i++) {
        int rc;

        if ((int)i == src || !(h->up & (1u << i)))
            continue;
        rc = rep_heal_attrs_differ(&h->ia[src], &h->ia[i])
             ? 1 : rep_heal_xattrs(h, i, true);
        if (rc < 0)
            return rc;
        if (rc > 0)
            sinks |= 1u << i;
    }
    h->sinks = sinks;
    return rep_heal_mark_sinks(h, h->inode, REP_METADATA);
}


enum rep_heal_result
rep_heal_metadata(struct rep_heal *h)
{
    enum rep_heal_result res = REP_HR_HEALED;
    enum rep_heal_verdict v;
    char gs[VL_GFID_STR_LEN];
    int rc;

    /* The lock and the records in one round trip a copy (h->rec stays
     * fresh: the lock is held to the end). */
    rc = rep_heal_inodelk_records(h);
    if (rc != 0)
        return rc == -ENOTCONN ? REP_HR_PENDING : REP_HR_FAILED;
    v = rep_heal_decide(h, REP_METADATA);
    if (v == REP_HV_WAIT) {
        res = REP_HR_PENDING; /* the only possible source is down */
        goto unlock;
    }
    rc = rep_heal_split(h, REP_METADATA, &v);
    if (rc != 0) {
        if (rc > 0) {
            rc = 0;
            res = REP_HR_CLEAN;
        }
        goto unlock;
    }
    if (v == REP_HV_CLEAN) {
        res = REP_HR_CLEAN;
        goto unlock;
    }
    if (v == REP_HV_SPLIT) {
        vl_log(h->xl, VL_LOG_ERROR, "heal %s: metadata split-brain (every "
               "copy blamed by another): not healed",
               vl_gfid_to_str(&h->inode->gfid, gs));
        res = REP_HR_SPLIT;
        goto unlock;
    }
    /* Attributes under the lock: what the sinks will get (the source's;
     * every copy's when they are compared). */
    for (unsigned i = 0; i < h->n && rc == 0; i++)
        if ((h->up & (1u << i))
            && (v == REP_HV_COMPARE || (int)i == h->src))
            rc = rep_heal_stat(h, i, h->inode, &h->ia[i]);
    if (rc == 0 && v == REP_HV_COMPARE) {
        rc = rep_heal_meta_compare(h);
        if (rc == 0 && h->sinks == 0)
            res = REP_HR_CLEAN;
    }
    for (unsigned i = 0; i < h->n && rc == 0; i++) {
        if (!(h->sinks & (1u << i)))
            continue;
        rc = rep_heal_xattrs(h, i, false);
        if (rc >= 0)
            rc = rep_heal_attrs(h, i);
    }
    /* Cleared only once every sink has everything; the clear carries
     * the unlock. */
    if (rc == 0) {
        rc = rep_heal_records_clear_unlock(h, REP_METADATA);
        goto out;
    }
unlock:
    rep_heal_inodeunlk(h, 0, 0);
out:
    if (rc != 0) {
        vl_log(h->xl, VL_LOG_WARNING, "heal %s: metadata: %s",
               vl_gfid_to_str(&h->inode->gfid, gs), strerror(-rc));
        return rc == -ENOTCONN ? REP_HR_PENDING : REP_HR_FAILED;
    }
    return res;
}
