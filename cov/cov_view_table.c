/* `cov report --format table`: the coverage of a campaign for people, one section per
 * question (docs/cov.md, Reports). Lists are cut at --top rows and say how many are left. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "cov.h"

static double pct(uint32_t a, uint32_t b)
{
    return b ? 100.0 * a / b : 0.0;
}

static void fmt_ms(char *b, size_t n, int64_t ms)
{
    if (ms < 0)
        snprintf(b, n, "?");
    else if (ms < 60000)
        snprintf(b, n, "%.1fs", ms / 1000.0);
    else if (ms < 3600000)
        snprintf(b, n, "%dm%02ds", (int)(ms / 60000), (int)(ms / 1000 % 60));
    else
        snprintf(b, n, "%dh%02dm", (int)(ms / 3600000), (int)(ms / 60000 % 60));
}

static uint32_t cut(uint64_t top, uint32_t n)
{
    return top && top < n ? (uint32_t)top : n;
}

static void more(FILE *f, uint32_t shown, uint32_t n)
{
    if (shown < n)
        fprintf(f, "  ... %u more (--top 0 shows all)\n", n - shown);
}

static void outcome(char *b, size_t n, const struct cov_input *in)
{
    if (in->outcome == COV_EXITED)
        snprintf(b, n, "exit %d", in->value);
    else if (in->outcome == COV_SIGNALED)
        snprintf(b, n, "signal %d (%s)", in->value, sigabbrev_np(in->value) ? sigabbrev_np(in->value) : "?");
    else if (in->outcome == COV_TIMEOUT)
        snprintf(b, n, "hang (killed at %d ms)", in->value);
    else
        snprintf(b, n, "not run (%s)", strerror(in->value));
}

int cov_view_table(FILE *f, const struct cov_analysis *a, const struct cov_view_opts *o)
{
    const struct cov_data *d = a->d;
    char t[64], st[96];
    fputs("coverage of ", f);
    cov_text_str(f, o->ptcov ? o->ptcov : "?");
    fprintf(f, ": %u inputs of '", d->ninputs);
    cov_text_str(f, d->target ? d->target : "?");
    fputs("'\n", f);
    if (d->harness) {
        fputs("  the target: ", f);
        cov_text_str(f, d->harness);
        fputc('\n', f);
    }
    fprintf(f, "  %u exited, %u crashed, %u hung, %u not run\n\n", a->counted[COV_EXITED],
            a->counted[COV_SIGNALED], a->counted[COV_TIMEOUT], a->counted[COV_ERROR]);
    fprintf(f, "functions reached: %u of %u instrumented (%.1f %%)\n", a->reached, d->nfuncs,
            pct(a->reached, d->nfuncs));
    fprintf(f, "universe: %s\n\n", cov_universe_text(cov_data_placement(d)));

    fprintf(f, "per module:\n");
    for (uint32_t m = 0; m < a->nmodules_g; m++) {
        fprintf(f, "  %6u / %-6u %5.1f %%  ", a->modules[m].reached, a->modules[m].funcs,
                pct(a->modules[m].reached, a->modules[m].funcs));
        cov_text_str(f, a->modules[m].name);
        fputs(d->modules[m].build_id[0] ? "  build id " : "", f);
        cov_text_str(f, d->modules[m].build_id);
        if (d->modules[m].placement != COV_PLACE_UNKNOWN)
            fprintf(f, "  (%s placement)", cov_placement_name(d->modules[m].placement));
        fputc('\n', f);
    }
    fprintf(f, "\nper source file:\n");
    uint32_t nf = cut(o->top, a->nfiles);
    for (uint32_t i = 0; i < nf; i++) {
        fprintf(f, "  %6u / %-6u %5.1f %%  ", a->files[i].reached, a->files[i].funcs,
                pct(a->files[i].reached, a->files[i].funcs));
        cov_text_str(f, a->files[i].name[0] ? a->files[i].name : "(unknown)");
        fputc('\n', f);
    }
    more(f, nf, a->nfiles);

    fprintf(f, "\ncoverage over campaign time (inputs that reached new functions):\n");
    fprintf(f, "  %9s %8s  %s\n", "time", "reached", "input");
    uint32_t nc = cut(o->top, a->ncurve);
    for (uint32_t i = 0; i < nc; i++) {
        fmt_ms(t, sizeof(t), a->curve[i].time_ms);
        fprintf(f, "  %9s %8u  ", t, a->curve[i].reached);
        cov_text_str(f, d->inputs[a->curve[i].input].name);
        fprintf(f, " (+%u)\n", a->new_count[a->curve[i].input]);
    }
    more(f, nc, a->ncurve);
    if (a->ncurve && a->end_ms > a->curve[a->ncurve - 1].time_ms) {
        fmt_ms(t, sizeof(t), a->end_ms);
        fprintf(f, "  %9s %8u  (the campaign's end: nothing new since)\n", t,
                a->curve[a->ncurve - 1].reached);
    }

    fprintf(f, "\ninputs (campaign order): functions reached, reached first\n");
    uint32_t ni = cut(o->top, d->ninputs);
    for (uint32_t i = 0; i < ni; i++) {
        const struct cov_input *in = &d->inputs[i];
        fmt_ms(t, sizeof(t), in->time_ms);
        outcome(st, sizeof(st), in);
        fprintf(f, "  %9s %6u %+6d  %-5s ", t, in->nhits, (int)a->new_count[i],
                cov_kind_name(in->kind));
        cov_text_str(f, in->name);
        fprintf(f, "  [%s]\n", st);
        if (a->new_count[i]) {
            fprintf(f, "            first:");
            uint32_t shown = 0;
            for (uint32_t k = 0; k < in->nhits; k++)
                if (a->first_input[in->hits[k].func] == i && (!o->top || shown < o->top)) {
                    fputc(' ', f);
                    cov_text_str(f, cov_func_name(d, in->hits[k].func));
                    shown++;
                }
            if (shown < a->new_count[i])
                fprintf(f, " ... %u more", a->new_count[i] - shown);
            fputc('\n', f);
        }
    }
    more(f, ni, d->ninputs);

    fprintf(f, "\nfunctions reached: inputs reaching, calls, first input\n");
    uint32_t shown = 0;
    for (uint32_t i = 0; i < d->nfuncs; i++) {
        if (!a->inputs_reaching[i])
            continue;
        if (o->top && shown >= o->top) {
            shown++;
            continue;
        }
        shown++;
        fprintf(f, "  %6u %12" PRIu64 "  ", a->inputs_reaching[i], a->calls[i]);
        cov_text_str(f, cov_func_name(d, i));
        fputs("  (", f);
        cov_text_str(f, d->inputs[a->first_input[i]].name);
        fputs(")\n", f);
    }
    more(f, cut(o->top, shown), shown);

    fprintf(f, "\nnever reached: %u functions\n", d->nfuncs - a->reached);
    shown = 0;
    for (uint32_t i = 0; i < d->nfuncs; i++) {
        if (a->inputs_reaching[i])
            continue;
        if (!o->top || shown < o->top) {
            fputs("  ", f);
            cov_text_str(f, cov_func_name(d, i));
            fputs("  ", f);
            cov_text_str(f, d->funcs[i].file);
            fprintf(f, ":%u\n", d->funcs[i].line);
        }
        shown++;
    }
    more(f, cut(o->top, shown), shown);

    /* the reachability of what was never reached; with --blockers (--frontier) the
     * frontier, which replaced the per-caller blockers list */
    if (cov_view_table_reach(f, a, o))
        return -EIO;
    if (cov_view_table_blocks(f, a, o))
        return -EIO;
    return fflush(f) || ferror(f) ? -EIO : 0;
}
