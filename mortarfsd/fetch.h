/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fetch: the client volfile from mortard (MGMT_GETSPEC), and a watcher
 * thread that keeps an MGMT_WATCH pending to learn of new versions.
 *
 * The servers are tried in order (--volfile-server, then the backups);
 * the first that answers with a volfile serves. The watcher does not
 * touch the graph: it hands a new volfile to the main thread (which owns
 * the graph) and wakes it with SIGUSR2, which main blocks and sigwaits.
 */
#ifndef MORTARFSD_FETCH_H
#define MORTARFSD_FETCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "vol/vol.h"
#include "vrpc.h"

/* Where the volfile comes from; all borrowed from the command line. */
struct fsd_vfsrc {
    char *const *servers; /* host or host:port, in order of preference */
    size_t n_servers;
    uint16_t port;        /* default port for servers without one */
    const char *volume;   /* --volfile-id */
    vrpc_tls_t *tls;      /* borrowed client context (--mgmt-tls), or
                           * NULL: clear text */
};

/* One volfile as served. */
struct fsd_spec {
    char *text;        /* owned, NUL-terminated */
    size_t len;
    uint64_t version;  /* mortard's version of the volume's volfile */
    char *server;      /* owned; "host:port" that served it */
    size_t server_index; /* its index in fsd_vfsrc.servers */
};

void fsd_spec_clear(struct fsd_spec *spec);

/* Fetches the volfile from the first server that has it. 0, or -errno
 * with err listing why each server failed. Blocking (bounded). */
int fsd_fetch_spec(const struct fsd_vfsrc *src, struct fsd_spec *out,
                   vl_err_t *err);

typedef struct fsd_watch fsd_watch_t;

/* Starts the watcher: it waits for versions other than version, starting
 * with server index first. Each new volfile is stored and the thread
 * `notify` gets SIGUSR2. Call after the signal mask is set. */
int fsd_watch_start(const struct fsd_vfsrc *src, uint64_t version,
                    size_t first, pthread_t notify,
                    fsd_watch_t **out /* OUT */);
/* Takes the latest new volfile, if any (true, *out filled). */
bool fsd_watch_take(fsd_watch_t *w, struct fsd_spec *out /* OUT */);
/* Stops and joins the thread; frees w. NULL is allowed. */
void fsd_watch_stop(fsd_watch_t *w);

#endif /* MORTARFSD_FETCH_H */
