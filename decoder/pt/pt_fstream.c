/* The PT front-end's streams: one per CPU (or per thread), each with its decoder, the map
 * from AUX offsets to stream positions, and the breaks where bytes are missing. Below the
 * chunk intake (pt_front.c), the sideband (pt_sideband.c) and the feeding (pt_feed.c), which
 * all use them. */
#include "pt_front_int.h"

struct stream *ptc_front_stream(struct ptc_pt_front *f, uint32_t cpu, uint32_t pid,
                                uint32_t tid)
{
    for (size_t i = 0; i < f->streams.n; i++) {
        struct stream *s = f->streams.v[i];
        if (s->cpu == cpu && (cpu != PTC_PT_CPU_THREAD || (s->pid == pid && s->tid == tid)))
            return s;
    }
    struct stream *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->cpu = cpu;
    s->pid = pid;
    s->tid = tid;
    if (VPUSH(f->streams, s)) {
        free(s);
        return NULL;
    }
    return s;
}

/* the stream's decoder, made when first needed (the configuration is known by then) */
struct ptc_pt_sdec *ptc_front_dec(struct ptc_pt_front *f, struct stream *s)
{
    if (!s->dec) {
        s->dec = ptc_pt_sdec_new_stream(&f->dc);
        if (s->dec) {
            ptc_pt_sdec_set_ranges(s->dec, f->mranges.v, f->mranges.n);
            if (f->pkstats)
                ptc_pt_sdec_count_packets(s->dec, &s->pk);
        }
    }
    return s->dec;
}

/* stream position of an AUX offset (the end of the data that precedes it) */
uint64_t ptc_front_aux_to_pos(const struct stream *s, uint64_t aux)
{
    uint64_t pos = s->map_base;
    for (size_t i = 0; i < s->map.n; i++) { /* only entries not yet fed: few */
        const struct auxmap *m = &s->map.v[i];
        if (aux < m->aux_off)
            break;
        if (aux <= m->aux_off + m->len)
            return m->pos + (aux - m->aux_off);
        pos = m->pos + m->len;
    }
    return pos;
}

int ptc_front_break(struct ptc_pt_front *f, struct stream *s, uint64_t pos, uint64_t lost)
{
    struct ptc_pt_sdec *d = ptc_front_dec(f, s);
    struct ptc_pt_break b = {.pos = pos, .lost = lost, .why = PTC_PT_WHY_TRUNCATED};
    if (!d || ptc_pt_sdec_add_break(d, &b))
        return -PTC_E_NOMEM;
    return 0;
}
