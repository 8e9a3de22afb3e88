/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * volgen: volfiles generated from a volume in the store.
 *
 * Brick:  protocol/server -> debug/io-stats -> performance/io-threads ->
 *         features/upcall -> features/locks -> [features/arbiter] ->
 *         features/access -> storage/posix, one per brick, listening on
 *         the brick's port.
 * Client: one brick: protocol/client `<vol>-client-0` alone (as before
 *         distribute existed). Several bricks: cluster/distribute
 *         `<vol>-dht` over protocol/client `<vol>-<brickid>` in brick
 *         order (the names distribute stores in link files, stable for
 *         the life of a brick), with `decommissioned-bricks` while a
 *         remove-brick runs. performance/write-behind
 *         `<vol>-write-behind` above that (unless performance.write-behind
 *         is off), performance/read-ahead `<vol>-read-ahead` above
 *         that (only if performance.read-ahead is on; GlusterFS's
 *         order and default), performance/readdir-ahead
 *         `<vol>-readdir-ahead` above that (only if
 *         performance.readdir-ahead is on), performance/quick-read
 *         `<vol>-quick-read`
 *         above that (unless performance.quick-read is off),
 *         performance/nl-cache `<vol>-nl-cache` above that (unless
 *         performance.nl-cache is off), performance/md-cache
 *         `<vol>-md-cache` above that (unless performance.stat-prefetch
 *         is off): on top, so that it answers stats before any other
 *         translator works and sees every change this client makes.
 *         md-cache-timeout is 600 s unless set when the bricks' and the
 *         client's cache invalidation are both on (GlusterFS's
 *         metadata-cache group), and md-cache's cache-invalidation is
 *         off when the bricks' is (then it keeps nothing past 1 s).
 *         Replicated volumes (replica count R): the clients are
 *         `<vol>-<brickid>` whatever the count (replicate names its
 *         pending records after its children, so the names must stay
 *         stable for the life of a brick); each set of R is under
 *         cluster/replicate `<vol>-replicate-<m>` (replica.c: m is
 *         stable for the life of the set) with the replicate.* options;
 *         one set: replicate is the top cluster translator; several:
 *         cluster/distribute `<vol>-dht` over the replicate translators
 *         (a set being removed is decommissioned as a whole).
 *         diagnostics.client-trace on puts debug/trace
 *         `<vol>-trace` on top. mortarfsd puts mount/fuse on top of the
 *         last volume. Each caching translator gets its limit from
 *         client-caches.c (its share of performance.cache-size); with
 *         network.inode-lru-limit set, every protocol/client and the
 *         bricks' protocol/server get inode-lru-limit.
 * Options set with `volume set` are stored as "<prefix>.<key>" and land
 * in the translator of that class; a key with '*' (auth.addr.*.allow) gets
 * the brick's subvolume name in its place.
 * Threads: any; pure functions of their arguments.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mortard.h"
#include "xlators/cluster/distribute/dist.h"
#include "xlators/cluster/replicate/rep.h"

_Static_assert(MD_DIST_BRICKS_MAX == DIST_MAX_SUBVOLS,
               "mortard must refuse the volumes distribute refuses");
_Static_assert(MD_REPLICA_MAX == REP_MAX_CHILDREN,
               "mortard must refuse the volumes replicate refuses");


void
md_brick_subvol(const struct md_volume *vol, const struct md_brick *b,
                char *buf, size_t len)
{
    snprintf(buf, len, "%s-%s", vol->name, b->id);
}


/* Writes the stored options of class prefix as option lines, but skip
 * (NULL: none). */
static void
md_volgen_opts_but(struct md_sbuf *sb, const struct md_volume *vol,
                   const char *prefix, const char *subvol, const char *skip)
{
    size_t n = strlen(prefix);

    for (size_t i = 0; i < vol->n_opts; i++) {
        const char *k = vol->opts[i].key;
        const char *star;

        if (strncmp(k, prefix, n) != 0 || k[n] != '.')
            continue;
        k += n + 1;
        if (skip != NULL && strcmp(k, skip) == 0)
            continue;
        star = strchr(k, '*');
        if (star != NULL)
            md_sbuf_printf(sb, "    option %.*s%s%s %s\n",
                           (int)(star - k), k, subvol, star + 1,
                           vol->opts[i].value);
        else
            md_sbuf_printf(sb, "    option %s %s\n", k, vol->opts[i].value);
    }
}


static void
md_volgen_opts(struct md_sbuf *sb, const struct md_volume *vol,
               const char *prefix, const char *subvol)
{
    md_volgen_opts_but(sb, vol, prefix, subvol, NULL);
}


/* A client performance translator's options, with its cache limit as
 * client-caches.c shares performance.cache-size out. */
static void
md_volgen_cache_opts(struct md_sbuf *sb, const struct md_volume *vol,
                     const char *name)
{
    const char *key = NULL;
    uint64_t limit;

    if (md_client_cache_limit(vol, name, &key, &limit) != 0) {
        md_volgen_opts(sb, vol, name, vol->name);
        return;
    }
    md_volgen_opts_but(sb, vol, name, vol->name, key);
    md_sbuf_printf(sb, "    option %s %llu\n", key,
                   (unsigned long long)limit);
}


/* network.inode-lru-limit, when set, for protocol/client and
 * protocol/server (each applies it to its process's inode table). */
static void
md_volgen_lru_limit(struct md_sbuf *sb, const struct md_volume *vol)
{
    const char *v = md_vol_opt_get(vol, "diagnostics.inode-lru-limit");

    if (v != NULL)
        md_sbuf_printf(sb, "    option inode-lru-limit %s\n", v);
}


char *
md_volgen_brick(const struct md_state *st, const struct md_volume *vol,
                const struct md_brick *b)
{
    struct md_sbuf sb = {0};
    char sub[128];

    md_brick_subvol(vol, b, sub, sizeof(sub));
    md_sbuf_printf(&sb, "# generated by mortard: volume %s, %s %s:%s\n"
                   "# version %llu; edits are overwritten\n\n",
                   vol->name, b->id, b->host, b->path,
                   (unsigned long long)vol->version);
    md_sbuf_printf(&sb, "volume %s-posix\n    type storage/posix\n"
                   "    option directory %s\n", vol->name, b->path);
    md_volgen_opts(&sb, vol, "posix", sub);
    md_sbuf_printf(&sb, "end-volume\n\n");
    /* The permission checks right above the disk (GlusterFS's place). */
    md_sbuf_printf(&sb, "volume %s-access\n    type features/access\n"
                   "    subvolumes %s-posix\nend-volume\n\n",
                   vol->name, vol->name);
    if (md_brick_is_arbiter(vol, b))
        md_sbuf_printf(&sb, "volume %s-arbiter\n    type features/arbiter\n"
                       "    subvolumes %s-access\nend-volume\n\n",
                       vol->name, vol->name);
    md_sbuf_printf(&sb, "volume %s-locks\n    type features/locks\n",
                   vol->name);
    md_volgen_opts(&sb, vol, "locks", sub);
    md_sbuf_printf(&sb, "    subvolumes %s-%s\nend-volume\n\n"
                   "volume %s-upcall\n    type features/upcall\n",
                   vol->name,
                   md_brick_is_arbiter(vol, b) ? "arbiter" : "access",
                   vol->name);
    md_volgen_opts(&sb, vol, "upcall", sub);
    md_sbuf_printf(&sb, "    subvolumes %s-locks\nend-volume\n\n"
                   "volume %s-io-threads\n    type performance/io-threads\n",
                   vol->name, vol->name);
    md_volgen_opts(&sb, vol, "io-threads", sub);
    /* io-stats takes the brick's subvolume name (the one clients ask
     * for) because it is protocol/server's child: every request reaches
     * it once, so its counters are the brick's profile. */
    md_sbuf_printf(&sb, "    subvolumes %s-upcall\nend-volume\n\n"
                   "volume %s\n    type debug/io-stats\n",
                   vol->name, sub);
    md_volgen_opts(&sb, vol, "io-stats", sub);
    md_sbuf_printf(&sb, "    subvolumes %s-io-threads\nend-volume\n\n"
                   "volume %s-server\n    type protocol/server\n"
                   "    option transport.socket.listen-port %u\n"
                   "    option transport.socket.bind-address %s\n",
                   vol->name, vol->name, b->port, st->bind_addr);
    md_volgen_opts(&sb, vol, "server", sub);
    md_volgen_lru_limit(&sb, vol);
    md_sbuf_printf(&sb, "    subvolumes %s\nend-volume\n", sub);
    if (sb.is_oom) {
        md_sbuf_clear(&sb);
        return NULL;
    }
    return sb.data;
}


/* The TLS file options (ssl.own-cert, ssl.private-key, ssl.ca-list,
 * ssl.cipher-list) are stored once, under protocol/server's prefix, and
 * name the same files for the host's bricks and its clients alike (as
 * GlusterFS's do): a client section gets them too. */
static void
md_volgen_ssl_files(struct md_sbuf *sb, const struct md_volume *vol)
{
    static const char prefix[] = "server.ssl.";

    for (size_t i = 0; i < vol->n_opts; i++)
        if (strncmp(vol->opts[i].key, prefix, sizeof(prefix) - 1) == 0)
            md_sbuf_printf(sb, "    option %s %s\n",
                           vol->opts[i].key + strlen("server."),
                           vol->opts[i].value);
}


/* The option diagnostics.client-trace is on. */
static bool
md_client_trace_on(const struct md_volume *vol)
{
    const char *v = md_vol_opt_get(vol, "diagnostics.client-trace");

    return v != NULL && (strcmp(v, "on") == 0 || strcmp(v, "yes") == 0 ||
                         strcmp(v, "true") == 0 || strcmp(v, "enable") == 0 ||
                         strcmp(v, "1") == 0);
}








/* A boolean option stored under key is off (unset: on). */
static bool
md_opt_is_off(const struct md_volume *vol, const char *key)
{
    const char *v = md_vol_opt_get(vol, key);
    bool is_on = true;

    return v != NULL && vl_parse_bool(v, &is_on) == 0 && !is_on;
}


/* performance/md-cache, with the timeouts that follow from cache
 * invalidation unless the user set them. */
static void
md_volgen_md_cache(struct md_sbuf *sb, const struct md_volume *vol,
                   const char *top)
{
    bool is_brick_inval = !md_opt_is_off(vol, "upcall.cache-invalidation");
    bool is_client_inval =
        !md_opt_is_off(vol, "md-cache.cache-invalidation");

    md_sbuf_printf(sb, "volume %s-md-cache\n"
                   "    type performance/md-cache\n", vol->name);
    md_volgen_opts(sb, vol, "md-cache", vol->name);
    if (!is_brick_inval
        && md_vol_opt_get(vol, "md-cache.cache-invalidation") == NULL)
        md_sbuf_printf(sb, "    option cache-invalidation off\n");
    if (is_brick_inval && is_client_inval
        && md_vol_opt_get(vol, "md-cache.md-cache-timeout") == NULL)
        md_sbuf_printf(sb, "    option md-cache-timeout 600\n");
    md_sbuf_printf(sb, "    subvolumes %s\nend-volume\n", top);
}


/* The name of distribute's child i: a brick's client, or a set's
 * replicate. */
static void
md_dht_child(const struct md_volume *vol, size_t i, char *buf, size_t len)
{
    if (md_vol_replica(vol) > 1)
        md_vol_set_name(vol, i, buf, len);
    else
        md_brick_subvol(vol, &vol->bricks[i], buf, len);
}


/* Distribute's child i is being removed (all its bricks are). */
static bool
md_dht_child_is_decommissioned(const struct md_volume *vol, size_t i)
{
    unsigned r = md_vol_replica(vol);

    for (size_t j = i * r; j < (i + 1) * r; j++)
        if (!vol->bricks[j].is_decommissioned)
            return false;
    return true;
}


/* cluster/distribute over every brick's client, or every set's
 * replicate. */
static void
md_volgen_dht(struct md_sbuf *sb, const struct md_volume *vol)
{
    char sub[128];
    bool is_first = true;
    size_t n = md_vol_n_sets(vol);

    md_sbuf_printf(sb, "volume %s-dht\n    type cluster/distribute\n",
                   vol->name);
    for (size_t i = 0; i < n; i++) {
        if (!md_dht_child_is_decommissioned(vol, i))
            continue;
        md_dht_child(vol, i, sub, sizeof(sub));
        md_sbuf_printf(sb, "%s%s", is_first ? "    option "
                       "decommissioned-bricks " : ",", sub);
        is_first = false;
    }
    if (!is_first)
        md_sbuf_printf(sb, "\n");
    md_volgen_opts(sb, vol, "cluster", vol->name);
    md_sbuf_printf(sb, "    subvolumes");
    for (size_t i = 0; i < n; i++) {
        md_dht_child(vol, i, sub, sizeof(sub));
        md_sbuf_printf(sb, " %s", sub);
    }
    md_sbuf_printf(sb, "\nend-volume\n");
}


/* cluster/replicate over each set's clients. */
static void
md_volgen_replicate(struct md_sbuf *sb, const struct md_volume *vol)
{
    unsigned r = md_vol_replica(vol);
    char name[128], sub[128];

    for (size_t i = 0; i < md_vol_n_sets(vol); i++) {
        md_vol_set_name(vol, i, name, sizeof(name));
        md_sbuf_printf(sb, "volume %s\n    type cluster/replicate\n",
                       name);
        md_volgen_opts(sb, vol, "replicate", vol->name);
        /* The arbiter is the set's last child (volgen lists bricks in
         * order); replicate must know it, not a settable option. */
        if (vol->arbiter_count != 0)
            md_sbuf_printf(sb, "    option arbiter-count 1\n");
        md_sbuf_printf(sb, "    subvolumes");
        for (size_t j = i * r; j < (i + 1) * r; j++) {
            md_brick_subvol(vol, &vol->bricks[j], sub, sizeof(sub));
            md_sbuf_printf(sb, " %s", sub);
        }
        md_sbuf_printf(sb, "\nend-volume\n");
    }
}


char *
md_volgen_client(const struct md_volume *vol)
{
    struct md_sbuf sb = {0};
    char sub[128], top[128];
    bool is_rep = md_vol_replica(vol) > 1;
    bool is_dht = md_vol_n_sets(vol) > 1;

    md_sbuf_printf(&sb, "# generated by mortard: client volfile of volume "
                   "%s, version %llu\n\n", vol->name,
                   (unsigned long long)vol->version);
    for (size_t i = 0; i < vol->n_bricks; i++) {
        const struct md_brick *b = &vol->bricks[i];

        md_brick_subvol(vol, b, sub, sizeof(sub));
        if (is_dht || is_rep)
            snprintf(top, sizeof(top), "%s", sub);
        else
            snprintf(top, sizeof(top), "%s-client-%zu", vol->name, i);
        md_sbuf_printf(&sb, "volume %s\n"
                       "    type protocol/client\n"
                       "    option remote-host %s\n"
                       "    option remote-port %u\n"
                       "    option remote-subvolume %s\n",
                       top, b->host, b->port, sub);
        md_volgen_opts(&sb, vol, "client", sub);
        md_volgen_ssl_files(&sb, vol);
        md_volgen_lru_limit(&sb, vol);
        md_sbuf_printf(&sb, "end-volume\n");
    }
    if (is_rep) {
        md_volgen_replicate(&sb, vol);
        md_vol_set_name(vol, 0, top, sizeof(top));
    }
    if (is_dht) {
        md_volgen_dht(&sb, vol);
        snprintf(top, sizeof(top), "%s-dht", vol->name);
    }
    if (md_client_xl_on(vol, "write-behind")) {
        md_sbuf_printf(&sb, "volume %s-write-behind\n"
                       "    type performance/write-behind\n", vol->name);
        md_volgen_cache_opts(&sb, vol, "write-behind");
        md_sbuf_printf(&sb, "    subvolumes %s\nend-volume\n", top);
        snprintf(top, sizeof(top), "%s-write-behind", vol->name);
    }
    if (md_client_xl_on(vol, "read-ahead")) {
        md_sbuf_printf(&sb, "volume %s-read-ahead\n"
                       "    type performance/read-ahead\n", vol->name);
        md_volgen_cache_opts(&sb, vol, "read-ahead");
        md_sbuf_printf(&sb, "    subvolumes %s\nend-volume\n", top);
        snprintf(top, sizeof(top), "%s-read-ahead", vol->name);
    }
    if (md_client_xl_on(vol, "readdir-ahead")) {
        md_sbuf_printf(&sb, "volume %s-readdir-ahead\n"
                       "    type performance/readdir-ahead\n", vol->name);
        md_volgen_cache_opts(&sb, vol, "readdir-ahead");
        md_sbuf_printf(&sb, "    subvolumes %s\nend-volume\n", top);
        snprintf(top, sizeof(top), "%s-readdir-ahead", vol->name);
    }
    if (md_client_xl_on(vol, "quick-read")) {
        md_sbuf_printf(&sb, "volume %s-quick-read\n"
                       "    type performance/quick-read\n", vol->name);
        md_volgen_cache_opts(&sb, vol, "quick-read");
        md_sbuf_printf(&sb, "    subvolumes %s\nend-volume\n", top);
        snprintf(top, sizeof(top), "%s-quick-read", vol->name);
    }
    if (md_client_xl_on(vol, "nl-cache")) {
        md_sbuf_printf(&sb, "volume %s-nl-cache\n"
                       "    type performance/nl-cache\n", vol->name);
        md_volgen_cache_opts(&sb, vol, "nl-cache");
        md_sbuf_printf(&sb, "    subvolumes %s\nend-volume\n", top);
        snprintf(top, sizeof(top), "%s-nl-cache", vol->name);
    }
    if (md_client_xl_on(vol, "md-cache")) {
        md_volgen_md_cache(&sb, vol, top);
        snprintf(top, sizeof(top), "%s-md-cache", vol->name);
    }
    if (md_client_trace_on(vol))
        md_sbuf_printf(&sb, "volume %s-trace\n    type debug/trace\n"
                       "    subvolumes %s\nend-volume\n", vol->name, top);
    if (sb.is_oom) {
        md_sbuf_clear(&sb);
        return NULL;
    }
    return sb.data;
}
