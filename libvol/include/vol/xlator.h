/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xlator: the translator class (one const, versioned struct per type) and
 * the translator instance a graph builds from it.
 *
 * Lifecycle: the graph parses xl->conf from the volfile through
 * cls->options, calls cross_check, then init() bottom-up (children first);
 * then PARENT_UP goes down from the top. Leaves that connect somewhere
 * (protocol/client) send CHILD_UP/CHILD_DOWN up when they connect or lose
 * their server. fini() runs top-down at teardown, after PARENT_DOWN.
 *
 * A NULL fop slot passes the request to the first child; in a leaf it
 * answers -ENOSYS.
 */
#ifndef VOL_XLATOR_H
#define VOL_XLATOR_H

#include <stdio.h>

#include "vol/common.h"
#include "vol/fd.h"
#include "vol/inode.h"
#include "vol/options.h"
#include "vol/req.h"

#define VL_XLATOR_ABI 1

struct vl_graph;
struct vl_metrics_sink;
typedef struct vl_xlator vl_xlator_t;

typedef enum vl_event {
    VL_EV_PARENT_UP,   /* the graph above is ready; start connecting */
    VL_EV_PARENT_DOWN, /* the graph is being torn down; stop */
    VL_EV_CHILD_UP,    /* data: the child (vl_xlator_t *) that came up */
    VL_EV_CHILD_DOWN,  /* data: the child that went down */
    VL_EV_CLIENT_DISCONNECT, /* brick side; data: uint64_t *client_id whose
                                locks and state must be dropped */
    VL_EV_UPCALL,      /* goes up; data: const struct vl_upcall * */
    VL_EV_RECONNECT,   /* goes down; a brick may be back (mortard started
                          it): a disconnected protocol/client tries now
                          rather than after its backoff */
} vl_event_t;

/* What a brick tells a client (VL_EV_UPCALL), one of two kinds.
 *
 * VL_UPCALL_BREAK_LEASE: a directory lease is broken
 * (xlators/features/upcall/README.md); nl-cache's.
 *
 * VL_UPCALL_INVALIDATE: another client changed something this client
 * looked at (cache invalidation, the same README): the attributes or
 * data of gfid (VL_INVAL_ATTR, VL_INVAL_DATA), and with VL_INVAL_ENTRY
 * the name `name` in the directory `parent` (made, removed or renamed;
 * the directory's own attributes changed with it). gfid is null when
 * only an entry changed and the object is unknown.
 *
 * On a brick, features/upcall sends it up for protocol/server to tell
 * client_id; on a client, protocol/client sends it up when its brick said
 * so (client_id 0), or with is_all when its connection went down: every
 * lease that brick granted and everything it vouched for is gone (either
 * kind's consumers act on is_all, which carries kind 0). */
enum vl_upcall_kind {
    VL_UPCALL_BREAK_LEASE = 0,
    VL_UPCALL_INVALIDATE = 1,
};

#define VL_INVAL_ATTR (1u << 0)  /* gfid's attributes and xattrs */
#define VL_INVAL_DATA (1u << 1)  /* gfid's data (page cache) */
#define VL_INVAL_ENTRY (1u << 2) /* name in parent, and parent's attrs */
#define VL_INVAL_MASK (VL_INVAL_ATTR | VL_INVAL_DATA | VL_INVAL_ENTRY)

struct vl_upcall {
    vl_gfid_t gfid;      /* lease: the directory; invalidate: the object */
    uint64_t client_id;  /* brick side: the connection to tell */
    bool is_all;         /* everything the sender granted is gone */
    enum vl_upcall_kind kind;
    uint32_t flags;      /* invalidate: VL_INVAL_* */
    vl_gfid_t parent;    /* with VL_INVAL_ENTRY: the directory */
    const char *name;    /* with VL_INVAL_ENTRY: borrowed; the name */
};

typedef void vl_fop_fn(vl_xlator_t *xl, vl_req_t *req);

/* Class flags. */
#define VL_XL_LEAF (1u << 0)      /* takes no children (storage, client) */
#define VL_XL_ONE_CHILD (1u << 1) /* exactly one child */
#define VL_XL_MANY_CHILDREN (1u << 2) /* one or more children */
#define VL_XL_TOP_ONLY (1u << 3)  /* must be the top of the graph */

typedef struct vl_xlator_class {
    unsigned abi;               /* VL_XLATOR_ABI */
    const char *type;           /* "storage/posix" */
    const char *type_alias;     /* another name volfiles may use (the
                                   GlusterFS one), or NULL */
    const char *prefix;         /* `volume set` namespace: "posix" */
    unsigned version[3];        /* the class's own version */
    unsigned flags;             /* VL_XL_* */
    size_t conf_size;           /* sizeof the option struct */
    size_t req_priv_size;       /* bytes per request (VL_REQ_PRIV) */
    size_t inode_ctx_size;      /* bytes per inode (vl_inode_ctx) */
    size_t fd_ctx_size;         /* bytes per fd (vl_fd_ctx) */
    const vl_option_t *options; /* terminated by VL_OPT_END */
    const char *const *mem_types; /* names, index 0 = "misc"; NULL-ended */
    const char *doc;            /* one paragraph for the translator guide */

    /* Returns 0 or -errno with err set. xl->conf is parsed. */
    int (*init)(vl_xlator_t *xl, vl_err_t *err);
    void (*fini)(vl_xlator_t *xl);
    /* Rules involving several options; conf is the parsed struct. */
    int (*cross_check)(const void *conf, vl_err_t *err);
    /* Applies new_conf (only VL_OPT_LIVE options differ) in place; on
     * success the core swaps xl->conf with new_conf and frees the old. */
    int (*reconfigure)(vl_xlator_t *xl, const void *new_conf, vl_err_t *err);
    /* Returns 0; NULL means vl_notify_default. */
    int (*notify)(vl_xlator_t *xl, vl_event_t ev, void *data);
    void (*forget)(vl_xlator_t *xl, vl_inode_t *inode);
    void (*release)(vl_xlator_t *xl, vl_fd_t *fd);
    /* Writes "key=value" lines of private state for statedump. */
    void (*dump)(vl_xlator_t *xl, FILE *out);
    /* Reports counters it keeps (cache hits...) for /metrics with
     * vl_metrics_emit (vol/metrics.h); any thread, while xl exists. */
    void (*metrics)(vl_xlator_t *xl, struct vl_metrics_sink *sink);
    /* Bytes its caches hold now and the most they may hold (its share of
     * the client's performance.cache-size), for statedump's account of
     * the process's memory; any thread, while xl exists. NULL: it keeps
     * no data beyond a request. */
    void (*cache_usage)(vl_xlator_t *xl, uint64_t *bytes, uint64_t *limit);

    vl_fop_fn *fops[VL_FOP_COUNT];
} vl_xlator_class_t;

struct vl_mem_acct;
struct vl__xl_stats;

struct vl_xlator {
    const vl_xlator_class_t *cls; /* borrowed, static */
    char *name;                   /* owned; volfile volume name */
    void *conf;                   /* owned; parsed options (cls->conf_size).
                                     Reconfigure may swap it: read it while
                                     handling a request or in init/
                                     reconfigure; threads and timers keep
                                     their own copy in priv */
    void *priv;                   /* the translator's runtime state */
    vl_xlator_t **children;       /* owned array of borrowed pointers */
    size_t n_children;
    vl_xlator_t **parents;        /* owned array of borrowed pointers */
    size_t n_parents;
    struct vl_graph *graph;       /* borrowed; the graph it belongs to */
    unsigned index;               /* position in the graph */
    size_t inode_ctx_off;         /* offset of its area in inode ctx */
    size_t fd_ctx_off;            /* offset of its area in fd ctx */
    struct vl_mem_acct *mem_acct; /* owned by the core */
    bool is_up;                   /* core's: CHILD_UP seen from below */
    struct vl__xl_stats *fop_stats; /* owned by the core; read with
                                       vl_fop_stats_read (fop-stats.h) */
};

#define VL_FIRST_CHILD(xl) ((xl)->children[0])
#define VL_CONF(xl, type) ((const type *)(xl)->conf)

/* Forwards CHILD_UP/CHILD_DOWN (data: xl) and UPCALL (data as given) to
 * every parent and PARENT_UP/PARENT_DOWN/CLIENT_DISCONNECT/RECONNECT to
 * every child. */
int vl_notify_default(vl_xlator_t *xl, vl_event_t ev, void *data);
/* Delivers ev to xl (its notify, or the default). */
int vl_notify(vl_xlator_t *xl, vl_event_t ev, void *data);
/* Sends ev from child to each of its parents. */
void vl_notify_parents(vl_xlator_t *child, vl_event_t ev);
/* Sends ev with data from xl to each of its parents. */
void vl_notify_parents_data(vl_xlator_t *xl, vl_event_t ev, void *data);

/* Registry of classes, filled at startup (xlators/builtin.c registers the
 * in-tree ones; tests add their own). */
int vl_registry_add(const vl_xlator_class_t *cls);
const vl_xlator_class_t *vl_registry_find(const char *type);
/* Calls fn for every registered class, in registration order. */
void vl_registry_foreach(void (*fn)(const vl_xlator_class_t *cls, void *arg),
                         void *arg);

#endif /* VOL_XLATOR_H */
