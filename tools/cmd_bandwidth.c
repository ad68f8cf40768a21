/* ptcall bandwidth FILE [OPTIONS] [-- COMMAND [ARGS...]]: what Intel PT would write for this
 * run -- stub-filtered (simulated from the decoded hits, bandwidth/ptsim.c) under each timing
 * configuration, full control-flow tracing (estimated, bandwidth/fullpt.h) -- and what a
 * buffer drained at a given rate would lose. The model: docs/bandwidth.md. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bw_budget.h"
#include "bw_report.h"
#include "cli_common.h"
#include "commands.h"
#include "options.h"
#include "ptc_pt_decode.h"
#include "ptc_select.h"
#include "ptcall/trace_format_pt.h"
#include "ptsim.h"

#define CMD "bandwidth"

/* What the trace says before it is decoded: its timing and, for Intel PT, its config. */
struct prescan {
    struct ptc_file_header hdr;
    int have_pt_config;
    struct ptc_pt_config pt;
};

static int prescan(const char *path, struct prescan *p)
{
    memset(p, 0, sizeof(*p));
    struct ptc_reader *r;
    int e = ptc_reader_open(&r, path);
    if (e)
        return e;
    p->hdr = *ptc_reader_header(r);
    struct ptc_chunk c;
    /* the config comes first in a PT trace; a few chunks are enough to know */
    for (int n = 0; n < 64 && ptc_reader_next(r, &c) == 1; n++) {
        if (c.h.type == PTC_CHUNK_PT_CONFIG && c.h.payload_size >= 24) {
            size_t k = c.h.payload_size < sizeof(p->pt) ? c.h.payload_size : sizeof(p->pt);
            memcpy(&p->pt, c.payload, k);
            p->have_pt_config = 1;
            break;
        }
        if (c.h.type == PTC_CHUNK_SOFT_EVENTS || c.h.type == PTC_CHUNK_PT_AUX)
            break;
    }
    ptc_reader_close(r);
    return 0;
}

static int is_pt_backend(uint32_t b) { return b == PTC_BACKEND_PT || b == PTC_BACKEND_IMPORT; }

/* The recorded trace's timing configuration (for the measured column). */
static int pt_timing(const struct ptc_pt_config *c)
{
    return c->flags & PTC_PT_F_CYC   ? PTC_SIM_CYC
           : c->flags & PTC_PT_F_MTC ? PTC_SIM_MTC
           : c->flags & PTC_PT_F_TSC ? PTC_SIM_TSC
                                      : PTC_SIM_NONE;
}

/* The simulator's configuration: options, else the PT trace's, else perf's defaults. */
static int make_cfg(const struct cli_values *v, const struct prescan *p, int timed,
                    struct ptc_sim_cfg *c)
{
    ptc_sim_cfg_default(c);
    const struct ptc_pt_config *pt = p->have_pt_config ? &p->pt : NULL;
    if (v->bandwidth.timings.n) {
        c->nmodes = v->bandwidth.timings.n;
        for (int i = 0; i < c->nmodes; i++)
            c->timing[i] = v->bandwidth.timings.v[i];
    }
    if (!timed) { /* MTC and CYC are made from the hits' times: refuse them, keep the rest */
        int n = 0;
        for (int i = 0; i < c->nmodes; i++) {
            if (c->timing[i] >= PTC_SIM_MTC)
                fprintf(stderr,
                        "ptcall " CMD ": not simulating '%s': the trace has no times (record "
                        "without --no-timestamps, or with --timing mtc/cyc for Intel PT)\n",
                        ptc_sim_timing_name(c->timing[i]));
            else
                c->timing[n++] = c->timing[i];
        }
        c->nmodes = n;
    }
    if (!c->nmodes)
        return cli_fail(CMD, "nothing to simulate",
                        "an untimed trace allows only --timing none,tsc");
    /* Intel PT without timing leaves leaves' exits unarmed (docs/pt.md): where every
     * configuration is `none`, a leaf's whole call of an untimed trace is one hit */
    int all_none = 1;
    for (int i = 0; i < c->nmodes; i++)
        all_none &= c->timing[i] == PTC_SIM_NONE;
    c->leaf_calls = !timed && all_none;
    c->mtc_period = v->bandwidth.have_mtc_period ? v->bandwidth.mtc_period
                    : pt && (pt->flags & PTC_PT_F_MTC) ? pt->mtc_freq
                                                       : 3;
    c->cyc_threshold = v->bandwidth.have_cyc_threshold ? v->bandwidth.cyc_threshold
                       : pt                            ? pt->cyc_thresh
                                                       : 0;
    c->psb_period = v->bandwidth.have_psb_period ? v->bandwidth.psb_period
                    : pt ? (uint64_t)1 << (pt->psb_period + 11)
                         : (uint64_t)1 << 14;
    c->ret_compression = v->bandwidth.ret_compression == 1;
    if (v->bandwidth.have_tsc_ratio) {
        c->tsc_per_ctc_num = v->bandwidth.tsc_ratio[0];
        c->tsc_per_ctc_den = v->bandwidth.tsc_ratio[1];
    } else if (pt && pt->cpuid_0x15_eax && pt->cpuid_0x15_ebx) {
        c->tsc_per_ctc_num = pt->cpuid_0x15_ebx;
        c->tsc_per_ctc_den = pt->cpuid_0x15_eax;
    }
    if (!c->tsc_per_ctc_num || !c->tsc_per_ctc_den)
        return cli_fail(CMD, "--tsc-ratio has a zero term", "give EBX:EAX, both non-zero");
    return 0;
}

/* ---------------------------------------------------------------- the decode */

struct run {
    struct ptc_sim *sim;
    struct ptc_select sel;
    struct ptc_session *s;
    struct ptc_sim_cfg cfg;
    const uint8_t *mask;
    size_t nmask;
    const char *emit;
};

static int armed(void *ctx, uint32_t func)
{
    struct run *r = ctx;
    const struct ptc_func_info *fi = ptc_session_func(r->s, func);
    return fi && ptc_select_func(&r->sel, fi->name, fi->linkage_name);
}

static int prepare(void *ctx, struct ptc_session *s)
{
    struct run *r = ctx;
    r->s = s;
    if (!(r->sim = ptc_sim_new(s, &r->cfg)))
        return 1;
    if (ptc_select_active(&r->sel))
        ptc_sim_set_filter(r->sim, armed, r);
    if (r->mask)
        ptc_sim_charge_only(r->sim, r->mask, r->nmask);
    if (r->emit)
        ptc_sim_encode(r->sim, r->emit);
    ptc_session_set_hit_hook(s, ptc_sim_hit_hook, r->sim);
    ptc_session_hits_only(s);
    return 0;
}

/* Decodes path into a simulator (r->sim, r->s); 0, or 1 after saying what went wrong. */
static int simulate(const char *path, struct run *r, struct ptc_pt_measured *measured)
{
    struct cli_args a = {.cmd = CMD, .path = path, .threads = 1, .prepare = prepare,
                         .prepare_ctx = r, .pt_measured = measured};
    struct ptc_session *s = cli_decode(&a, NULL, NULL, NULL, NULL);
    if (!s) {
        ptc_sim_free(r->sim);
        r->sim = NULL;
        return 1;
    }
    r->s = s;
    struct ptc_sim_totals t;
    ptc_sim_totals(r->sim, &t);
    if (t.io_error) {
        char what[256];
        snprintf(what, sizeof(what), "writing the simulated streams: %s", strerror(t.io_error));
        cli_fail(CMD, what, "check --emit's directory and the free space");
        return 1;
    }
    return 0;
}

static void free_run(struct run *r)
{
    ptc_sim_free(r->sim);
    if (r->s)
        ptc_session_free(r->s);
    memset(r, 0, sizeof(*r));
}

/* ---------------------------------------------------------------- loss under a budget */

/* The second pass: which functions' bytes fell in the bins that lost (mode i). */
static int loss_by_function(const char *path, const struct run *first, int i, uint8_t *mask,
                            size_t nbins, struct bw_report *rep)
{
    struct run r = {.sel = first->sel, .cfg = first->cfg, .mask = mask, .nmask = nbins};
    r.cfg.timing[0] = first->cfg.timing[i];
    r.cfg.nmodes = 1;
    r.cfg.bin_ns = ptc_sim_bin_ns(first->sim);
    r.sel.only_hit = r.sel.skip_hit = 0;
    if (simulate(path, &r, NULL))
        return 1;
    const struct ptc_sim_mode *md = ptc_sim_mode(r.sim, 0);
    int rc = bw_report_loss_funcs(rep, i, r.s, md->fbytes, ptc_sim_nfuncs(r.sim));
    free_run(&r);
    return rc;
}

static int budget(const char *path, const struct cli_values *v, const struct run *r,
                  const struct prescan *p, struct bw_report *rep)
{
    size_t nbins = ptc_sim_nbins(r->sim);
    double bin_s = (double)ptc_sim_bin_ns(r->sim) / 1e9;
    struct ptc_sim_totals t;
    ptc_sim_totals(r->sim, &t);
    double aux = (double)(v->bandwidth.have_aux ? v->bandwidth.aux
                          : p->have_pt_config && p->pt.aux_size ? p->pt.aux_size
                                                                : 4u << 20);
    aux *= (double)(t.threads ? t.threads : 1); /* one buffer per stream */
    rep->aux = aux;
    rep->drain = (double)v->bandwidth.drain;
    uint8_t *mask = calloc(nbins ? nbins : 1, 1);
    if (!mask)
        return cli_fail(CMD, "out of memory", "try a shorter trace");
    int rc = 0;
    for (int i = 0; i < r->cfg.nmodes && !rc; i++) {
        memset(mask, 0, nbins ? nbins : 1);
        bw_replay(ptc_sim_mode(r->sim, i)->bins, nbins, bin_s, rep->drain, aux, &rep->loss[i],
               mask);
        if (rep->loss[i].lost)
            rc = loss_by_function(path, r, i, mask, nbins, rep);
    }
    free(mask);
    return rc;
}

/* --budget RATE[,AUX]: the timing chosen for is the first --timing given, else the PT
 * trace's, else what `record --backend pt` uses (mtc). */
static int choose_budget(const char *path, const struct cli_values *v, const struct run *r,
                         const struct prescan *p, struct bw_budget *b)
{
    struct ptc_sim_cfg cfg = r->cfg;
    cfg.timing[0] = v->bandwidth.timings.n ? v->bandwidth.timings.v[0]
                    : p->have_pt_config  ? pt_timing(&p->pt)
                                         : PTC_SIM_MTC;
    int ok = 0;
    for (int i = 0; i < r->cfg.nmodes; i++)
        ok |= r->cfg.timing[i] == cfg.timing[0];
    if (!ok) /* refused for an untimed trace by make_cfg */
        cfg.timing[0] = r->cfg.timing[0];
    cfg.nmodes = 1;
    double aux = (double)(v->budget.aux                            ? v->budget.aux
                          : p->have_pt_config && p->pt.aux_size ? p->pt.aux_size
                                                                : 4u << 20);
    struct ptc_select sel = r->sel;
    sel.only_hit = sel.skip_hit = 0;
    if (bw_budget_run(CMD, path, &cfg, &sel, (double)v->budget.rate, aux, b))
        return 1;
    if (b->nothing_fits || (!b->res.calls_traced && b->cheapest != UINT32_MAX)) {
        const struct ptc_func_info *fi = ptc_session_func(b->s, b->cheapest);
        fprintf(stderr,
                "ptcall " CMD ": --budget %.0f B/s is below what tracing any function costs "
                "(the cheapest, %s, alone: %.0f B/s of hits; the smallest choice tried "
                "simulated to %.0f B/s with its PSB+ and timing packets): nothing would be "
                "traced\n",
                b->rate, fi && fi->name ? fi->name : "?", b->cheapest_rate,
                b->smallest_rate > b->cheapest_rate ? b->smallest_rate : b->cheapest_rate);
    } else if (!b->fits)
        fprintf(stderr,
                "ptcall " CMD ": the chosen set still simulates to %.0f B/s (%" PRIu64
                " bytes lost) after %d rounds: the budget is not kept\n",
                b->chosen_rate, b->chosen_loss.lost, b->rounds);
    return 0;
}

/* ---------------------------------------------------------------- the command */

int cmd_bandwidth(int argc, char **argv)
{
    struct cli_values v;
    int pr = cli_parse(CMD_BANDWIDTH, argc, argv, &v, 0);
    if (pr != CLI_GO)
        return pr;
    int rc = 1;
    struct run r;
    memset(&r, 0, sizeof(r));
    struct bw_report rep;
    bw_report_init(&rep);
    struct bw_budget choice;
    memset(&choice, 0, sizeof(choice));
    if (v.npos < 1) {
        rc = cli_usage_error(CMD_BANDWIDTH, "which trace? give FILE");
        goto out;
    }
    const char *path = v.pos[0];
    struct prescan p;
    int e = prescan(path, &p);
    if (e) {
        char what[600];
        snprintf(what, sizeof(what), "%s: %s", path, ptc_strerror(e));
        rc = cli_fail(CMD, what, cli_advice(e));
        goto out;
    }
    int pt = is_pt_backend(p.hdr.backend);
    if (pt && !p.have_pt_config) {
        char what[600];
        snprintf(what, sizeof(what),
                 "%s is an Intel PT trace without its PT_CONFIG chunk: its timing, MTC "
                 "period and TSC:crystal ratio are unknown",
                 path);
        if (!v.bandwidth.timings.n || !v.bandwidth.have_tsc_ratio) {
            rc = cli_fail(CMD, what,
                          "give --timing, --mtc-period and --tsc-ratio, or re-import the "
                          "streams with ptcall import");
            goto out;
        }
        fprintf(stderr, "ptcall " CMD ": note: %s; using --timing and --tsc-ratio as given\n",
                what);
    }
    int timed = pt ? p.have_pt_config && (p.pt.flags & (PTC_PT_F_TSC | PTC_PT_F_MTC |
                                                       PTC_PT_F_CYC))
                   : (p.hdr.flags & PTC_FILE_F_TIMED) != 0;
    if ((rc = make_cfg(&v, &p, timed, &r.cfg)))
        goto out;
    for (int i = 0; i < v.bandwidth.only.n; i++)
        r.sel.only[r.sel.nonly++] = v.bandwidth.only.v[i];
    struct ptc_pt_measured measured;
    memset(&measured, 0, sizeof(measured));
    r.emit = v.bandwidth.emit;
    if (r.emit && mkdir(r.emit, 0755) && errno != EEXIST) {
        char what[600];
        snprintf(what, sizeof(what), "cannot make --emit's directory %s: %s", r.emit,
                 strerror(errno));
        rc = cli_fail(CMD, what, "give a directory that can be written");
        goto out;
    }
    if ((rc = simulate(path, &r, pt ? &measured : NULL)))
        goto out;
    if (ptc_select_active(&r.sel) && !r.sel.only_hit) {
        rc = cli_fail(CMD, "--only matches no function of the trace",
                      "see the names with ptcall report");
        goto out;
    }
    rep.cfg = r.cfg;
    rep.path = path;
    rep.s = r.s;
    rep.sim = r.sim;
    rep.pt_trace = pt;
    if (pt && measured.done) {
        rep.measured = &measured;
        rep.measured_timing = pt_timing(&p.pt);
    }
    rep.only = ptc_select_active(&r.sel) ? &r.sel : NULL;
    if (v.bandwidth.drain && (rc = budget(path, &v, &r, &p, &rep)))
        goto out;
    if ((rc = bw_full_estimate(&rep, &v, v.npos > 1 ? v.pos + 1 : NULL, v.npos - 1)))
        goto out;
    if (v.have_budget) {
        if ((rc = choose_budget(path, &v, &r, &p, &choice)))
            goto out;
        bw_budget_full(&choice, &rep);
        rep.choice = &choice;
    }
    rep.top = v.bandwidth.top;
    rc = bw_report_write(&rep, v.format, stdout) ? 1 : cli_flush_output(CMD, "the report");
out:
    bw_budget_free(&choice);
    bw_report_free(&rep);
    free_run(&r);
    cli_values_free(&v);
    return rc;
}
