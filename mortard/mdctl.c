/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mdctl: a minimal blocking client of mortard's mgmt protocol, for tests
 * until the real CLI (cli/mortar) lands.
 *
 *   mdctl [-s SOCKET] [--xml|--json] ARG...     MGMT_CLI; prints output
 *                                               on stdout, errstr on
 *                                               stderr, exits with ret
 *   mdctl [-s SOCKET] --getspec VOL             prints "version N" + spec
 *   mdctl [-s SOCKET] --watch VOL VERSION       same, after a change
 * Threads: one.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "mgmt.h"
#include "vrpc.h"


static int
mdctl_write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}


static int
mdctl_read_all(int fd, char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = read(fd, p, n);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}


/* Sends one call and reads one reply record (all fragments). */
static int
mdctl_call(int fd, uint32_t proc, xdrproc_t afn, void *args, xdrproc_t rfn,
           void *res)
{
    char *call = NULL, *rec = NULL;
    size_t clen, rlen = 0, off;
    uint32_t mark, xid;
    int accept;
    bool is_last = false;

    if (vrpc_encode_call(1, MGMT_PROG, MGMT_VERSION, proc, NULL, afn, args,
                         &call, &clen) != 0)
        return -1;
    mark = htonl(VRPC_LAST_FRAG | (uint32_t)clen);
    if (mdctl_write_all(fd, (char *)&mark, 4) != 0 ||
        mdctl_write_all(fd, call, clen) != 0) {
        vl_free(call);
        return -1;
    }
    vl_free(call);
    while (!is_last) {
        uint32_t n;
        char *nr;

        if (mdctl_read_all(fd, (char *)&mark, 4) != 0)
            goto fail;
        mark = ntohl(mark);
        is_last = (mark & VRPC_LAST_FRAG) != 0;
        n = mark & ~VRPC_LAST_FRAG;
        if (rlen + n > VRPC_MAX_RECORD)
            goto fail;
        nr = realloc(rec, rlen + n + 1);
        if (nr == NULL)
            goto fail;
        rec = nr;
        if (mdctl_read_all(fd, rec + rlen, n) != 0)
            goto fail;
        rlen += n;
    }
    if (vrpc_decode_reply(rec, rlen, &xid, &accept, &off) != 0 ||
        accept != VRPC_SUCCESS ||
        vrpc_decode_body(rec + off, rlen - off, rfn, res, NULL) != 0)
        goto fail;
    free(rec);
    return 0;

fail:
    free(rec);
    return -1;
}


int
main(int argc, char **argv)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    const char *sock = "/run/mortar/mortard.sock";
    int format = MGMT_FMT_TEXT, i = 1, fd;

    while (i < argc && argv[i][0] == '-') {
        if (strcmp(argv[i], "-s") == 0 && i + 1 < argc) {
            sock = argv[i + 1];
            i += 2;
        } else if (strcmp(argv[i], "--xml") == 0) {
            format = MGMT_FMT_XML;
            i++;
        } else if (strcmp(argv[i], "--json") == 0) {
            format = MGMT_FMT_JSON;
            i++;
        } else {
            break;
        }
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        fprintf(stderr, "mdctl: %s: %s\n", sock, strerror(errno));
        return 1;
    }
    if (i < argc && (strcmp(argv[i], "--getspec") == 0 ||
                     strcmp(argv[i], "--watch") == 0)) {
        bool is_watch = strcmp(argv[i], "--watch") == 0;
        mgmt_watch_req req = {0};
        mgmt_getspec_rsp rsp = {0};

        if (i + 1 >= argc || (is_watch && i + 2 >= argc)) {
            fprintf(stderr, "mdctl: --getspec VOL | --watch VOL VERSION\n");
            return 2;
        }
        req.volume = argv[i + 1];
        req.spec_version = is_watch ? strtoull(argv[i + 2], NULL, 10) : 0;
        if (mdctl_call(fd, is_watch ? MGMT_PROC_WATCH : MGMT_PROC_GETSPEC,
                       is_watch ? (xdrproc_t)xdr_mgmt_watch_req
                                : (xdrproc_t)xdr_mgmt_getspec_req,
                       &req, (xdrproc_t)xdr_mgmt_getspec_rsp, &rsp) != 0) {
            fprintf(stderr, "mdctl: call failed\n");
            return 1;
        }
        if (rsp.ret != 0) {
            fprintf(stderr, "%s\n", rsp.errstr);
            return 1;
        }
        printf("version %llu\n%s", (unsigned long long)rsp.spec_version,
               rsp.spec);
        xdr_free((xdrproc_t)xdr_mgmt_getspec_rsp, (char *)&rsp);
        return 0;
    }

    mgmt_cli_req req = {.format = format};
    mgmt_cli_rsp rsp = {0};
    int ret;

    if (argc - i > MGMT_ARGV_MAX) {
        fprintf(stderr, "mdctl: the command has %d words; at most %d\n",
                argc - i, MGMT_ARGV_MAX);
        return 2;
    }
    req.argv.argv_len = (u_int)(argc - i);
    req.argv.argv_val = argv + i;
    if (mdctl_call(fd, MGMT_PROC_CLI, (xdrproc_t)xdr_mgmt_cli_req, &req,
                   (xdrproc_t)xdr_mgmt_cli_rsp, &rsp) != 0) {
        fprintf(stderr, "mdctl: call failed\n");
        return 1;
    }
    fputs(rsp.output, stdout);
    if (rsp.errstr[0] != '\0' && format == MGMT_FMT_TEXT)
        fprintf(stderr, "%s\n", rsp.errstr);
    ret = rsp.ret;
    xdr_free((xdrproc_t)xdr_mgmt_cli_rsp, (char *)&rsp);
    close(fd);
    return ret;
}
