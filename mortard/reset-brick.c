/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reset-brick: GlusterFS's way to give a brick of a replicated volume a
 * fresh disk at the same place:
 *
 *   volume reset-brick VOL HOST:BRICK start
 *       the brick is marked reset in the store (brick.N.reset: mortard
 *       neither restarts it nor starts it with the volume) and its
 *       process stops; volume status shows it offline. Clients go on
 *       with the other copies, which blame its slot for what changes.
 *   volume reset-brick VOL HOST:BRICK HOST:BRICK commit [force]
 *       brings the same brick back. A directory without the volume id
 *       (a new or reformatted disk, made if missing) takes plain commit;
 *       one that still has it (the old data) needs force, as in
 *       GlusterFS. Either way, as in replace-brick (replace-brick.c,
 *       doc/self-heal.md "A replaced brick"), the node running the
 *       command first makes every other brick of the set that answers
 *       blame the brick's slot at its root for entry and metadata
 *       (md_set_mark_others), so self-heal walks the whole tree onto it
 *       and no client reads it as good before; then the brick is
 *       stamped (if it had no volume id), the mark cleared in the store,
 *       the brick started and the self-heal daemon kicked.
 *
 * The brick keeps its id, port and slot: records that blame the slot
 * keep their meaning. Refused with nothing changed: another form, a
 * plain distribute volume (nothing could refill the brick), a volume
 * not started, a brick not in the volume, a commit naming another brick
 * (that is replace-brick), a commit without start, a start twice, a
 * directory with another volume's id, a running rebalance or an
 * uncommitted remove-brick, no other brick of the set answering. With
 * peers the checks run in the stage on every node (the brick's node
 * checks its directory) and the originator probes the set first.
 * Threads: the worker thread with md_state.lock held.
 */
#include "config.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "mortard.h"

#define MD_USAGE_RESET "volume reset-brick <VOLNAME> <SOURCE-BRICK> " \
                       "{{start} | {<NEW-BRICK> commit}}"
#define MD_RESET_FAIL "volume reset-brick: failed: "

enum md_reset_op {
    MD_RESET_BAD = 0,
    MD_RESET_START,        /* VOL BRICK start */
    MD_RESET_COMMIT,       /* VOL BRICK BRICK commit */
    MD_RESET_COMMIT_FORCE, /* VOL BRICK BRICK commit force */
};


static enum md_reset_op
md_reset_op(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[4], "start") == 0)
        return MD_RESET_START;
    if (argc == 6 && strcmp(argv[5], "commit") == 0)
        return MD_RESET_COMMIT;
    if (argc == 7 && strcmp(argv[5], "commit") == 0 &&
        strcmp(argv[6], "force") == 0)
        return MD_RESET_COMMIT_FORCE;
    return MD_RESET_BAD;
}


bool
md_reset_is_cmd(int argc, char **argv)
{
    return md_reset_op(argc, argv) != MD_RESET_BAD;
}


/* The local brick's directory: *has_id when it carries a volume id (0),
 * or -errno with err set (another volume's id, no parent). */
static int
md_reset_dir_check(const struct md_volume *vol, const struct md_brick *b,
                   bool *has_id, vl_err_t *err)
{
    unsigned char got[16];
    vl_gfid_t id;
    char *copy;
    struct stat sb;
    ssize_t n = getxattr(b->path, MD_VOLID_XATTR, got, sizeof(got));
    int rc = 0;

    *has_id = n >= 0;
    if (n >= 0) {
        if (vl_gfid_parse(vol->id, &id) != 0 || n != sizeof(got) ||
            memcmp(got, id.bytes, sizeof(got)) != 0) {
            vl_err_set(err, "%s:%s carries the id of another volume",
                       b->host, b->path);
            return -EEXIST;
        }
        return 0;
    }
    if (errno != ENODATA && errno != ENOENT) {
        rc = -errno;
        vl_err_set(err, "%s:%s: reading %s: %s", b->host, b->path,
                   MD_VOLID_XATTR, strerror(-rc));
        return rc;
    }
    /* No directory: it is made at commit; its parent must be there. */
    copy = strdup(b->path);
    if (copy == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    if (stat(dirname(copy), &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        rc = -ENOENT;
        vl_err_set(err, "Failed to create brick directory for brick %s:%s. "
                   "Reason : %s", b->host, b->path, strerror(ENOENT));
    }
    free(copy);
    return rc;
}


/* The checks before anything changes: 0 with *idx the brick (and for a
 * commit of a local brick *has_id), or -errno with err set. */
static int
md_reset_check(struct md_state *st, struct md_volume *vol, int argc,
               char **argv, size_t *idx, bool *has_id, vl_err_t *err)
{
    enum md_reset_op op = md_reset_op(argc, argv);
    const struct md_brick *b;
    char *host = NULL, *path = NULL;
    size_t same;
    int rc;

    *has_id = false;
    if (md_vol_replica(vol) < 2) {
        vl_err_set(err, "reset-brick is not permitted on distribute only "
                   "volumes: no other copy could refill the brick");
        return -ENOTSUP;
    }
    rc = md_set_brick_check(st, vol, argv[3], idx, err);
    if (rc != 0)
        return rc;
    b = &vol->bricks[*idx];
    if (op == MD_RESET_START) {
        if (b->is_reset) {
            vl_err_set(err, "brick %s is already stopped by reset-brick "
                       "start: commit the reset", argv[3]);
            return -EALREADY;
        }
        return 0;
    }
    rc = md_parse_brick(argv[4], &host, &path, err);
    same = rc == 0 ? md_vol_brick_find(st, vol, host, path) : 0;
    free(host);
    free(path);
    if (rc != 0)
        return rc;
    if (same != *idx) {
        vl_err_set(err, "When destination brick is new, please use volume "
                   "replace-brick %s %s %s commit force", vol->name,
                   argv[3], argv[4]);
        return -EINVAL;
    }
    if (!b->is_reset) {
        vl_err_set(err, "brick %s was not stopped for a reset: run "
                   "'volume reset-brick %s %s start' first", argv[3],
                   vol->name, argv[3]);
        return -EINVAL;
    }
    if (!md_brick_is_local(st, b))
        return 0; /* its node checks the directory (stage) */
    rc = md_reset_dir_check(vol, b, has_id, err);
    if (rc == 0 && *has_id && op != MD_RESET_COMMIT_FORCE) {
        vl_err_set(err, "%s:%s still has the volume id of %s (its old "
                   "data): use 'commit force' to bring it back as it is",
                   b->host, b->path, vol->name);
        rc = -EEXIST;
    }
    return rc;
}


int
md_reset_stage(struct md_state *st, int argc, char **argv, vl_err_t *err)
{
    struct md_volume *vol = md_volume_find(st, argv[2]);
    size_t idx;
    bool has_id;

    if (!md_reset_is_cmd(argc, argv)) {
        vl_err_set(err, "Usage: %s", MD_USAGE_RESET);
        return -EINVAL;
    }
    if (vol == NULL) {
        vl_err_set(err, "Volume %s does not exist", argv[2]);
        return -ENOENT;
    }
    return md_reset_check(st, vol, argc, argv, &idx, &has_id, err);
}


int
md_reset_precheck(struct md_state *st, int argc, char **argv,
                  struct md_result *r)
{
    struct md_volume *vol = md_volume_find(st, argv[2]);
    vl_err_t err = {.msg = ""};
    char slot[128];
    size_t idx;
    bool has_id;

    if (vol == NULL || md_reset_op(argc, argv) == MD_RESET_START ||
        md_reset_op(argc, argv) == MD_RESET_BAD ||
        md_reset_check(st, vol, argc, argv, &idx, &has_id, &err) != 0)
        return 0; /* the stage says why, or nothing to probe */
    /* Once the peers committed nothing can be undone: some other brick
     * of the set must answer the marking now. */
    md_brick_subvol(vol, &vol->bricks[idx], slot, sizeof(slot));
    if (md_set_mark_others(st, vol, idx, slot, true, &err) == 0) {
        md_result_fail(r, MD_EXIT_FAIL, ENOTCONN, MD_RESET_FAIL "no other "
                       "brick of the replica set of %s is up to heal it "
                       "from (%s)", argv[3], err.msg);
        return -ENOTCONN;
    }
    return 0;
}


/* start: the mark first (saved: no restart from now), then the stop. */
static int
md_reset_start(struct md_state *st, struct md_volume *vol, size_t idx,
               vl_err_t *err)
{
    struct md_brick *b = &vol->bricks[idx];
    int rc;

    b->is_reset = true;
    rc = md_volume_save(st, vol, err);
    if (rc != 0) {
        b->is_reset = false;
        return rc;
    }
    if (md_brick_is_local(st, b))
        return md_brick_stop(st, vol, b, err);
    return 0;
}


/* commit: mark the others (the originator), stamp, clear, save, start.
 * *is_unmarked: in a transaction nothing marked (the peers commit
 * anyway). */
static int
md_reset_commit(struct md_state *st, struct md_volume *vol, size_t idx,
                bool has_id, bool *is_unmarked, vl_err_t *err)
{
    struct md_brick *b = &vol->bricks[idx];
    bool is_stamped = false;
    char slot[128];
    vl_gfid_t id;
    int rc;

    *is_unmarked = false;
    if (vl_gfid_parse(vol->id, &id) != 0) {
        vl_err_set(err, "Volume %s has a bad id", vol->name);
        return -EINVAL;
    }
    md_brick_subvol(vol, b, slot, sizeof(slot));
    if (md_txn_is_origin(st) &&
        md_set_mark_others(st, vol, idx, slot, false, err) == 0) {
        vl_err_t why = *err;

        vl_err_set(err, "no other brick of the replica set of %s:%s could "
                   "be marked as the source of its heal (%s)", b->host,
                   b->path, why.msg);
        if (!st->txn.is_set)
            return -ENOTCONN;
        vl_glog(MD_DOMAIN, VL_LOG_ERROR, "reset-brick %s: %s; resetting "
                "all the same (the peers commit it)", vol->name, err->msg);
        *is_unmarked = true;
    }
    if (md_brick_is_local(st, b) && !has_id) {
        rc = md_bricks_stamp(st, b, 1, &id, err);
        if (rc != 0)
            return rc;
        is_stamped = true;
    }
    b->is_reset = false;
    rc = md_volume_save(st, vol, err);
    if (rc != 0) {
        b->is_reset = true;
        if (is_stamped)
            md_bricks_unstamp(st, b, 1);
        return rc;
    }
    md_server_notify();
    if (md_brick_is_local(st, b)) {
        rc = md_brick_start(st, vol, b, err);
        if (rc != 0)
            return rc;
    }
    /* The supervisor restarts this node's daemon for the new version;
     * a running one gets a round now. */
    (void)md_heal_kick(st, vol->name);
    return 0;
}


void
md_cmd_reset_brick(struct md_state *st, int argc, char **argv,
                   struct md_result *r)
{
    enum md_reset_op op = md_reset_op(argc, argv);
    static const char *const what[] = {"", "start", "commit",
                                       "commit force"};
    struct md_volume *vol;
    vl_err_t err = {.msg = ""};
    bool has_id = false, is_unmarked = false;
    size_t idx;
    int rc;

    if (op == MD_RESET_BAD) {
        md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: %s",
                       MD_USAGE_RESET);
        return;
    }
    vol = md_volume_find(st, argv[2]);
    if (vol == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOENT, MD_RESET_FAIL "Volume %s "
                       "does not exist", argv[2]);
        return;
    }
    rc = md_reset_check(st, vol, argc, argv, &idx, &has_id, &err);
    if (rc == 0 && op == MD_RESET_START)
        rc = md_reset_start(st, vol, idx, &err);
    else if (rc == 0)
        rc = md_reset_commit(st, vol, idx, has_id, &is_unmarked, &err);
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, MD_RESET_FAIL "%s", err.msg);
        return;
    }
    if (is_unmarked)
        md_sbuf_printf(&r->text, "Warning: %s: nothing tells self-heal to "
                       "refill the brick; once the other bricks are up, "
                       "reset it again.\n", err.msg);
    md_sbuf_printf(&r->text, "volume reset-brick: success: reset-brick %s "
                   "operation successful\n", what[op]);
    md_node_add(r->root, "volResetBrick", NULL);
    md_node_add(r->root->last, "volname", vol->name);
    md_node_add(r->root->last, "sourceBrick", argv[3]);
    md_node_add(r->root->last, "op", what[op]);
}
