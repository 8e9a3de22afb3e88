/* SPDX-License-Identifier: GPL-2.0-or-later */
/* builtin: the in-tree translator classes, registered at startup. */
#ifndef MORTAR_XLATORS_BUILTIN_H
#define MORTAR_XLATORS_BUILTIN_H

#include "vol/xlator.h"

extern const vl_xlator_class_t xl_storage_posix;
extern const vl_xlator_class_t xl_features_locks;
extern const vl_xlator_class_t xl_features_upcall;
extern const vl_xlator_class_t xl_features_arbiter;
extern const vl_xlator_class_t xl_features_access;
extern const vl_xlator_class_t xl_performance_io_threads;
extern const vl_xlator_class_t xl_performance_nl_cache;
extern const vl_xlator_class_t xl_performance_md_cache;

/* md-cache's effective timeout in ms while it relies on the bricks'
 * cache invalidation (mount/fuse then gives the kernel the same entry
 * and attribute timeouts), or -1 when it does not. xl is an instance of
 * xl_performance_md_cache. */
int64_t vl_md_cache_inval_timeout_ms(vl_xlator_t *xl);
extern const vl_xlator_class_t xl_performance_quick_read;
extern const vl_xlator_class_t xl_performance_read_ahead;
extern const vl_xlator_class_t xl_performance_readdir_ahead;
extern const vl_xlator_class_t xl_performance_write_behind;
extern const vl_xlator_class_t xl_debug_trace;
extern const vl_xlator_class_t xl_debug_io_stats;
extern const vl_xlator_class_t xl_protocol_client;
extern const vl_xlator_class_t xl_protocol_server;
extern const vl_xlator_class_t xl_mount_fuse;
extern const vl_xlator_class_t xl_cluster_distribute;
extern const vl_xlator_class_t xl_cluster_replicate;

/* Registers every class above; 0 or -errno. Idempotent. */
int vl_xlators_register_builtin(void);

#endif
