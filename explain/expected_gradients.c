/* expected_gradients.c - expected gradients (Erion et al. 2021): integrated gradients averaged over
 * baselines drawn from a set and path positions drawn uniformly. */
#include "explain/internal.h"

#include <stddef.h>
#include <stdlib.h>

typedef struct expected_gradients_opts {
    int samples;
} expected_gradients_opts;

static void expected_gradients_defaults(void *o) { ((expected_gradients_opts *)o)->samples = 50; }

/* E_{x'~D, a~U(0,1)} (x - x') dS/dx (x' + a (x - x')), D the baseline set (Erion et al.); the
 * class-targeted variant of GANMEX is this with D drawn from the target class. */
static vs_status expected_gradients_run(vs_attr_job *j, const void *opts, float *attr)
{
    int n = ((const expected_gradients_opts *)opts)->samples;
    if (n < 1) return vs_error_set(j->err, VS_ERR_ARG, "expected gradients: samples must be >= 1");
    const vs_tensor *set = j->r->baselines ? j->r->baselines : j->baseline;
    int64_t nb = set->size / j->dim;
    float *xs = malloc((size_t)(n * j->dim) * sizeof *xs), *g = malloc((size_t)(n * j->dim) * sizeof *g);
    int64_t *pick = malloc((size_t)n * sizeof *pick);
    if (!xs || !g || !pick) {
        free(xs);
        free(g);
        free(pick);
        return vs_error_set(j->err, VS_ERR_NOMEM, "expected gradients: out of memory");
    }
    vs_rng r;
    vs_rng_seed(&r, j->r->seed);
    const float *x = j->x->data;
    for (int k = 0; k < n; k++) {
        pick[k] = (int64_t)vs_rng_below(&r, (uint64_t)nb);
        float a = vs_rng_uniformf(&r);
        const float *b = set->data + pick[k] * j->dim;
        for (int64_t i = 0; i < j->dim; i++) xs[k * j->dim + i] = b[i] + a * (x[i] - b[i]);
    }
    vs_status st = vs_job_grads(j, xs, n, g, NULL);
    if (st == VS_OK)
        for (int64_t i = 0; i < j->dim; i++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += (double)(x[i] - set->data[pick[k] * j->dim + i]) * g[k * j->dim + i];
            attr[i] = (float)(s / n);
        }
    free(xs);
    free(g);
    free(pick);
    return st;
}

static const vs_method_param expected_gradients_params[] = {
    {"samples", VS_PARAM_INT, offsetof(expected_gradients_opts, samples), 1, 10000000, NULL, "(baseline, path position) draws"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

const vs_method vs_method_expected_gradients = {
    "expected_gradients", "integrated gradients averaged over a baseline set and random path positions (Erion et al. 2021)",
    VS_OUTPUT_FEATURES, VS_METHOD_BASELINE_SET, sizeof(expected_gradients_opts), expected_gradients_defaults,
    expected_gradients_params, expected_gradients_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
