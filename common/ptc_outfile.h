/* Writing an output file the user named (exports, HTML reports, coverage files): never half a
 * file, and never a replaced device. */
#ifndef PTC_OUTFILE_H
#define PTC_OUTFILE_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

struct ptc_outfile {
    int fd;
    int direct;               /* 1: writing into path itself (a device, FIFO or link to one) */
    const char *path;
    char tmp[PATH_MAX + 16];  /* the temporary file beside path (direct == 0) */
};

/* Opens path for writing. A new name or a regular file is written through a temporary file
 * beside it (mode `mode`), renamed over it by ptc_outfile_commit, so readers never see half a
 * file. Anything else that exists (a character device such as /dev/null or /dev/stdout's
 * target, a FIFO) is written into as it is, never replaced: renaming over /dev/null as root
 * would remove the device for the whole machine. Returns 0, or -errno. */
int ptc_outfile_open(struct ptc_outfile *of, const char *path, mode_t mode);

/* Writes n bytes (all of them, across short writes and EINTR). Returns 0, or -errno. */
int ptc_outfile_write(struct ptc_outfile *of, const void *buf, size_t n);

/* Finishes the file: flushes it to disk and renames it into place. Returns 0, or -errno; the
 * temporary file is removed either way. */
int ptc_outfile_commit(struct ptc_outfile *of);

/* Gives up: closes and removes the temporary file (path is left as it was). */
void ptc_outfile_abort(struct ptc_outfile *of);

#endif
