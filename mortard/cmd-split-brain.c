/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-split-brain: `volume heal VOL info split-brain` and the split-brain
 * resolution commands, GlusterFS's grammar and messages (its glfs-heal):
 *
 *   heal VOL info split-brain
 *   heal VOL split-brain bigger-file FILE
 *   heal VOL split-brain latest-mtime FILE
 *   heal VOL split-brain source-brick HOST:BRICK [FILE]
 *
 * What is in split-brain: the self-heal daemon of this node writes the
 * objects its last round found so, per local brick, to
 * RUN/heal/VOL.split-brain (mortarfsd/heal/heal-splitlist.c); an entry
 * whose GFID left the brick's heal index since (resolved, healed) is not
 * shown. A directory is shown by its path, anything else as
 * <gfid:UUID>, as `heal info` does (cmd-heal.c).
 *
 * Resolving: a one-shot `mortarfsd --heal -N --heal-resolve POLICY
 * --heal-path FILE...` over the volume's client volfile (RUN/heal/
 * VOL.resolve.vol, so it never waits on this mortard's worker) finds
 * each FILE and sends replicate its resolve key (heal-resolve.c); this
 * file checks the input first (FILE absolute, no "." or "..", or
 * gfid:UUID; the brick in the volume) and turns each answer line into
 * GlusterFS's message. source-brick without FILE resolves every entry
 * listed for any brick of that brick's replica set: each node's daemon
 * lists only its own bricks, so the lists of the set's bricks on other
 * nodes are asked of their mortards (HEAL_SPLIT, bare GFIDs:
 * heal-peers.c), and the union is taken by GFID (every good copy of an
 * object in split-brain lists it). A brick whose list could not be
 * gathered is said before the results and fails the command; what was
 * gathered is resolved all the same.
 * The worker waits for the resolver, bounded by MD_SPLIT_RUN_MAX_S
 * (then it is killed and the command fails): one object takes a lookup
 * per path name and one heal.
 * Threads: the worker thread with md_state.lock held.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mgmt.h"
#include "mortard.h"

#define MD_SPLIT_MAGIC "mortar-heal-split-brain 1"
#define MD_SPLIT_RUN_MAX_S 100 /* under the CLI's 120 s */
#define MD_SPLIT_CONNECT_S "20" /* per object, for the copies to connect */
#define MD_SPLIT_USAGE "Usage: volume heal <VOLNAME> split-brain " \
                       "{bigger-file <FILE> | latest-mtime <FILE> | " \
                       "source-brick <HOSTNAME:BRICKNAME> [<FILE>]}"

extern char **environ;

/* One brick's list, as read. */
struct md_split_list {
    bool is_read;    /* the file has a section for the brick */
    uint64_t count;  /* still in split-brain (named or not) */
    char **gfids;    /* owned; named entries still in the index */
    size_t n;
};

struct md_split_reading {
    const char *brick;
    const char *brick_dir;     /* for the index check */
    bool is_waiting;           /* the objects that waited for a copy
                                  (waiting=, waiting_gfid=), not the
                                  split-brains */
    struct md_split_list *out;
    bool is_in;
    bool has_waiting;          /* the brick's section has waiting= */
    uint64_t n_gone;           /* named entries no longer indexed */
    uint64_t file_count;
};


bool
md_kv_unescape(const char *src, char *dst, size_t len)
{
    size_t o = 0;

    for (const char *p = src; *p != '\0'; p++) {
        unsigned v;

        if (o + 1 >= len)
            return false;
        if (*p != '%') {
            dst[o++] = *p;
            continue;
        }
        if (sscanf(p + 1, "%2x", &v) != 1 || p[1] == '\0' || p[2] == '\0')
            return false;
        dst[o++] = (char)v;
        p += 2;
    }
    dst[o] = '\0';
    return true;
}


static int
md_split_line(const char *key, const char *value, int line, void *arg,
              vl_err_t *err)
{
    struct md_split_reading *rd = arg;
    char path[4096], idx[4200];
    vl_gfid_t g;
    char **v;

    (void)line;
    if (strcmp(key, "format") == 0) {
        if (strcmp(value, MD_SPLIT_MAGIC) == 0)
            return 0;
        vl_err_set(err, "not a split-brain list");
        return -EINVAL;
    }
    if (strcmp(key, "brick") == 0) {
        rd->is_in = md_kv_unescape(value, path, sizeof(path))
                    && strcmp(path, rd->brick) == 0;
        rd->out->is_read |= rd->is_in;
        return 0;
    }
    if (!rd->is_in)
        return 0;
    if (strcmp(key, rd->is_waiting ? "waiting" : "count") == 0) {
        rd->file_count = strtoull(value, NULL, 10);
        rd->has_waiting |= rd->is_waiting;
        return 0;
    }
    if (strcmp(key, rd->is_waiting ? "waiting_gfid" : "gfid") != 0
        || vl_gfid_parse(value, &g) != 0)
        return 0;
    snprintf(idx, sizeof(idx), "%s/.mortar/index/xattrop/%s",
             rd->brick_dir, value);
    if (access(idx, F_OK) != 0) {
        rd->n_gone++; /* resolved or healed since the round */
        return 0;
    }
    v = realloc(rd->out->gfids, (rd->out->n + 1) * sizeof(*v));
    if (v == NULL)
        return -ENOMEM;
    rd->out->gfids = v;
    v[rd->out->n] = strdup(value);
    if (v[rd->out->n] == NULL)
        return -ENOMEM;
    rd->out->n++;
    return 0;
}


static void
md_split_list_clear(struct md_split_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->gfids[i]);
    free(l->gfids);
    memset(l, 0, sizeof(*l));
}


/* Reads the list of brick (a path of this node) of volname: its
 * split-brains, or (is_waiting) the objects that waited for a copy. 0
 * (l->is_read false: the daemon has not listed this brick yet, or, for
 * is_waiting, is an older one that does not list them) or -errno. */
static int
md_split_list_read(const struct md_state *st, const char *volname,
                   const char *brick, bool is_waiting,
                   struct md_split_list *l)
{
    struct md_split_reading rd = {.brick = brick, .brick_dir = brick,
                                  .is_waiting = is_waiting, .out = l};
    vl_err_t err = {.msg = ""};
    char path[4200], *text = NULL;
    int rc;

    memset(l, 0, sizeof(*l));
    md_heal_path(st, volname, "split-brain", path, sizeof(path));
    rc = md_read_file(path, &text, NULL);
    if (rc != 0)
        return rc == -ENOENT ? 0 : rc;
    rc = md_kv_parse(text, path, md_split_line, &rd, &err);
    free(text);
    if (rc != 0) {
        md_split_list_clear(l);
        return rc;
    }
    l->count = rd.file_count > rd.n_gone ? rd.file_count - rd.n_gone : 0;
    if (l->count < l->n)
        l->count = l->n;
    if (is_waiting && !rd.has_waiting)
        l->is_read = false;
    return 0;
}


int
md_heal_split_count(const struct md_state *st, const struct md_volume *vol,
                    const struct md_brick *b, uint64_t *out)
{
    struct md_split_list l;
    int rc = md_split_list_read(st, vol->name, b->path, false, &l);

    if (rc == 0 && !l.is_read)
        rc = -ENOENT;
    *out = l.count;
    md_split_list_clear(&l);
    return rc;
}


/* md_heal_split_read and md_heal_waiting_read. */
static void
md_split_names_read(const struct md_state *st, const char *volname,
                    const char *brick, bool is_waiting, bool is_gfids,
                    size_t *budget, struct md_heal_brick *hb)
{
    struct md_split_list l;

    memset(hb, 0, sizeof(*hb));
    hb->status = md_split_list_read(st, volname, brick, is_waiting, &l);
    if (hb->status == 0 && !l.is_read)
        hb->status = -ENODATA;
    if (hb->status != 0)
        return;
    hb->n = l.count;
    hb->names = calloc(l.n + 1, sizeof(*hb->names));
    if (hb->names == NULL)
        hb->status = -ENOMEM;
    for (size_t j = 0; hb->status == 0 && j < l.n && *budget > 0; j++) {
        char *name = is_gfids ? strdup(l.gfids[j])
                              : md_heal_dir_path(brick, l.gfids[j]);

        if (name == NULL && !is_gfids
            && asprintf(&name, "<gfid:%s>", l.gfids[j]) < 0)
            name = NULL;
        if (name == NULL) {
            hb->status = -ENOMEM;
            break;
        }
        if (strlen(name) + 1 > *budget) {
            free(name);
            *budget = 0;
            break;
        }
        *budget -= strlen(name) + 1;
        hb->names[hb->n_names++] = name;
    }
    md_split_list_clear(&l);
}


void
md_heal_split_read(const struct md_state *st, const char *volname,
                   const char *brick, bool is_gfids, size_t *budget,
                   struct md_heal_brick *hb)
{
    md_split_names_read(st, volname, brick, false, is_gfids, budget, hb);
}


void
md_heal_waiting_read(const struct md_state *st, const char *volname,
                     const char *brick, size_t *budget,
                     struct md_heal_brick *hb)
{
    md_split_names_read(st, volname, brick, true, true, budget, hb);
}


/* The Status line of brick b of vol, whose list was read into hb. */
static const char *
md_split_status(const struct md_state *st, const struct md_volume *vol,
                const struct md_brick *b, const struct md_heal_brick *hb)
{
    bool is_local = md_brick_is_local(st, b);

    if (!is_local && hb->remote_err[0] != '\0')
        return hb->remote_err;
    if (hb->status != 0 && hb->status != -ENODATA)
        return strerror(-hb->status);
    if (is_local && md_brick_pid(st, vol, b) == 0)
        return "Transport endpoint is not connected";
    if (hb->status == -ENODATA)
        return "Not gathered: the self-heal daemon has not listed it yet";
    return "Connected";
}


void
md_heal_split_info(struct md_state *st, const struct md_volume *vol,
                   struct md_result *r)
{
    struct md_node *hi = md_node_add(r->root, "healInfo", NULL);
    struct md_node *bl = md_node_add(hi, "bricks", NULL);
    struct md_heal_peers hp = {0};
    size_t budget = MD_HEAL_INFO_NAME_BYTES / vol->n_bricks;
    struct md_heal_brick *hbs = calloc(vol->n_bricks, sizeof(*hbs));

    if (hbs == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOMEM, "volume heal %s info "
                       "split-brain: %s", vol->name, strerror(ENOMEM));
        return;
    }
    /* The other nodes' lists all at once (heal-peers.c). */
    md_heal_bricks_remote(st, vol, 0, vol->n_bricks, NULL,
                          MGMT_PROC_HEAL_SPLIT, true, budget, &hp, hbs);
    bl->is_list = true;
    for (size_t i = 0; i < vol->n_bricks; i++) {
        const struct md_brick *b = &vol->bricks[i];
        struct md_node *bn = md_node_add(bl, "brick", NULL);
        size_t left = budget;
        struct md_heal_brick hb = hbs[i];
        const char *status;

        if (md_brick_is_local(st, b))
            md_heal_split_read(st, vol->name, b->path, false, &left, &hb);
        status = md_split_status(st, vol, b, &hb);
        md_sbuf_printf(&r->text, "Brick %s:%s\n", b->host, b->path);
        md_node_addf(bn, "name", "%s:%s", b->host, b->path);
        for (size_t j = 0; j < hb.n_names; j++) {
            md_sbuf_printf(&r->text, "%s\n", hb.names[j]);
            md_node_add(bn, "file", hb.names[j]);
        }
        md_sbuf_printf(&r->text, "Status: %s\n", status);
        md_node_add(bn, "status", status);
        if (hb.status == 0) {
            md_sbuf_printf(&r->text, "Number of entries in split-brain: %"
                           PRIu64 "\n\n", hb.n);
            md_node_addf(bn, "numberOfEntries", "%" PRIu64, hb.n);
        } else {
            md_sbuf_printf(&r->text, "Number of entries in split-brain: "
                           "-\n\n");
            md_node_add(bn, "numberOfEntries", "-");
        }
        md_heal_brick_clear(&hb);
    }
    free(hbs);
    md_heal_peers_clear(&hp);
}


/* FILE as glfs-heal takes it: "gfid:UUID", or an absolute path without
 * "." or ".." components. NULL if fine, else why. */
const char *
md_split_file_check(const char *file)
{
    vl_gfid_t g;

    if (strncmp(file, "gfid:", 5) == 0)
        return vl_gfid_parse(file + 5, &g) == 0 && strlen(file) == 41
                   ? NULL : "<FILE> must be gfid:<UUID> or an absolute "
                            "path w.r.t. the volume";
    if (file[0] != '/')
        return "<FILE> must be absolute path w.r.t. the volume, starting "
               "with '/'";
    if (strlen(file) >= 4096 || strchr(file, '\n') != NULL)
        return "<FILE> is too long or holds a newline";
    for (const char *p = file; *p != '\0';) {
        size_t n;

        while (*p == '/')
            p++;
        n = strcspn(p, "/");
        if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.'
                                        && p[1] == '.'))
            return "<FILE> must be inside the volume: '.' and '..' are "
                   "not allowed";
        p += n;
    }
    return NULL;
}


/* Runs the resolver over paths; its stdout (one line per path) into
 * *out. 0 or -errno with err set. */
static int
md_split_run(struct md_state *st, const struct md_volume *vol,
             const char *policy, char *const *paths, size_t n_paths,
             char **out, vl_err_t *err)
{
    char volf[4200], log[4300];
    size_t n_sets = md_vol_n_sets(vol), argc = 0, used = 0, cap = 4096;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    char (*xopts)[300] = NULL;
    struct timespec t0, now;
    char **argv = NULL, *buf = NULL;
    int fds[2] = {-1, -1}, status = 0, rc;
    sigset_t none, all;
    pid_t child = 0;

    rc = md_heal_volfile_write(st, vol, "resolve.vol", volf, sizeof(volf),
                               err);
    if (rc != 0)
        return rc;
    snprintf(log, sizeof(log), "%s/heal/%s.resolve.log", st->log_dir,
             vol->name);
    xopts = calloc(n_sets, sizeof(*xopts));
    argv = calloc(16 + 2 * (n_sets + n_paths) + 1, sizeof(*argv));
    buf = malloc(cap);
    if (xopts == NULL || argv == NULL || buf == NULL) {
        vl_err_set(err, "out of memory");
        rc = -ENOMEM;
        goto out;
    }
    argv[argc++] = st->mortarfsd;
    argv[argc++] = "--heal";
    argv[argc++] = "-N";
    argv[argc++] = "--volfile";
    argv[argc++] = volf;
    argv[argc++] = "--log-file";
    argv[argc++] = log;
    argv[argc++] = "--ready-timeout";
    argv[argc++] = MD_SPLIT_CONNECT_S;
    argv[argc++] = "--heal-resolve";
    argv[argc++] = (char *)policy;
    /* Its lookups must not start background heals of what it resolves
     * (a heal in flight holds the object's heal lock). */
    for (size_t i = 0; i < n_sets; i++) {
        char set[256];

        md_vol_set_name(vol, i, set, sizeof(set));
        snprintf(xopts[i], sizeof(xopts[i]),
                 "%s.background-self-heal-count=0", set);
        argv[argc++] = "--xlator-option";
        argv[argc++] = xopts[i];
    }
    for (size_t i = 0; i < n_paths; i++) {
        argv[argc++] = "--heal-path";
        argv[argc++] = paths[i];
    }
    argv[argc] = NULL;
    if (pipe2(fds, O_CLOEXEC) != 0) {
        rc = -errno;
        vl_err_set(err, "pipe: %s", strerror(-rc));
        goto out;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_APPEND |
                                     O_CREAT, 0644);
    posix_spawnattr_init(&attr);
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF);
    rc = -posix_spawnp(&child, st->mortarfsd, &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(fds[1]);
    fds[1] = -1;
    if (rc != 0) {
        vl_err_set(err, "starting %s: %s", st->mortarfsd, strerror(-rc));
        child = 0;
        goto out;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
        ssize_t n;
        int pr;

        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= MD_SPLIT_RUN_MAX_S) {
            kill(child, SIGKILL);
            vl_err_set(err, "the split-brain resolver did not finish in "
                       "%d s (log %s)", MD_SPLIT_RUN_MAX_S, log);
            rc = -ETIMEDOUT;
            break;
        }
        pr = poll(&pfd, 1, 1000);
        if (pr < 0 && errno != EINTR) {
            rc = -errno;
            vl_err_set(err, "poll: %s", strerror(-rc));
            kill(child, SIGKILL);
            break;
        }
        if (pr <= 0)
            continue;
        if (used + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);

            if (nb == NULL) {
                rc = -ENOMEM;
                vl_err_set(err, "out of memory");
                kill(child, SIGKILL);
                break;
            }
            buf = nb;
            cap *= 2;
        }
        n = read(fds[0], buf + used, cap - 1 - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* EOF: it exited */
        used += (size_t)n;
    }
    buf[used] = '\0';
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
        vl_err_set(err, "the split-brain resolver failed (%s %d): see "
                   "its log %s", WIFEXITED(status) ? "exit" : "signal",
                   WIFEXITED(status) ? WEXITSTATUS(status)
                                     : WTERMSIG(status), log);
        rc = -EIO;
    }
    if (rc == 0) {
        *out = buf;
        buf = NULL;
    }
out:
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    free(buf);
    free(xopts);
    free(argv);
    return rc;
}


/* One answer line of the resolver as glfs-heal's message into msg;
 * true when FILE was healed. */
bool
md_split_message(const char *line, const char *file, const char *policy,
                 char *msg, size_t len)
{
    bool is_gfid = strncmp(file, "gfid:", 5) == 0;
    const char *word = strchr(line, ' ');
    long num;

    if (word == NULL) {
        snprintf(msg, len, "Healing %s failed: no answer.", file);
        return false;
    }
    word++;
    num = strtol(word, NULL, 10);
    if (strncmp(line, "lookup ", 7) == 0) {
        snprintf(msg, len, "Lookup failed on %s:%s%s", file,
                 strerror(num < 0 ? (int)-num : EIO), is_gfid ? "." : "");
        return false;
    }
    if (strncmp(line, "isdir ", 6) == 0) {
        snprintf(msg, len, "'bigger-file' not a valid option for "
                 "directories.");
        return false;
    }
    if (strcmp(word, "healed") == 0) {
        snprintf(msg, len, "Healed %s.", file);
        return true;
    }
    if (strcmp(word, "not-split-brain") == 0)
        snprintf(msg, len, "Healing %s failed: File not in split-brain.",
                 file);
    else if (strcmp(word, "ambiguous") == 0)
        snprintf(msg, len, "Healing %s failed: %s.", file,
                 strcmp(policy, "bigger-file") == 0
                     ? "The copies have the same size"
                 : strcmp(policy, "latest-mtime") == 0
                     ? "The copies have the same mtime"
                     : "The source brick cannot be chosen");
    else if (strcmp(word, "pending") == 0)
        snprintf(msg, len, "Healing %s failed:%s.", file, strerror(ENOTCONN));
    else if (num < 0)
        snprintf(msg, len, "Healing %s failed:%s.", file, strerror((int)-num));
    else
        snprintf(msg, len, "Healing %s failed: %s.", file, word);
    return false;
}


/* What source-brick without a file resolves: the union of the lists of
 * every brick of the set, one entry per object. */
struct md_split_set {
    char **files;     /* owned; "gfid:UUID" (from an older peer maybe a
                         directory's path); sorted and unique once
                         gathered */
    size_t n;
    size_t cap;
    size_t n_missed;  /* bricks whose list could not be gathered */
};


static void
md_split_set_clear(struct md_split_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        free(set->files[i]);
    free(set->files);
    memset(set, 0, sizeof(*set));
}


/* Adds one name of a list as the resolver takes it: a bare GFID (this
 * node's lists, a peer asked for GFIDs) or "<gfid:UUID>" becomes
 * "gfid:UUID"; a directory's path (a peer that answered shown names) is
 * kept as is. Anything else is a bad answer and dropped. 0 or -ENOMEM. */
static int
md_split_set_add(struct md_split_set *set, const char *name)
{
    char gfid[VL_GFID_STR_LEN];
    size_t len = strlen(name);
    vl_gfid_t g;
    char *file;

    if (len == 6 + VL_GFID_STR_LEN && strncmp(name, "<gfid:", 6) == 0
        && name[len - 1] == '>') {
        snprintf(gfid, sizeof(gfid), "%.*s", VL_GFID_STR_LEN - 1, name + 6);
        name = gfid;
        len = strlen(name);
    }
    if (len == VL_GFID_STR_LEN - 1 && vl_gfid_parse(name, &g) == 0) {
        if (asprintf(&file, "gfid:%s", name) < 0)
            return -ENOMEM;
    } else if (name[0] == '/' && md_split_file_check(name) == NULL) {
        file = strdup(name);
        if (file == NULL)
            return -ENOMEM;
    } else {
        vl_glog(MD_DOMAIN, VL_LOG_WARNING, "split-brain list: '%.64s' is "
                "no entry, dropped", name);
        return 0;
    }
    if (set->n == set->cap) {
        size_t cap = set->cap == 0 ? 64 : set->cap * 2;
        char **v = realloc(set->files, cap * sizeof(*v));

        if (v == NULL) {
            free(file);
            return -ENOMEM;
        }
        set->files = v;
        set->cap = cap;
    }
    set->files[set->n++] = file;
    return 0;
}


static int
md_split_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}


/* Sorts the entries and drops repeats: every brick of the set that saw
 * an object in split-brain lists it. */
static void
md_split_set_unique(struct md_split_set *set)
{
    size_t o = 0;

    if (set->n > 1)
        qsort(set->files, set->n, sizeof(*set->files), md_split_name_cmp);
    for (size_t i = 0; i < set->n; i++) {
        if (o > 0 && strcmp(set->files[o - 1], set->files[i]) == 0) {
            free(set->files[i]);
            continue;
        }
        set->files[o++] = set->files[i];
    }
    set->n = o;
}


/* Why a brick's list was not gathered (hb->status != 0). */
static const char *
md_split_not_gathered(const struct md_heal_brick *hb)
{
    static const char prefix[] = "Not gathered: ";

    if (hb->remote_err[0] != '\0')
        return strncmp(hb->remote_err, prefix, sizeof(prefix) - 1) == 0
                   ? hb->remote_err + sizeof(prefix) - 1
                   : hb->remote_err;
    if (hb->status == -ENODATA)
        return "the self-heal daemon has not listed it yet";
    return strerror(-hb->status);
}


/* Gathers into set the lists of every brick of brick's replica set:
 * this node's read here, the others' asked of their nodes (HEAL_SPLIT,
 * bare GFIDs), since each node's daemon lists only its own bricks. A
 * brick whose list is not gathered is said in r's text (and counted in
 * n_missed, unless its daemon just has not listed it yet: nothing to
 * gather there). 0 or -ENOMEM. */
static int
md_split_set_gather(struct md_state *st, const struct md_volume *vol,
                    size_t brick, struct md_split_set *set,
                    struct md_result *r)
{
    unsigned replica = md_vol_replica(vol);
    size_t first = brick / replica * replica;
    struct md_heal_peers hp = {0};
    struct md_node *ng = md_node_add(r->root, "notGathered", NULL);
    struct md_heal_brick *hbs;
    int rc = 0;

    if (first + replica > vol->n_bricks)
        replica = (unsigned)(vol->n_bricks - first);
    hbs = calloc(replica + 1, sizeof(*hbs));
    if (hbs == NULL)
        return -ENOMEM;
    /* The set's bricks on other nodes all at once (heal-peers.c). */
    md_heal_bricks_remote(st, vol, first, replica, NULL,
                          MGMT_PROC_HEAL_SPLIT, MGMT_HEAL_NAMES_GFID,
                          SIZE_MAX, &hp, hbs);
    if (ng != NULL)
        ng->is_list = true;
    for (size_t i = first; i < first + replica; i++) {
        const struct md_brick *b = &vol->bricks[i];
        size_t budget = SIZE_MAX;
        struct md_heal_brick hb = hbs[i - first];

        memset(&hbs[i - first], 0, sizeof(hbs[i - first]));
        if (rc != 0) {
            md_heal_brick_clear(&hb);
            continue;
        }
        if (md_brick_is_local(st, b))
            md_heal_split_read(st, vol->name, b->path, true, &budget, &hb);
        if (hb.status != 0) {
            const char *why = md_split_not_gathered(&hb);
            struct md_node *bn = md_node_add(ng, "brick", NULL);

            md_sbuf_printf(&r->text, "Split-brain list of brick %s:%s not "
                           "gathered: %s\n", b->host, b->path, why);
            md_node_addf(bn, "name", "%s:%s", b->host, b->path);
            md_node_add(bn, "status", why);
            set->n_missed += hb.status != -ENODATA;
            md_heal_brick_clear(&hb);
            continue;
        }
        for (size_t j = 0; j < hb.n_names && rc == 0; j++)
            rc = md_split_set_add(set, hb.names[j]);
        /* The daemon names the first 10,000 of a brick, a reply 2 MiB
         * of them: the rest are there for the next run. */
        if (hb.n > hb.n_names)
            md_sbuf_printf(&r->text, "Split-brain list of brick %s:%s: %zu "
                           "of its %" PRIu64 " entries gathered; run the "
                           "command again for the rest\n", b->host,
                           b->path, hb.n_names, hb.n);
        md_heal_brick_clear(&hb);
    }
    free(hbs);
    md_heal_peers_clear(&hp);
    if (rc == 0)
        md_split_set_unique(set);
    return rc;
}


void
md_cmd_split_brain(struct md_state *st, const struct md_volume *vol,
                   int argc, char **argv, struct md_result *r)
{
    const char *policy = argc > 4 ? argv[4] : "";
    char arg[400], child[200], msg[4400], **paths = NULL, *out = NULL;
    struct md_split_set set = {0};
    bool is_source = strcmp(policy, "source-brick") == 0;
    bool is_one_file = argc == 7 || !is_source;
    vl_err_t err = {.msg = ""};
    size_t n_paths = 0, n_healed = 0, brick = vol->n_bricks;
    const char *why;
    char *line, *save = NULL;
    int rc;

    if (!((argc == 6 && (strcmp(policy, "bigger-file") == 0
                         || strcmp(policy, "latest-mtime") == 0))
          || (is_source && (argc == 6 || argc == 7)))) {
        md_result_fail(r, MD_EXIT_USAGE, EINVAL, MD_SPLIT_USAGE);
        return;
    }
    if (is_source) {
        char host[256];
        const char *colon = strchr(argv[5], ':');

        if (colon != NULL && (size_t)(colon - argv[5]) < sizeof(host)) {
            snprintf(host, sizeof(host), "%.*s", (int)(colon - argv[5]),
                     argv[5]);
            brick = md_vol_brick_find(st, vol, host, colon + 1);
        }
        if (brick == vol->n_bricks) {
            md_result_fail(r, MD_EXIT_FAIL, EINVAL, "\"%s\"- No such brick "
                           "available in the volume.", argv[5]);
            return;
        }
        md_brick_subvol(vol, &vol->bricks[brick], child, sizeof(child));
        snprintf(arg, sizeof(arg), "source-brick:%s", child);
    } else {
        snprintf(arg, sizeof(arg), "%s", policy);
    }
    if (is_one_file) {
        why = md_split_file_check(argv[argc - 1]);
        if (why != NULL) {
            md_result_fail(r, MD_EXIT_FAIL, EINVAL, "%s", why);
            return;
        }
        paths = &argv[argc - 1];
        n_paths = 1;
    } else {
        rc = md_split_set_gather(st, vol, brick, &set, r);
        if (rc != 0) {
            md_result_fail(r, MD_EXIT_FAIL, -rc, "split-brain lists of the "
                           "replica set of %s: %s", argv[5], strerror(-rc));
            goto out;
        }
        paths = set.files;
        n_paths = set.n;
    }
    rc = n_paths > 0 ? md_split_run(st, vol, arg, paths, n_paths, &out, &err)
                     : 0;
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, "%s", err.msg);
        goto out;
    }
    line = out != NULL ? strtok_r(out, "\n", &save) : NULL;
    for (size_t i = 0; i < n_paths; i++) {
        bool is_healed = md_split_message(line != NULL ? line : "",
                                          paths[i], policy, msg,
                                          sizeof(msg));

        n_healed += is_healed;
        if (is_one_file && !is_healed) {
            md_result_fail(r, MD_EXIT_FAIL, EINVAL, "%s", msg);
            goto out;
        }
        md_sbuf_printf(&r->text, "%s\n", msg);
        line = strtok_r(NULL, "\n", &save);
    }
    if (!is_one_file) {
        md_sbuf_printf(&r->text, "Status: Connected\nNumber of healed "
                       "entries: %zu\n", n_healed);
        /* A brick whose list was not gathered may hold entries this
         * run did not resolve: not a success. */
        if (set.n_missed > 0)
            md_result_fail(r, MD_EXIT_FAIL, ENOTCONN, "%zu of %zu entries "
                           "healed; split-brain lists not gathered from "
                           "%zu of the set's %u bricks", n_healed, n_paths,
                           set.n_missed, md_vol_replica(vol));
        else if (n_healed < n_paths)
            md_result_fail(r, MD_EXIT_FAIL, EIO, "%zu of %zu entries "
                           "healed", n_healed, n_paths);
    }
    md_node_addf(r->root, "healedEntries", "%zu", n_healed);

out:
    md_split_set_clear(&set); /* owns paths without a file */
    free(out);
}
