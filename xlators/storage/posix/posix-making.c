/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix-making: the names this brick is creating right now, so that a
 * lookup never "heals" an object that a create, mknod, symlink or mkdir
 * of this brick is still giving its GFID.
 *
 * A creating fop makes the object first (mkdirat, openat O_EXCL...) and
 * sets its GFID (and a directory's layout before it) a few system calls
 * later. A lookup of that name in between used to see an object without
 * GFID, take it for one made on the brick by hand and give it a random
 * GFID; the creating fop's own GFID then failed with EEXIST and it undid
 * the object (doc/distribute.md, "Open race"). Now the creating fop
 * registers (parent GFID, name) here for that span, and a lookup that
 * finds a GFID-less object under a registered name waits for the fop to
 * end and reads the object again: it then sees the finished object, or no
 * object if the fop undid it. Objects made by hand are never registered
 * and are healed as before.
 *
 * Cost for the creating fop: two uncontended mutex sections, no system
 * call (a node on its stack, linked into a list that holds one entry per
 * creating fop in flight, i.e. at most the brick's fop threads).
 *
 * State:   posix_priv.making (list), making_lock, making_cond.
 * Threads: any fop thread; making_lock guards the list and n_waiters,
 *          and is never held across a system call.
 */
#include "config.h"

#include <string.h>

#include "posix.h"

void (*posix_lookup_test_after_wait)(vl_xlator_t *xl);


void
posix_making_init(struct posix_priv *priv)
{
    pthread_mutex_init(&priv->making_lock, NULL);
    pthread_cond_init(&priv->making_cond, NULL);
    priv->making = NULL;
    priv->n_making_waiters = 0;
}


void
posix_making_fini(struct posix_priv *priv)
{
    pthread_cond_destroy(&priv->making_cond);
    pthread_mutex_destroy(&priv->making_lock);
}


void
posix_making_begin(vl_xlator_t *xl, struct posix_making *node,
                   const vl_gfid_t *parent, const char *name)
{
    struct posix_priv *priv = posix_priv(xl);

    node->parent = *parent;
    node->name = name;
    pthread_mutex_lock(&priv->making_lock);
    node->next = priv->making;
    priv->making = node;
    pthread_mutex_unlock(&priv->making_lock);
}


void
posix_making_end(vl_xlator_t *xl, struct posix_making *node)
{
    struct posix_priv *priv = posix_priv(xl);
    struct posix_making **pp;

    pthread_mutex_lock(&priv->making_lock);
    for (pp = &priv->making; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == node) {
            *pp = node->next;
            break;
        }
    }
    node->next = NULL;
    /* Broadcast only when a lookup waits: the common create pays no
     * futex call. */
    if (priv->n_making_waiters > 0)
        pthread_cond_broadcast(&priv->making_cond);
    pthread_mutex_unlock(&priv->making_lock);
}


static bool
posix_making_has_locked(const struct posix_priv *priv,
                        const vl_gfid_t *parent, const char *name)
{
    for (const struct posix_making *m = priv->making; m != NULL;
         m = m->next) {
        if (vl_gfid_equal(&m->parent, parent) && strcmp(m->name, name) == 0)
            return true;
    }
    return false;
}


bool
posix_making_wait(vl_xlator_t *xl, const vl_gfid_t *parent,
                  const char *name)
{
    struct posix_priv *priv = posix_priv(xl);
    bool has_waited = false;

    pthread_mutex_lock(&priv->making_lock);
    while (posix_making_has_locked(priv, parent, name)) {
        has_waited = true;
        priv->n_making_waiters++;
        pthread_cond_wait(&priv->making_cond, &priv->making_lock);
        priv->n_making_waiters--;
    }
    pthread_mutex_unlock(&priv->making_lock);
    return has_waited;
}
