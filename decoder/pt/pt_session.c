/* The sink that forwards the PT front-end's output to a libptcall-decode session. Kept in
 * its own object so that users of the front-end without a session do not need it. */
#include <stdlib.h>
#include <string.h>

#include "ptc_pt_decode.h"

static int s_add_module(void *ctx, uint32_t pid, const void *payload, size_t size)
{
    return ptc_session_add_module(ctx, pid, payload, size);
}

static int s_lookup(void *ctx, uint32_t pid, uint64_t ip, uint32_t *stub_id)
{
    return ptc_session_lookup_stub(ctx, pid, ip, stub_id);
}

static int s_feed(void *ctx, uint32_t pid, uint32_t tid, const struct ptc_ev *ev, size_t n)
{
    return ptc_session_feed(ctx, pid, tid, ev, n);
}

static int s_loss(void *ctx, uint32_t pid, const struct ptc_loss *loss, const char *note)
{
    return ptc_session_add_loss(ctx, pid, loss, note);
}

void ptc_pt_sink_session(struct ptc_pt_sink *sink, struct ptc_session *s)
{
    sink->ctx = s;
    sink->add_module = s_add_module;
    sink->lookup = s_lookup;
    sink->feed = s_feed;
    sink->loss = s_loss;
}

/* ptc_pt_attach (decode.h): the CLI calls it on every session it creates. */
struct attach_ctx {
    struct ptc_pt_front *f;
    struct ptc_pt_measured *measured;
};

/* what the streams held, for ptc_pt_attach_measured(), before the front-end goes */
static void measure(struct attach_ctx *a)
{
    struct ptc_pt_measured *m = a->measured;
    const struct ptc_pt_config *c = ptc_pt_front_config(a->f);
    m->have_config = c != NULL;
    if (c)
        m->config = *c;
    const struct ptc_pt_cpu_stats *cs;
    m->streams = ptc_pt_front_cpus(a->f, &cs);
    for (size_t i = 0; i < m->streams; i++) {
        struct ptc_pt_pktstat ps;
        memset(&ps, 0, sizeof(ps));
        ptc_pt_front_packets(a->f, i, &ps);
        for (int k = 0; k < PTC_PT_NPKT; k++) {
            m->packets.count[k] += ps.count[k];
            m->packets.bytes[k] += ps.bytes[k];
        }
        m->packets.errors += ps.errors;
        m->packets.unsynced_bytes += ps.unsynced_bytes;
        m->bytes += cs[i].s.bytes;
        m->hits += cs[i].s.hits;
    }
    m->done = 1;
}

static int h_chunk(void *ctx, struct ptc_session *s, const struct ptc_chunk_header *h,
                   const void *payload)
{
    struct attach_ctx *a = ctx;
    int r = ptc_pt_front_chunk(a->f, h, payload);
    if (r < 0)
        return ptc_session_set_error(s, -r, "Intel PT chunk (type %u, %u bytes): %s", h->type,
                                     h->payload_size, ptc_pt_strerror(-r));
    return 0;
}

static int h_finish(void *ctx, struct ptc_session *s)
{
    struct attach_ctx *a = ctx;
    if (!s) { /* the session is freed without having finished: release only */
        ptc_pt_front_free(a->f);
        free(a);
        return 0;
    }
    if (!a->f)
        return 0;
    int r = ptc_pt_front_finish(a->f);
    if (a->measured)
        measure(a);
    ptc_pt_front_free(a->f);
    a->f = NULL;
    free(a);
    if (r < 0)
        return ptc_session_set_error(s, -r, "decoding Intel PT data: %s", ptc_pt_strerror(-r));
    return 0;
}

int ptc_pt_attach(struct ptc_session *s) { return ptc_pt_attach_measured(s, NULL); }

int ptc_pt_attach_measured(struct ptc_session *s, struct ptc_pt_measured *out)
{
    struct ptc_pt_sink sink;
    ptc_pt_sink_session(&sink, s);
    sink.add_module = NULL; /* the session reads MODULE chunks itself */
    struct attach_ctx *a = calloc(1, sizeof(*a));
    if (!a)
        return -PTC_E_NOMEM;
    const char *m = getenv("PTCALL_PT_DECODER"); /* "libipt": decoder of record only */
    a->f = ptc_pt_front_new(&sink, m && !strcmp(m, "libipt") ? PTC_PT_MODE_LIBIPT
                                                              : PTC_PT_MODE_FAST);
    if (!a->f) {
        free(a);
        return -PTC_E_NOMEM;
    }
    /* only `ptcall stat` and `bandwidth` show them */
    ptc_pt_front_set_packet_stats(a->f, out != NULL);
    if (out)
        memset(out, 0, sizeof(*out));
    a->measured = out;
    /* streams decoded side by side: opt-in, it showed no gain yet (docs/pt.md) */
    const char *t = getenv("PTCALL_PT_THREADS");
    long n = t ? strtol(t, NULL, 10) : 1;
    ptc_pt_front_set_threads(a->f, n < 1 ? 1 : n > 8 ? 8 : (int)n);
    return ptc_session_set_chunk_handler(s, PTC_CHUNK_PT_FIRST, PTC_CHUNK_PT_LAST, h_chunk,
                                         h_finish, a);
}
