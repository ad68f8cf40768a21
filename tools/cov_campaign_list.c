/* `ptcall cov list` and `ptcall cov show ID`: the campaigns of a runs database, as `db list`
 * and `db show` show runs (docs/db.md, *Campaigns*). --format json prints the JSON API's
 * document (/api/v1/campaigns, /api/v1/campaigns/ID; docs/web.md), made by the same code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"
#include "db_campaign.h"
#include "db_cli.h"
#include "db_conn.h"
#include "db_schema.h"
#include "options.h"
#include "web.h"

enum { FMT_TABLE, FMT_CSV, FMT_JSON }; /* table_formats' order in options.c */

static int open_read(const char *cmd, const struct cli_values *v, struct db *d)
{
    const char *url = v->db.url ? v->db.url : db_default_url();
    int e = db_open(d, url, DB_READ);
    return e ? cli_fail(cmd, d->err, db_cli_advice(db_url_is_pg(url), e)) : 0;
}

/* The API's document for path with args, printed; 0, or 1 after saying why. */
static int api_json(const char *cmd, struct db *d, const char *path, struct web_args *a)
{
    struct web_ctx c = {.where = d->where, .flame = NULL, .cache = NULL};
    struct web_resp r = {0};
    if (web_api(&c, d, path, a, &r) || !r.body)
        return cli_fail(cmd, "out of memory", "nothing was shown");
    int rc = 0;
    if (r.status != 200)
        rc = cli_fail(cmd, r.message, "see 'ptcall cov list'");
    else
        fwrite(r.body, 1, r.len, stdout);
    web_resp_free(&r);
    return rc;
}

static void opt_num(char *buf, size_t n, int64_t v)
{
    if (v < 0)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%lld", (long long)v);
}

int cmd_cov_list(int argc, char **argv)
{
    const char *cmd = "cov list";
    struct cli_values v;
    int r = cli_parse(CMD_COV_LIST, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    struct db d;
    if ((r = open_read(cmd, &v, &d))) {
        cli_values_free(&v);
        return r;
    }
    if (v.format == FMT_JSON) {
        struct web_args a = {0};
        for (int i = 0; i < v.db.tags.n && a.n < WEB_MAX_ARGS; i++, a.n++)
            a.k[a.n] = "tag", a.v[a.n] = v.db.tags.v[i];
        for (int i = 0; i < v.db.programs.n && a.n < WEB_MAX_ARGS; i++, a.n++)
            a.k[a.n] = "program", a.v[a.n] = v.db.programs.v[i];
        r = api_json(cmd, &d, "/api/v1/campaigns", &a);
    } else {
        struct db_cfilter f = {(const char *const *)v.db.tags.v, v.db.tags.n,
                               (const char *const *)v.db.programs.v, v.db.programs.n, NULL, 0};
        struct db_campaign *c;
        size_t n;
        int e = db_campaigns_get(&d, &f, &c, &n);
        if (e) {
            r = cli_fail(cmd, d.err, db_cli_advice(d.ops == &db_pg_ops, e));
        } else if (v.format == FMT_CSV) {
            printf("campaign,name,program,build_id,parts,hosts,instances,inputs,crashes,hangs,"
                   "functions_reached,functions_total,blocks_reached,blocks_total,"
                   "campaign_time_ms,last_new_ms,added_ns,tags\n");
            for (size_t i = 0; i < n; i++) {
                printf("%lld,", (long long)c[i].id);
                cli_csv_str(stdout, c[i].name);
                putchar(',');
                cli_csv_str(stdout, c[i].program);
                printf(",%s,%lld,", c[i].build_id, (long long)c[i].parts);
                char hosts[2048] = "", tags[2048] = "", b1[32], b2[32], t1[32], t2[32];
                for (size_t k = 0; k < c[i].nhosts; k++)
                    snprintf(hosts + strlen(hosts), sizeof(hosts) - strlen(hosts), "%s%s",
                             k ? ";" : "", c[i].hosts[k]);
                for (size_t k = 0; k < c[i].ntags; k++)
                    snprintf(tags + strlen(tags), sizeof(tags) - strlen(tags), "%s%s=%s",
                             k ? ";" : "", c[i].tags[k].name, c[i].tags[k].value);
                cli_csv_str(stdout, hosts);
                opt_num(b1, sizeof(b1), c[i].blocks_reached);
                opt_num(b2, sizeof(b2), c[i].blocks_total);
                opt_num(t1, sizeof(t1), c[i].campaign_ms);
                opt_num(t2, sizeof(t2), c[i].last_new_ms);
                printf(",%lld,%lld,%lld,%lld,%lld,%lld,%s,%s,%s,%s,%lld,", (long long)c[i].instances,
                       (long long)c[i].inputs, (long long)c[i].crashes, (long long)c[i].hangs,
                       (long long)c[i].functions_reached, (long long)c[i].functions_total,
                       b1[0] == '-' ? "" : b1, b2[0] == '-' ? "" : b2, t1[0] == '-' ? "" : t1,
                       t2[0] == '-' ? "" : t2, (long long)c[i].added_ns);
                cli_csv_str(stdout, tags);
                putchar('\n');
            }
        } else {
            printf("# ptcall cov list: %zu campaign%s in ", n, n == 1 ? "" : "s");
            cli_text_str(stdout, d.where);
            printf("\n%6s  %-20s  %-16s  %5s  %6s  %9s  %13s  %15s  %10s  %10s  %s\n", "id",
                   "campaign", "program", "parts", "insts", "inputs", "functions", "blocks",
                   "time_ms", "last_new", "tags");
            for (size_t i = 0; i < n; i++) {
                char fn[40], bl[40], t1[32], t2[32];
                snprintf(fn, sizeof(fn), "%lld/%lld", (long long)c[i].functions_reached,
                         (long long)c[i].functions_total);
                if (c[i].blocks_total >= 0)
                    snprintf(bl, sizeof(bl), "%lld/%lld", (long long)c[i].blocks_reached,
                             (long long)c[i].blocks_total);
                else
                    snprintf(bl, sizeof(bl), "-");
                opt_num(t1, sizeof(t1), c[i].campaign_ms);
                opt_num(t2, sizeof(t2), c[i].last_new_ms);
                printf("%6lld  ", (long long)c[i].id);
                cli_text_pad(stdout, c[i].name, 20);
                printf("  ");
                cli_text_pad(stdout, c[i].program, 16);
                printf("  %5lld  %6lld  %9lld  %13s  %15s  %10s  %10s  ", (long long)c[i].parts,
                       (long long)c[i].instances, (long long)c[i].inputs, fn, bl, t1, t2);
                for (size_t k = 0; k < c[i].ntags; k++) {
                    printf("%s", k ? " " : "");
                    cli_text_str(stdout, c[i].tags[k].name);
                    printf("=");
                    cli_text_str(stdout, c[i].tags[k].value);
                }
                printf("\n");
            }
        }
        if (!e)
            db_campaigns_free(c, n);
    }
    db_close(&d);
    cli_values_free(&v);
    return r ? r : cli_flush_output(cmd, "the campaigns");
}

int cmd_cov_show(int argc, char **argv)
{
    const char *cmd = "cov show";
    struct cli_values v;
    int r = cli_parse(CMD_COV_SHOW, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    char *end;
    long long id = v.npos == 1 ? strtoll(v.pos[0], &end, 10) : 0;
    if (v.npos != 1 || id <= 0 || *end) {
        r = cli_usage_error(CMD_COV_SHOW, "give one campaign id (see 'ptcall cov list')");
        cli_values_free(&v);
        return r;
    }
    struct db d;
    if ((r = open_read(cmd, &v, &d))) {
        cli_values_free(&v);
        return r;
    }
    char path[64], top[32];
    snprintf(path, sizeof(path), "/api/v1/campaigns/%lld", id);
    snprintf(top, sizeof(top), "%llu", (unsigned long long)v.top);
    struct web_args a = {1, {"top"}, {top}, 0};
    if (v.format == FMT_JSON) {
        r = api_json(cmd, &d, path, &a);
    } else {
        struct db_cfilter f = {.ids = (int64_t[]){id}, .nids = 1};
        struct db_campaign *c = NULL;
        size_t n = 0;
        struct db_campaign_detail x;
        int e = db_campaigns_get(&d, &f, &c, &n);
        if (!e && !n) {
            char what[128];
            snprintf(what, sizeof(what), "no campaign %lld in the database", id);
            r = cli_fail(cmd, what, "see 'ptcall cov list'");
        } else if (e || (e = db_campaign_detail(&d, id, (size_t)v.top, &x))) {
            r = cli_fail(cmd, d.err, db_cli_advice(d.ops == &db_pg_ops, e));
        } else {
            int csv = v.format == FMT_CSV;
            if (!csv) {
                printf("# ptcall cov show: campaign %lld ", id);
                cli_text_str(stdout, c[0].name);
                printf(" (");
                cli_text_str(stdout, c[0].program);
                printf(", build %s): %lld parts, %lld instances, %lld inputs; %lld of %lld "
                       "functions",
                       c[0].build_id, (long long)c[0].parts, (long long)c[0].instances,
                       (long long)c[0].inputs, (long long)c[0].functions_reached,
                       (long long)c[0].functions_total);
                if (c[0].blocks_total >= 0)
                    printf(", %lld of %lld blocks", (long long)c[0].blocks_reached,
                           (long long)c[0].blocks_total);
                printf("; last new coverage at %lld ms\n", (long long)c[0].last_new_ms);
                printf("%10s  %-32s  %-24s  %-12s  %s\n", "first_ms", "function", "instance",
                       "host", "input");
            } else {
                printf("first_ms,function,module,file,line,instance,host,input\n");
            }
            for (size_t i = 0; i < x.nfuncs; i++) {
                const struct db_cfunc *fn = &x.funcs[i];
                if (csv) {
                    printf("%lld,", (long long)fn->t_ms);
                    cli_csv_str(stdout, fn->name);
                    putchar(',');
                    cli_csv_str(stdout, fn->module);
                    putchar(',');
                    cli_csv_str(stdout, fn->file);
                    printf(",%lld,", (long long)fn->line);
                    cli_csv_str(stdout, fn->instance);
                    putchar(',');
                    cli_csv_str(stdout, fn->host);
                    putchar(',');
                    cli_csv_str(stdout, fn->input);
                    putchar('\n');
                } else {
                    printf("%10lld  ", (long long)fn->t_ms);
                    cli_text_pad(stdout, fn->name, 32);
                    printf("  ");
                    cli_text_pad(stdout, fn->instance, 24);
                    printf("  ");
                    cli_text_pad(stdout, fn->host, 12);
                    printf("  ");
                    cli_text_str(stdout, fn->input);
                    printf("\n");
                }
            }
            if (!csv && x.more)
                printf("(%zu more: --top 0 lists all)\n", x.more);
            db_campaign_detail_free(&x);
        }
        db_campaigns_free(c, n);
    }
    db_close(&d);
    cli_values_free(&v);
    return r ? r : cli_flush_output(cmd, "the campaign");
}
