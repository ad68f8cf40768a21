/* The runs database's query layer timed where a server calls it (db/db_query.h), without a
 * process start or an output format in the way: bench/db.py runs it on the database of 1,000
 * runs x 5,000 functions it builds (docs/benchmarks.md, Runs database).
 *
 * usage: db_query_bench URL ROUNDS
 * Opens URL once, then ROUNDS times each of:
 *   all     db_select (no filter) + db_hot ranked by the sum of self time, no medians: the
 *           ranking of every run (sums, means, maxima, minima, standard deviations);
 *   page    the same with the medians of the top 50, what the hot-function page asks first
 *           (`ptcall serve`'s GET /api/v1/hot);
 *   median  ranked by the median (every run's rows are read);
 *   half    the ranking over the runs of the first half of the ids (--runs 1-N/2): a subset;
 *   show    db_runs_get + db_run_functions of one run (the newest).
 * Prints one JSON object: per query the milliseconds of each round, and what was answered
 * (runs, functions, the top function and its calls sum), so that a wrong answer shows too. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db_query.h"
#include "db_schema.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

struct answer {
    size_t runs, functions;
    char top[128];
    double top_calls_sum;
};

/* The ranking over the runs f chooses. Returns 0 or the db error (message in d->err). */
static int ranking(struct db *d, const struct db_filter *f, int stat, size_t medians,
                   struct answer *a)
{
    struct db_ids ids;
    int e = db_select(d, f, &ids);
    if (e)
        return e;
    struct db_hot h;
    struct db_hot_ask ask = {stat, DB_M_SELF, medians};
    e = db_hot(d, &ids, &ask, &h);
    if (!e) {
        a->runs = h.nruns;
        a->functions = h.n;
        snprintf(a->top, sizeof(a->top), "%s", h.n && h.fn[0].f.name ? h.fn[0].f.name : "");
        a->top_calls_sum = h.n ? h.fn[0].v[DB_M_CALLS][DB_STAT_SUM] : 0;
        db_hot_free(&h);
    }
    db_ids_free(&ids);
    return e;
}

static int show(struct db *d, int64_t id, struct answer *a)
{
    struct db_ids ids = {&id, 1};
    struct db_run *run = NULL;
    int e = db_runs_get(d, &ids, 1, &run);
    struct db_func_out *fn = NULL;
    size_t n = 0;
    if (!e)
        e = db_run_functions(d, id, &fn, &n);
    if (!e) {
        a->runs = 1;
        a->functions = n;
        snprintf(a->top, sizeof(a->top), "%s", run->program);
        a->top_calls_sum = (double)run->counters[DB_C_CALLS];
    }
    db_funcs_free(fn, n);
    db_runs_free(run, run ? 1 : 0);
    return e;
}

int main(int argc, char **argv)
{
    if (argc != 3 || atoi(argv[2]) < 1) {
        fprintf(stderr, "usage: db_query_bench URL ROUNDS\n");
        return 2;
    }
    int rounds = atoi(argv[2]);
    struct db d;
    double t0 = now_ms();
    int e = db_open(&d, argv[1], DB_READ);
    if (e) {
        fprintf(stderr, "db_query_bench: %s\n", d.err);
        return 1;
    }
    double open_ms = now_ms() - t0;
    struct db_ids all;
    struct db_filter none;
    memset(&none, 0, sizeof(none));
    if ((e = db_select(&d, &none, &all)) || !all.n) {
        fprintf(stderr, "db_query_bench: %s\n", e ? d.err : "the database holds no run");
        db_close(&d);
        return 1;
    }
    char half[64];
    snprintf(half, sizeof(half), "%lld-%lld", (long long)all.v[0],
             (long long)all.v[(all.n - 1) / 2]);
    int64_t newest = all.v[all.n - 1];
    db_ids_free(&all);
    struct db_filter first_half = none;
    first_half.runs = half;

    static const char *const names[] = {"all", "page", "median", "half", "show"};
    printf("{\"database\": \"%s\", \"open_ms\": %.3f, \"rounds\": %d", d.where, open_ms, rounds);
    for (int q = 0; q < 5 && !e; q++) {
        struct answer a;
        memset(&a, 0, sizeof(a));
        printf(",\n \"%s\": {\"ms\": [", names[q]);
        for (int r = 0; r < rounds && !e; r++) {
            memset(&a, 0, sizeof(a));
            double s = now_ms();
            e = q == 0   ? ranking(&d, &none, DB_STAT_SUM, 0, &a)
                : q == 1 ? ranking(&d, &none, DB_STAT_SUM, 50, &a)
                : q == 2 ? ranking(&d, &none, DB_STAT_MEDIAN, 0, &a)
                : q == 3 ? ranking(&d, &first_half, DB_STAT_SUM, 0, &a)
                         : show(&d, newest, &a);
            printf("%s%.3f", r ? ", " : "", now_ms() - s);
        }
        printf("], \"runs\": %zu, \"functions\": %zu, \"top\": \"%s\", \"top_calls_sum\": %.0f}",
               a.runs, a.functions, a.top, a.top_calls_sum);
    }
    printf("}\n");
    if (e)
        fprintf(stderr, "db_query_bench: %s\n", d.err);
    db_close(&d);
    return e ? 1 : 0;
}
