/* The flame graph of a stored run's trace (web_flame.h). */
#define _GNU_SOURCE /* memfd_create */
#include "web_flame.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_view.h"
#include "db_hash.h"
#include "views.h"
#include "wbuf.h"

#define FLAME_LIMIT (64ull << 20) /* an SVG larger than this does not render in a browser */

/* The decoder's read hook and the format of the export running on this thread (the server
 * answers on many threads at once): set by with_hash() for the session that export_view()
 * makes. */
static _Thread_local struct db_hash_stream *decode_hash;
static _Thread_local const struct ptc_view_format *decode_fmt;

/* The format's make, and the content hash of every byte the decoder reads (as `db add`
 * makes it). */
static void *with_hash(const struct ptc_view_opts *o, const struct ptc_output_ops **ops)
{
    if (decode_hash)
        ptc_session_set_read_hook((struct ptc_session *)o->s, db_hash_stream_update,
                                  decode_hash);
    return decode_fmt->make(o, ops);
}

/* One export of path (titled trace) as format fname into fd with weight (flame-json: the
 * trees of thread): 0, PTC_VIEW_E_UNTIMED, 1 when the bytes decoded are not the stored ones
 * (hex, bytes), 4 when no tree matched thread, or -1. */
static int export_view(const char *path, const char *trace, const char *hex, uint64_t bytes,
                       int fd, const char *fname, int weight, const char *thread)
{
    const struct ptc_view_format *fmt = ptc_view_format_find(fname);
    if (!fmt || ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
        return -1;
    decode_fmt = fmt;
    struct ptc_wbuf w;
    if (ptc_wbuf_init(&w, fd, 1 << 20))
        return -1;
    if (!(decode_hash = db_hash_stream_new())) {
        ptc_wbuf_free(&w);
        return -1;
    }
    w.limit = FLAME_LIMIT;
    struct cli_args a = {.cmd = "serve", .path = path, .threads = 1};
    struct cli_view_run vr = {.a = &a, .make = with_hash, .skip_aggregates = 1};
    vr.opts.out = &w;
    vr.opts.weight = weight;
    vr.opts.title = trace;
    /* the pages show the SVG as an <img>, which runs no script, and flame.svg is answered
     * under a Content-Security-Policy that allows no inline script: written without one */
    vr.opts.svg_static = 1;
    vr.opts.flame_thread = thread;
    int st = cli_view_run(&vr);
    char got[DB_HASH_HEX];
    uint64_t n = 0;
    db_hash_stream_finish(decode_hash, got, &n);
    decode_hash = NULL;
    int rc = 0;
    if (n != bytes || strcmp(got, hex)) /* changed since it was hashed below */
        rc = 1;
    else if (vr.s && st && vr.view_status == PTC_VIEW_E_UNTIMED)
        rc = PTC_VIEW_E_UNTIMED;
    else if (st || ptc_wbuf_flush(&w) || w.over_limit)
        rc = -1;
    else if (fmt->make == ptc_view_flametree && !ptc_view_flametree_found(vr.view))
        rc = 4;
    ptc_wbuf_free(&w);
    cli_view_free(&vr);
    return rc;
}

int web_say_decodes;

void web_decode_said(const char *trace, const char *what)
{
    if (web_say_decodes) /* one call, one line: lines of threads at once do not mix */
        fprintf(stderr, "ptcall serve: decoding %s for %s\n", trace, what);
}

int web_trace_same_file(int fd, const char *hex, uint64_t bytes)
{
    struct stat sb;
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size != bytes)
        return 0;
    struct db_hash_stream *h = db_hash_stream_new();
    if (!h)
        return 0;
    static const size_t chunk = 1 << 20;
    char *buf = malloc(chunk);
    ssize_t k = -1;
    while (buf && (k = read(fd, buf, chunk)) > 0)
        db_hash_stream_update(h, buf, (size_t)k);
    free(buf);
    char got[DB_HASH_HEX];
    uint64_t n = 0;
    db_hash_stream_finish(h, got, &n);
    return k == 0 && n == bytes && !strcmp(got, hex);
}

int web_trace_same(const char *trace, const char *content_hash, uint64_t bytes)
{
    /* O_NONBLOCK: a FIFO at the path is refused by its type, not waited on */
    int fd = open(trace, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int same = web_trace_same_file(fd, content_hash, bytes);
    close(fd);
    return same;
}

int web_trace_open(const char *trace, const char *content_hash, uint64_t bytes, char *src,
                   size_t srcn, char *err, size_t n)
{
    /* the database keeps figures, not traces: whatever is at the path now (another
     * recording to the same name, a file that is not a trace) is not this run's; missing,
     * replaced and unreadable say the same, so that an answer never tells whether a path
     * exists or what it holds */
    int in = open(trace, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (in < 0 || !web_trace_same_file(in, content_hash, bytes)) {
        if (in >= 0)
            close(in);
        snprintf(err, n, "the trace file this run was stored from is no longer the same file "
                         "(moved, replaced or unreadable)");
        return -1;
    }
    /* the decoder reads the file just checked (not what the path may name by now), and
     * hashes what it reads again, for a file changed in place meanwhile */
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", in);
    snprintf(src, srcn, "%s", access(path, R_OK) ? trace : path);
    return in;
}

/* The export of format fname made from the stored trace (the checks of web_flame_fn). svg
 * falls back to calls on an untimed trace; flame-json says 2 then, 3 for an unknown thread. */
static int flame_make(const char *trace, const char *content_hash, uint64_t bytes,
                      const char *fname, int weight, const char *thread, char **out,
                      size_t *len, char *err, size_t n)
{
    char src[PATH_MAX];
    int in = web_trace_open(trace, content_hash, bytes, src, sizeof(src), err, n);
    if (in < 0)
        return 1;
    /* the view writes to a descriptor: an anonymous file in memory */
    web_decode_said(trace, fname);
    int fd = memfd_create("ptcall-flame", MFD_CLOEXEC);
    if (fd < 0) {
        snprintf(err, n, "memfd_create: %s", strerror(errno));
        close(in);
        return -1;
    }
    int rc = export_view(src, trace, content_hash, bytes, fd, fname, weight, thread);
    if (rc == PTC_VIEW_E_UNTIMED && !strcmp(fname, "svg"))
        rc = export_view(src, trace, content_hash, bytes, fd, fname, PTC_WEIGHT_CALLS, thread);
    close(in);
    if (rc == 1) {
        close(fd);
        snprintf(err, n, "the trace file this run was stored from is no longer the same file "
                         "(moved, replaced or unreadable)");
        return 1;
    }
    if (rc == PTC_VIEW_E_UNTIMED || rc == 4) {
        close(fd);
        snprintf(err, n, rc == 4 ? "no such thread" : "the trace has no times");
        return rc == 4 ? 3 : 2;
    }
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
    *out = p;
    *len = (size_t)size;
    return 0;
}

int web_flame_svg(const char *trace, const char *content_hash, uint64_t bytes, char **svg,
                  size_t *len, char *err, size_t n)
{
    return flame_make(trace, content_hash, bytes, "svg", PTC_WEIGHT_SELF, NULL, svg, len, err,
                      n);
}

int web_flame_json(const char *trace, const char *content_hash, uint64_t bytes,
                   const char *thread, const char *weight, char **json, size_t *len, char *err,
                   size_t n)
{
    int wt = !strcmp(weight, "calls") ? PTC_WEIGHT_CALLS :
             !strcmp(weight, "total") ? PTC_WEIGHT_TOTAL : PTC_WEIGHT_SELF;
    return flame_make(trace, content_hash, bytes, "flame-json", wt, thread, json, len, err, n);
}
