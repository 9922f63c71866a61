/* evaluate_interactions.c - vs_evaluate of interactions [N, F, F] (Integrated Hessians, the
 * Shapley-Taylor methods): judged by completeness, the matrix of each row summing to S(x) - S(x');
 * the perturbation metrics rank single features and do not apply. */
#include "explain/evaluate_internal.h"
#include "versus/experiment.h"

#include <math.h>
#include <stdlib.h>

bool eval_is_interactions(const vs_tensor *x, const vs_tensor *attr)
{
    int64_t n = x->shape[0], dim = n ? x->size / n : 0;
    return n > 0 && !vs_same_shape(x, attr) && attr->ndim == 3 && attr->shape[0] == n && attr->shape[1] == attr->shape[2] &&
           (attr->shape[1] == dim || attr->shape[1] == 2 * dim);
}

/* The options that rank single features, set away from their defaults: the first one's name, or NULL. */
static const char *feature_option(const vs_evaluate_opts *o)
{
    vs_evaluate_opts d;
    vs_evaluate_opts_init(&d);
    return o->replace            ? "replace"
           : o->per_step != d.per_step   ? "per-step"
           : o->aopc_steps != d.aopc_steps ? "aopc-steps"
           : o->edge != d.edge         ? "edge"
           : o->cascade                ? "cascade"
           : o->heatmaps               ? "heatmaps"
           : o->curves                 ? "curves"
           : o->mask                   ? "mask"
           : o->mask_data              ? "mask-data"
           : o->method                 ? "method"
           : o->top_k != d.top_k       ? "top-k"
                                       : NULL;
}

static vs_json *num(double v) { return isfinite(v) ? vs_json_new_number(v) : vs_json_new_null(); }

/* The summary members after the interactions report's own (output, attributions, rows, features, side). */
static void put_summary(vs_json *data, const double *gap, const double *diag, const double *cross, int64_t n)
{
    double worst = 0, mean_abs = 0;
    for (int64_t i = 0; i < n; i++) {
        if (fabs(gap[i]) > fabs(worst)) worst = gap[i];
        mean_abs += fabs(gap[i]) / n;
    }
    vs_json *c = vs_json_new_object(), *gaps = vs_json_new_array();
    vs_json_set(c, "largest_gap", num(worst));
    vs_json_set(c, "mean_abs_gap", num(mean_abs));
    vs_json_set(c, "direction", vs_json_new_string("lower is better"));
    vs_json_set(data, "completeness", c);
    double mean_diag, mean_cross, sd;
    eval_stats(diag, n, &mean_diag, &sd);
    eval_stats(cross, n, &mean_cross, &sd);
    vs_json_set(data, "main_effect_share", num(mean_diag));
    vs_json_set(data, "query_reference_share", num(mean_cross));
    for (int64_t i = 0; i < n; i++) vs_json_push(gaps, num(gap[i]));
    vs_json_set(data, "gaps", gaps);
}

/* diag[i]: the share of |G_i| on the diagonal; cross[i]: in the query x reference blocks (both sides). */
static void shares(const vs_tensor *attr, vs_side side, double *diag, double *cross)
{
    int64_t n = attr->shape[0], F = attr->shape[1];
    for (int64_t i = 0; i < n; i++) {
        const float *G = attr->data + i * F * F;
        double total = 0, d = 0, q = 0;
        for (int64_t u = 0; u < F; u++)
            for (int64_t v = 0; v < F; v++) {
                total += fabs(G[u * F + v]);
                if (u == v) d += fabs(G[u * F + v]);
                if (u < F / 2 && v >= F / 2) q += 2 * fabs(G[u * F + v]); /* both off-diagonal blocks */
            }
        diag[i] = total > 0 ? d / total : NAN;
        cross[i] = total > 0 && side == VS_SIDE_BOTH ? q / total : NAN;
    }
}

vs_status eval_interactions(const vs_evaluate_opts *o, eval_inputs *in, vs_report **out, vs_error *err)
{
    const char *flag = feature_option(o);
    if (flag)
        return vs_error_set(err, VS_ERR_ARG, "--%s ranks single features: it does not apply to interactions [N, F, F] (%s)", flag,
                            o->attributions);
    if (o->run && (o->run->sharded || o->run->resume))
        return vs_error_set(err, VS_ERR_ARG, "--shard and --resume apply to feature attributions, not interactions (%s)", o->attributions);
    vs_explain_request rq;
    vs_explain_request_init(&rq);
    rq.target = o->target;
    rq.contrast = o->contrast;
    rq.reference = in->reference;
    rq.side = o->side;
    int64_t n = in->x->shape[0], dim = in->x->size / n, F = in->attr->shape[1];
    if ((F == 2 * dim) != (rq.side == VS_SIDE_BOTH))
        return vs_error_set(err, VS_ERR_SHAPE, "%s: interactions over %lld features, but %s side%s of rows of %lld elements has %lld",
                            o->attributions, (long long)F, vs_side_name(rq.side), rq.side == VS_SIDE_BOTH ? "s" : "", (long long)dim,
                            (long long)(rq.side == VS_SIDE_BOTH ? 2 * dim : dim));
    in->ex.reference = NULL; /* vs_explain pairs the reference with each row */
    in->fn = vs_model_fn_from_module(&in->ex);
    double *gap = malloc((size_t)n * sizeof *gap), *diag = malloc((size_t)n * sizeof *diag), *cross = malloc((size_t)n * sizeof *cross);
    vs_status st = gap && diag && cross ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    if (st == VS_OK && vs_explain_completeness(&in->fn, in->x, &rq, in->attr, gap, err) != VS_OK)
        st = err->code = err->code == VS_ERR_ARG ? VS_ERR_FORMAT : err->code; /* the data's failure, not a usage error */
    if (st == VS_OK) {
        shares(in->attr, rq.side, diag, cross);
        st = vs_interactions_report(o->attributions, in->attr, dim, rq.side, gap, diag, cross, out, err);
    }
    if (st == VS_OK) put_summary((*out)->data, gap, diag, cross, n);
    if (st == VS_OK && (!(*out)->data || (*out)->oom)) {
        vs_report_free(*out);
        *out = NULL;
        st = vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    }
    free(gap);
    free(diag);
    free(cross);
    return st;
}
