/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-brick-reply: what a client (protocol/client over rpc/src/clnt.c)
 * decodes from a brick, which may be anyone at the address the volfile
 * names.
 *
 * Input: byte 0 says which call the record answers (a reply is decoded
 * with the type of the call its xid matched): 0-15 the fop reply kinds
 * of rpc/src/fops.c, 16 SETVOLUME, 17 PING; byte 1 feeds the request's
 * bounds (readdir's content_max, RCHECKSUM's range); the rest is the
 * record. A record whose message type is CALL is taken as the brick's
 * callback (MRT_CBK_BREAK_LEASE), as clnt_on_record does.
 *
 * After the XDR decode (round trip checked, fuzz.h) the readdir, opendir
 * listing and RCHECKSUM replies go through the client's own checks
 * (client_fill_dirents, client_fill_rchecksum), with the record's bytes
 * after the XDR as the content.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "vrpc.h"

/* protocol/client's checks of a reply that need no request
 * (client-fops.c, not static for this target). */
int client_fill_dirents(struct vl_reply *rp, const mrt_readdir_rsp *w,
                        vl_buf_t *rec, size_t data_off, size_t data_len,
                        uint32_t content_max);
int client_fill_rchecksum(struct vl_reply *rp, const mrt_rchecksum_rsp *w,
                          const struct vl_rchecksum_args *a);

#define KIND_SETVOLUME 16
#define KIND_PING 17
#define N_KINDS 18


static void
fill_listing(const mrt_readdir_rsp *w, vl_buf_t *rec, size_t data_off,
             size_t data_len, uint32_t content_max)
{
    struct vl_reply rp;
    int rc;

    memset(&rp, 0, sizeof(rp));
    rc = client_fill_dirents(&rp, w, rec, data_off, data_len, content_max);
    FUZZ_CHECK(rc == 0 || rc == -EPROTO);
    if (rc == 0) {
        /* Every entry's content lies within the record. */
        for (size_t i = 0; i < rp.entries.n; i++) {
            const struct vl_dirent *e = &rp.entries.ents[i];

            if (e->has_content)
                FUZZ_CHECK(e->content_off >= data_off
                           && e->content_off + e->content_len
                                  <= data_off + data_len);
        }
    }
    vl_reply_clear(&rp);
}


static void
fill_rchecksum(const mrt_rchecksum_rsp *w, uint8_t bounds)
{
    struct vl_rchecksum_args a;
    struct vl_reply rp;
    int rc;

    /* A range the client could have asked: block 4 KiB << (0..8), a
     * length of 1 to 1024 blocks (or one byte less). */
    memset(&a, 0, sizeof(a));
    a.block_size = 4096u << (bounds % 9);
    a.len = a.block_size * (1 + (bounds >> 4) * 68);
    if (a.len > VL_RCHECKSUM_LEN_MAX)
        a.len = VL_RCHECKSUM_LEN_MAX;
    if (bounds & 8)
        a.len--;
    a.offset = (uint64_t)a.block_size * (bounds & 3);
    if (vl_rchecksum_check(a.offset, a.len, a.block_size) != 0)
        return;
    memset(&rp, 0, sizeof(rp));
    rc = client_fill_rchecksum(&rp, w, &a);
    FUZZ_CHECK(rc == 0 || rc == -EPROTO);
    vl_reply_clear(&rp);
}


static void
reply(unsigned kind, uint8_t bounds, vl_buf_t *rec, size_t len)
{
    union {
        union vrpc_fop_rsp fop;
        mrt_setvolume_rsp setvolume;
        mrt_ping_rsp ping;
    } r;
    uint32_t xid;
    int accept;
    size_t off, used = 0;
    xdrproc_t fn;

    if (vrpc_decode_reply(rec->data, len, &xid, &accept, &off) != 0)
        return;
    FUZZ_CHECK(off <= len);
    if (accept != VRPC_SUCCESS)
        return;
    if (kind == KIND_SETVOLUME)
        fn = (xdrproc_t)xdr_mrt_setvolume_rsp;
    else if (kind == KIND_PING)
        fn = (xdrproc_t)xdr_mrt_ping_rsp;
    else
        fn = vrpc_rsp_xdr((enum vrpc_rsp_kind)kind);
    memset(&r, 0, sizeof(r));
    if (vrpc_decode_body(rec->data + off, len - off, fn, &r, &used) != 0)
        return;
    FUZZ_CHECK(used <= len - off);
    fuzz_xdr_roundtrip(fn, &r, sizeof(r), rec->data + off, used);
    if (kind == VRPC_RSP_READDIR && r.fop.readdir.status == 0)
        fill_listing(&r.fop.readdir, rec, off + used, len - off - used,
                     bounds * 1024u);
    else if (kind == VRPC_RSP_OPENDIR && r.fop.opendir.has_listing
             && r.fop.opendir.listing.status == 0)
        fill_listing(&r.fop.opendir.listing, rec, off + used,
                     len - off - used, bounds * 1024u);
    else if (kind == VRPC_RSP_RCHECKSUM && r.fop.rchecksum.status == 0)
        fill_rchecksum(&r.fop.rchecksum, bounds);
    xdr_free(fn, (char *)&r);
}


static void
callback(vl_buf_t *rec, size_t len)
{
    struct vrpc_call_hdr hdr;
    mrt_break_lease_args a;
    size_t off = 0, used = 0;
    bool xid_ok;

    if (vrpc_decode_call(rec->data, len, &hdr, &off, &xid_ok) != 0)
        return;
    FUZZ_CHECK(off <= len);
    if (hdr.prog != MRT_CALLBACK_PROG || hdr.proc != MRT_CBK_BREAK_LEASE)
        return;
    memset(&a, 0, sizeof(a));
    if (vrpc_decode_body(rec->data + off, len - off,
                         (xdrproc_t)xdr_mrt_break_lease_args, &a, &used) != 0)
        return;
    fuzz_xdr_roundtrip((xdrproc_t)xdr_mrt_break_lease_args, &a, sizeof(a),
                       rec->data + off, used);
    xdr_free((xdrproc_t)xdr_mrt_break_lease_args, (char *)&a);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    unsigned kind = fuzz_take_u8(&in) % N_KINDS;
    uint8_t bounds = fuzz_take_u8(&in);
    vl_buf_t *rec;

    /* The record lives in a vl_buf, as the connection hands it over. */
    rec = vl_buf_new(in.len > 0 ? in.len : 1);
    FUZZ_CHECK(rec != NULL);
    if (in.len > 0)
        memcpy(rec->data, in.p, in.len);
    if (in.len >= 8 && memcmp(rec->data + 4, "\0\0\0\0", 4) == 0)
        callback(rec, in.len);
    else
        reply(kind, bounds, rec, in.len);
    vl_buf_unref(rec);
    return 0;
}
