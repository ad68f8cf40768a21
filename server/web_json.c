/* The JSON pieces the API views share (web_internal.h): the document's head, a run as
 * `ptcall db list --format json` writes it, a function's identity. */
#include <string.h>

#include "db_schema.h"
#include "web_internal.h"

void web_json_head(struct sbuf *b, const struct web_ctx *c, const char *api)
{
    sb_printf(b, "{\"format_version\": %d, \"tool\": \"ptcall serve\", \"api\": ", WEB_API_VERSION);
    sb_json_str(b, api);
    sb_puts(b, ", \"database\": ");
    sb_json_str(b, c->where);
    sb_printf(b, ", \"schema_version\": %d", DB_SCHEMA_VERSION);
}

void web_json_u(struct sbuf *b, int has, uint64_t v)
{
    if (has)
        sb_printf(b, "%llu", (unsigned long long)v);
    else
        sb_puts(b, "null");
}

static void json_i(struct sbuf *b, int has, int64_t v)
{
    if (has)
        sb_printf(b, "%lld", (long long)v);
    else
        sb_puts(b, "null");
}

void web_json_run(struct sbuf *b, const struct db_run *r)
{
    sb_printf(b, "{\"id\": %lld, \"content_hash\": ", (long long)r->id);
    sb_json_str(b, r->content_hash);
    sb_puts(b, ", \"trace\": ");
    sb_json_str(b, r->trace);
    sb_printf(b, ", \"trace_bytes\": %lld, \"program\": ", (long long)r->trace_bytes);
    sb_json_str(b, r->program);
    sb_puts(b, ", \"program_path\": ");
    sb_json_str(b, r->program_path);
    sb_puts(b, ", \"command_line\": ");
    sb_json_str(b, r->command);
    sb_puts(b, ", \"host\": ");
    sb_json_str(b, r->host);
    sb_printf(b, ", \"added_ns\": %lld, \"start_ns\": ", (long long)r->added_ns);
    json_i(b, r->has_start, r->start_ns);
    sb_puts(b, ", \"duration_ns\": ");
    json_i(b, r->has_duration, r->duration_ns);
    sb_puts(b, ", \"command\": ");
    if (r->has_exit || r->has_signal) {
        sb_puts(b, "{\"exit_status\": ");
        json_i(b, r->has_exit, r->exit_status);
        sb_puts(b, ", \"signal\": ");
        json_i(b, r->has_signal, r->signal);
        sb_printf(b, ", \"core_dumped\": %s}", r->core_dumped ? "true" : "false");
    } else {
        sb_puts(b, "null");
    }
    sb_puts(b, ", \"backend\": ");
    sb_json_str(b, r->backend);
    sb_printf(b, ", \"timed\": %s, \"time_unit\": ", r->timed ? "true" : "false");
    sb_json_str(b, r->time_unit);
    sb_puts(b, ", \"totals\": {");
    for (int i = 0; i < DB_NCOUNTERS; i++)
        sb_printf(b, "%s\"%s\": %llu", i ? ", " : "", db_counter_names[i],
                  (unsigned long long)r->counters[i]);
    for (int i = 0; i < DB_NWINDOW; i++)
        sb_printf(b, ", \"%s\": %llu", db_window_names[i], (unsigned long long)r->window[i]);
    sb_printf(b, ", \"complete\": %s, \"lossy\": %s, \"total_time\": ",
              r->complete ? "true" : "false", r->lossy ? "true" : "false");
    web_json_u(b, r->timed, r->total_time);
    sb_puts(b, "}, \"quality\": ");
    sb_json_str(b, !r->complete ? "INCOMPLETE" : r->lossy ? "lossy" : "complete");
    sb_puts(b, ", \"selection\": ");
    sb_json_str(b, r->selection);
    /* within a budget (docs/usage.md, Traces recorded within a budget) */
    sb_printf(b, ", \"counted_functions\": %llu, \"counted_calls\": %llu, \"budget\": ",
              (unsigned long long)r->counted_functions, (unsigned long long)r->counted_calls);
    if (r->has_budget) {
        sb_puts(b, "{\"kind\": ");
        sb_json_str(b, r->budget_kind);
        sb_puts(b, ", \"source\": ");
        sb_json_str(b, r->budget_source);
        sb_printf(b, ", \"limit\": %.17g, \"predicted\": %.17g, \"outcome\": ", r->budget_limit,
                  r->budget_predicted);
        sb_json_str(b, r->budget_outcome);
        sb_puts(b, ", \"note\": ");
        sb_json_str(b, r->budget_note);
        sb_puts(b, "}");
    } else {
        sb_puts(b, "null");
    }
    /* a budget's governor: functions traced, then counted (schema 7) */
    sb_printf(b, ", \"demoted_functions\": %llu, \"budget_demotions\": %llu",
              (unsigned long long)r->demoted_functions, (unsigned long long)r->budget_demotions);
    sb_printf(b, ", \"functions\": %llu, \"edges\": %llu, \"tags\": {",
              (unsigned long long)r->functions, (unsigned long long)r->edges);
    for (size_t i = 0; i < r->ntags; i++) {
        sb_puts(b, i ? ", " : "");
        sb_json_str(b, r->tags[i].name);
        sb_puts(b, ": ");
        sb_json_str(b, r->tags[i].value);
    }
    sb_puts(b, "}");
    if (r->mods) {
        sb_puts(b, ", \"modules\": [");
        for (size_t i = 0; i < r->nmods; i++) {
            sb_puts(b, i ? ", {\"path\": " : "{\"path\": ");
            sb_json_str(b, r->mods[i].path);
            sb_puts(b, ", \"identity\": ");
            sb_json_str(b, r->mods[i].identity);
            sb_puts(b, ", \"build_id\": ");
            if (r->mods[i].build_id)
                sb_json_str(b, r->mods[i].build_id);
            else
                sb_puts(b, "null");
            sb_printf(b, ", \"functions\": %lld}", (long long)r->mods[i].functions);
        }
        sb_puts(b, "]");
    }
    sb_puts(b, "}");
}

void web_json_func_id(struct sbuf *b, const struct db_func_out *f)
{
    sb_printf(b, "\"id\": %lld, \"name\": ", (long long)f->id);
    sb_json_str(b, f->name ? f->name : "");
    sb_puts(b, ", \"linkage_name\": ");
    sb_json_str(b, f->linkage_name ? f->linkage_name : "");
    sb_puts(b, ", \"module\": ");
    sb_json_str(b, f->module ? f->module : "");
    sb_puts(b, ", \"file\": ");
    sb_json_str(b, f->file ? f->file : "");
    sb_printf(b, ", \"line\": %u", f->line);
}
