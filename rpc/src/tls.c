/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tls: building and reloading the SSL_CTX of one role (see tls.h); the
 * per-connection handshake, reads and writes are in conn-tls.c.
 *
 * Why no host name check: a brick is reached at the address in the
 * volfile and a client at whatever address it comes from, so a name in
 * the certificate says nothing about the socket; the CA signature says
 * the peer belongs to the pool and auth.ssl-allow says which members may
 * use a brick.
 * Threads: t->lock guards ctx and the mtimes; SSL_CTX is refcounted by
 * OpenSSL, so a connection made just before a reload keeps the old one.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "tls.h"

struct vrpc_tls {
    bool is_server;            /* role: verify-and-require vs verify */
    char *paths[3];            /* owned: cert, key, CA */
    char *cipher_list;         /* owned, or NULL */
    bool check_host;           /* conf's check_host (clients) */
    pthread_mutex_t lock;      /* guards the fields below */
    SSL_CTX *ctx;              /* owned ref; for new connections */
    struct timespec mtimes[3]; /* of paths when ctx was built */
    unsigned reload_gen;       /* tls_reload_gen seen when ctx was built */
};

static const char *const tls_path_keys[3] = {"ssl.own-cert",
                                             "ssl.private-key", "ssl.ca-list"};

/* Bumped by vrpc_tls_reload_all (a signal handler): every context is
 * rebuilt at its next connection. */
static atomic_uint tls_reload_gen;


void
vrpc_tls_err_string(char *buf, size_t len)
{
    unsigned long e;
    size_t used = 0;

    if (len == 0)
        return;
    buf[0] = '\0';
    while ((e = ERR_get_error()) != 0) {
        const char *r = ERR_reason_error_string(e);
        char tmp[256];

        if (r == NULL) {
            ERR_error_string_n(e, tmp, sizeof(tmp));
            r = tmp;
        }
        /* The same reason twice (a library re-raising it) says nothing. */
        if (strstr(buf, r) != NULL)
            continue;
        used += (size_t)snprintf(buf + used, used < len ? len - used : 0,
                                 "%s%s", used > 0 ? "; " : "", r);
        if (used >= len)
            break;
    }
    if (buf[0] == '\0')
        snprintf(buf, len, "unknown error");
}


/* The mtimes of the three files; a file that cannot be stat'ed reads as
 * zero (the load that follows names the error). */
static void
tls_stat_all(const vrpc_tls_t *t, struct timespec out[3])
{
    for (int i = 0; i < 3; i++) {
        struct stat st;

        if (stat(t->paths[i], &st) == 0)
            out[i] = st.st_mtim;
        else
            out[i] = (struct timespec){0};
    }
}


/* Builds a context from t's files: NULL with err naming the option, the
 * path and the reason. */
static SSL_CTX *
tls_ctx_build(const vrpc_tls_t *t, vl_err_t *err)
{
    SSL_CTX *ctx;
    char why[512];
    int mode;

    ERR_clear_error();
    ctx = SSL_CTX_new(t->is_server ? TLS_server_method()
                                   : TLS_client_method());
    if (ctx == NULL) {
        vrpc_tls_err_string(why, sizeof(why));
        vl_err_set(err, "cannot create a TLS context: %s", why);
        return NULL;
    }
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1)
        goto ssl_fail;
    /* Session resumption would skip the client certificate check on
     * later connections; nothing needs the saved round trip. */
    if (t->is_server && SSL_CTX_set_num_tickets(ctx, 0) != 1)
        goto ssl_fail;
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    /* Partial writes let the sender keep one record's bytes and retry
     * them; the retry comes from the same buffer. */
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE
                              | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (t->cipher_list != NULL
        && SSL_CTX_set_ciphersuites(ctx, t->cipher_list) != 1) {
        vrpc_tls_err_string(why, sizeof(why));
        vl_err_set(err, "ssl.cipher-list '%s': %s", t->cipher_list, why);
        goto fail;
    }
    for (int i = 0; i < 3; i++) {
        FILE *f = fopen(t->paths[i], "r");

        if (f == NULL) {
            vl_err_set(err, "%s %s: %s", tls_path_keys[i], t->paths[i],
                       strerror(errno));
            goto fail;
        }
        fclose(f);
    }
    if (SSL_CTX_use_certificate_chain_file(ctx, t->paths[0]) != 1) {
        vrpc_tls_err_string(why, sizeof(why));
        vl_err_set(err, "%s %s: %s", tls_path_keys[0], t->paths[0], why);
        goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, t->paths[1], SSL_FILETYPE_PEM) != 1
        || SSL_CTX_check_private_key(ctx) != 1) {
        vrpc_tls_err_string(why, sizeof(why));
        vl_err_set(err, "%s %s: %s", tls_path_keys[1], t->paths[1], why);
        goto fail;
    }
    if (SSL_CTX_load_verify_locations(ctx, t->paths[2], NULL) != 1) {
        vrpc_tls_err_string(why, sizeof(why));
        vl_err_set(err, "%s %s: %s", tls_path_keys[2], t->paths[2], why);
        goto fail;
    }
    if (t->is_server) {
        STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(t->paths[2]);

        /* The CA names tell the client which certificate to send. */
        if (names != NULL)
            SSL_CTX_set_client_CA_list(ctx, names);
    }
    mode = SSL_VERIFY_PEER;
    if (t->is_server)
        mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    SSL_CTX_set_verify(ctx, mode, NULL);
    return ctx;
ssl_fail:
    vrpc_tls_err_string(why, sizeof(why));
    vl_err_set(err, "cannot set up TLS 1.3: %s", why);
fail:
    SSL_CTX_free(ctx);
    return NULL;
}


int
vrpc_tls_new(const struct vrpc_tls_conf *conf, bool is_server,
             vrpc_tls_t **out, vl_err_t *err)
{
    vrpc_tls_t *t;
    int rc = -ENOMEM;

    t = vl_calloc(NULL, 1, sizeof(*t), VL_MT_MISC);
    if (t == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    t->is_server = is_server;
    t->check_host = conf->check_host;
    t->paths[0] = strdup(conf->own_cert != NULL ? conf->own_cert
                                                : VRPC_TLS_DEF_CERT);
    t->paths[1] = strdup(conf->private_key != NULL ? conf->private_key
                                                   : VRPC_TLS_DEF_KEY);
    t->paths[2] = strdup(conf->ca_list != NULL ? conf->ca_list
                                               : VRPC_TLS_DEF_CA);
    if (conf->cipher_list != NULL && conf->cipher_list[0] != '\0')
        t->cipher_list = strdup(conf->cipher_list);
    if (t->paths[0] == NULL || t->paths[1] == NULL || t->paths[2] == NULL
        || (conf->cipher_list != NULL && conf->cipher_list[0] != '\0'
            && t->cipher_list == NULL)) {
        vl_err_set(err, "out of memory");
        goto fail;
    }
    rc = pthread_mutex_init(&t->lock, NULL);
    if (rc != 0) {
        vl_err_set(err, "mutex: %s", strerror(rc));
        rc = -rc;
        goto fail;
    }
    t->reload_gen = atomic_load(&tls_reload_gen);
    tls_stat_all(t, t->mtimes);
    t->ctx = tls_ctx_build(t, err);
    if (t->ctx == NULL) {
        pthread_mutex_destroy(&t->lock);
        rc = -EINVAL;
        goto fail;
    }
    *out = t;
    return 0;
fail:
    for (int i = 0; i < 3; i++)
        free(t->paths[i]);
    free(t->cipher_list);
    vl_free(t);
    return rc;
}


void
vrpc_tls_free(vrpc_tls_t *t)
{
    if (t == NULL)
        return;
    SSL_CTX_free(t->ctx);
    pthread_mutex_destroy(&t->lock);
    for (int i = 0; i < 3; i++)
        free(t->paths[i]);
    free(t->cipher_list);
    vl_free(t);
}


bool
vrpc_tls_is_server(const vrpc_tls_t *t)
{
    return t->is_server;
}


void
vrpc_tls_reload_all(void)
{
    atomic_fetch_add(&tls_reload_gen, 1);
}


/* Rebuilds the context if a file changed or a reload was asked for.
 * Under t->lock. A file being rewritten may fail to load: the old
 * context stays, and the mtimes are taken so that the failure is logged
 * once, not at every connection; the next change tries again. */
static void
tls_maybe_reload_locked(vrpc_tls_t *t)
{
    struct timespec now[3];
    unsigned gen = atomic_load(&tls_reload_gen);
    vl_err_t err = {{0}};
    SSL_CTX *ctx;

    tls_stat_all(t, now);
    if (gen == t->reload_gen && memcmp(now, t->mtimes, sizeof(now)) == 0)
        return;
    memcpy(t->mtimes, now, sizeof(now));
    t->reload_gen = gen;
    ctx = tls_ctx_build(t, &err);
    if (ctx == NULL) {
        vl_glog("rpc", VL_LOG_ERROR,
                "TLS certificates not reloaded, keeping the old ones: %s",
                err.msg);
        return;
    }
    SSL_CTX_free(t->ctx);
    t->ctx = ctx;
    vl_glog("rpc", VL_LOG_INFO, "TLS certificates reloaded from %s",
            t->paths[0]);
}


/* The server's certificate must name host: an address literal is
 * matched against its iPAddress entries, a name against its dNSName
 * entries (or, with none, its common name), wildcards only as a whole
 * leftmost label. */
static int
tls_expect_host(SSL *ssl, const char *host, vl_err_t *err)
{
    X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
    unsigned char addr[sizeof(struct in6_addr)];
    char why[256];
    bool is_ip = inet_pton(AF_INET, host, addr) == 1
                 || inet_pton(AF_INET6, host, addr) == 1;
    int ok;

    ERR_clear_error();
    if (is_ip) {
        ok = X509_VERIFY_PARAM_set1_ip_asc(param, host);
    } else {
        X509_VERIFY_PARAM_set_hostflags(
            param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        ok = SSL_set1_host(ssl, host)
             && SSL_set_tlsext_host_name(ssl, host);
    }
    if (ok != 1) {
        vrpc_tls_err_string(why, sizeof(why));
        vl_err_set(err, "cannot check the certificate's host name '%s': %s",
                   host, why);
        return -EINVAL;
    }
    return 0;
}


SSL *
vrpc_tls_ssl_new(vrpc_tls_t *t, const char *host, vl_err_t *err)
{
    char why[256];
    SSL *ssl;

    pthread_mutex_lock(&t->lock);
    tls_maybe_reload_locked(t);
    ERR_clear_error();
    ssl = SSL_new(t->ctx); /* takes its own ref on ctx */
    pthread_mutex_unlock(&t->lock);
    if (ssl == NULL) {
        vrpc_tls_err_string(why, sizeof(why));
        vl_err_set(err, "cannot create a TLS session: %s", why);
        return NULL;
    }
    if (!t->is_server && t->check_host && host != NULL && host[0] != '\0'
        && tls_expect_host(ssl, host, err) != 0) {
        SSL_free(ssl);
        return NULL;
    }
    return ssl;
}


/* OpenSSL's socket BIO writes with write(2), which raises SIGPIPE when
 * the peer has gone; a library must not kill a process that did not
 * ignore it (the CLI). This one is the socket BIO with send(2) and
 * MSG_NOSIGNAL, like conn-out.c's sendmsg. */
static BIO_METHOD *tls_bio_method;
static pthread_once_t tls_bio_once = PTHREAD_ONCE_INIT;


static int
tls_bio_write(BIO *b, const char *buf, int len)
{
    int fd = (int)BIO_get_fd(b, NULL);
    ssize_t n;

    BIO_clear_retry_flags(b);
    do {
        n = send(fd, buf, (size_t)len, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        BIO_set_retry_write(b);
    return (int)n;
}


static void
tls_bio_init(void)
{
    const BIO_METHOD *sock = BIO_s_socket();
    BIO_METHOD *m = BIO_meth_new(BIO_TYPE_SOCKET, "vrpc socket");

    if (m == NULL)
        return;
    if (BIO_meth_set_write(m, tls_bio_write) != 1
        || BIO_meth_set_read(m, BIO_meth_get_read(sock)) != 1
        || BIO_meth_set_puts(m, BIO_meth_get_puts(sock)) != 1
        || BIO_meth_set_ctrl(m, BIO_meth_get_ctrl(sock)) != 1
        || BIO_meth_set_create(m, BIO_meth_get_create(sock)) != 1
        || BIO_meth_set_destroy(m, BIO_meth_get_destroy(sock)) != 1) {
        BIO_meth_free(m);
        return;
    }
    tls_bio_method = m; /* for the life of the process */
}


int
vrpc_tls_attach_fd(SSL *ssl, int fd)
{
    BIO *b;

    pthread_once(&tls_bio_once, tls_bio_init);
    if (tls_bio_method == NULL)
        return -ENOMEM;
    b = BIO_new(tls_bio_method);
    if (b == NULL)
        return -ENOMEM;
    BIO_set_fd(b, fd, BIO_NOCLOSE);
    SSL_set_bio(ssl, b, b); /* ssl owns b */
    return 0;
}


bool
vrpc_tls_peer_cn(SSL *ssl, char *buf, size_t len)
{
    X509 *cert = SSL_get1_peer_certificate(ssl);
    int n;

    if (cert == NULL)
        return false;
    n = X509_NAME_get_text_by_NID(X509_get_subject_name(cert),
                                  NID_commonName, buf, (int)len);
    X509_free(cert);
    if (n < 0) {
        buf[0] = '\0';
        return false;
    }
    return true;
}


bool
vrpc_tls_cn_allowed(const char *list, const char *cn)
{
    const char *p = list;

    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, ',');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        char pat[VRPC_TLS_CN_MAX];

        while (n > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            n--;
        }
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (n > 0 && n < sizeof(pat)) {
            memcpy(pat, p, n);
            pat[n] = '\0';
            if (fnmatch(pat, cn, 0) == 0)
                return true;
        }
        p = end != NULL ? end + 1 : NULL;
    }
    return false;
}
