/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix-data: fops on open files.
 *
 * Intercepts: open, read, write, flush, fsync, fallocate, copy_file_range,
 *             lseek.
 * Per fd:     struct posix_fd_ctx holds the OS fd (set by open/create,
 *             closed by release). Reads and writes use pread/pwritev at
 *             the request's offset, so the OS fd's file position is never
 *             relied on; O_APPEND writes go to the end (RWF_APPEND).
 * Threads:    io-threads workers; no locks of our own.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "posix.h"

/* A single read larger than this is a caller bug, not a request. */
#define POSIX_READ_MAX (64 * VL_MiB)


void
posix_fop_open(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_open_args *a = VL_ARGS(req, open);
    struct posix_obj obj;
    int fd = -1;
    int rc;

    rc = posix_obj_from_loc(xl, &a->loc, &obj);
    if (rc != 0)
        goto out;
    if (a->fd == NULL)
        rc = -EINVAL;
    else if (S_ISDIR(obj.st.st_mode))
        rc = -EISDIR;
    else if (S_ISLNK(obj.st.st_mode))
        rc = -ELOOP;
    else if (!S_ISREG(obj.st.st_mode))
        rc = -ENXIO; /* special files are opened by the client's kernel */
    if (rc != 0)
        goto out;
    fd = openat(obj.atfd, obj.rel, posix_open_flags(a->flags));
    if (fd < 0) {
        rc = -errno;
        goto out;
    }
    rc = posix_fd_ctx_set(xl, a->fd, fd, false);
    if (rc != 0) {
        close(fd);
        goto out;
    }
    if (fstat(fd, &obj.st) == 0)
        posix_iatt_fill(&obj.st, &obj.gfid, &req->reply.iatt);
out:
    posix_obj_put(&obj);
    vl_unwind(req, rc);
}


void
posix_fop_read(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_read_args *a = VL_ARGS(req, read);
    vl_buf_t *buf = NULL;
    size_t done = 0;
    int os_fd;
    int rc;

    rc = posix_fd_os(xl, a->fd, &os_fd);
    if (rc != 0)
        goto out;
    if (a->offset < 0 || a->size > POSIX_READ_MAX) {
        rc = -EINVAL;
        goto out;
    }
    if (a->size == 0)
        goto out;
    buf = vl_buf_new(a->size);
    if (buf == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    /* Loop over short reads; a 0 is EOF. */
    while (done < a->size) {
        ssize_t n = pread(os_fd, buf->data + done, a->size - done,
                          a->offset + (off_t)done);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = -errno;
            goto out;
        }
        if (n == 0)
            break;
        done += (size_t)n;
    }
    req->reply.buf = buf;
    req->reply.data = buf->data;
    buf = NULL;
out:
    req->reply.count = (int64_t)done;
    vl_buf_unref(buf);
    vl_unwind(req, rc);
}


void
posix_fop_write(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_write_args *a = VL_ARGS(req, write);
    struct stat st;
    ssize_t n;
    int os_fd;
    int rc;

    rc = posix_fd_os(xl, a->fd, &os_fd);
    if (rc != 0)
        goto out;
    if (a->n_iov < 0 || a->n_iov > IOV_MAX || (a->n_iov > 0 && a->iov == NULL)
        || a->offset < 0) {
        rc = -EINVAL;
        goto out;
    }
    rc = posix_space_check(xl);
    if (rc != 0)
        goto out;
    do {
        n = pwritev2(os_fd, a->iov, a->n_iov, a->offset,
                     (a->flags & O_APPEND) ? RWF_APPEND : 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        rc = -errno;
        goto out;
    }
    req->reply.count = n;
    if (fstat(os_fd, &st) == 0)
        posix_iatt_fill_open(xl, &st, &a->fd->inode->gfid,
                             &req->reply.iatt);
out:
    vl_unwind(req, rc);
}


void
posix_fop_flush(vl_xlator_t *xl, vl_req_t *req)
{
    const struct posix_conf *conf = VL_CONF(xl, struct posix_conf);
    struct vl_flush_args *a = VL_ARGS(req, flush);
    int os_fd;
    int rc;

    rc = posix_fd_os(xl, a->fd, &os_fd);
    if (rc == 0 && conf->is_fsync_on_close && fsync(os_fd) < 0)
        rc = -errno;
    vl_unwind(req, rc);
}


void
posix_fop_fsync(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_fsync_args *a = VL_ARGS(req, fsync);
    struct stat st;
    int os_fd;
    int rc;

    rc = posix_fd_os(xl, a->fd, &os_fd);
    if (rc == 0 && (a->datasync ? fdatasync(os_fd) : fsync(os_fd)) < 0)
        rc = -errno;
    if (rc == 0 && fstat(os_fd, &st) == 0)
        posix_iatt_fill_open(xl, &st, &a->fd->inode->gfid,
                             &req->reply.iatt);
    vl_unwind(req, rc);
}


void
posix_fop_fallocate(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_fallocate_args *a = VL_ARGS(req, fallocate);
    struct stat st;
    int os_fd;
    int rc;

    rc = posix_fd_os(xl, a->fd, &os_fd);
    if (rc != 0)
        goto out;
    /* Punching a hole frees space, everything else may take some. */
    if (!(a->mode & FALLOC_FL_PUNCH_HOLE)) {
        rc = posix_space_check(xl);
        if (rc != 0)
            goto out;
    }
    if (fallocate(os_fd, a->mode, a->offset, a->len) < 0) {
        rc = -errno;
        goto out;
    }
    if (fstat(os_fd, &st) == 0)
        posix_iatt_fill_open(xl, &st, &a->fd->inode->gfid,
                             &req->reply.iatt);
out:
    vl_unwind(req, rc);
}


void
posix_fop_copy_file_range(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_copy_file_range_args *a = VL_ARGS(req, copy_file_range);
    off_t off_in = a->off_in;
    off_t off_out = a->off_out;
    struct stat st;
    int fd_in, fd_out;
    ssize_t n;
    int rc;

    rc = posix_fd_os(xl, a->fd_in, &fd_in);
    if (rc == 0)
        rc = posix_fd_os(xl, a->fd_out, &fd_out);
    if (rc != 0)
        goto out;
    if (a->flags != 0 || off_in < 0 || off_out < 0) {
        rc = -EINVAL;
        goto out;
    }
    rc = posix_space_check(xl);
    if (rc != 0)
        goto out;
    n = copy_file_range(fd_in, &off_in, fd_out, &off_out, a->len, 0);
    if (n < 0) {
        rc = -errno;
        goto out;
    }
    req->reply.count = n;
    if (fstat(fd_out, &st) == 0)
        posix_iatt_fill_open(xl, &st, &a->fd_out->inode->gfid,
                             &req->reply.iatt);
out:
    vl_unwind(req, rc);
}


void
posix_fop_lseek(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_lseek_args *a = VL_ARGS(req, lseek);
    off_t off;
    int os_fd;
    int rc;

    rc = posix_fd_os(xl, a->fd, &os_fd);
    if (rc != 0)
        goto out;
    /* The OS fd's position is shared and meaningless: no SEEK_CUR. */
    if (a->whence != SEEK_SET && a->whence != SEEK_END
        && a->whence != SEEK_DATA && a->whence != SEEK_HOLE) {
        rc = -EINVAL;
        goto out;
    }
    off = lseek(os_fd, a->offset, a->whence);
    if (off < 0) {
        rc = -errno;
        goto out;
    }
    req->reply.offset = off;
out:
    vl_unwind(req, rc);
}
