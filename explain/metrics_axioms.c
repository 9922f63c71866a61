/* metrics_axioms.c - Quantus's randomisation and axiomatic checks beside cascading randomisation
 * (metrics.c): the random logit test (Sixt et al. 2020), non-sensitivity (Nguyen & Martinez 2020) and
 * input invariance (Kindermans et al. 2019), with the shifted model a module whose first layer's bias
 * absorbs the shift. */
#include "versus/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The map summed over channels as [h, w] (map_h * map_w values from n). */
static void channel_sum(const float *a, int64_t n, int64_t hw, float *out)
{
    for (int64_t p = 0; p < hw; p++) out[p] = 0;
    for (int64_t i = 0; i < n; i++) out[i % hw] += a[i];
}

vs_status vs_random_logit(vs_explain_cb explain, void *ctx, vs_tensor *x, const float *attr, int64_t target, int64_t n_classes,
                          int64_t map_h, int64_t map_w, vs_rng *r, double *ssim, vs_error *err)
{
    if (n_classes < 2 || target < 0 || target >= n_classes)
        return vs_error_set(err, VS_ERR_ARG, "random logit: needs a classifier of 2 or more classes and a target among them");
    int64_t n = x->size, hw = map_h * map_w;
    if (hw < 1 || n % hw) return vs_error_set(err, VS_ERR_SHAPE, "random logit: %lld values are no stack of %lld x %lld maps", (long long)n,
                                           (long long)map_h, (long long)map_w);
    int64_t off = (int64_t)vs_rng_below(r, (uint64_t)n_classes - 1);
    off += off >= target; /* uniform over the other classes */
    float *b = malloc((size_t)n * sizeof *b), *ma = malloc((size_t)hw * sizeof *ma), *mb = malloc((size_t)hw * sizeof *mb);
    vs_status st = b && ma && mb ? explain(ctx, x, off, b, err) : vs_error_set(err, VS_ERR_NOMEM, "random logit: out of memory");
    if (st == VS_OK) {
        channel_sum(attr, n, hw, ma);
        channel_sum(b, n, hw, mb);
        *ssim = vs_ssim(ma, mb, map_h, map_w);
    }
    free(b);
    free(ma);
    free(mb);
    return st;
}

vs_status vs_non_sensitivity(const vs_model_fn *m, const vs_tensor *x, const float *attr, const vs_perturb_opts *o, double eps,
                             int64_t *violations, vs_error *err)
{
    double *e = malloc((size_t)x->size * sizeof *e);
    if (!e) return vs_error_set(err, VS_ERR_NOMEM, "non-sensitivity: out of memory");
    vs_status st = vs_single_feature_effects(m, x, o, e, err);
    int64_t v = 0;
    for (int64_t i = 0; st == VS_OK && i < x->size; i++) v += (fabs(attr[i]) < eps) != (fabs(e[i]) < eps);
    *violations = v;
    free(e);
    return st;
}

double vs_input_invariance(const float *a, const float *a_shift, int64_t n, double atol)
{
    for (int64_t i = 0; i < n; i++)
        if (!(fabs((double)a[i] - a_shift[i]) <= atol)) return 0;
    return 1;
}

/* b' = b - shift W 1: the first layer of f' absorbs an input shift, f'(x + shift) = f(x). */
static void absorb_shift(vs_tensor *b, const vs_tensor *w, double shift)
{
    int64_t per = w->size / b->size;
    for (int64_t o = 0; o < b->size; o++) {
        double sum = 0;
        for (int64_t k = 0; k < per; k++) sum += w->data[o * per + k];
        b->data[o] = (float)(b->data[o] - shift * sum);
    }
}

double vs_input_invariance_shift(const vs_model_fn *m, vs_module *model, vs_explain_cb explain, void *ctx, vs_tensor *x, const float *a,
                                 int64_t target, int64_t contrast, double shift, vs_error *err)
{
    vs_module *seq = model->kind == VS_MODULE_SIAMESE ? vs_module_child(model, "encoder") : model;
    vs_module *first = seq && seq->kind == VS_MODULE_SEQUENTIAL && seq->n_children ? seq->children[0] : NULL;
    vs_tensor *b = first && (first->kind == VS_MODULE_LINEAR || first->kind == VS_MODULE_CONV2D) ? vs_module_param(first, "bias") : NULL;
    if (!b) return NAN;
    vs_tensor *xs = vs_copy(x);
    float *saved = malloc((size_t)b->size * sizeof *saved), *as = malloc((size_t)x->size * sizeof *as);
    double res = NAN;
    if (xs && saved && as) {
        memcpy(saved, b->data, (size_t)b->size * sizeof *saved);
        for (int64_t i = 0; i < xs->size; i++) xs->data[i] += (float)shift;
        vs_scope_begin();
        vs_tensor *s0 = vs_explained_score(m, x, target, contrast);
        absorb_shift(b, first->params[0], shift);
        vs_tensor *s1 = vs_explained_score(m, xs, target, contrast);
        bool same = s0 && s1 && fabs(s1->data[0] - s0->data[0]) <= 1e-4 * fmax(1, fabs(s0->data[0]));
        vs_scope_end();
        if (same && explain(ctx, xs, target, as, err) == VS_OK) res = vs_input_invariance(a, as, x->size, 1e-4);
        memcpy(b->data, saved, (size_t)b->size * sizeof *saved);
    }
    vs_tensor_free(xs);
    free(saved);
    free(as);
    return res;
}
