/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * record: the ONC-RPC record marking parser (RFC 5531 section 11).
 *
 * A record is one or more fragments, each preceded by a 4-byte big-endian
 * mark: the top bit says "last fragment", the low 31 bits the length. The
 * parser holds no socket: conn.c feeds it bytes from a staging buffer, or
 * reads large fragment bodies straight into the record's vl_buf through
 * vrpc_rm_direct, so bulk data is read from the socket once and used in
 * place (write payloads on the brick, read data on the client).
 *
 * Input is hostile: the running record size is checked against max before
 * anything is allocated, so a mark claiming 2 GiB costs nothing. A record
 * under max still allocates its full length at its mark, so every
 * parser's allocation is also counted in one process-wide total
 * (rm_buffered) until the record completes or is dropped; a mark that
 * would take the total over vrpc_set_buffered_max's cap is refused
 * (-ENOBUFS) and the owner closes that connection, so many connections
 * each holding a large incomplete record cannot exhaust memory (issue 23).
 * Threads: one parser belongs to one connection's reader (one at a time);
 * the total is atomic.
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "vrpc.h"

/* Bytes allocated for incomplete records by every parser of the process,
 * and the cap on it. */
static atomic_size_t rm_buffered;
static atomic_size_t rm_buffered_max = VRPC_BUFFERED_MAX;


void
vrpc_set_buffered_max(size_t max)
{
    atomic_store(&rm_buffered_max, max);
}


size_t
vrpc_buffered_max(void)
{
    return atomic_load(&rm_buffered_max);
}


size_t
vrpc_buffered_bytes(void)
{
    return atomic_load(&rm_buffered);
}


/* Takes rm's record out of the process total (it completed or goes). */
static void
rm_uncharge(struct vrpc_rm *rm)
{
    if (rm->charged > 0)
        atomic_fetch_sub(&rm_buffered, rm->charged);
    rm->charged = 0;
}


void
vrpc_rm_init(struct vrpc_rm *rm, size_t max)
{
    memset(rm, 0, sizeof(*rm));
    rm->max = max;
}


void
vrpc_rm_clear(struct vrpc_rm *rm)
{
    rm_uncharge(rm);
    vl_buf_unref(rm->rec);
    rm->rec = NULL;
    rm->len = 0;
    rm->n_mark = 0;
    rm->in_frag = false;
    rm->frag_left = 0;
}


/* Makes room for frag_len more bytes in the record. Single-fragment
 * records (what Mortar sends) allocate exactly once; further fragments
 * move the record into a larger buffer. */
static int
rm_grow(struct vrpc_rm *rm, size_t frag_len)
{
    size_t want = rm->len + frag_len;
    size_t alloc = want > 0 ? want : 1;
    size_t total;
    vl_buf_t *nb;

    if (rm->rec != NULL && rm->rec->size >= want)
        return 0;
    /* Charge before allocating: the new buffer, the old one still held. */
    total = atomic_fetch_add(&rm_buffered, alloc) + alloc;
    if (total > atomic_load(&rm_buffered_max)) {
        atomic_fetch_sub(&rm_buffered, alloc);
        rm->refused = want;
        return -ENOBUFS;
    }
    nb = vl_buf_new(alloc);
    if (nb == NULL) {
        atomic_fetch_sub(&rm_buffered, alloc);
        return -ENOMEM;
    }
    if (rm->rec != NULL) {
        memcpy(nb->data, rm->rec->data, rm->len);
        vl_buf_unref(rm->rec);
    }
    rm_uncharge(rm);
    rm->charged = alloc;
    rm->rec = nb;
    return 0;
}


/* A complete mark was read: validate it and start the fragment. */
static int
rm_mark_done(struct vrpc_rm *rm)
{
    uint32_t v = ((uint32_t)rm->mark[0] << 24) | ((uint32_t)rm->mark[1] << 16)
                 | ((uint32_t)rm->mark[2] << 8) | rm->mark[3];
    size_t frag_len = v & ~VRPC_LAST_FRAG;
    int rc;

    rm->n_mark = 0;
    rm->is_last = (v & VRPC_LAST_FRAG) != 0;
    if (frag_len > rm->max || rm->len + frag_len > rm->max) {
        rm->refused = rm->len + frag_len;
        return -EMSGSIZE;
    }
    rc = rm_grow(rm, frag_len);
    if (rc != 0)
        return rc;
    rm->frag_left = frag_len;
    rm->in_frag = true;
    return 0;
}


/* The fragment body is complete; returns 1 if that ends the record. */
static int
rm_frag_done(struct vrpc_rm *rm, vl_buf_t **out, size_t *out_len)
{
    rm->in_frag = false;
    if (!rm->is_last)
        return 0;
    *out = rm->rec;
    *out_len = rm->len;
    rm_uncharge(rm); /* complete: the owner's now */
    rm->n_done++;
    rm->rec = NULL;
    rm->len = 0;
    return 1;
}


int
vrpc_rm_feed(struct vrpc_rm *rm, const char *data, size_t len, size_t *used,
             vl_buf_t **out, size_t *out_len)
{
    size_t pos = 0;
    int rc = 0;

    while (pos < len) {
        if (!rm->in_frag) {
            rm->mark[rm->n_mark++] = (uint8_t)data[pos++];
            if (rm->n_mark < 4)
                continue;
            rc = rm_mark_done(rm);
            if (rc != 0)
                break;
            /* An empty fragment may still end a record. */
            if (rm->frag_left == 0) {
                rc = rm_frag_done(rm, out, out_len);
                if (rc != 0)
                    break;
            }
            continue;
        }
        size_t n = len - pos < rm->frag_left ? len - pos : rm->frag_left;

        memcpy(rm->rec->data + rm->len, data + pos, n);
        rm->len += n;
        rm->frag_left -= n;
        pos += n;
        if (rm->frag_left == 0) {
            rc = rm_frag_done(rm, out, out_len);
            if (rc != 0)
                break;
        }
    }
    *used = pos;
    return rc;
}


size_t
vrpc_rm_direct(struct vrpc_rm *rm, char **ptr)
{
    if (!rm->in_frag || rm->frag_left == 0)
        return 0;
    *ptr = rm->rec->data + rm->len;
    return rm->frag_left;
}


int
vrpc_rm_direct_done(struct vrpc_rm *rm, size_t n, vl_buf_t **out,
                    size_t *out_len)
{
    rm->len += n;
    rm->frag_left -= n;
    if (rm->frag_left > 0)
        return 0;
    return rm_frag_done(rm, out, out_len);
}
