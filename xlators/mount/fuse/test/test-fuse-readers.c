/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-fuse-readers: the bridge's reader threads on a real mount over
 * "test/memfs" (mount-memfs.c; root and /dev/fuse needed, skipped
 * otherwise). Four reader threads must be woken one per request, and must
 * stop while a lazily unmounted mount is kept alive by an open file.
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


/* Voluntary context switches of the bridge's reader threads (named
 * "vfuse-reader"), summed from /proc/self/task. */
static long
reader_sleeps(int *n_readers)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *de;
    long sum = 0;

    assert_non_null(d);
    *n_readers = 0;
    while ((de = readdir(d)) != NULL) {
        char path[300];
        char line[128];
        FILE *f;

        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
        f = fopen(path, "r");
        if (f == NULL)
            continue;
        if (fgets(line, sizeof(line), f) == NULL
            || strcmp(line, "vfuse-reader\n") != 0) {
            fclose(f);
            continue;
        }
        fclose(f);
        (*n_readers)++;
        snprintf(path, sizeof(path), "/proc/self/task/%s/status",
                 de->d_name);
        f = fopen(path, "r");
        assert_non_null(f);
        while (fgets(line, sizeof(line), f) != NULL)
            if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0)
                sum += atol(line + 24);
        fclose(f);
    }
    closedir(d);
    return sum;
}


/* Requests the bridge's readers took from /dev/fuse, from the
 * statedump's "requests_read=" line. */
static long
requests_read(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    const char *at;
    long n = -1;

    assert_non_null(out);
    vl_statedump_write(out);
    fclose(out);
    at = strstr(text, "\nrequests_read=");
    if (at != NULL)
        n = atol(at + strlen("\nrequests_read="));
    free(text);
    return n;
}


/* Four readers: the kernel must wake one of them per request (they block
 * in read(2)), not all four (poll on a shared fd wakes every poller and
 * costs each a sleep). Then a lazy unmount while a file stays open keeps
 * the connection alive, so no ENODEV comes: stopping must still end the
 * readers (alarm fails the test if it hangs). */
static void
test_mount_readers_wake_one_and_stop(void **state)
{
    struct mount_env env = {.dir = "/tmp/vfuse-test-XXXXXX"};
    char path[128];
    char reason[512] = "";
    enum { N_STATS = 200 };
    struct stat st;
    long sleeps_before;
    long sleeps;
    long reqs_before;
    long reqs;
    int n_readers;
    int fd;
    int rc;

    (void)state;
    if (!mount_can_mount())
        skip();
    assert_non_null(mkdtemp(env.dir));
    rc = mount_env_start(&env, "test/memfs", "    option reader-threads 4\n",
                         reason, sizeof(reason));
    if (rc != 0) {
        mount_env_stop(&env);
        fail_msg("mount failed: %d %s", rc, reason);
    }
    snprintf(path, sizeof(path), "%s/hello", env.dir);
    assert_int_equal(stat(path, &st), 0);
    usleep(100 * 1000); /* let every reader go to sleep */
    sleeps_before = reader_sleeps(&n_readers);
    assert_int_equal(n_readers, 4);
    reqs_before = requests_read();
    assert_true(reqs_before > 0);
    /* With entry and attribute timeouts 0, each stat is at least one
     * request (LOOKUP). */
    for (int i = 0; i < N_STATS; i++)
        assert_int_equal(stat(path, &st), 0);
    reqs = requests_read() - reqs_before;
    sleeps = reader_sleeps(&n_readers) - sleeps_before;
    print_message("%ld reader wake-ups for %ld requests (%d stats)\n",
                  sleeps, reqs, N_STATS);
    if (reqs < N_STATS)
        fail_msg("%ld requests read for %d stats", reqs, N_STATS);
    /* Sleeps are counted against the requests really read, so the
     * kernel's requests per stat do not matter. One woken reader per
     * request is at most one sleep each, plus a few for the rare lock
     * wait; four woken per request would be near four each. There is no
     * tight lower bound: a reader preempted between its reply and its next
     * read(2) finds the next request already queued and does not sleep
     * (CI's parallel make check did that). */
    if (sleeps < 1)
        fail_msg("no reader wake-ups for %ld requests: not counting the "
                 "readers?", reqs);
    if (sleeps >= 2 * reqs)
        fail_msg("%ld reader wake-ups for %ld requests", sleeps, reqs);

    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(umount2(env.dir, MNT_DETACH), 0);
    alarm(30);
    mount_env_stop(&env); /* readers still blocked in read: must wake them */
    alarm(0);
    close(fd);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mount_readers_wake_one_and_stop),
    };

    if (mount_test_init() != 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
