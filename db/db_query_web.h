/* Reading the runs database for the web views (ptcall serve, ptcall html): what db_query.h
 * does not give: one function's figures run by run and its callers and callees over chosen
 * runs, and whether a tag or a function exists (for 404s). The hot functions are db_hot's. */
#ifndef PTCALL_DB_QUERY_WEB_H
#define PTCALL_DB_QUERY_WEB_H

#include <stddef.h>
#include <stdint.h>

#include "db_query.h"

/* Function fid of the dictionary into *out (free with db_wfunction_free); *found 0 when
 * there is none. */
int db_wfunction(struct db *d, int64_t fid, struct db_func_out *out, int *found);
/* Frees what *f holds (not f itself). */
void db_wfunction_free(struct db_func_out *f);

/* Function fid's figures in each of ids that called it, ascending run id. */
struct db_wpoint {
    int64_t run;
    uint64_t calls, total, self;
    int timed;               /* total and self known: not an untimed run, not counted there */
    int demoted;             /* (schema 7) a budget's governor demoted it in that run: its
                                times are of its calls until then */
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
