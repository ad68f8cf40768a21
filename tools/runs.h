/* Several runs in one analysis (`ptcall report A.ptc B.ptc ...`, `ptcall diff BASE NEW`).
 *
 * Runs are decoded one at a time and folded into an aggregate keyed by (module basename,
 * linkage name, source file): function ids are per session and module paths differ between
 * builds and machines, so neither can match a function across runs. Memory grows with the
 * number of distinct functions (times the per-function statistics) plus a short summary per
 * run, never with the number of events. */
#ifndef PTCALL_RUNS_H
#define PTCALL_RUNS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ptcall/decode.h"

/* Trace files named on the command line: files as given, a directory as every *.ptc in it
 * (sorted by name, not recursive). */
struct runs_paths {
    char **v;
    size_t n, cap;
    int dirs; /* a directory was given */
};
/* Adds arg (file or directory). Returns 0, or 1 after the one-line error (a directory
 * without .ptc files, an unreadable directory, out of memory). */
int runs_paths_add(struct runs_paths *p, const char *cmd, const char *arg);
void runs_paths_free(struct runs_paths *p);

/* What is measured per function, and the per-run statistics over it. */
enum runs_meas { RUNS_CALLS, RUNS_TOTAL, RUNS_SELF, RUNS_NMEAS };
enum runs_stat { RUNS_STAT_MEAN, RUNS_STAT_MIN, RUNS_STAT_MAX, RUNS_STAT_STDDEV, RUNS_NSTATS };
extern const char *const runs_meas_names[RUNS_NMEAS]; /* "calls", "total", "self" */
extern const char *const runs_stat_names[RUNS_NSTATS + 1]; /* "mean", ..., NULL */

struct runs_fn {
    char *key;  /* "basename\0linkage\0file\0": what matches functions across runs */
    size_t keylen;
    char *name, *linkage_name, *file;
    char *module; /* path of the module in the first run that had the function */
    uint32_t line;
    uint64_t sum[RUNS_NMEAS]; /* over all runs */
    uint32_t runs;            /* runs in which it was called */
    uint32_t lossy_runs;      /* ... of which were lossy, damaged or incomplete */
    uint32_t untraced_runs;   /* runs that did not trace it (record --only/--skip): they
                                 count in no statistic, not even as 0 */
    size_t untraced_mark;     /* run number + 1 last counted in untraced_runs */
    /* Welford's running mean and sum of squared deviations, min and max, over the runs
     * in which it was called; runs without it are added as zeros by runs_fn_stat(). */
    double mean[RUNS_NMEAS], m2[RUNS_NMEAS];
    uint64_t min[RUNS_NMEAS], max[RUNS_NMEAS];
    /* the run being folded: a key can occur twice in one session (one library loaded from
     * two paths), so a run's values are added up before they enter the statistics */
    uint64_t cur[RUNS_NMEAS];
    size_t cur_run; /* run number + 1 whose values cur holds, 0 none */
};

struct runs_run {
    char *path;
    struct ptc_totals t;
    int damage;           /* salvaged: the decoder's error code, else 0 */
    char *damage_msg;     /* salvaged: what was lost, else NULL */
    char *lossy_threads;  /* "pid/tid, ..." of threads whose figures are lower bounds */
    char *skipped;        /* --salvage: why nothing of the file could be read; NULL if read */
    char *selection;      /* record --only/--skip of the run (ptc_selection.spec), NULL if
                             it traced every function */
    uint32_t sel_traced, sel_funcs; /* with a selection: functions traced, of all */
};
/* The run's figures are lower bounds (gaps, losses, salvaged damage) or it was cut short
 * (no RECORD_END). */
int runs_run_lossy(const struct runs_run *r);
int runs_run_complete(const struct runs_run *r);

/* The modules of the first run read: later runs must share one (by basename) unless
 * allowed to differ. Shared by the two aggregates of `ptcall diff`. */
struct runs_ref {
    char **mods;
    size_t n;
    char *path; /* NULL until set */
};
void runs_ref_free(struct runs_ref *r);

struct runs_opts {
    const char *cmd;       /* "report", "diff": error messages start "ptcall CMD: " */
    int salvage;           /* use what damaged runs hold; skip unreadable files */
    unsigned threads;      /* decode threads per run (--threads) */
    int allow_different;   /* combine runs with no module in common */
    size_t nfiles;         /* how many files the command was given (advice wording) */
    struct runs_ref *ref;
};

enum runs_unit { RUNS_UNSET = -1, RUNS_UNTIMED = 0, RUNS_TICKS = 1, RUNS_NS = 2 };

struct runs_agg {
    struct runs_fn *fn;
    size_t nfn, capfn;
    uint32_t *slot; /* open addressing: index into fn + 1, 0 = empty */
    size_t nslot;
    struct runs_run *run; /* every file given, skipped ones included, in order */
    size_t nrun, caprun;
    size_t nread;         /* runs folded (not skipped) */
    int unit;             /* enum runs_unit of the runs read; RUNS_UNTIMED when they differ */
    int mixed_units;      /* runs differ in timing (untimed, ticks, ns): times dropped */
    size_t *touched;      /* functions called in the run being folded */
    size_t ntouched, captouched;
    char *scratch;        /* key being built */
    size_t capscratch;
};
void runs_agg_init(struct runs_agg *g);
void runs_agg_free(struct runs_agg *g);
/* Decodes path and folds it into g. Returns 0, or 1 after printing the one-line error
 * (the file named, what to do). With o->salvage a damaged run keeps what precedes the
 * damage (run->damage) and a file that cannot be read at all is recorded as skipped with
 * a warning on stderr. */
int runs_agg_add_file(struct runs_agg *g, const struct runs_opts *o, const char *path);
/* The function with f's key in g, or NULL. */
const struct runs_fn *runs_agg_find(const struct runs_agg *g, const struct runs_fn *f);
/* Statistic st of measure m over g's nread runs that traced the function, a run without
 * the function counting as 0. stddev is the sample standard deviation (divisor runs - 1; 0
 * for one run). */
double runs_fn_stat(const struct runs_agg *g, const struct runs_fn *f, int m, int st);
/* Sum of a counter of ptc_totals over the runs read (offsetof a uint64_t field). */
uint64_t runs_agg_sum(const struct runs_agg *g, size_t field_offset);
/* Runs read that traced only some functions (record --only/--skip). */
size_t runs_agg_count_selective(const struct runs_agg *g);
/* Runs read that are lossy / not complete. */
size_t runs_agg_count_lossy(const struct runs_agg *g);
size_t runs_agg_count_incomplete(const struct runs_agg *g);
/* The backend name when every run read has the same one, else "mixed". */
const char *runs_agg_backend(const struct runs_agg *g);
/* "ns", "ticks" or "none" for g->unit. */
const char *runs_unit_name(int unit);
/* Run r as a JSON object: trace, backend, timing, counters, complete, lossy, damage. */
void runs_json_run(FILE *f, const struct runs_run *r);
/* One line on what makes run r lossy or incomplete (for table footers), into buf. */
void runs_describe_quality(const struct runs_run *r, char *buf, size_t n);

#endif
