/* cem_maf.c - CEM-MAF's pertinent negatives (Eq. 1): subgradient descent over the VAE's latent code
 * with the attribute-addition hinge, attribute sparsity, the kappa-margin class loss and proximity in
 * input and latent space, under the supplement's c search; the PN is the iterate of another class
 * closest to z0.  Also the options, the result types and the helpers every CEM file shares. */
#include "explain/cem_internal.h"
#include "versus/ops.h"
#include "versus/optimize.h"
#include "versus/vae.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vs_cem_opts_init(vs_cem_opts *o)
{
    *o = (vs_cem_opts){.kappa = 5, .gamma = 100, .beta_pn = 100, .eta = 1, .nu = 1, .beta_pp = 0.1f, .c0 = 1, .searches = 9,
                       .pn_iters = 1000, .pp_iters = 100, .pn_step = 0.002f, .pp_step = 0.01f, .latent_box = 4, .fista = false,
                       .attr_tol = 0.1f};
}

void vs_cem_pn_clear(vs_cem_pn *p)
{
    if (!p) return;
    free(p->z);
    free(p->x);
    free(p->g0);
    free(p->g);
    memset(p, 0, sizeof *p);
}

void vs_cem_pp_clear(vs_cem_pp *p)
{
    if (!p) return;
    free(p->mask);
    free(p->order);
    free(p->x);
    memset(p, 0, sizeof *p);
}

vs_tensor *vs_cem_margin(vs_tensor *logits, const int64_t *t0)
{
    int64_t n = logits->shape[0], C = logits->shape[1];
    vs_tensor *onehot = vs_tensor_zeros(VS_SHAPE(n, C));
    if (!onehot) return NULL;
    for (int64_t i = 0; i < n; i++) onehot->data[i * C + t0[i]] = 1;
    vs_tensor *ft = vs_sum(vs_mul(logits, onehot), VS_AXIS(1), false);
    vs_tensor *other = vs_max(vs_add(logits, vs_mul_scalar(onehot, -1e9f)), VS_AXIS(1), false);
    return vs_sub(ft, other);
}

vs_tensor *vs_cem_hinge(vs_tensor *m, const float *c, float kappa)
{
    int64_t n = m->shape[0];
    vs_tensor *cb = vs_tensor_from(VS_SHAPE(n), c), *floor = vs_tensor_new(VS_SHAPE(n));
    if (!cb || !floor) return NULL;
    for (int64_t i = 0; i < n; i++) floor->data[i] = -kappa;
    return vs_mul(cb, vs_maximum(m, floor));
}

void vs_cem_argmax(const vs_tensor *logits, int64_t *cls)
{
    int64_t n = logits->shape[0], C = logits->ndim == 2 ? logits->shape[1] : 1;
    for (int64_t i = 0; i < n; i++) {
        int64_t best = 0;
        for (int64_t c = 1; c < C; c++)
            if (logits->data[i * C + c] > logits->data[i * C + best]) best = c;
        cls[i] = best;
    }
}

vs_status vs_cem_predict(const vs_model_fn *f, vs_tensor *x, int64_t *cls, vs_error *err)
{
    bool prev = vs_set_grad_enabled(false);
    vs_scope_begin();
    vs_tensor *out = f->forward(f->ctx, x);
    vs_status st = VS_OK;
    if (!out || out->ndim != 2 || out->shape[0] != x->shape[0] || out->shape[1] < 2)
        st = vs_error_set(err, out ? VS_ERR_SHAPE : vs_last_error()->code, "cem: the classifier must give logits [n,C], C >= 2%s%s",
                          out ? "" : ": ", out ? "" : vs_last_error()->msg);
    else
        vs_cem_argmax(out, cls);
    vs_scope_end();
    vs_set_grad_enabled(prev);
    return st;
}

void vs_cem_c_update(float *c, const bool *found, int64_t n)
{
    for (int64_t b = 0; b < n; b++) c[b] = found[b] ? c[b] / 2 : c[b] * 10;
}

/* ---- the PN problem --------------------------------------------------------------------------------- */

typedef struct pn_ctx {
    const vs_model_fn *f;
    const vs_cem_attrs *a;
    const vs_cem_opts *o;
    int64_t N, k, dim, A;
    int ndim;
    const int64_t *shape;     /* one example's shape */
    vs_tensor *x0, *z0, *g0;  /* [N,...], [N,k], [N,A] (kept by the caller's scope) */
    const int64_t *t0;
    float *c;                 /* [N] */
    bool *found;              /* [N] a valid iterate in the current run */
    vs_cem_pn *pn;            /* [N] the best valid iterates so far */
    vs_error *err;
    vs_status st;
} pn_ctx;

/* Keep, for every block of another class than t0, the iterate closest to z0. */
static void pn_observe(pn_ctx *c, const float *z, const vs_tensor *x, const vs_tensor *logits, const vs_tensor *g)
{
    int64_t C = logits->shape[1];
    for (int64_t b = 0; b < c->N; b++) {
        const float *l = logits->data + b * C;
        int64_t cls = 0;
        for (int64_t j = 1; j < C; j++)
            if (l[j] > l[cls]) cls = j;
        if (cls == c->t0[b]) continue;
        c->found[b] = true;
        double d = 0;
        for (int64_t j = 0; j < c->k; j++) d += (double)(z[b * c->k + j] - c->z0->data[b * c->k + j]) * (z[b * c->k + j] - c->z0->data[b * c->k + j]);
        vs_cem_pn *p = &c->pn[b];
        if (p->found && sqrt(d) >= p->latent_dist) continue;
        p->found = true, p->cls = cls, p->latent_dist = (float)sqrt(d), p->c = c->c[b];
        memcpy(p->z, z + b * c->k, (size_t)c->k * sizeof *p->z);
        memcpy(p->x, x->data + b * c->dim, (size_t)c->dim * sizeof *p->x);
        memcpy(p->g, g->data + b * c->A, (size_t)c->A * sizeof *p->g);
    }
}

static vs_tensor *pn_objective(void *ctx, vs_tensor *theta)
{
    pn_ctx *c = ctx;
    const vs_cem_opts *o = c->o;
    vs_tensor *z = vs_reshape(theta, VS_SHAPE(c->N, c->k));
    vs_tensor *x = z ? vs_vae_decode(c->a->vae, z, c->ndim, c->shape, c->err) : NULL;
    vs_tensor *logits = x ? c->f->forward(c->f->ctx, x) : NULL;
    vs_tensor *g = logits ? vs_cem_attrs_eval(c->a, x, z, c->err) : NULL;
    if (!g) {
        if (c->st == VS_OK) c->st = c->err && c->err->code != VS_OK ? c->err->code : vs_error_set(c->err, vs_last_error()->code, "cem pn: %s", vs_last_error()->msg);
        return NULL;
    }
    pn_observe(c, theta->data, x, logits, g);
    vs_tensor *obj = vs_cem_hinge(vs_cem_margin(logits, c->t0), c->c, o->kappa);
    if (c->A > 0) {
        vs_tensor *dg = vs_sub(g, c->g0);
        vs_tensor *hinge = vs_sum(vs_relu(vs_neg(dg)), VS_AXIS(1), false);
        vs_tensor *sparse = vs_sum(vs_abs(dg), VS_AXIS(1), false);
        obj = vs_add(obj, vs_add(vs_mul_scalar(hinge, o->gamma), vs_mul_scalar(sparse, o->beta_pn)));
    }
    vs_tensor *dx = vs_reshape(vs_sub(x, c->x0), VS_SHAPE(c->N, c->dim));
    vs_tensor *dz = vs_sub(z, c->z0);
    obj = vs_add(obj, vs_mul_scalar(vs_sum(vs_mul(dx, dx), VS_AXIS(1), false), o->eta));
    obj = vs_add(obj, vs_mul_scalar(vs_sum(vs_mul(dz, dz), VS_AXIS(1), false), o->nu));
    return obj;
}

/* Allocate the arrays of pn[0..N). */
static vs_status pn_alloc(vs_cem_pn *pn, int64_t N, int64_t k, int64_t dim, int64_t A, vs_error *err)
{
    for (int64_t b = 0; b < N; b++) {
        vs_cem_pn *p = &pn[b];
        memset(p, 0, sizeof *p);
        p->k = k, p->dim = dim, p->n_attrs = A;
        p->z = malloc((size_t)k * sizeof *p->z);
        p->x = malloc((size_t)dim * sizeof *p->x);
        p->g0 = malloc((size_t)(A ? A : 1) * sizeof *p->g0);
        p->g = malloc((size_t)(A ? A : 1) * sizeof *p->g);
        if (!p->z || !p->x || !p->g0 || !p->g) return vs_error_set(err, VS_ERR_NOMEM, "cem pn: out of memory");
    }
    return VS_OK;
}

vs_status vs_cem_maf_pn(const vs_model_fn *f, const vs_cem_attrs *a, vs_tensor *x0, const vs_cem_opts *o, vs_cem_pn *pn,
                        vs_error *err)
{
    if (!f || !a || !a->vae || !x0 || !o || !pn || x0->ndim < 2)
        return vs_error_set(err, VS_ERR_ARG, "cem pn: a classifier, attributes with a VAE, images x0 [N,...], options and results are required");
    if (o->searches < 1 || o->pn_iters < 1 || !(o->pn_step > 0) || !(o->c0 > 0) || !(o->latent_box > 0))
        return vs_error_set(err, VS_ERR_ARG, "cem pn: searches, iterations, step, c0 and the latent box must be positive");
    int64_t N = x0->shape[0], dim = x0->size / N, A = a->n;
    int64_t *t0 = malloc((size_t)N * sizeof *t0), *cls0 = malloc((size_t)N * sizeof *cls0);
    float *c = malloc((size_t)N * sizeof *c), *theta = NULL;
    bool *found = calloc((size_t)N, sizeof *found);
    memset(pn, 0, (size_t)N * sizeof *pn);
    vs_status st = !t0 || !cls0 || !c || !found ? vs_error_set(err, VS_ERR_NOMEM, "cem pn: out of memory") : VS_OK;
    vs_scope_begin();
    bool prev = vs_set_grad_enabled(false);
    vs_tensor *z0 = NULL, *g0 = NULL, *r0 = NULL;
    if (st == VS_OK) st = vs_cem_predict(f, x0, t0, err);
    if (st == VS_OK && !(z0 = vs_vae_encode(a->vae, x0, err))) st = err ? err->code : VS_ERR_ARG;
    if (st == VS_OK && !(g0 = vs_cem_attrs_eval(a, x0, z0, err))) st = err ? err->code : VS_ERR_ARG;
    if (st == VS_OK && !(r0 = vs_vae_decode(a->vae, z0, x0->ndim - 1, x0->shape + 1, err))) st = err ? err->code : VS_ERR_ARG;
    if (st == VS_OK) st = vs_cem_predict(f, r0, cls0, err);
    vs_set_grad_enabled(prev);
    int64_t k = z0 ? z0->shape[1] : 0;
    if (st == VS_OK) st = pn_alloc(pn, N, k, dim, A, err);
    if (st == VS_OK && !(theta = malloc((size_t)(N * k) * sizeof *theta))) st = vs_error_set(err, VS_ERR_NOMEM, "cem pn: out of memory");
    int64_t *var_off = st == VS_OK ? malloc((size_t)(N + 1) * sizeof *var_off) : NULL;
    if (st == VS_OK && !var_off) st = vs_error_set(err, VS_ERR_NOMEM, "cem pn: out of memory");
    for (int64_t b = 0; st == VS_OK && b <= N; b++) var_off[b] = b * k;
    for (int64_t b = 0; st == VS_OK && b < N; b++) {
        c[b] = o->c0;
        pn[b].t0 = pn[b].cls = t0[b];
        pn[b].recon_flips = cls0[b] != t0[b];
        memcpy(pn[b].g0, g0->data + b * A, (size_t)A * sizeof(float));
    }
    pn_ctx ctx = {.f = f, .a = a, .o = o, .N = N, .k = k, .dim = dim, .A = A, .ndim = x0->ndim - 1, .shape = x0->shape + 1,
                  .x0 = x0, .z0 = z0, .g0 = g0, .t0 = t0, .c = c, .found = found, .pn = pn, .err = err};
    vs_gda_problem pb = {.n_vars = N * k, .n_blocks = N, .var_off = var_off, .objective = pn_objective, .ctx = &ctx};
    vs_subgrad_opts so;
    vs_subgrad_opts_init(&so);
    so.iters = o->pn_iters, so.step = o->pn_step, so.lo = -o->latent_box, so.hi = o->latent_box;
    for (int s = 0; st == VS_OK && s < o->searches; s++) {
        memcpy(theta, z0->data, (size_t)(N * k) * sizeof *theta);
        memset(found, 0, (size_t)N * sizeof *found);
        st = vs_subgrad_minimize(&pb, &so, theta, NULL, err);
        if (ctx.st != VS_OK) st = ctx.st;
        vs_cem_c_update(c, found, N);
    }
    for (int64_t b = 0; st == VS_OK && b < N; b++) {
        vs_cem_pn *p = &pn[b];
        if (!p->found) {
            memcpy(p->z, z0->data + b * k, (size_t)k * sizeof *p->z);
            memcpy(p->x, r0->data + b * dim, (size_t)dim * sizeof *p->x);
            memcpy(p->g, p->g0, (size_t)A * sizeof *p->g);
        }
        for (int64_t i = 0; i < A; i++) p->violations += p->g[i] < p->g0[i] - o->attr_tol;
    }
    vs_scope_end();
    if (st != VS_OK)
        for (int64_t b = 0; b < N; b++) vs_cem_pn_clear(&pn[b]);
    free(t0);
    free(cls0);
    free(c);
    free(found);
    free(theta);
    free(var_off);
    return st;
}
