/* ptcall db add|list|show|rm|query: the runs database (docs/db.md). The storage layer is
 * db/ (one backend interface, SQLite and PostgreSQL, schema, ingest, queries); this file
 * reads the options, decodes traces through the tools' one way in (cli_decode) and prints
 * what the database holds as a table, CSV or JSON. */
#define _GNU_SOURCE /* sigabbrev_np, strndup, qsort_r, open_memstream */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli_common.h"
#include "commands.h"
#include "cov_campaign.h"
#include "db_cli.h"
#include "db_collect.h"
#include "db_conn.h"
#include "db_hash.h"
#include "db_ingest.h"
#include "db_query.h"
#include "db_schema.h"
#include "options.h"

enum { FMT_TABLE, FMT_CSV, FMT_JSON };
enum { SORT_CALLS, SORT_SELF, SORT_TOTAL }; /* sort_keys' order in options.c */

/* ---- common ----------------------------------------------------------------------------- */

/* "ptcall db CMD: what: advice" for a database error e; returns 1. */
static int db_error(const char *cmd, struct db *d, int e)
{
    return cli_fail(cmd, d->err, db_cli_advice(d->ops == &db_pg_ops, e));
}

static int open_db(const char *cmd, const struct cli_values *v, struct db *d, enum db_mode mode)
{
    const char *url = v->db.url ? v->db.url : db_default_url();
    int e = db_open(d, url, mode);
    return e ? db_error(cmd, d, e) : 0;
}

/* RUN arguments into ids. Returns 0, or 2 after the usage error. */
static int parse_ids(enum cli_cmd cmd, const struct cli_values *v, struct db_ids *ids)
{
    ids->v = calloc((size_t)v->npos + 1, sizeof(*ids->v));
    ids->n = 0;
    if (!ids->v)
        return cli_fail(cli_commands[cmd].name, "out of memory", cli_advice(PTC_E_NOMEM));
    for (int i = 0; i < v->npos; i++) {
        char *end;
        long long x = strtoll(v->pos[i], &end, 10);
        if (end == v->pos[i] || *end || x <= 0) {
            db_ids_free(ids);
            return cli_usage_error(cmd, "'%s' is not a run id (a whole number, as 'ptcall db "
                                        "list' shows)",
                                   v->pos[i]);
        }
        int seen = 0; /* a run given twice is one run (rm would not find it again) */
        for (size_t k = 0; k < ids->n; k++)
            seen |= ids->v[k] == x;
        if (!seen)
            ids->v[ids->n++] = x;
    }
    return 0;
}

static void filter_of(const struct cli_values *v, struct db_filter *f)
{
    memset(f, 0, sizeof(*f));
    f->tags = v->db.tags.v;
    f->ntags = v->db.tags.n;
    f->programs = v->db.programs.v;
    f->nprograms = v->db.programs.n;
    f->has_since = v->db.has_since;
    f->since_ns = v->db.since.ns;
    f->has_until = v->db.has_until;
    f->until_ns = v->db.until.ns;
    f->runs = v->db.runs;
}

static void fmt_date(char *buf, size_t n, int64_t ns)
{
    time_t t = (time_t)(ns / 1000000000);
    struct tm tm;
    if (!localtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf(buf, n, "@%lld", (long long)t);
}

static void fmt_exit(char *buf, size_t n, const struct db_run *r)
{
    if (r->has_exit)
        snprintf(buf, n, "%d", r->exit_status);
    else if (r->has_signal)
        snprintf(buf, n, "SIG%s%s", sigabbrev_np(r->signal) ? sigabbrev_np(r->signal) : "?",
                 r->core_dumped ? "+core" : "");
    else
        snprintf(buf, n, "-");
}

static const char *quality(const struct db_run *r)
{
    return !r->complete ? "INCOMPLETE" : r->lossy ? "lossy" : "complete";
}

static void json_i(FILE *f, int has, int64_t v)
{
    if (has)
        fprintf(f, "%lld", (long long)v);
    else
        fputs("null", f);
}

static void json_s(FILE *f, const char *s)
{
    if (s)
        cli_json_str(f, s);
    else
        fputs("null", f);
}

/* A run as a JSON object (docs/db.md, docs/schema/db-*.schema.json). */
static void json_run(FILE *f, const struct db_run *r, int with_modules, const char *indent)
{
    /* every string as the database holds it, escaped (a database is a file: any bytes) */
    fprintf(f, "{\"id\": %lld, \"content_hash\": ", (long long)r->id);
    json_s(f, r->content_hash);
    fputs(", \"trace\": ", f);
    json_s(f, r->trace);
    fprintf(f, ", \"trace_bytes\": %lld, \"program\": ", (long long)r->trace_bytes);
    json_s(f, r->program);
    fputs(", \"program_path\": ", f);
    json_s(f, r->program_path);
    fputs(", \"command_line\": ", f);
    json_s(f, r->command);
    fputs(", \"host\": ", f);
    json_s(f, r->host);
    fprintf(f, ",\n%s \"added_ns\": %lld, \"start_ns\": ", indent, (long long)r->added_ns);
    json_i(f, r->has_start, r->start_ns);
    fputs(", \"duration_ns\": ", f);
    json_i(f, r->has_duration, r->duration_ns);
    fputs(", \"command\": ", f);
    if (r->has_exit)
        fprintf(f, "{\"exit_status\": %d, \"signal\": null, \"core_dumped\": false}",
                r->exit_status);
    else if (r->has_signal)
        fprintf(f, "{\"exit_status\": null, \"signal\": %d, \"core_dumped\": %s}", r->signal,
                r->core_dumped ? "true" : "false");
    else
        fputs("null", f);
    fputs(", \"backend\": ", f);
    json_s(f, r->backend);
    fprintf(f, ", \"timed\": %s, \"time_unit\": ", r->timed ? "true" : "false");
    json_s(f, r->time_unit);
    fprintf(f, ",\n%s \"totals\": {", indent);
    for (int i = 0; i < DB_NCOUNTERS; i++)
        fprintf(f, "%s\"%s\": %llu", i ? ", " : "", db_counter_names[i],
                (unsigned long long)r->counters[i]);
    for (int i = 0; i < DB_NWINDOW; i++)
        fprintf(f, ", \"%s\": %llu", db_window_names[i], (unsigned long long)r->window[i]);
    fprintf(f, ", \"complete\": %s, \"lossy\": %s, \"total_time\": ", r->complete ? "true" : "false",
            r->lossy ? "true" : "false");
    json_i(f, r->timed, (int64_t)r->total_time);
    fputs("},\n", f);
    fprintf(f, "%s \"selection\": ", indent);
    if (r->selection) {
        fputs("{\"spec\": ", f);
        cli_json_str(f, r->selection);
        fprintf(f, ", \"traced\": %llu}", (unsigned long long)r->traced_functions);
    } else {
        fputs("null", f);
    }
    fprintf(f, ", \"functions\": %llu, \"edges\": %llu, \"tags\": {",
            (unsigned long long)r->functions, (unsigned long long)r->edges);
    for (size_t i = 0; i < r->ntags; i++) {
        fputs(i ? ", " : "", f);
        cli_json_str(f, r->tags[i].name);
        fputs(": ", f);
        cli_json_str(f, r->tags[i].value);
    }
    fputs("}", f);
    if (with_modules) {
        fprintf(f, ",\n%s \"modules\": [", indent);
        for (size_t i = 0; i < r->nmods; i++) {
            fputs(i ? ", " : "", f);
            fputs("{\"path\": ", f);
            cli_json_str(f, r->mods[i].path);
            fputs(", \"identity\": ", f);
            if (r->mods[i].identity && *r->mods[i].identity)
                cli_json_str(f, r->mods[i].identity);
            else
                fputs("null", f);
            fputs(", \"build_id\": ", f);
            if (r->mods[i].build_id)
                cli_json_str(f, r->mods[i].build_id);
            else
                fputs("null", f);
            fprintf(f, ", \"functions\": %lld}", (long long)r->mods[i].functions);
        }
        fputs("]", f);
    }
    fputs("}", f);
}

/* NAME=VALUE pairs; text: escaped for a text table (cli_text_str), else as they are (a CSV
 * field escapes the whole). */
static void tags_text(FILE *f, const struct db_run *r, const char *sep, int text)
{
    for (size_t i = 0; i < r->ntags; i++) {
        fputs(i ? sep : "", f);
        if (text) {
            cli_text_str(f, r->tags[i].name);
            fputc('=', f);
            cli_text_str(f, r->tags[i].value);
        } else {
            fprintf(f, "%s=%s", r->tags[i].name, r->tags[i].value);
        }
    }
}

/* ---- db add ----------------------------------------------------------------------------- */

/* cli_decode()'s prepare: the content hash sees every byte the decoder reads. */
static int with_hash(void *ctx, struct ptc_session *s)
{
    ptc_session_set_read_hook(s, db_hash_stream_update, ctx);
    return 0;
}

/* A decoded trace that was damaged (cli_decode with salvage read past the damage) is not
 * stored: a run is a whole trace (docs/db.md). s, or NULL after saying so. */
static struct ptc_session *whole(const struct cli_args *a, struct ptc_session *s)
{
    if (!s || !a->damage)
        return s;
    char what[1200];
    snprintf(what, sizeof(what), "%.600s: nothing was stored", a->damage_msg);
    cli_fail(a->cmd, what,
             "db add stores whole traces only; 'ptcall report --salvage' reads what precedes "
             "the damage");
    ptc_session_free(s);
    return NULL;
}

/* Stores one trace. Returns 0, or 1 after saying why it was not stored. */
static int add_one(struct db *d, const struct cli_values *v, const char *path,
                   const struct db_tag *tags, size_t ntags)
{
    const char *cmd = "db add";
    char hex[DB_HASH_HEX], err[600];
    uint64_t bytes = 0;
    int hrc;
    struct ptc_session *s;
    /* decoded with salvage (whole() refuses what it would skip), so that damage is said
     * here with what works for db add; a file that cannot be read is said first, as itself */
    FILE *probe = fopen(path, "rb");
    if (!probe) {
        snprintf(err, sizeof(err), "cannot read %s: %s", path, strerror(errno));
        return cli_fail(cmd, err, cli_advice(PTC_E_IO));
    }
    fclose(probe);
    if (v->threads == 1) {
        /* the content hash of the bytes the decoder reads, as it reads them (the decoder's
         * read hook), while they are in the cache: no second read of the file and no second
         * thread. It costs `db add` about 2 % of report's CPU time on a 10^8-event trace;
         * reading the file again on a second thread cost 7 % more CPU, which a machine
         * without a free core pays in wall time (docs/db.md, Speed) */
        struct db_hash_stream *hs = db_hash_stream_new();
        if (!hs)
            return cli_fail(cmd, "out of memory", cli_advice(PTC_E_NOMEM));
        struct cli_args a = {.cmd = cmd, .path = path, .threads = 1, .salvage = 1,
                             .prepare = with_hash, .prepare_ctx = hs};
        s = whole(&a, cli_decode(&a, NULL, NULL, NULL, NULL));
        db_hash_stream_finish(hs, hex, &bytes);
        /* the decoder reads a whole trace to its end; should it ever stop short, the file is
         * hashed whole on its own */
        struct stat st;
        hrc = 0;
        if (s && (stat(path, &st) || (uint64_t)st.st_size != bytes)) {
            struct db_hash *h = db_hash_start(path);
            if (!h) {
                ptc_session_free(s);
                return cli_fail(cmd, "out of memory", cli_advice(PTC_E_NOMEM));
            }
            hrc = db_hash_finish(h, hex, &bytes, err, sizeof(err));
        }
    } else {
        /* a parallel decode reads the file in parts: the hash reads it on a thread of its
         * own meanwhile */
        struct db_hash *h = db_hash_start(path);
        if (!h)
            return cli_fail(cmd, "out of memory", cli_advice(PTC_E_NOMEM));
        struct cli_args a = {.cmd = cmd, .path = path, .threads = v->threads, .salvage = 1};
        s = whole(&a, cli_decode(&a, NULL, NULL, NULL, NULL));
        hrc = db_hash_finish(h, hex, &bytes, err, sizeof(err));
    }
    if (!s) /* cli_decode said why */
        return 1;
    if (hrc) {
        ptc_session_free(s);
        return cli_fail(cmd, err, "check the file and its permissions");
    }
    int64_t id = 0, existing = 0;
    int found, e = db_find_hash(d, hex, &existing, &found);
    if (!e && found) {
        ptc_session_free(s);
        char what[700];
        snprintf(what, sizeof(what), "%s is stored already as run %lld (the same content hash, %.16s...)",
                 path, (long long)existing, hex);
        char advice[160];
        snprintf(advice, sizeof(advice), "nothing was added; 'ptcall db rm %lld' first to store "
                                         "it again", (long long)existing);
        return cli_fail(cmd, what, advice);
    }
    struct db_collected c;
    memset(&c, 0, sizeof(c));
    if (!e && db_collect(&c, s, path, hex, bytes)) {
        ptc_session_free(s);
        return cli_fail(cmd, "out of memory", cli_advice(PTC_E_NOMEM));
    }
    if (!e) {
        c.in.tags = tags;
        c.in.ntags = ntags;
        e = db_ingest(d, &c.in, &id, &existing);
    }
    if (!e) {
        printf("run %lld: ", (long long)id);
        cli_text_str(stdout, path);
        printf(" (");
        cli_text_str(stdout, c.in.program);
        printf(", %llu events, %zu functions called, %s)\n",
               (unsigned long long)c.in.counters[DB_C_EVENTS], c.in.nfuncs,
               !c.in.complete ? "INCOMPLETE" : c.in.lossy ? "lossy" : "complete");
    }
    int rc = 0;
    if (e == -DB_E_CONSTRAINT) {
        char what[700];
        snprintf(what, sizeof(what), "%s is stored already as run %lld (added meanwhile by "
                                     "another process)", path, (long long)existing);
        rc = cli_fail(cmd, what, "nothing was added");
    } else if (e) {
        char msg[sizeof(d->err) + 64];
        snprintf(msg, sizeof(msg), "%.300s was not stored: %.700s", path, d->err);
        snprintf(d->err, sizeof(d->err), "%.1000s", msg);
        rc = db_error(cmd, d, e);
    }
    db_collected_free(&c);
    ptc_session_free(s);
    return rc;
}

int cmd_db_add(int argc, char **argv)
{
    struct cli_values v;
    int r = cli_parse(CMD_DB_ADD, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    if (!v.npos) {
        cli_values_free(&v);
        return cli_usage_error(CMD_DB_ADD, "no trace file given");
    }
    r = 0;
    struct db_tag *tags = NULL;
    char **names = NULL, terr[300];
    int te = db_cli_tags(v.db.tags.v, v.db.tags.n, &tags, &names, terr, sizeof(terr));
    if (te == -1)
        r = cli_usage_error(CMD_DB_ADD, "%s", terr);
    else if (te)
        r = cli_fail("db add", "out of memory", cli_advice(PTC_E_NOMEM));
    struct db d;
    if (!r)
        r = open_db("db add", &v, &d, DB_WRITE);
    if (!r) {
        int failed = 0;
        for (int i = 0; i < v.npos; i++)
            failed += (cov_is_ptcov(v.pos[i]) /* a campaign's part (cov_campaign.c) */
                           ? cov_add_file("db add", &d, v.pos[i], v.cov.campaign, tags,
                                          (size_t)v.db.tags.n)
                           : add_one(&d, &v, v.pos[i], tags, (size_t)v.db.tags.n)) != 0;
        db_close(&d);
        if (failed && v.npos > 1)
            fprintf(stderr, "ptcall db add: %d of %d traces were not stored\n", failed, v.npos);
        r = failed ? 1 : cli_flush_output("db add", "the runs added");
    }
    db_cli_tags_free(tags, names, v.db.tags.n);
    cli_values_free(&v);
    return r;
}

/* ---- db list ---------------------------------------------------------------------------- */

static void list_table(const char *where, const struct db_run *runs, size_t n)
{
    printf("# ptcall db list: %zu run%s in ", n, n == 1 ? "" : "s");
    cli_text_str(stdout, where);
    printf("\n");
    printf("%6s  %-19s  %-16s  %-12s  %-7s  %12s  %6s  %12s  %9s  %-10s  %s\n", "run", "recorded",
           "program", "host", "backend", "duration", "exit", "events", "functions", "quality",
           "tags");
    for (size_t i = 0; i < n; i++) {
        const struct db_run *r = &runs[i];
        char date[32], dur[32], ex[32];
        fmt_date(date, sizeof(date), r->has_start ? r->start_ns : r->added_ns);
        if (r->has_duration)
            cli_fmt_time(dur, sizeof(dur), (uint64_t)r->duration_ns, 1);
        else
            snprintf(dur, sizeof(dur), "-");
        fmt_exit(ex, sizeof(ex), r);
        printf("%6lld  %-19s  ", (long long)r->id, date);
        cli_text_pad(stdout, r->program, 16);
        printf("  ");
        cli_text_pad(stdout, r->host, 12);
        printf("  %-7s  %12s  %6s  %12llu  %9llu  %-10s  ", r->backend, dur, ex,
               (unsigned long long)r->counters[DB_C_EVENTS], (unsigned long long)r->functions,
               quality(r));
        tags_text(stdout, r, " ", 1);
        putchar('\n');
    }
}

static void list_csv(const struct db_run *runs, size_t n)
{
    printf("run,start_ns,added_ns,program,program_path,host,backend,time_unit,duration_ns,"
           "exit_status,signal,events,calls,functions,edges,gaps,lost_events,complete,lossy,"
           "trace,content_hash,tags\n");
    for (size_t i = 0; i < n; i++) {
        const struct db_run *r = &runs[i];
        printf("%lld,", (long long)r->id);
        if (r->has_start)
            printf("%lld", (long long)r->start_ns);
        printf(",%lld,", (long long)r->added_ns);
        cli_csv_str(stdout, r->program);
        putchar(',');
        cli_csv_str(stdout, r->program_path ? r->program_path : "");
        putchar(',');
        cli_csv_str(stdout, r->host);
        printf(",%s,%s,", r->backend, r->time_unit);
        if (r->has_duration)
            printf("%lld", (long long)r->duration_ns);
        putchar(',');
        if (r->has_exit)
            printf("%d", r->exit_status);
        putchar(',');
        if (r->has_signal)
            printf("%d", r->signal);
        printf(",%llu,%llu,%llu,%llu,%llu,%llu,%d,%d,",
               (unsigned long long)r->counters[DB_C_EVENTS],
               (unsigned long long)r->counters[DB_C_CALLS], (unsigned long long)r->functions,
               (unsigned long long)r->edges, (unsigned long long)r->counters[DB_C_GAPS],
               (unsigned long long)r->counters[DB_C_LOST_EVENTS], r->complete, r->lossy);
        cli_csv_str(stdout, r->trace);
        printf(",%s,", r->content_hash);
        /* NAME=VALUE;NAME=VALUE as one field */
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        if (m) {
            tags_text(m, r, ";", 0);
            fclose(m);
            cli_csv_str(stdout, buf ? buf : "");
        }
        free(buf);
        putchar('\n');
    }
}

static void list_json(const char *where, const struct db_run *runs, size_t n)
{
    printf("{\n  \"format_version\": 1,\n  \"tool\": \"ptcall db list\",\n  \"database\": ");
    cli_json_str(stdout, where);
    printf(",\n  \"schema_version\": %d,\n  \"runs\": [", DB_SCHEMA_VERSION);
    for (size_t i = 0; i < n; i++) {
        printf("%s\n    ", i ? "," : "");
        json_run(stdout, &runs[i], 0, "    ");
    }
    printf("\n  ]\n}\n");
}

int cmd_db_list(int argc, char **argv)
{
    struct cli_values v;
    int r = cli_parse(CMD_DB_LIST, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    if (v.npos) {
        r = cli_usage_error(CMD_DB_LIST, "unexpected argument '%s' (--runs chooses runs by id)",
                            v.pos[0]);
        cli_values_free(&v);
        return r;
    }
    struct db d;
    if ((r = open_db("db list", &v, &d, DB_READ))) {
        cli_values_free(&v);
        return r;
    }
    struct db_filter f;
    filter_of(&v, &f);
    struct db_ids ids;
    struct db_run *runs = NULL;
    int e = db_select(&d, &f, &ids);
    if (!e)
        e = db_runs_get(&d, &ids, 0, &runs);
    if (e) {
        r = db_error("db list", &d, e);
    } else {
        if (v.format == FMT_CSV)
            list_csv(runs, ids.n);
        else if (v.format == FMT_JSON)
            list_json(d.where, runs, ids.n);
        else
            list_table(d.where, runs, ids.n);
        r = cli_flush_output("db list", "the list");
        db_runs_free(runs, ids.n);
    }
    db_ids_free(&ids);
    db_close(&d);
    cli_values_free(&v);
    return r;
}

/* ---- db show ---------------------------------------------------------------------------- */

static int sort_of(const struct cli_values *v, int timed)
{
    return v->sort >= 0 ? v->sort : timed ? SORT_SELF : SORT_CALLS;
}

static uint64_t key_of(const struct db_func_out *f, int sort)
{
    return sort == SORT_SELF ? f->self : sort == SORT_TOTAL ? f->total : f->calls;
}

static int cmp_func(const void *x, const void *y, void *ctx)
{
    const struct db_func_out *a = x, *b = y;
    int sort = *(const int *)ctx;
    uint64_t p = key_of(a, sort), q = key_of(b, sort);
    if (p != q)
        return p > q ? -1 : 1;
    if (a->calls != b->calls)
        return a->calls > b->calls ? -1 : 1;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->id < b->id ? -1 : a->id > b->id);
}

static double pct(uint64_t v, uint64_t total)
{
    return total ? 100.0 * (double)v / (double)total : 0.0;
}

static void show_table(const char *where, const struct db_run *r, const struct db_func_out *fn,
                       size_t n, size_t shown)
{
    char date[32], added[32], dur[32], ex[96];
    int ns = !strcmp(r->time_unit, "ns");
    printf("# ptcall db show: run %lld of ", (long long)r->id);
    cli_text_str(stdout, where);
    printf("\nprogram     ");
    cli_text_str(stdout, r->program);
    if (r->program_path) {
        printf(" (");
        cli_text_str(stdout, r->program_path);
        printf(")");
    }
    printf("\ncommand     ");
    cli_text_str(stdout, r->command ? r->command : "(not in the trace)");
    printf("\nhost        ");
    cli_text_str(stdout, r->host);
    printf(" (the host that ran 'ptcall db add')\n");
    fmt_date(date, sizeof(date), r->start_ns);
    if (r->has_duration)
        cli_fmt_time(dur, sizeof(dur), (uint64_t)r->duration_ns, 1);
    printf("recorded    %s%s%s\n", r->has_start ? date : "(not in the trace)",
           r->has_duration ? ", lasted " : "", r->has_duration ? dur : "");
    if (r->has_exit)
        snprintf(ex, sizeof(ex), "exited %d", r->exit_status);
    else if (r->has_signal)
        snprintf(ex, sizeof(ex), "was killed by signal %d (SIG%s)%s", r->signal,
                 sigabbrev_np(r->signal) ? sigabbrev_np(r->signal) : "?",
                 r->core_dumped ? ", core dumped" : "");
    else
        snprintf(ex, sizeof(ex), "not known (the trace has no RECORD_END)");
    printf("command end %s\n", ex);
    printf("backend     %s, %s\n", r->backend,
           !r->timed ? "untimed (calls only)" : ns ? "times in ns" : "times in TSC ticks");
    printf("trace       ");
    cli_text_str(stdout, r->trace);
    printf(" (%lld bytes, content hash %s)\n", (long long)r->trace_bytes, r->content_hash);
    fmt_date(added, sizeof(added), r->added_ns);
    printf("added       %s\n", added);
    printf("quality     %s: events %llu, threads %llu, processes %llu, gaps %llu, lost events "
           "%llu, unfinished processes %llu\n",
           quality(r), (unsigned long long)r->counters[DB_C_EVENTS],
           (unsigned long long)r->counters[DB_C_THREADS],
           (unsigned long long)r->counters[DB_C_PROCESSES],
           (unsigned long long)r->counters[DB_C_GAPS],
           (unsigned long long)r->counters[DB_C_LOST_EVENTS],
           (unsigned long long)r->counters[DB_C_UNFINISHED_PROCESSES]);
    if (r->selection) {
        printf("selection   ");
        cli_text_str(stdout, r->selection);
        printf(": %llu functions traced\n", (unsigned long long)r->traced_functions);
    }
    printf("tags        ");
    tags_text(stdout, r, " ", 1);
    printf("%s\n", r->ntags ? "" : "(none)");
    for (size_t i = 0; i < r->nmods; i++) {
        printf("%s ", i ? "           " : "modules    ");
        cli_text_str(stdout, r->mods[i].path);
        printf(" (%s", r->mods[i].identity[0] ? "identity " : "identity not known");
        cli_text_str(stdout, r->mods[i].identity);
        printf("%s", r->mods[i].build_id ? ", build id " : "");
        cli_text_str(stdout, r->mods[i].build_id ? r->mods[i].build_id : "");
        printf(", %lld functions)\n", (long long)r->mods[i].functions);
    }
    printf("functions   %llu called, %llu caller->callee edges\n",
           (unsigned long long)r->functions, (unsigned long long)r->edges);
    if (r->timed) {
        char tt[32];
        cli_fmt_time(tt, sizeof(tt), r->total_time, ns);
        printf("# time in traced functions: %s (shares are of this total)\n", tt);
        printf("%12s %14s %7s %14s %7s  %s\n", "calls", "total", "total%", "self", "self%",
               "function [module]");
    } else {
        printf("%12s  %s\n", "calls", "function [module]");
    }
    for (size_t i = 0; i < shown; i++) {
        const struct db_func_out *f = &fn[i];
        const char *mod = f->module_path ? f->module_path : f->module;
        const char *base = strrchr(mod, '/') ? strrchr(mod, '/') + 1 : mod;
        if (r->timed) {
            char tb[32], sb[32];
            cli_fmt_time(tb, sizeof(tb), f->total, ns);
            cli_fmt_time(sb, sizeof(sb), f->self, ns);
            printf("%12llu %14s %6.1f%% %14s %6.1f%%  ", (unsigned long long)f->calls, tb,
                   pct(f->total, r->total_time), sb, pct(f->self, r->total_time));
        } else {
            printf("%12llu  ", (unsigned long long)f->calls);
        }
        cli_text_str(stdout, f->name);
        printf(" [");
        cli_text_str(stdout, base);
        printf("]\n");
    }
    if (shown < n)
        printf("(%zu more functions called; --top 0 shows all)\n", n - shown);
}

static void show_csv(const struct db_run *r, const struct db_func_out *fn, size_t shown)
{
    printf("rank,function,linkage_name,module,file,line,calls,total,self,total_pct,self_pct\n");
    for (size_t i = 0; i < shown; i++) {
        const struct db_func_out *f = &fn[i];
        printf("%zu,", i + 1);
        cli_csv_func(stdout, f->name, f->linkage_name, f->module_path ? f->module_path : f->module,
                     f->file, f->line);
        printf(",%llu,", (unsigned long long)f->calls);
        if (r->timed)
            printf("%llu,%llu,%.2f,%.2f\n", (unsigned long long)f->total,
                   (unsigned long long)f->self, pct(f->total, r->total_time),
                   pct(f->self, r->total_time));
        else
            printf(",,,\n");
    }
}

static int cmp_func_id(const void *x, const void *y)
{
    const struct db_func_out *a = *(const struct db_func_out *const *)x;
    const struct db_func_out *b = *(const struct db_func_out *const *)y;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* The name of function id among the n functions fn, looked up in v (fn sorted by id; NULL
 * when there was no memory for it: a linear search), NULL when it is not there. */
static const char *name_of(const struct db_func_out *const *v, const struct db_func_out *fn,
                           size_t n, int64_t id)
{
    for (size_t j = 0; !v && j < n; j++)
        if (fn[j].id == id)
            return fn[j].name;
    if (!v)
        return NULL;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid]->id == id)
            return v[mid]->name;
        if (v[mid]->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static void show_json(const char *where, const struct db_run *r, const struct db_func_out *fn,
                      size_t n, size_t shown, int sort, const struct db_edge_out *e, size_t ne)
{
    static const char *const sorts[] = {"calls", "self", "total"};
    printf("{\n  \"format_version\": 1,\n  \"tool\": \"ptcall db show\",\n  \"database\": ");
    cli_json_str(stdout, where);
    printf(",\n  \"schema_version\": %d,\n  \"run\": ", DB_SCHEMA_VERSION);
    json_run(stdout, r, 1, "  ");
    printf(",\n  \"sort\": \"%s\",\n  \"functions\": [", sorts[sort]);
    for (size_t i = 0; i < shown; i++) {
        const struct db_func_out *f = &fn[i];
        printf("%s\n    {\"id\": %lld, ", i ? "," : "", (long long)f->id);
        cli_json_func(stdout, f->name, f->linkage_name, f->module_path ? f->module_path : f->module,
                      f->file, f->line);
        printf(", \"calls\": %llu, ", (unsigned long long)f->calls);
        if (r->timed)
            printf("\"total\": %llu, \"self\": %llu, \"total_pct\": %.2f, \"self_pct\": %.2f}",
                   (unsigned long long)f->total, (unsigned long long)f->self,
                   pct(f->total, r->total_time), pct(f->self, r->total_time));
        else
            printf("\"total\": null, \"self\": null, \"total_pct\": null, \"self_pct\": null}");
    }
    printf("\n  ],\n  \"more\": %zu,\n  \"edges\": [", n - shown);
    /* the edges among the functions shown, by their ids (looked up in a copy sorted by id:
     * a run of thousands of functions has thousands of edges) */
    const struct db_func_out **by_id = malloc((shown ? shown : 1) * sizeof(*by_id));
    for (size_t j = 0; by_id && j < shown; j++)
        by_id[j] = &fn[j];
    if (by_id)
        qsort(by_id, shown, sizeof(*by_id), cmp_func_id);
    size_t k = 0;
    for (size_t i = 0; i < ne; i++) {
        const char *caller = name_of(by_id, fn, shown, e[i].caller);
        const char *callee = name_of(by_id, fn, shown, e[i].callee);
        if (!caller || !callee)
            continue;
        printf("%s\n    {\"caller_id\": %lld, \"callee_id\": %lld, \"caller\": ", k++ ? "," : "",
               (long long)e[i].caller, (long long)e[i].callee);
        cli_json_str(stdout, caller);
        printf(", \"callee\": ");
        cli_json_str(stdout, callee);
        printf(", \"calls\": %llu}", (unsigned long long)e[i].calls);
    }
    free(by_id);
    printf("\n  ]\n}\n");
}

static int cmp_edge_calls(const void *x, const void *y)
{
    const struct db_edge_out *a = x, *b = y;
    if (a->calls != b->calls)
        return a->calls > b->calls ? -1 : 1;
    if (a->caller != b->caller)
        return a->caller < b->caller ? -1 : 1;
    return a->callee < b->callee ? -1 : a->callee > b->callee;
}

int cmd_db_show(int argc, char **argv)
{
    struct cli_values v;
    int r = cli_parse(CMD_DB_SHOW, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    if (v.npos != 1) {
        r = cli_usage_error(CMD_DB_SHOW, v.npos ? "one run at a time" : "no run given");
        cli_values_free(&v);
        return r;
    }
    struct db_ids ids;
    if ((r = parse_ids(CMD_DB_SHOW, &v, &ids))) {
        cli_values_free(&v);
        return r;
    }
    struct db d;
    if ((r = open_db("db show", &v, &d, DB_READ))) {
        db_ids_free(&ids);
        cli_values_free(&v);
        return r;
    }
    struct db_run *run = NULL;
    struct db_func_out *fn = NULL;
    struct db_edge_out *edges = NULL;
    size_t n = 0, ne = 0;
    int e = db_runs_get(&d, &ids, 1, &run);
    if (!e)
        e = db_run_functions(&d, run->id, &fn, &n);
    if (!e && v.format == FMT_JSON)
        e = db_run_edges(&d, run->id, &edges, &ne);
    if (e) {
        r = db_error("db show", &d, e);
    } else if (!run->timed && v.sort > SORT_CALLS) {
        r = cli_fail("db show", "the run is untimed: it has calls only",
                     "leave out --sort or give --sort calls");
    } else {
        int sort = sort_of(&v, run->timed);
        if (n) /* qsort of a null array is undefined even when empty */
            qsort_r(fn, n, sizeof(*fn), cmp_func, &sort);
        if (ne)
            qsort(edges, ne, sizeof(*edges), cmp_edge_calls);
        size_t shown = v.top && v.top < n ? (size_t)v.top : n;
        if (v.format == FMT_CSV)
            show_csv(run, fn, shown);
        else if (v.format == FMT_JSON)
            show_json(d.where, run, fn, n, shown, sort, edges, ne);
        else
            show_table(d.where, run, fn, n, shown);
        r = cli_flush_output("db show", "the run");
    }
    free(edges);
    db_funcs_free(fn, n);
    db_runs_free(run, run ? 1 : 0);
    db_close(&d);
    db_ids_free(&ids);
    cli_values_free(&v);
    return r;
}

/* ---- db rm ------------------------------------------------------------------------------ */

int cmd_db_rm(int argc, char **argv)
{
    struct cli_values v;
    int r = cli_parse(CMD_DB_RM, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    if (!v.npos) {
        cli_values_free(&v);
        return cli_usage_error(CMD_DB_RM, "no run given");
    }
    struct db_ids ids;
    if ((r = parse_ids(CMD_DB_RM, &v, &ids))) {
        cli_values_free(&v);
        return r;
    }
    struct db d;
    if (!(r = open_db("db rm", &v, &d, DB_CHANGE))) {
        int e = db_remove(&d, &ids);
        if (e) {
            if (e == -DB_E_STOP) { /* one is not there */
                char msg[sizeof(d.err) + 80];
                snprintf(msg, sizeof(msg), "%.500s in %.500s: no run was removed", d.err,
                         d.where);
                snprintf(d.err, sizeof(d.err), "%.1000s", msg);
            }
            r = db_error("db rm", &d, e);
        } else {
            for (size_t i = 0; i < ids.n; i++)
                printf("removed run %lld\n", (long long)ids.v[i]);
            r = cli_flush_output("db rm", "what was removed");
        }
        db_close(&d);
    }
    db_ids_free(&ids);
    cli_values_free(&v);
    return r;
}

/* ---- db query --------------------------------------------------------------------------- */

struct query {
    const struct db_hot *h;
    const int *stats;
    int nstats;
    int sort, timed, ns;
};

/* v as the statistic prints it: sums, maxima and minima are whole numbers, means, medians
 * and standard deviations have two decimals. */
static void print_stat(FILE *f, double v, int stat)
{
    if (stat == DB_STAT_SUM || stat == DB_STAT_MAX || stat == DB_STAT_MIN)
        fprintf(f, "%.0f", v);
    else
        fprintf(f, "%.2f", v);
}

static void query_table(const char *where, const struct query *q, const struct db_ids *ids,
                        size_t shown)
{
    const struct db_hot *h = q->h;
    static const char *const meas_word[] = {"calls", "total time", "self time"};
    int meas = q->sort == SORT_SELF ? DB_M_SELF : q->sort == SORT_TOTAL ? DB_M_TOTAL : DB_M_CALLS;
    printf("# ptcall db query: %zu run%s of ", ids->n, ids->n == 1 ? "" : "s");
    cli_text_str(stdout, where);
    printf(" (");
    for (size_t i = 0; i < ids->n && i < 12; i++)
        printf("%s%lld", i ? ", " : "", (long long)ids->v[i]);
    printf("%s), ranked by the %s of %s\n", ids->n > 12 ? ", ..." : "", db_stat_names[q->stats[0]],
           meas_word[meas]);
    if (h->mixed)
        printf("# the runs mix time units (ns, TSC ticks, untimed): calls only\n");
    else if (!q->timed)
        printf("# untimed runs: calls only\n");
    printf("# a run without a function counts as 0 in every statistic\n");
    /* the header names which standard deviation: the sample's, as report's */
    printf("%5s", "runs");
    for (int s = 0; s < q->nstats; s++)
        for (int m = 0; m < DB_NMEAS; m++)
            if (m == DB_M_CALLS || q->timed) {
                char col[32];
                int sd = q->stats[s] == DB_STAT_STDDEV;
                snprintf(col, sizeof(col), "%s_%s%s", db_meas_names[m],
                         db_stat_names[q->stats[s]], sd ? "(n-1)" : "");
                printf(" %*s", sd ? 17 : 14, col);
            }
    printf("  function [module]\n");
    for (size_t i = 0; i < shown; i++) {
        const struct db_hot_fn *f = &h->fn[i];
        printf("%5u", f->runs);
        for (int s = 0; s < q->nstats; s++)
            for (int m = 0; m < DB_NMEAS; m++) {
                int st = q->stats[s], w = st == DB_STAT_STDDEV ? 17 : 14;
                double x = f->v[m][st];
                if (m == DB_M_CALLS) {
                    if (st == DB_STAT_SUM || st == DB_STAT_MAX || st == DB_STAT_MIN)
                        printf(" %*.0f", w, x);
                    else
                        printf(" %*.2f", w, x);
                } else if (q->timed) {
                    char t[32];
                    cli_fmt_time(t, sizeof(t), (uint64_t)(x + 0.5), q->ns);
                    printf(" %*s", w, t);
                }
            }
        printf("  ");
        cli_text_str(stdout, f->f.name ? f->f.name : "?");
        printf(" [");
        cli_text_str(stdout, f->f.module ? f->f.module : "?");
        printf("]\n");
    }
    if (shown < h->n)
        printf("(%zu more functions called; --top 0 shows all)\n", h->n - shown);
}

static void query_csv(const struct query *q, size_t shown)
{
    printf("rank,function,linkage_name,module,file,line,runs");
    for (int s = 0; s < q->nstats; s++)
        for (int m = 0; m < DB_NMEAS; m++)
            printf(",%s_%s", db_meas_names[m], db_stat_names[q->stats[s]]);
    printf("\n");
    for (size_t i = 0; i < shown; i++) {
        const struct db_hot_fn *f = &q->h->fn[i];
        printf("%zu,", i + 1);
        cli_csv_func(stdout, f->f.name, f->f.linkage_name, f->f.module, f->f.file, f->f.line);
        printf(",%u", f->runs);
        for (int s = 0; s < q->nstats; s++)
            for (int m = 0; m < DB_NMEAS; m++) {
                putchar(',');
                if (m == DB_M_CALLS || q->timed)
                    print_stat(stdout, f->v[m][q->stats[s]], q->stats[s]);
            }
        printf("\n");
    }
}

static void query_json(const char *where, const struct query *q, const struct db_ids *ids,
                       size_t shown)
{
    static const char *const sorts[] = {"calls", "self", "total"};
    const struct db_hot *h = q->h;
    printf("{\n  \"format_version\": 1,\n  \"tool\": \"ptcall db query\",\n  \"database\": ");
    cli_json_str(stdout, where);
    printf(",\n  \"schema_version\": %d,\n  \"runs\": [", DB_SCHEMA_VERSION);
    for (size_t i = 0; i < ids->n; i++)
        printf("%s%lld", i ? ", " : "", (long long)ids->v[i]);
    printf("],\n  \"timed\": %s,\n  \"time_unit\": \"%s\",\n  \"mixed_time_units\": %s,\n",
           q->timed ? "true" : "false", h->time_unit, h->mixed ? "true" : "false");
    printf("  \"stats\": [");
    for (int s = 0; s < q->nstats; s++)
        printf("%s\"%s\"", s ? ", " : "", db_stat_names[q->stats[s]]);
    printf("],\n  \"sort\": \"%s\",\n  \"functions\": [", sorts[q->sort]);
    for (size_t i = 0; i < shown; i++) {
        const struct db_hot_fn *f = &h->fn[i];
        printf("%s\n    {", i ? "," : "");
        cli_json_func(stdout, f->f.name, f->f.linkage_name, f->f.module, f->f.file, f->f.line);
        printf(", \"runs\": %u", f->runs);
        for (int s = 0; s < q->nstats; s++)
            for (int m = 0; m < DB_NMEAS; m++) {
                printf(", \"%s_%s\": ", db_meas_names[m], db_stat_names[q->stats[s]]);
                if (m == DB_M_CALLS || q->timed)
                    print_stat(stdout, f->v[m][q->stats[s]], q->stats[s]);
                else
                    printf("null");
            }
        printf("}");
    }
    printf("\n  ],\n  \"more\": %zu\n}\n", h->n - shown);
}

int cmd_db_query(int argc, char **argv)
{
    struct cli_values v;
    int r = cli_parse(CMD_DB_QUERY, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    if (v.npos) {
        r = cli_usage_error(CMD_DB_QUERY, "unexpected argument '%s' (--runs chooses runs by id)",
                            v.pos[0]);
        cli_values_free(&v);
        return r;
    }
    int stats[DB_NSTATS] = {DB_STAT_SUM}, nstats = 1;
    if (v.db.stats.n) {
        nstats = v.db.stats.n;
        memcpy(stats, v.db.stats.v, (size_t)nstats * sizeof(int));
    }
    uint64_t top = cli_given(&v, "--top") ? v.top : v.format == FMT_TABLE ? 20 : 0;
    /* medians cost a read of every run's row of each function: only of those shown */
    struct db_hot_ask ask = {stats[0], -1, 0};
    for (int s = 0; s < nstats; s++)
        if (stats[s] == DB_STAT_MEDIAN)
            ask.medians = top ? (size_t)top : SIZE_MAX;
    if (v.sort == SORT_SELF || v.sort == SORT_TOTAL || v.sort == SORT_CALLS)
        ask.meas = v.sort == SORT_SELF ? DB_M_SELF : v.sort == SORT_TOTAL ? DB_M_TOTAL : DB_M_CALLS;
    struct db d;
    if ((r = open_db("db query", &v, &d, DB_READ))) {
        cli_values_free(&v);
        return r;
    }
    struct db_filter f;
    filter_of(&v, &f);
    struct db_ids ids;
    struct db_hot h;
    memset(&h, 0, sizeof(h));
    int e = db_select(&d, &f, &ids);
    if (!e)
        e = db_hot(&d, &ids, &ask, &h);
    if (e) {
        r = db_error("db query", &d, e);
    } else if (!ids.n) {
        r = cli_fail("db query", "no run of the database matches the filters",
                     "'ptcall db list' with the same filters shows which runs they keep");
    } else if (!h.timed && v.sort > SORT_CALLS) {
        r = cli_fail("db query",
                     h.mixed ? "the chosen runs mix time units (ns, TSC ticks, untimed): they "
                               "compare by calls only"
                             : "the chosen runs are untimed: they have calls only",
                     "leave out --sort, give --sort calls, or choose runs of one kind");
    } else {
        struct query q = {&h, stats, nstats, sort_of(&v, h.timed), h.timed,
                          !strcmp(h.time_unit, "ns")};
        size_t shown = top && top < h.n ? (size_t)top : h.n;
        if (v.format == FMT_CSV)
            query_csv(&q, shown);
        else if (v.format == FMT_JSON)
            query_json(d.where, &q, &ids, shown);
        else
            query_table(d.where, &q, &ids, shown);
        r = cli_flush_output("db query", "the ranking");
    }
    db_hot_free(&h);
    db_ids_free(&ids);
    db_close(&d);
    cli_values_free(&v);
    return r;
}
