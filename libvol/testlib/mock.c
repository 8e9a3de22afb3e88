/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mock: the "debug/mock" leaf translator for unit tests, and helpers to
 * build test graphs (see vl-test.h).
 *
 * Intercepts: every fop (records it; answers only with auto-answer).
 * Per req:    struct mock_link in the request's private area (queue link).
 * Threads:    priv->lock guards the queue and counters, so tests may wind
 *             from several threads.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "vl-test.h"

struct mock_conf {
    bool is_auto;        /* auto-answer */
    int64_t auto_status; /* status for auto-answer */
};

/* Queue link stored in VL_REQ_PRIV while the mock holds the request. */
struct mock_link {
    vl_req_t *next; /* next waiting request; priv->lock */
};

struct mock_priv {
    pthread_mutex_t lock;             /* guards every field below */
    vl_req_t *head;                   /* oldest waiting request */
    vl_req_t *tail;                   /* newest waiting request */
    size_t n_pending;                 /* waiting requests */
    size_t n_received;                /* all received */
    size_t n_by_op[VL_FOP_COUNT];     /* received per fop */
};


static void
mock_fop(vl_xlator_t *xl, vl_req_t *req)
{
    const struct mock_conf *conf = VL_CONF(xl, struct mock_conf);
    struct mock_priv *priv = xl->priv;
    struct mock_link *link = VL_REQ_PRIV(req, struct mock_link);

    pthread_mutex_lock(&priv->lock);
    priv->n_received++;
    priv->n_by_op[req->op]++;
    if (conf->is_auto) {
        pthread_mutex_unlock(&priv->lock);
        vl_unwind(req, (int)conf->auto_status);
        return;
    }
    link->next = NULL;
    if (priv->tail != NULL)
        VL_REQ_PRIV(priv->tail, struct mock_link)->next = req;
    else
        priv->head = req;
    priv->tail = req;
    priv->n_pending++;
    pthread_mutex_unlock(&priv->lock);
}


static int
mock_init(vl_xlator_t *xl, vl_err_t *err)
{
    struct mock_priv *priv = vl_calloc(xl, 1, sizeof(*priv), 0);

    if (priv == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    pthread_mutex_init(&priv->lock, NULL);
    xl->priv = priv;
    return 0;
}


static void
mock_fini(vl_xlator_t *xl)
{
    struct mock_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    pthread_mutex_destroy(&priv->lock);
    vl_free(priv);
    xl->priv = NULL;
}


static int
mock_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    /* A leaf that is always reachable: report up as soon as asked. */
    if (ev == VL_EV_PARENT_UP)
        vl_notify_parents(xl, VL_EV_CHILD_UP);
    return 0;
}


static void
mock_dump(vl_xlator_t *xl, FILE *out)
{
    struct mock_priv *priv = xl->priv;

    pthread_mutex_lock(&priv->lock);
    fprintf(out, "pending=%zu\nreceived=%zu\n", priv->n_pending,
            priv->n_received);
    pthread_mutex_unlock(&priv->lock);
}


size_t
vl_mock_pending(vl_xlator_t *mock)
{
    struct mock_priv *priv = mock->priv;
    size_t n;

    pthread_mutex_lock(&priv->lock);
    n = priv->n_pending;
    pthread_mutex_unlock(&priv->lock);
    return n;
}


size_t
vl_mock_received(vl_xlator_t *mock)
{
    struct mock_priv *priv = mock->priv;
    size_t n;

    pthread_mutex_lock(&priv->lock);
    n = priv->n_received;
    pthread_mutex_unlock(&priv->lock);
    return n;
}


size_t
vl_mock_received_op(vl_xlator_t *mock, vl_fop_t op)
{
    struct mock_priv *priv = mock->priv;
    size_t n;

    if ((unsigned)op >= VL_FOP_COUNT)
        return 0;
    pthread_mutex_lock(&priv->lock);
    n = priv->n_by_op[op];
    pthread_mutex_unlock(&priv->lock);
    return n;
}


vl_req_t *
vl_mock_peek(vl_xlator_t *mock)
{
    struct mock_priv *priv = mock->priv;
    vl_req_t *req;

    pthread_mutex_lock(&priv->lock);
    req = priv->head;
    pthread_mutex_unlock(&priv->lock);
    return req;
}


vl_req_t *
vl_mock_pop(vl_xlator_t *mock)
{
    struct mock_priv *priv = mock->priv;
    vl_req_t *req;

    pthread_mutex_lock(&priv->lock);
    req = priv->head;
    if (req != NULL) {
        priv->head = VL_REQ_PRIV(req, struct mock_link)->next;
        if (priv->head == NULL)
            priv->tail = NULL;
        priv->n_pending--;
        VL_REQ_PRIV(req, struct mock_link)->next = NULL;
    }
    pthread_mutex_unlock(&priv->lock);
    return req;
}


size_t
vl_mock_reply_all(vl_xlator_t *mock, int status)
{
    vl_req_t *req;
    size_t n = 0;

    while ((req = vl_mock_pop(mock)) != NULL) {
        vl_unwind(req, status);
        n++;
    }
    return n;
}


static const char *const mock_mem_types[] = {"misc", NULL};

static const vl_option_t mock_options[] = {
    VL_OPT_BOOL("auto-answer", struct mock_conf, is_auto, .def = "off",
                .flags = VL_OPT_LIVE,
                .doc = "Answer every request at once with auto-status."),
    VL_OPT_INT("auto-status", struct mock_conf, auto_status, .def = "0",
               .min = -4095, .max = 0, .flags = VL_OPT_LIVE,
               .doc = "Status that auto-answer gives (0 or -errno)."),
    VL_OPT_END,
};

const vl_xlator_class_t vl_test_mock_class = {
    .abi = VL_XLATOR_ABI,
    .type = "debug/mock",
    .prefix = "mock",
    .version = {0, 1, 0},
    .flags = VL_XL_LEAF,
    .conf_size = sizeof(struct mock_conf),
    .req_priv_size = sizeof(struct mock_link),
    .options = mock_options,
    .mem_types = mock_mem_types,
    .doc = "Test leaf that records requests for the test to answer.",
    .init = mock_init,
    .fini = mock_fini,
    .notify = mock_notify,
    .dump = mock_dump,
    .fops = {
#define VL_FOP(UPPER, lower, flags) [VL_FOP_##UPPER] = mock_fop,
#include "vol/fops.def"
#undef VL_FOP
    },
};


int
vl_test_register_mock(void)
{
    return vl_registry_add(&vl_test_mock_class);
}


struct vl_test_graph *
vl_test_graph_new(const char *volfile_text, vl_err_t *err)
{
    struct vl_test_graph *g;
    int rc;

    vl_global_init();
    rc = vl_test_register_mock();
    if (rc != 0) {
        vl_err_set(err, "cannot register debug/mock: %s", strerror(-rc));
        return NULL;
    }
    g = vl_calloc(NULL, 1, sizeof(*g), VL_MT_MISC);
    if (g == NULL) {
        vl_err_set(err, "out of memory");
        return NULL;
    }
    g->loop = vl_loop_new(0);
    if (g->loop == NULL) {
        vl_err_set(err, "loop: %s", strerror(errno));
        goto fail;
    }
    g->vf = vl_volfile_parse(volfile_text, strlen(volfile_text), "test.vol",
                             err);
    if (g->vf == NULL)
        goto fail;
    g->graph = vl_graph_build(g->vf, g->loop, err);
    if (g->graph == NULL)
        goto fail;
    if (vl_graph_init(g->graph, err) != 0)
        goto fail;
    vl_graph_activate(g->graph);
    return g;
fail:
    vl_test_graph_free(g);
    return NULL;
}


void
vl_test_graph_free(struct vl_test_graph *g)
{
    size_t i;

    if (g == NULL)
        return;
    if (g->graph != NULL) {
        for (i = 0; i < g->graph->n_xls; i++) {
            vl_xlator_t *xl = g->graph->xls[i];

            if (xl->cls == &vl_test_mock_class && xl->priv != NULL)
                vl_mock_reply_all(xl, -ECANCELED);
        }
        vl_graph_free(g->graph);
    }
    vl_volfile_free(g->vf);
    vl_loop_free(g->loop);
    vl_free(g);
}


vl_xlator_t *
vl_test_graph_xl(struct vl_test_graph *g, const char *name)
{
    return vl_graph_find(g->graph, name);
}


static size_t
vl_test_type_size(vl_opt_type_t type)
{
    switch (type) {
    case VL_OT_BOOL:
        return sizeof(bool);
    case VL_OT_INT:
        return sizeof(int64_t);
    case VL_OT_UINT:
    case VL_OT_SIZE:
    case VL_OT_TIME:
        return sizeof(uint64_t);
    case VL_OT_PERCENT:
    case VL_OT_DOUBLE:
        return sizeof(double);
    case VL_OT_ENUM:
        return sizeof(int);
    default:
        return sizeof(char *);
    }
}


int
vl_test_check_class(const vl_xlator_class_t *cls, vl_err_t *err)
{
    const vl_option_t *opt;
    const char *type = cls != NULL && cls->type != NULL ? cls->type : "?";

    if (cls == NULL || cls->abi != VL_XLATOR_ABI || cls->type == NULL
        || strchr(cls->type, '/') == NULL) {
        vl_err_set(err, "%s: bad abi or type (want CATEGORY/NAME)", type);
        return -EINVAL;
    }
    for (opt = cls->options; opt != NULL && opt->key != NULL; opt++) {
        const char *problem = NULL;
        vl_err_t e = {{0}};

        if (opt->doc == NULL || opt->doc[0] == '\0')
            problem = "has no doc";
        else if (opt->size != vl_test_type_size(opt->type)
                 || opt->offset + opt->size > cls->conf_size)
            problem = "has a field that does not fit its type or the conf";
        else if (opt->type == VL_OT_ENUM
                 && (opt->values == NULL || opt->values[0] == NULL))
            problem = "is an enum without values";
        else if ((opt->flags & VL_OPT_DEPRECATED) && opt->replaced_by == NULL)
            problem = "is deprecated without replaced_by";
        else if (opt->min != VL_OPT_NO_MIN && opt->max != VL_OPT_NO_MAX
                 && opt->min > opt->max)
            problem = "has min > max";
        if (problem != NULL) {
            vl_err_set(err, "%s: option '%s' %s", type, opt->key, problem);
            return -EINVAL;
        }
        if (opt->def != NULL
            && vl_option_validate(cls->options, opt->key, opt->def, &e)
                   != 0) {
            vl_err_set(err, "%s: default of option '%s': %s", type, opt->key,
                       e.msg);
            return -EINVAL;
        }
    }
    return 0;
}


static void
vl_test_done(vl_req_t *req, void *cookie)
{
    struct vl_test_result *res = cookie;

    res->is_done = true;
    res->n_done++;
    res->status = req->status;
    vl_reply_clear(&res->reply);
    res->reply = req->reply;
    memset(&req->reply, 0, sizeof(req->reply));
}


void
vl_test_wind(vl_req_t *req, struct vl_test_result *res)
{
    vl_wind(req, vl_test_done, res);
}


void
vl_test_result_clear(struct vl_test_result *res)
{
    vl_reply_clear(&res->reply);
    memset(res, 0, sizeof(*res));
}
