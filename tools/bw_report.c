/* `ptcall bandwidth`'s output (bw_report.h): the same figures as a table for people, CSV
 * rows, or a versioned JSON document (docs/schema/bandwidth.schema.json). */
#include "bw_report.h"
#include "bw_budget.h"

#include <intel-pt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "ptc_pt_decode.h"

#define BW_JSON_VERSION 1

/* packet types in the order they are listed */
static const int pkt_order[] = {ppt_tip_pge, ppt_tip_pgd, ppt_mode, ppt_fup, ppt_ovf, ppt_cyc,
                                ppt_mtc,     ppt_tsc,     ppt_tma,  ppt_cbr, ppt_psb, ppt_psbend,
                                ppt_pad,     ppt_tnt_8,   ppt_tnt_64, ppt_tip};
#define NORDER (sizeof(pkt_order) / sizeof(pkt_order[0]))

void bw_report_init(struct bw_report *r) { memset(r, 0, sizeof(*r)); }

void bw_report_free(struct bw_report *r)
{
    for (int i = 0; i < PTC_SIM_MAX_MODES; i++)
        free(r->loss_fbytes[i]);
    for (size_t i = 0; i < r->full.nfuncs; i++)
        free((char *)r->full.funcs[i].name);
    free(r->full.funcs);
    memset(r, 0, sizeof(*r));
}

int bw_report_loss_funcs(struct bw_report *r, int i, const struct ptc_session *s,
                         const uint64_t *fbytes, uint32_t nfuncs)
{
    (void)s;
    uint64_t *v = calloc(nfuncs ? nfuncs : 1, sizeof(*v));
    if (!v)
        return cli_fail("bandwidth", "out of memory", "try a shorter trace");
    for (uint32_t f = 0; f < nfuncs; f++)
        v[f] = fbytes ? fbytes[2 * (size_t)f] + fbytes[2 * (size_t)f + 1] : 0;
    r->loss_fbytes[i] = v;
    r->loss_nfuncs[i] = nfuncs;
    return 0;
}

/* ---------------------------------------------------------------- figures */

struct rates {
    double mean, worst1, worst10; /* bytes per second; < 0: not known */
};

/* The most bytes in any run of w consecutive bins, per second. */
static double worst(const uint64_t *bins, size_t n, uint64_t bin_ns, uint64_t window_ns)
{
    if (!bin_ns || window_ns < bin_ns || !n)
        return -1;
    size_t w = (size_t)(window_ns / bin_ns);
    uint64_t sum = 0, best = 0;
    for (size_t k = 0; k < n; k++) {
        sum += bins[k];
        if (k >= w)
            sum -= bins[k - w];
        if (sum > best)
            best = sum;
    }
    return (double)best / ((double)(w * bin_ns) / 1e9);
}

static struct rates rates_of(const struct bw_report *r, const struct ptc_sim_mode *md)
{
    struct ptc_sim_totals t;
    ptc_sim_totals(r->sim, &t);
    struct rates x = {-1, -1, -1};
    if (!t.span_ns || t.untimed_hits)
        return x;
    x.mean = (double)md->total / ((double)t.span_ns / 1e9);
    size_t n = ptc_sim_nbins(r->sim);
    uint64_t b = ptc_sim_bin_ns(r->sim);
    /* a window longer than the run has no worst place */
    x.worst1 = t.span_ns >= 1000000 ? worst(md->bins, n, b, 1000000) : -1;
    x.worst10 = t.span_ns >= 10000000 ? worst(md->bins, n, b, 10000000) : -1;
    return x;
}

struct fsum {
    uint32_t func;
    uint64_t entry, exit, key;
};

static int cmp_fsum(const void *a, const void *b)
{
    const struct fsum *x = a, *y = b;
    return x->key < y->key ? 1 : x->key > y->key ? -1 : (x->func > y->func) - (x->func < y->func);
}

/* Functions with bytes under mode i, largest first (malloc'ed; *n set). */
static struct fsum *funcs_by_bytes(const struct bw_report *r, int i, size_t *n)
{
    const struct ptc_sim_mode *md = ptc_sim_mode(r->sim, i);
    uint32_t nf = ptc_sim_nfuncs(r->sim);
    struct fsum *v = malloc((nf ? nf : 1) * sizeof(*v));
    *n = 0;
    if (!v)
        return NULL;
    for (uint32_t f = 0; f < nf; f++) {
        uint64_t e = md->fbytes[2 * (size_t)f], x = md->fbytes[2 * (size_t)f + 1];
        if (e + x)
            v[(*n)++] = (struct fsum){f, e, x, e + x};
    }
    qsort(v, *n, sizeof(*v), cmp_fsum);
    return v;
}

static const char *fname(const struct bw_report *r, uint32_t f)
{
    const struct ptc_func_info *fi = ptc_session_func(r->s, f);
    return fi ? fi->name : "?";
}

static void mb(char *buf, size_t n, double bytes_per_s)
{
    if (bytes_per_s < 0)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.2f", bytes_per_s / 1e6);
}

/* ---------------------------------------------------------------- table */

static void table_header(const struct bw_report *r, FILE *f)
{
    struct ptc_sim_totals t;
    ptc_sim_totals(r->sim, &t);
    cli_text_str(f, r->path);
    fprintf(f, ": %s trace, %" PRIu64 " thread(s), %" PRIu64 " stub hits",
            r->pt_trace ? "Intel PT" : "soft", t.threads, t.hits);
    if (t.span_ns)
        fprintf(f, " over %.3f s", (double)t.span_ns / 1e9);
    fprintf(f, "\n");
    if (r->only)
        fprintf(f, "Only the functions matching --only are simulated (%" PRIu64
                   " hits of others left out)\n", t.filtered);
    fprintf(f, "\nStub-filtered Intel PT, simulated: one stream per thread, psb_period %" PRIu64
               " B, mtc_period %u, cyc_threshold %u, TSC:crystal %u:%u, %s\n",
            r->cfg.psb_period, r->cfg.mtc_period, r->cfg.cyc_threshold, r->cfg.tsc_per_ctc_num,
            r->cfg.tsc_per_ctc_den,
            r->cfg.ret_compression ? "return compression (TIP.PGD without IP)"
                                   : "noretcomp (TIP.PGD with the return address)");
    uint64_t rets = t.ret_known + t.ret_caller + t.ret_assumed;
    if (rets && !r->cfg.ret_compression)
        fprintf(f, "Return addresses: %.1f %% from the objects' call sites, %.1f %% a place in "
                   "the caller (ret sleds), %.1f %% assumed (object not found)\n",
                100.0 * (double)t.ret_known / (double)rets,
                100.0 * (double)t.ret_caller / (double)rets,
                100.0 * (double)t.ret_assumed / (double)rets);
}

static void table_modes(const struct bw_report *r, FILE *f)
{
    int n = r->cfg.nmodes;
    struct ptc_sim_totals t;
    ptc_sim_totals(r->sim, &t);
    fprintf(f, "\n%-22s", "");
    for (int i = 0; i < n; i++)
        fprintf(f, " %14s", ptc_sim_timing_name(r->cfg.timing[i]));
    fprintf(f, "\n%-22s", "bytes");
    for (int i = 0; i < n; i++)
        fprintf(f, " %14" PRIu64, ptc_sim_mode(r->sim, i)->total);
    fprintf(f, "\n%-22s", "bytes per hit");
    for (int i = 0; i < n; i++)
        fprintf(f, " %14.2f",
                t.hits ? (double)ptc_sim_mode(r->sim, i)->total / (double)t.hits : 0.0);
    const char *rl[3] = {"MB/s, mean", "MB/s, worst 1 ms", "MB/s, worst 10 ms"};
    for (int k = 0; k < 3; k++) {
        fprintf(f, "\n%-22s", rl[k]);
        for (int i = 0; i < n; i++) {
            struct rates x = rates_of(r, ptc_sim_mode(r->sim, i));
            char b[32];
            mb(b, sizeof(b), k == 0 ? x.mean : k == 1 ? x.worst1 : x.worst10);
            fprintf(f, " %14s", b);
        }
    }
    fprintf(f, "\n%-22s", "  by hits");
    for (int i = 0; i < n; i++)
        fprintf(f, " %14" PRIu64, ptc_sim_mode(r->sim, i)->hit_bytes);
    fprintf(f, "\n%-22s", "  by time and PSB+");
    for (int i = 0; i < n; i++)
        fprintf(f, " %14" PRIu64, ptc_sim_mode(r->sim, i)->flow_bytes);
    fprintf(f, "\n\nPackets (count / bytes):\n");
    for (size_t k = 0; k < NORDER; k++) {
        int ty = pkt_order[k], any = 0;
        for (int i = 0; i < n; i++)
            any |= ptc_sim_mode(r->sim, i)->count[ty] != 0;
        if (!any)
            continue;
        fprintf(f, "  %-20s", ptc_pt_packet_name(ty));
        for (int i = 0; i < n; i++) {
            const struct ptc_sim_mode *md = ptc_sim_mode(r->sim, i);
            char b[48];
            snprintf(b, sizeof(b), "%" PRIu64 "/%" PRIu64, md->count[ty], md->bytes[ty]);
            fprintf(f, " %14s", b);
        }
        fprintf(f, "\n");
    }
}

static void table_funcs(const struct bw_report *r, FILE *f)
{
    int last = r->cfg.nmodes - 1;
    size_t n;
    struct fsum *v = funcs_by_bytes(r, last, &n);
    if (!v)
        return;
    uint64_t all = ptc_sim_mode(r->sim, last)->hit_bytes;
    size_t show = r->top && r->top < n ? (size_t)r->top : n;
    fprintf(f, "\nFunctions by the bytes their entries and exits cost (%s), %zu of %zu:\n",
            ptc_sim_timing_name(r->cfg.timing[last]), show, n);
    fprintf(f, "  %12s %12s %7s  %s\n", "entry B", "exit B", "share", "function");
    for (size_t k = 0; k < show; k++) {
        fprintf(f, "  %12" PRIu64 " %12" PRIu64 " %6.2f%%  ", v[k].entry, v[k].exit,
                all ? 100.0 * (double)v[k].key / (double)all : 0.0);
        cli_text_str(f, fname(r, v[k].func));
        fputc('\n', f);
    }
    free(v);
}

static void table_measured(const struct bw_report *r, FILE *f)
{
    const struct ptc_pt_measured *m = r->measured;
    int i = -1;
    for (int k = 0; k < r->cfg.nmodes; k++)
        if (r->cfg.timing[k] == r->measured_timing)
            i = k;
    fprintf(f, "\nMeasured in this Intel PT trace (%s timing) beside the prediction for its "
               "decoded hits:\n",
            ptc_sim_timing_name(r->measured_timing));
    if (i < 0) {
        fprintf(f, "  (add --timing %s to compare)\n", ptc_sim_timing_name(r->measured_timing));
        return;
    }
    const struct ptc_sim_mode *md = ptc_sim_mode(r->sim, i);
    fprintf(f, "  %-12s %12s %12s %12s %12s %9s\n", "packet", "measured", "predicted",
            "measured B", "predicted B", "error");
    uint64_t mt = 0;
    for (size_t k = 0; k < NORDER; k++) {
        int ty = pkt_order[k];
        uint64_t mc = m->packets.count[ty], pc = md->count[ty];
        mt += m->packets.bytes[ty];
        if (!mc && !pc)
            continue;
        char err[32] = "-";
        if (mc)
            snprintf(err, sizeof(err), "%+.1f%%", 100.0 * ((double)pc - (double)mc) / (double)mc);
        fprintf(f, "  %-12s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %9s\n",
                ptc_pt_packet_name(ty), mc, pc, m->packets.bytes[ty], md->bytes[ty], err);
    }
    fprintf(f, "  %-12s %12s %12s %12" PRIu64 " %12" PRIu64 " %+8.1f%%\n", "all", "", "", mt,
            md->total, mt ? 100.0 * ((double)md->total - (double)mt) / (double)mt : 0.0);
    if (m->packets.errors || m->packets.unsynced_bytes)
        fprintf(f, "  (the trace also has %" PRIu64 " packet errors and %" PRIu64
                   " bytes outside PSB sync, which the prediction cannot have)\n",
                m->packets.errors, m->packets.unsynced_bytes);
}

static void table_loss_line(FILE *f, const char *what, const struct bw_loss *L)
{
    if (!L->lost)
        fprintf(f, "  %-10s nothing lost (the buffer peaked at %.0f bytes)\n", what, L->peak);
    else
        fprintf(f, "  %-10s %" PRIu64 " bytes lost, from %.4f s to %.4f s\n", what, L->lost,
                L->first_s, L->last_s);
}

static void table_loss(const struct bw_report *r, FILE *f)
{
    fprintf(f, "\nLoss with %.0f bytes of buffer drained at %.2f MB/s:\n", r->aux,
            r->drain / 1e6);
    for (int i = 0; i < r->cfg.nmodes; i++) {
        const struct bw_loss *L = &r->loss[i];
        table_loss_line(f, ptc_sim_timing_name(r->cfg.timing[i]), L);
        if (!L->lost || !r->loss_fbytes[i])
            continue;
        uint64_t sum = 0;
        for (uint32_t k = 0; k < r->loss_nfuncs[i]; k++)
            sum += r->loss_fbytes[i][k];
        for (int shown = 0; shown < 5 && sum; shown++) { /* the five largest */
            uint32_t best = 0;
            for (uint32_t k = 1; k < r->loss_nfuncs[i]; k++)
                if (r->loss_fbytes[i][k] > r->loss_fbytes[i][best])
                    best = k;
            if (!r->loss_fbytes[i][best])
                break;
            fprintf(f, "      %5.1f %% of it in %s\n",
                    100.0 * (double)r->loss_fbytes[i][best] / (double)sum, fname(r, best));
            r->loss_fbytes[i][best] = 0; /* shown */
        }
    }
    if (r->full.have)
        for (int i = 0; i < r->cfg.nmodes; i++) {
            char what[32];
            snprintf(what, sizeof(what), "full %s", ptc_sim_timing_name(r->cfg.timing[i]));
            table_loss_line(f, what, &r->full.loss[i]);
        }
}

static void table_full(const struct bw_report *r, FILE *f)
{
    const struct bw_full *x = &r->full;
    struct ptc_sim_totals t;
    ptc_sim_totals(r->sim, &t);
    fprintf(f, "\nFull control-flow tracing, ESTIMATED (%s):\n", x->source);
    fprintf(f, "  %" PRIu64 " conditional branches, %" PRIu64 " indirect jumps, %" PRIu64
               " indirect calls, %" PRIu64 " returns\n",
            x->branches_cond, x->branches_indirect, x->calls_indirect, x->returns);
    fprintf(f, "  %-20s", "");
    for (int i = 0; i < r->cfg.nmodes; i++)
        fprintf(f, " %14s", ptc_sim_timing_name(r->cfg.timing[i]));
    for (int k = 0; k < x->ntypes; k++) {
        fprintf(f, "\n  %-20s", x->types[k].name);
        for (int i = 0; i < r->cfg.nmodes; i++)
            fprintf(f, " %14" PRIu64, x->types[k].bytes[i]);
    }
    fprintf(f, "\n  %-20s", "bytes");
    for (int i = 0; i < r->cfg.nmodes; i++)
        fprintf(f, " %14" PRIu64, x->total[i]);
    fprintf(f, "\n  %-20s", "MB/s, mean");
    for (int i = 0; i < r->cfg.nmodes; i++) {
        char b[32];
        mb(b, sizeof(b), t.span_ns ? (double)x->total[i] / ((double)t.span_ns / 1e9) : -1);
        fprintf(f, " %14s", b);
    }
    fprintf(f, "\n  %-20s", "full / stub-filtered");
    for (int i = 0; i < r->cfg.nmodes; i++) {
        uint64_t stub = ptc_sim_mode(r->sim, i)->total;
        fprintf(f, " %14.3g", stub ? (double)x->total[i] / (double)stub : 0.0);
    }
    fprintf(f, "\n  %s\n", x->note);
    size_t show = r->top && r->top < x->nfuncs ? (size_t)r->top : x->nfuncs;
    if (show)
        fprintf(f, "  Functions by estimated bytes (%s), %zu of %zu:\n",
                ptc_sim_timing_name(r->cfg.timing[r->cfg.nmodes - 1]), show, x->nfuncs);
    for (size_t k = 0; k < show; k++) {
        fprintf(f, "  %14" PRIu64 "  ", x->funcs[k].bytes);
        cli_text_str(f, x->funcs[k].name);
        fputc('\n', f);
    }
}

static void write_table(const struct bw_report *r, FILE *f)
{
    table_header(r, f);
    table_modes(r, f);
    table_funcs(r, f);
    if (r->measured)
        table_measured(r, f);
    if (r->full.have)
        table_full(r, f);
    if (r->drain > 0)
        table_loss(r, f);
    if (r->choice)
        bw_budget_write(r->choice, 0, r->top, f);
}

/* ---------------------------------------------------------------- csv */

/* One table: kind,timing,name,count,bytes -- kind total (name: bytes, hit_bytes, flow_bytes,
 * hits), packet (name: the packet type), function (count: entry bytes), measured, full. */
static void write_csv(const struct bw_report *r, FILE *f)
{
    struct ptc_sim_totals t;
    ptc_sim_totals(r->sim, &t);
    fprintf(f, "kind,timing,name,count,bytes\n");
    for (int i = 0; i < r->cfg.nmodes; i++) {
        const struct ptc_sim_mode *md = ptc_sim_mode(r->sim, i);
        const char *tn = ptc_sim_timing_name(md->timing);
        fprintf(f, "total,%s,all,%" PRIu64 ",%" PRIu64 "\n", tn, t.hits, md->total);
        fprintf(f, "total,%s,hits,%" PRIu64 ",%" PRIu64 "\n", tn, t.hits, md->hit_bytes);
        fprintf(f, "total,%s,time_and_psb,0,%" PRIu64 "\n", tn, md->flow_bytes);
        for (size_t k = 0; k < NORDER; k++)
            if (md->count[pkt_order[k]])
                fprintf(f, "packet,%s,%s,%" PRIu64 ",%" PRIu64 "\n", tn,
                        ptc_pt_packet_name(pkt_order[k]), md->count[pkt_order[k]],
                        md->bytes[pkt_order[k]]);
        size_t n;
        struct fsum *v = funcs_by_bytes(r, i, &n);
        for (size_t k = 0; v && k < n; k++) {
            fprintf(f, "function,%s,", tn);
            cli_csv_str(f, fname(r, v[k].func));
            fprintf(f, ",%" PRIu64 ",%" PRIu64 "\n", v[k].entry, v[k].entry + v[k].exit);
        }
        free(v);
        if (r->full.have)
            for (int k = 0; k < r->full.ntypes; k++)
                fprintf(f, "full_estimate,%s,%s,%" PRIu64 ",%" PRIu64 "\n", tn,
                        r->full.types[k].name, r->full.types[k].count[i],
                        r->full.types[k].bytes[i]);
    }
    if (r->measured)
        for (size_t k = 0; k < NORDER; k++)
            if (r->measured->packets.count[pkt_order[k]])
                fprintf(f, "measured,%s,%s,%" PRIu64 ",%" PRIu64 "\n",
                        ptc_sim_timing_name(r->measured_timing),
                        ptc_pt_packet_name(pkt_order[k]),
                        r->measured->packets.count[pkt_order[k]],
                        r->measured->packets.bytes[pkt_order[k]]);
    if (r->choice)
        bw_budget_write(r->choice, 1, 0, f);
}

/* ---------------------------------------------------------------- json */

static void json_num(FILE *f, double v)
{
    if (v < 0)
        fprintf(f, "null");
    else
        fprintf(f, "%.6g", v);
}

static void json_packets(FILE *f, const uint64_t *count, const uint64_t *bytes)
{
    fprintf(f, "{");
    int first = 1;
    for (size_t k = 0; k < NORDER; k++) {
        int ty = pkt_order[k];
        if (!count[ty])
            continue;
        fprintf(f, "%s\"%s\": {\"count\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
                first ? "" : ", ", ptc_pt_packet_name(ty), count[ty], bytes[ty]);
        first = 0;
    }
    fprintf(f, "}");
}

static void json_loss(FILE *f, const struct bw_loss *L)
{
    fprintf(f, "{\"lost_bytes\": %" PRIu64 ", \"first_s\": ", L->lost);
    json_num(f, L->lost ? L->first_s : -1);
    fprintf(f, ", \"last_s\": ");
    json_num(f, L->lost ? L->last_s : -1);
    fprintf(f, ", \"peak_bytes\": %.0f}", L->peak);
}

static void json_mode(const struct bw_report *r, int i, FILE *f)
{
    const struct ptc_sim_mode *md = ptc_sim_mode(r->sim, i);
    struct ptc_sim_totals t;
    ptc_sim_totals(r->sim, &t);
    struct rates x = rates_of(r, md);
    fprintf(f, "    {\"timing\": \"%s\", \"bytes\": %" PRIu64 ", \"bytes_per_hit\": ",
            ptc_sim_timing_name(md->timing), md->total);
    json_num(f, t.hits ? (double)md->total / (double)t.hits : -1);
    fprintf(f, ", \"hit_bytes\": %" PRIu64 ", \"time_and_psb_bytes\": %" PRIu64
               ", \"bytes_per_s\": {\"mean\": ",
            md->hit_bytes, md->flow_bytes);
    json_num(f, x.mean);
    fprintf(f, ", \"worst_1ms\": ");
    json_num(f, x.worst1);
    fprintf(f, ", \"worst_10ms\": ");
    json_num(f, x.worst10);
    fprintf(f, "},\n     \"packets\": ");
    json_packets(f, md->count, md->bytes);
    if (r->drain > 0) {
        fprintf(f, ",\n     \"loss\": ");
        json_loss(f, &r->loss[i]);
    }
    fprintf(f, ",\n     \"functions\": [");
    size_t n;
    struct fsum *v = funcs_by_bytes(r, i, &n);
    for (size_t k = 0; v && k < n; k++) {
        fprintf(f, "%s\n       {\"name\": ", k ? "," : "");
        cli_json_str(f, fname(r, v[k].func));
        fprintf(f, ", \"entry_bytes\": %" PRIu64 ", \"exit_bytes\": %" PRIu64 "}", v[k].entry,
                v[k].exit);
    }
    free(v);
    fprintf(f, "]}");
}

static void json_full(const struct bw_report *r, FILE *f)
{
    const struct bw_full *x = &r->full;
    fprintf(f, ",\n  \"full_pt\": {\"estimate\": true, \"source\": ");
    cli_json_str(f, x->source);
    fprintf(f, ", \"assumes\": ");
    cli_json_str(f, x->note);
    fprintf(f, ", \"conditional_branches\": %" PRIu64 ", \"indirect_jumps\": %" PRIu64
               ", \"indirect_calls\": %" PRIu64 ", \"returns\": %" PRIu64 ", \"modes\": [",
            x->branches_cond, x->branches_indirect, x->calls_indirect, x->returns);
    for (int i = 0; i < r->cfg.nmodes; i++) {
        fprintf(f, "%s\n    {\"timing\": \"%s\", \"bytes\": %" PRIu64 ", \"packets\": {",
                i ? "," : "", ptc_sim_timing_name(r->cfg.timing[i]), x->total[i]);
        for (int k = 0; k < x->ntypes; k++)
            fprintf(f, "%s\"%s\": {\"count\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
                    k ? ", " : "", x->types[k].name, x->types[k].count[i], x->types[k].bytes[i]);
        fprintf(f, "}");
        if (r->drain > 0) {
            fprintf(f, ", \"loss\": ");
            json_loss(f, &x->loss[i]);
        }
        fprintf(f, "}");
    }
    fprintf(f, "]}");
}

static void write_json(const struct bw_report *r, FILE *f)
{
    struct ptc_sim_totals t;
    ptc_sim_totals(r->sim, &t);
    fprintf(f, "{\"format_version\": %d, \"tool\": \"ptcall bandwidth\",\n  \"trace\": ",
            BW_JSON_VERSION);
    cli_json_str(f, r->path);
    fprintf(f, ", \"backend\": \"%s\", \"threads\": %" PRIu64 ", \"hits\": %" PRIu64
               ", \"hits_left_out\": %" PRIu64 ", \"span_ns\": %" PRIu64 ",\n",
            r->pt_trace ? "pt" : "soft", t.threads, t.hits, t.filtered, t.span_ns);
    fprintf(f, "  \"model\": {\"streams\": \"per thread\", \"psb_period\": %" PRIu64
               ", \"mtc_period\": %u, \"cyc_threshold\": %u, \"tsc_per_crystal\": [%u, %u], "
               "\"ret_compression\": %s, \"return_addresses\": {\"call_sites\": %" PRIu64
               ", \"caller\": %" PRIu64 ", \"assumed\": %" PRIu64 "}},\n",
            r->cfg.psb_period, r->cfg.mtc_period, r->cfg.cyc_threshold, r->cfg.tsc_per_ctc_num,
            r->cfg.tsc_per_ctc_den, r->cfg.ret_compression ? "true" : "false", t.ret_known,
            t.ret_caller, t.ret_assumed);
    if (r->drain > 0)
        fprintf(f, "  \"budget\": {\"drain_bytes_per_s\": %.0f, \"buffer_bytes\": %.0f},\n",
                r->drain, r->aux);
    fprintf(f, "  \"modes\": [\n");
    for (int i = 0; i < r->cfg.nmodes; i++) {
        json_mode(r, i, f);
        fprintf(f, "%s\n", i + 1 < r->cfg.nmodes ? "," : "");
    }
    fprintf(f, "  ]");
    if (r->measured) {
        fprintf(f, ",\n  \"measured\": {\"timing\": \"%s\", \"packets\": ",
                ptc_sim_timing_name(r->measured_timing));
        json_packets(f, r->measured->packets.count, r->measured->packets.bytes);
        fprintf(f, ", \"packet_errors\": %" PRIu64 ", \"unsynced_bytes\": %" PRIu64 "}",
                r->measured->packets.errors, r->measured->packets.unsynced_bytes);
    }
    if (r->full.have)
        json_full(r, f);
    if (r->choice) {
        fprintf(f, ",\n");
        bw_budget_write(r->choice, 2, 0, f);
    }
    fprintf(f, "\n}\n");
}

int bw_report_write(const struct bw_report *r, int format, FILE *f)
{
    if (format == 1)
        write_csv(r, f);
    else if (format == 2)
        write_json(r, f);
    else
        write_table(r, f);
    return 0;
}
