/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix-content: quick-read's half on the brick. A LOOKUP with
 * args.content_max > 0 of a regular file no larger than that gets the
 * file's whole content in reply.buf/data/count, so the client can answer
 * OPEN and READ of small files without further round trips.
 *
 * The file is opened once (O_RDONLY | O_NOATIME when the brick may use
 * it, so reading for the cache does not touch atime); the attributes are
 * an fstat of that same fd taken before the read, and a second fstat
 * after it must agree (size, mtime, ctime with nanoseconds), else a
 * writer raced us and no content is sent: content and attributes always
 * describe the same version of the file.
 * Threads: io-threads workers (called from posix_fop_lookup); no state.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix-content.h"


static bool
posix_content_same(const struct stat *a, const struct stat *b)
{
    return a->st_size == b->st_size && a->st_ino == b->st_ino
           && a->st_mtim.tv_sec == b->st_mtim.tv_sec
           && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec
           && a->st_ctim.tv_sec == b->st_ctim.tv_sec
           && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}


/* Opens the object for reading; O_NOATIME fails with EPERM when the
 * brick is neither the owner nor privileged, then without it. */
static int
posix_content_open(const struct posix_obj *obj)
{
    int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
    int fd = openat(obj->atfd, obj->rel, flags | O_NOATIME);

    if (fd < 0 && errno == EPERM)
        fd = openat(obj->atfd, obj->rel, flags);
    return fd;
}


void
posix_content_read(vl_xlator_t *xl, const struct posix_obj *obj,
                   uint32_t max, struct vl_reply *reply)
{
    struct stat st, st2;
    vl_buf_t *buf = NULL;
    size_t done = 0;
    ssize_t n;
    int fd;

    (void)xl;
    if (max == 0 || !S_ISREG(obj->st.st_mode)
        || obj->st.st_size > (off_t)max)
        return;
    fd = posix_content_open(obj);
    if (fd < 0)
        return;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)max)
        goto out;
    /* One byte more than the size: a file that grew is noticed below. */
    buf = vl_buf_new((size_t)st.st_size + 1);
    if (buf == NULL)
        goto out;
    while (done < (size_t)st.st_size + 1) {
        n = pread(fd, buf->data + done, (size_t)st.st_size + 1 - done,
                  (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            goto out;
        if (n == 0)
            break;
        done += (size_t)n;
    }
    if (done != (size_t)st.st_size || fstat(fd, &st2) < 0
        || !posix_content_same(&st, &st2))
        goto out;
    posix_iatt_fill(&st, &obj->gfid, &reply->iatt);
    vl_buf_unref(reply->buf);
    reply->buf = buf;
    reply->data = buf->data;
    reply->count = (int64_t)done;
    buf = NULL;
out:
    vl_buf_unref(buf);
    close(fd);
}
