/* pt_decode_bench: decoding speed of a synthetic stub-filtered Intel PT stream.
 *
 *   pt_decode_bench [HITS] [none|tsc|mtc|cyc|all] [--suppressed]
 *
 * Writes (with libipt's encoder, test/pt/ptgen.c) one CPU's stream of HITS stub hits
 * (default 10 M): TIP.PGE into a stub and TIP.PGD back out with the return address (or
 * with a suppressed IP), a call every ~100 cycles, PSB+ every 4 KiB, and the timing packets
 * of the chosen --timing. Then decodes the same bytes, in one run, with
 *   - ptcall's fast path (decoder/pt: packet parser + interpretation into hits),
 *   - libipt's query decoder (pt_qry_*: the decoder of record),
 *   - libipt's packet decoder (pt_pkt_next, counting TIP.PGE with last-IP tracking),
 * and prints events/s and MB/s for each, bytes per hit, and whether the hit counts agree. */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptc_pt_decode.h"
#include "ptgen.h"

static double now(void)
{
    struct timespec t;
    /* CPU time of this thread: the machine is shared, wall time is noisy */
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t run_fast(const uint8_t *buf, size_t len, const struct ptc_pt_dcfg *cfg)
{
    struct ptc_pt_sdec *d = ptc_pt_sdec_new(cfg, buf, len, NULL, 0);
    const struct ptc_pt_item *it;
    uint64_t hits = 0, sum = 0;
    long k;
    while ((k = ptc_pt_sdec_batch(d, &it)) > 0)
        for (long i = 0; i < k; i++) {
            hits += it[i].kind == PTC_PT_ITEM_HIT;
            sum += it[i].ip + it[i].tsc;
        }
    if (ptc_pt_sdec_stats(d)->spans_libipt)
        fprintf(stderr, "note: %llu spans went to libipt\n",
                (unsigned long long)ptc_pt_sdec_stats(d)->spans_libipt);
    ptc_pt_sdec_free(d);
    return hits + (sum & 0); /* keep sum alive */
}

static void cfg_init(struct pt_config *c, const uint8_t *buf, size_t len, int timing)
{
    pt_config_init(c);
    c->begin = (uint8_t *)buf;
    c->end = (uint8_t *)buf + len;
    c->cpuid_0x15_eax = 1;
    c->cpuid_0x15_ebx = 40;
    c->mtc_freq = 3;
    c->nom_freq = timing == 3 ? 24 : 0;
}

static uint64_t run_query(const uint8_t *buf, size_t len, int timing)
{
    struct pt_config c;
    cfg_init(&c, buf, len, timing);
    struct pt_query_decoder *q = pt_qry_alloc_decoder(&c);
    uint64_t ip, hits = 0, sum = 0;
    int st = pt_qry_sync_forward(q, &ip);
    while (st >= 0) {
        if (st & pts_event_pending) {
            struct pt_event ev;
            st = pt_qry_event(q, &ev, sizeof(ev));
            if (st >= 0 && ev.type == ptev_enabled && !ev.status_update) {
                hits++;
                sum += ev.variant.enabled.ip + ev.tsc;
            }
            continue;
        }
        if (st & pts_eos)
            break;
        int taken;
        st = pt_qry_cond_branch(q, &taken);
        if (st == -pte_bad_query) {
            uint64_t tip;
            st = pt_qry_indirect_branch(q, &tip);
        }
    }
    pt_qry_free_decoder(q);
    return hits + (sum & 0);
}

static uint64_t run_packet(const uint8_t *buf, size_t len, int timing)
{
    struct pt_config c;
    cfg_init(&c, buf, len, timing);
    struct pt_packet_decoder *d = pt_pkt_alloc_decoder(&c);
    uint64_t hits = 0, last = 0, sum = 0;
    int st = pt_pkt_sync_forward(d);
    struct pt_packet p;
    while (st >= 0 && (st = pt_pkt_next(d, &p, sizeof(p))) >= 0) {
        switch (p.type) {
        case ppt_psb:
            last = 0;
            break;
        case ppt_tip_pge:
        case ppt_tip_pgd:
        case ppt_fup:
        case ppt_tip:
            switch (p.payload.ip.ipc) {
            case pt_ipc_update_16: last = (last & ~0xffffULL) | (p.payload.ip.ip & 0xffff); break;
            case pt_ipc_update_32:
                last = (last & ~0xffffffffULL) | (p.payload.ip.ip & 0xffffffffULL);
                break;
            case pt_ipc_update_48:
                last = (last & ~0xffffffffffffULL) | (p.payload.ip.ip & 0xffffffffffffULL);
                break;
            case pt_ipc_sext_48: last = (uint64_t)((int64_t)(p.payload.ip.ip << 16) >> 16); break;
            case pt_ipc_full: last = p.payload.ip.ip; break;
            default: break;
            }
            if (p.type == ppt_tip_pge) {
                hits++;
                sum += last;
            }
            break;
        default:
            break;
        }
    }
    pt_pkt_free_decoder(d);
    return hits + (sum & 0);
}

int main(int argc, char **argv)
{
    uint64_t n = 10000000;
    int t0 = 0, t1 = 3, suppressed = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--suppressed"))
            suppressed = 1;
        else if (!strcmp(argv[i], "none"))
            t0 = t1 = 0;
        else if (!strcmp(argv[i], "tsc"))
            t0 = t1 = 1;
        else if (!strcmp(argv[i], "mtc"))
            t0 = t1 = 2;
        else if (!strcmp(argv[i], "cyc"))
            t0 = t1 = 3;
        else if (!strcmp(argv[i], "all"))
            t0 = 0, t1 = 3;
        else
            n = strtoull(argv[i], NULL, 0);
    }
    static const char *const tn[] = {"none", "tsc", "mtc", "cyc"};
    printf("pt_decode_bench: %llu stub hits per stream, exit TIP.PGD %s, one run each\n",
           (unsigned long long)n, suppressed ? "with suppressed IP" : "with the return address");
    printf("%-6s %9s %10s | %-22s %-22s %-22s | %s\n", "timing", "MB", "bytes/hit",
           "ptcall fast path", "libipt query decoder", "libipt packet decoder", "agree");
    for (int t = t0; t <= t1; t++) {
        size_t len;
        uint64_t start;
        uint32_t ns;
        uint8_t *buf = ptgen_bench_stream(t, n, suppressed, &len, &start, &ns);
        struct ptc_pt_range rg = {start, start + 16ull * ns};
        struct ptc_pt_dcfg cfg;
        memset(&cfg, 0, sizeof(cfg));
        cfg.flags = (t >= 1 ? PTC_PT_F_TSC : 0) | (t >= 2 ? PTC_PT_F_MTC : 0) |
                    (t >= 3 ? PTC_PT_F_CYC : 0);
        cfg.mtc_freq = 3;
        cfg.nom_freq = 24;
        cfg.cpuid_0x15_eax = 1;
        cfg.cpuid_0x15_ebx = 40;
        cfg.ranges = &rg;
        cfg.num_ranges = 1;
        cfg.mode = PTC_PT_MODE_FAST;
        double mb = (double)len / 1e6;
        double a = now();
        uint64_t hf = run_fast(buf, len, &cfg);
        double b = now();
        uint64_t hq = run_query(buf, len, t);
        double c = now();
        uint64_t hp = run_packet(buf, len, t);
        double d = now();
        char s1[64], s2[64], s3[64];
        snprintf(s1, sizeof(s1), "%6.1f M/s %6.0f MB/s", (double)hf / (b - a) / 1e6, mb / (b - a));
        snprintf(s2, sizeof(s2), "%6.1f M/s %6.0f MB/s", (double)hq / (c - b) / 1e6, mb / (c - b));
        snprintf(s3, sizeof(s3), "%6.1f M/s %6.0f MB/s", (double)hp / (d - c) / 1e6, mb / (d - c));
        printf("%-6s %9.1f %10.2f | %-22s %-22s %-22s | %s (%llu hits)\n", tn[t], mb,
               (double)len / (double)n, s1, s2, s3,
               hf == n && hq == n && hp == n ? "yes" : "NO", (unsigned long long)hf);
        fflush(stdout);
        free(buf);
    }
    return 0;
}
