/* The byte model of full Intel PT (docs/bandwidth.md, "Full tracing, estimated"): branch
 * counts and a PT configuration in, packets and bytes per packet type out. Per function:
 *   TNT bits  = conditional branches (+ returns the return stack predicts, with compression)
 *   TIP       = indirect jumps and calls (+ the other returns), 1 + 2/4/6 bytes each
 *   TIP.PGD() = 1 byte per syscall (user-only tracing stops in the kernel); TIP.PGE(next IP)
 *               when it comes back, 1 + 2/4/6 bytes
 *   TNT       = short TNT packets (1 byte, up to 6 bits); the TIPs and TIP.PGDs flush the
 *               pending bits, which are taken to be spread evenly between them
 *   CYC       = one before every TIP, TIP.PGE, TIP.PGD and every full TNT packet (a TNT a flush
 *               emits shares the flushing packet's cycle), of the size of the mean interval
 * For the run: MTC every 2^mtc_period crystal ticks of the duration (a CYC before each), and
 * PSB+ at the start and every psb_period bytes. */
#include <stdio.h>
#include <string.h>

#include <intel-pt.h>

#include "fullpt.h"

_Static_assert(ppt_cyc < PTC_FULLPT_NPKT && ppt_tnt_64 < PTC_FULLPT_NPKT,
               "per-type arrays too small for libipt's packet types");

const unsigned ptc_fullpt_ipc_bytes[PTC_FULLPT_NIPC] = {2, 4, 6};

void ptc_fullpt_cfg_default(struct ptc_fullpt_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->timing = PTC_FULLPT_MTC;
    cfg->mtc_period = 3;
    cfg->cyc_threshold = 0;
    cfg->psb_period = 1u << 14;
    cfg->ret_compression = 1;
    cfg->tsc_hz = 2400000000ull;
    cfg->ctc_hz = 24000000ull;
}

const char *ptc_fullpt_pkt_name(int ppt)
{
    switch (ppt) {
    case ppt_tnt_8: return "tnt.8";
    case ppt_tnt_64: return "tnt.64";
    case ppt_tip: return "tip";
    case ppt_tip_pge: return "tip.pge";
    case ppt_tip_pgd: return "tip.pgd";
    case ppt_fup: return "fup";
    case ppt_psb: return "psb";
    case ppt_psbend: return "psbend";
    case ppt_tsc: return "tsc";
    case ppt_tma: return "tma";
    case ppt_cbr: return "cbr";
    case ppt_mode: return "mode.exec";
    case ppt_mtc: return "mtc";
    case ppt_cyc: return "cyc";
    default: return "other";
    }
}

uint64_t ptc_fullpt_tnt_packets(uint64_t bits, uint64_t flushes, uint64_t *full)
{
    if (full)
        *full = 0;
    if (!bits)
        return 0;
    /* s stretches with bits in them: q bits in each, one more in r of them */
    uint64_t s = flushes < bits ? flushes + 1 : bits;
    uint64_t q = bits / s, r = bits % s;
    if (full)
        *full = r * ((q + 1) / 6) + (s - r) * (q / 6);
    return r * ((q + 1 + 5) / 6) + (s - r) * ((q + 5) / 6);
}

unsigned ptc_fullpt_cyc_bytes(uint64_t v)
{
    unsigned n = 1;
    for (v >>= 5; v; v >>= 7)
        n++;
    return n;
}

unsigned ptc_fullpt_psb_plus_bytes(const struct ptc_fullpt_cfg *cfg)
{
    unsigned b = 16 + 4 + 2 + 7 + 2; /* PSB, CBR, MODE.Exec, FUP (full IP: last IP is 0), PSBEND */
    if (cfg->timing >= PTC_FULLPT_TSC)
        b += 8; /* TSC */
    if (cfg->timing >= PTC_FULLPT_MTC)
        b += 7; /* TMA */
    return b;
}

static void add_pkt(struct ptc_fullpt_bytes *o, int type, uint64_t packets, uint64_t bytes)
{
    o->packets[type] += packets;
    o->bytes[type] += bytes;
    o->total += bytes;
}

/* Control-flow packets of one function; returns the CYC-eligible events among them. */
static uint64_t func_packets(const struct ptc_fullpt_counts *c, const struct ptc_fullpt_cfg *cfg,
                             struct ptc_fullpt_bytes *o)
{
    int rc = cfg->ret_compression != 0;
    uint64_t deep = c->ret_deep < c->ret ? c->ret_deep : c->ret;
    uint64_t bits = c->cond + (rc ? c->ret - deep : 0);
    uint64_t tips = c->ijmp + c->icall + (rc ? deep : c->ret);
    uint64_t tip_bytes = 0, pge_bytes = 0;
    for (int k = 0; k < PTC_FULLPT_NIPC; k++) {
        uint64_t n = c->ind_ipc[k] + (rc ? c->deep_ipc[k] : c->ret_ipc[k]);
        tip_bytes += n * (1 + ptc_fullpt_ipc_bytes[k]);
        pge_bytes += c->sys_ipc[k] * (1 + ptc_fullpt_ipc_bytes[k]);
    }
    uint64_t full = 0, tnt = ptc_fullpt_tnt_packets(bits, tips + c->sys, &full);
    add_pkt(o, ppt_tnt_8, tnt, tnt);
    add_pkt(o, ppt_tip, tips, tip_bytes);
    add_pkt(o, ppt_tip_pgd, c->sys, c->sys);
    add_pkt(o, ppt_tip_pge, c->sys, pge_bytes);
    o->tnt_bits += bits;
    o->tips += tips;
    return full + tips + 2 * c->sys;
}

static int fail(char *why, size_t n, const char *msg)
{
    snprintf(why, n, "%s", msg);
    return -1;
}

int ptc_fullpt_estimate(const struct ptc_fullpt_profile *p, const struct ptc_fullpt_cfg *cfg,
                        struct ptc_fullpt_bytes *total, struct ptc_fullpt_bytes *per_func,
                        char *why, size_t n)
{
    if (cfg->timing < PTC_FULLPT_NONE || cfg->timing > PTC_FULLPT_CYC)
        return fail(why, n, "unknown timing mode (none, tsc, mtc or cyc)");
    if (cfg->mtc_period > 15 || cfg->cyc_threshold > 15)
        return fail(why, n, "mtc_period and cyc_threshold are 4-bit fields (0..15)");
    int mtc = cfg->timing >= PTC_FULLPT_MTC, cyc = cfg->timing >= PTC_FULLPT_CYC;
    if (mtc && (!cfg->duration_tsc || !cfg->tsc_hz || !cfg->ctc_hz))
        return fail(why, n, "MTC and CYC need the run's duration and the TSC and crystal "
                            "frequencies (a timed trace); use timing none or tsc");
    unsigned psb = ptc_fullpt_psb_plus_bytes(cfg);
    if (cfg->psb_period && cfg->psb_period <= psb)
        return fail(why, n, "psb_period is smaller than a PSB+");

    memset(total, 0, sizeof *total);
    total->estimate = 1;
    /* control flow, per function; CYC-eligible events counted for the CYC pass */
    uint64_t eligible = 0;
    for (size_t i = 0; i < p->nfunc; i++) {
        struct ptc_fullpt_bytes f;
        memset(&f, 0, sizeof f);
        f.estimate = 1;
        eligible += func_packets(&p->func[i].c, cfg, &f);
        if (per_func)
            per_func[i] = f;
        for (int t = 0; t < PTC_FULLPT_NPKT; t++)
            add_pkt(total, t, f.packets[t], f.bytes[t]);
        total->tnt_bits += f.tnt_bits;
        total->tips += f.tips;
        if (p->func[i].in_main)
            total->main_bytes += f.total;
    }
    /* MTC: one per 2^mtc_period crystal ticks of the duration */
    uint64_t n_mtc = 0;
    if (mtc) {
        n_mtc = (uint64_t)((unsigned __int128)cfg->duration_tsc * cfg->ctc_hz /
                           ((unsigned __int128)cfg->tsc_hz << cfg->mtc_period));
        add_pkt(total, ppt_mtc, n_mtc, 2 * n_mtc);
    }
    /* CYC: before every eligible event (threshold 0), else at most one per threshold
     * interval, shared out over the events; each carries the mean number of cycles between
     * CYCs (core clock = TSC) */
    if (cyc) {
        uint64_t events = eligible + n_mtc, n_cyc = events;
        if (cfg->cyc_threshold) {
            uint64_t cap = cfg->duration_tsc >> (cfg->cyc_threshold - 1);
            n_cyc = cap < events ? cap : events;
        }
        unsigned size = n_cyc ? ptc_fullpt_cyc_bytes(cfg->duration_tsc / n_cyc) : 1;
        for (size_t i = 0; i < p->nfunc && events; i++) {
            struct ptc_fullpt_bytes scratch;
            memset(&scratch, 0, sizeof scratch);
            uint64_t e = func_packets(&p->func[i].c, cfg, &scratch);
            uint64_t k = (uint64_t)((unsigned __int128)n_cyc * e / events);
            add_pkt(total, ppt_cyc, k, k * size);
            if (per_func)
                add_pkt(&per_func[i], ppt_cyc, k, k * size);
            if (p->func[i].in_main)
                total->main_bytes += k * size;
        }
        uint64_t k = events ? (uint64_t)((unsigned __int128)n_cyc * n_mtc / events) : 0;
        add_pkt(total, ppt_cyc, k, k * size);
    }
    /* PSB+: the trace starts with one, and one follows every psb_period bytes (its own bytes
     * included): the least P with P * (period - psb) >= the other bytes */
    uint64_t n_psb = 1;
    if (cfg->psb_period) {
        uint64_t room = cfg->psb_period - psb;
        uint64_t q = (total->total + room - 1) / room;
        n_psb = q > 1 ? q : 1;
    }
    add_pkt(total, ppt_psb, n_psb, 16 * n_psb);
    add_pkt(total, ppt_psbend, n_psb, 2 * n_psb);
    add_pkt(total, ppt_cbr, n_psb, 4 * n_psb);
    add_pkt(total, ppt_mode, n_psb, 2 * n_psb);
    add_pkt(total, ppt_fup, n_psb, 7 * n_psb);
    if (cfg->timing >= PTC_FULLPT_TSC)
        add_pkt(total, ppt_tsc, n_psb, 8 * n_psb);
    if (mtc)
        add_pkt(total, ppt_tma, n_psb, 7 * n_psb);
    if (cfg->duration_tsc && cfg->tsc_hz) {
        double sec = (double)cfg->duration_tsc / (double)cfg->tsc_hz;
        total->bytes_per_sec = (double)total->total / sec;
        for (size_t i = 0; per_func && i < p->nfunc; i++)
            per_func[i].bytes_per_sec = (double)per_func[i].total / sec;
    }
    return 0;
}
