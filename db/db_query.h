/* Reading the runs database: choosing runs (tags, program, time, ids), a run's metadata,
 * functions and edges, removing runs, and the hot-function statistics over chosen runs. */
#ifndef PTCALL_DB_QUERY_H
#define PTCALL_DB_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "db_backend.h"
#include "db_schema.h"

/* --runs SPEC: "all", or comma-separated items N, N-M (ids, both ends included) and last:N
 * (the N newest of the runs the other filters keep). */
struct db_runs_spec {
    int all;
    int64_t (*range)[2];
    size_t nrange;
    int64_t last;            /* 0: no last:N */
};
/* Parses spec into *out (free with db_runs_spec_free). 0, or -1 with the reason in err. */
int db_runs_spec_parse(const char *spec, struct db_runs_spec *out, char *err, size_t n);
void db_runs_spec_free(struct db_runs_spec *s);

struct db_filter {
    const char *const *tags; /* "NAME=VALUE" (that tag with that value) or "NAME" (any
                                value): a run must have every one */
    int ntags;
    const char *const *programs; /* globs (fnmatch) matched against the program's name and
                                    path: a run must match one */
    int nprograms;
    int has_since, has_until;
    int64_t since_ns, until_ns;  /* start time in [since, until); runs whose trace does not
                                    say when it started use the time they were added */
    const char *runs;        /* a --runs SPEC; NULL: all */
};

struct db_ids {
    int64_t *v;
    size_t n;
};
/* The ids of the runs f keeps, ascending. 0 or -DB_E_*. */
int db_select(struct db *d, const struct db_filter *f, struct db_ids *out);
void db_ids_free(struct db_ids *ids);

struct db_tag_out {
    char *name, *value;
};
struct db_module_out {
    char *path, *identity; /* identity "" when not known */
    char *build_id;        /* NULL when not known */
    int64_t functions;
};

struct db_run {
    int64_t id;
    char *content_hash, *trace, *program, *program_path, *command, *host, *backend, *time_unit,
        *selection;                                 /* program_path, command, selection: NULL
                                                       when not known / none */
    int64_t trace_bytes, added_ns, start_ns, duration_ns;
    int has_start, has_duration, has_exit, has_signal, exit_status, signal, core_dumped;
    uint64_t counters[DB_NCOUNTERS];
    uint64_t window[DB_NWINDOW]; /* db_window_names (schema 5) */
    int complete, lossy, timed;
    uint64_t total_time;
    int has_traced;
    uint64_t traced_functions, functions, edges;
    /* within a budget (schema 6): counted functions and calls; the first BUDGET chunk's kind,
     * source, limit, predicted cost, outcome and note (has_budget 0: none, texts NULL) */
    uint64_t counted_functions, counted_calls;
    int has_budget;
    char *budget_kind, *budget_source, *budget_outcome, *budget_note;
    double budget_limit, budget_predicted;
    /* a budget's governor (schema 7): functions it demoted (traced, then counted) and its
     * demotions (BUDGET chunks of source governor); 0 in runs added before */
    uint64_t demoted_functions, budget_demotions;
    struct db_tag_out *tags;
    size_t ntags;
    struct db_module_out *mods;                     /* with_modules only */
    size_t nmods;
};
/* The runs ids names, in that order, with their tags (and modules). A missing id is an
 * error naming it: -DB_E_STOP with d->err "no run N". */
int db_runs_get(struct db *d, const struct db_ids *ids, int with_modules, struct db_run **out);
void db_runs_free(struct db_run *v, size_t n);

struct db_func_out {
    int64_t id;              /* in the functions dictionary */
    char *name, *linkage_name, *module, *file; /* module: base name (the key's) */
    char *module_path;       /* db_run_functions: the object's path in that run */
    uint32_t line;
    uint64_t calls, total, self;
    int timed;
    char *state;             /* db_run_functions: "traced", "counted" (schema 6) */
    int demoted;             /* db_run_functions: traced until a budget's governor demoted it,
                                counted after; its state stays "traced" (schema 7) */
};
/* Every function called in run id, in no particular order. */
int db_run_functions(struct db *d, int64_t id, struct db_func_out **out, size_t *n);
void db_funcs_free(struct db_func_out *v, size_t n);

struct db_edge_out {
    int64_t caller, callee;  /* function ids */
    uint64_t calls;
};
int db_run_edges(struct db *d, int64_t id, struct db_edge_out **out, size_t *n);

/* Removes the runs (with their tags, modules, figures and edges) in one transaction: all of
 * them or, when one is not there (-DB_E_STOP, "no run N"), none. */
int db_remove(struct db *d, const struct db_ids *ids);

/* Hot functions over runs. */
enum db_meas { DB_M_CALLS, DB_M_TOTAL, DB_M_SELF, DB_NMEAS };
enum db_stat {
    DB_STAT_SUM,
    DB_STAT_MEAN,
    DB_STAT_MEDIAN,
    DB_STAT_MAX,
    DB_STAT_MIN,
    DB_STAT_STDDEV,          /* sample standard deviation (divisor runs - 1), as `report
                              * --stat stddev` */
    DB_NSTATS
};
extern const char *const db_meas_names[DB_NMEAS];     /* "calls", "total", "self" */
extern const char *const db_stat_names[DB_NSTATS + 1]; /* "sum", ..., "stddev", NULL */

struct db_hot_fn {
    struct db_func_out f;    /* identity; calls/total/self unused */
    uint32_t runs;           /* runs in which it was called */
    /* statistic of measure over the chosen runs, a run without the function counting as 0
     * (times: only when the runs' times are comparable, db_hot.timed); medians only of the
     * functions db_hot_ask asked them for */
    double v[DB_NMEAS][DB_NSTATS];
};
struct db_hot {
    struct db_hot_fn *fn;    /* ranked (db_hot_ask) */
    size_t n;
    size_t nruns;
    int timed;               /* every run has times in the same unit */
    int mixed;               /* the runs mix time units (or timed and untimed): calls only */
    char time_unit[8];       /* ns, ticks, none */
};
/* The ranking, and whose medians: a median needs every run's figure of the function, where
 * the other statistics of all runs come from function_stats (one row per function), so the
 * medians are read for the functions shown. */
struct db_hot_ask {
    int stat, meas;          /* rank by this statistic of this measure (meas -1: self time
                                when the runs are timed alike, else calls), larger first;
                                ties: more calls (sum), then name */
    size_t medians;          /* medians of the first this many of the ranking (0: none,
                                SIZE_MAX: all); every function's when stat is the median */
};
/* Per-function statistics over ids, ranked as ask says, read in one snapshot of the database
 * (a read-only transaction). An id given twice counts once (out->nruns: the distinct ids);
 * an id not in the database is an error naming it: -DB_E_STOP with d->err "no run N". When
 * ids are every run of the database and every function's medians are not needed, the sums,
 * maxima, minima and sums of squares come from function_stats (one row per function) and
 * the medians asked for from those functions' rows; otherwise from each run's rows. */
int db_hot(struct db *d, const struct db_ids *ids, const struct db_hot_ask *ask,
           struct db_hot *out);
void db_hot_free(struct db_hot *h);

#endif
