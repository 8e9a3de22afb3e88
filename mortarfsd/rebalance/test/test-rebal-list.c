/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-rebal-list: what the rebalance crawl makes of one subvolume's
 * listing (fsd_rb_list), over an in-test leaf that lists a directory
 * and answers lookups by name:
 *
 *   an entry with attributes is a job as listed;
 *   one without (replicate leaves out objects it has not compared yet)
 *     is looked up: a lookup that succeeds makes a job, one that keeps
 *     failing is counted as left behind (tried again first), never
 *     dropped in silence: on a brick being removed the commit would
 *     lose it;
 *   one whose lookup gives no GFID (a create in flight, a file put
 *     there by hand) is left alone, not counted.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "mortarfsd/rebalance/rebalance-migrate.h"
#include "vol/vol.h"

/* The listing and what a lookup of each name answers. */
static const struct {
    const char *name;
    bool has_iatt;   /* listed with attributes */
    int lookup;      /* 0, -errno, or 1: found without a GFID */
    int fail_first;  /* with lookup 0: the first this many fail (-EIO) */
} t_ents[] = {
    {"listed", true, 0, 0},
    {"looked-up", false, 0, 0},
    {"flaky", false, 0, 2},
    {"broken", false, -EIO, 0},
    {"no-gfid", false, 1, 0},
};
#define T_N_ENTS (sizeof(t_ents) / sizeof(t_ents[0]))

static struct {
    pthread_mutex_t lock;       /* guards the counts */
    int n_lookups[T_N_ENTS];    /* lookups of each name */
} t_leaf = {.lock = PTHREAD_MUTEX_INITIALIZER};


static void
t_iatt(struct vl_iatt *ia, size_t i)
{
    memset(ia, 0, sizeof(*ia));
    ia->gfid.bytes[0] = 0x42;
    ia->gfid.bytes[15] = (uint8_t)(i + 1);
    ia->ino = vl_gfid_to_ino(&ia->gfid);
    ia->mode = S_IFREG | 0644;
    ia->nlink = 1;
    ia->size = 100;
}


static int
t_lookup(const char *name, struct vl_reply *rp)
{
    for (size_t i = 0; i < T_N_ENTS; i++) {
        int n;

        if (strcmp(t_ents[i].name, name) != 0)
            continue;
        pthread_mutex_lock(&t_leaf.lock);
        n = ++t_leaf.n_lookups[i];
        pthread_mutex_unlock(&t_leaf.lock);
        if (t_ents[i].lookup < 0)
            return t_ents[i].lookup;
        if (n <= t_ents[i].fail_first)
            return -EIO;
        t_iatt(&rp->iatt, i);
        if (t_ents[i].lookup == 1)
            memset(&rp->iatt.gfid, 0, sizeof(rp->iatt.gfid));
        return 0;
    }
    return -ENOENT;
}


static void
t_leaf_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_reply *rp = &req->reply;
    int status = 0;

    switch (req->op) {
    case VL_FOP_OPENDIR:
        break;
    case VL_FOP_READDIR:
        /* Everything in one answer, then end of directory. */
        if (req->args.readdir.offset == 0) {
            for (size_t i = 0; status == 0 && i < T_N_ENTS; i++) {
                struct vl_iatt ia;

                t_iatt(&ia, i);
                status = vl_dirent_list_add(&rp->entries, ia.ino,
                                            (int64_t)i + 1, DT_REG,
                                            t_ents[i].name,
                                            t_ents[i].has_iatt ? &ia
                                                               : NULL);
            }
        }
        rp->entries.eof = true;
        break;
    case VL_FOP_LOOKUP:
        status = t_lookup(req->args.lookup.loc.name, rp);
        break;
    default:
        status = -ENOSYS;
    }
    vl_unwind(req, status);
}


struct t_conf {
    bool dummy; /* no options */
};

static const vl_option_t t_options[] = {VL_OPT_END};
static const char *const t_types[] = {"misc", NULL};

static const vl_xlator_class_t t_leaf_class = {
    .abi = VL_XLATOR_ABI,
    .type = "rbtest/leaf",
    .prefix = "rbtest",
    .flags = VL_XL_LEAF,
    .conf_size = sizeof(struct t_conf),
    .options = t_options,
    .mem_types = t_types,
    .doc = "Lists one directory and answers lookups by name.",
    .fops = {
        [VL_FOP_OPENDIR] = t_leaf_fop,
        [VL_FOP_READDIR] = t_leaf_fop,
        [VL_FOP_LOOKUP] = t_leaf_fop,
    },
};


static void
t_list(void **state)
{
    const char text[] = "volume s0\n type rbtest/leaf\nend-volume\n";
    vl_err_t err = {{0}};
    vl_loop_t *loop = vl_loop_new(1);
    vl_volfile_t *vf;
    vl_graph_t *g;
    vl_xlator_t *subs[1];
    atomic_bool stop = false;
    struct fsd_rebal_io io;
    vl_gfid_t root_gfid = {{0}};
    vl_inode_t *dir;
    struct fsd_rb_job *jobs = NULL;
    char **subdirs = NULL;
    size_t n_jobs = 0, n_subdirs = 0, n_left = 0;
    char left_why[256] = "", why[256] = "";
    bool has_listed = false, has_looked_up = false, has_flaky = false;

    (void)state;
    assert_non_null(loop);
    assert_int_equal(vl_loop_start(loop), 0);
    (void)vl_registry_add(&t_leaf_class);
    vf = vl_volfile_parse(text, strlen(text), "rbtest", &err);
    assert_non_null(vf);
    g = vl_graph_build(vf, loop, &err);
    assert_non_null(g);
    assert_int_equal(vl_graph_init(g, &err), 0);
    vl_graph_activate(g);
    subs[0] = g->top;
    io = (struct fsd_rebal_io){.top = g->top, .subs = subs, .n_subs = 1,
                               .stop = &stop};
    root_gfid.bytes[15] = 1;
    dir = vl_inode_get(g->itable, &root_gfid, S_IFDIR);
    assert_non_null(dir);

    assert_int_equal(fsd_rb_list(&io, dir, &jobs, &n_jobs, &subdirs,
                                 &n_subdirs, &n_left, left_why,
                                 sizeof(left_why), why, sizeof(why)),
                     0);
    /* listed, looked-up and flaky (its third lookup answers) are jobs;
     * broken is counted and named; no-gfid is neither. */
    assert_int_equal(n_jobs, 3);
    for (size_t i = 0; i < n_jobs; i++) {
        has_listed |= strcmp(jobs[i].name, "listed") == 0;
        has_looked_up |= strcmp(jobs[i].name, "looked-up") == 0;
        has_flaky |= strcmp(jobs[i].name, "flaky") == 0;
    }
    assert_true(has_listed && has_looked_up && has_flaky);
    assert_int_equal(n_subdirs, 0);
    assert_int_equal(n_left, 1);
    assert_non_null(strstr(left_why, "'broken'"));
    assert_non_null(strstr(left_why, strerror(EIO)));
    /* A failing lookup is tried again before it is given up. */
    assert_int_equal(t_leaf.n_lookups[0], 0);
    assert_int_equal(t_leaf.n_lookups[1], 1);
    assert_int_equal(t_leaf.n_lookups[2], 3);
    assert_true(t_leaf.n_lookups[3] > 1);
    assert_int_equal(t_leaf.n_lookups[4], 1);

    fsd_rb_jobs_free(jobs, n_jobs);
    for (size_t i = 0; subdirs != NULL && subdirs[i] != NULL; i++)
        free(subdirs[i]);
    free(subdirs);
    vl_inode_unref(dir);
    vl_graph_free(g);
    vl_volfile_free(vf);
    vl_loop_stop(loop);
    vl_loop_free(loop);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_list),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
