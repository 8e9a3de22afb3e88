/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * upcall.h: between upcall.c (the class, directory leases) and
 * upcall-inval.c (cache invalidation). Private to features/upcall.
 */
#ifndef XL_UPCALL_H
#define XL_UPCALL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "vol/vol.h"

enum up_mem_type {
    UP_MT_MISC = 0,
    UP_MT_LEASE,
    UP_MT_WATCH,
};

/* The registry of which client looked at which GFID (upcall-inval.c). */
struct up_inval;

/* The class's registry (upcall.c). */
struct up_inval *up_inval_of(vl_xlator_t *xl);

int up_inval_new(vl_xlator_t *xl, struct up_inval **out /* OUT */);
void up_inval_free(struct up_inval *inv);
/* Switched off, the registry forgets every client. */
void up_inval_configure(struct up_inval *inv, bool is_enabled,
                        uint64_t timeout_s, uint64_t limit);
void up_inval_client_gone(struct up_inval *inv, uint64_t id);
void up_inval_dump(struct up_inval *inv, FILE *out);

/* Before req is wound: notes its client as a watcher of the GFIDs it
 * addresses that are known already. */
void up_inval_before(struct up_inval *inv, const vl_req_t *req);
/* After the child r of req answered: notes what req's client now caches,
 * and (r succeeded and changed something) tells every other interested
 * client, before returning. Runs before req's own unwind. */
void up_inval_after(struct up_inval *inv, const vl_req_t *req,
                    const vl_req_t *r);
/* The fop of every op that is not an entry op: winds, then
 * up_inval_after, then answers. */
void up_inval_fop(vl_xlator_t *xl, vl_req_t *req);

#endif /* XL_UPCALL_H */
