/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * secure: the secure-access switch, mortard's management TLS contexts
 * and the admin certificate list (see secure.h).
 *
 * Why a file in the state dir: it is GlusterFS's switch
 * (/var/lib/glusterd/secure-access), configuration management already
 * copies that directory's secret between members, and one `touch` per
 * node plus a restart turns a pool over. It is read at start only: a
 * port that changed from clear text to TLS under running peers would
 * cut every connection without saying why.
 * Why a separate admin list, not auth.ssl-allow: the CA signs every
 * member and client of a pool; being signed says "belongs here", and
 * only the names listed here may run commands.
 * Threads: md_sec.admins has its own lock; the rest is written once by
 * md_secure_init before the server starts.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mortard.h"
#include "secure.h"

/* Longest admin list read; longer files are cut (and logged). */
#define MD_ADMIN_LIST_MAX (64 * 1024)

static struct {
    bool is_on;                  /* secure-access */
    vrpc_tls_t *server;          /* owned; accepted TCP connections */
    vrpc_tls_t *client;          /* owned; calls to peers */
    bool has_admins;             /* admins was initialised */
    struct md_admin_list admins; /* <state-dir>/admin-allow (own lock) */
} md_sec;


int
md_secure_init(const char *state_dir, const struct md_secure_conf *conf,
               vl_err_t *err)
{
    struct vrpc_tls_conf tc = {.own_cert = conf->paths[0],
                               .private_key = conf->paths[1],
                               .ca_list = conf->paths[2]};
    char *path = NULL;
    int rc;

    if (asprintf(&path, "%s/%s", state_dir, MD_ADMIN_ALLOW_FILE) < 0) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    rc = md_admin_list_init(&md_sec.admins, path);
    free(path);
    if (rc != 0) {
        vl_err_set(err, "out of memory");
        return rc;
    }
    md_sec.has_admins = true;
    if (asprintf(&path, "%s/%s", state_dir, MD_SECURE_ACCESS_FILE) < 0) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    md_sec.is_on = conf->is_forced || access(path, F_OK) == 0;
    free(path);
    if (!md_sec.is_on)
        return 0;
    rc = vrpc_tls_new(&tc, true, &md_sec.server, err);
    tc.check_host = conf->is_check_host;
    if (rc == 0)
        rc = vrpc_tls_new(&tc, false, &md_sec.client, err);
    if (rc != 0) {
        char why[sizeof(err->msg)];

        snprintf(why, sizeof(why), "%s", err->msg);
        vl_err_set(err, "secure-access: %s", why);
        return rc;
    }
    vl_glog(MD_DOMAIN, VL_LOG_INFO, "secure-access on: the management "
            "port and calls to peers speak TLS; admin certificates listed "
            "in %s", md_sec.admins.path);
    return 0;
}


void
md_secure_fini(void)
{
    vrpc_tls_free(md_sec.server);
    vrpc_tls_free(md_sec.client);
    md_sec.server = NULL;
    md_sec.client = NULL;
    md_sec.is_on = false;
    if (md_sec.has_admins)
        md_admin_list_clear(&md_sec.admins);
    md_sec.has_admins = false;
}


bool
md_secure_is_on(void)
{
    return md_sec.is_on;
}


vrpc_tls_t *
md_secure_server_tls(void)
{
    return md_sec.server;
}


vrpc_tls_t *
md_secure_client_tls(void)
{
    return md_sec.client;
}


const char *
md_secure_admin_path(void)
{
    return md_sec.has_admins ? md_sec.admins.path : MD_ADMIN_ALLOW_FILE;
}


bool
md_admin_cn_listed(const char *list, const char *cn)
{
    size_t cn_len;

    if (list == NULL || cn == NULL || cn[0] == '\0')
        return false;
    cn_len = strlen(cn);
    for (const char *p = list; *p != '\0';) {
        size_t n = strcspn(p, ",\n");
        const char *name = p;
        size_t len = n;

        while (len > 0 && (*name == ' ' || *name == '\t' || *name == '\r')) {
            name++;
            len--;
        }
        while (len > 0 && (name[len - 1] == ' ' || name[len - 1] == '\t'
                           || name[len - 1] == '\r'))
            len--;
        if (len == cn_len && memcmp(name, cn, len) == 0)
            return true;
        p += n;
        if (*p != '\0')
            p++;
    }
    return false;
}


int
md_admin_list_init(struct md_admin_list *l, const char *path)
{
    memset(l, 0, sizeof(*l));
    l->path = strdup(path);
    if (l->path == NULL)
        return -ENOMEM;
    pthread_mutex_init(&l->mu, NULL);
    return 0;
}


void
md_admin_list_clear(struct md_admin_list *l)
{
    pthread_mutex_destroy(&l->mu);
    free(l->text);
    free(l->path);
    memset(l, 0, sizeof(*l));
}


/* Reads the list again if the file changed (inode, size, mtime); under
 * l->mu. */
static void
md_admin_list_refresh_locked(struct md_admin_list *l)
{
    struct stat st;
    char *text = NULL;
    size_t len = 0;
    int rc;

    if (stat(l->path, &st) != 0)
        memset(&st, 0, sizeof(st));
    if (l->has_read && st.st_ino == l->st.st_ino
        && st.st_size == l->st.st_size
        && st.st_mtim.tv_sec == l->st.st_mtim.tv_sec
        && st.st_mtim.tv_nsec == l->st.st_mtim.tv_nsec)
        return;
    if (st.st_ino != 0) {
        rc = md_read_file(l->path, &text, &len);
        if (rc != 0) {
            vl_glog(MD_DOMAIN, VL_LOG_ERROR, "%s: %s; no admin "
                    "certificate is accepted", l->path, strerror(-rc));
            text = NULL;
        } else if (len > MD_ADMIN_LIST_MAX) {
            vl_glog(MD_DOMAIN, VL_LOG_WARNING, "%s: %zu bytes, only the "
                    "first %d read", l->path, len, MD_ADMIN_LIST_MAX);
            text[MD_ADMIN_LIST_MAX] = '\0';
        }
    }
    free(l->text);
    l->text = text;
    l->st = st;
    l->has_read = true;
}


bool
md_admin_list_has(struct md_admin_list *l, const char *cn)
{
    bool is_listed;

    pthread_mutex_lock(&l->mu);
    md_admin_list_refresh_locked(l);
    is_listed = md_admin_cn_listed(l->text, cn);
    pthread_mutex_unlock(&l->mu);
    return is_listed;
}


bool
md_secure_is_admin(const char *cn)
{
    if (!md_sec.is_on || cn == NULL || !md_sec.has_admins)
        return false;
    return md_admin_list_has(&md_sec.admins, cn);
}
