/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * arbiter: the brick side of a replica's arbiter (README.md,
 * doc/replicate.md "Arbiter").
 *
 * An arbiter brick holds every name, attribute, xattr and replicate's
 * pending records, but no file data: it is the third vote that tells
 * which of two data copies is good, at the cost of an inode per file.
 * Data fops are answered here without reaching storage/posix, as if they
 * had succeeded, with the file's attributes as the brick has them (size
 * 0: the arbiter never stores a byte, so its copies stay empty). Reads of
 * data are refused, so nobody can take the empty copy for the file.
 *
 * Intercepts:
 *   write, fallocate     answered from a STAT of the fd: count = the
 *   (zerofill, discard), bytes asked for, iatt = the brick's attributes;
 *   copy_file_range      nothing stored, nothing allocated.
 *   setattr              a new size is dropped (the copy stays empty); the
 *                        other attributes go down; a truncate alone is
 *                        answered from a STAT.
 *   read, lseek,         ENOTCONN, as GlusterFS's arbiter answers a read:
 *   rchecksum            a client that reaches the arbiter by mistake
 *                        treats it like a copy that went away and reads
 *                        another (an empty copy's answer would be a lie).
 *   lookup, readdir,     the content of small files (quick-read's
 *   opendir              content_max) is not asked for: it would be an
 *                        empty file's.
 * Everything else (entries, attributes, xattrs, XATTROP, locks, open,
 * create, statfs) passes through unchanged: open with O_TRUNC truncates
 * a copy that is empty already.
 *
 * Per req:    struct arb_local (the byte count a write answers).
 * State:      none; threads: any.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>

#include "vol/vol.h"

#include "builtin.h"

struct arb_local {
    int64_t count; /* bytes the data fop answers as written */
};


/* ---- data fops answered from a stat ---- */

static void
arb_stat_done(vl_req_t *child, void *cookie)
{
    vl_req_t *req = cookie;
    struct arb_local *local = VL_REQ_PRIV(req, struct arb_local);
    int status = child->status;

    if (status == 0) {
        req->reply.iatt = child->reply.iatt;
        req->reply.count = local->count;
    }
    vl_unwind(req, status);
}


/* Answers req with the attributes of fd (or loc's inode) and count. */
static void
arb_answer_from_stat(vl_xlator_t *xl, vl_req_t *req, vl_fd_t *fd,
                     const struct vl_loc *loc, int64_t count)
{
    vl_req_t *child = vl_req_new_op(req, VL_FIRST_CHILD(xl), VL_FOP_STAT);
    struct vl_stat_args *a;

    if (child == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    a = VL_ARGS(child, stat);
    a->fd = fd;
    if (loc != NULL)
        a->loc = *loc;
    else
        a->loc.inode = fd->inode;
    VL_REQ_PRIV(req, struct arb_local)->count = count;
    vl_wind(child, arb_stat_done, req);
}


static void
arb_write(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_write_args *a = VL_ARGS(req, write);
    int64_t count = 0;

    for (int i = 0; i < a->n_iov; i++)
        count += (int64_t)a->iov[i].iov_len;
    arb_answer_from_stat(xl, req, a->fd, NULL, count);
}


static void
arb_fallocate(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_fallocate_args *a = VL_ARGS(req, fallocate);

    if (a->offset < 0 || a->len <= 0) {
        vl_unwind(req, -EINVAL);
        return;
    }
    arb_answer_from_stat(xl, req, a->fd, NULL, 0);
}


/* The bytes a data brick copies depend on its source's size, which the
 * arbiter does not know: it answers len, and cluster/replicate never
 * takes a count from the arbiter. */
static void
arb_copy_file_range(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_copy_file_range_args *a = VL_ARGS(req, copy_file_range);

    arb_answer_from_stat(xl, req, a->fd_out, NULL, (int64_t)a->len);
}


static void
arb_setattr(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_setattr_args *a = VL_ARGS(req, setattr);
    vl_req_t *child;

    if (!(a->valid & VL_SET_SIZE)) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    if ((a->valid & ~VL_SET_SIZE) == 0) {
        arb_answer_from_stat(xl, req, a->fd, a->fd != NULL ? NULL : &a->loc,
                             0);
        return;
    }
    /* chown or chmod with a truncate (ftruncate after open, utimes...):
     * the attributes are kept, the size is not. */
    child = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (child == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    VL_ARGS(child, setattr)->valid &= ~VL_SET_SIZE;
    vl_wind(child, arb_stat_done, req);
}


/* ---- reads ---- */

static void
arb_no_data(vl_xlator_t *xl, vl_req_t *req)
{
    vl_log(xl, VL_LOG_DEBUG, "%s refused: an arbiter holds no data",
           vl_fop_name(req->op));
    vl_unwind(req, -ENOTCONN);
}


static void
arb_moved_done(vl_req_t *child, void *cookie)
{
    vl_req_t *req = cookie;

    vl_reply_move(req, child);
    vl_unwind(req, child->status);
}


/* lookup, readdir and opendir without the content of small files. */
static void
arb_no_content(vl_xlator_t *xl, vl_req_t *req)
{
    vl_req_t *child;
    uint32_t *content_max;

    switch (req->op) {
    case VL_FOP_LOOKUP:
        content_max = &req->args.lookup.content_max;
        break;
    case VL_FOP_READDIR:
        content_max = &req->args.readdir.content_max;
        break;
    default:
        content_max = &req->args.opendir.content_max;
        break;
    }
    if (*content_max == 0) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    child = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (child == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    switch (req->op) {
    case VL_FOP_LOOKUP:
        VL_ARGS(child, lookup)->content_max = 0;
        break;
    case VL_FOP_READDIR:
        VL_ARGS(child, readdir)->content_max = 0;
        break;
    default:
        VL_ARGS(child, opendir)->content_max = 0;
        break;
    }
    vl_wind(child, arb_moved_done, req);
}


static const vl_option_t arb_options[] = {VL_OPT_END};


const vl_xlator_class_t xl_features_arbiter = {
    .abi = VL_XLATOR_ABI,
    .type = "features/arbiter",
    .prefix = "arbiter",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD,
    .req_priv_size = sizeof(struct arb_local),
    .options = arb_options,
    .doc = "On a replica's arbiter brick: keeps names, attributes, xattrs "
           "and pending records but no file data (writes are answered "
           "without being stored, reads are refused).",
    .fops = {
        [VL_FOP_WRITE] = arb_write,
        [VL_FOP_FALLOCATE] = arb_fallocate,
        [VL_FOP_COPY_FILE_RANGE] = arb_copy_file_range,
        [VL_FOP_SETATTR] = arb_setattr,
        [VL_FOP_READ] = arb_no_data,
        [VL_FOP_LSEEK] = arb_no_data,
        [VL_FOP_RCHECKSUM] = arb_no_data,
        [VL_FOP_LOOKUP] = arb_no_content,
        [VL_FOP_READDIR] = arb_no_content,
        [VL_FOP_OPENDIR] = arb_no_content,
    },
};
