/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * volfile: parser and writer for the GlusterFS volfile syntax.
 *
 * The parser works line by line; every error names the source and line.
 * It checks syntax and names only (duplicate volumes, unknown subvolumes,
 * missing type); types and options are checked by the graph builder.
 *
 * Threads: pure functions on caller-owned data.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* Parser state. */
struct vf_parse {
    vl_volfile_t *vf;              /* being built; owned until returned */
    struct vl_volfile_vol *cur;    /* open volume (last of vf->vols) */
    const char *source;            /* borrowed; for messages */
    int line;                      /* current line number, 1-based */
    vl_err_t *err;                 /* where errors go */
};


static int
vf_grow(void **array, size_t n, size_t elem)
{
    void *p;

    if (*array == NULL)
        p = vl_calloc(NULL, n + 1, elem, VL_MT_VOLFILE);
    else
        p = vl_realloc(*array, (n + 1) * elem);
    if (p == NULL)
        return -ENOMEM;
    memset((char *)p + n * elem, 0, elem);
    *array = p;
    return 0;
}


static void
vf_vol_clear(struct vl_volfile_vol *vol)
{
    size_t i;

    vl_free(vol->name);
    vl_free(vol->type);
    for (i = 0; i < vol->n_opts; i++) {
        vl_free(vol->opts[i].key);
        vl_free(vol->opts[i].value);
    }
    vl_free(vol->opts);
    for (i = 0; i < vol->n_subvols; i++)
        vl_free(vol->subvols[i]);
    vl_free(vol->subvols);
}


void
vl_volfile_free(vl_volfile_t *vf)
{
    size_t i;

    if (vf == NULL)
        return;
    for (i = 0; i < vf->n_vols; i++)
        vf_vol_clear(&vf->vols[i]);
    vl_free(vf->vols);
    vl_free(vf->source);
    vl_free(vf);
}


static struct vl_volfile_vol *
vf_find(const vl_volfile_t *vf, const char *name, size_t len)
{
    size_t i;

    for (i = 0; i < vf->n_vols; i++)
        if (strlen(vf->vols[i].name) == len
            && strncmp(vf->vols[i].name, name, len) == 0)
            return &vf->vols[i];
    return NULL;
}


static int
vf_error(struct vf_parse *p, int rc, const char *what, const char *arg,
         size_t arg_len)
{
    if (rc == -ENOMEM || what == NULL)
        vl_err_set(p->err, "%s:%d: out of memory", p->source, p->line);
    else if (arg != NULL)
        vl_err_set(p->err, "%s:%d: %s '%.*s'", p->source, p->line, what,
                   (int)arg_len, arg);
    else
        vl_err_set(p->err, "%s:%d: %s", p->source, p->line, what);
    return rc;
}


/* Next whitespace-separated token in [*pos, end); NULL if none. */
static const char *
vf_token(const char **pos, const char *end, size_t *len)
{
    const char *s = *pos;
    const char *t;

    while (s < end && isspace((unsigned char)*s))
        s++;
    if (s == end) {
        *pos = s;
        return NULL;
    }
    t = s;
    while (t < end && !isspace((unsigned char)*t))
        t++;
    *len = (size_t)(t - s);
    *pos = t;
    return s;
}


static bool
vf_kw(const char *tok, size_t len, const char *kw)
{
    return strlen(kw) == len && strncmp(tok, kw, len) == 0;
}


static int
vf_line_volume(struct vf_parse *p, const char *pos, const char *end)
{
    struct vl_volfile_vol *vol;
    const char *name;
    size_t len = 0;
    size_t dummy;
    int rc;

    if (p->cur != NULL)
        return vf_error(p, -EINVAL, "missing end-volume for volume",
                        p->cur->name, strlen(p->cur->name));
    name = vf_token(&pos, end, &len);
    if (name == NULL)
        return vf_error(p, -EINVAL, "'volume' needs a name", NULL, 0);
    if (vf_token(&pos, end, &dummy) != NULL)
        return vf_error(p, -EINVAL, "extra text after volume name", name,
                        len);
    if (vf_find(p->vf, name, len) != NULL)
        return vf_error(p, -EINVAL, "duplicate volume", name, len);
    rc = vf_grow((void **)&p->vf->vols, p->vf->n_vols, sizeof(*vol));
    if (rc != 0)
        return vf_error(p, rc, NULL, NULL, 0);
    vol = &p->vf->vols[p->vf->n_vols];
    vol->name = vl_strndup(NULL, name, len, VL_MT_VOLFILE);
    if (vol->name == NULL)
        return vf_error(p, -ENOMEM, NULL, NULL, 0);
    vol->line = p->line;
    p->vf->n_vols++;
    p->cur = vol;
    return 0;
}


static int
vf_line_type(struct vf_parse *p, const char *pos, const char *end)
{
    const char *type;
    size_t len = 0;
    size_t dummy;

    type = vf_token(&pos, end, &len);
    if (type == NULL)
        return vf_error(p, -EINVAL, "'type' needs a value", NULL, 0);
    if (vf_token(&pos, end, &dummy) != NULL)
        return vf_error(p, -EINVAL, "extra text after type", type, len);
    if (p->cur->type != NULL)
        return vf_error(p, -EINVAL, "second type for volume", p->cur->name,
                        strlen(p->cur->name));
    p->cur->type = vl_strndup(NULL, type, len, VL_MT_VOLFILE);
    if (p->cur->type == NULL)
        return vf_error(p, -ENOMEM, NULL, NULL, 0);
    return 0;
}


static int
vf_add_opt(struct vl_volfile_vol *vol, const char *key, size_t klen,
           const char *value, size_t vlen)
{
    struct vl_kv *kv;
    int rc;

    rc = vf_grow((void **)&vol->opts, vol->n_opts, sizeof(*kv));
    if (rc != 0)
        return rc;
    kv = &vol->opts[vol->n_opts];
    kv->key = vl_strndup(NULL, key, klen, VL_MT_VOLFILE);
    kv->value = vl_strndup(NULL, value, vlen, VL_MT_VOLFILE);
    if (kv->key == NULL || kv->value == NULL) {
        vl_free(kv->key);
        vl_free(kv->value);
        kv->key = kv->value = NULL;
        return -ENOMEM;
    }
    vol->n_opts++;
    return 0;
}


static int
vf_line_option(struct vf_parse *p, const char *pos, const char *end)
{
    const char *key;
    size_t klen = 0;
    size_t i;
    int rc;

    key = vf_token(&pos, end, &klen);
    if (key == NULL)
        return vf_error(p, -EINVAL, "'option' needs a key and a value", NULL,
                        0);
    while (pos < end && isspace((unsigned char)*pos))
        pos++;
    while (end > pos && isspace((unsigned char)end[-1]))
        end--;
    if (pos == end)
        return vf_error(p, -EINVAL, "missing value for option", key, klen);
    for (i = 0; i < p->cur->n_opts; i++)
        if (vf_kw(key, klen, p->cur->opts[i].key))
            return vf_error(p, -EINVAL, "duplicate option", key, klen);
    rc = vf_add_opt(p->cur, key, klen, pos, (size_t)(end - pos));
    if (rc != 0)
        return vf_error(p, rc, NULL, NULL, 0);
    return 0;
}


static int
vf_add_subvol(struct vl_volfile_vol *vol, const char *name, size_t len)
{
    int rc;

    rc = vf_grow((void **)&vol->subvols, vol->n_subvols,
                 sizeof(*vol->subvols));
    if (rc != 0)
        return rc;
    vol->subvols[vol->n_subvols] = vl_strndup(NULL, name, len, VL_MT_VOLFILE);
    if (vol->subvols[vol->n_subvols] == NULL)
        return -ENOMEM;
    vol->n_subvols++;
    return 0;
}


static int
vf_line_subvolumes(struct vf_parse *p, const char *pos, const char *end)
{
    const char *name;
    size_t len = 0;
    size_t i;
    int n = 0;
    int rc;

    while ((name = vf_token(&pos, end, &len)) != NULL) {
        if (vf_find(p->vf, name, len) == p->cur)
            return vf_error(p, -EINVAL, "volume names itself as subvolume",
                            name, len);
        if (vf_find(p->vf, name, len) == NULL)
            return vf_error(p, -EINVAL, "unknown subvolume", name, len);
        for (i = 0; i < p->cur->n_subvols; i++)
            if (vf_kw(name, len, p->cur->subvols[i]))
                return vf_error(p, -EINVAL, "subvolume named twice", name,
                                len);
        rc = vf_add_subvol(p->cur, name, len);
        if (rc != 0)
            return vf_error(p, rc, NULL, NULL, 0);
        n++;
    }
    if (n == 0)
        return vf_error(p, -EINVAL, "'subvolumes' needs at least one name",
                        NULL, 0);
    return 0;
}


static int
vf_line(struct vf_parse *p, const char *pos, const char *end)
{
    const char *kw;
    size_t len = 0;
    size_t dummy;

    kw = vf_token(&pos, end, &len);
    if (kw == NULL || kw[0] == '#')
        return 0;
    if (vf_kw(kw, len, "volume"))
        return vf_line_volume(p, pos, end);
    if (!vf_kw(kw, len, "type") && !vf_kw(kw, len, "option")
        && !vf_kw(kw, len, "subvolumes") && !vf_kw(kw, len, "end-volume"))
        return vf_error(p, -EINVAL, "unknown keyword", kw, len);
    if (p->cur == NULL)
        return vf_error(p, -EINVAL, "outside of a volume:", kw, len);
    if (vf_kw(kw, len, "type"))
        return vf_line_type(p, pos, end);
    if (vf_kw(kw, len, "option"))
        return vf_line_option(p, pos, end);
    if (vf_kw(kw, len, "subvolumes"))
        return vf_line_subvolumes(p, pos, end);
    /* end-volume */
    if (vf_token(&pos, end, &dummy) != NULL)
        return vf_error(p, -EINVAL, "extra text after", kw, len);
    if (p->cur->type == NULL)
        return vf_error(p, -EINVAL, "no type given for volume", p->cur->name,
                        strlen(p->cur->name));
    p->cur = NULL;
    return 0;
}


vl_volfile_t *
vl_volfile_parse(const char *text, size_t len, const char *source,
                 vl_err_t *err)
{
    struct vf_parse p = {.source = source != NULL ? source : "volfile",
                         .err = err};
    const char *pos = text;
    const char *end = text + len;
    int rc = 0;

    p.vf = vl_calloc(NULL, 1, sizeof(*p.vf), VL_MT_VOLFILE);
    if (p.vf == NULL) {
        vl_err_set(err, "%s: out of memory", p.source);
        return NULL;
    }
    p.vf->source = vl_strdup(NULL, p.source, VL_MT_VOLFILE);
    if (p.vf->source == NULL) {
        vl_err_set(err, "%s: out of memory", p.source);
        rc = -ENOMEM;
        goto out;
    }
    while (pos < end) {
        const char *nl = memchr(pos, '\n', (size_t)(end - pos));
        const char *eol = nl != NULL ? nl : end;

        p.line++;
        if (memchr(pos, '\0', (size_t)(eol - pos)) != NULL) {
            rc = vf_error(&p, -EINVAL, "NUL byte in line", NULL, 0);
            goto out;
        }
        rc = vf_line(&p, pos, eol);
        if (rc != 0)
            goto out;
        pos = nl != NULL ? nl + 1 : end;
    }
    if (p.cur != NULL) {
        p.line = p.cur->line;
        rc = vf_error(&p, -EINVAL, "missing end-volume for volume",
                      p.cur->name, strlen(p.cur->name));
        goto out;
    }
    if (p.vf->n_vols == 0) {
        vl_err_set(err, "%s: no volumes defined", p.source);
        rc = -EINVAL;
    }
out:
    if (rc != 0) {
        vl_volfile_free(p.vf);
        return NULL;
    }
    return p.vf;
}


vl_volfile_t *
vl_volfile_load(const char *path, vl_err_t *err)
{
    vl_volfile_t *vf = NULL;
    char *text = NULL;
    size_t len = 0;
    size_t cap = 0;
    FILE *f;

    f = fopen(path, "re");
    if (f == NULL) {
        vl_err_set(err, "%s: %s", path, strerror(errno));
        return NULL;
    }
    for (;;) {
        size_t n;

        if (len == cap) {
            char *t;

            cap = cap == 0 ? 4096 : cap * 2;
            t = text == NULL ? vl_malloc(NULL, cap, VL_MT_VOLFILE)
                             : vl_realloc(text, cap);
            if (t == NULL) {
                vl_err_set(err, "%s: out of memory", path);
                goto out;
            }
            text = t;
        }
        n = fread(text + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    if (ferror(f)) {
        vl_err_set(err, "%s: read error", path);
        goto out;
    }
    vf = vl_volfile_parse(text, len, path, err);
out:
    fclose(f);
    vl_free(text);
    return vf;
}


const struct vl_volfile_vol *
vl_volfile_top(const vl_volfile_t *vf, vl_err_t *err)
{
    const struct vl_volfile_vol *top = NULL;
    size_t i;
    size_t j;
    size_t k;

    for (i = 0; i < vf->n_vols; i++) {
        bool is_named = false;

        for (j = 0; j < vf->n_vols && !is_named; j++)
            for (k = 0; k < vf->vols[j].n_subvols; k++)
                if (strcmp(vf->vols[j].subvols[k], vf->vols[i].name) == 0) {
                    is_named = true;
                    break;
                }
        if (is_named)
            continue;
        if (top != NULL) {
            vl_err_set(err, "%s: several top volumes: '%s' (line %d) and "
                       "'%s' (line %d)", vf->source, top->name, top->line,
                       vf->vols[i].name, vf->vols[i].line);
            return NULL;
        }
        top = &vf->vols[i];
    }
    if (top == NULL)
        vl_err_set(err, "%s: no top volume", vf->source);
    return top;
}


int
vl_volfile_append(vl_volfile_t *vf, const char *name, const char *type,
                  const struct vl_kv *opts, size_t n_opts,
                  const char *const *subvols, size_t n_subvols)
{
    struct vl_volfile_vol vol = {.line = 0};
    size_t i;
    int rc;

    if (vf_find(vf, name, strlen(name)) != NULL)
        return -EEXIST;
    for (i = 0; i < n_subvols; i++)
        if (vf_find(vf, subvols[i], strlen(subvols[i])) == NULL)
            return -ENOENT;
    rc = -ENOMEM;
    vol.name = vl_strdup(NULL, name, VL_MT_VOLFILE);
    vol.type = vl_strdup(NULL, type, VL_MT_VOLFILE);
    if (vol.name == NULL || vol.type == NULL)
        goto fail;
    for (i = 0; i < n_opts; i++)
        if (vf_add_opt(&vol, opts[i].key, strlen(opts[i].key),
                       opts[i].value, strlen(opts[i].value)) != 0)
            goto fail;
    for (i = 0; i < n_subvols; i++)
        if (vf_add_subvol(&vol, subvols[i], strlen(subvols[i])) != 0)
            goto fail;
    if (vf_grow((void **)&vf->vols, vf->n_vols, sizeof(vol)) != 0)
        goto fail;
    vf->vols[vf->n_vols++] = vol;
    return 0;
fail:
    vf_vol_clear(&vol);
    return rc;
}


int
vl_volfile_write(const vl_volfile_t *vf, FILE *out)
{
    size_t i;
    size_t j;

    for (i = 0; i < vf->n_vols; i++) {
        const struct vl_volfile_vol *vol = &vf->vols[i];

        fprintf(out, "volume %s\n    type %s\n", vol->name, vol->type);
        for (j = 0; j < vol->n_opts; j++)
            fprintf(out, "    option %s %s\n", vol->opts[j].key,
                    vol->opts[j].value);
        if (vol->n_subvols > 0) {
            fprintf(out, "    subvolumes");
            for (j = 0; j < vol->n_subvols; j++)
                fprintf(out, " %s", vol->subvols[j]);
            fprintf(out, "\n");
        }
        fprintf(out, "end-volume\n");
        if (i + 1 < vf->n_vols)
            fprintf(out, "\n");
    }
    if (fflush(out) != 0 || ferror(out))
        return -EIO;
    return 0;
}
