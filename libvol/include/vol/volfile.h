/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * volfile: the GlusterFS volfile syntax.
 *
 *   # comment
 *   volume NAME
 *       type CATEGORY/NAME
 *       option KEY VALUE...      (value is the rest of the line, trimmed)
 *       subvolumes NAME [NAME...]
 *   end-volume
 *
 * A volume may only name subvolumes defined above it. Errors carry the
 * source name and line: "client.vol:12: unknown keyword 'optoin'".
 *
 * Limits (issue 23: a volfile may come from the network or a user, and a
 * 100,000-volume chain must be refused at once, not parsed for a minute):
 * over any of them the parse fails with a message naming the limit and
 * the line. Generated volfiles stay far below them.
 */
#ifndef VOL_VOLFILE_H
#define VOL_VOLFILE_H

#include <stddef.h>
#include <stdio.h>

#include "vol/common.h"

/* Decimal literals: messages print them as written. */
#define VL_VOLFILE_MAX_BYTES 16777216 /* the whole file */
#define VL_VOLFILE_MAX_LINE 1048576   /* one line: every name of a wide
                                         subvolumes line fits */
#define VL_VOLFILE_MAX_NAME 255       /* a volume name, type or option key */
#define VL_VOLFILE_MAX_VOLS 4096      /* volumes in a file */
#define VL_VOLFILE_MAX_OPTS 1024      /* options of one volume */
#define VL_VOLFILE_MAX_DEPTH 64       /* volumes on a chain of subvolumes
                                         from the top down to a leaf */

struct vl_volfile_vol {
    char *name;         /* owned */
    char *type;         /* owned */
    struct vl_kv *opts; /* owned array, in file order */
    size_t n_opts;
    char **subvols;     /* owned array of owned names */
    size_t n_subvols;
    int line;           /* line of "volume NAME" */
};

typedef struct vl_volfile {
    struct vl_volfile_vol *vols; /* owned, in file order */
    size_t n_vols;
    char *source;                /* owned; name used in messages */
} vl_volfile_t;

/* Parses text (len bytes, need not be NUL-terminated), in time linear in
 * len. NULL with err set on any syntax error, duplicate volume name,
 * unknown subvolume, empty file, a limit above exceeded, or ENOMEM. */
vl_volfile_t *vl_volfile_parse(const char *text, size_t len,
                               const char *source, vl_err_t *err);
/* Reads and parses a file; NULL with err set ("PATH: No such file..."). */
vl_volfile_t *vl_volfile_load(const char *path, vl_err_t *err);
void vl_volfile_free(vl_volfile_t *vf);
/* The one volume no other volume names as a subvolume; NULL with err set
 * if there are none or several. */
const struct vl_volfile_vol *vl_volfile_top(const vl_volfile_t *vf,
                                            vl_err_t *err);
/* Appends a volume (copies everything); 0 or -ENOMEM/-EEXIST. Used by
 * mortarfsd to put mount/fuse on top of a client graph. */
int vl_volfile_append(vl_volfile_t *vf, const char *name, const char *type,
                      const struct vl_kv *opts, size_t n_opts,
                      const char *const *subvols, size_t n_subvols);
/* Writes the volfile back in canonical form; 0 or -errno. */
int vl_volfile_write(const vl_volfile_t *vf, FILE *out);

#endif /* VOL_VOLFILE_H */
