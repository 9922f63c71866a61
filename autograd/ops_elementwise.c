/* ops_elementwise.c - broadcasting binary ops and unary maps, with their backward rules.
 *
 * Each backward is written in ops of this same file, so second derivatives come for free; a unary
 * map's backward that records no graph runs the same arithmetic as one fused pass (un_grad_kernel).
 * Constants of a rule (masks such as x > 0) are built as plain tensors without a node. */
#include "autograd/internal.h"
#include "autograd/kernels.h"

#include <math.h>
#include <string.h>

/* ---- broadcasting binary ops ------------------------------------------------------------------ */

typedef enum binop { B_ADD, B_SUB, B_MUL, B_DIV, B_POW, B_MIN, B_MAX } binop;

static inline float apply_bin(binop op, float a, float b)
{
    switch (op) {
    case B_ADD: return a + b;
    case B_SUB: return a - b;
    case B_MUL: return a * b;
    case B_DIV: return a / b;
    case B_POW: return powf(a, b);
    case B_MIN: return a <= b ? a : b;
    case B_MAX: return a >= b ? a : b;
    }
    return 0;
}

/* The maps below are flat loops, which configure's -fvect-cost-model=dynamic lets GCC vectorise, in
 * functions that also get an AVX2 clone (VS_VECTOR_CLONES); pointers in them are restrict: an op's
 * output is always a fresh buffer. */

/* Maps over n elements split into chunks of PAR_GRAIN for vs_parallel_for when n is large: the
 * elements are independent, so the result does not depend on the thread count. */
#define PAR_GRAIN 32768

/* The three stride patterns that matter are written out so the compiler vectorises them. */
#define BIN_LOOPS(EXPR)                                                                         \
    if (sa == 1 && sb == 1)                                                                     \
        for (int64_t i = 0; i < n; i++) { float x = a[i], z = b[i]; y[i] = EXPR; }               \
    else if (sa == 1 && sb == 0) {                                                              \
        const float z = b[0];                                                                   \
        for (int64_t i = 0; i < n; i++) { float x = a[i]; y[i] = EXPR; }                         \
    } else if (sa == 0 && sb == 1) {                                                            \
        const float x = a[0];                                                                   \
        for (int64_t i = 0; i < n; i++) { float z = b[i]; y[i] = EXPR; }                         \
    } else                                                                                      \
        for (int64_t i = 0; i < n; i++) { float x = a[i * sa], z = b[i * sb]; y[i] = EXPR; }

VS_VECTOR_CLONES512 static void bin_kernel(binop op, const float *restrict a, int64_t sa, const float *restrict b, int64_t sb,
                       float *restrict y, int64_t n)
{
    switch (op) {
    case B_ADD: BIN_LOOPS(x + z) break;
    case B_SUB: BIN_LOOPS(x - z) break;
    case B_MUL: BIN_LOOPS(x * z) break;
    case B_DIV: BIN_LOOPS(x / z) break;
    default:
        for (int64_t i = 0; i < n; i++) y[i] = apply_bin(op, a[i * sa], b[i * sb]);
    }
}

typedef struct bin_job {
    binop op;
    const float *a, *b;
    int64_t sa, sb;
    float *y;
} bin_job;

static void bin_chunk(void *ctx, int64_t begin, int64_t end)
{
    const bin_job *j = ctx;
    bin_kernel(j->op, j->a + begin * j->sa, j->sa, j->b + begin * j->sb, j->sb, j->y + begin, end - begin);
}

/* bin_kernel over the whole of y, in parallel chunks when it is large. */
static void bin_flat(binop op, const float *a, int64_t sa, const float *b, int64_t sb, float *y, int64_t n)
{
    if (n < 2 * PAR_GRAIN) {
        bin_kernel(op, a, sa, b, sb, y, n);
        return;
    }
    bin_job j = {op, a, b, sa, sb, y};
    vs_parallel_for(n, PAR_GRAIN, bin_chunk, &j);
}

/* Strides of t as seen from an output of ndim dims (0 along broadcast dims). */
static void broadcast_strides(const vs_tensor *t, int ndim, int64_t *st)
{
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        int it = t->ndim - ndim + i;
        int64_t d = it >= 0 ? t->shape[it] : 1;
        st[i] = d == 1 ? 0 : s;
        s *= d;
    }
}

/* A broadcast product seen as rows: dims [0, nd-1) index rows of `inner` elements; sta/stb are
 * the operands' strides per dim (0 along broadcast dims). */
typedef struct bin_rows_job {
    binop op;
    const float *a, *b;
    float *y;
    int nd;
    int64_t shape[VS_MAX_DIMS], sta[VS_MAX_DIMS], stb[VS_MAX_DIMS], inner;
} bin_rows_job;

static void bin_rows(void *ctx, int64_t begin, int64_t end)
{
    const bin_rows_job *j = ctx;
    const int nd = j->nd;
    int64_t idx[VS_MAX_DIMS] = {0}, oa = 0, ob = 0, rest = begin;
    for (int d = nd - 2; d >= 0; d--) {
        idx[d] = rest % j->shape[d];
        rest /= j->shape[d];
        oa += idx[d] * j->sta[d];
        ob += idx[d] * j->stb[d];
    }
    for (int64_t o = begin; o < end; o++) {
        bin_kernel(j->op, j->a + oa, j->sta[nd - 1], j->b + ob, j->stb[nd - 1], j->y + o * j->inner, j->inner);
        for (int d = nd - 2; d >= 0; d--) {
            idx[d]++;
            oa += j->sta[d];
            ob += j->stb[d];
            if (idx[d] < j->shape[d]) break;
            oa -= j->sta[d] * j->shape[d];
            ob -= j->stb[d] * j->shape[d];
            idx[d] = 0;
        }
    }
}

static void bin_forward(binop op, const vs_tensor *a, const vs_tensor *b, vs_tensor *y)
{
    if (vs_same_shape(a, b)) {
        bin_flat(op, a->data, 1, b->data, 1, y->data, y->size);
        return;
    }
    if (b->size == 1) {
        bin_flat(op, a->data, 1, b->data, 0, y->data, y->size);
        return;
    }
    if (a->size == 1) {
        bin_flat(op, a->data, 0, b->data, 1, y->data, y->size);
        return;
    }
    if (y->size == 0) return;
    int64_t sta[VS_MAX_DIMS], stb[VS_MAX_DIMS];
    broadcast_strides(a, y->ndim, sta);
    broadcast_strides(b, y->ndim, stb);
    /* Merge neighbouring dims that both operands walk the same way (both contiguous across them,
     * or both broadcast), so x [n,c,h,w] + b [1,c,1,1] runs rows of h*w instead of rows of w. */
    bin_rows_job j = {.op = op, .a = a->data, .b = b->data, .y = y->data, .nd = 0};
    for (int d = 0; d < y->ndim; d++) {
        const int k = j.nd - 1;
        if (k >= 0 && j.sta[k] == sta[d] * y->shape[d] && j.stb[k] == stb[d] * y->shape[d]) {
            j.shape[k] *= y->shape[d];
            j.sta[k] = sta[d];
            j.stb[k] = stb[d];
        } else {
            j.shape[j.nd] = y->shape[d];
            j.sta[j.nd] = sta[d];
            j.stb[j.nd] = stb[d];
            j.nd++;
        }
    }
    j.inner = j.shape[j.nd - 1];
    const int64_t rows = y->size / j.inner;
    if (y->size < 2 * PAR_GRAIN || rows < 2)
        bin_rows(&j, 0, rows);
    else
        vs_parallel_for(rows, (PAR_GRAIN + j.inner - 1) / j.inner, bin_rows, &j);
}

/* y += g: the sums of bin_kernel's B_ADD with a = y, as a loop with no aliasing between its pointers. */
VS_VECTOR_CLONES512 static void add_into_kernel(float *restrict y, const float *restrict g, int64_t n)
{
    for (int64_t i = 0; i < n; i++) y[i] = y[i] + g[i];
}

typedef struct add_into_job {
    float *y;
    const float *g;
} add_into_job;

static void add_into_chunk(void *ctx, int64_t begin, int64_t end)
{
    const add_into_job *j = ctx;
    add_into_kernel(j->y + begin, j->g + begin, end - begin);
}

void vs_add_into(vs_tensor *acc, const vs_tensor *g)
{
    if (acc->size < 2 * PAR_GRAIN) {
        add_into_kernel(acc->data, g->data, acc->size);
        return;
    }
    add_into_job j = {acc->data, g->data};
    vs_parallel_for(acc->size, PAR_GRAIN, add_into_chunk, &j);
}

static const char *bin_name(binop op)
{
    static const char *names[] = {"add", "sub", "mul", "div", "pow", "minimum", "maximum"};
    return names[op];
}

static void add_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin);
static void sub_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin);
static void mul_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin);
static void div_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin);
static void pow_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin);
static void minmax_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin);

/* What a binary node keeps: which op it was (minimum/maximum's rule needs it). */
typedef struct bin_params {
    binop op;
} bin_params;

static vs_tensor *binary(binop op, vs_tensor *a, vs_tensor *b)
{
    if (!a || !b) return NULL;
    int nd;
    int64_t shape[VS_MAX_DIMS];
    if (!vs_broadcast_shape(bin_name(op), a, b, &nd, shape)) return NULL;
    vs_tensor *y = vs_alloc(bin_name(op), nd, shape);
    if (!y) return NULL;
    bin_forward(op, a, b, y);
    static const vs_backward_fn bws[] = {add_backward, sub_backward, mul_backward, div_backward,
                                         pow_backward, minmax_backward, minmax_backward};
    vs_tensor *in[2] = {a, b};
    const bin_params p = {op};
    return vs_record(y, bin_name(op), bws[op], 2, in, &p, sizeof p);
}

vs_tensor *vs_add(vs_tensor *a, vs_tensor *b) { return binary(B_ADD, a, b); }
vs_tensor *vs_sub(vs_tensor *a, vs_tensor *b) { return binary(B_SUB, a, b); }
vs_tensor *vs_mul(vs_tensor *a, vs_tensor *b) { return binary(B_MUL, a, b); }
vs_tensor *vs_div(vs_tensor *a, vs_tensor *b) { return binary(B_DIV, a, b); }
vs_tensor *vs_pow(vs_tensor *a, vs_tensor *b) { return binary(B_POW, a, b); }
vs_tensor *vs_minimum(vs_tensor *a, vs_tensor *b) { return binary(B_MIN, a, b); }
vs_tensor *vs_maximum(vs_tensor *a, vs_tensor *b) { return binary(B_MAX, a, b); }

/* Gradient of a broadcast operand: sum back to its shape. */
static vs_tensor *unbroadcast(vs_tensor *g, const vs_tensor *like)
{
    return !g || vs_same_shape(g, like) ? g : vs_sum_to(g, like->ndim, like->shape);
}

static void add_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    if (vs_node_needs(n, 0)) gin[0] = unbroadcast(g, n->in[0]);
    if (vs_node_needs(n, 1)) gin[1] = unbroadcast(g, n->in[1]);
}

static void sub_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    if (vs_node_needs(n, 0)) gin[0] = unbroadcast(g, n->in[0]);
    if (vs_node_needs(n, 1)) gin[1] = unbroadcast(vs_neg(g), n->in[1]);
}

static void mul_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    if (vs_node_needs(n, 0)) gin[0] = unbroadcast(vs_mul(g, n->in[1]), n->in[0]);
    if (vs_node_needs(n, 1)) gin[1] = unbroadcast(vs_mul(g, n->in[0]), n->in[1]);
}

static void div_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    vs_tensor *a = n->in[0], *b = n->in[1];
    if (vs_node_needs(n, 0)) gin[0] = unbroadcast(vs_div(g, b), a);
    /* d(a/b)/db = -a / b^2 */
    if (vs_node_needs(n, 1)) gin[1] = unbroadcast(vs_neg(vs_div(vs_mul(g, a), vs_mul(b, b))), b);
}

static void pow_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    vs_tensor *a = n->in[0], *b = n->in[1];
    /* d a^b / da = b a^(b-1);  d a^b / db = a^b ln a */
    if (vs_node_needs(n, 0)) gin[0] = unbroadcast(vs_mul(g, vs_mul(b, vs_pow(a, vs_add_scalar(b, -1.0f)))), a);
    if (vs_node_needs(n, 1)) gin[1] = unbroadcast(vs_mul(g, vs_mul(vs_pow(a, b), vs_log(a))), b);
}

/* Which operand won: 1 where a was chosen (ties go to a). */
static vs_tensor *choice_mask(binop op, const vs_tensor *a, const vs_tensor *b, const vs_tensor *out)
{
    vs_tensor *ab = vs_alloc("minmax mask", out->ndim, out->shape);
    if (!ab) return NULL;
    /* Broadcast a and b through the forward kernel itself: mask = (a op b) == a. */
    vs_tensor *ea = vs_expand((vs_tensor *)a, out->ndim, out->shape);
    vs_tensor *eb = vs_expand((vs_tensor *)b, out->ndim, out->shape);
    if (!ea || !eb) return NULL;
    for (int64_t i = 0; i < out->size; i++)
        ab->data[i] = op == B_MIN ? (ea->data[i] <= eb->data[i]) : (ea->data[i] >= eb->data[i]);
    return ab;
}

static void minmax_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    bool prev = vs_set_grad_enabled(false);
    vs_tensor *m = choice_mask(VS_PARAMS(n, bin_params)->op, n->in[0], n->in[1], out);
    vs_set_grad_enabled(prev);
    if (!m) return;
    if (vs_node_needs(n, 0)) gin[0] = unbroadcast(vs_mul(g, m), n->in[0]);
    if (vs_node_needs(n, 1)) gin[1] = unbroadcast(vs_sub(g, vs_mul(g, m)), n->in[1]);
}

static void where_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin);

vs_tensor *vs_where(const vs_tensor *cond, vs_tensor *a, vs_tensor *b)
{
    if (!cond || !a || !b) return NULL;
    int nd, nd2;
    int64_t shape[VS_MAX_DIMS], shape2[VS_MAX_DIMS];
    if (!vs_broadcast_shape("where", a, b, &nd, shape)) return NULL;
    vs_tensor tmp = {0};
    tmp.ndim = nd;
    memcpy(tmp.shape, shape, sizeof shape);
    if (!vs_broadcast_shape("where", &tmp, cond, &nd2, shape2)) return NULL;
    bool prev = vs_set_grad_enabled(false);
    vs_tensor *c = vs_expand((vs_tensor *)cond, nd2, shape2);
    vs_tensor *ea = vs_expand(a, nd2, shape2), *eb = vs_expand(b, nd2, shape2);
    vs_set_grad_enabled(prev);
    vs_tensor *y = c && ea && eb ? vs_alloc("where", nd2, shape2) : NULL;
    if (y)
        for (int64_t i = 0; i < y->size; i++) y->data[i] = c->data[i] != 0.0f ? ea->data[i] : eb->data[i];
    vs_tensor *in[2] = {a, b};
    y = vs_record(y, "where", where_backward, 2, in, NULL, 0);
    vs_node_save(y, c);
    vs_tensor_free(c);
    vs_tensor_free(ea);
    vs_tensor_free(eb);
    return y;
}

static void where_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    vs_tensor *c = n->saved;
    vs_tensor *zero = vs_scalar(0.0f);
    if (vs_node_needs(n, 0)) gin[0] = unbroadcast(vs_where(c, g, zero), n->in[0]);
    if (vs_node_needs(n, 1)) gin[1] = unbroadcast(vs_where(c, zero, g), n->in[1]);
}

/* ---- scalar forms ------------------------------------------------------------------------------ */

static void add_scalar_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin) { gin[0] = g; }

vs_tensor *vs_add_scalar(vs_tensor *x, float c)
{
    if (!x) return NULL;
    vs_tensor *y = vs_alloc("add_scalar", x->ndim, x->shape);
    if (!y) return NULL;
    bin_flat(B_ADD, x->data, 1, &c, 0, y->data, y->size);
    return vs_record(y, "add_scalar", add_scalar_backward, 1, &x, NULL, 0);
}

/* The constant of mul_scalar (the factor) and pow_scalar (the exponent). */
typedef struct scalar_params {
    float c;
} scalar_params;

static void mul_scalar_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    gin[0] = vs_mul_scalar(g, VS_PARAMS(n, scalar_params)->c);
}

vs_tensor *vs_mul_scalar(vs_tensor *x, float c)
{
    if (!x) return NULL;
    vs_tensor *y = vs_alloc("mul_scalar", x->ndim, x->shape);
    if (!y) return NULL;
    bin_flat(B_MUL, x->data, 1, &c, 0, y->data, y->size);
    const scalar_params sp = {c};
    return vs_record(y, "mul_scalar", mul_scalar_backward, 1, &x, &sp, sizeof sp);
}

static void pow_scalar_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    const float p = VS_PARAMS(n, scalar_params)->c;
    gin[0] = vs_mul(g, vs_mul_scalar(vs_pow_scalar(n->in[0], p - 1.0f), p));
}

vs_tensor *vs_pow_scalar(vs_tensor *x, float p)
{
    if (!x) return NULL;
    vs_tensor *y = vs_alloc("pow_scalar", x->ndim, x->shape);
    if (!y) return NULL;
    if (p == 2.0f)
        bin_flat(B_MUL, x->data, 1, x->data, 1, y->data, y->size);
    else if (p == 1.0f)
        memcpy(y->data, x->data, (size_t)x->size * sizeof(float));
    else if (p == 0.0f)
        for (int64_t i = 0; i < x->size; i++) y->data[i] = 1.0f;
    else
        for (int64_t i = 0; i < x->size; i++) y->data[i] = powf(x->data[i], p);
    const scalar_params sp = {p};
    return vs_record(y, "pow_scalar", pow_scalar_backward, 1, &x, &sp, sizeof sp);
}

/* ---- unary maps -------------------------------------------------------------------------------- */

typedef enum unop {
    U_NEG, U_EXP, U_LOG, U_SQRT, U_ABS, U_CLAMP, U_RELU, U_LEAKY, U_ELU, U_SIGMOID, U_TANH, U_SOFTPLUS,
    U_LOGSIGMOID, U_SIGN, U_STEP
} unop;

static const char *const un_names[] = {"neg",     "exp",  "log",      "sqrt",        "abs",  "clamp", "relu", "leaky_relu",
                                       "elu",     "sigmoid", "tanh", "softplus", "log_sigmoid", "sign", "step"};

/* What a unary node keeps: the map and its parameters (slope, alpha, clamp bounds). */
typedef struct un_params {
    unop op;
    float p0, p1;
} un_params;


VS_VECTOR_CLONES512 VS_SELECTS static void un_forward(unop op, const float *restrict x, float *restrict y, int64_t n, float p0, float p1)
{
    switch (op) {
    case U_NEG: for (int64_t i = 0; i < n; i++) y[i] = -x[i]; break;
    case U_EXP: for (int64_t i = 0; i < n; i++) y[i] = expf(x[i]); break;
    case U_LOG: for (int64_t i = 0; i < n; i++) y[i] = logf(x[i]); break;
    case U_SQRT: for (int64_t i = 0; i < n; i++) y[i] = sqrtf(x[i]); break;
    case U_ABS: for (int64_t i = 0; i < n; i++) y[i] = fabsf(x[i]); break;
    case U_CLAMP: for (int64_t i = 0; i < n; i++) y[i] = x[i] < p0 ? p0 : (x[i] > p1 ? p1 : x[i]); break;
    case U_RELU: for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0.0f; break;
    case U_LEAKY:
        /* GCC will not vectorise a product that only one side of a select uses (it sinks it into a
         * branch it may not speculate), so each block of 512 is written twice: y = slope x, then
         * y = x where x > 0; the block is still in L1 for the second pass */
        for (int64_t b = 0; b < n; b += 512) {
            const int64_t m = n - b < 512 ? n - b : 512;
            const float *restrict xb = x + b;
            float *restrict yb = y + b;
            for (int64_t i = 0; i < m; i++) yb[i] = p0 * xb[i];
            for (int64_t i = 0; i < m; i++) yb[i] = xb[i] > 0 ? xb[i] : yb[i];
        }
        break;
    case U_ELU: for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : p0 * expm1f(x[i]); break;
    case U_SIGMOID: for (int64_t i = 0; i < n; i++) y[i] = vs_sigmoidf(x[i]); break;
    case U_TANH: for (int64_t i = 0; i < n; i++) y[i] = vs_tanhf(x[i]); break;
    case U_SOFTPLUS: vs_softplus_rows(x, y, n); break;
    case U_LOGSIGMOID: for (int64_t i = 0; i < n; i++) y[i] = -vs_softplusf(-x[i]); break;
    case U_SIGN: for (int64_t i = 0; i < n; i++) y[i] = (float)((x[i] > 0) - (x[i] < 0)); break;
    case U_STEP: for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? 1.0f : 0.0f; break;
    }
}

/* Local derivative f'(x) as plain numbers (for masks and the rescale fallback). */
static float un_deriv(unop op, float x, float y, float p0, float p1)
{
    switch (op) {
    case U_RELU: return x > 0 ? 1.0f : 0.0f;
    case U_LEAKY: return x > 0 ? 1.0f : p0;
    case U_ELU: return x > 0 ? 1.0f : y + p0;
    case U_SIGMOID: return y * (1.0f - y);
    case U_TANH: return 1.0f - y * y;
    case U_SOFTPLUS: return vs_sigmoidf(x);
    case U_LOGSIGMOID: return 1.0f - vs_sigmoidf(x);
    case U_CLAMP: return x >= p0 && x <= p1 ? 1.0f : 0.0f;
    case U_ABS: return (float)((x > 0) - (x < 0));
    default: return 0.0f;
    }
}

/* d = f'(x) over n elements, y = f(x).  The piecewise-linear masks (the common case) as vectorisable
 * loops with the same values as un_deriv. */
VS_VECTOR_CLONES512 static void deriv_kernel(unop op, const float *restrict x, const float *restrict y, float *restrict d,
                                          int64_t n, float p0, float p1)
{
    switch (op) {
    case U_RELU: for (int64_t i = 0; i < n; i++) d[i] = x[i] > 0 ? 1.0f : 0.0f; break;
    case U_LEAKY: for (int64_t i = 0; i < n; i++) d[i] = x[i] > 0 ? 1.0f : p0; break;
    case U_CLAMP: for (int64_t i = 0; i < n; i++) d[i] = x[i] >= p0 && x[i] <= p1 ? 1.0f : 0.0f; break;
    case U_ABS: for (int64_t i = 0; i < n; i++) d[i] = (float)((x[i] > 0) - (x[i] < 0)); break;
    default:
        for (int64_t i = 0; i < n; i++) d[i] = un_deriv(op, x[i], y[i], p0, p1);
    }
}

static vs_tensor *deriv_const(const vs_node *n, const vs_tensor *x, const vs_tensor *y)
{
    bool prev = vs_set_grad_enabled(false);
    vs_tensor *d = vs_alloc("derivative", x->ndim, x->shape);
    vs_set_grad_enabled(prev);
    if (!d) return NULL;
    const un_params *p = VS_PARAMS(n, un_params);
    deriv_kernel(p->op, x->data, y->data, d->data, x->size, p->p0, p->p1);
    return d;
}

/* DeepLIFT rescale multiplier: rows [0,N) are inputs, [N,2N) references.  m = dy/dx between the two
 * halves, the local derivative where they (nearly) coincide; both halves get the same multiplier. */
static vs_tensor *rescale_multiplier(const vs_node *n, const vs_tensor *x, const vs_tensor *y)
{
    vs_tensor *m = deriv_const(n, x, y);
    if (!m || x->ndim < 1 || x->shape[0] % 2 != 0) return m;
    int64_t half = x->size / 2;
    for (int64_t i = 0; i < half; i++) {
        float dx = x->data[i] - x->data[i + half];
        if (fabsf(dx) > 1e-6f) m->data[i] = (y->data[i] - y->data[i + half]) / dx;
        m->data[i + half] = m->data[i];
    }
    return m;
}

/* d = g f'(x) over n elements, y = f(x): the chain rule of un_backward's switch below in one pass,
 * element for element the same operations in the same order (so the same values), for a backward
 * that records no graph.  Ops without a case here (neg, log, sqrt) keep their composed rule. */
VS_VECTOR_CLONES512 VS_SELECTS static void un_grad_kernel(unop op, const float *restrict x, const float *restrict y,
                                                       const float *restrict g, float *restrict d, int64_t n, float p0,
                                                       float p1)
{
    switch (op) {
    case U_RELU: for (int64_t i = 0; i < n; i++) d[i] = g[i] * (x[i] > 0 ? 1.0f : 0.0f); break;
    case U_LEAKY: for (int64_t i = 0; i < n; i++) d[i] = g[i] * (x[i] > 0 ? 1.0f : p0); break;
    case U_CLAMP: for (int64_t i = 0; i < n; i++) d[i] = g[i] * (x[i] >= p0 && x[i] <= p1 ? 1.0f : 0.0f); break;
    case U_ABS: for (int64_t i = 0; i < n; i++) d[i] = g[i] * (float)((x[i] > 0) - (x[i] < 0)); break;
    case U_EXP: for (int64_t i = 0; i < n; i++) d[i] = g[i] * y[i]; break;
    case U_ELU: for (int64_t i = 0; i < n; i++) d[i] = x[i] > 0 ? g[i] : g[i] * (y[i] + p0); break;
    case U_SIGMOID: for (int64_t i = 0; i < n; i++) d[i] = g[i] * (y[i] * (-y[i] + 1.0f)); break;
    case U_TANH: for (int64_t i = 0; i < n; i++) d[i] = g[i] * (-(y[i] * y[i]) + 1.0f); break;
    case U_SOFTPLUS: for (int64_t i = 0; i < n; i++) d[i] = g[i] * vs_sigmoidf(x[i]); break;
    case U_LOGSIGMOID: for (int64_t i = 0; i < n; i++) d[i] = g[i] * vs_sigmoidf(-x[i]); break;
    default: break;
    }
}

typedef struct un_grad_job {
    unop op;
    const float *x, *y, *g;
    float *d;
    float p0, p1;
} un_grad_job;

static void un_grad_chunk(void *ctx, int64_t begin, int64_t end)
{
    const un_grad_job *j = ctx;
    un_grad_kernel(j->op, j->x + begin, j->y + begin, j->g + begin, j->d + begin, end - begin, j->p0, j->p1);
}

/* g f'(x) by un_grad_kernel, or NULL when the rule must be composed of ops: the backward records
 * a graph (second derivatives), the op has no fused form, or g is not shaped like x. */
/* d = g f'(x) as a new tensor (un_grad_kernel over the pool), recording nothing; g has x's shape. */
static vs_tensor *un_grad_apply(const un_params *p, const vs_tensor *x, const vs_tensor *y, const vs_tensor *g)
{
    vs_tensor *d = vs_alloc("derivative", x->ndim, x->shape);
    if (!d) return NULL;
    if (x->size < 2 * PAR_GRAIN) {
        un_grad_kernel(p->op, x->data, y->data, g->data, d->data, x->size, p->p0, p->p1);
    } else {
        un_grad_job j = {p->op, x->data, y->data, g->data, d->data, p->p0, p->p1};
        vs_parallel_for(x->size, PAR_GRAIN, un_grad_chunk, &j);
    }
    return d;
}

static vs_tensor *un_grad_fused(const un_params *p, const vs_tensor *x, const vs_tensor *y, const vs_tensor *g)
{
    const unop op = p->op;
    if (vs_grad_enabled() || op == U_NEG || op == U_LOG || op == U_SQRT || op == U_SIGN || op == U_STEP ||
        !vs_same_shape(g, x))
        return NULL;
    return un_grad_apply(p, x, y, g);
}

/* g f'(x) for a piecewise-linear f (relu, leaky relu, clamp, abs), recorded when recording is on:
 * f' is a constant mask, so the product is linear in g and its own rule is itself (d/dg = the same
 * mask; nothing flows to x).  One pass and one tensor where a mask and then a product took two. */
static void deriv_scaled_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin);

static vs_tensor *deriv_scaled(const un_params *p, vs_tensor *x, vs_tensor *g)
{
    if (!x || !g) return NULL;
    if (!vs_same_shape(g, x)) return vs_op_error("derivative", "gradient and input shapes differ");
    vs_tensor *d = un_grad_apply(p, x, x, g); /* a piecewise-linear f' does not read y */
    if (!d) return NULL;
    d = vs_record(d, "derivative", deriv_scaled_backward, 1, &g, p, sizeof *p);
    vs_node_save(d, x);
    return d;
}

static void deriv_scaled_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    gin[0] = deriv_scaled(VS_PARAMS(n, un_params), n->saved, g);
}

static void un_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    vs_tensor *x = n->in[0];
    const un_params *p = VS_PARAMS(n, un_params);
    const unop op = p->op;
    bool nonlinear = op == U_RELU || op == U_LEAKY || op == U_ELU || op == U_SIGMOID || op == U_TANH ||
                     op == U_SOFTPLUS || op == U_LOGSIGMOID;
    if (nonlinear && n->rule == VS_RULE_RESCALE) {
        gin[0] = vs_mul(g, rescale_multiplier(n, x, out));
        return;
    }
    if (op == U_RELU && (n->rule == VS_RULE_GUIDED || n->rule == VS_RULE_DECONV)) {
        gin[0] = vs_relu(n->rule == VS_RULE_GUIDED ? vs_mul(g, deriv_const(n, x, out)) : g);
        return;
    }
    if ((gin[0] = un_grad_fused(p, x, out, g))) return;
    switch (op) {
    case U_NEG: gin[0] = vs_neg(g); break;
    case U_EXP: gin[0] = vs_mul(g, out); break;
    case U_LOG: gin[0] = vs_div(g, x); break;
    case U_SQRT: gin[0] = vs_div(vs_mul_scalar(g, 0.5f), out); break;
    case U_ABS: case U_CLAMP: case U_RELU: case U_LEAKY:
        /* piecewise linear: the derivative is a constant mask */
        gin[0] = deriv_scaled(p, x, g);
        break;
    case U_ELU: {
        /* x > 0 ? g : g (y + alpha), with y differentiable */
        vs_tensor *pos = vs_step(x);
        gin[0] = vs_where(pos, g, vs_mul(g, vs_add_scalar(out, p->p0)));
        break;
    }
    case U_SIGMOID: gin[0] = vs_mul(g, vs_mul(out, vs_add_scalar(vs_neg(out), 1.0f))); break;
    case U_TANH: gin[0] = vs_mul(g, vs_add_scalar(vs_neg(vs_mul(out, out)), 1.0f)); break;
    case U_SOFTPLUS: gin[0] = vs_mul(g, vs_sigmoid(x)); break;
    case U_LOGSIGMOID: gin[0] = vs_mul(g, vs_sigmoid(vs_neg(x))); break;
    case U_SIGN: case U_STEP: break;
    }
}

typedef struct un_job {
    unop op;
    const float *x;
    float *y;
    float p0, p1;
} un_job;

static void un_chunk(void *ctx, int64_t begin, int64_t end)
{
    const un_job *j = ctx;
    un_forward(j->op, j->x + begin, j->y + begin, end - begin, j->p0, j->p1);
}

static vs_tensor *unary(unop op, vs_tensor *x, float p0, float p1)
{
    if (!x) return NULL;
    vs_tensor *y = vs_alloc(un_names[op], x->ndim, x->shape);
    if (!y) return NULL;
    if (x->size < 2 * PAR_GRAIN) {
        un_forward(op, x->data, y->data, x->size, p0, p1);
    } else {
        un_job j = {op, x->data, y->data, p0, p1};
        vs_parallel_for(x->size, PAR_GRAIN, un_chunk, &j);
    }
    if (op == U_SIGN || op == U_STEP) return y; /* constants: no gradient */
    const un_params p = {op, p0, p1};
    return vs_record(y, un_names[op], un_backward, 1, &x, &p, sizeof p);
}

vs_tensor *vs_neg(vs_tensor *x) { return unary(U_NEG, x, 0, 0); }
vs_tensor *vs_exp(vs_tensor *x) { return unary(U_EXP, x, 0, 0); }
vs_tensor *vs_log(vs_tensor *x) { return unary(U_LOG, x, 0, 0); }
vs_tensor *vs_sqrt(vs_tensor *x) { return unary(U_SQRT, x, 0, 0); }
vs_tensor *vs_abs(vs_tensor *x) { return unary(U_ABS, x, 0, 0); }
vs_tensor *vs_relu(vs_tensor *x) { return unary(U_RELU, x, 0, 0); }
vs_tensor *vs_leaky_relu(vs_tensor *x, float slope) { return unary(U_LEAKY, x, slope, 0); }
vs_tensor *vs_elu(vs_tensor *x, float alpha) { return unary(U_ELU, x, alpha, 0); }
vs_tensor *vs_sigmoid(vs_tensor *x) { return unary(U_SIGMOID, x, 0, 0); }
vs_tensor *vs_tanh(vs_tensor *x) { return unary(U_TANH, x, 0, 0); }
vs_tensor *vs_softplus(vs_tensor *x) { return unary(U_SOFTPLUS, x, 0, 0); }
vs_tensor *vs_log_sigmoid(vs_tensor *x) { return unary(U_LOGSIGMOID, x, 0, 0); }
vs_tensor *vs_sign(const vs_tensor *x) { return unary(U_SIGN, (vs_tensor *)x, 0, 0); }
vs_tensor *vs_step(const vs_tensor *x) { return unary(U_STEP, (vs_tensor *)x, 0, 0); }

vs_tensor *vs_clamp(vs_tensor *x, float lo, float hi)
{
    if (x && !(lo <= hi)) return vs_op_error("clamp", "lower bound %g above upper bound %g", lo, hi);
    return unary(U_CLAMP, x, lo, hi);
}
