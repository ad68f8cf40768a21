/* A budget's pilot, its settings and its ends (soft_pilot.c has the pilot itself): the
 * environment read, the BUDGET chunk written, and what a process that ends or forks during
 * its pilot says. Below soft_flush.c and soft_lifecycle.c, which call it. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptc_budget.h"
#include "ptc_env.h"
#include "soft_internal.h"

struct pilot_state pilot;

uint64_t pilot_cpu_ns(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0)
        return 0;
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* "event=NS,count=NS" */
static int parse_costs(const char *s)
{
    double ev = NAN, cnt = NAN;
    while (s && *s) {
        char *end;
        if (!strncmp(s, "event=", 6)) {
            ev = strtod(s + 6, &end);
        } else if (!strncmp(s, "count=", 6)) {
            cnt = strtod(s + 6, &end);
        } else {
            return -1;
        }
        if (*end && *end != ',')
            return -1;
        s = *end ? end + 1 : end;
    }
    if (isnan(ev) || isnan(cnt) || !(ev > 0) || cnt < 0 || ev > 1e6 || cnt > 1e6)
        return -1;
    pilot.event_ns = ev;
    pilot.count_ns = cnt;
    return 0;
}

/* A trace set that record --overhead chose carries its budget (trace_set_budget): a governor
 * watches it as it watches a pilot's choice (soft_governor.c) */
static void governed_set_config(uint64_t govern_ms)
{
    struct ptc_budget b;
    const char *note;
    if (!govern_ms || !trace_set_budget(&b, &note) || b.kind != PTC_BUDGET_KIND_OVERHEAD ||
        !(b.limit > 0) || b.limit > 1 || !(b.per_event > 0) || !(b.per_count >= 0) || !b.traced)
        return;
    pilot.fraction = b.limit;
    snprintf(pilot.pct_text, sizeof(pilot.pct_text), "%g", 100 * b.limit);
    pilot.event_ns = b.per_event;
    pilot.count_ns = b.per_count;
    pilot.have_costs = 1;
    pilot.govern_ms = govern_ms;
    pilot.set_candidates = b.candidates;
    pilot.set_traced = b.traced;
    rt.gov_set = 1;
}

int pilot_config(void)
{
    const char *pct = NULL, *costs = NULL;
    uint64_t ms = 200, govern_ms = 200;
    char err[256];
    if (ptc_env_get(PTC_ENV_OVERHEAD, NULL, &pct, err, sizeof(err)) < 0 ||
        ptc_env_get(PTC_ENV_PILOT_MS, &ms, NULL, err, sizeof(err)) < 0 ||
        ptc_env_get(PTC_ENV_COSTS, NULL, &costs, err, sizeof(err)) < 0 ||
        ptc_env_get(PTC_ENV_GOVERNOR_MS, &govern_ms, NULL, err, sizeof(err)) < 0) {
        warn("ptcall: %s: not tracing (docs/runtime.md lists the values)", err);
        return -1;
    }
    if (trace_set_path()) {
        if (pct && pct[0])
            warn("ptcall: PTCALL_OVERHEAD is ignored beside PTCALL_TRACE_SET: the set chooses");
        governed_set_config(govern_ms);
        return 0;
    }
    if (!pct || !pct[0])
        return 0;
    char *end;
    double p = strtod(pct, &end);
    if (end == pct || (*end && strcmp(end, "%") != 0) || !(p > 0) || p > 100) {
        warn("ptcall: PTCALL_OVERHEAD=%s: not a percentage above 0 and at most 100 (e.g. 5 or "
             "2.5): not tracing", pct);
        return -1;
    }
    pilot.fraction = p / 100;
    snprintf(pilot.pct_text, sizeof(pilot.pct_text), "%g", p);
    pilot.ms = ms;
    pilot.govern_ms = govern_ms;
    pilot.have_costs = costs && costs[0] && parse_costs(costs) == 0;
    if (!pilot.have_costs)
        snprintf(pilot.costs_why, sizeof(pilot.costs_why), "%s",
                 costs && costs[0] ? "PTCALL_COSTS is not event=NS,count=NS"
                                   : "PTCALL_COSTS is not set");
    rt.pilot = 1;
    rt.mixed = 1;
    atomic_store(&pilot.state, PILOT_COUNTING);
    return 0;
}

void pilot_write_budget(const struct ptc_budget *b, const char *note)
{
    struct ptc_budget h = *b;
    h.note_size = (uint32_t)strlen(note) + 1;
    struct iovec v[2] = {{&h, sizeof(h)}, {(void *)note, h.note_size}};
    write_proc_chunk_flags(PTC_CHUNK_BUDGET, PTC_CHUNK_F_OPTIONAL, v, 2);
}

void budget_write_previous(void)
{
    struct ptc_budget b;
    const char *note;
    if (!trace_set_budget(&b, &note))
        return;
    b.tsc = rdtsc_();
    pilot_write_budget(&b, note);
}

struct ptc_budget pilot_budget_head(uint64_t wall)
{
    struct ptc_budget b = {.kind = PTC_BUDGET_KIND_OVERHEAD,
                           .source = PTC_BUDGET_SRC_PILOT,
                           .limit = pilot.fraction,
                           .per_event = pilot.have_costs ? pilot.event_ns : 0,
                           .per_count = pilot.have_costs ? pilot.count_ns : 0,
                           .tsc = rdtsc_(),
                           .pilot_ns = wall};
    return b;
}

void pilot_at_end(void)
{
    int expected = PILOT_COUNTING;
    if (!atomic_compare_exchange_strong(&pilot.state, &expected, PILOT_DONE))
        return;
    uint64_t wall = mono_ns() - pilot.wall0, cpu = pilot_cpu_ns() - pilot.cpu0;
    struct ptc_budget b = pilot_budget_head(wall);
    char note[256];
    if (pilot.fork_child)
        snprintf(note, sizeof(note), "a fork child of a process in its pilot: counts only, "
                 "nothing traced");
    else
        snprintf(note, sizeof(note), "the process ended %.0f ms into its pilot, having used "
                 "%.0f ms of CPU time (the pilot needs %llu ms of each): counts only, nothing "
                 "traced (a shorter --pilot, or --from-counts with a record --counts trace)",
                 (double)wall / 1e6, (double)cpu / 1e6, (unsigned long long)pilot.ms);
    b.outcome = PTC_BUDGET_OK;
    pilot_write_budget(&b, note);
}

void pilot_after_fork(void)
{
    if (!rt.pilot)
        return;
    /* the counters start at 0 in the child (mixed_after_fork): so do its segments */
    rt.count_base = NULL;
    rt.count_base_n = 0;
    if (atomic_load(&pilot.state) == PILOT_COUNTING)
        pilot.fork_child = 1;
}
