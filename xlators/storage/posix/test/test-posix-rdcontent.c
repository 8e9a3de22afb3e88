/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-posix-rdcontent: the content of small files in a readdirplus reply
 * (args.content_max, for quick-read). Checks: a small file's entry
 * carries its exact bytes, with content_len == iatt.size, inside
 * reply.buf; an empty file carries empty content; a file over
 * content_max, a directory, a symlink and a fifo carry none; no content
 * without content_max or without plus (and no reply.buf); a 4 KiB
 * request still carries 4 KiB files; records and contents stay within
 * max(size, 256 KiB) (a reply ends there) while every entry is still
 * listed once; posix_content_read_at refuses a non-file
 * without opening it and answers -ESTALE when the file is not the
 * version its lstat described. Names only (no plus): the names and d_type
 * of a file, a directory and a symlink, d_ino as stat gives it, no
 * attributes, no stat per entry (the readdir_stats counter), and
 * distribute's link file left out (readdir_linkfiles_skipped) while a
 * readdirplus lists it with its attributes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "posix-content.h"
#include "posix-test.h"


/* Creates name under dir with len bytes of a pattern seeded by seed. */
static void
t_file(struct pt *t, vl_inode_t *dir, const char *name, size_t len,
       int seed)
{
    vl_fd_t *fd = NULL;
    char *data = malloc(len + 1);

    assert_non_null(data);
    for (size_t i = 0; i < len; i++)
        data[i] = (char)('a' + (i * 7 + (size_t)seed) % 26);
    assert_int_equal(pt_create(t, dir, name, O_RDWR, 0644, NULL, &fd), 0);
    if (len > 0)
        assert_int_equal(pt_write(t, fd, 0, data, len, 0), 0);
    vl_fd_unref(fd);
    free(data);
}


/* Whether the content of e in r is the pattern of len bytes. */
static bool
t_content_is(const struct vl_reply *r, const struct vl_dirent *e,
             size_t len, int seed)
{
    const char *c;

    if (!e->has_content || e->content_len != len || r->buf == NULL
        || e->content_off + len > r->buf->size)
        return false;
    c = r->buf->data + e->content_off;
    for (size_t i = 0; i < len; i++)
        if (c[i] != (char)('a' + (i * 7 + (size_t)seed) % 26))
            return false;
    return true;
}


static vl_fd_t *
t_opendir(struct pt *t, vl_inode_t *dir)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_fd_t *fd = vl_fd_new(dir, O_RDONLY, 1);

    assert_non_null(fd);
    a.opendir.loc.inode = dir;
    a.opendir.fd = fd;
    assert_int_equal(pt_call(t, VL_FOP_OPENDIR, &a, &r), 0);
    vl_reply_clear(&r);
    return fd;
}


static void
t_readdir(struct pt *t, vl_fd_t *fd, off_t off, size_t size, bool plus,
          uint32_t content_max, struct vl_reply *r)
{
    union vl_fop_args a = {0};

    a.readdir.fd = fd;
    a.readdir.size = size;
    a.readdir.offset = off;
    a.readdir.plus = plus;
    a.readdir.content_max = content_max;
    assert_int_equal(pt_call(t, VL_FOP_READDIR, &a, r), 0);
}


static const struct vl_dirent *
t_find(const struct vl_reply *r, const char *name)
{
    for (size_t i = 0; i < r->entries.n; i++)
        if (strcmp(r->entries.ents[i].name, name) == 0)
            return &r->entries.ents[i];
    fail_msg("%s not listed", name);
    return NULL;
}


static void
test_rdcontent_which_entries(void **state)
{
    struct pt *t = *state;
    vl_inode_t *dir = NULL;
    struct vl_reply r;
    const struct vl_dirent *e;
    char path[PATH_MAX];
    vl_fd_t *fd;

    assert_int_equal(pt_mkdir(t, t->root, "d", 0755, &dir), 0);
    t_file(t, dir, "small", 100, 1);
    t_file(t, dir, "empty", 0, 0);
    t_file(t, dir, "big", 101, 2);
    assert_int_equal(pt_mkdir(t, dir, "sub", 0755, NULL), 0);
    /* A symlink and a fifo made on the brick by hand get a GFID from the
     * lookups that heal them; they must never be opened for content. */
    snprintf(path, sizeof(path), "%s/d/link", t->brick);
    assert_int_equal(symlink("small", path), 0);
    snprintf(path, sizeof(path), "%s/d/fifo", t->brick);
    assert_int_equal(mkfifo(path, 0644), 0);
    assert_int_equal(pt_lookup(t, dir, "link", NULL, NULL), 0);
    assert_int_equal(pt_lookup(t, dir, "fifo", NULL, NULL), 0);

    fd = t_opendir(t, dir);
    t_readdir(t, fd, 0, 64 * 1024, true, 100, &r);
    assert_true(r.entries.eof);
    e = t_find(&r, "small");
    assert_true(e->has_iatt);
    assert_int_equal(e->iatt.size, 100);
    assert_true(t_content_is(&r, e, 100, 1));
    e = t_find(&r, "empty");
    assert_true(e->has_content);
    assert_int_equal(e->content_len, 0);
    assert_false(t_find(&r, "big")->has_content); /* 101 > 100 */
    assert_false(t_find(&r, "sub")->has_content);
    e = t_find(&r, "link");
    assert_true(e->has_iatt && S_ISLNK(e->iatt.mode));
    assert_false(e->has_content);
    e = t_find(&r, "fifo");
    assert_true(e->has_iatt && S_ISFIFO(e->iatt.mode));
    assert_false(e->has_content);
    vl_reply_clear(&r);

    /* A FUSE-sized request (4 KiB) still carries a 4 KiB file. */
    t_file(t, dir, "four", 4096, 3);
    t_readdir(t, fd, 0, 4096, true, 8192, &r);
    assert_true(t_content_is(&r, t_find(&r, "four"), 4096, 3));
    vl_reply_clear(&r);

    /* content_max 0 (the old behaviour), or no plus: no content. */
    t_readdir(t, fd, 0, 64 * 1024, true, 0, &r);
    for (size_t i = 0; i < r.entries.n; i++)
        assert_false(r.entries.ents[i].has_content);
    assert_null(r.buf);
    vl_reply_clear(&r);
    t_readdir(t, fd, 0, 64 * 1024, false, 64, &r);
    for (size_t i = 0; i < r.entries.n; i++)
        assert_false(r.entries.ents[i].has_content);
    assert_null(r.buf);
    vl_reply_clear(&r);
    vl_fd_unref(fd);
    vl_inode_unref(dir);
}


static void
test_rdcontent_budget(void **state)
{
    struct pt *t = *state;
    enum { N = 100, LEN = 4000, BUDGET = 64 * 1024, BOUND = 256 * 1024 };
    vl_inode_t *dir = NULL;
    bool seen[N] = {false};
    size_t n_content = 0, n_seen = 0;
    int calls_done;
    struct vl_reply r;
    bool is_eof = false;
    off_t off = 0;
    char name[32];
    vl_fd_t *fd;

    assert_int_equal(pt_mkdir(t, t->root, "d", 0755, &dir), 0);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "f%02d", i);
        t_file(t, dir, name, LEN, i);
    }
    fd = t_opendir(t, dir);
    for (calls_done = 0; !is_eof; calls_done++) {
        size_t content = 0;

        assert_true(calls_done < 1000);
        t_readdir(t, fd, off, BUDGET, true, 64 * 1024, &r);
        is_eof = r.entries.eof;
        assert_true(r.entries.n > 0 || is_eof);
        for (size_t i = 0; i < r.entries.n; i++) {
            const struct vl_dirent *e = &r.entries.ents[i];
            unsigned idx;

            off = e->off;
            if (e->name[0] == '.')
                continue;
            assert_int_equal(sscanf(e->name, "f%u", &idx), 1);
            assert_true(idx < N);
            assert_false(seen[idx]);
            seen[idx] = true;
            n_seen++;
            if (e->has_content) {
                assert_true(t_content_is(&r, e, LEN, (int)idx));
                content += e->content_len;
                n_content++;
            }
        }
        /* Records and content within the bound. */
        assert_true(content + 160 * r.entries.n <= BOUND);
        vl_reply_clear(&r);
    }
    assert_int_equal(n_seen, N);
    /* The records alone fit in 64 KiB; the bound split the listing. */
    assert_true(n_content >= N / 2);
    assert_true(calls_done >= 2);
    vl_fd_unref(fd);
    vl_inode_unref(dir);
}


static void
test_rdcontent_read_at_rules(void **state)
{
    struct pt *t = *state;
    struct stat st, got;
    char buf[64];
    int dfd, fd;

    dfd = open(t->brick, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    assert_int_equal(mkfifo(strcat(strcpy(buf, t->brick), "/p"), 0644), 0);
    assert_int_equal(fstatat(dfd, "p", &st, AT_SYMLINK_NOFOLLOW), 0);
    /* A fifo: refused before any open (an open could block or have
     * effects). */
    assert_int_equal(posix_content_read_at(dfd, "p", &st, buf, &got),
                     -EINVAL);

    fd = openat(dfd, "f", O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "hello", 5), 5);
    assert_int_equal(fstatat(dfd, "f", &st, AT_SYMLINK_NOFOLLOW), 0);
    assert_int_equal(posix_content_read_at(dfd, "f", &st, buf, &got), 5);
    assert_memory_equal(buf, "hello", 5);
    assert_int_equal(got.st_size, 5);
    assert_int_equal(got.st_ino, st.st_ino);
    /* Grown after its lstat: not the version st describes. */
    assert_int_equal(write(fd, "!", 1), 1);
    assert_int_equal(posix_content_read_at(dfd, "f", &st, buf, &got),
                     -ESTALE);
    close(fd);
    /* Same size, other times (rewritten): stale as well. */
    assert_int_equal(fstatat(dfd, "f", &st, AT_SYMLINK_NOFOLLOW), 0);
    st.st_mtim.tv_nsec ^= 1;
    assert_int_equal(posix_content_read_at(dfd, "f", &st, buf, &got),
                     -ESTALE);
    /* Replaced by another file under the same name and size. */
    assert_int_equal(fstatat(dfd, "f", &st, AT_SYMLINK_NOFOLLOW), 0);
    /* (The old inode stays linked, so the new file cannot reuse its
     * number.) */
    assert_int_equal(linkat(dfd, "f", dfd, "f.old", 0), 0);
    assert_int_equal(unlinkat(dfd, "f", 0), 0);
    fd = openat(dfd, "f", O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "HELLO!", 6), 6);
    close(fd);
    assert_int_equal(posix_content_read_at(dfd, "f", &st, buf, &got),
                     -ESTALE);
    close(dfd);
}


/* The value of key in posix's statedump. */
static unsigned long
t_dump_value(struct pt *t, const char *key)
{
    char *text = NULL, pat[64];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    unsigned long v = ~0UL;
    const char *p;

    assert_non_null(f);
    t->xl->cls->dump(t->xl, f);
    fclose(f);
    snprintf(pat, sizeof(pat), "\n%s=", key);
    p = strstr(text, pat);
    if (p != NULL)
        v = strtoul(p + strlen(pat), NULL, 10);
    free(text);
    assert_true(v != ~0UL);
    return v;
}


static void
test_readdir_names_only(void **state)
{
    struct pt *t = *state;
    enum { N = 50 };
    vl_inode_t *dir = NULL;
    struct vl_reply r;
    const struct vl_dirent *e;
    struct vl_iatt ia;
    vl_inode_t *in = NULL;
    char path[PATH_MAX], name[32];
    unsigned long stats, skipped;
    vl_fd_t *fd;
    int seen = 0;

    assert_int_equal(pt_mkdir(t, t->root, "d", 0755, &dir), 0);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "f%02d", i);
        t_file(t, dir, name, 10, i);
    }
    assert_int_equal(pt_mkdir(t, dir, "sub", 0755, NULL), 0);
    snprintf(path, sizeof(path), "%s/d/link", t->brick);
    assert_int_equal(symlink("f00", path), 0);
    assert_int_equal(pt_lookup(t, dir, "link", NULL, NULL), 0);
    /* A link file as cluster/distribute makes one: mode ---------T and
     * the linkto key naming the subvolume with the data. */
    assert_int_equal(pt_create(t, dir, "lf", O_RDWR, 01000, NULL, &fd), 0);
    vl_fd_unref(fd);
    snprintf(path, sizeof(path), "%s/d/lf", t->brick);
    assert_int_equal(lsetxattr(path, "trusted.mortar.dht.linkto", "b-1", 3,
                               0), 0);

    fd = t_opendir(t, dir);
    stats = t_dump_value(t, "readdir_stats");
    skipped = t_dump_value(t, "readdir_linkfiles_skipped");
    t_readdir(t, fd, 0, 64 * 1024, false, 0, &r);
    assert_true(r.entries.eof);
    /* Not one stat for N + 4 entries; the link file left out. */
    assert_int_equal(t_dump_value(t, "readdir_stats"), stats);
    assert_int_equal(t_dump_value(t, "readdir_linkfiles_skipped"),
                     skipped + 1);
    for (size_t i = 0; i < r.entries.n; i++) {
        e = &r.entries.ents[i];
        assert_false(e->has_iatt);
        assert_false(e->has_content);
        assert_string_not_equal(e->name, "lf");
        if (e->name[0] == 'f') {
            assert_int_equal(e->type, DT_REG);
            seen++;
        }
    }
    assert_int_equal(seen, N);
    assert_int_equal(r.entries.n, N + 4); /* . .. sub link */
    assert_int_equal(t_find(&r, "sub")->type, DT_DIR);
    assert_int_equal(t_find(&r, ".")->type, DT_DIR);
    e = t_find(&r, "link");
    assert_int_equal(e->type, DT_LNK);
    /* d_ino is what stat says, though no stat was made. */
    assert_int_equal(pt_lookup(t, dir, "f07", &ia, &in), 0);
    assert_int_equal(t_find(&r, "f07")->ino, ia.ino);
    vl_inode_unref(in);
    vl_reply_clear(&r);

    /* readdirplus: every name with its attributes, the link file too. */
    stats = t_dump_value(t, "readdir_stats");
    t_readdir(t, fd, 0, 64 * 1024, true, 0, &r);
    assert_int_equal(r.entries.n, N + 5);
    e = t_find(&r, "lf");
    assert_true(e->has_iatt);
    assert_int_equal(e->iatt.mode & 07777, 01000);
    assert_true(t_dump_value(t, "readdir_stats") >= stats + N + 3);
    vl_reply_clear(&r);
    vl_fd_unref(fd);
    vl_inode_unref(dir);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rdcontent_which_entries,
                                        pt_setup, pt_teardown),
        cmocka_unit_test_setup_teardown(test_rdcontent_budget, pt_setup,
                                        pt_teardown),
        cmocka_unit_test_setup_teardown(test_rdcontent_read_at_rules,
                                        pt_setup, pt_teardown),
        cmocka_unit_test_setup_teardown(test_readdir_names_only, pt_setup,
                                        pt_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("posix-rdcontent", tests, NULL,
                                       NULL);
}
