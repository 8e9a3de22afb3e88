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
 * pool secret inside TLS. A TLS caller whose certificate's common name
 * is in <state-dir>/admin-allow is an admin.
 * Threads: any; the contexts are fixed after md_secure_init, the admin
 * list has its own lock.
 */
#ifndef MORTARD_SECURE_H
#define MORTARD_SECURE_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "tls.h"
#include "vol/vol.h"

#define MD_SECURE_ACCESS_FILE "secure-access" /* in the state dir */
#define MD_ADMIN_ALLOW_FILE "admin-allow"     /* in the state dir */

/* Certificate paths for management TLS; NULL members: the defaults. */
struct md_secure_conf {
    bool is_forced;        /* --secure-access: on without the file */
    bool is_check_host;    /* --ssl-check-host: a peer's certificate must
                              name the host it is called by */
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

/* True if cn is one of the comma- or newline-separated names of list,
 * compared whole and exactly (no patterns: an admin list is read at a
 * glance, and "*" grants nothing); blanks around names are ignored. */
bool md_admin_cn_listed(const char *list, const char *cn);
/* A list file (<state-dir>/admin-allow), read again when it changes
 * (inode, size or mtime): a copy or an edit takes effect at the next
 * call without a restart. */
struct md_admin_list {
    char *path;            /* owned */
    pthread_mutex_t mu;    /* guards what follows */
    char *text;            /* owned file text, or NULL (no file) */
    struct stat st;        /* of the file when read; zero if missing */
    bool has_read;         /* text reflects st */
};

/* 0 or -ENOMEM. */
int md_admin_list_init(struct md_admin_list *l, const char *path);
void md_admin_list_clear(struct md_admin_list *l);
/* True if the current file lists cn (md_admin_cn_listed). A missing
 * file lists nobody; an unreadable one too (logged once per change). */
bool md_admin_list_has(struct md_admin_list *l, const char *cn);

/* True if cn (a verified certificate's common name) is in the current
 * <state-dir>/admin-allow, read again when it changed. A missing file
 * lists nobody. */
bool md_secure_is_admin(const char *cn);
/* "<state-dir>/admin-allow", for messages. */
const char *md_secure_admin_path(void);

#endif /* MORTARD_SECURE_H */
