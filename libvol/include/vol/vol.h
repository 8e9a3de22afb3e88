/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vol: everything a translator or a program linking libvol needs. */
#ifndef VOL_VOL_H
#define VOL_VOL_H

#include "vol/buf.h"
#include "vol/common.h"
#include "vol/fd.h"
#include "vol/fop-args.h"
#include "vol/fop-stats.h"
#include "vol/graph.h"
#include "vol/inode.h"
#include "vol/log.h"
#include "vol/loop.h"
#include "vol/mem.h"
#include "vol/metrics.h"
#include "vol/options.h"
#include "vol/req.h"
#include "vol/sync.h"
#include "vol/volfile.h"
#include "vol/xlator.h"

/* Process-wide initialisation: log to stderr at INFO, read
 * VL_TEST_FAIL_ALLOC_AT. Idempotent. */
void vl_global_init(void);

#endif /* VOL_VOL_H */
