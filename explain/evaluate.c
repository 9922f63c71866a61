/* evaluate.c - vs_evaluate (versus/evaluate.h): its options, loading the model and the arrays, the
 * summary of feature attributions as a report, and the heatmap grid and curve files.  The row loop
 * is evaluate_rows.c, interactions evaluate_interactions.c. */
#include "explain/evaluate_internal.h"
#include "versus/data_spec.h"
#include "versus/model.h"
#include "versus/npy.h"
#include "versus/picture.h"
#include "versus/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vs_evaluate_opts_init(vs_evaluate_opts *o)
{
    memset(o, 0, sizeof *o);
    o->target = -1;
    o->contrast = -1;
    o->side = VS_SIDE_QUERY;
    o->per_step = 1;
    o->aopc_steps = 100;
    o->top_k = 1000;
    o->samples = 10;
    o->radius = 0.2;
    o->lipschitz_sigma = 0.1;
    o->input_shift = -1;
    o->eps = 1e-5;
}

/* The options on their own: the methods, the localisation truth, the replacement. */
static vs_status check_opts(const vs_evaluate_opts *o, eval_inputs *in, vs_error *err)
{
    if (!o->model || !o->input || !o->attributions)
        return vs_error_set(err, VS_ERR_ARG, "--model, --input and --attributions are required");
    if (o->per_step < 1 || o->aopc_steps < 0 || o->edge < 0 || o->top_k < 1 || o->samples < 1 || !(o->radius >= 0) ||
        !(o->lipschitz_sigma > 0) || !isfinite(o->input_shift) || !(o->eps >= 0))
        return vs_error_set(err, VS_ERR_ARG, "evaluate: per_step, top_k, samples and lipschitz_sigma must be positive, aopc_steps, edge, "
                                             "radius and eps not negative, input_shift finite");
    in->re_method = o->method ? vs_method_find(o->method) : NULL;
    if (o->method && (!in->re_method || in->re_method->output != VS_OUTPUT_FEATURES))
        return vs_error_set(err, VS_ERR_ARG, "--method expects a feature method of the registry (versus help attribute), got '%s'", o->method);
    if (o->mask && o->mask_data) return vs_error_set(err, VS_ERR_ARG, "give --mask or --mask-data, not both");
    in->cascade_method = o->cascade ? vs_method_find(o->cascade) : NULL;
    if (o->cascade && (!in->cascade_method || in->cascade_method->output != VS_OUTPUT_FEATURES))
        return vs_error_set(err, VS_ERR_ARG, "--cascade expects a feature method of the registry (versus help attribute), got '%s'",
                            o->cascade);
    /* zero by default: the baseline of zero-baseline methods, so a faithful map of them flips the score
     * down; 1 - x moves a pixel away from 0 and 1 alike, which scores IG's maps as unfaithful */
    in->zero_replace = !o->replace || strcmp(o->replace, "zero") == 0;
    if (o->replace && !in->zero_replace && strcmp(o->replace, "one-minus") != 0 && !strstr(o->replace, ".npy"))
        return vs_error_set(err, VS_ERR_ARG, "--replace expects one-minus, zero or FILE.npy, got '%s'", o->replace);
    return VS_OK;
}


/* The localisation truth: a mask file of one row or every row, or a data set's planted mask. */
static vs_status load_mask(const vs_evaluate_opts *o, eval_inputs *in, int64_t n, int64_t dim, vs_error *err)
{
    vs_status st = VS_OK;
    if (o->mask) {
        vs_tensor *mt = NULL;
        if (vs_npy_read_finite(o->mask, &mt, err) != VS_OK) return vs_error_as_file(err);
        if (mt->size != dim && mt->size != n * dim)
            st = vs_error_set(err, VS_ERR_SHAPE, "%s: the mask must have one input row's %lld elements or all %lld rows'", o->mask,
                              (long long)dim, (long long)(n * dim));
        else if (!(in->mask = malloc((size_t)mt->size)))
            st = vs_error_set(err, VS_ERR_NOMEM, "out of memory");
        for (int64_t i = 0; st == VS_OK && i < mt->size; i++) in->mask[i] = mt->data[i] != 0;
        in->mask_rows = mt->size == n * dim && n > 1 ? n : 1;
        vs_tensor_free(mt);
    } else if (o->mask_data) {
        vs_data_flags df = {.seed = 1};
        vs_dataset *d = NULL;
        if (vs_load_spec(o->mask_data, &df, &d, err) != VS_OK) return vs_error_as_file(err);
        if (!d->feature_truth || d->dim != dim)
            st = vs_error_set(err, VS_ERR_SHAPE, "%s: no planted mask of %lld elements (synthetic data with a truth mask, e.g. synthetic-shapes)",
                              o->mask_data, (long long)dim);
        else if (!(in->mask = malloc((size_t)dim)))
            st = vs_error_set(err, VS_ERR_NOMEM, "out of memory");
        for (int64_t i = 0; st == VS_OK && i < dim; i++) in->mask[i] = d->feature_truth[i] != 0;
        in->mask_rows = 1;
        vs_dataset_free(d);
    }
    return st;
}

/* The model and the three arrays. */
static vs_status load_inputs(const vs_evaluate_opts *o, eval_inputs *in, vs_error *err)
{
    if (!(in->model = vs_model_load(o->model, NULL, err))) return vs_error_as_file(err);
    if (vs_npy_read_finite(o->input, &in->x, err) != VS_OK || vs_npy_read_finite(o->attributions, &in->attr, err) != VS_OK ||
        (o->reference && vs_npy_read_finite(o->reference, &in->reference, err) != VS_OK))
        return vs_error_as_file(err);
    in->ex.module = in->model;
    in->ex.reference = in->reference;
    in->fn = vs_model_fn_from_module(&in->ex);
    return vs_output_choice_load(o->targets, o->target_mask, o->score, o->target >= 0, o->contrast >= 0, in->x->ndim ? in->x->shape[0] : 0, &in->fn,
                                 &in->oc, err);
}

/* What feature attributions need beyond the arrays: shapes that fit, the replacement, the mask. */
static vs_status load_feature_inputs(const vs_evaluate_opts *o, eval_inputs *in, vs_error *err)
{
    if (in->x->ndim < 2 || !vs_same_shape(in->x, in->attr))
        return vs_error_set(err, VS_ERR_SHAPE, "%s: attributions must have the shape of the inputs %s (or be interactions [N, F, F])",
                            o->attributions, o->input);
    if (vs_module_compares_pairs(in->model) && !in->reference)
        return vs_error_set(err, VS_ERR_SHAPE, "%s compares pairs: give --reference R.npy", o->model);
    int64_t n = in->x->shape[0], dim = n ? in->x->size / n : 0;
    if (in->reference && !vs_module_compares_pairs(in->model))
        return vs_error_set(err, VS_ERR_SHAPE, "%s takes one input; --reference applies to models that compare pairs", o->model);
    if (in->reference) {
        bool ok = in->reference->ndim == in->x->ndim && (in->reference->shape[0] == 1 || in->reference->shape[0] == n);
        for (int i = 1; ok && i < in->x->ndim; i++) ok = in->reference->shape[i] == in->x->shape[i];
        if (!ok)
            return vs_error_set(err, VS_ERR_SHAPE, "%s: the reference must be one row [1, ...] or one per row [%lld, ...] of the inputs' row shape",
                                o->reference, (long long)n);
    }
    if (!in->zero_replace && strcmp(o->replace, "one-minus") != 0) {
        if (vs_npy_read_finite(o->replace, &in->replace, err) != VS_OK) return vs_error_as_file(err);
        if (in->replace->size != dim)
            return vs_error_set(err, VS_ERR_SHAPE, "%s: the replacement must have the shape of one input row", o->replace);
    }
    return load_mask(o, in, n, dim, err);
}

static void inputs_free(eval_inputs *in)
{
    vs_tensor_free(in->x);
    vs_tensor_free(in->attr);
    vs_tensor_free(in->reference);
    vs_tensor_free(in->replace);
    free(in->mask);
    vs_output_choice_free(&in->oc);
    vs_module_free(in->model);
}

static vs_json *num(double v) { return isfinite(v) ? vs_json_new_number(v) : vs_json_new_null(); }

static vs_json *numbers(const double *v, int64_t n)
{
    vs_json *a = vs_json_new_array();
    for (int64_t i = 0; i < n; i++) vs_json_push(a, num(v[i]));
    return a;
}

void eval_stats(const double *v, int64_t n, double *mean, double *sd)
{
    double s = 0, s2 = 0;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (!isnan(v[i])) {
            s += v[i];
            k++;
        }
    *mean = k ? s / k : NAN;
    for (int64_t i = 0; i < n; i++)
        if (!isnan(v[i])) s2 += (v[i] - *mean) * (v[i] - *mean);
    *sd = k > 1 ? sqrt(s2 / (k - 1)) : NAN;
}

/* The summary (versus/evaluate.h) as the report's data, and its table of means. */
static void summary_data(const vs_evaluate_opts *o, const eval_inputs *in, const eval_scores *s, vs_report *r)
{
    vs_json *d = vs_json_new_object();
    vs_json_set(d, "rows", vs_json_new_int(s->n));
    vs_json_set(d, "aopc_steps", vs_json_new_int(o->aopc_steps));
    vs_json_set(d, "per_step", vs_json_new_int(o->per_step));
    vs_json_set(d, "replace", vs_json_new_string(o->replace ? o->replace : "zero"));
    static const char *const head[3] = {"metric", "mean", "std"};
    vs_report_table *t = vs_report_table_new(r, "Per metric: the mean and standard deviation over the rows where it applies.", 3, head, NULL);
    for (int k = 0; k < EVAL_N_METRICS; k++) {
        double m, sd;
        eval_stats(s->col[k], s->n, &m, &sd);
        vs_json *c = vs_json_new_object();
        vs_json_set(c, "mean", num(m));
        vs_json_set(c, "std", num(sd));
        vs_json_set(c, "per_row", numbers(s->col[k], s->n));
        vs_json_set(d, eval_metric_names[k], c);
        int row = vs_report_table_row(t);
        vs_report_text(t, row, 0, eval_metric_names[k]);
        vs_report_number(t, row, 1, m, NAN, 4);
        vs_report_number(t, row, 2, sd, NAN, 4);
    }
    if (in->cascade_method) {
        vs_json *c = vs_json_new_object(), *layers = vs_json_new_array();
        vs_json_set(c, "method", vs_json_new_string(o->cascade));
        for (int l = 0; l < s->n_layers; l++) {
            vs_json *e = vs_json_new_object();
            vs_json_set(e, "rank_correlation", num(s->cascade_rank[l]));
            vs_json_set(e, "ssim", num(s->cascade_ssim[l]));
            vs_json_push(layers, e);
        }
        vs_json_set(c, "layers_top_down", layers);
        vs_json_set(d, "cascading_randomization", c);
    }
    vs_json_set(d, "mean_perturbation_curve", numbers(s->mean_curve, s->n_points));
    vs_report_set_data(r, d);
}

/* The number of features flipped at each curve point, and the mean curve, as floats. */
static vs_status curve_points(const vs_evaluate_opts *o, const eval_scores *s, int64_t dim, float **xs, float **ys, vs_error *err)
{
    *xs = malloc((size_t)s->n_points * sizeof **xs);
    *ys = malloc((size_t)s->n_points * sizeof **ys);
    if (!*xs || !*ys) return vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    for (int64_t k = 0; k < s->n_points; k++) {
        (*xs)[k] = (float)(k * o->per_step < dim ? k * o->per_step : dim);
        (*ys)[k] = (float)s->mean_curve[k];
    }
    return VS_OK;
}

/* The report of feature attributions: a heading, the table of means, the mean perturbation curve. */
static vs_status feature_report(const vs_evaluate_opts *o, const eval_inputs *in, const eval_scores *s, vs_report **out, vs_error *err)
{
    vs_report *r = vs_report_new();
    if (!r) return vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    int64_t dim = in->x->size / s->n;
    vs_report_heading(r, 1, "Evaluation: %s", o->attributions);
    vs_report_paragraph(r, "%lld rows of %lld features; a flipped feature becomes %s, %lld per curve point.", (long long)s->n,
                        (long long)dim, o->replace ? o->replace : "zero", (long long)o->per_step);
    summary_data(o, in, s, r);
    float *xs = NULL, *ys = NULL;
    vs_status st = curve_points(o, s, dim, &xs, &ys, err);
    if (st == VS_OK) {
        vs_report_figure *f = vs_report_figure_new(r, VS_FIGURE_LINE, "perturbation_curve", "Perturbation curve (mean over rows)",
                                                   "features flipped", "explained score",
                                                   "The explained score as features are flipped in decreasing attribution: a faithful "
                                                   "map makes it fall fast.");
        vs_report_series(f, o->attributions, (size_t)s->n_points, xs, ys, NULL);
    }
    if (st == VS_OK && (r->oom || !r->data)) st = vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    free(xs);
    free(ys);
    if (st != VS_OK) vs_report_free(r);
    else *out = r;
    return st;
}

static vs_status write_curves(const vs_evaluate_opts *o, const eval_scores *s, int64_t dim, vs_error *err)
{
    vs_plot *p = vs_plot_new(VS_PLOT_LINE, "Perturbation curve (mean over rows)", "features flipped", "explained score");
    float *xs = NULL, *ys = NULL;
    vs_status st = p ? curve_points(o, s, dim, &xs, &ys, err) : vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    if (st == VS_OK && (st = vs_plot_add_series(p, o->attributions, (size_t)s->n_points, xs, ys, NULL, err)) == VS_OK)
        st = vs_plot_write_svg(p, o->curves, err);
    vs_plot_free(p);
    free(xs);
    free(ys);
    return st;
}

/* The labelled picture of the first 16 rows (vs_attr_picture): each row's faithfulness scores under
 * its input and overlay. */
static vs_status write_heatmaps(const vs_evaluate_opts *o, const vs_tensor *x, const vs_tensor *attr, const eval_scores *s, vs_error *err)
{
    const char *path = o->heatmaps;
    if (x->ndim != 4) return vs_error_set(err, VS_ERR_SHAPE, "%s: heatmaps need image inputs [N,C,H,W]", path);
    int rows = x->shape[0] < 16 ? (int)x->shape[0] : 16;
    char caps[16][2][96], title[600];
    const char *labels[32];
    for (int r = 0; r < rows; r++) {
        snprintf(caps[r][0], sizeof caps[r][0], "row %d", r);
        snprintf(caps[r][1], sizeof caps[r][1], "AOPC %.3g, faithfulness %.2f, monotonicity %.2f", s->col[EVAL_AOPC_L][r], s->col[EVAL_FAITH][r],
                 s->col[EVAL_MONO][r]);
        labels[2 * r] = caps[r][0];
        labels[2 * r + 1] = caps[r][1];
    }
    snprintf(title, sizeof title, "attributions %s of %s by the model %s; a flipped feature becomes %s", o->attributions, o->input, o->model,
             o->replace ? o->replace : "zero");
    vs_image *im = vs_attr_picture(x->data, attr->data, rows, (int)x->shape[1], (int)x->shape[2], (int)x->shape[3], title, labels);
    if (!im) return vs_error_set(err, vs_last_error()->code, "%s: %s", path, vs_last_error()->msg);
    vs_status st = vs_png_write(im, path, err);
    vs_image_free(im);
    return st;
}

/* Feature attributions: the rows (a shard stops there), the cascade, the report, then the files. */
static vs_status evaluate_features(const vs_evaluate_opts *o, eval_inputs *in, vs_report **out, vs_error *err)
{
    eval_scores s;
    vs_run *run = NULL;
    vs_status st = load_feature_inputs(o, in, err);
    if (st == VS_OK) st = eval_rows(o, in, &s, &run, err);
    else memset(&s, 0, sizeof s);
    if (st == VS_OK && !s.part && in->cascade_method) st = eval_cascade(o, in, &s, err);
    if (st == VS_OK && !s.part) st = feature_report(o, in, &s, out, err);
    int64_t dim = in->x->shape[0] ? in->x->size / in->x->shape[0] : 0;
    if (st == VS_OK && !s.part && o->curves) st = write_curves(o, &s, dim, err);
    if (st == VS_OK && !s.part && o->heatmaps) st = write_heatmaps(o, in->x, in->attr, &s, err);
    if (st != VS_OK) {
        vs_report_free(*out);
        *out = NULL;
    }
    eval_scores_clear(&s);
    if (o->journal) *o->journal = run;
    else {
        if (st == VS_OK && run) st = vs_run_finish(run, err);
        vs_run_free(run);
    }
    return st;
}

vs_status vs_evaluate(const vs_evaluate_opts *o, vs_report **out, vs_error *err)
{
    *out = NULL;
    if (o->journal) *o->journal = NULL;
    eval_inputs in = {0};
    vs_status st = check_opts(o, &in, err);
    if (st == VS_OK) st = load_inputs(o, &in, err);
    if (st == VS_OK && in.x->ndim >= 2 && eval_is_interactions(in.x, in.attr)) st = eval_interactions(o, &in, out, err);
    else if (st == VS_OK) st = evaluate_features(o, &in, out, err);
    inputs_free(&in);
    return st;
}
