/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix-content: the whole content of a small regular file for a LOOKUP
 * that asks for it (args.content_max, quick-read on the client), and of
 * each small file a READDIRPLUS lists when it asks for it.
 */
#ifndef POSIX_CONTENT_H
#define POSIX_CONTENT_H

#include "posix.h"

/* If obj is a regular file of at most max bytes, reads it through one
 * open fd and answers the content in reply->buf/data/count with the
 * attributes of that fd in reply->iatt (so both agree). Anything that
 * goes wrong (open, read, a concurrent change) leaves reply->buf NULL:
 * the content is optional, the lookup still succeeds. */
void posix_content_read(vl_xlator_t *xl, const struct posix_obj *obj,
                        uint32_t max, struct vl_reply *reply);
/* Reads the whole content of rel under atfd, which st (an lstat taken
 * before) says is a regular file, into out (room for st_size + 1
 * bytes), and in *got the fstat of the open file after the read.
 * Returns the size read, -ESTALE if the file changed or is not the one
 * st describes, or -errno (open, read). */
int posix_content_read_at(int atfd, const char *rel, const struct stat *st,
                          char *out, struct stat *got /* OUT */);

#endif /* POSIX_CONTENT_H */
