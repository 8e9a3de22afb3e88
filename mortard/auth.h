/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * auth: who may run what on mortard's management service, and the pool
 * secret peers prove to each other (doc/security.md, "Management").
 * Threads: any; the secret cache and each md_auth_conn have their own
 * lock.
 */
#ifndef MORTARD_AUTH_H
#define MORTARD_AUTH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mgmt.h"
#include "vol/vol.h"

#define MD_AUTH_SECRET_LEN 32          /* bytes; the file holds hex */
#define MD_AUTH_NONCE_LEN MGMT_AUTH_NONCE_LEN
#define MD_AUTH_PROOF_LEN MGMT_AUTH_PROOF_LEN
#define MD_AUTH_SECRET_FILE "secret"   /* in the state dir */

/* What a connection to the management service may do. */
enum md_role {
    MD_ROLE_NONE = 0,   /* a stranger: NULL, GETSPEC, WATCH, AUTH only */
    MD_ROLE_PEER,       /* proved the pool secret: peer procs */
    MD_ROLE_ADMIN,      /* root on the unix socket: everything */
};

/* Which side of an AUTH exchange a proof speaks for. */
enum md_auth_side {
    MD_AUTH_CALLER,     /* the node that connected */
    MD_AUTH_CALLEE,     /* the node that accepted */
};

/* The inputs of both proofs of one exchange. */
struct md_auth_ctx {
    uint8_t nonce_caller[MD_AUTH_NONCE_LEN]; /* chosen by the caller */
    uint8_t nonce_callee[MD_AUTH_NONCE_LEN]; /* chosen by the callee */
    char uuid_caller[MGMT_UUID_MAX + 1];     /* the caller's node id */
    char uuid_callee[MGMT_UUID_MAX + 1];     /* the callee's node id */
};

/* The callee's state of one connection's exchange. */
struct md_auth_conn {
    pthread_mutex_t mu;      /* guards what follows (records of one
                                connection may be handled concurrently) */
    bool has_hello;          /* step 1 answered; ctx holds its inputs */
    bool is_peer;            /* step 2 proved the secret */
    struct md_auth_ctx ctx;  /* nonces and uuids of step 1 */
};

/* ---- the secret ---- */

/* Parses 64 hex digits (surrounding white space allowed). 0 or -EINVAL. */
int md_auth_secret_parse(const char *text, size_t len,
                         uint8_t out[MD_AUTH_SECRET_LEN] /* OUT */);
/* Makes <state_dir>/secret (32 random bytes, hex, mode 0600, written
 * with write+fsync+rename) if it is missing, checks it and remembers
 * state_dir and node_id for md_auth_secret_get and the exchanges. */
int md_auth_init(const char *state_dir, const char *node_id, vl_err_t *err);
/* The current secret: the file is read again when it changed (a copy
 * from a pool member takes effect without a restart). 0 or -errno with
 * err set ("STATE/secret: mode 0644 ..."). */
int md_auth_secret_get(uint8_t out[MD_AUTH_SECRET_LEN] /* OUT */,
                       vl_err_t *err);

/* ---- proofs ---- */

/* HMAC-SHA256(secret, label of side, both nonces, both uuids). */
void md_auth_proof(const uint8_t secret[MD_AUTH_SECRET_LEN],
                   enum md_auth_side side, const struct md_auth_ctx *ctx,
                   uint8_t out[MD_AUTH_PROOF_LEN] /* OUT */);
/* True if proof (len bytes, from the wire) is side's proof of ctx;
 * compared in constant time. */
bool md_auth_proof_ok(const uint8_t secret[MD_AUTH_SECRET_LEN],
                      enum md_auth_side side, const struct md_auth_ctx *ctx,
                      const uint8_t *proof, size_t len);

/* ---- the callee (server.c) ---- */

/* One AUTH reply: rsp points into the fields below, so that it stays
 * valid however the connection's state changes before it is sent. */
struct md_auth_answer {
    mgmt_auth_rsp rsp;                   /* to send; do not xdr_free */
    char uuid[MGMT_UUID_MAX + 1];        /* the callee's node id */
    uint8_t nonce[MD_AUTH_NONCE_LEN];    /* the callee's nonce */
    uint8_t proof[MD_AUTH_PROOF_LEN];    /* the callee's proof */
};

void md_auth_conn_init(struct md_auth_conn *ac);
void md_auth_conn_clear(struct md_auth_conn *ac);
bool md_auth_conn_is_peer(struct md_auth_conn *ac);
/* Answers one AUTH call of the connection in ans. from names the caller
 * in logs. */
void md_auth_serve(struct md_auth_conn *ac, const mgmt_auth_req *req,
                   const char *from, struct md_auth_answer *ans /* OUT */);

/* ---- the caller (peer.c) ---- */

/* One blocking AUTH call on the caller's connection: 0 with rsp filled
 * (free with xdr_free), or -errno. */
typedef int md_auth_call_fn(void *arg, mgmt_auth_req *req,
                            mgmt_auth_rsp *rsp /* OUT */);
/* Runs both steps through call. 0: the callee proved the secret and
 * accepted this node's proof. -EACCES: the secrets differ (err says
 * "does not share this pool's secret"); other -errno from call or the
 * secret file, with err set. */
int md_auth_prove(md_auth_call_fn *call, void *arg, vl_err_t *err);

#endif /* MORTARD_AUTH_H */
