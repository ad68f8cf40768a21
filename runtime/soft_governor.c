/* A budget's governor (docs/runtime.md, *The governor*). The pilot chooses from the calls
 * it counted, a trace set from a previous run's; a program whose start is unlike the rest of
 * its run (a server's idle minutes, a database's schema parse before its queries), or whose
 * load differs from the previous run's, then traces functions that turn hot, and the run
 * exceeds its budget. So after the choice a thread keeps measuring (the pilot's, or a trace
 * set's own): every PTCALL_GOVERNOR_MS it prices the traced functions' calls over the last
 * two periods, from the drain's tallies per stub (one chunk in GOV_SAMPLE, scaled by all
 * chunks' records), at two events each as the pilot's model, and the calls the counters
 * took. When they exceed the budget by more than a tenth, it demotes the traced functions
 * that made the most calls until the window's cost would have been at most nine tenths of
 * it. Two periods, not one: the drain tallies a buffer when it writes it, up to a flush
 * period (50 ms) after its events. A demoted function is counted from then on, so its calls
 * stay exact: its entries in the events before, its counter after.
 *
 * A demotion is announced before any site changes (a BUDGET chunk of source GOVERNOR, then
 * each changed module's MODULE_ARMED and MODULE_COUNTED), so every event after it comes later
 * in the file. Its entry sites jump to their counting trampolines first; its exits stay
 * armed for GRACE_NS, so calls in flight return in the trace, and are disarmed after. An
 * exit of a call entered after the switch (during the grace) is one readers ignore:
 * docs/trace-format.md 4.20. Demotion only: a function is never traced again. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "ptc_budget.h"
#include "soft_internal.h"

#define GRACE_NS 20000000u /* 20 ms: calls in flight at a demotion return meanwhile */

struct gov_func {
    struct object *o; /* its object, */
    uint32_t j;       /* its index there (o->fstate) */
    uint64_t k;       /* its counter index (first_counter + j): ties are broken by it */
    uint64_t entries; /* over the window */
};

/* A window of the last two looks: [0] the older, [1] the newer */
struct governor {
    uint64_t *tally[2], tally_n[2]; /* the drain's tallies, per stub id */
    uint64_t all[2], sampled[2];    /* the drain's records, of all chunks and of the tallied */
    uint64_t *count[2], count_n[2]; /* the counters */
    uint64_t wall[2], cpu[2];
    struct gov_func *f;
    size_t fcap;
};

static void sleep_ns(uint64_t ns)
{
    struct timespec t = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&t, NULL);
}

static void settle(void);

/* A fork child during a demotion's grace: no governor thread follows it there, so it settles
 * at once (the child is one thread, reg_mu new, lifecycle's fork handler done): the demoted
 * functions' exits disarmed before the child runs on. A call in flight on the forking thread
 * then ends without its exit, which readers take as the parent's (4.20). */
static void governor_after_fork(void)
{
    if (rt.gov_tally && !atomic_load(&rt.finishing))
        settle();
}

int governor_prepare(void)
{
    if (!pilot.govern_ms || !pilot.have_costs)
        return 0;
    uint64_t *t = map_anon((size_t)GOV_TALLY_MAX * sizeof(uint64_t)); /* touched as used */
    if (!t) {
        warn("ptcall: --overhead %s%%: out of memory for the governor's tallies: the pilot's "
             "choice stays for the whole run", pilot.pct_text);
        return -1;
    }
    __atomic_store_n(&rt.gov_tally, t, __ATOMIC_RELEASE);
    pthread_atfork(NULL, NULL, governor_after_fork); /* after lifecycle's: registered later */
    return 0;
}

/* Grows *a (n entries) to at least want zeroed entries. 0, or -1 when out of memory. */
static int grow(uint64_t **a, uint64_t *n, uint64_t want)
{
    if (want <= *n)
        return 0;
    uint64_t *b = map_anon((size_t)want * sizeof(uint64_t));
    if (!b)
        return -1;
    if (*a) {
        memcpy(b, *a, (size_t)*n * sizeof(uint64_t));
        munmap(*a, (size_t)*n * sizeof(uint64_t));
    }
    *a = b;
    *n = want;
    return 0;
}

/* The traced functions' entries over the window, from the tallies of their entry stubs (a
 * traced function's entry slot keeps its counter index in cidx); the window moves on.
 * Caller holds reg_mu. */
static size_t traced_entries(struct governor *g)
{
    size_t n = 0;
    uint64_t ids = rt.next_stub_id < GOV_TALLY_MAX ? rt.next_stub_id : GOV_TALLY_MAX;
    if (grow(&g->tally[0], &g->tally_n[0], ids) < 0 || grow(&g->tally[1], &g->tally_n[1], ids) < 0)
        return 0;
    uint32_t nobj = atomic_load(&rt.nobjs);
    for (uint32_t i = 0; i < nobj; i++) {
        struct object *o = rt.objs[i];
        /* without counting trampolines (no room near its code) its functions cannot be
         * demoted, and cost what they cost */
        if (!o->num_funcs || !o->fstate || !o->cidx || !o->count_tr.base ||
            !atomic_load(&o->live))
            continue;
        size_t nslots = (size_t)((o->stubs_end - o->stubs_start) / PTCALL_STUB_STRIDE);
        for (size_t s = 0; s < nslots; s++) {
            uint32_t k = o->cidx[s], id = o->ids[s];
            if (k == UINT32_MAX || id >= ids || k < o->first_counter)
                continue;
            uint64_t j = k - o->first_counter;
            uint64_t now = __atomic_load_n(&rt.gov_tally[id], __ATOMIC_RELAXED);
            uint64_t d = now - g->tally[0][id];
            g->tally[0][id] = g->tally[1][id];
            g->tally[1][id] = now;
            if (j >= o->total_funcs || !(o->fstate[j] & MIXED_F_TRACED))
                continue;
            if (n == g->fcap) {
                size_t cap = g->fcap ? 2 * g->fcap : 256;
                struct gov_func *nf = realloc(g->f, cap * sizeof(*nf));
                if (!nf)
                    return n;
                g->f = nf;
                g->fcap = cap;
            }
            g->f[n++] = (struct gov_func){.o = o, .j = (uint32_t)j, .k = k, .entries = d};
        }
    }
    return n;
}

/* The counted calls over the window (every counter; a traced function's stands still); the
 * window moves on */
static uint64_t counted_calls(struct governor *g)
{
    uint64_t n = counters_in_use();
    if (n > COUNTERS_MAX || grow(&g->count[0], &g->count_n[0], n) < 0 ||
        grow(&g->count[1], &g->count_n[1], n) < 0)
        return 0;
    uint64_t sum = 0;
    for (uint64_t k = 0; k < n; k++) {
        uint64_t now = __atomic_load_n(&ptc_counters[k], __ATOMIC_RELAXED);
        sum += now - g->count[0][k];
        g->count[0][k] = g->count[1][k];
        g->count[1][k] = now;
    }
    return sum;
}

static int by_entries_desc(const void *a, const void *b)
{
    const struct gov_func *x = a, *y = b;
    if (x->entries != y->entries)
        return x->entries < y->entries ? 1 : -1;
    return x->k < y->k ? -1 : x->k > y->k;
}

/* Whether the latest demotion changed one of o's functions */
static int object_changed(const struct object *o)
{
    for (uint32_t j = 0; o->fstate && j < o->total_funcs; j++)
        if (o->fstate[j] & MIXED_F_CHANGED)
            return 1;
    return 0;
}

/* Demotes g->f[0..n): announces it, then switches their entries to counting; exits stay
 * armed (MIXED_F_DEMOTING) until governor_settle. Caller holds reg_mu. */
static void demote(struct governor *g, size_t n, const struct ptc_budget *b, const char *note)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t *st = &g->f[i].o->fstate[g->f[i].j];
        *st = (uint8_t)((*st & ~(MIXED_F_CHOSEN | MIXED_F_TRACED)) | MIXED_F_COUNTED |
                        MIXED_F_DEMOTING | MIXED_F_CHANGED | MIXED_F_DEMOTED);
    }
    pilot_write_budget(b, note);
    uint32_t nobj = atomic_load(&rt.nobjs);
    for (uint32_t i = 0; i < nobj; i++)
        if (object_changed(rt.objs[i]) && atomic_load(&rt.objs[i]->live))
            mixed_write_module_chunks(rt.objs[i]);
    for (uint32_t i = 0; i < nobj; i++)
        if (object_changed(rt.objs[i]))
            (void)object_rearm(rt.objs[i]); /* says what it could not do */
}

/* After the grace: the demoted functions' exits disarmed. Caller holds reg_mu. */
static void settle(void)
{
    uint32_t nobj = atomic_load(&rt.nobjs);
    for (uint32_t i = 0; i < nobj; i++) {
        struct object *o = rt.objs[i];
        int changed = object_changed(o);
        for (uint32_t j = 0; o->fstate && j < o->total_funcs; j++)
            o->fstate[j] &= (uint8_t)~(MIXED_F_DEMOTING | MIXED_F_CHANGED);
        if (changed)
            (void)object_rearm(o);
    }
}

/* The window starts again at the newest look: after a demotion, what came before it is no
 * longer what the traced set costs */
static void window_restart(struct governor *g)
{
    if (g->tally_n[1])
        memcpy(g->tally[0], g->tally[1], (size_t)g->tally_n[1] * sizeof(uint64_t));
    if (g->count_n[1])
        memcpy(g->count[0], g->count[1], (size_t)g->count_n[1] * sizeof(uint64_t));
    g->all[0] = g->all[1];
    g->sampled[0] = g->sampled[1];
    g->wall[0] = g->wall[1];
    g->cpu[0] = g->cpu[1];
}

/* One look: 1 when it demoted (the caller settles after the grace), else 0. Caller holds
 * reg_mu. */
static int look(struct governor *g, const struct ptc_budget_result *chosen)
{
    uint64_t wall = mono_ns(), cpu = pilot_cpu_ns();
    uint64_t dwall = wall - g->wall[0], dcpu = cpu - g->cpu[0];
    g->wall[0] = g->wall[1];
    g->cpu[0] = g->cpu[1];
    g->wall[1] = wall;
    g->cpu[1] = cpu;
    size_t n = traced_entries(g);
    uint64_t counted = counted_calls(g);
    uint64_t all = __atomic_load_n(&rt.gov_all, __ATOMIC_RELAXED);
    uint64_t sampled = __atomic_load_n(&rt.gov_sampled, __ATOMIC_RELAXED);
    uint64_t dall = all - g->all[0], dsampled = sampled - g->sampled[0];
    g->all[0] = g->all[1];
    g->sampled[0] = g->sampled[1];
    g->all[1] = all;
    g->sampled[1] = sampled;
    if (!n || dcpu < 1000000u || !dsampled) /* nothing traced or tallied, or an idle period */
        return 0;
    /* the tallied chunks' calls, scaled to all the window's records */
    double scale = (double)dall / (double)dsampled;
    for (size_t i = 0; i < n; i++)
        g->f[i].entries = (uint64_t)((double)g->f[i].entries * scale + 0.5);
    double budget = pilot.fraction * (double)dcpu;
    double per_traced = 2 * pilot.event_ns, per_count = pilot.count_ns;
    uint64_t entries = 0;
    for (size_t i = 0; i < n; i++)
        entries += g->f[i].entries;
    double cost = (double)entries * per_traced + (double)counted * per_count;
    if (rt.debug)
        warn("ptcall[%d]: governor: %zu traced functions, %llu calls, %llu counted, %.2f %% of "
             "%.0f ms CPU", (int)getpid(), n, (unsigned long long)entries,
             (unsigned long long)counted, 100.0 * cost / (double)dcpu, (double)dcpu / 1e6);
    if (cost <= 1.1 * budget)
        return 0;
    qsort(g->f, n, sizeof(*g->f), by_entries_desc);
    size_t demoted = 0;
    double after = cost;
    while (demoted < n && after > 0.9 * budget && g->f[demoted].entries) {
        after -= (double)g->f[demoted].entries * (per_traced - per_count);
        demoted++;
    }
    if (!demoted)
        return 0;
    struct ptc_budget b = pilot_budget_head(dwall);
    b.source = PTC_BUDGET_SRC_GOVERNOR;
    b.predicted = after / (double)dcpu;
    b.candidates = chosen->candidates;
    b.traced = n - demoted;
    b.calls_total = entries + counted;
    uint64_t kept = 0;
    for (size_t i = demoted; i < n; i++)
        kept += g->f[i].entries;
    b.calls_traced = kept;
    b.outcome = after > budget ? PTC_BUDGET_BELOW_COUNTING : PTC_BUDGET_OK;
    char note[320];
    snprintf(note, sizeof(note), "governor: over %.0f ms (%.0f ms CPU) the traced functions' "
             "%llu calls and %llu counted calls cost %.2f %% of CPU time, more than %s %%: "
             "%zu of %zu traced functions counted from now on (%.1f %% of those calls), "
             "predicted %.2f %%",
             (double)dwall / 1e6, (double)dcpu / 1e6, (unsigned long long)entries,
             (unsigned long long)counted, 100.0 * cost / (double)dcpu, pilot.pct_text, demoted,
             n, entries ? 100.0 * (double)(entries - kept) / (double)entries : 0.0,
             100.0 * after / (double)dcpu);
    demote(g, demoted, &b, note);
    window_restart(g);
    if (rt.debug)
        warn("ptcall[%d]: %s", (int)getpid(), note);
    return 1;
}

void governor_run(const struct ptc_budget_result *chosen)
{
    if (!rt.gov_tally || !chosen->traced)
        return;
    struct governor g = {0};
    pthread_mutex_lock(&rt.reg_mu);
    g.wall[0] = g.wall[1] = mono_ns();
    g.cpu[0] = g.cpu[1] = pilot_cpu_ns();
    (void)traced_entries(&g); /* the starting points, in both */
    (void)counted_calls(&g);
    g.all[1] = __atomic_load_n(&rt.gov_all, __ATOMIC_RELAXED);
    g.sampled[1] = __atomic_load_n(&rt.gov_sampled, __ATOMIC_RELAXED);
    window_restart(&g);
    pthread_mutex_unlock(&rt.reg_mu);
    uint64_t period = pilot.govern_ms * 1000000u;
    while (!atomic_load(&rt.finishing)) {
        for (uint64_t slept = 0; slept < period && !atomic_load(&rt.finishing);
             slept += 20000000u)
            sleep_ns(period - slept < 20000000u ? period - slept : 20000000u);
        pthread_mutex_lock(&rt.reg_mu);
        int settle_after = !atomic_load(&rt.finishing) && look(&g, chosen);
        pthread_mutex_unlock(&rt.reg_mu);
        if (!settle_after)
            continue;
        sleep_ns(GRACE_NS);
        pthread_mutex_lock(&rt.reg_mu);
        if (!atomic_load(&rt.finishing))
            settle();
        pthread_mutex_unlock(&rt.reg_mu);
    }
    free(g.f);
    for (int i = 0; i < 2; i++) {
        if (g.tally[i])
            munmap(g.tally[i], (size_t)g.tally_n[i] * sizeof(uint64_t));
        if (g.count[i])
            munmap(g.count[i], (size_t)g.count_n[i] * sizeof(uint64_t));
    }
}

void wait_until_active(void)
{
    /* nothing registered yet (a program whose objects register late, or never: a library
     * of the program loaded with ptcall but nothing instrumented): wait for it, from 10 ms
     * up to one look every 500 ms, so a process that never registers is not woken 100
     * times a second for its whole life */
    uint64_t wait_ns = 10000000u;
    while (!atomic_load(&rt.active) && !atomic_load(&rt.finishing)) {
        sleep_ns(wait_ns);
        if (wait_ns < 500000000u)
            wait_ns = wait_ns * 2 > 500000000u ? 500000000u : wait_ns * 2;
    }
}

/* A governed trace set's thread: from the first registration on, as after a pilot */
static void *set_governor_main(void *arg)
{
    (void)arg;
    block_all_signals(NULL);
    ptc_tls.state = TS_IGNORE; /* instrumented code reached from here is not traced */
    prctl(PR_SET_NAME, "ptcall-governor");
    wait_until_active();
    struct ptc_budget_result r = {.candidates = pilot.set_candidates, .traced = pilot.set_traced};
    governor_run(&r);
    return NULL;
}

int budget_thread_start(void *(*fn)(void *))
{
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 << 10);
    sigset_t old;
    block_all_signals(&old);
    pthread_t t;
    int e = pthread_create(&t, &a, fn, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
    return e;
}

int governor_start(void)
{
    if (governor_prepare() < 0 || !rt.gov_tally)
        return -1;
    int e = budget_thread_start(set_governor_main);
    if (e) {
        warn("ptcall: cannot start the budget's governor thread (%s): the trace set's choice "
             "stays for the whole run", strerror(e));
        return -1;
    }
    return 0;
}
