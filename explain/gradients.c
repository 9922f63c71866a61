/* gradients.c - gradient-based attributions: saliency, input x gradient, integrated gradients
 * (Riemann and Gauss-Legendre rules, steps evaluated as batches), SmoothGrad and expected gradients. */
#include "explain/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

vs_status vs_attr_gradient_methods(vs_attr_job *j, float *attr)
{
    vs_status st = vs_job_grads(j, j->x->data, 1, attr, NULL);
    if (st != VS_OK) return st;
    if (j->o->method == VS_ATTR_INPUT_X_GRADIENT)
        for (int64_t k = 0; k < j->dim; k++) attr[k] *= j->x->data[k];
    else if (j->o->abs)
        for (int64_t k = 0; k < j->dim; k++) attr[k] = fabsf(attr[k]);
    return VS_OK;
}

/* attr = (x - x') * sum_k w_k dS/dx (x' + a_k (x - x')) */
vs_status vs_attr_integrated_gradients(vs_attr_job *j, float *attr)
{
    int n = j->o->steps;
    if (n < 1 || (j->o->ig_rule == VS_IG_TRAPEZOID && n < 2) || n > 100000)
        return vs_error_set(j->err, VS_ERR_ARG, "integrated gradients: %d steps (need 1..100000, trapezoid 2..)", n);
    if (j->o->ig_rule == VS_IG_GAUSS_LEGENDRE && n > VS_GAUSS_LEGENDRE_MAX)
        return vs_error_set(j->err, VS_ERR_ARG, "integrated gradients: the gauss-legendre rule takes at most %d steps "
                            "(exact for polynomials of degree %d), got %d; more steps need --ig-rule middle or trapezoid",
                            VS_GAUSS_LEGENDRE_MAX, 2 * VS_GAUSS_LEGENDRE_MAX - 1, n);
    double *a = malloc((size_t)n * sizeof *a), *w = malloc((size_t)n * sizeof *w);
    float *g = malloc((size_t)j->dim * sizeof *g), *path = NULL;
    vs_status st = VS_OK;
    if (!a || !w || !g) {
        st = vs_error_set(j->err, VS_ERR_NOMEM, "integrated gradients: out of memory for %d steps", n);
        goto out;
    }
    vs_quadrature(j->o->ig_rule, n, a, w);
    const float *x = j->x->data, *b = j->baseline->data;
    bool used;
    st = vs_job_path_grads(j, n, a, w, g, &used); /* the sum at once, when the model can */
    if (st != VS_OK || used) {
        if (st == VS_OK)
            for (int64_t i = 0; i < j->dim; i++) attr[i] = (float)((x[i] - b[i]) * (double)g[i]);
        goto out;
    }
    /* point by point: the path's rows, then their gradients (g grows to n rows) */
    float *gn = realloc(g, (size_t)(n * j->dim) * sizeof *g);
    path = malloc((size_t)(n * j->dim) * sizeof *path);
    if (gn) g = gn;
    if (!gn || !path) {
        st = vs_error_set(j->err, VS_ERR_NOMEM, "integrated gradients: out of memory for %d steps", n);
        goto out;
    }
    for (int k = 0; k < n; k++)
        for (int64_t i = 0; i < j->dim; i++) path[k * j->dim + i] = b[i] + (float)a[k] * (x[i] - b[i]);
    st = vs_job_grads(j, path, n, g, NULL);
    if (st == VS_OK)
        for (int64_t i = 0; i < j->dim; i++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += w[k] * g[k * j->dim + i];
            attr[i] = (float)((x[i] - b[i]) * s);
        }
out:
    free(a);
    free(w);
    free(path);
    free(g);
    return st;
}

/* Mean gradient over noisy copies x + N(0, (noise * (max x - min x))^2). */
vs_status vs_attr_smoothgrad(vs_attr_job *j, float *attr)
{
    int n = j->o->samples;
    if (n < 1) return vs_error_set(j->err, VS_ERR_ARG, "smoothgrad: samples must be >= 1");
    const float *x = j->x->data;
    float lo = x[0], hi = x[0];
    for (int64_t i = 1; i < j->dim; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    double sigma = j->o->noise * (hi > lo ? hi - lo : 1.0f);
    float *xs = malloc((size_t)(n * j->dim) * sizeof *xs), *g = malloc((size_t)(n * j->dim) * sizeof *g);
    if (!xs || !g) {
        free(xs);
        free(g);
        return vs_error_set(j->err, VS_ERR_NOMEM, "smoothgrad: out of memory");
    }
    vs_rng r;
    vs_rng_seed(&r, j->o->seed);
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

/* E_{x'~D, a~U(0,1)} (x - x') dS/dx (x' + a (x - x')), D the baseline set (Erion et al.); the
 * class-targeted variant of GANMEX is this with D drawn from the target class. */
vs_status vs_attr_expected_gradients(vs_attr_job *j, float *attr)
{
    int n = j->o->samples;
    if (n < 1) return vs_error_set(j->err, VS_ERR_ARG, "expected gradients: samples must be >= 1");
    const vs_tensor *set = j->o->baselines ? j->o->baselines : j->baseline;
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
    vs_rng_seed(&r, j->o->seed);
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
