/* composite_ops.c - the composite program's math nodes, the ones imported graphs (ONNX) need beyond
 * the wiring of composite_json.c: binary maps with broadcasting (sub, div, max, min, pow, matmul),
 * unary maps (sqrt, clip, hardsigmoid, hardswish, softmax, log_softmax), transpose, reductions, pad,
 * gather at one index, and constants - their model.json fields, their evaluation and their JSON.
 * Each is a composition of differentiable ops, so gradients of every order hold. */
#include "nn/composite_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CONST ((int64_t)1 << 24) /* elements of an inline constant */

static const struct math_op {
    const char *name;
    vs_cmath op;
    int n_in;                        /* inputs (0: a constant) */
    const char *keys[3];             /* fields besides op, in, out */
} ops[] = {
    {"sub", VS_CMATH_SUB, 2, {0}}, {"div", VS_CMATH_DIV, 2, {0}}, {"max", VS_CMATH_MAX, 2, {0}},
    {"min", VS_CMATH_MIN, 2, {0}}, {"pow", VS_CMATH_POW, 2, {0}}, {"matmul", VS_CMATH_MATMUL, 2, {0}},
    {"sqrt", VS_CMATH_SQRT, 1, {0}}, {"clip", VS_CMATH_CLIP, 1, {"min", "max"}},
    {"hardsigmoid", VS_CMATH_HARDSIGMOID, 1, {"alpha", "beta"}}, {"hardswish", VS_CMATH_HARDSWISH, 1, {0}},
    {"softmax", VS_CMATH_SOFTMAX, 1, {"axis"}}, {"log_softmax", VS_CMATH_LOG_SOFTMAX, 1, {"axis"}},
    {"transpose", VS_CMATH_TRANSPOSE, 1, {"perm"}}, {"reduce_mean", VS_CMATH_REDUCE_MEAN, 1, {"axes", "keepdims"}},
    {"reduce_sum", VS_CMATH_REDUCE_SUM, 1, {"axes", "keepdims"}}, {"pad", VS_CMATH_PAD, 1, {"pads", "value"}},
    {"gather", VS_CMATH_GATHER, 1, {"axis", "index"}}, {"const", VS_CMATH_CONST, 0, {"shape", "values"}},
};

static const struct math_op *find(const char *name)
{
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (!strcmp(ops[i].name, name)) return &ops[i];
    return NULL;
}

static const struct math_op *of(vs_cmath op)
{
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (ops[i].op == op) return &ops[i];
    return NULL;
}

bool vs_cmath_known(const char *op) { return find(op) != NULL; }
const char *vs_cmath_name(vs_cmath op) { return of(op)->name; }
int vs_cmath_arity(const char *op) { return find(op) ? find(op)->n_in : -1; }

static vs_status bad(const vs_json *n, const char *label, const char *field, const char *what, vs_error *err)
{
    char where[256];
    vs_json_where(vs_json_get(n, field) ? vs_json_get(n, field) : n, where, sizeof where);
    return vs_error_set(err, VS_ERR_FORMAT, "%s: %s: field \"%s\": %s", where, label, field, what);
}

/* An array of 1 to max integers in [lo, hi] into v. */
static vs_status ints(const vs_json *node, const char *label, const char *field, int max, int64_t lo, int64_t hi, int64_t **v,
                      int *n, vs_error *err)
{
    const vs_json *a = vs_json_get(node, field);
    if (!a || a->type != VS_JSON_ARRAY || a->n < 1 || a->n > (size_t)max) {
        char msg[80];
        snprintf(msg, sizeof msg, "expected an array of 1 to %d integers", max);
        return bad(node, label, field, msg, err);
    }
    if (!(*v = calloc(a->n, sizeof **v))) return vs_error_set(err, VS_ERR_NOMEM, "composite: out of memory");
    for (size_t i = 0; i < a->n; i++) {
        vs_error e;
        if (vs_json_int(a->items[i], lo, hi, &(*v)[i], &e) != VS_OK) {
            char msg[96];
            snprintf(msg, sizeof msg, "item %zu: expected an integer in [%lld, %lld]", i, (long long)lo, (long long)hi);
            return bad(node, label, field, msg, err);
        }
    }
    *n = (int)a->n;
    return VS_OK;
}

static vs_status num(const vs_json *node, const char *label, const char *field, double def, float *out, vs_error *err)
{
    const vs_json *v = vs_json_get(node, field);
    if (!v) return *out = (float)def, VS_OK;
    if (v->type != VS_JSON_NUMBER || !isfinite(v->number)) return bad(node, label, field, "expected a finite number", err);
    *out = (float)v->number;
    return VS_OK;
}

vs_status vs_cmath_from_json(const vs_json *node, const char *label, const char *opname, vs_cnode *n, vs_error *err)
{
    const struct math_op *o = find(opname);
    n->kind = VS_CNODE_MATH;
    n->math = o->op;
    for (size_t i = 0; i < node->n; i++) {
        const char *k = node->members[i].key;
        bool ok = !strcmp(k, "op") || !strcmp(k, "in") || !strcmp(k, "out");
        for (int j = 0; j < 3 && o->keys[j]; j++) ok = ok || !strcmp(k, o->keys[j]);
        if (!ok) return bad(node, label, k, "unknown field for this node", err);
    }
    if (n->n_in != o->n_in) {
        char msg[64];
        snprintf(msg, sizeof msg, "takes %d value%s, got %d", o->n_in, o->n_in == 1 ? "" : "s", n->n_in);
        return bad(node, label, "in", msg, err);
    }
    if (n->n_out != 1) return bad(node, label, "out", "takes one name", err);
    vs_status st = VS_OK;
    int64_t v;
    vs_error e;
    switch (o->op) {
    case VS_CMATH_CLIP:
        st = num(node, label, "min", -INFINITY, &n->a, err);
        if (!st) st = num(node, label, "max", INFINITY, &n->b, err);
        if (!st && !(n->a <= n->b)) st = bad(node, label, "max", "must not be below \"min\"", err);
        break;
    case VS_CMATH_HARDSIGMOID:
        st = num(node, label, "alpha", 0.2, &n->a, err);
        if (!st) st = num(node, label, "beta", 0.5, &n->b, err);
        break;
    case VS_CMATH_SOFTMAX: case VS_CMATH_LOG_SOFTMAX: case VS_CMATH_GATHER:
        n->axis = -1;
        if (vs_json_get(node, "axis")) {
            if (vs_json_get_int(node, "axis", -(VS_MAX_DIMS - 1), VS_MAX_DIMS - 1, &v, &e) != VS_OK || v == 0)
                return bad(node, label, "axis", "expected an axis in [1, 7] or negative (0 is the batch)", err);
            n->axis = (int)v;
        }
        if (o->op == VS_CMATH_GATHER) {
            if (vs_json_get_int(node, "index", -((int64_t)1 << 40), (int64_t)1 << 40, &v, &e) != VS_OK)
                return bad(node, label, "index", "expected an integer index", err);
            n->a = 0;
            n->shape[0] = v;
        }
        break;
    case VS_CMATH_TRANSPOSE:
        st = ints(node, label, "perm", VS_MAX_DIMS, 0, VS_MAX_DIMS - 1, &n->ints, &n->n_ints, err);
        for (int i = 0; !st && i < n->n_ints; i++)
            for (int j = 0; j < i; j++)
                if (n->ints[i] == n->ints[j]) st = bad(node, label, "perm", "expected a permutation", err);
        if (!st && (n->ints[0] != 0 || n->ints[n->n_ints - 1] >= n->n_ints))
            st = bad(node, label, "perm", "expected a permutation of all dims that keeps the batch (0) first", err);
        break;
    case VS_CMATH_REDUCE_MEAN: case VS_CMATH_REDUCE_SUM: {
        st = ints(node, label, "axes", VS_MAX_DIMS - 1, -(VS_MAX_DIMS - 1), VS_MAX_DIMS - 1, &n->ints, &n->n_ints, err);
        for (int i = 0; !st && i < n->n_ints; i++)
            if (n->ints[i] == 0) st = bad(node, label, "axes", "the batch (0) cannot be reduced", err);
        bool keep = true;
        if (!st && vs_json_opt_bool(node, "keepdims", true, &keep, &e) != VS_OK) st = bad(node, label, "keepdims", "expected true or false", err);
        n->axis = keep;
        break;
    }
    case VS_CMATH_PAD:
        st = ints(node, label, "pads", 2 * (VS_MAX_DIMS - 1), 0, (int64_t)1 << 20, &n->ints, &n->n_ints, err);
        if (!st && n->n_ints % 2) st = bad(node, label, "pads", "expected a before and an after count per example dim", err);
        if (!st) st = num(node, label, "value", 0.0, &n->a, err);
        break;
    case VS_CMATH_CONST: {
        int64_t *shape = NULL;
        int nd = 0, count = 1;
        const vs_json *vals = vs_json_get(node, "values");
        if (vs_json_get(node, "shape") && vs_json_get(node, "shape")->type == VS_JSON_ARRAY && vs_json_get(node, "shape")->n == 0)
            nd = 0;
        else if ((st = ints(node, label, "shape", VS_MAX_DIMS, 1, MAX_CONST, &shape, &nd, err)))
            break;
        for (int i = 0; i < nd; i++) {
            if (count > MAX_CONST / shape[i]) st = bad(node, label, "shape", "more than 2^24 elements", err);
            else count *= (int)shape[i];
            n->shape[i] = shape[i];
        }
        free(shape);
        n->ndim = nd;
        if (st) break;
        if (!vals || vals->type != VS_JSON_ARRAY || (int64_t)vals->n != count) {
            st = bad(node, label, "values", "expected an array of as many numbers as the shape holds", err);
            break;
        }
        if (!(n->data = malloc((size_t)count * sizeof *n->data))) return vs_error_set(err, VS_ERR_NOMEM, "composite: out of memory");
        for (int i = 0; i < count && !st; i++) {
            const vs_json *x = vals->items[i];
            if (x->type != VS_JSON_NUMBER || !isfinite(x->number)) st = bad(node, label, "values", "expected finite numbers", err);
            else n->data[i] = (float)x->number;
        }
        n->n_data = count;
        break;
    }
    default:
        break;
    }
    return st;
}

vs_status vs_cmath_to_json(const vs_cnode *n, vs_json *o)
{
    bool ok = true;
    switch (n->math) {
    case VS_CMATH_CLIP:
        if (isfinite(n->a)) ok = vs_json_set(o, "min", vs_json_new_number(n->a)) == VS_OK;
        if (ok && isfinite(n->b)) ok = vs_json_set(o, "max", vs_json_new_number(n->b)) == VS_OK;
        break;
    case VS_CMATH_HARDSIGMOID:
        ok = vs_json_set(o, "alpha", vs_json_new_number(n->a)) == VS_OK && vs_json_set(o, "beta", vs_json_new_number(n->b)) == VS_OK;
        break;
    case VS_CMATH_SOFTMAX: case VS_CMATH_LOG_SOFTMAX:
        ok = vs_json_set(o, "axis", vs_json_new_int(n->axis)) == VS_OK;
        break;
    case VS_CMATH_GATHER:
        ok = vs_json_set(o, "axis", vs_json_new_int(n->axis)) == VS_OK && vs_json_set(o, "index", vs_json_new_int(n->shape[0])) == VS_OK;
        break;
    case VS_CMATH_TRANSPOSE:
        ok = vs_json_set(o, "perm", vs_json_new_int_array(n->ints, n->n_ints)) == VS_OK;
        break;
    case VS_CMATH_REDUCE_MEAN: case VS_CMATH_REDUCE_SUM:
        ok = vs_json_set(o, "axes", vs_json_new_int_array(n->ints, n->n_ints)) == VS_OK && vs_json_set(o, "keepdims", vs_json_new_bool(n->axis)) == VS_OK;
        break;
    case VS_CMATH_PAD:
        ok = vs_json_set(o, "pads", vs_json_new_int_array(n->ints, n->n_ints)) == VS_OK && vs_json_set(o, "value", vs_json_new_number(n->a)) == VS_OK;
        break;
    case VS_CMATH_CONST: {
        vs_json *v = vs_json_new_array();
        for (int64_t i = 0; v && i < n->n_data; i++)
            if (vs_json_push(v, vs_json_new_number(n->data[i])) != VS_OK) {
                vs_json_free(v);
                v = NULL;
            }
        ok = vs_json_set(o, "shape", vs_json_new_int_array(n->shape, n->ndim)) == VS_OK &&
             vs_json_set(o, "values", v) == VS_OK;
        break;
    }
    default:
        break;
    }
    return ok ? VS_OK : vs_set_last_error(VS_ERR_NOMEM, "model.json: out of memory");
}

static int axis_of(int axis, int ndim) { return axis < 0 ? ndim + axis : axis; }

static vs_tensor *axis_fail(int axis, int ndim)
{
    vs_set_last_error(VS_ERR_SHAPE, "axis %d is outside the example dimensions of a %d-d value", axis, ndim);
    return NULL;
}

static vs_tensor *gather(const vs_cnode *n, vs_tensor *x)
{
    int ax = axis_of(n->axis, x->ndim);
    if (ax < 1 || ax >= x->ndim) return axis_fail(n->axis, x->ndim);
    int64_t i = n->shape[0] < 0 ? n->shape[0] + x->shape[ax] : n->shape[0];
    if (i < 0 || i >= x->shape[ax]) {
        vs_set_last_error(VS_ERR_SHAPE, "index %lld is outside [0, %lld)", (long long)n->shape[0], (long long)x->shape[ax]);
        return NULL;
    }
    int64_t shape[VS_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < x->ndim; d++)
        if (d != ax) shape[k++] = x->shape[d];
    return vs_reshape(vs_slice(x, ax, i, i + 1), k, shape);
}

static vs_tensor *reduce(const vs_cnode *n, vs_tensor *x)
{
    uint32_t axes = 0;
    for (int i = 0; i < n->n_ints; i++) {
        int ax = axis_of((int)n->ints[i], x->ndim);
        if (ax < 1 || ax >= x->ndim) return axis_fail((int)n->ints[i], x->ndim);
        axes |= VS_AXIS(ax);
    }
    return n->math == VS_CMATH_REDUCE_MEAN ? vs_mean(x, axes, n->axis) : vs_sum(x, axes, n->axis);
}

static vs_tensor *pad(const vs_cnode *n, vs_tensor *x)
{
    if (n->n_ints != 2 * (x->ndim - 1)) {
        vs_set_last_error(VS_ERR_SHAPE, "\"pads\" has %d counts, a %d-d value needs %d", n->n_ints, x->ndim, 2 * (x->ndim - 1));
        return NULL;
    }
    int64_t p[2 * VS_MAX_DIMS] = {0};
    memcpy(p + 2, n->ints, (size_t)n->n_ints * sizeof *p);
    return vs_pad(x, p, n->a);
}

vs_tensor *vs_cmath_run(const vs_cnode *n, vs_tensor *const *in)
{
    vs_tensor *x = n->n_in ? in[0] : NULL;
    switch (n->math) {
    case VS_CMATH_SUB: return vs_sub(x, in[1]);
    case VS_CMATH_DIV: return vs_div(x, in[1]);
    case VS_CMATH_MAX: return vs_maximum(x, in[1]);
    case VS_CMATH_MIN: return vs_minimum(x, in[1]);
    case VS_CMATH_POW: return vs_pow(x, in[1]);
    case VS_CMATH_MATMUL: return vs_matmul(x, in[1]);
    case VS_CMATH_SQRT: return vs_sqrt(x);
    case VS_CMATH_CLIP: return vs_clamp(x, n->a, n->b);
    case VS_CMATH_HARDSIGMOID: /* max(0, min(1, alpha x + beta)) */
        return vs_clamp(vs_add_scalar(vs_mul_scalar(x, n->a), n->b), 0.0f, 1.0f);
    case VS_CMATH_HARDSWISH: /* x hardsigmoid(x) with alpha 1/6, beta 1/2 */
        return vs_mul(x, vs_clamp(vs_add_scalar(vs_mul_scalar(x, 1.0f / 6.0f), 0.5f), 0.0f, 1.0f));
    case VS_CMATH_SOFTMAX: case VS_CMATH_LOG_SOFTMAX: {
        int ax = axis_of(n->axis, x->ndim);
        if (ax < 1 || ax >= x->ndim) return axis_fail(n->axis, x->ndim);
        return n->math == VS_CMATH_SOFTMAX ? vs_softmax(x, ax) : vs_log_softmax(x, ax);
    }
    case VS_CMATH_TRANSPOSE: {
        if (n->n_ints != x->ndim) {
            vs_set_last_error(VS_ERR_SHAPE, "\"perm\" has %d entries for a %d-d value", n->n_ints, x->ndim);
            return NULL;
        }
        int perm[VS_MAX_DIMS];
        for (int i = 0; i < n->n_ints; i++) perm[i] = (int)n->ints[i];
        return vs_permute(x, perm);
    }
    case VS_CMATH_REDUCE_MEAN: case VS_CMATH_REDUCE_SUM: return reduce(n, x);
    case VS_CMATH_PAD: return pad(n, x);
    case VS_CMATH_GATHER: return gather(n, x);
    case VS_CMATH_CONST: return vs_tensor_from(n->ndim, n->shape, n->data);
    }
    return NULL;
}
