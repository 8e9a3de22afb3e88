/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-read: lookup, the records that say which copies are good, and the
 * read fops (doc/replicate.md "Reads").
 *
 * Lookup asks every up child, checks that the copies that exist agree on
 * GFID and type (a mismatch is answered EIO, never guessed), with every
 * copy's records (an xattrop adding zeros, the values read under the
 * brick's lock) carried by the lookup itself (vl_lookup_args.xop: one
 * round trip; a brick that cannot answer them with it is asked for
 * them after the lookups, as a second round trip to every copy), and
 * computes the readable set: the
 * copies no other copy blames, and of those the ones without dirty if
 * there are any. A named lookup first makes sure the parent directory's
 * readable set is current: a copy of the directory that another copy
 * blames for entries is not asked about the name.
 *
 * Reads (stat, access, readlink, getxattr, read, lseek, rchecksum,
 * readdir) go to one readable, up child (for an fd, one it is open on),
 * picked by a hash of the GFID so different files spread over the good
 * copies; a child that answers ENOTCONN is replaced by the next. An inode
 * whose readable set is unknown or older than the last child up/down
 * event has its records read first ("refresh").
 *
 * Reads below quorum: when quorum-type is not none and the up children do
 * not make quorum, lookups and reads fail with ENOTCONN, since the copies
 * that could blame the up ones may be the missing ones.
 *
 * Intercepts: lookup, stat, access, readlink, getxattr, read, lseek,
 *             rchecksum, readdir.
 * Per req:    struct rep_local, and an owned struct rep_inspect while
 *             records are read.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "rep-heal.h"
#include "rep.h"

typedef void rep_cont_fn(vl_xlator_t *xl, vl_req_t *req);

/* What a lookup or refresh collects from each child. */
struct rep_inspect {
    vl_inode_t *inode;        /* ref: the object whose records are read */
    rep_mask_t asked;         /* children the records were asked of */
    atomic_uint answered;     /* children whose records came back */
    atomic_uint found;        /* lookup: children that have the object */
    atomic_uint carried;      /* lookup: ... whose records came with it */
    struct vl_xattrop_args xop; /* lookup: the records read it carries */
    rep_mask_t readable;      /* the result */
    rep_cont_fn *cont;        /* what runs when the records are in */
    int status[REP_MAX_CHILDREN];           /* lookup status per child */
    struct vl_reply reply[REP_MAX_CHILDREN]; /* owned: lookup replies */
    uint8_t rec[REP_MAX_CHILDREN][(REP_MAX_CHILDREN + 1) * REP_RECORD_SIZE];
    const uint8_t *recp[REP_MAX_CHILDREN]; /* rep_inspect_records */
};

static const uint8_t rep_zero_record[REP_RECORD_SIZE];

static void rep_lookup_wind(vl_xlator_t *xl, vl_req_t *req);
static void rep_read_dispatch(vl_xlator_t *xl, vl_req_t *req);


/* ---- readable sets ---- */

rep_mask_t
rep_compute_readable(unsigned n, rep_mask_t answered,
                     const uint8_t *const *records, unsigned kinds)
{
    rep_mask_t blamed = 0, readable, clean = 0;

    for (unsigned i = 0; i < n; i++) {
        if (!(answered & (1u << i)))
            continue;
        for (unsigned j = 0; j < n; j++) {
            if (j == i)
                continue;
            for (unsigned k = 0; k < REP_N_KINDS; k++)
                if ((kinds & (1u << k))
                    && rep_record_get(records[i] + j * REP_RECORD_SIZE, k)
                           > 0)
                    blamed |= 1u << j;
        }
    }
    readable = answered & ~blamed;
    /* A dirty copy without blame was cut in a transaction (or is in one
     * right now): prefer the clean ones when there are. */
    for (unsigned i = 0; i < n; i++) {
        bool is_dirty = false;

        if (!(readable & (1u << i)))
            continue;
        for (unsigned k = 0; k < REP_N_KINDS; k++)
            if ((kinds & (1u << k))
                && rep_record_get(records[i] + n * REP_RECORD_SIZE, k) > 0)
                is_dirty = true;
        if (!is_dirty)
            clean |= 1u << i;
    }
    return clean != 0 ? clean : readable;
}


/* The counters that matter for an object of this type. */
static unsigned
rep_kinds_of(uint32_t mode, bool is_root)
{
    if (is_root || S_ISDIR(mode))
        return 1u << REP_ENTRY | 1u << REP_METADATA;
    if (S_ISREG(mode))
        return 1u << REP_DATA | 1u << REP_METADATA;
    return 1u << REP_METADATA;
}


/* One child of mask, chosen by the GFID so that reads of different files
 * spread over the good copies; -1 if mask is empty. */
static int
rep_pick(const vl_gfid_t *gfid, rep_mask_t mask)
{
    unsigned n_in = rep_popcount(mask), h = 0, k;

    if (n_in == 0)
        return -1;
    for (size_t i = 0; i < sizeof(gfid->bytes); i++)
        h = h * 31 + gfid->bytes[i];
    k = h % n_in;
    for (int i = 0; i < REP_MAX_CHILDREN; i++)
        if ((mask & (1u << i)) && k-- == 0)
            return i;
    return -1;
}


static bool
rep_reads_allowed(vl_xlator_t *xl, rep_mask_t up)
{
    return rep_priv(xl)->quorum_type == REP_QUORUM_NONE
           || rep_has_quorum(xl, up);
}


static void
rep_inspect_free(struct rep_local *local)
{
    struct rep_inspect *in = local->inspect;

    if (in == NULL)
        return;
    for (unsigned i = 0; i < REP_MAX_CHILDREN; i++)
        vl_reply_clear(&in->reply[i]);
    vl_inode_unref(in->inode);
    vl_free(in);
    local->inspect = NULL;
}


static void
rep_finish(vl_req_t *req, int status)
{
    rep_inspect_free(VL_REQ_PRIV(req, struct rep_local));
    vl_unwind(req, status);
}


static struct rep_inspect *
rep_inspect_new(vl_xlator_t *xl, struct rep_local *local)
{
    struct rep_inspect *in = vl_calloc(xl, 1, sizeof(*in), REP_MT_INSPECT);

    local->inspect = in;
    return in;
}


/* ---- reading the records ---- */

static void
rep_records_arrive(vl_req_t *req, unsigned idx, vl_req_t *child, int status)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    struct rep_inspect *in = local->inspect;
    vl_xlator_t *xl = req->xl;
    size_t want = (rep_priv(xl)->n + 1) * REP_RECORD_SIZE;

    if (status == 0 && child->reply.xattr != NULL
        && child->reply.xattr_len == want) {
        memcpy(in->rec[idx], child->reply.xattr, want);
        atomic_fetch_or(&in->answered, 1u << idx);
    } else if (status == 0) {
        vl_log(xl, VL_LOG_WARNING, "records of %s: %u bytes, expected %zu",
               xl->children[idx]->name,
               child != NULL ? child->reply.xattr_len : 0, want);
        status = -EIO;
    } else {
        vl_log(xl, VL_LOG_DEBUG, "records of %s: %s",
               xl->children[idx]->name, strerror(-status));
    }
    if (vl_fanout_arrive(&local->fan, status))
        in->cont(xl, req);
}


static void
rep_records_done(vl_req_t *child, void *cookie)
{
    struct rep_cookie *ck = cookie;

    rep_records_arrive(ck->req, ck->idx, child, child->status);
}


/* The keys of a read of every record (each child's pending key, then
 * dirty, adding zeros) into local's arrays; returns how many. */
static unsigned
rep_records_keys(struct rep_priv *priv, struct rep_local *local)
{
    unsigned n = priv->n;

    for (unsigned i = 0; i < n; i++) {
        local->x_names[i] = priv->keys[i];
        local->x_values[i] = rep_zero_record;
        local->x_sizes[i] = REP_RECORD_SIZE;
    }
    local->x_names[n] = REP_KEY_DIRTY;
    local->x_values[n] = rep_zero_record;
    local->x_sizes[n] = REP_RECORD_SIZE;
    return n + 1;
}


/* Reads every record of in->inode on the children of mask, then runs
 * cont (from the last answer). mask must not be empty. */
static void
rep_records_read(vl_xlator_t *xl, vl_req_t *req, rep_mask_t mask,
                 rep_cont_fn *cont)
{
    struct rep_priv *priv = rep_priv(xl);
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    struct rep_inspect *in = local->inspect;
    vl_inode_t *inode = in->inode;
    unsigned n = priv->n;

    (void)rep_records_keys(priv, local);
    for (unsigned i = 0; i < n; i++) {
        local->ck[i].req = req;
        local->ck[i].idx = i;
    }
    in->cont = cont;
    in->asked = mask;
    atomic_store(&in->answered, 0);
    vl_fanout_begin(&local->fan, (int)rep_popcount(mask));
    /* Nothing of local is read after the last wind. */
    for (unsigned i = 0; i < n; i++) {
        vl_req_t *child;
        struct vl_xattrop_args *a;

        if (!(mask & (1u << i)))
            continue;
        child = vl_req_new_op(req, xl->children[i], VL_FOP_XATTROP);
        if (child == NULL) {
            rep_records_arrive(req, i, NULL, -ENOMEM);
            continue;
        }
        a = VL_ARGS(child, xattrop);
        a->loc.inode = inode;
        a->op = VL_XATTROP_ADD32;
        a->n = n + 1;
        a->names = local->x_names;
        a->values = local->x_values;
        a->sizes = local->x_sizes;
        vl_wind(child, rep_records_done, &local->ck[i]);
    }
}


/* in->rec as the array of per-child records the pickers take. */
static const uint8_t **
rep_inspect_records(struct rep_inspect *in)
{
    for (unsigned i = 0; i < REP_MAX_CHILDREN; i++)
        in->recp[i] = in->rec[i];
    return in->recp;
}


/* The readable set from the records in; 0 when every copy is blamed. */
static rep_mask_t
rep_inspect_readable(vl_xlator_t *xl, struct rep_inspect *in, unsigned kinds)
{
    const uint8_t *records[REP_MAX_CHILDREN];

    for (unsigned i = 0; i < REP_MAX_CHILDREN; i++)
        records[i] = in->rec[i];
    return rep_compute_readable(rep_priv(xl)->n, atomic_load(&in->answered),
                                records, kinds);
}


/* Reads the records of inode, stores its readable set, then runs cont;
 * answers req itself on failure. */
static void
rep_refresh(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *inode,
            rep_cont_fn *cont)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    rep_mask_t up = rep_up_mask(xl);
    struct rep_inspect *in;

    if (vl_gfid_is_null(&inode->gfid)) {
        vl_unwind(req, -ESTALE);
        return;
    }
    if (up == 0 || !rep_reads_allowed(xl, up)) {
        vl_unwind(req, -ENOTCONN);
        return;
    }
    in = rep_inspect_new(xl, local);
    if (in == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    in->inode = vl_inode_ref(inode);
    in->readable = 0;
    local->read_child = -1;
    rep_records_read(xl, req, up, cont);
}


static void
rep_stat_split_done(vl_req_t *child, void *cookie)
{
    vl_req_t *req = cookie;

    vl_reply_move(req, child);
    vl_unwind(req, child->status);
}


/* A stat of an object in split-brain is answered from one copy, as its
 * lookup is (rep_lookup_split_answer): the object can be named, listed
 * with ls -l and given to the resolve keys; its data is not read. */
static void
rep_stat_split(vl_xlator_t *xl, vl_req_t *req, rep_mask_t answered)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    struct rep_inspect *in = local->inspect;
    int pick = rep_pick(&in->inode->gfid, rep_data_children(xl, answered));
    vl_req_t *child;

    if (pick < 0)
        pick = rep_pick(&in->inode->gfid, answered);
    rep_inspect_free(local);
    if (pick < 0) {
        vl_unwind(req, -EIO);
        return;
    }
    child = vl_req_child(req, xl->children[pick]);
    if (child == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(child, rep_stat_split_done, req);
}


/* After a refresh: store the readable set and go on with cont. */
static void
rep_refresh_done(vl_xlator_t *xl, vl_req_t *req, rep_cont_fn *cont)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    struct rep_inspect *in = local->inspect;
    vl_inode_t *inode = in->inode;
    unsigned gen = atomic_load(&rep_priv(xl)->event_gen);
    rep_mask_t readable;
    char gs[VL_GFID_STR_LEN];

    if (atomic_load(&in->answered) == 0) {
        rep_finish(req, -ENOTCONN);
        return;
    }
    readable = rep_inspect_readable(
        xl, in, rep_kinds_of(inode->type, vl_gfid_is_root(&inode->gfid)));
    if (readable == 0) {
        vl_log(xl, VL_LOG_ERROR, "%s: every copy is blamed by another "
               "(split-brain)", vl_gfid_to_str(&inode->gfid, gs));
        /* favorite-child-policy resolves it (a directory's entry
         * split-brain is merged): start that heal; a later call finds
         * it healed. */
        if (VL_CONF(xl, struct rep_conf)->fav_child_policy != REP_RULE_NONE)
            rep_heal_parent_hint(xl, inode);
        if (req->op == VL_FOP_STAT) {
            rep_stat_split(xl, req, atomic_load(&in->answered));
            return;
        }
        rep_finish(req, -EIO);
        return;
    }
    rep_inode_set_readable(xl, inode, readable, gen);
    rep_inspect_free(local);
    cont(xl, req);
}


/* ---- lookup ---- */

static void rep_lookup_records_in(vl_xlator_t *xl, vl_req_t *req);


static void
rep_lookup_parent_in(vl_xlator_t *xl, vl_req_t *req)
{
    rep_refresh_done(xl, req, rep_lookup_wind);
}


void
rep_lookup(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    rep_mask_t mask;

    /* A named lookup trusts only the copies of the parent that are not
     * blamed for entries: make sure that set is current. */
    if (a->loc.parent != NULL && a->loc.name != NULL
        && !rep_inode_readable(xl, a->loc.parent, &mask)) {
        rep_refresh(xl, req, a->loc.parent, rep_lookup_parent_in);
        return;
    }
    rep_lookup_wind(xl, req);
}


static void
rep_lookup_arrive(vl_req_t *req, unsigned idx, vl_req_t *child, int status)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    struct rep_inspect *in = local->inspect;

    in->status[idx] = status;
    if (status == 0) {
        struct vl_reply *rp = &in->reply[idx];
        size_t want = (rep_priv(req->xl)->n + 1) * REP_RECORD_SIZE;

        *rp = child->reply;
        memset(&child->reply, 0, sizeof(child->reply));
        atomic_fetch_or(&in->found, 1u << idx);
        /* The records the lookup carried (a brick that did not read
         * them, or read another object's after a rename, answers
         * without: rep_lookup_compare then reads them). */
        if (rp->has_xop && rp->xop_status == 0 && rp->xop_values != NULL
            && rp->xop_values_len == want) {
            memcpy(in->rec[idx], rp->xop_values, want);
            atomic_fetch_or(&in->carried, 1u << idx);
        }
        vl_free(rp->xop_values);
        rp->xop_values = NULL;
        rp->xop_values_len = 0;
        rp->has_xop = false;
    }
    if (!vl_fanout_arrive(&local->fan, status))
        return;
    in->cont(req->xl, req);
}


static void
rep_lookup_done(vl_req_t *child, void *cookie)
{
    struct rep_cookie *ck = cookie;

    rep_lookup_arrive(ck->req, ck->idx, child, child->status);
}


static void rep_lookup_compare(vl_xlator_t *xl, vl_req_t *req);


static void
rep_lookup_wind(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    rep_mask_t mask = rep_up_mask(xl), parent_ok;
    unsigned n = rep_priv(xl)->n;
    struct rep_inspect *in;

    if (mask == 0 || !rep_reads_allowed(xl, mask)) {
        vl_unwind(req, -ENOTCONN);
        return;
    }
    if (a->loc.parent != NULL && a->loc.name != NULL
        && rep_inode_readable(xl, a->loc.parent, &parent_ok)
        && (mask & parent_ok) != 0) {
        if ((mask & parent_ok) != mask)
            rep_heal_parent_hint(xl, a->loc.parent);
        mask &= parent_ok;
    }
    in = rep_inspect_new(xl, local);
    if (in == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    in->asked = mask;
    in->cont = rep_lookup_compare;
    for (unsigned i = 0; i < n; i++) {
        local->ck[i].req = req;
        local->ck[i].idx = i;
    }
    in->xop.op = VL_XATTROP_ADD32;
    in->xop.n = rep_records_keys(rep_priv(xl), local);
    in->xop.names = local->x_names;
    in->xop.values = local->x_values;
    in->xop.sizes = local->x_sizes;
    vl_fanout_begin(&local->fan, (int)rep_popcount(mask));
    for (unsigned i = 0; i < n; i++) {
        vl_req_t *child;

        if (!(mask & (1u << i)))
            continue;
        child = vl_req_child(req, xl->children[i]);
        if (child == NULL) {
            rep_lookup_arrive(req, i, NULL, -ENOMEM);
            continue;
        }
        child->args.lookup.xop = &in->xop;
        vl_wind(child, rep_lookup_done, &local->ck[i]);
    }
}


/* Every asked child answered the lookup: check that the copies agree,
 * then read their records. */
static void
rep_lookup_compare(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    struct rep_inspect *in = local->inspect;
    rep_mask_t found = atomic_load(&in->found);
    unsigned n = rep_priv(xl)->n;
    int first = -1, err = 0;
    char g1[VL_GFID_STR_LEN], g2[VL_GFID_STR_LEN];

    for (unsigned i = 0; i < n; i++) {
        if (!(in->asked & (1u << i)))
            continue;
        if (in->status[i] != 0) {
            /* ENOENT wins over transport errors: the name is gone. */
            if (err == 0 || in->status[i] == -ENOENT)
                err = in->status[i];
            continue;
        }
        if (first < 0) {
            first = (int)i;
            continue;
        }
        if (!vl_gfid_equal(&in->reply[i].iatt.gfid,
                           &in->reply[first].iatt.gfid)
            || (in->reply[i].iatt.mode & S_IFMT)
                   != (in->reply[first].iatt.mode & S_IFMT)) {
            vl_log(xl, VL_LOG_ERROR, "lookup %s: %s has gfid %s, %s has "
                   "%s (or another type): not served until healed",
                   req->args.lookup.loc.name != NULL
                       ? req->args.lookup.loc.name : "(by gfid)",
                   xl->children[first]->name,
                   vl_gfid_to_str(&in->reply[first].iatt.gfid, g1),
                   xl->children[i]->name,
                   vl_gfid_to_str(&in->reply[i].iatt.gfid, g2));
            /* favorite-child-policy resolves such a name in its
             * directory's heal: start it (a later lookup finds it
             * healed). */
            if (VL_CONF(xl, struct rep_conf)->fav_child_policy
                != REP_RULE_NONE)
                rep_heal_parent_hint(xl, req->args.lookup.loc.parent);
            rep_finish(req, -EIO);
            return;
        }
    }
    if (found == 0) {
        rep_finish(req, err != 0 ? err : -ENOTCONN);
        return;
    }
    /* The records are read through the linked inode of that GFID: the
     * lookup's own inode is fresh (no GFID yet) for a new name. */
    in->inode = vl_inode_get(req->graph->itable, &in->reply[first].iatt.gfid,
                             in->reply[first].iatt.mode & S_IFMT);
    if (in->inode == NULL) {
        rep_finish(req, -ENOMEM);
        return;
    }
    if ((atomic_load(&in->carried) & found) == found) {
        /* Every copy's records came with its lookup. */
        in->asked = found;
        atomic_store(&in->answered, found);
        atomic_fetch_add(&rep_priv(xl)->n_lookup_carried, 1);
        rep_lookup_records_in(xl, req);
        return;
    }
    rep_records_read(xl, req, found, rep_lookup_records_in);
}


/* A lookup of an object in split-brain is answered, as GlusterFS does,
 * so that it can be named (stat, the resolve keys through a mount): the
 * attributes of one copy, never content or an xattr from it. Its
 * readable set stays unknown, so every read refreshes it and answers
 * EIO, and a change's pre-op finds the split-brain (rep-txn.c). */
static void
rep_lookup_split_answer(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    struct rep_inspect *in = local->inspect;
    rep_mask_t found = atomic_load(&in->found);
    int pick = rep_pick(&in->inode->gfid, rep_data_children(xl, found));
    const struct vl_reply *src;

    if (pick < 0)
        pick = rep_pick(&in->inode->gfid, found);
    if (pick < 0) {
        rep_finish(req, -EIO);
        return;
    }
    src = &in->reply[pick];
    vl_reply_clear(&req->reply);
    req->reply.iatt = src->iatt;
    req->reply.postparent = src->postparent;
    req->reply.has_postparent = src->has_postparent;
    if (req->args.lookup.xattr_name != NULL)
        req->reply.xattr_status = -EIO;
    rep_finish(req, 0);
}


static void
rep_lookup_records_in(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    struct rep_inspect *in = local->inspect;
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    unsigned gen = atomic_load(&rep_priv(xl)->event_gen);
    rep_mask_t readable;
    char gs[VL_GFID_STR_LEN];
    int pick;

    /* Copies whose records could not be read are not trusted. */
    readable = rep_inspect_readable(
        xl, in, rep_kinds_of(in->inode->type,
                             vl_gfid_is_root(&in->inode->gfid)));
    readable &= atomic_load(&in->found);
    if (readable == 0) {
        if (atomic_load(&in->answered) == 0) {
            rep_finish(req, -ENOTCONN);
            return;
        }
        vl_log(xl, VL_LOG_ERROR, "%s: every copy is blamed by another "
               "(split-brain)", vl_gfid_to_str(&in->inode->gfid, gs));
        /* A favorite-child-policy resolves it in the background: a
         * later lookup finds the copies healed. */
        if (VL_CONF(xl, struct rep_conf)->fav_child_policy != 0)
            rep_heal_on_lookup(xl, in->inode, atomic_load(&in->answered),
                               (const uint8_t *const *)rep_inspect_records(
                                   in));
        rep_lookup_split_answer(xl, req);
        return;
    }
    rep_inode_set_readable(xl, in->inode, readable, gen);
    if (a->loc.inode != NULL && a->loc.inode != in->inode)
        rep_inode_set_readable(xl, a->loc.inode, readable, gen);
    /* A copy blamed: heal it in the background (rep-heal.c); this
     * lookup answers now from the good copies. */
    rep_heal_on_lookup(xl, in->inode, atomic_load(&in->answered),
                       (const uint8_t *const *)rep_inspect_records(in));
    /* The arbiter's attributes say size 0: its copy is good for the
     * records only. */
    pick = rep_pick(&in->inode->gfid, rep_data_children(xl, readable));
    if (pick < 0) {
        rep_finish(req, -ENOTCONN);
        return;
    }
    vl_reply_clear(&req->reply);
    req->reply = in->reply[pick];
    memset(&in->reply[pick], 0, sizeof(in->reply[pick]));
    rep_finish(req, 0);
}


/* ---- reads ---- */

static vl_fd_t *
rep_read_fd(vl_req_t *req)
{
    switch (req->op) {
    case VL_FOP_STAT:
        return req->args.stat.fd;
    case VL_FOP_READ:
        return req->args.read.fd;
    case VL_FOP_LSEEK:
        return req->args.lseek.fd;
    case VL_FOP_RCHECKSUM:
        return req->args.rchecksum.fd;
    case VL_FOP_READDIR:
        return req->args.readdir.fd;
    default:
        return NULL;
    }
}


static vl_inode_t *
rep_read_inode(vl_req_t *req)
{
    vl_fd_t *fd = rep_read_fd(req);

    if (fd != NULL)
        return fd->inode;
    switch (req->op) {
    case VL_FOP_STAT:
        return req->args.stat.loc.inode;
    case VL_FOP_ACCESS:
        return req->args.access.loc.inode;
    case VL_FOP_READLINK:
        return req->args.readlink.loc.inode;
    case VL_FOP_GETXATTR:
        return req->args.getxattr.loc.inode;
    default:
        return NULL;
    }
}


static void
rep_read_refreshed(vl_xlator_t *xl, vl_req_t *req)
{
    rep_refresh_done(xl, req, rep_read_dispatch);
}


static void
rep_read_done(vl_req_t *child, void *cookie)
{
    vl_req_t *req = cookie;
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);

    /* The copy went away under us: another good copy may answer. */
    if (child->status == -ENOTCONN && req->op != VL_FOP_READDIR) {
        local->tried |= 1u << local->read_child;
        rep_read_dispatch(req->xl, req);
        return;
    }
    vl_reply_move(req, child);
    vl_unwind(req, child->status);
}


/* readdirplus entries carry attributes from the one child read: keep
 * them only for objects whose copy on that child is known good (the
 * caller looks the others up, which compares the copies), and whose
 * up copies are all good: the lookup of one that is not starts its heal
 * (rep-heal.c), which a listing's attributes would keep from coming.
 * The others keep them marked unsure: distribute above still tells its
 * link files by them (left out of the listing, or a renamed file whose
 * name hashes elsewhere is listed twice). */
void
rep_readdir_strip(vl_xlator_t *xl, vl_req_t *req, int child)
{
    struct vl_dirent_list *list = &req->reply.entries;
    rep_mask_t up = rep_up_mask(xl);

    for (size_t i = 0; i < list->n; i++) {
        struct vl_dirent *e = &list->ents[i];
        vl_inode_t *inode;
        rep_mask_t ok = 0;

        if (!e->has_iatt)
            continue;
        inode = vl_inode_find(req->graph->itable, &e->iatt.gfid);
        if (inode == NULL || !rep_inode_readable(xl, inode, &ok)
            || !(ok & (1u << child)) || (ok & up) != up) {
            e->has_iatt = false;
            e->is_iatt_unsure = true;
            e->has_content = false;
        }
        vl_inode_unref(inode);
    }
}


static void
rep_readdir_done(vl_req_t *child, void *cookie)
{
    vl_req_t *req = cookie;
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);

    vl_reply_move(req, child);
    if (child->status == 0)
        rep_readdir_strip(req->xl, req, local->read_child);
    vl_unwind(req, child->status);
}


static void
rep_read_dispatch(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    vl_inode_t *inode = rep_read_inode(req);
    vl_fd_t *fd = rep_read_fd(req);
    rep_mask_t readable, up = rep_up_mask(xl), mask;
    vl_req_t *child;
    int pick = -1;

    if (inode == NULL) {
        vl_unwind(req, -EINVAL);
        return;
    }
    if (!rep_reads_allowed(xl, up)) {
        vl_unwind(req, -ENOTCONN);
        return;
    }
    if (!rep_inode_readable(xl, inode, &readable)) {
        rep_refresh(xl, req, inode, rep_read_refreshed);
        return;
    }
    mask = rep_data_children(xl, readable & up & ~local->tried);
    if (fd != NULL) {
        rep_mask_t opened = rep_fd_opened(xl, fd);

        /* Every copy the fd is open on is down or stale, and good ones
         * came back since it was opened: open it there first (a listing
         * under way stays on its brick, below). */
        if ((mask & opened) == 0 && (mask & ~opened) != 0
            && !local->is_reopened
            && !(req->op == VL_FOP_READDIR
                 && req->args.readdir.offset != 0)) {
            rep_fd_reopen(xl, req, fd, mask & ~opened, rep_read_dispatch);
            return;
        }
        mask &= opened;
    }
    if (req->op == VL_FOP_READDIR && req->args.readdir.offset != 0) {
        struct rep_fd_ctx *ctx = rep_fctx(xl, fd);

        /* Offsets are one brick's cookies: continue on that brick. */
        pthread_mutex_lock(&fd->lock);
        pick = ctx->has_dir_child ? ctx->dir_child : -1;
        pthread_mutex_unlock(&fd->lock);
        if (pick < 0 || !(up & (1u << pick))) {
            vl_unwind(req, pick < 0 ? -EINVAL : -ENOTCONN);
            return;
        }
    } else {
        pick = rep_pick(&inode->gfid, mask);
    }
    if (pick < 0) {
        /* No good copy is reachable: stale ones are never served. */
        vl_unwind(req, -ENOTCONN);
        return;
    }
    local->read_child = pick;
    if (req->op == VL_FOP_READDIR) {
        struct rep_fd_ctx *ctx = rep_fctx(xl, fd);

        pthread_mutex_lock(&fd->lock);
        ctx->dir_child = pick;
        ctx->has_dir_child = true;
        pthread_mutex_unlock(&fd->lock);
    }
    child = vl_req_child(req, xl->children[pick]);
    if (child == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(child,
            req->op == VL_FOP_READDIR ? rep_readdir_done : rep_read_done,
            req);
}


void
rep_read_fop(vl_xlator_t *xl, vl_req_t *req)
{
    VL_REQ_PRIV(req, struct rep_local)->tried = 0;
    rep_read_dispatch(xl, req);
}


void
rep_readdir(vl_xlator_t *xl, vl_req_t *req)
{
    rep_read_fop(xl, req);
}
