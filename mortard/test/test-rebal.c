/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the cluster-wide view of rebalance tasks (rebal-peer.c,
 * rebalance.c): a node's view read from its state file (none, completed
 * with counters, a run that died while running, a process lost before it
 * wrote state), which node's view counts (a running one anywhere, then
 * this node, then a peer), the peers' rows of a gather (a disconnected
 * peer is not asked; a connected one that refuses the connection gets
 * the reason), and that a stop naming an unknown node is refused.
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mortard/mortard.h"

static char tmpdir[] = "/tmp/test-rebal.XXXXXX";


static struct md_state *
new_state(void)
{
    struct md_state *st = calloc(1, sizeof(*st));
    char dir[512];

    assert_non_null(st);
    pthread_mutex_init(&st->lock, NULL);
    st->run_dir = strdup(tmpdir);
    st->log_dir = strdup(tmpdir);
    snprintf(dir, sizeof(dir), "%s/rebalance", tmpdir);
    (void)mkdir(dir, 0755);
    return st;
}


static void
free_state(struct md_state *st)
{
    while (st->peers != NULL) {
        struct md_peer *p = st->peers;

        st->peers = p->next;
        free(p->host);
        free(p);
    }
    free(st->run_dir);
    free(st->log_dir);
    free(st);
}


static void
write_file(const char *name, const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/rebalance/%s", tmpdir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}


static void
remove_file(const char *name)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/rebalance/%s", tmpdir, name);
    (void)unlink(path);
}


static void
add_peer(struct md_state *st, const char *host, uint16_t port,
         bool is_connected)
{
    struct md_peer *p = calloc(1, sizeof(*p)), **tail = &st->peers;

    assert_non_null(p);
    p->host = strdup(host);
    p->port = port;
    p->is_connected = is_connected;
    while (*tail != NULL)
        tail = &(*tail)->next;
    *tail = p;
}


/* A loopback port nothing listens on (bound, then closed). */
static uint16_t
closed_port(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    uint16_t port;

    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    port = ntohs(sa.sin_port);
    close(fd);
    return port;
}


static void
test_view_local(void **state)
{
    struct md_state *st = new_state();
    struct md_rebal_view w;

    (void)state;
    md_rebal_view_local(st, "v0", false, &w);
    assert_string_equal(w.node, "localhost");
    assert_string_equal(w.status, "");
    assert_false(w.is_running);

    write_file("v0.state", "status=completed\npid=4242\nstarted=100\n"
               "updated=130\nscanned_files=50\nscanned_dirs=5\n"
               "moved_files=20\nmoved_bytes=2048\nfailed_files=1\n"
               "skipped_files=2\n");
    md_rebal_view_local(st, "v0", false, &w);
    assert_string_equal(w.status, "completed");
    assert_false(w.is_running);
    assert_false(w.died_running);
    assert_int_equal(w.moved_files, 20);
    assert_int_equal(w.moved_bytes, 2048);
    assert_int_equal(w.scanned_files, 50);
    assert_int_equal(w.scanned_dirs, 5);
    assert_int_equal(w.failed_files, 1);
    assert_int_equal(w.skipped_files, 2);
    assert_int_equal(w.run_seconds, 30);
    assert_int_equal(w.started, 100);
    assert_int_equal(w.eta_seconds, -1);
    /* The remove-brick migration has a state of its own. */
    md_rebal_view_local(st, "v0", true, &w);
    assert_string_equal(w.status, "");

    write_file("v0.state", "status=running\npid=4242\nstarted=100\n"
               "updated=110\nerror=brick2: No space left on device\n");
    md_rebal_view_local(st, "v0", false, &w);
    assert_string_equal(w.status, "failed");
    assert_true(w.died_running);
    assert_string_equal(w.error, "brick2: No space left on device");
    remove_file("v0.state");

    /* Spawned, gone, no state written: failed, with its log's reason. */
    write_file("v1.spawn", "4243\n");
    /* log_dir is run_dir here: the log sits beside the state. */
    write_file("v1.log", "starting\nvolfile v1: no such volume\n\n");
    md_rebal_view_local(st, "v1", false, &w);
    assert_string_equal(w.status, "failed");
    assert_true(w.is_lost);
    assert_string_equal(w.error, "volfile v1: no such volume");
    remove_file("v1.spawn");
    remove_file("v1.log");
    free_state(st);
}


static void
test_views_pick(void **state)
{
    struct md_rebal_view v[3];
    struct md_rebal_views views = {.v = v, .n = 3};

    (void)state;
    memset(v, 0, sizeof(v));
    assert_null(md_rebal_views_pick(&views));
    snprintf(v[2].status, sizeof(v[2].status), "stopped");
    v[2].started = 200;
    assert_ptr_equal(md_rebal_views_pick(&views), &v[2]);
    /* An older run here does not hide a later one on a peer... */
    snprintf(v[0].status, sizeof(v[0].status), "completed");
    v[0].started = 100;
    assert_ptr_equal(md_rebal_views_pick(&views), &v[2]);
    /* ...and this node wins among equals. */
    v[0].started = 200;
    assert_ptr_equal(md_rebal_views_pick(&views), &v[0]);
    snprintf(v[1].status, sizeof(v[1].status), "in progress");
    v[1].is_running = true;
    assert_ptr_equal(md_rebal_views_pick(&views), &v[1]);
}


/* What a peer's REBAL_STATE text must be before it replaces this node's
 * state file: an unfinished run's, with a cursor. */
static void
test_state_check(void **state)
{
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_int_equal(md_rebal_state_check("status=stopped\npid=7\n"
                                          "cursor=/d1\nmode=rebalance\n",
                                          &err), 0);
    assert_int_equal(md_rebal_state_check("status=running\ncursor=\n", &err),
                     0);
    assert_int_equal(md_rebal_state_check("status=completed\ncursor=/\n",
                                          &err), -EINVAL);
    assert_non_null(strstr(err.msg, "not an unfinished run"));
    assert_int_equal(md_rebal_state_check("status=failed\ncursor=/\n", &err),
                     -EINVAL);
    assert_int_equal(md_rebal_state_check("status=stopped\n", &err), -EINVAL);
    assert_int_equal(md_rebal_state_check("cursor=/a\n", &err), -EINVAL);
    assert_int_equal(md_rebal_state_check("", &err), -EINVAL);
    assert_int_equal(md_rebal_state_check("garbage\n", &err), -EINVAL);
}


static void
test_gather_peers(void **state)
{
    struct md_state *st = new_state();
    struct md_rebal_views views = {0};
    vl_err_t err = {.msg = ""};

    (void)state;
    write_file("v0.state", "status=stopped\nstarted=1\nupdated=2\n");
    add_peer(st, "127.0.0.1", closed_port(), true);
    add_peer(st, "127.0.0.2", 1, false);
    assert_int_equal(md_rebal_gather(st, "v0", false, &views), 0);
    assert_int_equal(views.n, 3);
    assert_string_equal(views.v[0].node, "localhost");
    assert_string_equal(views.v[0].status, "stopped");
    assert_string_equal(views.v[0].err, "");
    assert_string_equal(views.v[1].node, "127.0.0.1");
    assert_non_null(strstr(views.v[1].err, "Connection refused"));
    assert_string_equal(views.v[1].status, "");
    assert_string_equal(views.v[2].node, "127.0.0.2");
    assert_string_equal(views.v[2].err, MD_REBAL_DISCONNECTED);
    /* Only this node has a task: it is the one that counts. */
    assert_ptr_equal(md_rebal_views_pick(&views), &views.v[0]);
    md_rebal_views_free(&views);
    assert_null(views.v);

    assert_int_equal(md_rebal_stop_peer(st, "v0", false, "127.0.0.9", &err),
                     -ENOENT);
    assert_non_null(strstr(err.msg, "not a peer"));
    remove_file("v0.state");
    free_state(st);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view_local),
        cmocka_unit_test(test_views_pick),
        cmocka_unit_test(test_gather_peers),
        cmocka_unit_test(test_state_check),
    };
    int rc;

    cmocka_set_message_output(CM_OUTPUT_TAP);
    vl_global_init();
    if (mkdtemp(tmpdir) == NULL)
        return 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    {
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            rc = rc != 0 ? rc : 1;
    }
    return rc;
}
