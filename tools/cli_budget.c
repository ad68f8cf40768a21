/* Traces recorded within a budget in the analyses' outputs (cli_budget.h). */
#include "cli_budget.h"

#include <string.h>

#include "cli_common.h"

int cli_budget_mixed(const struct ptc_session *s)
{
    struct ptc_func_states st;
    ptc_session_func_states(s, &st);
    return st.mixed;
}

const char *cli_state_word(int state)
{
    return state == PTC_FUNC_TRACED ? "traced" : state == PTC_FUNC_COUNTED ? "counted" : "neither";
}

static double share(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* "overhead 5 % of CPU time" / "rate 2e+06 bytes/s (AUX 4.19e+06 bytes)" */
static int limit_text(char *buf, size_t n, const struct ptc_budget_info *b)
{
    if (b->kind == PTC_BUDGET_KIND_OVERHEAD)
        return snprintf(buf, n, "overhead %.4g %% of CPU time, predicted %.4g %%",
                        100.0 * b->limit, 100.0 * b->predicted);
    if (b->kind == PTC_BUDGET_KIND_RATE)
        return snprintf(buf, n, "rate %.4g bytes/s (AUX %.4g bytes), predicted %.4g bytes/s",
                        b->limit, b->aux_bytes, b->predicted);
    return snprintf(buf, n, "of unknown kind %u, limit %.4g", b->kind, b->limit);
}

/* "chosen by a 200 ms pilot" / "chosen from a previous run's counts" */
static int source_text(char *buf, size_t n, const struct ptc_budget_info *b)
{
    if (b->source == PTC_BUDGET_SRC_PILOT)
        return snprintf(buf, n, "chosen by a %.4g ms pilot", (double)b->pilot_ns / 1e6);
    if (b->source == PTC_BUDGET_SRC_PREVIOUS)
        return snprintf(buf, n, "chosen from a previous run's counts");
    if (b->source == PTC_BUDGET_SRC_GOVERNOR)
        return snprintf(buf, n, "the governor demoted functions after a %.4g ms period",
                        (double)b->pilot_ns / 1e6);
    return snprintf(buf, n, "chosen from an unknown source %u", b->source);
}

static void budget_line(char *buf, size_t n, const struct ptc_budget_info *b, int with_pid)
{
    char lim[160], src[80];
    limit_text(lim, sizeof(lim), b);
    source_text(src, sizeof(src), b);
    char pid[32] = "";
    if (with_pid)
        snprintf(pid, sizeof(pid), " (pid %u)", b->pid);
    snprintf(buf, n, "budget%s: %s, %s: %s, %llu of %llu candidates traced", pid, lim, src,
             ptc_budget_outcome_name(b->outcome), (unsigned long long)b->traced,
             (unsigned long long)b->candidates);
}

static void states_line(char *buf, size_t n, const struct ptc_func_states *st)
{
    uint64_t all = st->calls_traced + st->calls_counted;
    char dem[96] = "";
    if (st->demoted)
        snprintf(dem, sizeof(dem), " (%u of them demoted by the governor: traced, then counted)",
                 st->demoted);
    if (!st->calls_known) { /* a view that computes its own figures (ptcall calls) */
        snprintf(buf, n, "functions: %u traced%s, %u counted (exact calls, no times: %llu "
                 "calls, not in this output), %u neither (not recorded)", st->traced, dem,
                 st->counted, (unsigned long long)st->calls_counted, st->neither);
        return;
    }
    snprintf(buf, n, "functions: %u traced%s, %u counted (exact calls, no times), %u neither "
             "(not recorded); calls: %llu of %llu in events (%.1f %%), %llu counted",
             st->traced, dem, st->counted, st->neither, (unsigned long long)st->calls_traced,
             (unsigned long long)all, share(st->calls_traced, all),
             (unsigned long long)st->calls_counted);
}

int cli_print_budget(FILE *f, const char *prefix, const struct ptc_session *s)
{
    struct ptc_func_states st;
    ptc_session_func_states(s, &st);
    if (!st.mixed)
        return 0;
    int lines = 0;
    uint32_t nb = ptc_session_num_budgets(s);
    char line[512];
    for (uint32_t i = 0; i < nb; i++) {
        struct ptc_budget_info b;
        if (ptc_session_budget(s, i, &b))
            continue;
        budget_line(line, sizeof(line), &b, nb > 1);
        fprintf(f, "%s%s\n%sbudget note: ", prefix, line, prefix);
        cli_text_str(f, b.note);
        fprintf(f, "\n");
        lines += 2;
    }
    if (!nb) {
        fprintf(f, "%sno budget in the trace: functions were counted as the recording chose "
                   "(PTCALL_COUNT_REST, a trace set)\n", prefix);
        lines++;
    }
    states_line(line, sizeof(line), &st);
    fprintf(f, "%s%s\n", prefix, line);
    return lines + 1;
}

void cli_budget_summary(char *buf, size_t n, const struct ptc_session *s)
{
    struct ptc_func_states st;
    ptc_session_func_states(s, &st);
    if (!n)
        return;
    buf[0] = 0;
    if (!st.mixed)
        return;
    size_t at = 0;
    struct ptc_budget_info b;
    if (ptc_session_num_budgets(s) && ptc_session_budget(s, 0, &b) == 0) {
        budget_line(buf, n, &b, 0);
        at = strlen(buf);
        if (at + 2 < n)
            snprintf(buf + at, n - at, "; ");
        at = strlen(buf);
    }
    if (at < n)
        states_line(buf + at, n - at, &st);
}

static void json_budget_obj(FILE *f, const struct ptc_budget_info *b)
{
    fprintf(f, "{\"pid\": %u, \"kind\": \"%s\", \"source\": \"%s\", \"limit\": %.17g, "
               "\"aux_bytes\": %.17g, \"per_event\": %.17g, \"per_count\": %.17g, "
               "\"predicted\": %.17g, \"pilot_ns\": %llu, \"time\": ",
            b->pid, ptc_budget_kind_name(b->kind), ptc_budget_source_name(b->source), b->limit,
            b->aux_bytes, b->per_event, b->per_count, b->predicted,
            (unsigned long long)b->pilot_ns);
    if (b->has_time)
        fprintf(f, "%llu", (unsigned long long)b->time);
    else
        fprintf(f, "null");
    fprintf(f, ", \"candidates\": %llu, \"traced\": %llu, \"calls_total\": %llu, "
               "\"calls_traced\": %llu, \"outcome\": \"%s\", \"note\": ",
            (unsigned long long)b->candidates, (unsigned long long)b->traced,
            (unsigned long long)b->calls_total, (unsigned long long)b->calls_traced,
            ptc_budget_outcome_name(b->outcome));
    cli_json_str(f, b->note);
    fprintf(f, "}");
}

void cli_json_budget(FILE *f, const struct ptc_session *s, const char *indent)
{
    struct ptc_func_states st;
    ptc_session_func_states(s, &st);
    uint32_t nb = ptc_session_num_budgets(s);
    struct ptc_budget_info b;
    fprintf(f, ",\n%s\"budget\": ", indent);
    if (nb && ptc_session_budget(s, 0, &b) == 0)
        json_budget_obj(f, &b);
    else
        fprintf(f, "null");
    fprintf(f, ",\n%s\"budgets\": [", indent);
    for (uint32_t i = 0; i < nb; i++)
        if (ptc_session_budget(s, i, &b) == 0) {
            fprintf(f, "%s", i ? ", " : "");
            json_budget_obj(f, &b);
        }
    fprintf(f, "],\n%s\"function_states\": ", indent);
    if (!st.mixed) {
        fprintf(f, "null");
        return;
    }
    fprintf(f, "{\"traced\": %u, \"counted\": %u, \"neither\": %u, \"demoted\": %u, "
               "\"calls_traced\": ", st.traced, st.counted, st.neither, st.demoted);
    if (st.calls_known)
        fprintf(f, "%llu", (unsigned long long)st.calls_traced);
    else
        fprintf(f, "null");
    fprintf(f, ", \"calls_counted\": %llu}", (unsigned long long)st.calls_counted);
}
