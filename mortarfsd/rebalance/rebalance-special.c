/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rebalance-special: migration of symlinks, device nodes, fifos and
 * sockets (doc/rebalance.md, "Special files"). They have no data and
 * cannot be written through the volume: no marker and no freeze. The
 * object is recreated on the destination with the same GFID (the commit
 * point), its attributes copied, the source unlinked; a copy left beside
 * the committed one by a crash is finished by fsd_rb_stale_special.
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


/* A symlink, device, fifo or socket from xs to xd: recreated on xd with
 * the same GFID (the commit point: lookups on the hashed subvolume find
 * it), its attributes copied, the source unlinked. A crash in between
 * leaves two copies of the GFID; the next run copies the attributes again
 * and unlinks the source (fsd_rebal_file). Nothing to freeze: there is no
 * data, and a client cannot write to these through the volume. */
enum fsd_rebal_outcome
fsd_rb_migrate_special(vl_inode_t *dir, const char *name, vl_inode_t *inode,
                       vl_xlator_t *xs, vl_xlator_t *xd, char *why,
                       size_t why_len)
{
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    struct vl_iatt st;
    struct vl_iatt ia;
    char *target = NULL;
    bool is_created = false;
    const char *step = "lookup source";
    int rc;

    rc = fsd_rb_lookup(xs, dir, name, &st);
    if (rc == -ENOENT || (rc == 0 && !vl_gfid_equal(&st.gfid, &inode->gfid)))
        return FSD_RO_IN_PLACE;
    if (rc != 0)
        goto fail;
    if (S_ISREG(st.mode) || S_ISDIR(st.mode))
        return FSD_RO_IN_PLACE; /* replaced meanwhile: next run */
    if (st.nlink > 1) {
        snprintf(why, why_len, "'%s' on %s: skipped, hard-linked", name,
                 xs->name);
        return FSD_RO_SKIPPED;
    }
    if (S_ISLNK(st.mode)) {
        step = "readlink";
        a.readlink.loc.inode = inode;
        a.readlink.size = 4096;
        rc = fsd_rb_call(xs, VL_FOP_READLINK, &a, 0, &r);
        if (rc == 0 && r.link == NULL)
            rc = -EIO;
        if (rc == 0) {
            target = strdup(r.link); /* r.link is libvol's (vl_free) */
            if (target == NULL)
                rc = -ENOMEM;
        }
        vl_reply_clear(&r);
        if (rc != 0)
            goto fail;
    }

    /* A link file of ours may be there (an older run skipped these). */
    step = "lookup destination";
    rc = fsd_rb_lookup(xd, dir, name, &ia);
    if (rc == 0) {
        struct fsd_rebal_ent ent = {.kind = fsd_rebal_classify(&ia),
                                    .iatt = ia};

        if ((ent.kind != FSD_RK_LINK && ent.kind != FSD_RK_MARKER)
            || !fsd_rb_is_dht_file(xd, dir, name, &ia.gfid)) {
            rc = -EEXIST;
            goto fail;
        }
        fsd_rb_remove_special(xd, dir, name, &ent);
    } else if (rc != -ENOENT) {
        goto fail;
    }

    step = "create";
    memset(&a, 0, sizeof(a));
    if (target != NULL) {
        a.symlink.loc.parent = dir;
        a.symlink.loc.name = name;
        a.symlink.loc.inode = inode;
        a.symlink.target = target;
        a.symlink.gfid = inode->gfid;
        rc = fsd_rb_call(xd, VL_FOP_SYMLINK, &a, 0, NULL);
    } else {
        a.mknod.loc.parent = dir;
        a.mknod.loc.name = name;
        a.mknod.loc.inode = inode;
        a.mknod.mode = st.mode;
        a.mknod.rdev = st.rdev;
        a.mknod.gfid = inode->gfid;
        rc = fsd_rb_call(xd, VL_FOP_MKNOD, &a, 0, NULL);
    }
    if (rc != 0)
        goto fail;
    is_created = true;
    step = "attributes";
    rc = fsd_rb_copy_attrs(xs, xd, inode, &st);
    if (rc != 0)
        goto fail;
    fsd_rb_fault("special-created", name, xs, xd);
    rc = fsd_rb_unlink(xs, dir, name, inode);
    if (rc != 0 && rc != -ENOENT)
        vl_glog("rebalance", VL_LOG_WARNING, "%s: unlinking moved '%s': %s "
                "(the next run removes it)", xs->name, name, strerror(-rc));
    free(target);
    return FSD_RO_MOVED;

fail:
    snprintf(why, why_len, "'%s' %s -> %s: %s: %s", name, xs->name, xd->name,
             step, strerror(-rc));
    if (is_created) {
        /* The source stays the one copy. */
        rc = fsd_rb_unlink(xd, dir, name, inode);
        if (rc != 0 && rc != -ENOENT)
            vl_glog("rebalance", VL_LOG_WARNING, "%s: removing the new copy "
                    "of '%s': %s", xd->name, name, strerror(-rc));
    }
    free(target);
    return FSD_RO_FAILED;
}


/* A stale symlink/device/fifo/socket on xs beside the copy on hashed xh
 * (a crash during fsd_rb_migrate_special): attributes again, then unlink. */
int
fsd_rb_stale_special(vl_inode_t *dir, const char *name, vl_inode_t *inode,
                     vl_xlator_t *xs, vl_xlator_t *xh, char *why,
                     size_t why_len)
{
    struct vl_iatt st;
    const char *step = "lookup";
    int rc;

    rc = fsd_rb_lookup(xs, dir, name, &st);
    if (rc == -ENOENT)
        return 0;
    if (rc == 0 && !vl_gfid_equal(&st.gfid, &inode->gfid))
        rc = -EEXIST;
    if (rc == 0) {
        step = "attributes";
        rc = fsd_rb_copy_attrs(xs, xh, inode, &st);
    }
    if (rc == 0) {
        step = "unlink";
        rc = fsd_rb_unlink(xs, dir, name, inode);
    }
    if (rc != 0 && rc != -ENOENT) {
        snprintf(why, why_len, "'%s': stale copy on %s: %s: %s", name,
                 xs->name, step, strerror(-rc));
        return rc;
    }
    vl_glog("rebalance", VL_LOG_INFO, "%s: removed the stale copy of '%s'",
            xs->name, name);
    return 0;
}
