/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rebalance-migrate.h: private to the migration of one name
 * (rebalance-migrate.c, rebalance-fops.c, rebalance-special.c,
 * rebalance-resume.c; doc/rebalance.md), the listing of a directory
 * (rebalance-list.c) and the move of hard-linked inodes
 * (rebalance-hlgroup.c, rebalance-hardlink.c). The xattr names of the
 * distribute contract, and the helpers the four files share: synchronous
 * fops on one subvolume (vl_sync_call with this process's caller), the
 * data and attribute copies, the test fault points, the commit stamp and
 * the handling of special files and stale sources.
 * Threads: rebalance workers; nothing shared but the graph and the
 * freeze owner counter (atomic).
 */
#ifndef MORTARFSD_REBALANCE_MIGRATE_H
#define MORTARFSD_REBALANCE_MIGRATE_H

#include <pthread.h>

#include "mortarfsd/fsd.h"

#define RB_CHUNK (1 * VL_MiB)
#define RB_LINKTO "trusted.mortar.dht.linkto"
#define RB_PATHINFO "mortar.dht.pathinfo"
#define RB_MIGRATED "mortar.dht.migrated"
#define RB_FREEZE_DOMAIN "mortar.dht.migrate"
/* The volume's migration lock: one rebalance or remove-brick migration
 * per volume at a time, whichever node runs it. */
#define RB_VOLUME_DOMAIN "mortar.dht.rebalance"
#define RB_MARKER_MODE (S_ISVTX | S_ISGID)
#define RB_XATTR_LIST_MAX (64 * 1024)
#define RB_STAMP "trusted.mortar.dht.rebal-src"
#define RB_FAULT_EXIT 70 /* _exit status at a fault point */
/* On the committed copy of a hard-linked inode: the subvolume it was
 * moved from (tells the committed copy from the stale one after a
 * crash; a plain file uses the commit stamp with its own name). */
#define RB_HLSRC "trusted.mortar.dht.rebal-hlsrc"
#define RB_HL_BUCKETS 1024

/* Which xattrs fsd_rb_copy_xattrs copies. ACLs are apart because setting
 * system.posix_acl_access also sets the group bits of the mode, which
 * would turn a marker (mode exactly S_ISVTX|S_ISGID) into what looks like
 * a data file before the commit. */
enum rb_xattr_set {
    RB_XA_PLAIN, /* everything a client may set, but the ACLs */
    RB_XA_ACL,   /* system.posix_acl_* only */
};


/* ---- rebalance-fops.c ---- */

/* A new inodelk owner for one freeze (distinct per process and call). */
uint64_t fsd_rb_owner(void);
/* One fop on xl, synchronously, as this process with lock owner owner;
 * the reply into reply (NULL: dropped). */
int fsd_rb_call(vl_xlator_t *xl, vl_fop_t op, const union vl_fop_args *args,
                uint64_t owner, struct vl_reply *reply);
/* Looks name up on xl with a fresh inode (so a different GFID there is
 * reported, not refused). */
int fsd_rb_lookup(vl_xlator_t *xl, vl_inode_t *dir, const char *name,
                  struct vl_iatt *out);
int fsd_rb_open(vl_xlator_t *xl, vl_inode_t *inode, int flags,
                vl_fd_t **out);
int fsd_rb_setattr(vl_xlator_t *xl, vl_inode_t *inode, vl_fd_t *fd,
                   const struct vl_iatt *attr, uint32_t valid);
int fsd_rb_truncate(vl_xlator_t *xl, vl_fd_t *fd, uint64_t size);
int fsd_rb_chmod(vl_xlator_t *xl, vl_inode_t *inode, uint32_t mode);
int fsd_rb_setxattr(vl_xlator_t *xl, vl_inode_t *inode, const char *name,
                    const void *value, size_t size);
/* Value of xattr name (NULL lists names) into reply r. */
int fsd_rb_getxattr(vl_xlator_t *xl, vl_inode_t *inode, const char *name,
                    struct vl_reply *r);
int fsd_rb_unlink(vl_xlator_t *xl, vl_inode_t *dir, const char *name,
                  vl_inode_t *inode);
/* The migration freeze (inodelk in RB_FREEZE_DOMAIN, whole file). */
int fsd_rb_freeze(vl_xlator_t *xl, vl_inode_t *inode, enum vl_lock_cmd cmd,
                  uint64_t owner);
/* Takes the volume's migration lock: an inodelk (RB_VOLUME_DOMAIN, tried,
 * not waited for) on the root of every subvolume in index order, owned
 * by owner; held[i] says where it was taken (a subvolume down, or
 * without features/locks, is skipped). -EAGAIN when another process
 * holds it (nothing is held then; *busy is that subvolume's index). The
 * bricks drop it when this process's connections end, so a migration
 * that died frees it. */
int fsd_rb_volume_lock(const struct fsd_rebal_io *io, vl_inode_t *root,
                       uint64_t owner, bool *held, size_t *busy);
void fsd_rb_volume_unlock(const struct fsd_rebal_io *io, vl_inode_t *root,
                          uint64_t owner, bool *held);
/* Is the entry on xl really one of distribute's (it has a linkto)? */
bool fsd_rb_is_dht_file(vl_xlator_t *xl, vl_inode_t *dir, const char *name,
                        const vl_gfid_t *gfid);
/* Removes a leftover link file or marker of name on xl. */
void fsd_rb_remove_special(vl_xlator_t *xl, vl_inode_t *dir,
                           const char *name,
                           const struct fsd_rebal_ent *ent);
/* The data regions of the first size bytes, then D's size; -EINTR
 * between regions once *stop is set (stop may be NULL). */
int fsd_rb_copy_data(vl_xlator_t *xs, vl_fd_t *fd_s, vl_xlator_t *xd,
                     vl_fd_t *fd_d, uint64_t size, const atomic_bool *stop);
/* The xattrs of set from xs to xd (the same GFID on both). */
int fsd_rb_copy_xattrs(vl_xlator_t *xs, vl_xlator_t *xd, vl_inode_t *inode,
                       enum rb_xattr_set set);
/* Owner, mode, xattrs (ACLs included) and times of st onto xd. */
int fsd_rb_copy_attrs(vl_xlator_t *xs, vl_xlator_t *xd, vl_inode_t *inode,
                      const struct vl_iatt *st);
/* _exit(RB_FAULT_EXIT) if MORTAR_REBAL_FAULT names point. */
void fsd_rb_fault(const char *point, const char *name, const vl_xlator_t *xs,
                  const vl_xlator_t *xd);
/* Tests only: MORTAR_REBAL_FREEZE_PAUSE=NAME[@copy]:MS[,...] makes the
 * migration of the name NAME wait MS ms (1-60000) under the freeze,
 * after its look at the name under it and before the commit (point
 * NULL), or with "@copy" (point "copy") after the copy and before it
 * takes the freeze, so a test can act on the file then. */
void fsd_rb_test_pause(const char *name, const char *point);

/* ---- rebalance-hardlink.c ---- */

/* Where name hashes in dir by the directory's layout (distribute's
 * layout xattr), whatever any inode's ctx says: 0 with *out, or -errno. */
int fsd_rb_name_hashed(const struct fsd_rebal_io *io, vl_inode_t *dir,
                       const char *name, int *out);

/* ---- rebalance-migrate.c ---- */

/* Step 2 of a migration: the marker of name on xd (a link file or marker
 * of the same GFID there is reused: *is_reused, when not NULL), open for
 * writing in *fd_d. Another file of that name there is -EEXIST; a link
 * file or marker of another GFID is removed first, unless is_strict
 * (then -EEXIST too: the caller asks distribute whose name it is). */
int fsd_rb_dest_prepare(vl_xlator_t *xd, vl_inode_t *dir, const char *name,
                        vl_inode_t *inode, const char *src_name,
                        bool is_strict, vl_fd_t **fd_d, bool *is_reused,
                        char *why, size_t why_len);
/* Size, mtime or ctime differ? */
bool fsd_rb_changed(const struct vl_iatt *a, const struct vl_iatt *b);
/* The last steps of a copy under the freeze, shared by the one-name and
 * the hard-link moves: copies again what changed since st1 (st2 is the
 * source under the freeze), fsyncs the destination, then gives the
 * destination inode st2's owner and times, the plain xattrs and the
 * commit stamp. *step names the step that failed. 0 or -errno. */
int fsd_rb_finish_copy(vl_xlator_t *xs, vl_fd_t *fd_s, vl_xlator_t *xd,
                       vl_fd_t *fd_d, vl_inode_t *inode,
                       const struct vl_iatt *st1, const struct vl_iatt *st2,
                       const char **step);
/* Room for size more bytes on xd (and distribute's min-free-disk)?
 * -ENOSPC with why set. */
int fsd_rb_space_check(const struct fsd_rebal_io *io, vl_xlator_t *xd,
                       vl_inode_t *dir, uint64_t size, char *why,
                       size_t why_len);
/* A link file of name on xh pointing to src_name (made, linked to another
 * name's link file of the same GFID there, or re-pointed). */
int fsd_rb_ensure_linkfile(vl_xlator_t *xh, vl_inode_t *dir,
                           const char *name, vl_inode_t *inode,
                           const char *src_name);
/* Where name hashes (index into io->subs), and its inode (a reference)
 * as distribute looks it up. */
int fsd_rb_hashed(const struct fsd_rebal_io *io, vl_inode_t *dir,
                  const char *name, vl_inode_t **inode, int *hashed);

/* ---- rebalance-list.c ---- */

/* One name of the directory being worked on. */
struct fsd_rb_job {
    char *name;                 /* owned */
    struct fsd_rebal_ent *ents; /* owned; one per subvolume */
};
/* Lists dir on every subvolume and groups by name: files go to *jobs,
 * names that are a directory on some subvolume to *subdirs (sorted,
 * NULL-terminated). -errno with why set (a directory removed meanwhile
 * lists empty). *n_left counts the entries that could not be examined
 * (no attributes and a lookup that kept failing; for want of a GFID
 * only with io->is_strict): they stay where they are, and left_why names
 * the last one. */
int fsd_rb_list(const struct fsd_rebal_io *io, vl_inode_t *dir,
                struct fsd_rb_job **jobs, size_t *n_jobs, char ***subdirs,
                size_t *n_subdirs, size_t *n_left, char *left_why,
                size_t left_why_len, char *why, size_t why_len);
void fsd_rb_jobs_free(struct fsd_rb_job *jobs, size_t n);

/* ---- rebalance-special.c ---- */

/* Moves a symlink, device, fifo or socket from xs to xd. */
enum fsd_rebal_outcome fsd_rb_migrate_special(vl_inode_t *dir,
                                              const char *name,
                                              vl_inode_t *inode,
                                              vl_xlator_t *xs,
                                              vl_xlator_t *xd, char *why,
                                              size_t why_len);
/* A stale special file on xs beside its copy on hashed xh: attributes
 * again, then unlink. 0 or -errno (why set). */
int fsd_rb_stale_special(vl_inode_t *dir, const char *name,
                         vl_inode_t *inode, vl_xlator_t *xs,
                         vl_xlator_t *xh, char *why, size_t why_len);

/* ---- rebalance-resume.c ---- */

/* The commit stamp (RB_STAMP) of st, the source under the freeze, on
 * xd's copy. */
int fsd_rb_stamp_set(vl_xlator_t *xd, vl_inode_t *inode,
                     const struct vl_iatt *st);
/* A stale source of name on xs beside the committed copy on hashed xh:
 * 0 removed (or gone), 1 copied over xh again, -errno (why set). */
int fsd_rb_stale_source(const struct fsd_rebal_io *io, vl_inode_t *dir,
                        const char *name, vl_inode_t *inode,
                        vl_xlator_t *xs, vl_xlator_t *xh, char *why,
                        size_t why_len);

/* 1 when the commit stamp on xd's copy matches st (size and mtime only
 * when !with_ctime), 0 when not, -ENODATA without a stamp, -errno. */
int fsd_rb_stamp_matches(vl_xlator_t *xd, vl_inode_t *inode,
                         const struct vl_iatt *st, bool with_ctime);

/* ---- rebalance-hlgroup.c: hard-linked inodes by GFID ---- */

/* One name of a hard-linked inode, as the listing found it. */
struct fsd_rb_hl_name {
    vl_inode_t *dir;             /* a reference; the directory */
    char *name;                  /* owned; the entry name */
    char *path;                  /* owned; the directory's path (logs) */
    struct fsd_rebal_ent *ents;  /* owned; per subvolume, this GFID only */
};
/* All names of one GFID found by the listing. */
struct fsd_rb_hl_group {
    vl_gfid_t gfid;                 /* the inode */
    struct fsd_rb_hl_name *names;   /* owned */
    size_t n_names;
    size_t cap;
    bool has_links;                 /* some subvolume has nlink > 1 data */
    bool needs_rescan;              /* the source has names not listed */
    struct fsd_rb_hl_group *next;   /* hash chain */
};
/* GFID -> group. lock guards buckets and n_groups while listings add. */
struct fsd_rb_hl_table {
    pthread_mutex_t lock;
    struct fsd_rb_hl_group *buckets[RB_HL_BUCKETS]; /* owned chains */
    size_t n_groups;
    size_t n_subs;                  /* entries per name */
};

struct fsd_rb_hl_table *fsd_rb_hl_new(size_t n_subs);
void fsd_rb_hl_free(struct fsd_rb_hl_table *t);
/* Is gfid a group of t (the per-name pass leaves it to the group pass)? */
bool fsd_rb_hl_has(struct fsd_rb_hl_table *t, const vl_gfid_t *gfid);
/* Is gfid a group of want that needs its names found again? */
bool fsd_rb_hl_wants(struct fsd_rb_hl_table *want, const vl_gfid_t *gfid);
/* Records name (ents: one per subvolume) in t when it belongs to a
 * hard-linked inode (or to a group of want needing a rescan). */
int fsd_rb_hl_collect(struct fsd_rb_hl_table *t, struct fsd_rb_hl_table *want,
                      vl_inode_t *dir, const char *path, const char *name,
                      const struct fsd_rebal_ent *ents);
/* Drops groups that hold no hard-linked data after all. */
void fsd_rb_hl_finish_collect(struct fsd_rb_hl_table *t,
                              struct fsd_rb_hl_table *want);
/* fn on every group until it returns non-zero (returned). */
int fsd_rb_hl_each(struct fsd_rb_hl_table *t,
                   int (*fn)(struct fsd_rb_hl_group *g, void *arg),
                   void *arg);
/* The same from up to n_threads threads at once (the caller's is one),
 * each group once; fn's result is ignored. Returns the threads used. */
unsigned fsd_rb_hl_each_par(struct fsd_rb_hl_table *t, unsigned n_threads,
                            int (*fn)(struct fsd_rb_hl_group *g, void *arg),
                            void *arg);

/* Where a hard-linked inode with data on src belongs, given each name's
 * hashed subvolume (-1: not a name of it any more): src when a name
 * hashes there, else the subvolume most names hash to (the lowest index
 * on a tie); -1 when no name is left. At most FSD_RB_HL_MAX_SUBS
 * subvolumes: distribute's own limit (DIST_MAX_SUBVOLS). */
#define FSD_RB_HL_MAX_SUBS 256
int fsd_rb_hl_target(const int *hashed, size_t n_names, size_t n_subs,
                     int src);

/* The subvolume (index into names) whose range in the text of
 * distribute's mortar.dht.layout virtual xattr (one line per subvolume:
 * name, start and stop in hex, generation, flags) holds hash; -1 when
 * none does. */
#define RB_LAYOUT_HAS_RANGE 1u /* flag bit 0 (doc/distribute.md) */
int fsd_rb_layout_find(const char *text, size_t len, uint32_t hash,
                       const char *const *names, size_t n_names);
/* The ranges of that text, one "name start stop has-range" line per
 * subvolume (generations and other flags left out), into out (always
 * terminated when out_len > 0); returns the length it needs, as
 * snprintf. Two layouts place every name alike when these are equal. */
size_t fsd_rb_layout_ranges(const char *text, size_t len, char *out,
                            size_t out_len);

/* ---- rebalance-hardlink.c: moving a group ---- */

/* The per-name pass on a name of a group (or of a hard-linked special
 * file): only makes sure the name's hashed subvolume leads to the data
 * (a link file when it has nothing), so the directory's layout can be
 * committed. True unless the data is on the name's hashed subvolume. */
bool fsd_rb_hl_reach(const struct fsd_rebal_io *io, vl_inode_t *dir,
                     const char *name, const struct fsd_rebal_ent *ents);
/* Puts the inode of g on one subvolume with every name (a hard link
 * there), link files on the names' other hashed subvolumes, nothing left
 * on the source. FSD_RO_IN_PLACE also when g->needs_rescan was set (names
 * on the source the listing did not see). */
enum fsd_rebal_outcome fsd_rb_hl_group(const struct fsd_rebal_io *io,
                                       struct fsd_rb_hl_group *g,
                                       uint64_t *bytes, char *why,
                                       size_t why_len);

#endif /* MORTARFSD_REBALANCE_MIGRATE_H */
