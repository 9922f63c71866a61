/* deeplift.c - DeepLIFT with the rescale rule and DeepSHAP (DeepLIFT averaged over baselines).
 *
 * The engine does the work: the rows [x; x'] go through the model in one batch with the backward
 * rule VS_RULE_RESCALE, so every nonlinearity (and max pooling) backpropagates the multiplier
 * (f(x) - f(x')) / (x - x') computed from the two halves instead of its derivative.  Linear layers
 * need no change.  With those multipliers, attr = (x - x') * m sums to S(x) - S(x') (summation to
 * delta) for networks of linear maps, rescaled nonlinearities and max pooling.  Both methods are
 * registered here: DeepSHAP is DeepLIFT averaged over a baseline set and shares its multipliers. */
#include "explain/internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Multipliers for k copies of x against k references: rows [x..x; b_1..b_k].  grads[k*dim]. */
static vs_status rescale_grads(vs_attr_job *j, const float *refs, int64_t k, float *grads)
{
    int nd;
    int64_t shape[VS_MAX_DIMS];
    vs_job_batch_shape(j, 2 * k, &nd, shape);
    vs_status st = VS_OK;
    bool prev = vs_set_grad_enabled(true);
    vs_scope_begin();
    vs_tensor *xt = vs_tensor_new(nd, shape);
    vs_tensor *w = vs_tensor_zeros(1, (int64_t[]){2 * k});
    if (!xt || !w) {
        st = vs_error_set(j->err, VS_ERR_NOMEM, "deeplift: out of memory");
    } else {
        for (int64_t r = 0; r < k; r++) {
            memcpy(xt->data + r * j->dim, j->x->data, (size_t)j->dim * sizeof(float));
            w->data[r] = 1.0f;
        }
        memcpy(xt->data + k * j->dim, refs, (size_t)(k * j->dim) * sizeof(float));
        vs_set_requires_grad(xt, true);
        vs_backward_rule rule = vs_set_backward_rule(VS_RULE_RESCALE);
        vs_tensor *s = vs_explained_score(j->m, xt, j->target, j->contrast);
        vs_set_backward_rule(rule);
        vs_tensor *g = NULL;
        if (!s || !s->requires_grad || vs_grad(1, &s, &w, 1, &xt, &g, false) != VS_OK)
            st = vs_error_set(j->err, VS_ERR_STATE, "deeplift: model evaluation failed: %s", vs_last_error()->msg);
        else
            memcpy(grads, g->data, (size_t)(k * j->dim) * sizeof(float));
        j->evaluations += 2 * k;
    }
    vs_scope_end();
    vs_set_grad_enabled(prev);
    return st;
}

vs_status vs_attr_deeplift(vs_attr_job *j, const float *baseline, float *attr)
{
    vs_status st = rescale_grads(j, baseline, 1, attr);
    if (st == VS_OK)
        for (int64_t i = 0; i < j->dim; i++) attr[i] *= j->x->data[i] - baseline[i];
    return st;
}

/* mean over baselines b of DeepLIFT(x, b) (Lundberg & Lee's DeepSHAP). */
static vs_status deepshap_run(vs_attr_job *j, const void *opts, float *attr)
{
    (void)opts;
    const vs_tensor *set = j->r->baselines ? j->r->baselines : j->baseline;
    int64_t nb = set->size / j->dim;
    int64_t chunk = j->r->batch > 1 ? j->r->batch / 2 : 1;
    float *g = malloc((size_t)(chunk * j->dim) * sizeof *g);
    double *acc = calloc((size_t)j->dim, sizeof *acc);
    vs_status st = g && acc ? VS_OK : vs_error_set(j->err, VS_ERR_NOMEM, "deepshap: out of memory");
    for (int64_t b0 = 0; b0 < nb && st == VS_OK; b0 += chunk) {
        int64_t k = nb - b0 < chunk ? nb - b0 : chunk;
        const float *refs = set->data + b0 * j->dim;
        st = rescale_grads(j, refs, k, g);
        for (int64_t r = 0; r < k && st == VS_OK; r++)
            for (int64_t i = 0; i < j->dim; i++) acc[i] += (double)g[r * j->dim + i] * (j->x->data[i] - refs[r * j->dim + i]);
    }
    if (st == VS_OK)
        for (int64_t i = 0; i < j->dim; i++) attr[i] = (float)(acc[i] / nb);
    free(g);
    free(acc);
    return st;
}

static vs_status deeplift_run(vs_attr_job *j, const void *opts, float *attr)
{
    (void)opts;
    return vs_attr_deeplift(j, j->baseline->data, attr);
}

static const vs_method_param no_params[] = {{NULL, 0, 0, 0, 0, NULL, NULL}};

const vs_method vs_method_deeplift = {
    "deeplift", "DeepLIFT with the rescale rule: difference-from-baseline multipliers (Shrikumar et al. 2017)",
    VS_OUTPUT_FEATURES, VS_METHOD_COMPLETE, 0, NULL, no_params, deeplift_run,
    VS_METHOD_ATTRIBUTION, NULL,
};

const vs_method vs_method_deepshap = {
    "deepshap", "DeepLIFT averaged over a baseline set (Lundberg & Lee 2017)", VS_OUTPUT_FEATURES, VS_METHOD_BASELINE_SET, 0,
    NULL, no_params, deepshap_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
