/* feature_ablation.c - perturbation of one feature group at a time, as Captum's FeatureAblation and
 * FeaturePermutation define them.  Features are the elements, or groups given by request.segments
 * (a --feature-mask or superpixels); as in Captum, every element of a group carries the group's
 * whole value (the group's attribution is not shared out).
 *   feature_ablation:    a_k = S(x) - S(x with group k taken from the baseline)
 *   feature_permutation: a_k = S(x) - S(x with group k taken from row u), u drawn uniformly from the
 *                        batch {x} + baseline set, averaged over --samples draws: Captum permutes the
 *                        group across the batch, and the row a permutation brings to x is uniform. */
#include "explain/internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void vs_features_assign(const vs_attr_job *j, const vs_features *f, const double *phi, float *attr)
{
    for (int64_t i = 0; i < j->dim; i++) attr[i] = (float)phi[f->id[i]];
}

/* phi[k] = S(x) - S(row_k) for the n groups, row_k = x with group k from src(k) (one row per group,
 * built and evaluated batch by batch); src returns the row whose values group k takes, or NULL to
 * skip the group (its drop is 0). */
typedef const float *(*group_source)(void *ctx, int64_t k);

static vs_status group_drops(vs_attr_job *j, const vs_features *f, group_source src, void *ctx, double *phi)
{
    int64_t chunk = vs_job_chunk(j), n = f->n;
    float *rows = malloc((size_t)(chunk * j->dim) * sizeof *rows);
    int64_t *which = malloc((size_t)chunk * sizeof *which);
    double *s = malloc((size_t)chunk * sizeof *s), base;
    vs_status st = rows && which && s ? vs_job_scores(j, j->x->data, 1, &base) : vs_error_set(j->err, VS_ERR_NOMEM, "ablation: out of memory");
    for (int64_t k = 0; k < n; k++) phi[k] = 0;
    for (int64_t k0 = 0; k0 < n && st == VS_OK;) {
        int64_t m = 0;
        for (; k0 < n && m < chunk; k0++) {
            const float *from = src(ctx, k0);
            if (!from) continue;
            float *row = rows + m * j->dim;
            for (int64_t i = 0; i < j->dim; i++) row[i] = f->id[i] == k0 ? from[i] : j->x->data[i];
            which[m++] = k0;
        }
        if (m) st = vs_job_scores(j, rows, m, s);
        for (int64_t r = 0; r < m && st == VS_OK; r++) phi[which[r]] = base - s[r];
    }
    free(rows);
    free(which);
    free(s);
    return st;
}

static const float *baseline_source(void *ctx, int64_t k)
{
    (void)k;
    return ((const vs_attr_job *)ctx)->baseline->data;
}

static vs_status ablation_run(vs_attr_job *j, const void *opts, float *attr)
{
    (void)opts;
    vs_features f;
    vs_status st = vs_features_make(j, &f);
    if (st != VS_OK) return st;
    double *phi = malloc((size_t)f.n * sizeof *phi);
    st = phi ? group_drops(j, &f, baseline_source, j, phi) : vs_error_set(j->err, VS_ERR_NOMEM, "feature_ablation: out of memory");
    if (st == VS_OK) vs_features_assign(j, &f, phi, attr);
    free(phi);
    vs_features_free(&f);
    return st;
}

typedef struct permutation_opts {
    int samples;
} permutation_opts;

static void permutation_defaults(void *o) { ((permutation_opts *)o)->samples = 10; }

/* The row of the batch {x} + set that a uniform permutation brings to x: NULL for x itself. */
typedef struct pool_draw {
    const vs_attr_job *j;
    const vs_tensor *set;
    vs_rng rng;
} pool_draw;

static const float *pool_source(void *ctx, int64_t k)
{
    (void)k;
    pool_draw *p = ctx;
    uint64_t u = vs_rng_below(&p->rng, (uint64_t)(p->set->size / p->j->dim) + 1);
    return u == 0 ? NULL : p->set->data + (int64_t)(u - 1) * p->j->dim;
}

static vs_status permutation_run(vs_attr_job *j, const void *opts, float *attr)
{
    int samples = ((const permutation_opts *)opts)->samples;
    vs_features f;
    vs_status st = vs_features_make(j, &f);
    if (st != VS_OK) return st;
    pool_draw p = {.j = j, .set = j->r->baselines ? j->r->baselines : j->baseline};
    vs_rng_seed(&p.rng, j->r->seed);
    double *phi = malloc((size_t)f.n * sizeof *phi), *acc = calloc((size_t)f.n, sizeof *acc);
    if (!phi || !acc) st = vs_error_set(j->err, VS_ERR_NOMEM, "feature_permutation: out of memory");
    for (int s = 0; s < samples && st == VS_OK; s++) {
        st = group_drops(j, &f, pool_source, &p, phi);
        for (int64_t k = 0; k < f.n && st == VS_OK; k++) acc[k] += phi[k] / samples;
    }
    if (st == VS_OK) vs_features_assign(j, &f, acc, attr);
    free(phi);
    free(acc);
    vs_features_free(&f);
    return st;
}

static const vs_method_param no_params[] = {{NULL, 0, 0, 0, 0, NULL, NULL}};

static const vs_method_param permutation_params[] = {
    {"samples", VS_PARAM_INT, offsetof(permutation_opts, samples), 1, 10000000, NULL, "random draws averaged"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

const vs_method vs_method_feature_ablation = {
    "feature_ablation", "score drop when one feature (or group) takes the baseline's values (Captum's FeatureAblation)",
    VS_OUTPUT_FEATURES, VS_METHOD_SEGMENTS, 0, NULL, no_params, ablation_run,
    VS_METHOD_ATTRIBUTION, NULL,
};

const vs_method vs_method_feature_permutation = {
    "feature_permutation", "score drop when one feature (or group) is permuted across the batch of x and the baseline set (Breiman 2001; Fisher et al. 2019)",
    VS_OUTPUT_FEATURES, VS_METHOD_SEGMENTS | VS_METHOD_BASELINE_SET, sizeof(permutation_opts), permutation_defaults, permutation_params,
    permutation_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
