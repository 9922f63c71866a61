/* spec_shape.c - propagating the shape of one example through layer specs, so a model.json whose
 * layers do not fit together is rejected with the layer and field at fault before any weight is read.
 * Unknown dimensions (-1) are allowed: without an "input" shape consecutive layers are still checked. */
#include "nn/internal.h"

#include <stdio.h>

static void shape_str(const vs_spec_shape *sh, char *buf, size_t n)
{
    if (sh->ndim < 0) {
        snprintf(buf, n, "[...]");
        return;
    }
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < sh->ndim && k < n; i++) {
        if (sh->d[i] < 0)
            k += (size_t)snprintf(buf + k, n - k, "%s?", i ? "," : "");
        else
            k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "," : "", (long long)sh->d[i]);
    }
    if (k < n) snprintf(buf + k, n - k, "]");
}

static vs_status mismatch(const char *field, int64_t v, const vs_spec_shape *sh, const char *what,
                          int64_t got, vs_error *err)
{
    char b[128];
    shape_str(sh, b, sizeof b);
    return vs_error_set(err, VS_ERR_SHAPE, "\"%s\" is %lld but its input %s has %lld %s", field, (long long)v, b, (long long)got, what);
}

/* Sides and feature counts above these are certainly mistakes (and would overflow products). */
#define MAX_SIDE ((int64_t)1 << 31)
#define MAX_FEATURES ((int64_t)1 << 40)

/* Output side of a convolution or pooling window over n inputs (-1 when n is unknown). */
static vs_status window_out(const vs_layer_spec *s, int64_t n, int64_t *out, vs_error *err)
{
    if (n < 0) {
        *out = -1;
        return VS_OK;
    }
    int64_t o;
    /* dilation is absent for avg_pool2d, ceil_mode for the convolutions */
    int64_t span = (s->dilation > 1 ? s->dilation : 1) * (s->kernel - 1) + 1, ceil = s->ceil_mode == 1;
    if (s->op == VS_MODULE_CONV_TRANSPOSE2D)
        o = (n - 1) * s->stride - 2 * s->padding + span + s->output_padding;
    else
        o = n + 2 * s->padding >= span ? (n + 2 * s->padding - span + (ceil ? s->stride - 1 : 0)) / s->stride + 1 : 0;
    if (ceil && o > 0 && (o - 1) * s->stride >= n + s->padding) o--; /* PyTorch: no window starts in the padding */
    if (o > MAX_SIDE)
        return vs_error_set(err, VS_ERR_SHAPE, "output side %lld is too large", (long long)o);
    if (o < 1)
        return vs_error_set(err, VS_ERR_SHAPE, "input side %lld is too small for kernel %lld with padding %lld",
                            (long long)n, (long long)s->kernel, (long long)s->padding);
    *out = o;
    return VS_OK;
}

/* Make sh a [c,h,w] shape (learning it when unknown); c_field/c: the channel count the layer expects. */
static vs_status need_chw(const vs_layer_spec *s, vs_spec_shape *sh, const char *c_field, int64_t c, vs_error *err)
{
    if (sh->ndim < 0) *sh = (vs_spec_shape){.ndim = 3, .d = {c_field ? c : -1, -1, -1}};
    if (sh->ndim != 3) {
        char b[128];
        shape_str(sh, b, sizeof b);
        return vs_error_set(err, VS_ERR_SHAPE, "expects [channels,height,width] per example, its input is %s",
                            b);
    }
    if (c_field && sh->d[0] >= 0 && sh->d[0] != c) return mismatch(c_field, c, sh, "channels", sh->d[0], err);
    return VS_OK;
}

/* Make sh a shape whose last dim is n (learning [n] when unknown). */
static vs_status need_last(const vs_layer_spec *s, vs_spec_shape *sh, const char *field, int64_t n, vs_error *err)
{
    if (sh->ndim < 0) *sh = (vs_spec_shape){.ndim = 1, .d = {n}};
    if (sh->ndim == 0)
        return vs_error_set(err, VS_ERR_SHAPE, "expects at least one feature dimension");
    int64_t last = sh->d[sh->ndim - 1];
    if (last >= 0 && last != n) return mismatch(field, n, sh, "features", last, err);
    return VS_OK;
}

vs_status vs_spec_shape_step(const vs_layer_spec *s, vs_spec_shape *sh, vs_error *err)
{
    vs_status st = VS_OK;
    switch (s->op) {
    case VS_MODULE_LINEAR:
        st = need_last(s, sh, "in", s->in, err);
        if (!st) sh->d[sh->ndim - 1] = s->out;
        return st;
    case VS_MODULE_GCN_CONV:
    case VS_MODULE_GIN_CONV:
        st = need_last(s, sh, "in", s->in, err);
        if (!st && sh->ndim != 1)
            return vs_error_set(err, VS_ERR_SHAPE, "node features must be one vector per node");
        if (!st) sh->d[0] = s->out;
        return st;
    case VS_MODULE_MEAN_READOUT:
    case VS_MODULE_SUM_READOUT:
    case VS_MODULE_MAX_READOUT:
        if (sh->ndim > 1)
            return vs_error_set(err, VS_ERR_SHAPE, "node features must be one vector per node");
        return VS_OK;
    case VS_MODULE_CONV2D:
    case VS_MODULE_CONV_TRANSPOSE2D:
        st = need_chw(s, sh, "in", s->in, err);
        if (!st) st = window_out(s, sh->d[1], &sh->d[1], err);
        if (!st) st = window_out(s, sh->d[2], &sh->d[2], err);
        if (!st) sh->d[0] = s->out;
        return st;
    case VS_MODULE_MAX_POOL2D:
    case VS_MODULE_AVG_POOL2D:
        st = need_chw(s, sh, NULL, 0, err);
        if (!st) st = window_out(s, sh->d[1], &sh->d[1], err);
        if (!st) st = window_out(s, sh->d[2], &sh->d[2], err);
        return st;
    case VS_MODULE_GLOBAL_AVG_POOL:
        st = need_chw(s, sh, NULL, 0, err);
        if (!st) sh->ndim = 1;
        return st;
    case VS_MODULE_BATCH_NORM2D:
    case VS_MODULE_INSTANCE_NORM2D:
        return need_chw(s, sh, "features", s->features, err);
    case VS_MODULE_BATCH_NORM1D:
        if (sh->ndim < 0) *sh = (vs_spec_shape){.ndim = 1, .d = {s->features}};
        if (sh->ndim != 1 && sh->ndim != 2) {
            char b[128];
            shape_str(sh, b, sizeof b);
            return vs_error_set(err, VS_ERR_SHAPE, "expects [features] or [features,length] per example, its input is %s", b);
        }
        if (sh->d[0] >= 0 && sh->d[0] != s->features) return mismatch("features", s->features, sh, "channels", sh->d[0], err);
        return VS_OK;
    case VS_MODULE_LAYER_NORM:
        return sh->ndim < 0 ? VS_OK : need_last(s, sh, "features", s->features, err);
    case VS_MODULE_FLATTEN: {
        if (sh->ndim < 0) return VS_OK;
        int64_t n = 1;
        for (int i = 0; i < sh->ndim; i++) {
            if (sh->d[i] < 0 || n < 0) {
                n = -1;
                continue;
            }
            if (sh->d[i] > 0 && n > MAX_FEATURES / sh->d[i]) return vs_error_set(err, VS_ERR_SHAPE, "more than 2^40 features");
            n *= sh->d[i];
        }
        *sh = (vs_spec_shape){.ndim = 1, .d = {n}};
        return VS_OK;
    }
    case VS_MODULE_DROPOUT:
    case VS_MODULE_RELU:
    case VS_MODULE_LEAKY_RELU:
    case VS_MODULE_ELU:
    case VS_MODULE_TANH:
    case VS_MODULE_SIGMOID:
    case VS_MODULE_SOFTPLUS:
        return VS_OK;
    default:
        return vs_error_set(err, VS_ERR_STATE, "no shape rule");
    }
}
