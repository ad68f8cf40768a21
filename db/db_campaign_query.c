/* Reading campaigns (db_campaign.h): the list with totals (one row per campaign, kept by
 * db_campaign_add), a campaign's curves and first reaches. Each answer reads one snapshot. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "db_campaign.h"
#include "db_conn.h"
#include "db_query.h"

struct list {
    struct db_campaign *v;
    size_t n, cap;
    int nomem;
};

static struct db_campaign *find(struct list *l, int64_t id)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (l->v[mid].id == id)
            return &l->v[mid];
        if (l->v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int64_t opt_of(const struct db_val *v)
{
    return v->type == DB_NULL ? -1 : db_int_of(v);
}

static int on_campaign(void *ctx, int ncol, const struct db_val *col)
{
    struct list *l = ctx;
    if (ncol < 16)
        return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct db_campaign *v = realloc(l->v, cap * sizeof(*v));
        if (!v) {
            l->nomem = 1;
            return 1;
        }
        l->v = v;
        l->cap = cap;
    }
    struct db_campaign *c = &l->v[l->n++];
    memset(c, 0, sizeof(*c));
    c->id = db_int_of(&col[0]);
    c->name = db_dup_text(&col[1], &l->nomem);
    c->program = db_dup_text(&col[2], &l->nomem);
    c->build_id = db_dup_text(&col[3], &l->nomem);
    c->parts = db_int_of(&col[4]);
    c->instances = db_int_of(&col[5]);
    c->inputs = db_int_of(&col[6]);
    c->crashes = db_int_of(&col[7]);
    c->hangs = db_int_of(&col[8]);
    c->functions_reached = db_int_of(&col[9]);
    c->functions_total = db_int_of(&col[10]);
    c->blocks_reached = opt_of(&col[11]);
    c->blocks_total = opt_of(&col[12]);
    c->campaign_ms = opt_of(&col[13]);
    c->last_new_ms = opt_of(&col[14]);
    c->added_ns = db_int_of(&col[15]);
    if (c->blocks_total < 0)
        c->blocks_reached = -1;
    return l->nomem;
}

static int on_tag(void *ctx, int ncol, const struct db_val *col)
{
    struct list *l = ctx;
    struct db_campaign *c = ncol >= 3 ? find(l, db_int_of(&col[0])) : NULL;
    if (!c)
        return 0;
    struct db_tag_out *t = realloc(c->tags, (c->ntags + 1) * sizeof(*t));
    if (!t) {
        l->nomem = 1;
        return 1;
    }
    c->tags = t;
    t[c->ntags].name = db_dup_text(&col[1], &l->nomem);
    t[c->ntags].value = db_dup_text(&col[2], &l->nomem);
    c->ntags++;
    return l->nomem;
}

static int on_host(void *ctx, int ncol, const struct db_val *col)
{
    struct list *l = ctx;
    struct db_campaign *c = ncol >= 2 ? find(l, db_int_of(&col[0])) : NULL;
    if (!c)
        return 0;
    char **h = realloc(c->hosts, (c->nhosts + 1) * sizeof(*h));
    if (!h) {
        l->nomem = 1;
        return 1;
    }
    c->hosts = h;
    h[c->nhosts++] = db_dup_text(&col[1], &l->nomem);
    return l->nomem;
}

static int read_all(struct db *d, void *ctx)
{
    struct list *l = ctx;
    int e = d->ops->query(d,
                          "SELECT id, name, program, build_id, parts, instances, inputs, "
                          "crashes, hangs, functions_reached, functions_total, blocks_reached, "
                          "blocks_total, campaign_ms, last_new_ms, added_ns FROM campaigns "
                          "ORDER BY id",
                          0, NULL, on_campaign, l);
    if (!e)
        e = d->ops->query(d, "SELECT campaign_id, name, value FROM campaign_tags ORDER BY "
                             "campaign_id, name",
                          0, NULL, on_tag, l);
    if (!e)
        e = d->ops->query(d, "SELECT DISTINCT campaign_id, host FROM campaign_parts ORDER BY "
                             "campaign_id, host",
                          0, NULL, on_host, l);
    if (l->nomem)
        return db_fail(d, DB_E_NOMEM, "out of memory");
    return e;
}

static void free_one(struct db_campaign *c)
{
    free(c->name);
    free(c->program);
    free(c->build_id);
    for (size_t i = 0; i < c->ntags; i++) {
        free(c->tags[i].name);
        free(c->tags[i].value);
    }
    free(c->tags);
    for (size_t i = 0; i < c->nhosts; i++)
        free(c->hosts[i]);
    free(c->hosts);
}

void db_campaigns_free(struct db_campaign *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++)
        free_one(&c[i]);
    free(c);
}

static int has_tag(const struct db_campaign *c, const char *spec)
{
    const char *eq = strchr(spec, '=');
    size_t kn = eq ? (size_t)(eq - spec) : strlen(spec);
    for (size_t i = 0; i < c->ntags; i++)
        if (strlen(c->tags[i].name) == kn && !strncmp(c->tags[i].name, spec, kn) &&
            (!eq || !strcmp(c->tags[i].value, eq + 1)))
            return 1;
    return 0;
}

static int keep(const struct db_campaign *c, const struct db_cfilter *f)
{
    if (!f)
        return 1;
    for (int i = 0; i < f->ntags; i++)
        if (!has_tag(c, f->tags[i]))
            return 0;
    if (f->nprograms) {
        int any = 0;
        for (int i = 0; i < f->nprograms && !any; i++)
            any = !fnmatch(f->programs[i], c->program, 0);
        if (!any)
            return 0;
    }
    if (f->ids) {
        int any = 0;
        for (size_t i = 0; i < f->nids && !any; i++)
            any = f->ids[i] == c->id;
        if (!any)
            return 0;
    }
    return 1;
}

int db_campaigns_get(struct db *d, const struct db_cfilter *f, struct db_campaign **out,
                     size_t *n)
{
    struct list l = {0};
    *out = NULL;
    *n = 0;
    int e = db_snapshot(d, read_all, &l);
    if (e) {
        db_campaigns_free(l.v, l.n);
        return e;
    }
    size_t k = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (keep(&l.v[i], f))
            l.v[k++] = l.v[i];
        else
            free_one(&l.v[i]);
    }
    *out = l.v;
    *n = k;
    return 0;
}

/* ---- one campaign ----------------------------------------------------------------------- */

struct pts {
    struct db_cpoint *v;
    size_t n, cap;
    int nomem;
};
static int push_point(struct pts *p, struct db_cpoint x)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        struct db_cpoint *v = realloc(p->v, cap * sizeof(*v));
        if (!v) {
            p->nomem = 1;
            return 1;
        }
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = x;
    return 0;
}
static int on_point(void *ctx, int ncol, const struct db_val *col)
{
    if (ncol < 3)
        return 0;
    return push_point(ctx, (struct db_cpoint){db_int_of(&col[0]), db_int_of(&col[1]),
                                              opt_of(&col[2])});
}

int db_campaign_curve(struct db *d, int64_t id, struct db_cpoint **out, size_t *n)
{
    struct pts p = {0};
    int e = d->ops->query(d, "SELECT t_ms, functions, blocks FROM campaign_union WHERE "
                             "campaign_id = $1 ORDER BY t_ms",
                          1, (struct db_val[]){DB_I(id)}, on_point, &p);
    if (p.nomem)
        e = db_fail(d, DB_E_NOMEM, "out of memory");
    if (e) {
        free(p.v);
        return e;
    }
    *out = p.v;
    *n = p.n;
    return 0;
}

struct curves {
    struct db_ccurve *v;
    size_t n;
    int nomem;
    int64_t cur_part, cur_idx;
};
static int on_inst(void *ctx, int ncol, const struct db_val *col)
{
    struct curves *c = ctx;
    if (ncol < 4)
        return 0;
    struct db_ccurve *v = realloc(c->v, (c->n + 1) * sizeof(*v));
    if (!v) {
        c->nomem = 1;
        return 1;
    }
    c->v = v;
    memset(&v[c->n], 0, sizeof(*v));
    v[c->n].name = db_dup_text(&col[2], &c->nomem);
    v[c->n].host = db_dup_text(&col[3], &c->nomem);
    c->n++;
    return c->nomem;
}

struct inst_pts {
    struct curves *c;
    int64_t (*key)[2];          /* (part, idx) of each instance curve, in c's order */
    size_t at;
};
static int on_inst_point(void *ctx, int ncol, const struct db_val *col)
{
    struct inst_pts *s = ctx;
    if (ncol < 5)
        return 0;
    int64_t part = db_int_of(&col[0]), idx = db_int_of(&col[1]);
    while (s->at < s->c->n && (s->key[s->at][0] != part || s->key[s->at][1] != idx))
        s->at++;
    if (s->at == s->c->n)
        return 0;
    struct db_ccurve *cv = &s->c->v[s->at];
    struct pts p = {cv->points, cv->npoints, cv->cap, 0};
    int r = push_point(&p, (struct db_cpoint){db_int_of(&col[2]), db_int_of(&col[3]),
                                              opt_of(&col[4])});
    cv->points = p.v;
    cv->npoints = p.n;
    cv->cap = p.cap;
    if (r)
        s->c->nomem = 1;
    return r;
}

struct keys {
    int64_t (*v)[2];
    size_t n;
    int nomem;
};
static int on_key(void *ctx, int ncol, const struct db_val *col)
{
    struct keys *k = ctx;
    if (ncol < 2)
        return 0;
    int64_t(*v)[2] = realloc(k->v, (k->n + 1) * sizeof(*v));
    if (!v) {
        k->nomem = 1;
        return 1;
    }
    k->v = v;
    v[k->n][0] = db_int_of(&col[0]);
    v[k->n][1] = db_int_of(&col[1]);
    k->n++;
    return 0;
}

struct funcs {
    struct db_cfunc *v;
    size_t n, cap;
    int nomem;
};
static int on_func(void *ctx, int ncol, const struct db_val *col)
{
    struct funcs *f = ctx;
    if (ncol < 9)
        return 0;
    int64_t fid = db_int_of(&col[0]);
    /* ordered by function, then time: the first row of each function is its first reach */
    if (f->n && f->v[f->n - 1].function_id == fid)
        return 0;
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 256;
        struct db_cfunc *v = realloc(f->v, cap * sizeof(*v));
        if (!v) {
            f->nomem = 1;
            return 1;
        }
        f->v = v;
        f->cap = cap;
    }
    struct db_cfunc *x = &f->v[f->n++];
    x->function_id = fid;
    x->name = db_dup_text(&col[1], &f->nomem);
    x->module = db_dup_text(&col[2], &f->nomem);
    x->file = db_dup_text(&col[3], &f->nomem);
    x->line = db_int_of(&col[4]);
    x->t_ms = db_int_of(&col[5]);
    x->instance = db_dup_text(&col[6], &f->nomem);
    x->host = db_dup_text(&col[7], &f->nomem);
    x->input = db_dup_text(&col[8], &f->nomem);
    return f->nomem;
}
static int cmp_func_time(const void *x, const void *y)
{
    const struct db_cfunc *a = x, *b = y;
    if (a->t_ms != b->t_ms)
        return a->t_ms < b->t_ms ? -1 : 1;
    return a->function_id < b->function_id ? -1 : a->function_id > b->function_id;
}
static void free_func(struct db_cfunc *x)
{
    free(x->name);
    free(x->module);
    free(x->file);
    free(x->instance);
    free(x->host);
    free(x->input);
}

struct detail_job {
    int64_t id;
    size_t top;
    int blocks;
    struct db_campaign_detail *out;
};

static int read_detail(struct db *d, void *ctx)
{
    struct detail_job *j = ctx;
    struct db_campaign_detail *x = j->out;
    struct db_val id = DB_I(j->id);
    int64_t bt = 0;
    int found = 0;
    int e = db_value(d, "SELECT COUNT(blocks_total) FROM campaigns WHERE id = $1", 1, &id, &bt,
                     &found);
    if (e)
        return e;
    j->blocks = bt > 0;
    if ((e = db_campaign_curve(d, j->id, &x->curve, &x->ncurve)))
        return e;
    /* instances, in part and index order, then their points in the same order */
    struct curves c = {0};
    struct keys k = {0};
    e = d->ops->query(d,
                      "SELECT i.part_id, i.idx, i.name, i.host FROM campaign_instances i JOIN "
                      "campaign_parts p ON p.id = i.part_id WHERE p.campaign_id = $1 ORDER BY "
                      "i.part_id, i.idx",
                      1, &id, on_inst, &c);
    if (!e)
        e = d->ops->query(d,
                          "SELECT i.part_id, i.idx FROM campaign_instances i JOIN "
                          "campaign_parts p ON p.id = i.part_id WHERE p.campaign_id = $1 ORDER "
                          "BY i.part_id, i.idx",
                          1, &id, on_key, &k);
    if (!e && !c.nomem && !k.nomem && k.n == c.n) {
        struct inst_pts s = {&c, k.v, 0};
        e = d->ops->query(d,
                          "SELECT pt.part_id, pt.instance_idx, pt.t_ms, pt.functions, pt.blocks "
                          "FROM campaign_points pt JOIN campaign_parts p ON p.id = pt.part_id "
                          "WHERE p.campaign_id = $1 AND pt.instance_idx >= 0 ORDER BY "
                          "pt.part_id, pt.instance_idx, pt.t_ms",
                          1, &id, on_inst_point, &s);
    }
    free(k.v);
    x->instances = c.v;
    x->ninstances = c.n;
    if (!e && (c.nomem || k.nomem))
        e = db_fail(d, DB_E_NOMEM, "out of memory");
    if (e)
        return e;
    /* hosts: each one's union over its parts */
    struct curves h = {0};
    e = d->ops->query(d, "SELECT DISTINCT 0, 0, host, host FROM campaign_parts WHERE "
                         "campaign_id = $1 ORDER BY host",
                      1, &id, on_inst, &h);
    x->hosts = h.v;
    x->nhosts = h.n;
    if (!e && h.nomem)
        e = db_fail(d, DB_E_NOMEM, "out of memory");
    for (size_t i = 0; i < h.n && !e; i++) {
        free(h.v[i].name);
        h.v[i].name = NULL;
    }
    if (!e)
        e = db_campaign_host_curves(d, j->id, j->blocks, h.v, h.n);
    if (e)
        return e;
    /* the reached functions, each at its first reach over all parts */
    struct funcs f = {0};
    e = d->ops->query(d,
                      "SELECT cf.function_id, fn.name, fn.module, fn.file, fn.line, cf.t_ms, "
                      "i.name, p.host, cf.input FROM campaign_firsts cf "
                      "JOIN functions fn ON fn.id = cf.function_id "
                      "JOIN campaign_parts p ON p.id = cf.part_id "
                      "JOIN campaign_instances i ON i.part_id = cf.part_id AND i.idx = "
                      "cf.instance_idx "
                      "WHERE cf.campaign_id = $1 ORDER BY cf.function_id, cf.t_ms, cf.part_id",
                      1, &id, on_func, &f);
    if (!e && f.nomem)
        e = db_fail(d, DB_E_NOMEM, "out of memory");
    if (f.n)
        if (f.n > 1)
            qsort(f.v, f.n, sizeof(*f.v), cmp_func_time);
    size_t keep = j->top && j->top < f.n ? j->top : f.n;
    for (size_t i = keep; i < f.n; i++)
        free_func(&f.v[i]);
    x->funcs = f.v;
    x->nfuncs = keep;
    x->more = f.n - keep;
    return e;
}

int db_campaign_detail(struct db *d, int64_t id, size_t top, struct db_campaign_detail *out)
{
    memset(out, 0, sizeof(*out));
    struct detail_job j = {id, top, 0, out};
    int e = db_snapshot(d, read_detail, &j);
    if (e)
        db_campaign_detail_free(out);
    return e;
}

static void free_curves(struct db_ccurve *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        free(v[i].name);
        free(v[i].host);
        free(v[i].points);
    }
    free(v);
}

void db_campaign_detail_free(struct db_campaign_detail *x)
{
    free(x->curve);
    free_curves(x->instances, x->ninstances);
    free_curves(x->hosts, x->nhosts);
    for (size_t i = 0; i < x->nfuncs; i++)
        free_func(&x->funcs[i]);
    free(x->funcs);
    memset(x, 0, sizeof(*x));
}
