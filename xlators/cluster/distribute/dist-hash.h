/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-hash: the name hash of cluster/distribute.
 *
 * MurmurHash3 x86_32 with seed 0 over the bytes of an entry name (no
 * terminating NUL). The function is part of the on-disk contract: a
 * directory's layout ranges are ranges of this hash, so changing it would
 * misplace every existing file. Pure; any thread.
 */
#ifndef DIST_HASH_H
#define DIST_HASH_H

#include <stddef.h>
#include <stdint.h>

uint32_t dist_hash_name(const char *name, size_t len);

#endif /* DIST_HASH_H */
