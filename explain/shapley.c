/* shapley.c - coalition methods over features (elements or superpixels): exact Shapley values by
 * enumeration, Kernel SHAP (Lundberg & Lee) with efficiency as an exact constraint, and LIME
 * (Ribeiro et al.).  A coalition z keeps the input where z = 1 and the baseline elsewhere. */
#include "explain/internal.h"
#include "explain/lstsq.h"

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

/* Key of coalition z seen through the features that matter (act[0..na)): 64 membership bits at a
 * time, mixed as splitmix64 does. */
static uint64_t coalition_hash(const uint8_t *z, const int64_t *act, int64_t na)
{
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (int64_t a0 = 0; a0 < na; a0 += 64) {
        uint64_t bits = 0;
        for (int64_t a = a0; a < na && a < a0 + 64; a++) bits |= (uint64_t)(z[act[a]] != 0) << (a - a0);
        h ^= bits + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
        h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9u;
        h = (h ^ (h >> 27)) * 0x94d049bb133111ebu;
        h ^= h >> 31;
    }
    return h;
}

static bool same_coalition(const uint8_t *z, const uint8_t *u, const int64_t *act, int64_t na)
{
    for (int64_t a = 0; a < na; a++)
        if ((z[act[a]] != 0) != (u[act[a]] != 0)) return false;
    return true;
}

/* Representative of each coalition: rep[r] = the first row that composes the same input as row r.
 * Features whose elements all equal the baseline's (bit for bit) do not change the input, so
 * coalitions that differ only there share one evaluation - on MNIST with a black baseline most
 * pixels are such dummies, and a third of Kernel SHAP's small coalitions and their complements
 * are repeats.  Returns the number of distinct rows, listed in uniq; -1 when out of memory. */
static int64_t distinct_coalitions(const vs_attr_job *j, const vs_features *f, const uint8_t *zs, int64_t n, int64_t *rep,
                                   int64_t *uniq)
{
    const int64_t M = f->n;
    int64_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    uint8_t *on = calloc((size_t)M, 1);
    int64_t *act = malloc((size_t)M * sizeof *act), *table = malloc((size_t)cap * sizeof *table);
    int64_t nu = -1;
    if (on && act && table) {
        for (int64_t i = 0; i < j->dim; i++)
            if (memcmp(&j->x->data[i], &j->baseline->data[i], sizeof(float)) != 0) on[f->id[i]] = 1;
        int64_t na = 0;
        for (int64_t k = 0; k < M; k++)
            if (on[k]) act[na++] = k;
        for (int64_t t = 0; t < cap; t++) table[t] = -1;
        nu = 0;
        for (int64_t r = 0; r < n; r++) {
            const uint8_t *z = zs + r * M;
            uint64_t t = coalition_hash(z, act, na) & (uint64_t)(cap - 1);
            while (table[t] >= 0 && !same_coalition(z, zs + table[t] * M, act, na)) t = (t + 1) & (uint64_t)(cap - 1);
            if (table[t] < 0) {
                table[t] = r;
                uniq[nu++] = r;
            }
            rep[r] = table[t];
        }
    }
    free(on);
    free(act);
    free(table);
    return nu;
}

/* Values v(z) of n coalitions (rows of zs, each f->n bytes), each distinct input evaluated once. */
static vs_status coalition_values(vs_attr_job *j, const vs_features *f, const uint8_t *zs, int64_t n, double *v)
{
    int64_t chunk = j->o->batch > 0 ? j->o->batch : 64;
    float *rows = malloc((size_t)(chunk * j->dim) * sizeof *rows);
    int64_t *rep = malloc((size_t)n * sizeof *rep), *uniq = malloc((size_t)n * sizeof *uniq);
    double *vu = malloc((size_t)n * sizeof *vu);
    int64_t nu = rows && rep && uniq && vu ? distinct_coalitions(j, f, zs, n, rep, uniq) : -1;
    vs_status st = nu < 0 ? vs_error_set(j->err, VS_ERR_NOMEM, "coalitions: out of memory") : VS_OK;
    for (int64_t u0 = 0; u0 < nu && st == VS_OK; u0 += chunk) {
        int64_t m = nu - u0 < chunk ? nu - u0 : chunk;
        for (int64_t u = 0; u < m; u++) vs_features_compose(j, f, zs + uniq[u0 + u] * f->n, rows + u * j->dim);
        st = vs_job_scores(j, rows, m, vu + u0);
    }
    /* the representatives' values, then the repeats' */
    for (int64_t u = 0; u < nu && st == VS_OK; u++) v[uniq[u]] = vu[u];
    for (int64_t r = 0; r < n && st == VS_OK; r++) v[r] = v[rep[r]];
    free(vu);
    free(rows);
    free(rep);
    free(uniq);
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
    /* rows n and n + 1 of zs are the empty and the full coalition */
    uint8_t *zs = calloc((size_t)((n + 2) * M), 1), *in = malloc((size_t)(n * (M - 1)));
    double *v = malloc((size_t)(n + 2) * sizeof *v), *w = malloc((size_t)n * sizeof *w), *y = malloc((size_t)n * sizeof *y);
    double *phi = malloc((size_t)M * sizeof *phi), *p = malloc((size_t)M * sizeof *p);
    int64_t *scratch = malloc((size_t)M * sizeof *scratch);
    if (!zs || !in || !v || !w || !y || !phi || !p || !scratch) st = vs_error_set(j->err, VS_ERR_NOMEM, "kernel shap: out of memory");
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
        memset(zs + (n + 1) * M, 1, (size_t)M);
        st = coalition_values(j, &f, zs, n + 2, v);
    }
    if (st == VS_OK) {
        /* Efficiency as a constraint: phi_M = (v1 - v0) - sum_{k<M} phi_k, eliminated before solving.
         * Row r of the design is then z_k - z_M (k < M): +1 on the set where z_k != z_M when z_M = 0,
         * -1 there when z_M = 1, the sign moved onto the response (explain/lstsq.h). */
        const double v0 = v[n], v1 = v[n + 1];
        for (int64_t r = 0; r < n; r++) {
            const uint8_t *z = zs + r * M;
            y[r] = v[r] - v0 - z[M - 1] * (v1 - v0);
            if (z[M - 1]) y[r] = -y[r];
            for (int64_t k = 0; k < M - 1; k++) in[r * (M - 1) + k] = z[k] != z[M - 1];
        }
        st = vs_lstsq_sets(n, M - 1, in, w, y, 0.0, 0, phi);
        if (st == VS_ERR_NUMERIC) {
            st = vs_error_set(j->err, VS_ERR_NUMERIC, "kernel shap: singular system (raise the budget)");
        } else if (st != VS_OK) {
            st = vs_error_set(j->err, st, "kernel shap: out of memory for the least-squares system");
        } else {
            double s = 0;
            for (int64_t k = 0; k < M - 1; k++) s += phi[k];
            phi[M - 1] = (v1 - v0) - s;
            spread(j, &f, phi, attr);
        }
    }
    free(zs);
    free(in);
    free(v);
    free(w);
    free(y);
    free(phi);
    free(p);
    free(scratch);
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
    double *beta = malloc((size_t)(M + 1) * sizeof *beta);
    uint8_t *in = malloc((size_t)(n * (M + 1)));
    int64_t *scratch = malloc((size_t)M * sizeof *scratch);
    if (!zs || !v || !w || !in || !beta || !scratch) st = vs_error_set(j->err, VS_ERR_NOMEM, "lime: out of memory");
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
                in[i * (M + 1) + k] = zs[i * M + k];
            }
            in[i * (M + 1) + M] = 1; /* intercept */
            double cosd = 1.0 - (double)s / (sqrt((double)s) * sqrt((double)M));
            w[i] = exp(-cosd * cosd / (kw * kw));
        }
        st = vs_lstsq_sets(n, M + 1, in, w, v, j->o->ridge, M, beta);
        if (st == VS_ERR_NUMERIC)
            st = vs_error_set(j->err, VS_ERR_NUMERIC, "lime: singular system");
        else if (st != VS_OK)
            st = vs_error_set(j->err, st, "lime: out of memory for the least-squares system");
        else
            spread(j, &f, beta, attr);
    }
    free(zs);
    free(v);
    free(w);
    free(in);
    free(beta);
    free(scratch);
    vs_features_free(&f);
    return st;
}
