/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-protocol-compound: replicate's compound requests over the wire
 * (protocol 8, issue 21). The brick graph is protocol/server over
 * "xo/count" (counts the requests the server hands down) over
 * features/locks over "xo/leaf" (one object's xattrs in memory, as in
 * test-protocol-xattrop); the client graph is "ph/ready" over
 * protocol/client (proto-harness.c).
 *
 * Covers: an INODELK and an ENTRYLK carrying their pre-op cross as one
 * request each and answer the lock and the xattrop's values together; an
 * XATTROP carrying the unlock crosses as one request and releases the
 * lock (another owner then gets it); a failing post-op still unlocks;
 * the server refusing malformed compounds (a carried key of 6 bytes, an
 * unlock with a bad lock type, a lock that is an unlock) with -EINVAL
 * and no lock taken, nothing applied; a client speaking 7 accepted by
 * this brick and answered in 7's terms (no compound procedure); a
 * client speaking 8 meeting a brick that speaks 7 (an in-test brick)
 * offers 7 again, is accepted, and sends the plain parts only; the
 * client's reading of the brick's version text. A LOOKUP carrying the
 * read of its object's records (protocol 9) crosses as one request; a
 * malformed one is refused, and a client of 8 is answered PROC_UNAVAIL.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <cmocka.h>

#include "builtin.h"
#include "protocol/client/client.h"
#include "proto-harness.h"

/* ---- xo/leaf: one object's xattrs, in memory ---- */

static struct {
    pthread_mutex_t lock;           /* guards everything here */
    struct ph_xattrs xs;            /* the object's counters */
    int n_xattrops;                 /* XATTROP calls seen */
    int n_down[VL_FOP_COUNT];       /* requests xo/count passed down */
    int fail_xattrop;               /* what the leaf's XATTROP answers */
    vl_gfid_t last_gfid;            /* object of the last one */
    bool last_by_fd;                /* it came with an fd */
    uint32_t last_op;               /* its op */
    bool is_broken;                 /* answer one byte short */
    vl_gfid_t lookup_gfid;          /* what a lookup finds */
} leaf;


static void
leaf_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_reply *rp = &req->reply;
    union vl_fop_args *a = &req->args;
    int status = 0;

    pthread_mutex_lock(&leaf.lock);
    switch (req->op) {
    case VL_FOP_CREATE:
        memset(&rp->iatt, 0, sizeof(rp->iatt));
        rp->iatt.gfid = a->create.gfid;
        rp->iatt.ino = vl_gfid_to_ino(&a->create.gfid);
        rp->iatt.mode = S_IFREG | 0644;
        rp->iatt.nlink = 1;
        break;
    case VL_FOP_XATTROP:
        leaf.n_xattrops++;
        leaf.last_by_fd = a->xattrop.fd != NULL;
        leaf.last_gfid = a->xattrop.fd != NULL
                             ? a->xattrop.fd->inode->gfid
                             : a->xattrop.loc.inode->gfid;
        leaf.last_op = a->xattrop.op;
        status = leaf.fail_xattrop != 0
                     ? leaf.fail_xattrop
                     : ph_xattrs_apply(&leaf.xs, &a->xattrop, rp,
                                       leaf.is_broken);
        break;
    case VL_FOP_FLUSH:
        break;
    case VL_FOP_LOOKUP: {
        /* The one object, under any name or GFID, with the records read
         * a lookup carries. */
        struct vl_reply tmp = {0};

        memset(&rp->iatt, 0, sizeof(rp->iatt));
        rp->iatt.gfid = leaf.lookup_gfid;
        rp->iatt.ino = vl_gfid_to_ino(&leaf.lookup_gfid);
        rp->iatt.mode = S_IFREG | 0644;
        rp->iatt.nlink = 1;
        if (a->lookup.xop == NULL)
            break;
        leaf.n_xattrops++;
        rp->has_xop = true;
        rp->xop_status = ph_xattrs_apply(&leaf.xs, a->lookup.xop, &tmp,
                                         leaf.is_broken);
        if (rp->xop_status == 0) {
            rp->xop_values = tmp.xattr;
            rp->xop_values_len = tmp.xattr_len;
            tmp.xattr = NULL;
        }
        vl_reply_clear(&tmp);
        break;
    }
    default:
        status = -ENOSYS;
    }
    pthread_mutex_unlock(&leaf.lock);
    vl_unwind(req, status);
}


struct xo_conf {
    bool dummy; /* no options */
};

static const vl_option_t xo_options[] = {VL_OPT_END};
static const char *const xo_types[] = {"misc", NULL};

static const vl_xlator_class_t leaf_class = {
    .abi = VL_XLATOR_ABI,
    .type = "xo/leaf",
    .prefix = "leaf",
    .flags = VL_XL_LEAF,
    .conf_size = sizeof(struct xo_conf),
    .options = xo_options,
    .mem_types = xo_types,
    .doc = "Keeps one object's xattrs in memory for the xattrop tests.",
    .fops = {
        [VL_FOP_CREATE] = leaf_fop,
        [VL_FOP_XATTROP] = leaf_fop,
        [VL_FOP_FLUSH] = leaf_fop,
        [VL_FOP_LOOKUP] = leaf_fop,
    },
};

/* ---- xo/count: what the server hands down ---- */

static void
count_fop(vl_xlator_t *xl, vl_req_t *req)
{
    pthread_mutex_lock(&leaf.lock);
    leaf.n_down[req->op]++;
    pthread_mutex_unlock(&leaf.lock);
    vl_pass(req, VL_FIRST_CHILD(xl));
}


static const vl_xlator_class_t count_class = {
    .abi = VL_XLATOR_ABI,
    .type = "xo/count",
    .prefix = "count",
    .flags = VL_XL_ONE_CHILD,
    .conf_size = sizeof(struct xo_conf),
    .options = xo_options,
    .mem_types = xo_types,
    .doc = "Counts the requests protocol/server hands down.",
    .fops = {
        [VL_FOP_INODELK] = count_fop,
        [VL_FOP_ENTRYLK] = count_fop,
        [VL_FOP_XATTROP] = count_fop,
        [VL_FOP_LOOKUP] = count_fop,
    },
};

/* ---- graphs ---- */

struct env {
    struct ph_env ph;         /* the brick and its client */
    vl_volfile_t *ovf;        /* the client of the old brick's volfile */
    vl_graph_t *og;           /* ... and graph, or NULL */
};


/* The brick (xo/count, features/locks, xo/leaf) and its client. */
static int
xo_up(void **state, struct env *e)
{
    ph_init();
    (void)vl_registry_add(&xl_features_locks);
    (void)vl_registry_add(&count_class);
    (void)vl_registry_add(&leaf_class);
    memset(&leaf, 0, sizeof(leaf));
    pthread_mutex_init(&leaf.lock, NULL);
    ph_env_start(&e->ph);
    ph_brick_up(&e->ph,
                "volume xo-leaf\n type xo/leaf\nend-volume\n"
                "volume xo-locks\n type features/locks\n"
                " subvolumes xo-leaf\nend-volume\n"
                "volume xo-brick\n type xo/count\n"
                " subvolumes xo-locks\nend-volume\n",
                "xo-brick", "127.0.0.1");
    ph_client_up(&e->ph, "xo-brick", "", "ph/ready");
    assert_int_equal(vl_graph_wait_ready(e->ph.cg, PH_WAIT_MS, NULL, 0), 0);
    *state = e;
    return 0;
}


static int
xo_setup(void **state)
{
    return xo_up(state, calloc(1, sizeof(struct env)));
}


static int
xo_teardown(void **state)
{
    struct env *e = *state;

    ph_graph_down(&e->og, &e->ovf);
    ph_env_stop(&e->ph);
    free(e);
    return 0;
}

/* ---- helpers ---- */

#define DIRTY "trusted.mortar.rep.dirty"

/* BE int32 array of 3 counters. */
static void
be3(unsigned char out[12], int32_t d, int32_t m, int32_t en)
{
    uint32_t v[3] = {htonl((uint32_t)d), htonl((uint32_t)m),
                     htonl((uint32_t)en)};

    memcpy(out, v, sizeof(v));
}


static int
n_down(vl_fop_t op)
{
    int n;

    pthread_mutex_lock(&leaf.lock);
    n = leaf.n_down[op];
    pthread_mutex_unlock(&leaf.lock);
    return n;
}


static int
n_applied(void)
{
    int n;

    pthread_mutex_lock(&leaf.lock);
    n = leaf.n_xattrops;
    pthread_mutex_unlock(&leaf.lock);
    return n;
}


/* The pre-op/post-op of one key on inode: dirty += (d, 0, 0). */
static void
fill_xop(struct vl_xattrop_args *x, vl_inode_t *inode, const void *const *v)
{
    static const char *const names[1] = {DIRTY};
    static const uint32_t sizes[1] = {12};

    memset(x, 0, sizeof(*x));
    x->loc.inode = inode;
    x->op = VL_XATTROP_ADD32;
    x->n = 1;
    x->names = names;
    x->values = v;
    x->sizes = sizes;
}


/* An INODELK of owner on inode, cmd, carrying xop (may be NULL). */
static int
do_inodelk(vl_graph_t *g, vl_inode_t *inode, uint64_t owner,
           enum vl_lock_cmd cmd, const struct vl_xattrop_args *xop,
           struct vl_reply *r /* OUT */)
{
    struct vl_caller caller = {.lk_owner = owner};
    union vl_fop_args a;

    memset(&a, 0, sizeof(a));
    a.inodelk.domain = "rep";
    a.inodelk.loc.inode = inode;
    a.inodelk.cmd = cmd;
    a.inodelk.flock.type = cmd == VL_LOCK_UNLOCK ? F_UNLCK : F_WRLCK;
    a.inodelk.flock.whence = SEEK_SET;
    a.inodelk.xop = xop;
    return vl_sync_call(g->top, VL_FOP_INODELK, &a, &caller, r);
}


/* The post-op xop of owner carrying the release of its inodelk. */
static int
do_postop(vl_graph_t *g, vl_inode_t *inode, uint64_t owner,
          const struct vl_xattrop_args *xop, struct vl_reply *r /* OUT */)
{
    struct vl_caller caller = {.lk_owner = owner};
    struct vl_xattrop_unlock ul;
    union vl_fop_args a;

    memset(&ul, 0, sizeof(ul));
    ul.domain = "rep";
    ul.loc.inode = inode;
    ul.flock.whence = SEEK_SET;
    memset(&a, 0, sizeof(a));
    a.xattrop = *xop;
    a.xattrop.unlock = &ul;
    return vl_sync_call(g->top, VL_FOP_XATTROP, &a, &caller, r);
}

/* ---- tests ---- */

/* Lock + pre-op, then post-op + unlock: two requests reach the brick
 * graph (one INODELK, one XATTROP), both parts answered each time, the
 * lock released by the post-op. */
static void
test_inodelk_compound(void **state)
{
    struct env *e = *state;
    unsigned char up[12], down[12], want[12];
    const void *vu[1] = {up}, *vd[1] = {down};
    struct vl_xattrop_args pre, post;
    struct vl_reply r;
    vl_gfid_t gfid;
    vl_inode_t *inode;

    vl_gfid_generate(&gfid);
    inode = vl_inode_get(e->ph.cg->itable, &gfid, S_IFREG);
    assert_non_null(inode);
    be3(up, 1, 0, 0);
    be3(down, -1, 0, 0);
    fill_xop(&pre, inode, vu);
    fill_xop(&post, inode, vd);
    assert_int_equal(do_inodelk(e->ph.cg, inode, 7, VL_LOCK_TRY, &pre, &r), 0);
    assert_true(r.has_xop);
    assert_int_equal(r.xop_status, 0);
    be3(want, 1, 0, 0);
    assert_int_equal(r.xattr_len, 12);
    assert_memory_equal(r.xattr, want, 12);
    vl_reply_clear(&r);
    assert_int_equal(n_down(VL_FOP_INODELK), 1);
    assert_int_equal(n_down(VL_FOP_XATTROP), 0);
    assert_int_equal(n_applied(), 1);
    /* Another owner is refused while it is held. */
    assert_int_equal(do_inodelk(e->ph.cg, inode, 8, VL_LOCK_TRY, NULL, &r),
                     -EAGAIN);
    vl_reply_clear(&r);
    /* The unlock it carries runs inside the brick: no INODELK. */
    assert_int_equal(do_postop(e->ph.cg, inode, 7, &post, &r), 0);
    assert_true(r.has_unlock);
    assert_int_equal(r.unlock_status, 0);
    be3(want, 0, 0, 0);
    assert_int_equal(r.xattr_len, 12);
    assert_memory_equal(r.xattr, want, 12);
    vl_reply_clear(&r);
    assert_int_equal(n_down(VL_FOP_INODELK), 2);
    assert_int_equal(n_down(VL_FOP_XATTROP), 1);
    assert_int_equal(n_applied(), 2);
    /* Released by the post-op: the other owner gets it now. */
    assert_int_equal(do_inodelk(e->ph.cg, inode, 8, VL_LOCK_TRY, NULL, &r), 0);
    vl_reply_clear(&r);
    assert_int_equal(do_inodelk(e->ph.cg, inode, 8, VL_LOCK_UNLOCK, NULL, &r),
                     0);
    vl_reply_clear(&r);
    vl_inode_unref(inode);
}


/* An ENTRYLK carrying the pre-op of its directory; a post-op that fails
 * on the brick still releases the entry lock. */
static void
test_entrylk_compound_postop_fails(void **state)
{
    struct env *e = *state;
    unsigned char up[12];
    const void *vu[1] = {up};
    struct vl_xattrop_args pre;
    struct vl_xattrop_unlock ul;
    struct vl_caller c7 = {.lk_owner = 7}, c8 = {.lk_owner = 8};
    union vl_fop_args a;
    struct vl_reply r;
    vl_gfid_t gfid;
    vl_inode_t *dir;

    vl_gfid_generate(&gfid);
    dir = vl_inode_get(e->ph.cg->itable, &gfid, S_IFDIR);
    assert_non_null(dir);
    be3(up, 0, 0, 1);
    fill_xop(&pre, dir, vu);
    memset(&a, 0, sizeof(a));
    a.entrylk.domain = "rep";
    a.entrylk.loc.parent = dir;
    a.entrylk.loc.name = "f";
    a.entrylk.cmd = VL_LOCK_TRY;
    a.entrylk.type = F_WRLCK;
    a.entrylk.xop = &pre;
    assert_int_equal(vl_sync_call(e->ph.cg->top, VL_FOP_ENTRYLK, &a, &c7, &r),
                     0);
    assert_true(r.has_xop);
    assert_int_equal(r.xop_status, 0);
    assert_int_equal(r.xattr_len, 12);
    vl_reply_clear(&r);
    assert_int_equal(n_down(VL_FOP_ENTRYLK), 1);
    assert_int_equal(n_down(VL_FOP_XATTROP), 0);
    /* The post-op fails on the brick: answered with its error, the
     * unlock done anyway. */
    pthread_mutex_lock(&leaf.lock);
    leaf.fail_xattrop = -ENOSPC;
    pthread_mutex_unlock(&leaf.lock);
    memset(&ul, 0, sizeof(ul));
    ul.is_entry = true;
    ul.domain = "rep";
    ul.loc.parent = dir;
    ul.loc.name = "f";
    ul.type = F_WRLCK;
    a.xattrop = pre;
    a.xattrop.unlock = &ul;
    assert_int_equal(vl_sync_call(e->ph.cg->top, VL_FOP_XATTROP, &a, &c7, &r),
                     -ENOSPC);
    assert_true(r.has_unlock);
    assert_int_equal(r.unlock_status, 0);
    assert_int_equal(r.xattr_len, 0);
    vl_reply_clear(&r);
    memset(&a, 0, sizeof(a));
    a.entrylk.domain = "rep";
    a.entrylk.loc.parent = dir;
    a.entrylk.loc.name = "f";
    a.entrylk.cmd = VL_LOCK_TRY;
    a.entrylk.type = F_WRLCK;
    assert_int_equal(vl_sync_call(e->ph.cg->top, VL_FOP_ENTRYLK, &a, &c8, &r),
                     0);
    vl_reply_clear(&r);
    vl_inode_unref(dir);
}

/* ---- a raw peer ---- */

static struct ph_raw raw; /* the running test's */


/* The raw peer connected to the brick, having offered version proto. */
static void
raw_open(struct env *e, unsigned proto)
{
    ph_raw_open(&raw, &e->ph, "xo-brick", proto);
}


/* Malformed compounds from a peer that skips the client's checks are
 * refused with -EINVAL before anything is done: no lock taken (a plain
 * lock of another owner is granted right after), nothing applied. */
static void
test_server_refuses_malformed(void **state)
{
    struct env *e = *state;
    char odd[6] = {0, 0, 0, 1, 0, 0}, ok[12] = {0, 0, 0, 1};
    mrt_xattrop_key kodd = {.name = DIRTY,
                            .value = {.value_len = 6, .value_val = odd}};
    mrt_xattrop_key kok = {.name = DIRTY,
                           .value = {.value_len = 12, .value_val = ok}};
    mrt_inodelk_xop_args il;
    mrt_xattrop_unlock_args xu;
    struct vl_reply r;
    vl_gfid_t gfid;
    vl_inode_t *inode;

    raw_open(e, MRT_PROTO_VERSION);
    vl_gfid_generate(&gfid);
    memset(&il, 0, sizeof(il));
    il.lock.domain = "rep";
    il.lock.loc.name = "";
    vrpc_gfid_to_xdr(&gfid, il.lock.loc.gfid);
    il.lock.cmd = VL_LOCK_TRY;
    il.lock.flock.type = F_WRLCK;
    il.xop.loc = il.lock.loc;
    il.xop.op = VL_XATTROP_ADD32;
    il.xop.keys.keys_len = 1;
    il.xop.keys.keys_val = &kodd;
    /* 1: a carried key of 6 bytes. */
    ph_raw_call(&raw, MRT_PROC_INODELK_XOP, (xdrproc_t)xdr_mrt_inodelk_xop_args,
             &il, 1);
    assert_int_equal(raw.status[1], -EINVAL);
    /* 2: a "lock" that is an unlock carrying a pre-op. */
    il.xop.keys.keys_val = &kok;
    il.lock.cmd = VL_LOCK_UNLOCK;
    ph_raw_call(&raw, MRT_PROC_INODELK_XOP, (xdrproc_t)xdr_mrt_inodelk_xop_args,
             &il, 2);
    assert_int_equal(raw.status[2], -EINVAL);
    /* 3: an unknown xattrop op. */
    il.lock.cmd = VL_LOCK_TRY;
    il.xop.op = 7;
    ph_raw_call(&raw, MRT_PROC_INODELK_XOP, (xdrproc_t)xdr_mrt_inodelk_xop_args,
             &il, 3);
    assert_int_equal(raw.status[3], -EINVAL);
    /* 4: a post-op whose unlock has a bad lock type. */
    memset(&xu, 0, sizeof(xu));
    xu.xop = il.xop;
    xu.xop.op = VL_XATTROP_ADD32;
    xu.unlock.domain = "rep";
    xu.unlock.loc = il.lock.loc;
    xu.unlock.flock.type = 77;
    ph_raw_call(&raw, MRT_PROC_XATTROP_UNLOCK,
             (xdrproc_t)xdr_mrt_xattrop_unlock_args, &xu, 4);
    assert_int_equal(raw.status[4], -EINVAL);
    /* 5: an entry unlock of no type, and 6: of an empty domain. */
    xu.unlock.is_entry = true;
    xu.unlock.loc.name = "f";
    memcpy(xu.unlock.loc.parent, il.lock.loc.gfid, 16);
    memset(xu.unlock.loc.gfid, 0, 16);
    xu.unlock.type = 5;
    ph_raw_call(&raw, MRT_PROC_XATTROP_UNLOCK,
             (xdrproc_t)xdr_mrt_xattrop_unlock_args, &xu, 5);
    assert_int_equal(raw.status[5], -EINVAL);
    xu.unlock.type = F_WRLCK;
    xu.unlock.domain = "";
    ph_raw_call(&raw, MRT_PROC_XATTROP_UNLOCK,
             (xdrproc_t)xdr_mrt_xattrop_unlock_args, &xu, 6);
    assert_int_equal(raw.status[6], -EINVAL);
    assert_int_equal(n_applied(), 0);
    assert_int_equal(n_down(VL_FOP_INODELK), 0);
    assert_int_equal(n_down(VL_FOP_XATTROP), 0);
    ph_raw_close(&raw);
    inode = vl_inode_get(e->ph.cg->itable, &gfid, S_IFREG);
    assert_non_null(inode);
    assert_int_equal(do_inodelk(e->ph.cg, inode, 8, VL_LOCK_TRY, NULL, &r), 0);
    vl_reply_clear(&r);
    vl_inode_unref(inode);
}


/* A client speaking 7 is accepted by this brick (8) and answered in 7's
 * terms: a compound procedure is PROC_UNAVAIL for it, a plain INODELK
 * works. */
static void
test_old_client_accepted(void **state)
{
    struct env *e = *state;
    char ok[12] = {0, 0, 0, 1};
    mrt_xattrop_key kok = {.name = DIRTY,
                           .value = {.value_len = 12, .value_val = ok}};
    mrt_inodelk_xop_args il;
    vl_gfid_t gfid;

    raw_open(e, MRT_PROTO_MIN);
    vl_gfid_generate(&gfid);
    memset(&il, 0, sizeof(il));
    il.lock.domain = "rep";
    il.lock.loc.name = "";
    vrpc_gfid_to_xdr(&gfid, il.lock.loc.gfid);
    il.lock.cmd = VL_LOCK_TRY;
    il.lock.flock.type = F_WRLCK;
    il.xop.loc = il.lock.loc;
    il.xop.op = VL_XATTROP_ADD32;
    il.xop.keys.keys_len = 1;
    il.xop.keys.keys_val = &kok;
    ph_raw_call(&raw, MRT_PROC_INODELK_XOP, (xdrproc_t)xdr_mrt_inodelk_xop_args,
             &il, 1);
    assert_int_equal(raw.status[1], -EOPNOTSUPP); /* PROC_UNAVAIL */
    assert_int_equal(n_applied(), 0);
    assert_int_equal(n_down(VL_FOP_INODELK), 0);
    ph_raw_call(&raw, VRPC_FOP_PROC(VL_FOP_INODELK),
             (xdrproc_t)xdr_mrt_inodelk_args, &il.lock, 2);
    assert_int_equal(raw.status[2], 0);
    assert_int_equal(n_down(VL_FOP_INODELK), 1);
    ph_raw_close(&raw);
}

/* A lookup carrying its records read (protocol 9) crosses as one
 * request: one LOOKUP reaches the brick graph, no XATTROP, and the
 * answer holds the lookup and the values together. */
static void
test_lookup_compound(void **state)
{
    struct env *e = *state;
    static const char *const names[1] = {DIRTY};
    static const uint32_t sizes[1] = {12};
    unsigned char up[12], zero[12] = {0};
    const void *v_up[1] = {up}, *v_zero[1] = {zero};
    struct vl_xattrop_args set, read;
    union vl_fop_args a;
    struct vl_reply r;
    vl_inode_t *inode;

    vl_gfid_generate(&leaf.lookup_gfid);
    inode = vl_inode_get(e->ph.cg->itable, &leaf.lookup_gfid, S_IFREG);
    assert_non_null(inode);
    be3(up, 3, 0, 0);
    fill_xop(&set, inode, v_up);
    memset(&a, 0, sizeof(a));
    a.xattrop = set;
    assert_int_equal(vl_sync_call(e->ph.cg->top, VL_FOP_XATTROP, &a, NULL, &r),
                     0);
    vl_reply_clear(&r);
    memset(&read, 0, sizeof(read));
    read.op = VL_XATTROP_ADD32;
    read.n = 1;
    read.names = names;
    read.values = v_zero;
    read.sizes = sizes;
    memset(&a, 0, sizeof(a));
    a.lookup.loc.inode = inode;
    a.lookup.xop = &read;
    assert_int_equal(vl_sync_call(e->ph.cg->top, VL_FOP_LOOKUP, &a, NULL, &r),
                     0);
    assert_true(vl_gfid_equal(&r.iatt.gfid, &leaf.lookup_gfid));
    assert_true(r.has_xop);
    assert_int_equal(r.xop_status, 0);
    assert_int_equal(r.xop_values_len, 12);
    assert_memory_equal(r.xop_values, up, 12);
    vl_reply_clear(&r);
    assert_int_equal(n_down(VL_FOP_LOOKUP), 1);
    assert_int_equal(n_down(VL_FOP_XATTROP), 1); /* the set only */
    assert_int_equal(n_applied(), 2);
    vl_inode_unref(inode);
}


/* LOOKUP_XOP from a peer that skips the client's checks: a read that
 * would write, one with an fd, one naming an object of its own are
 * refused with -EINVAL before the lookup runs; a client that negotiated
 * 8 gets PROC_UNAVAIL for it. */
static void
test_lookup_compound_refused(void **state)
{
    struct env *e = *state;
    char one[12] = {0, 0, 0, 1};
    mrt_xattrop_key k1 = {.name = DIRTY,
                          .value = {.value_len = 12, .value_val = one}};
    mrt_lookup_xop_args lx;

    raw_open(e, MRT_PROTO_VERSION);
    memset(&lx, 0, sizeof(lx));
    lx.lookup.loc.name = "";
    lx.lookup.loc.gfid[15] = 1;
    lx.lookup.xattr_name = "";
    lx.xop.loc.name = "";
    lx.xop.op = VL_XATTROP_ADD32;
    lx.xop.keys.keys_len = 1;
    lx.xop.keys.keys_val = &k1;
    ph_raw_call(&raw, MRT_PROC_LOOKUP_XOP, (xdrproc_t)xdr_mrt_lookup_xop_args,
             &lx, 1);
    assert_int_equal(raw.status[1], -EINVAL);
    one[3] = 0;
    lx.xop.has_fd = true;
    ph_raw_call(&raw, MRT_PROC_LOOKUP_XOP, (xdrproc_t)xdr_mrt_lookup_xop_args,
             &lx, 2);
    assert_int_equal(raw.status[2], -EINVAL);
    lx.xop.has_fd = false;
    lx.xop.loc.gfid[15] = 2;
    ph_raw_call(&raw, MRT_PROC_LOOKUP_XOP, (xdrproc_t)xdr_mrt_lookup_xop_args,
             &lx, 3);
    assert_int_equal(raw.status[3], -EINVAL);
    assert_int_equal(n_down(VL_FOP_LOOKUP), 0);
    /* Well formed: the leaf answers it. */
    lx.xop.loc.gfid[15] = 0;
    ph_raw_call(&raw, MRT_PROC_LOOKUP_XOP, (xdrproc_t)xdr_mrt_lookup_xop_args,
             &lx, 4);
    assert_int_equal(raw.status[4], 0);
    assert_int_equal(n_down(VL_FOP_LOOKUP), 1);
    ph_raw_close(&raw);
    raw_open(e, 8);
    ph_raw_call(&raw, MRT_PROC_LOOKUP_XOP, (xdrproc_t)xdr_mrt_lookup_xop_args,
             &lx, 1);
    assert_int_equal(raw.status[1], -EOPNOTSUPP); /* PROC_UNAVAIL */
    assert_int_equal(n_down(VL_FOP_LOOKUP), 1);
    ph_raw_close(&raw);
}

/* ---- old/brick: an in-test brick that speaks protocol 7 only ---- */

static struct {
    pthread_mutex_t lock;          /* guards the fields below */
    vl_loop_t *loop;               /* borrowed: the brick loop */
    unsigned offered[4];           /* versions SETVOLUME offered */
    int n_offered;
    uint32_t procs[16];            /* fop procedures called */
    int n_procs;
    int n_conns;                   /* accepted and not closed yet */
} old;


static void
old_record(vrpc_conn_t *c, vl_buf_t *rec, size_t len, void *arg)
{
    struct vrpc_call_hdr hdr;
    size_t off;
    bool xid_ok;

    if (vrpc_decode_call(rec->data, len, &hdr, &off, &xid_ok) != 0)
        return;
    if (hdr.prog == MRT_HANDSHAKE_PROG && hdr.proc == MRT_HS_SETVOLUME) {
        mrt_setvolume_args a;
        mrt_setvolume_rsp r = {0};
        char msg[MRT_ERRSTR_MAX];

        memset(&a, 0, sizeof(a));
        assert_int_equal(vrpc_decode_body(rec->data + off, len - off,
                                          (xdrproc_t)
                                              xdr_mrt_setvolume_args,
                                          &a, NULL),
                         0);
        pthread_mutex_lock(&old.lock);
        if (old.n_offered < 4)
            old.offered[old.n_offered++] = a.proto_version;
        pthread_mutex_unlock(&old.lock);
        msg[0] = '\0';
        /* What a brick of protocol 7 answered. */
        if (a.proto_version != 7) {
            r.status = -EPROTONOSUPPORT;
            snprintf(msg, sizeof(msg), "protocol version %u not supported "
                     "(brick speaks 7)", a.proto_version);
        }
        r.error = msg;
        r.client_id = 1;
        (void)vrpc_send_reply(c, hdr.xid, VRPC_SUCCESS,
                              (xdrproc_t)xdr_mrt_setvolume_rsp, &r, NULL, 0);
        xdr_free((xdrproc_t)xdr_mrt_setvolume_args, (char *)&a);
        return;
    }
    if (hdr.prog == MRT_HANDSHAKE_PROG) {
        mrt_ping_rsp ping = {0};

        (void)vrpc_send_reply(c, hdr.xid, VRPC_SUCCESS,
                              hdr.proc == MRT_HS_PING
                                  ? (xdrproc_t)xdr_mrt_ping_rsp
                                  : NULL,
                              &ping, NULL, 0);
        return;
    }
    pthread_mutex_lock(&old.lock);
    if (old.n_procs < 16)
        old.procs[old.n_procs++] = hdr.proc;
    pthread_mutex_unlock(&old.lock);
    if (hdr.proc == VRPC_FOP_PROC(VL_FOP_INODELK)) {
        mrt_status_rsp r = {0};

        (void)vrpc_send_reply(c, hdr.xid, VRPC_SUCCESS,
                              (xdrproc_t)xdr_mrt_status_rsp, &r, NULL, 0);
    } else if (hdr.proc == VRPC_FOP_PROC(VL_FOP_XATTROP)) {
        mrt_xattrop_args a;
        mrt_xattrop_rsp r = {0};
        char zeros[MRT_XATTROP_RSP_MAX] = {0};
        u_int n = 0;

        memset(&a, 0, sizeof(a));
        assert_int_equal(vrpc_decode_body(rec->data + off, len - off,
                                          (xdrproc_t)xdr_mrt_xattrop_args,
                                          &a, NULL),
                         0);
        for (u_int i = 0; i < a.keys.keys_len; i++)
            n += a.keys.keys_val[i].value.value_len;
        r.values.values_len = n;
        r.values.values_val = zeros;
        (void)vrpc_send_reply(c, hdr.xid, VRPC_SUCCESS,
                              (xdrproc_t)xdr_mrt_xattrop_rsp, &r, NULL, 0);
        xdr_free((xdrproc_t)xdr_mrt_xattrop_args, (char *)&a);
    } else {
        (void)vrpc_send_reply(c, hdr.xid, VRPC_PROC_UNAVAIL, NULL, NULL,
                              NULL, 0);
    }
}


static void
old_close(vrpc_conn_t *c, int reason, void *arg)
{
    pthread_mutex_lock(&old.lock);
    old.n_conns--;
    pthread_mutex_unlock(&old.lock);
    vrpc_conn_unref(c);
}


/* The connections old_accept took, once the client went: each is
 * closed on the brick loop after the client's graph is freed, and one
 * not closed yet when the loop stops would be a leak. */
static int
old_conns(void)
{
    int n;

    pthread_mutex_lock(&old.lock);
    n = old.n_conns;
    pthread_mutex_unlock(&old.lock);
    return n;
}


static const struct vrpc_conn_ops old_ops = {
    .on_record = old_record,
    .on_close = old_close,
};


static void
old_accept(int fd, const struct sockaddr_storage *peer, void *arg)
{
    vrpc_conn_t *c = NULL;

    if (vrpc_conn_new(old.loop, fd, false, &old_ops, NULL, &c) != 0)
        return;
    pthread_mutex_lock(&old.lock);
    old.n_conns++;
    pthread_mutex_unlock(&old.lock);
    if (vrpc_conn_start(c) != 0)
        vrpc_conn_close(c, -EIO);
}


/* A client (8) meeting a brick of 7: refused with "brick speaks 7", it
 * offers 7 on the same connection, is accepted, and then sends a lock
 * carrying a pre-op and a post-op carrying an unlock as their plain
 * parts only (answers with has_xop and has_unlock false, so replicate
 * sends the rest itself). */
static void
test_new_client_old_brick(void **state)
{
    struct env *e = *state;
    unsigned char up[12];
    const void *vu[1] = {up};
    struct vl_xattrop_args pre;
    vrpc_listener_t *l = NULL;
    struct vl_reply r;
    vl_err_t err = {{0}};
    vl_gfid_t gfid;
    vl_inode_t *inode;
    char text[512];

    memset(&old, 0, sizeof(old));
    pthread_mutex_init(&old.lock, NULL);
    old.loop = e->ph.sloop;
    assert_int_equal(vrpc_listen(e->ph.sloop, "127.0.0.1", 0, old_accept, NULL,
                                 &l, &err),
                     0);
    snprintf(text, sizeof(text),
             "volume oc\n type protocol/client\n"
             " option remote-host 127.0.0.1\n"
             " option remote-port %u\n"
             " option remote-subvolume old-brick\n"
             "end-volume\n"
             "volume ot\n type ph/ready\n subvolumes oc\nend-volume\n",
             vrpc_listener_port(l));
    e->og = ph_graph_up(e->ph.cloop, text, &e->ovf);
    assert_int_equal(vl_graph_wait_ready(e->og, PH_WAIT_MS, NULL, 0), 0);
    pthread_mutex_lock(&old.lock);
    assert_int_equal(old.n_offered, 2);
    assert_int_equal(old.offered[0], MRT_PROTO_VERSION);
    assert_int_equal(old.offered[1], 7);
    pthread_mutex_unlock(&old.lock);

    vl_gfid_generate(&gfid);
    inode = vl_inode_get(e->og->itable, &gfid, S_IFREG);
    assert_non_null(inode);
    be3(up, 1, 0, 0);
    fill_xop(&pre, inode, vu);
    assert_int_equal(do_inodelk(e->og, inode, 7, VL_LOCK_TRY, &pre, &r), 0);
    assert_false(r.has_xop);
    vl_reply_clear(&r);
    assert_int_equal(do_postop(e->og, inode, 7, &pre, &r), 0);
    assert_false(r.has_unlock);
    assert_int_equal(r.xattr_len, 12);
    vl_reply_clear(&r);
    pthread_mutex_lock(&old.lock);
    assert_int_equal(old.n_procs, 2);
    assert_int_equal(old.procs[0], VRPC_FOP_PROC(VL_FOP_INODELK));
    assert_int_equal(old.procs[1], VRPC_FOP_PROC(VL_FOP_XATTROP));
    pthread_mutex_unlock(&old.lock);
    vl_inode_unref(inode);
    ph_graph_down(&e->og, &e->ovf);
    for (int i = 0; i < PH_WAIT_MS && old_conns() > 0; i++)
        usleep(1000);
    assert_int_equal(old_conns(), 0);
    vrpc_listener_free(l);
}


/* The client's reading of a refusal: a version it still speaks and is
 * older than the one sent, else none. */
static void
test_proto_fallback(void **state)
{
    (void)state;
    assert_int_equal(client_proto_fallback(8, "protocol version 8 not "
                                              "supported (brick speaks 7)"),
                     7);
    assert_int_equal(client_proto_fallback(8, "(brick speaks 6)"), 0);
    assert_int_equal(client_proto_fallback(7, "(brick speaks 7)"), 0);
    assert_int_equal(client_proto_fallback(8, "(brick speaks 9)"), 0);
    assert_int_equal(client_proto_fallback(8, "(brick speaks 7"), 0);
    assert_int_equal(client_proto_fallback(8, "(brick speaks x)"), 0);
    assert_int_equal(client_proto_fallback(8, ""), 0);
    assert_int_equal(client_proto_fallback(8, NULL), 0);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_inodelk_compound, xo_setup,
                                        xo_teardown),
        cmocka_unit_test_setup_teardown(test_entrylk_compound_postop_fails,
                                        xo_setup, xo_teardown),
        cmocka_unit_test_setup_teardown(test_server_refuses_malformed,
                                        xo_setup, xo_teardown),
        cmocka_unit_test_setup_teardown(test_lookup_compound, xo_setup,
                                        xo_teardown),
        cmocka_unit_test_setup_teardown(test_lookup_compound_refused,
                                        xo_setup, xo_teardown),
        cmocka_unit_test_setup_teardown(test_old_client_accepted, xo_setup,
                                        xo_teardown),
        cmocka_unit_test_setup_teardown(test_new_client_old_brick, xo_setup,
                                        xo_teardown),
        cmocka_unit_test(test_proto_fallback),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
