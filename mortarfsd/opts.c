/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * opts: mortarfsd's command line (getopt_long) and its --help text.
 *
 * Parsing never exits: it fills struct fsd_opts or returns -EINVAL with a
 * one-line reason, so it can be unit-tested. Relative paths are made
 * absolute here because the daemon changes its directory to "/".
 * Threads: called once from main before any thread exists.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsd.h"
#include "mgmt-clnt.h"
#include "tls.h"

enum {
    OPT_LOG_FILE = 256,
    OPT_LOG_LEVEL,
    OPT_PID_FILE,
    OPT_EVENT_THREADS,
    OPT_DUMP_DIR,
    OPT_XLATOR_OPTION,
    OPT_FUSE_OPT,
    OPT_READY_TIMEOUT,
    OPT_VF_SERVER,
    OPT_VF_PORT,
    OPT_VF_ID,
    OPT_VF_BACKUPS,
    OPT_MGMT_TLS,
    OPT_MGMT_SSL_CERT,
    OPT_MGMT_SSL_KEY,
    OPT_MGMT_SSL_CA,
    OPT_MGMT_SSL_CHECK_HOST,
    OPT_REBALANCE,
    OPT_REBAL_STATE,
    OPT_FIX_LAYOUT,
    OPT_THROTTLE,
    OPT_READY_FD,
    OPT_HEAL,
    OPT_HEAL_BRICK,
    OPT_HEAL_STATE,
    OPT_HEAL_THREADS,
    OPT_HEAL_INTERVAL,
    OPT_HEAL_RESOLVE,
    OPT_HEAL_PATH,
    OPT_METRICS_PORT,
    OPT_METRICS_ADDRESS,
    OPT_METRICS_PORT_FILE,
    OPT_METRICS_VOLUME,
    OPT_METRICS_BRICK,
};

static const struct option fsd_long_opts[] = {
    {"volfile", required_argument, NULL, 'f'},
    {"no-daemon", no_argument, NULL, 'N'},
    {"log-file", required_argument, NULL, OPT_LOG_FILE},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"pid-file", required_argument, NULL, OPT_PID_FILE},
    {"event-threads", required_argument, NULL, OPT_EVENT_THREADS},
    {"dump-dir", required_argument, NULL, OPT_DUMP_DIR},
    {"xlator-option", required_argument, NULL, OPT_XLATOR_OPTION},
    {"fuse-opt", required_argument, NULL, OPT_FUSE_OPT},
    {"ready-timeout", required_argument, NULL, OPT_READY_TIMEOUT},
    {"volfile-server", required_argument, NULL, OPT_VF_SERVER},
    {"volfile-server-port", required_argument, NULL, OPT_VF_PORT},
    {"volfile-id", required_argument, NULL, OPT_VF_ID},
    {"backup-volfile-servers", required_argument, NULL, OPT_VF_BACKUPS},
    {"mgmt-tls", no_argument, NULL, OPT_MGMT_TLS},
    {"mgmt-ssl-cert", required_argument, NULL, OPT_MGMT_SSL_CERT},
    {"mgmt-ssl-key", required_argument, NULL, OPT_MGMT_SSL_KEY},
    {"mgmt-ssl-ca", required_argument, NULL, OPT_MGMT_SSL_CA},
    {"mgmt-ssl-check-host", no_argument, NULL, OPT_MGMT_SSL_CHECK_HOST},
    {"rebalance", no_argument, NULL, OPT_REBALANCE},
    {"rebalance-state", required_argument, NULL, OPT_REBAL_STATE},
    {"fix-layout", no_argument, NULL, OPT_FIX_LAYOUT},
    {"throttle", required_argument, NULL, OPT_THROTTLE},
    {"ready-fd", required_argument, NULL, OPT_READY_FD},
    {"heal", no_argument, NULL, OPT_HEAL},
    {"heal-brick", required_argument, NULL, OPT_HEAL_BRICK},
    {"heal-state", required_argument, NULL, OPT_HEAL_STATE},
    {"heal-threads", required_argument, NULL, OPT_HEAL_THREADS},
    {"heal-interval", required_argument, NULL, OPT_HEAL_INTERVAL},
    {"heal-resolve", required_argument, NULL, OPT_HEAL_RESOLVE},
    {"heal-path", required_argument, NULL, OPT_HEAL_PATH},
    {"metrics-port", required_argument, NULL, OPT_METRICS_PORT},
    {"metrics-address", required_argument, NULL, OPT_METRICS_ADDRESS},
    {"metrics-port-file", required_argument, NULL, OPT_METRICS_PORT_FILE},
    {"metrics-volume", required_argument, NULL, OPT_METRICS_VOLUME},
    {"metrics-brick", required_argument, NULL, OPT_METRICS_BRICK},
    {"version", no_argument, NULL, 'V'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};


void
fsd_usage(FILE *out, const char *prog)
{
    fprintf(out,
"Usage: %s --volfile PATH [OPTION]... [MOUNTPOINT]\n"
"       %s --volfile-server HOST --volfile-id VOL [OPTION]... MOUNTPOINT\n"
"Run the translator graph of a volfile (a brick, or with MOUNTPOINT a FUSE\n"
"client: mount/fuse is put on top of the volfile's top volume).\n"
"\n"
"  -f, --volfile PATH          volfile to run\n"
"      --volfile-server HOST[:PORT]\n"
"                              fetch the client volfile of --volfile-id\n"
"                              from mortard on HOST instead, and follow\n"
"                              its changes (live options are applied in\n"
"                              place; a change of the graph's shape is\n"
"                              logged and needs a remount)\n"
"      --volfile-server-port PORT  mortard's port (default %d)\n"
"      --volfile-id VOL        the volume whose volfile to fetch\n"
"      --backup-volfile-servers H2[:H3...]\n"
"                              more servers, tried in order after HOST\n"
"      --mgmt-tls              fetch and follow the volfile over TLS (on\n"
"                              too when " MGC_SECURE_ACCESS_FILE "\n"
"                              exists); mortard with secure-access needs it\n"
"      --mgmt-ssl-cert PATH    its certificate (default " VRPC_TLS_DEF_CERT ")\n"
"      --mgmt-ssl-key PATH     its key (default " VRPC_TLS_DEF_KEY ")\n"
"      --mgmt-ssl-ca PATH      its CA list (default " VRPC_TLS_DEF_CA ")\n"
"      --mgmt-ssl-check-host   a volfile server's certificate must name\n"
"                              the host it is called by\n"
"  -N, --no-daemon             stay in the foreground\n"
"      --log-file PATH         log file ('-' = stderr); default stderr with\n"
"                              -N, else " FSD_DEFAULT_LOG_DIR "/NAME.log\n"
"      --log-level LEVEL       NONE CRITICAL ERROR WARNING INFO DEBUG TRACE\n"
"      --pid-file PATH         write and lock a pid file (one owner only)\n"
"      --event-threads N       event loop threads, 1-64 (default %d)\n"
"      --dump-dir DIR          statedump directory (default %s)\n"
"      --xlator-option NAME.KEY=VALUE\n"
"                              override option KEY of translator NAME\n"
"      --fuse-opt KEY=VALUE    option of the mount/fuse translator\n"
"  -o KEY[=VALUE][,...]        same, mount(8) style (bare KEY means on)\n"
"      --ready-timeout SEC     how long to wait for the graph (default %d)\n"
"      --ready-fd FD           with -N: write to FD '0' once ready (a\n"
"                              rebalance: once it holds the migration\n"
"                              lock), or '1' and the reason, then close it\n"
"      --rebalance             run the rebalance of the volume (top must be\n"
"                              cluster/distribute; no mount point) and exit\n"
"      --rebalance-state FILE  its progress file (required; resumed from\n"
"                              when it says running or stopped)\n"
"      --fix-layout            only fix directory layouts, move no file\n"
"      --throttle T            files moved in parallel: lazy (1), normal\n"
"                              (2, default), aggressive (4) or a number\n"
"      --heal                  run the self-heal daemon (no mount point)\n"
"                              until TERM\n"
"      --heal-brick SUBVOL=DIR a brick of this server and the replicate\n"
"                              translator it belongs to (repeatable)\n"
"      --heal-state FILE       the daemon's progress file (required)\n"
"      --heal-threads N        objects healed at once (default 8)\n"
"      --heal-interval SEC     between reads of the heal index (def. 10)\n"
"      --heal-resolve POLICY   with --heal and -N: resolve the split-brain\n"
"                              of each --heal-path (bigger-file,\n"
"                              latest-mtime or source-brick:CHILD, CHILD\n"
"                              the brick's protocol/client), print one\n"
"                              line per path and exit\n"
"      --heal-path FILE        /path in the volume or gfid:UUID\n"
"                              (repeatable)\n"
"      --metrics-port PORT     serve Prometheus metrics at\n"
"                              http://ADDRESS:PORT/metrics (0: a port the\n"
"                              kernel picks); a port in use stops startup\n"
"      --metrics-address ADDR  address to listen on (default 127.0.0.1;\n"
"                              another only when given here)\n"
"      --metrics-port-file FILE  write the port listened on to FILE\n"
"      --metrics-volume VOL    volume label of the metrics (default\n"
"                              --volfile-id, else the volfile's name)\n"
"      --metrics-brick HOST:PATH  brick label of the metrics\n"
"  -V, --version               print the version and exit\n"
"  -h, --help                  print this help and exit\n"
"\n"
"Without -N the command returns once the graph is usable (the brick\n"
"listens, the mount works) or prints why it is not.\n"
"Signals: TERM/INT stop (unmounting), USR1 writes a statedump to\n"
"DIR/mortarfsd.PID.dump.TIME, HUP reopens the log file and, with\n"
"--volfile, reads the file again and applies it to the running graph\n"
"(live options change in place; any other change is refused and logged).\n"
"\n"
"Exit status: %d started / stopped cleanly, %d graph failed to load or\n"
"start, %d bad command line.\n",
            prog, prog, FSD_DEFAULT_VOLFILE_PORT, FSD_DEFAULT_EVENT_THREADS,
            FSD_DEFAULT_DUMP_DIR,
            FSD_DEFAULT_READY_TIMEOUT_S, FSD_EXIT_OK, FSD_EXIT_FAIL,
            FSD_EXIT_USAGE);
}


/* Returns a malloc'ed absolute form of path (cwd-relative if needed). */
static int
fsd_abs_path(const char *path, char **out, vl_err_t *err)
{
    char cwd[PATH_MAX];

    if (path[0] == '\0') {
        vl_err_set(err, "empty path");
        return -EINVAL;
    }
    if (path[0] == '/') {
        *out = strdup(path);
        return *out == NULL ? -ENOMEM : 0;
    }
    if (getcwd(cwd, sizeof(cwd)) == NULL) {
        vl_err_set(err, "getcwd: %s", strerror(errno));
        return -errno;
    }
    if (asprintf(out, "%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, path) < 0)
        return -ENOMEM;
    return 0;
}


static int
fsd_parse_uint(const char *s, unsigned min, unsigned max, const char *what,
               unsigned *out, vl_err_t *err)
{
    char *end = NULL;
    unsigned long v;

    errno = 0;
    v = strtoul(s, &end, 10);
    if (s[0] == '\0' || s[0] == '-' || *end != '\0' || errno != 0 ||
        v < min || v > max) {
        vl_err_set(err, "%s: '%s' is not a number in %u-%u", what, s, min,
                   max);
        return -EINVAL;
    }
    *out = (unsigned)v;
    return 0;
}


/* --ready-fd FD: an open descriptor above stderr, not passed on to
 * anything this process starts. */
static int
fsd_parse_ready_fd(struct fsd_opts *opts, const char *arg, vl_err_t *err)
{
    unsigned fd;

    if (fsd_parse_uint(arg, 3, 65535, "--ready-fd", &fd, err) != 0)
        return -EINVAL;
    if (fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0) {
        vl_err_set(err, "--ready-fd %u: %s", fd, strerror(errno));
        return -EINVAL;
    }
    opts->ready_fd = (int)fd;
    return 0;
}


static int
fsd_add_fuse_opt(struct fsd_opts *opts, const char *key, size_t key_len,
                 const char *value, vl_err_t *err)
{
    struct vl_kv *kvs;
    struct vl_kv *kv;

    if (key_len == 0) {
        vl_err_set(err, "fuse option with an empty key");
        return -EINVAL;
    }
    if (strchr(value, '\n') != NULL) {
        vl_err_set(err, "fuse option value contains a newline");
        return -EINVAL;
    }
    kvs = realloc(opts->fuse_opts, (opts->n_fuse_opts + 1) * sizeof(*kvs));
    if (kvs == NULL)
        return -ENOMEM;
    opts->fuse_opts = kvs;
    kv = &kvs[opts->n_fuse_opts];
    kv->key = strndup(key, key_len);
    kv->value = strdup(value);
    if (kv->key == NULL || kv->value == NULL) {
        free(kv->key);
        free(kv->value);
        return -ENOMEM;
    }
    opts->n_fuse_opts++;
    return 0;
}


/* --fuse-opt KEY=VALUE: the '=' is required. */
static int
fsd_parse_fuse_opt(struct fsd_opts *opts, const char *arg, vl_err_t *err)
{
    const char *eq = strchr(arg, '=');

    if (eq == NULL || eq[1] == '\0') {
        vl_err_set(err, "--fuse-opt '%s': expected KEY=VALUE", arg);
        return -EINVAL;
    }
    return fsd_add_fuse_opt(opts, arg, (size_t)(eq - arg), eq + 1, err);
}


/* -o a=b,c: a comma list; a bare key means "on" (as mount(8)'s "ro"). */
static int
fsd_parse_mount_opts(struct fsd_opts *opts, const char *arg, vl_err_t *err)
{
    const char *p = arg;
    int rc = 0;

    while (rc == 0 && *p != '\0') {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        char *value;

        if (len == 0) {
            p++;
            continue;
        }
        if (eq == NULL) {
            rc = fsd_add_fuse_opt(opts, p, len, "on", err);
        } else {
            value = strndup(eq + 1, len - (size_t)(eq + 1 - p));
            if (value == NULL)
                return -ENOMEM;
            if (value[0] == '\0') {
                vl_err_set(err, "-o '%.*s': empty value", (int)len, p);
                rc = -EINVAL;
            } else {
                rc = fsd_add_fuse_opt(opts, p, (size_t)(eq - p), value, err);
            }
            free(value);
        }
        p += len;
    }
    return rc;
}


/* NAME.KEY=VALUE; NAME may itself contain dots (brick paths), so only the
 * shape is checked here and the split happens against the volfile. */
static int
fsd_parse_xopt(struct fsd_opts *opts, const char *arg, vl_err_t *err)
{
    const char *eq = strchr(arg, '=');
    const char *dot = strchr(arg, '.');
    struct fsd_xopt *xs;

    if (eq == NULL || dot == NULL || dot > eq || dot == arg ||
        dot + 1 == eq || eq[1] == '\0' || strchr(arg, '\n') != NULL) {
        vl_err_set(err, "--xlator-option '%s': expected NAME.KEY=VALUE",
                   arg);
        return -EINVAL;
    }
    xs = realloc(opts->xopts, (opts->n_xopts + 1) * sizeof(*xs));
    if (xs == NULL)
        return -ENOMEM;
    opts->xopts = xs;
    xs[opts->n_xopts].arg = strndup(arg, (size_t)(eq - arg));
    xs[opts->n_xopts].value = strdup(eq + 1);
    if (xs[opts->n_xopts].arg == NULL || xs[opts->n_xopts].value == NULL) {
        free(xs[opts->n_xopts].arg);
        free(xs[opts->n_xopts].value);
        return -ENOMEM;
    }
    opts->n_xopts++;
    return 0;
}


/* One server name; "" and names with spaces are refused. */
static int
fsd_add_vf_server(struct fsd_opts *opts, const char *name, size_t len,
                  vl_err_t *err)
{
    if (len == 0 || memchr(name, ' ', len) != NULL) {
        vl_err_set(err, "volfile server '%.*s': bad host name", (int)len,
                   name);
        return -EINVAL;
    }
    if (opts->n_vf_servers == FSD_MAX_VOLFILE_SERVERS) {
        vl_err_set(err, "more than %d volfile servers",
                   FSD_MAX_VOLFILE_SERVERS);
        return -EINVAL;
    }
    opts->vf_servers[opts->n_vf_servers] = strndup(name, len);
    if (opts->vf_servers[opts->n_vf_servers] == NULL)
        return -ENOMEM;
    opts->n_vf_servers++;
    return 0;
}


/* --volfile-server goes first whatever the order on the command line. */
static int
fsd_set_vf_server(struct fsd_opts *opts, const char *arg, vl_err_t *err)
{
    int rc;

    rc = fsd_add_vf_server(opts, arg, strlen(arg), err);
    if (rc != 0)
        return rc;
    /* Move it in front of any backups given before it. */
    for (size_t i = opts->n_vf_servers - 1; i > 0; i--) {
        char *tmp = opts->vf_servers[i];

        opts->vf_servers[i] = opts->vf_servers[i - 1];
        opts->vf_servers[i - 1] = tmp;
    }
    return 0;
}


/* H2:H3:... (GlusterFS's separator, so host names only: all use the
 * --volfile-server-port; IPv6 addresses need brackets). */
static int
fsd_add_vf_backups(struct fsd_opts *opts, const char *arg, vl_err_t *err)
{
    const char *p = arg;
    int rc = 0;

    if (arg[0] == '\0') {
        vl_err_set(err, "--backup-volfile-servers: empty list");
        return -EINVAL;
    }
    while (rc == 0 && *p != '\0') {
        size_t len;

        if (*p == '[') {
            const char *close = strchr(p, ']');

            len = close != NULL ? (size_t)(close - p) + 1 : strlen(p);
        } else {
            len = strcspn(p, ":");
        }
        rc = fsd_add_vf_server(opts, p, len, err);
        p += len;
        if (*p == ':')
            p++;
    }
    return rc;
}


static int
fsd_set_path(char **slot, const char *arg, const char *what, vl_err_t *err)
{
    int rc;

    free(*slot);
    *slot = NULL;
    if (strcmp(arg, "-") == 0 && strcmp(what, "--log-file") == 0) {
        *slot = strdup("-");
        return *slot == NULL ? -ENOMEM : 0;
    }
    rc = fsd_abs_path(arg, slot, err);
    if (rc == -EINVAL)
        vl_err_set(err, "%s: empty path", what);
    return rc;
}


/* A non-empty one-line string; --metrics-address a numeric IPv4 or IPv6
 * address (no name lookups in a daemon's startup). */
static int
fsd_set_str(char **slot, const char *arg, const char *what, vl_err_t *err)
{
    unsigned char addr[sizeof(struct in6_addr)];

    if (arg[0] == '\0' || strchr(arg, '\n') != NULL) {
        vl_err_set(err, "%s: expected a non-empty value on one line", what);
        return -EINVAL;
    }
    if (strcmp(what, "--metrics-address") == 0
        && inet_pton(AF_INET, arg, addr) != 1
        && inet_pton(AF_INET6, arg, addr) != 1) {
        vl_err_set(err, "--metrics-address '%s': expected an IPv4 or IPv6 "
                   "address", arg);
        return -EINVAL;
    }
    free(*slot);
    *slot = strdup(arg);
    return *slot == NULL ? -ENOMEM : 0;
}


/* --heal-brick SUBVOL=DIR: DIR absolute (made so), SUBVOL a name. */
static int
fsd_add_heal_brick(struct fsd_opts *opts, const char *arg, vl_err_t *err)
{
    const char *eq = strchr(arg, '=');
    struct fsd_heal_brick *b;
    int rc;

    if (eq == NULL || eq == arg || eq[1] == '\0') {
        vl_err_set(err, "--heal-brick '%s': expected SUBVOL=DIR", arg);
        return -EINVAL;
    }
    if (opts->n_heal_bricks == FSD_HEAL_BRICKS_MAX) {
        vl_err_set(err, "--heal-brick: more than %d bricks",
                   FSD_HEAL_BRICKS_MAX);
        return -EINVAL;
    }
    b = &opts->heal_bricks[opts->n_heal_bricks];
    b->subvol = strndup(arg, (size_t)(eq - arg));
    if (b->subvol == NULL)
        return -ENOMEM;
    rc = fsd_set_path(&b->path, eq + 1, "--heal-brick", err);
    if (rc != 0) {
        free(b->subvol);
        b->subvol = NULL;
        return rc;
    }
    opts->n_heal_bricks++;
    return 0;
}


/* --heal-path FILE, checked (heal-resolve.c). */
static int
fsd_add_heal_path(struct fsd_opts *opts, const char *arg, vl_err_t *err)
{
    vl_gfid_t gfid;
    bool is_gfid;
    char **v;

    if (fsd_heal_path_check(arg, &is_gfid, &gfid, err) != 0)
        return -EINVAL;
    if (opts->n_heal_paths == FSD_HEAL_RESOLVE_PATHS_MAX) {
        vl_err_set(err, "--heal-path: more than %d",
                   FSD_HEAL_RESOLVE_PATHS_MAX);
        return -EINVAL;
    }
    v = realloc(opts->heal_paths, (opts->n_heal_paths + 1) * sizeof(*v));
    if (v == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    opts->heal_paths = v;
    v[opts->n_heal_paths] = strdup(arg);
    if (v[opts->n_heal_paths] == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    opts->n_heal_paths++;
    return 0;
}


/* --heal-resolve: a one-shot in the foreground, with paths and without
 * the daemon's options. */
static int
fsd_heal_resolve_check(struct fsd_opts *opts, vl_err_t *err)
{
    if (!opts->has_heal_resolve) {
        if (opts->n_heal_paths > 0) {
            vl_err_set(err, "--heal-path needs --heal-resolve");
            return -EINVAL;
        }
        return 0;
    }
    if (!opts->is_heal || !opts->is_foreground || opts->n_heal_paths == 0
        || opts->mountpoint != NULL || opts->is_rebalance
        || opts->heal_state != NULL || opts->n_heal_bricks > 0) {
        vl_err_set(err, "--heal-resolve needs --heal, -N, at least one "
                   "--heal-path, and no mount point, --rebalance, "
                   "--heal-state or --heal-brick");
        return -EINVAL;
    }
    return 0;
}


/* --heal and its options go together; defaults filled in. */
static int
fsd_heal_opts_check(struct fsd_opts *opts, vl_err_t *err)
{
    if (opts->has_heal_resolve || opts->n_heal_paths > 0)
        return fsd_heal_resolve_check(opts, err);
    if (opts->is_heal) {
        if (opts->mountpoint != NULL || opts->is_rebalance
            || opts->heal_state == NULL || opts->n_heal_bricks == 0) {
            vl_err_set(err, "--heal needs --heal-state, at least one "
                       "--heal-brick, no mount point and no --rebalance");
            return -EINVAL;
        }
        if (opts->heal_threads == 0)
            opts->heal_threads = FSD_HEAL_THREADS_DEFAULT;
        if (opts->heal_interval == 0)
            opts->heal_interval = FSD_HEAL_INTERVAL_DEFAULT;
        return 0;
    }
    if (opts->heal_state != NULL || opts->n_heal_bricks > 0
        || opts->heal_threads != 0 || opts->heal_interval != 0) {
        vl_err_set(err, "--heal-state, --heal-brick, --heal-threads and "
                   "--heal-interval need --heal");
        return -EINVAL;
    }
    return 0;
}


static int
fsd_opts_one(struct fsd_opts *opts, int c, const char *arg, vl_err_t *err)
{
    switch (c) {
    case 'f':
        return fsd_set_path(&opts->volfile, arg, "--volfile", err);
    case 'N':
        opts->is_foreground = true;
        return 0;
    case OPT_LOG_FILE:
        return fsd_set_path(&opts->log_file, arg, "--log-file", err);
    case OPT_LOG_LEVEL:
        if (vl_log_level_parse(arg, &opts->log_level) != 0) {
            vl_err_set(err, "--log-level: unknown level '%s'", arg);
            return -EINVAL;
        }
        opts->has_log_level = true;
        return 0;
    case OPT_PID_FILE:
        return fsd_set_path(&opts->pid_file, arg, "--pid-file", err);
    case OPT_EVENT_THREADS:
        return fsd_parse_uint(arg, 1, 64, "--event-threads",
                              &opts->event_threads, err);
    case OPT_DUMP_DIR:
        return fsd_set_path(&opts->dump_dir, arg, "--dump-dir", err);
    case OPT_XLATOR_OPTION:
        return fsd_parse_xopt(opts, arg, err);
    case OPT_FUSE_OPT:
        return fsd_parse_fuse_opt(opts, arg, err);
    case 'o':
        return fsd_parse_mount_opts(opts, arg, err);
    case OPT_READY_FD:
        return fsd_parse_ready_fd(opts, arg, err);
    case OPT_READY_TIMEOUT:
        return fsd_parse_uint(arg, 1, 86400, "--ready-timeout",
                              &opts->ready_timeout_s, err);
    case OPT_VF_SERVER:
        if (opts->has_vf_server) {
            vl_err_set(err, "--volfile-server given twice (use "
                       "--backup-volfile-servers)");
            return -EINVAL;
        }
        opts->has_vf_server = true;
        return fsd_set_vf_server(opts, arg, err);
    case OPT_VF_PORT:
        return fsd_parse_uint(arg, 1, 65535, "--volfile-server-port",
                              &opts->vf_port, err);
    case OPT_VF_ID:
        if (arg[0] == '\0' || strchr(arg, '/') != NULL) {
            vl_err_set(err, "--volfile-id '%s': expected a volume name",
                       arg);
            return -EINVAL;
        }
        free(opts->vf_id);
        opts->vf_id = strdup(arg);
        return opts->vf_id == NULL ? -ENOMEM : 0;
    case OPT_VF_BACKUPS:
        return fsd_add_vf_backups(opts, arg, err);
    case OPT_MGMT_TLS:
        opts->is_mgmt_tls = true;
        return 0;
    case OPT_MGMT_SSL_CERT:
        return fsd_set_path(&opts->mgmt_ssl[0], arg, "--mgmt-ssl-cert", err);
    case OPT_MGMT_SSL_KEY:
        return fsd_set_path(&opts->mgmt_ssl[1], arg, "--mgmt-ssl-key", err);
    case OPT_MGMT_SSL_CA:
        return fsd_set_path(&opts->mgmt_ssl[2], arg, "--mgmt-ssl-ca", err);
    case OPT_MGMT_SSL_CHECK_HOST:
        opts->is_mgmt_check_host = true;
        return 0;
    case OPT_REBALANCE:
        opts->is_rebalance = true;
        return 0;
    case OPT_REBAL_STATE:
        return fsd_set_path(&opts->rebal_state, arg, "--rebalance-state",
                            err);
    case OPT_FIX_LAYOUT:
        opts->is_fix_layout = true;
        return 0;
    case OPT_THROTTLE:
        if (fsd_rebal_throttle_parse(arg, &opts->rebal_throttle) != 0) {
            vl_err_set(err, "--throttle '%s': expected lazy, normal, "
                       "aggressive or 1-%d", arg, FSD_REBAL_THROTTLE_MAX);
            return -EINVAL;
        }
        return 0;
    case OPT_HEAL:
        opts->is_heal = true;
        return 0;
    case OPT_HEAL_BRICK:
        return fsd_add_heal_brick(opts, arg, err);
    case OPT_HEAL_STATE:
        return fsd_set_path(&opts->heal_state, arg, "--heal-state", err);
    case OPT_HEAL_THREADS:
        return fsd_parse_uint(arg, 1, FSD_HEAL_THREADS_MAX, "--heal-threads",
                              &opts->heal_threads, err);
    case OPT_HEAL_INTERVAL:
        return fsd_parse_uint(arg, 1, FSD_HEAL_INTERVAL_MAX,
                              "--heal-interval", &opts->heal_interval, err);
    case OPT_HEAL_RESOLVE:
        opts->has_heal_resolve = true;
        return fsd_heal_policy_parse(arg, &opts->heal_policy, err);
    case OPT_HEAL_PATH:
        return fsd_add_heal_path(opts, arg, err);
    case OPT_METRICS_PORT:
        opts->has_metrics = true;
        return fsd_parse_uint(arg, 0, 65535, "--metrics-port",
                              &opts->metrics_port, err);
    case OPT_METRICS_ADDRESS:
        return fsd_set_str(&opts->metrics_address, arg, "--metrics-address",
                           err);
    case OPT_METRICS_PORT_FILE:
        return fsd_set_path(&opts->metrics_port_file, arg,
                            "--metrics-port-file", err);
    case OPT_METRICS_VOLUME:
        return fsd_set_str(&opts->metrics_volume, arg, "--metrics-volume",
                           err);
    case OPT_METRICS_BRICK:
        return fsd_set_str(&opts->metrics_brick, arg, "--metrics-brick",
                           err);
    case 'V':
        opts->is_version = true;
        return 0;
    case 'h':
        opts->is_help = true;
        return 0;
    default:
        vl_err_set(err, "unknown option (see --help)");
        return -EINVAL;
    }
}


int
fsd_opts_parse(int argc, char **argv, struct fsd_opts *opts, vl_err_t *err)
{
    int rc = 0;
    int c;

    memset(opts, 0, sizeof(*opts));
    opts->event_threads = FSD_DEFAULT_EVENT_THREADS;
    opts->ready_timeout_s = FSD_DEFAULT_READY_TIMEOUT_S;
    opts->ready_fd = -1;
    opts->vf_port = FSD_DEFAULT_VOLFILE_PORT;

    /* getopt keeps state across calls (unit tests parse many times). */
    optind = 0;
    opterr = 0;
    while (rc == 0 &&
           (c = getopt_long(argc, argv, "+:f:No:Vh", fsd_long_opts,
                            NULL)) != -1) {
        if (c == ':') {
            vl_err_set(err, "option '%s' needs a value (see --help)",
                       argv[optind - 1]);
            rc = -EINVAL;
            break;
        }
        if (c == '?') {
            if (optopt != 0 && optopt < 256)
                vl_err_set(err, "unknown option '-%c' (see --help)",
                           optopt);
            else
                vl_err_set(err, "unknown option '%s' (see --help)",
                           argv[optind - 1]);
            rc = -EINVAL;
            break;
        }
        rc = fsd_opts_one(opts, c, optarg, err);
    }
    if (rc != 0)
        goto out;
    if (opts->is_help || opts->is_version)
        goto out;
    if (optind < argc) {
        rc = fsd_set_path(&opts->mountpoint, argv[optind], "mount point",
                          err);
        if (rc != 0)
            goto out;
        optind++;
    }
    if (optind < argc) {
        vl_err_set(err, "unexpected argument '%s' (see --help)",
                   argv[optind]);
        rc = -EINVAL;
        goto out;
    }
    if (opts->n_vf_servers > 0 && !opts->has_vf_server) {
        vl_err_set(err, "--backup-volfile-servers needs --volfile-server");
        rc = -EINVAL;
        goto out;
    }
    if (opts->has_vf_server && opts->volfile != NULL) {
        vl_err_set(err, "--volfile and --volfile-server exclude each other");
        rc = -EINVAL;
        goto out;
    }
    if (opts->has_vf_server != (opts->vf_id != NULL)) {
        vl_err_set(err, "--volfile-server and --volfile-id go together "
                   "(see --help)");
        rc = -EINVAL;
        goto out;
    }
    if (opts->volfile == NULL && !opts->has_vf_server) {
        vl_err_set(err, "--volfile or --volfile-server is required (see "
                   "--help)");
        rc = -EINVAL;
        goto out;
    }
    if (opts->is_rebalance
        && (opts->mountpoint != NULL || opts->rebal_state == NULL)) {
        vl_err_set(err, "--rebalance needs --rebalance-state and no mount "
                   "point");
        rc = -EINVAL;
        goto out;
    }
    if (!opts->is_rebalance && (opts->rebal_state != NULL
                                || opts->is_fix_layout
                                || opts->rebal_throttle != 0)) {
        vl_err_set(err, "--rebalance-state, --fix-layout and --throttle "
                   "need --rebalance");
        rc = -EINVAL;
        goto out;
    }
    if (opts->is_rebalance && opts->rebal_throttle == 0)
        opts->rebal_throttle = FSD_REBAL_THROTTLE_DEFAULT;
    rc = fsd_heal_opts_check(opts, err);
    if (rc != 0)
        goto out;
    if (opts->ready_fd >= 0 && !opts->is_foreground) {
        vl_err_set(err, "--ready-fd needs -N (a daemon reports to the "
                   "command that started it)");
        rc = -EINVAL;
        goto out;
    }
    if (opts->n_fuse_opts > 0 && opts->mountpoint == NULL) {
        vl_err_set(err, "fuse options given without a mount point");
        rc = -EINVAL;
        goto out;
    }
    if (opts->dump_dir == NULL) {
        opts->dump_dir = strdup(FSD_DEFAULT_DUMP_DIR);
        if (opts->dump_dir == NULL)
            rc = -ENOMEM;
    }
out:
    if (rc == -ENOMEM)
        vl_err_set(err, "out of memory");
    if (rc != 0)
        fsd_opts_clear(opts);
    return rc;
}


void
fsd_opts_clear(struct fsd_opts *opts)
{
    free(opts->volfile);
    free(opts->mountpoint);
    free(opts->log_file);
    free(opts->pid_file);
    free(opts->dump_dir);
    free(opts->vf_id);
    for (size_t i = 0; i < 3; i++)
        free(opts->mgmt_ssl[i]);
    free(opts->rebal_state);
    free(opts->heal_state);
    for (size_t i = 0; i < opts->n_heal_paths; i++)
        free(opts->heal_paths[i]);
    free(opts->heal_paths);
    for (size_t i = 0; i < opts->n_heal_bricks; i++) {
        free(opts->heal_bricks[i].subvol);
        free(opts->heal_bricks[i].path);
    }
    for (size_t i = 0; i < opts->n_vf_servers; i++)
        free(opts->vf_servers[i]);
    for (size_t i = 0; i < opts->n_xopts; i++) {
        free(opts->xopts[i].arg);
        free(opts->xopts[i].value);
    }
    free(opts->xopts);
    for (size_t i = 0; i < opts->n_fuse_opts; i++) {
        free(opts->fuse_opts[i].key);
        free(opts->fuse_opts[i].value);
    }
    free(opts->fuse_opts);
    free(opts->metrics_address);
    free(opts->metrics_port_file);
    free(opts->metrics_volume);
    free(opts->metrics_brick);
    memset(opts, 0, sizeof(*opts));
}
