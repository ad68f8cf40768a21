/* Storing one part of a campaign (db_campaign.h). One transaction: the campaign (created
 * when new, else locked and checked), the part, its instances, curves and first reaches, then
 * the campaign's totals and union curve recomputed from every part it now has. The
 * campaign's row is locked first (an UPDATE of it), so that concurrent writers of parts of
 * one campaign recompute its totals one after the other, each seeing the parts committed
 * before it (PostgreSQL, READ COMMITTED: each statement sees what was committed when it
 * started); SQLite's write transactions are exclusive anyway. */
#include "db_campaign.h"

#include <stdlib.h>
#include <string.h>

#include "db_conn.h"

/* INSERT head VALUES (ncol parameters per row), ... for rows [0, n) of ctx, in batches
 * (db_exec_rows). */
static int insert_rows(struct db *d, const char *head, int ncol, size_t n, const void *ctx,
                       db_fill_fn fill)
{
    char h[512], tmpl[64];
    size_t k = (size_t)snprintf(tmpl, sizeof(tmpl), "(");
    for (int c = 0; c < ncol && k < sizeof(tmpl); c++)
        k += (size_t)snprintf(tmpl + k, sizeof(tmpl) - k, "%s#%d", c ? ", " : "", c + 1);
    if (k + 2 > sizeof(tmpl) ||
        snprintf(h, sizeof(h), "%s VALUES ", head) >= (int)sizeof(h))
        return db_fail(d, DB_E_FAIL, "an INSERT too long to write (a ptcall bug)");
    snprintf(tmpl + k, sizeof(tmpl) - k, ")");
    return db_exec_rows(d, n, ctx, h, tmpl, ncol, "", fill);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int cmp_first(const void *x, const void *y)
{
    const struct db_cfirst *a = x, *b = y;
    int c = strcmp(base_name(a->module), base_name(b->module));
    if (!c)
        c = strcmp(a->linkage_name, b->linkage_name);
    if (!c)
        c = strcmp(a->file, b->file);
    if (!c)
        c = a->t_ms < b->t_ms ? -1 : a->t_ms > b->t_ms;
    return c;
}

static int same_key(const struct db_cfirst *a, const struct db_cfirst *b)
{
    return !strcmp(base_name(a->module), base_name(b->module)) &&
           !strcmp(a->linkage_name, b->linkage_name) && !strcmp(a->file, b->file);
}

struct job {
    struct db_campaign_in *c;
    int64_t campaign, part;
    int64_t *fid;       /* per first: its function id (0: a later duplicate of the key) */
    const struct db_cinst_in *inst;
    int why;
};

static struct db_val opt(int64_t v)
{
    return v < 0 ? DB_NUL : DB_I(v);
}

/* The functions dictionary's id of each first, new keys added, in the sorted order (as
 * db_ingest.c takes them: concurrent writers do not deadlock on them). A later first of a
 * key already seen gets 0: the earliest stands. */
static int lookup_ids(struct db *d, struct job *j)
{
    const struct db_campaign_in *c = j->c;
    for (size_t i = 0; i < c->nfirsts; i++) {
        const struct db_cfirst *f = &c->firsts[i];
        j->fid[i] = 0;
        if (i && same_key(&c->firsts[i - 1], f))
            continue;
        struct db_val p[5] = {DB_S(base_name(f->module)), DB_S(f->linkage_name),
                              DB_S(f->file), DB_S(f->name), DB_I(f->line)};
        int found = 0;
        int e = db_value(d, "SELECT id FROM functions WHERE module = $1 AND linkage_name = $2 "
                            "AND file = $3",
                         3, p, &j->fid[i], &found);
        if (!e && !found) {
            e = d->ops->exec(d,
                             "INSERT INTO functions (module, linkage_name, file, name, line) "
                             "VALUES ($1, $2, $3, $4, $5) "
                             "ON CONFLICT (module, linkage_name, file) DO NOTHING",
                             5, p);
            if (!e)
                e = db_value(d, "SELECT id FROM functions WHERE module = $1 AND "
                                "linkage_name = $2 AND file = $3",
                             3, p, &j->fid[i], &found);
            if (!e && !found)
                e = db_fail(d, DB_E_FAIL, "function %s vanished from the dictionary",
                            f->linkage_name);
        }
        if (e)
            return e;
    }
    return 0;
}

struct pts {
    int64_t part;
    int64_t inst;                 /* -1: the part's union */
    const struct db_cpoint *p;
};
static void fill_point(const void *ctx, size_t i, struct db_val *p)
{
    const struct pts *s = ctx;
    p[0] = DB_I(s->part);
    p[1] = DB_I(s->inst);
    p[2] = DB_I(s->p[i].t_ms);
    p[3] = DB_I(s->p[i].functions);
    p[4] = opt(s->p[i].blocks);
}

struct firsts {
    const struct job *j;
    size_t *idx;                  /* the firsts that have an id */
};
static void fill_first(const void *ctx, size_t i, struct db_val *p)
{
    const struct firsts *s = ctx;
    const struct db_cfirst *f = &s->j->c->firsts[s->idx[i]];
    p[0] = DB_I(s->j->campaign);
    p[1] = DB_I(s->j->part);
    p[2] = DB_I(s->j->fid[s->idx[i]]);
    p[3] = DB_I(f->t_ms);
    p[4] = DB_I(f->instance);
    p[5] = DB_S(f->input);
}
static void fill_bfirst(const void *ctx, size_t i, struct db_val *p)
{
    const struct job *j = ctx;
    p[0] = DB_I(j->campaign);
    p[1] = DB_I(j->part);
    p[2] = DB_I(j->c->bfirsts[i].block);
    p[3] = DB_I(j->c->bfirsts[i].t_ms);
}


struct chk {
    char *program, *build;
    int nomem;
};
static int on_chk(void *ctx, int ncol, const struct db_val *col)
{
    struct chk *k = ctx;
    if (ncol >= 2) {
        k->program = db_dup_text(&col[0], &k->nomem);
        k->build = db_dup_text(&col[1], &k->nomem);
    }
    return 0;
}

/* The campaign: created when new, else locked; its program and build checked. */
static int campaign_row(struct db *d, struct job *j)
{
    const struct db_campaign_in *c = j->c;
    int found = 0;
    int e = d->ops->exec(d,
                         "INSERT INTO campaigns (name, program, build_id, functions_total, "
                         "blocks_total, added_ns, parts, instances, inputs, crashes, hangs, "
                         "functions_reached) VALUES ($1, $2, $3, $4, $5, $6, 0, 0, 0, 0, 0, 0) "
                         "ON CONFLICT (name) DO NOTHING",
                         6,
                         (struct db_val[]){DB_S(c->name), DB_S(c->program), DB_S(c->build_id),
                                           DB_I(c->functions_total), opt(c->blocks_total),
                                           DB_I(c->added_ns)});
    /* the lock: concurrent adds to this campaign go on one at a time from here */
    if (!e)
        e = d->ops->exec(d, "UPDATE campaigns SET parts = parts WHERE name = $1", 1,
                         (struct db_val[]){DB_S(c->name)});
    if (!e)
        e = db_value(d, "SELECT id FROM campaigns WHERE name = $1", 1,
                     (struct db_val[]){DB_S(c->name)}, &j->campaign, &found);
    if (!e && !found)
        e = db_fail(d, DB_E_FAIL, "campaign %s vanished while it was added to", c->name);
    if (e)
        return e;
    struct chk k = {0};
    e = d->ops->query(d, "SELECT program, build_id FROM campaigns WHERE id = $1", 1,
                      (struct db_val[]){DB_I(j->campaign)}, on_chk, &k);
    if (!e && (k.nomem || !k.program || !k.build))
        e = db_fail(d, DB_E_NOMEM, "out of memory");
    if (!e && strcmp(k.program, c->program)) {
        j->why = DB_CAMP_PROGRAM;
        e = db_fail(d, DB_E_CONSTRAINT,
                    "campaign '%s' in %s is of program %s, and %s is of %s: give its parts "
                    "another --campaign name",
                    c->name, d->where, k.program, c->file, c->program);
    } else if (!e && strcmp(k.build, c->build_id)) {
        j->why = DB_CAMP_BUILD;
        e = db_fail(d, DB_E_CONSTRAINT,
                    "campaign '%s' is of build %s of %s, and %s is of build %s: parts of one "
                    "campaign must measure one build; give another --campaign name",
                    c->name, k.build, c->program, c->file, c->build_id);
    }
    free(k.program);
    free(k.build);
    return e;
}

struct ev {
    int64_t t;
    int blocks;   /* 0: a function's first reach, 1: a block's */
    int64_t n;
};
struct evs {
    struct ev *v;
    size_t n, cap;
    int blocks, nomem;
};
static int on_ev(void *ctx, int ncol, const struct db_val *col)
{
    struct evs *s = ctx;
    if (ncol < 2)
        return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        struct ev *v = realloc(s->v, cap * sizeof(*v));
        if (!v) {
            s->nomem = 1;
            return 1;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (struct ev){db_int_of(&col[0]), s->blocks, db_int_of(&col[1])};
    return 0;
}
static int cmp_ev(const void *x, const void *y)
{
    const struct ev *a = x, *b = y;
    return a->t < b->t ? -1 : a->t > b->t;
}

/* Events (first reaches counted per time) into a curve's points; frees s->v. */
static int to_points(struct db *d, struct evs *s, int blocks, struct db_cpoint **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (s->n > 1)
        qsort(s->v, s->n, sizeof(*s->v), cmp_ev);
    struct db_cpoint *pt = malloc((s->n + 1) * sizeof(*pt));
    if (!pt) {
        free(s->v);
        return db_fail(d, DB_E_NOMEM, "out of memory");
    }
    int64_t f = 0, b = 0;
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i].blocks)
            b += s->v[i].n;
        else
            f += s->v[i].n;
        if (k && pt[k - 1].t_ms == s->v[i].t)
            k--;
        pt[k++] = (struct db_cpoint){s->v[i].t, f, blocks ? b : -1};
    }
    free(s->v);
    *out = pt;
    *n = k;
    return 0;
}

int db_campaign_firsts_curve(struct db *d, int64_t campaign, const char *host, int blocks,
                             struct db_cpoint **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    struct evs s = {0};
    const char *fsql = host ? "SELECT t, COUNT(*) FROM (SELECT MIN(f.t_ms) AS t FROM "
                              "campaign_firsts f JOIN campaign_parts p ON p.id = f.part_id "
                              "WHERE f.campaign_id = $1 AND p.host = $2 GROUP BY f.function_id) "
                              "x GROUP BY t ORDER BY t"
                            : "SELECT t, COUNT(*) FROM (SELECT MIN(t_ms) AS t FROM "
                              "campaign_firsts WHERE campaign_id = $1 GROUP BY function_id) x "
                              "GROUP BY t ORDER BY t";
    const char *bsql = host ? "SELECT t, COUNT(*) FROM (SELECT MIN(f.t_ms) AS t FROM "
                              "campaign_block_firsts f JOIN campaign_parts p ON p.id = f.part_id "
                              "WHERE f.campaign_id = $1 AND p.host = $2 GROUP BY f.block) "
                              "x GROUP BY t ORDER BY t"
                            : "SELECT t, COUNT(*) FROM (SELECT MIN(t_ms) AS t FROM "
                              "campaign_block_firsts WHERE campaign_id = $1 GROUP BY block) x "
                              "GROUP BY t ORDER BY t";
    struct db_val p[2] = {DB_I(campaign), DB_S(host)};
    int e = d->ops->query(d, fsql, host ? 2 : 1, p, on_ev, &s);
    if (!e && blocks) {
        s.blocks = 1;
        e = d->ops->query(d, bsql, host ? 2 : 1, p, on_ev, &s);
    }
    if (s.nomem)
        e = db_fail(d, DB_E_NOMEM, "out of memory");
    if (e) {
        free(s.v);
        return e;
    }
    return to_points(d, &s, blocks, out, n);
}

struct host_evs {
    struct db_ccurve *hosts;
    struct evs *ev;            /* one per host */
    size_t n, at;
    int blocks, nomem;
};
static int on_host_ev(void *ctx, int ncol, const struct db_val *col)
{
    struct host_evs *h = ctx;
    if (ncol < 3 || col[0].type != DB_TEXT)
        return 0;
    /* rows come host by host: look from the last one found */
    size_t k = h->at, tries = 0;
    while (tries < h->n && strcmp(h->hosts[k].host, col[0].s)) {
        k = (k + 1) % h->n;
        tries++;
    }
    if (tries == h->n)
        return 0;
    h->at = k;
    h->ev[k].blocks = h->blocks;
    int r = on_ev(&h->ev[k], 2, col + 1);
    if (r)
        h->nomem = 1;
    return r;
}

int db_campaign_host_curves(struct db *d, int64_t campaign, int blocks, struct db_ccurve *hosts,
                            size_t nhosts)
{
    if (!nhosts)
        return 0;
    struct host_evs h = {hosts, calloc(nhosts, sizeof(struct evs)), nhosts, 0, 0, 0};
    if (!h.ev)
        return db_fail(d, DB_E_NOMEM, "out of memory");
    /* one pass over the campaign's first reaches for all hosts, not one per host */
    struct db_val p = DB_I(campaign);
    int e = d->ops->query(d,
                          "SELECT host, t, COUNT(*) FROM (SELECT p.host AS host, MIN(f.t_ms) AS "
                          "t FROM campaign_firsts f JOIN campaign_parts p ON p.id = f.part_id "
                          "WHERE f.campaign_id = $1 GROUP BY p.host, f.function_id) x GROUP BY "
                          "host, t ORDER BY host, t",
                          1, &p, on_host_ev, &h);
    if (!e && blocks) {
        h.blocks = 1;
        e = d->ops->query(d,
                          "SELECT host, t, COUNT(*) FROM (SELECT p.host AS host, MIN(f.t_ms) AS "
                          "t FROM campaign_block_firsts f JOIN campaign_parts p ON p.id = "
                          "f.part_id WHERE f.campaign_id = $1 GROUP BY p.host, f.block) x GROUP "
                          "BY host, t ORDER BY host, t",
                          1, &p, on_host_ev, &h);
    }
    if (h.nomem)
        e = db_fail(d, DB_E_NOMEM, "out of memory");
    for (size_t k = 0; k < nhosts; k++) {
        if (!e)
            e = to_points(d, &h.ev[k], blocks, &hosts[k].points, &hosts[k].npoints);
        else
            free(h.ev[k].v);
    }
    free(h.ev);
    return e;
}

static void fill_union(const void *ctx, size_t i, struct db_val *p)
{
    const struct pts *s = ctx;
    p[0] = DB_I(s->part);
    p[1] = DB_I(s->p[i].t_ms);
    p[2] = DB_I(s->p[i].functions);
    p[3] = opt(s->p[i].blocks);
}

/* The campaign's totals and union curve, from every part it has now. */
static int recompute(struct db *d, int64_t campaign, int blocks)
{
    struct db_cpoint *pt;
    size_t n;
    int e = db_campaign_firsts_curve(d, campaign, NULL, blocks, &pt, &n);
    if (e)
        return e;
    struct db_val id = DB_I(campaign);
    e = d->ops->exec(d, "DELETE FROM campaign_union WHERE campaign_id = $1", 1, &id);
    struct pts s = {campaign, 0, pt};
    if (!e)
        e = insert_rows(d, "INSERT INTO campaign_union (campaign_id, t_ms, functions, blocks)",
                        4, n, &s, fill_union);
    if (!e)
        e = d->ops->exec(
            d,
            "UPDATE campaigns SET "
            "parts = (SELECT COUNT(*) FROM campaign_parts WHERE campaign_id = $1), "
            "instances = (SELECT SUM(instances) FROM campaign_parts WHERE campaign_id = $1), "
            "inputs = (SELECT SUM(inputs) FROM campaign_parts WHERE campaign_id = $1), "
            "crashes = (SELECT SUM(crashes) FROM campaign_parts WHERE campaign_id = $1), "
            "hangs = (SELECT SUM(hangs) FROM campaign_parts WHERE campaign_id = $1), "
            "campaign_ms = (SELECT MAX(campaign_ms) FROM campaign_parts WHERE campaign_id = $1), "
            "functions_reached = $2, blocks_reached = $3, last_new_ms = $4 WHERE id = $1",
            4,
            (struct db_val[]){id, DB_I(n ? pt[n - 1].functions : 0),
                              blocks ? DB_I(n ? pt[n - 1].blocks : 0) : DB_NUL,
                              n ? DB_I(pt[n - 1].t_ms) : DB_NUL});
    free(pt);
    return e;
}

static int write_part(struct db *d, void *ctx)
{
    struct job *j = ctx;
    const struct db_campaign_in *c = j->c;
    j->why = 0;
    int e = campaign_row(d, j);
    for (size_t i = 0; i < c->ntags && !e; i++)
        e = d->ops->exec(d,
                         "INSERT INTO campaign_tags (campaign_id, name, value) VALUES ($1, $2, "
                         "$3) ON CONFLICT (campaign_id, name) DO UPDATE SET value = "
                         "excluded.value",
                         3,
                         (struct db_val[]){DB_I(j->campaign), DB_S(c->tags[i].name),
                                           DB_S(c->tags[i].value)});
    int found = 0;
    if (!e)
        e = db_value(d,
                     "INSERT INTO campaign_parts (campaign_id, content_hash, file, host, "
                     "added_ns, instances, inputs, crashes, hangs, functions_reached, "
                     "blocks_reached, campaign_ms, last_new_ms) VALUES ($1, $2, $3, $4, $5, $6, "
                     "$7, $8, $9, $10, $11, $12, $13) RETURNING id",
                     13,
                     (struct db_val[]){DB_I(j->campaign), DB_S(c->content_hash), DB_S(c->file),
                                       DB_S(c->host), DB_I(c->added_ns), DB_I(c->ninst),
                                       DB_I(c->inputs), DB_I(c->crashes), DB_I(c->hangs),
                                       DB_I(c->functions), opt(c->blocks), opt(c->campaign_ms),
                                       opt(c->last_new_ms)},
                     &j->part, &found);
    if (!e && !found)
        e = db_fail(d, DB_E_FAIL, "the new part got no id");
    for (size_t i = 0; i < c->ninst && !e; i++) {
        const struct db_cinst_in *in = &c->inst[i];
        e = d->ops->exec(d,
                         "INSERT INTO campaign_instances (part_id, idx, name, host, inputs, "
                         "crashes, hangs, functions_reached, blocks_reached, last_new_ms) "
                         "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                         10,
                         (struct db_val[]){DB_I(j->part), DB_I(i), DB_S(in->name),
                                           DB_S(in->host), DB_I(in->inputs), DB_I(in->crashes),
                                           DB_I(in->hangs), DB_I(in->functions),
                                           opt(in->blocks), opt(in->last_new_ms)});
        struct pts s = {j->part, (int64_t)i, in->points};
        if (!e)
            e = insert_rows(d,
                            "INSERT INTO campaign_points (part_id, instance_idx, t_ms, "
                            "functions, blocks)",
                            5, in->npoints, &s, fill_point);
    }
    if (!e) {
        struct pts s = {j->part, -1, c->points};
        e = insert_rows(d,
                        "INSERT INTO campaign_points (part_id, instance_idx, t_ms, functions, "
                        "blocks)",
                        5, c->npoints, &s, fill_point);
    }
    if (!e)
        e = lookup_ids(d, j);
    if (!e) {
        size_t *idx = malloc((c->nfirsts + 1) * sizeof(*idx)), m = 0;
        if (!idx)
            return db_fail(d, DB_E_NOMEM, "out of memory");
        for (size_t i = 0; i < c->nfirsts; i++)
            if (j->fid[i])
                idx[m++] = i;
        struct firsts s = {j, idx};
        e = insert_rows(d,
                        "INSERT INTO campaign_firsts (campaign_id, part_id, function_id, t_ms, "
                        "instance_idx, input)",
                        6, m, &s, fill_first);
        free(idx);
    }
    if (!e)
        e = insert_rows(d, "INSERT INTO campaign_block_firsts (campaign_id, part_id, block, t_ms)",
                        4, c->nbfirsts, j, fill_bfirst);
    if (!e)
        e = db_campaign_reach_write(d, j->campaign, j->part, c);
    if (!e)
        e = recompute(d, j->campaign, c->blocks_total >= 0);
    return e;
}

int db_campaign_add(struct db *d, struct db_campaign_in *c, int64_t *campaign_id,
                    int64_t *part_id, int64_t *existing, int *why)
{
    *why = 0;
    *existing = 0;
    int found = 0;
    int e = db_value(d, "SELECT id FROM campaign_parts WHERE content_hash = $1", 1,
                     (struct db_val[]){DB_S(c->content_hash)}, existing, &found);
    if (e)
        return e;
    if (found) {
        *why = DB_CAMP_STORED;
        return db_fail(d, DB_E_CONSTRAINT, "%s is stored already as part %lld (the same "
                                           "content hash, %.16s...)",
                       c->file, (long long)*existing, c->content_hash);
    }
    if (c->nfirsts > 1)
        qsort(c->firsts, c->nfirsts, sizeof(*c->firsts), cmp_first);
    struct job j = {c, 0, 0, calloc(c->nfirsts + 1, sizeof(int64_t)), c->inst, 0};
    if (!j.fid)
        return db_fail(d, DB_E_NOMEM, "out of memory");
    e = db_transaction(d, write_part, &j);
    if (e == -DB_E_CONSTRAINT && !j.why) {
        /* the same part, added meanwhile by another process */
        char msg[sizeof(d->err)];
        snprintf(msg, sizeof(msg), "%s", d->err);
        if (!db_value(d, "SELECT id FROM campaign_parts WHERE content_hash = $1", 1,
                      (struct db_val[]){DB_S(c->content_hash)}, existing, &found) &&
            found) {
            j.why = DB_CAMP_STORED;
            db_fail(d, DB_E_CONSTRAINT, "%s is stored already as part %lld (added meanwhile "
                                        "by another process)",
                    c->file, (long long)*existing);
        } else {
            e = db_fail(d, DB_E_FAIL, "%s", msg);
        }
    }
    *why = j.why;
    if (!e) {
        *campaign_id = j.campaign;
        *part_id = j.part;
    }
    free(j.fid);
    return e;
}
