/* bench/svae/figures.c - Figs. 3-7 of the SVAE paper for one test image and their statistics:
 * the invariant grid crossing two nuisance dims (Fig. 3), the classifier's own attributions (Fig. 4),
 * attributions of the latent divergence d(x, x~) = KL(q(z_k|x) || q(z_k|x~)) at invariant samples for
 * k = 2 and k = 1 (Figs. 5, 6), counterfactuals by moving z1 to each class (Fig. 7); then mean
 * divergences of invariant samples and counterfactuals and the counterfactual success of SVAE and M2
 * over many test images.  Images are PNG grids written to image_dir. */
#include "bench/svae/svae_bench.h"
#include "versus/method.h"
#include "versus/ops.h"
#include "versus/picture.h"
#include "versus/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIG_STREAM 0x666967ull  /* "fig": seed ^ this draws the figures' samples */
#define GRID_SIDE 7             /* Fig. 3: GRID_SIDE x GRID_SIDE decodes */
#define GRID_STEP 0.75f
#define N_INVARIANT 3           /* Figs. 5, 6: invariant samples shown */
#define MAX_DRAWS 200           /* draws tried to find them */
#define N_CENTROID 2000         /* training images behind the class centroids of z1 */
#define N_BACKGROUND 32         /* GradientSHAP's background set for the classifier */
#define MAX_CLASSES 16
#define ZOOM 3
#define PAD 4

static const char *const default_methods = "expected_gradients,integrated_gradients,saliency,input_x_gradient";

/* The label shown for a method ("expected_gradients" is GradientSHAP: Captum's GradientShap with no
 * input noise is E[(x - x') grad f(x' + a (x - x'))] over a background x' and a ~ U(0, 1)). */
static const char *method_label(const char *name) { return strcmp(name, "expected_gradients") == 0 ? "GradientSHAP" : name; }

/* ---- pictures ---------------------------------------------------------------------------------------- */

typedef struct picture {
    vs_grid *g;
    int c, h, w;
} picture;

static bool picture_new(picture *p, const vs_dataset *d, int rows, int cols)
{
    p->c = (int)d->shape[0], p->h = (int)d->shape[1], p->w = (int)d->shape[2];
    p->g = vs_grid_new(rows, cols, p->w, p->h, ZOOM, PAD, 2);
    return p->g != NULL;
}

static void put_image(picture *p, int row, int col, const float *x, const char *caption)
{
    vs_image *im = vs_image_from_float(x, p->c, p->h, p->w);
    vs_error err;
    if (im) vs_grid_put(p->g, row, col, im, &err);
    vs_image_free(im);
    if (caption) vs_grid_caption(p->g, row, col, caption, &err);
}

/* The channel sum of attribution a [c,h,w] as a diverging heatmap scaled by its 99th percentile. */
static void put_heatmap(picture *p, int row, int col, const float *a, const char *caption)
{
    float *s = malloc((size_t)(p->h * p->w) * sizeof *s), scale = 0;
    vs_error err;
    if (!s) return;
    vs_attr_channel_sum(a, p->c, p->h, p->w, s);
    vs_attr_scale(s, (size_t)(p->h * p->w), 99, &scale, &err);
    vs_image *im = vs_heatmap_rgb(s, p->h, p->w, scale);
    if (im) vs_grid_put(p->g, row, col, im, &err);
    vs_image_free(im);
    free(s);
    if (caption) vs_grid_caption(p->g, row, col, caption, &err);
}

/* Write p as dir/name and record the name; frees the grid. */
static vs_status picture_write(picture *p, const vs_svae_experiment_opts *o, const char *name, svae_figures *f, vs_error *err)
{
    vs_status st = VS_OK;
    if (o->image_dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", o->image_dir, name);
        st = vs_png_write(vs_grid_image(p->g), path, err);
        if (st == VS_OK && f->n_files < 6) snprintf(f->files[f->n_files++], sizeof f->files[0], "%s", name);
    }
    vs_grid_free(p->g);
    p->g = NULL;
    return st;
}

/* ---- pieces ------------------------------------------------------------------------------------------- */

static vs_status classify_labels(vs_module *m, vs_tensor *x, int64_t *labels, vs_error *err)
{
    vs_tensor *logits;
    vs_status st = vs_svae_classify(m, x, &logits, err);
    if (st == VS_OK) vs_argmax_rows(logits, labels);
    return st;
}

/* The first test row of class c that m classifies correctly. */
static vs_status find_row(vs_module *m, const vs_dataset *test, int64_t c, int64_t *row, vs_error *err)
{
    for (int64_t i0 = 0; i0 < test->n; i0 += 256) {
        int64_t nb = test->n - i0 < 256 ? test->n - i0 : 256, rows[256], pred[256];
        for (int64_t i = 0; i < nb; i++) rows[i] = i0 + i;
        vs_scope_begin();
        vs_tensor *x;
        vs_status st = vs_train_input(test, rows, nb, &x, NULL, &(vs_forward_ctx){0}, err);
        if (st == VS_OK) st = classify_labels(m, x, pred, err);
        vs_scope_end();
        if (st != VS_OK) return st;
        for (int64_t i = 0; i < nb; i++)
            if (test->y[i0 + i] == c && pred[i] == c) {
                *row = i0 + i;
                return VS_OK;
            }
    }
    return vs_error_set(err, VS_ERR_ARG, "svae experiment: no test image of class %lld is classified correctly", (long long)c);
}

/* Attributions of rows x [n, ...] by method under fn; *gap = max |completeness gap| (NaN when the
 * method reports none). */
static vs_status attribute(const vs_model_fn *fn, vs_tensor *x, const char *method, int64_t target, const vs_tensor *baseline,
                           const vs_tensor *baselines, uint64_t seed, vs_tensor **out, double *gap, vs_error *err)
{
    const vs_method *m = vs_method_find(method);
    if (!m) return vs_error_set(err, VS_ERR_ARG, "svae experiment: unknown attribution method \"%s\"", method);
    vs_explain_request q;
    vs_explain_request_init(&q);
    q.target = target, q.baseline = baseline, q.baselines = baselines ? baselines : baseline, q.seed = seed;
    vs_attr_report rep;
    vs_status st = vs_explain(fn, x, m, NULL, &q, out, &rep, err);
    double g = st == VS_OK && isfinite(rep.delta) && (m->flags & (VS_METHOD_COMPLETE | VS_METHOD_BASELINE_SET)) ? fabs(rep.delta) : NAN;
    *gap = isfinite(*gap) && isfinite(g) ? fmax(*gap, g) : isfinite(g) ? g : *gap;
    return st;
}

/* ---- the figures -------------------------------------------------------------------------------------- */

typedef struct fig_ctx {
    const vs_dataset *train, *test;
    svae_setting *s;
    const vs_svae_experiment_opts *o;
    svae_figures *f;
    vs_rng rng;
    vs_tensor *x;       /* [1, ...] the explained image */
    vs_tensor *z1, *z2; /* its encoding */
    int64_t label;
} fig_ctx;

/* Fig. 3: GRID_SIDE^2 decodes with two nuisance dims moved by GRID_STEP around the encoding. */
static vs_status fig3(fig_ctx *c, vs_error *err)
{
    svae_setting *s = c->s;
    int64_t k2 = s->layout.k2, n = GRID_SIDE * GRID_SIDE, pred[GRID_SIDE * GRID_SIDE];
    int a = (int)vs_rng_below(&c->rng, (uint64_t)k2), b = (int)vs_rng_below(&c->rng, (uint64_t)(k2 - 1));
    if (b >= a) b++;
    c->f->grid_dims[0] = a, c->f->grid_dims[1] = b;
    vs_tensor *z2 = vs_tensor_new(VS_SHAPE(n, k2)), *z1 = vs_expand(c->z1, VS_SHAPE(n, s->layout.k1)), *xt;
    if (!z2) return vs_error_set(err, VS_ERR_NOMEM, "svae experiment: out of memory");
    for (int64_t i = 0; i < n; i++) {
        memcpy(z2->data + i * k2, c->z2->data, (size_t)k2 * sizeof(float));
        z2->data[i * k2 + a] += GRID_STEP * (float)(i / GRID_SIDE - GRID_SIDE / 2);
        z2->data[i * k2 + b] += GRID_STEP * (float)(i % GRID_SIDE - GRID_SIDE / 2);
    }
    vs_status st = vs_svae_decode(s->m, &s->layout, z1, z2, &xt, err);
    if (st == VS_OK) st = classify_labels(s->m, vs_reshape(xt, c->x->ndim, (int64_t[]){n, c->x->shape[1], c->x->shape[2], c->x->shape[3]}), pred, err);
    if (st != VS_OK) return st;
    picture p;
    if (!picture_new(&p, c->test, GRID_SIDE, GRID_SIDE)) return vs_error_set(err, VS_ERR_NOMEM, "svae experiment: out of memory");
    int64_t dim = c->x->size, kept = 0;
    for (int64_t i = 0; i < n; i++) {
        char cap[32];
        snprintf(cap, sizeof cap, "%s%lld", i == n / 2 ? "x: " : "", (long long)pred[i]);
        put_image(&p, (int)(i / GRID_SIDE), (int)(i % GRID_SIDE), xt->data + i * dim, cap);
        kept += pred[i] == c->label;
    }
    c->f->grid_kept = (double)kept / (double)n;
    return picture_write(&p, c->o, "fig3_invariant_grid.png", c->f, err);
}

/* Fig. 4: the classifier's attributions of its predicted class (zero baseline; GradientSHAP over
 * N_BACKGROUND training images). */
static vs_status fig4(fig_ctx *c, char (*methods)[40], int n_methods, vs_error *err)
{
    vs_module_explainee e = {c->s->m, NULL};
    vs_model_fn fn = vs_model_fn_from_module(&e);
    int64_t nb = c->train->n < N_BACKGROUND ? c->train->n : N_BACKGROUND, rows[N_BACKGROUND];
    for (int64_t i = 0; i < nb; i++) rows[i] = i * (c->train->n / nb);
    vs_tensor *background, *zero = vs_tensor_zeros(c->x->ndim, c->x->shape);
    vs_status st = vs_train_input(c->train, rows, nb, &background, NULL, &(vs_forward_ctx){0}, err);
    picture p;
    if (st == VS_OK && !picture_new(&p, c->test, 1, n_methods + 1)) st = vs_error_set(err, VS_ERR_NOMEM, "svae experiment: out of memory");
    if (st != VS_OK) return st;
    put_image(&p, 0, 0, c->x->data, "x");
    for (int i = 0; i < n_methods && st == VS_OK; i++) {
        vs_tensor *a;
        bool set = strcmp(methods[i], "expected_gradients") == 0;
        st = attribute(&fn, c->x, methods[i], c->label, zero, set ? background : NULL, (uint64_t)c->o->seed, &a, &c->f->delta[i][0], err);
        if (st == VS_OK) put_heatmap(&p, 0, i + 1, a->data, method_label(methods[i]));
    }
    if (st != VS_OK) {
        vs_grid_free(p.g);
        return st;
    }
    return picture_write(&p, c->o, "fig4_classifier.png", c->f, err);
}

/* Figs. 5 (k = 2) and 6 (k = 1): every method's attribution of d(x, .) at each invariant sample, with
 * the original x as baseline (so a complete method sums to d(x, x~)). */
static vs_status fig56(fig_ctx *c, vs_tensor *xt, int64_t m, char (*methods)[40], int n_methods, int part, vs_error *err)
{
    vs_svae_divergence d;
    vs_status st = vs_svae_divergence_init(&d, c->s->m, &c->s->layout, c->x, part, err);
    if (st != VS_OK) return st;
    vs_model_fn fn = vs_svae_divergence_fn(&d);
    picture p;
    if (!picture_new(&p, c->test, n_methods + 1, (int)m + 1)) {
        vs_svae_divergence_clear(&d);
        return vs_error_set(err, VS_ERR_NOMEM, "svae experiment: out of memory");
    }
    put_image(&p, 0, 0, c->x->data, "x");
    vs_tensor *dv = fn.forward(fn.ctx, xt);
    if (!dv) st = vs_error_set(err, vs_last_error()->code, "svae experiment: %s", vs_last_error()->msg);
    int64_t dim = c->x->size;
    for (int j = 0; j < m && st == VS_OK; j++) {
        char cap[32];
        snprintf(cap, sizeof cap, "d%d=%.3g", part, (double)dv->data[j]);
        put_image(&p, 0, j + 1, xt->data + j * dim, cap);
    }
    for (int i = 0; i < n_methods && st == VS_OK; i++) {
        vs_tensor *a;
        st = attribute(&fn, xt, methods[i], 0, c->x, NULL, (uint64_t)c->o->seed, &a, &c->f->delta[i][part], err);
        vs_grid_caption(p.g, i + 1, 0, method_label(methods[i]), err);
        for (int j = 0; j < m && st == VS_OK; j++) put_heatmap(&p, i + 1, j + 1, a->data + j * dim, NULL);
    }
    vs_svae_divergence_clear(&d);
    if (st != VS_OK) {
        vs_grid_free(p.g);
        return st;
    }
    return picture_write(&p, c->o, part == 2 ? "fig5_divergence_z2.png" : "fig6_divergence_z1.png", c->f, err);
}

/* Fig. 7: z1 set to each class's centroid (z2 kept), decoded and classified; under each, the first
 * method's attribution of d(x, .) for k = 1. */
static vs_status fig7(fig_ctx *c, vs_tensor *cen, const char *method, vs_error *err)
{
    svae_setting *s = c->s;
    int64_t nc = s->layout.n_classes, pred[MAX_CLASSES];
    vs_tensor *xt;
    vs_status st = vs_svae_counterfactuals(s->m, &s->layout, c->x, cen, &xt, err);
    if (st == VS_OK) st = classify_labels(s->m, xt, pred, err);
    if (st != VS_OK) return st;
    vs_svae_divergence d;
    if ((st = vs_svae_divergence_init(&d, s->m, &s->layout, c->x, 1, err)) != VS_OK) return st;
    vs_model_fn fn = vs_svae_divergence_fn(&d);
    vs_tensor *a = NULL;
    double gap = NAN;
    st = attribute(&fn, xt, method, 0, c->x, NULL, (uint64_t)c->o->seed, &a, &gap, err);
    vs_svae_divergence_clear(&d);
    picture p;
    if (st == VS_OK && !picture_new(&p, c->test, 2, (int)nc)) st = vs_error_set(err, VS_ERR_NOMEM, "svae experiment: out of memory");
    if (st != VS_OK) return st;
    int64_t dim = c->x->size;
    for (int64_t t = 0; t < nc; t++) {
        char cap[32];
        snprintf(cap, sizeof cap, "to %lld: %lld", (long long)t, (long long)pred[t]);
        put_image(&p, 0, (int)t, xt->data + t * dim, cap);
        put_heatmap(&p, 1, (int)t, a->data + t * dim, t == 0 ? method_label(method) : NULL);
    }
    return picture_write(&p, c->o, "fig7_counterfactuals.png", c->f, err);
}

/* Over the first n_div test rows: mean d(x, x~) (k = 1, 2) of one label-keeping invariant sample
 * (sigma 1) and of one counterfactual per row, and the counterfactual success of SVAE and M2 over
 * every other class. */
static vs_status statistics(fig_ctx *c, vs_tensor *cen, svae_setting *m2, vs_error *err)
{
    svae_setting *s = c->s;
    int64_t n = c->o->n_divergence < c->test->n ? c->o->n_divergence : c->test->n, nc = s->layout.n_classes;
    double d_inv[2] = {0}, d_cf[2] = {0}, hit_s = 0, hit_m = 0, pairs = 0;
    int64_t n_inv = 0;
    vs_tensor *eye = NULL;
    vs_status st = vs_svae_class_targets(m2->m, &m2->layout, NULL, 0, &eye, err);
    for (int64_t i = 0; i < n && st == VS_OK; i++) {
        vs_scope_begin();
        vs_tensor *x, *xi, *xc, *xm;
        int64_t label, pi = -1, got = 0, pc[MAX_CLASSES], pm[MAX_CLASSES];
        st = vs_train_input(c->test, &i, 1, &x, NULL, &(vs_forward_ctx){0}, err);
        if (st == VS_OK) st = classify_labels(s->m, x, &label, err);
        if (st == VS_OK) st = vs_svae_invariant(s->m, &s->layout, x, -1, 1, 1, 1, &c->rng, &xi, &got, err);
        if (st == VS_OK) st = classify_labels(s->m, xi, &pi, err);
        if (st == VS_OK) st = vs_svae_counterfactuals(s->m, &s->layout, x, cen, &xc, err);
        if (st == VS_OK) st = classify_labels(s->m, xc, pc, err);
        if (st == VS_OK) st = vs_svae_counterfactuals(m2->m, &m2->layout, x, eye, &xm, err);
        if (st == VS_OK) st = classify_labels(m2->m, xm, pm, err);
        int64_t target = (label + 1 + i % (nc - 1)) % nc;
        for (int part = 1; part <= 2 && st == VS_OK; part++) {
            vs_tensor *mu, *lv, *mi, *li, *mc, *lc;
            st = vs_svae_posterior(s->m, &s->layout, x, part, &mu, &lv, err);
            if (st == VS_OK) st = vs_svae_posterior(s->m, &s->layout, xi, part, &mi, &li, err);
            if (st == VS_OK) st = vs_svae_posterior(s->m, &s->layout, vs_slice(xc, 0, target, target + 1), part, &mc, &lc, err);
            if (st != VS_OK) break;
            if (pi == label) d_inv[part - 1] += vs_item(vs_kl_diag_gaussian_rows(mu, lv, mi, li));
            d_cf[part - 1] += vs_item(vs_kl_diag_gaussian_rows(mu, lv, mc, lc));
        }
        if (st == VS_OK) {
            n_inv += pi == label;
            for (int64_t t = 0; t < nc; t++)
                if (t != label) hit_s += pc[t] == t, hit_m += pm[t] == t, pairs++;
        }
        vs_scope_end();
    }
    vs_tensor_free(eye);
    for (int k = 0; k < 2; k++) c->f->d_inv[k] = n_inv ? d_inv[k] / (double)n_inv : NAN, c->f->d_cf[k] = d_cf[k] / (double)n;
    c->f->n_div = n, c->f->cf_svae = pairs ? hit_s / pairs : NAN, c->f->cf_m2 = pairs ? hit_m / pairs : NAN;
    return st;
}

vs_status vs_svae_figures_run(const vs_dataset *train, const vs_dataset *test, svae_setting *s, svae_setting *m2,
                              const vs_svae_experiment_opts *o, svae_figures *f, vs_error *err)
{
    if (s->layout.n_classes > MAX_CLASSES) return vs_error_set(err, VS_ERR_ARG, "svae experiment: at most %d classes", MAX_CLASSES);
    if (o->explain_class < 0 || o->explain_class >= s->layout.n_classes)
        return vs_error_set(err, VS_ERR_ARG, "svae experiment: explained class %lld outside [0, %lld)", (long long)o->explain_class,
                            (long long)s->layout.n_classes);
    /* the methods */
    const char *list = o->methods ? o->methods : default_methods;
    f->n_methods = 0;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof f->methods[0] || f->n_methods == SVAE_MAX_METHODS)
            return vs_error_set(err, VS_ERR_ARG, "svae experiment: methods must be 1 to %d comma-separated names", SVAE_MAX_METHODS);
        memcpy(f->methods[f->n_methods], p, len);
        f->methods[f->n_methods][len] = 0;
        const vs_method *m = vs_method_find(f->methods[f->n_methods]);
        if (!m || m->output != VS_OUTPUT_FEATURES)
            return vs_error_set(err, VS_ERR_ARG, "svae experiment: \"%s\" is not an attribution method of the registry", f->methods[f->n_methods]);
        for (int k = 0; k < 3; k++) f->delta[f->n_methods][k] = NAN;
        f->n_methods++;
        p += len;
        if (*p == ',') p++;
    }
    fig_ctx c = {.train = train, .test = test, .s = s, .o = o, .f = f};
    vs_rng_seed(&c.rng, (uint64_t)o->seed ^ FIG_STREAM);
    vs_status st = find_row(s->m, test, o->explain_class, &f->row, err);
    if (st != VS_OK) return st;
    f->label = c.label = o->explain_class;
    vs_scope_begin();
    vs_tensor *cen = NULL, *xt = NULL;
    int64_t m = 0;
    st = vs_train_input(test, &f->row, 1, &c.x, NULL, &(vs_forward_ctx){0}, err);
    bool grad = vs_set_grad_enabled(false);
    if (st == VS_OK) st = vs_svae_encode(s->m, &s->layout, c.x, &c.z1, &c.z2, err);
    if (st == VS_OK) st = vs_svae_class_targets(s->m, &s->layout, train, N_CENTROID, &cen, err);
    if (st == VS_OK) st = fig3(&c, err);
    if (st == VS_OK) st = vs_svae_invariant(s->m, &s->layout, c.x, c.label, 1, N_INVARIANT, MAX_DRAWS, &c.rng, &xt, &m, err);
    if (st == VS_OK && m == 0) st = vs_error_set(err, VS_ERR_NUMERIC, "svae experiment: none of %d invariant draws keeps the label", MAX_DRAWS);
    vs_set_grad_enabled(grad);
    if (st == VS_OK) st = fig4(&c, f->methods, f->n_methods, err);
    if (st == VS_OK) st = fig56(&c, xt, m, f->methods, f->n_methods, 2, err);
    if (st == VS_OK) st = fig56(&c, xt, m, f->methods, f->n_methods, 1, err);
    if (st == VS_OK) st = fig7(&c, cen, f->methods[0], err);
    grad = vs_set_grad_enabled(false);
    if (st == VS_OK) st = statistics(&c, cen, m2, err);
    vs_set_grad_enabled(grad);
    vs_scope_end();
    return st;
}
