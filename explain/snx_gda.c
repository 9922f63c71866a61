/* snx_gda.c - gradient descent-ascent on a Lagrangian (SNX Eqs. 11-12, Algorithm 1): the one
 * optimiser behind every SNX mask (stage 1 and 2, SNX-KL, SNX-UC, GNNExplainer), with optional
 * unconstrained pre-training and per-iteration traces (Figs. 5 and 6). */
#include "explain/snx_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vs_gda_opts_init(vs_gda_opts *o)
{
    memset(o, 0, sizeof *o);
    o->pre_iters = 0;
    o->iters = 100;
    o->eta1 = 0.1f;
    o->eta2 = 1e-3f;
    o->step = VS_GDA_ADAM;
    o->dual = VS_GDA_DUAL_UNIT;
    o->radius = 10.0f;
    o->violation_tol = 1e-3f;
}

void vs_snx_trace_clear(vs_snx_trace *t)
{
    if (!t) return;
    free(t->objective);
    free(t->grad_primal);
    free(t->grad_dual);
    free(t->violated);
    memset(t, 0, sizeof *t);
}

/* lambda_b <- max(lambda_b + eta2 g_b, 0), then rescaled (unit) or projected (ball). */
static void dual_update(const vs_gda_problem *pb, const vs_gda_opts *o, float *lambda, const float *g)
{
    for (int64_t b = 0; b < pb->n_blocks; b++) {
        int64_t c0 = pb->con_off[b], c1 = pb->con_off[b + 1];
        double nrm = 0;
        for (int64_t i = c0; i < c1; i++) {
            float v = lambda[i] + o->eta2 * g[i];
            lambda[i] = v > 0 ? v : 0;
            nrm += (double)lambda[i] * lambda[i];
        }
        nrm = sqrt(nrm);
        double scale = 1;
        if (o->dual == VS_GDA_DUAL_UNIT && nrm > 0) scale = 1 / nrm;
        if (o->dual == VS_GDA_DUAL_BALL && nrm > o->radius) scale = o->radius / nrm;
        for (int64_t i = c0; i < c1; i++) lambda[i] = (float)(lambda[i] * scale);
    }
}

static double block_norm(const float *v, int64_t a, int64_t b)
{
    double s = 0;
    for (int64_t i = a; i < b; i++) s += (double)v[i] * v[i];
    return sqrt(s);
}

/* g(theta) without a graph into g[n_cons]. */
static vs_status eval_constraints(const vs_gda_problem *pb, const float *theta, float *g, int64_t n_cons, vs_error *err)
{
    vs_scope_begin();
    bool grad = vs_set_grad_enabled(false);
    vs_tensor *c = pb->constraints(pb->ctx, vs_tensor_from(VS_SHAPE(pb->n_vars), theta));
    vs_status st = VS_OK;
    if (!c || c->size != n_cons)
        st = vs_error_set(err, VS_ERR_SHAPE, "gda: constraints gave %s values, expected %lld",
                          c ? "a different number of" : vs_last_error()->msg, (long long)n_cons);
    else
        memcpy(g, c->data, (size_t)n_cons * sizeof *g);
    vs_set_grad_enabled(grad);
    vs_scope_end();
    return st;
}

vs_status vs_gda_minimize(const vs_gda_problem *pb, const vs_gda_opts *o, float *theta, vs_snx_trace *trace, vs_error *err)
{
    if (!pb || !o || !theta || !pb->objective || !pb->var_off || pb->n_blocks < 1 || pb->n_vars < 0)
        return vs_error_set(err, VS_ERR_ARG, "gda: problem, options and theta are required (n_blocks >= 1)");
    if (o->pre_iters < 0 || o->iters < 0 || !(o->eta1 > 0) || !(o->eta2 >= 0))
        return vs_error_set(err, VS_ERR_ARG, "gda: iterations must be >= 0, eta1 > 0 and eta2 >= 0");
    int64_t B = pb->n_blocks, nv = pb->n_vars, total = (int64_t)o->pre_iters + o->iters;
    int64_t nc = (pb->constraints && pb->con_off) ? pb->con_off[B] : 0;
    bool constrained = nc > 0 && o->dual != VS_GDA_DUAL_NONE;
    if (trace) memset(trace, 0, sizeof *trace);

    float *g = malloc((size_t)(nv ? nv : 1) * sizeof *g);
    float *lambda = calloc((size_t)(nc ? nc : 1), sizeof *lambda), *cv = malloc((size_t)(nc ? nc : 1) * sizeof *cv);
    snx_adam adam = {0};
    vs_status st = VS_OK;
    if (!g || !lambda || !cv || snx_adam_init(&adam, nv, err) != VS_OK) {
        st = vs_error_set(err, VS_ERR_NOMEM, "gda: out of memory for %lld variables", (long long)nv);
        goto out;
    }
    if (trace && total > 0) {
        size_t n;
        if (!vs_size_mul((size_t)B, (size_t)total, &n) || !vs_size_mul(n, sizeof(float), &(size_t){0})) {
            st = vs_error_set(err, VS_ERR_NOMEM, "gda: traces of %lld blocks x %lld iterations overflow", (long long)B, (long long)total);
            goto out;
        }
        trace->n_blocks = B;
        trace->n_iters = total;
        trace->objective = calloc(n, sizeof(float));
        trace->grad_primal = calloc(n, sizeof(float));
        trace->grad_dual = calloc(n, sizeof(float));
        trace->violated = calloc(n, sizeof(float));
        if (!trace->objective || !trace->grad_primal || !trace->grad_dual || !trace->violated) {
            st = vs_error_set(err, VS_ERR_NOMEM, "gda: out of memory for traces");
            goto out;
        }
    }
    /* Algorithm 1, line 3: lambda = 1/c per block */
    for (int64_t b = 0; b < B && nc; b++)
        for (int64_t i = pb->con_off[b]; i < pb->con_off[b + 1]; i++) lambda[i] = 1.0f / (float)(pb->con_off[b + 1] - pb->con_off[b]);

    for (int64_t it = 0; it < total && st == VS_OK; it++) {
        bool dual_on = constrained && it >= o->pre_iters;
        vs_scope_begin();
        vs_tensor *th = vs_tensor_from(VS_SHAPE(nv), theta);
        vs_set_requires_grad(th, true);
        vs_tensor *obj = pb->objective(pb->ctx, th);
        vs_tensor *L = vs_sum(obj, VS_ALL_AXES, false);
        if (dual_on) L = vs_add(L, vs_sum(vs_mul(pb->constraints(pb->ctx, th), vs_tensor_from(VS_SHAPE(nc), lambda)), VS_ALL_AXES, false));
        vs_tensor *grad = NULL;
        if (!obj || !L || obj->size != B || vs_grad(1, &L, NULL, 1, &th, &grad, false) != VS_OK) {
            st = vs_error_set(err, VS_ERR_SHAPE, "gda: objective failed at iteration %lld: %s", (long long)it,
                              obj && obj->size != B ? "wrong number of block values" : vs_last_error()->msg);
            vs_scope_end();
            break;
        }
        memcpy(g, grad->data, (size_t)nv * sizeof *g);
        int bad = 0;
        for (int64_t i = 0; i < nv; i++) bad |= !isfinite(g[i]);
        if (trace)
            for (int64_t b = 0; b < B; b++) {
                trace->objective[b * total + it] = obj->data[b];
                trace->grad_primal[b * total + it] = (float)block_norm(g, pb->var_off[b], pb->var_off[b + 1]);
            }
        vs_scope_end();
        if (bad) {
            st = vs_error_set(err, VS_ERR_NUMERIC, "gda: non-finite gradient at iteration %lld", (long long)it);
            break;
        }
        /* Eq. 12, primal descent */
        if (o->step == VS_GDA_ADAM)
            snx_adam_step(&adam, theta, g, o->eta1);
        else
            for (int64_t i = 0; i < nv; i++) theta[i] -= o->eta1 * g[i];
        if (!nc) continue;
        /* dual ascent with the latest theta; dL/dlambda = g(theta) */
        st = eval_constraints(pb, theta, cv, nc, err);
        if (st != VS_OK) break;
        if (dual_on) dual_update(pb, o, lambda, cv);
        if (trace)
            for (int64_t b = 0; b < B; b++) {
                int64_t c0 = pb->con_off[b], c1 = pb->con_off[b + 1], nviol = 0;
                for (int64_t i = c0; i < c1; i++) nviol += cv[i] > o->violation_tol;
                trace->grad_dual[b * total + it] = (float)block_norm(cv, c0, c1);
                trace->violated[b * total + it] = c1 > c0 ? (float)nviol / (float)(c1 - c0) : 0.0f;
            }
    }
out:
    free(g);
    free(lambda);
    free(cv);
    snx_adam_free(&adam);
    if (st != VS_OK && trace) vs_snx_trace_clear(trace);
    return st;
}
