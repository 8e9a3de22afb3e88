/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-auth: the pool secret file (made 0600, re-read when replaced,
 * refused when others may read it or it is not 64 hex digits), the
 * proofs (a known answer pins the format; any changed input fails) and
 * both sides of the AUTH exchange, the callee refusing a wrong, replayed
 * or unannounced proof.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mortard/auth.h"
#include "mortard/mortard.h"

#define UUID_A "11111111-1111-1111-1111-111111111111"
#define UUID_B "22222222-2222-2222-2222-222222222222"

static char tmpdir[] = "/tmp/test-auth.XXXXXX";
static char secret_path[sizeof(tmpdir) + 16];


static void
ctx_fill(struct md_auth_ctx *ctx)
{
    memset(ctx, 0, sizeof(*ctx));
    memset(ctx->nonce_caller, 0xa1, sizeof(ctx->nonce_caller));
    memset(ctx->nonce_callee, 0xb2, sizeof(ctx->nonce_callee));
    strcpy(ctx->uuid_caller, UUID_A);
    strcpy(ctx->uuid_callee, UUID_B);
}


static void
secret_fill(uint8_t s[MD_AUTH_SECRET_LEN])
{
    for (int i = 0; i < MD_AUTH_SECRET_LEN; i++)
        s[i] = (uint8_t)i;
}


/* HMAC-SHA256 computed apart from the code (Python's hmac module) over
 * the message format auth.c documents: mortard's of two versions must
 * agree on it. */
static void
test_proof_known_answer(void **state)
{
    static const uint8_t caller[MD_AUTH_PROOF_LEN] = {
        0xf1, 0xf3, 0x5d, 0xcf, 0x38, 0x0d, 0xe0, 0xef, 0x0a, 0xab, 0x5f,
        0xcc, 0x7e, 0xa9, 0x3e, 0xaf, 0x65, 0x83, 0xf0, 0x96, 0xb9, 0xab,
        0xe5, 0x66, 0x85, 0xd2, 0xaf, 0xd7, 0xb6, 0x47, 0x35, 0x0b};
    static const uint8_t callee[MD_AUTH_PROOF_LEN] = {
        0x93, 0x0a, 0x2c, 0xc2, 0xc2, 0x7b, 0xdd, 0x7c, 0x19, 0x7a, 0x21,
        0x3e, 0xb6, 0x47, 0x92, 0x39, 0x23, 0x56, 0xad, 0x68, 0xb5, 0xb2,
        0xa8, 0x16, 0x95, 0x76, 0x32, 0xf8, 0xc6, 0xe7, 0x25, 0xac};
    uint8_t secret[MD_AUTH_SECRET_LEN], out[MD_AUTH_PROOF_LEN];
    struct md_auth_ctx ctx;

    (void)state;
    secret_fill(secret);
    ctx_fill(&ctx);
    md_auth_proof(secret, MD_AUTH_CALLER, &ctx, out);
    assert_memory_equal(out, caller, sizeof(out));
    md_auth_proof(secret, MD_AUTH_CALLEE, &ctx, out);
    assert_memory_equal(out, callee, sizeof(out));
}


static void
test_proof_inputs(void **state)
{
    uint8_t secret[MD_AUTH_SECRET_LEN], other[MD_AUTH_SECRET_LEN];
    uint8_t proof[MD_AUTH_PROOF_LEN];
    struct md_auth_ctx ctx, c2;

    (void)state;
    secret_fill(secret);
    memcpy(other, secret, sizeof(other));
    other[31] ^= 1;
    ctx_fill(&ctx);
    md_auth_proof(secret, MD_AUTH_CALLER, &ctx, proof);
    assert_true(md_auth_proof_ok(secret, MD_AUTH_CALLER, &ctx, proof,
                                 sizeof(proof)));
    /* Another secret, the other side's label, a short proof. */
    assert_false(md_auth_proof_ok(other, MD_AUTH_CALLER, &ctx, proof,
                                  sizeof(proof)));
    assert_false(md_auth_proof_ok(secret, MD_AUTH_CALLEE, &ctx, proof,
                                  sizeof(proof)));
    assert_false(md_auth_proof_ok(secret, MD_AUTH_CALLER, &ctx, proof,
                                  sizeof(proof) - 1));
    assert_false(md_auth_proof_ok(secret, MD_AUTH_CALLER, &ctx, NULL, 0));
    /* Each nonce and each uuid. */
    c2 = ctx;
    c2.nonce_caller[0] ^= 1;
    assert_false(md_auth_proof_ok(secret, MD_AUTH_CALLER, &c2, proof, 32));
    c2 = ctx;
    c2.nonce_callee[31] ^= 1;
    assert_false(md_auth_proof_ok(secret, MD_AUTH_CALLER, &c2, proof, 32));
    c2 = ctx;
    c2.uuid_caller[0] = '3';
    assert_false(md_auth_proof_ok(secret, MD_AUTH_CALLER, &c2, proof, 32));
    c2 = ctx;
    strcpy(c2.uuid_callee, UUID_A);
    assert_false(md_auth_proof_ok(secret, MD_AUTH_CALLER, &c2, proof, 32));
    /* The uuids are length-prefixed: moving a character from one to the
     * other changes the message. */
    c2 = ctx;
    strcpy(c2.uuid_caller, UUID_A "2");
    strcpy(c2.uuid_callee, UUID_B + 1);
    assert_false(md_auth_proof_ok(secret, MD_AUTH_CALLER, &c2, proof, 32));
}


static void
test_secret_parse(void **state)
{
    static const char hex[] =
        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    uint8_t want[MD_AUTH_SECRET_LEN], out[MD_AUTH_SECRET_LEN];
    char buf[128];

    (void)state;
    secret_fill(want);
    assert_int_equal(md_auth_secret_parse(hex, strlen(hex), out), 0);
    assert_memory_equal(out, want, sizeof(want));
    snprintf(buf, sizeof(buf), " %s\n", hex);
    for (char *p = buf; *p != '\0'; p++)
        if (*p >= 'a' && *p <= 'f')
            *p = (char)(*p - 'a' + 'A');
    assert_int_equal(md_auth_secret_parse(buf, strlen(buf), out), 0);
    assert_memory_equal(out, want, sizeof(want));
    assert_int_equal(md_auth_secret_parse(hex, 63, out), -EINVAL);
    snprintf(buf, sizeof(buf), "%s0", hex);
    assert_int_equal(md_auth_secret_parse(buf, strlen(buf), out), -EINVAL);
    snprintf(buf, sizeof(buf), "%s", hex);
    buf[10] = 'g';
    assert_int_equal(md_auth_secret_parse(buf, strlen(buf), out), -EINVAL);
    assert_int_equal(md_auth_secret_parse("", 0, out), -EINVAL);
}


static void
write_file(const char *path, const char *text, mode_t mode)
{
    char tmp[256];
    FILE *f;

    /* Replaced by a rename, as cp or an editor would make a new inode. */
    snprintf(tmp, sizeof(tmp), "%s.new", path);
    f = fopen(tmp, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(tmp, mode), 0);
    assert_int_equal(rename(tmp, path), 0);
}


static void
test_secret_file(void **state)
{
    uint8_t a[MD_AUTH_SECRET_LEN], b[MD_AUTH_SECRET_LEN];
    uint8_t parsed[MD_AUTH_SECRET_LEN];
    vl_err_t err = {.msg = ""};
    char *text = NULL;
    struct stat st;
    size_t len;

    (void)state;
    (void)unlink(secret_path);
    /* Made on first start: 0600, 64 hex digits and a newline. */
    assert_int_equal(md_auth_init(tmpdir, UUID_A, &err), 0);
    assert_int_equal(stat(secret_path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(md_read_file(secret_path, &text, &len), 0);
    assert_int_equal(len, 65);
    assert_int_equal(md_auth_secret_parse(text, len, parsed), 0);
    free(text);
    assert_int_equal(md_auth_secret_get(a, &err), 0);
    assert_memory_equal(a, parsed, sizeof(a));
    /* Kept across starts. */
    assert_int_equal(md_auth_init(tmpdir, UUID_A, &err), 0);
    assert_int_equal(md_auth_secret_get(b, &err), 0);
    assert_memory_equal(a, b, sizeof(a));
    /* Replaced by a pool member's copy: used without a restart. */
    write_file(secret_path, "000102030405060708090a0b0c0d0e0f"
               "101112131415161718191a1b1c1d1e1f\n", 0600);
    assert_int_equal(md_auth_secret_get(b, &err), 0);
    secret_fill(a);
    assert_memory_equal(a, b, sizeof(a));
    /* Readable by others: refused with the reason. */
    assert_int_equal(chmod(secret_path, 0644), 0);
    assert_int_equal(md_auth_secret_get(b, &err), -EPERM);
    assert_non_null(strstr(err.msg, "mode 0644"));
    assert_int_equal(md_auth_init(tmpdir, UUID_A, &err), -EPERM);
    assert_int_equal(chmod(secret_path, 0600), 0);
    /* Not a secret. */
    write_file(secret_path, "hello\n", 0600);
    assert_int_equal(md_auth_secret_get(b, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "expected 64 hex digits"));
    assert_int_equal(unlink(secret_path), 0);
    assert_int_equal(md_auth_secret_get(b, &err), -ENOENT);
}


/* ---- the exchange ---- */

/* Copies an answer through XDR, as the wire would, into an owned rsp. */
static int
xdr_copy_rsp(mgmt_auth_rsp *from, mgmt_auth_rsp *to)
{
    char buf[4096];
    XDR x;
    bool ok;

    xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
    ok = xdr_mgmt_auth_rsp(&x, from);
    xdr_destroy(&x);
    if (!ok)
        return -EPROTO;
    memset(to, 0, sizeof(*to));
    xdrmem_create(&x, buf, sizeof(buf), XDR_DECODE);
    ok = xdr_mgmt_auth_rsp(&x, to);
    xdr_destroy(&x);
    return ok ? 0 : -EPROTO;
}


/* A callee in this process: md_auth_serve on one connection state. */
static int
call_serve(void *arg, mgmt_auth_req *req, mgmt_auth_rsp *rsp)
{
    struct md_auth_conn *ac = arg;
    struct md_auth_answer ans;

    md_auth_serve(ac, req, "test", &ans);
    return xdr_copy_rsp(&ans.rsp, rsp);
}


/* A callee holding another secret: its proof is computed with it. */
static int
call_other_secret(void *arg, mgmt_auth_req *req, mgmt_auth_rsp *rsp)
{
    static uint8_t nonce[MD_AUTH_NONCE_LEN], proof[MD_AUTH_PROOF_LEN];
    uint8_t other[MD_AUTH_SECRET_LEN];
    struct md_auth_ctx ctx;
    mgmt_auth_rsp a = {.errstr = "", .uuid = UUID_B};

    (void)arg;
    assert_int_equal(req->step, MGMT_AUTH_HELLO);
    memset(&ctx, 0, sizeof(ctx));
    memcpy(ctx.nonce_caller, req->nonce.nonce_val, MD_AUTH_NONCE_LEN);
    memset(nonce, 7, sizeof(nonce));
    memcpy(ctx.nonce_callee, nonce, MD_AUTH_NONCE_LEN);
    strcpy(ctx.uuid_caller, req->uuid);
    strcpy(ctx.uuid_callee, UUID_B);
    memset(other, 0x5a, sizeof(other));
    md_auth_proof(other, MD_AUTH_CALLEE, &ctx, proof);
    a.nonce.nonce_len = MD_AUTH_NONCE_LEN;
    a.nonce.nonce_val = (char *)nonce;
    a.proof.proof_len = MD_AUTH_PROOF_LEN;
    a.proof.proof_val = (char *)proof;
    return xdr_copy_rsp(&a, rsp);
}


static void
fresh_secret(void)
{
    vl_err_t err = {.msg = ""};

    (void)unlink(secret_path);
    assert_int_equal(md_auth_init(tmpdir, UUID_A, &err), 0);
}


static void
test_exchange(void **state)
{
    struct md_auth_conn ac;
    vl_err_t err = {.msg = ""};

    (void)state;
    fresh_secret();
    md_auth_conn_init(&ac);
    assert_false(md_auth_conn_is_peer(&ac));
    assert_int_equal(md_auth_prove(call_serve, &ac, &err), 0);
    assert_true(md_auth_conn_is_peer(&ac));
    md_auth_conn_clear(&ac);

    /* The callee does not know the secret: the caller stops before
     * showing its own proof. */
    assert_int_equal(md_auth_prove(call_other_secret, NULL, &err), -EACCES);
    assert_string_equal(err.msg, "does not share this pool's secret");
}


/* A caller without the secret, driving the callee by hand. */
static void
test_callee_refuses(void **state)
{
    uint8_t secret[MD_AUTH_SECRET_LEN], proof[MD_AUTH_PROOF_LEN];
    uint8_t nonce[MD_AUTH_NONCE_LEN];
    struct md_auth_answer ans;
    struct md_auth_conn ac;
    struct md_auth_ctx ctx;
    vl_err_t err = {.msg = ""};
    mgmt_auth_req req = {.uuid = UUID_B};

    (void)state;
    fresh_secret();
    assert_int_equal(md_auth_secret_get(secret, &err), 0);
    md_auth_conn_init(&ac);

    /* A proof before any hello. */
    memset(proof, 1, sizeof(proof));
    req.step = MGMT_AUTH_PROVE;
    req.proof.proof_len = sizeof(proof);
    req.proof.proof_val = (char *)proof;
    md_auth_serve(&ac, &req, "test", &ans);
    assert_int_equal(ans.rsp.ret, -1);
    assert_int_equal(ans.rsp.op_errno, EPROTO);

    /* A short nonce. */
    req.step = MGMT_AUTH_HELLO;
    req.nonce.nonce_len = 8;
    req.nonce.nonce_val = (char *)nonce;
    memset(nonce, 3, sizeof(nonce));
    md_auth_serve(&ac, &req, "test", &ans);
    assert_int_equal(ans.rsp.op_errno, EINVAL);

    /* A hello, then a wrong proof: refused, and the hello is spent. */
    req.nonce.nonce_len = sizeof(nonce);
    md_auth_serve(&ac, &req, "test", &ans);
    assert_int_equal(ans.rsp.ret, 0);
    assert_string_equal(ans.rsp.uuid, UUID_A);
    assert_int_equal(ans.rsp.proof.proof_len, MD_AUTH_PROOF_LEN);
    memset(&ctx, 0, sizeof(ctx));
    memcpy(ctx.nonce_caller, nonce, sizeof(nonce));
    memcpy(ctx.nonce_callee, ans.nonce, sizeof(nonce));
    strcpy(ctx.uuid_caller, UUID_B);
    strcpy(ctx.uuid_callee, UUID_A);
    /* The callee's own proof is not accepted back as the caller's. */
    memcpy(proof, ans.proof, sizeof(proof));
    req.step = MGMT_AUTH_PROVE;
    md_auth_serve(&ac, &req, "test", &ans);
    assert_int_equal(ans.rsp.op_errno, EACCES);
    assert_false(md_auth_conn_is_peer(&ac));
    md_auth_proof(secret, MD_AUTH_CALLER, &ctx, proof);
    md_auth_serve(&ac, &req, "test", &ans);
    assert_int_equal(ans.rsp.op_errno, EPROTO);
    assert_false(md_auth_conn_is_peer(&ac));

    /* That proof (right for the old hello) replayed after a new hello:
     * the callee's nonce changed, so it is wrong. */
    req.step = MGMT_AUTH_HELLO;
    md_auth_serve(&ac, &req, "test", &ans);
    assert_int_equal(ans.rsp.ret, 0);
    req.step = MGMT_AUTH_PROVE;
    md_auth_serve(&ac, &req, "test", &ans);
    assert_int_equal(ans.rsp.op_errno, EACCES);
    assert_false(md_auth_conn_is_peer(&ac));

    /* The right proof of a new hello is accepted. */
    req.step = MGMT_AUTH_HELLO;
    md_auth_serve(&ac, &req, "test", &ans);
    memcpy(ctx.nonce_callee, ans.nonce, sizeof(nonce));
    md_auth_proof(secret, MD_AUTH_CALLER, &ctx, proof);
    req.step = MGMT_AUTH_PROVE;
    md_auth_serve(&ac, &req, "test", &ans);
    assert_int_equal(ans.rsp.ret, 0);
    assert_true(md_auth_conn_is_peer(&ac));

    /* An unknown step. */
    req.step = 9;
    md_auth_serve(&ac, &req, "test", &ans);
    assert_int_equal(ans.rsp.op_errno, EINVAL);
    md_auth_conn_clear(&ac);
}


static int
setup(void **state)
{
    (void)state;
    if (mkdtemp(tmpdir) == NULL)
        return -1;
    snprintf(secret_path, sizeof(secret_path), "%s/secret", tmpdir);
    return 0;
}


static int
teardown(void **state)
{
    char cmd[128];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_proof_known_answer),
        cmocka_unit_test(test_proof_inputs),
        cmocka_unit_test(test_secret_parse),
        cmocka_unit_test(test_secret_file),
        cmocka_unit_test(test_exchange),
        cmocka_unit_test(test_callee_refuses),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    vl_global_init();
    return cmocka_run_group_tests(tests, setup, teardown);
}
