/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-heal-split: choosing a source for a split-brain (doc/replicate.md
 * "Split-brain resolution"). A kind of an object is in split-brain when
 * every copy is blamed by another for it: the records do not say which
 * copy is right, and a heal leaves it alone unless a rule says:
 *
 *   - a resolve key (mortar.heal.resolve.bigger-file, .latest-mtime,
 *     .source-brick.<child>): the administrator's choice for this object;
 *   - the favorite-child-policy option (size, ctime, mtime, majority):
 *     every heal of this client resolves by itself.
 *
 * Each kind's heal (rep-heal-data.c, -meta.c, -entry.c) calls
 * rep_heal_split right after reading the records under the kind's lock.
 * When the rule applies to the kind and picks one copy, the records are
 * rewritten under that lock: the chosen copy blames every other copy for
 * the kind, and the others' blame of it is taken back. The heal then
 * goes on as for any blamed copy (source: the chosen one) and clears the
 * records. A tie (equal sizes, equal times, no single majority) changes
 * nothing: "ambiguous". What was chosen and why is logged at INFO.
 *
 * Rules per kind: size (bigger-file) data of files only; mtime
 * (latest-mtime), ctime, majority data and metadata; source-brick every
 * kind. The arbiter holds no data: it is never chosen for data.
 * Majority: the copies that more than half of the copies (each itself
 * included) do not blame for the kind become the sources, when none of
 * them blames another of them (else: ambiguous).
 * Threads: a heal thread (rep-heal.c), blocking calls.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "rep-heal.h"

#define REP_SPLIT_WHY_MAX 512

static const char *const rep_heal_rule_names[] = {
    [REP_RULE_NONE] = "none",         [REP_RULE_SIZE] = "size",
    [REP_RULE_CTIME] = "ctime",       [REP_RULE_MTIME] = "mtime",
    [REP_RULE_MAJORITY] = "majority", [REP_RULE_SOURCE] = "source-brick",
};

static const char *const rep_heal_kind_names[] = {
    [REP_DATA] = "data", [REP_METADATA] = "metadata", [REP_ENTRY] = "entry",
};


int
rep_heal_rule_parse(vl_xlator_t *xl, const char *name,
                    struct rep_heal_opts *out)
{
    static const char source[] = "source-brick.";

    memset(out, 0, sizeof(*out));
    out->is_resolve_only = true;
    if (strcmp(name, "bigger-file") == 0) {
        out->rule = REP_RULE_SIZE;
        return 0;
    }
    if (strcmp(name, "latest-mtime") == 0) {
        out->rule = REP_RULE_MTIME;
        return 0;
    }
    if (strncmp(name, source, sizeof(source) - 1) == 0) {
        const char *child = name + sizeof(source) - 1;

        for (unsigned i = 0; i < xl->n_children; i++)
            if (strcmp(xl->children[i]->name, child) == 0) {
                out->rule = REP_RULE_SOURCE;
                out->rule_child = (int)i;
                return 0;
            }
    }
    return -EINVAL;
}


static bool
rep_heal_rule_covers(int rule, unsigned kind)
{
    switch (rule) {
    case REP_RULE_SIZE:
        return kind == REP_DATA;
    case REP_RULE_CTIME:
    case REP_RULE_MTIME:
    case REP_RULE_MAJORITY:
        return kind != REP_ENTRY;
    case REP_RULE_SOURCE:
        return true;
    default:
        return false;
    }
}


/* The value a rule compares, as a (seconds, nanoseconds) pair. */
static void
rep_heal_rule_value(int rule, const struct vl_iatt *ia, int64_t *hi,
                    uint32_t *lo)
{
    *lo = 0;
    if (rule == REP_RULE_SIZE) {
        *hi = (int64_t)ia->size;
    } else if (rule == REP_RULE_CTIME) {
        *hi = ia->ctime;
        *lo = ia->ctime_ns;
    } else {
        *hi = ia->mtime;
        *lo = ia->mtime_ns;
    }
}


static void
rep_heal_why_add(char *why, const char *fmt, const char *child, int64_t hi,
                 uint32_t lo)
{
    size_t len = strlen(why);

    if (len < REP_SPLIT_WHY_MAX)
        snprintf(why + len, REP_SPLIT_WHY_MAX - len, fmt, len > 0 ? " " : "",
                 child, hi, lo);
}


/* The largest value among cand: its copy, or -1 when several hold it. */
static int
rep_heal_choose_max(struct rep_heal *h, rep_mask_t cand, char *why)
{
    int best = -1;
    unsigned n_best = 0;
    int64_t bhi = 0;
    uint32_t blo = 0;

    for (unsigned i = 0; i < h->n; i++) {
        int64_t hi;
        uint32_t lo;

        if (!(cand & (1u << i)))
            continue;
        rep_heal_rule_value(h->rule, &h->ia[i], &hi, &lo);
        rep_heal_why_add(why, h->rule == REP_RULE_SIZE
                                  ? "%s%s=%" PRId64 "%.0" PRIu32
                                  : "%s%s=%" PRId64 ".%09" PRIu32,
                         h->xl->children[i]->name, hi, lo);
        if (best < 0 || hi > bhi || (hi == bhi && lo > blo)) {
            best = (int)i;
            bhi = hi;
            blo = lo;
            n_best = 1;
        } else if (hi == bhi && lo == blo) {
            n_best++;
        }
    }
    return n_best == 1 ? best : -1;
}


/* The copies of cand that more than half of the copies (each itself
 * included) do not blame for kind, when none of them blames another of
 * them (they agree: all are sources); else 0. */
static rep_mask_t
rep_heal_choose_majority(struct rep_heal *h, rep_mask_t cand, unsigned kind,
                         char *why)
{
    rep_mask_t most = 0;

    for (unsigned c = 0; c < h->n; c++) {
        unsigned votes = 1; /* itself */

        if (!(cand & (1u << c)))
            continue;
        for (unsigned j = 0; j < h->n; j++)
            if (j != c
                && rep_record_get(h->rec[j] + c * REP_RECORD_SIZE, kind)
                       <= 0)
                votes++;
        rep_heal_why_add(why, "%s%s unblamed by %" PRId64 "%.0" PRIu32,
                         h->xl->children[c]->name, (int64_t)votes, 0);
        if (votes * 2 > h->n)
            most |= 1u << c;
    }
    for (unsigned i = 0; i < h->n; i++)
        for (unsigned j = 0; j < h->n; j++)
            if (i != j && (most & (1u << i)) && (most & (1u << j))
                && rep_record_get(h->rec[i] + j * REP_RECORD_SIZE, kind) > 0)
                return 0;
    return most;
}


/* The copies h->rule picks for kind (*out, 0: a tie), or -errno. */
static int
rep_heal_split_choose(struct rep_heal *h, unsigned kind, rep_mask_t *out,
                      char *why)
{
    rep_mask_t cand = h->up; /* all: a resolve needs every child */
    int best, rc = 0;

    if (kind == REP_DATA)
        cand &= ~rep_priv(h->xl)->arbiter;
    /* The attributes now, under the kind's lock. */
    for (unsigned i = 0; i < h->n && rc == 0; i++)
        rc = rep_heal_stat(h, i, h->inode, &h->ia[i]);
    if (rc != 0)
        return rc;
    switch (h->rule) {
    case REP_RULE_SOURCE:
        if (!(cand & (1u << h->opts->rule_child))) {
            vl_log(h->xl, VL_LOG_ERROR, "split-brain resolution: %s is "
                   "the arbiter, it holds no data to be the source of",
                   h->xl->children[h->opts->rule_child]->name);
            return -EINVAL;
        }
        *out = 1u << h->opts->rule_child;
        snprintf(why, REP_SPLIT_WHY_MAX, "named by the administrator");
        return 0;
    case REP_RULE_MAJORITY:
        *out = rep_heal_choose_majority(h, cand, kind, why);
        return 0;
    default:
        best = rep_heal_choose_max(h, cand, why);
        *out = best >= 0 ? 1u << best : 0;
        return 0;
    }
}


/* Under kind's lock: the chosen copies blame every other copy for kind,
 * and the others' blame of them is taken back; h->rec follows. */
static int
rep_heal_split_rewrite(struct rep_heal *h, unsigned kind, rep_mask_t chosen)
{
    for (unsigned i = 0; i < h->n; i++) {
        uint8_t vals[REP_MAX_CHILDREN + 1][REP_RECORD_SIZE];
        bool is_src = (chosen & (1u << i)) != 0;
        bool is_any = false;
        int rc;

        memset(vals, 0, sizeof(vals));
        for (unsigned j = 0; j < h->n; j++) {
            bool is_jsrc = (chosen & (1u << j)) != 0;
            int32_t cur = rep_record_get(h->rec[i] + j * REP_RECORD_SIZE,
                                         kind);

            if (is_src && !is_jsrc && cur <= 0) {
                rep_record_set(vals[j], kind, 1 - cur);
                is_any = true;
            } else if (!is_src && is_jsrc && cur > 0) {
                rep_record_set(vals[j], kind, -cur);
                is_any = true;
            }
        }
        if (!is_any)
            continue;
        rc = rep_heal_records_add(h, i, h->inode,
                                  (const uint8_t(*)[REP_RECORD_SIZE])vals,
                                  h->rec[i]);
        if (rc != 0)
            return rc;
    }
    return 0;
}


/* The names of the copies of mask, for the log. */
static void
rep_heal_mask_names(struct rep_heal *h, rep_mask_t mask, char *out,
                    size_t len)
{
    size_t used = 0;

    out[0] = '\0';
    for (unsigned i = 0; i < h->n && used < len; i++)
        if (mask & (1u << i))
            used += (size_t)snprintf(out + used, len - used, "%s%s",
                                     used > 0 ? "," : "",
                                     h->xl->children[i]->name);
}


int
rep_heal_split(struct rep_heal *h, unsigned kind, enum rep_heal_verdict *v)
{
    struct rep_heal_opts *o = h->opts;
    char why[REP_SPLIT_WHY_MAX] = "";
    char names[REP_SPLIT_WHY_MAX];
    char gs[VL_GFID_STR_LEN];
    const char *by = o->rule != REP_RULE_NONE ? "resolve key"
                                              : "favorite-child-policy";
    rep_mask_t chosen = 0;
    int rc;

    if (*v != REP_HV_SPLIT && o->is_resolve_only) {
        /* A resolve key changes nothing that is not a split-brain. */
        if (*v != REP_HV_CLEAN)
            h->is_partial = true;
        return 1;
    }
    if (*v != REP_HV_SPLIT)
        return 0;
    if (!rep_heal_rule_covers(h->rule, kind))
        return 0;
    rc = rep_heal_split_choose(h, kind, &chosen, why);
    if (rc != 0) {
        if (rc == -EINVAL)
            o->err = rc; /* the answer: source-brick names the arbiter */
        return rc;
    }
    vl_gfid_to_str(&h->inode->gfid, gs);
    if (chosen == 0) {
        vl_log(h->xl, VL_LOG_INFO, "heal %s: %s split-brain: %s %s finds "
               "no single choice (%s): left alone", gs,
               rep_heal_kind_names[kind], by, rep_heal_rule_names[h->rule],
               why);
        o->ambiguous |= 1u << kind;
        return 0;
    }
    rep_heal_mask_names(h, chosen, names, sizeof(names));
    vl_log(h->xl, VL_LOG_INFO, "heal %s: %s split-brain resolved by %s %s: "
           "source %s (%s)", gs, rep_heal_kind_names[kind], by,
           rep_heal_rule_names[h->rule], names, why);
    rc = rep_heal_split_rewrite(h, kind, chosen);
    if (rc != 0)
        return rc;
    o->resolved |= 1u << kind;
    *v = rep_heal_decide(h, kind);
    return 0;
}
