/* cmd_predict.c - `versus predict`: a model directory applied to a .npy array (or a graph model to a
 * folder of graphs): classifier scores [N,C], with --reference a Siamese model's similarity [N], and for a task with its own prediction
 * (versus/task.h: VAE reconstructions, generated images, --class C for a conditional generator)
 * that. */
#include "cli/cli.h"
#include "versus/versus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PREDICT_BATCH 256 /* examples per forward pass */

static const vs_cli_opt predict_opts[] = {
    {"model", 1, "model directory (model.json + model.safetensors)"},
    {"input", 1, "X.npy: examples with a leading batch dimension (graph models: a folder of graphs or a SPEC)"},
    {"reference", 1, "R.npy: a pair model's reference, one row (used for every example) or one per row of X"},
    {"class", 1, "conditional generator: the target class C"},
    {"out", 1, "Y.npy to write"},
    {NULL, 0, NULL},
};

static void dims_str(int ndim, const int64_t *s, char *buf, size_t n, const char *first)
{
    size_t o = (size_t)snprintf(buf, n, "[%s", first ? first : "");
    for (int i = 0; i < ndim && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%lld", i || first ? "," : "", (long long)s[i]);
    if (o < n) snprintf(buf + o, n - o, "]");
}

/* X must be [N, input...] when model.json records "input". */
static int check_input(const char *path, const vs_tensor *x, const vs_model_spec *spec)
{
    char got[128], want[128];
    vs_shape_str(x, got, sizeof got);
    if (x->ndim < 1 || x->shape[0] < 1) return vs_fail("%s: shape %s, expected at least one example", path, got);
    if (spec->input_ndim == 0) return 0;
    bool ok = x->ndim == spec->input_ndim + 1;
    for (int i = 0; ok && i < spec->input_ndim; i++) ok = x->shape[i + 1] == spec->input[i];
    if (ok) return 0;
    dims_str(spec->input_ndim, spec->input, want, sizeof want, "N");
    return vs_fail("%s: shape %s, expected %s (N examples of the model's input)", path, got, want);
}

/* R: one example or one per row of X, in the shape of the model's second input when a composite
 * declares it (a generator's condition c [k] beside its image x), else in X's. */
static int check_reference(const char *rpath, const vs_tensor *r, const char *xpath, const vs_tensor *x, const vs_module *m)
{
    int64_t shape[VS_MAX_DIMS];
    int nd = vs_composite_n_inputs(m) == 2 ? vs_composite_input_shape(m, 1, shape) : -1;
    if (nd < 0) nd = x->ndim - 1, memcpy(shape, x->shape + 1, (size_t)nd * sizeof *shape);
    bool ok = r->ndim == nd + 1 && (r->shape[0] == 1 || r->shape[0] == x->shape[0]);
    for (int i = 0; ok && i < nd; i++) ok = r->shape[i + 1] == shape[i];
    if (ok) return 0;
    char got[128], one[128], all[128];
    vs_shape_str(r, got, sizeof got);
    dims_str(nd, shape, one, sizeof one, "1");
    char n[24];
    snprintf(n, sizeof n, "%lld", (long long)x->shape[0]);
    dims_str(nd, shape, all, sizeof all, n);
    return vs_fail("%s: shape %s, expected %s or %s (one reference, or one per row of %s)", rpath, got, one, all, xpath);
}

static bool is_graph_model(const vs_model_spec *s)
{
    for (int64_t i = 0; i < s->n_layers; i++)
        switch (s->layers[i].op) {
        case VS_MODULE_GCN_CONV:
        case VS_MODULE_GIN_CONV:
        case VS_MODULE_MEAN_READOUT:
        case VS_MODULE_SUM_READOUT:
        case VS_MODULE_MAX_READOUT:
            return true;
        default:
            break;
        }
    return false;
}

/* Scores or similarities of every row of x, PREDICT_BATCH rows at a time; NULL after a message. */
static vs_tensor *predict_all(vs_module *m, vs_tensor *x, vs_tensor *ref, const char *xpath)
{
    int64_t n = x->shape[0], nb = (n + PREDICT_BATCH - 1) / PREDICT_BATCH;
    vs_tensor *parts[1024], *y = NULL;
    vs_tensor **p = nb <= 1024 ? parts : calloc((size_t)nb, sizeof *p);
    if (!p) {
        vs_fail("out of memory");
        return NULL;
    }
    bool ok = true;
    for (int64_t b = 0; b < nb && ok; b++) {
        int64_t i0 = b * PREDICT_BATCH, i1 = i0 + PREDICT_BATCH < n ? i0 + PREDICT_BATCH : n;
        vs_tensor *xb = vs_slice(x, 0, i0, i1);
        vs_clear_last_error();
        if (!ref) {
            p[b] = vs_module_forward(m, xb, NULL);
        } else {
            int64_t shape[VS_MAX_DIMS];
            memcpy(shape, x->shape, sizeof shape);
            shape[0] = i1 - i0;
            vs_tensor *rb = ref->shape[0] == 1 ? vs_expand(ref, ref->ndim, shape) : vs_slice(ref, 0, i0, i1);
            p[b] = vs_pair_forward(m, xb, rb, NULL);
        }
        if (!p[b]) {
            vs_fail("%s: the model does not accept these examples: %s", xpath, vs_last_error()->msg);
            ok = false;
        }
    }
    if (ok) {
        y = vs_concat((int)nb, p, 0);
        if (!y) vs_fail("%s", vs_last_error()->msg);
    }
    if (p != parts) free(p);
    return y;
}

/* The task options the model was trained with: DIR/metrics.json's "task_opts", when there is one. */
static int trained_task_opts(const char *dir, const vs_task *task, double *opt)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/metrics.json", dir);
    vs_json *doc = NULL;
    vs_error err;
    const char *s = NULL;
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    if (f && vs_json_parse_file(path, NULL, &doc, &err) != VS_OK) return vs_fail("%s", err.msg);
    if (doc && vs_json_opt_str(doc, "task_opts", NULL, &s, &err) != VS_OK) s = NULL; /* null: the defaults */
    int rc = vs_task_opts_parse(task, s, opt, &err) == VS_OK ? 0 : vs_fail("%s: %s", path, err.msg);
    vs_json_free(doc);
    return rc;
}

/* A task's own prediction in batches of PREDICT_BATCH; NULL after a message. */
static vs_tensor *task_predict_all(const vs_task *task, const double *opt, vs_module *m, vs_tensor *x, int64_t cls, const char *xpath)
{
    int64_t n = x->shape[0], nb = (n + PREDICT_BATCH - 1) / PREDICT_BATCH;
    vs_tensor **p = calloc((size_t)nb, sizeof *p), *y = NULL;
    if (!p) {
        vs_fail("out of memory");
        return NULL;
    }
    vs_error err;
    bool ok = true;
    for (int64_t b = 0; b < nb && ok; b++) {
        int64_t i0 = b * PREDICT_BATCH, i1 = i0 + PREDICT_BATCH < n ? i0 + PREDICT_BATCH : n;
        vs_error_clear(&err);
        if (task->predict(m, opt, vs_slice(x, 0, i0, i1), cls, &p[b], &err) != VS_OK) {
            vs_fail("%s: %s", xpath, err.msg);
            ok = false;
        }
    }
    if (ok && !(y = vs_concat((int)nb, p, 0))) vs_fail("%s", vs_last_error()->msg);
    free(p);
    return y;
}

/* ---- graph models: one row per graph -------------------------------------------------------------- */

/* Graphs named by --input or --reference: a folder (exported set or TU folder) or a data SPEC. */
static vs_dataset *load_graphs(const char *what, vs_error *err)
{
    vs_dataset *d = NULL;
    vs_data_flags f = {.seed = 1};
    struct stat st;
    vs_status s = stat(what, &st) == 0 && S_ISDIR(st.st_mode) ? vs_load_graph_dir(what, &d, err) : vs_load_spec(what, &f, &d, err);
    if (s == VS_OK && d->kind != VS_DATA_GRAPHS) {
        vs_error_set(err, VS_ERR_FORMAT, "%s holds %s, not graphs", what, d->kind == VS_DATA_IMAGES ? "images" : "tabular rows");
        vs_dataset_free(d);
        return NULL;
    }
    return s == VS_OK ? d : NULL;
}

/* Rows [i0, i1) of d as a model input (the node rows of their graphs), or NULL after a message. */
static vs_tensor *graph_rows(const vs_dataset *d, int64_t i0, int64_t i1, int64_t *idx, vs_graph_batch *g,
                             vs_forward_ctx *ctx, const char *path)
{
    vs_error err;
    vs_tensor *x = NULL;
    for (int64_t i = i0; i < i1; i++) idx[i - i0] = i;
    if (vs_train_input(d, idx, i1 - i0, &x, g, ctx, &err) != VS_OK) vs_fail("%s: %s", path, err.msg);
    return x;
}

/* Scores [G, C] of a graph classifier, or similarities [G] of a Siamese graph model against one
 * reference graph (compared with every graph) or one per graph. */
static vs_tensor *predict_graphs(vs_module *m, const vs_dataset *d, const vs_dataset *r, const char *xpath, const char *rpath)
{
    int64_t n = d->n, nb = (n + PREDICT_BATCH - 1) / PREDICT_BATCH, idx[PREDICT_BATCH], ridx[PREDICT_BATCH];
    if (r && r->n != 1 && r->n != n) {
        vs_fail("%s: %lld graphs, expected 1 (compared with every graph) or %lld (one per graph of %s)", rpath, (long long)r->n,
                (long long)n, xpath);
        return NULL;
    }
    if (r && r->n_node_features != d->n_node_features) {
        vs_fail("%s: %lld node features, but %s has %lld", rpath, (long long)r->n_node_features, xpath, (long long)d->n_node_features);
        return NULL;
    }
    vs_tensor **p = calloc((size_t)(nb ? nb : 1), sizeof *p), *y = NULL;
    bool ok = p != NULL;
    if (!p) vs_fail("out of memory");
    for (int64_t b = 0; b < nb && ok; b++) {
        int64_t i0 = b * PREDICT_BATCH, i1 = i0 + PREDICT_BATCH < n ? i0 + PREDICT_BATCH : n;
        vs_graph_batch ga = {0}, gb = {0};
        vs_forward_ctx ca = {0}, cb = {0};
        vs_tensor *xa = graph_rows(d, i0, i1, idx, &ga, &ca, xpath), *xb = NULL;
        if (xa && r) {
            for (int64_t i = i0; i < i1; i++) ridx[i - i0] = r->n == 1 ? 0 : i;
            vs_error err;
            if (vs_train_input(r, ridx, i1 - i0, &xb, &gb, &cb, &err) != VS_OK) vs_fail("%s: %s", rpath, err.msg);
        }
        vs_clear_last_error();
        if (xa && (!r || xb)) p[b] = r ? vs_siamese_forward(m, xa, &ca, xb, &cb) : vs_module_forward(m, xa, &ca);
        if (xa && (!r || xb) && !p[b]) vs_fail("%s: the model does not accept these graphs: %s", xpath, vs_last_error()->msg);
        ok = p[b] != NULL;
        vs_graph_batch_clear(&ga);
        vs_graph_batch_clear(&gb);
    }
    if (ok && !(y = vs_concat((int)nb, p, 0))) vs_fail("%s", vs_last_error()->msg);
    free(p);
    return y;
}

static int run_predict(int argc, char **argv)
{
    vs_args a;
    int rc = vs_args_parse("predict", predict_opts, argc, argv, &a);
    if (rc) return rc;
    if (a.n_pos) return vs_usage_error("predict", "unexpected argument '%s'", a.pos[0]);
    const char *dir = vs_args_get(&a, "model"), *xpath = vs_args_get(&a, "input"), *rpath = vs_args_get(&a, "reference"),
               *out = vs_args_get(&a, "out");
    if (!dir || !xpath || !out) return vs_usage_error("predict", "--model DIR, --input X.npy and --out Y.npy are required");
    int64_t cls;
    if ((rc = vs_args_int(&a, "class", -1, 0, 1 << 20, &cls))) return rc;
    vs_error err;
    vs_model_spec spec = {0};
    vs_module *m = vs_model_load(dir, &spec, &err);
    if (!m) return vs_fail("%s", err.msg);
    const vs_task *task = vs_task_for_model(m, &err);
    double opt[VS_TASK_MAX_OPTS];
    if (!task) rc = vs_fail("%s/model.json: %s", dir, err.msg);
    else if (task->predict) rc = trained_task_opts(dir, task, opt);
    else if (cls >= 0) rc = vs_fail("%s is a %s model; --class applies to conditional generators", dir, task->name);
    if (rc) {
        vs_model_spec_clear(&spec);
        vs_module_free(m);
        return rc;
    }
    bool grad = vs_set_grad_enabled(false);
    vs_scope_begin();
    vs_tensor *x = NULL, *ref = NULL, *y = NULL;
    vs_dataset *gx = NULL, *gr = NULL;
    if (task->predict) {
        if (rpath) rc = vs_fail("%s is a %s model; --reference applies to Siamese models", dir, task->name);
        else if (vs_npy_read_finite(xpath, &x, &err) != VS_OK) rc = vs_fail("%s", err.msg);
        else if ((rc = check_input(xpath, x, &spec)) == 0 && !(y = task_predict_all(task, opt, m, x, cls, xpath))) rc = 1;
    } else if (is_graph_model(&spec)) {
        if (rpath && !spec.siamese)
            rc = vs_fail("%s is a classifier; --reference applies to Siamese models", dir);
        else if (!rpath && spec.siamese)
            rc = vs_fail("%s is a Siamese model; give --reference with the graph(s) to compare with", dir);
        else if (!(gx = load_graphs(xpath, &err)) || (rpath && !(gr = load_graphs(rpath, &err))))
            rc = vs_fail("%s", err.msg);
        else if (!(y = predict_graphs(m, gx, gr, xpath, rpath)))
            rc = 1;
    } else if (rpath && !vs_module_compares_pairs(m))
        rc = vs_fail("%s takes one input; --reference applies to models that compare pairs (Siamese, or a composite with two inputs)", dir);
    else if (!rpath && vs_module_compares_pairs(m))
        rc = vs_fail("%s compares pairs; give --reference R.npy to compare X with", dir);
    else if (vs_npy_read_finite(xpath, &x, &err) != VS_OK)
        rc = vs_fail("%s", err.msg);
    else if ((rc = check_input(xpath, x, &spec)) == 0 && rpath) {
        if (vs_npy_read_finite(rpath, &ref, &err) != VS_OK)
            rc = vs_fail("%s", err.msg);
        else
            rc = check_reference(rpath, ref, xpath, x, m);
    }
    if (rc == 0 && !y && !(y = predict_all(m, x, ref, xpath))) rc = 1;
    if (rc == 0 && vs_npy_write(out, y, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (rc == 0) {
        char s[96];
        vs_shape_str(y, s, sizeof s);
        printf("wrote %s %s\n", out, s);
    }
    vs_scope_end();
    vs_set_grad_enabled(grad);
    vs_dataset_free(gx);
    vs_dataset_free(gr);
    vs_model_spec_clear(&spec);
    vs_module_free(m);
    return rc;
}

const vs_verb vs_verb_predict = {
    "predict",
    "apply a trained model to examples in a .npy file",
    "usage: versus predict --model DIR --input X.npy [--reference R.npy | --class C] --out Y.npy\n\n"
    "X holds N examples with a leading batch dimension (one 28x28 image is [1,1,28,28], one tabular\n"
    "row [1,p]) in the shape model.json's \"input\" gives.  A classifier writes its scores (logits)\n"
    "[N,C].  A pair model - a Siamese model, or any composite with two inputs (query, reference) - needs\n"
    "--reference: R holds one example (compared with every row of X) or N (row i with row i), in X's\n"
    "shape or that of the composite's second input (an imported generator's label [k]); Y is the\n"
    "Siamese model's cosine similarity [N] of the two embeddings (> 0 means \"same class\"), or what the\n"
    "composite's head computes (concat -> linear: [N,1]).  A VAE writes its reconstructions sigmoid(decoder(mu)) in X's shape.  A GAN writes\n"
    "generated images in [0,1]: a conditional (StarGAN) generator translates the images X to class\n"
    "--class C, an unconditional one maps the noise rows X [N,k] to images.  The task options the model\n"
    "was trained with (e.g. range=tanh) come from DIR/metrics.json.  Any other composite model\n"
    "(model.json's \"composite\") gets X as its first input and writes its first output.  A graph model\n"
    "reads graphs instead: --input (and --reference) name a folder that 'versus data export' wrote\n"
    "(node_features.npy, node_graph.npy, edges.npy), a folder holding one TU set (PREFIX_A.txt, ...)\n"
    "or a data SPEC (mutag, tu:DIR/PREFIX, graphs:DIR, synthetic-graph); Y has one row per graph:\n"
    "scores [G,C], or similarities [G] against one reference graph or one per graph.",
    predict_opts,
    run_predict,
    NULL,
};
