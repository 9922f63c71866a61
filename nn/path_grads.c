/* path_grads.c - integrated gradients' weighted sum of gradients along a straight path, for a
 * sequential that starts: an affine run (linear, conv2d, average pools, flatten, eval-mode dropout
 * and batch norm; may be empty), a piecewise-linear block (ReLU, leaky ReLU, max
 * pool, eval-mode dropout, in any order), flatten / eval-mode dropout, then a conv2d or linear layer.
 * Whatever follows (smooth or not) runs point by point through autograd, in chunks.
 *
 * Along x_p = x' + a_p d the affine run gives z1_p = a_p A + B, A = f(x) - f(x'), B = f(x'): one
 * batched forward of two rows for all points.  Every output o of the block is then one first-layer
 * unit times a coefficient, h_p[o] = c_p(o) z1_p[j_p(o)] (ReLU and leaky ReLU scale it by their
 * slope, a max pool picks the window's largest), and (j, c) changes at few points.  The second layer
 *   z2_p = W2 h_p + b2 = a_p U_p + V_p + b2,  U_p = W2 (c_p . A[j_p]),  V_p = W2 (c_p . B[j_p]),
 * so U, V change only at such an event, by one column of W2 (kept in double so the updates do not
 * drift): two products plus one column per event for the whole path.  On the way back, with
 * g_p = w_p dS/dz2_p from the rest of the model and R_o(t) = (W2^T sum_{p < t} g_p)[o],
 *   sum_p dS/dz1_p = sum_o [ c_last R_o(n) at j_last + sum over events at t (c_old at j_old - c_new at j_new) R_o(t) ]
 * is one transposed product plus one row of W2^T against the running sum per event; the affine
 * run's adjoint (one vs_grad) takes it to the input.  These are the point-by-point gradients summed
 * in another order: equal up to rounding.  On the GANMEX MNIST classifier the per-point cost drops
 * from two convolutions to the rest of the model; on an MLP from two products to the last layers. */
#include "autograd/conv_winograd.h"
#include "autograd/kernels.h"
#include "nn/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Children [0, block) are the affine run, [block, reshape) the piecewise-linear block, [reshape,
 * second) flatten / dropout, `second` the second weighted layer; the rest is the tail. */
typedef struct path_plan {
    int64_t block, reshape, second;
} path_plan;

static bool affine_layer(const vs_module *c)
{
    switch (c->kind) {
    case VS_MODULE_LINEAR:
    case VS_MODULE_CONV2D:
    case VS_MODULE_AVG_POOL2D:
    case VS_MODULE_GLOBAL_AVG_POOL:
    case VS_MODULE_FLATTEN:
        return true;
    case VS_MODULE_DROPOUT:
    case VS_MODULE_BATCH_NORM1D:
    case VS_MODULE_BATCH_NORM2D:
        return !c->training;
    default:
        return false;
    }
}

static bool piecewise_layer(const vs_module *c)
{
    return c->kind == VS_MODULE_RELU || c->kind == VS_MODULE_LEAKY_RELU || c->kind == VS_MODULE_MAX_POOL2D ||
           (c->kind == VS_MODULE_DROPOUT && !c->training);
}

static bool plan_of(const vs_module *m, path_plan *pl)
{
    if (!m || m->kind != VS_MODULE_SEQUENTIAL) return false;
    int64_t i = 0, kinks = 0;
    while (i < m->n_children && affine_layer(m->children[i])) i++;
    pl->block = i;
    for (; i < m->n_children && piecewise_layer(m->children[i]); i++) {
        const vs_module *c = m->children[i];
        /* the block's max pools are read as dense windows of the default geometry */
        if (c->kind == VS_MODULE_MAX_POOL2D && (c->spec.dilation > 1 || c->spec.ceil_mode > 0)) return false;
        kinks += c->kind != VS_MODULE_DROPOUT;
    }
    pl->reshape = i;
    while (i < m->n_children && (m->children[i]->kind == VS_MODULE_FLATTEN ||
                                 (m->children[i]->kind == VS_MODULE_DROPOUT && !m->children[i]->training)))
        i++;
    pl->second = i;
    return kinks > 0 && i < m->n_children &&
           (m->children[i]->kind == VS_MODULE_LINEAR ||
            (m->children[i]->kind == VS_MODULE_CONV2D && m->children[i]->spec.dilation <= 1 &&
             m->children[i]->spec.groups <= 1)); /* dense second kernel */
}

bool vs_sequential_has_path_grads(const vs_module *m)
{
    path_plan pl;
    return plan_of(m, &pl);
}

static bool block_agrees(vs_module *m, const path_plan *pl, vs_tensor *x);

/* The layers fit x [1, ...] and the second weighted layer gets what it can take (see nn.h). */
static bool fits_shapes(const vs_module *m, const path_plan *pl, const vs_tensor *x)
{
    if (!x || x->ndim < 2 || x->shape[0] != 1) return false;
    vs_spec_shape sh = {.ndim = x->ndim - 1};
    memcpy(sh.d, x->shape + 1, (size_t)sh.ndim * sizeof *sh.d);
    vs_error err;
    for (int64_t i = 0; i < pl->second; i++)
        if (vs_spec_shape_step(&m->children[i]->spec, &sh, &err) != VS_OK) return false;
    /* the second layer takes the block's outputs as a vector (linear) or as [c, h, w] images */
    const vs_module *l2 = m->children[pl->second];
    if (sh.ndim != (l2->kind == VS_MODULE_LINEAR ? 1 : 3)) return false;
    const vs_spec_shape in = sh;
    if (vs_spec_shape_step(&l2->spec, &sh, &err) != VS_OK) return false;
    if (l2->kind != VS_MODULE_CONV2D) return true;
    /* a dense kernel, as reach() walks it */
    const int64_t k = l2->spec.kernel, s = l2->spec.stride, p = l2->spec.padding;
    return sh.d[1] == (in.d[1] + 2 * p - k) / s + 1 && sh.d[2] == (in.d[2] + 2 * p - k) / s + 1;
}

bool vs_sequential_path_grads_fits(vs_module *m, vs_tensor *x)
{
    path_plan pl;
    return plan_of(m, &pl) && fits_shapes(m, &pl, x) && block_agrees(m, &pl, x);
}

/* y = layer(x) without its bias.  Convolutions keep the direct kernels: U and V are later updated
 * one column of W2 at a time, exactly, which cancels a contribution only if the product summed it
 * term by term (Winograd's transforms spread each input's rounding over the tile: the zero-baseline
 * GANMEX gap grew from 1e-6 to 3e-4). */
static vs_tensor *apply(const vs_module *l, vs_tensor *x)
{
    if (l->kind == VS_MODULE_LINEAR) return vs_linear(x, l->params[0], NULL);
    const vs_conv_opts o = vs_module_conv_opts(l);
    vs_conv_winograd_hold(true);
    vs_tensor *y = vs_conv2d(x, l->params[0], NULL, &o);
    vs_conv_winograd_hold(false);
    return y;
}

/* The adjoint of apply(l, .) onto an input shaped like `like`. */
static vs_tensor *apply_t(const vs_module *l, vs_tensor *g, const vs_tensor *like)
{
    if (l->kind == VS_MODULE_LINEAR) return vs_matmul(g, l->params[0]);
    vs_conv_opts o = vs_module_conv_opts(l);
    const int64_t k = l->params[0]->shape[2], s = o.stride[0], p = o.padding[0];
    o.output_padding[0] = (int)((like->shape[2] + 2 * p - k) % s);
    o.output_padding[1] = (int)((like->shape[3] + 2 * p - k) % s);
    vs_conv_winograd_hold(true);
    vs_tensor *y = vs_conv_transpose2d(g, l->params[0], NULL, &o);
    vs_conv_winograd_hold(false);
    return y;
}

/* ---- the block: which unit of z1 each output is, and with which coefficient, at one point ---------- */

typedef struct block_layer {
    vs_module_kind kind;
    float slope;                   /* ReLU 0, leaky ReLU its slope */
    int64_t c, h, w, oh, ow, k, s, p; /* max pool: input planes c of h x w, output oh x ow */
} block_layer;

/* The block's layers with their geometry; values v, units j and coefficients c of the current point
 * (two buffers each, for the pools; before the first pool the units are `ident`), and the outputs'
 * (j, c) kept between points. */
typedef struct block {
    block_layer *layers;
    int64_t n_layers, n1, nh;
    float *v[2], *c[2];
    int32_t *j[2], *ident;
    int32_t *hj; /* [nh] */
    float *hc;   /* [nh] */
} block;

static float slope_of(const vs_module *c) { return c->kind == VS_MODULE_LEAKY_RELU ? (float)c->spec.slope : 0.0f; }

/* Lay out the block of m for z1 of shape z (one example: ndim, dims); false when out of memory. */
static bool block_init(block *b, const vs_module *m, const path_plan *pl, int zdim, const int64_t *z)
{
    memset(b, 0, sizeof *b);
    b->layers = calloc((size_t)(pl->reshape - pl->block), sizeof *b->layers);
    if (!b->layers) return false;
    int64_t n1 = 1;
    for (int d = 0; d < zdim; d++) n1 *= z[d];
    int64_t c = zdim == 3 ? z[0] : 0, h = zdim == 3 ? z[1] : 0, w = zdim == 3 ? z[2] : 0, size = n1;
    for (int64_t i = pl->block; i < pl->reshape; i++) {
        const vs_module *l = m->children[i];
        if (l->kind == VS_MODULE_DROPOUT) continue;
        block_layer *bl = &b->layers[b->n_layers++];
        bl->kind = l->kind;
        bl->slope = slope_of(l);
        if (l->kind == VS_MODULE_MAX_POOL2D) { /* shapes already checked by vs_sequential_path_grads_fits */
            bl->c = c, bl->h = h, bl->w = w, bl->k = l->spec.kernel, bl->s = l->spec.stride ? l->spec.stride : l->spec.kernel;
            bl->p = l->spec.padding;
            bl->oh = (h + 2 * bl->p - bl->k) / bl->s + 1, bl->ow = (w + 2 * bl->p - bl->k) / bl->s + 1;
            h = bl->oh, w = bl->ow, size = c * h * w;
        }
    }
    b->n1 = n1, b->nh = size;
    for (int t = 0; t < 2; t++) {
        b->v[t] = malloc((size_t)n1 * sizeof *b->v[t]);
        b->c[t] = malloc((size_t)n1 * sizeof *b->c[t]);
        b->j[t] = malloc((size_t)n1 * sizeof *b->j[t]);
    }
    b->ident = malloc((size_t)n1 * sizeof *b->ident);
    b->hj = malloc((size_t)size * sizeof *b->hj);
    b->hc = malloc((size_t)size * sizeof *b->hc);
    if (!(b->v[0] && b->v[1] && b->c[0] && b->c[1] && b->j[0] && b->j[1] && b->ident && b->hj && b->hc)) return false;
    for (int64_t i = 0; i < n1; i++) b->ident[i] = (int32_t)i;
    return true;
}

static void block_free(block *b)
{
    free(b->layers);
    for (int t = 0; t < 2; t++) free(b->v[t]), free(b->c[t]), free(b->j[t]);
    free(b->ident);
    free(b->hj);
    free(b->hc);
}

/* One max pool from (v, c, j) into buffer `to`: each window's largest value (the first on ties, in
 * vs_max_pool2d's order), its coefficient and unit. */
static void pool_layer(block *b, const block_layer *bl, const float *v, const float *c, const int32_t *j, int to)
{
    float *restrict ov = b->v[to], *restrict oc = b->c[to];
    int32_t *restrict oj = b->j[to];
    const int64_t h = bl->h, w = bl->w;
    for (int64_t pl = 0, o = 0; pl < bl->c; pl++)
        for (int64_t y = 0; y < bl->oh; y++) {
            if (bl->k == 2 && bl->s == 2 && bl->p == 0) { /* the common case, no clipping */
                for (int64_t x = 0; x < bl->ow; x++, o++) {
                    const int64_t i = (pl * h + 2 * y) * w + 2 * x;
                    int64_t best = i;
                    if (v[i + 1] > v[best]) best = i + 1;
                    if (v[i + w] > v[best]) best = i + w;
                    if (v[i + w + 1] > v[best]) best = i + w + 1;
                    ov[o] = v[best], oc[o] = c[best], oj[o] = j[best];
                }
                continue;
            }
            for (int64_t x = 0; x < bl->ow; x++, o++) {
                const int64_t r0 = y * bl->s - bl->p, c0 = x * bl->s - bl->p;
                int64_t best = -1;
                for (int64_t r = r0 < 0 ? 0 : r0; r < r0 + bl->k && r < h; r++)
                    for (int64_t q = c0 < 0 ? 0 : c0; q < c0 + bl->k && q < w; q++) {
                        const int64_t i = (pl * h + r) * w + q;
                        if (best < 0 || v[i] > v[best]) best = i;
                    }
                ov[o] = v[best], oc[o] = c[best], oj[o] = j[best];
            }
        }
}

/* v = s(z) z, c = s(z) for z = a A + B, s(z) = 1 when z > 0 else the slope: a first (leaky) ReLU.
 * Written without branches so that it vectorises. */
VS_VECTOR_CLONES VS_SELECTS static void kink_first(int64_t n, float a, const float *restrict A, const float *restrict B, float sl,
                                        float *restrict v, float *restrict c)
{
    for (int64_t i = 0; i < n; i++) {
        const float z = a * A[i] + B[i], m = z > 0 ? 1.0f : sl;
        v[i] = z * m;
        c[i] = m;
    }
}

/* v, c *= s(v): a later (leaky) ReLU. */
VS_VECTOR_CLONES VS_SELECTS static void kink(int64_t n, float sl, float *restrict v, float *restrict c)
{
    for (int64_t i = 0; i < n; i++) {
        const float m = v[i] > 0 ? 1.0f : sl;
        v[i] *= m;
        c[i] *= m;
    }
}

/* v = a A + B, c = 1: a max pool first. */
VS_VECTOR_CLONES static void affine_fill(int64_t n, float a, const float *restrict A, const float *restrict B,
                                         float *restrict v, float *restrict c)
{
    for (int64_t i = 0; i < n; i++) v[i] = a * A[i] + B[i], c[i] = 1.0f;
}

/* Run the block at z1 = a A + B; *j, *c the outputs' units and coefficients. */
static void block_eval(block *b, double a, const float *A, const float *B, const int32_t **jout, const float **cout)
{
    const float af = (float)a;
    float *v = b->v[0], *c = b->c[0];
    const int32_t *j = b->ident;
    int64_t t = 0, size = b->n1;
    int cur = 0;
    if (b->n_layers && b->layers[0].kind != VS_MODULE_MAX_POOL2D) {
        kink_first(size, af, A, B, b->layers[0].slope, v, c);
        t = 1;
    } else {
        affine_fill(size, af, A, B, v, c);
    }
    for (; t < b->n_layers; t++) {
        const block_layer *bl = &b->layers[t];
        if (bl->kind == VS_MODULE_MAX_POOL2D) {
            pool_layer(b, bl, b->v[cur], b->c[cur], j, !cur);
            cur = !cur;
            j = b->j[cur];
            size = bl->c * bl->oh * bl->ow;
            continue;
        }
        kink(size, bl->slope, b->v[cur], b->c[cur]);
    }
    *jout = j;
    *cout = b->c[cur];
}

/* Whether block_eval (on the laid-out block b) reads the block as its forward computes it at z1 = z
 * [1, ...]: each output its unit's value times its coefficient (to rounding: slopes may be multiplied
 * in another order).  Windows the engine does not model (other pooling options) fail here, whatever
 * the layer's fields. */
static bool block_agrees_at(vs_module *m, const path_plan *pl, block *b, vs_tensor *z)
{
    bool ok = false;
    const bool prev = vs_set_grad_enabled(false);
    vs_scope_begin();
    const vs_forward_ctx fc = {0};
    vs_tensor *y = vs_sequential_forward_range(m, z, &fc, pl->block, pl->reshape, NULL);
    float *zero = calloc((size_t)z->size, sizeof *zero);
    if (y && zero && b->nh == y->size && b->n1 == z->size) {
        const int32_t *j;
        const float *c;
        block_eval(b, 1.0, z->data, zero, &j, &c);
        ok = true;
        for (int64_t o = 0; o < b->nh && ok; o++) {
            const float v = c[o] * z->data[j[o]], t = y->data[o];
            ok = v == t || fabsf(v - t) <= 1e-5f * fabsf(t);
        }
    }
    free(zero);
    vs_scope_end();
    vs_set_grad_enabled(prev);
    return ok;
}

/* block_agrees_at z1 = f(x). */
static bool block_agrees(vs_module *m, const path_plan *pl, vs_tensor *x)
{
    const bool prev = vs_set_grad_enabled(false);
    vs_scope_begin();
    const vs_forward_ctx fc = {0};
    /* (an empty range would hand x itself to this scope) */
    vs_tensor *z = pl->block ? vs_sequential_forward_range(m, x, &fc, 0, pl->block, NULL) : x;
    block b;
    const bool tried = z && z->ndim >= 2 && z->size <= INT32_MAX;
    const bool ok = tried && block_init(&b, m, pl, z->ndim - 1, z->shape + 1) && block_agrees_at(m, pl, &b, z);
    if (tried) block_free(&b);
    vs_scope_end();
    vs_set_grad_enabled(prev);
    return ok;
}

/* ---- the second layer as seen from one block output -------------------------------------------- */

/* The second layer as seen from one block output o, channels last: the weight permuted to
 * wt[tap][out] (tap = (c k + ki) k + kj for conv2d, the input feature for linear) and the running
 * sums over the second layer's outputs kept as z[pos][out] (pos = oy ow + ox; one pos for linear), so
 * that output o meets wt rows wofs[t] and z rows zofs[t] for t < reach(q, o), each a run of `o` floats
 * (conv2d: the outputs whose window holds o's pixel, and the tap there; linear: row o). */
typedef struct second_layer {
    float *wt;                   /* [taps][o], owned by the caller */
    bool conv;
    int64_t c1, h1, w1;          /* block output [c1, h1, w1] (linear: c1 features) */
    int64_t o, oh, ow, k, s, p;  /* outputs [o, oh, ow] (linear: o features, oh = ow = 1), kernel, stride, padding */
    int64_t *wofs, *zofs;        /* [k * k] (linear: [1]), filled by reach */
} second_layer;

static int64_t reach(const second_layer *q, int64_t i)
{
    if (!q->conv) {
        q->wofs[0] = i, q->zofs[0] = 0;
        return 1;
    }
    const int64_t c = i / (q->h1 * q->w1), y = i / q->w1 % q->h1, x = i % q->w1;
    int64_t n = 0;
    for (int64_t ki = 0; ki < q->k; ki++) {
        const int64_t ty = y + q->p - ki;
        if (ty < 0 || ty % q->s || ty / q->s >= q->oh) continue;
        for (int64_t kj = 0; kj < q->k; kj++) {
            const int64_t tx = x + q->p - kj;
            if (tx < 0 || tx % q->s || tx / q->s >= q->ow) continue;
            q->wofs[n] = (c * q->k + ki) * q->k + kj;
            q->zofs[n++] = (ty / q->s) * q->ow + tx / q->s;
        }
    }
    return n;
}

/* z += v * column i of W2. */
static void add_column(const second_layer *q, int64_t i, double v, double *z)
{
    for (int64_t t = 0, n = reach(q, i); t < n; t++) {
        const float *restrict wr = q->wt + q->wofs[t] * q->o;
        double *restrict zr = z + q->zofs[t] * q->o;
        for (int64_t o = 0; o < q->o; o++) zr[o] += v * wr[o];
    }
}

/* (W2^T g)[i], summed in 8 interleaved lanes (so the loop vectorises) added in a fixed order. */
static double row_t(const second_layer *q, int64_t i, const double *g)
{
    double lane[8] = {0}, s = 0;
    for (int64_t t = 0, n = reach(q, i); t < n; t++) {
        const float *restrict wr = q->wt + q->wofs[t] * q->o;
        const double *restrict gr = g + q->zofs[t] * q->o;
        int64_t o = 0;
        for (; o + 8 <= q->o; o += 8)
            for (int l = 0; l < 8; l++) lane[l] += (double)wr[o + l] * gr[o + l];
        for (; o < q->o; o++) s += (double)wr[o] * gr[o];
    }
    for (int l = 0; l < 8; l++) s += lane[l];
    return s;
}

/* z2 = a U + V from channels last to the tail's [o][pos], eight positions at a time (a cache line of
 * each row of U and V, a run of z's rows). */
static void form_z2(const second_layer *q, double ap, const double *restrict U, const double *restrict V, float *restrict z)
{
    const int64_t plane = q->oh * q->ow, n = q->o;
    for (int64_t p0 = 0; p0 < plane; p0 += 8) {
        const int64_t p1 = p0 + 8 < plane ? p0 + 8 : plane;
        for (int64_t o = 0; o < n; o++)
            for (int64_t pos = p0; pos < p1; pos++) z[o * plane + pos] = (float)(ap * U[pos * n + o] + V[pos * n + o]);
    }
}

/* gsum (channels last) += g ([o][pos]), blocked as form_z2. */
static void add_grad(const second_layer *q, const float *restrict g, double *restrict gsum)
{
    const int64_t plane = q->oh * q->ow, n = q->o;
    for (int64_t p0 = 0; p0 < plane; p0 += 8) {
        const int64_t p1 = p0 + 8 < plane ? p0 + 8 : plane;
        for (int64_t o = 0; o < n; o++)
            for (int64_t pos = p0; pos < p1; pos++) gsum[pos * n + o] += g[o * plane + pos];
    }
}

/* The points in increasing a (ties in index order). */
static void sort_points(int64_t n, const double *a, int64_t *order)
{
    for (int64_t k = 0; k < n; k++) order[k] = k;
    /* insertion sort: n is a few hundred and the rules give sorted nodes already */
    for (int64_t k = 1; k < n; k++) {
        const int64_t v = order[k];
        int64_t j = k;
        while (j > 0 && a[order[j - 1]] > a[v]) order[j] = order[j - 1], j--;
        order[j] = v;
    }
}

/* A change of one block output between two points: unit and coefficient before and after. */
typedef struct path_event {
    int32_t o, j0, j1;
    float c0, c1;
} path_event;

/* The events of one chunk, by point: those of its r-th point are ev[off[r] .. off[r+1]). */
typedef struct event_list {
    path_event *ev;
    int64_t n, cap, *off;
} event_list;

static bool event_push(event_list *l, path_event e)
{
    if (l->n == l->cap) {
        const int64_t cap = l->cap ? 2 * l->cap : 1024;
        path_event *ev = realloc(l->ev, (size_t)cap * sizeof *ev);
        if (!ev) return false;
        l->ev = ev, l->cap = cap;
    }
    l->ev[l->n++] = e;
    return true;
}

static vs_status engine_error(vs_error *err, const char *fallback)
{
    const vs_error *last = vs_last_error();
    if (!last->code) return vs_error_set(err, VS_ERR_NOMEM, "path gradients: %s", fallback);
    return vs_error_set(err, last->code, "path gradients: %s", last->msg);
}

/* The per-call state of vs_sequential_path_grads (freed by path_free). */
typedef struct path_state {
    block b;
    second_layer q;
    double *U, *V, *gsum, *gz1;
    int64_t *order;
    event_list ev;
} path_state;

static void path_free(path_state *s)
{
    block_free(&s->b);
    free(s->q.wofs);
    free(s->q.zofs);
    free(s->q.wt);
    free(s->U);
    free(s->V);
    free(s->gsum);
    free(s->gz1);
    free(s->order);
    free(s->ev.ev);
    free(s->ev.off);
}

/* U, V (and the second layer's layout) from the outputs' (j, c) at the first point. */
static vs_status second_init(path_state *s, const vs_module *l2, const vs_tensor *A, const vs_tensor *B, int hdim,
                             const int64_t *hshape, vs_tensor **P_out, vs_error *err)
{
    block *b = &s->b;
    /* [c . A[j]; c . B[j]] through the second layer in one product (one packing of its weight) */
    int64_t two[VS_MAX_DIMS];
    memcpy(two, hshape, sizeof two);
    two[0] = 2;
    vs_tensor *h = vs_tensor_new(hdim, two);
    if (!h) return engine_error(err, "out of memory");
    for (int64_t o = 0; o < b->nh; o++)
        h->data[o] = b->hc[o] * A->data[b->hj[o]], h->data[b->nh + o] = b->hc[o] * B->data[b->hj[o]];
    vs_tensor *PQ = apply(l2, h);
    vs_tensor *P = PQ ? vs_slice(PQ, 0, 0, 1) : NULL, *Q = PQ ? vs_slice(PQ, 0, 1, 2) : NULL;
    if (!P || !Q) return engine_error(err, "out of memory");
    const bool conv = l2->kind == VS_MODULE_CONV2D;
    const vs_tensor *w2 = l2->params[0], *b2 = vs_module_param(l2, "bias");
    second_layer *q = &s->q;
    *q = (second_layer){.conv = conv, .c1 = b->nh, .o = P->size, .oh = 1, .ow = 1, .k = 1};
    if (conv) {
        q->c1 = hshape[1], q->h1 = hshape[2], q->w1 = hshape[3];
        q->o = P->shape[1], q->oh = P->shape[2], q->ow = P->shape[3], q->k = w2->shape[2];
        q->s = l2->spec.stride, q->p = l2->spec.padding;
    }
    const int64_t n2 = P->size, plane = q->oh * q->ow, taps = w2->size / q->o;
    q->wofs = malloc((size_t)(q->k * q->k) * sizeof *q->wofs);
    q->zofs = malloc((size_t)(q->k * q->k) * sizeof *q->zofs);
    q->wt = malloc((size_t)w2->size * sizeof *q->wt);
    s->U = malloc((size_t)n2 * sizeof *s->U);
    s->V = malloc((size_t)n2 * sizeof *s->V);
    s->gsum = calloc((size_t)n2, sizeof *s->gsum);
    if (!s->U || !s->V || !s->gsum || !q->wofs || !q->zofs || !q->wt) return vs_error_set(err, VS_ERR_NOMEM, "path gradients: out of memory");
    for (int64_t o = 0; o < q->o; o++)
        for (int64_t t = 0; t < taps; t++) q->wt[t * q->o + o] = w2->data[o * taps + t];
    for (int64_t o = 0; o < q->o; o++)
        for (int64_t pos = 0; pos < plane; pos++) {
            s->U[pos * q->o + o] = P->data[o * plane + pos];
            s->V[pos * q->o + o] = Q->data[o * plane + pos] + (b2 ? b2->data[o] : 0.0f);
        }
    *P_out = P;
    return VS_OK;
}

/* Move to point p: the block there, one event (and one column of W2 into U and V) per output whose
 * (j, c) changed. */
static bool advance(path_state *s, double ap, const float *A, const float *B)
{
    block *b = &s->b;
    const int32_t *j;
    const float *c;
    block_eval(b, ap, A, B, &j, &c);
    for (int64_t o = 0; o < b->nh; o++) {
        if (j[o] == b->hj[o] && c[o] == b->hc[o]) continue;
        const path_event e = {(int32_t)o, b->hj[o], j[o], b->hc[o], c[o]};
        if (!event_push(&s->ev, e)) return false;
        add_column(&s->q, o, (double)e.c1 * A[e.j1] - (double)e.c0 * A[e.j0], s->U);
        add_column(&s->q, o, (double)e.c1 * B[e.j1] - (double)e.c0 * B[e.j0], s->V);
        b->hj[o] = j[o], b->hc[o] = c[o];
    }
    return true;
}

vs_status vs_sequential_path_grads(vs_module *m, vs_tensor *x, vs_tensor *baseline, int64_t n, const double *a,
                                   const double *w, vs_path_score score, void *sctx, int64_t chunk, float *grad_sum,
                                   vs_error *err)
{
    path_plan pl;
    if (!plan_of(m, &pl))
        return vs_error_set(err, VS_ERR_ARG, "path gradients: the model does not start with affine layers, a piecewise-linear "
                                             "activation and a weighted layer");
    if (!x || !baseline || !vs_same_shape(x, baseline) || !fits_shapes(m, &pl, x) || n < 1 || !a || !w || !score || !grad_sum)
        return vs_error_set(err, VS_ERR_ARG, "path gradients: need x and a baseline of one shape [1, ...] that the model "
                                             "takes, and n >= 1 points");
    if (chunk < 1) chunk = 64;
    vs_status st = VS_OK;
    const bool prev = vs_set_grad_enabled(false);
    vs_scope_begin();
    path_state s = {0};
    const vs_forward_ctx fc = {0};
    const vs_module *l2 = m->children[pl.second];
    /* the affine run at x and x' in one batch: z1_p = a_p A + B */
    vs_tensor *both = vs_concat(2, (vs_tensor *[]){x, baseline}, 0);
    vs_tensor *z = both ? vs_sequential_forward_range(m, both, &fc, 0, pl.block, NULL) : NULL;
    vs_tensor *B = z ? vs_slice(z, 0, 1, 2) : NULL, *A = B ? vs_sub(vs_slice(z, 0, 0, 1), B) : NULL;
    if (!A || !B) {
        st = engine_error(err, "out of memory");
        goto out;
    }
    if (A->size > INT32_MAX || !block_init(&s.b, m, &pl, A->ndim - 1, A->shape + 1)) {
        st = vs_error_set(err, VS_ERR_NOMEM, "path gradients: out of memory");
        goto out;
    }
    /* what vs_sequential_path_grads_fits checks, on the forward at x just computed */
    if (!block_agrees_at(m, &pl, &s.b, vs_slice(z, 0, 0, 1))) {
        st = vs_error_set(err, VS_ERR_ARG, "path gradients: the model's piecewise-linear layers are not ones the engine "
                                           "reads (see vs_sequential_path_grads_fits)");
        goto out;
    }
    /* the block's outputs as the second layer takes them: [1, c, h, w] or [1, features] */
    int64_t hshape[VS_MAX_DIMS] = {1, s.b.nh};
    int hdim = 2;
    if (l2->kind == VS_MODULE_CONV2D) {
        const block_layer *last = NULL;
        for (int64_t t = 0; t < s.b.n_layers; t++)
            if (s.b.layers[t].kind == VS_MODULE_MAX_POOL2D) last = &s.b.layers[t];
        hdim = 4;
        hshape[1] = A->shape[1];
        hshape[2] = last ? last->oh : A->shape[2];
        hshape[3] = last ? last->ow : A->shape[3];
    }
    s.order = malloc((size_t)n * sizeof *s.order);
    s.gz1 = calloc((size_t)s.b.n1, sizeof *s.gz1);
    s.ev.off = malloc((size_t)(chunk + 1) * sizeof *s.ev.off);
    if (!s.order || !s.gz1 || !s.ev.off) {
        st = vs_error_set(err, VS_ERR_NOMEM, "path gradients: out of memory");
        goto out;
    }
    sort_points(n, a, s.order);
    vs_tensor *z0 = vs_add(vs_mul_scalar(A, (float)a[s.order[0]]), B); /* z1 at the first point */
    if (!z0 || !block_agrees_at(m, &pl, &s.b, z0)) {
        st = z0 ? vs_error_set(err, VS_ERR_ARG, "path gradients: the model's piecewise-linear layers are not ones the "
                                                "engine reads (see vs_sequential_path_grads_fits)")
                : engine_error(err, "out of memory");
        goto out;
    }
    const int32_t *j0;
    const float *c0;
    block_eval(&s.b, a[s.order[0]], A->data, B->data, &j0, &c0);
    memcpy(s.b.hj, j0, (size_t)s.b.nh * sizeof *s.b.hj);
    memcpy(s.b.hc, c0, (size_t)s.b.nh * sizeof *s.b.hc);
    vs_tensor *P = NULL;
    if ((st = second_init(&s, l2, A, B, hdim, hshape, &P, err)) != VS_OK) goto out;
    const second_layer *q = &s.q;
    const int64_t n2 = P->size, plane = q->oh * q->ow;
    /* the points in increasing a, in chunks: z2 from U and V, the rest of the model and its gradient */
    vs_set_grad_enabled(true);
    for (int64_t p0 = 0; p0 < n && st == VS_OK; p0 += chunk) {
        const int64_t nb = n - p0 < chunk ? n - p0 : chunk;
        vs_scope_begin();
        int64_t shape[VS_MAX_DIMS];
        memcpy(shape, P->shape, sizeof shape);
        shape[0] = nb;
        vs_tensor *z2 = vs_tensor_new(P->ndim, shape), *seed = vs_tensor_new(1, (int64_t[]){nb}), *g = NULL;
        bool ok = z2 && seed;
        s.ev.n = 0;
        for (int64_t r = 0; r < nb && ok; r++) {
            const int64_t p = p0 + r;
            const double ap = a[s.order[p]];
            s.ev.off[r] = s.ev.n;
            if (p > 0) ok = advance(&s, ap, A->data, B->data);
            form_z2(q, ap, s.U, s.V, z2->data + r * n2);
            seed->data[r] = (float)w[s.order[p]];
        }
        s.ev.off[nb] = s.ev.n;
        if (!ok) {
            st = vs_error_set(err, VS_ERR_NOMEM, "path gradients: out of memory");
            vs_scope_end();
            break;
        }
        vs_set_requires_grad(z2, true);
        vs_tensor *out = vs_sequential_forward_range(m, z2, &fc, pl.second + 1, m->n_children, NULL);
        vs_tensor *sc = out ? score(sctx, out) : NULL;
        if (!sc || !sc->requires_grad || vs_grad(1, &sc, &seed, 1, &z2, &g, false) != VS_OK) {
            st = vs_error_set(err, vs_last_error()->code ? vs_last_error()->code : VS_ERR_STATE, "path gradients: %s",
                              sc && !sc->requires_grad ? "the explained score does not depend on the input" : vs_last_error()->msg);
        } else {
            for (int64_t r = 0; r < nb; r++) {
                for (int64_t t = s.ev.off[r]; t < s.ev.off[r + 1]; t++) {
                    const path_event *e = &s.ev.ev[t];
                    const double R = row_t(q, e->o, s.gsum);
                    s.gz1[e->j0] += e->c0 * R;
                    s.gz1[e->j1] -= e->c1 * R;
                }
                add_grad(q, g->data + r * n2, s.gsum);
            }
        }
        vs_scope_end();
    }
    if (st == VS_OK) {
        /* the last segment of every output: c . W2^T (sum g) at its unit; then the affine run's adjoint */
        vs_set_grad_enabled(false);
        vs_tensor *G = vs_tensor_new(P->ndim, P->shape), *like = vs_tensor_new(hdim, hshape);
        if (G)
            for (int64_t o = 0; o < q->o; o++)
                for (int64_t pos = 0; pos < plane; pos++) G->data[o * plane + pos] = (float)s.gsum[pos * q->o + o];
        vs_tensor *h = G && like ? apply_t(l2, G, like) : NULL;
        vs_tensor *g1 = h ? vs_tensor_new(A->ndim, A->shape) : NULL;
        if (g1) {
            for (int64_t o = 0; o < s.b.nh; o++) s.gz1[s.b.hj[o]] += s.b.hc[o] * (double)h->data[o];
            for (int64_t i = 0; i < s.b.n1; i++) g1->data[i] = (float)s.gz1[i];
        }
        vs_tensor *gx = NULL;
        if (g1 && pl.block == 0) {
            gx = g1;
        } else if (g1) {
            vs_set_grad_enabled(true);
            vs_tensor *xv = vs_detach(x);
            if (xv) vs_set_requires_grad(xv, true);
            vs_tensor *z1 = xv ? vs_sequential_forward_range(m, xv, &fc, 0, pl.block, NULL) : NULL;
            if (z1 && (!z1->requires_grad || vs_grad(1, &z1, &g1, 1, &xv, &gx, false) != VS_OK)) gx = NULL;
            vs_set_grad_enabled(false);
        }
        if (!gx || gx->size != x->size)
            st = engine_error(err, "out of memory");
        else
            memcpy(grad_sum, gx->data, (size_t)x->size * sizeof(float));
    }
out:
    vs_scope_end();
    vs_set_grad_enabled(prev);
    path_free(&s);
    return st;
}
