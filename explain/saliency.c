/* saliency.c - saliency (Simonyan et al. 2014): the gradient dS/dx of the explained score, signed or
 * its magnitude. */
#include "explain/internal.h"

#include <math.h>
#include <stddef.h>

typedef struct saliency_opts {
    bool abs;
} saliency_opts;

static void saliency_defaults(void *o) { ((saliency_opts *)o)->abs = false; }

static vs_status saliency_run(vs_attr_job *j, const void *opts, float *attr)
{
    vs_status st = vs_job_grads(j, j->x->data, 1, attr, NULL);
    if (st == VS_OK && ((const saliency_opts *)opts)->abs)
        for (int64_t k = 0; k < j->dim; k++) attr[k] = fabsf(attr[k]);
    return st;
}

static const vs_method_param saliency_params[] = {
    {"abs", VS_PARAM_SWITCH, offsetof(saliency_opts, abs), 0, 0, NULL, "the magnitude of the gradient"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

const vs_method vs_method_saliency = {
    "saliency", "the gradient dS/dx (Simonyan et al. 2014)", VS_OUTPUT_FEATURES, 0, sizeof(saliency_opts), saliency_defaults,
    saliency_params, saliency_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
