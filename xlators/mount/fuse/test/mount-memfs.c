/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mount-memfs: the in-test leaves ("test/memfs": a root directory with one
 * file and up to MEM_MAX_NEW created files, served from memory under
 * mem_lock from the event loop's threads; "test/memfs-down": never up)
 * and the harness the real-mount tests share (see mount-memfs.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "builtin.h"
#include "vol/vol.h"

#include "mount-memfs.h"


const vl_gfid_t mount_mem_file_gfid = {
    {0x5e, 0x1f, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99,
     0xaa, 0xbb, 0xcc, 0xdd}};


/* ---- test/memfs: root + one file, plus a few created files ---- */

#define MEM_MAX_NEW 4
#define MEM_NEW_SIZE (2 * 1024 * 1024)

struct mem_new {
    bool is_used;               /* slot taken; guarded by mem_lock */
    char name[64];              /* entry name in the root */
    vl_gfid_t gfid;             /* from the create args */
    uint32_t mode;              /* S_IFREG | permissions */
    size_t size;                /* bytes of data in use */
    char data[MEM_NEW_SIZE];    /* file contents */
};

static struct mem_new mem_new_files[MEM_MAX_NEW];
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;


/* The created file with this gfid (or name when gfid is NULL). */
static struct mem_new *
mem_new_find(const vl_gfid_t *gfid, const char *name)
{
    for (int i = 0; i < MEM_MAX_NEW; i++) {
        struct mem_new *f = &mem_new_files[i];

        if (!f->is_used)
            continue;
        if (gfid != NULL && vl_gfid_equal(gfid, &f->gfid))
            return f;
        if (name != NULL && strcmp(name, f->name) == 0)
            return f;
    }
    return NULL;
}


static void
mem_new_iatt(const struct mem_new *f, struct vl_iatt *ia)
{
    memset(ia, 0, sizeof(*ia));
    ia->gfid = f->gfid;
    ia->ino = vl_gfid_to_ino(&f->gfid);
    ia->mode = f->mode;
    ia->nlink = 1;
    ia->size = f->size;
    ia->blksize = 4096;
    ia->blocks = (f->size + 511) / 512;
}

static void
mem_iatt(const vl_gfid_t *gfid, struct vl_iatt *ia)
{
    memset(ia, 0, sizeof(*ia));
    ia->gfid = *gfid;
    ia->ino = vl_gfid_to_ino(gfid);
    ia->uid = 0;
    ia->gid = 0;
    ia->blksize = 4096;
    ia->mtime = 1700000000;
    ia->atime = 1700000000;
    ia->ctime = 1700000000;
    if (vl_gfid_is_root(gfid)) {
        ia->mode = S_IFDIR | 0755;
        ia->nlink = 2;
        ia->size = 4096;
    } else {
        ia->mode = S_IFREG | 0644;
        ia->nlink = 1;
        ia->size = strlen(MEM_DATA);
        ia->blocks = 1;
    }
}


static bool
mem_known(const vl_gfid_t *gfid)
{
    return vl_gfid_is_root(gfid) || vl_gfid_equal(gfid, &mount_mem_file_gfid);
}


static void
mem_lookup(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_lookup_args *a = VL_ARGS(req, lookup);

    (void)xl;
    if (a->loc.parent == NULL && a->loc.inode != NULL
        && mem_known(&a->loc.inode->gfid)) {
        mem_iatt(&a->loc.inode->gfid, &req->reply.iatt);
        vl_unwind(req, 0);
        return;
    }
    if (a->loc.parent != NULL && vl_gfid_is_root(&a->loc.parent->gfid)
        && a->loc.name != NULL && strcmp(a->loc.name, "hello") == 0) {
        mem_iatt(&mount_mem_file_gfid, &req->reply.iatt);
        vl_unwind(req, 0);
        return;
    }
    pthread_mutex_lock(&mem_lock);
    if (a->loc.parent != NULL && a->loc.name != NULL
        && mem_new_find(NULL, a->loc.name) != NULL) {
        mem_new_iatt(mem_new_find(NULL, a->loc.name), &req->reply.iatt);
        pthread_mutex_unlock(&mem_lock);
        vl_unwind(req, 0);
        return;
    }
    pthread_mutex_unlock(&mem_lock);
    vl_unwind(req, -ENOENT);
}


static void
mem_stat(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_stat_args *a = VL_ARGS(req, stat);
    vl_inode_t *inode = a->fd != NULL ? a->fd->inode : a->loc.inode;

    struct mem_new *f;

    (void)xl;
    pthread_mutex_lock(&mem_lock);
    f = inode != NULL ? mem_new_find(&inode->gfid, NULL) : NULL;
    if (f != NULL)
        mem_new_iatt(f, &req->reply.iatt);
    pthread_mutex_unlock(&mem_lock);
    if (f != NULL) {
        vl_unwind(req, 0);
        return;
    }
    if (inode == NULL || !mem_known(&inode->gfid)) {
        vl_unwind(req, -ENOENT);
        return;
    }
    mem_iatt(&inode->gfid, &req->reply.iatt);
    vl_unwind(req, 0);
}


static void
mem_create(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_create_args *a = VL_ARGS(req, create);
    struct mem_new *f = NULL;
    int rc = -ENOSPC;

    (void)xl;
    pthread_mutex_lock(&mem_lock);
    if (mem_new_find(NULL, a->loc.name) != NULL) {
        rc = -EEXIST;
        goto out;
    }
    for (int i = 0; i < MEM_MAX_NEW && f == NULL; i++)
        if (!mem_new_files[i].is_used)
            f = &mem_new_files[i];
    if (f == NULL || vl_gfid_is_null(&a->gfid))
        goto out;
    f->is_used = true;
    snprintf(f->name, sizeof(f->name), "%s", a->loc.name);
    f->gfid = a->gfid;
    f->mode = S_IFREG | (a->mode & 07777 & ~a->umask);
    f->size = 0;
    mem_new_iatt(f, &req->reply.iatt);
    rc = 0;
out:
    pthread_mutex_unlock(&mem_lock);
    vl_unwind(req, rc);
}


static void
mem_write(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_write_args *a = VL_ARGS(req, write);
    struct mem_new *f;
    size_t len = 0;
    int rc = 0;

    (void)xl;
    for (int i = 0; i < a->n_iov; i++)
        len += a->iov[i].iov_len;
    pthread_mutex_lock(&mem_lock);
    f = mem_new_find(&a->fd->inode->gfid, NULL);
    if (f == NULL) {
        rc = -EROFS;
    } else if ((size_t)a->offset + len > MEM_NEW_SIZE) {
        rc = -EFBIG;
    } else {
        size_t at = (size_t)a->offset;

        for (int i = 0; i < a->n_iov; i++) {
            memcpy(f->data + at, a->iov[i].iov_base, a->iov[i].iov_len);
            at += a->iov[i].iov_len;
        }
        if (at > f->size)
            f->size = at;
        req->reply.count = (int64_t)len;
        mem_new_iatt(f, &req->reply.iatt);
    }
    pthread_mutex_unlock(&mem_lock);
    vl_unwind(req, rc);
}


static void
mem_setattr(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_setattr_args *a = VL_ARGS(req, setattr);
    vl_inode_t *inode = a->fd != NULL ? a->fd->inode : a->loc.inode;
    struct mem_new *f;
    int rc = 0;

    (void)xl;
    pthread_mutex_lock(&mem_lock);
    f = mem_new_find(&inode->gfid, NULL);
    if (f == NULL)
        rc = -EROFS;
    else if ((a->valid & VL_SET_SIZE) && a->attr.size > MEM_NEW_SIZE)
        rc = -EFBIG;
    if (rc == 0 && (a->valid & VL_SET_SIZE))
        f->size = a->attr.size;
    if (rc == 0 && (a->valid & VL_SET_MODE))
        f->mode = S_IFREG | (a->attr.mode & 07777);
    if (rc == 0)
        mem_new_iatt(f, &req->reply.iatt);
    pthread_mutex_unlock(&mem_lock);
    vl_unwind(req, rc);
}


static void
mem_ok(vl_xlator_t *xl, vl_req_t *req)
{
    (void)xl;
    vl_unwind(req, 0);
}


atomic_int mount_mem_flush_status;
atomic_int mount_mem_fsync_status;


static void
mem_flush(vl_xlator_t *xl, vl_req_t *req)
{
    (void)xl;
    vl_unwind(req, atomic_load(&mount_mem_flush_status));
}


static void
mem_fsync(vl_xlator_t *xl, vl_req_t *req)
{
    (void)xl;
    vl_unwind(req, atomic_load(&mount_mem_fsync_status));
}


static void
mem_readdir(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_readdir_args *a = VL_ARGS(req, readdir);
    struct vl_dirent_list *list = &req->reply.entries;
    struct vl_iatt root;
    struct vl_iatt file;
    int rc = 0;

    (void)xl;
    mem_iatt(&vl_gfid_root, &root);
    mem_iatt(&mount_mem_file_gfid, &file);
    /* Cookies 1, 2, 3: continue after the entry the offset names. */
    if (a->offset < 1)
        rc = vl_dirent_list_add(list, root.ino, 1, DT_DIR, ".",
                                a->plus ? &root : NULL);
    if (rc == 0 && a->offset < 2)
        rc = vl_dirent_list_add(list, root.ino, 2, DT_DIR, "..",
                                a->plus ? &root : NULL);
    if (rc == 0 && a->offset < 3)
        rc = vl_dirent_list_add(list, file.ino, 3, DT_REG, "hello",
                                a->plus ? &file : NULL);
    list->eof = true;
    vl_unwind(req, rc);
}


static void
mem_read(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_read_args *a = VL_ARGS(req, read);
    size_t len = strlen(MEM_DATA);
    size_t n = 0;

    const char *src = MEM_DATA;
    struct mem_new *f;

    (void)xl;
    pthread_mutex_lock(&mem_lock);
    f = mem_new_find(&a->fd->inode->gfid, NULL);
    if (f != NULL) {
        src = f->data;
        len = f->size;
    }
    if ((size_t)a->offset < len)
        n = len - (size_t)a->offset;
    if (n > a->size)
        n = a->size;
    req->reply.buf = vl_buf_new(n > 0 ? n : 1);
    if (req->reply.buf == NULL) {
        pthread_mutex_unlock(&mem_lock);
        vl_unwind(req, -ENOMEM);
        return;
    }
    memcpy(req->reply.buf->data, src + (n > 0 ? a->offset : 0), n);
    pthread_mutex_unlock(&mem_lock);
    req->reply.data = req->reply.buf->data;
    req->reply.count = (int64_t)n;
    vl_unwind(req, 0);
}


static void
mem_statfs(vl_xlator_t *xl, vl_req_t *req)
{
    (void)xl;
    req->reply.statvfs.f_bsize = 4096;
    req->reply.statvfs.f_frsize = 4096;
    req->reply.statvfs.f_blocks = 1000;
    req->reply.statvfs.f_bfree = 600;
    req->reply.statvfs.f_bavail = 500;
    req->reply.statvfs.f_files = 100;
    req->reply.statvfs.f_ffree = 98;
    req->reply.statvfs.f_namemax = 255;
    vl_unwind(req, 0);
}


static int
mem_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    (void)data;
    if (ev == VL_EV_PARENT_UP)
        vl_notify_parents(xl, VL_EV_CHILD_UP);
    return 0;
}


/* A leaf that never comes up and says why. */
static int
down_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    (void)data;
    if (ev == VL_EV_PARENT_UP)
        vl_graph_set_last_error(xl->graph, "memfs-down: brick unreachable");
    return 0;
}


static const vl_option_t mem_options[] = {VL_OPT_END};
static const char *const mem_mem_types[] = {"misc", NULL};

const vl_xlator_class_t mount_memfs_class = {
    .abi = VL_XLATOR_ABI,
    .type = "test/memfs",
    .prefix = "memfs",
    .flags = VL_XL_LEAF,
    .options = mem_options,
    .mem_types = mem_mem_types,
    .doc = "In-memory test leaf: a root directory with one file.",
    .notify = mem_notify,
    .fops = {
        [VL_FOP_LOOKUP] = mem_lookup,
        [VL_FOP_STAT] = mem_stat,
        [VL_FOP_ACCESS] = mem_ok,
        [VL_FOP_OPEN] = mem_ok,
        [VL_FOP_OPENDIR] = mem_ok,
        [VL_FOP_FLUSH] = mem_flush,
        [VL_FOP_FSYNC] = mem_fsync,
        [VL_FOP_READDIR] = mem_readdir,
        [VL_FOP_READ] = mem_read,
        [VL_FOP_STATFS] = mem_statfs,
        [VL_FOP_CREATE] = mem_create,
        [VL_FOP_WRITE] = mem_write,
        [VL_FOP_SETATTR] = mem_setattr,
    },
};

const vl_xlator_class_t mount_down_class = {
    .abi = VL_XLATOR_ABI,
    .type = "test/memfs-down",
    .prefix = "memfsdown",
    .flags = VL_XL_LEAF,
    .options = mem_options,
    .mem_types = mem_mem_types,
    .doc = "Test leaf that never comes up.",
    .notify = down_notify,
};


/* ---- harness ---- */

int
mount_env_start(struct mount_env *env, const char *leaf_type,
                const char *extra, char *reason, size_t reason_len)
{
    char text[1024];
    vl_err_t err = {{0}};
    vl_volfile_t *vf;
    int rc;

    snprintf(text, sizeof(text),
             "volume memvol\n    type %s\nend-volume\n"
             "volume top\n    type mount/fuse\n"
             "    option mountpoint %s\n"
             "    option fsname memvol-src\n"
             "    option entry-timeout 0\n"
             "    option attribute-timeout 0\n"
             "%s"
             "    subvolumes memvol\nend-volume\n",
             leaf_type, env->dir, extra);
    vf = vl_volfile_parse(text, strlen(text), "test.vol", &err);
    assert_non_null(vf);
    env->loop = vl_loop_new(2);
    assert_non_null(env->loop);
    assert_int_equal(vl_loop_start(env->loop), 0);
    env->graph = vl_graph_build(vf, env->loop, &err);
    vl_volfile_free(vf);
    if (env->graph == NULL)
        fail_msg("graph build: %s", err.msg);
    rc = vl_graph_init(env->graph, &err);
    if (rc != 0) {
        snprintf(reason, reason_len, "%s", err.msg);
        return rc;
    }
    vl_graph_activate(env->graph);
    return vl_graph_wait_ready(env->graph, 20000, reason, reason_len);
}


void
mount_env_stop(struct mount_env *env)
{
    if (env->graph != NULL)
        vl_graph_free(env->graph);
    env->graph = NULL;
    if (env->loop != NULL) {
        vl_loop_stop(env->loop);
        vl_loop_free(env->loop);
    }
    env->loop = NULL;
    umount2(env->dir, MNT_DETACH); /* in case a failed test left it */
    rmdir(env->dir);
}


bool
mount_can_mount(void)
{
    return geteuid() == 0 && access("/dev/fuse", R_OK | W_OK) == 0;
}


/* Source and type of the mount on dir, from /proc/self/mountinfo. */
bool
mount_find_mount(const char *dir, char *source, char *type, size_t len)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[1024];
    bool found = false;

    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL) {
        char mp[512];
        char *dash = strstr(line, " - ");
        char t[128];
        char s[128];

        if (sscanf(line, "%*u %*u %*s %*s %511s", mp) != 1 || dash == NULL)
            continue;
        if (strcmp(mp, dir) != 0
            || sscanf(dash + 3, "%127s %127s", t, s) != 2)
            continue;
        snprintf(type, len, "%s", t);
        snprintf(source, len, "%s", s);
        found = true;
    }
    fclose(f);
    return found;
}


int
mount_test_init(void)
{
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    vl_global_init();
    cmocka_set_message_output(CM_OUTPUT_TAP);
    if (vl_registry_add(&xl_mount_fuse) != 0
        || vl_registry_add(&mount_memfs_class) != 0
        || vl_registry_add(&mount_down_class) != 0) {
        fprintf(stderr, "registering classes failed\n");
        return -1;
    }
    return 0;
}
