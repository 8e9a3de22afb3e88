/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * client-bind: connects to a brick from a privileged source port.
 *
 * A brick believes the uids and gids a client claims only from a source
 * port below 1024, which only root can bind (protocol/server's
 * server-squash.c, doc/security.md "Brick access"); with allow-insecure
 * off (the default) it refuses other connections at SETVOLUME. So every
 * connection to a brick (FUSE clients, the self-heal daemon, rebalance,
 * mortard's graphs: all go through protocol/client) binds the highest
 * free port from 1023 down to CLIENT_RESVPORT_LOW first, as
 * bindresvport(3) does. SO_REUSEADDR lets one port serve connections to
 * several bricks (the address-port pairs differ); a pair in use makes
 * connect fail at once with EADDRNOTAVAIL, and the next port is tried.
 * When no port is free, or the process is not root, it connects from an
 * ephemeral port and says so once: a brick with allow-insecure on still
 * takes it, others refuse it with a message naming the reason.
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client.h"

#define CLIENT_RESVPORT_HIGH 1023
#define CLIENT_RESVPORT_LOW 512


/* Binds fd (family fam) to port on the wildcard address: 0 or -errno. */
static int
client_bind_port(int fd, int fam, uint16_t port)
{
    struct sockaddr_storage ss;
    socklen_t len;

    memset(&ss, 0, sizeof(ss));
    if (fam == AF_INET6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

        s6->sin6_family = AF_INET6;
        s6->sin6_addr = in6addr_any;
        s6->sin6_port = htons(port);
        len = sizeof(*s6);
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

        s4->sin_family = AF_INET;
        s4->sin_addr.s_addr = htonl(INADDR_ANY);
        s4->sin_port = htons(port);
        len = sizeof(*s4);
    }
    return bind(fd, (struct sockaddr *)&ss, len) == 0 ? 0 : -errno;
}


/* A new non-blocking socket for ai connecting (or connected) to it, from
 * port when port is not 0: the fd, or -errno (-EADDRINUSE and
 * -EADDRNOTAVAIL: try another port; -EACCES: not root). */
static int
client_try_connect(const struct addrinfo *ai, uint16_t port)
{
    int one = 1;
    int fd, rc;

    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (port != 0) {
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))
            != 0) {
            rc = -errno;
            goto fail;
        }
        rc = client_bind_port(fd, ai->ai_family, port);
        if (rc != 0)
            goto fail;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
        rc = -errno;
        goto fail;
    }
    return fd;
fail:
    close(fd);
    return rc;
}


int
client_connect_start(struct client_priv *priv, int *fd_out, vl_err_t *err)
{
    const struct client_conf *conf = &priv->conf;
    struct addrinfo hints, *res = NULL;
    char service[16];
    int fd = -1, rc;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    snprintf(service, sizeof(service), "%llu",
             (unsigned long long)conf->remote_port);
    rc = getaddrinfo(conf->remote_host, service, &hints, &res);
    if (rc != 0) {
        vl_err_set(err, "%s: %s", conf->remote_host,
                   rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
        return rc == EAI_SYSTEM ? -errno : -EHOSTUNREACH;
    }
    for (unsigned p = CLIENT_RESVPORT_HIGH; p >= CLIENT_RESVPORT_LOW; p--) {
        fd = client_try_connect(res, (uint16_t)p);
        if (fd >= 0 || (fd != -EADDRINUSE && fd != -EADDRNOTAVAIL))
            break;
    }
    if (fd == -EADDRINUSE || fd == -EADDRNOTAVAIL || fd == -EACCES
        || fd == -EPERM) {
        /* Said once per translator: every reconnect would repeat it. */
        if (!atomic_exchange(&priv->is_resvport_warned, true))
            vl_log(priv->xl, VL_LOG_WARNING,
                   "no privileged source port for %s:%llu (%s); connecting "
                   "from an ephemeral one, which the brick refuses unless "
                   "server.allow-insecure is on",
                   conf->remote_host, (unsigned long long)conf->remote_port,
                   fd == -EACCES || fd == -EPERM ? "not root"
                                                 : "all in use");
        fd = client_try_connect(res, 0);
    }
    if (fd < 0) {
        rc = fd;
        vl_err_set(err, "%s:%llu: %s", conf->remote_host,
                   (unsigned long long)conf->remote_port, strerror(-rc));
        fd = -1;
    } else {
        *fd_out = fd;
        rc = 0;
    }
    freeaddrinfo(res);
    return rc;
}
