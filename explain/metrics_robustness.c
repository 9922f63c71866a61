/* metrics_robustness.c - how stable is an explanation under small input changes (Quantus's robustness
 * family): max- and average-sensitivity (Yeh et al. 2019) under uniform noise, and the local
 * Lipschitz estimate (Alvarez-Melis & Jaakkola 2018) under Gaussian noise.  The explainer is a
 * callback, so any method (or a library user's own) is judged; noise comes from the caller's rng. */
#include "versus/metrics.h"

#include <math.h>
#include <stdlib.h>

/* For each of `samples` perturbations d (uniform in [-scale, scale] or N(0, scale^2)), ratio[k] =
 * ||A(x + d) - A(x)|| / (denominator: ||A(x)|| or ||d||). */
static vs_status perturbed_ratios(vs_explain_cb explain, void *ctx, vs_tensor *x, const float *attr, int64_t target, double scale,
                                  bool gaussian, bool by_input, int samples, vs_rng *r, double *ratio, vs_error *err)
{
    if (!x || x->ndim < 2 || x->shape[0] != 1 || samples < 1)
        return vs_error_set(err, VS_ERR_ARG, "robustness: one example [1, ...] and at least one sample");
    int64_t n = x->size;
    vs_tensor *xp = vs_tensor_new(x->ndim, x->shape);
    float *ap = malloc((size_t)n * sizeof *ap);
    vs_status st = xp && ap ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "robustness: out of memory");
    double norm_a = 0;
    for (int64_t i = 0; i < n; i++) norm_a += (double)attr[i] * attr[i];
    for (int k = 0; k < samples && st == VS_OK; k++) {
        double dd = 0, da = 0;
        for (int64_t i = 0; i < n; i++) {
            double d = gaussian ? scale * vs_rng_normal(r) : scale * (2 * vs_rng_uniform(r) - 1);
            xp->data[i] = x->data[i] + (float)d;
            dd += (double)(xp->data[i] - x->data[i]) * (xp->data[i] - x->data[i]);
        }
        st = explain(ctx, xp, target, ap, err);
        for (int64_t i = 0; i < n && st == VS_OK; i++) da += ((double)ap[i] - attr[i]) * ((double)ap[i] - attr[i]);
        ratio[k] = sqrt(da) / sqrt(by_input ? dd : norm_a);
    }
    vs_tensor_free(xp);
    free(ap);
    return st;
}

vs_status vs_sensitivity(vs_explain_cb explain, void *ctx, vs_tensor *x, const float *attr, int64_t target, double radius, int samples,
                         vs_rng *r, double *max_sens, double *avg_sens, vs_error *err)
{
    double *ratio = malloc((size_t)(samples > 0 ? samples : 1) * sizeof *ratio);
    if (!ratio) return vs_error_set(err, VS_ERR_NOMEM, "sensitivity: out of memory");
    vs_status st = perturbed_ratios(explain, ctx, x, attr, target, radius, false, false, samples, r, ratio, err);
    if (st == VS_OK) {
        double mx = ratio[0], sum = 0;
        for (int k = 0; k < samples; k++) {
            mx = ratio[k] > mx ? ratio[k] : mx;
            sum += ratio[k];
        }
        *max_sens = mx;
        *avg_sens = sum / samples;
    }
    free(ratio);
    return st;
}

vs_status vs_local_lipschitz(vs_explain_cb explain, void *ctx, vs_tensor *x, const float *attr, int64_t target, double sigma, int samples,
                             vs_rng *r, double *lle, vs_error *err)
{
    double *ratio = malloc((size_t)(samples > 0 ? samples : 1) * sizeof *ratio);
    if (!ratio) return vs_error_set(err, VS_ERR_NOMEM, "local Lipschitz estimate: out of memory");
    vs_status st = perturbed_ratios(explain, ctx, x, attr, target, sigma, true, true, samples, r, ratio, err);
    if (st == VS_OK) {
        *lle = ratio[0];
        for (int k = 1; k < samples; k++) *lle = ratio[k] > *lle ? ratio[k] : *lle;
    }
    free(ratio);
    return st;
}
