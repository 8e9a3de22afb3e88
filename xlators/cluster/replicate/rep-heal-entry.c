/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-heal-entry: the entry heal of one directory (doc/replicate.md
 * "Self-heal"). Under an entrylk of the whole directory (it conflicts
 * with the entry lock of every name that entry transactions take), the
 * directory's entry records say which copies are sinks; every copy is
 * listed (readdirplus), then on each sink:
 *
 *   1. names the sources do not have, or have with another GFID or type,
 *      are removed (directories with everything under them): the
 *      records say the sink missed their removal or replacement;
 *   2. names the sources have and the sink lacks are created with the
 *      source's GFID, type, mode, owner (symlinks with their target); a
 *      GFID the sink already has under another name is hard linked;
 *      each new object is marked on the source as blaming the sink for
 *      all its kinds, so its own heal (content, times, xattrs; for a
 *      directory its names) follows (on access or by the daemon);
 *   3. the sinks' directory times are set to the source's, and only
 *      when every name went right are the entry records cleared.
 *
 * Dirty without blame (a cut transaction, nobody knows who missed what),
 * or no record at all when asked through mortar.heal.full (a copy
 * emptied or replaced without records), or an entry split-brain under
 * favorite-child-policy or a name's resolve key: a merge: names present
 * on some copies are created on the others, nothing is removed. A name
 * with different GFIDs or types on two copies (a GFID split-brain; also
 * between sources that disagree) goes to the rule of the policy or of a
 * resolve key for that name (rep_heal_resolve_name, choosing in
 * rep-heal-split.c): the chosen copy's object stays, the others are
 * removed and it is created in their place; with no rule, or a tie, it
 * is left alone and logged (never guessed). One exception, dirty
 * without blame only: a rename over an existing name that a client's
 * death cut after some copies took it leaves evidence (the copies with
 * the old object still hold the renamed one under its old name, the
 * others lost the old one): it is taken back on the copies it reached
 * (rep_heal_cut_renames) before the merge.
 * Granular entry records: when the sources blame the sinks, each
 * source's records for the directory (storage/posix's
 * .mortar/index/entry-changes, read through a virtual key) may name
 * every name that changed; then only those names are looked up on every
 * copy and compared, as if the listings held nothing else. A source
 * without names, or whose records say they are not all (a change made
 * without a name: a rename within the directory, a heal's or mortard's
 * mark of a new copy), means the whole directory is listed. The records
 * go with the counters once the sinks are no longer blamed.
 * Threads: a heal thread (rep-heal.c), blocking calls.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "rep-heal.h"

#define REP_HEAL_READDIR_SIZE (128 * 1024)
#define REP_HEAL_LINK_MAX 4096

/* One name of one copy of the directory. */
struct rep_heal_name {
    char *name;            /* owned */
    struct vl_iatt ia;     /* its object's attributes (gfid, mode) */
    bool is_gone;          /* removed from this copy by the heal */
};

/* The names of one copy; index finds a live (not is_gone) name in O(1),
 * since a heal compares every name of each copy with the other copies'
 * and a directory may hold 100,000s. */
struct rep_heal_listing {
    struct rep_heal_name *v; /* owned array */
    size_t n, cap;
    GHashTable *index;       /* name (v[i].name) -> i + 1, live names */
};


static void
rep_heal_listing_free(struct rep_heal_listing *l)
{
    if (l->index != NULL)
        g_hash_table_destroy(l->index);
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].name);
    free(l->v);
    memset(l, 0, sizeof(*l));
}


static int
rep_heal_listing_add(struct rep_heal_listing *l, const char *name,
                     const struct vl_iatt *ia)
{
    if (l->index == NULL)
        l->index = g_hash_table_new(g_str_hash, g_str_equal);
    if (l->n == l->cap) {
        size_t cap = l->cap != 0 ? l->cap * 2 : 64;
        struct rep_heal_name *v = realloc(l->v, cap * sizeof(*v));

        if (v == NULL)
            return -ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].name = strdup(name);
    if (l->v[l->n].name == NULL)
        return -ENOMEM;
    l->v[l->n].ia = *ia;
    l->v[l->n].is_gone = false;
    g_hash_table_replace(l->index, l->v[l->n].name, GSIZE_TO_POINTER(l->n + 1));
    l->n++;
    return 0;
}


static struct rep_heal_name *
rep_heal_listing_find(struct rep_heal_listing *l, const char *name)
{
    size_t i1;

    if (l->index == NULL)
        return NULL;
    i1 = GPOINTER_TO_SIZE(g_hash_table_lookup(l->index, name));
    return i1 != 0 ? &l->v[i1 - 1] : NULL;
}


/* e (of l) was removed from its copy by the heal. */
static void
rep_heal_listing_drop(struct rep_heal_listing *l, struct rep_heal_name *e)
{
    if (rep_heal_listing_find(l, e->name) == e)
        g_hash_table_remove(l->index, e->name);
    e->is_gone = true;
}


/* The virtual key of a directory's granular entry records on a brick
 * (storage/posix: 'N' and NUL-terminated names, or 'F'). */
#define REP_HEAL_ENTRY_VKEY "trusted.mortar.index.entry-changes"
#define REP_HEAL_ENTRY_LIST_MAX (64 * 1024)


/* Attributes of name in dir on child (a lookup with a fresh inode, so a
 * GFID other than the one this client knows is reported). */
static int
rep_heal_lookup_name(struct rep_heal *h, unsigned child, vl_inode_t *dir,
                     const char *name, struct vl_iatt *out)
{
    union vl_fop_args a;
    struct vl_reply r = {0};
    vl_inode_t *fresh = vl_inode_new(dir->table);
    int rc;

    if (fresh == NULL)
        return -ENOMEM;
    memset(&a, 0, sizeof(a));
    a.lookup.loc.parent = dir;
    a.lookup.loc.name = name;
    a.lookup.loc.inode = fresh;
    rc = rep_heal_call(h, child, VL_FOP_LOOKUP, &a, &r);
    if (rc == 0)
        *out = r.iatt;
    vl_reply_clear(&r);
    vl_inode_unref(fresh);
    return rc;
}


/* The names the sources' granular records hold for h->inode, merged
 * into names (a set); 0 with *is_all when they say all that changed,
 * *is_all false when a source has none or says they do not (the whole
 * directory is listed then), or -errno. */
static int
rep_heal_granular_names(struct rep_heal *h, GHashTable *names, bool *is_all)
{
    *is_all = false;
    for (unsigned s = 0; s < h->n; s++) {
        union vl_fop_args a;
        struct vl_reply r = {0};
        size_t n_here = 0;
        int rc;

        if (!(h->sources & (1u << s)))
            continue;
        memset(&a, 0, sizeof(a));
        a.getxattr.loc.inode = h->inode;
        a.getxattr.name = REP_HEAL_ENTRY_VKEY;
        a.getxattr.size = REP_HEAL_ENTRY_LIST_MAX;
        rc = rep_heal_call(h, s, VL_FOP_GETXATTR, &a, &r);
        if (rc == -EOPNOTSUPP || rc == -ENODATA || rc == -EINVAL) {
            vl_reply_clear(&r);
            return 0; /* a brick without records: list */
        }
        if (rc != 0) {
            vl_reply_clear(&r);
            return rc;
        }
        if (r.xattr == NULL || r.count < 1 || r.xattr[0] != 'N') {
            vl_reply_clear(&r);
            return 0;
        }
        for (int64_t i = 1; i < r.count;) {
            const char *name = r.xattr + i;
            size_t l = strnlen(name, (size_t)(r.count - i));

            if ((int64_t)(i + (int64_t)l) >= r.count)
                break; /* not terminated: ignore the tail */
            if (l > 0) {
                g_hash_table_add(names, g_strdup(name));
                n_here++;
            }
            i += (int64_t)l + 1;
        }
        vl_reply_clear(&r);
        /* Blamed for entries but no name recorded: not known. */
        if (n_here == 0)
            return 0;
    }
    *is_all = g_hash_table_size(names) > 0;
    return 0;
}


/* Listings of just the names (each copy: those it has), as rep_heal_list
 * would have found them among the rest. */
static int
rep_heal_list_names(struct rep_heal *h, unsigned child, vl_inode_t *dir,
                    GHashTable *names, struct rep_heal_listing *out)
{
    GHashTableIter it;
    gpointer key;
    int rc = 0;

    g_hash_table_iter_init(&it, names);
    while (rc == 0 && g_hash_table_iter_next(&it, &key, NULL)) {
        struct vl_iatt ia;

        rc = rep_heal_lookup_name(h, child, dir, key, &ia);
        if (rc == -ENOENT) {
            rc = 0;
            continue;
        }
        if (rc == 0)
            rc = rep_heal_listing_add(out, key, &ia);
    }
    return rc;
}


/* Every name of dir's copy on child. */
static int
rep_heal_list(struct rep_heal *h, unsigned child, vl_inode_t *dir,
              struct rep_heal_listing *out)
{
    vl_fd_t *fd = vl_fd_new(dir, O_RDONLY | O_DIRECTORY, (uint32_t)getpid());
    union vl_fop_args a;
    off_t off = 0;
    int rc;

    if (fd == NULL)
        return -ENOMEM;
    memset(&a, 0, sizeof(a));
    a.opendir.loc.inode = dir;
    a.opendir.fd = fd;
    rc = rep_heal_call(h, child, VL_FOP_OPENDIR, &a, NULL);
    while (rc == 0) {
        struct vl_reply r = {0};
        bool is_eof;

        memset(&a, 0, sizeof(a));
        a.readdir.fd = fd;
        a.readdir.size = REP_HEAL_READDIR_SIZE;
        a.readdir.offset = off;
        a.readdir.plus = true;
        rc = rep_heal_call(h, child, VL_FOP_READDIR, &a, &r);
        is_eof = rc != 0 || r.entries.n == 0 || r.entries.eof;
        for (size_t i = 0; rc == 0 && i < r.entries.n; i++) {
            struct vl_dirent *e = &r.entries.ents[i];
            struct vl_iatt ia = e->iatt;

            off = e->off;
            if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0)
                continue;
            if (!e->has_iatt)
                rc = rep_heal_lookup_name(h, child, dir, e->name, &ia);
            if (rc == -ENOENT) {
                rc = 0; /* gone meanwhile (not through replicate) */
                continue;
            }
            if (rc == 0)
                rc = rep_heal_listing_add(out, e->name, &ia);
        }
        vl_reply_clear(&r);
        if (is_eof)
            break;
    }
    vl_fd_unref(fd);
    return rc;
}


/* Removes name (object ia) from dir's copy on child, a directory with
 * everything under it. */
static int
rep_heal_remove(struct rep_heal *h, unsigned child, vl_inode_t *dir,
                const char *name, const struct vl_iatt *ia)
{
    vl_inode_t *obj = vl_inode_get(dir->table, &ia->gfid, ia->mode & S_IFMT);
    union vl_fop_args a;
    int rc = 0;

    if (obj == NULL)
        return -ENOMEM;
    if (S_ISDIR(ia->mode)) {
        struct rep_heal_listing sub = {0};

        rc = rep_heal_list(h, child, obj, &sub);
        for (size_t i = 0; rc == 0 && i < sub.n; i++)
            rc = rep_heal_remove(h, child, obj, sub.v[i].name, &sub.v[i].ia);
        rep_heal_listing_free(&sub);
    }
    memset(&a, 0, sizeof(a));
    a.unlink.loc.parent = dir;
    a.unlink.loc.name = name;
    a.unlink.loc.inode = obj;
    if (rc == 0)
        rc = rep_heal_call(h, child,
                           S_ISDIR(ia->mode) ? VL_FOP_RMDIR : VL_FOP_UNLINK,
                           &a, NULL);
    if (rc == -ENOENT)
        rc = 0;
    if (rc == 0)
        h->entries++;
    else
        vl_log(h->xl, VL_LOG_WARNING, "heal: removing %s on %s: %s", name,
               h->xl->children[child]->name, strerror(-rc));
    vl_inode_unref(obj);
    return rc;
}


/* Creates name in dir on child as src's copy of it (attributes ia): a
 * hard link when child already has that GFID, else a new object that
 * src and the other copies of holders (those that hold the object) blame
 * child for, marked BEFORE it is made: the new copy is empty or has the
 * creator's attributes, and a lookup, a death of this heal, or of src,
 * between the create and a later mark would leave it looking as good as
 * the others (GlusterFS marks every source too). */
static int
rep_heal_create(struct rep_heal *h, unsigned child, unsigned src,
                rep_mask_t holders, vl_inode_t *dir, const char *name,
                const struct vl_iatt *ia)
{
    uint32_t type = ia->mode & S_IFMT;
    vl_inode_t *obj = vl_inode_get(dir->table, &ia->gfid, type);
    vl_inode_t *fresh = vl_inode_new(dir->table);
    union vl_fop_args a;
    struct vl_reply r = {0};
    struct vl_iatt there;
    unsigned kinds = 1u << REP_METADATA;
    bool is_link;
    int rc;

    if (obj == NULL || fresh == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    memset(&a, 0, sizeof(a));
    is_link = !S_ISDIR(type) && rep_heal_stat(h, child, obj, &there) == 0;
    if (!is_link) {
        if (S_ISDIR(type))
            kinds |= 1u << REP_ENTRY;
        else if (S_ISREG(type))
            kinds |= 1u << REP_DATA;
        rc = rep_heal_blame(h, src, obj, 1u << child, kinds);
        if (rc != 0)
            goto out;
        holders &= ~((1u << child) | (1u << src));
        for (unsigned m = 0; m < h->n; m++)
            if ((holders & (1u << m))
                && rep_heal_blame(h, m, obj, 1u << child, kinds) != 0)
                vl_log(h->xl, VL_LOG_WARNING, "heal: marking %s on %s: "
                       "failed (%s still blames it)", name,
                       h->xl->children[m]->name,
                       h->xl->children[src]->name);
    }
    if (is_link) {
        a.link.oldloc.inode = obj;
        a.link.newloc.parent = dir;
        a.link.newloc.name = name;
        a.link.newloc.inode = obj;
        rc = rep_heal_call(h, child, VL_FOP_LINK, &a, NULL);
    } else if (S_ISDIR(type)) {
        a.mkdir.loc.parent = dir;
        a.mkdir.loc.name = name;
        a.mkdir.loc.inode = fresh;
        a.mkdir.mode = ia->mode & 07777;
        a.mkdir.gfid = ia->gfid;
        rc = rep_heal_call_as(h, child, VL_FOP_MKDIR, &a, NULL, ia->uid,
                              ia->gid);
    } else if (S_ISLNK(type)) {
        union vl_fop_args rl;

        memset(&rl, 0, sizeof(rl));
        rl.readlink.loc.inode = obj;
        rl.readlink.size = REP_HEAL_LINK_MAX;
        rc = rep_heal_call(h, src, VL_FOP_READLINK, &rl, &r);
        if (rc == 0 && r.link == NULL)
            rc = -EIO;
        if (rc == 0) {
            a.symlink.loc.parent = dir;
            a.symlink.loc.name = name;
            a.symlink.loc.inode = fresh;
            a.symlink.target = r.link;
            a.symlink.gfid = ia->gfid;
            rc = rep_heal_call_as(h, child, VL_FOP_SYMLINK, &a, NULL,
                                  ia->uid, ia->gid);
        }
    } else {
        a.mknod.loc.parent = dir;
        a.mknod.loc.name = name;
        a.mknod.loc.inode = fresh;
        a.mknod.mode = ia->mode;
        a.mknod.rdev = ia->rdev;
        a.mknod.gfid = ia->gfid;
        rc = rep_heal_call_as(h, child, VL_FOP_MKNOD, &a, NULL, ia->uid,
                              ia->gid);
    }
    if (rc == 0)
        h->entries++;
out:
    if (rc != 0)
        vl_log(h->xl, VL_LOG_WARNING, "heal: creating %s on %s: %s", name,
               h->xl->children[child]->name, strerror(-rc));
    vl_reply_clear(&r);
    vl_inode_unref(obj);
    vl_inode_unref(fresh);
    return rc;
}


/* The copy of name on the copies of from that has it (-1: none); sets
 * *is_conflict when two of them disagree on GFID or type. */
static int
rep_heal_name_source(struct rep_heal *h, struct rep_heal_listing *l,
                     rep_mask_t from, const char *name, bool *is_conflict)
{
    int first = -1;
    struct rep_heal_name *fe = NULL;

    *is_conflict = false;
    for (unsigned i = 0; i < h->n; i++) {
        struct rep_heal_name *e;

        if (!(from & (1u << i)))
            continue;
        e = rep_heal_listing_find(&l[i], name);
        if (e == NULL)
            continue;
        if (first < 0) {
            first = (int)i;
            fe = e;
        } else if (!vl_gfid_equal(&e->ia.gfid, &fe->ia.gfid)
                   || (e->ia.mode & S_IFMT) != (fe->ia.mode & S_IFMT)) {
            *is_conflict = true;
        }
    }
    return first;
}


/* Does child hold an object of GFID gfid (any name)? */
static bool
rep_heal_has_gfid(struct rep_heal *h, unsigned child, const vl_gfid_t *gfid,
                  uint32_t type)
{
    vl_inode_t *obj = vl_inode_get(h->inode->table, gfid, type);
    struct vl_iatt ia;
    bool has;

    if (obj == NULL)
        return false;
    has = rep_heal_stat(h, child, obj, &ia) == 0;
    vl_inode_unref(obj);
    return has;
}


/* Copies of l holding name with GFID gfid. */
static rep_mask_t
rep_heal_holders(struct rep_heal *h, struct rep_heal_listing *l,
                 const char *name, const vl_gfid_t *gfid)
{
    rep_mask_t m = 0;

    for (unsigned i = 0; i < h->n; i++) {
        struct rep_heal_name *e = rep_heal_listing_find(&l[i], name);

        if (e != NULL && vl_gfid_equal(&e->ia.gfid, gfid))
            m |= 1u << i;
    }
    return m;
}


/* Every copy of mask holds gfid. */
static bool
rep_heal_all_have(struct rep_heal *h, rep_mask_t mask, const vl_gfid_t *gfid,
                  uint32_t type)
{
    for (unsigned i = 0; i < h->n; i++)
        if ((mask & (1u << i)) && !rep_heal_has_gfid(h, i, gfid, type))
            return false;
    return true;
}


/* Same GFID and type. */
static bool
rep_heal_same_object(const struct vl_iatt *a, const struct vl_iatt *b)
{
    return vl_gfid_equal(&a->gfid, &b->gfid)
           && (a->mode & S_IFMT) == (b->mode & S_IFMT);
}


/* The rule that resolves a GFID split-brain of name in this heal: a
 * resolve key for that name, else favorite-child-policy (but not in a
 * resolve key's heal of the directory itself); NONE: left alone. */
static int
rep_heal_name_rule(struct rep_heal *h, const char *name, int *child)
{
    const struct rep_heal_opts *o = h->opts;

    *child = o->rule_child;
    if (o->name != NULL)
        return strcmp(o->name, name) == 0 ? o->rule : REP_RULE_NONE;
    if (o->is_resolve_only)
        return REP_RULE_NONE;
    return h->rule;
}


/* A name with another GFID or type on some copies of from: when a rule
 * covers it, the chosen copy's object keeps the name and every up copy
 * holding another object under it is rid of that one (the caller then
 * creates the chosen one there). A resolve key for the name applies the
 * choice its check made (h->name_keep). 1: resolved, 0: left alone, or
 * -errno. */
static int
rep_heal_resolve_name(struct rep_heal *h, struct rep_heal_listing *l,
                      rep_mask_t from, const char *name, rep_mask_t *changed)
{
    const struct vl_iatt *ia[REP_MAX_CHILDREN] = {0};
    rep_mask_t cand = 0;
    struct vl_iatt keep;
    int child, chosen = REP_NAME_TIE, rc = 0;
    int rule = rep_heal_name_rule(h, name, &child);

    if (rule == REP_RULE_NONE)
        return 0;
    for (unsigned i = 0; i < h->n; i++) {
        struct rep_heal_name *e;

        if (!(from & (1u << i)))
            continue;
        e = rep_heal_listing_find(&l[i], name);
        if (e == NULL)
            continue;
        ia[i] = &e->ia;
        cand |= 1u << i;
        if (h->opts->name != NULL && chosen < 0
            && rep_heal_same_object(&e->ia, &h->name_keep))
            chosen = (int)i;
    }
    if (h->opts->name == NULL) {
        rc = rep_heal_split_name(h, name, ia, cand, rule, child, &chosen);
        if (rc != 0)
            return rc;
    }
    if (chosen < 0)
        return 0;
    keep = *ia[chosen];
    for (unsigned k = 0; k < h->n && rc == 0; k++) {
        struct rep_heal_name *e;

        if (!(h->up & (1u << k)))
            continue;
        e = rep_heal_listing_find(&l[k], name);
        if (e == NULL || rep_heal_same_object(&e->ia, &keep))
            continue;
        rc = rep_heal_remove(h, k, h->inode, e->name, &e->ia);
        rep_heal_listing_drop(&l[k], e);
        *changed |= 1u << k;
    }
    if (rc != 0)
        return rc;
    h->opts->resolved |= 1u << REP_ENTRY;
    return 1;
}


/* A resolve key for one name (h->opts->name): is it in a GFID
 * split-brain among the copies the records leave as candidates (the
 * sources; every copy when none is blamed or all are), and which copy
 * does the rule keep (h->name_keep)? 0: the heal goes on; 1 with *res:
 * nothing to do (no split-brain, a tie, a rule that does not cover it);
 * or -errno. */
static int
rep_heal_name_check(struct rep_heal *h, enum rep_heal_verdict v,
                    enum rep_heal_result *res)
{
    struct rep_heal_opts *o = h->opts;
    rep_mask_t from = v == REP_HV_NEEDED ? h->sources : h->up;
    struct vl_iatt got[REP_MAX_CHILDREN];
    const struct vl_iatt *ia[REP_MAX_CHILDREN] = {0};
    rep_mask_t cand = 0;
    bool is_conflict = false;
    int first = -1, chosen, rc;

    *res = REP_HR_CLEAN;
    for (unsigned i = 0; i < h->n; i++) {
        if (!(from & (1u << i)))
            continue;
        rc = rep_heal_lookup_name(h, i, h->inode, o->name, &got[i]);
        if (rc == -ENOENT)
            continue;
        if (rc != 0)
            return rc;
        ia[i] = &got[i];
        cand |= 1u << i;
        if (first < 0)
            first = (int)i;
        else if (!rep_heal_same_object(&got[i], &got[first]))
            is_conflict = true;
    }
    if (!is_conflict)
        return 1; /* "not-split-brain": nothing changed */
    rc = rep_heal_split_name(h, o->name, ia, cand, o->rule, o->rule_child,
                             &chosen);
    if (rc != 0) {
        o->err = rc;
        return rc;
    }
    if (chosen == REP_NAME_TIE) {
        o->ambiguous |= 1u << REP_ENTRY;
        return 1;
    }
    if (chosen == REP_NAME_UNCOVERED) {
        *res = REP_HR_SPLIT;
        return 1;
    }
    h->name_keep = got[chosen];
    return 0;
}


/* A rename over an existing name cut by a client's death (dirty without
 * blame) leaves the name with the renamed object Y on the copies it
 * reached and the replaced one X on the others, which still hold Y
 * under its old name; X is gone from the first ones (its last name).
 * So, for a name of two files (no directory) on every copy: when the
 * holders of one GFID also hold the other and not the reverse, the
 * rename is taken back on the copies it reached (the name gets X again:
 * removed, then created as entry heal creates; the merge then gives
 * them Y's old name). The client got no answer: the old state is as
 * good as the new one, and it is the one the merge's union can reach.
 * Anything else is left alone (a GFID split-brain). */
static int
rep_heal_cut_renames(struct rep_heal *h, struct rep_heal_listing *l,
                     rep_mask_t *changed)
{
    char gs[VL_GFID_STR_LEN], g1[VL_GFID_STR_LEN];
    int rc = 0;

    for (size_t i = 0; i < l[0].n && rc == 0; i++) {
        struct rep_heal_name x = l[0].v[i], *y = NULL, keep;
        rep_mask_t hx, hy, losers;
        bool x_ok, y_ok;
        uint32_t type = x.ia.mode & S_IFMT;
        int src;

        if (x.is_gone || S_ISDIR(type))
            continue;
        for (unsigned k = 1; k < h->n; k++) {
            struct rep_heal_name *e = rep_heal_listing_find(&l[k], x.name);

            if (e == NULL || S_ISDIR(e->ia.mode)) {
                y = NULL;
                break;
            }
            if (vl_gfid_equal(&e->ia.gfid, &x.ia.gfid))
                continue;
            if (y != NULL && !vl_gfid_equal(&e->ia.gfid, &y->ia.gfid)) {
                y = NULL; /* three GFIDs */
                break;
            }
            y = e;
        }
        if (y == NULL)
            continue;
        hx = rep_heal_holders(h, l, x.name, &x.ia.gfid);
        hy = rep_heal_holders(h, l, x.name, &y->ia.gfid);
        if ((hx | hy) != h->up || h->down != 0)
            continue;
        x_ok = rep_heal_all_have(h, hx, &y->ia.gfid, y->ia.mode & S_IFMT);
        y_ok = rep_heal_all_have(h, hy, &x.ia.gfid, type);
        if (x_ok == y_ok)
            continue;
        keep = x_ok ? x : *y;
        losers = x_ok ? hy : hx;
        src = __builtin_ctz(x_ok ? hx : hy);
        vl_log(h->xl, VL_LOG_INFO, "heal %s: name %s: a rename over it "
               "reached some copies only (cut): %s taken back",
               vl_gfid_to_str(&h->inode->gfid, gs), keep.name,
               vl_gfid_to_str(&keep.ia.gfid, g1));
        for (unsigned k = 0; k < h->n && rc == 0; k++) {
            struct rep_heal_name *e;

            if (!(losers & (1u << k)))
                continue;
            e = rep_heal_listing_find(&l[k], keep.name);
            rc = rep_heal_remove(h, k, h->inode, e->name, &e->ia);
            rep_heal_listing_drop(&l[k], e);
            if (rc == 0)
                rc = rep_heal_create(h, k, (unsigned)src,
                                     rep_heal_holders(h, l, keep.name,
                                                      &keep.ia.gfid),
                                     h->inode, keep.name, &keep.ia);
            if (rc == 0)
                rc = rep_heal_listing_add(&l[k], keep.name, &keep.ia);
            *changed |= 1u << k;
        }
    }
    return rc;
}


/* Creates name on the copies of to that lack it, as copy s holds it. */
static int
rep_heal_create_missing(struct rep_heal *h, struct rep_heal_listing *l,
                        rep_mask_t to, unsigned s, const char *name,
                        rep_mask_t *changed)
{
    struct vl_iatt ia = rep_heal_listing_find(&l[s], name)->ia;
    int rc = 0;

    for (unsigned k = 0; k < h->n && rc == 0; k++) {
        if (k == s || !(to & (1u << k)))
            continue;
        if (rep_heal_listing_find(&l[k], name) != NULL)
            continue; /* same (a merge found no conflict) */
        rc = rep_heal_create(h, k, s, rep_heal_holders(h, l, name, &ia.gfid),
                             h->inode, name, &ia);
        if (rc == 0)
            rc = rep_heal_listing_add(&l[k], name, &ia);
        *changed |= 1u << k;
    }
    return rc;
}


/* name has another GFID or type on some copies of from: resolved by a
 * rule when one covers it (then created from the chosen copy on every up
 * copy that lacks it now), else left alone (*is_left). */
static int
rep_heal_names_conflict(struct rep_heal *h, struct rep_heal_listing *l,
                        rep_mask_t from, const char *name, bool *is_left,
                        rep_mask_t *changed)
{
    char gs[VL_GFID_STR_LEN];
    char *copy = strdup(name); /* the listings may move as names are added */
    bool is_conflict;
    int rc, s;

    if (copy == NULL)
        return -ENOMEM;
    rc = rep_heal_resolve_name(h, l, from, copy, changed);
    if (rc == 0) {
        vl_log(h->xl, VL_LOG_ERROR, "heal %s: name %s has another GFID or "
               "type on some copies and the records do not say which is "
               "right: left alone", vl_gfid_to_str(&h->inode->gfid, gs),
               copy);
        *is_left = true;
    } else if (rc > 0) {
        s = rep_heal_name_source(h, l, h->up, copy, &is_conflict);
        rc = s >= 0 ? rep_heal_create_missing(h, l, h->up, (unsigned)s, copy,
                                              changed)
                    : 0;
    }
    free(copy);
    return rc;
}


/* Phases 1 and 2 over the listings; *is_left is set when a name was
 * left alone (a conflict). */
static int
rep_heal_names(struct rep_heal *h, struct rep_heal_listing *l, bool is_merge,
               bool *is_left, rep_mask_t *changed)
{
    rep_mask_t from = is_merge ? h->up : h->sources;
    rep_mask_t to = is_merge ? h->up : h->sinks;
    int rc = 0;

    for (unsigned k = 0; k < h->n && !is_merge; k++) {
        if (!(h->sinks & (1u << k)))
            continue;
        for (size_t i = 0; i < l[k].n && rc == 0; i++) {
            struct rep_heal_name *e = &l[k].v[i];
            bool is_conflict;
            int s = rep_heal_name_source(h, l, from, e->name, &is_conflict);
            struct rep_heal_name *se;

            if (e->is_gone || is_conflict)
                continue;
            se = s >= 0 ? rep_heal_listing_find(&l[s], e->name) : NULL;
            if (se != NULL && vl_gfid_equal(&se->ia.gfid, &e->ia.gfid)
                && (se->ia.mode & S_IFMT) == (e->ia.mode & S_IFMT))
                continue;
            rc = rep_heal_remove(h, k, h->inode, e->name, &e->ia);
            rep_heal_listing_drop(&l[k], e);
            *changed |= 1u << k;
        }
    }
    for (unsigned s = 0; s < h->n && rc == 0; s++) {
        if (!(from & (1u << s)))
            continue;
        for (size_t i = 0; i < l[s].n && rc == 0; i++) {
            struct rep_heal_name *se = &l[s].v[i];
            bool is_conflict;

            if (rep_heal_name_source(h, l, from, se->name, &is_conflict)
                != (int)s)
                continue; /* seen from an earlier copy */
            if (is_conflict) {
                rc = rep_heal_names_conflict(h, l, from, se->name, is_left,
                                             changed);
                continue;
            }
            rc = rep_heal_create_missing(h, l, to, s, se->name, changed);
        }
    }
    return rc;
}


/* The directory times of the changed copies from src's. */
static int
rep_heal_dir_times(struct rep_heal *h, rep_mask_t changed)
{
    struct vl_iatt st;
    int rc = rep_heal_stat(h, (unsigned)h->src, h->inode, &st);

    for (unsigned i = 0; i < h->n && rc == 0; i++) {
        union vl_fop_args a;

        if (!(changed & (1u << i)) || (int)i == h->src)
            continue;
        memset(&a, 0, sizeof(a));
        a.setattr.loc.inode = h->inode;
        a.setattr.attr = st;
        a.setattr.valid = VL_SET_ATIME | VL_SET_MTIME;
        rc = rep_heal_call(h, i, VL_FOP_SETATTR, &a, NULL);
    }
    return rc;
}


enum rep_heal_result
rep_heal_entry(struct rep_heal *h)
{
    struct rep_heal_listing l[REP_MAX_CHILDREN];
    enum rep_heal_result res = REP_HR_HEALED;
    enum rep_heal_verdict v;
    rep_mask_t changed = 0;
    bool is_left = false, is_merge, is_granular = false;
    GHashTable *names = NULL;
    char gs[VL_GFID_STR_LEN];
    int rc;

    memset(l, 0, sizeof(l));
    rc = rep_heal_entrylk(h);
    if (rc != 0)
        return rc == -ENOTCONN ? REP_HR_PENDING : REP_HR_FAILED;
    rc = rep_heal_records_read(h, h->inode);
    if (rc != 0)
        goto out;
    v = rep_heal_decide(h, REP_ENTRY);
    if (v == REP_HV_WAIT) {
        res = REP_HR_PENDING; /* the only possible source is down */
        goto out;
    }
    if (h->opts->name != NULL) {
        /* One name's GFID split-brain: unless the records say who is
         * right, the directory is merged and that name resolved. */
        rc = rep_heal_name_check(h, v, &res);
        if (rc != 0) {
            if (rc > 0)
                rc = 0;
            goto out;
        }
        is_merge = v != REP_HV_NEEDED;
    } else {
        rc = rep_heal_split(h, REP_ENTRY, &v);
        if (rc != 0) {
            if (rc > 0) {
                rc = 0;
                res = REP_HR_CLEAN;
            }
            goto out;
        }
        /* Records that blame nothing: a merge only for mortar.heal.full;
         * an entry split-brain under favorite-child-policy: a merge. */
        is_merge = v == REP_HV_COMPARE
                   || (v == REP_HV_CLEAN && h->opts->is_full)
                   || (v == REP_HV_SPLIT && !h->opts->is_resolve_only
                       && h->rule != REP_RULE_NONE);
    }
    if (v == REP_HV_CLEAN && !is_merge) {
        res = REP_HR_CLEAN;
        goto out;
    }
    if (v == REP_HV_SPLIT && !is_merge) {
        vl_log(h->xl, VL_LOG_ERROR, "heal %s: entry split-brain (every copy "
               "blamed by another): not healed",
               vl_gfid_to_str(&h->inode->gfid, gs));
        res = REP_HR_SPLIT;
        goto out;
    }
    if (v == REP_HV_SPLIT) {
        /* Every copy missed something and nobody knows what: names on
         * some copies are created on the others, nothing is removed (a
         * name removed on one copy may come back), a name with two
         * objects goes to the rule; then every copy's blame goes. */
        vl_log(h->xl, VL_LOG_INFO, "heal %s: entry split-brain: merging "
               "the names of every copy (%s)",
               vl_gfid_to_str(&h->inode->gfid, gs),
               h->opts->name != NULL ? "resolve key of a name"
                                     : "favorite-child-policy");
        h->sources = h->up;
        h->sinks = h->up;
        h->src = __builtin_ctz(h->up); /* the times, if all changed */
    }
    /* Sources blaming sinks: their granular records may name every
     * name that changed; then only those are compared (not for a name's
     * resolve key: its conflict may be outside them). */
    if (!is_merge && h->opts->name == NULL) {
        names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                      NULL);
        rc = rep_heal_granular_names(h, names, &is_granular);
    }
    if (is_granular) {
        h->granular = g_hash_table_size(names);
        vl_log(h->xl, VL_LOG_DEBUG, "heal %s: entries: %u names from the "
               "granular records", vl_gfid_to_str(&h->inode->gfid, gs),
               g_hash_table_size(names));
    } else {
        h->is_listed = true;
    }
    for (unsigned i = 0; i < h->n && rc == 0; i++) {
        if (!(h->up & (1u << i)))
            continue; /* down: an empty listing, touched by nothing */
        rc = is_granular ? rep_heal_list_names(h, i, h->inode, names, &l[i])
                         : rep_heal_list(h, i, h->inode, &l[i]);
    }
    if (rc == 0 && v == REP_HV_COMPARE)
        rc = rep_heal_cut_renames(h, l, &changed);
    if (rc == 0)
        rc = rep_heal_names(h, l, is_merge, &is_left, &changed);
    /* A merge's times come from a copy that lacked nothing. */
    for (unsigned i = 0; is_merge && i < h->n; i++)
        if ((h->up & (1u << i)) && !(changed & (1u << i))) {
            h->src = (int)i;
            break;
        }
    if (rc == 0 && changed != 0)
        rc = rep_heal_dir_times(h, changed);
    if (rc == 0 && is_merge && changed == 0 && !is_left)
        res = REP_HR_CLEAN;
    /* A name left alone keeps the records: the directory stays listed. */
    if (rc == 0 && !is_left && v != REP_HV_CLEAN)
        rc = rep_heal_records_clear(h, h->inode, REP_ENTRY);
    if (rc == 0 && is_left) {
        /* A name's resolve key answers for that name; the others left
         * keep the records (the directory stays listed). */
        if (h->opts->name != NULL)
            h->is_partial = true;
        else
            res = REP_HR_SPLIT;
    }
out:
    rep_heal_entryunlk(h);
    for (unsigned i = 0; i < h->n; i++)
        rep_heal_listing_free(&l[i]);
    if (names != NULL)
        g_hash_table_destroy(names);
    if (rc != 0) {
        vl_log(h->xl, VL_LOG_WARNING, "heal %s: entries: %s",
               vl_gfid_to_str(&h->inode->gfid, gs), strerror(-rc));
        return rc == -ENOTCONN ? REP_HR_PENDING : REP_HR_FAILED;
    }
    return res;
}
