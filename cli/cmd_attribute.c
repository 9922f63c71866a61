/* cmd_attribute.c - `versus attribute`: attributions of a saved model's inputs (docs/formats/outputs.md). */
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
    {"target", 1, "explained class (default: the predicted class of each row)"},
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
    "usage: versus attribute --model DIR --input X.npy --method M [--target C] [--contrast C2]\n"                \
    "         [--reference R.npy [--side query|reference|both]] [--baseline zero|max|min|mean|blur|uniform|mdts|gan:DIR|FILE.npy]\n" \
    "         [method options] [--seed S] [--report R.json] --out A.npy\n\n"                                      \
    "Explains every row of X with a method of the registry.  The explained score of a row is the logit of\n"     \
    "--target (default: the predicted class), minus the logit of --contrast when given (one-vs-one: \"why\n"      \
    "target and not contrast\"); for a pair model - a Siamese model, or any composite with two inputs (query,\n" \
    "reference), whatever its head computes (cosine, concat -> linear) - its output for (X[i], R[i]);\n" \
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
    "child its program calls once, with one input).  On a Siamese pair the layer and neuron methods explain\n" \
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

static vs_tensor *read_npy(const char *path, const char *what, vs_error *err)
{
    vs_tensor *t = NULL;
    if (vs_npy_read_finite(path, &t, err) != VS_OK) return NULL;
    (void)what;
    return t;
}

typedef struct attr_cli {
    vs_module *model;
    vs_module_explainee ex;
    vs_model_fn fn;
    vs_tensor *x, *reference, *baseline_file, *baselines;
    int32_t *groups;   /* --feature-mask: group of every element of a row, numbered 0.. in order of appearance */
    int64_t n_groups;
    vs_dataset *train;
    int baseline_kind; /* -1: a file */
    vs_module *gan;    /* --baseline gan:DIR: G(x, c) of a trained GANMEX model */
    double gan_opt[VS_TASK_MAX_OPTS];
} attr_cli;

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

/* --feature-mask M.npy: dim integers >= 0 (any shape with one row's elements); groups renumbered
 * 0.. in order of first appearance.  0, or 1 after a message naming the file. */
static int read_feature_mask(const char *path, int64_t dim, attr_cli *c)
{
    vs_error err;
    vs_tensor *m = read_npy(path, "feature mask", &err);
    if (!m) return vs_fail("%s", err.msg);
    int rc = m->size == dim ? 0 : vs_fail("%s: the feature mask must have one input row's %lld elements, not %lld", path, (long long)dim,
                                          (long long)m->size);
    float *seen = NULL; /* group values in order of appearance */
    if (rc == 0 && (!(c->groups = malloc((size_t)dim * sizeof *c->groups)) || !(seen = malloc((size_t)dim * sizeof *seen))))
        rc = vs_fail("out of memory");
    for (int64_t i = 0; i < dim && rc == 0; i++) {
        float v = m->data[i];
        if (!(v >= 0 && v <= 1e9f && v == floorf(v))) {
            rc = vs_fail("%s: element %lld of the feature mask is %g; groups are integers >= 0", path, (long long)i, (double)v);
            break;
        }
        int64_t k = 0;
        while (k < c->n_groups && seen[k] != v) k++;
        if (k == c->n_groups) seen[c->n_groups++] = v;
        c->groups[i] = (int32_t)k;
    }
    free(seen);
    vs_tensor_free(m);
    return rc;
}

/* The baseline of one row into b (dim floats): a file's, or of a kind computed from the row. */
static int row_baseline(const attr_cli *c, const vs_tensor *row, int64_t target, float sigma, vs_rng *r, int64_t i, float *b)
{
    vs_error err;
    if (c->baseline_file) {
        memcpy(b, c->baseline_file->data, (size_t)row->size * sizeof(float));
        return 0;
    }
    if (c->gan) {
        vs_tensor *g = NULL;
        if (vs_generator_baselines(c->gan, c->gan_opt, row, &target, &g, &err) != VS_OK) return vs_fail("row %lld: %s", (long long)i, err.msg);
        memcpy(b, g->data, (size_t)row->size * sizeof(float));
        vs_tensor_free(g);
        return 0;
    }
    if (vs_make_baseline((vs_baseline_kind)c->baseline_kind, row->data, row->ndim - 1, row->shape + 1, sigma, r, c->train, target, b,
                         &err) != VS_OK)
        return vs_fail("row %lld: %s", (long long)i, err.msg);
    return 0;
}

/* One run of the verb: its flags, the loaded model and arrays (c), the request every row starts from. */
typedef struct attr_job {
    vs_args a;
    const char *model_dir, *input, *method, *out_path;
    const vs_method *meth;
    vs_method_opts *mopts;
    int64_t target, contrast, seed, class_k, n_seg;
    double sigma;
    int side;
    vs_explain_request rq;
    attr_cli c;
} attr_job;

/* The method, its options and the verb's numbers and side; 0, or 1/2 after a message. */
static int job_flags(attr_job *j)
{
    const vs_args *a = &j->a;
    j->model_dir = vs_args_get(a, "model"), j->input = vs_args_get(a, "input"), j->method = vs_args_get(a, "method");
    j->out_path = vs_args_get(a, "out");
    if (!j->model_dir || !j->input || !j->method || !j->out_path)
        return vs_usage_error("attribute", "--model, --input, --method and --out are required");
    if (!(j->meth = vs_method_find(j->method))) {
        const vs_method *near = vs_method_nearest(j->method);
        return vs_usage_error("attribute", "unknown method '%s'%s%s%s (versus help attribute lists them)", j->method,
                              near ? "; did you mean '" : "", near ? near->name : "", near ? "'?" : "");
    }
    if (!(j->mopts = vs_method_opts_new(j->meth))) return vs_fail("out of memory");
    int rc;
    if ((rc = method_flags(a, j->meth, j->mopts))) return rc;
    if ((rc = vs_args_int(a, "target", -1, 0, 1 << 30, &j->target)) || (rc = vs_args_int(a, "contrast", -1, 0, 1 << 30, &j->contrast)) ||
        (rc = vs_args_int(a, "seed", 0, 0, INT64_MAX, &j->seed)) || (rc = vs_args_int(a, "class-baselines", 0, 1, 1000000, &j->class_k)) ||
        (rc = vs_args_int(a, "segments", 0, 2, 100000, &j->n_seg)) || (rc = vs_args_float(a, "blur-sigma", 5.0, 1e-3, 1000, &j->sigma)))
        return rc;
    vs_explain_request_init(&j->rq);
    j->rq.contrast = j->contrast;
    j->rq.seed = (uint64_t)j->seed;
    const char *side = vs_args_get(a, "side");
    j->side = side ? vs_side_from_name(side) : VS_SIDE_QUERY;
    rc = vs_args_has(a, "target") && j->target == j->contrast ? vs_usage_error("attribute", "--target and --contrast are the same class") : 0;
    if (rc == 0 && j->side < 0) rc = vs_usage_error("attribute", "--side expects query, reference or both, got '%s'", side);
    if (rc == 0 && side && !vs_args_get(a, "reference")) rc = vs_usage_error("attribute", "--side needs --reference R.npy");
    if (rc == 0 && j->n_seg && j->side != VS_SIDE_QUERY) rc = vs_usage_error("attribute", "--segments describes the query: use --side query");
    j->rq.side = (vs_side)(j->side < 0 ? 0 : j->side);
    return rc;
}

/* --baseline's kind, and what it needs; 0, or 2 after a usage message. */
static int baseline_flags(attr_job *j)
{
    const char *bl = vs_args_get(&j->a, "baseline");
    j->c.baseline_kind = VS_BASELINE_ZERO;
    if (bl) {
        j->c.baseline_kind = vs_baseline_from_name(bl);
        if (j->c.baseline_kind < 0 && !strstr(bl, ".npy") && strncmp(bl, "gan:", 4) != 0)
            return vs_usage_error("attribute", "--baseline expects zero, max, min, mean, blur, uniform, mdts, gan:DIR or FILE.npy, got '%s'", bl);
        if (strncmp(bl, "gan:", 4) == 0 && vs_args_get(&j->a, "reference"))
            return vs_usage_error("attribute", "--baseline gan:DIR explains classifiers; it does not go with --reference");
    }
    if ((j->c.baseline_kind == VS_BASELINE_MDTS || j->class_k) && !vs_args_get(&j->a, "baseline-data"))
        return vs_usage_error("attribute", "the mdts baseline and --class-baselines need --baseline-data SPEC");
    return 0;
}

/* The inputs and the reference: shapes that fit the model; 0, or 1 after a message. */
static int load_rows(attr_job *j)
{
    attr_cli *c = &j->c;
    vs_error err;
    const char *rpath = vs_args_get(&j->a, "reference");
    if (!(c->x = read_npy(j->input, "input", &err))) return vs_fail("%s", err.msg);
    if (c->x->ndim < 2) return vs_fail("%s: inputs must be [N, ...] with a batch dimension", j->input);
    if (c->x->shape[0] < 1) return vs_fail("%s: holds no inputs (its first dimension is 0)", j->input);
    if (rpath && !(c->reference = read_npy(rpath, "reference", &err))) return vs_fail("%s", err.msg);
    if (vs_module_compares_pairs(c->model) && !c->reference)
        return vs_fail("%s compares pairs: give the reference with --reference R.npy", j->model_dir);
    if (c->reference && !vs_module_compares_pairs(c->model))
        return vs_fail("%s takes one input; --reference applies to models that compare pairs (Siamese, or a composite with two inputs)",
                       j->model_dir);
    if (c->reference) {
        bool ok = c->reference->ndim == c->x->ndim && (c->reference->shape[0] == 1 || c->reference->shape[0] == c->x->shape[0]);
        for (int i = 1; ok && i < c->x->ndim; i++) ok = c->reference->shape[i] == c->x->shape[i];
        if (!ok)
            return vs_fail("%s: the reference must be one row [1, ...] or one per row [%lld, ...] of the inputs' row shape", rpath,
                           (long long)c->x->shape[0]);
    }
    return 0;
}

/* The baselines (a generator, a file, a set, training data) and the feature groups; 0, or 1/2. */
static int load_baselines(attr_job *j)
{
    attr_cli *c = &j->c;
    vs_error err;
    const char *bl = vs_args_get(&j->a, "baseline"), *mask_path = vs_args_get(&j->a, "feature-mask");
    if (bl && strncmp(bl, "gan:", 4) == 0) {
        if (vs_generator_load(bl + 4, &c->gan, c->gan_opt, &err) != VS_OK) return vs_fail("--baseline %s: %s", bl, err.msg);
    } else if (c->baseline_kind < 0) {
        if (!(c->baseline_file = read_npy(bl, "baseline", &err))) return vs_fail("%s", err.msg);
        if (c->baseline_file->size != c->x->size / c->x->shape[0])
            return vs_fail("%s: the baseline must have the shape of one input row (%lld elements)", bl, (long long)(c->x->size / c->x->shape[0]));
    }
    if (vs_args_get(&j->a, "baselines") && !(c->baselines = read_npy(vs_args_get(&j->a, "baselines"), "baselines", &err)))
        return vs_fail("%s", err.msg);
    if (vs_args_get(&j->a, "baseline-data")) {
        vs_data_flags df = {.seed = 1};
        if (vs_load_spec(vs_args_get(&j->a, "baseline-data"), &df, &c->train, &err) != VS_OK) return vs_fail("%s", err.msg);
    }
    if (mask_path && j->n_seg) return vs_usage_error("attribute", "--feature-mask and --segments both define the features: give one");
    if (mask_path && !(j->meth->flags & VS_METHOD_SEGMENTS))
        return vs_usage_error("attribute", "%s does not take feature groups (--feature-mask)", j->method);
    if (mask_path && j->side != VS_SIDE_QUERY) return vs_usage_error("attribute", "--feature-mask describes the query: use --side query");
    int rc = mask_path ? read_feature_mask(mask_path, c->x->size / c->x->shape[0], c) : 0;
    if (rc == 0 && (j->meth->flags & VS_METHOD_BASELINE_SET) && !c->baselines && !j->class_k)
        rc = vs_usage_error("attribute", "%s needs a baseline set: --baselines B.npy or --class-baselines K --baseline-data SPEC", j->method);
    return rc;
}

/* Row i's request ro from the job's: its reference row, target, baselines and segments; 0, or 1. */
static int row_request(attr_job *j, int64_t i, vs_tensor *row, vs_rng *r, int32_t *seg, vs_explain_request *ro)
{
    attr_cli *c = &j->c;
    int nd = c->x->ndim;
    int64_t dim = c->x->size / c->x->shape[0];
    vs_error err;
    *ro = j->rq;
    vs_tensor *rrow = NULL;
    if (c->reference) {
        rrow = vs_tensor_from(nd, row->shape, c->reference->data + (c->reference->shape[0] == 1 ? 0 : i) * dim);
        ro->reference = rrow;
    }
    ro->target = j->target >= 0 ? j->target : vs_predicted_class(&c->fn, row);
    /* the baselines of this row (and of its reference) */
    vs_tensor *b = vs_tensor_new(nd, row->shape), *rb = rrow ? vs_tensor_new(nd, row->shape) : NULL;
    /* the baseline's class: the contrast of a one-vs-one explanation (GANMEX's G(x, c_t)), else the target */
    int rc = row_baseline(c, row, c->gan && j->contrast >= 0 ? j->contrast : ro->target, (float)j->sigma, r, i, b->data);
    if (rc == 0 && rb) rc = row_baseline(c, rrow, ro->target, (float)j->sigma, r, i, rb->data);
    ro->baseline = b;
    ro->reference_baseline = rb;
    ro->baselines = c->baselines;
    if (rc == 0 && j->class_k) {
        vs_tensor *set = NULL;
        if (vs_class_baselines(c->train, ro->target, j->class_k, r, &set, &err) != VS_OK) rc = vs_fail("row %lld: %s", (long long)i, err.msg);
        ro->baselines = set;
    }
    if (rc == 0 && j->n_seg) {
        int k = 0;
        vs_slic_options so = vs_slic_defaults();
        so.n_segments = (int)j->n_seg;
        if (nd != 4)
            rc = vs_fail("--segments needs image inputs [N,C,H,W]");
        else if (!seg || vs_slic(row->data, (int)row->shape[1], (int)row->shape[2], (int)row->shape[3], &so, seg, &k, &err) != VS_OK)
            rc = vs_fail("superpixels of row %lld: %s", (long long)i, seg ? err.msg : "out of memory");
        ro->segments = seg;
        ro->n_segments = k;
    }
    return rc;
}

/* Explain this process's rows that the journal does not hold, each recorded as it is done:
 * its attributions (out_row floats), then target, score, baseline score, gap, evaluations, seconds. */
static int explain_rows(attr_job *j, vs_run *run, int64_t out_row)
{
    attr_cli *c = &j->c;
    int nd = c->x->ndim;
    int64_t dim = c->x->size / c->x->shape[0], row_shape[VS_MAX_DIMS];
    memcpy(row_shape, c->x->shape, sizeof row_shape);
    row_shape[0] = 1;
    int32_t *seg = j->n_seg ? malloc((size_t)dim * sizeof *seg) : NULL;
    vs_item_buf item = {0};
    vs_error err;
    size_t len;
    int rc = 0;
    for (int64_t i = vs_run_begin(run); i < vs_run_end(run) && rc == 0; i++) {
        if (vs_run_get(run, i, &len)) continue; /* done before a kill */
        vs_scope_begin();
        vs_rng r; /* the row's own stream: the same whatever shard or resumed run explains it */
        vs_rng_seed(&r, vs_item_seed((uint64_t)j->seed, i));
        vs_tensor *row = vs_tensor_from(nd, row_shape, c->x->data + i * dim), *ra = NULL;
        vs_explain_request ro;
        vs_attr_report rr;
        rc = row_request(j, i, row, &r, seg, &ro);
        if (rc == 0 && vs_explain(&c->fn, row, j->meth, j->mopts, &ro, &ra, &rr, &err) != VS_OK)
            rc = vs_fail("row %lld: %s", (long long)i, err.msg);
        if (rc == 0) {
            int64_t ints[2] = {rr.target, rr.evaluations};
            double nums[4] = {rr.score, rr.baseline_score, rr.delta, rr.seconds};
            vs_item_buf_reset(&item);
            vs_item_put_f32(&item, ra->data, (size_t)out_row);
            vs_item_put_i64(&item, ints, 2);
            vs_item_put_f64(&item, nums, 4);
            if (vs_run_put(run, i, &item, &err) != VS_OK) rc = vs_fail("%s", err.msg);
        }
        vs_scope_end();
    }
    free(seg);
    vs_item_buf_clear(&item);
    return rc;
}

/* Every row from the journal, in order, into attr, and --report's JSON; the totals for the last line. */
static int read_rows(attr_job *j, vs_run *run, const char *journal, vs_tensor *attr, double *worst, int64_t *evals, double *seconds)
{
    int64_t n = j->c.x->shape[0], out_row = attr->size / n;
    const char *rep_path = vs_args_get(&j->a, "report");
    vs_out rep_out = {0};
    vs_error err;
    FILE *rep = NULL;
    if (rep_path) {
        if (vs_out_open(&rep_out, rep_path, &err) != VS_OK) return vs_fail("%s", err.msg);
        rep = rep_out.f;
        fprintf(rep, "{\"method\": \"%s\", \"output\": \"%s\", \"side\": \"%s\", \"rows\": [\n", j->method, vs_method_output_name(j->meth->output),
                vs_side_name(j->rq.side));
    }
    int rc = 0;
    for (int64_t i = 0; rc == 0 && i < n; i++) {
        size_t len;
        const unsigned char *p = vs_run_get(run, i, &len);
        vs_item_reader rd = {p, p ? len : 0, 0, false};
        int64_t ints[2];
        double nums[4];
        vs_item_get_f32(&rd, attr->data + i * out_row, (size_t)out_row);
        vs_item_get_i64(&rd, ints, 2);
        vs_item_get_f64(&rd, nums, 4);
        if (rd.bad || rd.pos != rd.len) {
            rc = vs_fail("%s: the record of row %lld does not fit this run", journal, (long long)i);
            break;
        }
        /* a journal is data: its counts are checked before they are summed */
        if (ints[1] < 0 || __builtin_add_overflow(*evals, ints[1], evals) || !isfinite(nums[3]) || nums[3] < 0 ||
            vs_first_nonfinite(attr->data + i * out_row, (size_t)out_row) != (size_t)out_row) {
            rc = vs_fail("%s: the record of row %lld holds a negative or non-finite count, time or attribution", journal, (long long)i);
            break;
        }
        if (!isnan(nums[2]) && (isnan(*worst) || fabs(nums[2]) > fabs(*worst))) *worst = nums[2];
        *seconds += nums[3];
        if (rep) {
            fprintf(rep, "  {\"row\": %lld, \"target\": %lld, \"score\": ", (long long)i, (long long)ints[0]);
            vs_cli_put_num(rep, nums[0]);
            fputs(", \"baseline_score\": ", rep);
            vs_cli_put_num(rep, nums[1]);
            fputs(", \"delta\": ", rep);
            vs_cli_put_num(rep, nums[2]);
            fprintf(rep, ", \"evaluations\": %lld, \"seconds\": %.6f}%s\n", (long long)ints[1], nums[3], i + 1 < n ? "," : "");
        }
    }
    if (rep) {
        fputs("], \"largest_delta\": ", rep);
        vs_cli_put_num(rep, *worst);
        fprintf(rep, ", \"evaluations\": %lld, \"seconds\": %.6f}\n", (long long)*evals, *seconds);
        if (rc != 0) vs_out_abort(&rep_out);
        else if (vs_out_commit(&rep_out, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    }
    return rc;
}

/* The explanation's shape, the journalled rows, then --out and --report (a shard: the part only). */
static int attribute_rows(attr_job *j, int argc, char **argv)
{
    attr_cli *c = &j->c;
    vs_error err;
    int out_nd, rc;
    int64_t out_shape[VS_MAX_DIMS], n = c->x->shape[0], evals = 0;
    j->rq.reference = c->reference;
    j->rq.segments = c->groups;
    j->rq.n_segments = c->n_groups;
    if ((j->meth->output == VS_OUTPUT_LAYER ? vs_explain_layer_shape(&c->fn, j->meth, j->mopts, c->x, &out_nd, out_shape, &err)
                                            : vs_explain_shape(j->meth, c->x, &j->rq, &out_nd, out_shape, &err)) != VS_OK)
        return vs_fail("%s", err.msg);
    vs_tensor *attr = vs_tensor_zeros(out_nd, out_shape);
    if (!attr) return vs_fail("out of memory for the explanation");
    double worst = NAN, seconds = 0;
    vs_cli_run cr;
    vs_run *run = NULL;
    if ((rc = vs_cli_run_opts(&j->a, j->out_path, (uint64_t)j->seed, "rows", argc, argv, &cr)) == 0 && vs_run_open(&cr.o, n, &run, &err) != VS_OK)
        rc = err.code == VS_ERR_ARG ? vs_usage_error("attribute", "%s", err.msg) : vs_fail("%s", err.msg);
    if (rc == 0) rc = explain_rows(j, run, attr->size / n);
    if (rc == 0 && vs_run_sharded(run)) {
        if (vs_run_finish(run, &err) != VS_OK) rc = vs_fail("%s", err.msg);
        else fprintf(stderr, "versus: wrote rows %lld..%lld of %lld to %s (versus merge joins the shards)\n", (long long)vs_run_begin(run),
                     (long long)vs_run_end(run) - 1, (long long)n, j->out_path);
        vs_run_free(run);
        vs_tensor_free(attr);
        return rc;
    }
    if (rc == 0) rc = read_rows(j, run, cr.path, attr, &worst, &evals, &seconds);
    if (rc == 0 && vs_npy_write(j->out_path, attr, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (rc == 0 && isnan(worst))
        fprintf(stderr, "versus: %lld rows, %lld model evaluations, %.3f s\n", (long long)n, (long long)evals, seconds);
    else if (rc == 0)
        fprintf(stderr, "versus: %lld rows, %lld model evaluations, %.3f s, largest completeness gap %.3g\n", (long long)n,
                (long long)evals, seconds, worst);
    if (rc == 0 && vs_run_finish(run, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    vs_run_free(run);
    vs_tensor_free(attr);
    return rc;
}

static int run_attribute(int argc, char **argv)
{
    attr_job j = {0};
    int rc = vs_args_parse("attribute", attribute_opts, argc, argv, &j.a);
    if (rc) return rc;
    if (j.a.n_pos) return vs_usage_error("attribute", "unexpected argument '%s'", j.a.pos[0]);
    vs_error err;
    rc = job_flags(&j);
    if (rc == 0) rc = baseline_flags(&j);
    if (rc == 0 && !(j.c.model = vs_model_load(j.model_dir, NULL, &err))) rc = vs_fail("%s", err.msg);
    if (rc == 0) rc = load_rows(&j);
    if (rc == 0) rc = load_baselines(&j);
    if (rc == 0) {
        j.c.ex.module = j.c.model;
        j.c.ex.reference = NULL;
        j.c.fn = vs_model_fn_from_module(&j.c.ex);
        rc = attribute_rows(&j, argc, argv);
    }
    vs_method_opts_free(j.mopts);
    vs_tensor_free(j.c.x);
    vs_tensor_free(j.c.reference);
    vs_tensor_free(j.c.baseline_file);
    vs_module_free(j.c.gan);
    vs_tensor_free(j.c.baselines);
    free(j.c.groups);
    vs_dataset_free(j.c.train);
    vs_module_free(j.c.model);
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
