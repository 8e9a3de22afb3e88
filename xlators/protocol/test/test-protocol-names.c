/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-protocol-names: names over the wire's bounds, protocol/client and
 * protocol/server over 127.0.0.1. The brick graph is protocol/server
 * over "nm/leaf", an in-test translator that counts the fops reaching it,
 * keeps the longest name it saw and answers -ENOENT; the client graph is
 * "nm/top" (ready at CHILD_UP) over protocol/client, wound directly (as
 * in a graph without the FUSE bridge, e.g. the rebalance process).
 *
 * Covers: the client answers -ENAMETOOLONG for an entry name over 255
 * bytes in every fop that carries one (either name of rename and link)
 * and for a symlink target over the wire's 4096, -ERANGE for an xattr
 * name over 255 (as setxattr(2)), all without sending; 255-byte names
 * reach the brick whole. The server, sent such names by a raw peer that
 * skips those checks, answers -ENAMETOOLONG / -ERANGE in the fop's
 * reply (not GARBAGE_ARGS) without reaching the leaf (lookup, either
 * name of rename and link, entrylk after its domain, symlink's target,
 * setxattr's key), and a record cut inside a name is still GARBAGE_ARGS.
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

#include <cmocka.h>

#include "builtin.h"
#include "vol/vol.h"
#include "vrpc.h"

#define WAIT_MS 20000

/* ---- nm/leaf: counts fops, keeps the longest name, answers ENOENT ---- */

static struct {
    pthread_mutex_t lock; /* guards everything here */
    int n_fops;           /* fops that reached the leaf */
    size_t longest;       /* longest loc name among them */
} leaf;


static void
leaf_saw(const struct vl_loc *loc)
{
    if (loc != NULL && loc->name != NULL && strlen(loc->name) > leaf.longest)
        leaf.longest = strlen(loc->name);
}


static void
leaf_fop(vl_xlator_t *xl, vl_req_t *req)
{
    const struct vl_loc *loc, *loc2;

    (void)xl;
    pthread_mutex_lock(&leaf.lock);
    leaf.n_fops++;
    if (req->op == VL_FOP_LOOKUP) {
        leaf_saw(&req->args.lookup.loc);
    } else if (vl_req_entry_locs(req, &loc, &loc2)) {
        leaf_saw(loc);
        leaf_saw(loc2);
    }
    pthread_mutex_unlock(&leaf.lock);
    vl_unwind(req, -ENOENT);
}


static int
leaf_fops(void)
{
    int n;

    pthread_mutex_lock(&leaf.lock);
    n = leaf.n_fops;
    pthread_mutex_unlock(&leaf.lock);
    return n;
}


struct nm_conf {
    bool dummy; /* no options */
};

static const vl_option_t nm_options[] = {VL_OPT_END};
static const char *const nm_types[] = {"misc", NULL};

static const vl_xlator_class_t leaf_class = {
    .abi = VL_XLATOR_ABI,
    .type = "nm/leaf",
    .prefix = "leaf",
    .flags = VL_XL_LEAF,
    .conf_size = sizeof(struct nm_conf),
    .options = nm_options,
    .mem_types = nm_types,
    .doc = "Counts the fops reaching it and answers ENOENT.",
    .fops = {
        [VL_FOP_LOOKUP] = leaf_fop,
        [VL_FOP_MKNOD] = leaf_fop,
        [VL_FOP_MKDIR] = leaf_fop,
        [VL_FOP_UNLINK] = leaf_fop,
        [VL_FOP_RMDIR] = leaf_fop,
        [VL_FOP_SYMLINK] = leaf_fop,
        [VL_FOP_RENAME] = leaf_fop,
        [VL_FOP_LINK] = leaf_fop,
        [VL_FOP_CREATE] = leaf_fop,
        [VL_FOP_SETXATTR] = leaf_fop,
        [VL_FOP_GETXATTR] = leaf_fop,
        [VL_FOP_REMOVEXATTR] = leaf_fop,
        [VL_FOP_ENTRYLK] = leaf_fop,
    },
};


static int
top_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    if (ev == VL_EV_CHILD_UP)
        vl_graph_set_ready(xl->graph, 0, NULL);
    return vl_notify_default(xl, ev, data);
}


static const vl_xlator_class_t top_class = {
    .abi = VL_XLATOR_ABI,
    .type = "nm/top",
    .prefix = "top",
    .flags = VL_XL_ONE_CHILD,
    .conf_size = sizeof(struct nm_conf),
    .options = nm_options,
    .mem_types = nm_types,
    .doc = "Says the client graph is ready at CHILD_UP.",
    .notify = top_notify,
};

/* ---- graphs ---- */

struct env {
    vl_loop_t *sloop, *cloop; /* brick's and client's loops */
    vl_volfile_t *svf, *cvf;  /* their volfiles */
    vl_graph_t *sg, *cg;      /* their graphs */
    uint16_t port;            /* brick port */
    char name255[256];        /* 255 bytes: fits */
    char name256[257];        /* 256 bytes: one over */
    char target[5000];        /* 4999 bytes: over MRT_PATH_MAX */
};


static vl_graph_t *
nm_graph(vl_loop_t *loop, const char *text, vl_volfile_t **vf_out)
{
    vl_err_t err = {{0}};
    vl_volfile_t *vf = vl_volfile_parse(text, strlen(text), "nm", &err);
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


static int
nm_setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));
    struct sockaddr_in sin = {.sin_family = AF_INET};
    socklen_t sl = sizeof(sin);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    char text[1024];

    vl_global_init();
    vl_log_set_level(VL_LOG_WARNING);
    (void)vl_registry_add(&xl_protocol_client);
    (void)vl_registry_add(&xl_protocol_server);
    (void)vl_registry_add(&leaf_class);
    (void)vl_registry_add(&top_class);
    memset(&leaf, 0, sizeof(leaf));
    pthread_mutex_init(&leaf.lock, NULL);
    memset(e->name255, 'n', 255);
    memset(e->name256, 'n', 256);
    memset(e->target, 't', sizeof(e->target) - 1);
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
    snprintf(text, sizeof(text),
             "volume nm-leaf\n type nm/leaf\nend-volume\n"
             "volume server\n type protocol/server\n"
             " option transport.socket.listen-port %u\n"
             " option transport.socket.bind-address 127.0.0.1\n"
             /* Raw peers connect from unprivileged ports. */
             " option allow-insecure on\n"
             " option auth.addr.nm-leaf.allow 127.0.0.1\n"
             " subvolumes nm-leaf\nend-volume\n",
             e->port);
    e->sg = nm_graph(e->sloop, text, &e->svf);
    assert_int_equal(vl_graph_wait_ready(e->sg, WAIT_MS, NULL, 0), 0);
    snprintf(text, sizeof(text),
             "volume c\n type protocol/client\n"
             " option remote-host 127.0.0.1\n"
             " option remote-port %u\n"
             " option remote-subvolume nm-leaf\n"
             "end-volume\n"
             "volume t\n type nm/top\n subvolumes c\nend-volume\n",
             e->port);
    e->cg = nm_graph(e->cloop, text, &e->cvf);
    assert_int_equal(vl_graph_wait_ready(e->cg, WAIT_MS, NULL, 0), 0);
    *state = e;
    return 0;
}


static int
nm_teardown(void **state)
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
    free(e);
    return 0;
}

/* ---- the client ---- */

/* Winds op with name (and name2, for rename/link's new name) through
 * the client graph; the objects are made up (the leaf looks at none). */
static int
client_call(struct env *e, vl_fop_t op, const char *name, const char *name2)
{
    union vl_fop_args a;
    struct vl_reply r;
    vl_inode_t *root = vl_inode_table_root(e->cg->itable);
    vl_inode_t *fresh = vl_inode_new(e->cg->itable);
    vl_fd_t *fd = vl_fd_new(fresh, O_RDWR | O_CREAT, 1);
    struct vl_loc loc = {.parent = root, .name = name, .inode = fresh};
    struct vl_loc loc2 = {.parent = root, .name = name2, .inode = NULL};
    int rc;

    memset(&a, 0, sizeof(a));
    switch (op) {
    case VL_FOP_LOOKUP:
        a.lookup.loc = loc;
        break;
    case VL_FOP_MKNOD:
        a.mknod.loc = loc;
        a.mknod.mode = S_IFIFO | 0644;
        vl_gfid_generate(&a.mknod.gfid);
        break;
    case VL_FOP_MKDIR:
        a.mkdir.loc = loc;
        a.mkdir.mode = S_IFDIR | 0755;
        vl_gfid_generate(&a.mkdir.gfid);
        break;
    case VL_FOP_UNLINK:
        a.unlink.loc = loc;
        break;
    case VL_FOP_RMDIR:
        a.rmdir.loc = loc;
        break;
    case VL_FOP_SYMLINK:
        a.symlink.loc = loc;
        a.symlink.target = name2;
        vl_gfid_generate(&a.symlink.gfid);
        break;
    case VL_FOP_RENAME:
        a.rename.oldloc = loc;
        a.rename.newloc = loc2;
        break;
    case VL_FOP_LINK:
        a.link.oldloc = loc;
        a.link.newloc = loc2;
        break;
    case VL_FOP_CREATE:
        a.create.loc = loc;
        a.create.flags = O_RDWR | O_CREAT;
        a.create.mode = 0644;
        a.create.fd = fd;
        vl_gfid_generate(&a.create.gfid);
        break;
    case VL_FOP_ENTRYLK:
        a.entrylk.domain = "nm";
        a.entrylk.loc = loc;
        a.entrylk.cmd = VL_LOCK_TRY;
        a.entrylk.type = F_WRLCK;
        break;
    case VL_FOP_SETXATTR:
        a.setxattr.loc.inode = root; /* by gfid */
        a.setxattr.name = name2;
        a.setxattr.value = "v";
        a.setxattr.size = 1;
        break;
    case VL_FOP_GETXATTR:
        a.getxattr.loc.inode = root; /* by gfid */
        a.getxattr.name = name2;
        break;
    case VL_FOP_REMOVEXATTR:
        a.removexattr.loc.inode = root; /* by gfid */
        a.removexattr.name = name2;
        break;
    default:
        fail_msg("no such fop in this test");
    }
    rc = vl_sync_call(e->cg->top, op, &a, NULL, &r);
    vl_reply_clear(&r);
    vl_fd_unref(fd);
    vl_inode_unref(fresh);
    vl_inode_unref(root);
    return rc;
}


/* Every fop naming an entry refuses a 256-byte name without sending it;
 * a 255-byte one reaches the brick whole. */
static void
test_client_entry_names(void **state)
{
    struct env *e = *state;
    const vl_fop_t ops[] = {VL_FOP_LOOKUP, VL_FOP_MKNOD, VL_FOP_MKDIR,
                            VL_FOP_UNLINK, VL_FOP_RMDIR, VL_FOP_CREATE,
                            VL_FOP_ENTRYLK};

    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        assert_int_equal(client_call(e, ops[i], e->name256, NULL),
                         -ENAMETOOLONG);
    assert_int_equal(client_call(e, VL_FOP_SYMLINK, e->name256, "t"),
                     -ENAMETOOLONG);
    /* Either name of a rename or link. */
    assert_int_equal(client_call(e, VL_FOP_RENAME, e->name256, "b"),
                     -ENAMETOOLONG);
    assert_int_equal(client_call(e, VL_FOP_RENAME, "a", e->name256),
                     -ENAMETOOLONG);
    assert_int_equal(client_call(e, VL_FOP_LINK, "a", e->name256),
                     -ENAMETOOLONG);
    assert_int_equal(leaf_fops(), 0);

    /* 255 bytes: sent, and the leaf's own answer comes back. */
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        assert_int_equal(client_call(e, ops[i], e->name255, NULL), -ENOENT);
    assert_int_equal(client_call(e, VL_FOP_RENAME, "a", e->name255),
                     -ENOENT);
    assert_int_equal(leaf_fops(), (int)(sizeof(ops) / sizeof(ops[0])) + 1);
    pthread_mutex_lock(&leaf.lock);
    assert_int_equal(leaf.longest, 255);
    pthread_mutex_unlock(&leaf.lock);
}


/* A symlink target over the wire's bound is ENAMETOOLONG; an xattr name
 * over 255 bytes is ERANGE, as setxattr(2) answers. */
static void
test_client_target_and_xattr_names(void **state)
{
    struct env *e = *state;
    char key[300];

    assert_int_equal(client_call(e, VL_FOP_SYMLINK, "s", e->target),
                     -ENAMETOOLONG);
    snprintf(key, sizeof(key), "user.%s", e->name255); /* 260 bytes */
    assert_int_equal(client_call(e, VL_FOP_SETXATTR, "f", key), -ERANGE);
    assert_int_equal(client_call(e, VL_FOP_GETXATTR, "f", key), -ERANGE);
    assert_int_equal(client_call(e, VL_FOP_REMOVEXATTR, "f", key), -ERANGE);
    assert_int_equal(leaf_fops(), 0);
    key[255] = '\0';
    assert_int_equal(client_call(e, VL_FOP_SETXATTR, "f", key), -ENOENT);
    assert_int_equal(leaf_fops(), 1);
}

/* ---- a raw peer that skips the client's checks ---- */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int connected; /* 1 or -errno */
    int n_done;    /* replies seen */
    int status;    /* the last one's: the reply's status or -errno */
} raw;


static void
raw_connect(vrpc_clnt_t *c, int status, void *arg)
{
    (void)c;
    (void)arg;
    pthread_mutex_lock(&raw.lock);
    raw.connected = status == 0 ? 1 : status;
    pthread_cond_broadcast(&raw.cond);
    pthread_mutex_unlock(&raw.lock);
}


/* Every reply starts with its int status. */
static void
raw_reply(void *cookie, int status, vl_buf_t *rec, size_t off, size_t len)
{
    uint32_t be;

    (void)cookie;
    pthread_mutex_lock(&raw.lock);
    if (status != 0) {
        raw.status = status;
    } else if (len - off >= 4) {
        memcpy(&be, rec->data + off, 4);
        raw.status = (int)ntohl(be);
    } else {
        raw.status = -EBADMSG;
    }
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


/* What the raw peer sends: the layout of the fop's arguments with no
 * bound on the strings (XDR strings look the same whatever the bound). */
struct raw_args {
    vl_fop_t op;
    const char *name;  /* the (first) loc's name */
    const char *name2; /* rename's new name, symlink's target, xattr key */
    bool is_cut;       /* a name length with the name missing */
};


static bool_t
raw_loc(XDR *x, const char *name)
{
    char gfid[16] = {0};
    char *p = (char *)name;

    gfid[15] = 1; /* the root, as parent */
    if (!xdr_opaque(x, gfid, 16))
        return FALSE;
    if (!xdr_string(x, &p, ~0u))
        return FALSE;
    memset(gfid, 0, sizeof(gfid));
    return xdr_opaque(x, gfid, 16);
}


static bool_t
raw_xdr(XDR *x, void *arg)
{
    struct raw_args *ra = arg;
    char gfid[16] = {0};
    char *empty = "", *p = (char *)ra->name2;
    u_int zero = 0, cut_len = 300;
    int flags = 0;

    if (ra->is_cut) {
        /* parent, then a name of 300 bytes of which 8 are there. */
        return xdr_opaque(x, gfid, 16) && xdr_u_int(x, &cut_len)
               && xdr_opaque(x, gfid, 8);
    }
    if (ra->op == VL_FOP_ENTRYLK) { /* domain, loc, cmd, type */
        p = "nm";
        return xdr_string(x, &p, ~0u) && raw_loc(x, ra->name)
               && xdr_int(x, &flags) && xdr_int(x, &flags);
    }
    if (!raw_loc(x, ra->name))
        return FALSE;
    switch (ra->op) {
    case VL_FOP_LOOKUP: /* content_max, xattr_name */
        return xdr_u_int(x, &zero) && xdr_string(x, &empty, ~0u);
    case VL_FOP_RENAME: /* newloc, flags */
        return raw_loc(x, ra->name2) && xdr_u_int(x, &zero);
    case VL_FOP_LINK: /* newloc */
        return raw_loc(x, ra->name2);
    case VL_FOP_SYMLINK: /* target, umask, gfid */
        return xdr_string(x, &p, ~0u) && xdr_u_int(x, &zero)
               && xdr_opaque(x, gfid, 16);
    case VL_FOP_SETXATTR: /* name, value, flags */
        return xdr_string(x, &p, ~0u) && xdr_bytes(x, &empty, &zero, ~0u)
               && xdr_int(x, &flags);
    default:
        return FALSE;
    }
}


/* Sends ra as op from a fresh raw connection; the reply's status. */
static int
raw_call(struct env *e, struct raw_args *ra)
{
    mrt_setvolume_args sv = {.subvolume = "nm-leaf", .identity = "raw",
                             .proto_version = MRT_PROTO_VERSION};
    vrpc_clnt_t *c = NULL;
    vl_err_t err;
    int fd = -1;
    int status;

    memset(&raw, 0, sizeof(raw));
    pthread_mutex_init(&raw.lock, NULL);
    pthread_cond_init(&raw.cond, NULL);
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
                                    NULL, 0, raw_reply, NULL),
                     0);
    raw_wait(&raw.n_done, 1);
    assert_int_equal(raw.status, 0);
    assert_int_equal(vrpc_clnt_call(c, MRT_FOPS_PROG, MRT_VERSION,
                                    VRPC_FOP_PROC(ra->op), NULL,
                                    (xdrproc_t)raw_xdr, ra, NULL, 0,
                                    raw_reply, NULL),
                     0);
    raw_wait(&raw.n_done, 2);
    assert_int_equal(raw.n_done, 2);
    status = raw.status;
    vrpc_clnt_close(c);
    vrpc_clnt_unref(c);
    return status;
}


/* The server answers a name over the bound with the file system's errno
 * in the fop's reply, and the leaf never sees it. */
static void
test_server_names_over_bound(void **state)
{
    struct env *e = *state;
    char name300[301], key[300];
    struct raw_args ra;

    memset(name300, 'n', 300);
    name300[300] = '\0';
    snprintf(key, sizeof(key), "user.%s", e->name255);
    ra = (struct raw_args){.op = VL_FOP_LOOKUP, .name = name300};
    assert_int_equal(raw_call(e, &ra), -ENAMETOOLONG);
    ra = (struct raw_args){.op = VL_FOP_RENAME, .name = "a",
                           .name2 = e->name256};
    assert_int_equal(raw_call(e, &ra), -ENAMETOOLONG);
    ra = (struct raw_args){.op = VL_FOP_LINK, .name = "",
                           .name2 = e->name256};
    assert_int_equal(raw_call(e, &ra), -ENAMETOOLONG);
    /* The lock domain comes first, then the loc. */
    ra = (struct raw_args){.op = VL_FOP_ENTRYLK, .name = name300};
    assert_int_equal(raw_call(e, &ra), -ENAMETOOLONG);
    ra = (struct raw_args){.op = VL_FOP_SYMLINK, .name = "s",
                           .name2 = e->target};
    assert_int_equal(raw_call(e, &ra), -ENAMETOOLONG);
    ra = (struct raw_args){.op = VL_FOP_SETXATTR, .name = "",
                           .name2 = key};
    assert_int_equal(raw_call(e, &ra), -ERANGE);
    assert_int_equal(leaf_fops(), 0);
    /* A record cut inside the name is garbage, not a long name. */
    ra = (struct raw_args){.op = VL_FOP_LOOKUP, .is_cut = true};
    assert_int_equal(raw_call(e, &ra), -EPROTO);
    assert_int_equal(leaf_fops(), 0);
    /* The same peer's 255-byte name reaches the leaf. */
    ra = (struct raw_args){.op = VL_FOP_LOOKUP, .name = e->name255};
    assert_int_equal(raw_call(e, &ra), -ENOENT);
    assert_int_equal(leaf_fops(), 1);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_client_entry_names, nm_setup,
                                        nm_teardown),
        cmocka_unit_test_setup_teardown(test_client_target_and_xattr_names,
                                        nm_setup, nm_teardown),
        cmocka_unit_test_setup_teardown(test_server_names_over_bound,
                                        nm_setup, nm_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
