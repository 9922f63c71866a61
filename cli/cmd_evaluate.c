/* cmd_evaluate.c - `versus evaluate`: how good are given attributions (GANMEX 4.1 and appendix C)? */
#include "cli/cli.h"
#include "versus/versus.h"

#include <stdio.h>
#include <string.h>

static const vs_cli_opt evaluate_opts[] = {
    {"model", 1, "model directory"},
    {"input", 1, "inputs X.npy [N, ...]"},
    {"attributions", 1, "attributions A.npy, the shape of X; or interactions [N, F, F] (completeness only)"},
    VS_OUTPUT_CLI_OPTS,
    {"contrast", 1, "one-vs-one: the score is S_target - S_contrast"},
    {"reference", 1, "pair models (Siamese, or a composite with two inputs): the reference R.npy [1, ...] (interactions: or one row per input row)"},
    {"side", 1, "interactions of pairs: the side they explain, query (default), reference or both"},
    {"replace", 1, "what a flipped feature becomes: zero (default: the zero baseline), one-minus (1 - x, inputs in [0,1]), or FILE.npy [1, ...] (the baseline the map was made against)"},
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
    {"out", 1, "the full summary JSON (default: A's path with .evaluation.json for .npy; - for standard output)"},
    {"heatmaps", 1, "write a labelled PNG of the first 16 rows (input, map on a colour-blind-safe scale centred at 0, overlay, scores, colour bar)"},
    {"curves", 1, "write the mean perturbation curve as SVG to this file"},
    VS_RUN_CLI_OPTS,
    {"report", 1, "interactions: a report directory with the matrices of the first rows (index.html, SVG, results.json)"},
    {NULL, 0, NULL},
};

/* The summary (versus/evaluate.h) as `versus evaluate --out` has always written it: the members of
 * data in order (skip left out), each value on one line; before the members in `breaks` (NULL: every
 * member) a line break, which opens with `indent`. */
static void put_value(FILE *f, const vs_json *v)
{
    if (v->type == VS_JSON_NUMBER && v->is_int) fprintf(f, "%lld", (long long)v->integer);
    else if (v->type == VS_JSON_NUMBER) vs_cli_put_num(f, v->number);
    else if (v->type == VS_JSON_STRING) fprintf(f, "\"%s\"", v->string);
    else if (v->type == VS_JSON_BOOL) fputs(v->boolean ? "true" : "false", f);
    else if (v->type == VS_JSON_ARRAY || v->type == VS_JSON_OBJECT) {
        bool obj = v->type == VS_JSON_OBJECT;
        fputc(obj ? '{' : '[', f);
        for (size_t i = 0; i < v->n; i++) {
            if (i) fputs(", ", f);
            if (obj) fprintf(f, "\"%s\": ", v->members[i].key);
            put_value(f, obj ? v->members[i].value : v->items[i]);
        }
        fputc(obj ? '}' : ']', f);
    } else {
        fputs("null", f);
    }
}

static bool listed(const char *const *names, const char *key)
{
    for (; names && *names; names++)
        if (strcmp(*names, key) == 0) return true;
    return false;
}

static int put_summary(const char *path, const vs_json *data, const char *open, const char *indent, const char *const *breaks,
                       const char *const *skip, const char *close)
{
    vs_out fo;
    vs_error err;
    if (vs_out_open(&fo, path, &err) != VS_OK) return vs_fail("%s", err.msg);
    fputs(open, fo.f);
    bool first = true;
    for (size_t i = 0; i < data->n; i++) {
        if (listed(skip, data->members[i].key)) continue;
        if (!first) fputs(breaks && !listed(breaks, data->members[i].key) ? ", " : ",\n", fo.f);
        if (!first && (!breaks || listed(breaks, data->members[i].key))) fputs(indent, fo.f);
        fprintf(fo.f, "\"%s\": ", data->members[i].key);
        put_value(fo.f, data->members[i].value);
        first = false;
    }
    fputs(close, fo.f);
    return vs_out_commit(&fo, &err) != VS_OK ? vs_fail("%s", err.msg) : 0;
}

/* The flags into o (defaults: vs_evaluate_opts_init); 0, or 2 after a usage message. */
static int evaluate_flags(const vs_args *a, vs_evaluate_opts *o)
{
    vs_evaluate_opts_init(o);
    int64_t seed;
    int rc;
    if ((rc = vs_cli_output_flags(a, &o->target, &o->targets, &o->target_mask, &o->score)) ||
        (rc = vs_args_int(a, "contrast", -1, 0, 1 << 30, &o->contrast)) ||
        (rc = vs_args_int(a, "per-step", 1, 1, 1 << 30, &o->per_step)) || (rc = vs_args_int(a, "aopc-steps", 100, 0, 1 << 30, &o->aopc_steps)) ||
        (rc = vs_args_int(a, "edge", 0, 1, 100000, &o->edge)) || (rc = vs_args_int(a, "seed", 0, 0, INT64_MAX, &seed)) ||
        (rc = vs_args_int(a, "top-k", 1000, 1, INT64_MAX, &o->top_k)) || (rc = vs_args_int(a, "samples", 10, 1, 1000000, &o->samples)) ||
        (rc = vs_args_float(a, "radius", 0.2, 0, 1e6, &o->radius)) ||
        (rc = vs_args_float(a, "lipschitz-sigma", 0.1, 1e-12, 1e6, &o->lipschitz_sigma)) ||
        (rc = vs_args_float(a, "input-shift", -1, -1e6, 1e6, &o->input_shift)) || (rc = vs_args_float(a, "eps", 1e-5, 0, 1e6, &o->eps)))
        return rc;
    o->seed = (uint64_t)seed;
    o->model = vs_args_get(a, "model");
    o->input = vs_args_get(a, "input");
    o->attributions = vs_args_get(a, "attributions");
    o->reference = vs_args_get(a, "reference");
    o->replace = vs_args_get(a, "replace");
    o->cascade = vs_args_get(a, "cascade");
    o->mask = vs_args_get(a, "mask");
    o->mask_data = vs_args_get(a, "mask-data");
    o->method = vs_args_get(a, "method");
    o->heatmaps = vs_args_get(a, "heatmaps");
    o->curves = vs_args_get(a, "curves");
    const char *side = vs_args_get(a, "side");
    int sd = side ? vs_side_from_name(side) : VS_SIDE_QUERY;
    if (sd < 0) return vs_usage_error("evaluate", "--side expects query, reference or both, got '%s'", side);
    o->side = (vs_side)sd;
    if (!o->model || !o->input || !o->attributions) return vs_usage_error("evaluate", "--model, --input and --attributions are required");
    return 0;
}

/* A metric's mean and std of the summary's member v ({mean, std, per_row}), as a table line. */
static void put_mean_line(const char *name, const vs_json *v)
{
    const vs_json *m = vs_json_get(v, "mean"), *sd = vs_json_get(v, "std");
    if (!m || m->type != VS_JSON_NUMBER) return; /* null: the metric does not apply, or was not asked for */
    printf("  %-22s %12.4g", name, m->number);
    if (sd && sd->type == VS_JSON_NUMBER) printf(" %12.4g", sd->number);
    putchar('\n');
}

/* Standard output's short table: per metric that applies its mean and std (interactions: the
 * completeness gaps), and where the full summary is. */
static void put_table(const vs_json *d, const char *path, bool inter)
{
    const vs_json *rows = vs_json_get(d, "rows"), *rep = vs_json_get(d, "replace");
    printf("%lld rows", rows && rows->type == VS_JSON_NUMBER ? (long long)rows->integer : 0LL);
    if (rep && rep->type == VS_JSON_STRING) printf("; a flipped feature becomes %s", rep->string);
    printf("; the full summary (per row, the mean perturbation curve) is in %s\n", path);
    if (inter) {
        const vs_json *c = vs_json_get(d, "completeness");
        for (size_t i = 0; c && c->type == VS_JSON_OBJECT && i < c->n; i++)
            if (c->members[i].value->type == VS_JSON_NUMBER) printf("  %-22s %12.4g\n", c->members[i].key, c->members[i].value->number);
        return;
    }
    printf("  %-22s %12s %12s\n", "metric", "mean", "std");
    for (size_t i = 0; i < d->n; i++)
        if (d->members[i].value->type == VS_JSON_OBJECT && vs_json_get(d->members[i].value, "per_row"))
            put_mean_line(d->members[i].key, d->members[i].value);
}

/* Where the full summary goes: --out, standard output for "-", else A.npy's path as A.evaluation.json
 * (into buf). */
static const char *summary_path(const vs_args *a, char *buf, size_t n)
{
    const char *out = vs_args_get(a, "out"), *attr = vs_args_get(a, "attributions");
    if (out) return strcmp(out, "-") == 0 ? NULL : out;
    size_t len = strlen(attr);
    if (len > 4 && strcmp(attr + len - 4, ".npy") == 0) len -= 4;
    snprintf(buf, n, "%.*s.evaluation.json", (int)len, attr);
    return buf;
}

/* The summary to its file (summary_path) and the short table to standard output, and the
 * interactions' report directory. */
static int evaluate_outputs(const vs_args *a, const vs_report *r)
{
    static const char *const inter_breaks[] = {"completeness", "main_effect_share", "gaps", NULL}, *const inter_skip[] = {"attributions", NULL};
    const vs_json *kind = vs_json_get(r->data, "output");
    bool inter = kind && kind->type == VS_JSON_STRING && strcmp(kind->string, "interactions") == 0;
    const char *dir = vs_args_get(a, "report");
    vs_error err;
    if (dir && !inter)
        return vs_usage_error("evaluate", "--report draws interaction matrices [N, F, F]; for attributions of the input's shape use --heatmaps "
                                          "and --curves");
    char buf[4096];
    const char *path = summary_path(a, buf, sizeof buf);
    int rc = inter ? put_summary(path, r->data, "{", " ", inter_breaks, inter_skip, "}\n")
                   : put_summary(path, r->data, "{\n  ", "  ", NULL, NULL, "\n}\n");
    if (rc == 0 && path) put_table(r->data, path, inter);
    if (rc == 0 && dir && vs_report_write_dir(r, dir, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    return rc;
}

static int run_evaluate(int argc, char **argv)
{
    vs_args a;
    int rc = vs_args_parse("evaluate", evaluate_opts, argc, argv, &a);
    if (rc) return rc;
    if (a.n_pos) return vs_usage_error("evaluate", "unexpected argument '%s'", a.pos[0]);
    vs_evaluate_opts o;
    vs_cli_run cr;
    if ((rc = evaluate_flags(&a, &o)) || (rc = vs_cli_run_opts(&a, vs_args_get(&a, "out"), o.seed, "rows", argc, argv, &cr))) return rc;
    vs_run *run = NULL;
    o.run = cr.o.path ? &cr.o : NULL;
    o.journal = &run;
    vs_report *r = NULL;
    vs_error err;
    if (vs_evaluate(&o, &r, &err) != VS_OK) rc = err.code == VS_ERR_ARG ? vs_usage_error("evaluate", "%s", err.msg) : vs_fail("%s", err.msg);
    else if (r) rc = evaluate_outputs(&a, r);
    else if (vs_run_finish(run, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    else fprintf(stderr, "versus: wrote rows %lld..%lld of %lld to %s (versus merge joins the shards)\n", (long long)vs_run_begin(run),
                 (long long)vs_run_end(run) - 1, (long long)vs_run_items(run), cr.path);
    if (rc == 0 && r && run && vs_run_finish(run, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    vs_run_free(run);
    vs_report_free(r);
    return rc;
}

const vs_verb vs_verb_evaluate = {
    "evaluate",
    "score given attributions: faithfulness, complexity, localisation, robustness, randomisation, axioms",
    "usage: versus evaluate --model DIR --input X.npy --attributions A.npy [--reference R.npy] [--target C|T.npy]\n"
    "         [--target-mask M.npy | --score sum|norm|reconstruction] [--contrast C2]\n"
    "         [--replace zero|one-minus|FILE.npy] [--per-step K] [--aopc-steps L] [--cascade METHOD]\n"
    "         [--mask M.npy | --mask-data SPEC] [--top-k K] [--method M [--samples N] [--radius R]\n"
    "         [--lipschitz-sigma S] [--input-shift C]] [--eps E] [--out summary.json] [--heatmaps grid.png]\n"
    "         [--curves curve.svg]\n"
    "       versus evaluate --model DIR --input X.npy --attributions G.npy [--reference R.npy] [--side S]\n"
    "         [--out summary.json] [--report DIR]     (interactions G [N, F, F])\n\n"
    "Scores attributions A of X per row and on average.  Standard output gets a table of each metric's\n"
    "mean and std; the full summary (JSON: mean, std, per_row, null where a metric does not apply, and the\n"
    "mean perturbation curve) goes to --out, by default A.evaluation.json beside A.npy.  --target, as in\n"
    "versus attribute, is a class, an element of a flattened output, or T.npy per row; --target-mask and\n"
    "--score explain a scalar of the output (see versus help attribute).  A flipped (replaced) feature becomes 0 by default - the baseline of zero-baseline methods,\n"
    "so a faithful map of integrated gradients or DeepLIFT makes the score fall; give --replace FILE.npy\n"
    "for the baseline a map was made against, or one-minus (1 - x, inputs in [0,1]).  The Quantus\n"
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
