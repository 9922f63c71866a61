/* init.c - weight initialisers (torch.nn.init formulas) and each layer's default initialisation
 * (PyTorch's reset_parameters, PyTorch Geometric's for the graph layers).  Draws come from the
 * caller's vs_rng in element order, so the same seed gives the same weights. */
#include "nn/internal.h"
#include "autograd/kernels.h"

#include <math.h>
#include <string.h>

void vs_fan_in_out(const vs_tensor *t, int64_t *fan_in, int64_t *fan_out)
{
    int64_t receptive = 1;
    for (int i = 2; i < t->ndim; i++) receptive *= t->shape[i];
    *fan_in = (t->ndim >= 2 ? t->shape[1] : (t->ndim == 1 ? t->shape[0] : 1)) * receptive;
    *fan_out = (t->ndim >= 1 ? t->shape[0] : 1) * receptive;
}

void vs_init_constant(vs_tensor *t, float v)
{
    for (int64_t i = 0; i < t->size; i++) t->data[i] = v;
}

void vs_init_uniform(vs_tensor *t, vs_rng *r, float lo, float hi) { vs_rng_fill_uniformf(r, t->data, t->size, lo, hi); }

void vs_init_normal(vs_tensor *t, vs_rng *r, float mean, float std) { vs_rng_fill_normalf(r, t->data, t->size, mean, std); }

void vs_init_xavier_uniform(vs_tensor *t, vs_rng *r, float gain)
{
    int64_t fi, fo;
    vs_fan_in_out(t, &fi, &fo);
    float b = gain * sqrtf(6.0f / (float)(fi + fo));
    vs_init_uniform(t, r, -b, b);
}

void vs_init_xavier_normal(vs_tensor *t, vs_rng *r, float gain)
{
    int64_t fi, fo;
    vs_fan_in_out(t, &fi, &fo);
    vs_init_normal(t, r, 0.0f, gain * sqrtf(2.0f / (float)(fi + fo)));
}

static float kaiming_std(const vs_tensor *t, float a, vs_fan_mode mode)
{
    int64_t fi, fo;
    vs_fan_in_out(t, &fi, &fo);
    float fan = (float)(mode == VS_FAN_OUT ? fo : fi);
    return sqrtf(2.0f / (1.0f + a * a)) / sqrtf(fan);
}

void vs_init_kaiming_uniform(vs_tensor *t, vs_rng *r, float a, vs_fan_mode mode)
{
    float b = sqrtf(3.0f) * kaiming_std(t, a, mode);
    vs_init_uniform(t, r, -b, b);
}

void vs_init_kaiming_normal(vs_tensor *t, vs_rng *r, float a, vs_fan_mode mode)
{
    vs_init_normal(t, r, 0.0f, kaiming_std(t, a, mode));
}

/* Linear and Conv: weight kaiming_uniform(a = sqrt 5), bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with
 * fan_in from the weight (for ConvTranspose2d that is out * k * k: dim 1 of its [in,out,k,k] weight). */
static void reset_affine(vs_module *m, vs_rng *r)
{
    vs_tensor *w = vs_module_param(m, "weight"), *b = vs_module_param(m, "bias");
    vs_init_kaiming_uniform(w, r, sqrtf(5.0f), VS_FAN_IN);
    if (b) {
        int64_t fi, fo;
        vs_fan_in_out(w, &fi, &fo);
        float bound = fi > 0 ? 1.0f / sqrtf((float)fi) : 0.0f;
        vs_init_uniform(b, r, -bound, bound);
    }
}

vs_status vs_layer_reset_own(vs_module *m, vs_rng *r)
{
    bool random = m->kind == VS_MODULE_LINEAR || m->kind == VS_MODULE_CONV2D || m->kind == VS_MODULE_CONV_TRANSPOSE2D ||
                  m->kind == VS_MODULE_GCN_CONV;
    if (random && !r)
        return vs_set_last_error(VS_ERR_ARG, "%s: initialising its weights needs a random generator",
                                 vs_module_kind_name(m->kind));
    switch (m->kind) {
    case VS_MODULE_LINEAR:
    case VS_MODULE_CONV2D:
    case VS_MODULE_CONV_TRANSPOSE2D:
        reset_affine(m, r);
        break;
    case VS_MODULE_BATCH_NORM1D:
    case VS_MODULE_BATCH_NORM2D:
    case VS_MODULE_INSTANCE_NORM2D:
    case VS_MODULE_LAYER_NORM:
        if (m->n_params) { /* instance norm without affine has none */
            vs_init_constant(vs_module_param(m, "weight"), 1.0f);
            vs_init_constant(vs_module_param(m, "bias"), 0.0f);
        }
        if (m->n_buffers) {
            vs_init_constant(vs_module_param(m, "running_mean"), 0.0f);
            vs_init_constant(vs_module_param(m, "running_var"), 1.0f);
        }
        break;
    case VS_MODULE_GCN_CONV:
        /* PyTorch Geometric: lin.weight Glorot uniform, bias zeros */
        vs_init_xavier_uniform(vs_module_param(vs_module_child(m, "lin"), "weight"), r, 1.0f);
        vs_init_constant(vs_module_param(m, "bias"), 0.0f);
        break;
    case VS_MODULE_GIN_CONV:
        vs_init_constant(vs_module_param(m, "eps"), (float)m->spec.eps);
        break;
    default:
        break;
    }
    return VS_OK;
}

vs_status vs_module_reset_parameters(vs_module *m, vs_rng *r)
{
    vs_status st = vs_layer_reset_own(m, r);
    if (m->kind == VS_MODULE_GCN_CONV) return st; /* its "lin" was set above */
    for (int64_t i = 0; i < m->n_children && st == VS_OK; i++) st = vs_module_reset_parameters(m->children[i], r);
    return st;
}
