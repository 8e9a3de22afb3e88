/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kv-file: crash-safe key=value progress files (see kv-file.h).
 * Threads: pure functions.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kv-file.h"


/* fsync of the directory holding path, so a rename in it survives a
 * crash too. Best effort: some file systems refuse it. */
static void
fsd_kv_sync_dir(const char *path)
{
    char dir[PATH_MAX];
    char *slash;
    int fd;

    snprintf(dir, sizeof(dir), "%s", path);
    slash = strrchr(dir, '/');
    if (slash == dir)
        slash[1] = '\0';
    else if (slash != NULL)
        *slash = '\0';
    else
        snprintf(dir, sizeof(dir), ".");
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}


int
fsd_kv_replace(const char *path, const char *text, size_t len)
{
    char tmp[PATH_MAX];
    size_t done = 0;
    int fd, rc = 0;

    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    while (rc == 0 && done < len) {
        ssize_t n = write(fd, text + done, len - done);

        if (n < 0 && errno != EINTR)
            rc = -errno;
        else if (n > 0)
            done += (size_t)n;
    }
    if (rc == 0 && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc != 0) {
        unlink(tmp);
        return rc;
    }
    fsd_kv_sync_dir(path);
    return 0;
}


int
fsd_kv_text_open(struct fsd_kv_text *t)
{
    t->text = NULL;
    t->len = 0;
    t->out = open_memstream(&t->text, &t->len);
    return t->out == NULL ? -errno : 0;
}


int
fsd_kv_text_commit(struct fsd_kv_text *t, const char *path)
{
    int rc = -ENOMEM;

    if (fclose(t->out) == 0)
        rc = fsd_kv_replace(path, t->text, t->len);
    free(t->text);
    t->out = NULL;
    t->text = NULL;
    return rc;
}


void
fsd_kv_put_escaped(FILE *out, const char *key, const char *value)
{
    fprintf(out, "%s=", key);
    for (const char *p = value; *p != '\0'; p++) {
        if (*p == '%' || *p == '\n' || *p == '\r')
            fprintf(out, "%%%02X", (unsigned)(unsigned char)*p);
        else
            fputc(*p, out);
    }
    fputc('\n', out);
}


int
fsd_kv_get_escaped(const char *src, char *dst, size_t len)
{
    size_t n = 0;

    for (const char *p = src; *p != '\0'; p++) {
        char c = *p;

        if (c == '%') {
            unsigned v;

            if (p[1] == '\0' || p[2] == '\0'
                || sscanf(p + 1, "%2X", &v) != 1)
                return -EINVAL;
            c = (char)v;
            p += 2;
        }
        if (n + 1 >= len)
            return -EINVAL;
        dst[n++] = c;
    }
    dst[n] = '\0';
    return 0;
}


int
fsd_kv_u64(const char *v, uint64_t *out)
{
    char *end = NULL;

    errno = 0;
    *out = strtoull(v, &end, 10);
    return v[0] < '0' || v[0] > '9' || *end != '\0' || errno != 0 ? -EINVAL
                                                                   : 0;
}


int
fsd_kv_i64(const char *v, int64_t *out)
{
    char *end = NULL;

    errno = 0;
    *out = strtoll(v, &end, 10);
    return v[0] == '\0' || *end != '\0' || errno != 0 ? -EINVAL : 0;
}


int
fsd_kv_field_set(const struct fsd_kv_field *fields, size_t n, void *base,
                 const char *key, const char *value)
{
    for (size_t i = 0; i < n; i++) {
        void *at = (char *)base + fields[i].off;

        if (strcmp(key, fields[i].key) != 0)
            continue;
        return fields[i].is_signed ? fsd_kv_i64(value, at)
                                   : fsd_kv_u64(value, at);
    }
    return -ENOENT;
}


int
fsd_kv_read(const char *path,
            int (*line_cb)(void *arg, const char *key, const char *value),
            void *arg)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    FILE *in;
    int rc = 0;

    in = fopen(path, "re");
    if (in == NULL)
        return -errno;
    while (rc == 0 && (len = getline(&line, &cap, in)) >= 0) {
        char *eq;

        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        if (len == 0 || line[0] == '#')
            continue;
        eq = strchr(line, '=');
        if (eq == NULL) {
            rc = -EINVAL;
            break;
        }
        *eq = '\0';
        rc = line_cb(arg, line, eq + 1);
    }
    if (rc == 0 && ferror(in))
        rc = -EIO;
    free(line);
    fclose(in);
    return rc;
}
