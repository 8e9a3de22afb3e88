/* SPDX-License-Identifier: GPL-2.0-or-later */
/* server: private types of protocol/server (server.c, server-fops.c). */
#ifndef MORTAR_PROTOCOL_SERVER_H
#define MORTAR_PROTOCOL_SERVER_H

#include <pthread.h>
#include <stdatomic.h>

#include "vol/vol.h"
#include "vrpc.h"

struct server_conf {
    uint64_t listen_port;  /* transport.socket.listen-port */
    char *bind_address;    /* transport.socket.bind-address */
    char *auth_allow;      /* auth.addr.*.allow patterns */
    char *auth_reject;     /* auth.addr.*.reject patterns, or NULL */
    bool is_insecure_ok;   /* allow-insecure: unprivileged ports too */
    bool is_root_squash;   /* root-squash: uid/gid 0 become anon */
    bool is_all_squash;    /* all-squash: every uid/gid becomes anon */
    uint64_t anonuid;      /* anonuid: the squashed uid */
    uint64_t anongid;      /* anongid: the squashed gid */
    bool is_ssl;           /* ssl (server.ssl): clients speak TLS */
    char *ssl_own_cert;    /* ssl.own-cert */
    char *ssl_private_key; /* ssl.private-key */
    char *ssl_ca_list;     /* ssl.ca-list */
    char *ssl_cipher_list; /* ssl.cipher-list, or NULL */
    char *ssl_allow;       /* auth.ssl-allow: certificate CN patterns */
    uint64_t inode_lru_limit; /* inode-lru-limit: the brick's table */
    uint64_t keepalive_time;  /* keepalive-time (s; 0: no probes) */
    uint64_t keepalive_intvl; /* keepalive-interval (s) */
    uint64_t keepalive_count; /* keepalive-count */
    uint64_t user_timeout;    /* tcp-user-timeout (s; 0: the kernel's) */
};

struct server_client;

struct server_priv {
    vl_xlator_t *xl;                  /* borrowed; this translator */
    vrpc_listener_t *listener;        /* owned */
    vrpc_tls_t *tls;                  /* owned with server.ssl, else NULL;
                                         set at init, read-only after */
    pthread_mutex_t lock;             /* guards clients, the two ids,
                                         keepalive */
    struct server_client *clients;    /* list of connected clients */
    struct vrpc_keepalive keepalive;  /* what every client socket gets
                                         (the options; reconfigure sets
                                         it and the live sockets) */
    uint64_t next_client_id;          /* ids handed to connections */
    uint32_t next_cbk_xid;            /* xids of brick -> client calls */
    atomic_long n_inflight;           /* requests wound and not answered */
};

struct server_client {
    struct server_client *next;  /* priv->clients list; priv->lock */
    struct server_client *prev;  /* priv->clients list; priv->lock */
    atomic_int refs;             /* connection + requests in flight */
    struct server_priv *priv;    /* borrowed; outlives every client */
    vrpc_conn_t *conn;           /* owned ref */
    uint64_t client_id;          /* req->caller.client_id */
    uint16_t peer_port;          /* the client's source port */
    atomic_uint proto_version;   /* negotiated at SETVOLUME (MRT_PROTO_MIN
                                    ..MRT_PROTO_VERSION); below 8 no
                                    compound procedure is decoded */
    /* Its identity claims (uid, gids, VL_CALLER_PID_INTERNAL) may be
     * believed: it comes from a privileged port, which only root can
     * bind (server-squash.c), or, with server.ssl, it showed a
     * certificate auth.ssl-allow names. Set at accept and at a
     * successful SETVOLUME (under lock, before is_bound); read-only
     * once bound. */
    bool is_trusted;
    pthread_mutex_t lock;        /* guards the fields below */
    bool is_bound;               /* SETVOLUME succeeded */
    bool is_gone;                /* disconnected: no new fds */
    vl_fd_t **fds;               /* owned refs; wire fd number = index */
    size_t n_fds;                /* slots in fds */
};

/* server.c */
struct server_client *server_client_ref(struct server_client *cl);
void server_client_unref(struct server_client *cl);
bool server_client_is_bound(struct server_client *cl);
/* Adds fd (takes the caller's ref); *out_no the wire number. */
int server_fd_add(struct server_client *cl, vl_fd_t *fd, uint64_t *out_no);
/* A new ref on fd number no, or NULL. */
vl_fd_t *server_fd_get(struct server_client *cl, uint64_t no);
/* Removes fd number no (drops the table's ref); -EBADF if absent. */
int server_fd_del(struct server_client *cl, uint64_t no);

/* server-squash.c */
/* True for a source port only root can bind (< 1024). */
bool server_port_is_privileged(uint16_t port);
/* Applies the squash options to a caller decoded from a client's call:
 * from an untrusted connection VL_CALLER_PID_INTERNAL is dropped (pid
 * 0); all-squash maps every uid and gid, root-squash uid 0 and gid 0
 * (supplementary groups included) to anonuid/anongid, except for
 * VL_CALLER_PID_INTERNAL from a trusted connection. */
void server_caller_squash(const struct server_conf *conf, bool is_trusted,
                          struct vl_caller *caller /* IN/OUT */);

/* server-fops.c: handles one call of MRT_FOPS_PROG. */
void server_fop_call(struct server_client *cl,
                     const struct vrpc_call_hdr *hdr, vl_buf_t *rec,
                     size_t body_off, size_t len);

#endif
