/* module_fn.c - an nn module (classifier, or a pair model - Siamese, or a composite with two inputs -
 * with a fixed reference or explained on pairs) as the model the explainers differentiate through. */
#include "versus/explain.h"

static vs_tensor *module_forward(void *ctx, vs_tensor *x)
{
    vs_module_explainee *e = ctx;
    vs_forward_ctx fc = {0};
    if (!vs_module_compares_pairs(e->module)) return vs_module_forward(e->module, x, &fc);
    if (!e->reference) {
        vs_set_last_error(VS_ERR_ARG, "a model that compares pairs (Siamese, or a composite with two inputs) is explained against a reference");
        return NULL;
    }
    vs_scope_begin();
    vs_tensor *ref = vs_expand(e->reference, x->ndim, x->shape); /* one reference row per query row */
    return vs_scope_return(vs_pair_forward(e->module, x, ref, &fc));
}

/* A pair model's outputs for the pairs (x[i], r[i]). */
static vs_tensor *module_forward_pair(void *ctx, vs_tensor *x, vs_tensor *r)
{
    vs_module_explainee *e = ctx;
    vs_forward_ctx fc = {0};
    return vs_pair_forward(e->module, x, r, &fc);
}

/* The last conv2d of a sequential, or -1. */
static int64_t last_conv(const vs_module *m)
{
    for (int64_t i = m->n_children - 1; i >= 0; i--)
        if (m->children[i]->kind == VS_MODULE_CONV2D) return i;
    return -1;
}

static vs_tensor *module_forward_layer(void *ctx, vs_tensor *x, int layer, vs_tensor **act)
{
    vs_module_explainee *e = ctx;
    vs_module *m = e->module;
    *act = NULL;
    if (m->kind != VS_MODULE_SEQUENTIAL) {
        vs_set_last_error(VS_ERR_ARG, "layer activations are available for sequential classifiers only");
        return NULL;
    }
    int64_t l = layer >= 0 ? layer : last_conv(m);
    if (layer < 0 && l < 0) {
        vs_set_last_error(VS_ERR_ARG, "the model has no conv2d layer");
        return NULL;
    }
    if (l >= m->n_children) {
        vs_set_last_error(VS_ERR_ARG, "layer %d outside the model's %lld layers", layer, (long long)m->n_children);
        return NULL;
    }
    vs_forward_ctx fc = {0};
    vs_tensor *a = vs_sequential_forward_range(m, x, &fc, 0, l + 1, NULL);
    vs_tensor *y = vs_sequential_forward_range(m, a, &fc, l + 1, m->n_children, NULL);
    *act = a;
    return y;
}

static vs_tensor *module_forward_boxes(void *ctx, vs_tensor *x, vs_tensor *fill, int64_t n, const int64_t *boxes)
{
    vs_module_explainee *e = ctx;
    vs_error err;
    vs_tensor *y = vs_sequential_forward_boxes(e->module, x, fill, n, boxes, &err);
    if (!y) vs_set_last_error(err.code, "%s", err.msg);
    return y;
}

/* Integrated gradients through vs_sequential_path_grads, when the model takes x that way. */
static vs_status module_path_grads(void *ctx, vs_tensor *x, vs_tensor *baseline, int64_t n, const double *a, const double *w,
                                   vs_tensor *(*score)(void *sctx, vs_tensor *out), void *sctx, int64_t chunk,
                                   float *grad_sum, bool *used)
{
    vs_module_explainee *e = ctx;
    vs_error err;
    vs_status st = vs_sequential_path_grads(e->module, x, baseline, n, a, w, score, sctx, chunk, grad_sum, &err);
    /* VS_ERR_ARG: the model does not fit x (vs_sequential_path_grads_fits, checked on the engine's own
     * forward at x, not on one more): the caller evaluates point by point, and reports any real error */
    *used = st != VS_ERR_ARG;
    if (st == VS_ERR_ARG) return VS_OK;
    if (st != VS_OK) vs_set_last_error(err.code, "%s", err.msg);
    return st;
}

vs_model_fn vs_model_fn_from_module(vs_module_explainee *e)
{
    bool seq = e->module->kind == VS_MODULE_SEQUENTIAL;
    vs_model_fn f = {.forward = module_forward,
                     .forward_layer = seq ? module_forward_layer : NULL,
                     .ctx = e,
                     .forward_boxes = seq ? module_forward_boxes : NULL,
                     .path_grads = vs_sequential_has_path_grads(e->module) ? module_path_grads : NULL,
                     .forward_pair = vs_module_compares_pairs(e->module) ? module_forward_pair : NULL,
                     .sequential = seq ? e->module : NULL,
                     .module = e->module};
    return f;
}
