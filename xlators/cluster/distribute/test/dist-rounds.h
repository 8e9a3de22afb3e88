/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-rounds: four debug/mock children under cluster/distribute and
 * helpers that answer a request's rounds one at a time, noting which
 * children each round reached (test-dist-rounds, test-dist-rename).
 */
#ifndef MORTAR_DIST_ROUNDS_H
#define MORTAR_DIST_ROUNDS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dist.h"
#include "vl-test.h"

#define RD_N 4

struct rd {
    struct vl_test_graph *g;  /* four mocks under dht */
    vl_xlator_t *dht;         /* distribute */
    vl_xlator_t *m[RD_N];     /* subvolume i */
    vl_inode_t *root;         /* ref on the root inode */
};

/* One round: what each mock received (fop of its first request, count). */
struct rd_round {
    uint64_t mask;            /* mocks with a request waiting */
    vl_fop_t op[RD_N];        /* fop of the first request per mock */
    unsigned n[RD_N];         /* requests per mock */
};

/* How the test answers a request: status, and the iatt to reply. */
typedef int rd_answer_fn(int mock, vl_req_t *r, struct vl_iatt *ia);


int rd_setup(void **state);
int rd_teardown(void **state);
/* A name in the root that hashes to subvolume want. */
void rd_name_on(struct rd *t, int want, const char *prefix, char *buf,
                size_t len);
/* Requests waiting in the mocks. */
size_t rd_pending(struct rd *t);
/* Waits for the next round (or the end of the request), notes what is
 * waiting and answers it with fn. false when res finished first. */
bool rd_round(struct rd *t, struct vl_test_result *res, rd_answer_fn *fn,
              struct rd_round *out /* OUT */);
/* Waits for res: answered once, nothing left in the mocks. */
void rd_wait_done(struct rd *t, struct vl_test_result *res);
/* Answers 0 with an empty reply. */
int rd_ok(int mock, vl_req_t *r, struct vl_iatt *ia);
/* A file inode whose ctx says: data on cached, name hashed to hashed. */
vl_inode_t *rd_file(struct rd *t, int cached, int hashed);
/* Puts mock's range of the default layout (generation 1, COMMITTED) in
 * r's reply, as a lookup asking for the layout xattr gets it. */
void rd_reply_layout(int mock, vl_req_t *r);
/* Answers a nameless LOOKUP of a directory (a parent's layout read
 * again) as the directory gfid, with mock's range when the layout is
 * asked for; counts the reads (mock 0's) in *reads. */
int rd_answer_dir_read(int mock, vl_req_t *r, struct vl_iatt *ia,
                       const vl_gfid_t *gfid, unsigned *reads);

#endif /* MORTAR_DIST_ROUNDS_H */
