/* GET /api/v1/campaigns and /api/v1/campaigns/ID (docs/web.md, *Campaigns*): the campaigns
 * the filters keep (program=GLOB, tag=K[=V], both repeatable) with their totals, and one
 * campaign with its coverage curves (union, per instance, per host) and the functions it
 * reached, first reached first. Not cached: they read one row per campaign, and a part
 * added must show at once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_campaign.h"
#include "web_campaign.h"
#include "web_internal.h"

static void opt_i(struct sbuf *b, int64_t v)
{
    if (v < 0)
        sb_puts(b, "null");
    else
        sb_printf(b, "%lld", (long long)v);
}

/* The campaign's fields, without the braces (the campaign document adds its own). */
static void campaign_fields(struct sbuf *b, const struct db_campaign *c)
{
    sb_printf(b, "\"id\": %lld, \"name\": ", (long long)c->id);
    sb_json_str(b, c->name);
    sb_puts(b, ", \"program\": ");
    sb_json_str(b, c->program);
    sb_puts(b, ", \"build_id\": ");
    sb_json_str(b, c->build_id);
    sb_puts(b, ", \"tags\": {");
    for (size_t i = 0; i < c->ntags; i++) {
        sb_puts(b, i ? ", " : "");
        sb_json_str(b, c->tags[i].name);
        sb_puts(b, ": ");
        sb_json_str(b, c->tags[i].value);
    }
    sb_printf(b, "}, \"parts\": %lld, \"hosts\": [", (long long)c->parts);
    for (size_t i = 0; i < c->nhosts; i++) {
        sb_puts(b, i ? ", " : "");
        sb_json_str(b, c->hosts[i]);
    }
    sb_printf(b, "], \"instances\": %lld, \"inputs\": %lld, \"crashes\": %lld, \"hangs\": %lld, "
                 "\"functions_reached\": %lld, \"functions_total\": %lld, \"blocks_reached\": ",
              (long long)c->instances, (long long)c->inputs, (long long)c->crashes,
              (long long)c->hangs, (long long)c->functions_reached,
              (long long)c->functions_total);
    opt_i(b, c->blocks_reached);
    sb_puts(b, ", \"blocks_total\": ");
    opt_i(b, c->blocks_total);
    sb_puts(b, ", \"campaign_time_ms\": ");
    opt_i(b, c->campaign_ms);
    sb_puts(b, ", \"last_new_ms\": ");
    opt_i(b, c->last_new_ms);
    sb_printf(b, ", \"added_ns\": %lld", (long long)c->added_ns);
}

void web_json_campaign(struct sbuf *b, const struct db_campaign *c)
{
    sb_puts(b, "{");
    campaign_fields(b, c);
    sb_puts(b, "}");
}

void web_json_points(struct sbuf *b, const struct db_cpoint *p, size_t n, int blocks)
{
    sb_puts(b, "[");
    for (size_t i = 0; i < n; i++) {
        sb_printf(b, "%s[%lld, %lld", i ? ", " : "", (long long)p[i].t_ms,
                  (long long)p[i].functions);
        if (blocks) {
            sb_puts(b, ", ");
            opt_i(b, p[i].blocks);
        }
        sb_puts(b, "]");
    }
    sb_puts(b, "]");
}

/* The filters' values: every program= and tag= given (web_arg keeps the last only). */
int web_campaign_filter(const struct web_args *a, struct db_cfilter *f, const char **buf,
                        struct web_resp *r)
{
    memset(f, 0, sizeof(*f));
    int nt = 0, np = 0;
    for (int i = 0; i < a->n; i++) {
        if (!strcmp(a->k[i], "tag")) {
            if (!*a->v[i] || *a->v[i] == '=')
                return web_error(r, 400, "tag='%s': give tag=NAME or tag=NAME=VALUE", a->v[i])
                           ? -1
                           : 1;
            buf[nt++] = a->v[i];
        }
    }
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->k[i], "program"))
            buf[nt + np++] = a->v[i];
    f->tags = buf;
    f->ntags = nt;
    f->programs = buf + nt;
    f->nprograms = np;
    return 0;
}

int web_api_campaigns(const struct web_ctx *c, struct db *d, const struct web_args *a,
                      struct web_resp *r)
{
    const char *buf[WEB_MAX_ARGS];
    struct db_cfilter f;
    int s = web_campaign_filter(a, &f, buf, r);
    if (s)
        return s < 0 ? -1 : 0;
    struct db_campaign *v;
    size_t n;
    int e = db_campaigns_get(d, &f, &v, &n);
    if (e)
        return web_db_fail(r, d, e);
    struct sbuf b;
    sb_init(&b);
    web_json_head(&b, c, "campaigns");
    sb_puts(&b, ", \"campaigns\": [");
    for (size_t i = 0; i < n; i++) {
        sb_puts(&b, i ? ",\n  " : "\n  ");
        web_json_campaign(&b, &v[i]);
    }
    sb_puts(&b, "]");
    db_campaigns_free(v, n);
    return web_json_done(r, &b);
}

/* The frontier of the campaign's latest part that has one (docs/web.md): a union's frontier
 * would need the parts' coverage merged before the graph is walked, which only `cov merge`
 * then one add gives. null when no part had a call graph. */
static void frontier_json(struct sbuf *b, const struct db_cfrontier *f)
{
    if (!f->found) {
        sb_puts(b, "null");
        return;
    }
    sb_printf(b, "{\"part\": %lld, \"host\": ", (long long)f->part);
    sb_json_str(b, f->host ? f->host : "");
    sb_printf(b, ", \"added_ns\": %lld, \"indirect_calls\": %s, \"unreachable\": %lld, "
                 "\"reachable_not_reached\": %lld, \"total\": %lld, \"rows\": [",
              (long long)f->added_ns, f->indirect_calls ? "true" : "false",
              (long long)f->unreachable, (long long)f->reachable_not_reached, (long long)f->total);
    for (size_t i = 0; i < f->nrows; i++) {
        const struct db_cfront_out *x = &f->rows[i];
        sb_puts(b, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
        sb_json_str(b, x->name ? x->name : "");
        sb_puts(b, ", \"linkage_name\": ");
        sb_json_str(b, x->linkage_name ? x->linkage_name : "");
        sb_puts(b, ", \"file\": ");
        sb_json_str(b, x->file ? x->file : "");
        sb_printf(b, ", \"line\": %lld, \"by_pointer_only\": %s, \"callers\": [",
                  (long long)x->line, x->by_pointer_only ? "true" : "false");
        for (size_t k = 0; k < x->ncallers; k++) {
            if (k)
                sb_puts(b, ", ");
            sb_json_str(b, x->callers[k]);
        }
        sb_printf(b, "], \"functions_behind\": %lld, \"insns_behind\": %lld, "
                     "\"blocks_behind\": %lld, \"lines_behind\": ",
                  (long long)x->functions, (long long)x->insns, (long long)x->blocks);
        if (x->lines < 0)
            sb_puts(b, "null}");
        else
            sb_printf(b, "%lld}", (long long)x->lines);
    }
    sb_puts(b, "]}");
}

int web_api_campaign(const struct web_ctx *c, struct db *d, int64_t id,
                     const struct web_args *a, struct web_resp *r)
{
    uint64_t top;
    int bad = web_top_arg(a, 100, &top, r);
    if (bad)
        return bad < 0 ? -1 : 0;
    struct db_cfilter f = {.ids = &id, .nids = 1};
    struct db_campaign *v;
    size_t n;
    int e = db_campaigns_get(d, &f, &v, &n);
    if (e)
        return web_db_fail(r, d, e);
    if (!n) {
        db_campaigns_free(v, n);
        return web_error(r, 404, "no campaign %lld in the database", (long long)id);
    }
    struct db_campaign_detail x;
    if ((e = db_campaign_detail(d, id, (size_t)top, &x))) {
        db_campaigns_free(v, n);
        return web_db_fail(r, d, e);
    }
    int blocks = v[0].blocks_total >= 0;
    struct sbuf b;
    sb_init(&b);
    web_json_head(&b, c, "campaign");
    sb_puts(&b, ", \"campaign\": {");
    campaign_fields(&b, &v[0]);
    sb_puts(&b, ",\n  \"curves\": {\"union\": ");
    web_json_points(&b, x.curve, x.ncurve, 1);
    sb_puts(&b, ",\n  \"instances\": [");
    for (size_t i = 0; i < x.ninstances; i++) {
        sb_puts(&b, i ? ",\n    " : "\n    ");
        sb_puts(&b, "{\"name\": ");
        sb_json_str(&b, x.instances[i].name);
        sb_puts(&b, ", \"host\": ");
        sb_json_str(&b, x.instances[i].host);
        sb_puts(&b, ", \"points\": ");
        web_json_points(&b, x.instances[i].points, x.instances[i].npoints, 1);
        sb_puts(&b, "}");
    }
    sb_puts(&b, "],\n  \"hosts\": [");
    for (size_t i = 0; i < x.nhosts; i++) {
        sb_puts(&b, i ? ",\n    " : "\n    ");
        sb_puts(&b, "{\"host\": ");
        sb_json_str(&b, x.hosts[i].host);
        sb_puts(&b, ", \"points\": ");
        web_json_points(&b, x.hosts[i].points, x.hosts[i].npoints, 1);
        sb_puts(&b, "}");
    }
    sb_puts(&b, "]},\n\"functions\": [");
    for (size_t i = 0; i < x.nfuncs; i++) {
        const struct db_cfunc *fn = &x.funcs[i];
        sb_printf(&b, "%s{\"id\": %lld, \"name\": ", i ? ",\n  " : "\n  ",
                  (long long)fn->function_id);
        sb_json_str(&b, fn->name);
        sb_puts(&b, ", \"module\": ");
        sb_json_str(&b, fn->module);
        sb_puts(&b, ", \"file\": ");
        sb_json_str(&b, fn->file);
        sb_printf(&b, ", \"line\": %lld, \"first_ms\": %lld, \"instance\": ", (long long)fn->line,
                  (long long)fn->t_ms);
        sb_json_str(&b, fn->instance);
        sb_puts(&b, ", \"host\": ");
        sb_json_str(&b, fn->host);
        sb_puts(&b, ", \"input\": ");
        sb_json_str(&b, fn->input);
        sb_puts(&b, "}");
    }
    sb_printf(&b, "], \"more_functions\": %zu, \"has_blocks\": %s, \"frontier\": ", x.more,
              blocks ? "true" : "false");
    db_campaign_detail_free(&x);
    struct db_cfrontier fr;
    if ((e = db_campaign_frontier(d, id, &fr))) {
        sb_free(&b);
        db_campaigns_free(v, n);
        return web_db_fail(r, d, e);
    }
    frontier_json(&b, &fr);
    db_campaign_frontier_free(&fr);
    sb_puts(&b, "}");
    db_campaigns_free(v, n);
    return web_json_done(r, &b);
}
