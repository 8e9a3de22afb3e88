/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heal-union: what `volume heal VOL status` counts once per replica set
 * (cmd-heal.c): the entries left (the bricks' heal indexes), the objects
 * in split-brain and those waiting for a brick (the lists of the nodes'
 * self-heal daemons, cmd-split-brain.c).
 *
 * Every good copy of an object lists it (its brick's index; each node's
 * daemon lists what it found under its bricks whose index names it), so
 * a sum over bricks or over daemons counts an object once per copy or
 * per node. A set counts the union of its bricks' lists by GFID. A set
 * with a brick whose GFIDs were not all named (a longer list than one
 * reply or the daemon's bound holds, an older node answering shown
 * names) counts its largest list instead: exact when one copy lists
 * every object the others do (a brick down, returned or replaced), a
 * lower bound otherwise; never a double count. A brick whose list was
 * not read (status != 0: its node not answering, not listed yet) is
 * left out of its set.
 * Threads: pure functions of their arguments.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mortard.h"


static int
md_heal_name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}


/* Is name a bare GFID (not a shown name: a path, <gfid:UUID>)? */
static bool
md_heal_is_gfid(const char *name)
{
    vl_gfid_t g;

    return strlen(name) == VL_GFID_STR_LEN - 1 && vl_gfid_parse(name, &g) == 0;
}


/* The objects of the set hbs[0..n-1]; v has room for every name. */
static uint64_t
md_heal_set_union(const struct md_heal_brick *hbs, size_t n,
                  const char **v)
{
    uint64_t max = 0, total = 0;
    size_t k = 0;
    bool is_partial = false;

    for (size_t i = 0; i < n; i++) {
        const struct md_heal_brick *hb = &hbs[i];

        if (hb->status != 0)
            continue;
        if (hb->n > max)
            max = hb->n;
        if (hb->n_names < hb->n)
            is_partial = true;
        for (size_t j = 0; j < hb->n_names && !is_partial; j++) {
            if (!md_heal_is_gfid(hb->names[j]))
                is_partial = true;
            else
                v[k++] = hb->names[j];
        }
    }
    if (is_partial)
        return max;
    if (k > 1)
        qsort(v, k, sizeof(*v), md_heal_name_cmp);
    for (size_t i = 0; i < k; i++)
        total += i == 0 || strcmp(v[i - 1], v[i]) != 0;
    return total;
}


uint64_t
md_heal_union_count(const struct md_heal_brick *hbs, size_t n,
                    unsigned replica)
{
    uint64_t total = 0;
    size_t most = 0;
    const char **v;

    if (replica == 0)
        replica = 1;
    for (size_t i = 0; i < n; i++)
        most += hbs[i].status == 0 ? hbs[i].n_names : 0;
    v = malloc((most + 1) * sizeof(*v));
    for (size_t first = 0; first < n; first += replica) {
        size_t k = n - first < replica ? n - first : replica;

        uint64_t max = 0;

        if (v != NULL) {
            total += md_heal_set_union(&hbs[first], k, v);
            continue;
        }
        /* No memory for the union: the largest list, the lower bound. */
        for (size_t i = first; i < first + k; i++)
            if (hbs[i].status == 0 && hbs[i].n > max)
                max = hbs[i].n;
        total += max;
    }
    free(v);
    return total;
}
