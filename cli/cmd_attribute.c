/* cmd_attribute.c - `versus attribute`: attributions of a saved model's inputs (INTERFACES.md). */
#include "cli/cli.h"
#include "versus/versus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const vs_cli_opt attribute_opts[] = {
    {"model", 1, "model directory (model.json + model.safetensors)"},
    {"input", 1, "inputs X.npy [N, ...]"},
    {"method", 1, "saliency, input_x_gradient, integrated_gradients, smoothgrad, expected_gradients, deeplift, deepshap, "
                  "occlusion, gradcam, lime, kernel_shap, shapley_exact"},
    {"target", 1, "explained class (default: the predicted class of each row)"},
    {"contrast", 1, "one-vs-one: explain S_target - S_contrast"},
    {"reference", 1, "Siamese model: the reference R.npy [1, ...]; the explained score is the similarity"},
    {"baseline", 1, "zero, max, min, mean, blur, uniform, mdts, or FILE.npy (default zero)"},
    {"blur-sigma", 1, "blur baseline: Gaussian sigma in pixels (default 5)"},
    {"baseline-data", 1, "SPEC of training data for the mdts baseline and --class-baselines"},
    {"class-baselines", 1, "deepshap / expected_gradients: K baselines drawn from the target class of --baseline-data"},
    {"baselines", 1, "deepshap / expected_gradients: a set of baselines B.npy [B, ...]"},
    {"steps", 1, "integrated gradients: gradient evaluations (default 50; gauss-legendre at most 4096)"},
    {"ig-rule", 1, "gauss-legendre (default), left, right, middle, trapezoid"},
    {"samples", 1, "smoothgrad / expected gradients / lime / kernel_shap samples"},
    {"noise", 1, "smoothgrad: noise sigma as a fraction of the input range (default 0.15)"},
    {"abs", 0, "saliency: the magnitude of the gradient"},
    {"window", 1, "occlusion window C,H,W (default 1,1,1)"},
    {"stride", 1, "occlusion stride C,H,W (default 1,1,1)"},
    {"layer", 1, "gradcam: layer index in the sequential (default: the last conv2d)"},
    {"segments", 1, "lime / kernel_shap / shapley_exact on images: N SLIC superpixels as features"},
    {"seed", 1, "random seed (default 0)"},
    {"report", 1, "write the run's completeness/efficiency gap, evaluations and time as JSON"},
    {"out", 1, "attributions A.npy, the shape of X"},
    {NULL, 0, NULL},
};

/* "a,b,c" -> up to 3 positive ints. */
static int parse_triple(const vs_args *a, const char *name, int out[3])
{
    const char *v = vs_args_get(a, name);
    out[0] = out[1] = out[2] = 0;
    if (!v) return 0;
    int n = 0;
    const char *p = v;
    while (*p && n < 3) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p || x < 1 || x > 100000) break;
        out[n++] = (int)x;
        p = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0') break;
    }
    if (*p != '\0' || n == 0) return vs_usage_error(a->verb, "option '--%s' expects up to three positive integers C,H,W, got '%s'", name, v);
    return 0;
}

static vs_tensor *read_npy(const char *path, const char *what, vs_error *err)
{
    vs_tensor *t = NULL;
    if (vs_npy_read(path, &t, err) != VS_OK) return NULL;
    (void)what;
    return t;
}

typedef struct attr_cli {
    vs_module *model;
    vs_module_explainee ex;
    vs_model_fn fn;
    vs_tensor *x, *reference, *baseline_file, *baselines;
    vs_dataset *train;
    int baseline_kind; /* -1: a file */
} attr_cli;

static int run_attribute(int argc, char **argv)
{
    vs_args a;
    int rc = vs_args_parse("attribute", attribute_opts, argc, argv, &a);
    if (rc) return rc;
    if (a.n_pos) return vs_usage_error("attribute", "unexpected argument '%s'", a.pos[0]);
    const char *model_dir = vs_args_get(&a, "model"), *input = vs_args_get(&a, "input"), *method = vs_args_get(&a, "method"),
               *out_path = vs_args_get(&a, "out");
    if (!model_dir || !input || !method || !out_path)
        return vs_usage_error("attribute", "--model, --input, --method and --out are required");
    int m = vs_attr_method_from_name(method);
    if (m < 0) return vs_usage_error("attribute", "unknown method '%s'", method);
    vs_attr_opts o;
    vs_attr_opts_init(&o, (vs_attr_method)m);
    int64_t target, contrast, steps, samples, layer, seed, class_k, n_seg;
    double noise, sigma;
    if ((rc = vs_args_int(&a, "target", -1, 0, 1 << 30, &target)) || (rc = vs_args_int(&a, "contrast", -1, 0, 1 << 30, &contrast)) ||
        (rc = vs_args_int(&a, "steps", o.steps, 1, 100000, &steps)) ||
        (rc = vs_args_int(&a, "samples", o.samples, 1, 10000000, &samples)) ||
        (rc = vs_args_int(&a, "layer", -1, 0, 100000, &layer)) || (rc = vs_args_int(&a, "seed", 0, 0, INT64_MAX, &seed)) ||
        (rc = vs_args_int(&a, "class-baselines", 0, 1, 1000000, &class_k)) ||
        (rc = vs_args_int(&a, "segments", 0, 2, 100000, &n_seg)) || (rc = vs_args_float(&a, "noise", o.noise, 0, 100, &noise)) ||
        (rc = vs_args_float(&a, "blur-sigma", 5.0, 1e-3, 1000, &sigma)) || (rc = parse_triple(&a, "window", o.window)) ||
        (rc = parse_triple(&a, "stride", o.stride)))
        return rc;
    if (vs_args_has(&a, "target") && target == contrast) return vs_usage_error("attribute", "--target and --contrast are the same class");
    const char *rule = vs_args_get(&a, "ig-rule");
    if (rule) {
        static const char *const rules[] = {"gauss-legendre", "left", "right", "middle", "trapezoid"};
        int k = 0;
        while (k < 5 && strcmp(rule, rules[k]) != 0) k++;
        if (k == 5) return vs_usage_error("attribute", "unknown --ig-rule '%s'", rule);
        o.ig_rule = (vs_ig_rule)k;
    }
    o.contrast = contrast;
    o.steps = (int)steps;
    o.samples = (int)samples;
    o.layer = (int)layer;
    o.seed = (uint64_t)seed;
    o.noise = (float)noise;
    o.abs = vs_args_has(&a, "abs");

    attr_cli c = {0};
    vs_error err;
    c.baseline_kind = VS_BASELINE_ZERO;
    const char *bl = vs_args_get(&a, "baseline");
    if (bl) {
        c.baseline_kind = vs_baseline_from_name(bl);
        if (c.baseline_kind < 0 && !strstr(bl, ".npy"))
            return vs_usage_error("attribute", "--baseline expects zero, max, min, mean, blur, uniform, mdts or FILE.npy, got '%s'", bl);
    }
    if ((c.baseline_kind == VS_BASELINE_MDTS || class_k) && !vs_args_get(&a, "baseline-data"))
        return vs_usage_error("attribute", "the mdts baseline and --class-baselines need --baseline-data SPEC");

    rc = 0;
    c.model = vs_model_load(model_dir, NULL, &err);
    if (!c.model) return vs_fail("%s", err.msg);
    if (!(c.x = read_npy(input, "input", &err))) rc = vs_fail("%s", err.msg);
    if (rc == 0 && c.x->ndim < 2) rc = vs_fail("%s: inputs must be [N, ...] with a batch dimension", input);
    if (rc == 0 && c.x->shape[0] < 1) rc = vs_fail("%s: holds no inputs (its first dimension is 0)", input);
    if (rc == 0 && vs_args_get(&a, "reference") && !(c.reference = read_npy(vs_args_get(&a, "reference"), "reference", &err)))
        rc = vs_fail("%s", err.msg);
    if (rc == 0 && c.model->kind == VS_MODULE_SIAMESE && !c.reference)
        rc = vs_fail("%s is a Siamese model: give the reference with --reference R.npy", model_dir);
    if (rc == 0 && c.reference && (c.reference->size != c.x->size / c.x->shape[0] || c.reference->shape[0] != 1))
        rc = vs_fail("%s: the reference must be one row [1, ...] of the inputs' shape", vs_args_get(&a, "reference"));
    if (rc == 0 && c.baseline_kind < 0) {
        if (!(c.baseline_file = read_npy(bl, "baseline", &err)))
            rc = vs_fail("%s", err.msg);
        else if (c.baseline_file->size != c.x->size / c.x->shape[0])
            rc = vs_fail("%s: the baseline must have the shape of one input row (%lld elements)", bl, (long long)(c.x->size / c.x->shape[0]));
    }
    if (rc == 0 && vs_args_get(&a, "baselines") && !(c.baselines = read_npy(vs_args_get(&a, "baselines"), "baselines", &err)))
        rc = vs_fail("%s", err.msg);
    if (rc == 0 && vs_args_get(&a, "baseline-data")) {
        vs_data_flags df = {.seed = 1};
        if (vs_load_spec(vs_args_get(&a, "baseline-data"), &df, &c.train, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    }
    if (rc == 0 && (o.method == VS_ATTR_DEEPSHAP || o.method == VS_ATTR_EXPECTED_GRADIENTS) && !c.baselines && !class_k)
        rc = vs_usage_error("attribute", "%s needs a baseline set: --baselines B.npy or --class-baselines K --baseline-data SPEC", method);
    if (rc) goto done;

    c.ex.module = c.model;
    c.ex.reference = c.reference;
    c.fn = vs_model_fn_from_module(&c.ex);

    int64_t n = c.x->shape[0], dim = c.x->size / n;
    int nd = c.x->ndim;
    int64_t row_shape[VS_MAX_DIMS];
    memcpy(row_shape, c.x->shape, sizeof row_shape);
    row_shape[0] = 1;
    vs_tensor *attr = vs_tensor_zeros(c.x->ndim, c.x->shape);
    double worst = NAN, seconds = 0;
    int64_t evals = 0;
    FILE *rep = NULL;
    const char *rep_path = vs_args_get(&a, "report");
    if (rep_path && !(rep = fopen(rep_path, "w"))) {
        rc = vs_fail("%s: cannot write the report", rep_path);
        vs_tensor_free(attr);
        goto done;
    }
    if (rep) fprintf(rep, "{\"method\": \"%s\", \"rows\": [\n", method);
    vs_rng r;
    vs_rng_seed(&r, (uint64_t)seed);
    int32_t *seg = n_seg ? malloc((size_t)dim * sizeof *seg) : NULL;
    for (int64_t i = 0; i < n && rc == 0; i++) {
        vs_scope_begin();
        vs_tensor *row = vs_tensor_from(nd, row_shape, c.x->data + i * dim);
        vs_attr_opts ro = o;
        ro.target = target >= 0 ? target : vs_predicted_class(&c.fn, row);
        /* the baseline of this row */
        vs_tensor *b = vs_tensor_new(nd, row_shape);
        if (c.baseline_file)
            memcpy(b->data, c.baseline_file->data, (size_t)dim * sizeof(float));
        else if (vs_make_baseline((vs_baseline_kind)c.baseline_kind, row->data, nd - 1, row_shape + 1, (float)sigma, &r, c.train,
                                  ro.target, b->data, &err) != VS_OK)
            rc = vs_fail("row %lld: %s", (long long)i, err.msg);
        ro.baseline = b;
        ro.baselines = c.baselines;
        if (rc == 0 && class_k) {
            vs_tensor *set = NULL;
            if (vs_class_baselines(c.train, ro.target, class_k, &r, &set, &err) != VS_OK)
                rc = vs_fail("row %lld: %s", (long long)i, err.msg);
            ro.baselines = set;
        }
        if (rc == 0 && n_seg) {
            int k = 0;
            vs_slic_options so = vs_slic_defaults();
            so.n_segments = (int)n_seg;
            if (nd != 4)
                rc = vs_fail("--segments needs image inputs [N,C,H,W]");
            else if (!seg || vs_slic(row->data, (int)row_shape[1], (int)row_shape[2], (int)row_shape[3], &so, seg, &k, &err) != VS_OK)
                rc = vs_fail("superpixels of row %lld: %s", (long long)i, seg ? err.msg : "out of memory");
            ro.segments = seg;
            ro.n_segments = k;
        }
        vs_tensor *ra = NULL;
        vs_attr_report rr;
        if (rc == 0 && vs_attribute(&c.fn, row, &ro, &ra, &rr, &err) != VS_OK) rc = vs_fail("row %lld: %s", (long long)i, err.msg);
        if (rc == 0) {
            memcpy(attr->data + i * dim, ra->data, (size_t)dim * sizeof(float));
            if (!isnan(rr.delta) && (isnan(worst) || fabs(rr.delta) > fabs(worst))) worst = rr.delta;
            evals += rr.evaluations;
            seconds += rr.seconds;
            if (rep) {
                fprintf(rep, "  {\"row\": %lld, \"target\": %lld, \"score\": ", (long long)i, (long long)rr.target);
                vs_cli_put_num(rep, rr.score);
                fputs(", \"baseline_score\": ", rep);
                vs_cli_put_num(rep, rr.baseline_score);
                fputs(", \"delta\": ", rep);
                vs_cli_put_num(rep, rr.delta);
                fprintf(rep, ", \"evaluations\": %lld, \"seconds\": %.6f}%s\n", (long long)rr.evaluations, rr.seconds, i + 1 < n ? "," : "");
            }
        }
        vs_scope_end();
    }
    free(seg);
    if (rep) {
        fputs("], \"largest_delta\": ", rep);
        vs_cli_put_num(rep, worst);
        fprintf(rep, ", \"evaluations\": %lld, \"seconds\": %.6f}\n", (long long)evals, seconds);
        if (fclose(rep) != 0 && rc == 0) rc = vs_fail("%s: write failed", rep_path);
    }
    if (rc == 0 && vs_npy_write(out_path, attr, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (rc == 0 && isnan(worst))
        fprintf(stderr, "versus: %lld rows, %lld model evaluations, %.3f s\n", (long long)n, (long long)evals, seconds);
    else if (rc == 0)
        fprintf(stderr, "versus: %lld rows, %lld model evaluations, %.3f s, largest completeness gap %.3g\n", (long long)n,
                (long long)evals, seconds, worst);
    vs_tensor_free(attr);
done:
    vs_tensor_free(c.x);
    vs_tensor_free(c.reference);
    vs_tensor_free(c.baseline_file);
    vs_tensor_free(c.baselines);
    vs_dataset_free(c.train);
    vs_module_free(c.model);
    return rc;
}

const vs_verb vs_verb_attribute = {
    "attribute",
    "attributions of a saved model's inputs (12 methods, one-vs-one)",
    "usage: versus attribute --model DIR --input X.npy --method M [--target C] [--contrast C2]\n"
    "         [--reference R.npy] [--baseline zero|max|min|mean|blur|uniform|mdts|FILE.npy] [--steps N]\n"
    "         [--samples N] [--seed S] [--report R.json] --out A.npy\n\n"
    "Writes attributions of the same shape as X.  The explained score of a row is the logit of --target\n"
    "(default: the predicted class), minus the logit of --contrast when given (one-vs-one: \"why target and\n"
    "not contrast\"); for a Siamese model with --reference, the similarity to the reference.  Baselines are\n"
    "per row: max/min/mean fill the row with its own max/min/mean, blur smooths it (--blur-sigma), uniform\n"
    "draws noise in its range, mdts takes the nearest training example of the target class\n"
    "(--baseline-data SPEC).  deepshap and expected_gradients average over a baseline set (--baselines, or\n"
    "--class-baselines K from the target class of --baseline-data).  --report writes per-row scores, the\n"
    "completeness (IG, DeepLIFT) or efficiency (Shapley) gap, model evaluations and time.  Occlusion on a\n"
    "sequential image classifier is computed incrementally: each occluded copy recomputes only the region\n"
    "of each conv/pool activation its window changes (same values, less work).  Integrated gradients on a\n"
    "sequential that starts conv/linear, ReLU, conv/linear sums the gradients along the path without\n"
    "re-running its first two layers per step: the first is affine along the path and only the units\n"
    "whose ReLU flips update the second (same values up to rounding).",
    attribute_opts,
    run_attribute,
};
