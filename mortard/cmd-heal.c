/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-heal: `volume heal VOL ...`, GlusterFS's grammar and output shapes.
 *
 *   heal VOL                       a round of the self-heal daemon now
 *   heal VOL full                  a crawl of every brick's whole tree
 *   heal VOL info                  the entries each brick's index lists
 *   heal VOL info summary          their counts, per brick
 *   heal VOL statistics heal-count the same counts, GlusterFS's shape
 *   heal VOL status                entries and bytes left, rate, ETA
 *                                  (a Mortar extension)
 *   heal VOL enable | disable      cluster.self-heal-daemon on | off
 *
 * What needs healing is read from the heal index of each brick
 * (.mortar/index/xattrop/, O(pending): doc/replicate.md), here for this
 * node's bricks and by HEAL_INFO from their nodes for the others
 * (heal-peers.c); a directory's entry is shown as its path (its handle
 * is a symlink chain to the root), any other object as <gfid:UUID>, as
 * GlusterFS does for names it cannot resolve. info split-brain and the
 * split-brain commands are cmd-split-brain.c's.
 * heal VOL and heal VOL full reach the daemon of every node with bricks
 * of the volume: with peers they run as a transaction (txn.c; its
 * precheck is md_heal_precheck, on the node the command came to, and
 * each node's commit kicks its own daemon, heal.c: md_heal_round).
 * Threads: the worker thread with md_state.lock held.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mgmt.h"
#include "mortard.h"

#define MD_HEAL_ROOT_GFID "00000000-0000-0000-0000-000000000001"
#define MD_HEAL_DEPTH_MAX 4096
/* GFIDs of one local brick status names for its set's union (37 bytes
 * each: some 450,000); a longer index counts its set by the longest. */
#define MD_HEAL_UNION_BYTES (16 * 1024 * 1024)

void
md_heal_brick_clear(struct md_heal_brick *hb)
{
    for (size_t i = 0; i < hb->n_names; i++)
        free(hb->names[i]);
    free(hb->names);
    memset(hb, 0, sizeof(*hb));
}


/* The path of the directory whose handle is brick/.mortar/handles/..
 * /gfid (a symlink "../../xx/yy/<parent-gfid>/<name>"), walking up to the
 * root; NULL for anything else (not a directory, a broken chain). */
char *
md_heal_dir_path(const char *brick, const char *gfid)
{
    char cur[VL_GFID_STR_LEN], link[PATH_MAX], handle[PATH_MAX];
    char *path = strdup("");

    snprintf(cur, sizeof(cur), "%.*s", VL_GFID_STR_LEN - 1, gfid);
    for (int depth = 0; path != NULL && depth < MD_HEAL_DEPTH_MAX;
         depth++) {
        const char *slash;
        char *next;
        ssize_t n;

        if (strcmp(cur, MD_HEAL_ROOT_GFID) == 0)
            break;
        snprintf(handle, sizeof(handle), "%s/.mortar/handles/%.2s/%.2s/%s",
                 brick, cur, cur + 2, cur);
        n = readlink(handle, link, sizeof(link) - 1);
        if (n <= 0)
            goto fail;
        link[n] = '\0';
        /* ../../xx/yy/<parent>/<name> */
        if (strncmp(link, "../../", 6) != 0 || strlen(link) < 6 + 6 + 37)
            goto fail;
        slash = strchr(link + 6 + 6, '/');
        if (slash == NULL || slash - (link + 12) != VL_GFID_STR_LEN - 1)
            goto fail;
        if (asprintf(&next, "/%s%s", slash + 1, path) < 0)
            goto fail;
        free(path);
        path = next;
        snprintf(cur, sizeof(cur), "%.*s", VL_GFID_STR_LEN - 1, link + 12);
    }
    if (path != NULL && path[0] == '\0') {
        free(path);
        path = strdup("/");
    }
    return path;
fail:
    free(path);
    return NULL;
}


/* The first line of file path into out (size bytes): 0, -ENOENT, or
 * another -errno (-EINVAL: empty, or longer than out). */
static int
md_heal_line_read(const char *path, char *out, size_t size)
{
    char *text = NULL;
    size_t len = 0;
    int rc = md_read_file(path, &text, &len);

    if (rc != 0)
        return rc;
    len = strcspn(text, "\n");
    if (len > 0 && len < size) {
        memcpy(out, text, len);
        out[len] = '\0';
    } else {
        rc = -EINVAL;
    }
    free(text);
    return rc;
}


bool
md_heal_index_whole(const char *brick)
{
    const char *id_file = getenv("MORTAR_BOOT_ID_FILE");
    char path[PATH_MAX], marker[80], boot[80];
    int rc;

    /* As storage/posix decides at start (posix-index-boot.c): no marker,
     * "clean" or this boot's id is whole; a marker that cannot be read
     * is not (the brick rebuilds from it). */
    snprintf(path, sizeof(path), "%s/.mortar/index/boot", brick);
    rc = md_heal_line_read(path, marker, sizeof(marker));
    if (rc == -ENOENT || (rc == 0 && strcmp(marker, "clean") == 0))
        return true;
    if (md_heal_line_read(id_file != NULL ? id_file
                                          : "/proc/sys/kernel/random/boot_id",
                          boot, sizeof(boot)) != 0)
        return true; /* the brick fsyncs its entries then */
    return rc == 0 && strcmp(marker, boot) == 0;
}


void
md_heal_brick_read(const char *brick, bool is_names, bool is_gfids,
                   size_t *budget, struct md_heal_brick *hb)
{
    char dir[PATH_MAX];
    struct dirent *de;
    DIR *d;

    memset(hb, 0, sizeof(*hb));
    /* The marker changes only to "whole" (the rebuild done): asked
     * before the listing, a whole index stays whole while it is read. */
    if (!md_heal_index_whole(brick))
        hb->status = -EBUSY; /* the entries read are some of them */
    snprintf(dir, sizeof(dir), "%s/.mortar/index/xattrop", brick);
    d = opendir(dir);
    if (d == NULL) {
        /* No index yet: nothing was ever pending on this brick. */
        if (errno != ENOENT || hb->status == 0)
            hb->status = errno == ENOENT ? 0 : -errno;
        return;
    }
    while ((de = readdir(d)) != NULL) {
        vl_gfid_t g;
        char *name = NULL, **v;

        if (vl_gfid_parse(de->d_name, &g) != 0)
            continue;
        hb->n++;
        if (!is_names || *budget == 0)
            continue;
        name = is_gfids ? strdup(de->d_name)
                        : md_heal_dir_path(brick, de->d_name);
        if (name == NULL && !is_gfids
            && asprintf(&name, "<gfid:%s>", de->d_name) < 0)
            name = NULL;
        if (name != NULL && strlen(name) + 1 > *budget) {
            free(name);
            *budget = 0;
            continue;
        }
        v = name != NULL ? realloc(hb->names, (hb->n_names + 1)
                                                  * sizeof(*v))
                         : NULL;
        if (v == NULL) {
            free(name);
            hb->status = -ENOMEM;
            continue;
        }
        hb->names = v;
        hb->names[hb->n_names++] = name;
        *budget -= strlen(name) + 1;
    }
    closedir(d);
}


/* The status line of a brick: "Connected" when its index was read. */
static const char *
md_heal_status(const struct md_state *st, const struct md_volume *vol,
               const struct md_brick *b, const struct md_heal_brick *hb)
{
    if (hb->status == -EBUSY)
        return MD_HEAL_INDEX_REBUILDING;
    if (!md_brick_is_local(st, b))
        return hb->status == 0 ? "Connected"
                               : hb->remote_err[0] != '\0'
                                     ? hb->remote_err
                                     : strerror(-hb->status);
    if (hb->status != 0)
        return strerror(-hb->status);
    return md_brick_pid(st, vol, b) != 0 ? "Connected"
                                          : "Transport endpoint is not "
                                            "connected";
}


enum md_heal_view { MD_HEAL_INFO, MD_HEAL_SUMMARY, MD_HEAL_COUNT };


/* info summary's counts of brick b with n entries: the split-brain
 * ones from the list of its node's daemon (cmd-split-brain.c, another
 * node's asked by HEAL_SPLIT into split; "-" until listed or when not
 * gathered). */
static void
md_heal_summary_counts(struct md_state *st, const struct md_volume *vol,
                       const struct md_brick *b, uint64_t n,
                       const struct md_heal_brick *split, struct md_node *bn,
                       struct md_result *r)
{
    uint64_t sb = 0;
    int rc;

    if (md_brick_is_local(st, b)) {
        rc = md_heal_split_count(st, vol, b, &sb);
    } else {
        rc = split->status;
        sb = split->n;
    }
    if (rc != 0) {
        md_sbuf_printf(&r->text, "Total Number of entries: %" PRIu64
                       "\nNumber of entries in heal pending: %" PRIu64
                       "\nNumber of entries in split-brain: -\n"
                       "Number of entries possibly healing: -\n\n", n, n);
        return;
    }
    sb = sb < n ? sb : n;
    md_sbuf_printf(&r->text, "Total Number of entries: %" PRIu64
                   "\nNumber of entries in heal pending: %" PRIu64
                   "\nNumber of entries in split-brain: %" PRIu64
                   "\nNumber of entries possibly healing: -\n\n", n,
                   n - sb, sb);
    md_node_addf(bn, "numberOfEntriesInSplitBrain", "%" PRIu64, sb);
}


/* The indexes of vol's bricks into hbs, by brick (names as
 * md_heal_bricks_remote takes them, up to budget bytes a brick; this
 * node's named up to local_budget): the other nodes' asked all at
 * once, then this node's read. */
static void
md_heal_bricks_get(struct md_state *st, const struct md_volume *vol,
                   int names, size_t budget, size_t local_budget,
                   struct md_heal_peers *hp, struct md_heal_brick *hbs)
{
    md_heal_bricks_remote(st, vol, 0, vol->n_bricks, NULL,
                          MGMT_PROC_HEAL_INFO, names, budget, hp, hbs);
    for (size_t i = 0; i < vol->n_bricks; i++) {
        size_t left = local_budget;

        if (md_brick_is_local(st, &vol->bricks[i]))
            md_heal_brick_read(vol->bricks[i].path, names != 0,
                               names == MGMT_HEAL_NAMES_GFID, &left,
                               &hbs[i]);
    }
}


static void
md_heal_info(struct md_state *st, const struct md_volume *vol,
             enum md_heal_view view, struct md_result *r)
{
    struct md_node *hi = md_node_add(r->root, "healInfo", NULL);
    struct md_node *bl = md_node_add(hi, "bricks", NULL);
    struct md_heal_peers hp = {0};
    size_t budget = MD_HEAL_INFO_NAME_BYTES / vol->n_bricks;
    struct md_heal_brick *hbs = calloc(vol->n_bricks, sizeof(*hbs));
    struct md_heal_brick *splits = NULL;
    bool *is_split = NULL;

    if (view == MD_HEAL_SUMMARY) {
        splits = calloc(vol->n_bricks, sizeof(*splits));
        is_split = calloc(vol->n_bricks, sizeof(*is_split));
    }
    if (hbs == NULL || (view == MD_HEAL_SUMMARY
                        && (splits == NULL || is_split == NULL))) {
        free(hbs);
        free(splits);
        free(is_split);
        md_result_fail(r, MD_EXIT_FAIL, ENOMEM, "volume heal %s info: %s",
                       vol->name, strerror(ENOMEM));
        return;
    }
    md_heal_bricks_get(st, vol, view == MD_HEAL_INFO, budget, budget, &hp,
                       hbs);
    /* summary: the split-brain lists of the bricks whose index was read,
     * the other nodes' again all at once. */
    for (size_t i = 0; is_split != NULL && i < vol->n_bricks; i++)
        is_split[i] = hbs[i].status == 0;
    if (view == MD_HEAL_SUMMARY)
        md_heal_bricks_remote(st, vol, 0, vol->n_bricks, is_split,
                              MGMT_PROC_HEAL_SPLIT, 0, 0, &hp, splits);
    bl->is_list = true;
    if (view == MD_HEAL_COUNT)
        md_sbuf_printf(&r->text, "Gathering count of entries to be healed "
                       "on volume %s has been successful\n\n", vol->name);
    for (size_t i = 0; i < vol->n_bricks; i++) {
        const struct md_brick *b = &vol->bricks[i];
        struct md_heal_brick *hb = &hbs[i];
        struct md_node *bn = md_node_add(bl, "brick", NULL);
        const char *status = md_heal_status(st, vol, b, hb);

        md_sbuf_printf(&r->text, "Brick %s:%s\n", b->host, b->path);
        md_node_addf(bn, "name", "%s:%s", b->host, b->path);
        for (size_t j = 0; j < hb->n_names; j++) {
            md_sbuf_printf(&r->text, "%s\n", hb->names[j]);
            md_node_add(bn, "file", hb->names[j]);
        }
        md_node_add(bn, "status", status);
        if (view != MD_HEAL_COUNT)
            md_sbuf_printf(&r->text, "Status: %s\n", status);
        if (hb->status != 0) {
            md_sbuf_printf(&r->text, "Number of entries: -\n\n");
            md_node_add(bn, "numberOfEntries", "-");
            continue;
        }
        if (view == MD_HEAL_SUMMARY)
            md_heal_summary_counts(st, vol, b, hb->n, &splits[i], bn, r);
        else
            md_sbuf_printf(&r->text, "Number of entries: %" PRIu64 "\n\n",
                           hb->n);
        md_node_addf(bn, "numberOfEntries", "%" PRIu64, hb->n);
        if (hb->n > hb->n_names && view == MD_HEAL_INFO)
            md_sbuf_printf(&r->text, "(only the first %zu entries are "
                           "named: one reply holds %d MiB of names; `volume "
                           "heal %s info summary` counts them all)\n\n",
                           hb->n_names, MD_HEAL_INFO_NAME_BYTES >> 20,
                           vol->name);
    }
    for (size_t i = 0; i < vol->n_bricks; i++) {
        md_heal_brick_clear(&hbs[i]);
        if (splits != NULL)
            md_heal_brick_clear(&splits[i]);
    }
    free(hbs);
    free(splits);
    free(is_split);
    md_heal_peers_clear(&hp);
}


/* Bytes in a short human form ("12.3 MiB"). */
static void
md_heal_bytes(uint64_t n, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)n;
    size_t u = 0;

    while (v >= 1024 && u + 1 < VL_ARRAY_SIZE(units)) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%" PRIu64 " B", n);
    else
        snprintf(buf, len, "%.1f %s", v, units[u]);
}


static int
md_heal_progress_kv(const char *key, const char *value, int line, void *arg,
                    vl_err_t *err)
{
    static const struct {
        const char *key;
        size_t off;
    } nums[] = {
        {"healed", offsetof(struct md_heal_progress, healed)},
        {"healed_bytes", offsetof(struct md_heal_progress, healed_bytes)},
        {"pending", offsetof(struct md_heal_progress, pending)},
        {"pending_bytes", offsetof(struct md_heal_progress, pending_bytes)},
        {"eta_seconds", offsetof(struct md_heal_progress, eta_seconds)},
        {"split_brain", offsetof(struct md_heal_progress, split_brain)},
        {"waiting", offsetof(struct md_heal_progress, waiting)},
        {"failed", offsetof(struct md_heal_progress, failed)},
        {"updated", offsetof(struct md_heal_progress, updated)},
        {"full_crawl", offsetof(struct md_heal_progress, full_crawl)},
        {"crawl_visited", offsetof(struct md_heal_progress, crawl_visited)},
        {"crawl_healed", offsetof(struct md_heal_progress, crawl_healed)},
        {"crawl_failed", offsetof(struct md_heal_progress, crawl_failed)},
        {"crawl_done_at", offsetof(struct md_heal_progress, crawl_done_at)},
    };
    struct md_heal_progress *p = arg;

    (void)line;
    (void)err;
    if (strcmp(key, "rate") == 0)
        p->rate = strtod(value, NULL);
    else if (strcmp(key, "rate_bytes") == 0)
        p->rate_bytes = strtod(value, NULL);
    for (size_t i = 0; i < VL_ARRAY_SIZE(nums); i++)
        if (strcmp(key, nums[i].key) == 0)
            *(long long *)(void *)((char *)p + nums[i].off) =
                strtoll(value, NULL, 10);
    return 0; /* per-brick and newer keys are not shown here */
}


void
md_heal_progress_parse(const char *text, const char *path,
                       struct md_heal_progress *p)
{
    vl_err_t err = {.msg = ""};

    memset(p, 0, sizeof(*p));
    p->eta_seconds = -1;
    p->is_read = md_kv_parse(text, path, md_heal_progress_kv, p, &err) == 0;
}


void
md_heal_progress_read(const struct md_state *st, const char *volname,
                      struct md_heal_progress *p)
{
    char path[4200], *text = NULL;

    memset(p, 0, sizeof(*p));
    p->eta_seconds = -1;
    md_heal_path(st, volname, "state", path, sizeof(path));
    if (md_read_file(path, &text, NULL) != 0)
        return;
    md_heal_progress_parse(text, path, p);
    free(text);
}


/* The "Full crawl:" line of `heal VOL status`. */
static void
md_heal_crawl_line(enum md_heal_crawl crawl, const struct md_heal_progress *p,
                   struct md_result *r)
{
    time_t t = (time_t)p->crawl_done_at;
    char when[64] = "";
    struct tm tm;

    if (crawl == MD_HEAL_CRAWL_FINISHED && localtime_r(&t, &tm) != NULL)
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", &tm);
    if (crawl == MD_HEAL_CRAWL_FINISHED)
        md_sbuf_printf(&r->text, "Full crawl: last finished at %s, %lld "
                       "objects visited, %lld healed, %lld failed\n", when,
                       p->crawl_visited, p->crawl_healed, p->crawl_failed);
    else if (crawl == MD_HEAL_CRAWL_RUNNING)
        md_sbuf_printf(&r->text, "Full crawl: running, %lld objects "
                       "visited, %lld healed, %lld failed\n",
                       p->crawl_visited, p->crawl_healed, p->crawl_failed);
    else
        md_sbuf_printf(&r->text, "Full crawl: %s\n",
                       crawl == MD_HEAL_CRAWL_REQUESTED ? "requested"
                                                        : "never run");
}


/* A daemon's figures under n (each node's, and their sum). */
static void
md_heal_figures_show(enum md_heal_crawl crawl,
                     const struct md_heal_progress *p, struct md_node *n)
{
    static const char *const states[] = {
        [MD_HEAL_CRAWL_NEVER] = "never run",
        [MD_HEAL_CRAWL_FINISHED] = "finished",
        [MD_HEAL_CRAWL_REQUESTED] = "requested",
        [MD_HEAL_CRAWL_RUNNING] = "running",
    };
    struct md_node *fc;

    md_node_addf(n, "bytesLeft", "%lld", p->pending_bytes);
    md_node_addf(n, "healedEntries", "%lld", p->healed);
    md_node_addf(n, "healedBytes", "%lld", p->healed_bytes);
    md_node_addf(n, "rate", "%.3f", p->rate);
    md_node_addf(n, "rateBytes", "%.0f", p->rate_bytes);
    md_node_addf(n, "splitBrain", "%lld", p->split_brain);
    md_node_addf(n, "waiting", "%lld", p->waiting);
    fc = md_node_add(n, "fullCrawl", NULL);
    md_node_add(fc, "state", states[crawl]);
    md_node_addf(fc, "visited", "%lld", p->crawl_visited);
    md_node_addf(fc, "healed", "%lld", p->crawl_healed);
    md_node_addf(fc, "failed", "%lld", p->crawl_failed);
    md_node_addf(fc, "doneAt", "%lld", p->crawl_done_at);
}


/* What the nodes' self-heal daemons listed (proc MGMT_PROC_HEAL_SPLIT:
 * in split-brain; MGMT_PROC_HEAL_WAITING: waiting for a copy) for the
 * bricks whose index was read (hbs), counted once per replica set
 * (heal-union.c), the other nodes' lists asked all at once. When a
 * brick's list is not there (its daemon has not listed it yet, or is an
 * older one, or its node refused), summed, the daemons' own count of
 * their last rounds: an object once per node that saw it. When no index
 * read lists anything (every object listed is still indexed), no list
 * is asked and the daemons' sum stands. */
static long long
md_heal_lists_total(struct md_state *st, const struct md_volume *vol,
                    uint32_t proc, const struct md_heal_brick *hbs,
                    long long summed, struct md_heal_peers *hp)
{
    struct md_heal_brick *lists;
    bool *is_asked;
    bool is_all = true, is_any = false;
    long long total = summed;

    /* Not summed == 0: a daemon's counts start again at 0 with each
     * round, while its lists are those of the last round it ended. */
    for (size_t i = 0; i < vol->n_bricks; i++)
        is_any = is_any || (hbs[i].status == 0 && hbs[i].n > 0);
    if (!is_any)
        return summed;
    lists = calloc(vol->n_bricks, sizeof(*lists));
    is_asked = calloc(vol->n_bricks, sizeof(*is_asked));
    for (size_t i = 0; lists != NULL && is_asked != NULL
                       && i < vol->n_bricks; i++)
        is_asked[i] = hbs[i].status == 0;
    if (lists == NULL || is_asked == NULL) {
        free(lists);
        free(is_asked);
        return summed;
    }
    md_heal_bricks_remote(st, vol, 0, vol->n_bricks, is_asked, proc,
                          MGMT_HEAL_NAMES_GFID, MGMT_OUTPUT_MAX / 2, hp,
                          lists);
    for (size_t i = 0; i < vol->n_bricks; i++) {
        const struct md_brick *b = &vol->bricks[i];
        size_t left = MD_HEAL_UNION_BYTES;

        if (!is_asked[i]) {
            lists[i].status = -ENOTCONN; /* left out of its set */
            continue;
        }
        if (md_brick_is_local(st, b) && proc == MGMT_PROC_HEAL_SPLIT)
            md_heal_split_read(st, vol->name, b->path, true, &left,
                               &lists[i]);
        else if (md_brick_is_local(st, b))
            md_heal_waiting_read(st, vol->name, b->path, &left, &lists[i]);
        is_all = is_all && lists[i].status == 0;
    }
    if (is_all)
        total = (long long)md_heal_union_count(lists, vol->n_bricks,
                                               md_vol_replica(vol));
    for (size_t i = 0; i < vol->n_bricks; i++)
        md_heal_brick_clear(&lists[i]);
    free(lists);
    free(is_asked);
    return total;
}


/* The daemon lines of `heal VOL status`: one per node with bricks. */
static void
md_heal_nodes_show(const struct md_volume *vol,
                   const struct md_heal_node *v, size_t n,
                   struct md_node *hs, struct md_result *r)
{
    struct md_node *nl = md_node_add(hs, "nodes", NULL);

    nl->is_list = true;
    for (size_t i = 0; i < n; i++) {
        const struct md_heal_node *hn = &v[i];
        struct md_node *nn = md_node_add(nl, "node", NULL);
        const char *state = hn->status != 0 ? hn->why
                            : hn->pid != 0 ? "running"
                            : md_heal_is_enabled(vol) ? "not running"
                                                      : "disabled";

        md_sbuf_printf(&r->text, "Self-heal daemon on %s%s: %s\n",
                       hn->host, hn->is_local ? " (this node)" : "", state);
        md_node_add(nn, "hostname", hn->host);
        md_node_add(nn, "isLocal", hn->is_local ? "1" : "0");
        md_node_add(nn, "status", state);
        md_node_addf(nn, "daemonPid", "%ld", (long)hn->pid);
        if (hn->status != 0)
            continue;
        md_node_addf(nn, "etaSeconds", "%lld", hn->p.eta_seconds);
        md_heal_figures_show(md_heal_node_crawl(hn), &hn->p, nn);
    }
    md_sbuf_printf(&r->text, "\n");
}


static void
md_heal_cmd_status(struct md_state *st, const struct md_volume *vol,
                   struct md_result *r)
{
    struct md_node *hs = md_node_add(r->root, "healStatus", NULL);
    struct md_node *bl;
    struct md_heal_node *nodes = NULL;
    struct md_heal_sum sum;
    uint64_t total = 0;
    size_t n_nodes = 0, n_rebuilding = 0;
    struct md_heal_peers hp = {0};
    struct md_heal_brick *hbs = calloc(vol->n_bricks, sizeof(*hbs));
    char b1[32], b2[32], b3[32], eta[32];
    int rc;

    rc = hbs == NULL ? -ENOMEM
                     : md_heal_nodes_gather(st, vol, &hp, &nodes, &n_nodes);
    if (rc != 0) {
        free(hbs);
        md_heal_peers_clear(&hp);
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume heal %s status: %s",
                       vol->name, strerror(-rc));
        return;
    }
    md_heal_nodes_sum(nodes, n_nodes, &sum);
    md_node_add(hs, "volName", vol->name);
    md_node_addf(hs, "daemonPid", "%ld", (long)md_heal_pid(st, vol->name));
    md_heal_nodes_show(vol, nodes, n_nodes, hs, r);
    /* This node's indexes are named in full (the listing is read
     * anyway); another node's as one reply holds. */
    md_heal_bricks_get(st, vol, MGMT_HEAL_NAMES_GFID, MGMT_OUTPUT_MAX / 2,
                       MD_HEAL_UNION_BYTES, &hp, hbs);
    bl = md_node_add(hs, "bricks", NULL);
    bl->is_list = true;
    for (size_t i = 0; i < vol->n_bricks; i++) {
        const struct md_brick *b = &vol->bricks[i];
        struct md_node *bn = md_node_add(bl, "brick", NULL);
        struct md_heal_brick *hb = &hbs[i];

        md_node_addf(bn, "name", "%s:%s", b->host, b->path);
        md_sbuf_printf(&r->text, "Brick %s:%s\n", b->host, b->path);
        if (hb->status != 0) {
            const char *status = md_heal_status(st, vol, b, hb);

            n_rebuilding += hb->status == -EBUSY;
            md_sbuf_printf(&r->text, "Status: %s\n\n", status);
            md_node_add(bn, "status", status);
            md_node_add(bn, "entriesLeft", "-");
        } else {
            md_sbuf_printf(&r->text, "Entries left: %" PRIu64 "\n\n",
                           hb->n);
            md_node_addf(bn, "entriesLeft", "%" PRIu64, hb->n);
        }
    }
    /* Every good copy of an object lists it in its brick's index (with
     * one brick of a replica 3 set down, both others do), and each
     * node's daemon what it found: a set counts its objects once, not
     * once per copy or per node (doc/self-heal.md, "Totals"). */
    total = md_heal_union_count(hbs, vol->n_bricks, md_vol_replica(vol));
    sum.p.split_brain = md_heal_lists_total(st, vol, MGMT_PROC_HEAL_SPLIT,
                                            hbs, sum.p.split_brain, &hp);
    sum.p.waiting = md_heal_lists_total(st, vol, MGMT_PROC_HEAL_WAITING,
                                        hbs, sum.p.waiting, &hp);
    for (size_t i = 0; i < vol->n_bricks; i++)
        md_heal_brick_clear(&hbs[i]);
    free(hbs);
    md_heal_peers_clear(&hp);
    sum.p.pending_bytes = md_heal_nodes_bytes_left(vol, nodes, n_nodes);
    md_heal_bytes((uint64_t)(sum.p.pending_bytes > 0 ? sum.p.pending_bytes
                                                     : 0), b1, sizeof(b1));
    md_heal_bytes((uint64_t)(sum.p.healed_bytes > 0 ? sum.p.healed_bytes
                                                    : 0), b2, sizeof(b2));
    md_heal_bytes((uint64_t)sum.p.rate_bytes, b3, sizeof(b3));
    /* Nothing is left only when every node could say so, of every
     * brick. */
    if (total == 0 && sum.n_down == 0 && n_rebuilding == 0)
        snprintf(eta, sizeof(eta), "0 s (nothing left)");
    else if (sum.p.eta_seconds < 0 || !sum.p.is_read || n_rebuilding > 0)
        snprintf(eta, sizeof(eta), "unknown");
    else
        snprintf(eta, sizeof(eta), "%lld s", sum.p.eta_seconds);
    md_sbuf_printf(&r->text, "Total entries left: %" PRIu64 "\n"
                   "Data left: %s\nHealed: %lld entries, %s\n"
                   "Rate (last minute): %.1f entries/s, %s/s\n"
                   "In split-brain: %lld\nWaiting for a brick: %lld\n"
                   "ETA: %s\n", total, b1, sum.p.healed, b2, sum.p.rate, b3,
                   sum.p.split_brain, sum.p.waiting, eta);
    if (sum.n_down > 0)
        md_sbuf_printf(&r->text, "Nodes not answering: %zu (their bricks "
                       "and daemons are not counted)\n", sum.n_down);
    if (n_rebuilding > 0)
        md_sbuf_printf(&r->text, "Heal indexes being rebuilt: %zu (their "
                       "bricks are not counted until done)\n",
                       n_rebuilding);
    md_node_addf(hs, "entriesLeft", "%" PRIu64, total);
    md_node_addf(hs, "etaSeconds", "%lld",
                 total == 0 && sum.n_down == 0 && n_rebuilding == 0
                     ? 0 : n_rebuilding > 0 ? -1 : sum.p.eta_seconds);
    md_node_addf(hs, "nodesDown", "%zu", sum.n_down);
    md_node_addf(hs, "indexesRebuilding", "%zu", n_rebuilding);
    md_heal_figures_show(sum.crawl, &sum.p, hs);
    md_heal_crawl_line(sum.crawl, &sum.p, r);
    md_heal_nodes_free(nodes, n_nodes);
}


/* heal VOL enable|disable: `volume set VOL cluster.self-heal-daemon`,
 * through the same path (a transaction when there are peers). */
static void
md_heal_toggle(struct md_state *st, const struct md_volume *vol,
               bool is_on, struct md_result *r)
{
    char name[MD_VOLNAME_MAX + 1];
    char *argv[] = {"volume", "set", name, "cluster.self-heal-daemon",
                    is_on ? "on" : "off", NULL};

    snprintf(name, sizeof(name), "%s", vol->name);
    md_cmd_run(st, 5, argv, r);
    if (r->ret != MD_EXIT_OK)
        return;
    md_sbuf_clear(&r->text);
    md_sbuf_printf(&r->text, "%s heal on volume %s has been successful \n",
                   is_on ? "Enable" : "Disable", name);
}


bool
md_heal_is_txn(int argc, char **argv)
{
    return argc == 3 || (argc == 4 && strcmp(argv[3], "full") == 0);
}


/* GlusterFS's first words when heal VOL [full] fails. */
static const char *
md_heal_what(int argc, char **argv)
{
    return argc > 3 && strcmp(argv[3], "full") == 0
           ? "Launching heal operation to perform full self heal"
           : "Launching heal operation to perform index self heal";
}


/* The volume of `heal VOL ...`: it exists, is replicated and, when
 * is_started, started; else NULL with r failed. */
static struct md_volume *
md_heal_vol(struct md_state *st, int argc, char **argv, bool is_started,
            struct md_result *r)
{
    const char *what = md_heal_what(argc, argv);
    struct md_volume *vol = md_volume_find(st, argv[2]);

    if (vol == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOENT, "%s on volume %s has been "
                       "unsuccessful:\nVolume %s does not exist", what,
                       argv[2], argv[2]);
        return NULL;
    }
    if (md_vol_replica(vol) < 2) {
        md_result_fail(r, MD_EXIT_FAIL, EINVAL, "%s on volume %s has been "
                       "unsuccessful:\nVolume %s is not of type replicate",
                       what, vol->name, vol->name);
        return NULL;
    }
    if (is_started && vol->status != MD_VOL_STARTED) {
        md_result_fail(r, MD_EXIT_FAIL, EINVAL, "%s on volume %s has been "
                       "unsuccessful:\nVolume %s is not started.", what,
                       vol->name, vol->name);
        return NULL;
    }
    return vol;
}


int
md_heal_precheck(struct md_state *st, int argc, char **argv,
                 struct md_result *r)
{
    return md_heal_vol(st, argc, argv, true, r) != NULL ? 0 : -EINVAL;
}


void
md_cmd_heal(struct md_state *st, int argc, char **argv, struct md_result *r)
{
    const char *sub = argc > 3 ? argv[3] : "";
    const char *what = md_heal_what(argc, argv);
    bool is_toggle = argc == 4 && (strcmp(sub, "enable") == 0 ||
                                   strcmp(sub, "disable") == 0);
    struct md_volume *vol;

    if (argc < 3) {
        md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: volume heal "
                       "<VOLNAME> [enable | disable | full | statistics "
                       "[heal-count] | info [summary | split-brain] | "
                       "status | split-brain ...]");
        return;
    }
    vol = md_heal_vol(st, argc, argv, !is_toggle, r);
    if (vol == NULL)
        return;
    if (is_toggle) {
        md_heal_toggle(st, vol, strcmp(sub, "enable") == 0, r);
        return;
    }
    if (md_heal_is_txn(argc, argv)) {
        vl_err_t err = {.msg = ""};
        int rc = md_heal_round(st, vol, argc == 4, &err);

        if (rc != 0) {
            md_result_fail(r, MD_EXIT_FAIL, -rc, "%s on volume %s has been "
                           "unsuccessful:\n%s", what, vol->name, err.msg);
            return;
        }
        md_sbuf_printf(&r->text, "%s on volume %s has been successful \n"
                       "Use heal info commands to check status.\n", what,
                       vol->name);
        md_node_add(r->root, "volHeal", NULL);
        return;
    }
    if (argc == 4 && strcmp(sub, "info") == 0)
        md_heal_info(st, vol, MD_HEAL_INFO, r);
    else if (argc == 5 && strcmp(sub, "info") == 0 &&
             strcmp(argv[4], "summary") == 0)
        md_heal_info(st, vol, MD_HEAL_SUMMARY, r);
    else if (argc == 5 && strcmp(sub, "statistics") == 0 &&
             strcmp(argv[4], "heal-count") == 0)
        md_heal_info(st, vol, MD_HEAL_COUNT, r);
    else if (argc == 4 && strcmp(sub, "status") == 0)
        md_heal_cmd_status(st, vol, r);
    else if (argc == 5 && strcmp(sub, "info") == 0 &&
             strcmp(argv[4], "split-brain") == 0)
        md_heal_split_info(st, vol, r);
    else if (strcmp(sub, "split-brain") == 0)
        md_cmd_split_brain(st, vol, argc, argv, r);
    else if (strcmp(sub, "statistics") == 0 && argc == 4)
        md_result_fail(r, MD_EXIT_FAIL, ENOTSUP, "volume heal %s %s: not "
                       "supported yet", vol->name, sub);
    else
        md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: volume heal "
                       "<VOLNAME> [enable | disable | full | statistics "
                       "[heal-count] | info [summary | split-brain] | "
                       "status | split-brain ...]");
}
