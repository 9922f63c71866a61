/* forward.c - forward passes of every module kind, sequential ranges (activations of inner layers
 * for Grad-CAM), the Siamese similarity and pair models (a Siamese module or a two-input composite).  Graph layers are in gnn_layers.c.  Each public function
 * builds its result in a scope of its own (vs_scope_return), leaving the caller only the result. */
#include "nn/internal.h"
#include "versus/composite.h"
#include "autograd/internal.h" /* vs_instance_norm_stats */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const vs_forward_ctx no_ctx;

static bool need_ndim(const vs_module *m, const vs_tensor *x, int lo, int hi, const char *layout)
{
    if (x->ndim >= lo && x->ndim <= hi) return true;
    char s[96];
    vs_shape_str(x, s, sizeof s);
    vs_set_last_error(VS_ERR_SHAPE, "%s: expects %s, got %s", vs_module_kind_name(m->kind), layout, s);
    return false;
}

/* y = x W^T + b over the last dim of x (any leading dims, as torch.nn.Linear). */
static vs_tensor *linear_forward(vs_module *m, vs_tensor *x)
{
    vs_tensor *w = m->params[0], *b = vs_module_param(m, "bias");
    if (!need_ndim(m, x, 1, VS_MAX_DIMS, "[..., in]")) return NULL;
    if (x->ndim == 2) return vs_linear(x, w, b);
    int64_t in = x->shape[x->ndim - 1];
    vs_tensor *y = vs_linear(vs_reshape(x, VS_SHAPE(-1, in)), w, b);
    if (!y) return NULL;
    int64_t shape[VS_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[x->ndim - 1] = w->shape[0];
    return vs_reshape(y, x->ndim, shape);
}

/* running = (1 - momentum) running + momentum * (mean over the batch of each example's statistic),
 * the variance unbiased over h*w: what PyTorch's instance norm with track_running_stats records.
 * mean and var [n c] are the planes' statistics the normalisation itself used (vs_instance_norm_stats),
 * so they are not computed twice; the sums over examples run in example order. */
static void instance_norm_track(vs_module *m, const vs_tensor *x, const float *mean, const float *var)
{
    vs_tensor *rm = vs_module_param(m, "running_mean"), *rv = vs_module_param(m, "running_var");
    int64_t n = x->shape[0], c = x->shape[1], hw = x->shape[2] * x->shape[3];
    double mom = m->spec.momentum, unbias = hw > 1 ? (double)hw / (double)(hw - 1) : 1.0;
    for (int64_t j = 0; j < c; j++) {
        double sm = 0, sv = 0;
        for (int64_t i = 0; i < n; i++) {
            sm += mean[i * c + j];
            sv += var[i * c + j] * unbias;
        }
        rm->data[j] = (float)((1 - mom) * rm->data[j] + mom * sm / (double)n);
        rv->data[j] = (float)((1 - mom) * rv->data[j] + mom * sv / (double)n);
    }
}

/* Instance norm: each example's own statistics, except in evaluation mode with running statistics
 * (then the running ones, as batch norm in evaluation). */
static vs_tensor *instance_norm_forward(vs_module *m, vs_tensor *x)
{
    vs_tensor *w = vs_module_param(m, "weight"), *b = vs_module_param(m, "bias");
    float eps = (float)m->spec.eps;
    if (!need_ndim(m, x, 4, 4, "[n,c,h,w]")) return NULL;
    if (!m->spec.track_running_stats) return vs_instance_norm(x, w, b, eps);
    vs_tensor *rm = vs_module_param(m, "running_mean"), *rv = vs_module_param(m, "running_var");
    if (!m->training) return vs_batch_norm(x, w, b, rm, rv, false, (float)m->spec.momentum, eps);
    int64_t planes = x->shape[0] * x->shape[1];
    float *stats = vs_calloc((size_t)(planes ? 2 * planes : 1), sizeof *stats); /* mean [n c], then var [n c] */
    if (!stats) {
        vs_set_last_error(VS_ERR_NOMEM, "instance_norm: out of memory");
        return NULL;
    }
    vs_tensor *y = vs_instance_norm_stats(x, w, b, eps, stats, stats + planes);
    if (y) instance_norm_track(m, x, stats, stats + planes);
    free(stats);
    return y;
}

vs_conv_opts vs_module_conv_opts(const vs_module *m)
{
    const vs_layer_spec *s = &m->spec;
    vs_conv_opts o = {0};
    o.stride[0] = o.stride[1] = (int)s->stride;
    o.padding[0] = o.padding[1] = (int)s->padding;
    o.dilation[0] = o.dilation[1] = (int)s->dilation;
    o.groups = (int)s->groups;
    if (m->kind == VS_MODULE_CONV_TRANSPOSE2D) o.output_padding[0] = o.output_padding[1] = (int)s->output_padding;
    return o;
}

static vs_tensor *layer_forward(vs_module *m, vs_tensor *x, const vs_forward_ctx *ctx)
{
    const vs_layer_spec *s = &m->spec;
    vs_conv_opts o;
    switch (m->kind) {
    case VS_MODULE_SEQUENTIAL:
        return vs_sequential_forward_range(m, x, ctx, 0, m->n_children, NULL);
    case VS_MODULE_LINEAR:
        return linear_forward(m, x);
    case VS_MODULE_CONV2D:
        o = vs_module_conv_opts(m);
        return vs_conv2d(x, m->params[0], vs_module_param(m, "bias"), &o);
    case VS_MODULE_CONV_TRANSPOSE2D:
        o = vs_module_conv_opts(m);
        return vs_conv_transpose2d(x, m->params[0], vs_module_param(m, "bias"), &o);
    case VS_MODULE_MAX_POOL2D:
    case VS_MODULE_AVG_POOL2D: {
        const vs_pool_opts po = {(int)s->kernel, (int)s->stride, (int)s->padding, s->dilation > 1 ? (int)s->dilation : 1,
                                 s->ceil_mode == 1}; /* avg_pool2d has no dilation field */
        return m->kind == VS_MODULE_MAX_POOL2D ? vs_max_pool2d_ex(x, &po) : vs_avg_pool2d_ex(x, &po);
    }
    case VS_MODULE_GLOBAL_AVG_POOL:
        return need_ndim(m, x, 4, 4, "[n,c,h,w]") ? vs_mean(x, VS_AXIS(2) | VS_AXIS(3), false) : NULL;
    case VS_MODULE_BATCH_NORM1D:
    case VS_MODULE_BATCH_NORM2D:
        if (m->kind == VS_MODULE_BATCH_NORM1D ? !need_ndim(m, x, 2, 3, "[n,c] or [n,c,l]") : !need_ndim(m, x, 4, 4, "[n,c,h,w]"))
            return NULL;
        return vs_batch_norm(x, vs_module_param(m, "weight"), vs_module_param(m, "bias"), vs_module_param(m, "running_mean"),
                             vs_module_param(m, "running_var"), m->training, (float)s->momentum, (float)s->eps);
    case VS_MODULE_INSTANCE_NORM2D:
        return instance_norm_forward(m, x);
    case VS_MODULE_LAYER_NORM:
        return vs_layer_norm(x, 1, vs_module_param(m, "weight"), vs_module_param(m, "bias"), (float)s->eps);
    case VS_MODULE_DROPOUT:
        if (m->training && s->p > 0 && !ctx->rng) {
            vs_set_last_error(VS_ERR_ARG, "dropout: training mode needs a random generator in the forward context");
            return NULL;
        }
        return vs_dropout(x, (float)s->p, m->training, ctx->rng);
    case VS_MODULE_FLATTEN:
        return need_ndim(m, x, 1, VS_MAX_DIMS, "[n, ...]") ? vs_flatten(x) : NULL;
    case VS_MODULE_RELU:
        return vs_relu(x);
    case VS_MODULE_LEAKY_RELU:
        return vs_leaky_relu(x, (float)s->slope);
    case VS_MODULE_ELU:
        return vs_elu(x, (float)s->alpha);
    case VS_MODULE_TANH:
        return vs_tanh(x);
    case VS_MODULE_SIGMOID:
        return vs_sigmoid(x);
    case VS_MODULE_SOFTPLUS:
        return vs_softplus(x);
    case VS_MODULE_RESIDUAL:
        return vs_add(x, vs_module_forward(m->children[0], x, ctx));
    case VS_MODULE_GCN_CONV:
    case VS_MODULE_GIN_CONV:
    case VS_MODULE_MEAN_READOUT:
    case VS_MODULE_SUM_READOUT:
    case VS_MODULE_MAX_READOUT:
        return vs_gnn_forward(m, x, ctx);
    case VS_MODULE_SIAMESE:
        return vs_module_forward(m->children[0], x, ctx);
    case VS_MODULE_COMPOSITE:
        return vs_composite_forward_first(m, x, ctx);
    default:
        vs_set_last_error(VS_ERR_STATE, "module kind %d has no forward", (int)m->kind);
        return NULL;
    }
}

vs_tensor *vs_module_forward(vs_module *m, vs_tensor *x, const vs_forward_ctx *ctx)
{
    if (!m || !x) return NULL;
    vs_scope_begin();
    return vs_scope_return(layer_forward(m, x, ctx ? ctx : &no_ctx));
}

/* Layer outputs are left to the caller (they are the caller's when it asked for them in outs). */
static vs_tensor *range_forward(vs_module *m, vs_tensor *x, const vs_forward_ctx *ctx, int64_t begin, int64_t end,
                                vs_tensor **outs)
{
    if (m->kind != VS_MODULE_SEQUENTIAL) {
        vs_set_last_error(VS_ERR_ARG, "forward range: %s is not a sequential", vs_module_kind_name(m->kind));
        return NULL;
    }
    if (begin < 0 || end > m->n_children || begin > end) {
        vs_set_last_error(VS_ERR_ARG, "forward range: layers [%lld, %lld) outside [0, %lld)", (long long)begin,
                          (long long)end, (long long)m->n_children);
        return NULL;
    }
    for (int64_t i = begin; i < end; i++) {
        vs_tensor *y = vs_module_forward(m->children[i], x, ctx);
        if (!y) {
            /* name the failing layer; nested sequentials add their own index in front */
            vs_error e = *vs_last_error();
            vs_set_last_error(e.code, "layer %lld (%s): %s", (long long)i, vs_module_kind_name(m->children[i]->kind), e.msg);
            return NULL;
        }
        if (outs) outs[i - begin] = y;
        x = y;
    }
    return x;
}

vs_tensor *vs_sequential_forward_range(vs_module *m, vs_tensor *x, const vs_forward_ctx *ctx, int64_t begin,
                                       int64_t end, vs_tensor **outs)
{
    if (!m || !x) return NULL;
    if (outs) return range_forward(m, x, ctx, begin, end, outs);
    vs_scope_begin();
    return vs_scope_return(range_forward(m, x, ctx, begin, end, NULL));
}

static vs_tensor *siamese_forward(vs_module *m, vs_tensor *a, const vs_forward_ctx *ctx_a, vs_tensor *b,
                                  const vs_forward_ctx *ctx_b)
{
    if (m->kind != VS_MODULE_SIAMESE) {
        vs_set_last_error(VS_ERR_ARG, "siamese forward: the model is a %s", vs_module_kind_name(m->kind));
        return NULL;
    }
    vs_tensor *ea = vs_module_forward(m->children[0], a, ctx_a);
    if (!ea) return NULL;
    vs_tensor *eb = vs_module_forward(m->children[0], b, ctx_b ? ctx_b : ctx_a);
    if (!eb) return NULL;
    if (ea->ndim != 2 || !vs_same_shape(ea, eb)) {
        char sa[96], sb[96];
        vs_shape_str(ea, sa, sizeof sa);
        vs_shape_str(eb, sb, sizeof sb);
        vs_set_last_error(VS_ERR_SHAPE, "siamese: embeddings %s and %s must both be [n, dim]", sa, sb);
        return NULL;
    }
    /* PyTorch's F.cosine_similarity default eps */
    return vs_cosine_similarity(ea, eb, 1, 1e-8f);
}

vs_tensor *vs_siamese_forward(vs_module *m, vs_tensor *a, const vs_forward_ctx *ctx_a, vs_tensor *b,
                              const vs_forward_ctx *ctx_b)
{
    if (!m || !a || !b) return NULL;
    vs_scope_begin();
    return vs_scope_return(siamese_forward(m, a, ctx_a, b, ctx_b));
}

bool vs_module_compares_pairs(const vs_module *m)
{
    if (!m) return false;
    if (m->kind == VS_MODULE_SIAMESE) return true;
    /* a composite that names a training task of its own (a generator G(x, c), M2's (x, y)) is that task's */
    const char *task = vs_composite_task(m);
    return vs_composite_n_inputs(m) == 2 && vs_composite_n_outputs(m) >= 1 && (!task || strcmp(task, "siamese") == 0);
}

vs_tensor *vs_pair_forward(vs_module *m, vs_tensor *a, vs_tensor *b, const vs_forward_ctx *ctx)
{
    if (!m || !a || !b) return NULL;
    if (m->kind == VS_MODULE_SIAMESE) return vs_siamese_forward(m, a, ctx, b, NULL);
    if (!vs_module_compares_pairs(m)) {
        vs_set_last_error(VS_ERR_ARG, "a %s with %lld inputs does not compare pairs (a Siamese model or a composite with two inputs does)",
                          vs_module_kind_name(m->kind), (long long)vs_composite_n_inputs(m));
        return NULL;
    }
    vs_named_tensor items[2] = {{.name = (char *)vs_composite_input_name(m, 0), .tensor = a},
                                {.name = (char *)vs_composite_input_name(m, 1), .tensor = b}};
    vs_named_tensors given = {.n = 2, .cap = 2, .items = items};
    const char *want = vs_composite_output_name(m, 0);
    vs_tensor *y = NULL;
    return vs_composite_eval(m, &given, 1, &want, &y, ctx) == VS_OK ? y : NULL;
}
