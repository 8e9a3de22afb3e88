/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * validate: every check made before a command changes anything: volume
 * names (GlusterFS's rules), bricks (syntax, host is this node, path
 * shape, overlap with other bricks, existing volume id, root file system)
 * and `volume set` keys and values, resolved through the option tables of
 * the translator classes that the generated graphs use.
 * Threads: the worker thread (md_state.lock held) and unit tests.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "mortard.h"


int
md_check_volname(const char *name, vl_err_t *err)
{
    size_t n = strlen(name);

    if (n == 0 || n > MD_VOLNAME_MAX) {
        vl_err_set(err, "volume name must be 1 to %d characters",
                   MD_VOLNAME_MAX);
        return -EINVAL;
    }
    if (name[0] == '-') {
        vl_err_set(err, "volume name '%s' must not start with '-'", name);
        return -EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        char c = name[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '-')) {
            vl_err_set(err, "volume name '%s' has an invalid character "
                       "(allowed: letters, digits, '_' and '-')", name);
            return -EINVAL;
        }
    }
    if (strcmp(name, "all") == 0 || strcmp(name, "help") == 0) {
        vl_err_set(err, "'%s' is a reserved word, not a volume name", name);
        return -EINVAL;
    }
    return 0;
}


int
md_parse_brick(const char *arg, char **host, char **path, vl_err_t *err)
{
    const char *colon = strrchr(arg, ':');
    char *h = NULL, *p = NULL;
    size_t n;

    /* "host:/path"; an IPv6 host is written in brackets. */
    if (arg[0] == '[') {
        const char *rb = strchr(arg, ']');

        colon = rb != NULL && rb[1] == ':' ? rb + 1 : NULL;
    } else {
        colon = strchr(arg, ':');
    }
    if (colon == NULL || colon == arg || colon[1] != '/') {
        vl_err_set(err, "wrong brick type: %s, use <HOSTNAME>:"
                   "<export-dir-abs-path>", arg);
        return -EINVAL;
    }
    if (arg[0] == '[')
        h = strndup(arg + 1, (size_t)(colon - arg - 2));
    else
        h = strndup(arg, (size_t)(colon - arg));
    p = strdup(colon + 1);
    if (h == NULL || p == NULL) {
        free(h);
        free(p);
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
    if (strstr(p, "//") != NULL || strstr(p, "/./") != NULL ||
        strstr(p, "/../") != NULL || strcmp(p, "/") == 0 ||
        (n >= 2 && strcmp(p + n - 2, "/.") == 0) ||
        (n >= 3 && strcmp(p + n - 3, "/..") == 0) || n >= 4000 ||
        strpbrk(p, "\n\r") != NULL) {
        vl_err_set(err, "brick path '%s' is not a usable absolute path",
                   colon + 1);
        free(h);
        free(p);
        return -EINVAL;
    }
    *host = h;
    *path = p;
    return 0;
}


static bool
md_addr_is_local(const struct sockaddr *sa, const struct ifaddrs *ifs)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)sa;

        if ((ntohl(a->sin_addr.s_addr) >> 24) == 127)
            return true;
        for (const struct ifaddrs *i = ifs; i != NULL; i = i->ifa_next)
            if (i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET &&
                ((const struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr ==
                    a->sin_addr.s_addr)
                return true;
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)sa;

        if (IN6_IS_ADDR_LOOPBACK(&a->sin6_addr))
            return true;
        for (const struct ifaddrs *i = ifs; i != NULL; i = i->ifa_next)
            if (i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET6 &&
                memcmp(&((const struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
                       &a->sin6_addr, sizeof(a->sin6_addr)) == 0)
                return true;
    }
    return false;
}


bool
md_host_is_local(const char *host)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    struct ifaddrs *ifs = NULL;
    char hn[256];
    bool is_local = false;

    if (strcmp(host, "localhost") == 0)
        return true;
    if (gethostname(hn, sizeof(hn)) == 0) {
        hn[sizeof(hn) - 1] = '\0';
        if (strcmp(hn, host) == 0)
            return true;
    }
    if (getaddrinfo(host, NULL, &hints, &res) != 0)
        return false;
    if (getifaddrs(&ifs) == 0) {
        for (struct addrinfo *a = res; a != NULL && !is_local; a = a->ai_next)
            is_local = md_addr_is_local(a->ai_addr, ifs);
        freeifaddrs(ifs);
    }
    freeaddrinfo(res);
    return is_local;
}


/* True if a is b or below b. */
static bool
md_path_within(const char *a, const char *b)
{
    size_t n = strlen(b);

    return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}


int
md_check_brick(struct md_state *st, const char *host, const char *path,
               bool force, vl_err_t *err)
{
    struct stat sb, root;
    char probe[4096];

    if (!md_host_is_local(host)) {
        vl_err_set(err, "host %s is not this node (only single-node "
                   "volumes are supported until peers exist)", host);
        return -EHOSTUNREACH;
    }
    for (struct md_volume *v = st->vols; v != NULL; v = v->next)
        for (size_t i = 0; i < v->n_bricks; i++) {
            const char *o = v->bricks[i].path;

            if (strcmp(o, path) == 0) {
                vl_err_set(err, "brick %s:%s is already a brick of volume "
                           "%s", host, path, v->name);
                return -EEXIST;
            }
            if (md_path_within(path, o) || md_path_within(o, path)) {
                vl_err_set(err, "brick %s:%s %s brick %s of volume %s",
                           host, path,
                           md_path_within(path, o) ? "is inside" :
                                                     "contains",
                           o, v->name);
                return -EEXIST;
            }
        }
    if (stat(path, &sb) == 0) {
        ssize_t n;

        if (!S_ISDIR(sb.st_mode)) {
            vl_err_set(err, "brick path %s exists and is not a directory",
                       path);
            return -ENOTDIR;
        }
        n = getxattr(path, MD_VOLID_XATTR, NULL, 0);
        if (n >= 0) {
            vl_err_set(err, "%s is already part of a volume (it has %s; "
                       "remove the xattr to reuse it)", path,
                       MD_VOLID_XATTR);
            return -EEXIST;
        }
        snprintf(probe, sizeof(probe), "%s", path);
    } else if (errno == ENOENT) {
        /* Only the brick directory itself is created at commit, as
         * GlusterFS does: a missing parent is most likely a typo, and
         * creating the whole path would silently put the brick on
         * whatever file system holds the nearest existing ancestor
         * (often the root disk). */
        char *slash;

        snprintf(probe, sizeof(probe), "%s", path);
        slash = strrchr(probe, '/');
        if (slash == probe)
            probe[1] = '\0';
        else if (slash != NULL)
            *slash = '\0';
        if (stat(probe, &sb) != 0) {
            int e = errno;

            vl_err_set(err, "Failed to create brick directory for brick "
                       "%s:%s. Reason : %s (parent %s)", host, path,
                       strerror(e), probe);
            return -e;
        }
        if (!S_ISDIR(sb.st_mode)) {
            vl_err_set(err, "Failed to create brick directory for brick "
                       "%s:%s. Reason : %s (parent %s)", host, path,
                       strerror(ENOTDIR), probe);
            return -ENOTDIR;
        }
    } else {
        int e = errno; /* ENOTDIR: a component is a file; EACCES, ... */

        vl_err_set(err, "Failed to create brick directory for brick "
                   "%s:%s. Reason : %s", host, path, strerror(e));
        return -e;
    }
    if (!force && stat("/", &root) == 0 && root.st_dev == sb.st_dev) {
        vl_err_set(err, "the brick %s:%s is on the root file system; use "
                   "a separate file system, or add 'force' at the end of "
                   "the command to override", host, path);
        return -EPERM;
    }
    return 0;
}


int
md_check_new_bricks(struct md_state *st, char *const *args, int n,
                    bool force, char **hosts, char **paths, vl_err_t *err)
{
    int rc = 0, i;

    memset(hosts, 0, (size_t)n * sizeof(*hosts));
    memset(paths, 0, (size_t)n * sizeof(*paths));
    for (i = 0; i < n && rc == 0; i++) {
        struct md_brick tmp = {0};

        rc = md_parse_brick(args[i], &hosts[i], &paths[i], err);
        if (rc != 0)
            break;
        tmp.host = hosts[i];
        tmp.path = paths[i];
        for (int j = 0; j < i && rc == 0; j++) {
            bool is_same_host = strcmp(hosts[j], hosts[i]) == 0 ||
                                (md_brick_is_local(st, &tmp) &&
                                 md_host_is_local(hosts[j]));

            if (!is_same_host)
                continue;
            if (strcmp(paths[j], paths[i]) == 0) {
                vl_err_set(err, "brick %s is given more than once",
                           args[i]);
                rc = -EINVAL;
            } else if (md_path_within(paths[i], paths[j]) ||
                       md_path_within(paths[j], paths[i])) {
                vl_err_set(err, "bricks %s and %s are nested", args[j],
                           args[i]);
                rc = -EINVAL;
            }
        }
        if (rc != 0)
            break;
        if (md_brick_is_local(st, &tmp)) {
            rc = md_check_brick(st, hosts[i], paths[i], force, err);
        } else if (md_peer_find_host(st, hosts[i]) == NULL) {
            vl_err_set(err, "Host %s is not in 'Peer in Cluster' state",
                       hosts[i]);
            rc = -EHOSTUNREACH;
        }
    }
    if (rc != 0)
        for (i = 0; i < n; i++) {
            free(hosts[i]);
            free(paths[i]);
            hosts[i] = paths[i] = NULL;
        }
    return rc;
}


static const char *const md_settable_types[] = {
    "storage/posix", "features/locks", "performance/io-threads",
    "protocol/server", "protocol/client", "cluster/distribute",
    "cluster/replicate",
    "performance/write-behind", "performance/read-ahead",
    "performance/readdir-ahead", "performance/quick-read",
    "performance/nl-cache", "performance/md-cache", "features/upcall",
    "debug/io-stats", NULL,
};


/* Options of mortard itself that shape the client graph; no translator
 * reads them (volgen does). */
struct md_diag_conf {
    bool is_client_trace; /* debug/trace on top of the client graph */
    bool is_write_behind; /* performance/write-behind above distribute */
    bool is_read_ahead;   /* performance/read-ahead above write-behind */
    bool is_readdir_ahead; /* performance/readdir-ahead above read-ahead
                              or write-behind */
    bool is_quick_read;   /* performance/quick-read above readdir-ahead,
                             read-ahead or write-behind */
    bool is_nl_cache;     /* performance/nl-cache above quick-read */
    bool is_md_cache;     /* performance/md-cache on top */
    bool is_brick_metrics; /* bricks serve GET /metrics (brick.c) */
    uint64_t cache_size;   /* every client cache together
                              (client-caches.c) */
    uint64_t inode_lru_limit; /* inodes kept unreferenced, per process */
};

static const vl_option_t md_diag_options[] = {
    VL_OPT_BOOL("client-trace", struct md_diag_conf, is_client_trace,
                .def = "off", .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .doc = "Put debug/trace at the top of the client graph "
                       "(right under mount/fuse): every fop of the mount "
                       "is logged. Clients switch graphs live."),
    VL_OPT_BOOL("write-behind", struct md_diag_conf, is_write_behind,
                .def = "on", .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"performance.write-behind"},
                .doc = "Put performance/write-behind in the client graph "
                       "(above distribute): writes are answered at once "
                       "and sent behind. Clients switch graphs live."),
    VL_OPT_BOOL("read-ahead", struct md_diag_conf, is_read_ahead,
                .def = "off", .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"performance.read-ahead"},
                .doc = "Put performance/read-ahead in the client graph "
                       "(above write-behind): the next pages of a file "
                       "read sequentially are fetched before they are "
                       "asked for. Off as in GlusterFS: the kernel's own "
                       "read-ahead (mount/fuse's read-ahead-kb) usually "
                       "does the same. Clients switch graphs live."),
    VL_OPT_BOOL("readdir-ahead", struct md_diag_conf, is_readdir_ahead,
                .def = "off", .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"performance.readdir-ahead"},
                .doc = "Put performance/readdir-ahead in the client graph "
                       "(above read-ahead or write-behind): the rest of a "
                       "directory listed sequentially is fetched before "
                       "it is asked for. Clients switch graphs live."),
    VL_OPT_BOOL("quick-read", struct md_diag_conf, is_quick_read,
                .def = "on", .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"performance.quick-read"},
                .doc = "Put performance/quick-read in the client graph "
                       "(above write-behind): small files come with their "
                       "lookup and are read from that cache. Clients "
                       "switch graphs live."),
    VL_OPT_BOOL("nl-cache", struct md_diag_conf, is_nl_cache,
                .def = "on", .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"performance.nl-cache"},
                .doc = "Put performance/nl-cache in the client graph (on "
                       "top): a lookup of a name absent from a directory "
                       "this client made is answered without asking the "
                       "bricks, which tell the client when anyone else "
                       "changes the directory. Clients switch graphs "
                       "live."),
    VL_OPT_BOOL("stat-prefetch", struct md_diag_conf, is_md_cache,
                .def = "on", .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"performance.stat-prefetch"},
                .doc = "Put performance/md-cache in the client graph (on "
                       "top, above nl-cache): attributes are answered "
                       "from the client's cache for md-cache-timeout, "
                       "and dropped at once when another client changes "
                       "them (features.cache-invalidation). Clients "
                       "switch graphs live."),
    VL_OPT_SIZE("cache-size", struct md_diag_conf, cache_size, .min = 0,
                .max = 64 * 1024 * 1024 * 1024LL, .def = "32MiB",
                .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"performance.cache-size"},
                .doc = "Memory for the data every client of the volume "
                       "caches, all its caches together: quick-read's "
                       "contents, write-behind's writes not yet on a "
                       "brick, read-ahead's pages, readdir-ahead's "
                       "entries, nl-cache's names. A cache's own limit "
                       "(performance.quick-read-cache-size...) is taken "
                       "as set; the rest is shared among the others "
                       "(quick-read 8, write-behind 4, read-ahead 2, "
                       "readdir-ahead 1, nl-cache 1 parts; a cache that "
                       "is off takes none). Setting a cache's own limit "
                       "past what this leaves is refused. Not set, a "
                       "cache's own limit comes on top of the others' "
                       "shares of the default. Clients switch live. "
                       "Attributes and inodes are bounded by "
                       "network.inode-lru-limit."),
    VL_OPT_UINT("inode-lru-limit", struct md_diag_conf, inode_lru_limit,
                .min = 0, .max = 1048576, .def = "16384",
                .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"network.inode-lru-limit"},
                .doc = "Inodes no request and no kernel reference holds "
                       "that a client or a brick keeps cached (with what "
                       "the translators keep of them: attributes, "
                       "layouts); the least recently used are forgotten "
                       "first. Clients and bricks switch live."),
    VL_OPT_BOOL("brick-metrics", struct md_diag_conf, is_brick_metrics,
                .def = "off", .flags = VL_OPT_SETTABLE,
                .doc = "Bricks serve Prometheus metrics (doc/metrics.md) "
                       "on 127.0.0.1 at a port the kernel picks, which "
                       "mortard writes to RUN_DIR/VOLUME-BRICK.metrics-port "
                       "and volume status VOLUME detail shows; so do the "
                       "volume's self-heal daemon (RUN_DIR/heal/"
                       "VOLUME.metrics-port) and rebalance "
                       "(RUN_DIR/rebalance/VOLUME.metrics-port). Applies "
                       "to processes started after the change (volume "
                       "stop and start)."),
    VL_OPT_END,
};

static const vl_xlator_class_t md_diag_class = {
    .abi = VL_XLATOR_ABI,
    .type = "mortard/diagnostics",
    .prefix = "diagnostics",
    .options = md_diag_options,
    .doc = "Client graph shape options of mortard.",
};


const vl_xlator_class_t *const *
md_settable_classes(void)
{
    static const vl_xlator_class_t
        *classes[VL_ARRAY_SIZE(md_settable_types) + 2];
    size_t n = 0;

    /* Registration is done once at startup, before any caller. */
    for (size_t i = 0; md_settable_types[i] != NULL; i++) {
        const vl_xlator_class_t *c = vl_registry_find(md_settable_types[i]);

        if (c != NULL)
            classes[n++] = c;
    }
    classes[n++] = &md_diag_class;
    classes[n++] = &md_shd_class;
    classes[n] = NULL;
    return classes;
}


/* An option of cls whose alias is exactly key. */
static const vl_option_t *
md_find_alias(const vl_xlator_class_t *cls, const char *key)
{
    for (const vl_option_t *o = cls->options; o != NULL && o->key != NULL;
         o++)
        for (size_t a = 0; a < VL_ARRAY_SIZE(o->aliases); a++)
            if (o->aliases[a] != NULL && strcmp(o->aliases[a], key) == 0)
                return o;
    return NULL;
}


int
md_option_resolve(const char *key, const char *value,
                  const vl_xlator_class_t **cls_out,
                  const vl_option_t **opt_out, char *canon, size_t len,
                  vl_err_t *err)
{
    const vl_xlator_class_t *const *classes = md_settable_classes();
    const vl_xlator_class_t *cls = NULL;
    const vl_option_t *opt = NULL;
    char concrete[512];
    const char *star;
    int rc;

    for (size_t i = 0; classes[i] != NULL && opt == NULL; i++) {
        size_t n = strlen(classes[i]->prefix);

        if (strncmp(key, classes[i]->prefix, n) == 0 && key[n] == '.' &&
            classes[i]->options != NULL) {
            opt = vl_option_find(classes[i]->options, key + n + 1);
            cls = classes[i];
        }
    }
    for (size_t i = 0; classes[i] != NULL && opt == NULL; i++) {
        opt = md_find_alias(classes[i], key);
        cls = classes[i];
    }
    if (opt == NULL) {
        vl_err_set(err, "option %s does not exist", key);
        return -ENOENT;
    }
    if (!(opt->flags & VL_OPT_SETTABLE)) {
        vl_err_set(err, "option %s cannot be changed with volume set", key);
        return -EPERM;
    }
    if (value != NULL) {
        if (value[0] == '\0' || strpbrk(value, "\n\r") != NULL ||
            strlen(value) > 1024) {
            vl_err_set(err, "value for %s must be one non-empty line of at "
                       "most 1024 bytes", key);
            return -EINVAL;
        }
        /* A pattern key is checked with a stand-in for its '*'. */
        star = strchr(opt->key, '*');
        if (star != NULL)
            snprintf(concrete, sizeof(concrete), "%.*sx%s",
                     (int)(star - opt->key), opt->key, star + 1);
        else
            snprintf(concrete, sizeof(concrete), "%s", opt->key);
        rc = vl_option_validate(cls->options, concrete, value, err);
        if (rc != 0)
            return rc == -ENOENT ? -ENOENT : -EINVAL;
    }
    snprintf(canon, len, "%s.%s", cls->prefix, opt->key);
    if (cls_out != NULL)
        *cls_out = cls;
    if (opt_out != NULL)
        *opt_out = opt;
    return 0;
}
