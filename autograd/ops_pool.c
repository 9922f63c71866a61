/* ops_pool.c - max_pool2d, avg_pool2d and upsample_nearest2d (NCHW), with backward rules in ops.
 *
 * max_pool2d's gradient is a scatter of g into the argmax positions (vs_scatter_add, whose own
 * backward is the gather vs_index_select at the same positions), avg_pool2d's is avg_unpool (spread
 * g / k^2 over each window) whose backward is avg_pool2d again, and upsampling's is a block sum.
 * So every rule here is differentiable again.  The DeepLIFT rescale rule for max_pool2d is below. */
#include "autograd/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Pooling geometry: planes = n*c images of h x w, windows k x k every s, padding p. */
typedef struct pool_geom {
    int64_t planes, h, w, oh, ow, k, s, p;
} pool_geom;

/* Validate x and the window; stride 0 means the kernel size (PyTorch's default). */
static bool pool_geom_of(const char *op, const vs_tensor *x, int kernel, int stride, int padding, pool_geom *g)
{
    if (x->ndim != 4) {
        vs_op_error(op, "input must be [n,c,h,w], got %d dims", x->ndim);
        return false;
    }
    if (kernel < 1 || stride < 0 || padding < 0) {
        vs_op_error(op, "kernel %d, stride %d, padding %d: need kernel >= 1, stride >= 0, padding >= 0", kernel, stride, padding);
        return false;
    }
    if (padding > kernel / 2) {
        vs_op_error(op, "padding %d exceeds half the kernel size %d", padding, kernel);
        return false;
    }
    g->planes = x->shape[0] * x->shape[1];
    g->h = x->shape[2];
    g->w = x->shape[3];
    g->k = kernel;
    g->s = stride ? stride : kernel;
    g->p = padding;
    int64_t nh = g->h + 2 * g->p - g->k, nw = g->w + 2 * g->p - g->k;
    g->oh = nh < 0 ? 0 : nh / g->s + 1;
    g->ow = nw < 0 ? 0 : nw / g->s + 1;
    if (g->oh < 1 || g->ow < 1) {
        vs_op_error(op, "output would be empty: input %lld x %lld, kernel %d, stride %lld, padding %d", (long long)g->h,
                    (long long)g->w, kernel, (long long)g->s, padding);
        return false;
    }
    return true;
}

/* Window of output (i, j) clipped to the image: rows [r0, r1), columns [c0, c1). */
static inline void window(const pool_geom *g, int64_t i, int64_t j, int64_t *r0, int64_t *r1, int64_t *c0, int64_t *c1)
{
    *r0 = i * g->s - g->p;
    *c0 = j * g->s - g->p;
    *r1 = *r0 + g->k < g->h ? *r0 + g->k : g->h;
    *c1 = *c0 + g->k < g->w ? *c0 + g->k : g->w;
    if (*r0 < 0) *r0 = 0;
    if (*c0 < 0) *c0 = 0;
}

/* What a pooling node keeps: kernel, stride, padding. */
typedef struct pool_params {
    int64_t k, s, p;
} pool_params;

/* Record out's node with g's window; out or NULL (see vs_record). */
static vs_tensor *pool_record(vs_tensor *out, const char *op, vs_backward_fn bw, vs_tensor *x, const pool_geom *g)
{
    const pool_params p = {g->k, g->s, g->p};
    return vs_record(out, op, bw, 1, &x, &p, sizeof p);
}

/* ---- max_pool2d ------------------------------------------------------------------------------------ */

/* g [shape of y] scattered into a tensor shaped like `like`: out.flat[idx[j]] += g.flat[j]. */
static vs_tensor *scatter_flat(vs_tensor *g, const int64_t *idx, const vs_tensor *like)
{
    if (!g) return NULL;
    vs_tensor *flat = vs_reshape(g, 1, (int64_t[]){g->size});
    return vs_reshape(vs_scatter_add(flat, 0, idx, like->size), like->ndim, like->shape);
}

/* DeepLIFT rescale for max pooling.  Rows [0, N) of the batch are inputs, [N, 2N) references;
 * d = x - x_ref, dy = y - y_ref.  Each window w sends g[w] * dy[w] / d[p] to one position p: the
 * input's first maximum a(w) when |d[a]| > 1e-6, else the reference's first maximum b(w) when
 * |d[b]| > 1e-6, else (then dy[w] = 0 necessarily: y = x[a] = x_ref[a] <= x_ref[b] = x[b] <= x[a])
 * g[w] to a(w), the gradient rule.  Guarantee: with g = 1 on the input half,
 * sum_i gin[i] d[i] = sum_w dy[w] exactly, for every input and reference - also after a ReLU, where
 * whole windows of zeros are common and the input's own argmax often has no delta.  The reference
 * half gets the same multipliers at the same positions (as the elementwise rescale rule does).  The
 * multiplier is a constant, so the rule is linear, and differentiable, in g. */
static vs_tensor *max_pool_rescale(const vs_tensor *x, const vs_tensor *y, vs_tensor *g, const int64_t *arg)
{
    int64_t hy = y->size / 2, hx = x->size / 2;
    int64_t *idx = vs_malloc((size_t)(y->size ? y->size : 1) * sizeof *idx);
    vs_tensor *coef = vs_alloc("max_pool2d rescale", y->ndim, y->shape);
    if (!idx || !coef) {
        free(idx);
        vs_tensor_free(coef);
        return vs_op_nomem("max_pool2d", "the rescale rule");
    }
    for (int64_t j = 0; j < hy; j++) {
        int64_t a = arg[j], b = arg[j + hy] - hx;
        float da = x->data[a] - x->data[a + hx], db = x->data[b] - x->data[b + hx];
        int64_t p = fabsf(da) > 1e-6f || !(fabsf(db) > 1e-6f) ? a : b;
        float d = p == a ? da : db;
        coef->data[j] = coef->data[j + hy] = fabsf(d) > 1e-6f ? (y->data[j] - y->data[j + hy]) / d : 1.0f;
        idx[j] = p;
        idx[j + hy] = p + hx;
    }
    vs_tensor *r = scatter_flat(vs_mul(g, coef), idx, x);
    free(idx);
    return r;
}

static void max_pool_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    vs_tensor *x = n->in[0];
    const int64_t *arg = n->extra;
    if (n->rule == VS_RULE_RESCALE && x->shape[0] % 2 == 0 && x->shape[0] > 0)
        gin[0] = max_pool_rescale(x, out, g, arg);
    else
        gin[0] = scatter_flat(g, arg, x);
}

/* Does v replace the running maximum m?  The first maximum wins and NaN propagates: a NaN is taken
 * over any number, and once m is NaN nothing replaces it. */
static inline bool max_takes(float v, float m) { return m == m && !(v <= m); }

/* Max pooling of every window, the reference for the fast path below. */
static void max_pool_any(const float *x, const pool_geom *g, float *y, int64_t *arg)
{
    for (int64_t pl = 0; pl < g->planes; pl++) {
        const float *src = x + pl * g->h * g->w;
        for (int64_t i = 0; i < g->oh; i++)
            for (int64_t j = 0; j < g->ow; j++) {
                int64_t r0, r1, c0, c1;
                window(g, i, j, &r0, &r1, &c0, &c1);
                /* padding <= kernel/2 puts at least one real element in every window (padding is
                 * -inf, so it never wins) */
                float m = src[r0 * g->w + c0];
                int64_t best = r0 * g->w + c0;
                for (int64_t r = r0; r < r1; r++)
                    for (int64_t c = c0; c < c1; c++)
                        if (max_takes(src[r * g->w + c], m)) {
                            m = src[r * g->w + c];
                            best = r * g->w + c;
                        }
                const int64_t o = (pl * g->oh + i) * g->ow + j;
                y[o] = m;
                arg[o] = pl * g->h * g->w + best;
            }
    }
}

/* 8 windows of 2x2, stride 2: a and c are the window rows (16 floats each), y the maxima, arg
 * their flat indices (base: index of a[0], w: row length).  The four values are compared in
 * max_pool_any's order with selects, so the loop vectorises; the winner is kept as a code 0-3
 * (int32, the width of a float lane) and turned into the int64 index by a second loop. */
static inline void max_pool_k2_block8(const float *restrict a, const float *restrict c, int64_t base, int64_t w,
                                      float *restrict y, int64_t *restrict arg)
{
    int32_t code[8];
    for (int i = 0; i < 8; i++) {
        float m = a[2 * i];
        int32_t k = 0;
        bool t = max_takes(a[2 * i + 1], m);
        m = t ? a[2 * i + 1] : m;
        k = t ? 1 : k;
        t = max_takes(c[2 * i], m);
        m = t ? c[2 * i] : m;
        k = t ? 2 : k;
        t = max_takes(c[2 * i + 1], m);
        m = t ? c[2 * i + 1] : m;
        k = t ? 3 : k;
        y[i] = m;
        code[i] = k;
    }
    for (int i = 0; i < 8; i++) arg[i] = base + 2 * i + (code[i] & 1) + (int64_t)(code[i] >> 1) * w;
}

/* One output row of 2x2, stride 2, no padding: input rows r0 and r0 + w, outputs y[0, ow) and
 * their flat argmax arg[0, ow) (base: flat index of r0[0]).  The last ow % 8 windows are copied
 * into a block of 8 so that they too take the vector path (small images are mostly tail). */
VS_VECTOR_CLONES static void max_pool_k2_row(const float *restrict r0, int64_t w, int64_t ow, int64_t base,
                                             float *restrict y, int64_t *restrict arg)
{
    int64_t j = 0;
    for (; j + 8 <= ow; j += 8) max_pool_k2_block8(r0 + 2 * j, r0 + w + 2 * j, base + 2 * j, w, y + j, arg + j);
    if (j == ow) return;
    const size_t rest = (size_t)(ow - j);
    float a[16] = {0}, c[16] = {0}, ty[8];
    int64_t targ[8];
    memcpy(a, r0 + 2 * j, 2 * rest * sizeof(float));
    memcpy(c, r0 + w + 2 * j, 2 * rest * sizeof(float));
    max_pool_k2_block8(a, c, base + 2 * j, w, ty, targ);
    memcpy(y + j, ty, rest * sizeof(float));
    memcpy(arg + j, targ, rest * sizeof(int64_t));
}

vs_tensor *vs_max_pool2d(vs_tensor *x, int kernel, int stride, int padding)
{
    static const char *op = "max_pool2d";
    if (!x) return NULL;
    pool_geom g;
    if (!pool_geom_of(op, x, kernel, stride, padding, &g)) return NULL;
    vs_tensor *y = vs_alloc(op, 4, (int64_t[]){x->shape[0], x->shape[1], g.oh, g.ow});
    if (!y) return NULL;
    int64_t *arg = vs_malloc((size_t)(y->size ? y->size : 1) * sizeof *arg);
    if (!arg) {
        vs_tensor_free(y);
        return vs_op_nomem(op, "the argmax indices");
    }
    if (g.k == 2 && g.s == 2 && g.p == 0) {
        for (int64_t pl = 0; pl < g.planes; pl++)
            for (int64_t i = 0; i < g.oh; i++) {
                const int64_t in = pl * g.h * g.w + 2 * i * g.w, out = (pl * g.oh + i) * g.ow;
                max_pool_k2_row(x->data + in, g.w, g.ow, in, y->data + out, arg + out);
            }
    } else {
        max_pool_any(x->data, &g, y->data, arg);
    }
    y = pool_record(y, op, max_pool_backward, x, &g);
    vs_node_adopt(y, arg);
    return y;
}

/* ---- avg_pool2d and its adjoint ------------------------------------------------------------------- */

static vs_tensor *avg_unpool(vs_tensor *g, const vs_tensor *like, int64_t k, int64_t s, int64_t p);

static void avg_pool_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    const pool_params *p = VS_PARAMS(n, pool_params);
    gin[0] = avg_unpool(g, n->in[0], p->k, p->s, p->p);
}

static void avg_unpool_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    const pool_params *p = VS_PARAMS(n, pool_params);
    gin[0] = vs_avg_pool2d(g, (int)p->k, (int)p->s, (int)p->p);
}

vs_tensor *vs_avg_pool2d(vs_tensor *x, int kernel, int stride, int padding)
{
    static const char *op = "avg_pool2d";
    if (!x) return NULL;
    pool_geom g;
    if (!pool_geom_of(op, x, kernel, stride, padding, &g)) return NULL;
    vs_tensor *y = vs_alloc(op, 4, (int64_t[]){x->shape[0], x->shape[1], g.oh, g.ow});
    if (!y) return NULL;
    double inv = 1.0 / (double)(g.k * g.k); /* padding counts in the divisor */
    for (int64_t pl = 0; pl < g.planes; pl++) {
        const float *src = x->data + pl * g.h * g.w;
        for (int64_t i = 0; i < g.oh; i++)
            for (int64_t j = 0; j < g.ow; j++) {
                int64_t r0, r1, c0, c1;
                window(&g, i, j, &r0, &r1, &c0, &c1);
                double sum = 0;
                for (int64_t r = r0; r < r1; r++)
                    for (int64_t c = c0; c < c1; c++) sum += src[r * g.w + c];
                y->data[(pl * g.oh + i) * g.ow + j] = (float)(sum * inv);
            }
    }
    return pool_record(y, op, avg_pool_backward, x, &g);
}

/* out [shape of like] with out[window(w)] += g[w] / k^2: the adjoint of avg_pool2d. */
static vs_tensor *avg_unpool(vs_tensor *gy, const vs_tensor *like, int64_t k, int64_t s, int64_t p)
{
    static const char *op = "avg_unpool";
    if (!gy) return NULL;
    pool_geom g;
    if (!pool_geom_of(op, like, (int)k, (int)s, (int)p, &g)) return NULL;
    if (gy->ndim != 4 || gy->shape[0] * gy->shape[1] != g.planes || gy->shape[2] != g.oh || gy->shape[3] != g.ow)
        return vs_op_error(op, "gradient does not match the pooled shape");
    vs_tensor *x = vs_alloc(op, like->ndim, like->shape);
    if (!x) return NULL;
    memset(x->data, 0, (size_t)x->size * sizeof(float));
    float inv = 1.0f / (float)(g.k * g.k);
    for (int64_t pl = 0; pl < g.planes; pl++) {
        float *dst = x->data + pl * g.h * g.w;
        for (int64_t i = 0; i < g.oh; i++)
            for (int64_t j = 0; j < g.ow; j++) {
                int64_t r0, r1, c0, c1;
                window(&g, i, j, &r0, &r1, &c0, &c1);
                float v = gy->data[(pl * g.oh + i) * g.ow + j] * inv;
                for (int64_t r = r0; r < r1; r++)
                    for (int64_t c = c0; c < c1; c++) dst[r * g.w + c] += v;
            }
    }
    return pool_record(x, op, avg_unpool_backward, gy, &g);
}

/* ---- upsample_nearest2d ----------------------------------------------------------------------------- */

/* What an upsampling node keeps. */
typedef struct upsample_params {
    int scale;
} upsample_params;

static void upsample_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    /* sum over each scale x scale block = mean * scale^2 */
    const int s = VS_PARAMS(n, upsample_params)->scale;
    gin[0] = vs_mul_scalar(vs_avg_pool2d(g, s, s, 0), (float)s * (float)s);
}

vs_tensor *vs_upsample_nearest2d(vs_tensor *x, int scale)
{
    static const char *op = "upsample_nearest2d";
    if (!x) return NULL;
    if (x->ndim != 4) return vs_op_error(op, "input must be [n,c,h,w], got %d dims", x->ndim);
    if (scale < 1) return vs_op_error(op, "scale %d must be at least 1", scale);
    int64_t h = x->shape[2], w = x->shape[3];
    size_t oh, ow;
    if (!vs_size_mul((size_t)h, (size_t)scale, &oh) || !vs_size_mul((size_t)w, (size_t)scale, &ow) || oh > (size_t)INT64_MAX / 4 ||
        ow > (size_t)INT64_MAX / 4)
        return vs_op_error(op, "output size overflows");
    vs_tensor *y = vs_alloc(op, 4, (int64_t[]){x->shape[0], x->shape[1], (int64_t)oh, (int64_t)ow});
    if (!y) return NULL;
    int64_t planes = x->shape[0] * x->shape[1], OW = (int64_t)ow;
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *src = x->data + pl * h * w;
        float *dst = y->data + pl * (int64_t)oh * OW;
        for (int64_t i = 0; i < (int64_t)oh; i++) {
            const float *s = src + (i / scale) * w;
            float *d = dst + i * OW;
            for (int64_t j = 0; j < OW; j++) d[j] = s[j / scale];
        }
    }
    const upsample_params p = {scale};
    return vs_record(y, op, upsample_backward, 1, &x, &p, sizeof p);
}
