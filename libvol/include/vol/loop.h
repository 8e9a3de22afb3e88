/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * loop: an epoll event loop run by a configurable number of threads, with
 * timers and cross-thread posting.
 *
 * Every registered descriptor is one-shot: its callback runs on one thread
 * at a time and the descriptor is disarmed until it is re-armed with
 * vl_io_modify. This lets several threads share one loop without two of
 * them reading the same socket at once. Re-arm only from inside the
 * callback, or from another thread when no event can be pending (the
 * descriptor was left disarmed): re-arming an armed descriptor can run
 * its callback on two threads at once. Use separate registrations (e.g.
 * a dup'ed fd for output) when two threads must arm independently.
 *
 * The exception: a registration whose events include EPOLLET is
 * edge-triggered and never one-shot. It needs no re-arming, and its
 * callback may run on several threads at once (one per edge), so the
 * callback must serialize itself (rpc's connection input does: one
 * thread holds the parser, the others only flag it to read again).
 * vl_io_del of such a registration waits for every running callback
 * except the caller's own.
 *
 * Callbacks must not block (no disk I/O, no waiting on a condition): hand
 * such work to a worker (io-threads) or use vl_sync_* on a worker thread.
 */
#ifndef VOL_LOOP_H
#define VOL_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

typedef struct vl_loop vl_loop_t;
typedef struct vl_io vl_io_t;
typedef struct vl_timer vl_timer_t;

/* events are EPOLLIN / EPOLLOUT (ERR and HUP always reported). */
typedef void vl_io_cb(vl_io_t *io, int fd, uint32_t events, void *arg);
typedef void vl_timer_cb(void *arg);
typedef void vl_task_cb(void *arg);

/* NULL on failure (errno set). */
vl_loop_t *vl_loop_new(unsigned n_threads);
/* Starts the threads; returns 0 or -errno. */
int vl_loop_start(vl_loop_t *loop);
/* Stops and joins the threads (not from a loop thread). Pending timers
 * are cancelled without running; posted tasks not yet run are run. */
void vl_loop_stop(vl_loop_t *loop);
void vl_loop_free(vl_loop_t *loop);
/* Runs one iteration on the calling thread, waiting at most timeout_ms
 * (-1 forever); for unit tests that drive a loop without threads.
 * Returns the number of callbacks run. */
int vl_loop_run_once(vl_loop_t *loop, int timeout_ms);
bool vl_loop_on_loop_thread(vl_loop_t *loop);

int vl_io_add(vl_loop_t *loop, int fd, uint32_t events, vl_io_cb *cb,
              void *arg, vl_io_t **out /* OUT */);
/* Re-arms with new events; 0 or -errno. */
int vl_io_modify(vl_io_t *io, uint32_t events);
/* Deregisters and frees io. When it returns, cb is not running and will
 * not run again, unless called from within cb itself (then cb finishes
 * normally and must not touch io afterwards). Does not close fd. */
void vl_io_del(vl_io_t *io);

/* One-shot timer after ms milliseconds; NULL on ENOMEM. */
vl_timer_t *vl_timer_add(vl_loop_t *loop, uint64_t ms, vl_timer_cb *cb,
                         void *arg);
/* True if the timer was cancelled before it ran (cb will never run);
 * false if it already ran or is running. Frees the timer either way once
 * it has run. */
bool vl_timer_cancel(vl_timer_t *timer);
/* Note on lifetime (libvol): the loop frees a timer right after its
 * callback returns, so a handle is valid only until the callback
 * returns; the callback (or whoever it tells) must forget the handle.
 * Cancelling from inside the callback, or while it runs on another
 * thread, returns false and is safe as long as the callback cannot
 * return meanwhile: cancel while holding a lock the callback takes
 * before it forgets the handle. */

/* Runs cb(arg) soon on a loop thread; 0 or -ENOMEM. */
int vl_loop_post(vl_loop_t *loop, vl_task_cb *cb, void *arg);

#endif /* VOL_LOOP_H */
