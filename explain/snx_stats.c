/* snx_stats.c - the statistics SNX reports (Tables II-III): mean and standard deviation over
 * explained items, the regularised incomplete beta function, the paired t-test (the experiment's)
 * and Welch's t-test. */
#include "explain/snx_internal.h"

#include <float.h>
#include <math.h>

int64_t vs_mean_std(const double *x, int64_t n, double *mean, double *std)
{
    int64_t c = 0;
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++)
        if (isfinite(x[i])) {
            s += x[i];
            c++;
        }
    *mean = c ? s / (double)c : NAN;
    for (int64_t i = 0; i < n; i++)
        if (isfinite(x[i])) s2 += (x[i] - *mean) * (x[i] - *mean);
    *std = c > 1 ? sqrt(s2 / (double)(c - 1)) : (c == 1 ? 0.0 : NAN);
    return c;
}

/* Continued fraction of I_x(a, b) by the modified Lentz method (Numerical Recipes 6.4). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300, eps = 1e-15;
    double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < tiny) d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 10000; m++) {
        int m2 = 2 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        if (fabs(d) < tiny) d = tiny;
        c = 1 + aa / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        if (fabs(d) < tiny) d = tiny;
        c = 1 + aa / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < eps) break;
    }
    return h;
}

double vs_incomplete_beta(double a, double b, double x)
{
    if (!(a > 0) || !(b > 0) || !(x >= 0 && x <= 1)) return NAN;
    if (x == 0 || x == 1) return x;
    double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    /* the fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry otherwise */
    if (x < (a + 1) / (a + b + 2)) return exp(lbt) * beta_cf(a, b, x) / a;
    return 1 - exp(lbt) * beta_cf(b, a, 1 - x) / b;
}

vs_status vs_welch_t_test(const double *a, int64_t na, const double *b, int64_t nb, double *t, double *df, double *p,
                          vs_error *err)
{
    double ma, sa, mb, sb;
    int64_t ca = vs_mean_std(a, na, &ma, &sa), cb = vs_mean_std(b, nb, &mb, &sb);
    *t = *df = *p = NAN;
    if (ca < 2 || cb < 2)
        return vs_error_set(err, VS_ERR_ARG, "welch t-test: need at least 2 finite values per sample (got %lld and %lld)",
                            (long long)ca, (long long)cb);
    double va = sa * sa / (double)ca, vb = sb * sb / (double)cb, se2 = va + vb;
    if (se2 == 0) {
        /* two constant samples: identical (p = 1) or certainly different (p = 0) */
        *t = ma == mb ? 0.0 : (ma > mb ? INFINITY : -INFINITY);
        *df = (double)(ca + cb - 2);
        *p = ma == mb ? 1.0 : 0.0;
        return VS_OK;
    }
    *t = (ma - mb) / sqrt(se2);
    *df = se2 * se2 / (va * va / (double)(ca - 1) + vb * vb / (double)(cb - 1));
    *p = vs_incomplete_beta(*df / 2, 0.5, *df / (*df + *t * *t));
    return VS_OK;
}

vs_status vs_paired_t_test(const double *a, const double *b, int64_t n, double *t, double *df, double *p, vs_error *err)
{
    *t = *df = *p = NAN;
    double s = 0, s2 = 0;
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++)
        if (isfinite(a[i]) && isfinite(b[i])) s += a[i] - b[i], c++;
    if (c < 2) return vs_error_set(err, VS_ERR_ARG, "paired t-test: need at least 2 pairs of finite values (got %lld)", (long long)c);
    double m = s / (double)c;
    for (int64_t i = 0; i < n; i++)
        if (isfinite(a[i]) && isfinite(b[i])) s2 += (a[i] - b[i] - m) * (a[i] - b[i] - m);
    double se = sqrt(s2 / (double)(c - 1) / (double)c);
    *df = (double)(c - 1);
    if (se == 0) {
        /* every difference equal: none (p = 1) or a certain one (p = 0) */
        *t = m == 0 ? 0.0 : (m > 0 ? INFINITY : -INFINITY);
        *p = m == 0 ? 1.0 : 0.0;
        return VS_OK;
    }
    *t = m / se;
    *p = vs_incomplete_beta(*df / 2, 0.5, *df / (*df + *t * *t));
    return VS_OK;
}
