/* Storing one run in the runs database: one transaction per run, so that a run is stored
 * whole or not at all (a killed `ptcall db add` leaves the database as it was). */
#ifndef PTCALL_DB_INGEST_H
#define PTCALL_DB_INGEST_H

#include <stddef.h>
#include <stdint.h>

#include "db_backend.h"
#include "db_schema.h"

struct db_tag {
    const char *name, *value;
};

struct db_module_in {
    const char *path;
    uint64_t identity;   /* the MODULE chunk's identity (a hash of the object's map) */
    uint32_t functions;
    const char *build_id; /* hex of the object's NT_GNU_BUILD_ID, NULL: not known */
};

/* One function of the run as the decoder identifies it (module path, linkage name, file).
 * The database identifies functions across runs as `ptcall report` does over several runs:
 * by (module base name, linkage name, file); functions of one run with the same key are
 * added up. */
struct db_func_in {
    const char *name, *linkage_name, *file, *module; /* module: its path */
    uint32_t line;
    uint64_t calls, total, self;
    const char *state;       /* "traced", "counted" (calls only: no times stored), "neither" */
    int demoted;             /* (schema 7) traced until a budget's governor demoted it, counted
                                after: its times cover its calls until then */
};

struct db_edge_in {
    uint32_t caller, callee; /* indices into the run's funcs */
    uint64_t calls;
};

struct db_run_in {
    const char *content_hash; /* db_hash.h: 32 hex digits */
    const char *trace;       /* the file's absolute path when added */
    uint64_t trace_bytes;
    const char *program, *program_path, *command, *host; /* command, program_path: NULL if
                                                             not known */
    int64_t added_ns;
    int has_start, has_duration, has_exit, has_signal;
    int64_t start_ns, duration_ns;
    int exit_status, signal, core_dumped;
    const char *backend;     /* soft, pt, import */
    const char *time_unit;   /* ns, ticks, none */
    uint64_t counters[DB_NCOUNTERS];
    uint64_t window[DB_NWINDOW]; /* db_window_names */
    int complete, lossy;
    int timed;               /* total_time, and the functions' total and self, are known */
    uint64_t total_time;
    const char *selection;   /* record --only/--skip as given, NULL: every function traced */
    uint64_t traced_functions;
    /* within a budget (schema version 6): functions counted instead of traced, calls read
     * from COUNTS chunks, and the first BUDGET chunk (has_budget 0: none; texts as the
     * decoder names them) */
    uint64_t counted_functions, counted_calls;
    int has_budget;
    const char *budget_kind, *budget_source, *budget_outcome, *budget_note;
    double budget_limit, budget_predicted;
    uint64_t budget_pilot_ns, budget_candidates, budget_traced;
    /* a budget's governor (schema version 7): functions it demoted (report's
     * function_states.demoted) and its BUDGET chunks (source governor), one per demotion */
    uint64_t demoted_functions, budget_demotions;
    const struct db_tag *tags;
    size_t ntags;
    const struct db_module_in *mods;
    size_t nmods;
    const struct db_func_in *funcs;
    size_t nfuncs;
    const struct db_edge_in *edges;
    size_t nedges;
};

/* Stores r. Returns 0 with the new run's id in *id; -DB_E_CONSTRAINT when a run with the
 * same content hash is stored already, its id in *existing; or another -DB_E_* with d->err set.
 * On any failure nothing of r is stored. */
int db_ingest(struct db *d, const struct db_run_in *r, int64_t *id, int64_t *existing);

/* The id of the run with this content hash: 0 with *found set or not, or -DB_E_*. */
int db_find_hash(struct db *d, const char *content_hash, int64_t *id, int *found);

#endif
