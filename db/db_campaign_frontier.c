/* A campaign part's reachability and frontier (db_campaign.h; docs/db.md, *The frontier*):
 * written in the transaction that adds the part, read for the campaign's API document. The
 * figures are made by tools/ from the .ptcov's call graph (db/ reads no .ptcov). A part
 * without a call graph has no campaign_reach row, so "none" and "an empty frontier" differ. */
#include <stdlib.h>
#include <string.h>

#include "db_campaign.h"
#include "db_conn.h"

int db_campaign_reach_write(struct db *d, int64_t campaign, int64_t part,
                            const struct db_campaign_in *c)
{
    if (!c->has_reach)
        return 0;
    int e = d->ops->exec(d,
                         "INSERT INTO campaign_reach (part_id, campaign_id, indirect_calls, "
                         "unreachable, reachable_not_reached, frontier_total) VALUES ($1, $2, "
                         "$3, $4, $5, $6)",
                         6,
                         (struct db_val[]){DB_I(part), DB_I(campaign), DB_I(c->indirect_calls),
                                           DB_I(c->unreachable), DB_I(c->reachable_not_reached),
                                           DB_I(c->frontier_total)});
    /* one row at a time: the frontier kept is short (tools/ keeps the top rows) */
    for (size_t i = 0; i < c->nfront && !e; i++) {
        const struct db_cfront *f = &c->front[i];
        e = d->ops->exec(d,
                         "INSERT INTO campaign_frontier (part_id, pos, linkage_name, name, "
                         "file, line, by_pointer_only, functions_behind, insns_behind, "
                         "blocks_behind, lines_behind) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
                         "$9, $10, $11)",
                         11,
                         (struct db_val[]){DB_I(part), DB_I(i), DB_S(f->linkage_name),
                                           DB_S(f->name), DB_S(f->file), DB_I(f->line),
                                           DB_I(f->by_pointer_only), DB_I(f->functions),
                                           DB_I(f->insns), DB_I(f->blocks),
                                           f->lines < 0 ? DB_NUL : DB_I(f->lines)});
        for (size_t k = 0; k < f->ncallers && !e; k++)
            e = d->ops->exec(d,
                             "INSERT INTO campaign_frontier_callers (part_id, pos, idx, name) "
                             "VALUES ($1, $2, $3, $4)",
                             4,
                             (struct db_val[]){DB_I(part), DB_I(i), DB_I(k),
                                               DB_S(f->callers[k])});
    }
    return e;
}

struct rd {
    struct db_cfrontier *x;
    int nomem;
};

static int on_head(void *ctx, int ncol, const struct db_val *col)
{
    struct rd *s = ctx;
    if (ncol < 7 || s->x->found)
        return 0;
    s->x->found = 1;
    s->x->part = db_int_of(&col[0]);
    s->x->added_ns = db_int_of(&col[1]);
    s->x->host = db_dup_text(&col[2], &s->nomem);
    s->x->indirect_calls = db_int_of(&col[3]) != 0;
    s->x->unreachable = db_int_of(&col[4]);
    s->x->reachable_not_reached = db_int_of(&col[5]);
    s->x->total = db_int_of(&col[6]);
    return 0;
}

static int on_row(void *ctx, int ncol, const struct db_val *col)
{
    struct rd *s = ctx;
    struct db_cfrontier *x = s->x;
    if (ncol < 9)
        return 0;
    struct db_cfront_out *v = realloc(x->rows, (x->nrows + 1) * sizeof(*v));
    if (!v) {
        s->nomem = 1;
        return 1;
    }
    x->rows = v;
    struct db_cfront_out *f = &v[x->nrows++];
    memset(f, 0, sizeof(*f));
    f->linkage_name = db_dup_text(&col[0], &s->nomem);
    f->name = db_dup_text(&col[1], &s->nomem);
    f->file = db_dup_text(&col[2], &s->nomem);
    f->line = db_int_of(&col[3]);
    f->by_pointer_only = db_int_of(&col[4]) != 0;
    f->functions = db_int_of(&col[5]);
    f->insns = db_int_of(&col[6]);
    f->blocks = db_int_of(&col[7]);
    f->lines = col[8].type == DB_NULL ? -1 : db_int_of(&col[8]);
    return 0;
}

static int on_caller(void *ctx, int ncol, const struct db_val *col)
{
    struct rd *s = ctx;
    struct db_cfrontier *x = s->x;
    if (ncol < 2)
        return 0;
    int64_t pos = db_int_of(&col[0]);
    if (pos < 0 || (size_t)pos >= x->nrows)
        return 0;
    struct db_cfront_out *f = &x->rows[pos];
    char **v = realloc(f->callers, (f->ncallers + 1) * sizeof(*v));
    if (!v) {
        s->nomem = 1;
        return 1;
    }
    f->callers = v;
    if ((v[f->ncallers] = db_dup_text(&col[1], &s->nomem)))
        f->ncallers++;
    return 0;
}

int db_campaign_frontier(struct db *d, int64_t campaign, struct db_cfrontier *out)
{
    memset(out, 0, sizeof(*out));
    struct rd s = {out, 0};
    struct db_val id = DB_I(campaign);
    int e = d->ops->query(d,
                          "SELECT p.id, p.added_ns, p.host, r.indirect_calls, r.unreachable, "
                          "r.reachable_not_reached, r.frontier_total FROM campaign_reach r JOIN "
                          "campaign_parts p ON p.id = r.part_id WHERE r.campaign_id = $1 ORDER "
                          "BY p.added_ns DESC, p.id DESC LIMIT 1",
                          1, &id, on_head, &s);
    struct db_val part = DB_I(out->part);
    /* pos is the row's index (stored from 0 without gaps): on_caller finds rows by it */
    if (!e && !s.nomem && out->found)
        e = d->ops->query(d,
                          "SELECT linkage_name, name, file, line, by_pointer_only, "
                          "functions_behind, insns_behind, blocks_behind, lines_behind "
                          "FROM campaign_frontier WHERE part_id = $1 ORDER BY pos",
                          1, &part, on_row, &s);
    if (!e && !s.nomem && out->found)
        e = d->ops->query(d,
                          "SELECT pos, name FROM campaign_frontier_callers WHERE part_id = $1 "
                          "ORDER BY pos, idx",
                          1, &part, on_caller, &s);
    if (s.nomem)  /* a callback that stopped the query for it */
        e = db_fail(d, DB_E_NOMEM, "out of memory");
    if (e)
        db_campaign_frontier_free(out);
    return e;
}

void db_campaign_frontier_free(struct db_cfrontier *x)
{
    for (size_t i = 0; i < x->nrows; i++) {
        free(x->rows[i].linkage_name);
        free(x->rows[i].name);
        free(x->rows[i].file);
        for (size_t k = 0; k < x->rows[i].ncallers; k++)
            free(x->rows[i].callers[k]);
        free(x->rows[i].callers);
    }
    free(x->rows);
    free(x->host);
    memset(x, 0, sizeof(*x));
}
