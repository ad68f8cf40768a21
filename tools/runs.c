/* Several runs in one analysis: the command line's list of traces, decoding one run at a
 * time, and the per-function aggregate (see runs.h). */
#include "runs.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_common.h"
#include "output.h"

const char *const runs_meas_names[RUNS_NMEAS] = {"calls", "total", "self"};
const char *const runs_stat_names[RUNS_NSTATS + 1] = {"mean", "min", "max", "stddev", NULL};

/* ---- the list of trace files ---------------------------------------------------------- */

static int push_path(struct runs_paths *p, char *s)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        char **v = realloc(p->v, cap * sizeof(*v));
        if (!v)
            return -1;
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = s;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int oom(const char *cmd) { return cli_fail(cmd, "out of memory", cli_advice(PTC_E_NOMEM)); }

int runs_paths_add(struct runs_paths *p, const char *cmd, const char *arg)
{
    struct stat sb;
    /* Anything that is not a directory is passed on as a file: a missing or unreadable one
     * then fails in the decoder, whose message names it. */
    if (stat(arg, &sb) || !S_ISDIR(sb.st_mode)) {
        char *s = strdup(arg);
        if (!s || push_path(p, s)) {
            free(s);
            return oom(cmd);
        }
        return 0;
    }
    p->dirs = 1;
    DIR *d = opendir(arg);
    if (!d) {
        char what[1200];
        snprintf(what, sizeof(what), "cannot read the directory %s: %s", arg, strerror(errno));
        return cli_fail(cmd, what, "check the path and its permissions");
    }
    size_t first = p->n, alen = strlen(arg);
    int sep = alen && arg[alen - 1] != '/';
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".ptc"))
            continue;
        char *s = malloc(alen + sep + len + 1);
        if (!s) {
            closedir(d);
            return oom(cmd);
        }
        memcpy(s, arg, alen);
        if (sep)
            s[alen] = '/';
        memcpy(s + alen + sep, e->d_name, len + 1);
        /* a subdirectory named *.ptc is not a trace; everything else is tried */
        if (!stat(s, &sb) && S_ISDIR(sb.st_mode)) {
            free(s);
            continue;
        }
        if (push_path(p, s)) {
            free(s);
            closedir(d);
            return oom(cmd);
        }
    }
    closedir(d);
    if (p->n == first) {
        char what[1200];
        snprintf(what, sizeof(what), "the directory %s holds no .ptc files", arg);
        return cli_fail(cmd, what,
                        "give trace files written by 'ptcall record' or a directory that "
                        "holds some");
    }
    /* readdir's order is the file system's: sort so the runs' order (and the output) does
     * not depend on it */
    qsort(p->v + first, p->n - first, sizeof(*p->v), cmp_str);
    return 0;
}

void runs_paths_free(struct runs_paths *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i]);
    free(p->v);
    memset(p, 0, sizeof(*p));
}

/* ---- runs ------------------------------------------------------------------------------ */

int runs_run_complete(const struct runs_run *r)
{
    return ptc_totals_complete(&r->t) && !r->damage;
}

int runs_run_lossy(const struct runs_run *r)
{
    return r->t.lost_events || r->t.gaps || r->t.lost_other || r->t.lossy_threads ||
           r->t.bad_stubs || r->t.fork_unknown || !runs_run_complete(r);
}

void runs_describe_quality(const struct runs_run *r, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
#define ADD(...)                                                                          \
    do {                                                                                  \
        if (k < n) {                                                                      \
            int w = snprintf(buf + k, n - k, __VA_ARGS__);                                \
            k += w > 0 ? (size_t)w : 0;                                                   \
        }                                                                                 \
    } while (0)
    const struct ptc_totals *t = &r->t;
    if (t->lost_events || t->gaps || t->lost_other) {
        if (t->lost_events)
            ADD("%llu events lost", (unsigned long long)t->lost_events);
        else
            ADD("events lost (count unknown)");
        ADD(" at %llu gap%s", (unsigned long long)t->gaps, t->gaps == 1 ? "" : "s");
        if (t->lost_other)
            ADD(", %llu units of Intel PT data lost", (unsigned long long)t->lost_other);
        if (r->lossy_threads)
            ADD(" (threads %s)", r->lossy_threads);
    }
    if (t->bad_stubs)
        ADD("%s%llu events named unknown stubs", k ? "; " : "",
            (unsigned long long)t->bad_stubs);
    if (t->fork_unknown)
        ADD("%s%llu fork children without their parent's stack", k ? "; " : "",
            (unsigned long long)t->fork_unknown);
    if (r->damage)
        ADD("%ssalvaged from a damaged trace: %s", k ? "; " : "", r->damage_msg);
    else if (!t->record_end)
        ADD("%sno RECORD_END chunk: the recording was interrupted", k ? "; " : "");
#undef ADD
}

/* ---- decoding one run ------------------------------------------------------------------ */

struct lossy_list {
    char buf[200];
    size_t len;
    int n;
};

static void collect_lossy(void *ctx, uint32_t pid, uint32_t tid, uint64_t lost, uint64_t gaps)
{
    struct lossy_list *l = ctx;
    (void)lost;
    (void)gaps;
    if (l->len < sizeof(l->buf)) {
        int w = l->n < 8 ? snprintf(l->buf + l->len, sizeof(l->buf) - l->len, "%s%u/%u",
                                    l->n ? ", " : "", pid, tid)
                : l->n == 8 ? snprintf(l->buf + l->len, sizeof(l->buf) - l->len, ", ...")
                            : 0;
        l->len += w > 0 ? (size_t)w : 0;
    }
    l->n++;
}

/* Decodes path as cli_decode() does, but leaves the message to the caller, which words it
 * for several runs or records the file as skipped. Returns the session, or NULL with *err
 * (the decoder's code) and what (names the file) set; *fatal_advice says what to do. */
static struct ptc_session *decode_run(const struct runs_opts *o, const char *path, int *damage,
                                      char *damage_msg, size_t dn, char *what, size_t wn,
                                      const char **advice)
{
    *damage = 0;
    struct ptc_session *s = ptc_session_new();
    if (!s) {
        snprintf(what, wn, "out of memory reading %s", path);
        *advice = cli_advice(PTC_E_NOMEM);
        return NULL;
    }
    if (ptc_pt_attach) {
        int e = ptc_pt_attach(s);
        if (e) {
            snprintf(what, wn, "%s: %s", path,
                     ptc_session_errmsg(s)[0] ? ptc_session_errmsg(s) : ptc_strerror(e));
            *advice = cli_advice(e);
            ptc_session_free(s);
            return NULL;
        }
    }
    unsigned flags = o->salvage ? PTC_DECODE_SALVAGE : 0;
    int rc = o->threads == 1 ? ptc_decode_file(s, path, flags)
                             : ptc_decode_file_threads(s, path, flags, o->threads);
    int salvageable = rc == -PTC_E_TRUNCATED || rc == -PTC_E_CORRUPT ||
                      rc == -PTC_E_UNSUPPORTED || rc == -PTC_E_IO;
    if (rc && !(o->salvage && salvageable && ptc_session_num_funcs(s))) {
        const char *m = ptc_session_errmsg(s);
        /* the decoder's messages name the file; make sure of it */
        if (m[0] && strstr(m, path))
            snprintf(what, wn, "%s", m);
        else
            snprintf(what, wn, "%s: %s", path, m[0] ? m : ptc_strerror(rc));
        *advice = o->salvage && salvageable
                      ? "nothing can be salvaged: no module table survived the damage"
                      : cli_advice(rc);
        /* a file that failed to open never reached ptc_session_finish(), which frees the
         * Intel PT front-end's handler context; --salvage may skip many such files */
        ptc_session_finish(s);
        ptc_session_free(s);
        return NULL;
    }
    if (rc) {
        *damage = rc;
        snprintf(damage_msg, dn, "%s", ptc_session_errmsg(s));
    }
    if (!ptc_session_num_funcs(s)) {
        *advice = cli_no_module(what, wn, path, s);
        ptc_session_free(s);
        return NULL;
    }
    return s;
}

/* ---- the aggregate --------------------------------------------------------------------- */

void runs_agg_init(struct runs_agg *g)
{
    memset(g, 0, sizeof(*g));
    g->unit = RUNS_UNSET;
}

void runs_ref_free(struct runs_ref *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->mods[i]);
    free(r->mods);
    free(r->path);
    memset(r, 0, sizeof(*r));
}

void runs_agg_free(struct runs_agg *g)
{
    for (size_t i = 0; i < g->nfn; i++) {
        free(g->fn[i].key);
        free(g->fn[i].name);
        free(g->fn[i].linkage_name);
        free(g->fn[i].file);
        free(g->fn[i].module);
    }
    for (size_t i = 0; i < g->nrun; i++) {
        free(g->run[i].path);
        free(g->run[i].damage_msg);
        free(g->run[i].lossy_threads);
        free(g->run[i].skipped);
        free(g->run[i].selection);
    }
    free(g->fn);
    free(g->slot);
    free(g->run);
    free(g->touched);
    free(g->scratch);
    runs_agg_init(g);
}

static uint64_t hash_key(const char *k, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)k[i]) * 1099511628211ull;
    return h;
}

/* The slot of key: holding its function, or the empty one where it goes. */
static size_t find_slot(const struct runs_agg *g, const char *key, size_t n)
{
    size_t mask = g->nslot - 1, i = (size_t)hash_key(key, n) & mask;
    while (g->slot[i]) {
        const struct runs_fn *f = &g->fn[g->slot[i] - 1];
        if (f->keylen == n && !memcmp(f->key, key, n))
            return i;
        i = (i + 1) & mask;
    }
    return i;
}

static int grow_slots(struct runs_agg *g)
{
    size_t n = g->nslot ? 2 * g->nslot : 256;
    uint32_t *old = g->slot;
    size_t oldn = g->nslot;
    g->slot = calloc(n, sizeof(*g->slot));
    if (!g->slot) {
        g->slot = old;
        return -1;
    }
    g->nslot = n;
    for (size_t i = 0; i < oldn; i++)
        if (old[i]) {
            const struct runs_fn *f = &g->fn[old[i] - 1];
            g->slot[find_slot(g, f->key, f->keylen)] = old[i];
        }
    free(old);
    return 0;
}

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

/* The function with fi's key, added if new; NULL when out of memory. */
static struct runs_fn *intern(struct runs_agg *g, const struct ptc_func_info *fi)
{
    const char *base = ptc_out_base(fi->module ? fi->module : "");
    const char *lk = fi->linkage_name ? fi->linkage_name : "", *file = fi->file ? fi->file : "";
    size_t lb = strlen(base), ll = strlen(lk), lf = strlen(file), n = lb + ll + lf + 3;
    if (n > g->capscratch) {
        char *s = realloc(g->scratch, 2 * n);
        if (!s)
            return NULL;
        g->scratch = s;
        g->capscratch = 2 * n;
    }
    char *k = g->scratch;
    memcpy(k, base, lb + 1);
    memcpy(k + lb + 1, lk, ll + 1);
    memcpy(k + lb + ll + 2, file, lf + 1);
    if (2 * (g->nfn + 1) > g->nslot && grow_slots(g))
        return NULL;
    size_t i = find_slot(g, k, n);
    if (g->slot[i])
        return &g->fn[g->slot[i] - 1];
    if (g->nfn == g->capfn) {
        size_t cap = g->capfn ? 2 * g->capfn : 256;
        struct runs_fn *v = realloc(g->fn, cap * sizeof(*v));
        if (!v)
            return NULL;
        g->fn = v;
        g->capfn = cap;
    }
    struct runs_fn *f = &g->fn[g->nfn];
    memset(f, 0, sizeof(*f));
    f->key = malloc(n);
    f->name = dup_or_empty(fi->name);
    f->linkage_name = dup_or_empty(fi->linkage_name);
    f->file = dup_or_empty(fi->file);
    f->module = dup_or_empty(fi->module);
    if (!f->key || !f->name || !f->linkage_name || !f->file || !f->module) {
        free(f->key);
        free(f->name);
        free(f->linkage_name);
        free(f->file);
        free(f->module);
        return NULL;
    }
    memcpy(f->key, k, n);
    f->keylen = n;
    f->line = fi->line;
    g->slot[i] = (uint32_t)++g->nfn;
    return f;
}

const struct runs_fn *runs_agg_find(const struct runs_agg *g, const struct runs_fn *f)
{
    if (!g->nslot)
        return NULL;
    size_t i = find_slot(g, f->key, f->keylen);
    return g->slot[i] ? &g->fn[g->slot[i] - 1] : NULL;
}

/* The distinct module basenames of session s (a handful: compared linearly), the runtime's
 * "[blocking]" module left out: every traced program has it, so it relates no two. Returns 0
 * or -1 when out of memory. */
static int session_modules(const struct ptc_session *s, struct runs_ref *out)
{
    uint32_t nf = ptc_session_num_funcs(s);
    const char *prev = NULL;
    for (uint32_t id = 0; id < nf; id++) {
        const char *m = ptc_session_func(s, id)->module;
        if (!m || m == prev || ptc_session_func_blocking(s, id))
            continue;
        prev = m;
        const char *b = ptc_out_base(m);
        size_t i;
        for (i = 0; i < out->n; i++)
            if (!strcmp(out->mods[i], b))
                break;
        if (i < out->n)
            continue;
        char **v = realloc(out->mods, (out->n + 1) * sizeof(*v));
        if (!v)
            return -1;
        out->mods = v;
        if (!(out->mods[out->n] = strdup(b)))
            return -1;
        out->n++;
    }
    return 0;
}

static void join_mods(const struct runs_ref *r, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    for (size_t i = 0; i < r->n && k < n; i++) {
        int w = i < 4 ? snprintf(buf + k, n - k, "%s%s", i ? ", " : "", r->mods[i])
                      : snprintf(buf + k, n - k, ", ... (%zu modules)", r->n);
        k += w > 0 ? (size_t)w : 0;
        if (i >= 4)
            break;
    }
}

/* Runs of unrelated programs would be summed function by function without anything in
 * common: refuse unless asked, the way a user comparing the wrong files wants to hear. */
static int check_related(const struct runs_opts *o, const struct ptc_session *s,
                         const char *path)
{
    struct runs_ref mine = {0};
    if (session_modules(s, &mine)) {
        runs_ref_free(&mine);
        return oom(o->cmd);
    }
    struct runs_ref *ref = o->ref;
    if (!ref->path) { /* the first run read is the reference */
        ref->path = strdup(path);
        if (!ref->path) {
            runs_ref_free(&mine);
            return oom(o->cmd);
        }
        ref->mods = mine.mods;
        ref->n = mine.n;
        return 0;
    }
    int common = 0;
    for (size_t i = 0; i < mine.n && !common; i++)
        for (size_t j = 0; j < ref->n && !common; j++)
            common = !strcmp(mine.mods[i], ref->mods[j]);
    if (!common && !o->allow_different) {
        char a[300], b[300], what[2000];
        join_mods(ref, a, sizeof(a));
        join_mods(&mine, b, sizeof(b));
        snprintf(what, sizeof(what),
                 "%s and %s have no instrumented module in common (%s; %s): they look like "
                 "runs of different programs",
                 ref->path, path, a, b);
        runs_ref_free(&mine);
        return cli_fail(o->cmd, what,
                        "give runs of one program, or pass --allow-different to match their "
                        "functions by name anyway");
    }
    runs_ref_free(&mine);
    return 0;
}

static struct runs_run *new_run(struct runs_agg *g, const char *path)
{
    if (g->nrun == g->caprun) {
        size_t cap = g->caprun ? 2 * g->caprun : 16;
        struct runs_run *v = realloc(g->run, cap * sizeof(*v));
        if (!v)
            return NULL;
        g->run = v;
        g->caprun = cap;
    }
    struct runs_run *r = &g->run[g->nrun];
    memset(r, 0, sizeof(*r));
    if (!(r->path = strdup(path)))
        return NULL;
    g->nrun++;
    return r;
}

static int fold(struct runs_agg *g, const struct runs_opts *o, struct ptc_session *s,
                struct runs_run *r)
{
    size_t run_no = g->nread + 1;
    int unit = !r->t.timed ? RUNS_UNTIMED : r->t.has_timebase ? RUNS_NS : RUNS_TICKS;
    if (g->unit == RUNS_UNSET)
        g->unit = unit;
    else if (g->unit != unit || g->mixed_units) {
        /* ns and ticks (or no times) cannot be added up: keep the calls only */
        g->mixed_units = 1;
        g->unit = RUNS_UNTIMED;
    }
    g->ntouched = 0;
    uint32_t nf = ptc_session_num_funcs(s);
    for (uint32_t id = 0; id < nf; id++) {
        struct runs_fn *f = intern(g, ptc_session_func(s, id));
        if (!f)
            return oom(o->cmd);
        /* a function counted within a budget has exact calls (and no times): kept */
        if (ptc_session_func_state(s, id) == PTC_FUNC_NEITHER) {
            /* neither armed nor counted in this run: its 0 calls mean "not known" */
            if (f->untraced_mark != run_no) {
                f->untraced_mark = run_no;
                f->untraced_runs++;
            }
            continue;
        }
        struct ptc_func_stats st;
        ptc_session_func_stats(s, id, &st);
        if (!st.calls && !st.total) /* in the module table but never called */
            continue;
        if (f->cur_run != run_no) {
            if (g->ntouched == g->captouched) {
                size_t cap = g->captouched ? 2 * g->captouched : 256;
                size_t *v = realloc(g->touched, cap * sizeof(*v));
                if (!v)
                    return oom(o->cmd);
                g->touched = v;
                g->captouched = cap;
            }
            g->touched[g->ntouched++] = (size_t)(f - g->fn);
            f->cur_run = run_no;
            memset(f->cur, 0, sizeof(f->cur));
        }
        f->cur[RUNS_CALLS] += st.calls;
        f->cur[RUNS_TOTAL] += st.total;
        f->cur[RUNS_SELF] += st.self;
    }
    int lossy = runs_run_lossy(r);
    for (size_t i = 0; i < g->ntouched; i++) {
        struct runs_fn *f = &g->fn[g->touched[i]];
        f->runs++;
        f->lossy_runs += lossy != 0;
        for (int m = 0; m < RUNS_NMEAS; m++) {
            uint64_t v = f->cur[m];
            f->sum[m] += v;
            if (f->runs == 1 || v < f->min[m])
                f->min[m] = v;
            if (f->runs == 1 || v > f->max[m])
                f->max[m] = v;
            /* Welford: no sum of squares of large counts to lose precision in */
            double d = (double)v - f->mean[m];
            f->mean[m] += d / f->runs;
            f->m2[m] += d * ((double)v - f->mean[m]);
        }
    }
    g->nread++;
    return 0;
}

int runs_agg_add_file(struct runs_agg *g, const struct runs_opts *o, const char *path)
{
    char damage_msg[512], what[1200];
    const char *advice = "";
    int damage;
    struct runs_run *r = new_run(g, path);
    if (!r)
        return oom(o->cmd);
    struct ptc_session *s =
        decode_run(o, path, &damage, damage_msg, sizeof(damage_msg), what, sizeof(what), &advice);
    if (!s) {
        if (o->salvage && o->nfiles > 1) {
            /* --salvage over several runs: use the others, and say which was left out */
            if (!(r->skipped = strdup(what)))
                return oom(o->cmd);
            fprintf(stderr, "ptcall %s: warning: skipped %s: %s\n", o->cmd, path, what);
            return 0;
        }
        if (o->nfiles > 1) {
            char adv[600];
            snprintf(adv, sizeof(adv), "%s (or leave it out of the %zu runs)", advice, o->nfiles);
            return cli_fail(o->cmd, what, adv);
        }
        return cli_fail(o->cmd, what, advice);
    }
    int rc = check_related(o, s, path);
    if (rc) {
        ptc_session_free(s);
        return rc;
    }
    ptc_session_totals(s, &r->t);
    if (damage) {
        r->damage = damage;
        if (!(r->damage_msg = strdup(damage_msg))) {
            ptc_session_free(s);
            return oom(o->cmd);
        }
    }
    if (r->t.lossy_threads) {
        struct lossy_list l = {.len = 0};
        ptc_session_lossy_threads(s, collect_lossy, &l);
        if (l.n && !(r->lossy_threads = strdup(l.buf))) {
            ptc_session_free(s);
            return oom(o->cmd);
        }
    }
    struct ptc_selection sel;
    ptc_session_selection(s, &sel);
    if (sel.selected && !(r->selection = strdup(sel.spec))) {
        ptc_session_free(s);
        return oom(o->cmd);
    }
    r->sel_traced = sel.traced;
    r->sel_funcs = sel.funcs;
    rc = fold(g, o, s, r);
    /* the session goes at once: memory holds one run's decoder state at a time */
    ptc_session_free(s);
    return rc;
}

/* sqrt() without libm, which the ptcall binary does not link: Newton's iteration from an
 * estimate above the root converges monotonically; 64 steps cover any double. */
static double sqrt_pos(double x)
{
    if (!(x > 0))
        return 0;
    double r = x > 1 ? x : 1;
    for (int i = 0; i < 64; i++) {
        double n = 0.5 * (r + x / r);
        if (n >= r)
            break;
        r = n;
    }
    return r;
}

double runs_fn_stat(const struct runs_agg *g, const struct runs_fn *f, int m, int st)
{
    size_t traced = g->nread - f->untraced_runs; /* the runs that could see it */
    double n = (double)traced, k = (double)f->runs;
    if (!f->runs || !traced)
        return 0;
    switch (st) {
    case RUNS_STAT_MIN:
        return f->runs < traced ? 0 : (double)f->min[m];
    case RUNS_STAT_MAX:
        return (double)f->max[m];
    case RUNS_STAT_MEAN:
        return (double)f->sum[m] / n;
    case RUNS_STAT_STDDEV: {
        if (traced < 2)
            return 0;
        /* Chan et al.'s merge of the runs that had the function (k values, mean, m2) with
         * n - k zeros (mean 0, m2 0) */
        double m2 = f->m2[m] + f->mean[m] * f->mean[m] * k * (n - k) / n;
        return sqrt_pos(m2 / (n - 1));
    }
    default:
        return 0;
    }
}

uint64_t runs_agg_sum(const struct runs_agg *g, size_t field_offset)
{
    uint64_t v = 0;
    for (size_t i = 0; i < g->nrun; i++)
        if (!g->run[i].skipped) {
            uint64_t x;
            memcpy(&x, (const char *)&g->run[i].t + field_offset, sizeof(x));
            v += x;
        }
    return v;
}

size_t runs_agg_count_lossy(const struct runs_agg *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->nrun; i++)
        n += !g->run[i].skipped && runs_run_lossy(&g->run[i]);
    return n;
}

size_t runs_agg_count_selective(const struct runs_agg *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->nrun; i++)
        n += !g->run[i].skipped && g->run[i].selection;
    return n;
}

size_t runs_agg_count_incomplete(const struct runs_agg *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->nrun; i++)
        n += !g->run[i].skipped && !runs_run_complete(&g->run[i]);
    return n;
}

const char *runs_agg_backend(const struct runs_agg *g)
{
    const char *b = NULL;
    for (size_t i = 0; i < g->nrun; i++) {
        if (g->run[i].skipped)
            continue;
        const char *x = cli_backend_name(g->run[i].t.backend);
        if (b && strcmp(b, x))
            return "mixed";
        b = x;
    }
    return b ? b : "unknown";
}

const char *runs_unit_name(int unit)
{
    return unit == RUNS_NS ? "ns" : unit == RUNS_TICKS ? "ticks" : "none";
}

void runs_json_run(FILE *f, const struct runs_run *r)
{
    const struct ptc_totals *t = &r->t;
    fprintf(f, "{\"trace\": ");
    cli_json_str(f, r->path);
    fprintf(f, ", \"backend\": \"%s\", \"timed\": %s, \"time_unit\": \"%s\", \"events\": %llu, "
               "\"calls\": %llu, \"threads\": %llu, \"processes\": %llu, \"gaps\": %llu, "
               "\"lost_events\": %llu, \"lost_pt_units\": %llu, \"lossy_threads\": %llu, "
               "\"complete\": %s, \"lossy\": %s, ",
            cli_backend_name(t->backend), t->timed ? "true" : "false",
            !t->timed ? "none" : t->has_timebase ? "ns" : "ticks", (unsigned long long)t->events,
            (unsigned long long)t->calls, (unsigned long long)t->threads,
            (unsigned long long)t->processes, (unsigned long long)t->gaps,
            (unsigned long long)t->lost_events, (unsigned long long)t->lost_other,
            (unsigned long long)t->lossy_threads, runs_run_complete(r) ? "true" : "false",
            runs_run_lossy(r) ? "true" : "false");
    if (t->timed)
        fprintf(f, "\"total_time\": %llu, ", (unsigned long long)t->total_time);
    else
        fprintf(f, "\"total_time\": null, ");
    fprintf(f, "\"damage\": ");
    if (r->damage)
        cli_json_str(f, r->damage_msg);
    else
        fprintf(f, "null");
    if (r->selection) { /* only then: the runs of untouched traces read as before */
        fprintf(f, ", \"selection\": {\"spec\": ");
        cli_json_str(f, r->selection);
        fprintf(f, ", \"traced\": %u, \"functions\": %u}", r->sel_traced, r->sel_funcs);
    }
    fprintf(f, "}");
}
