/* module_fn.c - an nn module (classifier, or Siamese model with a fixed reference or explained on
 * pairs) as the model the explainers differentiate through. */
#include "versus/explain.h"

static vs_tensor *module_forward(void *ctx, vs_tensor *x)
{
    vs_module_explainee *e = ctx;
    vs_forward_ctx fc = {0};
    if (e->module->kind != VS_MODULE_SIAMESE) return vs_module_forward(e->module, x, &fc);
    if (!e->reference) {
        vs_set_last_error(VS_ERR_ARG, "a Siamese model is explained against a reference");
        return NULL;
    }
    vs_scope_begin();
    vs_tensor *ref = vs_expand(e->reference, x->ndim, x->shape); /* one reference row per query row */
    return vs_scope_return(vs_siamese_forward(e->module, x, &fc, ref, &fc));
}

/* A Siamese model's outputs for the pairs (x[i], r[i]). */
static vs_tensor *module_forward_pair(void *ctx, vs_tensor *x, vs_tensor *r)
{
    vs_module_explainee *e = ctx;
    vs_forward_ctx fc = {0};
    if (e->module->kind != VS_MODULE_SIAMESE) {
        vs_set_last_error(VS_ERR_ARG, "a classifier takes one input, not pairs");
        return NULL;
    }
    return vs_siamese_forward(e->module, x, &fc, r, &fc);
}

vs_model_fn vs_model_fn_from_module(vs_module_explainee *e)
{
    bool seq = e->module->kind == VS_MODULE_SEQUENTIAL;
    vs_model_fn f = {.forward = module_forward,
                     .ctx = e,
                     .forward_pair = e->module->kind == VS_MODULE_SIAMESE ? module_forward_pair : NULL,
                     .sequential = seq ? e->module : NULL,
                     .module = e->module};
    return f;
}
