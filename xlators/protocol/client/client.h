/* SPDX-License-Identifier: GPL-2.0-or-later */
/* client: private types of protocol/client (client.c, client-fops.c). */
#ifndef MORTAR_PROTOCOL_CLIENT_H
#define MORTAR_PROTOCOL_CLIENT_H

#include <pthread.h>
#include <stdatomic.h>

#include "vol/vol.h"
#include "vrpc.h"

#define CLIENT_BACKOFF_START_MS 100
#define CLIENT_BACKOFF_MAX_MS 5000

struct client_conf {
    char *remote_host;           /* remote-host */
    uint64_t remote_port;        /* remote-port */
    char *remote_subvolume;      /* remote-subvolume */
    uint64_t ping_timeout_ms;    /* ping-timeout; 0 disables */
    uint64_t connect_timeout_ms; /* transport.socket.connect-timeout */
    bool is_ssl;                 /* ssl (client.ssl): speak TLS */
    char *ssl_own_cert;          /* ssl.own-cert; read at init only */
    char *ssl_private_key;       /* ssl.private-key; init only */
    char *ssl_ca_list;           /* ssl.ca-list; init only */
    char *ssl_cipher_list;       /* ssl.cipher-list or NULL; init only */
    bool is_ssl_check_host;      /* ssl.check-host: the brick's
                                    certificate must name remote-host */
    uint64_t inode_lru_limit;    /* inode-lru-limit: the graph's table */
    uint64_t keepalive_time;     /* keepalive-time (s; 0: none); lock */
    uint64_t keepalive_intvl;    /* keepalive-interval (s); lock */
    uint64_t keepalive_count;    /* keepalive-count; lock */
    uint64_t user_timeout;       /* tcp-user-timeout (s; 0: the kernel's);
                                    lock */
};

struct client_priv {
    atomic_int refs;            /* fini's, the tick timer's, the clnt's */
    vl_xlator_t *xl;            /* borrowed; this translator */
    struct client_conf conf;    /* copy of the options (strings owned);
                                   the live ones guarded by lock */
    vrpc_tls_t *tls;            /* owned with client.ssl, else NULL; set
                                   at init, read-only after */
    pthread_mutex_t lock;       /* guards every field below */
    vrpc_clnt_t *clnt;          /* owned ref; the current connection */
    bool is_connected;          /* SETVOLUME accepted on clnt */
    bool is_up;                 /* CHILD_UP sent, CHILD_DOWN not yet */
    bool is_started;            /* PARENT_UP seen */
    bool is_stopping;           /* PARENT_DOWN or fini: no reconnects */
    uint64_t generation;        /* bumped at each accepted handshake */
    uint32_t proto_sent;        /* the version clnt's SETVOLUME offered:
                                   MRT_PROTO_VERSION, then the brick's
                                   own if it is older (down to
                                   MRT_PROTO_MIN) */
    uint32_t proto_version;     /* accepted on clnt (is_connected);
                                   below 8 no compound is sent */
    uint64_t backoff_ms;        /* next reconnect delay */
    uint64_t next_connect_ms;   /* when to try again (no clnt) */
    uint64_t connect_start_ms;  /* when clnt started connecting */
    bool is_link_up;            /* clnt's connect (and TLS handshake)
                                   succeeded: a close before SETVOLUME's
                                   answer is the brick's doing */
    vl_timer_t *tick;           /* periodic: reconnect, ping, timeouts */
    int n_ticking;              /* client_tick calls running */
    int n_notifying;            /* connection callbacks that saw
                                   !is_stopping and still use xl
                                   (notify parents, log) */
    pthread_cond_t tick_cond;   /* signalled when n_ticking or
                                   n_notifying drops */
    atomic_bool is_resvport_warned; /* said no privileged port was had */
};

/* Per fd (cls->fd_ctx_size), guarded by fd->lock. */
struct client_fd {
    uint64_t remote_fd;  /* the brick's number for this fd */
    uint64_t generation; /* connection it was opened on; 0 = never */
    bool is_dir;         /* opened with OPENDIR */
};

/* Per request (VL_REQ_PRIV). */
struct client_local {
    uint64_t generation;  /* of the connection the call went out on */
    bool is_cpd;          /* sent as a compound procedure (protocol 8) */
    vl_fd_t *reopen_fd;   /* borrowed; fd being re-opened, or NULL */
};

/* client.c */
void client_priv_unref(struct client_priv *priv);
/* The current connection (new ref) and generation, or NULL if the
 * handshake has not completed. */
vrpc_clnt_t *client_get_conn(struct client_priv *priv, uint64_t *gen);
/* As client_get_conn, with the protocol version the brick accepted. */
vrpc_clnt_t *client_get_conn_proto(struct client_priv *priv, uint64_t *gen,
                                   uint32_t *proto);
/* The version to fall back to when a brick refused version sent with
 * error text err ("... (brick speaks N)"): N if MRT_PROTO_MIN <= N <
 * sent, else 0 (no retry). */
uint32_t client_proto_fallback(uint32_t sent, const char *err);

/* client-bind.c */
/* Starts a non-blocking connect to remote-host:remote-port from a
 * privileged source port when one can be had (else an ephemeral one,
 * logged once); *fd_out is connecting or connected. -errno with err set
 * ("host:port: Connection refused"). */
int client_connect_start(struct client_priv *priv, int *fd_out,
                         vl_err_t *err);

/* client-fops.c */
/* Sends any fop to the brick (every slot of the class points here). */
void client_fop(vl_xlator_t *xl, vl_req_t *req);
void client_release(vl_xlator_t *xl, vl_fd_t *fd);

#endif
