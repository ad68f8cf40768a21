/* Reading the runs database for the web views (ptcall serve, ptcall html): what db_query.h
 * does not give: hot functions with their spread (min, standard deviation) as well as sum,
 * mean, median and max, one function's figures run by run and its callers and callees over
 * chosen runs, and whether a tag or a function exists (for 404s). */
#ifndef PTCALL_DB_QUERY_WEB_H
#define PTCALL_DB_QUERY_WEB_H

#include <stddef.h>
#include <stdint.h>

#include "db_query.h"

enum db_wstat { DB_W_SUM, DB_W_MEAN, DB_W_MEDIAN, DB_W_MAX, DB_W_MIN, DB_W_STDDEV, DB_NW };
extern const char *const db_wstat_names[DB_NW]; /* "sum", ..., "stddev" */

struct db_whot_fn {
    struct db_func_out f;    /* identity (name, module base name, file, line) */
    uint32_t runs;           /* runs in which it was called */
    double v[DB_NMEAS][DB_NW]; /* a run without the function counts as 0, as in db_hot */
};
struct db_whot {
    struct db_whot_fn *fn;
    size_t n, nruns;
    int timed, mixed;
    char time_unit[8];
};
/* Per-function statistics over ids, unranked. 0 or -DB_E_*. */
int db_whot(struct db *d, const struct db_ids *ids, struct db_whot *out);
/* Ranks by statistic stat of measure meas, larger first; ties: more calls, then name. */
void db_whot_rank(struct db_whot *h, int stat, int meas);
void db_whot_free(struct db_whot *h);

/* Function fid of the dictionary into *out (free with db_wfunction_free); *found 0 when
 * there is none. */
int db_wfunction(struct db *d, int64_t fid, struct db_func_out *out, int *found);
/* Frees what *f holds (not f itself). */
void db_wfunction_free(struct db_func_out *f);

/* Function fid's figures in each of ids that called it, ascending run id. */
struct db_wpoint {
    int64_t run;
    uint64_t calls, total, self;
    int timed;
};
int db_wfunction_runs(struct db *d, int64_t fid, const struct db_ids *ids,
                      struct db_wpoint **out, size_t *n);

/* fid's callers (callers 1) or callees (0) over ids: the other function's id and name, the
 * calls along the edge summed, and the runs that have the edge; most calls first. */
struct db_wedge {
    int64_t other;
    char *name;
    uint64_t calls;
    uint32_t runs;
};
int db_wfunction_edges(struct db *d, int64_t fid, const struct db_ids *ids, int callers,
                       struct db_wedge **out, size_t *n);
void db_wedges_free(struct db_wedge *v, size_t n);

/* Whether some run has tag name (with value, when value is not NULL). */
int db_wtag_exists(struct db *d, const char *name, const char *value, int *found);

/* A number that changes whenever runs are added or removed (ids are never reused): the
 * count of runs and the largest id. For caches of answers over runs. */
int db_wgeneration(struct db *d, int64_t *count, int64_t *max_id);

#endif
