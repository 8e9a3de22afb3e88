/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix-content: quick-read's half on the brick. A LOOKUP with
 * args.content_max > 0 of a regular file no larger than that gets the
 * file's whole content in reply.buf/data/count, so the client can answer
 * OPEN and READ of small files without further round trips.
 *
 * READDIRPLUS with args.content_max does the same per entry
 * (posix-dir.c), into one buffer for the whole reply.
 *
 * The file is opened once (O_RDONLY | O_NOATIME when the brick may use
 * it, so reading for the cache does not touch atime; O_NOFOLLOW and
 * O_NONBLOCK, and only after an lstat said it is a regular file), read
 * with one pread of size + 1 bytes (a short read is the end), and an
 * fstat of that fd after the read must agree with the lstat taken before
 * the open (inode, size, mtime, ctime with nanoseconds), else the file
 * changed or was replaced meanwhile and no content is sent: content and
 * attributes always describe the same version of the file. That is
 * openat, pread, fstat, close per file.
 * Threads: io-threads workers (posix_fop_lookup, posix_fop_readdir); no
 *          state.
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


/* Opens rel under atfd for reading, never following a symlink nor
 * blocking on a fifo; O_NOATIME fails with EPERM when the brick is
 * neither the owner nor privileged, then without it. */
static int
posix_content_open(int atfd, const char *rel)
{
    int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
    int fd = openat(atfd, rel, flags | O_NOATIME);

    if (fd < 0 && errno == EPERM)
        fd = openat(atfd, rel, flags);
    return fd;
}


int
posix_content_read_at(int atfd, const char *rel, const struct stat *st,
                      char *out, struct stat *got)
{
    size_t want = (size_t)st->st_size + 1;
    size_t done = 0;
    ssize_t n;
    int rc = -ESTALE;
    int fd;

    /* Only what the caller saw as a regular file is opened: never a
     * device or a fifo (an open of one can have side effects). */
    if (!S_ISREG(st->st_mode) || st->st_size < 0)
        return -EINVAL;
    if (st->st_size == 0) {
        /* Nothing to read (empty files, distribute's link files): the
         * lstat is the version the (empty) content belongs to. */
        *got = *st;
        return 0;
    }
    fd = posix_content_open(atfd, rel);
    if (fd < 0)
        return -errno;
    /* One byte more than the size: a file that grew reads more. A short
     * read of a regular file is its end; anything else is caught by the
     * size check below. */
    while (done < want) {
        n = pread(fd, out + done, want - done, (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = -errno;
            goto out;
        }
        done += (size_t)n;
        if (n == 0 || done < want)
            break;
    }
    /* The stat taken before the open and the one after the read agree:
     * content and attributes are the same version of the file. */
    if (done != (size_t)st->st_size || fstat(fd, got) < 0
        || !posix_content_same(st, got))
        goto out;
    rc = (int)done;
out:
    close(fd);
    return rc;
}


void
posix_content_read(vl_xlator_t *xl, const struct posix_obj *obj,
                   uint32_t max, struct vl_reply *reply)
{
    struct stat st;
    vl_buf_t *buf;
    int rc;

    (void)xl;
    if (max == 0 || !S_ISREG(obj->st.st_mode)
        || obj->st.st_size > (off_t)max)
        return;
    buf = vl_buf_new((size_t)obj->st.st_size + 1);
    if (buf == NULL)
        return;
    rc = posix_content_read_at(obj->atfd, obj->rel, &obj->st, buf->data,
                               &st);
    if (rc < 0) {
        vl_buf_unref(buf);
        return;
    }
    posix_iatt_fill(&st, &obj->gfid, &reply->iatt);
    vl_buf_unref(reply->buf);
    reply->buf = buf;
    reply->data = buf->data;
    reply->count = rc;
}
