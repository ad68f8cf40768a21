/* ptcall calibrate: measures the cost model of a budget on this machine and caches it
 * (runtime/pt/pt_costs.c does the work; docs/usage.md, Tracing within a budget). */
#include <stdio.h>
#include <string.h>

#include "budget.h"
#include "commands.h"
#include "options.h"
#include "ptc_clock.h"
#include "ptc_env.h"
#include "ptc_escape.h"

static void print_fig_json(const struct ptc_cost_fig *f)
{
    if (f->ok) {
        printf("{\"ns\": %.3f, \"min\": %.3f, \"max\": %.3f}", f->ns, f->min, f->max);
    } else {
        printf("{\"ns\": null, \"why\": ");
        ptc_fput_json(stdout, f->why);
        printf("}");
    }
}

static void print_json(const struct ptc_costs *c, int measured)
{
    printf("{\"format_version\": 1, \"tool\": \"ptcall calibrate\", \"cpu\": ");
    ptc_fput_json(stdout, c->cpu);
    printf(", \"kernel\": ");
    ptc_fput_json(stdout, c->kernel);
    printf(", \"libptcall_build_id\": ");
    ptc_fput_json(stdout, c->build_id);
    printf(", \"calibrated\": \"%s\", \"measured_now\": %s, \"seconds\": %.3f, \"calls\": %llu, "
           "\"repeats\": %u, \"ns_per_event\": {",
           c->calibrated, measured ? "true" : "false", c->seconds, (unsigned long long)c->calls,
           c->repeats);
    for (unsigned i = 0; i < c->nmodes; i++) {
        printf("%s\"%s\": ", i ? ", " : "", c->mode[i].name);
        print_fig_json(&c->mode[i].f);
    }
    printf("}, \"ns_per_count\": ");
    print_fig_json(&c->count);
    printf(", \"ns_per_count_atomic\": ");
    print_fig_json(&c->count_atomic);
    printf("}\n");
}

static void print_row(const char *what, const char *unit, const struct ptc_cost_fig *f)
{
    if (!f->ok) {
        printf("  %-8s  not measured: %s\n", what, f->why);
        return;
    }
    double spread = f->ns > 0 ? (f->max - f->min) / 2 / f->ns * 100 : 0;
    printf("  %-8s  %7.2f ns/%-5s  (min %.2f, max %.2f, spread +-%.0f %%)\n", what, f->ns, unit,
           f->min, f->max, spread);
}

/* --env: the figures for a program started with this environment, read as the runtime reads
 * it (common/ptc_env.c): PTCALL_CLOCK chooses the event's mode, PTCALL_COUNT_ATOMIC the
 * count's. 0, or 1 after the runtime's own line on a value it would refuse. */
static int env_choice(const char **mode, uint64_t *atomic)
{
    const char *clock = NULL;
    uint32_t period = 0;
    char err[256], what[300];
    if (ptc_env_get(PTC_ENV_CLOCK, NULL, &clock, err, sizeof(err)) < 0 ||
        ptc_env_get(PTC_ENV_COUNT_ATOMIC, atomic, NULL, err, sizeof(err)) < 0)
        snprintf(what, sizeof(what), "%s", err);
    else if (ptc_clock_parse(clock, &period, err, sizeof(err)) < 0)
        snprintf(what, sizeof(what), "PTCALL_CLOCK: %s", err);
    else
        what[0] = 0;
    if (what[0]) {
        fprintf(stderr, "ptcall: %s: no costs for it (docs/runtime.md lists the values)\n", what);
        return 1;
    }
    *mode = period ? "ticker" : "timed";
    return 0;
}

static int calibrate_main(const struct cli_values *v)
{
    const char *mode = "timed";
    uint64_t atomic = 0;
    if (v->calibrate.env && env_choice(&mode, &atomic) != 0)
        return 1;
    struct ptc_costs c;
    int measured;
    if (budget_costs_get(1, v->quiet, &c, &measured) != 0)
        return 1;
    if (v->calibrate.env) {
        const struct ptc_cost_fig *t = ptc_costs_mode(&c, mode);
        const struct ptc_cost_fig *k = ptc_costs_count(&c, (int)atomic);
        if (!t || !k) {
            fprintf(stderr, "ptcall: the %s mode or counting could not be measured\n", mode);
            return 1;
        }
        printf("PTCALL_COSTS=event=%.2f,count=%.2f\n", t->ns, k->ns);
        return 0;
    }
    if (v->calibrate.format == 1) {
        print_json(&c, measured);
        return 0;
    }
    printf("Costs on %s, kernel %s, libptcall %.12s (calibrated %s in %.1f s: %u paired runs "
           "of %llu calls, median):\n",
           c.cpu, c.kernel, c.build_id, c.calibrated, c.seconds, c.repeats,
           (unsigned long long)c.calls);
    for (unsigned i = 0; i < c.nmodes; i++)
        print_row(c.mode[i].name, "event", &c.mode[i].f);
    print_row("count", "call", &c.count);
    print_row("locked", "call", &c.count_atomic);
    return 0;
}

int cmd_calibrate(int argc, char **argv)
{
    struct cli_values v;
    int r = cli_parse(CMD_CALIBRATE, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    if (v.npos)
        r = cli_usage_error(CMD_CALIBRATE, "no arguments expected ('%s')", v.pos[0]);
    else
        r = calibrate_main(&v);
    cli_values_free(&v);
    return r;
}
