/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proto-harness: what the protocol tests share. A brick graph behind
 * protocol/server on a port of 127.0.0.1 and a client graph reaching it
 * through protocol/client, each on its own event loop (struct ph_env);
 * a raw peer that speaks the wire protocol without protocol/client's
 * checks (struct ph_raw); an in-memory store of one object's replication
 * counters for leaves that answer XATTROP (struct ph_xattrs); and a
 * condition to wait on (struct ph_signal).
 *
 * Each test program registers its own leaf and top translators, builds
 * its brick's volfile text and calls these; a failure is a cmocka
 * assertion.
 */
#ifndef MORTAR_PROTO_HARNESS_H
#define MORTAR_PROTO_HARNESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <rpc/rpc.h>

#include "vol/vol.h"
#include "vrpc.h"

/* How long any wait of a test lasts at most. */
#define PH_WAIT_MS 20000

/* ---- waiting ---- */

/* Counters that callbacks of other threads bump, and a test waits on. */
struct ph_signal {
    pthread_mutex_t lock; /* guards the counters it is used with */
    pthread_cond_t cond;  /* broadcast when one changes */
};

void ph_signal_init(struct ph_signal *s);
/* Sets *field to value under s's lock and wakes the waiters. */
void ph_signal_set(struct ph_signal *s, int *field, int value);
/* Adds 1 to *field under s's lock and wakes the waiters. */
void ph_signal_bump(struct ph_signal *s, int *field);
/* Waits until *field >= want, or PH_WAIT_MS passed; returns *field. */
int ph_signal_wait(struct ph_signal *s, const int *field, int want);

/* ---- graphs ---- */

/* The library, its log level and the two protocol translators, once
 * per test (each registration after the first is a no-op). */
void ph_init(void);

/* A port of 127.0.0.1 nobody listens on now. */
uint16_t ph_free_port(void);

/* The graph of volfile text, built, initialised and active on loop. */
vl_graph_t *ph_graph_up(vl_loop_t *loop, const char *text,
                        vl_volfile_t **vf_out);

/* Lets g finish its requests (vl_sync_call may return while the core is
 * still freeing one), then frees it and its volfile; both set to NULL.
 * Nothing to do when *g is NULL. */
void ph_graph_down(vl_graph_t **g, vl_volfile_t **vf);

/* Lets g finish its requests (as ph_graph_down, without freeing). */
void ph_drain(vl_graph_t *g);

/* A "ready at CHILD_UP" top for client graphs (type "ph/ready"): the
 * client graph's vl_graph_wait_ready returns once it is connected. */
extern const vl_xlator_class_t ph_ready_class;

struct ph_env {
    vl_loop_t *sloop, *cloop; /* the brick's and the client's loops */
    vl_volfile_t *svf, *cvf;  /* their volfiles */
    vl_graph_t *sg, *cg;      /* their graphs, NULL when down */
    uint16_t port;            /* the brick's port */
};

/* Both loops started and a free port. */
void ph_env_start(struct ph_env *e);

/* The brick: the translators of text (one of them named subvol) under a
 * protocol/server on e->port that lets allow ("127.0.0.1", "*") in, raw
 * peers from unprivileged ports too; waits until it listens. */
void ph_brick_up(struct ph_env *e, const char *text, const char *subvol,
                 const char *allow);

/* The client: protocol/client to subvol on e->port, its options given
 * one per line in options (" option ping-timeout 5\n"; "" for none),
 * under a top of type top_type named "t". */
void ph_client_up(struct ph_env *e, const char *subvol, const char *options,
                  const char *top_type);

/* Both graphs freed (the client first, its requests finished), both
 * loops stopped and freed. */
void ph_env_stop(struct ph_env *e);

/* Removes directory dir and everything below it (a test's brick). */
void ph_rmtree(const char *dir);

/* ---- a raw peer ---- */

#define PH_RAW_CALLS 8

struct ph_raw;

/* A call's cookie: its peer and its index in status. */
struct ph_raw_slot {
    struct ph_raw *raw;
    int k;
};

struct ph_raw {
    struct ph_raw_slot slots[PH_RAW_CALLS]; /* the calls' cookies */
    struct ph_signal sig;      /* guards below */
    vrpc_clnt_t *clnt;         /* the connection */
    int connected;             /* 1, or -errno */
    int n_done;                /* answers seen */
    int status[PH_RAW_CALLS];  /* call k's: an RPC error, or the int its
                                  answer starts with (-EBADMSG: none) */
};

/* Connects r to e's brick (on the client's loop), nothing sent. */
void ph_raw_connect(struct ph_raw *r, const struct ph_env *e);

/* ph_raw_connect, then SETVOLUME of subvol offering version proto: call
 * 0, asserted successful. */
void ph_raw_open(struct ph_raw *r, const struct ph_env *e,
                 const char *subvol, unsigned proto);

/* Sends procedure proc of the fops program: args through fn, or the raw
 * bytes of iov when fn is NULL. Its answer's status lands in status[k]
 * (when k < PH_RAW_CALLS). Does not wait. */
void ph_raw_send(struct ph_raw *r, uint32_t proc, xdrproc_t fn, void *args,
                 const struct iovec *iov, int n_iov, int k);

/* ph_raw_send, then waits until k + 1 answers came, asserted. */
void ph_raw_call(struct ph_raw *r, uint32_t proc, xdrproc_t fn, void *args,
                 int k);

/* Closes r's connection. */
void ph_raw_close(struct ph_raw *r);

/* ---- one object's counters, in memory ---- */

#define PH_XATTRS_KEYS 4

struct ph_xattrs {
    char names[PH_XATTRS_KEYS][64];         /* keys so far ("": free) */
    unsigned char vals[PH_XATTRS_KEYS][64]; /* their values */
    uint32_t lens[PH_XATTRS_KEYS];          /* their lengths */
};

/* Applies an ADD32 XATTROP of trusted.mortar.rep.* keys (any other key:
 * -EPERM) as storage/posix would, the values after it into rp->xattr.
 * is_short: answer one byte short (a broken brick). 0 or -errno. */
int ph_xattrs_apply(struct ph_xattrs *x, const struct vl_xattrop_args *a,
                    struct vl_reply *rp, bool is_short);

#endif /* MORTAR_PROTO_HARNESS_H */
