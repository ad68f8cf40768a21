/* A budget's pilot (docs/runtime.md, *Tracing within a budget*): with PTCALL_OVERHEAD=PCT the
 * process starts with every candidate counted (soft_mixed.c) and nothing traced. Once
 * PTCALL_PILOT_MS of wall time have passed and the process has used as much CPU time (so an
 * idle server's pilot waits for its work), a thread of the runtime takes the counters, asks
 * ptc_budget_choose which functions fit PCT % of the CPU time the pilot took at the measured
 * costs (PTCALL_COSTS), writes the pilot's COUNTS segment and a BUDGET chunk, and switches
 * the chosen functions' sites from their counting trampolines to their stubs while the
 * program runs. The others stay counted, so every function's calls stay exact: the pilot's
 * segment, later segments (the counters minus the pilot's, never reset, so no increment
 * falls between them) and the traced functions' entries add up. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "ptc_budget.h"
#include "soft_internal.h"

/* The choice, under reg_mu: counters taken, chosen, written, armed. The pilot's wall and CPU
 * time are read right after the counters are copied: read at the last poll instead, a pilot
 * thread descheduled before it took reg_mu (a loaded machine) let the program count on
 * against a CPU time that stood still, and counting seemed to cost twice what it does. */
static void choose_and_arm(struct ptc_budget_result *out)
{
    uint64_t n = counters_in_use();
    size_t bytes = (size_t)(n ? n : 1) * 8;
    uint64_t *base = map_anon(bytes);
    struct ptc_budget_func *f = map_anon((size_t)(n ? n : 1) * sizeof(*f));
    if (!base || !f) {
        warn("ptcall: out of memory at the end of the budget's pilot: every function stays "
             "counted, none traced");
        if (base)
            munmap(base, bytes);
        if (f)
            munmap(f, (size_t)(n ? n : 1) * sizeof(*f));
        return;
    }
    memcpy(base, ptc_counters, (size_t)n * 8);
    uint64_t cpu = pilot_cpu_ns() - pilot.cpu0, wall = mono_ns() - pilot.wall0;
    uint32_t nobj = atomic_load(&rt.nobjs);
    for (uint32_t i = 0; i < nobj; i++) {
        const struct object *o = rt.objs[i];
        if (!o->num_funcs || !o->fstate || !atomic_load(&o->live))
            continue;
        for (uint32_t j = 0; j < o->num_funcs && j < o->total_funcs; j++) {
            uint64_t k = o->first_counter + j;
            f[k].calls = base[k];
            f[k].events_per_call = 2; /* leaves whose exit stays unarmed cost less: an over-
                                          estimate, on the budget's safe side */
            f[k].flags = (o->fstate[j] & MIXED_F_COUNTED) ? PTC_BUDGET_F_CANDIDATE : 0;
        }
    }
    rt.count_base_n = n;
    rt.count_base = base;
    counts_write_segment(PTC_COUNTS_F_PILOT, "pilot");
    struct ptc_budget b = pilot_budget_head(wall);
    struct ptc_budget_model m = {.per_event = pilot.event_ns, .per_count = pilot.count_ns,
                                 .budget = pilot.fraction * (double)cpu};
    struct ptc_budget_result r;
    char note[512];
    if (!pilot.have_costs || ptc_budget_choose(&m, f, (size_t)n, &r) != 0) {
        memset(&r, 0, sizeof(r));
        r.outcome = PTC_BUDGET_BELOW_COUNTING;
        snprintf(note, sizeof(note), "%s (ptcall calibrate --env prints it): no cost model, "
                 "nothing traced, every function counted",
                 pilot.have_costs ? "the choice failed" : pilot.costs_why);
        warn("ptcall: --overhead %s%%: %s", pilot.pct_text, note);
    } else if (r.outcome == PTC_BUDGET_BELOW_COUNTING) {
        snprintf(note, sizeof(note), "counting alone costs %.2f %% of the pilot's CPU time, "
                 "more than %s %%: nothing traced, every function counted",
                 cpu ? 100.0 * r.cost_counting / (double)cpu : 0.0, pilot.pct_text);
    } else {
        snprintf(note, sizeof(note), "pilot %.0f ms (%.0f ms CPU): %zu of %zu functions traced "
                 "(%.1f %% of their %llu calls), predicted %.2f %% of CPU time",
                 (double)wall / 1e6, (double)cpu / 1e6, r.traced, r.candidates,
                 r.calls_total ? 100.0 * (double)r.calls_traced / (double)r.calls_total : 0.0,
                 (unsigned long long)r.calls_total,
                 cpu ? 100.0 * r.cost_chosen / (double)cpu : 0.0);
    }
    b.predicted = cpu ? r.cost_chosen / (double)cpu : 0;
    b.candidates = r.candidates;
    b.traced = r.traced;
    b.calls_total = r.calls_total;
    b.calls_traced = r.calls_traced;
    b.outcome = (uint32_t)r.outcome;
    /* the chunk's tsc starts the traced part: events after it may begin mid-stack */
    pilot_write_budget(&b, note);
    *out = r;
    if (r.traced && governor_prepare() < 0)
        out->traced = 0; /* no governor: it said so */
    if (r.traced) {
        for (uint32_t i = 0; i < nobj; i++) {
            struct object *o = rt.objs[i];
            if (!o->num_funcs || !o->fstate || !atomic_load(&o->live))
                continue;
            for (uint32_t j = 0; j < o->num_funcs && j < o->total_funcs; j++)
                if (f[o->first_counter + j].flags & PTC_BUDGET_F_TRACED)
                    o->fstate[j] |= MIXED_F_CHOSEN;
            if (object_rearm(o) == 0)
                mixed_write_module_chunks(o);
        }
    }
    munmap(f, (size_t)(n ? n : 1) * sizeof(*f));
}

static void *pilot_main(void *arg)
{
    (void)arg;
    block_all_signals(NULL);
    ptc_tls.state = TS_IGNORE; /* instrumented code reached from here is not traced */
    prctl(PR_SET_NAME, "ptcall-pilot");
    uint64_t need = pilot.ms * 1000000u;
    uint64_t step = need / 10 < 20000000u ? (need / 10 ? need / 10 : 1000000u) : 20000000u;
    for (;;) {
        struct timespec t = {(time_t)(step / 1000000000u), (long)(step % 1000000000u)};
        nanosleep(&t, NULL);
        if (atomic_load(&rt.finishing))
            return NULL;
        if (mono_ns() - pilot.wall0 >= need && pilot_cpu_ns() - pilot.cpu0 >= need)
            break;
    }
    wait_until_active();
    struct ptc_budget_result r = {0};
    pthread_mutex_lock(&rt.reg_mu);
    if (!atomic_load(&rt.finishing) && atomic_load(&pilot.state) == PILOT_COUNTING) {
        choose_and_arm(&r);
        atomic_store(&pilot.state, PILOT_DONE);
    }
    pthread_mutex_unlock(&rt.reg_mu);
    governor_run(&r); /* returns at once without a governor */
    return NULL;
}

/* Started with the library (as the control thread is, soft_ctl.c), above registration: the
 * pilot's clock runs from the process's start, and the thread chooses once tracing is
 * active */
__attribute__((constructor(103))) static void pilot_at_start(void)
{
    runtime_init();
    if (rt.enabled && rt.pilot)
        (void)pilot_start(); /* on failure it says so, and every candidate stays counted */
    else if (rt.enabled && rt.gov_set)
        (void)governor_start(); /* on failure it says so, and the set's choice stays */
}

int pilot_start(void)
{
    pilot.wall0 = mono_ns();
    pilot.cpu0 = pilot_cpu_ns();
    int r = budget_thread_start(pilot_main);
    if (r) {
        warn("ptcall: cannot start the budget's pilot thread (%s): every function stays "
             "counted, none traced", strerror(r));
        return -1;
    }
    return 0;
}

