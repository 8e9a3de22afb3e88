/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * auth: the pool secret and the AUTH exchange by which mortards prove it
 * to each other (rpc/xdr/mgmt.x MGMT_PROC_AUTH, doc/security.md).
 *
 * Why: mortard's TCP port must serve volfiles to any client but run
 * peer calls only for members of the pool. Members share a secret of 32
 * random bytes, <state-dir>/secret (hex, mode 0600), made on first start
 * and copied by the administrator to a node before it is probed in.
 * The secret never crosses the wire: each side sends a fresh random
 * nonce and proves HMAC-SHA256(secret, "mortar-auth-1 caller" or
 * "... callee", nonce_caller, nonce_callee, uuid_caller, uuid_callee).
 * The label keeps one side's proof from being replayed as the other's;
 * the nonces keep an old exchange from being replayed; the callee proves
 * first, so a caller never shows its proof to a node without the secret.
 * Exchange (one connection, the caller blocking on each reply):
 *   caller -> HELLO uuid_caller, nonce_caller
 *   callee <- uuid_callee, nonce_callee, proof(callee)
 *   caller checks it (-EACCES "does not share this pool's secret")
 *   caller -> PROVE proof(caller)
 *   callee checks it and trusts the connection as a peer's (ret 0), or
 *            answers EACCES and logs the caller's address.
 * The secret file is read again when its inode, size or times change, so
 * copying a pool member's secret over a node's takes effect at its next
 * exchange, without a restart.
 * Threads: md_auth_secret_get and the exchanges run on any thread:
 * md_auth.mu guards the cache, md_auth_conn.mu one connection's state.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "auth.h"
#include "mortard.h"

#define MD_AUTH_LABEL_CALLER "mortar-auth-1 caller"
#define MD_AUTH_LABEL_CALLEE "mortar-auth-1 callee"
#define MD_AUTH_NOT_SHARED "does not share this pool's secret"

static struct {
    pthread_mutex_t mu;                 /* guards what follows */
    char *path;                         /* owned; <state-dir>/secret */
    char node_id[MGMT_UUID_MAX + 1];    /* this node's uuid */
    bool has_secret;                    /* secret holds the file's */
    struct stat st;                     /* the file when it was read */
    uint8_t secret[MD_AUTH_SECRET_LEN]; /* its bytes */
} md_auth = {.mu = PTHREAD_MUTEX_INITIALIZER};


/* ---- the secret --------------------------------------------------------- */

static int
md_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}


int
md_auth_secret_parse(const char *text, size_t len,
                     uint8_t out[MD_AUTH_SECRET_LEN])
{
    while (len > 0 && (*text == ' ' || *text == '\t' || *text == '\n' ||
                       *text == '\r')) {
        text++;
        len--;
    }
    while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\t' ||
                       text[len - 1] == '\n' || text[len - 1] == '\r'))
        len--;
    if (len != 2 * MD_AUTH_SECRET_LEN)
        return -EINVAL;
    for (size_t i = 0; i < MD_AUTH_SECRET_LEN; i++) {
        int hi = md_hex_digit(text[2 * i]);
        int lo = md_hex_digit(text[2 * i + 1]);

        if (hi < 0 || lo < 0)
            return -EINVAL;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}


/* Reads and checks the file (md_auth.mu held). */
static int
md_auth_load_locked(vl_err_t *err)
{
    uint8_t secret[MD_AUTH_SECRET_LEN];
    char text[256];
    struct stat st;
    ssize_t n;
    int fd, rc = 0;

    fd = open(md_auth.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 || fstat(fd, &st) != 0) {
        rc = -errno;
        vl_err_set(err, "%s: %s", md_auth.path, strerror(-rc));
        goto out;
    }
    /* (1) Unchanged since it was read (the change time moves with a
     * write, a chmod or a chown too): keep what we have. */
    if (md_auth.has_secret && st.st_ino == md_auth.st.st_ino &&
        st.st_dev == md_auth.st.st_dev && st.st_size == md_auth.st.st_size &&
        st.st_mtim.tv_sec == md_auth.st.st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == md_auth.st.st_mtim.tv_nsec &&
        st.st_ctim.tv_sec == md_auth.st.st_ctim.tv_sec &&
        st.st_ctim.tv_nsec == md_auth.st.st_ctim.tv_nsec &&
        st.st_mode == md_auth.st.st_mode && st.st_uid == md_auth.st.st_uid)
        goto out;
    /* (2) Anyone who can read it is a member of the pool. */
    if (!S_ISREG(st.st_mode) || (st.st_mode & 077) != 0 ||
        st.st_uid != geteuid()) {
        rc = -EPERM;
        vl_err_set(err, "%s: must be a regular file of uid %ld with mode "
                   "0600 (it is mode %04o of uid %ld): only mortard may "
                   "read the pool secret", md_auth.path, (long)geteuid(),
                   (unsigned)(st.st_mode & 07777), (long)st.st_uid);
        goto out;
    }
    do {
        n = read(fd, text, sizeof(text));
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        rc = -errno;
        vl_err_set(err, "%s: %s", md_auth.path, strerror(-rc));
        goto out;
    }
    if (md_auth_secret_parse(text, (size_t)n, secret) != 0) {
        rc = -EINVAL;
        vl_err_set(err, "%s: expected 64 hex digits (32 bytes)",
                   md_auth.path);
        goto out;
    }
    memcpy(md_auth.secret, secret, sizeof(secret));
    OPENSSL_cleanse(secret, sizeof(secret));
    md_auth.st = st;
    md_auth.has_secret = true;
out:
    OPENSSL_cleanse(text, sizeof(text));
    if (fd >= 0)
        close(fd);
    return rc;
}


static int
md_auth_create(const char *state_dir, vl_err_t *err)
{
    static const char hex[] = "0123456789abcdef";
    uint8_t secret[MD_AUTH_SECRET_LEN];
    char text[2 * MD_AUTH_SECRET_LEN + 1];
    int rc;

    if (RAND_bytes(secret, sizeof(secret)) != 1) {
        vl_err_set(err, "%s/%s: no random bytes from OpenSSL", state_dir,
                   MD_AUTH_SECRET_FILE);
        return -EIO;
    }
    for (size_t i = 0; i < sizeof(secret); i++) {
        text[2 * i] = hex[secret[i] >> 4];
        text[2 * i + 1] = hex[secret[i] & 15];
    }
    text[sizeof(text) - 1] = '\n';
    /* md_write_atomic makes the file 0600 before writing a byte. */
    rc = md_write_atomic(state_dir, MD_AUTH_SECRET_FILE, text, sizeof(text),
                         err);
    OPENSSL_cleanse(secret, sizeof(secret));
    OPENSSL_cleanse(text, sizeof(text));
    if (rc == 0)
        vl_glog(MD_DOMAIN, VL_LOG_INFO, "made a new pool secret %s/%s: copy "
                "it to a node before probing it", state_dir,
                MD_AUTH_SECRET_FILE);
    return rc;
}


int
md_auth_init(const char *state_dir, const char *node_id, vl_err_t *err)
{
    struct stat st;
    char *path = NULL;
    int rc;

    if (asprintf(&path, "%s/%s", state_dir, MD_AUTH_SECRET_FILE) < 0) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    if (lstat(path, &st) != 0) {
        if (errno != ENOENT) {
            rc = -errno;
            vl_err_set(err, "%s: %s", path, strerror(-rc));
            free(path);
            return rc;
        }
        rc = md_auth_create(state_dir, err);
        if (rc != 0) {
            free(path);
            return rc;
        }
    }
    pthread_mutex_lock(&md_auth.mu);
    free(md_auth.path);
    md_auth.path = path;
    snprintf(md_auth.node_id, sizeof(md_auth.node_id), "%s", node_id);
    md_auth.has_secret = false;
    rc = md_auth_load_locked(err);
    pthread_mutex_unlock(&md_auth.mu);
    return rc;
}


int
md_auth_secret_get(uint8_t out[MD_AUTH_SECRET_LEN], vl_err_t *err)
{
    int rc;

    pthread_mutex_lock(&md_auth.mu);
    if (md_auth.path == NULL) {
        vl_err_set(err, "no pool secret loaded");
        rc = -ENOENT;
    } else {
        rc = md_auth_load_locked(err);
    }
    /* A file that went bad keeps the last good secret out of use too:
     * the administrator sees the error at the next exchange. */
    if (rc == 0)
        memcpy(out, md_auth.secret, MD_AUTH_SECRET_LEN);
    pthread_mutex_unlock(&md_auth.mu);
    return rc;
}


static void
md_auth_node_id(char out[MGMT_UUID_MAX + 1])
{
    pthread_mutex_lock(&md_auth.mu);
    memcpy(out, md_auth.node_id, MGMT_UUID_MAX + 1);
    pthread_mutex_unlock(&md_auth.mu);
}


/* ---- proofs ------------------------------------------------------------- */

static void
md_put_str(uint8_t **p, const char *s)
{
    uint32_t n = (uint32_t)strlen(s);

    /* Length-prefixed, so that no two pairs of uuids give one message. */
    (*p)[0] = (uint8_t)(n >> 24);
    (*p)[1] = (uint8_t)(n >> 16);
    (*p)[2] = (uint8_t)(n >> 8);
    (*p)[3] = (uint8_t)n;
    memcpy(*p + 4, s, n);
    *p += 4 + n;
}


void
md_auth_proof(const uint8_t secret[MD_AUTH_SECRET_LEN],
              enum md_auth_side side, const struct md_auth_ctx *ctx,
              uint8_t out[MD_AUTH_PROOF_LEN])
{
    const char *label = side == MD_AUTH_CALLER ? MD_AUTH_LABEL_CALLER
                                               : MD_AUTH_LABEL_CALLEE;
    uint8_t msg[sizeof(MD_AUTH_LABEL_CALLER) + 2 * MD_AUTH_NONCE_LEN +
                2 * (4 + MGMT_UUID_MAX)];
    uint8_t *p = msg;
    unsigned int n = MD_AUTH_PROOF_LEN;

    memcpy(p, label, sizeof(MD_AUTH_LABEL_CALLER)); /* with its NUL */
    p += sizeof(MD_AUTH_LABEL_CALLER);
    memcpy(p, ctx->nonce_caller, MD_AUTH_NONCE_LEN);
    p += MD_AUTH_NONCE_LEN;
    memcpy(p, ctx->nonce_callee, MD_AUTH_NONCE_LEN);
    p += MD_AUTH_NONCE_LEN;
    md_put_str(&p, ctx->uuid_caller);
    md_put_str(&p, ctx->uuid_callee);
    /* HMAC() with SHA-256 cannot fail on these sizes; a NULL return
     * would leave out untouched, so start it as no valid proof. */
    memset(out, 0, MD_AUTH_PROOF_LEN);
    (void)HMAC(EVP_sha256(), secret, MD_AUTH_SECRET_LEN, msg,
               (size_t)(p - msg), out, &n);
}


bool
md_auth_proof_ok(const uint8_t secret[MD_AUTH_SECRET_LEN],
                 enum md_auth_side side, const struct md_auth_ctx *ctx,
                 const uint8_t *proof, size_t len)
{
    uint8_t want[MD_AUTH_PROOF_LEN];
    bool is_ok;

    if (len != MD_AUTH_PROOF_LEN)
        return false;
    md_auth_proof(secret, side, ctx, want);
    is_ok = CRYPTO_memcmp(want, proof, MD_AUTH_PROOF_LEN) == 0;
    OPENSSL_cleanse(want, sizeof(want));
    return is_ok;
}


/* ---- the callee --------------------------------------------------------- */

void
md_auth_conn_init(struct md_auth_conn *ac)
{
    memset(ac, 0, sizeof(*ac));
    pthread_mutex_init(&ac->mu, NULL);
}


void
md_auth_conn_clear(struct md_auth_conn *ac)
{
    pthread_mutex_destroy(&ac->mu);
}


bool
md_auth_conn_is_peer(struct md_auth_conn *ac)
{
    bool is_peer;

    pthread_mutex_lock(&ac->mu);
    is_peer = ac->is_peer;
    pthread_mutex_unlock(&ac->mu);
    return is_peer;
}


static void
md_auth_refuse(mgmt_auth_rsp *rsp, int op_errno, const char *why)
{
    rsp->ret = -1;
    rsp->op_errno = op_errno;
    rsp->errstr = (char *)why;
}


/* Step 1: a fresh nonce, and the callee's proof. (ac->mu held.) */
static void
md_auth_hello_locked(struct md_auth_conn *ac, const mgmt_auth_req *req,
                     const char *from, struct md_auth_answer *ans)
{
    uint8_t secret[MD_AUTH_SECRET_LEN];
    vl_err_t err = {.msg = ""};

    ac->has_hello = false;
    ac->is_peer = false;
    if (req->nonce.nonce_len != MD_AUTH_NONCE_LEN) {
        md_auth_refuse(&ans->rsp, EINVAL, "the nonce must have 32 bytes");
        return;
    }
    if (md_auth_secret_get(secret, &err) != 0) {
        /* Logged here: the caller only learns that it cannot join. */
        vl_glog(MD_DOMAIN, VL_LOG_ERROR, "peer authentication from %s: %s",
                from, err.msg);
        md_auth_refuse(&ans->rsp, EIO, "the callee has no usable pool "
                       "secret");
        return;
    }
    if (RAND_bytes(ac->ctx.nonce_callee, MD_AUTH_NONCE_LEN) != 1) {
        OPENSSL_cleanse(secret, sizeof(secret));
        md_auth_refuse(&ans->rsp, EIO, "no random bytes");
        return;
    }
    memcpy(ac->ctx.nonce_caller, req->nonce.nonce_val, MD_AUTH_NONCE_LEN);
    snprintf(ac->ctx.uuid_caller, sizeof(ac->ctx.uuid_caller), "%s",
             req->uuid);
    md_auth_node_id(ac->ctx.uuid_callee);
    md_auth_proof(secret, MD_AUTH_CALLEE, &ac->ctx, ans->proof);
    OPENSSL_cleanse(secret, sizeof(secret));
    ac->has_hello = true;
    memcpy(ans->uuid, ac->ctx.uuid_callee, sizeof(ans->uuid));
    memcpy(ans->nonce, ac->ctx.nonce_callee, sizeof(ans->nonce));
    ans->rsp.uuid = ans->uuid;
    ans->rsp.nonce.nonce_len = MD_AUTH_NONCE_LEN;
    ans->rsp.nonce.nonce_val = (char *)ans->nonce;
    ans->rsp.proof.proof_len = MD_AUTH_PROOF_LEN;
    ans->rsp.proof.proof_val = (char *)ans->proof;
}


/* Step 2: the caller's proof. (ac->mu held.) */
static void
md_auth_check_locked(struct md_auth_conn *ac, const mgmt_auth_req *req,
                     const char *from, mgmt_auth_rsp *rsp)
{
    uint8_t secret[MD_AUTH_SECRET_LEN];
    vl_err_t err = {.msg = ""};
    bool is_ok;

    if (!ac->has_hello) {
        md_auth_refuse(rsp, EPROTO, "a proof needs a hello first");
        return;
    }
    /* One proof per hello: a guess costs the caller a new exchange. */
    ac->has_hello = false;
    if (md_auth_secret_get(secret, &err) != 0) {
        vl_glog(MD_DOMAIN, VL_LOG_ERROR, "peer authentication from %s: %s",
                from, err.msg);
        md_auth_refuse(rsp, EIO, "the callee has no usable pool secret");
        return;
    }
    is_ok = md_auth_proof_ok(secret, MD_AUTH_CALLER, &ac->ctx,
                             (const uint8_t *)req->proof.proof_val,
                             req->proof.proof_len);
    OPENSSL_cleanse(secret, sizeof(secret));
    if (!is_ok) {
        vl_glog(MD_DOMAIN, VL_LOG_WARNING, "peer authentication from %s "
                "(node %s) failed: wrong proof of the pool secret", from,
                ac->ctx.uuid_caller);
        md_auth_refuse(rsp, EACCES, "wrong proof of the pool secret");
        return;
    }
    ac->is_peer = true;
    vl_glog(MD_DOMAIN, VL_LOG_DEBUG, "peer %s (node %s) authenticated", from,
            ac->ctx.uuid_caller);
}


void
md_auth_serve(struct md_auth_conn *ac, const mgmt_auth_req *req,
              const char *from, struct md_auth_answer *ans)
{
    memset(ans, 0, sizeof(*ans));
    ans->rsp.errstr = "";
    ans->rsp.uuid = ans->uuid;
    pthread_mutex_lock(&ac->mu);
    if (req->step == MGMT_AUTH_HELLO)
        md_auth_hello_locked(ac, req, from, ans);
    else if (req->step == MGMT_AUTH_PROVE)
        md_auth_check_locked(ac, req, from, &ans->rsp);
    else
        md_auth_refuse(&ans->rsp, EINVAL, "unknown step");
    pthread_mutex_unlock(&ac->mu);
}


/* ---- the caller --------------------------------------------------------- */

int
md_auth_prove(md_auth_call_fn *call, void *arg, vl_err_t *err)
{
    uint8_t secret[MD_AUTH_SECRET_LEN];
    uint8_t proof[MD_AUTH_PROOF_LEN];
    struct md_auth_ctx ctx;
    mgmt_auth_req req = {.uuid = ctx.uuid_caller};
    mgmt_auth_rsp rsp = {0};
    int rc;

    memset(&ctx, 0, sizeof(ctx));
    rc = md_auth_secret_get(secret, err);
    if (rc != 0)
        return rc;
    md_auth_node_id(ctx.uuid_caller);
    if (RAND_bytes(ctx.nonce_caller, MD_AUTH_NONCE_LEN) != 1) {
        vl_err_set(err, "no random bytes from OpenSSL");
        rc = -EIO;
        goto out;
    }
    req.step = MGMT_AUTH_HELLO;
    req.nonce.nonce_len = MD_AUTH_NONCE_LEN;
    req.nonce.nonce_val = (char *)ctx.nonce_caller;
    rc = call(arg, &req, &rsp);
    if (rc != 0) {
        vl_err_set(err, "%s", strerror(-rc));
        goto out;
    }
    if (rsp.ret != 0) {
        rc = rsp.op_errno == EACCES ? -EACCES : -EPROTO;
        vl_err_set(err, "%s", rsp.errstr);
        goto out;
    }
    if (rsp.nonce.nonce_len != MD_AUTH_NONCE_LEN) {
        rc = -EPROTO;
        vl_err_set(err, "bad reply");
        goto out;
    }
    memcpy(ctx.nonce_callee, rsp.nonce.nonce_val, MD_AUTH_NONCE_LEN);
    snprintf(ctx.uuid_callee, sizeof(ctx.uuid_callee), "%s", rsp.uuid);
    if (!md_auth_proof_ok(secret, MD_AUTH_CALLEE, &ctx,
                          (const uint8_t *)rsp.proof.proof_val,
                          rsp.proof.proof_len)) {
        rc = -EACCES;
        vl_err_set(err, MD_AUTH_NOT_SHARED);
        goto out;
    }
    xdr_free((xdrproc_t)xdr_mgmt_auth_rsp, (char *)&rsp);
    memset(&rsp, 0, sizeof(rsp));
    md_auth_proof(secret, MD_AUTH_CALLER, &ctx, proof);
    req.step = MGMT_AUTH_PROVE;
    req.nonce.nonce_len = 0;
    req.nonce.nonce_val = NULL;
    req.proof.proof_len = MD_AUTH_PROOF_LEN;
    req.proof.proof_val = (char *)proof;
    rc = call(arg, &req, &rsp);
    if (rc != 0) {
        vl_err_set(err, "%s", strerror(-rc));
        goto out;
    }
    if (rsp.ret != 0) {
        /* The callee proved the secret but refused ours: it changed
         * between the two steps, or someone is in the middle. */
        rc = rsp.op_errno == EACCES ? -EACCES : -EPROTO;
        if (rc == -EACCES)
            vl_err_set(err, MD_AUTH_NOT_SHARED);
        else
            vl_err_set(err, "%s", rsp.errstr);
    }
out:
    xdr_free((xdrproc_t)xdr_mgmt_auth_rsp, (char *)&rsp);
    OPENSSL_cleanse(secret, sizeof(secret));
    OPENSSL_cleanse(proof, sizeof(proof));
    return rc;
}
