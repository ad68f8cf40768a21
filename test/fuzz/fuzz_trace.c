/* In-memory traces for the PT fuzz targets and their decoding every way (fuzz_trace.h). */
#include "fuzz_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptc_chunk_write.h"
#include "ptc_crc.h"
#include "ptc_pt_decode.h"
#include "ptcall/decode.h"
#include "pt_diff.h"

static void put(struct ft *t, const void *p, size_t n)
{
    if (t->oom || !n)
        return;
    if (t->n + n > t->cap) {
        size_t c = t->cap ? t->cap : 4096;
        while (c < t->n + n)
            c *= 2;
        void *v = realloc(t->v, c);
        if (!v) {
            t->oom = 1;
            return;
        }
        t->v = v;
        t->cap = c;
    }
    memcpy(t->v + t->n, p, n);
    t->n += n;
}

void ft_begin(struct ft *t)
{
    memset(t, 0, sizeof(*t));
    struct ptc_file_header h;
    ptc_file_header_init(&h, PTC_BACKEND_IMPORT, 0, 1);
    put(t, &h, sizeof(h));
}

static uint32_t next_seq(struct ft *t, uint32_t pid, uint32_t tid)
{
    for (int i = 0; i < t->nseq; i++)
        if (t->seq[i].pid == pid && t->seq[i].tid == tid)
            return t->seq[i].seq++;
    if (t->nseq == 64)
        return 0;
    t->seq[t->nseq].pid = pid;
    t->seq[t->nseq].tid = tid;
    t->seq[t->nseq].seq = 1;
    t->nseq++;
    return 0;
}

void ft_chunk(struct ft *t, uint16_t type, uint32_t pid, uint32_t tid, const void *a, size_t an,
              const void *b, size_t bn)
{
    uint8_t *p = malloc(an + bn + 1);
    if (!p) {
        t->oom = 1;
        return;
    }
    if (an)
        memcpy(p, a, an);
    if (bn)
        memcpy(p + an, b, bn);
    struct ptc_chunk_header h = {.type = type, .payload_size = (uint32_t)(an + bn), .pid = pid,
                                 .tid = tid, .seq = next_seq(t, pid, tid)};
    h.crc32 = ptc_chunk_crc(&h, p, an + bn, PTC_VERSION_MAJOR);
    put(t, &h, sizeof(h));
    put(t, p, an + bn);
    static const uint8_t zero[8];
    put(t, zero, (8 - ((an + bn) & 7)) & 7);
    free(p);
}

void ft_module(struct ft *t)
{
    /* FT_NSTUBS / 2 functions f0, f1, ... with an entry and an exit stub each */
    enum { NF = FT_NSTUBS / 2 };
    char strings[NF * 4 + 16];
    size_t sn = 0;
    struct ptc_module_func funcs[NF];
    for (uint32_t i = 0; i < NF; i++) {
        funcs[i].name = funcs[i].linkage_name = (uint32_t)sn;
        funcs[i].file = 0;
        funcs[i].line = i + 1;
        sn += (size_t)sprintf(strings + sn, "f%u", i) + 1;
    }
    uint32_t path = (uint32_t)sn;
    sn += (size_t)sprintf(strings + sn, "/fuzz/app") + 1;
    struct ptc_module_stub stubs[FT_NSTUBS];
    for (uint32_t i = 0; i < FT_NSTUBS; i++) {
        stubs[i].address = FT_STUBS + 16ull * i;
        stubs[i].func = i / 2;
        stubs[i].kind = i % 2;
        stubs[i].site = 0;
    }
    struct ptc_module m = {.num_stubs = FT_NSTUBS, .num_funcs = NF,
                           .stubs_start = FT_STUBS, .stubs_end = FT_STUBS + 16ull * FT_NSTUBS,
                           .identity = 0x5eed, .path = path, .strings_size = (uint32_t)sn};
    size_t n = sizeof(m) + sizeof(stubs) + sizeof(funcs) + sn;
    uint8_t *p = malloc(n);
    if (!p) {
        t->oom = 1;
        return;
    }
    memcpy(p, &m, sizeof(m));
    memcpy(p + sizeof(m), stubs, sizeof(stubs));
    memcpy(p + sizeof(m) + sizeof(stubs), funcs, sizeof(funcs));
    memcpy(p + sizeof(m) + sizeof(stubs) + sizeof(funcs), strings, sn);
    ft_chunk(t, PTC_CHUNK_MODULE, FT_PID, 0, p, n, NULL, 0);
    free(p);
    struct ptc_pt_stubs st = {.module_id = 0, .stubs_start = m.stubs_start,
                              .stubs_end = m.stubs_end};
    ft_chunk(t, PTC_CHUNK_PT_STUBS, FT_PID, 0, &st, sizeof(st), NULL, 0);
}

void ft_config(struct ft *t, const uint8_t cfg4[4], struct ptc_pt_config *out)
{
    struct ptc_pt_dcfg d;
    pt_diff_config(cfg4, 4, &d);
    struct ptc_pt_config c;
    memset(&c, 0, sizeof(c));
    c.size = sizeof(c);
    c.flags = d.flags;
    c.cpu_vendor = d.cpu_family ? 1 : 0;
    c.cpu_family = d.cpu_family;
    c.cpu_model = d.cpu_model;
    c.cpu_stepping = d.cpu_stepping;
    c.mtc_freq = d.mtc_freq;
    c.nom_freq = d.nom_freq;
    c.cpuid_0x15_eax = d.cpuid_0x15_eax;
    c.cpuid_0x15_ebx = d.cpuid_0x15_ebx;
    c.sample_type = 0x10086; /* TID | TIME | CPU | IDENTIFIER, as ptcall import */
    ft_chunk(t, PTC_CHUNK_PT_CONFIG, 0, 0, &c, sizeof(c), NULL, 0);
    if (out)
        *out = c;
}

void ft_free(struct ft *t)
{
    free(t->v);
    memset(t, 0, sizeof(*t));
}

/* ---- decoding --------------------------------------------------------------------------- */

struct ev {
    uint32_t pid, tid;
    uint8_t type, has_time;
    uint32_t stub;
    uint64_t tsc;
};

struct evs {
    struct ev *v;
    size_t n, cap;
    int oom;
};

static int lookup(void *ctx, uint32_t pid, uint64_t ip, uint32_t *id)
{
    (void)ctx;
    (void)pid;
    if (ip < FT_STUBS || ip >= FT_STUBS + 16ull * FT_NSTUBS || (ip - FT_STUBS) % 16)
        return -1;
    *id = (uint32_t)((ip - FT_STUBS) / 16);
    return 0;
}

static int feed(void *ctx, uint32_t pid, uint32_t tid, const struct ptc_ev *ev, size_t n)
{
    struct evs *a = ctx;
    for (size_t i = 0; i < n && !a->oom; i++) {
        if (a->n == a->cap) {
            size_t c = a->cap ? a->cap * 2 : 256;
            void *v = realloc(a->v, c * sizeof(*a->v));
            if (!v) {
                a->oom = 1;
                break;
            }
            a->v = v;
            a->cap = c;
        }
        struct ev *e = &a->v[a->n++];
        e->pid = pid;
        e->tid = tid;
        e->type = ev[i].type;
        e->has_time = ev[i].has_time;
        e->tsc = ev[i].has_time ? ev[i].tsc : 0;
        e->stub = ev[i].type == PTC_EV_HIT ? ev[i].stub_id : 0;
    }
    return 0;
}

static int loss(void *ctx, uint32_t pid, const struct ptc_loss *l, const char *note)
{
    (void)ctx;
    (void)pid;
    (void)l;
    if (!note || !note[0])
        __builtin_trap(); /* every loss says what it is */
    return 0;
}

/* Runs the chunks of t through a front-end; returns 0, or the error. With packet statistics
 * on, checks that the per-stream and per-thread tables count the same. */
static int front(const struct ft *t, int mode, int threads, int pkstats, struct evs *out)
{
    struct ptc_pt_sink sink = {.ctx = out, .lookup = lookup, .feed = feed, .loss = loss};
    struct ptc_pt_front *f = ptc_pt_front_new(&sink, mode);
    if (!f)
        return -PTC_E_NOMEM;
    ptc_pt_front_set_packet_stats(f, pkstats);
    ptc_pt_front_set_threads(f, threads);
    int rc = 0;
    size_t off = sizeof(struct ptc_file_header);
    while (!rc && off + sizeof(struct ptc_chunk_header) <= t->n) {
        struct ptc_chunk_header h;
        memcpy(&h, t->v + off, sizeof(h));
        /* a chunk must be whole, as every reader makes sure (fuzz_pt_trace hands over
         * files whose last chunk says more than they hold) */
        if (h.payload_size > t->n - off - sizeof(h))
            break;
        rc = ptc_pt_front_chunk(f, &h, t->v + off + sizeof(h));
        off += sizeof(h) + h.payload_size + ((8 - (h.payload_size & 7)) & 7);
    }
    if (!rc)
        rc = ptc_pt_front_finish(f);
    if (!rc && pkstats && !ptc_pt_front_unattributed(f)) {
        const struct ptc_pt_cpu_stats *cs;
        const struct ptc_pt_thread_stats *ts;
        size_t nc = ptc_pt_front_cpus(f, &cs), nt = ptc_pt_front_threads(f, &ts);
        uint64_t sg = 0, sh = 0, tg = 0, th = 0;
        for (size_t i = 0; i < nc; i++) {
            sg += cs[i].s.gaps;
            sh += cs[i].s.hits;
            struct ptc_pt_pktstat ps;
            if (ptc_pt_front_packets(f, i, &ps) || ps.unsynced_bytes > cs[i].s.bytes)
                __builtin_trap(); /* more bytes outside PSB sync than the stream has */
        }
        for (size_t i = 0; i < nt; i++) {
            tg += ts[i].gaps;
            th += ts[i].hits;
        }
        /* `ptcall stat`'s tables and `ptcall report` count the same gaps and hits */
        if (sg != tg || sh != th + ptc_pt_front_unmapped(f))
            __builtin_trap();
    }
    ptc_pt_front_free(f);
    return rc;
}

struct keyed {
    struct ev e;
    size_t i;
};

static int by_thread(const void *l, const void *r)
{
    const struct keyed *x = l, *y = r;
    if (x->e.pid != y->e.pid)
        return x->e.pid < y->e.pid ? -1 : 1;
    if (x->e.tid != y->e.tid)
        return x->e.tid < y->e.tid ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* the events of every thread, in order (threads' events may interleave differently) */
static struct keyed *per_thread(const struct evs *a)
{
    struct keyed *k = malloc((a->n ? a->n : 1) * sizeof(*k));
    if (!k)
        return NULL;
    for (size_t i = 0; i < a->n; i++) {
        k[i].e = a->v[i];
        k[i].i = i;
    }
    qsort(k, a->n, sizeof(*k), by_thread);
    return k;
}

/* 1 when a and b give every thread the same events, 0 when not, -1 out of memory */
static int same_events(const struct evs *a, const struct evs *b, int cyc)
{
    if (a->n != b->n)
        return 0;
    struct keyed *x = per_thread(a), *y = per_thread(b);
    int same = x && y ? 1 : -1;
    for (size_t i = 0; i < a->n && same == 1; i++) {
        const struct ev *p = &x[i].e, *q = &y[i].e;
        same = p->pid == q->pid && p->tid == q->tid && p->type == q->type &&
               p->stub == q->stub && p->has_time == q->has_time && (cyc || p->tsc == q->tsc);
    }
    free(x);
    free(y);
    return same;
}

static void hook(void *ctx, const struct ptc_call_event *e)
{
    uint64_t *sum = ctx;
    *sum += e->depth + e->func + e->dur;
}

void ft_session(const uint8_t *v, size_t n, unsigned flags, const char *decoder)
{
    setenv("PTCALL_PT_DECODER", decoder, 1);
    struct ptc_session *s = ptc_session_new();
    if (!s)
        return;
    uint64_t sum = 0;
    ptc_session_set_call_hook(s, hook, &sum);
    int rc = ptc_pt_attach(s);
    if (!rc)
        rc = ptc_decode_memory(s, v, n, flags);
    if (rc && !ptc_session_errmsg(s)[0])
        __builtin_trap(); /* every error has a message */
    struct ptc_totals tot;
    ptc_session_totals(s, &tot);
    ptc_session_free(s);
}

void ft_decode(const struct ft *t, int cyc, int modes)
{
    if (t->oom)
        return;
    /* a session: `ptcall report` (its own reader: CRCs, sequence numbers) */
    ft_session(t->v, t->n, 0, "fast");
    ft_session(t->v, t->n, 0, "libipt");
    /* the front-end: the fast path and libipt give every thread the same events; decoding
     * streams side by side and counting packets changes nothing */
    struct evs fast = {0}, ipt = {0}, par = {0};
    int rf = front(t, PTC_PT_MODE_FAST, 1, 1, &fast);
    int ri = modes ? front(t, PTC_PT_MODE_LIBIPT, 1, 0, &ipt) : 0;
    int rp = front(t, PTC_PT_MODE_FAST, 2, 1, &par);
    if (!fast.oom && !ipt.oom && !par.oom && !rf && !ri && !rp &&
        ((modes && !same_events(&ipt, &fast, cyc)) || !same_events(&fast, &par, 0)))
        __builtin_trap();
    if ((modes && (rf == 0) != (ri == 0)) || (rf == 0) != (rp == 0))
        if (rf != -PTC_E_NOMEM && ri != -PTC_E_NOMEM && rp != -PTC_E_NOMEM)
            __builtin_trap(); /* the same chunks are refused by all or by none */
    free(fast.v);
    free(ipt.v);
    free(par.v);
}
