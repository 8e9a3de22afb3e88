/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-protocol-drop: what a brick does with the requests of a connection
 * its client gave up on. The brick graph is protocol/server over
 * performance/io-threads (one worker, every fop queued) over "test/gate",
 * a leaf that holds WRITEs behind a gate; the client graph is "test/up"
 * (counts CHILD_UP) over protocol/client with a 1 s ping-timeout.
 *
 * One WRITE runs (held at the gate) and two more wait in io-threads'
 * queue; the brick's loop is frozen, so the client declares it dead and
 * fails all three with -ENOTCONN. When the brick thaws it sees the
 * closed connection: the two queued WRITEs never reach the leaf (the
 * application was told they failed), the running one finishes.
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
#include "performance/io-threads/io-threads.h"
#include "proto-harness.h"

/* ---- test/gate: the brick's leaf ---- */

static struct {
    struct ph_signal sig; /* guards everything here, on any change */
    bool is_open;         /* WRITEs pass the gate */
    int n_writes;         /* WRITEs that reached the leaf */
    int n_in_write;       /* WRITEs held at the gate now */
    int n_disconnects;    /* CLIENT_DISCONNECT seen */
    int n_up;             /* CHILD_UP seen by the client's top */
    int n_answers;        /* WRITE answers on the client */
    int n_notconn;        /* of them -ENOTCONN */
} g = {
    .sig = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER},
};


static void
gate_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_reply *rp = &req->reply;

    (void)xl;
    if (req->op == VL_FOP_CREATE) {
        rp->iatt.gfid = req->args.create.gfid;
        rp->iatt.ino = vl_gfid_to_ino(&rp->iatt.gfid);
        rp->iatt.mode = S_IFREG | 0644;
        rp->iatt.nlink = 1;
        vl_unwind(req, 0);
        return;
    }
    if (req->op != VL_FOP_WRITE) {
        vl_unwind(req, -ENOSYS);
        return;
    }
    pthread_mutex_lock(&g.sig.lock);
    g.n_writes++;
    g.n_in_write++;
    pthread_cond_broadcast(&g.sig.cond);
    while (!g.is_open)
        pthread_cond_wait(&g.sig.cond, &g.sig.lock);
    g.n_in_write--;
    pthread_cond_broadcast(&g.sig.cond);
    pthread_mutex_unlock(&g.sig.lock);
    rp->count = (int64_t)req->args.write.iov[0].iov_len;
    vl_unwind(req, 0);
}


static int
gate_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    if (ev == VL_EV_CLIENT_DISCONNECT) {
        pthread_mutex_lock(&g.sig.lock);
        g.n_disconnects++;
        pthread_cond_broadcast(&g.sig.cond);
        pthread_mutex_unlock(&g.sig.lock);
        return 0;
    }
    if (ev == VL_EV_CHILD_UP && xl->n_children > 0) {
        pthread_mutex_lock(&g.sig.lock);
        g.n_up++;
        pthread_cond_broadcast(&g.sig.cond);
        pthread_mutex_unlock(&g.sig.lock);
        return 0;
    }
    return vl_notify_default(xl, ev, data);
}


static const vl_option_t no_options[] = {VL_OPT_END};
static const char *const misc_types[] = {"misc", NULL};

static const vl_xlator_class_t gate_class = {
    .abi = VL_XLATOR_ABI,
    .type = "test/gate",
    .prefix = "gate",
    .flags = VL_XL_LEAF,
    .options = no_options,
    .mem_types = misc_types,
    .doc = "Holds WRITEs behind a gate for the drop test.",
    .notify = gate_notify,
    .fops = {
#define VL_FOP(UPPER, lower, flags) [VL_FOP_##UPPER] = gate_fop,
#include "vol/fops.def"
#undef VL_FOP
    },
};

static const vl_xlator_class_t up_class = {
    .abi = VL_XLATOR_ABI,
    .type = "test/up",
    .prefix = "up",
    .flags = VL_XL_ONE_CHILD,
    .options = no_options,
    .mem_types = misc_types,
    .doc = "Counts CHILD_UP for the drop test.",
    .notify = gate_notify,
};


/* Waits until *field >= want (or PH_WAIT_MS); returns *field. */
static int
g_wait(const int *field, int want)
{
    return ph_signal_wait(&g.sig, field, want);
}


static void
g_gate(bool is_open)
{
    pthread_mutex_lock(&g.sig.lock);
    g.is_open = is_open;
    pthread_cond_broadcast(&g.sig.cond);
    pthread_mutex_unlock(&g.sig.lock);
}


static void
write_done(vl_req_t *req, void *cookie)
{
    (void)cookie;
    pthread_mutex_lock(&g.sig.lock);
    g.n_answers++;
    if (req->status == -ENOTCONN)
        g.n_notconn++;
    pthread_cond_broadcast(&g.sig.cond);
    pthread_mutex_unlock(&g.sig.lock);
}


/* ---- graphs ---- */

/* Requests waiting in io-threads' queues and running there. */
static size_t
iot_busy(vl_graph_t *brick)
{
    vl_xlator_t *iot = VL_FIRST_CHILD(brick->top);
    struct iot_priv *priv = iot->priv;
    size_t n = 0;

    pthread_mutex_lock(&priv->lock);
    for (int p = 0; p < IOT_PRIO_COUNT; p++)
        n += priv->queues[p].len + priv->running[p];
    pthread_mutex_unlock(&priv->lock);
    return n;
}


static void
wait_iot_busy(vl_graph_t *brick, size_t want)
{
    for (int i = 0; i < PH_WAIT_MS && iot_busy(brick) != want; i++)
        usleep(1000);
    assert_int_equal(iot_busy(brick), want);
}


static void
wind_write(vl_graph_t *cg, vl_fd_t *fd, struct iovec *iov)
{
    vl_req_t *req = vl_req_new(cg->top, VL_FOP_WRITE);

    assert_non_null(req);
    req->args.write.fd = fd;
    req->args.write.iov = iov;
    req->args.write.n_iov = 1;
    vl_wind(req, write_done, NULL);
}


/* ---- the test ---- */

static void
test_queued_writes_dropped_on_close(void **state)
{
    static char data[4096];
    struct iovec iov = {data, sizeof(data)};
    struct ph_env e = {0};
    vl_graph_t *sg, *cg;
    union vl_fop_args a;
    struct vl_reply r;
    vl_inode_t *inode;
    vl_fd_t *fd;

    (void)state;
    ph_env_start(&e);
    ph_brick_up(&e,
                "volume gate\n type test/gate\nend-volume\n"
                "volume iot\n type performance/io-threads\n"
                " option thread-count 1\n option inline-fast-fops off\n"
                " subvolumes gate\nend-volume\n",
                "iot", "127.0.0.1");
    ph_client_up(&e, "iot", " option ping-timeout 1\n", "test/up");
    sg = e.sg;
    cg = e.cg;
    assert_int_equal(g_wait(&g.n_up, 1), 1);

    inode = vl_inode_new(cg->itable);
    fd = vl_fd_new(inode, O_RDWR | O_CREAT, 1);
    memset(&a, 0, sizeof(a));
    a.create.loc.parent = vl_inode_table_root(cg->itable);
    a.create.loc.name = "file";
    a.create.loc.inode = inode;
    a.create.flags = O_RDWR | O_CREAT;
    a.create.mode = 0644;
    a.create.fd = fd;
    vl_gfid_generate(&a.create.gfid);
    assert_int_equal(vl_sync_call(cg->top, VL_FOP_CREATE, &a, NULL, &r), 0);
    vl_inode_unref(vl_inode_link(inode, &r.iatt));
    vl_reply_clear(&r);
    vl_inode_unref(a.create.loc.parent);

    /* One WRITE runs (held), two wait for the only worker. */
    wind_write(cg, fd, &iov);
    assert_int_equal(g_wait(&g.n_in_write, 1), 1);
    wind_write(cg, fd, &iov);
    wind_write(cg, fd, &iov);
    wait_iot_busy(sg, 3);

    /* The brick hangs: the client gives up, all three fail. */
    vl_loop_stop(e.sloop);
    assert_int_equal(g_wait(&g.n_notconn, 3), 3);
    assert_int_equal(g.n_answers, 3);

    /* It thaws and sees the closed connection: the queued ones go. */
    assert_int_equal(vl_loop_start(e.sloop), 0);
    assert_int_equal(g_wait(&g.n_disconnects, 1), 1);
    g_gate(true);
    wait_iot_busy(sg, 0);
    pthread_mutex_lock(&g.sig.lock);
    assert_int_equal(g.n_writes, 1);
    pthread_mutex_unlock(&g.sig.lock);

    vl_fd_unref(fd);
    vl_inode_unref(inode);
    ph_env_stop(&e);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queued_writes_dropped_on_close),
    };

    ph_init();
    (void)vl_registry_add(&xl_performance_io_threads);
    (void)vl_registry_add(&gate_class);
    (void)vl_registry_add(&up_class);
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
