/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nlc-table: nl-cache's records, one per directory (by GFID), each with
 * the set of names this client made in it since the lease.
 *
 * Two levels of chained hash tables whose bucket arrays double as they
 * fill: priv->dirs maps a GFID to its struct nlc_dir, and each record's
 * names map a name to its struct nlc_name. Everything is allocated with
 * vl_malloc under the translator, so a statedump shows it; the bytes a
 * record holds (itself, its buckets and its names) are its charge against
 * limit, and the least recently used records are evicted whole.
 * Threads: every function but the clock runs under priv->lock.
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "nl-cache.h"

/* First sizes of the bucket arrays. */
#define NLC_DIR_BUCKETS 64
#define NLC_NAME_BUCKETS 8

/* What the clock reads instead of CLOCK_MONOTONIC; 0: the real one. */
static atomic_uint_fast64_t nlc_test_now;


uint64_t
nlc_now_ms(void)
{
    uint64_t fake = atomic_load(&nlc_test_now);
    struct timespec ts;

    if (fake != 0)
        return fake;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}


void
nlc_test_clock_set(uint64_t ms)
{
    atomic_store(&nlc_test_now, ms);
}


/* FNV-1a: GFIDs are random but the root's is not, and names are not. */
static uint32_t
nlc_hash(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}


int
nlc_table_init(struct nlc_priv *priv)
{
    /* The buckets come with the first record; id 0 means "no record". */
    priv->dirs = NULL;
    priv->n_buckets = 0;
    priv->next_id = 1;
    return 0;
}


/* ---- the LRU list ---- */

static void
nlc_lru_unlink_locked(struct nlc_priv *priv, struct nlc_dir *dir)
{
    if (dir->lru_prev != NULL)
        dir->lru_prev->lru_next = dir->lru_next;
    else
        priv->lru_head = dir->lru_next;
    if (dir->lru_next != NULL)
        dir->lru_next->lru_prev = dir->lru_prev;
    else
        priv->lru_tail = dir->lru_prev;
    dir->lru_prev = dir->lru_next = NULL;
}


static void
nlc_lru_push_locked(struct nlc_priv *priv, struct nlc_dir *dir)
{
    dir->lru_prev = NULL;
    dir->lru_next = priv->lru_head;
    if (priv->lru_head != NULL)
        priv->lru_head->lru_prev = dir;
    else
        priv->lru_tail = dir;
    priv->lru_head = dir;
}


void
nlc_dir_touch_locked(struct nlc_priv *priv, struct nlc_dir *dir)
{
    if (priv->lru_head == dir)
        return;
    nlc_lru_unlink_locked(priv, dir);
    nlc_lru_push_locked(priv, dir);
}


/* ---- records ---- */

static size_t
nlc_dir_bucket(const struct nlc_priv *priv, const vl_gfid_t *gfid)
{
    return nlc_hash(gfid->bytes, sizeof(gfid->bytes)) & (priv->n_buckets - 1);
}


struct nlc_dir *
nlc_dir_find_locked(struct nlc_priv *priv, const vl_gfid_t *gfid)
{
    struct nlc_dir *dir;

    if (priv->n_buckets == 0)
        return NULL;
    for (dir = priv->dirs[nlc_dir_bucket(priv, gfid)]; dir != NULL;
         dir = dir->next) {
        if (vl_gfid_equal(&dir->gfid, gfid))
            return dir;
    }
    return NULL;
}


struct nlc_dir *
nlc_dir_find_id_locked(struct nlc_priv *priv, const vl_gfid_t *gfid,
                       uint64_t id)
{
    struct nlc_dir *dir;

    if (id == 0)
        return NULL;
    dir = nlc_dir_find_locked(priv, gfid);
    return dir != NULL && dir->id == id ? dir : NULL;
}


/* Doubles the record buckets; on ENOMEM the chains just grow longer. */
static void
nlc_dirs_grow_locked(vl_xlator_t *xl, struct nlc_priv *priv)
{
    size_t n = priv->n_buckets == 0 ? NLC_DIR_BUCKETS : priv->n_buckets * 2;
    struct nlc_dir **b = vl_calloc(xl, n, sizeof(*b), NLC_MT_BUCKETS);

    if (b == NULL)
        return;
    for (size_t i = 0; i < priv->n_buckets; i++) {
        struct nlc_dir *dir = priv->dirs[i];

        while (dir != NULL) {
            struct nlc_dir *next = dir->next;
            size_t k = nlc_hash(dir->gfid.bytes, sizeof(dir->gfid.bytes))
                       & (n - 1);

            dir->next = b[k];
            b[k] = dir;
            dir = next;
        }
    }
    vl_free(priv->dirs);
    priv->dirs = b;
    priv->n_buckets = n;
}


static void
nlc_dir_free_names(struct nlc_dir *dir)
{
    for (size_t i = 0; i < dir->n_buckets; i++) {
        struct nlc_name *nm = dir->names[i];

        while (nm != NULL) {
            struct nlc_name *next = nm->next;

            vl_free(nm);
            nm = next;
        }
    }
    vl_free(dir->names);
}


void
nlc_dir_drop_locked(struct nlc_priv *priv, struct nlc_dir *dir)
{
    struct nlc_dir **pp = &priv->dirs[nlc_dir_bucket(priv, &dir->gfid)];

    while (*pp != dir)
        pp = &(*pp)->next;
    *pp = dir->next;
    nlc_lru_unlink_locked(priv, dir);
    priv->n_dirs--;
    if (dir->state == NLC_LEASED)
        priv->n_leased--;
    priv->n_names -= dir->n_names;
    priv->bytes -= dir->charge;
    nlc_dir_free_names(dir);
    vl_free(dir);
}


struct nlc_dir *
nlc_dir_new_locked(vl_xlator_t *xl, struct nlc_priv *priv,
                   const vl_gfid_t *gfid)
{
    struct nlc_dir *dir;
    size_t k;

    dir = nlc_dir_find_locked(priv, gfid);
    if (dir != NULL)
        nlc_dir_drop_locked(priv, dir);
    if (priv->n_dirs >= priv->n_buckets)
        nlc_dirs_grow_locked(xl, priv);
    if (priv->n_buckets == 0)
        return NULL;
    dir = vl_calloc(xl, 1, sizeof(*dir), NLC_MT_DIR);
    if (dir == NULL)
        return NULL;
    dir->gfid = *gfid;
    dir->id = priv->next_id++;
    dir->state = NLC_PENDING;
    dir->epoch = priv->epoch;
    dir->charge = sizeof(*dir);
    k = nlc_dir_bucket(priv, gfid);
    dir->next = priv->dirs[k];
    priv->dirs[k] = dir;
    nlc_lru_push_locked(priv, dir);
    priv->n_dirs++;
    priv->bytes += dir->charge;
    return dir;
}


void
nlc_dir_set_leased_locked(struct nlc_priv *priv, struct nlc_dir *dir,
                          uint64_t now_ms)
{
    if (dir->state != NLC_LEASED)
        priv->n_leased++;
    dir->state = NLC_LEASED;
    dir->grant_ms = now_ms;
    nlc_dir_touch_locked(priv, dir);
}


void
nlc_purge_locked(struct nlc_priv *priv)
{
    while (priv->lru_head != NULL)
        nlc_dir_drop_locked(priv, priv->lru_head);
}


void
nlc_shrink_locked(struct nlc_priv *priv)
{
    while (priv->bytes > priv->limit && priv->lru_tail != NULL) {
        nlc_dir_drop_locked(priv, priv->lru_tail);
        atomic_fetch_add(&priv->evictions, 1);
    }
}


void
nlc_table_clear(struct nlc_priv *priv)
{
    nlc_purge_locked(priv);
    vl_free(priv->dirs);
    priv->dirs = NULL;
    priv->n_buckets = 0;
}


/* ---- names ---- */

bool
nlc_name_has_locked(const struct nlc_dir *dir, const char *name)
{
    size_t len = strlen(name);
    uint32_t h;

    if (dir->n_buckets == 0)
        return false;
    h = nlc_hash(name, len);
    for (const struct nlc_name *nm = dir->names[h & (dir->n_buckets - 1)];
         nm != NULL; nm = nm->next) {
        if (nm->hash == h && nm->len == len
            && memcmp(nm->name, name, len) == 0)
            return true;
    }
    return false;
}


/* Doubles dir's name buckets (or makes the first ones). Returns 0 or
 * -ENOMEM; a set that cannot grow still works with longer chains, but
 * one with no buckets at all cannot hold a name. */
static int
nlc_names_grow_locked(vl_xlator_t *xl, struct nlc_priv *priv,
                      struct nlc_dir *dir)
{
    size_t n = dir->n_buckets == 0 ? NLC_NAME_BUCKETS : dir->n_buckets * 2;
    struct nlc_name **b = vl_calloc(xl, n, sizeof(*b), NLC_MT_BUCKETS);

    if (b == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < dir->n_buckets; i++) {
        struct nlc_name *nm = dir->names[i];

        while (nm != NULL) {
            struct nlc_name *next = nm->next;

            nm->next = b[nm->hash & (n - 1)];
            b[nm->hash & (n - 1)] = nm;
            nm = next;
        }
    }
    vl_free(dir->names);
    dir->charge += (n - dir->n_buckets) * sizeof(*b);
    priv->bytes += (n - dir->n_buckets) * sizeof(*b);
    dir->names = b;
    dir->n_buckets = n;
    return 0;
}


int
nlc_name_add_locked(vl_xlator_t *xl, struct nlc_priv *priv,
                    struct nlc_dir *dir, const char *name)
{
    size_t len = strlen(name);
    struct nlc_name *nm;
    size_t size;

    if (nlc_name_has_locked(dir, name))
        return 0;
    if (dir->n_names >= dir->n_buckets
        && nlc_names_grow_locked(xl, priv, dir) != 0 && dir->n_buckets == 0)
        return -ENOMEM;
    size = sizeof(*nm) + len + 1;
    nm = vl_malloc(xl, size, NLC_MT_NAME);
    if (nm == NULL)
        return -ENOMEM;
    nm->hash = nlc_hash(name, len);
    nm->len = len;
    memcpy(nm->name, name, len + 1);
    nm->next = dir->names[nm->hash & (dir->n_buckets - 1)];
    dir->names[nm->hash & (dir->n_buckets - 1)] = nm;
    dir->n_names++;
    dir->charge += size;
    priv->n_names++;
    priv->bytes += size;
    return 0;
}


void
nlc_name_del_locked(struct nlc_priv *priv, struct nlc_dir *dir,
                    const char *name)
{
    size_t len = strlen(name);
    struct nlc_name **pp;
    uint32_t h;

    if (dir->n_buckets == 0)
        return;
    h = nlc_hash(name, len);
    for (pp = &dir->names[h & (dir->n_buckets - 1)]; *pp != NULL;
         pp = &(*pp)->next) {
        struct nlc_name *nm = *pp;

        if (nm->hash == h && nm->len == len
            && memcmp(nm->name, name, len) == 0) {
            *pp = nm->next;
            dir->n_names--;
            dir->charge -= sizeof(*nm) + len + 1;
            priv->n_names--;
            priv->bytes -= sizeof(*nm) + len + 1;
            vl_free(nm);
            return;
        }
    }
}
