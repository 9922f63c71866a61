/* test_lstsq.c - the coalition least-squares solver (explain/lstsq.c): the set-design normal
 * equations and blocked Cholesky against the plain dense reference and known solutions, on
 * well-conditioned and nearly singular systems of odd sizes, bit-identical for any thread count. */
#include "vs_check.h"
#include "explain/lstsq.h"
#include "versus/rng.h"
#include "versus/threads.h"

#include <math.h>

/* A random set design with a known exact solution: singleton rows for every column (keeping it
 * well-conditioned), then `extra` rows whose sets are small, or large (stored by complement), some
 * repeated back to back as Kernel SHAP's complement pairs are; signs +-1, weights in [0.5, 2). */
typedef struct design {
    int64_t rows, cols;
    uint8_t *in;
    double *w, *c;       /* weights, sign-folded responses for vs_lstsq_sets */
    double *X, *y;       /* the same system written densely for the reference */
    double *beta;        /* exact solution: c = 1_T . beta, y = X beta */
} design;

static design make_design(int64_t cols, int64_t extra, uint64_t seed)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    design d = {cols + extra, cols, NULL, NULL, NULL, NULL, NULL, NULL};
    d.in = calloc((size_t)(d.rows * cols), 1);
    d.w = malloc((size_t)d.rows * sizeof *d.w);
    d.c = malloc((size_t)d.rows * sizeof *d.c);
    d.X = calloc((size_t)(d.rows * cols), sizeof *d.X);
    d.y = malloc((size_t)d.rows * sizeof *d.y);
    d.beta = malloc((size_t)cols * sizeof *d.beta);
    for (int64_t k = 0; k < cols; k++) d.beta[k] = vs_rng_uniform(&r) * 4 - 2;
    for (int64_t i = 0; i < d.rows; i++) {
        uint8_t *z = d.in + i * cols;
        if (i < cols) {
            z[i] = 1;
        } else if (i > cols && vs_rng_uniform(&r) < 0.3) {
            memcpy(z, z - cols, (size_t)cols);
        } else {
            bool large = vs_rng_uniform(&r) < 0.5;
            int64_t s = 1 + (int64_t)vs_rng_below(&r, (uint64_t)(cols < 8 ? cols : 8));
            for (int64_t k = 0; k < s; k++) z[vs_rng_below(&r, (uint64_t)cols)] = 1;
            if (large)
                for (int64_t k = 0; k < cols; k++) z[k] = !z[k];
        }
        double sign = vs_rng_uniform(&r) < 0.5 ? -1 : 1, dot = 0;
        for (int64_t k = 0; k < cols; k++)
            if (z[k]) {
                dot += d.beta[k];
                d.X[i * cols + k] = sign;
            }
        d.w[i] = 0.5 + 1.5 * vs_rng_uniform(&r);
        d.c[i] = dot;
        d.y[i] = sign * dot;
    }
    return d;
}

static void free_design(design *d)
{
    free(d->in);
    free(d->w);
    free(d->c);
    free(d->X);
    free(d->y);
    free(d->beta);
}

static double max_abs_diff(int64_t n, const double *a, const double *b)
{
    double e = 0;
    for (int64_t i = 0; i < n; i++) e = fmax(e, fabs(a[i] - b[i]));
    return e;
}

START_TEST(test_sets_against_reference)
{
    const int64_t sizes[] = {1, 7, 13, 70, 1023};
    const int64_t extras[] = {4, 30, 60, 200, 150};
    for (int t = 0; t < 5; t++) {
        int64_t m = sizes[t];
        design d = make_design(m, extras[t], 100 + (uint64_t)t);
        double *fast = malloc((size_t)m * sizeof *fast), *ref = malloc((size_t)m * sizeof *ref);
        ck_assert_int_eq(vs_lstsq_sets(d.rows, m, d.in, d.w, d.c, 0.0, 0, fast), VS_OK);
        ck_assert_int_eq(vs_lstsq_dense_ref(d.rows, m, d.X, d.y, d.w, 0.0, 0, ref), VS_OK);
        double e_ref = max_abs_diff(m, fast, ref), e_true = max_abs_diff(m, fast, d.beta);
        ck_assert_msg(e_ref < 1e-9 && e_true < 1e-9, "%lld columns: off the reference by %g, the exact solution by %g",
                      (long long)m, e_ref, e_true);
        /* a ridge on all but the last unknown (LIME's intercept); the small sizes suffice */
        if (m < 1000) {
            ck_assert_int_eq(vs_lstsq_sets(d.rows, m, d.in, d.w, d.c, 0.7, m - 1, fast), VS_OK);
            ck_assert_int_eq(vs_lstsq_dense_ref(d.rows, m, d.X, d.y, d.w, 0.7, m - 1, ref), VS_OK);
            e_ref = max_abs_diff(m, fast, ref);
            ck_assert_msg(e_ref < 1e-9, "%lld columns with ridge: off the reference by %g", (long long)m, e_ref);
            if (m > 1) ck_assert_msg(max_abs_diff(m, fast, d.beta) > 1e-3, "the ridge must shrink the solution");
        }
        free(fast);
        free(ref);
        free_design(&d);
    }
}
END_TEST

START_TEST(test_sets_nearly_singular)
{
    /* columns 11 and 12 always appear together except in one row of weight 1e-6: the Gram matrix
     * has condition number ~1e8.  Both solvers agree to ~cond*eps; the exact solution is off by the
     * 1e-12 relative diagonal jitter times the condition number. */
    const int64_t m = 13;
    design d = make_design(m, 40, 7);
    for (int64_t i = 0; i < d.rows; i++) {
        uint8_t *z = d.in + i * m;
        double sign = 1, dot = 0;
        for (int64_t k = 0; k < m; k++)
            if (d.X[i * m + k] != 0) sign = d.X[i * m + k];
        if (i == 12)
            d.w[i] = 1e-6; /* the singleton {12} */
        else
            z[12] = z[11];
        for (int64_t k = 0; k < m; k++) {
            d.X[i * m + k] = z[k] ? sign : 0;
            if (z[k]) dot += d.beta[k];
        }
        d.c[i] = dot;
        d.y[i] = sign * dot;
    }
    double fast[13], ref[13];
    ck_assert_int_eq(vs_lstsq_sets(d.rows, m, d.in, d.w, d.c, 0.0, 0, fast), VS_OK);
    ck_assert_int_eq(vs_lstsq_dense_ref(d.rows, m, d.X, d.y, d.w, 0.0, 0, ref), VS_OK);
    ck_assert_msg(max_abs_diff(m, fast, d.beta) < 1e-4, "nearly singular: off the exact solution by %g",
                  max_abs_diff(m, fast, d.beta));
    ck_assert_msg(max_abs_diff(m, fast, ref) < 1e-7, "nearly singular: off the reference by %g", max_abs_diff(m, fast, ref));
    /* a column no row holds is pinned at 0 by the jitter, as the reference does */
    for (int64_t i = 0; i < d.rows; i++) d.in[i * m + 5] = 0;
    ck_assert_int_eq(vs_lstsq_sets(d.rows, m, d.in, d.w, d.c, 0.0, 0, fast), VS_OK);
    ck_assert_msg(isfinite(fast[0]) && fabs(fast[5]) < 1e-12, "absent column: %g, %g", fast[0], fast[5]);
    free_design(&d);
}
END_TEST

START_TEST(test_spd_solve)
{
    /* dense SPD matrices A = B^T B + I across the panel (64) and tile (4) edges: residual of A x = b */
    const int64_t sizes[] = {1, 2, 7, 13, 64, 65, 130};
    vs_rng r;
    vs_rng_seed(&r, 5);
    for (int t = 0; t < 7; t++) {
        int64_t n = sizes[t];
        double *B = malloc((size_t)(n * n) * sizeof *B), *A = malloc((size_t)(n * n) * sizeof *A);
        double *A0 = malloc((size_t)(n * n) * sizeof *A0), *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
        for (int64_t i = 0; i < n * n; i++) B[i] = vs_rng_uniform(&r) - 0.5;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = i == j;
                for (int64_t k = 0; k < n; k++) s += B[k * n + i] * B[k * n + j];
                A0[i * n + j] = s;
                A[i * n + j] = j >= i ? s : NAN; /* the lower triangle must never be read */
            }
        for (int64_t i = 0; i < n; i++) x[i] = b[i] = vs_rng_uniform(&r) - 0.5;
        ck_assert(vs_spd_solve(n, A, x));
        double res = 0;
        for (int64_t i = 0; i < n; i++) {
            double s = -b[i];
            for (int64_t j = 0; j < n; j++) s += A0[i * n + j] * x[j];
            res = fmax(res, fabs(s));
        }
        ck_assert_msg(res < 1e-10, "n = %lld: residual %g", (long long)n, res);
        free(B);
        free(A);
        free(A0);
        free(b);
        free(x);
    }
    /* not positive definite: refused */
    double ind[4] = {1, 2, 2, 1}, neg[1] = {-1}, nan_[1] = {NAN}, b2[2] = {1, 1};
    ck_assert(!vs_spd_solve(2, ind, b2));
    ck_assert(!vs_spd_solve(1, neg, b2));
    ck_assert(!vs_spd_solve(1, nan_, b2));
}
END_TEST

START_TEST(test_sets_thread_invariant)
{
    const int64_t m = 301; /* 19 chunks of Gram rows, 5 panels, 75 row tiles in the first update */
    design d = make_design(m, 200, 11);
    double *beta[3], *A[3], *b[3];
    for (int t = 0; t < 3; t++) {
        vs_set_threads(t + 1);
        beta[t] = malloc((size_t)m * sizeof *beta[t]);
        A[t] = calloc((size_t)(m * m), sizeof *A[t]);
        b[t] = malloc((size_t)m * sizeof *b[t]);
        ck_assert_int_eq(vs_lstsq_sets(d.rows, m, d.in, d.w, d.c, 0.0, 0, beta[t]), VS_OK);
        ck_assert_int_eq(vs_sets_gram(d.rows, m, d.in, d.w, d.c, A[t], b[t]), VS_OK);
    }
    vs_set_threads(0);
    ck_assert_msg(max_abs_diff(m, beta[0], d.beta) < 1e-9, "off the exact solution by %g", max_abs_diff(m, beta[0], d.beta));
    for (int t = 1; t < 3; t++) {
        ck_assert_msg(memcmp(beta[0], beta[t], (size_t)m * sizeof(double)) == 0, "%d threads change the solution", t + 1);
        ck_assert(memcmp(b[0], b[t], (size_t)m * sizeof(double)) == 0);
        for (int64_t i = 0; i < m; i++) /* upper triangles */
            ck_assert(memcmp(A[0] + i * m + i, A[t] + i * m + i, (size_t)(m - i) * sizeof(double)) == 0);
    }
    /* the Gram matrix holds exact pair weights: with unit weights, the number of rows holding both */
    for (int64_t i = 0; i < d.rows; i++) d.w[i] = 1;
    ck_assert_int_eq(vs_sets_gram(d.rows, m, d.in, d.w, d.c, A[0], b[0]), VS_OK);
    const int64_t pairs[3][2] = {{0, 0}, {3, 290}, {300, 300}};
    for (int p = 0; p < 3; p++) {
        int64_t k = pairs[p][0], l = pairs[p][1], count = 0;
        for (int64_t i = 0; i < d.rows; i++) count += d.in[i * m + k] && d.in[i * m + l];
        ck_assert_double_eq(A[0][k * m + l], (double)count);
    }
    for (int t = 0; t < 3; t++) {
        free(beta[t]);
        free(A[t]);
        free(b[t]);
    }
    free_design(&d);
}
END_TEST

static Suite *lstsq_suite(void)
{
    Suite *s = suite_create("lstsq");
    TCase *tc = vs_tcase(s, "solve", 120);
    tcase_add_test(tc, test_sets_against_reference);
    tcase_add_test(tc, test_sets_nearly_singular);
    tcase_add_test(tc, test_spd_solve);
    tcase_add_test(tc, test_sets_thread_invariant);
    return s;
}

VS_TEST_MAIN(lstsq_suite)
