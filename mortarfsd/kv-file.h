/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kv-file: the progress files of mortarfsd's worker modes (rebalance,
 * heal), key=value lines that mortard reads for `status` commands.
 *
 * A file is replaced whole, crash-safely: written to FILE.tmp, fsync'ed,
 * renamed over FILE, and the directory fsync'ed, so a reader sees the
 * old or the new contents, never a mix; a torn FILE.tmp left by a crash
 * is overwritten by the next write and never read. Values that may hold
 * any byte (paths, messages) are escaped: '%', CR and LF as %XX.
 * Threads: pure functions; callers serialise writers of one file.
 */
#ifndef FSD_KV_FILE_H
#define FSD_KV_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Replaces path with the len bytes of text. 0 or -errno. */
int fsd_kv_replace(const char *path, const char *text, size_t len);
/* A file's new contents, printed to out (a memory stream) before they
 * replace the file in one fsd_kv_replace. */
struct fsd_kv_text {
    FILE *out;
    char *text;
    size_t len;
};
/* 0 with t->out open, or -errno. */
int fsd_kv_text_open(struct fsd_kv_text *t);
/* Closes t->out and replaces path with what was printed; frees t. 0 or
 * -errno. */
int fsd_kv_text_commit(struct fsd_kv_text *t, const char *path);
/* Writes "key=value\n" with value escaped. */
void fsd_kv_put_escaped(FILE *out, const char *key, const char *value);
/* Undoes the escaping of src into dst (len bytes); -EINVAL if it does
 * not fit or an escape is malformed. */
int fsd_kv_get_escaped(const char *src, char *dst, size_t len);
/* Decimal values; 0 or -EINVAL. */
int fsd_kv_u64(const char *v, uint64_t *out);
int fsd_kv_i64(const char *v, int64_t *out);
/* A numeric key of a state struct: its name and offsetof. */
struct fsd_kv_field {
    const char *key;
    size_t off;
    char is_signed; /* int64_t (else uint64_t) */
};
/* Parses value into base's field named key: 0, -EINVAL (bad value), or
 * -ENOENT (key not in fields). */
int fsd_kv_field_set(const struct fsd_kv_field *fields, size_t n,
                     void *base, const char *key, const char *value);
/* Calls line(arg, key, value) for each key=value line of path (empty
 * lines and '#' comments skipped) until it returns nonzero. 0, the
 * callback's value, -EINVAL (a line without '='), or -errno. */
int fsd_kv_read(const char *path,
                int (*line)(void *arg, const char *key, const char *value),
                void *arg);

#endif /* FSD_KV_FILE_H */
