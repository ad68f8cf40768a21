/* The value syntaxes of `ptcall db`'s options (options.c's table calls these): times for
 * --since/--until, tags, --runs specs and --stat lists. */
#ifndef PTCALL_DB_CLI_H
#define PTCALL_DB_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "db_query.h" /* DB_NSTATS */

/* --since / --until: ns since the epoch */
struct cli_db_time {
    int64_t ns;
};
/* --stat of db query: indices into db_stat_names, in the order first given */
struct cli_db_stats {
    int v[DB_NSTATS];        /* each statistic once: never more */
    int n;
};

/* Each: 0, or -1 with what is wrong (without the option's name) in err. */
/* TIME: 2024-05-01, 2024-05-01T13:30[:15] (local time; a final Z: UTC), @SECONDS since the
 * epoch, or an age: 90m, 36h, 7d, 2w (that long before now). */
int db_cli_parse_time(const char *val, void *field, char *err, size_t errn);
/* NAME=VALUE (db add) */
int db_cli_check_tag(const char *val, void *field, char *err, size_t errn);
/* NAME=VALUE or NAME (filters) */
int db_cli_check_tag_filter(const char *val, void *field, char *err, size_t errn);
/* a --runs SPEC, stored as the string */
int db_cli_parse_runs(const char *val, void *field, char *err, size_t errn);
/* sum, mean, median, max: comma-separated or repeated */
int db_cli_parse_stats(const char *val, void *field, char *err, size_t errn);

/* The --tag NAME=VALUE strings v[0..n) (checked by db_cli_check_tag) as tags to store, for
 * db add and html: 0; -1 with what is wrong in err when a NAME is given twice (a run has one
 * value per tag); -2 out of memory. *tags and *names are freed by db_cli_tags_free. */
struct db_tag;
int db_cli_tags(const char *const *v, int n, struct db_tag **tags, char ***names, char *err,
                size_t errn);
void db_cli_tags_free(struct db_tag *tags, char **names, int n);

/* What to do about a database error e (-DB_E_*) of a PostgreSQL (pg) or SQLite database:
 * `ptcall db` and `ptcall serve` say the same. */
const char *db_cli_advice(int pg, int e);

#endif
