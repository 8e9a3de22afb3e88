/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fetch: volfiles from mortard (see fetch.h).
 *
 * Per process: at most one watcher (struct fsd_watch), owned by main.
 * Threads: fsd_fetch_spec runs in main before any thread exists; the
 * watcher thread runs fsd_watch_run with blocking calls and w->lock
 * guarding the hand-over slot, the current socket and the stop flag.
 * Stopping shuts the current socket down, which wakes a pending call.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fetch.h"
#include "mgmt-clnt.h"
#include "mgmt.h"

#define FSD_DOMAIN "mortarfsd"
#define FETCH_CONNECT_MS 5000
#define FETCH_CALL_MS 10000
/* mortard answers a watch within 30 s; allow for a slow reply. */
#define WATCH_CALL_MS 45000
#define WATCH_BACKOFF_MIN_MS 500
#define WATCH_BACKOFF_MAX_MS 10000

struct fsd_watch {
    pthread_t thread;        /* the watcher */
    pthread_mutex_t lock;    /* guards the fields below it */
    pthread_cond_t cond;     /* signalled on stop (wakes a backoff) */
    bool is_stopping;        /* fsd_watch_stop was called */
    int fd;                  /* current socket or -1; closed by thread */
    struct fsd_spec pending; /* owned; newest unapplied volfile, text NULL
                              * if none */
    /* Owned by the thread only: */
    struct fsd_vfsrc src;    /* borrowed strings (the command line) */
    uint64_t version;        /* last version seen */
    size_t cur;              /* index of the server in use */
    pthread_t notify;        /* thread to SIGUSR2 (main) */
};


void
fsd_spec_clear(struct fsd_spec *spec)
{
    free(spec->text);
    free(spec->server);
    memset(spec, 0, sizeof(*spec));
}


/* One GETSPEC (or WATCH with is_watch) on a connected socket. */
static int
fetch_call(struct vrpc_stream *s, const char *volume, bool is_watch, uint64_t version,
           int timeout_ms, mgmt_getspec_rsp *rsp, vl_err_t *err)
{
    mgmt_getspec_req greq = {.volume = (char *)volume};
    mgmt_watch_req wreq = {.volume = (char *)volume, .spec_version = version};

    memset(rsp, 0, sizeof(*rsp));
    if (is_watch)
        return mgc_call(s, MGMT_PROG, MGMT_VERSION, MGMT_PROC_WATCH,
                        (xdrproc_t)xdr_mgmt_watch_req, &wreq,
                        (xdrproc_t)xdr_mgmt_getspec_rsp, rsp, timeout_ms,
                        err);
    return mgc_call(s, MGMT_PROG, MGMT_VERSION, MGMT_PROC_GETSPEC,
                    (xdrproc_t)xdr_mgmt_getspec_req, &greq,
                    (xdrproc_t)xdr_mgmt_getspec_rsp, rsp, timeout_ms, err);
}


/* Fills spec from an answer; -errno with err if it is a refusal. */
static int
fetch_take_rsp(mgmt_getspec_rsp *rsp, const char *server,
               struct fsd_spec *spec, vl_err_t *err)
{
    if (rsp->ret != 0) {
        int rc = rsp->op_errno > 0 ? -rsp->op_errno : -EIO;

        vl_err_set(err, "%s", rsp->errstr != NULL && rsp->errstr[0] != '\0'
                                  ? rsp->errstr : strerror(-rc));
        return rc;
    }
    if (rsp->spec == NULL || rsp->spec[0] == '\0') {
        vl_err_set(err, "empty volfile");
        return -EPROTO;
    }
    memset(spec, 0, sizeof(*spec));
    spec->text = strdup(rsp->spec);
    spec->server = strdup(server);
    if (spec->text == NULL || spec->server == NULL) {
        fsd_spec_clear(spec);
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    spec->len = strlen(spec->text);
    spec->version = rsp->spec_version;
    return 0;
}


static int
fetch_connect(const struct fsd_vfsrc *src, size_t i, struct vrpc_stream *s,
              char *where,
              size_t where_len, vl_err_t *err)
{
    struct mgc_addr addr;
    int rc;

    rc = mgc_addr_parse(src->servers[i], src->port, &addr, err);
    if (rc != 0)
        return rc;
    mgc_addr_str(&addr, where, where_len);
    rc = mgc_connect(&addr, src->tls, FETCH_CONNECT_MS, s, err);
    mgc_addr_clear(&addr);
    return rc;
}


int
fsd_fetch_spec(const struct fsd_vfsrc *src, struct fsd_spec *out,
               vl_err_t *err)
{
    char why[sizeof(err->msg)] = "";
    size_t used = 0;
    int rc = -EHOSTUNREACH;

    for (size_t i = 0; i < src->n_servers; i++) {
        vl_err_t one = {.msg = ""};
        mgmt_getspec_rsp rsp;
        char where[300] = "";
        struct vrpc_stream s = {.fd = -1};

        snprintf(where, sizeof(where), "%s", src->servers[i]);
        rc = fetch_connect(src, i, &s, where, sizeof(where), &one);
        if (rc == 0) {
            rc = fetch_call(&s, src->volume, false, 0, FETCH_CALL_MS, &rsp,
                            &one);
            vrpc_stream_close(&s);
            if (rc == 0) {
                rc = fetch_take_rsp(&rsp, where, out, &one);
                xdr_free((xdrproc_t)xdr_mgmt_getspec_rsp, (char *)&rsp);
            }
            if (rc == 0) {
                out->server_index = i;
                return 0;
            }
            /* Connect errors already name the server. */
            used += (size_t)snprintf(why + used, sizeof(why) - used,
                                     "%s%s: %s", used > 0 ? "; " : "",
                                     where, one.msg);
        } else {
            used += (size_t)snprintf(why + used, sizeof(why) - used, "%s%s",
                                     used > 0 ? "; " : "", one.msg);
        }
        if (used >= sizeof(why))
            used = sizeof(why) - 1;
    }
    vl_err_set(err, "volfile of '%s' not available: %s", src->volume, why);
    return rc;
}


/* Sleeps ms unless stopped; true if stopping. */
static bool
watch_sleep(struct fsd_watch *w, unsigned ms)
{
    struct timespec ts;
    bool is_stopping;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&w->lock);
    while (!w->is_stopping &&
           pthread_cond_timedwait(&w->cond, &w->lock, &ts) == 0)
        ;
    is_stopping = w->is_stopping;
    pthread_mutex_unlock(&w->lock);
    return is_stopping;
}


/* Publishes the socket so stop can shut it down; false if stopping. */
static bool
watch_set_fd(struct fsd_watch *w, int fd)
{
    bool is_stopping;

    pthread_mutex_lock(&w->lock);
    is_stopping = w->is_stopping;
    w->fd = is_stopping ? -1 : fd;
    pthread_mutex_unlock(&w->lock);
    return !is_stopping;
}


static void
watch_publish(struct fsd_watch *w, struct fsd_spec *spec)
{
    pthread_mutex_lock(&w->lock);
    fsd_spec_clear(&w->pending);
    w->pending = *spec;
    memset(spec, 0, sizeof(*spec));
    pthread_mutex_unlock(&w->lock);
    pthread_kill(w->notify, SIGUSR2);
}


/* Keeps WATCH calls going on one connection until it fails. Returns
 * true if at least one call was answered (the server is healthy). */
static bool
watch_serve(struct fsd_watch *w, struct vrpc_stream *s, const char *where)
{
    bool is_answered = false;
    mgmt_getspec_rsp rsp;
    struct fsd_spec spec;
    int rc;

    for (;;) {
        vl_err_t err = {.msg = ""};

        rc = fetch_call(s, w->src.volume, true, w->version, WATCH_CALL_MS,
                        &rsp, &err);
        if (rc != 0) {
            if (!watch_sleep(w, 0))
                vl_glog(FSD_DOMAIN, VL_LOG_WARNING, "volfile server %s: "
                        "%s; reconnecting", where, err.msg);
            return is_answered;
        }
        is_answered = true;
        rc = 0;
        if (rsp.ret == 0 && rsp.spec_version != w->version)
            rc = fetch_take_rsp(&rsp, where, &spec, &err);
        else if (rsp.ret != 0)
            rc = fetch_take_rsp(&rsp, where, &spec, &err);
        else
            rc = 1; /* unchanged after the server's wait */
        xdr_free((xdrproc_t)xdr_mgmt_getspec_rsp, (char *)&rsp);
        if (rc == 0) {
            vl_glog(FSD_DOMAIN, VL_LOG_INFO, "volfile server %s: volume "
                    "'%s' changed to version %llu", where, w->src.volume,
                    (unsigned long long)spec.version);
            w->version = spec.version;
            watch_publish(w, &spec);
        } else if (rc < 0) {
            vl_glog(FSD_DOMAIN, VL_LOG_WARNING, "volfile server %s: %s",
                    where, err.msg);
            if (watch_sleep(w, WATCH_BACKOFF_MAX_MS))
                return is_answered;
        }
    }
}


static void *
fsd_watch_run(void *arg)
{
    struct fsd_watch *w = arg;
    unsigned backoff = WATCH_BACKOFF_MIN_MS;
    size_t n_failed = 0;

    for (;;) {
        vl_err_t err = {.msg = ""};
        char where[300];
        struct vrpc_stream s = {.fd = -1};
        int rc;

        snprintf(where, sizeof(where), "%s", w->src.servers[w->cur]);
        rc = fetch_connect(&w->src, w->cur, &s, where, sizeof(where),
                           &err);
        if (rc == 0) {
            if (!watch_set_fd(w, s.fd)) {
                vrpc_stream_close(&s);
                break;
            }
            if (n_failed > 0)
                vl_glog(FSD_DOMAIN, VL_LOG_INFO, "connected to volfile "
                        "server %s", where);
            n_failed = 0;
            if (watch_serve(w, &s, where))
                backoff = WATCH_BACKOFF_MIN_MS;
            watch_set_fd(w, -1);
            vrpc_stream_close(&s);
        } else {
            if (n_failed == 0)
                vl_glog(FSD_DOMAIN, VL_LOG_WARNING, "volfile server: %s",
                        err.msg);
            n_failed++;
            /* Next server; wait once every server has been tried. */
            w->cur = (w->cur + 1) % w->src.n_servers;
            if (n_failed % w->src.n_servers != 0)
                continue;
        }
        if (watch_sleep(w, backoff))
            break;
        backoff = backoff * 2 > WATCH_BACKOFF_MAX_MS ? WATCH_BACKOFF_MAX_MS
                                                     : backoff * 2;
    }
    return NULL;
}


int
fsd_watch_start(const struct fsd_vfsrc *src, uint64_t version, size_t first,
                pthread_t notify, fsd_watch_t **out)
{
    struct fsd_watch *w = calloc(1, sizeof(*w));
    pthread_condattr_t ca;
    int rc;

    if (w == NULL)
        return -ENOMEM;
    w->src = *src;
    w->version = version;
    w->cur = first < src->n_servers ? first : 0;
    w->notify = notify;
    w->fd = -1;
    pthread_mutex_init(&w->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cond, &ca);
    pthread_condattr_destroy(&ca);
    rc = -pthread_create(&w->thread, NULL, fsd_watch_run, w);
    if (rc != 0) {
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return rc;
    }
    *out = w;
    return 0;
}


bool
fsd_watch_take(fsd_watch_t *w, struct fsd_spec *out)
{
    bool has_spec;

    pthread_mutex_lock(&w->lock);
    has_spec = w->pending.text != NULL;
    *out = w->pending;
    memset(&w->pending, 0, sizeof(w->pending));
    pthread_mutex_unlock(&w->lock);
    return has_spec;
}


void
fsd_watch_stop(fsd_watch_t *w)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    w->is_stopping = true;
    if (w->fd >= 0)
        shutdown(w->fd, SHUT_RDWR);
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    fsd_spec_clear(&w->pending);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    free(w);
}
