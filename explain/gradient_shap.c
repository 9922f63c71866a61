/* gradient_shap.c - GradientSHAP as Captum defines it (captum.attr.GradientShap, after Lundberg & Lee's
 * shap.GradientExplainer): expected gradients over baselines drawn from a set, each draw's input
 * smoothed by Gaussian noise (SmoothGrad), the gradient times (noisy input - baseline). */
#include "explain/internal.h"

#include <stddef.h>
#include <stdlib.h>

typedef struct gradient_shap_opts {
    int samples;
    float stdevs;
} gradient_shap_opts;

/* Captum's defaults: n_samples=5, stdevs=0.0 */
static void gradient_shap_defaults(void *o) { *(gradient_shap_opts *)o = (gradient_shap_opts){5, 0.0f}; }

/* attr = 1/n sum_k (x + e_k - b_k) dS/dx (b_k + a_k (x + e_k - b_k)),  b_k drawn uniformly from the
 * baseline set, e_k ~ N(0, stdevs^2) per element, a_k ~ U(0, 1).  Draws per sample k in that order:
 * the baseline's index, the noise of every element, a_k (tests replay them). */
static vs_status gradient_shap_run(vs_attr_job *j, const void *opts, float *attr)
{
    const gradient_shap_opts *o = opts;
    int n = o->samples;
    if (n < 1) return vs_error_set(j->err, VS_ERR_ARG, "gradient_shap: samples must be >= 1");
    const vs_tensor *set = j->r->baselines ? j->r->baselines : j->baseline;
    int64_t nb = set->size / j->dim, dim = j->dim;
    float *pts = malloc((size_t)(n * dim) * sizeof *pts), *diff = malloc((size_t)(n * dim) * sizeof *diff);
    float *g = malloc((size_t)(n * dim) * sizeof *g);
    if (!pts || !diff || !g) {
        free(pts);
        free(diff);
        free(g);
        return vs_error_set(j->err, VS_ERR_NOMEM, "gradient_shap: out of memory");
    }
    vs_rng r;
    vs_rng_seed(&r, j->r->seed);
    const float *x = j->x->data;
    for (int k = 0; k < n; k++) {
        const float *b = set->data + (int64_t)vs_rng_below(&r, (uint64_t)nb) * dim;
        float *d = diff + k * dim;
        for (int64_t i = 0; i < dim; i++) d[i] = x[i] + (o->stdevs > 0 ? (float)(o->stdevs * vs_rng_normal(&r)) : 0.0f) - b[i];
        float a = vs_rng_uniformf(&r);
        for (int64_t i = 0; i < dim; i++) pts[k * dim + i] = b[i] + a * d[i];
    }
    vs_status st = vs_job_grads(j, pts, n, g, NULL);
    if (st == VS_OK)
        for (int64_t i = 0; i < dim; i++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += (double)diff[k * dim + i] * g[k * dim + i];
            attr[i] = (float)(s / n);
        }
    free(pts);
    free(diff);
    free(g);
    return st;
}

static const vs_method_param gradient_shap_params[] = {
    {"samples", VS_PARAM_INT, offsetof(gradient_shap_opts, samples), 1, 10000000, NULL, "(baseline, noise, path position) draws (Captum's n_samples)"},
    {"stdevs", VS_PARAM_FLOAT, offsetof(gradient_shap_opts, stdevs), 0, 1e6, NULL,
     "standard deviation of the Gaussian noise added to the input, in the input's units (Captum's stdevs)"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

const vs_method vs_method_gradient_shap = {
    .name = "gradient_shap",
    .help = "expected gradients over a baseline set with Gaussian noise on the input (Captum's GradientShap)",
    .output = VS_OUTPUT_FEATURES,
    .flags = VS_METHOD_BASELINE_SET,
    .opts_size = sizeof(gradient_shap_opts),
    .defaults = gradient_shap_defaults,
    .params = gradient_shap_params,
    .run = gradient_shap_run,
};
