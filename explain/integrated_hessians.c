/* integrated_hessians.c - Integrated Hessians (Janizek, Sturmfels & Lee 2021): integrated gradients
 * applied to integrated gradients, one value per pair of features [F, F]:
 *   G_ij = d_i d_j  int int  a b  d2S/dx_i dx_j (x' + a b d) da db
 *        + [i = j] d_i  int int  dS/dx_i (x' + a b d) da db,          d = x - x',
 * so that sum_j G_ij = IG_i and sum_ij G_ij = S(x) - S(x') (completeness).  Both integrals use one
 * quadrature rule in a and in b (steps x steps points).  The Hessian comes from double backward: the
 * gradients of a batch of path points are recorded (create_graph), and one more backward per feature i
 * with weights c_p = w_p a_p b_p in column i gives sum_p c_p H_p[i, :] for the whole batch at once
 * (rows do not mix).  For pairs explained on both sides, F counts both: block [0:F/2, F/2:F] holds
 * query feature x reference feature interactions. */
#include "explain/internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define IH_MAX_FEATURES 2048 /* F^2 floats per row */

typedef struct ih_opts {
    int steps;
    int rule; /* vs_ig_rule */
} ih_opts;

static void ih_defaults(void *o) { *(ih_opts *)o = (ih_opts){16, VS_IG_GAUSS_LEGENDRE}; }

/* Add sum over the rows p of the batch pts [c, F] (weights w[c], c_p = wt[c]) into first[F] (sum w_p
 * dS/dx) and second[F*F] (sum c_p H_p). */
static vs_status batch_terms(vs_attr_job *j, const float *pts, int64_t c, const double *w, const double *wt, double *first,
                             double *second)
{
    const int64_t F = j->dim;
    int nd;
    int64_t shape[VS_MAX_DIMS];
    vs_job_batch_shape(j, c, &nd, shape);
    vs_status st = VS_OK;
    vs_scope_begin();
    vs_tensor *X = vs_tensor_from(nd, shape, pts);
    if (X) vs_set_requires_grad(X, true);
    vs_tensor *S = X ? vs_explained_score(j->m, X, j->target, j->contrast) : NULL, *g = NULL;
    vs_tensor *ones = S ? vs_ones_like(S) : NULL;
    if (!S || !S->requires_grad)
        st = S ? vs_error_set(j->err, VS_ERR_STATE, "the explained score does not depend on the input") : vs_job_model_error(j);
    else if (vs_grad(1, &S, &ones, 1, &X, &g, true) != VS_OK)
        st = vs_job_model_error(j);
    j->evaluations += c;
    for (int64_t p = 0; st == VS_OK && p < c; p++)
        for (int64_t i = 0; i < F; i++) first[i] += w[p] * g->data[p * F + i];
    /* a piecewise-linear score has no recorded second derivative: H = 0 */
    for (int64_t i = 0; st == VS_OK && g->requires_grad && i < F; i++) {
        vs_scope_begin();
        vs_tensor *sel = vs_tensor_zeros(nd, shape), *h = NULL;
        for (int64_t p = 0; sel && p < c; p++) sel->data[p * F + i] = (float)wt[p];
        if (!sel || vs_grad(1, &g, &sel, 1, &X, &h, false) != VS_OK) {
            st = vs_job_model_error(j);
        } else if (h) { /* NULL: row i of the Hessian is zero */
            for (int64_t p = 0; p < c; p++)
                for (int64_t k = 0; k < F; k++) second[i * F + k] += h->data[p * F + k];
        }
        vs_scope_end();
    }
    vs_scope_end();
    return st;
}

static vs_status ih_run(vs_attr_job *j, const void *opts, float *out)
{
    const ih_opts *o = opts;
    const int64_t F = j->dim, k = o->steps;
    if (F > IH_MAX_FEATURES)
        return vs_error_set(j->err, VS_ERR_ARG, "integrated hessians: %lld features; at most %d (the result is F x F per row)",
                            (long long)F, IH_MAX_FEATURES);
    if (k < 1 || ((vs_ig_rule)o->rule == VS_IG_TRAPEZOID && k < 2))
        return vs_error_set(j->err, VS_ERR_ARG, "integrated hessians: %lld steps per axis (need 1.., trapezoid 2..)", (long long)k);
    const int64_t chunk = vs_job_chunk(j), np = k * k;
    double *a = malloc((size_t)k * sizeof *a), *wa = malloc((size_t)k * sizeof *wa);
    double *w = malloc((size_t)chunk * sizeof *w), *wt = malloc((size_t)chunk * sizeof *wt);
    double *first = calloc((size_t)F, sizeof *first), *second = calloc((size_t)(F * F), sizeof *second);
    float *pts = malloc((size_t)(chunk * F) * sizeof *pts);
    vs_status st = VS_OK;
    if (!a || !wa || !w || !wt || !first || !second || !pts) st = vs_error_set(j->err, VS_ERR_NOMEM, "integrated hessians: out of memory");
    if (st == VS_OK) vs_quadrature((vs_ig_rule)o->rule, (int)k, a, wa);
    const float *x = j->x->data, *b = j->baseline->data;
    for (int64_t p0 = 0; p0 < np && st == VS_OK; p0 += chunk) {
        int64_t c = np - p0 < chunk ? np - p0 : chunk;
        for (int64_t q = 0; q < c; q++) {
            int64_t ia = (p0 + q) / k, ib = (p0 + q) % k;
            double t = a[ia] * a[ib];
            w[q] = wa[ia] * wa[ib];
            wt[q] = w[q] * t;
            for (int64_t i = 0; i < F; i++) pts[q * F + i] = b[i] + (float)t * (x[i] - b[i]);
        }
        st = batch_terms(j, pts, c, w, wt, first, second);
    }
    for (int64_t i = 0; st == VS_OK && i < F; i++) {
        double di = (double)x[i] - b[i];
        for (int64_t m = 0; m < F; m++) out[i * F + m] = (float)(di * ((double)x[m] - b[m]) * second[i * F + m]);
        out[i * F + i] += (float)(di * first[i]);
    }
    free(a);
    free(wa);
    free(w);
    free(wt);
    free(first);
    free(second);
    free(pts);
    return st;
}

static const vs_method_param ih_params[] = {
    {"steps", VS_PARAM_INT, offsetof(ih_opts, steps), 1, 1000, NULL, "points per axis of the double path integral (steps^2 in all)"},
    {"ig-rule", VS_PARAM_CHOICE, offsetof(ih_opts, rule), 0, 0, VS_IG_RULE_CHOICES,
     "quadrature rule on each axis"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

const vs_method vs_method_integrated_hessians = {
    "integrated_hessians", "pairwise interactions [F, F]: integrated gradients of integrated gradients (Janizek et al. 2021)",
    VS_OUTPUT_INTERACTIONS, VS_METHOD_COMPLETE, sizeof(ih_opts), ih_defaults, ih_params, ih_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
