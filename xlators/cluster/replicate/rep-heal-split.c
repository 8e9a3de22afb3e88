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
 * A GFID split-brain (a name of a directory held as different objects)
 * is decided per name (rep_heal_split_name), for the directory's entry
 * heal (rep-heal-entry.c): a resolve key "<rule>/<name>" on the
 * directory, or the policy; a directory among the objects only by
 * source-brick.
 * Threads: a heal thread (rep-heal.c), blocking calls.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
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


/* "<rule>/<name>": the rule for one name of a directory (its GFID
 * split-brain); the name is one path component. */
static int
rep_heal_rule_parse_name(vl_xlator_t *xl, const char *key,
                         struct rep_heal_opts *out)
{
    const char *slash = strchr(key, '/');
    const char *n = slash + 1;
    char rule[REP_SPLIT_WHY_MAX];
    int rc;

    if ((size_t)(slash - key) >= sizeof(rule) || *n == '\0'
        || strchr(n, '/') != NULL || strcmp(n, ".") == 0
        || strcmp(n, "..") == 0 || strlen(n) > NAME_MAX)
        return -EINVAL;
    memcpy(rule, key, (size_t)(slash - key));
    rule[slash - key] = '\0';
    rc = rep_heal_rule_parse(xl, rule, out);
    if (rc == 0)
        out->name = n;
    return rc;
}


int
rep_heal_rule_parse(vl_xlator_t *xl, const char *name,
                    struct rep_heal_opts *out)
{
    static const char source[] = "source-brick.";

    if (strchr(name, '/') != NULL)
        return rep_heal_rule_parse_name(xl, name, out);
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


/* The largest value of rule among cand (ia[i]: copy i's attributes):
 * its copy, or -1 when several hold it. */
static int
rep_heal_choose_max(struct rep_heal *h, int rule, rep_mask_t cand,
                    const struct vl_iatt *const *ia, char *why)
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
        rep_heal_rule_value(rule, ia[i], &hi, &lo);
        rep_heal_why_add(why, rule == REP_RULE_SIZE
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
    const struct vl_iatt *ia[REP_MAX_CHILDREN];
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
        for (unsigned i = 0; i < h->n; i++)
            ia[i] = &h->ia[i];
        best = rep_heal_choose_max(h, h->rule, cand, ia, why);
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


/* ---- a name with several GFIDs or types (a GFID split-brain) ---- */

static bool
rep_heal_same_object(const struct vl_iatt *a, const struct vl_iatt *b)
{
    return vl_gfid_equal(&a->gfid, &b->gfid)
           && (a->mode & S_IFMT) == (b->mode & S_IFMT);
}


/* The copy of cand whose object more than half of all copies hold (cand
 * counts the holders), or -1. */
static int
rep_heal_name_majority(struct rep_heal *h, rep_mask_t cand,
                       const struct vl_iatt *const *ia, char *why)
{
    for (unsigned c = 0; c < h->n; c++) {
        unsigned votes = 0;
        char gc[VL_GFID_STR_LEN];
        size_t len;

        if (!(cand & (1u << c)))
            continue;
        for (unsigned j = 0; j < h->n; j++)
            if ((cand & (1u << j)) && rep_heal_same_object(ia[c], ia[j]))
                votes++;
        len = strlen(why);
        if (len < REP_SPLIT_WHY_MAX)
            snprintf(why + len, REP_SPLIT_WHY_MAX - len,
                     "%s%s holds %.8s (%u of %u copies)",
                     len > 0 ? " " : "", h->xl->children[c]->name,
                     vl_gfid_to_str(&ia[c]->gfid, gc), votes, h->n);
        if (votes * 2 > h->n)
            return (int)c;
    }
    return -1;
}


int
rep_heal_split_name(struct rep_heal *h, const char *name,
                    const struct vl_iatt *const *ia, rep_mask_t cand,
                    int rule, int rule_child, int *chosen)
{
    rep_mask_t arbiter = rep_priv(h->xl)->arbiter;
    const char *by = h->opts->name != NULL ? "resolve key"
                                           : "favorite-child-policy";
    char why[REP_SPLIT_WHY_MAX] = "";
    char gs[VL_GFID_STR_LEN], gw[VL_GFID_STR_LEN];
    bool has_dir = false, has_other = false;

    *chosen = REP_NAME_UNCOVERED;
    for (unsigned i = 0; i < h->n; i++)
        if (cand & (1u << i)) {
            has_dir |= S_ISDIR(ia[i]->mode);
            has_other |= !S_ISREG(ia[i]->mode);
        }
    vl_gfid_to_str(&h->inode->gfid, gs);
    switch (rule) {
    case REP_RULE_SOURCE:
        if (arbiter & (1u << rule_child)) {
            vl_log(h->xl, VL_LOG_ERROR, "split-brain resolution of %s: %s "
                   "is the arbiter, it holds no data to be the source of",
                   name, h->xl->children[rule_child]->name);
            return -EINVAL;
        }
        if (cand & (1u << rule_child))
            *chosen = rule_child;
        else
            *chosen = REP_NAME_TIE; /* it has no copy of the name */
        snprintf(why, sizeof(why), "named by the administrator");
        break;
    case REP_RULE_MAJORITY:
        if (!has_dir) {
            int best = rep_heal_name_majority(h, cand, ia, why);

            *chosen = best >= 0 ? best : REP_NAME_TIE;
        }
        break;
    case REP_RULE_SIZE:
    case REP_RULE_MTIME:
    case REP_RULE_CTIME:
        /* The arbiter's copy holds no data and its times do not follow
         * the writes: it is never the one compared. */
        if (!has_dir && (rule != REP_RULE_SIZE || !has_other)) {
            int best = rep_heal_choose_max(h, rule, cand & ~arbiter, ia, why);

            *chosen = best >= 0 ? best : REP_NAME_TIE;
        }
        break;
    default:
        return 0;
    }
    if (*chosen == REP_NAME_UNCOVERED) {
        vl_log(h->xl, VL_LOG_INFO, "heal %s: name %s has another GFID or "
               "type on some copies: %s %s does not cover it (%s): left "
               "alone", gs, name, by, rep_heal_rule_names[rule],
               has_dir ? "a directory: only source-brick resolves it"
                       : "not every copy is a regular file");
    } else if (*chosen == REP_NAME_TIE) {
        vl_log(h->xl, VL_LOG_INFO, "heal %s: name %s has another GFID or "
               "type on some copies: %s %s finds no single choice (%s): "
               "left alone", gs, name, by, rep_heal_rule_names[rule], why);
    } else {
        vl_log(h->xl, VL_LOG_INFO, "heal %s: name %s: GFID split-brain "
               "resolved by %s %s: %s's %s kept, the others removed (%s)",
               gs, name, by, rep_heal_rule_names[rule],
               h->xl->children[*chosen]->name,
               vl_gfid_to_str(&ia[*chosen]->gfid, gw), why);
    }
    return 0;
}
