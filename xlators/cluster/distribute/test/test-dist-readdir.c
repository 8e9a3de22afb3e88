/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-dist-readdir: readdir of distribute over four debug/mock bricks
 * (dist-rounds.h), the test playing the bricks round by round:
 *   - bricks sending their first batch with the opendir (protocol 5):
 *     no read and no round after the open; a brick whose batch failed is
 *     read as before;
 *   - opendir reads every brick at once in the background; the first
 *     readdir waits for those reads (no second read of any brick) and the
 *     whole small directory comes back in that one round; the readdir
 *     after the last entry needs no round; every file listed gets a
 *     linked inode that knows its brick;
 *   - bricks giving few entries per call and a small caller buffer: every
 *     name once, directories and dots only from the first brick, link
 *     files never; cookies resume exactly (seekdir to any cookie given);
 *     bricks are read ahead while entries go up;
 *   - readdir at offset 0 after a listing (rewinddir) reads the bricks
 *     again and sees new names;
 *   - a brick failing its reads: the readdir reaching it fails with its
 *     error, as when bricks were read one after the other;
 *   - release frees the cache (distribute's memory back to its level);
 *   - content (quick-read's readdirplus content_max): the first listing
 *     asking for it reads the bricks again with it (opendir's reads did
 *     not; that listing may take a round more), in 256 KiB batches; each
 *     file passed up carries its bytes in
 *     the reply's buffer, directories and link files none; the next
 *     opendir's reads ask for it at once (one round); a caller not
 *     asking gets none;
 *   - under replicate, entries with unsure attributes: link files still
 *     left out;
 *   - names only (readdir without plus, issue 24): the bricks answer as
 *     storage/posix does (no attributes, link files left out); once a
 *     listing of the fd asked for names only, the bricks are read
 *     without plus; directories and dots still come from the first
 *     brick only, by d_type; a readdirplus of the fd reads with plus
 *     again; a names-only caller answered from plus batches gets no
 *     attributes.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dist-readdir.h"
#include "dist-rounds.h"

/* The bricks the mocks play: per brick ".", "..", "sub" (a directory on
 * every brick), then n_files[i] files "f<i>-<j>"; brick 2 also holds a
 * link file "lnk" after its third file. */
static struct {
    int n_files[RD_N];   /* files per brick */
    int max_per_call;    /* entries per readdir answer at most */
    int fail_brick;      /* brick answering readdir with -ENOTCONN, or -1 */
    bool has_extra;      /* brick 1 also holds "extra" at its end */
    bool is_unsure;      /* plus answers carry files' attributes as
                            cluster/replicate does for objects it cannot
                            vouch for: unsure, not has_iatt */
    bool plus[RD_N];     /* plus of the last readdir */
    uint32_t content_max[RD_N]; /* content_max of the last readdir */
    size_t size[RD_N];   /* size of the last readdir */
    unsigned reads[RD_N]; /* readdirs answered per brick */
} bk;


static void
bk_reset(void)
{
    memset(&bk, 0, sizeof(bk));
    bk.fail_brick = -1;
    bk.max_per_call = 1000;
}


/* Entry at position p of brick i (0-based); false past the end. */
static bool
bk_entry(int i, int p, char *name, size_t len, uint32_t *mode)
{
    int nf = bk.n_files[i];
    int n_link = i == 2 ? 1 : 0;
    int n_extra = i == 1 && bk.has_extra ? 1 : 0;
    int j;

    if (p < 3) {
        snprintf(name, len, "%s", p == 0 ? "." : p == 1 ? ".." : "sub");
        *mode = S_IFDIR | 0755;
        return true;
    }
    j = p - 3;
    if (n_link && j == 3) {
        snprintf(name, len, "lnk");
        *mode = S_IFREG | S_ISVTX;
        return true;
    }
    if (n_link && j > 3)
        j--;
    if (j < nf) {
        snprintf(name, len, "f%d-%03d", i, j);
        *mode = S_IFREG | 0644;
        return true;
    }
    if (n_extra && j == nf) {
        snprintf(name, len, "extra");
        *mode = S_IFREG | 0644;
        return true;
    }
    return false;
}


/* Fills r's reply with brick mock's entries after cookie offset, as a
 * readdirplus of size bytes with content_max would answer. The cookie an
 * entry is given is its position + 1; a readdir after cookie o starts at
 * position o. */
static int
bk_fill(int mock, vl_req_t *r, off_t offset, size_t size,
        uint32_t content_max, bool plus)
{
    struct vl_dirent_list *l = &r->reply.entries;
    size_t used = 0;
    char name[32];
    uint32_t mode;
    int p;

    bk.content_max[mock] = content_max;
    bk.size[mock] = size;
    if (mock == bk.fail_brick)
        return -ENOTCONN;
    if (content_max > 0 && r->reply.buf == NULL) {
        /* Files' content is their name, as a brick puts it: in one
         * buffer of the reply. */
        r->reply.buf = vl_buf_new(64 * 1024);
        assert_non_null(r->reply.buf);
    }
    for (p = (int)offset; bk_entry(mock, p, name, sizeof(name), &mode);
         p++) {
        size_t cost = ((152 + strlen(name) + 7) & ~(size_t)7);
        struct vl_iatt fa;

        if (l->n > 0 && (l->n >= (size_t)bk.max_per_call
                         || used + cost > size))
            return 0;
        if (!plus && (mode & S_ISVTX))
            continue; /* posix leaves link files out of names only */
        memset(&fa, 0, sizeof(fa));
        fa.mode = mode;
        fa.size = S_ISREG(mode) && !(mode & S_ISVTX) ? strlen(name) : 0;
        vl_gfid_generate(&fa.gfid);
        assert_int_equal(vl_dirent_list_add(l, 100 + (uint64_t)p, p + 1,
                                            S_ISDIR(mode) ? DT_DIR : DT_REG,
                                            name, plus ? &fa : NULL), 0);
        if (plus && bk.is_unsure && S_ISREG(mode)) {
            l->ents[l->n - 1].has_iatt = false;
            l->ents[l->n - 1].is_iatt_unsure = true;
        }
        used += cost;
        if (plus && content_max > 0 && S_ISREG(mode)) {
            struct vl_dirent *e = &l->ents[l->n - 1];

            memcpy(r->reply.buf->data + used, name, fa.size);
            e->has_content = true;
            e->content_len = (uint32_t)fa.size;
            e->content_off = used;
            used += fa.size;
        }
    }
    l->eof = true;
    return 0;
}


static int
bk_answer(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    struct vl_readdir_args *a;

    (void)ia;
    if (r->op != VL_FOP_READDIR)
        return 0;
    a = VL_ARGS(r, readdir);
    bk.reads[mock]++;
    bk.plus[mock] = a->plus;
    return bk_fill(mock, r, a->offset, a->size, a->content_max, a->plus);
}


/* As bk_answer, and an opendir that asks for a listing gets the first
 * batch with it, as protocol/server answers one (protocol 5). */
static int
bk_answer_listing(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    struct vl_opendir_args *a;
    int rc;

    if (r->op != VL_FOP_OPENDIR)
        return bk_answer(mock, r, ia);
    a = VL_ARGS(r, opendir);
    if (a->list_size == 0)
        return 0;
    rc = bk_fill(mock, r, 0, a->list_size, a->content_max, true);
    if (rc != 0) {
        vl_reply_clear(&r->reply);
        return 0; /* the open stands, without a listing */
    }
    r->reply.has_listing = true;
    return 0;
}


/* Opens the root on the four mocks (one round, the mocks answering with
 * fn); the reads opendir starts stay waiting in the mocks. */
static vl_fd_t *
rdt_opendir_with(struct rd *t, rd_answer_fn *fn)
{
    struct vl_test_result res = {0};
    struct rd_round rd;
    vl_fd_t *fd = vl_fd_new(t->root, O_RDONLY, 1);
    vl_req_t *req = vl_req_new(t->dht, VL_FOP_OPENDIR);

    assert_non_null(fd);
    assert_non_null(req);
    VL_ARGS(req, opendir)->loc.inode = t->root;
    VL_ARGS(req, opendir)->fd = fd;
    vl_test_wind(req, &res);
    assert_true(rd_round(t, &res, fn, &rd));
    assert_int_equal(rd.mask, 0xf);
    for (int i = 0; i < RD_N; i++)
        assert_int_equal(rd.op[i], VL_FOP_OPENDIR);
    assert_true(res.is_done);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
    return fd;
}


/* rdt_opendir_with the bricks of old (no listing with the open). */
static vl_fd_t *
rdt_opendir(struct rd *t)
{
    return rdt_opendir_with(t, bk_answer);
}


/* One readdir (plus: readdirplus); answers its rounds; returns how many
 * rounds it took. The reply is left in res. */
static int
rdt_readdir_mode(struct rd *t, vl_fd_t *fd, off_t off, size_t size,
                 bool plus, struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(t->dht, VL_FOP_READDIR);
    struct rd_round rd;
    int rounds = 0;

    assert_non_null(req);
    VL_ARGS(req, readdir)->fd = fd;
    VL_ARGS(req, readdir)->size = size;
    VL_ARGS(req, readdir)->offset = off;
    VL_ARGS(req, readdir)->plus = plus;
    memset(res, 0, sizeof(*res));
    vl_test_wind(req, res);
    while (!res->is_done && rd_round(t, res, bk_answer, &rd))
        rounds++;
    assert_true(res->is_done);
    assert_int_equal(res->n_done, 1);
    return rounds;
}


static int
rdt_readdir(struct rd *t, vl_fd_t *fd, off_t off, size_t size,
            struct vl_test_result *res)
{
    return rdt_readdir_mode(t, fd, off, size, true, res);
}


/* Answers whatever read the bricks still have waiting (reads ahead). */
static void
rdt_drain(struct rd *t)
{
    struct vl_test_result none = {.is_done = true};
    struct rd_round rd;

    while (rd_pending(t) > 0)
        rd_round(t, &none, bk_answer, &rd);
}


static int
rdt_find(char names[][32], int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}


static void
test_readdir_one_round(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res;
    struct rd_round rd;
    vl_fd_t *fd;
    vl_req_t *req;
    int64_t last;

    bk_reset();
    for (int i = 0; i < RD_N; i++)
        bk.n_files[i] = 5;
    fd = rdt_opendir(t);
    /* opendir left one read of every brick from its start. */
    for (int i = 0; i < RD_N; i++) {
        assert_int_equal(vl_mock_pending(t->m[i]), 1);
        assert_int_equal(vl_mock_peek(t->m[i])->op, VL_FOP_READDIR);
        assert_int_equal(VL_ARGS(vl_mock_peek(t->m[i]), readdir)->offset,
                         0);
    }

    /* The first readdir waits for those reads: one round, no other read,
     * everything in it. */
    req = vl_req_new(t->dht, VL_FOP_READDIR);
    VL_ARGS(req, readdir)->fd = fd;
    VL_ARGS(req, readdir)->size = 4096;
    VL_ARGS(req, readdir)->plus = true;
    memset(&res, 0, sizeof(res));
    vl_test_wind(req, &res);
    assert_false(res.is_done);
    for (int i = 0; i < RD_N; i++)
        assert_int_equal(vl_mock_pending(t->m[i]), 1);
    assert_true(rd_round(t, &res, bk_answer, &rd));
    assert_int_equal(rd.mask, 0xf);
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    assert_true(res.reply.entries.eof);
    /* . .. sub from brick 0, 5 files from each, no lnk. */
    assert_int_equal(res.reply.entries.n, 3 + 5 * RD_N);
    assert_string_equal(res.reply.entries.ents[0].name, ".");
    assert_string_equal(res.reply.entries.ents[2].name, "sub");
    for (size_t k = 0; k < res.reply.entries.n; k++) {
        assert_string_not_equal(res.reply.entries.ents[k].name, "lnk");
        if (k >= 3)
            assert_string_not_equal(res.reply.entries.ents[k].name, "sub");
        assert_true(res.reply.entries.ents[k].has_iatt);
    }
    /* Each file listed has a linked inode that knows its brick, though
     * no inode existed before: an OPEN after the listing goes to that
     * brick alone. */
    for (size_t k = 3; k < res.reply.entries.n; k++) {
        const struct vl_dirent *e = &res.reply.entries.ents[k];
        vl_inode_t *in = vl_inode_find(t->dht->graph->itable,
                                       &e->iatt.gfid);
        int brick = e->name[1] - '0';

        assert_non_null(in);
        assert_true(dist_ictx(t->dht, in)->has_cached);
        assert_int_equal(dist_ictx(t->dht, in)->cached, brick);
        vl_inode_unref(in);
    }
    /* The last entry of brick 0 continues at the start of brick 1. */
    assert_string_equal(res.reply.entries.ents[7].name, "f0-004");
    assert_int_equal(res.reply.entries.ents[7].off,
                     (int64_t)(1ULL << DIST_COOKIE_SHIFT));
    last = res.reply.entries.ents[res.reply.entries.n - 1].off;
    vl_test_result_clear(&res);

    /* After the last entry: the end, without asking any brick. */
    assert_int_equal(rdt_readdir(t, fd, (off_t)last, 4096, &res), 0);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.entries.n, 0);
    assert_true(res.reply.entries.eof);
    vl_test_result_clear(&res);
    for (int i = 0; i < RD_N; i++)
        assert_int_equal(bk.reads[i], 1);
    vl_fd_unref(fd);
}


/* Under replicate, entries it cannot vouch for come with unsure
 * attributes (has_iatt false, is_iatt_unsure): a link file among them is
 * still left out (else a renamed file whose new name hashes elsewhere is
 * listed twice), the files are listed without attributes. */
static void
test_readdir_unsure_linkfile(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res;
    struct rd_round rd;
    vl_fd_t *fd;
    vl_req_t *req;

    bk_reset();
    bk.is_unsure = true;
    for (int i = 0; i < RD_N; i++)
        bk.n_files[i] = 5;
    fd = rdt_opendir(t);
    req = vl_req_new(t->dht, VL_FOP_READDIR);
    VL_ARGS(req, readdir)->fd = fd;
    VL_ARGS(req, readdir)->size = 4096;
    VL_ARGS(req, readdir)->plus = true;
    memset(&res, 0, sizeof(res));
    vl_test_wind(req, &res);
    assert_true(rd_round(t, &res, bk_answer, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.entries.n, 3 + 5 * RD_N);
    for (size_t k = 0; k < res.reply.entries.n; k++) {
        assert_string_not_equal(res.reply.entries.ents[k].name, "lnk");
        if (k >= 3)
            assert_false(res.reply.entries.ents[k].has_iatt);
    }
    vl_test_result_clear(&res);
    vl_fd_unref(fd);
}


/* Bricks that send their first batch with the opendir (protocol 5):
 * distribute asks every brick for it, keeps it, and the listing needs no
 * read and no round after the open; a brick whose batch did not come
 * (its read failed) is read as before. */
static void
test_readdir_opendir_listing(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    vl_fd_t *fd;

    bk_reset();
    for (int i = 0; i < RD_N; i++)
        bk.n_files[i] = 5;
    fd = rdt_opendir_with(t, bk_answer_listing);
    for (int i = 0; i < RD_N; i++) {
        assert_true(bk.size[i] >= DIST_RD_BATCH);
        assert_int_equal(vl_mock_pending(t->m[i]), 0);
    }
    /* The whole listing, from what came with the opens. */
    assert_int_equal(rdt_readdir(t, fd, 0, 4096, &res), 0);
    assert_int_equal(res.status, 0);
    assert_true(res.reply.entries.eof);
    assert_int_equal(res.reply.entries.n, 3 + 5 * RD_N);
    vl_test_result_clear(&res);
    for (int i = 0; i < RD_N; i++)
        assert_int_equal(bk.reads[i], 0);
    vl_fd_unref(fd);

    /* Brick 2's batch failed: it is read in the background at once. */
    bk_reset();
    for (int i = 0; i < RD_N; i++)
        bk.n_files[i] = 5;
    bk.fail_brick = 2;
    fd = rdt_opendir_with(t, bk_answer_listing);
    for (int i = 0; i < RD_N; i++)
        assert_int_equal(vl_mock_pending(t->m[i]), i == 2 ? 1 : 0);
    bk.fail_brick = -1;
    assert_int_equal(rdt_readdir(t, fd, 0, 4096, &res), 1);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.entries.n, 3 + 5 * RD_N);
    vl_test_result_clear(&res);
    assert_int_equal(bk.reads[2], 1);
    vl_fd_unref(fd);
}


static void
test_readdir_refills_and_resumes(void **state)
{
    enum { NF = 30, MAXN = 3 + NF * RD_N + 8, MAXC = 200 };
    struct rd *t = *state;
    struct vl_test_result res;
    static char names[MAXN][32];
    static int64_t cookie_of[MAXN];  /* cookie given with names[i] */
    int n = 0, calls = 0, rounds = 0, n_reads = 0;
    bool is_eof = false;
    off_t off = 0;
    vl_fd_t *fd;

    bk_reset();
    for (int i = 0; i < RD_N; i++)
        bk.n_files[i] = NF;
    bk.max_per_call = 7;
    fd = rdt_opendir(t);
    /* A buffer of about five entries per readdir. */
    while (!is_eof) {
        assert_true(++calls < MAXC);
        rounds += rdt_readdir(t, fd, off, 5 * 160, &res);
        assert_int_equal(res.status, 0);
        is_eof = res.reply.entries.eof;
        assert_true(res.reply.entries.n > 0 || is_eof);
        assert_true(res.reply.entries.n <= 5);
        for (size_t k = 0; k < res.reply.entries.n; k++) {
            const struct vl_dirent *e = &res.reply.entries.ents[k];

            assert_int_equal(rdt_find(names, n, e->name), -1);
            assert_true(n < MAXN);
            snprintf(names[n], sizeof(names[n]), "%s", e->name);
            cookie_of[n++] = e->off;
            off = e->off;
        }
        vl_test_result_clear(&res);
    }
    assert_int_equal(n, 3 + NF * RD_N);
    assert_int_equal(rdt_find(names, n, "lnk"), -1);
    for (int i = 0; i < RD_N; i++) {
        char want[32];

        for (int j = 0; j < NF; j++) {
            snprintf(want, sizeof(want), "f%d-%03d", i, j);
            assert_true(rdt_find(names, n, want) >= 0);
        }
        n_reads += (int)bk.reads[i];
    }
    /* Each brick's 34 entries in batches of 7: 5 reads each; reads ahead
     * overlap the listing, so fewer readdirs waited than read. */
    assert_int_equal(n_reads, 5 * RD_N);
    assert_true(rounds < n_reads);
    rdt_drain(t);

    /* seekdir: a readdir at any cookie given goes on with the next name,
     * whether the cache still holds it or the brick is asked again. */
    for (int i = 0; i + 1 < n; i += 9) {
        rdt_readdir(t, fd, (off_t)cookie_of[i], 5 * 160, &res);
        assert_int_equal(res.status, 0);
        assert_true(res.reply.entries.n > 0);
        assert_string_equal(res.reply.entries.ents[0].name, names[i + 1]);
        assert_int_equal(res.reply.entries.ents[0].off, cookie_of[i + 1]);
        vl_test_result_clear(&res);
        rdt_drain(t);
    }
    vl_fd_unref(fd);
}


static void
test_readdir_rewind_reads_again(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res;
    bool has_extra = false;
    vl_fd_t *fd;

    bk_reset();
    for (int i = 0; i < RD_N; i++)
        bk.n_files[i] = 4;
    fd = rdt_opendir(t);
    assert_int_equal(rdt_readdir(t, fd, 0, 8192, &res), 1);
    assert_true(res.reply.entries.eof);
    assert_int_equal(res.reply.entries.n, 3 + 4 * RD_N);
    vl_test_result_clear(&res);

    /* A name appears; rewinddir (offset 0) must see it. */
    bk.has_extra = true;
    assert_int_equal(rdt_readdir(t, fd, 0, 8192, &res), 1);
    assert_int_equal(res.status, 0);
    assert_true(res.reply.entries.eof);
    assert_int_equal(res.reply.entries.n, 3 + 4 * RD_N + 1);
    for (size_t k = 0; k < res.reply.entries.n; k++)
        if (strcmp(res.reply.entries.ents[k].name, "extra") == 0)
            has_extra = true;
    assert_true(has_extra);
    vl_test_result_clear(&res);
    for (int i = 0; i < RD_N; i++)
        assert_int_equal(bk.reads[i], 2);
    vl_fd_unref(fd);
}


static void
test_readdir_brick_error(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res;
    bool is_failed = false;
    off_t off = 0;
    vl_fd_t *fd;

    bk_reset();
    for (int i = 0; i < RD_N; i++)
        bk.n_files[i] = 4;
    bk.fail_brick = 2;
    fd = rdt_opendir(t);
    for (int calls = 0; calls < 10 && !is_failed; calls++) {
        rdt_readdir(t, fd, off, 8192, &res);
        if (res.status != 0) {
            assert_int_equal(res.status, -ENOTCONN);
            assert_int_equal(res.reply.entries.n, 0);
            is_failed = true;
        } else {
            /* Bricks 0 and 1 only, never a false end. */
            assert_false(res.reply.entries.eof);
            assert_true(res.reply.entries.n > 0);
            for (size_t k = 0; k < res.reply.entries.n; k++) {
                const char *name = res.reply.entries.ents[k].name;

                assert_true(name[0] != 'f' || name[1] == '0'
                            || name[1] == '1');
                off = res.reply.entries.ents[k].off;
            }
        }
        vl_test_result_clear(&res);
    }
    assert_true(is_failed);
    rdt_drain(t);
    vl_fd_unref(fd);
}


static void
test_readdir_release_frees_cache(void **state)
{
    struct rd *t = *state;
    struct vl_mem_stat before, during, after;
    struct vl_test_result res;
    vl_fd_t *fd;

    bk_reset();
    for (int i = 0; i < RD_N; i++)
        bk.n_files[i] = 20;
    bk.max_per_call = 8;
    vl_mem_stat_total(t->dht, &before);
    fd = rdt_opendir(t);
    rdt_readdir(t, fd, 0, 4 * 160, &res);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
    rdt_drain(t);
    vl_mem_stat_total(t->dht, &during);
    assert_true(during.objects > before.objects);
    vl_fd_unref(fd);
    vl_mem_stat_total(t->dht, &after);
    assert_int_equal(after.objects, before.objects);
    assert_int_equal(after.bytes, before.bytes);
}


/* Checks every file of the reply carries its name as content, the rest
 * none; returns the files seen. */
static size_t
rdt_check_content(const struct vl_test_result *res, bool want)
{
    const struct vl_reply *rp = &res->reply;
    size_t files = 0;

    for (size_t k = 0; k < rp->entries.n; k++) {
        const struct vl_dirent *e = &rp->entries.ents[k];

        assert_string_not_equal(e->name, "lnk");
        if (e->name[0] != 'f') {
            assert_false(e->has_content);
            continue;
        }
        files++;
        assert_int_equal(e->has_content, want);
        if (!want)
            continue;
        assert_non_null(rp->buf);
        assert_int_equal(e->content_len, strlen(e->name));
        assert_true(e->content_off + e->content_len <= rp->buf->size);
        assert_memory_equal(rp->buf->data + e->content_off, e->name,
                            e->content_len);
    }
    if (!want)
        assert_null(rp->buf);
    return files;
}


/* Lists fd from 0 to the end with readdirplus asking content_max,
 * checking each reply's content (want); returns the rounds it took and
 * in *files the files listed. */
static int
rdt_list_content(struct rd *t, vl_fd_t *fd, uint32_t content_max,
                 bool want, size_t *files)
{
    struct vl_test_result res = {0};
    struct rd_round rd;
    int rounds = 0;
    off_t off = 0;

    *files = 0;
    while (!res.reply.entries.eof) {
        vl_req_t *req = vl_req_new(t->dht, VL_FOP_READDIR);

        vl_test_result_clear(&res);
        VL_ARGS(req, readdir)->fd = fd;
        VL_ARGS(req, readdir)->size = 4096;
        VL_ARGS(req, readdir)->offset = off;
        VL_ARGS(req, readdir)->plus = true;
        VL_ARGS(req, readdir)->content_max = content_max;
        memset(&res, 0, sizeof(res));
        vl_test_wind(req, &res);
        while (!res.is_done && rd_round(t, &res, bk_answer, &rd))
            rounds++;
        assert_true(res.is_done);
        assert_int_equal(res.status, 0);
        *files += rdt_check_content(&res, want);
        if (res.reply.entries.n > 0)
            off = res.reply.entries.ents[res.reply.entries.n - 1].off;
        assert_true(rounds < 100);
    }
    vl_test_result_clear(&res);
    return rounds;
}


static void
test_readdir_content(void **state)
{
    struct rd *t = *state;
    size_t files;
    vl_fd_t *fd;

    bk_reset();
    for (int i = 0; i < RD_N; i++)
        bk.n_files[i] = 4;
    /* opendir's reads: nobody asked for content in this graph yet. */
    fd = rdt_opendir(t);
    for (int i = 0; i < RD_N; i++)
        assert_int_equal(
            VL_ARGS(vl_mock_peek(t->m[i]), readdir)->content_max, 0);
    /* The first listing asking for content reads them again with it. */
    rdt_list_content(t, fd, 64, true, &files);
    assert_int_equal(files, 4 * RD_N);
    rdt_drain(t);
    for (int i = 0; i < RD_N; i++) {
        assert_int_equal(bk.reads[i], 2);
        assert_int_equal(bk.content_max[i], 64);
        assert_true(bk.size[i] >= 256 * 1024);
    }
    vl_fd_unref(fd);

    /* The next opendir asks for it at once: one round, one read each. */
    bk_reset();
    for (int i = 0; i < RD_N; i++)
        bk.n_files[i] = 4;
    fd = rdt_opendir(t);
    assert_int_equal(rdt_list_content(t, fd, 64, true, &files), 1);
    assert_int_equal(files, 4 * RD_N);
    for (int i = 0; i < RD_N; i++)
        assert_int_equal(bk.reads[i], 1);
    vl_fd_unref(fd);

    /* A caller not asking gets none (the bricks were asked by hint). */
    fd = rdt_opendir(t);
    rdt_list_content(t, fd, 0, false, &files);
    assert_int_equal(files, 4 * RD_N);
    rdt_drain(t);
    vl_fd_unref(fd);
}


/* A whole names-only listing of fd in readdirs of size bytes: checks
 * every entry (no attributes, the types, no link file, "sub" and the
 * dots once) and returns how many there were. */
static size_t
rdt_list_names(struct rd *t, vl_fd_t *fd, size_t size)
{
    struct vl_test_result res;
    size_t n = 0, n_sub = 0;
    bool is_eof = false;
    off_t off = 0;

    while (!is_eof) {
        rdt_readdir_mode(t, fd, off, size, false, &res);
        assert_int_equal(res.status, 0);
        is_eof = res.reply.entries.eof;
        for (size_t k = 0; k < res.reply.entries.n; k++) {
            const struct vl_dirent *e = &res.reply.entries.ents[k];

            assert_false(e->has_iatt);
            assert_false(e->has_content);
            assert_string_not_equal(e->name, "lnk");
            if (e->name[0] == 'f')
                assert_int_equal(e->type, DT_REG);
            else
                assert_int_equal(e->type, DT_DIR);
            if (strcmp(e->name, "sub") == 0)
                n_sub++;
            off = e->off;
            n++;
        }
        vl_test_result_clear(&res);
    }
    assert_int_equal(n_sub, 1);
    return n;
}


static void
test_readdir_names_only(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res;
    uint64_t names_only;
    vl_fd_t *fd;

    bk_reset();
    for (int i = 0; i < RD_N; i++)
        bk.n_files[i] = 20;
    bk.max_per_call = 9;
    /* opendir's reads ask for attributes (nobody said otherwise yet); a
     * names-only listing answered from them gets none. */
    fd = rdt_opendir(t);
    for (int i = 0; i < RD_N; i++)
        assert_true(VL_ARGS(vl_mock_peek(t->m[i]), readdir)->plus);
    assert_int_equal(rdt_list_names(t, fd, 4096), 3 + 20 * RD_N);
    rdt_drain(t);
    /* Once the fd lists names only, the bricks are asked for names only
     * (the reads after the first batch of each brick already were). */
    names_only = atomic_load(&dist_priv(t->dht)->n_rd_names_only);
    assert_true(names_only >= RD_N);
    assert_int_equal(rdt_list_names(t, fd, 4096), 3 + 20 * RD_N);
    rdt_drain(t);
    for (int i = 0; i < RD_N; i++)
        assert_false(bk.plus[i]);
    assert_true(atomic_load(&dist_priv(t->dht)->n_rd_names_only)
                >= names_only + 3 * RD_N);

    vl_fd_unref(fd);

    /* The next opendir follows the last listing: no first batch with
     * the open (a readdirplus), its reads ask for names only. */
    bk_reset();
    for (int i = 0; i < RD_N; i++)
        bk.n_files[i] = 20;
    fd = rdt_opendir_with(t, bk_answer_listing);
    for (int i = 0; i < RD_N; i++) {
        assert_int_equal(bk.size[i], 0); /* no listing asked */
        assert_int_equal(vl_mock_pending(t->m[i]), 1);
        assert_false(VL_ARGS(vl_mock_peek(t->m[i]), readdir)->plus);
    }
    assert_int_equal(rdt_list_names(t, fd, 64 * 1024), 3 + 20 * RD_N);
    rdt_drain(t);

    /* A readdirplus of the same fd asks for attributes again, and so do
     * the opendirs after it. */
    rdt_readdir(t, fd, 0, 64 * 1024, &res);
    rdt_drain(t);
    assert_int_equal(res.status, 0);
    for (int i = 0; i < RD_N; i++)
        assert_true(bk.plus[i]);
    vl_test_result_clear(&res);
    vl_fd_unref(fd);
    fd = rdt_opendir_with(t, bk_answer_listing);
    for (int i = 0; i < RD_N; i++)
        assert_true(bk.size[i] >= DIST_RD_BATCH);
    vl_fd_unref(fd);
}


int
main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_readdir_one_round, rd_setup,
                                        rd_teardown),
        cmocka_unit_test_setup_teardown(test_readdir_unsure_linkfile,
                                        rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_readdir_opendir_listing,
                                        rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_readdir_refills_and_resumes,
                                        rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_readdir_rewind_reads_again,
                                        rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_readdir_brick_error, rd_setup,
                                        rd_teardown),
        cmocka_unit_test_setup_teardown(test_readdir_release_frees_cache,
                                        rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_readdir_content, rd_setup,
                                        rd_teardown),
        cmocka_unit_test_setup_teardown(test_readdir_names_only, rd_setup,
                                        rd_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("dist-readdir", tests, NULL, NULL);
}
