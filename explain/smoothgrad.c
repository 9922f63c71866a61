/* smoothgrad.c - SmoothGrad (Smilkov et al. 2017): the gradient averaged over noisy copies of the input. */
#include "explain/internal.h"

#include <stddef.h>
#include <stdlib.h>

typedef struct smoothgrad_opts {
    int samples;
    float noise;
} smoothgrad_opts;

static void smoothgrad_defaults(void *o) { *(smoothgrad_opts *)o = (smoothgrad_opts){50, 0.15f}; }

double vs_job_noise_sigma(const vs_attr_job *j, float noise)
{
    const float *x = j->x->data;
    float lo = x[0], hi = x[0];
    for (int64_t i = 1; i < j->dim; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    return noise * (hi > lo ? hi - lo : 1.0f);
}

/* Mean gradient over noisy copies x + N(0, (noise * (max x - min x))^2). */
static vs_status smoothgrad_run(vs_attr_job *j, const void *opts, float *attr)
{
    const smoothgrad_opts *o = opts;
    int n = o->samples;
    if (n < 1) return vs_error_set(j->err, VS_ERR_ARG, "smoothgrad: samples must be >= 1");
    const float *x = j->x->data;
    double sigma = vs_job_noise_sigma(j, o->noise);
    float *xs = malloc((size_t)(n * j->dim) * sizeof *xs), *g = malloc((size_t)(n * j->dim) * sizeof *g);
    if (!xs || !g) {
        free(xs);
        free(g);
        return vs_error_set(j->err, VS_ERR_NOMEM, "smoothgrad: out of memory");
    }
    vs_rng r;
    vs_rng_seed(&r, j->r->seed);
    for (int k = 0; k < n; k++)
        for (int64_t i = 0; i < j->dim; i++) xs[k * j->dim + i] = x[i] + (float)(sigma * vs_rng_normal(&r));
    vs_status st = vs_job_grads(j, xs, n, g, NULL);
    if (st == VS_OK)
        for (int64_t i = 0; i < j->dim; i++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += g[k * j->dim + i];
            attr[i] = (float)(s / n);
        }
    free(xs);
    free(g);
    return st;
}

static const vs_method_param smoothgrad_params[] = {
    {"samples", VS_PARAM_INT, offsetof(smoothgrad_opts, samples), 1, 10000000, NULL, "noisy copies"},
    {"noise", VS_PARAM_FLOAT, offsetof(smoothgrad_opts, noise), 0, 100, NULL, "noise sigma as a fraction of the input's range"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

const vs_method vs_method_smoothgrad = {
    "smoothgrad", "the gradient averaged over noisy copies of the input (Smilkov et al. 2017)", VS_OUTPUT_FEATURES, 0,
    sizeof(smoothgrad_opts), smoothgrad_defaults, smoothgrad_params, smoothgrad_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
