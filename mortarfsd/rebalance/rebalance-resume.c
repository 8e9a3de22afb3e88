/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rebalance-resume: what a crash between a commit and the unlink of the
 * source leaves (doc/rebalance.md, "Crashes and restarts"). The commit
 * stamp (S's size, mtime and ctime under the freeze, on D) tells an
 * untouched stale source (unlinked) from one that writes reached after
 * the commit: copied over D again when D is untouched, else saved as
 * NAME.rebal-conflict beside it.
 * Intercepts nothing; no state of its own.
 * Threads: rebalance workers.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rebalance-migrate.h"


/* The source's size, mtime and ctime at the commit, kept on the committed
 * destination: after a crash between the commit and the unlink of the
 * source, the next run tells an untouched stale source (unlinked) from
 * one that writes reached after the commit (copied again). */
struct rb_stamp {
    uint64_t size;       /* st_size */
    int64_t mtime;       /* seconds */
    uint32_t mtime_ns;
    int64_t ctime;       /* seconds */
    uint32_t ctime_ns;
};


int
fsd_rb_stamp_set(vl_xlator_t *xd, vl_inode_t *inode, const struct vl_iatt *st)
{
    char v[128];
    int len;

    len = snprintf(v, sizeof(v), "%" PRIu64 " %" PRId64 ".%09" PRIu32 " %"
                   PRId64 ".%09" PRIu32, st->size, (int64_t)st->mtime,
                   (uint32_t)st->mtime_ns, (int64_t)st->ctime,
                   (uint32_t)st->ctime_ns);
    return fsd_rb_setxattr(xd, inode, RB_STAMP, v, (size_t)len);
}


/* -ENODATA when xd's copy has no stamp (a file committed by an older
 * run), -EINVAL when it is garbled. */
static int
rb_stamp_get(vl_xlator_t *xd, vl_inode_t *inode, struct rb_stamp *out)
{
    struct vl_reply r = {0};
    char v[128];
    int rc;

    rc = fsd_rb_getxattr(xd, inode, RB_STAMP, &r);
    if (rc == 0 && (r.xattr == NULL || r.count <= 0
                    || (size_t)r.count >= sizeof(v)))
        rc = -EINVAL;
    if (rc == 0) {
        memcpy(v, r.xattr, (size_t)r.count);
        v[r.count] = '\0';
        if (sscanf(v, "%" SCNu64 " %" SCNd64 ".%" SCNu32 " %" SCNd64 ".%"
                   SCNu32, &out->size, &out->mtime, &out->mtime_ns,
                   &out->ctime, &out->ctime_ns) != 5)
            rc = -EINVAL;
    }
    vl_reply_clear(&r);
    return rc;
}


static bool
rb_stamp_matches(const struct rb_stamp *sp, const struct vl_iatt *st,
                 bool with_ctime)
{
    return sp->size == st->size && sp->mtime == (int64_t)st->mtime
           && sp->mtime_ns == (uint32_t)st->mtime_ns
           && (!with_ctime || (sp->ctime == (int64_t)st->ctime
                               && sp->ctime_ns == (uint32_t)st->ctime_ns));
}


int
fsd_rb_stamp_matches(vl_xlator_t *xd, vl_inode_t *inode,
                     const struct vl_iatt *st, bool with_ctime)
{
    struct rb_stamp sp;
    int rc = rb_stamp_get(xd, inode, &sp);

    if (rc != 0)
        return rc;
    return rb_stamp_matches(&sp, st, with_ctime) ? 1 : 0;
}


/* Copies the stale source xs over the committed copy on xh again (writes
 * reached xs after the commit, see struct rb_stamp), both frozen, then
 * marks xs migrated and unlinks it. */
static int
rb_recopy(vl_inode_t *dir, const char *name, vl_inode_t *inode,
          vl_xlator_t *xs, vl_xlator_t *xh, const char **step)
{
    uint64_t owner = fsd_rb_owner();
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    vl_fd_t *fd_s = NULL;
    vl_fd_t *fd_h = NULL;
    bool is_frozen_s = false;
    bool is_frozen_h = false;
    struct vl_iatt st;
    int rc;

    *step = "freeze";
    rc = fsd_rb_freeze(xs, inode, VL_LOCK_WAIT, owner);
    is_frozen_s = rc == 0;
    if (rc == 0)
        rc = fsd_rb_freeze(xh, inode, VL_LOCK_WAIT, owner);
    is_frozen_h = is_frozen_s && rc == 0;
    if (rc != 0)
        goto out;
    *step = "open";
    rc = fsd_rb_open(xs, inode, O_RDONLY, &fd_s);
    if (rc == 0)
        rc = fsd_rb_open(xh, inode, O_RDWR, &fd_h);
    if (rc != 0)
        goto out;
    *step = "stat source under the freeze";
    a.stat.loc.inode = inode;
    a.stat.fd = fd_s;
    rc = fsd_rb_call(xs, VL_FOP_STAT, &a, 0, &r);
    st = r.iatt;
    vl_reply_clear(&r);
    if (rc != 0)
        goto out;
    *step = "copy";
    rc = fsd_rb_copy_data(xs, fd_s, xh, fd_h, st.size, NULL);
    if (rc == 0) {
        memset(&a, 0, sizeof(a));
        a.fsync.fd = fd_h;
        rc = fsd_rb_call(xh, VL_FOP_FSYNC, &a, 0, NULL);
    }
    if (rc != 0)
        goto out;
    *step = "attributes";
    rc = fsd_rb_copy_attrs(xs, xh, inode, &st);
    if (rc == 0)
        rc = fsd_rb_stamp_set(xh, inode, &st);
    if (rc != 0)
        goto out;
    *step = "unlink";
    rc = fsd_rb_setxattr(xs, inode, RB_MIGRATED, xh->name, strlen(xh->name));
    if (rc != 0)
        vl_glog("rebalance", VL_LOG_WARNING, "%s: marking '%s' migrated: "
                "%s", xs->name, name, strerror(-rc));
    rc = fsd_rb_unlink(xs, dir, name, inode);
out:
    vl_fd_unref(fd_s);
    vl_fd_unref(fd_h);
    if (is_frozen_h)
        fsd_rb_freeze(xh, inode, VL_LOCK_UNLOCK, owner);
    if (is_frozen_s)
        fsd_rb_freeze(xs, inode, VL_LOCK_UNLOCK, owner);
    return rc;
}


#define RB_CONFLICT_SUFFIX ".rebal-conflict"


/* Both copies of name changed after an interrupted migration: the stale
 * one on xs (size bytes) becomes a new file name.rebal-conflict (a new
 * GFID, created through distribute, so it is an ordinary file of the
 * volume) and is unlinked on xs: nothing is lost and the name is no
 * longer listed twice. */
static int
rb_save_conflict(const struct fsd_rebal_io *io, vl_inode_t *dir,
                 const char *name, vl_inode_t *inode, vl_xlator_t *xs,
                 const struct vl_iatt *st, char *saved, size_t saved_len)
{
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    vl_inode_t *fresh = NULL;
    vl_inode_t *linked = NULL;
    vl_fd_t *fd_n = NULL;
    vl_fd_t *fd_s = NULL;
    int rc;

    if ((size_t)snprintf(saved, saved_len, "%s%s", name, RB_CONFLICT_SUFFIX)
        >= saved_len || strlen(saved) > 255)
        return -ENAMETOOLONG;
    fresh = vl_inode_new(dir->table);
    if (fresh != NULL)
        fd_n = vl_fd_new(fresh, O_RDWR, (uint32_t)getpid());
    if (fd_n == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    a.create.loc.parent = dir;
    a.create.loc.name = saved;
    a.create.loc.inode = fresh;
    a.create.flags = O_RDWR | O_CREAT | O_EXCL;
    a.create.mode = S_IFREG | (st->mode & 0777);
    a.create.umask = 0;
    vl_gfid_generate(&a.create.gfid);
    a.create.fd = fd_n;
    rc = fsd_rb_call(io->top, VL_FOP_CREATE, &a, 0, &r);
    if (rc == 0) {
        linked = vl_inode_link(fresh, &r.iatt);
        if (linked == NULL)
            rc = -ENOMEM;
    }
    vl_reply_clear(&r);
    if (rc != 0)
        goto out;
    /* fd_n is on fresh, which the link above gave its GFID. */
    rc = fsd_rb_setattr(io->top, linked, fd_n, st, VL_SET_UID | VL_SET_GID);
    if (rc == 0)
        rc = fsd_rb_open(xs, inode, O_RDONLY, &fd_s);
    if (rc == 0)
        rc = fsd_rb_copy_data(xs, fd_s, io->top, fd_n, st->size, NULL);
    if (rc == 0) {
        memset(&a, 0, sizeof(a));
        a.fsync.fd = fd_n;
        rc = fsd_rb_call(io->top, VL_FOP_FSYNC, &a, 0, NULL);
    }
    if (rc == 0)
        rc = fsd_rb_unlink(xs, dir, name, inode);
out:
    vl_fd_unref(fd_s);
    vl_fd_unref(fd_n);
    vl_inode_unref(linked);
    vl_inode_unref(fresh);
    return rc;
}


/* A stale source of name on xs beside the committed copy on hashed xh
 * (same GFID: a crash between the commit and the source's unlink). If
 * the source is as it was at the commit, it goes. If writes reached it
 * afterwards (the freeze's queued writes run when the dead rebalance's
 * connection drops) and the committed copy is untouched, the source is
 * copied over it again. If both changed, neither is destroyed: the file
 * fails and the source's data is kept as NAME.rebal-conflict. */
int
fsd_rb_stale_source(const struct fsd_rebal_io *io, vl_inode_t *dir,
                    const char *name, vl_inode_t *inode, vl_xlator_t *xs,
                    vl_xlator_t *xh, char *why, size_t why_len)
{
    struct rb_stamp sp;
    struct vl_iatt st_s;
    struct vl_iatt st_h;
    const char *step = "lookup";
    int rc;

    rc = fsd_rb_lookup(xs, dir, name, &st_s);
    if (rc == -ENOENT)
        return 0;
    if (rc == 0 && !vl_gfid_equal(&st_s.gfid, &inode->gfid)) {
        snprintf(why, why_len, "'%s' on %s has another GFID", name,
                 xs->name);
        return -EEXIST;
    }
    if (rc == 0)
        rc = fsd_rb_lookup(xh, dir, name, &st_h);
    if (rc != 0)
        goto fail;
    rc = rb_stamp_get(xh, inode, &sp);
    if (rc == 0 && !rb_stamp_matches(&sp, &st_s, true)) {
        if (!rb_stamp_matches(&sp, &st_h, false)) {
            char saved[300];

            rc = rb_save_conflict(io, dir, name, inode, xs, &st_s, saved,
                                  sizeof(saved));
            if (rc == 0)
                snprintf(why, why_len, "'%s': both copies changed after an "
                         "interrupted migration; the one on %s is the file, "
                         "the one on %s was saved as '%s'", name, xh->name,
                         xs->name, saved);
            else
                snprintf(why, why_len, "'%s': both copies changed after an "
                         "interrupted migration; the one on %s is the file, "
                         "the one on %s stays there (saving it failed: %s)",
                         name, xh->name, xs->name, strerror(-rc));
            return -EBUSY;
        }
        vl_glog("rebalance", VL_LOG_INFO, "%s: '%s' was written after its "
                "commit on %s: copying it again", xs->name, name, xh->name);
        rc = rb_recopy(dir, name, inode, xs, xh, &step);
        if (rc != 0)
            goto fail;
        return 1;
    }
    if (rc != 0 && rc != -ENODATA)
        vl_glog("rebalance", VL_LOG_WARNING, "%s: commit stamp of '%s': %s",
                xh->name, name, strerror(-rc));
    step = "unlink";
    rc = fsd_rb_unlink(xs, dir, name, inode);
    if (rc != 0 && rc != -ENOENT)
        goto fail;
    vl_glog("rebalance", VL_LOG_INFO, "%s: removed the stale source of "
            "'%s'", xs->name, name);
    return 0;

fail:
    snprintf(why, why_len, "'%s': stale source on %s: %s: %s", name,
             xs->name, step, strerror(-rc));
    return rc;
}
