/* Summaries, the Mann-Whitney U test and A12 (db_stats.h). */
#include "db_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* numpy's default percentile: linear between the closest ranks */
static double quantile(const double *v, size_t n, double q)
{
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)floor(h);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (h - (double)lo) * (v[hi] - v[lo]);
}

void db_summary_of(double *v, size_t n, struct db_summary *s)
{
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_d);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    double mean = sum / (double)n, ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - mean) * (v[i] - mean);
    *s = (struct db_summary){quantile(v, n, 0.5), quantile(v, n, 0.25), quantile(v, n, 0.75),
                             v[0], v[n - 1], mean,
                             n > 1 ? sqrt(ss / (double)(n - 1)) : NAN};
}

struct tagged {
    double v;
    int first;
};
static int cmp_t(const void *x, const void *y)
{
    return cmp_d(&((const struct tagged *)x)->v, &((const struct tagged *)y)->v);
}

/* P(U >= u) under the null hypothesis for samples of m and n values without ties: U's
 * frequencies are the coefficients of the Gaussian binomial [m + n choose m]_q, built as
 * the product over i = 1..m of (1 - q^(n + i)) / (1 - q^i). */
static int exact_sf(size_t m, size_t n, double u, double *p)
{
    size_t top = m * n;
    double *c = calloc(top + 1, sizeof(*c));
    if (!c)
        return -1;
    c[0] = 1;
    for (size_t i = 1; i <= m; i++) {
        for (size_t k = top; k >= n + i && k <= top; k--) /* times (1 - q^(n+i)) */
            c[k] -= c[k - (n + i)];
        for (size_t k = i; k <= top; k++) /* divided by (1 - q^i) */
            c[k] += c[k - i];
    }
    double total = 0, tail = 0;
    for (size_t k = 0; k <= top; k++) {
        total += c[k];
        if ((double)k >= u - 1e-9)
            tail += c[k];
    }
    free(c);
    *p = tail / total;
    return 0;
}

int db_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, struct db_mwu *out)
{
    size_t n = nx + ny;
    struct tagged *t = malloc(n * sizeof(*t));
    if (!t)
        return -1;
    for (size_t i = 0; i < nx; i++)
        t[i] = (struct tagged){x[i], 1};
    for (size_t i = 0; i < ny; i++)
        t[nx + i] = (struct tagged){y[i], 0};
    if (n > 1)
        qsort(t, n, sizeof(*t), cmp_t);
    /* ranks 1..n, tied values given the mean of their ranks */
    double r1 = 0, ties = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && t[j].v == t[i].v)
            j++;
        double rank = (double)(i + 1 + j) / 2, k = (double)(j - i);
        for (size_t a = i; a < j; a++)
            if (t[a].first)
                r1 += rank;
        ties += k * k * k - k;
        i = j;
    }
    free(t);
    double m1 = (double)nx, m2 = (double)ny;
    double u1 = r1 - m1 * (m1 + 1) / 2, u2 = m1 * m2 - u1, big = u1 > u2 ? u1 : u2;
    out->u = u1;
    out->a12 = u1 / (m1 * m2);
    out->exact = ties == 0 && (nx <= 8 || ny <= 8);
    if (out->exact) {
        double sf;
        if (exact_sf(nx < ny ? nx : ny, nx < ny ? ny : nx, big, &sf))
            return -1;
        out->p = 2 * sf;
    } else {
        double N = (double)n;
        double var = m1 * m2 / 12 * ((N + 1) - ties / (N * (N - 1)));
        double z = var > 0 ? (big - m1 * m2 / 2 - 0.5) / sqrt(var) : 0;
        out->p = var > 0 ? erfc(z / sqrt(2)) : 1;
    }
    if (out->p > 1)
        out->p = 1;
    return 0;
}
