/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heal-resolve: the one-shot resolver of split-brains, `mortarfsd --heal
 * --heal-resolve POLICY[:CHILD] --heal-path FILE...` (mortard runs it for
 * `volume heal VOL split-brain ...`: mortard/cmd-split-brain.c).
 *
 * For each FILE ("/dir/f" inside the volume, or "gfid:UUID") it finds
 * the object's GFID, then asks replicate to resolve it with the GETXATTR
 * key mortar.heal.resolve.<policy>[.<child>] (doc/replicate.md), which
 * answers "healed", "not-split-brain", "ambiguous" or "pending", or
 * fails with -errno. Nothing else is written here: replicate chooses
 * and copies under its locks.
 *
 * Finding the object: a path is looked up name by name from the root
 * through the graph's top. Replicate answers EIO to the lookup of an
 * object in split-brain, so the last name is then looked up on the
 * bricks of each replica set directly (protocol/client: the copies'
 * GFID). The key goes to each candidate set by GFID (a nameless
 * LOOKUP first): source-brick's set only, else every set in turn until
 * one answers anything but "not-split-brain" (a file lives on one set;
 * a directory on all). When the copies of a set hold the last name with
 * different GFIDs or types (a GFID split-brain), the key for that name,
 * "<key>/<name>", goes to its directory on that set: replicate keeps
 * the chosen copy's object under the name and removes the others.
 *
 * The copies connect after the graph starts and nobody says when all
 * did: a lookup answering ENOTCONN, or the key "pending", is retried
 * every 200 ms until conf->timeout_s has passed, then reported.
 *
 * Output (conf->out, one line per FILE in order): "answer WORD",
 * "answer -ERRNO", "lookup -ERRNO", "isdir 0" (bigger-file on a
 * directory: nothing sent). mortard turns these into GlusterFS's
 * messages.
 * Threads: the main thread; blocking calls (vl_sync_call).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "heal.h"
#include "mortarfsd/fsd.h"
#include "vol/sync.h"

#define RESOLVE_KEY_PREFIX "mortar.heal.resolve."
#define RESOLVE_ANSWER_MAX 64
#define RESOLVE_RETRY_MS 200
#define RESOLVE_REPLICATE "cluster/replicate"

/* The object a FILE names; or, for a name in a GFID split-brain, its
 * directory and the name (the key then goes to the directory). */
struct resolve_obj {
    vl_gfid_t gfid;
    uint32_t type; /* S_IFMT bits, 0 unknown */
    char name[FSD_HEAL_PATH_MAX]; /* non-empty: a GFID split-brain of this
                                     name in directory gfid */
    const vl_xlator_t *set;       /* with name: the set it is in */
};


int
fsd_heal_policy_parse(const char *arg, struct fsd_heal_policy *out,
                      vl_err_t *err)
{
    static const char source[] = "source-brick:";

    memset(out, 0, sizeof(*out));
    if (strcmp(arg, "bigger-file") == 0 || strcmp(arg, "latest-mtime") == 0) {
        out->is_bigger_file = arg[0] == 'b';
        snprintf(out->key, sizeof(out->key), "%s%s", RESOLVE_KEY_PREFIX,
                 arg);
        return 0;
    }
    if (strncmp(arg, source, strlen(source)) == 0
        && arg[strlen(source)] != '\0'
        && strlen(arg + strlen(source)) < sizeof(out->child)
        && strpbrk(arg + strlen(source), " \t\n/") == NULL) {
        snprintf(out->child, sizeof(out->child), "%s", arg + strlen(source));
        snprintf(out->key, sizeof(out->key), "%ssource-brick.%s",
                 RESOLVE_KEY_PREFIX, out->child);
        return 0;
    }
    vl_err_set(err, "--heal-resolve '%s': expected bigger-file, "
               "latest-mtime or source-brick:CHILD", arg);
    return -EINVAL;
}


int
fsd_heal_path_check(const char *path, bool *is_gfid, vl_gfid_t *gfid,
                    vl_err_t *err)
{
    const char *p;

    *is_gfid = false;
    if (strncmp(path, "gfid:", 5) == 0) {
        if (vl_gfid_parse(path + 5, gfid) != 0 || strlen(path) != 5 + 36) {
            vl_err_set(err, "'%s': expected gfid:UUID", path);
            return -EINVAL;
        }
        *is_gfid = true;
        return 0;
    }
    if (path[0] != '/') {
        vl_err_set(err, "'%s': <FILE> must be absolute path w.r.t. the "
                   "volume, starting with '/'", path);
        return -EINVAL;
    }
    if (strlen(path) >= FSD_HEAL_PATH_MAX || strchr(path, '\n') != NULL) {
        vl_err_set(err, "'%s': too long or a newline in it", path);
        return -EINVAL;
    }
    for (p = path; *p != '\0';) {
        size_t n;

        while (*p == '/')
            p++;
        n = strcspn(p, "/");
        if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.'
                                        && p[1] == '.')) {
            vl_err_set(err, "'%s': '.' and '..' are not allowed", path);
            return -EINVAL;
        }
        p += n;
    }
    return 0;
}


static int64_t
resolve_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}


/* Whether a call that answered rc should be tried again before
 * deadline (copies still connecting). Sleeps when so. */
static bool
resolve_again(int rc, int64_t deadline)
{
    if (rc != -ENOTCONN || resolve_now_ms() >= deadline)
        return false;
    usleep(RESOLVE_RETRY_MS * 1000);
    return true;
}


/* A named lookup of name under parent on xl: 0 with *out set, or
 * -errno. */
static int
resolve_lookup_name(vl_xlator_t *xl, vl_inode_t *parent, const char *name,
                    struct vl_iatt *out, int64_t deadline)
{
    struct vl_caller caller = {.pid = VL_CALLER_PID_INTERNAL};
    int rc;

    do {
        union vl_fop_args a;
        struct vl_reply r = {0};
        vl_inode_t *fresh = vl_inode_new(parent->table);

        if (fresh == NULL)
            return -ENOMEM;
        memset(&a, 0, sizeof(a));
        a.lookup.loc.parent = parent;
        a.lookup.loc.name = name;
        a.lookup.loc.inode = fresh;
        rc = vl_sync_call(xl, VL_FOP_LOOKUP, &a, &caller, &r);
        if (rc == 0)
            *out = r.iatt;
        vl_reply_clear(&r);
        vl_inode_unref(fresh);
    } while (resolve_again(rc, deadline));
    return rc;
}


/* Whether xl is a replica set this run may send the key to. */
static bool
resolve_is_set(const vl_xlator_t *xl, const struct fsd_heal_policy *pol)
{
    if (strcmp(xl->cls->type, RESOLVE_REPLICATE) != 0)
        return false;
    if (pol->child[0] == '\0')
        return true;
    for (size_t i = 0; i < xl->n_children; i++)
        if (strcmp(xl->children[i]->name, pol->child) == 0)
            return true;
    return false;
}


/* The copies' GFID of name under parent, asked of each brick of the
 * candidate sets (replicate refuses the lookup of a split-brain). Copies
 * of one set that hold the name with different GFIDs or types: a GFID
 * split-brain of the name, resolved in its directory (obj->name). */
static int
resolve_lookup_bricks(vl_graph_t *graph, const struct fsd_heal_policy *pol,
                      vl_inode_t *parent, const char *name,
                      struct resolve_obj *obj, int64_t deadline)
{
    int rc = -ENOENT;

    for (size_t i = 0; i < graph->n_xls; i++) {
        vl_xlator_t *set = graph->xls[i];
        bool is_found = false;

        if (!resolve_is_set(set, pol))
            continue;
        for (size_t j = 0; j < set->n_children; j++) {
            struct vl_iatt iatt;
            int one = resolve_lookup_name(set->children[j], parent, name,
                                          &iatt, deadline);

            if (one != 0) {
                if (rc == -ENOENT && one != -ENOENT)
                    rc = one;
                continue;
            }
            if (!is_found) {
                obj->gfid = iatt.gfid;
                obj->type = iatt.mode & S_IFMT;
                is_found = true;
            } else if (!vl_gfid_equal(&obj->gfid, &iatt.gfid)
                       || obj->type != (iatt.mode & S_IFMT)) {
                obj->gfid = parent->gfid;
                obj->type = S_IFDIR;
                snprintf(obj->name, sizeof(obj->name), "%s", name);
                obj->set = set;
                return 0;
            }
        }
        if (is_found)
            return 0;
    }
    return rc;
}


/* The object a path names, name by name from the root through the top;
 * 0 or -errno. */
static int
resolve_path(vl_graph_t *graph, const struct fsd_heal_policy *pol,
             const char *path, struct resolve_obj *obj, int64_t deadline)
{
    vl_inode_t *dir = vl_inode_table_root(graph->itable);
    char name[FSD_HEAL_PATH_MAX];
    const char *p = path;
    int rc = 0;

    if (dir == NULL)
        return -ENOMEM;
    obj->gfid = dir->gfid;
    obj->type = S_IFDIR;
    while (rc == 0) {
        struct vl_iatt iatt;
        vl_inode_t *next;
        size_t n;
        bool is_last;

        while (*p == '/')
            p++;
        n = strcspn(p, "/");
        if (n == 0)
            break; /* the root, or a trailing '/' */
        snprintf(name, sizeof(name), "%.*s", (int)n, p);
        p += n;
        is_last = p[strspn(p, "/")] == '\0';
        rc = resolve_lookup_name(graph->top, dir, name, &iatt, deadline);
        if (rc == -EIO && is_last) {
            rc = resolve_lookup_bricks(graph, pol, dir, name, obj, deadline);
            break;
        }
        if (rc != 0)
            break;
        obj->gfid = iatt.gfid;
        obj->type = iatt.mode & S_IFMT;
        if (is_last)
            break;
        next = vl_inode_get(graph->itable, &iatt.gfid, obj->type);
        if (next == NULL) {
            rc = -ENOMEM;
            break;
        }
        vl_inode_unref(dir);
        dir = next;
    }
    vl_inode_unref(dir);
    return rc;
}


/* Sends the key for obj to one set: 0 with the answer, or -errno. */
static int
resolve_on_set(vl_graph_t *graph, vl_xlator_t *set,
               const struct fsd_heal_policy *pol,
               const struct resolve_obj *obj, char *answer, int64_t deadline)
{
    struct vl_caller caller = {.pid = VL_CALLER_PID_INTERNAL};
    vl_inode_t *inode = vl_inode_get(graph->itable, &obj->gfid, obj->type);
    /* A name's key: "<policy key>/<name>", sent to its directory. */
    char *key = NULL;
    int rc;

    if (inode == NULL)
        return -ENOMEM;
    if (obj->name[0] != '\0'
        && asprintf(&key, "%s/%s", pol->key, obj->name) < 0) {
        vl_inode_unref(inode);
        return -ENOMEM;
    }
    for (;;) {
        union vl_fop_args a;
        struct vl_reply r = {0};

        answer[0] = '\0';
        memset(&a, 0, sizeof(a));
        a.lookup.loc.inode = inode; /* nameless: by GFID */
        rc = vl_sync_call(set, VL_FOP_LOOKUP, &a, &caller, &r);
        vl_reply_clear(&r);
        /* EIO: the split-brain itself; the key works by GFID. */
        if (rc == 0 || rc == -EIO) {
            memset(&a, 0, sizeof(a));
            a.getxattr.loc.inode = inode;
            a.getxattr.name = key != NULL ? key : pol->key;
            a.getxattr.size = RESOLVE_ANSWER_MAX - 1;
            rc = vl_sync_call(set, VL_FOP_GETXATTR, &a, &caller, &r);
            if (rc == 0) {
                size_t n = r.xattr != NULL && r.count > 0
                                   && (size_t)r.count < RESOLVE_ANSWER_MAX
                               ? (size_t)r.count : 0;

                memcpy(answer, r.xattr, n);
                answer[n] = '\0';
                if (n == 0)
                    rc = -EIO; /* no answer is no success */
            }
            vl_reply_clear(&r);
        }
        if (rc == 0 && strcmp(answer, "pending") == 0
            && resolve_now_ms() < deadline) {
            usleep(RESOLVE_RETRY_MS * 1000);
            continue;
        }
        if (!resolve_again(rc, deadline))
            break;
    }
    free(key);
    vl_inode_unref(inode);
    return rc;
}


static void
resolve_one(vl_graph_t *graph, const struct fsd_heal_resolve_conf *conf,
            const char *path)
{
    const struct fsd_heal_policy *pol = &conf->policy;
    int64_t deadline = resolve_now_ms() + (int64_t)conf->timeout_s * 1000;
    struct resolve_obj obj = {.type = 0};
    char answer[RESOLVE_ANSWER_MAX];
    vl_err_t err = {.msg = ""};
    bool is_gfid, is_sent = false;
    int rc;

    rc = fsd_heal_path_check(path, &is_gfid, &obj.gfid, &err);
    if (rc == 0 && !is_gfid)
        rc = resolve_path(graph, pol, path, &obj, deadline);
    if (rc != 0) {
        fprintf(conf->out, "lookup %d\n", rc);
        return;
    }
    if (pol->is_bigger_file && obj.type == S_IFDIR && obj.name[0] == '\0') {
        fprintf(conf->out, "isdir 0\n");
        return;
    }
    rc = -ENOENT;
    for (size_t i = 0; i < graph->n_xls; i++) {
        vl_xlator_t *set = graph->xls[i];
        int one;

        if (!resolve_is_set(set, pol)
            || (obj.set != NULL && obj.set != set))
            continue;
        one = resolve_on_set(graph, set, pol, &obj, answer, deadline);
        if (one == -ENOENT || one == -ESTALE)
            continue; /* not on this set */
        rc = one;
        is_sent = true;
        if (rc != 0 || strcmp(answer, "not-split-brain") != 0)
            break;
    }
    if (!is_sent)
        fprintf(conf->out, "lookup %d\n", rc);
    else if (rc != 0)
        fprintf(conf->out, "answer %d\n", rc);
    else
        fprintf(conf->out, "answer %s\n", answer);
}


int
fsd_heal_resolve_run(vl_graph_t *graph,
                     const struct fsd_heal_resolve_conf *conf)
{
    bool has_set = false;

    for (size_t i = 0; i < graph->n_xls; i++)
        has_set |= resolve_is_set(graph->xls[i], &conf->policy);
    if (!has_set) {
        vl_glog("heal", VL_LOG_ERROR, "no cluster/replicate%s%s in the "
                "volfile", conf->policy.child[0] != '\0' ? " over " : "",
                conf->policy.child);
        return FSD_EXIT_FAIL;
    }
    for (size_t i = 0; i < conf->n_paths; i++) {
        resolve_one(graph, conf, conf->paths[i]);
        fflush(conf->out);
    }
    return FSD_EXIT_OK;
}
