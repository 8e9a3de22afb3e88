/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * volfile: parser and writer for the GlusterFS volfile syntax.
 *
 * The parser works line by line; every error names the source and line.
 * It checks syntax and names only (duplicate volumes, unknown subvolumes,
 * missing type); types and options are checked by the graph builder.
 *
 * Input may be hostile (a volfile fetched from a server, a file a user
 * names): the VL_VOLFILE_MAX_* caps of volfile.h refuse absurd sizes
 * before they cost memory or time, and the work is linear in the input.
 * Volume names are found through a hash index (vf_index), not by scanning
 * the volumes defined so far, which made a 100,000-volume chain cost
 * seconds of CPU per thousand volumes (issue 23).
 *
 * Threads: pure functions on caller-owned data.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* A limit as a string literal, for messages that name it. */
#define VF_STR_(x) #x
#define VF_STR(x) VF_STR_(x)

/* Volume names to their index in vf->vols: open addressing, linear
 * probing, sized for at least twice the volumes it will hold. */
struct vf_index {
    uint32_t *slots;  /* owned; volume index + 1, 0 for an empty slot */
    size_t mask;      /* number of slots - 1 (a power of two) */
};

/* Parser state. */
struct vf_parse {
    vl_volfile_t *vf;              /* being built; owned until returned */
    struct vl_volfile_vol *cur;    /* open volume (last of vf->vols) */
    const char *source;            /* borrowed; for messages */
    int line;                      /* current line number, 1-based */
    vl_err_t *err;                 /* where errors go */
    struct vf_index index;         /* owned; names of vf->vols */
    uint16_t *depth;               /* owned; per volume: volumes on the
                                      longest subvolume chain from it
                                      down, itself included */
    uint32_t *named_by;            /* owned; per volume: 1 + index of the
                                      last volume naming it a subvolume,
                                      so "named twice" costs O(1) */
};


/* Makes room for element n of an array holding n. Capacities are powers
 * of two (the array is reallocated when n is one), so appending n
 * elements copies O(n) bytes in all. */
static int
vf_grow(void **array, size_t n, size_t elem)
{
    void *p;

    if (*array == NULL)
        p = vl_calloc(NULL, 1, elem, VL_MT_VOLFILE);
    else if ((n & (n - 1)) == 0)
        p = vl_realloc(*array, 2 * n * elem);
    else
        p = *array;
    if (p == NULL)
        return -ENOMEM;
    memset((char *)p + n * elem, 0, elem);
    *array = p;
    return 0;
}


static size_t
vf_hash(const char *name, size_t len)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a */

    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)name[i];
        h *= 1099511628211ull;
    }
    return (size_t)h;
}


/* An index able to hold n_max names. */
static int
vf_index_init(struct vf_index *ix, size_t n_max)
{
    size_t n = 16;

    while (n < 2 * n_max)
        n *= 2;
    ix->slots = vl_calloc(NULL, n, sizeof(*ix->slots), VL_MT_VOLFILE);
    if (ix->slots == NULL)
        return -ENOMEM;
    ix->mask = n - 1;
    return 0;
}


/* The slot where name is, or the empty slot where it would go. */
static uint32_t *
vf_index_slot(const struct vf_index *ix, const vl_volfile_t *vf,
              const char *name, size_t len)
{
    size_t i = vf_hash(name, len) & ix->mask;

    for (;; i = (i + 1) & ix->mask) {
        uint32_t *s = &ix->slots[i];
        const char *other;

        if (*s == 0)
            return s;
        other = vf->vols[*s - 1].name;
        if (strncmp(other, name, len) == 0 && other[len] == '\0')
            return s;
    }
}


/* Index of volume name in vf, or -1. */
static long
vf_index_find(const struct vf_index *ix, const vl_volfile_t *vf,
              const char *name, size_t len)
{
    return (long)*vf_index_slot(ix, vf, name, len) - 1;
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


/* By scanning: for vl_volfile_append, which adds a volume or two. */
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
    uint32_t *slot;
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
    if (len > VL_VOLFILE_MAX_NAME)
        return vf_error(p, -EINVAL, "volume name longer than "
                        VF_STR(VL_VOLFILE_MAX_NAME) " bytes", NULL, 0);
    if (p->vf->n_vols == VL_VOLFILE_MAX_VOLS)
        return vf_error(p, -E2BIG, "more than "
                        VF_STR(VL_VOLFILE_MAX_VOLS) " volumes", NULL, 0);
    slot = vf_index_slot(&p->index, p->vf, name, len);
    if (*slot != 0)
        return vf_error(p, -EINVAL, "duplicate volume", name, len);
    rc = vf_grow((void **)&p->vf->vols, p->vf->n_vols, sizeof(*vol));
    if (rc != 0)
        return vf_error(p, rc, NULL, NULL, 0);
    vol = &p->vf->vols[p->vf->n_vols];
    vol->name = vl_strndup(NULL, name, len, VL_MT_VOLFILE);
    if (vol->name == NULL)
        return vf_error(p, -ENOMEM, NULL, NULL, 0);
    vol->line = p->line;
    p->depth[p->vf->n_vols] = 1;
    p->vf->n_vols++;
    *slot = (uint32_t)p->vf->n_vols;
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
    if (len > VL_VOLFILE_MAX_NAME)
        return vf_error(p, -EINVAL, "type longer than "
                        VF_STR(VL_VOLFILE_MAX_NAME) " bytes", NULL, 0);
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
    if (klen > VL_VOLFILE_MAX_NAME)
        return vf_error(p, -EINVAL, "option key longer than "
                        VF_STR(VL_VOLFILE_MAX_NAME) " bytes", NULL, 0);
    /* The cap also bounds the duplicate check below to O(cap) a line. */
    if (p->cur->n_opts == VL_VOLFILE_MAX_OPTS)
        return vf_error(p, -E2BIG, "more than "
                        VF_STR(VL_VOLFILE_MAX_OPTS)
                        " options in volume", p->cur->name,
                        strlen(p->cur->name));
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
    size_t cur = (size_t)(p->cur - p->vf->vols);
    const char *name;
    size_t len = 0;
    long sub;
    int n = 0;
    int rc;

    while ((name = vf_token(&pos, end, &len)) != NULL) {
        sub = vf_index_find(&p->index, p->vf, name, len);
        if (sub == (long)cur)
            return vf_error(p, -EINVAL, "volume names itself as subvolume",
                            name, len);
        if (sub < 0)
            return vf_error(p, -EINVAL, "unknown subvolume", name, len);
        if (p->named_by[sub] == cur + 1)
            return vf_error(p, -EINVAL, "subvolume named twice", name,
                            len);
        /* Subvolumes are defined above, so their depth is final. */
        if (p->depth[sub] + 1 > p->depth[cur]) {
            if (p->depth[sub] + 1 > VL_VOLFILE_MAX_DEPTH)
                return vf_error(p, -E2BIG, "graph deeper than "
                                VF_STR(VL_VOLFILE_MAX_DEPTH)
                                " volumes at", p->cur->name,
                                strlen(p->cur->name));
            p->depth[cur] = (uint16_t)(p->depth[sub] + 1);
        }
        rc = vf_add_subvol(p->cur, name, len);
        if (rc != 0)
            return vf_error(p, rc, NULL, NULL, 0);
        p->named_by[sub] = (uint32_t)cur + 1;
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
    if (len > VL_VOLFILE_MAX_BYTES) {
        vl_err_set(err, "%s: %zu bytes, more than the limit of "
                   VF_STR(VL_VOLFILE_MAX_BYTES) " for a volfile",
                   p.source, len);
        rc = -E2BIG;
        goto out;
    }
    p.depth = vl_calloc(NULL, VL_VOLFILE_MAX_VOLS, sizeof(*p.depth),
                        VL_MT_VOLFILE);
    p.named_by = vl_calloc(NULL, VL_VOLFILE_MAX_VOLS, sizeof(*p.named_by),
                           VL_MT_VOLFILE);
    if (p.depth == NULL || p.named_by == NULL
        || vf_index_init(&p.index, VL_VOLFILE_MAX_VOLS) != 0) {
        vl_err_set(err, "%s: out of memory", p.source);
        rc = -ENOMEM;
        goto out;
    }
    while (pos < end) {
        const char *nl = memchr(pos, '\n', (size_t)(end - pos));
        const char *eol = nl != NULL ? nl : end;

        p.line++;
        if (eol - pos > VL_VOLFILE_MAX_LINE) {
            rc = vf_error(&p, -E2BIG, "line longer than "
                          VF_STR(VL_VOLFILE_MAX_LINE) " bytes", NULL,
                          0);
            goto out;
        }
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
    vl_free(p.index.slots);
    vl_free(p.depth);
    vl_free(p.named_by);
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
        /* Past the cap the parser refuses it: read no more of it. */
        if (n == 0 || len > VL_VOLFILE_MAX_BYTES)
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
    struct vf_index ix = {0};
    bool *is_named = NULL;
    size_t i;
    size_t k;

    /* One pass over the names through an index, not each volume against
     * every subvolume list. */
    is_named = vl_calloc(NULL, vf->n_vols + 1, sizeof(*is_named),
                         VL_MT_VOLFILE);
    if (is_named == NULL || vf_index_init(&ix, vf->n_vols) != 0) {
        vl_err_set(err, "%s: out of memory", vf->source);
        goto out;
    }
    for (i = 0; i < vf->n_vols; i++) {
        const char *name = vf->vols[i].name;
        uint32_t *slot = vf_index_slot(&ix, vf, name, strlen(name));

        if (*slot == 0)
            *slot = (uint32_t)i + 1;
    }
    for (i = 0; i < vf->n_vols; i++)
        for (k = 0; k < vf->vols[i].n_subvols; k++) {
            const char *sub = vf->vols[i].subvols[k];
            long j = vf_index_find(&ix, vf, sub, strlen(sub));

            if (j >= 0)
                is_named[j] = true;
        }
    for (i = 0; i < vf->n_vols; i++) {
        if (is_named[i])
            continue;
        if (top != NULL) {
            vl_err_set(err, "%s: several top volumes: '%s' (line %d) and "
                       "'%s' (line %d)", vf->source, top->name, top->line,
                       vf->vols[i].name, vf->vols[i].line);
            top = NULL;
            goto out;
        }
        top = &vf->vols[i];
    }
    if (top == NULL)
        vl_err_set(err, "%s: no top volume", vf->source);
out:
    vl_free(ix.slots);
    vl_free(is_named);
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
