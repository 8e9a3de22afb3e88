/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-heal-test: helpers of the self-heal unit tests (rep-heal-test.c).
 */
#ifndef REP_HEAL_TEST_H
#define REP_HEAL_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "rep-heal.h"
#include "rep-test.h"

/* A file made through replicate in dir (t_file: the root), holding
 * data; its inode (a ref for the caller). */
vl_inode_t *t_file_at(struct t *t, vl_inode_t *dir, const char *name,
                      const char *data);
vl_inode_t *t_file(struct t *t, const char *name, const char *data);
/* Writes data at off through replicate (a write batch ended by flush). */
void t_write(struct t *t, vl_inode_t *inode, off_t off, const char *data);
/* GETXATTR of key (a heal key): 0 with the answer in out, or -errno. */
int t_heal_key(struct t *t, vl_inode_t *inode, const char *key, char *out,
               size_t len);
int t_heal(struct t *t, vl_inode_t *inode, char *out, size_t len);
/* The key's (t_expect_heal: mortar.heal's) answer is want. */
void t_expect_key(struct t *t, vl_inode_t *inode, const char *key,
                  const char *want);
void t_expect_heal(struct t *t, vl_inode_t *inode, const char *want);
/* Does any copy of gfid hold a replicate record? */
bool t_any_record(struct t *t, const vl_gfid_t *gfid);
/* Counter kind k of record key on brick i's copy of gfid (0: none). */
int32_t t_rec(struct t *t, int i, const vl_gfid_t *gfid, const char *key,
              int k);
/* Plants on brick i a record key with counter kind = v. */
void t_plant(struct t *t, int i, const vl_gfid_t *gfid, const char *key,
             int kind, int32_t v);

#endif /* REP_HEAL_TEST_H */
