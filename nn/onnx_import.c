/* onnx_import.c - an ONNX graph (versus/onnx.h) as a versus composite model: the model.json document
 * and the weights under their state_dict names, which vs_model_load builds like any model directory.
 * Layers with weights (Conv, ConvTranspose, Gemm, MatMul by a constant, the norms) become named
 * children; everything else becomes program nodes (composite_json.c, composite_ops.c).  Constants -
 * initializers, Constant nodes and the Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains that
 * exporters write - are folded here, with the batch size kept as a marker, so the program sees only
 * values that depend on the input.  The node and tensor names stay as the composite's aliases of the
 * values they became (--layer /layer4/layer4.1/relu_1/Relu).  Anything else names the op, the node, the
 * opset and the list. */
#include "versus/model.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/internal.h"
#include "versus/composite.h"
#include "versus/onnx.h"

#define BATCH INT64_MIN /* the batch size, in folded shapes */
#define MAX_CONST_NODE ((int64_t)1 << 20)

static const char supported[] =
    "Conv, ConvTranspose, Gemm, MatMul, BatchNormalization, InstanceNormalization, Add, Sub, Mul, Div, Max, Min, Pow, "
    "Sqrt, Relu, LeakyRelu, Sigmoid, Tanh, Softmax, LogSoftmax, Clip, HardSigmoid, HardSwish, MaxPool, AveragePool, "
    "GlobalAveragePool, Flatten, Reshape, Transpose, Concat, Squeeze, Unsqueeze, Gather, Pad, Dropout, Identity, Constant, "
    "Shape, Cast, ReduceMean, ReduceSum, ConstantOfShape, Expand, Tile (dims of size 1)";

typedef struct val {
    const char *onnx;                 /* borrowed from the graph */
    bool is_const;
    char name[32];                    /* the program's value ("" for a constant not yet emitted) */
    int ndim;                         /* dynamic: rank (-1 unknown), dims[0] the batch */
    int64_t dims[VS_ONNX_MAX_DIMS];   /* -1 where unknown; constants: their shape */
    int64_t n;                        /* constants: elements */
    float *f;                         /* constants: float data, or */
    int64_t *i;                       /* integer data (BATCH marks the batch size) */
    bool owned;
} val;

typedef struct imp {
    const vs_onnx_model *m;
    const char *path;
    vs_error *err;
    val **vals;                       /* each malloc'd, so pointers stay valid */
    int n_vals, cap_vals;
    char **used;
    int n_used, cap_used;
    vs_json *models, *graph;
    vs_named_tensors *w;
    const vs_onnx_node *node;
    int node_idx;
} imp;

static vs_status fail(imp *ip, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static vs_status fail(imp *ip, const char *fmt, ...)
{
    char msg[VS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ip->node)
        return vs_error_set(ip->err, VS_ERR_FORMAT, "%s: node %d (%s \"%.80s\", opset %lld): %s", ip->path, ip->node_idx,
                            ip->node->op_type, ip->node->name, (long long)ip->m->opset, msg);
    return vs_error_set(ip->err, VS_ERR_FORMAT, "%s: %s", ip->path, msg);
}

static vs_status nomem(imp *ip) { return vs_error_set(ip->err, VS_ERR_NOMEM, "%s: out of memory", ip->path); }

/* ---- names and values ---------------------------------------------------------------------------- */

static bool used(const imp *ip, const char *s)
{
    for (int i = 0; i < ip->n_used; i++)
        if (!strcmp(ip->used[i], s)) return true;
    return false;
}

/* A new identifier of at most 31 characters from an ONNX name ("/layer1/layer1.0/conv1/Conv" ->
 * "layer1_layer1_0_conv1_Conv"), or prefix + a number when that does not fit or is taken. */
static vs_status fresh(imp *ip, const char *onnx, const char *prefix, char out[32])
{
    char s[32];
    size_t k = 0;
    for (const char *p = onnx; *p && k < sizeof s; p++) {
        char c = isalnum((unsigned char)*p) ? *p : '_';
        if (c == '_' && (k == 0 || s[k - 1] == '_')) continue;
        s[k++] = c;
    }
    bool ok = k > 0 && k < sizeof s && strlen(onnx) < 64;
    if (ok) {
        s[k] = 0;
        if (isdigit((unsigned char)s[0])) {
            ok = k + strlen(prefix) < sizeof s;
            if (ok) {
                memmove(s + strlen(prefix), s, k + 1);
                memcpy(s, prefix, strlen(prefix));
            }
        }
    }
    if (ok && k > 31) ok = false;
    for (int n = ip->n_used; !ok || used(ip, s); n++) {
        snprintf(s, sizeof s, "%s%d", prefix, n);
        ok = true;
    }
    if (ip->n_used == ip->cap_used) {
        int c = ip->cap_used ? 2 * ip->cap_used : 64;
        char **g = realloc(ip->used, (size_t)c * sizeof *g);
        if (!g) return nomem(ip);
        ip->used = g, ip->cap_used = c;
    }
    if (!(ip->used[ip->n_used] = strdup(s))) return nomem(ip);
    ip->n_used++;
    memcpy(out, s, 32);
    return VS_OK;
}

static val *find(imp *ip, const char *onnx)
{
    for (int i = ip->n_vals - 1; i >= 0; i--)
        if (!strcmp(ip->vals[i]->onnx, onnx)) return ip->vals[i];
    return NULL;
}

static val *new_val(imp *ip, const char *onnx)
{
    if (ip->n_vals == ip->cap_vals) {
        int c = ip->cap_vals ? 2 * ip->cap_vals : 64;
        val **g = realloc(ip->vals, (size_t)c * sizeof *g);
        if (!g) return nomem(ip), NULL;
        ip->vals = g, ip->cap_vals = c;
    }
    val *v = calloc(1, sizeof *v);
    if (!v) return nomem(ip), NULL;
    ip->vals[ip->n_vals++] = v;
    v->onnx = onnx;
    return v;
}

/* A dynamic value for output j of the node, of rank ndim (dims may be NULL: unknown). */
static val *dyn_out(imp *ip, int j, int ndim, const int64_t *dims)
{
    val *v = new_val(ip, ip->node->out[j]);
    if (!v || fresh(ip, ip->node->out[j], "v", v->name)) return NULL;
    v->ndim = ndim;
    for (int d = 0; d < ndim && d < VS_ONNX_MAX_DIMS; d++) v->dims[d] = dims ? dims[d] : -1;
    if (ndim > 0) v->dims[0] = -1;
    return v;
}

/* A folded constant for output j (takes f or i). */
static val *const_out(imp *ip, int j, int ndim, const int64_t *dims, float *f, int64_t *i)
{
    val *v = new_val(ip, ip->node->out[j]);
    if (!v) {
        free(f), free(i);
        return NULL;
    }
    v->is_const = true, v->owned = true, v->f = f, v->i = i, v->ndim = ndim, v->n = 1;
    for (int d = 0; d < ndim; d++) v->dims[d] = dims[d], v->n *= dims[d];
    return v;
}

static val *input(imp *ip, int j)
{
    if (j >= ip->node->n_in || !ip->node->in[j][0]) return NULL;
    return find(ip, ip->node->in[j]);
}

static val *need_const(imp *ip, int j, const char *what)
{
    val *v = input(ip, j);
    if (!v) fail(ip, "input %d (%s) is missing", j, what);
    else if (!v->is_const) {
        fail(ip, "input %d (%s) must be a constant (an initializer or folded from constants)", j, what);
        v = NULL;
    }
    return v;
}

static vs_status emit(imp *ip, vs_json *node) { return vs_json_push(ip->graph, node) == VS_OK ? VS_OK : nomem(ip); }

/* The program value of input value v: a constant is emitted as a "const" node the first time. */
static const char *dyn_name(imp *ip, val *v)
{
    if (!v->is_const || v->name[0]) return v->name;
    if (v->n > MAX_CONST_NODE) return fail(ip, "a constant operand of %lld elements (at most 2^20 are kept in model.json)", (long long)v->n), NULL;
    for (int64_t k = 0; v->i && k < v->n; k++)
        if (v->i[k] == BATCH) return fail(ip, "the batch size cannot be used as a number"), NULL;
    vs_json *o = vs_json_new_object(), *vals = vs_json_new_array();
    for (int64_t k = 0; vals && k < v->n; k++)
        if (vs_json_push(vals, vs_json_new_number(v->f ? (double)v->f[k] : (double)v->i[k])) != VS_OK) vals = NULL;
    char name[32];
    if (fresh(ip, v->onnx, "k", name)) {
        vs_json_free(o), vs_json_free(vals);
        return NULL;
    }
    bool ok = o && vals && vs_json_set(o, "op", vs_json_new_string("const")) == VS_OK &&
              vs_json_set(o, "shape", vs_json_new_int_array(v->dims, v->ndim)) == VS_OK && vs_json_set(o, "values", vals) == VS_OK;
    if (!ok && !o) vs_json_free(vals);
    ok = ok && vs_json_set(o, "out", vs_json_new_string(name)) == VS_OK;
    if (!ok) {
        vs_json_free(o);
        return nomem(ip), NULL;
    }
    if (emit(ip, o)) return NULL;
    memcpy(v->name, name, 32);
    return v->name;
}

/* {"op": op, "in": [names...], "out": name} plus fields added by the caller. */
static vs_json *node_json(imp *ip, const char *op, val *const *in, int n_in, const char *out)
{
    vs_json *o = vs_json_new_object(), *a = vs_json_new_array();
    bool ok = o && a && vs_json_set(o, "op", vs_json_new_string(op)) == VS_OK;
    for (int k = 0; ok && k < n_in; k++) {
        const char *nm = dyn_name(ip, in[k]);
        if (!nm) {
            vs_json_free(o), vs_json_free(a);
            return NULL;
        }
        ok = vs_json_push(a, vs_json_new_string(nm)) == VS_OK;
    }
    ok = ok && vs_json_set(o, "in", a) == VS_OK;
    if (!ok && o && a && !vs_json_get(o, "in")) vs_json_free(a), a = NULL;
    ok = ok && vs_json_set(o, "out", vs_json_new_string(out)) == VS_OK;
    if (!ok) {
        vs_json_free(o);
        if (!o) vs_json_free(a);
        nomem(ip);
        return NULL;
    }
    return o;
}

/* ---- attributes ---------------------------------------------------------------------------------- */

static int64_t attr_int(const vs_onnx_node *n, const char *name, int64_t def)
{
    const vs_onnx_attr *a = vs_onnx_attr_get(n, name);
    return a && a->type == VS_ONNX_ATTR_INT ? a->i : def;
}

static float attr_float(const vs_onnx_node *n, const char *name, float def)
{
    const vs_onnx_attr *a = vs_onnx_attr_get(n, name);
    return a && a->type == VS_ONNX_ATTR_FLOAT ? a->f : def;
}

/* INTS attribute: its count (copied into v up to max), -1 when absent. */
static int attr_ints(const vs_onnx_node *n, const char *name, int64_t *v, int max)
{
    const vs_onnx_attr *a = vs_onnx_attr_get(n, name);
    if (!a || a->type != VS_ONNX_ATTR_INTS) return -1;
    for (int k = 0; k < a->n && k < max; k++) v[k] = a->ints[k];
    return (int)a->n;
}

/* Only these attributes (others would change the meaning). */
static vs_status only_attrs(imp *ip, const char *const *names)
{
    for (int k = 0; k < ip->node->n_attr; k++) {
        bool ok = false;
        for (const char *const *p = names; *p && !ok; p++) ok = !strcmp(*p, ip->node->attr[k].name);
        if (!ok) return fail(ip, "attribute \"%s\" is not supported", ip->node->attr[k].name);
    }
    return VS_OK;
}

/* ---- children and weights ----------------------------------------------------------------------- */

static vs_status weight(imp *ip, const char *child, const char *name, int ndim, const int64_t *dims, const float *data)
{
    char full[96];
    snprintf(full, sizeof full, "%s.%s", child, name);
    vs_tensor *t = vs_tensor_from(ndim, dims, data);
    if (!t) return nomem(ip);
    if (vs_named_tensors_push(ip->w, full, t, false) != VS_OK) {
        vs_tensor_free(t);
        return nomem(ip);
    }
    return VS_OK;
}

/* Add child layer (takes layer) and the call node reading x into output 0; *out the new value. */
static vs_status call_child(imp *ip, const char *base, vs_json *layer, val *x, int ndim, const int64_t *dims, char child[32])
{
    if (!layer) return nomem(ip);
    if (fresh(ip, base, "m", child) || vs_json_set(ip->models, child, layer) != VS_OK) return ip->err->code ? ip->err->code : nomem(ip);
    const char *xn = dyn_name(ip, x);
    val *y = xn ? dyn_out(ip, 0, ndim, dims) : NULL;
    if (!y) return ip->err->code ? ip->err->code : nomem(ip);
    vs_json *o = vs_json_new_object();
    bool ok = o && vs_json_set(o, "call", vs_json_new_string(child)) == VS_OK && vs_json_set(o, "in", vs_json_new_string(xn)) == VS_OK &&
              vs_json_set(o, "out", vs_json_new_string(y->name)) == VS_OK;
    if (!ok) {
        vs_json_free(o);
        return nomem(ip);
    }
    return emit(ip, o);
}

static vs_json *layer_json(const char *op)
{
    vs_json *o = vs_json_new_object();
    if (o && vs_json_set(o, "op", vs_json_new_string(op)) != VS_OK) {
        vs_json_free(o);
        return NULL;
    }
    return o;
}

static bool set_int(vs_json *o, const char *k, int64_t v) { return o && vs_json_set(o, k, vs_json_new_int(v)) == VS_OK; }

/* Window geometry of Conv / pools: one kernel size, stride, dilation and symmetric padding for both
 * sides (asymmetric pads are returned in pads[4] for a pad node in front). */
typedef struct window {
    int64_t k, s, d, p, pads[4];
    bool pad_node;
} window;

static vs_status window_of(imp *ip, const val *x, int64_t kh, int64_t kw, window *w)
{
    const vs_onnx_node *n = ip->node;
    int64_t v[8];
    if (kh != kw) return fail(ip, "kernel %lldx%lld: only square kernels are supported", (long long)kh, (long long)kw);
    w->k = kh, w->s = 1, w->d = 1, w->p = 0, w->pad_node = false;
    int c = attr_ints(n, "strides", v, 8);
    if (c == 2 && v[0] != v[1]) return fail(ip, "strides %lld,%lld: only equal strides are supported", (long long)v[0], (long long)v[1]);
    if (c == 2) w->s = v[0];
    else if (c >= 0) return fail(ip, "strides: expected 2 values (2-d windows only)");
    c = attr_ints(n, "dilations", v, 8);
    if (c == 2 && v[0] != v[1]) return fail(ip, "dilations %lld,%lld: only equal dilations are supported", (long long)v[0], (long long)v[1]);
    if (c == 2) w->d = v[0];
    else if (c >= 0) return fail(ip, "dilations: expected 2 values");
    memset(w->pads, 0, sizeof w->pads);
    c = attr_ints(n, "pads", w->pads, 4);
    if (c >= 0 && c != 4) return fail(ip, "pads: expected 4 values");
    const vs_onnx_attr *ap = vs_onnx_attr_get(n, "auto_pad");
    if (ap && ap->s && strcmp(ap->s, "NOTSET") && strcmp(ap->s, "VALID")) {
        /* SAME_UPPER / SAME_LOWER: output = ceil(input / stride) */
        for (int a = 0; a < 2; a++) {
            int64_t in = x->ndim == 4 ? x->dims[2 + a] : -1;
            if (in < 0) return fail(ip, "auto_pad %s needs the input's spatial size, which is unknown", ap->s);
            int64_t out = (in + w->s - 1) / w->s, total = (out - 1) * w->s + w->d * (w->k - 1) + 1 - in;
            if (total < 0) total = 0;
            int64_t lo = !strcmp(ap->s, "SAME_LOWER") ? (total + 1) / 2 : total / 2;
            w->pads[a] = lo, w->pads[a + 2] = total - lo;
        }
    }
    for (int a = 0; a < 4; a++)
        if (w->pads[a] < 0 || w->pads[a] > 1 << 16) return fail(ip, "pads: %lld is out of range", (long long)w->pads[a]);
    if (w->pads[0] == w->pads[1] && w->pads[1] == w->pads[2] && w->pads[2] == w->pads[3]) w->p = w->pads[0];
    else w->pad_node = true;
    if (w->s < 1 || w->s > 64 || w->d < 1 || w->d > 64 || w->k < 1 || w->k > 64) return fail(ip, "kernel, stride or dilation out of range");
    return VS_OK;
}

/* Output side of a window: floor (or ceil) ((in + 2p - d (k-1) - 1) / s) + 1. */
static int64_t window_side(int64_t in, const window *w, bool ceil_mode)
{
    if (in < 0) return -1;
    int64_t span = in + 2 * w->p - w->d * (w->k - 1) - 1;
    if (span < 0) return -1;
    int64_t o = (ceil_mode ? (span + w->s - 1) / w->s : span / w->s) + 1;
    if (ceil_mode && (o - 1) * w->s >= in + w->p) o--; /* PyTorch: the last window starts inside */
    return o;
}

/* A pad node for asymmetric window padding: x [n,c,h,w] padded by pads (t, l, b, r); x replaced. */
static vs_status pad_first(imp *ip, val **x, const window *w, float value)
{
    int64_t p[6] = {0, 0, w->pads[0], w->pads[2], w->pads[1], w->pads[3]};
    val *in = *x;
    char name[32];
    if (fresh(ip, "pad", "p", name)) return ip->err->code;
    vs_json *o = node_json(ip, "pad", &in, 1, name);
    if (!o) return ip->err->code ? ip->err->code : nomem(ip);
    if (vs_json_set(o, "pads", vs_json_new_int_array(p, 6)) != VS_OK || vs_json_set(o, "value", vs_json_new_number(value)) != VS_OK) {
        vs_json_free(o);
        return nomem(ip);
    }
    if (emit(ip, o)) return ip->err->code;
    val *v = new_val(ip, "");
    if (!v) return nomem(ip);
    *v = (val){.onnx = "", .ndim = 4};
    memcpy(v->name, name, 32);
    for (int d = 0; d < 4; d++) v->dims[d] = in->dims[d];
    for (int a = 0; a < 2; a++)
        if (v->dims[2 + a] >= 0) v->dims[2 + a] += w->pads[a] + w->pads[a + 2];
    *x = v;
    return VS_OK;
}

/* ---- layers with weights ------------------------------------------------------------------------- */

static vs_status op_conv(imp *ip, bool transpose)
{
    static const char *const keys[] = {"group", "dilations", "strides", "pads", "auto_pad", "kernel_shape", "output_padding", NULL};
    vs_status st = only_attrs(ip, keys);
    if (st) return st;
    val *x = input(ip, 0), *w = need_const(ip, 1, "weight"), *b = input(ip, 2);
    if (!w) return ip->err->code;
    if (!x || x->is_const) return fail(ip, "input 0 must depend on the model's input");
    if (x->ndim != 4 || w->ndim != 4 || !w->f) return fail(ip, "only 2-d convolutions of float weights [o, c/groups, kh, kw] are supported");
    if (b && (!b->is_const || !b->f || b->n != (transpose ? w->dims[1] * attr_int(ip->node, "group", 1) : w->dims[0])))
        return fail(ip, "the bias must be a float constant with one value per output channel");
    window win;
    if ((st = window_of(ip, x, w->dims[2], w->dims[3], &win))) return st;
    int64_t g = attr_int(ip->node, "group", 1);
    if (g < 1 || g > 1 << 20) return fail(ip, "group %lld is out of range", (long long)g);
    int64_t in = transpose ? w->dims[0] : w->dims[1] * g, out = transpose ? w->dims[1] * g : w->dims[0];
    if (x->dims[1] >= 0 && x->dims[1] != in)
        return fail(ip, "the input has %lld channels, the weight expects %lld", (long long)x->dims[1], (long long)in);
    int64_t op[8] = {0, 0};
    int nop = attr_ints(ip->node, "output_padding", op, 8);
    if (!transpose && nop >= 0) return fail(ip, "attribute \"output_padding\" is not supported");
    if (nop > 0 && (nop != 2 || op[0] != op[1])) return fail(ip, "output_padding: only equal values are supported");
    if (transpose && win.pad_node) return fail(ip, "asymmetric pads are not supported for ConvTranspose");
    if (win.pad_node && (st = pad_first(ip, &x, &win, 0.0f))) return st;
    vs_json *l = layer_json(transpose ? "conv_transpose2d" : "conv2d");
    bool ok = set_int(l, "in", in) && set_int(l, "out", out) && set_int(l, "kernel", win.k) && set_int(l, "stride", win.s) &&
              set_int(l, "padding", win.p) && set_int(l, "dilation", win.d) && set_int(l, "groups", g) &&
              vs_json_set(l, "bias", vs_json_new_bool(b != NULL)) == VS_OK;
    if (ok && transpose) ok = set_int(l, "output_padding", op[0]);
    if (!ok) {
        vs_json_free(l);
        return nomem(ip);
    }
    int64_t dims[4] = {-1, out, -1, -1};
    for (int a = 0; a < 2; a++) {
        int64_t s = x->dims[2 + a];
        if (s < 0) continue;
        dims[2 + a] = transpose ? (s - 1) * win.s - 2 * win.p + win.d * (win.k - 1) + op[0] + 1 : window_side(s, &win, false);
    }
    char child[32];
    const char *base = ip->node->name[0] ? ip->node->name : transpose ? "deconv" : "conv";
    if ((st = call_child(ip, base, l, x, 4, dims, child))) return st;
    if ((st = weight(ip, child, "weight", 4, w->dims, w->f))) return st;
    return b ? weight(ip, child, "bias", 1, b->dims, b->f) : VS_OK;
}

/* Gemm (alpha A B' + beta C) and MatMul by a constant matrix as a linear layer. */
static vs_status op_linear(imp *ip, bool gemm)
{
    static const char *const keys[] = {"alpha", "beta", "transA", "transB", NULL};
    vs_status st = gemm ? only_attrs(ip, keys) : VS_OK;
    if (st) return st;
    val *x = input(ip, 0), *bm = input(ip, 1), *c = gemm ? input(ip, 2) : NULL;
    if (!x || !bm) return fail(ip, "two inputs are needed");
    if (!gemm && (!bm->is_const || x->is_const)) { /* a product of two computed values */
        char out[32];
        val *in[2] = {x, bm};
        if (fresh(ip, ip->node->out[0], "v", out)) return ip->err->code;
        vs_json *o = node_json(ip, "matmul", in, 2, out);
        if (!o || emit(ip, o)) return ip->err->code ? ip->err->code : nomem(ip);
        val *y = dyn_out(ip, 0, x->is_const ? bm->ndim : x->ndim, NULL);
        if (!y) return ip->err->code;
        memcpy(y->name, out, 32);
        return VS_OK;
    }
    if (!bm->is_const || !bm->f || bm->ndim != 2) return fail(ip, "input 1 must be a float constant matrix");
    if (x->is_const) return fail(ip, "input 0 must depend on the model's input");
    if (gemm && attr_int(ip->node, "transA", 0)) return fail(ip, "transA = 1 is not supported");
    bool tb = gemm && attr_int(ip->node, "transB", 0);
    float alpha = gemm ? attr_float(ip->node, "alpha", 1.0f) : 1.0f, beta = gemm ? attr_float(ip->node, "beta", 1.0f) : 1.0f;
    int64_t in = tb ? bm->dims[1] : bm->dims[0], out = tb ? bm->dims[0] : bm->dims[1];
    if (x->ndim >= 1 && x->dims[x->ndim - 1] >= 0 && x->dims[x->ndim - 1] != in)
        return fail(ip, "the input has %lld features, the matrix expects %lld", (long long)x->dims[x->ndim - 1], (long long)in);
    if (c && (!c->is_const || !c->f || (c->n != out && c->n != 1))) return fail(ip, "input 2 (C) must be a float constant of %lld or 1 values", (long long)out);
    if (vs_mem_check((size_t)(in * out), sizeof(float), "onnx weight", ip->err) != VS_OK) return ip->err->code;
    float *wt = malloc((size_t)(in * out) * sizeof *wt), *bias = c ? malloc((size_t)out * sizeof *bias) : NULL;
    if (!wt || (c && !bias)) {
        free(wt), free(bias);
        return nomem(ip);
    }
    for (int64_t o = 0; o < out; o++) /* weight [out, in] */
        for (int64_t i = 0; i < in; i++) wt[o * in + i] = alpha * (tb ? bm->f[o * in + i] : bm->f[i * out + o]);
    for (int64_t o = 0; c && o < out; o++) bias[o] = beta * c->f[c->n == 1 ? 0 : o];
    vs_json *l = layer_json("linear");
    bool ok = set_int(l, "in", in) && set_int(l, "out", out) && vs_json_set(l, "bias", vs_json_new_bool(c != NULL)) == VS_OK;
    if (!ok) vs_json_free(l);
    int64_t dims[VS_ONNX_MAX_DIMS];
    memcpy(dims, x->dims, sizeof dims);
    if (x->ndim > 0) dims[x->ndim - 1] = out;
    char child[32];
    int64_t wd[2] = {out, in}, bd[1] = {out};
    st = !ok ? nomem(ip) : call_child(ip, ip->node->name[0] ? ip->node->name : "fc", l, x, x->ndim, dims, child);
    if (!st) st = weight(ip, child, "weight", 2, wd, wt);
    if (!st && c) st = weight(ip, child, "bias", 1, bd, bias);
    free(wt), free(bias);
    return st;
}

static vs_status op_norm(imp *ip, bool instance)
{
    static const char *const keys[] = {"epsilon", "momentum", "training_mode", "spatial", NULL};
    vs_status st = only_attrs(ip, keys);
    if (st) return st;
    if (attr_int(ip->node, "training_mode", 0)) return fail(ip, "training_mode = 1 is not supported (export in eval mode)");
    val *x = input(ip, 0);
    if (!x || x->is_const) return fail(ip, "input 0 must depend on the model's input");
    val *p[4] = {0};
    for (int k = 0; k < (instance ? 2 : 4); k++)
        if (!(p[k] = need_const(ip, k + 1, k == 0 ? "scale" : k == 1 ? "bias" : k == 2 ? "mean" : "var"))) return ip->err->code;
    int64_t c = p[0]->n;
    for (int k = 0; k < (instance ? 2 : 4); k++)
        if (!p[k]->f || p[k]->n != c) return fail(ip, "scale, bias, mean and var must be float vectors of one size");
    if (x->ndim >= 2 && x->dims[1] >= 0 && x->dims[1] != c)
        return fail(ip, "the input has %lld channels, the parameters %lld", (long long)x->dims[1], (long long)c);
    const char *op = instance ? "instance_norm2d" : x->ndim == 4 ? "batch_norm2d" : "batch_norm1d";
    if (x->ndim != 4 && (instance || (x->ndim != 2 && x->ndim != 3))) return fail(ip, "a %d-d input is not supported", x->ndim);
    vs_json *l = layer_json(op);
    bool ok = set_int(l, "features", c) && vs_json_set(l, "eps", vs_json_new_number(attr_float(ip->node, "epsilon", 1e-5f))) == VS_OK;
    if (ok && instance) ok = vs_json_set(l, "affine", vs_json_new_bool(true)) == VS_OK;
    if (!ok) {
        vs_json_free(l);
        return nomem(ip);
    }
    char child[32];
    int64_t d[1] = {c};
    if ((st = call_child(ip, ip->node->name[0] ? ip->node->name : "bn", l, x, x->ndim, x->dims, child))) return st;
    static const char *const names[] = {"weight", "bias", "running_mean", "running_var"};
    for (int k = 0; k < (instance ? 2 : 4) && !st; k++) st = weight(ip, child, names[k], 1, d, p[k]->f);
    return st;
}

/* ---- nodes without weights ----------------------------------------------------------------------- */

/* A program node writing output 0: start it, let the caller add fields, finish it. */
static vs_json *start(imp *ip, const char *op, val *const *in, int n_in, char out[32])
{
    if (fresh(ip, ip->node->out[0], "v", out)) return NULL;
    return node_json(ip, op, in, n_in, out);
}

static vs_status finish(imp *ip, vs_json *o, bool ok, const char *out, int ndim, const int64_t *dims)
{
    if (!o) return ip->err->code ? ip->err->code : nomem(ip);
    if (!ok) {
        vs_json_free(o);
        return nomem(ip);
    }
    if (emit(ip, o)) return ip->err->code;
    val *y = new_val(ip, ip->node->out[0]);
    if (!y) return ip->err->code;
    memcpy(y->name, out, 32);
    y->ndim = ndim;
    for (int d = 0; d < ndim && d < VS_ONNX_MAX_DIMS; d++) y->dims[d] = dims ? dims[d] : -1;
    if (ndim > 0) y->dims[0] = -1;
    return VS_OK;
}

static vs_status simple_n(imp *ip, const char *op, val *const *in, int n_in, int ndim, const int64_t *dims)
{
    char out[32];
    vs_json *o = start(ip, op, in, n_in, out);
    return finish(ip, o, true, out, ndim, dims);
}

static vs_status simple(imp *ip, const char *op, val *x, int ndim, const int64_t *dims) { return simple_n(ip, op, &x, 1, ndim, dims); }

/* Output 0 is input 0 under another name (Identity, Dropout, a Cast of a computed value). */
static vs_status alias(imp *ip)
{
    val *x = input(ip, 0);
    if (!x) return fail(ip, "input 0 is missing");
    val *y = new_val(ip, ip->node->out[0]);
    if (!y) return ip->err->code;
    const char *onnx = y->onnx;
    *y = *x;
    y->onnx = onnx, y->owned = false;
    return VS_OK;
}

static int64_t elem(const val *v, int64_t k) { return v->i ? v->i[k] : (int64_t)v->f[k]; }

/* NumPy broadcasting of two shapes (-1: unknown); false when they do not fit. */
static bool broadcast(int na, const int64_t *a, int nb, const int64_t *b, int *n, int64_t *d)
{
    *n = na > nb ? na : nb;
    for (int k = 0; k < *n; k++) {
        int64_t x = k - (*n - na) >= 0 ? a[k - (*n - na)] : 1, y = k - (*n - nb) >= 0 ? b[k - (*n - nb)] : 1;
        if (x == 1) d[k] = y;
        else if (y == 1 || x == y) d[k] = x;
        else if (x < 0 || y < 0) d[k] = x < 0 ? y : x;
        else return false;
    }
    return true;
}

static double fold1(const char *op, double a, double b)
{
    if (!strcmp(op, "Add")) return a + b;
    if (!strcmp(op, "Sub")) return a - b;
    if (!strcmp(op, "Mul")) return a * b;
    if (!strcmp(op, "Div")) return a / b;
    if (!strcmp(op, "Max")) return a > b ? a : b;
    if (!strcmp(op, "Min")) return a < b ? a : b;
    return pow(a, b);
}

/* a op b for the node's output: folded when both are constants, else a program node (broadcasting). */
static vs_status binary(imp *ip, const char *op, val *a, val *b)
{
    int n;
    int64_t d[VS_ONNX_MAX_DIMS];
    if (a->is_const && b->is_const) {
        if (!broadcast(a->ndim, a->dims, b->ndim, b->dims, &n, d)) return fail(ip, "the constants' shapes do not broadcast");
        int64_t total = 1;
        for (int k = 0; k < n; k++) total *= d[k];
        if (total > MAX_CONST_NODE) return fail(ip, "a folded constant of more than 2^20 elements");
        bool fl = a->f || b->f;
        float *f = fl ? malloc((size_t)(total ? total : 1) * sizeof *f) : NULL;
        int64_t *iv = fl ? NULL : malloc((size_t)(total ? total : 1) * sizeof *iv);
        if (!f && !iv) return nomem(ip);
        for (int64_t e = 0; e < total; e++) {
            int64_t ia = 0, ib = 0, rest = e, sa = 1, sb = 1;
            for (int k = n - 1; k >= 0; k--) {
                int64_t idx = rest % d[k];
                rest /= d[k];
                int ka = k - (n - a->ndim), kb = k - (n - b->ndim);
                if (ka >= 0) ia += (a->dims[ka] == 1 ? 0 : idx) * sa, sa *= a->dims[ka];
                if (kb >= 0) ib += (b->dims[kb] == 1 ? 0 : idx) * sb, sb *= b->dims[kb];
            }
            if ((a->i && a->i[ia] == BATCH) || (b->i && b->i[ib] == BATCH)) {
                free(f), free(iv);
                return fail(ip, "arithmetic on the batch size is not supported");
            }
            double x = a->f ? a->f[ia] : (double)a->i[ia], y = b->f ? b->f[ib] : (double)b->i[ib];
            if (fl) f[e] = (float)fold1(op, x, y);
            else if (!strcmp(op, "Div") && y == 0) {
                free(iv);
                return fail(ip, "integer division by zero in a constant");
            } else iv[e] = !strcmp(op, "Div") ? (int64_t)(x / y) : (int64_t)fold1(op, x, y);
        }
        return const_out(ip, 0, n, d, f, iv) ? VS_OK : ip->err->code;
    }
    if (!broadcast(a->ndim, a->dims, b->ndim, b->dims, &n, d)) return fail(ip, "the inputs' shapes do not broadcast");
    const char *name = !strcmp(op, "Add") ? "add" : !strcmp(op, "Mul") ? "mul" : !strcmp(op, "Sub") ? "sub" : !strcmp(op, "Div") ? "div"
                       : !strcmp(op, "Max") ? "max" : !strcmp(op, "Min") ? "min" : "pow";
    val *in[2] = {a, b};
    return simple_n(ip, name, in, 2, n, d);
}

static vs_status op_binary(imp *ip)
{
    val *a = input(ip, 0), *b = input(ip, 1);
    if (!a || !b || ip->node->n_in != 2) return fail(ip, "exactly two inputs are supported");
    return binary(ip, ip->node->op_type, a, b);
}

/* ---- ConstantOfShape, Expand, Tile ----------------------------------------------------------------- */

/* The sizes of a 1-D integer constant used as a shape (what: "shape", "repeats"); the batch size as 1
 * when batch_ok (it broadcasts), else refused; each at least min. */
static vs_status shape_of(imp *ip, const val *s, const char *what, bool batch_ok, int64_t min, int *nd, int64_t *d)
{
    if (s->ndim != 1 || !s->i) return fail(ip, "%s must be a 1-D integer constant", what);
    if (s->n > VS_ONNX_MAX_DIMS) return fail(ip, "%s has %lld entries (at most %d dims)", what, (long long)s->n, VS_ONNX_MAX_DIMS);
    int64_t total = 1;
    for (int64_t k = 0; k < s->n; k++) {
        int64_t v = s->i[k];
        if (v == BATCH && !batch_ok) return fail(ip, "%s entry %lld is the batch size, which is not supported here", what, (long long)k);
        if (v == BATCH) v = 1;
        if (v < min) return fail(ip, "%s entry %lld is %lld (at least %lld expected)", what, (long long)k, (long long)v, (long long)min);
        if (v > 0 && total > MAX_CONST_NODE / v) return fail(ip, "%s makes more than 2^20 elements", what);
        d[k] = v, total *= v;
    }
    *nd = (int)s->n;
    return VS_OK;
}

/* A constant of the shape given by input 0, every element the one-element tensor "value" (float 0
 * when absent); folded, as exporters use it for shapes and repeat counts. */
static vs_status op_constant_of_shape(imp *ip)
{
    static const char *const keys[] = {"value", NULL};
    val *s = need_const(ip, 0, "shape");
    if (!s || only_attrs(ip, keys)) return ip->err->code;
    int nd;
    int64_t d[VS_ONNX_MAX_DIMS], total = 1;
    if (shape_of(ip, s, "the shape", false, 0, &nd, d)) return ip->err->code;
    for (int k = 0; k < nd; k++) total *= d[k];
    const vs_onnx_tensor *t = ip->node->n_attr ? ip->node->attr[0].t : NULL;
    if (ip->node->n_attr && (!t || t->n != 1 || (!t->f && !t->i))) return fail(ip, "\"value\" must be a one-element tensor");
    bool fl = !t || t->f;
    float *f = fl ? malloc((size_t)(total ? total : 1) * sizeof *f) : NULL;
    int64_t *iv = fl ? NULL : malloc((size_t)(total ? total : 1) * sizeof *iv);
    if (!f && !iv) return nomem(ip);
    for (int64_t e = 0; e < total; e++) {
        if (fl) f[e] = t ? t->f[0] : 0.0f;
        else iv[e] = t->i[0];
    }
    return const_out(ip, 0, nd, d, f, iv) ? VS_OK : ip->err->code;
}

/* x broadcast to nd/d (NumPy rules) as x * ones(d): the program's mul broadcasts, and its gradient
 * sums over the broadcast dims as Expand's does. */
static vs_status broadcast_to(imp *ip, val *x, int nd, const int64_t *d)
{
    int64_t total = 1;
    for (int k = 0; k < nd; k++) total *= d[k];
    bool fl = !x->is_const || x->f;
    float *f = fl ? malloc((size_t)(total ? total : 1) * sizeof *f) : NULL;
    int64_t *iv = fl ? NULL : malloc((size_t)(total ? total : 1) * sizeof *iv);
    val *ones = (f || iv) ? new_val(ip, "") : NULL;
    if (!ones) {
        free(f), free(iv);
        return ip->err->code ? ip->err->code : nomem(ip);
    }
    for (int64_t e = 0; e < total; e++) {
        if (fl) f[e] = 1.0f;
        else iv[e] = 1;
    }
    ones->is_const = true, ones->owned = true, ones->f = f, ones->i = iv, ones->ndim = nd, ones->n = total;
    for (int k = 0; k < nd; k++) ones->dims[k] = d[k];
    return binary(ip, "Mul", x, ones);
}

static vs_status op_expand(imp *ip)
{
    val *x = input(ip, 0), *s = need_const(ip, 1, "shape");
    if (!x) return fail(ip, "input 0 is missing");
    if (!s || only_attrs(ip, (const char *const[]){NULL})) return ip->err->code;
    int nd;
    int64_t d[VS_ONNX_MAX_DIMS];
    if (shape_of(ip, s, "the shape", true, 1, &nd, d)) return ip->err->code;
    return broadcast_to(ip, x, nd, d);
}

/* Tile by repeat counts: only dims of size 1 may repeat (a broadcast, as exporters write for
 * x.view(n, k, 1, 1).repeat(1, 1, h, w), StarGAN's label planes); a repeated dim of size > 1 is refused. */
static vs_status op_tile(imp *ip)
{
    val *x = input(ip, 0), *r = need_const(ip, 1, "repeats");
    if (!x) return fail(ip, "input 0 is missing");
    if (!r || only_attrs(ip, (const char *const[]){NULL})) return ip->err->code;
    int nd;
    int64_t d[VS_ONNX_MAX_DIMS];
    if (shape_of(ip, r, "repeats", false, 1, &nd, d)) return ip->err->code;
    if (x->ndim < 0 || nd != x->ndim) return fail(ip, "repeats has %d entries for an input of rank %d", nd, x->ndim);
    for (int k = 0; k < nd; k++)
        if (d[k] != 1 && x->dims[k] != 1)
            return fail(ip, "dim %d of size %lld is repeated %lld times: only dims of size 1 can be tiled (a broadcast)", k,
                        (long long)x->dims[k], (long long)d[k]);
    return broadcast_to(ip, x, nd, d);
}

static val *computed(imp *ip, int j)
{
    val *x = input(ip, j);
    if (!x) fail(ip, "input %d is missing", j);
    else if (x->is_const) {
        fail(ip, "input %d is a constant; only values computed from the model's input are supported here", j);
        x = NULL;
    }
    return x;
}

static vs_status op_unary(imp *ip)
{
    const char *op = ip->node->op_type;
    val *x = computed(ip, 0);
    if (!x) return ip->err->code;
    char out[32];
    vs_json *o;
    bool ok = true;
    if (!strcmp(op, "Relu")) return simple(ip, "relu", x, x->ndim, x->dims);
    if (!strcmp(op, "Sigmoid")) return simple(ip, "sigmoid", x, x->ndim, x->dims);
    if (!strcmp(op, "Tanh")) return simple(ip, "tanh", x, x->ndim, x->dims);
    if (!strcmp(op, "Sqrt")) return simple(ip, "sqrt", x, x->ndim, x->dims);
    if (!strcmp(op, "HardSwish")) return simple(ip, "hardswish", x, x->ndim, x->dims);
    if (!strcmp(op, "LeakyRelu")) {
        o = start(ip, "leaky_relu", &x, 1, out);
        ok = o && vs_json_set(o, "slope", vs_json_new_number(attr_float(ip->node, "alpha", 0.01f))) == VS_OK;
    } else if (!strcmp(op, "HardSigmoid")) {
        o = start(ip, "hardsigmoid", &x, 1, out);
        ok = o && vs_json_set(o, "alpha", vs_json_new_number(attr_float(ip->node, "alpha", 0.2f))) == VS_OK &&
             vs_json_set(o, "beta", vs_json_new_number(attr_float(ip->node, "beta", 0.5f))) == VS_OK;
    } else if (!strcmp(op, "Clip")) {
        double lo = attr_float(ip->node, "min", -INFINITY), hi = attr_float(ip->node, "max", INFINITY);
        for (int j = 1; j < 3; j++) {
            if (!input(ip, j)) continue;
            val *c = need_const(ip, j, j == 1 ? "min" : "max");
            if (!c) return ip->err->code;
            if (c->n != 1) return fail(ip, "min and max must be scalars");
            *(j == 1 ? &lo : &hi) = c->f ? c->f[0] : (double)c->i[0];
        }
        if (lo == 0 && isinf(hi)) return simple(ip, "relu", x, x->ndim, x->dims);
        o = start(ip, "clip", &x, 1, out);
        if (o && isfinite(lo)) ok = vs_json_set(o, "min", vs_json_new_number(lo)) == VS_OK;
        if (o && ok && isfinite(hi)) ok = vs_json_set(o, "max", vs_json_new_number(hi)) == VS_OK;
    } else { /* Softmax, LogSoftmax */
        int64_t axis = attr_int(ip->node, "axis", ip->m->opset >= 13 ? -1 : 1);
        if (x->ndim < 0) return fail(ip, "the input's rank is unknown");
        if (axis < 0) axis += x->ndim;
        if (axis < 1 || axis >= x->ndim) return fail(ip, "axis %lld: only axes past the batch are supported", (long long)axis);
        if (ip->m->opset < 13 && axis != x->ndim - 1)
            return fail(ip, "before opset 13 softmax flattens the dims from its axis on; only the last axis is supported");
        o = start(ip, !strcmp(op, "Softmax") ? "softmax" : "log_softmax", &x, 1, out);
        ok = o && vs_json_set(o, "axis", vs_json_new_int(axis)) == VS_OK;
    }
    return finish(ip, o, ok, out, x->ndim, x->dims);
}

static vs_status op_pool(imp *ip)
{
    const char *op = ip->node->op_type;
    val *x = computed(ip, 0);
    if (!x) return ip->err->code;
    if (x->ndim != 4) return fail(ip, "only 2-d pooling of [n, c, h, w] values is supported");
    int64_t dims[4] = {-1, x->dims[1], 1, 1};
    if (!strcmp(op, "GlobalAveragePool")) { /* [n,c] then [n,c,1,1] */
        char out[32];
        vs_status st = simple(ip, "global_avg_pool", x, 2, dims);
        if (st) return st;
        val *g = ip->vals[ip->n_vals - 1];
        g->onnx = "";
        vs_json *o = start(ip, "reshape", &g, 1, out);
        int64_t shape[3] = {-1, 1, 1};
        return finish(ip, o, o && vs_json_set(o, "shape", vs_json_new_int_array(shape, 3)) == VS_OK, out, 4, dims);
    }
    static const char *const keys[] = {"kernel_shape", "strides", "pads", "auto_pad", "ceil_mode", "dilations", "count_include_pad",
                                       "storage_order", NULL};
    vs_status st = only_attrs(ip, keys);
    if (st) return st;
    bool max = !strcmp(op, "MaxPool");
    if (max && ip->node->n_out > 1 && ip->node->out[1][0]) return fail(ip, "the Indices output is not supported");
    int64_t k[8];
    if (attr_ints(ip->node, "kernel_shape", k, 8) != 2) return fail(ip, "kernel_shape: expected 2 values");
    window w;
    if ((st = window_of(ip, x, k[0], k[1], &w))) return st;
    if (w.pad_node) return fail(ip, "asymmetric pads are not supported for pooling");
    if (w.p > w.k / 2) return fail(ip, "padding %lld is more than half the kernel %lld", (long long)w.p, (long long)w.k);
    if (!max && w.d != 1) return fail(ip, "dilated average pooling is not supported");
    if (!max && w.p > 0 && !attr_int(ip->node, "count_include_pad", 0))
        return fail(ip, "padded average pooling must count the padding (count_include_pad = 1)");
    bool ceil_mode = attr_int(ip->node, "ceil_mode", 0) != 0;
    char out[32];
    vs_json *o = start(ip, max ? "max_pool2d" : "avg_pool2d", &x, 1, out);
    bool ok = set_int(o, "kernel", w.k) && set_int(o, "stride", w.s) && set_int(o, "padding", w.p) &&
              vs_json_set(o, "ceil_mode", vs_json_new_bool(ceil_mode)) == VS_OK && (!max || set_int(o, "dilation", w.d));
    for (int a = 0; a < 2; a++) dims[2 + a] = window_side(x->dims[2 + a], &w, ceil_mode);
    return finish(ip, o, ok, out, 4, dims);
}

/* The per-example shape of a reshape to `to` (ONNX's 0 copies a dim, -1 is inferred, BATCH is the batch). */
static vs_status reshape_to(imp *ip, val *x, int nd, const int64_t *to, bool allowzero)
{
    int64_t shape[VS_ONNX_MAX_DIMS], dims[VS_ONNX_MAX_DIMS];
    if (nd < 1 || nd > VS_ONNX_MAX_DIMS) return fail(ip, "a target of %d dims is not supported", nd);
    /* an export at batch 1 without dynamic axes writes the batch as the number 1 */
    if (!(to[0] == BATCH || to[0] == 1 || (to[0] == 0 && !allowzero) || (to[0] == -1 && nd > 1)))
        return fail(ip, "the target shape's first dim must stay the batch (found %lld)", (long long)to[0]);
    int unknown = 0;
    for (int k = 1; k < nd; k++) {
        int64_t t = to[k];
        if (t == 0 && !allowzero) {
            if (k >= x->ndim || x->dims[k] < 0) return fail(ip, "target dim %d copies an unknown input dim", k);
            t = x->dims[k];
        }
        if (t == BATCH || t < -1 || t == 0) return fail(ip, "target dim %d (%lld) is not supported", k, (long long)to[k]);
        if (t == -1 && unknown++) return fail(ip, "more than one -1 in the target shape");
        shape[k - 1] = t;
        dims[k] = t;
    }
    if (to[0] == -1) { /* then every other dim is fixed and the batch is what remains */
        if (unknown) return fail(ip, "-1 for the batch and another dim");
    }
    dims[0] = -1;
    if (nd == 1) return fail(ip, "a reshape to one dim (the batch and the features merged) is not supported");
    char out[32];
    vs_json *o = start(ip, "reshape", &x, 1, out);
    return finish(ip, o, o && vs_json_set(o, "shape", vs_json_new_int_array(shape, nd - 1)) == VS_OK, out, nd, dims);
}

static vs_status op_flatten(imp *ip)
{
    val *x = computed(ip, 0);
    if (!x) return ip->err->code;
    int64_t axis = attr_int(ip->node, "axis", 1);
    if (x->ndim < 0) return fail(ip, "the input's rank is unknown");
    if (axis < 0) axis += x->ndim;
    int64_t dims[2] = {-1, 1};
    for (int k = 1; k < x->ndim; k++) dims[1] = x->dims[k] < 0 || dims[1] < 0 ? -1 : dims[1] * x->dims[k];
    if (axis == 1) return simple(ip, "flatten", x, 2, dims);
    int64_t to[VS_ONNX_MAX_DIMS] = {BATCH};
    if (axis < 1 || axis > x->ndim) return fail(ip, "axis %lld: only axes past the batch are supported", (long long)axis);
    for (int k = 1; k < axis; k++) to[k] = x->dims[k];
    to[axis] = -1;
    return reshape_to(ip, x, (int)axis + 1, to, false);
}

/* The axes of Squeeze / Unsqueeze / ReduceX: attribute (older opsets) or constant input 1. */
static int axes_of(imp *ip, int64_t *ax, int rank, bool *given)
{
    int n = attr_ints(ip->node, "axes", ax, VS_ONNX_MAX_DIMS);
    *given = true;
    if (n < 0 && input(ip, 1)) {
        val *c = need_const(ip, 1, "axes");
        if (!c) return -1;
        if (c->n > VS_ONNX_MAX_DIMS) return fail(ip, "too many axes"), -1;
        for (int64_t k = 0; k < c->n; k++) ax[k] = elem(c, k);
        n = (int)c->n;
    }
    if (n < 0) *given = false, n = 0;
    if (n > VS_ONNX_MAX_DIMS) return fail(ip, "too many axes"), -1;
    for (int k = 0; k < n; k++) {
        if (ax[k] < 0) ax[k] += rank;
        if (ax[k] < 0 || ax[k] >= rank) return fail(ip, "axis %lld is out of range for rank %d", (long long)ax[k], rank), -1;
    }
    return n;
}

static bool has_axis(const int64_t *ax, int n, int64_t a)
{
    for (int k = 0; k < n; k++)
        if (ax[k] == a) return true;
    return false;
}

static vs_status op_squeeze(imp *ip, bool un)
{
    val *x = input(ip, 0);
    if (!x) return fail(ip, "input 0 is missing");
    if (x->ndim < 0) return fail(ip, "the input's rank is unknown");
    int64_t ax[VS_ONNX_MAX_DIMS], to[VS_ONNX_MAX_DIMS];
    bool given;
    int n = axes_of(ip, ax, un ? 1 << 20 : x->ndim, &given); /* Unsqueeze: the count first, then the axes in the output's rank */
    if (n < 0) return ip->err->code;
    int rank = 0;
    if (un) {
        int out_rank = x->ndim + n;
        if (out_rank > VS_ONNX_MAX_DIMS) return fail(ip, "more than 8 dims");
        n = axes_of(ip, ax, out_rank, &given); /* axes count in the output's rank */
        if (n < 0) return ip->err->code;
        for (int k = 0, src = 0; k < out_rank; k++) to[rank++] = has_axis(ax, n, k) ? 1 : x->dims[src++];
    } else {
        for (int k = 0; k < x->ndim; k++) {
            bool drop = given ? has_axis(ax, n, k) : x->dims[k] == 1;
            if (drop && x->dims[k] != 1 && !(x->is_const && x->dims[k] == 1))
                return fail(ip, "dim %d is %lld, not 1 (or unknown)", k, (long long)x->dims[k]);
            if (!drop) to[rank++] = x->dims[k];
        }
    }
    if (x->is_const) { /* same data, new dims */
        float *f = x->f ? malloc((size_t)(x->n ? x->n : 1) * sizeof *f) : NULL;
        int64_t *iv = x->i ? malloc((size_t)(x->n ? x->n : 1) * sizeof *iv) : NULL;
        if ((x->f && !f) || (x->i && !iv)) return free(f), free(iv), nomem(ip);
        if (f) memcpy(f, x->f, (size_t)x->n * sizeof *f);
        if (iv) memcpy(iv, x->i, (size_t)x->n * sizeof *iv);
        return const_out(ip, 0, rank, to, f, iv) ? VS_OK : ip->err->code;
    }
    if ((un && has_axis(ax, n, 0)) || (!un && (given ? has_axis(ax, n, 0) : false)))
        return fail(ip, "the batch dim (0) cannot be squeezed or unsqueezed");
    to[0] = BATCH;
    for (int k = 1; k < rank; k++)
        if (to[k] < 0) return fail(ip, "dim %d of the result is unknown (export with a fixed input size)", k);
    return reshape_to(ip, x, rank, to, false);
}

static vs_status op_reshape(imp *ip)
{
    val *x = computed(ip, 0), *s = x ? need_const(ip, 1, "shape") : NULL;
    if (!s) return ip->err->code;
    if (s->ndim != 1 || s->f || s->n > VS_ONNX_MAX_DIMS) return fail(ip, "the shape must be an integer vector of at most 8 dims");
    return reshape_to(ip, x, (int)s->n, s->i, attr_int(ip->node, "allowzero", 0) != 0);
}

static vs_status op_transpose(imp *ip)
{
    val *x = computed(ip, 0);
    if (!x) return ip->err->code;
    if (x->ndim < 1) return fail(ip, "the input's rank is unknown");
    int64_t perm[VS_ONNX_MAX_DIMS], dims[VS_ONNX_MAX_DIMS];
    int n = attr_ints(ip->node, "perm", perm, VS_ONNX_MAX_DIMS);
    if (n < 0)
        for (n = 0; n < x->ndim; n++) perm[n] = x->ndim - 1 - n;
    if (n != x->ndim) return fail(ip, "perm has %d entries for a %d-d input", n, x->ndim);
    if (perm[0] != 0) return fail(ip, "perm must keep the batch (dim 0) first");
    for (int k = 0; k < n; k++) {
        if (perm[k] < 0 || perm[k] >= n) return fail(ip, "perm: %lld is out of range", (long long)perm[k]);
        dims[k] = x->dims[perm[k]];
    }
    char out[32];
    vs_json *o = start(ip, "transpose", &x, 1, out);
    return finish(ip, o, o && vs_json_set(o, "perm", vs_json_new_int_array(perm, n)) == VS_OK, out, n, dims);
}

static vs_status op_concat(imp *ip)
{
    int n_in = ip->node->n_in;
    if (n_in < 1 || n_in > 64) return fail(ip, "1 to 64 inputs are supported");
    val *in[64];
    bool all_const = true;
    for (int k = 0; k < n_in; k++) {
        if (!(in[k] = input(ip, k))) return fail(ip, "input %d is missing", k);
        all_const = all_const && in[k]->is_const;
    }
    int rank = in[0]->ndim;
    int64_t axis = attr_int(ip->node, "axis", 0);
    if (rank < 1) return fail(ip, "the inputs' rank is unknown or 0");
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return fail(ip, "axis %lld is out of range", (long long)axis);
    int64_t dims[VS_ONNX_MAX_DIMS];
    memcpy(dims, in[0]->dims, sizeof dims);
    dims[axis] = 0;
    for (int k = 0; k < n_in; k++) {
        if (in[k]->ndim != rank) return fail(ip, "the inputs differ in rank");
        dims[axis] = dims[axis] < 0 || in[k]->dims[axis] < 0 ? -1 : dims[axis] + in[k]->dims[axis];
    }
    if (all_const) { /* shape vectors: joined along their only axis */
        if (rank != 1) return fail(ip, "only 1-d constants are joined");
        bool fl = false;
        for (int k = 0; k < n_in; k++) fl = fl || in[k]->f;
        float *f = fl ? malloc((size_t)(dims[0] + 1) * sizeof *f) : NULL;
        int64_t *iv = fl ? NULL : malloc((size_t)(dims[0] + 1) * sizeof *iv);
        if (!f && !iv) return nomem(ip);
        for (int k = 0, at = 0; k < n_in; k++)
            for (int64_t e = 0; e < in[k]->n; e++, at++) {
                if (fl) f[at] = in[k]->f ? in[k]->f[e] : (float)in[k]->i[e];
                else iv[at] = in[k]->i[e];
            }
        return const_out(ip, 0, 1, dims, f, iv) ? VS_OK : ip->err->code;
    }
    if (n_in == 1) return alias(ip);
    if (axis == 0) return fail(ip, "joining along the batch (axis 0) is not supported");
    char out[32];
    vs_json *o = start(ip, "concat", in, n_in, out);
    return finish(ip, o, o && vs_json_set(o, "axis", vs_json_new_int(axis)) == VS_OK, out, rank, dims);
}

static vs_status op_gather(imp *ip)
{
    val *x = input(ip, 0), *idx = need_const(ip, 1, "indices");
    if (!x || !idx) return ip->err->code ? ip->err->code : fail(ip, "input 0 is missing");
    if (idx->f) return fail(ip, "indices must be integers");
    int64_t axis = attr_int(ip->node, "axis", 0);
    if (x->ndim < 1) return fail(ip, "the input's rank is unknown or 0");
    if (axis < 0) axis += x->ndim;
    if (axis < 0 || axis >= x->ndim) return fail(ip, "axis %lld is out of range", (long long)axis);
    int64_t side = x->dims[axis];
    if (x->is_const) { /* a shape's entries: 1-d data, scalar or vector indices */
        if (x->ndim != 1) return fail(ip, "only 1-d constants are gathered from");
        int64_t n = idx->n, d[1] = {n};
        int64_t *iv = x->i ? malloc((size_t)(n + 1) * sizeof *iv) : NULL;
        float *f = x->f ? malloc((size_t)(n + 1) * sizeof *f) : NULL;
        if (!iv && !f) return nomem(ip);
        for (int64_t e = 0; e < n; e++) {
            int64_t j = idx->i[e] < 0 ? idx->i[e] + side : idx->i[e];
            if (j < 0 || j >= side) {
                free(iv), free(f);
                return fail(ip, "index %lld is outside [0, %lld)", (long long)idx->i[e], (long long)side);
            }
            if (iv) iv[e] = x->i[j];
            else f[e] = x->f[j];
        }
        return const_out(ip, 0, idx->ndim, d, f, iv) ? VS_OK : ip->err->code;
    }
    if (idx->ndim != 0) return fail(ip, "only a scalar index is supported for a computed input");
    if (axis == 0) return fail(ip, "gathering along the batch (axis 0) is not supported");
    int64_t dims[VS_ONNX_MAX_DIMS];
    for (int k = 0, o = 0; k < x->ndim; k++)
        if (k != axis) dims[o++] = x->dims[k];
    char out[32];
    vs_json *o = start(ip, "gather", &x, 1, out);
    bool ok = o && vs_json_set(o, "axis", vs_json_new_int(axis)) == VS_OK && vs_json_set(o, "index", vs_json_new_int(idx->i[0])) == VS_OK;
    return finish(ip, o, ok, out, x->ndim - 1, dims);
}

static vs_status op_pad(imp *ip)
{
    val *x = computed(ip, 0);
    if (!x) return ip->err->code;
    const vs_onnx_attr *mode = vs_onnx_attr_get(ip->node, "mode");
    if (mode && mode->s && strcmp(mode->s, "constant")) return fail(ip, "mode \"%s\": only constant padding is supported", mode->s);
    int64_t pads[2 * VS_ONNX_MAX_DIMS];
    int n = attr_ints(ip->node, "pads", pads, 2 * VS_ONNX_MAX_DIMS);
    float value = attr_float(ip->node, "value", 0.0f);
    if (n < 0) {
        val *p = need_const(ip, 1, "pads");
        if (!p) return ip->err->code;
        if (p->f || p->n > 2 * VS_ONNX_MAX_DIMS) return fail(ip, "pads must be at most 16 integers");
        for (int64_t k = 0; k < p->n; k++) pads[k] = p->i[k];
        n = (int)p->n;
        val *c = input(ip, 2);
        if (c && (!c->is_const || c->n != 1)) return fail(ip, "the constant value must be a scalar constant");
        if (c) value = c->f ? c->f[0] : (float)c->i[0];
    }
    if (input(ip, 3)) return fail(ip, "the axes input is not supported");
    if (x->ndim < 1 || n != 2 * x->ndim) return fail(ip, "pads has %d values for a %d-d input", n, x->ndim);
    int r = x->ndim;
    if (pads[0] || pads[r]) return fail(ip, "the batch dim cannot be padded");
    int64_t p[2 * VS_ONNX_MAX_DIMS], dims[VS_ONNX_MAX_DIMS];
    for (int k = 1; k < r; k++) {
        if (pads[k] < 0 || pads[r + k] < 0 || pads[k] > 1 << 20 || pads[r + k] > 1 << 20) return fail(ip, "negative or huge pads are not supported");
        p[2 * (k - 1)] = pads[k], p[2 * (k - 1) + 1] = pads[r + k];
        dims[k] = x->dims[k] < 0 ? -1 : x->dims[k] + pads[k] + pads[r + k];
    }
    char out[32];
    vs_json *o = start(ip, "pad", &x, 1, out);
    bool ok = o && vs_json_set(o, "pads", vs_json_new_int_array(p, 2 * (r - 1))) == VS_OK && vs_json_set(o, "value", vs_json_new_number(value)) == VS_OK;
    return finish(ip, o, ok, out, r, dims);
}

static vs_status op_reduce(imp *ip)
{
    val *x = computed(ip, 0);
    if (!x) return ip->err->code;
    if (x->ndim < 1) return fail(ip, "the input's rank is unknown");
    int64_t ax[VS_ONNX_MAX_DIMS], dims[VS_ONNX_MAX_DIMS];
    bool given, keep = attr_int(ip->node, "keepdims", 1) != 0;
    int n = axes_of(ip, ax, x->ndim, &given);
    if (n < 0) return ip->err->code;
    if (!given || n == 0) {
        if (attr_int(ip->node, "noop_with_empty_axes", 0)) return alias(ip);
        return fail(ip, "reducing over every dim (the batch too) is not supported");
    }
    if (has_axis(ax, n, 0)) return fail(ip, "the batch (dim 0) cannot be reduced");
    int r = 0;
    for (int k = 0; k < x->ndim; k++)
        if (!has_axis(ax, n, k)) dims[r++] = x->dims[k];
        else if (keep) dims[r++] = 1;
    char out[32];
    vs_json *o = start(ip, !strcmp(ip->node->op_type, "ReduceMean") ? "reduce_mean" : "reduce_sum", &x, 1, out);
    bool ok = o && vs_json_set(o, "axes", vs_json_new_int_array(ax, n)) == VS_OK && vs_json_set(o, "keepdims", vs_json_new_bool(keep)) == VS_OK;
    return finish(ip, o, ok, out, r, dims);
}

static vs_status op_constant(imp *ip)
{
    const vs_onnx_attr *a = ip->node->n_attr == 1 ? &ip->node->attr[0] : NULL;
    if (!a) return fail(ip, "expected exactly one attribute (value, value_float, value_floats, value_int or value_ints)");
    int64_t d[1] = {a->n};
    if (!strcmp(a->name, "value") && a->t) {
        const vs_onnx_tensor *t = a->t;
        size_t n = (size_t)(t->n ? t->n : 1);
        float *f = t->f ? malloc(n * sizeof *f) : NULL;
        int64_t *iv = t->i ? malloc(n * sizeof *iv) : NULL;
        if ((t->f && !f) || (t->i && !iv)) return free(f), free(iv), nomem(ip);
        if (f) memcpy(f, t->f, (size_t)t->n * sizeof *f);
        if (iv) memcpy(iv, t->i, (size_t)t->n * sizeof *iv);
        return const_out(ip, 0, t->ndim, t->dims, f, iv) ? VS_OK : ip->err->code;
    }
    if (!strcmp(a->name, "value_float") || !strcmp(a->name, "value_int")) {
        float *f = a->type == VS_ONNX_ATTR_FLOAT ? malloc(sizeof *f) : NULL;
        int64_t *iv = a->type == VS_ONNX_ATTR_INT ? malloc(sizeof *iv) : NULL;
        if (!f && !iv) return fail(ip, "attribute \"%s\" has the wrong type", a->name);
        if (f) *f = a->f;
        else *iv = a->i;
        return const_out(ip, 0, 0, d, f, iv) ? VS_OK : ip->err->code;
    }
    if ((!strcmp(a->name, "value_floats") && a->type == VS_ONNX_ATTR_FLOATS) || (!strcmp(a->name, "value_ints") && a->type == VS_ONNX_ATTR_INTS)) {
        bool fl = a->type == VS_ONNX_ATTR_FLOATS;
        float *f = fl ? malloc((size_t)(a->n + 1) * sizeof *f) : NULL;
        int64_t *iv = fl ? NULL : malloc((size_t)(a->n + 1) * sizeof *iv);
        if (!f && !iv) return nomem(ip);
        if (fl) memcpy(f, a->floats, (size_t)a->n * sizeof *f);
        else memcpy(iv, a->ints, (size_t)a->n * sizeof *iv);
        return const_out(ip, 0, 1, d, f, iv) ? VS_OK : ip->err->code;
    }
    return fail(ip, "attribute \"%s\" is not supported", a->name);
}

static vs_status op_shape(imp *ip)
{
    val *x = input(ip, 0);
    if (!x) return fail(ip, "input 0 is missing");
    if (x->ndim < 0) return fail(ip, "the input's rank is unknown");
    int64_t lo = attr_int(ip->node, "start", 0), hi = attr_int(ip->node, "end", x->ndim);
    if (lo < 0) lo += x->ndim;
    if (hi < 0) hi += x->ndim;
    lo = lo < 0 ? 0 : lo > x->ndim ? x->ndim : lo;
    hi = hi < lo ? lo : hi > x->ndim ? x->ndim : hi;
    int64_t *iv = malloc((size_t)(hi - lo + 1) * sizeof *iv), d[1] = {hi - lo};
    if (!iv) return nomem(ip);
    for (int64_t k = lo; k < hi; k++) {
        iv[k - lo] = x->is_const ? x->dims[k] : k == 0 ? BATCH : x->dims[k];
        if (iv[k - lo] == -1) {
            free(iv);
            return fail(ip, "dim %lld of \"%s\" is unknown (export with a fixed input size)", (long long)k, x->onnx);
        }
    }
    return const_out(ip, 0, 1, d, NULL, iv) ? VS_OK : ip->err->code;
}

static vs_status op_cast(imp *ip)
{
    val *x = input(ip, 0);
    int64_t to = attr_int(ip->node, "to", 0);
    if (!x) return fail(ip, "input 0 is missing");
    bool to_float = to == VS_ONNX_FLOAT || to == VS_ONNX_DOUBLE || to == VS_ONNX_FLOAT16;
    if (!x->is_const) {
        if (!to_float) return fail(ip, "casting a computed value to type %lld is not supported", (long long)to);
        return alias(ip);
    }
    size_t n = (size_t)(x->n ? x->n : 1);
    float *f = to_float ? malloc(n * sizeof *f) : NULL;
    int64_t *iv = to_float ? NULL : malloc(n * sizeof *iv);
    if (!f && !iv) return nomem(ip);
    for (int64_t k = 0; k < x->n; k++) {
        if (f) f[k] = x->f ? x->f[k] : (float)x->i[k];
        else iv[k] = x->i ? x->i[k] : (int64_t)x->f[k];
    }
    return const_out(ip, 0, x->ndim, x->dims, f, iv) ? VS_OK : ip->err->code;
}

/* ---- the graph ----------------------------------------------------------------------------------- */

static vs_status translate(imp *ip)
{
    const char *op = ip->node->op_type;
    if (ip->node->domain[0] && strcmp(ip->node->domain, "ai.onnx"))
        return fail(ip, "ops of domain \"%s\" are not supported; supported (default domain): %s", ip->node->domain, supported);
    if (ip->node->n_out < 1) return fail(ip, "a node without outputs");
    if (!strcmp(op, "Conv")) return op_conv(ip, false);
    if (!strcmp(op, "ConvTranspose")) return op_conv(ip, true);
    if (!strcmp(op, "Gemm")) return op_linear(ip, true);
    if (!strcmp(op, "MatMul")) return op_linear(ip, false);
    if (!strcmp(op, "BatchNormalization")) return op_norm(ip, false);
    if (!strcmp(op, "InstanceNormalization")) return op_norm(ip, true);
    if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") || !strcmp(op, "Div") || !strcmp(op, "Max") ||
        !strcmp(op, "Min") || !strcmp(op, "Pow"))
        return op_binary(ip);
    if (!strcmp(op, "Relu") || !strcmp(op, "Sigmoid") || !strcmp(op, "Tanh") || !strcmp(op, "Sqrt") || !strcmp(op, "HardSwish") ||
        !strcmp(op, "LeakyRelu") || !strcmp(op, "HardSigmoid") || !strcmp(op, "Clip") || !strcmp(op, "Softmax") ||
        !strcmp(op, "LogSoftmax"))
        return op_unary(ip);
    if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool") || !strcmp(op, "GlobalAveragePool")) return op_pool(ip);
    if (!strcmp(op, "Flatten")) return op_flatten(ip);
    if (!strcmp(op, "Reshape")) return op_reshape(ip);
    if (!strcmp(op, "Transpose")) return op_transpose(ip);
    if (!strcmp(op, "Concat")) return op_concat(ip);
    if (!strcmp(op, "Squeeze")) return op_squeeze(ip, false);
    if (!strcmp(op, "Unsqueeze")) return op_squeeze(ip, true);
    if (!strcmp(op, "Gather")) return op_gather(ip);
    if (!strcmp(op, "Pad")) return op_pad(ip);
    if (!strcmp(op, "ReduceMean") || !strcmp(op, "ReduceSum")) return op_reduce(ip);
    if (!strcmp(op, "Constant")) return op_constant(ip);
    if (!strcmp(op, "ConstantOfShape")) return op_constant_of_shape(ip);
    if (!strcmp(op, "Expand")) return op_expand(ip);
    if (!strcmp(op, "Tile")) return op_tile(ip);
    if (!strcmp(op, "Shape")) return op_shape(ip);
    if (!strcmp(op, "Cast")) return op_cast(ip);
    if (!strcmp(op, "Dropout") || !strcmp(op, "Identity")) {
        if (ip->node->n_out > 1 && ip->node->out[1][0]) return fail(ip, "the mask output is not supported");
        return alias(ip);
    }
    return fail(ip, "op %s is not supported; supported: %s", op, supported);
}

bool vs_model_path_is_onnx(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return n > 5 && !strcmp(path + n - 5, ".onnx");
}

static void imp_free(imp *ip)
{
    for (int i = 0; i < ip->n_vals; i++) {
        if (ip->vals[i]->owned) free(ip->vals[i]->f), free(ip->vals[i]->i);
        free(ip->vals[i]);
    }
    free(ip->vals);
    for (int i = 0; i < ip->n_used; i++) free(ip->used[i]);
    free(ip->used);
}

/* The composite's inputs from the graph's: one example's shape (the first dim is the batch). */
static vs_status graph_inputs(imp *ip, vs_json *inputs)
{
    for (int i = 0; i < ip->m->n_inputs; i++) {
        const vs_onnx_value *in = &ip->m->inputs[i];
        if (in->ndim < 1)
            return fail(ip, "input \"%s\" has %s; export it with a shape whose first dim is the batch", in->name,
                        in->ndim < 0 ? "no shape (unknown rank)" : "no dims");
        if (in->elem_type != VS_ONNX_FLOAT && in->elem_type != VS_ONNX_DOUBLE)
            return fail(ip, "input \"%s\" has element type %d; only float inputs are supported", in->name, in->elem_type);
        val *v = new_val(ip, in->name);
        if (!v || fresh(ip, in->name, "x", v->name)) return ip->err->code;
        v->ndim = in->ndim;
        memcpy(v->dims, in->dims, sizeof v->dims);
        v->dims[0] = -1;
        bool known = true;
        for (int d = 1; d < in->ndim; d++) known = known && in->dims[d] > 0;
        vs_json *shape = known ? vs_json_new_int_array(in->dims + 1, in->ndim - 1) : vs_json_new_null();
        if (vs_json_set(inputs, v->name, shape) != VS_OK) return nomem(ip);
    }
    if (!ip->m->n_inputs) return fail(ip, "the graph has no inputs besides its initializers");
    return VS_OK;
}

/* The composite's aliases: each node's name, then each tensor's name, for the program value it became
 * (constants folded away have none), so --layer takes the names the exporter wrote; node names come
 * first, as messages list the first ones. */
static vs_status graph_aliases(imp *ip, vs_json *comp)
{
    vs_json *a = vs_json_new_object();
    if (!a) return nomem(ip);
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < ip->m->n_nodes; k++) {
            const vs_onnx_node *n = &ip->m->nodes[k];
            for (int j = 0; j < (pass ? n->n_out : 1); j++) {
                const char *name = pass ? n->out[j] : n->name;
                val *v = n->out[j][0] ? find(ip, n->out[j]) : NULL;
                if (!v || v->is_const || !v->name[0] || !vs_composite_alias_ok(name) || !strcmp(name, v->name) || vs_json_get(a, name)) continue;
                if (vs_json_set(a, name, vs_json_new_string(v->name)) != VS_OK) {
                    vs_json_free(a);
                    return nomem(ip);
                }
            }
        }
    return vs_json_set(comp, "aliases", a) == VS_OK ? VS_OK : nomem(ip);
}

vs_status vs_onnx_import(const char *path, vs_json **doc, vs_named_tensors *weights, vs_error *err)
{
    *doc = NULL;
    vs_onnx_model *m = NULL;
    vs_status st = vs_onnx_read_file(path, &m, err);
    if (st) return st;
    imp ip = {.m = m, .path = path, .err = err, .w = weights};
    vs_json *root = vs_json_new_object(), *comp = vs_json_new_object(), *inputs = vs_json_new_object(), *outputs = vs_json_new_array();
    ip.models = vs_json_new_object(), ip.graph = vs_json_new_array();
    /* the composite owns its parts from here; root owns the composite */
    bool ok = root && comp && inputs && outputs && ip.models && ip.graph;
    if (ok) {
        ok = vs_json_set(root, "format", vs_json_new_string(VS_MODEL_FORMAT)) == VS_OK;
        ok = vs_json_set(comp, "inputs", inputs) == VS_OK && ok;
        ok = vs_json_set(comp, "models", ip.models) == VS_OK && ok;
        ok = vs_json_set(comp, "graph", ip.graph) == VS_OK && ok;
        ok = vs_json_set(comp, "outputs", outputs) == VS_OK && ok;
        ok = vs_json_set(root, "composite", comp) == VS_OK && ok;
    } else {
        vs_json_free(root), vs_json_free(comp), vs_json_free(inputs), vs_json_free(outputs), vs_json_free(ip.models), vs_json_free(ip.graph);
        root = NULL;
    }
    st = ok ? VS_OK : nomem(&ip);
    if (!st && (m->opset < 11 || m->opset > 18))
        st = fail(&ip, "opset %lld is not supported (11 to 18 are; re-export with opset_version=13)", (long long)m->opset);
    for (int i = 0; !st && i < m->n_init; i++) {
        val *v = new_val(&ip, m->init[i].name);
        if (!v) st = err->code;
        else {
            v->is_const = true, v->ndim = m->init[i].ndim, v->n = m->init[i].n, v->f = m->init[i].f, v->i = m->init[i].i;
            memcpy(v->dims, m->init[i].dims, sizeof v->dims);
        }
    }
    if (!st) st = graph_inputs(&ip, inputs);
    for (int i = 0; !st && i < m->n_nodes; i++) {
        ip.node = &m->nodes[i], ip.node_idx = i;
        st = translate(&ip);
    }
    ip.node = NULL;
    for (int i = 0; !st && i < m->n_outputs; i++) {
        val *v = find(&ip, m->outputs[i].name);
        if (!v || v->is_const) st = fail(&ip, "graph output \"%s\" does not depend on the input", m->outputs[i].name);
        else if (vs_json_push(outputs, vs_json_new_string(v->name)) != VS_OK) st = nomem(&ip);
    }
    if (!st) st = graph_aliases(&ip, comp);
    imp_free(&ip);
    vs_onnx_free(m);
    if (st) {
        vs_json_free(root);
        for (int64_t i = 0; i < weights->n; i++) vs_tensor_free(weights->items[i].tensor);
        vs_named_tensors_clear(weights);
        return st;
    }
    *doc = root;
    return VS_OK;
}
