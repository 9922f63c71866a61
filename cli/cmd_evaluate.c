/* cmd_evaluate.c - `versus evaluate`: how good are given attributions (GANMEX 4.1 and appendix C)? */
#include "cli/cli.h"
#include "versus/versus.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const vs_cli_opt evaluate_opts[] = {
    {"model", 1, "model directory"},
    {"input", 1, "inputs X.npy [N, ...]"},
    {"attributions", 1, "attributions A.npy, the shape of X; or interactions [N, F, F] (completeness only)"},
    {"target", 1, "explained class (default: the predicted class of each row)"},
    {"contrast", 1, "one-vs-one: the score is S_target - S_contrast"},
    {"reference", 1, "pair models (Siamese, or a composite with two inputs): the reference R.npy [1, ...] (interactions: or one row per input row)"},
    {"side", 1, "interactions of pairs: the side they explain, query (default), reference or both"},
    {"replace", 1, "what a flipped feature becomes: one-minus (1 - x, inputs in [0,1]; default), zero, or FILE.npy [1, ...]"},
    {"per-step", 1, "features flipped per perturbation-curve point (default 1)"},
    {"aopc-steps", 1, "L of AOPC_L (default 100)"},
    {"edge", 1, "inverse localisation: width of the left and right edge bands in pixels (default W/7)"},
    {"cascade", 1, "cascading randomisation with this feature method of the registry (top layer down)"},
    {"seed", 1, "random seed of the cascading randomisation (default 0)"},
    {"mask", 1, "localisation: ground-truth mask M.npy, one row [1, ...] or one per row [N, ...] (non-zero = inside)"},
    {"mask-data", 1, "localisation: the planted mask of a synthetic data SPEC (e.g. synthetic-shapes)"},
    {"top-k", 1, "top-k intersection: k (default 1000, Quantus's; at most the features)"},
    {"method", 1, "robustness, random logit and input invariance: re-explain with this method (its defaults)"},
    {"samples", 1, "robustness: perturbations per row (default 10)"},
    {"radius", 1, "max-/average-sensitivity: uniform noise radius (default 0.2)"},
    {"lipschitz-sigma", 1, "local Lipschitz estimate: Gaussian noise sigma (default 0.1)"},
    {"input-shift", 1, "input invariance: the constant added to the inputs (default -1)"},
    {"eps", 1, "zero threshold of effective complexity and non-sensitivity (default 1e-5)"},
    {"out", 1, "summary JSON (default: standard output)"},
    {"heatmaps", 1, "write a PNG grid of inputs, overlays and heatmaps to this file"},
    {"curves", 1, "write the mean perturbation curve as SVG to this file"},
    VS_RUN_CLI_OPTS,
    {"report", 1, "interactions: a report directory with the matrices of the first rows (index.html, SVG, results.json)"},
    {NULL, 0, NULL},
};

typedef struct eval_ctx {
    vs_module *model;
    vs_module_explainee ex;
    vs_model_fn fn;
    vs_tensor *x, *attr, *reference, *replace;
} eval_ctx;


static void stats(const double *v, int64_t n, double *mean, double *sd)
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

/* One metric of the summary: "name": {"mean", "std", "per_row"} (NaNs as null, left out of mean/std). */
static void put_column(FILE *f, const char *name, const double *v, int64_t n)
{
    double m, sd;
    stats(v, n, &m, &sd);
    fprintf(f, "  \"%s\": {\"mean\": ", name);
    vs_cli_put_num(f, m);
    fputs(", \"std\": ", f);
    vs_cli_put_num(f, sd);
    fputs(", \"per_row\": [", f);
    for (int64_t i = 0; i < n; i++) {
        if (i) fputs(", ", f);
        vs_cli_put_num(f, v[i]);
    }
    fputs("]},\n", f);
}

/* Cascading randomisation: parameterised layers of a sequential, output layer first. */
typedef struct cascade_ctx {
    eval_ctx *c;
    const vs_method *m;       /* with its default options */
    vs_explain_request r;
    vs_tensor *row;
} cascade_ctx;

static vs_status cascade_attribute(void *ctx, vs_tensor **attr)
{
    cascade_ctx *k = ctx;
    vs_error err;
    return vs_explain(&k->c->fn, k->row, k->m, NULL, &k->r, attr, NULL, &err);
}

static int write_heatmaps(eval_ctx *c, const char *path, int64_t n)
{
    if (c->x->ndim != 4) return vs_fail("%s: heatmaps need image inputs [N,C,H,W]", path);
    int C = (int)c->x->shape[1], H = (int)c->x->shape[2], W = (int)c->x->shape[3];
    int rows = n < 16 ? (int)n : 16, zoom = H < 64 ? 4 : 1;
    vs_grid *g = vs_grid_new(rows, 3, W, H, zoom, 4, 1);
    float *sum = malloc((size_t)H * W * sizeof *sum);
    vs_error err;
    int rc = g && sum ? 0 : vs_fail("out of memory");
    for (int r = 0; r < rows && rc == 0; r++) {
        const float *x = c->x->data + (int64_t)r * C * H * W, *a = c->attr->data + (int64_t)r * C * H * W;
        vs_attr_channel_sum(a, C, H, W, sum);
        float scale = 0;
        if (vs_attr_scale(sum, (size_t)H * W, 99.0, &scale, &err) != VS_OK) scale = 0;
        vs_image *im = vs_image_from_float(x, C, H, W), *ov = vs_overlay(x, C, H, W, sum, scale), *hm = vs_heatmap_rgb(sum, H, W, scale);
        if (!im || !ov || !hm || vs_grid_put(g, r, 0, im, &err) || vs_grid_put(g, r, 1, ov, &err) || vs_grid_put(g, r, 2, hm, &err))
            rc = vs_fail("heatmaps: %s", im && ov && hm ? err.msg : "out of memory");
        char cap[64];
        snprintf(cap, sizeof cap, "row %d", r);
        if (rc == 0) vs_grid_caption(g, r, 0, cap, &err);
        vs_image_free(im);
        vs_image_free(ov);
        vs_image_free(hm);
    }
    if (rc == 0 && vs_png_write(vs_grid_image(g), path, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    vs_grid_free(g);
    free(sum);
    return rc;
}

/* Interactions [N, F, F]: F the elements of one input row, or of both sides of a pair. */
static bool is_interactions(const vs_tensor *x, const vs_tensor *attr)
{
    int64_t n = x->shape[0], dim = x->size / n;
    return !vs_same_shape(x, attr) && attr->ndim == 3 && attr->shape[0] == n && attr->shape[1] == attr->shape[2] &&
           (attr->shape[1] == dim || attr->shape[1] == 2 * dim);
}

/* The interactions report (the library builds it, versus/experiment.h), written to dir. */
static int interactions_report(const char *dir, const char *apath, const vs_tensor *attr, int64_t dim, vs_side side, const double *gap,
                               const double *diag, const double *cross)
{
    vs_report *r = NULL;
    vs_error err;
    int rc = 0;
    if (vs_interactions_report(apath, attr, dim, side, gap, diag, cross, &r, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    else if (vs_report_write_dir(r, dir, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    vs_report_free(r);
    return rc;
}

/* Interactions are judged by their completeness: the matrix of each row sums to S(x) - S(x').  The
 * perturbation metrics rank single features and do not apply. */
static int evaluate_interactions(const vs_args *a, eval_ctx *c, const char *apath, int64_t target, int64_t contrast)
{
    static const char *const feature_only[] = {"replace", "per-step", "aopc-steps", "edge", "cascade", "heatmaps", "curves", "mask",
                                               "mask-data", "method", "top-k"};
    for (size_t k = 0; k < sizeof feature_only / sizeof feature_only[0]; k++)
        if (vs_args_has(a, feature_only[k]))
            return vs_usage_error("evaluate", "--%s ranks single features: it does not apply to interactions [N, F, F] (%s)", feature_only[k],
                                  apath);
    vs_explain_request rq;
    vs_explain_request_init(&rq);
    rq.target = target;
    rq.contrast = contrast;
    rq.reference = c->reference;
    const char *side = vs_args_get(a, "side");
    int sd = side ? vs_side_from_name(side) : VS_SIDE_QUERY;
    if (sd < 0) return vs_usage_error("evaluate", "--side expects query, reference or both, got '%s'", side);
    rq.side = (vs_side)sd;
    int64_t n = c->x->shape[0], dim = c->x->size / n, F = c->attr->shape[1];
    if ((F == 2 * dim) != (rq.side == VS_SIDE_BOTH))
        return vs_fail("%s: interactions over %lld features, but %s side%s of rows of %lld elements has %lld", apath, (long long)F,
                       vs_side_name(rq.side), rq.side == VS_SIDE_BOTH ? "s" : "", (long long)dim,
                       (long long)(rq.side == VS_SIDE_BOTH ? 2 * dim : dim));
    c->ex.module = c->model;
    c->ex.reference = NULL;
    c->fn = vs_model_fn_from_module(&c->ex);
    double *gap = malloc((size_t)n * sizeof *gap), *diag = malloc((size_t)n * sizeof *diag), *cross = malloc((size_t)n * sizeof *cross);
    vs_error err;
    int rc = gap && diag && cross ? 0 : vs_fail("out of memory");
    if (rc == 0 && vs_explain_completeness(&c->fn, c->x, &rq, c->attr, gap, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    double worst = 0, mean_abs = 0, mean_diag, sd_diag, mean_cross, sd_cross;
    for (int64_t i = 0; rc == 0 && i < n; i++) {
        const float *G = c->attr->data + i * F * F;
        double total = 0, d = 0, q = 0;
        for (int64_t u = 0; u < F; u++)
            for (int64_t v = 0; v < F; v++) {
                total += fabs(G[u * F + v]);
                if (u == v) d += fabs(G[u * F + v]);
                if (u < F / 2 && v >= F / 2) q += 2 * fabs(G[u * F + v]); /* both off-diagonal blocks */
            }
        diag[i] = total > 0 ? d / total : NAN;
        cross[i] = total > 0 && rq.side == VS_SIDE_BOTH ? q / total : NAN;
        if (fabs(gap[i]) > fabs(worst)) worst = gap[i];
        mean_abs += fabs(gap[i]) / n;
    }
    if (rc) goto out;
    stats(diag, n, &mean_diag, &sd_diag);
    stats(cross, n, &mean_cross, &sd_cross);
    const char *out = vs_args_get(a, "out");
    vs_out fo;
    if (vs_out_open(&fo, out, &err) != VS_OK) {
        rc = vs_fail("%s", err.msg);
        goto out;
    }
    FILE *f = fo.f;
    fprintf(f, "{\"output\": \"interactions\", \"rows\": %lld, \"features\": %lld, \"side\": \"%s\",\n", (long long)n, (long long)F,
            vs_side_name(rq.side));
    fputs(" \"completeness\": {\"largest_gap\": ", f);
    vs_cli_put_num(f, worst);
    fputs(", \"mean_abs_gap\": ", f);
    vs_cli_put_num(f, mean_abs);
    fputs(", \"direction\": \"lower is better\"},\n \"main_effect_share\": ", f);
    vs_cli_put_num(f, mean_diag);
    fputs(", \"query_reference_share\": ", f);
    vs_cli_put_num(f, mean_cross);
    fputs(",\n \"gaps\": [", f);
    for (int64_t i = 0; i < n; i++) {
        if (i) fputs(", ", f);
        vs_cli_put_num(f, gap[i]);
    }
    fputs("]}\n", f);
    if (vs_out_commit(&fo, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (rc == 0 && vs_args_get(a, "report")) rc = interactions_report(vs_args_get(a, "report"), apath, c->attr, dim, rq.side, gap, diag, cross);
out:
    free(gap);
    free(diag);
    free(cross);
    return rc;
}

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
static int64_t n_outputs(eval_ctx *c, vs_tensor *row)
{
    bool prev = vs_set_grad_enabled(false);
    vs_scope_begin();
    vs_tensor *out = c->fn.forward(c->fn.ctx, row);
    int64_t k = out && out->ndim == 2 && out->shape[1] > 1 ? out->shape[1] : 0;
    vs_scope_end();
    vs_set_grad_enabled(prev);
    return k;
}

/* The Quantus-family metrics of row i (map a) into q[metric * n + i]; 0, or 1 after a message. */
static int quantus_row(eval_ctx *c, reexplain *re, vs_tensor *row, const float *a, const vs_perturb_opts *po, int64_t i, int64_t n,
                       const uint8_t *mask, int64_t top_k, int64_t samples, double radius, double lsigma, double shift, double eps,
                       vs_rng *r, double *q)
{
    enum { COMPLEXITY, EFFECTIVE, NONSENS, POINTING, MASS, RANK, TOPK, AUC, MAXSENS, AVGSENS, LIPSCHITZ, LOGIT, INVARIANCE };
    int64_t dim = row->size, v;
    vs_error err;
    q[COMPLEXITY * n + i] = vs_complexity(a, dim);
    q[EFFECTIVE * n + i] = (double)vs_effective_complexity(a, dim, eps);
    if (vs_non_sensitivity(&c->fn, row, a, po, eps, &v, &err) != VS_OK) return vs_fail("row %lld: non-sensitivity: %s", (long long)i, err.msg);
    q[NONSENS * n + i] = (double)v;
    if (mask) {
        q[POINTING * n + i] = vs_pointing_game(a, mask, dim);
        q[MASS * n + i] = vs_relevance_mass(a, mask, dim);
        q[RANK * n + i] = vs_relevance_rank(a, mask, dim);
        q[TOPK * n + i] = vs_top_k_intersection(a, mask, dim, top_k);
        q[AUC * n + i] = vs_localisation_auc(a, mask, dim);
    }
    if (!re->m) return 0;
    if (vs_sensitivity(reexplain_row, re, row, a, po->target, radius, (int)samples, r, &q[MAXSENS * n + i], &q[AVGSENS * n + i], &err) !=
            VS_OK ||
        vs_local_lipschitz(reexplain_row, re, row, a, po->target, lsigma, (int)samples, r, &q[LIPSCHITZ * n + i], &err) != VS_OK)
        return vs_fail("row %lld: robustness with %s: %s", (long long)i, re->m->name, err.msg);
    int64_t classes = n_outputs(c, row), mh = row->ndim == 4 ? row->shape[2] : 1, mw = row->ndim == 4 ? row->shape[3] : dim;
    if (classes >= 2 && vs_random_logit(reexplain_row, re, row, a, po->target, classes, mh, mw, r, &q[LOGIT * n + i], &err) != VS_OK)
        return vs_fail("row %lld: random logit with %s: %s", (long long)i, re->m->name, err.msg);
    q[INVARIANCE * n + i] = vs_input_invariance_shift(&c->fn, c->model, reexplain_row, re, row, a, po->target, re->contrast, shift, &err);
    return 0;
}

static int run_evaluate(int argc, char **argv)
{
    vs_args a;
    int rc = vs_args_parse("evaluate", evaluate_opts, argc, argv, &a);
    if (rc) return rc;
    if (a.n_pos) return vs_usage_error("evaluate", "unexpected argument '%s'", a.pos[0]);
    const char *model_dir = vs_args_get(&a, "model"), *input = vs_args_get(&a, "input"), *apath = vs_args_get(&a, "attributions");
    if (!model_dir || !input || !apath) return vs_usage_error("evaluate", "--model, --input and --attributions are required");
    int64_t target, contrast, per_step, L, edge, seed;
    if ((rc = vs_args_int(&a, "target", -1, 0, 1 << 30, &target)) || (rc = vs_args_int(&a, "contrast", -1, 0, 1 << 30, &contrast)) ||
        (rc = vs_args_int(&a, "per-step", 1, 1, 1 << 30, &per_step)) || (rc = vs_args_int(&a, "aopc-steps", 100, 0, 1 << 30, &L)) ||
        (rc = vs_args_int(&a, "edge", 0, 1, 100000, &edge)) || (rc = vs_args_int(&a, "seed", 0, 0, INT64_MAX, &seed)))
        return rc;
    int64_t top_k, samples;
    double radius, lsigma, shift, eps;
    if ((rc = vs_args_int(&a, "top-k", 1000, 1, INT64_MAX, &top_k)) || (rc = vs_args_int(&a, "samples", 10, 1, 1000000, &samples)) ||
        (rc = vs_args_float(&a, "radius", 0.2, 0, 1e6, &radius)) || (rc = vs_args_float(&a, "lipschitz-sigma", 0.1, 1e-12, 1e6, &lsigma)) ||
        (rc = vs_args_float(&a, "input-shift", -1, -1e6, 1e6, &shift)) || (rc = vs_args_float(&a, "eps", 1e-5, 0, 1e6, &eps)))
        return rc;
    const char *remethod = vs_args_get(&a, "method");
    reexplain re = {.m = remethod ? vs_method_find(remethod) : NULL, .contrast = contrast};
    if (remethod && (!re.m || re.m->output != VS_OUTPUT_FEATURES))
        return vs_usage_error("evaluate", "--method expects a feature method of the registry (versus help attribute), got '%s'", remethod);
    if (vs_args_has(&a, "mask") && vs_args_has(&a, "mask-data")) return vs_usage_error("evaluate", "give --mask or --mask-data, not both");
    const char *cascade = vs_args_get(&a, "cascade");
    const vs_method *cascade_method = cascade ? vs_method_find(cascade) : NULL;
    if (cascade && (!cascade_method || cascade_method->output != VS_OUTPUT_FEATURES))
        return vs_usage_error("evaluate", "--cascade expects a feature method of the registry (versus help attribute), got '%s'", cascade);
    const char *replace = vs_args_get(&a, "replace");
    bool zero_replace = replace && strcmp(replace, "zero") == 0;
    if (replace && !zero_replace && strcmp(replace, "one-minus") != 0 && !strstr(replace, ".npy"))
        return vs_usage_error("evaluate", "--replace expects one-minus, zero or FILE.npy, got '%s'", replace);

    eval_ctx c = {0};
    vs_error err;
    rc = 0;
    if (!(c.model = vs_model_load(model_dir, NULL, &err))) return vs_fail("%s", err.msg);
    if (vs_npy_read_finite(input, &c.x, &err) != VS_OK || vs_npy_read_finite(apath, &c.attr, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (rc == 0 && vs_args_get(&a, "reference") && vs_npy_read_finite(vs_args_get(&a, "reference"), &c.reference, &err) != VS_OK)
        rc = vs_fail("%s", err.msg);
    if (rc == 0 && c.x->ndim >= 2 && is_interactions(c.x, c.attr)) {
        if (vs_args_has(&a, "shard") || vs_args_has(&a, "resume")) {
            rc = vs_usage_error("evaluate", "--shard and --resume apply to feature attributions, not interactions (%s)", apath);
            goto done;
        }
        rc = evaluate_interactions(&a, &c, apath, target, contrast);
        goto done;
    }
    if (rc == 0 && vs_args_has(&a, "report"))
        rc = vs_usage_error("evaluate", "--report draws interaction matrices [N, F, F]; for attributions of the input's shape use --heatmaps "
                                        "and --curves");
    if (rc == 0 && (c.x->ndim < 2 || !vs_same_shape(c.x, c.attr)))
        rc = vs_fail("%s: attributions must have the shape of the inputs %s (or be interactions [N, F, F])", apath, input);
    if (rc == 0 && vs_module_compares_pairs(c.model) && !c.reference) rc = vs_fail("%s compares pairs: give --reference R.npy", model_dir);
    int64_t n = rc == 0 ? c.x->shape[0] : 0, dim = n ? c.x->size / n : 0;
    if (rc == 0 && replace && !zero_replace && strcmp(replace, "one-minus") != 0) {
        if (vs_npy_read_finite(replace, &c.replace, &err) != VS_OK)
            rc = vs_fail("%s", err.msg);
        else if (c.replace->size != dim)
            rc = vs_fail("%s: the replacement must have the shape of one input row", replace);
    }
    uint8_t *mask = NULL; /* [n * dim] or [dim] (mask_rows 1) */
    int64_t mask_rows = 0;
    const char *mpath = vs_args_get(&a, "mask"), *mspec = vs_args_get(&a, "mask-data");
    if (rc == 0 && mpath) {
        vs_tensor *mt = NULL;
        if (vs_npy_read_finite(mpath, &mt, &err) != VS_OK)
            rc = vs_fail("%s", err.msg);
        else if (mt->size != dim && mt->size != n * dim)
            rc = vs_fail("%s: the mask must have one input row's %lld elements or all %lld rows'", mpath, (long long)dim, (long long)(n * dim));
        else if (!(mask = malloc((size_t)mt->size)))
            rc = vs_fail("out of memory");
        for (int64_t i = 0; rc == 0 && i < mt->size; i++) mask[i] = mt->data[i] != 0;
        mask_rows = mt && mt->size == n * dim && n > 1 ? n : 1;
        vs_tensor_free(mt);
    } else if (rc == 0 && mspec) {
        vs_data_flags df = {.seed = 1};
        vs_dataset *d = NULL;
        if (vs_load_spec(mspec, &df, &d, &err) != VS_OK)
            rc = vs_fail("%s", err.msg);
        else if (!d->feature_truth || d->dim != dim)
            rc = vs_fail("%s: no planted mask of %lld elements (synthetic data with a truth mask, e.g. synthetic-shapes)", mspec, (long long)dim);
        else if (!(mask = malloc((size_t)dim)))
            rc = vs_fail("out of memory");
        for (int64_t i = 0; rc == 0 && i < dim; i++) mask[i] = d->feature_truth[i] != 0;
        mask_rows = 1;
        vs_dataset_free(d);
    }
    if (rc) {
        free(mask);
        goto done;
    }
    c.ex.module = c.model;
    c.ex.reference = c.reference;
    c.fn = vs_model_fn_from_module(&c.ex);

    double *aopc_l = calloc((size_t)n, sizeof(double)), *aopc_all = calloc((size_t)n, sizeof(double)),
           *gini = calloc((size_t)n, sizeof(double)), *faith = calloc((size_t)n, sizeof(double)),
           *mono = calloc((size_t)n, sizeof(double)), *loc = calloc((size_t)n, sizeof(double));
    int64_t np = (dim + per_step - 1) / per_step + 1;
    double *mean_curve = calloc((size_t)np, sizeof(double));
    /* the Quantus families, per row (NAN where a metric does not apply or is not asked for) */
    enum { Q_COMPLEXITY, Q_EFFECTIVE, Q_NONSENS, Q_POINTING, Q_MASS, Q_RANK, Q_TOPK, Q_AUC, Q_MAXSENS, Q_AVGSENS, Q_LIPSCHITZ, Q_LOGIT,
           Q_INVARIANCE, NQ };
    static const char *const qnames[NQ] = {"complexity", "effective_complexity", "non_sensitivity", "pointing_game", "relevance_mass",
                                           "relevance_rank", "top_k_intersection", "auc", "max_sensitivity", "avg_sensitivity",
                                           "local_lipschitz", "random_logit_ssim", "input_invariance"};
    double *q = malloc((size_t)(NQ * n) * sizeof *q);
    for (int64_t k = 0; q && k < NQ * n; k++) q[k] = NAN;
    re.fn = &c.fn;
    if (!aopc_l || !aopc_all || !gini || !faith || !mono || !loc || !mean_curve || !q) rc = vs_fail("out of memory");
    int nd = c.x->ndim;
    int64_t row_shape[VS_MAX_DIMS];
    memcpy(row_shape, c.x->shape, sizeof row_shape);
    row_shape[0] = 1;
    int64_t targets_used = -1;
    vs_cli_run cr;
    vs_run *run = NULL;
    if (rc == 0 && (rc = vs_cli_run_opts(&a, vs_args_get(&a, "out"), (uint64_t)seed, "rows", argc, argv, &cr)) == 0 && cr.o.path &&
        vs_run_open(&cr.o, n, &run, &err) != VS_OK)
        rc = err.code == VS_ERR_ARG ? vs_usage_error("evaluate", "%s", err.msg) : vs_fail("%s", err.msg);
    /* a row's record: aopc_L, aopc_all, gini, faithfulness, monotonicity, inverse localisation, the
     * Quantus metrics, then its target, the points of its curve and the curve */
    enum { N_PLAIN = 6 };
    double *plain[N_PLAIN] = {aopc_l, aopc_all, gini, faith, mono, loc};
    vs_item_buf item = {0};
    size_t len;
    int64_t begin = run ? vs_run_begin(run) : 0, end = run ? vs_run_end(run) : n;
    for (int64_t i = begin; i < end && rc == 0; i++) {
        if (run && vs_run_get(run, i, &len)) continue; /* done before a kill */
        vs_rng qr; /* the row's own stream: the same whatever shard or resumed run scores it */
        vs_rng_seed(&qr, vs_item_seed((uint64_t)seed, i));
        vs_scope_begin();
        vs_tensor *row = vs_tensor_from(nd, row_shape, c.x->data + i * dim);
        vs_tensor *arow = vs_tensor_from(nd, row_shape, c.attr->data + i * dim);
        vs_tensor *zeros = zero_replace ? vs_tensor_zeros(nd, row_shape) : NULL;
        vs_perturb_opts po;
        vs_perturb_opts_init(&po);
        po.target = c.model->kind == VS_MODULE_SIAMESE ? 0 : target >= 0 ? target : vs_predicted_class(&c.fn, row);
        if (po.target < 0 && vs_module_compares_pairs(c.model)) po.target = 0; /* a pair head's one score ([N] or [N, 1]) */
        po.contrast = contrast;
        po.per_step = per_step;
        po.replace = zero_replace ? zeros : c.replace;
        double *curve = NULL;
        int64_t npts = 0;
        if (vs_perturbation_curve(&c.fn, row, arow, &po, &curve, &npts, &err) != VS_OK ||
            vs_faithfulness_monotonicity(&c.fn, row, arow, &po, &faith[i], &mono[i], &err) != VS_OK) {
            rc = vs_fail("row %lld: %s", (long long)i, err.msg);
        } else {
            aopc_l[i] = vs_aopc(curve, npts, L);
            aopc_all[i] = vs_aopc(curve, npts, -1);
            gini[i] = vs_gini(arow->data, dim);
            loc[i] = NAN;
            if (nd == 4) {
                int64_t w = row_shape[3], e = edge ? edge : (w + 6) / 7;
                loc[i] = vs_inverse_localization(arow->data, row_shape[1], row_shape[2], w, e);
            }
            rc = quantus_row(&c, &re, row, arow->data, &po, i, n, mask ? mask + (mask_rows > 1 ? i * dim : 0) : NULL, top_k, samples, radius,
                             lsigma, shift, eps, &qr, q);
        }
        if (rc == 0) {
            int64_t ints[2] = {po.target, npts < np ? npts : np};
            vs_item_buf_reset(&item);
            for (int k = 0; k < N_PLAIN; k++) vs_item_put_f64(&item, &plain[k][i], 1);
            for (int k = 0; k < NQ; k++) vs_item_put_f64(&item, &q[k * n + i], 1);
            vs_item_put_i64(&item, ints, 2);
            vs_item_put_f64(&item, curve, (size_t)ints[1]);
            if (run && vs_run_put(run, i, &item, &err) != VS_OK) rc = vs_fail("%s", err.msg);
        }
        /* without a journal (no --out) the row is summed at once */
        for (int64_t k = 0; rc == 0 && !run && k < npts && k < np; k++) mean_curve[k] += curve[k] / n;
        if (!run) targets_used = po.target;
        free(curve);
        vs_scope_end();
    }
    vs_item_buf_clear(&item);
    if (rc == 0 && run && vs_run_sharded(run)) {
        if (vs_run_finish(run, &err) != VS_OK) rc = vs_fail("%s", err.msg);
        else fprintf(stderr, "versus: wrote rows %lld..%lld of %lld to %s (versus merge joins the shards)\n", (long long)begin,
                     (long long)end - 1, (long long)n, cr.path);
        vs_run_free(run);
        run = NULL;
        cascade = NULL;
        n = 0; /* nothing else to write */
    }
    /* every row from the journal, in order */
    for (int64_t i = 0; rc == 0 && run && i < n; i++) {
        const unsigned char *p = vs_run_get(run, i, &len);
        vs_item_reader rd = {p, p ? len : 0, 0, false};
        int64_t ints[2] = {0, 0};
        for (int k = 0; k < N_PLAIN; k++) vs_item_get_f64(&rd, &plain[k][i], 1);
        for (int k = 0; k < NQ; k++) vs_item_get_f64(&rd, &q[k * n + i], 1);
        vs_item_get_i64(&rd, ints, 2);
        if (!rd.bad && (ints[1] < 0 || ints[1] > np)) rd.bad = true;
        for (int64_t k = 0; !rd.bad && k < ints[1]; k++) {
            double v;
            vs_item_get_f64(&rd, &v, 1);
            mean_curve[k] += v / n;
        }
        if (rd.bad || rd.pos != rd.len) rc = vs_fail("%s: the record of row %lld does not fit this run", cr.path, (long long)i);
        targets_used = ints[0];
    }
    bool part = rc == 0 && run == NULL && cr.o.sharded;

    double cascade_rank[64], cascade_ssim[64];
    int n_layers = 0;
    if (rc == 0 && cascade) {
        /* parameterised layers of the sequential, output first */
        vs_module *seq = c.model->kind == VS_MODULE_SIAMESE ? vs_module_child(c.model, "encoder") : c.model;
        vs_tensor *const *layers[64];
        int n_params[64];
        for (int64_t l = seq->n_children - 1; l >= 0 && n_layers < 64; l--)
            if (seq->children[l]->n_params > 0) {
                layers[n_layers] = seq->children[l]->params;
                n_params[n_layers++] = seq->children[l]->n_params;
            }
        cascade_ctx k = {.c = &c, .m = cascade_method};
        vs_explain_request_init(&k.r);
        k.r.target = targets_used;
        k.r.contrast = contrast;
        k.row = vs_tensor_from(nd, row_shape, c.x->data); /* the first row */
        vs_rng r;
        vs_rng_seed(&r, (uint64_t)seed);
        int64_t mh = nd == 4 ? row_shape[2] : 1, mw = nd == 4 ? row_shape[3] : dim;
        if (vs_cascading_randomization(layers, n_params, n_layers, cascade_attribute, &k, mh, mw, &r, cascade_rank, cascade_ssim,
                                       &err) != VS_OK)
            rc = vs_fail("cascading randomisation: %s", err.msg);
        vs_tensor_free(k.row);
    }

    if (rc == 0 && !part) {
        const char *out = vs_args_get(&a, "out");
        vs_out fo;
        if (vs_out_open(&fo, out, &err) != VS_OK) {
            rc = vs_fail("%s", err.msg);
        } else {
            FILE *f = fo.f;
            const char *names[] = {"aopc_L", "aopc_all", "gini", "faithfulness", "monotonicity", "inverse_localization"}; /* gini = Quantus's sparseness */
            double *cols[] = {aopc_l, aopc_all, gini, faith, mono, loc};
            fprintf(f, "{\n  \"rows\": %lld,\n  \"aopc_steps\": %lld,\n  \"per_step\": %lld,\n  \"replace\": \"%s\",\n", (long long)n,
                    (long long)L, (long long)per_step, replace ? replace : "one-minus");
            for (int k = 0; k < 6; k++) put_column(f, names[k], cols[k], n);
            for (int k = 0; k < NQ; k++) put_column(f, qnames[k], q + k * n, n);
            if (cascade) {
                fprintf(f, "  \"cascading_randomization\": {\"method\": \"%s\", \"layers_top_down\": [", cascade);
                for (int l = 0; l < n_layers; l++) {
                    fprintf(f, "%s{\"rank_correlation\": ", l ? ", " : "");
                    vs_cli_put_num(f, cascade_rank[l]);
                    fputs(", \"ssim\": ", f);
                    vs_cli_put_num(f, cascade_ssim[l]);
                    fputs("}", f);
                }
                fputs("]},\n", f);
            }
            fputs("  \"mean_perturbation_curve\": [", f);
            for (int64_t k = 0; k < np; k++) {
                if (k) fputs(", ", f);
                vs_cli_put_num(f, mean_curve[k]);
            }
            fputs("]\n}\n", f);
            if (vs_out_commit(&fo, &err) != VS_OK) rc = vs_fail("%s", err.msg);
        }
    }
    if (rc == 0 && !part && vs_args_get(&a, "curves")) {
        vs_plot *p = vs_plot_new(VS_PLOT_LINE, "Perturbation curve (mean over rows)", "features flipped", "explained score");
        float *xs = malloc((size_t)np * sizeof *xs), *ys = malloc((size_t)np * sizeof *ys);
        if (!p || !xs || !ys) rc = vs_fail("out of memory");
        for (int64_t k = 0; rc == 0 && k < np; k++) {
            xs[k] = (float)(k * per_step < dim ? k * per_step : dim);
            ys[k] = (float)mean_curve[k];
        }
        if (rc == 0 && (vs_plot_add_series(p, apath, (size_t)np, xs, ys, NULL, &err) != VS_OK ||
                        vs_plot_write_svg(p, vs_args_get(&a, "curves"), &err) != VS_OK))
            rc = vs_fail("%s", err.msg);
        vs_plot_free(p);
        free(xs);
        free(ys);
    }
    if (rc == 0 && !part && vs_args_get(&a, "heatmaps")) rc = write_heatmaps(&c, vs_args_get(&a, "heatmaps"), n);
    if (rc == 0 && run && vs_run_finish(run, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    vs_run_free(run);
    free(aopc_l);
    free(aopc_all);
    free(gini);
    free(faith);
    free(mono);
    free(loc);
    free(mean_curve);
    free(q);
    free(mask);
done:
    vs_tensor_free(c.x);
    vs_tensor_free(c.attr);
    vs_tensor_free(c.reference);
    vs_tensor_free(c.replace);
    vs_module_free(c.model);
    return rc;
}

const vs_verb vs_verb_evaluate = {
    "evaluate",
    "score given attributions: faithfulness, complexity, localisation, robustness, randomisation, axioms",
    "usage: versus evaluate --model DIR --input X.npy --attributions A.npy [--reference R.npy] [--target C] [--contrast C2]\n"
    "         [--replace one-minus|zero|FILE.npy] [--per-step K] [--aopc-steps L] [--cascade METHOD]\n"
    "         [--mask M.npy | --mask-data SPEC] [--top-k K] [--method M [--samples N] [--radius R]\n"
    "         [--lipschitz-sigma S] [--input-shift C]] [--eps E] [--out summary.json] [--heatmaps grid.png]\n"
    "         [--curves curve.svg]\n"
    "       versus evaluate --model DIR --input X.npy --attributions G.npy [--reference R.npy] [--side S]\n"
    "         [--out summary.json] [--report DIR]     (interactions G [N, F, F])\n\n"
    "Scores attributions A of X per row and on average (JSON: mean, std, per_row; null where a metric does\n"
    "not apply).  A flip or replacement is 1 - x for inputs in [0,1], or the --replace value.  The Quantus\n"
    "name of each metric is in brackets.\n"
    "Faithfulness:\n"
    "  aopc_L, aopc_all      mean score drop as features are flipped in decreasing A, over the first L\n"
    "                        steps / all (Samek et al. 2017) [PixelFlipping, RegionPerturbation]\n"
    "  faithfulness          Pearson of A with single-feature score drops (Alvarez-Melis & Jaakkola 2018)\n"
    "                        [FaithfulnessCorrelation, one feature per subset]\n"
    "  monotonicity          Spearman of |A| with |drops| (Nguyen & Martinez 2020) [MonotonicityCorrelation]\n"
    "Complexity:\n"
    "  gini                  sparseness, the Gini index of |A| (Chalasani et al. 2020) [Sparseness]\n"
    "  complexity            entropy -sum p ln p of p = |A| / sum |A| (Bhatt et al. 2020) [Complexity]\n"
    "  effective_complexity  #features with |A| > eps (Nguyen & Martinez 2020) [EffectiveComplexity]\n"
    "Localisation (images: also inverse_localization, edge bands over centre, GANMEX appendix C), against\n"
    "the ground truth of --mask (non-zero = inside) or the planted mask of --mask-data (synthetic-shapes):\n"
    "  pointing_game         1 if a maximum of A lies inside (Zhang et al. 2018) [PointingGame]\n"
    "  relevance_mass        sum of A inside / sum of A (Arras et al. 2022) [RelevanceMassAccuracy]\n"
    "  relevance_rank        share of the |mask| highest A inside (Arras et al. 2022) [RelevanceRankAccuracy]\n"
    "  top_k_intersection    share of the --top-k highest A inside (Theiner et al. 2022) [TopKIntersection]\n"
    "  auc                   ROC AUC of A as a score for the mask (Fawcett 2006) [AUC]\n"
    "Robustness, re-explaining with --method (its defaults) over --samples perturbations:\n"
    "  max_sensitivity       max ||A(x+d) - A(x)|| / ||A(x)||, d ~ U(-radius, radius) (Yeh et al. 2019)\n"
    "  avg_sensitivity       the same averaged [MaxSensitivity, AvgSensitivity]\n"
    "  local_lipschitz       max ||A(x+d) - A(x)|| / ||d||, d ~ N(0, sigma^2) (Alvarez-Melis & Jaakkola 2018)\n"
    "                        [LocalLipschitzEstimate]\n"
    "Randomisation:\n"
    "  random_logit_ssim     SSIM of the --method map for the target and for a random other class (Sixt et\n"
    "                        al. 2020) [RandomLogit]; lower = class-sensitive\n"
    "  --cascade METHOD      re-draws the layers' weights from the output down; per layer, rank correlation\n"
    "                        and SSIM of the first row's maps by METHOD, a feature method of the registry\n"
    "                        at its defaults (versus help attribute) (Adebayo et al. 2018) [MPRT]\n"
    "Axioms:\n"
    "  non_sensitivity       #features whose |A| < eps while replacing them moves S by eps or more, or the\n"
    "                        reverse (Nguyen & Martinez 2020) [NonSensitivity]; 0 is best\n"
    "  input_invariance      1 if the --method map of x + shift, by the model whose first layer's bias\n"
    "                        absorbs the shift, equals A within 1e-4 (Kindermans et al. 2019)\n"
    "                        [InputInvariance]; give --method the method that produced A.  Null when the\n"
    "                        first layer cannot absorb the shift exactly (no bias, zero padding).\n"
    "Perturbation noise of row i is drawn from a stream seeded by --seed and i (the same in any shard).\n"
    "Interactions [N, F, F] (integrated_hessians, the Shapley-Taylor methods; query x reference features for\n"
    "pairs with --side both) are judged by completeness: the completeness gap sum G - (S(x) - S(x')) per\n"
    "row, the main-effect share (|G| on the diagonal) and, for both sides, the query-reference share.\n"
    "--report DIR writes a report directory (index.html, results.json, table.md, one SVG per matrix;\n"
    "`versus report DIR` rebuilds the page): the table per row and the matrices of the first 4 rows as\n"
    "heatmaps (red adds to the score, blue takes from it; over 40 features: the at most 40 with the largest\n"
    "non-zero interactions).",
    evaluate_opts,
    run_evaluate,
    NULL,
};
