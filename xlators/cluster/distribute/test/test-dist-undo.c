/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-dist-undo: every namespace operation of distribute that changes
 * several bricks either completes on all of them or leaves every brick as
 * it was (issue 20). Four storage/posix bricks, each under a fault layer
 * ("test/fault", defined here) that can fail the k-th request it passes
 * with EIO. For each operation: one run without a fault gives the state
 * it must reach and how many requests each brick gets; then, for every
 * brick and every k, the operation runs again on a fresh volume with the
 * k-th request to that brick failed, and every brick's tree on disk
 * (names, types, modes, owners, GFIDs, layout ranges, link targets, the
 * test's user xattr) must equal its state before, with the error
 * answered, or the state of the fault-free run, with its answer.
 * GFIDs are derived from names so the states of separate runs compare.
 * Where the operation fails by itself (ENOTEMPTY) its undo runs without
 * a fault first, so the fault may hit the undo: a second failure, which
 * no undo can survive on that brick. There the bricks may also be in a
 * state that one lookup of the names heals back to the state before
 * (the anchor copy on the hashed brick kept), and must be nothing else.
 * Checked: directory rename onto an empty, a non-empty (on one brick
 * only: ENOTEMPTY, the repro) and no target; RENAME_EXCHANGE of
 * two directories; rmdir of an empty directory and of one non-empty on
 * one brick; mkdir; link to a name hashing elsewhere; unlink of a file
 * behind a link file; a file renamed to a name hashing elsewhere, onto a
 * file on another brick, onto one with data on a third brick, onto a
 * name of its own brick leading elsewhere, and back to its data's
 * brick; setattr, setxattr and removexattr of a
 * directory.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../../../builtin.h"
#include "dist-hash.h"
#include "dist-test.h"
#include "dist.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

#define UT_SNAP_MAX 65536

/* ---- the fault layer ---- */

static atomic_uint ut_count[DT_BRICKS]; /* requests passed per brick */
static atomic_int ut_arm_brick = -1;    /* brick whose request fails */
static atomic_uint ut_arm_k;            /* ... the k-th (1-based) */
static atomic_uint ut_n_failed;         /* faults injected */

struct ut_fault_conf {
    bool unused;
};

static const vl_option_t ut_fault_options[] = {VL_OPT_END};
static const char *const ut_fault_mem_types[] = {"misc", NULL};


static int
ut_fault_init(vl_xlator_t *xl, vl_err_t *err)
{
    int i = atoi(xl->name + 1); /* "f<i>" */

    if (xl->name[0] != 'f' || i < 0 || i >= DT_BRICKS) {
        vl_err_set(err, "fault layer name must be f0..f%d", DT_BRICKS - 1);
        return -EINVAL;
    }
    xl->priv = (void *)(intptr_t)(i + 1);
    return 0;
}


static void
ut_fault_fop(vl_xlator_t *xl, vl_req_t *req)
{
    int i = (int)(intptr_t)xl->priv - 1;
    unsigned k;

    /* The background statfs refresh comes when it likes: not a step. */
    if (req->op == VL_FOP_STATFS) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    k = atomic_fetch_add(&ut_count[i], 1) + 1;
    if (atomic_load(&ut_arm_brick) == i && atomic_load(&ut_arm_k) == k) {
        atomic_fetch_add(&ut_n_failed, 1);
        vl_unwind(req, -EIO);
        return;
    }
    vl_pass(req, VL_FIRST_CHILD(xl));
}


static const vl_xlator_class_t ut_fault_class = {
    .abi = VL_XLATOR_ABI,
    .type = "test/fault",
    .prefix = "fault",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD,
    .conf_size = sizeof(struct ut_fault_conf),
    .options = ut_fault_options,
    .mem_types = ut_fault_mem_types,
    .doc = "Test layer failing the k-th request to one brick.",
    .init = ut_fault_init,
    .fops = {
#define VL_FOP(UPPER, lower, flags) [VL_FOP_##UPPER] = ut_fault_fop,
#include "vol/fops.def"
#undef VL_FOP
    },
};


static void
ut_arm(int brick, unsigned k)
{
    for (int i = 0; i < DT_BRICKS; i++)
        atomic_store(&ut_count[i], 0);
    atomic_store(&ut_n_failed, 0);
    atomic_store(&ut_arm_k, k);
    atomic_store(&ut_arm_brick, brick);
}


/* ---- a volume: four posix bricks, each under its fault layer ---- */

static struct dt *
ut_open_with(bool with_locks)
{
    struct dt *t = calloc(1, sizeof(*t));
    char text[4096], dir[128];
    size_t len = 0;
    vl_volfile_t *vf;
    vl_err_t err = {{0}};
    union vl_fop_args a = {0};
    struct vl_reply r;

    assert_non_null(t);
    t->n_bricks = DT_BRICKS;
    vl_global_init();
    vl_log_set_level(getenv("UT_LOG") ? VL_LOG_DEBUG : VL_LOG_NONE);
    vl_registry_add(&xl_storage_posix);
    vl_registry_add(&xl_cluster_distribute);
    vl_registry_add(&ut_fault_class);
    vl_registry_add(&xl_features_locks);
    snprintf(t->base, sizeof(t->base), "/tmp/dist-undo-XXXXXX");
    assert_non_null(mkdtemp(t->base));
    for (int i = 0; i < DT_BRICKS; i++) {
        snprintf(dir, sizeof(dir), "%s/b%d", t->base, i);
        assert_int_equal(mkdir(dir, 0755), 0);
        if (with_locks)
            len += (size_t)snprintf(text + len, sizeof(text) - len,
                                    "volume s%d\n type storage/posix\n"
                                    " option directory %s\nend-volume\n"
                                    "volume b%d\n type features/locks\n"
                                    " subvolumes s%d\nend-volume\n",
                                    i, dir, i, i);
        else
            len += (size_t)snprintf(text + len, sizeof(text) - len,
                                    "volume b%d\n type storage/posix\n"
                                    " option directory %s\nend-volume\n",
                                    i, dir);
        len += (size_t)snprintf(text + len, sizeof(text) - len,
                                "volume f%d\n type test/fault\n"
                                " subvolumes b%d\nend-volume\n", i, i);
    }
    len += (size_t)snprintf(text + len, sizeof(text) - len,
                            "volume dht\n type cluster/distribute\n"
                            " option min-free-disk 0%%\n"
                            " subvolumes f0 f1 f2 f3\nend-volume\n");
    assert_true(len < sizeof(text) - 1);
    t->loop = vl_loop_new(0);
    assert_non_null(t->loop);
    vf = vl_volfile_parse(text, len, "undo.vol", &err);
    if (vf == NULL)
        fail_msg("volfile: %s", err.msg);
    t->graph = vl_graph_build(vf, t->loop, &err);
    vl_volfile_free(vf);
    if (t->graph == NULL)
        fail_msg("build: %s", err.msg);
    if (vl_graph_init(t->graph, &err) != 0)
        fail_msg("init: %s", err.msg);
    vl_graph_activate(t->graph);
    t->dist = t->graph->top;
    t->root = vl_inode_table_root(t->graph->itable);
    a.lookup.loc.inode = t->root;
    assert_int_equal(dt_call(t, VL_FOP_LOOKUP, &a, &r), 0);
    vl_reply_clear(&r);
    return t;
}


static struct dt *
ut_open(void)
{
    return ut_open_with(false);
}


static void
ut_close(struct dt *t)
{
    char cmd[128];

    vl_inode_unref(t->root);
    vl_graph_free(t->graph);
    vl_loop_free(t->loop);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", t->base);
    if (system(cmd) != 0)
        fprintf(stderr, "# could not remove %s\n", t->base);
    free(t);
}


/* A GFID from a name: the same object gets the same GFID in every run. */
static void
ut_gfid(const char *name, vl_gfid_t *g)
{
    uint32_t h = dist_hash_placement(name);

    memset(g, 0, sizeof(*g));
    for (int i = 0; i < 16; i += 4) {
        h = h * 2654435761u + 0x9e3779b9u + (uint32_t)i;
        memcpy((unsigned char *)g + i, &h, 4);
    }
    ((unsigned char *)g)[15] |= 1; /* never the null or root GFID */
}


static int
ut_mkdir(struct dt *t, vl_inode_t *parent, const char *name,
         vl_inode_t **out)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode = vl_inode_new(t->graph->itable);
    int rc;

    assert_non_null(inode);
    a.mkdir.loc.parent = parent;
    a.mkdir.loc.name = name;
    a.mkdir.loc.inode = inode;
    a.mkdir.mode = 0755;
    ut_gfid(name, &a.mkdir.gfid);
    rc = dt_call(t, VL_FOP_MKDIR, &a, &r);
    if (rc == 0 && out != NULL) {
        *out = vl_inode_link(inode, &r.iatt);
        assert_non_null(*out);
    }
    vl_inode_unref(inode);
    vl_reply_clear(&r);
    return rc;
}


static int
ut_create(struct dt *t, vl_inode_t *parent, const char *name,
          vl_inode_t **out)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode = vl_inode_new(t->graph->itable);
    vl_fd_t *fd;
    int rc;

    assert_non_null(inode);
    fd = vl_fd_new(inode, O_RDWR, 1);
    assert_non_null(fd);
    a.create.loc.parent = parent;
    a.create.loc.name = name;
    a.create.loc.inode = inode;
    a.create.flags = O_RDWR | O_CREAT | O_EXCL;
    a.create.mode = 0644;
    a.create.fd = fd;
    ut_gfid(name, &a.create.gfid);
    rc = dt_call(t, VL_FOP_CREATE, &a, &r);
    if (rc == 0 && out != NULL) {
        *out = vl_inode_link(inode, &r.iatt);
        assert_non_null(*out);
    }
    vl_fd_unref(fd);
    vl_inode_unref(inode);
    vl_reply_clear(&r);
    return rc;
}


/* ---- what the bricks hold ---- */

struct ut_snap {
    char *lines[UT_SNAP_MAX / 64];
    size_t n;
};


static void
ut_snap_add(struct ut_snap *s, int brick, const char *rel, const char *path)
{
    struct stat st;
    unsigned char gfid[16], lay[32];
    char linkto[64], user[64], line[512], hex[40];
    ssize_t n;
    size_t len;

    assert_int_equal(lstat(path, &st), 0);
    memset(gfid, 0, sizeof(gfid));
    n = lgetxattr(path, "trusted.mortar.gfid", gfid, sizeof(gfid));
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", n == 16 ? gfid[i] : 0);
    len = (size_t)snprintf(line, sizeof(line), "b%d %s %o %u:%u %s", brick,
                           rel, (unsigned)st.st_mode, (unsigned)st.st_uid,
                           (unsigned)st.st_gid, hex);
    n = lgetxattr(path, DIST_XATTR_LAYOUT, lay, sizeof(lay));
    if (n == DIST_LAYOUT_SIZE) {
        struct dist_range r;

        /* The range, not the generation: a copy remade by heal gets a
         * refitted layout with the same ranges, one generation on. */
        assert_int_equal(dist_layout_decode(lay, (size_t)n, &r), 0);
        len += (size_t)snprintf(line + len, sizeof(line) - len,
                                " range=%x:%08x-%08x",
                                r.flags & DIST_FLAG_HAS_RANGE,
                                r.start, r.stop);
    }
    n = lgetxattr(path, DIST_XATTR_LINKTO, linkto, sizeof(linkto) - 1);
    if (n > 0) {
        linkto[n] = '\0';
        len += (size_t)snprintf(line + len, sizeof(line) - len,
                                " linkto=%s", linkto);
    }
    n = lgetxattr(path, "user.t", user, sizeof(user) - 1);
    if (n >= 0) {
        user[n] = '\0';
        snprintf(line + len, sizeof(line) - len, " user.t=%s", user);
    }
    assert_true(s->n < sizeof(s->lines) / sizeof(s->lines[0]));
    s->lines[s->n] = strdup(line);
    assert_non_null(s->lines[s->n]);
    s->n++;
}


static void
ut_snap_walk(struct ut_snap *s, int brick, const char *rel,
             const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char crel[1024], cpath[2048];

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (rel[0] == '\0' && strcmp(e->d_name, ".mortar") == 0)
            continue; /* the brick's own handles */
        snprintf(crel, sizeof(crel), "%s/%s", rel, e->d_name);
        snprintf(cpath, sizeof(cpath), "%s/%s", path, e->d_name);
        ut_snap_add(s, brick, crel, cpath);
        if (e->d_type == DT_DIR)
            ut_snap_walk(s, brick, crel, cpath);
    }
    closedir(d);
}


static int
ut_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}


/* Every brick's tree, one sorted text. Caller frees. */
static char *
ut_snapshot(struct dt *t)
{
    struct ut_snap *s = calloc(1, sizeof(*s));
    size_t size = 1, off = 0;
    char path[PATH_MAX], *out;

    assert_non_null(s);
    for (int i = 0; i < DT_BRICKS; i++) {
        dt_path(t, i, "", path, sizeof(path));
        ut_snap_add(s, i, "", path);
        ut_snap_walk(s, i, "", path);
    }
    qsort(s->lines, s->n, sizeof(s->lines[0]), ut_cmp_str);
    for (size_t k = 0; k < s->n; k++)
        size += strlen(s->lines[k]) + 1;
    out = malloc(size);
    assert_non_null(out);
    for (size_t k = 0; k < s->n; k++) {
        off += (size_t)sprintf(out + off, "%s\n", s->lines[k]);
        free(s->lines[k]);
    }
    out[off] = '\0';
    free(s);
    return out;
}


/* ---- the sweep ---- */

/* What one scenario makes before the operation, and the operation. */
struct ut_ctx {
    vl_inode_t *a;  /* first object prepared */
    vl_inode_t *b;  /* second, or NULL */
    char n1[32];    /* names chosen by prepare */
    char n2[32];
};

struct ut_scenario {
    const char *what;
    void (*prepare)(struct dt *t, struct ut_ctx *c);
    int (*op)(struct dt *t, struct ut_ctx *c);
    int status;     /* the answer without a fault */
    const char *heal[3]; /* names a lookup heals when status != 0 */
};


static void
ut_ctx_clear(struct ut_ctx *c)
{
    if (c->a != NULL)
        vl_inode_unref(c->a);
    if (c->b != NULL)
        vl_inode_unref(c->b);
    memset(c, 0, sizeof(*c));
}


/* Runs s once with the k-th request to brick failed (brick -1: none).
 * *before and *after (OUT) are the snapshots, counts (OUT, may be NULL)
 * the requests per brick; returns the operation's answer. */
static int
ut_run(const struct ut_scenario *s, int brick, unsigned k, char **before,
       char **after, char **healed, unsigned *counts)
{
    struct dt *t = ut_open();
    struct ut_ctx c;
    int rc;

    memset(&c, 0, sizeof(c));
    ut_arm(-1, 0);
    s->prepare(t, &c);
    *before = ut_snapshot(t);
    ut_arm(brick, k);
    rc = s->op(t, &c);
    if (counts != NULL)
        for (int i = 0; i < DT_BRICKS; i++)
            counts[i] = atomic_load(&ut_count[i]);
    ut_arm(-1, 0);
    *after = ut_snapshot(t);
    if (healed != NULL) {
        for (int i = 0; i < 3 && s->heal[i] != NULL; i++)
            (void)dt_lookup(t, t->root, s->heal[i], NULL, NULL);
        *healed = ut_snapshot(t);
    }
    ut_ctx_clear(&c);
    ut_close(t);
    return rc;
}


static void
ut_sweep(const struct ut_scenario *s)
{
    unsigned counts[DT_BRICKS];
    char *before0, *done, *before, *after, *healed;
    int rc, n_runs = 0, n_undone = 0, n_healed = 0;

    rc = ut_run(s, -1, 0, &before0, &done, NULL, counts);
    if (rc != s->status || (s->status != 0 && strcmp(before0, done) != 0)) {
        fprintf(stderr, "before:\n%s\nafter:\n%s", before0, done);
        fail_msg("%s without a fault: %d (want %d)", s->what, rc,
                 s->status);
    }
    for (int i = 0; i < DT_BRICKS; i++) {
        for (unsigned k = 1; k <= counts[i]; k++) {
            rc = ut_run(s, i, k, &before, &after, &healed, NULL);
            assert_string_equal(before, before0);
            n_runs++;
            if (strcmp(after, before) == 0 && rc != 0) {
                n_undone++;
            } else if (s->status != 0 && rc == s->status
                       && strcmp(healed, before) == 0) {
                n_healed++; /* the fault hit the undo: lookup heals */
            } else if (strcmp(after, done) != 0 || rc != s->status) {
                fprintf(stderr, "before:\n%s\nwhen done:\n%s\nnow:\n%s",
                        before, done, after);
                fail_msg("%s, request %u to brick %d failed: answer %d "
                         "(want %d, or an error with nothing changed)",
                         s->what, k, i, rc, s->status);
            }
            free(before);
            free(after);
            free(healed);
        }
    }
    /* Every fault was somewhere: at least one run must have failed. */
    assert_true(n_runs > 0);
    print_message("# %s: %d faults, %d undone, %d healed by a lookup, %d "
                  "completed\n", s->what, n_runs, n_undone, n_healed,
                  n_runs - n_undone - n_healed);
    free(before0);
    free(done);
}


/* ---- scenarios ---- */

static int
ut_rename(struct dt *t, vl_inode_t *inode, const char *from, const char *to,
          uint32_t flags)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.rename.oldloc.parent = t->root;
    a.rename.oldloc.name = from;
    a.rename.oldloc.inode = inode;
    a.rename.newloc.parent = t->root;
    a.rename.newloc.name = to;
    a.rename.flags = flags;
    rc = dt_call(t, VL_FOP_RENAME, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


/* n0 (holding a file) and n1, empty. */
static void
prep_two_dirs(struct dt *t, struct ut_ctx *c)
{
    char f[32];

    assert_int_equal(ut_mkdir(t, t->root, "n0", &c->a), 0);
    assert_int_equal(ut_mkdir(t, t->root, "n1", &c->b), 0);
    dt_name_on((dt_hashed("n0") + 1) % DT_BRICKS, "src", f, sizeof(f));
    assert_int_equal(ut_create(t, c->a, f, NULL), 0);
}


/* As prep_two_dirs, and a file in n1 on a brick that is not n1's hashed
 * one: only that brick's rename can say ENOTEMPTY. */
static void
prep_full_target(struct dt *t, struct ut_ctx *c)
{
    char f[32];

    prep_two_dirs(t, c);
    dt_name_on((dt_hashed("n1") + 2) % DT_BRICKS, "f", f, sizeof(f));
    assert_int_equal(ut_create(t, c->b, f, NULL), 0);
}


static int
op_rename_n0_n1(struct dt *t, struct ut_ctx *c)
{
    return ut_rename(t, c->a, "n0", "n1", 0);
}


static int
op_rename_n0_new(struct dt *t, struct ut_ctx *c)
{
    return ut_rename(t, c->a, "n0", "n2", 0);
}


static int
op_exchange(struct dt *t, struct ut_ctx *c)
{
    return ut_rename(t, c->a, "n0", "n1", RENAME_EXCHANGE);
}


static void
prep_dir(struct dt *t, struct ut_ctx *c)
{
    assert_int_equal(ut_mkdir(t, t->root, "d", &c->a), 0);
}


static void
prep_dir_with_file(struct dt *t, struct ut_ctx *c)
{
    char f[32];

    prep_dir(t, c);
    dt_name_on((dt_hashed("d") + 1) % DT_BRICKS, "f", f, sizeof(f));
    assert_int_equal(ut_create(t, c->a, f, NULL), 0);
}


static void
prep_nothing(struct dt *t, struct ut_ctx *c)
{
    (void)t;
    (void)c;
}


static int
op_rmdir(struct dt *t, struct ut_ctx *c)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.rmdir.loc.parent = t->root;
    a.rmdir.loc.name = "d";
    a.rmdir.loc.inode = c->a;
    rc = dt_call(t, VL_FOP_RMDIR, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


static int
op_mkdir(struct dt *t, struct ut_ctx *c)
{
    return ut_mkdir(t, t->root, "d", &c->a);
}


/* A file, and a name for its hard link hashing to another brick. */
static void
prep_file(struct dt *t, struct ut_ctx *c)
{
    int h;

    dt_name_on(1, "file", c->n1, sizeof(c->n1));
    assert_int_equal(ut_create(t, t->root, c->n1, &c->a), 0);
    h = dt_hashed(c->n1);
    dt_name_on((h + 2) % DT_BRICKS, "link", c->n2, sizeof(c->n2));
}


static int
op_link(struct dt *t, struct ut_ctx *c)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.link.oldloc.inode = c->a;
    a.link.newloc.parent = t->root;
    a.link.newloc.name = c->n2;
    rc = dt_call(t, VL_FOP_LINK, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


static int
op_chmod(struct dt *t, struct ut_ctx *c)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.setattr.loc.inode = c->a;
    a.setattr.attr.mode = S_IFDIR | 0700;
    a.setattr.attr.uid = 1234;
    a.setattr.valid = VL_SET_MODE | VL_SET_UID;
    rc = dt_call(t, VL_FOP_SETATTR, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


/* A file whose data is on one brick and whose name hashes to another
 * (a link file there): renamed there from a name of the data's brick. */
static void
prep_file_behind_link(struct dt *t, struct ut_ctx *c)
{
    prep_file(t, c);
    assert_int_equal(ut_rename(t, c->a, c->n1, c->n2, 0), 0);
}


static int
op_rename_file_away(struct dt *t, struct ut_ctx *c)
{
    return ut_rename(t, c->a, c->n1, c->n2, 0);
}


/* A file on its hashed brick and a second file under a name hashing
 * elsewhere (data there): the rename replaces the second. */
static void
prep_two_files(struct dt *t, struct ut_ctx *c)
{
    prep_file(t, c);
    assert_int_equal(ut_create(t, t->root, c->n2, &c->b), 0);
}


/* A file on its hashed brick and a second file under a name hashing to
 * another brick, its data on a third (renamed there from a name of the
 * third): the rename replaces it, on three bricks. */
static void
prep_target_on_third(struct dt *t, struct ut_ctx *c)
{
    char x[32];

    prep_file(t, c);
    dt_name_on((dt_hashed(c->n1) + 1) % DT_BRICKS, "third", x, sizeof(x));
    assert_int_equal(ut_create(t, t->root, x, &c->b), 0);
    assert_int_equal(ut_rename(t, c->b, x, c->n2, 0), 0);
}


/* A file on its hashed brick, and a name hashing to the same brick that
 * leads through a link file there to data on another brick. */
static void
prep_target_behind_link_here(struct dt *t, struct ut_ctx *c)
{
    char x[32];
    int h;

    prep_file(t, c);
    h = dt_hashed(c->n1);
    dt_name_on(h, "here", c->n2, sizeof(c->n2));
    dt_name_on((h + 1) % DT_BRICKS, "there", x, sizeof(x));
    assert_int_equal(ut_create(t, t->root, x, &c->b), 0);
    assert_int_equal(ut_rename(t, c->b, x, c->n2, 0), 0);
}


/* A file behind a link file, renamed to a name of its data's brick. */
static int
op_rename_file_home(struct dt *t, struct ut_ctx *c)
{
    return ut_rename(t, c->a, c->n2, c->n1, 0);
}


static int
op_unlink_linked(struct dt *t, struct ut_ctx *c)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.unlink.loc.parent = t->root;
    a.unlink.loc.name = c->n2;
    a.unlink.loc.inode = c->a;
    rc = dt_call(t, VL_FOP_UNLINK, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


static int
op_setxattr(struct dt *t, struct ut_ctx *c)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.setxattr.loc.inode = c->a;
    a.setxattr.name = "user.t";
    a.setxattr.value = "new";
    a.setxattr.size = 3;
    rc = dt_call(t, VL_FOP_SETXATTR, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


static void
prep_dir_xattr(struct dt *t, struct ut_ctx *c)
{
    prep_dir(t, c);
    for (int i = 0; i < DT_BRICKS; i++) {
        char path[PATH_MAX];

        dt_path(t, i, "d", path, sizeof(path));
        assert_int_equal(lsetxattr(path, "user.t", "old", 3, 0), 0);
    }
}


static int
op_removexattr(struct dt *t, struct ut_ctx *c)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.removexattr.loc.inode = c->a;
    a.removexattr.name = "user.t";
    rc = dt_call(t, VL_FOP_REMOVEXATTR, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


static const struct ut_scenario ut_rename_full = {
    "rename of a directory onto one not empty on one brick",
    prep_full_target, op_rename_n0_n1, -ENOTEMPTY, {"n0", "n1", NULL}};
static const struct ut_scenario ut_rename_empty = {
    "rename of a directory onto an empty one", prep_two_dirs,
    op_rename_n0_n1, 0};
static const struct ut_scenario ut_rename_new = {
    "rename of a directory to a new name", prep_two_dirs, op_rename_n0_new,
    0};
static const struct ut_scenario ut_exchange = {
    "RENAME_EXCHANGE of two directories", prep_full_target, op_exchange, 0};
static const struct ut_scenario ut_rmdir_empty = {
    "rmdir of an empty directory", prep_dir, op_rmdir, 0};
static const struct ut_scenario ut_rmdir_full = {
    "rmdir of a directory not empty on one brick", prep_dir_with_file,
    op_rmdir, -ENOTEMPTY, {"d", NULL, NULL}};
static const struct ut_scenario ut_mkdir_s = {
    "mkdir", prep_nothing, op_mkdir, 0};
static const struct ut_scenario ut_link = {
    "link to a name hashing elsewhere", prep_file, op_link, 0};
static const struct ut_scenario ut_rename_file = {
    "rename of a file to a name hashing elsewhere", prep_file,
    op_rename_file_away, 0};
static const struct ut_scenario ut_rename_file_over = {
    "rename of a file onto a file on another brick", prep_two_files,
    op_rename_file_away, 0};
static const struct ut_scenario ut_rename_file_third = {
    "rename of a file onto a file with data on a third brick",
    prep_target_on_third, op_rename_file_away, 0};
static const struct ut_scenario ut_rename_file_linked_here = {
    "rename of a file onto a name of its brick leading elsewhere",
    prep_target_behind_link_here, op_rename_file_away, 0};
static const struct ut_scenario ut_rename_file_home = {
    "rename of a file behind a link file to its data's brick",
    prep_file_behind_link, op_rename_file_home, 0};
static const struct ut_scenario ut_chmod = {
    "setattr of a directory", prep_dir, op_chmod, 0};
static const struct ut_scenario ut_unlink = {
    "unlink of a file behind a link file", prep_file_behind_link,
    op_unlink_linked, 0};
static const struct ut_scenario ut_setxattr = {
    "setxattr of a directory", prep_dir_xattr, op_setxattr, 0};
static const struct ut_scenario ut_removexattr = {
    "removexattr of a directory", prep_dir_xattr, op_removexattr, 0};


static void
test_rename_dir_onto_full(void **state)
{
    (void)state;
    ut_sweep(&ut_rename_full);
}


static void
test_rename_dir_onto_empty(void **state)
{
    (void)state;
    ut_sweep(&ut_rename_empty);
}


static void
test_rename_dir_new(void **state)
{
    (void)state;
    ut_sweep(&ut_rename_new);
}


static void
test_exchange_dirs(void **state)
{
    (void)state;
    ut_sweep(&ut_exchange);
}


static void
test_rmdir_empty(void **state)
{
    (void)state;
    ut_sweep(&ut_rmdir_empty);
}


static void
test_rmdir_full(void **state)
{
    (void)state;
    ut_sweep(&ut_rmdir_full);
}


static void
test_mkdir(void **state)
{
    (void)state;
    ut_sweep(&ut_mkdir_s);
}


static void
test_link(void **state)
{
    (void)state;
    ut_sweep(&ut_link);
}


static void
test_unlink_linked(void **state)
{
    (void)state;
    ut_sweep(&ut_unlink);
}


static void
test_rename_file(void **state)
{
    (void)state;
    ut_sweep(&ut_rename_file);
}


static void
test_rename_file_over(void **state)
{
    (void)state;
    ut_sweep(&ut_rename_file_over);
}


static void
test_rename_file_third(void **state)
{
    (void)state;
    ut_sweep(&ut_rename_file_third);
}


static void
test_rename_file_linked_here(void **state)
{
    (void)state;
    ut_sweep(&ut_rename_file_linked_here);
}


static void
test_rename_file_home(void **state)
{
    (void)state;
    ut_sweep(&ut_rename_file_home);
}


static void
test_setattr_dir(void **state)
{
    (void)state;
    ut_sweep(&ut_chmod);
}


static void
test_setxattr_dir(void **state)
{
    (void)state;
    ut_sweep(&ut_setxattr);
}


static void
test_removexattr_dir(void **state)
{
    (void)state;
    ut_sweep(&ut_removexattr);
}


/* ---- two directory renames onto one name wait for each other ---- */

struct ut_bg {
    struct dt *t;
    vl_inode_t *dir;
    uint32_t flags;     /* of the rename */
    atomic_bool is_done;
    int status;
};


static void *
ut_bg_rename(void *arg)
{
    struct ut_bg *bg = arg;

    bg->status = ut_rename(bg->t, bg->dir, "n0", "n1", bg->flags);
    atomic_store(&bg->is_done, true);
    return NULL;
}


static int
ut_entrylk(struct dt *t, const char *name, enum vl_lock_cmd cmd)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.entrylk.domain = "mortar.dht.rename";
    a.entrylk.loc.parent = t->root;
    a.entrylk.loc.name = name;
    a.entrylk.cmd = cmd;
    a.entrylk.type = F_WRLCK;
    rc = dt_call(t, VL_FOP_ENTRYLK, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


/* With features/locks on the bricks, a directory rename takes the entry
 * lock of its new name on that name's hashed brick (where distribute's
 * own entrylk goes): while another owner (the test, lk_owner 77) holds
 * it, the rename waits; released, it runs and the rename's own locks are
 * gone after it (the test can take the name again at once). flags: of
 * the rename (RENAME_EXCHANGE: the two directories swap). */
static void
ut_name_lock_wait(uint32_t flags)
{
    struct dt *t = ut_open_with(true);
    struct ut_bg bg = {.t = t, .flags = flags};
    pthread_t th;

    ut_arm(-1, 0);
    assert_int_equal(ut_mkdir(t, t->root, "n0", &bg.dir), 0);
    assert_int_equal(ut_mkdir(t, t->root, "n1", NULL), 0);
    t->caller.lk_owner = 77;
    assert_int_equal(ut_entrylk(t, "n1", VL_LOCK_TRY), 0);
    t->caller.lk_owner = 0;
    assert_int_equal(pthread_create(&th, NULL, ut_bg_rename, &bg), 0);
    usleep(300 * 1000);
    assert_false(atomic_load(&bg.is_done));
    assert_true(dt_exists(t, 0, "n0", NULL));
    t->caller.lk_owner = 77;
    assert_int_equal(ut_entrylk(t, "n1", VL_LOCK_UNLOCK), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(bg.status, 0);
    for (int i = 0; i < DT_BRICKS; i++) {
        assert_true(flags != 0 || !dt_exists(t, i, "n0", NULL));
        assert_true(dt_exists(t, i, "n1", NULL));
    }
    assert_int_equal(ut_entrylk(t, "n1", VL_LOCK_TRY), 0);
    assert_int_equal(ut_entrylk(t, "n0", VL_LOCK_TRY), 0);
    assert_int_equal(ut_entrylk(t, "n1", VL_LOCK_UNLOCK), 0);
    assert_int_equal(ut_entrylk(t, "n0", VL_LOCK_UNLOCK), 0);
    t->caller.lk_owner = 0;
    vl_inode_unref(bg.dir);
    ut_close(t);
}


static void
test_dir_rename_waits_for_name_lock(void **state)
{
    (void)state;
    ut_name_lock_wait(0);
}


/* RENAME_EXCHANGE of two directories takes the same locks. */
static void
test_dir_exchange_waits_for_name_lock(void **state)
{
    (void)state;
    ut_name_lock_wait(RENAME_EXCHANGE);
}


int
main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rename_dir_onto_full),
        cmocka_unit_test(test_rename_dir_onto_empty),
        cmocka_unit_test(test_rename_dir_new),
        cmocka_unit_test(test_exchange_dirs),
        cmocka_unit_test(test_rmdir_empty),
        cmocka_unit_test(test_rmdir_full),
        cmocka_unit_test(test_mkdir),
        cmocka_unit_test(test_link),
        cmocka_unit_test(test_unlink_linked),
        cmocka_unit_test(test_rename_file),
        cmocka_unit_test(test_rename_file_over),
        cmocka_unit_test(test_rename_file_third),
        cmocka_unit_test(test_rename_file_linked_here),
        cmocka_unit_test(test_rename_file_home),
        cmocka_unit_test(test_setattr_dir),
        cmocka_unit_test(test_setxattr_dir),
        cmocka_unit_test(test_removexattr_dir),
        cmocka_unit_test(test_dir_rename_waits_for_name_lock),
        cmocka_unit_test(test_dir_exchange_waits_for_name_lock),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("dist-undo", tests, NULL, NULL);
}
