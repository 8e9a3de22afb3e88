/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rebalance-hardlink: moves a hard-linked inode with all its names
 * (doc/rebalance.md, "Hard links"). The group of names comes from the
 * listing (rebalance-hlgroup.c); every decision is taken again from what
 * the subvolumes hold now (the census: each name looked up through
 * distribute for its hashed subvolume, and on every subvolume), so a
 * resumed run finishes whatever a killed one left.
 *
 * Target T: the source S when some name still hashes to S, else the
 * subvolume most names hash to. Moving S -> T:
 *   1. every name on S is found (S's nlink = the names listed), else the
 *      group waits for a rescan;
 *   2. one marker on T (a link file of the GFID there is reused), every
 *      other name a hard link of it on T: all names share the marker's
 *      mode, so the commit of the inode commits every name at once;
 *   3. data copy, freeze on S, the names counted again under it (a link
 *      made or removed by a client meanwhile aborts: rescan), copy again
 *      if S changed, fsync;
 *   4. owner, times, xattrs, the commit stamp and RB_HLSRC = S on T;
 *      linkto removed and the real mode set: the commit point;
 *   5. ACLs, S marked migrated, every name unlinked on S (a name a client
 *      removed meanwhile is removed on T too), link files on the names'
 *      other hashed subvolumes pointed at T, stale ones removed; if S
 *      still holds the inode (a link made after step 3), a rescan.
 * A failure before the commit turns T's copy back into link files (or
 * removes it). After a crash, a group with data on two subvolumes is
 * finished from step 5 when one copy's RB_HLSRC names the other.
 * Intercepts nothing; no state of its own but the census of one group.
 * Threads: the crawler thread (groups are moved one at a time).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rebalance-migrate.h"
#include "xlators/cluster/distribute/dist-hash.h"

#define RB_LAYOUT "mortar.dht.layout"

/* What the subvolumes hold now for the names of one group. */
struct rb_hl_view {
    const struct fsd_rebal_io *io;  /* borrowed */
    struct fsd_rb_hl_group *g;      /* borrowed */
    vl_inode_t *inode;              /* a reference; the group's GFID */
    int *hashed;                    /* owned; per name, -1: not this
                                       inode any more */
    enum fsd_rebal_kind *kind;      /* owned; [name * n_subs + sub], this
                                       GFID only */
    struct vl_iatt *iatt;           /* owned; same index */
    bool *is_foreign;               /* owned; same index: another object */
};

#define RB_HL_AT(v, i, s) ((i) * (v)->io->n_subs + (size_t)(s))


/* Where name hashes in dir, from the directory's layout through
 * distribute (the hash is the distribute contract's). Not pathinfo: it
 * answers per inode, and the names of one inode hash to different
 * subvolumes. */
int
fsd_rb_name_hashed(const struct fsd_rebal_io *io, vl_inode_t *dir,
                   const char *name, int *out)
{
    const char *names[FSD_RB_HL_MAX_SUBS];
    struct vl_reply r = {0};
    int rc;

    *out = -1;
    if (io->n_subs > FSD_RB_HL_MAX_SUBS)
        return -EINVAL;
    for (size_t i = 0; i < io->n_subs; i++)
        names[i] = io->subs[i]->name;
    rc = fsd_rb_getxattr(io->top, dir, RB_LAYOUT, &r);
    if (rc == 0 && (r.xattr == NULL || r.count <= 0))
        rc = -EINVAL;
    if (rc == 0)
        *out = fsd_rb_layout_find(r.xattr, (size_t)r.count,
                                  dist_hash_placement(name), names,
                                  io->n_subs);
    vl_reply_clear(&r);
    if (rc == 0 && *out < 0)
        rc = -EINVAL; /* a hole in the layout */
    return rc;
}


static void
rb_hl_view_free(struct rb_hl_view *v)
{
    vl_inode_unref(v->inode);
    free(v->hashed);
    free(v->kind);
    free(v->iatt);
    free(v->is_foreign);
}


/* Looks every name up through distribute and on every subvolume. */
static int
rb_hl_census(struct rb_hl_view *v, char *why, size_t why_len)
{
    const struct fsd_rebal_io *io = v->io;
    struct fsd_rb_hl_group *g = v->g;
    size_t n = g->n_names * io->n_subs;
    int rc = 0;

    v->hashed = calloc(g->n_names, sizeof(*v->hashed));
    v->kind = calloc(n, sizeof(*v->kind));
    v->iatt = calloc(n, sizeof(*v->iatt));
    v->is_foreign = calloc(n, sizeof(*v->is_foreign));
    if (v->hashed == NULL || v->kind == NULL || v->iatt == NULL
        || v->is_foreign == NULL)
        return -ENOMEM;
    for (size_t i = 0; rc == 0 && i < g->n_names; i++) {
        struct fsd_rb_hl_name *nm = &g->names[i];
        vl_inode_t *ino = NULL;
        int h = -1;

        rc = fsd_rb_hashed(io, nm->dir, nm->name, &ino, &h);
        if (rc == 0)
            rc = fsd_rb_name_hashed(io, nm->dir, nm->name, &h);
        if (rc == -ENOENT || rc == -ESTALE) {
            rc = 0; /* gone (ESTALE: with its directory) */
            h = -1;
        } else if (rc == 0 && !vl_gfid_equal(&ino->gfid, &g->gfid)) {
            h = -1; /* the name is another file now */
        } else if (rc != 0) {
            snprintf(why, why_len, "'%s/%s': where it hashes: %s", nm->path,
                     nm->name, strerror(-rc));
            break;
        }
        v->hashed[i] = h;
        if (ino != NULL && h >= 0 && v->inode == NULL)
            v->inode = vl_inode_ref(ino);
        vl_inode_unref(ino);
        for (size_t s = 0; rc == 0 && s < io->n_subs; s++) {
            struct vl_iatt ia;

            rc = fsd_rb_lookup(io->subs[s], nm->dir, nm->name, &ia);
            if (rc == -ENOENT || rc == -ESTALE) {
                rc = 0;
                continue;
            }
            if (rc != 0) {
                snprintf(why, why_len, "'%s/%s' on %s: %s", nm->path,
                         nm->name, io->subs[s]->name, strerror(-rc));
                break;
            }
            if (!vl_gfid_equal(&ia.gfid, &g->gfid)) {
                v->is_foreign[RB_HL_AT(v, i, s)] = true;
                continue;
            }
            v->kind[RB_HL_AT(v, i, s)] = fsd_rebal_classify(&ia);
            v->iatt[RB_HL_AT(v, i, s)] = ia;
        }
    }
    if (rc == 0 && v->inode == NULL)
        rc = -ENOENT; /* every name is gone or another file */
    return rc;
}


static bool
rb_hl_is_dht(enum fsd_rebal_kind k)
{
    return k == FSD_RK_LINK || k == FSD_RK_MARKER;
}


/* Removes name i's link file or marker of the GFID on subvolume s. */
static void
rb_hl_drop(struct rb_hl_view *v, size_t i, size_t s)
{
    struct fsd_rebal_ent ent = {
        .kind = v->kind[RB_HL_AT(v, i, s)],
        .iatt = v->iatt[RB_HL_AT(v, i, s)],
    };
    struct fsd_rb_hl_name *nm = &v->g->names[i];

    fsd_rb_remove_special(v->io->subs[s], nm->dir, nm->name, &ent);
    v->kind[RB_HL_AT(v, i, s)] = FSD_RK_NONE;
}


/* Names no longer of this inode keep no link file or marker of it (a
 * marker name would become a real name at the commit). */
static void
rb_hl_strays(struct rb_hl_view *v)
{
    for (size_t i = 0; i < v->g->n_names; i++) {
        if (v->hashed[i] >= 0)
            continue;
        for (size_t s = 0; s < v->io->n_subs; s++)
            if (rb_hl_is_dht(v->kind[RB_HL_AT(v, i, s)]))
                rb_hl_drop(v, i, s);
    }
}


/* Link files on every name's hashed subvolume pointing to data
 * subvolume d, and no other link file or marker of the names. */
static int
rb_hl_links(struct rb_hl_view *v, size_t d, char *why, size_t why_len)
{
    const struct fsd_rebal_io *io = v->io;
    int first = 0;

    for (size_t i = 0; i < v->g->n_names; i++) {
        struct fsd_rb_hl_name *nm = &v->g->names[i];
        int h = v->hashed[i];

        if (h < 0)
            continue;
        if ((size_t)h != d) {
            int rc = fsd_rb_ensure_linkfile(io->subs[h], nm->dir, nm->name,
                                            v->inode, io->subs[d]->name);

            if (rc == 0) {
                v->kind[RB_HL_AT(v, i, h)] = FSD_RK_LINK;
            } else if (first == 0) {
                first = rc;
                snprintf(why, why_len, "'%s/%s': link file on %s to %s: %s",
                         nm->path, nm->name, io->subs[h]->name,
                         io->subs[d]->name, strerror(-rc));
            }
        }
        for (size_t s = 0; s < io->n_subs; s++)
            if (s != d && (int)s != h
                && rb_hl_is_dht(v->kind[RB_HL_AT(v, i, s)]))
                rb_hl_drop(v, i, s);
    }
    return first;
}


/* Turns the copy of the inode on x (markers of an unfinished move) back:
 * names hashing to x become link files to src again, the others go. */
static int
rb_hl_unmark(struct rb_hl_view *v, size_t x, size_t src)
{
    const struct fsd_rebal_io *io = v->io;
    vl_xlator_t *xl = io->subs[x];
    bool is_kept = false;
    vl_fd_t *fd = NULL;
    int rc = 0;

    for (size_t i = 0; i < v->g->n_names; i++) {
        if (!rb_hl_is_dht(v->kind[RB_HL_AT(v, i, x)]))
            continue;
        if (v->hashed[i] == (int)x) {
            is_kept = true;
            continue;
        }
        rc = fsd_rb_unlink(xl, v->g->names[i].dir, v->g->names[i].name,
                           v->inode);
        if (rc == 0 || rc == -ENOENT)
            v->kind[RB_HL_AT(v, i, x)] = FSD_RK_NONE;
    }
    if (!is_kept)
        return 0;
    /* Empty first: while the mode is still the marker's, lookups treat it
     * as a link file back to src anyway. */
    rc = fsd_rb_open(xl, v->inode, O_RDWR, &fd);
    if (rc == 0)
        rc = fsd_rb_truncate(xl, fd, 0);
    vl_fd_unref(fd);
    if (rc == 0)
        rc = fsd_rb_setxattr(xl, v->inode, RB_LINKTO, io->subs[src]->name,
                             strlen(io->subs[src]->name) + 1);
    if (rc == 0)
        rc = fsd_rb_chmod(xl, v->inode, S_ISVTX);
    for (size_t i = 0; rc == 0 && i < v->g->n_names; i++)
        if (v->kind[RB_HL_AT(v, i, x)] == FSD_RK_MARKER)
            v->kind[RB_HL_AT(v, i, x)] = FSD_RK_LINK;
    if (rc != 0)
        vl_glog("rebalance", VL_LOG_WARNING, "%s: turning the marker of a "
                "hard-linked inode back into link files: %s", xl->name,
                strerror(-rc));
    return rc;
}


/* Name i as a hard link of the inode on t (already there: nothing). */
static int
rb_hl_link_on(struct rb_hl_view *v, size_t i, size_t t)
{
    struct fsd_rb_hl_name *nm = &v->g->names[i];
    union vl_fop_args a = {0};
    struct vl_iatt ia;
    int rc;

    if (v->kind[RB_HL_AT(v, i, t)] != FSD_RK_NONE)
        return 0;
    a.link.oldloc.inode = v->inode;
    a.link.newloc.parent = nm->dir;
    a.link.newloc.name = nm->name;
    rc = fsd_rb_call(v->io->subs[t], VL_FOP_LINK, &a, 0, NULL);
    if (rc == -EEXIST) {
        rc = fsd_rb_lookup(v->io->subs[t], nm->dir, nm->name, &ia);
        if (rc == 0 && !vl_gfid_equal(&ia.gfid, &v->g->gfid))
            rc = -EEXIST;
    }
    if (rc == 0)
        v->kind[RB_HL_AT(v, i, t)] = FSD_RK_MARKER;
    return rc;
}


/* Step 5 (also the end of a move a crash interrupted after its commit):
 * the names leave S for T, link files point at T. Runs with S frozen
 * when called from rb_hl_move. */
static int
rb_hl_finish(struct rb_hl_view *v, size_t src, size_t t, char *why,
             size_t why_len)
{
    const struct fsd_rebal_io *io = v->io;
    vl_xlator_t *xs = io->subs[src];
    vl_xlator_t *xt = io->subs[t];
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    int first = 0;
    int rc;

    rc = fsd_rb_setxattr(xs, v->inode, RB_MIGRATED, xt->name,
                         strlen(xt->name));
    if (rc != 0)
        vl_glog("rebalance", VL_LOG_WARNING, "%s: marking a hard-linked "
                "inode migrated: %s", xs->name, strerror(-rc));
    for (size_t i = 0; i < v->g->n_names; i++) {
        struct fsd_rb_hl_name *nm = &v->g->names[i];

        if (v->kind[RB_HL_AT(v, i, src)] != FSD_RK_DATA)
            continue;
        rc = rb_hl_link_on(v, i, t);
        if (rc == 0) {
            rc = fsd_rb_unlink(xs, nm->dir, nm->name, v->inode);
            if (rc == -ENOENT) {
                /* A client removed this name meanwhile: so does T. */
                rc = fsd_rb_unlink(xt, nm->dir, nm->name, v->inode);
                v->hashed[i] = -1;
                v->kind[RB_HL_AT(v, i, t)] = FSD_RK_NONE;
                if (rc == -ENOENT)
                    rc = 0;
            } else if (rc == 0) {
                v->kind[RB_HL_AT(v, i, t)] = FSD_RK_DATA;
            }
            v->kind[RB_HL_AT(v, i, src)] = FSD_RK_NONE;
        }
        if (rc != 0 && first == 0) {
            first = rc;
            snprintf(why, why_len, "'%s/%s' %s -> %s: moving the name: %s",
                     nm->path, nm->name, xs->name, xt->name, strerror(-rc));
        }
        if (rc == 0)
            fsd_rb_fault("hardlink-name-moved", nm->name, xs, xt);
    }
    rc = rb_hl_links(v, t, why, why_len);
    if (first == 0)
        first = rc;
    /* A name linked on S after the names were counted is still there. */
    a.lookup.loc.inode = v->inode;
    rc = fsd_rb_call(xs, VL_FOP_LOOKUP, &a, 0, &r);
    if (rc == 0 && r.iatt.nlink > 0) {
        vl_glog("rebalance", VL_LOG_INFO, "%s: a hard-linked inode moved to "
                "%s still has %u name(s) there: looking for them",
                xs->name, xt->name, (unsigned)r.iatt.nlink);
        v->g->needs_rescan = true;
    }
    vl_reply_clear(&r);
    return first;
}


/* The names on src under the freeze: still exactly the k listed? */
static bool
rb_hl_same_names(struct rb_hl_view *v, size_t src, const struct vl_iatt *st,
                 size_t k)
{
    if (st->nlink != k)
        return false;
    for (size_t i = 0; i < v->g->n_names; i++) {
        struct fsd_rb_hl_name *nm = &v->g->names[i];
        struct vl_iatt ia;

        if (v->kind[RB_HL_AT(v, i, src)] != FSD_RK_DATA)
            continue;
        if (fsd_rb_lookup(v->io->subs[src], nm->dir, nm->name, &ia) != 0
            || !vl_gfid_equal(&ia.gfid, &v->g->gfid))
            return false;
    }
    return true;
}


/* Steps 1-5 from src to t. */
static enum fsd_rebal_outcome
rb_hl_move(struct rb_hl_view *v, size_t src, size_t t, uint64_t *bytes,
           char *why, size_t why_len)
{
    const struct fsd_rebal_io *io = v->io;
    vl_xlator_t *xs = io->subs[src];
    vl_xlator_t *xt = io->subs[t];
    uint64_t owner = fsd_rb_owner();
    enum fsd_rebal_outcome out = FSD_RO_FAILED;
    bool is_frozen = false;
    bool is_committed = false;
    vl_fd_t *fd_s = NULL;
    vl_fd_t *fd_d = NULL;
    struct vl_iatt st1 = {0};
    struct vl_iatt st2;
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    const char *step = "names";
    size_t k = 0;
    size_t first = SIZE_MAX;
    int rc = 0;

    /* 1. Every name on S known? A name on T as another file? */
    for (size_t i = 0; i < v->g->n_names; i++) {
        if (v->kind[RB_HL_AT(v, i, src)] != FSD_RK_DATA)
            continue;
        if (k++ == 0)
            st1 = v->iatt[RB_HL_AT(v, i, src)];
        if (v->is_foreign[RB_HL_AT(v, i, t)]) {
            snprintf(why, why_len, "'%s/%s' on %s: skipped, hard-linked "
                     "and the name is another file on %s",
                     v->g->names[i].path, v->g->names[i].name, xs->name,
                     xt->name);
            return FSD_RO_SKIPPED;
        }
        if (first == SIZE_MAX || (v->kind[RB_HL_AT(v, first, t)]
                                  == FSD_RK_NONE
                                  && v->kind[RB_HL_AT(v, i, t)]
                                     != FSD_RK_NONE))
            first = i;
    }
    if (k == 0)
        return FSD_RO_IN_PLACE;
    if (st1.nlink != k) {
        vl_glog("rebalance", VL_LOG_INFO, "%s: '%s/%s' has %u names, %zu "
                "found: looking for the others", xs->name,
                v->g->names[first].path, v->g->names[first].name,
                (unsigned)st1.nlink, k);
        v->g->needs_rescan = true;
        return FSD_RO_IN_PLACE;
    }
    step = "statfs destination";
    rc = fsd_rb_space_check(io, xt, v->g->names[first].dir, st1.size, why,
                            why_len);
    if (rc == -ENOSPC) {
        char tmp[256];

        snprintf(tmp, sizeof(tmp), "%s", why);
        snprintf(why, why_len, "'%s/%s' (hard-linked) on %s: skipped for "
                 "space: %s", v->g->names[first].path,
                 v->g->names[first].name, xs->name, tmp);
        return FSD_RO_SKIPPED;
    }
    if (rc != 0)
        goto fail;

    /* 2. One marker on T, the other names hard links of it. */
    rc = fsd_rb_dest_prepare(xt, v->g->names[first].dir,
                             v->g->names[first].name, v->inode, xs->name,
                             false, &fd_d, NULL, why, why_len);
    if (rc != 0)
        goto out;
    v->kind[RB_HL_AT(v, first, t)] = FSD_RK_MARKER;
    step = "hard links on the destination";
    for (size_t i = 0; rc == 0 && i < v->g->n_names; i++)
        if (v->kind[RB_HL_AT(v, i, src)] == FSD_RK_DATA)
            rc = rb_hl_link_on(v, i, t);
    if (rc != 0)
        goto fail;

    /* 3. Copy, freeze, the names again, copy again if S changed. */
    step = "open source";
    rc = fsd_rb_open(xs, v->inode, O_RDONLY, &fd_s);
    if (rc != 0)
        goto fail;
    step = "copy";
    rc = fsd_rb_copy_data(xs, fd_s, xt, fd_d, st1.size, io->stop);
    if (rc == -EINTR) {
        out = FSD_RO_STOPPED;
        goto out;
    }
    if (rc != 0)
        goto fail;
    step = "freeze";
    rc = fsd_rb_freeze(xs, v->inode, VL_LOCK_WAIT, owner);
    if (rc != 0)
        goto fail;
    is_frozen = true;
    step = "stat source under the freeze";
    a.stat.loc.inode = v->inode;
    a.stat.fd = fd_s;
    rc = fsd_rb_call(xs, VL_FOP_STAT, &a, 0, &r);
    st2 = r.iatt;
    vl_reply_clear(&r);
    if (rc != 0)
        goto fail;
    if (!rb_hl_same_names(v, src, &st2, k)) {
        vl_glog("rebalance", VL_LOG_INFO, "%s: the names of '%s/%s' changed "
                "during its move: looking for them again", xs->name,
                v->g->names[first].path, v->g->names[first].name);
        v->g->needs_rescan = true;
        out = FSD_RO_IN_PLACE;
        goto out;
    }
    /* 4. Catch up, fsync, attributes, stamp, source name; the commit. */
    rc = fsd_rb_finish_copy(xs, fd_s, xt, fd_d, v->inode, &st1, &st2,
                            &step);
    if (rc == 0)
        rc = fsd_rb_setxattr(xt, v->inode, RB_HLSRC, xs->name,
                             strlen(xs->name));
    if (rc != 0)
        goto fail;
    fsd_rb_fault("hardlink-before-commit", v->g->names[first].name, xs, xt);
    step = "commit";
    memset(&a, 0, sizeof(a));
    a.removexattr.loc.inode = v->inode;
    a.removexattr.name = RB_LINKTO;
    rc = fsd_rb_call(xt, VL_FOP_REMOVEXATTR, &a, 0, NULL);
    if (rc == 0)
        rc = fsd_rb_chmod(xt, v->inode, st2.mode & 07777);
    if (rc != 0)
        goto fail;
    is_committed = true;
    *bytes = st2.size;
    out = FSD_RO_MOVED;
    fsd_rb_fault("hardlink-after-commit", v->g->names[first].name, xs, xt);

    /* 5. ACLs, the names leave S, link files to T. */
    rc = fsd_rb_copy_xattrs(xs, xt, v->inode, RB_XA_ACL);
    if (rc != 0) {
        snprintf(why, why_len, "'%s/%s' %s -> %s: moved, but copying its "
                 "ACL failed: %s", v->g->names[first].path,
                 v->g->names[first].name, xs->name, xt->name, strerror(-rc));
        out = FSD_RO_FAILED;
    }
    if (rb_hl_finish(v, src, t, why, why_len) != 0)
        out = FSD_RO_FAILED;
    goto out;

fail:
    snprintf(why, why_len, "'%s/%s' (hard-linked) %s -> %s: %s: %s",
             v->g->names[first].path, v->g->names[first].name, xs->name,
             xt->name, step, strerror(-rc));
out:
    if (is_frozen) {
        rc = fsd_rb_freeze(xs, v->inode, VL_LOCK_UNLOCK, owner);
        if (rc != 0)
            vl_glog("rebalance", VL_LOG_WARNING, "%s: releasing the freeze "
                    "of a hard-linked inode: %s", xs->name, strerror(-rc));
    }
    vl_fd_unref(fd_s);
    vl_fd_unref(fd_d);
    if (!is_committed && fd_d != NULL)
        rb_hl_unmark(v, t, src); /* S stays the file */
    return out;
}


/* Which of data subvolumes a and b is the committed copy of a move a
 * crash interrupted (its RB_HLSRC names the other)? -1: neither. */
static int
rb_hl_committed(struct rb_hl_view *v, size_t a, size_t b)
{
    size_t pair[2][2] = {{a, b}, {b, a}};

    for (int k = 0; k < 2; k++) {
        vl_xlator_t *x = v->io->subs[pair[k][0]];
        const char *other = v->io->subs[pair[k][1]]->name;
        struct vl_reply r = {0};
        bool is_it;

        is_it = fsd_rb_getxattr(x, v->inode, RB_HLSRC, &r) == 0
                && r.xattr != NULL && (size_t)r.count == strlen(other)
                && memcmp(r.xattr, other, strlen(other)) == 0;
        vl_reply_clear(&r);
        if (is_it)
            return (int)pair[k][0];
    }
    return -1;
}


enum fsd_rebal_outcome
fsd_rb_hl_group(const struct fsd_rebal_io *io, struct fsd_rb_hl_group *g,
                uint64_t *bytes, char *why, size_t why_len)
{
    struct rb_hl_view v = {.io = io, .g = g};
    enum fsd_rebal_outcome out = FSD_RO_IN_PLACE;
    int data[2] = {-1, -1};
    int n_data = 0;
    int t = -1;
    int rc;

    *bytes = 0;
    g->needs_rescan = false;
    rc = rb_hl_census(&v, why, why_len);
    if (rc == -ENOENT)
        goto out; /* removed since the listing */
    if (rc != 0) {
        out = FSD_RO_FAILED;
        goto out;
    }
    rb_hl_strays(&v);
    for (size_t s = 0; s < io->n_subs; s++) {
        bool is_data = false;

        for (size_t i = 0; i < g->n_names; i++)
            is_data |= v.kind[RB_HL_AT(&v, i, s)] == FSD_RK_DATA;
        if (is_data && n_data++ < 2)
            data[n_data - 1] = (int)s;
    }
    if (n_data == 0)
        goto out;
    if (n_data > 2) {
        snprintf(why, why_len, "'%s/%s': a hard-linked inode with data on "
                 "%d subvolumes", g->names[0].path, g->names[0].name,
                 n_data);
        out = FSD_RO_FAILED;
        goto out;
    }
    if (n_data == 2) {
        /* A move interrupted after its commit. */
        int c = rb_hl_committed(&v, (size_t)data[0], (size_t)data[1]);
        int src = c == data[0] ? data[1] : data[0];
        struct vl_iatt st = {0};

        if (c < 0) {
            snprintf(why, why_len, "'%s/%s': a hard-linked inode with data "
                     "on %s and %s, neither committed by a move",
                     g->names[0].path, g->names[0].name,
                     io->subs[data[0]]->name, io->subs[data[1]]->name);
            out = FSD_RO_FAILED;
            goto out;
        }
        for (size_t i = 0; i < g->n_names; i++)
            if (v.kind[RB_HL_AT(&v, i, src)] == FSD_RK_DATA)
                st = v.iatt[RB_HL_AT(&v, i, src)];
        /* Unlinking names moves S's ctime: size and mtime only. */
        rc = fsd_rb_stamp_matches(io->subs[c], v.inode, &st, false);
        if (rc == 0) {
            snprintf(why, why_len, "'%s/%s': hard-linked, written on %s "
                     "after its commit on %s: both copies kept",
                     g->names[0].path, g->names[0].name,
                     io->subs[src]->name, io->subs[c]->name);
            out = FSD_RO_FAILED;
            goto out;
        }
        vl_glog("rebalance", VL_LOG_INFO, "'%s/%s': finishing the move of a "
                "hard-linked inode %s -> %s", g->names[0].path,
                g->names[0].name, io->subs[src]->name, io->subs[c]->name);
        rc = rb_hl_finish(&v, (size_t)src, (size_t)c, why, why_len);
        out = rc == 0 ? FSD_RO_MOVED : FSD_RO_FAILED;
        if (rc == 0)
            *bytes = st.size;
        goto out;
    }
    t = fsd_rb_hl_target(v.hashed, g->n_names, io->n_subs, data[0]);
    if (t < 0)
        goto out;
    /* Markers of an earlier attempt elsewhere go back to link files. */
    for (size_t s = 0; s < io->n_subs; s++) {
        bool has_marker = false;

        for (size_t i = 0; i < g->n_names; i++)
            has_marker |= v.kind[RB_HL_AT(&v, i, s)] == FSD_RK_MARKER;
        if (has_marker && (int)s != t)
            rb_hl_unmark(&v, s, (size_t)data[0]);
    }
    if (t == data[0]) {
        if (rb_hl_links(&v, (size_t)t, why, why_len) != 0)
            out = FSD_RO_FAILED;
        goto out;
    }
    out = rb_hl_move(&v, (size_t)data[0], (size_t)t, bytes, why, why_len);
    if (out == FSD_RO_SKIPPED || g->needs_rescan) {
        /* It stays on its source for now: every name must reach it. */
        char tmp[256];

        if (rb_hl_links(&v, (size_t)data[0], tmp, sizeof(tmp)) != 0
            && out != FSD_RO_FAILED) {
            snprintf(why, why_len, "%s", tmp);
            out = FSD_RO_FAILED;
        }
    }
out:
    rb_hl_view_free(&v);
    return out;
}


bool
fsd_rb_hl_reach(const struct fsd_rebal_io *io, vl_inode_t *dir,
                const char *name, const struct fsd_rebal_ent *ents)
{
    vl_inode_t *inode = NULL;
    struct vl_iatt ia;
    int d = -1;
    int h = -1;

    /* A hard-linked special file (never moved) is reached the same way:
     * the name's own hashed subvolume, not the inode's (pathinfo). */
    for (size_t i = 0; i < io->n_subs; i++) {
        if (ents[i].kind != FSD_RK_DATA && ents[i].kind != FSD_RK_OTHER)
            continue;
        if (d >= 0)
            return true; /* two copies: the group pass decides */
        d = (int)i;
    }
    if (d < 0 || fsd_rb_hashed(io, dir, name, &inode, &h) != 0)
        return d >= 0;
    if (fsd_rb_name_hashed(io, dir, name, &h) != 0) {
        vl_inode_unref(inode);
        return true;
    }
    if (h != d && vl_gfid_equal(&inode->gfid, &ents[d].iatt.gfid)
        && fsd_rb_lookup(io->subs[h], dir, name, &ia) == -ENOENT) {
        int rc = fsd_rb_ensure_linkfile(io->subs[h], dir, name, inode,
                                        io->subs[d]->name);

        if (rc != 0)
            vl_glog("rebalance", VL_LOG_WARNING, "%s: link file of "
                    "hard-linked '%s': %s", io->subs[h]->name, name,
                    strerror(-rc));
    }
    vl_inode_unref(inode);
    return h != d;
}
