/* integrated_gradients.c - integrated gradients (Sundararajan et al. 2017): (x - x') times the
 * gradient integrated along the straight path from the baseline, by a quadrature rule (Gauss-Legendre
 * or Riemann sums); the path's points are evaluated as batches, or through an accelerator: the path
 * engine of sequentials that start affine, then piecewise-linear layers (nn/path_grads.c). */
#include "explain/internal.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Integrated gradients' accelerators. */
static const vs_accel ig_accels[] = {
    {VS_MODULE_SEQUENTIAL, vs_sequential_has_path_grads, NULL, vs_sequential_path_grads},
};

/* attr = (x - x') * sum_k w_k dS/dx (x' + a_k (x - x')) */
vs_status vs_job_integrated_gradients(vs_attr_job *j, int n, vs_ig_rule rule, float *attr)
{
    if (n < 1 || (rule == VS_IG_TRAPEZOID && n < 2) || n > 100000)
        return vs_error_set(j->err, VS_ERR_ARG, "integrated gradients: %d steps (need 1..100000, trapezoid 2..)", n);
    if (rule == VS_IG_GAUSS_LEGENDRE && n > VS_GAUSS_LEGENDRE_MAX)
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
    vs_quadrature(rule, n, a, w);
    const float *x = j->x->data, *b = j->baseline->data;
    bool used;
    st = vs_job_path_grads(j, ig_accels, 1, n, a, w, g, &used); /* the sum at once, when an accelerator holds */
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

typedef struct ig_opts {
    int steps;
    int rule; /* vs_ig_rule */
} ig_opts;

static void ig_defaults(void *o) { *(ig_opts *)o = (ig_opts){50, VS_IG_GAUSS_LEGENDRE}; }

static vs_status ig_run(vs_attr_job *j, const void *opts, float *attr)
{
    const ig_opts *o = opts;
    return vs_job_integrated_gradients(j, o->steps, (vs_ig_rule)o->rule, attr);
}

static const vs_method_param ig_params[] = {
    {"steps", VS_PARAM_INT, offsetof(ig_opts, steps), 1, 100000, NULL, "gradient evaluations along the path (gauss-legendre: at most 4096)"},
    {"ig-rule", VS_PARAM_CHOICE, offsetof(ig_opts, rule), 0, 0, VS_IG_RULE_CHOICES, "quadrature rule of the path integral"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

const vs_method vs_method_integrated_gradients = {
    "integrated_gradients", "(x - x') times the mean gradient along the path from the baseline (Sundararajan et al. 2017)",
    VS_OUTPUT_FEATURES, VS_METHOD_COMPLETE, sizeof(ig_opts), ig_defaults, ig_params, ig_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
