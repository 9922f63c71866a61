/* noise_tunnel.c - NoiseTunnel (Captum; Smilkov et al. 2017, Adebayo et al. 2018): any feature method
 * run on noisy copies x + N(0, sigma^2) of the input, sigma = noise * (max x - min x), its maps
 * combined as their mean (smoothgrad), mean square (smoothgrad_sq) or variance (vargrad:
 * mean square - square mean).  The inner method runs with its default options; the noise is drawn
 * as smoothgrad.c draws it, so noise_tunnel over saliency equals smoothgrad. */
#include "explain/internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The methods the tunnel can wrap, in the order of its --nt-method choices. */
static const char *const inner_names[] = {"saliency", "input_x_gradient", "integrated_gradients", "deeplift", "guided_backprop",
                                          "deconvolution", "gradcam", "guided_gradcam", "lrp", "occlusion", "feature_ablation",
                                          "shapley_value_sampling", "lime", "kernel_shap"};
#define INNER_CHOICES                                                                                                          \
    "saliency|input_x_gradient|integrated_gradients|deeplift|guided_backprop|deconvolution|gradcam|guided_gradcam|lrp|occlusion|" \
    "feature_ablation|shapley_value_sampling|lime|kernel_shap"

enum { NT_SMOOTHGRAD, NT_SMOOTHGRAD_SQ, NT_VARGRAD };

typedef struct nt_opts {
    int method, type, samples;
    float noise;
} nt_opts;

static void nt_defaults(void *o) { *(nt_opts *)o = (nt_opts){2, NT_SMOOTHGRAD, 5, 0.15f}; }

static vs_status nt_run(vs_attr_job *j, const void *opts, float *attr)
{
    const nt_opts *o = opts;
    const vs_method *inner = (unsigned)o->method < sizeof inner_names / sizeof inner_names[0] ? vs_method_find(inner_names[o->method]) : NULL;
    if (!inner || inner->output != VS_OUTPUT_FEATURES)
        return vs_error_set(j->err, VS_ERR_ARG, "noise_tunnel: --nt-method must be a registered feature method");
    const float *x = j->x->data;
    double sigma = vs_job_noise_sigma(j, o->noise);
    vs_method_opts *io = vs_method_opts_new(inner);
    float *noisy = malloc((size_t)j->dim * sizeof *noisy), *a = malloc((size_t)j->dim * sizeof *a);
    double *sum = calloc((size_t)j->dim, sizeof *sum), *sq = calloc((size_t)j->dim, sizeof *sq);
    vs_status st = io && noisy && a && sum && sq ? VS_OK : vs_error_set(j->err, VS_ERR_NOMEM, "noise_tunnel: out of memory");
    vs_rng r;
    vs_rng_seed(&r, j->r->seed);
    for (int k = 0; k < o->samples && st == VS_OK; k++) {
        for (int64_t i = 0; i < j->dim; i++) noisy[i] = x[i] + (float)(sigma * vs_rng_normal(&r));
        vs_scope_begin();
        vs_attr_job jk = *j;
        jk.x = vs_tensor_from(j->x->ndim, j->x->shape, noisy);
        jk.evaluations = 0;
        st = jk.x ? inner->run(&jk, vs_method_opts_data(io), a) : vs_error_set(j->err, VS_ERR_NOMEM, "noise_tunnel: out of memory");
        j->evaluations += jk.evaluations;
        for (int64_t i = 0; i < j->dim && st == VS_OK; i++) {
            sum[i] += a[i];
            sq[i] += (double)a[i] * a[i];
        }
        vs_scope_end();
    }
    for (int64_t i = 0; i < j->dim && st == VS_OK; i++) {
        double m = sum[i] / o->samples, m2 = sq[i] / o->samples;
        attr[i] = (float)(o->type == NT_SMOOTHGRAD ? m : o->type == NT_SMOOTHGRAD_SQ ? m2 : m2 - m * m);
    }
    vs_method_opts_free(io);
    free(noisy);
    free(a);
    free(sum);
    free(sq);
    return st;
}

static const vs_method_param nt_params[] = {
    {"nt-method", VS_PARAM_CHOICE, offsetof(nt_opts, method), 0, 0, INNER_CHOICES, "the method run on the noisy copies (its defaults)"},
    {"nt-type", VS_PARAM_CHOICE, offsetof(nt_opts, type), 0, 0, "smoothgrad|smoothgrad_sq|vargrad", "how the maps are combined"},
    {"samples", VS_PARAM_INT, offsetof(nt_opts, samples), 1, 10000000, NULL, "noisy copies"},
    {"noise", VS_PARAM_FLOAT, offsetof(nt_opts, noise), 0, 100, NULL, "noise sigma as a fraction of the input's range"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

const vs_method vs_method_noise_tunnel = {
    "noise_tunnel", "any method's maps over noisy copies of the input: mean, mean square or variance (Captum's NoiseTunnel)",
    VS_OUTPUT_FEATURES, 0, sizeof(nt_opts), nt_defaults, nt_params, nt_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
