/* `ptcall stat`'s bytes per function (stat_funcs.h): the session's raw hits (hit hook, no
 * shadow stacks), each event's size as its front-end measured it. */
#define _GNU_SOURCE /* qsort_r: the sort key travels with the call, not in a global */
#include "stat_funcs.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"

struct fbytes {
    struct ptc_session *s;
    uint64_t *bytes, *hits;     /* per function id */
    uint32_t n;
    uint64_t unknown_size, total, events;
    int nomem;
};

static int grow(struct fbytes *b, uint32_t f)
{
    if (f < b->n)
        return 0;
    uint32_t n = b->n ? b->n : 256;
    while (n <= f)
        n *= 2;
    uint64_t *x = realloc(b->bytes, n * sizeof(*x)), *y = x ? realloc(b->hits, n * sizeof(*y)) : NULL;
    if (x)
        b->bytes = x;
    if (!x || !y)
        return -1;
    b->hits = y;
    memset(b->bytes + b->n, 0, (n - b->n) * sizeof(*x));
    memset(b->hits + b->n, 0, (n - b->n) * sizeof(*y));
    b->n = n;
    return 0;
}

static void on_hits(void *ctx, uint32_t pid, uint32_t tid, const struct ptc_ev *ev, size_t n)
{
    (void)tid;
    struct fbytes *b = ctx;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].type != PTC_EV_HIT)
            continue;
        b->events++;
        struct ptc_stub_desc d;
        if (ptc_session_stub(b->s, pid, ev[i].stub_id, &d))
            continue;
        if (grow(b, d.func)) {
            b->nomem = 1;
            return;
        }
        b->hits[d.func]++;
        b->bytes[d.func] += ev[i].size;
        b->total += ev[i].size;
        b->unknown_size += ev[i].size == 0;
    }
}

static int prepare(void *ctx, struct ptc_session *s)
{
    struct fbytes *b = ctx;
    b->s = s;
    ptc_session_set_hit_hook(s, on_hits, b);
    ptc_session_hits_only(s);
    return 0;
}

static int cmp_desc(const void *x, const void *y, void *ctx)
{
    const uint64_t *v = ctx;
    uint64_t a = v[*(const uint32_t *)x], c = v[*(const uint32_t *)y];
    return a < c ? 1 : a > c ? -1 : 0;
}

int stat_bytes_per_function(const char *path, unsigned top, FILE *out)
{
    struct fbytes b;
    memset(&b, 0, sizeof(b));
    struct cli_args a = {.cmd = "stat", .path = path, .threads = 1, .prepare = prepare,
                         .prepare_ctx = &b};
    struct ptc_session *s = cli_decode(&a, NULL, NULL, NULL, NULL);
    int rc = 1;
    uint32_t *order = NULL;
    if (!s)
        goto out;
    if (b.nomem) {
        cli_fail("stat", "out of memory", "try a machine with more memory");
        goto out;
    }
    uint32_t nf = 0;
    order = malloc((b.n ? b.n : 1) * sizeof(*order));
    if (!order) {
        cli_fail("stat", "out of memory", "try a machine with more memory");
        goto out;
    }
    for (uint32_t f = 0; f < b.n; f++)
        if (b.hits[f])
            order[nf++] = f;
    qsort_r(order, nf, sizeof(*order), cmp_desc, b.bytes);
    uint32_t show = top && top < nf ? top : nf;
    fprintf(out, "\nbytes per function (%s), %u of %u:\n  %14s %12s %9s %7s  %s\n",
            b.unknown_size == b.events ? "sizes unknown for this trace"
                                       : "the trace bytes of their stub hits",
            show, nf, "bytes", "hits", "bytes/hit", "share", "function");
    for (uint32_t k = 0; k < show; k++) {
        uint32_t f = order[k];
        const struct ptc_func_info *fi = ptc_session_func(s, f);
        fprintf(out, "  %14" PRIu64 " %12" PRIu64 " %9.2f %6.2f%%  ", b.bytes[f], b.hits[f],
                (double)b.bytes[f] / (double)b.hits[f],
                b.total ? 100.0 * (double)b.bytes[f] / (double)b.total : 0.0);
        cli_text_str(out, fi ? fi->name : "?");
        fputc('\n', out);
    }
    if (b.unknown_size && b.unknown_size < b.events)
        fprintf(out, "  (%" PRIu64 " hits of unknown size: the first of a stream, or after a "
                     "break)\n", b.unknown_size);
    rc = 0;
out:
    free(order);
    free(b.bytes);
    free(b.hits);
    if (s)
        ptc_session_free(s);
    return rc;
}
