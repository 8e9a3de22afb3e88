/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-heal: the self-heal of one object (doc/replicate.md "Self-heal"):
 * when it runs, which copies are sources, the locks, and the records it
 * reads and clears. What is copied is in rep-heal-data.c (file content),
 * rep-heal-entry.c (the names of a directory) and rep-heal-meta.c (mode,
 * owner, times, xattrs).
 *
 * Two ways in:
 *   - on access: a lookup that reads a record blaming a copy for a kind
 *     whose option (data-self-heal, metadata-self-heal, entry-self-heal)
 *     is on starts a heal of that object in the background, at most
 *     background-self-heal-count at once (over it, or when the object is
 *     already being healed, nothing starts: the next lookup tries again);
 *     a named lookup whose parent directory has up copies that are not
 *     good starts the directory's heal the same way (rep_heal_parent_hint);
 *     the lookup itself answers at once from the good copies;
 *   - GETXATTR of REP_XATTR_HEAL ("mortar.heal") on an inode heals it now,
 *     whatever the options, and answers "healed", "clean", "split-brain"
 *     or "pending" (a copy is down or the object is missing on one: its
 *     directory's heal creates it); an error (EIO) when a step failed.
 *     A call with size 0 (a length probe) answers the longest length
 *     and heals nothing. The self-heal daemon uses this key;
 *   - REP_XATTR_HEAL_FULL ("mortar.heal.full"): the same, and a directory
 *     whose records blame nothing has its names merged (rep-heal-entry.c;
 *     the daemon's full crawl);
 *   - a key under REP_XATTR_RESOLVE ("mortar.heal.resolve.<rule>"):
 *     resolves a split-brain of the object by that rule and heals it,
 *     touching nothing else (rep-heal-split.c); answers "healed",
 *     "not-split-brain", "ambiguous", "split-brain" or "pending";
 *     "mortar.heal.resolve.<rule>/<name>" on a directory resolves the
 *     GFID split-brain of that name (rep-heal-entry.c).
 *
 * A heal needs two children up, and heals between those (issue 22): the
 * records of a down copy are unknown, so only the up copies' records
 * choose. A source is an up copy no up copy blames: any change it
 * missed that reached an up copy left that copy's blame, so a source
 * holds all the up copies hold (what reached only the down copies is
 * theirs to give when they are back: their records blame the up ones
 * and stay). When every up copy is blamed, or dirty without blame asks
 * for a comparison, the only copy that could prove a source is down:
 * nothing is guessed, the heal answers "pending" (REP_HV_WAIT). The
 * records against the down copies stay: the sources' untouched, and a
 * healed sink, now holding a source's content, is made to blame each
 * down copy a source blames before its own blame is cleared, so the
 * index entries stay on every up brick until the down copy is healed
 * too (rep_heal_records_clear). Resolving a split-brain by a key needs
 * every child up. Data and entries are healed before metadata (the
 * copy of the content changes the sinks' times; the metadata heal sets
 * them last). Sources: the copies no other copy blames for the kind
 * (rep_heal_pick); dirty without blame means "compare"; every copy
 * blamed is a split-brain, logged and left alone unless a resolve key or
 * favorite-child-policy picks a copy (rep-heal-split.c). Heals of one
 * object are serialized, across clients and the daemon, by an inodelk in
 * the domain "<name>.self-heal" (a background heal does not wait for it);
 * each kind then takes the lock its transactions take.
 *
 * Per inode/fd/request: nothing of its own (a heal job carries a ref on
 * the inode; the GETXATTR request is answered by the heal thread).
 * Threads: one detached thread per heal, using vl_sync_call; running
 * heals are counted and the graph's PARENT_DOWN waits for them.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rep-heal.h"
#include "vol/sync.h"

/* Lock owners of heals: "heal" in the high half. */
#define REP_HEAL_LK_OWNER_TAG (0x6865616cULL << 32)

/* A heal to run: an object, and the request to answer (NULL in the
 * background). */
struct rep_heal_job {
    vl_xlator_t *xl;
    vl_inode_t *inode;          /* ref */
    vl_req_t *req;              /* GETXATTR to answer, or NULL */
    struct rep_heal_opts opts;  /* what the key asked (zeros: a heal) */
    struct rep_heal_job *next;  /* ctl->running list */
};

/* Per translator (priv->heal). */
struct rep_heal_ctl {
    pthread_mutex_t lock;         /* guards the fields marked (lock) */
    pthread_cond_t idle;          /* signalled when n_running drops */
    unsigned n_running;           /* (lock) heal threads alive */
    unsigned n_bg;                /* (lock) background heals of them */
    bool is_stopping;             /* (lock) PARENT_DOWN: start nothing */
    struct rep_heal_job *running; /* (lock) jobs being healed */
    atomic_bool stop;             /* readable without the lock */
    char *heal_domain;            /* owned: "<name>.self-heal", the lock
                                     domain that serializes the heals of
                                     one object (all clients, daemon) */
    atomic_uint_fast64_t n_owner;
    atomic_uint_fast64_t n_started, n_done, n_failed, n_bytes, n_entries;
    pthread_mutex_t rate_lock;    /* guards rate_next_ns */
    uint64_t rate_next_ns;        /* heal-max-rate: the earliest start of
                                     the next write (CLOCK_MONOTONIC) */
    atomic_uint_fast64_t n_throttled_ms; /* time writes waited for it */
    atomic_uint_fast64_t n_granular;   /* entry heals from the records */
    atomic_uint_fast64_t n_listed;     /* entry heals that listed */
};

static const uint8_t rep_heal_zero[REP_RECORD_SIZE];


static struct rep_heal_ctl *
rep_heal_ctl(vl_xlator_t *xl)
{
    return rep_priv(xl)->heal;
}


/* ---- throttle ---- */

uint64_t
rep_heal_rate_wait(uint64_t *next_ns, uint64_t now_ns, uint64_t n,
                   uint64_t rate)
{
    uint64_t start, cost;

    if (rate == 0)
        return 0;
    /* An idle throttle does not bank credit beyond one write. */
    start = *next_ns > now_ns ? *next_ns : now_ns;
    cost = (uint64_t)((double)n * 1e9 / (double)rate);
    *next_ns = start + cost;
    return start - now_ns;
}


void
rep_heal_throttle(struct rep_heal *h, uint64_t n)
{
    struct rep_heal_ctl *ctl = rep_heal_ctl(h->xl);
    uint64_t rate = VL_CONF(h->xl, struct rep_conf)->heal_max_rate;
    struct timespec ts;
    uint64_t now, wait;

    if (rate == 0 || ctl == NULL)
        return;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    pthread_mutex_lock(&ctl->rate_lock);
    wait = rep_heal_rate_wait(&ctl->rate_next_ns, now, n, rate);
    pthread_mutex_unlock(&ctl->rate_lock);
    if (wait == 0)
        return;
    atomic_fetch_add(&ctl->n_throttled_ms, wait / 1000000u);
    ts.tv_sec = (time_t)(wait / 1000000000u);
    ts.tv_nsec = (long)(wait % 1000000000u);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}


/* ---- source selection ---- */

enum rep_heal_verdict
rep_heal_pick(unsigned n, rep_mask_t present, const uint8_t *const *records,
              unsigned kind, rep_mask_t *sources, rep_mask_t *sinks)
{
    rep_mask_t blamed = 0, dirty = 0;

    for (unsigned i = 0; i < n; i++) {
        if (!(present & (1u << i)))
            continue;
        for (unsigned j = 0; j < n; j++)
            if (j != i && (present & (1u << j))
                && rep_record_get(records[i] + j * REP_RECORD_SIZE, kind)
                       > 0)
                blamed |= 1u << j;
        if (rep_record_get(records[i] + n * REP_RECORD_SIZE, kind) != 0)
            dirty |= 1u << i;
    }
    *sources = present & ~blamed;
    *sinks = 0;
    if (blamed == 0)
        return dirty != 0 ? REP_HV_COMPARE : REP_HV_CLEAN;
    if (*sources == 0)
        return REP_HV_SPLIT;
    *sinks = blamed & present;
    return REP_HV_NEEDED;
}


/* ---- calls to the children ---- */

bool
rep_heal_is_stopping(vl_xlator_t *xl)
{
    return atomic_load(&rep_heal_ctl(xl)->stop);
}


static int
rep_heal_call_raw(struct rep_heal *h, unsigned child, vl_fop_t op,
                  const union vl_fop_args *args, struct vl_reply *reply,
                  uint32_t uid, uint32_t gid)
{
    struct vl_caller caller;
    struct vl_reply tmp = {0};
    int rc;

    memset(&caller, 0, sizeof(caller));
    caller.uid = uid;
    caller.gid = gid;
    caller.pid = VL_CALLER_PID_INTERNAL; /* heal acts as root, unsquashed */
    caller.lk_owner = h->lk_owner;
    rc = vl_sync_call(h->xl->children[child], op, args, &caller,
                      reply != NULL ? reply : &tmp);
    vl_reply_clear(&tmp);
    return rc;
}


int
rep_heal_call(struct rep_heal *h, unsigned child, vl_fop_t op,
              const union vl_fop_args *args, struct vl_reply *reply)
{
    return rep_heal_call_as(h, child, op, args, reply, 0, 0);
}


int
rep_heal_call_as(struct rep_heal *h, unsigned child, vl_fop_t op,
                 const union vl_fop_args *args, struct vl_reply *reply,
                 uint32_t uid, uint32_t gid)
{
    if (rep_heal_is_stopping(h->xl))
        return -ENOTCONN;
    return rep_heal_call_raw(h, child, op, args, reply, uid, gid);
}


int
rep_heal_stat(struct rep_heal *h, unsigned child, vl_inode_t *inode,
              struct vl_iatt *out)
{
    union vl_fop_args a;
    struct vl_reply r = {0};
    int rc;

    memset(&a, 0, sizeof(a));
    a.lookup.loc.inode = inode;
    rc = rep_heal_call(h, child, VL_FOP_LOOKUP, &a, &r);
    if (rc == 0)
        *out = r.iatt;
    vl_reply_clear(&r);
    return rc;
}


/* ---- locks ---- */

/* The lock request of this heal on its object: inodelk of [start, start
 * + len), or entrylk of the whole directory (name NULL: it conflicts
 * with the entry lock of every name a transaction takes in it). */
static void
rep_heal_lk_args(struct rep_heal *h, const char *domain, bool is_entry,
                 enum vl_lock_cmd cmd, int64_t start, int64_t len,
                 union vl_fop_args *a)
{
    memset(a, 0, sizeof(*a));
    if (is_entry) {
        a->entrylk.domain = domain;
        a->entrylk.loc.parent = h->inode;
        a->entrylk.loc.inode = h->inode;
        a->entrylk.cmd = cmd;
        a->entrylk.type = F_WRLCK;
        return;
    }
    a->inodelk.domain = domain;
    a->inodelk.loc.inode = h->inode;
    a->inodelk.cmd = cmd;
    a->inodelk.flock.type = cmd == VL_LOCK_UNLOCK ? F_UNLCK : F_WRLCK;
    a->inodelk.flock.whence = SEEK_SET;
    a->inodelk.flock.start = start;
    a->inodelk.flock.len = len;
}


static void
rep_heal_unlk_mask(struct rep_heal *h, const char *domain, rep_mask_t held,
                   bool is_entry, int64_t start, int64_t len)
{
    for (unsigned i = h->n; i-- > 0;) {
        union vl_fop_args a;
        int rc;

        if (!(held & (1u << i)))
            continue;
        rep_heal_lk_args(h, domain, is_entry, VL_LOCK_UNLOCK, start, len,
                         &a);
        /* Sent even while stopping: a live brick must get it back. */
        rc = rep_heal_call_raw(h, i,
                               is_entry ? VL_FOP_ENTRYLK : VL_FOP_INODELK,
                               &a, NULL, 0, 0);
        if (rc != 0 && rc != -ENOTCONN)
            vl_log(h->xl, VL_LOG_WARNING, "heal: unlock on %s: %s",
                   h->xl->children[i]->name, strerror(-rc));
    }
}


/* Every child in order, waiting (the order transactions use when they
 * wait, so a heal and a transaction cannot each hold part of the
 * other's locks). */
static int
rep_heal_lk_all(struct rep_heal *h, const char *domain, bool is_entry,
                enum vl_lock_cmd cmd, int64_t start, int64_t len)
{
    rep_mask_t held = 0;

    for (unsigned i = 0; i < h->n; i++) {
        union vl_fop_args a;
        int rc;

        if (!(h->up & (1u << i)))
            continue; /* a down brick holds no lock to conflict with */
        rep_heal_lk_args(h, domain, is_entry, cmd, start, len, &a);
        rc = rep_heal_call(h, i, is_entry ? VL_FOP_ENTRYLK : VL_FOP_INODELK,
                           &a, NULL);
        if (rc != 0) {
            vl_log(h->xl, VL_LOG_DEBUG, "heal: lock on %s: %s",
                   h->xl->children[i]->name, strerror(-rc));
            rep_heal_unlk_mask(h, domain, held, is_entry, start, len);
            return rc;
        }
        held |= 1u << i;
    }
    return 0;
}


int
rep_heal_inodelk(struct rep_heal *h, int64_t start, int64_t len)
{
    return rep_heal_lk_all(h, h->xl->name, false, VL_LOCK_WAIT, start, len);
}


void
rep_heal_inodeunlk(struct rep_heal *h, int64_t start, int64_t len)
{
    rep_heal_unlk_mask(h, h->xl->name, h->up, false, start, len);
}


int
rep_heal_entrylk(struct rep_heal *h)
{
    return rep_heal_lk_all(h, h->xl->name, true, VL_LOCK_WAIT, 0, 0);
}


void
rep_heal_entryunlk(struct rep_heal *h)
{
    rep_heal_unlk_mask(h, h->xl->name, h->up, true, 0, 0);
}


/* ---- records ---- */

/* The XATTROP adding vals (n slot records then dirty; NULL: zeros) to
 * inode's records, in the caller's arrays (n + 1 each). */
static void
rep_heal_xop_fill(struct rep_heal *h, vl_inode_t *inode,
                  const uint8_t (*vals)[REP_RECORD_SIZE], const char **names,
                  const void **values, uint32_t *sizes,
                  struct vl_xattrop_args *xa)
{
    struct rep_priv *priv = rep_priv(h->xl);

    for (unsigned i = 0; i <= h->n; i++) {
        names[i] = i < h->n ? priv->keys[i] : REP_KEY_DIRTY;
        values[i] = vals != NULL ? vals[i] : rep_heal_zero;
        sizes[i] = REP_RECORD_SIZE;
    }
    memset(xa, 0, sizeof(*xa));
    xa->loc.inode = inode;
    xa->op = VL_XATTROP_ADD32;
    xa->n = h->n + 1;
    xa->names = names;
    xa->values = values;
    xa->sizes = sizes;
}


/* The new values an XATTROP answered, into out (NULL: not wanted). */
static int
rep_heal_xop_out(struct rep_heal *h, const struct vl_reply *r, uint8_t *out)
{
    size_t want = (h->n + 1) * REP_RECORD_SIZE;

    if (out == NULL)
        return 0;
    if (r->xattr == NULL || r->xattr_len != want)
        return -EIO;
    memcpy(out, r->xattr, want);
    return 0;
}


/* rep_heal_records_add, carrying unlk (NULL: none): the brick releases
 * that lock after the xattrop, whatever its result, and *is_unlocked
 * says it did (a brick without the compound leaves it to the caller). */
static int
rep_heal_records_add_unlk(struct rep_heal *h, unsigned child,
                          vl_inode_t *inode,
                          const uint8_t (*vals)[REP_RECORD_SIZE],
                          uint8_t *out, const struct vl_xattrop_unlock *unlk,
                          bool *is_unlocked)
{
    const char *names[REP_MAX_CHILDREN + 1];
    const void *values[REP_MAX_CHILDREN + 1];
    uint32_t sizes[REP_MAX_CHILDREN + 1];
    union vl_fop_args a;
    struct vl_reply r = {0};
    int rc;

    memset(&a, 0, sizeof(a));
    rep_heal_xop_fill(h, inode, vals, names, values, sizes, &a.xattrop);
    a.xattrop.unlock = unlk;
    rc = rep_heal_call(h, child, VL_FOP_XATTROP, &a, &r);
    if (is_unlocked != NULL)
        *is_unlocked = unlk != NULL && r.has_unlock;
    if (rc == 0)
        rc = rep_heal_xop_out(h, &r, out);
    vl_reply_clear(&r);
    return rc;
}


int
rep_heal_records_add(struct rep_heal *h, unsigned child, vl_inode_t *inode,
                     const uint8_t (*vals)[REP_RECORD_SIZE], uint8_t *out)
{
    return rep_heal_records_add_unlk(h, child, inode, vals, out, NULL, NULL);
}


int
rep_heal_inodelk_records(struct rep_heal *h)
{
    const char *names[REP_MAX_CHILDREN + 1];
    const void *values[REP_MAX_CHILDREN + 1];
    uint32_t sizes[REP_MAX_CHILDREN + 1];
    struct vl_xattrop_args xop;
    rep_mask_t held = 0;

    h->is_rec_fresh = false;
    rep_heal_xop_fill(h, h->inode, NULL, names, values, sizes, &xop);
    /* In child order, waiting, as rep_heal_lk_all. */
    for (unsigned i = 0; i < h->n; i++) {
        union vl_fop_args a;
        struct vl_reply r = {0};
        int rc;

        if (!(h->up & (1u << i))) {
            memset(h->rec[i], 0, sizeof(h->rec[i])); /* unknown */
            continue;
        }
        rep_heal_lk_args(h, h->xl->name, false, VL_LOCK_WAIT, 0, 0, &a);
        a.inodelk.xop = &xop;
        rc = rep_heal_call(h, i, VL_FOP_INODELK, &a, &r);
        if (rc == 0) {
            held |= 1u << i;
            if (!r.has_xop) /* a brick without the compound */
                rc = rep_heal_records_add(h, i, h->inode, NULL, h->rec[i]);
            else if (r.xop_status != 0)
                rc = r.xop_status;
            else
                rc = rep_heal_xop_out(h, &r, h->rec[i]);
        }
        vl_reply_clear(&r);
        if (rc != 0) {
            vl_log(h->xl, VL_LOG_DEBUG, "heal: lock and records on %s: %s",
                   h->xl->children[i]->name, strerror(-rc));
            rep_heal_unlk_mask(h, h->xl->name, held, false, 0, 0);
            return rc;
        }
    }
    h->is_rec_fresh = true;
    return 0;
}


int
rep_heal_records_read(struct rep_heal *h, vl_inode_t *inode)
{
    h->is_rec_fresh = false;
    for (unsigned i = 0; i < h->n; i++) {
        int rc;

        if (!(h->up & (1u << i))) {
            memset(h->rec[i], 0, sizeof(h->rec[i])); /* unknown */
            continue;
        }
        rc = rep_heal_records_add(h, i, inode, NULL, h->rec[i]);
        if (rc != 0) {
            vl_log(h->xl, VL_LOG_DEBUG, "heal: records of %s: %s",
                   h->xl->children[i]->name, strerror(-rc));
            return rc;
        }
    }
    return 0;
}


enum rep_heal_verdict
rep_heal_decide(struct rep_heal *h, unsigned kind)
{
    const uint8_t *records[REP_MAX_CHILDREN];
    enum rep_heal_verdict v;

    for (unsigned i = 0; i < h->n; i++)
        records[i] = h->rec[i];
    v = rep_heal_pick(h->n, h->up, records, kind, &h->sources, &h->sinks);
    /* With a copy down, (1) every up copy blamed leaves the down one as
     * the only possible source, and (2) dirty without blame is a cut
     * change the down copy may hold too: nothing proves a source. */
    if (h->down != 0 && (v == REP_HV_SPLIT         /* (1) */
                         || v == REP_HV_COMPARE)) { /* (2) */
        h->sources = 0;
        h->sinks = 0;
        v = REP_HV_WAIT;
    }
    h->src = -1;
    for (unsigned i = 0; i < h->n && h->src < 0; i++)
        if (h->sources & (1u << i))
            h->src = (int)i;
    return v;
}


int
rep_heal_blame(struct rep_heal *h, unsigned source, vl_inode_t *inode,
               rep_mask_t blame, unsigned kinds)
{
    uint8_t vals[REP_MAX_CHILDREN + 1][REP_RECORD_SIZE];

    memset(vals, 0, sizeof(vals));
    for (unsigned j = 0; j < h->n; j++)
        for (unsigned k = 0; k < REP_N_KINDS; k++)
            if ((blame & (1u << j)) && (kinds & (1u << k)))
                rep_record_set(vals[j], k, 1);
    return rep_heal_records_add(h, source, inode,
                                (const uint8_t(*)[REP_RECORD_SIZE])vals,
                                NULL);
}


int
rep_heal_mark_sinks(struct rep_heal *h, vl_inode_t *inode, unsigned kind)
{
    unsigned s = (unsigned)h->src;
    int rc;

    h->sources = 1u << s;
    if (h->sinks == 0)
        return 0;
    rc = rep_heal_blame(h, s, inode, h->sinks, 1u << kind);
    if (rc != 0)
        return rc;
    for (unsigned j = 0; j < h->n; j++)
        if (h->sinks & (1u << j)) {
            uint8_t *r = h->rec[s] + j * REP_RECORD_SIZE;

            rep_record_set(r, kind, rep_record_get(r, kind) + 1);
        }
    return 0;
}


/* What a clear may take back of a count: the part of the snapshot the
 * heal worked from that is still there now. Another heal of the object
 * (another client's, or the daemon's beside a lookup's) may have cleared
 * it meanwhile, while this one's lock was dropped for the copy; taking
 * the snapshot again would drive the count below zero, which no later
 * heal can tell from a real record (and the index entry stays). */
static int32_t
rep_heal_clearable(int32_t snap, int32_t now)
{
    if (snap > 0 && now > 0)
        return snap < now ? snap : now;
    if (snap < 0 && now < 0) /* a count gone wrong: back to zero */
        return snap > now ? snap : now;
    return 0;
}


/* With copies down: each healed sink now holds a source's content, so it
 * owes the down copies what the sources owe them; it is made to blame
 * every down copy a source blames for kind (a sink that already does
 * keeps its count). Done before any clear: a heal cut between the two
 * leaves more blame, never less. */
static int
rep_heal_sinks_inherit(struct rep_heal *h, vl_inode_t *inode, unsigned kind)
{
    rep_mask_t owed = 0;

    for (unsigned s = 0; s < h->n; s++)
        for (unsigned j = 0; j < h->n; j++)
            if ((h->sources & (1u << s)) && (h->down & (1u << j))
                && rep_record_get(h->rec[s] + j * REP_RECORD_SIZE, kind) > 0)
                owed |= 1u << j;
    for (unsigned c = 0; c < h->n && owed != 0; c++) {
        uint8_t vals[REP_MAX_CHILDREN + 1][REP_RECORD_SIZE];
        uint8_t now[(REP_MAX_CHILDREN + 1) * REP_RECORD_SIZE];
        bool is_any = false;
        int rc;

        if (!(h->sinks & h->up & (1u << c)))
            continue;
        if (h->is_rec_fresh)
            memcpy(now, h->rec[c], sizeof(now));
        else if ((rc = rep_heal_records_add(h, c, inode, NULL, now)) != 0)
            return rc;
        memset(vals, 0, sizeof(vals));
        for (unsigned j = 0; j < h->n; j++)
            if ((owed & (1u << j))
                && rep_record_get(now + j * REP_RECORD_SIZE, kind) <= 0) {
                rep_record_set(vals[j], kind, 1);
                is_any = true;
            }
        if (!is_any)
            continue;
        rc = rep_heal_records_add(h, c, inode,
                                  (const uint8_t(*)[REP_RECORD_SIZE])vals,
                                  h->is_rec_fresh ? h->rec[c] : NULL);
        if (rc != 0)
            return rc;
    }
    return 0;
}


/* rep_heal_records_clear; with unlk, each clearing xattrop carries the
 * release of that lock, and *unlocked gets the children it released. */
static int
rep_heal_clear(struct rep_heal *h, vl_inode_t *inode, unsigned kind,
               const struct vl_xattrop_unlock *unlk, rep_mask_t *unlocked)
{
    int first = 0;
    int rc;

    rc = rep_heal_sinks_inherit(h, inode, kind);
    if (rc != 0)
        return rc; /* nothing cleared: the sinks stay blamed */
    for (unsigned c = 0; c < h->n; c++) {
        uint8_t vals[REP_MAX_CHILDREN + 1][REP_RECORD_SIZE];
        uint8_t now[(REP_MAX_CHILDREN + 1) * REP_RECORD_SIZE];
        bool is_any = false, is_unlocked = false;

        if (!(h->up & (1u << c)))
            continue; /* down: its records wait for its own heal */
        /* The copy's counts now, under the heal's lock (what was read
         * under it when held since: nothing else could change them). */
        if (h->is_rec_fresh) {
            memcpy(now, h->rec[c], sizeof(now));
            rc = 0;
        } else {
            rc = rep_heal_records_add(h, c, inode, NULL, now);
        }
        if (rc != 0) {
            if (first == 0)
                first = rc;
            continue;
        }
        memset(vals, 0, sizeof(vals));
        for (unsigned j = 0; j <= h->n; j++) {
            int32_t v = rep_heal_clearable(
                rep_record_get(h->rec[c] + j * REP_RECORD_SIZE, kind),
                rep_record_get(now + j * REP_RECORD_SIZE, kind));
            /* A sink's blame of a down copy stays (it owes it what
             * the sources owe it). */
            bool is_cleared = j == h->n /* dirty */
                              || (h->sinks & (1u << j))
                              || ((h->sinks & (1u << c))
                                  && (h->up & (1u << j)));

            if (v != 0 && is_cleared) {
                rep_record_set(vals[j], kind, -v);
                is_any = true;
            }
        }
        if (!is_any)
            continue;
        rc = rep_heal_records_add_unlk(
            h, c, inode, (const uint8_t(*)[REP_RECORD_SIZE])vals, NULL, unlk,
            &is_unlocked);
        if (is_unlocked)
            *unlocked |= 1u << c;
        if (rc != 0 && first == 0)
            first = rc;
    }
    h->is_rec_fresh = false; /* rec holds the counts before the clear */
    return first;
}


int
rep_heal_records_clear(struct rep_heal *h, vl_inode_t *inode, unsigned kind)
{
    rep_mask_t unlocked = 0;

    return rep_heal_clear(h, inode, kind, NULL, &unlocked);
}


int
rep_heal_records_clear_unlock(struct rep_heal *h, unsigned kind)
{
    struct vl_xattrop_unlock u;
    rep_mask_t unlocked = 0;
    int rc;

    memset(&u, 0, sizeof(u));
    u.domain = h->xl->name;
    u.loc.inode = h->inode;
    u.flock.whence = SEEK_SET; /* the whole file, as rep_heal_inodelk */
    rc = rep_heal_clear(h, h->inode, kind, &u, &unlocked);
    /* The copies with nothing to clear, and any the compound missed. */
    rep_heal_unlk_mask(h, h->xl->name, h->up & ~unlocked, false, 0, 0);
    return rc;
}


/* ---- one object ---- */

/* With copies down and the up ones in agreement: does an up copy still
 * blame a down one, or hold a dirty count, for any kind? (An error
 * reading counts as yes: the object stays listed.) */
static bool
rep_heal_owes_down(struct rep_heal *h)
{
    if (rep_heal_records_read(h, h->inode) != 0)
        return true;
    for (unsigned i = 0; i < h->n; i++) {
        if (!(h->up & (1u << i)))
            continue;
        for (unsigned j = 0; j <= h->n; j++)
            for (unsigned k = 0; k < REP_N_KINDS; k++)
                if ((j == h->n || (h->down & (1u << j)))
                    && rep_record_get(h->rec[i] + j * REP_RECORD_SIZE, k)
                           != 0)
                    return true;
    }
    return false;
}

static const char *
rep_heal_result_str(enum rep_heal_result r)
{
    switch (r) {
    case REP_HR_HEALED:
        return "healed";
    case REP_HR_SPLIT:
        return "split-brain";
    case REP_HR_PENDING:
        return "pending";
    case REP_HR_FAILED:
        return "failed";
    default:
        return "clean";
    }
}


/* The worse of two results: split-brain, failed, pending, healed,
 * clean. */
static enum rep_heal_result
rep_heal_worse(enum rep_heal_result a, enum rep_heal_result b)
{
    static const int rank[] = {
        [REP_HR_CLEAN] = 0, [REP_HR_HEALED] = 1, [REP_HR_PENDING] = 2,
        [REP_HR_FAILED] = 3, [REP_HR_SPLIT] = 4,
    };

    return rank[a] >= rank[b] ? a : b;
}


static enum rep_heal_result
rep_heal_object(vl_xlator_t *xl, vl_inode_t *inode, bool is_bg,
                struct rep_heal_opts *opts)
{
    struct rep_priv *priv = rep_priv(xl);
    struct rep_heal_ctl *ctl = rep_heal_ctl(xl);
    const struct rep_conf *conf = VL_CONF(xl, struct rep_conf);
    struct rep_heal *h;
    enum rep_heal_result res = REP_HR_CLEAN, up_res;
    unsigned gen = atomic_load(&priv->event_gen);
    rep_mask_t all = (rep_mask_t)((1u << priv->n) - 1);
    rep_mask_t up = rep_up_mask(xl) & all;
    uint32_t type;
    int first = -1;
    char gs[VL_GFID_STR_LEN];
    int rc;

    /* A heal needs a source and a sink up; a resolve key weighs every
     * copy's records, so it needs them all. */
    if (rep_popcount(up) < 2 || (opts->is_resolve_only && up != all))
        return REP_HR_PENDING;
    h = calloc(1, sizeof(*h));
    if (h == NULL)
        return REP_HR_FAILED;
    h->xl = xl;
    h->inode = inode;
    h->n = priv->n;
    h->up = up;
    h->down = all & ~up;
    h->lk_owner = REP_HEAL_LK_OWNER_TAG
                  | (atomic_fetch_add(&ctl->n_owner, 1) & 0xffffffffULL);
    h->opts = opts;
    /* A resolve key's rule, else the policy of every heal. */
    h->rule = opts->rule != REP_RULE_NONE ? opts->rule
                                          : conf->fav_child_policy;
    for (unsigned i = 0; i < h->n; i++) {
        if (!(h->up & (1u << i)))
            continue;
        rc = rep_heal_stat(h, i, inode, &h->ia[i]);
        if (rc != 0) {
            res = rc == -ENOENT || rc == -ESTALE || rc == -ENOTCONN
                  ? REP_HR_PENDING : REP_HR_FAILED;
            goto out;
        }
        if (first < 0)
            first = (int)i;
        if ((h->ia[i].mode & S_IFMT) != (h->ia[first].mode & S_IFMT)) {
            vl_log(xl, VL_LOG_ERROR, "heal %s: the copies differ in type",
                   vl_gfid_to_str(&inode->gfid, gs));
            res = REP_HR_SPLIT;
            goto out;
        }
    }
    /* One heal of an object at a time, whoever runs it: a second one
     * would copy again and clear what the first cleared. A background
     * heal does not wait for it (the one running does the work). */
    rc = rep_heal_lk_all(h, ctl->heal_domain, false,
                         is_bg ? VL_LOCK_TRY : VL_LOCK_WAIT, 0, 0);
    if (rc != 0) {
        res = rc == -EAGAIN || rc == -ENOTCONN ? REP_HR_PENDING
                                               : REP_HR_FAILED;
        goto out;
    }
    type = h->ia[first].mode & S_IFMT;
    if ((opts->name == NULL && opts->rule == REP_RULE_SIZE
         && !S_ISREG(type))
        || (opts->name != NULL && !S_ISDIR(type))) {
        /* bigger-file compares file sizes only; a name is resolved in
         * its directory. */
        opts->err = opts->name != NULL ? -ENOTDIR : -EINVAL;
        res = REP_HR_FAILED;
        rep_heal_unlk_mask(h, ctl->heal_domain, h->up, false, 0, 0);
        goto out;
    }
    if (S_ISREG(type) && (!is_bg || conf->is_data_heal))
        res = rep_heal_worse(res, rep_heal_data(h));
    if (S_ISDIR(type) && (!is_bg || conf->is_entry_heal))
        res = rep_heal_worse(res, rep_heal_entry(h));
    /* A name's resolve key touches that name only. */
    if ((!is_bg || conf->is_metadata_heal) && opts->name == NULL)
        res = rep_heal_worse(res, rep_heal_metadata(h));
    up_res = res;
    /* Copies down: what was done is done, what they need waits (the
     * object stays listed while any record against them is left). */
    if (h->down != 0 && res == REP_HR_CLEAN && rep_heal_owes_down(h))
        res = REP_HR_PENDING;
    if (h->down != 0 && opts->is_full)
        res = rep_heal_worse(res, REP_HR_PENDING); /* nothing merged to
                                                     them: crawl again */
    rep_heal_unlk_mask(h, ctl->heal_domain, h->up, false, 0, 0);
    atomic_fetch_add(&ctl->n_bytes, h->bytes);
    atomic_fetch_add(&ctl->n_entries, h->entries);
    if (h->granular > 0)
        atomic_fetch_add(&ctl->n_granular, 1);
    if (h->is_listed)
        atomic_fetch_add(&ctl->n_listed, 1);
    /* Every up copy is good now if every kind was looked at (and
     * nobody came or went meanwhile: gen). */
    if ((up_res == REP_HR_HEALED || up_res == REP_HR_CLEAN) && !h->is_partial
        && (!is_bg || (conf->is_data_heal && conf->is_metadata_heal
                       && conf->is_entry_heal)))
        rep_inode_set_readable(xl, inode, h->up, gen);
out:
    if (res == REP_HR_HEALED)
        vl_log(xl, VL_LOG_INFO, "healed %s (%" PRIu64 " bytes, %" PRIu64
               " names)", vl_gfid_to_str(&inode->gfid, gs), h->bytes,
               h->entries);
    free(h);
    return res;
}


/* ---- jobs and threads ---- */

/* The answer of a resolve key: what the rule did, else how the heal
 * ended. */
static const char *
rep_heal_resolve_str(enum rep_heal_result res,
                     const struct rep_heal_opts *opts)
{
    if (res == REP_HR_PENDING)
        return "pending";
    if (opts->ambiguous != 0)
        return "ambiguous";
    if (opts->resolved == 0)
        return res == REP_HR_SPLIT ? "split-brain" : "not-split-brain";
    return res == REP_HR_SPLIT ? "split-brain" : "healed";
}


static void
rep_heal_answer(vl_req_t *req, enum rep_heal_result res,
                const struct rep_heal_opts *opts)
{
    struct vl_getxattr_args *a = VL_ARGS(req, getxattr);
    const char *s = opts->is_resolve_only ? rep_heal_resolve_str(res, opts)
                                          : rep_heal_result_str(res);
    size_t len = strlen(s);

    if (res == REP_HR_FAILED) {
        vl_unwind(req, opts->err != 0 ? opts->err : -EIO);
        return;
    }
    vl_reply_clear(&req->reply);
    req->reply.count = (int64_t)len;
    if (a->size < len) {
        vl_unwind(req, -ERANGE);
        return;
    }
    req->reply.xattr = vl_malloc(req->xl, len + 1, REP_MT_MISC);
    if (req->reply.xattr == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    memcpy(req->reply.xattr, s, len + 1);
    vl_unwind(req, 0);
}


static void
rep_heal_job_end(struct rep_heal_job *job)
{
    struct rep_heal_ctl *ctl = rep_heal_ctl(job->xl);
    struct rep_heal_job **pp;

    pthread_mutex_lock(&ctl->lock);
    for (pp = &ctl->running; *pp != NULL; pp = &(*pp)->next)
        if (*pp == job) {
            *pp = job->next;
            break;
        }
    if (job->req == NULL)
        ctl->n_bg--;
    ctl->n_running--;
    pthread_cond_broadcast(&ctl->idle);
    /* Unref under the lock: the graph's teardown waits for n_running
     * and then frees the inode table. */
    vl_inode_unref(job->inode);
    pthread_mutex_unlock(&ctl->lock);
    free(job);
}


static void *
rep_heal_thread(void *arg)
{
    struct rep_heal_job *job = arg;
    struct rep_heal_ctl *ctl = rep_heal_ctl(job->xl);
    enum rep_heal_result res;

    atomic_fetch_add(&ctl->n_started, 1);
    res = rep_heal_object(job->xl, job->inode, job->req == NULL,
                          &job->opts);
    if (res == REP_HR_HEALED || res == REP_HR_CLEAN)
        atomic_fetch_add(&ctl->n_done, 1);
    else
        atomic_fetch_add(&ctl->n_failed, 1);
    if (job->req != NULL)
        rep_heal_answer(job->req, res, &job->opts);
    rep_heal_job_end(job);
    return NULL;
}


/* Starts a heal thread for inode; with req, it answers req. -EBUSY when
 * a background heal is over the bound or already running, -ENOTCONN
 * while stopping. */
static int
rep_heal_start(vl_xlator_t *xl, vl_inode_t *inode, vl_req_t *req,
               const struct rep_heal_opts *opts)
{
    struct rep_heal_ctl *ctl = rep_heal_ctl(xl);
    const struct rep_conf *conf = VL_CONF(xl, struct rep_conf);
    struct rep_heal_job *job;
    pthread_attr_t attr;
    pthread_t tid;
    int rc = 0;

    job = calloc(1, sizeof(*job));
    if (job == NULL)
        return -ENOMEM;
    job->xl = xl;
    job->req = req;
    if (opts != NULL)
        job->opts = *opts;
    pthread_mutex_lock(&ctl->lock);
    if (ctl->is_stopping) {
        rc = -ENOTCONN;
    } else if (req == NULL) {
        if (ctl->n_bg >= conf->bg_heal_count)
            rc = -EBUSY;
        for (struct rep_heal_job *j = ctl->running; j != NULL && rc == 0;
             j = j->next)
            if (j->inode == inode)
                rc = -EBUSY;
    }
    if (rc != 0) {
        pthread_mutex_unlock(&ctl->lock);
        free(job);
        return rc;
    }
    job->inode = vl_inode_ref(inode);
    job->next = ctl->running;
    ctl->running = job;
    ctl->n_running++;
    if (req == NULL)
        ctl->n_bg++;
    pthread_mutex_unlock(&ctl->lock);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&tid, &attr, rep_heal_thread, job);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        /* Nothing ran: take the job back (the caller answers req). */
        rep_heal_job_end(job);
        return -rc;
    }
    return 0;
}


void
rep_heal_on_lookup(vl_xlator_t *xl, vl_inode_t *inode, rep_mask_t answered,
                   const uint8_t *const *records)
{
    struct rep_priv *priv = rep_priv(xl);
    const struct rep_conf *conf = VL_CONF(xl, struct rep_conf);
    unsigned kinds = 0;
    rep_mask_t all = (rep_mask_t)((1u << priv->n) - 1);

    answered &= all;
    if (priv->heal == NULL || rep_popcount(answered) < 2
        || vl_gfid_is_null(&inode->gfid))
        return;
    if (conf->is_metadata_heal)
        kinds |= 1u << REP_METADATA;
    if (conf->is_data_heal && S_ISREG(inode->type))
        kinds |= 1u << REP_DATA;
    if (conf->is_entry_heal
        && (S_ISDIR(inode->type) || vl_gfid_is_root(&inode->gfid)))
        kinds |= 1u << REP_ENTRY;
    /* Blame only: dirty alone is also what a write batch in progress
     * shows; the daemon (through the index) compares those copies. Only
     * blame between copies that answered: one against a down copy is
     * healed when it is back, not at every lookup meanwhile. */
    for (unsigned i = 0; i < priv->n; i++)
        for (unsigned j = 0; j < priv->n; j++)
            for (unsigned k = 0; k < REP_N_KINDS; k++)
                if (j != i && (answered & (1u << i))
                    && (answered & (1u << j)) && (kinds & (1u << k))
                    && rep_record_get(records[i] + j * REP_RECORD_SIZE, k)
                           > 0) {
                    (void)rep_heal_start(xl, inode, NULL, NULL);
                    return;
                }
}


void
rep_heal_parent_hint(vl_xlator_t *xl, vl_inode_t *dir)
{
    const struct rep_conf *conf = VL_CONF(xl, struct rep_conf);
    struct rep_priv *priv = rep_priv(xl);

    if (priv->heal == NULL || dir == NULL || vl_gfid_is_null(&dir->gfid)
        || rep_popcount(rep_up_mask(xl)) < 2
        || (!conf->is_entry_heal && !conf->is_metadata_heal))
        return;
    (void)rep_heal_start(xl, dir, NULL, NULL);
}


/* REP_XATTR_CHILD_GEN: the child up/down generation, as text. */
static void
rep_child_gen_answer(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_getxattr_args *a = VL_ARGS(req, getxattr);
    char s[16];
    size_t len;

    len = (size_t)snprintf(s, sizeof(s), "%u",
                           atomic_load(&rep_priv(xl)->event_gen));
    vl_reply_clear(&req->reply);
    req->reply.count = (int64_t)len;
    if (a->size == 0) {
        vl_unwind(req, 0); /* a probe for the length */
        return;
    }
    if (a->size < len) {
        vl_unwind(req, -ERANGE);
        return;
    }
    req->reply.xattr = vl_malloc(req->xl, len + 1, REP_MT_MISC);
    if (req->reply.xattr == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    memcpy(req->reply.xattr, s, len + 1);
    vl_unwind(req, 0);
}


void
rep_heal_getxattr(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_getxattr_args *a = VL_ARGS(req, getxattr);
    struct rep_heal_opts opts;
    size_t pl = strlen(REP_XATTR_RESOLVE);
    int rc;

    memset(&opts, 0, sizeof(opts));
    if (a->name != NULL && strcmp(a->name, REP_XATTR_CHILD_GEN) == 0) {
        rep_child_gen_answer(xl, req);
        return;
    }
    if (a->name != NULL && strncmp(a->name, REP_XATTR_RESOLVE, pl) == 0) {
        rc = rep_heal_rule_parse(xl, a->name + pl, &opts);
        if (rc != 0) {
            vl_unwind(req, rc);
            return;
        }
    } else if (a->name != NULL && strcmp(a->name, REP_XATTR_HEAL_FULL) == 0) {
        opts.is_full = true;
    } else if (a->name == NULL || strcmp(a->name, REP_XATTR_HEAL) != 0) {
        rep_read_fop(xl, req);
        return;
    }
    if (a->loc.inode == NULL || vl_gfid_is_null(&a->loc.inode->gfid)) {
        vl_unwind(req, -ESTALE);
        return;
    }
    if (opts.name != NULL && a->loc.inode->type != 0
        && !S_ISDIR(a->loc.inode->type)) {
        vl_unwind(req, -ENOTDIR); /* a name is resolved in its directory */
        return;
    }
    if (opts.rule == REP_RULE_SIZE && opts.name == NULL
        && a->loc.inode->type != 0 && !S_ISREG(a->loc.inode->type)) {
        vl_unwind(req, -EINVAL); /* bigger-file compares files only */
        return;
    }
    if (a->size == 0) {
        /* A probe for the length (getfattr's first call): the longest
         * answer, without healing twice. */
        vl_reply_clear(&req->reply);
        req->reply.count = (int64_t)strlen(opts.is_resolve_only
                                               ? "not-split-brain"
                                               : "split-brain");
        vl_unwind(req, 0);
        return;
    }
    rc = rep_heal_start(xl, a->loc.inode, req, &opts);
    if (rc != 0)
        vl_unwind(req, rc);
}


/* ---- life ---- */

int
rep_heal_init(vl_xlator_t *xl)
{
    struct rep_heal_ctl *ctl = calloc(1, sizeof(*ctl));

    if (ctl == NULL)
        return -ENOMEM;
    if (asprintf(&ctl->heal_domain, "%s.self-heal", xl->name) < 0) {
        free(ctl);
        return -ENOMEM;
    }
    pthread_mutex_init(&ctl->lock, NULL);
    pthread_mutex_init(&ctl->rate_lock, NULL);
    pthread_cond_init(&ctl->idle, NULL);
    rep_priv(xl)->heal = ctl;
    return 0;
}


void
rep_heal_stop(vl_xlator_t *xl)
{
    struct rep_heal_ctl *ctl = rep_heal_ctl(xl);

    if (ctl == NULL)
        return;
    atomic_store(&ctl->stop, true);
    pthread_mutex_lock(&ctl->lock);
    ctl->is_stopping = true;
    /* A heal's calls are answered by the event loop: waiting on a loop
     * thread could wait for ourselves. Stopping heals return at their
     * next call. */
    if (xl->graph == NULL || xl->graph->loop == NULL
        || !vl_loop_on_loop_thread(xl->graph->loop))
        while (ctl->n_running > 0)
            pthread_cond_wait(&ctl->idle, &ctl->lock);
    pthread_mutex_unlock(&ctl->lock);
}


void
rep_heal_fini(vl_xlator_t *xl)
{
    struct rep_heal_ctl *ctl = rep_heal_ctl(xl);

    if (ctl == NULL)
        return;
    rep_heal_stop(xl);
    pthread_cond_destroy(&ctl->idle);
    pthread_mutex_destroy(&ctl->lock);
    pthread_mutex_destroy(&ctl->rate_lock);
    free(ctl->heal_domain);
    free(ctl);
    rep_priv(xl)->heal = NULL;
}


void
rep_heal_dump(vl_xlator_t *xl, FILE *out)
{
    struct rep_heal_ctl *ctl = rep_heal_ctl(xl);
    unsigned n_running;

    if (ctl == NULL)
        return;
    pthread_mutex_lock(&ctl->lock);
    n_running = ctl->n_running;
    pthread_mutex_unlock(&ctl->lock);
    fprintf(out, "heals_running=%u\n", n_running);
    fprintf(out, "heals_started=%" PRIu64 "\n",
            (uint64_t)atomic_load(&ctl->n_started));
    fprintf(out, "heals_done=%" PRIu64 "\n",
            (uint64_t)atomic_load(&ctl->n_done));
    fprintf(out, "heals_failed=%" PRIu64 "\n",
            (uint64_t)atomic_load(&ctl->n_failed));
    fprintf(out, "bytes_healed=%" PRIu64 "\n",
            (uint64_t)atomic_load(&ctl->n_bytes));
    fprintf(out, "entries_healed=%" PRIu64 "\n",
            (uint64_t)atomic_load(&ctl->n_entries));
    fprintf(out, "throttled_ms=%" PRIu64 "\n",
            (uint64_t)atomic_load(&ctl->n_throttled_ms));
    fprintf(out, "entry_heals_granular=%" PRIu64 "\n",
            (uint64_t)atomic_load(&ctl->n_granular));
    fprintf(out, "entry_heals_listed=%" PRIu64 "\n",
            (uint64_t)atomic_load(&ctl->n_listed));
}
