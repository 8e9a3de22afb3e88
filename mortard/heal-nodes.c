/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heal-nodes: the self-heal daemons of a volume across the pool, for
 * `volume heal VOL status` (cmd-heal.c). Every node with bricks of a
 * replicated volume runs one daemon for it (heal.c), which heals what
 * the indexes of that node's bricks list and writes its progress to
 * RUN/heal/VOL.state. This node's file is read here; another node's is
 * asked of its mortard (HEAL_PROGRESS, heal-peers.c), once per node,
 * every node at the same time.
 *
 * The sum: the daemons work at once, so rates and counts add up and the
 * ETA is the longest one; it is unknown when a node's is (or the node
 * did not answer). The data bytes left are not summed over bricks: every
 * good copy of an object lists it, so each replica set counts the
 * largest figure among its bricks (md_heal_nodes_bytes_left; cmd-heal.c
 * counts the entries left the same way). The full crawl shown is the most
 * advanced state of any node (running, then requested, then finished,
 * then never run), with the objects of every node summed and the latest
 * finish.
 * Threads: the worker thread with md_state.lock held; md_heal_nodes_sum
 * is a pure function of its arguments.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mortard.h"


/* A daemon's per-brick lines, by N (brickN.path, brickN.bytes). */
struct md_heal_bricks_reading {
    struct md_heal_brick_left *v; /* owned until taken; by N */
    size_t n;
};


/* This node's daemon of vol into hn. */
static void
md_heal_node_local(const struct md_state *st, const struct md_volume *vol,
                   struct md_heal_node *hn)
{
    char path[4200], *text = NULL;

    hn->status = 0;
    hn->pid = md_heal_pid(st, vol->name);
    md_heal_path(st, vol->name, "full", path, sizeof(path));
    hn->is_full_asked = access(path, F_OK) == 0;
    md_heal_path(st, vol->name, "state", path, sizeof(path));
    if (md_read_file(path, &text, NULL) != 0) {
        memset(&hn->p, 0, sizeof(hn->p));
        hn->p.eta_seconds = -1;
        return;
    }
    md_heal_progress_parse(text, path, &hn->p);
    (void)md_heal_node_bricks_parse(hn, text, path);
    free(text);
}


static int
md_heal_bricks_kv(const char *key, const char *value, int line, void *arg,
                  vl_err_t *err)
{
    struct md_heal_bricks_reading *rd = arg;
    struct md_heal_brick_left *b;
    char *end = NULL, buf[4096];
    unsigned long i;

    (void)line;
    (void)err;
    if (strncmp(key, "brick", 5) != 0)
        return 0;
    errno = 0;
    i = strtoul(key + 5, &end, 10);
    /* The daemon has at most 64 bricks (FSD_HEAL_BRICKS_MAX): a bigger
     * N is no line of it. */
    if (end == key + 5 || *end != '.' || errno != 0 || i >= 1024)
        return 0;
    if (i >= rd->n) {
        b = realloc(rd->v, (i + 1) * sizeof(*b));
        if (b == NULL)
            return -ENOMEM;
        memset(b + rd->n, 0, (i + 1 - rd->n) * sizeof(*b));
        rd->v = b;
        rd->n = i + 1;
    }
    b = &rd->v[i];
    if (strcmp(end, ".path") == 0 && md_kv_unescape(value, buf, sizeof(buf))
        && b->path == NULL) {
        b->path = strdup(buf);
        if (b->path == NULL)
            return -ENOMEM;
    } else if (strcmp(end, ".bytes") == 0) {
        b->bytes = strtoll(value, NULL, 10);
    }
    return 0;
}


int
md_heal_node_bricks_parse(struct md_heal_node *hn, const char *text,
                          const char *path)
{
    struct md_heal_bricks_reading rd = {0};
    vl_err_t err = {.msg = ""};
    size_t o = 0;
    int rc = md_kv_parse(text, path, md_heal_bricks_kv, &rd, &err);

    /* Only the lines with a path say which brick they are. */
    for (size_t i = 0; i < rd.n; i++) {
        if (rc != 0 || rd.v[i].path == NULL) {
            free(rd.v[i].path);
            continue;
        }
        rd.v[o++] = rd.v[i];
    }
    if (rc != 0 || o == 0) {
        free(rd.v);
        return rc == -ENOMEM ? rc : 0;
    }
    hn->bricks = rd.v;
    hn->n_bricks = o;
    return 0;
}


void
md_heal_nodes_free(struct md_heal_node *v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++) {
        for (size_t j = 0; j < v[i].n_bricks; j++)
            free(v[i].bricks[j].path);
        free(v[i].bricks);
    }
    free(v);
}


int
md_heal_nodes_gather(struct md_state *st, const struct md_volume *vol,
                     struct md_heal_peers *hp, struct md_heal_node **out,
                     size_t *n_out)
{
    struct md_heal_node *v = calloc(vol->n_bricks + 1, sizeof(*v));
    size_t n = 0;

    if (v == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < vol->n_bricks; i++) {
        const struct md_brick *b = &vol->bricks[i];
        bool is_seen = false;

        for (size_t j = 0; j < n && !is_seen; j++)
            is_seen = strcmp(v[j].host, b->host) == 0;
        if (is_seen)
            continue;
        v[n].host = b->host;
        v[n].is_local = md_brick_is_local(st, b);
        if (v[n].is_local)
            md_heal_node_local(st, vol, &v[n]);
        n++;
    }
    md_heal_nodes_remote(st, vol, hp, v, n);
    *out = v;
    *n_out = n;
    return 0;
}


/* Brick b's data bytes left as its node's daemon counts them; false
 * when the node did not answer or gave no figure for b. */
static bool
md_heal_brick_bytes(const struct md_brick *b, const struct md_heal_node *v,
                    size_t n, long long *out)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].status != 0 || strcmp(v[i].host, b->host) != 0)
            continue;
        for (size_t j = 0; j < v[i].n_bricks; j++)
            if (strcmp(v[i].bricks[j].path, b->path) == 0) {
                *out = v[i].bricks[j].bytes;
                return true;
            }
    }
    return false;
}


long long
md_heal_nodes_bytes_left(const struct md_volume *vol,
                         const struct md_heal_node *v, size_t n)
{
    unsigned replica = md_vol_replica(vol);
    long long total = 0, set_max = 0, bytes;

    for (size_t i = 0; i < n; i++)
        if (v[i].status == 0 && v[i].n_bricks == 0)
            total += v[i].p.pending_bytes; /* no per-brick figures */
    for (size_t i = 0; i < vol->n_bricks; i++) {
        if (md_heal_brick_bytes(&vol->bricks[i], v, n, &bytes)
            && bytes > set_max)
            set_max = bytes;
        if (i % replica == replica - 1 || i + 1 == vol->n_bricks) {
            total += set_max;
            set_max = 0;
        }
    }
    return total;
}


enum md_heal_crawl
md_heal_node_crawl(const struct md_heal_node *hn)
{
    if (hn->p.full_crawl != 0)
        return MD_HEAL_CRAWL_RUNNING;
    if (hn->is_full_asked)
        return MD_HEAL_CRAWL_REQUESTED; /* not picked up by the daemon yet */
    if (hn->p.crawl_done_at > 0)
        return MD_HEAL_CRAWL_FINISHED;
    return MD_HEAL_CRAWL_NEVER;
}


void
md_heal_nodes_sum(const struct md_heal_node *v, size_t n,
                  struct md_heal_sum *sum)
{
    struct md_heal_progress *s = &sum->p;
    bool is_eta_known = true;

    memset(sum, 0, sizeof(*sum));
    s->is_read = true;
    for (size_t i = 0; i < n; i++) {
        const struct md_heal_progress *p = &v[i].p;
        enum md_heal_crawl crawl;

        if (v[i].status != 0) {
            sum->n_down++;
            is_eta_known = false;
            continue;
        }
        s->is_read = s->is_read && p->is_read;
        s->healed += p->healed;
        s->healed_bytes += p->healed_bytes;
        s->pending += p->pending;
        s->pending_bytes += p->pending_bytes;
        s->split_brain += p->split_brain;
        s->waiting += p->waiting;
        s->failed += p->failed;
        s->crawl_visited += p->crawl_visited;
        s->crawl_healed += p->crawl_healed;
        s->crawl_failed += p->crawl_failed;
        s->full_crawl += p->full_crawl != 0;
        s->rate += p->rate;
        s->rate_bytes += p->rate_bytes;
        if (p->updated > s->updated)
            s->updated = p->updated;
        if (p->crawl_done_at > s->crawl_done_at)
            s->crawl_done_at = p->crawl_done_at;
        if (!p->is_read || p->eta_seconds < 0)
            is_eta_known = false;
        else if (p->eta_seconds > s->eta_seconds)
            s->eta_seconds = p->eta_seconds;
        crawl = md_heal_node_crawl(&v[i]);
        if (crawl > sum->crawl)
            sum->crawl = crawl;
    }
    if (!is_eta_known)
        s->eta_seconds = -1;
}
