/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace: log every fop with its main arguments when it is wound, and its
 * status, main reply fields and duration when it is answered.
 *
 * Intercepts: every fop in fops.def (one generic function); fops left out
 *             of the "fops" option, or every fop at log-level NONE, are
 *             passed through untouched.
 * Per req:    nothing; the traced request waits for a child request whose
 *             reply is moved up unchanged (vl_reply_move).
 * Threads:    any; options live in atomics so reconfigure needs no lock.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "vol/vol.h"

#include "builtin.h"

enum trace_mem_type {
    TRACE_MT_MISC = 0,
    TRACE_MT_PRIV,
};

struct trace_conf {
    int log_level; /* index in trace_levels == vl_log_level_t */
    char *fops;    /* owned by the conf; comma list, or "all" */
};

struct trace_priv {
    _Atomic uint64_t fop_mask; /* bit (1 << op) set: trace that fop */
    atomic_int level;          /* vl_log_level_t to log at */
};

/* A bounded string builder; output is truncated, never overflowed. */
struct trace_buf {
    char text[512]; /* NUL-terminated */
    size_t used;    /* bytes before the NUL */
};

_Static_assert(VL_FOP_COUNT <= 64, "fop mask must fit in 64 bits");

static const char *const trace_levels[] = {
    "NONE", "CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "TRACE", NULL,
};


static void __attribute__((format(printf, 2, 3)))
trace_add(struct trace_buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (b->used >= sizeof(b->text) - 1)
        return;
    va_start(ap, fmt);
    n = vsnprintf(b->text + b->used, sizeof(b->text) - b->used, fmt, ap);
    va_end(ap);
    if (n > 0)
        b->used += (size_t)n;
    if (b->used > sizeof(b->text) - 1)
        b->used = sizeof(b->text) - 1;
}


static void
trace_add_gfid(struct trace_buf *b, const char *key, const vl_inode_t *inode)
{
    char str[VL_GFID_STR_LEN];

    if (inode == NULL)
        return;
    trace_add(b, " %s=%s", key, vl_gfid_to_str(&inode->gfid, str));
}


static void
trace_add_loc(struct trace_buf *b, const char *tag, const struct vl_loc *loc)
{
    char key[32];

    snprintf(key, sizeof(key), "%spargfid", tag);
    trace_add_gfid(b, key, loc->parent);
    if (loc->name != NULL)
        trace_add(b, " %sname=%s", tag, loc->name);
    snprintf(key, sizeof(key), "%sgfid", tag);
    trace_add_gfid(b, key, loc->inode);
}


static void
trace_add_fd(struct trace_buf *b, const char *key, const vl_fd_t *fd)
{
    if (fd != NULL)
        trace_add_gfid(b, key, fd->inode);
}


static void
trace_add_flock(struct trace_buf *b, const struct vl_flock *fl)
{
    trace_add(b, " type=%s start=%" PRId64 " len=%" PRId64 " pid=%" PRId32,
              fl->type == F_RDLCK   ? "read"
              : fl->type == F_WRLCK ? "write"
              : fl->type == F_UNLCK ? "unlock"
                                    : "?",
              fl->start, fl->len, fl->pid);
}


/* The arguments worth seeing for each fop: what it names, where, how much
 * and with which flags. */
static void
trace_format_args(const vl_req_t *req, struct trace_buf *b)
{
    const union vl_fop_args *a = &req->args;

    switch (req->op) {
    case VL_FOP_LOOKUP:
    case VL_FOP_READLINK:
    case VL_FOP_STATFS:
        trace_add_loc(b, "", &a->lookup.loc);
        break;
    case VL_FOP_STAT:
        trace_add_loc(b, "", &a->stat.loc);
        trace_add_fd(b, "fd", a->stat.fd);
        break;
    case VL_FOP_SETATTR:
        trace_add_loc(b, "", &a->setattr.loc);
        trace_add_fd(b, "fd", a->setattr.fd);
        trace_add(b, " valid=%#x mode=%#o uid=%u gid=%u size=%" PRIu64,
                  a->setattr.valid, a->setattr.attr.mode,
                  a->setattr.attr.uid, a->setattr.attr.gid,
                  a->setattr.attr.size);
        break;
    case VL_FOP_ACCESS:
        trace_add_loc(b, "", &a->access.loc);
        trace_add(b, " mask=%#o", (unsigned)a->access.mask);
        break;
    case VL_FOP_MKNOD:
        trace_add_loc(b, "", &a->mknod.loc);
        trace_add(b, " mode=%#o rdev=%" PRIu64, a->mknod.mode, a->mknod.rdev);
        break;
    case VL_FOP_MKDIR:
        trace_add_loc(b, "", &a->mkdir.loc);
        trace_add(b, " mode=%#o", a->mkdir.mode);
        break;
    case VL_FOP_UNLINK:
    case VL_FOP_RMDIR:
        trace_add_loc(b, "", &a->unlink.loc);
        trace_add(b, " flags=%#x", a->unlink.flags);
        break;
    case VL_FOP_SYMLINK:
        trace_add_loc(b, "", &a->symlink.loc);
        trace_add(b, " target=%s",
                  a->symlink.target != NULL ? a->symlink.target : "(null)");
        break;
    case VL_FOP_RENAME:
        trace_add_loc(b, "old", &a->rename.oldloc);
        trace_add_loc(b, "new", &a->rename.newloc);
        trace_add(b, " flags=%#x", a->rename.flags);
        break;
    case VL_FOP_LINK:
        trace_add_loc(b, "old", &a->link.oldloc);
        trace_add_loc(b, "new", &a->link.newloc);
        break;
    case VL_FOP_CREATE:
        trace_add_loc(b, "", &a->create.loc);
        trace_add(b, " flags=%#x mode=%#o", (unsigned)a->create.flags,
                  a->create.mode);
        break;
    case VL_FOP_OPEN:
        trace_add_loc(b, "", &a->open.loc);
        trace_add(b, " flags=%#x", (unsigned)a->open.flags);
        break;
    case VL_FOP_READ:
        trace_add_fd(b, "fd", a->read.fd);
        trace_add(b, " offset=%jd size=%zu", (intmax_t)a->read.offset,
                  a->read.size);
        break;
    case VL_FOP_WRITE: {
        size_t size = 0;

        for (int i = 0; i < a->write.n_iov && a->write.iov != NULL; i++)
            size += a->write.iov[i].iov_len;
        trace_add_fd(b, "fd", a->write.fd);
        trace_add(b, " offset=%jd size=%zu flags=%#x",
                  (intmax_t)a->write.offset, size, a->write.flags);
        break;
    }
    case VL_FOP_FLUSH:
        trace_add_fd(b, "fd", a->flush.fd);
        break;
    case VL_FOP_FSYNC:
        trace_add_fd(b, "fd", a->fsync.fd);
        trace_add(b, " datasync=%d", a->fsync.datasync);
        break;
    case VL_FOP_OPENDIR:
        trace_add_loc(b, "", &a->opendir.loc);
        break;
    case VL_FOP_READDIR:
        trace_add_fd(b, "fd", a->readdir.fd);
        trace_add(b, " offset=%jd size=%zu plus=%d",
                  (intmax_t)a->readdir.offset, a->readdir.size,
                  a->readdir.plus);
        break;
    case VL_FOP_SETXATTR:
        trace_add_loc(b, "", &a->setxattr.loc);
        trace_add(b, " key=%s size=%zu flags=%#x",
                  a->setxattr.name != NULL ? a->setxattr.name : "(null)",
                  a->setxattr.size, (unsigned)a->setxattr.flags);
        break;
    case VL_FOP_GETXATTR:
        trace_add_loc(b, "", &a->getxattr.loc);
        trace_add(b, " key=%s size=%zu",
                  a->getxattr.name != NULL ? a->getxattr.name : "(list)",
                  a->getxattr.size);
        break;
    case VL_FOP_REMOVEXATTR:
        trace_add_loc(b, "", &a->removexattr.loc);
        trace_add(b, " key=%s",
                  a->removexattr.name != NULL ? a->removexattr.name
                                              : "(null)");
        break;
    case VL_FOP_LK:
        trace_add_fd(b, "fd", a->lk.fd);
        trace_add(b, " cmd=%d flock=%d", (int)a->lk.cmd, a->lk.is_flock);
        trace_add_flock(b, &a->lk.flock);
        break;
    case VL_FOP_INODELK:
        trace_add_loc(b, "", &a->inodelk.loc);
        trace_add(b, " domain=%s cmd=%d",
                  a->inodelk.domain != NULL ? a->inodelk.domain : "(null)",
                  (int)a->inodelk.cmd);
        trace_add_flock(b, &a->inodelk.flock);
        break;
    case VL_FOP_ENTRYLK:
        trace_add_loc(b, "", &a->entrylk.loc);
        trace_add(b, " domain=%s cmd=%d type=%d",
                  a->entrylk.domain != NULL ? a->entrylk.domain : "(null)",
                  (int)a->entrylk.cmd, a->entrylk.type);
        break;
    case VL_FOP_FALLOCATE:
        trace_add_fd(b, "fd", a->fallocate.fd);
        trace_add(b, " mode=%#x offset=%jd len=%jd",
                  (unsigned)a->fallocate.mode,
                  (intmax_t)a->fallocate.offset, (intmax_t)a->fallocate.len);
        break;
    case VL_FOP_COPY_FILE_RANGE:
        trace_add_fd(b, "fd_in", a->copy_file_range.fd_in);
        trace_add_fd(b, "fd_out", a->copy_file_range.fd_out);
        trace_add(b, " off_in=%jd off_out=%jd len=%zu flags=%#x",
                  (intmax_t)a->copy_file_range.off_in,
                  (intmax_t)a->copy_file_range.off_out,
                  a->copy_file_range.len, a->copy_file_range.flags);
        break;
    case VL_FOP_LSEEK:
        trace_add_fd(b, "fd", a->lseek.fd);
        trace_add(b, " offset=%jd whence=%d", (intmax_t)a->lseek.offset,
                  (int)a->lseek.whence);
        break;
    case VL_FOP_XATTROP:
        if (a->xattrop.fd != NULL)
            trace_add_fd(b, "fd", a->xattrop.fd);
        else
            trace_add_loc(b, "", &a->xattrop.loc);
        trace_add(b, " op=%u n=%u", a->xattrop.op, a->xattrop.n);
        for (uint32_t i = 0; i < a->xattrop.n && a->xattrop.names != NULL
                             && a->xattrop.sizes != NULL;
             i++)
            trace_add(b, " key=%s size=%u",
                      a->xattrop.names[i] != NULL ? a->xattrop.names[i]
                                                  : "(null)",
                      a->xattrop.sizes[i]);
        break;
    case VL_FOP_RCHECKSUM:
        trace_add_fd(b, "fd", a->rchecksum.fd);
        trace_add(b, " offset=%jd len=%u block=%u",
                  (intmax_t)a->rchecksum.offset, a->rchecksum.len,
                  a->rchecksum.block_size);
        break;
    case VL_FOP_COUNT:
        break;
    }
}


static void
trace_add_iatt(struct trace_buf *b, const struct vl_iatt *ia)
{
    char str[VL_GFID_STR_LEN];

    trace_add(b, " gfid=%s mode=%#o nlink=%u uid=%u gid=%u size=%" PRIu64,
              vl_gfid_to_str(&ia->gfid, str), ia->mode, ia->nlink, ia->uid,
              ia->gid, ia->size);
}


/* The reply fields that fop fills (see struct vl_reply). */
static void
trace_format_reply(const vl_req_t *req, struct trace_buf *b)
{
    const struct vl_reply *r = &req->reply;

    switch (req->op) {
    case VL_FOP_LOOKUP:
    case VL_FOP_STAT:
    case VL_FOP_SETATTR:
    case VL_FOP_MKNOD:
    case VL_FOP_MKDIR:
    case VL_FOP_SYMLINK:
    case VL_FOP_RENAME:
    case VL_FOP_LINK:
    case VL_FOP_CREATE:
    case VL_FOP_OPEN:
    case VL_FOP_FALLOCATE:
        trace_add_iatt(b, &r->iatt);
        break;
    case VL_FOP_READ:
    case VL_FOP_GETXATTR:
        trace_add(b, " count=%" PRId64, r->count);
        break;
    case VL_FOP_WRITE:
    case VL_FOP_COPY_FILE_RANGE:
        trace_add(b, " count=%" PRId64, r->count);
        trace_add_iatt(b, &r->iatt);
        break;
    case VL_FOP_READDIR:
        trace_add(b, " entries=%zu eof=%d", r->entries.n, r->entries.eof);
        break;
    case VL_FOP_READLINK:
        trace_add(b, " link=%s", r->link != NULL ? r->link : "(null)");
        break;
    case VL_FOP_STATFS:
        trace_add(b, " bsize=%lu blocks=%llu bavail=%llu files=%llu",
                  (unsigned long)r->statvfs.f_bsize,
                  (unsigned long long)r->statvfs.f_blocks,
                  (unsigned long long)r->statvfs.f_bavail,
                  (unsigned long long)r->statvfs.f_files);
        break;
    case VL_FOP_LK:
        trace_add_flock(b, &r->flock);
        break;
    case VL_FOP_LSEEK:
        trace_add(b, " offset=%jd", (intmax_t)r->offset);
        break;
    case VL_FOP_XATTROP:
        trace_add(b, " len=%u", r->xattr_len);
        break;
    case VL_FOP_RCHECKSUM:
        trace_add(b, " size=%ju blocks=%u", (uintmax_t)r->iatt.size,
                  r->n_sums);
        break;
    default:
        break;
    }
}


static void
trace_done(vl_req_t *child, void *cookie)
{
    vl_req_t *req = cookie;
    vl_xlator_t *xl = req->xl;
    struct trace_priv *priv = xl->priv;
    int level = atomic_load(&priv->level);
    struct timespec now;
    int64_t usec;

    if (level != VL_LOG_NONE && level <= (int)vl_log_get_level()) {
        struct trace_buf b = {.used = 0};

        clock_gettime(CLOCK_MONOTONIC, &now);
        usec = (int64_t)(now.tv_sec - child->start.tv_sec) * 1000000
               + (now.tv_nsec - child->start.tv_nsec) / 1000;
        b.text[0] = '\0';
        if (child->status == 0)
            trace_format_reply(child, &b);
        vl_log(xl, (vl_log_level_t)level,
               "%s unwind req=%" PRIu64 " status=%d (%s) time=%" PRId64
               "us%s",
               vl_fop_name(child->op), req->id, child->status,
               strerror(-child->status), usec, b.text);
    }
    vl_reply_move(req, child);
    vl_unwind(req, child->status);
}


static void
trace_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct trace_priv *priv = xl->priv;
    int level = atomic_load(&priv->level);
    struct trace_buf b = {.used = 0};
    vl_req_t *child;

    /* Pass untouched when (1) logging is off, (2) this fop is not traced,
     * or (3) the process would drop the lines anyway. */
    if (level == VL_LOG_NONE                                       /* (1) */
        || !(atomic_load(&priv->fop_mask) & (UINT64_C(1) << req->op)) /* 2 */
        || level > (int)vl_log_get_level()) {                      /* (3) */
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }

    b.text[0] = '\0';
    trace_format_args(req, &b);
    vl_log(xl, (vl_log_level_t)level,
           "%s wind req=%" PRIu64 " uid=%u gid=%u pid=%u client=%" PRIu64
           " lk_owner=%#" PRIx64 "%s",
           vl_fop_name(req->op), req->id, req->caller.uid, req->caller.gid,
           req->caller.pid, req->caller.client_id, req->caller.lk_owner,
           b.text);

    child = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (child == NULL) {
        vl_log(xl, (vl_log_level_t)level,
               "%s unwind req=%" PRIu64 " status=%d (%s) time=0us",
               vl_fop_name(req->op), req->id, -ENOMEM, strerror(ENOMEM));
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(child, trace_done, req);
}


/* Parses the "fops" option into a mask; "all" (or empty) means every fop.
 * Returns 0 or -EINVAL with err naming the unknown fop. */
static int
trace_parse_fops(const char *list, uint64_t *mask, vl_err_t *err)
{
    const char *p = list;
    uint64_t m = 0;

    if (list == NULL) {
        *mask = (VL_FOP_COUNT == 64) ? UINT64_MAX
                                     : (UINT64_C(1) << VL_FOP_COUNT) - 1;
        return 0;
    }
    while (*p != '\0') {
        char name[64];
        size_t len;
        int op;

        p += strspn(p, " \t,");
        len = strcspn(p, " \t,");
        if (len == 0)
            break;
        if (len >= sizeof(name)) {
            vl_err_set(err, "fops: name too long in '%s'", list);
            return -EINVAL;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        p += len;
        if (strcasecmp(name, "all") == 0) {
            m |= (VL_FOP_COUNT == 64) ? UINT64_MAX
                                      : (UINT64_C(1) << VL_FOP_COUNT) - 1;
            continue;
        }
        op = vl_fop_from_name(name);
        if (op < 0) {
            vl_err_set(err, "fops: unknown fop '%s'", name);
            return -EINVAL;
        }
        m |= UINT64_C(1) << op;
    }
    if (m == 0)
        m = (VL_FOP_COUNT == 64) ? UINT64_MAX
                                 : (UINT64_C(1) << VL_FOP_COUNT) - 1;
    *mask = m;
    return 0;
}


static int
trace_cross_check(const void *conf, vl_err_t *err)
{
    uint64_t mask;

    return trace_parse_fops(((const struct trace_conf *)conf)->fops, &mask,
                            err);
}


static int
trace_apply(struct trace_priv *priv, const struct trace_conf *conf,
            vl_err_t *err)
{
    uint64_t mask;
    int rc;

    rc = trace_parse_fops(conf->fops, &mask, err);
    if (rc != 0)
        return rc;
    atomic_store(&priv->fop_mask, mask);
    atomic_store(&priv->level, conf->log_level);
    return 0;
}


static int
trace_init(vl_xlator_t *xl, vl_err_t *err)
{
    struct trace_priv *priv;
    int rc;

    priv = vl_calloc(xl, 1, sizeof(*priv), TRACE_MT_PRIV);
    if (priv == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    rc = trace_apply(priv, VL_CONF(xl, struct trace_conf), err);
    if (rc != 0) {
        vl_free(priv);
        return rc;
    }
    xl->priv = priv;
    return 0;
}


static void
trace_fini(vl_xlator_t *xl)
{
    vl_free(xl->priv);
    xl->priv = NULL;
}


static int
trace_reconfigure(vl_xlator_t *xl, const void *new_conf, vl_err_t *err)
{
    return trace_apply(xl->priv, new_conf, err);
}


static void
trace_dump(vl_xlator_t *xl, FILE *out)
{
    struct trace_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    fprintf(out, "level=%s\n", trace_levels[atomic_load(&priv->level)]);
    fprintf(out, "fop_mask=%#" PRIx64 "\n", atomic_load(&priv->fop_mask));
}


static const vl_option_t trace_options[] = {
    VL_OPT_ENUM("log-level", struct trace_conf, log_level,
                .values = trace_levels, .def = "INFO",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .doc = "Level the fop lines are logged at; NONE turns "
                       "tracing off."),
    VL_OPT_STR("fops", struct trace_conf, fops, .def = "all",
               .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
               .aliases = {"include-ops"},
               .doc = "Comma-separated fops to trace (e.g. "
                      "\"lookup,write\"), or \"all\"."),
    VL_OPT_END,
};

static const char *const trace_mem_types[] = {"misc", "priv", NULL};

const vl_xlator_class_t xl_debug_trace = {
    .abi = VL_XLATOR_ABI,
    .type = "debug/trace",
    .prefix = "trace",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD,
    .conf_size = sizeof(struct trace_conf),
    .options = trace_options,
    .mem_types = trace_mem_types,
    .doc = "Logs every fop with its arguments, and its result with the "
           "time it took; for debugging a graph.",
    .init = trace_init,
    .fini = trace_fini,
    .cross_check = trace_cross_check,
    .reconfigure = trace_reconfigure,
    .dump = trace_dump,
    .fops = {
#define VL_FOP(UPPER, lower, flags) [VL_FOP_##UPPER] = trace_fop,
#include "vol/fops.def"
#undef VL_FOP
    },
};
