/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gen-keys: prints the keys `mortar volume set` accepts, one a line:
 * each settable option as PREFIX.KEY, then its GlusterFS aliases. They
 * are read from the same tables mortard resolves keys with
 * (md_settable_classes, mortard/validate.c), so the bash completion made
 * from this list (extras/completion/mortar.in) offers what mortard takes.
 */
#include "config.h"

#include <stdio.h>

#include "mortard.h"
#include "xlators/builtin.h"


int
main(void)
{
    const vl_xlator_class_t *const *classes;

    if (vl_xlators_register_builtin() != 0) {
        fprintf(stderr, "gen-keys: cannot register the translators\n");
        return 1;
    }
    classes = md_settable_classes();
    for (size_t i = 0; classes[i] != NULL; i++)
        for (const vl_option_t *o = classes[i]->options;
             o != NULL && o->key != NULL; o++) {
            if (!(o->flags & VL_OPT_SETTABLE))
                continue;
            printf("%s.%s\n", classes[i]->prefix, o->key);
            for (size_t a = 0; a < VL_ARRAY_SIZE(o->aliases); a++)
                if (o->aliases[a] != NULL)
                    printf("%s\n", o->aliases[a]);
        }
    return ferror(stdout) || fflush(stdout) != 0 ? 1 : 0;
}
