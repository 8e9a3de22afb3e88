/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tls: OpenSSL contexts for Mortar's connections (doc/security.md "TLS").
 *
 * A vrpc_tls_t is one role's (client or server) certificate, key and CA
 * list, turned into an SSL_CTX: TLS 1.3 only, the peer's certificate
 * verified against the CA list on both sides (a server refuses a client
 * without one), no session tickets. A client checks that the server's
 * certificate names the host it dialled only when asked (check_host:
 * GlusterFS checks no names, and pools made with it name their
 * certificates after hosts that are then dialled by address); servers
 * check clients by auth.ssl-allow's common names.
 * Reload: each new connection stats the three files (cheap); when an
 * mtime changed, or after vrpc_tls_reload_all (SIGHUP), a new SSL_CTX is
 * built for the connections that follow. A new file that does not load
 * keeps the old context and logs one line.
 * Threads: any; t->lock guards the current context.
 */
#ifndef VRPC_TLS_H
#define VRPC_TLS_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>

#include "vol/vol.h"

/* GlusterFS's /etc/ssl/glusterfs.{pem,key,ca}, under Mortar's name. */
#define VRPC_TLS_DEF_CERT "/etc/ssl/mortar.pem"
#define VRPC_TLS_DEF_KEY "/etc/ssl/mortar.key"
#define VRPC_TLS_DEF_CA "/etc/ssl/mortar.ca"
/* Time a TLS handshake may take before the connection is dropped. */
#define VRPC_TLS_HANDSHAKE_MS 10000
/* Longest certificate common name kept (RFC 5280 ub-common-name 64). */
#define VRPC_TLS_CN_MAX 256

typedef struct vrpc_tls vrpc_tls_t;

struct vrpc_tls_conf {
    const char *own_cert;    /* PEM certificate (chain) of this side */
    const char *private_key; /* PEM key of own_cert */
    const char *ca_list;     /* PEM CA certificates peers must chain to */
    const char *cipher_list; /* TLS 1.3 cipher suites, or NULL: default */
    bool check_host;         /* a client: the server's certificate must
                                name the host dialled (subjectAltName DNS
                                or IP entries; without DNS entries the
                                common name, for a host name) */
};

/* Loads conf for a server (is_server) or a client. -errno with err
 * naming the file and OpenSSL's reason ("ssl.own-cert /x: No such file
 * or directory"). Paths are copied. */
int vrpc_tls_new(const struct vrpc_tls_conf *conf, bool is_server,
                 vrpc_tls_t **out /* OUT */, vl_err_t *err);
/* NULL is allowed. Connections made from t keep their own SSL_CTX ref. */
void vrpc_tls_free(vrpc_tls_t *t);
/* A new SSL object for one connection from the current context, after
 * the cheap mtime check (a changed file is reloaded first). host: the
 * name or address a client dialled (NULL for servers): with check_host
 * the handshake fails unless the server's certificate names it, and a
 * name is sent as SNI. NULL with err on failure. */
SSL *vrpc_tls_ssl_new(vrpc_tls_t *t, const char *host, vl_err_t *err);
bool vrpc_tls_is_server(const vrpc_tls_t *t);
/* Attaches ssl to socket fd (not closed by OpenSSL) through a BIO that
 * writes with MSG_NOSIGNAL. 0 or -ENOMEM. */
int vrpc_tls_attach_fd(SSL *ssl, int fd);
/* Makes every live vrpc_tls_t rebuild its context at its next
 * connection, changed or not (SIGHUP). Async-signal-safe. */
void vrpc_tls_reload_all(void);

/* Appends OpenSSL's queued errors of this thread (reason strings, "; "
 * between them) to buf, then clears them; "unknown error" if none. */
void vrpc_tls_err_string(char *buf, size_t len);
/* The verified peer certificate's common name into buf; false if the
 * peer sent none. */
bool vrpc_tls_peer_cn(SSL *ssl, char *buf, size_t len);
/* True if cn matches the comma-separated list (fnmatch patterns, "*" for
 * any CA-verified certificate). */
bool vrpc_tls_cn_allowed(const char *list, const char *cn);

#endif /* VRPC_TLS_H */
