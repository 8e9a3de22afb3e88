/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-fuse-null: requests per second through the FUSE reader path
 * (vfuse_process: the call made and pinned to the active graph, its
 * nodeid resolved, the handler run, the reply written and the call
 * ended), from 1 and 2 threads, with no kernel and no mount.
 *
 *   bench-fuse-null [n_requests_per_thread [null|getattr]]
 *
 * Two workloads, each a message of the root (FUSE_ROOT_ID):
 *   null:    GETXATTR "security.capability" with the capability option
 *            off, answered ENODATA by the bridge itself (fuse-entry.c):
 *            the cheapest request that still takes and drops the pin;
 *   getattr: GETATTR, wound to the leaf below (test/memfs, which answers
 *            at once under its own lock).
 * The graph is mount/fuse (conf parsed, init not run: no mount) over
 * test/memfs, set up the way tests/fuzz/fuzz-fuse.c does; each thread is
 * one struct vfuse_reader of a hand-made session whose replies go to
 * /dev/null. Messages carry pid 0, so no supplementary groups are read.
 *
 * Prints one line per workload and thread count: requests per second of
 * wall time, and per second of the process's CPU time (steadier on a
 * machine shared with other work). Naming a workload runs only that one
 * (under valgrind --tool=callgrind, two request counts give the
 * instructions per request, which no other load on the machine moves).
 * Built by `make check` (not run by it), or alone by `make -C
 * xlators/mount/fuse test/bench-fuse-null`; run it as
 *   xlators/mount/fuse/test/bench-fuse-null 2000000
 * from the build directory.
 */
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fuse.h"
#include "mount/fuse/test/mount-memfs.h"
#include "builtin.h"

/* Room for a message: header, payload, the xattr name. */
#define BENCH_MSG_MAX 256

struct bench {
    struct vfuse_session *sess; /* borrowed; the hand-made session */
    size_t n_requests;          /* per thread */
    const char *msg;            /* borrowed; the message each sends */
    size_t msg_len;             /* bytes at msg */
};

struct bench_thread {
    struct bench *b;       /* borrowed */
    struct vfuse_reader r; /* this thread's reader (owns its buf) */
    pthread_t tid;         /* the thread */
};

static const char bench_volfile[] =
    "volume leaf\n"
    "    type test/memfs\n"
    "end-volume\n"
    "volume top\n"
    "    type mount/fuse\n"
    "    option mountpoint /nonexistent/bench-fuse-null\n"
    "    option capability off\n"
    "    subvolumes leaf\n"
    "end-volume\n";


static void *
bench_run(void *arg)
{
    struct bench_thread *bt = arg;
    struct bench *b = bt->b;
    struct fuse_in_header hdr;

    for (size_t i = 0; i < b->n_requests; i++) {
        /* vfuse_process takes the message out of the reader's buffer,
         * as a reader thread's read(2) would have left it. */
        memcpy(bt->r.buf->data, b->msg, b->msg_len);
        memcpy(&hdr, b->msg, sizeof(hdr));
        hdr.unique = i + 1;
        memcpy(bt->r.buf->data, &hdr, sizeof(hdr));
        vfuse_process(&bt->r, b->msg_len);
    }
    return NULL;
}


static double
bench_now(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}


static void
bench_one(struct bench *b, const char *name, unsigned n_threads)
{
    struct bench_thread bt[2];
    double t0;
    double cpu0;
    double secs;
    double cpu_secs;
    size_t n_total = b->n_requests * n_threads;

    memset(bt, 0, sizeof(bt));
    for (unsigned i = 0; i < n_threads; i++) {
        bt[i].b = b;
        bt[i].r.sess = b->sess;
        bt[i].r.buf = vl_buf_new(b->sess->buf_size);
        if (bt[i].r.buf == NULL) {
            fprintf(stderr, "bench-fuse-null: out of memory\n");
            exit(1);
        }
    }
    t0 = bench_now(CLOCK_MONOTONIC);
    cpu0 = bench_now(CLOCK_PROCESS_CPUTIME_ID);
    for (unsigned i = 0; i < n_threads; i++) {
        if (pthread_create(&bt[i].tid, NULL, bench_run, &bt[i]) != 0) {
            fprintf(stderr, "bench-fuse-null: pthread_create failed\n");
            exit(1);
        }
    }
    for (unsigned i = 0; i < n_threads; i++)
        pthread_join(bt[i].tid, NULL);
    secs = bench_now(CLOCK_MONOTONIC) - t0;
    cpu_secs = bench_now(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    for (unsigned i = 0; i < n_threads; i++)
        vl_buf_unref(bt[i].r.buf);
    printf("%s threads=%u requests=%zu requests_per_s=%.0f "
           "requests_per_cpu_s=%.0f\n",
           name, n_threads, n_total, (double)n_total / secs,
           (double)n_total / cpu_secs);
}


/* Fills msg with a message of opcode for the root; returns its length. */
static size_t
bench_msg(char *msg, uint32_t opcode)
{
    struct fuse_in_header hdr;
    size_t len = sizeof(hdr);

    memset(msg, 0, BENCH_MSG_MAX);
    if (opcode == FUSE_GETXATTR) {
        struct fuse_getxattr_in in = {.size = 64};

        memcpy(msg + len, &in, sizeof(in));
        len += sizeof(in);
        memcpy(msg + len, VFUSE_XATTR_CAPS, sizeof(VFUSE_XATTR_CAPS));
        len += sizeof(VFUSE_XATTR_CAPS);
    } else {
        struct fuse_getattr_in in = {0};

        memcpy(msg + len, &in, sizeof(in));
        len += sizeof(in);
    }
    memset(&hdr, 0, sizeof(hdr));
    hdr.len = (uint32_t)len;
    hdr.opcode = opcode;
    hdr.nodeid = FUSE_ROOT_ID;
    memcpy(msg, &hdr, sizeof(hdr));
    return len;
}


int
main(int argc, char **argv)
{
    struct bench b = {.n_requests = 2000000};
    const char *only = NULL;
    struct vfuse_session sess;
    struct vfuse_priv priv;
    char msg[BENCH_MSG_MAX];
    vl_err_t err = {{0}};
    vl_volfile_t *vf;
    vl_graph_t *graph;
    vl_loop_t *loop;

    if (argc > 1)
        b.n_requests = strtoull(argv[1], NULL, 0);
    if (argc > 2)
        only = argv[2];
    vl_global_init();
    vl_log_set_level(VL_LOG_NONE);
    if (vl_registry_add(&xl_mount_fuse) != 0
        || vl_registry_add(&mount_memfs_class) != 0) {
        fprintf(stderr, "bench-fuse-null: registering the classes failed\n");
        return 1;
    }
    vf = vl_volfile_parse(bench_volfile, sizeof(bench_volfile) - 1, "bench",
                          &err);
    loop = vl_loop_new(1);
    if (vf == NULL || loop == NULL || vl_loop_start(loop) != 0) {
        fprintf(stderr, "bench-fuse-null: %s\n",
                err.msg[0] != '\0' ? err.msg : "setup failed");
        return 1;
    }
    graph = vl_graph_build(vf, loop, &err);
    vl_volfile_free(vf);
    if (graph == NULL) {
        fprintf(stderr, "bench-fuse-null: %s\n", err.msg);
        return 1;
    }

    /* The session and instance mount/fuse's init would have made, with
     * INIT answered (as tests/fuzz/fuzz-fuse.c sets them up). */
    memset(&sess, 0, sizeof(sess));
    memset(&priv, 0, sizeof(priv));
    pthread_mutex_init(&sess.lock, NULL);
    pthread_cond_init(&sess.cond, NULL);
    if (vfuse_table_init(&sess.table) != 0) {
        fprintf(stderr, "bench-fuse-null: out of memory\n");
        return 1;
    }
    vfuse_groups_init(&sess.groups);
    sess.fuse_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (sess.fuse_fd < 0) {
        perror("bench-fuse-null: /dev/null");
        return 1;
    }
    sess.buf_size = BENCH_MSG_MAX + VFUSE_HDR_ROOM;
    sess.active = &priv;
    sess.n_attached = 1;
    sess.is_init_done = true;
    sess.proto_minor = VFUSE_MINOR;
    sess.max_write = 128 * 1024;
    priv.xl = graph->top;
    priv.sess = &sess;
    priv.gen = graph->id;
    priv.root = vl_inode_table_root(graph->itable);
    priv.is_child_up = true;
    priv.is_ready_sent = true;
    pthread_mutex_init(&priv.lock, NULL);
    pthread_cond_init(&priv.cond, NULL);
    graph->top->priv = &priv;
    b.sess = &sess;
    b.msg = msg;

    if (only == NULL || strcmp(only, "null") == 0) {
        b.msg_len = bench_msg(msg, FUSE_GETXATTR);
        bench_one(&b, "null", 1);
        bench_one(&b, "null", 2);
    }
    if (only == NULL || strcmp(only, "getattr") == 0) {
        b.msg_len = bench_msg(msg, FUSE_GETATTR);
        bench_one(&b, "getattr", 1);
        bench_one(&b, "getattr", 2);
    }
    if (priv.n_inflight != 0) {
        fprintf(stderr, "bench-fuse-null: %zu calls not ended\n",
                (size_t)priv.n_inflight);
        return 1;
    }

    graph->top->priv = NULL;
    vl_inode_unref(priv.root);
    vfuse_pool_clear(&sess);
    vfuse_table_clear(&sess.table);
    vfuse_groups_fini(&sess.groups);
    close(sess.fuse_fd);
    pthread_cond_destroy(&priv.cond);
    pthread_mutex_destroy(&priv.lock);
    pthread_cond_destroy(&sess.cond);
    pthread_mutex_destroy(&sess.lock);
    vl_graph_free(graph);
    vl_loop_free(loop);
    return 0;
}
