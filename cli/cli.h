/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli: private declarations of `mortar`, the command-line client of
 * mortard.
 *
 * args.c parses the CLI's own flags out of argv (everything else is the
 * command, parsed by mortard); main.c connects, asks for confirmation
 * where GlusterFS does, makes the MGMT_CLI call and prints the answer.
 */
#ifndef MORTAR_CLI_H
#define MORTAR_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "vol/vol.h"

#define CLI_DEFAULT_TIMEOUT_S 120
/* Exit status for a bad command line or an unreachable daemon. */
#define CLI_EXIT_FAIL 1

enum cli_format {
    CLI_FMT_TEXT = 0, /* values of mgmt.x's MGMT_FMT_* */
    CLI_FMT_XML = 1,
    CLI_FMT_JSON = 2,
};

/* What the command line says; filled by cli_args_parse. */
struct cli_args {
    bool is_script;           /* --mode=script: never ask */
    enum cli_format format;   /* --xml / --json */
    const char *remote_host;  /* borrowed from argv; NULL = unix socket */
    const char *socket_path;  /* borrowed (argv, env) or the default */
    bool is_tls;              /* --tls: --remote-host speaks TLS */
    bool is_ssl_check_host;   /* --ssl-check-host: mortard's certificate
                                 must name --remote-host's host */
    const char *ssl_cert;     /* borrowed (argv, env); NULL: default */
    const char *ssl_key;      /* borrowed (argv, env); NULL: default */
    const char *ssl_ca;       /* borrowed (argv, env); NULL: default */
    unsigned timeout_s;       /* --timeout */
    bool is_version;          /* --version */
    bool is_help;             /* --help, -h, or the command "help" */
    bool is_watch;            /* --watch: the live bar (heal, rebalance) */
    char **cmd;               /* owned array of borrowed argv strings */
    int n_cmd;                /* words of the command */
};

/* Parses argv. The CLI's flags may come before or after the command
 * words (GlusterFS accepts "volume info --xml"); an unknown flag before
 * the command is an error. 0, or -EINVAL/-ENOMEM with err set. */
int cli_args_parse(int argc, char **argv, struct cli_args *args /* OUT */,
                   vl_err_t *err);
void cli_args_clear(struct cli_args *args);
void cli_usage(FILE *out);
/* The confirmation question for this command, or NULL if none. */
const char *cli_confirm_question(const struct cli_args *args);

/* heal-bar.c: `volume heal VOL status` as a live bar on a terminal. */
struct cli_heal_status {
    uint64_t left;  /* "Total entries left" */
    char data[32];  /* "Data left" */
    char rate[64];  /* "Rate (last minute)" */
    char eta[32];   /* "ETA" */
};
/* Reads mortard's heal status text; false if it is not one. */
bool cli_heal_status_parse(const char *text, struct cli_heal_status *st);
/* One line: a bar where most entries left (the most seen) is 0%. */
void cli_heal_bar(const struct cli_heal_status *st, uint64_t most,
                  char *buf, size_t len);
/* The command is `volume heal VOL status`. */
bool cli_is_heal_status(char *const *cmd, int n_cmd);

/* rebal-bar.c: `volume rebalance VOL status` and `volume remove-brick
 * VOL BRICK... status` as a live bar on a terminal. Sums of the table's
 * rows. */
struct cli_rebal_status {
    unsigned n_nodes;    /* rows of the table */
    unsigned n_running;  /* rows "in progress" */
    long long files;     /* "Rebalanced-files" */
    long long bytes;     /* "size", read back from mortard's units */
    long long scanned;   /* "scanned" */
    long long failures;  /* "failures" */
    long long skipped;   /* "skipped" */
    long long run_s;     /* the longest "run time" */
    long long running_s; /* the longest run time of a row in progress */
    long long eta_s;     /* the longest "Estimated time left" */
    bool is_estimating;  /* a node in progress has no estimate yet */
};
/* Reads mortard's rebalance status table; false if it is not one. */
bool cli_rebal_status_parse(const char *text, struct cli_rebal_status *st);
/* Done of the estimated total, 0..100; 100 once nothing is in
 * progress, at most 99 before; -1 while estimating. */
int cli_rebal_percent(const struct cli_rebal_status *st);
/* One line: bar, percentage, ETA, files and bytes moved, scanned,
 * rates. */
void cli_rebal_bar(const struct cli_rebal_status *st, char *buf,
                   size_t len);
/* The command is `volume rebalance VOL status` or `volume remove-brick
 * VOL BRICK... status`. */
bool cli_is_rebal_status(char *const *cmd, int n_cmd);

#endif /* MORTAR_CLI_H */
