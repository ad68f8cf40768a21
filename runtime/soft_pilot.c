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
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "ptc_budget.h"
#include "ptc_env.h"
#include "soft_internal.h"

enum { PILOT_COUNTING = 1, PILOT_DONE = 2 };

static struct {
    _Atomic int state;
    double fraction;         /* PTCALL_OVERHEAD / 100 */
    char pct_text[32];
    double event_ns, count_ns;
    int have_costs;
    char costs_why[160];     /* why PTCALL_COSTS cannot be used */
    uint64_t ms;
    uint64_t wall0, cpu0;    /* at the start */
    int fork_child;          /* a fork child of a process in its pilot */
} pilot;

static uint64_t cpu_ns(void)
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

int pilot_config(void)
{
    const char *pct = NULL, *costs = NULL;
    uint64_t ms = 200;
    char err[256];
    if (ptc_env_get(PTC_ENV_OVERHEAD, NULL, &pct, err, sizeof(err)) < 0 ||
        ptc_env_get(PTC_ENV_PILOT_MS, &ms, NULL, err, sizeof(err)) < 0 ||
        ptc_env_get(PTC_ENV_COSTS, NULL, &costs, err, sizeof(err)) < 0) {
        warn("ptcall: %s: not tracing (docs/runtime.md lists the values)", err);
        return -1;
    }
    if (!pct || !pct[0])
        return 0;
    if (trace_set_path()) {
        warn("ptcall: PTCALL_OVERHEAD is ignored beside PTCALL_TRACE_SET: the set chooses");
        return 0;
    }
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

static void write_budget(const struct ptc_budget *b, const char *note)
{
    struct ptc_budget h = *b;
    h.note_size = (uint32_t)strlen(note) + 1;
    struct iovec v[2] = {{&h, sizeof(h)}, {(void *)note, h.note_size}};
    write_proc_chunk_flags(PTC_CHUNK_BUDGET, PTC_CHUNK_F_OPTIONAL, v, 2);
}

static struct ptc_budget budget_head(uint64_t wall)
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

/* The highest counter index in use + 1 */
static uint64_t counters_in_use(void)
{
    uint64_t n = 0;
    uint32_t nobj = atomic_load(&rt.nobjs);
    for (uint32_t i = 0; i < nobj; i++) {
        const struct object *o = rt.objs[i];
        if (o->num_funcs && o->first_counter + o->num_funcs > n)
            n = o->first_counter + o->num_funcs;
    }
    return n;
}

/* The choice, under reg_mu: counters taken, chosen, written, armed */
static void choose_and_arm(uint64_t wall, uint64_t cpu)
{
    uint64_t n = counters_in_use();
    size_t bytes = (size_t)(n ? n : 1) * 8;
    uint64_t *base = map_anon(bytes);
    struct ptc_budget_func *f = map_anon((size_t)(n ? n : 1) * sizeof(*f));
    if (!base || !f) {
        warn("ptcall: out of memory at the end of the budget's pilot: every function stays "
             "counted, none traced");
        return;
    }
    memcpy(base, ptc_counters, (size_t)n * 8);
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
    struct ptc_budget b = budget_head(wall);
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
        warn("ptcall: --overhead %s%%: %s", pilot.pct_text, note);
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
    write_budget(&b, note);
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
    uint64_t need = pilot.ms * 1000000u, wall = 0, cpu = 0;
    uint64_t step = need / 10 < 20000000u ? (need / 10 ? need / 10 : 1000000u) : 20000000u;
    for (;;) {
        struct timespec t = {(time_t)(step / 1000000000u), (long)(step % 1000000000u)};
        nanosleep(&t, NULL);
        if (atomic_load(&rt.finishing))
            return NULL;
        wall = mono_ns() - pilot.wall0;
        cpu = cpu_ns() - pilot.cpu0;
        if (wall >= need && cpu >= need)
            break;
    }
    pthread_mutex_lock(&rt.reg_mu);
    if (!atomic_load(&rt.finishing) && atomic_load(&pilot.state) == PILOT_COUNTING) {
        choose_and_arm(wall, cpu);
        atomic_store(&pilot.state, PILOT_DONE);
    }
    pthread_mutex_unlock(&rt.reg_mu);
    return NULL;
}

int pilot_start(void)
{
    pilot.wall0 = mono_ns();
    pilot.cpu0 = cpu_ns();
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 << 10);
    sigset_t old;
    block_all_signals(&old);
    pthread_t t;
    int r = pthread_create(&t, &a, pilot_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
    if (r) {
        warn("ptcall: cannot start the budget's pilot thread (%s): every function stays "
             "counted, none traced", strerror(r));
        return -1;
    }
    return 0;
}

void pilot_at_end(void)
{
    int expected = PILOT_COUNTING;
    if (!atomic_compare_exchange_strong(&pilot.state, &expected, PILOT_DONE))
        return;
    uint64_t wall = mono_ns() - pilot.wall0, cpu = cpu_ns() - pilot.cpu0;
    struct ptc_budget b = budget_head(wall);
    char note[256];
    if (pilot.fork_child)
        snprintf(note, sizeof(note), "a fork child of a process in its pilot: counts only, "
                 "nothing traced");
    else
        snprintf(note, sizeof(note), "the process ended %.0f ms into its pilot (%.0f of the "
                 "%llu ms of CPU time it needed): counts only, nothing traced",
                 (double)wall / 1e6, (double)cpu / 1e6, (unsigned long long)pilot.ms);
    b.outcome = PTC_BUDGET_OK;
    write_budget(&b, note);
    if (!pilot.fork_child)
        warn("ptcall: --overhead %s%%: %s (a shorter --pilot, or --from-counts with a record "
             "--counts trace)", pilot.pct_text, note);
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
