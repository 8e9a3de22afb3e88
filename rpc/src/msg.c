/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * msg: ONC-RPC version 2 call and reply headers (RFC 5531) around Mortar's
 * XDR bodies.
 *
 * The headers are a handful of 32-bit words, so they are written and read
 * here by hand with explicit bounds; bodies go through rpcgen's filters on
 * an xdrmem stream over the record itself (no copy). The caller's identity
 * travels as the credential, flavour MRT_AUTH_CALLER, body mrt_caller.
 * Threads: pure functions, any thread.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "vrpc.h"

#define MSG_CALL 0
#define MSG_REPLY 1
#define RPC_VERS 2
#define MSG_ACCEPTED 0
#define MSG_DENIED 1
#define AUTH_MAX 400 /* RFC 5531 bound on opaque_auth bodies */

struct msg_rd {
    const char *p; /* record */
    size_t len;    /* bytes in p */
    size_t pos;    /* read position */
};


static bool
rd_u32(struct msg_rd *r, uint32_t *v)
{
    uint32_t be;

    if (r->len - r->pos < 4)
        return false;
    memcpy(&be, r->p + r->pos, 4);
    r->pos += 4;
    *v = ntohl(be);
    return true;
}


/* Reads an opaque_auth; returns its body through body/blen (borrowed). */
static bool
rd_auth(struct msg_rd *r, uint32_t *flavor, const char **body, uint32_t *blen)
{
    uint32_t padded;

    if (!rd_u32(r, flavor) || !rd_u32(r, blen) || *blen > AUTH_MAX)
        return false;
    padded = (*blen + 3) & ~3u;
    if (r->len - r->pos < padded)
        return false;
    *body = r->p + r->pos;
    r->pos += padded;
    return true;
}


static void
wr_u32(char **p, uint32_t v)
{
    uint32_t be = htonl(v);

    memcpy(*p, &be, 4);
    *p += 4;
}


int
vrpc_decode_body(const char *body, size_t len, xdrproc_t fn, void *res,
                 size_t *consumed)
{
    XDR x;

    if (len > UINT32_MAX)
        return -EPROTO;
    xdrmem_create(&x, (char *)body, (u_int)len, XDR_DECODE);
    if (!fn(&x, res)) {
        xdr_free(fn, res);
        xdr_destroy(&x);
        return -EPROTO;
    }
    if (consumed != NULL)
        *consumed = xdr_getpos(&x);
    xdr_destroy(&x);
    return 0;
}


int
vrpc_decode_call(const char *rec, size_t len, struct vrpc_call_hdr *out,
                 size_t *body_off, bool *xid_ok)
{
    struct msg_rd r = {.p = rec, .len = len};
    uint32_t type, vers, flavor, blen;
    const char *cred;

    memset(out, 0, sizeof(*out));
    *xid_ok = rd_u32(&r, &out->xid);
    if (!*xid_ok || !rd_u32(&r, &type) || type != MSG_CALL
        || !rd_u32(&r, &vers) || vers != RPC_VERS || !rd_u32(&r, &out->prog)
        || !rd_u32(&r, &out->vers) || !rd_u32(&r, &out->proc)
        || !rd_auth(&r, &flavor, &cred, &blen))
        return -EPROTO;
    if (flavor == MRT_AUTH_CALLER) {
        mrt_caller mc;

        memset(&mc, 0, sizeof(mc));
        if (vrpc_decode_body(cred, blen, (xdrproc_t)xdr_mrt_caller, &mc,
                             NULL) != 0)
            return -EPROTO;
        out->has_caller = true;
        out->caller.uid = mc.uid;
        out->caller.gid = mc.gid;
        out->caller.pid = mc.pid;
        out->caller.lk_owner = mc.lk_owner;
        out->caller.n_groups = mc.groups.groups_len;
        if (mc.groups.groups_len > 0)
            memcpy(out->caller.groups, mc.groups.groups_val,
                   mc.groups.groups_len * sizeof(uint32_t));
        xdr_free((xdrproc_t)xdr_mrt_caller, (char *)&mc);
    }
    /* The verifier is ignored but must be well-formed. */
    if (!rd_auth(&r, &flavor, &cred, &blen))
        return -EPROTO;
    *body_off = r.pos;
    return 0;
}


int
vrpc_decode_reply(const char *rec, size_t len, uint32_t *xid, int *accept,
                  size_t *body_off)
{
    struct msg_rd r = {.p = rec, .len = len};
    uint32_t type, stat, flavor, blen, as;
    const char *verf;

    if (!rd_u32(&r, xid) || !rd_u32(&r, &type) || type != MSG_REPLY
        || !rd_u32(&r, &stat))
        return -EPROTO;
    if (stat == MSG_DENIED) {
        *accept = -1;
        *body_off = r.pos;
        return 0;
    }
    if (stat != MSG_ACCEPTED || !rd_auth(&r, &flavor, &verf, &blen)
        || !rd_u32(&r, &as))
        return -EPROTO;
    *accept = (int)as;
    *body_off = r.pos;
    return 0;
}


int
vrpc_encode_call(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                 const struct vl_caller *caller, xdrproc_t fn, void *args,
                 char **out, size_t *out_len)
{
    mrt_caller mc = {0};
    unsigned long cred_len = 0, body_len;
    size_t total;
    char *buf, *p;
    XDR x;

    if (caller != NULL) {
        mc.uid = caller->uid;
        mc.gid = caller->gid;
        mc.pid = caller->pid;
        mc.lk_owner = caller->lk_owner;
        mc.groups.groups_len = caller->n_groups <= VL_MAX_GROUPS
                                   ? caller->n_groups
                                   : VL_MAX_GROUPS;
        mc.groups.groups_val = (u_int *)caller->groups;
        cred_len = xdr_sizeof((xdrproc_t)xdr_mrt_caller, &mc);
    }
    body_len = fn != NULL ? xdr_sizeof(fn, args) : 0;
    total = 10 * 4 + cred_len + body_len;
    buf = vl_malloc(NULL, total, VL_MT_MISC);
    if (buf == NULL)
        return -ENOMEM;
    p = buf;
    wr_u32(&p, xid);
    wr_u32(&p, MSG_CALL);
    wr_u32(&p, RPC_VERS);
    wr_u32(&p, prog);
    wr_u32(&p, vers);
    wr_u32(&p, proc);
    wr_u32(&p, caller != NULL ? MRT_AUTH_CALLER : 0);
    wr_u32(&p, (uint32_t)cred_len);
    if (caller != NULL) {
        xdrmem_create(&x, p, (u_int)cred_len, XDR_ENCODE);
        if (!xdr_mrt_caller(&x, &mc))
            goto fail;
        xdr_destroy(&x);
        p += cred_len;
    }
    wr_u32(&p, 0);
    wr_u32(&p, 0);
    if (fn != NULL) {
        xdrmem_create(&x, p, (u_int)body_len, XDR_ENCODE);
        if (!fn(&x, args))
            goto fail;
        xdr_destroy(&x);
    }
    *out = buf;
    *out_len = total;
    return 0;
fail:
    /* Only an argument over an XDR bound gets here. */
    xdr_destroy(&x);
    vl_free(buf);
    return -EINVAL;
}


int
vrpc_encode_reply(uint32_t xid, enum vrpc_accept accept, xdrproc_t fn,
                  void *res, char **out, size_t *out_len)
{
    unsigned long body_len = 0;
    size_t total;
    char *buf, *p;

    if (accept == VRPC_SUCCESS && fn != NULL)
        body_len = xdr_sizeof(fn, res);
    else if (accept == VRPC_PROG_MISMATCH)
        body_len = 8;
    total = 6 * 4 + body_len;
    buf = vl_malloc(NULL, total, VL_MT_MISC);
    if (buf == NULL)
        return -ENOMEM;
    p = buf;
    wr_u32(&p, xid);
    wr_u32(&p, MSG_REPLY);
    wr_u32(&p, MSG_ACCEPTED);
    wr_u32(&p, 0);
    wr_u32(&p, 0);
    wr_u32(&p, accept);
    if (accept == VRPC_PROG_MISMATCH) {
        wr_u32(&p, MRT_VERSION);
        wr_u32(&p, MRT_VERSION);
    } else if (body_len > 0) {
        XDR x;

        xdrmem_create(&x, p, (u_int)body_len, XDR_ENCODE);
        if (!fn(&x, res)) {
            xdr_destroy(&x);
            vl_free(buf);
            return -EINVAL;
        }
        xdr_destroy(&x);
    }
    *out = buf;
    *out_len = total;
    return 0;
}


int
vrpc_send_reply_buf(vrpc_conn_t *c, uint32_t xid, enum vrpc_accept accept,
                    xdrproc_t fn, void *res, const struct iovec *payload,
                    int n_payload, vl_buf_t *keep)
{
    struct iovec iov[9];
    char *hdr = NULL;
    size_t hdr_len = 0;
    int rc;

    if (n_payload > 8)
        return -EINVAL;
    rc = vrpc_encode_reply(xid, accept, fn, res, &hdr, &hdr_len);
    if (rc != 0)
        return rc;
    iov[0].iov_base = hdr;
    iov[0].iov_len = hdr_len;
    for (int i = 0; i < n_payload; i++)
        iov[i + 1] = payload[i];
    rc = vrpc_conn_send_buf(c, iov, n_payload + 1, keep);
    vl_free(hdr);
    return rc;
}


int
vrpc_send_reply(vrpc_conn_t *c, uint32_t xid, enum vrpc_accept accept,
                xdrproc_t fn, void *res, const struct iovec *payload,
                int n_payload)
{
    return vrpc_send_reply_buf(c, xid, accept, fn, res, payload, n_payload,
                               NULL);
}
