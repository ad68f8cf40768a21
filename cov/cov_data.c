/* The coverage data set in memory: what a .ptcov file holds and `cov run` builds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cov.h"
#include "ptc_escape.h"

void cov_data_init(struct cov_data *d)
{
    memset(d, 0, sizeof(*d));
    d->campaign_ms = -1;
}

void cov_input_free(struct cov_input *in)
{
    free(in->name);
    free(in->hits);
    free(in->bhits);
    in->name = NULL;
    in->hits = NULL;
    in->bhits = NULL;
    in->nhits = 0;
    in->nbhits = 0;
}

/* The call graph (cov_graph.c builds it; the data set owns it) */
static void graph_free(struct cov_graph *g)
{
    if (!g)
        return;
    free(g->flags);
    free(g->type_id);
    free(g->icall_start);
    free(g->icall_type);
    free(g->icall_block);
    for (uint32_t i = 0; i < g->ntaken_names; i++)
        free(g->taken_names[i]);
    free(g->taken_names);
    free(g->succ_start);
    free(g->succs);
    free(g);
}

void cov_data_free(struct cov_data *d)
{
    for (uint32_t i = 0; i < d->nmodules; i++)
        free(d->modules[i].path);
    for (uint32_t i = 0; i < d->nfuncs; i++) {
        free(d->funcs[i].name);
        free(d->funcs[i].linkage);
        free(d->funcs[i].file);
        free(d->funcs[i].callees);
    }
    for (uint32_t i = 0; i < d->ninputs; i++)
        cov_input_free(&d->inputs[i]);
    free(d->modules);
    free(d->funcs);
    free(d->inputs);
    for (uint32_t i = 0; i < d->nfiles; i++)
        free(d->files[i]);
    free(d->files);
    free(d->blocks);
    free(d->lines);
    free(d->target);
    free(d->harness);
    free(d->watch);
    for (uint32_t i = 0; i < d->norigins; i++) {
        free(d->origins[i].host);
        free(d->origins[i].file);
    }
    free(d->origins);
    graph_free(d->graph);
    memset(d, 0, sizeof(*d));
}

struct cov_origin *cov_data_add_origin(struct cov_data *d, const char *host, const char *file,
                                       uint64_t created, int64_t campaign_ms)
{
    struct cov_origin *v = realloc(d->origins, (d->norigins + 1) * sizeof(*v));
    if (!v)
        return NULL;
    d->origins = v;
    struct cov_origin *o = &v[d->norigins];
    o->host = strdup(host ? host : "");
    o->file = strdup(file ? file : "");
    o->created = created;
    o->campaign_ms = campaign_ms;
    if (!o->host || !o->file) {
        free(o->host);
        free(o->file);
        return NULL;
    }
    d->norigins++;
    return o;
}

/* Grows an array of elem-byte elements to hold one more; doubling keeps appends amortised
 * constant over a queue of tens of thousands of inputs. */
static void *grow(void **arr, uint32_t *n, uint32_t *cap, size_t elem)
{
    if (*n == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 16;
        if (nc < *cap)
            return NULL;
        void *p = realloc(*arr, (size_t)nc * elem);
        if (!p)
            return NULL;
        *arr = p;
        *cap = nc;
    }
    char *e = (char *)*arr + (size_t)(*n)++ * elem;
    memset(e, 0, elem);
    return e;
}

struct cov_module *cov_data_add_module(struct cov_data *d)
{
    return grow((void **)&d->modules, &d->nmodules, &d->cap_modules, sizeof(*d->modules));
}

struct cov_func *cov_data_add_func(struct cov_data *d)
{
    return grow((void **)&d->funcs, &d->nfuncs, &d->cap_funcs, sizeof(*d->funcs));
}

struct cov_input *cov_data_add_input(struct cov_data *d)
{
    struct cov_input *in =
        grow((void **)&d->inputs, &d->ninputs, &d->cap_inputs, sizeof(*d->inputs));
    if (in)
        in->time_ms = -1;
    return in;
}

struct cov_block *cov_data_add_block(struct cov_data *d)
{
    return grow((void **)&d->blocks, &d->nblocks, &d->cap_blocks, sizeof(*d->blocks));
}

struct cov_line *cov_data_add_line(struct cov_data *d)
{
    return grow((void **)&d->lines, &d->nlines, &d->cap_lines, sizeof(*d->lines));
}

int64_t cov_data_file(struct cov_data *d, const char *file)
{
    /* the newest files first: a unit's blocks name its own files over and over */
    for (uint32_t i = d->nfiles; i-- > 0;)
        if (strcmp(d->files[i], file) == 0)
            return i;
    char *c = strdup(file);
    if (!c)
        return -ENOMEM;
    char **slot = grow((void **)&d->files, &d->nfiles, &d->cap_files, sizeof(*d->files));
    if (!slot) {
        free(c);
        return -ENOMEM;
    }
    *slot = c;
    return (int64_t)d->nfiles - 1;
}

const char *cov_kind_name(unsigned kind)
{
    static const char *const k[] = {"queue", "crash", "hang"};
    return kind < 3 ? k[kind] : "?";
}

const char *cov_outcome_name(unsigned outcome)
{
    static const char *const o[] = {"exited", "signal", "timeout", "error"};
    return outcome < 4 ? o[outcome] : "?";
}

/* ---- the function universe (docs/cov.md, *The universe*) ---- */

unsigned cov_placement_of(uint32_t units_early, uint32_t units_late)
{
    if (units_early && units_late)
        return COV_PLACE_MIXED;
    return units_late ? COV_PLACE_LATE : units_early ? COV_PLACE_EARLY : COV_PLACE_UNKNOWN;
}

const char *cov_placement_name(unsigned placement)
{
    static const char *const p[] = {"unknown", "early", "late", "mixed"};
    return placement < 4 ? p[placement] : "unknown";
}

const char *cov_universe_text(unsigned placement)
{
    switch (placement) {
    case COV_PLACE_EARLY:
        return "source-level functions (early placement)";
    case COV_PLACE_LATE:
        return "functions that survived inlining (late placement): functions inlined before "
               "the pass ran are not counted";
    case COV_PLACE_MIXED:
        return "mixed: source-level functions of the early-placed units, only the functions "
               "that survived inlining of the late-placed ones (functions inlined before the "
               "pass ran are not counted)";
    default:
        return "not recorded (a .ptcov written before ptcall recorded the placement)";
    }
}

unsigned cov_data_placement(const struct cov_data *d)
{
    unsigned p = COV_PLACE_UNKNOWN;
    for (uint32_t m = 0; m < d->nmodules; m++) {
        unsigned q = d->modules[m].placement;
        if (q == COV_PLACE_UNKNOWN)
            return COV_PLACE_UNKNOWN;
        p = m == 0 ? q : p == q ? p : COV_PLACE_MIXED;
    }
    return p;
}

static int by_time_name(const void *pa, const void *pb)
{
    const struct cov_input *a = pa, *b = pb;
    /* unknown times last: such inputs cannot have come first */
    if ((a->time_ms < 0) != (b->time_ms < 0))
        return a->time_ms < 0 ? 1 : -1;
    if (a->time_ms != b->time_ms)
        return a->time_ms < b->time_ms ? -1 : 1;
    return strcmp(a->name, b->name);
}

void cov_data_sort_inputs(struct cov_data *d)
{
    if (d->ninputs > 1)
        qsort(d->inputs, d->ninputs, sizeof(*d->inputs), by_time_name);
}

const char *cov_func_name(const struct cov_data *d, uint32_t f)
{
    const struct cov_func *fn = &d->funcs[f];
    if (fn->name && *fn->name)
        return fn->name;
    return fn->linkage && *fn->linkage ? fn->linkage : "?";
}

/* Names come from binaries and files: the one escaping of every output (common/ptc_escape.h)
 * keeps the JSON valid and the CSV safe whatever a map or a damaged .ptcov holds. */
void cov_json_str(FILE *f, const char *s)
{
    ptc_fput_json(f, s ? s : "");
}

void cov_csv_str(FILE *f, const char *s)
{
    ptc_fput_csv(f, s);
}

void cov_text_str(FILE *f, const char *s)
{
    ptc_fput_text(f, s);
}

void cov_csv_line(FILE *f, uint32_t line)
{
    if (line)
        fprintf(f, "%u", line);
}

void cov_csv_func(FILE *f, const struct cov_data *d, uint32_t func)
{
    const struct cov_func *fn = &d->funcs[func];
    cov_csv_str(f, cov_func_name(d, func));
    fputc(',', f);
    cov_csv_str(f, fn->linkage);
    fputc(',', f);
    cov_csv_str(f, d->modules[fn->module].path);
    fputc(',', f);
    cov_csv_str(f, fn->file);
    fputc(',', f);
    cov_csv_line(f, fn->line);
}
