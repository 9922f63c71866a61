/* ops_reduce.c - sums, means, max/min over axes, broadcasting (expand / sum_to), logsumexp,
 * softmax and log_softmax.  Sums accumulate in double, in a fixed order, so results are
 * reproducible and accurate. */
#include "autograd/internal.h"
#include "autograd/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Shape after reducing `axes` of x (kept as size 1 when keepdim). */
static int reduced_shape(const vs_tensor *x, uint32_t axes, bool keepdim, int64_t *shape)
{
    int nd = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (axes & VS_AXIS(i)) {
            if (keepdim) shape[nd++] = 1;
        } else {
            shape[nd++] = x->shape[i];
        }
    }
    return nd;
}

static bool check_axes(const char *op, const vs_tensor *x, uint32_t axes)
{
    if (axes == VS_ALL_AXES) return true;
    if (x->ndim < 32 && (axes >> x->ndim) != 0)
        return vs_op_error(op, "axis mask 0x%x names axes beyond a %d-d tensor", axes, x->ndim), false;
    return true;
}

/* Walk x row by row (last dim), calling visit with the output offset of each element group.  The
 * output strides are x's keepdim strides with 0 on reduced axes. */
typedef struct red_iter {
    int64_t ost[VS_MAX_DIMS];
    int64_t inner;     /* last dim length */
    bool inner_reduced;
} red_iter;

static void red_iter_init(red_iter *it, const vs_tensor *x, uint32_t axes)
{
    int64_t s = 1;
    for (int i = x->ndim - 1; i >= 0; i--) {
        bool r = (axes & VS_AXIS(i)) != 0;
        it->ost[i] = r ? 0 : s;
        if (!r) s *= x->shape[i];
    }
    it->inner = x->ndim ? x->shape[x->ndim - 1] : 1;
    it->inner_reduced = x->ndim ? (axes & VS_AXIS(x->ndim - 1)) != 0 : true;
}

/* Sums see x with neighbouring dims merged where both are reduced or both kept ([n,c,h,w] summed
 * over n, h, w is [n, c, h*w] summed over the first and last), and visit it row by row (a row is
 * the last merged dim, `inner` long) in row-major order: a reduced last dim is summed per row by
 * row_sum and the row's sum added to the output's accumulator; a kept last dim adds element by
 * element.  That order is the reference.  For the parallel version the chunks divide one kept
 * row dim (or, when every row dim is reduced, the columns): each output then still receives its
 * terms in the reference order, from one chunk only, so the result is the same for any thread
 * count. */
#define SUM_GRAIN 32768 /* elements of x per chunk */

typedef struct sum_job {
    const float *x;
    double *acc;
    int nd;                       /* row dims */
    int64_t shape[VS_MAX_DIMS];   /* their extents */
    int64_t xst[VS_MAX_DIMS];     /* x offset per step of each, in floats */
    int64_t ost[VS_MAX_DIMS];     /* output offset per step (0 when reduced) */
    int split;                    /* row dim the chunks divide, -1: the columns */
    int64_t inner;
    bool inner_reduced;
} sum_job;

/* Sum of p[0, n) in double: lane k of 8 sums the elements = k mod 8 in order (so the loop
 * vectorises), then the lanes are added pairwise, (0+1)+(2+3) + (4+5)+(6+7), then the tail. */
VS_VECTOR_CLONES double vs_row_sum(const float *restrict p, int64_t n)
{
    double l[8] = {0};
    int64_t c = 0;
    for (; c + 8 <= n; c += 8)
        for (int k = 0; k < 8; k++) l[k] += p[c + k];
    double s = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
    for (; c < n; c++) s += p[c];
    return s;
}

/* a[0, n) += p[0, n), in double. */
VS_VECTOR_CLONES512 static void row_accumulate(double *restrict a, const float *restrict p, int64_t n)
{
    for (int64_t i = 0; i < n; i++) a[i] += p[i];
}

static void sum_rows(const sum_job *j, int64_t begin, int64_t end)
{
    int64_t lo[VS_MAX_DIMS], hi[VS_MAX_DIMS], idx[VS_MAX_DIMS], xo = 0, off = 0, rows = 1;
    for (int d = 0; d < j->nd; d++) {
        lo[d] = d == j->split ? begin : 0;
        hi[d] = d == j->split ? end : j->shape[d];
        idx[d] = lo[d];
        xo += lo[d] * j->xst[d];
        off += lo[d] * j->ost[d];
        rows *= hi[d] - lo[d];
    }
    /* columns [c0, c1) of each row: all of them unless the chunks divide the columns */
    const int64_t c0 = j->split < 0 ? begin : 0, c1 = j->split < 0 ? end : j->inner;
    for (int64_t r = 0; r < rows; r++) {
        if (j->inner_reduced)
            j->acc[off] += vs_row_sum(j->x + xo, j->inner);
        else
            row_accumulate(j->acc + off + c0, j->x + xo + c0, c1 - c0);
        for (int d = j->nd - 1; d >= 0; d--) {
            idx[d]++;
            xo += j->xst[d];
            off += j->ost[d];
            if (idx[d] < hi[d]) break;
            xo -= j->xst[d] * (hi[d] - lo[d]);
            off -= j->ost[d] * (hi[d] - lo[d]);
            idx[d] = lo[d];
        }
    }
}

static void sum_chunk(void *ctx, int64_t begin, int64_t end) { sum_rows(ctx, begin, end); }

/* Sum of x over axes into y (already allocated, y->size outputs); false (error recorded) when the
 * accumulators cannot be allocated. */
static bool sum_kernel(const char *op, const vs_tensor *x, uint32_t axes, vs_tensor *y)
{
    double *acc = vs_calloc((size_t)(y->size ? y->size : 1), sizeof *acc);
    if (!acc) {
        vs_op_nomem(op, "the accumulators");
        return false;
    }
    if (x->size > 0) {
        /* merge neighbouring dims that are both reduced or both kept; size-1 dims drop out */
        int nd = 0;
        int64_t shape[VS_MAX_DIMS];
        bool red[VS_MAX_DIMS];
        for (int d = 0; d < x->ndim; d++) {
            if (x->shape[d] == 1) continue;
            const bool r = (axes & VS_AXIS(d)) != 0;
            if (nd > 0 && red[nd - 1] == r) {
                shape[nd - 1] *= x->shape[d];
            } else {
                shape[nd] = x->shape[d];
                red[nd++] = r;
            }
        }
        if (nd == 0) { /* a single element */
            shape[0] = 1;
            red[nd++] = true;
        }
        sum_job j = {.x = x->data, .acc = acc, .nd = nd - 1, .split = -1, .inner = shape[nd - 1], .inner_reduced = red[nd - 1]};
        int64_t xs = j.inner, os = j.inner_reduced ? 1 : j.inner;
        for (int d = nd - 2; d >= 0; d--) {
            j.shape[d] = shape[d];
            j.xst[d] = xs;
            j.ost[d] = red[d] ? 0 : os;
            xs *= shape[d];
            if (!red[d]) os *= shape[d];
        }
        for (int d = 0; d < j.nd; d++)
            if (!red[d] && (j.split < 0 || j.shape[d] > j.shape[j.split])) j.split = d;
        const int64_t n = j.split >= 0 ? j.shape[j.split] : j.inner;
        if (x->size < 2 * SUM_GRAIN || n < 2 || (j.split < 0 && j.inner_reduced)) {
            sum_rows(&j, 0, n);
        } else {
            const int64_t per = x->size / n; /* elements of x per index of the divided dim */
            vs_parallel_for(n, (SUM_GRAIN + per - 1) / per, sum_chunk, &j);
        }
    }
    for (int64_t i = 0; i < y->size; i++) y->data[i] = (float)acc[i];
    free(acc);
    return true;
}

/* g (shaped like a reduction of x, with or without kept dims) broadcast back to x's shape. */
static vs_tensor *expand_back(vs_tensor *g, const vs_tensor *x, uint32_t axes)
{
    int64_t ks[VS_MAX_DIMS];
    int nd = reduced_shape(x, axes, true, ks);
    return vs_expand(vs_reshape(g, nd, ks), x->ndim, x->shape);
}

/* What a reduction node keeps: the reduced axes, and the mean's 1/count. */
typedef struct reduce_params {
    uint32_t axes;
    float scale;
} reduce_params;

static void sum_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    gin[0] = expand_back(g, n->in[0], VS_PARAMS(n, reduce_params)->axes);
}

static void mean_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    const reduce_params *p = VS_PARAMS(n, reduce_params);
    gin[0] = vs_mul_scalar(expand_back(g, n->in[0], p->axes), p->scale);
}

static vs_tensor *sum_or_mean(const char *op, vs_tensor *x, uint32_t axes, bool keepdim, bool mean)
{
    if (!x || !check_axes(op, x, axes)) return NULL;
    if (x->ndim < 32) axes &= (x->ndim ? (1u << x->ndim) - 1u : 0u);
    int64_t shape[VS_MAX_DIMS];
    int nd = reduced_shape(x, axes, keepdim, shape);
    vs_tensor *y = vs_alloc(op, nd, shape);
    if (!y) return NULL;
    if (!sum_kernel(op, x, axes, y)) {
        vs_tensor_free(y);
        return NULL;
    }
    int64_t count = y->size ? x->size / y->size : 0;
    float scale = count ? 1.0f / (float)count : NAN;
    if (mean)
        for (int64_t i = 0; i < y->size; i++) y->data[i] *= scale;
    const reduce_params p = {axes, scale};
    return vs_record(y, op, mean ? mean_backward : sum_backward, 1, &x, &p, sizeof p);
}

vs_tensor *vs_sum(vs_tensor *x, uint32_t axes, bool keepdim) { return sum_or_mean("sum", x, axes, keepdim, false); }
vs_tensor *vs_mean(vs_tensor *x, uint32_t axes, bool keepdim) { return sum_or_mean("mean", x, axes, keepdim, true); }

/* ---- max / min ------------------------------------------------------------------------------------ */

static void extreme_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    gin[0] = vs_mul(expand_back(g, n->in[0], VS_PARAMS(n, reduce_params)->axes), n->saved);
}

static vs_tensor *extreme(const char *op, vs_tensor *x, uint32_t axes, bool keepdim, bool is_max)
{
    if (!x || !check_axes(op, x, axes)) return NULL;
    if (x->ndim < 32) axes &= (x->ndim ? (1u << x->ndim) - 1u : 0u);
    if (x->size == 0) return vs_op_error(op, "reduction of an empty tensor");
    int64_t shape[VS_MAX_DIMS];
    int nd = reduced_shape(x, axes, keepdim, shape);
    vs_tensor *y = vs_alloc(op, nd, shape);
    int64_t *arg = y ? vs_malloc((size_t)(y->size ? y->size : 1) * sizeof *arg) : NULL;
    if (!arg) {
        vs_tensor_free(y);
        return y ? vs_op_nomem(op, "the argmax indices") : NULL;
    }
    for (int64_t i = 0; i < y->size; i++) arg[i] = -1;
    red_iter it;
    red_iter_init(&it, x, axes);
    int64_t idx[VS_MAX_DIMS] = {0}, off = 0, rows = x->size / it.inner;
    for (int64_t r = 0; r < rows; r++) {
        const float *p = x->data + r * it.inner;
        for (int64_t j = 0; j < it.inner; j++) {
            int64_t o = off + (it.inner_reduced ? 0 : j);
            float v = p[j];
            /* First extreme wins; NaN propagates (it compares as never better, so take it explicitly). */
            if (arg[o] < 0 || (is_max ? v > y->data[o] : v < y->data[o]) || (isnan(v) && !isnan(y->data[o]))) {
                y->data[o] = v;
                arg[o] = r * it.inner + j;
            }
        }
        for (int d = x->ndim - 2; d >= 0; d--) {
            idx[d]++;
            off += it.ost[d];
            if (idx[d] < x->shape[d]) break;
            off -= it.ost[d] * x->shape[d];
            idx[d] = 0;
        }
    }
    const reduce_params p = {axes, 0.0f};
    y = vs_record(y, op, extreme_backward, 1, &x, &p, sizeof p);
    if (y && y->node) {
        /* the rule's mask: 1 at each chosen element */
        bool prev = vs_set_grad_enabled(false);
        vs_tensor *mask = vs_zeros_like(x);
        vs_set_grad_enabled(prev);
        if (!mask) {
            vs_tensor_free(y);
            y = NULL;
        } else {
            for (int64_t i = 0; i < y->size; i++) mask->data[arg[i]] = 1.0f;
            vs_node_save(y, mask);
            vs_tensor_free(mask);
        }
    }
    free(arg);
    return y;
}

vs_tensor *vs_max(vs_tensor *x, uint32_t axes, bool keepdim) { return extreme("max", x, axes, keepdim, true); }
vs_tensor *vs_min(vs_tensor *x, uint32_t axes, bool keepdim) { return extreme("min", x, axes, keepdim, false); }

/* ---- broadcasting and its adjoint ------------------------------------------------------------------ */

static void expand_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    gin[0] = vs_sum_to(g, n->in[0]->ndim, n->in[0]->shape);
}

vs_tensor *vs_expand(vs_tensor *x, int ndim, const int64_t *shape)
{
    if (!x) return NULL;
    if (ndim < x->ndim || ndim > VS_MAX_DIMS) return vs_op_error("expand", "cannot expand %d dims to %d", x->ndim, ndim);
    int64_t st[VS_MAX_DIMS];
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        int ix = x->ndim - ndim + i;
        int64_t d = ix >= 0 ? x->shape[ix] : 1;
        if (d != 1 && d != shape[i]) return vs_op_error("expand", "dimension %d of size %lld cannot become %lld", i, (long long)d, (long long)shape[i]);
        st[i] = d == 1 ? 0 : s;
        s *= d;
    }
    vs_tensor *y = vs_alloc("expand", ndim, shape);
    if (!y) return NULL;
    if (y->size > 0) {
        if (x->size == y->size) {
            memcpy(y->data, x->data, (size_t)y->size * sizeof(float));
        } else {
            /* Merge neighbouring dims x walks the same way (both broadcast, or contiguous), so
             * [n,c,1,1] -> [n,c,h,w] fills rows of h*w instead of rows of w. */
            int64_t ms[VS_MAX_DIMS], mst[VS_MAX_DIMS];
            int md = 0;
            for (int d = 0; d < ndim; d++) {
                if (md > 0 && mst[md - 1] == st[d] * shape[d]) {
                    ms[md - 1] *= shape[d];
                    mst[md - 1] = st[d];
                } else {
                    ms[md] = shape[d];
                    mst[md] = st[d];
                    md++;
                }
            }
            int64_t inner = ms[md - 1], rows = y->size / inner, idx[VS_MAX_DIMS] = {0}, off = 0;
            const int64_t sin = mst[md - 1];
            for (int64_t r = 0; r < rows; r++) {
                float *restrict q = y->data + r * inner;
                const float *p = x->data + off;
                if (sin == 0) {
                    const float v = p[0];
                    for (int64_t j = 0; j < inner; j++) q[j] = v;
                } else {
                    memcpy(q, p, (size_t)inner * sizeof(float));
                }
                for (int d = md - 2; d >= 0; d--) {
                    idx[d]++;
                    off += mst[d];
                    if (idx[d] < ms[d]) break;
                    off -= mst[d] * ms[d];
                    idx[d] = 0;
                }
            }
        }
    }
    return vs_record(y, "expand", expand_backward, 1, &x, NULL, 0);
}

vs_tensor *vs_sum_to(vs_tensor *x, int ndim, const int64_t *shape)
{
    if (!x) return NULL;
    if (ndim > x->ndim) return vs_op_error("sum_to", "cannot sum %d dims to %d", x->ndim, ndim);
    uint32_t axes = 0;
    int lead = x->ndim - ndim;
    for (int i = 0; i < x->ndim; i++) {
        if (i < lead) {
            axes |= VS_AXIS(i);
        } else if (shape[i - lead] == 1 && x->shape[i] != 1) {
            axes |= VS_AXIS(i);
        } else if (shape[i - lead] != x->shape[i]) {
            return vs_op_error("sum_to", "dimension %d of size %lld cannot sum to %lld", i, (long long)x->shape[i],
                               (long long)shape[i - lead]);
        }
    }
    if (!axes) return vs_reshape(x, ndim, shape);
    vs_scope_begin();
    return vs_scope_return(vs_reshape(vs_sum(x, axes, true), ndim, shape));
}

/* ---- along one axis: logsumexp, softmax, log_softmax ------------------------------------------------ */

/* x seen as [outer, len, inner] around `axis`. */
static void axis_split(const vs_tensor *x, int axis, int64_t *outer, int64_t *len, int64_t *inner)
{
    *outer = 1;
    *inner = 1;
    for (int i = 0; i < axis; i++) *outer *= x->shape[i];
    for (int i = axis + 1; i < x->ndim; i++) *inner *= x->shape[i];
    *len = x->shape[axis];
}

typedef enum axis_fn { AX_LSE, AX_SOFTMAX, AX_LOGSOFTMAX } axis_fn;

/* Values put through e^x together (vs_exp_pd): a row in chunks of this many, or as many whole rows
 * as fit when the axis is the last one and short (a batch of logits: many independent exponentials
 * in flight instead of one row's few). */
#define AXIS_CHUNK 256

/* The largest of p[k inner], k < len; 0 when all are -inf (avoiding inf - inf). */
static float axis_max(const float *p, int64_t len, int64_t inner)
{
    float m = -INFINITY;
    for (int64_t k = 0; k < len; k++) m = p[k * inner] > m ? p[k * inner] : m;
    return isinf(m) && m < 0 ? 0 : m;
}

/* t[k] = p[k inner] - m in double, k < n: the exponents vs_exp_pd takes. */
static void shifted(const float *p, int64_t inner, int64_t n, float m, double *t)
{
    for (int64_t k = 0; k < n; k++) t[k] = (double)p[k * inner] - m;
}

/* One row's outputs from its max m and s = sum e^(x - m) (t[k] = e^(p[k inner] - m) when the row's
 * exponentials are at hand, else NULL: softmax then recomputes them a chunk at a time): lse at
 * q[0], or the row at q, q[k inner]. */
static void axis_finish(axis_fn fn, const float *p, int64_t len, int64_t inner, float m, double s, const double *t,
                        float *q)
{
    const float lse = m + (float)log(s);
    if (fn == AX_LSE) {
        q[0] = lse;
    } else if (fn == AX_LOGSOFTMAX) {
        for (int64_t k = 0; k < len; k++) q[k * inner] = p[k * inner] - lse;
    } else if (t) {
        for (int64_t k = 0; k < len; k++) q[k * inner] = (float)(t[k] / s);
    } else {
        double c[AXIS_CHUNK];
        for (int64_t k0 = 0; k0 < len; k0 += AXIS_CHUNK) {
            const int64_t n = len - k0 < AXIS_CHUNK ? len - k0 : AXIS_CHUNK;
            shifted(p + k0 * inner, inner, n, m, c);
            vs_exp_pd(c, c, n);
            for (int64_t k = 0; k < n; k++) q[(k0 + k) * inner] = (float)(c[k] / s);
        }
    }
}

/* lse = m + log sum_k e^(x_k - m) along the axis (m its max), the sum in double in k order;
 * softmax e^(x - m) / sum, log_softmax x - lse.  Rows batched or chunked, the same values. */
static void axis_kernel(axis_fn fn, const vs_tensor *x, int axis, float *y)
{
    int64_t outer, len, inner;
    axis_split(x, axis, &outer, &len, &inner);
    double t[AXIS_CHUNK];
    float m[AXIS_CHUNK];
    if (inner == 1 && len <= AXIS_CHUNK) {
        const int64_t per = AXIS_CHUNK / len;
        for (int64_t r0 = 0; r0 < outer; r0 += per) {
            const int64_t nr = outer - r0 < per ? outer - r0 : per;
            const float *p = x->data + r0 * len;
            for (int64_t r = 0; r < nr; r++) {
                m[r] = axis_max(p + r * len, len, 1);
                shifted(p + r * len, 1, len, m[r], t + r * len);
            }
            vs_exp_pd(t, t, nr * len);
            for (int64_t r = 0; r < nr; r++) {
                double s = 0;
                for (int64_t k = 0; k < len; k++) s += t[r * len + k];
                axis_finish(fn, p + r * len, len, 1, m[r], s, t + r * len, y + (r0 + r) * (fn == AX_LSE ? 1 : len));
            }
        }
        return;
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *p = x->data + o * len * inner + i;
            const float mx = axis_max(p, len, inner);
            double s = 0;
            for (int64_t k0 = 0; k0 < len; k0 += AXIS_CHUNK) {
                const int64_t n = len - k0 < AXIS_CHUNK ? len - k0 : AXIS_CHUNK;
                shifted(p + k0 * inner, inner, n, mx, t);
                vs_exp_pd(t, t, n);
                for (int64_t k = 0; k < n; k++) s += t[k];
            }
            axis_finish(fn, p, len, inner, mx, s, len <= AXIS_CHUNK ? t : NULL,
                        y + (fn == AX_LSE ? o * inner + i : o * len * inner + i));
        }
}

/* What a logsumexp / softmax / log_softmax node keeps: the (normalised) axis. */
typedef struct axis_params {
    int axis;
} axis_params;

static void lse_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    vs_tensor *x = n->in[0];
    const uint32_t ax = VS_AXIS(VS_PARAMS(n, axis_params)->axis);
    /* d lse / dx = softmax(x) = e^(x - lse) */
    vs_tensor *lse = expand_back(out, x, ax);
    gin[0] = vs_mul(expand_back(g, x, ax), vs_exp(vs_sub(x, lse)));
}

static void softmax_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    /* y (g - sum(g y)) */
    gin[0] = vs_mul(out, vs_sub(g, vs_sum(vs_mul(g, out), VS_AXIS(VS_PARAMS(n, axis_params)->axis), true)));
}

static void log_softmax_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    /* g - e^y sum(g) */
    gin[0] = vs_sub(g, vs_mul(vs_exp(out), vs_sum(g, VS_AXIS(VS_PARAMS(n, axis_params)->axis), true)));
}

static vs_tensor *along_axis(axis_fn fn, const char *op, vs_tensor *x, int axis, bool keepdim)
{
    if (!x) return NULL;
    int a = vs_norm_axis(op, axis, x->ndim);
    if (a < 0) return NULL;
    vs_tensor *y;
    if (fn == AX_LSE) {
        int64_t shape[VS_MAX_DIMS];
        int nd = reduced_shape(x, VS_AXIS(a), keepdim, shape);
        y = vs_alloc(op, nd, shape);
    } else {
        y = vs_alloc(op, x->ndim, x->shape);
    }
    if (!y) return NULL;
    if (x->size > 0) axis_kernel(fn, x, a, y->data);
    static const vs_backward_fn bws[] = {lse_backward, softmax_backward, log_softmax_backward};
    const axis_params p = {a};
    return vs_record(y, op, bws[fn], 1, &x, &p, sizeof p);
}

vs_tensor *vs_logsumexp(vs_tensor *x, int axis, bool keepdim) { return along_axis(AX_LSE, "logsumexp", x, axis, keepdim); }
vs_tensor *vs_softmax(vs_tensor *x, int axis) { return along_axis(AX_SOFTMAX, "softmax", x, axis, true); }
vs_tensor *vs_log_softmax(vs_tensor *x, int axis) { return along_axis(AX_LOGSOFTMAX, "log_softmax", x, axis, true); }
