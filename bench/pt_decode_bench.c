/* pt_decode_bench: decoding speed of a synthetic stub-filtered Intel PT stream.
 *
 *   pt_decode_bench [HITS] [none|tsc|mtc|cyc|all] [--suppressed] [--threads N] [--piece KB]
 *                   [--only fast,par,query,packet]
 *
 * Writes (with libipt's encoder, test/pt/ptgen.c) one CPU's stream of HITS stub hits
 * (default 10 M): TIP.PGE into a stub and TIP.PGD back out with the return address (or
 * with a suppressed IP), a call every ~100 cycles, PSB+ every 4 KiB, and the timing packets
 * of the chosen --timing. Then decodes the same bytes, in one run, with
 *   - ptcall's fast path, one thread (decoder/pt: packet parser + interpretation into hits),
 *   - ptcall's parallel decode with N worker threads (default: the number of CPUs), the
 *     stream cut at PSBs into pieces of 256 KiB (--piece) (decoder/pt/pt_par.c),
 *   - libipt's query decoder (pt_qry_*: the decoder of record),
 *   - libipt's packet decoder (pt_pkt_next, counting TIP.PGE with last-IP tracking),
 * and prints, for each, million hits per second of CPU time (the machine is shared, so
 * this is the steadier figure; for the parallel decode it is the CPU time of the whole
 * process) and of wall time, MB/s (wall), the ratios that matter, and whether all hit
 * counts agree. The load average before and after is printed too. --only runs just the
 * decoders named (the others' cells print as -, and agree compares only those that ran):
 * libipt's query decoder takes most of a full run, which is in the way when one measures
 * ptcall's decoders over and over. */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ptc_pt_decode.h"
#include "ptgen.h"

static double clk(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* one measurement: thread or process CPU time, and wall time */
struct meter { double cpu0, wall0, cpu, wall; clockid_t id; };
static void m_start(struct meter *m, clockid_t id)
{
    m->id = id;
    m->wall0 = clk(CLOCK_MONOTONIC);
    m->cpu0 = clk(id);
}
static void m_stop(struct meter *m)
{
    m->cpu = clk(m->id) - m->cpu0;
    m->wall = clk(CLOCK_MONOTONIC) - m->wall0;
}

struct par_sum { uint64_t hits, sum; };
static int par_count(void *ctx, size_t stream, const struct ptc_pt_item *it, size_t n)
{
    struct par_sum *p = ctx;
    (void)stream;
    for (size_t i = 0; i < n; i++) {
        p->hits += it[i].kind == PTC_PT_ITEM_HIT;
        p->sum += it[i].ip + it[i].tsc;
    }
    return 0;
}

static size_t piece_bytes = 256u << 10;

static uint64_t run_par(const uint8_t *buf, size_t len, const struct ptc_pt_dcfg *cfg,
                        int threads)
{
    struct ptc_pt_par_stream s = {.buf = buf, .len = len};
    struct par_sum p = {0, 0};
    if (ptc_pt_par_decode(cfg, &s, 1, threads, piece_bytes, par_count, &p))
        fprintf(stderr, "parallel decode failed\n");
    return p.hits + (p.sum & 0);
}

static void loadavg(char *out, size_t n)
{
    FILE *f = fopen("/proc/loadavg", "r");
    out[0] = 0;
    if (f) {
        if (!fgets(out, (int)n, f))
            out[0] = 0;
        fclose(f);
    }
    out[strcspn(out, "\n")] = 0;
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

static void cell(char *o, size_t n, uint64_t hits, double mb, const struct meter *m)
{
    if (!m) {
        snprintf(o, n, "%6s %6s %5s", "-", "-", "-");
        return;
    }
    snprintf(o, n, "%6.1f %6.1f %5.0f", (double)hits / m->cpu / 1e6, (double)hits / m->wall / 1e6,
             mb / m->wall);
}

int main(int argc, char **argv)
{
    uint64_t n = 10000000;
    int t0 = 0, t1 = 3, suppressed = 0;
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    int run_f = 1, run_p = 1, run_q = 1, run_k = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            const char *o = argv[++i];
            run_f = strstr(o, "fast") != NULL;
            run_p = strstr(o, "par") != NULL;
            run_q = strstr(o, "query") != NULL;
            run_k = strstr(o, "packet") != NULL;
        } else if (!strcmp(argv[i], "--suppressed"))
            suppressed = 1;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--piece") && i + 1 < argc)
            piece_bytes = (size_t)atoi(argv[++i]) << 10;
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
    if (threads < 1)
        threads = 1;
    static const char *const tn[] = {"none", "tsc", "mtc", "cyc"};
    char la[128];
    loadavg(la, sizeof(la));
    printf("pt_decode_bench: %llu stub hits per stream, exit TIP.PGD %s, %d CPUs online, "
           "load average before: %s\n",
           (unsigned long long)n, suppressed ? "with suppressed IP" : "with the return address",
           (int)sysconf(_SC_NPROCESSORS_ONLN), la);
    printf("per decoder: M hits/s of CPU time, M hits/s of wall time, MB/s of wall time\n");
    char pn[32];
    snprintf(pn, sizeof(pn), "parallel, %d thr", threads);
    printf("%-5s %6s %5s | %-18s | %-18s | %-18s | %-18s | %6s %6s %7s %7s | %s\n", "time",
           "MB", "B/hit", "fast, 1 thread", pn, "libipt query", "libipt packet", "fast/q",
           "fast/p", "par/1", "par/1", "agree");
    printf("%-5s %6s %5s | %-18s | %-18s | %-18s | %-18s | %6s %6s %7s %7s |\n", "", "", "",
           "  cpu   wall  MB/s", "  cpu   wall  MB/s", "  cpu   wall  MB/s",
           "  cpu   wall  MB/s", "cpu", "cpu", "wall", "cpu");
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
        struct meter mf = {0}, mp = {0}, mq = {0}, mk = {0};
        uint64_t hf = n, hpar = n, hq = n, hp = n; /* a decoder that did not run agrees */
        if (run_f) {
            m_start(&mf, CLOCK_THREAD_CPUTIME_ID);
            hf = run_fast(buf, len, &cfg);
            m_stop(&mf);
        }
        if (run_p) {
            m_start(&mp, CLOCK_PROCESS_CPUTIME_ID); /* all worker threads */
            hpar = run_par(buf, len, &cfg, threads);
            m_stop(&mp);
        }
        if (run_q) {
            m_start(&mq, CLOCK_THREAD_CPUTIME_ID);
            hq = run_query(buf, len, t);
            m_stop(&mq);
        }
        if (run_k) {
            m_start(&mk, CLOCK_THREAD_CPUTIME_ID);
            hp = run_packet(buf, len, t);
            m_stop(&mk);
        }
        char s1[64], s2[64], s3[64], s4[64];
        cell(s1, sizeof(s1), hf, mb, run_f ? &mf : NULL);
        cell(s2, sizeof(s2), hpar, mb, run_p ? &mp : NULL);
        cell(s3, sizeof(s3), hq, mb, run_q ? &mq : NULL);
        cell(s4, sizeof(s4), hp, mb, run_k ? &mk : NULL);
        printf("%-5s %6.1f %5.2f | %-18s | %-18s | %-18s | %-18s | %5.1fx %5.1fx %6.2fx %6.2fx | "
               "%s (%llu hits)\n",
               tn[t], mb, (double)len / (double)n, s1, s2, s3, s4, mq.cpu / mf.cpu,
               mk.cpu / mf.cpu, mf.wall / mp.wall, mf.cpu / mp.cpu,
               hf == n && hpar == n && hq == n && hp == n ? "yes" : "NO",
               (unsigned long long)hf);
        fflush(stdout);
        free(buf);
    }
    loadavg(la, sizeof(la));
    printf("load average after: %s\n", la);
    return 0;
}
