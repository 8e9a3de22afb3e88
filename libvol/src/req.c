/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * req: request objects and the wind / pass / unwind protocol.
 *
 * One allocation per request: the struct, the graph's private area and a
 * core trailer (struct vl__req_core: pending-list links, refs, where it was
 * first answered). A request holds a "life" ref until its answer has been
 * delivered, plus one ref per dispatch running on the stack, so a
 * translator that answers twice inside its own fop still finds the request
 * alive and the second vl_unwind aborts with both places instead of
 * corrupting memory.
 *
 * Fop counters: the trailer also lists the translators the request
 * reached (vl_wind, vl_pass) with the time it reached each; vl_unwind
 * credits each of them once (vol/fop-stats.h). The list has room for the
 * graph's depth, which a chain of passes down the graph cannot exceed.
 *
 * Threads: any thread may wind or unwind; state and refs are atomics; the
 * graph's pend_lock is held only to insert or remove a request. The hops
 * are written by whoever winds or passes, before the dispatch that may
 * lead to the answer, so vl_unwind reads them without a lock.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

enum vl_req_state {
    VL_REQ_NEW = 0,
    VL_REQ_WOUND,
    VL_REQ_ANSWERED,
};

static const char *const vl_fop_names[] = {
#define VL_FOP(UPPER, lower, flags) #lower,
#include "vol/fops.def"
#undef VL_FOP
};

static const unsigned vl_fop_flag_table[] = {
#define VL_FOP(UPPER, lower, flags) flags,
#include "vol/fops.def"
#undef VL_FOP
};

static atomic_uint_least64_t vl_req_next_id = 1;

/* Room for hops in a request outside any graph (unit tests' bare
 * translators). */
#define VL_REQ_HOPS_NO_GRAPH 8

/* The request whose fop this thread is running (innermost dispatch). A
 * pass made while it is still running, on the same stack as the wind or
 * pass that reached the passing translator, reuses that hop's time
 * instead of reading the clock again: the difference is the passing
 * translators' own CPU time, well under the first bucket (1 us), and a
 * clock read costs 40 ns on a KVM guest (fop-stats.h). */
static _Thread_local vl_req_t *vl_req_running
    __attribute__((tls_model("initial-exec")));


const char *
vl_fop_name(vl_fop_t op)
{
    if ((unsigned)op >= VL_FOP_COUNT)
        return "?";
    return vl_fop_names[op];
}


unsigned
vl_fop_flags(vl_fop_t op)
{
    if ((unsigned)op >= VL_FOP_COUNT)
        return 0;
    return vl_fop_flag_table[op];
}


int
vl_fop_from_name(const char *name)
{
    int i;

    for (i = 0; i < VL_FOP_COUNT; i++)
        if (strcmp(vl_fop_names[i], name) == 0)
            return i;
    return -1;
}


/* Describes a code address as "symbol+0xoff (object)" for abort messages. */
static void
vl_req_where(void *addr, char *buf, size_t len)
{
    Dl_info info;

    if (addr != NULL && dladdr(addr, &info) != 0 && info.dli_sname != NULL)
        snprintf(buf, len, "%s+%#lx (%s, %p)", info.dli_sname,
                 (unsigned long)((char *)addr - (char *)info.dli_saddr),
                 info.dli_fname != NULL ? info.dli_fname : "?", addr);
    else
        snprintf(buf, len, "%p", addr);
}


static void __attribute__((noreturn))
vl_req_abort(vl_req_t *req, const char *what, void *again_at)
{
    struct vl__req_core *rc = vl__req_core(req);
    char first[256];
    char again[256];

    vl_req_where(rc->unwound_at, first, sizeof(first));
    vl_req_where(again_at, again, sizeof(again));
    fprintf(stderr,
            "libvol: request %llu (%s) %s: first answered by %s at %s; "
            "again by %s at %s\n",
            (unsigned long long)req->id, vl_fop_name(req->op), what,
            rc->unwound_by != NULL ? rc->unwound_by : "-", first,
            req->xl != NULL ? req->xl->name : "-", again);
    vl_glog("req", VL_LOG_CRITICAL,
            "request %llu (%s) %s: first by %s at %s; again by %s at %s",
            (unsigned long long)req->id, vl_fop_name(req->op), what,
            rc->unwound_by != NULL ? rc->unwound_by : "-", first,
            req->xl != NULL ? req->xl->name : "-", again);
    abort();
}


void
vl__req_check_op(const vl_req_t *req, vl_fop_t op)
{
    if (req->op == op)
        return;
    fprintf(stderr, "libvol: request %llu is %s, accessed as %s args\n",
            (unsigned long long)req->id, vl_fop_name(req->op),
            vl_fop_name(op));
    abort();
}


static vl_req_t *
vl_req_alloc(vl_xlator_t *to, vl_fop_t op)
{
    vl_graph_t *graph = to->graph;
    size_t priv = graph != NULL ? graph->req_priv_size : 0;
    unsigned cap_hops = VL_REQ_HOPS_NO_GRAPH;
    struct vl__req_core *rc;
    vl_req_t *req;

    if ((unsigned)op >= VL_FOP_COUNT)
        return NULL;
    if (graph != NULL && vl__graph_core(graph)->max_hops > 0)
        cap_hops = vl__graph_core(graph)->max_hops;
    priv = VL__ALIGN_UP(priv);
    req = vl_calloc(NULL, 1,
                    sizeof(*req) + priv + sizeof(*rc)
                        + cap_hops * sizeof(rc->hops[0]),
                    VL_MT_REQ);
    if (req == NULL)
        return NULL;
    req->op = op;
    req->id = atomic_fetch_add_explicit(&vl_req_next_id, 1,
                                        memory_order_relaxed);
    req->graph = graph;
    req->xl = to;
    req->priv_size = priv;
    clock_gettime(CLOCK_MONOTONIC, &req->start);
    atomic_init(&req->state, VL_REQ_NEW);
    rc = vl__req_core(req);
    atomic_init(&rc->refs, 1);
    rc->cap_hops = cap_hops;
    if (graph != NULL)
        vl__graph_pending_add(graph, req);
    return req;
}


static void
vl_req_destroy(vl_req_t *req)
{
    struct vl__req_core *rc = vl__req_core(req);
    void (*on_destroy)(void *arg) = rc->on_destroy;
    void *arg = rc->on_destroy_arg;

    if (req->graph != NULL)
        vl__graph_pending_del(req->graph, req);
    vl_reply_clear(&req->reply);
    vl_free(req);
    if (on_destroy != NULL)
        on_destroy(arg);
}


uint64_t
vl__req_next_id(void)
{
    return atomic_load(&vl_req_next_id);
}


void
vl__req_on_destroy(vl_req_t *req, void (*fn)(void *arg), void *arg)
{
    struct vl__req_core *rc = vl__req_core(req);

    rc->on_destroy = fn;
    rc->on_destroy_arg = arg;
}


static void
vl_req_unref(vl_req_t *req)
{
    if (atomic_fetch_sub(&vl__req_core(req)->refs, 1) == 1)
        vl_req_destroy(req);
}


vl_req_t *
vl_req_new(struct vl_xlator *to, vl_fop_t op)
{
    return vl_req_alloc(to, op);
}


vl_req_t *
vl_req_child(vl_req_t *req, struct vl_xlator *child)
{
    vl_req_t *c = vl_req_alloc(child, req->op);

    if (c == NULL)
        return NULL;
    c->args = req->args;
    c->caller = req->caller;
    c->parent = req;
    c->wound_from = req->xl;
    return c;
}


vl_req_t *
vl_req_new_op(vl_req_t *req, struct vl_xlator *to, vl_fop_t op)
{
    vl_req_t *c = vl_req_alloc(to, op);

    if (c == NULL || req == NULL)
        return c;
    c->caller = req->caller;
    c->parent = req;
    c->wound_from = req->xl;
    return c;
}


void
vl_req_free_unwound(vl_req_t *req)
{
    if (req == NULL)
        return;
    if (atomic_load(&req->state) != VL_REQ_NEW)
        vl_req_abort(req, "freed with vl_req_free_unwound after wind",
                     __builtin_return_address(0));
    vl_req_unref(req);
}


/* Notes that req reached xl now, for the fop counters. */
static void
vl_req_hop(vl_req_t *req, vl_xlator_t *xl)
{
    struct vl__req_core *rc = vl__req_core(req);
    uint32_t n = rc->n_hops;

    if (n == rc->cap_hops) {
        vl__fop_stats_unrecorded_add();
        return;
    }
    rc->hops[n].xl = xl;
    if (n > 0 && vl_req_running == req)
        rc->hops[n].t_ns = rc->hops[n - 1].t_ns; /* synchronous pass */
    else
        rc->hops[n].t_ns = vl__now_ns();
    rc->n_hops = n + 1;
}


/* Credits every translator req reached with its answer (status). Runs in
 * vl_unwind before done(), while the args are still valid. */
static void
vl_req_credit(vl_req_t *req, int status)
{
    struct vl__req_core *rc = vl__req_core(req);
    uint64_t now = vl__now_ns();
    uint64_t bytes = 0;
    uint32_t i;

    if (req->op == VL_FOP_READ && status >= 0 && req->reply.count > 0) {
        bytes = (uint64_t)req->reply.count;
    } else if (req->op == VL_FOP_WRITE) {
        const struct vl_write_args *a = &req->args.write;
        int k;

        for (k = 0; k < a->n_iov; k++)
            bytes += a->iov[k].iov_len;
    }
    for (i = 0; i < rc->n_hops; i++) {
        uint64_t t = rc->hops[i].t_ns;

        vl__fop_stats_credit(rc->hops[i].xl, req->op, status,
                             now > t ? now - t : 0, bytes);
    }
}


/* Runs xl's fop for req, holding a dispatch ref across the call. */
static void
vl_req_dispatch(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl__req_core *rc = vl__req_core(req);
    vl_fop_fn *fn = xl->cls->fops[req->op];
    vl_req_t *outer = vl_req_running;

    atomic_fetch_add_explicit(&rc->refs, 1, memory_order_relaxed);
    vl_req_running = req;
    if (fn != NULL)
        fn(xl, req);
    else if (xl->n_children > 0)
        vl_pass(req, xl->children[0]);
    else
        vl_unwind(req, -ENOSYS);
    vl_req_running = outer;
    vl_req_unref(req);
}


void
vl_wind(vl_req_t *req, vl_done_fn *done, void *cookie)
{
    int expect = VL_REQ_NEW;

    req->done = done;
    req->cookie = cookie;
    if (!atomic_compare_exchange_strong(&req->state, &expect, VL_REQ_WOUND))
        vl_req_abort(req, "wound twice", __builtin_return_address(0));
    vl_req_hop(req, req->xl);
    vl_req_dispatch(req->xl, req);
}


void
vl_pass(vl_req_t *req, struct vl_xlator *child)
{
    if (atomic_load(&req->state) != VL_REQ_WOUND)
        vl_req_abort(req, "passed after being answered (or never wound)",
                     __builtin_return_address(0));
    req->wound_from = req->xl;
    req->xl = child;
    /* The private area now belongs to the child, which expects zeroes. */
    if (req->priv_size > 0)
        memset(req->priv, 0, req->priv_size);
    vl_req_hop(req, child);
    vl_req_dispatch(child, req);
}


void
vl_unwind(vl_req_t *req, int status)
{
    struct vl__req_core *rc = vl__req_core(req);
    void *at = __builtin_return_address(0);
    int expect = VL_REQ_WOUND;

    if (!atomic_compare_exchange_strong(&req->state, &expect,
                                        VL_REQ_ANSWERED))
        vl_req_abort(req, expect == VL_REQ_NEW ? "answered before wind"
                                               : "answered twice", at);
    rc->unwound_at = at;
    rc->unwound_by = req->xl != NULL ? req->xl->name : NULL;
    req->status = status;
    vl_req_credit(req, status);
    if (req->done != NULL)
        req->done(req, req->cookie);
    vl_req_unref(req);
}


void
vl_fanout_begin(vl_fanout_t *fan, int n_children)
{
    atomic_init(&fan->pending, n_children);
    atomic_init(&fan->first_err, 0);
    atomic_init(&fan->n_ok, 0);
}


bool
vl_fanout_arrive(vl_fanout_t *fan, int status)
{
    if (status == 0) {
        atomic_fetch_add(&fan->n_ok, 1);
    } else {
        int zero = 0;

        atomic_compare_exchange_strong(&fan->first_err, &zero, status);
    }
    return atomic_fetch_sub(&fan->pending, 1) == 1;
}


int
vl_fanout_status(const vl_fanout_t *fan)
{
    return atomic_load(&fan->first_err);
}


bool
vl_req_entry_locs(const vl_req_t *req, const struct vl_loc **loc,
                  const struct vl_loc **loc2)
{
    const union vl_fop_args *a = &req->args;

    *loc = NULL;
    *loc2 = NULL;
    switch (req->op) {
    case VL_FOP_MKDIR:
        *loc = &a->mkdir.loc;
        break;
    case VL_FOP_MKNOD:
        *loc = &a->mknod.loc;
        break;
    case VL_FOP_CREATE:
        *loc = &a->create.loc;
        break;
    case VL_FOP_SYMLINK:
        *loc = &a->symlink.loc;
        break;
    case VL_FOP_LINK:
        *loc = &a->link.newloc;
        break;
    case VL_FOP_UNLINK:
        *loc = &a->unlink.loc;
        break;
    case VL_FOP_RMDIR:
        *loc = &a->rmdir.loc;
        break;
    case VL_FOP_RENAME:
        *loc = &a->rename.oldloc;
        *loc2 = &a->rename.newloc;
        break;
    default:
        return false;
    }
    return true;
}
