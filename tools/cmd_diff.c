/* ptcall diff: per-function calls, inclusive and self time of two runs, largest change
 * first. Functions are matched as `ptcall report` matches them over several runs: by
 * (module basename, linkage name, source file), so two builds of one program compare. */
#define _GNU_SOURCE /* qsort_r: the sort key travels with the call, not in a global */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_common.h"
#include "output.h"
#include "commands.h"
#include "options.h"
#include "runs.h"

enum fmt { FMT_TABLE, FMT_CSV, FMT_JSON };

struct drow {
    const struct runs_fn *b, *n; /* NULL: not called in that run */
    int64_t d[RUNS_NMEAS];       /* new - base */
};

static uint64_t val(const struct runs_fn *f, int m) { return f ? f->sum[m] : 0; }
static uint64_t mag(int64_t d) { return d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d; }
static const struct runs_fn *any(const struct drow *r) { return r->n ? r->n : r->b; }

static int cmp_drow(const void *a, const void *b, void *ctx)
{
    const struct drow *x = a, *y = b;
    int meas = *(const int *)ctx;
    uint64_t kx = mag(x->d[meas]), ky = mag(y->d[meas]);
    if (kx != ky)
        return kx > ky ? -1 : 1;
    kx = mag(x->d[RUNS_CALLS]), ky = mag(y->d[RUNS_CALLS]);
    if (kx != ky)
        return kx > ky ? -1 : 1;
    const struct runs_fn *fx = any(x), *fy = any(y);
    int c = strcmp(fx->name, fy->name);
    if (c)
        return c;
    size_t n = fx->keylen < fy->keylen ? fx->keylen : fy->keylen;
    c = memcmp(fx->key, fy->key, n);
    return c ? c : (fx->keylen > fy->keylen) - (fx->keylen < fy->keylen);
}

static const char *status(const struct drow *r) { return !r->b ? "new" : !r->n ? "gone" : "both"; }

/* Relative change in percent; 0 when base is 0 (callers print "new" or nothing then). */
static double rel(const struct drow *r, int m)
{
    uint64_t b = val(r->b, m);
    return b ? 100.0 * (double)r->d[m] / (double)b : 0.0;
}

static void fmt_delta(char *buf, size_t n, int64_t d, int m, int ns)
{
    if (m == RUNS_CALLS) {
        snprintf(buf, n, d ? "%+lld" : "0", (long long)d);
        return;
    }
    char t[32];
    cli_fmt_time(t, sizeof(t), mag(d), ns);
    snprintf(buf, n, "%s%s", d < 0 ? "-" : d > 0 ? "+" : "", t);
}

static void fmt_val(char *buf, size_t n, uint64_t v, int m, int ns)
{
    if (m == RUNS_CALLS)
        snprintf(buf, n, "%llu", (unsigned long long)v);
    else
        cli_fmt_time(buf, n, v, ns);
}

static void fmt_rel(char *buf, size_t n, const struct drow *r, int m)
{
    if (!val(r->b, m))
        snprintf(buf, n, "%s", val(r->n, m) ? "new" : "");
    else
        snprintf(buf, n, r->d[m] ? "%+.1f%%" : "0.0%%", rel(r, m));
}

struct diff {
    const struct runs_agg *gb, *gn;
    int timed, ns;
    size_t untraced;        /* functions left out: one run did not trace them */
    const char *sort;
};

static const struct runs_run *first_run(const struct runs_agg *g) { return &g->run[0]; }

static void print_table(const struct diff *d, const struct drow *rows, size_t n, size_t shown)
{
    const struct runs_run *rb = first_run(d->gb), *rn = first_run(d->gn);
    printf("# ptcall diff of ");
    cli_text_str(stdout, rb->path);
    printf(" (base: %llu events, %llu calls) and ", (unsigned long long)rb->t.events,
           (unsigned long long)rb->t.calls);
    cli_text_str(stdout, rn->path);
    printf(" (new: %llu events, %llu calls)\n", (unsigned long long)rn->t.events,
           (unsigned long long)rn->t.calls);
    if (!d->timed) {
        if (rb->t.timed && rn->t.timed)
            printf("# the runs differ in time base (ns and TSC ticks): calls only\n");
        else
            printf("# %s untimed (recorded without per-event timestamps): calls only\n",
                   !rb->t.timed && !rn->t.timed ? "both traces are"
                   : !rb->t.timed              ? "the base trace is"
                                               : "the new trace is");
    } else {
        char b[32], c[32];
        cli_fmt_time(b, sizeof(b), rb->t.total_time, d->ns);
        cli_fmt_time(c, sizeof(c), rn->t.total_time, d->ns);
        printf("# time in traced functions: base %s, new %s", b, c);
        if (rb->t.total_time)
            printf(" (%+.1f%%)", 100.0 * ((double)rn->t.total_time - (double)rb->t.total_time) /
                                     (double)rb->t.total_time);
        printf("\n");
    }
    printf("# largest absolute change of %s first; chg%% is relative to the base\n", d->sort);
    int nm = d->timed ? RUNS_NMEAS : 1;
    for (int m = 0; m < nm; m++) {
        char h[3][24];
        snprintf(h[0], sizeof(h[0]), "%s base", runs_meas_names[m]);
        snprintf(h[1], sizeof(h[1]), "%s new", runs_meas_names[m]);
        snprintf(h[2], sizeof(h[2]), "%s chg", runs_meas_names[m]);
        printf("%s%11s %11s %11s %7s", m ? " " : "", h[0], h[1], h[2], "chg%");
    }
    printf("  function [module]\n");
    for (size_t i = 0; i < shown; i++) {
        const struct drow *r = &rows[i];
        for (int m = 0; m < nm; m++) {
            char vb[32], vn[32], vd[40], vr[32];
            fmt_val(vb, sizeof(vb), val(r->b, m), m, d->ns);
            fmt_val(vn, sizeof(vn), val(r->n, m), m, d->ns);
            fmt_delta(vd, sizeof(vd), r->d[m], m, d->ns);
            fmt_rel(vr, sizeof(vr), r, m);
            printf("%s%11s %11s %11s %7s", m ? " " : "", vb, vn, vd, vr);
        }
        const struct runs_fn *f = any(r);
        printf("  ");
        cli_text_str(stdout, f->name);
        printf(" [");
        cli_text_str(stdout, ptc_out_base(f->module));
        printf("]%s\n", !r->b ? " (new)" : !r->n ? " (gone)" : "");
    }
    size_t nnew = 0, ngone = 0, same = 0;
    for (size_t i = 0; i < n; i++) {
        nnew += !rows[i].b;
        ngone += !rows[i].n;
        int z = 1;
        for (int m = 0; m < nm; m++)
            z &= rows[i].d[m] == 0;
        same += rows[i].b && rows[i].n && z;
    }
    if (shown < n)
        printf("(%zu more function%s; --top 0 shows all)\n", n - shown, n - shown == 1 ? "" : "s");
    printf("functions %zu: %zu changed, %zu unchanged, %zu new, %zu gone\n", n,
           n - same - nnew - ngone, same, nnew, ngone);
    if (d->untraced)
        printf("note: %zu function%s left out: %s not traced in one of the runs (record "
               "--only/--skip), so %s calls there are not known\n",
               d->untraced, d->untraced == 1 ? "" : "s", d->untraced == 1 ? "it was" : "they were",
               d->untraced == 1 ? "its" : "their");
    const struct runs_run *both[2] = {rb, rn};
    for (int k = 0; k < 2; k++)
        if (runs_run_lossy(both[k])) {
            char q[1024];
            runs_describe_quality(both[k], q, sizeof(q));
            printf("warning: %s ", k ? "new" : "base");
            cli_text_str(stdout, both[k]->path);
            printf(": %s: its figures are lower bounds\n", q);
        }
}

static void print_csv(const struct diff *d, const struct drow *rows, size_t shown)
{
    printf("rank,function,linkage_name,module,file,line,status");
    for (int m = 0; m < RUNS_NMEAS; m++)
        printf(",%s_base,%s_new,%s_change,%s_change_pct", runs_meas_names[m], runs_meas_names[m],
               runs_meas_names[m], runs_meas_names[m]);
    printf("\n");
    for (size_t i = 0; i < shown; i++) {
        const struct drow *r = &rows[i];
        const struct runs_fn *f = any(r);
        printf("%zu,", i + 1);
        cli_csv_func(stdout, f->name, f->linkage_name, f->module, f->file, f->line);
        printf(",%s", status(r));
        for (int m = 0; m < RUNS_NMEAS; m++) {
            if (m != RUNS_CALLS && !d->timed) {
                printf(",,,,");
                continue;
            }
            printf(",%llu,%llu,%lld,", (unsigned long long)val(r->b, m),
                   (unsigned long long)val(r->n, m), (long long)r->d[m]);
            if (val(r->b, m))
                printf("%.2f", rel(r, m));
        }
        printf("\n");
    }
}

static void print_json(const struct diff *d, const struct drow *rows, size_t n, size_t shown)
{
    const struct runs_run *rb = first_run(d->gb), *rn = first_run(d->gn);
    printf("{\n  \"format_version\": 1,\n  \"tool\": \"ptcall diff\",\n  \"base\": ");
    runs_json_run(stdout, rb);
    printf(",\n  \"new\": ");
    runs_json_run(stdout, rn);
    printf(",\n  \"timed\": %s,\n  \"time_unit\": \"%s\",\n  \"sort\": \"%s\",\n",
           d->timed ? "true" : "false", d->timed ? (d->ns ? "ns" : "ticks") : "none", d->sort);
    size_t nnew = 0, ngone = 0, same = 0;
    for (size_t i = 0; i < n; i++) {
        nnew += !rows[i].b;
        ngone += !rows[i].n;
        int z = 1;
        for (int m = 0; m < (d->timed ? RUNS_NMEAS : 1); m++)
            z &= rows[i].d[m] == 0;
        same += rows[i].b && rows[i].n && z;
    }
    printf("  \"summary\": {\"functions\": %zu, \"changed\": %zu, \"unchanged\": %zu, \"new\": "
           "%zu, \"gone\": %zu",
           n, n - same - nnew - ngone, same, nnew, ngone);
    if (d->untraced) /* only then: untouched traces keep their output */
        printf(", \"not_traced\": %zu", d->untraced);
    printf("},\n  \"functions\": [");
    for (size_t i = 0; i < shown; i++) {
        const struct drow *r = &rows[i];
        const struct runs_fn *f = any(r);
        printf("%s\n    {", i ? "," : "");
        cli_json_func(stdout, f->name, f->linkage_name, f->module, f->file, f->line);
        printf(", \"status\": \"%s\"", status(r));
        for (int m = 0; m < RUNS_NMEAS; m++) {
            printf(", \"%s\": ", runs_meas_names[m]);
            if (m != RUNS_CALLS && !d->timed) {
                printf("null");
                continue;
            }
            printf("{\"base\": %llu, \"new\": %llu, \"change\": %lld, \"change_pct\": ",
                   (unsigned long long)val(r->b, m), (unsigned long long)val(r->n, m),
                   (long long)r->d[m]);
            if (val(r->b, m))
                printf("%.2f}", rel(r, m));
            else
                printf("null}");
        }
        printf("}");
    }
    printf("\n  ]\n}\n");
}

/* The rows: every function called in either run, matched by key, except those one run did
 * not trace (counted in *untraced): "new" or "gone" would be a guess. */
static struct drow *join(const struct runs_agg *gb, const struct runs_agg *gn, size_t *n,
                         size_t *untraced)
{
    struct drow *rows = malloc((gb->nfn + gn->nfn + 1) * sizeof(*rows));
    if (!rows)
        return NULL;
    size_t k = 0;
    *untraced = 0;
    for (size_t i = 0; i < gb->nfn; i++) {
        const struct runs_fn *b = &gb->fn[i], *m = runs_agg_find(gn, b);
        if (!b->runs && !(m && m->runs))
            continue;
        if (b->untraced_runs || (m && m->untraced_runs)) {
            (*untraced)++;
            continue;
        }
        rows[k].b = b->runs ? b : NULL;
        rows[k].n = m && m->runs ? m : NULL;
        k++;
    }
    for (size_t i = 0; i < gn->nfn; i++) {
        const struct runs_fn *f = &gn->fn[i], *m = runs_agg_find(gb, f);
        if (!f->runs || m) /* rows of functions BASE knows are made above */
            continue;
        if (f->untraced_runs) {
            (*untraced)++;
            continue;
        }
        rows[k].b = NULL;
        rows[k].n = f;
        k++;
    }
    for (size_t i = 0; i < k; i++)
        for (int m = 0; m < RUNS_NMEAS; m++)
            rows[i].d[m] = (int64_t)(val(rows[i].n, m) - val(rows[i].b, m));
    *n = k;
    return rows;
}

static int run_diff(struct cli_values *v)
{
    if (v->npos > 2)
        return cli_usage_error(CMD_DIFF, "more than two trace files given");
    if (v->npos < 2)
        return cli_usage_error(CMD_DIFF, v->npos ? "no NEW trace file given"
                                                 : "no trace files given (BASE and NEW)");
    struct cli_args a = {.cmd = "diff", .salvage = v->salvage, .threads = v->threads};
    const char *files[2] = {v->pos[0], v->pos[1]};
    uint64_t top = v->top;
    int have_top = cli_given(v, "--top") != 0, allow_different = v->allow_different;
    /* --sort calls|self|total, as measures: 0 calls, 1 total, 2 self; -1: by the traces */
    int sort = v->sort < 0 ? -1 : v->sort == 0 ? 0 : v->sort == 1 ? 2 : 1;
    enum fmt fmt = (enum fmt)v->format;
    for (size_t i = 0; i < 2; i++) {
        struct stat sb;
        if (!stat(files[i], &sb) && S_ISDIR(sb.st_mode)) {
            char what[1200];
            snprintf(what, sizeof(what), "%s is a directory", files[i]);
            return cli_fail("diff", what,
                            "give two trace files; 'ptcall report DIR' sums the runs of a "
                            "directory");
        }
    }
    struct runs_agg gb, gn;
    struct runs_ref ref = {0};
    runs_agg_init(&gb);
    runs_agg_init(&gn);
    /* nfiles 1: a file that cannot be read fails the command even with --salvage (there is
     * nothing to compare with) */
    struct runs_opts ro = {.cmd = "diff",
                           .salvage = a.salvage,
                           .threads = a.threads,
                           .allow_different = allow_different,
                           .nfiles = 1,
                           .ref = &ref};
    struct drow *rows = NULL;
    int rc = runs_agg_add_file(&gb, &ro, files[0]);
    if (!rc)
        rc = runs_agg_add_file(&gn, &ro, files[1]);
    if (rc)
        goto out;
    struct diff d = {.gb = &gb, .gn = &gn};
    d.timed = gb.unit == gn.unit && gb.unit != RUNS_UNTIMED;
    d.ns = d.timed && gb.unit == RUNS_NS;
    if (sort < 0)
        sort = d.timed ? 1 : 0;
    if (sort && !d.timed) {
        rc = cli_fail("diff", "--sort total/self needs times in both traces and they have none "
                              "or different time bases",
                      "use --sort calls, or compare runs recorded with per-event timestamps");
        goto out;
    }
    int meas = sort == 0 ? RUNS_CALLS : sort == 1 ? RUNS_TOTAL : RUNS_SELF;
    d.sort = runs_meas_names[meas];
    size_t n;
    if (!(rows = join(&gb, &gn, &n, &d.untraced))) {
        rc = cli_fail("diff", "out of memory", cli_advice(PTC_E_NOMEM));
        goto out;
    }
    qsort_r(rows, n, sizeof(*rows), cmp_drow, &meas);
    if (!have_top)
        top = fmt == FMT_TABLE ? 20 : 0;
    size_t shown = top && top < n ? (size_t)top : n;
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
    const struct runs_run *both[2] = {first_run(&gb), first_run(&gn)};
    for (int k = 0; k < 2; k++) {
        if (both[k]->damage)
            fprintf(stderr, "ptcall diff: warning: salvaged: %s; the figures of %s cover only "
                            "what precedes the damage (or the undamaged chunks)\n",
                    both[k]->damage_msg, both[k]->path);
        else if (fmt == FMT_CSV && runs_run_lossy(both[k]))
            /* the csv has no room for it: say so where a person sees it */
            fprintf(stderr, "ptcall diff: warning: %s is lossy or incomplete: its figures are "
                            "lower bounds\n",
                    both[k]->path);
    }
    switch (fmt) {
    case FMT_TABLE:
        print_table(&d, rows, n, shown);
        break;
    case FMT_CSV:
        print_csv(&d, rows, shown);
        break;
    case FMT_JSON:
        print_json(&d, rows, n, shown);
        break;
    }
    rc = cli_flush_output("diff", "the diff");
out:
    free(rows);
    runs_agg_free(&gb);
    runs_agg_free(&gn);
    runs_ref_free(&ref);
    return rc;
}

int cmd_diff(int argc, char **argv)
{
    struct cli_values v;
    int r = cli_parse(CMD_DIFF, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    r = run_diff(&v);
    cli_values_free(&v);
    return r;
}
