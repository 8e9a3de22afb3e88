/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * statedump: writes the state of every registered graph as text, in the
 * format documented in doc/statedump.md; vl_statedump_file makes a whole
 * dump file of it between GlusterFS's DUMP-START-TIME and DUMP-END-TIME
 * lines, published by rename so that a file by its name is complete.
 *
 * Threads: holds the graph registry lock for the whole dump (graphs cannot
 * be freed meanwhile) and each graph's pend_lock while listing requests.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "core.h"


static void
vl_dump_options(vl_xlator_t *xl, FILE *out)
{
    const vl_option_t *opt;
    char small[256];

    if (xl->cls->options == NULL)
        return;
    for (opt = xl->cls->options; opt->key != NULL; opt++) {
        int n = vl_option_format(opt, xl->conf, small, sizeof(small));
        char *big = NULL;
        const char *v = small;

        if (n >= (int)sizeof(small)) {
            big = malloc((size_t)n + 1);
            if (big != NULL) {
                vl_option_format(opt, xl->conf, big, (size_t)n + 1);
                v = big;
            }
        }
        fprintf(out, "option.%s=%s\n", opt->key, v);
        free(big);
    }
}


static void
vl_dump_xlator(vl_xlator_t *xl, FILE *out)
{
    size_t i;

    fprintf(out, "[xlator %s]\n", xl->name);
    fprintf(out, "graph=%" PRIu64 "\n", xl->graph->id);
    fprintf(out, "type=%s\n", xl->cls->type);
    vl_dump_options(xl, out);
    fprintf(out, "children=");
    for (i = 0; i < xl->n_children; i++)
        fprintf(out, "%s%s", i > 0 ? "," : "", xl->children[i]->name);
    fprintf(out, "\nis_up=%d\n", xl->is_up ? 1 : 0);
    vl__mem_acct_dump(xl->mem_acct, out);
    fprintf(out, "\n");
}


static uint64_t
vl_age_ms(const struct timespec *start, const struct timespec *now)
{
    int64_t ms = (int64_t)(now->tv_sec - start->tv_sec) * 1000
                 + (now->tv_nsec - start->tv_nsec) / 1000000;

    return ms < 0 ? 0 : (uint64_t)ms;
}


static void
vl_dump_pending(vl_graph_t *graph, FILE *out)
{
    struct vl__graph_core *core = vl__graph_core(graph);
    struct timespec now;
    vl_req_t *req;

    clock_gettime(CLOCK_MONOTONIC, &now);
    fprintf(out, "[pending]\ngraph=%" PRIu64 "\n", graph->id);
    pthread_mutex_lock(&core->pend_lock);
    for (req = core->pend_head; req != NULL; req = vl__req_core(req)->next)
        fprintf(out, "id=%" PRIu64 " fop=%s age_ms=%" PRIu64
                " wound_from=%s wound_to=%s\n", req->id,
                vl_fop_name(req->op), vl_age_ms(&req->start, &now),
                req->wound_from != NULL ? req->wound_from->name : "-",
                req->xl != NULL ? req->xl->name : "-");
    pthread_mutex_unlock(&core->pend_lock);
    fprintf(out, "\n");
}


/* Where the graph's cached data is: each caching translator's bytes and
 * limit, then the sums (the limits add up to at most the client's
 * performance.cache-size when mortard generated the volfile). */
static void
vl_dump_caches(vl_graph_t *graph, FILE *out)
{
    uint64_t sum_bytes = 0, sum_limit = 0;

    for (size_t i = graph->n_xls; i-- > 0;) {
        vl_xlator_t *xl = graph->xls[i];
        uint64_t bytes = 0, limit = 0;

        if (xl->cls->cache_usage == NULL)
            continue;
        xl->cls->cache_usage(xl, &bytes, &limit);
        fprintf(out, "cache.%s.bytes=%" PRIu64 "\n", xl->name, bytes);
        fprintf(out, "cache.%s.limit=%" PRIu64 "\n", xl->name, limit);
        sum_bytes += bytes;
        sum_limit += limit;
    }
    fprintf(out, "cache.bytes=%" PRIu64 "\n", sum_bytes);
    fprintf(out, "cache.limit=%" PRIu64 "\n", sum_limit);
}


static void
vl_dump_graph(vl_graph_t *graph, void *arg)
{
    FILE *out = arg;
    size_t i;

    fprintf(out, "[graph %" PRIu64 "]\n", graph->id);
    fprintf(out, "top=%s\n", graph->top->name);
    fprintf(out, "xlators=%zu\n", graph->n_xls);
    fprintf(out, "pending=%zu\n", vl_graph_pending(graph));
    if (graph->itable != NULL) {
        fprintf(out, "inodes.active=%zu\n",
                vl_inode_table_active(graph->itable));
        fprintf(out, "inodes.lru=%zu\n", vl_inode_table_lru(graph->itable));
        fprintf(out, "inodes.buckets=%zu\n",
                vl_inode_table_buckets(graph->itable));
        fprintf(out, "inodes.lru_limit=%zu\n",
                vl_inode_table_lru_limit(graph->itable));
    }
    vl_dump_caches(graph, out);
    fprintf(out, "\n");
    /* Top first: xls is children first. */
    for (i = graph->n_xls; i-- > 0;)
        vl_dump_xlator(graph->xls[i], out);
    vl_dump_pending(graph, out);
    for (i = graph->n_xls; i-- > 0;) {
        vl_xlator_t *xl = graph->xls[i];

        if (xl->cls->dump == NULL)
            continue;
        fprintf(out, "[dump %s]\n", xl->name);
        xl->cls->dump(xl, out);
        fprintf(out, "\n");
    }
}


void
vl_statedump_write(FILE *out)
{
    fprintf(out, "[core]\n");
    vl__mem_acct_dump(NULL, out);
    fprintf(out, "\n");
    vl__graph_foreach(vl_dump_graph, out);
    fflush(out);
}


/* GlusterFS's marker time: "YYYY-MM-DD HH:MM:SS.uuuuuu", UTC. */
static void
vl_dump_marker(FILE *out, const char *what)
{
    struct timeval tv;
    struct tm tm;
    char when[32] = "";

    gettimeofday(&tv, NULL);
    if (gmtime_r(&tv.tv_sec, &tm) != NULL)
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
    fprintf(out, "%s: %s.%06ld\n", what, when, (long)tv.tv_usec);
}


int
vl_statedump_file(const char *dir, const char *name,
                  void (*extra)(FILE *out, void *arg), void *arg,
                  char *path, size_t len)
{
    char tmp[4096];
    FILE *out;
    int fd, rc = 0;

    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return -errno;
    snprintf(path, len, "%s/%s.%ld.dump.%lld", dir, name, (long)getpid(),
             (long long)time(NULL));
    /* Hidden, so no reader's NAME.PID.* pattern sees it half written. */
    if (snprintf(tmp, sizeof(tmp), "%s/.%s.%ld.dump.XXXXXX", dir, name,
                 (long)getpid()) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return -errno;
    /* mkostemp makes it 0600; dumps were always readable (0644). */
    (void)fchmod(fd, 0644);
    out = fdopen(fd, "w");
    if (out == NULL) {
        rc = -errno;
        close(fd);
        unlink(tmp);
        return rc;
    }
    vl_dump_marker(out, "DUMP-START-TIME");
    fprintf(out, "\n");
    vl_statedump_write(out);
    if (extra != NULL)
        extra(out, arg);
    vl_dump_marker(out, "DUMP-END-TIME");
    if (fflush(out) != 0 || ferror(out) || fsync(fileno(out)) != 0)
        rc = errno != 0 ? -errno : -EIO;
    if (fclose(out) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc != 0)
        unlink(tmp);
    return rc;
}
