/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * req: the request object and the four calls of the wind/unwind protocol.
 *
 * A request flows down the graph and is answered exactly once:
 *
 *   vl_pass(req, child)        forward the same request; its answer skips
 *                              this translator (what an empty fop slot does)
 *   vl_req_child(req, child)   make a child request (same fop, args copied
 *                              shallowly, so still borrowed from req); NULL
 *                              on ENOMEM, which the caller answers
 *   vl_wind(child, done, ck)   send it down; done(child, ck) runs with the
 *                              result, possibly before vl_wind returns
 *   vl_unwind(req, status)     answer with 0 or -errno, exactly once
 *
 * After done() returns, the core frees the child request and its reply; to
 * keep the reply, move it into the parent with vl_reply_move(). Never touch
 * a request after winding or unwinding it. Never hold a lock across
 * vl_wind. A second vl_unwind of one request aborts the process with a
 * message naming both places, in every build.
 *
 * Per-request private area: every request has graph->req_priv_size zeroed
 * bytes (the largest cls->req_priv_size in the graph) that belong to the
 * translator handling it now (VL_REQ_PRIV). After vl_pass they belong to
 * the child.
 *
 * Every live request is on its graph's pending list, which statedump
 * prints with fop, age, wound_from and wound_to.
 */
#ifndef VOL_REQ_H
#define VOL_REQ_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "vol/common.h"
#include "vol/fop-args.h"

struct vl_xlator;
struct vl_graph;

typedef enum vl_fop {
#define VL_FOP(UPPER, lower, flags) VL_FOP_##UPPER,
#include "vol/fops.def"
#undef VL_FOP
    VL_FOP_COUNT
} vl_fop_t;

/* Flags of fops.def. */
#define VL_F_LOC (1u << 0)
#define VL_F_FD (1u << 1)
#define VL_F_MODIFY (1u << 2)
#define VL_F_ENTRY (1u << 3)

/* "lookup", "readdir"... */
const char *vl_fop_name(vl_fop_t op);
unsigned vl_fop_flags(vl_fop_t op);
/* Returns the fop or -1 for an unknown name. */
int vl_fop_from_name(const char *name);

typedef struct vl_req vl_req_t;
typedef void vl_done_fn(vl_req_t *req, void *cookie);

struct vl_req {
    vl_fop_t op;                 /* which operation */
    int status;                  /* 0 or -errno once answered */
    uint64_t id;                 /* unique in the process, for logs */
    struct vl_graph *graph;      /* borrowed; graph the request runs in */
    struct vl_xlator *xl;        /* translator handling it now (wound_to) */
    struct vl_xlator *wound_from;/* translator that wound it, NULL at top */
    vl_req_t *parent;            /* borrowed; request this one serves */
    vl_done_fn *done;            /* called once with the answer */
    void *cookie;                /* for done */
    struct vl_caller caller;     /* who asked; copied to children */
    union vl_fop_args args;      /* borrowed contents, see fop-args.h */
    struct vl_reply reply;       /* owned contents */
    struct timespec start;       /* CLOCK_MONOTONIC at creation */
    atomic_int state;            /* core's: new, wound, answered */
    void *core_private[2];       /* core's: pending-list links */
    size_t priv_size;            /* bytes in priv */
    _Alignas(16) unsigned char priv[]; /* see VL_REQ_PRIV */
};

#define VL_REQ_PRIV(req, type) ((type *)(void *)(req)->priv)

/* Typed argument accessor: VL_ARGS(req, readv) is &req->args.readv. Debug
 * builds assert that the request really is that fop. */
#ifdef NDEBUG
#define VL_ARGS(req, lower) (&(req)->args.lower)
#else
#define VL_ARGS(req, lower)                                                  \
    (vl__req_check_op((req), (vl_fop_t)vl__fop_id_##lower), &(req)->args.lower)
#endif

enum {
#define VL_FOP(UPPER, lower, flags) vl__fop_id_##lower = VL_FOP_##UPPER,
#include "vol/fops.def"
#undef VL_FOP
};

void vl__req_check_op(const vl_req_t *req, vl_fop_t op);

/* A new top-level request for fop op, to be wound into translator to
 * (args zeroed; fill them, then vl_wind). NULL on ENOMEM. */
vl_req_t *vl_req_new(struct vl_xlator *to, vl_fop_t op);
/* A child of req, same fop, args and caller copied; NULL on ENOMEM. */
vl_req_t *vl_req_child(vl_req_t *req, struct vl_xlator *child);
/* A request for another fop on behalf of req (req may be NULL); args
 * zeroed, caller copied from req; NULL on ENOMEM. */
vl_req_t *vl_req_new_op(vl_req_t *req, struct vl_xlator *to, vl_fop_t op);
/* Frees a request that was never wound (e.g. after filling args failed). */
void vl_req_free_unwound(vl_req_t *req);

void vl_wind(vl_req_t *req, vl_done_fn *done, void *cookie);
void vl_pass(vl_req_t *req, struct vl_xlator *child);
void vl_unwind(vl_req_t *req, int status);

/* The names an entry fop (mkdir, mknod, create, symlink, link, unlink,
 * rmdir, rename) makes or removes: *loc (rename: the old name; link: the
 * new name) and, for rename only, *loc2 (the new name; NULL otherwise).
 * false, both NULL, for any other fop. */
bool vl_req_entry_locs(const vl_req_t *req, const struct vl_loc **loc,
                       const struct vl_loc **loc2);

/* Moves src's reply into dst (dst's old reply is cleared first). */
void vl_reply_move(vl_req_t *dst, vl_req_t *src);

/* Fan-out: a counter in the parent's private area. Start with the number
 * of children; each done() calls vl_fanout_arrive with the child's status,
 * and the call that returns true is the last one, which answers the
 * parent with vl_fanout_status() (the first error, or 0). */
typedef struct vl_fanout {
    atomic_int pending;   /* children not answered yet */
    atomic_int first_err; /* first non-zero status seen, or 0 */
    atomic_int n_ok;      /* children that answered 0 */
} vl_fanout_t;

void vl_fanout_begin(vl_fanout_t *fan, int n_children);
bool vl_fanout_arrive(vl_fanout_t *fan, int status);
int vl_fanout_status(const vl_fanout_t *fan);

#endif /* VOL_REQ_H */
