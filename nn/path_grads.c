/* path_grads.c - integrated gradients' weighted sum of gradients along a straight path, for a
 * sequential that starts weighted layer, ReLU (or leaky ReLU), weighted layer (two conv2d or two
 * linear layers).
 *
 * Along x_p = x' + a_p d (d = x - x') the first layer is affine in a_p: z1_p = a_p A + B with A = W1 d
 * and B = W1 x' + b1, two products for all points.  So each of its units crosses 0 at most once along
 * the path: with the points in increasing a, unit i has mask F_i (1, or the slope) before its flip
 * point t_i and E_i from there on (t_i = n when it never flips).  Then
 *   z2_p = W2 (m_p . z1_p) + b2 = a_p U_p + V_p + b2,  U_p = W2 (m_p . A),  V_p = W2 (m_p . B),
 * and U, V change only at a flip, by a column of W2: two products plus one column per flipping unit
 * for the whole path (kept in double, so the updates do not drift).  On the way back, with
 * g_p = w_p dS/dz2_p from the rest of the model (run as usual on the z2_p, in chunks),
 *   sum_p m_p . W2^T g_p = E . W2^T (sum_p g_p) + (F - E) . W2^T (sum_{p < t} g_p)
 * is one transposed product plus, per flipping unit, one row of W2^T against the running sum of the
 * g_p at its flip point.  The gradient sum with respect to x is W1^T of that.  On the GANMEX MNIST
 * classifier the per-point cost drops from two convolutions of the second layer to the rest of the
 * model.  These are the point-by-point gradients summed in another order: equal up to rounding. */
#include "nn/internal.h"

#include <stdlib.h>
#include <string.h>

/* The first three layers of m when they fit (see the top comment), else false. */
static bool path_layers(const vs_module *m, const vs_module **l1, float *slope, const vs_module **l2)
{
    if (m->kind != VS_MODULE_SEQUENTIAL || m->n_children < 3) return false;
    const vs_module *a = m->children[0], *act = m->children[1], *b = m->children[2];
    const bool conv = a->kind == VS_MODULE_CONV2D && b->kind == VS_MODULE_CONV2D;
    const bool lin = a->kind == VS_MODULE_LINEAR && b->kind == VS_MODULE_LINEAR;
    if (!(conv || lin) || (act->kind != VS_MODULE_RELU && act->kind != VS_MODULE_LEAKY_RELU)) return false;
    if (conv && (a->spec.dilation > 1 || b->spec.dilation > 1)) return false; /* dense kernels only */
    *l1 = a;
    *l2 = b;
    *slope = act->kind == VS_MODULE_RELU ? 0.0f : (float)act->spec.slope;
    return true;
}

bool vs_sequential_has_path_grads(const vs_module *m)
{
    const vs_module *l1, *l2;
    float slope;
    return path_layers(m, &l1, &slope, &l2);
}

/* y = layer(x) with or without its bias. */
static vs_tensor *apply(const vs_module *l, vs_tensor *x, bool bias)
{
    vs_tensor *b = bias ? vs_module_param(l, "bias") : NULL;
    if (l->kind == VS_MODULE_LINEAR) return vs_linear(x, l->params[0], b);
    const vs_conv_opts o = vs_module_conv_opts(l);
    return vs_conv2d(x, l->params[0], b, &o);
}

/* The adjoint of apply(l, ., false) onto an input shaped like `like`. */
static vs_tensor *apply_t(const vs_module *l, vs_tensor *g, const vs_tensor *like)
{
    if (l->kind == VS_MODULE_LINEAR) return vs_matmul(g, l->params[0]);
    vs_conv_opts o = vs_module_conv_opts(l);
    const int64_t k = l->params[0]->shape[2], s = o.stride[0], p = o.padding[0];
    o.output_padding[0] = (int)((like->shape[2] + 2 * p - k) % s);
    o.output_padding[1] = (int)((like->shape[3] + 2 * p - k) % s);
    return vs_conv_transpose2d(g, l->params[0], NULL, &o);
}

/* The second layer as seen from one first-layer unit i, channels last: the weight permuted to
 * wt[tap][o] (tap = (c k + ki) k + kj for conv2d, the input feature for linear) and the running
 * sums over the second layer's outputs kept as z[pos][o] (pos = oy ow + ox; one pos for linear), so
 * that unit i meets wt rows wofs[t] and z rows zofs[t] for t < reach(q, i), each a run of o floats
 * (conv2d: the outputs whose window holds i's pixel, and the tap there; linear: row i). */
typedef struct second_layer {
    float *wt;                   /* [taps][o], owned by the caller */
    bool conv;
    int64_t c1, h1, w1;          /* first-layer output [c1, h1, w1] (linear: c1 features) */
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

static float mask_of(float z, float slope) { return z > 0 ? 1.0f : slope; }

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

/* Units by flip point: unit idx[off[t] .. off[t+1]) flip at sorted point t (t < n); F, E the masks
 * before and after.  false when out of memory. */
typedef struct flips {
    int64_t *off;
    int32_t *idx;
} flips;

static bool find_flips(const float *A, const float *B, int64_t n1, int64_t n, const double *a, const int64_t *order,
                       float slope, float *F, float *E, flips *f)
{
    int64_t *t = malloc((size_t)n1 * sizeof *t);
    f->off = calloc((size_t)n + 2, sizeof *f->off);
    f->idx = malloc((size_t)(n1 ? n1 : 1) * sizeof *f->idx);
    if (!t || !f->off || !f->idx) {
        free(t);
        return false;
    }
    for (int64_t i = 0; i < n1; i++) {
        F[i] = mask_of((float)a[order[0]] * A[i] + B[i], slope);
        E[i] = mask_of((float)a[order[n - 1]] * A[i] + B[i], slope);
        /* fl(a A + B) is monotone in a: one flip at most, found by bisection (F at lo, E at hi) */
        int64_t lo = 0, hi = n - 1;
        while (E[i] != F[i] && hi - lo > 1) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (mask_of((float)a[order[mid]] * A[i] + B[i], slope) == F[i])
                lo = mid;
            else
                hi = mid;
        }
        t[i] = E[i] != F[i] ? hi : n;
        f->off[t[i] + 1]++;
    }
    for (int64_t k = 0; k <= n; k++) f->off[k + 1] += f->off[k];
    int64_t *fill = t; /* reused: the next free slot of each point, after counting */
    int64_t *next = malloc((size_t)(n + 1) * sizeof *next);
    if (!next) {
        free(t);
        return false;
    }
    memcpy(next, f->off, (size_t)(n + 1) * sizeof *next);
    for (int64_t i = 0; i < n1; i++) f->idx[next[fill[i]]++] = (int32_t)i;
    free(next);
    free(t);
    return true;
}

vs_status vs_sequential_path_grads(vs_module *m, vs_tensor *x, vs_tensor *baseline, int64_t n, const double *a,
                                   const double *w, vs_path_score score, void *sctx, int64_t chunk, float *grad_sum,
                                   vs_error *err)
{
    const vs_module *l1, *l2;
    float slope;
    if (!path_layers(m, &l1, &slope, &l2))
        return vs_error_set(err, VS_ERR_ARG, "path gradients: the model does not start weighted layer, ReLU, weighted layer");
    if (!x || !baseline || !vs_same_shape(x, baseline) || x->shape[0] != 1 || n < 1 || !a || !w || !score || !grad_sum)
        return vs_error_set(err, VS_ERR_ARG, "path gradients: need x and a baseline of one shape [1, ...] and n >= 1 points");
    if (chunk < 1) chunk = 64;
    vs_status st = VS_OK;
    const bool prev = vs_set_grad_enabled(false);
    vs_scope_begin();
    float *F = NULL, *E = NULL;
    double *U = NULL, *V = NULL, *gsum = NULL, *pre = NULL;
    int64_t *order = NULL, *wofs = NULL, *zofs = NULL;
    float *wt = NULL;
    flips f = {0};
    /* the first layer along the path, the flips, and the second layer at the first point's masks */
    vs_tensor *A = apply(l1, vs_sub(x, baseline), false), *B = apply(l1, baseline, true);
    if (!A || !B) {
        st = vs_error_set(err, vs_last_error()->code, "path gradients: %s", vs_last_error()->msg);
        goto out;
    }
    const int64_t n1 = A->size;
    F = malloc((size_t)n1 * sizeof *F);
    E = malloc((size_t)n1 * sizeof *E);
    pre = calloc((size_t)n1, sizeof *pre);
    order = malloc((size_t)n * sizeof *order);
    if (!F || !E || !pre || !order || n1 > INT32_MAX) {
        st = vs_error_set(err, VS_ERR_NOMEM, "path gradients: out of memory");
        goto out;
    }
    sort_points(n, a, order);
    if (!find_flips(A->data, B->data, n1, n, a, order, slope, F, E, &f)) {
        st = vs_error_set(err, VS_ERR_NOMEM, "path gradients: out of memory");
        goto out;
    }
    vs_tensor *FA = vs_tensor_new(A->ndim, A->shape), *FB = vs_tensor_new(B->ndim, B->shape);
    if (FA && FB)
        for (int64_t i = 0; i < n1; i++) FA->data[i] = F[i] * A->data[i], FB->data[i] = F[i] * B->data[i];
    vs_tensor *P = FA ? apply(l2, FA, false) : NULL, *Q = FB ? apply(l2, FB, false) : NULL;
    if (!P || !Q) {
        st = vs_error_set(err, vs_last_error()->code ? vs_last_error()->code : VS_ERR_NOMEM, "path gradients: %s", vs_last_error()->msg);
        goto out;
    }
    const bool conv = l2->kind == VS_MODULE_CONV2D;
    const vs_tensor *w2 = l2->params[0], *b2 = vs_module_param(l2, "bias");
    second_layer q = {.conv = conv, .c1 = n1, .o = P->size, .oh = 1, .ow = 1, .k = 1};
    if (conv) {
        q.c1 = A->shape[1], q.h1 = A->shape[2], q.w1 = A->shape[3];
        q.o = P->shape[1], q.oh = P->shape[2], q.ow = P->shape[3], q.k = w2->shape[2];
        q.s = l2->spec.stride, q.p = l2->spec.padding;
    }
    const int64_t n2 = P->size, plane = q.oh * q.ow, taps = w2->size / q.o;
    q.wofs = wofs = malloc((size_t)(q.k * q.k) * sizeof *wofs);
    q.zofs = zofs = malloc((size_t)(q.k * q.k) * sizeof *zofs);
    q.wt = wt = malloc((size_t)w2->size * sizeof *wt);
    U = malloc((size_t)n2 * sizeof *U);
    V = malloc((size_t)n2 * sizeof *V);
    gsum = calloc((size_t)n2, sizeof *gsum);
    if (!U || !V || !gsum || !wofs || !zofs || !wt) {
        st = vs_error_set(err, VS_ERR_NOMEM, "path gradients: out of memory");
        goto out;
    }
    for (int64_t o = 0; o < q.o; o++)
        for (int64_t t = 0; t < taps; t++) wt[t * q.o + o] = w2->data[o * taps + t];
    for (int64_t o = 0; o < q.o; o++)
        for (int64_t pos = 0; pos < plane; pos++) {
            U[pos * q.o + o] = P->data[o * plane + pos];
            V[pos * q.o + o] = Q->data[o * plane + pos] + (b2 ? b2->data[o] : 0.0f);
        }
    /* the points in increasing a, in chunks: z2 from U and V, the rest of the model and its gradient */
    vs_set_grad_enabled(true);
    for (int64_t p0 = 0; p0 < n && st == VS_OK; p0 += chunk) {
        const int64_t nb = n - p0 < chunk ? n - p0 : chunk;
        vs_scope_begin();
        int64_t shape[VS_MAX_DIMS];
        memcpy(shape, P->shape, sizeof shape);
        shape[0] = nb;
        vs_tensor *z2 = vs_tensor_new(P->ndim, shape), *seed = vs_tensor_new(1, (int64_t[]){nb}), *g = NULL;
        if (!z2 || !seed) {
            st = vs_error_set(err, VS_ERR_NOMEM, "path gradients: out of memory");
            vs_scope_end();
            break;
        }
        for (int64_t r = 0; r < nb; r++) {
            const int64_t p = p0 + r;
            for (int64_t t = f.off[p]; t < f.off[p + 1]; t++) {
                const int64_t i = f.idx[t];
                const double dm = (double)E[i] - F[i];
                add_column(&q, i, dm * A->data[i], U);
                add_column(&q, i, dm * B->data[i], V);
            }
            const double ap = a[order[p]];
            float *z = z2->data + r * n2;
            for (int64_t o = 0; o < q.o; o++)
                for (int64_t pos = 0; pos < plane; pos++) z[o * plane + pos] = (float)(ap * U[pos * q.o + o] + V[pos * q.o + o]);
            seed->data[r] = (float)w[order[p]];
        }
        vs_set_requires_grad(z2, true);
        const vs_forward_ctx fc = {0};
        vs_tensor *out = vs_sequential_forward_range(m, z2, &fc, 3, m->n_children, NULL);
        vs_tensor *s = out ? score(sctx, out) : NULL;
        if (!s || !s->requires_grad || vs_grad(1, &s, &seed, 1, &z2, &g, false) != VS_OK) {
            st = vs_error_set(err, vs_last_error()->code ? vs_last_error()->code : VS_ERR_STATE, "path gradients: %s",
                              s && !s->requires_grad ? "the explained score does not depend on the input" : vs_last_error()->msg);
        } else {
            for (int64_t r = 0; r < nb; r++) {
                const int64_t p = p0 + r;
                for (int64_t t = f.off[p]; t < f.off[p + 1]; t++) pre[f.idx[t]] = row_t(&q, f.idx[t], gsum);
                const float *gp = g->data + r * n2;
                for (int64_t o = 0; o < q.o; o++)
                    for (int64_t pos = 0; pos < plane; pos++) gsum[pos * q.o + o] += gp[o * plane + pos];
            }
        }
        vs_scope_end();
    }
    vs_set_grad_enabled(false);
    if (st == VS_OK) {
        /* E . W2^T (sum g) + (F - E) . W2^T (sum of g before the flip), then W1^T of it */
        vs_tensor *G = vs_tensor_new(P->ndim, P->shape);
        if (G)
            for (int64_t o = 0; o < q.o; o++)
                for (int64_t pos = 0; pos < plane; pos++) G->data[o * plane + pos] = (float)gsum[pos * q.o + o];
        vs_tensor *h = G ? apply_t(l2, G, A) : NULL;
        if (h)
            for (int64_t i = 0; i < n1; i++) h->data[i] = (float)(E[i] * (double)h->data[i] + ((double)F[i] - E[i]) * pre[i]);
        vs_tensor *gx = h ? apply_t(l1, h, x) : NULL;
        if (!gx || gx->size != x->size)
            st = vs_error_set(err, vs_last_error()->code ? vs_last_error()->code : VS_ERR_SHAPE, "path gradients: %s",
                              vs_last_error()->msg);
        else
            memcpy(grad_sum, gx->data, (size_t)x->size * sizeof(float));
    }
out:
    vs_scope_end();
    vs_set_grad_enabled(prev);
    free(F);
    free(E);
    free(U);
    free(V);
    free(gsum);
    free(pre);
    free(order);
    free(wofs);
    free(zofs);
    free(wt);
    free(f.off);
    free(f.idx);
    return st;
}
