/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-protocol-xattrop: the XATTROP fop over the wire (protocol 6),
 * protocol/client and protocol/server over 127.0.0.1. The brick graph is
 * protocol/server over "xo/leaf", an in-test translator that keeps the
 * xattrs of one object in memory and adds to them as storage/posix does;
 * the client graph is "xo/top" (ready at CHILD_UP) over protocol/client.
 *
 * Covers: by gfid and by fd, names, sizes and values arriving intact and
 * the new values coming back in reply.xattr; the leaf's errors passed
 * back; the client refusing bad arguments before sending (count, sizes,
 * names); the server refusing a size that is not a multiple of 4 sent by
 * a raw peer (the leaf never sees it); a leaf answering the wrong number
 * of bytes turned into -EIO, not a short reply; and end to end over
 * storage/posix (needs root for trusted xattrs): counters on the brick's
 * file, read back by lookup, the heal index entry made and removed, a
 * granular entry record made and cleared.
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
#include "vol/vol.h"
#include "vrpc.h"

#define WAIT_MS 20000
#define XO_KEYS 4

/* ---- xo/leaf: one object's xattrs, in memory ---- */

static struct {
    pthread_mutex_t lock;           /* guards everything here */
    char names[XO_KEYS][64];        /* keys set so far ("" = free) */
    unsigned char vals[XO_KEYS][64]; /* their values */
    uint32_t lens[XO_KEYS];         /* their lengths */
    int n_xattrops;                 /* XATTROP calls seen */
    vl_gfid_t last_gfid;            /* object of the last one */
    bool last_by_fd;                /* it came with an fd */
    uint32_t last_op;               /* its op */
    bool is_broken;                 /* answer one byte short */
} leaf;


/* The slot of name, a new one if create; -1 if none. */
static int
leaf_slot(const char *name, bool create)
{
    for (int i = 0; i < XO_KEYS; i++)
        if (strcmp(leaf.names[i], name) == 0)
            return i;
    for (int i = 0; create && i < XO_KEYS; i++) {
        if (leaf.names[i][0] == '\0') {
            snprintf(leaf.names[i], sizeof(leaf.names[i]), "%s", name);
            leaf.lens[i] = 0;
            return i;
        }
    }
    return -1;
}


static int
leaf_xattrop(const struct vl_xattrop_args *a, struct vl_reply *rp)
{
    uint32_t total = 0, at = 0;

    for (uint32_t i = 0; i < a->n; i++) {
        if (strncmp(a->names[i], VL_XATTROP_PREFIX,
                    strlen(VL_XATTROP_PREFIX)) != 0)
            return -EPERM;
        total += a->sizes[i];
    }
    rp->xattr = vl_calloc(NULL, 1, total + 1, VL_MT_REPLY);
    if (rp->xattr == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < a->n; i++) {
        int s = leaf_slot(a->names[i], true);
        const unsigned char *v = a->values[i];

        if (s < 0)
            return -ENOSPC;
        for (uint32_t k = 0; k < a->sizes[i]; k += 4) {
            uint32_t cur = 0, add;

            if (k < leaf.lens[s])
                memcpy(&cur, leaf.vals[s] + k, 4);
            memcpy(&add, v + k, 4);
            cur = htonl(ntohl(cur) + ntohl(add));
            memcpy(leaf.vals[s] + k, &cur, 4);
        }
        if (a->sizes[i] > leaf.lens[s])
            leaf.lens[s] = a->sizes[i];
        memcpy(rp->xattr + at, leaf.vals[s], a->sizes[i]);
        at += a->sizes[i];
    }
    rp->xattr_len = leaf.is_broken && total > 0 ? total - 1 : total;
    return 0;
}


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
        status = leaf_xattrop(&a->xattrop, rp);
        break;
    case VL_FOP_FLUSH:
        break;
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
    },
};

/* ---- xo/top: the client graph is ready at CHILD_UP ---- */

static int
top_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    if (ev == VL_EV_CHILD_UP)
        vl_graph_set_ready(xl->graph, 0, NULL);
    return vl_notify_default(xl, ev, data);
}


static const vl_xlator_class_t top_class = {
    .abi = VL_XLATOR_ABI,
    .type = "xo/top",
    .prefix = "top",
    .flags = VL_XL_ONE_CHILD,
    .conf_size = sizeof(struct xo_conf),
    .options = xo_options,
    .mem_types = xo_types,
    .doc = "Says the client graph is ready at CHILD_UP.",
    .notify = top_notify,
};

/* ---- graphs ---- */

struct env {
    char brick[64];           /* storage/posix's directory, or "" */
    vl_loop_t *sloop, *cloop; /* brick's and client's loops */
    vl_volfile_t *svf, *cvf;  /* their volfiles */
    vl_graph_t *sg, *cg;      /* their graphs */
    uint16_t port;            /* brick port */
};


static vl_graph_t *
xo_graph(vl_loop_t *loop, const char *text, vl_volfile_t **vf_out)
{
    vl_err_t err = {{0}};
    vl_volfile_t *vf = vl_volfile_parse(text, strlen(text), "xo", &err);
    vl_graph_t *g;

    if (vf == NULL)
        fail_msg("volfile: %s", err.msg);
    g = vl_graph_build(vf, loop, &err);
    if (g == NULL || vl_graph_init(g, &err) != 0)
        fail_msg("graph: %s", err.msg);
    vl_graph_activate(g);
    *vf_out = vf;
    return g;
}


/* The brick: storage/posix on a fresh directory when e->brick is set,
 * else xo/leaf. */
static int
xo_up(void **state, struct env *e)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    socklen_t sl = sizeof(sin);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    char text[1024];

    vl_global_init();
    vl_log_set_level(VL_LOG_WARNING);
    (void)vl_registry_add(&xl_protocol_client);
    (void)vl_registry_add(&xl_protocol_server);
    (void)vl_registry_add(&xl_storage_posix);
    (void)vl_registry_add(&leaf_class);
    (void)vl_registry_add(&top_class);
    memset(&leaf, 0, sizeof(leaf));
    pthread_mutex_init(&leaf.lock, NULL);
    /* A free port: bind to 0, read it back, close. */
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(s, (struct sockaddr *)&sin, sizeof(sin)), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&sin, &sl), 0);
    close(s);
    e->port = ntohs(sin.sin_port);
    e->sloop = vl_loop_new(2);
    e->cloop = vl_loop_new(2);
    assert_int_equal(vl_loop_start(e->sloop), 0);
    assert_int_equal(vl_loop_start(e->cloop), 0);
    if (e->brick[0] != '\0')
        snprintf(text, sizeof(text),
                 "volume xo-leaf\n type storage/posix\n"
                 " option directory %s\nend-volume\n", e->brick);
    else
        snprintf(text, sizeof(text), "volume xo-leaf\n type xo/leaf\n"
                 "end-volume\n");
    snprintf(text + strlen(text), sizeof(text) - strlen(text),
             "volume server\n type protocol/server\n"
             " option transport.socket.listen-port %u\n"
             " option transport.socket.bind-address 127.0.0.1\n"
             /* Raw peers connect from unprivileged ports. */
             " option allow-insecure on\n"
             " option auth.addr.xo-leaf.allow 127.0.0.1\n"
             " subvolumes xo-leaf\nend-volume\n",
             e->port);
    e->sg = xo_graph(e->sloop, text, &e->svf);
    assert_int_equal(vl_graph_wait_ready(e->sg, WAIT_MS, NULL, 0), 0);
    snprintf(text, sizeof(text),
             "volume c\n type protocol/client\n"
             " option remote-host 127.0.0.1\n"
             " option remote-port %u\n"
             " option remote-subvolume xo-leaf\n"
             "end-volume\n"
             "volume t\n type xo/top\n subvolumes c\nend-volume\n",
             e->port);
    e->cg = xo_graph(e->cloop, text, &e->cvf);
    assert_int_equal(vl_graph_wait_ready(e->cg, WAIT_MS, NULL, 0), 0);
    *state = e;
    return 0;
}


static int
xo_setup(void **state)
{
    return xo_up(state, calloc(1, sizeof(struct env)));
}


static int
xo_setup_posix(void **state)
{
    struct env *e = calloc(1, sizeof(*e));

    snprintf(e->brick, sizeof(e->brick), "/tmp/xattrop-brick-XXXXXX");
    assert_non_null(mkdtemp(e->brick));
    return xo_up(state, e);
}


static int
xo_teardown(void **state)
{
    struct env *e = *state;

    /* vl_sync_call may return before the core freed the request. */
    for (int i = 0; i < WAIT_MS && vl_graph_pending(e->cg) > 0; i++)
        usleep(1000);
    vl_graph_free(e->cg);
    vl_volfile_free(e->cvf);
    vl_graph_free(e->sg);
    vl_volfile_free(e->svf);
    vl_loop_stop(e->sloop);
    vl_loop_stop(e->cloop);
    vl_loop_free(e->sloop);
    vl_loop_free(e->cloop);
    if (e->brick[0] != '\0') {
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->brick);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", e->brick);
    }
    free(e);
    return 0;
}

/* ---- helpers ---- */

/* BE int32 array of 3 counters. */
static void
be3(unsigned char out[12], int32_t d, int32_t m, int32_t en)
{
    uint32_t v[3] = {htonl((uint32_t)d), htonl((uint32_t)m),
                     htonl((uint32_t)en)};

    memcpy(out, v, sizeof(v));
}


/* XATTROP of n keys (sizes[i] bytes of vals[i]) on inode or fd. */
static int
do_xattrop(struct env *e, vl_inode_t *inode, vl_fd_t *fd, uint32_t n,
           const char *const *names, const void *const *vals,
           const uint32_t *sizes, struct vl_reply *r /* OUT, cleared */)
{
    union vl_fop_args a;

    memset(&a, 0, sizeof(a));
    a.xattrop.loc.inode = inode;
    a.xattrop.fd = fd;
    a.xattrop.op = VL_XATTROP_ADD32;
    a.xattrop.n = n;
    a.xattrop.names = names;
    a.xattrop.values = vals;
    a.xattrop.sizes = sizes;
    return vl_sync_call(e->cg->top, VL_FOP_XATTROP, &a, NULL, r);
}


static int
leaf_calls(void)
{
    int n;

    pthread_mutex_lock(&leaf.lock);
    n = leaf.n_xattrops;
    pthread_mutex_unlock(&leaf.lock);
    return n;
}

/* ---- tests ---- */

/* By gfid: two keys added twice; the reply has both new values in
 * order, the leaf saw the object and the op. */
static void
test_by_gfid(void **state)
{
    struct env *e = *state;
    const char *names[2] = {"trusted.mortar.rep.dirty",
                            "trusted.mortar.rep.v0-client-1"};
    unsigned char d[12], p[12], want[24];
    const void *vals[2] = {d, p};
    const uint32_t sizes[2] = {12, 12};
    struct vl_reply r;
    vl_gfid_t gfid;
    vl_inode_t *inode;

    vl_gfid_generate(&gfid);
    inode = vl_inode_get(e->cg->itable, &gfid, S_IFREG);
    assert_non_null(inode);
    be3(d, 1, 0, 0);
    be3(p, 0, 1, -1);
    assert_int_equal(do_xattrop(e, inode, NULL, 2, names, vals, sizes, &r),
                     0);
    be3(want, 1, 0, 0);
    be3(want + 12, 0, 1, -1);
    assert_int_equal(r.xattr_len, 24);
    assert_memory_equal(r.xattr, want, 24);
    vl_reply_clear(&r);
    assert_int_equal(do_xattrop(e, inode, NULL, 2, names, vals, sizes, &r),
                     0);
    be3(want, 2, 0, 0);
    be3(want + 12, 0, 2, -2);
    assert_int_equal(r.xattr_len, 24);
    assert_memory_equal(r.xattr, want, 24);
    vl_reply_clear(&r);
    pthread_mutex_lock(&leaf.lock);
    assert_int_equal(leaf.n_xattrops, 2);
    assert_true(vl_gfid_equal(&leaf.last_gfid, &gfid));
    assert_false(leaf.last_by_fd);
    assert_int_equal(leaf.last_op, VL_XATTROP_ADD32);
    pthread_mutex_unlock(&leaf.lock);
    /* n = 0 is a valid no-op with an empty reply. */
    assert_int_equal(do_xattrop(e, inode, NULL, 0, NULL, NULL, NULL, &r), 0);
    assert_int_equal(r.xattr_len, 0);
    assert_null(r.xattr);
    vl_reply_clear(&r);
    /* The leaf's error comes back as is. */
    {
        const char *bad[1] = {"user.other"};

        assert_int_equal(do_xattrop(e, inode, NULL, 1, bad, vals, sizes,
                                    &r),
                         -EPERM);
        vl_reply_clear(&r);
    }
    vl_inode_unref(inode);
}


/* By fd: the brick resolves the client's fd to its own, on its object. */
static void
test_by_fd(void **state)
{
    struct env *e = *state;
    const char *names[1] = {"trusted.mortar.rep.dirty"};
    unsigned char d[12];
    const void *vals[1] = {d};
    const uint32_t sizes[1] = {12};
    vl_inode_t *inode = vl_inode_new(e->cg->itable);
    vl_fd_t *fd = vl_fd_new(inode, O_RDWR | O_CREAT, 1);
    union vl_fop_args a;
    struct vl_reply r;

    memset(&a, 0, sizeof(a));
    a.create.loc.parent = vl_inode_table_root(e->cg->itable);
    a.create.loc.name = "f";
    a.create.loc.inode = inode;
    a.create.flags = O_RDWR | O_CREAT;
    a.create.mode = 0644;
    vl_gfid_generate(&a.create.gfid);
    a.create.fd = fd;
    assert_int_equal(vl_sync_call(e->cg->top, VL_FOP_CREATE, &a, NULL, &r),
                     0);
    vl_inode_unref(vl_inode_link(inode, &r.iatt));
    vl_reply_clear(&r);
    be3(d, 0, 0, 7);
    assert_int_equal(do_xattrop(e, NULL, fd, 1, names, vals, sizes, &r), 0);
    assert_int_equal(r.xattr_len, 12);
    assert_memory_equal(r.xattr, d, 12);
    vl_reply_clear(&r);
    pthread_mutex_lock(&leaf.lock);
    assert_true(leaf.last_by_fd);
    assert_true(vl_gfid_equal(&leaf.last_gfid, &a.create.gfid));
    pthread_mutex_unlock(&leaf.lock);
    vl_inode_unref(a.create.loc.parent);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* Bad arguments never reach the brick: more than VL_XATTROP_MAX keys,
 * a size not a multiple of 4, over 64 bytes, a NULL or empty name. */
static void
test_client_refuses(void **state)
{
    struct env *e = *state;
    const char *names[VL_XATTROP_MAX + 1];
    const void *vals[VL_XATTROP_MAX + 1];
    uint32_t sizes[VL_XATTROP_MAX + 1];
    unsigned char v[VL_XATTROP_VALUE_MAX + 4];
    struct vl_reply r;
    vl_gfid_t gfid;
    vl_inode_t *inode;

    memset(v, 0, sizeof(v));
    for (uint32_t i = 0; i <= VL_XATTROP_MAX; i++) {
        names[i] = "trusted.mortar.rep.dirty";
        vals[i] = v;
        sizes[i] = 12;
    }
    vl_gfid_generate(&gfid);
    inode = vl_inode_get(e->cg->itable, &gfid, S_IFREG);
    assert_int_equal(do_xattrop(e, inode, NULL, VL_XATTROP_MAX + 1, names,
                                vals, sizes, &r),
                     -EINVAL);
    vl_reply_clear(&r);
    sizes[0] = 6;
    assert_int_equal(do_xattrop(e, inode, NULL, 1, names, vals, sizes, &r),
                     -EINVAL);
    vl_reply_clear(&r);
    sizes[0] = VL_XATTROP_VALUE_MAX + 4;
    assert_int_equal(do_xattrop(e, inode, NULL, 1, names, vals, sizes, &r),
                     -EINVAL);
    vl_reply_clear(&r);
    sizes[0] = 12;
    names[0] = "";
    assert_int_equal(do_xattrop(e, inode, NULL, 1, names, vals, sizes, &r),
                     -EINVAL);
    vl_reply_clear(&r);
    names[0] = NULL;
    assert_int_equal(do_xattrop(e, inode, NULL, 1, names, vals, sizes, &r),
                     -EINVAL);
    vl_reply_clear(&r);
    assert_int_equal(leaf_calls(), 0);
    /* The largest legal request goes through: 16 keys of 64 bytes. */
    for (uint32_t i = 0; i < VL_XATTROP_MAX; i++) {
        names[i] = "trusted.mortar.rep.dirty";
        sizes[i] = VL_XATTROP_VALUE_MAX;
    }
    assert_int_equal(do_xattrop(e, inode, NULL, VL_XATTROP_MAX, names, vals,
                                sizes, &r),
                     0);
    assert_int_equal(r.xattr_len, VL_XATTROP_MAX * VL_XATTROP_VALUE_MAX);
    vl_reply_clear(&r);
    assert_int_equal(leaf_calls(), 1);
    vl_inode_unref(inode);
}


/* A leaf that answers fewer bytes than asked: the server says -EIO. */
static void
test_short_answer_is_eio(void **state)
{
    struct env *e = *state;
    const char *names[1] = {"trusted.mortar.rep.dirty"};
    unsigned char d[12];
    const void *vals[1] = {d};
    const uint32_t sizes[1] = {12};
    struct vl_reply r;
    vl_gfid_t gfid;
    vl_inode_t *inode;

    vl_gfid_generate(&gfid);
    inode = vl_inode_get(e->cg->itable, &gfid, S_IFREG);
    be3(d, 1, 1, 1);
    pthread_mutex_lock(&leaf.lock);
    leaf.is_broken = true;
    pthread_mutex_unlock(&leaf.lock);
    assert_int_equal(do_xattrop(e, inode, NULL, 1, names, vals, sizes, &r),
                     -EIO);
    assert_null(r.xattr);
    vl_reply_clear(&r);
    vl_inode_unref(inode);
}

/* ---- a raw peer ---- */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int connected;   /* 1 or -errno */
    int n_done;      /* replies seen */
    int status[2];   /* setvolume's, then xattrop's */
} raw;


static void
raw_connect(vrpc_clnt_t *c, int status, void *arg)
{
    pthread_mutex_lock(&raw.lock);
    raw.connected = status == 0 ? 1 : status;
    pthread_cond_broadcast(&raw.cond);
    pthread_mutex_unlock(&raw.lock);
}


static void
raw_reply(void *cookie, int status, vl_buf_t *rec, size_t off, size_t len)
{
    int k = (int)(intptr_t)cookie;
    mrt_xattrop_rsp r; /* both replies start with int status */

    memset(&r, 0, sizeof(r));
    pthread_mutex_lock(&raw.lock);
    if (status != 0)
        raw.status[k] = status;
    else if (k == 0 && len - off >= 4)
        raw.status[k] = (int)ntohl(*(uint32_t *)(rec->data + off));
    else if (k == 1
             && vrpc_decode_body(rec->data + off, len - off,
                                 (xdrproc_t)xdr_mrt_xattrop_rsp, &r,
                                 NULL) == 0)
        raw.status[k] = r.status;
    else
        raw.status[k] = -EBADMSG;
    xdr_free((xdrproc_t)xdr_mrt_xattrop_rsp, (char *)&r);
    raw.n_done++;
    pthread_cond_broadcast(&raw.cond);
    pthread_mutex_unlock(&raw.lock);
}


static void
raw_wait(int *field, int want)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += WAIT_MS / 1000;
    pthread_mutex_lock(&raw.lock);
    while (*field < want
           && pthread_cond_timedwait(&raw.cond, &raw.lock, &ts) == 0)
        ;
    pthread_mutex_unlock(&raw.lock);
}


/* A peer that skips the client's checks: a 6-byte value is refused by
 * the server with -EINVAL and never reaches the leaf. */
static void
test_server_refuses_odd_size(void **state)
{
    struct env *e = *state;
    mrt_setvolume_args sv = {.subvolume = "xo-leaf", .identity = "raw",
                             .proto_version = MRT_PROTO_VERSION};
    char val[6] = {0, 0, 0, 1, 0, 0};
    mrt_xattrop_key key = {.name = "trusted.mortar.rep.dirty",
                           .value = {.value_len = 6, .value_val = val}};
    mrt_xattrop_args xa;
    vrpc_clnt_t *c = NULL;
    vl_gfid_t gfid;
    vl_err_t err;
    int fd = -1;

    memset(&raw, 0, sizeof(raw));
    pthread_mutex_init(&raw.lock, NULL);
    pthread_cond_init(&raw.cond, NULL);
    memset(&xa, 0, sizeof(xa));
    vl_gfid_generate(&gfid);
    vrpc_gfid_to_xdr(&gfid, xa.loc.gfid);
    xa.loc.name = "";
    xa.op = VL_XATTROP_ADD32;
    xa.keys.keys_len = 1;
    xa.keys.keys_val = &key;
    assert_int_equal(vrpc_connect_start("127.0.0.1", e->port, &fd, &err), 0);
    assert_int_equal(vrpc_clnt_new(e->cloop, fd, true, raw_connect, NULL,
                                   NULL, &c),
                     0);
    assert_int_equal(vrpc_clnt_start(c), 0);
    raw_wait(&raw.connected, 1);
    assert_int_equal(raw.connected, 1);
    assert_int_equal(vrpc_clnt_call(c, MRT_HANDSHAKE_PROG, MRT_VERSION,
                                    MRT_HS_SETVOLUME, NULL,
                                    (xdrproc_t)xdr_mrt_setvolume_args, &sv,
                                    NULL, 0, raw_reply, (void *)0),
                     0);
    raw_wait(&raw.n_done, 1);
    assert_int_equal(raw.status[0], 0);
    assert_int_equal(vrpc_clnt_call(c, MRT_FOPS_PROG, MRT_VERSION,
                                    VRPC_FOP_PROC(VL_FOP_XATTROP), NULL,
                                    (xdrproc_t)xdr_mrt_xattrop_args, &xa,
                                    NULL, 0, raw_reply, (void *)1),
                     0);
    raw_wait(&raw.n_done, 2);
    assert_int_equal(raw.n_done, 2);
    assert_int_equal(raw.status[1], -EINVAL);
    assert_int_equal(leaf_calls(), 0);
    vrpc_clnt_close(c);
    vrpc_clnt_unref(c);
}


/* End to end over storage/posix: the counters land on the brick's file,
 * come back in the reply and through a lookup, the index entry comes and
 * goes with them, and posix's refusals cross the wire. */
static void
test_posix_end_to_end(void **state)
{
    struct env *e = *state;
    const char *names[2] = {"trusted.mortar.rep.dirty",
                            "trusted.mortar.rep.xo-1"};
    unsigned char d[12], p[12], want[24], disk[12];
    const void *vals[2] = {d, p};
    const uint32_t sizes[2] = {12, 12};
    char path[256], str[VL_GFID_STR_LEN];
    vl_inode_t *inode = vl_inode_new(e->cg->itable);
    vl_fd_t *fd = vl_fd_new(inode, O_RDWR | O_CREAT, 1);
    union vl_fop_args a;
    struct vl_reply r;
    struct stat st;

    memset(&a, 0, sizeof(a));
    a.create.loc.parent = vl_inode_table_root(e->cg->itable);
    a.create.loc.name = "f";
    a.create.loc.inode = inode;
    a.create.flags = O_RDWR | O_CREAT;
    a.create.mode = 0644;
    vl_gfid_generate(&a.create.gfid);
    a.create.fd = fd;
    assert_int_equal(vl_sync_call(e->cg->top, VL_FOP_CREATE, &a, NULL, &r),
                     0);
    vl_inode_unref(vl_inode_link(inode, &r.iatt));
    vl_reply_clear(&r);
    vl_inode_unref(a.create.loc.parent);
    snprintf(path, sizeof(path), "%s/.mortar/index/xattrop/%s", e->brick,
             vl_gfid_to_str(&inode->gfid, str));

    be3(d, 1, 0, 0);
    be3(p, 0, 1, 0);
    assert_int_equal(do_xattrop(e, inode, NULL, 2, names, vals, sizes, &r),
                     0);
    vl_reply_clear(&r);
    assert_int_equal(do_xattrop(e, NULL, fd, 2, names, vals, sizes, &r), 0);
    be3(want, 2, 0, 0);
    be3(want + 12, 0, 2, 0);
    assert_int_equal(r.xattr_len, 24);
    assert_memory_equal(r.xattr, want, 24);
    vl_reply_clear(&r);
    snprintf(path, sizeof(path), "%s/f", e->brick);
    assert_int_equal(lgetxattr(path, names[1], disk, sizeof(disk)), 12);
    assert_memory_equal(disk, want + 12, 12);
    snprintf(path, sizeof(path), "%s/.mortar/index/xattrop/%s", e->brick,
             str);
    assert_int_equal(lstat(path, &st), 0);
    /* Read back by a lookup that asks for the key. */
    memset(&a, 0, sizeof(a));
    a.lookup.loc.parent = vl_inode_table_root(e->cg->itable);
    a.lookup.loc.name = "f";
    a.lookup.loc.inode = vl_inode_new(e->cg->itable);
    a.lookup.xattr_name = names[0];
    assert_int_equal(vl_sync_call(e->cg->top, VL_FOP_LOOKUP, &a, NULL, &r),
                     0);
    assert_int_equal(r.xattr_status, 0);
    assert_int_equal(r.xattr_len, 12);
    assert_memory_equal(r.xattr, want, 12);
    vl_reply_clear(&r);
    vl_inode_unref(a.lookup.loc.parent);
    vl_inode_unref(a.lookup.loc.inode);
    /* Back to zero: no xattr, no index entry. */
    be3(d, -2, 0, 0);
    be3(p, 0, -2, 0);
    assert_int_equal(do_xattrop(e, inode, NULL, 2, names, vals, sizes, &r),
                     0);
    memset(want, 0, sizeof(want));
    assert_memory_equal(r.xattr, want, 24);
    vl_reply_clear(&r);
    assert_int_equal(lstat(path, &st), -1);
    snprintf(path, sizeof(path), "%s/f", e->brick);
    assert_int_equal(lgetxattr(path, names[0], disk, sizeof(disk)), -1);
    assert_int_equal(errno, ENODATA);
    /* A granular entry record asked over the wire (the root directory,
     * name "f"), then cleared. */
    {
        vl_inode_t *root = vl_inode_table_root(e->cg->itable);
        const char *en[1] = {names[1]};

        memset(&a, 0, sizeof(a));
        be3(p, 0, 0, 1);
        a.xattrop.loc.parent = root;
        a.xattrop.loc.name = "f";
        a.xattrop.loc.inode = root;
        a.xattrop.op = VL_XATTROP_ADD32 | VL_XATTROP_F_ENTRY_MARK;
        a.xattrop.n = 1;
        a.xattrop.names = en;
        a.xattrop.values = (const void *const *)&vals[1];
        a.xattrop.sizes = sizes;
        assert_int_equal(vl_sync_call(e->cg->top, VL_FOP_XATTROP, &a, NULL,
                                      &r),
                         0);
        vl_reply_clear(&r);
        snprintf(path, sizeof(path),
                 "%s/.mortar/index/entry-changes/%s/f", e->brick,
                 vl_gfid_to_str(&root->gfid, str));
        assert_int_equal(lstat(path, &st), 0);
        be3(p, 0, 0, -1);
        a.xattrop.op = VL_XATTROP_ADD32 | VL_XATTROP_F_ENTRY_CLEAR;
        assert_int_equal(vl_sync_call(e->cg->top, VL_FOP_XATTROP, &a, NULL,
                                      &r),
                         0);
        vl_reply_clear(&r);
        assert_int_equal(lstat(path, &st), -1);
        vl_inode_unref(root);
    }
    /* posix's refusal crosses the wire. */
    names[0] = "trusted.mortar.gfid";
    assert_int_equal(do_xattrop(e, inode, NULL, 1, names, vals, sizes, &r),
                     -EPERM);
    vl_reply_clear(&r);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_by_gfid, xo_setup, xo_teardown),
        cmocka_unit_test_setup_teardown(test_by_fd, xo_setup, xo_teardown),
        cmocka_unit_test_setup_teardown(test_client_refuses, xo_setup,
                                        xo_teardown),
        cmocka_unit_test_setup_teardown(test_short_answer_is_eio, xo_setup,
                                        xo_teardown),
        cmocka_unit_test_setup_teardown(test_server_refuses_odd_size,
                                        xo_setup, xo_teardown),
        cmocka_unit_test_setup_teardown(test_posix_end_to_end,
                                        xo_setup_posix, xo_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
