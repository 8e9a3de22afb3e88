/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-xdr: the XDR round trip of fuzz.h. */
#include "config.h"

#include <string.h>

#include "fuzz.h"
#include "vrpc.h"


/* Encodes res with fn into a new buffer of exactly xdr_sizeof bytes. */
static char *
xdr_encode_new(xdrproc_t fn, void *res, size_t *len)
{
    unsigned long n = xdr_sizeof(fn, res);
    char *buf = malloc(n > 0 ? n : 1);
    XDR x;

    FUZZ_CHECK(buf != NULL);
    xdrmem_create(&x, buf, (u_int)n, XDR_ENCODE);
    FUZZ_CHECK(fn(&x, res));
    FUZZ_CHECK(xdr_getpos(&x) == n);
    xdr_destroy(&x);
    *len = n;
    return buf;
}


void
fuzz_xdr_roundtrip(xdrproc_t fn, void *res, size_t res_size, const char *in,
                   size_t used)
{
    size_t n1, n2, used2 = 0;
    char *e1, *e2;
    void *res2;

    e1 = xdr_encode_new(fn, res, &n1);
    /* Shorter only when a string held a NUL: rpcgen's strings are C
     * strings, so "ab\0cd" on the wire is "ab" once decoded (what every
     * user of the value sees, so it is no hazard). The bytes may also
     * differ from the input's in XDR padding. */
    FUZZ_CHECK(n1 <= used);
    (void)in;
    res2 = calloc(1, res_size);
    FUZZ_CHECK(res2 != NULL);
    FUZZ_CHECK(vrpc_decode_body(e1, n1, fn, res2, &used2) == 0);
    FUZZ_CHECK(used2 == n1);
    e2 = xdr_encode_new(fn, res2, &n2);
    FUZZ_CHECK(n2 == n1 && memcmp(e1, e2, n1) == 0);
    xdr_free(fn, res2);
    free(res2);
    free(e1);
    free(e2);
}
