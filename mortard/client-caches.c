/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * client-caches: which performance translators a volume's clients load,
 * and the one memory cap over their caches.
 *
 * performance.cache-size (diagnostics.cache-size, default 32 MiB) bounds
 * the data every client of the volume caches: quick-read's file
 * contents, write-behind's writes answered before the bricks had them,
 * read-ahead's pages, readdir-ahead's entries and nl-cache's names.
 * volgen writes each enabled translator's limit into the client volfile:
 * a limit set with its own key (performance.quick-read-cache-size...) is
 * taken as it is, and what the cap leaves is shared among the others by
 * weight (quick-read 8, write-behind 4, read-ahead 2, readdir-ahead 1,
 * nl-cache 1), so the limits of the loaded translators add up to the
 * cap; a translator that is off takes nothing. `volume set` refuses a
 * value that would make the limits set with their own keys exceed the
 * cap (md_client_caches_check); volgen scales them down if a store holds
 * such a mix anyway, so no client is ever given more than the cap.
 * While performance.cache-size is not set, a cache's own limit is taken
 * on top of the others' default shares (what they would get of 32 MiB
 * with no own limits), as before the cap existed: a volume whose
 * quick-read was given 256 MiB (GlusterFS's performance.cache-size
 * meant that, and older Mortar stored it so) does not starve
 * write-behind; setting the cap makes it bind them all.
 * Attributes (md-cache) and inodes are bounded by count instead:
 * network.inode-lru-limit.
 * Threads: any; pure functions of the volume.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "mortard.h"

#define MD_CACHE_SIZE_DEFAULT (32ULL << 20)

/* A client performance translator: whether it is loaded, and its cache. */
struct md_client_xl {
    const char *name;     /* class prefix of its stored options */
    const char *switch_key; /* diagnostics.* option that loads it */
    bool is_default_on;
    const char *limit_key; /* its byte limit (NULL: caches no data) */
    unsigned weight;       /* share of the cap left by explicit limits */
};

static const struct md_client_xl md_client_xls[] = {
    {"write-behind", "diagnostics.write-behind", true, "total-size", 4},
    {"read-ahead", "diagnostics.read-ahead", false, "cache-limit", 2},
    {"readdir-ahead", "diagnostics.readdir-ahead", false, "cache-limit", 1},
    {"quick-read", "diagnostics.quick-read", true, "cache-size", 8},
    {"nl-cache", "diagnostics.nl-cache", true, "limit", 1},
    {"md-cache", "diagnostics.stat-prefetch", true, NULL, 0},
};


/* A volume's options, with one of them (canon) given another value:
 * what the volume would be after `volume set`. */
struct md_opts_view {
    const struct md_volume *vol;
    const char *canon; /* NULL: the volume as it is */
    const char *value;
};


static const char *
md_view_get(const struct md_opts_view *v, const char *key)
{
    if (v->canon != NULL && strcmp(v->canon, key) == 0)
        return v->value;
    return md_vol_opt_get(v->vol, key);
}


static const struct md_client_xl *
md_client_xl_find(const char *name)
{
    for (size_t i = 0; i < VL_ARRAY_SIZE(md_client_xls); i++)
        if (strcmp(md_client_xls[i].name, name) == 0)
            return &md_client_xls[i];
    return NULL;
}


static bool
md_view_xl_on(const struct md_opts_view *view, const char *name)
{
    const struct md_client_xl *cx = md_client_xl_find(name);
    const char *v;
    bool is_on;

    if (cx == NULL)
        return false;
    v = md_view_get(view, cx->switch_key);
    is_on = cx->is_default_on;
    if (v != NULL && vl_parse_bool(v, &is_on) != 0)
        is_on = cx->is_default_on; /* unparsable: the default */
    return is_on;
}


bool
md_client_xl_on(const struct md_volume *vol, const char *name)
{
    const struct md_opts_view view = {.vol = vol};

    return md_view_xl_on(&view, name);
}


static uint64_t md_client_caches_explicit(const struct md_opts_view *view);
static bool md_client_xl_explicit(const struct md_opts_view *view,
                                  const struct md_client_xl *cx,
                                  uint64_t *out);


/* The cap: performance.cache-size as set; unset, the caches' own limits
 * plus the default shares of the others (see the top). */
static uint64_t
md_view_cap(const struct md_opts_view *view)
{
    const char *v = md_view_get(view, "diagnostics.cache-size");
    unsigned w_all = 0, w_rest = 0;
    uint64_t cap, own;

    if (v != NULL && vl_parse_size(v, &cap) == 0)
        return cap;
    for (size_t i = 0; i < VL_ARRAY_SIZE(md_client_xls); i++) {
        const struct md_client_xl *cx = &md_client_xls[i];

        if (cx->limit_key == NULL || !md_view_xl_on(view, cx->name))
            continue;
        w_all += cx->weight;
        if (!md_client_xl_explicit(view, cx, &own))
            w_rest += cx->weight;
    }
    if (w_all == 0)
        return MD_CACHE_SIZE_DEFAULT;
    return md_client_caches_explicit(view)
           + MD_CACHE_SIZE_DEFAULT / w_all * w_rest;
}


/* The limit set with cx's own key, if any. */
static bool
md_client_xl_explicit(const struct md_opts_view *view,
                      const struct md_client_xl *cx, uint64_t *out)
{
    char key[128];
    const char *v;

    snprintf(key, sizeof(key), "%s.%s", cx->name, cx->limit_key);
    v = md_view_get(view, key);
    return v != NULL && vl_parse_size(v, out) == 0;
}


/* Sum of the limits set with their own keys, of loaded translators. */
static uint64_t
md_client_caches_explicit(const struct md_opts_view *view)
{
    uint64_t sum = 0, v;

    for (size_t i = 0; i < VL_ARRAY_SIZE(md_client_xls); i++) {
        const struct md_client_xl *cx = &md_client_xls[i];

        if (cx->limit_key != NULL && md_view_xl_on(view, cx->name)
            && md_client_xl_explicit(view, cx, &v))
            sum += v;
    }
    return sum;
}


int
md_client_cache_limit(const struct md_volume *vol, const char *name,
                      const char **key, uint64_t *limit)
{
    const struct md_opts_view view = {.vol = vol};
    const struct md_client_xl *cx = md_client_xl_find(name);
    uint64_t cap = md_view_cap(&view);
    uint64_t explicit_sum, left, v;
    unsigned weights = 0;

    if (cx == NULL || cx->limit_key == NULL || !md_view_xl_on(&view, name))
        return -ENOENT;
    *key = cx->limit_key;
    explicit_sum = md_client_caches_explicit(&view);
    if (md_client_xl_explicit(&view, cx, &v)) {
        /* A store that holds more than the cap (set before the cap was
         * lowered by hand, say): each is scaled down alike. */
        *limit = explicit_sum <= cap
                     ? v
                     : (uint64_t)((long double)v * cap / explicit_sum);
        return 0;
    }
    left = explicit_sum < cap ? cap - explicit_sum : 0;
    for (size_t i = 0; i < VL_ARRAY_SIZE(md_client_xls); i++) {
        const struct md_client_xl *o = &md_client_xls[i];

        if (o->limit_key != NULL && md_view_xl_on(&view, o->name)
            && !md_client_xl_explicit(&view, o, &v))
            weights += o->weight;
    }
    *limit = weights == 0 ? 0 : left / weights * cx->weight;
    return 0;
}


int
md_client_caches_check(const struct md_volume *vol, const char *canon,
                       const char *value, vl_err_t *err)
{
    const struct md_opts_view view = {vol, canon, value};
    uint64_t cap = md_view_cap(&view);
    uint64_t sum = md_client_caches_explicit(&view);

    if (sum <= cap)
        return 0;
    vl_err_set(err, "the client caches' own limits add up to %" PRIu64
               " bytes, more than performance.cache-size (%" PRIu64
               " bytes), which bounds them all: raise "
               "performance.cache-size first, or lower the others",
               sum, cap);
    return -EINVAL;
}
