/* tests/gradcheck.h - numerical checks of first and second derivatives for op tests.
 *
 * f maps input tensors to one output tensor.  The checked scalar is L(x) = sum(w * f(x)) with a
 * fixed random weighting w, so every output element and every term of the rule matters.
 * First order: analytic dL/dx (vs_grad) against a 4-point central difference computed in double.
 * Second order: the Hessian-vector product from double backward (grad of <dL/dx, v>) against the
 * central difference of analytic gradients along v.  Callers keep inputs away from kinks. */
#ifndef VERSUS_TESTS_GRADCHECK_H
#define VERSUS_TESTS_GRADCHECK_H

#include "versus/versus.h"
#include "vs_check.h"

#include <math.h>
#include <stdio.h>

typedef vs_tensor *(*gc_fn)(vs_tensor **x, void *ctx);

#define GC_MAX_IN 4

static inline double gc_loss(gc_fn f, void *ctx, int n, vs_tensor **x, const vs_tensor *w)
{
    bool prev = vs_set_grad_enabled(false);
    vs_scope_begin();
    vs_tensor *y = f(x, ctx);
    double s = 0;
    if (y) {
        ck_assert_msg(y->size == w->size, "output size changed between calls");
        for (int64_t i = 0; i < y->size; i++) s += (double)w->data[i] * y->data[i];
    } else {
        s = NAN;
    }
    vs_scope_end();
    vs_set_grad_enabled(prev);
    return s;
}

/* Analytic gradient of L at x into out[i] (float arrays of x[i]->size). */
static inline void gc_analytic(gc_fn f, void *ctx, int n, vs_tensor **x, const vs_tensor *w, double **out)
{
    vs_scope_begin();
    vs_tensor *y = f(x, ctx);
    ck_assert_msg(y != NULL, "op failed: %s", vs_last_error()->msg);
    vs_tensor *g[GC_MAX_IN];
    ck_assert_int_eq(vs_grad(1, &y, (vs_tensor *const *)&w, n, x, g, false), VS_OK);
    for (int i = 0; i < n; i++)
        for (int64_t k = 0; k < x[i]->size; k++) out[i][k] = g[i]->data[k];
    vs_scope_end();
}

static inline double gc_tol_ok(double a, double b, double scale, double rtol)
{
    return fabs(a - b) <= rtol * (fabs(a) + fabs(b)) + rtol * 0.1 * scale + 1e-6;
}

/* Check first and (when second) second derivatives of f at x.  h: finite-difference step. */
static inline void gradcheck_full(const char *name, gc_fn f, void *ctx, int n, vs_tensor **x, double h, double rtol, bool second)
{
    vs_rng r;
    vs_rng_seed(&r, 1234);
    for (int i = 0; i < n; i++) vs_set_requires_grad(x[i], true);
    vs_tensor *y0;
    {
        vs_scope_begin();
        y0 = f(x, ctx);
        ck_assert_msg(y0 != NULL, "%s failed: %s", name, vs_last_error()->msg);
        vs_keep(y0);
        vs_scope_end();
    }
    vs_tensor *w = vs_tensor_rand(y0->ndim, y0->shape, &r, -1.0f, 1.0f);
    vs_tensor_free(y0);

    double *ga[GC_MAX_IN], *gn[GC_MAX_IN];
    for (int i = 0; i < n; i++) {
        ga[i] = calloc((size_t)x[i]->size + 1, sizeof(double));
        gn[i] = calloc((size_t)x[i]->size + 1, sizeof(double));
    }
    gc_analytic(f, ctx, n, x, w, ga);
    double scale = 0;
    for (int i = 0; i < n; i++)
        for (int64_t k = 0; k < x[i]->size; k++) {
            float *p = &x[i]->data[k], v = *p;
            double l[4];
            const double off[4] = {-2, -1, 1, 2};
            for (int s = 0; s < 4; s++) {
                *p = (float)(v + off[s] * h);
                l[s] = gc_loss(f, ctx, n, x, w);
            }
            *p = v;
            /* actual steps in float may differ from h: use the 2-point form on the realised steps when coarse */
            gn[i][k] = (8.0 * (l[2] - l[1]) - (l[3] - l[0])) / (12.0 * h);
            scale = fmax(scale, fabs(gn[i][k]));
        }
    for (int i = 0; i < n; i++)
        for (int64_t k = 0; k < x[i]->size; k++)
            ck_assert_msg(gc_tol_ok(ga[i][k], gn[i][k], scale, rtol), "%s: d/dx%d[%lld] analytic %.6g numeric %.6g", name, i,
                          (long long)k, ga[i][k], gn[i][k]);

    if (second) {
        /* Hessian-vector product along a random direction v. */
        vs_tensor *v[GC_MAX_IN], *hv[GC_MAX_IN];
        for (int i = 0; i < n; i++) v[i] = vs_tensor_rand(x[i]->ndim, x[i]->shape, &r, -1.0f, 1.0f);
        vs_scope_begin();
        vs_tensor *y = f(x, ctx);
        vs_tensor *g[GC_MAX_IN];
        ck_assert_int_eq(vs_grad(1, &y, (vs_tensor *const *)&w, n, x, g, true), VS_OK);
        vs_tensor *s = NULL;
        for (int i = 0; i < n; i++) {
            vs_tensor *t = vs_sum(vs_mul(g[i], v[i]), VS_ALL_AXES, false);
            s = s ? vs_add(s, t) : t;
        }
        bool any = s->requires_grad;
        if (any) {
            ck_assert_int_eq(vs_grad(1, &s, NULL, n, x, hv, false), VS_OK);
        } else {
            for (int i = 0; i < n; i++) hv[i] = vs_zeros_like(x[i]);
        }
        for (int i = 0; i < n; i++) vs_keep(hv[i]);
        vs_scope_end();

        double *gp[GC_MAX_IN], *gm[GC_MAX_IN], *gp2[GC_MAX_IN], *gm2[GC_MAX_IN];
        for (int i = 0; i < n; i++) {
            gp[i] = calloc((size_t)x[i]->size + 1, sizeof(double));
            gm[i] = calloc((size_t)x[i]->size + 1, sizeof(double));
            gp2[i] = calloc((size_t)x[i]->size + 1, sizeof(double));
            gm2[i] = calloc((size_t)x[i]->size + 1, sizeof(double));
        }
        double *base[GC_MAX_IN];
        for (int i = 0; i < n; i++) {
            base[i] = calloc((size_t)x[i]->size + 1, sizeof(double));
            for (int64_t k = 0; k < x[i]->size; k++) base[i][k] = x[i]->data[k];
        }
        const double off[4] = {1, -1, 2, -2};
        double **dst[4] = {gp, gm, gp2, gm2};
        for (int s2 = 0; s2 < 4; s2++) {
            for (int i = 0; i < n; i++)
                for (int64_t k = 0; k < x[i]->size; k++) x[i]->data[k] = (float)(base[i][k] + off[s2] * h * v[i]->data[k]);
            gc_analytic(f, ctx, n, x, w, dst[s2]);
        }
        for (int i = 0; i < n; i++)
            for (int64_t k = 0; k < x[i]->size; k++) x[i]->data[k] = (float)base[i][k];
        double hscale = 0;
        for (int i = 0; i < n; i++)
            for (int64_t k = 0; k < x[i]->size; k++) {
                double num = (8.0 * (gp[i][k] - gm[i][k]) - (gp2[i][k] - gm2[i][k])) / (12.0 * h);
                gn[i][k] = num;
                hscale = fmax(hscale, fabs(num));
            }
        for (int i = 0; i < n; i++)
            for (int64_t k = 0; k < x[i]->size; k++)
                ck_assert_msg(gc_tol_ok(hv[i]->data[k], gn[i][k], hscale, rtol * 2), "%s: (Hv)%d[%lld] analytic %.6g numeric %.6g",
                              name, i, (long long)k, (double)hv[i]->data[k], gn[i][k]);
        for (int i = 0; i < n; i++) {
            free(gp[i]);
            free(gm[i]);
            free(gp2[i]);
            free(gm2[i]);
            free(base[i]);
            vs_tensor_free(v[i]);
            vs_tensor_free(hv[i]);
        }
    }
    for (int i = 0; i < n; i++) {
        free(ga[i]);
        free(gn[i]);
    }
    vs_tensor_free(w);
}

static inline void gradcheck(const char *name, gc_fn f, void *ctx, int n, vs_tensor **x)
{
    gradcheck_full(name, f, ctx, n, x, 1e-2, 2e-2, true);
}

#endif
