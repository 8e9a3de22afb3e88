/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-mgmt: the management protocol (rpc/xdr/mgmt.x) as mortard's port
 * and its peers' and CLI's replies meet it.
 *
 * Input: byte 0 even: the record is a call at mortard, taken apart as
 * mortard/server.c's md_on_record and the handlers it passes bodies to
 * (peer-cmd.c, rebal-peer.c, rebal-handoff.c) decode it: the RPC header,
 * then the argument type of its procedure. A CLI request's and a
 * transaction's argv then goes through the checks that need no daemon
 * (mortard/validate.c): every word as a volume name and as a brick, each
 * pair as `volume set KEY VALUE` (md_option_resolve, over the real
 * translators' option tables), and as a pool secret
 * (md_auth_secret_parse); the "key=value" text a transaction or a peer's
 * volume carries through md_kv_parse; a HEAL_INFO's volume name as the
 * other words, and the entry names of its answer as heal info takes
 * them from another node (md_heal_names_take). An AUTH call goes through
 * md_auth_serve (mortard/auth.c), which must make no peer of it.
 * Byte 0 odd: the record is a reply at a CLI or a peer (mdctl.c,
 * peer.c), of the type (byte 0 >> 1) picks.
 *
 * Checks: decoders stay in the record, decoded values round-trip through
 * XDR (fuzz.h), validators answer 0 or a negative errno with a message,
 * everything is freed.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "mgmt.h"
#include "mortard/auth.h"
#include "mortard/mortard.h"
#include "vrpc.h"
#include "xlators/builtin.h"

union mgmt_any {
    mgmt_cli_req cli;
    mgmt_getspec_req getspec;
    mgmt_watch_req watch;
    mgmt_brick_status_req brick_status;
    mgmt_rebal_req rebal;
    mgmt_txn_req txn;
    mgmt_hello_req hello;
    mgmt_peer_list_req peer_list;
    mgmt_vols_msg vols;
    mgmt_members_req members;
    mgmt_sync_msg sync;
    mgmt_auth_req auth;
    mgmt_heal_info_req heal_info;
    mgmt_heal_progress_req heal_progress;
    mgmt_cli_rsp cli_rsp;
    mgmt_getspec_rsp getspec_rsp;
    mgmt_hello_rsp hello_rsp;
    mgmt_status_rsp status_rsp;
    mgmt_brick_status_rsp brick_status_rsp;
    mgmt_rebal_rsp rebal_rsp;
    mgmt_rebal_state_rsp rebal_state_rsp;
    mgmt_auth_rsp auth_rsp;
    mgmt_heal_info_rsp heal_info_rsp;
    mgmt_heal_progress_rsp heal_progress_rsp;
};

/* What a CLI or a peer decodes replies as. */
static const xdrproc_t reply_types[] = {
    (xdrproc_t)xdr_mgmt_cli_rsp,
    (xdrproc_t)xdr_mgmt_getspec_rsp,
    (xdrproc_t)xdr_mgmt_hello_rsp,
    (xdrproc_t)xdr_mgmt_status_rsp,
    (xdrproc_t)xdr_mgmt_vols_msg,
    (xdrproc_t)xdr_mgmt_sync_msg,
    (xdrproc_t)xdr_mgmt_brick_status_rsp,
    (xdrproc_t)xdr_mgmt_rebal_rsp,
    (xdrproc_t)xdr_mgmt_rebal_state_rsp,
    (xdrproc_t)xdr_mgmt_auth_rsp,
    (xdrproc_t)xdr_mgmt_heal_info_rsp,
    (xdrproc_t)xdr_mgmt_heal_progress_rsp,
};


static xdrproc_t
call_type(uint32_t proc)
{
    switch (proc) {
    case MGMT_PROC_CLI:
        return (xdrproc_t)xdr_mgmt_cli_req;
    case MGMT_PROC_GETSPEC:
        return (xdrproc_t)xdr_mgmt_getspec_req;
    case MGMT_PROC_WATCH:
        return (xdrproc_t)xdr_mgmt_watch_req;
    case MGMT_PROC_BRICK_STATUS:
        return (xdrproc_t)xdr_mgmt_brick_status_req;
    case MGMT_PROC_REBAL_TASK:
    case MGMT_PROC_REBAL_STATE:
        return (xdrproc_t)xdr_mgmt_rebal_req;
    case MGMT_PROC_PEER_TXN:
        return (xdrproc_t)xdr_mgmt_txn_req;
    case MGMT_PROC_PEER_HELLO:
        return (xdrproc_t)xdr_mgmt_hello_req;
    case MGMT_PROC_PEER_LIST:
        return (xdrproc_t)xdr_mgmt_peer_list_req;
    case MGMT_PROC_PEER_VOLS:
        return (xdrproc_t)xdr_mgmt_vols_msg;
    case MGMT_PROC_PEER_MEMBERS:
        return (xdrproc_t)xdr_mgmt_members_req;
    case MGMT_PROC_PEER_SYNC:
        return (xdrproc_t)xdr_mgmt_sync_msg;
    case MGMT_PROC_AUTH:
        return (xdrproc_t)xdr_mgmt_auth_req;
    case MGMT_PROC_HEAL_INFO:
    case MGMT_PROC_HEAL_SPLIT:
    case MGMT_PROC_HEAL_WAITING:
        return (xdrproc_t)xdr_mgmt_heal_info_req;
    case MGMT_PROC_HEAL_PROGRESS:
        return (xdrproc_t)xdr_mgmt_heal_progress_req;
    default:
        return NULL;
    }
}


static int
kv_count(const char *key, const char *value, int line, void *arg,
         vl_err_t *err)
{
    (void)err;
    FUZZ_CHECK(key[0] != '\0' && strchr(key, '=') == NULL && line > 0);
    FUZZ_CHECK(strchr(value, '\n') == NULL);
    (*(int *)arg)++;
    return 0;
}


static void
check_kv(const char *text)
{
    vl_err_t err = {{0}};
    int n = 0, rc;

    rc = md_kv_parse(text, "fuzz", kv_count, &n, &err);
    FUZZ_CHECK(rc == 0 || (rc == -EINVAL && err.msg[0] != '\0'));
}


/* An AUTH request (mortard/auth.c) makes no peer of a stranger: not as
 * it comes, nor as the proof after a good hello (whose nonce the input
 * cannot know). Every answer encodes. */
static void
check_auth(const mgmt_auth_req *req)
{
    static char nonce[MD_AUTH_NONCE_LEN];
    mgmt_auth_req hello = {.step = MGMT_AUTH_HELLO, .uuid = "fuzz-node",
                           .nonce = {MD_AUTH_NONCE_LEN, nonce},
                           .proof = {0, NULL}};
    struct md_auth_answer ans;
    struct md_auth_conn ac;
    char *buf;
    size_t len;

    md_auth_conn_init(&ac);
    md_auth_serve(&ac, req, "fuzz", &ans);
    FUZZ_CHECK(!md_auth_conn_is_peer(&ac));
    FUZZ_CHECK(vrpc_encode_reply(1, VRPC_SUCCESS,
                                 (xdrproc_t)xdr_mgmt_auth_rsp, &ans.rsp,
                                 &buf, &len) == 0);
    vl_free(buf);
    md_auth_serve(&ac, &hello, "fuzz", &ans);
    FUZZ_CHECK(ans.rsp.ret == 0);
    md_auth_serve(&ac, req, "fuzz", &ans);
    FUZZ_CHECK(!md_auth_conn_is_peer(&ac));
    md_auth_conn_clear(&ac);
}


/* Another node's heal index names (heal-peers.c) as `heal info` takes
 * them: no more names than terminators, each within the bytes sent. */
static void
check_heal_names(const mgmt_heal_brick_info *b)
{
    struct md_heal_brick hb = {0};
    size_t nuls = 0, total = 0;

    for (u_int i = 0; i < b->names.names_len; i++)
        nuls += b->names.names_val[i] == '\0';
    FUZZ_CHECK(md_heal_names_take(&hb, b->names.names_val,
                                  b->names.names_len) == 0);
    FUZZ_CHECK(hb.n_names <= nuls);
    for (size_t k = 0; k < hb.n_names; k++)
        total += strlen(hb.names[k]) + 1;
    FUZZ_CHECK(total <= b->names.names_len);
    md_heal_brick_clear(&hb);
}


/* The daemon-free checks a command's words meet (validate.c). */
static void
check_words(char **argv, u_int n)
{
    for (u_int i = 0; i < n; i++) {
        vl_err_t err = {{0}};
        char *host = NULL, *path = NULL, canon[512];
        uint8_t secret[MD_AUTH_SECRET_LEN];
        int rc;

        rc = md_check_volname(argv[i], &err);
        FUZZ_CHECK(rc == 0 || (rc == -EINVAL && err.msg[0] != '\0'));
        rc = md_parse_brick(argv[i], &host, &path, &err);
        FUZZ_CHECK(rc == 0 || err.msg[0] != '\0');
        if (rc == 0) {
            FUZZ_CHECK(host != NULL && path != NULL && path[0] == '/');
            free(host);
            free(path);
        }
        /* The pool secret's file syntax (a peer may send one). */
        rc = md_auth_secret_parse(argv[i], strlen(argv[i]), secret);
        FUZZ_CHECK(rc == 0 || rc == -EINVAL);
        if (i + 1 < n) {
            err.msg[0] = '\0';
            rc = md_option_resolve(argv[i], argv[i + 1], NULL, NULL, canon,
                                   sizeof(canon), &err);
            FUZZ_CHECK(rc == 0 || err.msg[0] != '\0');
        }
    }
}


static void
decode(xdrproc_t fn, const char *body, size_t len, uint32_t proc,
       bool is_call)
{
    union mgmt_any a;
    size_t used = 0;

    memset(&a, 0, sizeof(a));
    if (vrpc_decode_body(body, len, fn, &a, &used) != 0)
        return;
    FUZZ_CHECK(used <= len);
    fuzz_xdr_roundtrip(fn, &a, sizeof(a), body, used);
    if (is_call && proc == MGMT_PROC_CLI) {
        check_words(a.cli.argv.argv_val, a.cli.argv.argv_len);
    } else if (is_call && proc == MGMT_PROC_PEER_TXN) {
        check_words(a.txn.argv.argv_val, a.txn.argv.argv_len);
        check_kv(a.txn.params);
    } else if (is_call && proc == MGMT_PROC_AUTH) {
        check_auth(&a.auth);
    } else if (is_call && proc == MGMT_PROC_HEAL_INFO) {
        check_words(&a.heal_info.volume, 1);
    } else if (fn == (xdrproc_t)xdr_mgmt_heal_info_rsp) {
        for (u_int i = 0; i < a.heal_info_rsp.bricks.bricks_len; i++)
            check_heal_names(&a.heal_info_rsp.bricks.bricks_val[i]);
    } else if (fn == (xdrproc_t)xdr_mgmt_vols_msg) {
        for (u_int i = 0; i < a.vols.vols.vols_len; i++) {
            check_kv(a.vols.vols.vols_val[i].info);
            check_kv(a.vols.vols.vols_val[i].options);
        }
    }
    xdr_free(fn, (char *)&a);
}


static char state_dir[] = "/tmp/fuzz-mgmt.XXXXXX";


static void
state_dir_remove(void)
{
    char path[sizeof(state_dir) + 16];

    snprintf(path, sizeof(path), "%s/%s", state_dir, MD_AUTH_SECRET_FILE);
    (void)unlink(path);
    (void)rmdir(state_dir);
}


int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    vl_err_t err = {{0}};

    (void)argc;
    (void)argv;
    vl_global_init();
    vl_log_set_level(VL_LOG_NONE);
    vl_xlators_register_builtin();
    /* A pool secret of its own, for the AUTH exchanges. */
    FUZZ_CHECK(mkdtemp(state_dir) != NULL);
    atexit(state_dir_remove);
    if (md_auth_init(state_dir, "fuzz-callee", &err) != 0)
        fprintf(stderr, "fuzz-mgmt: %s\n", err.msg);
    FUZZ_CHECK(err.msg[0] == '\0');
    return 0;
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    uint8_t role = fuzz_take_u8(&in);
    const char *rec = (const char *)in.p;
    size_t len = in.len, off = 0;
    xdrproc_t fn;

    if (role % 2 == 0) {
        struct vrpc_call_hdr hdr;
        bool xid_ok = false;

        if (vrpc_decode_call(rec, len, &hdr, &off, &xid_ok) != 0)
            return 0;
        FUZZ_CHECK(off <= len);
        if (hdr.prog != MGMT_PROG || hdr.vers != MGMT_VERSION)
            return 0;
        fn = call_type(hdr.proc);
        if (fn != NULL)
            decode(fn, rec + off, len - off, hdr.proc, true);
    } else {
        uint32_t xid;
        int accept;

        if (vrpc_decode_reply(rec, len, &xid, &accept, &off) != 0)
            return 0;
        FUZZ_CHECK(off <= len);
        if (accept != VRPC_SUCCESS)
            return 0;
        fn = reply_types[(role >> 1) % VL_ARRAY_SIZE(reply_types)];
        decode(fn, rec + off, len - off, 0, false);
    }
    return 0;
}
