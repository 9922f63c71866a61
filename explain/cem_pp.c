/* cem_pp.c - CEM-MAF's pertinent positives (Eq. 2): a real-valued mask in [0,1] on superpixels (or
 * pixels) optimised by ISTA/FISTA with the attribute hinge and the kappa-margin class loss under the
 * c search, then superpixels added in decreasing mask order until the class is restored; and the
 * prefix scores and PP correlation of Tables 1 and 6. */
#include "explain/cem_internal.h"
#include "versus/ops.h"
#include "versus/optimize.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX_CHUNK 64

/* ---- prefixes of a feature order ------------------------------------------------------------------ */

vs_status vs_cem_prefixes(const vs_model_fn *f, const float *x0, int ndim, const int64_t *shape, const int32_t *segments,
                          const int32_t *order, int64_t n_order, int64_t t0, bool stop_first, float *scores, int64_t *first_ok,
                          vs_error *err)
{
    int64_t dim = 1;
    for (int i = 0; i < ndim; i++) dim *= shape[i];
    if (first_ok) *first_ok = 0;
    int64_t n_seg = 0;
    for (int64_t p = 0; p < dim; p++) n_seg = (segments ? segments[p] : p) + 1 > n_seg ? (segments ? segments[p] : p) + 1 : n_seg;
    uint8_t *keep = calloc((size_t)(n_seg ? n_seg : 1), 1);
    if (!keep) return vs_error_set(err, VS_ERR_NOMEM, "cem: out of memory");
    vs_status st = VS_OK;
    bool prev = vs_set_grad_enabled(false), done = false;
    for (int64_t k0 = 0; k0 < n_order && st == VS_OK && !done; k0 += PREFIX_CHUNK) {
        int64_t nb = n_order - k0 < PREFIX_CHUNK ? n_order - k0 : PREFIX_CHUNK;
        vs_scope_begin();
        int64_t s[VS_MAX_DIMS + 1] = {nb};
        for (int i = 0; i < ndim; i++) s[i + 1] = shape[i];
        vs_tensor *x = vs_tensor_zeros(ndim + 1, s);
        if (!x) st = vs_error_set(err, VS_ERR_NOMEM, "cem: out of memory");
        for (int64_t r = 0; st == VS_OK && r < nb; r++) {
            int32_t seg = order[k0 + r];
            if (seg >= 0 && seg < n_seg) keep[seg] = 1;
            for (int64_t p = 0; p < dim; p++)
                if (keep[segments ? segments[p] : p]) x->data[r * dim + p] = x0[p];
        }
        vs_tensor *out = st == VS_OK ? f->forward(f->ctx, x) : NULL;
        vs_tensor *prob = out ? vs_softmax(out, 1) : NULL;
        if (st == VS_OK && (!prob || prob->ndim != 2 || t0 >= prob->shape[1]))
            st = vs_error_set(err, VS_ERR_SHAPE, "cem: the classifier failed on masked inputs%s%s", prob ? "" : ": ", prob ? "" : vs_last_error()->msg);
        for (int64_t r = 0; st == VS_OK && r < nb; r++) {
            const float *l = prob->data + r * prob->shape[1];
            scores[k0 + r] = l[t0];
            int64_t cls = 0;
            for (int64_t j = 1; j < prob->shape[1]; j++)
                if (l[j] > l[cls]) cls = j;
            if (cls == t0 && first_ok && *first_ok == 0) *first_ok = k0 + r + 1;
        }
        done = stop_first && first_ok && *first_ok > 0;
        vs_scope_end();
    }
    vs_set_grad_enabled(prev);
    free(keep);
    return st;
}

vs_status vs_cem_prefix_scores(const vs_model_fn *f, const float *x0, int ndim, const int64_t *shape, const int32_t *segments,
                               const int32_t *order, int64_t n_order, int64_t t0, float *scores, int64_t *first_ok, vs_error *err)
{
    return vs_cem_prefixes(f, x0, ndim, shape, segments, order, n_order, t0, false, scores, first_ok, err);
}

/* Ranks 1..n of v (1 = largest), ties averaged. */
static void ranks_desc(const float *v, int64_t n, double *rank)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t above = 0, same = 0;
        for (int64_t j = 0; j < n; j++) above += v[j] > v[i], same += v[j] == v[i];
        rank[i] = (double)above + (double)(same + 1) / 2.0;
    }
}

double vs_cem_pp_correlation(const float *scores, int64_t n)
{
    if (n < 3) return NAN;
    double *r = malloc((size_t)n * sizeof *r);
    if (!r) return NAN;
    ranks_desc(scores, n, r);
    double mr = 0, mk = (double)(n + 1) / 2.0;
    for (int64_t i = 0; i < n; i++) mr += r[i] / (double)n;
    double sxy = 0, sxx = 0, syy = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = (double)(i + 1) - mk, b = r[i] - mr;
        sxy += a * b, sxx += a * a, syy += b * b;
    }
    free(r);
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : NAN;
}

/* ---- the PP problem ----------------------------------------------------------------------------------- */

typedef struct pp_ctx {
    const vs_model_fn *f;
    const vs_cem_attrs *a;      /* NULL or none: no attribute term */
    const vs_cem_opts *o;
    int64_t N, dim, A;
    const int64_t *var_off;     /* [N+1] */
    const int64_t *idx;         /* [N*dim] theta index of every element */
    vs_tensor *x0, *g0;
    const int64_t *t0;
    float *c;
    bool *found;
    float *best_l1;             /* [N] */
    float *best;                /* [n_vars] the valid masks of least L1 norm */
    vs_error *err;
    vs_status st;
} pp_ctx;

static void pp_observe(pp_ctx *c, const float *theta, const vs_tensor *m)
{
    for (int64_t b = 0; b < c->N; b++) {
        if (!(m->data[b] > 0)) continue;
        double l1 = 0;
        bool inside = true;
        for (int64_t v = c->var_off[b]; v < c->var_off[b + 1]; v++) l1 += theta[v], inside &= theta[v] >= 0 && theta[v] <= 1;
        if (!inside) continue;
        c->found[b] = true;
        if (l1 >= c->best_l1[b]) continue;
        c->best_l1[b] = (float)l1;
        memcpy(c->best + c->var_off[b], theta + c->var_off[b], (size_t)(c->var_off[b + 1] - c->var_off[b]) * sizeof *theta);
    }
}

static vs_tensor *pp_objective(void *ctx, vs_tensor *theta)
{
    pp_ctx *c = ctx;
    vs_tensor *mask = vs_reshape(vs_index_select(theta, 0, c->idx, c->N * c->dim), c->x0->ndim, c->x0->shape);
    vs_tensor *delta = mask ? vs_mul(mask, c->x0) : NULL;
    vs_tensor *logits = delta ? c->f->forward(c->f->ctx, delta) : NULL;
    vs_tensor *m = logits ? vs_cem_margin(logits, c->t0) : NULL;
    vs_tensor *g = m && c->A > 0 ? vs_cem_attrs_eval(c->a, delta, NULL, c->err) : m;
    if (!g) {
        if (c->st == VS_OK) c->st = c->err && c->err->code != VS_OK ? c->err->code : vs_error_set(c->err, vs_last_error()->code, "cem pp: %s", vs_last_error()->msg);
        return NULL;
    }
    pp_observe(c, theta->data, m);
    vs_tensor *obj = vs_cem_hinge(vs_neg(m), c->c, c->o->kappa);
    if (c->A > 0) obj = vs_add(obj, vs_mul_scalar(vs_sum(vs_relu(vs_sub(g, c->g0)), VS_AXIS(1), false), c->o->gamma));
    return obj;
}

/* Segments of each image: idx[b*dim + p] = var_off[b] + segment of p; var_off[N+1]. */
static vs_status pp_layout(const int32_t *segments, int64_t N, int64_t dim, int64_t *var_off, int64_t *idx, vs_error *err)
{
    var_off[0] = 0;
    for (int64_t b = 0; b < N; b++) {
        int64_t n_seg = 0;
        for (int64_t p = 0; p < dim; p++) {
            int64_t s = segments ? segments[b * dim + p] : p;
            if (s < 0 || s >= dim) return vs_error_set(err, VS_ERR_ARG, "cem pp: segment id %lld of image %lld is not in [0, %lld)", (long long)s, (long long)b, (long long)dim);
            if (s + 1 > n_seg) n_seg = s + 1;
            idx[b * dim + p] = var_off[b] + s;
        }
        var_off[b + 1] = var_off[b] + n_seg;
    }
    return VS_OK;
}

typedef struct ranked {
    float v;
    int32_t i;
} ranked;

/* Decreasing value, then increasing index (a deterministic order for ties). */
static int by_value_desc(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->v != b->v) return a->v < b->v ? 1 : -1;
    return (a->i > b->i) - (a->i < b->i);
}

/* Rank the mask of block b, add segments until the class is back; fill pp. */
static vs_status pp_finish(const vs_model_fn *f, vs_tensor *x0, const int32_t *segments, int64_t b, int64_t t0, const float *mask,
                           int64_t n_seg, vs_cem_pp *pp, vs_error *err)
{
    int64_t dim = pp->dim;
    pp->mask = malloc((size_t)n_seg * sizeof *pp->mask);
    pp->order = malloc((size_t)n_seg * sizeof *pp->order);
    pp->x = calloc((size_t)dim, sizeof *pp->x);
    float *scores = malloc((size_t)n_seg * sizeof *scores);
    ranked *r = malloc((size_t)n_seg * sizeof *r);
    if (!pp->mask || !pp->order || !pp->x || !scores || !r) {
        free(scores);
        free(r);
        return vs_error_set(err, VS_ERR_NOMEM, "cem pp: out of memory");
    }
    memcpy(pp->mask, mask, (size_t)n_seg * sizeof *mask);
    for (int64_t s = 0; s < n_seg; s++) r[s] = (ranked){mask[s], (int32_t)s};
    qsort(r, (size_t)n_seg, sizeof *r, by_value_desc);
    for (int64_t s = 0; s < n_seg; s++) pp->order[s] = r[s].i;
    free(r);
    const float *xb = x0->data + b * dim;
    const int32_t *seg = segments ? segments + b * dim : NULL;
    int64_t first = 0;
    vs_status st = vs_cem_prefixes(f, xb, x0->ndim - 1, x0->shape + 1, seg, pp->order, n_seg, t0, true, scores, &first, err);
    free(scores);
    if (st != VS_OK) return st;
    pp->n_features = first > 0 ? first : n_seg; /* the whole image predicts t0 by definition of t0 */
    uint8_t *keep = calloc((size_t)n_seg, 1);
    if (!keep) return vs_error_set(err, VS_ERR_NOMEM, "cem pp: out of memory");
    for (int64_t k = 0; k < pp->n_features; k++) keep[pp->order[k]] = 1;
    for (int64_t p = 0; p < dim; p++) pp->x[p] = keep[seg ? seg[p] : p] ? xb[p] : 0;
    free(keep);
    return VS_OK;
}

vs_status vs_cem_maf_pp(const vs_model_fn *f, const vs_cem_attrs *a, vs_tensor *x0, const int32_t *segments, const vs_cem_opts *o,
                        vs_cem_pp *pp, vs_error *err)
{
    if (!f || !x0 || !o || !pp || x0->ndim < 2) return vs_error_set(err, VS_ERR_ARG, "cem pp: a classifier, images x0 [N,...], options and results are required");
    if (o->searches < 1 || o->pp_iters < 1 || !(o->pp_step > 0) || !(o->c0 > 0) || o->beta_pp < 0)
        return vs_error_set(err, VS_ERR_ARG, "cem pp: searches, iterations, step and c0 must be positive, beta >= 0");
    int64_t N = x0->shape[0], dim = x0->size / N, A = a ? a->n : 0;
    memset(pp, 0, (size_t)N * sizeof *pp);
    int64_t *t0 = malloc((size_t)N * sizeof *t0), *var_off = malloc((size_t)(N + 1) * sizeof *var_off);
    int64_t *idx = malloc((size_t)(N * dim) * sizeof *idx);
    float *c = malloc((size_t)N * sizeof *c), *best_l1 = malloc((size_t)N * sizeof *best_l1);
    bool *found = calloc((size_t)N, sizeof *found), *any = calloc((size_t)N, sizeof *any);
    float *theta = NULL, *best = NULL;
    vs_status st = !t0 || !var_off || !idx || !c || !best_l1 || !found || !any ? vs_error_set(err, VS_ERR_NOMEM, "cem pp: out of memory") : VS_OK;
    if (st == VS_OK) st = pp_layout(segments, N, dim, var_off, idx, err);
    int64_t nv = st == VS_OK ? var_off[N] : 0;
    if (st == VS_OK && (!(theta = malloc((size_t)nv * sizeof *theta)) || !(best = calloc((size_t)nv, sizeof *best))))
        st = vs_error_set(err, VS_ERR_NOMEM, "cem pp: out of memory");
    vs_scope_begin();
    vs_tensor *g0 = NULL;
    if (st == VS_OK) st = vs_cem_predict(f, x0, t0, err);
    if (st == VS_OK && A > 0) {
        bool prev = vs_set_grad_enabled(false);
        if (!(g0 = vs_cem_attrs_eval(a, x0, NULL, err))) st = err ? err->code : VS_ERR_ARG;
        vs_set_grad_enabled(prev);
    }
    for (int64_t b = 0; st == VS_OK && b < N; b++) c[b] = o->c0, best_l1[b] = INFINITY;
    pp_ctx ctx = {.f = f, .a = a, .o = o, .N = N, .dim = dim, .A = A, .var_off = var_off, .idx = idx, .x0 = x0, .g0 = g0, .t0 = t0,
                  .c = c, .found = found, .best_l1 = best_l1, .best = best, .err = err};
    vs_gda_problem pb = {.n_vars = nv, .n_blocks = N, .var_off = var_off, .objective = pp_objective, .ctx = &ctx};
    vs_prox_opts po;
    vs_prox_opts_init(&po);
    po.iters = o->pp_iters, po.step = o->pp_step, po.l1 = o->beta_pp, po.lo = 0, po.hi = 1, po.accelerate = o->fista, po.tol = 0;
    float *c_found = malloc((size_t)N * sizeof *c_found);
    if (st == VS_OK && !c_found) st = vs_error_set(err, VS_ERR_NOMEM, "cem pp: out of memory");
    for (int s = 0; st == VS_OK && s < o->searches; s++) {
        memset(theta, 0, (size_t)nv * sizeof *theta);
        memset(found, 0, (size_t)N * sizeof *found);
        st = vs_prox_minimize(&pb, &po, theta, NULL, NULL, err);
        if (ctx.st != VS_OK) st = ctx.st;
        for (int64_t b = 0; b < N; b++)
            if (found[b] && !any[b]) any[b] = true, c_found[b] = c[b];
        for (int64_t b = 0; st == VS_OK && b < N && s == o->searches - 1; b++)
            if (!any[b]) memcpy(best + var_off[b], theta + var_off[b], (size_t)(var_off[b + 1] - var_off[b]) * sizeof *theta);
        vs_cem_c_update(c, found, N);
    }
    for (int64_t b = 0; st == VS_OK && b < N; b++) {
        pp[b].t0 = t0[b], pp[b].dim = dim, pp[b].n_segments = var_off[b + 1] - var_off[b];
        pp[b].relaxed_valid = any[b], pp[b].c = any[b] ? c_found[b] : c[b];
        st = pp_finish(f, x0, segments, b, t0[b], best + var_off[b], pp[b].n_segments, &pp[b], err);
    }
    vs_scope_end();
    if (st != VS_OK)
        for (int64_t b = 0; b < N; b++) vs_cem_pp_clear(&pp[b]);
    free(t0);
    free(var_off);
    free(idx);
    free(c);
    free(best_l1);
    free(found);
    free(any);
    free(theta);
    free(best);
    free(c_found);
    return st;
}
