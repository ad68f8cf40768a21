/* Test stream writer (see ptgen.h). It plays the hardware: for every scheduling slice of a
 * thread on a CPU it emits what Intel PT emits for a trace filtered to the stub section
 * (restart timing packets, MTC flow, PSB+ every psb_period bytes, TIP.PGE into a stub with a
 * random legal IP compression, TIP.PGD back out with or without IP, FUP + TIP.PGD() for an
 * interrupt on the stub and TIP.PGE on return, OVF resolving by FUP or TIP.PGE, PAD,
 * CYC before control packets), plus the perf sideband the kernel writes. Alongside it keeps
 * a model of what a decoder can know (last IP after OVF/PSB, timing state, resync after a
 * truncation) and records the events a correct decoder returns. */
#include "ptgen.h"

#include <fcntl.h>
#include <intel-pt.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ptc_chunk_write.h"
#include "ptc_pt_decode.h"
#include "ptcall/map_format.h"
#include "ptcall/trace_format_pt.h"

#define R_TSC_PER_CTC 40u
#define MTC_FREQ 3u
#define NOM_FREQ 24u
#define SAMPLE_TYPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

static uint64_t rnd(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}
static uint64_t rr(uint64_t *s, uint64_t lo, uint64_t hi) { return lo + rnd(s) % (hi - lo + 1); }
static int chance(uint64_t *s, int permille) { return (int)(rnd(s) % 1000) < permille; }

void ptgen_default(struct ptgen_opts *o, uint64_t seed)
{
    memset(o, 0, sizeof(*o));
    o->seed = seed;
    o->timing = PTGEN_MTC;
    o->ncpus = 3;
    o->nprocs = 2;
    o->threads = 2;
    o->slices = 40;
    o->max_hits = 60;
    o->psb_period = 256;
    o->p_ovf = 15;
    o->p_intr = 30;
    o->p_trunc = 60;
    o->p_foreign = 0;
    o->p_pad = 20;
    o->chunk_max = 300;
}

struct vec { void *v; size_t n, cap, esz; };
static void *vpush(struct vec *a)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 64;
        a->v = realloc(a->v, a->cap * a->esz);
        if (!a->v)
            abort();
    }
    return (char *)a->v + a->esz * a->n++;
}

struct cpu {
    uint8_t *buf;
    size_t cap;
    struct pt_encoder *enc;
    int started;
    int need_mode;         /* hw_exact: the next TIP.PGE needs a MODE.Exec */
    uint64_t last_psb;
    uint64_t hw_ip;        /* hardware last IP */
    int in_region;
    uint64_t region_ip;
    uint64_t last_cross;   /* last MTC crossing emitted (CTC units) */
    uint64_t last_cyc;     /* reference of the next CYC value */
    /* decoder model */
    uint64_t dec_ip;
    int suspect, have_resume, skipping, discarding;
    uint64_t resume_ip;
    int m_have_tsc, m_mtc_seen;
    uint64_t m_tsc;        /* decoder-visible time */
    uint64_t aux_shift;    /* lost bytes shown as AUX offset jumps */
    int itrace_done[16];
    struct vec sb;         /* sideband bytes of the current slice */
};

struct gen {
    const struct ptgen_opts *o;
    uint64_t rs;
    uint64_t now;
    int timing;
    struct cpu cpus[8];
    struct ptgen_result *r;
    struct vec ev;
    int fd;
    struct { uint32_t pid, tid, next; } seq[64];
    int nseq;
};

static uint32_t next_seq(struct gen *g, uint32_t pid, uint32_t tid)
{
    int i = 0;
    while (i < g->nseq && (g->seq[i].pid != pid || g->seq[i].tid != tid))
        i++;
    if (i == g->nseq) {
        g->nseq++;
        g->seq[i].pid = pid;
        g->seq[i].tid = tid;
        g->seq[i].next = 0;
    }
    return g->seq[i].next++;
}

static uint64_t off(struct cpu *c)
{
    uint64_t o = 0;
    pt_enc_get_offset(c->enc, &o);
    return o;
}

static void enc(struct cpu *c, const struct pt_packet *p)
{
    int e = pt_enc_next(c->enc, p);
    if (e < 0) {
        fprintf(stderr, "ptgen: pt_enc_next: %s\n", pt_errstr(pt_errcode(e)));
        abort();
    }
}

static void pkt0(struct cpu *c, enum pt_packet_type t)
{
    struct pt_packet p;
    memset(&p, 0, sizeof(p));
    p.type = t;
    enc(c, &p);
}

static void model_time_tsc(struct cpu *c, uint64_t tsc)
{
    c->m_have_tsc = 1;
    c->m_tsc = tsc;
    c->m_mtc_seen = 0;
}

static void emit_tsc(struct gen *g, struct cpu *c)
{
    struct pt_packet p;
    memset(&p, 0, sizeof(p));
    p.type = ppt_tsc;
    p.payload.tsc.tsc = g->now;
    enc(c, &p);
    c->last_cyc = g->now;
    if (!c->skipping)
        model_time_tsc(c, g->now);
    if (g->timing >= PTGEN_MTC) {
        uint64_t ctc = g->now / R_TSC_PER_CTC;
        memset(&p, 0, sizeof(p));
        p.type = ppt_tma;
        p.payload.tma.ctc = (uint16_t)ctc;
        p.payload.tma.fc = (uint16_t)(g->now - ctc * R_TSC_PER_CTC);
        enc(c, &p);
        c->last_cross = ctc; /* crossings after this CTC tick follow */
    }
}

static void emit_cbr(struct cpu *c)
{
    struct pt_packet p;
    memset(&p, 0, sizeof(p));
    p.type = ppt_cbr;
    p.payload.cbr.ratio = NOM_FREQ;
    enc(c, &p);
}

/* MTC packets for the crystal clock crossings up to now */
static void advance(struct gen *g, struct cpu *c, uint64_t dt)
{
    g->now += dt;
    if (g->timing < PTGEN_MTC || !c)
        return;
    uint64_t period = 1u << MTC_FREQ;
    uint64_t next = (c->last_cross / period + 1) * period;
    while (next * R_TSC_PER_CTC <= g->now) {
        struct pt_packet p;
        if (g->timing == PTGEN_CYC && next * R_TSC_PER_CTC > c->last_cyc) {
            /* cycle-accurate mode: a CYC before every MTC */
            memset(&p, 0, sizeof(p));
            p.type = ppt_cyc;
            p.payload.cyc.value = next * R_TSC_PER_CTC - c->last_cyc;
            enc(c, &p);
            c->last_cyc = next * R_TSC_PER_CTC;
            if (!c->skipping && c->m_have_tsc)
                c->m_tsc = c->last_cyc;
        }
        memset(&p, 0, sizeof(p));
        p.type = ppt_mtc;
        p.payload.mtc.ctc = (uint8_t)(next >> MTC_FREQ);
        enc(c, &p);
        c->last_cross = next;
        if (!c->skipping && g->timing == PTGEN_MTC && c->m_have_tsc) {
            c->m_tsc = next * R_TSC_PER_CTC;
            c->m_mtc_seen = 1;
        }
        next += period;
    }
}

static void emit_cyc(struct gen *g, struct cpu *c)
{
    if (g->timing != PTGEN_CYC)
        return;
    uint64_t v = g->now - c->last_cyc;
    if (!v)
        return;
    struct pt_packet p;
    memset(&p, 0, sizeof(p));
    p.type = ppt_cyc;
    p.payload.cyc.value = v;
    enc(c, &p);
    c->last_cyc = g->now;
    if (!c->skipping && c->m_have_tsc)
        c->m_tsc = g->now;
}

static uint64_t dec_update(uint64_t last, enum pt_ip_compression ipc, uint64_t ip)
{
    switch (ipc) {
    case pt_ipc_update_16: return (last & ~0xffffULL) | (ip & 0xffffULL);
    case pt_ipc_update_32: return (last & ~0xffffffffULL) | (ip & 0xffffffffULL);
    case pt_ipc_update_48: return (last & ~0xffffffffffffULL) | (ip & 0xffffffffffffULL);
    case pt_ipc_sext_48: return (uint64_t)(((int64_t)(ip << 16)) >> 16);
    case pt_ipc_full: return ip;
    default: return last;
    }
}

/* the most compact compression of ip against the hardware last IP, as the CPU picks it */
static enum pt_ip_compression hw_ipc(const struct cpu *c, uint64_t ip)
{
    if ((ip >> 16) == (c->hw_ip >> 16))
        return pt_ipc_update_16;
    if ((ip >> 32) == (c->hw_ip >> 32))
        return pt_ipc_update_32;
    if ((ip >> 48) == (c->hw_ip >> 48))
        return pt_ipc_update_48;
    return (uint64_t)((int64_t)(ip << 16) >> 16) == ip ? pt_ipc_sext_48 : pt_ipc_full;
}

/* a legal compression of ip against the hardware last IP */
static enum pt_ip_compression pick_ipc(struct gen *g, struct cpu *c, uint64_t ip)
{
    if (g->o->hw_exact)
        return hw_ipc(c, ip);
    enum pt_ip_compression ok[5];
    int n = 0;
    ok[n++] = pt_ipc_full;
    ok[n++] = pt_ipc_sext_48;
    if ((ip >> 48) == (c->hw_ip >> 48))
        ok[n++] = pt_ipc_update_48;
    if ((ip >> 32) == (c->hw_ip >> 32))
        ok[n++] = pt_ipc_update_32;
    if ((ip >> 16) == (c->hw_ip >> 16))
        ok[n++] = pt_ipc_update_16;
    /* prefer compression, as hardware does */
    int i = (int)rr(&g->rs, 0, (uint64_t)n + 2);
    return ok[i >= n ? n - 1 : i];
}

/* emits an IP packet; returns the IP the decoder will see (if not suppressed) */
static uint64_t ip_pkt(struct gen *g, struct cpu *c, enum pt_packet_type t, uint64_t ip,
                       int suppressed, int full)
{
    struct pt_packet p;
    memset(&p, 0, sizeof(p));
    p.type = t;
    p.payload.ip.ipc = suppressed ? pt_ipc_suppressed : full ? pt_ipc_sext_48 : pick_ipc(g, c, ip);
    p.payload.ip.ip = ip;
    enc(c, &p);
    if (suppressed)
        return c->dec_ip;
    c->hw_ip = ip;
    c->dec_ip = dec_update(c->dec_ip, p.payload.ip.ipc, ip);
    return c->dec_ip;
}

static void expect(struct gen *g, uint32_t pid, uint32_t tid, uint8_t type, uint32_t id,
                   int has_time, uint64_t tsc)
{
    struct ptgen_event *e = vpush(&g->ev);
    memset(e, 0, sizeof(*e));
    e->pid = pid;
    e->tid = tid;
    e->type = type;
    e->stub_id = id;
    e->has_time = (uint8_t)has_time;
    e->tsc = has_time ? tsc : 0;
}

static int in_ranges(const struct ptgen_result *r, uint64_t ip)
{
    for (int i = 0; i < r->nmods; i++)
        if (ip >= r->mods[i].start && ip < r->mods[i].start + 16ull * r->mods[i].nstubs)
            return 1;
    return 0;
}

int ptgen_lookup(const struct ptgen_result *r, uint32_t pid, uint64_t ip, uint32_t *id)
{
    for (int i = 0; i < r->nmods; i++) {
        const struct ptgen_module *m = &r->mods[i];
        if (m->pid != pid || ip < m->start || ip >= m->start + 16ull * m->nstubs)
            continue;
        if ((ip - m->start) % 16)
            return -1;
        *id = (uint32_t)((ip - m->start) / 16);
        return 0;
    }
    return -1;
}

/* the decoder's view of an enable at dip (interpretation in pt_stream.c) */
static void model_enable(struct gen *g, struct cpu *c, uint32_t pid, uint32_t tid,
                         uint64_t dip)
{
    if (c->skipping)
        return;
    if (in_ranges(g->r, dip)) {
        if (c->have_resume && c->resume_ip == dip) {
            /* resume */
        } else {
            uint32_t id;
            if (ptgen_lookup(g->r, pid, dip, &id) == 0)
                expect(g, pid, tid, PTC_EV_HIT, id, g->timing != PTGEN_NONE && c->m_have_tsc,
                       c->m_tsc);
        }
    } else if (c->suspect) {
        expect(g, pid, tid, PTC_EV_GAP, 0, 0, 0);
    }
    c->have_resume = 0;
}

static void psb_plus(struct gen *g, struct cpu *c)
{
    pkt0(c, ppt_psb);
    c->last_psb = off(c) - 16;
    c->need_mode = !c->in_region;
    c->hw_ip = 0;
    if (!c->discarding)
        c->skipping = 0; /* the decoder resynchronises here */
    c->dec_ip = 0;
    c->suspect = 0;
    if (g->timing != PTGEN_NONE)
        emit_tsc(g, c);
    emit_cbr(c);
    if (c->in_region) {
        struct pt_packet p;
        memset(&p, 0, sizeof(p));
        p.type = ppt_mode;
        p.payload.mode.leaf = pt_mol_exec;
        p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
        enc(c, &p);
        ip_pkt(g, c, ppt_fup, c->region_ip, 0, 1);
    }
    pkt0(c, ppt_psbend);
}

static void maybe_psb(struct gen *g, struct cpu *c)
{
    if (off(c) - c->last_psb >= (uint64_t)g->o->psb_period)
        psb_plus(g, c);
}

static void mode_exec(struct cpu *c)
{
    struct pt_packet p;
    memset(&p, 0, sizeof(p));
    p.type = ppt_mode;
    p.payload.mode.leaf = pt_mol_exec;
    p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
    enc(c, &p);
}

static void sb_record(struct cpu *c, uint32_t type, uint16_t misc, const void *body,
                      size_t blen, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
    struct perf_event_header h = {.type = type, .misc = misc,
                                  .size = (uint16_t)(sizeof(h) + blen + 32)};
    uint8_t rec[512];
    size_t n = 0;
    memcpy(rec, &h, sizeof(h));
    n += sizeof(h);
    if (blen)
        memcpy(rec + n, body, blen);
    n += blen;
    memcpy(rec + n, &pid, 4);
    memcpy(rec + n + 4, &tid, 4);
    memcpy(rec + n + 8, &time, 8);
    uint32_t cr[2] = {cpu, 0};
    memcpy(rec + n + 16, cr, 8);
    uint64_t id = 42 + cpu;
    memcpy(rec + n + 24, &id, 8);
    n += 32;
    for (size_t i = 0; i < n; i++)
        *(uint8_t *)vpush(&c->sb) = rec[i];
}

static uint64_t perf_time(uint64_t tsc)
{
    /* the conversion written into the config chunk */
    return 5000 + (tsc >> 10) * 1365 + (((tsc & 1023) * 1365) >> 10);
}

static int write_chunk(struct gen *g, uint16_t type, uint32_t pid, uint32_t tid,
                       const void *a, size_t an, const void *b, size_t bn)
{
    struct iovec iov[2] = {{(void *)a, an}, {(void *)b, bn}};
    return ptc_write_chunk(g->fd, type, 0, pid, tid, next_seq(g, pid, tid), iov, bn ? 2 : 1);
}

static void write_module(struct gen *g, const struct ptgen_module *m, uint32_t module_id)
{
    uint32_t nf = (m->nstubs + 1) / 2;
    char strings[4096];
    size_t sn = 0;
    struct ptc_module_func *funcs = calloc(nf, sizeof(*funcs));
    struct ptc_module_stub *stubs = calloc(m->nstubs, sizeof(*stubs));
    strings[sn++] = 0;
    for (uint32_t i = 0; i < nf; i++) {
        funcs[i].name = funcs[i].linkage_name = (uint32_t)sn;
        sn += (size_t)sprintf(strings + sn, "f%u", i) + 1;
        funcs[i].file = 0;
        funcs[i].line = 0;
    }
    uint32_t path = (uint32_t)sn;
    sn += (size_t)sprintf(strings + sn, "/synthetic/mod%u", module_id) + 1;
    for (uint32_t i = 0; i < m->nstubs; i++) {
        stubs[i].address = m->start + 16ull * i;
        stubs[i].func = i / 2;
        stubs[i].kind = (uint16_t)(i % 2 ? PTCALL_STUB_EXIT : PTCALL_STUB_ENTRY);
        stubs[i].site = 0;
    }
    struct ptc_module h = {.module_id = 0, .first_stub_id = 0, .num_stubs = m->nstubs,
                           .num_funcs = nf, .load_bias = m->start - 0x1000,
                           .stubs_start = m->start, .stubs_end = m->start + 16ull * m->nstubs,
                           .identity = 0x1234 + module_id, .path = path,
                           .strings_size = (uint32_t)sn};
    struct iovec iov[4] = {{&h, sizeof(h)},
                           {stubs, sizeof(*stubs) * m->nstubs},
                           {funcs, sizeof(*funcs) * nf},
                           {strings, sn}};
    ptc_write_chunk(g->fd, PTC_CHUNK_MODULE, 0, m->pid, 0, next_seq(g, m->pid, 0), iov, 4);
    struct ptc_pt_stubs st = {.module_id = 0, .stubs_start = h.stubs_start,
                              .stubs_end = h.stubs_end};
    write_chunk(g, PTC_CHUNK_PT_STUBS, m->pid, 0, &st, sizeof(st), NULL, 0);
    free(funcs);
    free(stubs);
}

int ptgen_write(const struct ptgen_opts *o, const char *path, struct ptgen_result *r)
{
    struct gen G;
    struct gen *g = &G;
    memset(g, 0, sizeof(*g));
    memset(r, 0, sizeof(*r));
    g->o = o;
    g->r = r;
    g->rs = o->seed * 0x9E3779B97F4A7C15ULL + 1;
    g->timing = o->timing;
    g->now = 1000000000ull + rr(&g->rs, 0, 1000000);
    g->ev.esz = sizeof(struct ptgen_event);
    g->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (g->fd < 0)
        return -1;
    struct ptc_file_header fh;
    ptc_file_header_init(&fh, PTC_BACKEND_PT, 0, 0);
    if (write(g->fd, &fh, sizeof(fh)) != (ssize_t)sizeof(fh))
        return -1;

    /* config */
    struct ptc_pt_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.size = sizeof(cfg);
    cfg.flags = PTC_PT_F_NORETCOMP | PTC_PT_F_TIME_ZERO;
    if (o->timing >= PTGEN_TSC)
        cfg.flags |= PTC_PT_F_TSC;
    if (o->timing >= PTGEN_MTC)
        cfg.flags |= PTC_PT_F_MTC;
    if (o->timing >= PTGEN_CYC)
        cfg.flags |= PTC_PT_F_CYC;
    cfg.mtc_freq = MTC_FREQ;
    cfg.nom_freq = NOM_FREQ;
    cfg.cpuid_0x15_eax = 1;
    cfg.cpuid_0x15_ebx = R_TSC_PER_CTC;
    cfg.num_cpus = (uint32_t)o->ncpus;
    cfg.sample_type = SAMPLE_TYPE;
    cfg.time_shift = 10;
    cfg.time_mult = 1365;
    cfg.time_zero = 5000;
    write_chunk(g, PTC_CHUNK_PT_CONFIG, 0, 0, &cfg, sizeof(cfg), NULL, 0);
    struct ptc_timebase tb = {.source = PTC_TIME_PERF_PAGE, .time_shift = cfg.time_shift,
                              .time_mult = cfg.time_mult, .time_zero = cfg.time_zero};
    write_chunk(g, PTC_CHUNK_TIMEBASE, 0, 0, &tb, sizeof(tb), NULL, 0);

    /* processes and modules */
    r->nmods = o->nprocs;
    for (int p = 0; p < o->nprocs; p++) {
        struct ptgen_module *m = &r->mods[p];
        m->pid = 1000 + 100 * (uint32_t)p;
        m->nstubs = (uint32_t)rr(&g->rs, 8, 64);
        /* one low (non-PIE) module, the others high */
        m->start = p == 1 ? 0x401000ull : 0x7f1234500000ull + 0x10000000ull * (uint64_t)p;
        if (p == 0 && o->mod0_start) {
            m->start = o->mod0_start;
            m->nstubs = o->mod0_nstubs;
        }
        write_module(g, m, (uint32_t)p);
    }

    for (int i = 0; i < o->ncpus; i++) {
        struct cpu *c = &g->cpus[i];
        c->cap = (size_t)o->slices * (size_t)o->max_hits * 400 + (1u << 20);
        c->buf = malloc(c->cap);
        struct pt_config pc;
        pt_config_init(&pc);
        pc.begin = c->buf;
        pc.end = c->buf + c->cap;
        c->enc = pt_alloc_encoder(&pc);
        c->sb.esz = 1;
    }
    uint64_t text = 0x7f1234400000ull;
    int last_cpu = -1;
    int fork_done = !o->forks || o->nprocs < 2;
    uint64_t last_slice_start_off = 0;
    (void)last_slice_start_off;

    for (int s = 0; s < o->slices; s++) {
        int ci = (int)rr(&g->rs, 0, (uint64_t)o->ncpus - 1);
        int p = (int)rr(&g->rs, 0, (uint64_t)o->nprocs - 1);
        int t = (int)rr(&g->rs, 0, (uint64_t)o->threads - 1);
        if (o->hw_exact) { /* slice s: thread s on CPU s */
            ci = s;
            p = s / o->threads;
            t = s % o->threads;
        }
        struct cpu *c = &g->cpus[ci];
        if (p == 1 && !fork_done)
            p = 0; /* the child does not exist yet */
        int fork_at = !fork_done && p == 0 && t == 0 ? 0 : -1;
        const struct ptgen_module *m = &r->mods[p];
        uint32_t pid = m->pid, tid = m->pid + (uint32_t)t;
        advance(g, NULL, rr(&g->rs, 1000, 5000));
        uint64_t start_time = g->now;
        c->sb.n = 0;
        int ti = p * 4 + t;
        if (!c->itrace_done[ti]) {
            uint32_t body[2] = {pid, tid};
            sb_record(c, PERF_RECORD_ITRACE_START, 0, body, 8, pid, tid, perf_time(g->now),
                      (uint32_t)ci);
            c->itrace_done[ti] = 1;
        }
        sb_record(c, PERF_RECORD_SWITCH, 0, NULL, 0, pid, tid, perf_time(g->now), (uint32_t)ci);
        uint64_t slice_start = off(c);
        if (c->skipping)
            expect(g, pid, tid, PTC_EV_GAP, 0, 0, 0); /* bytes before the resync PSB */
        if (!c->started) {
            c->started = 1;
            psb_plus(g, c);
        } else {
            if (g->timing != PTGEN_NONE)
                emit_tsc(g, c);
            emit_cbr(c);
        }
        int nh = (int)rr(&g->rs, 1, (uint64_t)o->max_hits);
        int trunc_at = chance(&g->rs, o->p_trunc) && nh > 1 &&
                               !(o->tail_cut && s == o->slices - 1) ? (int)rr(&g->rs, 1, (uint64_t)nh - 1)
                                                            : -1;
        uint64_t mark = 0;
        int variant = (int)rr(&g->rs, 0, 2);
        if (o->no_gap_chunks && variant == 1)
            variant = 0;
        for (int h = 0; h < nh; h++) {
            if (h == fork_at && !c->skipping && trunc_at < 0) {
                /* fork() between two hits: PERF_RECORD_FORK {pid, ppid, tid, ptid, time} */
                advance(g, c, rr(&g->rs, 5, 50));
                uint32_t child = r->mods[1].pid;
                uint64_t ft = perf_time(g->now);
                uint32_t body[6] = {child, pid, child, tid, (uint32_t)ft, (uint32_t)(ft >> 32)};
                sb_record(c, PERF_RECORD_FORK, 0, body, 24, pid, tid, ft, (uint32_t)ci);
                expect(g, pid, tid, PTC_EV_FORK, 0, 0, 0);
                ((struct ptgen_event *)g->ev.v)[g->ev.n - 1].count = child;
                fork_done = 1;
                advance(g, c, rr(&g->rs, 5, 50));
            }
            if (h == trunc_at) {
                mark = off(c);
                c->skipping = 1; /* the rest is discarded; decoder resyncs at a PSB */
                c->discarding = 1;
            }
            if (!o->hw_exact || h > 0) /* exact: the slice starts at its first hit */
                advance(g, c, rr(&g->rs, 30, 3000));
            maybe_psb(g, c);
            if (chance(&g->rs, o->p_pad)) {
                pkt0(c, ppt_pad);
                pkt0(c, ppt_pad);
            }
            uint64_t ip = m->start + 16ull * rr(&g->rs, 0, m->nstubs - 1);
            if (chance(&g->rs, o->p_ovf)) {
                /* overflow: some hits are lost, then tracing resumes */
                r->ovf++;
                int lost = o->hw_exact ? 0 : (int)rr(&g->rs, 0, 3);
                advance(g, NULL, (uint64_t)lost * rr(&g->rs, 100, 1000));
                if (g->timing >= PTGEN_MTC) /* MTCs of that time were lost too */
                    c->last_cross = g->now / R_TSC_PER_CTC;
                emit_cyc(g, c);
                pkt0(c, ppt_ovf);
                uint64_t ovf_time = c->m_tsc;
                int ovf_have = c->m_have_tsc && g->timing != PTGEN_NONE;
                c->dec_ip = 0;
                if (!c->skipping) {
                    expect(g, pid, tid, PTC_EV_GAP, 0, 0, 0);
                    c->suspect = 1;
                    c->have_resume = 0;
                }
                c->need_mode = 1;
                if (!o->hw_exact && chance(&g->rs, 500)) {
                    /* resolves on the stub: OVF, FUP(stub) */
                    uint64_t dip = ip_pkt(g, c, ppt_fup, ip, 0, 0);
                    if (!c->skipping && in_ranges(r, dip)) {
                        uint32_t id;
                        if (ptgen_lookup(r, pid, dip, &id) == 0)
                            expect(g, pid, tid, PTC_EV_HIT, id, ovf_have, ovf_time);
                    }
                    c->in_region = 1;
                    c->region_ip = ip;
                } else {
                    if (!o->hw_exact)
                        advance(g, c, rr(&g->rs, 0, 500));
                    if (o->hw_exact ? c->need_mode : chance(&g->rs, 300))
                        mode_exec(c);
                    c->need_mode = 0;
                    emit_cyc(g, c);
                    /* exact: the IP after an overflow is sent in full */
                    uint64_t dip = ip_pkt(g, c, ppt_tip_pge, ip, 0, o->hw_exact);
                    model_enable(g, c, pid, tid, dip);
                    c->in_region = 1;
                    c->region_ip = ip;
                }
            } else {
                emit_cyc(g, c);
                if (o->hw_exact ? c->need_mode : chance(&g->rs, 250))
                    mode_exec(c);
                c->need_mode = 0;
                uint64_t dip = ip_pkt(g, c, ppt_tip_pge, ip, 0, 0);
                model_enable(g, c, pid, tid, dip);
                c->in_region = 1;
                c->region_ip = ip;
            }
            r->hits_emitted++;
            if (chance(&g->rs, o->p_foreign)) {
                struct pt_packet pk;
                memset(&pk, 0, sizeof(pk));
                pk.type = ppt_tnt_8;
                pk.payload.tnt.bit_size = 1;
                pk.payload.tnt.payload = 1;
                enc(c, &pk);
                r->foreign++;
            }
            if (chance(&g->rs, o->p_intr)) {
                /* interrupt on the stub: FUP(ip) TIP.PGD(), later TIP.PGE(ip) */
                r->intr++;
                advance(g, c, rr(&g->rs, 1, 20));
                emit_cyc(g, c);
                uint64_t dfup = ip_pkt(g, c, ppt_fup, ip, 0, 0);
                ip_pkt(g, c, ppt_tip_pgd, 0, 1, 0);
                c->in_region = 0;
                if (!c->skipping) {
                    c->have_resume = 1;
                    c->resume_ip = dfup;
                }
                advance(g, c, rr(&g->rs, 100, 3000));
                maybe_psb(g, c);
                emit_cyc(g, c);
                uint64_t dip = ip_pkt(g, c, ppt_tip_pge, ip, 0, 0);
                model_enable(g, c, pid, tid, dip);
                c->in_region = 1;
            }
            advance(g, c, o->hw_exact ? 2 : rr(&g->rs, 5, 40));
            emit_cyc(g, c);
            int last = s == o->slices - 1 && h == nh - 1;
            uint64_t ret = o->hw_exact ? ip ^ (1ull << 20) : text + rr(&g->rs, 0, 0xffff0);
            if (o->hw_exact)
                ip_pkt(g, c, ppt_tip_pgd, ret, 0, 0);
            else if (last && o->tail_cut)
                ip_pkt(g, c, ppt_tip_pgd, ret, 0, 0), (void)0;
            else if (chance(&g->rs, 250))
                ip_pkt(g, c, ppt_tip_pgd, 0, 1, 0);
            else
                ip_pkt(g, c, ppt_tip_pgd, ret, 0, 0);
            if (!c->skipping)
                c->have_resume = 0;
            c->in_region = 0;
        }
        advance(g, o->hw_exact ? NULL : c, rr(&g->rs, 10, 100));
        uint64_t end = off(c);
        uint64_t aux_flags = 0;
        uint64_t lost = 0;
        c->discarding = 0;
        if (trunc_at >= 0) {
            lost = end - mark;
            pt_enc_sync_set(c->enc, mark);
            end = mark;
            r->truncations++;
            expect(g, pid, tid, PTC_EV_GAP, 0, 0, 0);
            /* decoder state after the break: segment start */
            c->have_resume = 0;
            c->m_have_tsc = 0;
            /* 0: the kernel's TRUNCATED flag; 1: a GAP chunk from the recorder; 2: both the
             * flag and a jump in AUX offsets (a jump alone is invisible at the very end) */
            if (variant != 1)
                aux_flags = PERF_AUX_FLAG_TRUNCATED;
        }
        int tail = o->tail_cut && s == o->slices - 1;
        if (tail) {
            /* cut the final TIP.PGD (9 bytes with a full IP, fewer compressed) in half */
            end -= 2;
            pt_enc_sync_set(c->enc, end);
            aux_flags |= PERF_AUX_FLAG_TRUNCATED;
            expect(g, pid, tid, PTC_EV_GAP, 0, 0, 0);
        }
        g->now += 1;
        /* AUX data of the slice, in chunks */
        uint64_t pos = slice_start;
        while (pos < end) {
            uint64_t n = end - pos;
            if (o->chunk_max && n > (uint64_t)o->chunk_max)
                n = rr(&g->rs, 1, (uint64_t)o->chunk_max);
            struct ptc_pt_aux a = {.cpu = (uint32_t)ci, .offset = pos + c->aux_shift};
            write_chunk(g, PTC_CHUNK_PT_AUX, 0, 0, &a, sizeof(a), c->buf + pos, n);
            pos += n;
        }
        if (!o->no_aux_records && end > slice_start) {
            uint64_t body[3] = {slice_start + c->aux_shift, end - slice_start, aux_flags};
            sb_record(c, PERF_RECORD_AUX, 0, body, 24, pid, tid, perf_time(g->now),
                      (uint32_t)ci);
        }
        if ((trunc_at >= 0 && variant == 1) || (tail && o->no_aux_records)) {
            struct ptc_pt_gap gp = {.cpu = (uint32_t)ci, .kind = PTC_PT_GAP_TRUNCATED,
                                    .offset = end + c->aux_shift, .time = perf_time(g->now)};
            write_chunk(g, PTC_CHUNK_PT_GAP, 0, 0, &gp, sizeof(gp), "test", 5);
        }
        if (trunc_at >= 0 && variant == 2)
            c->aux_shift += lost; /* shows as a jump in AUX offsets */
        sb_record(c, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, NULL, 0, pid, tid,
                  perf_time(g->now), (uint32_t)ci);
        struct ptc_pt_sideband sbh = {.cpu = (uint32_t)ci, .sample_type = SAMPLE_TYPE};
        write_chunk(g, PTC_CHUNK_PT_SIDEBAND, 0, 0, &sbh, sizeof(sbh), c->sb.v, c->sb.n);
        (void)start_time;
        last_cpu = ci;
        r->bytes += end - slice_start;
        if (o->rounds && (s + 1) % o->rounds == 0) {
            /* as the recorder does after a pass that drained every CPU */
            struct ptc_pt_round rd = {.size = sizeof(rd), .version = PTC_PT_ROUND_VERSION,
                                      .seq = (uint64_t)s, .time = perf_time(g->now)};
            struct iovec iov = {&rd, sizeof(rd)};
            ptc_write_chunk(g->fd, PTC_CHUNK_PT_ROUND, PTC_CHUNK_F_OPTIONAL, 0, 0,
                            next_seq(g, 0, 0), &iov, 1);
        }
    }
    (void)last_cpu;
    for (int i = 0; i < o->ncpus; i++) {
        pt_free_encoder(g->cpus[i].enc);
        free(g->cpus[i].buf);
        free(g->cpus[i].sb.v);
    }
    close(g->fd);
    r->ev = g->ev.v;
    r->nev = g->ev.n;
    return 0;
}

void ptgen_free(struct ptgen_result *r)
{
    free(r->ev);
    r->ev = NULL;
}

struct raw_ctx { uint8_t *v; size_t n, cap; int bad; };
static int raw_chunk(void *ctx, const struct ptc_chunk_header *h, const void *p)
{
    struct raw_ctx *x = ctx;
    struct ptc_pt_aux a;
    if (h->type != PTC_CHUNK_PT_AUX || h->payload_size < sizeof(a))
        return 0;
    memcpy(&a, p, sizeof(a));
    if (a.cpu != 0)
        return 0;
    size_t n = h->payload_size - sizeof(a);
    if (x->n + n > x->cap) {
        size_t c = x->cap ? x->cap * 2 : 65536;
        while (c < x->n + n)
            c *= 2;
        void *v = realloc(x->v, c);
        if (!v) {
            x->bad = 1;
            return -1;
        }
        x->v = v;
        x->cap = c;
    }
    memcpy(x->v + x->n, (const uint8_t *)p + sizeof(a), n);
    x->n += n;
    return 0;
}

uint8_t *ptgen_raw_stream(const struct ptgen_opts *o, const char *tmp_path, size_t *len,
                          struct ptgen_result *r)
{
    if (ptgen_write(o, tmp_path, r))
        return NULL;
    struct raw_ctx x = {0};
    struct ptc_file_header fh;
    char err[256];
    int e = ptc_pt_read_file(tmp_path, &fh, raw_chunk, &x, err, sizeof(err));
    unlink(tmp_path);
    if (e || x.bad) {
        free(x.v);
        ptgen_free(r);
        return NULL;
    }
    *len = x.n;
    return x.v ? x.v : calloc(1, 1);
}

uint8_t *ptgen_bench_stream(int timing, uint64_t nhits, int suppressed_pgd, size_t *len,
                            uint64_t *stub_start, uint32_t *nstubs)
{
    struct gen G;
    struct gen *g = &G;
    memset(g, 0, sizeof(*g));
    struct ptgen_opts o;
    ptgen_default(&o, 1);
    o.psb_period = 4096;
    g->o = &o;
    g->rs = 12345;
    g->timing = timing;
    g->now = 1000000000ull;
    struct ptgen_result r;
    memset(&r, 0, sizeof(r));
    r.nmods = 1;
    r.mods[0].start = *stub_start = 0x55555555a000ull;
    r.mods[0].nstubs = *nstubs = 1024;
    g->r = &r;
    g->ev.esz = sizeof(struct ptgen_event);
    struct cpu *c = &g->cpus[0];
    c->cap = (size_t)nhits * 40 + (1u << 20);
    c->buf = malloc(c->cap);
    struct pt_config pc;
    pt_config_init(&pc);
    pc.begin = c->buf;
    pc.end = c->buf + c->cap;
    c->enc = pt_alloc_encoder(&pc);
    c->started = 1;
    psb_plus(g, c);
    uint64_t text = 0x555555554000ull;
    for (uint64_t h = 0; h < nhits; h++) {
        /* a call every ~100 cycles on average: ~3 MTC periods per 10 hits */
        advance(g, c, rr(&g->rs, 20, 180));
        maybe_psb(g, c);
        uint64_t ip = r.mods[0].start + 16ull * rr(&g->rs, 0, 1023);
        emit_cyc(g, c);
        ip_pkt(g, c, ppt_tip_pge, ip, 0, 0);
        advance(g, c, rr(&g->rs, 2, 10));
        emit_cyc(g, c);
        if (suppressed_pgd)
            ip_pkt(g, c, ppt_tip_pgd, 0, 1, 0);
        else
            ip_pkt(g, c, ppt_tip_pgd, text + rr(&g->rs, 0, 0xfff0), 0, 0);
    }
    *len = off(c);
    pt_free_encoder(c->enc);
    free(g->ev.v);
    return c->buf;
}
