/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heal-nodes: the self-heal daemons of a volume across the pool, for
 * `volume heal VOL status` (cmd-heal.c). Every node with bricks of a
 * replicated volume runs one daemon for it (heal.c), which heals what
 * the indexes of that node's bricks list and writes its progress to
 * RUN/heal/VOL.state. This node's file is read here; another node's is
 * asked of its mortard (HEAL_PROGRESS, heal-peers.c), once per node.
 *
 * The sum: the daemons work at once, so entries, bytes, rates and counts
 * add up and the ETA is the longest one; it is unknown when a node's is
 * (or the node did not answer). The full crawl shown is the most
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


/* This node's daemon of vol into hn. */
static void
md_heal_node_local(const struct md_state *st, const struct md_volume *vol,
                   struct md_heal_node *hn)
{
    char path[4200];

    hn->status = 0;
    hn->pid = md_heal_pid(st, vol->name);
    md_heal_path(st, vol->name, "full", path, sizeof(path));
    hn->is_full_asked = access(path, F_OK) == 0;
    md_heal_progress_read(st, vol->name, &hn->p);
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
        else
            md_heal_node_remote(st, vol, hp, &v[n]);
        n++;
    }
    *out = v;
    *n_out = n;
    return 0;
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
