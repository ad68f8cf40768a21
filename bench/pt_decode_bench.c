/* pt_decode_bench: decoding speed of a synthetic stub-filtered Intel PT stream.
 *
 *   pt_decode_bench [HITS] [none|tsc|mtc|cyc|all] [--suppressed] [--threads N] [--piece KB]
 *                   [--repeat N] [--only fast,par,parts,query,packet]
 *
 * Writes (with libipt's encoder, test/pt/ptgen.c) one CPU's stream of HITS stub hits
 * (default 10 M): TIP.PGE into a stub and TIP.PGD back out with the return address (or
 * with a suppressed IP), a call every ~100 cycles, PSB+ every 4 KiB, and the timing packets
 * of the chosen --timing. Then decodes the same bytes, in one run, with
 *   - fast: ptcall's fast path, one thread (decoder/pt: packet parser + interpretation into
 *     hits),
 *   - par: ptcall's parallel decode with N threads (default: the number of CPUs), the
 *     stream cut at PSBs into pieces of 256 KiB (--piece) (decoder/pt/pt_par*.c),
 *   - parts: the ceiling for par - the stream cut at PSBs into N parts, each decoded by the
 *     fast path on its own thread, nothing shared and no order kept: what the machine's
 *     cores give to independent work (on a VM whose vCPUs share the host, less than N),
 *   - query: libipt's query decoder (pt_qry_*: the decoder of record),
 *   - packet: libipt's packet decoder (pt_pkt_next, counting TIP.PGE with last-IP tracking),
 * and prints, for each, million hits per second of CPU time (for par and parts, the CPU
 * time of the whole process) and of wall time, MB/s (wall), the ratios that matter, and
 * whether every decoder found every hit. The load average before and after is printed too.
 *
 * --repeat N: fast, par and parts take turns N times (libipt's decoders, far slower, run
 * once); cells show the median round's figures, and the ratios between ptcall's decoders
 * are medians over rounds of each round's pair, measured back to back - on a shared machine
 * one run's ratio moves by ±20 %, as the other tenants come and go. --only runs just the
 * decoders named (the others' cells print as -). */
#include <intel-pt.h>
#include <math.h>
#include <pthread.h>
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

/* The machine's ceiling for a parallel decode: the stream cut at PSBs into one part per
 * thread, each decoded by the single-thread fast path with no order kept and nothing
 * shared. What this reaches over one thread is what the cores give (on a VM whose vCPUs
 * share the host's cores with others, often less than their number). The parallel decode
 * has the same work plus keeping the order, so this is its ceiling - except that its pieces
 * go to whichever thread is free, so when the host slows one core for a while it can come
 * out a little ahead of these fixed parts. */
struct part { const uint8_t *buf; size_t len; const struct ptc_pt_dcfg *cfg; uint64_t hits; };
static void *part_main(void *arg)
{
    struct part *p = arg;
    p->hits = run_fast(p->buf, p->len, p->cfg);
    return NULL;
}

static uint64_t run_parts(const uint8_t *buf, size_t len, const struct ptc_pt_dcfg *cfg,
                          int threads)
{
    struct part parts[64];
    pthread_t th[64];
    int np = threads < 64 ? threads : 64, started = 0;
    size_t a = 0;
    for (int i = 0; i < np; i++) {
        size_t b = i + 1 == np ? len : ptc_pt_find_psb(buf, len, len / (size_t)np * (size_t)(i + 1));
        if (b < a)
            b = a;
        parts[i] = (struct part){buf + a, b - a, cfg, 0};
        a = b;
    }
    for (int i = 1; i < np; i++) {
        if (pthread_create(&th[i], NULL, part_main, &parts[i]))
            break;
        started = i;
    }
    part_main(&parts[0]);
    uint64_t hits = parts[0].hits;
    for (int i = 1; i <= started; i++) {
        pthread_join(th[i], NULL);
        hits += parts[i].hits;
    }
    for (int i = started + 1; i < np; i++) /* a thread that could not start: here, serially */
        hits += run_fast(parts[i].buf, parts[i].len, cfg);
    return hits;
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

/* median of n values (sorts them) */
static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define MAX_REPEAT 99
enum { D_FAST, D_PAR, D_PARTS, D_QUERY, D_PACKET, N_DEC };

/* The round whose wall time is the median of decoder k's (its cell shows that run). */
static const struct meter *median_run(const struct meter *m, int n)
{
    double w[MAX_REPEAT];
    for (int r = 0; r < n; r++)
        w[r] = m[r].wall;
    double med = median(w, n);
    const struct meter *best = &m[0];
    for (int r = 1; r < n; r++)
        if (fabs(m[r].wall - med) < fabs(best->wall - med))
            best = &m[r];
    return best;
}

/* median over rounds of num's time over den's, each round's pair measured back to back */
static double paired(const struct meter *num, const struct meter *den, int n, int cpu)
{
    double v[MAX_REPEAT];
    for (int r = 0; r < n; r++)
        v[r] = cpu ? num[r].cpu / den[r].cpu : num[r].wall / den[r].wall;
    return median(v, n);
}

/* a ratio column: "1.23x", or "-" when a side did not run */
static void ratio(char *o, size_t n, int width, int ran, double v)
{
    if (ran)
        snprintf(o, n, "%*.*fx", width, width == 5 ? 1 : 2, v);
    else
        snprintf(o, n, "%*s", width + 1, "-");
}

int main(int argc, char **argv)
{
    uint64_t n = 10000000;
    int t0 = 0, t1 = 3, suppressed = 0, repeat = 1;
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    int run[N_DEC] = {1, 1, 1, 1, 1};
    static const char *const dn[N_DEC] = {"fast", "par", "parts", "query", "packet"};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            char o[128];
            snprintf(o, sizeof(o), "%s", argv[++i]);
            memset(run, 0, sizeof(run));
            for (char *save = NULL, *w = strtok_r(o, ",", &save); w;
                 w = strtok_r(NULL, ",", &save)) {
                int k = 0;
                while (k < N_DEC && strcmp(w, dn[k]))
                    k++;
                if (k == N_DEC) {
                    fprintf(stderr, "pt_decode_bench: --only: no decoder '%s' (fast, par, "
                                    "parts, query, packet)\n", w);
                    return 2;
                }
                run[k] = 1;
            }
        } else if (!strcmp(argv[i], "--suppressed"))
            suppressed = 1;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi(argv[++i]);
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
        else if (argv[i][0] >= '0' && argv[i][0] <= '9')
            n = strtoull(argv[i], NULL, 0);
        else {
            fprintf(stderr, "pt_decode_bench: unknown argument '%s' (see the comment at the top "
                            "of bench/pt_decode_bench.c)\n", argv[i]);
            return 2;
        }
    }
    if (threads < 1)
        threads = 1;
    if (repeat < 1 || repeat > MAX_REPEAT) {
        fprintf(stderr, "pt_decode_bench: --repeat takes 1 to %d\n", MAX_REPEAT);
        return 2;
    }
    static const char *const tn[] = {"none", "tsc", "mtc", "cyc"};
    char la[128];
    loadavg(la, sizeof(la));
    printf("pt_decode_bench: %llu stub hits per stream, exit TIP.PGD %s, %d CPUs online, "
           "%d round(s), load average before: %s\n",
           (unsigned long long)n, suppressed ? "with suppressed IP" : "with the return address",
           (int)sysconf(_SC_NPROCESSORS_ONLN), repeat, la);
    printf("per decoder: M hits/s of CPU time, M hits/s of wall time, MB/s of wall time "
           "(the median round's)\n");
    char pn[32], qn[32];
    snprintf(pn, sizeof(pn), "parallel, %d thr", threads);
    snprintf(qn, sizeof(qn), "%d parts, no order", threads);
    printf("%-5s %6s %5s | %-18s | %-18s | %-18s | %-18s | %-18s | %6s %6s %7s %7s %7s %7s | "
           "%s\n",
           "time", "MB", "B/hit", "fast, 1 thread", pn, qn, "libipt query", "libipt packet",
           "fast/q", "fast/p", "par/1", "par/1", "parts/1", "par/pts", "agree");
    printf("%-5s %6s %5s | %-18s | %-18s | %-18s | %-18s | %-18s | %6s %6s %7s %7s %7s %7s |\n",
           "", "", "", "  cpu   wall  MB/s", "  cpu   wall  MB/s", "  cpu   wall  MB/s",
           "  cpu   wall  MB/s", "  cpu   wall  MB/s", "cpu", "cpu", "wall", "cpu", "wall",
           "wall");
    static struct meter m[N_DEC][MAX_REPEAT];
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
        int agree = 1;
        memset(m, 0, sizeof(m));
        /* ptcall's decoders take turns round by round, so a slow spell of the shared machine
         * falls on all of them; libipt's are slow enough to run once */
        for (int r = 0; r < repeat; r++)
            for (int k = 0; k < N_DEC; k++) {
                if (!run[k] || (r > 0 && (k == D_QUERY || k == D_PACKET)))
                    continue;
                int whole = k == D_PAR || k == D_PARTS; /* all threads' CPU time */
                m_start(&m[k][r], whole ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID);
                uint64_t h = k == D_FAST    ? run_fast(buf, len, &cfg)
                             : k == D_PAR   ? run_par(buf, len, &cfg, threads)
                             : k == D_PARTS ? run_parts(buf, len, &cfg, threads)
                             : k == D_QUERY ? run_query(buf, len, t)
                                            : run_packet(buf, len, t);
                m_stop(&m[k][r]);
                if (h != n) {
                    agree = 0;
                    fprintf(stderr, "pt_decode_bench: %s decoded %llu hits, not %llu\n", dn[k],
                            (unsigned long long)h, (unsigned long long)n);
                }
            }
        char c[N_DEC][64];
        for (int k = 0; k < N_DEC; k++) {
            int nr = k == D_QUERY || k == D_PACKET ? 1 : repeat;
            cell(c[k], sizeof(c[k]), n, mb, run[k] ? median_run(m[k], nr) : NULL);
        }
        int fq = run[D_FAST] && run[D_QUERY], fk = run[D_FAST] && run[D_PACKET];
        int fp = run[D_FAST] && run[D_PAR], ft = run[D_FAST] && run[D_PARTS];
        const struct meter *fm = median_run(m[D_FAST], repeat);
        char x[6][16];
        ratio(x[0], sizeof(x[0]), 5, fq, fq ? m[D_QUERY][0].cpu / fm->cpu : 0);
        ratio(x[1], sizeof(x[1]), 5, fk, fk ? m[D_PACKET][0].cpu / fm->cpu : 0);
        ratio(x[2], sizeof(x[2]), 6, fp, paired(m[D_FAST], m[D_PAR], repeat, 0));
        ratio(x[3], sizeof(x[3]), 6, fp, paired(m[D_FAST], m[D_PAR], repeat, 1));
        ratio(x[4], sizeof(x[4]), 6, ft, paired(m[D_FAST], m[D_PARTS], repeat, 0));
        ratio(x[5], sizeof(x[5]), 6, run[D_PAR] && run[D_PARTS],
              paired(m[D_PARTS], m[D_PAR], repeat, 0));
        printf("%-5s %6.1f %5.2f | %-18s | %-18s | %-18s | %-18s | %-18s | %s %s %s %s %s %s | "
               "%s (%llu hits)\n",
               tn[t], mb, (double)len / (double)n, c[0], c[1], c[2], c[3], c[4], x[0], x[1],
               x[2], x[3], x[4], x[5], agree ? "yes" : "NO", (unsigned long long)n);
        if (repeat > 1 && fp) {
            printf("%-5s par/1 wall by round:", tn[t]);
            for (int r = 0; r < repeat; r++)
                printf(" %.2f", m[D_FAST][r].wall / m[D_PAR][r].wall);
            printf("\n");
        }
        fflush(stdout);
        free(buf);
    }
    loadavg(la, sizeof(la));
    printf("load average after: %s\n", la);
    return 0;
}
