/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * secure: the secure-access switch and mortard's management TLS
 * contexts (see secure.h).
 *
 * Why a file in the state dir: it is GlusterFS's switch
 * (/var/lib/glusterd/secure-access), configuration management already
 * copies that directory's secret between members, and one `touch` per
 * node plus a restart turns a pool over. It is read at start only: a
 * port that changed from clear text to TLS under running peers would
 * cut every connection without saying why.
 * Threads: md_sec is written once by md_secure_init before the server
 * starts.
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

static struct {
    bool is_on;                  /* secure-access */
    vrpc_tls_t *server;          /* owned; accepted TCP connections */
    vrpc_tls_t *client;          /* owned; calls to peers */
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

    if (asprintf(&path, "%s/%s", state_dir, MD_SECURE_ACCESS_FILE) < 0) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    md_sec.is_on = conf->is_forced || access(path, F_OK) == 0;
    free(path);
    if (!md_sec.is_on)
        return 0;
    rc = vrpc_tls_new(&tc, true, &md_sec.server, err);
    if (rc == 0)
        rc = vrpc_tls_new(&tc, false, &md_sec.client, err);
    if (rc != 0) {
        char why[sizeof(err->msg)];

        snprintf(why, sizeof(why), "%s", err->msg);
        vl_err_set(err, "secure-access: %s", why);
        return rc;
    }
    vl_glog(MD_DOMAIN, VL_LOG_INFO, "secure-access on: the management "
            "port and calls to peers speak TLS");
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
