/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-tls: TLS on a vrpc connection pair (a socketpair on a two-thread
 * loop). The certificates are made here with the OpenSSL API in a
 * temporary directory: a CA, a server and a client certificate it
 * signed, an expired client certificate it signed, and a second CA with
 * a client certificate of its own. Checked: the handshake completes and
 * a 4 MiB record and a small reply cross byte-exact, each side seeing
 * the other's common name; a client from the wrong CA, an expired one
 * and a clear-text client are refused with the reason logged and kept
 * on the server (vrpc_conn_tls_error), and nothing is delivered; a
 * replaced certificate file is used by the next connection, a broken
 * one is not (the old context stays); missing files are named in the
 * error; auth.ssl-allow's matching. The blocking client stream
 * (stream.c, the management clients'): a call and its answer cross TLS
 * to a vrpc server; a client certificate of another CA shows as the
 * server's alert after the handshake; TLS against a clear server and
 * clear text against a TLS server each fail with their reason; a
 * handshake nobody answers ends at its deadline.
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
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "tls.h"
#include "vrpc.h"

#define T_WAIT_MS 20000
#define T_BIG (4 * 1024 * 1024)

/* One end of a connection pair. */
struct t_end {
    vrpc_conn_t *c;       /* owned ref */
    int n_connect;        /* on_connect calls */
    int connect_status;   /* the last one's status */
    int n_close;          /* on_close calls */
    int n_records;        /* on_record calls */
    size_t last_len;      /* the last record's length */
    bool is_last_ok;      /* its bytes were the pattern */
    bool is_echo;         /* answer each record with a 10-byte one */
};

static pthread_mutex_t t_lock = PTHREAD_MUTEX_INITIALIZER; /* t_end's */
static vl_loop_t *t_loop;
static char t_dir[64];
static const char *t_san; /* t_make: subjectAltName of the next one */
static int t_serial = 1;


static char
t_pat(size_t i)
{
    return (char)((i * 13) ^ (i >> 9));
}


static void
t_on_connect(vrpc_conn_t *c, int status, void *arg)
{
    struct t_end *e = arg;

    (void)c;
    pthread_mutex_lock(&t_lock);
    e->n_connect++;
    e->connect_status = status;
    pthread_mutex_unlock(&t_lock);
}


static void
t_on_record(vrpc_conn_t *c, vl_buf_t *rec, size_t len, void *arg)
{
    struct t_end *e = arg;
    bool ok = true;

    for (size_t i = 0; i < len && ok; i++)
        ok = rec->data[i] == t_pat(i);
    pthread_mutex_lock(&t_lock);
    e->n_records++;
    e->last_len = len;
    e->is_last_ok = ok;
    pthread_mutex_unlock(&t_lock);
    if (e->is_echo) {
        char small[10];
        struct iovec v = {small, sizeof(small)};

        for (size_t i = 0; i < sizeof(small); i++)
            small[i] = t_pat(i);
        (void)vrpc_conn_send(c, &v, 1);
    }
}


static void
t_on_close(vrpc_conn_t *c, int reason, void *arg)
{
    struct t_end *e = arg;

    (void)c;
    (void)reason;
    pthread_mutex_lock(&t_lock);
    e->n_close++;
    pthread_mutex_unlock(&t_lock);
}


static const struct vrpc_conn_ops t_ops = {
    .on_connect = t_on_connect,
    .on_record = t_on_record,
    .on_close = t_on_close,
};


/* Waits until *field reaches want (under t_lock); false on timeout. */
static bool
t_wait(const int *field, int want)
{
    for (int ms = 0; ms < T_WAIT_MS; ms += 5) {
        bool ok;

        pthread_mutex_lock(&t_lock);
        ok = *field >= want;
        pthread_mutex_unlock(&t_lock);
        if (ok)
            return true;
        usleep(5000);
    }
    return false;
}


/* ---- certificates ---- */

static void
t_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", t_dir, name);
}


static void
t_add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509_EXTENSION *ext;

    X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
    ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    assert_non_null(ext);
    assert_int_equal(X509_add_ext(x, ext, -1), 1);
    X509_EXTENSION_free(ext);
}


/* Writes NAME.pem and NAME.key: a P-256 certificate for cn valid from
 * from_s to to_s seconds from now, signed by issuer (NULL: self-signed,
 * a CA). Returns the key and *cert (both the caller's). */
static EVP_PKEY *
t_make(const char *name, const char *cn, X509 *issuer, EVP_PKEY *issuer_key,
       long from_s, long to_s, X509 **cert)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    X509_NAME *n;
    char path[128];
    FILE *f;

    assert_non_null(key);
    assert_non_null(x);
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), t_serial++);
    X509_gmtime_adj(X509_getm_notBefore(x), from_s);
    X509_gmtime_adj(X509_getm_notAfter(x), to_s);
    X509_set_pubkey(x, key);
    n = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
                               (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, issuer != NULL ? X509_get_subject_name(issuer)
                                           : n);
    if (t_san != NULL)
        t_add_ext(x, issuer, NID_subject_alt_name, t_san);
    if (issuer == NULL) {
        t_add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE");
        t_add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign");
    }
    assert_true(X509_sign(x, issuer_key != NULL ? issuer_key : key,
                          EVP_sha256())
                > 0);
    snprintf(path, sizeof(path), "%s/%s.pem", t_dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    PEM_write_X509(f, x);
    fclose(f);
    snprintf(path, sizeof(path), "%s/%s.key", t_dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
    fclose(f);
    *cert = x;
    return key;
}


static int
t_setup_all(void **state)
{
    X509 *ca, *bad_ca, *x;
    EVP_PKEY *ca_key, *bad_key, *k;

    (void)state;
    snprintf(t_dir, sizeof(t_dir), "/tmp/test-tls.XXXXXX");
    if (mkdtemp(t_dir) == NULL)
        return -1;
    ca_key = t_make("ca", "Mortar test CA", NULL, NULL, -60, 86400, &ca);
    k = t_make("srv", "server1", ca, ca_key, -60, 86400, &x);
    EVP_PKEY_free(k);
    X509_free(x);
    k = t_make("srv2", "server2", ca, ca_key, -60, 86400, &x);
    EVP_PKEY_free(k);
    X509_free(x);
    t_san = "DNS:brick1.example,IP:127.0.0.1";
    k = t_make("srvsan", "server-san", ca, ca_key, -60, 86400, &x);
    t_san = NULL;
    EVP_PKEY_free(k);
    X509_free(x);
    k = t_make("cli", "client1", ca, ca_key, -60, 86400, &x);
    EVP_PKEY_free(k);
    X509_free(x);
    k = t_make("old", "client-old", ca, ca_key, -7200, -3600, &x);
    EVP_PKEY_free(k);
    X509_free(x);
    bad_key = t_make("badca", "Another CA", NULL, NULL, -60, 86400, &bad_ca);
    k = t_make("bad", "client-bad", bad_ca, bad_key, -60, 86400, &x);
    EVP_PKEY_free(k);
    X509_free(x);
    EVP_PKEY_free(bad_key);
    X509_free(bad_ca);
    EVP_PKEY_free(ca_key);
    X509_free(ca);
    t_loop = vl_loop_new(2);
    if (t_loop == NULL || vl_loop_start(t_loop) != 0)
        return -1;
    return 0;
}


static int
t_teardown_all(void **state)
{
    char cmd[128];

    (void)state;
    vl_loop_stop(t_loop);
    vl_loop_free(t_loop);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", t_dir);
    return system(cmd) == 0 ? 0 : -1;
}


/* A context for name (NAME.pem/.key) trusting ca (CA.pem). */
static vrpc_tls_t *
t_tls(const char *name, const char *ca, bool is_server)
{
    char cert[128], key[128], cap[128];
    struct vrpc_tls_conf conf;
    vl_err_t err = {{0}};
    vrpc_tls_t *t = NULL;

    snprintf(cert, sizeof(cert), "%s/%s.pem", t_dir, name);
    snprintf(key, sizeof(key), "%s/%s.key", t_dir, name);
    snprintf(cap, sizeof(cap), "%s/%s.pem", t_dir, ca);
    conf = (struct vrpc_tls_conf){cert, key, cap, NULL};
    if (vrpc_tls_new(&conf, is_server, &t, &err) != 0)
        print_error("vrpc_tls_new: %s\n", err.msg);
    assert_non_null(t);
    return t;
}


/* Connects srv and cli over a socketpair; a NULL context leaves that
 * side in clear text. */
static void
t_pair_host(struct t_end *srv, vrpc_tls_t *st, struct t_end *cli,
            vrpc_tls_t *ct, const char *host)
{
    vl_err_t err = {{0}};
    int sv[2];

    memset(srv, 0, sizeof(*srv));
    memset(cli, 0, sizeof(*cli));
    srv->is_echo = true;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(vrpc_conn_new(t_loop, sv[0], false, &t_ops, srv,
                                   &srv->c),
                     0);
    assert_int_equal(vrpc_conn_new(t_loop, sv[1], false, &t_ops, cli,
                                   &cli->c),
                     0);
    if (st != NULL)
        assert_int_equal(vrpc_conn_set_tls(srv->c, st, NULL, &err), 0);
    if (ct != NULL)
        assert_int_equal(vrpc_conn_set_tls(cli->c, ct, host, &err), 0);
    assert_int_equal(vrpc_conn_start(srv->c), 0);
    assert_int_equal(vrpc_conn_start(cli->c), 0);
}


static void
t_pair(struct t_end *srv, vrpc_tls_t *st, struct t_end *cli, vrpc_tls_t *ct)
{
    t_pair_host(srv, st, cli, ct, "127.0.0.1");
}


static void
t_unpair(struct t_end *srv, struct t_end *cli)
{
    vrpc_conn_close(cli->c, -ENOTCONN);
    vrpc_conn_close(srv->c, -ENOTCONN);
    vrpc_conn_unref(cli->c);
    vrpc_conn_unref(srv->c);
}


/* Sends a record of len pattern bytes from e. */
static void
t_send(struct t_end *e, size_t len)
{
    char *buf = malloc(len);
    struct iovec v[2];

    assert_non_null(buf);
    for (size_t i = 0; i < len; i++)
        buf[i] = t_pat(i);
    /* Two segments: the first small (copied into one TLS record with the
     * mark), the rest large. */
    v[0].iov_base = buf;
    v[0].iov_len = len < 100 ? len : 100;
    v[1].iov_base = buf + v[0].iov_len;
    v[1].iov_len = len - v[0].iov_len;
    assert_int_equal(vrpc_conn_send(e->c, v, v[1].iov_len > 0 ? 2 : 1), 0);
    free(buf);
}


static void
test_handshake_and_data(void **state)
{
    vrpc_tls_t *st = t_tls("srv", "ca", true), *ct = t_tls("cli", "ca", false);
    struct t_end srv, cli;

    (void)state;
    t_pair(&srv, st, &cli, ct);
    assert_true(t_wait(&cli.n_connect, 1));
    assert_int_equal(cli.connect_status, 0);
    /* Twice, so that the second record follows a full queue. */
    t_send(&cli, T_BIG);
    t_send(&cli, T_BIG);
    assert_true(t_wait(&srv.n_records, 2));
    assert_int_equal(srv.last_len, T_BIG);
    assert_true(srv.is_last_ok);
    assert_true(t_wait(&cli.n_records, 2));
    assert_int_equal(cli.last_len, 10);
    assert_true(cli.is_last_ok);
    assert_true(vrpc_conn_is_tls(srv.c));
    assert_string_equal(vrpc_conn_tls_peer_cn(srv.c), "client1");
    assert_string_equal(vrpc_conn_tls_peer_cn(cli.c), "server1");
    assert_int_equal(srv.n_close, 0);
    t_unpair(&srv, &cli);
    vrpc_tls_free(st);
    vrpc_tls_free(ct);
}


/* The client is refused: the server closes with a reason containing
 * want, and delivers nothing. */
static void
t_refused(const char *cli_name, const char *want)
{
    vrpc_tls_t *st = t_tls("srv", "ca", true);
    vrpc_tls_t *ct = t_tls(cli_name, "ca", false);
    struct t_end srv, cli;
    char why[512];

    t_pair(&srv, st, &cli, ct);
    assert_true(t_wait(&srv.n_close, 1));
    assert_true(t_wait(&cli.n_close, 1));
    vrpc_conn_tls_error(srv.c, why, sizeof(why));
    if (strstr(why, want) == NULL)
        fail_msg("server error '%s' does not say '%s'", why, want);
    vrpc_conn_tls_error(cli.c, why, sizeof(why));
    assert_true(why[0] != '\0');
    assert_int_equal(srv.n_records, 0);
    assert_null(vrpc_conn_tls_peer_cn(srv.c));
    t_unpair(&srv, &cli);
    vrpc_tls_free(st);
    vrpc_tls_free(ct);
}


/* The client dials host with ssl.check-host on (or off): the
 * handshake completes (want NULL) or the client closes with want in its
 * reason and the server gets nothing. */
static void
t_check_host(const char *srv_name, const char *host, bool is_check,
             const char *want)
{
    vrpc_tls_t *st = t_tls(srv_name, "ca", true);
    char cert[128], key[128], cap[128];
    struct vrpc_tls_conf conf = {cert, key, cap, NULL, is_check};
    vl_err_t err = {{0}};
    vrpc_tls_t *ct = NULL;
    struct t_end srv, cli;
    char why[512];

    snprintf(cert, sizeof(cert), "%s/cli.pem", t_dir);
    snprintf(key, sizeof(key), "%s/cli.key", t_dir);
    snprintf(cap, sizeof(cap), "%s/ca.pem", t_dir);
    assert_int_equal(vrpc_tls_new(&conf, false, &ct, &err), 0);
    t_pair_host(&srv, st, &cli, ct, host);
    if (want == NULL) {
        assert_true(t_wait(&cli.n_connect, 1));
        assert_int_equal(cli.connect_status, 0);
    } else {
        assert_true(t_wait(&cli.n_close, 1));
        vrpc_conn_tls_error(cli.c, why, sizeof(why));
        if (strstr(why, want) == NULL)
            fail_msg("client error '%s' does not say '%s'", why, want);
        assert_int_equal(srv.n_records, 0);
    }
    t_unpair(&srv, &cli);
    vrpc_tls_free(st);
    vrpc_tls_free(ct);
}


static void
test_check_host(void **state)
{
    (void)state;
    /* subjectAltName DNS:brick1.example, IP:127.0.0.1 */
    t_check_host("srvsan", "127.0.0.1", true, NULL);
    t_check_host("srvsan", "brick1.example", true, NULL);
    t_check_host("srvsan", "BRICK1.example", true, NULL);
    t_check_host("srvsan", "brick2.example", true, "hostname mismatch");
    t_check_host("srvsan", "10.0.0.9", true, "IP address mismatch");
    /* With no subjectAltName: the common name, for a name only. */
    t_check_host("srv", "server1", true, NULL);
    t_check_host("srv", "server2", true, "hostname mismatch");
    t_check_host("srv", "127.0.0.1", true, "IP address mismatch");
    /* Off (the default): any certificate the CA signed. */
    t_check_host("srv", "10.0.0.9", false, NULL);
}


static void
test_wrong_ca_refused(void **state)
{
    (void)state;
    t_refused("bad", "certificate verify failed");
}


static void
test_expired_refused(void **state)
{
    (void)state;
    t_refused("old", "expired");
}


static void
test_clear_client_refused(void **state)
{
    vrpc_tls_t *st = t_tls("srv", "ca", true);
    struct t_end srv, cli;
    char why[512];

    (void)state;
    t_pair(&srv, st, &cli, NULL);
    t_send(&cli, 200);
    assert_true(t_wait(&srv.n_close, 1));
    assert_true(t_wait(&cli.n_close, 1));
    vrpc_conn_tls_error(srv.c, why, sizeof(why));
    assert_non_null(strstr(why, "TLS handshake failed"));
    assert_int_equal(srv.n_records, 0);
    t_unpair(&srv, &cli);
    vrpc_tls_free(st);
}


static void
t_copy(const char *from, const char *to)
{
    char a[128], b[128], cmd[512];

    t_path(a, sizeof(a), from);
    t_path(b, sizeof(b), to);
    snprintf(cmd, sizeof(cmd), "cp %s %s && touch -d '+%d sec' %s", a, b,
             t_serial++, b);
    assert_int_equal(system(cmd), 0);
}


static void
test_reload(void **state)
{
    vrpc_tls_t *st, *ct = t_tls("cli", "ca", false);
    struct t_end srv, cli;

    (void)state;
    t_copy("srv.pem", "live.pem");
    t_copy("srv.key", "live.key");
    st = t_tls("live", "ca", true);
    /* The files change (a new certificate of the same CA): the next
     * connection shows it. */
    t_copy("srv2.pem", "live.pem");
    t_copy("srv2.key", "live.key");
    t_pair(&srv, st, &cli, ct);
    assert_true(t_wait(&cli.n_connect, 1));
    assert_int_equal(cli.connect_status, 0);
    assert_true(t_wait(&srv.n_connect, 0));
    t_send(&cli, 10);
    assert_true(t_wait(&cli.n_records, 1));
    assert_string_equal(vrpc_conn_tls_peer_cn(cli.c), "server2");
    t_unpair(&srv, &cli);
    /* A broken file: the old context (server2) stays. */
    {
        char p[128];
        FILE *f;

        t_path(p, sizeof(p), "live.pem");
        f = fopen(p, "w");
        assert_non_null(f);
        fputs("not a certificate\n", f);
        fclose(f);
        t_copy("live.pem", "live.pem.tmp");
        t_copy("live.pem.tmp", "live.pem");
    }
    t_pair(&srv, st, &cli, ct);
    assert_true(t_wait(&cli.n_connect, 1));
    assert_int_equal(cli.connect_status, 0);
    t_send(&cli, 10);
    assert_true(t_wait(&cli.n_records, 1));
    assert_string_equal(vrpc_conn_tls_peer_cn(cli.c), "server2");
    t_unpair(&srv, &cli);
    vrpc_tls_free(st);
    vrpc_tls_free(ct);
}


static void
test_bad_files(void **state)
{
    struct vrpc_tls_conf conf = {"/nonexistent/c.pem", "/nonexistent/c.key",
                                 "/nonexistent/ca", NULL};
    char cert[128], key[128], ca[128];
    vl_err_t err = {{0}};
    vrpc_tls_t *t = NULL;

    (void)state;
    assert_int_not_equal(vrpc_tls_new(&conf, false, &t, &err), 0);
    assert_null(t);
    assert_string_equal(err.msg, "ssl.own-cert /nonexistent/c.pem: No such "
                                 "file or directory");
    /* A key that is not the certificate's. */
    t_path(cert, sizeof(cert), "srv.pem");
    t_path(key, sizeof(key), "cli.key");
    t_path(ca, sizeof(ca), "ca.pem");
    conf = (struct vrpc_tls_conf){cert, key, ca, NULL};
    assert_int_not_equal(vrpc_tls_new(&conf, true, &t, &err), 0);
    assert_non_null(strstr(err.msg, "ssl.private-key"));
    assert_non_null(strstr(err.msg, "values mismatch"));
    /* A CA file that holds no certificate. */
    conf = (struct vrpc_tls_conf){cert, cert, ca, NULL};
    conf.private_key = key;
    t_path(key, sizeof(key), "srv.key");
    t_path(ca, sizeof(ca), "srv.key");
    assert_int_not_equal(vrpc_tls_new(&conf, true, &t, &err), 0);
    assert_non_null(strstr(err.msg, "ssl.ca-list"));
}


static void
test_cn_allowed(void **state)
{
    (void)state;
    assert_true(vrpc_tls_cn_allowed("*", "anything"));
    assert_true(vrpc_tls_cn_allowed("a, client1 ,b", "client1"));
    assert_true(vrpc_tls_cn_allowed("node*", "node7"));
    assert_false(vrpc_tls_cn_allowed("a,b", "client1"));
    assert_false(vrpc_tls_cn_allowed("", "client1"));
}


/* ---- the blocking client stream (stream.c) ---- */

/* srv (a vrpc connection, TLS with st, else clear, answering each record
 * with a 10-byte one) and the client stream *s on a socketpair. */
static void
t_stream_pair(struct t_end *srv, vrpc_tls_t *st, struct vrpc_stream *s)
{
    vl_err_t err = {{0}};
    int sv[2];

    memset(srv, 0, sizeof(*srv));
    memset(s, 0, sizeof(*s));
    srv->is_echo = true;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
                     0);
    assert_int_equal(vrpc_conn_new(t_loop, sv[0], false, &t_ops, srv,
                                   &srv->c),
                     0);
    if (st != NULL)
        assert_int_equal(vrpc_conn_set_tls(srv->c, st, NULL, &err), 0);
    assert_int_equal(vrpc_conn_start(srv->c), 0);
    s->fd = sv[1];
}


static void
t_stream_unpair(struct t_end *srv, struct vrpc_stream *s)
{
    vrpc_stream_close(s);
    vrpc_conn_close(srv->c, -ENOTCONN);
    vrpc_conn_unref(srv->c);
}


/* Sends one record of len pattern bytes on s and reads the answer's
 * mark; 0 with *answer_len, or the first failure. */
static int
t_stream_call(struct vrpc_stream *s, size_t len, uint32_t *answer_len)
{
    uint64_t deadline = vrpc_now_ms() + T_WAIT_MS;
    char *buf = malloc(len);
    uint32_t mark = htonl(VRPC_LAST_FRAG | (uint32_t)len);
    int rc;

    assert_non_null(buf);
    for (size_t i = 0; i < len; i++)
        buf[i] = t_pat(i);
    rc = vrpc_stream_io(s, (char *)&mark, sizeof(mark), true, deadline);
    if (rc == 0)
        rc = vrpc_stream_io(s, buf, len, true, deadline);
    if (rc == 0)
        rc = vrpc_stream_io(s, (char *)&mark, sizeof(mark), false,
                            deadline);
    free(buf);
    if (rc == 0)
        *answer_len = ntohl(mark) & ~VRPC_LAST_FRAG;
    return rc;
}


static void
test_stream_tls_call(void **state)
{
    vrpc_tls_t *st = t_tls("srv", "ca", true);
    vrpc_tls_t *ct = t_tls("cli", "ca", false);
    struct vrpc_stream s;
    struct t_end srv;
    vl_err_t err = {{0}};
    uint32_t answer_len = 0;
    char answer[10];

    (void)state;
    t_stream_pair(&srv, st, &s);
    assert_int_equal(vrpc_stream_tls_start(&s, ct, "127.0.0.1", vrpc_now_ms() + T_WAIT_MS,
                                           &err),
                     0);
    assert_int_equal(t_stream_call(&s, 100000, &answer_len), 0);
    assert_int_equal(answer_len, 10);
    assert_int_equal(vrpc_stream_io(&s, answer, sizeof(answer), false,
                                    vrpc_now_ms() + T_WAIT_MS),
                     0);
    for (size_t i = 0; i < sizeof(answer); i++)
        assert_int_equal(answer[i], t_pat(i));
    assert_true(t_wait(&srv.n_records, 1));
    assert_int_equal(srv.last_len, 100000);
    assert_true(srv.is_last_ok);
    assert_string_equal(vrpc_conn_tls_peer_cn(srv.c), "client1");
    assert_string_equal(s.why, "");
    t_stream_unpair(&srv, &s);
    vrpc_tls_free(ct);
    vrpc_tls_free(st);
}


static void
test_stream_wrong_ca_alert(void **state)
{
    vrpc_tls_t *st = t_tls("srv", "ca", true);
    vrpc_tls_t *ct = t_tls("bad", "ca", false);
    struct vrpc_stream s;
    struct t_end srv;
    vl_err_t err = {{0}};
    uint32_t answer_len = 0;

    (void)state;
    t_stream_pair(&srv, st, &s);
    /* TLS 1.3: the client's handshake ends before the server checked
     * the client's certificate; the refusal comes with the first call. */
    assert_int_equal(vrpc_stream_tls_start(&s, ct, "127.0.0.1", vrpc_now_ms() + T_WAIT_MS,
                                           &err),
                     0);
    assert_int_not_equal(t_stream_call(&s, 100, &answer_len), 0);
    assert_non_null(strstr(s.why, "alert unknown ca"));
    assert_int_equal(srv.n_records, 0);
    t_stream_unpair(&srv, &s);
    vrpc_tls_free(ct);
    vrpc_tls_free(st);
}


static void
test_stream_one_sided(void **state)
{
    vrpc_tls_t *st = t_tls("srv", "ca", true);
    vrpc_tls_t *ct = t_tls("cli", "ca", false);
    struct vrpc_stream s;
    struct t_end srv;
    vl_err_t err = {{0}};
    uint32_t answer_len = 0;

    (void)state;
    /* A TLS client of a clear server. */
    t_stream_pair(&srv, NULL, &s);
    assert_int_not_equal(vrpc_stream_tls_start(&s, ct, "127.0.0.1",
                                               vrpc_now_ms() + T_WAIT_MS,
                                               &err),
                         0);
    assert_non_null(strstr(err.msg, "it does not speak TLS"));
    assert_null(s.ssl);
    t_stream_unpair(&srv, &s);
    /* A clear client of a TLS server: the call fails, nothing is
     * delivered. */
    t_stream_pair(&srv, st, &s);
    assert_int_not_equal(t_stream_call(&s, 100, &answer_len), 0);
    assert_true(t_wait(&srv.n_close, 1));
    assert_int_equal(srv.n_records, 0);
    t_stream_unpair(&srv, &s);
    vrpc_tls_free(ct);
    vrpc_tls_free(st);
}


static void
test_stream_deadline(void **state)
{
    vrpc_tls_t *ct = t_tls("cli", "ca", false);
    struct vrpc_stream s = {.fd = -1};
    vl_err_t err = {{0}};
    uint64_t start = vrpc_now_ms();
    int sv[2];

    (void)state;
    /* Nobody answers on sv[0]. */
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
                     0);
    s.fd = sv[1];
    assert_int_equal(vrpc_stream_tls_start(&s, ct, "127.0.0.1", start + 300, &err),
                     -ETIMEDOUT);
    assert_string_equal(err.msg, "TLS handshake timed out");
    assert_true(vrpc_now_ms() - start < 5000);
    vrpc_stream_close(&s);
    close(sv[0]);
    vrpc_tls_free(ct);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handshake_and_data),
        cmocka_unit_test(test_wrong_ca_refused),
        cmocka_unit_test(test_check_host),
        cmocka_unit_test(test_expired_refused),
        cmocka_unit_test(test_clear_client_refused),
        cmocka_unit_test(test_reload),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_cn_allowed),
        cmocka_unit_test(test_stream_tls_call),
        cmocka_unit_test(test_stream_wrong_ca_alert),
        cmocka_unit_test(test_stream_one_sided),
        cmocka_unit_test(test_stream_deadline),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, t_setup_all, t_teardown_all);
}
