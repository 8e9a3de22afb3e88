/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store: mortard's on-disk state under --state-dir.
 *
 *   mortard.info          node-id=UUID, version=N (store-wide version)
 *   vols/NAME/info        id, name, type (distribute or replicate),
 *                         replica-count (replicate only; a store
 *                         without it is plain distribute), status,
 *                         version, transport, next-brick and
 *                         brick.N.{host,path,port,id,decommissioned}
 *                         reset (reset-brick start..commit) and,
 *                         once the replica count changed,
 *                         next-set and brick.N.set (replica.c)
 *   vols/NAME/options     canonical key=value of what `volume set` changed
 *   vols/NAME/BRICK.vol   generated volfiles; client.vol (brick and client)
 *
 * Crash safety: a single file is replaced through a temp file, fsync,
 * rename and an fsync of the directory. A volume is several files, so its
 * whole directory is written as vols/.NAME.new and exchanged with the old
 * one in one renameat2(RENAME_EXCHANGE); after kill -9 at any moment the
 * store holds either the old or the new directory, never a mix. Leftover
 * dot-directories are removed at load. Parsing is strict: any unknown key
 * or bad value names the file and line.
 * Threads: called on the worker thread with md_state.lock held, and at
 * startup.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mortard.h"

#define MD_BRICKS_MAX 1024


static int
md_write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}


static int
md_fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = 0;

    if (fd < 0)
        return -errno;
    if (fsync(fd) != 0)
        rc = -errno;
    close(fd);
    return rc;
}


int
md_write_atomic(const char *dir, const char *name, const char *data,
                size_t len, vl_err_t *err)
{
    char tmp[4096];
    char dst[4096];
    int fd = -1;
    int rc;

    snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
    snprintf(dst, sizeof(dst), "%s/%s", dir, name);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = -errno;
        vl_err_set(err, "%s: %s", tmp, strerror(-rc));
        return rc;
    }
    rc = md_write_all(fd, data, len);
    if (rc == 0 && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, dst) != 0)
        rc = -errno;
    if (rc == 0)
        rc = md_fsync_dir(dir);
    if (rc != 0) {
        vl_err_set(err, "writing %s: %s", dst, strerror(-rc));
        (void)unlink(tmp);
    }
    return rc;
}


int
md_read_file(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "re");
    char *buf = NULL;
    size_t used = 0, cap = 0;
    int rc = 0;

    if (f == NULL)
        return -errno;
    for (;;) {
        size_t n;

        if (cap - used < 4096) {
            char *nb;

            if (cap > 64 * VL_MiB) {
                rc = -EFBIG;
                break;
            }
            nb = realloc(buf, cap * 2 + 8192);
            if (nb == NULL) {
                rc = -ENOMEM;
                break;
            }
            buf = nb;
            cap = cap * 2 + 8192;
        }
        n = fread(buf + used, 1, cap - used - 1, f);
        used += n;
        if (n == 0) {
            if (ferror(f))
                rc = -EIO;
            break;
        }
    }
    fclose(f);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    buf[used] = '\0';
    *out = buf;
    if (len != NULL)
        *len = used;
    return 0;
}


int
md_kv_parse(const char *text, const char *src, md_kv_cb *cb, void *arg,
            vl_err_t *err)
{
    const char *p = text;
    int line = 0;
    int rc = 0;

    while (*p != '\0') {
        const char *eol = strchr(p, '\n');
        size_t n = eol != NULL ? (size_t)(eol - p) : strlen(p);
        char *copy, *eq;

        line++;
        copy = strndup(p, n);
        if (copy == NULL)
            return -ENOMEM;
        p += n + (eol != NULL ? 1 : 0);
        if (copy[0] == '\0' || copy[0] == '#') {
            free(copy);
            continue;
        }
        eq = strchr(copy, '=');
        if (eq == NULL || eq == copy || strlen(copy) != n) {
            vl_err_set(err, "%s:%d: expected key=value", src, line);
            free(copy);
            return -EINVAL;
        }
        *eq = '\0';
        rc = cb(copy, eq + 1, line, arg, err);
        if (rc != 0) {
            vl_err_t inner = *err;

            vl_err_set(err, "%s:%d: %s", src, line, inner.msg);
            free(copy);
            return rc;
        }
        free(copy);
    }
    return 0;
}


const char *
md_vol_status_name(enum md_vol_status s)
{
    switch (s) {
    case MD_VOL_STARTED:
        return "Started";
    case MD_VOL_STOPPED:
        return "Stopped";
    default:
        return "Created";
    }
}


void
md_vol_dir(const struct md_state *st, const char *name, char *buf,
           size_t len)
{
    snprintf(buf, len, "%s/vols/%s", st->state_dir, name);
}


void
md_volume_free(struct md_volume *vol)
{
    if (vol == NULL)
        return;
    for (size_t i = 0; i < vol->n_bricks; i++) {
        free(vol->bricks[i].host);
        free(vol->bricks[i].path);
    }
    free(vol->bricks);
    for (size_t i = 0; i < vol->n_opts; i++) {
        free(vol->opts[i].key);
        free(vol->opts[i].value);
    }
    free(vol->opts);
    free(vol);
}


struct md_volume *
md_volume_find(struct md_state *st, const char *name)
{
    for (struct md_volume *v = st->vols; v != NULL; v = v->next)
        if (strcmp(v->name, name) == 0)
            return v;
    return NULL;
}


void
md_volume_link(struct md_state *st, struct md_volume *vol)
{
    struct md_volume **pp = &st->vols;

    while (*pp != NULL && strcmp((*pp)->name, vol->name) < 0)
        pp = &(*pp)->next;
    vol->next = *pp;
    *pp = vol;
}


void
md_volume_unlink(struct md_state *st, struct md_volume *vol)
{
    for (struct md_volume **pp = &st->vols; *pp != NULL; pp = &(*pp)->next)
        if (*pp == vol) {
            *pp = vol->next;
            vol->next = NULL;
            return;
        }
}


const char *
md_vol_opt_get(const struct md_volume *vol, const char *key)
{
    for (size_t i = 0; i < vol->n_opts; i++)
        if (strcmp(vol->opts[i].key, key) == 0)
            return vol->opts[i].value;
    return NULL;
}


int
md_vol_opt_set(struct md_volume *vol, const char *key, const char *value)
{
    char *v = strdup(value);
    struct vl_kv *na;

    if (v == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < vol->n_opts; i++)
        if (strcmp(vol->opts[i].key, key) == 0) {
            free(vol->opts[i].value);
            vol->opts[i].value = v;
            return 0;
        }
    na = realloc(vol->opts, (vol->n_opts + 1) * sizeof(*na));
    if (na == NULL) {
        free(v);
        return -ENOMEM;
    }
    vol->opts = na;
    na[vol->n_opts].key = strdup(key);
    if (na[vol->n_opts].key == NULL) {
        free(v);
        return -ENOMEM;
    }
    na[vol->n_opts].value = v;
    vol->n_opts++;
    return 0;
}


bool
md_vol_opt_del(struct md_volume *vol, const char *key)
{
    for (size_t i = 0; i < vol->n_opts; i++)
        if (strcmp(vol->opts[i].key, key) == 0) {
            free(vol->opts[i].key);
            free(vol->opts[i].value);
            memmove(&vol->opts[i], &vol->opts[i + 1],
                    (vol->n_opts - i - 1) * sizeof(vol->opts[0]));
            vol->n_opts--;
            return true;
        }
    return false;
}


static int
md_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (s[0] < '0' || s[0] > '9')
        return -EINVAL;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > max)
        return -EINVAL;
    *out = v;
    return 0;
}


/* An info file being parsed. */
struct md_info_parse {
    struct md_volume *vol;    /* borrowed; being filled */
    bool is_type_replicate;   /* type=replicate was read */
};


/* One line of an info file. */
static int
md_info_cb(const char *key, const char *value, int line, void *arg,
           vl_err_t *err)
{
    struct md_info_parse *ip = arg;
    struct md_volume *vol = ip->vol;
    uint64_t n;
    vl_gfid_t g;

    (void)line;
    if (strcmp(key, "id") == 0) {
        if (vl_gfid_parse(value, &g) != 0)
            goto bad;
        snprintf(vol->id, sizeof(vol->id), "%s", value);
    } else if (strcmp(key, "name") == 0) {
        if (strcmp(value, vol->name) != 0) {
            vl_err_set(err, "name '%s' does not match the directory",
                       value);
            return -EINVAL;
        }
    } else if (strcmp(key, "type") == 0) {
        if (strcmp(value, "replicate") == 0)
            ip->is_type_replicate = true;
        else if (strcmp(value, "distribute") != 0)
            goto bad;
    } else if (strcmp(key, "replica-count") == 0) {
        if (md_parse_u64(value, MD_REPLICA_MAX, &n) != 0 || n < 2)
            goto bad;
        vol->replica_count = (unsigned)n;
    } else if (strcmp(key, "arbiter-count") == 0) {
        if (md_parse_u64(value, 1, &n) != 0 || n != 1)
            goto bad;
        vol->arbiter_count = 1;
    } else if (strcmp(key, "status") == 0) {
        if (strcmp(value, "created") == 0)
            vol->status = MD_VOL_CREATED;
        else if (strcmp(value, "started") == 0)
            vol->status = MD_VOL_STARTED;
        else if (strcmp(value, "stopped") == 0)
            vol->status = MD_VOL_STOPPED;
        else
            goto bad;
    } else if (strcmp(key, "version") == 0) {
        if (md_parse_u64(value, UINT64_MAX, &vol->version) != 0)
            goto bad;
    } else if (strcmp(key, "transport") == 0) {
        if (strcmp(value, "tcp") != 0)
            goto bad;
        snprintf(vol->transport, sizeof(vol->transport), "%s", value);
    } else if (strcmp(key, "brick-count") == 0) {
        if (md_parse_u64(value, MD_BRICKS_MAX, &n) != 0 || n == 0 ||
            vol->bricks != NULL)
            goto bad;
        vol->bricks = calloc(n, sizeof(*vol->bricks));
        if (vol->bricks == NULL)
            return -ENOMEM;
        vol->n_bricks = n;
    } else if (strcmp(key, "next-brick") == 0) {
        if (md_parse_u64(value, UINT32_MAX, &n) != 0)
            goto bad;
        vol->next_brick = (unsigned)n;
    } else if (strcmp(key, "next-set") == 0) {
        if (md_parse_u64(value, UINT32_MAX, &n) != 0 || n == 0)
            goto bad;
        vol->next_set = (unsigned)n;
    } else if (strncmp(key, "brick.", 6) == 0) {
        char *end;
        unsigned long i = strtoul(key + 6, &end, 10);
        struct md_brick *b;

        if (end == key + 6 || *end != '.' || i >= vol->n_bricks) {
            vl_err_set(err, "bad brick key '%s' (before brick-count or "
                       "out of range)", key);
            return -EINVAL;
        }
        b = &vol->bricks[i];
        end++;
        if (strcmp(end, "host") == 0 && b->host == NULL && value[0]) {
            if ((b->host = strdup(value)) == NULL)
                return -ENOMEM;
        } else if (strcmp(end, "path") == 0 && b->path == NULL &&
                   value[0] == '/') {
            if ((b->path = strdup(value)) == NULL)
                return -ENOMEM;
        } else if (strcmp(end, "port") == 0) {
            if (md_parse_u64(value, 65535, &n) != 0 || n == 0)
                goto bad;
            b->port = (uint16_t)n;
        } else if (strcmp(end, "id") == 0 && value[0] != '\0' &&
                   strlen(value) < sizeof(b->id) && !strchr(value, '/')) {
            snprintf(b->id, sizeof(b->id), "%s", value);
        } else if (strcmp(end, "decommissioned") == 0 &&
                   (strcmp(value, "0") == 0 || strcmp(value, "1") == 0)) {
            b->is_decommissioned = value[0] == '1';
        } else if (strcmp(end, "reset") == 0 &&
                   (strcmp(value, "0") == 0 || strcmp(value, "1") == 0)) {
            b->is_reset = value[0] == '1';
        } else if (strcmp(end, "set") == 0 && !b->has_set_num) {
            if (md_parse_u64(value, UINT32_MAX - 1, &n) != 0)
                goto bad;
            b->set_num = (unsigned)n;
            b->has_set_num = true;
        } else {
            goto bad;
        }
    } else {
        vl_err_set(err, "unknown key '%s'", key);
        return -EINVAL;
    }
    return 0;

bad:
    vl_err_set(err, "bad value '%s' for %s", value, key);
    return -EINVAL;
}


static int
md_options_cb(const char *key, const char *value, int line, void *arg,
              vl_err_t *err)
{
    struct md_volume *vol = arg;
    char canon[256];
    int rc;

    (void)line;
    rc = md_option_resolve(key, value, NULL, NULL, canon, sizeof(canon),
                           err);
    if (rc != 0)
        return rc;
    if (strcmp(canon, key) != 0) {
        vl_err_set(err, "'%s' is not a canonical key (%s)", key, canon);
        return -EINVAL;
    }
    return md_vol_opt_set(vol, key, value);
}


int
md_volume_load(const char *dir, const char *name, struct md_volume **out,
               vl_err_t *err)
{
    struct md_volume *vol = calloc(1, sizeof(*vol));
    struct md_info_parse ip = {.vol = vol};
    char path[4096];
    char *text = NULL;
    int rc;

    if (vol == NULL)
        return -ENOMEM;
    snprintf(vol->name, sizeof(vol->name), "%s", name);
    snprintf(path, sizeof(path), "%s/info", dir);
    rc = md_read_file(path, &text, NULL);
    if (rc != 0) {
        vl_err_set(err, "%s: %s", path, strerror(-rc));
        goto fail;
    }
    rc = md_kv_parse(text, path, md_info_cb, &ip, err);
    free(text);
    text = NULL;
    if (rc != 0)
        goto fail;
    rc = -EINVAL;
    if (vol->id[0] == '\0' || vol->version == 0 || vol->n_bricks == 0 ||
        vol->transport[0] == '\0') {
        vl_err_set(err, "%s: missing id, version, transport or bricks",
                   path);
        goto fail;
    }
    if (ip.is_type_replicate != (vol->replica_count > 1)) {
        vl_err_set(err, "%s: type %s needs replica-count %s", path,
                   ip.is_type_replicate ? "replicate" : "distribute",
                   ip.is_type_replicate ? "2 or more" : "absent");
        goto fail;
    }
    if (vol->replica_count == 0)
        vol->replica_count = 1;
    if (vol->arbiter_count != 0 && vol->replica_count != 3) {
        vl_err_set(err, "%s: arbiter-count needs replica-count 3", path);
        goto fail;
    }
    for (size_t i = 0; i < vol->n_bricks; i++) {
        struct md_brick *b = &vol->bricks[i];

        if (b->host == NULL || b->path == NULL || b->port == 0 ||
            b->id[0] == '\0') {
            vl_err_set(err, "%s: brick.%zu is incomplete", path, i);
            goto fail;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(vol->bricks[j].id, b->id) == 0) {
                vl_err_set(err, "%s: brick.%zu repeats id %s", path, i,
                           b->id);
                goto fail;
            }
        /* Stores written before next-brick existed: past every id. */
        if (strncmp(b->id, "brick", 5) == 0) {
            unsigned long k = strtoul(b->id + 5, NULL, 10);

            if (k >= vol->next_brick && k < UINT32_MAX)
                vol->next_brick = (unsigned)k + 1;
        }
    }
    if (md_vol_sets_check(vol, err) != 0) {
        vl_err_t inner = *err;

        vl_err_set(err, "%s: %s", path, inner.msg);
        goto fail;
    }
    snprintf(path, sizeof(path), "%s/options", dir);
    rc = md_read_file(path, &text, NULL);
    if (rc != 0) {
        vl_err_set(err, "%s: %s", path, strerror(-rc));
        goto fail;
    }
    rc = md_kv_parse(text, path, md_options_cb, vol, err);
    free(text);
    if (rc != 0)
        goto fail;
    *out = vol;
    return 0;

fail:
    md_volume_free(vol);
    return rc;
}


/* Removes a flat directory and its files. */
static int
md_rmdir_flat(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int rc = 0;

    if (d == NULL)
        return errno == ENOENT ? 0 : -errno;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (unlinkat(dirfd(d), de->d_name, 0) != 0 && errno != ENOENT)
            rc = -errno;
    }
    closedir(d);
    if (rmdir(dir) != 0 && errno != ENOENT)
        rc = -errno;
    return rc;
}


static int
md_node_info_save(struct md_state *st, vl_err_t *err)
{
    char buf[256];
    int n;

    n = snprintf(buf, sizeof(buf), "# mortard node state\nnode-id=%s\n"
                 "version=%" PRIu64 "\n", st->node_id, st->store_version);
    return md_write_atomic(st->state_dir, "mortard.info", buf, (size_t)n,
                           err);
}


static int
md_node_cb(const char *key, const char *value, int line, void *arg,
           vl_err_t *err)
{
    struct md_state *st = arg;
    vl_gfid_t g;

    (void)line;
    if (strcmp(key, "node-id") == 0 && vl_gfid_parse(value, &g) == 0) {
        snprintf(st->node_id, sizeof(st->node_id), "%s", value);
        return 0;
    }
    if (strcmp(key, "version") == 0 &&
        md_parse_u64(value, UINT64_MAX, &st->store_version) == 0)
        return 0;
    vl_err_set(err, "bad line '%s=%s'", key, value);
    return -EINVAL;
}


static int
md_mkdir(const char *path, vl_err_t *err)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        vl_err_set(err, "%s: %s", path, strerror(errno));
        return -errno;
    }
    return 0;
}


int
md_store_load(struct md_state *st, vl_err_t *err)
{
    char path[4096];
    char *text = NULL;
    DIR *d;
    struct dirent *de;
    int rc;

    if ((rc = md_mkdir(st->state_dir, err)) != 0)
        return rc;
    snprintf(path, sizeof(path), "%s/vols", st->state_dir);
    if ((rc = md_mkdir(path, err)) != 0)
        return rc;
    snprintf(path, sizeof(path), "%s/mortard.info", st->state_dir);
    rc = md_read_file(path, &text, NULL);
    if (rc == 0) {
        rc = md_kv_parse(text, path, md_node_cb, st, err);
        free(text);
        if (rc != 0)
            return rc;
        if (st->node_id[0] == '\0') {
            vl_err_set(err, "%s: no node-id", path);
            return -EINVAL;
        }
    } else if (rc == -ENOENT) {
        vl_gfid_t g;

        vl_gfid_generate(&g);
        vl_gfid_to_str(&g, st->node_id);
        st->store_version = 1;
        rc = md_node_info_save(st, err);
        if (rc != 0)
            return rc;
    } else {
        vl_err_set(err, "%s: %s", path, strerror(-rc));
        return rc;
    }

    snprintf(path, sizeof(path), "%s/vols", st->state_dir);
    d = opendir(path);
    if (d == NULL) {
        vl_err_set(err, "%s: %s", path, strerror(errno));
        return -errno;
    }
    rc = 0;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        char vdir[4400];
        struct md_volume *vol;

        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(vdir, sizeof(vdir), "%s/%s", path, de->d_name);
        if (de->d_name[0] == '.') {
            /* A half-written or half-deleted directory from a crash. */
            (void)md_rmdir_flat(vdir);
            continue;
        }
        rc = md_check_volname(de->d_name, err);
        if (rc != 0) {
            vl_err_t inner = *err;

            vl_err_set(err, "%s: %s", vdir, inner.msg);
            break;
        }
        rc = md_volume_load(vdir, de->d_name, &vol, err);
        if (rc != 0)
            break;
        if (vol->version > st->store_version)
            st->store_version = vol->version;
        md_volume_link(st, vol);
    }
    closedir(d);
    return rc;
}


static int
md_info_render(const struct md_volume *vol, struct md_sbuf *sb)
{
    md_sbuf_printf(sb, "# mortard volume info: do not edit while mortard "
                   "runs\nid=%s\nname=%s\ntype=%s\nstatus=%s\n"
                   "version=%" PRIu64 "\ntransport=%s\nnext-brick=%u\n"
                   "brick-count=%zu\n", vol->id, vol->name,
                   md_vol_replica(vol) > 1 ? "replicate" : "distribute",
                   vol->status == MD_VOL_STARTED   ? "started"
                   : vol->status == MD_VOL_STOPPED ? "stopped"
                                                   : "created",
                   vol->version, vol->transport, vol->next_brick,
                   vol->n_bricks);
    /* Only replicated volumes write the key: a plain distribute volume's
     * info stays what older mortards read. */
    if (md_vol_replica(vol) > 1)
        md_sbuf_printf(sb, "replica-count=%u\n", vol->replica_count);
    if (vol->arbiter_count != 0)
        md_sbuf_printf(sb, "arbiter-count=1\n");
    if (vol->next_set != 0)
        md_sbuf_printf(sb, "next-set=%u\n", vol->next_set);
    for (size_t i = 0; i < vol->n_bricks; i++) {
        const struct md_brick *b = &vol->bricks[i];

        md_sbuf_printf(sb, "brick.%zu.host=%s\nbrick.%zu.path=%s\n"
                       "brick.%zu.port=%u\nbrick.%zu.id=%s\n", i, b->host,
                       i, b->path, i, b->port, i, b->id);
        if (b->is_decommissioned)
            md_sbuf_printf(sb, "brick.%zu.decommissioned=1\n", i);
        if (b->has_set_num)
            md_sbuf_printf(sb, "brick.%zu.set=%u\n", i, b->set_num);
        if (b->is_reset)
            md_sbuf_printf(sb, "brick.%zu.reset=1\n", i);
    }
    return sb->is_oom ? -ENOMEM : 0;
}


/* Writes one generated file into the new directory. */
static int
md_save_file(const char *dir, const char *name, char *text, vl_err_t *err)
{
    int rc;

    if (text == NULL) {
        vl_err_set(err, "generating %s: out of memory", name);
        return -ENOMEM;
    }
    rc = md_write_atomic(dir, name, text, strlen(text), err);
    free(text);
    return rc;
}


int
md_volume_save(struct md_state *st, struct md_volume *vol, vl_err_t *err)
{
    char vols[4096], ndir[4400], vdir[4096], name[64];
    struct md_sbuf sb = {0};
    struct stat sbuf;
    int rc;

    vol->version++;
    snprintf(vols, sizeof(vols), "%s/vols", st->state_dir);
    snprintf(ndir, sizeof(ndir), "%s/.%s.new", vols, vol->name);
    md_vol_dir(st, vol->name, vdir, sizeof(vdir));
    (void)md_rmdir_flat(ndir);
    if (mkdir(ndir, 0700) != 0) {
        rc = -errno;
        vl_err_set(err, "%s: %s", ndir, strerror(-rc));
        goto out;
    }
    rc = md_info_render(vol, &sb);
    if (rc == 0)
        rc = md_save_file(ndir, "info", sb.data, err);
    else
        vl_err_set(err, "info: out of memory");
    sb.data = NULL;
    md_sbuf_clear(&sb);
    if (rc != 0)
        goto out;
    md_sbuf_printf(&sb, "# options changed by volume set\n");
    for (size_t i = 0; i < vol->n_opts; i++)
        md_sbuf_printf(&sb, "%s=%s\n", vol->opts[i].key,
                       vol->opts[i].value);
    rc = sb.is_oom ? -ENOMEM : 0;
    if (rc == 0)
        rc = md_save_file(ndir, "options", sb.data, err);
    sb.data = NULL;
    md_sbuf_clear(&sb);
    for (size_t i = 0; rc == 0 && i < vol->n_bricks; i++) {
        snprintf(name, sizeof(name), "%s.vol", vol->bricks[i].id);
        rc = md_save_file(ndir, name,
                          md_volgen_brick(st, vol, &vol->bricks[i]), err);
    }
    if (rc == 0)
        rc = md_save_file(ndir, "client.vol", md_volgen_client(vol), err);
    if (rc != 0)
        goto out;
    if (stat(vdir, &sbuf) == 0) {
        if (renameat2(AT_FDCWD, ndir, AT_FDCWD, vdir, RENAME_EXCHANGE) != 0)
            rc = -errno;
    } else if (rename(ndir, vdir) != 0) {
        rc = -errno;
    }
    if (rc == 0)
        rc = md_fsync_dir(vols);
    if (rc != 0) {
        vl_err_set(err, "replacing %s: %s", vdir, strerror(-rc));
        goto out;
    }
    (void)md_rmdir_flat(ndir); /* the old directory, after the exchange */
    st->store_version++;
    rc = md_node_info_save(st, err);

out:
    if (rc != 0) {
        (void)md_rmdir_flat(ndir);
        vol->version--;
    }
    return rc;
}


int
md_volume_remove(struct md_state *st, const struct md_volume *vol,
                 vl_err_t *err)
{
    char vols[4096], vdir[4096], ddir[4400];
    int rc = 0;

    snprintf(vols, sizeof(vols), "%s/vols", st->state_dir);
    md_vol_dir(st, vol->name, vdir, sizeof(vdir));
    snprintf(ddir, sizeof(ddir), "%s/.%s.del", vols, vol->name);
    (void)md_rmdir_flat(ddir);
    if (rename(vdir, ddir) != 0 || md_fsync_dir(vols) != 0) {
        rc = -errno;
        vl_err_set(err, "removing %s: %s", vdir, strerror(-rc));
        return rc;
    }
    (void)md_rmdir_flat(ddir);
    st->store_version++;
    return md_node_info_save(st, err);
}
