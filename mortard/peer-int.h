/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * peer-int: declarations shared by peer.c, peer-cmd.c, peer-vols.c and
 * txn.c only. Threads: as the callers say (md_state.lock held unless
 * noted).
 */
#ifndef MORTARD_PEER_INT_H
#define MORTARD_PEER_INT_H

#include "mgmt.h"
#include "mortard.h"

#define MD_PEER_TIMEOUT_MS 10000     /* hello, lock, stage */
#define MD_COMMIT_TIMEOUT_MS 90000   /* commit may start bricks */

struct md_peer *md_peer_find_uuid(struct md_state *st, const char *uuid);
struct md_peer *md_peer_add(struct md_state *st, const char *uuid,
                            const char *host, uint16_t port);
void md_peer_remove(struct md_state *st, struct md_peer *victim);
int md_peers_save(struct md_state *st, vl_err_t *err);

/* Membership generation (peer.c; st->lock). */
uint64_t md_members_gen_get(void);
void md_members_gen_set(uint64_t gen);
/* Fills m with this node and its peers (owned copies: xdr_free). */
int md_members_fill(struct md_state *st, mgmt_members *m);
/* Adopts m as the membership if its generation is newer than ours and it
 * lists this node; saves the peers file. */
int md_members_adopt(struct md_state *st, const char *from,
                     const mgmt_members *m);

/* Catch-up (peer-vols.c). Records as deleted (tombstone) every volume
 * this node had and no longer has; cheap when nothing changed. */
void md_sync_track(struct md_state *st);
/* Fills msg with this node's volumes, tombstones and membership (owned
 * copies: free with xdr_free(xdr_mgmt_sync_msg)). */
int md_sync_msg_fill(struct md_state *st, mgmt_sync_msg *msg);
/* Applies a peer's state: deletes the volumes it has tombstones for,
 * installs newer definitions (never one this node has a tombstone for),
 * adopts a newer membership. */
void md_sync_apply(struct md_state *st, const mgmt_sync_msg *msg);

/* Exchanges state with HOST:PORT (PEER_SYNC): sends this node's and
 * applies the answer. is_locked: the caller holds st->lock (otherwise it
 * is taken around the local parts only). */
int md_vols_exchange(struct md_state *st, const char *host, uint16_t port,
                     bool is_locked, vl_err_t *err);
/* Fills msg with this node's volumes (free with md_vols_msg_clear). */
int md_vols_msg_fill(struct md_state *st, mgmt_vols_msg *msg);
void md_vols_msg_clear(mgmt_vols_msg *msg);
/* Installs the definitions of msg newer than this node's. */
void md_vols_install(struct md_state *st, const mgmt_vols_msg *msg);

/* Server side of MGMT_PROC_PEER_TXN stage/commit (worker thread). */
void md_txn_serve(struct md_state *st, const mgmt_txn_req *req,
                  mgmt_status_rsp *rsp, struct md_sbuf *data);

#endif /* MORTARD_PEER_INT_H */
