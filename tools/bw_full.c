/* `ptcall bandwidth`'s full-PT estimate (bw_report.h): branch counts from callgrind
 * (bandwidth/fullpt.h: a saved --callgrind output, or COMMAND run under valgrind), turned
 * into packets and bytes under each configuration the stub-filtered simulation ran, with
 * the run's duration from the trace. Every figure is an estimate and says so. */
#include <fcntl.h>
#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bw_report.h"
#include "cli_common.h"
#include "fullpt.h"
#include "options.h"

#define CMD "bandwidth"

/* packet types shown for full tracing, in this order */
static const int full_types[] = {ppt_tnt_8, ppt_tnt_64, ppt_tip, ppt_tip_pge, ppt_tip_pgd,
                                 ppt_fup,   ppt_mode,   ppt_cyc, ppt_mtc,     ppt_tsc,
                                 ppt_tma,   ppt_cbr,    ppt_psb, ppt_psbend};
#define NFULL (sizeof(full_types) / sizeof(full_types[0]))
static const char *const full_names[NFULL] = {"TNT8", "TNT64", "TIP", "TIP.PGE", "TIP.PGD",
                                              "FUP",  "MODE",  "CYC", "MTC",     "TSC",
                                              "TMA",  "CBR",   "PSB", "PSBEND"};

/* A buffer of aux bytes drained at drain bytes/s against a steady rate over seconds. */
static void steady_loss(double rate, double seconds, double drain, double aux,
                        struct bw_loss *L)
{
    memset(L, 0, sizeof(*L));
    L->peak = rate > drain ? aux : rate * 1e-4; /* below the drain it never holds more than a bin */
    if (rate <= drain || seconds <= 0)
        return;
    double fill_s = aux / (rate - drain);
    if (fill_s >= seconds) {
        L->peak = (rate - drain) * seconds;
        return;
    }
    L->lost = (uint64_t)((rate - drain) * (seconds - fill_s));
    L->first_s = fill_s;
    L->last_s = seconds;
    L->lossy_bins = 1;
}

static int cmp_func_bytes(const void *a, const void *b)
{
    const struct bw_full_func *x = a, *y = b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->name, y->name);
}

/* The top functions of the last configuration, by estimated bytes. */
static int keep_funcs(struct bw_full *f, const struct ptc_fullpt_profile *p,
                      const struct ptc_fullpt_bytes *per)
{
    f->funcs = calloc(p->nfunc ? p->nfunc : 1, sizeof(*f->funcs));
    if (!f->funcs)
        return -1;
    for (size_t i = 0; i < p->nfunc; i++) {
        if (!per[i].total)
            continue;
        struct bw_full_func *x = &f->funcs[f->nfuncs];
        if (!(x->name = strdup(p->func[i].name ? p->func[i].name : "?")))
            return -1;
        x->bytes = per[i].total;
        f->nfuncs++;
    }
    qsort(f->funcs, f->nfuncs, sizeof(*f->funcs), cmp_func_bytes);
    return 0;
}

static int estimate_modes(struct bw_report *r, const struct ptc_fullpt_profile *p, int retcomp)
{
    struct bw_full *f = &r->full;
    struct ptc_sim_totals t;
    ptc_sim_totals(r->sim, &t);
    uint64_t hz = ptc_sim_tsc_hz(r->sim);
    double seconds = (double)t.span_ns / 1e9;
    struct ptc_fullpt_bytes *per = calloc(p->nfunc ? p->nfunc : 1, sizeof(*per));
    if (!per)
        return cli_fail(CMD, "out of memory", "try a shorter run");
    for (int k = 0; k < (int)NFULL; k++)
        f->types[k].name = full_names[k];
    f->ntypes = NFULL;
    int rc = 0;
    for (int i = 0; i < r->cfg.nmodes && !rc; i++) {
        struct ptc_fullpt_cfg c;
        ptc_fullpt_cfg_default(&c);
        c.timing = r->cfg.timing[i]; /* the same order: none, tsc, mtc, cyc */
        c.mtc_period = r->cfg.mtc_period;
        c.cyc_threshold = r->cfg.cyc_threshold;
        c.psb_period = r->cfg.psb_period;
        c.ret_compression = retcomp;
        c.tsc_hz = hz;
        c.ctc_hz = hz ? hz * r->cfg.tsc_per_ctc_den / r->cfg.tsc_per_ctc_num : 0;
        c.duration_tsc = (uint64_t)(seconds * (double)hz);
        struct ptc_fullpt_bytes b;
        char why[512];
        int last = i == r->cfg.nmodes - 1;
        if (ptc_fullpt_estimate(p, &c, &b, last ? per : NULL, why, sizeof(why))) {
            rc = cli_fail(CMD, why, "full tracing is estimated for the configurations the "
                                    "trace allows");
            break;
        }
        for (int k = 0; k < (int)NFULL; k++) {
            f->types[k].count[i] = b.packets[full_types[k]];
            f->types[k].bytes[i] = b.bytes[full_types[k]];
        }
        f->total[i] = b.total;
        if (r->drain > 0)
            steady_loss(seconds > 0 ? (double)b.total / seconds : 0, seconds, r->drain, r->aux,
                        &f->loss[i]);
        if (last && keep_funcs(f, p, per))
            rc = cli_fail(CMD, "out of memory", "try a shorter run");
    }
    free(per);
    return rc;
}

int bw_full_estimate(struct bw_report *r, const struct cli_values *v, const char *const *argv,
                     int argc)
{
    if (!v->bandwidth.callgrind && argc <= 0)
        return 0;
    struct ptc_fullpt_profile *p = NULL;
    char why[1024];
    int e;
    if (v->bandwidth.callgrind) {
        e = ptc_fullpt_parse(v->bandwidth.callgrind, NULL, &p, why, sizeof(why));
        snprintf(r->full.source, sizeof(r->full.source), "callgrind output %s",
                 v->bandwidth.callgrind);
    } else {
        fprintf(stderr, "ptcall " CMD ": running %s under valgrind's callgrind for the full-PT "
                        "estimate (tens of times slower than the program)...\n",
                 argv[0]);
        char **args = calloc((size_t)argc + 1, sizeof(*args));
        if (!args)
            return cli_fail(CMD, "out of memory", "try again");
        memcpy(args, argv, (size_t)argc * sizeof(*args));
        /* the program's standard output is not ours: it would mix with the report (a JSON
         * document) and may be anything (bzip2 -c's compressed bytes): it is discarded */
        fflush(stdout);
        int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (saved < 0 || null < 0 || dup2(null, STDOUT_FILENO) < 0) {
            if (saved >= 0)
                close(saved);
            if (null >= 0)
                close(null);
            free(args);
            return cli_fail(CMD, "cannot redirect the program's output to /dev/null",
                            "check that /dev/null exists");
        }
        close(null);
        e = ptc_fullpt_collect((const char *const *)args, NULL, &p, why, sizeof(why));
        dup2(saved, STDOUT_FILENO);
        close(saved);
        free(args);
        if (!e)
            snprintf(r->full.source, sizeof(r->full.source),
                     "%s run under callgrind (%.1f s there), %u process(es)", argv[0],
                     p->run_seconds, p->processes);
    }
    if (e)
        return cli_fail(CMD, why, "the stub-filtered figures need no valgrind: leave out "
                                  "-- COMMAND and --callgrind");
    /* full tracing as perf does it: return compression on, unless asked otherwise */
    int retcomp = cli_given(v, "--ret-compression") ? v->bandwidth.ret_compression == 1 : 1;
    r->full.branches_cond = p->total.cond;
    r->full.branches_indirect = p->total.ijmp;
    r->full.calls_indirect = p->total.icall;
    r->full.returns = p->total.ret;
    r->full.insns = p->total.insns;
    snprintf(r->full.note, sizeof(r->full.note),
             "ESTIMATE from branch counts (docs/bandwidth.md): every user-space instruction "
             "the run executed (%.1f%% in the main executable), %s, short TNT, IPs compressed "
             "against the branch's own address, the run's duration from the trace%s%s",
             p->total.insns ? 100.0 * (double)p->main.insns / (double)p->total.insns : 0.0,
             retcomp ? "return compression on" : "noretcomp", p->notes ? "; " : "",
             p->notes ? p->notes : "");
    int rc = estimate_modes(r, p, retcomp);
    ptc_fullpt_free(p);
    if (!rc)
        r->full.have = 1;
    return rc;
}
