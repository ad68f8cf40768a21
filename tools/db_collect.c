/* A decoded trace as the runs database's input (db_collect.h). The figures are the
 * decoder's own aggregates, exactly what `ptcall report FILE` shows, and the trace's quality
 * is judged as report judges it (runs.c: complete, lossy). */
#include "db_collect.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_budget.h"
#include "cli_common.h"
#include "cov.h"
#include "runs.h"

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The command line as a shell would need it: words with anything but [A-Za-z0-9_./=:,+-@%]
 * in single quotes (a quote inside as '\''), so that it can be pasted and split back. */
static char *shell_join(const char *const *argv, uint32_t argc)
{
    size_t n = 1;
    for (uint32_t i = 0; i < argc; i++)
        n += 4 * strlen(argv[i]) + 3;
    char *s = malloc(n), *p = s;
    if (!s)
        return NULL;
    for (uint32_t i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (i)
            *p++ = ' ';
        int plain = *a && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                    "0123456789_./=:,+-@%") == strlen(a);
        if (plain) {
            p += sprintf(p, "%s", a);
            continue;
        }
        *p++ = '\'';
        for (; *a; a++) {
            if (*a == '\'') {
                memcpy(p, "'\\''", 4);
                p += 4;
            } else {
                *p++ = *a;
            }
        }
        *p++ = '\'';
    }
    *p = 0;
    return s;
}

/* The object's build id, from its file when that file still holds the map the trace
 * announced (same identity): traces carry the map's identity, not the ELF build id. NULL when
 * the file is gone, rebuilt or has no build id. */
static const char *module_build_id(const struct ptc_module_desc *m, char *out)
{
    uint64_t identity = 0;
    char why[256];
    if (!m->path || m->path[0] != '/' || !m->identity ||
        cov_map_ids(m->path, out, 80, &identity, why, sizeof(why)) || identity != m->identity ||
        !out[0])
        return NULL;
    return out;
}

/* BUDGET chunks of source governor: each is one demotion by a budget's governor (after the
 * pilot's choice, the traced functions cost more than the budget over a period). */
static uint64_t governor_budgets(const struct ptc_session *s)
{
    uint64_t n = 0;
    struct ptc_budget_info bi;
    for (uint32_t i = 0; i < ptc_session_num_budgets(s); i++)
        n += ptc_session_budget(s, i, &bi) == 0 && bi.source == PTC_BUDGET_SRC_GOVERNOR;
    return n;
}

int db_collect(struct db_collected *c, struct ptc_session *s, const char *path,
               const char *content_hash, uint64_t bytes)
{
    memset(c, 0, sizeof(*c));
    struct db_run_in *in = &c->in;
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    struct ptc_recording rec;
    ptc_session_recording(s, &rec);
    const struct ptc_module_desc *md;
    size_t nmods = ptc_session_modules(s, &md);

    char abs[PATH_MAX];
    c->trace = strdup(realpath(path, abs) ? abs : path);
    c->mods = calloc(nmods ? nmods : 1, sizeof(*c->mods));
    c->build_ids = calloc(nmods ? nmods : 1, sizeof(*c->build_ids));
    uint32_t nf = ptc_session_num_funcs(s);
    c->funcs = calloc(nf ? nf : 1, sizeof(*c->funcs));
    uint32_t *idx = malloc((nf ? nf : 1) * sizeof(*idx));
    struct ptc_edge *e = NULL;
    size_t ne = ptc_session_edges(s, &e);
    c->edges = ne != (size_t)-1 ? calloc(ne ? ne : 1, sizeof(*c->edges)) : NULL;
    if (rec.has_info && rec.argc)
        c->command = shell_join(rec.argv, rec.argc);
    if (!c->trace || !c->mods || !c->build_ids || !c->funcs || !idx || !c->edges ||
        (rec.has_info && rec.argc && !c->command)) {
        free(idx);
        free(ne != (size_t)-1 ? e : NULL);
        db_collected_free(c);
        return -1;
    }

    in->content_hash = content_hash;
    in->trace = c->trace;
    in->trace_bytes = bytes;
    /* the program: the first traced process's executable, else the first instrumented object,
     * else what was launched */
    const char *prog = rec.first_exe && *rec.first_exe ? rec.first_exe
                       : nmods                         ? md[0].path
                       : rec.has_info && rec.argc      ? rec.argv[0]
                                                       : NULL;
    in->program = prog ? base_name(prog) : "unknown";
    in->program_path = prog && strchr(prog, '/') ? prog : NULL;
    in->command = c->command;
    /* the trace does not say where it was recorded: the host that stores it stands in */
    if (gethostname(c->host, sizeof(c->host) - 1))
        snprintf(c->host, sizeof(c->host), "unknown");
    in->host = c->host;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    in->added_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    in->has_start = rec.created_ns != 0;
    in->start_ns = (int64_t)rec.created_ns;
    in->has_duration = rec.has_end;
    in->duration_ns = (int64_t)rec.wall_ns;
    int ws = (int)t.wait_status;
    if (t.record_end && WIFEXITED(ws)) {
        in->has_exit = 1;
        in->exit_status = WEXITSTATUS(ws);
    } else if (t.record_end && WIFSIGNALED(ws)) {
        in->has_signal = 1;
        in->signal = WTERMSIG(ws);
        in->core_dumped = WCOREDUMP(ws) != 0;
    }
    in->backend = cli_backend_name(t.backend);
    in->time_unit = !t.timed ? "none" : t.has_timebase ? "ns" : "ticks";
    const uint64_t counters[DB_NCOUNTERS] = {
        [DB_C_EVENTS] = t.events,
        [DB_C_WHOLE_CALLS] = t.whole_calls,
        [DB_C_CALLS] = t.calls,
        [DB_C_THREADS] = t.threads,
        [DB_C_PROCESSES] = t.processes,
        [DB_C_GAPS] = t.gaps,
        [DB_C_MISSING_CHUNKS] = t.missing_chunks,
        [DB_C_LOST_EVENTS] = t.lost_events,
        [DB_C_LOST_PT_UNITS] = t.lost_other,
        [DB_C_REPAIRS] = t.repairs,
        [DB_C_UNWOUND] = t.unwound,
        [DB_C_UNMATCHED] = t.unmatched,
        [DB_C_BROKEN_FRAMES] = t.broken_frames,
        [DB_C_OPEN_AT_END] = t.open_at_end,
        [DB_C_BAD_STUBS] = t.bad_stubs,
        [DB_C_FORK_UNKNOWN] = t.fork_unknown,
        [DB_C_LOSSY_THREADS] = t.lossy_threads,
        [DB_C_UNFINISHED_PROCESSES] = t.unfinished_processes,
    };
    memcpy(in->counters, counters, sizeof(counters));
    in->window[DB_W_ENTERED_BEFORE] = t.entered_before;
    in->window[DB_W_STILL_OPEN] = t.still_open;
    in->window[DB_W_WINDOW_THREADS] = t.window_threads;
    struct runs_run r = {.t = t}; /* not salvaged: db add reads whole traces only */
    in->complete = runs_run_complete(&r);
    in->lossy = runs_run_lossy(&r);
    in->timed = t.timed;
    in->total_time = t.total_time;
    struct ptc_selection sel;
    ptc_session_selection(s, &sel);
    if (sel.selected) {
        in->selection = sel.spec;
        in->traced_functions = sel.traced;
    }
    /* within a budget, or counting mode (schema version 6): counted functions and their
     * calls, and the first BUDGET chunk */
    struct ptc_func_states fs;
    ptc_session_func_states(s, &fs);
    in->counted_functions = fs.counted;
    in->counted_calls = fs.calls_counted;
    struct ptc_budget_info bi;
    if (ptc_session_num_budgets(s) && ptc_session_budget(s, 0, &bi) == 0) {
        in->has_budget = 1;
        in->budget_kind = ptc_budget_kind_name(bi.kind);
        in->budget_source = ptc_budget_source_name(bi.source);
        in->budget_outcome = ptc_budget_outcome_name(bi.outcome);
        in->budget_note = bi.note;
        in->budget_limit = bi.limit;
        in->budget_predicted = bi.predicted;
        in->budget_pilot_ns = bi.pilot_ns;
        in->budget_candidates = bi.candidates;
        in->budget_traced = bi.traced;
    }
    /* a budget's governor (schema version 7): the functions it demoted, and its demotions
     * (one BUDGET chunk of source governor each) */
    in->demoted_functions = fs.demoted;
    in->budget_demotions = governor_budgets(s);

    for (size_t i = 0; i < nmods; i++)
        c->mods[i] = (struct db_module_in){md[i].path, md[i].identity, md[i].num_funcs,
                                           module_build_id(&md[i], c->build_ids[i])};
    in->mods = c->mods;
    in->nmods = nmods;
    size_t n = 0;
    for (uint32_t id = 0; id < nf; id++) {
        struct ptc_func_stats st;
        ptc_session_func_stats(s, id, &st);
        idx[id] = UINT32_MAX;
        if (!st.calls && !st.total) /* the rows of ptcall report */
            continue;
        const struct ptc_func_info *fi = ptc_session_func(s, id);
        idx[id] = (uint32_t)n;
        c->funcs[n++] = (struct db_func_in){fi->name, fi->linkage_name, fi->file, fi->module,
                                            fi->line, st.calls, st.total, st.self,
                                            cli_state_word(ptc_session_func_state(s, id)),
                                            ptc_session_func_demoted(s, id)};
    }
    in->funcs = c->funcs;
    in->nfuncs = n;
    size_t m = 0;
    for (size_t i = 0; i < ne; i++)
        if (e[i].caller < nf && e[i].callee < nf && idx[e[i].caller] != UINT32_MAX &&
            idx[e[i].callee] != UINT32_MAX)
            c->edges[m++] = (struct db_edge_in){idx[e[i].caller], idx[e[i].callee], e[i].count};
    in->edges = c->edges;
    in->nedges = m;
    free(e);
    free(idx);
    return 0;
}

void db_collected_free(struct db_collected *c)
{
    free(c->funcs);
    free(c->edges);
    free(c->mods);
    free(c->build_ids);
    free(c->command);
    free(c->trace);
    memset(c, 0, sizeof(*c));
}
