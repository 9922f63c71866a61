/* input_x_gradient.c - input x gradient (Shrikumar et al. 2016): x (*) dS/dx. */
#include "explain/internal.h"

#include <stddef.h>

static vs_status input_x_gradient_run(vs_attr_job *j, const void *opts, float *attr)
{
    (void)opts;
    vs_status st = vs_job_grads(j, j->x->data, 1, attr, NULL);
    for (int64_t k = 0; st == VS_OK && k < j->dim; k++) attr[k] *= j->x->data[k];
    return st;
}

static const vs_method_param no_params[] = {{NULL, 0, 0, 0, 0, NULL, NULL}};

const vs_method vs_method_input_x_gradient = {
    "input_x_gradient", "the input times the gradient, x * dS/dx (Shrikumar et al. 2016)", VS_OUTPUT_FEATURES, 0, 0, NULL,
    no_params, input_x_gradient_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
