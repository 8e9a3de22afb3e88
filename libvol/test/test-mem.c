/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-mem: accounting per owner and type, realloc, the accounting struct
 * outliving its translator, buffers, and fault injection. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core.h"
#include "vl-test.h"

static const char *const t_types[] = {"misc", "pages", NULL};
static const vl_xlator_class_t cls_mem = {
    .abi = VL_XLATOR_ABI, .type = "test/mem", .flags = VL_XL_LEAF,
    .mem_types = t_types,
};


static void
test_core_accounting(void **state)
{
    struct vl_mem_stat a;
    struct vl_mem_stat b;
    char *p;
    char *s;

    vl_mem_stat_total(NULL, &a);
    p = vl_malloc(NULL, 100, VL_MT_MISC);
    s = vl_strndup(NULL, "abcdef", 3, VL_MT_OPTION);
    assert_string_equal(s, "abc");
    vl_mem_stat_total(NULL, &b);
    assert_int_equal(b.objects - a.objects, 2);
    assert_int_equal(b.bytes - a.bytes, 104);
    p = vl_realloc(p, 1000);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 16, 0);
    vl_mem_stat_total(NULL, &b);
    assert_int_equal(b.bytes - a.bytes, 1004);
    vl_free(p);
    vl_free(s);
    vl_free(NULL);
    vl_mem_stat_total(NULL, &b);
    assert_int_equal(b.objects, a.objects);
    assert_int_equal(b.bytes, a.bytes);
}


static void
test_xlator_accounting_and_dump(void **state)
{
    vl_err_t err = {{0}};
    struct vl_test_graph *g;
    vl_xlator_t *xl;
    struct vl_mem_stat st;
    void *kept;
    void *p;
    char *text = NULL;
    size_t len = 0;
    FILE *f;

    assert_int_equal(vl_registry_add(&cls_mem), 0);
    g = vl_test_graph_new("volume x\n type test/mem\nend-volume\n", &err);
    assert_non_null(g);
    xl = vl_test_graph_xl(g, "x");
    p = vl_calloc(xl, 10, 10, 1);
    kept = vl_malloc(xl, 7, 99); /* unknown type: counted as misc */
    vl_mem_stat_total(xl, &st);
    assert_int_equal(st.objects, 2);
    assert_int_equal(st.bytes, 107);

    f = open_memstream(&text, &len);
    vl_statedump_write(f);
    fclose(f);
    assert_non_null(strstr(text, "[xlator x]\n"));
    assert_non_null(strstr(text, "mem.pages.bytes=100\nmem.pages.objects=1"));
    assert_non_null(strstr(text, "mem.misc.bytes=7\n"));
    free(text);
    vl_free(p);

    /* The translator goes away with a block still allocated: freeing the
     * block later must still find valid accounting. */
    vl_test_graph_free(g);
    vl_free(kept);
}


static void
test_buf(void **state)
{
    vl_buf_t *b = vl_buf_new(10000);

    assert_non_null(b);
    assert_int_equal((uintptr_t)b->data % 4096, 0);
    assert_int_equal(b->size, 10000);
    memset(b->data, 1, b->size);
    assert_ptr_equal(vl_buf_ref(b), b);
    vl_buf_unref(b);
    assert_int_equal(atomic_load(&b->refs), 1);
    vl_buf_unref(b);
    vl_buf_unref(NULL);
}


/* Large blocks are recycled: the next buffer of the same class gets the
 * block back (already faulted in), aligned, and with the asked size. */
static void
test_buf_pool_reuse(void **state)
{
    vl_buf_t *a = vl_buf_new(VL_MiB);
    vl_buf_t *b;
    char *block;

    assert_non_null(a);
    block = a->data;
    memset(a->data, 7, a->size);
    vl_buf_unref(a);
    b = vl_buf_new(VL_MiB - 100);
    assert_non_null(b);
#ifndef __SANITIZE_ADDRESS__ /* ASan builds do not recycle (see buf.c) */
    assert_ptr_equal(b->data, block);
#endif
    assert_int_equal(b->size, VL_MiB - 100);
    assert_int_equal((uintptr_t)b->data % 4096, 0);
    vl_buf_unref(b);
    /* Another class does not get it. */
    b = vl_buf_new(4 * VL_MiB);
    assert_non_null(b);
    assert_ptr_not_equal(b->data, block);
    memset(b->data, 1, b->size);
    vl_buf_unref(b);
}


static void
test_fault_injection(void **state)
{
    void *p[4];
    int i;

    vl_mem_fail_at(3);
    assert_int_equal(vl_mem_alloc_count(), 0);
    for (i = 0; i < 4; i++)
        p[i] = vl_malloc(NULL, 8, 0);
    assert_non_null(p[0]);
    assert_non_null(p[1]);
    assert_null(p[2]);
    assert_non_null(p[3]); /* only once */
    assert_int_equal(vl_mem_alloc_count(), 4);
    for (i = 0; i < 4; i++)
        vl_free(p[i]);
    vl_mem_fail_at(1);
    assert_null(vl_buf_new(1));
    vl_mem_fail_at(2);
    assert_null(vl_buf_new(1)); /* the data allocation */
    vl_mem_fail_at(1);
    assert_null(vl_strdup(NULL, "x", 0));
    vl_mem_fail_at(0);
    assert_non_null(p[0] = vl_calloc(NULL, 1, 1, 0));
    vl_free(p[0]);
    assert_null(vl_calloc(NULL, SIZE_MAX / 2, 4, 0)); /* overflow */
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_accounting),
        cmocka_unit_test(test_xlator_accounting_and_dump),
        cmocka_unit_test(test_buf),
        cmocka_unit_test(test_buf_pool_reuse),
        cmocka_unit_test(test_fault_injection),
    };

    vl_global_init();
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
