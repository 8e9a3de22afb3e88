/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heal-mark: makes a good brick's root directory blame one replica slot
 * for entry and metadata (doc/replicate.md "On-disk records"), so that
 * self-heal fills that slot's brick from this one: the root's entry heal
 * creates the top-level names there and marks each for its own heal, and
 * the self-heal daemon's rounds go down the tree from there
 * (doc/self-heal.md). replace-brick, reset-brick and add-brick with a
 * higher replica count (replica-change.c) use it for new, empty bricks:
 * md_heal_mark_set marks every brick of a set that answers.
 *
 * The marking is one XATTROP ADD32 of {0, 1, 1} on the root GFID through
 * a graph of its own built here: protocol/client to the brick under a
 * small top (mortard/heal-mark) that says the graph is ready at
 * CHILD_UP, on a one-thread event loop, torn down after the call. Going
 * through the brick's protocol/server keeps the heal index true (the
 * brick's XATTROP writes it) and works for a brick on another node.
 * Threads: the worker thread (vl_sync_call blocks; never on a loop
 * thread).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mortard.h"
#include "vol/fop-args.h"
#include "vol/graph.h"
#include "vol/sync.h"
#include "vol/volfile.h"

#define MD_MARK_CLIENT "heal-mark-client"
/* How long the marking waits for one good brick to accept mortard. */
#define MD_MARK_TIMEOUT_MS 5000

struct md_mark_conf {
    bool unused; /* no options */
};

static const vl_option_t md_mark_options[] = {VL_OPT_END};
static const char *const md_mark_mem_types[] = {"misc", NULL};


/* The graph is usable once its client is connected to the brick. */
static int
md_mark_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    if (ev == VL_EV_CHILD_UP)
        vl_graph_set_ready(xl->graph, 0, NULL);
    return vl_notify_default(xl, ev, data);
}


static const vl_xlator_class_t md_mark_class = {
    .abi = VL_XLATOR_ABI,
    .type = "mortard/heal-mark",
    .prefix = "heal-mark",
    .flags = VL_XL_ONE_CHILD | VL_XL_TOP_ONLY,
    .conf_size = sizeof(struct md_mark_conf),
    .options = md_mark_options,
    .mem_types = md_mark_mem_types,
    .doc = "mortard's own top of the one-brick graph it uses to mark a "
           "replica slot for heal; says the graph is ready at CHILD_UP.",
    .notify = md_mark_notify,
};


/* Registers md_mark_class once (worker thread only). */
static int
md_mark_register(void)
{
    static bool is_registered;
    int rc;

    if (is_registered || vl_registry_find(md_mark_class.type) != NULL)
        return 0;
    rc = vl_registry_add(&md_mark_class);
    if (rc == 0)
        is_registered = true;
    return rc;
}


/* The XATTROP on the root through the ready graph g (is_probe: adding
 * zeros, which only reads). */
static int
md_mark_root(vl_graph_t *g, const char *slot, bool is_probe, vl_err_t *err)
{
    static const vl_gfid_t root = {.bytes = {[15] = 1}};
    /* data 0, metadata 1, entry 1: big-endian int32s. */
    static const unsigned char blame[12] = {0, 0, 0, 0, 0, 0, 0, 1,
                                            0, 0, 0, 1};
    static const unsigned char zeros[12];
    char name[VL_XATTROP_NAME_MAX + 1];
    const char *names[1] = {name};
    const void *values[1] = {is_probe ? zeros : blame};
    const uint32_t sizes[1] = {sizeof(blame)};
    vl_xlator_t *client = vl_graph_find(g, MD_MARK_CLIENT);
    union vl_fop_args a;
    struct vl_reply r = {0};
    struct vl_caller caller = {.pid = VL_CALLER_PID_INTERNAL};
    vl_inode_t *inode;
    int rc;

    if ((size_t)snprintf(name, sizeof(name), "%s%s", VL_XATTROP_PREFIX,
                         slot) >= sizeof(name)) {
        vl_err_set(err, "replica slot name %s is too long", slot);
        return -ENAMETOOLONG;
    }
    inode = vl_inode_get(g->itable, &root, 0);
    if (client == NULL || inode == NULL) {
        vl_inode_unref(inode);
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    memset(&a, 0, sizeof(a));
    a.xattrop.loc.inode = inode;
    a.xattrop.op = VL_XATTROP_ADD32;
    a.xattrop.n = 1;
    a.xattrop.names = names;
    a.xattrop.values = values;
    a.xattrop.sizes = sizes;
    /* Root, and Mortar's own: exempt from the brick's root-squash. */
    rc = vl_sync_call(client, VL_FOP_XATTROP, &a, &caller, &r);
    vl_reply_clear(&r);
    vl_inode_unref(inode);
    if (rc != 0)
        vl_err_set(err, "XATTROP %s on the root: %s", name, strerror(-rc));
    return rc;
}


int
md_heal_mark_slot(const struct md_volume *vol, const struct md_brick *good,
                  const char *slot, bool is_probe, int timeout_ms,
                  vl_err_t *err)
{
    char sub[128], reason[256] = "";
    struct md_sbuf spec = {0};
    vl_volfile_t *vf = NULL;
    vl_loop_t *loop = NULL;
    vl_graph_t *g = NULL;
    int rc;

    rc = md_mark_register();
    if (rc != 0) {
        vl_err_set(err, "registering %s: %s", md_mark_class.type,
                   strerror(-rc));
        return rc;
    }
    md_brick_subvol(vol, good, sub, sizeof(sub));
    md_sbuf_printf(&spec, "volume %s\n    type protocol/client\n"
                   "    option remote-host %s\n    option remote-port %u\n"
                   "    option remote-subvolume %s\nend-volume\n\n"
                   "volume heal-mark\n    type %s\n    subvolumes %s\n"
                   "end-volume\n", MD_MARK_CLIENT, good->host, good->port,
                   sub, md_mark_class.type, MD_MARK_CLIENT);
    if (spec.is_oom) {
        md_sbuf_clear(&spec);
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    vf = vl_volfile_parse(spec.data, spec.len, "heal-mark", err);
    md_sbuf_clear(&spec);
    if (vf == NULL)
        return -EINVAL;
    loop = vl_loop_new(1);
    if (loop == NULL) {
        rc = -errno;
        vl_err_set(err, "event loop: %s", strerror(-rc));
        goto out;
    }
    rc = vl_loop_start(loop);
    if (rc != 0) {
        vl_err_set(err, "event loop thread: %s", strerror(-rc));
        goto out;
    }
    g = vl_graph_build(vf, loop, err);
    if (g == NULL) {
        rc = -EINVAL;
        goto out;
    }
    rc = vl_graph_init(g, err);
    if (rc != 0)
        goto out;
    vl_graph_activate(g);
    rc = vl_graph_wait_ready(g, timeout_ms, reason, sizeof(reason));
    if (rc != 0) {
        vl_err_set(err, "brick %s:%s did not answer%s%s", good->host,
                   good->path, reason[0] != '\0' ? ": " : "", reason);
        goto out;
    }
    rc = md_mark_root(g, slot, is_probe, err);

out:
    if (g != NULL)
        vl_graph_free(g);
    if (loop != NULL) {
        vl_loop_stop(loop);
        vl_loop_free(loop);
    }
    vl_volfile_free(vf);
    return rc;
}


size_t
md_heal_mark_set(struct md_state *st, const struct md_volume *vol,
                 size_t first, size_t n, size_t skip, const char *slot,
                 bool is_probe, vl_err_t *err)
{
    size_t n_marked = 0;

    vl_err_set(err, "no other brick of the replica set is up");
    for (size_t j = first; j < first + n; j++) {
        const struct md_brick *b = &vol->bricks[j];
        vl_err_t e = {.msg = ""};

        if (j == skip)
            continue;
        if (md_brick_is_local(st, b) && md_brick_pid(st, vol, b) == 0) {
            vl_glog(MD_DOMAIN, VL_LOG_WARNING, "volume %s: brick %s:%s is "
                    "down, not marked as a heal source for %s", vol->name,
                    b->host, b->path, slot);
            continue;
        }
        if (md_heal_mark_slot(vol, b, slot, is_probe, MD_MARK_TIMEOUT_MS,
                              &e) != 0) {
            vl_glog(MD_DOMAIN, VL_LOG_WARNING, "volume %s: %s %s on %s:%s: "
                    "%s", vol->name, is_probe ? "probing" : "marking", slot,
                    b->host, b->path, e.msg);
            *err = e;
            continue;
        }
        if (!is_probe)
            vl_glog(MD_DOMAIN, VL_LOG_INFO, "volume %s: the root of %s:%s "
                    "blames %s (entry, metadata)", vol->name, b->host,
                    b->path, slot);
        n_marked++;
    }
    return n_marked;
}
