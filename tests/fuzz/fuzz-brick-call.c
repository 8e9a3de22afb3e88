/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-brick-call: what a brick decodes from any connection that reaches
 * its port, before SETVOLUME and after: one record (the input) taken
 * apart as protocol/server's server_on_record and server_fop_call do.
 *
 *   the RPC call header and credential (vrpc_decode_call);
 *   MRT_HANDSHAKE_PROG: SETVOLUME's mrt_setvolume_args;
 *   MRT_FOPS_PROG: RELEASE/RELEASEDIR's mrt_fd_args, and for every other
 *     procedure the argument type of rpc/src/fops.c's table (the one the
 *     server uses), WRITE's payload after it, the compound procedures
 *     of protocol 8 (INODELK_XOP, ENTRYLK_XOP, XATTROP_UNLOCK) and 9
 *     (LOOKUP_XOP) by vrpc_cpd_desc; when the arguments do not decode,
 *     vrpc_args_bound_errno reads them again as the server does.
 *
 * Checks: decoders stay inside the record, a credential's groups fit
 * struct vl_caller, everything decoded round-trips through XDR (fuzz.h)
 * and is freed. What the server does next needs a brick graph and is
 * left to the functional tests (garbage.t, names-too-long.t).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "vrpc.h"


/* Decodes body with fn as the server does; returns the bytes used or -1. */
static long
decode_args(const char *body, size_t len, xdrproc_t fn, void *res,
            size_t res_size)
{
    size_t used = 0;

    memset(res, 0, res_size);
    if (vrpc_decode_body(body, len, fn, res, &used) != 0)
        return -1;
    FUZZ_CHECK(used <= len);
    fuzz_xdr_roundtrip(fn, res, res_size, body, used);
    return (long)used;
}


static void
fops_call(const struct vrpc_call_hdr *hdr, const char *body, size_t len)
{
    union vrpc_fop_wargs wa;
    const struct vrpc_fop_desc *desc;
    vl_fop_t cpd_op;
    long used;
    int op;

    if (hdr->proc == MRT_PROC_RELEASE || hdr->proc == MRT_PROC_RELEASEDIR) {
        if (decode_args(body, len, (xdrproc_t)xdr_mrt_fd_args, &wa,
                        sizeof(wa)) >= 0)
            xdr_free((xdrproc_t)xdr_mrt_fd_args, (char *)&wa);
        return;
    }
    /* The compounds first, as server_fop_call does. */
    desc = vrpc_cpd_desc(hdr->proc, &cpd_op);
    if (desc != NULL) {
        op = (int)cpd_op;
    } else {
        op = vrpc_proc_to_fop(hdr->proc);
        if (op < 0)
            return;
        desc = vrpc_fop_desc((vl_fop_t)op);
        if (desc == NULL)
            return;
    }
    used = decode_args(body, len, desc->args, &wa, sizeof(wa));
    if (used < 0) {
        int rc = vrpc_args_bound_errno((vl_fop_t)op, body, len);

        FUZZ_CHECK(rc == 0 || rc == -ENAMETOOLONG || rc == -ERANGE);
        return;
    }
    if (desc->args == (xdrproc_t)xdr_mrt_xattrop_args)
        FUZZ_CHECK(wa.xattrop.keys.keys_len <= MRT_XATTROP_MAX);
    else if (desc->args == (xdrproc_t)xdr_mrt_inodelk_xop_args)
        FUZZ_CHECK(wa.inodelk_xop.xop.keys.keys_len <= MRT_XATTROP_MAX);
    else if (desc->args == (xdrproc_t)xdr_mrt_entrylk_xop_args)
        FUZZ_CHECK(wa.entrylk_xop.xop.keys.keys_len <= MRT_XATTROP_MAX);
    else if (desc->args == (xdrproc_t)xdr_mrt_xattrop_unlock_args)
        FUZZ_CHECK(wa.xattrop_unlock.xop.keys.keys_len <= MRT_XATTROP_MAX);
    else if (desc->args == (xdrproc_t)xdr_mrt_lookup_xop_args)
        FUZZ_CHECK(wa.lookup_xop.xop.keys.keys_len <= MRT_XATTROP_MAX);
    xdr_free(desc->args, (char *)&wa);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *rec = (const char *)data;
    struct vrpc_call_hdr hdr;
    size_t off = 0;
    bool xid_ok = false;

    if (vrpc_decode_call(rec, size, &hdr, &off, &xid_ok) != 0)
        return 0;
    FUZZ_CHECK(xid_ok);
    FUZZ_CHECK(off <= size);
    FUZZ_CHECK(hdr.caller.n_groups <= VL_MAX_GROUPS);
    if (hdr.vers != MRT_VERSION)
        return 0;
    if (hdr.prog == MRT_HANDSHAKE_PROG && hdr.proc == MRT_HS_SETVOLUME) {
        mrt_setvolume_args a;

        if (decode_args(rec + off, size - off,
                        (xdrproc_t)xdr_mrt_setvolume_args, &a,
                        sizeof(a)) >= 0)
            xdr_free((xdrproc_t)xdr_mrt_setvolume_args, (char *)&a);
    } else if (hdr.prog == MRT_FOPS_PROG) {
        fops_call(&hdr, rec + off, size - off);
    }
    return 0;
}
