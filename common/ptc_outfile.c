/* Output files written whole or not at all (ptc_outfile.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ptc_outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int ptc_outfile_open(struct ptc_outfile *of, const char *path, mode_t mode)
{
    struct stat st;
    of->path = path;
    of->fd = -1;
    of->tmp[0] = 0;
    of->direct = 0;
    /* a symbolic link is followed here (/dev/stdout is one): what counts is what it names */
    if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            return -EISDIR;
        of->fd = open(path, O_WRONLY | O_CLOEXEC);
        if (of->fd < 0)
            return -errno;
        of->direct = 1;
        return 0;
    }
    if ((size_t)snprintf(of->tmp, sizeof(of->tmp), "%s.tmp-XXXXXX", path) >= sizeof(of->tmp))
        return -ENAMETOOLONG;
    of->fd = mkostemp(of->tmp, O_CLOEXEC);
    if (of->fd < 0) {
        of->tmp[0] = 0;
        return -errno;
    }
    if (fchmod(of->fd, mode & ~(mode_t)07000)) { /* mkstemp makes 0600 */
        int e = errno;
        ptc_outfile_abort(of);
        return -e;
    }
    return 0;
}

int ptc_outfile_write(struct ptc_outfile *of, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t w = write(of->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int ptc_outfile_commit(struct ptc_outfile *of)
{
    int e = 0;
    if (!of->direct && fsync(of->fd) && errno != EINVAL)
        e = -errno;
    if (close(of->fd) && !e)
        e = -errno;
    of->fd = -1;
    if (!of->direct && !e && rename(of->tmp, of->path))
        e = -errno;
    if (e && !of->direct)
        unlink(of->tmp);
    of->tmp[0] = 0;
    return e;
}

void ptc_outfile_abort(struct ptc_outfile *of)
{
    if (of->fd >= 0)
        close(of->fd);
    of->fd = -1;
    if (!of->direct && of->tmp[0])
        unlink(of->tmp);
    of->tmp[0] = 0;
}
