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
    {"reference", 1, "Siamese model: the reference R.npy [1, ...] (interactions: or one row per input row)"},
    {"side", 1, "interactions of pairs: the side they explain, query (default), reference or both"},
    {"replace", 1, "what a flipped feature becomes: one-minus (1 - x, inputs in [0,1]; default), zero, or FILE.npy [1, ...]"},
    {"per-step", 1, "features flipped per perturbation-curve point (default 1)"},
    {"aopc-steps", 1, "L of AOPC_L (default 100)"},
    {"edge", 1, "inverse localisation: width of the left and right edge bands in pixels (default W/7)"},
    {"cascade", 1, "cascading randomisation with this attribution method (top layer down)"},
    {"seed", 1, "random seed of the cascading randomisation (default 0)"},
    {"out", 1, "summary JSON (default: standard output)"},
    {"heatmaps", 1, "write a PNG grid of inputs, overlays and heatmaps to this file"},
    {"curves", 1, "write the mean perturbation curve as SVG to this file"},
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

/* Cascading randomisation: parameterised layers of a sequential, output layer first. */
typedef struct cascade_ctx {
    eval_ctx *c;
    vs_attr_opts o;
    vs_tensor *row;
} cascade_ctx;

static vs_status cascade_attribute(void *ctx, vs_tensor **attr)
{
    cascade_ctx *k = ctx;
    vs_error err;
    return vs_attribute(&k->c->fn, k->row, &k->o, attr, NULL, &err);
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

/* Interactions are judged by their completeness: the matrix of each row sums to S(x) - S(x').  The
 * perturbation metrics rank single features and do not apply. */
static int evaluate_interactions(const vs_args *a, eval_ctx *c, const char *apath, int64_t target, int64_t contrast)
{
    static const char *const feature_only[] = {"replace", "per-step", "aopc-steps", "edge", "cascade", "heatmaps", "curves"};
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
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) {
        rc = vs_fail("%s: cannot write", out);
        goto out;
    }
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
    if (out && fclose(f) != 0) rc = vs_fail("%s: write failed", out);
out:
    free(gap);
    free(diag);
    free(cross);
    return rc;
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
    const char *cascade = vs_args_get(&a, "cascade");
    int cascade_method = cascade ? vs_attr_method_from_name(cascade) : -1;
    if (cascade && cascade_method < 0) return vs_usage_error("evaluate", "unknown --cascade method '%s'", cascade);
    const char *replace = vs_args_get(&a, "replace");
    bool zero_replace = replace && strcmp(replace, "zero") == 0;
    if (replace && !zero_replace && strcmp(replace, "one-minus") != 0 && !strstr(replace, ".npy"))
        return vs_usage_error("evaluate", "--replace expects one-minus, zero or FILE.npy, got '%s'", replace);

    eval_ctx c = {0};
    vs_error err;
    rc = 0;
    if (!(c.model = vs_model_load(model_dir, NULL, &err))) return vs_fail("%s", err.msg);
    if (vs_npy_read(input, &c.x, &err) != VS_OK || vs_npy_read(apath, &c.attr, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (rc == 0 && vs_args_get(&a, "reference") && vs_npy_read(vs_args_get(&a, "reference"), &c.reference, &err) != VS_OK)
        rc = vs_fail("%s", err.msg);
    if (rc == 0 && c.x->ndim >= 2 && is_interactions(c.x, c.attr)) {
        rc = evaluate_interactions(&a, &c, apath, target, contrast);
        goto done;
    }
    if (rc == 0 && (c.x->ndim < 2 || !vs_same_shape(c.x, c.attr)))
        rc = vs_fail("%s: attributions must have the shape of the inputs %s (or be interactions [N, F, F])", apath, input);
    if (rc == 0 && c.model->kind == VS_MODULE_SIAMESE && !c.reference) rc = vs_fail("%s is a Siamese model: give --reference R.npy", model_dir);
    int64_t n = rc == 0 ? c.x->shape[0] : 0, dim = n ? c.x->size / n : 0;
    if (rc == 0 && replace && !zero_replace && strcmp(replace, "one-minus") != 0) {
        if (vs_npy_read(replace, &c.replace, &err) != VS_OK)
            rc = vs_fail("%s", err.msg);
        else if (c.replace->size != dim)
            rc = vs_fail("%s: the replacement must have the shape of one input row", replace);
    }
    if (rc) goto done;
    c.ex.module = c.model;
    c.ex.reference = c.reference;
    c.fn = vs_model_fn_from_module(&c.ex);

    double *aopc_l = calloc((size_t)n, sizeof(double)), *aopc_all = calloc((size_t)n, sizeof(double)),
           *gini = calloc((size_t)n, sizeof(double)), *faith = calloc((size_t)n, sizeof(double)),
           *mono = calloc((size_t)n, sizeof(double)), *loc = calloc((size_t)n, sizeof(double));
    int64_t np = (dim + per_step - 1) / per_step + 1;
    double *mean_curve = calloc((size_t)np, sizeof(double));
    if (!aopc_l || !aopc_all || !gini || !faith || !mono || !loc || !mean_curve) rc = vs_fail("out of memory");
    int nd = c.x->ndim;
    int64_t row_shape[VS_MAX_DIMS];
    memcpy(row_shape, c.x->shape, sizeof row_shape);
    row_shape[0] = 1;
    int64_t targets_used = -1;
    for (int64_t i = 0; i < n && rc == 0; i++) {
        vs_scope_begin();
        vs_tensor *row = vs_tensor_from(nd, row_shape, c.x->data + i * dim);
        vs_tensor *arow = vs_tensor_from(nd, row_shape, c.attr->data + i * dim);
        vs_tensor *zeros = zero_replace ? vs_tensor_zeros(nd, row_shape) : NULL;
        vs_perturb_opts po;
        vs_perturb_opts_init(&po);
        po.target = c.model->kind == VS_MODULE_SIAMESE ? 0 : target >= 0 ? target : vs_predicted_class(&c.fn, row);
        po.contrast = contrast;
        po.per_step = per_step;
        po.replace = zero_replace ? zeros : c.replace;
        targets_used = po.target;
        double *curve = NULL;
        int64_t npts = 0;
        if (vs_perturbation_curve(&c.fn, row, arow, &po, &curve, &npts, &err) != VS_OK ||
            vs_faithfulness_monotonicity(&c.fn, row, arow, &po, &faith[i], &mono[i], &err) != VS_OK) {
            rc = vs_fail("row %lld: %s", (long long)i, err.msg);
        } else {
            aopc_l[i] = vs_aopc(curve, npts, L);
            aopc_all[i] = vs_aopc(curve, npts, -1);
            for (int64_t k = 0; k < npts && k < np; k++) mean_curve[k] += curve[k] / n;
            gini[i] = vs_gini(arow->data, dim);
            loc[i] = NAN;
            if (nd == 4) {
                int64_t w = row_shape[3], e = edge ? edge : (w + 6) / 7;
                loc[i] = vs_inverse_localization(arow->data, row_shape[1], row_shape[2], w, e);
            }
        }
        free(curve);
        vs_scope_end();
    }

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
        cascade_ctx k = {.c = &c};
        vs_attr_opts_init(&k.o, (vs_attr_method)cascade_method);
        k.o.target = targets_used;
        k.o.contrast = contrast;
        k.row = vs_tensor_from(nd, row_shape, c.x->data); /* the first row */
        vs_rng r;
        vs_rng_seed(&r, (uint64_t)seed);
        int64_t mh = nd == 4 ? row_shape[2] : 1, mw = nd == 4 ? row_shape[3] : dim;
        if (vs_cascading_randomization(layers, n_params, n_layers, cascade_attribute, &k, mh, mw, &r, cascade_rank, cascade_ssim,
                                       &err) != VS_OK)
            rc = vs_fail("cascading randomisation: %s", err.msg);
        vs_tensor_free(k.row);
    }

    if (rc == 0) {
        const char *out = vs_args_get(&a, "out");
        FILE *f = out ? fopen(out, "w") : stdout;
        if (!f) {
            rc = vs_fail("%s: cannot write: %s", out, strerror(errno));
        } else {
            const char *names[] = {"aopc_L", "aopc_all", "gini", "faithfulness", "monotonicity", "inverse_localization"};
            double *cols[] = {aopc_l, aopc_all, gini, faith, mono, loc};
            fprintf(f, "{\n  \"rows\": %lld,\n  \"aopc_steps\": %lld,\n  \"per_step\": %lld,\n  \"replace\": \"%s\",\n", (long long)n,
                    (long long)L, (long long)per_step, replace ? replace : "one-minus");
            for (int k = 0; k < 6; k++) {
                double m, sd;
                stats(cols[k], n, &m, &sd);
                fprintf(f, "  \"%s\": {\"mean\": ", names[k]);
                vs_cli_put_num(f, m);
                fputs(", \"std\": ", f);
                vs_cli_put_num(f, sd);
                fputs(", \"per_row\": [", f);
                for (int64_t i = 0; i < n; i++) {
                    if (i) fputs(", ", f);
                    vs_cli_put_num(f, cols[k][i]);
                }
                fputs("]},\n", f);
            }
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
            if (out && fclose(f) != 0) rc = vs_fail("%s: write failed", out);
        }
    }
    if (rc == 0 && vs_args_get(&a, "curves")) {
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
    if (rc == 0 && vs_args_get(&a, "heatmaps")) rc = write_heatmaps(&c, vs_args_get(&a, "heatmaps"), n);
    free(aopc_l);
    free(aopc_all);
    free(gini);
    free(faith);
    free(mono);
    free(loc);
    free(mean_curve);
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
    "score given attributions: AOPC, Gini, faithfulness, monotonicity, localisation, sanity checks",
    "usage: versus evaluate --model DIR --input X.npy --attributions A.npy [--target C] [--contrast C2]\n"
    "         [--replace one-minus|zero|FILE.npy] [--per-step K] [--aopc-steps L] [--cascade METHOD]\n"
    "         [--out summary.json] [--heatmaps grid.png] [--curves curve.svg]\n\n"
    "Flips features in decreasing attribution order (a flip is 1 - x for inputs in [0,1], or the\n"
    "--replace value) and reports per row and on average: AOPC over the first L steps and over all\n"
    "features, Gini sparsity of |A|, faithfulness (Pearson of A with single-feature score drops),\n"
    "monotonicity (Spearman of |A| with |drops|), and for images the inverse localisation (mean |A| on\n"
    "the left/right edge bands over the centre; lower = more localised).  --cascade METHOD re-draws the\n"
    "layers' weights from the output down and reports, per layer, the rank correlation and SSIM between\n"
    "the original and the randomised maps of the first row (Adebayo et al.).",
    evaluate_opts,
    run_evaluate,
    NULL,
};
