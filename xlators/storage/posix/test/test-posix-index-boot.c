/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-posix-index-boot: the heal index's crash check
 * (posix-index-boot.c). The boot id comes from a file of the test's
 * (MORTAR_BOOT_ID_FILE): changing it between a brick's stop and start is
 * a reboot. Counters are written straight on the brick's files, with no
 * index entry, as a machine crash can leave them (an entry lost, the
 * counter written after it kept): the rebuild finds them when the marker
 * names another boot, and is not run when it names this one (a brick
 * killed while the machine stayed up loses nothing) or "clean". Without
 * a boot id, entries are fsynced as they are made.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "posix-test.h"
#include "../posix.h"

#define SLOT1 "trusted.mortar.rep.v0-client-1"

static char boot_file[64]; /* MORTAR_BOOT_ID_FILE */


static void
boot_id_set(const char *id)
{
    FILE *f = fopen(boot_file, "w");

    assert_non_null(f);
    fprintf(f, "%s\n", id);
    assert_int_equal(fclose(f), 0);
}


/* The brick's marker, index/boot, into out ("" if missing). */
static void
marker_read(struct pt *t, char *out, size_t size)
{
    char path[PATH_MAX];
    FILE *f;

    out[0] = '\0';
    snprintf(path, sizeof(path), "%s/.mortar/index/boot", t->brick);
    f = fopen(path, "r");
    if (f == NULL)
        return;
    if (fgets(out, (int)size, f) == NULL)
        out[0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    fclose(f);
}


static void
marker_write(struct pt *t, const char *value)
{
    char path[PATH_MAX];
    FILE *f;

    snprintf(path, sizeof(path), "%s/.mortar/index/boot", t->brick);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", value);
    assert_int_equal(fclose(f), 0);
}


/* Are directory g's entry records marked full? */
static bool
entry_full(struct pt *t, const vl_gfid_t *g)
{
    char path[PATH_MAX], str[VL_GFID_STR_LEN], v;

    snprintf(path, sizeof(path), "%s/.mortar/index/entry-changes/%s",
             t->brick, vl_gfid_to_str(g, str));
    return lgetxattr(path, POSIX_INDEX_FULL_XATTR, &v, 1) >= 0;
}


/* A counter (data, metadata, entry) written on brick path rel by hand. */
static void
counter_set(struct pt *t, const char *rel, int32_t d, int32_t m, int32_t e)
{
    uint32_t v[3] = {htonl((uint32_t)d), htonl((uint32_t)m),
                     htonl((uint32_t)e)};
    char path[PATH_MAX];

    snprintf(path, sizeof(path), "%s/%s", t->brick, rel);
    assert_int_equal(lsetxattr(path, SLOT1, v, sizeof(v), 0), 0);
}


/* Waits (10 s at most) for the index to be whole again. */
static void
wait_whole(struct pt *t)
{
    struct posix_index_boot *b = &posix_priv(t->xl)->index_boot;
    struct timespec ts = {.tv_nsec = 10000000L};

    for (int i = 0; i < 1000 && !atomic_load(&b->is_done); i++)
        nanosleep(&ts, NULL);
    assert_true(atomic_load(&b->is_done));
}


static int
setup(void **state)
{
    boot_id_set("boot-A");
    return pt_setup(state);
}


/* A new brick writes this boot's id before any entry; a clean stop
 * writes "clean"; entries are not fsynced. */
static void
test_marker_follows_stops(void **state)
{
    struct pt *t = *state;
    char m[64];
    vl_err_t err = {{0}};

    assert_false(posix_priv(t->xl)->is_index_synced);
    marker_read(t, m, sizeof(m));
    assert_string_equal(m, "boot-A");
    pt_graph_close(t);
    marker_read(t, m, sizeof(m));
    assert_string_equal(m, "clean");
    boot_id_set("boot-B"); /* a reboot after a clean stop: no rebuild */
    assert_int_equal(pt_graph_open(t, NULL, &err), 0);
    marker_read(t, m, sizeof(m));
    assert_string_equal(m, "boot-B");
    assert_int_equal(atomic_load(&posix_priv(t->xl)->index_boot.n_seen), 0);
}


/* Objects with counters and no entries (what a machine crash can
 * leave); *f, *d (a directory with an entry counter) and *c (clean). */
static void
crash_objects(struct pt *t, vl_gfid_t *f, vl_gfid_t *d, vl_gfid_t *c)
{
    vl_inode_t *fi = NULL, *di = NULL, *ci = NULL, *sub = NULL;

    assert_int_equal(pt_mkdir(t, t->root, "d", 0755, &di), 0);
    assert_int_equal(pt_mkdir(t, di, "deeper", 0755, &sub), 0);
    assert_int_equal(pt_create(t, sub, "f", O_RDWR, 0644, &fi, NULL), 0);
    assert_int_equal(pt_create(t, t->root, "c", O_RDWR, 0644, &ci, NULL),
                     0);
    *f = fi->gfid;
    *d = di->gfid;
    *c = ci->gfid;
    counter_set(t, "d/deeper/f", 1, 0, 0);
    counter_set(t, "d", 0, 0, 2);
    vl_inode_unref(fi);
    vl_inode_unref(di);
    vl_inode_unref(ci);
    vl_inode_unref(sub);
    assert_false(pt_index_has(t, f));
    assert_false(pt_index_has(t, d));
}


/* The marker names another boot: the machine went down under the
 * brick. The rebuild makes the missing entries (and marks the
 * directory's names full), then the marker takes this boot's id. */
static void
test_rebuild_after_machine_crash(void **state)
{
    struct pt *t = *state;
    vl_gfid_t f, d, c;
    char m[64];
    vl_err_t err = {{0}};

    crash_objects(t, &f, &d, &c);
    pt_graph_close(t);
    marker_write(t, "boot-A"); /* was running when the machine went */
    boot_id_set("boot-B");
    assert_int_equal(pt_graph_open(t, NULL, &err), 0);
    wait_whole(t);
    assert_true(pt_index_has(t, &f));
    assert_true(pt_index_has(t, &d));
    assert_true(entry_full(t, &d));
    assert_false(pt_index_has(t, &c));
    assert_true(atomic_load(&posix_priv(t->xl)->index_boot.n_made) >= 3);
    marker_read(t, m, sizeof(m));
    assert_string_equal(m, "boot-B");
    /* The records made are real ones: clearing the counter through
     * xattrop removes the entry as usual. */
    {
        uint32_t v[3] = {htonl((uint32_t)-1), 0, 0};
        const char *names[1] = {SLOT1};
        const void *vals[1] = {v};
        const uint32_t sizes[1] = {12};
        union vl_fop_args a = {0};
        struct vl_reply r;
        vl_inode_t *fi = NULL;

        assert_int_equal(pt_lookup_gfid(t, &f, NULL, &fi), 0);
        a.xattrop.loc.inode = fi;
        a.xattrop.op = VL_XATTROP_ADD32;
        a.xattrop.n = 1;
        a.xattrop.names = names;
        a.xattrop.values = vals;
        a.xattrop.sizes = sizes;
        assert_int_equal(pt_call(t, VL_FOP_XATTROP, &a, &r), 0);
        vl_reply_clear(&r);
        vl_inode_unref(fi);
        assert_false(pt_index_has(t, &f));
    }
}


/* The marker names this boot: only the brick went down (a kill), and
 * the page cache kept every entry: no scan. A "clean" marker likewise. */
static void
test_no_rebuild_after_brick_crash(void **state)
{
    struct pt *t = *state;
    vl_gfid_t f, d, c;
    vl_err_t err = {{0}};

    crash_objects(t, &f, &d, &c);
    pt_graph_close(t);
    marker_write(t, "boot-A");
    assert_int_equal(pt_graph_open(t, NULL, &err), 0);
    assert_true(atomic_load(&posix_priv(t->xl)->index_boot.is_done));
    assert_int_equal(atomic_load(&posix_priv(t->xl)->index_boot.n_seen), 0);
    assert_false(pt_index_has(t, &f));
    pt_graph_close(t);
    boot_id_set("boot-C");
    marker_write(t, "clean");
    assert_int_equal(pt_graph_open(t, NULL, &err), 0);
    assert_int_equal(atomic_load(&posix_priv(t->xl)->index_boot.n_seen), 0);
    assert_false(pt_index_has(t, &f));
}


/* No boot id to tell crashes apart: every entry is fsynced, as before,
 * and the marker is left alone. */
static void
test_no_boot_id_syncs(void **state)
{
    struct pt *t = *state;
    char m[64];
    vl_err_t err = {{0}};

    pt_graph_close(t);
    assert_int_equal(unlink(boot_file), 0);
    assert_int_equal(pt_graph_open(t, NULL, &err), 0);
    assert_true(posix_priv(t->xl)->is_index_synced);
    marker_read(t, m, sizeof(m));
    assert_string_equal(m, "clean");
    boot_id_set("boot-A");
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_marker_follows_stops, setup,
                                        pt_teardown),
        cmocka_unit_test_setup_teardown(test_rebuild_after_machine_crash,
                                        setup, pt_teardown),
        cmocka_unit_test_setup_teardown(test_no_rebuild_after_brick_crash,
                                        setup, pt_teardown),
        cmocka_unit_test_setup_teardown(test_no_boot_id_syncs, setup,
                                        pt_teardown),
    };
    int fd, rc;

    snprintf(boot_file, sizeof(boot_file), "/tmp/posix-boot-id-XXXXXX");
    fd = mkstemp(boot_file);
    if (fd < 0)
        return 1;
    close(fd);
    setenv("MORTAR_BOOT_ID_FILE", boot_file, 1);
    cmocka_set_message_output(CM_OUTPUT_TAP);
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(boot_file);
    return rc;
}
