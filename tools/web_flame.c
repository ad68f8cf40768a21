/* The flame graph of a stored run's trace (web_flame.h). */
#define _GNU_SOURCE /* memfd_create */
#include "web_flame.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_view.h"
#include "wbuf.h"

#define FLAME_LIMIT (64ull << 20) /* an SVG larger than this does not render in a browser */

/* One export into fd with weight; 0, PTC_VIEW_E_UNTIMED, or -1. */
static int export_svg(const char *trace, int fd, int weight)
{
    const struct ptc_view_format *svg = ptc_view_format_find("svg");
    if (!svg || ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
        return -1;
    struct ptc_wbuf w;
    if (ptc_wbuf_init(&w, fd, 1 << 20))
        return -1;
    w.limit = FLAME_LIMIT;
    struct cli_args a = {.cmd = "serve", .path = trace, .threads = 1};
    struct cli_view_run vr = {.a = &a, .fmt = svg, .skip_aggregates = 1};
    vr.opts.out = &w;
    vr.opts.weight = weight;
    vr.opts.title = trace;
    int st = cli_view_run(&vr);
    int rc = 0;
    if (vr.s && st && vr.view_status == PTC_VIEW_E_UNTIMED)
        rc = PTC_VIEW_E_UNTIMED;
    else if (st || ptc_wbuf_flush(&w) || w.over_limit)
        rc = -1;
    ptc_wbuf_free(&w);
    cli_view_free(&vr);
    return rc;
}

int web_flame_svg(const char *trace, char **svg, size_t *len, char *err, size_t n)
{
    struct stat sb;
    if (stat(trace, &sb)) {
        snprintf(err, n, "%s", strerror(errno));
        return 1;
    }
    /* the view writes to a descriptor: an anonymous file in memory */
    int fd = memfd_create("ptcall-flame", MFD_CLOEXEC);
    if (fd < 0) {
        snprintf(err, n, "memfd_create: %s", strerror(errno));
        return -1;
    }
    int rc = export_svg(trace, fd, PTC_WEIGHT_SELF);
    if (rc == PTC_VIEW_E_UNTIMED)
        rc = export_svg(trace, fd, PTC_WEIGHT_CALLS);
    if (rc) {
        close(fd);
        snprintf(err, n, "%s cannot be decoded into a flame graph (the server's standard error "
                         "says why)", trace);
        return -1;
    }
    off_t size = lseek(fd, 0, SEEK_END);
    char *p = size >= 0 ? malloc((size_t)size + 1) : NULL;
    if (!p || pread(fd, p, (size_t)size, 0) != size) {
        free(p);
        close(fd);
        snprintf(err, n, "cannot read the flame graph back: %s", strerror(errno));
        return -1;
    }
    close(fd);
    p[size] = 0;
    *svg = p;
    *len = (size_t)size;
    return 0;
}
