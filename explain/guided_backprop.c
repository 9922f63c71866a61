/* guided_backprop.c - the modified-ReLU gradients: guided backpropagation (Springenberg et al. 2015)
 * and deconvolution (Zeiler & Fergus 2014), as Captum's GuidedBackprop and Deconvolution define them.
 * The engine does the work: the model runs under the backward rule VS_RULE_GUIDED or VS_RULE_DECONV,
 * so each relu passes back max(g * [x > 0], 0) or max(g, 0) instead of g * [x > 0]; every other op
 * (max pooling, other activations) keeps its ordinary gradient, as Captum hooks nn.ReLU only. */
#include "explain/internal.h"

vs_status vs_job_rule_grads(vs_attr_job *j, vs_backward_rule rule, float *grads)
{
    vs_backward_rule prev = vs_set_backward_rule(rule);
    vs_status st = vs_job_grads(j, j->x->data, 1, grads, NULL);
    vs_set_backward_rule(prev);
    return st;
}

static vs_status guided_run(vs_attr_job *j, const void *opts, float *attr)
{
    (void)opts;
    return vs_job_rule_grads(j, VS_RULE_GUIDED, attr);
}

static vs_status deconv_run(vs_attr_job *j, const void *opts, float *attr)
{
    (void)opts;
    return vs_job_rule_grads(j, VS_RULE_DECONV, attr);
}

static const vs_method_param no_params[] = {{NULL, 0, 0, 0, 0, NULL, NULL}};

const vs_method vs_method_guided_backprop = {
    "guided_backprop", "the gradient with each relu passing back only positive gradients of active units (Springenberg et al. 2015)",
    VS_OUTPUT_FEATURES, 0, 0, NULL, no_params, guided_run,
    VS_METHOD_ATTRIBUTION, NULL,
};

const vs_method vs_method_deconvolution = {
    "deconvolution", "the gradient with each relu passing back only positive gradients, whatever its input (Zeiler & Fergus 2014)",
    VS_OUTPUT_FEATURES, 0, 0, NULL, no_params, deconv_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
