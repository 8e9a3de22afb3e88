/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rebalance-hlgroup: the table of hard-linked inodes the rebalance moves
 * after its crawl (doc/rebalance.md, "Hard links"). The names of one GFID
 * can be in different directories, so they are collected while the
 * fix-layout pass lists every directory on every subvolume: a name goes
 * into the group of a GFID when some subvolume holds it as data with
 * nlink > 1, as a migration marker, or when the GFID is wanted (a group
 * whose names were not all found the last time: its names with one link
 * left count too). Groups that turn out to hold no hard-linked data are
 * dropped at the end of the listing (fsd_rb_hl_finish_collect). Also
 * the two pure decisions of the group pass: the target subvolume
 * (fsd_rb_hl_target) and a name's range in a layout text
 * (fsd_rb_layout_find).
 * Intercepts nothing. The table keeps a reference on each name's
 * directory inode.
 * Threads: the crawler adds (under the table's lock, as the workers may
 * ask fsd_rb_hl_has at the same time in later passes); the group pass
 * reads it (no writer then), from --throttle threads of its own
 * (fsd_rb_hl_each_par).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rebalance-migrate.h"


static size_t
rb_hl_bucket(const vl_gfid_t *gfid)
{
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < sizeof(gfid->bytes); i++)
        h = (h ^ gfid->bytes[i]) * 16777619u;
    return h % RB_HL_BUCKETS;
}


struct fsd_rb_hl_table *
fsd_rb_hl_new(size_t n_subs)
{
    struct fsd_rb_hl_table *t = calloc(1, sizeof(*t));

    if (t == NULL)
        return NULL;
    pthread_mutex_init(&t->lock, NULL);
    t->n_subs = n_subs;
    return t;
}


static void
rb_hl_group_free(struct fsd_rb_hl_group *g)
{
    for (size_t i = 0; i < g->n_names; i++) {
        vl_inode_unref(g->names[i].dir);
        free(g->names[i].name);
        free(g->names[i].path);
        free(g->names[i].ents);
    }
    free(g->names);
    free(g);
}


void
fsd_rb_hl_free(struct fsd_rb_hl_table *t)
{
    if (t == NULL)
        return;
    for (size_t b = 0; b < RB_HL_BUCKETS; b++) {
        while (t->buckets[b] != NULL) {
            struct fsd_rb_hl_group *g = t->buckets[b];

            t->buckets[b] = g->next;
            rb_hl_group_free(g);
        }
    }
    pthread_mutex_destroy(&t->lock);
    free(t);
}


/* The group of gfid; NULL when absent. Caller holds t->lock. */
static struct fsd_rb_hl_group *
rb_hl_find(const struct fsd_rb_hl_table *t, const vl_gfid_t *gfid)
{
    struct fsd_rb_hl_group *g = t->buckets[rb_hl_bucket(gfid)];

    while (g != NULL && !vl_gfid_equal(&g->gfid, gfid))
        g = g->next;
    return g;
}


bool
fsd_rb_hl_has(struct fsd_rb_hl_table *t, const vl_gfid_t *gfid)
{
    bool is_in;

    if (t == NULL)
        return false;
    pthread_mutex_lock(&t->lock);
    is_in = rb_hl_find(t, gfid) != NULL;
    pthread_mutex_unlock(&t->lock);
    return is_in;
}


bool
fsd_rb_hl_wants(struct fsd_rb_hl_table *want, const vl_gfid_t *gfid)
{
    bool is_wanted;

    if (want == NULL)
        return false;
    pthread_mutex_lock(&want->lock);
    {
        struct fsd_rb_hl_group *g = rb_hl_find(want, gfid);

        is_wanted = g != NULL && g->needs_rescan;
    }
    pthread_mutex_unlock(&want->lock);
    return is_wanted;
}


/* Adds name (in dir, path for logs) to the group of gfid, with the
 * entries of that GFID only. Caller holds t->lock. */
static int
rb_hl_add(struct fsd_rb_hl_table *t, const vl_gfid_t *gfid, vl_inode_t *dir,
          const char *path, const char *name,
          const struct fsd_rebal_ent *ents)
{
    struct fsd_rb_hl_group *g = rb_hl_find(t, gfid);
    struct fsd_rb_hl_name *n;

    if (g == NULL) {
        size_t b = rb_hl_bucket(gfid);

        g = calloc(1, sizeof(*g));
        if (g == NULL)
            return -ENOMEM;
        g->gfid = *gfid;
        g->next = t->buckets[b];
        t->buckets[b] = g;
        t->n_groups++;
    }
    if (g->n_names == g->cap) {
        size_t ncap = g->cap != 0 ? g->cap * 2 : 4;
        struct fsd_rb_hl_name *nn = realloc(g->names, ncap * sizeof(*nn));

        if (nn == NULL)
            return -ENOMEM;
        g->names = nn;
        g->cap = ncap;
    }
    n = &g->names[g->n_names];
    memset(n, 0, sizeof(*n));
    n->name = strdup(name);
    n->path = strdup(path);
    n->ents = calloc(t->n_subs, sizeof(*n->ents));
    if (n->name == NULL || n->path == NULL || n->ents == NULL) {
        free(n->name);
        free(n->path);
        free(n->ents);
        return -ENOMEM;
    }
    for (size_t i = 0; i < t->n_subs; i++) {
        if (ents[i].kind != FSD_RK_NONE
            && vl_gfid_equal(&ents[i].iatt.gfid, gfid)) {
            n->ents[i] = ents[i];
            if (ents[i].kind == FSD_RK_DATA && ents[i].iatt.nlink > 1)
                g->has_links = true;
        }
    }
    n->dir = vl_inode_ref(dir);
    g->n_names++;
    return 0;
}


/* Does entry e make its name one of a group? */
static bool
rb_hl_qualifies(const struct fsd_rebal_ent *e, struct fsd_rb_hl_table *want)
{
    return (e->kind == FSD_RK_DATA && e->iatt.nlink > 1)
           || e->kind == FSD_RK_MARKER
           || (e->kind == FSD_RK_DATA && fsd_rb_hl_wants(want, &e->iatt.gfid));
}


int
fsd_rb_hl_collect(struct fsd_rb_hl_table *t, struct fsd_rb_hl_table *want,
                  vl_inode_t *dir, const char *path, const char *name,
                  const struct fsd_rebal_ent *ents)
{
    int rc = 0;

    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; rc == 0 && i < t->n_subs; i++) {
        const vl_gfid_t *gfid = &ents[i].iatt.gfid;
        bool is_dup = false;

        if (!rb_hl_qualifies(&ents[i], want))
            continue;
        /* One name per GFID, even when several subvolumes hold it. */
        for (size_t j = 0; j < i; j++)
            is_dup |= vl_gfid_equal(&ents[j].iatt.gfid, gfid)
                      && rb_hl_qualifies(&ents[j], want);
        if (!is_dup)
            rc = rb_hl_add(t, gfid, dir, path, name, ents);
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}


void
fsd_rb_hl_finish_collect(struct fsd_rb_hl_table *t,
                         struct fsd_rb_hl_table *want)
{
    pthread_mutex_lock(&t->lock);
    for (size_t b = 0; b < RB_HL_BUCKETS; b++) {
        struct fsd_rb_hl_group **pp = &t->buckets[b];

        while (*pp != NULL) {
            struct fsd_rb_hl_group *g = *pp;

            if (g->has_links || fsd_rb_hl_wants(want, &g->gfid)) {
                pp = &g->next;
                continue;
            }
            /* Markers of a one-name file: the per-name pass owns it. */
            *pp = g->next;
            t->n_groups--;
            rb_hl_group_free(g);
        }
    }
    pthread_mutex_unlock(&t->lock);
}


int
fsd_rb_hl_each(struct fsd_rb_hl_table *t,
               int (*fn)(struct fsd_rb_hl_group *g, void *arg), void *arg)
{
    for (size_t b = 0; b < RB_HL_BUCKETS; b++)
        for (struct fsd_rb_hl_group *g = t->buckets[b]; g != NULL;
             g = g->next) {
            int rc = fn(g, arg);

            if (rc != 0)
                return rc;
        }
    return 0;
}


/* One call of fsd_rb_hl_each_par. */
struct rb_hl_par {
    struct fsd_rb_hl_group **groups; /* owned array, borrowed groups */
    size_t n;                        /* entries of groups */
    atomic_size_t next;              /* next group to take */
    int (*fn)(struct fsd_rb_hl_group *g, void *arg); /* per group */
    void *arg;                       /* fn's */
};


static void *
rb_hl_par_main(void *arg)
{
    struct rb_hl_par *p = arg;
    size_t i;

    while ((i = atomic_fetch_add(&p->next, 1)) < p->n)
        (void)p->fn(p->groups[i], p->arg);
    return NULL;
}


unsigned
fsd_rb_hl_each_par(struct fsd_rb_hl_table *t, unsigned n_threads,
                   int (*fn)(struct fsd_rb_hl_group *g, void *arg),
                   void *arg)
{
    struct rb_hl_par p = {.fn = fn, .arg = arg};
    pthread_t threads[FSD_REBAL_THROTTLE_MAX];
    unsigned n = 0;

    p.groups = calloc(t->n_groups + 1, sizeof(*p.groups));
    if (p.groups == NULL || n_threads <= 1) {
        free(p.groups);
        (void)fsd_rb_hl_each(t, fn, arg); /* one at a time */
        return 1;
    }
    for (size_t b = 0; b < RB_HL_BUCKETS; b++)
        for (struct fsd_rb_hl_group *g = t->buckets[b]; g != NULL;
             g = g->next)
            if (p.n < t->n_groups)
                p.groups[p.n++] = g;
    atomic_init(&p.next, 0);
    if (n_threads > FSD_REBAL_THROTTLE_MAX)
        n_threads = FSD_REBAL_THROTTLE_MAX;
    /* The caller's thread is one of them. */
    while (n + 1 < n_threads && n + 1 < p.n
           && pthread_create(&threads[n], NULL, rb_hl_par_main, &p) == 0)
        n++;
    rb_hl_par_main(&p);
    for (unsigned i = 0; i < n; i++)
        pthread_join(threads[i], NULL);
    free(p.groups);
    return n + 1;
}


int
fsd_rb_hl_target(const int *hashed, size_t n_names, size_t n_subs, int src)
{
    size_t votes[FSD_RB_HL_MAX_SUBS] = {0};
    int t = -1;

    if (n_subs > FSD_RB_HL_MAX_SUBS)
        return -1;
    for (size_t i = 0; i < n_names; i++)
        if (hashed[i] >= 0 && (size_t)hashed[i] < n_subs)
            votes[hashed[i]]++;
    /* No move when a name still hashes to the source: it is on the right
     * brick for that name, the others get link files. */
    if (src >= 0 && (size_t)src < n_subs && votes[src] > 0)
        return src;
    for (size_t s = 0; s < n_subs; s++)
        if (votes[s] > 0 && (t < 0 || votes[s] > votes[t]))
            t = (int)s;
    return t;
}


/* One line of distribute's mortar.dht.layout text. */
struct rb_layout_line {
    char sub[256];  /* subvolume name */
    unsigned start; /* first hash */
    unsigned stop;  /* last hash */
    unsigned flags; /* RB_LAYOUT_HAS_RANGE, ... */
};


/* Parses the line at *line (of the text ending at end) into *out and
 * moves *line past it; false at the end. *is_ok says whether that line
 * parsed (a line that does not is skipped). */
static bool
rb_layout_next(const char **line, const char *end, struct rb_layout_line *out,
               bool *is_ok)
{
    const char *nl;
    size_t n;
    char buf[400];
    unsigned gen;

    if (*line == NULL || *line >= end)
        return false;
    nl = memchr(*line, '\n', (size_t)(end - *line));
    n = (size_t)((nl != NULL ? nl : end) - *line);
    *is_ok = false;
    if (n < sizeof(buf)) {
        memcpy(buf, *line, n);
        buf[n] = '\0';
        *is_ok = sscanf(buf, "%255s %x %x %u %u", out->sub, &out->start,
                        &out->stop, &gen, &out->flags) == 5;
    }
    *line = nl != NULL ? nl + 1 : end;
    return true;
}


int
fsd_rb_layout_find(const char *text, size_t len, uint32_t hash,
                   const char *const *names, size_t n_names)
{
    const char *line = text;
    struct rb_layout_line l;
    bool is_ok;

    while (rb_layout_next(&line, text + len, &l, &is_ok)) {
        if (!is_ok || !(l.flags & RB_LAYOUT_HAS_RANGE) || l.start > hash
            || hash > l.stop)
            continue;
        for (size_t i = 0; i < n_names; i++)
            if (strcmp(names[i], l.sub) == 0)
                return (int)i;
    }
    return -1;
}


size_t
fsd_rb_layout_ranges(const char *text, size_t len, char *out, size_t out_len)
{
    const char *line = text;
    struct rb_layout_line l;
    size_t used = 0;
    bool is_ok;

    if (out_len > 0)
        out[0] = '\0';
    while (rb_layout_next(&line, text + len, &l, &is_ok)) {
        bool has = (l.flags & RB_LAYOUT_HAS_RANGE) != 0;
        int k;

        if (!is_ok)
            continue;
        k = snprintf(used < out_len ? out + used : NULL,
                     used < out_len ? out_len - used : 0, "%s %x %x %u\n",
                     l.sub, has ? l.start : 0, has ? l.stop : 0,
                     has ? 1u : 0u);
        if (k > 0)
            used += (size_t)k;
    }
    return used;
}
