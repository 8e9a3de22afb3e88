/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-hash: the name hash of cluster/distribute.
 *
 * MurmurHash3 x86_32 with seed 0 over the bytes of an entry name (no
 * terminating NUL). The function is part of the on-disk contract: a
 * directory's layout ranges are ranges of this hash, so changing it would
 * misplace every existing file. Pure; any thread.
 *
 * Placement hashes a name's key: the name itself, except for the
 * temporary names rsync writes a file under before renaming it into
 * place, ".NAME.XXXXXX", whose key is NAME (GlusterFS's default
 * cluster.rsync-hash-regex, ^\.(.+)\.[^.]+$): the rename then lands on
 * the subvolume that already holds the data, with no link file.
 */
#ifndef DIST_HASH_H
#define DIST_HASH_H

#include <stddef.h>
#include <stdint.h>

uint32_t dist_hash_name(const char *name, size_t len);

/* The placement key of the len bytes of name: its length, and in *off
 * where it starts (0 and len for a name that is its own key). */
size_t dist_hash_key(const char *name, size_t len, size_t *off /* OUT */);

/* dist_hash_name of the placement key of the NUL-terminated name. */
uint32_t dist_hash_placement(const char *name);

#endif /* DIST_HASH_H */
