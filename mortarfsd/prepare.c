/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prepare: turns the command line's volfile into the one to run.
 *
 * --xlator-option NAME.KEY=VALUE overrides are applied by writing the
 * volfile again as text with the new values and parsing that: the parsed
 * volfile's arrays belong to libvol's allocator, so they are not edited in
 * place. With a mount point, a mount/fuse volume is appended on top with
 * vl_volfile_append. With --rebalance, client-side performance/ volumes
 * above distribute are dropped. Threads: runs in main before any thread
 * exists.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsd.h"

/* An override matched against the volfile. */
struct fsd_match {
    const struct vl_volfile_vol *vol; /* borrowed from the volfile */
    const char *key;                  /* borrowed from the xopt's arg */
    const char *value;                /* borrowed from the xopt */
    bool is_used;                     /* the volume had the key already */
};


/* The volume whose name followed by '.' is the longest prefix of arg. */
static const struct vl_volfile_vol *
fsd_match_volume(const vl_volfile_t *vf, const char *arg)
{
    const struct vl_volfile_vol *best = NULL;
    size_t best_len = 0;

    for (size_t i = 0; i < vf->n_vols; i++) {
        const char *name = vf->vols[i].name;
        size_t len = strlen(name);

        if (len > best_len && strncmp(arg, name, len) == 0 &&
            arg[len] == '.' && arg[len + 1] != '\0') {
            best = &vf->vols[i];
            best_len = len;
        }
    }
    return best;
}


static void
fsd_write_vol(FILE *out, const struct vl_volfile_vol *vol,
              struct fsd_match *m, size_t n_m)
{
    fprintf(out, "volume %s\n    type %s\n", vol->name, vol->type);
    for (size_t i = 0; i < vol->n_opts; i++) {
        const char *value = vol->opts[i].value;

        for (size_t j = 0; j < n_m; j++) {
            if (m[j].vol == vol && strcmp(m[j].key, vol->opts[i].key) == 0) {
                value = m[j].value;
                m[j].is_used = true;
            }
        }
        fprintf(out, "    option %s %s\n", vol->opts[i].key, value);
    }
    for (size_t j = 0; j < n_m; j++) {
        if (m[j].vol != vol || m[j].is_used)
            continue;
        /* The same key twice on the command line: the last one wins. */
        bool is_later = false;

        for (size_t k = j + 1; k < n_m; k++)
            if (m[k].vol == vol && strcmp(m[k].key, m[j].key) == 0)
                is_later = true;
        if (!is_later)
            fprintf(out, "    option %s %s\n", m[j].key, m[j].value);
    }
    if (vol->n_subvols > 0) {
        fprintf(out, "    subvolumes");
        for (size_t i = 0; i < vol->n_subvols; i++)
            fprintf(out, " %s", vol->subvols[i]);
        fprintf(out, "\n");
    }
    fprintf(out, "end-volume\n\n");
}


vl_volfile_t *
fsd_volfile_override(vl_volfile_t *vf, const struct fsd_xopt *xopts,
                     size_t n_xopts, vl_err_t *err)
{
    struct fsd_match *m = NULL;
    vl_volfile_t *nvf = NULL;
    char *text = NULL;
    char *source = NULL;
    size_t text_len = 0;
    FILE *out = NULL;

    if (n_xopts == 0)
        return vf;
    m = calloc(n_xopts, sizeof(*m));
    if (m == NULL) {
        vl_err_set(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n_xopts; i++) {
        m[i].vol = fsd_match_volume(vf, xopts[i].arg);
        if (m[i].vol == NULL) {
            vl_err_set(err, "--xlator-option %s: no translator of that "
                       "name in %s", xopts[i].arg, vf->source);
            goto out;
        }
        m[i].key = xopts[i].arg + strlen(m[i].vol->name) + 1;
        m[i].value = xopts[i].value;
    }
    out = open_memstream(&text, &text_len);
    if (out == NULL) {
        vl_err_set(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < vf->n_vols; i++)
        fsd_write_vol(out, &vf->vols[i], m, n_xopts);
    if (fclose(out) != 0) {
        out = NULL;
        vl_err_set(err, "out of memory");
        goto out;
    }
    out = NULL;
    if (asprintf(&source, "%s (with --xlator-option)", vf->source) < 0) {
        source = NULL;
        vl_err_set(err, "out of memory");
        goto out;
    }
    nvf = vl_volfile_parse(text, text_len, source, err);
out:
    if (out != NULL)
        fclose(out);
    free(text);
    free(source);
    free(m);
    vl_volfile_free(vf);
    return nvf;
}


int
fsd_volfile_add_fuse(vl_volfile_t *vf, const char *mountpoint,
                     const struct vl_kv *fuse_opts, size_t n_fuse_opts,
                     vl_err_t *err)
{
    const struct vl_volfile_vol *top;
    struct vl_kv *kvs = NULL;
    const char *subvols[1];
    char *top_name = NULL;
    char *alt_name = NULL;
    int rc = -ENOMEM;

    top = vl_volfile_top(vf, err);
    if (top == NULL)
        return -EINVAL;
    /* vl_volfile_append may move the array top points into. */
    top_name = strdup(top->name);
    kvs = calloc(n_fuse_opts + 1, sizeof(*kvs));
    if (top_name == NULL || kvs == NULL ||
        asprintf(&alt_name, "%s-fuse", top_name) < 0) {
        alt_name = NULL;
        vl_err_set(err, "out of memory");
        goto out;
    }
    kvs[0].key = (char *)"mountpoint";
    kvs[0].value = (char *)mountpoint;
    for (size_t i = 0; i < n_fuse_opts; i++)
        kvs[i + 1] = fuse_opts[i];
    subvols[0] = top_name;
    rc = vl_volfile_append(vf, "fuse", "mount/fuse", kvs, n_fuse_opts + 1,
                           subvols, 1);
    if (rc == -EEXIST)
        rc = vl_volfile_append(vf, alt_name, "mount/fuse", kvs,
                               n_fuse_opts + 1, subvols, 1);
    if (rc == -EEXIST)
        vl_err_set(err, "%s: volumes 'fuse' and '%s' both exist; cannot put "
                   "mount/fuse on top", vf->source, alt_name);
    else if (rc != 0)
        vl_err_set(err, "adding mount/fuse: %s", strerror(-rc));
out:
    free(kvs);
    free(top_name);
    free(alt_name);
    return rc;
}


/* The rebalance process fetches the client volfile, whose client-side
 * performance translators (write-behind...) sit above distribute: it
 * wants distribute on top (distribute then waits for every subvolume and
 * says when the graph is ready). Drops each performance/ volume at the
 * top that has one subvolume, by writing the volfile again without its
 * block and parsing that; takes vf (freed on failure). */
static vl_volfile_t *
fsd_volfile_strip_perf(vl_volfile_t *vf, vl_err_t *err)
{
    const struct vl_volfile_vol *top;
    char *text = NULL, *start, *end, head[300];
    size_t len = 0;
    vl_volfile_t *nvf;
    FILE *mem;

    while ((top = vl_volfile_top(vf, err)) != NULL
           && strncmp(top->type, "performance/", 12) == 0
           && top->n_subvols == 1) {
        mem = open_memstream(&text, &len);
        if (mem == NULL || vl_volfile_write(vf, mem) != 0) {
            if (mem != NULL)
                fclose(mem);
            free(text);
            vl_err_set(err, "%s: cannot rewrite the volfile", vf->source);
            vl_volfile_free(vf);
            return NULL;
        }
        fclose(mem);
        /* A block starts a line: "\nvolume NAME\n" (or the text). */
        snprintf(head, sizeof(head), "\nvolume %s\n", top->name);
        start = strncmp(text, head + 1, strlen(head + 1)) == 0
                    ? text
                    : strstr(text, head);
        if (start != NULL && start != text)
            start++;
        end = start != NULL ? strstr(start, "end-volume\n") : NULL;
        if (end == NULL) {
            free(text);
            vl_err_set(err, "%s: cannot drop volume '%s'", vf->source,
                       top->name);
            vl_volfile_free(vf);
            return NULL;
        }
        end += strlen("end-volume\n");
        memmove(start, end, strlen(end) + 1);
        nvf = vl_volfile_parse(text, strlen(text), vf->source, err);
        free(text);
        text = NULL;
        vl_volfile_free(vf);
        if (nvf == NULL)
            return NULL;
        vf = nvf;
    }
    return vf;
}


/* Checks the mount point (not on a reload: stat of our own mount would
 * go through the graph), applies the overrides and appends mount/fuse;
 * takes vf (freed on failure). */
static vl_volfile_t *
fsd_volfile_finish(const struct fsd_opts *opts, vl_volfile_t *vf,
                   bool is_reload, vl_err_t *err)
{
    struct stat st;

    if (opts->mountpoint != NULL && !is_reload) {
        if (stat(opts->mountpoint, &st) != 0) {
            vl_err_set(err, "mount point %s: %s", opts->mountpoint,
                       strerror(errno));
            vl_volfile_free(vf);
            return NULL;
        }
        if (!S_ISDIR(st.st_mode)) {
            vl_err_set(err, "mount point %s: Not a directory",
                       opts->mountpoint);
            vl_volfile_free(vf);
            return NULL;
        }
    }
    vf = fsd_volfile_override(vf, opts->xopts, opts->n_xopts, err);
    if (vf == NULL)
        return NULL;
    /* The worker modes read through distribute itself, no caches. */
    if (opts->is_rebalance || opts->has_heal_resolve) {
        vf = fsd_volfile_strip_perf(vf, err);
        if (vf == NULL)
            return NULL;
    }
    if (opts->mountpoint != NULL &&
        fsd_volfile_add_fuse(vf, opts->mountpoint, opts->fuse_opts,
                             opts->n_fuse_opts, err) != 0) {
        vl_volfile_free(vf);
        return NULL;
    }
    return vf;
}


vl_volfile_t *
fsd_volfile_prepare(const struct fsd_opts *opts, bool is_reload,
                    vl_err_t *err)
{
    vl_volfile_t *vf;

    vf = vl_volfile_load(opts->volfile, err);
    if (vf == NULL)
        return NULL;
    return fsd_volfile_finish(opts, vf, is_reload, err);
}


vl_volfile_t *
fsd_volfile_prepare_text(const struct fsd_opts *opts, const char *text,
                         size_t len, const char *source, bool is_reload,
                         vl_err_t *err)
{
    vl_volfile_t *vf;

    vf = vl_volfile_parse(text, len, source, err);
    if (vf == NULL)
        return NULL;
    return fsd_volfile_finish(opts, vf, is_reload, err);
}


char *
fsd_log_default_path(const struct fsd_opts *opts)
{
    const char *src = opts->mountpoint;
    char *name = NULL;
    char *path = NULL;
    size_t len;

    if (src != NULL) {
        while (*src == '/')
            src++;
        name = strdup(*src == '\0' ? "root" : src);
    } else if (opts->volfile == NULL) {
        name = strdup(opts->vf_id != NULL ? opts->vf_id : "mortarfsd");
    } else {
        src = strrchr(opts->volfile, '/');
        name = strdup(src != NULL ? src + 1 : opts->volfile);
        if (name != NULL) {
            len = strlen(name);
            if (len > 4 && strcmp(name + len - 4, ".vol") == 0)
                name[len - 4] = '\0';
        }
    }
    if (name == NULL)
        return NULL;
    for (char *p = name; *p != '\0'; p++)
        if (*p == '/')
            *p = '-';
    if (asprintf(&path, "%s/%s.log", FSD_DEFAULT_LOG_DIR, name) < 0)
        path = NULL;
    free(name);
    return path;
}
