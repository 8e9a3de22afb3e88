/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * server-squash: which identity claims of a client the brick believes.
 *
 * Every call carries the caller's uid, gid, groups and pid (the
 * credential, doc/wire-protocol.md). The brick believes them only from a
 * trusted connection: one from a privileged source port (< 1024), which
 * only root on the client's host can bind (the NFS AUTH_SYS rule,
 * GlusterFS's rpc-auth-allow-insecure off), or, with server.ssl, one
 * whose verified certificate auth.ssl-allow names. Other connections are
 * refused at SETVOLUME unless allow-insecure is on; then their claims
 * are believed as before, except VL_CALLER_PID_INTERNAL, which they
 * lose (pid 0), so no squash exemption or access bypass comes from an
 * unprivileged process.
 *
 * Squashing (GlusterFS's server.root-squash, server.all-squash,
 * server.anonuid, server.anongid): root-squash maps uid 0 and gid 0,
 * primary and supplementary, to anonuid/anongid; all-squash maps every
 * uid and gid, and leaves no supplementary groups. Mortar's own
 * requests (VL_CALLER_PID_INTERNAL from a trusted connection: heal,
 * rebalance) are exempt, as GlusterFS exempts its daemons' pids.
 */
#include "config.h"

#include "server.h"


bool
server_port_is_privileged(uint16_t port)
{
    /* Port 0 is no source port a real connection has. */
    return port != 0 && port < 1024;
}


void
server_caller_squash(const struct server_conf *conf, bool is_trusted,
                     struct vl_caller *caller)
{
    uint32_t anonuid = (uint32_t)conf->anonuid;
    uint32_t anongid = (uint32_t)conf->anongid;

    if (caller->pid == VL_CALLER_PID_INTERNAL) {
        if (is_trusted)
            return;
        caller->pid = 0;
    }
    if (caller->n_groups > VL_MAX_GROUPS)
        caller->n_groups = VL_MAX_GROUPS;
    if (conf->is_all_squash) {
        caller->uid = anonuid;
        caller->gid = anongid;
        caller->n_groups = 0;
        return;
    }
    if (!conf->is_root_squash)
        return;
    if (caller->uid == 0)
        caller->uid = anonuid;
    if (caller->gid == 0)
        caller->gid = anongid;
    for (uint32_t i = 0; i < caller->n_groups; i++)
        if (caller->groups[i] == 0)
            caller->groups[i] = anongid;
}
