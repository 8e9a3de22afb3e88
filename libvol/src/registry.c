/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * registry: the process's list of translator classes, by type name.
 *
 * Threads: a mutex guards the list; lookups happen at graph build only.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "core.h"

#define VL_REGISTRY_MAX 256

static pthread_mutex_t vl_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static const vl_xlator_class_t *vl_reg[VL_REGISTRY_MAX]; /* vl_reg_lock */
static size_t vl_reg_n;                                   /* vl_reg_lock */


int
vl_registry_add(const vl_xlator_class_t *cls)
{
    size_t i;
    int rc = 0;

    if (cls == NULL || cls->type == NULL || cls->abi != VL_XLATOR_ABI)
        return -EINVAL;
    pthread_mutex_lock(&vl_reg_lock);
    for (i = 0; i < vl_reg_n; i++) {
        if (strcmp(vl_reg[i]->type, cls->type) != 0)
            continue;
        /* Registering the same class again is harmless. */
        rc = vl_reg[i] == cls ? 0 : -EEXIST;
        goto out;
    }
    if (vl_reg_n == VL_REGISTRY_MAX) {
        rc = -ENOSPC;
        goto out;
    }
    vl_reg[vl_reg_n++] = cls;
out:
    pthread_mutex_unlock(&vl_reg_lock);
    return rc;
}


const vl_xlator_class_t *
vl_registry_find(const char *type)
{
    const vl_xlator_class_t *cls = NULL;
    size_t i;

    pthread_mutex_lock(&vl_reg_lock);
    for (i = 0; i < vl_reg_n; i++) {
        if (strcmp(vl_reg[i]->type, type) == 0
            || (vl_reg[i]->type_alias != NULL
                && strcmp(vl_reg[i]->type_alias, type) == 0)) {
            cls = vl_reg[i];
            break;
        }
    }
    pthread_mutex_unlock(&vl_reg_lock);
    return cls;
}


void
vl_registry_foreach(void (*fn)(const vl_xlator_class_t *cls, void *arg),
                    void *arg)
{
    const vl_xlator_class_t *copy[VL_REGISTRY_MAX];
    size_t n;
    size_t i;

    /* Call fn without the lock so it may itself use the registry. */
    pthread_mutex_lock(&vl_reg_lock);
    n = vl_reg_n;
    memcpy(copy, vl_reg, n * sizeof(copy[0]));
    pthread_mutex_unlock(&vl_reg_lock);
    for (i = 0; i < n; i++)
        fn(copy[i], arg);
}
