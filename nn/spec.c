/* spec.c - layer specs: op names, the fields each op takes (by model.json name), their defaults and
 * range checks.  Shape propagation lives in spec_shape.c, building modules from specs in build.c. */
#include "nn/internal.h"
#include "versus/json.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[VS_MODULE_KIND_COUNT] = {
    [VS_MODULE_SEQUENTIAL] = "sequential",
    [VS_MODULE_LINEAR] = "linear",
    [VS_MODULE_CONV2D] = "conv2d",
    [VS_MODULE_CONV_TRANSPOSE2D] = "conv_transpose2d",
    [VS_MODULE_MAX_POOL2D] = "max_pool2d",
    [VS_MODULE_AVG_POOL2D] = "avg_pool2d",
    [VS_MODULE_GLOBAL_AVG_POOL] = "global_avg_pool",
    [VS_MODULE_BATCH_NORM1D] = "batch_norm1d",
    [VS_MODULE_BATCH_NORM2D] = "batch_norm2d",
    [VS_MODULE_INSTANCE_NORM2D] = "instance_norm2d",
    [VS_MODULE_LAYER_NORM] = "layer_norm",
    [VS_MODULE_DROPOUT] = "dropout",
    [VS_MODULE_FLATTEN] = "flatten",
    [VS_MODULE_RELU] = "relu",
    [VS_MODULE_LEAKY_RELU] = "leaky_relu",
    [VS_MODULE_ELU] = "elu",
    [VS_MODULE_TANH] = "tanh",
    [VS_MODULE_SIGMOID] = "sigmoid",
    [VS_MODULE_SOFTPLUS] = "softplus",
    [VS_MODULE_RESIDUAL] = "residual",
    [VS_MODULE_GCN_CONV] = "gcn_conv",
    [VS_MODULE_GIN_CONV] = "gin_conv",
    [VS_MODULE_MEAN_READOUT] = "mean_readout",
    [VS_MODULE_SUM_READOUT] = "sum_readout",
    [VS_MODULE_MAX_READOUT] = "max_readout",
    [VS_MODULE_SIAMESE] = "siamese",
    [VS_MODULE_COMPOSITE] = "composite",
};

const char *vs_module_kind_name(vs_module_kind kind)
{
    return (unsigned)kind < VS_MODULE_KIND_COUNT ? kind_names[kind] : "unknown";
}

bool vs_module_kind_from_name(const char *name, vs_module_kind *kind)
{
    for (int k = 0; k < VS_MODULE_KIND_COUNT; k++)
        if (strcmp(name, kind_names[k]) == 0) {
            *kind = (vs_module_kind)k;
            return true;
        }
    return false;
}

const char *vs_similarity_name(vs_similarity s) { return s == VS_SIMILARITY_COSINE ? "cosine" : "unknown"; }

bool vs_similarity_from_name(const char *name, vs_similarity *s)
{
    if (strcmp(name, "cosine") != 0) return false;
    *s = VS_SIMILARITY_COSINE;
    return true;
}

bool vs_is_identifier(const char *s)
{
    if (!s || !*s || isdigit((unsigned char)*s) || strlen(s) >= VS_SPEC_NAME_MAX) return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return false;
    return true;
}

/* ---- fields ------------------------------------------------------------------------------------- */

enum {
    F_IN, F_OUT, F_HIDDEN, F_FEATURES, F_KERNEL, F_STRIDE, F_PADDING, F_OUTPUT_PADDING, F_BIAS, F_TRAIN_EPS,
    F_P, F_SLOPE, F_ALPHA, F_EPS, F_MOMENTUM, F_AFFINE, F_TRACK, F_DILATION, F_CEIL_MODE, F_GROUPS
};
#define B(f) (1u << (f))

static const struct field {
    const char *name;
    bool is_int;
    size_t offset;
} fields[VS_SPEC_N_FIELDS] = {
    [F_IN] = {"in", true, offsetof(vs_layer_spec, in)},
    [F_OUT] = {"out", true, offsetof(vs_layer_spec, out)},
    [F_HIDDEN] = {"hidden", true, offsetof(vs_layer_spec, hidden)},
    [F_FEATURES] = {"features", true, offsetof(vs_layer_spec, features)},
    [F_KERNEL] = {"kernel", true, offsetof(vs_layer_spec, kernel)},
    [F_STRIDE] = {"stride", true, offsetof(vs_layer_spec, stride)},
    [F_PADDING] = {"padding", true, offsetof(vs_layer_spec, padding)},
    [F_OUTPUT_PADDING] = {"output_padding", true, offsetof(vs_layer_spec, output_padding)},
    [F_BIAS] = {"bias", true, offsetof(vs_layer_spec, bias)},
    [F_TRAIN_EPS] = {"train_eps", true, offsetof(vs_layer_spec, train_eps)},
    [F_P] = {"p", false, offsetof(vs_layer_spec, p)},
    [F_SLOPE] = {"slope", false, offsetof(vs_layer_spec, slope)},
    [F_ALPHA] = {"alpha", false, offsetof(vs_layer_spec, alpha)},
    [F_EPS] = {"eps", false, offsetof(vs_layer_spec, eps)},
    [F_MOMENTUM] = {"momentum", false, offsetof(vs_layer_spec, momentum)},
    [F_AFFINE] = {"affine", true, offsetof(vs_layer_spec, affine)},
    [F_TRACK] = {"track_running_stats", true, offsetof(vs_layer_spec, track_running_stats)},
    [F_DILATION] = {"dilation", true, offsetof(vs_layer_spec, dilation)},
    [F_CEIL_MODE] = {"ceil_mode", true, offsetof(vs_layer_spec, ceil_mode)},
    [F_GROUPS] = {"groups", true, offsetof(vs_layer_spec, groups)},
};

/* Which fields each op takes and which it requires. */
static const struct op_fields {
    uint32_t allowed, required;
} op_fields[VS_MODULE_KIND_COUNT] = {
    [VS_MODULE_LINEAR] = {B(F_IN) | B(F_OUT) | B(F_BIAS), B(F_IN) | B(F_OUT)},
    [VS_MODULE_CONV2D] = {B(F_IN) | B(F_OUT) | B(F_KERNEL) | B(F_STRIDE) | B(F_PADDING) | B(F_DILATION) | B(F_BIAS) | B(F_GROUPS),
                          B(F_IN) | B(F_OUT) | B(F_KERNEL)},
    [VS_MODULE_CONV_TRANSPOSE2D] = {B(F_IN) | B(F_OUT) | B(F_KERNEL) | B(F_STRIDE) | B(F_PADDING) |
                                        B(F_OUTPUT_PADDING) | B(F_DILATION) | B(F_BIAS) | B(F_GROUPS),
                                    B(F_IN) | B(F_OUT) | B(F_KERNEL)},
    [VS_MODULE_MAX_POOL2D] = {B(F_KERNEL) | B(F_STRIDE) | B(F_PADDING) | B(F_DILATION) | B(F_CEIL_MODE), B(F_KERNEL)},
    [VS_MODULE_AVG_POOL2D] = {B(F_KERNEL) | B(F_STRIDE) | B(F_PADDING) | B(F_CEIL_MODE), B(F_KERNEL)},
    [VS_MODULE_BATCH_NORM1D] = {B(F_FEATURES) | B(F_EPS) | B(F_MOMENTUM), B(F_FEATURES)},
    [VS_MODULE_BATCH_NORM2D] = {B(F_FEATURES) | B(F_EPS) | B(F_MOMENTUM), B(F_FEATURES)},
    [VS_MODULE_INSTANCE_NORM2D] = {B(F_FEATURES) | B(F_EPS) | B(F_MOMENTUM) | B(F_AFFINE) | B(F_TRACK), B(F_FEATURES)},
    [VS_MODULE_LAYER_NORM] = {B(F_FEATURES) | B(F_EPS), B(F_FEATURES)},
    [VS_MODULE_DROPOUT] = {B(F_P), 0},
    [VS_MODULE_LEAKY_RELU] = {B(F_SLOPE), 0},
    [VS_MODULE_ELU] = {B(F_ALPHA), 0},
    [VS_MODULE_GCN_CONV] = {B(F_IN) | B(F_OUT), B(F_IN) | B(F_OUT)},
    [VS_MODULE_GIN_CONV] = {B(F_IN) | B(F_OUT) | B(F_HIDDEN) | B(F_EPS) | B(F_TRAIN_EPS), B(F_IN) | B(F_OUT)},
};

static int64_t *int_field(vs_layer_spec *s, int f) { return (int64_t *)(void *)((char *)s + fields[f].offset); }
static double *num_field(vs_layer_spec *s, int f) { return (double *)(void *)((char *)s + fields[f].offset); }
static int64_t int_value(const vs_layer_spec *s, int f) { return *int_field((vs_layer_spec *)s, f); }
static double num_value(const vs_layer_spec *s, int f) { return *num_field((vs_layer_spec *)s, f); }

static bool present(const vs_layer_spec *s, int f)
{
    return fields[f].is_int ? int_value(s, f) != VS_SPEC_ABSENT : !isnan(num_value(s, f));
}

static int field_index(const char *name)
{
    for (int f = 0; f < VS_SPEC_N_FIELDS; f++)
        if (strcmp(fields[f].name, name) == 0) return f;
    return -1;
}

const char *vs_spec_field_name(int i) { return i >= 0 && i < VS_SPEC_N_FIELDS ? fields[i].name : NULL; }

bool vs_spec_field_is_flag(const char *field)
{
    int f = field_index(field);
    return f == F_BIAS || f == F_TRAIN_EPS || f == F_AFFINE || f == F_TRACK || f == F_CEIL_MODE;
}

bool vs_spec_field_applies(vs_module_kind op, const char *field)
{
    int f = field_index(field);
    return f >= 0 && (unsigned)op < VS_MODULE_KIND_COUNT && (op_fields[op].allowed & B(f));
}

void vs_layer_spec_init(vs_layer_spec *s, vs_module_kind op)
{
    memset(s, 0, sizeof *s);
    s->op = op;
    for (int f = 0; f < VS_SPEC_N_FIELDS; f++) {
        if (fields[f].is_int)
            *int_field(s, f) = VS_SPEC_ABSENT;
        else
            *num_field(s, f) = NAN;
    }
}

void vs_layer_spec_clear(vs_layer_spec *s)
{
    if (!s) return;
    for (int64_t i = 0; i < s->n_block; i++) vs_layer_spec_clear(&s->block[i]);
    free(s->block);
    s->block = NULL;
    s->n_block = 0;
}

void vs_model_spec_clear(vs_model_spec *s)
{
    if (!s) return;
    for (int64_t i = 0; i < s->n_layers; i++) vs_layer_spec_clear(&s->layers[i]);
    free(s->layers);
    vs_json_free(s->composite);
    *s = (vs_model_spec){0};
}

vs_status vs_layer_spec_set(vs_layer_spec *s, const char *field, double value, vs_error *err)
{
    const char *op = vs_module_kind_name(s->op);
    int f = field_index(field);
    if (f < 0) return vs_error_set(err, VS_ERR_FORMAT, "unknown field \"%s\"", field);
    if (!vs_spec_field_applies(s->op, field))
        return vs_error_set(err, VS_ERR_FORMAT, "field \"%s\" does not apply to %s", field, op);
    if (!isfinite(value)) return vs_error_set(err, VS_ERR_FORMAT, "%s: \"%s\" must be a finite number", op, field);
    if (fields[f].is_int) {
        if (value != floor(value) || fabs(value) > 9.0e15)
            return vs_error_set(err, VS_ERR_FORMAT, "%s: \"%s\" must be an integer, got %g", op, field, value);
        *int_field(s, f) = (int64_t)value;
    } else {
        *num_field(s, f) = value;
    }
    return VS_OK;
}

bool vs_layer_spec_get(const vs_layer_spec *s, const char *field, double *value)
{
    int f = field_index(field);
    if (f < 0 || !vs_spec_field_applies(s->op, field) || !present(s, f)) return false;
    *value = fields[f].is_int ? (double)int_value(s, f) : num_value(s, f);
    return true;
}

/* ---- defaults and checks ------------------------------------------------------------------------ */

/* Large enough for any real network, small enough that products of a few of them cannot overflow. */
#define MAX_WIDTH ((int64_t)1 << 24)
#define MAX_KERNEL ((int64_t)1 << 12)

static vs_status check_int(const vs_layer_spec *s, int f, int64_t lo, int64_t hi, vs_error *err)
{
    int64_t v = int_value(s, f);
    if (v < lo || v > hi)
        return vs_error_set(err, VS_ERR_FORMAT, "\"%s\" is %lld, expected an integer in [%lld, %lld]", fields[f].name, (long long)v, (long long)lo, (long long)hi);
    return VS_OK;
}

static vs_status check_num(const vs_layer_spec *s, int f, double lo, double hi, bool hi_open, vs_error *err)
{
    double v = num_value(s, f);
    if (!(v >= lo && (hi_open ? v < hi : v <= hi)))
        return vs_error_set(err, VS_ERR_FORMAT, "\"%s\" is %g, expected a number in [%g, %g%c", fields[f].name, v, lo, hi, hi_open ? ')' : ']');
    return VS_OK;
}

/* Defaults only for the fields the op takes; the others stay absent. */
static void set_default_int(vs_layer_spec *s, int f, int64_t v)
{
    if ((op_fields[s->op].allowed & B(f)) && !present(s, f)) *int_field(s, f) = v;
}

static void set_default_num(vs_layer_spec *s, int f, double v)
{
    if ((op_fields[s->op].allowed & B(f)) && !present(s, f)) *num_field(s, f) = v;
}

vs_status vs_layer_spec_resolve(const vs_layer_spec *in, vs_layer_spec *s, vs_error *err)
{
    *s = *in;
    const char *op = vs_module_kind_name(s->op);
    if ((unsigned)s->op >= VS_MODULE_KIND_COUNT) return vs_error_set(err, VS_ERR_FORMAT, "unknown op %d", (int)s->op);
    if (s->op == VS_MODULE_SEQUENTIAL || s->op == VS_MODULE_SIAMESE || s->op == VS_MODULE_COMPOSITE)
        return vs_error_set(err, VS_ERR_FORMAT, "op \"%s\" cannot be a layer of a sequential", op);
    const struct op_fields *of = &op_fields[s->op];
    for (int f = 0; f < VS_SPEC_N_FIELDS; f++) {
        if (present(s, f) && !(of->allowed & B(f)))
            return vs_error_set(err, VS_ERR_FORMAT, "field \"%s\" does not apply to %s", fields[f].name, op);
        if (!present(s, f) && (of->required & B(f)))
            return vs_error_set(err, VS_ERR_FORMAT, "field \"%s\" is required", fields[f].name);
    }
    if (s->op != VS_MODULE_RESIDUAL && s->n_block)
        return vs_error_set(err, VS_ERR_FORMAT, "only residual layers hold a block");
    if (s->op == VS_MODULE_RESIDUAL && s->n_block < 1)
        return vs_error_set(err, VS_ERR_FORMAT, "the block needs at least one layer");
    if (s->name[0] && s->op != VS_MODULE_RESIDUAL)
        return vs_error_set(err, VS_ERR_FORMAT, "field \"name\" does not apply to %s", op);
    if (s->name[0] && !vs_is_identifier(s->name))
        return vs_error_set(err, VS_ERR_FORMAT, "\"name\" is \"%s\", expected a name of letters, digits and _ not starting with a digit", s->name);

    bool pool = s->op == VS_MODULE_MAX_POOL2D || s->op == VS_MODULE_AVG_POOL2D;
    if (of->allowed & B(F_KERNEL)) {
        vs_status st = check_int(s, F_KERNEL, 1, MAX_KERNEL, err);
        if (st) return st;
    }
    set_default_int(s, F_STRIDE, pool ? s->kernel : 1);
    set_default_int(s, F_PADDING, 0);
    set_default_int(s, F_OUTPUT_PADDING, 0);
    set_default_int(s, F_DILATION, 1);
    set_default_int(s, F_CEIL_MODE, 0);
    set_default_int(s, F_GROUPS, 1);
    set_default_int(s, F_BIAS, 1);
    set_default_int(s, F_TRAIN_EPS, 0);
    set_default_int(s, F_HIDDEN, s->out);
    set_default_num(s, F_P, 0.5);
    set_default_num(s, F_SLOPE, 0.01);
    set_default_num(s, F_ALPHA, 1.0);
    set_default_num(s, F_EPS, s->op == VS_MODULE_GIN_CONV ? 0.0 : 1e-5);
    set_default_num(s, F_MOMENTUM, 0.1);
    set_default_int(s, F_AFFINE, 1); /* versus's instance norm always had weight and bias */
    set_default_int(s, F_TRACK, 0);

    vs_status st = VS_OK;
    for (int f = 0; f < VS_SPEC_N_FIELDS && st == VS_OK; f++) {
        if (!(of->allowed & B(f))) continue;
        switch (f) {
        case F_IN: case F_OUT: case F_HIDDEN: case F_FEATURES:
            st = check_int(s, f, 1, MAX_WIDTH, err);
            break;
        case F_STRIDE: case F_DILATION:
            st = check_int(s, f, 1, MAX_KERNEL, err);
            break;
        case F_PADDING:
            /* PyTorch's pooling rejects padding above half the kernel (windows of padding only) */
            st = check_int(s, f, 0, pool ? s->kernel / 2 : MAX_KERNEL, err);
            break;
        case F_OUTPUT_PADDING: /* PyTorch: smaller than the stride or the dilation */
            st = check_int(s, f, 0, (s->stride > s->dilation ? s->stride : s->dilation) - 1, err);
            break;
        case F_GROUPS: /* PyTorch: the groups divide both channel counts */
            st = check_int(s, f, 1, MAX_WIDTH, err);
            if (!st && (s->in % s->groups || s->out % s->groups))
                st = vs_error_set(err, VS_ERR_FORMAT, "%s: \"groups\" %lld must divide \"in\" %lld and \"out\" %lld", op,
                                  (long long)s->groups, (long long)s->in, (long long)s->out);
            break;
        case F_BIAS: case F_TRAIN_EPS: case F_AFFINE: case F_TRACK: case F_CEIL_MODE:
            st = check_int(s, f, 0, 1, err);
            break;
        case F_P:
            st = check_num(s, f, 0.0, 1.0, true, err);
            break;
        case F_SLOPE: case F_ALPHA:
            st = check_num(s, f, -1e6, 1e6, false, err);
            break;
        case F_EPS:
            st = s->op == VS_MODULE_GIN_CONV ? check_num(s, f, -1e6, 1e6, false, err) : check_num(s, f, 1e-30, 1.0, false, err);
            break;
        case F_MOMENTUM:
            st = check_num(s, f, 0.0, 1.0, false, err);
            break;
        default:
            break;
        }
    }
    return st;
}
