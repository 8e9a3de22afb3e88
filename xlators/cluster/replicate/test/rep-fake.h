/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-fake: an in-memory brick ("test/rep-fake") for replicate's unit
 * tests. It answers inline: lookup, stat, create, mkdir, mknod, symlink,
 * readlink, unlink, rmdir, rename, open, opendir, read, write, setattr
 * (mode, owner, mtime, size), setxattr, getxattr (a name or the list),
 * removexattr, readdir, flush, fsync, fallocate (punch only), statfs,
 * inodelk, entrylk, xattrop (ADD32 as storage/posix: missing = zeros,
 * all-zero results removed, new values answered; the pre-op a granted
 * inodelk/entrylk carries and the unlock an xattrop carries are done and
 * counted as those fops, features/locks's compounds) and rchecksum (the
 * attributes and a record per block: ZERO, or an FNV-1a digest where
 * the brick's is SHA-256). A test can make one fop, or the entrylks of
 * one name, fail with an errno,
 * take the brick "down" (every fop ENOTCONN), plant objects, attributes
 * and xattrs and read what landed.
 */
#ifndef MORTAR_REP_FAKE_H
#define MORTAR_REP_FAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vol/vol.h"

extern const vl_xlator_class_t rep_fake_class;

/* Every fop op answers err (0: normal again). */
void fake_fail(vl_xlator_t *fake, vl_fop_t op, int err);
/* While busy, inodelk and entrylk with VL_LOCK_TRY answer -EAGAIN (as
 * if another client held the lock); waiting ones are granted. */
void fake_set_lock_busy(vl_xlator_t *fake, bool is_busy);
/* Entrylks (not unlocks) of name answer err; -EAGAIN (contention) only
 * to the TRY ones, waiting ones are granted. NULL name: none again. */
void fake_fail_entrylk(vl_xlator_t *fake, const char *name, int err);
/* While plain, the brick knows no compound: a lock's carried pre-op and
 * an xattrop's carried unlock are ignored (an older brick). */
void fake_set_plain(vl_xlator_t *fake, bool is_plain);
/* Every fop answers -ENOTCONN while down. */
void fake_set_down(vl_xlator_t *fake, bool is_down);
/* Requests of fop op received (including failed ones). */
size_t fake_received(vl_xlator_t *fake, vl_fop_t op);
/* Requests received in all. */
size_t fake_received_all(vl_xlator_t *fake);
/* The fop of the last request received (the order of a phase's). */
vl_fop_t fake_last_op(vl_xlator_t *fake);
/* The object named name in the directory dir (gfid), its data copied to
 * buf (up to len - 1 bytes, NUL-terminated); -ENOENT if none. */
int fake_data(vl_xlator_t *fake, const vl_gfid_t *dir, const char *name,
              char *buf, size_t len);
/* gfid of name in dir; -ENOENT if none. */
int fake_gfid(vl_xlator_t *fake, const vl_gfid_t *dir, const char *name,
              vl_gfid_t *out);
/* Value of xattr key of object gfid: bytes copied (at most len) or
 * -ENODATA / -ENOENT. */
int fake_xattr(vl_xlator_t *fake, const vl_gfid_t *gfid, const char *key,
               void *buf, size_t len);
/* Sets xattr key of object gfid (plants records). */
int fake_set_xattr(vl_xlator_t *fake, const vl_gfid_t *gfid, const char *key,
                   const void *val, size_t len);
/* Creates a file directly on this brick (as if made while others were
 * down). */
int fake_mkfile(vl_xlator_t *fake, const vl_gfid_t *dir, const char *name,
                const vl_gfid_t *gfid, const char *data);

/* Creates an object of mode directly on this brick: a directory, a
 * symlink whose target is data, a file holding data (NULL: empty). */
int fake_mkobj(vl_xlator_t *fake, const vl_gfid_t *dir, const char *name,
               const vl_gfid_t *gfid, uint32_t mode, const char *data);
/* Attributes of object gfid (mode, uid, gid, mtime, size); -ENOENT. */
int fake_stat(vl_xlator_t *fake, const vl_gfid_t *gfid, struct vl_iatt *out);
/* Sets the permission bits, owner and mtime of object gfid. */
int fake_set_attr(vl_xlator_t *fake, const vl_gfid_t *gfid, uint32_t perm,
                  uint32_t uid, int64_t mtime);

#endif /* MORTAR_REP_FAKE_H */
