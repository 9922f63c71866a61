/* shapley.c - coalition methods over features (elements or superpixels): exact Shapley values by
 * enumeration, Kernel SHAP (Lundberg & Lee) with efficiency as an exact constraint, and LIME
 * (Ribeiro et al.).  A coalition z keeps the input where z = 1 and the baseline elsewhere. */
#include "explain/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

vs_status vs_features_make(const vs_attr_job *j, vs_features *f)
{
    f->id = malloc((size_t)j->dim * sizeof *f->id);
    if (!f->id) return vs_error_set(j->err, VS_ERR_NOMEM, "features: out of memory");
    if (j->o->segments) {
        memcpy(f->id, j->o->segments, (size_t)j->dim * sizeof *f->id);
        f->n = j->o->n_segments;
    } else {
        for (int64_t i = 0; i < j->dim; i++) f->id[i] = (int32_t)i;
        f->n = j->dim;
    }
    return VS_OK;
}

void vs_features_free(vs_features *f)
{
    free(f->id);
    f->id = NULL;
}

void vs_features_compose(const vs_attr_job *j, const vs_features *f, const uint8_t *z, float *row)
{
    for (int64_t i = 0; i < j->dim; i++) row[i] = z[f->id[i]] ? j->x->data[i] : j->baseline->data[i];
}

/* Values v(z) of n coalitions (rows of zs, each f->n bytes). */
static vs_status coalition_values(vs_attr_job *j, const vs_features *f, const uint8_t *zs, int64_t n, double *v)
{
    int64_t chunk = j->o->batch > 0 ? j->o->batch : 64;
    float *rows = malloc((size_t)(chunk * j->dim) * sizeof *rows);
    if (!rows) return vs_error_set(j->err, VS_ERR_NOMEM, "coalitions: out of memory");
    vs_status st = VS_OK;
    for (int64_t r0 = 0; r0 < n && st == VS_OK; r0 += chunk) {
        int64_t m = n - r0 < chunk ? n - r0 : chunk;
        for (int64_t r = 0; r < m; r++) vs_features_compose(j, f, zs + (r0 + r) * f->n, rows + r * j->dim);
        st = vs_job_scores(j, rows, m, v + r0);
    }
    free(rows);
    return st;
}

static void spread(const vs_attr_job *j, const vs_features *f, const double *phi, float *attr)
{
    /* A feature's value is shared by its elements so that the attributions still sum to sum(phi). */
    int64_t *size = calloc((size_t)f->n, sizeof *size);
    if (size)
        for (int64_t i = 0; i < j->dim; i++) size[f->id[i]]++;
    for (int64_t i = 0; i < j->dim; i++) attr[i] = (float)(phi[f->id[i]] / (size ? (double)size[f->id[i]] : 1.0));
    free(size);
}

vs_status vs_shapley_from_values(int n, const double *v, double *phi)
{
    if (n < 1 || n > 24) return VS_ERR_ARG;
    /* w(s) = s! (n-s-1)! / n! */
    double w[25];
    for (int s = 0; s < n; s++) {
        double lw = lgamma(s + 1.0) + lgamma((double)n - s) - lgamma(n + 1.0);
        w[s] = exp(lw);
    }
    for (int i = 0; i < n; i++) phi[i] = 0;
    uint64_t full = (uint64_t)1 << n;
    for (uint64_t S = 0; S < full; S++) {
        int s = __builtin_popcountll(S);
        for (int i = 0; i < n; i++)
            if (!(S >> i & 1)) phi[i] += w[s] * (v[S | ((uint64_t)1 << i)] - v[S]);
    }
    return VS_OK;
}

vs_status vs_attr_shapley_exact(vs_attr_job *j, float *attr)
{
    vs_features f;
    vs_status st = vs_features_make(j, &f);
    if (st != VS_OK) return st;
    if (f.n > 20) {
        vs_features_free(&f);
        return vs_error_set(j->err, VS_ERR_ARG, "exact Shapley values enumerate 2^n coalitions: %lld features is too many (at most 20; use "
                            "kernel_shap or superpixel segments)", (long long)f.n);
    }
    int64_t nc = (int64_t)1 << f.n;
    uint8_t *zs = malloc((size_t)(nc * f.n));
    double *v = malloc((size_t)nc * sizeof *v), *phi = malloc((size_t)f.n * sizeof *phi);
    if (!zs || !v || !phi) st = vs_error_set(j->err, VS_ERR_NOMEM, "shapley: out of memory");
    if (st == VS_OK) {
        for (int64_t S = 0; S < nc; S++)
            for (int64_t k = 0; k < f.n; k++) zs[S * f.n + k] = (uint8_t)(S >> k & 1);
        st = coalition_values(j, &f, zs, nc, v);
    }
    if (st == VS_OK) {
        vs_shapley_from_values((int)f.n, v, phi);
        spread(j, &f, phi, attr);
    }
    free(zs);
    free(v);
    free(phi);
    vs_features_free(&f);
    return st;
}

/* Solve the symmetric positive definite system A x = b (n x n, A overwritten) by Cholesky. */
static bool solve_spd(int64_t n, double *A, double *b)
{
    for (int64_t k = 0; k < n; k++) {
        double d = A[k * n + k];
        for (int64_t p = 0; p < k; p++) d -= A[k * n + p] * A[k * n + p];
        if (!(d > 0)) return false;
        d = sqrt(d);
        A[k * n + k] = d;
        for (int64_t i = k + 1; i < n; i++) {
            double s = A[i * n + k];
            for (int64_t p = 0; p < k; p++) s -= A[i * n + p] * A[k * n + p];
            A[i * n + k] = s / d;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        double s = b[i];
        for (int64_t p = 0; p < i; p++) s -= A[i * n + p] * b[p];
        b[i] = s / A[i * n + i];
    }
    for (int64_t i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (int64_t p = i + 1; p < n; p++) s -= A[p * n + i] * b[p];
        b[i] = s / A[i * n + i];
    }
    return true;
}

/* Weighted least squares with a ridge term on the first n_pen unknowns: (X^T W X + ridge) beta = X^T W y. */
static bool weighted_lstsq(int64_t rows, int64_t cols, const double *X, const double *y, const double *w, double ridge,
                           int64_t n_pen, double *beta)
{
    double *A = calloc((size_t)(cols * cols), sizeof *A);
    if (!A) return false;
    for (int64_t i = 0; i < cols; i++) beta[i] = 0;
    for (int64_t r = 0; r < rows; r++) {
        const double *x = X + r * cols;
        for (int64_t a = 0; a < cols; a++) {
            if (x[a] == 0) continue;
            double wa = w[r] * x[a];
            beta[a] += wa * y[r];
            for (int64_t b = 0; b <= a; b++) A[a * cols + b] += wa * x[b];
        }
    }
    for (int64_t a = 0; a < cols; a++) {
        for (int64_t b = a + 1; b < cols; b++) A[a * cols + b] = A[b * cols + a];
        A[a * cols + a] += a < n_pen ? ridge : 1e-12 * (1 + A[a * cols + a]);
    }
    bool ok = solve_spd(cols, A, beta);
    free(A);
    return ok;
}

static double log_choose(int64_t n, int64_t k) { return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma((double)(n - k) + 1.0); }

/* Random coalition of exactly s of the m players. */
static void random_subset(vs_rng *r, int64_t m, int64_t s, uint8_t *z, int64_t *scratch)
{
    for (int64_t i = 0; i < m; i++) scratch[i] = i;
    memset(z, 0, (size_t)m);
    for (int64_t i = 0; i < s; i++) {
        int64_t k = i + (int64_t)vs_rng_below(r, (uint64_t)(m - i));
        int64_t t = scratch[i];
        scratch[i] = scratch[k];
        scratch[k] = t;
        z[scratch[i]] = 1;
    }
}

vs_status vs_attr_kernel_shap(vs_attr_job *j, float *attr)
{
    vs_features f;
    vs_status st = vs_features_make(j, &f);
    if (st != VS_OK) return st;
    int64_t M = f.n, budget = j->o->samples;
    if (M < 2) {
        vs_features_free(&f);
        return vs_error_set(j->err, VS_ERR_ARG, "kernel shap needs at least 2 features");
    }
    if (budget < 2) {
        vs_features_free(&f);
        return vs_error_set(j->err, VS_ERR_ARG, "kernel shap needs a budget of at least 2 evaluations");
    }
    bool enumerate = M <= 30 && budget >= ((int64_t)1 << M) - 2;
    int64_t n = enumerate ? ((int64_t)1 << M) - 2 : budget;
    uint8_t *zs = calloc((size_t)(n * M), 1);
    double *v = malloc((size_t)n * sizeof *v), *w = malloc((size_t)n * sizeof *w);
    double *X = malloc((size_t)(n * (M - 1)) * sizeof *X), *y = malloc((size_t)n * sizeof *y);
    double *phi = malloc((size_t)M * sizeof *phi), *p = malloc((size_t)M * sizeof *p);
    int64_t *scratch = malloc((size_t)M * sizeof *scratch);
    uint8_t *ends = calloc((size_t)(2 * M), 1);
    if (!zs || !v || !w || !X || !y || !phi || !p || !scratch || !ends) st = vs_error_set(j->err, VS_ERR_NOMEM, "kernel shap: out of memory");
    if (st == VS_OK) {
        if (enumerate) {
            for (int64_t S = 1; S <= n; S++) {
                int64_t s = 0;
                for (int64_t k = 0; k < M; k++) s += zs[(S - 1) * M + k] = (uint8_t)(S >> k & 1);
                /* Shapley kernel (M-1) / (C(M,s) s (M-s)) */
                w[S - 1] = exp(log((double)(M - 1)) - log_choose(M, s) - log((double)s) - log((double)(M - s)));
            }
        } else {
            /* Sizes drawn with probability proportional to the kernel mass of each size, (M-1)/(s(M-s)),
             * subsets uniform within a size, complements paired: the sample then needs equal weights. */
            double tot = 0;
            for (int64_t s = 1; s < M; s++) tot += p[s] = 1.0 / ((double)s * (double)(M - s));
            vs_rng r;
            vs_rng_seed(&r, j->o->seed);
            for (int64_t i = 0; i < n; i += 2) {
                double u = vs_rng_uniform(&r) * tot, c = 0;
                int64_t s = 1;
                for (; s < M - 1; s++) {
                    c += p[s];
                    if (u < c) break;
                }
                random_subset(&r, M, s, zs + i * M, scratch);
                w[i] = 1;
                if (i + 1 < n) {
                    for (int64_t k = 0; k < M; k++) zs[(i + 1) * M + k] = (uint8_t)!zs[i * M + k];
                    w[i + 1] = 1;
                }
            }
        }
        st = coalition_values(j, &f, zs, n, v);
    }
    double v0 = 0, v1 = 0;
    if (st == VS_OK) {
        memset(ends + M, 1, (size_t)M);
        double ve[2];
        st = coalition_values(j, &f, ends, 2, ve);
        v0 = ve[0];
        v1 = ve[1];
    }
    if (st == VS_OK) {
        /* Efficiency as a constraint: phi_M = (v1 - v0) - sum_{k<M} phi_k, eliminated before solving. */
        for (int64_t r = 0; r < n; r++) {
            const uint8_t *z = zs + r * M;
            y[r] = v[r] - v0 - z[M - 1] * (v1 - v0);
            for (int64_t k = 0; k < M - 1; k++) X[r * (M - 1) + k] = (double)z[k] - z[M - 1];
        }
        if (!weighted_lstsq(n, M - 1, X, y, w, 0.0, 0, phi)) {
            st = vs_error_set(j->err, VS_ERR_NUMERIC, "kernel shap: singular system (raise the budget)");
        } else {
            double s = 0;
            for (int64_t k = 0; k < M - 1; k++) s += phi[k];
            phi[M - 1] = (v1 - v0) - s;
            spread(j, &f, phi, attr);
        }
    }
    free(zs);
    free(v);
    free(w);
    free(X);
    free(y);
    free(phi);
    free(p);
    free(scratch);
    free(ends);
    vs_features_free(&f);
    return st;
}

/* LIME: random coalitions (number of kept features uniform in 1..M), exponential kernel on cosine
 * distance to the full input, ridge regression with an unpenalised intercept. */
vs_status vs_attr_lime(vs_attr_job *j, float *attr)
{
    vs_features f;
    vs_status st = vs_features_make(j, &f);
    if (st != VS_OK) return st;
    int64_t M = f.n, n = j->o->samples;
    if (n < 2) {
        vs_features_free(&f);
        return vs_error_set(j->err, VS_ERR_ARG, "lime needs at least 2 samples");
    }
    uint8_t *zs = calloc((size_t)(n * M), 1);
    double *v = malloc((size_t)n * sizeof *v), *w = malloc((size_t)n * sizeof *w);
    double *X = malloc((size_t)(n * (M + 1)) * sizeof *X), *beta = malloc((size_t)(M + 1) * sizeof *beta);
    int64_t *scratch = malloc((size_t)M * sizeof *scratch);
    if (!zs || !v || !w || !X || !beta || !scratch) st = vs_error_set(j->err, VS_ERR_NOMEM, "lime: out of memory");
    if (st == VS_OK) {
        vs_rng r;
        vs_rng_seed(&r, j->o->seed);
        memset(zs, 1, (size_t)M); /* the input itself */
        for (int64_t i = 1; i < n; i++) random_subset(&r, M, 1 + (int64_t)vs_rng_below(&r, (uint64_t)M), zs + i * M, scratch);
        st = coalition_values(j, &f, zs, n, v);
    }
    if (st == VS_OK) {
        double kw = j->o->kernel_width > 0 ? j->o->kernel_width : 0.25;
        for (int64_t i = 0; i < n; i++) {
            int64_t s = 0;
            for (int64_t k = 0; k < M; k++) {
                s += zs[i * M + k];
                X[i * (M + 1) + k] = zs[i * M + k];
            }
            X[i * (M + 1) + M] = 1.0; /* intercept */
            double cosd = 1.0 - (double)s / (sqrt((double)s) * sqrt((double)M));
            w[i] = exp(-cosd * cosd / (kw * kw));
        }
        if (!weighted_lstsq(n, M + 1, X, v, w, j->o->ridge, M, beta))
            st = vs_error_set(j->err, VS_ERR_NUMERIC, "lime: singular system");
        else
            spread(j, &f, beta, attr);
    }
    free(zs);
    free(v);
    free(w);
    free(X);
    free(beta);
    free(scratch);
    vs_features_free(&f);
    return st;
}
