/* SPDX-License-Identifier: GPL-2.0-or-later */
/* builtin: registers the in-tree translator classes with libvol. */
#include "config.h"

#include <errno.h>
#include <pthread.h>

#include "builtin.h"

static const vl_xlator_class_t *const builtin_classes[] = {
    &xl_storage_posix,   &xl_features_locks,  &xl_features_upcall,
    &xl_features_arbiter, &xl_features_access,
    &xl_performance_io_threads,
    &xl_debug_trace,     &xl_debug_io_stats,
    &xl_protocol_client, &xl_protocol_server,
    &xl_mount_fuse,      &xl_cluster_distribute,
    &xl_cluster_replicate,
    &xl_performance_quick_read,
    &xl_performance_read_ahead,
    &xl_performance_readdir_ahead,
    &xl_performance_write_behind,
    &xl_performance_nl_cache,
    &xl_performance_md_cache,
};

static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;
static int builtin_rc;


static void
builtin_register_once(void)
{
    for (size_t i = 0; i < VL_ARRAY_SIZE(builtin_classes); i++) {
        int rc = vl_registry_add(builtin_classes[i]);

        if (rc != 0 && rc != -EEXIST) {
            builtin_rc = rc;
            return;
        }
    }
}


int
vl_xlators_register_builtin(void)
{
    pthread_once(&builtin_once, builtin_register_once);
    return builtin_rc;
}
