/* `--budget RATE[,AUX]` for Intel PT (bw_budget.h). The choice is ptc_budget_choose's on
 * the simulated bytes of every candidate; the chosen set is then simulated on its own, and
 * when its stream still exceeds RATE (the passing of time's MTC and PSB+ bytes do not shrink
 * with the set, and a burst may overflow the buffer though the mean fits) the budget given
 * to the chooser is tightened and the choice made again, so that what is reported was
 * simulated, not predicted. */
#define _GNU_SOURCE /* qsort_r */
#include "bw_budget.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "ptbudget.h"

#define MAX_ROUNDS 12

void bw_replay(const uint64_t *bins, size_t n, double bin_s, double drain, double aux,
               struct bw_loss *L, uint8_t *mask)
{
    double fill = 0;
    memset(L, 0, sizeof(*L));
    for (size_t k = 0; k < n; k++) {
        fill += (double)bins[k];
        fill -= drain * bin_s;
        if (fill < 0)
            fill = 0;
        if (fill > aux) {
            L->lost += (uint64_t)(fill - aux);
            if (!L->lossy_bins++)
                L->first_s = (double)k * bin_s;
            L->last_s = (double)(k + 1) * bin_s;
            fill = aux;
            if (mask)
                mask[k] = 1;
        }
        if (fill > L->peak)
            L->peak = fill;
    }
}

/* ---------------------------------------------------------------- one simulation */

struct sim_run {
    struct ptc_sim_cfg cfg;
    struct ptc_sim *sim;
    struct ptc_session *s;
    struct ptc_select *sel;           /* candidates (NULL: all) */
    const struct ptc_budget_func *f;  /* traced set (NULL: every candidate) */
    size_t n;
};

static int traced(void *ctx, uint32_t func)
{
    struct sim_run *r = ctx;
    if (r->f)
        return func < r->n && (r->f[func].flags & PTC_BUDGET_F_TRACED);
    const struct ptc_func_info *fi = ptc_session_func(r->s, func);
    return fi && ptc_select_func(r->sel, fi->name, fi->linkage_name);
}

static int prepare(void *ctx, struct ptc_session *s)
{
    struct sim_run *r = ctx;
    r->s = s;
    if (!(r->sim = ptc_sim_new(s, &r->cfg)))
        return 1;
    if (r->f || (r->sel && ptc_select_active(r->sel)))
        ptc_sim_set_filter(r->sim, traced, r);
    ptc_session_set_hit_hook(s, ptc_sim_hit_hook, r->sim);
    ptc_session_hits_only(s);
    return 0;
}

static int sim_path(const char *cmd, const char *path, struct sim_run *r)
{
    struct cli_args a = {.cmd = cmd, .path = path, .threads = 1, .prepare = prepare,
                         .prepare_ctx = r};
    struct ptc_session *s = cli_decode(&a, NULL, NULL, NULL, NULL);
    if (!s) {
        ptc_sim_free(r->sim);
        r->sim = NULL;
        return 1;
    }
    r->s = s;
    return 0;
}

static void sim_free(struct sim_run *r)
{
    ptc_sim_free(r->sim);
    if (r->s)
        ptc_session_free(r->s);
    r->sim = NULL;
    r->s = NULL;
}

/* The bytes and the loss of r's simulation (mode 0). */
static void measure(const struct sim_run *r, const struct bw_budget *b, uint64_t *bytes,
                    struct bw_loss *L)
{
    const struct ptc_sim_mode *md = ptc_sim_mode(r->sim, 0);
    struct ptc_sim_totals t;
    ptc_sim_totals(r->sim, &t);
    *bytes = md->total;
    double bin_s = (double)ptc_sim_bin_ns(r->sim) / 1e9;
    double threads = (double)(t.threads ? t.threads : 1); /* one buffer per stream */
    bw_replay(md->bins, ptc_sim_nbins(r->sim), bin_s, b->rate, b->aux * threads, L, NULL);
}

/* ---------------------------------------------------------------- the choice */

int bw_budget_run(const char *cmd, const char *path, const struct ptc_sim_cfg *cfg,
                  const struct ptc_select *sel, double rate, double aux, struct bw_budget *b)
{
    memset(b, 0, sizeof(*b));
    b->rate = rate;
    b->aux = aux;
    b->timing = cfg->timing[0];
    struct ptc_select cand;
    if (sel)
        cand = *sel;
    else
        memset(&cand, 0, sizeof(cand));
    struct sim_run all = {.cfg = *cfg, .sel = &cand};
    all.cfg.nmodes = 1;
    if (sim_path(cmd, path, &all))
        return 1;
    b->s = all.s;
    struct ptc_sim_totals t;
    ptc_sim_totals(all.sim, &t);
    if (!t.span_ns || !t.hits) {
        sim_free(&all);
        b->s = NULL;
        return cli_fail(cmd,
                        t.hits ? "--budget needs times: the trace's hits have none, so no "
                                 "rate can be worked out"
                               : "--budget: the trace has no hit of a candidate function",
                        t.hits ? "record the counts with timestamps (without --no-timestamps)"
                               : "record a run that calls the functions to choose from");
    }
    b->span_s = (double)t.span_ns / 1e9;
    if (ptc_bw_budget_funcs(all.sim, traced, &all, &b->f, &b->n)) {
        sim_free(&all);
        b->s = NULL;
        return cli_fail(cmd, "out of memory for the budget's functions", "try a shorter trace");
    }
    measure(&all, b, &b->all_bytes, &b->all_loss);
    b->all_rate = (double)b->all_bytes / b->span_s;
    /* the cheapest function that ran, alone: below its rate nothing can be traced */
    struct ptc_budget_model m0;
    ptc_bw_budget_model(all.sim, rate, 1, &m0);
    b->cheapest = UINT32_MAX;
    for (size_t i = 0; i < b->n; i++) {
        if (!(b->f[i].flags & PTC_BUDGET_F_CANDIDATE) || !b->f[i].calls)
            continue;
        double c = (double)b->f[i].calls * b->f[i].events_per_call * m0.per_event / b->span_s;
        if (b->cheapest == UINT32_MAX || c < b->cheapest_rate) {
            b->cheapest = (uint32_t)i;
            b->cheapest_rate = c;
        }
    }
    int rc = 0;
    double scale = 1;
    for (b->rounds = 1;; b->rounds++) {
        b->scale = scale;
        ptc_bw_budget_model(all.sim, rate, scale, &b->model);
        if (ptc_budget_choose(&b->model, b->f, b->n, &b->res)) {
            rc = cli_fail(cmd, "out of memory choosing the functions", "try a shorter trace");
            break;
        }
        if (b->res.outcome == PTC_BUDGET_ALL) {
            b->chosen_bytes = b->all_bytes;
            b->chosen_loss = b->all_loss;
        } else {
            struct sim_run ch = {.cfg = all.cfg, .f = b->f, .n = b->n};
            if (sim_path(cmd, path, &ch)) {
                rc = 1;
                break;
            }
            measure(&ch, b, &b->chosen_bytes, &b->chosen_loss);
            sim_free(&ch);
        }
        b->chosen_rate = (double)b->chosen_bytes / b->span_s;
        b->fits = b->chosen_rate <= rate && !b->chosen_loss.lost;
        if (b->res.calls_traced)
            b->smallest_rate = b->chosen_rate;
        if (b->fits || !b->res.calls_traced)
            break;
        if (b->rounds == MAX_ROUNDS) {
            /* even the fewest calls cost more than the budget: the stream of timing and
             * PSB+ packets alone (MTC flows while a traced thread runs) is over it */
            for (size_t i = 0; i < b->n; i++)
                b->f[i].flags &= ~PTC_BUDGET_F_TRACED;
            b->res.traced = 0;
            b->res.calls_traced = 0;
            b->res.cost_chosen = 0;
            b->chosen_bytes = 0;
            b->chosen_rate = 0;
            memset(&b->chosen_loss, 0, sizeof(b->chosen_loss));
            b->fits = 1;
            b->nothing_fits = 1;
            break;
        }
        /* over: aim below what this set cost, in proportion */
        double k = rate / b->chosen_rate;
        scale *= k < 0.9 ? k * 0.97 : 0.9;
    }
    ptc_sim_free(all.sim); /* the session stays: it names the functions */
    return rc;
}

void bw_budget_full(struct bw_budget *b, const struct bw_report *r)
{
    if (!r->full.have || !(b->span_s > 0))
        return;
    for (int i = 0; i < r->cfg.nmodes; i++)
        if (r->cfg.timing[i] == b->timing) {
            b->have_full = 1;
            b->full_rate = (double)r->full.total[i] / b->span_s;
            return;
        }
}

void bw_budget_free(struct bw_budget *b)
{
    free(b->f);
    if (b->s)
        ptc_session_free(b->s);
    memset(b, 0, sizeof(*b));
}

/* ---------------------------------------------------------------- output */

static const char *slot_name(const struct bw_budget *b, uint32_t i)
{
    const struct ptc_func_info *fi = ptc_session_func(b->s, i);
    return fi && fi->name ? fi->name : "?";
}

static int by_calls(const void *x, const void *y, void *ctx)
{
    const struct bw_budget *b = ctx;
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    uint64_t ci = b->f[i].calls, cj = b->f[j].calls;
    return ci != cj ? (ci < cj ? 1 : -1) : (i > j) - (i < j);
}

/* The traced functions that ran, most calls first; *n of them. */
static uint32_t *chosen_list(const struct bw_budget *b, size_t *n)
{
    uint32_t *v = malloc((b->n ? b->n : 1) * sizeof(*v));
    *n = 0;
    if (!v)
        return NULL;
    for (size_t i = 0; i < b->n; i++)
        if ((b->f[i].flags & PTC_BUDGET_F_TRACED) && b->f[i].calls)
            v[(*n)++] = (uint32_t)i;
    qsort_r(v, *n, sizeof(*v), by_calls, (void *)b);
    return v;
}

static double share(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0; }

/* The crossover, in a sentence (table) */
static void crossover_line(const struct bw_budget *b, FILE *f)
{
    if (!b->have_full) {
        fprintf(f, "  crossover: unknown without the full-tracing estimate (give -- COMMAND or "
                   "--callgrind FILE)\n");
        return;
    }
    if (b->full_rate < b->all_rate)
        fprintf(f,
                "  crossover: full tracing %.1f MB/s (estimate) is cheaper than tracing every "
                "candidate's stubs (%.1f MB/s): at budgets of %.1f MB/s and above full tracing "
                "fits and keeps every call; below it only the stub-filtered choice fits\n",
                b->full_rate / 1e6, b->all_rate / 1e6, b->full_rate / 1e6);
    else
        fprintf(f,
                "  crossover: none: tracing every candidate's stubs (%.1f MB/s) costs less than "
                "full tracing (%.1f MB/s, estimate) at every budget\n",
                b->all_rate / 1e6, b->full_rate / 1e6);
}

void bw_budget_write(const struct bw_budget *b, int format, uint64_t top, FILE *f)
{
    size_t n;
    uint32_t *v = chosen_list(b, &n);
    const char *tn = ptc_sim_timing_name(b->timing);
    const struct ptc_budget_result *r = &b->res;
    size_t ran = 0;
    for (size_t i = 0; i < b->n; i++)
        ran += (b->f[i].flags & PTC_BUDGET_F_CANDIDATE) && b->f[i].calls;
    if (format == 1) {
        fprintf(f, "budget,%s,rate,0,%.0f\n", tn, b->rate);
        fprintf(f, "budget,%s,all,%" PRIu64 ",%" PRIu64 "\n", tn, r->calls_total, b->all_bytes);
        fprintf(f, "budget,%s,chosen,%" PRIu64 ",%" PRIu64 "\n", tn, r->calls_traced,
                b->chosen_bytes);
        for (size_t k = 0; v && k < n; k++) {
            fprintf(f, "budget_traced,%s,", tn);
            cli_csv_str(f, slot_name(b, v[k]));
            fprintf(f, ",%" PRIu64 ",0\n", b->f[v[k]].calls);
        }
    } else if (format == 2) {
        fprintf(f, "  \"budget_choice\": {\"timing\": \"%s\", \"rate_bytes_per_s\": %.0f, "
                   "\"aux_bytes\": %.0f, \"span_s\": %.9g,\n",
                tn, b->rate, b->aux, b->span_s);
        fprintf(f, "    \"model\": {\"per_event\": %.17g, \"per_count\": %.17g, \"budget\": "
                   "%.17g, \"scale\": %.17g, \"rounds\": %d},\n",
                b->model.per_event, b->model.per_count, b->model.budget, b->scale, b->rounds);
        static const char *const oc[] = {"ok", "all", "below_counting"};
        fprintf(f, "    \"nothing_fits\": %s,\n", b->nothing_fits ? "true" : "false");
        fprintf(f, "    \"outcome\": \"%s\", \"fits\": %s, \"candidates\": %zu, \"traced\": %zu, "
                   "\"calls_total\": %" PRIu64 ", \"calls_traced\": %" PRIu64
                   ", \"calls_kept\": %.6g,\n",
                oc[r->outcome], b->fits ? "true" : "false", r->candidates, n, r->calls_total,
                r->calls_traced, share(r->calls_traced, r->calls_total));
        fprintf(f, "    \"all\": {\"bytes\": %" PRIu64 ", \"bytes_per_s\": %.6g, \"lost\": %" PRIu64
                   "},\n    \"chosen\": {\"bytes\": %" PRIu64 ", \"bytes_per_s\": %.6g, \"lost\": "
                   "%" PRIu64 "},\n",
                b->all_bytes, b->all_rate, b->all_loss.lost, b->chosen_bytes, b->chosen_rate,
                b->chosen_loss.lost);
        fprintf(f, "    \"full_bytes_per_s\": ");
        if (b->have_full)
            fprintf(f, "%.6g, \"crossover_bytes_per_s\": ", b->full_rate);
        else
            fprintf(f, "null, \"crossover_bytes_per_s\": ");
        if (b->have_full && b->full_rate < b->all_rate)
            fprintf(f, "%.6g,\n", b->full_rate);
        else
            fprintf(f, "null,\n");
        fprintf(f, "    \"functions\": [");
        for (size_t i = 0, k = 0; i < b->n; i++) {
            if (!(b->f[i].flags & PTC_BUDGET_F_CANDIDATE) || !b->f[i].calls)
                continue;
            fprintf(f, "%s\n      {\"name\": ", k++ ? "," : "");
            cli_json_str(f, slot_name(b, (uint32_t)i));
            fprintf(f, ", \"calls\": %" PRIu64 ", \"events_per_call\": %u, \"traced\": %s}",
                    b->f[i].calls, b->f[i].events_per_call,
                    b->f[i].flags & PTC_BUDGET_F_TRACED ? "true" : "false");
        }
        fprintf(f, "]}");
    } else {
        fprintf(f, "\nwithin a budget of %.1f MB/s, AUX %.0f KiB per stream (timing %s, "
                   "docs/bandwidth.md):\n",
                b->rate / 1e6, b->aux / 1024, tn);
        fprintf(f, "  every candidate traced: %.1f MB/s, %" PRIu64 " bytes lost\n",
                b->all_rate / 1e6, b->all_loss.lost);
        fprintf(f, "  chosen: %zu of %zu functions that ran, %.1f%% of the calls; simulated "
                   "%.1f MB/s, %" PRIu64 " bytes lost (%s)\n",
                n, ran, 100 * share(r->calls_traced, r->calls_total),
                b->chosen_rate / 1e6, b->chosen_loss.lost, b->fits ? "within the budget" : "over");
        fprintf(f, "  model: %.2f bytes per hit, budget %.0f bytes over %.3f s x %.3g (%d "
                   "round%s)\n",
                b->model.per_event, b->model.budget, b->span_s, b->scale, b->rounds,
                b->rounds == 1 ? "" : "s");
        crossover_line(b, f);
        for (size_t k = 0; v && k < n && (!top || k < top); k++)
            fprintf(f, "  %12" PRIu64 "  %s\n", b->f[v[k]].calls, slot_name(b, v[k]));
        if (top && n > top)
            fprintf(f, "  ... %zu more (--top 0 lists all)\n", n - top);
    }
    free(v);
}
