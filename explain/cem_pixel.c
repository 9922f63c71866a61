/* cem_pixel.c - the original CEM (Dhurandhar et al. 2018) in pixel space for grayscale images in
 * [0,1]: PN x0 + (1 - x0) d (only additions) and PP x0 d (only removals), d in [0,1] by FISTA on
 * the kappa-margin loss and the elastic net beta |d|_1 + |d|^2, with the c search; and the two
 * registry methods "cem_pn" (contrastive example) and "cem_pp" (the CEM-MAF PP mask without
 * attributes, on segments or pixels). */
#include "explain/cem_internal.h"
#include "explain/internal.h"
#include "versus/ops.h"
#include "versus/optimize.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct pix_ctx {
    const vs_model_fn *f;
    bool pn;
    int64_t N, dim;
    float kappa, beta;
    vs_tensor *x0;
    const int64_t *t0;
    float *c;
    bool *found;
    float *best_en;     /* [N] elastic net of the best valid d */
    float *best;        /* [N*dim] */
    int64_t *cls;       /* [N] class of the best */
    vs_status st;
    vs_error *err;
} pix_ctx;

static void pix_observe(pix_ctx *c, const float *d, const vs_tensor *logits)
{
    int64_t C = logits->shape[1];
    for (int64_t b = 0; b < c->N; b++) {
        const float *l = logits->data + b * C;
        int64_t cls = 0;
        for (int64_t j = 1; j < C; j++)
            if (l[j] > l[cls]) cls = j;
        if ((cls != c->t0[b]) != c->pn) continue;
        double en = 0;
        bool inside = true;
        for (int64_t p = 0; p < c->dim; p++) {
            float v = d[b * c->dim + p];
            en += c->beta * fabsf(v) + v * v;
            inside &= v >= 0 && v <= 1;
        }
        if (!inside) continue;
        c->found[b] = true;
        if (en >= c->best_en[b]) continue;
        c->best_en[b] = (float)en, c->cls[b] = cls;
        memcpy(c->best + b * c->dim, d + b * c->dim, (size_t)c->dim * sizeof *d);
    }
}

/* The image of d: x0 + (1 - x0) d (PN) or x0 d (PP). */
static vs_tensor *pix_image(const pix_ctx *c, vs_tensor *d)
{
    return c->pn ? vs_add(c->x0, vs_mul(vs_add_scalar(vs_neg(c->x0), 1), d)) : vs_mul(c->x0, d);
}

static vs_tensor *pix_objective(void *ctx, vs_tensor *theta)
{
    pix_ctx *c = ctx;
    vs_tensor *d = vs_reshape(theta, c->x0->ndim, c->x0->shape);
    vs_tensor *logits = d ? c->f->forward(c->f->ctx, pix_image(c, d)) : NULL;
    vs_tensor *m = logits ? vs_cem_margin(logits, c->t0) : NULL;
    if (!m) {
        if (c->st == VS_OK) c->st = vs_error_set(c->err, vs_last_error()->code, "cem: %s", vs_last_error()->msg);
        return NULL;
    }
    pix_observe(c, theta->data, logits);
    vs_tensor *flat = vs_reshape(theta, VS_SHAPE(c->N, c->dim));
    return vs_add(vs_cem_hinge(c->pn ? m : vs_neg(m), c->c, c->kappa), vs_sum(vs_mul(flat, flat), VS_AXIS(1), false));
}

vs_status vs_cem_pixel(const vs_model_fn *f, vs_tensor *x0, bool pertinent_negative, const vs_cem_opts *o, float *out, int64_t *cls,
                       vs_error *err)
{
    if (!f || !x0 || !o || !out || x0->ndim < 2) return vs_error_set(err, VS_ERR_ARG, "cem: a classifier, images x0 [N,...], options and out are required");
    if (o->searches < 1 || o->pp_iters < 1 || !(o->pp_step > 0) || !(o->c0 > 0))
        return vs_error_set(err, VS_ERR_ARG, "cem: searches, iterations, step and c0 must be positive");
    int64_t N = x0->shape[0], dim = x0->size / N;
    int64_t *t0 = malloc((size_t)N * sizeof *t0), *bcls = malloc((size_t)N * sizeof *bcls), *var_off = malloc((size_t)(N + 1) * sizeof *var_off);
    float *c = malloc((size_t)N * sizeof *c), *best_en = malloc((size_t)N * sizeof *best_en);
    float *theta = calloc((size_t)(N * dim), sizeof *theta), *best = calloc((size_t)(N * dim), sizeof *best);
    bool *found = calloc((size_t)N, sizeof *found);
    vs_status st = !t0 || !bcls || !var_off || !c || !best_en || !theta || !best || !found ? vs_error_set(err, VS_ERR_NOMEM, "cem: out of memory") : VS_OK;
    if (st == VS_OK) st = vs_cem_predict(f, x0, t0, err);
    for (int64_t b = 0; st == VS_OK && b <= N; b++) {
        var_off[b] = b * dim;
        if (b < N) c[b] = o->c0, best_en[b] = INFINITY, bcls[b] = t0[b];
    }
    pix_ctx ctx = {.f = f, .pn = pertinent_negative, .N = N, .dim = dim, .kappa = o->kappa, .beta = o->beta_pp, .x0 = x0, .t0 = t0, .c = c,
                   .found = found, .best_en = best_en, .best = best, .cls = bcls, .err = err};
    vs_gda_problem pb = {.n_vars = N * dim, .n_blocks = N, .var_off = var_off, .objective = pix_objective, .ctx = &ctx};
    vs_prox_opts po;
    vs_prox_opts_init(&po);
    po.iters = o->pp_iters, po.step = o->pp_step, po.l1 = o->beta_pp, po.lo = 0, po.hi = 1, po.accelerate = true, po.tol = 0;
    for (int s = 0; st == VS_OK && s < o->searches; s++) {
        memset(theta, 0, (size_t)(N * dim) * sizeof *theta);
        memset(found, 0, (size_t)N * sizeof *found);
        vs_scope_begin();
        st = vs_prox_minimize(&pb, &po, theta, NULL, NULL, err);
        vs_scope_end();
        if (ctx.st != VS_OK) st = ctx.st;
        vs_cem_c_update(c, found, N);
    }
    if (st == VS_OK) {
        /* no valid d: the PN is x0 itself (nothing added), the PP the whole image */
        for (int64_t b = 0; b < N; b++)
            if (isinf(best_en[b])) {
                for (int64_t p = 0; p < dim; p++) best[b * dim + p] = pertinent_negative ? 0 : 1;
            }
        for (int64_t i = 0; i < N * dim; i++) out[i] = pertinent_negative ? x0->data[i] + (1 - x0->data[i]) * best[i] : x0->data[i] * best[i];
        if (cls) memcpy(cls, bcls, (size_t)N * sizeof *cls);
    }
    free(t0);
    free(bcls);
    free(var_off);
    free(c);
    free(best_en);
    free(theta);
    free(best);
    free(found);
    return st;
}

/* ---- the registry's methods ----------------------------------------------------------------------- */

typedef struct cem_method_opts {
    float kappa, beta, c0, step;
    int searches, iters;
} cem_method_opts;

static void cem_pn_defaults(void *o) { *(cem_method_opts *)o = (cem_method_opts){5, 0.1f, 1, 0.01f, 9, 100}; }
static void cem_pp_defaults(void *o) { *(cem_method_opts *)o = (cem_method_opts){5, 0.1f, 1, 0.01f, 9, 100}; }

static void to_cem_opts(const cem_method_opts *m, vs_cem_opts *o)
{
    vs_cem_opts_init(o);
    o->kappa = m->kappa, o->beta_pp = m->beta, o->c0 = m->c0, o->pp_step = m->step, o->searches = m->searches, o->pp_iters = m->iters;
}

static vs_status cem_pn_run(vs_attr_job *j, const void *opts, float *out)
{
    vs_cem_opts o;
    to_cem_opts(opts, &o);
    return vs_cem_pixel(j->m, j->x, true, &o, out, NULL, j->err);
}

static vs_status cem_pp_run(vs_attr_job *j, const void *opts, float *out)
{
    vs_cem_opts o;
    to_cem_opts(opts, &o);
    vs_cem_pp pp;
    vs_status st = vs_cem_maf_pp(j->m, NULL, j->x, j->r->segments, &o, &pp, j->err);
    if (st != VS_OK) return st;
    uint8_t *keep = calloc((size_t)pp.n_segments, 1);
    if (!keep) st = vs_error_set(j->err, VS_ERR_NOMEM, "cem_pp: out of memory");
    for (int64_t k = 0; keep && k < pp.n_features; k++) keep[pp.order[k]] = 1;
    for (int64_t p = 0; keep && p < j->dim; p++) out[p] = keep[j->r->segments ? j->r->segments[p] : p];
    free(keep);
    vs_cem_pp_clear(&pp);
    return st;
}

static const vs_method_param cem_params[] = {
    {"kappa", VS_PARAM_FLOAT, offsetof(cem_method_opts, kappa), 0, 1e6, NULL, "margin of the class loss"},
    {"beta", VS_PARAM_FLOAT, offsetof(cem_method_opts, beta), 0, 1e6, NULL, "L1 weight (elastic net / mask sparsity)"},
    {"c0", VS_PARAM_FLOAT, offsetof(cem_method_opts, c0), 1e-6, 1e9, NULL, "first c of the search (x10 without a result, /2 with one)"},
    {"step", VS_PARAM_FLOAT, offsetof(cem_method_opts, step), 1e-9, 1e6, NULL, "ISTA/FISTA step size"},
    {"searches", VS_PARAM_INT, offsetof(cem_method_opts, searches), 1, 1000, NULL, "runs of the c search"},
    {"iters", VS_PARAM_INT, offsetof(cem_method_opts, iters), 1, 1000000, NULL, "iterations per run"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

const vs_method vs_method_cem_pn = {
    "cem_pn", "pertinent negative in pixel space: the least addition x0 + (1-x0) d that changes the class (Dhurandhar et al. 2018)",
    VS_OUTPUT_CONTRASTIVE, 0, sizeof(cem_method_opts), cem_pn_defaults, cem_params, cem_pn_run,
    VS_METHOD_ATTRIBUTION, NULL,
};

const vs_method vs_method_cem_pp = {
    "cem_pp", "pertinent positive mask: ISTA on a [0,1] mask over segments, then segments added until the class returns (CEM-MAF Eq. 2)",
    VS_OUTPUT_MASK, VS_METHOD_SEGMENTS, sizeof(cem_method_opts), cem_pp_defaults, cem_params, cem_pp_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
