/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix-xattrop: the XATTROP fop, atomic arithmetic on an object's
 * replication counters (trusted.mortar.rep.*; doc/replicate.md,
 * "On-disk records").
 *
 * Intercepts: xattrop (by fd or by loc.inode).
 * For each key, under the object's stripe lock (a mutex of a table in
 * posix_priv keyed by GFID: two xattrops on one object never interleave,
 * two on different objects rarely wait): read the value (missing =
 * zeros), add the argument element-wise as big-endian int32 (wrapping),
 * write it back, or remove the xattr when the sum is all zeros, so a
 * clean object carries none. The reply holds the new values.
 *
 * The index (posix-index.c) follows in the same call: its entry for the
 * object is made BEFORE a write that can leave a counter
 * nonzero (or made again if lost, whenever a key of the call is nonzero,
 * even when adding zeros), and removed AFTER the writes when no
 * trusted.mortar.rep.* xattr is left on the object (an xattrop whose keys
 * all end at zero, even one of n = 0, drops a stale entry). Adding zeros
 * writes nothing: it is how callers read all counters in one call.
 *
 * Granular entry records: with VL_XATTROP_F_ENTRY_MARK, loc.name (with
 * loc.parent the directory itself, which is also the object) is recorded
 * in entry-changes/<dir-gfid>/ before the counters change; with
 * VL_XATTROP_F_ENTRY_CLEAR it is removed after they changed. A call on a
 * directory that raises a pending key's entry counter without the flag
 * marks its records full first (the names no longer say all that
 * changed); once no pending key of the directory has a nonzero entry
 * counter, its records go (names and mark).
 *
 * Threads: io-threads workers; the stripe locks are the only locks.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "posix.h"

void (*posix_xattrop_test_after_reads)(vl_xlator_t *xl,
                                       const vl_gfid_t *gfid);
void (*posix_xattrop_test_before_writes)(vl_xlator_t *xl,
                                         const vl_gfid_t *gfid);
void (*posix_xattrop_test_after_writes)(vl_xlator_t *xl,
                                        const vl_gfid_t *gfid);

/* Where the keys are read and written: an open fd, else (obj.atfd,
 * obj.rel), else path (the reindex scan's, obj.atfd -1). */
struct posix_xo_target {
    int os_fd;                       /* >= 0: by fd */
    char path[POSIX_PROC_PATH_LEN];  /* /proc/self/fd/atfd/rel, or given */
    struct posix_obj obj;            /* the object, when resolved */
};


static pthread_mutex_t *
posix_xattrop_stripe(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    unsigned h = 0;

    for (int i = 0; i < 16; i++)
        h = h * 31 + gfid->bytes[i];
    return &posix_priv(xl)->xattrop_locks[h % POSIX_XATTROP_STRIPES];
}


/* Value of name into buf (size bytes); bytes read or -errno. */
static ssize_t
posix_xo_get(struct posix_xo_target *t, const char *name, void *buf,
             size_t size)
{
    ssize_t n;

    if (t->os_fd >= 0)
        n = fgetxattr(t->os_fd, name, buf, size);
    else if (t->obj.atfd >= 0)
        return posix_xattr_get_at(t->obj.atfd, t->obj.rel, name, buf, size);
    else
        n = lgetxattr(t->path, name, buf, size);
    return n < 0 ? -errno : n;
}


static int
posix_xo_set(struct posix_xo_target *t, const char *name, const void *val,
             size_t size)
{
    int rc;

    if (t->os_fd >= 0)
        rc = fsetxattr(t->os_fd, name, val, size, 0);
    else if (t->obj.atfd >= 0)
        return posix_xattr_set_at(t->obj.atfd, t->obj.rel, name, val, size,
                                  0);
    else
        rc = lsetxattr(t->path, name, val, size, 0);
    return rc < 0 ? -errno : 0;
}


static int
posix_xo_remove(struct posix_xo_target *t, const char *name)
{
    int rc;

    if (t->os_fd >= 0) {
        rc = fremovexattr(t->os_fd, name) < 0 ? -errno : 0;
    } else if (t->obj.atfd >= 0) {
        rc = posix_xattr_remove_at(t->obj.atfd, t->obj.rel, name);
    } else {
        rc = lremovexattr(t->path, name) < 0 ? -errno : 0;
    }
    return rc == -ENODATA ? 0 : rc;
}


/* The counter of entry changes in a trusted.mortar.rep.* value: the
 * third big-endian int32 of replicate's records (doc/replicate.md). */
#define POSIX_XO_ENTRY_AT 8
#define POSIX_XO_DIRTY VL_XATTROP_PREFIX "dirty"

/* Is name a pending key (trusted.mortar.rep.<slot>, not dirty)? */
static bool
posix_xo_is_pending_key(const char *name)
{
    return strncmp(name, VL_XATTROP_PREFIX, strlen(VL_XATTROP_PREFIX)) == 0
           && strcmp(name, POSIX_XO_DIRTY) != 0;
}


/* Does the object still carry a trusted.mortar.rep.* xattr with a
 * nonzero byte (is_entry: a pending key whose entry counter is not
 * zero)? 1, 0 or -errno. Zero values are removed by xattrop, so
 * normally presence alone answers; the value is read anyway, in case one
 * was left at zero by hand. */
static int
posix_xo_scan(struct posix_xo_target *t, bool is_entry)
{
    const size_t plen = strlen(VL_XATTROP_PREFIX);
    char list[4096];
    ssize_t n;

    if (t->os_fd >= 0) {
        n = flistxattr(t->os_fd, list, sizeof(list));
        n = n < 0 ? -errno : n;
    } else if (t->obj.atfd >= 0) {
        n = posix_xattr_list_at(t->obj.atfd, t->obj.rel, list, sizeof(list));
    } else {
        n = llistxattr(t->path, list, sizeof(list));
        n = n < 0 ? -errno : n;
    }
    if (n < 0)
        return n == -ERANGE ? 1 : (int)n; /* huge list: keep the entry */
    for (ssize_t i = 0; i < n;) {
        const char *name = list + i;
        size_t l = strnlen(name, (size_t)(n - i));
        unsigned char v[VL_XATTROP_VALUE_MAX];
        ssize_t got;

        i += (ssize_t)l + 1;
        if (strncmp(name, VL_XATTROP_PREFIX, plen) != 0
            || (is_entry && !posix_xo_is_pending_key(name)))
            continue;
        got = posix_xo_get(t, name, v, sizeof(v));
        if (got == -ENODATA)
            continue;
        if (got < 0)
            return got == -ERANGE ? 1 : (int)got;
        for (ssize_t k = is_entry ? POSIX_XO_ENTRY_AT : 0;
             k < (is_entry ? POSIX_XO_ENTRY_AT + 4 : got) && k < got; k++)
            if (v[k] != 0)
                return 1;
    }
    return 0;
}


/* Does the call add to a pending key's entry counter? */
static bool
posix_xo_adds_entry(const struct vl_xattrop_args *a)
{
    for (uint32_t i = 0; i < a->n; i++) {
        uint32_t d;

        if (a->sizes[i] < POSIX_XO_ENTRY_AT + 4
            || !posix_xo_is_pending_key(a->names[i]))
            continue;
        memcpy(&d, a->values[i] + POSIX_XO_ENTRY_AT, 4);
        if ((int32_t)ntohl(d) > 0)
            return true;
    }
    return false;
}


/* Checks the arguments; 0, -EINVAL or -EPERM. */
static int
posix_xattrop_check(const struct vl_xattrop_args *a)
{
    const size_t plen = strlen(VL_XATTROP_PREFIX);
    uint32_t flags = a->op & ~VL_XATTROP_OP_MASK;

    if ((a->op & VL_XATTROP_OP_MASK) != VL_XATTROP_ADD32
        || (flags & ~(VL_XATTROP_F_ENTRY_MARK | VL_XATTROP_F_ENTRY_CLEAR))
               != 0
        || flags == (VL_XATTROP_F_ENTRY_MARK | VL_XATTROP_F_ENTRY_CLEAR))
        return -EINVAL;
    if (flags != 0 && (a->fd != NULL || a->loc.name == NULL))
        return -EINVAL;
    if (a->n > VL_XATTROP_MAX
        || (a->n > 0
            && (a->names == NULL || a->values == NULL || a->sizes == NULL)))
        return -EINVAL;
    for (uint32_t i = 0; i < a->n; i++) {
        if (a->names[i] == NULL || a->sizes[i] % 4 != 0
            || a->sizes[i] > VL_XATTROP_VALUE_MAX
            || (a->sizes[i] > 0 && a->values[i] == NULL)
            || strlen(a->names[i]) > VL_XATTROP_NAME_MAX)
            return -EINVAL;
        if (strncmp(a->names[i], VL_XATTROP_PREFIX, plen) != 0
            || a->names[i][plen] == '\0')
            return -EPERM;
    }
    return 0;
}


/* Resolves the object: fd wins, else loc.inode (never by name: loc.name
 * is only the entry record's name, used with the entry flags). */
static int
posix_xo_target_get(vl_xlator_t *xl, const struct vl_xattrop_args *a,
                    struct posix_xo_target *t, vl_gfid_t *gfid /* OUT */)
{
    bool is_entry = (a->op & ~VL_XATTROP_OP_MASK) != 0;
    int rc;

    t->os_fd = -1;
    memset(&t->obj, 0, sizeof(t->obj));
    t->obj.atfd = -1;
    if (a->fd != NULL) {
        rc = posix_fd_os(xl, a->fd, &t->os_fd);
        if (rc == 0)
            *gfid = a->fd->inode->gfid;
        return rc;
    }
    if (a->loc.inode == NULL || vl_gfid_is_null(&a->loc.inode->gfid))
        return -EINVAL;
    /* Entry records: the name is in the object itself, a directory. */
    if (is_entry
        && (a->loc.parent == NULL
            || !vl_gfid_equal(&a->loc.parent->gfid, &a->loc.inode->gfid)))
        return -EINVAL;
    rc = posix_obj_from_inode(xl, a->loc.inode, &t->obj);
    if (rc != 0)
        return rc;
    if (is_entry && !S_ISDIR(t->obj.st.st_mode))
        return -ENOTDIR;
    posix_proc_path(t->obj.atfd, t->obj.rel, t->path);
    *gfid = a->loc.inode->gfid;
    return 0;
}


/* Adds a to the object under its stripe lock; out gets the new values.
 * With is_by_name (a lookup's read through the name it resolved), the
 * object must still carry gfid once the values are read: a name
 * replaced meanwhile would give another object's records, and the index
 * work below would then act on gfid's entries from them (-ESTALE, and
 * nothing done). */
static int
posix_xattrop_locked(vl_xlator_t *xl, const struct vl_xattrop_args *a,
                     struct posix_xo_target *t, const vl_gfid_t *gfid,
                     unsigned char *out, bool is_by_name)
{
    uint32_t flags = a->op & ~VL_XATTROP_OP_MASK;
    bool is_dir = t->os_fd < 0 && S_ISDIR(t->obj.st.st_mode);
    bool any_nonzero = false;
    size_t at = 0;
    int rc;

    /* The new values first, from the current ones (missing = zeros). */
    for (uint32_t i = 0; i < a->n; i++) {
        unsigned char cur[VL_XATTROP_VALUE_MAX];
        const unsigned char *add = a->values[i];
        ssize_t n = a->sizes[i] > 0
                        ? posix_xo_get(t, a->names[i], cur, sizeof(cur))
                        : -ENODATA;

        /* An earlier key of this call with the same name counts. */
        for (uint32_t j = 0; j < i; j++) {
            if (strcmp(a->names[j], a->names[i]) == 0) {
                size_t off = 0;

                for (uint32_t k = 0; k < j; k++)
                    off += a->sizes[k];
                memcpy(cur, out + off, a->sizes[j]);
                n = a->sizes[j];
            }
        }
        if (n == -ENODATA || n == 0) {
            memset(cur, 0, sizeof(cur));
        } else if (n < 0) {
            return n == -ERANGE ? -EINVAL : (int)n; /* over 64 bytes */
        } else if ((size_t)n != a->sizes[i]) {
            return -EINVAL; /* a key keeps its size once set */
        }
        for (uint32_t k = 0; k < a->sizes[i]; k += 4) {
            uint32_t c, d;

            memcpy(&c, cur + k, 4);
            memcpy(&d, add + k, 4);
            c = htonl(ntohl(c) + ntohl(d));
            memcpy(out + at + k, &c, 4);
            if (c != 0)
                any_nonzero = true;
        }
        at += a->sizes[i];
    }
    if (is_by_name) {
        vl_gfid_t now;

        if (posix_xattrop_test_after_reads != NULL)
            posix_xattrop_test_after_reads(xl, gfid);
        if (posix_xo_get(t, POSIX_GFID_XATTR, now.bytes, sizeof(now.bytes))
                != (ssize_t)sizeof(now.bytes)
            || !vl_gfid_equal(&now, gfid))
            return -ESTALE;
    }
    /* Records first: the index entry before any counter can be nonzero,
     * the name before the entry counter that points to it; an entry
     * counter raised without a name marks the directory's names as not
     * all (heal then lists the whole directory). */
    if (flags & VL_XATTROP_F_ENTRY_MARK) {
        rc = posix_index_entry_add(xl, gfid, a->loc.name);
        if (rc != 0)
            return rc;
    } else if (is_dir && posix_xo_adds_entry(a)) {
        rc = posix_index_entry_full(xl, gfid);
        if (rc != 0)
            return rc;
    }
    if (any_nonzero) {
        rc = posix_index_add(xl, gfid);
        if (rc != 0)
            return rc;
    }
    if (posix_xattrop_test_before_writes != NULL)
        posix_xattrop_test_before_writes(xl, gfid);
    at = 0;
    for (uint32_t i = 0; i < a->n; i++) {
        const unsigned char *add = a->values[i];
        bool is_zero = true, is_unchanged = true;

        for (uint32_t k = 0; k < a->sizes[i]; k++) {
            if (out[at + k] != 0)
                is_zero = false;
            if (add[k] != 0)
                is_unchanged = false;
        }
        /* Adding zeros reads (replicate's lookup asks every key so):
         * no write at all. */
        if (a->sizes[i] == 0 || is_unchanged)
            rc = 0;
        else if (is_zero)
            rc = posix_xo_remove(t, a->names[i]);
        else
            rc = posix_xo_set(t, a->names[i], out + at, a->sizes[i]);
        if (rc != 0)
            return rc; /* the index entry stays: it may be needed now */
        at += a->sizes[i];
    }
    if (posix_xattrop_test_after_writes != NULL)
        posix_xattrop_test_after_writes(xl, gfid);
    if (flags & VL_XATTROP_F_ENTRY_CLEAR) {
        rc = posix_index_entry_del(xl, gfid, a->loc.name);
        if (rc != 0)
            return rc;
    }
    /* No copy blamed for entries any more (a heal cleared it, or a
     * pre-op was undone): the directory's names are not needed. */
    if (is_dir && posix_index_entry_has(xl, gfid)) {
        rc = posix_xo_scan(t, true);
        if (rc == 0)
            rc = posix_index_entry_drop(xl, gfid);
        if (rc < 0)
            return rc;
    }
    /* All keys of the call at zero: if the object has an entry, it goes
     * unless another rep key is still nonzero. (Without an entry there
     * is nothing to do: one fstatat on the read path.) */
    if (!any_nonzero && posix_index_has(xl, gfid)) {
        rc = posix_xo_scan(t, false);
        if (rc == 0)
            rc = posix_index_del(xl, gfid);
        if (rc < 0)
            return rc;
    }
    return 0;
}


int
posix_xattrop_reindex(vl_xlator_t *xl, const vl_gfid_t *gfid,
                      const char *path, bool is_dir)
{
    pthread_mutex_t *lock = posix_xattrop_stripe(xl, gfid);
    struct posix_xo_target t;
    int rc, made = 0;

    t.os_fd = -1;
    memset(&t.obj, 0, sizeof(t.obj));
    t.obj.atfd = -1;
    if (snprintf(t.path, sizeof(t.path), "%s", path) >= (int)sizeof(t.path))
        return -ENAMETOOLONG;
    pthread_mutex_lock(lock);
    rc = posix_xo_scan(&t, false);
    if (rc == 1 && !posix_index_has(xl, gfid)) {
        rc = posix_index_add(xl, gfid);
        made += rc == 0;
    }
    /* The names a crash may have lost: heal lists the whole directory. */
    if (rc >= 0 && is_dir && posix_xo_scan(&t, true) == 1) {
        rc = posix_index_entry_full(xl, gfid);
        made += rc == 0;
    }
    pthread_mutex_unlock(lock);
    return rc < 0 ? rc : made;
}


void
posix_fop_xattrop(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_xattrop_args *a = VL_ARGS(req, xattrop);
    struct posix_xo_target t;
    unsigned char *out = NULL;
    pthread_mutex_t *lock;
    vl_gfid_t gfid;
    size_t total = 0;
    int rc;

    t.os_fd = -1;
    memset(&t.obj, 0, sizeof(t.obj));
    t.obj.atfd = -1;
    rc = posix_xattrop_check(a);
    if (rc == 0)
        rc = posix_xo_target_get(xl, a, &t, &gfid);
    if (rc != 0)
        goto out;
    for (uint32_t i = 0; i < a->n; i++)
        total += a->sizes[i];
    out = vl_calloc(xl, 1, total + 1, POSIX_MT_XATTR);
    if (out == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    lock = posix_xattrop_stripe(xl, &gfid);
    pthread_mutex_lock(lock);
    rc = posix_xattrop_locked(xl, a, &t, &gfid, out, false);
    pthread_mutex_unlock(lock);
    if (rc == 0 && total > 0) {
        req->reply.xattr = (char *)out;
        req->reply.xattr_len = (uint32_t)total;
        out = NULL;
    }
out:
    vl_free(out);
    posix_obj_put(&t.obj);
    vl_unwind(req, rc);
}


void
posix_xattrop_lookup_read(vl_xlator_t *xl, const struct vl_xattrop_args *a,
                          const struct posix_obj *obj, struct vl_reply *reply)
{
    struct posix_xo_target t;
    unsigned char *out = NULL;
    pthread_mutex_t *lock;
    size_t total = 0;
    int rc;

    rc = posix_xattrop_check(a);
    /* Only a read: what a lookup carries never writes a counter. */
    if (rc == 0 && (a->op != VL_XATTROP_ADD32 || a->fd != NULL))
        rc = -EINVAL;
    for (uint32_t i = 0; rc == 0 && i < a->n; i++) {
        const unsigned char *v = a->values[i];

        for (uint32_t k = 0; k < a->sizes[i]; k++)
            if (v[k] != 0)
                rc = -EINVAL;
        total += a->sizes[i];
    }
    if (rc == 0) {
        out = vl_calloc(xl, 1, total + 1, POSIX_MT_XATTR);
        if (out == NULL)
            rc = -ENOMEM;
    }
    if (rc == 0) {
        t.os_fd = -1;
        t.obj = *obj; /* borrowed: never put through t */
        posix_proc_path(obj->atfd, obj->rel, t.path);
        lock = posix_xattrop_stripe(xl, &obj->gfid);
        pthread_mutex_lock(lock);
        rc = posix_xattrop_locked(xl, a, &t, &obj->gfid, out, true);
        pthread_mutex_unlock(lock);
    }
    if (rc == 0 && total > 0) {
        reply->xop_values = (char *)out;
        reply->xop_values_len = (uint32_t)total;
        out = NULL;
    }
    vl_free(out);
    reply->has_xop = true;
    reply->xop_status = rc;
}
