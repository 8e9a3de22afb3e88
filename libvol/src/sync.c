/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sync: vl_sync_call, a blocking wind for worker threads.
 *
 * The waiter's state lives on its stack. done() records the answer; the
 * waiter is woken only once the request itself has been freed (and is off
 * the graph's pending list), so the caller may tear the graph down as soon
 * as vl_sync_call returns. The signal is sent holding the mutex, so the
 * waiter cannot return (and free the state) before the signaller is done
 * touching it.
 * Threads: must not run on a loop thread that the answer depends on.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "core.h"

/* One blocked caller. */
struct vl_sync_wait {
    pthread_mutex_t lock;    /* guards is_done */
    pthread_cond_t cond;     /* signalled when is_done becomes true */
    bool is_done;            /* the answer arrived */
    int status;              /* its status */
    struct vl_reply *reply;  /* borrowed; caller's OUT reply */
};


static void
vl_sync_done(vl_req_t *req, void *cookie)
{
    struct vl_sync_wait *w = cookie;

    /* Only this thread touches status and reply until is_done is set. */
    w->status = req->status;
    vl__reply_move(w->reply, &req->reply);
}


static void
vl_sync_destroyed(void *arg)
{
    struct vl_sync_wait *w = arg;

    pthread_mutex_lock(&w->lock);
    w->is_done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}


int
vl_sync_call(vl_xlator_t *to, vl_fop_t op, const union vl_fop_args *args,
             const struct vl_caller *caller, struct vl_reply *reply)
{
    struct vl_sync_wait w = {.reply = reply};
    vl_req_t *req;

    memset(reply, 0, sizeof(*reply));
    req = vl_req_new(to, op);
    if (req == NULL)
        return -ENOMEM;
    if (args != NULL)
        req->args = *args;
    if (caller != NULL)
        req->caller = *caller;
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.cond, NULL);
    vl__req_on_destroy(req, vl_sync_destroyed, &w);
    vl_wind(req, vl_sync_done, &w);
    pthread_mutex_lock(&w.lock);
    while (!w.is_done)
        pthread_cond_wait(&w.cond, &w.lock);
    pthread_mutex_unlock(&w.lock);
    pthread_cond_destroy(&w.cond);
    pthread_mutex_destroy(&w.lock);
    return w.status;
}
