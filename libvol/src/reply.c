/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reply: what a request's answer owns (buffer ref, directory entries,
 * strings), how it is cleared and moved between requests.
 *
 * Threads: a reply belongs to one request; no locking.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "core.h"


void
vl_dirent_list_clear(struct vl_dirent_list *list)
{
    size_t i;

    for (i = 0; i < list->n; i++)
        vl_free(list->ents[i].name);
    vl_free(list->ents);
    memset(list, 0, sizeof(*list));
}


int
vl_dirent_list_add(struct vl_dirent_list *list, uint64_t ino, int64_t off,
                   uint32_t type, const char *name,
                   const struct vl_iatt *iatt)
{
    struct vl_dirent *ent;
    char *copy;

    if (list->n == list->cap) {
        size_t cap = list->cap == 0 ? 16 : list->cap * 2;
        struct vl_dirent *ents;

        if (list->ents == NULL)
            ents = vl_malloc(NULL, cap * sizeof(*ents), VL_MT_DIRENT);
        else
            ents = vl_realloc(list->ents, cap * sizeof(*ents));
        if (ents == NULL)
            return -ENOMEM;
        list->ents = ents;
        list->cap = cap;
    }
    copy = vl_strdup(NULL, name, VL_MT_DIRENT);
    if (copy == NULL)
        return -ENOMEM;
    ent = &list->ents[list->n++];
    memset(ent, 0, sizeof(*ent));
    ent->ino = ino;
    ent->off = off;
    ent->type = type;
    ent->name = copy;
    if (iatt != NULL) {
        ent->has_iatt = true;
        ent->iatt = *iatt;
    }
    return 0;
}


void
vl_reply_clear(struct vl_reply *reply)
{
    vl_buf_unref(reply->buf);
    vl_dirent_list_clear(&reply->entries);
    vl_free(reply->link);
    vl_free(reply->xattr);
    vl_free(reply->xop_values);
    vl_free(reply->sums);
    memset(reply, 0, sizeof(*reply));
}


void
vl__reply_move(struct vl_reply *dst, struct vl_reply *src)
{
    if (dst == src)
        return;
    vl_reply_clear(dst);
    *dst = *src;
    memset(src, 0, sizeof(*src));
}


void
vl_reply_move(vl_req_t *dst, vl_req_t *src)
{
    vl__reply_move(&dst->reply, &src->reply);
}
