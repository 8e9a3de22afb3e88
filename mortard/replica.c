/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * replica: the pure rules of replicated volumes (issue 21), shared by
 * create, add-brick, remove-brick, the store, volgen and volume info.
 *
 * Sets: the bricks of a volume with replica count R form sets of R
 * consecutive bricks in the order given (GlusterFS's rule: the brick
 * order defines the sets). Set names: distribute stores its children's
 * names in link files, so a set's cluster/replicate must keep its name
 * for the life of the set, whatever sets are removed before it or
 * however its count changes. While R never changed, bricks come and go
 * in whole sets and brick ids are never reused, so the bricks of a set
 * are brick<m*R> .. brick<m*R+R-1> and m names the set
 * (`<vol>-replicate-<m>`). A replica count change (replica-change.c)
 * breaks that rule, so it first pins every set's number into its bricks
 * (stored as brick.N.set) and the volume's next-set; sets added later
 * take next-set. Set numbers are never reused. The store checks all
 * this at load (md_vol_sets_check).
 * Grammar: the words between the volume name and the first brick of
 * create and add-brick (replica N, arbiter, transport, ...).
 * Options: a replicate option value the volume's sets cannot take.
 * Threads: any; functions of their arguments only.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mortard.h"


/* A count word: 1..999 in decimal, else 0. */
static unsigned
md_parse_count(const char *s)
{
    char *end;
    unsigned long v;

    if (s == NULL || s[0] < '0' || s[0] > '9')
        return 0;
    v = strtoul(s, &end, 10);
    if (*end != '\0' || v > 999)
        return 0;
    return (unsigned)v;
}


int
md_brick_args_parse(int argc, char **argv, int first, bool is_create,
                    struct md_brick_args *out, vl_err_t *err)
{
    int i;

    memset(out, 0, sizeof(*out));
    out->is_usage = true;
    if (argc > first && strcmp(argv[argc - 1], "force") == 0) {
        out->is_force = true;
        argc--;
    }
    for (i = first; i < argc && strchr(argv[i], ':') == NULL; i++) {
        const char *w = argv[i];

        if (strcmp(w, "replica") == 0 && out->replica == 0 &&
            i + 1 < argc) {
            out->replica = md_parse_count(argv[i + 1]);
            if (out->replica == 0) {
                vl_err_set(err, "replica count must be a number, not "
                           "'%s'", argv[i + 1]);
                return -EINVAL;
            }
            i++;
        } else if (strcmp(w, "arbiter") == 0 && out->arbiter == 0 &&
                   i + 1 < argc) {
            if (md_parse_count(argv[i + 1]) != 1) {
                out->is_usage = false;
                vl_err_set(err, "For arbiter configuration, replica count "
                           "must be 3 and arbiter count must be 1. The 3rd "
                           "brick of the replica will be the arbiter");
                return -EINVAL;
            }
            out->arbiter = 1;
            i++;
        } else if (strcmp(w, "thin-arbiter") == 0) {
            out->is_usage = false;
            vl_err_set(err, "%s volumes are not supported yet", w);
            return -ENOTSUP;
        } else if (strcmp(w, "disperse") == 0 ||
                   strcmp(w, "disperse-data") == 0 ||
                   strcmp(w, "redundancy") == 0 ||
                   strcmp(w, "stripe") == 0) {
            out->is_usage = false;
            vl_err_set(err, "%s volumes need cluster translators that are "
                       "not built yet", w);
            return -ENOTSUP;
        } else if (is_create && strcmp(w, "transport") == 0 &&
                   i + 1 < argc) {
            if (strcmp(argv[i + 1], "tcp") != 0) {
                out->is_usage = false;
                vl_err_set(err, "transport %s is not supported (only tcp)",
                           argv[i + 1]);
                return -ENOTSUP;
            }
            i++;
        } else {
            err->msg[0] = '\0'; /* just the usage */
            return -EINVAL;
        }
    }
    out->first = i;
    out->n_bricks = argc - i;
    if (out->n_bricks <= 0) {
        err->msg[0] = '\0';
        return -EINVAL;
    }
    if (out->replica == 1) {
        vl_err_set(err, "replica count should be greater than 1");
        return -EINVAL;
    }
    if (out->arbiter != 0 && out->replica != 3) {
        out->is_usage = false;
        vl_err_set(err, "For arbiter configuration, replica count must be "
                   "3 and arbiter count must be 1. The 3rd brick of the "
                   "replica will be the arbiter");
        return -EINVAL;
    }
    if (out->replica > MD_REPLICA_MAX) {
        vl_err_set(err, "replica count %u is more than %d (the copies "
                   "cluster/replicate keeps at most)", out->replica,
                   MD_REPLICA_MAX);
        return -EINVAL;
    }
    out->is_usage = false;
    return 0;
}


int
md_replica_same_server(char *const *hosts, const bool *is_local, size_t n,
                       unsigned replica, vl_err_t *err)
{
    for (size_t i = 0; replica > 1 && i < n; i++)
        for (size_t j = i - i % replica; j < i; j++) {
            bool is_same = strcmp(hosts[i], hosts[j]) == 0 ||
                           (is_local[i] && is_local[j]);

            if (!is_same)
                continue;
            vl_err_set(err, "Multiple bricks of a replicate volume are "
                       "present on the same server. This setup is not "
                       "optimal. Bricks should be on different nodes to "
                       "have best fault tolerant configuration. Use "
                       "'force' at the end of the command if you want to "
                       "override this behavior. ");
            return -EPERM;
        }
    return 0;
}


unsigned
md_vol_replica(const struct md_volume *vol)
{
    return vol->replica_count > 1 ? vol->replica_count : 1;
}


size_t
md_vol_n_sets(const struct md_volume *vol)
{
    return vol->n_bricks / md_vol_replica(vol);
}


/* N of "brick<N>", or -1 for another id. */
static long
md_brick_id_num(const char *id)
{
    char *end;
    unsigned long v;

    if (strncmp(id, "brick", 5) != 0 || id[5] < '0' || id[5] > '9')
        return -1;
    v = strtoul(id + 5, &end, 10);
    if (*end != '\0' || v > UINT32_MAX)
        return -1;
    return (long)v;
}


unsigned
md_vol_set_num(const struct md_volume *vol, size_t set)
{
    unsigned r = md_vol_replica(vol);
    const struct md_brick *first = &vol->bricks[set * r];
    long k;

    if (first->has_set_num)
        return first->set_num;
    k = md_brick_id_num(first->id);
    return k < 0 ? (unsigned)set : (unsigned)k / r;
}


void
md_vol_set_name(const struct md_volume *vol, size_t set, char *buf,
                size_t len)
{
    snprintf(buf, len, "%s-replicate-%u", vol->name,
             md_vol_set_num(vol, set));
}


/* The set starting at brick i follows the id rule (nothing pinned). */
static int
md_vol_set_check_ids(const struct md_volume *vol, size_t i, vl_err_t *err)
{
    unsigned r = md_vol_replica(vol);
    long first = md_brick_id_num(vol->bricks[i].id);

    for (size_t j = i; j < i + r; j++) {
        long k = md_brick_id_num(vol->bricks[j].id);

        if (k < 0 || first < 0 || first % r != 0 ||
            k != first + (long)(j - i) || vol->bricks[j].has_set_num) {
            vl_err_set(err, "brick.%zu (%s) breaks the replica sets: set "
                       "members must be brick<m*%u> .. brick<m*%u+%u> in "
                       "order, or all carry their set number", j,
                       vol->bricks[j].id, r, r, r - 1);
            return -EINVAL;
        }
    }
    return 0;
}


int
md_vol_sets_check(const struct md_volume *vol, vl_err_t *err)
{
    unsigned r = md_vol_replica(vol);
    size_t n_sets;

    if (r == 1) {
        for (size_t i = 0; i < vol->n_bricks; i++)
            if (vol->bricks[i].has_set_num) {
                vl_err_set(err, "brick.%zu has a set number in a volume "
                           "without replica sets", i);
                return -EINVAL;
            }
        return 0;
    }
    if (r > MD_REPLICA_MAX || vol->n_bricks % r != 0) {
        vl_err_set(err, "%zu bricks do not form sets of replica-count %u",
                   vol->n_bricks, r);
        return -EINVAL;
    }
    n_sets = vol->n_bricks / r;
    for (size_t s = 0; s < n_sets; s++) {
        const struct md_brick *first = &vol->bricks[s * r];
        unsigned m = md_vol_set_num(vol, s);

        if (!first->has_set_num && md_vol_set_check_ids(vol, s * r, err))
            return -EINVAL;
        for (size_t j = s * r; first->has_set_num && j < s * r + r; j++)
            if (!vol->bricks[j].has_set_num ||
                vol->bricks[j].set_num != m) {
                vl_err_set(err, "brick.%zu (%s) is in replica set %zu "
                           "whose number is %u, but says %s%u", j,
                           vol->bricks[j].id, s, m,
                           vol->bricks[j].has_set_num ? "" : "nothing: ",
                           vol->bricks[j].set_num);
                return -EINVAL;
            }
        if (vol->next_set != 0 && m >= vol->next_set) {
            vl_err_set(err, "replica set number %u is not below next-set "
                       "%u", m, vol->next_set);
            return -EINVAL;
        }
        for (size_t t = 0; t < s; t++)
            if (md_vol_set_num(vol, t) == m) {
                vl_err_set(err, "replica sets %zu and %zu have the same "
                           "number %u", t, s, m);
                return -EINVAL;
            }
    }
    return 0;
}


unsigned
md_vol_sets_pin(struct md_volume *vol)
{
    unsigned r = md_vol_replica(vol), next = vol->next_set;

    /* Under the id rule every set ever made had m < ceil(next-brick/R). */
    if (next == 0)
        next = (vol->next_brick + r - 1) / r;
    for (size_t s = 0; s < md_vol_n_sets(vol); s++) {
        unsigned m = md_vol_set_num(vol, s);

        for (size_t j = s * r; j < s * r + r; j++) {
            vol->bricks[j].set_num = m;
            vol->bricks[j].has_set_num = true;
        }
        if (m >= next)
            next = m + 1;
    }
    vol->next_set = next;
    return next;
}


void
md_vol_sets_number_new(struct md_volume *vol, struct md_brick *nb,
                       size_t n)
{
    unsigned r = md_vol_replica(vol);

    if (vol->next_set == 0 || r == 1)
        return; /* the id rule names them */
    for (size_t i = 0; i < n; i++) {
        nb[i].has_set_num = true;
        nb[i].set_num = vol->next_set;
        if (i % r == r - 1)
            vol->next_set++;
    }
}


const char *
md_vol_type_str(const struct md_volume *vol)
{
    if (md_vol_replica(vol) == 1)
        return "Distribute";
    return md_vol_n_sets(vol) > 1 ? "Distributed-Replicate" : "Replicate";
}


int
md_vol_type_num(const struct md_volume *vol)
{
    /* GlusterFS's numbers: GF_CLUSTER_TYPE_REPLICATE is 2, and its CLI
     * adds GF_CLUSTER_TYPE_MAX - 1 (5) for the distributed variant. */
    if (md_vol_replica(vol) == 1)
        return 0;
    return md_vol_n_sets(vol) > 1 ? 7 : 2;
}


int
md_replica_opt_check(const struct md_volume *vol, const char *canon,
                     const char *value, vl_err_t *err)
{
    unsigned long n;
    char *end;

    /* replicate refuses to start with more than its children (every
     * client's graph would fail): refused here. A distribute volume has
     * no replicate, the value waits there unused. */
    if (strcmp(canon, "replicate.quorum-count") != 0 ||
        md_vol_replica(vol) == 1)
        return 0;
    n = strtoul(value, &end, 10);
    if (*end == '\0' && n > md_vol_replica(vol)) {
        vl_err_set(err, "cluster.quorum-count %lu is more than the replica "
                   "count %u of volume %s", n, md_vol_replica(vol),
                   vol->name);
        return -EINVAL;
    }
    return 0;
}


bool
md_brick_is_arbiter(const struct md_volume *vol, const struct md_brick *b)
{
    unsigned r = md_vol_replica(vol);
    size_t i = (size_t)(b - vol->bricks);

    return vol->arbiter_count != 0 && r > 1 && i < vol->n_bricks &&
           i % r == r - 1;
}
