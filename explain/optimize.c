/* optimize.c - the optimisation toolbox (versus/optimize.h): Adam on flat arrays, gradient
 * descent-ascent with constraint duals (the optimiser behind every SNX mask), Adam descent
 * (GNNExplainer), projected gradient / ISTA / FISTA with a box and L1, subgradient descent with the
 * best iterate kept.  Every method evaluates objective and gradient through one helper, each
 * iteration in its own tensor scope. */
#include "versus/optimize.h"
#include "versus/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Adam ----------------------------------------------------------------------------------------- */

vs_status vs_flat_adam_init(vs_flat_adam *a, int64_t n, vs_error *err)
{
    a->n = n;
    a->t = 0;
    a->m = calloc((size_t)(n > 0 ? n : 1), sizeof *a->m);
    a->v = calloc((size_t)(n > 0 ? n : 1), sizeof *a->v);
    if (!a->m || !a->v) {
        vs_flat_adam_free(a);
        return vs_error_set(err, VS_ERR_NOMEM, "adam: out of memory for %lld optimiser states", (long long)n);
    }
    return VS_OK;
}

void vs_flat_adam_step(vs_flat_adam *a, float *x, const float *g, float lr)
{
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
    a->t++;
    double c1 = 1.0 - pow(b1, (double)a->t), c2 = 1.0 - pow(b2, (double)a->t);
    for (int64_t i = 0; i < a->n; i++) {
        a->m[i] = (float)(b1 * a->m[i] + (1 - b1) * g[i]);
        a->v[i] = (float)(b2 * a->v[i] + (1 - b2) * (double)g[i] * g[i]);
        x[i] -= (float)(lr * (a->m[i] / c1) / (sqrt(a->v[i] / c2) + eps));
    }
}

void vs_flat_adam_free(vs_flat_adam *a)
{
    free(a->m);
    free(a->v);
    a->m = a->v = NULL;
}

/* ---- traces and the shared evaluation ------------------------------------------------------------- */

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

void vs_opt_trace_clear(vs_opt_trace *t)
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

/* New zeroed trace arrays for B blocks x total iterations. */
static vs_status trace_alloc(vs_opt_trace *trace, int64_t B, int64_t total, const char *who, vs_error *err)
{
    memset(trace, 0, sizeof *trace);
    if (total <= 0) return VS_OK;
    size_t n;
    if (!vs_size_mul((size_t)B, (size_t)total, &n) || !vs_size_mul(n, sizeof(float), &(size_t){0}))
        return vs_error_set(err, VS_ERR_NOMEM, "%s: traces of %lld blocks x %lld iterations overflow", who, (long long)B, (long long)total);
    trace->n_blocks = B;
    trace->n_iters = total;
    trace->objective = calloc(n, sizeof(float));
    trace->grad_primal = calloc(n, sizeof(float));
    trace->grad_dual = calloc(n, sizeof(float));
    trace->violated = calloc(n, sizeof(float));
    if (!trace->objective || !trace->grad_primal || !trace->grad_dual || !trace->violated)
        return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for traces", who);
    return VS_OK;
}

/* g = dL/dtheta at theta, L = sum_b g0_b + (lambda ? lambda . g(theta) : 0); obj[B] receives the
 * g0_b (may be NULL).  Non-finite gradients are an error. */
static vs_status value_grad(const vs_gda_problem *pb, const float *theta, const float *lambda, int64_t nc, float *g, float *obj,
                            int64_t it, const char *who, vs_error *err)
{
    int64_t B = pb->n_blocks, nv = pb->n_vars;
    vs_status st = VS_OK;
    vs_scope_begin();
    vs_tensor *th = vs_tensor_from(VS_SHAPE(nv), theta);
    vs_set_requires_grad(th, true);
    vs_tensor *o = pb->objective(pb->ctx, th);
    vs_tensor *L = vs_sum(o, VS_ALL_AXES, false);
    if (lambda) L = vs_add(L, vs_sum(vs_mul(pb->constraints(pb->ctx, th), vs_tensor_from(VS_SHAPE(nc), lambda)), VS_ALL_AXES, false));
    vs_tensor *grad = NULL;
    if (!o || !L || o->size != B || vs_grad(1, &L, NULL, 1, &th, &grad, false) != VS_OK) {
        st = vs_error_set(err, VS_ERR_SHAPE, "%s: objective failed at iteration %lld: %s", who, (long long)it,
                          o && o->size != B ? "wrong number of block values" : vs_last_error()->msg);
    } else {
        memcpy(g, grad->data, (size_t)nv * sizeof *g);
        if (obj) memcpy(obj, o->data, (size_t)B * sizeof *obj);
    }
    vs_scope_end();
    int bad = 0;
    for (int64_t i = 0; st == VS_OK && i < nv; i++) bad |= !isfinite(g[i]);
    if (bad) st = vs_error_set(err, VS_ERR_NUMERIC, "%s: non-finite gradient at iteration %lld", who, (long long)it);
    return st;
}

/* Objective values g0_b at theta without a graph into obj[B]. */
static vs_status value_only(const vs_gda_problem *pb, const float *theta, float *obj, const char *who, vs_error *err)
{
    vs_scope_begin();
    bool grad = vs_set_grad_enabled(false);
    vs_tensor *o = pb->objective(pb->ctx, vs_tensor_from(VS_SHAPE(pb->n_vars), theta));
    vs_status st = VS_OK;
    if (!o || o->size != pb->n_blocks)
        st = vs_error_set(err, VS_ERR_SHAPE, "%s: objective failed: %s", who, o ? "wrong number of block values" : vs_last_error()->msg);
    else
        memcpy(obj, o->data, (size_t)pb->n_blocks * sizeof *obj);
    vs_set_grad_enabled(grad);
    vs_scope_end();
    return st;
}

static vs_status check_problem(const vs_gda_problem *pb, const float *theta, const char *who, vs_error *err)
{
    if (!pb || !theta || !pb->objective || !pb->var_off || pb->n_blocks < 1 || pb->n_vars < 0)
        return vs_error_set(err, VS_ERR_ARG, "%s: a problem (objective, var_off, n_blocks >= 1) and theta are required", who);
    return VS_OK;
}

/* Record iteration it of every block: objective and |gradient| of the block's variables. */
static void trace_primal(vs_opt_trace *trace, const vs_gda_problem *pb, int64_t it, const float *obj, const float *g)
{
    if (!trace) return;
    int64_t T = trace->n_iters;
    for (int64_t b = 0; b < pb->n_blocks; b++) {
        trace->objective[b * T + it] = obj[b];
        trace->grad_primal[b * T + it] = (float)block_norm(g, pb->var_off[b], pb->var_off[b + 1]);
    }
}

/* ---- gradient descent-ascent ------------------------------------------------------------------------ */

vs_status vs_gda_minimize(const vs_gda_problem *pb, const vs_gda_opts *o, float *theta, vs_opt_trace *trace, vs_error *err)
{
    if (!o) return vs_error_set(err, VS_ERR_ARG, "gda: options are required");
    vs_status chk = check_problem(pb, theta, "gda", err);
    if (chk != VS_OK) return chk;
    if (o->pre_iters < 0 || o->iters < 0 || !(o->eta1 > 0) || !(o->eta2 >= 0))
        return vs_error_set(err, VS_ERR_ARG, "gda: iterations must be >= 0, eta1 > 0 and eta2 >= 0");
    int64_t B = pb->n_blocks, nv = pb->n_vars, total = (int64_t)o->pre_iters + o->iters;
    int64_t nc = (pb->constraints && pb->con_off) ? pb->con_off[B] : 0;
    bool constrained = nc > 0 && o->dual != VS_GDA_DUAL_NONE;
    if (trace) memset(trace, 0, sizeof *trace);

    float *g = malloc((size_t)(nv ? nv : 1) * sizeof *g), *obj = malloc((size_t)B * sizeof *obj);
    float *lambda = calloc((size_t)(nc ? nc : 1), sizeof *lambda), *cv = malloc((size_t)(nc ? nc : 1) * sizeof *cv);
    vs_flat_adam adam = {0};
    vs_status st = VS_OK;
    if (!g || !obj || !lambda || !cv || vs_flat_adam_init(&adam, nv, err) != VS_OK) {
        st = vs_error_set(err, VS_ERR_NOMEM, "gda: out of memory for %lld variables", (long long)nv);
        goto out;
    }
    if (trace && (st = trace_alloc(trace, B, total, "gda", err)) != VS_OK) goto out;
    /* Algorithm 1, line 3: lambda = 1/c per block */
    for (int64_t b = 0; b < B && nc; b++)
        for (int64_t i = pb->con_off[b]; i < pb->con_off[b + 1]; i++) lambda[i] = 1.0f / (float)(pb->con_off[b + 1] - pb->con_off[b]);

    for (int64_t it = 0; it < total && st == VS_OK; it++) {
        bool dual_on = constrained && it >= o->pre_iters;
        st = value_grad(pb, theta, dual_on ? lambda : NULL, nc, g, obj, it, "gda", err);
        if (st != VS_OK) break;
        trace_primal(trace, pb, it, obj, g);
        /* Eq. 12, primal descent */
        if (o->step == VS_GDA_ADAM)
            vs_flat_adam_step(&adam, theta, g, o->eta1);
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
    free(obj);
    free(lambda);
    free(cv);
    vs_flat_adam_free(&adam);
    if (st != VS_OK && trace) vs_opt_trace_clear(trace);
    return st;
}

vs_status vs_adam_minimize(const vs_gda_problem *pb, int iters, float lr, float *theta, vs_opt_trace *trace, vs_error *err)
{
    vs_gda_opts o;
    vs_gda_opts_init(&o);
    o.iters = iters;
    o.eta1 = lr;
    o.step = VS_GDA_ADAM;
    o.dual = VS_GDA_DUAL_NONE;
    vs_gda_problem plain = *pb;
    plain.constraints = NULL;
    plain.con_off = NULL;
    return vs_gda_minimize(&plain, &o, theta, trace, err);
}

/* ---- proximal gradient ------------------------------------------------------------------------------ */

void vs_prox_opts_init(vs_prox_opts *o)
{
    memset(o, 0, sizeof *o);
    o->iters = 100;
    o->step = 0.1f;
    o->lo = -INFINITY;
    o->hi = INFINITY;
}

/* P(v) = clip(soft(v, t), lo, hi). */
static float prox_box_l1(float v, float t, float lo, float hi)
{
    float s = v > t ? v - t : v < -t ? v + t : 0.0f;
    return s < lo ? lo : s > hi ? hi : s;
}

static float clip(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

vs_status vs_prox_minimize(const vs_gda_problem *pb, const vs_prox_opts *o, float *theta, int *iters_done, vs_opt_trace *trace,
                           vs_error *err)
{
    if (iters_done) *iters_done = 0;
    vs_status chk = check_problem(pb, theta, "prox", err);
    if (chk != VS_OK) return chk;
    if (!o || o->iters < 0 || !(o->step > 0) || !(o->l1 >= 0) || !(o->lo <= o->hi))
        return vs_error_set(err, VS_ERR_ARG, "prox: iterations must be >= 0, step > 0, l1 >= 0 and lo <= hi");
    int64_t B = pb->n_blocks, nv = pb->n_vars, n1 = nv ? nv : 1;
    float *g = malloc((size_t)n1 * sizeof *g), *y = malloc((size_t)n1 * sizeof *y), *prev = malloc((size_t)n1 * sizeof *prev);
    float *obj = malloc((size_t)B * sizeof *obj);
    vs_status st = VS_OK;
    if (!g || !y || !prev || !obj) st = vs_error_set(err, VS_ERR_NOMEM, "prox: out of memory for %lld variables", (long long)nv);
    if (st == VS_OK && trace) st = trace_alloc(trace, B, o->iters, "prox", err);
    for (int64_t i = 0; st == VS_OK && i < nv; i++) theta[i] = y[i] = clip(theta[i], o->lo, o->hi);
    double t = 1;
    const float thr = o->step * o->l1;
    for (int it = 0; it < o->iters && st == VS_OK; it++) {
        st = value_grad(pb, y, NULL, 0, g, obj, it, "prox", err);
        if (st != VS_OK) break;
        trace_primal(trace, pb, it, obj, g);
        memcpy(prev, theta, (size_t)nv * sizeof *prev);
        float moved = 0;
        for (int64_t i = 0; i < nv; i++) {
            theta[i] = prox_box_l1(y[i] - o->step * g[i], thr, o->lo, o->hi);
            moved = fmaxf(moved, fabsf(theta[i] - prev[i]));
        }
        double t_next = o->accelerate ? (1 + sqrt(1 + 4 * t * t)) / 2 : 1;
        float mom = (float)((t - 1) / t_next);
        for (int64_t i = 0; i < nv; i++) y[i] = o->accelerate ? clip(theta[i] + mom * (theta[i] - prev[i]), o->lo, o->hi) : theta[i];
        t = t_next;
        if (iters_done) *iters_done = it + 1;
        if (o->tol > 0 && moved <= o->tol) break;
    }
    free(g);
    free(y);
    free(prev);
    free(obj);
    if (st != VS_OK && trace) vs_opt_trace_clear(trace);
    return st;
}

/* ---- subgradient descent ----------------------------------------------------------------------------- */

void vs_subgrad_opts_init(vs_subgrad_opts *o)
{
    memset(o, 0, sizeof *o);
    o->iters = 200;
    o->step = 0.1f;
    o->lo = -INFINITY;
    o->hi = INFINITY;
}

/* Keep, per block, the iterate theta when its value obj[b] beats best[b]. */
static void keep_best(const vs_gda_problem *pb, const float *theta, const float *obj, float *best, float *best_theta)
{
    for (int64_t b = 0; b < pb->n_blocks; b++)
        if (obj[b] < best[b]) {
            best[b] = obj[b];
            int64_t v0 = pb->var_off[b], v1 = pb->var_off[b + 1];
            memcpy(best_theta + v0, theta + v0, (size_t)(v1 - v0) * sizeof *theta);
        }
}

vs_status vs_subgrad_minimize(const vs_gda_problem *pb, const vs_subgrad_opts *o, float *theta, vs_opt_trace *trace,
                              vs_error *err)
{
    vs_status chk = check_problem(pb, theta, "subgradient", err);
    if (chk != VS_OK) return chk;
    if (!o || o->iters < 0 || !(o->step > 0) || !(o->lo <= o->hi))
        return vs_error_set(err, VS_ERR_ARG, "subgradient: iterations must be >= 0, step > 0 and lo <= hi");
    int64_t B = pb->n_blocks, nv = pb->n_vars, n1 = nv ? nv : 1;
    float *g = malloc((size_t)n1 * sizeof *g), *best_theta = malloc((size_t)n1 * sizeof *best_theta);
    float *obj = malloc((size_t)B * sizeof *obj), *best = malloc((size_t)B * sizeof *best);
    vs_status st = VS_OK;
    if (!g || !best_theta || !obj || !best) st = vs_error_set(err, VS_ERR_NOMEM, "subgradient: out of memory for %lld variables", (long long)nv);
    if (st == VS_OK && trace) st = trace_alloc(trace, B, o->iters, "subgradient", err);
    for (int64_t i = 0; st == VS_OK && i < nv; i++) best_theta[i] = theta[i] = clip(theta[i], o->lo, o->hi);
    for (int64_t b = 0; b < B && best; b++) best[b] = INFINITY;
    for (int it = 0; it < o->iters && st == VS_OK; it++) {
        st = value_grad(pb, theta, NULL, 0, g, obj, it, "subgradient", err);
        if (st != VS_OK) break;
        keep_best(pb, theta, obj, best, best_theta);
        trace_primal(trace, pb, it, obj, g);
        float eta = (float)(o->step / sqrt((double)it + 1));
        for (int64_t i = 0; i < nv; i++) theta[i] = clip(theta[i] - eta * g[i], o->lo, o->hi);
    }
    if (st == VS_OK) st = value_only(pb, theta, obj, "subgradient", err);
    if (st == VS_OK) {
        keep_best(pb, theta, obj, best, best_theta);
        memcpy(theta, best_theta, (size_t)nv * sizeof *theta);
    }
    free(g);
    free(best_theta);
    free(obj);
    free(best);
    if (st != VS_OK && trace) vs_opt_trace_clear(trace);
    return st;
}
