/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-groups: the supplementary groups of the process behind a request.
 *
 * The kernel's FUSE header carries uid, gid and pid only, but the bricks
 * check every request as the kernel would (features/access), groups
 * included: without them a user who reaches a file through a
 * supplementary group passes the kernel's default_permissions and is
 * then refused by the brick. So the bridge reads the "Groups:" line of
 * /proc/PID/status, as GlusterFS's FUSE bridge does, and caches it per
 * pid for gid-timeout: a cache hit is a mutex and a compare, a miss one
 * read of a small /proc file. A slot is trusted only for the uid and gid
 * it was read with (a pid reused by another user's process, or a
 * process that changed its ids, reads again); a process that calls
 * setgroups() is seen within gid-timeout. The first VL_MAX_GROUPS groups
 * are sent, as the RPC carries no more.
 *
 * Threads: the reader threads; lock guards the slots.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fuse.h"

/* /proc/PID/status is about 1.5 KiB; the Groups line comes early and a
 * longer read would only hold more groups than we send. */
#define VFUSE_STATUS_READ 8192


static uint64_t
vfuse_groups_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}


void
vfuse_groups_init(struct vfuse_groups *g)
{
    memset(g, 0, sizeof(*g));
    pthread_mutex_init(&g->lock, NULL);
}


void
vfuse_groups_fini(struct vfuse_groups *g)
{
    pthread_mutex_destroy(&g->lock);
}


int
vfuse_groups_parse(const char *status, uint32_t *groups, uint32_t max)
{
    const char *p = strstr(status, "\nGroups:");
    uint32_t n = 0;

    if (strncmp(status, "Groups:", 7) == 0)
        p = status;
    else if (p != NULL)
        p++;
    else
        return -ENOENT;
    p += 7;
    while (n < max) {
        char *end;
        unsigned long v;

        while (*p == ' ' || *p == '\t')
            p++;
        if (*p < '0' || *p > '9')
            break; /* end of line, or of the text read */
        errno = 0;
        v = strtoul(p, &end, 10);
        if (errno != 0 || v > UINT32_MAX)
            return -EINVAL;
        groups[n++] = (uint32_t)v;
        p = end;
    }
    return (int)n;
}


/* Reads pid's groups; the count, or -errno (the process is gone: the
 * request goes with no supplementary groups, as before). */
static int
vfuse_groups_read(uint32_t pid, uint32_t *groups, uint32_t max)
{
    char path[64];
    char *buf;
    ssize_t n;
    int fd;
    int rc;

    snprintf(path, sizeof(path), "/proc/%u/status", pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    buf = malloc(VFUSE_STATUS_READ + 1);
    if (buf == NULL) {
        close(fd);
        return -ENOMEM;
    }
    n = read(fd, buf, VFUSE_STATUS_READ);
    rc = n < 0 ? -errno : 0;
    close(fd);
    if (rc == 0) {
        buf[n] = '\0';
        rc = vfuse_groups_parse(buf, groups, max);
    }
    free(buf);
    return rc;
}


void
vfuse_groups_fill(struct vfuse_groups *g, uint64_t timeout_ms,
                  struct vl_caller *c)
{
    struct vfuse_groups_slot *s;
    uint64_t now;
    uint32_t tmp[VL_MAX_GROUPS];
    int n;

    c->n_groups = 0;
    if (c->pid == 0)
        return; /* the kernel's own (writeback, release): no process */
    s = &g->slot[(uint32_t)c->pid % VFUSE_GROUPS_SLOTS];
    now = vfuse_groups_now_ms();
    pthread_mutex_lock(&g->lock);
    if (s->pid == (uint32_t)c->pid && s->uid == c->uid && s->gid == c->gid
        && now < s->expires_ms) {
        c->n_groups = s->n;
        memcpy(c->groups, s->groups, s->n * sizeof(s->groups[0]));
        pthread_mutex_unlock(&g->lock);
        atomic_fetch_add_explicit(&g->n_hits, 1, memory_order_relaxed);
        return;
    }
    pthread_mutex_unlock(&g->lock);
    /* Read outside the lock: the other reader threads go on. */
    n = vfuse_groups_read((uint32_t)c->pid, tmp, VL_MAX_GROUPS);
    atomic_fetch_add_explicit(&g->n_reads, 1, memory_order_relaxed);
    if (n < 0)
        return;
    c->n_groups = (uint32_t)n;
    memcpy(c->groups, tmp, (size_t)n * sizeof(tmp[0]));
    if (timeout_ms == 0)
        return;
    pthread_mutex_lock(&g->lock);
    s->pid = (uint32_t)c->pid;
    s->uid = c->uid;
    s->gid = c->gid;
    s->n = (uint32_t)n;
    memcpy(s->groups, tmp, (size_t)n * sizeof(tmp[0]));
    s->expires_ms = now + timeout_ms;
    pthread_mutex_unlock(&g->lock);
}
