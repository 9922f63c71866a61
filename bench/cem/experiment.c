/* bench/cem/experiment.c - CEM-MAF's Fashion-MNIST evaluation (supplement Section 4, Tables 1 and 6,
 * Fig. 7) on one subset: train or load the Table 5 classifier and the Table 4 DIP-VAE, score the
 * VAE's disentanglement, then explain the first test images with CEM-MAF (PN over the latent code,
 * PP over pixels or superpixels), LIME and Grad-CAM, and measure #PP features, PP accuracy, PP
 * correlation and the PNs' validity.  The report is built in bench/cem/report.c. */
#include "bench/cem/cem_bench.h"
#include "explain/cem_internal.h"
#include "versus/arch.h"
#include "versus/data_spec.h"
#include "versus/model.h"
#include "versus/ops.h"
#include "versus/superpixel.h"
#include "versus/train.h"
#include "versus/vae.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const int64_t shoes[] = {5, 7, 9};
static const int64_t clothes[] = {0, 1, 2, 3, 4, 6};
#define N_ATTR_DEFAULT 4
#define SCORE_ROWS 2000
#define SYNTH_TEST 1000

void vs_cem_experiment_opts_init(vs_cem_experiment_opts *o)
{
    memset(o, 0, sizeof *o);
    o->train_rows = 6000, o->clf_epochs = 2, o->vae_epochs = 10, o->dip = 1, o->n_images = 100, o->n_figure = 10;
    o->lime_samples = 1000, o->batch = 25, o->seed = 1;
    vs_cem_opts_init(&o->cem);
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void progress(const vs_cem_experiment_opts *o, const char *fmt, ...)
{
    if (!o->progress) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(o->progress, "cem: ");
    vfprintf(o->progress, fmt, ap);
    fputc('\n', o->progress);
    fflush(o->progress);
    va_end(ap);
}

/* The subset's train (first train_rows) and test images. */
static vs_status load_data(const vs_cem_experiment_opts *o, vs_cem_run *r, vs_error *err)
{
    bool is_shoes = strcmp(o->data, "fashion-mnist-shoes") == 0;
    if (strcmp(o->data, "synthetic") == 0) {
        float *train_f = NULL;
        vs_status st = vs_cem_synthetic(o->train_rows, o->seed, &r->train, &train_f, err);
        free(train_f);
        return st == VS_OK ? vs_cem_synthetic(SYNTH_TEST, o->seed + 1, &r->test, &r->factors, err) : st;
    }
    if (!is_shoes && strcmp(o->data, "fashion-mnist-clothes") != 0)
        return vs_error_set(err, VS_ERR_ARG, "cem: unknown data '%s' (fashion-mnist-clothes, fashion-mnist-shoes or synthetic)", o->data);
    const int64_t *cls = is_shoes ? shoes : clothes;
    int64_t k = is_shoes ? 3 : 6;
    vs_dataset *train = NULL, *test = NULL;
    vs_status st = vs_load_spec("fashion-mnist-train", NULL, &train, err);
    if (st == VS_OK) st = vs_load_spec("fashion-mnist", NULL, &test, err);
    if (st == VS_OK) st = vs_dataset_select_classes(train, cls, k, &r->train, err);
    if (st == VS_OK) st = vs_dataset_select_classes(test, cls, k, &r->test, err);
    vs_dataset_free(train);
    vs_dataset_free(test);
    if (st == VS_OK && r->train->n > o->train_rows) r->train->n = o->train_rows; /* the arrays stay; only the first rows are used */
    return st;
}

/* Load dir, or build with build() and train on r's data with lr, epochs and task options. */
static vs_status model_get(const vs_cem_experiment_opts *o, vs_cem_run *r, const char *dir, vs_module *(*build)(const vs_cem_run *r, vs_rng *g, vs_error *err),
                           float lr, int64_t epochs, const char *task_opts, const char *what, vs_module **m, double *metric,
                           const char *metric_name, vs_error *err)
{
    if (dir) {
        *m = vs_model_load(dir, NULL, err);
        *metric = NAN;
        return *m ? VS_OK : err->code;
    }
    vs_rng g;
    vs_rng_seed(&g, o->seed);
    *m = build(r, &g, err);
    if (!*m) return err->code;
    vs_train_opts to;
    vs_train_opts_init(&to);
    to.epochs = epochs, to.optim = vs_adam_opts(lr), to.seed = o->seed, to.test = r->test, to.task_opts = task_opts;
    vs_train_result res = {0};
    progress(o, "training the %s on %lld images, %lld epochs", what, (long long)r->train->n, (long long)epochs);
    vs_status st = vs_train(*m, r->train, &to, &res, err);
    if (st == VS_OK) {
        *metric = vs_train_result_get(&res, metric_name);
        progress(o, "%s: %s %.4f (%.0f s)", what, metric_name, *metric, res.seconds);
        r->train_seconds += res.seconds;
    }
    vs_train_result_clear(&res);
    vs_module_train(*m, false);
    return st;
}

static vs_module *build_clf(const vs_cem_run *r, vs_rng *g, vs_error *err) { return vs_arch_cem_fashion(r->train->n_classes, g, err); }

static vs_module *build_vae(const vs_cem_run *r, vs_rng *g, vs_error *err)
{
    return vs_arch_dip_vae_mlp(3, r->train->shape, VS_CEM_DIP_HIDDEN, VS_CEM_DIP_LATENT, g, err);
}

/* DIP-VAE scores and the traversal grid; the default attributes: the most active latents. */
static vs_status probe_vae(const vs_cem_experiment_opts *o, vs_cem_run *r, char *spec, size_t n, vs_error *err)
{
    int64_t rows = r->test->n < SCORE_ROWS ? r->test->n : SCORE_ROWS;
    float active[256];
    vs_scope_begin();
    vs_tensor *probe = vs_tensor_zeros(VS_SHAPE(1, 1, 28, 28));
    vs_tensor *mu = probe ? vs_vae_encode(r->vae, probe, err) : NULL;
    vs_status st = mu ? VS_OK : err->code;
    r->latent = mu ? mu->shape[1] : 0;
    vs_scope_end();
    if (st == VS_OK && r->latent > 256) st = vs_error_set(err, VS_ERR_ARG, "cem: at most 256 latents");
    if (st == VS_OK) st = vs_vae_offdiag_score(r->vae, r->test, NULL, rows, &r->offdiag, active, err);
    if (st != VS_OK) return st;
    /* latents by decreasing variance of mu over the test images */
    int64_t order[256];
    for (int64_t j = 0; j < r->latent; j++) order[j] = j;
    for (int64_t a = 0; a < r->latent; a++)
        for (int64_t b = a + 1; b < r->latent; b++)
            if (active[order[b]] > active[order[a]]) {
                int64_t t = order[a];
                order[a] = order[b], order[b] = t;
            }
    r->n_active = 0;
    for (int64_t j = 0; j < r->latent; j++) r->n_active += active[j] > 0.01f;
    spec[0] = 0;
    r->factor_gap = NAN;
    if (r->factors) {
        /* known factors: the attributes are the latents that carry them, signed to grow with them */
        st = vs_vae_factor_score(r->vae, r->test, NULL, rows, r->factors, VS_CEM_SYNTH_FACTORS, &r->factor_gap, r->factor_latent, r->factor_corr, err);
        for (int a = 0; st == VS_OK && a < VS_CEM_SYNTH_FACTORS; a++) {
            bool dup = false;
            for (int b = 0; b < a; b++) dup |= r->factor_latent[b] == r->factor_latent[a];
            if (dup) continue;
            size_t len = strlen(spec);
            snprintf(spec + len, n - len, "%s%s:%c%lld", len ? "," : "", vs_cem_synth_factor_names[a], r->factor_corr[a] < 0 ? '-' : '+',
                     (long long)r->factor_latent[a]);
        }
    }
    for (int64_t a = 0; !r->factors && a < N_ATTR_DEFAULT && a < r->latent; a++) {
        size_t len = strlen(spec);
        snprintf(spec + len, n - len, "%sz%lld:+%lld", a ? "," : "", (long long)order[a], (long long)order[a]);
    }
    if (o->out_dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/traversal.png", o->out_dir);
        int64_t nd = r->latent < 8 ? r->latent : 8;
        st = vs_vae_traversal_png(r->vae, NULL, 3, r->test->shape, order, nd, 9, 3.0f, 2, path, err);
    }
    return st;
}

/* Per-segment sums of an explanation e [dim] into w [n_seg]. */
static void segment_sums(const float *e, const int32_t *seg, int64_t dim, int64_t n_seg, float *w)
{
    memset(w, 0, (size_t)n_seg * sizeof *w);
    for (int64_t p = 0; p < dim; p++) w[seg ? seg[p] : p] += e[p];
}

/* Order of the segments with w > 0 by decreasing w: order[0..*n). */
static void positive_order(const float *w, int64_t n_seg, int32_t *order, int64_t *n)
{
    *n = 0;
    for (int64_t s = 0; s < n_seg; s++)
        if (w[s] > 0) order[(*n)++] = (int32_t)s;
    for (int64_t a = 1; a < *n; a++) /* insertion sort: stable, deterministic */
        for (int64_t b = a; b > 0 && w[order[b]] > w[order[b - 1]]; b--) {
            int32_t t = order[b];
            order[b] = order[b - 1], order[b - 1] = t;
        }
}

/* Score one method's PP (features order[0..k)): the kept features alone predict t0 (accuracy), and
 * the correlation of the prefix scores with the number of features. */
static vs_status score_pp(const vs_model_fn *f, const float *x0, const int64_t *shape, const int32_t *seg, const int32_t *order, int64_t k,
                          int64_t t0, vs_cem_method_row *row, vs_error *err)
{
    row->features = (double)k, row->accuracy = 0, row->correlation = NAN;
    if (k == 0) return VS_OK;
    float *scores = malloc((size_t)k * sizeof *scores);
    if (!scores) return vs_error_set(err, VS_ERR_NOMEM, "cem: out of memory");
    int64_t first;
    vs_status st = vs_cem_prefix_scores(f, x0, 3, shape, seg, order, k, t0, scores, &first, err);
    if (st == VS_OK) row->correlation = vs_cem_pp_correlation(scores, k);
    free(scores);
    if (st != VS_OK) return st;
    int64_t dim = shape[0] * shape[1] * shape[2];
    float *kept = calloc((size_t)dim, sizeof *kept);
    uint8_t *keep = calloc((size_t)dim, 1);
    if (!kept || !keep) st = vs_error_set(err, VS_ERR_NOMEM, "cem: out of memory");
    for (int64_t i = 0; st == VS_OK && i < k; i++) keep[order[i]] = 1;
    for (int64_t p = 0; st == VS_OK && p < dim; p++) kept[p] = keep[seg ? seg[p] : p] ? x0[p] : 0;
    vs_scope_begin();
    vs_tensor *x = st == VS_OK ? vs_tensor_from(VS_SHAPE(1, shape[0], shape[1], shape[2]), kept) : NULL;
    int64_t cls = -1;
    if (x) st = vs_cem_predict(f, x, &cls, err);
    vs_scope_end();
    row->accuracy = cls == t0;
    free(kept);
    free(keep);
    return st;
}

/* SLIC labels of image x [c,h,w] into seg[dim] (channels share the labels); *n_seg receives the count. */
static vs_status superpixels(const float *x, const int64_t *shape, int n_sp, int32_t *seg, int64_t *n_seg, vs_error *err)
{
    int64_t hw = shape[1] * shape[2];
    vs_slic_options so = vs_slic_defaults();
    so.n_segments = n_sp;
    int nl;
    vs_status st = vs_slic(x, (int)shape[0], (int)shape[1], (int)shape[2], &so, seg, &nl, err);
    for (int64_t c = 1; st == VS_OK && c < shape[0]; c++) memcpy(seg + c * hw, seg, (size_t)hw * sizeof *seg);
    *n_seg = nl;
    return st;
}

/* out[dim] = x0 on the segments order[0..k), 0 elsewhere. */
static void keep_image(const float *x0, const int32_t *seg, int64_t dim, const int32_t *order, int64_t k, int64_t n_seg, float *out)
{
    uint8_t *keep = calloc((size_t)n_seg, 1);
    for (int64_t i = 0; keep && i < k; i++) keep[order[i]] = 1;
    for (int64_t p = 0; p < dim; p++) out[p] = keep && keep[seg ? seg[p] : p] ? x0[p] : 0;
    free(keep);
}

/* LIME and Grad-CAM on image b: positive features by decreasing weight, then the PP scores, full and
 * restricted to k_cem features. */
static vs_status baselines(const vs_cem_experiment_opts *o, vs_cem_run *r, const vs_model_fn *f, vs_tensor *x, const int32_t *seg,
                           int64_t n_seg, int64_t k_cem, vs_cem_image *im, float *const kept[2], vs_error *err)
{
    const int64_t *shape = r->test->shape;
    int64_t dim = r->test->dim;
    float *w = malloc((size_t)n_seg * sizeof *w);
    int32_t *order = malloc((size_t)n_seg * sizeof *order);
    vs_status st = w && order ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "cem: out of memory");
    static const char *const names[2] = {"lime", "gradcam"};
    for (int m = 0; m < 2 && st == VS_OK; m++) {
        double t = now_seconds();
        const vs_method *meth = vs_method_find(names[m]);
        vs_method_opts *mo = meth ? vs_method_opts_new(meth) : NULL;
        char samples[32];
        snprintf(samples, sizeof samples, "%lld", (long long)o->lime_samples);
        if (!mo) st = vs_error_set(err, VS_ERR_NOMEM, "cem: no method %s", names[m]);
        if (st == VS_OK && m == 0) st = vs_method_opts_set(mo, "samples", samples, err);
        vs_explain_request rq;
        vs_explain_request_init(&rq);
        rq.seed = o->seed, rq.target = im->t0;
        if (m == 0 && seg) rq.segments = seg, rq.n_segments = n_seg;
        vs_scope_begin();
        vs_tensor *e = NULL;
        if (st == VS_OK) st = vs_explain(f, x, meth, mo, &rq, &e, NULL, err);
        if (st == VS_OK) {
            segment_sums(e->data, seg, dim, n_seg, w);
            int64_t k;
            positive_order(w, n_seg, order, &k);
            if (kept[m]) keep_image(x->data, seg, dim, order, k, n_seg, kept[m]);
            r->explain_seconds[m == 0 ? VS_CEM_M_LIME : VS_CEM_M_GRADCAM] += now_seconds() - t;
            st = score_pp(f, x->data, shape, seg, order, k, im->t0, &im->m[m == 0 ? VS_CEM_M_LIME : VS_CEM_M_GRADCAM], err);
            if (st == VS_OK) st = score_pp(f, x->data, shape, seg, order, k < k_cem ? k : k_cem, im->t0, &im->m[m == 0 ? VS_CEM_M_LIME_K : VS_CEM_M_GRADCAM_K], err);
        }
        vs_scope_end();
        vs_method_opts_free(mo);
    }
    free(w);
    free(order);
    return st;
}

enum { FIG_X, FIG_PN, FIG_PP, FIG_CEM_PN, FIG_CEM_PP, FIG_LIME, FIG_GRADCAM, FIG_COLS };

/* Per-image numbers of one explained image (PN, PP and its scores) into im. */
static vs_status record(const vs_cem_experiment_opts *o, vs_cem_run *r, const vs_model_fn *f, const float *x0, const int32_t *seg,
                        const vs_cem_pn *pn, const vs_cem_pp *pp, vs_cem_image *im, vs_error *err)
{
    im->t0 = pn->t0, im->pn_found = pn->found, im->pn_cls = pn->cls, im->recon_flips = pn->recon_flips, im->violations = pn->violations;
    im->latent_dist = pn->latent_dist;
    double d2 = 0;
    for (int64_t p = 0; p < r->test->dim; p++) d2 += (double)(pn->x[p] - x0[p]) * (pn->x[p] - x0[p]);
    im->input_dist = sqrt(d2);
    for (int i = 0; i < pn->n_attrs; i++) im->added += pn->g[i] > pn->g0[i] + o->cem.attr_tol;
    vs_cem_pn_text(&r->attrs, pn, o->cem.attr_tol, im->text, sizeof im->text);
    return score_pp(f, x0, r->test->shape, seg, pp->order, pp->n_features, pp->t0, &im->m[VS_CEM_M_CEMMAF], err);
}

/* Explain images [b0, b0+nb) of the test set; figure cells of the first rows into fig. */
static vs_status explain_batch(const vs_cem_experiment_opts *o, vs_cem_run *r, const vs_model_fn *f, int64_t b0, int64_t nb, float *fig,
                               int64_t n_fig, vs_error *err)
{
    int64_t dim = r->test->dim, *rows = malloc((size_t)nb * sizeof *rows);
    vs_cem_pn *pn = calloc((size_t)nb, sizeof *pn);
    vs_cem_pp *pp = calloc((size_t)nb, sizeof *pp);
    int32_t *seg = o->superpixels > 0 ? malloc((size_t)(nb * dim) * sizeof *seg) : NULL;
    int64_t *n_seg = malloc((size_t)nb * sizeof *n_seg);
    vs_status st = rows && pn && pp && n_seg && (seg || o->superpixels <= 0) ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "cem: out of memory");
    vs_scope_begin();
    vs_tensor *x = NULL;
    for (int64_t i = 0; st == VS_OK && i < nb; i++) rows[i] = b0 + i;
    if (st == VS_OK) st = vs_train_input(r->test, rows, nb, &x, NULL, &(vs_forward_ctx){0}, err);
    for (int64_t i = 0; st == VS_OK && i < nb; i++) {
        n_seg[i] = dim;
        if (seg) st = superpixels(x->data + i * dim, r->test->shape, o->superpixels, seg + i * dim, &n_seg[i], err);
    }
    double t = now_seconds();
    if (st == VS_OK) st = vs_cem_maf_pn(f, &r->attrs, x, &o->cem, pn, err);
    if (st == VS_OK) st = vs_cem_maf_pp(f, &r->attrs, x, seg, &o->cem, pp, err);
    r->explain_seconds[VS_CEM_M_CEMMAF] += now_seconds() - t;
    for (int64_t i = 0; st == VS_OK && i < nb; i++) {
        vs_cem_image *im = &r->img[b0 + i];
        const float *x0 = x->data + i * dim;
        const int32_t *sg = seg ? seg + i * dim : NULL;
        im->label = r->test->y[b0 + i];
        st = record(o, r, f, x0, sg, &pn[i], &pp[i], im, err);
        int64_t row = b0 + i;
        float *cell = row < n_fig ? fig + row * FIG_COLS * dim : NULL;
        if (cell) {
            memcpy(cell + FIG_X * dim, x0, (size_t)dim * sizeof *cell);
            memcpy(cell + FIG_PN * dim, pn[i].x, (size_t)dim * sizeof *cell);
            memcpy(cell + FIG_PP * dim, pp[i].x, (size_t)dim * sizeof *cell);
        }
        float *const kept[2] = {cell ? cell + FIG_LIME * dim : NULL, cell ? cell + FIG_GRADCAM * dim : NULL};
        if (st == VS_OK) st = baselines(o, r, f, vs_slice(x, 0, i, i + 1), sg, n_seg[i], pp[i].n_features, im, kept, err);
    }
    vs_scope_end();
    for (int64_t i = 0; pn && pp && i < nb; i++) vs_cem_pn_clear(&pn[i]), vs_cem_pp_clear(&pp[i]);
    free(rows);
    free(pn);
    free(pp);
    free(seg);
    free(n_seg);
    return st;
}

/* The pixel-space CEM of the figure's rows, then the picture. */
static vs_status figure(const vs_cem_experiment_opts *o, vs_cem_run *r, const vs_model_fn *f, float *fig, int64_t n_fig, vs_error *err)
{
    int64_t dim = r->test->dim, *rows = malloc((size_t)n_fig * sizeof *rows);
    float *buf = malloc((size_t)(n_fig * dim) * sizeof *buf);
    int64_t *cls = malloc((size_t)n_fig * sizeof *cls);
    const float **cells = calloc((size_t)(n_fig * FIG_COLS), sizeof *cells);
    char **caps = calloc((size_t)(n_fig * FIG_COLS), sizeof *caps);
    vs_status st = rows && buf && cls && cells && caps ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "cem: out of memory");
    vs_scope_begin();
    vs_tensor *x = NULL;
    for (int64_t i = 0; st == VS_OK && i < n_fig; i++) rows[i] = i;
    if (st == VS_OK) st = vs_train_input(r->test, rows, n_fig, &x, NULL, &(vs_forward_ctx){0}, err);
    for (int pass = 0; pass < 2 && st == VS_OK; pass++) {
        st = vs_cem_pixel(f, x, pass == 0, &o->cem, buf, cls, err);
        for (int64_t i = 0; st == VS_OK && i < n_fig; i++) memcpy(fig + (i * FIG_COLS + (pass == 0 ? FIG_CEM_PN : FIG_CEM_PP)) * dim, buf + i * dim, (size_t)dim * sizeof *buf);
        for (int64_t i = 0; st == VS_OK && pass == 0 && i < n_fig; i++) {
            char c[96];
            snprintf(c, sizeof c, "%s", cls[i] == r->img[i].t0 ? "- (no PN found)" : r->test->class_names ? r->test->class_names[cls[i]] : "?");
            caps[i * FIG_COLS + FIG_CEM_PN] = strdup(c);
        }
    }
    vs_scope_end();
    static const char *const titles[FIG_COLS] = {"original", "PN (CEM-MAF)", "PP (CEM-MAF)", "PN (CEM)", "PP (CEM)", "LIME", "Grad-CAM"};
    for (int64_t i = 0; st == VS_OK && i < n_fig; i++) {
        const vs_cem_image *im = &r->img[i];
        char c[200];
        for (int j = 0; j < FIG_COLS; j++) cells[i * FIG_COLS + j] = fig + (i * FIG_COLS + j) * dim;
        caps[i * FIG_COLS + FIG_X] = strdup(r->test->class_names ? r->test->class_names[im->t0] : "?");
        snprintf(c, sizeof c, "%.12s %.14s", im->pn_found && r->test->class_names ? r->test->class_names[im->pn_cls] : "-", im->text);
        caps[i * FIG_COLS + FIG_PN] = strdup(c);
        snprintf(c, sizeof c, "%lld px", (long long)im->m[VS_CEM_M_CEMMAF].features);
        caps[i * FIG_COLS + FIG_PP] = strdup(c);
        snprintf(c, sizeof c, "%lld px", (long long)im->m[VS_CEM_M_LIME].features);
        caps[i * FIG_COLS + FIG_LIME] = strdup(c);
        snprintf(c, sizeof c, "%lld px", (long long)im->m[VS_CEM_M_GRADCAM].features);
        caps[i * FIG_COLS + FIG_GRADCAM] = strdup(c);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/figure7.png", o->out_dir);
    if (st == VS_OK)
        st = vs_cem_grid_png(cells, (int)n_fig, FIG_COLS, (int)r->test->shape[0], (int)r->test->shape[1], (int)r->test->shape[2], 3, titles,
                             (const char *const *)caps, path, err);
    for (int64_t i = 0; caps && i < n_fig * FIG_COLS; i++) free(caps[i]);
    free(caps);
    free(cells);
    free(rows);
    free(buf);
    free(cls);
    return st;
}

/* The classifier must score exactly the data's classes (a loaded model may be of the other subset). */
static vs_status check_classes(const vs_cem_run *r, vs_error *err)
{
    bool prev = vs_set_grad_enabled(false);
    vs_scope_begin();
    vs_tensor *x;
    int64_t row = 0;
    vs_status st = vs_train_input(r->test, &row, 1, &x, NULL, &(vs_forward_ctx){0}, err);
    vs_tensor *out = st == VS_OK ? vs_module_forward(r->clf, x, &(vs_forward_ctx){0}) : NULL;
    if (st == VS_OK && (!out || out->ndim != 2 || out->shape[1] != r->test->n_classes))
        st = vs_error_set(err, VS_ERR_SHAPE, "cem: the classifier must give %lld class scores for %s%s%s", (long long)r->test->n_classes, r->test->name,
                          out ? "" : ": ", out ? "" : vs_last_error()->msg);
    vs_scope_end();
    vs_set_grad_enabled(prev);
    return st;
}

vs_status vs_cem_experiment(const vs_cem_experiment_opts *o, vs_report **out, vs_error *err)
{
    *out = NULL;
    if (!o || !o->data) return vs_error_set(err, VS_ERR_ARG, "cem: the data set is required");
    if (o->n_images < 1 || o->batch < 1 || o->n_figure < 0 || o->lime_samples < 2 || (o->dip != 1 && o->dip != 2) || o->train_rows < 1)
        return vs_error_set(err, VS_ERR_ARG, "cem: images, batch and training rows must be >= 1, LIME samples >= 2, dip 1 or 2");
    double t0 = now_seconds();
    if (o->out_dir && mkdir(o->out_dir, 0777) != 0) {
        struct stat sb;
        if (stat(o->out_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) return vs_error_set(err, VS_ERR_IO, "cem: cannot create the directory %s", o->out_dir);
    }
    vs_cem_run r;
    memset(&r, 0, sizeof r);
    vs_status st = load_data(o, &r, err);
    char task_opts[64];
    snprintf(task_opts, sizeof task_opts, "dip=%s,lambda_od=10,lambda_d=100", o->dip == 2 ? "ii" : "i");
    if (st == VS_OK) st = model_get(o, &r, o->model_dir, build_clf, 1e-3f, o->clf_epochs, NULL, "classifier", &r.clf, &r.clf_accuracy, "test_accuracy", err);
    if (st == VS_OK) st = model_get(o, &r, o->vae_dir, build_vae, 1e-3f, o->vae_epochs, task_opts, "DIP-VAE", &r.vae, &r.vae_elbo, "test_elbo", err);
    if (st == VS_OK && o->model_dir) {
        int64_t *all = malloc((size_t)r.test->n * sizeof *all);
        for (int64_t i = 0; all && i < r.test->n; i++) all[i] = i;
        st = all ? vs_train_accuracy(r.clf, r.test, all, r.test->n, &r.clf_accuracy, err) : vs_error_set(err, VS_ERR_NOMEM, "cem: out of memory");
        free(all);
    }
    if (st == VS_OK) st = check_classes(&r, err);
    char def[512];
    if (st == VS_OK) st = probe_vae(o, &r, def, sizeof def, err);
    if (st == VS_OK) {
        snprintf(r.attr_spec, sizeof r.attr_spec, "%s", o->attrs ? o->attrs : def);
        st = vs_cem_attrs_parse(r.attr_spec, r.vae, r.latent, &r.attrs, err);
    }
    r.n = st == VS_OK ? (o->n_images < r.test->n ? o->n_images : r.test->n) : 0;
    int64_t n_fig = o->out_dir ? (o->n_figure < r.n ? o->n_figure : r.n) : 0;
    float *fig = n_fig ? calloc((size_t)(n_fig * FIG_COLS * r.test->dim), sizeof *fig) : NULL;
    if (st == VS_OK && (!(r.img = calloc((size_t)r.n, sizeof *r.img)) || (n_fig && !fig))) st = vs_error_set(err, VS_ERR_NOMEM, "cem: out of memory");
    vs_module_explainee e = {r.clf, NULL};
    vs_model_fn f = st == VS_OK ? vs_model_fn_from_module(&e) : (vs_model_fn){0};
    for (int64_t b0 = 0; st == VS_OK && b0 < r.n; b0 += o->batch) {
        int64_t nb = r.n - b0 < o->batch ? r.n - b0 : o->batch;
        progress(o, "explaining images %lld-%lld of %lld", (long long)b0, (long long)(b0 + nb - 1), (long long)r.n);
        st = explain_batch(o, &r, &f, b0, nb, fig, n_fig, err);
    }
    if (st == VS_OK && n_fig) st = figure(o, &r, &f, fig, n_fig, err);
    if (st == VS_OK) st = vs_cem_report_build(o, &r, now_seconds() - t0, out, err);
    free(fig);
    free(r.img);
    free(r.factors);
    vs_cem_attrs_clear(&r.attrs);
    vs_module_free(r.clf);
    vs_module_free(r.vae);
    vs_dataset_free(r.train);
    vs_dataset_free(r.test);
    return st;
}
