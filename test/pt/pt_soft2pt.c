/* pt_soft2pt IN.ptc OUT.ptc: turns a soft-backend trace of a real instrumented program into
 * the Intel PT trace the hardware would have produced for the same run: every stub hit of a
 * thread becomes TSC(hit time), TIP.PGE(stub address), TIP.PGD(suppressed) in a stream of its
 * own (written with libipt's encoder; PSB+ every 4 KiB, random legal IP compression), with an
 * AUX record naming the thread; soft losses become OVF, forks PERF_RECORD_FORK. Every other
 * chunk is copied (renumbered). Used by the pt-soft-vs-pt test: `ptcall calls` and
 * `ptcall report` must print the same for both files (DESIGN.md: the soft backend produces
 * exactly the decoded events PT would). */
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
#include "ptc_varint.h"
#include "ptcall/trace_format_pt.h"

struct stubmap { uint32_t pid, first, n; uint64_t *addr; };

struct th {
    uint32_t pid, tid;
    uint8_t *buf;
    size_t cap;
    struct pt_encoder *enc;
    uint64_t last_psb, last_ip, first_tsc, last_tsc;
    int started;
    uint8_t sb[4096];
    size_t sbn;
};

struct conv {
    int out;
    struct { uint32_t pid, tid, next; } seq[4096];
    int nseq;
    struct stubmap maps[256];
    int nmaps;
    struct th th[512];
    int nth;
    uint64_t rs;
    int err;
};

static uint32_t next_seq(struct conv *c, uint32_t pid, uint32_t tid)
{
    int i = 0;
    while (i < c->nseq && (c->seq[i].pid != pid || c->seq[i].tid != tid))
        i++;
    if (i == c->nseq) {
        c->nseq++;
        c->seq[i].pid = pid;
        c->seq[i].tid = tid;
        c->seq[i].next = 0;
    }
    return c->seq[i].next++;
}

static void put(struct conv *c, uint16_t type, uint32_t pid, uint32_t tid, const void *a,
                size_t an, const void *b, size_t bn)
{
    struct iovec iov[2] = {{(void *)a, an}, {(void *)b, bn}};
    if (ptc_write_chunk(c->out, type, 0, pid, tid, next_seq(c, pid, tid), iov, bn ? 2 : 1))
        c->err = 1;
}

static uint64_t addr_of(struct conv *c, uint32_t pid, uint64_t id)
{
    for (int i = c->nmaps; i-- > 0;)
        if (c->maps[i].pid == pid && id >= c->maps[i].first && id < c->maps[i].first + c->maps[i].n)
            return c->maps[i].addr[id - c->maps[i].first];
    return 0;
}

static void enc(struct conv *c, struct th *t, struct pt_packet *p)
{
    if (pt_enc_next(t->enc, p) < 0)
        c->err = 1;
}

static uint64_t offset(struct th *t)
{
    uint64_t o = 0;
    pt_enc_get_offset(t->enc, &o);
    return o;
}

static void psb(struct conv *c, struct th *t, uint64_t tsc)
{
    struct pt_packet p;
    memset(&p, 0, sizeof(p));
    p.type = ppt_psb;
    enc(c, t, &p);
    t->last_psb = offset(t) - 16;
    t->last_ip = 0;
    memset(&p, 0, sizeof(p));
    p.type = ppt_tsc;
    p.payload.tsc.tsc = tsc;
    enc(c, t, &p);
    memset(&p, 0, sizeof(p));
    p.type = ppt_cbr;
    p.payload.cbr.ratio = 24;
    enc(c, t, &p);
    memset(&p, 0, sizeof(p));
    p.type = ppt_psbend;
    enc(c, t, &p);
}

static struct th *thread(struct conv *c, uint32_t pid, uint32_t tid)
{
    for (int i = 0; i < c->nth; i++)
        if (c->th[i].pid == pid && c->th[i].tid == tid)
            return &c->th[i];
    if (c->nth == 512)
        return NULL;
    struct th *t = &c->th[c->nth++];
    memset(t, 0, sizeof(*t));
    t->pid = pid;
    t->tid = tid;
    t->cap = 64u << 20;
    t->buf = malloc(t->cap);
    struct pt_config cfg;
    pt_config_init(&cfg);
    cfg.begin = t->buf;
    cfg.end = t->buf + t->cap;
    t->enc = pt_alloc_encoder(&cfg);
    return t;
}

static void hit(struct conv *c, struct th *t, uint64_t ip, uint64_t tsc)
{
    if (!t->started) {
        t->started = 1;
        t->first_tsc = tsc;
        psb(c, t, tsc);
    } else if (offset(t) - t->last_psb >= 4096) {
        psb(c, t, tsc);
    }
    struct pt_packet p;
    memset(&p, 0, sizeof(p));
    p.type = ppt_tsc;
    p.payload.tsc.tsc = tsc;
    enc(c, t, &p);
    memset(&p, 0, sizeof(p));
    p.type = ppt_tip_pge;
    c->rs = c->rs * 6364136223846793005ULL + 1442695040888963407ULL;
    int r = (int)(c->rs >> 60) & 3;
    if (r == 0 && (ip >> 16) == (t->last_ip >> 16))
        p.payload.ip.ipc = pt_ipc_update_16;
    else if (r == 1 && (ip >> 32) == (t->last_ip >> 32))
        p.payload.ip.ipc = pt_ipc_update_32;
    else if (r == 2)
        p.payload.ip.ipc = pt_ipc_full;
    else
        p.payload.ip.ipc = pt_ipc_sext_48;
    p.payload.ip.ip = ip;
    enc(c, t, &p);
    t->last_ip = ip;
    memset(&p, 0, sizeof(p));
    p.type = ppt_tip_pgd;
    p.payload.ip.ipc = pt_ipc_suppressed;
    enc(c, t, &p);
    t->last_tsc = tsc;
}

static void sb_rec(struct th *t, uint32_t type, const void *body, size_t blen, uint64_t time,
                   uint32_t cpu)
{
    struct perf_event_header h = {.type = type, .size = (uint16_t)(8 + blen + 32)};
    if (t->sbn + h.size > sizeof(t->sb))
        return;
    uint8_t *p = t->sb + t->sbn;
    memcpy(p, &h, 8);
    if (blen)
        memcpy(p + 8, body, blen);
    uint32_t pt[2] = {t->pid, t->tid}, cr[2] = {cpu, 0};
    uint64_t id = 0;
    memcpy(p + 8 + blen, pt, 8);
    memcpy(p + 16 + blen, &time, 8);
    memcpy(p + 24 + blen, cr, 8);
    memcpy(p + 32 + blen, &id, 8);
    t->sbn += h.size;
}

static int on_chunk(void *ctx, const struct ptc_chunk_header *h, const void *payload)
{
    struct conv *c = ctx;
    const uint8_t *p = payload;
    if (h->type == PTC_CHUNK_MODULE && h->payload_size >= sizeof(struct ptc_module) &&
        c->nmaps < 256) {
        struct ptc_module m;
        memcpy(&m, p, sizeof(m));
        struct stubmap *sm = &c->maps[c->nmaps++];
        sm->pid = h->pid;
        sm->first = m.first_stub_id;
        sm->n = m.num_stubs;
        sm->addr = malloc(8 * (size_t)m.num_stubs + 8);
        for (uint32_t i = 0; i < m.num_stubs; i++) {
            struct ptc_module_stub st;
            memcpy(&st, p + sizeof(m) + i * sizeof(st), sizeof(st));
            sm->addr[i] = st.address;
        }
        put(c, h->type, h->pid, h->tid, payload, h->payload_size, NULL, 0);
        struct ptc_pt_stubs ps = {.module_id = m.module_id, .stubs_start = m.stubs_start,
                                  .stubs_end = m.stubs_end};
        put(c, PTC_CHUNK_PT_STUBS, h->pid, 0, &ps, sizeof(ps), NULL, 0);
        return 0;
    }
    /* chunks the PT recorder does not write: the PT front-end feeds its events when the file
     * has been read, so per-thread/process end and unload chunks would come first */
    if (h->type == PTC_CHUNK_THREAD || h->type == PTC_CHUNK_PROCESS_END ||
        h->type == PTC_CHUNK_MODULE_UNLOAD)
        return 0;
    if (h->type != PTC_CHUNK_SOFT_EVENTS) {
        if (h->type == PTC_CHUNK_RECORD_INFO && h->payload_size >= sizeof(struct ptc_record_info)) {
            struct ptc_record_info ri;
            memcpy(&ri, p, sizeof(ri));
            ri.backend = PTC_BACKEND_PT;
            put(c, h->type, h->pid, h->tid, &ri, sizeof(ri), p + sizeof(ri),
                h->payload_size - sizeof(ri));
            return 0;
        }
        put(c, h->type, h->pid, h->tid, payload, h->payload_size, NULL, 0);
        return 0;
    }
    struct ptc_soft_events se;
    memcpy(&se, p, sizeof(se));
    struct th *t = thread(c, h->pid, h->tid);
    if (!t)
        return -1;
    const uint8_t *q = p + sizeof(se), *end = p + h->payload_size;
    uint64_t tsc = se.start_tsc;
    int timed = se.flags & PTC_SOFT_F_TIMED;
    while (q < end) {
        uint64_t v, op = 0, d;
        if (ptc_varint_get(&q, end, &v))
            return -1;
        if (v < PTC_SOFT_ID_BASE && ptc_varint_get(&q, end, &op))
            return -1;
        if (timed) {
            if (ptc_varint_get(&q, end, &d))
                return -1;
            tsc += (uint64_t)ptc_unzigzag(d);
        }
        if (v >= PTC_SOFT_ID_BASE) {
            uint64_t ip = addr_of(c, h->pid, v - PTC_SOFT_ID_BASE);
            if (ip)
                hit(c, t, ip, tsc);
        } else if (v == PTC_SOFT_LOSS && t->started) {
            struct pt_packet pk;
            memset(&pk, 0, sizeof(pk));
            pk.type = ppt_ovf;
            enc(c, t, &pk);
            t->last_ip = 0;
        } else if (v == PTC_SOFT_FORK) {
            uint32_t body[6] = {(uint32_t)op, t->pid, (uint32_t)op, t->tid, (uint32_t)tsc,
                                (uint32_t)(tsc >> 32)};
            sb_rec(t, PERF_RECORD_FORK, body, 24, tsc, (uint32_t)(t - c->th));
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: pt_soft2pt IN.ptc OUT.ptc\n");
        return 2;
    }
    static struct conv C;
    struct conv *c = &C;
    c->rs = 42;
    c->out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (c->out < 0) {
        perror(argv[2]);
        return 1;
    }
    struct ptc_file_header fh;
    char err[256];
    /* header first (patched backend), then the config */
    struct ptc_file_header oh;
    ptc_file_header_init(&oh, PTC_BACKEND_PT, 0, 0);
    if (write(c->out, &oh, sizeof(oh)) != (ssize_t)sizeof(oh))
        return 1;
    struct ptc_pt_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.size = sizeof(cfg);
    cfg.flags = PTC_PT_F_TSC | PTC_PT_F_TIME_ZERO; /* perf time = TSC */
    cfg.time_mult = 1;
    cfg.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
    put(c, PTC_CHUNK_PT_CONFIG, 0, 0, &cfg, sizeof(cfg), NULL, 0);
    if (ptc_pt_read_file(argv[1], &fh, on_chunk, c, err, sizeof(err))) {
        fprintf(stderr, "pt_soft2pt: %s\n", err);
        return 1;
    }
    /* one stream ("CPU") per thread, owned by that thread through an AUX record */
    uint64_t hits = 0;
    for (int i = 0; i < c->nth; i++) {
        struct th *t = &c->th[i];
        uint64_t len = offset(t);
        for (uint64_t o = 0; o < len; o += 65536) {
            struct ptc_pt_aux a = {.cpu = (uint32_t)i, .offset = o};
            put(c, PTC_CHUNK_PT_AUX, 0, 0, &a, sizeof(a), t->buf + o,
                len - o < 65536 ? len - o : 65536);
        }
        uint32_t ids[2] = {t->pid, t->tid};
        sb_rec(t, PERF_RECORD_ITRACE_START, ids, 8, t->first_tsc, (uint32_t)i);
        uint64_t aux[3] = {0, len, 0};
        sb_rec(t, PERF_RECORD_AUX, aux, 24, t->last_tsc + 1, (uint32_t)i);
        struct ptc_pt_sideband sb = {.cpu = (uint32_t)i, .sample_type = cfg.sample_type};
        put(c, PTC_CHUNK_PT_SIDEBAND, 0, 0, &sb, sizeof(sb), t->sb, t->sbn);
        hits += len;
        pt_free_encoder(t->enc);
        free(t->buf);
    }
    /* two round markers, as the recorder's last passes write them: every piece is then
     * fed while the file is read (the streaming path of the session front-end), not at
     * the end */
    for (uint64_t k = 0; k < 2; k++) {
        struct ptc_pt_round rd = {.size = sizeof(rd), .version = PTC_PT_ROUND_VERSION,
                                  .seq = k};
        struct iovec iov = {&rd, sizeof(rd)};
        if (ptc_write_chunk(c->out, PTC_CHUNK_PT_ROUND, PTC_CHUNK_F_OPTIONAL, 0, 0,
                            next_seq(c, 0, 0), &iov, 1))
            c->err = 1;
    }
    for (int i = 0; i < c->nmaps; i++)
        free(c->maps[i].addr);
    close(c->out);
    printf("pt_soft2pt: %d threads, %llu PT bytes\n", c->nth, (unsigned long long)hits);
    return c->err;
}
