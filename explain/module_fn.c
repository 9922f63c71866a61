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

vs_model_fn vs_model_fn_from_module(vs_module_explainee *e)
{
    bool seq = e->module->kind == VS_MODULE_SEQUENTIAL;
    vs_model_fn f = {.forward = module_forward,
                     .ctx = e,
                     .forward_pair = vs_module_compares_pairs(e->module) ? module_forward_pair : NULL,
                     .sequential = seq ? e->module : NULL,
                     .module = e->module};
    return f;
}
