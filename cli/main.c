/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mortar: the command-line client of mortard.
 *
 * Sends the command words as they are (mortard parses GlusterFS's grammar)
 * with the wanted output format in one MGMT_CLI call over mortard's unix
 * socket (root only), or TCP with --remote-host (refused unless the
 * connection is TLS with an admin certificate: doc/security.md); prints the answer's
 * output to stdout and its error string to stderr, and exits with the
 * answer's ret.
 * Synchronous: one blocking socket (mortarfsd/mgmt-clnt.c), no event loop.
 * `volume heal VOL status`, `volume rebalance VOL status` and `volume
 * remove-brick VOL BRICK... status` on a terminal repeat every second as
 * a live bar (heal-bar.c, rebal-bar.c, drawn by progress-bar.c).
 * Threads: main thread only.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mgmt-clnt.h"
#include "mgmt.h"
#include "progress-bar.h"
#include "tls.h"

#define CLI_CONNECT_TIMEOUT_MS 10000
#define CLI_HELP_TIMEOUT_MS 3000
#define CLI_CONN_FAILED "Connection failed. Please check if mortard is " \
                        "operational."


/* Asks on the terminal; true for an answer starting with y or Y. */
static bool
cli_confirm(const char *question)
{
    char line[64];

    fputs(question, stdout);
    fflush(stdout);
    if (fgets(line, sizeof(line), stdin) == NULL)
        return false;
    return line[0] == 'y' || line[0] == 'Y';
}


static int
cli_addr(const struct cli_args *args, struct mgc_addr *addr, vl_err_t *err)
{
    if (args->remote_host != NULL)
        return mgc_addr_parse(args->remote_host, MGC_DEFAULT_PORT, addr,
                              err);
    if (mgc_addr_unix(args->socket_path, addr) != 0) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    return 0;
}


static void
cli_print(FILE *out, const char *text)
{
    size_t len;

    if (text == NULL || text[0] == '\0')
        return;
    len = strlen(text);
    fputs(text, out);
    if (text[len - 1] != '\n')
        fputc('\n', out);
}


/* TLS is for --remote-host only (the unix socket proves who calls by
 * its uid): when asked for, or when this host has secure-access on, as
 * GlusterFS's CLI decides from /var/lib/glusterd/secure-access. */
static bool
cli_wants_tls(const struct cli_args *args)
{
    if (args->remote_host == NULL)
        return false;
    return args->is_tls || access(MGC_SECURE_ACCESS_FILE, F_OK) == 0;
}


/* Runs the command in mortard; returns the exit status. With is_quiet
 * (the help listing) nothing but a successful answer's output is
 * printed, and *is_reached says whether mortard answered at all. With
 * output, a successful answer's output is kept there (malloc'd) instead
 * of printed. */
static int
cli_run(const struct cli_args *args, char **cmd, int n_cmd, int timeout_ms,
        bool is_quiet, bool *is_reached, char **output)
{
    struct mgc_addr addr = {0};
    vl_err_t err = {.msg = ""};
    mgmt_cli_req req = {0};
    mgmt_cli_rsp rsp = {0};
    int status = CLI_EXIT_FAIL;
    struct vrpc_stream s = {.fd = -1};
    vrpc_tls_t *tls = NULL;
    int rc;

    if (cli_addr(args, &addr, &err) != 0) {
        fprintf(stderr, "mortar: --remote-host: %s\n", err.msg);
        return CLI_EXIT_FAIL;
    }
    if (cli_wants_tls(args)) {
        struct vrpc_tls_conf tc = {.own_cert = args->ssl_cert,
                                   .private_key = args->ssl_key,
                                   .ca_list = args->ssl_ca,
                                   .check_host = args->is_ssl_check_host};

        rc = vrpc_tls_new(&tc, false, &tls, &err);
        if (rc != 0) {
            fprintf(stderr, "mortar: TLS: %s\n", err.msg);
            goto out;
        }
    }
    rc = mgc_connect(&addr, tls, CLI_CONNECT_TIMEOUT_MS < timeout_ms
                                     ? CLI_CONNECT_TIMEOUT_MS : timeout_ms,
                     &s, &err);
    if (rc != 0) {
        if (!is_quiet) {
            fprintf(stderr, "%s\n", CLI_CONN_FAILED);
            /* The socket is root's (doc/security.md): say so rather
             * than leave a bare "Permission denied". */
            fprintf(stderr, "mortar: %s%s\n", err.msg,
                    rc == -EACCES && args->remote_host == NULL
                        ? " (mortard's unix socket serves root only: run "
                          "mortar as root)"
                        : "");
        }
        goto out;
    }
    req.argv.argv_len = (u_int)n_cmd;
    req.argv.argv_val = cmd;
    req.format = (int)args->format;
    rc = mgc_call(&s, MGMT_PROG, MGMT_VERSION, MGMT_PROC_CLI,
                  (xdrproc_t)xdr_mgmt_cli_req, &req,
                  (xdrproc_t)xdr_mgmt_cli_rsp, &rsp, timeout_ms, &err);
    if (rc != 0) {
        if (!is_quiet) {
            if (rc == -ETIMEDOUT)
                fprintf(stderr, "Error : Request timed out\n");
            else
                fprintf(stderr, "%s\n", CLI_CONN_FAILED);
            fprintf(stderr, "mortar: %s\n", err.msg);
        }
        goto out;
    }
    *is_reached = true;
    if (output != NULL && rsp.ret == 0)
        *output = strdup(rsp.output != NULL ? rsp.output : "");
    else if (!is_quiet || rsp.ret == 0)
        cli_print(stdout, rsp.output);
    if (!is_quiet)
        cli_print(stderr, rsp.errstr);
    status = rsp.ret >= 0 && rsp.ret <= 255 ? rsp.ret : CLI_EXIT_FAIL;
    xdr_free((xdrproc_t)xdr_mgmt_cli_rsp, (char *)&rsp);
out:
    vrpc_stream_close(&s);
    vrpc_tls_free(tls);
    mgc_addr_clear(&addr);
    return status;
}


/* What a watch needs between frames. */
struct cli_watch {
    const struct cli_args *args; /* borrowed: the command line */
    uint64_t most;               /* heal: most entries seen left */
};


/* One frame of `volume heal VOL status` (heal-bar.c): mortard's answer
 * ends the watch when it fails or nothing is left. */
static void
cli_heal_next(void *arg, struct cli_bar_frame *frame)
{
    struct cli_watch *w = arg;
    struct cli_heal_status st;
    bool is_reached = false;
    char *out = NULL;

    frame->status = cli_run(w->args, w->args->cmd, w->args->n_cmd,
                            (int)w->args->timeout_s * 1000, false,
                            &is_reached, &out);
    if (frame->status != 0 || !cli_heal_status_parse(out, &st) ||
        st.left == 0) {
        frame->is_done = true;
        frame->final = out;
        return;
    }
    if (st.left > w->most)
        w->most = st.left;
    cli_heal_bar(&st, w->most, frame->line, sizeof(frame->line));
    free(out);
}


/* One frame of `volume rebalance VOL status` or `volume remove-brick
 * VOL BRICK... status` (rebal-bar.c): mortard's answer ends the watch
 * when it fails or no node is in progress. */
static void
cli_rebal_next(void *arg, struct cli_bar_frame *frame)
{
    struct cli_watch *w = arg;
    struct cli_rebal_status st;
    bool is_reached = false;
    char *out = NULL;

    frame->status = cli_run(w->args, w->args->cmd, w->args->n_cmd,
                            (int)w->args->timeout_s * 1000, false,
                            &is_reached, &out);
    if (frame->status != 0 || !cli_rebal_status_parse(out, &st) ||
        st.n_running == 0) {
        frame->is_done = true;
        frame->final = out;
        return;
    }
    cli_rebal_bar(&st, frame->line, sizeof(frame->line));
    free(out);
}


int
main(int argc, char **argv)
{
    struct cli_args args;
    vl_err_t err = {.msg = ""};
    const char *question;
    char *help_cmd[] = {(char *)"help"};
    bool is_reached = false;
    int status;

    if (cli_args_parse(argc, argv, &args, &err) != 0) {
        fprintf(stderr, "mortar: %s\n", err.msg);
        return CLI_EXIT_FAIL;
    }
    if (args.is_version) {
        printf("mortar %s\n", PACKAGE_VERSION);
        status = 0;
        goto out;
    }
    if (args.is_help) {
        cli_usage(stdout);
        fflush(stdout);
        /* mortard knows its commands; list them if it can. */
        (void)cli_run(&args, help_cmd, 1, CLI_HELP_TIMEOUT_MS, true,
                      &is_reached, NULL);
        if (!is_reached)
            printf("\n(mortard is not reachable: its command list is not "
                   "shown)\n");
        status = 0;
        goto out;
    }
    question = cli_confirm_question(&args);
    if (question != NULL && !args.is_script && isatty(STDIN_FILENO) &&
        !cli_confirm(question)) {
        status = CLI_EXIT_FAIL;
        goto out;
    }
    /* The bar is for a person: text output to a terminal, with or
     * without --watch (args.c refuses --watch with --xml/--json); a
     * pipe or a file gets mortard's plain answer once. */
    if (args.format == CLI_FMT_TEXT && isatty(STDOUT_FILENO) &&
        cli_is_heal_status(args.cmd, args.n_cmd)) {
        struct cli_watch w = {.args = &args};

        status = cli_bar_watch(stdout, cli_heal_next, &w);
    } else if (args.format == CLI_FMT_TEXT && isatty(STDOUT_FILENO) &&
               cli_is_rebal_status(args.cmd, args.n_cmd)) {
        struct cli_watch w = {.args = &args};

        status = cli_bar_watch(stdout, cli_rebal_next, &w);
    } else {
        status = cli_run(&args, args.cmd, args.n_cmd,
                         (int)args.timeout_s * 1000, false, &is_reached,
                         NULL);
    }
out:
    cli_args_clear(&args);
    return status;
}
