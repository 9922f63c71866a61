/* ops_norm.c - batch, instance and layer normalisation as fused ops with fused backward rules.
 *
 * Every normalisation sees x as [a, b, s] and normalises groups of it:
 *   batch     x [n,c,...] -> [n, c, h*w...]: group c = every (i, ., k), affine per channel c
 *   instance  x [n,c,h,w] -> [n, c, h*w]:    group (i, c) = one contiguous plane, affine per channel c
 *   layer     x [..., tail] -> [rows, 1, tail]: group = one row, affine per element of the tail
 * Three ops, each one node (private to this file):
 *   norm      y = xhat gamma + beta, xhat = (x - mean) rstd, rstd = (var + eps)^-1/2, var biased
 *   norm_vjp  dx = J h = rstd (h - mean(h) - xhat mean(h xhat)), J = d xhat / dx per group
 *   affine    y = x scale[c] + shift[c] (batch norm with running statistics)
 * Their rules: d norm/dx is norm_vjp(x, g gamma), d gamma = sum(g xhat), d beta = sum(g); J is
 * symmetric, so d norm_vjp/dh is norm_vjp itself, and d norm_vjp/dx is the formula in
 * norm_vjp_backward written in public ops; d affine/dx is affine again.  So gradients of
 * gradients stay differentiable.  With recording off (first-order backward, the common case) the
 * norm rule instead runs one fused kernel that gives dx, dgamma and dbeta from the same passes.
 *
 * Statistics: two passes over each group in double, mean first, then sum (x - mean)^2, eight
 * accumulators wide.  Two passes because the one-pass E[x^2] - mean^2 cancels catastrophically when
 * |mean| >> std; the group is read twice while it is hot in cache (a plane, a row, or one channel
 * of the batch).  Double because sums of ~10^5 floats lose digits in float.  Batch norm over short
 * planes (batch_norm1d: one value per sample and channel) sweeps whole rows instead: see SHORT_SEG.
 *
 * Threads split the groups; every group is reduced by one thread in a fixed order and the
 * per-parameter sums run over groups in order afterwards, so results do not depend on the thread
 * count.  vs_batch_norm, vs_instance_norm and vs_layer_norm (versus/ops.h) are at the end. */
#include "autograd/internal.h"
#include "autograd/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- geometry ------------------------------------------------------------------------------------ */

typedef enum norm_kind { NORM_BATCH, NORM_INSTANCE, NORM_LAYER } norm_kind;

typedef struct norm_geom {
    norm_kind kind;
    int64_t a, b, s; /* x seen as [a, b, s] */
    float eps;
} norm_geom;

static int64_t geom_groups(const norm_geom *q) { return q->kind == NORM_BATCH ? q->b : q->a * q->b; }
/* Contiguous segments of s floats per group, and the offset of segment k of group gi. */
static int64_t geom_segs(const norm_geom *q) { return q->kind == NORM_BATCH ? q->a : 1; }
static int64_t seg_at(const norm_geom *q, int64_t gi, int64_t k) { return (q->kind == NORM_BATCH ? k * q->b + gi : gi) * q->s; }
/* Channel of group gi (batch and instance norm; layer norm's parameters go per element). */
static int64_t geom_channel(const norm_geom *q, int64_t gi) { return q->kind == NORM_BATCH ? gi : gi % q->b; }
static int64_t geom_count(const norm_geom *q) { return geom_segs(q) * q->s; }

/* The geometry is what every node of this file keeps (its parameter struct). */
static norm_geom geom_load(const vs_node *n) { return *VS_PARAMS(n, norm_geom); }

/* The [a, b, s] shape, the group axes of it, and the shape parameters take in it. */
static const int64_t *canon_shape(const norm_geom *q, int64_t *shape)
{
    shape[0] = q->a;
    shape[1] = q->b;
    shape[2] = q->s;
    return shape;
}
static uint32_t group_axes(const norm_geom *q) { return q->kind == NORM_BATCH ? VS_AXIS(0) | VS_AXIS(2) : VS_AXIS(2); }
static uint32_t param_axes(const norm_geom *q) { return q->kind == NORM_LAYER ? VS_AXIS(0) | VS_AXIS(1) : VS_AXIS(0) | VS_AXIS(2); }

static vs_tensor *canon(vs_tensor *t, const norm_geom *q)
{
    int64_t s[3];
    return vs_reshape(t, 3, canon_shape(q, s));
}

static vs_tensor *canon_param(vs_tensor *p, const norm_geom *q)
{
    if (q->kind == NORM_LAYER) return vs_reshape(p, 3, (int64_t[]){1, 1, q->s});
    return vs_reshape(p, 3, (int64_t[]){1, q->b, 1});
}

/* ---- kernels ------------------------------------------------------------------------------------- */

/* Grain of the parallel loops in elements of x: groups are handed out whole. */
#define NORM_GRAIN 32768

static int64_t group_grain(const norm_geom *q)
{
    int64_t c = geom_count(q);
    return c >= NORM_GRAIN ? 1 : NORM_GRAIN / (c ? c : 1);
}

static double lanes_total(const double *acc) { return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])); }

/* acc[k] += p[i] for i = k mod 8. */
static inline void acc_sum(const float *restrict p, int64_t n, double *restrict acc)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) acc[k] += p[i + k];
    for (int k = 0; i < n; i++, k++) acc[k] += p[i];
}

/* acc[k] += (p[i] - m)^2 for i = k mod 8. */
static inline void acc_sqdev(const float *restrict p, int64_t n, double m, double *restrict acc)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) {
            double d = p[i + k] - m;
            acc[k] += d * d;
        }
    for (int k = 0; i < n; i++, k++) {
        double d = p[i] - m;
        acc[k] += d * d;
    }
}

/* sg[k] += w[i] g[i], sgx[k] += w[i] g[i] (x[i] - m) for i = k mod 8; w NULL means 1. */
VS_VECTOR_CLONES512 static void acc_grad(const float *restrict x, const float *restrict g, const float *restrict w, int64_t n,
                                      float m, double *restrict sg, double *restrict sgx)
{
    int64_t i = 0;
    if (w) {
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++) {
                double gw = (double)g[i + k] * w[i + k];
                sg[k] += gw;
                sgx[k] += gw * (x[i + k] - m);
            }
        for (int k = 0; i < n; i++, k++) {
            double gw = (double)g[i] * w[i];
            sg[k] += gw;
            sgx[k] += gw * (x[i] - m);
        }
        return;
    }
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) {
            sg[k] += g[i + k];
            sgx[k] += (double)g[i + k] * (x[i + k] - m);
        }
    for (int k = 0; i < n; i++, k++) {
        sg[k] += g[i];
        sgx[k] += (double)g[i] * (x[i] - m);
    }
}

/* y = (x - m) sc + sh, one scale and shift (per channel). */
static inline void map_channel(const float *restrict x, float *restrict y, int64_t n, float m, float sc, float sh)
{
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) * sc + sh;
}

/* y = (x - m) r gamma + beta, per-element gamma and beta (either may be NULL: 1 and 0). */
static inline void map_element(const float *restrict x, float *restrict y, int64_t n, float m, float r,
                                         const float *restrict gamma, const float *restrict beta)
{
    if (gamma && beta)
        for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) * r * gamma[i] + beta[i];
    else if (gamma)
        for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) * r * gamma[i];
    else if (beta)
        for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) * r + beta[i];
    else
        for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) * r;
}

/* dx = cg g w + cx (x - m) + c0 with w per element (NULL means 1). */
static inline void map_grad(const float *restrict x, const float *restrict g, const float *restrict w,
                                      float *restrict dx, int64_t n, float m, float cg, float cx, float c0)
{
    if (w)
        for (int64_t i = 0; i < n; i++) dx[i] = cg * g[i] * w[i] + cx * (x[i] - m) + c0;
    else
        for (int64_t i = 0; i < n; i++) dx[i] = cg * g[i] + cx * (x[i] - m) + c0;
}

/* One normalisation job: the forward (stats, then y) or the backward (sums, then dx). */
typedef struct norm_job {
    const norm_geom *q;
    const float *x, *g;          /* input; output gradient (backward) */
    const float *gamma, *beta;   /* parameters or NULL */
    float *out;                  /* y or dx (NULL: backward wants only the parameter sums) */
    float *mean, *rstd;          /* per group: written by the forward, read by the backward */
    float *var;                  /* forward, per group: the biased variance, or NULL */
    double *sg, *sgx;            /* backward, per group: sum g, sum g (x - mean) (channel kinds) */
    double *cd;                  /* short segments: 2 b s doubles of per-column scratch */
    float *cf;                   /* and 4 b s floats */
} norm_job;

/* forward_groups and backward_groups are cloned whole, the kernels above inlined into each clone: a
 * group of 49 floats (a 7 x 7 plane) costs less than the calls would.  acc_grad alone stays a call:
 * inlined, its eight pairs of sums become scalars and it runs three times slower. */
VS_VECTOR_CLONES512 static void forward_groups(void *ctx, int64_t begin, int64_t end)
{
    const norm_job *j = ctx;
    const norm_geom *q = j->q;
    const int64_t segs = geom_segs(q), s = q->s, count = geom_count(q);
    for (int64_t gi = begin; gi < end; gi++) {
        double acc[8] = {0};
        for (int64_t k = 0; k < segs; k++) acc_sum(j->x + seg_at(q, gi, k), s, acc);
        const double mean = lanes_total(acc) / (double)count;
        memset(acc, 0, sizeof acc);
        for (int64_t k = 0; k < segs; k++) acc_sqdev(j->x + seg_at(q, gi, k), s, mean, acc);
        const double var = lanes_total(acc) / (double)count, rstd = 1.0 / sqrt(var + (double)q->eps);
        const float m = (float)mean, r = (float)rstd;
        j->mean[gi] = m;
        j->rstd[gi] = r;
        if (j->var) j->var[gi] = (float)var;
        if (q->kind == NORM_LAYER) {
            map_element(j->x + seg_at(q, gi, 0), j->out + seg_at(q, gi, 0), s, m, r, j->gamma, j->beta);
            continue;
        }
        const int64_t c = geom_channel(q, gi);
        const float sc = j->gamma ? (float)(rstd * j->gamma[c]) : r, sh = j->beta ? j->beta[c] : 0.0f;
        for (int64_t k = 0; k < segs; k++) map_channel(j->x + seg_at(q, gi, k), j->out + seg_at(q, gi, k), s, m, sc, sh);
    }
}

/* Per group: S = sum g w, T = sum g w (x - mean) (w = gamma per element for layer norm, else 1),
 * and with gamma_c for the channel kinds, dx = rstd gamma_c (g - S/n) - rstd^3 gamma_c (x - mean) T/n. */
VS_VECTOR_CLONES512 static void backward_groups(void *ctx, int64_t begin, int64_t end)
{
    const norm_job *j = ctx;
    const norm_geom *q = j->q;
    const int64_t segs = geom_segs(q), s = q->s, count = geom_count(q);
    const float *w = q->kind == NORM_LAYER ? j->gamma : NULL;
    for (int64_t gi = begin; gi < end; gi++) {
        const float m = j->mean[gi], r = j->rstd[gi];
        double sg[8] = {0}, sgx[8] = {0};
        for (int64_t k = 0; k < segs; k++) acc_grad(j->x + seg_at(q, gi, k), j->g + seg_at(q, gi, k), w, s, m, sg, sgx);
        const double S = lanes_total(sg), T = lanes_total(sgx);
        if (j->sg) {
            j->sg[gi] = S;
            j->sgx[gi] = T;
        }
        if (!j->out) continue;
        const double gc = q->kind != NORM_LAYER && j->gamma ? j->gamma[geom_channel(q, gi)] : 1.0;
        const double rd = r, n = (double)count;
        const float cg = (float)(rd * gc), cx = (float)(-rd * rd * rd * gc * T / n), c0 = (float)(-rd * gc * S / n);
        for (int64_t k = 0; k < segs; k++)
            map_grad(j->x + seg_at(q, gi, k), j->g + seg_at(q, gi, k), w, j->out + seg_at(q, gi, k), s, m, cg, cx, c0);
    }
}

/* ---- batch norm with short segments ----
 * With s small (batch_norm1d has s = 1) a call per segment would cost more than the segment, so a
 * chunk of channels [c0, c1) is swept a row of [b s] at a time, all w = (c1 - c0) s of its columns
 * together, one double accumulator per column; a channel's s columns are then added in order.  The
 * same sums as above, in another (fixed) order. */
#define SHORT_SEG 64

VS_VECTOR_CLONES static void col_sum(const float *restrict x, int64_t w, double *restrict acc)
{
    for (int64_t i = 0; i < w; i++) acc[i] += x[i];
}

VS_VECTOR_CLONES static void col_sqdev(const float *restrict x, const double *restrict m, int64_t w, double *restrict acc)
{
    for (int64_t i = 0; i < w; i++) {
        double d = x[i] - m[i];
        acc[i] += d * d;
    }
}

VS_VECTOR_CLONES static void col_grad(const float *restrict x, const float *restrict g, const float *restrict m, int64_t w,
                                      double *restrict sg, double *restrict sgx)
{
    for (int64_t i = 0; i < w; i++) {
        sg[i] += g[i];
        sgx[i] += (double)g[i] * (x[i] - m[i]);
    }
}

/* y = (x - m) a + b + (g ? g c : 0), all per column: the forward map (g NULL) and the gradient map. */
VS_VECTOR_CLONES static void col_map(const float *restrict x, const float *restrict g, float *restrict y, int64_t w,
                                     const float *restrict m, const float *restrict a, const float *restrict b,
                                     const float *restrict c)
{
    if (g)
        for (int64_t i = 0; i < w; i++) y[i] = c[i] * g[i] + a[i] * (x[i] - m[i]) + b[i];
    else
        for (int64_t i = 0; i < w; i++) y[i] = (x[i] - m[i]) * a[i] + b[i];
}

/* Channel c's total of the per-column accumulators. */
static double channel_total(const double *acc, int64_t c, int64_t s)
{
    double t = 0;
    for (int64_t k = 0; k < s; k++) t += acc[c * s + k];
    return t;
}

static void forward_cols(void *ctx, int64_t c0, int64_t c1)
{
    const norm_job *j = ctx;
    const norm_geom *q = j->q;
    const int64_t s = q->s, row = q->b * s, off = c0 * s, w = (c1 - c0) * s, bs = q->b * s;
    const double n = (double)geom_count(q);
    double *acc = j->cd + off, *md = j->cd + bs + off;
    float *mc = j->cf + off, *sc = j->cf + bs + off, *sh = j->cf + 2 * bs + off;
    memset(acc, 0, (size_t)w * sizeof *acc);
    for (int64_t r = 0; r < q->a; r++) col_sum(j->x + r * row + off, w, acc);
    for (int64_t c = 0; c < c1 - c0; c++) {
        double mean = channel_total(acc, c, s) / n;
        for (int64_t k = 0; k < s; k++) md[c * s + k] = mean;
    }
    memset(acc, 0, (size_t)w * sizeof *acc);
    for (int64_t r = 0; r < q->a; r++) col_sqdev(j->x + r * row + off, md, w, acc);
    for (int64_t c = 0; c < c1 - c0; c++) {
        const int64_t gi = c0 + c;
        const double var = channel_total(acc, c, s) / n, rstd = 1.0 / sqrt(var + (double)q->eps);
        j->mean[gi] = (float)md[c * s];
        j->rstd[gi] = (float)rstd;
        if (j->var) j->var[gi] = (float)var;
        const float a = j->gamma ? (float)(rstd * j->gamma[gi]) : (float)rstd, b = j->beta ? j->beta[gi] : 0.0f;
        for (int64_t k = 0; k < s; k++) {
            mc[c * s + k] = j->mean[gi];
            sc[c * s + k] = a;
            sh[c * s + k] = b;
        }
    }
    for (int64_t r = 0; r < q->a; r++) col_map(j->x + r * row + off, NULL, j->out + r * row + off, w, mc, sc, sh, NULL);
}

static void backward_cols(void *ctx, int64_t c0, int64_t c1)
{
    const norm_job *j = ctx;
    const norm_geom *q = j->q;
    const int64_t s = q->s, row = q->b * s, off = c0 * s, w = (c1 - c0) * s, bs = q->b * s;
    const double n = (double)geom_count(q);
    double *sg = j->cd + off, *sgx = j->cd + bs + off;
    float *mc = j->cf + off, *cx = j->cf + bs + off, *c0s = j->cf + 2 * bs + off, *cg = j->cf + 3 * bs + off;
    memset(sg, 0, (size_t)w * sizeof *sg);
    memset(sgx, 0, (size_t)w * sizeof *sgx);
    for (int64_t c = 0; c < c1 - c0; c++)
        for (int64_t k = 0; k < s; k++) mc[c * s + k] = j->mean[c0 + c];
    for (int64_t r = 0; r < q->a; r++) col_grad(j->x + r * row + off, j->g + r * row + off, mc, w, sg, sgx);
    for (int64_t c = 0; c < c1 - c0; c++) {
        const int64_t gi = c0 + c;
        const double S = channel_total(sg, c, s), T = channel_total(sgx, c, s);
        if (j->sg) {
            j->sg[gi] = S;
            j->sgx[gi] = T;
        }
        const double rd = j->rstd[gi], gc = j->gamma ? j->gamma[gi] : 1.0;
        for (int64_t k = 0; k < s; k++) {
            cg[c * s + k] = (float)(rd * gc);
            cx[c * s + k] = (float)(-rd * rd * rd * gc * T / n);
            c0s[c * s + k] = (float)(-rd * gc * S / n);
        }
    }
    if (!j->out) return;
    for (int64_t r = 0; r < q->a; r++)
        col_map(j->x + r * row + off, j->g + r * row + off, j->out + r * row + off, w, mc, cx, c0s, cg);
}

/* Run fn over the groups (the short-segment version for batch norm with s < SHORT_SEG); false when
 * its scratch memory runs out (the error is set). */
static bool run_groups(const norm_geom *q, vs_range_fn fn, norm_job *j)
{
    int64_t groups = geom_groups(q), grain = group_grain(q);
    if (q->kind == NORM_BATCH && q->s < SHORT_SEG) {
        j->cd = vs_malloc((size_t)(2 * groups * q->s) * sizeof *j->cd);
        j->cf = vs_malloc((size_t)(4 * groups * q->s) * sizeof *j->cf);
        if (!j->cd || !j->cf) {
            free(j->cd);
            free(j->cf);
            vs_set_last_error(VS_ERR_NOMEM, "normalise: out of memory");
            return false;
        }
        fn = fn == forward_groups ? forward_cols : backward_cols;
    }
    if (groups <= grain)
        fn(j, 0, groups);
    else
        vs_parallel_for(groups, grain, fn, j);
    free(j->cd);
    free(j->cf);
    return true;
}

/* Layer norm's parameter sums: acc[e] = sum over rows of g (x - mean) rstd (dgamma), acc[s + e] = sum
 * of g (dbeta); the chunks divide the elements e, each summed over the rows in order. */
typedef struct layer_param_job {
    const norm_geom *q;
    const float *x, *g, *mean, *rstd;
    double *acc;
} layer_param_job;

static void layer_param_cols(void *ctx, int64_t begin, int64_t end)
{
    const layer_param_job *j = ctx;
    const int64_t s = j->q->s;
    double *restrict dg = j->acc + begin, *restrict db = j->acc + s + begin;
    for (int64_t r = 0; r < j->q->a; r++) {
        const float *restrict x = j->x + r * s + begin, *restrict g = j->g + r * s + begin;
        const float m = j->mean[r];
        const double rs = j->rstd[r];
        for (int64_t e = 0; e < end - begin; e++) {
            dg[e] += (double)g[e] * (x[e] - m) * rs;
            db[e] += g[e];
        }
    }
}

/* ---- the norm op and its rule ---------------------------------------------------------------------- */

static vs_tensor *norm_op(vs_tensor *x, vs_tensor *gamma, vs_tensor *beta, const norm_geom *q, float *mean_out, float *var_out);

/* An op's output shaped like x, and room for mean[groups] then rstd[groups] (NULL on failure). */
static vs_tensor *alloc_with_stats(const char *op, const vs_tensor *x, int64_t groups, float **stats)
{
    vs_tensor *y = vs_alloc(op, x->ndim, x->shape);
    if (!y) return NULL;
    *stats = vs_malloc((size_t)(groups ? 2 * groups : 1) * sizeof **stats);
    if (!*stats) {
        vs_tensor_free(y);
        vs_set_last_error(VS_ERR_NOMEM, "%s: out of memory", op);
        return NULL;
    }
    return y;
}

/* Record out's node with the geometry; the node (if one was recorded) keeps the statistics,
 * otherwise they go.  out or NULL (see vs_record). */
static vs_tensor *record_with_stats(vs_tensor *out, const char *op, vs_backward_fn bw, int n_in, vs_tensor *const *in,
                                    const norm_geom *q, float *stats)
{
    out = vs_record(out, op, bw, n_in, in, q, sizeof *q);
    vs_node_adopt(out, stats);
    return out;
}

static vs_tensor *norm_vjp_op(vs_tensor *x, vs_tensor *h, const norm_geom *q, const float *stats);

/* First order, recording off: dx, dgamma, dbeta straight from the kernels. */
static void norm_backward_fused(vs_node *n, const norm_geom *q, vs_tensor *g, vs_tensor **gin)
{
    vs_tensor *x = n->in[0], *gamma = n->in[1], *beta = n->in[2];
    const int64_t groups = geom_groups(q);
    float *stats = n->extra;
    bool want_x = vs_node_needs(n, 0), want_gamma = gamma && vs_node_needs(n, 1), want_beta = beta && vs_node_needs(n, 2);
    vs_tensor *dx = want_x ? vs_alloc("norm backward", x->ndim, x->shape) : NULL;
    vs_tensor *dgamma = want_gamma ? vs_alloc("norm backward", gamma->ndim, gamma->shape) : NULL;
    vs_tensor *dbeta = want_beta ? vs_alloc("norm backward", beta->ndim, beta->shape) : NULL;
    if ((want_x && !dx) || (want_gamma && !dgamma) || (want_beta && !dbeta)) return;
    bool channel_sums = q->kind != NORM_LAYER && (want_gamma || want_beta);
    double *sums = channel_sums ? vs_malloc((size_t)groups * 2 * sizeof *sums) : NULL;
    if (channel_sums && !sums) {
        vs_set_last_error(VS_ERR_NOMEM, "norm backward: out of memory");
        return;
    }
    norm_job j = {.q = q, .x = x->data, .g = g->data, .gamma = gamma ? gamma->data : NULL, .out = dx ? dx->data : NULL,
                  .mean = stats, .rstd = stats + groups, .sg = sums, .sgx = sums ? sums + groups : NULL};
    if ((dx || sums) && !run_groups(q, backward_groups, &j)) {
        free(sums);
        return;
    }
    if (sums) {
        /* dgamma[c] = sum over c's groups of rstd T, dbeta[c] = sum of S, in group order */
        double *dg = vs_calloc((size_t)(2 * q->b), sizeof *dg);
        if (!dg) {
            free(sums);
            vs_set_last_error(VS_ERR_NOMEM, "norm backward: out of memory");
            return;
        }
        for (int64_t gi = 0; gi < groups; gi++) {
            int64_t c = geom_channel(q, gi);
            dg[c] += sums[groups + gi] * j.rstd[gi];
            dg[q->b + c] += sums[gi];
        }
        for (int64_t c = 0; c < q->b; c++) {
            if (dgamma) dgamma->data[c] = (float)dg[c];
            if (dbeta) dbeta->data[c] = (float)dg[q->b + c];
        }
        free(dg);
        free(sums);
    } else if (dgamma || dbeta) {
        double *acc = vs_calloc((size_t)(2 * q->s), sizeof *acc);
        if (!acc) {
            vs_set_last_error(VS_ERR_NOMEM, "norm backward: out of memory");
            return;
        }
        layer_param_job lj = {q, x->data, g->data, j.mean, j.rstd, acc};
        int64_t per = q->a ? q->a : 1;
        if (q->s * per < 2 * NORM_GRAIN)
            layer_param_cols(&lj, 0, q->s);
        else
            vs_parallel_for(q->s, (NORM_GRAIN + per - 1) / per, layer_param_cols, &lj);
        for (int64_t e = 0; e < q->s; e++) {
            if (dgamma) dgamma->data[e] = (float)acc[e];
            if (dbeta) dbeta->data[e] = (float)acc[q->s + e];
        }
        free(acc);
    }
    gin[0] = dx;
    gin[1] = dgamma;
    gin[2] = dbeta;
}

static void norm_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    (void)out;
    const norm_geom q = geom_load(n);
    if (!vs_grad_enabled()) {
        norm_backward_fused(n, &q, g, gin);
        return;
    }
    /* create_graph: the same gradients as recorded ops */
    vs_tensor *x = n->in[0], *gamma = n->in[1], *beta = n->in[2];
    vs_tensor *gc = canon(g, &q);
    if (vs_node_needs(n, 0)) {
        vs_tensor *h = gamma ? vs_mul(gc, canon_param(gamma, &q)) : gc;
        gin[0] = vs_reshape(norm_vjp_op(canon(x, &q), h, &q, n->extra), x->ndim, x->shape);
    }
    if (gamma && vs_node_needs(n, 1)) {
        vs_tensor *xhat = norm_op(canon(x, &q), NULL, NULL, &q, NULL, NULL);
        gin[1] = vs_reshape(vs_sum(vs_mul(gc, xhat), param_axes(&q), false), gamma->ndim, gamma->shape);
    }
    if (beta && vs_node_needs(n, 2)) gin[2] = vs_reshape(vs_sum(gc, param_axes(&q), false), beta->ndim, beta->shape);
}

/* y = normalise(x) gamma + beta over q's groups; x any shape of q's size, gamma/beta [c] (channel
 * kinds), of s elements (layer) or NULL.  mean_out/var_out, when given, receive each group's mean
 * and biased variance. */
static vs_tensor *norm_op(vs_tensor *x, vs_tensor *gamma, vs_tensor *beta, const norm_geom *q, float *mean_out, float *var_out)
{
    if (!x) return NULL;
    const int64_t groups = geom_groups(q);
    float *stats;
    vs_tensor *y = alloc_with_stats("normalise", x, groups, &stats);
    if (!y) return NULL;
    norm_job j = {.q = q, .x = x->data, .gamma = gamma ? gamma->data : NULL, .beta = beta ? beta->data : NULL, .out = y->data,
                  .mean = stats, .rstd = stats + groups, .var = var_out};
    if (geom_count(q) == 0) {
        memset(stats, 0, (size_t)(2 * groups) * sizeof *stats); /* empty groups: nothing to scale */
    } else if (!run_groups(q, forward_groups, &j)) {
        free(stats);
        vs_tensor_free(y);
        return NULL;
    }
    if (mean_out) memcpy(mean_out, stats, (size_t)groups * sizeof *stats);
    return record_with_stats(y, "normalise", norm_backward, 3, (vs_tensor *[]){x, gamma, beta}, q, stats);
}

/* ---- norm_vjp: dx = J h ----------------------------------------------------------------------------- */

/* mean over q's groups, kept as [a or 1, b, 1]. */
static vs_tensor *gmean(vs_tensor *t, const norm_geom *q) { return vs_mean(t, group_axes(q), true); }

/* v = the gradient flowing into dx = J(x) h.  d/dh <J h, v> = J v (J symmetric);
 * d/dx <J h, v> = -rstd^2 [ (m(vh) - m(v) m(h)) xhat - 3 m(v xhat) m(h xhat) xhat
 *                           + (v - m(v)) m(h xhat) + (h - m(h)) m(v xhat) ],
 * m = mean over the group; from <J h, v> = rstd <v~, h~> - rstd^3 <v~, c><h~, c>/n with c = x - mean,
 * a~ = a - m(a), and d rstd/dx = -rstd^3 c/n. */
static void norm_vjp_backward(vs_node *n, vs_tensor *out, vs_tensor *v, vs_tensor **gin)
{
    (void)out;
    const norm_geom q = geom_load(n);
    vs_tensor *x = n->in[0], *h = n->in[1];
    if (vs_node_needs(n, 1)) gin[1] = norm_vjp_op(x, v, &q, n->extra);
    if (!vs_node_needs(n, 0)) return;
    vs_tensor *xc = vs_sub(x, gmean(x, &q));
    vs_tensor *r2 = vs_pow_scalar(vs_add_scalar(gmean(vs_mul(xc, xc), &q), q.eps), -1.0f);
    vs_tensor *xhat = norm_op(x, NULL, NULL, &q, NULL, NULL);
    vs_tensor *mv = gmean(v, &q), *mh = gmean(h, &q);
    vs_tensor *mvx = gmean(vs_mul(v, xhat), &q), *mhx = gmean(vs_mul(h, xhat), &q);
    vs_tensor *k = vs_sub(vs_sub(gmean(vs_mul(v, h), &q), vs_mul(mv, mh)), vs_mul_scalar(vs_mul(mvx, mhx), 3.0f));
    vs_tensor *t = vs_add(vs_add(vs_mul(k, xhat), vs_mul(vs_sub(v, mv), mhx)), vs_mul(vs_sub(h, mh), mvx));
    gin[0] = vs_neg(vs_mul(r2, t));
}

/* dx = J(x) h over q's groups; x and h the same shape; stats: x's mean and rstd per group (from the
 * norm node whose rule this is). */
static vs_tensor *norm_vjp_op(vs_tensor *x, vs_tensor *h, const norm_geom *q, const float *stats)
{
    if (!x || !h) return NULL;
    const int64_t groups = geom_groups(q);
    float *own;
    vs_tensor *dx = alloc_with_stats("normalise_vjp", x, groups, &own);
    if (!dx) return NULL;
    memcpy(own, stats, (size_t)(2 * groups) * sizeof *own);
    norm_job j = {.q = q, .x = x->data, .g = h->data, .out = dx->data, .mean = own, .rstd = own + groups};
    if (geom_count(q) > 0 && !run_groups(q, backward_groups, &j)) {
        free(own);
        vs_tensor_free(dx);
        return NULL;
    }
    return record_with_stats(dx, "normalise_vjp", norm_vjp_backward, 2, (vs_tensor *[]){x, h}, q, own);
}

/* ---- affine: y = x scale[c] + shift[c] --------------------------------------------------------------- */

typedef struct affine_job {
    const norm_geom *q;
    const float *x, *scale, *shift;
    float *y;
} affine_job;

/* Rows i of [a*b, s]: channel i % b. */
VS_VECTOR_CLONES512 static void affine_rows(void *ctx, int64_t begin, int64_t end)
{
    const affine_job *j = ctx;
    const int64_t s = j->q->s;
    for (int64_t i = begin; i < end; i++) {
        int64_t c = i % j->q->b;
        map_channel(j->x + i * s, j->y + i * s, s, 0.0f, j->scale[c], j->shift ? j->shift[c] : 0.0f);
    }
}

static vs_tensor *affine_op(vs_tensor *x, vs_tensor *scale, vs_tensor *shift, const norm_geom *q);

static void affine_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    (void)out;
    const norm_geom q = geom_load(n);
    vs_tensor *x = n->in[0], *scale = n->in[1];
    if (vs_node_needs(n, 0)) gin[0] = affine_op(g, scale, NULL, &q);
    const uint32_t axes = VS_AXIS(0) | VS_AXIS(2);
    if (vs_node_needs(n, 1)) gin[1] = vs_sum(vs_mul(canon(g, &q), canon(x, &q)), axes, false);
    if (n->n_in > 2 && vs_node_needs(n, 2)) gin[2] = vs_sum(canon(g, &q), axes, false);
}

/* x seen as [a, b, s]; scale and shift [b] (shift may be NULL). */
static vs_tensor *affine_op(vs_tensor *x, vs_tensor *scale, vs_tensor *shift, const norm_geom *q)
{
    if (!x || !scale) return NULL;
    vs_tensor *y = vs_alloc("channel_affine", x->ndim, x->shape);
    if (!y) return NULL;
    affine_job j = {q, x->data, scale->data, shift ? shift->data : NULL, y->data};
    int64_t rows = q->a * q->b, grain = q->s >= NORM_GRAIN ? 1 : NORM_GRAIN / (q->s ? q->s : 1);
    if (rows <= grain)
        affine_rows(&j, 0, rows);
    else
        vs_parallel_for(rows, grain, affine_rows, &j);
    return vs_record(y, "channel_affine", affine_backward, shift ? 3 : 2, (vs_tensor *[]){x, scale, shift}, q, sizeof *q);
}

/* ---- the public ops ---------------------------------------------------------------------------------- */

static bool check_channel_param(const char *op, const vs_tensor *p, const char *what, int64_t c)
{
    if (p && (p->ndim != 1 || p->shape[0] != c)) {
        vs_op_error(op, "%s must be [%lld]", what, (long long)c);
        return false;
    }
    return true;
}

/* x [n, c, ...] as [n, c, rest]. */
static norm_geom channel_geom(norm_kind kind, const vs_tensor *x, float eps)
{
    int64_t n = x->shape[0], c = x->shape[1];
    norm_geom q = {kind, n, c, n && c ? x->size / (n * c) : 0, eps};
    return q;
}

static vs_tensor *batch_norm_impl(vs_tensor *x, vs_tensor *gamma, vs_tensor *beta, vs_tensor *running_mean,
                                  vs_tensor *running_var, bool training, float momentum, float eps)
{
    if (!x) return NULL;
    if (x->ndim < 2) return vs_op_error("batch_norm", "input must be [n,c,...], got %d dims", x->ndim);
    int64_t c = x->shape[1];
    if (!check_channel_param("batch_norm", gamma, "weight", c) || !check_channel_param("batch_norm", beta, "bias", c) ||
        !check_channel_param("batch_norm", running_mean, "running_mean", c) ||
        !check_channel_param("batch_norm", running_var, "running_var", c))
        return NULL;
    const norm_geom q = channel_geom(NORM_BATCH, x, eps);
    int64_t count = x->size / (c ? c : 1);
    if (training) {
        if (count < 2) return vs_op_error("batch_norm", "training needs more than one value per channel");
        bool update = running_mean && running_var;
        float *batch = update ? vs_malloc((size_t)(2 * c) * sizeof *batch) : NULL; /* mean[c], var[c] */
        if (update && !batch) {
            vs_set_last_error(VS_ERR_NOMEM, "batch_norm: out of memory");
            return NULL;
        }
        vs_tensor *y = norm_op(x, gamma, beta, &q, batch, batch ? batch + c : NULL);
        if (y && update) {
            /* running = (1 - m) running + m batch, with the unbiased variance (PyTorch) */
            float unbias = (float)count / (float)(count - 1);
            for (int64_t k = 0; k < c; k++) {
                running_mean->data[k] = (1 - momentum) * running_mean->data[k] + momentum * batch[k];
                running_var->data[k] = (1 - momentum) * running_var->data[k] + momentum * batch[c + k] * unbias;
            }
        }
        free(batch);
        return y;
    }
    if (!running_mean || !running_var) return vs_op_error("batch_norm", "evaluation needs running statistics");
    /* scale = gamma / sqrt(running_var + eps), shift = beta - running_mean scale: [c] ops, then one pass */
    vs_tensor *scale = vs_pow_scalar(vs_add_scalar(running_var, eps), -0.5f);
    if (gamma) scale = vs_mul(scale, gamma);
    vs_tensor *shift = vs_neg(vs_mul(running_mean, scale));
    if (beta) shift = vs_add(shift, beta);
    return affine_op(x, scale, shift, &q);
}

static vs_tensor *instance_norm_impl(vs_tensor *x, vs_tensor *gamma, vs_tensor *beta, float eps, float *mean, float *var)
{
    if (!x) return NULL;
    if (x->ndim != 4) return vs_op_error("instance_norm", "input must be [n,c,h,w], got %d dims", x->ndim);
    if (!check_channel_param("instance_norm", gamma, "weight", x->shape[1]) ||
        !check_channel_param("instance_norm", beta, "bias", x->shape[1]))
        return NULL;
    const norm_geom q = channel_geom(NORM_INSTANCE, x, eps);
    return norm_op(x, gamma, beta, &q, mean, var);
}

static vs_tensor *layer_norm_impl(vs_tensor *x, int n_dims, vs_tensor *gamma, vs_tensor *beta, float eps)
{
    if (!x) return NULL;
    if (n_dims < 1 || n_dims > x->ndim) return vs_op_error("layer_norm", "cannot normalise %d of %d dims", n_dims, x->ndim);
    int64_t count = 1;
    for (int i = x->ndim - n_dims; i < x->ndim; i++) count *= x->shape[i];
    if ((gamma && gamma->size != count) || (beta && beta->size != count))
        return vs_op_error("layer_norm", "weight and bias must have %lld elements", (long long)count);
    const norm_geom q = {NORM_LAYER, count ? x->size / count : 0, 1, count, eps};
    return norm_op(x, gamma, beta, &q, NULL, NULL);
}

vs_tensor *vs_batch_norm(vs_tensor *x, vs_tensor *gamma, vs_tensor *beta, vs_tensor *running_mean,
                         vs_tensor *running_var, bool training, float momentum, float eps)
{
    vs_scope_begin();
    return vs_scope_return(batch_norm_impl(x, gamma, beta, running_mean, running_var, training, momentum, eps));
}

vs_tensor *vs_instance_norm(vs_tensor *x, vs_tensor *gamma, vs_tensor *beta, float eps)
{
    vs_scope_begin();
    return vs_scope_return(instance_norm_impl(x, gamma, beta, eps, NULL, NULL));
}

vs_tensor *vs_instance_norm_stats(vs_tensor *x, vs_tensor *gamma, vs_tensor *beta, float eps, float *mean, float *var)
{
    vs_scope_begin();
    return vs_scope_return(instance_norm_impl(x, gamma, beta, eps, mean, var));
}

vs_tensor *vs_layer_norm(vs_tensor *x, int n_dims, vs_tensor *gamma, vs_tensor *beta, float eps)
{
    vs_scope_begin();
    return vs_scope_return(layer_norm_impl(x, n_dims, gamma, beta, eps));
}
