/* bench/ganmex/experiment.c - the GANMEX experiment (versus/ganmex.h): train or load the classifier and
 * the GANs, build the baselines, explain the test images one-vs-one with every method and baseline,
 * and score the maps.  The report is built in bench/ganmex/report.c. */
#include "bench/ganmex/ganmex_bench.h"
#include "explain/internal.h"
#include "versus/composite.h"
#include "versus/explain.h"
#include "versus/json.h"
#include "versus/method.h"
#include "versus/metrics.h"
#include "versus/model.h"
#include "versus/pairs.h"
#include "versus/train.h"
#include "versus/zoo.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define INIT_STREAM 0x696e6974ull       /* "init", as `versus train` */
#define PAIR_STREAM 0x7061697273ull     /* "pairs": the sampled intra/inter-class distances */
#define EXPLAIN_STREAM 0x6578706cull    /* "expl": random baselines, expected-gradient draws */
#define N_DIST_PAIRS 2000
#define SAMPLE_EVERY 200

const char *const vs_gx_method_names[GX_N_METHODS] = {"integrated_gradients", "deeplift", "occlusion", "deepshap",
                                                      "expected_gradients"};
const char *const vs_gx_method_labels[GX_N_METHODS] = {"IG", "DeepLIFT", "Occlusion-1", "DeepSHAP", "EG (target class)"};
const char *const vs_gx_baseline_labels[GX_N_BASELINES] = {"zero", "MDTS", "GANMEX"};
const char *const vs_gx_layer_labels[GX_N_LAYERS] = {"output", "FC", "CNN2", "CNN1"};

void vs_ganmex_experiment_opts_init(vs_ganmex_experiment_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->clf_epochs = 5;
    o->gan_epochs = 2;
    o->gan_batch = 16;
    o->g_lr = 1e-4, o->d_lr = 4e-4;
    o->n_explain = 40;
    o->n_faith = 5;
    o->n_cascade = 4;
    o->cascade_steps = 100;
    o->ig_steps = 32;
    o->per_step = 8;
    o->aopc_features = 100;
    o->ablations = true;
}

static void say(const vs_ganmex_experiment_opts *o, const char *what)
{
    if (o->progress) fprintf(o->progress, "ganmex: %s\n", what), fflush(o->progress);
}

/* ---- data ------------------------------------------------------------------------------------------ */

/* A new data set holding rows[0..n) of d (images). */
static vs_dataset *take_rows(const vs_dataset *d, const int64_t *rows, int64_t n, vs_error *err)
{
    vs_dataset *s = vs_dataset_new(d->kind, d->name);
    if (s) {
        s->n = n, s->n_classes = d->n_classes, s->ndim = d->ndim, s->dim = d->dim;
        memcpy(s->shape, d->shape, sizeof s->shape);
        s->X = malloc((size_t)(n * d->dim) * sizeof *s->X);
        s->y = malloc((size_t)n * sizeof *s->y);
    }
    if (!s || !s->X || !s->y) {
        vs_dataset_free(s);
        vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        memcpy(s->X + i * d->dim, d->X + rows[i] * d->dim, (size_t)d->dim * sizeof *s->X);
        s->y[i] = d->y[rows[i]];
    }
    return s;
}

/* ---- models ---------------------------------------------------------------------------------------- */

static bool exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static vs_status make_dir(const char *dir, vs_error *err)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) return VS_OK;
    return vs_error_set(err, VS_ERR_IO, "%s: cannot create directory: %s", dir, strerror(errno));
}

/* DIR/metrics.json as `versus train` writes it (the fields versus predict and this experiment read). */
static vs_status write_metrics(const char *dir, const vs_train_result *r, const char *task_opts, vs_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/metrics.json", dir);
    vs_json *j = vs_json_new_object();
    bool ok = j && vs_json_set(j, "format", vs_json_new_string("versus-metrics/1")) == VS_OK &&
              vs_json_set(j, "task", vs_json_new_string(r->task)) == VS_OK &&
              vs_json_set(j, "task_opts", task_opts ? vs_json_new_string(task_opts) : vs_json_new_null()) == VS_OK &&
              vs_json_set(j, "epochs", vs_json_new_int(r->epochs)) == VS_OK &&
              vs_json_set(j, "steps", vs_json_new_int(r->global_step)) == VS_OK &&
              vs_json_set(j, "train_seconds", vs_json_new_number(r->seconds)) == VS_OK;
    for (int i = 0; ok && i < r->n_metrics; i++)
        if (isfinite(r->metrics[i].value)) ok = vs_json_set(j, r->metrics[i].name, vs_json_new_number(r->metrics[i].value)) == VS_OK;
    vs_status st = ok ? vs_json_write_file(path, j, err) : vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
    vs_json_free(j);
    return st;
}

/* A number of DIR/metrics.json (NaN when absent). */
static double read_metric(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/metrics.json", dir);
    vs_json *doc = NULL;
    vs_error err;
    double v = NAN;
    if (vs_json_parse_file(path, NULL, &doc, &err) != VS_OK) return v;
    const vs_json *n = vs_json_get(doc, name);
    if (n && n->type == VS_JSON_NUMBER) v = n->number;
    vs_json_free(doc);
    return v;
}

/* The model of dir when it holds one; else the zoo's arch for d (with the classifier of clf_dir
 * attached), trained with the given options and written to dir.  *seconds: its training time. */
static vs_module *train_or_load(const char *dir, const char *arch, const vs_dataset *d, const vs_dataset *test, const char *clf_dir,
                                const vs_train_opts *base, double *seconds, vs_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/model.json", dir);
    vs_model_spec spec = {0};
    if (exists(path)) {
        vs_module *m = vs_model_load(dir, &spec, err);
        vs_model_spec_clear(&spec);
        *seconds = read_metric(dir, "train_seconds");
        return m;
    }
    if (make_dir(dir, err) != VS_OK) return NULL;
    vs_rng r;
    vs_rng_seed(&r, base->seed ^ INIT_STREAM);
    vs_module *m = vs_zoo_build(vs_zoo_find(arch), d, &r, err);
    if (m && clf_dir) {
        vs_module *s = vs_model_load(clf_dir, &spec, err);
        vs_model_spec_clear(&spec);
        if (!s || vs_composite_add_model(m, "classifier", s) != VS_OK) {
            if (s) vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
            vs_module_free(m);
            return NULL;
        }
    }
    if (!m) return NULL;
    char ckpt[4096], samples[4096];
    snprintf(ckpt, sizeof ckpt, "%s/checkpoint.safetensors", dir);
    snprintf(samples, sizeof samples, "%s/samples", dir);
    vs_train_opts o = *base;
    o.test = test, o.checkpoint = ckpt, o.resume = exists(ckpt);
    if (clf_dir) o.sample_dir = samples, o.sample_every = SAMPLE_EVERY;
    vs_train_result res;
    vs_status st = vs_train(m, d, &o, &res, err);
    int64_t in[3] = {d->shape[0], d->shape[1], d->shape[2]};
    vs_module_train(m, false);
    if (st == VS_OK) st = vs_model_save(m, 3, in, dir, err);
    if (st == VS_OK) st = write_metrics(dir, &res, o.task_opts, err);
    if (st == VS_OK) *seconds = res.seconds;
    vs_train_result_clear(&res);
    if (st != VS_OK) {
        vs_module_free(m);
        return NULL;
    }
    return m;
}

typedef struct gx_gan {
    vs_module *m;
    double opt[VS_TASK_MAX_OPTS];
} gx_gan;

/* A GAN of o->models/name: trained with task options task_opts unless already there. */
static vs_status gan_model(gx_run *run, const char *name, const char *task_opts, const vs_dataset *d, const vs_dataset *test,
                           double *seconds, gx_gan *g, vs_error *err)
{
    const vs_ganmex_experiment_opts *o = run->o;
    char dir[4096], clf[4096], msg[160];
    snprintf(dir, sizeof dir, "%s/%s", o->models, name);
    snprintf(clf, sizeof clf, "%s/classifier", o->models);
    snprintf(msg, sizeof msg, "GAN %s (%s)", name, task_opts ? task_opts : "defaults");
    say(o, msg);
    char optims[256];
    snprintf(optims, sizeof optims, "generator:lr=%g,beta1=0.5;critic:lr=%g,beta1=0.5", o->g_lr, o->d_lr);
    vs_train_opts to;
    vs_train_opts_init(&to);
    vs_train_optim per[VS_TASK_MAX_OPTIMS];
    to.epochs = o->gan_epochs, to.batch_size = o->gan_batch, to.seed = (uint64_t)o->seed, to.task_opts = task_opts;
    if (vs_train_parse_optims(optims, &to, per, VS_TASK_MAX_OPTIMS, &to.n_per_optim, err) != VS_OK) return err->code;
    to.per_optim = per;
    vs_module *m = train_or_load(dir, "ganmex", d, test, clf, &to, seconds, err);
    if (!m) return err->code;
    vs_module_free(m);
    return vs_generator_load(dir, &g->m, g->opt, err); /* with the options it was trained with */
}

/* ---- measurements ------------------------------------------------------------------------------------ */

static int64_t argmax(const float *v, int64_t n, int64_t skip)
{
    int64_t b = skip == 0 ? 1 : 0;
    for (int64_t i = 0; i < n; i++)
        if (i != skip && v[i] > v[b]) b = i;
    return b;
}

static double l2(const float *a, const float *b, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += ((double)a[i] - (b ? b[i] : 0)) * ((double)a[i] - (b ? b[i] : 0));
    return sqrt(s);
}

/* Logits of S for x [n, ...] (a caller-owned tensor). */
static vs_tensor *logits_of(vs_module *s, const vs_tensor *x)
{
    vs_module_train(s, false);
    bool grad = vs_set_grad_enabled(false);
    vs_tensor *y = vs_module_forward(s, (vs_tensor *)x, &(vs_forward_ctx){0});
    vs_set_grad_enabled(grad);
    return y;
}

/* Share of the rows of x that S assigns to targets, over every target class but the label, one
 * generator call per class (G(x, c) for every c != y). */
static vs_status target_rate(vs_module *s, gx_gan *g, const vs_tensor *x, const int64_t *y, int64_t C, double *rate, vs_error *err)
{
    int64_t n = x->shape[0], hit = 0, total = 0;
    int64_t *t = malloc((size_t)n * sizeof *t);
    if (!t) return vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
    vs_status st = VS_OK;
    for (int64_t c = 0; c < C && st == VS_OK; c++) {
        for (int64_t i = 0; i < n; i++) t[i] = c;
        vs_scope_begin();
        vs_tensor *b, *l;
        st = vs_generator_baselines(g->m, g->opt, x, t, &b, err);
        if (st == VS_OK && !(l = logits_of(s, b))) st = vs_error_set(err, vs_last_error()->code, "ganmex: %s", vs_last_error()->msg);
        for (int64_t i = 0; st == VS_OK && i < n; i++)
            if (y[i] != c) hit += argmax(l->data + i * C, C, -1) == c, total++;
        vs_scope_end();
    }
    free(t);
    *rate = total ? (double)hit / (double)total : NAN;
    return st;
}

/* The colour channel holding most of an image's ink. */
static int dominant_channel(const float *x, int64_t c, int64_t hw)
{
    int best = 0;
    double bs = -1;
    for (int64_t k = 0; k < c; k++) {
        double s = 0;
        for (int64_t i = 0; i < hw; i++) s += x[k * hw + i];
        if (s > bs) bs = s, best = (int)k;
    }
    return best;
}

/* Appendix D's colour claim over every test row (not only the explained ones): each row's target is S's
 * runner-up, as for the explained batch; with[i] / without[i]: the dominant channel of G(x, ct) equals
 * x's for the generator with / without L_sim.  Paired, so the two rates are compared by McNemar's
 * exact test on the rows where exactly one generator keeps the colour. */
static vs_status color_study(gx_run *run, vs_module *s, gx_gan *g, gx_gan *ns, const vs_dataset *t, vs_error *err)
{
    int64_t dim = (int64_t)run->c * run->h * run->w, hw = (int64_t)run->h * run->w, kept[2] = {0}, count[2][3] = {{0}}, only[2] = {0};
    int64_t *ct = malloc(512 * sizeof *ct);
    vs_status st = ct ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
    for (int64_t i0 = 0; st == VS_OK && i0 < t->n; i0 += 512) {
        int64_t nb = t->n - i0 < 512 ? t->n - i0 : 512;
        vs_tensor *x = vs_tensor_from(VS_SHAPE(nb, run->c, run->h, run->w), t->X + i0 * dim), *l = x ? logits_of(s, x) : NULL;
        vs_tensor *b[2] = {NULL, NULL};
        if (!l) st = vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
        for (int64_t i = 0; st == VS_OK && i < nb; i++) ct[i] = argmax(l->data + i * run->C, run->C, argmax(l->data + i * run->C, run->C, -1));
        if (st == VS_OK) st = vs_generator_baselines(g->m, g->opt, x, ct, &b[0], err);
        if (st == VS_OK) st = vs_generator_baselines(ns->m, ns->opt, x, ct, &b[1], err);
        for (int64_t i = 0; st == VS_OK && i < nb; i++) {
            int dx = dominant_channel(x->data + i * dim, run->c, hw);
            bool keep[2];
            for (int w = 0; w < 2; w++) {
                int db = dominant_channel(b[w]->data + i * dim, run->c, hw);
                keep[w] = db == dx, kept[w] += keep[w];
                if (db < 3) count[w][db]++;
            }
            if (keep[0] != keep[1]) only[keep[1]]++;
        }
        vs_tensor_free(b[0]), vs_tensor_free(b[1]), vs_tensor_free(l), vs_tensor_free(x);
    }
    free(ct);
    if (st != VS_OK) return st;
    double n = (double)t->n;
    run->color_with_sim = (double)kept[0] / n, run->color_without_sim = (double)kept[1] / n, run->color_rows = t->n;
    for (int w = 0; w < 2; w++)
        for (int k = 0; k < 3; k++) run->color_drawn[w][k] = (double)count[w][k] / n;
    run->color_only[0] = only[0], run->color_only[1] = only[1];
    /* exact two-sided binomial test of min(only) among only[0] + only[1] discordant rows at 1/2, in logs */
    int64_t m = only[0] + only[1], k = only[0] < only[1] ? only[0] : only[1];
    double p = 0;
    for (int64_t j = 0; j <= k; j++) p += exp(log_choose(m, j) - (double)m * log(2.0));
    run->color_p = m ? (2 * p < 1 ? 2 * p : 1) : 1;
    return VS_OK;
}

/* ---- explanations ---------------------------------------------------------------------------------- */

typedef struct gx_explainer {
    vs_model_fn fn;
    vs_method_opts *mo[GX_N_METHODS];
    const vs_dataset *train;
    vs_rng rng;
    int steps;
} gx_explainer;

/* The map of row x [1, ...] by method m explaining S_c0 - S_ct against baseline b [1, ...] (EG: K
 * training images of class ct).  Caller-owned. */
static vs_status explain_one(gx_explainer *e, int m, vs_tensor *x, int64_t c0, int64_t ct, const vs_tensor *b, vs_tensor **attr,
                             vs_error *err)
{
    vs_explain_request rq;
    vs_explain_request_init(&rq);
    rq.target = c0, rq.contrast = ct, rq.seed = 1;
    vs_tensor *set = NULL;
    if (m == GX_EG) {
        if (vs_class_baselines(e->train, ct, e->steps, &e->rng, &set, err) != VS_OK) return err->code;
        rq.baselines = set;
    } else if (m == GX_DEEPSHAP) {
        rq.baselines = b;
    } else {
        rq.baseline = b;
    }
    vs_status st = vs_explain(&e->fn, x, vs_method_opts_method(e->mo[m]), e->mo[m], &rq, attr, NULL, err);
    vs_tensor_free(set);
    return st;
}

/* Table 2 scores of one map, added to the cell. */
static vs_status score_map(gx_run *run, gx_explainer *e, gx_cell *cell, vs_tensor *x, vs_tensor *attr, int64_t c0, int64_t ct,
                           bool faith, vs_error *err)
{
    const vs_ganmex_experiment_opts *o = run->o;
    vs_perturb_opts po;
    vs_perturb_opts_init(&po);
    po.target = c0, po.contrast = ct, po.per_step = o->per_step;
    double *curve = NULL;
    int64_t np = 0;
    vs_status st = vs_perturbation_curve(&e->fn, x, attr, &po, &curve, &np, err);
    if (st != VS_OK) return st;
    if (!cell->curve) {
        cell->curve = calloc((size_t)np, sizeof *cell->curve);
        cell->n_points = np;
        if (!cell->curve) st = vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
    }
    for (int64_t k = 0; st == VS_OK && k < np && k < cell->n_points; k++) cell->curve[k] += curve[k];
    int64_t L = (o->aopc_features + o->per_step - 1) / o->per_step;
    cell->aopc_l += vs_aopc(curve, np, L);
    cell->aopc_all += vs_aopc(curve, np, -1);
    free(curve);
    cell->gini += vs_gini(attr->data, attr->size);
    cell->invloc += vs_inverse_localization(attr->data, run->c, run->h, run->w, run->w / GX_EDGE_FRAC);
    cell->n++;
    if (st == VS_OK && faith) {
        double f, m;
        st = vs_faithfulness_monotonicity(&e->fn, x, attr, &po, &f, &m, err);
        if (st == VS_OK && isfinite(f) && isfinite(m)) cell->faith += f, cell->mono += m, cell->n_faith++;
    }
    cell->done = true;
    return st;
}

/* The rows of the explained images and their baselines. */
typedef struct gx_batch {
    vs_tensor *x;              /* [n, c, h, w] */
    int64_t *c0, *ct, *y;      /* predicted, runner-up (the contrast), label */
    vs_tensor *b[GX_N_BASELINES + 1]; /* zero, mdts, ganmex, random target-class sample */
} gx_batch;

static void batch_clear(gx_batch *b)
{
    vs_tensor_free(b->x);
    for (int k = 0; k <= GX_N_BASELINES; k++) vs_tensor_free(b->b[k]);
    free(b->c0), free(b->ct), free(b->y);
}

/* Row i of t as a new [1, ...] tensor. */
static vs_tensor *row_of(const vs_tensor *t, int64_t i)
{
    int64_t shape[VS_MAX_DIMS];
    memcpy(shape, t->shape, (size_t)t->ndim * sizeof *shape);
    shape[0] = 1;
    int64_t per = t->size / t->shape[0];
    return vs_tensor_from(t->ndim, shape, t->data + i * per);
}

static vs_status build_batch(gx_run *run, vs_module *s, gx_gan *g, const vs_dataset *train, const vs_dataset *test, gx_batch *bt,
                             vs_error *err)
{
    int64_t n = run->n_explain, C = run->C, dim = test->dim;
    int64_t shape[4] = {n, run->c, run->h, run->w};
    bt->x = vs_tensor_from(4, shape, test->X);
    bt->c0 = malloc((size_t)n * sizeof *bt->c0), bt->ct = malloc((size_t)n * sizeof *bt->ct), bt->y = malloc((size_t)n * sizeof *bt->y);
    for (int k = 0; k <= GX_N_BASELINES; k++) bt->b[k] = k == GX_GANMEX ? NULL : vs_tensor_zeros(4, shape);
    if (!bt->x || !bt->c0 || !bt->ct || !bt->y || !bt->b[GX_ZERO] || !bt->b[GX_MDTS] || !bt->b[GX_N_BASELINES])
        return vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
    vs_tensor *l = logits_of(s, bt->x);
    if (!l) return vs_error_set(err, vs_last_error()->code, "ganmex: the classifier: %s", vs_last_error()->msg);
    for (int64_t i = 0; i < n; i++) {
        bt->y[i] = test->y[i];
        bt->c0[i] = argmax(l->data + i * C, C, -1);
        bt->ct[i] = argmax(l->data + i * C, C, bt->c0[i]);
    }
    vs_tensor_free(l);
    vs_rng r;
    vs_rng_seed(&r, (uint64_t)run->o->seed ^ EXPLAIN_STREAM);
    vs_status st = VS_OK;
    for (int64_t i = 0; i < n && st == VS_OK; i++) {
        st = vs_make_baseline(VS_BASELINE_MDTS, test->X + i * dim, 3, test->shape, 0, NULL, train, bt->ct[i], bt->b[GX_MDTS]->data + i * dim,
                              err);
        vs_tensor *one = NULL;
        if (st == VS_OK) st = vs_class_baselines(train, bt->ct[i], 1, &r, &one, err);
        if (st == VS_OK) memcpy(bt->b[GX_N_BASELINES]->data + i * dim, one->data, (size_t)dim * sizeof(float));
        vs_tensor_free(one);
    }
    if (st == VS_OK) st = vs_generator_baselines(g->m, g->opt, bt->x, bt->ct, &bt->b[GX_GANMEX], err);
    float *diff = st == VS_OK ? malloc((size_t)dim * sizeof *diff) : NULL;
    if (st == VS_OK && !diff) st = vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
    for (int k = 0; st == VS_OK && k <= GX_N_BASELINES; k++) {
        double s2 = 0, il = 0;
        int64_t n_il = 0;
        for (int64_t i = 0; i < n; i++) {
            const float *x = test->X + i * dim, *b = bt->b[k]->data + i * dim;
            s2 += l2(x, b, dim);
            for (int64_t j = 0; j < dim; j++) diff[j] = x[j] - b[j];
            double v = vs_inverse_localization(diff, run->c, run->h, run->w, run->w / GX_EDGE_FRAC);
            if (isfinite(v)) il += v, n_il++;
        }
        run->dist[k] = s2 / (double)n;
        run->diff_invloc[k] = n_il ? il / (double)n_il : NAN;
    }
    free(diff);
    return st;
}

/* D_intra and D_inter: mean L2 distance of N_DIST_PAIRS random test pairs of the same / another class. */
static void class_distances(gx_run *run, const vs_dataset *test)
{
    vs_rng r;
    vs_rng_seed(&r, (uint64_t)run->o->seed ^ PAIR_STREAM);
    double s[2] = {0};
    int64_t k[2] = {0};
    for (int64_t t = 0; t < 50 * N_DIST_PAIRS && (k[0] < N_DIST_PAIRS || k[1] < N_DIST_PAIRS); t++) {
        int64_t a = (int64_t)vs_rng_below(&r, (uint64_t)test->n), b = (int64_t)vs_rng_below(&r, (uint64_t)test->n);
        int same = test->y[a] == test->y[b] ? 0 : 1;
        if (a == b || k[same] >= N_DIST_PAIRS) continue;
        s[same] += l2(test->X + a * test->dim, test->X + b * test->dim, test->dim), k[same]++;
    }
    run->d_intra = k[0] ? s[0] / (double)k[0] : NAN;
    run->d_inter = k[1] ? s[1] / (double)k[1] : NAN;
}

/* Copy an image of n floats into a Fig. 2 slot. */
static void keep(float *dst, const float *src, int64_t n) { memcpy(dst, src, (size_t)n * sizeof *dst); }

/* Table 2 over the batch, and the maps of the first rows for Fig. 2. */
static vs_status explain_all(gx_run *run, gx_explainer *e, gx_batch *bt, vs_error *err)
{
    int64_t dim = run->c * run->h * run->w;
    vs_status st = VS_OK;
    for (int64_t i = 0; i < run->n_explain && st == VS_OK; i++) {
        if (run->o->progress && i % 10 == 0) fprintf(run->o->progress, "ganmex: explaining image %lld of %lld\n", (long long)i, (long long)run->n_explain);
        vs_tensor *x = row_of(bt->x, i);
        if (i < run->n_grid) keep(run->grid_x + i * dim, x->data, dim);
        for (int b = 0; b < GX_N_BASELINES && st == VS_OK; b++) {
            vs_tensor *base = row_of(bt->b[b], i);
            if (i < run->n_grid) keep(run->grid_b + (i * GX_N_BASELINES + b) * dim, base->data, dim);
            for (int m = 0; m < GX_N_METHODS && st == VS_OK; m++) {
                if (m == GX_EG && b != GX_ZERO) continue; /* EG draws its own target-class baselines */
                vs_tensor *attr = NULL;
                st = x && base ? explain_one(e, m, x, bt->c0[i], bt->ct[i], base, &attr, err) : vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
                if (st == VS_OK) st = score_map(run, e, &run->cell[m][b], x, attr, bt->c0[i], bt->ct[i], i < run->o->n_faith, err);
                if (st == VS_OK && i < run->n_grid && m < 3) keep(run->grid_a + ((i * 3 + m) * GX_N_BASELINES + b) * dim, attr->data, dim);
                vs_tensor_free(attr);
            }
            vs_tensor_free(base);
        }
        if (i < run->n_grid) run->grid_from[i] = bt->c0[i], run->grid_to[i] = bt->ct[i];
        vs_tensor_free(x);
    }
    for (int m = 0; m < GX_N_METHODS; m++)
        for (int b = 0; b < GX_N_BASELINES; b++) {
            gx_cell *c = &run->cell[m][b];
            if (!c->done) continue;
            double n = (double)c->n, nf = (double)c->n_faith;
            c->aopc_l /= n, c->aopc_all /= n, c->gini /= n, c->invloc /= n;
            c->faith = c->n_faith ? c->faith / nf : NAN, c->mono = c->n_faith ? c->mono / nf : NAN;
            for (int64_t k = 0; k < c->n_points; k++) c->curve[k] /= n;
        }
    return st;
}

/* Misclassified test images: why the predicted class and not the true one, against the GANMEX
 * baseline of the true class (IG, DeepLIFT, Occlusion). */
static vs_status misclassified(gx_run *run, gx_explainer *e, vs_module *s, gx_gan *g, const vs_dataset *test, vs_error *err)
{
    int64_t dim = test->dim, C = run->C;
    vs_status st = VS_OK;
    for (int64_t i0 = 0; i0 < test->n && run->n_mis < GX_GRID_ROWS && st == VS_OK; i0 += 256) {
        int64_t nb = test->n - i0 < 256 ? test->n - i0 : 256;
        vs_tensor *x = vs_tensor_from(VS_SHAPE(nb, run->c, run->h, run->w), test->X + i0 * dim);
        vs_tensor *l = x ? logits_of(s, x) : NULL;
        for (int64_t i = 0; l && i < nb && run->n_mis < GX_GRID_ROWS && st == VS_OK; i++) {
            int64_t p = argmax(l->data + i * C, C, -1), y = test->y[i0 + i], k = run->n_mis;
            if (p == y) continue;
            vs_tensor *xi = row_of(x, i), *b = NULL;
            st = vs_generator_baselines(g->m, g->opt, xi, &y, &b, err);
            keep(run->mis_x + k * dim, xi->data, dim);
            if (st == VS_OK) keep(run->mis_b + k * dim, b->data, dim);
            for (int m = 0; m < 3 && st == VS_OK; m++) {
                vs_tensor *attr = NULL;
                st = explain_one(e, m, xi, p, y, b, &attr, err);
                if (st == VS_OK) keep(run->mis_a + (k * 3 + m) * dim, attr->data, dim);
                vs_tensor_free(attr);
            }
            run->grid_from[GX_GRID_ROWS + k] = p, run->grid_to[GX_GRID_ROWS + k] = y;
            run->n_mis++;
            vs_tensor_free(xi);
            vs_tensor_free(b);
        }
        vs_tensor_free(l);
        vs_tensor_free(x);
    }
    return st;
}

/* ---- cascading randomisation (Fig. 3G) -------------------------------------------------------------- */

typedef struct gx_cascade_ctx {
    gx_run *run;
    gx_explainer *e;
    vs_module *s;              /* the classifier being randomised */
    const gx_batch *bt;
    vs_tensor *x;              /* the first n explained rows [n, ...] */
    int64_t n;
    const vs_tensor *fixed;    /* baselines fixed before the randomisation [>= n rows], or NULL: regenerated */
    gx_gan *tune;              /* regenerated: the GANMEX model re-trained against the randomised S */
    const vs_dataset *rows;    /* ... on these training rows (one epoch) per randomised layer */
    const vs_train_opts *to;
    int stage;                 /* 0: the trained S, k: k layers randomised */
    vs_error *err;
} gx_cascade_ctx;

/* Copy the parameters of S (as randomised now) into the GANMEX model's frozen classifier child. */
static vs_status copy_classifier(vs_module *s, vs_module *gan, vs_error *err)
{
    vs_module *dst = vs_module_child(gan, "classifier");
    vs_named_tensors a = {0}, b = {0};
    vs_status st = dst ? VS_OK : vs_error_set(err, VS_ERR_ARG, "ganmex: the GANMEX model has no classifier to re-train against");
    if (st == VS_OK && (vs_module_named_tensors(s, VS_STATE_ALL, &a) != VS_OK || vs_module_named_tensors(dst, VS_STATE_ALL, &b) != VS_OK))
        st = vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
    if (st == VS_OK && a.n != b.n) st = vs_error_set(err, VS_ERR_SHAPE, "ganmex: the GANMEX model's classifier is not S");
    for (int64_t i = 0; st == VS_OK && i < a.n; i++) {
        if (a.items[i].tensor->size != b.items[i].tensor->size) st = vs_error_set(err, VS_ERR_SHAPE, "ganmex: the GANMEX model's classifier is not S");
        else memcpy(b.items[i].tensor->data, a.items[i].tensor->data, (size_t)a.items[i].tensor->size * sizeof(float));
    }
    vs_named_tensors_clear(&a);
    vs_named_tensors_clear(&b);
    return st;
}

/* The GANMEX baselines of the n rows from the generator re-trained against S as it is now (stage 0:
 * the trained generator as it is); records the share that S assigns to the target class. */
static vs_status regenerate(gx_cascade_ctx *c, vs_tensor **b)
{
    vs_status st = VS_OK;
    if (c->stage > 0) {
        vs_train_result res;
        st = copy_classifier(c->s, c->tune->m, c->err);
        if (st == VS_OK) st = vs_train(c->tune->m, c->rows, c->to, &res, c->err);
        if (st == VS_OK) vs_train_result_clear(&res);
    }
    if (st == VS_OK) st = vs_generator_baselines(c->tune->m, c->tune->opt, c->x, c->bt->ct, b, c->err);
    vs_tensor *l = st == VS_OK ? logits_of(c->s, *b) : NULL;
    if (st == VS_OK && !l) st = vs_error_set(c->err, vs_last_error()->code, "ganmex: %s", vs_last_error()->msg);
    if (st == VS_OK && c->stage > 0) {
        int64_t hit = 0;
        for (int64_t i = 0; i < c->n; i++) hit += argmax(l->data + i * c->run->C, c->run->C, -1) == c->bt->ct[i];
        c->run->cascade_target[c->stage - 1] = (double)hit / (double)c->n;
        /* how many classes the randomised S still tells apart: the share of the explained inputs in
         * its most frequent class (1: every input one class, so no generator can reach the others) */
        vs_tensor *lx = logits_of(c->s, c->bt->x);
        int64_t nx = c->bt->x->shape[0], *count = lx ? calloc((size_t)c->run->C, sizeof *count) : NULL, top = 0;
        for (int64_t i = 0; count && i < nx; i++) count[argmax(lx->data + i * c->run->C, c->run->C, -1)]++;
        for (int64_t k = 0; count && k < c->run->C; k++) top = count[k] > top ? count[k] : top;
        c->run->cascade_mode[c->stage - 1] = count ? (double)top / (double)nx : NAN;
        free(count);
        vs_tensor_free(lx);
    }
    vs_tensor_free(l);
    return st;
}

/* The IG maps of the n rows, one after the other [n, ...], against the fixed or regenerated baselines. */
static vs_status cascade_maps(void *ctx, vs_tensor **attr)
{
    gx_cascade_ctx *c = ctx;
    vs_tensor *made = NULL, *out = vs_tensor_zeros(c->x->ndim, c->x->shape);
    vs_status st = out ? VS_OK : vs_error_set(c->err, VS_ERR_NOMEM, "ganmex: out of memory");
    if (st == VS_OK && !c->fixed) st = regenerate(c, &made);
    const vs_tensor *b = c->fixed ? c->fixed : made;
    int64_t per = out ? out->size / c->n : 0;
    for (int64_t i = 0; i < c->n && st == VS_OK; i++) {
        vs_tensor *xi = row_of(c->x, i), *bi = row_of(b, i), *a = NULL;
        st = xi && bi ? explain_one(c->e, GX_IG, xi, c->bt->c0[i], c->bt->ct[i], bi, &a, c->err)
                      : vs_error_set(c->err, VS_ERR_NOMEM, "ganmex: out of memory");
        if (st == VS_OK) memcpy(out->data + i * per, a->data, (size_t)per * sizeof(float));
        vs_tensor_free(a), vs_tensor_free(xi), vs_tensor_free(bi);
    }
    vs_tensor_free(made);
    c->stage++;
    if (st != VS_OK) vs_tensor_free(out), out = NULL;
    *attr = out;
    return st;
}

/* The layers of S with parameters, from the output down (ganmex-mnist: conv, conv, linear, linear):
 * layers[k] points into params[k]. */
static vs_status cascade_layers(vs_module *s, vs_tensor *params[GX_N_LAYERS][2], vs_tensor *const *layers[GX_N_LAYERS],
                                int n_params[GX_N_LAYERS], vs_error *err)
{
    int k = 0;
    for (int64_t i = s->n_children - 1; i >= 0 && k < GX_N_LAYERS; i--) {
        vs_named_tensors t = {0};
        if (vs_module_named_tensors(s->children[i], VS_STATE_PARAMS, &t) != VS_OK) return vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
        if (t.n > 0) {
            n_params[k] = (int)(t.n < 2 ? t.n : 2);
            for (int p = 0; p < n_params[k]; p++) params[k][p] = t.items[p].tensor;
            layers[k] = params[k], k++;
        }
        vs_named_tensors_clear(&t);
    }
    return k < GX_N_LAYERS ? vs_error_set(err, VS_ERR_ARG, "ganmex: cascading randomisation needs %d layers with weights", GX_N_LAYERS) : VS_OK;
}

/* Spearman rank of the |IG| maps of the first n_cascade images (taken together) with the original
 * ones as S's output, FC, CNN2 and CNN1 layers are randomised cumulatively, the same draws for every
 * series: baselines fixed before the randomisation (zero, GANMEX, stand-alone GAN, whose generator
 * never sees S) and, as in the paper's appendix D, GANMEX baselines regenerated after each layer by
 * the generator re-trained for o->cascade_steps steps against the randomised S (tune: a copy of the
 * GANMEX model of o->models/ganmex, changed here). */
static vs_status cascade(gx_run *run, gx_explainer *e, vs_module *s, gx_batch *bt, vs_tensor *standalone, gx_gan *tune,
                         const vs_dataset *train, vs_error *err)
{
    const vs_ganmex_experiment_opts *o = run->o;
    vs_tensor *params[GX_N_LAYERS][2];
    vs_tensor *const *layers[GX_N_LAYERS];
    int n_params[GX_N_LAYERS];
    for (int l = 0; l < GX_N_LAYERS; l++) run->cascade_target[l] = run->cascade_mode[l] = NAN;
    vs_status st = cascade_layers(s, params, layers, n_params, err);
    int64_t n = o->n_cascade < run->n_explain ? o->n_cascade : run->n_explain;
    /* the re-training rows: the first cascade_steps batches of a seeded shuffle of the training rows */
    int64_t n_rows = o->cascade_steps * o->gan_batch < train->n ? o->cascade_steps * o->gan_batch : train->n;
    int64_t *pick = malloc((size_t)(train->n > 0 ? train->n : 1) * sizeof *pick);
    vs_dataset *rows = NULL, *judged = NULL; /* judged: the few rows vs_train's evaluation reads (its metrics are not used) */
    if (st == VS_OK && !pick) st = vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
    if (st == VS_OK && tune && n_rows > 0) {
        vs_rng r;
        vs_rng_seed(&r, (uint64_t)o->seed ^ EXPLAIN_STREAM);
        for (int64_t i = 0; i < train->n; i++) pick[i] = i;
        for (int64_t i = train->n - 1; i > 0; i--) {
            int64_t j = (int64_t)vs_rng_below(&r, (uint64_t)(i + 1)), t = pick[i];
            pick[i] = pick[j], pick[j] = t;
        }
        if (!(rows = take_rows(train, pick, n_rows, err)) || !(judged = take_rows(train, pick, n_rows < 32 ? n_rows : 32, err))) st = err->code;
    }
    free(pick);
    vs_train_opts to;
    vs_train_opts_init(&to);
    vs_train_optim per[VS_TASK_MAX_OPTIMS];
    char optims[256];
    snprintf(optims, sizeof optims, "generator:lr=%g,beta1=0.5;critic:lr=%g,beta1=0.5", o->g_lr, o->d_lr);
    to.epochs = 1, to.batch_size = o->gan_batch, to.seed = (uint64_t)o->seed, to.task_opts = o->gan_opts, to.test = judged;
    if (st == VS_OK && vs_train_parse_optims(optims, &to, per, VS_TASK_MAX_OPTIMS, &to.n_per_optim, err) != VS_OK) st = err->code;
    to.per_optim = per;
    vs_tensor *x = n > 0 ? vs_tensor_from(VS_SHAPE(n, run->c, run->h, run->w), bt->x->data) : NULL;
    const vs_tensor *bases[GX_N_CASCADE] = {bt->b[GX_ZERO], bt->b[GX_GANMEX], NULL, standalone};
    for (int c = 0; c < GX_N_CASCADE && st == VS_OK; c++) {
        for (int l = 0; l < GX_N_LAYERS; l++) run->cascade[c][l] = NAN;
        bool regen = c == GX_CASCADE_RETRAINED;
        if (n == 0 || (!regen && !bases[c]) || (regen && !rows)) continue;
        gx_cascade_ctx ctx = {run, e, s, bt, x, n, bases[c], tune, rows, &to, 0, err};
        double rank[GX_N_LAYERS], ssim[GX_N_LAYERS];
        vs_rng r;
        vs_rng_seed(&r, (uint64_t)o->seed);
        if (regen) say(o, "cascading randomisation: re-training GANMEX against each randomised S");
        st = vs_cascading_randomization(layers, n_params, GX_N_LAYERS, cascade_maps, &ctx, run->h, run->w, &r, rank, ssim, err);
        for (int l = 0; st == VS_OK && l < GX_N_LAYERS; l++) run->cascade[c][l] = rank[l];
    }
    vs_tensor_free(x);
    vs_dataset_free(rows);
    vs_dataset_free(judged);
    return st;
}

/* ---- the experiment ---------------------------------------------------------------------------------- */

static void run_clear(gx_run *run)
{
    for (int m = 0; m < GX_N_METHODS; m++)
        for (int b = 0; b < GX_N_BASELINES; b++) free(run->cell[m][b].curve);
    free(run->grid_x), free(run->grid_b), free(run->grid_a);
    free(run->mis_x), free(run->mis_b), free(run->mis_a);
}

/* The classifier of o->models/classifier, trained on d unless there. */
static vs_module *classifier(gx_run *run, const vs_dataset *d, const vs_dataset *test, vs_error *err)
{
    const vs_ganmex_experiment_opts *o = run->o;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/classifier", o->models);
    say(o, "classifier (ganmex-mnist)");
    vs_train_opts to;
    vs_train_opts_init(&to);
    to.epochs = o->clf_epochs, to.batch_size = 64, to.seed = (uint64_t)o->seed;
    return train_or_load(dir, "ganmex-mnist", d, test, NULL, &to, &run->train_seconds[0], err);
}

static vs_status experiment(gx_run *run, const vs_dataset *d, const vs_dataset *test, vs_error *err)
{
    const vs_ganmex_experiment_opts *o = run->o;
    const vs_dataset *train = d;
    vs_dataset *train_part = NULL, *test_part = NULL;
    if (!test) { /* vs_train's stratified split of d with the seed: its test rows, and the train rows for MDTS */
        vs_rng r;
        vs_rng_seed(&r, (uint64_t)o->seed);
        int64_t *tr = NULL, *te = NULL, ntr = 0, nte = 0;
        vs_status st = vs_split_stratified(d->y, d->n, d->n_classes, 0.7, &r, &tr, &ntr, &te, &nte, err);
        if (st == VS_OK && (!(train_part = take_rows(d, tr, ntr, err)) || !(test_part = take_rows(d, te, nte, err)))) st = err->code;
        free(tr), free(te);
        if (st != VS_OK) {
            vs_dataset_free(train_part);
            return st;
        }
        train = train_part;
    }
    const vs_dataset *t = test ? test : test_part;
    run->C = d->n_classes, run->c = d->shape[0], run->h = d->shape[1], run->w = d->shape[2];
    run->n_explain = o->n_explain < t->n ? o->n_explain : t->n;
    run->n_grid = run->n_explain < GX_GRID_ROWS ? (int)run->n_explain : GX_GRID_ROWS;
    int64_t dim = d->dim;
    run->grid_x = calloc((size_t)(GX_GRID_ROWS * dim), sizeof(float));
    run->grid_b = calloc((size_t)(GX_GRID_ROWS * GX_N_BASELINES * dim), sizeof(float));
    run->grid_a = calloc((size_t)(GX_GRID_ROWS * 3 * GX_N_BASELINES * dim), sizeof(float));
    run->mis_x = calloc((size_t)(GX_GRID_ROWS * dim), sizeof(float));
    run->mis_b = calloc((size_t)(GX_GRID_ROWS * dim), sizeof(float));
    run->mis_a = calloc((size_t)(GX_GRID_ROWS * 3 * dim), sizeof(float));
    gx_gan g = {0}, sa = {0}, ns = {0};
    gx_batch bt = {0};
    gx_explainer e = {.train = train, .steps = o->ig_steps};
    vs_rng_seed(&e.rng, (uint64_t)o->seed ^ EXPLAIN_STREAM);
    vs_module *s = NULL;
    vs_status st = run->grid_x && run->grid_b && run->grid_a && run->mis_x && run->mis_b && run->mis_a
                       ? make_dir(o->models, err)
                       : vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
    if (st == VS_OK && !(s = classifier(run, d, test, err))) st = err->code;
    char ganmex_opts[512];
    snprintf(ganmex_opts, sizeof ganmex_opts, "%s", o->gan_opts ? o->gan_opts : "");
    if (st == VS_OK) st = gan_model(run, "ganmex", o->gan_opts, d, test, &run->train_seconds[1], &g, err);
    if (st == VS_OK && o->ablations) { /* appendix D: the stand-alone GAN on MNIST-like data, no L_sim on coloured data */
        char opts[600];
        snprintf(opts, sizeof opts, "%s%s%s", ganmex_opts, ganmex_opts[0] ? "," : "", o->colored ? "lambda_sim=0" : "cls=critic");
        st = o->colored ? gan_model(run, "nosim", opts, d, test, &run->train_seconds[3], &ns, err)
                        : gan_model(run, "standalone", opts, d, test, &run->train_seconds[2], &sa, err);
        run->has_standalone = st == VS_OK && !o->colored, run->has_nosim = st == VS_OK && o->colored;
    }
    if (st == VS_OK) {
        say(o, "accuracy, target-class rates, baselines, distances");
        int64_t right = 0;
        for (int64_t i0 = 0; i0 < t->n; i0 += 512) {
            int64_t nb = t->n - i0 < 512 ? t->n - i0 : 512;
            vs_tensor *x = vs_tensor_from(VS_SHAPE(nb, run->c, run->h, run->w), t->X + i0 * dim), *l = x ? logits_of(s, x) : NULL;
            for (int64_t i = 0; l && i < nb; i++) right += argmax(l->data + i * run->C, run->C, -1) == t->y[i0 + i];
            vs_tensor_free(l);
            vs_tensor_free(x);
        }
        run->clf_accuracy = (double)right / (double)t->n;
        st = build_batch(run, s, &g, train, t, &bt, err);
    }
    if (st == VS_OK) st = target_rate(s, &g, bt.x, bt.y, run->C, &run->target_rate, err);
    run->target_rate_standalone = run->target_rate_nosim = NAN;
    if (st == VS_OK && sa.m) st = target_rate(s, &sa, bt.x, bt.y, run->C, &run->target_rate_standalone, err);
    if (st == VS_OK && ns.m) st = target_rate(s, &ns, bt.x, bt.y, run->C, &run->target_rate_nosim, err);
    run->color_with_sim = run->color_without_sim = run->color_p = NAN;
    for (int k = 0; k < 3; k++) run->color_drawn[0][k] = run->color_drawn[1][k] = NAN;
    if (st == VS_OK && o->colored && ns.m) st = color_study(run, s, &g, &ns, t, err);
    if (st == VS_OK) class_distances(run, t);
    vs_module_explainee ex = {s, NULL};
    e.fn = vs_model_fn_from_module(&ex);
    for (int m = 0; m < GX_N_METHODS && st == VS_OK; m++) {
        e.mo[m] = vs_method_opts_new(vs_method_find(vs_gx_method_names[m]));
        if (!e.mo[m]) st = vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
        char steps[32];
        snprintf(steps, sizeof steps, "%d", o->ig_steps);
        if (st == VS_OK && m == GX_IG) st = vs_method_opts_set(e.mo[m], "steps", steps, err);
        if (st == VS_OK && m == GX_EG) st = vs_method_opts_set(e.mo[m], "samples", steps, err);
    }
    if (st == VS_OK) say(o, "explanations (Table 2)");
    if (st == VS_OK) st = explain_all(run, &e, &bt, err);
    if (st == VS_OK) st = misclassified(run, &e, s, &g, t, err);
    vs_tensor *sab = NULL;
    if (st == VS_OK && sa.m) st = vs_generator_baselines(sa.m, sa.opt, bt.x, bt.ct, &sab, err);
    gx_gan tune = {0}; /* a copy of the GANMEX model, re-trained against the randomised S */
    if (st == VS_OK && o->cascade_steps > 0 && o->n_cascade > 0) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/ganmex", o->models);
        st = vs_generator_load(dir, &tune.m, tune.opt, err);
    }
    if (st == VS_OK) say(o, "cascading randomisation");
    if (st == VS_OK) st = cascade(run, &e, s, &bt, sab, tune.m ? &tune : NULL, train, err);
    vs_tensor_free(sab);
    vs_module_free(tune.m);
    for (int m = 0; m < GX_N_METHODS; m++) vs_method_opts_free(e.mo[m]);
    batch_clear(&bt);
    vs_module_free(s);
    vs_module_free(g.m);
    vs_module_free(sa.m);
    vs_module_free(ns.m);
    vs_dataset_free(train_part);
    vs_dataset_free(test_part);
    return st;
}

vs_status vs_ganmex_experiment(const vs_dataset *d, const vs_dataset *test, const vs_ganmex_experiment_opts *o, vs_report **out,
                               vs_error *err)
{
    *out = NULL;
    if (!o->spec || !o->models) return vs_error_set(err, VS_ERR_ARG, "ganmex: the data name and the models directory are required");
    if (d->kind != VS_DATA_IMAGES || d->ndim != 3 || d->shape[1] != d->shape[2])
        return vs_error_set(err, VS_ERR_ARG, "ganmex: the experiment takes square images; %s holds none", d->name);
    if (test && (test->dim != d->dim || test->n_classes != d->n_classes))
        return vs_error_set(err, VS_ERR_ARG, "ganmex: the test data %s differs from %s in shape or classes", test->name, d->name);
    if (o->n_explain < 1 || o->per_step < 1 || o->ig_steps < 1)
        return vs_error_set(err, VS_ERR_ARG, "ganmex: n_explain, per_step and ig_steps must be at least 1");
    gx_run run = {.o = o};
    for (int k = 0; k < 4; k++) run.train_seconds[k] = NAN;
    vs_status st = experiment(&run, d, test, err);
    if (st == VS_OK) st = vs_gx_report(&run, out, err);
    run_clear(&run);
    return st;
}
