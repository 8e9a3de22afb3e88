/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-volfile: libvol's volfile parser (vl_volfile_parse), which reads
 * what mortard serves to clients (GETSPEC), what a client's
 * --volfile-server sends back, and files on disk.
 *
 * Input: the text, not NUL-terminated (the parser takes a length). A
 * volfile that parses must have a sane shape (every volume named and
 * typed, subvolumes defined above), be written back by vl_volfile_write
 * and parse again into the same volumes; vl_volfile_top must answer
 * either way. Everything is freed (LeakSanitizer checks).
 */
#include "config.h"

#include <string.h>

#include "fuzz.h"
#include "vol/vol.h"


static void
same_volfile(const vl_volfile_t *a, const vl_volfile_t *b)
{
    FUZZ_CHECK(a->n_vols == b->n_vols);
    for (size_t i = 0; i < a->n_vols; i++) {
        const struct vl_volfile_vol *x = &a->vols[i], *y = &b->vols[i];

        FUZZ_CHECK(strcmp(x->name, y->name) == 0);
        FUZZ_CHECK(strcmp(x->type, y->type) == 0);
        FUZZ_CHECK(x->n_opts == y->n_opts);
        for (size_t k = 0; k < x->n_opts; k++) {
            FUZZ_CHECK(strcmp(x->opts[k].key, y->opts[k].key) == 0);
            FUZZ_CHECK(strcmp(x->opts[k].value, y->opts[k].value) == 0);
        }
        FUZZ_CHECK(x->n_subvols == y->n_subvols);
        for (size_t k = 0; k < x->n_subvols; k++)
            FUZZ_CHECK(strcmp(x->subvols[k], y->subvols[k]) == 0);
    }
}


int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    vl_global_init();
    vl_log_set_level(VL_LOG_NONE);
    return 0;
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vl_err_t err = {{0}};
    vl_volfile_t *vf, *again;
    char *text = NULL;
    size_t text_len = 0;
    FILE *out;

    vf = vl_volfile_parse((const char *)data, size, "fuzz.vol", &err);
    if (vf == NULL) {
        FUZZ_CHECK(err.msg[0] != '\0');
        return 0;
    }
    FUZZ_CHECK(vf->n_vols > 0);
    for (size_t i = 0; i < vf->n_vols; i++) {
        const struct vl_volfile_vol *v = &vf->vols[i];

        FUZZ_CHECK(v->name != NULL && v->name[0] != '\0');
        FUZZ_CHECK(v->type != NULL);
        for (size_t k = 0; k < v->n_subvols; k++) {
            size_t j;

            for (j = 0; j < i; j++)
                if (strcmp(vf->vols[j].name, v->subvols[k]) == 0)
                    break;
            FUZZ_CHECK(j < i);
        }
    }
    err.msg[0] = '\0';
    if (vl_volfile_top(vf, &err) == NULL)
        FUZZ_CHECK(err.msg[0] != '\0');

    out = open_memstream(&text, &text_len);
    FUZZ_CHECK(out != NULL);
    FUZZ_CHECK(vl_volfile_write(vf, out) == 0);
    FUZZ_CHECK(fclose(out) == 0);
    again = vl_volfile_parse(text, text_len, "again.vol", &err);
    if (again == NULL)
        fprintf(stderr, "written volfile does not parse: %s\n", err.msg);
    FUZZ_CHECK(again != NULL);
    same_volfile(vf, again);
    vl_volfile_free(again);
    free(text);
    vl_volfile_free(vf);
    return 0;
}
