/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vl-test: helpers for unit tests of libvol and of translators.
 *
 * The mock leaf "debug/mock" records every request it receives and does
 * not answer it (unless its option auto-answer is on). A test pops the
 * oldest request, fills req->reply as the fop needs, and answers it with
 * vl_unwind(req, status) itself:
 *
 *   vl_err_t err;
 *   struct vl_test_graph *g = vl_test_graph_new(
 *       "volume m\n type debug/mock\nend-volume\n"
 *       "volume ra\n type performance/read-ahead\n subvolumes m\n"
 *       "end-volume\n", &err);
 *   vl_xlator_t *mock = vl_test_graph_xl(g, "m");
 *   struct vl_test_result res = {0};
 *   vl_req_t *req = vl_req_new(g->graph->top, VL_FOP_READ);
 *   ... fill VL_ARGS(req, read) ...
 *   vl_test_wind(req, &res);
 *   assert_int_equal(vl_mock_pending(mock), 1);
 *   vl_req_t *r = vl_mock_pop(mock);
 *   r->reply.count = 0;
 *   vl_unwind(r, 0);
 *   assert_true(res.is_done);
 *   vl_test_result_clear(&res);
 *   vl_test_graph_free(g);
 *
 * The graph runs on a loop with 0 threads: nothing runs behind the test's
 * back; call vl_loop_run_once(g->loop, ms) to run timers, posted tasks and
 * descriptors. Mock options:
 *   auto-answer (bool, off): answer every request at once with auto-status
 *   auto-status (int, 0):    status for auto-answer (0 or -errno)
 */
#ifndef VL_TEST_H
#define VL_TEST_H

#include <stdbool.h>
#include <stddef.h>

#include "vol/vol.h"

extern const vl_xlator_class_t vl_test_mock_class;

/* Registers debug/mock (idempotent). Returns 0 or -errno. */
int vl_test_register_mock(void);

/* Requests waiting in a mock (received and not popped). */
size_t vl_mock_pending(vl_xlator_t *mock);
/* Requests a mock has received in total (popped or not). */
size_t vl_mock_received(vl_xlator_t *mock);
/* Of those, how many were fop op. */
size_t vl_mock_received_op(vl_xlator_t *mock, vl_fop_t op);
/* The oldest waiting request without removing it, or NULL. */
vl_req_t *vl_mock_peek(vl_xlator_t *mock);
/* Removes and returns the oldest waiting request (NULL if none). The test
 * now owns the duty to answer it with vl_unwind. */
vl_req_t *vl_mock_pop(vl_xlator_t *mock);
/* Pops every waiting request and answers it with status; returns how
 * many. Requests arriving meanwhile (from done callbacks) are answered
 * too. */
size_t vl_mock_reply_all(vl_xlator_t *mock, int status);

/* A graph built from text on its own 0-thread loop. */
struct vl_test_graph {
    vl_loop_t *loop;    /* owned; 0 threads, drive with vl_loop_run_once */
    vl_volfile_t *vf;   /* owned; the parsed text */
    vl_graph_t *graph;  /* owned; built, initialised and activated */
};

/* Registers the mock, parses, builds, inits and activates. NULL with err
 * set on any failure (parse, build, init, ENOMEM). */
struct vl_test_graph *vl_test_graph_new(const char *volfile_text,
                                        vl_err_t *err /* OUT */);
/* Answers requests still waiting in mocks with -ECANCELED, then frees the
 * graph, the volfile and the loop. NULL is allowed. */
void vl_test_graph_free(struct vl_test_graph *g);
/* The translator called name, or NULL. */
vl_xlator_t *vl_test_graph_xl(struct vl_test_graph *g, const char *name);

/* Result of a request wound with vl_test_wind. Zero it before use. */
struct vl_test_result {
    bool is_done;          /* done() ran */
    int n_done;            /* how many times done() ran (must be 1) */
    int status;            /* req->status at done() */
    struct vl_reply reply; /* moved from the request; owned */
};

/* Winds req (from vl_req_new) with a done() that fills res. */
void vl_test_wind(vl_req_t *req, struct vl_test_result *res);
/* Frees what res->reply owns and zeroes res. */
void vl_test_result_clear(struct vl_test_result *res);

/* Conformance of a translator class: ABI and type set, fop table usable,
 * every option has a key, a doc sentence, a field size that matches its
 * type, ENUM values, DEPRECATED a replaced_by, min <= max, and a default
 * (if any) that parses and lies in range. Returns 0 or -EINVAL with err
 * naming the class and the first problem. */
int vl_test_check_class(const vl_xlator_class_t *cls, vl_err_t *err /* OUT */);

#endif /* VL_TEST_H */
