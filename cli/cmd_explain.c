/* cmd_explain.c - `versus explain snx`: explain one query-reference pair of a trained Siamese model
 * (SNX paper, Sections III and IV-A), printing the global and local masks with feature names or edge
 * lists, and writing OUT/explanation.json with the masks and their scores. */
#include "cli/cem_cli.h"
#include "cli/cli.h"
#include "cli/explain_pairs.h"
#include "versus/train.h"
#include "versus/versus.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const vs_cli_opt explain_opts[] = {
    VS_DATA_CLI_OPTS,
    {"model", 1, "trained Siamese model directory (versus train --arch siamese-...)"},
    {"data", 1, "data SPEC the model was trained on"},
    {"query", 1, "index of the query in the test portion"},
    {"reference", 1, "index of the reference in the test portion"},
    {"method", 1, "an SNX method of the registry (listed above), or its older spelling; default snx"},
    {"top", 1, "features (tabular, default 10) or percent of edges (graphs, default 75) selected"},
    {"top-present", 0, "tabular: take the top features among those the pair has (mask times 1[x_s or x_t])"},
    {"gamma", 1, "sparsity weight gamma of Eqs. 4 and 6 (default: Section IV-H)"},
    {"iters", 1, "stage-2 iterations (default: Section IV-H)"},
    {"split-seed", 1, "seed of the train/test split (default: the model's metrics.json)"},
    {"out", 1, "output directory for explanation.json (with --pairs all: pairs.json; with --shard: the part file)"},
    {"pairs", 1, "all: explain every test pair of the SNX protocol (OUT/pairs.json) instead of one"},
    VS_RUN_CLI_OPTS,
    {NULL, 0, NULL},
};

/* split_seed and train_frac from DIR/metrics.json (written by versus train). */
static int read_split(const char *dir, int64_t *seed, double *frac)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/metrics.json", dir);
    vs_json *root = NULL;
    vs_error err;
    if (vs_json_parse_file(path, NULL, &root, &err) != VS_OK) return vs_fail("%s (or give --split-seed)", err.msg);
    const vs_json *s = vs_json_get(root, "split_seed"), *f = vs_json_get(root, "train_frac");
    int rc = 0;
    if (!s || vs_json_int(s, INT64_MIN, INT64_MAX, seed, &err) != VS_OK)
        rc = vs_fail("%s: no integer \"split_seed\" (was the model trained by versus train?)", path);
    *frac = 0.7;
    if (rc == 0 && f && vs_json_double(f, 0.01, 0.99, frac, &err) != VS_OK) *frac = 0.7; /* null: a separate test set */
    vs_json_free(root);
    return rc;
}

static int cmp_desc(const void *a, const void *b)
{
    const float *x = a, *y = b;
    return (x[0] < y[0]) - (x[0] > y[0]);
}

/* Print the largest mask entries: tabular minor features of row (only those present, x = 1). */
static void print_tabular_mask(const vs_dataset *d, int64_t row, const float *m, int64_t top, FILE *f)
{
    float (*items)[2] = malloc((size_t)d->dim * sizeof *items);
    if (!items) return;
    int64_t k = 0;
    for (int64_t j = 0; j < d->dim; j++)
        if (d->X[row * d->dim + j] != 0) {
            items[k][0] = m[j];
            items[k][1] = (float)j;
            k++;
        }
    qsort(items, (size_t)k, sizeof *items, cmp_desc);
    for (int64_t i = 0; i < k && i < top; i++)
        fprintf(f, "    %.3f  %s\n", items[i][0], d->feature_names ? d->feature_names[(int64_t)items[i][1]] : "?");
    free(items);
}

/* Print the largest undirected edges of graph g under mask m (one value per directed edge). */
static void print_graph_mask(const vs_graph *g, const float *m, double frac, FILE *f)
{
    float (*items)[2] = malloc((size_t)(g->n_edges + 1) * sizeof *items);
    if (!items) return;
    int64_t k = 0;
    for (int64_t e = 0; e < g->n_edges; e++)
        if (g->src[e] < g->dst[e]) {
            items[k][0] = m[e];
            items[k][1] = (float)e;
            k++;
        }
    qsort(items, (size_t)k, sizeof *items, cmp_desc);
    int64_t show = (int64_t)ceil(frac * (double)k);
    for (int64_t i = 0; i < show; i++) {
        int64_t e = (int64_t)items[i][1];
        fprintf(f, "    %.3f  %lld-%lld%s\n", items[i][0], (long long)g->src[e], (long long)g->dst[e],
                g->edge_truth && g->edge_truth[e] ? "  (planted)" : "");
    }
    free(items);
}

static void json_floats(FILE *f, const float *v, int64_t n)
{
    fputc('[', f);
    for (int64_t i = 0; i < n; i++) fprintf(f, "%s%.6g", i ? ", " : "", v[i]);
    fputc(']', f);
}

static void json_num(FILE *f, const char *key, double v, bool comma)
{
    fprintf(f, "\"%s\": ", key);
    vs_cli_put_num(f, v);
    if (comma) fputs(", ", f);
}

/* The flags of `versus explain snx`, checked. */
typedef struct snx_flags {
    const char *model_dir, *spec, *out;
    int64_t q, r, top, iters, split_seed;
    double gamma, frac;
    bool all;
    vs_snx_method method;
} snx_flags;

/* The method of --method (a registry name or its older spelling; default snx); rc. */
static int method_flag(const vs_args *a, vs_snx_method *out)
{
    const char *name = vs_args_get(a, "method");
    int m = vs_snx_method_from_name(name ? name : "snx");
    if (m >= 0) {
        *out = (vs_snx_method)m;
        return 0;
    }
    const vs_method *near = vs_method_family_nearest(VS_METHOD_SNX, name);
    return vs_usage_error("explain", "unknown method '%s'%s%s%s (versus help explain lists them)", name, near ? "; did you mean '" : "",
                          near ? near->name : "", near ? "'?" : "");
}

static int snx_flags_parse(const vs_args *a, snx_flags *c)
{
    c->model_dir = vs_args_get(a, "model");
    c->out = vs_args_get(a, "out");
    c->spec = vs_args_get(a, "data");
    c->frac = 0.7;
    if (a->n_pos != 1) return vs_usage_error("explain", "unexpected argument '%s'", a->pos[1]);
    if (!c->model_dir || !c->out || !c->spec) return vs_usage_error("explain", "--model, --data and --out are required");
    int rc;
    if ((rc = vs_args_int(a, "query", -1, 0, INT64_MAX, &c->q)) || (rc = vs_args_int(a, "reference", -1, 0, INT64_MAX, &c->r)) ||
        (rc = vs_args_int(a, "top", 0, 1, 100000, &c->top)) || (rc = vs_args_int(a, "iters", 0, 1, 1000000, &c->iters)) ||
        (rc = vs_args_int(a, "split-seed", -1, 0, INT64_MAX, &c->split_seed)) || (rc = vs_args_float(a, "gamma", -1, 0, 1e6, &c->gamma)))
        return rc;
    c->all = vs_args_has(a, "pairs");
    if (!c->all && (c->q < 0 || c->r < 0))
        return vs_usage_error("explain", "--query and --reference (indices into the test portion), or --pairs all, are required");
    if (!c->all && (vs_args_has(a, "shard") || vs_args_has(a, "resume"))) return vs_usage_error("explain", "--shard and --resume go with --pairs all");
    return method_flag(a, &c->method);
}

/* Section IV-H options with the flags' overrides, and the scores' selection. */
static void snx_flags_options(const vs_args *a, const snx_flags *c, vs_data_kind kind, vs_snx_opts *o, vs_snx_eval_opts *eo)
{
    vs_snx_opts_init(o, kind);
    o->trace = true;
    if (c->gamma >= 0) o->gamma_global = o->gamma_local = (float)c->gamma;
    if (c->iters > 0) o->max_iters = (int)c->iters;
    vs_snx_eval_opts_init(eo, kind);
    eo->present_only = vs_args_has(a, "top-present");
    if (c->top > 0 && kind == VS_DATA_TABULAR) eo->top_k = c->top;
    if (c->top > 0 && kind != VS_DATA_TABULAR) eo->top_frac = c->top > 100 ? 1.0 : c->top / 100.0;
}

/* The pair's masks and scores on standard output. */
static void print_pair(const snx_flags *c, const vs_dataset *d, int64_t s_row, int64_t t_row, double sim, const vs_snx_pair_expl *p,
                       const vs_snx_eval_opts *eo)
{
    const vs_snx_expl *glob = p->global, *loc = p->local;
    const vs_snx_eval *ev = &p->eval;
    printf("query: test row %lld (data row %lld, class %s)   reference: test row %lld (data row %lld, class %s)\n", (long long)c->q,
           (long long)s_row, d->class_names ? d->class_names[d->y[s_row]] : "?", (long long)c->r, (long long)t_row,
           d->class_names ? d->class_names[d->y[t_row]] : "?");
    printf("similarity %.4f (%s)\n", sim, sim > 0 ? "same class predicted" : "different classes predicted");
    int64_t k_gs = vs_snx_expl_find(glob, s_row);
    if (d->kind == VS_DATA_TABULAR) {
        printf("\nglobal invariant mask of the query (SNX-global, Eq. 4), its largest present minor features:\n");
        print_tabular_mask(d, s_row, glob->ms + glob->s_off[k_gs], eo->top_k, stdout);
        printf("\nlocal mask for this pair (%s):\n", vs_snx_method_name(c->method));
        print_tabular_mask(d, s_row, loc->ms + loc->s_off[0], eo->top_k, stdout);
    } else {
        printf("\nglobal invariant mask of the query graph (SNX-global, Eqs. 4 and 10), top %.0f%% of edges:\n", 100 * eo->top_frac);
        print_graph_mask(&d->graphs[s_row], glob->ms + glob->s_off[k_gs], eo->top_frac, stdout);
        printf("\nlocal mask of the query graph for this pair (%s):\n", vs_snx_method_name(c->method));
        print_graph_mask(&d->graphs[s_row], loc->ms + loc->s_off[0], eo->top_frac, stdout);
        printf("\nlocal mask of the reference graph:\n");
        print_graph_mask(&d->graphs[t_row], loc->mt + loc->t_off[0], eo->top_frac, stdout);
    }
    printf("\nfaithfulness (Eq. 1, lower is better) %.4f   counterfactual (Eq. 2, higher is better) %.4f\n", ev->fa, ev->cf);
    printf("conformity (Jaccard with the global mask) %.3f   violated constraints %lld of %lld\n", ev->conformity,
           (long long)ev->violated, (long long)ev->n_constraints);
    if (!isnan(ev->precision)) printf("against the planted truth: precision %.3f, recall %.3f\n", ev->precision, ev->recall);
}

/* OUT/explanation.json: the pair's masks and metrics; rc. */
static int write_pair(const snx_flags *c, const vs_dataset *d, int64_t s_row, int64_t t_row, double sim, const vs_snx_pair_expl *p,
                      const vs_snx_eval_opts *eo)
{
    if (mkdir(c->out, 0777) != 0 && errno != EEXIST) return vs_fail("%s: cannot create directory: %s", c->out, strerror(errno));
    char path[4096];
    snprintf(path, sizeof path, "%s/explanation.json", c->out);
    vs_out jo;
    vs_error err;
    if (vs_out_open(&jo, path, &err) != VS_OK) return vs_fail("%s", err.msg);
    FILE *jf = jo.f;
    const vs_snx_expl *glob = p->global, *loc = p->local;
    int64_t k_gs = vs_snx_expl_find(glob, s_row), k_gt = vs_snx_expl_find(glob, t_row);
    fprintf(jf, "{\"method\": \"%s\", \"data\": \"%s\", \"query_test_index\": %lld, \"reference_test_index\": %lld,\n",
            vs_snx_method_name(c->method), c->spec, (long long)c->q, (long long)c->r);
    fprintf(jf, " \"query_row\": %lld, \"reference_row\": %lld, ", (long long)s_row, (long long)t_row);
    json_num(jf, "similarity", sim, false);
    fprintf(jf, ",\n \"global_mask_query\": ");
    json_floats(jf, glob->ms + glob->s_off[k_gs], glob->s_off[k_gs + 1] - glob->s_off[k_gs]);
    fprintf(jf, ",\n \"global_mask_reference\": ");
    json_floats(jf, glob->ms + glob->s_off[k_gt], glob->s_off[k_gt + 1] - glob->s_off[k_gt]);
    fprintf(jf, ",\n \"local_mask_query\": ");
    json_floats(jf, loc->ms + loc->s_off[0], loc->s_off[1] - loc->s_off[0]);
    fprintf(jf, ",\n \"local_mask_reference\": ");
    json_floats(jf, loc->mt + loc->t_off[0], loc->t_off[1] - loc->t_off[0]);
    if (d->kind == VS_DATA_TABULAR && d->feature_names) {
        fprintf(jf, ",\n \"features\": [");
        for (int64_t j = 0; j < d->dim; j++) fprintf(jf, "%s\"%s\"", j ? ", " : "", d->feature_names[j]);
        fprintf(jf, "]");
    }
    const vs_snx_eval *ev = &p->eval;
    fprintf(jf, ",\n \"metrics\": {");
    json_num(jf, "faithfulness", ev->fa, true);
    json_num(jf, "counterfactual", ev->cf, true);
    json_num(jf, "conformity", ev->conformity, true);
    fprintf(jf, "\"violated_constraints\": %lld, \"constraints\": %lld, ", (long long)ev->violated, (long long)ev->n_constraints);
    json_num(jf, "precision", ev->precision, true);
    json_num(jf, "recall", ev->recall, true);
    json_num(jf, "global_faithfulness", p->global_eval[0].fa, true);
    json_num(jf, "global_counterfactual", p->global_eval[0].cf, false);
    fprintf(jf, "},\n \"top\": %lld, \"top_fraction\": %.9g, \"top_present\": %s}\n", (long long)eo->top_k, eo->top_frac,
            eo->present_only ? "true" : "false");
    if (vs_out_commit(&jo, &err) != VS_OK) return vs_fail("%s", err.msg);
    printf("\nwrote %s\n", path);
    return 0;
}

/* One pair: DES / PGExplainer fitted on the training portion, the pair explained, printed, written; rc. */
static int explain_one(const snx_flags *c, vs_module *m, const vs_dataset *d, const vs_train_split *sp, const vs_snx_opts *o,
                       const vs_snx_eval_opts *eo)
{
    int64_t s_row = sp->test[c->q], t_row = sp->test[c->r];
    vs_siamese_module sm = {m, d->n_node_features};
    vs_siamese f = vs_siamese_from_module(&sm);
    vs_snx_fitted fit;
    vs_snx_pair_expl p = {0};
    vs_error err;
    int rc = 0;
    if (vs_snx_fit(&f, d, sp->train, sp->n_train, sp->train_pairs, c->method, o, &fit, &err) != VS_OK ||
        vs_snx_explain_pair(&f, d, s_row, t_row, d->y[s_row] == d->y[t_row], c->method, &fit, o, eo, &p, &err) != VS_OK)
        rc = vs_fail("%s", err.msg);
    double sim = rc == 0 ? vs_snx_similarity(&f, d, s_row, t_row) : NAN;
    if (rc == 0) print_pair(c, d, s_row, t_row, sim, &p, eo);
    if (rc == 0) rc = write_pair(c, d, s_row, t_row, sim, &p, eo);
    vs_snx_pair_expl_clear(&p);
    vs_snx_fitted_clear(&fit);
    return rc;
}

static int run_explain_snx(vs_args *a, int argc, char **argv)
{
    snx_flags c;
    vs_data_flags df;
    int rc;
    if ((rc = snx_flags_parse(a, &c)) || (rc = vs_cli_data_flags(a, &df))) return rc;
    if (c.split_seed < 0 && (rc = read_split(c.model_dir, &c.split_seed, &c.frac))) return rc;
    vs_error err;
    vs_module *m = vs_model_load(c.model_dir, NULL, &err);
    if (!m) return vs_fail("%s", err.msg);
    vs_dataset *d = NULL;
    vs_train_split sp = {0};
    if (m->kind != VS_MODULE_SIAMESE) rc = vs_fail("%s is not a Siamese model (train one with --arch siamese-mlp|siamese-gcn|siamese-gin)", c.model_dir);
    if (rc == 0 && vs_load_spec(c.spec, &df, &d, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (rc == 0 && d->kind == VS_DATA_IMAGES) rc = vs_fail("%s: SNX explains tabular rows and graphs", c.spec);
    if (rc == 0 && vs_train_split_make(d, NULL, (uint64_t)c.split_seed, c.frac, true, &sp, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (rc == 0 && !c.all && (c.q >= sp.n_test || c.r >= sp.n_test))
        rc = vs_fail("--query %lld / --reference %lld: the test portion has %lld rows", (long long)c.q, (long long)c.r, (long long)sp.n_test);
    if (rc == 0) {
        vs_snx_opts o;
        vs_snx_eval_opts eo;
        snx_flags_options(a, &c, d->kind, &o, &eo);
        rc = c.all ? vs_explain_snx_pairs(a, argc, argv, m, d, &sp, c.method, &o, &eo, c.spec, c.out) : explain_one(&c, m, d, &sp, &o, &eo);
    }
    vs_train_split_clear(&sp);
    vs_dataset_free(d);
    vs_module_free(m);
    return rc;
}

/* `versus help explain`: SNX's methods as the registry lists them. */
static void explain_more_help(void)
{
    printf("\nSNX methods (versus explain snx --method M, versus bench snx --methods M,...; the older spelling in\n"
           "brackets is accepted too, and is the label explanation.json and the benchmark's tables print):\n");
    for (int i = 0; i < vs_method_family_count(VS_METHOD_SNX); i++) {
        const vs_method *m = vs_method_family_at(VS_METHOD_SNX, i);
        char name[64];
        snprintf(name, sizeof name, "%s%s%s%s", m->name, m->alias ? " (" : "", m->alias ? m->alias : "", m->alias ? ")" : "");
        printf("  %-24s %s\n", name, m->help);
    }
}

static int run_explain(int argc, char **argv)
{
    if (argc >= 1 && strcmp(argv[0], "svae") == 0) return vs_explain_svae(argc, argv);
    if (argc >= 1 && strcmp(argv[0], "cem") == 0) return vs_explain_cem(argc, argv);
    vs_args a;
    int rc = vs_args_parse("explain", explain_opts, argc, argv, &a);
    if (rc) return rc;
    if (a.n_pos < 1) return vs_usage_error("explain", "expected an explainer: 'versus explain snx ...'");
    if (strcmp(a.pos[0], "snx") == 0) return run_explain_snx(&a, argc, argv);
    return vs_usage_error("explain", "unknown explainer '%s' (snx, svae or cem; 'versus help methods' lists every method)", a.pos[0]);
}

const vs_verb vs_verb_explain = {
    "explain",
    "explain a Siamese pair (snx), an image by a supervised VAE's invariances (svae), or contrastively (cem)",
    "usage: versus explain snx --model DIR --data SPEC --query I --reference J [--method M] [--top K]\n"
    "                          [--top-present] [--gamma G] [--iters N] --out OUT\n"
    "       versus explain snx --model DIR --data SPEC --pairs all [--method M] [--top K] [--seed S] ...\n"
    "                          --out OUT [--shard K/N] [--resume]\n"
    "       versus explain svae --model DIR --input X.npy [--row I] [--samples N] [--sigma S] [--method M]\n"
    "                          [--data SPEC] [--seed S] --out OUT\n"
    "       versus explain cem --model DIR --vae DIR --input X.npy --out OUT [--attrs SPEC] [--superpixels N]\n"
    "                          [--class-names A,B,..] [--kappa K] [--gamma G] [--beta-pn B] [--beta-pp B]\n"
    "                          [--eta E] [--nu N] [--c0 C] [--searches S] [--pn-iters N] [--pp-iters N]\n"
    "                          [--pn-step S] [--pp-step S] [--fista]\n\n"
    "svae: a model trained by `versus train --arch svae` (or m2) explains row I of X: its predicted class;\n"
    "N invariant samples x~ (z1 of x kept, z2 ~ N(0, S^2), only decodes still classified as x is) in\n"
    "OUT/invariant.npy; attributions by --method (default expected_gradients, i.e. GradientSHAP; baseline\n"
    "x) of the latent divergence d(x, x~) = KL(q(z_k|x) || q(z_k|x~)) of Eq. 9 at each x~, k = 1 (what\n"
    "the classifier uses) in OUT/divergence_z1.npy and k = 2 (the nuisance) in OUT/divergence_z2.npy;\n"
    "one counterfactual per class in OUT/counterfactuals.npy: z1 set to the class's mean of q(z1|x) over\n"
    "the first 10000 images of --data (M2: y set to the class), z2 of x kept.\n\n"
    "cem: pertinent negatives and positives with monotonic attribute functions (Luss et al.) of the images\n"
    "of X.npy ([N,C,H,W], [C,H,W] or [H,W] in [0,1]) for the classifier DIR and the VAE --vae (the data\n"
    "manifold; task vae, e.g. --arch dip-vae).  The PN is the image D(z) of another class reached by\n"
    "subgradient descent over the latent code z with only additions of the attributes (Eq. 1), the c\n"
    "search of the supplement (c0, x10 without a PN, /2 with one, --searches runs of --pn-iters); the PP\n"
    "the least set of pixels (or --superpixels SLIC regions) that keeps the class (Eq. 2: ISTA on a [0,1]\n"
    "mask, then features added by rank).  --attrs names the attribute functions: NAME:+J or NAME:-J is\n"
    "latent J (identity or negated), NAME:+J:LO:HI clamps it to a range, NAME@DIR is a binary attribute\n"
    "classifier (its presence logit); default every latent, z0, z1, ...  Prints one line per image\n"
    "(\"boot; PN sneaker: +heel\") and writes OUT/explanation.json, pn.npy, pp.npy and cem.png.\n"
    "Defaults are the supplement's (kappa 5, gamma 100, beta 100 / 0.1, eta = nu = 1, 9 x 1000 / 9 x 100).\n\n"
    "snx:\n"
    "Explains the similarity of two rows (tabular) or graphs of the test portion of SPEC (the split the\n"
    "model was trained on, from DIR/metrics.json) with the SNX paper's two-stage explanations: the global\n"
    "invariant mask of the query (SNX-global, Eq. 4; graphs with the adjacency constraints of Eq. 10) and\n"
    "the local mask of the pair by --method (default snx: Algorithm 1, GDA with the global masks as\n"
    "constraints).  Prints both masks with feature names (\"age in [25,32)\") or edge lists, faithfulness\n"
    "(Eq. 1), counterfactual (Eq. 2), conformity and violated constraints, and precision/recall against\n"
    "planted truth on synthetic data; writes OUT/explanation.json with the masks and metrics.\n"
    "Faithfulness, counterfactual and conformity select the --top K minor features of a tabular mask over\n"
    "every minor feature, as the paper does; --top-present takes them among the features the pair has\n"
    "(the mask times 1[x_s or x_t], the global mask times 1[x]), since a mask value on a feature neither\n"
    "row has changes no prediction.  Violations and precision do not depend on it.\n\n"
    "--pairs all explains every test pair of the SNX protocol (each test row with 2 same-class and 2\n"
    "other-class references) instead of one: each pair as above (SNX-global masks of its two rows, the\n"
    "method's local masks, their scores), seeded from --seed and the pair's index, into OUT/pairs.json\n"
    "(per pair: rows, scores, masks; the means).  DES and PGExplainer are fitted once on the training\n"
    "portion.  --shard K/N explains pairs [floor((K-1) P / N), floor(K P / N)) into the part file --out for\n"
    "`versus merge`; finished pairs are journalled (OUT.journal) and --resume continues a killed run.",
    explain_opts,
    run_explain,
    explain_more_help,
};
