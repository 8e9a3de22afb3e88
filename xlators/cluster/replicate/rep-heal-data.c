/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-heal-data: the data heal of one regular file (doc/replicate.md
 * "Self-heal"):
 *
 *   1. under the whole-file inodelk (the lock writes take): the records
 *      say which copies are sinks (dirty without blame: the sizes, then
 *      the contents are compared; the largest copy is the source of
 *      those that differ, which it is first marked as blaming); the
 *      sinks and the source are opened (every data copy to compare);
 *   2. the file is walked in REP_HEAL_CHUNK steps, each under an inodelk
 *      of that range only (applications' writes elsewhere go on; a file
 *      of up to REP_HEAL_ONE_STEP is copied in one step under the
 *      whole-file lock, kept from 1 to 3, which saves dropping it, a
 *      range lock and taking it again): the
 *      source's data (LSEEK SEEK_DATA/SEEK_HOLE) is copied to the sinks,
 *      its holes are punched in them (FALLOC_FL_PUNCH_HOLE), so holes
 *      stay holes; without SEEK_DATA all-zero blocks are punched instead
 *      of written;
 *   3. under the whole-file lock again: what the file grew by meanwhile
 *      is copied, the sinks are truncated to the source's size, given
 *      its times, fsynced, and only then are the data records cleared.
 *
 * A write during the heal goes to every copy (sinks included) under its
 * own whole-file lock, so a range is either copied before the write
 * (which then lands everywhere) or after it (and copies it). A heal cut
 * anywhere before step 3's clear leaves the records: the sinks stay
 * blamed and unread.
 *
 * `diff` (the default): where a sink holds bytes of its own, each step
 * first compares the copies' SHA-256 digests of 64 KiB blocks
 * (RCHECKSUM, computed on the bricks) and copies only the blocks that
 * differ (punches those that are zeros on the source); beyond the
 * sinks' old sizes, or against a brick without RCHECKSUM, it copies as
 * `full` does.
 * Threads: a heal thread (rep-heal.c), blocking calls.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rep-heal.h"

#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE 0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif

/* The data heal's open files, one fd per child. */
struct rep_heal_files {
    vl_fd_t *fd[REP_MAX_CHILDREN];
    uint64_t sink_size[REP_MAX_CHILDREN]; /* at the start: no stale data
                                             of a sink lies beyond */
    bool has_seek;                        /* the source answers SEEK_DATA */
    rep_mask_t data;                      /* children holding data: not
                                             the arbiter */
    rep_mask_t open;                      /* children with an fd */
    rep_mask_t copy_to;                   /* sinks holding data */
    bool is_diff;                         /* compare blocks first */
};

/* A file this small has no hole but itself: no LSEEK asked. */
#define REP_HEAL_SEEK_MIN 4096

/* diff: the block the copies' digests are compared by. */
#define REP_HEAL_DIFF_BLOCK (64 * 1024)


static int
rep_heal_open(struct rep_heal *h, unsigned child, int flags, vl_fd_t **out)
{
    union vl_fop_args a;
    vl_fd_t *fd = vl_fd_new(h->inode, flags, (uint32_t)getpid());
    int rc;

    if (fd == NULL)
        return -ENOMEM;
    memset(&a, 0, sizeof(a));
    a.open.loc.inode = h->inode;
    a.open.flags = flags;
    a.open.fd = fd;
    rc = rep_heal_call(h, child, VL_FOP_OPEN, &a, NULL);
    if (rc != 0) {
        vl_fd_unref(fd);
        return rc;
    }
    *out = fd;
    return 0;
}


static void
rep_heal_files_close(struct rep_heal_files *f)
{
    for (unsigned i = 0; i < REP_MAX_CHILDREN; i++) {
        vl_fd_unref(f->fd[i]);
        f->fd[i] = NULL;
    }
}


static int
rep_heal_fstat(struct rep_heal *h, struct rep_heal_files *f, unsigned child,
               struct vl_iatt *out)
{
    union vl_fop_args a;
    struct vl_reply r = {0};
    int rc;

    memset(&a, 0, sizeof(a));
    a.stat.loc.inode = h->inode;
    a.stat.fd = f->fd[child];
    rc = rep_heal_call(h, child, VL_FOP_STAT, &a, &r);
    if (rc == 0)
        *out = r.iatt;
    vl_reply_clear(&r);
    return rc;
}


/* Reads up to len bytes at off from child into *r (cleared by the
 * caller). */
static int
rep_heal_read(struct rep_heal *h, struct rep_heal_files *f, unsigned child,
              uint64_t off, size_t len, struct vl_reply *r)
{
    union vl_fop_args a;

    memset(&a, 0, sizeof(a));
    a.read.fd = f->fd[child];
    a.read.offset = (off_t)off;
    a.read.size = len;
    return rep_heal_call(h, child, VL_FOP_READ, &a, r);
}


static int
rep_heal_write(struct rep_heal *h, struct rep_heal_files *f, unsigned child,
               uint64_t off, const struct vl_reply *data)
{
    union vl_fop_args a;
    struct iovec iov;

    iov.iov_base = (void *)data->data;
    iov.iov_len = (size_t)data->count;
    memset(&a, 0, sizeof(a));
    a.write.fd = f->fd[child];
    a.write.iov = &iov;
    a.write.n_iov = 1;
    a.write.offset = (off_t)off;
    a.write.buf = data->buf;
    rep_heal_throttle(h, (uint64_t)data->count);
    return rep_heal_call(h, child, VL_FOP_WRITE, &a, NULL);
}


/* Makes [off, off + len) a hole on child (zeros where punching is not
 * supported). */
static int
rep_heal_punch(struct rep_heal *h, struct rep_heal_files *f, unsigned child,
               uint64_t off, uint64_t len)
{
    union vl_fop_args a;
    int rc;

    if (off >= f->sink_size[child] || len == 0)
        return 0; /* nothing of the sink's own there */
    memset(&a, 0, sizeof(a));
    a.fallocate.fd = f->fd[child];
    a.fallocate.mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
    a.fallocate.offset = (off_t)off;
    a.fallocate.len = (off_t)len;
    rc = rep_heal_call(h, child, VL_FOP_FALLOCATE, &a, NULL);
    if (rc == -EOPNOTSUPP || rc == -ENOSYS) {
        static const char zeros[64 * 1024];
        struct vl_reply z = {0};

        rc = 0;
        for (uint64_t at = off; rc == 0 && at < off + len;) {
            uint64_t n = off + len - at;

            if (n > sizeof(zeros))
                n = sizeof(zeros);
            z.data = zeros;
            z.count = (int64_t)n;
            rc = rep_heal_write(h, f, child, at, &z);
            at += n;
        }
    }
    return rc;
}


/* The largest size a sink had at the start. */
static uint64_t
rep_heal_sink_max(struct rep_heal *h, struct rep_heal_files *f)
{
    uint64_t max = 0;

    for (unsigned i = 0; i < h->n; i++)
        if ((f->copy_to & (1u << i)) && f->sink_size[i] > max)
            max = f->sink_size[i];
    return max;
}


static bool
rep_heal_is_zero(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != 0)
            return false;
    return true;
}


/* Where the source's next data at or after off is (*data) and where it
 * ends (*hole); *data = end when only a hole is left. */
static int
rep_heal_extent(struct rep_heal *h, struct rep_heal_files *f, uint64_t off,
                uint64_t end, uint64_t *data, uint64_t *hole)
{
    union vl_fop_args a;
    struct vl_reply r = {0};
    int rc;

    *data = off;
    *hole = end;
    if (!f->has_seek)
        return 0;
    memset(&a, 0, sizeof(a));
    a.lseek.fd = f->fd[h->src];
    a.lseek.offset = (off_t)off;
    a.lseek.whence = SEEK_DATA;
    rc = rep_heal_call(h, (unsigned)h->src, VL_FOP_LSEEK, &a, &r);
    if (rc == -ENXIO) {
        *data = end;
        return 0;
    }
    if (rc != 0) {
        vl_reply_clear(&r);
        if (rc == -ENOTCONN)
            return rc;
        f->has_seek = false; /* not supported below: read everything */
        return 0;
    }
    *data = (uint64_t)r.offset < end ? (uint64_t)r.offset : end;
    vl_reply_clear(&r);
    if (*data >= end)
        return 0;
    a.lseek.offset = (off_t)*data;
    a.lseek.whence = SEEK_HOLE;
    rc = rep_heal_call(h, (unsigned)h->src, VL_FOP_LSEEK, &a, &r);
    if (rc == 0 && (uint64_t)r.offset > *data && (uint64_t)r.offset < end)
        *hole = (uint64_t)r.offset;
    vl_reply_clear(&r);
    return rc == -ENOTCONN ? rc : 0;
}


/* The block digests of [off, off + len) on child, into r. */
static int
rep_heal_sums(struct rep_heal *h, struct rep_heal_files *f, unsigned child,
              uint64_t off, uint32_t len, struct vl_reply *r)
{
    union vl_fop_args a;

    memset(&a, 0, sizeof(a));
    a.rchecksum.fd = f->fd[child];
    a.rchecksum.offset = (off_t)off;
    a.rchecksum.len = len;
    a.rchecksum.block_size = REP_HEAL_DIFF_BLOCK;
    return rep_heal_call(h, child, VL_FOP_RCHECKSUM, &a, r);
}


static bool
rep_heal_sum_equal(const struct vl_block_sum *a, const struct vl_block_sum *b)
{
    if (a->len != b->len
        || (a->flags & VL_RCHECKSUM_ZERO) != (b->flags & VL_RCHECKSUM_ZERO))
        return false;
    return (a->flags & VL_RCHECKSUM_ZERO)
           || memcmp(a->digest, b->digest, sizeof(a->digest)) == 0;
}


/* diff: [off, stop) compared block by block (SHA-256 digests on each
 * brick, RCHECKSUM), and only the blocks that differ copied (or punched,
 * where the source's block is all zeros). -EOPNOTSUPP/-ENOSYS: a brick
 * without the fop (the caller copies in full). */
static int
rep_heal_step_diff(struct rep_heal *h, struct rep_heal_files *f,
                   uint64_t off, uint64_t stop)
{
    struct vl_reply rs = {0};
    int rc;

    rc = rep_heal_sums(h, f, (unsigned)h->src, off, (uint32_t)(stop - off),
                       &rs);
    for (unsigned k = 0; k < h->n && rc == 0; k++) {
        struct vl_reply rk = {0};

        if (!(f->copy_to & (1u << k)))
            continue;
        rc = rep_heal_sums(h, f, k, off, (uint32_t)(stop - off), &rk);
        for (uint32_t b = 0; rc == 0 && b < rs.n_sums; b++) {
            const struct vl_block_sum *sb = &rs.sums[b];
            uint64_t at = off + (uint64_t)b * REP_HEAL_DIFF_BLOCK;
            struct vl_reply d = {0};

            if (b < rk.n_sums && rep_heal_sum_equal(sb, &rk.sums[b]))
                continue;
            if (sb->flags & VL_RCHECKSUM_ZERO) {
                rc = rep_heal_punch(h, f, k, at, sb->len);
                continue;
            }
            rc = rep_heal_read(h, f, (unsigned)h->src, at, sb->len, &d);
            if (rc == 0 && d.count > 0) {
                rc = rep_heal_write(h, f, k, at, &d);
                if (rc == 0)
                    h->bytes += (uint64_t)d.count;
            }
            vl_reply_clear(&d);
        }
        vl_reply_clear(&rk);
    }
    vl_reply_clear(&rs);
    return rc;
}


/* One step: [off, min(off + CHUNK, end)) of the source onto the sinks;
 * *next is where the next step starts. */
static int
rep_heal_step(struct rep_heal *h, struct rep_heal_files *f, uint64_t off,
              uint64_t end, uint64_t *next)
{
    uint64_t stop = end - off > REP_HEAL_CHUNK ? off + REP_HEAL_CHUNK : end;
    uint64_t data, hole;
    struct vl_reply r = {0};
    int rc;

    /* diff where a sink has bytes of its own to compare; beyond them
     * there is nothing to save and the copy is full. */
    if (f->is_diff && off < rep_heal_sink_max(h, f)
        && off % REP_HEAL_DIFF_BLOCK == 0) {
        rc = rep_heal_step_diff(h, f, off, stop);
        if (rc != -EOPNOTSUPP && rc != -ENOSYS) {
            *next = stop;
            return rc;
        }
        f->is_diff = false; /* a brick without RCHECKSUM */
    }
    rc = rep_heal_extent(h, f, off, stop, &data, &hole);
    if (rc != 0)
        return rc;
    if (data > off) {
        /* [off, data) is a hole on the source. */
        for (unsigned i = 0; i < h->n && rc == 0; i++)
            if (f->copy_to & (1u << i))
                rc = rep_heal_punch(h, f, i, off, data - off);
        *next = data;
        return rc;
    }
    rc = rep_heal_read(h, f, (unsigned)h->src, off, (size_t)(hole - off),
                       &r);
    if (rc == 0 && r.count <= 0) {
        /* The file ends before: nothing more to copy. */
        *next = end;
        vl_reply_clear(&r);
        return 0;
    }
    if (rc == 0 && !f->has_seek && rep_heal_is_zero(r.data, (size_t)r.count))
        for (unsigned i = 0; i < h->n && rc == 0; i++) {
            if (f->copy_to & (1u << i))
                rc = rep_heal_punch(h, f, i, off, (uint64_t)r.count);
        }
    else
        for (unsigned i = 0; i < h->n && rc == 0; i++)
            if (f->copy_to & (1u << i)) {
                rc = rep_heal_write(h, f, i, off, &r);
                if (rc == 0)
                    h->bytes += (uint64_t)r.count;
            }
    if (rc == 0)
        *next = off + (uint64_t)r.count;
    vl_reply_clear(&r);
    return rc;
}


/* Copies [off, end) in steps; with is_locked_steps each step holds an
 * inodelk of its range (the whole-file lock is not held). */
static int
rep_heal_copy(struct rep_heal *h, struct rep_heal_files *f, uint64_t off,
              uint64_t end, bool is_locked_steps)
{
    int rc = 0;

    while (rc == 0 && off < end) {
        uint64_t next = end;
        int64_t len = (int64_t)(end - off > REP_HEAL_CHUNK ? REP_HEAL_CHUNK
                                                          : end - off);

        if (is_locked_steps) {
            rc = rep_heal_inodelk(h, (int64_t)off, len);
            if (rc != 0)
                break;
        }
        rc = rep_heal_step(h, f, off, end, &next);
        if (is_locked_steps)
            rep_heal_inodeunlk(h, (int64_t)off, len);
        off = next > off ? next : off + (uint64_t)len;
    }
    return rc;
}


/* Dirty without blame: do the copies hold the same bytes? 1 if they
 * differ from the source's (into h->sinks), 0, or -errno. */
static int
rep_heal_data_compare(struct rep_heal *h, struct rep_heal_files *f)
{
    int src = -1;

    /* The largest copy wins: a cut write or append is more likely to
     * have reached some copies than to have shrunk one. */
    for (unsigned i = 0; i < h->n; i++)
        if ((f->data & (1u << i))
            && (src < 0 || h->ia[i].size > h->ia[src].size))
            src = (int)i;
    h->src = src;
    h->sinks = 0;
    for (unsigned i = 0; i < h->n; i++)
        if ((f->data & (1u << i)) && (int)i != src
            && h->ia[i].size != h->ia[src].size)
            h->sinks |= 1u << i;
    for (uint64_t off = 0; off < h->ia[src].size; off += REP_HEAL_CHUNK) {
        struct vl_reply rs = {0};
        int rc = rep_heal_read(h, f, (unsigned)src, off, REP_HEAL_CHUNK, &rs);

        for (unsigned i = 0; i < h->n && rc == 0; i++) {
            struct vl_reply rk = {0};

            if ((int)i == src || (h->sinks & (1u << i))
                || !(f->data & (1u << i)))
                continue;
            rc = rep_heal_read(h, f, i, off, REP_HEAL_CHUNK, &rk);
            if (rc == 0
                && (rk.count != rs.count
                    || memcmp(rk.data, rs.data, (size_t)rs.count) != 0))
                h->sinks |= 1u << i;
            vl_reply_clear(&rk);
        }
        vl_reply_clear(&rs);
        if (rc != 0)
            return rc;
    }
    return rep_heal_mark_sinks(h, h->inode, REP_DATA);
}


/* Step 3: the tail, size, times, fsync, under the whole-file lock. */
static int
rep_heal_data_finish(struct rep_heal *h, struct rep_heal_files *f,
                     uint64_t copied)
{
    struct vl_iatt st;
    int rc;

    rc = rep_heal_fstat(h, f, (unsigned)h->src, &st);
    if (rc == 0 && st.size > copied)
        rc = rep_heal_copy(h, f, copied, st.size, false);
    for (unsigned i = 0; i < h->n && rc == 0; i++) {
        union vl_fop_args a;

        if (!(f->copy_to & (1u << i)))
            continue;
        memset(&a, 0, sizeof(a));
        a.setattr.loc.inode = h->inode;
        a.setattr.fd = f->fd[i];
        a.setattr.attr = st;
        /* The size, then the times the writes and the truncation moved:
         * the source's again (one call: the size is set first). */
        a.setattr.valid = VL_SET_SIZE | VL_SET_ATIME | VL_SET_MTIME;
        rc = rep_heal_call(h, i, VL_FOP_SETATTR, &a, NULL);
        if (rc == 0) {
            memset(&a, 0, sizeof(a));
            a.fsync.fd = f->fd[i];
            rc = rep_heal_call(h, i, VL_FOP_FSYNC, &a, NULL);
        }
    }
    return rc;
}


enum rep_heal_result
rep_heal_data(struct rep_heal *h)
{
    struct rep_heal_files f;
    enum rep_heal_result res = REP_HR_HEALED;
    enum rep_heal_verdict v;
    char gs[VL_GFID_STR_LEN];
    uint64_t size;
    bool is_locked;
    int rc;

    memset(&f, 0, sizeof(f));
    f.has_seek = true;
    /* The lock and the records in one round trip a copy; h->rec stays
     * fresh until the lock is dropped for the copy. */
    rc = rep_heal_inodelk_records(h);
    if (rc != 0)
        return rc == -ENOTCONN ? REP_HR_PENDING : REP_HR_FAILED;
    is_locked = true;
    v = rep_heal_decide(h, REP_DATA);
    if (v == REP_HV_WAIT) {
        res = REP_HR_PENDING; /* the only possible source is down */
        goto out;
    }
    rc = rep_heal_split(h, REP_DATA, &v);
    if (rc != 0) {
        if (rc > 0) {
            rc = 0;
            res = REP_HR_CLEAN;
        }
        goto out;
    }
    if (v == REP_HV_CLEAN) {
        res = REP_HR_CLEAN;
        goto out;
    }
    if (v == REP_HV_SPLIT) {
        vl_log(h->xl, VL_LOG_ERROR, "heal %s: data split-brain (every copy "
               "blamed by another): not healed; its reads answer EIO",
               vl_gfid_to_str(&h->inode->gfid, gs));
        res = REP_HR_SPLIT;
        goto out;
    }
    /* The arbiter holds no data: never a source, and as a sink only
     * its records are cleared. */
    f.data = h->up & ~rep_priv(h->xl)->arbiter;
    h->sources &= f.data;
    if (v == REP_HV_NEEDED && h->sources == 0) {
        /* The good data copy is not among those answering: wait. */
        vl_log(h->xl, VL_LOG_INFO, "heal %s: only the arbiter is not "
               "blamed for data: no copy to heal from yet",
               vl_gfid_to_str(&h->inode->gfid, gs));
        res = REP_HR_PENDING;
        goto out;
    }
    for (unsigned i = 0; i < h->n; i++)
        if (h->sources & (1u << i)) {
            h->src = (int)i;
            break;
        }
    /* A comparison reads every data copy; a heal only the source and
     * the sinks. */
    f.open = v == REP_HV_COMPARE
             ? f.data : f.data & (h->sinks | (1u << (unsigned)h->src));
    for (unsigned i = 0; i < h->n && rc == 0; i++) {
        if (!(f.open & (1u << i)))
            continue;
        rc = rep_heal_open(h, i, O_RDWR, &f.fd[i]);
        if (rc == 0)
            rc = rep_heal_fstat(h, &f, i, &h->ia[i]);
        f.sink_size[i] = h->ia[i].size;
    }
    if (rc == 0 && v == REP_HV_COMPARE) {
        rc = rep_heal_data_compare(h, &f);
        if (rc == 0 && h->sinks == 0) {
            /* Identical: only the dirty counts go. */
            res = REP_HR_CLEAN;
            rc = rep_heal_records_clear_unlock(h, REP_DATA);
            is_locked = false;
            goto out;
        }
    }
    if (rc != 0)
        goto out;
    f.copy_to = h->sinks & f.data;
    f.is_diff = VL_CONF(h->xl, struct rep_conf)->heal_algo == REP_HEAL_DIFF;
    size = h->ia[h->src].size;
    /* A file of one block or less has no hole to keep but itself all
     * zeros, which the read finds: no LSEEK. */
    if (size <= REP_HEAL_SEEK_MIN)
        f.has_seek = false;
    if (size <= REP_HEAL_ONE_STEP) {
        /* One step: copied under the whole-file lock already held (a
         * step's own lock would cover the file anyway). */
        rc = rep_heal_copy(h, &f, 0, size, false);
    } else {
        rep_heal_inodeunlk(h, 0, 0);
        is_locked = false;
        h->is_rec_fresh = false; /* writes may change the records now */
        rc = rep_heal_copy(h, &f, 0, size, true);
        if (rc == 0)
            rc = rep_heal_inodelk(h, 0, 0);
        is_locked = rc == 0;
    }
    if (rc != 0)
        goto out;
    rc = rep_heal_data_finish(h, &f, size);
    /* Cleared only after every sink holds the data on disk; the clear
     * carries the unlock. */
    if (rc == 0) {
        rc = rep_heal_records_clear_unlock(h, REP_DATA);
        is_locked = false;
    }
out:
    if (is_locked)
        rep_heal_inodeunlk(h, 0, 0);
    rep_heal_files_close(&f);
    if (rc != 0) {
        vl_log(h->xl, VL_LOG_WARNING, "heal %s: data: %s",
               vl_gfid_to_str(&h->inode->gfid, gs), strerror(-rc));
        return rc == -ENOTCONN ? REP_HR_PENDING : REP_HR_FAILED;
    }
    return res;
}
