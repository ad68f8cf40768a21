/* The statistics FuzzBench reports when it compares fuzzers (docs/web.md, *Comparing
 * campaigns*): a sample's summary (median and quartiles by linear interpolation, as numpy's
 * default; mean; the sample standard deviation, n - 1), the two-sided Mann-Whitney U test and
 * the Vargha-Delaney A12 effect size. Checked against scipy by test/db/stats_test.py. */
#ifndef PTCALL_DB_STATS_H
#define PTCALL_DB_STATS_H

#include <stddef.h>

struct db_summary {
    double median, q1, q3, min, max, mean, stddev; /* stddev: NaN for one value */
};
/* The summary of v[0..n) (n > 0; v is sorted in place). */
void db_summary_of(double *v, size_t n, struct db_summary *s);

struct db_mwu {
    double u;        /* U of the first sample (scipy's statistic): the pairs (x, y) with
                        x > y, plus half the ties */
    double p;        /* two-sided */
    int exact;       /* 1: the exact distribution (no ties and the smaller sample has at
                        most 8 values, scipy's 'auto' rule); 0: the normal approximation with
                        the tie correction and a continuity correction of 0.5 */
    double a12;      /* Vargha-Delaney A12: P(x > y) + P(x = y) / 2 */
};
/* The test of x[0..nx) against y[0..ny) (both > 0). Returns 0, or -1 when out of memory. */
int db_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, struct db_mwu *out);

#endif
