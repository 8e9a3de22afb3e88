/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vrpc: Mortar's RPC transport (doc/wire-protocol.md).
 *
 *   record.c  ONC-RPC record marking parser (pure, fed bytes or filled
 *             directly by read(2))
 *   conn.c    one non-blocking TCP connection on a vl_loop: lifetime,
 *             input parser, close, connect completion
 *   conn-out.c  its mutex-guarded output queue (conn-int.h: shared state)
 *   conn-tls.c  its TLS side (handshake, SSL_read/SSL_write), when on
 *   tls.c     OpenSSL contexts per role, reloaded when the files change
 *   msg.c     ONC-RPC call/reply headers and the caller credential
 *   clnt.c    calls in flight on a connection, matched by XID
 *   listen.c  listening socket and outgoing connect
 *   stream.c  a blocking client's socket, clear or TLS, with deadlines
 *   conn-limits.c  what one connection may cost: record size, deadlines,
 *             unsent bytes, and the listener's connection count
 *   conv.c    conversions between libvol types and XDR types
 *
 * Threads: every callback runs on a loop thread; vrpc_conn_send and
 * vrpc_clnt_call may be called from any thread.
 */
#ifndef VRPC_H
#define VRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <rpc/rpc.h>

#include "mortar.h"
#include "vol/vol.h"

/* Largest record accepted: a 16 MiB payload plus headers. */
#define VRPC_MAX_RECORD (16 * VL_MiB + 64 * VL_KiB)
/* Largest bulk payload (write data, read reply data). */
#define VRPC_MAX_PAYLOAD (16 * VL_MiB)
#define VRPC_LAST_FRAG 0x80000000u

/* ---- record marking (record.c) ---- */

struct vrpc_rm {
    uint8_t mark[4];    /* partial fragment header */
    unsigned n_mark;    /* bytes of mark received */
    vl_buf_t *rec;      /* owned; the record being assembled */
    size_t len;         /* bytes of rec filled */
    size_t frag_left;   /* bytes of the current fragment still expected */
    bool in_frag;       /* reading a fragment body */
    bool is_last;       /* the current fragment ends the record */
    size_t max;         /* largest record accepted */
    size_t charged;     /* bytes of rec counted in the process total */
    size_t refused;     /* size of the last record refused (for logs) */
    uint64_t n_done;    /* records completed */
};

/* Cap on the bytes every parser of the process holds for incomplete
 * records (VRPC_BUFFERED_MAX unless set); a mark that would pass it is
 * refused with -ENOBUFS and that connection closed. */
void vrpc_set_buffered_max(size_t max);
size_t vrpc_buffered_max(void);
size_t vrpc_buffered_bytes(void);

void vrpc_rm_init(struct vrpc_rm *rm, size_t max);
void vrpc_rm_clear(struct vrpc_rm *rm);
/* Consumes up to len bytes, stopping right after a record completes.
 * Returns 1 with *out (one ref, the caller's) and *out_len when a record
 * completed, 0 when all bytes were consumed without completing one,
 * -EMSGSIZE for a record over max, -ENOBUFS for one that would take the
 * process over its cap, -ENOMEM. *used gets the bytes eaten. */
int vrpc_rm_feed(struct vrpc_rm *rm, const char *data, size_t len,
                 size_t *used /* OUT */, vl_buf_t **out /* OUT */,
                 size_t *out_len /* OUT */);
/* When a fragment body is expected, where its bytes may be read to
 * directly and how many; 0 otherwise. */
size_t vrpc_rm_direct(struct vrpc_rm *rm, char **ptr /* OUT */);
/* Accounts n bytes read at the vrpc_rm_direct pointer; returns like feed. */
int vrpc_rm_direct_done(struct vrpc_rm *rm, size_t n, vl_buf_t **out,
                        size_t *out_len);

/* ---- connection (conn.c) ---- */

typedef struct vrpc_conn vrpc_conn_t;

struct vrpc_conn_ops {
    /* Connect finished: status 0 or -errno (then on_close follows). */
    void (*on_connect)(vrpc_conn_t *c, int status, void *arg);
    /* A complete record; rec is borrowed (ref it to keep). */
    void (*on_record)(vrpc_conn_t *c, vl_buf_t *rec, size_t len, void *arg);
    /* The connection is closed (EOF, error, garbage, vrpc_conn_close);
     * called exactly once, after which no callback runs. */
    void (*on_close)(vrpc_conn_t *c, int reason, void *arg);
};

/* Takes fd (closed on failure too), makes it non-blocking with
 * TCP_NODELAY and large buffers. With is_connecting, waits for the
 * connect to finish and reports it through on_connect. The connection
 * has one ref (the caller's) and does nothing until vrpc_conn_start. */
int vrpc_conn_new(vl_loop_t *loop, int fd, bool is_connecting,
                  const struct vrpc_conn_ops *ops, void *arg,
                  vrpc_conn_t **out /* OUT */);
int vrpc_conn_start(vrpc_conn_t *c);
vrpc_conn_t *vrpc_conn_ref(vrpc_conn_t *c);
void vrpc_conn_unref(vrpc_conn_t *c); /* NULL is allowed */
/* Sends the concatenation of iov as one record (the mark is added).
 * Bytes not written at once are copied, so iov is free on return.
 * 0, -ENOTCONN (closed), -EMSGSIZE or -ENOMEM. */
int vrpc_conn_send(vrpc_conn_t *c, const struct iovec *iov, int n_iov);
/* Like vrpc_conn_send, but segments lying inside keep (may be NULL) are
 * not copied when the socket is full: the queue takes a ref on keep and
 * sends from it, so keep's bytes must not change until it is released.
 * Other segments are copied as above. */
int vrpc_conn_send_buf(vrpc_conn_t *c, const struct iovec *iov, int n_iov,
                       vl_buf_t *keep);
/* Idempotent; on_close runs (once) with reason. Safe from any thread,
 * including callbacks. Outside c's own callbacks it returns only once
 * on_close has run, whoever started the close. */
void vrpc_conn_close(vrpc_conn_t *c, int reason);
/* "127.0.0.1:41000": the peer, for logs and auth. */
const char *vrpc_conn_peer(const vrpc_conn_t *c);
/* The peer's numeric address only ("127.0.0.1"). */
const char *vrpc_conn_peer_addr(const vrpc_conn_t *c);
bool vrpc_conn_is_closed(vrpc_conn_t *c);

/* How a side finds a peer that went silent (a cut network, a machine
 * off) while it has nothing to send: after idle_s without input, a
 * probe every intvl_s, closed after count probes unanswered, or
 * user_timeout_s after the last ACK when that is shorter; user_timeout_s
 * also bounds how long sent data may stay unacknowledged (0: the
 * kernel's retransmission limit, minutes). idle_s 0: no probes. */
struct vrpc_keepalive {
    unsigned idle_s;
    unsigned intvl_s;
    unsigned count;
    unsigned user_timeout_s;
};
/* Sets ka on c's socket (any time, any thread holding a ref). 0 or
 * -errno of the first setsockopt that failed. */
int vrpc_conn_set_keepalive(vrpc_conn_t *c, const struct vrpc_keepalive *ka);

/* ---- TLS on a connection (conn-tls.c; contexts in tls.h) ---- */

typedef struct vrpc_tls vrpc_tls_t;
/* Before vrpc_conn_start: the connection speaks TLS as t's role (a
 * server accepts, a client connects). It is not up (no record, no
 * client on_connect) until the handshake completes; a failed or late
 * (10 s) handshake closes it, with OpenSSL's reason logged and kept for
 * vrpc_conn_tls_error. -errno with err set. */
/* host: what a client dialled (NULL on servers), checked against the
 * server's certificate when t says so (tls.h, check_host). */
int vrpc_conn_set_tls(vrpc_conn_t *c, vrpc_tls_t *t, const char *host,
                      vl_err_t *err);
bool vrpc_conn_is_tls(const vrpc_conn_t *c);
/* The common name of the peer's verified certificate, or NULL (no TLS,
 * or the handshake is not done). Valid while c is. */
const char *vrpc_conn_tls_peer_cn(vrpc_conn_t *c);
/* Why the TLS side failed ("127.0.0.1:24010: TLS handshake failed:
 * certificate verify failed (...)"), or "" into buf. */
void vrpc_conn_tls_error(vrpc_conn_t *c, char *buf, size_t len);

/* ---- limits (conn-limits.c, listen.c; doc/wire-protocol.md, Limits) ----
 *
 * What a peer may make a connection cost. Over any limit the connection
 * is closed and one line logged (who, which limit, the figures). A
 * connection made by vrpc_conn_new has max_record VRPC_MAX_RECORD and no
 * other limit (a client trusts the server it chose); servers give their
 * connections one of the per-program sets below. */
struct vrpc_limits {
    size_t max_record;   /* largest record accepted, bytes */
    size_t max_out;      /* unsent bytes queued for a peer that does not
                            read; 0: no cap */
    unsigned record_ms;  /* a record begun must be whole within this;
                            0: no deadline */
    unsigned idle_ms;    /* closed after this long with no call
                            unanswered and nothing received; 0: never */
    unsigned max_conns;  /* a listener's connections open at once;
                            0: no cap (ignored on a connection) */
};

/* Default process cap on bytes held in incomplete records. */
#define VRPC_BUFFERED_MAX (512 * VL_MiB)
/* mortard's: its calls are small. */
#define VRPC_MGMT_BUFFERED_MAX (64 * VL_MiB)

/* A brick's connection until SETVOLUME succeeds: handshake-sized records,
 * 10 s to send them. */
extern const struct vrpc_limits vrpc_limits_brick_hs;
/* A brick's connection once bound: WRITE-sized records, idle for ever. */
extern const struct vrpc_limits vrpc_limits_brick;
/* mortard (management program): 1 MiB records, idle 120 s. */
extern const struct vrpc_limits vrpc_limits_mgmt;

/* Applies lim to c (max_conns aside). Any time, from any thread: a larger
 * max_record applies from the next read, deadlines from now on. */
void vrpc_conn_set_limits(vrpc_conn_t *c, const struct vrpc_limits *lim);

/* ---- messages (msg.c) ---- */

/* accept_stat of RFC 5531 */
enum vrpc_accept {
    VRPC_SUCCESS = 0,
    VRPC_PROG_UNAVAIL = 1,
    VRPC_PROG_MISMATCH = 2,
    VRPC_PROC_UNAVAIL = 3,
    VRPC_GARBAGE_ARGS = 4,
    VRPC_SYSTEM_ERR = 5,
};

struct vrpc_call_hdr {
    uint32_t xid;             /* transaction id */
    uint32_t prog;            /* program number */
    uint32_t vers;            /* program version */
    uint32_t proc;            /* procedure */
    bool has_caller;          /* credential was MRT_AUTH_CALLER */
    struct vl_caller caller;  /* from the credential (client_id 0) */
};

/* Decodes an RPC call header; *body_off is where the arguments start.
 * 0, or -EPROTO if this is not a well-formed RPC v2 call (the xid is still
 * filled when it could be read, *xid_ok says so). */
int vrpc_decode_call(const char *rec, size_t len,
                     struct vrpc_call_hdr *out /* OUT */,
                     size_t *body_off /* OUT */, bool *xid_ok /* OUT */);
/* Decodes an RPC reply header: 0 with *accept (enum vrpc_accept, or
 * -1 for a denied reply) or -EPROTO. */
int vrpc_decode_reply(const char *rec, size_t len, uint32_t *xid /* OUT */,
                      int *accept /* OUT */, size_t *body_off /* OUT */);
/* Encodes a call (header + args) into a vl_malloc'd buffer. */
int vrpc_encode_call(uint32_t xid, uint32_t prog, uint32_t vers,
                     uint32_t proc, const struct vl_caller *caller,
                     xdrproc_t fn, void *args, char **out /* OUT */,
                     size_t *out_len /* OUT */);
/* Encodes an accepted reply; fn/res only with VRPC_SUCCESS (fn may be
 * NULL for an empty result). */
int vrpc_encode_reply(uint32_t xid, enum vrpc_accept accept, xdrproc_t fn,
                      void *res, char **out /* OUT */,
                      size_t *out_len /* OUT */);
/* Encodes and sends a reply followed by payload bytes. */
int vrpc_send_reply(vrpc_conn_t *c, uint32_t xid, enum vrpc_accept accept,
                    xdrproc_t fn, void *res, const struct iovec *payload,
                    int n_payload);
/* The same, the payload segments inside keep sent by reference (see
 * vrpc_conn_send_buf). */
int vrpc_send_reply_buf(vrpc_conn_t *c, uint32_t xid,
                        enum vrpc_accept accept, xdrproc_t fn, void *res,
                        const struct iovec *payload, int n_payload,
                        vl_buf_t *keep);
/* Decodes body bytes with fn into res (zeroed by the caller). On success
 * *consumed gets the XDR bytes used (payload follows). -EPROTO on bad
 * input (res is freed again). Free res with xdr_free(fn, res). */
int vrpc_decode_body(const char *body, size_t len, xdrproc_t fn, void *res,
                     size_t *consumed /* OUT, may be NULL */);

/* ---- calls in flight (clnt.c) ---- */

typedef struct vrpc_clnt vrpc_clnt_t;

/* The one answer of a call: status 0 with the reply record (borrowed;
 * ref to keep) and the offset of the result in it, or -errno
 * (-ENOTCONN: connection lost; -EPROTO: the server rejected the call). */
typedef void vrpc_reply_fn(void *cookie, int status, vl_buf_t *rec,
                           size_t body_off, size_t len);
typedef void vrpc_clnt_event_fn(vrpc_clnt_t *clnt, int status, void *arg);

/* A client on fd (see vrpc_conn_new). on_connect reports the connect
 * result; on_close the end of the connection, after every call in flight
 * has been answered -ENOTCONN. */
int vrpc_clnt_new(vl_loop_t *loop, int fd, bool is_connecting,
                  vrpc_clnt_event_fn *on_connect, vrpc_clnt_event_fn *on_close,
                  void *arg, vrpc_clnt_t **out /* OUT */);
/* A call the server sent on this connection (rec borrowed; the
 * arguments start at body_off). Such calls are one way: none is
 * answered. */
typedef void vrpc_clnt_call_fn(vrpc_clnt_t *clnt,
                               const struct vrpc_call_hdr *hdr,
                               vl_buf_t *rec, size_t body_off, size_t len,
                               void *arg);
/* Before vrpc_clnt_start: who gets the server's calls. Without one, a
 * call from the server is a malformed reply (the connection closes). */
void vrpc_clnt_set_call_handler(vrpc_clnt_t *clnt, vrpc_clnt_call_fn *fn,
                                void *arg);
int vrpc_clnt_start(vrpc_clnt_t *clnt);
/* Sends a call; cb runs exactly once unless this returns non-zero (then
 * it never runs and the caller answers). payload follows the args. */
int vrpc_clnt_call(vrpc_clnt_t *clnt, uint32_t prog, uint32_t vers,
                   uint32_t proc, const struct vl_caller *caller,
                   xdrproc_t fn, void *args, const struct iovec *payload,
                   int n_payload, vrpc_reply_fn *cb, void *cookie);
/* The same, payload segments inside keep (may be NULL) sent by
 * reference (see vrpc_conn_send_buf). */
int vrpc_clnt_call_buf(vrpc_clnt_t *clnt, uint32_t prog, uint32_t vers,
                       uint32_t proc, const struct vl_caller *caller,
                       xdrproc_t fn, void *args, const struct iovec *payload,
                       int n_payload, vl_buf_t *keep, vrpc_reply_fn *cb,
                       void *cookie);
/* Closes the connection; calls in flight get -ENOTCONN. */
void vrpc_clnt_close(vrpc_clnt_t *clnt);
/* Drops the caller's ref (after close or on_close). */
void vrpc_clnt_unref(vrpc_clnt_t *clnt);
vrpc_clnt_t *vrpc_clnt_ref(vrpc_clnt_t *clnt);
size_t vrpc_clnt_pending(vrpc_clnt_t *clnt);
/* CLOCK_MONOTONIC milliseconds when the last record arrived. */
uint64_t vrpc_clnt_last_rx_ms(vrpc_clnt_t *clnt);
const char *vrpc_clnt_peer(vrpc_clnt_t *clnt);
/* The connection under clnt (borrowed; valid while clnt is). */
vrpc_conn_t *vrpc_clnt_conn(vrpc_clnt_t *clnt);

/* ---- sockets (listen.c) ---- */

typedef struct vrpc_listener vrpc_listener_t;
/* Gets an accepted fd (the callee owns it) and its peer. */
typedef void vrpc_accept_fn(int fd, const struct sockaddr_storage *peer,
                            void *arg);

/* Binds addr:port (addr numeric or a host name) and listens; err gets
 * "port 24010 in use" and the like. */
int vrpc_listen(vl_loop_t *loop, const char *addr, uint16_t port,
                vrpc_accept_fn *cb, void *arg, vrpc_listener_t **out,
                vl_err_t *err);
/* The same with limits for its connections (copied). Over max_conns an
 * accepted socket is closed at once, before cb (logged at most every
 * 10 s). *out is set before cb can first run, so cb may use it. */
int vrpc_listen_limits(vl_loop_t *loop, const char *addr, uint16_t port,
                       const struct vrpc_limits *lim, vrpc_accept_fn *cb,
                       void *arg, vrpc_listener_t **out, vl_err_t *err);
/* Gives c (just made from an fd l accepted, before vrpc_conn_start) l's
 * limits and counts it against l's max_conns until it closes. */
void vrpc_listener_adopt(vrpc_listener_t *l, vrpc_conn_t *c);
/* The bound port (useful with port 0). */
uint16_t vrpc_listener_port(const vrpc_listener_t *l);
/* Stops accepting; when it returns cb is not running. */
void vrpc_listener_free(vrpc_listener_t *l);
/* Starts a non-blocking connect; *fd_out is connecting or connected.
 * -errno with err set ("badhost: Name or service not known"). */
int vrpc_connect_start(const char *host, uint16_t port, int *fd_out,
                       vl_err_t *err);
uint64_t vrpc_now_ms(void);

/* ---- blocking client streams (stream.c) ----
 *
 * The management clients that make one call at a time (the CLI,
 * mortarfsd's volfile fetch, mortard's calls to peers) without an event
 * loop. A stream is clear text until vrpc_stream_tls_start. */
struct vrpc_stream {
    int fd;              /* owned connected socket, or -1 */
    struct ssl_st *ssl;  /* owned TLS session, or NULL: clear text */
    char why[200];       /* why TLS I/O failed ("TLS: tlsv1 alert
                            unknown ca"), or "" */
};

/* Makes s speak TLS as a client of t (certificate and CA list), the
 * handshake done by deadline_ms (vrpc_now_ms clock). -errno with err:
 * "TLS handshake failed: server certificate not trusted (...)", or
 * "... the server closed the connection (it does not speak TLS, or
 * refused this certificate)". */
int vrpc_stream_tls_start(struct vrpc_stream *s, vrpc_tls_t *t,
                          const char *host, uint64_t deadline_ms,
                          vl_err_t *err);
/* Writes (is_write) or reads exactly len bytes by deadline_ms. 0,
 * -ETIMEDOUT, -ECONNRESET (closed), -EPROTO (TLS error) or -errno; a
 * TLS failure's cause goes to s->why. */
int vrpc_stream_io(struct vrpc_stream *s, char *buf, size_t len,
                   bool is_write, uint64_t deadline_ms);
/* Frees the TLS session and closes fd; s may be closed already. */
void vrpc_stream_close(struct vrpc_stream *s);

/* ---- conversions (conv.c) ---- */

void vrpc_iatt_to_xdr(const struct vl_iatt *in, mrt_iatt *out);
void vrpc_iatt_from_xdr(const mrt_iatt *in, struct vl_iatt *out);
void vrpc_flock_to_xdr(const struct vl_flock *in, mrt_flock *out);
void vrpc_flock_from_xdr(const mrt_flock *in, struct vl_flock *out);
void vrpc_gfid_to_xdr(const vl_gfid_t *in, mrt_gfid out);
void vrpc_gfid_from_xdr(const mrt_gfid in, vl_gfid_t *out);
/* Fills a wire loc from a vl_loc (name borrowed, not copied). */
void vrpc_loc_to_xdr(const struct vl_loc *in, mrt_loc *out);
void vrpc_statvfs_to_xdr(const struct statvfs *in, mrt_statfs_rsp *out);
void vrpc_statvfs_from_xdr(const mrt_statfs_rsp *in, struct statvfs *out);
/* True if name is a usable entry name (non-empty, no '/'). */
bool vrpc_name_ok(const char *name);
/* For the arguments of op that did not decode: the errno a local file
 * system answers when the cause is a name over the wire's bound, so that
 * a brick answers it rather than GARBAGE_ARGS: -ENAMETOOLONG for an
 * entry name over MRT_NAME_MAX (either name of a rename or link) or a
 * symlink target over MRT_PATH_MAX, -ERANGE for an xattr name over
 * MRT_XATTR_NAME_MAX (as setxattr(2)). 0 for any other cause (such a
 * string must be whole in the record, so a cut record is not one). */
int vrpc_args_bound_errno(vl_fop_t op, const char *body, size_t len);

/* ---- per-fop wire types (fops.c) ---- */

enum vrpc_rsp_kind {
    VRPC_RSP_STATUS,   /* mrt_status_rsp */
    VRPC_RSP_IATT,     /* mrt_iatt_rsp */
    VRPC_RSP_FD,       /* mrt_fd_rsp */
    VRPC_RSP_COUNT,    /* mrt_count_rsp (read: data follows) */
    VRPC_RSP_READLINK, /* mrt_readlink_rsp */
    VRPC_RSP_READDIR,  /* mrt_readdir_rsp */
    VRPC_RSP_STATFS,   /* mrt_statfs_rsp */
    VRPC_RSP_GETXATTR, /* mrt_getxattr_rsp */
    VRPC_RSP_LK,       /* mrt_lk_rsp */
    VRPC_RSP_LSEEK,    /* mrt_lseek_rsp */
    VRPC_RSP_ENTRY,    /* mrt_entry_rsp (namespace fops, postparent) */
    VRPC_RSP_CREATE,   /* mrt_create_rsp */
    VRPC_RSP_LOOKUP,   /* mrt_lookup_rsp (content may follow) */
    VRPC_RSP_OPENDIR,  /* mrt_opendir_rsp (listing's content may follow) */
    VRPC_RSP_XATTROP,  /* mrt_xattrop_rsp */
    VRPC_RSP_RCHECKSUM, /* mrt_rchecksum_rsp */
    VRPC_RSP_CPD,      /* mrt_cpd_rsp (compound procedures) */
    VRPC_RSP_LOOKUP_XOP, /* mrt_lookup_xop_rsp (content may follow) */
};

/* Every reply starts with int status, so rsp.status.status is always it. */
union vrpc_fop_rsp {
    mrt_status_rsp status;
    mrt_iatt_rsp iatt;
    mrt_fd_rsp fd;
    mrt_count_rsp count;
    mrt_readlink_rsp readlink;
    mrt_readdir_rsp readdir;
    mrt_statfs_rsp statfs;
    mrt_getxattr_rsp getxattr;
    mrt_lk_rsp lk;
    mrt_lseek_rsp lseek;
    mrt_entry_rsp entry;
    mrt_create_rsp create;
    mrt_lookup_rsp lookup;
    mrt_opendir_rsp opendir;
    mrt_xattrop_rsp xattrop;
    mrt_rchecksum_rsp rchecksum;
    mrt_cpd_rsp cpd;
    mrt_lookup_xop_rsp lookup_xop; /* its lookup overlaps lookup */
};

union vrpc_fop_wargs {
    mrt_loc_args loc;
    mrt_lookup_args lookup;
    mrt_stat_args stat;
    mrt_setattr_args setattr;
    mrt_access_args access;
    mrt_readlink_args readlink;
    mrt_mknod_args mknod;
    mrt_mkdir_args mkdir;
    mrt_unlink_args unlink;
    mrt_symlink_args symlink;
    mrt_rename_args rename;
    mrt_link_args link;
    mrt_create_args create;
    mrt_open_args open;
    mrt_opendir_args opendir;
    mrt_read_args read;
    mrt_write_args write;
    mrt_fd_args fd;
    mrt_fsync_args fsync;
    mrt_readdir_args readdir;
    mrt_setxattr_args setxattr;
    mrt_getxattr_args getxattr;
    mrt_removexattr_args removexattr;
    mrt_lk_args lk;
    mrt_inodelk_args inodelk;
    mrt_entrylk_args entrylk;
    mrt_fallocate_args fallocate;
    mrt_copy_file_range_args copy_file_range;
    mrt_lseek_args lseek;
    mrt_xattrop_args xattrop;
    mrt_rchecksum_args rchecksum;
    mrt_inodelk_xop_args inodelk_xop;       /* MRT_PROC_INODELK_XOP */
    mrt_entrylk_xop_args entrylk_xop;       /* MRT_PROC_ENTRYLK_XOP */
    mrt_xattrop_unlock_args xattrop_unlock; /* MRT_PROC_XATTROP_UNLOCK */
    mrt_lookup_xop_args lookup_xop;         /* MRT_PROC_LOOKUP_XOP (9) */
};

struct vrpc_fop_desc {
    xdrproc_t args;          /* filter for the fop's args */
    enum vrpc_rsp_kind rsp;  /* shape of its reply */
};

/* Procedure number of fop op in MRT_FOPS_PROG, and back (-1 if none). */
#define VRPC_FOP_PROC(op) ((uint32_t)(op) + 1)
int vrpc_proc_to_fop(uint32_t proc);
const struct vrpc_fop_desc *vrpc_fop_desc(vl_fop_t op);
xdrproc_t vrpc_rsp_xdr(enum vrpc_rsp_kind kind);
/* Compound procedures (protocol 8; LOOKUP_XOP 9): the wire types of
 * MRT_PROC_*_XOP and MRT_PROC_XATTROP_UNLOCK and the fop each carries
 * (*op: INODELK, ENTRYLK, XATTROP or LOOKUP), NULL for another
 * procedure. */
const struct vrpc_fop_desc *vrpc_cpd_desc(uint32_t proc, vl_fop_t *op);
/* The protocol version a peer must have negotiated for compound
 * procedure proc (0 if proc is none). */
uint32_t vrpc_cpd_min_proto(uint32_t proc);
/* The compound procedure of op (0 if it has none). */
uint32_t vrpc_cpd_proc(vl_fop_t op);

#endif /* VRPC_H */
