/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-fuse: the FUSE bridge's request parser and handlers
 * (xlators/mount/fuse: vfuse_process, the resolution of nodeids and file
 * handles, every opcode's handler), fed messages with no mount.
 *
 * The harness plays the kernel: nodeids and file handles are pointers
 * the bridge handed out (the kernel never makes one up), so every such
 * field the harness puts in a message names a node or handle alive in
 * the session's table, chosen by a selector byte of the input; FORGET
 * never takes more lookups than a node has, BATCH_FORGET names distinct
 * nodes, READ asks at most max_write bytes. Everything else in the
 * message (opcode, lengths, names, flags, offsets, sizes) is the
 * input's. The graph is mount/fuse (conf parsed, init not run: no
 * mount) over test/memfs (xlators/mount/fuse/test), whose answers are
 * synchronous; replies go to /dev/null.
 *
 * Input: messages, each [u16 payload length][opcode][nodeid selector]
 * [selector 2][selector 3][payload]. Every input starts a fresh session
 * (table, hints, buffers), freed at its end: LeakSanitizer sees what a
 * message leaked.
 */
#include "config.h"

#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "fuse.h"
#include "fuzz.h"
#include "mount/fuse/test/mount-memfs.h"
#include "xlators/builtin.h"

#define MSG_MAX (64 * 1024)

static const char fuzz_volfile[] =
    "volume leaf\n"
    "    type test/memfs\n"
    "end-volume\n"
    "volume top\n"
    "    type mount/fuse\n"
    "    option mountpoint /nonexistent/fuzz-fuse\n"
    "    subvolumes leaf\n"
    "end-volume\n";

static vl_graph_t *graph;
static int null_fd = -1;


/* The sel-th live node of the table, or the root (sel 0, or none). */
static uint64_t
pick_node(struct vfuse_session *sess, uint8_t sel)
{
    struct vfuse_link *head = &sess->table.nodes, *l;
    size_t n = sess->table.n_nodes;

    if (sel == 0 || n == 0)
        return FUSE_ROOT_ID;
    l = head->next;
    for (size_t i = (sel - 1) % n; i > 0; i--)
        l = l->next;
    return (uint64_t)(uintptr_t)VFUSE_CONTAINER(l, struct vfuse_node, link);
}


/* The sel-th live handle, or 0 when there is none. */
static uint64_t
pick_handle(struct vfuse_session *sess, uint8_t sel)
{
    struct vfuse_link *head = &sess->table.handles, *l;
    size_t n = sess->table.n_handles;

    if (n == 0)
        return 0;
    l = head->next;
    for (size_t i = sel % n; i > 0; i--)
        l = l->next;
    return (uint64_t)(uintptr_t)VFUSE_CONTAINER(l, struct vfuse_handle,
                                                link);
}


static void
put_u64(char *p, size_t len, size_t off, uint64_t v)
{
    if (off + sizeof(v) <= len)
        memcpy(p + off, &v, sizeof(v));
}


/* Where the fh of op's payload is, or -1: every opcode that carries one
 * always (resolution and RELEASE use it as a pointer). */
static long
fh_offset(uint32_t op)
{
    switch (op) {
    case FUSE_READ: case FUSE_READDIR: case FUSE_READDIRPLUS:
        return offsetof(struct fuse_read_in, fh);
    case FUSE_WRITE:
        return offsetof(struct fuse_write_in, fh);
    case FUSE_RELEASE: case FUSE_RELEASEDIR:
        return offsetof(struct fuse_release_in, fh);
    case FUSE_FLUSH:
        return offsetof(struct fuse_flush_in, fh);
    case FUSE_FSYNC: case FUSE_FSYNCDIR:
        return offsetof(struct fuse_fsync_in, fh);
    case FUSE_GETLK: case FUSE_SETLK: case FUSE_SETLKW:
        return offsetof(struct fuse_lk_in, fh);
    case FUSE_FALLOCATE:
        return offsetof(struct fuse_fallocate_in, fh);
    case FUSE_LSEEK:
        return offsetof(struct fuse_lseek_in, fh);
    case FUSE_COPY_FILE_RANGE:
        return offsetof(struct fuse_copy_file_range_in, fh_in);
    default:
        return -1;
    }
}


/* Makes the message's nodeids and fhs ones the kernel could send; false
 * when it could send none such (no handle is open). */
static bool
kernel_ids(struct vfuse_session *sess, struct fuse_in_header *hdr, char *p,
           size_t len, uint8_t s2, uint8_t s3)
{
    long off = fh_offset(hdr->opcode);
    uint64_t fh = pick_handle(sess, s2);

    if (off >= 0) {
        if (fh == 0)
            return false;
        put_u64(p, len, (size_t)off, fh);
        if (hdr->opcode == FUSE_COPY_FILE_RANGE) {
            put_u64(p, len, offsetof(struct fuse_copy_file_range_in, fh_out),
                    pick_handle(sess, s3));
            put_u64(p, len,
                    offsetof(struct fuse_copy_file_range_in, nodeid_out),
                    pick_node(sess, s3));
        }
    }
    switch (hdr->opcode) {
    case FUSE_READ:
        /* The kernel reads at most the max_write INIT agreed on. */
        if (len >= sizeof(struct fuse_read_in)) {
            struct fuse_read_in *in = (void *)p;

            in->size %= sess->max_write + 1;
        }
        break;
    case FUSE_GETATTR:
        if (len >= sizeof(struct fuse_getattr_in)) {
            struct fuse_getattr_in *in = (void *)p;

            if (fh == 0)
                in->getattr_flags &= ~FUSE_GETATTR_FH;
            in->fh = fh;
        }
        break;
    case FUSE_SETATTR:
        if (len >= sizeof(struct fuse_setattr_in)) {
            struct fuse_setattr_in *in = (void *)p;

            if (fh == 0)
                in->valid &= ~FATTR_FH;
            in->fh = fh;
        }
        break;
    case FUSE_LINK:
        put_u64(p, len, offsetof(struct fuse_link_in, oldnodeid),
                pick_node(sess, s3));
        break;
    case FUSE_RENAME:
        put_u64(p, len, offsetof(struct fuse_rename_in, newdir),
                pick_node(sess, s3));
        break;
    case FUSE_RENAME2:
        put_u64(p, len, offsetof(struct fuse_rename2_in, newdir),
                pick_node(sess, s3));
        break;
    case FUSE_FORGET:
        /* Never more lookups than the node has (the root has none). */
        if (len >= sizeof(struct fuse_forget_in)) {
            struct fuse_forget_in *in = (void *)p;
            const struct vfuse_node *node =
                (const void *)(uintptr_t)hdr->nodeid;

            if (hdr->nodeid == FUSE_ROOT_ID)
                in->nlookup = 0;
            else if (in->nlookup > node->nlookup)
                in->nlookup = node->nlookup;
        }
        break;
    case FUSE_BATCH_FORGET: {
        /* Distinct nodes, each its whole count at most: at most one
         * entry per live node, the rest zero. */
        struct vfuse_link *l = sess->table.nodes.next;
        size_t at = sizeof(struct fuse_batch_forget_in);

        for (; at + sizeof(struct fuse_forget_one) <= len;
             at += sizeof(struct fuse_forget_one)) {
            struct fuse_forget_one *one = (void *)(p + at);

            if (l != &sess->table.nodes) {
                const struct vfuse_node *node =
                    VFUSE_CONTAINER(l, struct vfuse_node, link);

                one->nodeid = (uint64_t)(uintptr_t)node;
                if (one->nlookup > node->nlookup)
                    one->nlookup = node->nlookup;
                l = l->next;
            } else {
                one->nodeid = 0;
                one->nlookup = 0;
            }
        }
        break;
    }
    default:
        break;
    }
    return true;
}


int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    vl_err_t err = {{0}};
    vl_volfile_t *vf;
    vl_loop_t *loop;

    (void)argc;
    (void)argv;
    vl_global_init();
    vl_log_set_level(VL_LOG_NONE);
    FUZZ_CHECK(vl_registry_add(&xl_mount_fuse) == 0);
    FUZZ_CHECK(vl_registry_add(&mount_memfs_class) == 0);
    vf = vl_volfile_parse(fuzz_volfile, sizeof(fuzz_volfile) - 1, "fuzz",
                          &err);
    FUZZ_CHECK(vf != NULL);
    loop = vl_loop_new(1);
    FUZZ_CHECK(loop != NULL && vl_loop_start(loop) == 0);
    graph = vl_graph_build(vf, loop, &err);
    if (graph == NULL)
        fprintf(stderr, "fuzz-fuse: %s\n", err.msg);
    FUZZ_CHECK(graph != NULL);
    vl_volfile_free(vf);
    null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    FUZZ_CHECK(null_fd >= 0);
    return 0;
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    struct vfuse_session sess;
    struct vfuse_priv priv;
    struct vfuse_reader r;
    vl_xlator_t *top = graph->top;
    uint64_t unique = 1;

    memset(&sess, 0, sizeof(sess));
    memset(&priv, 0, sizeof(priv));
    pthread_mutex_init(&sess.lock, NULL);
    pthread_cond_init(&sess.cond, NULL);
    FUZZ_CHECK(vfuse_table_init(&sess.table) == 0);
    sess.fuse_fd = null_fd;
    sess.buf_size = MSG_MAX + VFUSE_HDR_ROOM;
    sess.active = &priv;
    sess.n_attached = 1;
    sess.is_init_done = true;
    sess.proto_minor = VFUSE_MINOR;
    sess.max_write = 128 * 1024;
    priv.xl = top;
    priv.sess = &sess;
    priv.gen = graph->id;
    priv.root = vl_inode_table_root(graph->itable);
    priv.is_child_up = true;
    priv.is_ready_sent = true;
    pthread_mutex_init(&priv.lock, NULL);
    pthread_cond_init(&priv.cond, NULL);
    top->priv = &priv;
    memset(&r, 0, sizeof(r));
    r.sess = &sess;
    r.buf = vl_buf_new(sess.buf_size);
    FUZZ_CHECK(r.buf != NULL);

    while (in.len >= 6) {
        struct fuse_in_header hdr;
        size_t len = fuzz_take_u8(&in);
        uint8_t op, s1, s2, s3;

        len |= (size_t)fuzz_take_u8(&in) << 8;
        op = fuzz_take_u8(&in);
        s1 = fuzz_take_u8(&in);
        s2 = fuzz_take_u8(&in);
        s3 = fuzz_take_u8(&in);
        if (len > in.len)
            len = in.len;
        memset(&hdr, 0, sizeof(hdr));
        hdr.len = (uint32_t)(sizeof(hdr) + len);
        hdr.opcode = op;
        hdr.unique = unique++;
        hdr.nodeid = pick_node(&sess, s1);
        hdr.uid = s2 & 1 ? 1000 : 0;
        hdr.gid = hdr.uid;
        hdr.pid = 4242;
        memcpy(r.buf->data + sizeof(hdr), in.p, len);
        in.p += len;
        in.len -= len;
        if (!kernel_ids(&sess, &hdr, r.buf->data + sizeof(hdr), len, s2,
                        s3))
            continue;
        memcpy(r.buf->data, &hdr, sizeof(hdr));
        vfuse_process(&r, hdr.len);
        /* memfs answers at once: every call has ended. */
        FUZZ_CHECK(priv.n_inflight == 0);
    }

    vl_buf_unref(r.buf);
    vfuse_pool_clear(&sess);
    vfuse_table_clear(&sess.table);
    vl_inode_unref(priv.root);
    top->priv = NULL;
    pthread_cond_destroy(&priv.cond);
    pthread_mutex_destroy(&priv.lock);
    pthread_cond_destroy(&sess.cond);
    pthread_mutex_destroy(&sess.lock);
    return 0;
}
