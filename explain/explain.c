/* explain.c - vs_explain, the one way a registered method is run: checks the request, builds the
 * explained input of each row (the row itself, or one side or both sides of a query/reference pair
 * seen through a wrapper model), resolves the target, runs the method and reports its completeness. */
#include "explain/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void vs_explain_request_init(vs_explain_request *r)
{
    memset(r, 0, sizeof *r);
    r->target = -1;
    r->contrast = -1;
    r->batch = 64;
    r->side = VS_SIDE_QUERY;
}

/* ---- pairs: one side or both sides of (x_i, r_i) as the input of a one-input model ------------- */

typedef struct pair_model {
    const vs_model_fn *m;
    vs_tensor *x, *r;      /* [1, ...] the row's query and reference */
    vs_side side;
} pair_model;

/* z [B, ...] (one side) or [B, 2, ...] (both) -> the model's outputs for the B pairs. */
static vs_tensor *pair_forward(void *ctx, vs_tensor *z)
{
    const pair_model *p = ctx;
    if (p->side == VS_SIDE_QUERY) return p->m->forward_pair(p->m->ctx, z, vs_expand(p->r, z->ndim, z->shape));
    if (p->side == VS_SIDE_REFERENCE) return p->m->forward_pair(p->m->ctx, vs_expand(p->x, z->ndim, z->shape), z);
    int64_t shape[VS_MAX_DIMS];
    shape[0] = z->shape[0];
    for (int i = 2; i < z->ndim; i++) shape[i - 1] = z->shape[i];
    vs_tensor *q = vs_reshape(vs_slice(z, 1, 0, 1), z->ndim - 1, shape), *r = vs_reshape(vs_slice(z, 1, 1, 2), z->ndim - 1, shape);
    return q && r ? p->m->forward_pair(p->m->ctx, q, r) : NULL;
}

/* ---- shapes and checks ---------------------------------------------------------------------------- */

/* Shape [1, ...] of one explained input: x's row, or [1, 2, ...] for both sides. */
static void explained_shape(const vs_tensor *x, const vs_explain_request *r, int *ndim, int64_t *shape)
{
    bool both = r->reference && r->side == VS_SIDE_BOTH;
    *ndim = x->ndim + both;
    shape[0] = 1;
    if (both) shape[1] = 2;
    for (int i = 1; i < x->ndim; i++) shape[i + both] = x->shape[i];
}

/* VS_OK when vs_explain runs m: SNX's masks need a data set's pairs and their own engine. */
static vs_status check_family(const vs_method *m, vs_error *err)
{
    if (m && m->family == VS_METHOD_SNX)
        return vs_error_set(err, VS_ERR_ARG, "%s is an SNX method (masks of Siamese pairs of a data set's rows or graphs): "
                            "run it with `versus explain snx --method %s` or vs_snx_explain", m->name, m->name);
    return VS_OK;
}

static vs_status check_request(const vs_model_fn *model, const vs_tensor *x, const vs_method *m, const vs_explain_request *r,
                               int64_t ex_dim, vs_error *err)
{
    if (!model || !model->forward) return vs_error_set(err, VS_ERR_ARG, "explain: no model");
    if (check_family(m, err) != VS_OK) return VS_ERR_ARG;
    if (!m || !m->run) return vs_error_set(err, VS_ERR_ARG, "explain: no method");
    if (!x || x->ndim < 2 || x->shape[0] < 1) return vs_error_set(err, VS_ERR_SHAPE, "%s: inputs must be [N, ...] with N >= 1", m->name);
    int64_t n = x->shape[0], dim = x->size / n;
    if ((unsigned)r->side > VS_SIDE_BOTH) return vs_error_set(err, VS_ERR_ARG, "%s: unknown side %d", m->name, (int)r->side);
    if (r->reference) {
        const vs_tensor *R = r->reference;
        bool ok = R->ndim == x->ndim && (R->shape[0] == 1 || R->shape[0] == n);
        for (int i = 1; ok && i < x->ndim; i++) ok = R->shape[i] == x->shape[i];
        if (!ok)
            return vs_error_set(err, VS_ERR_SHAPE, "%s: the reference must be [1, ...] or [%lld, ...] with the inputs' row shape", m->name,
                                (long long)n);
        if (!model->forward_pair) return vs_error_set(err, VS_ERR_ARG, "%s: the model does not compare pairs (no forward_pair)", m->name);
        if (r->reference_baseline && r->reference_baseline->size != dim)
            return vs_error_set(err, VS_ERR_SHAPE, "%s: the reference's baseline has %lld elements, one reference row %lld", m->name,
                                (long long)r->reference_baseline->size, (long long)dim);
    } else if (r->side != VS_SIDE_QUERY) {
        return vs_error_set(err, VS_ERR_ARG, "%s: side '%s' needs a reference", m->name, vs_side_name(r->side));
    }
    bool query_only = !r->reference || r->side == VS_SIDE_QUERY;
    const vs_method_param *lp = vs_method_param_find(m, "layer");
    if ((m->flags & VS_METHOD_LAYERS) && lp && lp->kind == VS_PARAM_PATH) { /* layer and neuron methods */
        if (!model->module) return vs_error_set(err, VS_ERR_ARG, "%s reads a layer of the model's module tree: this model has none", m->name);
        if (r->reference && r->side == VS_SIDE_BOTH)
            return vs_error_set(err, VS_ERR_ARG, "%s: a layer of the shared encoder sees one side at a time: explain the query or the reference side",
                                m->name);
    } else if ((m->flags & VS_METHOD_LAYERS) && (!model->sequential || r->reference)) {
        return vs_error_set(err, VS_ERR_ARG, "%s reads a layer's activations: it explains classifiers (sequential models) only", m->name);
    }
    if (r->baseline && r->baseline->size != dim)
        return vs_error_set(err, VS_ERR_SHAPE, "baseline has %lld elements, one input has %lld", (long long)r->baseline->size, (long long)dim);
    if (m->flags & VS_METHOD_BASELINE_SET) {
        if (!query_only) return vs_error_set(err, VS_ERR_ARG, "%s averages over a baseline set of queries: explain the query side", m->name);
        if (!r->baselines && !r->baseline) return vs_error_set(err, VS_ERR_ARG, "%s needs a set of baselines", m->name);
    }
    const vs_tensor *B = r->baselines;
    if (B && (B->ndim < 1 || B->shape[0] < 1 || B->size != B->shape[0] * dim))
        return vs_error_set(err, VS_ERR_SHAPE, "baseline set must be [B, ...] with %lld elements per row", (long long)dim);
    if (r->segments) {
        if (!(m->flags & VS_METHOD_SEGMENTS)) return vs_error_set(err, VS_ERR_ARG, "%s does not take segments as features", m->name);
        for (int64_t i = 0; i < ex_dim; i++)
            if (r->segments[i] < 0 || r->segments[i] >= r->n_segments)
                return vs_error_set(err, VS_ERR_ARG, "segment id %d of element %lld outside [0, %lld)", (int)r->segments[i], (long long)i,
                                    (long long)r->n_segments);
    }
    return VS_OK;
}

vs_status vs_explain_shape(const vs_method *m, const vs_tensor *x, const vs_explain_request *r, int *ndim, int64_t *shape,
                           vs_error *err)
{
    if (!m || !x || x->ndim < 2 || x->shape[0] < 1) return vs_error_set(err, VS_ERR_SHAPE, "explain: inputs must be [N, ...] with N >= 1");
    if (check_family(m, err) != VS_OK) return VS_ERR_ARG;
    vs_explain_request d;
    vs_explain_request_init(&d);
    if (!r) r = &d;
    if (r->reference && r->side == VS_SIDE_BOTH && x->ndim + 1 > VS_MAX_DIMS)
        return vs_error_set(err, VS_ERR_SHAPE, "explain: too many dimensions for both sides");
    if (m->output == VS_OUTPUT_LAYER) return vs_error_set(err, VS_ERR_ARG, "%s: a layer's shape depends on the model (vs_explain_layer_shape)", m->name);
    int nd;
    int64_t one[VS_MAX_DIMS];
    explained_shape(x, r, &nd, one);
    if (m->output == VS_OUTPUT_INTERACTIONS) {
        int64_t f = 1;
        for (int i = 1; i < nd; i++) f *= one[i];
        *ndim = 3;
        shape[0] = x->shape[0];
        shape[1] = shape[2] = f;
        return VS_OK;
    }
    *ndim = nd;
    memcpy(shape, one, (size_t)nd * sizeof *shape);
    shape[0] = x->shape[0];
    return VS_OK;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A [1, ...] tensor of shape (nd, shape) from data, or zeros when data is NULL. */
static vs_tensor *row_or_zeros(int nd, const int64_t *shape, const float *data)
{
    return data ? vs_tensor_from(nd, shape, data) : vs_tensor_zeros(nd, shape);
}

/* The job of row i: the explained input (the row, one side of its pair, or both as [1, 2, ...]) and
 * its baseline, seen through pm/pf for pairs.  Tensors are created in the current scope. */
static vs_status row_job(const vs_model_fn *model, const vs_tensor *x, int64_t i, const vs_explain_request *r, int ex_nd,
                         const int64_t *ex_shape, pair_model *pm, vs_model_fn *pf, vs_attr_job *jp, vs_error *err)
{
    int64_t n = x->shape[0], dim = x->size / n;
    int64_t row_shape[VS_MAX_DIMS];
    memcpy(row_shape, x->shape, sizeof row_shape);
    row_shape[0] = 1;
    vs_tensor *xr = vs_tensor_from(x->ndim, row_shape, x->data + i * dim), *rr = NULL;
    *pm = (pair_model){.m = model, .x = xr, .side = r->side};
    *pf = (vs_model_fn){.forward = pair_forward, .ctx = pm};
    vs_attr_job j = {.m = model, .r = r, .dim = ex_nd > x->ndim ? 2 * dim : dim, .contrast = r->contrast, .err = err, .model = model};
    const float *xb = r->baseline ? r->baseline->data : NULL;
    if (r->reference) {
        rr = vs_tensor_from(x->ndim, row_shape, r->reference->data + (r->reference->shape[0] == 1 ? 0 : i) * dim);
        const float *rb = r->reference_baseline ? r->reference_baseline->data : NULL;
        pm->r = rr;
        j.m = pf;
        if (r->side == VS_SIDE_QUERY) {
            j.x = xr;
            j.other = rr;
            j.baseline = row_or_zeros(x->ndim, row_shape, xb);
        } else if (r->side == VS_SIDE_REFERENCE) {
            j.x = rr;
            j.other = xr;
            j.baseline = row_or_zeros(x->ndim, row_shape, rb);
        } else {
            j.x = vs_reshape(vs_concat(2, (vs_tensor *[]){xr, rr}, 0), ex_nd, ex_shape);
            j.baseline = vs_reshape(vs_concat(2, (vs_tensor *[]){row_or_zeros(x->ndim, row_shape, xb), row_or_zeros(x->ndim, row_shape, rb)}, 0),
                                    ex_nd, ex_shape);
        }
    } else {
        j.x = xr;
        j.baseline = row_or_zeros(x->ndim, row_shape, xb);
    }
    *jp = j;
    if (!j.x || !j.baseline || (r->reference && !rr)) return vs_error_set(err, VS_ERR_NOMEM, "explain: out of memory");
    return VS_OK;
}

/* The model's outputs for rows [0, n) of x ([n, ...], the caller's rows, not pairs), `chunk` rows
 * per forward without a graph: each row's target and score then come from one batched pass instead
 * of one-row forwards (a row's outputs do not depend on the other rows of its batch).  NULL when a
 * forward fails or memory runs out: the caller then evaluates row by row, which reports the error. */
static vs_tensor *outputs_of_rows(const vs_model_fn *model, const float *data, int ndim, const int64_t *shape, int64_t n,
                                  int64_t chunk)
{
    int64_t dim = 1, row_shape[VS_MAX_DIMS];
    for (int d = 1; d < ndim; d++) dim *= shape[d];
    memcpy(row_shape, shape, sizeof row_shape);
    const int64_t nb = (n + chunk - 1) / chunk;
    vs_tensor **parts = calloc((size_t)nb, sizeof *parts), *outs = NULL;
    if (!parts) return NULL;
    bool prev = vs_set_grad_enabled(false), ok = true;
    vs_scope_begin();
    for (int64_t b = 0; b < nb && ok; b++) {
        row_shape[0] = n - b * chunk < chunk ? n - b * chunk : chunk;
        vs_tensor *xt = vs_tensor_from(ndim, row_shape, data + b * chunk * dim);
        parts[b] = xt ? model->forward(model->ctx, xt) : NULL;
        ok = parts[b] && parts[b]->ndim >= 1 && parts[b]->shape[0] == row_shape[0];
    }
    if (ok) outs = vs_keep(vs_concat((int)nb, parts, 0));
    vs_scope_end();
    vs_set_grad_enabled(prev);
    free(parts);
    if (!outs) vs_clear_last_error();
    return outs;
}

/* The explanations of a layer method, row by row: the first row's gives the layer's shape. */
typedef struct layer_rows {
    float *data;               /* [n * per] malloc'd */
    int nd;
    int64_t shape[VS_MAX_DIMS]; /* [n, <the layer's shape>] */
    int64_t per;
} layer_rows;

/* Row i of n's explanation (j->layer_out, of shape j->layer_shape) into L; *dst: the row in L. */
static vs_status take_layer_output(vs_attr_job *j, const vs_method *m, int64_t i, int64_t n, layer_rows *L, float **dst)
{
    if (!j->layer_out || j->layer_nd < 2) return vs_error_set(j->err, VS_ERR_STATE, "%s: no layer output", m->name);
    if (!L->data) {
        L->nd = j->layer_nd;
        memcpy(L->shape, j->layer_shape, sizeof L->shape);
        L->shape[0] = n;
        L->per = 1;
        for (int d = 1; d < L->nd; d++) L->per *= L->shape[d];
        if (!(L->data = malloc((size_t)(n * L->per) * sizeof *L->data)))
            return vs_error_set(j->err, VS_ERR_NOMEM, "%s: out of memory for the explanation", m->name);
    } else if (L->nd != j->layer_nd || memcmp(L->shape + 1, j->layer_shape + 1, (size_t)(L->nd - 1) * sizeof *L->shape) != 0) {
        return vs_error_set(j->err, VS_ERR_SHAPE, "%s: row %lld's layer has another shape than row 0's", m->name, (long long)i);
    }
    *dst = L->data + i * L->per;
    memcpy(*dst, j->layer_out, (size_t)L->per * sizeof **dst);
    return VS_OK;
}

/* Row i of outputs [n, ...] as [1, ...] (in the current scope). */
static vs_tensor *output_row(vs_tensor *outs, int64_t i) { return vs_slice(outs, 0, i, i + 1); }

vs_status vs_explain_completeness(const vs_model_fn *model, vs_tensor *x, const vs_explain_request *r, const vs_tensor *expl,
                                  double *gaps, vs_error *err)
{
    if (!model || !model->forward || !x || x->ndim < 2 || x->shape[0] < 1 || !expl || !r)
        return vs_error_set(err, VS_ERR_ARG, "completeness: model, inputs [N, ...], request and explanation are required");
    bool both = r->reference && r->side == VS_SIDE_BOTH;
    if (both && x->ndim + 1 > VS_MAX_DIMS) return vs_error_set(err, VS_ERR_SHAPE, "completeness: too many dimensions");
    int ex_nd;
    int64_t ex_shape[VS_MAX_DIMS];
    explained_shape(x, r, &ex_nd, ex_shape);
    int64_t n = x->shape[0], ex_dim = (both ? 2 : 1) * (x->size / n);
    vs_status st = check_request(model, x, vs_method_find("integrated_gradients"), r, ex_dim, err);
    if (st != VS_OK) return st;
    if (expl->ndim < 1 || expl->shape[0] != n || expl->size % n)
        return vs_error_set(err, VS_ERR_SHAPE, "completeness: the explanation must have %lld rows", (long long)n);
    int64_t per = expl->size / n;
    for (int64_t i = 0; i < n && st == VS_OK; i++) {
        vs_scope_begin();
        pair_model pm;
        vs_model_fn pf;
        vs_attr_job j;
        st = row_job(model, x, i, r, ex_nd, ex_shape, &pm, &pf, &j, err);
        double sx = NAN, sb = NAN, sum = 0;
        if (st == VS_OK) st = vs_job_resolve_target(&j, r->target);
        if (st == VS_OK) st = vs_job_scores(&j, j.x->data, 1, &sx);
        if (st == VS_OK) st = vs_job_scores(&j, j.baseline->data, 1, &sb);
        for (int64_t k = 0; k < per; k++) sum += expl->data[i * per + k];
        gaps[i] = sum - (sx - sb);
        vs_scope_end();
    }
    return st;
}

vs_status vs_explain(const vs_model_fn *model, vs_tensor *x, const vs_method *m, const vs_method_opts *opts,
                     const vs_explain_request *r, vs_tensor **out, vs_attr_report *report, vs_error *err)
{
    *out = NULL;
    vs_explain_request dr;
    if (!r) {
        vs_explain_request_init(&dr);
        r = &dr;
    }
    if (opts && vs_method_opts_method(opts) != m) return vs_error_set(err, VS_ERR_ARG, "explain: options of another method");
    if (!x || x->ndim < 2 || x->shape[0] < 1) return vs_error_set(err, VS_ERR_SHAPE, "explain: inputs must be [N, ...] with N >= 1");
    bool both = r->reference && r->side == VS_SIDE_BOTH;
    if (both && x->ndim + 1 > VS_MAX_DIMS) return vs_error_set(err, VS_ERR_SHAPE, "explain: too many dimensions for both sides");
    int ex_nd;
    int64_t ex_shape[VS_MAX_DIMS];
    explained_shape(x, r, &ex_nd, ex_shape);
    int64_t n = x->shape[0], dim = x->size / n, ex_dim = both ? 2 * dim : dim;
    vs_status st = check_request(model, x, m, r, ex_dim, err);
    if (st != VS_OK) return st;
    int out_nd = 0;
    int64_t out_shape[VS_MAX_DIMS];
    const bool layer = m->output == VS_OUTPUT_LAYER; /* the shape comes with the first row's explanation */
    if (!layer && (st = vs_explain_shape(m, x, r, &out_nd, out_shape, err)) != VS_OK) return st;
    int64_t out_row = m->output == VS_OUTPUT_INTERACTIONS ? ex_dim * ex_dim : ex_dim;
    vs_method_opts *own = opts ? NULL : vs_method_opts_new(m);
    if (!opts && !own) return vs_error_set(err, VS_ERR_NOMEM, "explain: out of memory");
    const void *o = vs_method_opts_data(opts ? opts : own);

    double t0 = now_seconds();
    vs_tensor *res = layer ? NULL : vs_tensor_zeros(out_nd, out_shape);
    layer_rows lay = {0};
    if (!layer && !res) {
        vs_method_opts_free(own);
        return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for the explanation", m->name);
    }
    vs_attr_report rep = {.delta = NAN, .baseline_score = NAN};
    double worst = NAN;
    int64_t evals = 0;
    bool complete = m->flags & (VS_METHOD_COMPLETE | VS_METHOD_CONSERVES), single_baseline = !(m->flags & VS_METHOD_BASELINE_SET);
    /* targets and scores of all rows (and of the one baseline) from batched forwards, when x's rows
     * are the model's inputs (not pairs) */
    vs_scope_begin();
    vs_tensor *x_outs = NULL, *b_outs = NULL;
    if (!r->reference && n > 1) {
        x_outs = outputs_of_rows(model, x->data, x->ndim, x->shape, n, r->batch > 0 ? r->batch : 64);
        int64_t row_shape[VS_MAX_DIMS];
        memcpy(row_shape, x->shape, sizeof row_shape);
        row_shape[0] = 1;
        vs_tensor *b = x_outs && single_baseline ? row_or_zeros(x->ndim, row_shape, r->baseline ? r->baseline->data : NULL) : NULL;
        b_outs = b ? outputs_of_rows(model, b->data, x->ndim, row_shape, 1, 1) : NULL;
    }
    for (int64_t i = 0; i < n && st == VS_OK; i++) {
        vs_scope_begin();
        pair_model pm;
        vs_model_fn pf;
        vs_attr_job j;
        st = row_job(model, x, i, r, ex_nd, ex_shape, &pm, &pf, &j, err);
        vs_tensor *x_out = x_outs ? output_row(x_outs, i) : NULL;
        if (st == VS_OK) st = x_out ? vs_job_resolve_target_from(&j, r->target, x_out) : vs_job_resolve_target(&j, r->target);
        j.evaluations = 0; /* only the method's own model evaluations are reported */
        float *dst = layer ? NULL : res->data + i * out_row;
        if (st == VS_OK) st = m->run(&j, o, dst);
        if (st == VS_OK && layer) st = take_layer_output(&j, m, i, n, &lay, &dst);
        if (layer) out_row = lay.per;
        free(j.layer_out);
        int64_t method_evals = j.evaluations; /* the bookkeeping below is not the method's cost */
        if (st == VS_OK) {
            double sx, sb;
            vs_tensor *s = x_out ? vs_job_score_of(&j, x_out) : NULL;
            st = s ? VS_OK : vs_job_scores(&j, j.x->data, 1, &sx);
            if (s) sx = s->data[0];
            rep.score = sx;
            rep.target = j.target;
            if (st == VS_OK && single_baseline) {
                vs_tensor *sbt = b_outs ? vs_job_score_of(&j, b_outs) : NULL;
                st = sbt ? VS_OK : vs_job_scores(&j, j.baseline->data, 1, &sb);
                if (sbt) sb = sbt->data[0];
                rep.baseline_score = sb;
                if (complete) {
                    double sum = 0;
                    for (int64_t k = 0; k < out_row; k++) sum += dst[k];
                    rep.delta = sum - (m->flags & VS_METHOD_CONSERVES ? sx : sx - sb); /* LRP conserves S(x) itself */
                    if (isnan(worst) || fabs(rep.delta) > fabs(worst)) worst = rep.delta;
                }
            }
        }
        evals += method_evals;
        vs_scope_end();
    }
    vs_scope_end();
    vs_method_opts_free(own);
    if (st == VS_OK && layer && !(res = vs_tensor_from(lay.nd, lay.shape, lay.data)))
        st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for the explanation", m->name);
    free(lay.data);
    if (st != VS_OK) {
        vs_tensor_free(res);
        return st;
    }
    rep.delta = worst;
    rep.evaluations = evals;
    rep.seconds = now_seconds() - t0;
    if (report) *report = rep;
    *out = res;
    return VS_OK;
}
