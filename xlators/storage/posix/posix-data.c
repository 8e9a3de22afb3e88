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
 * Reads:      a big read (>= POSIX_DIRECT_MIN, page-aligned offset) of a
 *             range mostly not in the page cache, none of it dirty
 *             (cachestat(2)), is read with O_DIRECT through a second
 *             open of the file
 *             (/proc/self/fd): on a VM, filling the page cache of a cold
 *             file costs more CPU than the rest of the read path (local
 *             ext4, 512 MiB freshly written, caches dropped: 0.6-1.5 s of
 *             system time buffered, 0.07 s direct), and the client's
 *             kernel caches the data anyway. A cached or dirty range, a
 *             file system without O_DIRECT, or no cachestat: pread.
 *             O_DIRECT reads write dirty pages of the range back first,
 *             so they never see older data than pread would.
 * Threads:    io-threads workers; no locks of our own.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "posix.h"

/* A single read larger than this is a caller bug, not a request. */
#define POSIX_READ_MAX (64 * VL_MiB)

/* Reads at least this big of uncached ranges bypass the page cache. */
#define POSIX_DIRECT_MIN (256 * VL_KiB)
/* Offsets, lengths and buffers of O_DIRECT reads are multiples of this
 * (the largest logical block size in use; vl_buf data is page-aligned). */
#define POSIX_DIRECT_ALIGN 4096

/* cachestat(2) (Linux 6.5); the same number on every architecture. */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif

struct posix_cachestat_range {
    uint64_t off; /* first byte */
    uint64_t len; /* bytes; 0 = to the end of the file */
};

struct posix_cachestat {
    uint64_t nr_cache;            /* pages of the range in the cache */
    uint64_t nr_dirty;            /* of those, dirty */
    uint64_t nr_writeback;        /* of those, under writeback */
    uint64_t nr_evicted;          /* evicted pages (unused here) */
    uint64_t nr_recently_evicted; /* recently evicted (unused here) */
};

/* Cleared when the kernel has no cachestat: every read is buffered. */
static atomic_bool posix_has_cachestat = true;


/* Whether [offset, offset + size) of fd is worth reading around the
 * page cache: at most half of its pages are cached (the brick's own
 * read-ahead of an earlier small read may have brought in a few), and
 * none is dirty or under writeback (an O_DIRECT read would wait for
 * their writeback). */
static bool
posix_range_uncached(int fd, off_t offset, size_t size)
{
    struct posix_cachestat_range r = {(uint64_t)offset, size};
    struct posix_cachestat cs;

    if (!atomic_load_explicit(&posix_has_cachestat, memory_order_relaxed))
        return false;
    if (syscall(__NR_cachestat, fd, &r, &cs, 0) != 0) {
        if (errno == ENOSYS)
            atomic_store(&posix_has_cachestat, false);
        return false;
    }
    return cs.nr_dirty == 0 && cs.nr_writeback == 0
           && cs.nr_cache * 2 * POSIX_DIRECT_ALIGN <= size;
}


/* Reads up to size bytes at offset with O_DIRECT into data (room for
 * size rounded up to POSIX_DIRECT_ALIGN). Returns the bytes read (short
 * at the end of the file), or -1 when O_DIRECT cannot be used here (the
 * caller then reads from the page cache). */
static ssize_t
posix_read_direct(int os_fd, char *data, size_t size, off_t offset)
{
    char path[64];
    size_t want = (size + POSIX_DIRECT_ALIGN - 1)
                  & ~(size_t)(POSIX_DIRECT_ALIGN - 1);
    size_t done = 0;
    int dfd;

    snprintf(path, sizeof(path), "/proc/self/fd/%d", os_fd);
    dfd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    while (done < want) {
        ssize_t n = pread(dfd, data + done, want - done, offset + (off_t)done);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            close(dfd); /* EINVAL: no O_DIRECT here; the caller rereads */
            return -1;
        }
        done += (size_t)n;
        if (n == 0 || done % POSIX_DIRECT_ALIGN != 0)
            break; /* end of file */
    }
    close(dfd);
    return (ssize_t)(done < size ? done : size);
}


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
    /* A client sending big reads does its own read-ahead; the brick's
     * (up to the disk's read_ahead_kb, 8 MiB here) would fill the cache
     * just ahead of it and turn the following reads into cached ones. */
    if (a->size >= POSIX_DIRECT_MIN)
        (void)posix_fadvise(os_fd, 0, 0, POSIX_FADV_RANDOM);
    /* The second open is O_RDONLY: never for a write-only fd, whose
     * pread fails with EBADF. */
    if (a->size >= POSIX_DIRECT_MIN && a->offset % POSIX_DIRECT_ALIGN == 0
        && (a->fd->flags & O_ACCMODE) != O_WRONLY
        && posix_range_uncached(os_fd, a->offset, a->size)) {
        ssize_t n;

        buf = vl_buf_new((a->size + POSIX_DIRECT_ALIGN - 1)
                         & ~(size_t)(POSIX_DIRECT_ALIGN - 1));
        if (buf == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        n = posix_read_direct(os_fd, buf->data, a->size, a->offset);
        if (n >= 0) {
            done = (size_t)n;
            goto got;
        }
    } else {
        buf = vl_buf_new(a->size);
        if (buf == NULL) {
            rc = -ENOMEM;
            goto out;
        }
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
got:
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
