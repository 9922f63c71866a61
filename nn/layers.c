/* layers.c - what each layer owns (parameters, buffers, children, under PyTorch's names and
 * layouts) and the typed constructors, which all go through a spec so there is one path from
 * arguments to a module.  Initial values are drawn in init.c; forward passes live in forward.c. */
#include "nn/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GIN's MLP: Linear(in, hidden), ReLU, Linear(hidden, out) - PyTorch Geometric's usual choice. */
static vs_module *gin_mlp(const vs_layer_spec *s, vs_error *err)
{
    vs_layer_spec l1, act, l2;
    vs_layer_spec_init(&l1, VS_MODULE_LINEAR);
    l1.in = s->in, l1.out = s->hidden, l1.bias = 1;
    vs_layer_spec_init(&act, VS_MODULE_RELU);
    vs_layer_spec_init(&l2, VS_MODULE_LINEAR);
    l2.in = s->hidden, l2.out = s->out, l2.bias = 1;
    vs_module *seq = vs_sequential_new();
    if (!seq) return NULL;
    const vs_layer_spec *parts[3] = {&l1, &act, &l2};
    for (int i = 0; i < 3; i++)
        if (vs_sequential_add(seq, vs_layer_alloc(parts[i], err)) != VS_OK) {
            vs_module_free(seq);
            return NULL;
        }
    return seq;
}

vs_module *vs_layer_alloc(const vs_layer_spec *s, vs_error *err)
{
    vs_module *m = vs_module_alloc(s);
    if (!m) {
        vs_error_set(err, VS_ERR_NOMEM, "%s", vs_last_error()->msg);
        return NULL;
    }
    bool ok = true;
    const int64_t k = s->kernel;
    switch (s->op) {
    case VS_MODULE_LINEAR:
        ok = vs_module_add_param(m, "weight", VS_SHAPE(s->out, s->in)) != NULL;
        if (ok && s->bias) ok = vs_module_add_param(m, "bias", VS_SHAPE(s->out)) != NULL;
        break;
    case VS_MODULE_CONV2D:
        ok = vs_module_add_param(m, "weight", VS_SHAPE(s->out, s->in / s->groups, k, k)) != NULL;
        if (ok && s->bias) ok = vs_module_add_param(m, "bias", VS_SHAPE(s->out)) != NULL;
        break;
    case VS_MODULE_CONV_TRANSPOSE2D:
        ok = vs_module_add_param(m, "weight", VS_SHAPE(s->in, s->out / s->groups, k, k)) != NULL;
        if (ok && s->bias) ok = vs_module_add_param(m, "bias", VS_SHAPE(s->out)) != NULL;
        break;
    case VS_MODULE_BATCH_NORM1D:
    case VS_MODULE_BATCH_NORM2D:
    case VS_MODULE_INSTANCE_NORM2D:
    case VS_MODULE_LAYER_NORM: {
        bool inorm = s->op == VS_MODULE_INSTANCE_NORM2D;
        if (!inorm || s->affine)
            ok = vs_module_add_param(m, "weight", VS_SHAPE(s->features)) != NULL &&
                 vs_module_add_param(m, "bias", VS_SHAPE(s->features)) != NULL;
        if (ok && (s->op == VS_MODULE_BATCH_NORM1D || s->op == VS_MODULE_BATCH_NORM2D || (inorm && s->track_running_stats)))
            ok = vs_module_add_buffer(m, "running_mean", VS_SHAPE(s->features)) != NULL &&
                 vs_module_add_buffer(m, "running_var", VS_SHAPE(s->features)) != NULL;
        break;
    }
    case VS_MODULE_GCN_CONV: {
        /* PyTorch Geometric: own "bias", then child "lin" (no bias) */
        ok = vs_module_add_param(m, "bias", VS_SHAPE(s->out)) != NULL;
        vs_layer_spec lin;
        vs_layer_spec_init(&lin, VS_MODULE_LINEAR);
        lin.in = s->in, lin.out = s->out, lin.bias = 0;
        ok = ok && vs_module_add_child(m, "lin", vs_layer_alloc(&lin, err)) == VS_OK;
        break;
    }
    case VS_MODULE_GIN_CONV:
        ok = (s->train_eps ? vs_module_add_param(m, "eps", VS_SHAPE(1)) : vs_module_add_buffer(m, "eps", VS_SHAPE(1))) != NULL;
        ok = ok && vs_module_add_child(m, "nn", gin_mlp(s, err)) == VS_OK;
        break;
    default:
        break;
    }
    if (!ok) {
        if (err && err->code == VS_OK) vs_error_set(err, vs_last_error()->code, "%s", vs_last_error()->msg);
        vs_module_free(m);
        return NULL;
    }
    return m;
}

/* ---- typed constructors --------------------------------------------------------------------------- */

/* The double of the shortest decimal that reads back as f (0.1f -> 0.1), so a spec written to
 * model.json shows the number the caller typed.  NaN (which a spec reads as "absent") becomes
 * infinity, which every range check rejects. */
static double short_decimal(float f)
{
    if (isnan(f)) return INFINITY;
    char buf[32];
    for (int p = 1; p <= 9; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, (double)f);
        double d = strtod(buf, NULL);
        if ((float)d == f) return d;
    }
    return f;
}

static vs_module *from_spec(const vs_layer_spec *s, vs_rng *r)
{
    vs_error err;
    vs_error_clear(&err);
    vs_module *m = vs_layer_new(s, r, &err);
    if (!m) vs_set_last_error(err.code, "%s", err.msg);
    return m;
}

vs_module *vs_sequential_new(void)
{
    vs_layer_spec s;
    vs_layer_spec_init(&s, VS_MODULE_SEQUENTIAL);
    return vs_module_alloc(&s);
}

vs_status vs_sequential_add(vs_module *seq, vs_module *layer)
{
    if (!layer) {
        vs_error e = *vs_last_error();
        return vs_set_last_error(VS_ERR_ARG, "sequential: layer %lld is missing (the last error: %s)", (long long)seq->n_children,
                                 e.msg);
    }
    char name[24];
    snprintf(name, sizeof name, "%lld", (long long)seq->n_children);
    return vs_module_add_child(seq, name, layer);
}

vs_module *vs_linear_new(int64_t in, int64_t out, bool bias, vs_rng *r)
{
    vs_layer_spec s;
    vs_layer_spec_init(&s, VS_MODULE_LINEAR);
    s.in = in, s.out = out, s.bias = bias;
    return from_spec(&s, r);
}

vs_module *vs_conv2d_new(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding, bool bias, vs_rng *r)
{
    vs_layer_spec s;
    vs_layer_spec_init(&s, VS_MODULE_CONV2D);
    s.in = in, s.out = out, s.kernel = kernel, s.stride = stride, s.padding = padding, s.bias = bias;
    return from_spec(&s, r);
}

vs_module *vs_conv_transpose2d_new(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding,
                                   int64_t output_padding, bool bias, vs_rng *r)
{
    vs_layer_spec s;
    vs_layer_spec_init(&s, VS_MODULE_CONV_TRANSPOSE2D);
    s.in = in, s.out = out, s.kernel = kernel, s.stride = stride, s.padding = padding;
    s.output_padding = output_padding, s.bias = bias;
    return from_spec(&s, r);
}

static vs_module *pool_new(vs_module_kind kind, int64_t kernel, int64_t stride, int64_t padding)
{
    vs_layer_spec s;
    vs_layer_spec_init(&s, kind);
    s.kernel = kernel, s.padding = padding;
    if (stride > 0) s.stride = stride; /* else the default, the kernel */
    return from_spec(&s, NULL);
}

vs_module *vs_max_pool2d_new(int64_t kernel, int64_t stride, int64_t padding)
{
    return pool_new(VS_MODULE_MAX_POOL2D, kernel, stride, padding);
}

vs_module *vs_avg_pool2d_new(int64_t kernel, int64_t stride, int64_t padding)
{
    return pool_new(VS_MODULE_AVG_POOL2D, kernel, stride, padding);
}

static vs_module *norm_new(vs_module_kind kind, int64_t features, float eps, float momentum)
{
    vs_layer_spec s;
    vs_layer_spec_init(&s, kind);
    s.features = features, s.eps = short_decimal(eps);
    if (kind == VS_MODULE_BATCH_NORM1D || kind == VS_MODULE_BATCH_NORM2D) s.momentum = short_decimal(momentum);
    return from_spec(&s, NULL);
}

vs_module *vs_batch_norm1d_new(int64_t features, float eps, float momentum)
{
    return norm_new(VS_MODULE_BATCH_NORM1D, features, eps, momentum);
}

vs_module *vs_batch_norm2d_new(int64_t features, float eps, float momentum)
{
    return norm_new(VS_MODULE_BATCH_NORM2D, features, eps, momentum);
}

vs_module *vs_instance_norm2d_new(int64_t features, float eps) { return norm_new(VS_MODULE_INSTANCE_NORM2D, features, eps, 0); }
vs_module *vs_layer_norm_new(int64_t features, float eps) { return norm_new(VS_MODULE_LAYER_NORM, features, eps, 0); }

vs_module *vs_dropout_new(float p)
{
    vs_layer_spec s;
    vs_layer_spec_init(&s, VS_MODULE_DROPOUT);
    s.p = short_decimal(p);
    return from_spec(&s, NULL);
}

static vs_module *plain_new(vs_module_kind kind)
{
    vs_layer_spec s;
    vs_layer_spec_init(&s, kind);
    return from_spec(&s, NULL);
}

vs_module *vs_flatten_new(void) { return plain_new(VS_MODULE_FLATTEN); }
vs_module *vs_global_avg_pool_new(void) { return plain_new(VS_MODULE_GLOBAL_AVG_POOL); }

vs_module *vs_activation_new(vs_module_kind kind, float param)
{
    vs_layer_spec s;
    vs_layer_spec_init(&s, kind);
    switch (kind) {
    case VS_MODULE_LEAKY_RELU:
        s.slope = short_decimal(param);
        break;
    case VS_MODULE_ELU:
        s.alpha = short_decimal(param);
        break;
    case VS_MODULE_RELU: case VS_MODULE_TANH: case VS_MODULE_SIGMOID: case VS_MODULE_SOFTPLUS:
        break;
    default:
        vs_set_last_error(VS_ERR_ARG, "vs_activation_new: %s is not an activation", vs_module_kind_name(kind));
        return NULL;
    }
    return from_spec(&s, NULL);
}

vs_module *vs_readout_new(vs_module_kind kind)
{
    if (kind != VS_MODULE_MEAN_READOUT && kind != VS_MODULE_SUM_READOUT && kind != VS_MODULE_MAX_READOUT) {
        vs_set_last_error(VS_ERR_ARG, "vs_readout_new: %s is not a readout", vs_module_kind_name(kind));
        return NULL;
    }
    return plain_new(kind);
}

vs_module *vs_gcn_conv_new(int64_t in, int64_t out, vs_rng *r)
{
    vs_layer_spec s;
    vs_layer_spec_init(&s, VS_MODULE_GCN_CONV);
    s.in = in, s.out = out;
    return from_spec(&s, r);
}

vs_module *vs_gin_conv_new(int64_t in, int64_t hidden, int64_t out, float eps, bool train_eps, vs_rng *r)
{
    vs_layer_spec s;
    vs_layer_spec_init(&s, VS_MODULE_GIN_CONV);
    s.in = in, s.hidden = hidden, s.out = out, s.eps = short_decimal(eps), s.train_eps = train_eps;
    return from_spec(&s, r);
}

static vs_module *wrap(vs_module_kind kind, const char *child_name, vs_module *child)
{
    if (!child) {
        vs_set_last_error(VS_ERR_ARG, "%s: missing %s", vs_module_kind_name(kind), child_name);
        return NULL;
    }
    vs_layer_spec s;
    vs_layer_spec_init(&s, kind);
    vs_module *m = vs_module_alloc(&s);
    if (!m) {
        vs_module_free(child);
        return NULL;
    }
    m->training = child->training;
    if (vs_module_add_child(m, child_name, child) != VS_OK) {
        vs_module_free(m);
        return NULL;
    }
    return m;
}

vs_module *vs_residual_new(vs_module *block) { return vs_residual_named_new(block, NULL); }

vs_module *vs_residual_named_new(vs_module *block, const char *name)
{
    if (name && !vs_is_identifier(name)) {
        vs_module_free(block);
        vs_set_last_error(VS_ERR_ARG, "residual: block name \"%s\" is not a name of letters, digits and _", name);
        return NULL;
    }
    vs_module *m = wrap(VS_MODULE_RESIDUAL, name ? name : "block", block);
    if (m && name && strcmp(name, "block") != 0) snprintf(m->spec.name, sizeof m->spec.name, "%s", name);
    return m;
}

vs_module *vs_siamese_new(vs_module *encoder, vs_similarity sim)
{
    if (sim != VS_SIMILARITY_COSINE) {
        vs_module_free(encoder);
        vs_set_last_error(VS_ERR_ARG, "siamese: unknown similarity %d", (int)sim);
        return NULL;
    }
    vs_module *m = wrap(VS_MODULE_SIAMESE, "encoder", encoder);
    if (m) m->similarity = sim;
    return m;
}
