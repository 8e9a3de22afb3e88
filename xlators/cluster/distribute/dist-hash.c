/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-hash: MurmurHash3 x86_32 (Austin Appleby's public-domain algorithm,
 * written from its description), seed 0. Blocks are read little-endian
 * byte by byte so the result does not depend on the host's byte order or
 * alignment.
 */
#include "config.h"

#include <string.h>

#include "dist-hash.h"

#define DIST_HASH_C1 0xcc9e2d51u
#define DIST_HASH_C2 0x1b873593u


static uint32_t
dist_hash_rotl(uint32_t x, unsigned r)
{
    return (x << r) | (x >> (32 - r));
}


static uint32_t
dist_hash_mix_k(uint32_t k)
{
    k *= DIST_HASH_C1;
    k = dist_hash_rotl(k, 15);
    return k * DIST_HASH_C2;
}


uint32_t
dist_hash_name(const char *name, size_t len)
{
    const unsigned char *p = (const unsigned char *)name;
    size_t n_blocks = len / 4;
    uint32_t h = 0;
    uint32_t k = 0;

    for (size_t i = 0; i < n_blocks; i++, p += 4) {
        k = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
            | (uint32_t)p[3] << 24;
        h ^= dist_hash_mix_k(k);
        h = dist_hash_rotl(h, 13);
        h = h * 5 + 0xe6546b64u;
    }
    /* The 0..3 trailing bytes. */
    k = 0;
    switch (len & 3) {
    case 3:
        k ^= (uint32_t)p[2] << 16;
        /* fall through */
    case 2:
        k ^= (uint32_t)p[1] << 8;
        /* fall through */
    case 1:
        k ^= (uint32_t)p[0];
        h ^= dist_hash_mix_k(k);
        break;
    default:
        break;
    }
    /* Finalisation: avalanche the bits. */
    h ^= (uint32_t)len;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}


/* ^\.(.+)\.[^.]+$ by hand (the key is the group): a leading dot, a last
 * dot after at least one more byte, and at least one byte after it. */
size_t
dist_hash_key(const char *name, size_t len, size_t *off)
{
    const char *last;

    *off = 0;
    if (len < 4 || name[0] != '.')
        return len;
    last = memrchr(name, '.', len);
    if (last == NULL || last < name + 2 || last == name + len - 1)
        return len;
    *off = 1;
    return (size_t)(last - name) - 1;
}


uint32_t
dist_hash_placement(const char *name)
{
    size_t off;
    size_t len = dist_hash_key(name, strlen(name), &off);

    return dist_hash_name(name + off, len);
}
