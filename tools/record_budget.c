/* `ptcall record --overhead PCT` (budget.h; docs/usage.md, Tracing within a budget): the
 * budget's options checked against the others, the costs found (or measured), and either a
 * pilot asked of the runtime (PTCALL_OVERHEAD, PTCALL_PILOT_MS, PTCALL_COSTS) or, from a
 * previous run's counts, the choice made here with ptc_budget_choose and handed over as a
 * PTCALL_TRACE_SET file. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "budget.h"
#include "cov.h"
#include "db_query.h"
#include "db_schema.h"
#include "options.h"
#include "ptc_budget.h"
#include "ptc_record_options.h"
#include "ptc_select.h"
#include "ptcall/decode.h"
#include "ptcall/trace_format.h"

#define TRACE_SET_MAGIC "ptcall-trace-set 1\n"
#define TRACE_SET_MINE PTC_TRACE_SET_WRITTEN_BY "ptcall record --overhead"

static const char *const budget_vars[] = {"PTCALL_OVERHEAD", "PTCALL_PILOT_MS", "PTCALL_COSTS",
                                          "PTCALL_TRACE_SET", "PTCALL_GOVERNOR_MS"};

/* The timing mode whose event cost applies (ptc_costs_mode_names). */
/* The timing mode whose figure prices an event: the ticker's plain load is cheaper than the
 * timed mode's rdtsc, so a budget with --clock ticker may trace more. */
static const char *mode_in_use(const struct record_options *o)
{
    return o->clock_ns ? "ticker" : o->timed ? "timed" : "untimed";
}

/* The figures of the event and the counted call in use (--atomic-counts: locked), or 1
 * after saying which was not measured. */
static int costs_in_use(const struct record_options *o, const struct ptc_costs *c,
                        const struct ptc_cost_fig **ev, const struct ptc_cost_fig **cnt)
{
    *ev = ptc_costs_mode(c, mode_in_use(o));
    *cnt = ptc_costs_count(c, o->count_atomic);
    if (*ev && *cnt)
        return 0;
    fprintf(stderr, "ptcall: the cost of %s was not measured (ptcall calibrate says why): no "
                    "budget can be chosen\n",
            !*ev ? mode_in_use(o) : o->count_atomic ? "a locked count" : "a count");
    return 1;
}

static void date_of(const struct ptc_costs *c, char *out, size_t n)
{
    snprintf(out, n, "%.10s", c->calibrated);
}

/* ---- from a previous run's counts ------------------------------------------------------ */

/* The trace set file next to the output: created new, or one ptcall wrote replaced. 0 with
 * the path in out, or -1 after an error line. */
static int open_trace_set(const char *trace_path, char *out, size_t n, FILE **f)
{
    char abs[PATH_MAX];
    if (trace_path[0] != '/') {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof(cwd)) || snprintf(abs, sizeof(abs), "%s/%s", cwd, trace_path) >=
                                             (int)sizeof(abs)) {
            fprintf(stderr, "ptcall: cannot make an absolute path of %s; give -o an absolute "
                            "path\n", trace_path);
            return -1;
        }
    } else {
        snprintf(abs, sizeof(abs), "%s", trace_path);
    }
    if (snprintf(out, n, "%s.trace-set", abs) >= (int)n) {
        fprintf(stderr, "ptcall: output path too long; give -o a shorter path\n");
        return -1;
    }
    int fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 && errno == EEXIST) {
        /* an earlier one of ours (its first two lines say so) is replaced; nothing else */
        char head[128] = "";
        struct stat st;
        int rfd = open(out, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        ssize_t k = rfd >= 0 && fstat(rfd, &st) == 0 && S_ISREG(st.st_mode)
                        ? read(rfd, head, sizeof(head) - 1) : -1;
        if (rfd >= 0)
            close(rfd);
        head[k > 0 ? k : 0] = 0;
        if (strncmp(head, TRACE_SET_MAGIC TRACE_SET_MINE, strlen(TRACE_SET_MAGIC TRACE_SET_MINE))) {
            fprintf(stderr, "ptcall: %s exists and was not written by ptcall record: left as it "
                            "is; choose another -o, or move it away\n", out);
            return -1;
        }
        fd = open(out, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
    }
    if (fd < 0 || !(*f = fdopen(fd, "w"))) {
        fprintf(stderr, "ptcall: cannot write %s: %s; choose another -o\n", out, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return 0;
}

/* The previous run's functions, as either source gives them. */
struct prev_funcs {
    size_t n;
    const char **name, **linkage;
    uint64_t *calls;
    uint64_t cpu_ns;           /* the span: the run's CPU time (a trace of 2.7 or later) */
    uint64_t wall_ns, threads; /* else wall time x threads (the database keeps no CPU time) */
    char what[PATH_MAX + 64];  /* "the counts of TRACE", "run 12 of DB" */
};

static int prev_alloc(struct prev_funcs *p, size_t n)
{
    p->n = n;
    p->name = calloc(n ? n : 1, sizeof(*p->name));
    p->linkage = calloc(n ? n : 1, sizeof(*p->linkage));
    p->calls = calloc(n ? n : 1, sizeof(*p->calls));
    return p->name && p->linkage && p->calls ? 0 : -1;
}

static void prev_free(struct prev_funcs *p)
{
    free(p->name);
    free(p->linkage);
    free(p->calls);
}

/* The choice from p, written as a trace set and passed on. 0, or 1 after an error line. */
static int choose_and_pass(const struct cli_values *v, const struct record_options *o,
                           const struct ptc_costs *c, const char *trace_path,
                           const struct prev_funcs *p)
{
    double pct = v->record.overhead;
    const struct ptc_cost_fig *ev, *cnt;
    if (costs_in_use(o, c, &ev, &cnt))
        return 1;
    if (!p->wall_ns) {
        fprintf(stderr, "ptcall: %s: no wall time to budget against (the run did not end): "
                        "record --counts again to its end\n", p->what);
        return 1;
    }
    struct ptc_budget_func *f = calloc(p->n ? p->n : 1, sizeof(*f));
    if (!f) {
        fprintf(stderr, "ptcall: out of memory\n");
        return 1;
    }
    struct ptc_select sel;
    memset(&sel, 0, sizeof(sel));
    for (int i = 0; i < o->num_only && i < PTC_SELECT_MAX; i++)
        sel.only[sel.nonly++] = o->only[i];
    for (int i = 0; i < o->num_skip && i < PTC_SELECT_MAX; i++)
        sel.skip[sel.nskip++] = o->skip[i];
    for (size_t i = 0; i < p->n; i++) {
        f[i].calls = p->calls[i];
        /* neither source says which functions are leaves: two events per call, the timed
         * figure (an upper bound untimed, where a leaf's call is one record) */
        f[i].events_per_call = 2;
        f[i].flags = ptc_select_func(&sel, p->name[i], p->linkage[i]) ? PTC_BUDGET_F_CANDIDATE : 0;
    }
    /* the budget is a share of the program's CPU time, as the pilot measures it; wall time
     * x threads counts a thread's waits as work, and lets the choice trace too much */
    double span_ns = p->cpu_ns ? (double)p->cpu_ns : (double)p->wall_ns * (double)p->threads;
    char span[96];
    if (p->cpu_ns)
        snprintf(span, sizeof(span), "its CPU time %.2f s", (double)p->cpu_ns / 1e9);
    else
        snprintf(span, sizeof(span), "its wall time %.2f s x %llu thread%s; no CPU time is "
                 "recorded", (double)p->wall_ns / 1e9, (unsigned long long)p->threads,
                 p->threads == 1 ? "" : "s");
    struct ptc_budget_model m = {.per_event = ev->ns, .per_count = cnt->ns,
                                 .budget = pct / 100 * span_ns};
    struct ptc_budget_result res;
    if (ptc_budget_choose(&m, f, p->n, &res) != 0) {
        fprintf(stderr, "ptcall: out of memory\n");
        free(f);
        return 1;
    }
    char set_path[PATH_MAX + 16];
    FILE *out = NULL;
    if (open_trace_set(trace_path, set_path, sizeof(set_path), &out) != 0) {
        free(f);
        return 1;
    }
    fprintf(out, TRACE_SET_MAGIC TRACE_SET_MINE " %g from %s: %zu of %zu candidates traced\n",
            pct, p->what, res.traced, res.candidates);
    /* the choice, for the runtime's BUDGET chunk (source PREVIOUS; docs/runtime.md, the
     * trace set's format): a comment to any other reader */
    fprintf(out, PTC_TRACE_SET_BUDGET "limit=%.17g per_event=%.17g per_count=%.17g predicted=%.17g "
                 "candidates=%zu traced=%zu calls_total=%llu calls_traced=%llu outcome=%d\n",
            pct / 100, ev->ns, cnt->ns, span_ns > 0 ? res.cost_chosen / span_ns : 0,
            res.candidates, res.traced, (unsigned long long)res.calls_total,
            (unsigned long long)res.calls_traced, (int)res.outcome);
    for (size_t i = 0; i < p->n; i++)
        if (f[i].flags & PTC_BUDGET_F_TRACED)
            fprintf(out, "%s\n", p->linkage[i] && *p->linkage[i] ? p->linkage[i] : p->name[i]);
    free(f);
    if (fclose(out) != 0) {
        fprintf(stderr, "ptcall: cannot write %s: %s; choose another -o\n", set_path,
                strerror(errno));
        return 1;
    }
    setenv("PTCALL_TRACE_SET", set_path, 1);
    char date[16];
    date_of(c, date, sizeof(date));
    if (res.outcome == PTC_BUDGET_BELOW_COUNTING)
        fprintf(stderr, "ptcall: --overhead %g%%: counting alone costs %.2f %% of the time of %s: "
                        "every function counted, none traced\n",
                pct, res.cost_counting / span_ns * 100, p->what);
    if (!o->quiet)
        fprintf(stderr, "ptcall: --overhead %g%%: from %s (%s): %zu of %zu functions traced "
                        "(%.1f %% of %llu calls), predicted %.2f %%, costs %s %.1f ns/event, "
                        "count%s %.1f ns/call (calibrated %s); trace set %s\n",
                pct, p->what, span, res.traced, res.candidates,
                res.calls_total ? 100.0 * (double)res.calls_traced / (double)res.calls_total : 0,
                (unsigned long long)res.calls_total, res.cost_chosen / span_ns * 100,
                mode_in_use(o), ev->ns, o->count_atomic ? " (locked)" : "", cnt->ns, date,
                set_path);
    return 0;
}

/* The program's map identity (its build, as the trace's MODULE chunks and the database's
 * run_modules name it). 0, or -1 after an error line. */
static int program_identity(const char *opt, const char *src, const char *exe, uint64_t *ident)
{
    char build_id[80], why[PATH_MAX + 200];
    if (cov_map_ids(exe, build_id, sizeof(build_id), ident, why, sizeof(why)) == 0)
        return 0;
    fprintf(stderr, "ptcall: %s %s: cannot read %s's function map (%s): its build cannot be "
                    "checked; give the program's path\n", opt, src, exe, why);
    return -1;
}

/* --from-counts TRACE. 0, or 1 after an error line. */
static int choose_from_counts(const struct cli_values *v, const struct record_options *o,
                              const char *exe, const struct ptc_costs *c, const char *trace_path)
{
    const char *from = v->record.from_counts;
    struct ptc_session *s = ptc_session_new();
    if (!s) {
        fprintf(stderr, "ptcall: out of memory\n");
        return 1;
    }
    int r = ptc_decode_file(s, from, 0);
    if (r < 0) {
        const char *msg = ptc_session_errmsg(s);
        fprintf(stderr, "ptcall: --from-counts %s: %s; give a trace of record --counts\n", from,
                msg && *msg ? msg : ptc_strerror(r < 0 ? -r : PTC_E_IO));
        ptc_session_free(s);
        return 1;
    }
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    if (!t.counts_segments) {
        fprintf(stderr, "ptcall: --from-counts %s: the trace holds no counts (no COUNTS chunk): "
                        "record one with ptcall record --counts, or leave out --from-counts "
                        "for a pilot\n", from);
        ptc_session_free(s);
        return 1;
    }
    /* the same build: the program's map identity must be one of the trace's modules' */
    uint64_t ident = 0;
    if (program_identity("--from-counts", from, exe, &ident) != 0) {
        ptc_session_free(s);
        return 1;
    }
    const struct ptc_module_desc *mods;
    size_t nmods = ptc_session_modules(s, &mods);
    int same = 0;
    for (size_t i = 0; i < nmods; i++)
        same |= mods[i].identity == ident;
    if (!same) {
        fprintf(stderr, "ptcall: --from-counts %s: its counts are of another build than %s "
                        "(map identity %016llx is in none of its modules): record --counts of "
                        "this build first\n", from, exe, (unsigned long long)ident);
        ptc_session_free(s);
        return 1;
    }
    struct prev_funcs pf;
    memset(&pf, 0, sizeof(pf));
    uint32_t nf = ptc_session_num_funcs(s);
    if (prev_alloc(&pf, nf) != 0) {
        fprintf(stderr, "ptcall: out of memory\n");
        prev_free(&pf);
        ptc_session_free(s);
        return 1;
    }
    for (uint32_t i = 0; i < nf; i++) {
        const struct ptc_func_info *fi = ptc_session_func(s, i);
        struct ptc_func_stats st;
        ptc_session_func_stats(s, i, &st);
        pf.name[i] = fi->name;
        pf.linkage[i] = fi->linkage_name;
        pf.calls[i] = st.calls;
    }
    struct ptc_recording rec;
    ptc_session_recording(s, &rec);
    pf.wall_ns = rec.wall_ns;
    pf.cpu_ns = rec.cpu_ns;
    pf.threads = t.threads ? t.threads : 1;
    snprintf(pf.what, sizeof(pf.what), "the counts of %s", from);
    r = choose_and_pass(v, o, c, trace_path, &pf);
    prev_free(&pf);
    ptc_session_free(s);
    return r;
}

/* --from-db DB: the newest run of the program's build that traced or counted every function
 * (no --only/--skip), as `db add` stored it. 0, or 1 after an error line. */
static int choose_from_db(const struct cli_values *v, const struct record_options *o,
                          const char *exe, const struct ptc_costs *c, const char *trace_path)
{
    const char *url = v->record.from_db;
    uint64_t ident = 0;
    if (program_identity("--from-db", url, exe, &ident) != 0)
        return 1;
    char want[24];
    snprintf(want, sizeof(want), "%016llx", (unsigned long long)ident);
    struct db d;
    memset(&d, 0, sizeof(d));
    int e = db_open(&d, url, DB_READ);
    if (e) {
        fprintf(stderr, "ptcall: --from-db %s: %s\n", url, d.err);
        db_close(&d);
        return 1;
    }
    struct db_filter flt;
    memset(&flt, 0, sizeof(flt));
    struct db_ids ids = {NULL, 0};
    struct db_run *run = NULL;
    int64_t found = -1;
    e = db_select(&d, &flt, &ids);
    /* newest first; each run's modules say its build */
    for (size_t k = ids.n; !e && k-- > 0 && found < 0;) {
        struct db_ids one = {&ids.v[k], 1};
        struct db_run *rr = NULL;
        if ((e = db_runs_get(&d, &one, 1, &rr)) != 0)
            break;
        int same = 0;
        for (size_t m = 0; m < rr->nmods; m++)
            same |= rr->mods[m].identity && !strcmp(rr->mods[m].identity, want);
        if (same && !rr->selection && rr->has_duration) {
            found = rr->id;
            run = rr;
        } else {
            db_runs_free(rr, 1);
        }
    }
    if (e || found < 0) {
        if (e)
            fprintf(stderr, "ptcall: --from-db %s: %s\n", url, d.err);
        else
            fprintf(stderr, "ptcall: --from-db %s: no run of this build of %s (map identity %s, "
                            "every function traced or counted, with its duration): add one "
                            "with ptcall db add, or use a pilot (leave out --from-db)\n",
                    url, exe, want);
        db_ids_free(&ids);
        db_close(&d);
        return 1;
    }
    struct db_func_out *fn = NULL;
    size_t n = 0;
    struct prev_funcs pf;
    memset(&pf, 0, sizeof(pf));
    int rc = 1;
    e = db_run_functions(&d, found, &fn, &n);
    if (e || prev_alloc(&pf, n) != 0) {
        fprintf(stderr, "ptcall: --from-db %s: %s\n", url, e ? d.err : "out of memory");
    } else {
        for (size_t i = 0; i < n; i++) {
            pf.name[i] = fn[i].name;
            pf.linkage[i] = fn[i].linkage_name;
            pf.calls[i] = fn[i].calls;
        }
        pf.wall_ns = (uint64_t)(run->duration_ns > 0 ? run->duration_ns : 0);
        pf.threads = run->counters[DB_C_THREADS] ? run->counters[DB_C_THREADS] : 1;
        snprintf(pf.what, sizeof(pf.what), "run %lld of %s", (long long)found, url);
        rc = choose_and_pass(v, o, c, trace_path, &pf);
    }
    prev_free(&pf);
    if (fn)
        db_funcs_free(fn, n);
    db_runs_free(run, 1);
    db_ids_free(&ids);
    db_close(&d);
    return rc;
}

/* ---- the options ----------------------------------------------------------------------- */

int record_budget_prepare(const struct cli_values *v, const struct record_options *o,
                          const char *exe, const char *trace_path)
{
    /* what record was told decides, not variables left in the environment */
    const char *from = v->record.from_counts ? "--from-counts" : v->record.from_db ? "--from-db" : NULL;
    if (!v->record.have_overhead) {
        if (from || v->record.have_pilot || v->record.have_governor)
            return cli_usage_error(CMD_RECORD, "%s goes with --overhead PCT (a budget): give one",
                                   from ? from : v->record.have_pilot ? "--pilot" : "--governor");
        return 0; /* the caller's own PTCALL_TRACE_SET (docs/runtime.md) goes through */
    }
    /* --overhead decides them: none of the caller's may mix in */
    for (size_t i = 0; i < sizeof(budget_vars) / sizeof(budget_vars[0]); i++)
        unsetenv(budget_vars[i]);
    double pct = v->record.overhead;
    if (o->backend == RECORD_PT)
        return cli_usage_error(CMD_RECORD, "--overhead is the software backend's budget (CPU "
                                           "time); Intel PT's is --budget RATE[,AUX] (bytes per "
                                           "second): nothing recorded");
    if (o->ring || o->attach_pid)
        return cli_usage_error(CMD_RECORD, "--overhead chooses what a command traces from its "
                                           "start: leave out %s (nothing recorded)",
                               o->ring ? "--ring" : "--pid");
    if (v->record.from_counts && v->record.from_db)
        return cli_usage_error(CMD_RECORD, "--from-counts and --from-db are two sources of "
                                           "previous counts: give one");
    if (o->counts) {
        if (!o->quiet)
            fprintf(stderr, "ptcall: --overhead %g%% with --counts: counting mode counts every "
                            "function and traces none; recording counts only (leave out --counts "
                            "to trace within the budget)\n", pct);
        return 0;
    }
    uint64_t pilot_ms = v->record.pilot_ms;
    if (!from && v->record.have_pilot && !pilot_ms) {
        pilot_ms = 200;
        fprintf(stderr, "ptcall: --overhead %g%% with --pilot 0 and no --from-counts: nothing to "
                        "choose from; using a pilot of %llu ms instead\n",
                pct, (unsigned long long)pilot_ms);
    }
    if (from && v->record.have_pilot && !o->quiet)
        fprintf(stderr, "ptcall: --overhead %g%% %s: the choice comes from previous counts, "
                        "there is no pilot (--pilot ignored)\n", pct, from);
    if (o->num_only && !o->quiet)
        fprintf(stderr, "ptcall: --overhead %g%% with --only: the budget chooses among --only's "
                        "functions which are traced, the rest of them counted; the functions "
                        "--only leaves out are neither\n", pct);
    struct ptc_costs c;
    int measured;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (budget_costs_get(0, o->quiet, &c, &measured) != 0)
        return 1;
    /* a cache entry from before locked counts were measured: measured now */
    if (!measured && o->count_atomic && !ptc_costs_count(&c, 1) &&
        budget_costs_get(1, o->quiet, &c, &measured) != 0)
        return 1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (measured && !o->quiet)
        fprintf(stderr, "ptcall: no costs measured for this machine and libptcall yet: "
                        "calibrated first, in %.1f s (ptcall calibrate)\n",
                (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    /* every source's choice is governed (docs/runtime.md, The governor) */
    char buf[96];
    uint64_t governor_ms = v->record.have_governor ? v->record.governor_ms : 200;
    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)governor_ms);
    setenv("PTCALL_GOVERNOR_MS", buf, 1);
    if (v->record.from_counts)
        return choose_from_counts(v, o, exe, &c, trace_path);
    if (v->record.from_db)
        return choose_from_db(v, o, exe, &c, trace_path);
    const struct ptc_cost_fig *ev, *cnt;
    if (costs_in_use(o, &c, &ev, &cnt))
        return 1;
    snprintf(buf, sizeof(buf), "%g", pct);
    setenv("PTCALL_OVERHEAD", buf, 1);
    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)pilot_ms);
    setenv("PTCALL_PILOT_MS", buf, 1);
    snprintf(buf, sizeof(buf), "event=%.2f,count=%.2f", ev->ns, cnt->ns);
    setenv("PTCALL_COSTS", buf, 1);
    char date[16];
    date_of(&c, date, sizeof(date));
    char gov[48] = "governor off";
    if (governor_ms)
        snprintf(gov, sizeof(gov), "governor every %llu ms", (unsigned long long)governor_ms);
    if (!o->quiet)
        fprintf(stderr, "ptcall: --overhead %g%%: pilot %llu ms, %s, costs %s %.1f "
                        "ns/event, count%s %.1f ns/call (calibrated %s)\n",
                pct, (unsigned long long)pilot_ms, gov, mode_in_use(o), ev->ns,
                o->count_atomic ? " (locked)" : "", cnt->ns, date);
    return 0;
}

void record_budget_finish(const struct cli_values *v, const struct record_options *o,
                          const char *trace_path)
{
    if (!v->record.have_overhead || o->counts)
        return;
    char pct[32];
    snprintf(pct, sizeof(pct), "%g", v->record.overhead);
    /* what each process's pilot chose and its governor did (their BUDGET chunks' notes),
     * after the program's output and even with -q: the budget changed what was recorded. A
     * choice from previous counts was said before the run. */
    struct ptc_reader *r = NULL;
    if (ptc_reader_open(&r, trace_path) != 0) {
        if (r)
            ptc_reader_close(r);
        return;
    }
    struct ptc_chunk c;
    int rc, budgets = 0, processes = 0;
    while ((rc = ptc_reader_next(r, &c)) != 0) {
        if (rc < 0)
            break;
        processes += c.h.type == PTC_CHUNK_PROCESS;
        if (c.h.type != PTC_CHUNK_BUDGET || c.h.payload_size <= sizeof(struct ptc_budget))
            continue;
        budgets++;
        struct ptc_budget b;
        memcpy(&b, c.payload, sizeof(b));
        if (b.source == PTC_BUDGET_SRC_PREVIOUS)
            continue;
        const char *note = (const char *)c.payload + sizeof(struct ptc_budget);
        size_t n = c.h.payload_size - sizeof(struct ptc_budget);
        fprintf(stderr, "ptcall: --overhead %s%%: pid %u: %.*s\n", pct, c.h.pid, (int)n, note);
    }
    ptc_reader_close(r);
    if (processes && !budgets)
        fprintf(stderr, "ptcall: --overhead %s%%: no process of the program wrote its budget's "
                        "choice (not linked with this libptcall?): see ptcall report\n", pct);
}
