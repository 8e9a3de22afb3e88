/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-xattr: extended attributes through distribute, and its virtual
 * keys (answered here, never sent to a brick):
 *   getxattr mortar.dht.pathinfo      "<cached>[ hashed=<hashed>|?][ linkto]"
 *                                     (? when the layout gave none)
 *   getxattr mortar.dht.layout        one line per subvolume:
 *                                     "<subvol> <start> <stop> <gen> <flags>"
 *   setxattr mortar.dht.fix-layout    new refitted layout, not committed
 *   setxattr mortar.dht.commit-layout set COMMITTED on every copy
 * Users never see or touch the bricks' own trusted.mortar.* keys (EPERM).
 * Other keys: files on the cached subvolume; directories read from the
 * first up subvolume and changed on all (a change that fails on some
 * copies is put back on the others; dist_dir_setattr_undo does the same
 * for a directory's setattr, which dist-route.c runs).
 *
 * Intercepts: getxattr, setxattr, removexattr.
 * Threads:    callers' threads; dist-worker.c threads for the layout keys.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "dist.h"

#define DIST_BRICK_PREFIX "trusted.mortar."
#define DIST_VX_PREFIX "mortar.dht."


static bool
dist_is_dir_inode(vl_inode_t *inode)
{
    return inode != NULL
           && (S_ISDIR(inode->type) || vl_gfid_is_root(&inode->gfid));
}


/* Answers a getxattr with text (size rules of getxattr(2)). */
static void
dist_xattr_answer_text(vl_xlator_t *xl, vl_req_t *req, const char *text)
{
    size_t len = strlen(text);
    size_t size = req->args.getxattr.size;

    req->reply.count = (int64_t)len;
    if (size == 0) {
        vl_unwind(req, 0);
        return;
    }
    if (size < len) {
        vl_unwind(req, -ERANGE);
        return;
    }
    req->reply.xattr = vl_strdup(xl, text, DIST_MT_TEXT);
    vl_unwind(req, req->reply.xattr == NULL ? -ENOMEM : 0);
}


/* A directory's pathinfo: the names of the up subvolumes, one space
 * apart (allocated: with many subvolumes it outgrows a stack buffer). */
static void
dist_pathinfo_dir(vl_xlator_t *xl, vl_req_t *req)
{
    dist_mask_t up = dist_up_mask(xl);
    unsigned n = dist_priv(xl)->n;
    size_t size = 1, len = 0;
    char *text;

    for (unsigned i = 0; i < n; i++)
        if (dist_mask_test(up, i))
            size += strlen(xl->children[i]->name) + 1;
    text = vl_malloc(xl, size, DIST_MT_TEXT);
    if (text == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    text[0] = '\0';
    for (unsigned i = 0; i < n; i++)
        if (dist_mask_test(up, i))
            len += (size_t)snprintf(text + len, size - len, "%s%s",
                                    len > 0 ? " " : "",
                                    xl->children[i]->name);
    dist_xattr_answer_text(xl, req, text);
    vl_free(text);
}


static void
dist_pathinfo(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *inode)
{
    struct dist_inode_ctx *ctx = dist_ictx(xl, inode);
    char text[1024];
    int cached = -1, hashed = -1;
    bool has_link = false;
    size_t len;

    if (dist_is_dir_inode(inode)) {
        dist_pathinfo_dir(xl, req);
        return;
    }
    pthread_mutex_lock(&inode->lock);
    if (ctx->has_cached) {
        cached = ctx->cached;
        hashed = ctx->hashed;
        has_link = ctx->has_linkfile;
    }
    pthread_mutex_unlock(&inode->lock);
    if (cached < 0) {
        vl_unwind(req, -ESTALE); /* not looked up through us */
        return;
    }
    len = (size_t)snprintf(text, sizeof(text), "%s",
                           xl->children[cached]->name);
    if (hashed >= 0 && hashed != cached)
        len += (size_t)snprintf(text + len, sizeof(text) - len,
                                " hashed=%s", xl->children[hashed]->name);
    else if (hashed < 0) /* not "where it hashes": the rebalance asks */
        len += (size_t)snprintf(text + len, sizeof(text) - len,
                                " hashed=?");
    if (has_link && len < sizeof(text))
        snprintf(text + len, sizeof(text) - len, " linkto");
    dist_xattr_answer_text(xl, req, text);
}


static void
dist_layout_text_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_getxattr_args *a = VL_ARGS(req, getxattr);
    struct vl_loc loc = {.inode = a->loc.inode};
    struct dist_layout *l = NULL;
    struct vl_iatt iatt;
    char *text = NULL;
    size_t size = 1, len = 0;
    int rc;

    rc = dist_dir_sync(xl, req, &loc, false, &iatt);
    if (rc == 0)
        rc = dist_ictx_layout_copy(xl, a->loc.inode, &l);
    if (rc != 0)
        goto out;
    /* One line per subvolume: its name and at most 41 more bytes (two
     * 8-digit hex numbers, two u32s, four separators and the newline). */
    for (unsigned i = 0; i < l->n; i++)
        size += strlen(xl->children[i]->name) + 41;
    text = vl_malloc(xl, size, DIST_MT_TEXT);
    if (text == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    text[0] = '\0';
    for (unsigned i = 0; i < l->n; i++) {
        const struct dist_range *r = &l->r[i];
        bool ok = r->err == 0;

        len += (size_t)snprintf(text + len, size - len,
                                "%s %08x %08x %u %u\n",
                                xl->children[i]->name, ok ? r->start : 0,
                                ok ? r->stop : 0, ok ? r->generation : 0,
                                ok ? r->flags : 0);
    }
out:
    vl_free(l);
    if (rc == 0)
        dist_xattr_answer_text(xl, req, text);
    else
        vl_unwind(req, rc);
    vl_free(text);
}


void
dist_getxattr(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_getxattr_args *a = VL_ARGS(req, getxattr);
    vl_inode_t *inode = a->loc.inode;
    int rc;

    if (inode == NULL) {
        vl_unwind(req, -EINVAL);
        return;
    }
    if (a->name != NULL && strcmp(a->name, DIST_VX_PATHINFO) == 0) {
        dist_pathinfo(xl, req, inode);
        return;
    }
    if (a->name != NULL && strcmp(a->name, DIST_VX_LAYOUT) == 0) {
        if (!dist_is_dir_inode(inode)) {
            vl_unwind(req, -ENOTDIR);
            return;
        }
        rc = dist_task_run(xl, req, dist_layout_text_task);
        if (rc != 0)
            vl_unwind(req, rc);
        return;
    }
    if (a->name != NULL
        && strncmp(a->name, DIST_BRICK_PREFIX, strlen(DIST_BRICK_PREFIX))
               == 0) {
        vl_unwind(req, -EPERM);
        return;
    }
    dist_fop_route_xattr(xl, req);
}


/* fix-layout and commit-layout of a directory. */
static void
dist_layout_set_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_setxattr_args *a = VL_ARGS(req, setxattr);
    bool is_fix = strcmp(a->name, DIST_VX_FIX_LAYOUT) == 0;
    struct dist_layout *l;
    struct vl_iatt iatt;
    dist_mask_t mask = dist_mask_none();
    int rc;

    rc = dist_dir_sync(xl, req, &a->loc, is_fix, &iatt);
    if (rc != 0 || is_fix) {
        vl_unwind(req, rc);
        return;
    }
    rc = dist_ictx_layout_copy(xl, a->loc.inode, &l);
    if (rc != 0) {
        vl_unwind(req, rc);
        return;
    }
    for (unsigned i = 0; i < l->n; i++) {
        if (l->r[i].err != 0)
            continue;
        l->r[i].flags |= DIST_FLAG_COMMITTED;
        dist_mask_set(&mask, i);
    }
    if (!dist_mask_equal(mask, dist_up_mask(xl)))
        rc = -ENOTCONN; /* a copy we cannot mark: do not claim it */
    if (rc == 0) {
        dist_layout_write(xl, req, &a->loc, l, mask);
        for (unsigned i = 0; i < l->n; i++)
            if (dist_mask_test(mask, i) && l->r[i].err != 0 && rc == 0)
                rc = l->r[i].err;
    }
    if (rc == 0)
        dist_ictx_set_layout(xl, a->loc.inode, l);
    else
        vl_free(l);
    vl_unwind(req, rc);
}


/* ---- user xattrs of a directory: every copy, or none ----
 *
 * A directory's xattr is set (or removed) on every up copy in parallel.
 * When that fails on some copies and succeeded on others, the ones done
 * are put back as a failed copy still has it (its value, or no such
 * key: read there after the round), and the error is answered: all
 * copies say what they said before. If that read or a put-back fails as
 * well (a second fault), the copies differ: logged with what is left;
 * reads of a directory's xattrs go to its first up copy. A removexattr
 * that finds no such key on some copies and removes it from the others
 * is done (the key is gone from every copy).
 */

#define DIST_XATTR_VALUE_MAX 65536

static void
dist_dir_xattr_task(vl_xlator_t *xl, vl_req_t *req)
{
    union vl_fop_args *args = dist_args_new(xl);
    struct dist_call *calls = dist_calls_new(xl);
    unsigned n = dist_priv(xl)->n;
    bool is_set = req->op == VL_FOP_SETXATTR;
    const char *name = is_set ? req->args.setxattr.name
                              : req->args.removexattr.name;
    vl_inode_t *inode = is_set ? req->args.setxattr.loc.inode
                               : req->args.removexattr.loc.inode;
    dist_mask_t done = dist_mask_none();
    int first = -1, failed = -1, rc = 0, urc;
    struct dist_call held;
    bool is_absent = false;

    memset(&held, 0, sizeof(held));
    if (args == NULL || calls == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    for (unsigned i = 0; i < n; i++)
        args[i] = req->args;
    dist_fan_sync(xl, req, dist_up_mask(xl), req->op, args, calls);
    for (unsigned i = 0; i < n; i++) {
        int st = calls[i].status;

        if (st == 0 || (!is_set && st == -ENODATA)) {
            if (st == 0)
                dist_mask_set(&done, i);
            else
                is_absent = true;
            if (first < 0 && st == 0)
                first = (int)i;
        } else if (st != -ENOTCONN && failed < 0) {
            failed = (int)i;
            rc = st;
        }
    }
    if (failed < 0) {
        if (first < 0)
            rc = is_absent ? -ENODATA : -ENOTCONN;
        else {
            req->reply = calls[first].reply;
            memset(&calls[first].reply, 0, sizeof(calls[first].reply));
        }
        goto out;
    }
    dist_calls_clear(calls, n);
    if (dist_mask_is_empty(done))
        goto out;
    /* What the failed copy still holds is what the others held. */
    memset(&args[failed], 0, sizeof(args[failed]));
    args[failed].getxattr.loc.inode = inode;
    args[failed].getxattr.name = name;
    args[failed].getxattr.size = DIST_XATTR_VALUE_MAX;
    /* Into a call of its own: the fan-out below resets all of calls. */
    urc = dist_call_sync(xl, req, (unsigned)failed, VL_FOP_GETXATTR,
                         &args[failed], &held);
    for (unsigned i = 0; i < n && (urc == 0 || urc == -ENODATA); i++) {
        if (!dist_mask_test(done, i))
            continue;
        memset(&args[i], 0, sizeof(args[i]));
        if (urc == 0) {
            args[i].setxattr.loc.inode = inode;
            args[i].setxattr.name = name;
            args[i].setxattr.value = held.reply.xattr;
            args[i].setxattr.size = (size_t)held.reply.count;
        } else {
            args[i].removexattr.loc.inode = inode;
            args[i].removexattr.name = name;
        }
    }
    if (urc == 0 || urc == -ENODATA) {
        dist_fan_sync(xl, req, done,
                      urc == 0 ? VL_FOP_SETXATTR : VL_FOP_REMOVEXATTR, args,
                      calls);
        for (unsigned i = 0; i < n; i++)
            if (dist_mask_test(done, i) && calls[i].status == 0)
                dist_mask_clear(&done, i);
    }
    if (!dist_mask_is_empty(done)) {
        char g[VL_GFID_STR_LEN];

        vl_log(xl, VL_LOG_ERROR, "%sxattr %s of directory %s failed on %s "
               "(%s) and could not be undone on %u other copies: the "
               "copies differ", is_set ? "set" : "remove", name,
               vl_gfid_to_str(&inode->gfid, g), xl->children[failed]->name,
               strerror(-rc), dist_mask_count(done));
    }
out:
    vl_reply_clear(&held.reply);
    vl_free(args);
    dist_calls_free(calls, n);
    vl_unwind(req, rc);
}


/* A directory's setattr ran on every up copy (dist-route.c) and failed
 * on some: the copies done get back the attributes it changed, as the
 * first failed copy (unchanged) still has them; the caller answers the
 * error. Logged when that read or a put-back fails (the copies then
 * differ: the next named lookup's merge answers the hashed copy's). */
void
dist_dir_setattr_undo(vl_xlator_t *xl, vl_req_t *req,
                      const struct dist_call *calls)
{
    const struct vl_setattr_args *a = VL_ARGS(req, setattr);
    vl_inode_t *inode = a->fd != NULL ? a->fd->inode : a->loc.inode;
    unsigned n = dist_priv(xl)->n;
    union vl_fop_args *args = NULL;
    struct dist_call *undo = NULL;
    dist_mask_t done = dist_mask_none();
    struct dist_call old;
    uint32_t valid = 0;
    int failed = -1, rc;

    for (unsigned i = 0; i < n; i++) {
        if (calls[i].status == 0)
            dist_mask_set(&done, i);
        else if (calls[i].status != -ENOTCONN && failed < 0)
            failed = (int)i;
    }
    if (failed < 0 || dist_mask_is_empty(done) || inode == NULL)
        return;
    if (a->valid & (VL_SET_MODE | VL_SET_KILL_SUIDGID | VL_SET_UID
                    | VL_SET_GID))
        valid |= VL_SET_MODE; /* a chown may clear setgid */
    valid |= a->valid & (VL_SET_UID | VL_SET_GID);
    if (a->valid & (VL_SET_ATIME | VL_SET_ATIME_NOW))
        valid |= VL_SET_ATIME;
    if (a->valid & (VL_SET_MTIME | VL_SET_MTIME_NOW))
        valid |= VL_SET_MTIME;
    memset(&old, 0, sizeof(old));
    args = dist_args_new(xl);
    undo = dist_calls_new(xl);
    rc = args != NULL && undo != NULL ? 0 : -ENOMEM;
    if (rc == 0) {
        args[failed].lookup.loc.inode = inode;
        rc = dist_call_sync(xl, req, (unsigned)failed, VL_FOP_LOOKUP,
                            &args[failed], &old);
    }
    if (rc == 0) {
        for (unsigned i = 0; i < n; i++) {
            memset(&args[i], 0, sizeof(args[i]));
            args[i].setattr.loc.inode = inode;
            args[i].setattr.attr = old.reply.iatt;
            args[i].setattr.valid = valid;
        }
        dist_fan_sync(xl, req, done, VL_FOP_SETATTR, args, undo);
        for (unsigned i = 0; i < n; i++)
            if (dist_mask_test(done, i) && undo[i].status == 0)
                dist_mask_clear(&done, i);
    }
    if (!dist_mask_is_empty(done)) {
        char g[VL_GFID_STR_LEN];

        vl_log(xl, VL_LOG_ERROR, "setattr of directory %s failed on %s "
               "(%s) and could not be undone on %u other copies: the "
               "copies differ", vl_gfid_to_str(&inode->gfid, g),
               xl->children[failed]->name,
               strerror(-calls[failed].status), dist_mask_count(done));
    }
    vl_reply_clear(&old.reply);
    vl_free(args);
    dist_calls_free(undo, n);
}


static void
dist_dir_xattr(vl_xlator_t *xl, vl_req_t *req)
{
    int rc = dist_task_run(xl, req, dist_dir_xattr_task);

    if (rc != 0)
        vl_unwind(req, rc);
}


void
dist_setxattr(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_setxattr_args *a = VL_ARGS(req, setxattr);
    int rc;

    if (a->name == NULL || a->loc.inode == NULL) {
        vl_unwind(req, -EINVAL);
        return;
    }
    if (strcmp(a->name, DIST_VX_FIX_LAYOUT) == 0
        || strcmp(a->name, DIST_VX_COMMIT_LAYOUT) == 0) {
        if (!dist_is_dir_inode(a->loc.inode)) {
            vl_unwind(req, -ENOTDIR);
            return;
        }
        rc = dist_task_run(xl, req, dist_layout_set_task);
        if (rc != 0)
            vl_unwind(req, rc);
        return;
    }
    if (strncmp(a->name, DIST_VX_PREFIX, strlen(DIST_VX_PREFIX)) == 0) {
        vl_unwind(req, -ENOTSUP);
        return;
    }
    if (strncmp(a->name, DIST_BRICK_PREFIX, strlen(DIST_BRICK_PREFIX)) == 0) {
        vl_unwind(req, -EPERM);
        return;
    }
    if (dist_is_dir_inode(a->loc.inode)) {
        dist_dir_xattr(xl, req);
        return;
    }
    dist_fop_route_xattr(xl, req);
}


void
dist_removexattr(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_removexattr_args *a = VL_ARGS(req, removexattr);

    if (a->name == NULL || a->loc.inode == NULL) {
        vl_unwind(req, -EINVAL);
        return;
    }
    if (strncmp(a->name, DIST_BRICK_PREFIX, strlen(DIST_BRICK_PREFIX)) == 0) {
        vl_unwind(req, -EPERM);
        return;
    }
    if (dist_is_dir_inode(a->loc.inode)) {
        dist_dir_xattr(xl, req);
        return;
    }
    dist_fop_route_xattr(xl, req);
}
