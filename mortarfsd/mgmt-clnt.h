/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mgmt-clnt: a small blocking ONC-RPC client for mortard's management
 * program (rpc/xdr/mgmt.x), shared by the `mortar` CLI and mortarfsd's
 * volfile fetcher.
 *
 * One call at a time on one socket (unix or TCP, clear or TLS: a
 * struct vrpc_stream of rpc/src/stream.c), every wait bounded by a
 * deadline: the CLI has nothing else to do while it waits, and mortarfsd
 * runs it on its own watcher thread. Encoding and header decoding reuse
 * rpc/src/msg.c; record marking is done here. Threads: a stream is used
 * by one thread at a time; another thread may shutdown(2) its fd to wake
 * a blocked call (-ECONNRESET).
 */
#ifndef MORTARFSD_MGMT_CLNT_H
#define MORTARFSD_MGMT_CLNT_H

#include <stdbool.h>
#include <stdint.h>

#include <rpc/rpc.h>

#include "vol/vol.h"
#include "vrpc.h"

#define MGC_DEFAULT_PORT 24100
#define MGC_DEFAULT_SOCKET "/run/mortar/mortard.sock"
/* GlusterFS's /var/lib/glusterd/secure-access: on a host where it exists
 * the CLI and clients speak TLS to mortard (doc/security.md). */
#define MGC_SECURE_ACCESS_FILE "/var/lib/mortar/secure-access"
/* Largest reply accepted (a volfile or a long status output). */
#define MGC_MAX_REPLY (8u * 1024 * 1024)

/* Where mortard listens: a unix socket path, or host and TCP port. */
struct mgc_addr {
    char *path;     /* owned; unix socket, or NULL */
    char *host;     /* owned; numeric address or name, or NULL */
    uint16_t port;  /* TCP port with host */
};

/* Parses "HOST", "HOST:PORT", "[V6]:PORT" or "V6" (several colons, no
 * brackets: no port). default_port when none. 0 or -EINVAL with err. */
int mgc_addr_parse(const char *text, uint16_t default_port,
                   struct mgc_addr *out /* OUT */, vl_err_t *err);
/* Unix socket path. 0 or -ENOMEM. */
int mgc_addr_unix(const char *path, struct mgc_addr *out /* OUT */);
void mgc_addr_clear(struct mgc_addr *addr);
/* "HOST:PORT" or the socket path, for messages. */
const char *mgc_addr_str(const struct mgc_addr *addr, char *buf,
                         size_t len);

/* Connects within timeout_ms and, with tls (a client context; NULL for
 * clear text), makes the TLS handshake in the same time. -errno with err
 * set ("127.0.0.1:24100: Connection refused", "127.0.0.1:24100: TLS
 * handshake failed: ..."). Close *out with vrpc_stream_close. */
int mgc_connect(const struct mgc_addr *addr, vrpc_tls_t *tls, int timeout_ms,
                struct vrpc_stream *out /* OUT */, vl_err_t *err);
/* One call of procedure proc of the management program on s: sends args
 * (encoded with args_fn), waits up to timeout_ms for the reply and decodes
 * it into res (zeroed by the caller; free with xdr_free(res_fn, res)).
 * 0, -ETIMEDOUT, -ECONNRESET (closed), -EPROTO (bad or rejected reply,
 * err says which), -EMSGSIZE, -ENOMEM. */
int mgc_call(struct vrpc_stream *s, uint32_t prog, uint32_t vers, uint32_t proc,
             xdrproc_t args_fn, void *args, xdrproc_t res_fn, void *res,
             int timeout_ms, vl_err_t *err);

#endif /* MORTARFSD_MGMT_CLNT_H */
