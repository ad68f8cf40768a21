/* Storing one run (db_ingest.h). The run's functions are merged by their cross-run key and
 * sorted before the transaction starts, so the transaction only writes; concurrent writers
 * then take the functions dictionary's rows in one global order, which keeps PostgreSQL
 * free of deadlocks between them (a deadlock would still be retried: db_transaction). */
#include "db_ingest.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_conn.h"

/* A function of the run under its cross-run key, with the figures of every decoder function
 * that has that key added up. */
struct mfunc {
    const char *base;          /* module base name: the key is (base, linkage_name, file) */
    const struct db_func_in *f; /* the first of them: name, line, module path */
    uint64_t calls, total, self;
    int counted;               /* every one of them counted (none traced): no times */
    int demoted;               /* one of them demoted by a budget's governor: its times are
                                  of its calls until then */
    int module_idx;
    int64_t id;                /* in the functions table */
};

struct medge {
    uint32_t caller, callee;   /* indices into the merged functions */
    uint64_t calls;
};

struct job {
    const struct db_run_in *r;
    struct mfunc *fn;
    size_t nfn;
    struct medge *edge;
    size_t nedge;
    const struct db_module_in **mods; /* r->mods, then the paths of functions not in them */
    size_t nmods;
    size_t *missing;           /* function_ids(): indices of functions not in the dictionary */
    size_t nmissing;
    int64_t id;
};

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int cmp_key(const struct mfunc *a, const struct mfunc *b)
{
    int c = strcmp(a->base, b->base);
    if (!c)
        c = strcmp(a->f->linkage_name, b->f->linkage_name);
    if (!c)
        c = strcmp(a->f->file, b->f->file);
    return c;
}

static int cmp_mfunc(const void *x, const void *y)
{
    const struct mfunc *a = x, *b = y;
    int c = cmp_key(a, b);
    /* equal keys: the decoder's first function first, whose name and module stand for all */
    return c ? c : (a->f < b->f ? -1 : a->f > b->f);
}

static int cmp_edge(const void *x, const void *y)
{
    const struct medge *a = x, *b = y;
    if (a->caller != b->caller)
        return a->caller < b->caller ? -1 : 1;
    return a->callee < b->callee ? -1 : a->callee > b->callee;
}

static void job_free(struct job *j)
{
    free(j->fn);
    free(j->edge);
    free(j->mods);
    free(j->missing);
}

static int module_index(struct job *j, const char *path, struct db_module_in *extra)
{
    for (size_t i = 0; i < j->nmods; i++)
        if (!strcmp(j->mods[i]->path, path))
            return (int)i;
    /* a function whose object no MODULE chunk listed as such cannot be: the decoder makes
     * functions from MODULE chunks. Kept anyway, without an identity. */
    extra->path = path;
    extra->identity = 0;
    extra->functions = 0;
    j->mods[j->nmods] = extra;
    return (int)j->nmods++;
}

/* Merges and sorts r's functions and edges into j. Returns 0 or -DB_E_NOMEM. */
static int prepare(struct job *j, const struct db_run_in *r, struct db_module_in *extra)
{
    memset(j, 0, sizeof(*j));
    j->r = r;
    size_t nf = r->nfuncs;
    struct mfunc *fn = calloc(nf ? nf : 1, sizeof(*fn));
    uint32_t *map = calloc(nf ? nf : 1, sizeof(*map));
    j->mods = calloc(r->nmods + nf + 1, sizeof(*j->mods));
    j->edge = calloc(r->nedges ? r->nedges : 1, sizeof(*j->edge));
    j->missing = calloc(nf ? nf : 1, sizeof(*j->missing));
    if (!fn || !map || !j->mods || !j->edge || !j->missing) {
        free(fn);
        free(map);
        job_free(j);
        return -DB_E_NOMEM;
    }
    for (size_t i = 0; i < r->nmods; i++)
        j->mods[j->nmods++] = &r->mods[i];
    for (size_t i = 0; i < nf; i++)
        fn[i] = (struct mfunc){.base = base_name(r->funcs[i].module), .f = &r->funcs[i]};
    qsort(fn, nf, sizeof(*fn), cmp_mfunc);
    size_t k = 0;
    for (size_t i = 0; i < nf; i++) {
        const struct db_func_in *f = fn[i].f;
        int counted = f->state && !strcmp(f->state, "counted");
        if (i == 0 || cmp_key(&fn[i], &fn[k - 1])) {
            fn[k] = fn[i];
            fn[k].module_idx = module_index(j, fn[i].f->module, &extra[k]);
            fn[k].counted = counted;
            k++;
        }
        struct mfunc *m = &fn[k - 1];
        m->counted &= counted; /* one copy traced: it has times */
        m->demoted |= f->demoted != 0; /* one copy's times stop at a demotion: the sum's too */
        m->calls += f->calls;
        m->total += f->total;
        m->self += f->self;
        map[f - r->funcs] = (uint32_t)(k - 1);
    }
    j->fn = fn;
    j->nfn = k;
    size_t ne = 0;
    for (size_t i = 0; i < r->nedges; i++)
        if (r->edges[i].caller < nf && r->edges[i].callee < nf)
            j->edge[ne++] = (struct medge){map[r->edges[i].caller], map[r->edges[i].callee],
                                           r->edges[i].calls};
    free(map);
    qsort(j->edge, ne, sizeof(*j->edge), cmp_edge);
    size_t m = 0;
    for (size_t i = 0; i < ne; i++) {
        if (m && j->edge[m - 1].caller == j->edge[i].caller &&
            j->edge[m - 1].callee == j->edge[i].callee)
            j->edge[m - 1].calls += j->edge[i].calls;
        else
            j->edge[m++] = j->edge[i];
    }
    j->nedge = m;
    return 0;
}

static struct db_val opt_i(int has, int64_t v)
{
    return has ? DB_I(v) : DB_NUL;
}

static int insert_run(struct db *d, struct job *j)
{
    const struct db_run_in *r = j->r;
    char sql[4096];
    int n = snprintf(sql, sizeof(sql),
                     "INSERT INTO runs (content_hash, trace, trace_bytes, program, program_path, "
                     "command, host, added_ns, start_ns, duration_ns, exit_status, signal, "
                     "core_dumped, backend, time_unit");
    for (int i = 0; i < DB_NCOUNTERS; i++)
        n += snprintf(sql + n, sizeof(sql) - (size_t)n, ", %s", db_counter_names[i]);
    n += snprintf(sql + n, sizeof(sql) - (size_t)n,
                  ", complete, lossy, total_time, selection, traced_functions, functions, edges");
    for (int i = 0; i < DB_NWINDOW; i++)
        n += snprintf(sql + n, sizeof(sql) - (size_t)n, ", %s", db_window_names[i]);
    n += snprintf(sql + n, sizeof(sql) - (size_t)n,
                  ", counted_functions, counted_calls, budget_kind, budget_source, budget_limit, "
                  "budget_predicted, budget_pilot_ns, budget_candidates, budget_traced, "
                  "budget_outcome, budget_note, demoted_functions, budget_demotions");
    n += snprintf(sql + n, sizeof(sql) - (size_t)n, ") VALUES (");
    struct db_val p[64];
    int np = 0;
    p[np++] = DB_S(r->content_hash);
    p[np++] = DB_S(r->trace);
    p[np++] = DB_I(r->trace_bytes);
    p[np++] = DB_S(r->program);
    p[np++] = DB_S(r->program_path);
    p[np++] = DB_S(r->command);
    p[np++] = DB_S(r->host);
    p[np++] = DB_I(r->added_ns);
    p[np++] = opt_i(r->has_start, r->start_ns);
    p[np++] = opt_i(r->has_duration, r->duration_ns);
    p[np++] = opt_i(r->has_exit, r->exit_status);
    p[np++] = opt_i(r->has_signal, r->signal);
    p[np++] = opt_i(r->has_signal, r->core_dumped);
    p[np++] = DB_S(r->backend);
    p[np++] = DB_S(r->time_unit);
    for (int i = 0; i < DB_NCOUNTERS; i++)
        p[np++] = DB_I(r->counters[i]);
    p[np++] = DB_I(r->complete);
    p[np++] = DB_I(r->lossy);
    p[np++] = opt_i(r->timed, (int64_t)r->total_time);
    p[np++] = DB_S(r->selection);
    p[np++] = opt_i(r->selection != NULL, (int64_t)r->traced_functions);
    p[np++] = DB_I(j->nfn);
    p[np++] = DB_I(j->nedge);
    for (int i = 0; i < DB_NWINDOW; i++)
        p[np++] = DB_I(r->window[i]);
    int b = r->has_budget;
    p[np++] = DB_I(r->counted_functions);
    p[np++] = DB_I(r->counted_calls);
    p[np++] = b ? DB_S(r->budget_kind) : DB_NUL;
    p[np++] = b ? DB_S(r->budget_source) : DB_NUL;
    p[np++] = b ? DB_R(r->budget_limit) : DB_NUL;
    p[np++] = b ? DB_R(r->budget_predicted) : DB_NUL;
    p[np++] = opt_i(b, (int64_t)r->budget_pilot_ns);
    p[np++] = opt_i(b, (int64_t)r->budget_candidates);
    p[np++] = opt_i(b, (int64_t)r->budget_traced);
    p[np++] = b ? DB_S(r->budget_outcome) : DB_NUL;
    p[np++] = b ? DB_S(r->budget_note) : DB_NUL;
    p[np++] = DB_I(r->demoted_functions);
    p[np++] = DB_I(r->budget_demotions);
    for (int i = 0; i < np; i++)
        n += snprintf(sql + n, sizeof(sql) - (size_t)n, "%s$%d", i ? ", " : "", i + 1);
    snprintf(sql + n, sizeof(sql) - (size_t)n, ") RETURNING id");
    int found;
    int e = db_value(d, sql, np, p, &j->id, &found);
    if (!e && !found)
        e = db_fail(d, DB_E_FAIL, "the new run got no id");
    return e;
}


/* ---- the functions dictionary ------------------------------------------------------------- */

struct found_ctx {
    struct mfunc *fn;       /* the batch's functions: one module, sorted by (linkage, file) */
    size_t n;
};

/* A row (id, linkage_name, file) of the dictionary for the batch: its id to the function with
 * that key (others of the same linkage name in another file are not the batch's). */
static int on_found(void *ctx, int ncol, const struct db_val *col)
{
    struct found_ctx *c = ctx;
    if (ncol < 3 || col[1].type != DB_TEXT || col[2].type != DB_TEXT)
        return 0;
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int k = strcmp(c->fn[mid].f->linkage_name, col[1].s);
        if (!k)
            k = strcmp(c->fn[mid].f->file, col[2].s);
        if (!k) {
            c->fn[mid].id = col[0].i;
            return 0;
        }
        if (k < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* The ids of fn[0..n) (one module base name, sorted) that the dictionary holds. */
static int find_ids(struct db *d, struct mfunc *fn, size_t n)
{
    struct db_val p[DB_BATCH + 1];
    for (size_t at = 0; at < n;) {
        size_t rows = db_batch_of(n - at);
        char *sql = db_multi_row("SELECT id, linkage_name, file FROM functions WHERE module = $1 "
                              "AND linkage_name IN (",
                              "#2", 1, rows, ")");
        if (!sql)
            return db_fail(d, DB_E_NOMEM, "out of memory");
        /* multi_row numbered the names $2.. from row 0: $1 is the module */
        p[0] = DB_S(fn[at].base);
        for (size_t r = 0; r < rows; r++)
            p[1 + r] = DB_S(fn[at + r].f->linkage_name);
        struct found_ctx c = {fn + at, rows};
        int e = d->ops->query(d, sql, (int)rows + 1, p, on_found, &c);
        free(sql);
        if (e)
            return e;
        at += rows;
    }
    return 0;
}

static void fill_function(const void *ctx, size_t i, struct db_val *p)
{
    const struct job *j = ctx;
    const struct mfunc *m = &j->fn[j->missing[i]];
    p[0] = DB_S(m->base);
    p[1] = DB_S(m->f->linkage_name);
    p[2] = DB_S(m->f->file);
    p[3] = DB_S(m->f->name);
    p[4] = DB_I(m->f->line);
}

/* Every function of the job gets its id in the dictionary, the new ones added. They are
 * looked up and added in the job's one sorted order: concurrent writers then take the
 * dictionary's new keys in the same order, which keeps PostgreSQL free of deadlocks between
 * them. In PostgreSQL a concurrent writer may add the same key between the lookup and the
 * INSERT: the INSERT waits for it, does nothing (ON CONFLICT DO NOTHING), and the second
 * lookup (a new snapshot under READ COMMITTED) finds its row. */
static int function_ids(struct db *d, struct job *j)
{
    for (int pass = 0; pass < 2; pass++) {
        for (size_t a = 0; a < j->nfn;) {
            size_t b = a + 1;
            while (b < j->nfn && !strcmp(j->fn[b].base, j->fn[a].base))
                b++;
            int e = find_ids(d, j->fn + a, b - a);
            if (e)
                return e;
            a = b;
        }
        j->nmissing = 0;
        for (size_t i = 0; i < j->nfn; i++)
            if (!j->fn[i].id)
                j->missing[j->nmissing++] = i;
        if (!j->nmissing)
            return 0;
        if (pass)
            break;
        int e = db_exec_rows(d, j->nmissing, j,
                          "INSERT INTO functions (module, linkage_name, file, name, line) "
                          "VALUES ",
                          "(#1, #2, #3, #4, #5)", 5,
                          " ON CONFLICT (module, linkage_name, file) DO NOTHING", fill_function);
        if (e)
            return e;
    }
    return db_fail(d, DB_E_FAIL, "function %s vanished from the dictionary",
                   j->fn[j->missing[0]].f->linkage_name);
}

/* ---- the run's rows ---------------------------------------------------------------------- */

static void fill_figures(const void *ctx, size_t i, struct db_val *p)
{
    const struct job *j = ctx;
    const struct mfunc *m = &j->fn[i];
    p[0] = DB_I(j->id);
    p[1] = DB_I(m->id);
    p[2] = DB_I(m->module_idx);
    p[3] = DB_I(m->calls);
    /* a counted function has calls only: NULL times, never 0 */
    p[4] = opt_i(j->r->timed && !m->counted, (int64_t)m->total);
    p[5] = opt_i(j->r->timed && !m->counted, (int64_t)m->self);
    p[6] = DB_S(m->counted ? "counted" : m->f->state ? m->f->state : "traced");
    p[7] = DB_I(m->demoted);
}

/* function_stats holds times as 0 for untimed runs (their time_unit is "none") */
static void fill_stats(const void *ctx, size_t i, struct db_val *p)
{
    const struct job *j = ctx;
    const struct mfunc *m = &j->fn[i];
    p[0] = DB_I(m->id);
    p[1] = DB_S(j->r->time_unit);
    p[2] = DB_I(m->calls);
    p[3] = DB_I(j->r->timed ? (int64_t)m->total : 0);
    p[4] = DB_I(j->r->timed ? (int64_t)m->self : 0);
    /* squares for the standard deviation, as doubles (a 64-bit square overflows BIGINT) */
    p[5] = DB_R((double)m->calls * (double)m->calls);
    p[6] = DB_R(j->r->timed ? (double)m->total * (double)m->total : 0.0);
    p[7] = DB_R(j->r->timed ? (double)m->self * (double)m->self : 0.0);
}

static void fill_edge(const void *ctx, size_t i, struct db_val *p)
{
    const struct job *j = ctx;
    const struct medge *x = &j->edge[i];
    p[0] = DB_I(j->id);
    p[1] = DB_I(j->fn[x->caller].id);
    p[2] = DB_I(j->fn[x->callee].id);
    p[3] = DB_I(x->calls);
}

static void fill_edge_stats(const void *ctx, size_t i, struct db_val *p)
{
    const struct job *j = ctx;
    const struct medge *x = &j->edge[i];
    p[0] = DB_I(j->fn[x->caller].id);
    p[1] = DB_I(j->fn[x->callee].id);
    p[2] = DB_I(x->calls);
}

/* For the tests of atomicity (test/db/db_test.py): with PTCALL_DB_PAUSE=FILE, a run's
 * transaction, all written, creates FILE and waits a minute before it commits, so that the
 * test can kill the process there. */
static void pause_for_tests(void)
{
    const char *f = getenv("PTCALL_DB_PAUSE");
    if (!f || !*f)
        return;
    int fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0)
        close(fd);
    sleep(60);
}

static int write_run(struct db *d, void *ctx)
{
    struct job *j = ctx;
    const struct db_run_in *r = j->r;
    for (size_t i = 0; i < j->nfn; i++)
        j->fn[i].id = 0; /* a retried transaction looks them up again */
    int e = insert_run(d, j);
    if (e)
        return e;
    struct db_val id = DB_I(j->id);
    for (size_t i = 0; i < r->ntags && !e; i++)
        e = d->ops->exec(d, "INSERT INTO run_tags (run_id, name, value) VALUES ($1, $2, $3)", 3,
                         (struct db_val[]){id, DB_S(r->tags[i].name), DB_S(r->tags[i].value)});
    for (size_t i = 0; i < j->nmods && !e; i++) {
        const struct db_module_in *m = j->mods[i];
        char ident[24] = "";
        if (m->identity)
            snprintf(ident, sizeof(ident), "%016llx", (unsigned long long)m->identity);
        e = d->ops->exec(d,
                         "INSERT INTO run_modules (run_id, idx, path, identity, functions, "
                         "build_id) VALUES ($1, $2, $3, $4, $5, $6)",
                         6,
                         (struct db_val[]){id, DB_I(i), DB_S(m->path), DB_S(ident),
                                           DB_I(m->functions), DB_S(m->build_id)});
    }
    if (!e)
        e = function_ids(d, j);
    if (!e)
        e = db_exec_rows(d, j->nfn, j,
                      "INSERT INTO run_functions (run_id, function_id, module_idx, calls, total, "
                      "self, state, demoted) VALUES ",
                      "(#1, #2, #3, #4, #5, #6, #7, #8)", 8, "", fill_figures);
    if (!e)
        e = db_exec_rows(d, j->nedge, j,
                      "INSERT INTO run_edges (run_id, caller_id, callee_id, calls) VALUES ",
                      "(#1, #2, #3, #4)", 4, "", fill_edge);
    /* the sums over all runs, last: in PostgreSQL concurrent writers of the same functions
     * wait for each other's rows here until the commit, so the less comes after, the less they
     * wait; the rows are taken in the job's sorted order, as the dictionary's, so that they do
     * not deadlock */
    if (!e)
        e = db_exec_rows(d, j->nfn, j,
                      "INSERT INTO function_stats (function_id, time_unit, runs, calls_sum, "
                      "total_sum, self_sum, calls_max, total_max, self_max, calls_min, "
                      "total_min, self_min, calls_sq, total_sq, self_sq) VALUES ",
                      "(#1, #2, 1, #3, #4, #5, #3, #4, #5, #3, #4, #5, #6, #7, #8)", 8,
                      " ON CONFLICT (function_id, time_unit) DO UPDATE SET "
                      "runs = function_stats.runs + 1, "
                      "calls_sum = function_stats.calls_sum + excluded.calls_sum, "
                      "total_sum = function_stats.total_sum + excluded.total_sum, "
                      "self_sum = function_stats.self_sum + excluded.self_sum, "
                      "calls_max = CASE WHEN excluded.calls_max > function_stats.calls_max "
                      "THEN excluded.calls_max ELSE function_stats.calls_max END, "
                      "total_max = CASE WHEN excluded.total_max > function_stats.total_max "
                      "THEN excluded.total_max ELSE function_stats.total_max END, "
                      "self_max = CASE WHEN excluded.self_max > function_stats.self_max "
                      "THEN excluded.self_max ELSE function_stats.self_max END, "
                      "calls_min = CASE WHEN excluded.calls_min < function_stats.calls_min "
                      "THEN excluded.calls_min ELSE function_stats.calls_min END, "
                      "total_min = CASE WHEN excluded.total_min < function_stats.total_min "
                      "THEN excluded.total_min ELSE function_stats.total_min END, "
                      "self_min = CASE WHEN excluded.self_min < function_stats.self_min "
                      "THEN excluded.self_min ELSE function_stats.self_min END, "
                      "calls_sq = function_stats.calls_sq + excluded.calls_sq, "
                      "total_sq = function_stats.total_sq + excluded.total_sq, "
                      "self_sq = function_stats.self_sq + excluded.self_sq",
                      fill_stats);
    if (!e)
        e = db_exec_rows(d, j->nedge, j,
                      "INSERT INTO edge_stats (caller_id, callee_id, runs, calls_sum) VALUES ",
                      "(#1, #2, 1, #3)", 3,
                      " ON CONFLICT (caller_id, callee_id) DO UPDATE SET "
                      "runs = edge_stats.runs + 1, "
                      "calls_sum = edge_stats.calls_sum + excluded.calls_sum",
                      fill_edge_stats);
    if (!e)
        pause_for_tests();
    return e;
}

int db_find_hash(struct db *d, const char *content_hash, int64_t *id, int *found)
{
    return db_value(d, "SELECT id FROM runs WHERE content_hash = $1", 1,
                    (struct db_val[]){DB_S(content_hash)}, id, found);
}

int db_ingest(struct db *d, const struct db_run_in *r, int64_t *id, int64_t *existing)
{
    struct job j;
    struct db_module_in *extra = calloc(r->nfuncs + 1, sizeof(*extra));
    if (!extra || prepare(&j, r, extra)) {
        free(extra);
        return db_fail(d, DB_E_NOMEM, "out of memory");
    }
    int e = db_transaction(d, write_run, &j);
    if (e == -DB_E_CONSTRAINT) {
        /* the same trace, added meanwhile by another process (or given twice) */
        char msg[sizeof(d->err)];
        snprintf(msg, sizeof(msg), "%s", d->err);
        int found;
        if (!db_find_hash(d, r->content_hash, existing, &found) && !found)
            e = db_fail(d, DB_E_FAIL, "%s", msg);
        else
            snprintf(d->err, sizeof(d->err), "%s", msg);
    }
    if (!e)
        *id = j.id;
    job_free(&j);
    free(extra);
    return e;
}
