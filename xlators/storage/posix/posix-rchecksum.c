/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix-rchecksum: RCHECKSUM, one SHA-256 digest per block of a range of
 * an open file (issue 22: self-heal compares copies block by block and
 * copies only the blocks that differ).
 *
 * Intercepts: rchecksum.
 * Per call:   one buffer of block_size bytes (at most 1 MiB) and one
 *             EVP digest context, both freed before the answer; the
 *             reply's block records (at most 1024 of 40 bytes).
 * Holes:      SEEK_DATA/SEEK_HOLE find the data extents; a block wholly
 *             inside a hole is answered VL_RCHECKSUM_HOLE | ZERO without
 *             being read. A block that was read and holds only zeros is
 *             answered ZERO (no digest), so a hole on one copy and written
 *             zeros on another compare equal. A file system without
 *             SEEK_DATA is read in full.
 * EOF:        the file's size is taken once (fstat) before reading; a
 *             block reaching past it is digested as far as it goes and
 *             the blocks after it are not answered. A file that changes
 *             during the call gets an answer that mixes before and after
 *             (a short read ends it): the caller holds the locks that
 *             make the comparison meaningful.
 * Threads:    io-threads workers; no locks of our own. lseek moves the OS
 *             fd's shared position, which posix never relies on (reads
 *             and writes are pread/pwritev).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "posix.h"


/* The data extent at or after pos: [*data_at, *hole_at). No data left
 * before size: both are size. Without SEEK_DATA (EINVAL from the file
 * system): everything from pos is data. */
static void
posix_rck_extent(int os_fd, off_t pos, uint64_t size, off_t *data_at,
                 off_t *hole_at)
{
    off_t d = lseek(os_fd, pos, SEEK_DATA);
    off_t h;

    if (d < 0) {
        if (errno == ENXIO) {
            *data_at = (off_t)size;
            *hole_at = (off_t)size;
        } else {
            *data_at = pos;
            *hole_at = INT64_MAX;
        }
        return;
    }
    h = lseek(os_fd, d, SEEK_HOLE);
    *data_at = d;
    *hole_at = h < 0 ? INT64_MAX : h;
}


/* Reads up to len bytes at off; returns the count (short only at EOF)
 * or -errno. */
static ssize_t
posix_rck_read(int os_fd, unsigned char *buf, size_t len, off_t off)
{
    size_t done = 0;

    while (done < len) {
        ssize_t n = pread(os_fd, buf + done, len - done, off + (off_t)done);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break;
        done += (size_t)n;
    }
    return (ssize_t)done;
}


static bool
posix_rck_is_zero(const unsigned char *buf, size_t len)
{
    /* Every byte equals the one before it, and the first is zero. */
    return len == 0 || (buf[0] == 0 && memcmp(buf, buf + 1, len - 1) == 0);
}


int
posix_rchecksum_blocks(int os_fd, off_t offset, uint32_t len,
                       uint32_t block_size, uint64_t file_size,
                       unsigned char *buf, struct vl_block_sum *out,
                       uint32_t *n_out)
{
    uint32_t n_max = (len + block_size - 1) / block_size;
    off_t data_at = 0;
    off_t hole_at = -1; /* no extent known yet */
    EVP_MD_CTX *md = NULL;
    uint32_t n = 0;
    int rc = 0;

    for (uint32_t i = 0; i < n_max; i++) {
        uint32_t blen = vl_rchecksum_block_len(offset, len, block_size,
                                               file_size, i);
        off_t start = offset + (off_t)i * block_size;
        struct vl_block_sum *s = &out[n];
        unsigned int dlen = 0;
        ssize_t got;

        if (blen == 0)
            break;
        memset(s, 0, sizeof(*s));
        if (start >= hole_at || hole_at < 0)
            posix_rck_extent(os_fd, start, file_size, &data_at, &hole_at);
        if (start + (off_t)blen <= data_at) {
            /* Wholly before the next data: a hole, not read. */
            s->flags = VL_RCHECKSUM_HOLE | VL_RCHECKSUM_ZERO;
            s->len = blen;
            n++;
            continue;
        }
        got = posix_rck_read(os_fd, buf, blen, start);
        if (got < 0) {
            rc = (int)got;
            goto out;
        }
        if (got == 0)
            break; /* the file shrank under us: nothing more to answer */
        s->len = (uint32_t)got;
        n++;
        if (posix_rck_is_zero(buf, (size_t)got)) {
            s->flags = VL_RCHECKSUM_ZERO;
        } else {
            if (md == NULL && (md = EVP_MD_CTX_new()) == NULL) {
                rc = -ENOMEM;
                goto out;
            }
            if (EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1
                || EVP_DigestUpdate(md, buf, (size_t)got) != 1
                || EVP_DigestFinal_ex(md, s->digest, &dlen) != 1
                || dlen != VL_RCHECKSUM_DIGEST_LEN) {
                rc = -EIO;
                goto out;
            }
        }
        if ((uint32_t)got < blen)
            break; /* short read: EOF moved; later blocks are gone */
    }
out:
    EVP_MD_CTX_free(md);
    *n_out = rc == 0 ? n : 0;
    return rc;
}


void
posix_fop_rchecksum(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_rchecksum_args *a = VL_ARGS(req, rchecksum);
    struct vl_block_sum *sums = NULL;
    unsigned char *buf = NULL;
    uint32_t n = 0;
    struct stat st;
    int os_fd;
    int rc;

    rc = posix_fd_os(xl, a->fd, &os_fd);
    if (rc != 0)
        goto out;
    rc = vl_rchecksum_check(a->offset, a->len, a->block_size);
    if (rc != 0)
        goto out;
    if (fstat(os_fd, &st) < 0) {
        rc = -errno;
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
        goto out;
    }
    posix_iatt_fill_open(xl, &st, &a->fd->inode->gfid, &req->reply.iatt);
    if ((uint64_t)a->offset >= (uint64_t)st.st_size)
        goto out; /* all beyond EOF: no blocks, the size says why */
    sums = vl_calloc(NULL, (a->len + a->block_size - 1) / a->block_size,
                     sizeof(*sums), VL_MT_REPLY);
    buf = vl_malloc(xl, a->block_size, POSIX_MT_RCHECKSUM);
    if (sums == NULL || buf == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    rc = posix_rchecksum_blocks(os_fd, a->offset, a->len, a->block_size,
                                (uint64_t)st.st_size, buf, sums, &n);
    if (rc == 0 && n > 0) {
        req->reply.sums = sums;
        req->reply.n_sums = n;
        sums = NULL;
    }
out:
    vl_free(buf);
    vl_free(sums);
    vl_unwind(req, rc);
}
