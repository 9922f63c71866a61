/* optim.c - SGD (momentum, Nesterov, weight decay), Adam and AdamW following PyTorch's
 * single-tensor implementations line by line, with their state held as named tensors.  Each update
 * is one flat loop over a parameter's floats with restrict pointers, written for the vectoriser. */
#include "nn/internal.h"
#include "autograd/kernels.h"
#include "versus/optim.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vs_optim {
    vs_optim_opts o;
    int64_t n;
    vs_tensor **params; /* borrowed */
    char **names;
    vs_tensor **step;   /* 0-d step counts (float, exact up to 2^24 steps) */
    vs_tensor **m;      /* SGD momentum buffer / Adam first moment, or NULL entries */
    vs_tensor **v;      /* Adam second moment, or NULL entries */
};

vs_optim_opts vs_sgd_opts(float lr) { return (vs_optim_opts){.kind = VS_OPTIM_SGD, .lr = lr}; }

vs_optim_opts vs_adam_opts(float lr)
{
    return (vs_optim_opts){.kind = VS_OPTIM_ADAM, .lr = lr, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f};
}

vs_optim_opts vs_adamw_opts(float lr)
{
    vs_optim_opts o = vs_adam_opts(lr);
    o.kind = VS_OPTIM_ADAMW;
    o.weight_decay = 0.01f;
    return o;
}

static const char *kind_prefix(vs_optim_kind k) { return k == VS_OPTIM_SGD ? "sgd" : k == VS_OPTIM_ADAM ? "adam" : "adamw"; }

static vs_status check_opts(const vs_optim_opts *o, vs_error *err)
{
    if (o->kind != VS_OPTIM_SGD && o->kind != VS_OPTIM_ADAM && o->kind != VS_OPTIM_ADAMW)
        return vs_error_set(err, VS_ERR_ARG, "optimizer: unknown kind %d", (int)o->kind);
    const char *k = kind_prefix(o->kind);
    if (!(o->lr >= 0 && isfinite(o->lr))) return vs_error_set(err, VS_ERR_ARG, "%s: learning rate %g must be >= 0", k, o->lr);
    if (!(o->weight_decay >= 0 && isfinite(o->weight_decay)))
        return vs_error_set(err, VS_ERR_ARG, "%s: weight decay %g must be >= 0", k, o->weight_decay);
    if (o->kind == VS_OPTIM_SGD) {
        if (!(o->momentum >= 0 && isfinite(o->momentum)))
            return vs_error_set(err, VS_ERR_ARG, "sgd: momentum %g must be >= 0", o->momentum);
        if (!(o->dampening >= 0 && o->dampening <= 1))
            return vs_error_set(err, VS_ERR_ARG, "sgd: dampening %g must be in [0, 1]", o->dampening);
        if (o->nesterov && (o->momentum <= 0 || o->dampening != 0))
            return vs_error_set(err, VS_ERR_ARG, "sgd: Nesterov momentum requires momentum > 0 and zero dampening");
    } else {
        if (!(o->beta1 >= 0 && o->beta1 < 1) || !(o->beta2 >= 0 && o->beta2 < 1))
            return vs_error_set(err, VS_ERR_ARG, "%s: betas (%g, %g) must be in [0, 1)", k, o->beta1, o->beta2);
        if (!(o->eps >= 0 && isfinite(o->eps))) return vs_error_set(err, VS_ERR_ARG, "%s: eps %g must be >= 0", k, o->eps);
    }
    return VS_OK;
}

void vs_optim_free(vs_optim *o)
{
    if (!o) return;
    for (int64_t i = 0; i < o->n; i++) {
        if (o->names) free(o->names[i]);
        if (o->step) vs_tensor_free(o->step[i]);
        if (o->m) vs_tensor_free(o->m[i]);
        if (o->v) vs_tensor_free(o->v[i]);
    }
    free(o->params);
    free(o->names);
    free(o->step);
    free(o->m);
    free(o->v);
    free(o);
}

static vs_tensor *state_like(const vs_tensor *p)
{
    bool prev = vs_set_grad_enabled(false);
    vs_tensor *t = vs_nn_owned(vs_tensor_zeros(p->ndim, p->shape));
    vs_set_grad_enabled(prev);
    return t;
}

vs_optim *vs_optim_new(const vs_optim_opts *opts, int64_t n, vs_tensor *const *params, const char *const *names,
                       vs_error *err)
{
    if (check_opts(opts, err) != VS_OK) return NULL;
    if (n < 0) {
        vs_error_set(err, VS_ERR_ARG, "optimizer: negative parameter count");
        return NULL;
    }
    vs_optim *o = calloc(1, sizeof *o);
    size_t cnt = (size_t)(n ? n : 1);
    if (o) {
        o->o = *opts;
        o->n = n;
        o->params = calloc(cnt, sizeof *o->params);
        o->names = calloc(cnt, sizeof *o->names);
        o->step = calloc(cnt, sizeof *o->step);
        o->m = calloc(cnt, sizeof *o->m);
        o->v = calloc(cnt, sizeof *o->v);
    }
    bool ok = o && o->params && o->names && o->step && o->m && o->v;
    bool momentum = opts->kind != VS_OPTIM_SGD || opts->momentum != 0;
    for (int64_t i = 0; ok && i < n; i++) {
        if (!params[i]) {
            vs_error_set(err, VS_ERR_ARG, "optimizer: parameter %lld is NULL", (long long)i);
            vs_optim_free(o);
            return NULL;
        }
        o->params[i] = params[i];
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", (long long)i);
        o->names[i] = strdup(names ? names[i] : buf);
        bool prev = vs_set_grad_enabled(false);
        o->step[i] = vs_nn_owned(vs_scalar(0.0f));
        vs_set_grad_enabled(prev);
        if (momentum) o->m[i] = state_like(params[i]);
        if (opts->kind != VS_OPTIM_SGD) o->v[i] = state_like(params[i]);
        ok = o->names[i] && o->step[i] && (!momentum || o->m[i]) && (opts->kind == VS_OPTIM_SGD || o->v[i]);
    }
    if (!ok) {
        vs_optim_free(o);
        vs_error_set(err, VS_ERR_NOMEM, "optimizer: out of memory");
        return NULL;
    }
    return o;
}

vs_optim *vs_optim_new_module(const vs_optim_opts *opts, vs_module *m, vs_error *err)
{
    vs_named_tensors l = {0};
    if (vs_module_named_tensors(m, VS_STATE_PARAMS, &l) != VS_OK) {
        vs_named_tensors_clear(&l);
        vs_error_set(err, VS_ERR_NOMEM, "optimizer: out of memory");
        return NULL;
    }
    vs_tensor **p = malloc((size_t)(l.n ? l.n : 1) * sizeof *p);
    const char **nm = malloc((size_t)(l.n ? l.n : 1) * sizeof *nm);
    vs_optim *o = NULL;
    if (p && nm) {
        for (int64_t i = 0; i < l.n; i++) {
            p[i] = l.items[i].tensor;
            nm[i] = l.items[i].name;
        }
        o = vs_optim_new(opts, l.n, p, nm, err);
    } else {
        vs_error_set(err, VS_ERR_NOMEM, "optimizer: out of memory");
    }
    free(p);
    free(nm);
    vs_named_tensors_clear(&l);
    return o;
}

/* ---- updates -------------------------------------------------------------------------------------- */

/* The update loops are flat loops over restrict pointers with every option tested outside them,
 * so GCC vectorises them (the AVX2 clone runs 8 floats at a time, sqrt and division included).  The
 * source is ISO C, so no a*b+c is contracted: each element gets exactly the scalar formula's value
 * in either build. */

/* Index of the first non-finite element of g[0, n), or n when all are finite.  A float is finite
 * exactly when its bits without the sign are below those of infinity (0x7f800000), so one running
 * integer maximum over the bit patterns decides it (a max has a one-cycle latency: the vectorised
 * loop runs at the speed of the loads); only when it fails is the index looked for. */
VS_VECTOR_CLONES512 static int64_t first_nonfinite(const float *restrict g, int64_t n)
{
    uint32_t top = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &g[i], sizeof u);
        u &= 0x7fffffffu;
        top = u > top ? u : top;
    }
    if (top < 0x7f800000u) return n;
    int64_t i = 0;
    while (i < n && isfinite(g[i])) i++;
    return i;
}

/* p -= lr (g + wd p), the plain SGD step. */
VS_VECTOR_CLONES static void sgd_plain(float *restrict p, const float *restrict g, int64_t n, float lr, float wd)
{
    for (int64_t i = 0; i < n; i++) p[i] -= lr * (g[i] + wd * p[i]);
}

/* b = mom b + keep (g + wd p), or b = g + wd p on the first step (PyTorch starts the buffer at the
 * first gradient, undamped); then p -= lr ((g + wd p) + mom b) with Nesterov, else p -= lr b. */
VS_VECTOR_CLONES static void sgd_momentum(float *restrict p, const float *restrict g, float *restrict b, int64_t n,
                                          float lr, float wd, float mom, float keep, bool first, bool nesterov)
{
    if (first)
        for (int64_t i = 0; i < n; i++) b[i] = g[i] + wd * p[i];
    else
        for (int64_t i = 0; i < n; i++) b[i] = mom * b[i] + keep * (g[i] + wd * p[i]);
    if (nesterov)
        for (int64_t i = 0; i < n; i++) p[i] -= lr * ((g[i] + wd * p[i]) + mom * b[i]);
    else
        for (int64_t i = 0; i < n; i++) p[i] -= lr * b[i];
}

static void sgd_update(float *restrict p, const float *restrict g, float *restrict b, int64_t n, const vs_optim_opts *o,
                       bool first)
{
    if (!b)
        sgd_plain(p, g, n, o->lr, o->weight_decay);
    else
        sgd_momentum(p, g, b, n, o->lr, o->weight_decay, o->momentum, 1.0f - o->dampening, first, o->nesterov);
}

/* Scalar factors of one Adam step. */
typedef struct adam_coef {
    float shrink;    /* AdamW's decoupled decay: p *= shrink first (1: none) */
    float wd;        /* Adam's L2 term: g + wd p */
    float w1, b2, w2, step_size, inv_bc2_sqrt, eps;
} adam_coef;

/* One Adam/AdamW step over n floats:
 *   g' = g + wd p;  m = lerp(m, g', w1);  v = b2 v + w2 g'^2;  p -= (step_size m) / (sqrt(v) inv_bc2_sqrt + eps).
 * PyTorch divides sqrt(v) by sqrt(bc2); multiplying by the reciprocal instead (rounded once from
 * double) leaves one division per element, which halves the time of a loop that was bound by the
 * divider (sqrt and two divisions per 8 floats), and moves the denominator by at most an ulp or
 * so (tests/test_optim.c holds the update to 2 ulps of the exact one).  The numerator is formed as
 * PyTorch's addcdiv forms it, value * m first.  torch.lerp(m, g, w) is m + w (g - m) for w < 0.5
 * and g - (g - m)(1 - w) otherwise; the two forms are two copies of the loop, so the choice is not
 * made per element.  The AVX-512 clone: on Zen 5 (full-width zmm) the MLP training steps 2-5% faster
 * at 1 thread than with the AVX2 one (on Zen 4, which splits zmm operations, no faster). */
VS_VECTOR_CLONES512 static void adam_loop(float *restrict p, const float *restrict g, float *restrict m, float *restrict v,
                                       int64_t n, adam_coef c)
{
    const float wd = c.wd, w1 = c.w1, w1c = 1.0f - c.w1, b2 = c.b2, w2 = c.w2, step_size = c.step_size,
                inv_bc2_sqrt = c.inv_bc2_sqrt, eps = c.eps;
    if (c.shrink != 1.0f)
        for (int64_t i = 0; i < n; i++) p[i] *= c.shrink;
    if (w1 < 0.5f) {
        for (int64_t i = 0; i < n; i++) {
            const float gi = g[i] + wd * p[i];
            const float mi = m[i] + w1 * (gi - m[i]), vi = v[i] * b2 + w2 * gi * gi;
            m[i] = mi;
            v[i] = vi;
            p[i] -= step_size * mi / (sqrtf(vi) * inv_bc2_sqrt + eps);
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            const float gi = g[i] + wd * p[i];
            const float mi = gi - (gi - m[i]) * w1c, vi = v[i] * b2 + w2 * gi * gi;
            m[i] = mi;
            v[i] = vi;
            p[i] -= step_size * mi / (sqrtf(vi) * inv_bc2_sqrt + eps);
        }
    }
}

typedef struct adam_job {
    float *p, *m, *v;
    const float *g;
    adam_coef c;
} adam_job;

static void adam_chunk(void *ctx, int64_t begin, int64_t end)
{
    const adam_job *j = ctx;
    adam_loop(j->p + begin, j->g + begin, j->m + begin, j->v + begin, end - begin, j->c);
}

/* Elements per chunk of a threaded update: each element's update is independent of the others,
 * so the result is the same for any number of threads. */
#define OPTIM_GRAIN 65536

/* Adam / AdamW; the scalar factors are computed in double as PyTorch does in Python. */
static void adam_update(float *restrict p, const float *restrict g, float *restrict m, float *restrict v, int64_t n,
                        const vs_optim_opts *o, double step)
{
    const bool adamw = o->kind == VS_OPTIM_ADAMW;
    const double bc1 = 1.0 - pow((double)o->beta1, step), bc2 = 1.0 - pow((double)o->beta2, step);
    adam_coef c = {
        .shrink = adamw && o->weight_decay != 0 ? (float)(1.0 - (double)o->lr * (double)o->weight_decay) : 1.0f,
        .wd = adamw ? 0.0f : o->weight_decay,
        .w1 = (float)(1.0 - (double)o->beta1),
        .b2 = o->beta2,
        .w2 = (float)(1.0 - (double)o->beta2),
        .step_size = (float)((double)o->lr / bc1),
        .inv_bc2_sqrt = (float)(1.0 / sqrt(bc2)),
        .eps = o->eps,
    };
    if (n < 2 * OPTIM_GRAIN) {
        adam_loop(p, g, m, v, n, c);
        return;
    }
    adam_job j = {p, m, v, g, c};
    vs_parallel_for(n, OPTIM_GRAIN, adam_chunk, &j);
}

vs_status vs_optim_step(vs_optim *o, vs_error *err)
{
    for (int64_t i = 0; i < o->n; i++) {
        const vs_tensor *p = o->params[i], *g = p->grad;
        if (!g) continue;
        if (g->size != p->size)
            return vs_error_set(err, VS_ERR_SHAPE, "optimizer: gradient of %s has %lld elements, the parameter %lld",
                                o->names[i], (long long)g->size, (long long)p->size);
        const int64_t k = first_nonfinite(g->data, g->size);
        if (k < g->size)
            return vs_error_set(err, VS_ERR_NUMERIC, "optimizer: gradient of %s is not finite at element %lld",
                                o->names[i], (long long)k);
    }
    for (int64_t i = 0; i < o->n; i++) {
        vs_tensor *p = o->params[i];
        if (!p->grad) continue;
        float *step = o->step[i]->data;
        *step += 1.0f;
        if (o->o.kind == VS_OPTIM_SGD)
            sgd_update(p->data, p->grad->data, o->m[i] ? o->m[i]->data : NULL, p->size, &o->o, *step == 1.0f);
        else
            adam_update(p->data, p->grad->data, o->m[i]->data, o->v[i]->data, p->size, &o->o, (double)*step);
    }
    return VS_OK;
}

void vs_optim_zero_grad(vs_optim *o)
{
    for (int64_t i = 0; i < o->n; i++) vs_zero_grad(o->params[i]);
}

void vs_optim_set_lr(vs_optim *o, float lr) { o->o.lr = lr; }
float vs_optim_lr(const vs_optim *o) { return o->o.lr; }

vs_status vs_optim_state(const vs_optim *o, vs_named_tensors *out)
{
    const char *k = kind_prefix(o->o.kind);
    const char *mname = o->o.kind == VS_OPTIM_SGD ? "momentum" : "m";
    vs_status st = VS_OK;
    for (int64_t i = 0; i < o->n && st == VS_OK; i++) {
        const struct {
            const char *slot;
            vs_tensor *t;
        } slots[3] = {{"step", o->step[i]}, {mname, o->m[i]}, {"v", o->v[i]}};
        for (int s = 0; s < 3 && st == VS_OK; s++) {
            if (!slots[s].t) continue;
            size_t len = strlen(k) + strlen(slots[s].slot) + strlen(o->names[i]) + 3;
            char *name = malloc(len);
            if (!name) return vs_set_last_error(VS_ERR_NOMEM, "optimizer state: out of memory");
            snprintf(name, len, "%s.%s.%s", k, slots[s].slot, o->names[i]);
            st = vs_named_tensors_push(out, name, slots[s].t, true);
            free(name);
        }
    }
    return st;
}

float vs_optim_clip_grad_norm(vs_optim *o, float max_norm) { return vs_clip_grad_norm(o->n, o->params, max_norm); }
