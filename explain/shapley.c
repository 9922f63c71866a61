/* shapley.c - exact Shapley values by enumeration, and what the coalition methods (kernel_shap.c,
 * lime.c) share: features (elements or superpixels), coalition values with each distinct input
 * evaluated once, spreading a feature's value over its elements.  A coalition z keeps the input where
 * z = 1 and the baseline elsewhere. */
#include "explain/internal.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

vs_status vs_features_make(const vs_attr_job *j, vs_features *f)
{
    f->id = malloc((size_t)j->dim * sizeof *f->id);
    if (!f->id) return vs_error_set(j->err, VS_ERR_NOMEM, "features: out of memory");
    if (j->r->segments) {
        memcpy(f->id, j->r->segments, (size_t)j->dim * sizeof *f->id);
        f->n = j->r->n_segments;
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
vs_status vs_coalition_values(vs_attr_job *j, const vs_features *f, const uint8_t *zs, int64_t n, double *v)
{
    int64_t chunk = j->r->batch > 0 ? j->r->batch : 64;
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

void vs_features_spread(const vs_attr_job *j, const vs_features *f, const double *phi, float *attr)
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

static vs_status shapley_exact_run(vs_attr_job *j, const void *opts, float *attr)
{
    (void)opts;
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
        st = vs_coalition_values(j, &f, zs, nc, v);
    }
    if (st == VS_OK) {
        vs_shapley_from_values((int)f.n, v, phi);
        vs_features_spread(j, &f, phi, attr);
    }
    free(zs);
    free(v);
    free(phi);
    vs_features_free(&f);
    return st;
}


static const vs_method_param no_params[] = {{NULL, 0, 0, 0, 0, NULL, NULL}};

const vs_method vs_method_shapley_exact = {
    "shapley_exact", "exact Shapley values of the features by enumerating all 2^F coalitions (F <= 24)", VS_OUTPUT_FEATURES,
    VS_METHOD_COMPLETE | VS_METHOD_SEGMENTS, 0, NULL, no_params, shapley_exact_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
