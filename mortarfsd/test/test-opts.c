/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-opts: mortarfsd's command line, volfile preparation (overrides,
 * mount/fuse on top), default log names, the pid file lock and statedump
 * files.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../fsd.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])) - 1)

static const char volfile_text[] =
    "volume b1.posix\n"
    "    type storage/posix\n"
    "    option directory /data/b1\n"
    "end-volume\n"
    "volume b1\n"
    "    type features/locks\n"
    "    option trace off\n"
    "    subvolumes b1.posix\n"
    "end-volume\n";


static int
parse(char **argv, int argc, struct fsd_opts *opts, vl_err_t *err)
{
    return fsd_opts_parse(argc, argv, opts, err);
}


static void
test_parse_minimal(void **state)
{
    char *argv[] = {"mortarfsd", "--volfile", "/etc/x.vol", NULL};
    struct fsd_opts o;
    vl_err_t err = {.msg = ""};

    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_string_equal(o.volfile, "/etc/x.vol");
    assert_null(o.mountpoint);
    assert_false(o.is_foreground);
    assert_int_equal(o.event_threads, FSD_DEFAULT_EVENT_THREADS);
    assert_string_equal(o.dump_dir, FSD_DEFAULT_DUMP_DIR);
    assert_int_equal(o.ready_timeout_s, FSD_DEFAULT_READY_TIMEOUT_S);
    fsd_opts_clear(&o);
}


static void
test_parse_full(void **state)
{
    char *argv[] = {"mortarfsd", "-N", "-f", "rel.vol", "--log-file", "-",
                    "--log-level", "debug", "--pid-file", "/run/p.pid",
                    "--event-threads", "4", "--dump-dir", "/tmp/d",
                    "--xlator-option", "v0-client.remote-port=24010",
                    "--fuse-opt", "entry-timeout=0", "-o", "ro,fsname=vol",
                    "/mnt/m", NULL};
    struct fsd_opts o;
    vl_err_t err = {.msg = ""};
    char cwd[4096];
    char want[4200];

    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    snprintf(want, sizeof(want), "%s/rel.vol",
             strcmp(cwd, "/") == 0 ? "" : cwd);
    assert_string_equal(o.volfile, want);
    assert_true(o.is_foreground);
    assert_string_equal(o.log_file, "-");
    assert_true(o.has_log_level);
    assert_int_equal(o.log_level, VL_LOG_DEBUG);
    assert_string_equal(o.pid_file, "/run/p.pid");
    assert_int_equal(o.event_threads, 4);
    assert_string_equal(o.dump_dir, "/tmp/d");
    assert_int_equal(o.n_xopts, 1);
    assert_string_equal(o.xopts[0].arg, "v0-client.remote-port");
    assert_string_equal(o.xopts[0].value, "24010");
    assert_int_equal(o.n_fuse_opts, 3);
    assert_string_equal(o.fuse_opts[0].key, "entry-timeout");
    assert_string_equal(o.fuse_opts[0].value, "0");
    assert_string_equal(o.fuse_opts[1].key, "ro");
    assert_string_equal(o.fuse_opts[1].value, "on");
    assert_string_equal(o.fuse_opts[2].key, "fsname");
    assert_string_equal(o.fuse_opts[2].value, "vol");
    assert_string_equal(o.mountpoint, "/mnt/m");
    fsd_opts_clear(&o);
}


static void
expect_usage_error(char **argv, int argc, const char *needle)
{
    struct fsd_opts o;
    vl_err_t err = {.msg = ""};

    assert_int_equal(parse(argv, argc, &o, &err), -EINVAL);
    if (strstr(err.msg, needle) == NULL)
        fail_msg("'%s' does not contain '%s'", err.msg, needle);
    /* Nothing to free on failure, and clearing again is harmless. */
    assert_null(o.volfile);
}


static void
test_parse_errors(void **state)
{
    char *no_vol[] = {"mortarfsd", "-N", NULL};
    char *threads0[] = {"mortarfsd", "-f", "/v", "--event-threads", "0",
                        NULL};
    char *threads_x[] = {"mortarfsd", "-f", "/v", "--event-threads", "2x",
                         NULL};
    char *level[] = {"mortarfsd", "-f", "/v", "--log-level", "loud", NULL};
    char *unknown[] = {"mortarfsd", "-f", "/v", "--bogus", NULL};
    char *xopt1[] = {"mortarfsd", "-f", "/v", "--xlator-option", "a=b",
                     NULL};
    char *xopt2[] = {"mortarfsd", "-f", "/v", "--xlator-option", "a.b=",
                     NULL};
    char *xopt3[] = {"mortarfsd", "-f", "/v", "--xlator-option", ".k=v",
                     NULL};
    char *fopt[] = {"mortarfsd", "-f", "/v", "--fuse-opt", "ro", "/m",
                    NULL};
    char *nomnt[] = {"mortarfsd", "-f", "/v", "-o", "ro", NULL};
    char *extra[] = {"mortarfsd", "-f", "/v", "/m", "/n", NULL};
    char *missing[] = {"mortarfsd", "--volfile", NULL};

    expect_usage_error(no_vol, ARGC(no_vol),
                       "--volfile or --volfile-server is required");
    expect_usage_error(threads0, ARGC(threads0), "--event-threads");
    expect_usage_error(threads_x, ARGC(threads_x), "'2x'");
    expect_usage_error(level, ARGC(level), "loud");
    expect_usage_error(unknown, ARGC(unknown), "--bogus");
    expect_usage_error(xopt1, ARGC(xopt1), "NAME.KEY=VALUE");
    expect_usage_error(xopt2, ARGC(xopt2), "NAME.KEY=VALUE");
    expect_usage_error(xopt3, ARGC(xopt3), "NAME.KEY=VALUE");
    expect_usage_error(fopt, ARGC(fopt), "KEY=VALUE");
    expect_usage_error(nomnt, ARGC(nomnt), "without a mount point");
    expect_usage_error(extra, ARGC(extra), "'/n'");
    expect_usage_error(missing, ARGC(missing), "--volfile");
}


/* --ready-fd: only with -N, an open descriptor above stderr, made
 * close-on-exec; the report on it is one message, then the fd is closed. */
static void
test_ready_fd(void **state)
{
    int fd = fcntl(open("/dev/null", O_WRONLY), F_DUPFD, 50);
    char arg[16], bad[16];
    char *ok[] = {"mortarfsd", "-N", "-f", "/v", "--ready-fd", arg, NULL};
    char *no_n[] = {"mortarfsd", "-f", "/v", "--ready-fd", arg, NULL};
    char *low[] = {"mortarfsd", "-N", "-f", "/v", "--ready-fd", "2", NULL};
    char *closed[] = {"mortarfsd", "-N", "-f", "/v", "--ready-fd", bad,
                      NULL};
    struct fsd_daemon d = {.ready_fd = -1, .pid_fd = -1};
    struct fsd_opts o;
    vl_err_t err = {.msg = ""};
    char buf[64];
    int p[2];
    ssize_t n;

    assert_true(fd >= 50);
    snprintf(arg, sizeof(arg), "%d", fd);
    snprintf(bad, sizeof(bad), "%d", fd + 1);
    assert_int_equal(parse(ok, ARGC(ok), &o, &err), 0);
    assert_int_equal(o.ready_fd, fd);
    assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    fsd_opts_clear(&o);
    expect_usage_error(no_n, ARGC(no_n), "--ready-fd needs -N");
    expect_usage_error(low, ARGC(low), "3-65535");
    expect_usage_error(closed, ARGC(closed), "Bad file descriptor");
    close(fd);

    fsd_report_ready(NULL, 0, NULL); /* nobody waits: nothing happens */
    assert_int_equal(pipe(p), 0);
    d.ready_fd = p[1];
    fsd_report_ready(&d, -1, "another migration holds the lock");
    assert_int_equal(d.ready_fd, -1);
    fsd_report_ready(&d, 0, NULL); /* once only */
    n = read(p[0], buf, sizeof(buf) - 1);
    assert_true(n > 0);
    buf[n] = '\0';
    assert_string_equal(buf, "1another migration holds the lock");
    assert_int_equal(read(p[0], buf, sizeof(buf)), 0); /* closed */
    close(p[0]);
}


static void
test_parse_volfile_server(void **state)
{
    char *argv[] = {"mortarfsd", "--backup-volfile-servers=h2:[::1]:h3",
                    "--volfile-id", "v0", "--volfile-server", "h1:7",
                    "--volfile-server-port", "30000", "/m", NULL};
    char *no_id[] = {"mortarfsd", "--volfile-server", "h", "/m", NULL};
    char *no_srv[] = {"mortarfsd", "--volfile-id", "v", "/m", NULL};
    char *both[] = {"mortarfsd", "-f", "/v", "--volfile-server", "h",
                    "--volfile-id", "v", NULL};
    char *twice[] = {"mortarfsd", "--volfile-server", "h",
                     "--volfile-server", "i", "--volfile-id", "v", NULL};
    char *bad_id[] = {"mortarfsd", "--volfile-server", "h",
                      "--volfile-id", "a/b", NULL};
    char *bad_port[] = {"mortarfsd", "--volfile-server", "h",
                        "--volfile-id", "v", "--volfile-server-port", "0",
                        NULL};
    char *backups_only[] = {"mortarfsd", "--backup-volfile-servers", "h",
                            "--volfile-id", "v", NULL};
    char *empty_backup[] = {"mortarfsd", "--volfile-server", "h",
                            "--volfile-id", "v",
                            "--backup-volfile-servers", "a::b", NULL};
    struct fsd_opts o;
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_null(o.volfile);
    assert_true(o.has_vf_server);
    assert_int_equal(o.n_vf_servers, 4);
    assert_string_equal(o.vf_servers[0], "h1:7");
    assert_string_equal(o.vf_servers[1], "h2");
    assert_string_equal(o.vf_servers[2], "[::1]");
    assert_string_equal(o.vf_servers[3], "h3");
    assert_int_equal(o.vf_port, 30000);
    assert_string_equal(o.vf_id, "v0");
    assert_string_equal(o.mountpoint, "/m");
    fsd_opts_clear(&o);

    expect_usage_error(no_id, ARGC(no_id), "go together");
    expect_usage_error(no_srv, ARGC(no_srv), "go together");
    expect_usage_error(both, ARGC(both), "exclude each other");
    expect_usage_error(twice, ARGC(twice), "given twice");
    expect_usage_error(bad_id, ARGC(bad_id), "volume name");
    expect_usage_error(bad_port, ARGC(bad_port), "--volfile-server-port");
    expect_usage_error(backups_only, ARGC(backups_only),
                       "needs --volfile-server");
    expect_usage_error(empty_backup, ARGC(empty_backup), "bad host name");
}


static void
test_help_and_version(void **state)
{
    char *help[] = {"mortarfsd", "--help", NULL};
    char *ver[] = {"mortarfsd", "-V", NULL};
    struct fsd_opts o;
    vl_err_t err = {.msg = ""};

    assert_int_equal(parse(help, ARGC(help), &o, &err), 0);
    assert_true(o.is_help);
    fsd_opts_clear(&o);
    assert_int_equal(parse(ver, ARGC(ver), &o, &err), 0);
    assert_true(o.is_version);
    fsd_opts_clear(&o);
}


static const struct vl_volfile_vol *
find_vol(const vl_volfile_t *vf, const char *name)
{
    for (size_t i = 0; i < vf->n_vols; i++)
        if (strcmp(vf->vols[i].name, name) == 0)
            return &vf->vols[i];
    return NULL;
}


static const char *
find_opt(const struct vl_volfile_vol *vol, const char *key)
{
    const char *value = NULL;

    for (size_t i = 0; i < vol->n_opts; i++)
        if (strcmp(vol->opts[i].key, key) == 0)
            value = vol->opts[i].value;
    return value;
}


static void
test_override(void **state)
{
    struct fsd_xopt xo[] = {
        {.arg = "b1.posix.directory", .value = "/data/other"},
        {.arg = "b1.posix.fsync-on-close", .value = "on"},
        {.arg = "b1.trace", .value = "on"},
    };
    vl_err_t err = {.msg = ""};
    vl_volfile_t *vf;
    const struct vl_volfile_vol *vol;

    vf = vl_volfile_parse(volfile_text, strlen(volfile_text), "t.vol", &err);
    assert_non_null(vf);
    vf = fsd_volfile_override(vf, xo, 3, &err);
    if (vf == NULL)
        fail_msg("override failed: %s", err.msg);
    assert_int_equal(vf->n_vols, 2);
    /* "b1.posix" is the longest volume-name prefix, not "b1". */
    vol = find_vol(vf, "b1.posix");
    assert_non_null(vol);
    assert_string_equal(find_opt(vol, "directory"), "/data/other");
    assert_string_equal(find_opt(vol, "fsync-on-close"), "on");
    assert_int_equal(vol->n_opts, 2);
    vol = find_vol(vf, "b1");
    assert_non_null(vol);
    assert_string_equal(find_opt(vol, "trace"), "on");
    assert_int_equal(vol->n_subvols, 1);
    assert_string_equal(vol->subvols[0], "b1.posix");
    vl_volfile_free(vf);
}


static void
test_override_unknown_volume(void **state)
{
    struct fsd_xopt xo[] = {{.arg = "nope.key", .value = "1"}};
    vl_err_t err = {.msg = ""};
    vl_volfile_t *vf;

    vf = vl_volfile_parse(volfile_text, strlen(volfile_text), "t.vol", &err);
    assert_non_null(vf);
    assert_null(fsd_volfile_override(vf, xo, 1, &err));
    assert_non_null(strstr(err.msg, "nope.key"));
    assert_non_null(strstr(err.msg, "no translator"));
}


static void
test_add_fuse(void **state)
{
    struct vl_kv fo[] = {{.key = "ro", .value = "on"}};
    vl_err_t err = {.msg = ""};
    vl_volfile_t *vf;
    const struct vl_volfile_vol *top;

    vf = vl_volfile_parse(volfile_text, strlen(volfile_text), "t.vol", &err);
    assert_non_null(vf);
    assert_int_equal(fsd_volfile_add_fuse(vf, "/mnt/x", fo, 1, &err), 0);
    top = vl_volfile_top(vf, &err);
    assert_non_null(top);
    assert_string_equal(top->name, "fuse");
    assert_string_equal(top->type, "mount/fuse");
    assert_string_equal(find_opt(top, "mountpoint"), "/mnt/x");
    assert_string_equal(find_opt(top, "ro"), "on");
    assert_int_equal(top->n_subvols, 1);
    assert_string_equal(top->subvols[0], "b1");
    /* A second one cannot be named "fuse" again. */
    assert_int_equal(fsd_volfile_add_fuse(vf, "/mnt/y", NULL, 0, &err), 0);
    top = vl_volfile_top(vf, &err);
    assert_non_null(top);
    assert_string_equal(top->name, "fuse-fuse");
    assert_string_equal(top->subvols[0], "fuse");
    vl_volfile_free(vf);
}


static void
test_log_default_path(void **state)
{
    struct fsd_opts o = {.volfile = "/var/lib/x/brick1.vol"};
    char *p;

    p = fsd_log_default_path(&o);
    assert_string_equal(p, FSD_DEFAULT_LOG_DIR "/brick1.log");
    free(p);
    o.mountpoint = "/mnt/mortar";
    p = fsd_log_default_path(&o);
    assert_string_equal(p, FSD_DEFAULT_LOG_DIR "/mnt-mortar.log");
    free(p);
}


static void
test_pidfile_lock(void **state)
{
    char dir[] = "/tmp/fsd-test-XXXXXX";
    char path[256];
    struct fsd_daemon d = {.ready_fd = -1, .pid_fd = -1};
    vl_err_t err = {.msg = ""};
    char buf[32] = "";
    int status = 0;
    pid_t pid;
    int fd;

    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/p.pid", dir);
    assert_int_equal(fsd_pidfile_take(&d, path, &err), 0);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_true(read(fd, buf, sizeof(buf) - 1) > 0);
    close(fd);
    assert_int_equal(atol(buf), (long)getpid());

    /* Another process must be refused while we hold it. */
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct fsd_daemon d2 = {.ready_fd = -1, .pid_fd = -1};
        vl_err_t e2 = {.msg = ""};
        int rc = fsd_pidfile_take(&d2, path, &e2);

        if (rc != -EAGAIN || strstr(e2.msg, "held by") == NULL) {
            fprintf(stderr, "# child: rc %d: %s\n", rc, e2.msg);
            _exit(1);
        }
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    fsd_pidfile_release(&d);
    assert_int_equal(access(path, F_OK), -1);
    /* Once released it can be taken again. */
    assert_int_equal(fsd_pidfile_take(&d, path, &err), 0);
    fsd_pidfile_release(&d);
    assert_int_equal(rmdir(dir), 0);
}


static void
test_statedump_file(void **state)
{
    char dir[] = "/tmp/fsd-dump-XXXXXX";
    char sub[256];
    char path[512];
    struct stat st;

    assert_non_null(mkdtemp(dir));
    /* The dump directory is created when missing. */
    snprintf(sub, sizeof(sub), "%s/dumps", dir);
    assert_int_equal(fsd_statedump(sub, path, sizeof(path)), 0);
    assert_int_equal(strncmp(path, sub, strlen(sub)), 0);
    assert_non_null(strstr(path, "/mortarfsd."));
    assert_non_null(strstr(path, ".dump."));
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(sub), 0);
    assert_int_equal(rmdir(dir), 0);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_minimal),
        cmocka_unit_test(test_parse_full),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_ready_fd),
        cmocka_unit_test(test_parse_volfile_server),
        cmocka_unit_test(test_help_and_version),
        cmocka_unit_test(test_override),
        cmocka_unit_test(test_override_unknown_volume),
        cmocka_unit_test(test_add_fuse),
        cmocka_unit_test(test_log_default_path),
        cmocka_unit_test(test_pidfile_lock),
        cmocka_unit_test(test_statedump_file),
    };

    vl_global_init();
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
