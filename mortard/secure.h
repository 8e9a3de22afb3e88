/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * secure: management over TLS (doc/security.md, "Management"), the
 * counterpart of GlusterFS's /var/lib/glusterd/secure-access.
 *
 * When <state-dir>/secure-access exists at start (or mortard runs with
 * --secure-access), mortard's TCP port speaks TLS 1.3 only and its calls
 * to peers do too, with the certificate, key and CA list the bricks use
 * (/etc/ssl/mortar.{pem,key,ca}, or --ssl-cert/--ssl-key/--ssl-ca),
 * reloaded like theirs (a changed file, SIGHUP). Peers still prove the
 * pool secret inside TLS.
 * Threads: any; the contexts are fixed after md_secure_init.
 */
#ifndef MORTARD_SECURE_H
#define MORTARD_SECURE_H

#include <stdbool.h>

#include "tls.h"
#include "vol/vol.h"

#define MD_SECURE_ACCESS_FILE "secure-access" /* in the state dir */

/* Certificate paths for management TLS; NULL members: the defaults. */
struct md_secure_conf {
    bool is_forced;        /* --secure-access: on without the file */
    char *paths[3];        /* owned by the caller: --ssl-cert,
                              --ssl-key, --ssl-ca */
};

/* Decides whether management speaks TLS and, if so, loads the contexts.
 * -errno with err naming the file ("ssl.own-cert /etc/ssl/mortar.pem:
 * No such file or directory"): mortard does not start half secure. */
int md_secure_init(const char *state_dir, const struct md_secure_conf *conf,
                   vl_err_t *err);
void md_secure_fini(void);
/* True when secure-access is on. */
bool md_secure_is_on(void);
/* The server context for accepted TCP connections, the client context
 * for calls to peers; NULL when secure-access is off. */
vrpc_tls_t *md_secure_server_tls(void);
vrpc_tls_t *md_secure_client_tls(void);

#endif /* MORTARD_SECURE_H */
