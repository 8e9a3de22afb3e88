/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sync: blocking wrappers for worker threads (heal, rebalance, tests).
 * Never call them on an event loop thread: they wait for the answer.
 */
#ifndef VOL_SYNC_H
#define VOL_SYNC_H

#include "vol/req.h"
#include "vol/xlator.h"

/* Winds fop op with args (copied into the request; their contents stay
 * borrowed) and caller (NULL = root) into translator to, waits for the
 * answer, and moves the reply into *reply (cleared first; the caller
 * clears it after use). Returns the status: 0 or -errno. */
int vl_sync_call(vl_xlator_t *to, vl_fop_t op, const union vl_fop_args *args,
                 const struct vl_caller *caller,
                 struct vl_reply *reply /* OUT */);

#endif /* VOL_SYNC_H */
