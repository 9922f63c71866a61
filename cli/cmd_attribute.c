/* cmd_attribute.c - `versus attribute`: attributions of a saved model's inputs (docs/formats/outputs.md): the
 * flags (the registry's methods' options among them) mapped to vs_attribute_run (versus/attribute_run.h),
 * and its explanation and report written. */
#include "cli/cli.h"
#include "versus/versus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The verb's own flags; the methods' options follow them in attribute_opts (vs_cli_attribute_init). */
static const vs_cli_opt common_opts[] = {
    {"model", 1, "model directory (model.json + model.safetensors)"},
    {"input", 1, "inputs X.npy [N, ...]"},
    {"method", 1, "a method of the registry (listed above)"},
    VS_OUTPUT_CLI_OPTS,
    {"contrast", 1, "one-vs-one: explain S_target - S_contrast"},
    {"reference", 1, "pair models (Siamese, or a composite with two inputs): R.npy, one row [1, ...] for every query or one per row [N, ...]"},
    {"side", 1, "with --reference: query (default), reference, or both (one joint explanation [N, 2, ...])"},
    {"baseline", 1, "zero, max, min, mean, blur, uniform, mdts, gan:DIR (GANMEX), or FILE.npy (default zero); per side for pairs"},
    {"blur-sigma", 1, "blur baseline: Gaussian sigma in pixels (default 5)"},
    {"baseline-data", 1, "SPEC of training data for the mdts baseline and --class-baselines"},
    {"class-baselines", 1, "baseline-set methods: K baselines drawn from the target class of --baseline-data"},
    {"baselines", 1, "baseline-set methods: a set of baselines B.npy [B, ...]"},
    {"segments", 1, "coalition methods on images: N SLIC superpixels as features"},
    {"feature-mask", 1, "feature-group methods: M.npy of one row's shape, the group (an integer >= 0) of every element"},
    {"seed", 1, "random seed (default 0)"},
    {"report", 1, "write the run's completeness/efficiency gap, evaluations and time as JSON"},
    {"png", 1, "images [N,C,H,W]: a labelled picture of the first 16 rows (input, map, overlay; method, target, score; colour bar)"},
    {"html", 1, "a report directory DIR/index.html: the rows' table and, for images, the --png picture; for tabular rows a bar chart of "
                "the largest attributions per row (the first 8 rows)"},
    {"feature-names", 1, "tabular --html: a text file of one feature name per line (default x0, x1, ...)"},
    {"out", 1, "the explanation A.npy: the shape of X (side both: [N, 2, ...]); interactions [N, F, F]"},
    VS_RUN_CLI_OPTS,
};

#define N_COMMON ((int)(sizeof common_opts / sizeof common_opts[0]))
#define MAX_OPTS 160

static vs_cli_opt attribute_opts[MAX_OPTS];
static char option_help[MAX_OPTS][1200];

/* Help of option `name` into buf: the methods that take it, grouped by what it means to each
 * ("smoothgrad, noise_tunnel: noisy copies; kernel_shap, lime: coalitions evaluated; ..."). */
static void option_meaning(const char *name, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < vs_method_count() && o < n; i++) {
        const vs_method_param *p = vs_method_param_find(vs_method_at(i), name);
        bool first = p != NULL;
        for (int k = 0; first && k < i; k++) { /* a meaning is listed where it first appears */
            const vs_method_param *q = vs_method_param_find(vs_method_at(k), name);
            first = !q || strcmp(q->help, p->help) != 0;
        }
        if (!first) continue;
        o += (size_t)snprintf(buf + o, n - o, "%s", o ? "; " : "");
        for (int k = i; k < vs_method_count() && o < n; k++) {
            const vs_method_param *q = vs_method_param_find(vs_method_at(k), name);
            if (q && strcmp(q->help, p->help) == 0) o += (size_t)snprintf(buf + o, n - o, "%s%s", k > i ? ", " : "", vs_method_at(k)->name);
        }
        if (o < n) o += (size_t)snprintf(buf + o, n - o, ": %s", p->help);
    }
}

#define ATTRIBUTE_USAGE                                                                                       \
    "usage: versus attribute --model DIR --input X.npy --method M [--target C|T.npy | --target-mask M.npy | --score S]\n" \
    "         [--contrast C2]\n"                                                                                \
    "         [--reference R.npy [--side query|reference|both]] [--baseline zero|max|min|mean|blur|uniform|mdts|gan:DIR|FILE.npy]\n" \
    "         [method options] [--seed S] [--report R.json] [--png P.png] [--html DIR] --out A.npy\n\n"          \
    "Explains every row of X with a method of the registry.  The explained score of a row is the logit of\n"     \
    "--target (default: the predicted class), minus the logit of --contrast when given (one-vs-one: \"why\n"      \
    "target and not contrast\"); for a pair model - a Siamese model, or any composite with two inputs (query,\n" \
    "reference), whatever its head computes (cosine, concat -> linear) - its output for (X[i], R[i]).\n" \
    "Outputs that are not logits (an autoencoder's image): --target indexes the flattened output row\n"     \
    "(c*H*W + y*W + x), T.npy gives one target per row; --target-mask M.npy explains sum m f(x) (a region,\n" \
    "one row [1, ...] or one per row); --score sum|norm|reconstruction explains the output row's sum, L2\n"  \
    "norm or reconstruction error ||f(x) - x||^2 (these have no layers: layer, LRP and Grad-CAM refuse them).\n" \
    "--png draws images' maps (input, map on a colour-blind-safe scale centred at 0, overlay, target and\n"  \
    "scores, colour bar); --html DIR writes a report page (that picture, or bar charts for tabular rows).\n" \
    "For pairs, "                                                                                            \
    "one reference row applies to every query.  --side picks what is explained: the query (reference\n"          \
    "fixed), the reference (query fixed), or both as one joint input [2, ...] with baseline (x', r'), so\n"      \
    "completeness holds over both sides (IG: the sum of both sides = f(x, r) - f(x', r')); the output is\n"     \
    "then [N, 2, ...].  Interaction methods write [N, F, F] (F the elements of the explained input; with\n"     \
    "--side both the block [0:F/2, F/2:F] is query feature x reference feature).  Baselines are per row\n"      \
    "(and per reference row): max/min/mean fill the row with its own max/min/mean, blur smooths it\n"           \
    "(--blur-sigma), uniform draws noise in its range, mdts takes the nearest training example of the target\n" \
    "class (--baseline-data SPEC); gan:DIR is GANMEX's G(x, c) of a trained model (versus train --arch ganmex),\n" \
    "c the --contrast class when given (the counterfactual the explanation is against), else the target.\n"   \
    "Baseline-set methods average over --baselines, or --class-baselines K\n"    \
    "from the target class of --baseline-data.  --report writes per-row scores, the completeness or\n"         \
    "efficiency gap (LRP: the relevance conservation gap sum - S(x)), model evaluations and time.  Layer\n"    \
    "methods write the activation shape of their --layer ([N, ...]); --layer is a module path: the index in a\n" \
    "sequential (3), or names joined by dots, encoder.3 in a Siamese model, main.2 or fc1 in a composite (a\n" \
    "child its program calls once, with one input), or any value a composite computes, by its name or alias: a\n" \
    "model from ONNX takes its node and tensor names (--layer /layer4/layer4.1/relu_1/Relu).  On a Siamese\n" \
    "pair the layer and neuron methods explain\n" \
    "the encoder layer of the side given by --side (query or reference), the other side's embedding fixed.\n" \
    "LRP on a Siamese pair starts from the cosine's terms R_i = q_i e_i / (|q| |e|), q the explained side's\n" \
    "embedding, e the other side's, both norms held at their values so the score is linear in q and sum R = S\n" \
    "(a convention of versus: Captum has no rule for a cosine head); it then descends the shared encoder.\n" \
    "--feature-mask groups elements into\n" \
    "features for the coalition and ablation methods, as Captum's feature_mask.    Occlusion on a sequential image classifier recomputes\n"     \
    "only the region of each activation its window changes; integrated gradients on a sequential that starts\n" \
    "conv/linear, ReLU, conv/linear sums the gradients along the path without re-running its first two layers\n" \
    "per step (same values up to rounding).  Options of other methods than --method are ignored.\n"          \
    "Long runs: --shard K/N explains rows [floor((K-1) N_rows / N), floor(K N_rows / N)) and writes them to\n" \
    "--out as a partial result for `versus merge`; finished rows are journalled as they go (OUT.journal)\n"   \
    "and --resume continues a killed run.  Row i draws its random numbers from a seed derived from --seed\n" \
    "and i, so sharded, resumed and single runs write the same bits."

static char attribute_usage[16384];

/* `versus help attribute`: the synopsis, then the methods of the registry with their output and
 * options (defaults in brackets), appended to the verb's usage text. */
static void usage_init(void)
{
    size_t n = sizeof attribute_usage, o = (size_t)snprintf(attribute_usage, n, "%s", ATTRIBUTE_USAGE);
    o += (size_t)snprintf(attribute_usage + o, o < n ? n - o : 0, "\n\nMethods (--method):");
    for (int i = 0; i < vs_method_count() && o < n; i++) {
        const vs_method *m = vs_method_at(i);
        vs_method_opts *mo = vs_method_opts_new(m);
        o += (size_t)snprintf(attribute_usage + o, o < n ? n - o : 0, "\n  %-21s %s\n  %-21s returns %s%s%s%s", m->name, m->help, "",
                              vs_method_output_name(m->output), m->output == VS_OUTPUT_INTERACTIONS ? " [N, F, F]" : m->output == VS_OUTPUT_LAYER ? " [N, <layer>]" : "",
                              m->flags & VS_METHOD_COMPLETE ? ", sums to S(x) - S(x')" : m->flags & VS_METHOD_CONSERVES ? ", sums to S(x)" : "",
                              m->flags & VS_METHOD_BASELINE_SET ? ", needs a baseline set" : "");
        const char *sep = "; options";
        for (const vs_method_param *p = m->params; mo && p->name && o < n; p++) {
            char def[64];
            vs_method_opts_format(mo, p, def, sizeof def);
            o += (size_t)snprintf(attribute_usage + o, n - o, "%s --%s [%s]", sep, p->name, def);
            sep = ",";
        }
        vs_method_opts_free(mo);
    }
}

void vs_cli_attribute_init(void)
{
    usage_init();
    int k = 0;
    for (int i = 0; i < N_COMMON; i++) attribute_opts[k++] = common_opts[i];
    /* every option of every method, once; help: the methods that take it */
    for (int i = 0; i < vs_method_count(); i++)
        for (const vs_method_param *p = vs_method_at(i)->params; p->name && k < MAX_OPTS - 2; p++) {
            bool seen = false;
            for (int q = 0; q < k && !seen; q++) seen = attribute_opts[q].has_arg != 2 && strcmp(attribute_opts[q].name, p->name) == 0;
            if (seen) continue;
            option_meaning(p->name, option_help[k], sizeof option_help[k]);
            attribute_opts[k] = (vs_cli_opt){p->name, p->kind != VS_PARAM_SWITCH, option_help[k]};
            k++;
        }
    attribute_opts[k] = (vs_cli_opt){NULL, 0, NULL};
}

/* Method options given on the command line into o; 0, or 2 after a usage message. */
static int method_flags(const vs_args *a, const vs_method *m, vs_method_opts *o)
{
    vs_error err;
    for (const vs_method_param *p = m->params; p->name; p++) {
        if (!vs_args_has(a, p->name)) continue;
        if (vs_method_opts_set(o, p->name, vs_args_get(a, p->name), &err) != VS_OK) return vs_usage_error("attribute", "%s", err.msg);
    }
    return 0;
}

/* The flags into o (defaults: vs_attribute_opts_init) and the method's options into *mopts; 0, or 1/2
 * after a message. */
static int attribute_flags(const vs_args *a, vs_attribute_opts *o, vs_method_opts **mopts)
{
    vs_attribute_opts_init(o);
    o->model = vs_args_get(a, "model"), o->input = vs_args_get(a, "input"), o->reference = vs_args_get(a, "reference");
    const char *method = vs_args_get(a, "method"), *side = vs_args_get(a, "side");
    if (!o->model || !o->input || !method || !vs_args_get(a, "out"))
        return vs_usage_error("attribute", "--model, --input, --method and --out are required");
    if (!(o->method = vs_method_find(method))) {
        const vs_method *near = vs_method_nearest(method);
        return vs_usage_error("attribute", "unknown method '%s'%s%s%s (versus help attribute lists them)", method, near ? "; did you mean '" : "",
                              near ? near->name : "", near ? "'?" : "");
    }
    if (!(*mopts = vs_method_opts_new(o->method))) return vs_fail("out of memory");
    o->method_opts = *mopts;
    int64_t seed;
    int rc;
    if ((rc = method_flags(a, o->method, *mopts)) || (rc = vs_cli_output_flags(a, &o->target, &o->targets, &o->target_mask, &o->score)) ||
        (rc = vs_args_int(a, "contrast", -1, 0, 1 << 30, &o->contrast)) || (rc = vs_args_int(a, "seed", 0, 0, INT64_MAX, &seed)) ||
        (rc = vs_args_int(a, "class-baselines", 0, 1, 1000000, &o->class_baselines)) ||
        (rc = vs_args_int(a, "segments", 0, 2, 100000, &o->segments)) || (rc = vs_args_float(a, "blur-sigma", 5.0, 1e-3, 1000, &o->blur_sigma)))
        return rc;
    o->seed = (uint64_t)seed;
    int sd = side ? vs_side_from_name(side) : VS_SIDE_QUERY;
    if (o->target >= 0 && o->target == o->contrast) return vs_usage_error("attribute", "--target and --contrast are the same class");
    if (sd < 0) return vs_usage_error("attribute", "--side expects query, reference or both, got '%s'", side);
    if (side && !o->reference) return vs_usage_error("attribute", "--side needs --reference R.npy");
    o->side = (vs_side)sd;
    o->baseline = vs_args_get(a, "baseline");
    o->baseline_data = vs_args_get(a, "baseline-data");
    o->baselines = vs_args_get(a, "baselines");
    o->feature_mask = vs_args_get(a, "feature-mask");
    return 0;
}

/* A number member of obj; NaN when it is null. */
static double member(const vs_json *obj, const char *key)
{
    const vs_json *v = vs_json_get(obj, key);
    return v && v->type == VS_JSON_NUMBER ? v->number : NAN;
}

/* --report: the run's summary (the report's data) in the layout the verb has always written. */
static int put_report(const char *path, const vs_json *d)
{
    vs_out fo;
    vs_error err;
    if (vs_out_open(&fo, path, &err) != VS_OK) return vs_fail("%s", err.msg);
    FILE *f = fo.f;
    const vs_json *rows = vs_json_get(d, "rows");
    fprintf(f, "{\"method\": \"%s\", \"output\": \"%s\", \"side\": \"%s\", \"rows\": [\n", vs_json_get(d, "method")->string,
            vs_json_get(d, "output")->string, vs_json_get(d, "side")->string);
    for (size_t i = 0; i < rows->n; i++) {
        const vs_json *r = vs_json_at(rows, i);
        fprintf(f, "  {\"row\": %lld, \"target\": %lld, \"score\": ", (long long)vs_json_get(r, "row")->integer,
                (long long)vs_json_get(r, "target")->integer);
        vs_cli_put_num(f, member(r, "score"));
        fputs(", \"baseline_score\": ", f);
        vs_cli_put_num(f, member(r, "baseline_score"));
        fputs(", \"delta\": ", f);
        vs_cli_put_num(f, member(r, "delta"));
        fprintf(f, ", \"evaluations\": %lld, \"seconds\": %.6f}%s\n", (long long)vs_json_get(r, "evaluations")->integer,
                member(r, "seconds"), i + 1 < rows->n ? "," : "");
    }
    fputs("], \"largest_delta\": ", f);
    vs_cli_put_num(f, member(d, "largest_delta"));
    fprintf(f, ", \"evaluations\": %lld, \"seconds\": %.6f}\n", (long long)vs_json_get(d, "evaluations")->integer, member(d, "seconds"));
    return vs_out_commit(&fo, &err) != VS_OK ? vs_fail("%s", err.msg) : 0;
}

/* Row r's captions (input: row and target; overlay: the scores) from the run's summary d. */
static void row_captions(const vs_json *d, int r, char *in, char *ov, size_t n)
{
    const vs_json *row = vs_json_at(vs_json_get(d, "rows"), (size_t)r);
    snprintf(in, n, "row %d, target %lld", r, (long long)vs_json_get(row, "target")->integer);
    double sx = member(row, "score"), sb = member(row, "baseline_score"), gap = member(row, "delta");
    int k = snprintf(ov, n, "S(x) %.4g", sx);
    if (!isnan(sb)) k += snprintf(ov + k, n - (size_t)k, ", S(x') %.4g", sb);
    if (!isnan(gap)) snprintf(ov + k, n - (size_t)k, ", gap %.2g", gap);
}

/* --png: the labelled picture of image attributions (vs_attr_picture). */
static int write_png(const vs_args *a, const char *path, const vs_tensor *attr, const vs_json *d)
{
    vs_tensor *x = NULL;
    vs_error err;
    if (vs_npy_read(vs_args_get(a, "input"), &x, &err) != VS_OK) return vs_fail("%s", err.msg);
    if (x->ndim != 4 || !vs_same_shape(x, attr)) {
        vs_tensor_free(x);
        return vs_usage_error("attribute", "--png draws attributions of images [N,C,H,W] with the input's shape; for tabular rows use --html DIR");
    }
    int rows = x->shape[0] < 16 ? (int)x->shape[0] : 16;
    char caps[16][2][96], title[600];
    const char *labels[32];
    for (int r = 0; r < rows; r++) {
        row_captions(d, r, caps[r][0], caps[r][1], sizeof caps[r][0]);
        labels[2 * r] = caps[r][0];
        labels[2 * r + 1] = caps[r][1];
    }
    snprintf(title, sizeof title, "%s attributions of %s by the model %s (%s side)", vs_json_get(d, "method")->string, vs_args_get(a, "input"), vs_args_get(a, "model"),
             vs_json_get(d, "side")->string);
    vs_image *im = vs_attr_picture(x->data, attr->data, rows, (int)x->shape[1], (int)x->shape[2], (int)x->shape[3], title, labels);
    int rc = !im ? vs_fail("%s: %s", path, vs_last_error()->msg) : vs_png_write(im, path, &err) != VS_OK ? vs_fail("%s", err.msg) : 0;
    vs_image_free(im);
    vs_tensor_free(x);
    return rc;
}

/* Feature names from a text file, one per line (at most n; the rest keep their x<i> names). */
static int read_names(const char *path, char (*names)[64], int64_t n)
{
    FILE *f = fopen(path, "r");
    if (!f) return vs_fail("%s: cannot be read (--feature-names: one name per line)", path);
    char line[256];
    for (int64_t i = 0; i < n && fgets(line, sizeof line, f); i++) {
        line[strcspn(line, "\r\n")] = '\0';
        snprintf(names[i], 64, "%.63s", line);
    }
    fclose(f);
    return 0;
}

/* --html DIR: the run's report with, for images, the --png picture, and for tabular rows a bar chart of
 * each of the first 8 rows' 20 largest |A| (names from --feature-names). */
static int write_html(const vs_args *a, const char *dir, const vs_tensor *attr, vs_report *r)
{
    vs_error err;
    if (vs_report_make_dirs(dir, &err) != VS_OK) return vs_fail("%s", err.msg);
    int rc = 0;
    if (attr->ndim == 4) {
        char path[4200];
        snprintf(path, sizeof path, "%s/attributions.png", dir);
        if ((rc = write_png(a, path, attr, r->data))) return rc;
        vs_report_paragraph(r, "`attributions.png`: the first rows' inputs, maps on a colour-blind-safe scale centred at 0 (red raises the "
                               "explained score, blue lowers it) and overlays, with each row's target and scores.");
    } else if (attr->ndim == 2) {
        int64_t n = attr->shape[0], F = attr->shape[1], top = F < 20 ? F : 20;
        char (*names)[64] = calloc((size_t)F, sizeof *names);
        int64_t *order = malloc((size_t)F * sizeof *order);
        if (!names || !order) rc = vs_fail("out of memory");
        for (int64_t k = 0; rc == 0 && k < F; k++) snprintf(names[k], 64, "x%lld", (long long)k);
        if (rc == 0 && vs_args_get(a, "feature-names")) rc = read_names(vs_args_get(a, "feature-names"), names, F);
        for (int64_t i = 0; rc == 0 && i < n && i < 8; i++) {
            const float *v = attr->data + i * F;
            for (int64_t k = 0; k < F; k++) order[k] = k;
            for (int64_t k = 0; k < top; k++) /* the top |A| first (a partial selection sort: top <= 20) */
                for (int64_t m = k + 1; m < F; m++)
                    if (fabsf(v[order[m]]) > fabsf(v[order[k]])) {
                        int64_t t = order[k];
                        order[k] = order[m];
                        order[m] = t;
                    }
            const char *cats[20];
            float ys[20];
            for (int64_t k = 0; k < top; k++) {
                cats[k] = names[order[k]];
                ys[k] = v[order[k]];
            }
            char name[32], title[200], in[96], ov[96];
            snprintf(name, sizeof name, "row_%lld", (long long)i);
            row_captions(r->data, (int)i, in, ov, sizeof in);
            snprintf(title, sizeof title, "%s: %s", in, ov);
            vs_report_figure *f = vs_report_figure_new(r, VS_FIGURE_BAR, name, title, "feature", "attribution",
                                                       "The features of largest |attribution|: a positive bar raises the explained score.");
            vs_report_categories(f, (size_t)top, cats);
            vs_report_series(f, vs_json_get(r->data, "method")->string, (size_t)top, NULL, ys, NULL);
        }
        free(names);
        free(order);
    } else {
        return vs_usage_error("attribute", "--html draws attributions of images [N,C,H,W] or tabular rows [N,F]; this output is [%d dims]", attr->ndim);
    }
    if (rc == 0 && vs_report_write_dir(r, dir, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    return rc;
}

/* --report, --out and the closing line of a whole run. */
static int attribute_outputs(const vs_args *a, const vs_tensor *attr, vs_report *r)
{
    vs_error err;
    const vs_json *d = r->data;
    double worst = member(d, "largest_delta");
    int rc = vs_args_get(a, "report") ? put_report(vs_args_get(a, "report"), d) : 0;
    if (rc == 0 && vs_npy_write(vs_args_get(a, "out"), attr, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (rc == 0 && vs_args_get(a, "png")) rc = write_png(a, vs_args_get(a, "png"), attr, d);
    if (rc == 0 && vs_args_get(a, "html")) rc = write_html(a, vs_args_get(a, "html"), attr, r);
    long long n = (long long)vs_json_get(d, "rows")->n, evals = (long long)vs_json_get(d, "evaluations")->integer;
    double seconds = member(d, "seconds");
    if (rc == 0 && isnan(worst))
        fprintf(stderr, "versus: %lld rows, %lld model evaluations, %.3f s\n", n, evals, seconds);
    else if (rc == 0)
        fprintf(stderr, "versus: %lld rows, %lld model evaluations, %.3f s, largest completeness gap %.3g\n", n, evals, seconds, worst);
    return rc;
}

static int run_attribute(int argc, char **argv)
{
    vs_args a;
    int rc = vs_args_parse("attribute", attribute_opts, argc, argv, &a);
    if (rc) return rc;
    if (a.n_pos) return vs_usage_error("attribute", "unexpected argument '%s'", a.pos[0]);
    vs_attribute_opts o;
    vs_method_opts *mopts = NULL;
    vs_cli_run cr;
    vs_run *run = NULL;
    vs_tensor *attr = NULL;
    vs_report *r = NULL;
    vs_error err;
    if ((rc = attribute_flags(&a, &o, &mopts)) == 0 &&
        (rc = vs_cli_run_opts(&a, vs_args_get(&a, "out"), o.seed, "rows", argc, argv, &cr)) == 0) {
        o.run = &cr.o;
        o.journal = &run;
        if (vs_attribute_run(&o, &attr, &r, &err) != VS_OK)
            rc = err.code == VS_ERR_ARG ? vs_usage_error("attribute", "%s", err.msg) : vs_fail("%s", err.msg);
        else if (r) rc = attribute_outputs(&a, attr, r);
        else if (vs_run_finish(run, &err) != VS_OK) rc = vs_fail("%s", err.msg);
        else fprintf(stderr, "versus: wrote rows %lld..%lld of %lld to %s (versus merge joins the shards)\n", (long long)vs_run_begin(run),
                     (long long)vs_run_end(run) - 1, (long long)vs_run_items(run), vs_args_get(&a, "out"));
        if (rc == 0 && r && vs_run_finish(run, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    }
    vs_run_free(run);
    vs_tensor_free(attr);
    vs_report_free(r);
    vs_method_opts_free(mopts);
    return rc;
}

const vs_verb vs_verb_attribute = {
    "attribute",
    "explanations of a saved model's inputs or pairs by any registered method",
    attribute_usage,
    attribute_opts,
    run_attribute,
    NULL,
};
