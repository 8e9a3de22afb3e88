/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-dist-rounds: which children a namespace fop of distribute is
 * wound to, and in how many sequential rounds. Four debug/mock children
 * under distribute (dist-rounds.h); the test answers each round itself (a
 * round is the set of requests waiting in the mocks before any is
 * answered):
 *   unlink with a known inode: one round to the cached brick (a name
 *     hashing elsewhere: its link file on the hashed brick first);
 *     a stale inode (ENOENT there) falls back to the name everywhere;
 *   mkdir: the hashed brick alone, then the others, each with its
 *     layout range in the mkdir (two rounds; a stale copy elsewhere gets
 *     it in a third); EEXIST on the hashed brick touches no other brick;
 *   lookup of a directory: the hashed brick, then a lookup asking for
 *     the layout on every brick in one round; bricks whose lookup brings
 *     no layout (a translator below answered it) are asked by getxattr
 *     in a third round;
 *   rmdir: every brick but the hashed one in one round, then the hashed
 *     one (it is removed last: a failure elsewhere leaves it to heal
 *     from);
 *   a named lookup that finds the data away from the hashed brick while
 *     the parent's layout ages: the layout is read again, the inode still
 *     knows its hashed brick (pathinfo);
 *   mkdir and rmdir run on the callbacks, no worker thread, unless a
 *     stale copy or ENOTEMPTY needs one (dist_priv.n_tasks).
 * readdir's rounds are checked in test-dist-readdir.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dist-rounds.h"


static void
rd_unlink_start(struct rd *t, vl_inode_t *inode, const char *name,
                struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(t->dht, VL_FOP_UNLINK);

    assert_non_null(req);
    VL_ARGS(req, unlink)->loc.parent = t->root;
    VL_ARGS(req, unlink)->loc.name = name;
    VL_ARGS(req, unlink)->loc.inode = inode;
    vl_test_wind(req, res);
}


static void
test_unlink_known_inode_one_brick(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char name[32];
    vl_inode_t *inode;

    rd_name_on(t, 2, "u", name, sizeof(name));
    inode = rd_file(t, 2, 2);
    rd_unlink_start(t, inode, name, &res);
    assert_true(rd_round(t, &res, rd_ok, &rd));
    assert_int_equal(rd.mask, 1ULL << 2);
    assert_int_equal(rd.op[2], VL_FOP_UNLINK);
    assert_int_equal(rd.n[2], 1);
    assert_false(rd_round(t, &res, rd_ok, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
    vl_inode_unref(inode);
}


static void
test_unlink_known_inode_with_linkfile(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char name[32];
    vl_inode_t *inode;

    rd_name_on(t, 1, "u", name, sizeof(name));
    inode = rd_file(t, 3, 1);
    rd_unlink_start(t, inode, name, &res);
    /* The link file on the hashed brick first, then the data. */
    assert_true(rd_round(t, &res, rd_ok, &rd));
    assert_int_equal(rd.mask, 1ULL << 1);
    assert_true(rd_round(t, &res, rd_ok, &rd));
    assert_int_equal(rd.mask, 1ULL << 3);
    assert_false(rd_round(t, &res, rd_ok, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
    vl_inode_unref(inode);
}


/* The name was renamed/replaced by another client: the file it names
 * now lives on subvolume 0, not where the kernel's inode said. */
static int
rd_stale_unlink(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    (void)r;
    (void)ia;
    return mock == 0 ? 0 : -ENOENT;
}


static int
rd_gone(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    (void)mock;
    (void)r;
    (void)ia;
    return -ENOENT;
}


static void
test_unlink_stale_inode_falls_back(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char name[32];
    vl_inode_t *inode;

    rd_name_on(t, 2, "u", name, sizeof(name));
    inode = rd_file(t, 2, 2);
    rd_unlink_start(t, inode, name, &res);
    assert_true(rd_round(t, &res, rd_stale_unlink, &rd));
    assert_int_equal(rd.mask, 1ULL << 2);
    /* Second round: the name everywhere. */
    assert_true(rd_round(t, &res, rd_stale_unlink, &rd));
    assert_int_equal(rd.mask, 0xf);
    for (int i = 0; i < RD_N; i++)
        assert_int_equal(rd.op[i], VL_FOP_UNLINK);
    assert_false(rd_round(t, &res, rd_stale_unlink, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);

    /* Gone everywhere: ENOENT after the fallback round. */
    rd_unlink_start(t, inode, name, &res);
    assert_true(rd_round(t, &res, rd_gone, &rd));
    assert_true(rd_round(t, &res, rd_gone, &rd));
    assert_int_equal(rd.mask, 0xf);
    assert_false(rd_round(t, &res, rd_gone, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, -ENOENT);
    vl_test_result_clear(&res);
    vl_inode_unref(inode);
}


/* ---- mkdir ---- */

static vl_gfid_t rd_dir_gfid;


/* The layout range each mock got with its mkdir (decoded), and how many
 * mkdirs carried one. */
static struct dist_range rd_mkdir_range[RD_N];
static unsigned rd_mkdir_with_xattr[RD_N];
/* Mocks that answer EEXIST to mkdir (a stale copy there). */
static uint64_t rd_mkdir_exists;


static int
rd_mkdir_ok(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    if (r->op == VL_FOP_MKDIR) {
        const struct vl_mkdir_args *a = VL_ARGS(r, mkdir);

        if (a->xattr_name != NULL) {
            assert_string_equal(a->xattr_name, DIST_XATTR_LAYOUT);
            assert_int_equal(dist_layout_decode(a->xattr_value,
                                                a->xattr_size,
                                                &rd_mkdir_range[mock]),
                             0);
            rd_mkdir_with_xattr[mock]++;
        }
        if (rd_mkdir_exists & (1ULL << mock))
            return -EEXIST;
        ia->gfid = rd_dir_gfid;
        ia->mode = S_IFDIR | 0755;
        ia->nlink = 2;
    }
    return 0;
}


static void
rd_mkdir_start(struct rd *t, const char *name, vl_inode_t **fresh,
               struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(t->dht, VL_FOP_MKDIR);

    assert_non_null(req);
    memset(rd_mkdir_range, 0, sizeof(rd_mkdir_range));
    memset(rd_mkdir_with_xattr, 0, sizeof(rd_mkdir_with_xattr));
    *fresh = vl_inode_new(t->g->graph->itable);
    vl_gfid_generate(&rd_dir_gfid);
    VL_ARGS(req, mkdir)->loc.parent = t->root;
    VL_ARGS(req, mkdir)->loc.name = name;
    VL_ARGS(req, mkdir)->loc.inode = *fresh;
    VL_ARGS(req, mkdir)->mode = 0755;
    VL_ARGS(req, mkdir)->gfid = rd_dir_gfid;
    vl_test_wind(req, res);
}


/* Every mock got exactly one mkdir, carrying its range of the default
 * layout for four subvolumes (generation 1, COMMITTED): together the
 * ranges cover the hash space with no hole or overlap. */
static void
rd_mkdir_check_layouts(void)
{
    struct dist_layout *want = dist_layout_new(NULL, RD_N);
    struct dist_layout *got = dist_layout_new(NULL, RD_N);
    struct dist_anomalies an;

    assert_non_null(want);
    assert_non_null(got);
    dist_layout_default(want, dist_mask_none(), 1, DIST_FLAG_COMMITTED);
    for (int i = 0; i < RD_N; i++) {
        assert_int_equal(rd_mkdir_with_xattr[i], 1);
        assert_int_equal(rd_mkdir_range[i].generation, 1);
        assert_int_equal(rd_mkdir_range[i].start, want->r[i].start);
        assert_int_equal(rd_mkdir_range[i].stop, want->r[i].stop);
        assert_int_equal(rd_mkdir_range[i].flags,
                         DIST_FLAG_HAS_RANGE | DIST_FLAG_COMMITTED);
        got->r[i] = rd_mkdir_range[i];
    }
    assert_false(dist_layout_check(got, &an));
    assert_int_equal(an.n_holes + an.n_overlaps + an.n_missing, 0);
    vl_free(want);
    vl_free(got);
}


static void
test_mkdir_hashed_first(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char name[32];
    vl_inode_t *fresh;

    uint64_t tasks = dist_priv(t->dht)->n_tasks;

    rd_mkdir_exists = 0;
    rd_name_on(t, 1, "d", name, sizeof(name));
    rd_mkdir_start(t, name, &fresh, &res);
    /* Round 1: the hashed brick alone, with its layout range. */
    assert_true(rd_round(t, &res, rd_mkdir_ok, &rd));
    assert_int_equal(rd.mask, 1ULL << 1);
    assert_int_equal(rd.op[1], VL_FOP_MKDIR);
    assert_int_equal(rd_mkdir_with_xattr[1], 1);
    /* Round 2: every other brick in parallel, each with its range. */
    assert_true(rd_round(t, &res, rd_mkdir_ok, &rd));
    assert_int_equal(rd.mask, 0xdULL);
    for (int i = 0; i < RD_N; i++)
        if (i != 1)
            assert_int_equal(rd.op[i], VL_FOP_MKDIR);
    /* No third round: the layout came with the mkdirs. */
    assert_false(rd_round(t, &res, rd_mkdir_ok, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    assert_true(S_ISDIR(res.reply.iatt.mode));
    /* Wound and answered on the callbacks: no worker thread. */
    assert_int_equal(dist_priv(t->dht)->n_tasks, tasks);
    rd_mkdir_check_layouts();
    for (int i = 0; i < RD_N; i++)
        assert_int_equal(vl_mock_received(t->m[i]), 1);
    vl_test_result_clear(&res);
    vl_inode_unref(fresh);
}


/* ---- lookup of a known directory ---- */

static vl_gfid_t rd_known_dir;
static uint64_t rd_dir_no_layout; /* bricks whose copy has no layout */

/* Every brick has the directory, with its range of the default layout
 * in the lookup's answer (unless in rd_dir_no_layout). */
static int
rd_known_answer(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    if (r->op != VL_FOP_LOOKUP)
        return 0; /* the heal's layout write */
    ia->gfid = rd_known_dir;
    ia->mode = S_IFDIR | 0755;
    ia->nlink = 2;
    ia->mtime = 100 + mock; /* the newest copy's time goes up */
    if (VL_ARGS(r, lookup)->xattr_name == NULL)
        return 0;
    assert_string_equal(VL_ARGS(r, lookup)->xattr_name, DIST_XATTR_LAYOUT);
    if (rd_dir_no_layout & (1ULL << mock))
        r->reply.xattr_status = -ENODATA;
    else
        rd_reply_layout(mock, r);
    return 0;
}


/* The kernel revalidating a directory it knows: one round of lookups,
 * each with the layout, answered on the callbacks (no worker), with the
 * newest time of the copies; a copy without its layout goes to a worker,
 * which repairs it. */
static void
test_dir_lookup_on_callbacks(void **state)
{
    struct rd *t = *state;

    for (int k = 0; k < 2; k++) {
        struct vl_test_result res = {0};
        struct rd_round rd;
        vl_req_t *req = vl_req_new(t->dht, VL_FOP_LOOKUP);
        uint64_t tasks = dist_priv(t->dht)->n_tasks;
        vl_inode_t *dir;
        int rounds = 0;

        vl_gfid_generate(&rd_known_dir);
        rd_dir_no_layout = k == 0 ? 0 : 1ULL << 2;
        dir = vl_inode_get(t->g->graph->itable, &rd_known_dir, S_IFDIR);
        VL_ARGS(req, lookup)->loc.parent = t->root;
        VL_ARGS(req, lookup)->loc.name = "known";
        VL_ARGS(req, lookup)->loc.inode = dir;
        vl_test_wind(req, &res);
        assert_true(rd_round(t, &res, rd_known_answer, &rd));
        assert_int_equal(rd.mask, 0xfULL);
        for (int i = 0; i < RD_N; i++)
            assert_int_equal(rd.op[i], VL_FOP_LOOKUP);
        while (rd_round(t, &res, rd_known_answer, &rd))
            rounds++;
        rd_wait_done(t, &res);
        assert_int_equal(res.status, 0);
        assert_true(vl_gfid_equal(&res.reply.iatt.gfid, &rd_known_dir));
        assert_int_equal(res.reply.iatt.mtime, 103);
        if (k == 0) {
            assert_int_equal(rounds, 0);
            assert_int_equal(dist_priv(t->dht)->n_tasks, tasks);
        } else {
            /* Asked again on a worker, and the layout rewritten. */
            assert_true(rounds >= 2);
            assert_int_equal(dist_priv(t->dht)->n_tasks, tasks + 1);
        }
        vl_test_result_clear(&res);
        vl_inode_unref(dir);
    }
    rd_dir_no_layout = 0;
}


/* A named lookup with a directory hint (mount/fuse saw the name as that
 * directory): every brick at once, no hashed round first, no worker. A
 * stale hint (the name is gone) is answered right by the worker path. */
static void
test_dir_lookup_with_hint(void **state)
{
    struct rd *t = *state;

    for (int k = 0; k < 2; k++) {
        struct vl_test_result res = {0};
        struct rd_round rd;
        vl_req_t *req = vl_req_new(t->dht, VL_FOP_LOOKUP);
        uint64_t tasks = dist_priv(t->dht)->n_tasks;
        vl_inode_t *fresh = vl_inode_new(t->g->graph->itable);
        rd_answer_fn *fn = k == 0 ? rd_known_answer : rd_gone;

        vl_gfid_generate(&rd_known_dir);
        VL_ARGS(req, lookup)->loc.parent = t->root;
        VL_ARGS(req, lookup)->loc.name = "hinted";
        VL_ARGS(req, lookup)->loc.inode = fresh;
        VL_ARGS(req, lookup)->dir_hint = rd_known_dir;
        vl_test_wind(req, &res);
        assert_true(rd_round(t, &res, fn, &rd));
        assert_int_equal(rd.mask, 0xfULL);
        while (rd_round(t, &res, fn, &rd))
            ;
        rd_wait_done(t, &res);
        if (k == 0) {
            assert_int_equal(res.status, 0);
            assert_true(vl_gfid_equal(&res.reply.iatt.gfid, &rd_known_dir));
            assert_int_equal(dist_priv(t->dht)->n_tasks, tasks);
        } else {
            assert_int_equal(res.status, -ENOENT);
            assert_int_equal(dist_priv(t->dht)->n_tasks, tasks + 1);
        }
        vl_test_result_clear(&res);
        vl_inode_unref(fresh);
    }
}


/* Bricks that grant the lease a mkdir asks for (want_lease). */
static uint64_t rd_lease_granted;

static int
rd_mkdir_leased(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    int st = rd_mkdir_ok(mock, r, ia);

    if (r->op == VL_FOP_MKDIR) {
        /* Every copy's mkdir asks for the lease the caller asked for. */
        assert_true(VL_ARGS(r, mkdir)->want_lease);
        r->reply.is_leased = st == 0 && (rd_lease_granted & (1ULL << mock));
    }
    return st;
}


/* The directory is leased only when every brick made its copy under a
 * lease: a brick without one would not report another client's names. */
static void
test_mkdir_lease_from_every_brick(void **state)
{
    struct rd *t = *state;
    /* The last: every brick grants, but brick 2's copy was there
     * already (made by someone else: EEXIST, then its layout). */
    const uint64_t grants[] = {0xf, 0xd, 0xe, 0x0, 0xf};
    const uint64_t exists[] = {0, 0, 0, 0, 1ULL << 2};
    const bool want[] = {true, false, false, false, false};

    for (size_t k = 0; k < VL_ARRAY_SIZE(grants); k++) {
        struct vl_test_result res = {0};
        struct rd_round rd;
        vl_req_t *req = vl_req_new(t->dht, VL_FOP_MKDIR);
        vl_inode_t *fresh = vl_inode_new(t->g->graph->itable);
        char name[32];

        rd_mkdir_exists = exists[k];
        rd_lease_granted = grants[k];
        rd_name_on(t, 0, "lease", name, sizeof(name));
        vl_gfid_generate(&rd_dir_gfid);
        VL_ARGS(req, mkdir)->loc.parent = t->root;
        VL_ARGS(req, mkdir)->loc.name = name;
        VL_ARGS(req, mkdir)->loc.inode = fresh;
        VL_ARGS(req, mkdir)->mode = 0755;
        VL_ARGS(req, mkdir)->gfid = rd_dir_gfid;
        VL_ARGS(req, mkdir)->want_lease = true;
        vl_test_wind(req, &res);
        while (rd_round(t, &res, rd_mkdir_leased, &rd))
            ;
        rd_wait_done(t, &res);
        rd_mkdir_exists = 0;
        assert_int_equal(res.status, 0);
        assert_int_equal(res.reply.is_leased, want[k]);
        vl_test_result_clear(&res);
        vl_inode_unref(fresh);
    }
}


/* A stale copy on a non-hashed brick (EEXIST there) did not get the
 * layout with the mkdir: it alone gets it in a third round. */
static void
test_mkdir_stale_copy_gets_layout(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char name[32];
    vl_inode_t *fresh;

    uint64_t tasks = dist_priv(t->dht)->n_tasks;

    rd_mkdir_exists = 1ULL << 2;
    rd_name_on(t, 0, "d", name, sizeof(name));
    rd_mkdir_start(t, name, &fresh, &res);
    assert_true(rd_round(t, &res, rd_mkdir_ok, &rd));
    assert_int_equal(rd.mask, 1ULL << 0);
    assert_true(rd_round(t, &res, rd_mkdir_ok, &rd));
    assert_int_equal(rd.mask, 0xeULL);
    assert_true(rd_round(t, &res, rd_mkdir_ok, &rd));
    assert_int_equal(rd.mask, 1ULL << 2);
    assert_int_equal(rd.op[2], VL_FOP_SETXATTR);
    assert_false(rd_round(t, &res, rd_mkdir_ok, &rd));
    rd_wait_done(t, &res);
    rd_mkdir_exists = 0;
    assert_int_equal(res.status, 0);
    /* Only the stale copy's layout needed a worker. */
    assert_int_equal(dist_priv(t->dht)->n_tasks, tasks + 1);
    rd_mkdir_check_layouts();
    vl_test_result_clear(&res);
    vl_inode_unref(fresh);
}


/* SETXATTRs of the layout still to answer ESTALE: the stale copy's GFID
 * has no handle on its brick yet (another client's heal between its GFID
 * and its handle), or never (another directory). */
static int rd_setxattr_stale_left;

static int
rd_mkdir_ok_stale(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    if (r->op == VL_FOP_SETXATTR && rd_setxattr_stale_left > 0) {
        rd_setxattr_stale_left--;
        return -ESTALE;
    }
    return rd_mkdir_ok(mock, r, ia);
}


/* The stale copy is still being made by another client's heal: its
 * layout answers ESTALE twice, then takes. The mkdir retries and
 * succeeds; nothing is removed (before, the copies made were removed and
 * the other client's copy stayed alone on a brick without the name). */
static void
test_mkdir_stale_copy_still_being_made(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char name[32];
    vl_inode_t *fresh;

    rd_mkdir_exists = 1ULL << 2;
    rd_setxattr_stale_left = 2;
    rd_name_on(t, 0, "d", name, sizeof(name));
    rd_mkdir_start(t, name, &fresh, &res);
    assert_true(rd_round(t, &res, rd_mkdir_ok_stale, &rd));
    assert_int_equal(rd.mask, 1ULL << 0);
    assert_true(rd_round(t, &res, rd_mkdir_ok_stale, &rd));
    assert_int_equal(rd.mask, 0xeULL);
    for (int k = 0; k < 3; k++) { /* ESTALE, ESTALE, then set */
        assert_true(rd_round(t, &res, rd_mkdir_ok_stale, &rd));
        assert_int_equal(rd.mask, 1ULL << 2);
        assert_int_equal(rd.op[2], VL_FOP_SETXATTR);
    }
    assert_false(rd_round(t, &res, rd_mkdir_ok_stale, &rd));
    rd_wait_done(t, &res);
    rd_mkdir_exists = 0;
    assert_int_equal(rd_setxattr_stale_left, 0);
    assert_int_equal(res.status, 0);
    rd_mkdir_check_layouts();
    vl_test_result_clear(&res);
    vl_inode_unref(fresh);
}


/* The stale copy is another directory (its GFID never resolves there):
 * after the retries the copies made are removed and the mkdir fails
 * with ESTALE, as before the retries. */
static void
test_mkdir_stale_copy_of_another_dir(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char name[32];
    vl_inode_t *fresh;
    int n_setxattr = 0;

    rd_mkdir_exists = 1ULL << 2;
    rd_setxattr_stale_left = 1000;
    rd_name_on(t, 0, "d", name, sizeof(name));
    rd_mkdir_start(t, name, &fresh, &res);
    assert_true(rd_round(t, &res, rd_mkdir_ok_stale, &rd));
    assert_true(rd_round(t, &res, rd_mkdir_ok_stale, &rd));
    for (;;) {
        assert_true(rd_round(t, &res, rd_mkdir_ok_stale, &rd));
        if (rd.op[2] != VL_FOP_SETXATTR)
            break;
        n_setxattr++;
    }
    /* One try and six retries, then the rmdir of the copies made. */
    assert_int_equal(n_setxattr, 7);
    assert_int_equal(rd.mask, 0xbULL);
    for (int i = 0; i < RD_N; i++)
        if (rd.mask & (1ULL << i))
            assert_int_equal(rd.op[i], VL_FOP_RMDIR);
    assert_false(rd_round(t, &res, rd_mkdir_ok_stale, &rd));
    rd_wait_done(t, &res);
    rd_mkdir_exists = 0;
    rd_setxattr_stale_left = 0;
    assert_int_equal(res.status, -ESTALE);
    vl_test_result_clear(&res);
    vl_inode_unref(fresh);
}


static int
rd_mkdir_lost(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    (void)mock;
    (void)r;
    (void)ia;
    return -EEXIST;
}


static void
test_mkdir_exists_on_hashed_touches_nothing_else(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char name[32];
    vl_inode_t *fresh;

    rd_name_on(t, 3, "d", name, sizeof(name));
    rd_mkdir_start(t, name, &fresh, &res);
    assert_true(rd_round(t, &res, rd_mkdir_lost, &rd));
    assert_int_equal(rd.mask, 1ULL << 3);
    assert_false(rd_round(t, &res, rd_mkdir_lost, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, -EEXIST);
    for (int i = 0; i < RD_N; i++)
        assert_int_equal(vl_mock_received(t->m[i]), i == 3 ? 1 : 0);
    vl_test_result_clear(&res);
    vl_inode_unref(fresh);
}


/* ---- lookup of a directory ---- */

static vl_xlator_t *rd_dht;
static bool rd_lookup_ignores_xattr; /* mocks answer lookups without it */


/* mock's range of the default committed layout, encoded (owned). */
static char *
rd_dir_range(int mock)
{
    struct dist_layout *l = dist_layout_new(rd_dht, RD_N);
    unsigned char *v = vl_malloc(rd_dht, DIST_LAYOUT_SIZE, 0);

    assert_non_null(l);
    assert_non_null(v);
    dist_layout_default(l, dist_mask_none(), 1, DIST_FLAG_COMMITTED);
    dist_layout_encode(&l->r[mock], v);
    vl_free(l);
    return (char *)v;
}


static int
rd_dir_answer(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    if (r->op == VL_FOP_LOOKUP) {
        ia->gfid = rd_dir_gfid;
        ia->mode = S_IFDIR | 0755;
        ia->nlink = 2;
        if (r->args.lookup.xattr_name != NULL && !rd_lookup_ignores_xattr) {
            assert_string_equal(r->args.lookup.xattr_name,
                                DIST_XATTR_LAYOUT);
            r->reply.xattr = rd_dir_range(mock);
            r->reply.xattr_len = DIST_LAYOUT_SIZE;
        }
        return 0;
    }
    if (r->op == VL_FOP_GETXATTR) {
        assert_true(vl_gfid_equal(&r->args.getxattr.loc.inode->gfid,
                                  &rd_dir_gfid));
        r->reply.xattr = rd_dir_range(mock);
        r->reply.count = DIST_LAYOUT_SIZE;
        return 0;
    }
    return -ENOTSUP;
}


/* Winds a lookup of a new directory name hashed to subvolume hashed
 * (name: its buffer, 32 bytes), the mocks answering with or without the
 * layout in their lookups. */
static void
rd_dir_lookup_start(struct rd *t, int hashed, bool ignores_xattr,
                    char *name, vl_inode_t *fresh,
                    struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(t->dht, VL_FOP_LOOKUP);

    assert_non_null(req);
    rd_dht = t->dht;
    rd_lookup_ignores_xattr = ignores_xattr;
    vl_gfid_generate(&rd_dir_gfid);
    rd_name_on(t, hashed, "x", name, 32);
    VL_ARGS(req, lookup)->loc.parent = t->root;
    VL_ARGS(req, lookup)->loc.name = name;
    VL_ARGS(req, lookup)->loc.inode = fresh;
    vl_test_wind(req, res);
}


static void
test_dir_lookup_layout_in_lookup_round(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char name[32], text[512];
    vl_inode_t *fresh = vl_inode_new(t->g->graph->itable);

    rd_dir_lookup_start(t, 1, false, name, fresh, &res);
    /* Round 1: the hashed brick says "directory". */
    assert_true(rd_round(t, &res, rd_dir_answer, &rd));
    assert_int_equal(rd.mask, 1ULL << 1);
    /* Round 2: on every brick at once, one lookup that brings the
     * layout. */
    assert_true(rd_round(t, &res, rd_dir_answer, &rd));
    assert_int_equal(rd.mask, 0xf);
    for (int i = 0; i < RD_N; i++)
        assert_int_equal(rd.n[i], 1);
    assert_false(rd_round(t, &res, rd_dir_answer, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    assert_true(vl_gfid_equal(&res.reply.iatt.gfid, &rd_dir_gfid));
    vl_test_result_clear(&res);

    /* The layout read that way is the one stored (no repair was sent). */
    {
        vl_inode_t *dir = vl_inode_find(t->g->graph->itable, &rd_dir_gfid);
        struct dist_inode_ctx *ctx;

        if (dir == NULL) /* the test does not link: the fresh one holds it */
            dir = vl_inode_ref(fresh);
        ctx = dist_ictx(t->dht, dir);
        assert_non_null(ctx->layout);
        snprintf(text, sizeof(text), "%u", ctx->layout->r[3].stop);
        assert_string_equal(text, "4294967295");
        assert_true(dist_layout_is_committed(ctx->layout));
        vl_inode_unref(dir);
    }
    vl_inode_unref(fresh);
}


/* Lookups answered without the layout (a translator below answered them
 * itself): a worker asks again and reads the layout by getxattr, and no
 * repair follows. */
static void
test_dir_lookup_layout_fallback(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char name[32];
    vl_inode_t *fresh = vl_inode_new(t->g->graph->itable);
    vl_inode_t *dir;

    rd_dir_lookup_start(t, 2, true, name, fresh, &res);
    assert_true(rd_round(t, &res, rd_dir_answer, &rd));
    assert_int_equal(rd.mask, 1ULL << 2);
    assert_true(rd_round(t, &res, rd_dir_answer, &rd)); /* lookups */
    assert_int_equal(rd.mask, 0xf);
    /* No layout with them: a worker asks again (dist_dir_sync), then
     * reads the layout apart (a rare case: one more round). */
    assert_true(rd_round(t, &res, rd_dir_answer, &rd)); /* lookups */
    assert_int_equal(rd.mask, 0xf);
    assert_true(rd_round(t, &res, rd_dir_answer, &rd)); /* getxattrs */
    assert_int_equal(rd.mask, 0xf);
    for (int i = 0; i < RD_N; i++)
        assert_int_equal(rd.n[i], 1);
    assert_false(rd_round(t, &res, rd_dir_answer, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
    dir = vl_inode_find(t->g->graph->itable, &rd_dir_gfid);
    if (dir == NULL)
        dir = vl_inode_ref(fresh);
    assert_non_null(dist_ictx(t->dht, dir)->layout);
    assert_true(dist_layout_is_committed(dist_ictx(t->dht, dir)->layout));
    vl_inode_unref(dir);
    vl_inode_unref(fresh);
    rd_lookup_ignores_xattr = false;
}


static int
rd_rmdir_one_full(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    (void)ia;
    if (r->op == VL_FOP_RMDIR && mock == 3)
        return -ENOTEMPTY;
    return 0;
}


/* rmdir: every brick but the name's hashed one in one round, then the
 * hashed one, answered on the callbacks (no worker thread); a copy that
 * is not empty (holding a real entry) hands it to a worker, which puts
 * the removed copies back and answers ENOTEMPTY: the hashed copy is
 * never removed then. */
static void
test_rmdir_hashed_last(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    uint64_t tasks = dist_priv(t->dht)->n_tasks;
    vl_req_t *req = vl_req_new(t->dht, VL_FOP_RMDIR);
    char gone[32], full[32];
    bool is_hashed_rmdir = false;

    rd_name_on(t, 1, "gone", gone, sizeof(gone));
    rd_name_on(t, 0, "full", full, sizeof(full));
    assert_non_null(req);
    VL_ARGS(req, rmdir)->loc.parent = t->root;
    VL_ARGS(req, rmdir)->loc.name = gone;
    vl_test_wind(req, &res);
    assert_true(rd_round(t, &res, rd_ok, &rd));
    assert_int_equal(rd.mask, 0xdULL);
    for (int i = 0; i < RD_N; i++)
        if (i != 1)
            assert_int_equal(rd.op[i], VL_FOP_RMDIR);
    assert_true(rd_round(t, &res, rd_ok, &rd));
    assert_int_equal(rd.mask, 0x2ULL);
    assert_int_equal(rd.op[1], VL_FOP_RMDIR);
    assert_false(rd_round(t, &res, rd_ok, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    assert_int_equal(dist_priv(t->dht)->n_tasks, tasks);
    vl_test_result_clear(&res);

    /* Not empty on brick 3: the worker looks at what is there (lookup,
     * opendir, readdir: not only link files) and answers ENOTEMPTY; the
     * hashed brick 0 gets no rmdir. */
    req = vl_req_new(t->dht, VL_FOP_RMDIR);
    assert_non_null(req);
    VL_ARGS(req, rmdir)->loc.parent = t->root;
    VL_ARGS(req, rmdir)->loc.name = full;
    vl_test_wind(req, &res);
    assert_true(rd_round(t, &res, rd_rmdir_one_full, &rd));
    assert_int_equal(rd.mask, 0xeULL);
    while (rd_round(t, &res, rd_rmdir_one_full, &rd))
        if ((rd.mask & 1) && rd.op[0] == VL_FOP_RMDIR)
            is_hashed_rmdir = true;
    rd_wait_done(t, &res);
    assert_int_equal(res.status, -ENOTEMPTY);
    assert_false(is_hashed_rmdir);
    assert_int_equal(dist_priv(t->dht)->n_tasks, tasks + 1);
    vl_test_result_clear(&res);
}


/* A named lookup that finds the data away from the name's hashed brick,
 * in a task that outlives the parent's layout trust: the layout is read
 * again, and the inode still says where the name hashes. Before, the aged
 * layout counted as none: no hashed brick, so pathinfo named the data's
 * brick alone and the rebalance took the file for in place (a file left
 * on a brick being removed). */
static vl_gfid_t lk_gfid;
static unsigned lk_layout_reads;

static int
lk_answer(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    struct vl_lookup_args *a;

    if (r->op != VL_FOP_LOOKUP)
        return rd_ok(mock, r, ia);
    a = VL_ARGS(r, lookup);
    if (a->loc.name == NULL) /* the root read again, with its layout */
        return rd_answer_dir_read(mock, r, ia, &a->loc.inode->gfid,
                                  &lk_layout_reads);
    if (mock == 1) { /* the hashed brick: a link file */
        ia->gfid = lk_gfid;
        ia->mode = S_IFREG | S_ISVTX;
        ia->nlink = 1;
        return 0;
    }
    if (mock == 3) { /* the data */
        ia->gfid = lk_gfid;
        ia->mode = S_IFREG | 0644;
        ia->nlink = 1;
        ia->size = 10;
        return 0;
    }
    return -ENOENT;
}


static void
test_lookup_away_layout_aged_in_the_task(void **state)
{
    struct rd *t = *state;
    struct dist_inode_ctx *ctx = dist_ictx(t->dht, t->root);
    struct vl_test_result res = {0};
    struct rd_round rd;
    vl_inode_t *f = vl_inode_new(t->root->table);
    vl_req_t *req;
    char name[32];
    int rounds = 0;

    assert_non_null(f);
    rd_name_on(t, 1, "lk", name, sizeof(name));
    vl_gfid_generate(&lk_gfid);
    lk_layout_reads = 0;
    req = vl_req_new(t->dht, VL_FOP_LOOKUP);
    assert_non_null(req);
    VL_ARGS(req, lookup)->loc.parent = t->root;
    VL_ARGS(req, lookup)->loc.name = name;
    VL_ARGS(req, lookup)->loc.inode = f;
    vl_test_wind(req, &res);
    /* The hashed brick has the link file: the task asks every brick. */
    assert_true(rd_round(t, &res, lk_answer, &rd));
    assert_int_equal(rd.mask, 1ULL << 1);
    for (int i = 0; i < 5000 && rd_pending(t) < RD_N; i++)
        usleep(1000);
    assert_int_equal(rd_pending(t), RD_N);
    /* While every brick answers, the root's layout grows old. */
    pthread_mutex_lock(&t->root->lock);
    ctx->layout_ms -= 10 * DIST_LAYOUT_TRUST_MS;
    pthread_mutex_unlock(&t->root->lock);
    while (rd_round(t, &res, lk_answer, &rd))
        assert_true(++rounds < 10);
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    assert_true(vl_gfid_equal(&res.reply.iatt.gfid, &lk_gfid));
    assert_int_equal(lk_layout_reads, 1);
    vl_test_result_clear(&res);

    req = vl_req_new(t->dht, VL_FOP_GETXATTR);
    assert_non_null(req);
    VL_ARGS(req, getxattr)->loc.inode = f;
    VL_ARGS(req, getxattr)->name = DIST_VX_PATHINFO;
    VL_ARGS(req, getxattr)->size = 256;
    vl_test_wind(req, &res);
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    assert_non_null(res.reply.xattr);
    assert_string_equal(res.reply.xattr, "m3 hashed=m1 linkto");
    vl_test_result_clear(&res);
    vl_inode_unref(f);
}


int
main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_unlink_known_inode_one_brick,
                                        rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(
            test_unlink_known_inode_with_linkfile, rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_unlink_stale_inode_falls_back,
                                        rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_mkdir_stale_copy_still_being_made,
                                        rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_mkdir_stale_copy_of_another_dir,
                                        rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_dir_lookup_on_callbacks,
                                        rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_dir_lookup_with_hint, rd_setup,
                                        rd_teardown),
        cmocka_unit_test_setup_teardown(test_mkdir_lease_from_every_brick,
                                        rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_mkdir_stale_copy_gets_layout,
                                        rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_mkdir_hashed_first, rd_setup,
                                        rd_teardown),
        cmocka_unit_test_setup_teardown(
            test_mkdir_exists_on_hashed_touches_nothing_else, rd_setup,
            rd_teardown),
        cmocka_unit_test_setup_teardown(
            test_dir_lookup_layout_in_lookup_round, rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_dir_lookup_layout_fallback,
                                        rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_rmdir_hashed_last, rd_setup,
                                        rd_teardown),
        cmocka_unit_test_setup_teardown(
            test_lookup_away_layout_aged_in_the_task, rd_setup, rd_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("dist-rounds", tests, NULL, NULL);
}
