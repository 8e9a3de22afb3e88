/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * profile: a brick's answer to mortard's `volume profile` / `volume top`
 * (xlators/debug/io-stats/README.md, "The channel").
 *
 * mortard sends FSD_PROFILE_SIGNAL with sigqueue; the value carries a
 * request number (bits 4 and up) and an io-stats dump mode (bits 0-3).
 * The main thread's sigwait loop calls fsd_profile_dump, which writes
 * DIR/mortarfsd.<pid>.profile: "mortar-profile 1", "seq N", the records
 * of ios_dump_profile and "end". The file is written under a hidden
 * temporary name, fsync'd and renamed, so mortard never reads half of
 * one; a graph without io-stats (a brick started before it existed) or a
 * bad mode gets an "error" record, so mortard can say why at once.
 * Threads: the main thread (it alone manages the graph).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsd.h"
#include "xlators/debug/io-stats/io-stats.h"


int
fsd_profile_dump(vl_graph_t *graph, const char *dir, int value, char *path,
                 size_t len)
{
    char tmp[4200];
    unsigned mode = (unsigned)value & FSD_PROFILE_MODE_MASK;
    vl_xlator_t *xl = ios_find(graph);
    FILE *f;
    int fd, rc = 0;

    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return -errno;
    snprintf(path, len, "%s/mortarfsd.%ld.profile", dir, (long)getpid());
    snprintf(tmp, sizeof(tmp), "%s/.mortarfsd.%ld.profile.XXXXXX", dir,
             (long)getpid());
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return -errno;
    f = fdopen(fd, "w");
    if (f == NULL) {
        rc = -errno;
        close(fd);
        unlink(tmp);
        return rc;
    }
    fprintf(f, "mortar-profile %d\nseq %u\n", IOS_DUMP_VERSION,
            (unsigned)value >> FSD_PROFILE_SEQ_SHIFT);
    if (xl == NULL)
        fprintf(f, "error this brick has no debug/io-stats translator "
                "(restart it to profile it)\n");
    else if (mode >= IOS_DUMP_MODE_N)
        fprintf(f, "error unknown request %u\n", mode);
    else
        ios_dump_profile(xl, f, (enum ios_dump_mode)mode);
    fprintf(f, "end\n");
    if (fflush(f) != 0 || fsync(fd) != 0)
        rc = -errno;
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc != 0)
        unlink(tmp);
    return rc;
}
