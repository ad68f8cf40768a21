/* The schema and its migrations. Version N's tables are what migrations 1..N make, in
 * order, from an empty database; a migration is never edited once released (the tests keep
 * a frozen copy of every earlier version, test/db/schema/, and open each with this code).
 * Adding version N+1: write to_vN1() below (ALTER TABLE, new tables, data moves, in the
 * dialect both backends take), append it to migrations[], raise DB_SCHEMA_VERSION, freeze
 * vN+1's schema under test/db/schema/ and describe it in docs/db.md. */
#include "db_schema.h"

#include <string.h>

#include "db_conn.h"

const char *const db_counter_names[DB_NCOUNTERS] = {
    "events",       "whole_calls",   "calls",         "threads",       "processes",
    "gaps",         "missing_chunks", "lost_events",  "lost_pt_units", "repairs",
    "unwound",      "unmatched",     "broken_frames", "open_at_end",   "bad_stubs",
    "fork_unknown", "lossy_threads", "unfinished_processes"};

const char *const db_window_names[DB_NWINDOW] = {"entered_before", "still_open",
                                                 "window_threads"};

static int run_all(struct db *d, const char *const *sql)
{
    for (; *sql; sql++) {
        int e = d->ops->exec(d, *sql, 0, NULL);
        if (e)
            return e;
    }
    return 0;
}

/* Version 1: runs, their tags and modules, the functions dictionary, per-run function
 * figures and call edges. */
static int to_v1(struct db *d)
{
    char runs[4096], funcs[512];
    int n = snprintf(runs, sizeof(runs),
                     "CREATE TABLE runs ("
                     "id %s, "
                     "content_hash TEXT NOT NULL UNIQUE, "
                     "trace TEXT NOT NULL, "
                     "trace_bytes BIGINT NOT NULL, "
                     "program TEXT NOT NULL, "
                     "program_path TEXT, "
                     "command TEXT, "
                     "host TEXT NOT NULL, "
                     "added_ns BIGINT NOT NULL, "
                     "start_ns BIGINT, "
                     "duration_ns BIGINT, "
                     "exit_status INTEGER, "
                     "signal INTEGER, "
                     "core_dumped INTEGER, "
                     "backend TEXT NOT NULL, "
                     "time_unit TEXT NOT NULL, ",
                     d->ops->id_column);
    for (int i = 0; i < DB_NCOUNTERS; i++)
        n += snprintf(runs + n, sizeof(runs) - (size_t)n, "%s BIGINT NOT NULL, ",
                      db_counter_names[i]);
    snprintf(runs + n, sizeof(runs) - (size_t)n,
             "complete INTEGER NOT NULL, "
             "lossy INTEGER NOT NULL, "
             "total_time BIGINT, "
             "selection TEXT, "
             "traced_functions BIGINT, "
             "functions BIGINT NOT NULL, "
             "edges BIGINT NOT NULL)");
    snprintf(funcs, sizeof(funcs),
             "CREATE TABLE functions ("
             "id %s, "
             "module TEXT NOT NULL, "
             "linkage_name TEXT NOT NULL, "
             "file TEXT NOT NULL, "
             "name TEXT NOT NULL, "
             "line INTEGER NOT NULL, "
             "UNIQUE (module, linkage_name, file))",
             d->ops->id_column);
    const char *const rest[] = {
        "CREATE TABLE schema_version (version INTEGER NOT NULL)",
        "INSERT INTO schema_version (version) VALUES (1)",
        runs,
        "CREATE INDEX runs_start ON runs (start_ns)",
        "CREATE TABLE run_tags ("
        "run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE, "
        "name TEXT NOT NULL, "
        "value TEXT NOT NULL, "
        "PRIMARY KEY (run_id, name))",
        "CREATE INDEX run_tags_name_value ON run_tags (name, value)",
        "CREATE TABLE run_modules ("
        "run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE, "
        "idx INTEGER NOT NULL, "
        "path TEXT NOT NULL, "
        "identity TEXT NOT NULL, "
        "functions INTEGER NOT NULL, "
        "PRIMARY KEY (run_id, idx))",
        funcs,
        "CREATE TABLE run_functions ("
        "run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE, "
        "function_id BIGINT NOT NULL REFERENCES functions (id), "
        "module_idx INTEGER NOT NULL, "
        "calls BIGINT NOT NULL, "
        "total BIGINT, "
        "self BIGINT, "
        "PRIMARY KEY (run_id, function_id))",
        "CREATE INDEX run_functions_function ON run_functions (function_id)",
        "CREATE TABLE run_edges ("
        "run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE, "
        "caller_id BIGINT NOT NULL REFERENCES functions (id), "
        "callee_id BIGINT NOT NULL REFERENCES functions (id), "
        "calls BIGINT NOT NULL, "
        "PRIMARY KEY (run_id, caller_id, callee_id))",
        NULL};
    return run_all(d, rest);
}

/* Version 2: function_stats, every function's figures summed over all runs of one time unit
 * (runs, sums and maxima of calls, total and self), kept by db_ingest.c and db_remove() in
 * the transaction that adds or removes a run. The hot-function ranking over all runs, the
 * question asked most, then reads one row per function instead of one per function and run
 * (1,000 runs of 5,000 functions: 5,000 rows instead of 5 million). Filled here from the
 * runs a version 1 database holds. */
static int to_v2(struct db *d)
{
    static const char *const sql[] = {
        "CREATE TABLE function_stats ("
        "function_id BIGINT NOT NULL REFERENCES functions (id), "
        "time_unit TEXT NOT NULL, "
        "runs BIGINT NOT NULL, "
        "calls_sum BIGINT NOT NULL, "
        "total_sum BIGINT NOT NULL, "
        "self_sum BIGINT NOT NULL, "
        "calls_max BIGINT NOT NULL, "
        "total_max BIGINT NOT NULL, "
        "self_max BIGINT NOT NULL, "
        "PRIMARY KEY (function_id, time_unit))",
        "INSERT INTO function_stats (function_id, time_unit, runs, calls_sum, total_sum, "
        "self_sum, calls_max, total_max, self_max) "
        "SELECT rf.function_id, r.time_unit, COUNT(*), SUM(rf.calls), "
        "COALESCE(SUM(rf.total), 0), COALESCE(SUM(rf.self), 0), MAX(rf.calls), "
        "COALESCE(MAX(rf.total), 0), COALESCE(MAX(rf.self), 0) "
        "FROM run_functions rf JOIN runs r ON r.id = rf.run_id "
        "GROUP BY rf.function_id, r.time_unit",
        NULL};
    return run_all(d, sql);
}

/* Version 3: what the hot-function views need besides sums and maxima, kept in function_stats
 * so that the ranking over all runs still reads one row per function: each measure's
 * minimum over the runs that called the function, and its sum of squares (DOUBLE PRECISION:
 * squares of 64-bit figures overflow BIGINT) for the standard deviation. Filled again from
 * the runs. The index of run_functions by function now holds the figures too: the medians of
 * the functions a page shows, and one function's figures run by run, read the index alone
 * (50 functions of 1,000 runs: 50 ranges of it, not 50,000 rows found one by one).
 * edge_stats: every edge's runs and calls summed over all runs, kept as function_stats is, for
 * a function's callers and callees over all runs (`main` of a 5,000-function program has 5
 * million edge rows in 1,000 runs); over some runs they are read by run_edges' key (indexes
 * by caller and by callee would make them cheaper, but cost `db add` more than edge_stats
 * does: 9,000 edges per run land all over them). And
 * run_modules.build_id: the object's NT_GNU_BUILD_ID as `db add` found it in the file the
 * trace names, when that file still holds the traced map (NULL: not known). */
static int to_v3(struct db *d)
{
    static const char *const sql[] = {
        "ALTER TABLE function_stats ADD COLUMN calls_min BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE function_stats ADD COLUMN total_min BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE function_stats ADD COLUMN self_min BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE function_stats ADD COLUMN calls_sq DOUBLE PRECISION NOT NULL DEFAULT 0",
        "ALTER TABLE function_stats ADD COLUMN total_sq DOUBLE PRECISION NOT NULL DEFAULT 0",
        "ALTER TABLE function_stats ADD COLUMN self_sq DOUBLE PRECISION NOT NULL DEFAULT 0",
        "DELETE FROM function_stats",
        "INSERT INTO function_stats (function_id, time_unit, runs, calls_sum, total_sum, "
        "self_sum, calls_max, total_max, self_max, calls_min, total_min, self_min, calls_sq, "
        "total_sq, self_sq) "
        "SELECT rf.function_id, r.time_unit, COUNT(*), SUM(rf.calls), "
        "COALESCE(SUM(rf.total), 0), COALESCE(SUM(rf.self), 0), MAX(rf.calls), "
        "COALESCE(MAX(rf.total), 0), COALESCE(MAX(rf.self), 0), MIN(rf.calls), "
        "COALESCE(MIN(rf.total), 0), COALESCE(MIN(rf.self), 0), "
        "SUM(CAST(rf.calls AS DOUBLE PRECISION) * rf.calls), "
        "COALESCE(SUM(CAST(rf.total AS DOUBLE PRECISION) * rf.total), 0), "
        "COALESCE(SUM(CAST(rf.self AS DOUBLE PRECISION) * rf.self), 0) "
        "FROM run_functions rf JOIN runs r ON r.id = rf.run_id "
        "GROUP BY rf.function_id, r.time_unit",
        "DROP INDEX run_functions_function",
        "CREATE INDEX run_functions_figures ON run_functions (function_id, run_id, calls, "
        "total, self)",
        "CREATE TABLE edge_stats ("
        "caller_id BIGINT NOT NULL REFERENCES functions (id), "
        "callee_id BIGINT NOT NULL REFERENCES functions (id), "
        "runs BIGINT NOT NULL, "
        "calls_sum BIGINT NOT NULL, "
        "PRIMARY KEY (caller_id, callee_id))",
        "CREATE INDEX edge_stats_callee ON edge_stats (callee_id)",
        "INSERT INTO edge_stats (caller_id, callee_id, runs, calls_sum) "
        "SELECT caller_id, callee_id, COUNT(*), SUM(calls) FROM run_edges "
        "GROUP BY caller_id, callee_id",
        "ALTER TABLE run_modules ADD COLUMN build_id TEXT",
        NULL};
    return run_all(d, sql);
}

/* Version 4: fuzzing campaigns (docs/db.md, *Campaigns*; db_campaign.c): a campaign (a name,
 * a program and its build) made of parts, each one `ptcall cov add` of a .ptcov; per part
 * its instances and their coverage curves (the points where coverage grew; instance_idx -1:
 * the part's union), per function and block its first reach in the part, so that the union
 * over parts and machines is a GROUP BY with MIN. The campaign's totals and union curve are
 * kept in campaigns and campaign_union by the transaction that adds a part, so that the
 * campaign list and page read one row per campaign. Nothing to fill: earlier versions had no
 * campaigns. */
static int to_v4(struct db *d)
{
    char camp[1024], parts[1024];
    snprintf(camp, sizeof(camp),
             "CREATE TABLE campaigns ("
             "id %s, "
             "name TEXT NOT NULL UNIQUE, "
             "program TEXT NOT NULL, "
             "build_id TEXT NOT NULL, "
             "functions_total BIGINT NOT NULL, "
             "blocks_total BIGINT, "
             "added_ns BIGINT NOT NULL, "
             "parts BIGINT NOT NULL, "
             "instances BIGINT NOT NULL, "
             "inputs BIGINT NOT NULL, "
             "crashes BIGINT NOT NULL, "
             "hangs BIGINT NOT NULL, "
             "functions_reached BIGINT NOT NULL, "
             "blocks_reached BIGINT, "
             "campaign_ms BIGINT, "
             "last_new_ms BIGINT)",
             d->ops->id_column);
    snprintf(parts, sizeof(parts),
             "CREATE TABLE campaign_parts ("
             "id %s, "
             "campaign_id BIGINT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE, "
             "content_hash TEXT NOT NULL UNIQUE, "
             "file TEXT NOT NULL, "
             "host TEXT NOT NULL, "
             "added_ns BIGINT NOT NULL, "
             "instances BIGINT NOT NULL, "
             "inputs BIGINT NOT NULL, "
             "crashes BIGINT NOT NULL, "
             "hangs BIGINT NOT NULL, "
             "functions_reached BIGINT NOT NULL, "
             "blocks_reached BIGINT, "
             "campaign_ms BIGINT, "
             "last_new_ms BIGINT)",
             d->ops->id_column);
    const char *const sql[] = {
        camp,
        "CREATE TABLE campaign_tags ("
        "campaign_id BIGINT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE, "
        "name TEXT NOT NULL, "
        "value TEXT NOT NULL, "
        "PRIMARY KEY (campaign_id, name))",
        "CREATE INDEX campaign_tags_name_value ON campaign_tags (name, value)",
        parts,
        "CREATE INDEX campaign_parts_campaign ON campaign_parts (campaign_id)",
        "CREATE TABLE campaign_instances ("
        "part_id BIGINT NOT NULL REFERENCES campaign_parts (id) ON DELETE CASCADE, "
        "idx INTEGER NOT NULL, "
        "name TEXT NOT NULL, "
        "host TEXT NOT NULL, "
        "inputs BIGINT NOT NULL, "
        "crashes BIGINT NOT NULL, "
        "hangs BIGINT NOT NULL, "
        "functions_reached BIGINT NOT NULL, "
        "blocks_reached BIGINT, "
        "last_new_ms BIGINT, "
        "PRIMARY KEY (part_id, idx))",
        "CREATE TABLE campaign_points ("
        "part_id BIGINT NOT NULL REFERENCES campaign_parts (id) ON DELETE CASCADE, "
        "instance_idx INTEGER NOT NULL, "
        "t_ms BIGINT NOT NULL, "
        "functions BIGINT NOT NULL, "
        "blocks BIGINT, "
        "PRIMARY KEY (part_id, instance_idx, t_ms))",
        "CREATE TABLE campaign_firsts ("
        "campaign_id BIGINT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE, "
        "part_id BIGINT NOT NULL REFERENCES campaign_parts (id) ON DELETE CASCADE, "
        "function_id BIGINT NOT NULL REFERENCES functions (id), "
        "t_ms BIGINT NOT NULL, "
        "instance_idx INTEGER NOT NULL, "
        "input TEXT NOT NULL, "
        "PRIMARY KEY (part_id, function_id))",
        "CREATE INDEX campaign_firsts_union ON campaign_firsts (campaign_id, function_id, t_ms)",
        "CREATE TABLE campaign_block_firsts ("
        "campaign_id BIGINT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE, "
        "part_id BIGINT NOT NULL REFERENCES campaign_parts (id) ON DELETE CASCADE, "
        "block BIGINT NOT NULL, "
        "t_ms BIGINT NOT NULL, "
        "PRIMARY KEY (part_id, block))",
        "CREATE INDEX campaign_block_firsts_union ON campaign_block_firsts (campaign_id, block, "
        "t_ms)",
        "CREATE TABLE campaign_union ("
        "campaign_id BIGINT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE, "
        "t_ms BIGINT NOT NULL, "
        "functions BIGINT NOT NULL, "
        "blocks BIGINT, "
        "PRIMARY KEY (campaign_id, t_ms))",
        /* per part whose .ptcov had the call graph: how the never-reached functions divide,
         * and the frontier's top rows, each callee by identity (not a functions id: never
         * reached, it has no run either), its reached callers by name */
        "CREATE TABLE campaign_reach ("
        "part_id BIGINT NOT NULL PRIMARY KEY REFERENCES campaign_parts (id) ON DELETE CASCADE, "
        "campaign_id BIGINT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE, "
        "indirect_calls INTEGER NOT NULL, "
        "unreachable BIGINT NOT NULL, "
        "reachable_not_reached BIGINT NOT NULL, "
        "frontier_total BIGINT NOT NULL)",
        "CREATE INDEX campaign_reach_campaign ON campaign_reach (campaign_id)",
        "CREATE TABLE campaign_frontier ("
        "part_id BIGINT NOT NULL REFERENCES campaign_parts (id) ON DELETE CASCADE, "
        "pos INTEGER NOT NULL, "
        "linkage_name TEXT NOT NULL, "
        "name TEXT NOT NULL, "
        "file TEXT NOT NULL, "
        "line BIGINT NOT NULL, "
        "by_pointer_only INTEGER NOT NULL, "
        "functions_behind BIGINT NOT NULL, "
        "insns_behind BIGINT NOT NULL, "
        "blocks_behind BIGINT NOT NULL, "
        "lines_behind BIGINT, "
        "PRIMARY KEY (part_id, pos))",
        "CREATE TABLE campaign_frontier_callers ("
        "part_id BIGINT NOT NULL, "
        "pos INTEGER NOT NULL, "
        "idx INTEGER NOT NULL, "
        "name TEXT NOT NULL, "
        "PRIMARY KEY (part_id, pos, idx), "
        "FOREIGN KEY (part_id, pos) REFERENCES campaign_frontier (part_id, pos) ON DELETE "
        "CASCADE)",
        NULL};
    return run_all(d, sql);
}

/* Version 5: per run, the counters of traces that do not hold a thread's whole life (an
 * attach, a snapshot, threads running at exit: docs/usage.md, Windows): calls entered before
 * a thread's window, frames still open at its end, threads traced in a window. Runs added
 * before hold 0, which is what their traces said (earlier decoders counted the first as
 * unmatched exits). */
static int to_v5(struct db *d)
{
    const char *const sql[] = {
        "ALTER TABLE runs ADD COLUMN entered_before BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE runs ADD COLUMN still_open BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE runs ADD COLUMN window_threads BIGINT NOT NULL DEFAULT 0",
        NULL};
    return run_all(d, sql);
}

/* Version 6: traces recorded within a budget (issue 28; docs/usage.md, Traces recorded within
 * a budget). Per run, the functions counted instead of traced and their calls, and the budget
 * (its first BUDGET chunk; NULL without one); per function of a run, its state. Runs added
 * before were traced wherever a function was (state 'traced', 0 counted). */
static int to_v6(struct db *d)
{
    const char *const sql[] = {
        "ALTER TABLE runs ADD COLUMN counted_functions BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE runs ADD COLUMN counted_calls BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE runs ADD COLUMN budget_kind TEXT",
        "ALTER TABLE runs ADD COLUMN budget_source TEXT",
        "ALTER TABLE runs ADD COLUMN budget_limit DOUBLE PRECISION",
        "ALTER TABLE runs ADD COLUMN budget_predicted DOUBLE PRECISION",
        "ALTER TABLE runs ADD COLUMN budget_pilot_ns BIGINT",
        "ALTER TABLE runs ADD COLUMN budget_candidates BIGINT",
        "ALTER TABLE runs ADD COLUMN budget_traced BIGINT",
        "ALTER TABLE runs ADD COLUMN budget_outcome TEXT",
        "ALTER TABLE runs ADD COLUMN budget_note TEXT",
        "ALTER TABLE run_functions ADD COLUMN state TEXT NOT NULL DEFAULT 'traced'",
        NULL};
    return run_all(d, sql);
}

/* Version 7: a budget's governor (issue 28; docs/usage.md, Traces recorded within a budget).
 * Per run, the functions it demoted and its BUDGET chunks (source governor); per function of
 * a run, whether it was demoted: its state stays 'traced' (its calls until the demotion are in
 * the events, with times), but its times cover only that part of its calls. Runs added before
 * had no governor (0). */
static int to_v7(struct db *d)
{
    const char *const sql[] = {
        "ALTER TABLE runs ADD COLUMN demoted_functions BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE runs ADD COLUMN budget_demotions BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE run_functions ADD COLUMN demoted INTEGER NOT NULL DEFAULT 0",
        NULL};
    return run_all(d, sql);
}

/* migrations[v - 1] brings a database from version v - 1 to v (0: empty). */
static int (*const migrations[DB_SCHEMA_VERSION])(struct db *d) = {to_v1, to_v2, to_v3, to_v4,
                                                                   to_v5, to_v6, to_v7};

struct tables {
    int has_version; /* a schema_version table */
    int others;      /* tables besides it */
};

static int on_table(void *ctx, int ncol, const struct db_val *col)
{
    struct tables *t = ctx;
    if (ncol > 0 && col[0].type == DB_TEXT && !strcmp(col[0].s, "schema_version"))
        t->has_version = 1;
    else
        t->others++;
    return 0;
}

int db_read_version(struct db *d, int *version)
{
    struct tables t = {0, 0};
    int e = d->ops->query(d, d->ops->tables_sql, 0, NULL, on_table, &t);
    if (e)
        return e;
    *version = 0;
    if (!t.has_version)
        return t.others ? db_fail(d, DB_E_FOREIGN,
                                  "%s holds %d tables and none of them is a ptcall schema_version: "
                                  "it is not a ptcall runs database",
                                  d->where, t.others)
                        : 0;
    int64_t v;
    int found;
    if ((e = db_value(d, "SELECT max(version) FROM schema_version", 0, NULL, &v, &found)))
        return e;
    if (!found)
        return db_fail(d, DB_E_DAMAGED,
                       "%s has an empty schema_version table: it was damaged or is not a ptcall "
                       "runs database",
                       d->where);
    /* migrations[] is indexed by it: only versions a ptcall may have written go on */
    if (v < 1 || v > DB_SCHEMA_PLAUSIBLE)
        return db_fail(d, DB_E_DAMAGED,
                       "%s says its schema version is %lld, which no ptcall writes: it was "
                       "damaged or is not a ptcall runs database",
                       d->where, (long long)v);
    *version = (int)v;
    return 0;
}

static int newer(struct db *d, int v)
{
    return db_fail(d, DB_E_VERSION,
                   "%s has schema version %d and this ptcall knows versions up to %d", d->where,
                   v, DB_SCHEMA_VERSION);
}

struct migrate {
    int from;
};

/* Inside the schema transaction: read the version again (another process may have migrated
 * while this one waited for the lock), then apply what is missing. */
static int migrate(struct db *d, void *ctx)
{
    struct migrate *m = ctx;
    int e;
    if (d->ops->schema_lock_sql && (e = d->ops->exec(d, d->ops->schema_lock_sql, 0, NULL)))
        return e;
    int v;
    if ((e = db_read_version(d, &v)))
        return e;
    if (v > DB_SCHEMA_VERSION)
        return newer(d, v);
    m->from = v;
    for (int k = v; k < DB_SCHEMA_VERSION; k++)
        if ((e = migrations[k](d)))
            return e;
    if (v < DB_SCHEMA_VERSION) /* to_v1 wrote 1: the later steps leave it to this */
        return d->ops->exec(d, "UPDATE schema_version SET version = $1", 1,
                            (struct db_val[]){DB_I(DB_SCHEMA_VERSION)});
    return 0;
}

/* Migrates d (open to write) from version v to DB_SCHEMA_VERSION. */
static int migrate_to_current(struct db *d)
{
    struct migrate m = {0};
    int e = db_transaction(d, migrate, &m);
    if (e && e != -DB_E_VERSION && e != -DB_E_FOREIGN && e != -DB_E_DAMAGED) {
        char msg[sizeof(d->err)];
        snprintf(msg, sizeof(msg), "%s", d->err);
        db_fail(d, -e, "cannot %s the schema of %s (version %d to %d): %s",
                m.from ? "migrate" : "create", d->where, m.from, DB_SCHEMA_VERSION, msg);
    }
    return e;
}

/* A reader's database of an older version: migrated on a writer's connection of its own
 * (the reader's writes nothing), closed again. */
static int migrate_for_reader(struct db *d, const char *url, int v)
{
    struct db w;
    int e = db_connect(&w, url, DB_HOW_WRITE);
    if (!e) {
        e = w.ops->setup_write ? w.ops->setup_write(&w) : 0;
        if (!e)
            e = migrate_to_current(&w);
        if (e)
            memcpy(d->err, w.err, sizeof(d->err));
        db_disconnect(&w);
        return e;
    }
    if (e == -DB_E_READONLY)
        return db_fail(d, DB_E_READONLY,
                       "%s has schema version %d and this ptcall reads version %d: it must be "
                       "migrated first, which writes it, and %s",
                       w.where, v, DB_SCHEMA_VERSION, w.err);
    memcpy(d->err, w.err, sizeof(d->err));
    return e;
}

int db_open(struct db *d, const char *url, enum db_mode mode)
{
    enum db_how how = mode == DB_READ     ? DB_HOW_READ
                      : mode == DB_CHANGE ? DB_HOW_WRITE
                                          : DB_HOW_CREATE;
    for (int attempt = 0;; attempt++) {
        int e = db_connect(d, url, how);
        if (e)
            return e;
        int v;
        if ((e = db_read_version(d, &v)))
            goto fail;
        if (v == DB_SCHEMA_VERSION && how != DB_HOW_READ && d->ops->setup_write &&
            (e = d->ops->setup_write(d)))
            goto fail;
        if (v == DB_SCHEMA_VERSION)
            return 0;
        if (v > DB_SCHEMA_VERSION) {
            e = newer(d, v);
            goto fail;
        }
        if (v == 0 && mode != DB_WRITE) {
            e = db_fail(d, DB_E_NOSCHEMA, "%s holds no ptcall runs", d->where);
            goto fail;
        }
        if (how != DB_HOW_READ && d->ops->setup_write && (e = d->ops->setup_write(d)))
            goto fail;
        if (mode != DB_READ) {
            if ((e = migrate_to_current(d)))
                goto fail;
            return 0;
        }
        if (attempt) { /* migrated, and still older: another ptcall took it back */
            e = db_fail(d, DB_E_FAIL, "%s is still at schema version %d after its migration",
                        d->where, v);
            goto fail;
        }
        db_disconnect(d);
        e = migrate_for_reader(d, url, v);
        if (e)
            return e;
        continue;
    fail:
        db_disconnect(d);
        return e;
    }
}

void db_close(struct db *d)
{
    db_disconnect(d);
}
