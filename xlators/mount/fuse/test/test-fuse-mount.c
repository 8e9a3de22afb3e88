/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-fuse-mount: a real mount of mount/fuse (root and /dev/fuse needed;
 * skipped otherwise) over "test/memfs" (mount-memfs.c). The test stats,
 * lists and reads through the kernel, checks the mount's source and
 * read-ahead, unmounts, and checks that the bridge raised SIGTERM when the
 * kernel said the mount was gone. A leaf that never comes up checks that
 * the mount fails after connect-timeout with the graph's last error; a
 * missing mount point fails init with its reason. Names over 255 bytes
 * get ENAMETOOLONG from every entry syscall. FLUSH and FSYNC never
 * answer the kernel ENOSYS. (The reader threads are tested in
 * test-fuse-readers.c.)
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

#include "vol/vol.h"

#include "mount-memfs.h"


static void
test_mount_stat_ls_cat(void **state)
{
    struct mount_env env = {.dir = "/tmp/vfuse-test-XXXXXX"};
    char path[128];
    char reason[512] = "";
    char source[128];
    char type[128];
    char buf[256];
    struct stat st;
    struct statvfs sv;
    struct dirent *de;
    DIR *d;
    sigset_t term;
    struct timespec wait = {.tv_sec = 10};
    bool seen_hello = false;
    char *big;
    char *back;
    int n_entries = 0;
    ssize_t n;
    int fd;
    int rc;

    (void)state;
    if (!mount_can_mount())
        skip();
    /* The bridge raises SIGTERM on unmount: catch it with sigtimedwait. */
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, NULL);

    assert_non_null(mkdtemp(env.dir));
    rc = mount_env_start(&env, "test/memfs", "", reason, sizeof(reason));
    if (rc != 0) {
        mount_env_stop(&env);
        fail_msg("mount failed: %d %s", rc, reason);
    }

    assert_true(mount_find_mount(env.dir, source, type, sizeof(source)));
    assert_string_equal(type, "fuse.mortar");
    assert_string_equal(source, "memvol-src");

    /* stat through the kernel: LOOKUP + attributes. */
    assert_int_equal(stat(env.dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    snprintf(path, sizeof(path), "%s/hello", env.dir);
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0644);
    assert_int_equal(st.st_size, strlen(MEM_DATA));
    assert_int_equal(st.st_ino, vl_gfid_to_ino(&mount_mem_file_gfid));
    assert_int_equal(st.st_mtime, 1700000000);
    snprintf(path, sizeof(path), "%s/missing", env.dir);
    assert_int_equal(stat(path, &st), -1);
    assert_int_equal(errno, ENOENT);

    /* The bdi read-ahead was raised to the default 4096 KiB. */
    assert_int_equal(stat(env.dir, &st), 0);
    snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/read_ahead_kb",
             major(st.st_dev), minor(st.st_dev));
    fd = open(path, O_RDONLY);
    if (fd >= 0) {
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        assert_true(n > 0);
        buf[n] = '\0';
        assert_int_equal(atoi(buf), 4096);
    }

    /* ls: READDIR(PLUS) packing and cookies. */
    d = opendir(env.dir);
    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        n_entries++;
        if (strcmp(de->d_name, "hello") == 0) {
            seen_hello = true;
            assert_int_equal(de->d_ino, vl_gfid_to_ino(&mount_mem_file_gfid));
        }
    }
    closedir(d);
    assert_true(seen_hello);
    assert_int_equal(n_entries, 3);

    /* cat: OPEN + READ + FLUSH + RELEASE. */
    snprintf(path, sizeof(path), "%s/hello", env.dir);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    n = read(fd, buf, sizeof(buf));
    assert_int_equal(n, strlen(MEM_DATA));
    assert_memory_equal(buf, MEM_DATA, strlen(MEM_DATA));
    n = pread(fd, buf, sizeof(buf), 7);
    assert_int_equal(n, strlen(MEM_DATA) - 7);
    assert_memory_equal(buf, MEM_DATA + 7, (size_t)n);
    assert_int_equal(close(fd), 0);

    /* The fixed file is read-only in memfs: its error comes back. */
    fd = open(path, O_WRONLY);
    if (fd >= 0) {
        assert_int_equal(write(fd, "x", 1), -1);
        assert_int_equal(errno, EROFS);
        close(fd);
    }

    /* CREATE + a 1 MiB WRITE (big-buffer path) + read back, truncate. */
    big = malloc(1024 * 1024);
    back = malloc(1024 * 1024);
    assert_non_null(big);
    assert_non_null(back);
    for (size_t i = 0; i < 1024 * 1024; i++)
        big[i] = (char)(i * 7 + i / 4096);
    snprintf(path, sizeof(path), "%s/new", env.dir);
    fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, big, 1024 * 1024, 0), 1024 * 1024);
    assert_int_equal(pwrite(fd, "tail", 4, 1024 * 1024), 4);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_size, 1024 * 1024 + 4);
    assert_int_equal(st.st_mode, S_IFREG | 0600);
    close(fd);
    fd = open(path, O_RDONLY | O_DIRECT);
    if (fd < 0)
        fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, back, 1024 * 1024, 0), 1024 * 1024);
    assert_memory_equal(back, big, 1024 * 1024);
    close(fd);
    assert_int_equal(truncate(path, 10), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, 10);
    fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
    assert_int_equal(fd, -1);
    assert_int_equal(errno, EEXIST);
    free(big);
    free(back);

    assert_int_equal(statvfs(env.dir, &sv), 0);
    assert_int_equal(sv.f_blocks, 1000);
    assert_int_equal(sv.f_bavail, 500);
    assert_int_equal(sv.f_namemax, 255);

    /* Unmount behind the bridge's back: it must ask for shutdown. */
    assert_int_equal(umount2(env.dir, MNT_DETACH), 0);
    assert_int_equal(sigtimedwait(&term, NULL, &wait), SIGTERM);

    mount_env_stop(&env);
    assert_false(mount_find_mount(env.dir, source, type, sizeof(source)));
}


/* Names over NAME_MAX (255 bytes) get ENAMETOOLONG from the bridge for
 * every syscall that names an entry, as from a local file system, before
 * anything is wound (the kernel passes names up to 1024 bytes to FUSE);
 * the names that were refused leave memfs's one file as it was. */
static void
test_mount_name_too_long(void **state)
{
    struct mount_env env = {.dir = "/tmp/vfuse-test-XXXXXX"};
    char reason[512] = "";
    char source[128];
    char type[128];
    char hello[128];
    char name[1001];
    char path[1200];
    char buf[64];
    struct stat st;
    sigset_t term;
    struct timespec wait = {.tv_sec = 10};
    const size_t lens[] = {256, 1000};
    int fd;
    int rc;

    (void)state;
    if (!mount_can_mount())
        skip();
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, NULL);
    assert_non_null(mkdtemp(env.dir));
    rc = mount_env_start(&env, "test/memfs", "", reason, sizeof(reason));
    if (rc != 0) {
        mount_env_stop(&env);
        fail_msg("mount failed: %d %s", rc, reason);
    }
    snprintf(hello, sizeof(hello), "%s/hello", env.dir);
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        memset(name, 'n', lens[i]);
        name[lens[i]] = '\0';
        snprintf(path, sizeof(path), "%s/%s", env.dir, name);
        assert_int_equal(stat(path, &st), -1);
        assert_int_equal(errno, ENAMETOOLONG);
        fd = open(path, O_CREAT | O_WRONLY, 0644);
        assert_int_equal(fd, -1);
        assert_int_equal(errno, ENAMETOOLONG);
        assert_int_equal(mkdir(path, 0755), -1);
        assert_int_equal(errno, ENAMETOOLONG);
        assert_int_equal(mknod(path, S_IFIFO | 0644, 0), -1);
        assert_int_equal(errno, ENAMETOOLONG);
        assert_int_equal(symlink("hello", path), -1);
        assert_int_equal(errno, ENAMETOOLONG);
        assert_int_equal(link(hello, path), -1);
        assert_int_equal(errno, ENAMETOOLONG);
        assert_int_equal(rename(hello, path), -1);
        assert_int_equal(errno, ENAMETOOLONG);
        assert_int_equal(unlink(path), -1);
        assert_int_equal(errno, ENAMETOOLONG);
        assert_int_equal(rmdir(path), -1);
        assert_int_equal(errno, ENAMETOOLONG);
    }
    fd = open(hello, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(read(fd, buf, sizeof(buf)), strlen(MEM_DATA));
    close(fd);

    assert_int_equal(umount2(env.dir, MNT_DETACH), 0);
    assert_int_equal(sigtimedwait(&term, NULL, &wait), SIGTERM);
    mount_env_stop(&env);
    assert_false(mount_find_mount(env.dir, source, type, sizeof(source)));
}


/* What test_mount_sync_never_enosys leaves for its teardown, so that a
 * failed assertion does not leave an fd of the mount open until exit
 * (its FLUSH would then wait for readers that are gone). */
struct t_sync_state {
    struct mount_env env; /* the mount */
    int fd;               /* open on "hello", or -1 */
    DIR *dir;             /* open on the root, or NULL */
};


static int
t_sync_setup(void **state)
{
    struct t_sync_state *st = calloc(1, sizeof(*st));

    if (st == NULL)
        return -1;
    snprintf(st->env.dir, sizeof(st->env.dir), "/tmp/vfuse-test-XXXXXX");
    st->fd = -1;
    *state = st;
    return 0;
}


static int
t_sync_teardown(void **state)
{
    struct t_sync_state *st = *state;

    atomic_store(&mount_mem_fsync_status, 0);
    atomic_store(&mount_mem_flush_status, 0);
    if (st->fd >= 0)
        close(st->fd);
    if (st->dir != NULL)
        closedir(st->dir);
    mount_env_stop(&st->env);
    free(st);
    return 0;
}


/* FLUSH, FSYNC and FSYNCDIR that the graph answers ENOSYS are not
 * answered ENOSYS to the kernel (close gets 0, fsync EIO): the kernel
 * keeps sending them, so a later failure below still reaches fsync and
 * close (the kernel would answer 0 itself for the life of the mount). */
static void
test_mount_sync_never_enosys(void **state)
{
    struct t_sync_state *st = *state;
    char reason[512] = "";
    char hello[128];
    int rc;

    if (!mount_can_mount())
        skip();
    assert_non_null(mkdtemp(st->env.dir));
    /* No write-behind: FLUSH goes down only with flush-behind off. */
    rc = mount_env_start(&st->env, "test/memfs",
                         "    option flush-behind off\n", reason,
                         sizeof(reason));
    if (rc != 0)
        fail_msg("mount failed: %d %s", rc, reason);
    snprintf(hello, sizeof(hello), "%s/hello", st->env.dir);

    st->fd = open(hello, O_RDONLY);
    assert_true(st->fd >= 0);
    atomic_store(&mount_mem_fsync_status, -ENOSYS);
    assert_int_equal(fsync(st->fd), -1);
    assert_int_equal(errno, EIO);
    atomic_store(&mount_mem_fsync_status, -ENOSPC);
    assert_int_equal(fsync(st->fd), -1);
    assert_int_equal(errno, ENOSPC);
    atomic_store(&mount_mem_flush_status, -ENOSYS);
    rc = close(st->fd);
    st->fd = -1;
    assert_int_equal(rc, 0);
    st->fd = open(hello, O_RDONLY);
    assert_true(st->fd >= 0);
    atomic_store(&mount_mem_flush_status, -EIO);
    rc = close(st->fd);
    st->fd = -1;
    assert_int_equal(rc, -1);
    assert_int_equal(errno, EIO);
    atomic_store(&mount_mem_flush_status, 0);

    st->dir = opendir(st->env.dir);
    assert_non_null(st->dir);
    atomic_store(&mount_mem_fsync_status, -ENOSYS);
    assert_int_equal(fsync(dirfd(st->dir)), -1);
    assert_int_equal(errno, EIO);
    atomic_store(&mount_mem_fsync_status, -ENOSPC);
    assert_int_equal(fsync(dirfd(st->dir)), -1);
    assert_int_equal(errno, ENOSPC);
}


static void
test_mount_child_never_up(void **state)
{
    struct mount_env env = {.dir = "/tmp/vfuse-test-XXXXXX"};
    char reason[512] = "";
    char source[128];
    char type[128];
    int rc;

    (void)state;
    if (!mount_can_mount())
        skip();
    assert_non_null(mkdtemp(env.dir));
    rc = mount_env_start(&env, "test/memfs-down",
                         "    option connect-timeout 1\n", reason,
                         sizeof(reason));
    assert_int_equal(rc, -ENOTCONN);
    assert_non_null(strstr(reason, "brick unreachable"));
    mount_env_stop(&env);
    /* fini unmounted it. */
    assert_false(mount_find_mount(env.dir, source, type, sizeof(source)));
}


static void
test_mount_bad_mountpoint(void **state)
{
    struct mount_env env = {.dir = "/tmp/vfuse-test-XXXXXX"};
    char reason[512] = "";
    int rc;

    (void)state;
    if (!mount_can_mount())
        skip();
    /* A mount point that does not exist: init fails with the reason. */
    assert_non_null(mkdtemp(env.dir));
    rmdir(env.dir);
    rc = mount_env_start(&env, "test/memfs", "", reason, sizeof(reason));
    assert_int_equal(rc, -ENOENT);
    assert_non_null(strstr(reason, env.dir));
    assert_non_null(strstr(reason, "No such file or directory"));
    mount_env_stop(&env);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mount_stat_ls_cat),
        cmocka_unit_test(test_mount_name_too_long),
        cmocka_unit_test_setup_teardown(test_mount_sync_never_enosys,
                                        t_sync_setup, t_sync_teardown),
        cmocka_unit_test(test_mount_child_never_up),
        cmocka_unit_test(test_mount_bad_mountpoint),
    };

    if (mount_test_init() != 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
