/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz: what the libFuzzer targets of tests/fuzz share.
 *
 * FUZZ_CHECK is the targets' assert: a broken invariant aborts (libFuzzer
 * saves the input), whatever NDEBUG says. fuzz_xdr_roundtrip checks that
 * a value a decoder accepted encodes again, in exactly the bytes it was
 * decoded from, and decodes again (so the decoder neither accepted what
 * the encoder cannot write nor misread a length).
 */
#ifndef MORTAR_FUZZ_H
#define MORTAR_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <rpc/rpc.h>

#define FUZZ_CHECK(cond)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,          \
                    __LINE__, #cond);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

/* The input read front to back: fuzz_take_u8 gives 0 once it is used up. */
struct fuzz_in {
    const uint8_t *p;
    size_t len;
};

static inline uint8_t
fuzz_take_u8(struct fuzz_in *in)
{
    uint8_t v;

    if (in->len == 0)
        return 0;
    v = in->p[0];
    in->p++;
    in->len--;
    return v;
}

/* res (res_size bytes) was decoded by fn from the used bytes at in;
 * aborts unless it round-trips as said above. */
void fuzz_xdr_roundtrip(xdrproc_t fn, void *res, size_t res_size,
                        const char *in, size_t used);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif /* MORTAR_FUZZ_H */
