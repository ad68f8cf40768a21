/* Runs db/db_stats.c on two samples given as comma-separated numbers and prints the figures
 * as JSON, for stats_test.py to compare with scipy's. usage: stats_check X1,X2,... Y1,Y2,... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_stats.h"

static size_t parse(const char *s, double *v, size_t cap)
{
    size_t n = 0;
    for (const char *p = s; *p && n < cap;) {
        char *end;
        v[n++] = strtod(p, &end);
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p)
            break;
    }
    return n;
}

static void summary(const char *name, double *v, size_t n)
{
    struct db_summary s;
    db_summary_of(v, n, &s);
    printf("\"%s\": {\"median\": %.17g, \"q1\": %.17g, \"q3\": %.17g, \"min\": %.17g, "
           "\"max\": %.17g, \"mean\": %.17g, \"stddev\": %.17g}, ",
           name, s.median, s.q1, s.q3, s.min, s.max, s.mean, n > 1 ? s.stddev : -1.0);
}

int main(int argc, char **argv)
{
    static double x[4096], y[4096], xs[4096], ys[4096];
    if (argc != 3)
        return 2;
    size_t nx = parse(argv[1], x, 4096), ny = parse(argv[2], y, 4096);
    if (!nx || !ny)
        return 2;
    memcpy(xs, x, nx * sizeof(double));
    memcpy(ys, y, ny * sizeof(double));
    struct db_mwu m;
    if (db_mann_whitney(x, nx, y, ny, &m))
        return 1;
    printf("{");
    summary("x", xs, nx);
    summary("y", ys, ny);
    printf("\"u\": %.17g, \"p\": %.17g, \"exact\": %d, \"a12\": %.17g}\n", m.u, m.p, m.exact,
           m.a12);
    return 0;
}
