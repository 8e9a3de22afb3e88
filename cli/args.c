/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * args: the `mortar` command line.
 *
 * Only the CLI's own flags are interpreted here; the command words go to
 * mortard unchanged (it owns GlusterFS's grammar). Parsing never exits,
 * so it can be unit-tested. Threads: main thread only.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mgmt-clnt.h"
#include "mgmt.h"
#include "tls.h"
#include "vrpc.h"

/* Room in a request for what is not the words: the RPC header, the
 * credentials of an authenticated connection, the format. */
#define CLI_REQ_OVERHEAD 4096


void
cli_usage(FILE *out)
{
    fprintf(out,
"Usage: mortar [OPTION]... COMMAND [ARG]...\n"
"Send a management command to mortard and print its answer.\n"
"\n"
"      --mode=script           never ask for confirmation\n"
"      --xml                   ask for XML output\n"
"      --json                  ask for JSON output\n"
"      --watch                 heal, rebalance and remove-brick status:\n"
"                              a live bar, redrawn every second (the\n"
"                              default when stdout is a terminal;\n"
"                              ignored when it is not; not with\n"
"                              --xml or --json)\n"
"      --remote-host=HOST[:PORT]\n"
"                              talk TCP to mortard on HOST (port %d);\n"
"                              commands need TLS with an admin\n"
"                              certificate (doc/security.md)\n"
"      --tls                   --remote-host speaks TLS (also when\n"
"                              %s exists here)\n"
"      --ssl-cert=PATH         client certificate (default $MORTAR_SSL_CERT\n"
"                              or %s)\n"
"      --ssl-key=PATH          its key ($MORTAR_SSL_KEY or %s)\n"
"      --ssl-ca=PATH           CA list ($MORTAR_SSL_CA or %s)\n"
"      --ssl-check-host        refuse a mortard whose certificate does not\n"
"                              name --remote-host's host\n"
"      --socket=PATH           mortard's unix socket (default $MORTAR_SOCKET\n"
"                              or %s)\n"
"      --timeout=SEC           how long to wait for the answer (default %d)\n"
"      --version               print the version and exit\n"
"  -h, --help                  print this help and exit\n"
"\n"
"Commands follow GlusterFS's grammar and are parsed by mortard, e.g.\n"
"  volume create VOL [replica N] HOST:/BRICK... [force]\n"
"  volume start VOL | volume stop VOL\n"
"  volume delete VOL | volume info [VOL] | volume list\n"
"  volume status [all | VOL [HOST:/BRICK]] [detail]\n"
"  volume set VOL KEY VALUE | volume reset VOL [KEY]\n"
"  volume get VOL KEY|all (Mortar's keys and GlusterFS's names)\n"
"  volume add-brick VOL [replica N] HOST:/BRICK... [force]\n"
"  volume remove-brick VOL [replica N] HOST:/BRICK...\n"
"                      start|status|stop|commit|force\n"
"  volume replace-brick VOL HOST:/OLD HOST:/NEW commit force\n"
"  volume reset-brick VOL HOST:/BRICK start |\n"
"                     HOST:/BRICK HOST:/BRICK commit [force]\n"
"  volume rebalance VOL start [force]|stop|status | fix-layout start\n"
"  volume heal VOL [enable|disable|full|info [summary|split-brain]|\n"
"                   statistics heal-count|status]\n"
"  volume heal VOL split-brain bigger-file FILE | latest-mtime FILE |\n"
"                   source-brick HOST:BRICK [FILE]\n"
"  peer probe HOST[:PORT] | peer detach HOST | peer status | pool list\n"
"  system:: getspec VOL (the client volfile; also 'system getspec')\n"
"'mortar help' also prints mortard's own list if it has one; the options\n"
"of 'volume set' are listed by 'mortar volume set help'.\n"
"\n"
"'volume stop', 'volume delete' and 'volume remove-brick ... commit|force'\n"
"ask for confirmation unless\n"
"--mode=script is given or standard input is not a terminal.\n"
"A word of the command may be %d bytes long, the command %d words.\n"
"Exit status: mortard's answer (0 success), or %d when mortard cannot\n"
"be reached or the command line is wrong.\n",
            MGC_DEFAULT_PORT, MGC_SECURE_ACCESS_FILE, VRPC_TLS_DEF_CERT,
            VRPC_TLS_DEF_KEY, VRPC_TLS_DEF_CA, MGC_DEFAULT_SOCKET,
            CLI_DEFAULT_TIMEOUT_S,
            MGMT_ARG_MAX, MGMT_ARGV_MAX, CLI_EXIT_FAIL);
}


/* "--name=value" or "--name value": 1 if arg is this flag (value set,
 * *i advanced past a separate value), 0 if not, -EINVAL if the value is
 * missing. */
static int
cli_flag_value(int argc, char **argv, int *i, const char *name,
               const char **value, vl_err_t *err)
{
    const char *arg = argv[*i];
    size_t len = strlen(name);

    if (strncmp(arg, name, len) != 0)
        return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
    } else if (arg[len] == '\0') {
        if (*i + 1 >= argc) {
            vl_err_set(err, "option '%s' needs a value", name);
            return -EINVAL;
        }
        *value = argv[++*i];
    } else {
        return 0;
    }
    if ((*value)[0] == '\0') {
        vl_err_set(err, "option '%s' needs a value", name);
        return -EINVAL;
    }
    return 1;
}


/* 1 if argv[*i] is one of our flags (consumed), 0 if not, or -errno. */
static int
cli_args_flag(int argc, char **argv, int *i, struct cli_args *args,
              vl_err_t *err)
{
    const char *arg = argv[*i];
    const char *value = NULL;
    char *end = NULL;
    unsigned long n;
    int rc;

    if (strcmp(arg, "--xml") == 0) {
        args->format = CLI_FMT_XML;
        return 1;
    }
    if (strcmp(arg, "--json") == 0) {
        args->format = CLI_FMT_JSON;
        return 1;
    }
    if (strcmp(arg, "--watch") == 0) {
        args->is_watch = true;
        return 1;
    }
    if (strcmp(arg, "--ssl-check-host") == 0) {
        args->is_ssl_check_host = true;
        return 1;
    }
    if (strcmp(arg, "--tls") == 0) {
        args->is_tls = true;
        return 1;
    }
    if (strcmp(arg, "--version") == 0) {
        args->is_version = true;
        return 1;
    }
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
        args->is_help = true;
        return 1;
    }
    rc = cli_flag_value(argc, argv, i, "--mode", &value, err);
    if (rc == 1) {
        if (strcmp(value, "script") != 0) {
            vl_err_set(err, "--mode: unknown mode '%s' (only 'script')",
                       value);
            return -EINVAL;
        }
        args->is_script = true;
        return 1;
    }
    if (rc == 0)
        rc = cli_flag_value(argc, argv, i, "--remote-host", &value, err);
    if (rc == 1) {
        args->remote_host = value;
        return 1;
    }
    if (rc == 0)
        rc = cli_flag_value(argc, argv, i, "--socket", &value, err);
    if (rc == 1) {
        args->socket_path = value;
        return 1;
    }
    if (rc == 0)
        rc = cli_flag_value(argc, argv, i, "--ssl-cert", &value, err);
    if (rc == 1) {
        args->ssl_cert = value;
        return 1;
    }
    if (rc == 0)
        rc = cli_flag_value(argc, argv, i, "--ssl-key", &value, err);
    if (rc == 1) {
        args->ssl_key = value;
        return 1;
    }
    if (rc == 0)
        rc = cli_flag_value(argc, argv, i, "--ssl-ca", &value, err);
    if (rc == 1) {
        args->ssl_ca = value;
        return 1;
    }
    if (rc == 0)
        rc = cli_flag_value(argc, argv, i, "--timeout", &value, err);
    if (rc == 1) {
        errno = 0;
        n = strtoul(value, &end, 10);
        if (value[0] == '-' || *end != '\0' || errno != 0 || n == 0 ||
            n > 86400) {
            vl_err_set(err, "--timeout: '%s' is not a number of seconds "
                       "in 1-86400", value);
            return -EINVAL;
        }
        args->timeout_s = (unsigned)n;
        return 1;
    }
    return rc;
}


/* The command fits one MGMT_CLI request: at most MGMT_ARGV_MAX words of
 * MGMT_ARG_MAX bytes each, in a record mortard reads (its connections'
 * record limit). Checked here, before connecting: mortard would close
 * the connection, which reads as "Connection failed", not as the cause.
 * 0 or -E2BIG with err naming the size and the limit. */
static int
cli_args_check_size(char *const *cmd, int n_cmd, vl_err_t *err)
{
    size_t total = 0;
    size_t max = (size_t)vrpc_limits_mgmt.max_record - CLI_REQ_OVERHEAD;

    if (n_cmd > MGMT_ARGV_MAX) {
        vl_err_set(err, "the command has %d words, more than %d", n_cmd,
                   MGMT_ARGV_MAX);
        return -E2BIG;
    }
    for (int i = 0; i < n_cmd; i++) {
        size_t len = strlen(cmd[i]);

        if (len > MGMT_ARG_MAX) {
            vl_err_set(err, "word %d of the command ('%.20s...') is %zu "
                       "bytes, longer than %d bytes", i + 1, cmd[i], len,
                       MGMT_ARG_MAX);
            return -E2BIG;
        }
        /* XDR: a length word and the bytes padded to 4. */
        total += 4 + ((len + 3) & ~(size_t)3);
    }
    if (total > max) {
        vl_err_set(err, "the command is %zu bytes, longer than %zu bytes",
                   total, max);
        return -E2BIG;
    }
    return 0;
}


/* An environment variable, NULL when unset or empty. */
static const char *
cli_env(const char *name)
{
    const char *v = getenv(name);

    return v != NULL && v[0] != '\0' ? v : NULL;
}


/* --watch asks for a bar a person reads: refused where there is none,
 * and with --xml/--json, whose readers are programs that expect one
 * document (silently dropping it would hide the mistake). */
static int
cli_args_check_watch(const struct cli_args *args, vl_err_t *err)
{
    if (!args->is_watch || args->is_help || args->is_version)
        return 0;
    if (args->format != CLI_FMT_TEXT) {
        vl_err_set(err, "--watch draws a live bar for a person; it cannot "
                   "be used with --xml or --json");
        return -EINVAL;
    }
    if (!cli_is_heal_status(args->cmd, args->n_cmd) &&
        !cli_is_rebal_status(args->cmd, args->n_cmd)) {
        vl_err_set(err, "--watch is for 'volume heal VOL status', 'volume "
                   "rebalance VOL status' and 'volume remove-brick VOL "
                   "BRICK... status' only");
        return -EINVAL;
    }
    return 0;
}


int
cli_args_parse(int argc, char **argv, struct cli_args *args, vl_err_t *err)
{
    const char *env = getenv("MORTAR_SOCKET");
    int rc = 0;

    memset(args, 0, sizeof(*args));
    args->socket_path = env != NULL && env[0] != '\0' ? env
                                                      : MGC_DEFAULT_SOCKET;
    args->timeout_s = CLI_DEFAULT_TIMEOUT_S;
    args->ssl_cert = cli_env("MORTAR_SSL_CERT");
    args->ssl_key = cli_env("MORTAR_SSL_KEY");
    args->ssl_ca = cli_env("MORTAR_SSL_CA");
    args->cmd = calloc((size_t)(argc > 0 ? argc : 1), sizeof(*args->cmd));
    if (args->cmd == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    for (int i = 1; i < argc; i++) {
        rc = cli_args_flag(argc, argv, &i, args, err);
        if (rc < 0)
            goto fail;
        if (rc == 1)
            continue;
        if (args->n_cmd == 0 && argv[i][0] == '-') {
            vl_err_set(err, "unknown option '%s' (see --help)", argv[i]);
            rc = -EINVAL;
            goto fail;
        }
        args->cmd[args->n_cmd++] = argv[i];
    }
    if (args->n_cmd == 1 && strcmp(args->cmd[0], "help") == 0)
        args->is_help = true;
    if (args->n_cmd == 0 && !args->is_help && !args->is_version) {
        vl_err_set(err, "no command given (see --help)");
        rc = -EINVAL;
        goto fail;
    }
    rc = cli_args_check_watch(args, err);
    if (rc != 0)
        goto fail;
    rc = cli_args_check_size(args->cmd, args->n_cmd, err);
    if (rc != 0)
        goto fail;
    return 0;
fail:
    cli_args_clear(args);
    return rc;
}


void
cli_args_clear(struct cli_args *args)
{
    free(args->cmd);
    memset(args, 0, sizeof(*args));
}


const char *
cli_confirm_question(const struct cli_args *args)
{
    if (args->n_cmd < 2 || strcmp(args->cmd[0], "volume") != 0)
        return NULL;
    if (strcmp(args->cmd[1], "stop") == 0)
        return "Stopping volume will make its data inaccessible. Do you "
               "want to continue? (y/n) ";
    /* GlusterFS asks before a replica 2 volume (split-brain). */
    for (int i = 3; strcmp(args->cmd[1], "create") == 0 &&
                       i + 1 < args->n_cmd &&
                       strchr(args->cmd[i], ':') == NULL; i++)
        if (strcmp(args->cmd[i], "replica") == 0 &&
            strcmp(args->cmd[i + 1], "2") == 0)
            return "Replica 2 volumes are prone to split-brain. Use "
                   "Arbiter or Replica 3 to avoid this. See: "
                   "http://docs.gluster.org/en/latest/Administrator%20Guide/"
                   "Split%20brain%20and%20ways%20to%20deal%20with%20it/.\n"
                   "Do you still want to continue?\n (y/n) ";
    if (strcmp(args->cmd[1], "delete") == 0)
        return "Deleting volume will erase all information about the "
               "volume. Do you want to continue? (y/n) ";
    /* remove-brick force does not migrate; commit drops the bricks. */
    if (strcmp(args->cmd[1], "remove-brick") == 0 && args->n_cmd > 3 &&
        strcmp(args->cmd[args->n_cmd - 1], "force") == 0)
        return "Remove-brick force will not migrate files from the removed "
               "bricks, so they will no longer be available on the volume "
               "(data loss). Do you want to continue? (y/n) ";
    if (strcmp(args->cmd[1], "remove-brick") == 0 && args->n_cmd > 3 &&
        strcmp(args->cmd[args->n_cmd - 1], "commit") == 0)
        return "Removing brick(s) can result in data loss. Do you want to "
               "continue? (y/n) ";
    return NULL;
}
