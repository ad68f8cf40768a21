/* The value syntaxes of `ptcall db`'s options (db_cli.h). */
#define _GNU_SOURCE /* timegm */
#include "db_cli.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_common.h"
#include "db_ingest.h"
#include "db_query.h"
#include "db_schema.h"

int db_cli_parse_time(const char *val, void *field, char *err, size_t errn)
{
    int64_t *out = &((struct cli_db_time *)field)->ns;
    const char *want = "takes a date (2024-05-01, 2024-05-01T13:30:00, a final Z for UTC), "
                       "@SECONDS since 1970, or an age (90m, 36h, 7d, 2w)";
    char *end;
    if (val[0] == '@') {
        long long s = strtoll(val + 1, &end, 10);
        if (end == val + 1 || *end || s < 0 || s > 9000000000LL)
            goto bad;
        *out = (int64_t)s * 1000000000;
        return 0;
    }
    if (isdigit((unsigned char)val[0]) && !strchr(val, '-')) {
        double n = strtod(val, &end);
        static const struct {
            const char *unit;
            double s;
        } units[] = {{"s", 1}, {"m", 60}, {"min", 60}, {"h", 3600}, {"d", 86400},
                     {"w", 604800}};
        for (size_t i = 0; end != val && n >= 0 && i < sizeof(units) / sizeof(units[0]); i++)
            if (!strcmp(end, units[i].unit) && n * units[i].s < 3e9) {
                struct timespec now;
                clock_gettime(CLOCK_REALTIME, &now);
                *out = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec -
                       (int64_t)(n * units[i].s * 1e9);
                return 0;
            }
        goto bad;
    }
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    int y, mo, d, h = 0, mi = 0, s = 0, k = 0;
    if (sscanf(val, "%4d-%2d-%2d%n", &y, &mo, &d, &k) != 3)
        goto bad;
    const char *p = val + k;
    if (*p == 'T' || *p == ' ') {
        int k2 = 0;
        if (sscanf(p + 1, "%2d:%2d%n", &h, &mi, &k2) != 2)
            goto bad;
        p += 1 + k2;
        if (*p == ':') {
            int k3 = 0;
            if (sscanf(p + 1, "%2d%n", &s, &k3) != 1)
                goto bad;
            p += 1 + k3;
        }
    }
    int utc = *p == 'Z';
    if (*p && !(utc && !p[1]))
        goto bad;
    /* ns since 1970 in 64 bits end in 2262 */
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 || y < 1970 ||
        y > 2261)
        goto bad;
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    tm.tm_isdst = -1;
    time_t t = utc ? timegm(&tm) : mktime(&tm);
    if (t == (time_t)-1)
        goto bad;
    *out = (int64_t)t * 1000000000;
    return 0;
bad:
    snprintf(err, errn, "%s, not '%s'", want, val);
    return -1;
}

static int check_tag(const char *val, int need_value, char *err, size_t errn)
{
    const char *eq = strchr(val, '=');
    if ((need_value && !eq) || eq == val || !*val) {
        snprintf(err, errn, "takes NAME=VALUE%s, not '%s'", need_value ? "" : " or NAME", val);
        return -1;
    }
    if (strpbrk(val, "\n\r")) {
        snprintf(err, errn, "takes one line, not '%s'", val);
        return -1;
    }
    return 0;
}

int db_cli_check_tag(const char *val, void *field, char *err, size_t errn)
{
    (void)field;
    return check_tag(val, 1, err, errn);
}

int db_cli_check_tag_filter(const char *val, void *field, char *err, size_t errn)
{
    (void)field;
    return check_tag(val, 0, err, errn);
}

int db_cli_parse_runs(const char *val, void *field, char *err, size_t errn)
{
    struct db_runs_spec s;
    if (db_runs_spec_parse(val, &s, err, errn))
        return -1;
    db_runs_spec_free(&s);
    *(const char **)field = val;
    return 0;
}

int db_cli_parse_stats(const char *val, void *field, char *err, size_t errn)
{
    struct cli_db_stats *st = field;
    for (const char *p = val;;) {
        size_t n = strcspn(p, ",");
        int k = 0;
        while (db_stat_names[k] && (strlen(db_stat_names[k]) != n || strncmp(db_stat_names[k], p, n)))
            k++;
        if (!db_stat_names[k]) {
            snprintf(err, errn,
                     "takes sum, mean, median, max, min or stddev (comma-separated or repeated), "
                     "not '%s'",
                     val);
            return -1;
        }
        int seen = 0;
        for (int i = 0; i < st->n; i++)
            seen |= st->v[i] == k;
        if (!seen)
            st->v[st->n++] = k;
        if (!p[n])
            break;
        p += n + 1;
    }
    return 0;
}

const char *db_cli_advice(int pg, int e)
{
    switch (-e) {
    case DB_E_CONNECT:
        return pg ? "check that the PostgreSQL server runs and accepts connections there: the "
                    "host and port (or the socket directory, ?host=/DIR), the user, the "
                    "database name (it must exist: createdb NAME) and the password (~/.pgpass "
                    "or PGPASSWORD)"
                  : "check the path, its directory and their permissions";
    case DB_E_VERSION:
        return "a newer ptcall wrote it: use a ptcall whose 'ptcall --version' is newer than "
               PTCALL_VERSION " (the ptcall that wrote it, or a later one), or another --db";
    case DB_E_DAMAGED:
        return "give a ptcall runs database with --db (or $PTCALL_DB); restore this one from a "
               "copy if it was one";
    case DB_E_READONLY:
        return pg ? "connect as a role that may write the database, or ask its owner"
                  : "run this as a user who may write the file and its directory (or on a "
                    "writable copy), or ask its owner";
    case DB_E_NOSCHEMA:
        return "'ptcall db add' creates it; --db or $PTCALL_DB names another";
    case DB_E_FOREIGN:
        return "give a ptcall runs database with --db (or $PTCALL_DB)";
    case DB_E_BUSY:
        return "retry when the other writer is done";
    case DB_E_FULL:
        return "free some space on that file system (df shows it) and retry: nothing was "
               "stored, and the runs stored before are kept";
    case DB_E_ENCODING:
        /* names are file and symbol bytes, which need not be UTF-8; a UTF8 server refuses
         * them whole rather than store them altered */
        return "a name in it (the program, a function, a file or a tag) is not UTF-8 and this "
               "PostgreSQL database's encoding requires UTF-8: nothing was stored; store it in "
               "a SQLite database (--db FILE.db) or in a PostgreSQL database created with "
               "ENCODING 'SQL_ASCII' (createdb -E SQL_ASCII -T template0 NAME), which keeps "
               "the bytes as they are";
    case DB_E_NOMEM:
        return cli_advice(PTC_E_NOMEM);
    case DB_E_STOP: /* "no run N" */
        return "'ptcall db list' lists the runs";
    default:
        return pg ? "check the server's log; if the database is sound, report this as a "
                    "ptcall bug"
                  : "check the disk and the file; if they are sound, report this as a ptcall "
                    "bug";
    }
}

int db_cli_tags(const char *const *v, int n, struct db_tag **tags, char ***names, char *err,
                size_t errn)
{
    *tags = calloc((size_t)n + 1, sizeof(**tags));
    *names = calloc((size_t)n + 1, sizeof(**names));
    if (!*tags || !*names)
        return -2;
    for (int i = 0; i < n; i++) {
        const char *t = v[i], *eq = strchr(t, '=');
        if (!eq || !((*names)[i] = strndup(t, (size_t)(eq - t))))
            return -2;
        (*tags)[i] = (struct db_tag){(*names)[i], eq + 1};
        for (int k = 0; k < i; k++)
            if (!strcmp((*names)[k], (*names)[i])) {
                snprintf(err, errn, "--tag %s is given twice: a run has one value per tag",
                         (*names)[i]);
                return -1;
            }
    }
    return 0;
}

void db_cli_tags_free(struct db_tag *tags, char **names, int n)
{
    for (int i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
    free(tags);
}
