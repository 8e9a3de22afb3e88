/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-posix-rchecksum: storage/posix's RCHECKSUM (posix-rchecksum.c)
 * against files on a real brick: per-block SHA-256 digests equal the
 * digests of the bytes on disk; a hole is answered HOLE | ZERO, written
 * zeros ZERO, both without a digest; a short last block is digested as
 * far as the file goes and nothing is answered after EOF; a range that
 * ends inside a block; a range wholly past EOF (no blocks, the size);
 * the largest call (1024 blocks); every bound refused with -EINVAL; a
 * file that shrank after its size was taken ends at the short read.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "posix-test.h"
#include "../posix.h"

#define KiB 1024u


static void
sha256(const void *data, size_t len, uint8_t out[VL_RCHECKSUM_DIGEST_LEN])
{
    unsigned int n = 0;

    assert_int_equal(EVP_Digest(data, len, out, &n, EVP_sha256(), NULL), 1);
    assert_int_equal(n, VL_RCHECKSUM_DIGEST_LEN);
}


static void
fill_pattern(unsigned char *p, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        p[i] = (unsigned char)((i * 131u + seed * 7u) % 251u + 1u);
}


static int
rck(struct pt *t, vl_fd_t *fd, off_t off, uint32_t len, uint32_t bs,
    struct vl_reply *r /* OUT, cleared by the caller */)
{
    union vl_fop_args a = {0};

    a.rchecksum.fd = fd;
    a.rchecksum.offset = off;
    a.rchecksum.len = len;
    a.rchecksum.block_size = bs;
    return pt_call(t, VL_FOP_RCHECKSUM, &a, r);
}


/* The block record s covers image[start, start + len): its digest, or
 * ZERO without a digest when those bytes are all zero. */
static void
check_block(const struct vl_block_sum *s, const unsigned char *image,
            off_t start, uint32_t len)
{
    static const uint8_t zero[VL_RCHECKSUM_DIGEST_LEN];
    uint8_t want[VL_RCHECKSUM_DIGEST_LEN];
    bool is_zero = true;

    assert_int_equal(s->len, len);
    for (uint32_t i = 0; i < len && is_zero; i++)
        is_zero = image[start + i] == 0;
    if (is_zero) {
        assert_true(s->flags & VL_RCHECKSUM_ZERO);
        assert_memory_equal(s->digest, zero, sizeof(zero));
        return;
    }
    assert_int_equal(s->flags, 0);
    sha256(image + start, len, want);
    assert_memory_equal(s->digest, want, sizeof(want));
}


/* A file of 16 KiB blocks: data, written zeros, data + zeros, a hole of
 * eight blocks, then a 1000-byte tail. */
static void
test_data_hole_tail(void **state)
{
    struct pt *t = *state;
    const size_t size = 11 * 16 * KiB + 1000;
    unsigned char *image = calloc(1, size);
    struct vl_reply r;
    vl_fd_t *fd = NULL;

    assert_non_null(image);
    fill_pattern(image, 16 * KiB, 1);
    fill_pattern(image + 32 * KiB, 4 * KiB, 2);
    fill_pattern(image + 11 * 16 * KiB, 1000, 3);
    assert_int_equal(pt_create(t, t->root, "f", O_RDWR, 0644, NULL, &fd), 0);
    /* Blocks 0-2 written (block 1 with zeros), 3-10 never: a hole. */
    assert_int_equal(pt_write(t, fd, 0, image, 48 * KiB, 0), 0);
    assert_int_equal(pt_write(t, fd, 11 * 16 * KiB, image + 11 * 16 * KiB,
                              1000, 0),
                     0);
    /* The range goes past EOF: blocks after it are not answered. */
    assert_int_equal(rck(t, fd, 0, 1024 * KiB, 16 * KiB, &r), 0);
    assert_int_equal(r.iatt.size, size);
    assert_int_equal(r.n_sums, 12);
    assert_non_null(r.sums);
    for (uint32_t i = 0; i < 11; i++)
        check_block(&r.sums[i], image, i * 16 * KiB, 16 * KiB);
    check_block(&r.sums[11], image, 11 * 16 * KiB, 1000);
    assert_int_equal(r.sums[0].flags, 0);
    /* Written zeros are data: read, found zero, not a hole. */
    assert_int_equal(r.sums[1].flags, VL_RCHECKSUM_ZERO);
    assert_int_equal(r.sums[2].flags, 0);
    /* ext4 and tmpfs answer SEEK_DATA: the hole is known as one. */
    for (uint32_t i = 3; i < 11; i++)
        assert_int_equal(r.sums[i].flags,
                         VL_RCHECKSUM_ZERO | VL_RCHECKSUM_HOLE);
    vl_reply_clear(&r);
    /* A range that ends inside a block: its last block is cut there. */
    assert_int_equal(rck(t, fd, 16 * KiB, 18 * KiB, 4 * KiB, &r), 0);
    assert_int_equal(r.n_sums, 5);
    for (uint32_t i = 0; i < 4; i++)
        check_block(&r.sums[i], image, 16 * KiB + i * 4 * KiB, 4 * KiB);
    check_block(&r.sums[4], image, 32 * KiB, 2 * KiB);
    vl_reply_clear(&r);
    /* Wholly past EOF: success, no blocks, the size tells why. */
    assert_int_equal(rck(t, fd, 1024 * KiB, 64 * KiB, 64 * KiB, &r), 0);
    assert_int_equal(r.n_sums, 0);
    assert_null(r.sums);
    assert_int_equal(r.iatt.size, size);
    assert_memory_equal(&r.iatt.gfid, &fd->inode->gfid, sizeof(vl_gfid_t));
    vl_reply_clear(&r);
    vl_fd_unref(fd);
    free(image);
}


/* The largest call: 4 MiB in 1024 blocks of 4 KiB, every one data. */
static void
test_largest_call(void **state)
{
    struct pt *t = *state;
    const size_t size = VL_RCHECKSUM_LEN_MAX;
    unsigned char *image = malloc(size);
    struct vl_reply r;
    vl_fd_t *fd = NULL;

    assert_non_null(image);
    fill_pattern(image, size, 9);
    for (size_t b = 0; b < size / (4 * KiB); b++)
        image[b * 4 * KiB] = (unsigned char)b; /* no two blocks alike */
    assert_int_equal(pt_create(t, t->root, "big", O_RDWR, 0644, NULL, &fd),
                     0);
    assert_int_equal(pt_write(t, fd, 0, image, size, 0), 0);
    assert_int_equal(rck(t, fd, 0, VL_RCHECKSUM_LEN_MAX,
                         VL_RCHECKSUM_BLOCK_MIN, &r),
                     0);
    assert_int_equal(r.n_sums, VL_RCHECKSUM_BLOCKS_MAX);
    for (uint32_t i = 0; i < r.n_sums; i++)
        check_block(&r.sums[i], image, (off_t)i * 4 * KiB, 4 * KiB);
    vl_reply_clear(&r);
    /* And in 1 MiB blocks. */
    assert_int_equal(rck(t, fd, 0, VL_RCHECKSUM_LEN_MAX,
                         VL_RCHECKSUM_BLOCK_MAX, &r),
                     0);
    assert_int_equal(r.n_sums, 4);
    for (uint32_t i = 0; i < r.n_sums; i++)
        check_block(&r.sums[i], image, (off_t)i * 1024 * KiB, 1024 * KiB);
    vl_reply_clear(&r);
    vl_fd_unref(fd);
    free(image);
}


/* Every bound answers -EINVAL, through the fop and the check alone. */
static void
test_bad_arguments(void **state)
{
    struct pt *t = *state;
    static const struct {
        off_t off;
        uint32_t len;
        uint32_t bs;
    } bad[] = {
        {0, 8192, 2048},                            /* block too small */
        {0, 8192, 2 * 1024 * 1024},                 /* block too large */
        {0, 8192, 12288},                           /* not a power of 2 */
        {0, 8192, 0},
        {0, 0, 4096},                               /* empty range */
        {0, VL_RCHECKSUM_LEN_MAX + 1, 4096},        /* range too long */
        {4096, 8192, 8192},                         /* unaligned offset */
        {-4096, 8192, 4096},                        /* negative offset */
        {INT64_MAX - 4095, 8192, 4096},             /* end overflows */
    };
    unsigned char data[8192];
    struct vl_reply r;
    vl_fd_t *fd = NULL;

    memset(data, 7, sizeof(data));
    assert_int_equal(pt_create(t, t->root, "f", O_RDWR, 0644, NULL, &fd), 0);
    assert_int_equal(pt_write(t, fd, 0, data, sizeof(data), 0), 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(vl_rchecksum_check(bad[i].off, bad[i].len,
                                            bad[i].bs),
                         -EINVAL);
        assert_int_equal(rck(t, fd, bad[i].off, bad[i].len, bad[i].bs, &r),
                         -EINVAL);
        assert_int_equal(r.n_sums, 0);
        vl_reply_clear(&r);
    }
    /* The edges themselves are accepted. */
    assert_int_equal(vl_rchecksum_check(0, VL_RCHECKSUM_LEN_MAX,
                                        VL_RCHECKSUM_BLOCK_MIN),
                     0);
    assert_int_equal(vl_rchecksum_check(1024 * 1024, 1,
                                        VL_RCHECKSUM_BLOCK_MAX),
                     0);
    vl_fd_unref(fd);
}


/* A file that shrank after its size was taken: the block that meets the
 * new EOF is digested as far as it goes and the answer ends there. */
static void
test_shrunk_file_ends_at_short_read(void **state)
{
    char path[] = "/tmp/posix-rck-XXXXXX";
    unsigned char data[10000];
    unsigned char buf[4096];
    struct vl_block_sum out[5];
    uint32_t n = 99;
    int fd;

    (void)state;
    fill_pattern(data, sizeof(data), 5);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, sizeof(data)), (ssize_t)sizeof(data));
    /* Told 20000 bytes, the file has 10000. */
    assert_int_equal(posix_rchecksum_blocks(fd, 0, 20000, 4096, 20000, buf,
                                            out, &n),
                     0);
    assert_int_equal(n, 3);
    check_block(&out[0], data, 0, 4096);
    check_block(&out[1], data, 4096, 4096);
    check_block(&out[2], data, 8192, 10000 - 8192);
    close(fd);
    unlink(path);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_data_hole_tail, pt_setup,
                                        pt_teardown),
        cmocka_unit_test_setup_teardown(test_largest_call, pt_setup,
                                        pt_teardown),
        cmocka_unit_test_setup_teardown(test_bad_arguments, pt_setup,
                                        pt_teardown),
        cmocka_unit_test(test_shrunk_file_ends_at_short_read),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
