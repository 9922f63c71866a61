/* evaluate_rows.c - vs_evaluate's loop over the rows of feature attributions: per row the
 * perturbation curve, AOPC, faithfulness, monotonicity, sparseness, inverse localisation and the
 * Quantus families (complexity, localisation, robustness, random logit, input invariance), each row a
 * journal item so shards and resumed runs score the same bits; then cascading randomisation. */
#include "explain/evaluate_internal.h"
#include "versus/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* err's message after a printf-formatted prefix ("row 3: ..."); returns err's code. */
static vs_status prefixed(vs_error *err, const char *fmt, ...)
{
    char msg[VS_ERROR_MSG_MAX], pre[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    snprintf(msg, sizeof msg, "%s", err->msg);
    /* a row that cannot be scored is the data's failure, never a usage error */
    return vs_error_set(err, err->code == VS_ERR_ARG ? VS_ERR_FORMAT : err->code, "%s%s", pre, msg);
}

const char *const eval_metric_names[EVAL_N_METRICS] = {
    "aopc_L", "aopc_all", "gini", "faithfulness", "monotonicity", "inverse_localization", /* gini = Quantus's sparseness */
    "complexity", "effective_complexity", "non_sensitivity", "pointing_game", "relevance_mass", "relevance_rank", "top_k_intersection",
    "auc", "max_sensitivity", "avg_sensitivity", "local_lipschitz", "random_logit_ssim", "input_invariance"};

/* The re-explaining metrics' explainer: a registered method at its defaults, the row's contrast. */
typedef struct reexplain {
    const vs_model_fn *fn;
    const vs_method *m;
    int64_t contrast;
} reexplain;

static vs_status reexplain_row(void *ctx, vs_tensor *x, int64_t target, float *attr, vs_error *err)
{
    const reexplain *r = ctx;
    vs_explain_request rq;
    vs_explain_request_init(&rq);
    rq.target = target;
    rq.contrast = r->contrast;
    vs_tensor *a = NULL;
    vs_status st = vs_explain(r->fn, x, r->m, NULL, &rq, &a, NULL, err);
    if (st == VS_OK) memcpy(attr, a->data, (size_t)a->size * sizeof *attr);
    vs_tensor_free(a);
    return st;
}

/* Outputs per row of the model (classes), 0 for one score per row. */
static int64_t n_outputs(const vs_model_fn *fn, vs_tensor *row)
{
    bool prev = vs_set_grad_enabled(false);
    vs_scope_begin();
    vs_tensor *out = fn->forward(fn->ctx, row);
    int64_t k = out && out->ndim == 2 && out->shape[1] > 1 ? out->shape[1] : 0;
    vs_scope_end();
    vs_set_grad_enabled(prev);
    return k;
}

/* The Quantus-family metrics of row i (map a) into s->col[...][i]; messages name the row. */
static vs_status quantus_row(const vs_evaluate_opts *o, eval_inputs *in, vs_tensor *row, const float *a, const vs_perturb_opts *po,
                             int64_t i, vs_rng *r, eval_scores *s, vs_error *err)
{
    int64_t dim = row->size, v;
    const uint8_t *mask = in->mask ? in->mask + (in->mask_rows > 1 ? i * dim : 0) : NULL;
    s->col[EVAL_COMPLEXITY][i] = vs_complexity(a, dim);
    s->col[EVAL_EFFECTIVE][i] = (double)vs_effective_complexity(a, dim, o->eps);
    if (vs_non_sensitivity(&in->fn, row, a, po, o->eps, &v, err) != VS_OK)
        return prefixed(err, "row %lld: non-sensitivity: ", (long long)i);
    s->col[EVAL_NONSENS][i] = (double)v;
    if (mask) {
        s->col[EVAL_POINTING][i] = vs_pointing_game(a, mask, dim);
        s->col[EVAL_MASS][i] = vs_relevance_mass(a, mask, dim);
        s->col[EVAL_RANK][i] = vs_relevance_rank(a, mask, dim);
        s->col[EVAL_TOPK][i] = vs_top_k_intersection(a, mask, dim, o->top_k);
        s->col[EVAL_AUC][i] = vs_localisation_auc(a, mask, dim);
    }
    if (!in->re_method) return VS_OK;
    reexplain re = {&in->fn, in->re_method, o->contrast};
    const char *name = in->re_method->name;
    if (vs_sensitivity(reexplain_row, &re, row, a, po->target, o->radius, (int)o->samples, r, &s->col[EVAL_MAXSENS][i],
                       &s->col[EVAL_AVGSENS][i], err) != VS_OK ||
        vs_local_lipschitz(reexplain_row, &re, row, a, po->target, o->lipschitz_sigma, (int)o->samples, r, &s->col[EVAL_LIPSCHITZ][i],
                           err) != VS_OK)
        return prefixed(err, "row %lld: robustness with %s: ", (long long)i, name);
    int64_t classes = n_outputs(&in->fn, row), mh = row->ndim == 4 ? row->shape[2] : 1, mw = row->ndim == 4 ? row->shape[3] : dim;
    if (classes >= 2 && vs_random_logit(reexplain_row, &re, row, a, po->target, classes, mh, mw, r, &s->col[EVAL_LOGIT][i], err) != VS_OK)
        return prefixed(err, "row %lld: random logit with %s: ", (long long)i, name);
    s->col[EVAL_INVARIANCE][i] =
        vs_input_invariance_shift(&in->fn, in->model, reexplain_row, &re, row, a, po->target, o->contrast, o->input_shift, err);
    return VS_OK;
}

vs_tensor *eval_use_reference(eval_inputs *in, int64_t i)
{
    if (!in->reference) return NULL;
    int64_t shape[VS_MAX_DIMS], dim = in->reference->size / in->reference->shape[0];
    memcpy(shape, in->reference->shape, sizeof shape);
    shape[0] = 1;
    return in->ex.reference = vs_tensor_from(in->reference->ndim, shape, in->reference->data + (in->reference->shape[0] == 1 ? 0 : i) * dim);
}

/* Row i scored into s (its curve into *curve, *npts points; the caller frees it), po->target its class. */
static vs_status score_row(const vs_evaluate_opts *o, eval_inputs *in, int64_t i, vs_perturb_opts *po, double **curve, int64_t *npts,
                           eval_scores *s, vs_error *err)
{
    int nd = in->x->ndim;
    int64_t dim = in->x->size / s->n, row_shape[VS_MAX_DIMS];
    memcpy(row_shape, in->x->shape, sizeof row_shape);
    row_shape[0] = 1;
    vs_rng qr; /* the row's own stream: the same whatever shard or resumed run scores it */
    vs_rng_seed(&qr, vs_item_seed(o->seed, i));
    vs_tensor *row = vs_tensor_from(nd, row_shape, in->x->data + i * dim);
    vs_tensor *arow = vs_tensor_from(nd, row_shape, in->attr->data + i * dim);
    vs_tensor *zeros = in->zero_replace ? vs_tensor_zeros(nd, row_shape) : NULL;
    eval_use_reference(in, i);
    vs_perturb_opts_init(po);
    po->target = in->model->kind == VS_MODULE_SIAMESE ? 0 : vs_output_choice_row(&in->oc, i, o->target);
    if (po->target < 0) po->target = vs_predicted_class(&in->fn, row);
    if (po->target < 0) po->target = 0; /* one score per row: a pair head's, or a scalar of the outputs */
    po->contrast = o->contrast;
    po->per_step = o->per_step;
    po->replace = in->zero_replace ? zeros : in->replace;
    double **c = s->col;
    if (vs_perturbation_curve(&in->fn, row, arow, po, curve, npts, err) != VS_OK ||
        vs_faithfulness_monotonicity(&in->fn, row, arow, po, &c[EVAL_FAITH][i], &c[EVAL_MONO][i], err) != VS_OK)
        return prefixed(err, "row %lld: ", (long long)i);
    c[EVAL_AOPC_L][i] = vs_aopc(*curve, *npts, o->aopc_steps);
    c[EVAL_AOPC_ALL][i] = vs_aopc(*curve, *npts, -1);
    c[EVAL_GINI][i] = vs_gini(arow->data, dim);
    c[EVAL_LOC][i] = NAN;
    if (nd == 4) {
        int64_t w = row_shape[3], e = o->edge ? o->edge : (w + 6) / 7;
        c[EVAL_LOC][i] = vs_inverse_localization(arow->data, row_shape[1], row_shape[2], w, e);
    }
    return quantus_row(o, in, row, arow->data, po, i, &qr, s, err);
}

/* A row's record: its metrics in summary order, then its target, the points of its curve and the curve. */
static vs_status put_row(vs_run *run, int64_t i, const eval_scores *s, int64_t target, const double *curve, int64_t npts, vs_item_buf *item,
                         vs_error *err)
{
    int64_t ints[2] = {target, npts < s->n_points ? npts : s->n_points};
    vs_item_buf_reset(item);
    for (int k = 0; k < EVAL_N_METRICS; k++) vs_item_put_f64(item, &s->col[k][i], 1);
    vs_item_put_i64(item, ints, 2);
    vs_item_put_f64(item, curve, (size_t)ints[1]);
    return vs_run_put(run, i, item, err);
}

/* Every row from the journal, in order, into s (the mean curve summed here). */
static vs_status read_rows(const vs_evaluate_opts *o, vs_run *run, eval_scores *s, vs_error *err)
{
    for (int64_t i = 0; i < s->n; i++) {
        size_t len;
        const unsigned char *p = vs_run_get(run, i, &len);
        vs_item_reader rd = {p, p ? len : 0, 0, false};
        int64_t ints[2] = {0, 0};
        for (int k = 0; k < EVAL_N_METRICS; k++) vs_item_get_f64(&rd, &s->col[k][i], 1);
        vs_item_get_i64(&rd, ints, 2);
        if (!rd.bad && (ints[1] < 0 || ints[1] > s->n_points)) rd.bad = true;
        for (int64_t k = 0; !rd.bad && k < ints[1]; k++) {
            double v;
            vs_item_get_f64(&rd, &v, 1);
            s->mean_curve[k] += v / s->n;
        }
        if (rd.bad || rd.pos != rd.len)
            return vs_error_set(err, VS_ERR_FORMAT, "%s: the record of row %lld does not fit this run", o->run->path, (long long)i);
        s->target = ints[0];
    }
    return VS_OK;
}

static vs_status scores_alloc(eval_scores *s, int64_t n, int64_t n_points, vs_error *err)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    s->n_points = n_points;
    s->target = -1;
    bool ok = (s->mean_curve = calloc((size_t)n_points, sizeof(double))) != NULL;
    for (int k = 0; k < EVAL_N_METRICS; k++) ok = (s->col[k] = malloc((size_t)(n ? n : 1) * sizeof(double))) && ok;
    for (int k = 0; ok && k < EVAL_N_METRICS; k++)
        for (int64_t i = 0; i < n; i++) s->col[k][i] = k < EVAL_COMPLEXITY ? 0 : NAN;
    return ok ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "out of memory");
}

void eval_scores_clear(eval_scores *s)
{
    for (int k = 0; k < EVAL_N_METRICS; k++) free(s->col[k]);
    free(s->mean_curve);
    memset(s, 0, sizeof *s);
}

vs_status eval_rows(const vs_evaluate_opts *o, eval_inputs *in, eval_scores *s, vs_run **runp, vs_error *err)
{
    int64_t n = in->x->shape[0], dim = n ? in->x->size / n : 0;
    vs_run *run = NULL;
    *runp = NULL;
    vs_status st = scores_alloc(s, n, (dim + o->per_step - 1) / o->per_step + 1, err);
    if (st == VS_OK && o->run && (st = vs_run_open(o->run, n, &run, err)) != VS_OK) return st;
    *runp = run;
    vs_item_buf item = {0};
    int64_t begin = run ? vs_run_begin(run) : 0, end = run ? vs_run_end(run) : n;
    for (int64_t i = begin; i < end && st == VS_OK; i++) {
        size_t len;
        if (run && vs_run_get(run, i, &len)) continue; /* done before a kill */
        vs_scope_begin();
        vs_perturb_opts po;
        double *curve = NULL;
        int64_t npts = 0;
        st = score_row(o, in, i, &po, &curve, &npts, s, err);
        if (st == VS_OK && run) st = put_row(run, i, s, po.target, curve, npts, &item, err);
        /* without a journal the row is summed at once */
        for (int64_t k = 0; st == VS_OK && !run && k < npts && k < s->n_points; k++) s->mean_curve[k] += curve[k] / n;
        if (!run) s->target = po.target;
        free(curve);
        vs_scope_end();
    }
    vs_item_buf_clear(&item);
    in->ex.reference = in->reference; /* the rows' copies went with their scopes */
    if (st == VS_OK && run && vs_run_sharded(run)) s->part = true;
    else if (st == VS_OK && run) st = read_rows(o, run, s, err);
    return st;
}

/* Cascading randomisation's explainer: the cascade method at its defaults on the first row. */
struct cascade_ctx {
    const vs_model_fn *fn;
    const vs_method *m;
    vs_explain_request r;
    vs_tensor *row;
};

static vs_status cascade_attribute(void *ctx, vs_tensor **attr)
{
    struct cascade_ctx *k = ctx;
    vs_error err;
    return vs_explain(k->fn, k->row, k->m, NULL, &k->r, attr, NULL, &err);
}

vs_status eval_cascade(const vs_evaluate_opts *o, eval_inputs *in, eval_scores *s, vs_error *err)
{
    /* parameterised layers of the sequential, output first */
    vs_module *seq = in->model->kind == VS_MODULE_SIAMESE ? vs_module_child(in->model, "encoder") : in->model;
    vs_tensor *const *layers[64];
    int n_params[64];
    s->n_layers = 0;
    for (int64_t l = seq->n_children - 1; l >= 0 && s->n_layers < 64; l--)
        if (seq->children[l]->n_params > 0) {
            layers[s->n_layers] = seq->children[l]->params;
            n_params[s->n_layers++] = seq->children[l]->n_params;
        }
    int nd = in->x->ndim;
    int64_t row_shape[VS_MAX_DIMS], dim = in->x->size / in->x->shape[0];
    memcpy(row_shape, in->x->shape, sizeof row_shape);
    row_shape[0] = 1;
    struct cascade_ctx k = {.fn = &in->fn, .m = in->cascade_method};
    vs_explain_request_init(&k.r);
    k.r.target = s->target;
    k.r.contrast = o->contrast;
    k.row = vs_tensor_from(nd, row_shape, in->x->data); /* the first row, with its reference */
    vs_tensor *ref = eval_use_reference(in, 0);
    vs_rng r;
    vs_rng_seed(&r, o->seed);
    int64_t mh = nd == 4 ? row_shape[2] : 1, mw = nd == 4 ? row_shape[3] : dim;
    vs_status st = vs_cascading_randomization(layers, n_params, s->n_layers, cascade_attribute, &k, mh, mw, &r, s->cascade_rank,
                                              s->cascade_ssim, err);
    if (st != VS_OK) prefixed(err, "cascading randomisation: ");
    vs_tensor_free(k.row);
    vs_tensor_free(ref);
    in->ex.reference = in->reference;
    return st;
}
