/* attribute_run.c - vs_attribute_run (versus/attribute_run.h), what `versus attribute` runs: the
 * model, inputs, reference and baselines loaded and checked, each row's request (target, baselines,
 * segments) and explanation, journalled row by row, then read back in order as the explanation and
 * the run's report. */
#include "explain/output_choice.h"
#include "versus/attribute_run.h"
#include "versus/data_spec.h"
#include "versus/model.h"
#include "versus/npy.h"
#include "versus/superpixel.h"
#include "versus/task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vs_attribute_opts_init(vs_attribute_opts *o)
{
    memset(o, 0, sizeof *o);
    o->target = -1;
    o->contrast = -1;
    o->side = VS_SIDE_QUERY;
    o->blur_sigma = 5;
}


/* The loaded model, arrays and baselines of one run. */
typedef struct attr_in {
    vs_module *model;
    vs_module_explainee ex;
    vs_model_fn fn;   /* the model, or the scalar of its outputs oc chose */
    vs_output_choice oc;
    vs_tensor *x, *reference, *baseline_file, *baselines;
    int32_t *groups;   /* feature_mask: group of every element of a row, numbered 0.. in order of appearance */
    int64_t n_groups;
    vs_dataset *train;
    int baseline_kind; /* -1: a file */
    vs_module *gan;    /* gan:DIR: G(x, c) of a trained GANMEX model */
    double gan_opt[VS_TASK_MAX_OPTS];
} attr_in;

/* feature_mask: dim integers >= 0 (any shape with one row's elements); groups renumbered 0.. in
 * order of first appearance. */
static vs_status read_feature_mask(const char *path, int64_t dim, attr_in *c, vs_error *err)
{
    vs_tensor *m = NULL;
    if (vs_npy_read_finite(path, &m, err) != VS_OK) return vs_error_as_file(err);
    vs_status st = m->size == dim ? VS_OK
                                  : vs_error_set(err, VS_ERR_SHAPE, "%s: the feature mask must have one input row's %lld elements, not %lld",
                                                 path, (long long)dim, (long long)m->size);
    float *seen = NULL; /* group values in order of appearance */
    if (st == VS_OK && (!(c->groups = malloc((size_t)dim * sizeof *c->groups)) || !(seen = malloc((size_t)dim * sizeof *seen))))
        st = vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < dim && st == VS_OK; i++) {
        float v = m->data[i];
        if (!(v >= 0 && v <= 1e9f && v == floorf(v))) {
            st = vs_error_set(err, VS_ERR_FORMAT, "%s: element %lld of the feature mask is %g; groups are integers >= 0", path, (long long)i,
                              (double)v);
            break;
        }
        int64_t k = 0;
        while (k < c->n_groups && seen[k] != v) k++;
        if (k == c->n_groups) seen[c->n_groups++] = v;
        c->groups[i] = (int32_t)k;
    }
    free(seen);
    vs_tensor_free(m);
    return st;
}

/* err's message after "row i: " (prefix "" or another). */
static vs_status row_error(vs_error *err, const char *prefix, int64_t i)
{
    vs_error_as_file(err); /* a row that cannot be explained is the data's failure */
    char msg[VS_ERROR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return vs_error_set(err, err->code, "%srow %lld: %s", prefix, (long long)i, msg);
}

/* The baseline of one row into b (dim floats): a file's, a generator's, or of a kind computed from the row. */
static vs_status row_baseline(const attr_in *c, const vs_tensor *row, int64_t target, float sigma, vs_rng *r, int64_t i, float *b,
                              vs_error *err)
{
    if (c->baseline_file) {
        memcpy(b, c->baseline_file->data, (size_t)row->size * sizeof(float));
        return VS_OK;
    }
    if (c->gan) {
        vs_tensor *g = NULL;
        if (vs_generator_baselines(c->gan, c->gan_opt, row, &target, &g, err) != VS_OK) return row_error(err, "", i);
        memcpy(b, g->data, (size_t)row->size * sizeof(float));
        vs_tensor_free(g);
        return VS_OK;
    }
    if (vs_make_baseline((vs_baseline_kind)c->baseline_kind, row->data, row->ndim - 1, row->shape + 1, sigma, r, c->train, target, b,
                         err) != VS_OK)
        return row_error(err, "", i);
    return VS_OK;
}

/* The options on their own. */
static vs_status check_opts(const vs_attribute_opts *o, attr_in *c, vs_error *err)
{
    if (!o->model || !o->input || !o->method || !o->run)
        return vs_error_set(err, VS_ERR_ARG, "attribute: the model, the input, the method and the run are required");
    if (o->target >= 0 && o->target == o->contrast) return vs_error_set(err, VS_ERR_ARG, "--target and --contrast are the same class");
    if (o->side != VS_SIDE_QUERY && !o->reference) return vs_error_set(err, VS_ERR_ARG, "--side needs --reference R.npy");
    if (o->segments && o->side != VS_SIDE_QUERY) return vs_error_set(err, VS_ERR_ARG, "--segments describes the query: use --side query");
    const char *bl = o->baseline;
    c->baseline_kind = VS_BASELINE_ZERO;
    if (bl) {
        c->baseline_kind = vs_baseline_from_name(bl);
        if (c->baseline_kind < 0 && !strstr(bl, ".npy") && strncmp(bl, "gan:", 4) != 0)
            return vs_error_set(err, VS_ERR_ARG, "--baseline expects zero, max, min, mean, blur, uniform, mdts, gan:DIR or FILE.npy, got '%s'", bl);
        if (strncmp(bl, "gan:", 4) == 0 && o->reference)
            return vs_error_set(err, VS_ERR_ARG, "--baseline gan:DIR explains classifiers; it does not go with --reference");
    }
    if ((c->baseline_kind == VS_BASELINE_MDTS || o->class_baselines) && !o->baseline_data)
        return vs_error_set(err, VS_ERR_ARG, "the mdts baseline and --class-baselines need --baseline-data SPEC");
    return VS_OK;
}


/* The model, the inputs and the reference: shapes that fit the model. */
static vs_status load_rows(const vs_attribute_opts *o, attr_in *c, vs_error *err)
{
    if (!(c->model = vs_model_load(o->model, NULL, err))) return vs_error_as_file(err);
    if (vs_npy_read_finite(o->input, &c->x, err) != VS_OK) return vs_error_as_file(err);
    if (c->x->ndim < 2) return vs_error_set(err, VS_ERR_SHAPE, "%s: inputs must be [N, ...] with a batch dimension", o->input);
    if (c->x->shape[0] < 1) return vs_error_set(err, VS_ERR_SHAPE, "%s: holds no inputs (its first dimension is 0)", o->input);
    if (o->reference && vs_npy_read_finite(o->reference, &c->reference, err) != VS_OK) return vs_error_as_file(err);
    if (vs_module_compares_pairs(c->model) && !c->reference)
        return vs_error_set(err, VS_ERR_SHAPE, "%s compares pairs: give the reference with --reference R.npy", o->model);
    if (c->reference && !vs_module_compares_pairs(c->model))
        return vs_error_set(err, VS_ERR_SHAPE,
                            "%s takes one input; --reference applies to models that compare pairs (Siamese, or a composite with two inputs)",
                            o->model);
    if (c->reference) {
        bool ok = c->reference->ndim == c->x->ndim && (c->reference->shape[0] == 1 || c->reference->shape[0] == c->x->shape[0]);
        for (int i = 1; ok && i < c->x->ndim; i++) ok = c->reference->shape[i] == c->x->shape[i];
        if (!ok)
            return vs_error_set(err, VS_ERR_SHAPE, "%s: the reference must be one row [1, ...] or one per row [%lld, ...] of the inputs' row shape",
                                o->reference, (long long)c->x->shape[0]);
    }
    c->ex.module = c->model;
    c->ex.reference = NULL;
    c->fn = vs_model_fn_from_module(&c->ex);
    return vs_output_choice_load(o->targets, o->target_mask, o->score, o->target >= 0, o->contrast >= 0, c->x->shape[0], &c->fn, &c->oc, err);
}

/* The baselines (a generator, a file, a set, training data) and the feature groups. */
static vs_status load_baselines(const vs_attribute_opts *o, attr_in *c, vs_error *err)
{
    const char *bl = o->baseline, *mask_path = o->feature_mask;
    int64_t dim = c->x->size / c->x->shape[0];
    if (bl && strncmp(bl, "gan:", 4) == 0) {
        if (vs_generator_load(bl + 4, &c->gan, c->gan_opt, err) != VS_OK) {
            vs_error_as_file(err);
            char msg[VS_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", err->msg);
            return vs_error_set(err, err->code, "--baseline %s: %s", bl, msg);
        }
    } else if (c->baseline_kind < 0) {
        if (vs_npy_read_finite(bl, &c->baseline_file, err) != VS_OK) return vs_error_as_file(err);
        if (c->baseline_file->size != dim)
            return vs_error_set(err, VS_ERR_SHAPE, "%s: the baseline must have the shape of one input row (%lld elements)", bl, (long long)dim);
    }
    if (o->baselines && vs_npy_read_finite(o->baselines, &c->baselines, err) != VS_OK) return vs_error_as_file(err);
    if (o->baseline_data) {
        vs_data_flags df = {.seed = 1};
        if (vs_load_spec(o->baseline_data, &df, &c->train, err) != VS_OK) return vs_error_as_file(err);
    }
    if (mask_path && o->segments)
        return vs_error_set(err, VS_ERR_ARG, "--feature-mask and --segments both define the features: give one");
    if (mask_path && !(o->method->flags & VS_METHOD_SEGMENTS))
        return vs_error_set(err, VS_ERR_ARG, "%s does not take feature groups (--feature-mask)", o->method->name);
    if (mask_path && o->side != VS_SIDE_QUERY) return vs_error_set(err, VS_ERR_ARG, "--feature-mask describes the query: use --side query");
    if (mask_path && read_feature_mask(mask_path, dim, c, err) != VS_OK) return err->code;
    if ((o->method->flags & VS_METHOD_BASELINE_SET) && !c->baselines && !o->class_baselines)
        return vs_error_set(err, VS_ERR_ARG, "%s needs a baseline set: --baselines B.npy or --class-baselines K --baseline-data SPEC",
                            o->method->name);
    return VS_OK;
}

/* Row i's request ro from rq: its reference row, target, baselines and segments. */
static vs_status row_request(const vs_attribute_opts *o, attr_in *c, const vs_explain_request *rq, int64_t i, vs_tensor *row, vs_rng *r,
                             int32_t *seg, vs_explain_request *ro, vs_error *err)
{
    int nd = c->x->ndim;
    int64_t dim = c->x->size / c->x->shape[0];
    *ro = *rq;
    vs_tensor *rrow = NULL;
    if (c->reference) {
        rrow = vs_tensor_from(nd, row->shape, c->reference->data + (c->reference->shape[0] == 1 ? 0 : i) * dim);
        ro->reference = rrow;
    }
    ro->target = vs_output_choice_row(&c->oc, i, o->target);
    if (ro->target < 0) ro->target = vs_predicted_class(&c->fn, row);
    /* the baselines of this row (and of its reference) */
    vs_tensor *b = vs_tensor_new(nd, row->shape), *rb = rrow ? vs_tensor_new(nd, row->shape) : NULL;
    /* the baseline's class: the contrast of a one-vs-one explanation (GANMEX's G(x, c_t)), else the target */
    vs_status st = row_baseline(c, row, c->gan && o->contrast >= 0 ? o->contrast : ro->target, (float)o->blur_sigma, r, i, b->data, err);
    if (st == VS_OK && rb) st = row_baseline(c, rrow, ro->target, (float)o->blur_sigma, r, i, rb->data, err);
    ro->baseline = b;
    ro->reference_baseline = rb;
    ro->baselines = c->baselines;
    if (st == VS_OK && o->class_baselines) {
        vs_tensor *set = NULL;
        if ((st = vs_class_baselines(c->train, ro->target, o->class_baselines, r, &set, err)) != VS_OK) row_error(err, "", i);
        ro->baselines = set;
    }
    if (st == VS_OK && o->segments) {
        int k = 0;
        vs_slic_options so = vs_slic_defaults();
        so.n_segments = (int)o->segments;
        if (nd != 4) st = vs_error_set(err, VS_ERR_SHAPE, "--segments needs image inputs [N,C,H,W]");
        else if (!seg) st = vs_error_set(err, VS_ERR_NOMEM, "superpixels of row %lld: out of memory", (long long)i);
        else if ((st = vs_slic(row->data, (int)row->shape[1], (int)row->shape[2], (int)row->shape[3], &so, seg, &k, err)) != VS_OK)
            row_error(err, "superpixels of ", i);
        ro->segments = seg;
        ro->n_segments = k;
    }
    return st;
}

/* Explain this process's rows that the journal does not hold, each recorded as it is done: its
 * attributions (out_row floats), then target, score, baseline score, gap, evaluations, seconds. */
static vs_status explain_rows(const vs_attribute_opts *o, attr_in *c, const vs_explain_request *rq, vs_run *run, int64_t out_row,
                              vs_error *err)
{
    int nd = c->x->ndim;
    int64_t dim = c->x->size / c->x->shape[0], row_shape[VS_MAX_DIMS];
    memcpy(row_shape, c->x->shape, sizeof row_shape);
    row_shape[0] = 1;
    int32_t *seg = o->segments ? malloc((size_t)dim * sizeof *seg) : NULL;
    vs_item_buf item = {0};
    size_t len;
    vs_status st = VS_OK;
    for (int64_t i = vs_run_begin(run); i < vs_run_end(run) && st == VS_OK; i++) {
        if (vs_run_get(run, i, &len)) continue; /* done before a kill */
        vs_scope_begin();
        vs_rng r; /* the row's own stream: the same whatever shard or resumed run explains it */
        vs_rng_seed(&r, vs_item_seed(o->seed, i));
        vs_tensor *row = vs_tensor_from(nd, row_shape, c->x->data + i * dim), *ra = NULL;
        vs_explain_request ro;
        vs_attr_report rr;
        st = row_request(o, c, rq, i, row, &r, seg, &ro, err);
        if (st == VS_OK && (st = vs_explain(&c->fn, row, o->method, o->method_opts, &ro, &ra, &rr, err)) != VS_OK) row_error(err, "", i);
        if (st == VS_OK) {
            int64_t ints[2] = {rr.target, rr.evaluations};
            double nums[4] = {rr.score, rr.baseline_score, rr.delta, rr.seconds};
            vs_item_buf_reset(&item);
            vs_item_put_f32(&item, ra->data, (size_t)out_row);
            vs_item_put_i64(&item, ints, 2);
            vs_item_put_f64(&item, nums, 4);
            st = vs_run_put(run, i, &item, err);
        }
        vs_scope_end();
    }
    free(seg);
    vs_item_buf_clear(&item);
    return st;
}

static vs_json *num(double v) { return isfinite(v) ? vs_json_new_number(v) : vs_json_new_null(); }

/* One row's entry of the report: its data object and its table row. */
static void report_row(vs_json *rows, vs_report_table *t, int64_t i, const int64_t *ints, const double *nums)
{
    vs_json *e = vs_json_new_object();
    vs_json_set(e, "row", vs_json_new_int(i));
    vs_json_set(e, "target", vs_json_new_int(ints[0]));
    vs_json_set(e, "score", num(nums[0]));
    vs_json_set(e, "baseline_score", num(nums[1]));
    vs_json_set(e, "delta", num(nums[2]));
    vs_json_set(e, "evaluations", vs_json_new_int(ints[1]));
    vs_json_set(e, "seconds", num(nums[3]));
    vs_json_push(rows, e);
    int k = vs_report_table_row(t);
    char name[32];
    snprintf(name, sizeof name, "%lld", (long long)i);
    vs_report_text(t, k, 0, name);
    vs_report_number(t, k, 1, (double)ints[0], NAN, 0);
    vs_report_number(t, k, 2, nums[0], NAN, 4);
    vs_report_number(t, k, 3, nums[2], NAN, -2);
    vs_report_number(t, k, 4, (double)ints[1], NAN, 0);
}

/* Every row from the journal, in order, into attr, and the report (data: the run's summary). */
static vs_status read_rows(const vs_attribute_opts *o, vs_run *run, vs_tensor *attr, vs_report *r, vs_error *err)
{
    int64_t n = attr->shape[0], out_row = attr->size / n, evals = 0;
    double worst = NAN, seconds = 0;
    static const char *const head[5] = {"row", "target", "score", "completeness gap", "evaluations"};
    vs_report_heading(r, 1, "Attributions: %s", o->method->name);
    vs_report_table *t = vs_report_table_new(r, "Per row: the explained class, its score and the gap sum A - (S(x) - S(x')).", 5, head, NULL);
    vs_json *d = vs_json_new_object(), *rows = vs_json_new_array();
    vs_json_set(d, "method", vs_json_new_string(o->method->name));
    vs_json_set(d, "output", vs_json_new_string(vs_method_output_name(o->method->output)));
    vs_json_set(d, "side", vs_json_new_string(vs_side_name(o->side)));
    vs_report_set_data(r, d);
    for (int64_t i = 0; i < n; i++) {
        size_t len;
        const unsigned char *p = vs_run_get(run, i, &len);
        vs_item_reader rd = {p, p ? len : 0, 0, false};
        int64_t ints[2];
        double nums[4];
        vs_item_get_f32(&rd, attr->data + i * out_row, (size_t)out_row);
        vs_item_get_i64(&rd, ints, 2);
        vs_item_get_f64(&rd, nums, 4);
        if (rd.bad || rd.pos != rd.len) {
            vs_json_free(rows);
            return vs_error_set(err, VS_ERR_FORMAT, "%s: the record of row %lld does not fit this run", o->run->path, (long long)i);
        }
        /* a journal is data: its counts are checked before they are summed */
        if (ints[1] < 0 || __builtin_add_overflow(evals, ints[1], &evals) || !isfinite(nums[3]) || nums[3] < 0 ||
            vs_first_nonfinite(attr->data + i * out_row, (size_t)out_row) != (size_t)out_row) {
            vs_json_free(rows);
            return vs_error_set(err, VS_ERR_FORMAT, "%s: the record of row %lld holds a negative or non-finite count, time or attribution",
                                o->run->path, (long long)i);
        }
        if (!isnan(nums[2]) && (isnan(worst) || fabs(nums[2]) > fabs(worst))) worst = nums[2];
        seconds += nums[3];
        report_row(rows, t, i, ints, nums);
    }
    vs_json_set(d, "rows", rows);
    vs_json_set(d, "largest_delta", num(worst));
    vs_json_set(d, "evaluations", vs_json_new_int(evals));
    vs_json_set(d, "seconds", num(seconds));
    return r->oom || !r->data ? vs_error_set(err, VS_ERR_NOMEM, "out of memory") : VS_OK;
}

static void in_free(attr_in *c)
{
    vs_tensor_free(c->x);
    vs_tensor_free(c->reference);
    vs_tensor_free(c->baseline_file);
    vs_module_free(c->gan);
    vs_tensor_free(c->baselines);
    free(c->groups);
    vs_output_choice_free(&c->oc);
    vs_dataset_free(c->train);
    vs_module_free(c->model);
}

/* The explanation's shape, the journalled rows, then (a whole run) the explanation and the report. */
static vs_status attribute_rows(const vs_attribute_opts *o, attr_in *c, vs_tensor **attr, vs_report **out, vs_run **runp, vs_error *err)
{
    vs_explain_request rq;
    vs_explain_request_init(&rq);
    rq.contrast = o->contrast;
    rq.seed = o->seed;
    rq.side = o->side;
    rq.reference = c->reference;
    rq.segments = c->groups;
    rq.n_segments = c->n_groups;
    int out_nd;
    int64_t out_shape[VS_MAX_DIMS], n = c->x->shape[0];
    vs_status st = o->method->output == VS_OUTPUT_LAYER ? vs_explain_layer_shape(&c->fn, o->method, o->method_opts, c->x, &out_nd, out_shape, err)
                                                        : vs_explain_shape(o->method, c->x, &rq, &out_nd, out_shape, err);
    if (st != VS_OK) return vs_error_as_file(err);
    if (!(*attr = vs_tensor_zeros(out_nd, out_shape))) return vs_error_set(err, VS_ERR_NOMEM, "out of memory for the explanation");
    if ((st = vs_run_open(o->run, n, runp, err)) != VS_OK) return st;
    st = explain_rows(o, c, &rq, *runp, (*attr)->size / n, err);
    if (st != VS_OK || vs_run_sharded(*runp)) return st;
    if (!(*out = vs_report_new())) return vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    return read_rows(o, *runp, *attr, *out, err);
}

vs_status vs_attribute_run(const vs_attribute_opts *o, vs_tensor **attr, vs_report **out, vs_error *err)
{
    *attr = NULL;
    *out = NULL;
    if (o->journal) *o->journal = NULL;
    attr_in c = {0};
    vs_run *run = NULL;
    vs_status st = check_opts(o, &c, err);
    if (st == VS_OK) st = load_rows(o, &c, err);
    if (st == VS_OK) st = load_baselines(o, &c, err);
    if (st == VS_OK) st = attribute_rows(o, &c, attr, out, &run, err);
    if (st != VS_OK || (run && vs_run_sharded(run))) {
        vs_tensor_free(*attr);
        vs_report_free(*out);
        *attr = NULL;
        *out = NULL;
    }
    if (o->journal) *o->journal = run;
    else {
        if (st == VS_OK && run) st = vs_run_finish(run, err);
        vs_run_free(run);
    }
    in_free(&c);
    return st;
}
