/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proto-harness: what the protocol tests share (proto-harness.h).
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
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "builtin.h"
#include "proto-harness.h"

/* ---- waiting ---- */

void
ph_signal_init(struct ph_signal *s)
{
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
}


void
ph_signal_set(struct ph_signal *s, int *field, int value)
{
    pthread_mutex_lock(&s->lock);
    *field = value;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}


void
ph_signal_bump(struct ph_signal *s, int *field)
{
    pthread_mutex_lock(&s->lock);
    (*field)++;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}


int
ph_signal_wait(struct ph_signal *s, const int *field, int want)
{
    struct timespec ts;
    int v;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += PH_WAIT_MS / 1000;
    pthread_mutex_lock(&s->lock);
    while (*field < want
           && pthread_cond_timedwait(&s->cond, &s->lock, &ts) == 0)
        ;
    v = *field;
    pthread_mutex_unlock(&s->lock);
    return v;
}

/* ---- graphs ---- */

void
ph_init(void)
{
    vl_global_init();
    vl_log_set_level(VL_LOG_WARNING);
    (void)vl_registry_add(&xl_protocol_client);
    (void)vl_registry_add(&xl_protocol_server);
    (void)vl_registry_add(&ph_ready_class);
}


uint16_t
ph_free_port(void)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    socklen_t sl = sizeof(sin);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
    close(fd);
    return ntohs(sin.sin_port);
}


vl_graph_t *
ph_graph_up(vl_loop_t *loop, const char *text, vl_volfile_t **vf_out)
{
    vl_err_t err = {{0}};
    vl_volfile_t *vf = vl_volfile_parse(text, strlen(text), "test", &err);
    vl_graph_t *g;

    if (vf == NULL)
        fail_msg("volfile: %s", err.msg);
    g = vl_graph_build(vf, loop, &err);
    if (g == NULL)
        fail_msg("build: %s", err.msg);
    if (vl_graph_init(g, &err) != 0)
        fail_msg("init: %s", err.msg);
    vl_graph_activate(g);
    *vf_out = vf;
    return g;
}


void
ph_drain(vl_graph_t *g)
{
    for (int i = 0; i < PH_WAIT_MS && vl_graph_pending(g) > 0; i++)
        usleep(1000);
}


void
ph_graph_down(vl_graph_t **g, vl_volfile_t **vf)
{
    if (*g == NULL)
        return;
    ph_drain(*g);
    vl_graph_free(*g);
    vl_volfile_free(*vf);
    *g = NULL;
    *vf = NULL;
}


static int
ph_ready_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    if (ev == VL_EV_CHILD_UP)
        vl_graph_set_ready(xl->graph, 0, NULL);
    return vl_notify_default(xl, ev, data);
}


struct ph_ready_conf {
    bool dummy; /* no options */
};

static const vl_option_t ph_ready_options[] = {VL_OPT_END};
static const char *const ph_ready_types[] = {"misc", NULL};

const vl_xlator_class_t ph_ready_class = {
    .abi = VL_XLATOR_ABI,
    .type = "ph/ready",
    .prefix = "ready",
    .flags = VL_XL_ONE_CHILD,
    .conf_size = sizeof(struct ph_ready_conf),
    .options = ph_ready_options,
    .mem_types = ph_ready_types,
    .doc = "Says the client graph is ready at CHILD_UP.",
    .notify = ph_ready_notify,
};


void
ph_env_start(struct ph_env *e)
{
    e->sloop = vl_loop_new(2);
    e->cloop = vl_loop_new(2);
    assert_non_null(e->sloop);
    assert_non_null(e->cloop);
    assert_int_equal(vl_loop_start(e->sloop), 0);
    assert_int_equal(vl_loop_start(e->cloop), 0);
    e->port = ph_free_port();
}


void
ph_brick_up(struct ph_env *e, const char *text, const char *subvol,
            const char *allow)
{
    char *all = NULL;

    assert_true(asprintf(&all, "%s"
                         "volume server\n type protocol/server\n"
                         " option transport.socket.listen-port %u\n"
                         " option transport.socket.bind-address 127.0.0.1\n"
                         /* Raw peers connect from unprivileged ports. */
                         " option allow-insecure on\n"
                         " option auth.addr.%s.allow %s\n"
                         " subvolumes %s\nend-volume\n",
                         text, e->port, subvol, allow, subvol) > 0);
    e->sg = ph_graph_up(e->sloop, all, &e->svf);
    free(all);
    assert_int_equal(vl_graph_wait_ready(e->sg, PH_WAIT_MS, NULL, 0), 0);
}


void
ph_client_up(struct ph_env *e, const char *subvol, const char *options,
             const char *top_type)
{
    char *text = NULL;

    assert_true(asprintf(&text, "volume c\n type protocol/client\n"
                         " option remote-host 127.0.0.1\n"
                         " option remote-port %u\n"
                         " option remote-subvolume %s\n"
                         "%s"
                         "end-volume\n"
                         "volume t\n type %s\n subvolumes c\nend-volume\n",
                         e->port, subvol, options, top_type) > 0);
    e->cg = ph_graph_up(e->cloop, text, &e->cvf);
    free(text);
}


void
ph_env_stop(struct ph_env *e)
{
    ph_graph_down(&e->cg, &e->cvf);
    /* The brick's requests end with its client's; none is waited for. */
    if (e->sg != NULL) {
        vl_graph_free(e->sg);
        vl_volfile_free(e->svf);
        e->sg = NULL;
        e->svf = NULL;
    }
    vl_loop_stop(e->sloop);
    vl_loop_stop(e->cloop);
    vl_loop_free(e->sloop);
    vl_loop_free(e->cloop);
    e->sloop = e->cloop = NULL;
}

void
ph_rmtree(const char *dir)
{
    char *cmd = NULL;

    if (asprintf(&cmd, "rm -rf '%s'", dir) < 0 || system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    free(cmd);
}

/* ---- a raw peer ---- */

static void
ph_raw_connected(vrpc_clnt_t *c, int status, void *arg)
{
    struct ph_raw *r = arg;

    (void)c;
    ph_signal_set(&r->sig, &r->connected, status == 0 ? 1 : status);
}


/* Call k's answer (cookie: its slot); every answer starts with int
 * status. */
static void
ph_raw_reply(void *cookie, int status, vl_buf_t *rec, size_t off,
             size_t len)
{
    const struct ph_raw_slot *slot = cookie;
    struct ph_raw *r = slot->raw;
    uint32_t be;

    pthread_mutex_lock(&r->sig.lock);
    if (status != 0) {
        r->status[slot->k] = status;
    } else if (len - off >= 4) {
        memcpy(&be, rec->data + off, 4);
        r->status[slot->k] = (int)ntohl(be);
    } else {
        r->status[slot->k] = -EBADMSG;
    }
    r->n_done++;
    pthread_cond_broadcast(&r->sig.cond);
    pthread_mutex_unlock(&r->sig.lock);
}


/* Calls past the array all report into its last slot. */
static void *
ph_raw_cookie(struct ph_raw *r, int k)
{
    return &r->slots[k >= 0 && k < PH_RAW_CALLS ? k : PH_RAW_CALLS - 1];
}


void
ph_raw_connect(struct ph_raw *r, const struct ph_env *e)
{
    vl_err_t err;
    int fd = -1;

    memset(r, 0, sizeof(*r));
    ph_signal_init(&r->sig);
    for (int k = 0; k < PH_RAW_CALLS; k++) {
        r->slots[k].raw = r;
        r->slots[k].k = k;
    }
    assert_int_equal(vrpc_connect_start("127.0.0.1", e->port, &fd, &err), 0);
    assert_int_equal(vrpc_clnt_new(e->cloop, fd, true, ph_raw_connected,
                                   NULL, r, &r->clnt),
                     0);
    assert_int_equal(vrpc_clnt_start(r->clnt), 0);
    assert_int_equal(ph_signal_wait(&r->sig, &r->connected, 1), 1);
}


void
ph_raw_open(struct ph_raw *r, const struct ph_env *e, const char *subvol,
            unsigned proto)
{
    mrt_setvolume_args sv = {.subvolume = (char *)subvol,
                             .identity = "raw", .proto_version = proto};

    ph_raw_connect(r, e);
    assert_int_equal(vrpc_clnt_call(r->clnt, MRT_HANDSHAKE_PROG, MRT_VERSION,
                                    MRT_HS_SETVOLUME, NULL,
                                    (xdrproc_t)xdr_mrt_setvolume_args, &sv,
                                    NULL, 0, ph_raw_reply,
                                    ph_raw_cookie(r, 0)),
                     0);
    assert_int_equal(ph_signal_wait(&r->sig, &r->n_done, 1), 1);
    assert_int_equal(r->status[0], 0);
}


void
ph_raw_send(struct ph_raw *r, uint32_t proc, xdrproc_t fn, void *args,
            const struct iovec *iov, int n_iov, int k)
{
    assert_int_equal(vrpc_clnt_call(r->clnt, MRT_FOPS_PROG, MRT_VERSION,
                                    proc, NULL, fn, args, iov, n_iov,
                                    ph_raw_reply, ph_raw_cookie(r, k)),
                     0);
}


void
ph_raw_call(struct ph_raw *r, uint32_t proc, xdrproc_t fn, void *args,
            int k)
{
    ph_raw_send(r, proc, fn, args, NULL, 0, k);
    assert_int_equal(ph_signal_wait(&r->sig, &r->n_done, k + 1), k + 1);
}


void
ph_raw_close(struct ph_raw *r)
{
    vrpc_clnt_close(r->clnt);
    vrpc_clnt_unref(r->clnt);
    r->clnt = NULL;
}

/* ---- one object's counters, in memory ---- */

/* The slot of name, a new one if create; -1 if none. */
static int
ph_xattrs_slot(struct ph_xattrs *x, const char *name, bool create)
{
    for (int i = 0; i < PH_XATTRS_KEYS; i++)
        if (strcmp(x->names[i], name) == 0)
            return i;
    for (int i = 0; create && i < PH_XATTRS_KEYS; i++) {
        if (x->names[i][0] == '\0') {
            snprintf(x->names[i], sizeof(x->names[i]), "%s", name);
            x->lens[i] = 0;
            return i;
        }
    }
    return -1;
}


int
ph_xattrs_apply(struct ph_xattrs *x, const struct vl_xattrop_args *a,
                struct vl_reply *rp, bool is_short)
{
    uint32_t total = 0, at = 0;

    for (uint32_t i = 0; i < a->n; i++) {
        if (strncmp(a->names[i], VL_XATTROP_PREFIX,
                    strlen(VL_XATTROP_PREFIX)) != 0)
            return -EPERM;
        if (a->sizes[i] > sizeof(x->vals[0]))
            return -E2BIG;
        total += a->sizes[i];
    }
    rp->xattr = vl_calloc(NULL, 1, total + 1, VL_MT_REPLY);
    if (rp->xattr == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < a->n; i++) {
        int s = ph_xattrs_slot(x, a->names[i], true);
        const unsigned char *v = a->values[i];

        if (s < 0)
            return -ENOSPC;
        for (uint32_t k = 0; k + 4 <= a->sizes[i]; k += 4) {
            uint32_t cur = 0, add;

            if (k < x->lens[s])
                memcpy(&cur, x->vals[s] + k, 4);
            memcpy(&add, v + k, 4);
            cur = htonl(ntohl(cur) + ntohl(add));
            memcpy(x->vals[s] + k, &cur, 4);
        }
        if (a->sizes[i] > x->lens[s])
            x->lens[s] = a->sizes[i];
        memcpy(rp->xattr + at, x->vals[s], a->sizes[i]);
        at += a->sizes[i];
    }
    rp->xattr_len = is_short && total > 0 ? total - 1 : total;
    return 0;
}
