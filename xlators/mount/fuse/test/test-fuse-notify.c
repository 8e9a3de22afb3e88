/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-fuse-notify: the bridge's side of cache invalidation
 * (fuse-notify.c) on a session whose /dev/fuse is a pipe, so the test
 * reads what the notifier thread writes. Checks: an attribute
 * invalidation of a known node is one INVAL_INODE with off -1, a data
 * one off 0, an unknown GFID nothing; an entry change is INVAL_INODE of
 * the object, INVAL_INODE of the directory and INVAL_ENTRY of the name
 * (the root as FUSE_ROOT_ID), and drops the name hint and the NO_CAP
 * mark; a lease break is ignored; is_all reaches every node, every
 * hinted name and the root; before INIT nothing is written; the kernel's
 * timeouts follow conf without md-cache; stop drains the queue.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fuse.h"

struct t_env {
    struct vfuse_session sess;
    struct vfuse_priv priv;
    vl_inode_table_t *itable;
    int rfd;             /* the pipe's read end: "the kernel" */
    vl_gfid_t dir, file; /* nodes the kernel knows */
    uint64_t dir_id, file_id;
};


static int
t_setup(void **state)
{
    struct t_env *e = calloc(1, sizeof(*e));
    int p[2];
    vl_inode_t *in;

    assert_non_null(e);
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    e->rfd = p[0];
    e->sess.fuse_fd = p[1];
    assert_int_equal(vfuse_table_init(&e->sess.table), 0);
    pthread_mutex_init(&e->sess.lock, NULL);
    e->sess.is_init_done = true;
    e->priv.sess = &e->sess;
    e->priv.gen = 1;
    e->itable = vl_inode_table_new(NULL, 0, 16);
    assert_non_null(e->itable);
    vl_gfid_generate(&e->dir);
    vl_gfid_generate(&e->file);
    in = vl_inode_get(e->itable, &e->dir, S_IFDIR);
    e->dir_id = vfuse_node_remember(&e->sess.table, in, 1);
    in = vl_inode_get(e->itable, &e->file, S_IFREG);
    e->file_id = vfuse_node_remember(&e->sess.table, in, 1);
    assert_true(e->dir_id != 0 && e->file_id != 0);
    assert_int_equal(vfuse_notifier_start(&e->sess), 0);
    *state = e;
    return 0;
}


static int
t_teardown(void **state)
{
    struct t_env *e = *state;

    vfuse_notifier_stop(&e->sess);
    vfuse_table_clear(&e->sess.table);
    vl_inode_table_free(e->itable);
    pthread_mutex_destroy(&e->sess.lock);
    close(e->rfd);
    close(e->sess.fuse_fd);
    free(e);
    return 0;
}


/* Reads one notification (waiting up to wait_ms); its code, the first
 * 8-byte field (ino or parent), off (INVAL_INODE) and name (INVAL_ENTRY,
 * at most 255 bytes). false when none came within wait_ms. */
static bool
t_next(struct t_env *e, int wait_ms, int *code, uint64_t *id, int64_t *off,
       char *name)
{
    struct pollfd pfd = {.fd = e->rfd, .events = POLLIN};
    char buf[512];
    struct fuse_out_header hdr;
    ssize_t n;

    if (poll(&pfd, 1, wait_ms) != 1)
        return false;
    /* A pipe keeps no message boundaries: the header, then the rest. */
    n = read(e->rfd, buf, sizeof(hdr));
    assert_int_equal(n, sizeof(hdr));
    memcpy(&hdr, buf, sizeof(hdr));
    assert_true(hdr.len > sizeof(hdr) && hdr.len <= sizeof(buf));
    n = read(e->rfd, buf + sizeof(hdr), hdr.len - sizeof(hdr));
    assert_int_equal(n, hdr.len - sizeof(hdr));
    n = hdr.len;
    assert_int_equal(hdr.unique, 0);
    *code = hdr.error;
    if (hdr.error == FUSE_NOTIFY_INVAL_INODE) {
        struct fuse_notify_inval_inode_out o;

        assert_int_equal(n, sizeof(hdr) + sizeof(o));
        memcpy(&o, buf + sizeof(hdr), sizeof(o));
        *id = o.ino;
        *off = o.off;
        assert_int_equal(o.len, 0);
    } else {
        struct fuse_notify_inval_entry_out o;

        assert_int_equal(hdr.error, FUSE_NOTIFY_INVAL_ENTRY);
        memcpy(&o, buf + sizeof(hdr), sizeof(o));
        assert_int_equal(n, sizeof(hdr) + sizeof(o) + o.namelen + 1);
        *id = o.parent;
        memcpy(name, buf + sizeof(hdr) + sizeof(o), o.namelen + 1);
        assert_int_equal(name[o.namelen], '\0');
    }
    return true;
}


static void
t_expect_inode(struct t_env *e, uint64_t want_id, int64_t want_off)
{
    int code = 0;
    uint64_t id = 0;
    int64_t off = 99;
    char name[256];

    assert_true(t_next(e, 5000, &code, &id, &off, name));
    assert_int_equal(code, FUSE_NOTIFY_INVAL_INODE);
    assert_int_equal(id, want_id);
    assert_int_equal(off, want_off);
}


static void
t_expect_nothing(struct t_env *e)
{
    int code;
    uint64_t id;
    int64_t off;
    char name[256];

    assert_false(t_next(e, 200, &code, &id, &off, name));
}


static void
test_attr_and_data(void **state)
{
    struct t_env *e = *state;
    struct vl_upcall up = {
        .kind = VL_UPCALL_INVALIDATE, .flags = VL_INVAL_ATTR, .gfid = e->file};
    vl_gfid_t unknown;

    vfuse_notify_upcall(&e->priv, &up);
    t_expect_inode(e, e->file_id, -1); /* attributes only */
    up.flags = VL_INVAL_ATTR | VL_INVAL_DATA;
    vfuse_notify_upcall(&e->priv, &up);
    t_expect_inode(e, e->file_id, 0); /* and every page */
    /* Not known to the kernel: nothing to tell it. */
    vl_gfid_generate(&unknown);
    up.gfid = unknown;
    vfuse_notify_upcall(&e->priv, &up);
    /* A lease break is nl-cache's. */
    up = (struct vl_upcall){.gfid = e->file};
    vfuse_notify_upcall(&e->priv, &up);
    t_expect_nothing(e);
    assert_int_equal(atomic_load(&e->sess.notifier.n_upcalls), 3);
    assert_int_equal(atomic_load(&e->sess.notifier.n_sent), 2);
}


static void
test_entry(void **state)
{
    struct t_env *e = *state;
    struct vl_upcall up = {.kind = VL_UPCALL_INVALIDATE,
                           .flags = VL_INVAL_ATTR | VL_INVAL_ENTRY,
                           .gfid = e->file,
                           .parent = e->dir,
                           .name = "f"};
    int code;
    uint64_t id;
    int64_t off;
    char name[256];

    vfuse_hint_add(&e->sess.table, &e->dir, "f", e->file_id);
    vfuse_node_set_flags(&e->sess.table, e->file_id, VFUSE_NODE_NO_CAP, 0);
    vfuse_notify_upcall(&e->priv, &up);
    t_expect_inode(e, e->file_id, -1);
    t_expect_inode(e, e->dir_id, -1);
    assert_true(t_next(e, 5000, &code, &id, &off, name));
    assert_int_equal(code, FUSE_NOTIFY_INVAL_ENTRY);
    assert_int_equal(id, e->dir_id);
    assert_string_equal(name, "f");
    /* The bridge's own copies went too. */
    assert_int_equal(vfuse_hint_count(&e->sess.table), 0);
    assert_int_equal(
        vfuse_node_flags(&e->sess.table, e->file_id) & VFUSE_NODE_NO_CAP, 0);

    /* A name in the root: the root is FUSE_ROOT_ID. */
    up = (struct vl_upcall){.kind = VL_UPCALL_INVALIDATE,
                            .flags = VL_INVAL_ENTRY,
                            .parent = vl_gfid_root,
                            .name = "new"};
    vfuse_notify_upcall(&e->priv, &up);
    t_expect_inode(e, FUSE_ROOT_ID, -1);
    assert_true(t_next(e, 5000, &code, &id, &off, name));
    assert_int_equal(code, FUSE_NOTIFY_INVAL_ENTRY);
    assert_int_equal(id, FUSE_ROOT_ID);
    assert_string_equal(name, "new");
    t_expect_nothing(e);
}


static void
test_all(void **state)
{
    struct t_env *e = *state;
    struct vl_upcall up = {.is_all = true};
    bool seen_dir = false, seen_file = false, seen_root = false;
    bool seen_name = false;
    int code;
    uint64_t id;
    int64_t off;
    char name[256];

    vfuse_hint_add(&e->sess.table, &e->dir, "f", e->file_id);
    vfuse_notify_upcall(&e->priv, &up);
    while (t_next(e, 500, &code, &id, &off, name)) {
        if (code == FUSE_NOTIFY_INVAL_ENTRY) {
            assert_int_equal(id, e->dir_id);
            assert_string_equal(name, "f");
            seen_name = true;
            continue;
        }
        assert_int_equal(off, 0);
        seen_dir |= id == e->dir_id;
        seen_file |= id == e->file_id;
        seen_root |= id == FUSE_ROOT_ID;
    }
    assert_true(seen_dir && seen_file && seen_root && seen_name);
    assert_int_equal(atomic_load(&e->sess.notifier.n_all), 1);
}


/* Before the kernel's INIT is answered it knows no inode: nothing is
 * written (and nothing waits). */
static void
test_before_init(void **state)
{
    struct t_env *e = *state;
    struct vl_upcall up = {
        .kind = VL_UPCALL_INVALIDATE, .flags = VL_INVAL_ATTR, .gfid = e->file};

    pthread_mutex_lock(&e->sess.lock);
    e->sess.is_init_done = false;
    pthread_mutex_unlock(&e->sess.lock);
    vfuse_notify_upcall(&e->priv, &up);
    t_expect_nothing(e);
}


/* Stop with notifications still queued: they are freed, later ones
 * dropped (counted). */
static void
test_stop_drains(void **state)
{
    struct t_env *e = *state;
    struct vl_upcall up = {
        .kind = VL_UPCALL_INVALIDATE, .flags = VL_INVAL_ATTR, .gfid = e->file};

    for (int i = 0; i < 100; i++)
        vfuse_notify_upcall(&e->priv, &up);
    vfuse_notifier_stop(&e->sess);
    vfuse_notify_upcall(&e->priv, &up);
    assert_true(atomic_load(&e->sess.notifier.n_dropped) >= 1);
    vfuse_notifier_stop(&e->sess); /* idempotent */
}


static void
test_timeout_without_md_cache(void **state)
{
    struct t_env *e = *state;

    assert_null(e->priv.md_cache);
    assert_int_equal(vfuse_cache_timeout_ms(&e->priv, 1000), 1000);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_attr_and_data, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_entry, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_all, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_before_init, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_stop_drains, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_timeout_without_md_cache, t_setup,
                                        t_teardown),
    };

    vl_global_init();
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
